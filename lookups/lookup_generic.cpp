// `generic`: the lookup algorithm with block counts read at run time.
#include "classifier/lookup_table.h"
#include "lookups/lookup.hpp"
#include "lookups/lookups.hpp"

namespace ovscls {

uint32_t lookup_generic(dpcls_subtable* subtable, uint32_t keys_map, const netdev_flow_key* keys[],
                        dpcls_rule** rules) {
    return lookup_impl<RuntimeCounts>(subtable, keys_map, keys, rules);
}

ovsb_lookup_func generic_probe(const ProbeContext&) { return lookup_generic; }

LookupDescriptor generic_descriptor() {
    return {OVSCLS_LOOKUP_NAME_generic, OVSCLS_LIBRARY_PRIO_generic,
            [](void*, const ProbeContext& ctx) { return generic_probe(ctx); }, nullptr, nullptr};
}

}  // namespace ovscls
