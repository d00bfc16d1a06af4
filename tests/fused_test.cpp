// jit_fused against OVS's own dpcls_lookup() loop: a classifier whose top
// subtables run one fused lookup must answer every key exactly as the loop
// over the same subtables, in the same rank order, with OVS's generic
// lookup in each would: the same rule (overlapping rules make the order
// matter), the same "lookups per hit" numerator, the same hit counts.
#include <gtest/gtest.h>

#include <bit>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "classifier/classifier.hpp"
#include "cpu_case.hpp"
#include "generators.hpp"
#include "guarded_keys.hpp"
#include "jit/engine.hpp"
#include "jit/fused_generator.hpp"
#include "ovs_loop.hpp"
#include "reference/ovs_reference.h"
#include "standalone/builtin_lookups.hpp"
#include "two_map_subtables.hpp"

namespace ovscls::test {
namespace {

// The n-th set bit of `bits`.
uint32_t nth_bit(uint64_t bits, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) bits &= bits - 1;
    return static_cast<uint32_t>(std::countr_zero(bits));
}

// A port's table as dpcls holds it: a family of "prefix" subtables over one
// map M (equal masks but on one word, where the prefix length varies), a
// family over M plus a word the packets lack, and rules that overlap
// across lengths (a key matches several subtables: the rank order decides)
// and rules that do not.
struct Table {
    uint64_t packet_map[2];  // what packets carry
    std::vector<FlowKey> masks;
    std::vector<FullFlow> bases;  // flows the rules and keys are made from:
    // bases[0..32) in every subtable (overlapping), the others each in one
};

Table make_table(Gen& g) {
    Table t;
    t.packet_map[0] = g.bits(10, 64);
    t.packet_map[1] = g.bits(2, kUnit1Bits);
    // M: 5 of the packets' words in unit 0 and one in unit 1.
    uint64_t m[2] = {0, 0};
    for (uint32_t i = 0; i < 5; i++) m[0] |= uint64_t{1} << nth_bit(t.packet_map[0], i * 2);
    m[1] = uint64_t{1} << nth_bit(t.packet_map[1], 0);
    const uint32_t prefix_block = 3;               // the word whose mask varies
    for (uint32_t len = 8; len <= 64; len += 4) {  // 15 subtables
        std::vector<uint64_t> v = {~0ull, 0xffff, 0xffffffff00000000ull, 0, ~0ull, 0x0fff};
        v[prefix_block] = ~uint64_t{0} << (64 - len);
        t.masks.push_back(mask_of(m, v));
    }
    // M plus a unit-0 word the packets lack: its block is 0 in every key.
    uint64_t lacking = ~t.packet_map[0] & ~m[0];
    const uint64_t m2[2] = {m[0] | (lacking & -lacking), m[1]};
    for (uint32_t len = 16; len <= 32; len += 8) {
        std::vector<uint64_t> v(7, ~uint64_t{0});
        const uint32_t extra_block =
            static_cast<uint32_t>(std::popcount(m2[0] & ((lacking & -lacking) - 1)));
        v[extra_block] = 0xff;  // the lacking word
        v[extra_block < prefix_block ? prefix_block + 1 : prefix_block] = ~uint64_t{0}
                                                                          << (64 - len);
        t.masks.push_back(mask_of(m2, v));
    }
    // Another map altogether (one word more of the packets').
    const uint64_t m3[2] = {m[0] | (uint64_t{1} << nth_bit(t.packet_map[0], 1)), m[1]};
    t.masks.push_back(mask_of(m3, {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull}));
    for (int i = 0; i < 32 + 96; i++) {
        FullFlow f = g.flow();
        f[std::countr_zero(lacking)] = 0;  // what keys lack matches
        t.bases.push_back(f);
    }
    return t;
}

struct Fixture {
    jit::Engine engine;
    LookupRegistry registry;
    std::unique_ptr<Classifier> cls;
    Table table;
    std::map<const dpcls_rule*, int> rule_index;
    std::vector<dpcls_rule*> rules;

    static jit::EngineOptions options() {
        jit::EngineOptions o;
        o.config.hot_hits = 1;
        o.config.cache.compiles_per_sec = 1000000;
        o.log = [](const char*) {};
        return o;
    }
    explicit Fixture(Gen& g) : engine(options()), table(make_table(g)) {
        add_builtin_lookups(registry, &engine);
        cls = std::make_unique<Classifier>(registry, &engine.fused());
        int index = 0;
        for (size_t m = 0; m < table.masks.size(); m++) {
            const FlowKey& mask = table.masks[m];
            for (size_t b = 0; b < table.bases.size(); b++) {
                if (b >= 32 && b % table.masks.size() != m) continue;
                dpcls_rule* rule = nullptr;
                if (cls->insert(mask, table.bases[b].data(), &rule)) {
                    rule_index[rule] = index++;
                    rules.push_back(rule);
                }
            }
        }
    }

    // A key: mostly the packets' map over a base flow (a near miss some of
    // the time), sometimes another map (the fused lookup defers it).
    FlowKey key(Gen& g) {
        FullFlow f = table.bases[g.below(table.bases.size())];
        if (g.chance(20)) f = g.flow();                      // most likely a miss
        if (g.chance(20)) f[g.below(kFlowU64s)] ^= g.u64();  // may miss some subtables
        uint64_t map[2] = {table.packet_map[0], table.packet_map[1]};
        if (g.chance(10)) {
            map[0] ^= uint64_t{1} << g.below(64);  // another map
        }
        return make_key({{map[0], map[1]}}, f.data());
    }
};

// Traffic skewed towards the subtables of `favour` (a different ranking per
// phase), rankings as a PMD thread runs them, and the compiles in between.
void settle(Fixture& f, Gen& g, uint32_t favour) {
    for (int round = 0; round < 8; round++) {
        for (int b = 0; b < 64; b++) {
            FlowKey keys[kMaxBurst];
            const netdev_flow_key* ptrs[kMaxBurst];
            dpcls_rule* rules[kMaxBurst];
            // Packets of one map (the JIT profiles the map its subtables
            // see), half of them of rules only some subtables have.
            for (uint32_t i = 0; i < kMaxBurst; i++) {
                const size_t base = i % 2 ? g.below(32) : 32 + (favour + i + g.below(8)) % 96;
                keys[i] = make_key({{f.table.packet_map[0], f.table.packet_map[1]}},
                                   f.table.bases[base].data());
                ptrs[i] = ovs(&keys[i]);
            }
            f.cls->lookup(ptrs, kMaxBurst, rules);
        }
        f.cls->sort_subtables();
        f.engine.drain();
        f.cls->refresh_fused();  // as a PMD thread between bursts
        ovsb_rcu_quiesce();
    }
}

TEST(Fused, AnswersAsOvsLoopInRankOrder) {
    const Availability jit = jit_avx2_availability();
    if (!jit.available) {
        GTEST_SKIP() << "not checked: jit_fused (" << jit.why << ")";
    }
    Gen g(15);
    Fixture f(g);
    GuardedKeys<kMaxBurst> guarded;
    uint64_t keys_checked = 0, fused_phases = 0;
    uint32_t most_fused = 0;
    // 400 bursts, each looked up by the classifier and by OVS's loop.
    auto check_bursts = [&](uint32_t phase, uint32_t fused) {
        const auto ranked = f.cls->subtables();
        for (int b = 0; b < 400; b++) {
            const uint32_t cnt = 1 + g.below(kMaxBurst);
            const netdev_flow_key* keys[kMaxBurst];
            for (uint32_t i = 0; i < cnt; i++) {
                keys[i] = guarded.place(i, f.key(g));  // reads past the contract fault
            }
            expect_as_ovs_loop(*f.cls, ranked, keys, cnt,
                               "phase " + std::to_string(phase) + " burst " + std::to_string(b) +
                                   " (fused over " + std::to_string(fused) + ")");
            if (HasFatalFailure()) return;
            keys_checked += cnt;
        }
        ovsb_rcu_quiesce();
    };
    for (uint32_t phase = 0; phase < 6; phase++) {
        settle(f, g, phase * 5);
        const uint32_t fused = f.cls->fused_subtables();
        most_fused = std::max(most_fused, fused);
        fused_phases += fused >= 2;
        check_bursts(phase, fused);
        if (HasFatalFailure()) return;
    }
    // Every other rule removed, no subtable emptied, the ranking kept: the
    // fused lookup stays, and the removed rules' keys find their hashes in
    // cmap slots whose node is now null (OVS keeps a slot's hash when its
    // last node goes): not found there, as OVS's cmap says.
    size_t removed = 0;
    for (size_t i = 0; i < f.rules.size(); i += 2, removed++) {
        ASSERT_TRUE(f.cls->remove(f.rules[i]));
    }
    ovsb_rcu_quiesce();
    const uint32_t fused_after_removal = f.cls->fused_subtables();
    check_bursts(6, fused_after_removal);
    if (HasFatalFailure()) return;
    std::printf("after removing %zu rules: fused over %u subtables\n", removed,
                fused_after_removal);
    EXPECT_GE(fused_after_removal, 2u) << "removals must not drop the fused lookup";
    const jit::FusedStats stats = f.engine.fused().stats();
    std::printf(
        "jit_fused: %llu keys checked in 6 rankings, %llu of them with a fused lookup (up to %u "
        "of %zu subtables); %llu fused compiles, %llu handed out\n",
        (unsigned long long)keys_checked, (unsigned long long)fused_phases, most_fused,
        f.cls->subtables().size(), (unsigned long long)stats.compiles,
        (unsigned long long)stats.handed);
    EXPECT_GE(fused_phases, 4u) << "the fused lookup was rarely in place: little was checked";
    EXPECT_GE(most_fused, 8u);
    EXPECT_EQ(f.engine.stats().cache.compiles_off_compiler, 0u);
}

// A ranking that offers the provider the same subtables with the same
// functions keeps the fused lookup, as OVS's dpcls_publish_ranking() does
// with the 3.x series' patch 7: rankings without traffic (every priority drops to
// 0, the sort keeps the order) neither drop it nor ask the provider again;
// a priority change (reprobe) asks again.
TEST(Fused, SteadyRankingKeepsTheFusedLookup) {
    const Availability jit = jit_avx2_availability();
    if (!jit.available) {
        GTEST_SKIP() << "not checked: jit_fused (" << jit.why << ")";
    }
    Gen g(16);
    Fixture f(g);
    settle(f, g, 0);
    const uint32_t fused = f.cls->fused_subtables();
    ASSERT_GT(fused, 0u) << "no fused lookup formed";
    auto order = [&] {
        std::vector<const dpcls_subtable*> out;
        for (const auto& st : f.cls->subtables()) out.push_back(st.subtable);
        return out;
    };
    const auto before = order();
    const uint64_t offered = f.engine.fused().stats().probes;
    for (int i = 0; i < 3; i++) {
        f.cls->sort_subtables();
        ovsb_rcu_quiesce();
    }
    ASSERT_EQ(order(), before) << "the rankings changed the order: nothing to check";
    EXPECT_EQ(f.engine.fused().stats().probes, offered) << "the provider was asked again";
    EXPECT_EQ(f.cls->fused_subtables(), fused);
    f.cls->reprobe();
    EXPECT_EQ(f.engine.fused().stats().probes, offered + 1) << "reprobe asks again";
}

// Two hot subtables whose own packets carry different maps (A's X, B's Y,
// each on its fast path for them): the ranking's offer has no run of two
// subtables of one map, so nothing is fused, and the provider counts the
// offer where jit-show shows it ("fused with too few subtables of one
// packet map") instead of declining in silence.
TEST(Fused, SubtablesOfDifferentMapsAreNotFusedAndSaySo) {
    const Availability jit = jit_avx2_availability();
    if (!jit.available) {
        GTEST_SKIP() << "not checked: jit_fused (" << jit.why << ")";
    }
    jit::Engine engine(Fixture::options());
    LookupRegistry registry;
    add_builtin_lookups(registry, &engine);
    Classifier cls(registry, &engine.fused());
    Gen g(17);
    const TwoMapSubtables t(g);
    ASSERT_TRUE(t.insert_into(cls));
    for (int round = 0; round < 8; round++) {
        for (int b = 0; b < 16; b++) {
            ASSERT_TRUE(t.lookup_burst(cls, g, 21));  // 21 of A's packets, 11 of B's
        }
        cls.sort_subtables();
        engine.drain();
        cls.refresh_fused();
        ovsb_rcu_quiesce();
    }
    const auto subtables = cls.subtables();
    ASSERT_EQ(subtables.size(), 2u);
    for (const auto& st : subtables) {
        const std::optional<MiniflowMap> map = engine.fast_path_map(st.subtable);
        ASSERT_TRUE(map) << "(" << st.u0 << "," << st.u1 << ") has no fast path yet";
        EXPECT_EQ(map->bits[0], (st.u0 == 4 ? t.map_x : t.map_y).bits[0]);
    }
    const jit::FusedStats stats = engine.fused().stats();
    std::printf("fused: %llu offers, %llu with too few subtables of one map\n",
                (unsigned long long)stats.probes, (unsigned long long)stats.short_run);
    EXPECT_EQ(cls.fused_subtables(), 0u);
    EXPECT_EQ(stats.compiles, 0u);
    EXPECT_GT(stats.short_run, 0u);
}

// The worked example of fused_generator.hpp: subtables over one map whose
// masks differ in one block start from the first one's state before it.
TEST(Fused, HashSharingPlan) {
    jit::FusedSpec spec;
    spec.key_map = {{0x3full, 0}};
    for (uint64_t len : {20, 24, 28, 32}) {
        spec.subtables.push_back(
            {nullptr, {{0x3full, 0}}, {~0ull, 1, 2, 3, ~0ull << (64 - len), 5}});
    }
    // One whose second block differs: shares one block with the others.
    spec.subtables.push_back({nullptr, {{0x3full, 0}}, {~0ull, 9, 2, 3, 4, 5}});
    const jit::HashSharing plan = jit::plan_hash_sharing(spec);
    ASSERT_EQ(plan.steps.size(), 5u);
    EXPECT_EQ(plan.steps[0].from_slot, -1);
    ASSERT_EQ(plan.steps[0].saves.size(), 2u);  // after 4 blocks, and after 1
    for (size_t k = 1; k < 4; k++) {
        EXPECT_EQ(plan.steps[k].from_block, 4u);
        EXPECT_EQ(plan.steps[k].from_slot, plan.steps[1].from_slot);
        EXPECT_TRUE(plan.steps[k].saves.empty());
    }
    EXPECT_EQ(plan.steps[4].from_block, 1u);
    EXPECT_NE(plan.steps[4].from_slot, plan.steps[1].from_slot);
    EXPECT_EQ(plan.slots, 2u);
}

}  // namespace
}  // namespace ovscls::test
