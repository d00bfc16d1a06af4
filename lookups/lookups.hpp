// lookups.hpp: the lookup implementations this project provides and the
// probes that hand them out.  Each is an instance of lookup_impl()
// (lookup.hpp); the probes are what the registry (registry.hpp) calls.
#pragma once

#include <cstdint>
#include <span>

#include "ovs_bridge.h"

namespace ovscls {

// What a probe sees when a subtable is created or re-probed.  OVS 3.1's probe
// sees only the counts; the subtable is here for lookups that specialize on
// the mask itself (the JIT), and the hits tell them whether it is worth it.
struct ProbeContext {
    uint32_t u0;
    uint32_t u1;
    const dpcls_subtable* subtable;  // may be null when probing by counts only
    uint32_t hits = 0;               // hits in the last ranking interval, if known
};

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

}  // namespace ovscls
