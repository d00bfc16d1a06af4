// lookup_generator.hpp: emits one subtable lookup as x86-64 machine code.
//
// The emitted function has exactly OVS 3.1's dpcls_subtable_lookup_func
// signature and semantics, and computes what lookup_impl() (classifier/
// lookup.hpp) computes: the same flattened blocks, the same hash, the same
// cmap probe, the same first-match rule, the same hit count.  Only what is
// constant for the shape (lookup_shape.hpp) is folded into the code.
//
// Shape of the emitted code, for a (4,1) subtable with an expected map:
//
//   prologue    push the six callee-saved registers, reserve the frame
//               (LookupFrame: per key its hash, h1, first/second bucket,
//               bucket counter and node; impl = cmap->impl; the keys that
//               took the slow path) and after it 32 x blocks x 8 bytes of
//               flattened keys
//   key_loop:   i = tzcnt(iter); key = keys[i]; map0, map1 = key->map
//               cmp map0, EXPECTED0; jne slow; cmp map1, EXPECTED1; jne slow
//     fast:     per block b (value index k fixed by the expected map):
//                 mov v, [key + values + 8k]; and v, [subtable + mask + 8b]
//                 mov [out + 8b], v;  crc32 hash, v
//               jmp hashed
//     slow:     slow_path |= 1 << i
//               per block b at bit p of its unit (the generic algorithm):
//                 idx = popcnt(bzhi(map_u, p)); v = values_u[idx]
//                 present = -(bt map_u, p); v &= present & mask[b]
//                 mov [out + 8b], v;  crc32 hash, v
//     hashed:   hash_finish: crc32 hash, 8n; imul 0x805204f3; xor hash>>16
//               hashes[i] = hash
//               cmap round 1: h1 = hash_finish(impl->basis, hash);
//               b1 = &impl->buckets[h1 & impl->mask]; prefetcht0 [b1]
//               iter = blsr(iter); jnz key_loop
//   round 2:    per key, in b1 between two reads of its even, unchanged
//               counter: vpcmpeqd of the hash against the bucket's first 32
//               bytes, lanes 1..5 = hashes[0..4]; found: node, prefetch the
//               rule; else b2 = bucket of rol(h1, 16), prefetched
//   round 3:    per key left, the same in b2; in neither, and b1's counter
//               moved: OVS's cmap_find() reads both stably; else a miss
//   verify:     per found key, along its node chain: compare the rule's key
//               with the flattened blocks 256 bits at a time (vpxor/vpor,
//               vptest), 128 and 64 for the rest; first equal one wins,
//               rules[i] = rule; a chain without one clears bit i.
//   epilogue:   profile, if a key that took the slow path was found
//               (slow_path & found): find the subtable's slot in the
//               profile table (its set, 4 tag compares), add how many, and
//               store the first one's map there as the sample
//               subtable->hit_cnt += popcnt(found); vzeroupper; return found
//
// Keys are read as the key contract (classifier/layout.hpp) allows: header
// and values, and the slow path's values_u[idx] at most one word past the
// last value (masked off).  No vector load touches a key.  lookup_fuzz runs
// the code on keys followed by that word and a PROT_NONE page.
//
// "crc32 hash, v" stands for hash_add64() of the OVS build the code is
// linked into: one crc32 instruction when OVS was built with SSE4.2, else
// OVS's mhash (two rounds of imul/rol/imul/xor/rol/lea over the halves),
// and hash_finish() likewise.
//
// Without an expected map (the first tier, before any packet was seen) the
// map check and fast path are left out and every key takes the slow path.
// Both paths store identical blocks, so results cannot depend on the path.
//
// Why it is fast: the fast path is 4 instructions per block and no
// popcounts, loads of key, mask and the stores are independent, and each
// key's CRC32 chain is independent of the next key's, so the out-of-order
// core overlaps consecutive keys' chains (the loop body is short enough for
// several iterations to be in flight).  Each key's first cmap bucket is
// prefetched as soon as its hash is known, a whole burst ahead of its use;
// a bucket is searched with one compare instead of a loop.  Requires POPCNT, BMI1/BMI2 (tzcnt,
// blsr, bzhi), AVX2 (the 256-bit compare) and, in the CRC32 flavour, SSE4.2.
#pragma once

#include <xbyak/xbyak.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>

#include "classifier/ovs_abi.h"
#include "jit/kernel.hpp"
#include "jit/lookup_shape.hpp"

namespace ovscls::jit {

// What the slow path tells the tier-up logic, per subtable.
//
// Code is shared by every subtable of a shape, but whether to tier up is
// decided per subtable: B's packets must never re-target A's fast path, and
// no cache line may be written per burst by two PMD threads (a subtable
// belongs to one PMD's dpcls).  So the profile is a small table of
// cache-line slots in the code object, each owned by one subtable: the
// tier policy (jit/subtable_lookups.cpp) gives a subtable a free slot of the set its address
// hashes to (profile_set()), and the slow path writes a slot only when its
// owner is the subtable the code was called with.  A subtable whose set is
// full has no slot: it stays on its current tier, correct and slower.
//
// A slot a subtable leaves "cools" (owner kProfileCooling) for an OVS-RCU
// grace period, so that a reader still running for the old owner cannot
// write into the next owner's profile.  Written by generated code with plain
// (racy, lossy) stores once per burst; read with relaxed atomic loads.  A
// lost update only delays a recompile: correctness never depends on it.
//
// Only keys that the owner matched count.  The keys a subtable is called
// with are those its better-ranked neighbours did not match, so most of a
// subtable's slow-path keys may be other subtables' packets, of other maps,
// passing through on their way down: counted, they would re-target its fast
// path to their map (jit_test: KeysOfLaterSubtablesDoNotTierUpAnEarlierOne).
struct alignas(64) ProfileSlot {
    uint64_t owner = 0;        // the owning dpcls_subtable*; 0 free
    uint64_t slow_keys = 0;    // the owner's hits whose key took the slow path
    uint64_t sample_map[2]{};  // the map of a recent one of them
};
static_assert(sizeof(ProfileSlot) == 64, "one cache line per slot: no false sharing");
inline constexpr uint64_t kProfileCooling = 1;  // no subtable lives at address 1
inline constexpr uint32_t kProfileSetBits = 4;
inline constexpr uint32_t kProfileSets = 1u << kProfileSetBits;
inline constexpr uint32_t kProfileWays = 4;
inline constexpr uint64_t kProfileHashMul = 0x9e3779b97f4a7c15u;  // Fibonacci hashing

struct ProfileTable {
    ProfileSlot slots[kProfileSets * kProfileWays];  // set s: [s * ways, (s + 1) * ways)
};

// The set of `subtable`'s slots: the top kProfileSetBits of its address
// times kProfileHashMul (what the generated code computes, too).
inline uint32_t profile_set(const void* subtable) {
    return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(subtable) * kProfileHashMul) >>
                                 (64 - kProfileSetBits));
}

// The generated function's stack frame, at rsp after the prologue, per key
// of the burst (index i): everything a later phase needs from an earlier
// one.  The flattened blocks follow it (kMaxBurst x blocks x 8 bytes, the
// key's `stride`); their size depends on the shape, so they are not a
// member.  The code addresses every field through offsetof().
struct LookupFrame {
    uint32_t hashes[OVSCLS_MAX_BURST];  // the key's hash (flatten)
    uint32_t h1[OVSCLS_MAX_BURST];      // rehash(impl, hash) (cmap round 1)
    uint32_t c1[OVSCLS_MAX_BURST];      // first bucket's counter (round 2)
    uint64_t b1[OVSCLS_MAX_BURST];      // first bucket's address (round 1)
    uint64_t b2[OVSCLS_MAX_BURST];      // second bucket's address (round 2)
    uint64_t nodes[OVSCLS_MAX_BURST];   // first node of its hash (rounds 2, 3)
    uint64_t impl;                      // cmap->impl, read once per burst
    uint64_t buckets;                   // &impl->buckets[0]
    uint32_t slow_path;                 // bit i: key i took the slow path
    uint32_t pad[3];
};
static_assert(sizeof(LookupFrame) % 16 == 0, "the blocks that follow stay 16-byte aligned");

// Generates one lookup.  One instance per compiled shape; it owns the code
// memory (from `allocator`) for as long as the code may run.
class LookupGenerator : public Kernel {
  public:
    // Emits the lookup for `shape` and makes its memory read+execute (W^X:
    // writable only while emitting).  Returns the generator holding the
    // code, or null with *status saying why.  Never throws.
    static std::unique_ptr<LookupGenerator> create(const LookupShape& shape, ProfileTable* profiles,
                                                   Xbyak::Allocator* allocator,
                                                   GenerateStatus* status) noexcept;

    // Bytes reserved for a shape's code, in whole pages: one page for every
    // shape with the CRC32 hash; with the longer mhash sequence, shapes over
    // 17 blocks take two.  Code that would grow beyond it fails to generate.
    static size_t reserved_bytes(const LookupShape& shape);

  private:
    friend class Kernel;  // make() constructs it and calls generate()
    // Reserves the code memory (RW); may throw, as xbyak does.
    LookupGenerator(const LookupShape& shape, ProfileTable* profiles, Xbyak::Allocator* allocator);
    // Emits the function; may throw Xbyak::Error.
    void generate();

    void emit_prologue();
    void emit_flatten_and_hash();
    void emit_fast_path();
    void emit_slow_path();
    void emit_hash_add();
    void emit_hash_finish();
    void emit_finish(const Xbyak::Reg64& hash, const Xbyak::Reg64& final, const Xbyak::Reg32& t);
    void emit_cmap_round1();
    void emit_profile();
    void emit_cmap_find_batch();
    void emit_key_bucket(uint32_t slots);
    void emit_found(const Xbyak::Reg64& node);
    void emit_verify();
    void emit_each_key(const Xbyak::Operand& keys,
                       const std::function<void(const Xbyak::Label& next)>& body);
    void emit_rule_compare(const Xbyak::Label& mismatch);
    void emit_epilogue();

    const LookupShape shape_;
    ProfileTable* const profiles_;
    const uint32_t blocks_;
    const uint32_t stride_;       // bytes of one key's flattened blocks
    const uint32_t blocks_off_;   // where they start: sizeof(LookupFrame)
    const uint32_t frame_bytes_;  // what the prologue reserves
    Xbyak::Label epilogue_;
    // The registers, by phase, are in lookup_generator.cpp.
};

}  // namespace ovscls::jit
