// lane_table.hpp: which prefix lengths of one 16-bit lane some rule holds
// on a key's path, in two table reads.
//
// A lane is 16 bits of a miniflow word (tuple_pruning.hpp says which), read
// in network bit order: bit 15 is the first bit of the lane's first byte,
// so an IPv4 /20 of nw_src covers its first lane whole (depth 16) and the
// top 4 bits of its second (depth 4).  A rule whose subtable masks the lane
// with a prefix of depth d agrees with a key's lane v when its first d bits
// are v's.  depths(v) returns the set of depths d (bit d, 0..16) for which
// some rule of depth d agrees with v: no rule whose depth is missing from
// the result can match v.
//
// A bit-by-bit trie answers that in up to 17 dependent loads; here two
// tables answer it in two.  The lane's first byte h indexes `top_`: entry
// h holds bit d (d <= 8) when a rule of depth d has h's first d bits.  A
// rule of depth d > 8 fixes the whole first byte, so it lives in the low
// table of its own first byte: entry l of low table h holds bit d - 9 when
// a rule of depth d has the first d bits of h.l.  depths(v) = top_[v >> 8]
// | low table (v >> 8)'s entry (v & 0xff) << 9, the low table absent where
// no rule is deeper than 8 under that byte.
//
// Example: rules 1010/4 (depth 4) and 1010 1100 0001/12: top_ entries
// 1010 0000 .. 1010 1111 hold bit 4; the low table of byte 1010 1100 holds
// bit 3 (depth 12) at entries 0001 0000 .. 0001 1111.  depths(1010 1100
// 0001 0111) = {4, 12}; depths(1010 1101 ...) = {4}; depths(0...) = {}.
//
// Writer (one, under the classifier's writer lock): insert and remove keep
// a count of rules per (depth, prefix) and set or clear the entries of a
// prefix when its count becomes or stops being 0: a depth-d prefix covers
// 2^(8-d) top_ entries or 2^(16-d) low ones.  Readers take no lock; an
// entry is one atomic store, a low table is published with a release store
// and freed after an RCU grace period once no rule needs it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace ovscls::tail {

inline constexpr unsigned kLaneBits = 16;

class LaneTable {
  public:
    LaneTable();
    ~LaneTable();  // frees every low table now: readers must be gone
    LaneTable(const LaneTable&) = delete;
    LaneTable& operator=(const LaneTable&) = delete;

    // Writer: one more rule with lane prefix `value` of `depth` bits (the
    // bits below the prefix are zero).
    void insert(uint16_t value, unsigned depth);
    // Writer: one rule less (one that insert() was given); false, changing
    // nothing, when there is none.
    bool remove(uint16_t value, unsigned depth);

    // Reader: bit d (0..16) set when a rule's lane prefix of depth d equals
    // the first d bits of `value`.
    uint32_t depths(uint16_t value) const {
        const unsigned high = value >> 8;
        uint32_t out = top_[high].load(std::memory_order_relaxed);
        // Acquire: a low table's entries are written before it is published.
        if (const Low* low = low_[high].load(std::memory_order_acquire)) {
            out |= uint32_t{low->bits[value & 0xff].load(std::memory_order_relaxed)} << 9;
        }
        return out;
    }

    size_t low_tables() const { return n_low_; }  // writer side
    size_t bytes() const;                         // writer side

  private:
    struct Low {
        std::atomic<uint8_t> bits[256] = {};  // depths 9..16 as bits 0..7
        uint32_t prefixes = 0;                // writer: deep prefixes with rules
    };
    void mark(uint16_t value, unsigned depth, bool on);
    static void free_low(void* low);

    std::atomic<uint16_t> top_[256];  // depths 0..8
    std::atomic<Low*> low_[256];
    // Writer: rules per (depth << 16 | prefix value).
    std::unordered_map<uint32_t, uint32_t> counts_;
    size_t n_low_ = 0;
};

}  // namespace ovscls::tail
