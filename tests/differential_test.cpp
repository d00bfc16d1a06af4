// Differential tests: every lookup implementation against OVS 3.1's own
// generic lookup (called from libopenvswitch) on the same subtable, and
// against the brute-force reference.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>

#include "classifier/classifier.hpp"
#include "generators.hpp"
#include "guarded_keys.hpp"
#include "lookup_impls.hpp"
#include "lookups/lookups.hpp"
#include "random_subtable.hpp"
#include "reference.hpp"

namespace ovscls::test {
namespace {

struct Tally {
    uint64_t lookups_ours = 0;
    uint64_t lookups_all = 0;
    uint64_t hits = 0;
    uint64_t mismatches = 0;
    std::map<std::string, uint64_t> by_impl;  // lookups each implementation served
};

// Runs `bursts` random bursts through every implementation; returns the
// number of mismatches (and counts lookups into `tally`).
void run_bursts(RandomSubtable& st, Gen& g, int bursts, Tally& tally) {
    const ovsb_lookup_func truth = ovs_truth(st.subtable);
    const auto impls = lookups_for(st.subtable, builtin_registry());
    FlowKey keys[kMaxBurst];
    const netdev_flow_key* key_ptrs[kMaxBurst];

    for (int b = 0; b < bursts; b++) {
        const uint32_t cnt = 1 + g.below(kMaxBurst);
        uint32_t keys_map = 0;
        for (uint32_t i = 0; i < cnt; i++) {
            keys[i] = st.random_key(g);
            key_ptrs[i] = ovs(&keys[i]);
            if (!g.chance(15)) {  // holes in keys_map
                keys_map |= 1u << i;
            }
        }
        if (!keys_map) {
            keys_map = 1u << (cnt - 1);
        }

        dpcls_rule* expected[kMaxBurst];
        std::fill(std::begin(expected), std::end(expected), kUnset);
        const uint32_t expected_found = truth(st.subtable, keys_map, key_ptrs, expected);
        tally.hits += std::popcount(expected_found);

        // OVS's generic against the brute-force reference.
        for (uint32_t map = keys_map; map; map &= map - 1) {
            const uint32_t i = std::countr_zero(map);
            const auto matches = st.reference.matches(keys[i]);
            ASSERT_LE(matches.size(), 1u);
            const bool hit = expected_found >> i & 1;
            if (hit != !matches.empty() || (hit && matches[0] != expected[i])) {
                ADD_FAILURE() << "OVS generic disagrees with the reference, key " << i;
                tally.mismatches++;
            }
        }

        for (const NamedLookup& impl : impls) {
            dpcls_rule* got[kMaxBurst];
            std::fill(std::begin(got), std::end(got), kUnset);
            const uint32_t found = impl.fn(st.subtable, keys_map, key_ptrs, got);
            const uint32_t n = std::popcount(keys_map);
            tally.lookups_all += n;
            tally.lookups_ours += impl.ours ? n : 0;
            tally.by_impl[impl.name] += n;
            if (!same_result(found, got, expected_found, expected)) {
                tally.mismatches++;
                ADD_FAILURE() << impl.name << " differs from OVS generic on ("
                              << int(view(st.subtable)->u0_bits) << ","
                              << int(view(st.subtable)->u1_bits) << "): found " << std::hex << found
                              << " expected " << expected_found;
                return;
            }
        }
    }
}

// The key contract's edge (classifier/layout.hpp): a key with every one of
// the kMaxKeyValues words a key can hold (map0 = ~0, map1 = 0x7f) lacking
// the mask's block at unit-1 bit 19, so that the lookups' branch-free load
// reads the word after its last value (idx 71).  Each key is placed with
// that one word and then a PROT_NONE page after it: every implementation,
// OVS's own included, must give OVS's generic's answer without faulting,
// for (u0, u1) = (1, 1) and, with more unit-0 blocks, (4, 1), which
// specialized and jit_avx2 have code for.
TEST(Differential, KeyWithEveryWordAndAnAbsentBlockStaysInContract) {
    static_assert(kMaxKeyValues == 64 + 7, "the case needs a 71-word key");
    GuardedKeys<kMaxBurst> guarded;
    for (const uint64_t map0 : {uint64_t{1}, uint64_t{0x8000'0000'0001'0103}}) {
        SCOPED_TRACE(std::popcount(map0) == 1 ? "(1,1)" : "(4,1)");
        const uint64_t mask_map[2] = {map0, uint64_t{1} << 19};
        std::vector<uint64_t> mask_values(std::popcount(map0) + 1, ~uint64_t{0});
        FlowKey mask{};
        ovsb_mask_init_raw(ovs(&mask), mask_map, mask_values.data(), mask_values.size());
        dpcls_subtable* subtable = ovsb_subtable_create(ovs(&mask));

        // One rule: word 0 = 7 (and the others of the mask 0), unit-1 word
        // 19 = 0, which a key lacking that word matches (absent = 0).
        FullFlow flow{};
        flow[0] = 7;
        dpcls_rule* rule = ovsb_rule_alloc();
        ovsb_key_init_masked(&RandomSubtable::ovs_key(rule), flow.data(), ovs(&mask));
        ovsb_subtable_insert(subtable, rule);

        // Keys with all 71 words: a hit, and a miss on word 0.
        FullFlow other = flow;
        other[0] = 8;
        const FlowKey hit = make_key({{~uint64_t{0}, 0x7f}}, flow.data());
        const FlowKey miss = make_key({{~uint64_t{0}, 0x7f}}, other.data());
        ASSERT_EQ(std::popcount(hit.map.bits[0]) + std::popcount(hit.map.bits[1]),
                  static_cast<int>(kMaxKeyValues));
        const netdev_flow_key* keys[2] = {guarded.place(0, hit), guarded.place(1, miss)};

        dpcls_rule* want[kMaxBurst];
        std::fill(std::begin(want), std::end(want), kUnset);
        const uint32_t want_found = ovs_truth(subtable)(subtable, 0x3, keys, want);
        EXPECT_EQ(want_found, 0x1u);
        EXPECT_EQ(want[0], rule);
        const auto impls = lookups_for(subtable, builtin_registry());
        for (const NamedLookup& impl : impls) {
            dpcls_rule* got[kMaxBurst];
            std::fill(std::begin(got), std::end(got), kUnset);
            const uint32_t found = impl.fn(subtable, 0x3, keys, got);
            EXPECT_TRUE(same_result(found, got, want_found, want)) << impl.name;
        }
        std::printf("%zu implementations read 71-word keys within the contract:", impls.size());
        for (const NamedLookup& impl : impls) {
            std::printf(" %s", impl.name.c_str());
        }
        std::printf("\n");

        builtin_registry().release(subtable, nullptr);
        ovsb_subtable_remove(subtable, rule);
        ovsb_rule_free_deferred(rule);
        ovsb_subtable_destroy_deferred(subtable, nullptr, nullptr);
        ovsb_rcu_quiesce();
    }
}

// Every fingerprint with up to 16 blocks in total, random masks, rules and
// keys; bursts of 1..32 with holes.  At least 10^6 lookups by this
// project's implementations, no mismatch.
TEST(Differential, EveryFingerprintUpTo16Blocks) {
    Tally tally;
    size_t fingerprints = 0;
    for (uint32_t u0 = 0; u0 <= 16; u0++) {
        for (uint32_t u1 = 0; u0 + u1 <= 16 && u1 <= kUnit1Bits; u1++) {
            Gen g(0x5eed0000 + u0 * 64 + u1);
            // Several masks per fingerprint, small and larger rule sets.
            for (size_t rules : {1, 16, 200}) {
                RandomSubtable st(g, u0, u1, rules);
                run_bursts(st, g, 150, tally);
                ASSERT_EQ(tally.mismatches, 0u);
            }
            fingerprints++;
        }
    }
    std::printf("fingerprints %zu, lookups by ours %llu, by all %llu, hits %llu\n", fingerprints,
                static_cast<unsigned long long>(tally.lookups_ours),
                static_cast<unsigned long long>(tally.lookups_all),
                static_cast<unsigned long long>(tally.hits));
    EXPECT_EQ(tally.mismatches, 0u);
    EXPECT_GE(tally.lookups_ours, 1'000'000u);
    EXPECT_GT(tally.hits, tally.lookups_all / 100);  // the hits are exercised too
    expect_every_implementation_served(tally.by_impl, true);
}

// Every fingerprint the specialized list holds, with 1000 rules.
TEST(Differential, SpecializedFingerprintsWithManyRules) {
    Tally tally;
    for (const Fingerprint& fp : specialized_fingerprints()) {
        Gen g(0xfacade + fp.u0 * 64 + fp.u1);
        RandomSubtable st(g, fp.u0, fp.u1, 1000);
        run_bursts(st, g, 400, tally);
        ASSERT_EQ(tally.mismatches, 0u) << fp.u0 << "," << fp.u1;
    }
    expect_every_implementation_served(tally.by_impl, true);
}

// The whole classifier (several subtables, ranking, removal) against the
// reference: the rule returned is one the key matches, and a key misses
// only when it matches no rule.
TEST(Differential, ClassifierAgainstReference) {
    Gen g(42);
    LookupRegistry registry;
    add_builtin_lookups(registry);
    auto cls = std::make_unique<Classifier>(registry);
    ReferenceClassifier reference;
    std::vector<FlowKey> masks;
    std::vector<std::pair<dpcls_rule*, FullFlow>> rules;
    for (int m = 0; m < 12; m++) {
        masks.push_back(g.mask(1 + g.below(9), g.below(5)));
    }
    for (int r = 0; r < 3000; r++) {
        const FlowKey& mask = masks[g.below(masks.size())];
        FullFlow flow = g.flow();
        dpcls_rule* rule = nullptr;
        if (cls->insert(mask, flow.data(), &rule)) {
            reference.add(mask, view(rule)->flow, rule);
            rules.emplace_back(rule, flow);
        }
    }
    EXPECT_EQ(cls->subtables().size(), masks.size());

    auto check = [&](int bursts) {
        for (int b = 0; b < bursts; b++) {
            const uint32_t cnt = 1 + g.below(kMaxBurst);
            FlowKey keys[kMaxBurst];
            const netdev_flow_key* ptrs[kMaxBurst];
            for (uint32_t i = 0; i < cnt; i++) {
                FullFlow flow = g.flow();
                if (g.chance(70) && !rules.empty()) {
                    flow = rules[g.below(rules.size())].second;
                }
                FlowKey all{};
                all.map.bits[0] = ~uint64_t{0};
                all.map.bits[1] = (uint64_t{1} << kUnit1Bits) - 1;
                keys[i] = g.key(flow, all, g.chance(30), false);
                ptrs[i] = ovs(&keys[i]);
            }
            dpcls_rule* got[kMaxBurst];
            int lookups = 0;
            const bool all_found = cls->lookup(ptrs, cnt, got, &lookups);
            bool expect_all = true;
            for (uint32_t i = 0; i < cnt; i++) {
                const auto matches = reference.matches(keys[i]);
                expect_all = expect_all && !matches.empty();
                if (matches.empty()) {
                    ASSERT_EQ(got[i], nullptr);
                } else {
                    ASSERT_NE(std::find(matches.begin(), matches.end(), got[i]), matches.end());
                }
            }
            ASSERT_EQ(all_found, expect_all);
        }
    };
    check(2000);
    cls->sort_subtables();
    check(500);

    // Remove most rules, emptying some subtables, and check again.
    for (size_t i = 0; i < rules.size(); i++) {
        if (i % 5) {
            ASSERT_TRUE(cls->remove(rules[i].first));
            reference.remove(rules[i].first);
        }
    }
    ovsb_rcu_quiesce();
    check(1000);
    EXPECT_EQ(cls->rule_count(), reference.size());
    ovsb_rcu_quiesce();
}

}  // namespace
}  // namespace ovscls::test
