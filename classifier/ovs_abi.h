/* The layout contract between Open vSwitch 3.1.0's C structs and this
 * project's C++ mirrors of them (classifier/layout.hpp).
 *
 * OVS's dpcls/flow headers do not compile as C++ (see
 * shared/design/ovs-3.1-facts.md), so the C++ side reads OVS's hot structs
 * through mirrors.  Both sides check themselves against the numbers below at
 * compile time: ovs_bridge.c with offsetof() on the real OVS structs, and
 * layout.hpp with offsetof() on the mirrors.  A change in either breaks the
 * build, never a lookup.
 *
 * This header is plain C and C++. */
#ifndef OVSCLS_OVS_ABI_H
#define OVSCLS_OVS_ABI_H 1

/* struct flow is FLOW_U64S 64-bit words; a miniflow map has 2 units. */
#define OVSCLS_FLOW_U64S 84
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

/* struct dpcls_subtable */
#define OVSCLS_SUBTABLE_SIZE 640
#define OVSCLS_SUBTABLE_OFF_RULES 8
#define OVSCLS_SUBTABLE_OFF_HIT_CNT 16
#define OVSCLS_SUBTABLE_OFF_U0 20
#define OVSCLS_SUBTABLE_OFF_U1 21
#define OVSCLS_SUBTABLE_OFF_LOOKUP_FUNC 24
#define OVSCLS_SUBTABLE_OFF_LOOKUP_INFO 32
#define OVSCLS_SUBTABLE_OFF_MF_MASKS 40
#define OVSCLS_SUBTABLE_OFF_MASK 48

/* struct pvector_impl / pvector_entry */
#define OVSCLS_PVECTOR_IMPL_OFF_SIZE 0
#define OVSCLS_PVECTOR_IMPL_OFF_VECTOR 16
#define OVSCLS_PVECTOR_ENTRY_SIZE 16

/* OVSCLS_HASH_CRC32 is set by the build to 1 for an OVS lib compiled with
 * -msse4.2 (hash_add64 is CRC32) and to 0 otherwise (murmur-style mhash).
 * Both the bridge and the C++ hash mirror assert it agrees with __SSE4_2__
 * in their own translation unit. */
#ifndef OVSCLS_HASH_CRC32
#error "OVSCLS_HASH_CRC32 must be defined by the build (0 or 1)"
#endif

#endif /* OVSCLS_OVS_ABI_H */
