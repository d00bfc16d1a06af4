// Two "PMD threads", each with its own classifier (as each PMD has its own
// dpcls), share one registry and one JIT engine.  Per PMD a reader looks up
// without pause while a writer inserts and removes rules, creates and
// destroys subtables and re-ranks them; the main thread changes
// implementation priorities meanwhile, which re-probes both classifiers.  A
// rule that stays present is never missed, and no reader sees freed memory
// (run this under ThreadSanitizer: build with -DOVSCLS_TSAN=ON, and
// AddressSanitizer: -DOVSCLS_ASAN=ON).
//
// The JIT takes part: every new subtable is hot at once (hot_hits 0), so
// both writers' rankings ask the engine's compiler thread for code and
// install it at their next ranking; the same masks on both PMDs share code
// while their subtables tier up each on its own traffic; priority changes
// move subtables off and back onto JIT code, and removed subtables take
// their code (or cancel its compile) with them, all while readers run it.  Each burst carries a key
// that matches nothing, so readers call every subtable's lookup, the code
// of subtables being destroyed included.  Code freed too early would crash
// the readers; none may.
//
// Reader threads follow the PMD thread protocol of OVS-RCU: they are active
// (ovsrcu_quiesce_end) while looking up and quiesce between bursts, so
// memory is freed only once no reader can still hold it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "classifier/classifier.hpp"
#include "cpu_case.hpp"
#include "generators.hpp"
#include "standalone/builtin_lookups.hpp"
#include "tail/tuple_pruning.hpp"
#if OVSCLS_WITH_JIT
#include "jit/engine.hpp"
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

// `mask` with block 0 set to `value`: a subtable of the same map, as a
// port's nw_dst prefix lengths are (their subtables fuse, under the JIT).
FlowKey variant(const FlowKey& mask, uint64_t value) {
    const uint32_t n = std::popcount(mask.map.bits[0]) + std::popcount(mask.map.bits[1]);
    uint64_t values[kMaxKeyValues];
    std::copy(mask.values, mask.values + n, values);
    values[0] = value;
    FlowKey out{};
    ovsb_mask_init_raw(ovs(&out), mask.map.bits, values, n);
    return out;
}

FullFlow marked_flow(Gen& g, bool stable) {
    FullFlow flow = g.flow();
    flow[kMarkerWord] = stable ? 0 : ~uint64_t{0};
    return flow;
}

// One PMD thread's part: its classifier, stable rules and keys, and what
// its reader counted.
struct Pmd {
    Pmd(LookupRegistry& registry, FusedProvider* fused, std::unique_ptr<TailIndex> tail = nullptr)
        : cls(registry, fused, std::move(tail)) {}
    Classifier cls;
    std::vector<FlowKey> stable_keys;
    std::vector<dpcls_rule*> stable_rules;
    size_t family_keys = 0;  // stable_keys[family_keys..] are the family's
    FlowKey miss_key{};
    std::atomic<uint64_t> lookups{0}, misses{0}, wrong{0};
    // The writer's ranking period: 10 ms (OVS: 1 s), so that rankings are
    // many; the fused test lengthens it on a loaded machine.
    std::atomic<int> ranking_ms{10};
    uint64_t inserted = 0, removed = 0, subtables_made = 0, rankings = 0;
};

// The reader: bursts of stable keys plus one key that matches nothing, as a
// PMD thread looks up (active while looking up, quiescent between bursts).
void read_until(Pmd& pmd, const std::atomic<bool>& stop, uint32_t seed) {
    ovsb_rcu_quiesce_end();
    Gen rg(seed);
    const netdev_flow_key* keys[kMaxBurst];
    size_t which[kMaxBurst];
    dpcls_rule* rules[kMaxBurst];
    uint64_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
        const uint32_t cnt = 1 + rg.below(kMaxBurst);
        for (uint32_t i = 0; i < cnt; i++) {
            // Mostly the family's, so that its subtables rank first and fuse.
            const size_t first = rg.chance(75) ? pmd.family_keys : 0;
            which[i] = first + rg.below(pmd.stable_keys.size() - first);
            keys[i] = ovs(&pmd.stable_keys[which[i]]);
        }
        const uint32_t nowhere = rg.below(cnt);  // this key matches no rule
        keys[nowhere] = ovs(&pmd.miss_key);
        pmd.cls.lookup(keys, cnt, rules);
        pmd.cls.refresh_fused();  // between bursts, as a PMD thread
        for (uint32_t i = 0; i < cnt; i++) {
            if (i == nowhere) {
                pmd.wrong.fetch_add(rules[i] != nullptr, std::memory_order_relaxed);
            } else if (!rules[i]) {
                pmd.misses.fetch_add(1, std::memory_order_relaxed);
            } else if (rules[i] != pmd.stable_rules[which[i]]) {
                pmd.wrong.fetch_add(1, std::memory_order_relaxed);
            }
        }
        n += cnt;
        ovsb_rcu_quiesce();
    }
    pmd.lookups.fetch_add(n);
    ovsb_rcu_quiesce_start();
}

#if OVSCLS_WITH_JIT
// Looks up every stable key of `pmd` once, in bursts, and checks the
// answers (as read_until does).  For the main thread once the PMDs' own
// threads have stopped.
void look_up_stable_keys(Pmd& pmd) {
    const netdev_flow_key* keys[kMaxBurst];
    dpcls_rule* rules[kMaxBurst];
    for (size_t first = 0; first < pmd.stable_keys.size(); first += kMaxBurst) {
        const size_t cnt = std::min<size_t>(kMaxBurst, pmd.stable_keys.size() - first);
        for (size_t i = 0; i < cnt; i++) {
            keys[i] = ovs(&pmd.stable_keys[first + i]);
        }
        pmd.cls.lookup(keys, cnt, rules);
        for (size_t i = 0; i < cnt; i++) {
            EXPECT_EQ(rules[i], pmd.stable_rules[first + i]);
        }
    }
}
#endif

// The writer: churn in the stable masks and in new masks, and a ranking
// after every round (as dpcls_sort_subtable_vector() on the PMD thread).
void write_until(Pmd& pmd, const std::vector<FlowKey>& masks, const std::atomic<bool>& stop,
                 uint32_t seed) {
    ovsb_rcu_quiesce_end();
    Gen g(seed);
    // Rankings every pmd.ranking_ms (OVS: every second), so that code
    // compiled for one ranking still finds it in place (fused lookups are
    // per ranking).
    auto next_ranking = std::chrono::steady_clock::now();
    while (!stop.load(std::memory_order_relaxed)) {
        std::vector<dpcls_rule*> churn;
        for (int i = 0; i < 40; i++) {
            const bool fresh_mask = i % 4 == 0;
            const FlowKey mask = fresh_mask ? marked_mask(g, 1 + g.below(8), g.below(4))
                                            : masks[g.below(masks.size())];
            const FullFlow flow = marked_flow(g, false);
            dpcls_rule* rule = nullptr;
            if (pmd.cls.insert(mask, flow.data(), &rule)) {
                churn.push_back(rule);
                pmd.inserted++;
                pmd.subtables_made += fresh_mask;
            }
        }
        if (std::chrono::steady_clock::now() >= next_ranking) {
            pmd.cls.sort_subtables();
            pmd.rankings++;
            next_ranking =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(pmd.ranking_ms.load());
        }
        for (dpcls_rule* rule : churn) {
            EXPECT_TRUE(pmd.cls.remove(rule));
            pmd.removed++;
        }
        ovsb_rcu_quiesce();
    }
    ovsb_rcu_quiesce_start();
}

// Runs `fn` on a new OVS thread (readers and writers are OVS threads, as
// PMD threads are: see ovs_bridge.h).
ovsb_thread* start(const char* name, std::function<void()>* fn) {
    return ovsb_thread_create(
        name, [](void* aux) { (*static_cast<std::function<void()>*>(aux))(); }, fn);
}

// Stable masks of assorted fingerprints, then (from *family on) a family of
// one map, whose keys carry exactly that map (their subtables fuse).
std::vector<FlowKey> stable_masks(Gen& g, size_t* family) {
    std::vector<FlowKey> masks;
    for (auto [u0, u1] : {std::pair{4u, 1u}, {5u, 1u}, {4u, 3u}, {3u, 3u}, {9u, 4u}, {6u, 0u}}) {
        masks.push_back(marked_mask(g, u0, u1));
    }
    *family = masks.size();
    const FlowKey family_mask = marked_mask(g, 5, 2);
    for (int v = 0; v < 8; v++) {
        masks.push_back(variant(family_mask, ~uint64_t{0} << (4 * v)));
    }
    return masks;
}

// Four stable rules per mask, a key for each, and a key that matches none.
void fill(Pmd& pmd, const std::vector<FlowKey>& masks, size_t family, Gen& g) {
    pmd.family_keys = family * 4;
    for (size_t m = 0; m < masks.size(); m++) {
        for (int r = 0; r < 4; r++) {
            const FullFlow flow = marked_flow(g, true);
            dpcls_rule* rule = nullptr;
            ASSERT_TRUE(pmd.cls.insert(masks[m], flow.data(), &rule));
            pmd.stable_rules.push_back(rule);
            pmd.stable_keys.push_back(g.key(flow, masks[m], false, m < family));
        }
    }
    // Marker word 5: neither a stable rule's (0) nor a churn rule's (~0).
    FullFlow miss_flow = marked_flow(g, true);
    miss_flow[kMarkerWord] = 5;
    pmd.miss_key = g.key(miss_flow, masks[0], false, true);
}

TEST(Concurrency, StableRulesAreNeverMissedWhileWritersChurn) {
    using Clock = std::chrono::steady_clock;
    const auto duration = std::chrono::milliseconds(
        std::getenv("CONCURRENCY_MS") ? std::atoi(std::getenv("CONCURRENCY_MS")) : 3000);

#if OVSCLS_WITH_JIT
    jit::EngineOptions jit_options;
    jit_options.config.hot_hits = 0;
    jit_options.config.cache.compiles_per_sec = 1000000;
    jit::Engine engine(jit_options);
    jit::Engine* jit_engine = &engine;
    FusedProvider* fused = &engine.fused();
#else
    jit::Engine* jit_engine = nullptr;
    FusedProvider* fused = nullptr;
#endif

    LookupRegistry registry;
    add_builtin_lookups(registry, jit_engine);
    // The top entry moves off and back on: jit_avx2 where built.
    const char* const top = jit_built() ? "jit_avx2" : "specialized";
    const int top_priority = jit_built() ? 3 : 2;
    Gen g(2024);

    // The same stable masks on both PMDs (their subtables share JIT code),
    // with rules and keys of each PMD's own.
    size_t family = 0;
    const std::vector<FlowKey> masks = stable_masks(g, &family);
    Pmd pmds[2] = {Pmd(registry, fused), Pmd(registry, fused)};
    for (Pmd& pmd : pmds) {
        fill(pmd, masks, family, g);
    }

    std::atomic<bool> stop{false};
    std::function<void()> bodies[4] = {[&] { read_until(pmds[0], stop, 1); },
                                       [&] { read_until(pmds[1], stop, 2); },
                                       [&] { write_until(pmds[0], masks, stop, 3); },
                                       [&] { write_until(pmds[1], masks, stop, 4); }};
    ovsb_thread* threads[4] = {start("reader0", &bodies[0]), start("reader1", &bodies[1]),
                               start("writer0", &bodies[2]), start("writer1", &bodies[3])};

    // Priority changes, while both PMDs churn and rank: each re-probes both
    // classifiers.  Spaced so that subtables get time to tier up between.
    uint64_t prio_changes = 0;
    const auto end = Clock::now() + duration;
    for (int step = 1; Clock::now() < end; step++) {
        ovsb_rcu_quiesce_start();  // not a reader while it sleeps
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ovsb_rcu_quiesce_end();
        if (step % 2) {
            ASSERT_TRUE(registry.set_priority("generic", step % 4 == 1 ? 5 : 1));
        } else {
            ASSERT_TRUE(registry.set_priority(top, step % 4 == 2 ? 0 : top_priority));
        }
        prio_changes++;
    }
    ASSERT_TRUE(registry.set_priority("generic", 1));
    ASSERT_TRUE(registry.set_priority(top, top_priority));
    ovsb_rcu_quiesce_start();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the JIT back at the top
    ovsb_rcu_quiesce_end();
    stop = true;
    for (ovsb_thread* t : threads) {
        ovsb_thread_join(t);
    }

    for (Pmd& pmd : pmds) {
        std::printf(
            "pmd: lookups %llu, rules inserted %llu removed %llu, new-mask rules %llu, "
            "rankings %llu\n",
            (unsigned long long)pmd.lookups.load(), (unsigned long long)pmd.inserted,
            (unsigned long long)pmd.removed, (unsigned long long)pmd.subtables_made,
            (unsigned long long)pmd.rankings);
        EXPECT_EQ(pmd.misses.load(), 0u);
        EXPECT_EQ(pmd.wrong.load(), 0u);
        EXPECT_GT(pmd.lookups.load(), 10000u);
        EXPECT_EQ(pmd.cls.rule_count(), pmd.stable_rules.size());
        EXPECT_EQ(pmd.cls.subtables().size(), masks.size());
    }
    std::printf("priority changes %llu\n", (unsigned long long)prio_changes);
    EXPECT_GT(prio_changes, 1u);
#if OVSCLS_WITH_JIT
    const jit::JitStats jit = engine.stats();
    std::printf("jit: %llu compiles, %llu shared, %llu installs, %llu tier-ups, %llu cancelled\n",
                (unsigned long long)jit.cache.compiles, (unsigned long long)jit.cache.shared,
                (unsigned long long)jit.installs, (unsigned long long)jit.tier_ups,
                (unsigned long long)jit.cancelled);
    if (const Availability cpu = jit_avx2_availability(); cpu.available) {
        EXPECT_GT(jit.cache.compiles, 10u);
        EXPECT_GT(jit.cache.shared, 0u) << "the two PMDs' subtables of one mask share code";
        EXPECT_EQ(jit.cache.compiles_off_compiler, 0u) << "a compile ran on a ranking thread";
        // The last priority change re-probed every subtable; code for the
        // stable masks may still wait behind the churn's compiles (under
        // TSan on 2 busy cores, seconds), and so may the tier-ups of the
        // subtables whose keys carry more fields than their masks (the
        // first six masks': their keys take the slow path until then).  The
        // main thread now plays both PMDs, as their threads would: lookups,
        // then a ranking, until a stable subtable runs JIT code again and
        // the engine has tiered one up (at most 30 s).
        const auto settle_start = Clock::now();
        size_t on_jit = 0;
        uint64_t tier_ups = 0;
        while (true) {
            on_jit = 0;
            for (Pmd& pmd : pmds) {
                look_up_stable_keys(pmd);
                pmd.cls.sort_subtables();
                for (const auto& st : pmd.cls.subtables()) {
                    on_jit += st.impl == "jit_avx2";
                }
            }
            tier_ups = engine.stats().tier_ups;
            if ((on_jit > 0 && tier_ups > 0) ||
                Clock::now() - settle_start > std::chrono::seconds(30)) {
                break;
            }
            ovsb_rcu_quiesce_start();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            ovsb_rcu_quiesce_end();
        }
        std::printf("stable subtables on jit_avx2: %zu, %lld ms after the writers stopped\n",
                    on_jit,
                    (long long)std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                                                     settle_start)
                        .count());
        EXPECT_GT(on_jit, 0u) << "no stable subtable ends on JIT code within 30 s";
        std::printf("tier-ups: %llu during the churn, %llu in all\n",
                    (unsigned long long)jit.tier_ups, (unsigned long long)tier_ups);
        EXPECT_GT(tier_ups, 0u) << "no subtable tiered up to its keys' map within 30 s";
        const jit::FusedStats f = engine.fused().stats();
        std::printf("jit_fused: %llu compiles, %llu handed out to classifiers\n",
                    (unsigned long long)f.compiles, (unsigned long long)f.handed);
    } else {
        // The writers' churn still re-probes jit_avx2, which must decline.
        uint64_t declines = 0;
        for (int why = 0; why < static_cast<int>(jit::Decline::kCount); why++) {
            declines += jit.declines[why];
        }
        EXPECT_EQ(jit.cache.compiles, 0u);
        EXPECT_GT(declines, 0u);
        std::printf("not checked: readers running JIT code (%s; jit_avx2 declined %llu times)\n",
                    cpu.why.c_str(), (unsigned long long)declines);
    }
#else
    std::printf("not checked: readers running JIT code (%s)\n", jit_build_note().c_str());
#endif
    ovsb_rcu_quiesce();
}

#if OVSCLS_WITH_JIT
// jit_fused under the same churn, without priority changes: a PMD's reader
// runs fused lookups (refreshing them between bursts) while its writer
// inserts and removes rules and subtables and ranks.  Runs for a second and
// until fused code was handed to the classifier 50 times (at most 30 s:
// sanitizers are slow).
TEST(Concurrency, FusedLookupsAnswerWhileWritersChurn) {
    if (const Availability cpu = jit_avx2_availability(); !cpu.available) {
        GTEST_SKIP() << "not checked: jit_fused under churn (" << cpu.why << ")";
    }
    jit::EngineOptions jit_options;
    jit_options.config.hot_hits = 0;
    jit_options.config.cache.compiles_per_sec = 1000000;
    jit::Engine engine(jit_options);
    LookupRegistry registry;
    add_builtin_lookups(registry, &engine);
    Gen g(77);
    size_t family = 0;
    const std::vector<FlowKey> masks = stable_masks(g, &family);
    Pmd pmd(registry, &engine.fused());
    fill(pmd, masks, family, g);

    std::atomic<bool> stop{false};
    std::function<void()> bodies[2] = {[&] { read_until(pmd, stop, 5); },
                                       [&] { write_until(pmd, masks, stop, 6); }};
    ovsb_thread* threads[2] = {start("reader", &bodies[0]), start("writer", &bodies[1])};
    const auto begin = std::chrono::steady_clock::now();
    const auto deadline = begin + std::chrono::seconds(30);
    // Fused code is compiled for one ranking and handed out only if it is
    // ready before a ranking changes the order.  Where compiles are slow
    // (sanitizers, a loaded machine: the compiler thread gets a share of 2
    // cores), a second without 5 more hand-outs doubles the writer's
    // ranking period, up to OVS's own 1 s.  Churn goes on meanwhile.
    ovsb_rcu_quiesce_start();
    uint64_t handed_at_check = 0;
    auto next_check = begin + std::chrono::seconds(1);
    while ((engine.fused().stats().handed < 50 ||
            std::chrono::steady_clock::now() < begin + std::chrono::seconds(1)) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (std::chrono::steady_clock::now() >= next_check) {
            const uint64_t handed = engine.fused().stats().handed;
            if (handed < handed_at_check + 5 && pmd.ranking_ms < 1000) {
                pmd.ranking_ms = std::min(2 * pmd.ranking_ms.load(), 1000);
            }
            handed_at_check = handed;
            next_check += std::chrono::seconds(1);
        }
    }
    ovsb_rcu_quiesce_end();
    stop = true;
    for (ovsb_thread* t : threads) {
        ovsb_thread_join(t);
    }
    const jit::FusedStats f = engine.fused().stats();
    std::printf(
        "jit_fused under churn: lookups %llu, rankings %llu, %llu fused compiles, %llu "
        "handed out; ranking period at the end %d ms\n",
        (unsigned long long)pmd.lookups.load(), (unsigned long long)pmd.rankings,
        (unsigned long long)f.compiles, (unsigned long long)f.handed, pmd.ranking_ms.load());
    EXPECT_EQ(pmd.misses.load(), 0u);
    EXPECT_EQ(pmd.wrong.load(), 0u);
    EXPECT_GE(f.handed, 50u) << "fused lookups were rarely in place: little was checked";
    EXPECT_EQ(engine.stats().cache.compiles_off_compiler, 0u);
    EXPECT_EQ(pmd.cls.rule_count(), pmd.stable_rules.size());
    ovsb_rcu_quiesce();
}
#endif

// The tail index (tail/tuple_pruning.hpp) under the same churn: both PMDs'
// classifiers leave all but their first two subtables to it, so readers
// walk its tries and probe its candidates while writers insert and remove
// rules (marking and unmarking lanes), create subtables (families rebuilt
// when a new mask makes a lane vary) and destroy them, and rank.
TEST(Concurrency, TailIndexAnswersWhileWritersChurn) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    Gen g(91);
    size_t family = 0;
    const std::vector<FlowKey> masks = stable_masks(g, &family);
    tail::TuplePruningIndex* index[2];
    auto make = [&](int i) {
        auto t = std::make_unique<tail::TuplePruningIndex>(
            tail::TuplePruningConfig{.head = 2, .min_tail = 4});
        index[i] = t.get();
        return t;
    };
    Pmd pmds[2] = {Pmd(registry, nullptr, make(0)), Pmd(registry, nullptr, make(1))};
    for (Pmd& pmd : pmds) {
        fill(pmd, masks, family, g);
    }
    std::atomic<bool> stop{false};
    std::function<void()> bodies[4] = {[&] { read_until(pmds[0], stop, 11); },
                                       [&] { read_until(pmds[1], stop, 12); },
                                       [&] { write_until(pmds[0], masks, stop, 13); },
                                       [&] { write_until(pmds[1], masks, stop, 14); }};
    ovsb_thread* threads[4] = {start("reader0", &bodies[0]), start("reader1", &bodies[1]),
                               start("writer0", &bodies[2]), start("writer1", &bodies[3])};
    ovsb_rcu_quiesce_start();
    std::this_thread::sleep_for(std::chrono::milliseconds(
        std::getenv("CONCURRENCY_MS") ? std::atoi(std::getenv("CONCURRENCY_MS")) : 2000));
    ovsb_rcu_quiesce_end();
    stop = true;
    for (ovsb_thread* t : threads) {
        ovsb_thread_join(t);
    }
    for (int i = 0; i < 2; i++) {
        Pmd& pmd = pmds[i];
        const tail::TuplePruningStats st =
            pmd.cls.with_writer_lock([&] { return index[i]->stats(); });
        std::printf(
            "tail index under churn: lookups %llu, rules inserted %llu removed %llu, new-mask "
            "rules %llu, rankings %llu; index: %llu keys served, %llu probes, %llu rebuilds\n",
            (unsigned long long)pmd.lookups.load(), (unsigned long long)pmd.inserted,
            (unsigned long long)pmd.removed, (unsigned long long)pmd.subtables_made,
            (unsigned long long)pmd.rankings, (unsigned long long)st.keys,
            (unsigned long long)st.probes, (unsigned long long)st.rebuilds);
        EXPECT_EQ(pmd.misses.load(), 0u);
        EXPECT_EQ(pmd.wrong.load(), 0u);
        EXPECT_GT(st.keys, 1000u) << "the index served few keys: little was checked";
        EXPECT_EQ(pmd.cls.rule_count(), pmd.stable_rules.size());
    }
    ovsb_rcu_quiesce();
}

}  // namespace
}  // namespace ovscls::test
