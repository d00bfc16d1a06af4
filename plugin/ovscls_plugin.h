/* ovscls_plugin.h: the boundary between the plugin's two sides.
 *
 *   C side    ovs_registration.c (and lookup_validation.c): includes OVS's
 *             headers, registers the lookups, owns VLOG, coverage,
 *             other_config and ovs-appctl;
 *   C++ side  ovscls_plugin.cpp (specialized, runtime, the hash),
 *             jit_entries.cpp or jit_absent.cpp (jit_avx2, jit_fused) and
 *             tail_entries.cpp (tail_index): the project's code, which
 *             includes no OVS header.
 *
 * Both sides include this header, so a definition that does not match its
 * declaration stops the build (C++: "conflicting declaration of C
 * function").  The structs are OVS's, incomplete here; a lookup function
 * has OVS's dpcls_subtable_lookup_func type (classifier/lookup_func.h).
 *
 * Strings the C++ side returns (the *_show() texts, messages) are
 * malloc()ed: the C side free()s them.  Plain C and C++. */
#ifndef OVSCLS_PLUGIN_H
#define OVSCLS_PLUGIN_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier/lookup_func.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pvector_impl;

/* ---- specialized and runtime (ovscls_plugin.cpp) ---- */

/* The hash the plugin computes over a key's masked blocks: OVS compares it
 * with its own at registration and refuses a plugin of the other hash
 * flavour. */
uint32_t ovscls_plugin_hash_blocks(const uint64_t* blocks, size_t n_blocks, uint32_t basis);
/* OVS's counts-only probes: a lookup for fingerprint (u0, u1), or NULL. */
ovsb_lookup_func ovscls_plugin_specialized_probe(uint32_t u0, uint32_t u1);
ovsb_lookup_func ovscls_plugin_runtime_probe(uint32_t u0, uint32_t u1);

/* ---- jit_avx2 and jit_fused (jit_entries.cpp, or jit_absent.cpp) ---- */

/* The JIT's events, which the C side counts in OVS's coverage counters. */
enum ovscls_plugin_jit_event {
    OVSCLS_PLUGIN_JIT_COMPILE,   /* code generated */
    OVSCLS_PLUGIN_JIT_DECLINE,   /* a subtable or lookup declined */
    OVSCLS_PLUGIN_JIT_TIER_UP,   /* a hot subtable moved up to generated code */
    OVSCLS_PLUGIN_FUSED_COMPILE, /* a fused lookup generated */
    OVSCLS_PLUGIN_FUSED_DECLINE, /* a fused lookup not made (budget, rate, generator) */
};
typedef void (*ovscls_plugin_jit_event_func)(enum ovscls_plugin_jit_event, unsigned int n);

/* Counts-only probe: always NULL (jit_avx2 needs the subtable). */
ovsb_lookup_func ovscls_plugin_jit_probe(uint32_t u0, uint32_t u1);
/* The subtable probe: generated code once `subtable` is hot, else NULL
 * (a compile may be queued; never compiles on the caller's thread). */
ovsb_lookup_func ovscls_plugin_jit_probe_subtable(struct dpcls_subtable* subtable, uint32_t hits);
/* `subtable` now runs `in_use`: the JIT may let its other code go. */
void ovscls_plugin_jit_release(struct dpcls_subtable* subtable, ovsb_lookup_func in_use);
/* Around one ranking of a PMD thread's subtables (done: false before, true
 * after). */
void ovscls_plugin_jit_ranking(bool done);
/* Where the JIT's log lines and events go (NULL: nowhere). */
void ovscls_plugin_jit_set_log(void (*sink)(const char* line));
void ovscls_plugin_jit_set_events(ovscls_plugin_jit_event_func event);
/* other_config's "dpcls-jit*" keys, all of them: 0, or EINVAL when one is
 * bad (the JIT is then off).  *message: what to log, or NULL. */
int ovscls_plugin_jit_configure(const char* const keys[], const char* const values[], size_t n,
                                char** message);
/* dpcls-plugin/jit-show's text. */
char* ovscls_plugin_jit_show(void);
/* dpcls-plugin/show's state lines of jit_avx2 and jit_fused: "on (...)",
 * or why they serve nothing. */
char* ovscls_plugin_jit_state(void);
char* ovscls_plugin_fused_state(void);
/* jit_fused: no subtable lookup (always NULL); its fused hooks give a
 * lookup over the first *n_subtables of `subtables` (returned as void *,
 * OVS's fused lookup type), or NULL; *handle goes back to release. */
ovsb_lookup_func ovscls_plugin_fused_probe_counts(uint32_t u0, uint32_t u1);
void* ovscls_plugin_fused_probe(struct dpcls_subtable* const subtables[], size_t n,
                                uint32_t* n_subtables, void** handle);
void ovscls_plugin_fused_release(void* handle);
/* Moves when new fused code is ready: OVS asks again then. */
uint64_t ovscls_plugin_fused_ready(void);

/* ---- tail_index (tail_entries.cpp) ---- */

void ovscls_plugin_tail_configure(bool on, uint32_t head, uint32_t min_tail);
/* Validation builds: every answer checked against OVS's loop (keys that
 * disagree are looked up again by both: those that agree then saw a flow
 * inserted or removed meanwhile, counted as rechecked); `report` hears of
 * each mismatch, `progress` of the counts each time the keys checked pass
 * a power of two.  _validated(): the counts so far. */
void ovscls_plugin_tail_validate(void (*report)(const char* what),
                                 void (*progress)(uint64_t checked, uint64_t mismatched));
void ovscls_plugin_tail_validated(uint64_t* checked, uint64_t* mismatched, uint64_t* rechecked);
char* ovscls_plugin_tail_show(void);
/* One index per dpcls, told of its subtables, rules and rankings, asked
 * per burst for the keys the loop over the first subtables left. */
void* ovscls_plugin_tail_create(void);
void ovscls_plugin_tail_destroy(void* tail);
void ovscls_plugin_tail_subtable(void* tail, const struct dpcls_subtable* subtable, bool added);
void ovscls_plugin_tail_rule(void* tail, const struct dpcls_subtable* subtable,
                             const struct dpcls_rule* rule, bool inserted);
void ovscls_plugin_tail_ranking(void* tail, const struct pvector_impl* ranking);
size_t ovscls_plugin_tail_view(const void* tail, const struct pvector_impl* ranking, size_t size,
                               const void** view);
uint32_t ovscls_plugin_tail_lookup(const void* tail, const void* view, size_t start,
                                   uint32_t keys_map, const struct netdev_flow_key* keys[],
                                   struct dpcls_rule** rules, int* lookups);

#ifdef __cplusplus
}
#endif

#endif /* OVSCLS_PLUGIN_H */
