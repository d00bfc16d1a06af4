// tuple_trie.hpp: the subtables of one family (one miniflow map) by their
// lane masks, walked only where every lane allows.
//
// Each subtable of a family is a tuple of lane ids, one per varying lane
// (tuple_pruning.hpp): a prefix depth 0..16, or the index of a non-prefix
// lane mask.  The trie has one level per varying lane; a node's children
// are a 64-bit mask of the ids present and a packed array of pointers (the
// popcount of the mask below an id is its index), so a reader intersects a
// node's children with what a lane allows in one AND.  Leaves are the
// subtables.  For the lanes' allowed sets {2} x {0, 16} x {3} a walk visits
// at most one child at the first level, two at the second, one at the
// third: the subtables it reaches are the only ones whose every lane
// prefix some rule holds on the key's path.
//
// Readers walk without locks; the writer (under the classifier's writer
// lock) replaces a node's child array whole and frees the old one, and any
// node or leaf it unlinks, after an RCU grace period.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "classifier/ovs_bridge.h"

namespace ovscls::tail {

inline constexpr unsigned kMaxLaneIds = 64;  // ids of one lane: one bit each in a child mask
inline constexpr unsigned kMaxLevels = 32;   // varying lanes of one family

struct TupleLeaf {
    uint32_t slot;  // the index's number for the subtable
    const dpcls_subtable* subtable;
};

class TupleTrie {
  public:
    explicit TupleTrie(unsigned levels) : levels_(levels) {}
    ~TupleTrie();  // frees everything now: readers must be gone
    TupleTrie(const TupleTrie&) = delete;
    TupleTrie& operator=(const TupleTrie&) = delete;

    unsigned levels() const { return levels_; }
    // Writer: adds the tuple ids[0..levels) (levels <= kMaxLevels, each
    // id < kMaxLaneIds).  Returns false, changing nothing, when it is present.
    bool insert(const uint8_t ids[], uint32_t slot, const dpcls_subtable* subtable);
    // Writer: removes the tuple; false when it is not there.
    bool remove(const uint8_t ids[]);
    size_t bytes() const { return bytes_; }  // writer side

    // Reader: calls out(leaf) for every tuple with ids[l] set in allowed[l]
    // at every level, until out returns false.  Returns false when out
    // stopped it.
    template <class Out>
    bool collect(const uint64_t allowed[], Out&& out) const {
        if (levels_ == 0) {
            const TupleLeaf* leaf = single_.load(std::memory_order_acquire);
            return !leaf || out(*leaf);
        }
        return collect_from(&root_, 0, allowed, out);
    }

  private:
    struct Kids {
        uint64_t mask;
        void* ptr[];  // popcount(mask) of them: Node* above the last level, TupleLeaf* on it
    };
    struct Node {
        std::atomic<const Kids*> kids{nullptr};
    };
    static unsigned index_of(uint64_t mask, unsigned id) {
        return std::popcount(mask & ((uint64_t{1} << id) - 1));
    }
    template <class Out>
    bool collect_from(const Node* node, unsigned level, const uint64_t allowed[], Out& out) const {
        const Kids* kids = node->kids.load(std::memory_order_acquire);
        if (!kids) {
            return true;
        }
        for (uint64_t m = kids->mask & allowed[level]; m; m &= m - 1) {
            const void* child = kids->ptr[index_of(kids->mask, std::countr_zero(m))];
            if (level + 1 == levels_) {
                if (!out(*static_cast<const TupleLeaf*>(child))) {
                    return false;
                }
            } else if (!collect_from(static_cast<const Node*>(child), level + 1, allowed, out)) {
                return false;
            }
        }
        return true;
    }
    // A copy of `kids` with `child` at `id` (added), or without `id`
    // (child null; null when none is left).
    const Kids* with(const Kids* kids, unsigned id, void* child);
    void retire(const Kids* kids);  // freed after a grace period
    void free_node(Node* node, unsigned level);

    const unsigned levels_;
    Node root_;
    std::atomic<const TupleLeaf*> single_{nullptr};  // levels_ == 0: the one subtable
    size_t bytes_ = 0;
};

}  // namespace ovscls::tail
