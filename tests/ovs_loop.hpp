// ovs_loop.hpp: OVS's dpcls_lookup() loop as the tests' reference for a
// whole classifier (the fused lookup's, the tail index's and the tail soak's
// tests).
//
// A hand copy: OVS's loop (lib/dpif-netdev.c, dpcls_lookup(): subtables in
// pvector order, each called with the keys still unmatched, the lookups
// count as the sum of 1-based positions of the hits) is static in OVS and
// cannot be called from here, so it is written again below with OVS's own
// generic lookup (reference/, built from OVS's source) in every subtable.
// The copy can drift from OVS's; what holds it to the real loop is
// tests/vswitchd/: there OVS's own dpcls_lookup() runs the plugin's lookups
// over OVS's testsuite under OVS's autovalidator (3.x) or the plugin's
// validation mode (4.0), which compare each lookup with OVS's generic on
// every call.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <string>
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

// Looks keys[0..cnt) up in `cls` and with OVS's loop over `ranked` (the
// classifier's ranking, read before), and compares key by key: the rule,
// "all found", the lookups numerator, and each subtable's hit count (the
// classifier's hits must equal the loop's).  Returns the first difference
// in words, or "" when they agree.
inline std::string ovs_loop_difference(const Classifier& cls,
                                       const std::vector<Classifier::SubtableInfo>& ranked,
                                       const netdev_flow_key* keys[], uint32_t cnt) {
    const std::vector<uint32_t> h0 = hit_counts(ranked);
    dpcls_rule* got[kMaxBurst];
    int got_lookups = 0;
    const bool got_all = cls.lookup(keys, cnt, got, &got_lookups);
    const std::vector<uint32_t> h1 = hit_counts(ranked);
    dpcls_rule* want[kMaxBurst] = {};
    int want_lookups = 0;
    const uint32_t keys_map = cnt == 32 ? ~0u : (1u << cnt) - 1;
    const uint32_t want_found = ovs_loop(ranked, keys_map, keys, want, &want_lookups);
    const std::vector<uint32_t> h2 = hit_counts(ranked);
    for (uint32_t i = 0; i < cnt; i++) {
        const bool want_hit = want_found >> i & 1;
        if (got[i] != (want_hit ? want[i] : nullptr)) {
            return "key " + std::to_string(i) + " of " + std::to_string(cnt) + ": " +
                   (got[i] ? "a rule" : "a miss") + " where the loop has " +
                   (want_hit ? "another rule" : "a miss");
        }
    }
    if (got_lookups != want_lookups) {
        return "lookups numerator " + std::to_string(got_lookups) + ", the loop's " +
               std::to_string(want_lookups);
    }
    if (got_all != (want_found == keys_map)) {
        return "\"all found\" differs from the loop's";
    }
    for (size_t s = 0; s < ranked.size(); s++) {
        if (h1[s] - h0[s] != h2[s] - h1[s]) {
            return "hit count of subtable " + std::to_string(s) + ": +" +
                   std::to_string(h1[s] - h0[s]) + ", the loop's +" + std::to_string(h2[s] - h1[s]);
        }
    }
    return "";
}

// ovs_loop_difference() as a gtest assertion; `what` names the burst in the
// failure message; callers check HasFatalFailure().
inline void expect_as_ovs_loop(const Classifier& cls,
                               const std::vector<Classifier::SubtableInfo>& ranked,
                               const netdev_flow_key* keys[], uint32_t cnt,
                               const std::string& what) {
    const std::string difference = ovs_loop_difference(cls, ranked, keys, cnt);
    ASSERT_TRUE(difference.empty()) << what << ": " << difference;
}

}  // namespace ovscls::test
