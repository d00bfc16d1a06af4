// Readers look up without pause while a writer inserts and removes rules,
// creates and destroys subtables, re-ranks them and changes implementation
// priorities.  A rule that stays present is never missed, and no reader sees
// freed memory (run this under ThreadSanitizer: build with -DOVSCLS_TSAN=ON,
// and AddressSanitizer: -DOVSCLS_ASAN=ON).
//
// The JIT takes part: every new subtable gets code at once (hot_hits 0),
// ranking tiers stable subtables up to their fast path, priority changes
// move subtables off and back onto JIT code, and removed subtables take
// their code with them, all while readers run it.  Each burst carries a key
// that matches nothing, so readers call every subtable's lookup, the code
// of subtables being destroyed included.  Code freed too early would crash
// the readers; none may.
//
// Reader threads follow the PMD thread protocol of OVS-RCU: they are active
// (ovsrcu_quiesce_end) while looking up and quiesce between bursts, so
// memory is freed only once no reader can still hold it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "classifier/classifier.hpp"
#include "cpu_case.hpp"
#include "generators.hpp"
#include "standalone/builtin_lookups.hpp"
#if OVSCLS_WITH_JIT
#include "jit/jit_lookup.hpp"
#endif

namespace ovscls::test {
namespace {

// Every mask of this test matches flow word 83 (the last), so that stable and
// churn rules can never match the same key: stable rules hold 0 there,
// churn rules a non-zero value, and keys carry 0.
constexpr uint32_t kMarkerWord = kFlowU64s - 1;

FlowKey marked_mask(Gen& g, uint32_t u0, uint32_t u1) {
    FlowKey mask = g.mask(u0, u1);
    const uint64_t marker = uint64_t{1} << (kMarkerWord - 64);
    if (!(mask.map.bits[1] & marker)) {
        const uint32_t n = std::popcount(mask.map.bits[0]) + std::popcount(mask.map.bits[1]);
        const uint64_t map[2] = {mask.map.bits[0], mask.map.bits[1] | marker};
        uint64_t values[kMaxKeyValues];
        std::copy(mask.values, mask.values + n, values);
        values[n] = g.mask_value();  // the last word's value comes last
        ovsb_mask_init_raw(ovs(&mask), map, values, n + 1);
    }
    return mask;
}

FullFlow marked_flow(Gen& g, bool stable) {
    FullFlow flow = g.flow();
    flow[kMarkerWord] = stable ? 0 : ~uint64_t{0};
    return flow;
}

TEST(Concurrency, StableRulesAreNeverMissedWhileWriterChurns) {
    using Clock = std::chrono::steady_clock;
    const auto duration = std::chrono::milliseconds(
        std::getenv("CONCURRENCY_MS") ? std::atoi(std::getenv("CONCURRENCY_MS")) : 3000);

#if OVSCLS_WITH_JIT
    const jit::JitConfig saved_jit = jit::config();
    jit::JitConfig jit_cfg = saved_jit;
    jit_cfg.hot_hits = 0;
    jit_cfg.cache.compiles_per_sec = 1000000;
    jit::configure(jit_cfg);
    const jit::JitStats jit_before = jit::stats();
#endif

    LookupRegistry registry;
    add_builtin_lookups(registry);
    // The top entry moves off and back on: jit_avx2 where built.
    const char* const top = jit_built() ? "jit_avx2" : "specialized";
    const int top_priority = jit_built() ? 3 : 2;
    Classifier cls(registry);
    Gen g(2024);

    // Stable rules: one per mask, and one packet key that hits each.
    std::vector<FlowKey> masks;
    for (auto [u0, u1] : {std::pair{4u, 1u}, {5u, 1u}, {4u, 3u}, {3u, 3u}, {9u, 4u}, {6u, 0u}}) {
        masks.push_back(marked_mask(g, u0, u1));
    }
    std::vector<FlowKey> stable_keys;
    std::vector<dpcls_rule*> stable_rules;
    for (const FlowKey& mask : masks) {
        for (int r = 0; r < 4; r++) {
            const FullFlow flow = marked_flow(g, true);
            dpcls_rule* rule = nullptr;
            ASSERT_TRUE(cls.insert(mask, flow.data(), &rule));
            stable_rules.push_back(rule);
            stable_keys.push_back(g.key(flow, mask, false, true));
        }
    }

    // Marker word 5: neither a stable rule's (0) nor a churn rule's (~0).
    FullFlow miss_flow = marked_flow(g, true);
    miss_flow[kMarkerWord] = 5;
    const FlowKey miss_key = g.key(miss_flow, masks[0], false, true);

    std::atomic<bool> stop{false};
    std::atomic<uint64_t> lookups{0}, misses{0}, wrong{0};
    auto reader = [&](uint32_t seed) {
        ovsb_rcu_quiesce_end();
        Gen rg(seed);
        const netdev_flow_key* keys[kMaxBurst];
        size_t which[kMaxBurst];
        dpcls_rule* rules[kMaxBurst];
        uint64_t n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            const uint32_t cnt = 1 + rg.below(kMaxBurst);
            for (uint32_t i = 0; i < cnt; i++) {
                which[i] = rg.below(stable_keys.size());
                keys[i] = ovs(&stable_keys[which[i]]);
            }
            const uint32_t nowhere = rg.below(cnt);  // this key matches no rule
            keys[nowhere] = ovs(&miss_key);
            cls.lookup(keys, cnt, rules);
            for (uint32_t i = 0; i < cnt; i++) {
                if (i == nowhere) {
                    wrong.fetch_add(rules[i] != nullptr, std::memory_order_relaxed);
                } else if (!rules[i]) {
                    misses.fetch_add(1, std::memory_order_relaxed);
                } else if (rules[i] != stable_rules[which[i]]) {
                    wrong.fetch_add(1, std::memory_order_relaxed);
                }
            }
            n += cnt;
            ovsb_rcu_quiesce();
        }
        lookups.fetch_add(n);
        ovsb_rcu_quiesce_start();
    };
    // Readers are OVS threads, as PMD threads are (see ovs_bridge.h).
    struct Reader {
        decltype(reader)* body;
        uint32_t seed;
    } args[2] = {{&reader, 1}, {&reader, 2}};
    auto trampoline = [](void* aux) {
        auto* r = static_cast<Reader*>(aux);
        (*r->body)(r->seed);
    };
    ovsb_thread* r1 = ovsb_thread_create("reader1", trampoline, &args[0]);
    ovsb_thread* r2 = ovsb_thread_create("reader2", trampoline, &args[1]);

    // Writer: churn in the stable masks and in new masks, sort, re-probe.
    uint64_t inserted = 0, removed = 0, prio_changes = 0, subtables_made = 0;
    const auto end = Clock::now() + duration;
    for (int round = 0; Clock::now() < end; round++) {
        std::vector<dpcls_rule*> churn;
        for (int i = 0; i < 40; i++) {
            const bool fresh_mask = i % 4 == 0;
            const FlowKey mask = fresh_mask ? marked_mask(g, 1 + g.below(8), g.below(4))
                                            : masks[g.below(masks.size())];
            const FullFlow flow = marked_flow(g, false);
            dpcls_rule* rule = nullptr;
            if (cls.insert(mask, flow.data(), &rule)) {
                churn.push_back(rule);
                inserted++;
                subtables_made += fresh_mask;
            }
        }
        if (round % 3 == 0) {
            cls.sort_subtables();
        }
        if (round % 5 == 0) {
            ASSERT_TRUE(registry.set_priority("generic", round % 10 ? 5 : 1));
            prio_changes++;
        }
        if (round % 7 == 0) {
            ASSERT_TRUE(registry.set_priority(top, round % 14 ? 0 : top_priority));
            prio_changes++;
        }
        for (dpcls_rule* rule : churn) {
            ASSERT_TRUE(cls.remove(rule));
            removed++;
        }
        ovsb_rcu_quiesce();
    }
    stop = true;
    ovsb_thread_join(r1);
    ovsb_thread_join(r2);

    std::printf(
        "lookups %llu, rules inserted %llu removed %llu, new-mask rules %llu, "
        "priority changes %llu\n",
        static_cast<unsigned long long>(lookups.load()), static_cast<unsigned long long>(inserted),
        static_cast<unsigned long long>(removed), static_cast<unsigned long long>(subtables_made),
        static_cast<unsigned long long>(prio_changes));
    EXPECT_EQ(misses.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_GT(lookups.load(), 10000u);
    EXPECT_GT(prio_changes, 1u);
    EXPECT_EQ(cls.rule_count(), stable_rules.size());
    EXPECT_EQ(cls.subtables().size(), masks.size());
#if OVSCLS_WITH_JIT
    const jit::JitStats jit_after = jit::stats();
    std::printf("jit: %llu compiles, %llu tier-ups\n",
                (unsigned long long)(jit_after.cache.compiles - jit_before.cache.compiles),
                (unsigned long long)(jit_after.tier_ups - jit_before.tier_ups));
    if (const Availability jit = jit_avx2_availability(); jit.available) {
        EXPECT_GT(jit_after.cache.compiles, jit_before.cache.compiles + 10);
        EXPECT_GT(jit_after.tier_ups, jit_before.tier_ups);
    } else {
        // The writer's churn still re-probes jit_avx2, which must decline.
        uint64_t declines = 0;
        for (int why = 0; why < static_cast<int>(jit::Decline::kCount); why++) {
            declines += jit_after.declines[why] - jit_before.declines[why];
        }
        EXPECT_EQ(jit_after.cache.compiles, jit_before.cache.compiles);
        EXPECT_GT(declines, 0u);
        std::printf("not checked: readers running JIT code (%s; jit_avx2 declined %llu times)\n",
                    jit.why.c_str(), (unsigned long long)declines);
    }
    jit::configure(saved_jit);
#else
    std::printf("not checked: readers running JIT code (%s)\n", jit_build_note().c_str());
#endif
    ovsb_rcu_quiesce();
}

}  // namespace
}  // namespace ovscls::test
