// The tail index (tail/tuple_pruning.hpp) against OVS's own dpcls_lookup()
// loop: a classifier whose tail is served by the index must answer every
// key exactly as the loop over the same ranking, with OVS's generic lookup
// in each subtable, would: the same rule (rules overlap across subtables,
// so the rank order decides), the same "lookups per hit" numerator, the
// same hit counts; through inserts, removals and rankings; for keys that
// lack words of the masks.  Each test also says how many keys the index
// served, so that a pass cannot come from the loop alone.
#include <gtest/gtest.h>

#include <bit>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "classifier/classifier.hpp"
#include "classifier/miniflow.hpp"
#include "generators.hpp"
#include "guarded_keys.hpp"
#include "ovs_loop.hpp"
#include "reference/ovs_reference.h"
#include "standalone/builtin_lookups.hpp"
#include "tail/tuple_pruning.hpp"

namespace ovscls::test {
namespace {

// A 32-bit prefix of `len` bits (network order) as the low half of a word.
uint64_t prefix32(unsigned len) {
    const uint32_t be = len ? ~uint32_t{0} << (32 - len) : 0;
    return __builtin_bswap32(be);
}
uint64_t prefix16(unsigned len) {
    const uint16_t be = static_cast<uint16_t>(len ? 0xffffu << (16 - len) : 0);
    return __builtin_bswap16(be);
}
uint64_t ip_word(uint32_t src, uint32_t dst) {  // nw_src, nw_dst as struct flow holds them
    return uint64_t{__builtin_bswap32(src)} | uint64_t{__builtin_bswap32(dst)} << 32;
}

struct Fixture {
    LookupRegistry registry;
    tail::TuplePruningIndex* index;  // owned by cls
    std::unique_ptr<Classifier> cls;
    GuardedKeys<kMaxBurst> guarded;
    uint64_t keys_checked = 0;

    explicit Fixture(tail::TuplePruningConfig config) {
        add_builtin_lookups(registry);
        auto owned = std::make_unique<tail::TuplePruningIndex>(config);
        index = owned.get();
        cls = std::make_unique<Classifier>(registry, nullptr, std::move(owned));
    }
    tail::TuplePruningStats stats() const {
        return cls->with_writer_lock([&] { return index->stats(); });
    }

    // Looks up `keys` (placed against a guard page) in the classifier and in
    // OVS's loop over the same ranking; asserts they agree.
    void check(const std::vector<FlowKey>& batch, const char* what) {
        const auto ranked = cls->subtables();
        const uint32_t cnt = static_cast<uint32_t>(batch.size());
        const netdev_flow_key* keys[kMaxBurst];
        for (uint32_t i = 0; i < cnt; i++) {
            keys[i] = guarded.place(i, batch[i]);
        }
        expect_as_ovs_loop(*cls, ranked, keys, cnt, what);
        if (::testing::Test::HasFatalFailure()) return;
        keys_checked += cnt;
        ovsb_rcu_quiesce();
    }
};

// The Tuple Space Explosion of perf/p2p's scenario (e), in the classifier:
// attack subtable m masks nw_src /i+1, nw_dst /j+1, tp_src /k+1 and holds
// the one rule an attack frame of those bits makes; legitimate subtables
// in front (ranked first by their hits), and keys of both kinds, of near
// misses and of other maps.
TEST(TailIndex, MaskFloodAnswersAsOvsLoop) {
    Fixture f({.head = 4, .min_tail = 16});
    // Words: 0 = in_port-like exact word, 1 = nw_src|nw_dst, 2 = tp_src|tp_dst,
    // 3 = proto-like exact word (any four words of struct flow will do).
    const uint64_t map[2] = {
        (uint64_t{1} << 3) | (uint64_t{1} << 20) | (uint64_t{1} << 21) | (uint64_t{1} << 30), 0};
    const uint32_t src = 0x0A000001, dst = 0x0A000002;
    const uint16_t sport = 1000;
    auto flow_of = [&](uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, uint64_t proto) {
        FullFlow fl{};
        fl[3] = 1;
        fl[20] = ip_word(s, d);
        fl[21] = uint64_t{__builtin_bswap16(sp)} | uint64_t{__builtin_bswap16(dp)} << 16;
        fl[30] = proto;
        return fl;
    };
    // Legitimate: a /24 route and a 5-tuple, proto 17.
    std::vector<FullFlow> legit;
    f.cls->insert(mask_of(map, {~0ull, prefix32(0) | prefix32(24) << 32, 0xffff0000ull, 0xff}),
                  flow_of(0, 0x10000300, 0, 5000, 17).data());
    for (int i = 0; i < 8; i++) {
        const FullFlow fl = flow_of(0x0A000100 + i, 0x10000301, 2000 + i, 5000, 17);
        legit.push_back(fl);
        f.cls->insert(mask_of(map, {~0ull, ~0ull, prefix16(16) | prefix16(16) << 16, 0xff}),
                      fl.data());
    }
    // The flood: 1500 masks, proto 6.
    std::vector<FullFlow> attack;
    for (int m = 0; m < 1500; m++) {
        const unsigned i = m % 32, j = (m / 32) % 32, k = (m / 1024) % 16;
        const FullFlow fl = flow_of(src ^ (0x80000000u >> i), dst ^ (0x80000000u >> j),
                                    static_cast<uint16_t>(sport ^ (0x8000u >> k)), 4000, 6);
        attack.push_back(fl);
        const uint64_t ip_mask = prefix32(i + 1) | prefix32(j + 1) << 32;
        ASSERT_TRUE(
            f.cls->insert(mask_of(map, {~0ull, ip_mask, prefix16(k + 1), 0xff}), fl.data()));
    }
    // Rank the legitimate subtables first, as their traffic would.
    for (int round = 0; round < 3; round++) {
        for (const FullFlow& fl : legit) {
            std::vector<FlowKey> batch(kMaxBurst, make_key({{map[0], map[1]}}, fl.data()));
            f.check(batch, "legitimate warm-up");
            if (::testing::Test::HasFatalFailure()) return;
        }
        f.cls->sort_subtables();
    }
    Gen g(27);
    for (int b = 0; b < 300; b++) {
        std::vector<FlowKey> batch;
        const uint32_t cnt = 1 + g.below(kMaxBurst);
        for (uint32_t n = 0; n < cnt; n++) {
            FullFlow fl;
            switch (g.below(5)) {
                case 0:
                    fl = legit[g.below(legit.size())];
                    break;
                case 1:
                    fl = attack[g.below(attack.size())];  // its own subtable
                    break;
                case 2:  // an attack frame with its bits moved: near misses
                    fl = attack[g.below(attack.size())];
                    fl[20] ^= uint64_t{1} << g.below(64);
                    break;
                case 3:  // legitimate traffic of other flows
                    fl = flow_of(static_cast<uint32_t>(g.u64()), 0x10000300 | g.below(256),
                                 static_cast<uint16_t>(g.u64()), 5000, 17);
                    break;
                default:
                    fl = flow_of(static_cast<uint32_t>(g.u64()), static_cast<uint32_t>(g.u64()),
                                 static_cast<uint16_t>(g.u64()), 4000, 6);
            }
            uint64_t kmap[2] = {map[0], map[1]};
            if (g.chance(10)) kmap[0] &= ~(uint64_t{1} << 21);  // a key without L4 ports
            if (g.chance(5)) kmap[0] |= uint64_t{1} << g.below(64);
            batch.push_back(make_key({{kmap[0], kmap[1]}}, fl.data()));
        }
        f.check(batch, "flood");
        if (::testing::Test::HasFatalFailure()) return;
        if (b % 50 == 49) f.cls->sort_subtables();
    }
    const tail::TuplePruningStats st = f.stats();
    std::printf(
        "mask flood: %llu keys checked; index: %zu families, %zu subtables indexed, %zu not, "
        "%zu lane nodes, %zu bytes; %llu keys served with %llu probes (%.2f a key), %llu by "
        "the loop\n",
        (unsigned long long)f.keys_checked, st.families, st.subtables, st.unindexed, st.lane_nodes,
        st.bytes, (unsigned long long)st.keys, (unsigned long long)st.probes,
        st.keys ? double(st.probes) / double(st.keys) : 0.0, (unsigned long long)st.loops);
    EXPECT_EQ(st.unindexed, 0u);
    EXPECT_GE(st.subtables, 1500u);
    EXPECT_GT(st.keys, 1000u) << "the index must have served keys";
    // Flat: far fewer probes a key than the ~1500 subtables of the tail.
    EXPECT_LT(double(st.probes) / double(st.keys), 8.0);
    EXPECT_EQ(st.loops, 0u);
}

// Random masks (prefixes, 16- and 32-bit fields, random bits: non-prefix
// lanes), a few maps, rules that overlap across subtables, keys that lack
// words; inserts, removals and rankings between the checks.
TEST(TailIndex, RandomTablesAnswerAsOvsLoopThroughChurn) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        Fixture f({.head = 2, .min_tail = 4, .max_candidates = seed == 6 ? size_t{2} : size_t{64}});
        Gen g(seed * 101);
        // Two maps; masks on them; bases shared by many subtables (overlaps).
        std::vector<std::array<uint64_t, 2>> maps = {{g.bits(6, 64), g.bits(1, kUnit1Bits)},
                                                     {g.bits(4, 64), 0}};
        std::vector<FullFlow> bases;
        for (int i = 0; i < 24; i++) bases.push_back(g.flow());
        std::vector<dpcls_rule*> rules;
        auto add_subtable = [&] {
            const auto& m = maps[g.below(2)];
            std::vector<uint64_t> values(std::popcount(m[0]) + std::popcount(m[1]));
            for (auto& v : values) {
                switch (g.below(4)) {
                    case 0:
                        v = ~0ull;
                        break;
                    case 1:
                        v = prefix32(1 + g.below(32)) | prefix32(g.below(33)) << 32;
                        break;
                    case 2:
                        v = g.mask_value();
                        break;
                    default:
                        v = prefix16(1 + g.below(16)) << (16 * g.below(4));
                }
                if (!v) v = 1;
            }
            const uint64_t mm[2] = {m[0], m[1]};
            const FlowKey mask = mask_of(mm, values);
            for (int r = 0; r < 1 + static_cast<int>(g.below(4)); r++) {
                dpcls_rule* rule = nullptr;
                if (f.cls->insert(mask, bases[g.below(bases.size())].data(), &rule)) {
                    rules.push_back(rule);
                }
            }
        };
        auto batch_of = [&] {
            std::vector<FlowKey> batch;
            const uint32_t cnt = 1 + g.below(kMaxBurst);
            for (uint32_t n = 0; n < cnt; n++) {
                FullFlow fl = bases[g.below(bases.size())];
                if (g.chance(30)) fl[g.below(kFlowU64s)] ^= uint64_t{1} << g.below(64);
                const auto& m = maps[g.below(2)];
                uint64_t kmap[2] = {m[0] | g.bits(3, 64), m[1]};
                if (g.chance(20)) kmap[0] &= ~(kmap[0] & -kmap[0]);  // lacks a word
                batch.push_back(make_key({{kmap[0], kmap[1]}}, fl.data()));
            }
            return batch;
        };
        for (int phase = 0; phase < 8; phase++) {
            for (int n = 0; n < 40; n++) add_subtable();
            for (int b = 0; b < 60; b++) {
                f.check(batch_of(), "random tables");
                if (::testing::Test::HasFatalFailure()) return;
            }
            f.cls->sort_subtables();
            // Remove a third of the rules (subtables empty out and go).
            for (size_t i = 0; i < rules.size();) {
                if (g.chance(33)) {
                    ASSERT_TRUE(f.cls->remove(rules[i]));
                    rules[i] = rules.back();
                    rules.pop_back();
                } else {
                    i++;
                }
            }
            ovsb_rcu_quiesce();
            for (int b = 0; b < 60; b++) {
                f.check(batch_of(), "after removals");
                if (::testing::Test::HasFatalFailure()) return;
            }
        }
        const tail::TuplePruningStats st = f.stats();
        std::printf(
            "seed %llu: %llu keys checked, %zu subtables in %zu families (%zu not indexed), "
            "%llu rebuilds; index served %llu keys, %llu probes, %llu by the loop\n",
            (unsigned long long)seed, (unsigned long long)f.keys_checked, st.subtables, st.families,
            st.unindexed, (unsigned long long)st.rebuilds, (unsigned long long)st.keys,
            (unsigned long long)st.probes, (unsigned long long)st.loops);
        EXPECT_GT(st.keys, 0u) << "the index must have served keys";
        if (seed == 6) {
            EXPECT_GT(st.loops, 0u) << "max_candidates 2 must send some keys to the loop";
        }
    }
}

// Below head + min_tail subtables the index serves nothing: the loop does
// all, as without it.  Subtable /L holds 10.0.0.0 with bit L-1 flipped
// (under /L): a key of it matches it alone, so keys of /5../12 pass the
// head (the first 4 in rank order) and reach the tail.
TEST(TailIndex, ShortRankingIsLeftToTheLoop) {
    Fixture f({.head = 4, .min_tail = 8});
    const uint64_t map[2] = {uint64_t{1} << 20, 0};
    std::vector<FlowKey> batch;
    auto add = [&](unsigned len) {
        FullFlow fl{};
        fl[20] = ip_word(0x0A000000 ^ (0x80000000u >> (len - 1)), 0);
        batch.push_back(make_key({{map[0], map[1]}}, fl.data()));
        return f.cls->insert(mask_of(map, {prefix32(len)}), fl.data()).ok();
    };
    for (unsigned len = 1; len <= 11; len++) {  // 11 subtables < 4 + 8
        ASSERT_TRUE(add(len));
    }
    f.check(batch, "short ranking");
    EXPECT_EQ(f.stats().keys, 0u);
    ASSERT_TRUE(add(12));  // 12 = 4 + 8
    f.check(batch, "ranking long enough");
    EXPECT_EQ(f.stats().keys, 8u) << "the keys of /5../12";
}

// The limits: a lane with more than 64 non-prefix masks leaves its family
// unindexed; a full index (max_bytes) leaves new subtables unindexed.
// Both are probed one by one, and the answers stay exact.
TEST(TailIndex, LimitsLeaveSubtablesToProbingOneByOne) {
    for (const bool odd_masks : {true, false}) {
        Fixture f({.head = 1, .min_tail = 4, .max_bytes = odd_masks ? size_t{64} << 20 : 4096});
        const uint64_t map[2] = {(uint64_t{1} << 20) | (uint64_t{1} << 40), 0};
        Gen g(odd_masks ? 7 : 8);
        std::vector<FullFlow> flows;
        for (int n = 0; n < 80; n++) {
            FullFlow fl{};
            fl[20] = g.u64();
            fl[40] = g.u64();
            flows.push_back(fl);
            // Word 40: random bits (no lane a prefix), or prefixes of both halves.
            const uint64_t second =
                odd_masks ? g.u64() | 1 : prefix32(n % 32) << 32 | prefix32(n / 32 + 1);
            ASSERT_TRUE(f.cls->insert(mask_of(map, {prefix32(8 + n % 24), second}), fl.data()));
        }
        for (int b = 0; b < 50; b++) {
            std::vector<FlowKey> batch;
            for (int n = 0; n < 16; n++) {
                FullFlow fl = flows[g.below(flows.size())];
                if (g.chance(30)) fl[40] ^= g.u64();
                batch.push_back(make_key({{map[0], map[1]}}, fl.data()));
            }
            f.check(batch, odd_masks ? "64 odd masks" : "max_bytes");
            if (::testing::Test::HasFatalFailure()) return;
        }
        const tail::TuplePruningStats st = f.stats();
        std::printf("%s: %zu indexed, %zu not, %zu bytes; %llu keys served, %llu probes\n",
                    odd_masks ? "more than 64 odd masks in a lane" : "max_bytes 4096", st.subtables,
                    st.unindexed, st.bytes, (unsigned long long)st.keys,
                    (unsigned long long)st.probes);
        EXPECT_GT(st.unindexed, 0u);
        EXPECT_GT(st.keys, 0u);
        if (odd_masks) {
            EXPECT_EQ(st.subtables, 0u);
        } else {
            EXPECT_GT(st.subtables, 0u);
        }
    }
}

}  // namespace
}  // namespace ovscls::test
