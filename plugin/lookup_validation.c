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
 * Fused lookups (the series' 'probe_fused', when it has it) are checked
 * the same way: the provider's lookup is handed to OVS behind one of
 * MAX_FUSED_SLOTS trampolines (OVS calls a fused lookup without context),
 * which runs it, then OVS's generic over the same subtables in the same
 * order for the keys it served, and compares the keys found and missed,
 * each key's rule and the lookups count; its exit line is "checked 'NAME'
 * (fused): N keys against OVS's generic over the same subtables, M
 * mismatches" (logged also each time N passes a power of two, so that a
 * switch killed before its exit leaves its counts; so for the others).  With every slot taken a probe
 * declines (the subtable loop serves, still checked), said once in the log.
 *
 * Keys on which the two disagree are looked up again by both: a flow
 * inserted or removed by another thread between the two lookups (a
 * revalidator deleting a megaflow, revalidator/purge) makes them disagree
 * once, and agree when asked again; OVS's own autovalidator, which has no
 * such second look, reports generic against generic then.  A key that
 * still disagrees is a mismatch (an error line, counted); one that agrees
 * the second time is counted apart as changed under the check, and said
 * on its own line beside the counts when there are any.
 *
 * Validation builds only (build-ovs.sh --validate): a lookup costs two
 * lookups and a cmap probe, and OVS's generic adds its hits to the
 * subtables' counts too (the ranking sees them doubled). */

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
    bool forgotten;            /* Leaves the map after a grace period. */
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
    atomic_uint64_t changed;   /* Disagreed once, agreed when rechecked. */
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

/* Takes 'r' out of the map and frees it: after a grace period (forget()),
 * and the free after another. */
static void
forget_cb(struct recorded *r)
{
    ovs_mutex_lock(&recorded_mutex);
    cmap_remove(&recorded_map, &r->node, subtable_hash(r->subtable));
    ovs_mutex_unlock(&recorded_mutex);
    ovsrcu_postpone(free, r);
}

/* 'subtable' is being destroyed (OVS's release with no function in use):
 * its record leaves the map only after an RCU grace period, since a lookup
 * that was already on the subtable (OVS destroys it at once, on whichever
 * thread removed its last flow, and frees it after a grace period) still
 * finds what to run.  The subtable's memory is freed after this callback
 * (postponed later on the same thread), so no new subtable records the
 * same address meanwhile. */
static void
forget(const struct dpcls_subtable *subtable)
{
    struct recorded *r;

    ovs_mutex_lock(&recorded_mutex);
    r = recorded_find(subtable);
    if (r && !r->forgotten) {
        r->forgotten = true;
        ovsrcu_postpone(forget_cb, r);
    }
    ovs_mutex_unlock(&recorded_mutex);
}

static void report_wrapped(size_t i);
static void report_fused(void);

/* True when a count that was 'before' and grew by 'added' passed a power
 * of two (1, 2, 4, ...).  The counts are then logged as the exit line
 * logs them: a switch stopped without its exit hooks (SIGKILL, a test
 * that kills it) still leaves what it checked in its log, in a few dozen
 * lines over its life; the last line of each lookup is its count. */
static bool
passed_power_of_two(uint64_t before, uint64_t added)
{
    return added && (!before || log_2_floor(before) != log_2_floor(before + added));
}

/* The keys of 'keys_map' on which a lookup's answer ('found', 'rules')
 * and OVS's generic's ('want', 'expected') differ: found by one only, or
 * found with other rules. */
static uint32_t
disagreeing(uint32_t found, struct dpcls_rule **rules, uint32_t want,
            struct dpcls_rule **expected)
{
    uint32_t bad = found ^ want;

    for (uint32_t m = found & want; m; m &= m - 1) {
        int i = raw_ctz(m);

        if (rules[i] != expected[i]) {
            bad |= 1u << i;
        }
    }
    return bad;
}

/* The keys of 'bad' on which 'func' and OVS's generic still disagree when
 * both look them up again (the keys that agree now saw the subtable change
 * between the first two lookups). */
static uint32_t
recheck(dpcls_subtable_lookup_func func, struct dpcls_subtable *subtable,
        uint32_t bad, const struct netdev_flow_key *keys[])
{
    struct dpcls_rule *again[NETDEV_MAX_BURST], *expected[NETDEV_MAX_BURST];
    uint32_t found, want;

    memset(again, 0, sizeof again);
    memset(expected, 0, sizeof expected);
    found = func(subtable, bad, keys, again);
    want = ovs_generic(subtable, bad, keys, expected);
    return disagreeing(found, again, want, expected) & bad;
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
         * recorded the subtable, and the record outlives the subtable's
         * destruction by a grace period (forget()). */
        VLOG_ERR_RL(&mismatch_rl, "validation: subtable %p has no recorded "
                    "lookup; OVS's generic serves it", subtable);
        return ovs_generic(subtable, keys_map, keys, rules);
    }
    atomic_read_explicit(&r->func, &func, memory_order_acquire);
    atomic_read_relaxed(&r->provider, &provider);

    found = func(subtable, keys_map, keys, rules);
    memset(expected, 0, sizeof expected);
    want = ovs_generic(subtable, keys_map, keys, expected);

    uint32_t bad = disagreeing(found, rules, want, expected);
    uint64_t before;

    if (bad) {
        uint32_t still = recheck(func, subtable, bad, keys);

        atomic_add_relaxed(&wrapped[provider].changed,
                           count_1bits(bad & ~still), &before);
        bad = still;
    }
    atomic_add_relaxed(&wrapped[provider].checked, count_1bits(keys_map),
                       &before);
    if (passed_power_of_two(before, count_1bits(keys_map))) {
        report_wrapped(provider);
    }
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

/* Fused lookups. */

#define MAX_FUSED_SLOTS 64

/* A fused lookup of the wrapped provider, as OVS holds it behind
 * trampoline K (fused_slots[K]).  Written under fused_mutex while the slot
 * is free, read by lookups under RCU while it is handed out. */
struct fused_slot {
    struct dpcls_fused_lookup inner;    /* The provider's. */
    struct dpcls_subtable *subtables[NETDEV_MAX_BURST];
    bool taken;
};

static struct fused_slot fused_slots[MAX_FUSED_SLOTS];
static struct ovs_mutex fused_mutex = OVS_MUTEX_INITIALIZER;
static const char *fused_name;
static bool (*fused_probe_inner)(struct dpcls_subtable *const subtables[],
                                 size_t n, struct dpcls_fused_lookup *out);
static void (*fused_release_inner)(const struct dpcls_fused_lookup *lookup);
static atomic_uint64_t fused_checked;
static atomic_uint64_t fused_mismatches;
static atomic_uint64_t fused_changed;

/* Runs slot 'slot''s fused lookup on 'keys_map' ('rules', '*found',
 * '*missed', '*lookups' its answer), then OVS's generic over its subtables
 * for the keys it served ('*want', '*want_lookups').  Returns the keys whose
 * answers differ (found, missed, rule), all of them when the lookups counts
 * differ. */
static uint32_t
fused_disagreeing(struct fused_slot *slot, uint32_t keys_map,
                  const struct netdev_flow_key *keys[],
                  struct dpcls_rule **rules, uint32_t *found,
                  uint32_t *missed, int *lookups, uint32_t *want,
                  int *want_lookups)
{
    struct dpcls_rule *expected[NETDEV_MAX_BURST];
    uint32_t served, left, bad;

    *missed = 0;
    *lookups = 0;
    *found = slot->inner.func(keys_map, keys, rules, missed, lookups);
    served = *found | *missed;
    memset(expected, 0, sizeof expected);
    left = served & keys_map;
    *want = 0;
    *want_lookups = 0;
    for (uint32_t i = 0; i < slot->inner.n_subtables && left; i++) {
        uint32_t f = ovs_generic(slot->subtables[i], left, keys, expected);

        *want |= f;
        *want_lookups += count_1bits(f) * (i + 1);
        left &= ~f;
    }
    bad = (*found ^ *want) | (served & ~keys_map) | (*found & *missed)
          | disagreeing(*found, rules, *want, expected);
    if (*lookups != *want_lookups) {
        bad |= served;
    }
    return bad;
}

/* A fused lookup behind a trampoline: the provider's, checked against
 * OVS's generic over the same subtables in the same order for the keys it
 * served (found or missed), then rechecked on the keys that disagree. */
static uint32_t
validated_fused(struct fused_slot *slot, uint32_t keys_map,
                const struct netdev_flow_key *keys[],
                struct dpcls_rule **rules, uint32_t *missed, int *lookups)
{
    uint32_t found, want, bad;
    int want_lookups;
    uint64_t before;

    bad = fused_disagreeing(slot, keys_map, keys, rules, &found, missed,
                            lookups, &want, &want_lookups);
    uint32_t served = found | *missed;
    if (bad) {
        struct dpcls_rule *again[NETDEV_MAX_BURST];
        uint32_t found2, missed2, want2;
        int lookups2, want_lookups2;
        uint32_t still;

        memset(again, 0, sizeof again);
        still = fused_disagreeing(slot, bad & keys_map, keys, again, &found2,
                                  &missed2, &lookups2, &want2,
                                  &want_lookups2);
        atomic_add_relaxed(&fused_changed, count_1bits(bad & ~still),
                           &before);
        bad = still;
    }
    atomic_add_relaxed(&fused_checked, count_1bits(served), &before);
    if (passed_power_of_two(before, count_1bits(served))) {
        report_fused();
    }
    if (bad) {
        atomic_add_relaxed(&fused_mismatches, count_1bits(bad), &before);
        VLOG_ERR_RL(&mismatch_rl, "validation: '%s' mismatches OVS's generic "
                    "over its %"PRIu32" subtables: keys 0x%08"PRIx32" found "
                    "0x%08"PRIx32" missed 0x%08"PRIx32" lookups %d, generic "
                    "found 0x%08"PRIx32" lookups %d", fused_name,
                    slot->inner.n_subtables, bad, found, *missed, *lookups,
                    want, want_lookups);
    }
    return found;
}

/* Trampoline R_C serves slot 8R + C. */
#define FUSED_TRAMPOLINE(R, C)                                              \
    static uint32_t                                                         \
    fused_trampoline_##R##_##C(uint32_t keys_map,                           \
                               const struct netdev_flow_key *keys[],        \
                               struct dpcls_rule **rules, uint32_t *missed, \
                               int *lookups)                                \
    {                                                                       \
        return validated_fused(&fused_slots[8 * R + C], keys_map, keys,     \
                               rules, missed, lookups);                     \
    }
#define FUSED_TRAMPOLINES_ROW(R)                                            \
    FUSED_TRAMPOLINE(R, 0) FUSED_TRAMPOLINE(R, 1) FUSED_TRAMPOLINE(R, 2)    \
    FUSED_TRAMPOLINE(R, 3) FUSED_TRAMPOLINE(R, 4) FUSED_TRAMPOLINE(R, 5)    \
    FUSED_TRAMPOLINE(R, 6) FUSED_TRAMPOLINE(R, 7)
FUSED_TRAMPOLINES_ROW(0) FUSED_TRAMPOLINES_ROW(1) FUSED_TRAMPOLINES_ROW(2)
FUSED_TRAMPOLINES_ROW(3) FUSED_TRAMPOLINES_ROW(4) FUSED_TRAMPOLINES_ROW(5)
FUSED_TRAMPOLINES_ROW(6) FUSED_TRAMPOLINES_ROW(7)

#define FUSED_TRAMPOLINE_NAMES(R)                                           \
    fused_trampoline_##R##_0, fused_trampoline_##R##_1,                     \
    fused_trampoline_##R##_2, fused_trampoline_##R##_3,                     \
    fused_trampoline_##R##_4, fused_trampoline_##R##_5,                     \
    fused_trampoline_##R##_6, fused_trampoline_##R##_7
static const dpcls_fused_lookup_func fused_trampolines[MAX_FUSED_SLOTS] = {
    FUSED_TRAMPOLINE_NAMES(0), FUSED_TRAMPOLINE_NAMES(1),
    FUSED_TRAMPOLINE_NAMES(2), FUSED_TRAMPOLINE_NAMES(3),
    FUSED_TRAMPOLINE_NAMES(4), FUSED_TRAMPOLINE_NAMES(5),
    FUSED_TRAMPOLINE_NAMES(6), FUSED_TRAMPOLINE_NAMES(7),
};
BUILD_ASSERT_DECL(MAX_FUSED_SLOTS == 8 * 8);

static bool
validated_probe_fused(struct dpcls_subtable *const subtables[], size_t n,
                      struct dpcls_fused_lookup *out)
{
    struct dpcls_fused_lookup inner = { .func = NULL };
    size_t k;

    out->func = NULL;
    if (!fused_probe_inner(subtables, n, &inner) || !inner.func) {
        return false;
    }
    if (inner.n_subtables > n || inner.n_subtables > NETDEV_MAX_BURST) {
        /* OVS would refuse it; so does the validation, with a reason. */
        VLOG_ERR_RL(&mismatch_rl, "validation: '%s' offered a fused lookup "
                    "of %"PRIu32" subtables for %"PRIuSIZE, fused_name,
                    inner.n_subtables, n);
        fused_release_inner(&inner);
        return false;
    }
    ovs_mutex_lock(&fused_mutex);
    for (k = 0; k < MAX_FUSED_SLOTS && fused_slots[k].taken; k++) {
        continue;
    }
    if (k < MAX_FUSED_SLOTS) {
        fused_slots[k].taken = true;
        fused_slots[k].inner = inner;
        memcpy(fused_slots[k].subtables, subtables,
               inner.n_subtables * sizeof *subtables);
    }
    ovs_mutex_unlock(&fused_mutex);
    if (k == MAX_FUSED_SLOTS) {
        static bool said;

        if (!said) {
            VLOG_WARN("validation: all %d fused slots taken: more fused "
                      "lookups of '%s' are declined (the subtable loop "
                      "serves, checked)", MAX_FUSED_SLOTS, fused_name);
            said = true;
        }
        fused_release_inner(&inner);
        return false;
    }
    out->func = fused_trampolines[k];
    out->n_subtables = inner.n_subtables;
    out->handle = &fused_slots[k];
    return true;
}

/* After a grace period: no lookup runs slot 'slot_' any more. */
static void
fused_slot_free(void *slot_)
{
    struct fused_slot *slot = slot_;

    ovs_mutex_lock(&fused_mutex);
    slot->taken = false;
    ovs_mutex_unlock(&fused_mutex);
}

static void
validated_release_fused(const struct dpcls_fused_lookup *lookup)
{
    struct fused_slot *slot = lookup->handle;

    fused_release_inner(&slot->inner);
    ovsrcu_postpone(fused_slot_free, slot);
}

bool
lookup_validation_wrap_fused(
    const char *name,
    bool (**probe_fused)(struct dpcls_subtable *const subtables[], size_t n,
                         struct dpcls_fused_lookup *out),
    void (**release_fused)(const struct dpcls_fused_lookup *lookup))
{
    if (fused_name || !n_wrapped) {
        return false;   /* One maker; after a subtable lookup (generic). */
    }
    fused_name = name;
    fused_probe_inner = *probe_fused;
    fused_release_inner = *release_fused;
    atomic_init(&fused_checked, 0);
    atomic_init(&fused_mismatches, 0);
    atomic_init(&fused_changed, 0);
    *probe_fused = validated_probe_fused;
    *release_fused = validated_release_fused;
    return true;
}

/* The line beside a count line when keys disagreed once and agreed when
 * rechecked. */
static void
report_changed(const char *name, const char *what, uint64_t changed)
{
    if (changed) {
        VLOG_INFO("rechecked '%s'%s: %"PRIu64" keys disagreed with OVS's "
                  "generic once and agreed when both looked them up again "
                  "(a flow inserted or removed between the two lookups)",
                  name, what, changed);
    }
}

static void
report_fused(void)
{
    uint64_t checked, mismatches, changed;

    atomic_read_relaxed(&fused_checked, &checked);
    atomic_read_relaxed(&fused_mismatches, &mismatches);
    atomic_read_relaxed(&fused_changed, &changed);
    VLOG_INFO("checked '%s' (fused): %"PRIu64" keys against OVS's "
              "generic over the same subtables, %"PRIu64" mismatches",
              fused_name, checked, mismatches);
    report_changed(fused_name, " (fused)", changed);
}

static void
report_wrapped(size_t i)
{
    uint64_t checked, mismatches, changed;

    atomic_read_relaxed(&wrapped[i].checked, &checked);
    atomic_read_relaxed(&wrapped[i].mismatches, &mismatches);
    atomic_read_relaxed(&wrapped[i].changed, &changed);
    VLOG_INFO("checked '%s': %"PRIu64" keys against OVS's generic, "
              "%"PRIu64" mismatches", wrapped[i].name, checked,
              mismatches);
    report_changed(wrapped[i].name, "", changed);
}

void
lookup_validation_report(void)
{
    if (fused_name) {
        report_fused();
    }
    for (size_t i = 0; i < n_wrapped; i++) {
        report_wrapped(i);
    }
}

static void
validation_report(void *aux OVS_UNUSED)
{
    lookup_validation_report();
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
    atomic_init(&w->changed, 0);
    *probe_subtable = hooks[n_wrapped].probe_subtable;
    *release = hooks[n_wrapped].release;
    n_wrapped++;
    return true;
}
