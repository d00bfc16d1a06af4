/* ovs_bridge.c: the classifier's only translation unit that includes Open
 * vSwitch's private lib headers (the tests' reference/ovs_reference.c is
 * the other).  See ovs_bridge.h for the contract.
 *
 * Where dpif-netdev keeps a helper static (netdev_flow_mask_init,
 * netdev_flow_key_init_masked, the subtable constructor), the few lines are
 * repeated here on OVS's own primitives (flowmap, miniflow, hash_add64,
 * cmap, pvector), line for line, so that keys, masks and hashes are bit for
 * bit what ovs-vswitchd would build. */
#include <config.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cmap.h"
#include "dp-packet.h"
#if OVSCLS_OVS_VERSION >= 40000
#include "dpif-netdev-dpcls.h"
#include "dpif-netdev-flow.h"
#else
#include "dpif-netdev-lookup.h"
#include "dpif-netdev-private-dpcls.h"
#endif
#include "flow.h"
#include "hash.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "packets.h"
#include "pvector.h"
#include "util.h"

#include "classifier/ovs_bridge.h"
/* After OVS's cmap.h: the C++ side's declarations of OVS functions, which
 * C refuses here if one conflicts with OVS's own (ovs_functions.h says
 * why). */
#include "classifier/ovs_functions.h"

/* ---- The layout contract (ovs_abi.h), checked on OVS's real structs. ---- */
_Static_assert(FLOW_U64S == OVSCLS_FLOW_U64S, "FLOW_U64S");
_Static_assert(sizeof(struct flow) == OVSCLS_FLOW_U64S * 8, "struct flow");
_Static_assert(FLOWMAP_UNITS == OVSCLS_FLOWMAP_UNITS, "FLOWMAP_UNITS");
_Static_assert(FLOW_MAX_PACKET_U64S == OVSCLS_FLOW_MAX_PACKET_U64S, "u64s");
_Static_assert(NETDEV_MAX_BURST == OVSCLS_MAX_BURST, "NETDEV_MAX_BURST");
_Static_assert(sizeof(struct netdev_flow_key) == OVSCLS_KEY_SIZE, "key");
_Static_assert(offsetof(struct netdev_flow_key, mf) == OVSCLS_KEY_OFF_MF, "");
_Static_assert(offsetof(struct netdev_flow_key, buf) == OVSCLS_KEY_OFF_VALUES,
               "");
_Static_assert(sizeof(struct dpcls_rule) == OVSCLS_RULE_SIZE, "rule");
_Static_assert(offsetof(struct dpcls_rule, mask) == OVSCLS_RULE_OFF_MASK, "");
_Static_assert(offsetof(struct dpcls_rule, flow) == OVSCLS_RULE_OFF_FLOW, "");
_Static_assert(sizeof(struct dpcls_subtable) == OVSCLS_SUBTABLE_SIZE, "");
_Static_assert(offsetof(struct dpcls_subtable, rules)
               == OVSCLS_SUBTABLE_OFF_RULES, "");
_Static_assert(offsetof(struct dpcls_subtable, hit_cnt)
               == OVSCLS_SUBTABLE_OFF_HIT_CNT, "");
_Static_assert(offsetof(struct dpcls_subtable, mf_bits_set_unit0)
               == OVSCLS_SUBTABLE_OFF_U0, "");
_Static_assert(offsetof(struct dpcls_subtable, mf_bits_set_unit1)
               == OVSCLS_SUBTABLE_OFF_U1, "");
_Static_assert(offsetof(struct dpcls_subtable, lookup_func)
               == OVSCLS_SUBTABLE_OFF_LOOKUP_FUNC, "");
#if OVSCLS_SUBTABLE_HAS_LOOKUP_INFO
_Static_assert(offsetof(struct dpcls_subtable, lookup_func_info)
               == OVSCLS_SUBTABLE_OFF_LOOKUP_INFO, "");
#endif
_Static_assert(offsetof(struct dpcls_subtable, mf_masks)
               == OVSCLS_SUBTABLE_OFF_MF_MASKS, "");
_Static_assert(offsetof(struct dpcls_subtable, mask)
               == OVSCLS_SUBTABLE_OFF_MASK, "");
_Static_assert(offsetof(struct pvector_impl, size)
               == OVSCLS_PVECTOR_IMPL_OFF_SIZE, "");
_Static_assert(offsetof(struct pvector_impl, vector)
               == OVSCLS_PVECTOR_IMPL_OFF_VECTOR, "");
_Static_assert(sizeof(struct pvector_entry) == OVSCLS_PVECTOR_ENTRY_SIZE, "");
_Static_assert(sizeof(struct cmap_node) == sizeof(void *), "cmap_node");
_Static_assert(sizeof(struct cmap) == sizeof(void *), "cmap");
_Static_assert(sizeof(struct pvector) == 2 * sizeof(void *), "pvector");

/* The hash this build of the bridge compiles (lib/hash.h, with the flags of
 * the flavour: cmake/ovs-flavours.txt) is the one the build says the OVS lib
 * and the C++ mirror use. */
#if (defined(__SSE4_2__) && defined(__x86_64__)) \
    || (defined(__ARM_FEATURE_CRC32) && defined(__aarch64__))
_Static_assert(OVSCLS_HASH_CRC32 == 1, "OVSCLS_HASH_CRC32 vs the flavour's flags");
#else
_Static_assert(OVSCLS_HASH_CRC32 == 0, "OVSCLS_HASH_CRC32 vs the flavour's flags");
#endif

static const struct flow *
as_flow(const uint64_t flow[])
{
    return (const struct flow *) (const void *) flow;
}

/* ---- Keys and masks. ---- */

/* The tail of netdev_flow_mask_init(): hash over the values and the map. */
static void
mask_finish(struct netdev_flow_key *mask, size_t n)
{
    const uint64_t *values = miniflow_get_values(&mask->mf);
    uint32_t hash = 0;
    map_t map;

    for (size_t i = 0; i < n; i++) {
        hash = hash_add64(hash, values[i]);
    }
    FLOWMAP_FOR_EACH_MAP (map, mask->mf.map) {
        hash = hash_add64(hash, map);
    }
    mask->hash = hash_finish(hash, n * 8);
    mask->len = netdev_flow_key_size(n);
}

bool
ovsb_mask_init(struct netdev_flow_key *mask, const uint64_t flow[],
               const uint64_t wc[])
{
    uint64_t *dst = miniflow_values(&mask->mf);
    struct flowmap fmap;
    size_t idx, n = 0;

    flow_wc_map(as_flow(flow), &fmap);
    flowmap_init(&mask->mf.map);
    FLOWMAP_FOR_EACH_INDEX (idx, fmap) {
        uint64_t mask_u64 = wc[idx];

        if (mask_u64) {
            if (n == FLOW_MAX_PACKET_U64S) {
                return false;
            }
            flowmap_set(&mask->mf.map, idx, 1);
            dst[n++] = mask_u64;
        }
    }
    mask_finish(mask, n);
    return true;
}

void
ovsb_mask_init_raw(struct netdev_flow_key *mask, const uint64_t map[2],
                   const uint64_t values[], size_t n)
{
    mask->mf.map.bits[0] = map[0];
    mask->mf.map.bits[1] = map[1];
    if (n) {  /* memcpy() from a null 'values' is undefined even for 0 bytes. */
        memcpy(miniflow_values(&mask->mf), values, n * sizeof values[0]);
    }
    mask_finish(mask, n);
}

void
ovsb_key_init_masked(struct netdev_flow_key *dst, const uint64_t flow_[],
                     const struct netdev_flow_key *mask)
{
    const struct flow *flow = as_flow(flow_);
    uint64_t *dst_u64 = miniflow_values(&dst->mf);
    const uint64_t *mask_u64 = miniflow_get_values(&mask->mf);
    uint32_t hash = 0;
    uint64_t value;

    dst->len = mask->len;
    dst->mf = mask->mf; /* Copy maps. */

    FLOW_FOR_EACH_IN_MAPS (value, flow, mask->mf.map) {
        *dst_u64 = value & *mask_u64++;
        hash = hash_add64(hash, *dst_u64++);
    }
    dst->hash = hash_finish(hash,
                            (dst_u64 - miniflow_get_values(&dst->mf)) * 8);
}

void
ovsb_key_from_flow(struct netdev_flow_key *key, const uint64_t flow[])
{
    miniflow_map_init(&key->mf, as_flow(flow));
    miniflow_init(&key->mf, as_flow(flow));
    key->len = netdev_flow_key_size(miniflow_n_values(&key->mf));
    key->hash = 0;
}

void
ovsb_key_from_frame(struct netdev_flow_key *key, const void *frame,
                    size_t len, uint32_t in_port)
{
    struct dp_packet packet;

    dp_packet_use_const(&packet, frame, len);
    pkt_metadata_init(&packet.md, u32_to_odp(in_port));
    miniflow_extract(&packet, &key->mf);
    key->len = netdev_flow_key_size(miniflow_n_values(&key->mf));
    key->hash = 0;
    dp_packet_uninit(&packet);
}

void
ovsb_key_expand(const struct netdev_flow_key *key, uint64_t flow[])
{
    miniflow_expand(&key->mf, (struct flow *) (void *) flow);
}

/* ---- Subtables and rules. ---- */

struct dpcls_subtable *
ovsb_subtable_create(const struct netdev_flow_key *mask)
{
    struct dpcls_subtable *subtable;

    /* As dpcls_create_subtable(): room for the mask's values only. */
    subtable = xzalloc(sizeof *subtable - sizeof subtable->mask.mf + mask->len);
    cmap_init(&subtable->rules);
    subtable->hit_cnt = 0;
    memcpy(&subtable->mask, mask,
           offsetof(struct netdev_flow_key, mf) + mask->len);

    uint32_t unit0 = count_1bits(mask->mf.map.bits[0]);
    uint32_t unit1 = count_1bits(mask->mf.map.bits[1]);
    subtable->mf_bits_set_unit0 = unit0;
    subtable->mf_bits_set_unit1 = unit1;
    /* One extra word so that an empty mask still gets a valid pointer. */
    subtable->mf_masks = xmalloc(sizeof(uint64_t) * (unit0 + unit1 + 1));
    dpcls_flow_key_gen_masks(mask, subtable->mf_masks, unit0, unit1);
#if OVSCLS_SUBTABLE_HAS_LOOKUP_INFO
    atomic_init(&subtable->lookup_func, NULL);
    subtable->lookup_func_info = NULL;
#else
    subtable->lookup_func = NULL;  /* 4.0: a plain pointer, set at creation */
#endif
    return subtable;
}

struct subtable_destroy_aux {
    struct dpcls_subtable *subtable;
    void (*release)(void *);
    void *aux;
};

static void
subtable_destroy_cb(void *aux_)
{
    struct subtable_destroy_aux *aux = aux_;

    if (aux->release) {
        aux->release(aux->aux);
    }
    cmap_destroy(&aux->subtable->rules);
    free(aux->subtable->mf_masks);
    free(aux->subtable);
    free(aux);
}

void
ovsb_subtable_destroy_deferred(struct dpcls_subtable *subtable,
                               void (*release)(void *), void *aux_)
{
    struct subtable_destroy_aux *aux = xmalloc(sizeof *aux);

    ovs_assert(cmap_is_empty(&subtable->rules));
    aux->subtable = subtable;
    aux->release = release;
    aux->aux = aux_;
    ovsrcu_postpone(subtable_destroy_cb, aux);
}

struct dpcls_rule *
ovsb_rule_alloc(void)
{
    return xzalloc(sizeof(struct dpcls_rule));
}

void
ovsb_rule_free(struct dpcls_rule *rule)
{
    free(rule);
}

void
ovsb_rule_free_deferred(struct dpcls_rule *rule)
{
    ovsrcu_postpone(free, rule);
}

size_t
ovsb_subtable_insert(struct dpcls_subtable *subtable, struct dpcls_rule *rule)
{
    rule->mask = &subtable->mask;
    return cmap_insert(&subtable->rules, &rule->cmap_node, rule->flow.hash);
}

size_t
ovsb_subtable_remove(struct dpcls_subtable *subtable, struct dpcls_rule *rule)
{
    return cmap_remove(&subtable->rules, &rule->cmap_node, rule->flow.hash);
}

bool
ovsb_key_equal(const struct netdev_flow_key *a,
               const struct netdev_flow_key *b)
{
    return a->hash == b->hash && a->len == b->len
           && !memcmp(&a->mf, &b->mf, a->len);
}

struct dpcls_rule *
ovsb_subtable_find(const struct dpcls_subtable *subtable,
                   const struct netdev_flow_key *flow)
{
    struct dpcls_rule *rule;

    CMAP_FOR_EACH_WITH_HASH (rule, cmap_node, flow->hash, &subtable->rules) {
        if (ovsb_key_equal(&rule->flow, flow)) {
            return rule;
        }
    }
    return NULL;
}

size_t
ovsb_subtable_count(const struct dpcls_subtable *subtable)
{
    return cmap_count(&subtable->rules);
}

/* ---- pvector. ---- */

struct pvector *
ovsb_pvector_create(void)
{
    struct pvector *pvec = xmalloc(sizeof *pvec);
    pvector_init(pvec);
    return pvec;
}

void
ovsb_pvector_destroy(struct pvector *pvec)
{
    pvector_destroy(pvec);
    ovsrcu_postpone(free, pvec);
}

void
ovsb_pvector_insert(struct pvector *pvec, void *ptr, int priority)
{
    pvector_insert(pvec, ptr, priority);
}

void
ovsb_pvector_remove(struct pvector *pvec, void *ptr)
{
    pvector_remove(pvec, ptr);
}

void
ovsb_pvector_change_priority(struct pvector *pvec, void *ptr, int priority)
{
    pvector_change_priority(pvec, ptr, priority);
}

void
ovsb_pvector_publish(struct pvector *pvec)
{
    pvector_publish(pvec);
}
