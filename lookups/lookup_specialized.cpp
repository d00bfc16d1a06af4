// `specialized`: the lookup algorithm instantiated with compile-time block
// counts, one instance per line of fingerprints.def.
#include <array>

#include "classifier/lookup_table.h"
#include "lookups/lookup.hpp"
#include "lookups/lookups.hpp"

namespace ovscls {
namespace {

template <uint32_t U0, uint32_t U1>
uint32_t lookup_specialized(dpcls_subtable* subtable, uint32_t keys_map,
                            const netdev_flow_key* keys[], dpcls_rule** rules) {
    return lookup_impl<SpecializedCounts<U0, U1>>(subtable, keys_map, keys, rules);
}

// The instance for a line of fingerprints.def, checked for what a line may
// say: a subtable's mask has at least one block, at most 64 in unit 0 and
// kUnit1Bits in unit 1, and no more than a key holds (a rule's key is a
// netdev_flow_key).  An impossible line fails the build, not a test.
template <uint32_t U0, uint32_t U1>
constexpr ovsb_lookup_func checked_instance() {
    static_assert(U0 + U1 > 0, "fingerprints.def: a mask has at least one block");
    static_assert(U0 <= 64, "fingerprints.def: unit 0 has 64 bits");
    static_assert(U1 <= kUnit1Bits, "fingerprints.def: unit 1 has FLOW_U64S - 64 bits");
    static_assert(U0 + U1 <= kMaxKeyValues,
                  "fingerprints.def: more blocks than a key holds (FLOW_MAX_PACKET_U64S)");
    return lookup_specialized<U0, U1>;
}

struct Instance {
    Fingerprint fingerprint;
    ovsb_lookup_func fn;
};

constexpr Instance kInstances[] = {
#define FINGERPRINT(U0, U1, ORIGIN) {{U0, U1, ORIGIN}, checked_instance<U0, U1>()},
#include "lookups/fingerprints.def"
#undef FINGERPRINT
};

constexpr bool no_duplicate_fingerprint() {
    for (size_t i = 0; i < std::size(kInstances); i++) {
        for (size_t j = i + 1; j < std::size(kInstances); j++) {
            if (kInstances[i].fingerprint.u0 == kInstances[j].fingerprint.u0 &&
                kInstances[i].fingerprint.u1 == kInstances[j].fingerprint.u1) {
                return false;
            }
        }
    }
    return true;
}
static_assert(no_duplicate_fingerprint(), "fingerprints.def: a (u0, u1) pair appears twice");

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
    return {OVSCLS_LOOKUP_NAME_specialized, OVSCLS_LIBRARY_PRIO_specialized,
            [](void*, const ProbeContext& ctx) { return specialized_probe(ctx); }, nullptr,
            nullptr};
}

}  // namespace ovscls
