// tail.hpp: an index over the cold tail of a classifier's ranking.
//
// Tuple space search pays one probe per subtable: whoever can make masks
// can make every packet expensive (the Tuple Space Explosion attack,
// CVE-2019-25076: a few thousand megaflow masks on one port).  The hot
// subtables at the front of the ranking are served well by the loop, the
// JIT and the fused lookup; a TailIndex answers a key for the subtables
// after them with a number of probes that does not grow with their number
// (tail/tuple_pruning.hpp is the one implementation).
//
// Contract.  For a ranking it is bound to, view() says from which position
// on the index serves (`start`; == size when it serves none: the ranking
// moved, or the tail is too short to be worth it).  lookup() then returns,
// for every key of keys_map, exactly what OVS's loop over positions
// [start, size) would: the rule of the first subtable in rank order whose
// cmap holds the key's masked words, found by calling that subtable's own
// lookup_func for the key (so hit_cnt and the rule are the loop's); and
// adds to *lookups the 1-based position of the subtable that matched, as
// dpcls_lookup()'s lookups_match.  A rule that is in a subtable when a
// lookup begins is never missed.
//
// Threads.  The writer-side calls come from the classifier's writer, under
// its lock, in the order of the changes: subtable_added() after the
// subtable exists and before any of its rules is inserted, rule_inserted()
// before the rule goes into the subtable's cmap (so that once it is there
// the index knows it), rule_removed() after it left the cmap,
// subtable_removed() after its last rule and before it is freed (its memory
// outlives an RCU grace period), ranking_published() after every publish
// of the pvector (new order, new or removed subtables).  view() and
// lookup() are the reader side: lock-free, from any OVS thread, within one
// RCU read (the caller does not quiesce in between).
#pragma once

#include <cstddef>
#include <cstdint>

#include "classifier/layout.hpp"

namespace ovscls {

class TailIndex {
  public:
    virtual ~TailIndex() = default;

    virtual void subtable_added(const dpcls_subtable* subtable) = 0;
    virtual void subtable_removed(const dpcls_subtable* subtable) = 0;
    virtual void rule_inserted(const dpcls_subtable* subtable, const dpcls_rule* rule) = 0;
    virtual void rule_removed(const dpcls_subtable* subtable, const dpcls_rule* rule) = 0;
    virtual void ranking_published(const PvectorImpl* ranking) = 0;

    // What a reader found for the ranking it reads: the binding to pass to
    // lookup() and the first position the index serves.
    struct View {
        const void* binding = nullptr;  // null: serves none
        size_t start = 0;
    };
    virtual View view(const PvectorImpl* ranking, size_t size) const = 0;
    // Returns the keys of keys_map that matched (their rules set).
    virtual uint32_t lookup(const View& view, uint32_t keys_map, const netdev_flow_key* keys[],
                            dpcls_rule** rules, int* lookups) const = 0;
};

}  // namespace ovscls
