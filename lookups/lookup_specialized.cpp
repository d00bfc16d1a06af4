// `specialized`: the lookup algorithm instantiated with compile-time block
// counts, one instance per line of fingerprints.def.
#include <array>

#include "lookups/lookup.hpp"
#include "lookups/lookups.hpp"

namespace ovscls {
namespace {

template <uint32_t U0, uint32_t U1>
uint32_t lookup_specialized(dpcls_subtable* subtable, uint32_t keys_map,
                            const netdev_flow_key* keys[], dpcls_rule** rules) {
    return lookup_impl<SpecializedCounts<U0, U1>>(subtable, keys_map, keys, rules);
}

struct Instance {
    Fingerprint fingerprint;
    ovsb_lookup_func fn;
};

constexpr Instance kInstances[] = {
#define FINGERPRINT(U0, U1, ORIGIN) {{U0, U1, ORIGIN}, lookup_specialized<U0, U1>},
#include "lookups/fingerprints.def"
#undef FINGERPRINT
};

constexpr auto kFingerprints = [] {
    std::array<Fingerprint, std::size(kInstances)> list{};
    for (size_t i = 0; i < list.size(); i++) {
        list[i] = kInstances[i].fingerprint;
    }
    return list;
}();

}  // namespace

ovsb_lookup_func specialized_probe(const ProbeContext& ctx) {
    for (const Instance& instance : kInstances) {
        if (instance.fingerprint.u0 == ctx.u0 && instance.fingerprint.u1 == ctx.u1) {
            return instance.fn;
        }
    }
    return nullptr;
}

std::span<const Fingerprint> specialized_fingerprints() { return kFingerprints; }

LookupDescriptor specialized_descriptor() {
    return {"specialized", 2, [](void*, const ProbeContext& ctx) { return specialized_probe(ctx); },
            nullptr, nullptr};
}

}  // namespace ovscls
