// lookup_impls.hpp: every lookup implementation a test compares for one
// subtable: OVS 3.1's own (the truth is OVS's generic as its registry entry
// picks it) and each entry of this project's registry whose probe accepts.
#pragma once

#include <string>
#include <vector>

#include "layout.hpp"
#include "registry.hpp"

namespace ovscls::test {

struct NamedLookup {
    std::string name;
    ovsb_lookup_func fn;
    bool ours;
};

// OVS's generic as dpcls_subtable_generic_probe() selects it: the truth.
inline ovsb_lookup_func ovs_truth(const dpcls_subtable* subtable) {
    const Subtable& s = *view(subtable);
    return ovsb_ovs_generic_probe(s.u0_bits, s.u1_bits);
}

inline std::vector<NamedLookup> lookups_for(const dpcls_subtable* subtable,
                                            const LookupRegistry& registry) {
    const Subtable& s = *view(subtable);
    std::vector<NamedLookup> out;
    out.push_back({"ovs_generic_runtime", ovsb_ovs_generic_runtime(), false});
    if (ovsb_lookup_func fn = ovsb_ovs_avx512_gather_probe(s.u0_bits, s.u1_bits)) {
        out.push_back({"ovs_avx512_gather", fn, false});
    }
    for (size_t i = 0; i < registry.size(); i++) {
        const LookupImpl& impl = registry.at(i);
        if (ovsb_lookup_func fn = impl.probe({s.u0_bits, s.u1_bits, subtable})) {
            out.push_back({impl.name, fn, true});
        }
    }
    return out;
}

}  // namespace ovscls::test
