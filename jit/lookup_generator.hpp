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
//   prologue    push the six callee-saved registers, reserve the frame:
//               32 x blocks x 8 bytes of flattened keys, and per key its
//               hash, h1, first/second bucket, bucket counter and node;
//               the slow-path count and sample map; impl = cmap->impl
//   key_loop:   i = tzcnt(iter); key = keys[i]; map0, map1 = key->map
//               cmp map0, EXPECTED0; jne slow; cmp map1, EXPECTED1; jne slow
//     fast:     per block b (value index k fixed by the expected map):
//                 mov v, [key + values + 8k]; and v, [subtable + mask + 8b]
//                 mov [out + 8b], v;  crc32 hash, v
//               jmp hashed
//     slow:     per block b at bit p of its unit (the generic algorithm):
//                 idx = popcnt(bzhi(map_u, p)); v = values_u[idx]
//                 present = -(bt map_u, p); v &= present & mask[b]
//                 mov [out + 8b], v;  crc32 hash, v
//     hashed:   hash_finish: crc32 hash, 8n; imul 0x805204f3; xor hash>>16
//               hashes[i] = hash
//               cmap round 1: h1 = hash_finish(impl->basis, hash);
//               b1 = &impl->buckets[h1 & impl->mask]; prefetcht0 [b1]
//               iter = blsr(iter); jnz key_loop
//   profile:    once per burst, if any key took the slow path: add the count
//               and store the sample map in the profile (tier-up input)
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
//   epilogue:   subtable->hit_cnt += popcnt(found); vzeroupper; return found
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

#include "jit/lookup_shape.hpp"

namespace ovscls::jit {

// What the slow path tells the tier-up logic.  Written by generated code
// with plain (racy, lossy) stores once per burst; read with relaxed atomic
// loads.  A lost update only delays a recompile: correctness never depends
// on it.
struct alignas(64) LookupProfile {
    uint64_t slow_keys = 0;    // keys that took the slow path
    uint64_t sample_map[2]{};  // the map of a recent slow-path key
};

inline constexpr size_t kCodePageBytes = 4096;

class LookupGenerator : public Xbyak::CodeGenerator {
  public:
    // Emits the lookup for `shape` into memory from `allocator` (RW; the
    // caller makes it RX with setProtectModeRE()).  Throws Xbyak::Error when
    // memory cannot be had or the code does not fit.
    LookupGenerator(const LookupShape& shape, LookupProfile* profile, Xbyak::Allocator* allocator);

    // Bytes reserved for a shape's code, in whole pages: one page for every
    // shape with the CRC32 hash; with the longer mhash sequence, shapes over
    // 17 blocks take two.  The generator throws rather than grow beyond it.
    static size_t reserved_bytes(const LookupShape& shape);

  private:
    void emit_prologue();
    void emit_flatten_and_hash();
    void emit_fast_path();
    void emit_slow_path();
    void emit_hash_add();
    void emit_hash_finish();
    void emit_finish(const Xbyak::Reg64& hash, const Xbyak::Reg64& final, const Xbyak::Reg32& t);
    void emit_cmap_find_batch();
    void emit_bucket_address(const Xbyak::Reg64& h, const Xbyak::Operand& mask,
                             const Xbyak::Reg64& impl, const Xbyak::Reg64& bucket);
    void emit_find_in_bucket(const Xbyak::Reg64& bucket, const Xbyak::Reg64& hash,
                             const Xbyak::Reg64& node, const Xbyak::Reg64& counter);
    void emit_find_key_in_bucket(uint32_t slots, const Xbyak::Reg64& bucket,
                                 const Xbyak::Reg64& hash, const Xbyak::Reg64& node,
                                 const Xbyak::Reg64& counter);
    void emit_found(const Xbyak::Reg64& node);
    void emit_probe();
    void emit_verify();
    void emit_rule_compare(const Xbyak::Label& mismatch);
    void emit_epilogue();

    const LookupShape shape_;
    LookupProfile* const profile_;
    const uint32_t blocks_;
    const uint32_t stride_;  // bytes of one key's flattened blocks

    // Frame layout (offsets from rsp after the prologue).
    Xbyak::Label epilogue_;
    uint32_t h1_off_ = 0, c1_off_ = 0, b1_off_ = 0, b2_off_ = 0, impl_off_ = 0;  // cmap state
    uint32_t scratch_off_ = 0, hashes_off_ = 0, nodes_off_ = 0, slow_count_off_ = 0,
             sample_off_ = 0, frame_bytes_ = 0;

    // Registers by role.  Callee-saved ones live across the (rare) call
    // into cmap_find().
    const Xbyak::Reg64 subtable_ = r12;  // dpcls_subtable*
    const Xbyak::Reg64 found_ = r13;     // keys_map, then the found map
    const Xbyak::Reg64 keys_ = r14;      // const netdev_flow_key**
    const Xbyak::Reg64 rules_ = r15;     // dpcls_rule**
    const Xbyak::Reg64 iter_ = rbx;      // keys still to visit in a loop
    const Xbyak::Reg64 index_ = rbp;     // i, the key being worked on
    // Caller-saved: used within one key.
    const Xbyak::Reg64 key_ = r8;       // keys[i]
    const Xbyak::Reg64 map0_ = r9;      // key->map.bits[0]
    const Xbyak::Reg64 map1_ = r10;     // key->map.bits[1]
    const Xbyak::Reg64 values1_ = r11;  // &key->values[popcount(map0)]
    const Xbyak::Reg64 out_ = rdi;      // this key's flattened blocks
    const Xbyak::Reg64 hash_ = rax;     // running hash, then the node
    const Xbyak::Reg64 value_ = rcx;    // one block
    const Xbyak::Reg64 idx_ = rdx;      // slow path: the block's value index
    const Xbyak::Reg64 present_ = rsi;  // slow path: all ones when present
};

}  // namespace ovscls::jit
