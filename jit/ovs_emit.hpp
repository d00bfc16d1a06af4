// ovs_emit.hpp: what every generator here emits the same way: the byte
// offsets of OVS's structs and OVS's hash.
//
// The numbers come from classifier/ovs_abi.h (checked against OVS's own
// structs by ovs_bridge.c at compile time; the private cmap layout by
// jit/cmap_layout.cpp at run time, before anything is compiled).  The hash
// is the one of the OVS build the code is linked into (classifier/hash.hpp):
// CRC32 when OVS was built with SSE4.2, murmur-style mhash otherwise.
#pragma once

#include <xbyak/xbyak.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "classifier/layout.hpp"
#include "classifier/ovs_abi.h"
// OVS's cmap_find(), which generated code calls when a bucket changed under
// its probe.
#include "classifier/ovs_functions.h"

namespace ovscls::jit::emit {

// True when no two of `regs` are one register: the generators check at
// compile time that no register has two roles at once.
constexpr bool distinct(std::initializer_list<Xbyak::Reg64> regs) {
    for (const Xbyak::Reg64* a = regs.begin(); a != regs.end(); a++) {
        for (const Xbyak::Reg64* b = a + 1; b != regs.end(); b++) {
            if (a->getIdx() == b->getIdx()) {
                return false;
            }
        }
    }
    return true;
}

// struct netdev_flow_key, struct dpcls_subtable, struct dpcls_rule.
inline constexpr uint32_t kKeyMap = OVSCLS_KEY_OFF_MF;
inline constexpr uint32_t kKeyValues = OVSCLS_KEY_OFF_VALUES;
inline constexpr uint32_t kSubtableRules = OVSCLS_SUBTABLE_OFF_RULES;
inline constexpr uint32_t kSubtableHits = OVSCLS_SUBTABLE_OFF_HIT_CNT;
inline constexpr uint32_t kMaskValues = OVSCLS_SUBTABLE_OFF_MASK + OVSCLS_KEY_OFF_VALUES;
inline constexpr uint32_t kRuleValues = OVSCLS_RULE_OFF_FLOW + OVSCLS_KEY_OFF_VALUES;
static_assert(offsetof(Rule, node) == 0, "a cmap node is its rule's address");
static_assert(offsetof(CmapNode, next) == 0);

// struct cmap_impl and struct cmap_bucket, private to lib/cmap.c.
inline constexpr uint32_t kCmapImplMask = OVSCLS_CMAP_IMPL_OFF_MASK;
inline constexpr uint32_t kCmapImplBasis = OVSCLS_CMAP_IMPL_OFF_BASIS;
inline constexpr uint32_t kCmapImplBuckets = OVSCLS_CMAP_IMPL_OFF_BUCKETS;
inline constexpr uint32_t kCmapBucketShift = 6;
static_assert(1u << kCmapBucketShift == OVSCLS_CMAP_BUCKET_SIZE);
inline constexpr uint32_t kCmapBucketNodes = OVSCLS_CMAP_BUCKET_OFF_NODES;
// The hashes are dwords 1..5 of the bucket: a vpcmpeqd over the first 32
// bytes, masked to those lanes.
static_assert(OVSCLS_CMAP_BUCKET_OFF_HASHES == 4 && OVSCLS_CMAP_BUCKET_ENTRIES == 5);
inline constexpr uint32_t kCmapHashLanes = 0x3e;

inline constexpr bool kCrc32 = OVSCLS_HASH_CRC32;

// ---- OVS's cmap, as both kernels probe it. ----
//
// A reader of a cmap bucket (lib/cmap.c: cmap_find_in_bucket() between two
// reads of the bucket's counter) reads the counter, waits while it is odd
// (a writer is in the bucket), looks for the hash among the bucket's five
// slots and takes the node of the first slot that holds it, then reads the
// counter again: only an unchanged counter makes what it read valid.  The
// kernels emit the steps with the functions below, in their own layouts
// (jit_avx2 inline, jit_fused with the rare steps out of line).

// Reads `bucket`'s counter into `counter` and jumps (`jump`: xbyak's label
// type) to `odd` while it is odd; else compares the five slot hashes with
// the hash broadcast in ymm1 and leaves the matching slots in `lanes` (bit
// j: slot j - 1), ZF set when none.  Clobbers ymm2, the flags.
void cmap_bucket_lanes(Xbyak::CodeGenerator& g, const Xbyak::Reg64& bucket,
                       const Xbyak::Reg64& counter, const Xbyak::Reg64& lanes,
                       const Xbyak::Label& odd, Xbyak::CodeGenerator::LabelType jump);

// node = the node of `bucket`'s first slot in `lanes` (not 0).  `lanes` may
// be `node`'s register.  Clobbers lanes.
void cmap_lane_node(Xbyak::CodeGenerator& g, const Xbyak::Reg64& bucket, const Xbyak::Reg64& lanes,
                    const Xbyak::Reg64& node);

// rax = OVS's cmap_find(rdi, esi): the caller's fallback when a bucket
// changed under its probe (cmap_find() reads both of a hash's buckets
// stably).  In: rdi = the cmap, esi = the hash.  Clobbers every
// caller-saved register and the ymm registers' upper halves (cleared
// first: OVS's code may be SSE, and pays for no AVX-SSE transition).
void call_cmap_find(Xbyak::CodeGenerator& g);

// ---- OVS's hash. ----

// hash = hash_add64(hash, value).  Clobbers `scratch` (mhash only).
void hash_add(Xbyak::CodeGenerator& g, const Xbyak::Reg64& hash, const Xbyak::Reg64& value,
              const Xbyak::Reg64& scratch);

// hash = hash_finish(hash, final) (final: a 32-bit value, zero-extended).
// Clobbers `t`, which may be `final`'s own register.
void hash_finish(Xbyak::CodeGenerator& g, const Xbyak::Reg64& hash, const Xbyak::Reg64& final,
                 const Xbyak::Reg32& t);

}  // namespace ovscls::jit::emit
