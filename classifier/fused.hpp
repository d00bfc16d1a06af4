// fused.hpp: one lookup over a classifier's top-ranked subtables at once.
//
// OVS's dpcls_lookup() calls one subtable's lookup for the whole burst,
// then the next subtable's for the keys still unmatched, and so on in rank
// order.  Where traffic crosses many subtables (OVS reports "subtable
// lookups per hit"), each key pays per subtable for work that could be
// shared: the call, the walk over the burst, reading its words, hashing the
// words two subtables mask alike.  A fused lookup serves the first n
// subtables of one ranking in one call instead.
//
// Contract of a FusedLookupFn over subtables S[0..n) of a ranking, called
// with keys_map (1..32 keys of `keys`):
// - for every key it serves, it returns in `rules` exactly what OVS's loop
//   over S[0..n) would: the rule of the first subtable in that order whose
//   cmap holds the key's masked words, found in OVS's cmap protocol;
// - returns the served keys that matched (found); *missed = the served keys
//   that matched none of S[0..n): the loop goes on with them at S[n];
// - keys it does not serve (keys_map & ~found & ~missed, e.g. a packet whose
//   miniflow map the code was not built for) are left untouched: the loop
//   runs them through every subtable from S[0], as without it;
// - adds to each S[k]'s hit_cnt its found keys, and stores in *lookups the
//   sum over found keys of the 1-based position of the subtable that
//   matched (dpcls_lookup()'s lookups_match, for pmd-perf-show).
// So the classifier's results and bookkeeping are the loop's, key by key.
//
// Who makes them: a FusedProvider (the JIT, jit/fused_lookups.hpp).  The
// classifier asks it at every ranking for the new top subtables, publishes
// what it gets bound to that ranking (the published pvector), and stops
// using it as soon as the ranking changes.  Code takes a while to compile
// (on another thread): when the provider's ready_count() moves, the
// classifier's owner calls refresh_fused() to ask again for the ranking in
// place (OVS: the PMD thread, between bursts).  The core knows no provider.
#pragma once

#include <cstddef>
#include <cstdint>

#include "classifier/ovs_bridge.h"

namespace ovscls {

using FusedLookupFn = uint32_t (*)(uint32_t keys_map, const netdev_flow_key* const keys[],
                                   dpcls_rule** rules, uint32_t* missed, int* lookups);

// What a provider hands out: code for exactly one list of subtables.
struct FusedLookup {
    FusedLookupFn fn = nullptr;  // null: none
    uint32_t subtables = 0;      // how many leading subtables of the ranking it serves
    void* handle = nullptr;      // the provider's, given back to release()
};

class FusedProvider {
  public:
    // The most subtables a fused lookup may serve; 0 when fusing is off (the
    // classifier then publishes none).
    virtual size_t max_subtables() const = 0;
    // At a ranking, on the ranking thread under the classifier's writer
    // lock: a lookup for exactly `subtables[0..n)` in this order, or none
    // (fn null) while the provider prepares one for a later ranking.  Never
    // compiles, never waits for a compile.  The subtables are alive during
    // the call; code that serves them runs only while they are.
    virtual FusedLookup probe(const dpcls_subtable* const subtables[], size_t n) = 0;
    // The classifier published another fused lookup or none: no new reader
    // reaches `lookup`; it may be freed after an RCU grace period.
    virtual void release(const FusedLookup& lookup) = 0;
    // Counts the fused lookups that became ready: a classifier that probed
    // in vain at an earlier count may probe again now (refresh_fused()),
    // rather than wait for its next ranking.
    virtual uint64_t ready_count() const = 0;

  protected:
    ~FusedProvider() = default;
};

}  // namespace ovscls
