// layout.hpp: C++ mirrors of the Open vSwitch structs a lookup reads (3.1 to
// 4.0: ovs_abi.h says where they differ).
//
// OVS's dpcls headers are C that g++ rejects, so the hot fields are mirrored
// here.  Every offset and size is asserted against ovs_abi.h, and
// ovs_bridge.c asserts the real OVS structs against the same numbers: the
// two can only drift apart by failing to compile.
//
// The opaque OVS types (struct dpcls_subtable, ...) stay the currency of the
// lookup function signature, exactly as OVS declares it, so that a lookup
// written here can be registered in ovs-vswitchd unchanged.  Inside a lookup
// they are viewed through these mirrors with view().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "classifier/ovs_bridge.h"

namespace ovscls {

inline constexpr uint32_t kFlowU64s = OVSCLS_FLOW_U64S;
inline constexpr uint32_t kMaxKeyValues = OVSCLS_FLOW_MAX_PACKET_U64S;
inline constexpr uint32_t kMaxBurst = OVSCLS_MAX_BURST;
// Bits a miniflow map may use in its second unit (struct flow's words 64..83).
inline constexpr uint32_t kUnit1Bits = kFlowU64s - 64;

// struct miniflow: which 64-bit words of struct flow are present, in two
// 64-bit units; the present words follow in order.
struct MiniflowMap {
    uint64_t bits[2];
};

// struct netdev_flow_key: a packet key, a rule key or a subtable mask.
//
// The key contract of every lookup here (and of OVS's own generic): a lookup
// reads a key's header (hash, len, map) and its values, and may read the one
// word after its last value.  That word is read when the mask has a word the
// key lacks and every later word of the key is present (idx = the key's
// value count), and masked off; the branch-free load is why.  A key with all
// kMaxKeyValues words is thus read one word past its struct: OVS's keys live
// in arrays (the burst's keys on the PMD's stack), so the word is readable
// there, and whoever passes keys must make it so.  tests/guarded_keys.hpp
// puts a PROT_NONE page right after that word (lookup_fuzz, differential_test).
struct FlowKey {
    uint32_t hash;
    uint32_t len;  // bytes of map + values
    MiniflowMap map;
    uint64_t values[kMaxKeyValues];
};

// struct cmap_node: OVSRCU_TYPE(struct cmap_node *) next.
struct CmapNode {
    std::atomic<const CmapNode*> next;
};

// struct cmap: OVSRCU_TYPE(struct cmap_impl *) impl.
struct Cmap {
    std::atomic<void*> impl;
};

// struct dpcls_rule.
struct Rule {
    CmapNode node;
    FlowKey* mask;  // always &subtable->mask of the rule's subtable
    FlowKey flow;   // the masked key
};

// struct dpcls_subtable.
struct Subtable {
    CmapNode node;
    Cmap rules;
    uint32_t hit_cnt;  // written by readers without atomics, as OVS does
    uint8_t u0_bits;
    uint8_t u1_bits;
    std::atomic<ovsb_lookup_func> lookup_func;
#if OVSCLS_SUBTABLE_HAS_LOOKUP_INFO
    void* lookup_func_info;  // OVS's registry entry; unused here (not in 4.0)
#endif
    uint64_t* mf_masks;  // per block: the map bits below it
    FlowKey mask;        // last: allocated to mask.len only
};

// struct pvector_entry / the head of struct pvector_impl.
struct PvectorEntry {
    int priority;
    void* ptr;
};
struct PvectorImpl {
    std::atomic<size_t> size;
    size_t allocated;
    PvectorEntry vector[];
};
// struct pvector.
struct Pvector {
    std::atomic<PvectorImpl*> impl;
    PvectorImpl* temp;
};

static_assert(sizeof(FlowKey) == OVSCLS_KEY_SIZE);
static_assert(offsetof(FlowKey, map) == OVSCLS_KEY_OFF_MF);
static_assert(offsetof(FlowKey, values) == OVSCLS_KEY_OFF_VALUES);
static_assert(sizeof(CmapNode) == sizeof(void*) && sizeof(Cmap) == sizeof(void*));
static_assert(std::atomic<const CmapNode*>::is_always_lock_free);
static_assert(sizeof(Rule) == OVSCLS_RULE_SIZE);
static_assert(offsetof(Rule, mask) == OVSCLS_RULE_OFF_MASK);
static_assert(offsetof(Rule, flow) == OVSCLS_RULE_OFF_FLOW);
static_assert(sizeof(Subtable) == OVSCLS_SUBTABLE_SIZE);
static_assert(offsetof(Subtable, rules) == OVSCLS_SUBTABLE_OFF_RULES);
static_assert(offsetof(Subtable, hit_cnt) == OVSCLS_SUBTABLE_OFF_HIT_CNT);
static_assert(offsetof(Subtable, u0_bits) == OVSCLS_SUBTABLE_OFF_U0);
static_assert(offsetof(Subtable, u1_bits) == OVSCLS_SUBTABLE_OFF_U1);
static_assert(offsetof(Subtable, lookup_func) == OVSCLS_SUBTABLE_OFF_LOOKUP_FUNC);
#if OVSCLS_SUBTABLE_HAS_LOOKUP_INFO
static_assert(offsetof(Subtable, lookup_func_info) == OVSCLS_SUBTABLE_OFF_LOOKUP_INFO);
#endif
static_assert(offsetof(Subtable, mf_masks) == OVSCLS_SUBTABLE_OFF_MF_MASKS);
static_assert(offsetof(Subtable, mask) == OVSCLS_SUBTABLE_OFF_MASK);
static_assert(offsetof(PvectorImpl, size) == OVSCLS_PVECTOR_IMPL_OFF_SIZE);
static_assert(offsetof(PvectorImpl, vector) == OVSCLS_PVECTOR_IMPL_OFF_VECTOR);
static_assert(sizeof(PvectorEntry) == OVSCLS_PVECTOR_ENTRY_SIZE);

// Views of OVS's opaque structs through the mirrors.
inline Subtable* view(dpcls_subtable* s) { return reinterpret_cast<Subtable*>(s); }
inline const Subtable* view(const dpcls_subtable* s) {
    return reinterpret_cast<const Subtable*>(s);
}
inline Rule* view(dpcls_rule* r) { return reinterpret_cast<Rule*>(r); }
inline const FlowKey* view(const netdev_flow_key* k) { return reinterpret_cast<const FlowKey*>(k); }
inline FlowKey* view(netdev_flow_key* k) { return reinterpret_cast<FlowKey*>(k); }
inline netdev_flow_key* ovs(FlowKey* k) { return reinterpret_cast<netdev_flow_key*>(k); }
inline const netdev_flow_key* ovs(const FlowKey* k) {
    return reinterpret_cast<const netdev_flow_key*>(k);
}
inline dpcls_subtable* ovs(Subtable* s) { return reinterpret_cast<dpcls_subtable*>(s); }
inline dpcls_rule* ovs(Rule* r) { return reinterpret_cast<dpcls_rule*>(r); }
// The subtable a rule is filed in: rule->mask points at its mask member.
inline Subtable* subtable_of(const Rule* rule) {
    return reinterpret_cast<Subtable*>(reinterpret_cast<char*>(rule->mask) -
                                       offsetof(Subtable, mask));
}
inline Rule* rule_of(const CmapNode* node) {
    // cmap_node is the first member of dpcls_rule.
    return reinterpret_cast<Rule*>(const_cast<CmapNode*>(node));
}

}  // namespace ovscls
