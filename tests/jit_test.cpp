// The JIT (jit/): fast and slow paths against OVS's generic, tiering in the
// classifier, every decline path, code sharing and freeing, W^X, and the
// profiler/dump outputs.  (The differential tests cover jit_avx2 for every
// fingerprint up to 16 blocks too; lookup_impls.hpp.)
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "classifier/classifier.hpp"
#include "classifier/miniflow.hpp"
#include "cpu_case.hpp"
#include "jit/cmap_layout.hpp"
#include "jit/engine.hpp"
#include "jit/lookup_generator.hpp"
#include "random_subtable.hpp"
#include "reference/ovs_reference.h"
#include "standalone/builtin_lookups.hpp"
#include "two_map_subtables.hpp"
#include "wx_filter.hpp"

namespace ovscls::test {
namespace {

// W^X by the kernel for this whole test program (wx_filter.hpp), installed
// before any test runs: every compile below happens under it.
struct WxFilter {
    bool installed = false;
    std::string why;
    WxFilter() { installed = install_wx_filter(&why); }
};
const WxFilter& wx_filter() {
    static const WxFilter filter;
    return filter;
}
[[maybe_unused]] const bool kWxFilterAtStart = wx_filter().installed;

// Each test gets its own engine (jit/engine.hpp), logging into log().
class JitTest : public ::testing::Test {
  protected:
    void SetUp() override {
        log().clear();
        make_engine(std::nullopt);
    }
    void TearDown() override { engine_.reset(); }
    // A fresh engine, declining as if the CPU lacked `hidden`.
    void make_engine(std::optional<jit::CpuFeature> hidden) {
        engine_.reset();
        jit::EngineOptions options;
        options.log = [](const char* line) { log().push_back(line); };
        options.hide_cpu_feature = hidden;
        engine_ = std::make_unique<jit::Engine>(options);
    }
    jit::Engine& engine() { return *engine_; }
    static std::vector<std::string>& log() {
        static std::vector<std::string> lines;
        return lines;
    }
    std::unique_ptr<jit::Engine> engine_;
};

// Tests that compile and run generated code: skipped, saying why, on a CPU
// that cannot run it (DeclinePathsFallBackAndLogOnce checks that the JIT
// declines there).
class JitCodeTest : public JitTest {
  protected:
    void SetUp() override {
        JitTest::SetUp();
        const Availability jit = jit_avx2_availability();
        if (!jit.available) {
            GTEST_SKIP() << "not checked: jit_avx2 cannot run here: " << jit.why;
        }
    }
};

// Waits until postponed frees have brought the mapped code down to `bytes`
// (OVS-RCU runs them after a grace period, on its own thread once the
// process has more than one).
bool mapped_code_drops_to(const jit::Engine& engine, uint64_t bytes) {
    for (int i = 0; i < 200; i++) {
        ovsb_rcu_synchronize();
        ovsb_rcu_quiesce();
        if (engine.stats().cache.mapped_bytes <= bytes) {
            return true;
        }
        usleep(10000);
    }
    return false;
}

// Looks `keys` up through `fn` and OVS's generic in random bursts with
// holes; returns the number of bursts whose results differ.
int mismatching_bursts(RandomSubtable& st, ovsb_lookup_func fn, const std::vector<FlowKey>& keys,
                       Gen& g) {
    const ovsb_lookup_func truth = ovs_truth(st.subtable);
    int bad = 0;
    for (size_t start = 0; start < keys.size();) {
        const uint32_t cnt = std::min<uint32_t>(1 + g.below(kMaxBurst), keys.size() - start);
        const netdev_flow_key* ptrs[kMaxBurst];
        uint32_t keys_map = 0;
        for (uint32_t i = 0; i < cnt; i++) {
            ptrs[i] = ovs(&keys[start + i]);
            keys_map |= g.chance(85) ? 1u << i : 0;
        }
        keys_map = keys_map ? keys_map : 1;
        dpcls_rule* want[kMaxBurst];
        dpcls_rule* got[kMaxBurst];
        std::fill(std::begin(want), std::end(want), kUnset);
        std::fill(std::begin(got), std::end(got), kUnset);
        const uint32_t want_found = truth(st.subtable, keys_map, ptrs, want);
        const uint32_t got_found = fn(st.subtable, keys_map, ptrs, got);
        bad += !same_result(got_found, got, want_found, want);
        start += cnt;
    }
    return bad;
}

// A key with exactly the map `map` over `flow`.
FlowKey key_with_map(const FullFlow& flow, const MiniflowMap& map) {
    return make_key({{map.bits[0], map.bits[1]}}, flow.data());
}

// The slow-path keys the subtable's profile slot counted.
uint64_t slow_keys(const jit::Engine& engine, const dpcls_subtable* subtable) {
    const jit::ProfileSlot* slot = engine.profile_for(subtable);
    EXPECT_NE(slot, nullptr) << "the subtable has no profile slot";
    return slot ? slot->slow_keys : 0;
}

// Fast and slow paths give OVS's results for expected maps that equal the
// mask's map, add words to it, lack some of its words, or are unrelated;
// keys with the expected map do take the fast path, others the slow one.
TEST_F(JitCodeTest, FastAndSlowPathsMatchOvsForAnyExpectedMap) {
    uint64_t fast = 0, slow = 0, lookups = 0;
    for (auto [u0, u1] : {std::pair{4u, 1u},
                          {5u, 1u},
                          {4u, 3u},
                          {5u, 3u},
                          {1u, 0u},
                          {0u, 1u},
                          {9u, 4u},
                          {12u, 9u},
                          {24u, 8u},
                          {31u, 1u}}) {
        Gen g(0x1e7 + u0 * 64 + u1);
        RandomSubtable st(g, u0, u1, 300);
        const MiniflowMap mask_map = st.mask.map;
        MiniflowMap more = mask_map, fewer = mask_map, other{};
        more.bits[0] |= g.bits(6, 64);
        more.bits[1] |= g.bits(2, kUnit1Bits);
        fewer.bits[0] &= ~(uint64_t{1} << std::countr_zero(mask_map.bits[0] | (1ull << 63)));
        fewer.bits[1] &= fewer.bits[1] - 1;
        other.bits[0] = g.bits(10, 64);
        for (const MiniflowMap& expected : {mask_map, more, fewer, other}) {
            const ovsb_lookup_func fn = engine().compile_now(st.subtable, expected);
            ASSERT_NE(fn, nullptr);
            // Keys of every kind, then keys carrying exactly the expected map.
            std::vector<FlowKey> mixed, exact;
            for (int i = 0; i < 600; i++) {
                mixed.push_back(st.random_key(g));
                FlowKey k = st.random_key(g);
                exact.push_back(key_with_map(expand(k), expected));
            }
            const uint64_t before = slow_keys(engine(), st.subtable);
            EXPECT_EQ(mismatching_bursts(st, fn, exact, g), 0) << u0 << "," << u1;
            EXPECT_EQ(slow_keys(engine(), st.subtable), before)
                << "exact-map keys took the slow path";
            EXPECT_EQ(mismatching_bursts(st, fn, mixed, g), 0) << u0 << "," << u1;
            fast += exact.size();
            slow += slow_keys(engine(), st.subtable) - before;
            lookups += exact.size() + mixed.size();
        }
    }
    std::printf("lookups %llu, fast-path keys %llu, slow-path keys %llu\n",
                (unsigned long long)lookups, (unsigned long long)fast, (unsigned long long)slow);
    EXPECT_GT(slow, lookups / 10);
}

// The generated code reads OVS's cmap directly; struct cmap_impl and
// cmap_bucket are private to lib/cmap.c, so their layout (as
// lookup_generator.cpp assumes it) is checked here against a cmap that OVS
// filled: every rule is found in one of its two buckets, at its hash.
TEST_F(JitTest, CmapLayoutIsOvs) {
    Gen g(21);
    RandomSubtable st(g, 4, 1, 3000);
    const auto* impl =
        static_cast<const uint8_t*>(view(st.subtable)->rules.impl.load(std::memory_order_acquire));
    auto u32 = [](const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); };
    const uint32_t n = u32(impl), mask = u32(impl + 12), basis = u32(impl + 16);
    EXPECT_EQ(n, st.rules.size());
    EXPECT_EQ(mask & (mask + 1), 0u) << "mask is buckets - 1";
    EXPECT_GE((mask + 1) * 5, n);
    for (dpcls_rule* rule : st.rules) {
        const uint32_t hash = view(rule)->flow.hash;
        const uint32_t h1 = ovsb_hash_finish(basis, hash);
        const uint32_t h2 = (h1 << 16) | (h1 >> 16);
        int found = 0;
        const uint32_t b1 = h1 & mask, b2 = h2 & mask;
        // Both hashes may name one bucket: look in it once.
        for (uint32_t b : (b1 == b2 ? std::vector<uint32_t>{b1} : std::vector<uint32_t>{b1, b2})) {
            const uint8_t* bucket = impl + 64 + 64 * b;
            for (int j = 0; j < 5; j++) {
                const void* node = *reinterpret_cast<void* const*>(bucket + 24 + 8 * j);
                found += u32(bucket + 4 + 4 * j) == hash && node == rule;
            }
        }
        ASSERT_EQ(found, 1) << "rule hash " << hash;
    }
    // The JIT's own run-time check (what the plugin runs inside
    // ovs-vswitchd) agrees with the one above.
    std::string why;
    EXPECT_TRUE(jit::cmap_layout_matches(&why)) << why;
}

// Subtables with the same map share code whatever their mask values; the
// code goes when the last of them does, after a grace period.
// The generator reports failure as a status, never as an exception (it runs
// under OVS's C code).  Generating runs no generated code: any CPU.
// jit-show (Engine::info()) is one "  name: value" line per figure under
// its two headers, every name once, so that a script reads a value with one
// sed (tests/vswitchd/lib.sh's jit_field) and OVS's operators see the
// pmd-stats-show style.
TEST_F(JitTest, JitShowIsOneNameValuePerLine) {
    const std::string shown = engine().info();
    std::istringstream in(shown);
    std::set<std::string> names;
    std::string line;
    int headers = 0;
    while (std::getline(in, line)) {
        if (line.starts_with("jit_avx2: ") || line.starts_with("jit_fused: ")) {
            headers++;
            continue;
        }
        ASSERT_TRUE(line.starts_with("  ")) << line;
        const size_t colon = line.find(": ");
        ASSERT_NE(colon, std::string::npos) << line;
        EXPECT_TRUE(names.insert(line.substr(2, colon - 2)).second) << "twice: " << line;
    }
    EXPECT_EQ(headers, 2) << shown;
    for (const char* name : {"compiles", "tier-ups", "ranking calls", "fused lookups",
                             "declined for cpu", "compiles not on the compiler thread"}) {
        EXPECT_EQ(names.count(name), 1u) << name << "\n" << shown;
    }
}

TEST_F(JitTest, GeneratorReportsFailureAsStatus) {
    jit::ProfileTable profile;
    jit::GenerateStatus status;

    jit::LookupShape too_big;
    too_big.mask_map.bits[0] = (uint64_t{1} << (jit::kMaxBlocks + 1)) - 1;  // 33 blocks
    EXPECT_EQ(jit::LookupGenerator::create(too_big, &profile, nullptr, &status), nullptr);
    EXPECT_EQ(status.code, jit::GenerateStatus::Code::kTooManyBlocks) << status.detail;

    struct NoMemory : Xbyak::Allocator {
        uint8_t* alloc(size_t) override { return nullptr; }
        void free(uint8_t*) override {}
    } no_memory;
    jit::LookupShape shape;
    shape.mask_map.bits[0] = 0xf;
    shape.mask_map.bits[1] = 0x1;
    EXPECT_EQ(jit::LookupGenerator::create(shape, &profile, &no_memory, &status), nullptr);
    EXPECT_EQ(status.code, jit::GenerateStatus::Code::kNoMemory) << status.detail;
    EXPECT_NE(status.detail.find("code generation failed"), std::string::npos) << status.detail;
}

TEST_F(JitCodeTest, SameMapSharesCodeAndLastReleaseFreesIt) {
    Gen g(7);
    const jit::CacheStats before = engine().stats().cache;
    FlowKey a = g.mask(4, 1);
    std::vector<uint64_t> values(a.values, a.values + 5);
    values[2] = ~uint64_t{0} << 8;  // another prefix length, same words
    FlowKey b{};
    const uint64_t map[2] = {a.map.bits[0], a.map.bits[1]};
    ovsb_mask_init_raw(ovs(&b), map, values.data(), values.size());
    dpcls_subtable* sa = ovsb_subtable_create(ovs(&a));
    dpcls_subtable* sb = ovsb_subtable_create(ovs(&b));

    const ovsb_lookup_func fa = engine().compile_now(sa, std::nullopt);
    const ovsb_lookup_func fb = engine().compile_now(sb, std::nullopt);
    EXPECT_EQ(fa, fb);
    jit::CacheStats now = engine().stats().cache;
    EXPECT_EQ(now.compiles, before.compiles + 1);
    EXPECT_EQ(now.shared, before.shared + 1);
    EXPECT_EQ(now.live, before.live + 1);

    engine().release(sa, nullptr);
    EXPECT_EQ(engine().stats().cache.live, before.live + 1);  // sb still uses it
    engine().release(sb, nullptr);
    // The profile slots cool for a grace period (ProfileSlot), then the code
    // leaves the cache and is unmapped.
    EXPECT_TRUE(mapped_code_drops_to(engine(), before.mapped_bytes));
    EXPECT_EQ(engine().stats().cache.live, before.live);
    ovsb_subtable_destroy_deferred(sa, nullptr, nullptr);
    ovsb_subtable_destroy_deferred(sb, nullptr, nullptr);
}

// In the classifier: tier 0 until hot, tier 1 (slow path only) after one
// ranking, tier 2 (fast path for the packets' map) after the next; lookups
// stay right throughout, and the code is freed with the classifier.
TEST_F(JitCodeTest, ClassifierTiersUpAsSubtablesGetHot) {
    jit::JitConfig cfg = engine().config();
    cfg.hot_hits = 50;
    engine().configure(cfg);
    const jit::CacheStats before = engine().stats().cache;
    {
        LookupRegistry registry;
        add_builtin_lookups(registry, &engine());
        Classifier cls(registry);
        Gen g(99);
        FlowKey mask = g.mask(4, 1);
        std::vector<FullFlow> flows;
        for (int i = 0; i < 200; i++) {
            flows.push_back(g.flow());
            ASSERT_TRUE(cls.insert(mask, flows.back().data()));
        }
        // Packets carry the mask's words and a few more, all the same map.
        MiniflowMap packet_map = mask.map;
        packet_map.bits[0] |= g.bits(5, 64);
        auto run = [&](int bursts) {
            for (int b = 0; b < bursts; b++) {
                FlowKey keys[kMaxBurst];
                const netdev_flow_key* ptrs[kMaxBurst];
                for (uint32_t i = 0; i < kMaxBurst; i++) {
                    keys[i] = key_with_map(flows[g.below(flows.size())], packet_map);
                    ptrs[i] = ovs(&keys[i]);
                }
                dpcls_rule* rules[kMaxBurst];
                ASSERT_TRUE(cls.lookup(ptrs, kMaxBurst, rules));
            }
        };
        EXPECT_EQ(cls.subtables()[0].impl, "specialized");
        run(1);  // 32 hits: not hot
        cls.sort_subtables();
        EXPECT_EQ(cls.subtables()[0].impl, "specialized");
        EXPECT_EQ(engine().stats().requests, 0u);
        run(10);
        cls.sort_subtables();  // hot: asks the compiler thread, serves on
        EXPECT_EQ(cls.subtables()[0].impl, "specialized");
        EXPECT_EQ(engine().stats().requests, 1u);
        engine().drain();
        run(10);
        cls.sort_subtables();  // the code is ready: tier 1
        ASSERT_EQ(cls.subtables()[0].impl, "jit_avx2");
        const dpcls_subtable* subtable = cls.subtables()[0].subtable;
        EXPECT_FALSE(engine().compiled_for(subtable)->shape.expected_map);
        run(10);
        cls.sort_subtables();  // its keys took the slow path: asks for tier 2
        engine().drain();
        run(1);
        cls.sort_subtables();
        const jit::CompiledLookup* tier2 = engine().compiled_for(subtable);
        ASSERT_TRUE(tier2->shape.expected_map);
        EXPECT_EQ(tier2->shape.expected_map->bits[0], packet_map.bits[0]);
        EXPECT_EQ(view(subtable)->lookup_func.load(), tier2->fn);
        const uint64_t slow_before = slow_keys(engine(), subtable);
        run(10);
        EXPECT_EQ(slow_keys(engine(), subtable), slow_before);  // all on the fast path now
        cls.sort_subtables();
        engine().drain();
        run(1);
        cls.sort_subtables();
        EXPECT_EQ(engine().compiled_for(subtable), tier2);  // stays
        EXPECT_EQ(engine().stats().tier_ups, 1u);
        EXPECT_EQ(engine().stats().cache.compiles_off_compiler, 0u) << "a ranking compiled";
        EXPECT_EQ(registry.find("jit_avx2")->use_count.load(), 1);

        // Lowering the JIT's priority moves the subtable off it and frees it.
        ASSERT_TRUE(registry.set_priority("jit_avx2", 0));
        EXPECT_EQ(cls.subtables()[0].impl, "specialized");
        EXPECT_EQ(engine().compiled_for(subtable), nullptr);
        run(3);
    }
    EXPECT_TRUE(mapped_code_drops_to(engine(), before.mapped_bytes));
    EXPECT_EQ(engine().stats().cache.live, before.live);
}

// Two PMD threads' classifiers hold a subtable of the same mask each: they
// share the tier-1 code, but each tiers up on its own traffic.  A's packets
// carry map X, B's map Y: A ends with a fast path for X, B for Y, and
// neither's traffic moved the other (the profile is per subtable, in slots
// of their own cache lines).
TEST_F(JitCodeTest, EachSubtableTiersUpOnItsOwnTraffic) {
    jit::JitConfig cfg = engine().config();
    cfg.hot_hits = 10;
    engine().configure(cfg);
    LookupRegistry registry;
    add_builtin_lookups(registry, &engine());
    Classifier pmd_a(registry), pmd_b(registry);
    Gen g(4242);
    const FlowKey mask = g.mask(4, 1);
    std::vector<FullFlow> flows;
    for (int i = 0; i < 50; i++) {
        flows.push_back(g.flow());
        ASSERT_TRUE(pmd_a.insert(mask, flows.back().data()));
        ASSERT_TRUE(pmd_b.insert(mask, flows.back().data()));
    }
    MiniflowMap map_x = mask.map, map_y = mask.map;
    map_x.bits[0] |= g.bits(3, 64);
    map_y.bits[0] |= g.bits(7, 64);
    ASSERT_FALSE(map_x.bits[0] == map_y.bits[0]);
    auto run = [&](Classifier& cls, const MiniflowMap& map) {
        for (int b = 0; b < 4; b++) {
            FlowKey keys[kMaxBurst];
            const netdev_flow_key* ptrs[kMaxBurst];
            for (uint32_t i = 0; i < kMaxBurst; i++) {
                keys[i] = key_with_map(flows[g.below(flows.size())], map);
                ptrs[i] = ovs(&keys[i]);
            }
            dpcls_rule* rules[kMaxBurst];
            ASSERT_TRUE(cls.lookup(ptrs, kMaxBurst, rules));
        }
    };
    // Interleaved as two PMD threads would run: traffic, ranking, and the
    // compiler thread finishing in between.
    for (int round = 0; round < 5; round++) {
        run(pmd_a, map_x);
        run(pmd_b, map_y);
        pmd_a.sort_subtables();
        pmd_b.sort_subtables();
        engine().drain();
    }
    const dpcls_subtable* a = pmd_a.subtables()[0].subtable;
    const dpcls_subtable* b = pmd_b.subtables()[0].subtable;
    ASSERT_NE(a, b);
    const jit::CompiledLookup* code_a = engine().compiled_for(a);
    const jit::CompiledLookup* code_b = engine().compiled_for(b);
    ASSERT_TRUE(code_a && code_b);
    ASSERT_TRUE(code_a->shape.expected_map && code_b->shape.expected_map);
    EXPECT_EQ(code_a->shape.expected_map->bits[0], map_x.bits[0]);
    EXPECT_EQ(code_b->shape.expected_map->bits[0], map_y.bits[0]);
    const jit::ProfileSlot* slot_a = engine().profile_for(a);
    const jit::ProfileSlot* slot_b = engine().profile_for(b);
    if (slot_a && slot_b && code_a == code_b) {
        EXPECT_NE(slot_a, slot_b);
    }
    EXPECT_EQ(engine().stats().tier_ups, 2u);
    EXPECT_EQ(engine().stats().cache.compiles, 3u);  // tier 1 shared, tier 2 for X and for Y
    EXPECT_EQ(engine().stats().cache.compiles_off_compiler, 0u);
    EXPECT_EQ(pmd_a.subtables()[0].impl, "jit_avx2");
    EXPECT_EQ(pmd_b.subtables()[0].impl, "jit_avx2");
}

// A subtable tiers up on its own hits, not on the keys that only pass
// through it.  A and B are hot subtables of one classifier; A ranks first
// (more hits), so B's packets (map Y) miss A on their way to B and take A's
// slow path too.  A still tiers up to the map of its own packets (X), once,
// and stays there; B, reached by its own packets only, tiers up to Y.
// (Counting B's keys as A's would re-target A to Y as soon as they are half
// of A's hits, and back.)
TEST_F(JitCodeTest, KeysOfLaterSubtablesDoNotTierUpAnEarlierOne) {
    jit::JitConfig cfg = engine().config();
    cfg.hot_hits = 10;
    cfg.fused_subtables = 0;  // the per-subtable lookups, whose profiles these are
    engine().configure(cfg);
    LookupRegistry registry;
    add_builtin_lookups(registry, &engine());
    Classifier cls(registry);
    Gen g(2718);
    const TwoMapSubtables t(g);
    ASSERT_TRUE(t.insert_into(cls));
    ASSERT_FALSE(t.map_x.bits[0] == t.map_y.bits[0] && t.map_x.bits[1] == t.map_y.bits[1]);
    for (int round = 0; round < 8; round++) {
        for (int b = 0; b < 4; b++) {
            ASSERT_TRUE(t.lookup_burst(cls, g, 20));  // 20 of A's packets, 12 of B's
        }
        cls.sort_subtables();
        engine().drain();
    }
    const std::vector<Classifier::SubtableInfo> subtables = cls.subtables();
    ASSERT_EQ(subtables.size(), 2u);
    ASSERT_EQ(subtables[0].u0, 4u)
        << "A (4,1) does not rank first: B's keys do not pass through it";
    ASSERT_EQ(subtables[1].u0, 3u);
    const jit::CompiledLookup* code_a = engine().compiled_for(subtables[0].subtable);
    const jit::CompiledLookup* code_b = engine().compiled_for(subtables[1].subtable);
    ASSERT_TRUE(code_a && code_b);
    ASSERT_TRUE(code_a->shape.expected_map && code_b->shape.expected_map);
    EXPECT_EQ(code_a->shape.expected_map->bits[0], t.map_x.bits[0]) << "A tiered up to B's map";
    EXPECT_EQ(code_b->shape.expected_map->bits[0], t.map_y.bits[0]);
    EXPECT_EQ(engine().stats().tier_ups, 2u) << "one tier-up each";
    EXPECT_EQ(engine().stats().tier_ups_limited, 0u);
    std::printf("hits a round: A 80, B 48; tier-ups %llu\n",
                (unsigned long long)engine().stats().tier_ups);
}

// A subtable destroyed while its code is queued or compiling: the request
// is cancelled or its result dropped, and nothing stays mapped.
TEST_F(JitCodeTest, SubtableDestroyedBeforeItsCodeIsReadyCancelsCleanly) {
    const jit::CacheStats before = engine().stats().cache;
    Gen g(31);
    for (int i = 0; i < 50; i++) {
        RandomSubtable st(g, 1 + g.below(10), g.below(4), 3);
        const Subtable& v = *view(st.subtable);
        EXPECT_EQ(engine().probe({v.u0_bits, v.u1_bits, st.subtable, UINT32_MAX}), nullptr);
        engine().release(st.subtable, nullptr);  // destroyed before any ranking installs it
    }
    engine().drain();
    const jit::JitStats st = engine().stats();
    EXPECT_EQ(st.subtables, 0u);
    EXPECT_EQ(st.installs, 0u);
    EXPECT_EQ(st.requests, 50u);
    std::printf(
        "50 requests: %llu compiled, %llu of them dropped when done, the rest cancelled "
        "in the queue\n",
        (unsigned long long)(st.cache.compiles - before.compiles),
        (unsigned long long)st.cancelled);
    Gen g2(32);
    RandomSubtable other(g2, 2, 1, 3);  // the next probe lets go of dropped results
    const Subtable& v = *view(other.subtable);
    engine().probe({v.u0_bits, v.u1_bits, other.subtable, 0});
    engine().release(other.subtable, nullptr);
    EXPECT_TRUE(mapped_code_drops_to(engine(), before.mapped_bytes));
    EXPECT_EQ(engine().stats().cache.live, before.live);
}

// A cold subtable the engine has never been asked for stays at tier 0
// without an entry (a flood of cold masks must not grow the engine's table,
// which every ranking's probes search); a hot one gets an entry and a
// request.
TEST_F(JitCodeTest, ColdSubtablesLeaveNoTrace) {
    const uint32_t hot = engine().config().hot_hits;
    ASSERT_GT(hot, 0u);
    Gen g(41);
    std::vector<std::unique_ptr<RandomSubtable>> subtables;
    for (int i = 0; i < 20; i++) {
        subtables.push_back(std::make_unique<RandomSubtable>(g, 1 + g.below(6), g.below(3), 2));
        const Subtable& v = *view(subtables.back()->subtable);
        EXPECT_EQ(engine().probe({v.u0_bits, v.u1_bits, subtables.back()->subtable, hot - 1}),
                  nullptr);
    }
    EXPECT_EQ(engine().stats().subtables, 0u);
    EXPECT_EQ(engine().stats().requests, 0u);
    const Subtable& v = *view(subtables[0]->subtable);
    EXPECT_EQ(engine().probe({v.u0_bits, v.u1_bits, subtables[0]->subtable, hot}), nullptr);
    EXPECT_EQ(engine().stats().subtables, 1u);
    EXPECT_EQ(engine().stats().requests, 1u);
    engine().drain();
    for (auto& st : subtables) {
        engine().release(st->subtable, nullptr);
    }
    EXPECT_EQ(engine().stats().subtables, 0u);
}

// In a ranking call, a subtable with hot_hits hits but fewer than
// 1/kBusiestShare of the busiest one's (a mask flood's, which the tail
// index serves) stays cold: no entry, no compile.  Subtables with a share
// of the traffic near the busiest one's are hot; outside a ranking call
// (a re-probe on prio-set) hot_hits alone decides.
TEST_F(JitCodeTest, FloodSubtablesBesideABusyOneStayCold) {
    const uint32_t hot = engine().config().hot_hits;
    ASSERT_GT(hot, 0u);
    Gen g(43);
    std::vector<std::unique_ptr<RandomSubtable>> subtables;
    for (int i = 0; i < 26; i++) {
        subtables.push_back(std::make_unique<RandomSubtable>(g, 1 + g.below(6), g.below(3), 2));
    }
    auto probe = [&](int i, uint32_t hits) {
        const Subtable& v = *view(subtables[i]->subtable);
        return engine().probe({v.u0_bits, v.u1_bits, subtables[i]->subtable, hits});
    };
    const uint32_t busy = hot * jit::kBusiestShare * 4;
    engine().ranking_begin();
    probe(0, busy);
    for (int i = 1; i <= 20; i++) probe(i, hot * 2);  // below busy / kBusiestShare
    engine().ranking_end();
    EXPECT_EQ(engine().stats().requests, 1u) << "the busy subtable alone";
    EXPECT_EQ(engine().stats().subtables, 1u);
    engine().ranking_begin();
    probe(0, busy);
    for (int i = 21; i <= 25; i++) probe(i, busy / 2);  // spread: near the busiest
    engine().ranking_end();
    EXPECT_EQ(engine().stats().requests, 6u) << "and the five near it";
    probe(1, hot * 2);  // outside a ranking call
    EXPECT_EQ(engine().stats().requests, 7u);
    engine().drain();
    for (auto& st : subtables) engine().release(st->subtable, nullptr);
    EXPECT_EQ(engine().stats().subtables, 0u);
}

// While a thread is inside a ranking call the compiler thread does not
// compile (a compile beside the ranking slows the PMD's one stall), and once
// the ranking ends it does; with a short hold the compile goes ahead even
// though the ranking never ends.  Counts, not times: the long hold is an
// hour, so the first check cannot pass by the clock.
TEST_F(JitCodeTest, CompilerKeepsOutOfRankingCalls) {
    for (const bool ranking_ends : {true, false}) {
        SCOPED_TRACE(ranking_ends ? "hold of an hour, ranking ends" : "hold of 1 ms, ranking open");
        jit::EngineOptions options;
        options.log = [](const char* line) { log().push_back(line); };
        options.ranking_hold_max = ranking_ends
                                       ? std::chrono::nanoseconds(std::chrono::hours(1))
                                       : std::chrono::nanoseconds(std::chrono::milliseconds(1));
        jit::Engine engine(options);
        Gen g(43);
        RandomSubtable st(g, 3, 1, 2);
        const Subtable& v = *view(st.subtable);
        engine.ranking_begin();
        EXPECT_EQ(engine.probe({v.u0_bits, v.u1_bits, st.subtable, UINT32_MAX}), nullptr);
        if (ranking_ends) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            EXPECT_EQ(engine.stats().cache.compiles, 0u) << "compiled during a ranking";
            EXPECT_EQ(engine.stats().pending, 1u);
            engine.ranking_end();
        }
        engine.drain();  // with the ranking still open when !ranking_ends
        EXPECT_EQ(engine.stats().cache.compiles, 1u);
        if (!ranking_ends) {
            engine.ranking_end();
        }
        EXPECT_EQ(engine.stats().rankings, 1u);
        EXPECT_NE(engine.probe({v.u0_bits, v.u1_bits, st.subtable, UINT32_MAX}), nullptr);
        engine.release(st.subtable, nullptr);
    }
}

// Every decline leaves the subtable to the next implementation, which
// answers correctly; each reason is logged once.
TEST_F(JitTest, DeclinePathsFallBackAndLogOnce) {
    jit::JitConfig cfg = engine().config();
    cfg.hot_hits = 0;
    engine().configure(cfg);
    Gen g(5);
    auto fresh_subtable_is_served = [&](jit::Decline why) {
        LookupRegistry registry;
        add_builtin_lookups(registry, &engine());
        Classifier cls(registry);
        FlowKey mask = g.mask(4, 1);
        const FullFlow flow = g.flow();
        const uint64_t declines = engine().stats().declines[static_cast<int>(why)];
        ASSERT_TRUE(cls.insert(mask, flow.data()));  // hot at once (hot_hits 0)
        engine().drain();                            // what the compiler thread declines, it has
        cls.reprobe();
        EXPECT_NE(cls.subtables()[0].impl, "jit_avx2") << jit::decline_name(why) << "\n"
                                                       << engine().info();
        EXPECT_GT(engine().stats().declines[static_cast<int>(why)], declines)
            << jit::decline_name(why);
        FlowKey key = key_with_map(flow, mask.map);
        const netdev_flow_key* ptr = ovs(&key);
        dpcls_rule* rule = nullptr;
        EXPECT_TRUE(cls.lookup(&ptr, 1, &rule));
        // The re-probe asked again: let that compile end here, before the
        // next case changes the configuration or the fault injection it
        // would otherwise meet.
        engine().drain();
    };

    for (auto f : {jit::CpuFeature::kAvx2, jit::CpuFeature::kBmi1, jit::CpuFeature::kBmi2,
                   jit::CpuFeature::kPopcnt}) {
        make_engine(f);
        engine().configure(cfg);
        fresh_subtable_is_served(jit::Decline::kCpu);
    }
    make_engine(std::nullopt);
    engine().configure(cfg);

    cfg.enabled = false;
    engine().configure(cfg);
    fresh_subtable_is_served(jit::Decline::kDisabled);
    cfg.enabled = true;
    engine().configure(cfg);

    // On a CPU that cannot run the code, every other subtable declines for
    // the CPU first: that is what is checked there, with nothing hidden.
    if (const Availability cpu = jit_avx2_availability(); !cpu.available) {
        fresh_subtable_is_served(jit::Decline::kCpu);
        const bool logged = std::any_of(log().begin(), log().end(), [](const std::string& l) {
            return l.find("the CPU lacks") != std::string::npos;
        });
        EXPECT_TRUE(logged) << "no decline names the missing CPU feature";
        std::printf(
            "not checked: the budget, rate, memory and block-count declines (%s: the "
            "JIT declines for the CPU before those)\n",
            cpu.why.c_str());
        return;
    }

    cfg.cache.code_budget_bytes = engine().stats().cache.mapped_bytes;  // nothing more fits
    engine().configure(cfg);
    fresh_subtable_is_served(jit::Decline::kCodeBudget);
    cfg = jit::JitConfig{};
    cfg.hot_hits = 0;

    engine().configure(cfg);
    engine().code_memory().fail_next_allocations(1);
    fresh_subtable_is_served(jit::Decline::kNoMemory);

    cfg.cache.compiles_per_sec = 1;
    engine().configure(cfg);
    {
        LookupRegistry registry;
        add_builtin_lookups(registry, &engine());
        Classifier cls(registry);
        for (uint32_t u0 = 1; u0 <= 3; u0++) {  // three new maps within a second
            const FullFlow flow = g.flow();
            ASSERT_TRUE(cls.insert(g.mask(u0, 2), flow.data()));
        }
        engine().drain();
        EXPECT_GE(engine().stats().declines[static_cast<int>(jit::Decline::kCompileRate)], 1u);
    }

    // Too many blocks for the generator: (33, 0).
    RandomSubtable big(g, 33, 0, 10);
    EXPECT_EQ(engine().probe({33, 0, big.subtable, UINT32_MAX}), nullptr);
    EXPECT_GE(engine().stats().declines[static_cast<int>(jit::Decline::kTooManyBlocks)], 1u);

    std::set<std::string> distinct(log().begin(), log().end());
    EXPECT_EQ(distinct.size(), log().size()) << "a reason was logged twice";
    EXPECT_GE(log().size(), 6u);
    for (const std::string& line : log()) {
        EXPECT_NE(line.find("the next lookup implementation serves"), std::string::npos) << line;
    }
}

// No mapping of the process is writable and executable, after compiling
// many lookups; and the code itself sits in read-execute pages.
// The kernel refuses a mapping, or a change of one, that would be writable
// and executable at once; that is what makes the compiles of every other
// test here proof that the JIT never asks for one (a build of the generator
// without DontSetProtectRWE fails them).
TEST(WxFilter, KernelRefusesWritableAndExecutable) {
    if (!wx_filter().installed) {
        GTEST_SKIP() << "not checked: no seccomp filter (" << wx_filter().why
                     << "); the JIT's compiles here ran without W^X from the kernel";
    }
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    errno = 0;
    EXPECT_EQ(
        mmap(nullptr, page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
        MAP_FAILED);
    EXPECT_EQ(errno, EACCES);
    void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    errno = 0;
    EXPECT_EQ(mprotect(p, page, PROT_READ | PROT_WRITE | PROT_EXEC), -1);
    EXPECT_EQ(errno, EACCES);
    EXPECT_EQ(mprotect(p, page, PROT_READ | PROT_EXEC), 0);
    EXPECT_EQ(mprotect(p, page, PROT_READ | PROT_WRITE), 0);
    munmap(p, page);
}

TEST_F(JitCodeTest, NoMappingIsEverWritableAndExecutable) {
    Gen g(11);
    std::vector<std::unique_ptr<RandomSubtable>> subtables;
    for (int i = 0; i < 200; i++) {
        subtables.push_back(std::make_unique<RandomSubtable>(g, 1 + g.below(12), g.below(6), 3));
        ASSERT_NE(engine().compile_now(subtables.back()->subtable, std::nullopt), nullptr);
    }
    std::ifstream maps("/proc/self/maps");
    std::string line;
    int lines = 0, code_found = 0;
    const auto code =
        reinterpret_cast<uintptr_t>(engine().compiled_for(subtables[0]->subtable)->fn);
    while (std::getline(maps, line)) {
        std::istringstream in(line);
        std::string range, perms;
        in >> range >> perms;
        lines++;
        EXPECT_FALSE(perms[1] == 'w' && perms[2] == 'x') << line;
        const uintptr_t lo = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
        const uintptr_t hi = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
        if (code >= lo && code < hi) {
            EXPECT_EQ(perms.substr(0, 3), "r-x");
            code_found++;
        }
    }
    EXPECT_GT(lines, 10);
    EXPECT_EQ(code_found, 1);
}

// The bytes of a code page the code does not use are int3, also when the
// page held a bigger lookup before (pages are pooled): nothing stale is
// ever executable again.
TEST_F(JitCodeTest, UnusedCodeBytesAreInt3) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    Gen g(13);
    const uint64_t mapped_before = engine().stats().cache.mapped_bytes;
    {
        RandomSubtable big(g, 12, 4, 3);
        ASSERT_NE(engine().compile_now(big.subtable, std::nullopt), nullptr);
        engine().release(big.subtable, nullptr);  // the page is pooled after a grace period
    }
    ASSERT_TRUE(mapped_code_drops_to(engine(), mapped_before));
    for (int i = 0; i < 8; i++) {
        RandomSubtable small(g, 1 + g.below(2), g.below(2), 3);
        ASSERT_NE(engine().compile_now(small.subtable, std::nullopt), nullptr);
        const jit::CompiledLookup& lookup = *engine().compiled_for(small.subtable);
        const auto* code = reinterpret_cast<const uint8_t*>(lookup.fn);
        const auto start = reinterpret_cast<uintptr_t>(code);
        const size_t tail = page - (start + lookup.code_bytes) % page;
        size_t not_int3 = 0;
        for (size_t k = 0; k < tail % page; k++) {
            not_int3 += code[lookup.code_bytes + k] != 0xcc;
        }
        EXPECT_EQ(not_int3, 0u) << "of " << tail << " bytes after " << lookup.code_bytes
                                << " bytes of code";
        engine().release(small.subtable, nullptr);
    }
}

// perf can name the code, and a dump disassembles: the code starts with the
// endbr64 landing pad and the prologue's push rbx.
TEST_F(JitCodeTest, PerfMapAndDumpNameTheCode) {
    jit::JitConfig cfg = engine().config();
    cfg.cache.perf_map = true;
    char dir[] = "/tmp/jit_dumpXXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    cfg.cache.dump_dir = dir;
    engine().configure(cfg);
    Gen g(3);
    RandomSubtable st(g, 7, 2, 5);  // a fingerprint no other test here uses
    ASSERT_NE(engine().compile_now(st.subtable, std::nullopt), nullptr);
    const jit::CompiledLookup& lookup = *engine().compiled_for(st.subtable);
    const std::string name = "dpcls_jit_u7_u2_" + std::to_string(lookup.id);

    std::ifstream perf_map("/tmp/perf-" + std::to_string(getpid()) + ".map");
    std::string text((std::istreambuf_iterator<char>(perf_map)), {});
    char addr[32];
    std::snprintf(addr, sizeof addr, "%lx ", reinterpret_cast<unsigned long>(lookup.fn));
    EXPECT_NE(text.find(std::string(addr) + "", 0), std::string::npos);
    EXPECT_NE(text.find(name + "\n"), std::string::npos) << text;

    std::ifstream dump(std::string(dir) + "/" + name + ".bin", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(dump)), {});
    EXPECT_EQ(bytes.size(), lookup.code_bytes);
    ASSERT_GE(bytes.size(), 5u);
    EXPECT_EQ(bytes.substr(0, 5), std::string("\xf3\x0f\x1e\xfa\x53", 5)) << "endbr64; push rbx";
    EXPECT_LE(lookup.code_bytes, jit::LookupGenerator::reserved_bytes(lookup.shape));
    // Both files reveal code addresses: private to the user.
    struct stat file;
    ASSERT_EQ(stat((std::string(dir) + "/" + name + ".bin").c_str(), &file), 0);
    EXPECT_EQ(file.st_mode & 0777, 0600u);
    ASSERT_EQ(stat(("/tmp/perf-" + std::to_string(getpid()) + ".map").c_str(), &file), 0);
    EXPECT_EQ(file.st_mode & 0777, 0600u);
    EXPECT_EQ(engine().stats().cache.file_errors, 0u);
    std::remove((std::string(dir) + "/" + name + ".bin").c_str());
    rmdir(dir);
}

// A dump path someone prepared (a symbolic link to a file of theirs, or a
// file already there) is neither followed nor overwritten, nor is a perf
// map of another user appended to: not written, counted, the first logged
// once; the code runs all the same.
TEST_F(JitCodeTest, DumpFilesAreNeverFollowedNorOverwritten) {
    char dir[] = "/tmp/jit_dumpXXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string d = dir;
    jit::JitConfig cfg = engine().config();
    cfg.cache.dump_dir = d;
    engine().configure(cfg);
    // The engine is fresh: its first lookups get ids 1 and 2.
    {
        std::ofstream victim(d + "/victim");
        victim << "precious";
    }
    ASSERT_EQ(symlink((d + "/victim").c_str(), (d + "/dpcls_jit_u7_u2_1.bin").c_str()), 0);
    {
        std::ofstream there(d + "/dpcls_jit_u6_u2_2.bin");
        there << "mine";
    }
    Gen g(5);
    RandomSubtable a(g, 7, 2, 3);
    RandomSubtable b(g, 6, 2, 3);
    ASSERT_NE(engine().compile_now(a.subtable, std::nullopt), nullptr);
    ASSERT_NE(engine().compile_now(b.subtable, std::nullopt), nullptr);
    ASSERT_EQ(engine().compiled_for(a.subtable)->id, 1u);
    ASSERT_EQ(engine().compiled_for(b.subtable)->id, 2u);

    auto read = [](const std::string& path) {
        std::ifstream f(path);
        return std::string((std::istreambuf_iterator<char>(f)), {});
    };
    EXPECT_EQ(read(d + "/victim"), "precious");
    EXPECT_EQ(read(d + "/dpcls_jit_u6_u2_2.bin"), "mine");
    EXPECT_EQ(engine().stats().cache.file_errors, 2u);
    const auto logged = std::count_if(log().begin(), log().end(), [](const std::string& line) {
        return line.find("Logged once") != std::string::npos &&
               line.find("dpcls_jit_u7_u2_1.bin") != std::string::npos;
    });
    EXPECT_EQ(logged, 1) << "the first failure, once";
    EXPECT_NE(engine().info().find("\n  files not written: 2\n"), std::string::npos)
        << engine().info();

    // The perf map lives in /tmp, where another user may have planted it:
    // appended to only when the process's user owns it.
    const std::string map = "/tmp/perf-" + std::to_string(getpid()) + ".map";
    std::remove(map.c_str());
    {
        std::ofstream planted(map);
        planted << "theirs\n";
    }
    if (geteuid() == 0 && chown(map.c_str(), 65534, 65534) == 0) {
        cfg.cache.perf_map = true;
        cfg.cache.dump_dir.clear();
        engine().configure(cfg);
        RandomSubtable c(g, 5, 2, 3);
        ASSERT_NE(engine().compile_now(c.subtable, std::nullopt), nullptr);
        EXPECT_EQ(read(map), "theirs\n");
        EXPECT_EQ(engine().stats().cache.file_errors, 3u);
    } else {
        std::printf("not checked: a perf map of another user (needs root to plant one)\n");
    }
    std::remove(map.c_str());
    for (const char* name : {"victim", "dpcls_jit_u7_u2_1.bin", "dpcls_jit_u6_u2_2.bin"}) {
        std::remove((d + "/" + name).c_str());
    }
    rmdir(dir);
}

// Every fingerprint up to the generator's limit compiles, with the longest
// code (a fast path that has every block), within its reservation; the
// code bytes per block count are printed for the record.
TEST_F(JitCodeTest, EveryShapeUpTo32BlocksCompilesWithinItsReservation) {
    jit::JitConfig cfg = engine().config();
    cfg.cache.compiles_per_sec = 1000000;
    engine().configure(cfg);
    Gen g(77);
    const jit::CacheStats before = engine().stats().cache;
    size_t max_bytes[jit::kMaxBlocks + 1] = {};
    for (uint32_t u0 = 0; u0 <= jit::kMaxBlocks; u0++) {
        for (uint32_t u1 = 0; u1 <= kUnit1Bits && u0 + u1 <= jit::kMaxBlocks; u1++) {
            FlowKey mask = g.mask(u0, u1);
            dpcls_subtable* subtable = ovsb_subtable_create(ovs(&mask));
            ASSERT_NE(engine().compile_now(subtable, mask.map), nullptr) << u0 << "," << u1;
            const jit::CompiledLookup& lookup = *engine().compiled_for(subtable);
            EXPECT_LE(lookup.code_bytes, jit::LookupGenerator::reserved_bytes(lookup.shape));
            max_bytes[u0 + u1] = std::max(max_bytes[u0 + u1], lookup.code_bytes);
            engine().release(subtable, nullptr);
            ovsb_subtable_destroy_deferred(subtable, nullptr, nullptr);
        }
    }
    for (uint32_t n : {1u, 4u, 5u, 8u, 16u, 32u}) {
        std::printf("blocks %2u: at most %zu code bytes\n", n, max_bytes[n]);
    }
    const jit::CacheStats after = engine().stats().cache;
    const uint64_t compiles = after.compiles - before.compiles;
    ASSERT_GT(compiles, 0u);
    std::printf("%llu compiles, mean %.1f us (a timing, for the record only)\n",
                (unsigned long long)compiles,
                (after.compile_ns_total - before.compile_ns_total) / 1e3 / compiles);
}

// A value that cannot be parsed turns the JIT off (fail closed) and is
// reported with its key; the other settings keep their defaults.
// A code budget beyond what the process can map (a code page may be a
// mapping of its own; vm.max_map_count bounds them) is clamped, and said.
TEST_F(JitTest, CodeBudgetIsClampedToWhatTheProcessCanMap) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    EXPECT_EQ(jit::code_budget_ceiling(65530), 65530 / 4 * page);
    jit::JitConfig cfg = engine().config();
    cfg.cache.code_budget_bytes = jit::kMaxCodeBudget;  // 1 TiB, which apply() accepts
    engine().configure(cfg);
    EXPECT_EQ(engine().config().cache.code_budget_bytes, jit::code_budget_ceiling());
    EXPECT_LT(engine().config().cache.code_budget_bytes, jit::kMaxCodeBudget);
    EXPECT_TRUE(std::any_of(log().begin(), log().end(), [](const std::string& line) {
        return line.find("clamped to") != std::string::npos;
    }));
    const uint64_t fits = 16 * page;
    cfg.cache.code_budget_bytes = fits;
    log().clear();
    engine().configure(cfg);
    EXPECT_EQ(engine().config().cache.code_budget_bytes, fits);
    EXPECT_TRUE(log().empty());
}

TEST_F(JitTest, BadEnvironmentValuesTurnTheJitOff) {
    setenv("OVSCLS_JIT_HOT_HITS", "lots", 1);
    setenv("OVSCLS_JIT_CODE_BUDGET", "-5", 1);
    setenv("OVSCLS_JIT", "2", 1);
    std::string errors;
    const jit::JitConfig c = jit::JitConfig::from_env(&errors);
    unsetenv("OVSCLS_JIT_HOT_HITS");
    unsetenv("OVSCLS_JIT_CODE_BUDGET");
    unsetenv("OVSCLS_JIT");
    EXPECT_EQ(c.hot_hits, jit::JitConfig{}.hot_hits);
    EXPECT_EQ(c.cache.code_budget_bytes, jit::JitConfig{}.cache.code_budget_bytes);
    EXPECT_FALSE(c.enabled);
    EXPECT_NE(errors.find("OVSCLS_JIT_HOT_HITS=\"lots\" is not a number"), std::string::npos)
        << errors;
    EXPECT_NE(errors.find("OVSCLS_JIT_CODE_BUDGET=\"-5\""), std::string::npos) << errors;
    EXPECT_NE(errors.find("OVSCLS_JIT=\"2\" is not a switch"), std::string::npos) << errors;
    EXPECT_NE(errors.find("jit_avx2 is OFF"), std::string::npos) << errors;

    // A good OVSCLS_JIT=on does not override a bad limit.
    setenv("OVSCLS_JIT", "on", 1);
    setenv("OVSCLS_JIT_COMPILES_PER_SEC", "1e3", 1);
    errors.clear();
    EXPECT_FALSE(jit::JitConfig::from_env(&errors).enabled) << errors;
    unsetenv("OVSCLS_JIT");
    unsetenv("OVSCLS_JIT_COMPILES_PER_SEC");
}

// ovs-vswitchd's other_config, applied over the defaults: good values take
// effect, unknown keys are not the JIT's business, a bad value turns the
// JIT off and is named.
TEST_F(JitTest, OtherConfigAppliesLiveAndFailsClosed) {
    const char* keys[] = {"dpcls-jit-hot-hits", "dpcls-jit-code-budget",
                          "dpcls-jit-compiles-per-sec", "pmd-cpu-mask"};
    const char* good[] = {"10", "1048576", "50", "0x3"};
    EXPECT_EQ(engine().configure_from(keys, good, 4), "");
    jit::JitConfig c = engine().config();
    EXPECT_TRUE(c.enabled);
    EXPECT_EQ(c.hot_hits, 10u);
    EXPECT_EQ(c.cache.code_budget_bytes, 1048576u);
    EXPECT_EQ(c.cache.compiles_per_sec, 50u);

    const char* bad[] = {"10", "lots", "50", "0x3"};
    const std::string error = engine().configure_from(keys, bad, 4);
    EXPECT_NE(error.find("other_config:dpcls-jit-code-budget=\"lots\""), std::string::npos)
        << error;
    EXPECT_FALSE(engine().config().enabled);

    const char* off_keys[] = {"dpcls-jit"};
    const char* off[] = {"false"};
    EXPECT_EQ(engine().configure_from(off_keys, off, 1), "");
    EXPECT_FALSE(engine().config().enabled);
    EXPECT_EQ(engine().config().hot_hits, jit::JitConfig{}.hot_hits);  // back to the default
    EXPECT_EQ(engine().configure_from(nullptr, nullptr, 0), "");
    EXPECT_TRUE(engine().config().enabled);  // removed from other_config: the default
}

// Every other_config key, once removed, brings back its default: each is
// set to a value other than its default, then the keys are removed.
TEST_F(JitTest, EveryRemovedOtherConfigKeyBringsBackItsDefault) {
    const jit::JitConfig defaults;
    const char* keys[] = {"dpcls-jit", "dpcls-jit-hot-hits", "dpcls-jit-code-budget",
                          "dpcls-jit-compiles-per-sec", "dpcls-jit-fused-subtables"};
    const char* values[] = {"false", "7", "65536", "3", "2"};
    EXPECT_EQ(engine().configure_from(keys, values, 5), "");
    jit::JitConfig c = engine().config();
    EXPECT_FALSE(c.enabled);
    EXPECT_EQ(c.hot_hits, 7u);
    EXPECT_EQ(c.cache.code_budget_bytes, 65536u);
    EXPECT_EQ(c.cache.compiles_per_sec, 3u);
    EXPECT_EQ(c.fused_subtables, 2u);
    // While the JIT is off, jit-show does not promise fused lookups.
    const std::string shown = engine().info();
    EXPECT_EQ(shown.find("up to 2 subtables"), std::string::npos) << shown;
    EXPECT_NE(shown.find("jit_fused: off (jit_avx2 is off)"), std::string::npos) << shown;

    EXPECT_EQ(engine().configure_from(nullptr, nullptr, 0), "");
    c = engine().config();
    EXPECT_EQ(c.enabled, defaults.enabled);
    EXPECT_EQ(c.hot_hits, defaults.hot_hits);
    EXPECT_EQ(c.cache.code_budget_bytes, defaults.cache.code_budget_bytes);
    EXPECT_EQ(c.cache.compiles_per_sec, defaults.cache.compiles_per_sec);
    EXPECT_EQ(c.fused_subtables, defaults.fused_subtables);
}

// An operator turns the JIT off the way OVS's own boolean settings read.
TEST_F(JitTest, JitSwitchReadsOnOffWords) {
    for (const char* off : {"0", "off", "OFF", "false", "No"}) {
        setenv("OVSCLS_JIT", off, 1);
        std::string errors;
        EXPECT_FALSE(jit::JitConfig::from_env(&errors).enabled) << off;
        EXPECT_EQ(errors, "") << off;
    }
    for (const char* on : {"1", "on", "True", "yes"}) {
        setenv("OVSCLS_JIT", on, 1);
        std::string errors;
        EXPECT_TRUE(jit::JitConfig::from_env(&errors).enabled) << on;
        EXPECT_EQ(errors, "") << on;
    }
    unsetenv("OVSCLS_JIT");
}

}  // namespace

}  // namespace ovscls::test
