/* ovs_functions.h: the functions of Open vSwitch's libopenvswitch that this
 * project's C++ calls directly, declared once.
 *
 * OVS's headers do not compile as C++ (docs/internals/ovs-3.1-notes.md), so
 * the C++ side cannot include cmap.h; it includes this header
 * instead.  A declaration written by hand can drift from OVS's (a changed
 * parameter, another return type) and the linker would not notice: C names
 * carry no types.  So classifier/ovs_bridge.c, which is compiled against the
 * OVS lib of every standalone build (every release and flavour), includes
 * OVS's cmap.h and then this one: C refuses a declaration that conflicts
 * with an earlier one ("conflicting types"), and the build stops there.
 * (OVS's threads and RCU are not here: C++ reaches them through
 * classifier/ovs_services.h, implemented in C on OVS's headers.)
 *
 * The structs are OVS's, incomplete here: C++ passes its mirrors
 * (classifier/layout.hpp) through reinterpret_cast.
 *
 * Plain C and C++.  Nothing below may be an inline function of OVS's
 * headers (cmap_remove(), say, is one: call cmap_replace()). */
#ifndef OVSCLS_OVS_FUNCTIONS_H
#define OVSCLS_OVS_FUNCTIONS_H 1

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cmap;
struct cmap_node;

/* lib/cmap.h: the lookups' batch probe (lookups/lookup.hpp), jit_fused's
 * fallback probe (jit/cmap_probe.hpp), and the cmap that jit/cmap_layout.cpp
 * fills to check the layout its generated code walks. */
unsigned long cmap_find_batch(const struct cmap* cmap, unsigned long map, uint32_t hashes[],
                              const struct cmap_node* nodes[]);
const struct cmap_node* cmap_find(const struct cmap* cmap, uint32_t hash);
void cmap_init(struct cmap* cmap);
void cmap_destroy(struct cmap* cmap);
size_t cmap_insert(struct cmap* cmap, struct cmap_node* node, uint32_t hash);
size_t cmap_replace(struct cmap* cmap, struct cmap_node* old_node, struct cmap_node* new_node,
                    uint32_t hash);

#ifdef __cplusplus
}
#endif

#endif /* OVSCLS_OVS_FUNCTIONS_H */
