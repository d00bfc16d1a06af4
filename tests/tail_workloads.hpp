// tail_workloads.hpp: the tables and traffic the tail index is checked on,
// shared by tests/tail_index_test.cpp (gtest, a few seeds) and
// tests/tail_soak.cpp (volume, any seed).  Each workload builds tables in a
// classifier whose tail the index serves, and hands bursts of keys to
// `check(batch, what)`, which compares the classifier with OVS's loop and
// returns false to stop.  A workload returns false if it was stopped or a
// table could not be built.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "classifier/classifier.hpp"
#include "classifier/miniflow.hpp"
#include "generators.hpp"

namespace ovscls::test {

// A 32-bit prefix of `len` bits (network order) as the low half of a word.
inline uint64_t prefix32(unsigned len) {
    const uint32_t be = len ? ~uint32_t{0} << (32 - len) : 0;
    return __builtin_bswap32(be);
}
inline uint64_t prefix16(unsigned len) {
    const uint16_t be = static_cast<uint16_t>(len ? 0xffffu << (16 - len) : 0);
    return __builtin_bswap16(be);
}
// nw_src, nw_dst as struct flow holds them.
inline uint64_t ip_word(uint32_t src, uint32_t dst) {
    return uint64_t{__builtin_bswap32(src)} | uint64_t{__builtin_bswap32(dst)} << 32;
}

// The Tuple Space Explosion of perf/p2p's scenario (e), in the classifier:
// attack subtable m masks nw_src /i+1, nw_dst /j+1, tp_src /k+1 and holds
// the one rule an attack frame of those bits makes; legitimate subtables
// in front (ranked first by their hits), then `bursts` bursts of keys of
// both kinds, of near misses and of other maps, with a ranking every 50.
template <class Check>
bool mask_flood_workload(Classifier& cls, Gen& g, int masks, int bursts, Check&& check) {
    // Words: 3 = in_port-like exact word, 20 = nw_src|nw_dst, 21 =
    // tp_src|tp_dst, 30 = proto-like exact word (any four words will do).
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
    cls.insert(mask_of(map, {~0ull, prefix32(0) | prefix32(24) << 32, 0xffff0000ull, 0xff}),
               flow_of(0, 0x10000300, 0, 5000, 17).data());
    for (int i = 0; i < 8; i++) {
        const FullFlow fl = flow_of(0x0A000100 + i, 0x10000301, 2000 + i, 5000, 17);
        legit.push_back(fl);
        cls.insert(mask_of(map, {~0ull, ~0ull, prefix16(16) | prefix16(16) << 16, 0xff}),
                   fl.data());
    }
    // The flood, proto 6; the order of its masks differs from seed to seed.
    std::vector<FullFlow> attack;
    const int first = static_cast<int>(g.below(16384));
    for (int n = 0; n < masks; n++) {
        const int m = (first + n) % 16384;
        const unsigned i = m % 32, j = (m / 32) % 32, k = (m / 1024) % 16;
        const FullFlow fl = flow_of(src ^ (0x80000000u >> i), dst ^ (0x80000000u >> j),
                                    static_cast<uint16_t>(sport ^ (0x8000u >> k)), 4000, 6);
        attack.push_back(fl);
        const uint64_t ip_mask = prefix32(i + 1) | prefix32(j + 1) << 32;
        if (!cls.insert(mask_of(map, {~0ull, ip_mask, prefix16(k + 1), 0xff}), fl.data())) {
            return false;
        }
    }
    // Rank the legitimate subtables first, as their traffic would.
    for (int round = 0; round < 3; round++) {
        for (const FullFlow& fl : legit) {
            std::vector<FlowKey> batch(kMaxBurst, make_key({{map[0], map[1]}}, fl.data()));
            if (!check(batch, "legitimate warm-up")) return false;
        }
        cls.sort_subtables();
    }
    for (int b = 0; b < bursts; b++) {
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
        if (!check(batch, "flood")) return false;
        if (b % 50 == 49) cls.sort_subtables();
    }
    return true;
}

// Removes about `percent`% of `rules` (each with that chance) from `cls`
// and from the list; false if a removal fails.
inline bool remove_some(Classifier& cls, Gen& g, std::vector<dpcls_rule*>& rules,
                        uint32_t percent) {
    for (size_t i = 0; i < rules.size();) {
        if (g.chance(percent)) {
            if (!cls.remove(rules[i])) return false;
            rules[i] = rules.back();
            rules.pop_back();
        } else {
            i++;
        }
    }
    return true;
}

// Random masks (prefixes, 16- and 32-bit fields, random bits: non-prefix
// lanes) on two maps, rules that overlap across subtables, keys that lack
// words; `phases` rounds of: 40 new subtables, 60 bursts, a ranking, a
// third of the rules removed (subtables empty out and go), 60 bursts.
template <class Check>
bool random_tables_workload(Classifier& cls, Gen& g, int phases, Check&& check) {
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
            if (cls.insert(mask, bases[g.below(bases.size())].data(), &rule)) {
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
    for (int phase = 0; phase < phases; phase++) {
        for (int n = 0; n < 40; n++) add_subtable();
        for (int b = 0; b < 60; b++) {
            if (!check(batch_of(), "random tables")) return false;
        }
        cls.sort_subtables();
        if (!remove_some(cls, g, rules, 33)) return false;
        ovsb_rcu_quiesce();
        for (int b = 0; b < 60; b++) {
            if (!check(batch_of(), "after removals")) return false;
        }
    }
    return true;
}

// Word `word` of struct flow in `key` (0 when its map lacks it).
inline uint64_t key_word_of(const FlowKey& key, unsigned word) {
    const unsigned unit = word / 64, bit = word % 64;
    if (!(key.map.bits[unit] >> bit & 1)) return 0;
    const uint64_t below = (uint64_t{1} << bit) - 1;
    return key.values[unit ? std::popcount(key.map.bits[0]) + std::popcount(key.map.bits[1] & below)
                           : std::popcount(key.map.bits[0] & below)];
}

// A Tuple Space Explosion of a random shape (perf/tse's axes, in the
// classifier's words): fields among a 128-bit address over words 22-23 (a
// short prefix leaves word 23 out of the map), nw_src and nw_dst (word 20)
// and the two ports (word 21), each mask varying a random subset of them;
// prefix lengths or non-prefix bit patterns; 1-6 megaflows a mask (ACL
// rules with their own base values); legitimate subtables on the same
// fields or on another map (word 25); the attack's frames on the masks
// evenly or mostly on the first 16 (the head); churn (rules removed) and
// rankings between the bursts; keys of attack frames, near misses,
// legitimate flows, random flows and keys lacking words.
template <class Check>
bool tse_shapes_workload(Classifier& cls, Gen& g, int bursts, Check&& check) {
    constexpr int kAddr = 0, kSrc = 1, kDst = 2;  // 3: the ports
    const bool arbitrary = g.chance(25), early = g.chance(50);
    const int masks = 16 + static_cast<int>(g.below(400)),
              per_mask = 1 + static_cast<int>(g.below(6));
    unsigned fields = 1 + g.below(15);  // which of the four vary, as bits
    auto prefix64 = [](unsigned len) {
        return len ? __builtin_bswap64(~0ull << (64 - len)) : 0ull;
    };
    // A field's mask of `len` bits (prefix) or a pattern, as its words.
    auto field_mask = [&](int f, unsigned len, uint64_t pattern, uint64_t out[4]) {
        switch (f) {
            case kAddr:
                out[2] = arbitrary ? pattern : prefix64(std::min(len, 64u));
                out[3] = arbitrary ? (pattern >> 7) : prefix64(len > 64 ? len - 64 : 0);
                break;
            case kSrc:
                out[0] |= arbitrary ? pattern & 0xffffffffull : prefix32(len);
                break;
            case kDst:
                out[0] |= arbitrary ? pattern << 32 : prefix32(len) << 32;
                break;
            default:
                out[1] |= arbitrary ? pattern & 0xffffffffull : prefix16(len) | prefix16(len) << 16;
        }
    };
    const unsigned widths[4] = {128, 32, 32, 16};
    // The flow of a rule: base value of ACL rule r, with the mask's last
    // masked bit flipped (as an attack megaflow holds), over words 20-23.
    std::vector<FullFlow> bases(per_mask);
    for (auto& b : bases) {
        b = FullFlow{};
        b[3] = 1;
        b[20] = g.u64();
        b[21] = g.u64();
        b[22] = g.u64();
        b[23] = g.u64();
        b[30] = 6;
    }
    const uint64_t meta = (uint64_t{1} << 3) | (uint64_t{1} << 30);
    std::vector<std::pair<FlowKey, FullFlow>> attack;  // a mask and one of its rules
    std::vector<dpcls_rule*> rules;
    for (int m = 0; m < masks; m++) {
        uint64_t w[4] = {0, 0, 0, 0};
        unsigned varied = fields & (1 + g.below(15));  // this mask's subset of the fields
        if (!varied) varied = fields;
        for (int f = 0; f < 4; f++) {
            if (varied >> f & 1) {
                field_mask(f, 1 + g.below(widths[f]), g.u64() | 1, w);
            }
        }
        if (!(w[0] | w[1] | w[2] | w[3])) w[0] = prefix32(1);
        // The map: the metadata words and the words the mask does not leave zero.
        uint64_t map[2] = {meta, 0};
        std::vector<uint64_t> values;
        for (int b = 0; b < 4; b++) {
            if (w[b]) map[0] |= uint64_t{1} << (20 + b);
        }
        for (int word = 0; word < 64; word++) {
            if (!(map[0] >> word & 1)) continue;
            values.push_back(word >= 20 && word <= 23 ? w[word - 20] : ~0ull);
        }
        const FlowKey mask = mask_of(map, values);
        for (int r = 0; r < per_mask; r++) {
            FullFlow fl = bases[r];
            for (int b = 0; b < 4; b++) {
                const uint64_t lowest = w[b] & -w[b];
                fl[20 + b] ^= lowest;  // the bit that makes this megaflow
            }
            dpcls_rule* rule = nullptr;
            if (cls.insert(mask, fl.data(), &rule)) {
                rules.push_back(rule);
                attack.emplace_back(mask, fl);
            }
        }
    }
    // Legitimate: proto 17 over the same words (exact), and on word 25.
    std::vector<FullFlow> legit;
    const uint64_t same_map[2] = {meta | (0xfull << 20), 0};
    const uint64_t other_map[2] = {meta | (uint64_t{1} << 25), 0};
    for (int i = 0; i < 6; i++) {
        FullFlow fl{};
        fl[3] = 1;
        fl[30] = 17;
        for (int b = 20; b <= 23; b++) fl[b] = g.u64();
        fl[25] = g.u64();
        legit.push_back(fl);
        if (i % 2) {
            cls.insert(mask_of(same_map, {~0ull, ~0ull, ~0ull, ~0ull, prefix64(8 * i), ~0ull}),
                       fl.data());
        } else {
            cls.insert(mask_of(other_map, {~0ull, prefix64(16 + i), ~0ull}), fl.data());
        }
    }
    auto key_of = [&](const FullFlow& fl) {
        uint64_t kmap[2] = {meta | (0x2full << 20), 0};                    // words 20-23 and 25
        if (g.chance(10)) kmap[0] &= ~(uint64_t{1} << (20 + g.below(4)));  // lacks a word
        return make_key({{kmap[0], kmap[1]}}, fl.data());
    };
    for (int b = 0; b < bursts; b++) {
        std::vector<FlowKey> batch;
        const uint32_t cnt = 1 + g.below(kMaxBurst);
        for (uint32_t n = 0; n < cnt; n++) {
            FullFlow fl;
            const uint32_t kind = g.below(10);
            if (kind < 4 && !attack.empty()) {  // an attack frame: its rule, anything elsewhere
                const size_t i = early && g.chance(90)
                                     ? g.below(std::min<size_t>(16, attack.size()))
                                     : g.below(attack.size());
                fl = attack[i].second;
                const FlowKey& mask = attack[i].first;
                for (int word = 20; word <= 23; word++) {
                    const uint64_t mw = key_word_of(mask, word);
                    fl[word] = (fl[word] & mw) | (g.u64() & ~mw);
                }
                if (kind == 3) fl[20 + g.below(4)] ^= uint64_t{1} << g.below(64);  // a near miss
            } else if (kind < 8) {
                fl = legit[g.below(legit.size())];
            } else {
                fl = FullFlow{};
                fl[3] = 1;
                fl[30] = g.chance(50) ? 6 : 17;
                for (int word = 20; word <= 25; word++) fl[word] = g.u64();
            }
            batch.push_back(key_of(fl));
        }
        if (!check(batch, "tse shape")) return false;
        if (b % 50 == 49) cls.sort_subtables();
        if (b == bursts / 2) {  // churn: a third of the attack's rules expire
            if (!remove_some(cls, g, rules, 33)) return false;
            ovsb_rcu_quiesce();
        }
    }
    return true;
}

}  // namespace ovscls::test
