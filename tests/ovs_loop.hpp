// ovs_loop.hpp: OVS's dpcls_lookup() loop as the tests' reference for a
// whole classifier (the fused lookup's and the tail index's tests).
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <vector>

#include "classifier/classifier.hpp"
#include "reference/ovs_reference.h"

namespace ovscls::test {

// OVS's dpcls_lookup() loop with OVS's generic lookup in every subtable, in
// `ranked` order: per key the rule, and the lookups numerator (the sum of
// the 1-based positions of the subtables that matched); adds each
// subtable's hits to its hit_cnt as OVS's lookup does.
inline uint32_t ovs_loop(const std::vector<Classifier::SubtableInfo>& ranked, uint32_t keys_map,
                         const netdev_flow_key* keys[], dpcls_rule** rules, int* lookups) {
    uint32_t found_all = 0;
    *lookups = 0;
    int position = 1;
    for (const auto& st : ranked) {
        if (!keys_map) break;
        const uint32_t found = ovsb_ovs_generic_runtime()(const_cast<dpcls_subtable*>(st.subtable),
                                                          keys_map, keys, rules);
        *lookups += std::popcount(found) * position++;
        keys_map &= ~found;
        found_all |= found;
    }
    return found_all;
}

// The subtables' hit counts, in `ranked` order.
inline std::vector<uint32_t> hit_counts(const std::vector<Classifier::SubtableInfo>& ranked) {
    std::vector<uint32_t> out;
    for (const auto& st : ranked) {
        out.push_back(
            std::atomic_ref<uint32_t>(view(const_cast<dpcls_subtable*>(st.subtable))->hit_cnt)
                .load(std::memory_order_relaxed));
    }
    return out;
}

}  // namespace ovscls::test
