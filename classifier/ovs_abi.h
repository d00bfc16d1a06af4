/* The layout contract between Open vSwitch's C structs (3.1 to 3.7, and
 * 4.0 where it differs) and this project's C++ mirrors of them
 * (classifier/layout.hpp).
 *
 * OVS's dpcls/flow headers do not compile as C++ (see
 * docs/internals/ovs-3.1-notes.md), so the C++ side reads OVS's hot structs
 * through mirrors.  Both sides check themselves against the numbers below at
 * compile time: ovs_bridge.c with offsetof() on the real OVS structs, and
 * layout.hpp with offsetof() on the mirrors.  A change in either breaks the
 * build, never a lookup.
 *
 * This header is plain C and C++. */
#ifndef OVSCLS_OVS_ABI_H
#define OVSCLS_OVS_ABI_H 1

/* OVSCLS_OVS_VERSION is set by the build from the OVS release (or the OVS
 * tree a plugin is built for): major * 10000 + minor * 100 + patch. */
#ifndef OVSCLS_OVS_VERSION
#error "OVSCLS_OVS_VERSION must be defined by the build (e.g. 30100)"
#endif

/* struct flow is FLOW_U64S 64-bit words; a miniflow map has 2 units.  OVS
 * 4.0 has 32 registers (FLOW_N_REGS, 16 before): 8 words more, and every
 * field after the registers 8 words further on, so some fingerprints (u0,
 * u1) of the same megaflow differ between 3.x and 4.0. */
#if OVSCLS_OVS_VERSION >= 40000
#define OVSCLS_FLOW_U64S 92
#else
#define OVSCLS_FLOW_U64S 84
#endif
#define OVSCLS_FLOWMAP_UNITS 2
/* Most values a netdev_flow_key (and so a key or a mask) can hold. */
#define OVSCLS_FLOW_MAX_PACKET_U64S 71
/* NETDEV_MAX_BURST: keys per lookup call. */
#define OVSCLS_MAX_BURST 32

/* struct netdev_flow_key */
#define OVSCLS_KEY_SIZE 592
#define OVSCLS_KEY_OFF_MF 8
#define OVSCLS_KEY_OFF_VALUES 24

/* struct dpcls_rule */
#define OVSCLS_RULE_SIZE 608
#define OVSCLS_RULE_OFF_MASK 8
#define OVSCLS_RULE_OFF_FLOW 16

/* struct dpcls_subtable.  OVS 4.0 removed the lookup registry and with it
 * the member 'lookup_func_info' after 'lookup_func' (usage counts per
 * implementation): what follows moves up by one pointer. */
#define OVSCLS_SUBTABLE_OFF_RULES 8
#define OVSCLS_SUBTABLE_OFF_HIT_CNT 16
#define OVSCLS_SUBTABLE_OFF_U0 20
#define OVSCLS_SUBTABLE_OFF_U1 21
#define OVSCLS_SUBTABLE_OFF_LOOKUP_FUNC 24
#if OVSCLS_OVS_VERSION >= 40000
#define OVSCLS_SUBTABLE_HAS_LOOKUP_INFO 0
#define OVSCLS_SUBTABLE_SIZE 632
#define OVSCLS_SUBTABLE_OFF_MF_MASKS 32
#define OVSCLS_SUBTABLE_OFF_MASK 40
#else
#define OVSCLS_SUBTABLE_HAS_LOOKUP_INFO 1
#define OVSCLS_SUBTABLE_SIZE 640
#define OVSCLS_SUBTABLE_OFF_LOOKUP_INFO 32
#define OVSCLS_SUBTABLE_OFF_MF_MASKS 40
#define OVSCLS_SUBTABLE_OFF_MASK 48
#endif

/* struct pvector_impl / pvector_entry */
#define OVSCLS_PVECTOR_IMPL_OFF_SIZE 0
#define OVSCLS_PVECTOR_IMPL_OFF_VECTOR 16
#define OVSCLS_PVECTOR_ENTRY_SIZE 16

/* struct cmap_impl and struct cmap_bucket are private to lib/cmap.c, so
 * no header can check them at compile time.  jit_avx2's generated code
 * walks them (a bucket read per key), so the JIT checks them at run time,
 * in the OVS it is linked into, before it compiles anything
 * (jit/cmap_layout.cpp: it fills a cmap through OVS's exported cmap_insert()
 * and finds every node where these numbers say), and declines with reason
 * "abi" when they differ.  OVS 3.1: 64-byte cache lines, 64-bit pointers;
 * the first line of a cmap_impl holds n, max_n, min_n, mask, basis, and the
 * buckets follow, each {uint32 counter; uint32 hashes[5]; cmap_node
 * nodes[5]}. */
#define OVSCLS_CMAP_IMPL_OFF_N 0
#define OVSCLS_CMAP_IMPL_OFF_MASK 12
#define OVSCLS_CMAP_IMPL_OFF_BASIS 16
#define OVSCLS_CMAP_IMPL_OFF_BUCKETS 64
#define OVSCLS_CMAP_BUCKET_SIZE 64
#define OVSCLS_CMAP_BUCKET_OFF_HASHES 4
#define OVSCLS_CMAP_BUCKET_OFF_NODES 24
#define OVSCLS_CMAP_BUCKET_ENTRIES 5

/* OVSCLS_HASH_CRC32 is set by the build to 1 for an OVS lib whose
 * hash_add64 is CRC32C (x86-64 with -msse4.2, aarch64 with +crc) and to 0
 * otherwise (murmur-style mhash): cmake/ovs-flavours.txt.  Both the bridge
 * and the C++ hash mirror assert it agrees with the compiler's target
 * features in their own translation unit, as lib/hash.h decides. */
#ifndef OVSCLS_HASH_CRC32
#error "OVSCLS_HASH_CRC32 must be defined by the build (0 or 1)"
#endif

#endif /* OVSCLS_OVS_ABI_H */
