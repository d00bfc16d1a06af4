// lookup.hpp: the one subtable lookup algorithm, and the two ways of
// instantiating it (run-time block counts: `generic`; compile-time block
// counts: `specialized`).
//
// What a subtable lookup does
// ===========================
// A subtable holds rules that all match the same fields: its mask, a
// miniflow whose map says which 64-bit words ("blocks") of struct flow are
// matched.  A packet's key is also a miniflow, but with the packet's own map.
// The lookup turns each key into the subtable's shape, hashes it, and looks
// the hash up in the subtable's cmap of rules.
//
// Worked example: a subtable whose mask covers flow words 2 and 9 of unit 0
// (u0 = 2 blocks) and word 66 (= bit 2 of unit 1, u1 = 1 block):
//
//     mask map  unit0 = ...1000000100    unit1 = ...100
//     mf_masks  = { 0b11, 0b111111111, 0b11 }      (bits below each block)
//     mask      = { m2, m9, m66 }
//
// A packet key with map unit0 = ...1000000110 (words 1, 2, 9), unit1 = 0 and
// values { k1, k2, k9 }:
//
//   1. Flatten.  For each mask block b, the key's value index is the
//      popcount of the key map under b (popcount(mf_masks[b] & map)):
//      word 2 -> index 1 (k2), word 9 -> index 2 (k9).  Word 66 is absent
//      from the key ((mf_masks[b] + 1) & map == 0), so its block is 0.
//          blocks = { k2 & m2, k9 & m9, 0 }
//   2. Hash.  hash_add64() over the blocks, then hash_finish(h, 3 * 8): the
//      very hash dpcls_insert() filed each rule under, because a rule's key
//      is the masked flow over the same blocks.
//   3. Probe.  OVS's cmap_find_batch() looks all keys of the burst up at
//      once (it interleaves the bucket loads) and returns, per key, the
//      chain of rules with that hash.
//   4. Verify.  A rule matches when its key equals the blocks word for word
//      (blocks are already masked, and a rule's key is masked by the same
//      subtable mask).  The first match wins; a key none of whose candidates
//      match is cleared from the result, so the classifier tries it in the
//      next subtable.
//
// Why it is fast
// ==============
// The loops run over the subtable's block counts (u0, u1).  Instantiated
// with compile-time counts (SpecializedCounts<U0, U1>) the compiler unrolls
// flattening, hashing and verification into straight-line code with the
// popcounts, loads and CRC32s of all blocks independent of each other; the
// run-time instance (RuntimeCounts) serves any fingerprint.  Beyond OVS's
// lookup_generic_impl() this version hashes each block as it flattens it
// (one pass over the scratch, not two), compares rule keys without
// re-masking, prefetches the candidate rules before verifying them, and adds
// to the subtable's hit count once per burst.
//
// Contract: exactly OVS 3.1's dpcls_subtable_lookup_func.  For every key in
// keys_map returns the bit set and rules[i] set when a rule of the subtable
// matches; adds the number of matched keys to subtable->hit_cnt.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "classifier/hash.hpp"
#include "classifier/layout.hpp"
#include "classifier/ovs_functions.h"  // cmap_find_batch()

namespace ovscls {

// Block counts read from the subtable at run time.
struct RuntimeCounts {
    static uint32_t u0(const Subtable& s) { return s.u0_bits; }
    static uint32_t u1(const Subtable& s) { return s.u1_bits; }
    static uint32_t n(const Subtable& s) { return s.u0_bits + s.u1_bits; }
};

// Block counts fixed at compile time, as types: loops over them are
// expanded by for_each_block(), not left to the optimizer's unrolling
// heuristics (GCC 12 at -O2 keeps a 4-trip loop a loop).
template <uint32_t N>
using Count = std::integral_constant<uint32_t, N>;

template <uint32_t U0, uint32_t U1>
struct SpecializedCounts {
    static constexpr Count<U0> u0(const Subtable&) { return {}; }
    static constexpr Count<U1> u1(const Subtable&) { return {}; }
    static constexpr Count<U0 + U1> n(const Subtable&) { return {}; }
};

// Per-thread scratch for the flattened blocks of one burst: room for any
// subtable (at most kMaxKeyValues blocks) without allocating per lookup.
inline uint64_t* lookup_scratch() {
    alignas(64) static thread_local uint64_t scratch[kMaxBurst * kMaxKeyValues];
    return scratch;
}

namespace detail {

// Calls f(b) for b = 0 .. count-1: straight-line code when `count` is a
// compile-time Count<N>, a loop when it is a run-time number.
template <class N, class F>
[[gnu::always_inline]] inline void for_each_block(N count, F&& f) {
    if constexpr (requires { N::value; }) {
        [&]<uint32_t... B>(std::integer_sequence<uint32_t, B...>) { (f(B), ...); }
        (std::make_integer_sequence<uint32_t, N::value>{});
    } else {
        for (uint32_t b = 0; b < count; b++) {
            f(b);
        }
    }
}

// Step 1 for one unit: flatten `count` blocks and fold them into `hash`.
template <class N>
[[gnu::always_inline]] inline uint32_t flatten_unit(const uint64_t* pkt_values, uint64_t pkt_map,
                                                    const uint64_t* tbl_values,
                                                    const uint64_t* mf_masks, uint64_t* blocks,
                                                    N count, uint32_t hash) {
    for_each_block(
        count, [&](uint32_t b) __attribute__((always_inline)) {
            const uint64_t below = mf_masks[b];
            const uint32_t idx = std::popcount(below & pkt_map);
            // All ones when the key has this block, else zero.
            const uint64_t present = -static_cast<uint64_t>(((below + 1) & pkt_map) != 0);
            // As OVS, the load is unconditional: idx is at most the key's value
            // count, one word past its last value at most, which the key
            // contract (classifier/layout.hpp) allows; `present` masks it off.
            const uint64_t block = pkt_values[idx] & tbl_values[b] & present;
            blocks[b] = block;
            hash = hash::add64(hash, block);
        });
    return hash;
}

// Step 4: a rule's key against the flattened blocks.
template <class N>
[[gnu::always_inline]] inline bool rule_matches(const Rule& rule, const uint64_t* blocks, N n) {
    uint64_t diff = 0;
    for_each_block(
        n, [&](uint32_t b)
               __attribute__((always_inline)) { diff |= blocks[b] ^ rule.flow.values[b]; });
    return diff == 0;
}

}  // namespace detail

template <class Counts>
[[gnu::always_inline]] inline uint32_t lookup_impl(dpcls_subtable* subtable_, uint32_t keys_map,
                                                   const netdev_flow_key* keys[],
                                                   dpcls_rule** rules) {
    Subtable& subtable = *view(subtable_);
    const auto u0 = Counts::u0(subtable);
    const auto u1 = Counts::u1(subtable);
    const auto n = Counts::n(subtable);
    const uint64_t* tbl = subtable.mask.values;
    const uint64_t* mf_masks = subtable.mf_masks;
    uint64_t* scratch = lookup_scratch();
    uint32_t hashes[kMaxBurst];

    // Steps 1 and 2: flatten and hash every key of the burst.
    for (uint32_t map = keys_map; map; map &= map - 1) {
        const uint32_t i = std::countr_zero(map);
        const FlowKey& key = *view(keys[i]);
        uint64_t* blocks = &scratch[i * n];
        uint32_t h =
            detail::flatten_unit(key.values, key.map.bits[0], tbl, mf_masks, blocks, u0, 0);
        h = detail::flatten_unit(&key.values[std::popcount(key.map.bits[0])], key.map.bits[1],
                                 &tbl[u0], &mf_masks[u0], &blocks[u0], u1, h);
        hashes[i] = hash::finish(h, n * 8);
    }

    // Step 3: probe the cmap for the whole burst.
    const cmap_node* nodes[kMaxBurst];
    uint32_t found = static_cast<uint32_t>(
        cmap_find_batch(reinterpret_cast<const cmap*>(&subtable.rules), keys_map, hashes, nodes));

    for (uint32_t map = found; map; map &= map - 1) {
        __builtin_prefetch(nodes[std::countr_zero(map)]);
    }

    // Step 4: verify the candidates, following each hash chain.
    for (uint32_t map = found; map; map &= map - 1) {
        const uint32_t i = std::countr_zero(map);
        const uint64_t* blocks = &scratch[i * n];
        const CmapNode* node = reinterpret_cast<const CmapNode*>(nodes[i]);
        for (; node; node = node->next.load(std::memory_order_acquire)) {
            Rule* rule = rule_of(node);
            if (detail::rule_matches(*rule, blocks, n)) [[likely]] {
                rules[i] = ovs(rule);
                break;
            }
        }
        if (!node) {
            found &= ~(1u << i);  // a hash collision only: try the next subtable
        }
    }

    // Readers update the hit count without atomic read-modify-write, as OVS
    // does; relaxed loads and stores keep the race benign and visible to
    // ThreadSanitizer as intended.
    std::atomic_ref<uint32_t> hits(subtable.hit_cnt);
    hits.store(hits.load(std::memory_order_relaxed) + std::popcount(found),
               std::memory_order_relaxed);
    return found;
}

}  // namespace ovscls
