/* ovs_registration.c: the plugin's lookups, registered with ovs-vswitchd.
 *
 * OVS 3.x (with the series of patches/) keeps a table of dpcls lookup
 * implementations that a library may add to before the datapath starts:
 * dpcls_subtable_lookup_register().  OVS 4.0 removed that table; its series
 * (patches/4.0) adds lookup providers instead:
 * dpcls_lookup_provider_register(), the same hooks by the same names, so
 * that one constructor serves both (see plugin_entry below).  This file's
 * constructor adds the plugin's lookups, and connects the JIT to OVS: its
 * log lines go to VLOG,
 * its events to coverage counters, its settings come from other_config
 * ("dpcls-jit*"), and its report is `ovs-appctl dpcls-plugin/jit-show`.
 *
 *   specialized  lookups compiled for fixed miniflow fingerprints;
 *                declines every other fingerprint
 *   runtime      the same algorithm with run-time block counts; serves
 *                any fingerprint
 *   jit_avx2     code generated per subtable once it is hot (x86-64; in
 *                other builds it declines every subtable, saying why once)
 *   jit_fused    no subtable lookup (declines every subtable): a lookup
 *                generated over a port's top-ranked subtables once they
 *                run jit_avx2 code (OVS's 'probe_fused'); prio-set 0 is off
 *   tail_index   no subtable lookup either: an index over each port's
 *                subtables after its first ones (tail/tuple_pruning.hpp,
 *                OVS's tail hooks), so that a flood of masks does not make
 *                every packet probe each; prio-set 0 is off
 *
 * Their priorities are 0 (OVS's own defaults stand; prio-set switches)
 * unless the plugin is built with OVSCLS_PLUGIN_DEFAULT, which makes them
 * the defaults, above OVS's generic at 1: the plugin column of
 * classifier/lookup_table.h (jit_fused and tail_index above 0: on).  On 4.0 a provider above 0
 * comes before OVS's own lookups, and dpif-netdev/lookup-provider-set
 * switches.
 *
 * OVS refuses them all, with a log line, if the plugin hashes differently
 * from it (built for the other hash flavour): they would miss every packet.
 *
 * This is the plugin's one file that includes OVS's headers: it is
 * compiled against the patched tree it is linked into (build-ovs.sh links
 * the whole archive into ovs-vswitchd, as nothing in OVS refers to it). */

#include <config.h>

#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "coverage.h"
#if OVSCLS_OVS_VERSION >= 40000
#include "dpif-netdev-dpcls-provider.h"
#else
#include "dpif-netdev-lookup.h"
#endif
#include "fatal-signal.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "smap.h"
#include "unixctl.h"
#include "util.h"
#include "classifier/lookup_table.h"
/* The C++ side's entry points (ovscls_plugin.h). */
#include "plugin/ovscls_plugin.h"
#ifdef OVSCLS_PLUGIN_VALIDATE
#include "plugin/lookup_validation.h"
#endif

VLOG_DEFINE_THIS_MODULE(dpcls_plugin);

/* One stem, dpcls_plugin, for what the plugin adds to OVS: this log module,
 * these counters, the dpcls-plugin/ commands, the JIT's thread. */
COVERAGE_DEFINE(dpcls_plugin_jit_compile);
COVERAGE_DEFINE(dpcls_plugin_jit_decline);
COVERAGE_DEFINE(dpcls_plugin_jit_tier_up);
COVERAGE_DEFINE(dpcls_plugin_fused_compile);
COVERAGE_DEFINE(dpcls_plugin_fused_decline);

/* What the series of the OVS release this is built for has: 3.x registers
 * lookup implementations in OVS's registry, with every hook; 4.0, which
 * removed the registry, registers lookup providers, whose struct grows with
 * the series' patches, each layout named by its size: the fused hooks came
 * with DPCLS_LOOKUP_PROVIDER_SIZE_V2, the tail hooks with _V3.  A lookup
 * whose hooks the series lacks is not registered. */
#if OVSCLS_OVS_VERSION >= 40000
typedef struct dpcls_lookup_provider plugin_entry;
#define plugin_register dpcls_lookup_provider_register
#define plugin_set_prio dpcls_lookup_provider_set_prio
#ifdef DPCLS_LOOKUP_PROVIDER_SIZE_V2
#define PLUGIN_HAS_FUSED 1
#else
#define PLUGIN_HAS_FUSED 0
#endif
#ifdef DPCLS_LOOKUP_PROVIDER_SIZE_V3
#define PLUGIN_HAS_TAIL 1
#else
#define PLUGIN_HAS_TAIL 0
#endif
#else
typedef struct dpcls_subtable_lookup_info_t plugin_entry;
#define plugin_register dpcls_subtable_lookup_register
#define plugin_set_prio dpcls_subtable_set_prio
#define PLUGIN_HAS_FUSED 1
#define PLUGIN_HAS_TAIL 1
#endif

#if defined(OVSCLS_PLUGIN_DEFAULT) || defined(OVSCLS_PLUGIN_VALIDATE)
/* The plugin's defaults: classifier/lookup_table.h. */
enum { JIT_PRIO = OVSCLS_PLUGIN_PRIO_jit_avx2,
       SPECIALIZED_PRIO = OVSCLS_PLUGIN_PRIO_specialized,
       RUNTIME_PRIO = OVSCLS_PLUGIN_PRIO_runtime,
       FUSED_PRIO = OVSCLS_PLUGIN_PRIO_jit_fused,
       TAIL_PRIO = OVSCLS_PLUGIN_PRIO_tail_index };
#ifdef OVSCLS_PLUGIN_VALIDATE
/* The validation mode (4.0) checks the subtable lookups and the fused
 * lookups against OVS's generic (lookup_validation.h), and the tail index
 * against OVS's loop, serving every position of every port that has two
 * subtables or more, as in autovalidator builds below. */
#define TAIL_VALIDATE 1
#endif
#elif defined(DPCLS_AUTOVALIDATOR_DEFAULT)
/* An OVS built with the autovalidator checks every subtable lookup that
 * runs; the tail index is no subtable lookup, so the plugin checks it
 * itself there: it serves every position of every port that has two
 * subtables or more (head 0, minimum 2: a port's first subtable alone
 * keeps the testsuite's subtable-show outputs as they are) and each of its
 * answers is compared with OVS's loop over the same subtables
 * (ovscls_plugin_tail_validate()). */
enum { JIT_PRIO = 0, SPECIALIZED_PRIO = 0, RUNTIME_PRIO = 0, FUSED_PRIO = 0,
       TAIL_PRIO = 1 };
#define TAIL_VALIDATE 1
#else
enum { JIT_PRIO = 0, SPECIALIZED_PRIO = 0, RUNTIME_PRIO = 0, FUSED_PRIO = 0,
       TAIL_PRIO = 0 };
#endif

/* The autovalidator mode of the project's test builds (3.x; CMake's
 * OVSCLS_PLUGIN_TEST_MODES, patches/build-ovs.sh --plugin-default): with
 * OVSCLS_PLUGIN_TEST_MODE=autovalidator in ovs-vswitchd's environment, the
 * build behaves as an --enable-autovalidator build of the plugin without
 * its defaults (the branch above): the plugin's lookups at priority 0, the
 * tail index at 1 and checked against OVS's loop, and OVS's autovalidator
 * above all (set at the first other_config, plugin_set_config()).  So that
 * one build serves both of tests/vswitchd/run.sh's testsuite runs (a second
 * build of OVS costs ~200 s of 2 cores even when ccache has every object).
 * Read once, at registration; any other non-empty value is refused with a
 * warning once logging is up, and the build's own defaults stand.  Not in
 * the Debian packages, nor in 4.0 builds (no autovalidator there). */
#if defined(OVSCLS_PLUGIN_TEST_MODES) && OVSCLS_OVS_VERSION < 40000 \
    && defined(OVSCLS_PLUGIN_DEFAULT) && !defined(OVSCLS_PLUGIN_VALIDATE)
#define PLUGIN_HAS_TEST_MODES 1
#else
#define PLUGIN_HAS_TEST_MODES 0
#endif
static bool autovalidator_mode;     /* OVSCLS_PLUGIN_TEST_MODE=autovalidator */
static const char *bad_test_mode;   /* Another value, warned about later. */

/* Whether the tail index checks each of its answers against OVS's loop
 * (and serves from the first positions, so that the testsuite exercises
 * it): in validating builds, and in the autovalidator mode. */
#if defined(TAIL_VALIDATE) || PLUGIN_HAS_TEST_MODES
#define PLUGIN_CAN_VALIDATE_TAIL 1
#else
#define PLUGIN_CAN_VALIDATE_TAIL 0
#endif
static bool
tail_validating(void)
{
#ifdef TAIL_VALIDATE
    return true;
#else
    return autovalidator_mode;
#endif
}

/* The tail index's defaults: head 0 and minimum 2 while validating (a
 * port's first subtable alone keeps the testsuite's subtable-show outputs
 * as they are), else head 16 and minimum 32. */
static unsigned long long
tail_default_head(void)
{
    return tail_validating() ? 0 : 16;
}

static unsigned long long
tail_default_min_tail(void)
{
    return tail_validating() ? 2 : 32;
}

#if PLUGIN_HAS_TAIL
/* tail_index serves no subtable itself. */
static dpcls_subtable_lookup_func
tail_probe(uint32_t u0 OVS_UNUSED, uint32_t u1 OVS_UNUSED)
{
    return NULL;
}

/* Parses other_config's "dpcls-tail*" keys into '*on', '*head' and
 * '*min_tail'; a message in '*error' (malloc'ed) for the first bad one. */
static bool
tail_parse_config(const struct smap *other_config, bool *on,
                  unsigned long long *head, unsigned long long *min_tail,
                  char **error)
{
    const struct smap_node *node;

    *on = true;
    *head = tail_default_head();
    *min_tail = tail_default_min_tail();
    SMAP_FOR_EACH (node, other_config) {
        const char *key = node->key, *value = node->value;

        if (strncmp(key, "dpcls-tail", strlen("dpcls-tail"))) {
            continue;
        }
        if (!strcmp(key, "dpcls-tail")) {
            if (strcmp(value, "true") && strcmp(value, "false")) {
                *error = xasprintf("other_config:%s=\"%s\" is not true or "
                                   "false", key, value);
                return false;
            }
            *on = !strcmp(value, "true");
        } else if (!strcmp(key, "dpcls-tail-head")) {
            if (!str_to_ullong(value, 10, head) || *head > 255) {
                *error = xasprintf("other_config:%s=\"%s\" is not a number "
                                   "from 0 to 255", key, value);
                return false;
            }
        } else if (!strcmp(key, "dpcls-tail-min-subtables")) {
            if (!str_to_ullong(value, 10, min_tail) || !*min_tail
                || *min_tail > 65535) {
                *error = xasprintf("other_config:%s=\"%s\" is not a number "
                                   "from 1 to 65535", key, value);
                return false;
            }
        } else {
            *error = xasprintf("other_config:%s is no tail_index setting "
                               "(dpcls-tail, dpcls-tail-head, "
                               "dpcls-tail-min-subtables)", key);
            return false;
        }
    }
    return true;
}

#if PLUGIN_CAN_VALIDATE_TAIL
static struct vlog_rate_limit tail_mismatch_rl = VLOG_RATE_LIMIT_INIT(5, 20);

/* The validation mode's report of a mismatch (any thread): an error, which
 * OVS's testsuite fails on. */
static void
tail_mismatch(const char *what)
{
    VLOG_ERR_RL(&tail_mismatch_rl, "%s", what);
}

/* Logs what the validation mode checked so far: as the keys checked pass
 * each power of two (any thread), and at exit (as the autovalidator does
 * for the subtable lookups).  The last line is the count. */
static void
tail_validation_progress(uint64_t checked, uint64_t mismatched)
{
    VLOG_INFO("checked 'tail_index': %"PRIu64" keys against OVS's loop over "
              "the tail, %"PRIu64" mismatches", checked, mismatched);
}

static void
tail_validation_report(void *aux OVS_UNUSED)
{
    uint64_t checked, mismatched, rechecked;

    ovscls_plugin_tail_validated(&checked, &mismatched, &rechecked);
    tail_validation_progress(checked, mismatched);
    if (rechecked) {
        VLOG_INFO("rechecked 'tail_index': %"PRIu64" keys disagreed with OVS's "
                  "loop once and agreed when both looked them up again (a flow "
                  "inserted or removed between the two lookups)", rechecked);
    }
}
#endif

/* Applies other_config's "dpcls-tail*" keys, all of them each time (a key
 * that is gone goes back to its default): "dpcls-tail" (true/false,
 * default true), "dpcls-tail-head" (most positions left to the loop and
 * the lookups in front, 0-255, default 16; 0 in validating builds) and
 * "dpcls-tail-min-subtables" (serve only with this many after them,
 * 1-65535, default 32; 2 in validating builds).  Off takes
 * effect at each PMD's next burst, the others at each port's next
 * ranking.  A bad value, or a "dpcls-tail-" key that is no setting, turns
 * the index off until it is fixed (fail closed: OVS's loop does all, as
 * without the index): a warning; a change: an info line. */
static bool tail_on = true;  /* What tail_set_config() applied last... */
static unsigned long long tail_head, tail_min_tail;  /* ...set at start. */

static void
tail_set_config(const struct smap *other_config)
{
    bool last_on = tail_on;
    unsigned long long last_head = tail_head, last_min_tail = tail_min_tail;
    unsigned long long head, min_tail;
    char *error = NULL;
    bool on;

#if PLUGIN_CAN_VALIDATE_TAIL
    static bool report_added;

    if (tail_validating() && !report_added) {
        fatal_signal_add_hook(tail_validation_report, NULL, NULL, true);
        report_added = true;
    }
#endif

    if (!tail_parse_config(other_config, &on, &head, &min_tail, &error)) {
        VLOG_WARN("%s; tail_index is OFF until it is fixed", error);
        free(error);
        ovscls_plugin_tail_configure(false, last_head, last_min_tail);
        tail_on = false;
        return;
    }
    if (on != last_on || head != last_head || min_tail != last_min_tail) {
        VLOG_INFO("tail_index: %s, head %llu, served with %llu or more "
                  "subtables after it", on ? "on" : "off", head, min_tail);
    }
    ovscls_plugin_tail_configure(on, head, min_tail);
    tail_on = on;
    tail_head = head;
    tail_min_tail = min_tail;
}

#endif /* PLUGIN_HAS_TAIL */

#if PLUGIN_HAS_FUSED
/* jit_fused's hooks (OVS's dpcls_fused_lookup_func contract): the C++ side
 * hands out the function as a pointer with the handle that releases it. */
static bool
fused_probe(struct dpcls_subtable *const subtables[], size_t n,
            struct dpcls_fused_lookup *out)
{
    void *func = ovscls_plugin_fused_probe(subtables, n, &out->n_subtables,
                                           &out->handle);

    out->func = (dpcls_fused_lookup_func) func;
    return func != NULL;
}

static void
fused_release(const struct dpcls_fused_lookup *lookup)
{
    ovscls_plugin_fused_release(lookup->handle);
}

#endif /* PLUGIN_HAS_FUSED */

/* The JIT's decline lines (once per reason). */
static void
jit_log(const char *line)
{
    VLOG_INFO("%s", line);
}

/* The JIT's events, as coverage counters.  Compiles are counted on the
 * JIT's compiler thread, which runs no loop that would fold its counters
 * into the totals: hence coverage_try_clear() here. */
static void
jit_event(enum ovscls_plugin_jit_event kind, unsigned int n)
{
    switch (kind) {
    case OVSCLS_PLUGIN_JIT_COMPILE:
        COVERAGE_ADD(dpcls_plugin_jit_compile, n);
        break;
    case OVSCLS_PLUGIN_JIT_DECLINE:
        COVERAGE_ADD(dpcls_plugin_jit_decline, n);
        break;
    case OVSCLS_PLUGIN_JIT_TIER_UP:
        COVERAGE_ADD(dpcls_plugin_jit_tier_up, n);
        break;
    case OVSCLS_PLUGIN_FUSED_COMPILE:
        COVERAGE_ADD(dpcls_plugin_fused_compile, n);
        break;
    case OVSCLS_PLUGIN_FUSED_DECLINE:
        COVERAGE_ADD(dpcls_plugin_fused_decline, n);
        break;
    }
    coverage_try_clear();
}

/* Validation builds only (OVSCLS_PLUGIN_VALIDATE, never an operator's
 * switch): OVSCLS_JIT_HOT_HITS in the switch's environment stands in for
 * other_config's "dpcls-jit-hot-hits" when that is not set, so that a
 * testsuite whose switches it does not configure (OVN's, tests/ovn/run.sh)
 * can have subtables compiled after a few packets.  Returns the value, or
 * NULL. */
static const char *
jit_test_hot_hits(const struct smap *other_config OVS_UNUSED)
{
#ifdef OVSCLS_PLUGIN_VALIDATE
    if (!smap_get(other_config, "dpcls-jit-hot-hits")) {
        return getenv("OVSCLS_JIT_HOT_HITS");
    }
#endif
    return NULL;
}

/* Applies other_config's "dpcls-jit*" keys, all of them each time (a key
 * that is gone goes back to its default).  A bad value, or a "dpcls-jit-"
 * key that is no setting, turns the JIT off until it is fixed: a warning;
 * a valid change: an info line. */
static void
jit_set_config(const struct smap *other_config)
{
    const char *keys[16], *values[16];
    const struct smap_node *node;
    const char *test_hot_hits = jit_test_hot_hits(other_config);
    char *message = NULL;
    size_t n = 0;

    if (test_hot_hits) {
        keys[n] = "dpcls-jit-hot-hits";
        values[n] = test_hot_hits;
        n++;
    }
    SMAP_FOR_EACH (node, other_config) {
        if (!strncmp(node->key, "dpcls-jit", strlen("dpcls-jit"))) {
            if (n == ARRAY_SIZE(keys)) {
                VLOG_WARN("more than %"PRIuSIZE" dpcls-jit keys in "
                          "other_config; the rest are ignored", n);
                break;
            }
            keys[n] = node->key;
            values[n] = node->value;
            n++;
        }
    }
    if (ovscls_plugin_jit_configure(keys, values, n, &message)) {
        VLOG_WARN("%s", message ? message : "jit_avx2: bad settings");
    } else if (message) {
        VLOG_INFO("%s", message);
    }
    free(message);
}

static void
jit_show(struct unixctl_conn *conn, int argc OVS_UNUSED,
         const char *argv[] OVS_UNUSED, void *aux OVS_UNUSED)
{
    char *text = ovscls_plugin_jit_show();

    if (text) {
        unixctl_command_reply(conn, text);
    } else {
        unixctl_command_reply_error(conn, "jit_avx2: no memory for the "
                                    "report");
    }
    free(text);
}

#if PLUGIN_HAS_TAIL
static void
tail_show(struct unixctl_conn *conn, int argc OVS_UNUSED,
          const char *argv[] OVS_UNUSED, void *aux OVS_UNUSED)
{
    char *text = ovscls_plugin_tail_show();

    if (text) {
        unixctl_command_reply(conn, text);
    } else {
        unixctl_command_reply_error(conn, "tail_index: no memory");
    }
    free(text);
}
#endif

/* The plugin's lookups, as registered (the constructor below) and as
 * other_config:dpcls-plugin sets them back (plugin_set_config()). */
static void plugin_set_config(const struct smap *other_config);

static const plugin_entry lookups[] = {
    { .prio = SPECIALIZED_PRIO,
      .probe = ovscls_plugin_specialized_probe,
      .set_config = plugin_set_config,
      .name = OVSCLS_LOOKUP_NAME_specialized },
    { .prio = RUNTIME_PRIO,
      .probe = ovscls_plugin_runtime_probe,
      .name = OVSCLS_LOOKUP_NAME_runtime },
    { .prio = JIT_PRIO,
      .probe = ovscls_plugin_jit_probe,
      .probe_subtable = ovscls_plugin_jit_probe_subtable,
      .release = ovscls_plugin_jit_release,
      .ranking = ovscls_plugin_jit_ranking,
      .set_config = jit_set_config,
      .name = OVSCLS_LOOKUP_NAME_jit_avx2 },
#if PLUGIN_HAS_FUSED
    { .prio = FUSED_PRIO,
      .probe = ovscls_plugin_fused_probe_counts,
      .probe_fused = fused_probe,
      .release_fused = fused_release,
      .fused_ready = ovscls_plugin_fused_ready,
      .name = OVSCLS_LOOKUP_NAME_jit_fused },
#endif
#if PLUGIN_HAS_TAIL
    { .prio = TAIL_PRIO,
      .probe = tail_probe,
      .set_config = tail_set_config,
      .tail_create = ovscls_plugin_tail_create,
      .tail_destroy = ovscls_plugin_tail_destroy,
      .tail_subtable = ovscls_plugin_tail_subtable,
      .tail_rule = ovscls_plugin_tail_rule,
      .tail_ranking = ovscls_plugin_tail_ranking,
      .tail_view = ovscls_plugin_tail_view,
      .tail_lookup = ovscls_plugin_tail_lookup,
      .name = OVSCLS_LOOKUP_NAME_tail_index },
#endif
};

/* other_config:dpcls-plugin, the persistent way back to OVS's own lookups:
 * "false" sets every lookup of the table below to priority 0 on every thread
 * (as in a build without the plugin's defaults: OVS's own serve), "true" or
 * no key sets them back to the defaults they registered with.  Any other
 * value keeps the plugin off, with a warning (fail closed, like the
 * dpcls-jit* keys).  Applied when its value changes, so that a priority set
 * live with prio-set stands until then.  On 4.0, while the key keeps the
 * plugin off, it is applied again when lookup-provider-priorities changes
 * (which sets every provider, and is applied before this: the key wins);
 * while the plugin is on, that list stands.  The series re-probes every
 * subtable when this changes a priority (3.x patch 11, 4.0 patch 7). */
static char *applied_value;  /* other_config:dpcls-plugin, NULL: none. */

/* The priority 'entry' registered with: its own, or in the autovalidator
 * mode of a test build 0 (the tail index 1: it checks itself). */
static uint8_t
default_prio(const plugin_entry *entry)
{
    if (autovalidator_mode) {
#if PLUGIN_HAS_TAIL
        return entry->tail_create ? 1 : 0;
#else
        return 0;
#endif
    }
    return entry->prio;
}

/* The autovalidator mode's part that needs OVS's logging and configuration
 * up (the first other_config, before the first packet; the series
 * re-probes every subtable when a priority changes): OVS's autovalidator
 * above every lookup, as --enable-autovalidator makes it, once (prio-set
 * may move it afterwards); and the warning about an unknown mode. */
static void
test_mode_start(void)
{
    static bool started;

    if (started) {
        return;
    }
    started = true;
    if (bad_test_mode) {
        VLOG_WARN("OVSCLS_PLUGIN_TEST_MODE=\"%s\" is not \"autovalidator\"; "
                  "ignored (the build's defaults stand)", bad_test_mode);
    }
    if (autovalidator_mode) {
        VLOG_INFO("OVSCLS_PLUGIN_TEST_MODE=autovalidator: OVS's "
                  "autovalidator above all, the plugin's lookups at 0, "
                  "tail_index checked against OVS's loop");
        plugin_set_prio("autovalidator", 255);
    }
}

/* Validation builds: every checked lookup's counts from the start (0
 * keys), once logging is up (at the first other_config), so that the log
 * of every validating switch says what it checks, even one killed before
 * it looked anything up (the counts are logged again as they grow). */
static void
validation_start(void)
{
#if defined(OVSCLS_PLUGIN_VALIDATE) || PLUGIN_CAN_VALIDATE_TAIL
    static bool started;

    if (started) {
        return;
    }
    started = true;
#ifdef OVSCLS_PLUGIN_VALIDATE
    lookup_validation_report();
#endif
#if PLUGIN_CAN_VALIDATE_TAIL
    if (tail_validating()) {
        tail_validation_report(NULL);
    }
#endif
#endif
}

static void
plugin_set_config(const struct smap *other_config)
{
    static char *applied_list;
    const char *value = smap_get(other_config, "dpcls-plugin");
    const char *list = smap_get(other_config, "lookup-provider-priorities");
    bool on = !value || !strcmp(value, "true");
    bool value_changed = !nullable_string_is_equal(value, applied_value);
    bool list_changed = !nullable_string_is_equal(list, applied_list);

    test_mode_start();
    validation_start();
    free(applied_list);
    applied_list = nullable_xstrdup(list);
    if (!value_changed && !(list_changed && !on)) {
        return;
    }
    free(applied_value);
    applied_value = nullable_xstrdup(value);

    if (!on && strcmp(value, "false")) {
        VLOG_WARN("other_config:dpcls-plugin=\"%s\" is not true or false; "
                  "the plugin's lookups are OFF (priority 0) until it is "
                  "fixed", value);
    }
    for (size_t i = 0; i < ARRAY_SIZE(lookups); i++) {
        plugin_set_prio(lookups[i].name, on ? default_prio(&lookups[i]) : 0);
    }
    if (value_changed) {
        VLOG_INFO("other_config:dpcls-plugin=%s: the plugin's lookups are %s",
                  value ? value : "(none)",
                  on ? "at their default priorities"
                     : "at priority 0 (off)");
    }
}

/* The priority OVS's table gives lookup 'name' now, or -1 if it has none
 * of that name (not registered). */
static int
plugin_prio_now(const char *name)
{
#if OVSCLS_OVS_VERSION >= 40000
    const struct dpcls_lookup_provider *provider;
    uint8_t prio;

    for (size_t i = 0; (provider = dpcls_lookup_provider_get(i, &prio));
         i++) {
        if (!strcmp(provider->name, name)) {
            return prio;
        }
    }
#else
    struct dpcls_subtable_lookup_info_t *impls;
    int n = dpcls_subtable_lookup_info_get(&impls);

    for (int i = 0; i < n; i++) {
        if (!strcmp(impls[i].name, name)) {
            return impls[i].prio;
        }
    }
#endif
    return -1;
}

/* Appends to 's' the state of lookup 'name', whose priority is above 0:
 * "on", or why it serves nothing. */
static void
plugin_put_state(struct ds *s, const char *name)
{
    char *text = NULL;

    if (!strcmp(name, OVSCLS_LOOKUP_NAME_jit_avx2)) {
        text = ovscls_plugin_jit_state();
    } else if (!strcmp(name, OVSCLS_LOOKUP_NAME_jit_fused)) {
        text = ovscls_plugin_fused_state();
#if PLUGIN_HAS_TAIL
    } else if (!strcmp(name, OVSCLS_LOOKUP_NAME_tail_index)) {
        ds_put_cstr(s, tail_on ? "on" : "off (other_config:dpcls-tail)");
        return;
#endif
    } else {
        ds_put_cstr(s, "on");
        return;
    }
    ds_put_cstr(s, text ? text : "(no memory)");
    free(text);
}

/* ovs-appctl dpcls-plugin/show: what the plugin is and what of it runs,
 * one "name: value" per line. */
static void
plugin_show(struct unixctl_conn *conn, int argc OVS_UNUSED,
            const char *argv[] OVS_UNUSED, void *aux OVS_UNUSED)
{
    struct ds s = DS_EMPTY_INITIALIZER;

    ds_put_format(&s, "version: %s\n", OVSCLS_PLUGIN_VERSION);
    ds_put_format(&s, "built for: Open vSwitch %s, %s%s%s\n", VERSION,
                  OVSCLS_OVS_VERSION >= 40000
                  ? "lookup providers (4.0 series)"
                  : "lookup registry (3.x series)",
                  PLUGIN_HAS_FUSED ? ", fused lookups" : "",
                  PLUGIN_HAS_TAIL ? ", tail index" : "");
    ds_put_format(&s, "defaults: %s\n",
                  autovalidator_mode
                  ? "priority 0, OVS's autovalidator above all "
                    "(OVSCLS_PLUGIN_TEST_MODE=autovalidator)" :
#if defined(OVSCLS_PLUGIN_VALIDATE)
                  "the plugin's lookups on, each checked against OVS's "
                  "(validation build)"
#elif defined(OVSCLS_PLUGIN_DEFAULT)
                  "the plugin's lookups on, above OVS's generic"
#elif defined(DPCLS_AUTOVALIDATOR_DEFAULT)
                  "priority 0, OVS's autovalidator above all "
                  "(autovalidator build)"
#else
                  "priority 0: OVS's own lookups until prio-set"
#endif
                  );
    ds_put_format(&s, "hash: %s\n", OVSCLS_HASH_CRC32
                  ? "CRC32C (SSE4.2), as this Open vSwitch's"
                  : "murmur, as this Open vSwitch's");
#if defined(__x86_64__)
    ds_put_format(&s, "cpu: x86-64 with%s%s%s%s%s%s\n",
                  __builtin_cpu_supports("avx512f") ? " avx512f" : "",
                  __builtin_cpu_supports("avx2") ? " avx2" : "",
                  __builtin_cpu_supports("bmi") ? " bmi1" : "",
                  __builtin_cpu_supports("bmi2") ? " bmi2" : "",
                  __builtin_cpu_supports("popcnt") ? " popcnt" : "",
                  __builtin_cpu_supports("sse4.2") ? " sse4.2" : "");
#else
    ds_put_cstr(&s, "cpu: not x86-64 (no generated code)\n");
#endif
    ds_put_format(&s, "other_config:dpcls-plugin: %s\n",
                  applied_value ? applied_value : "(not set: true)");
    for (size_t i = 0; i < ARRAY_SIZE(lookups); i++) {
        const char *name = lookups[i].name;
        int prio = plugin_prio_now(name);

        ds_put_format(&s, "%s: ", name);
        if (prio < 0) {
            ds_put_cstr(&s, "not registered (see the log)");
        } else if (!prio) {
            ds_put_format(&s, "priority 0, off (%s)",
                          applied_value && strcmp(applied_value, "true")
                          ? "other_config:dpcls-plugin"
                          : !lookups[i].prio ? "the build's default"
#if OVSCLS_OVS_VERSION >= 40000
                          : "lookup-provider-set or lookup-provider-priorities"
#else
                          : "subtable-lookup-prio-set"
#endif
                          );
        } else {
            ds_put_format(&s, "priority %d, ", prio);
            plugin_put_state(&s, name);
        }
        ds_put_char(&s, '\n');
    }
    unixctl_command_reply(conn, ds_cstr(&s));
    ds_destroy(&s);
}

OVS_CONSTRUCTOR(ovscls_plugin_register)
{
#if PLUGIN_HAS_TEST_MODES
    const char *mode = getenv("OVSCLS_PLUGIN_TEST_MODE");

    if (mode && !strcmp(mode, "autovalidator")) {
        autovalidator_mode = true;
    } else if (mode && *mode) {
        bad_test_mode = mode;  /* The environment outlives this. */
    }
#endif
#if PLUGIN_HAS_TAIL
#if PLUGIN_CAN_VALIDATE_TAIL
    if (tail_validating()) {
        ovscls_plugin_tail_validate(tail_mismatch, tail_validation_progress);
    }
#endif
    tail_head = tail_default_head();
    tail_min_tail = tail_default_min_tail();
    ovscls_plugin_tail_configure(true, tail_head, tail_min_tail);
#endif
    ovscls_plugin_jit_set_log(jit_log);
    ovscls_plugin_jit_set_events(jit_event);
    for (size_t i = 0; i < ARRAY_SIZE(lookups); i++) {
#ifdef OVSCLS_PLUGIN_VALIDATE
        /* Every lookup it serves checked against OVS's generic (4.0, which
         * has no autovalidator): the subtable lookups, and jit_fused's
         * fused lookups; tail_index serves no subtable, and checks itself
         * (TAIL_VALIDATE). */
        plugin_entry validated = lookups[i];
        bool wrapped;

        if (validated.probe_fused) {
            wrapped = lookup_validation_wrap_fused(validated.name,
                                                   &validated.probe_fused,
                                                   &validated.release_fused);
        } else if (validated.tail_create) {
            wrapped = true;
        } else {
            wrapped = lookup_validation_wrap(validated.name, validated.probe,
                                             &validated.probe_subtable,
                                             &validated.release);
        }
        if (!wrapped) {
            VLOG_ERR("validation: cannot wrap '%s'; not registered",
                     validated.name);
            continue;
        }
        plugin_register(&validated, ovscls_plugin_hash_blocks);
#else
        /* OVS logs each outcome once logging is up. */
        plugin_entry entry = lookups[i];

        entry.prio = default_prio(&lookups[i]);
        plugin_register(&entry, ovscls_plugin_hash_blocks);
#endif
    }
    unixctl_command_register("dpcls-plugin/jit-show", "", 0, 0, jit_show,
                             NULL);
    /* The name of the first releases, kept as an alias: a plugin's command
     * belongs in its own namespace, not in dpif-netdev's. */
    unixctl_command_register("dpif-netdev/jit-show", "", 0, 0, jit_show,
                             NULL);
    unixctl_command_register("dpcls-plugin/show", "", 0, 0, plugin_show,
                             NULL);
#if PLUGIN_HAS_TAIL
    unixctl_command_register("dpcls-plugin/tail-show", "", 0, 0, tail_show,
                             NULL);
#endif
}
