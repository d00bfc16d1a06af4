/* lookup_validation.h: the plugin's validation mode for OVS 4.0, which has
 * no autovalidator (build-ovs.sh --validate, OVSCLS_PLUGIN_VALIDATE).
 *
 * Every lookup a wrapped provider serves is checked, on every call, against
 * OVS's generic lookup on the same subtable and keys: the keys found and
 * each one's rule.  A mismatch is logged as an error (OVS's testsuite fails
 * on it); at exit each provider's count of checked keys and mismatches is
 * logged: "checked 'NAME': N keys against OVS's generic, M mismatches".
 *
 * Plain C, compiled against the patched OVS tree like ovs_registration.c. */
#ifndef OVSCLS_PLUGIN_LOOKUP_VALIDATION_H
#define OVSCLS_PLUGIN_LOOKUP_VALIDATION_H 1

#include <stdbool.h>
#include <stdint.h>

#include "dpif-netdev-dpcls-provider.h"

/* Wraps the hooks of provider 'name' in place, before it is registered:
 * '*probe_subtable' and '*release' become the validation's (which call the
 * provider's own '*probe_subtable', or 'probe' with the subtable's counts,
 * and '*release'), so that the subtables it serves run a checked lookup.
 * Returns false when no more providers can be wrapped (8). */
bool lookup_validation_wrap(
    const char* name, dpcls_subtable_lookup_func (*probe)(uint32_t u0, uint32_t u1),
    dpcls_subtable_lookup_func (**probe_subtable)(struct dpcls_subtable* subtable, uint32_t hits),
    void (**release)(struct dpcls_subtable* subtable, dpcls_subtable_lookup_func in_use));

/* Wraps the fused-lookup hooks of provider 'name' in place, before it is
 * registered: the fused lookups it makes are checked, on every call, against
 * OVS's generic over the same subtables in order (the keys found and
 * missed, each one's rule, the lookups count), and counted in an exit
 * line of its own: "checked 'NAME' (fused): N keys against OVS's generic
 * over the same subtables, M mismatches".  At most one provider, wrapped
 * after a subtable lookup (which sets up the validation); returns false
 * otherwise. */
bool lookup_validation_wrap_fused(const char* name,
                                  bool (**probe_fused)(struct dpcls_subtable* const subtables[],
                                                       size_t n, struct dpcls_fused_lookup* out),
                                  void (**release_fused)(const struct dpcls_fused_lookup* lookup));

/* Logs each wrapped lookup's counts so far (as at exit). */
void lookup_validation_report(void);

#endif /* plugin/lookup_validation.h */
