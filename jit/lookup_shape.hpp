// lookup_shape.hpp: everything the JIT specializes a subtable lookup on, and
// nothing else.
//
// A shape is the subtable's mask map (which flow words the subtable matches)
// plus, optionally, the packet map the fast path expects (the map most of
// the subtable's packets carry).  Two subtables of the same shape get the
// same machine code: the mask *values* are read from the subtable the code
// is called with, so all 13 nw_dst prefix subtables of a port (same map,
// different prefix lengths) share one function.  That sharing is what keeps
// a flood of new masks (Tuple Space Explosion) from becoming a flood of
// compiles.
//
// For each mask block the shape derives where the value sits in a packet
// key: on the slow path from the packet's own map (a popcount under the
// block's bit), on the fast path from the expected map, as a constant.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "classifier/layout.hpp"

namespace ovscls::jit {

// Largest subtable the generator emits code for (blocks = u0 + u1).  Larger
// fingerprints are declined: their scratch would not fit the stack frame the
// generated code reserves, and nothing seen in practice comes close.
inline constexpr uint32_t kMaxBlocks = 32;

struct LookupShape {
    MiniflowMap mask_map{};
    std::optional<MiniflowMap> expected_map;  // packets' usual map: the fast path

    uint32_t u0() const { return std::popcount(mask_map.bits[0]); }
    uint32_t u1() const { return std::popcount(mask_map.bits[1]); }
    uint32_t blocks() const { return u0() + u1(); }

    // Block b as the code addresses it.
    struct Block {
        uint32_t unit;  // 0 or 1: which map word the bit is in
        uint32_t bit;   // bit position in that unit
        // Fast path: index of the block's value in a key with the expected
        // map, or -1 when such a key lacks the word (the block is then 0).
        int32_t expected_index;
    };
    Block block(uint32_t b) const {
        Block out{};
        out.unit = b < u0() ? 0 : 1;
        const uint32_t k = out.unit == 0 ? b : b - u0();
        uint64_t bits = mask_map.bits[out.unit];
        for (uint32_t j = 0; j < k; j++) {  // drop the k lowest bits
            bits &= bits - 1;
        }
        out.bit = std::countr_zero(bits);
        out.expected_index = -1;
        if (expected_map) {
            const uint64_t e0 = expected_map->bits[0], e = expected_map->bits[out.unit];
            if ((e >> out.bit) & 1) {
                const uint64_t below = e & ((uint64_t{1} << out.bit) - 1);
                out.expected_index = std::popcount(below) + (out.unit == 1 ? std::popcount(e0) : 0);
            }
        }
        return out;
    }

    // "u4_u1" style name for symbols and logs.
    std::string fingerprint() const {
        // Appended piecewise: GCC 12's -O3 warns falsely (-Wrestrict) on
        // "literal" + std::string temporaries.
        std::string out = "u";
        out += std::to_string(u0());
        out += "_u";
        out += std::to_string(u1());
        return out;
    }

    friend bool operator==(const LookupShape& a, const LookupShape& b) {
        auto same = [](const MiniflowMap& x, const MiniflowMap& y) {
            return x.bits[0] == y.bits[0] && x.bits[1] == y.bits[1];
        };
        if (!same(a.mask_map, b.mask_map) ||
            a.expected_map.has_value() != b.expected_map.has_value()) {
            return false;
        }
        return !a.expected_map || same(*a.expected_map, *b.expected_map);
    }
};

struct LookupShapeHash {
    size_t operator()(const LookupShape& s) const {
        uint64_t h = s.mask_map.bits[0] * 0x9e3779b97f4a7c15u ^ s.mask_map.bits[1];
        if (s.expected_map) {
            h = (h * 0x9e3779b97f4a7c15u) ^ s.expected_map->bits[0];
            h = (h * 0x9e3779b97f4a7c15u) ^ s.expected_map->bits[1] ^ 1;
        }
        return std::hash<uint64_t>{}(h);
    }
};

}  // namespace ovscls::jit
