// lookup_check.hpp: the truth a lookup is compared with (OVS's generic as
// its registry picks it) and the comparison of two lookups' results.  No
// GoogleTest here: the fuzz targets (tests/fuzz/) use it too.
#pragma once

#include <bit>
#include <cstdint>
#include <string>

#include "classifier/layout.hpp"
#include "reference/ovs_reference.h"

namespace ovscls::test {

// A rules[] slot no lookup wrote.
inline dpcls_rule* const kUnset = reinterpret_cast<dpcls_rule*>(uintptr_t{0x1});

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

// Two lookups of one burst agree: the same keys found, and the same rule for
// each of them (rules[] of keys not found is unspecified).
inline bool same_result(uint32_t found_a, dpcls_rule* const rules_a[], uint32_t found_b,
                        dpcls_rule* const rules_b[]) {
    if (found_a != found_b) {
        return false;
    }
    for (uint32_t map = found_a; map; map &= map - 1) {
        const uint32_t i = std::countr_zero(map);
        if (rules_a[i] != rules_b[i]) {
            return false;
        }
    }
    return true;
}

}  // namespace ovscls::test
