/* lookup_func.h: OVS's dpcls subtable lookup function type, for code that
 * cannot include OVS's headers (the C++ side, and the plugin's boundary,
 * plugin/ovscls_plugin.h).
 *
 * A lookup looks `keys_map`'s keys of keys[] up in `subtable`, sets
 * rules[i] for each key it matches, adds their number to the subtable's
 * hit count, and returns the matched keys' bits.  The structs are OVS's,
 * incomplete here.  Plain C and C++. */
#ifndef OVSCLS_LOOKUP_FUNC_H
#define OVSCLS_LOOKUP_FUNC_H 1

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dpcls_rule;
struct dpcls_subtable;
struct netdev_flow_key;

/* OVS's dpcls_subtable_lookup_func. */
typedef uint32_t (*ovsb_lookup_func)(struct dpcls_subtable* subtable, uint32_t keys_map,
                                     const struct netdev_flow_key* keys[],
                                     struct dpcls_rule** rules);

#ifdef __cplusplus
}
#endif

#endif /* OVSCLS_LOOKUP_FUNC_H */
