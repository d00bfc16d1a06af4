// fused_generator.hpp: emits one fused lookup (classifier/fused.hpp) over a
// classifier's top-ranked subtables as x86-64 machine code: jit_fused.
//
// jit_avx2 (lookup_generator.hpp) is one function per subtable shape, called
// once per subtable by the classifier's loop.  A fused lookup is one
// function per *list* of subtables: their addresses, mask values, miniflow
// offsets and rank positions are constants in its code, and it walks the
// burst once, key by key, trying the subtables in rank order:
//
//   prologue    push the callee-saved registers, reserve FusedFrame; per
//               subtable read its cmap impl once for the burst (as
//               cmap_find_batch() does): basis, mask, &buckets[0]
//   key_loop:   i = tzcnt(iter); key = keys[i]
//               key->map == the map the code was built for?  else defer i
//     S[0]:     h = hash of the masked words (fixed offsets: the key's map
//               is known), hash_finish; h1 = rehash(basis, h); probe the
//               first bucket (counter even and unchanged around one
//               vpcmpeqd of its five hashes), then the second (rol 16), as
//               OVS's cmap does; a candidate: verify the rule's words,
//               follow its chain; the rule: rules[i], found, hits[0]++,
//               lookups += 1, next key
//     S[1]:     the same, starting from a hash state S[0] saved if their
//               first words and masks are alike (below); lookups += 2 ...
//     S[n-1]:   ...  no match: the key is "missed" (the loop goes on at S[n])
//   next_key:   iter = blsr(iter); jnz key_loop
//   epilogue:   hit_cnt += hits[k] per subtable; *missed, *lookups; found
//   cold code:  deferral, odd counters (pause, re-read), candidates and
//               verification, a first bucket that changed under the probe
//               (OVS's cmap_find(), as lookup_generator.hpp does)
//
// Hash sharing.  OVS's hash of a subtable's masked words is a chain over
// its blocks in order; two subtables whose first p blocks are the same
// words under the same masks have the same chain state after p blocks.
// Worked example: a port's nw_dst prefix subtables /13../32 all match
// (in_port, eth_type, ..., nw_src|nw_dst word, nw_frag word) under one map;
// blocks 0..3 carry equal masks, block 4 (nw_dst) differs.  S[0] saves its
// state after block 3; every later S[k] starts there and hashes 2 blocks,
// not 6.  In general S[k] starts from the longest prefix it shares with any
// earlier S[j] (the earliest such j, which always computed that state
// itself: see plan_hash_sharing()).
//
// Why key by key rather than subtable by subtable: a key's probes of S[k+1]
// do not depend on S[k]'s answer, only a branch does, which predicts "miss"
// well; so the out-of-order core runs several subtables' hash chains and
// bucket reads of one key at once (speculation across subtables for free),
// and a key costs one mispredicted branch, where it hits.  No frame stores
// of intermediate hashes or buckets, no per-subtable call or burst walk.
//
// Keys are read as the key contract (classifier/layout.hpp) allows: only a
// key whose map is the built one is read past its header, and only at
// offsets that map has.  Requires POPCNT, BMI1/BMI2, AVX2 and (CRC32
// flavour) SSE4.2, as jit_avx2.
#pragma once

#include <xbyak/xbyak.h>

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "classifier/fused.hpp"
#include "classifier/layout.hpp"
#include "jit/kernel.hpp"
#include "jit/lookup_generator.hpp"

namespace ovscls::jit {

// Most subtables one fused lookup serves (the rest: the classifier's loop).
inline constexpr uint32_t kMaxFusedSubtables = 16;

// One subtable as the code sees it: a snapshot taken at the ranking, so the
// compiler thread never reads a subtable (it may be freed meanwhile; code
// for it is then never published or is retired before).
struct FusedSubtable {
    const dpcls_subtable* subtable = nullptr;  // a constant in the code
    MiniflowMap mask_map{};
    std::vector<uint64_t> mask_values;  // one per block
    friend bool operator==(const FusedSubtable& a, const FusedSubtable& b) {
        return a.subtable == b.subtable && a.mask_map.bits[0] == b.mask_map.bits[0] &&
               a.mask_map.bits[1] == b.mask_map.bits[1] && a.mask_values == b.mask_values;
    }
};

struct FusedSpec {
    MiniflowMap key_map{};                 // the packets' map the code serves
    std::vector<FusedSubtable> subtables;  // rank order, 1..kMaxFusedSubtables
    // For measurement only (perf/dpcls_bench): an lfence before each
    // subtable after the first, so that no subtable's work starts before the
    // previous one's answer is known: what speculation across subtables
    // gains is the difference.
    bool serialize = false;
    friend bool operator==(const FusedSpec& a, const FusedSpec& b) {
        return a.key_map.bits[0] == b.key_map.bits[0] && a.key_map.bits[1] == b.key_map.bits[1] &&
               a.subtables == b.subtables && a.serialize == b.serialize;
    }
    uint32_t blocks() const;  // over all subtables
};

// Where each subtable's hash chain starts and which states it saves.
struct HashSharing {
    struct Step {
        int32_t from_slot = -1;   // start from this saved state, or -1: from 0
        uint32_t from_block = 0;  // the blocks already in that state
        std::vector<std::pair<uint32_t, uint32_t>> saves;  // (after block count, slot)
    };
    std::vector<Step> steps;  // per subtable
    uint32_t slots = 0;
};
// Each subtable starts from the longest prefix of (word, mask) blocks it
// shares with an earlier one, the earliest such, which saves its state
// there.  That one always computed the state itself: had it started at or
// beyond that prefix from a yet earlier subtable, that one would share the
// prefix too and be earlier.
HashSharing plan_hash_sharing(const FusedSpec& spec);

// The generated function's stack frame, at rsp after the prologue.
struct FusedFrame {
    uint64_t buckets[kMaxFusedSubtables];  // &impl->buckets[0] per subtable, per burst
    uint32_t basis[kMaxFusedSubtables];    // impl->basis
    uint32_t mask[kMaxFusedSubtables];     // impl->mask
    uint32_t hits[kMaxFusedSubtables];     // keys each subtable matched
    uint32_t states[kMaxFusedSubtables];   // saved hash states of the key at hand
    uint64_t missed_out;                   // the uint32_t* argument
    uint64_t lookups_out;                  // the int* argument
    uint32_t keys_map;                     // the burst
    uint32_t deferred;                     // keys of another map
    uint32_t lookups;                      // sum of positions of the matches
    uint32_t pad;
};
static_assert(sizeof(FusedFrame) % 16 == 0);

class FusedGenerator : public Kernel {
  public:
    // Emits the fused lookup for `spec` and makes it read+execute (W^X).
    // Null with *status saying why; never throws.
    static std::unique_ptr<FusedGenerator> create(const FusedSpec& spec,
                                                  Xbyak::Allocator* allocator,
                                                  GenerateStatus* status) noexcept;
    // Bytes reserved for the code, in whole pages.
    static size_t reserved_bytes(const FusedSpec& spec);

    FusedLookupFn function() const { return getCode<FusedLookupFn>(); }

    ~FusedGenerator() override;

  private:
    friend class Kernel;  // make() constructs it and calls generate()
    FusedGenerator(const FusedSpec& spec, Xbyak::Allocator* allocator);
    void generate();  // may throw Xbyak::Error

    void emit_prologue();
    void emit_key_loop();
    void emit_subtable(uint32_t k);
    // value = the key's masked block b of subtable k (0 when the key lacks
    // the word).
    void emit_block(uint32_t k, uint32_t b, const Xbyak::Reg64& value);
    void emit_epilogue();
    void emit_pool();
    Xbyak::Label& mask_constant(uint64_t mask);

    const FusedSpec spec_;
    const HashSharing sharing_;
    Xbyak::Label key_loop_, next_key_, defer_, epilogue_;
    std::list<std::pair<uint64_t, Xbyak::Label>> pool_;  // mask constants
};

}  // namespace ovscls::jit
