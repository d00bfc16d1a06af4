/* lookup_validation.c: see lookup_validation.h.
 *
 * How: each wrapped provider's probe hooks ask the provider as OVS would;
 * when it offers a function for a subtable, the function is recorded for
 * that subtable (a cmap keyed by the subtable's address, so that lookups
 * find it without a lock) and OVS is given validated_lookup() instead.
 * validated_lookup() runs the recorded function, then OVS's generic lookup
 * on the same keys, and compares the two: the keys found and each key's
 * rule.  The provider's 'release' hook is told of its own function, not of
 * validated_lookup(), so that what it keeps alive stays as without the
 * wrapper (jit_avx2 frees code that no subtable runs).
 *
 * Validation builds only (build-ovs.sh --validate): a lookup costs two
 * lookups and a cmap probe. */

#include <config.h>

#include "plugin/lookup_validation.h"

#include <string.h>

#include "cmap.h"
#include "fatal-signal.h"
#include "hash.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpcls_plugin_validation);

#define MAX_WRAPPED 8

/* What a provider gave a subtable: read by lookups under RCU. */
struct recorded {
    struct cmap_node node;
    const struct dpcls_subtable *subtable;
    ATOMIC(dpcls_subtable_lookup_func) func;
    ATOMIC(int) provider;      /* Index into 'wrapped'. */
};

struct wrapped {
    const char *name;
    dpcls_subtable_lookup_func (*probe)(uint32_t u0, uint32_t u1);
    dpcls_subtable_lookup_func (*probe_subtable)(
        struct dpcls_subtable *subtable, uint32_t hits);
    void (*release)(struct dpcls_subtable *subtable,
                    dpcls_subtable_lookup_func in_use);
    atomic_uint64_t checked;   /* Keys looked up by both. */
    atomic_uint64_t mismatches;
};

static struct wrapped wrapped[MAX_WRAPPED];
static size_t n_wrapped;
static struct cmap recorded_map = CMAP_INITIALIZER;
/* Writers of 'recorded_map': probes and releases of different dpcls run on
 * different threads. */
static struct ovs_mutex recorded_mutex = OVS_MUTEX_INITIALIZER;
static dpcls_subtable_lookup_func ovs_generic;
static struct vlog_rate_limit mismatch_rl = VLOG_RATE_LIMIT_INIT(5, 20);

static uint32_t
subtable_hash(const struct dpcls_subtable *subtable)
{
    return hash_pointer(subtable, 0);
}

static struct recorded *
recorded_find(const struct dpcls_subtable *subtable)
{
    struct recorded *r;

    CMAP_FOR_EACH_WITH_HASH (r, node, subtable_hash(subtable),
                             &recorded_map) {
        if (r->subtable == subtable) {
            return r;
        }
    }
    return NULL;
}

/* Records that provider 'provider' gave 'subtable' 'func'. */
static void
record(const struct dpcls_subtable *subtable, dpcls_subtable_lookup_func func,
       int provider)
{
    struct recorded *r;

    ovs_mutex_lock(&recorded_mutex);
    r = recorded_find(subtable);
    if (!r) {
        r = xzalloc(sizeof *r);
        r->subtable = subtable;
        atomic_init(&r->func, func);
        atomic_init(&r->provider, provider);
        cmap_insert(&recorded_map, &r->node, subtable_hash(subtable));
    } else {
        atomic_store_explicit(&r->func, func, memory_order_release);
        atomic_store_relaxed(&r->provider, provider);
    }
    ovs_mutex_unlock(&recorded_mutex);
}

static void
forget(const struct dpcls_subtable *subtable)
{
    struct recorded *r;

    ovs_mutex_lock(&recorded_mutex);
    r = recorded_find(subtable);
    if (r) {
        cmap_remove(&recorded_map, &r->node, subtable_hash(subtable));
        ovsrcu_postpone(free, r);
    }
    ovs_mutex_unlock(&recorded_mutex);
}

/* The lookup OVS runs for every subtable a wrapped provider serves: the
 * provider's function, checked against OVS's generic on the same keys. */
static uint32_t
validated_lookup(struct dpcls_subtable *subtable, uint32_t keys_map,
                 const struct netdev_flow_key *keys[],
                 struct dpcls_rule **rules)
{
    struct dpcls_rule *expected[NETDEV_MAX_BURST];
    struct recorded *r = recorded_find(subtable);
    dpcls_subtable_lookup_func func;
    uint32_t found, want;
    int provider;

    if (!r) {
        /* Cannot happen: OVS stores validated_lookup() only after a probe
         * recorded the subtable, and forgets it only at its destruction. */
        VLOG_ERR_RL(&mismatch_rl, "validation: subtable %p has no recorded "
                    "lookup; OVS's generic serves it", subtable);
        return ovs_generic(subtable, keys_map, keys, rules);
    }
    atomic_read_explicit(&r->func, &func, memory_order_acquire);
    atomic_read_relaxed(&r->provider, &provider);

    found = func(subtable, keys_map, keys, rules);
    memset(expected, 0, sizeof expected);
    want = ovs_generic(subtable, keys_map, keys, expected);

    uint32_t bad = found ^ want;
    for (uint32_t m = found & want; m; m &= m - 1) {
        int i = raw_ctz(m);

        if (rules[i] != expected[i]) {
            bad |= 1u << i;
        }
    }
    uint64_t before;

    atomic_add_relaxed(&wrapped[provider].checked, count_1bits(keys_map),
                       &before);
    if (bad) {
        atomic_add_relaxed(&wrapped[provider].mismatches, count_1bits(bad),
                           &before);
        VLOG_ERR_RL(&mismatch_rl, "validation: '%s' mismatches OVS's generic "
                    "on subtable (%"PRIu8",%"PRIu8"): keys 0x%08"PRIx32
                    " found 0x%08"PRIx32", generic 0x%08"PRIx32,
                    wrapped[provider].name, subtable->mf_bits_set_unit0,
                    subtable->mf_bits_set_unit1, bad, found, want);
    }
    /* OVS goes on with the provider's answer: a mismatch is reported, and
     * the packets see what the provider found, as without validation. */
    return found;
}

static dpcls_subtable_lookup_func
validated_probe(int provider, struct dpcls_subtable *subtable, uint32_t hits)
{
    const struct wrapped *w = &wrapped[provider];
    dpcls_subtable_lookup_func f;

    f = w->probe_subtable
        ? w->probe_subtable(subtable, hits)
        : w->probe(subtable->mf_bits_set_unit0, subtable->mf_bits_set_unit1);
    if (!f) {
        return NULL;
    }
    record(subtable, f, provider);
    return validated_lookup;
}

static void
validated_release(int provider, struct dpcls_subtable *subtable,
                  dpcls_subtable_lookup_func in_use)
{
    const struct wrapped *w = &wrapped[provider];

    if (!in_use) {
        forget(subtable);
    } else if (in_use == validated_lookup) {
        struct recorded *r = recorded_find(subtable);

        if (r) {
            atomic_read_relaxed(&r->func, &in_use);
        }
    }
    if (w->release) {
        w->release(subtable, in_use);
    }
}

/* One pair of hooks per wrapped provider: OVS's hooks carry no context. */
#define WRAPPER(N)                                                          \
    static dpcls_subtable_lookup_func                                       \
    probe_subtable_##N(struct dpcls_subtable *subtable, uint32_t hits)      \
    {                                                                       \
        return validated_probe(N, subtable, hits);                          \
    }                                                                       \
    static void                                                             \
    release_##N(struct dpcls_subtable *subtable,                            \
                dpcls_subtable_lookup_func in_use)                          \
    {                                                                       \
        validated_release(N, subtable, in_use);                             \
    }
WRAPPER(0) WRAPPER(1) WRAPPER(2) WRAPPER(3)
WRAPPER(4) WRAPPER(5) WRAPPER(6) WRAPPER(7)

static const struct {
    dpcls_subtable_lookup_func (*probe_subtable)(struct dpcls_subtable *,
                                                 uint32_t);
    void (*release)(struct dpcls_subtable *, dpcls_subtable_lookup_func);
} hooks[MAX_WRAPPED] = {
    { probe_subtable_0, release_0 }, { probe_subtable_1, release_1 },
    { probe_subtable_2, release_2 }, { probe_subtable_3, release_3 },
    { probe_subtable_4, release_4 }, { probe_subtable_5, release_5 },
    { probe_subtable_6, release_6 }, { probe_subtable_7, release_7 },
};

static void
validation_report(void *aux OVS_UNUSED)
{
    for (size_t i = 0; i < n_wrapped; i++) {
        uint64_t checked, mismatches;

        atomic_read_relaxed(&wrapped[i].checked, &checked);
        atomic_read_relaxed(&wrapped[i].mismatches, &mismatches);
        VLOG_INFO("checked '%s': %"PRIu64" keys against OVS's generic, "
                  "%"PRIu64" mismatches", wrapped[i].name, checked,
                  mismatches);
    }
}

bool
lookup_validation_wrap(
    const char *name,
    dpcls_subtable_lookup_func (*probe)(uint32_t u0, uint32_t u1),
    dpcls_subtable_lookup_func (**probe_subtable)(
        struct dpcls_subtable *subtable, uint32_t hits),
    void (**release)(struct dpcls_subtable *subtable,
                     dpcls_subtable_lookup_func in_use))
{
    struct wrapped *w;

    if (n_wrapped == MAX_WRAPPED) {
        return false;
    }
    if (!n_wrapped) {
        /* (0, 0) is none of OVS's specialized fingerprints: the probe gives
         * the run-time generic, which reads the counts from the subtable. */
        ovs_generic = dpcls_subtable_lookup_probe(0, 0);
        fatal_signal_add_hook(validation_report, NULL, NULL, true);
    }
    w = &wrapped[n_wrapped];
    w->name = name;
    w->probe = probe;
    w->probe_subtable = *probe_subtable;
    w->release = *release;
    atomic_init(&w->checked, 0);
    atomic_init(&w->mismatches, 0);
    *probe_subtable = hooks[n_wrapped].probe_subtable;
    *release = hooks[n_wrapped].release;
    n_wrapped++;
    return true;
}
