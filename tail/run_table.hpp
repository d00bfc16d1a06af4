// run_table.hpp: which prefix lengths of a run of lanes (an IPv4 or IPv6
// address, a port pair) some rule holds on a key's path, walked 16 bits at
// a time.
//
// Why not a LaneTable per lane.  Lanes pruned one by one forget which rule
// allowed which lane: a key whose first nw_dst lane is the flood's 10.0 and
// whose second is a legitimate rule's .3.9 finds depth 16 allowed in the
// first lane (by the flood's rules) and the legitimate rule's depth in the
// second, so the legitimate rule's subtable becomes a candidate of every
// attack key though no rule holds both halves.  A run keeps the halves
// together: the second lane's prefixes live under the first lane's value.
//
// A run is lanes l0, l1, ... (consecutive bytes of struct flow) that every
// member of a family masks as one prefix: depth > 0 in lane k+1 only with
// depth 16 in lane k (tuple_pruning.cpp finds runs from the members' masks).
// A rule's run length is then 0..16n, and its lane values v0, v1, ...
// The table is a trie of 16-bit stride: node 0 is the root; the node under
// node N by lane value v holds the rules that agree with v in that lane and
// go on.  A rule of length 16s + d (1 <= d <= 16; length 0: s = 0, d = 0)
// is an *end* (v_s's first d bits, d) in the node reached by v0..v_{s-1}.
// A key walks from the root by its own lane values: at step s its node's
// ends that agree with v_s give lengths 16s + d; it stops where no child
// holds v_s.  One node's ends and one child lookup per lane, only as deep
// as rules go on.
//
// Example: nw_dst rules 10.0.0.2/31 (the flood), 16.0.3.0/24 and 10.0/16.
// Root ends: (10.0, 16); children: 10.0 -> N1 {ends (0.2/15)}, 16.0 -> N2
// {ends (3.0/8)}.  Key 10.0.0.3: root gives {16}, N1 gives 16 + 15 = 31:
// {16, 31}.  The lane-by-lane tables would also have given 24 (16.0.3.0's
// second lane .3.0/8 is not .0.3's; say 16.0.0.0/24 instead and it is):
// here it cannot, as 16.0's node is not on 10.0's path.
//
// A node's ends are a small array scanned whole (up to kSmallEnds) or a
// LaneTable (two reads) once more; its children an open-addressed table of
// lane values.  Writer (one, under the classifier's writer lock): counts
// per end, arrays replaced whole, a child table written in place (a slot's
// node before its key) and replaced when it grows; a node no rule holds is
// unlinked.  Readers take no lock; what they may still see is freed after
// an RCU grace period.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "tail/lane_table.hpp"

namespace ovscls::tail {

inline constexpr unsigned kMaxRunLanes = 8;     // an IPv6 address
inline constexpr unsigned kRunLengthWords = 3;  // lengths 0..128 as bits
inline constexpr unsigned kSmallEnds = 8;       // ends scanned, not tabled

// Lengths 0..16 * kMaxRunLanes as a bit set.
struct RunLengths {
    uint64_t w[kRunLengthWords] = {};
    bool empty() const { return !(w[0] | w[1] | w[2]); }
    void set(unsigned l) { w[l / 64] |= uint64_t{1} << (l % 64); }
    bool test(unsigned l) const { return (w[l / 64] >> (l % 64)) & 1; }
    // Lengths in [lo, hi] as bits 0..hi-lo (hi - lo < 64), bit 0 also set
    // by any length below lo and bit hi-lo by any above hi: the ids of a
    // tuple level that covers lengths lo..hi (tuple_pruning.cpp).
    uint64_t clamped(unsigned lo, unsigned hi) const;
};

class RunTable {
  public:
    explicit RunTable(unsigned lanes);  // 1..kMaxRunLanes
    ~RunTable();                        // frees everything now: readers must be gone
    RunTable(const RunTable&) = delete;
    RunTable& operator=(const RunTable&) = delete;

    unsigned lanes() const { return lanes_; }
    // Writer: one more (or one less) rule of run length `length` (0..16 *
    // lanes) whose lane values are values[0..lanes) (bits past the length
    // may be anything: they are masked off).
    void insert(const uint16_t values[], unsigned length);
    void remove(const uint16_t values[], unsigned length);

    // Reader: the lengths l for which a rule of run length l agrees with
    // values[0..lanes) in its first l bits.
    RunLengths lengths(const uint16_t values[]) const;

    size_t bytes() const { return bytes_; }  // writer side
    size_t low_tables() const;               // writer side: LaneTables' low tables
    size_t nodes() const { return nodes_; }  // writer side, the root included

  private:
    struct Node;
    struct End {  // an end scanned: value & mask == prefix gives bit `depth`
        uint16_t prefix, mask;
        uint32_t depth;
    };
    struct Ends {
        uint32_t n;
        End e[];
    };
    struct Kids {
        uint32_t capacity;  // a power of two
        uint32_t used;      // writer: slots whose key was ever set
        struct Slot {
            std::atomic<uint32_t> key;  // lane value + 1; 0: empty
            std::atomic<Node*> node;    // null: removed (the key stays)
        } slot[];
    };
    struct Node {
        std::atomic<const Ends*> small{nullptr};  // read first: null once `table` serves
        std::atomic<LaneTable*> table{nullptr};
        std::atomic<Kids*> kids{nullptr};
        // Writer: rules held here and below, and the small ends' counts.
        uint32_t rules = 0;
        std::vector<std::pair<uint32_t, uint32_t>> counts;  // depth << 16 | prefix -> rules
    };

    static size_t node_bytes(const Node& node);  // writer side
    // The slot of `value` in `k` (null: none), readers and the writer.
    static Kids::Slot* slot_of(Kids* k, uint16_t value);
    static uint32_t depths_of(const Node& node, uint16_t value);
    static Node* child_of(const Node& node, uint16_t value);
    // Writer: the child of `node` by `value`, made if `make`.
    Node* child(Node& node, uint16_t value, bool make);
    void unlink(Node& parent, uint16_t value);
    bool add_end(Node& node, uint16_t prefix, unsigned depth, bool add);
    void publish_small(Node& node);
    void free_node(Node* node);  // now, with what hangs below
    static void free_node_cb(void* node);

    const unsigned lanes_;
    Node root_;
    size_t bytes_ = 0;
    size_t nodes_ = 1;
    size_t low_tables_ = 0;
};

}  // namespace ovscls::tail
