// miniflow.hpp: converting between a miniflow (map + packed values) and the
// full struct flow it stands for (OVSCLS_FLOW_U64S words, absent words 0).
// For tests, tools and diagnostics; lookups never expand a key.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "classifier/layout.hpp"

namespace ovscls {

using FullFlow = std::array<uint64_t, kFlowU64s>;

// The words of a miniflow placed back at their struct flow positions.
inline FullFlow expand(const MiniflowMap& map, const uint64_t* values) {
    FullFlow flow{};
    size_t v = 0;
    for (int unit = 0; unit < 2; unit++) {
        for (uint64_t bits = map.bits[unit]; bits; bits &= bits - 1) {
            flow[unit * 64 + std::countr_zero(bits)] = values[v++];
        }
    }
    return flow;
}
inline FullFlow expand(const FlowKey& key) { return expand(key.map, key.values); }

// A packet key holding the words of `flow` that `map` names (hash 0, as a
// key before lookup).  The map must name at most kMaxKeyValues words.
inline FlowKey make_key(const MiniflowMap& map, const uint64_t* flow) {
    FlowKey key{};
    key.map = map;
    uint32_t n = 0;
    for (int unit = 0; unit < 2; unit++) {
        for (uint64_t bits = map.bits[unit]; bits; bits &= bits - 1) {
            key.values[n++] = flow[unit * 64 + std::countr_zero(bits)];
        }
    }
    key.len = static_cast<uint32_t>(sizeof(MiniflowMap) + n * sizeof(uint64_t));
    return key;
}

}  // namespace ovscls
