// generators.hpp: random masks, rules and keys for the differential tests.
//
// Masks have an exact fingerprint (u0 blocks in unit 0, u1 in unit 1, at any
// of struct flow's words) and mask values like real ones: all ones, prefixes
// (IP prefixes), single fields inside a word, or random bits.  Keys are made
// to hit a rule, to miss, to lack some of the mask's words (absent = 0), and
// to carry words the mask does not match.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "classifier/layout.hpp"
#include "reference.hpp"

namespace ovscls::test {

// A mask over `map` with `values` in map order, built as
// dpif-netdev's netdev_flow_mask_init would (hash and len included).
inline FlowKey mask_of(const uint64_t map[2], const std::vector<uint64_t>& values) {
    FlowKey mask{};
    ovsb_mask_init_raw(ovs(&mask), map, values.data(), values.size());
    return mask;
}

// Draws from a seeded PRNG, or, for the fuzz targets, from the fuzzer's
// input bytes first (each decision takes the next bytes, so a mutated byte
// changes one decision) and from a PRNG seeded by those bytes once they run
// out (so that every loop below ends).
class Gen {
  public:
    explicit Gen(uint64_t seed) : rng_(seed) {}
    Gen(const uint8_t* data, size_t size) : rng_(fnv1a(data, size)), data_(data), left_(size) {}

    uint64_t u64() { return draw(8); }
    uint32_t below(uint32_t n) {
        return static_cast<uint32_t>(draw(n <= 256 ? 1 : n <= 65536 ? 2 : 4) % n);
    }
    bool chance(uint32_t percent) { return below(100) < percent; }

    // `count` distinct bits out of the low `width` bits.
    uint64_t bits(uint32_t count, uint32_t width) {
        uint64_t out = 0;
        while (static_cast<uint32_t>(std::popcount(out)) < count) {
            out |= uint64_t{1} << below(width);
        }
        return out;
    }

    // A mask value as real megaflows have them.
    uint64_t mask_value() {
        switch (below(5)) {
            case 0:
                return ~uint64_t{0};
            case 1:
                return ~uint64_t{0} << below(64);  // prefix
            case 2:
                return uint64_t{0xffff} << (16 * below(4));  // a 16-bit field
            case 3:
                return uint64_t{0xffffffff} << (32 * below(2));  // a 32-bit field
            default: {
                uint64_t v = u64() & u64();
                return v ? v : 1;
            }
        }
    }

    // A random mask with fingerprint (u0, u1), built as
    // dpif-netdev's netdev_flow_mask_init would (hash and len included).
    FlowKey mask(uint32_t u0, uint32_t u1) {
        const uint64_t map[2] = {bits(u0, 64), bits(u1, kUnit1Bits)};
        std::vector<uint64_t> values(u0 + u1);
        for (auto& v : values) {
            v = mask_value();
        }
        FlowKey mask{};
        ovsb_mask_init_raw(ovs(&mask), map, values.data(), values.size());
        return mask;
    }

    // A random full flow; with some probability words are zero, so that
    // rules with zero-valued blocks exist (keys lacking that word hit them).
    FullFlow flow() {
        FullFlow f{};
        for (auto& w : f) {
            w = chance(20) ? 0 : u64();
        }
        return f;
    }

    // A packet key over `flow` whose map is `mask`'s map, minus some words
    // (when `lack`) and plus some others (when `extra`).
    FlowKey key(const FullFlow& flow, const FlowKey& mask, bool lack, bool extra) {
        uint64_t map[2] = {mask.map.bits[0], mask.map.bits[1]};
        if (lack) {
            for (int unit = 0; unit < 2; unit++) {
                for (uint64_t b = map[unit]; b; b &= b - 1) {
                    if (chance(30)) {
                        map[unit] &= ~(b & -b);
                    }
                }
            }
        }
        if (extra) {
            map[0] |= bits(1 + below(8), 64);
            map[1] |= bits(below(4), kUnit1Bits);
        }
        // A packet key holds at most kMaxKeyValues words.
        while (std::popcount(map[0]) + std::popcount(map[1]) > static_cast<int>(kMaxKeyValues)) {
            map[0] &= map[0] - 1;
        }
        return make_key({{map[0], map[1]}}, flow.data());
    }

  private:
    // The next `bytes` input bytes (fewer at the end), else the PRNG's.
    uint64_t draw(size_t bytes) {
        if (left_ == 0) {
            return rng_();
        }
        uint64_t v = 0;
        for (size_t i = 0; i < bytes && left_ > 0; i++, left_--) {
            v = v << 8 | *data_++;
        }
        return v;
    }
    static uint64_t fnv1a(const uint8_t* data, size_t size) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < size; i++) {
            h = (h ^ data[i]) * 0x100000001b3ull;
        }
        return h;
    }

    std::mt19937_64 rng_;
    const uint8_t* data_ = nullptr;
    size_t left_ = 0;
};

}  // namespace ovscls::test
