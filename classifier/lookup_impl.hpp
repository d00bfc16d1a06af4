// lookup_impl.hpp: what a lookup implementation hands to a registry.
//
// The classifier core knows no implementation by name.  Each one (generic
// and specialized in lookups/, jit_avx2 in jit/) exports a descriptor; a
// composition root (standalone/builtin_lookups.cpp for the library, OVS's
// subtable_lookups[] in ovs-vswitchd) adds the descriptors to a registry.
#pragma once

#include <cstdint>
#include <string_view>

#include "classifier/ovs_bridge.h"

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

// Returns the implementation's lookup for the subtable, or null to decline.
// `context` is the descriptor's.  Runs on the writer side (the thread that
// ranks or re-probes), never concurrently for one registry entry with
// itself on the same subtable.
using ProbeFn = ovsb_lookup_func (*)(void* context, const ProbeContext& ctx);
// Told that readers of `subtable` now call `in_use` (null: the subtable is
// being destroyed), after the classifier published it: the implementation
// may let go of what no new reader can reach (freeing after an RCU grace
// period).
using ReleaseFn = void (*)(void* context, const dpcls_subtable* subtable, ovsb_lookup_func in_use);

// Told that a ranking call (the sort of a classifier's subtables by hits,
// with its re-probes) begins or ends on the calling thread, so that an
// implementation with background work can keep out of its way.
using RankingFn = void (*)(void* context, bool begins);

struct LookupDescriptor {
    std::string_view name;        // as prio-set and info output spell it
    uint32_t priority;            // at start-up, 0-255
    ProbeFn probe;                // required
    ReleaseFn release;            // optional: for implementations holding resources
    void* context;                // passed to probe, release and ranking
    RankingFn ranking = nullptr;  // optional
};

}  // namespace ovscls
