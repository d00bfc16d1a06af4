// ovs_emit.hpp: what every generator here emits the same way: the byte
// offsets of OVS's structs and OVS's hash (OVS's cmap probe, built on these,
// is cmap_probe.hpp).
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
// bytes, masked to those lanes (cmap_probe.cpp).
static_assert(OVSCLS_CMAP_BUCKET_OFF_HASHES == 4 && OVSCLS_CMAP_BUCKET_ENTRIES == 5);
inline constexpr uint32_t kCmapHashLanes = 0x3e;

inline constexpr bool kCrc32 = OVSCLS_HASH_CRC32;

// ---- OVS's hash. ----

// hash = hash_add64(hash, value).  Clobbers `scratch` (mhash only).
void hash_add(Xbyak::CodeGenerator& g, const Xbyak::Reg64& hash, const Xbyak::Reg64& value,
              const Xbyak::Reg64& scratch);

// hash = hash_finish(hash, final) (final: a 32-bit value, zero-extended).
// Clobbers `t`, which may be `final`'s own register.
void hash_finish(Xbyak::CodeGenerator& g, const Xbyak::Reg64& hash, const Xbyak::Reg64& final,
                 const Xbyak::Reg32& t);

}  // namespace ovscls::jit::emit
