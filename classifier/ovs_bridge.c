/* ovs_bridge.c: the only translation unit that includes Open vSwitch's
 * private lib headers.  See ovs_bridge.h for the contract.
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
#include "cpu.h"
#include "dp-packet.h"
#include "dpif-netdev-lookup.h"
#include "dpif-netdev-private-dpcls.h"
#include "flow.h"
#include "hash.h"
#include "odp-util.h"
#include "openvswitch/ofpbuf.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "packets.h"
#include "pvector.h"
#include "util.h"

#include "ovs_bridge.h"

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
_Static_assert(offsetof(struct dpcls_subtable, lookup_func_info)
               == OVSCLS_SUBTABLE_OFF_LOOKUP_INFO, "");
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

/* The hash this build of the bridge compiles is the hash of the OVS lib it
 * links: both are built with the flags of one flavour (CMakeLists.txt). */
#if defined(__SSE4_2__) && defined(__x86_64__)
_Static_assert(OVSCLS_HASH_CRC32 == 1, "OVSCLS_HASH_CRC32 vs -msse4.2");
#else
_Static_assert(OVSCLS_HASH_CRC32 == 0, "OVSCLS_HASH_CRC32 vs -msse4.2");
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
    memcpy(miniflow_values(&mask->mf), values, n * sizeof values[0]);
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

/* OVS 3.1 prints ct_tuple6() ports as src_port=/dst_port= but parses only
 * tp_src=/tp_dst= (shared/design/ovs-3.1-facts.md): rewrite before parsing. */
static void
rewrite_ct_tuple6_ports(char *s)
{
    static const char *from[] = { "src_port=", "dst_port=" };
    static const char *to[] = { "tp_src=", "tp_dst=" };

    for (int i = 0; i < 2; i++) {
        char *p;
        while ((p = strstr(s, from[i])) != NULL) {
            size_t from_len = strlen(from[i]), to_len = strlen(to[i]);
            memcpy(p, to[i], to_len);
            memmove(p + to_len, p + from_len, strlen(p + from_len) + 1);
        }
    }
}

int
ovsb_megaflow_parse(const char *text, uint64_t flow_[], uint64_t wc_[],
                    char *err, size_t err_len)
{
    struct flow *flow = (struct flow *) (void *) flow_;
    struct flow_wildcards *wc = (struct flow_wildcards *) (void *) wc_;
    struct ofpbuf key, mask;
    char *error = NULL;
    int ret = -1;

    BUILD_ASSERT(sizeof *wc == sizeof *flow);

    /* Drop "ufid:... " and everything from ", packets:" (or " actions:"). */
    char *s = xstrdup(text);
    char *start = s;
    if (!strncmp(start, "ufid:", 5)) {
        start += strcspn(start, " ");
        start += strspn(start, " ");
    }
    char *end = strstr(start, ", packets:");
    if (!end) {
        end = strstr(start, " actions:");
    }
    if (end) {
        *end = '\0';
    }
    rewrite_ct_tuple6_ports(start);

    ofpbuf_init(&key, 0);
    ofpbuf_init(&mask, 0);
    memset(flow, 0, sizeof *flow);
    memset(wc, 0, sizeof *wc);
    if (odp_flow_from_string(start, NULL, &key, &mask, &error)) {
        snprintf(err, err_len, "odp_flow_from_string: %s",
                 error ? error : "parse error");
    } else if (odp_flow_key_to_flow(key.data, key.size, flow, &error)
               == ODP_FIT_ERROR) {
        snprintf(err, err_len, "odp_flow_key_to_flow: %s",
                 error ? error : "does not fit");
    } else if (odp_flow_key_to_mask(mask.data, mask.size, wc, flow, &error)
               == ODP_FIT_ERROR) {
        snprintf(err, err_len, "odp_flow_key_to_mask: %s",
                 error ? error : "does not fit");
    } else {
        /* dp_netdev_flow_add(): the dpcls is per in_port, so the in_port
         * mask is wildcarded in the subtable mask. */
        wc->masks.in_port.odp_port = 0;
        ret = 0;
    }
    free(error);
    ofpbuf_uninit(&key);
    ofpbuf_uninit(&mask);
    free(s);
    return ret;
}

size_t
ovsb_frame_compose(const uint64_t flow[], void *buf, size_t buf_len)
{
    struct dp_packet packet;
    size_t len = 0;

    dp_packet_init(&packet, 0);
    flow_compose(&packet, as_flow(flow), NULL, 64);
    if (dp_packet_size(&packet) <= buf_len) {
        len = dp_packet_size(&packet);
        memcpy(buf, dp_packet_data(&packet), len);
    }
    dp_packet_uninit(&packet);
    return len;
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
    atomic_init(&subtable->lookup_func, NULL);
    subtable->lookup_func_info = NULL;
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

/* ---- OVS threads and OVS-RCU. ---- */

struct ovsb_thread {
    pthread_t thread;
    void (*fn)(void *);
    void *aux;
};

static void *
ovsb_thread_main(void *thread_)
{
    struct ovsb_thread *thread = thread_;
    thread->fn(thread->aux);
    return NULL;
}

ovsb_thread *
ovsb_thread_create(const char *name, void (*fn)(void *), void *aux)
{
    struct ovsb_thread *thread = xmalloc(sizeof *thread);
    thread->fn = fn;
    thread->aux = aux;
    thread->thread = ovs_thread_create(name, ovsb_thread_main, thread);
    return thread;
}

void
ovsb_thread_join(ovsb_thread *thread)
{
    xpthread_join(thread->thread, NULL);
    free(thread);
}

void
ovsb_rcu_postpone(void (*cb)(void *), void *aux)
{
    ovsrcu_postpone(cb, aux);
}

void
ovsb_rcu_quiesce(void)
{
    ovsrcu_quiesce();
}

void
ovsb_rcu_quiesce_start(void)
{
    ovsrcu_quiesce_start();
}

void
ovsb_rcu_quiesce_end(void)
{
    ovsrcu_quiesce_end();
}

void
ovsb_rcu_synchronize(void)
{
    ovsrcu_synchronize();
}

/* ---- OVS's own lookups. ---- */

ovsb_lookup_func
ovsb_ovs_generic_probe(uint32_t u0, uint32_t u1)
{
    return dpcls_subtable_generic_probe(u0, u1);
}

ovsb_lookup_func
ovsb_ovs_generic_runtime(void)
{
    /* (0, 0) is not among the fingerprints OVS specializes, so its probe
     * returns the generic function, which reads the counts from the
     * subtable at run time. */
    return dpcls_subtable_generic_probe(0, 0);
}

/* The condition under which dpif-netdev-lookup.c registers avx512_gather. */
#define OVSB_AVX512_GATHER_BUILT                                              \
    (__x86_64__ && HAVE_AVX512F && HAVE_LD_AVX512_GOOD && HAVE_AVX512BW      \
     && __SSE4_2__)

ovsb_lookup_func
ovsb_ovs_avx512_gather_probe(uint32_t u0, uint32_t u1)
{
#if OVSB_AVX512_GATHER_BUILT
    if (!cpu_has_isa(OVS_CPU_ISA_X86_AVX512F)
        || !cpu_has_isa(OVS_CPU_ISA_X86_BMI2)) {
        return NULL;
    }
    return dpcls_subtable_avx512_gather_probe__(
        u0, u1, cpu_has_isa(OVS_CPU_ISA_X86_VPOPCNTDQ));
#else
    (void) u0;
    (void) u1;
    return NULL;
#endif
}

int
ovsb_ovs_avx512_gather_built(void)
{
#if OVSB_AVX512_GATHER_BUILT
    return 1;
#else
    return 0;
#endif
}

uint32_t
ovsb_hash_add64(uint32_t hash, uint64_t data)
{
    return hash_add64(hash, data);
}

uint32_t
ovsb_hash_finish(uint32_t hash, uint32_t final)
{
    return hash_finish(hash, final);
}

int
ovsb_hash_is_crc32(void)
{
    return OVSCLS_HASH_CRC32;
}
