// lookups.hpp: the portable lookup implementations, `generic` and
// `specialized`, and their registry descriptors.  Each is an instance of
// lookup_impl() (lookup.hpp), plain C++ for any architecture.
#pragma once

#include <cstdint>
#include <span>

#include "classifier/lookup_impl.hpp"

namespace ovscls {

// `generic`: run-time block counts, serves every fingerprint.
ovsb_lookup_func generic_probe(const ProbeContext&);
uint32_t lookup_generic(dpcls_subtable*, uint32_t keys_map, const netdev_flow_key* keys[],
                        dpcls_rule** rules);

// `specialized`: compile-time block counts for the fingerprints listed in
// fingerprints.def; declines every other fingerprint.
ovsb_lookup_func specialized_probe(const ProbeContext&);

struct Fingerprint {
    uint32_t u0;
    uint32_t u1;
    const char* origin;  // where the fingerprint is seen
};
// The list compiled from fingerprints.def.
std::span<const Fingerprint> specialized_fingerprints();

// Registry entries, at their priorities of classifier/lookup_table.h.
LookupDescriptor generic_descriptor();
LookupDescriptor specialized_descriptor();

}  // namespace ovscls
