/* ovs_bridge: the one narrow C ABI between this project's C++ code and Open
 * vSwitch 3.1.0's lib.
 *
 * OVS's dpcls, flow and packet headers are C that does not compile as C++,
 * so ovs_bridge.c is the only file of the classifier that includes them.  It exposes here, in
 * plain C, what the C++ classifier and its tests need: building keys and
 * masks the way dpif-netdev does, subtable and rule storage in OVS's own
 * structs (cmap, pvector).  What only tests and benchmarks need
 * (OVS's own lookups as the reference, megaflow parsing, frame composing)
 * is reference/ovs_reference.h, a separate library over the same OVS lib.
 *
 * OVS's structs cross this boundary as incomplete types; the C++ side reads
 * their hot fields through the mirrors in layout.hpp, whose layout both sides
 * check against ovs_abi.h at compile time.
 *
 * Flows are passed as arrays of OVSCLS_FLOW_U64S uint64_t: struct flow is
 * exactly that many 64-bit words (checked in ovs_bridge.c), and OVS itself
 * treats it as such (flow_u64_value). */
#ifndef OVSCLS_OVS_BRIDGE_H
#define OVSCLS_OVS_BRIDGE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier/lookup_func.h"
#include "classifier/ovs_abi.h"
#include "classifier/ovs_services.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pvector;

/* ---- Keys and masks, built exactly as dpif-netdev builds them. ---- */

/* dpif-netdev's netdev_flow_mask_init(): 'mask' from a flow and its
 * wildcards (both OVSCLS_FLOW_U64S words).  Only the words that make sense
 * for 'flow' (flow_wc_map) and are non-zero in 'wc' become blocks.  Returns
 * false, leaving 'mask' unspecified, when the mask would not fit a
 * netdev_flow_key. */
bool ovsb_mask_init(struct netdev_flow_key* mask, const uint64_t flow[], const uint64_t wc[]);

/* Fills 'mask' from a raw miniflow map and values (n = popcount of the map),
 * with the hash and length netdev_flow_mask_init() would compute.  Used for
 * synthetic masks.  The caller has validated map and n. */
void ovsb_mask_init_raw(struct netdev_flow_key* mask, const uint64_t map[2],
                        const uint64_t values[], size_t n);

/* dpif-netdev's netdev_flow_key_init_masked(): the rule key of 'flow' under
 * 'mask', with the hash dpcls_insert() files it under. */
void ovsb_key_init_masked(struct netdev_flow_key* dst, const uint64_t flow[],
                          const struct netdev_flow_key* mask);

/* A packet key with exactly the blocks of 'flow' that are non-zero
 * (miniflow_init), as netdev_flow_key_init() builds it. */
void ovsb_key_from_flow(struct netdev_flow_key* key, const uint64_t flow[]);

/* A packet key from a frame: miniflow_extract() on 'frame' received on
 * 'in_port', as dpif-netdev's dfc_processing() does. */
void ovsb_key_from_frame(struct netdev_flow_key* key, const void* frame, size_t len,
                         uint32_t in_port);

/* Expands a key's miniflow into a full flow (blocks absent from the map are
 * zero), as miniflow_expand(). */
void ovsb_key_expand(const struct netdev_flow_key* key, uint64_t flow[]);

/* ---- Subtables and rules in OVS's structs. ---- */

/* dpcls_create_subtable() without the classifier bookkeeping: a subtable for
 * 'mask' with an empty rule cmap, mf_masks from dpcls_flow_key_gen_masks()
 * and the fingerprint counts.  lookup_func and lookup_func_info are NULL:
 * the caller probes. */
struct dpcls_subtable* ovsb_subtable_create(const struct netdev_flow_key* mask);

/* Frees 'subtable' (which must hold no rules) after an RCU grace period, as
 * dpcls_subtable_destroy_cb(); calls 'release(aux)' in the same deferred
 * callback first when 'release' is not NULL. */
void ovsb_subtable_destroy_deferred(struct dpcls_subtable* subtable, void (*release)(void*),
                                    void* aux);

/* Allocates a zeroed rule big enough for any key; free with ovsb_rule_free
 * or ovsb_rule_free_deferred. */
struct dpcls_rule* ovsb_rule_alloc(void);
void ovsb_rule_free(struct dpcls_rule* rule);
void ovsb_rule_free_deferred(struct dpcls_rule* rule);

/* dpcls_insert()'s last two lines: rule->mask = &subtable->mask and
 * cmap_insert() under rule->flow.hash.  Returns the new rule count. */
size_t ovsb_subtable_insert(struct dpcls_subtable*, struct dpcls_rule*);
/* cmap_remove() under rule->flow.hash.  Returns the new rule count. */
size_t ovsb_subtable_remove(struct dpcls_subtable*, struct dpcls_rule*);
/* The rule of 'subtable' with exactly the key 'flow' (same hash and
 * values), or NULL. */
struct dpcls_rule* ovsb_subtable_find(const struct dpcls_subtable*,
                                      const struct netdev_flow_key* flow);
size_t ovsb_subtable_count(const struct dpcls_subtable*);

/* True when 'a' and 'b' have the same hash, map and values
 * (netdev_flow_key_equal()). */
bool ovsb_key_equal(const struct netdev_flow_key* a, const struct netdev_flow_key* b);

/* ---- pvector: the ranked subtable list readers iterate. ---- */
struct pvector* ovsb_pvector_create(void);
void ovsb_pvector_destroy(struct pvector*); /* after readers are gone */
void ovsb_pvector_insert(struct pvector*, void* ptr, int priority);
void ovsb_pvector_remove(struct pvector*, void* ptr);
void ovsb_pvector_change_priority(struct pvector*, void* ptr, int priority);
void ovsb_pvector_publish(struct pvector*);

/* OVS threads and OVS-RCU: classifier/ovs_services.h, included above. */

#ifdef __cplusplus
}
#endif

#endif /* OVSCLS_OVS_BRIDGE_H */
