// lane_trie.hpp: which prefix lengths of one 16-bit lane some rule holds on
// a key's path.
//
// A lane is 16 bits of a miniflow word (tuple_pruning.hpp says which), read
// in network bit order: bit 15 is the first bit of the lane's first byte,
// so an IPv4 /20 of nw_src covers its first lane whole (depth 16) and the
// top 4 bits of its second (depth 4).  A rule whose subtable masks the lane
// with a prefix of depth d marks the node its lane value reaches after d
// steps.  depths(v) walks v's bits from the root and returns the depths at
// which it passed a marked node: a rule with that lane prefix agrees with v
// there, and no rule whose depth is missing from the result can match v.
//
// Example: rules with lane prefixes 1010/4 and 10/2 and a key lane 1011...:
// the walk passes depth 2 (marked by 10/2), reaches 101 and stops at depth
// 3 (no child 1 below 101), so depths() = {2}: only subtables of depth 2 in
// this lane can hold a match.
//
// Readers walk without locks while the one writer inserts and removes
// (under the classifier's writer lock); a node a reader may still be on is
// freed only after an RCU grace period.  Nodes hold a count of rules
// ending at them and, writer-only, of rules at or below them, so that a
// removal unlinks the subtree that holds no rule any more.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ovscls::tail {

inline constexpr unsigned kLaneBits = 16;

class LaneTrie {
  public:
    LaneTrie() = default;
    ~LaneTrie();  // frees every node now: readers must be gone
    LaneTrie(const LaneTrie&) = delete;
    LaneTrie& operator=(const LaneTrie&) = delete;

    // Writer: one more rule with lane prefix `value` of `depth` bits (the
    // bits below the prefix are zero).  Returns the nodes it allocated.
    size_t insert(uint16_t value, unsigned depth);
    // Writer: one rule less.  Returns the nodes it unlinked (freed after
    // an RCU grace period).
    size_t remove(uint16_t value, unsigned depth);

    // Reader: bit d (0..16) set when a rule's lane prefix of depth d equals
    // the first d bits of `value`.
    uint32_t depths(uint16_t value) const {
        uint32_t out = 0;
        const Node* node = &root_;
        for (unsigned d = 0;; d++) {
            if (node->rules.load(std::memory_order_relaxed)) {
                out |= 1u << d;
            }
            if (d == kLaneBits) {
                return out;
            }
            node = node->child[(value >> (kLaneBits - 1 - d)) & 1].load(std::memory_order_acquire);
            if (!node) {
                return out;
            }
        }
    }

    size_t nodes() const { return nodes_; }  // writer side
    static constexpr size_t kNodeBytes = 24;

  private:
    struct Node {
        std::atomic<Node*> child[2] = {};
        std::atomic<uint32_t> rules{0};  // rules whose prefix ends here
        uint32_t below = 0;              // writer only: rules ending here or deeper
    };
    static void free_subtree(Node* node);
    static void free_subtree_cb(void* node);

    Node root_;
    size_t nodes_ = 0;  // besides the root
};
static_assert(sizeof(std::atomic<void*>) * 2 + 8 == LaneTrie::kNodeBytes);

}  // namespace ovscls::tail
