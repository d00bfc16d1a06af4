// slot_table.hpp: the index's writer-side map from a subtable to its slot
// (TuplePruningIndex::members_), one flat array.
//
// Why not std::unordered_map: at each ranking the index looks up the slot
// of every subtable whose position moved (a mask flood's ranking moves
// most of 2500), and a node-based map costs two cold cache misses a
// lookup: ~375 us a ranking in ovs-vswitchd, inside the PMD iteration.
// Here a lookup reads one or two adjacent 16-byte entries of a table that
// stays small (4096 entries, 64 KiB, for 2500 subtables).
//
// Open addressing with linear probing; removal shifts the entries after
// it back (no tombstones, so lookups never slow down with churn); grown
// to twice its size at half full.  Writer side only (no concurrency).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ovscls::tail {

class SlotTable {
  public:
    static constexpr uint32_t kNone = UINT32_MAX;

    // The slot of `key`, or kNone.
    uint32_t find(const void* key) const {
        if (entries_.empty()) return kNone;
        for (size_t i = home(key);; i = (i + 1) & mask()) {
            if (entries_[i].key == key) return entries_[i].slot;
            if (!entries_[i].key) return kNone;
        }
    }

    // Sets `key`'s slot (adds it if new).  `key` is not null.
    void set(const void* key, uint32_t slot) {
        if ((used_ + 1) * 2 > entries_.size()) grow();
        size_t i = home(key);
        while (entries_[i].key && entries_[i].key != key) i = (i + 1) & mask();
        used_ += !entries_[i].key;
        entries_[i] = {key, slot};
    }

    // Removes `key`; false if it was not there.
    bool erase(const void* key) {
        if (entries_.empty()) return false;
        size_t i = home(key);
        while (entries_[i].key != key) {
            if (!entries_[i].key) return false;
            i = (i + 1) & mask();
        }
        // Shift back each later entry of the run that may take the hole:
        // one whose home is not cyclically in (hole, its place].
        size_t hole = i;
        for (size_t j = (i + 1) & mask(); entries_[j].key; j = (j + 1) & mask()) {
            const size_t h = home(entries_[j].key);
            const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
            if (!stays) {
                entries_[hole] = entries_[j];
                hole = j;
            }
        }
        entries_[hole] = {};
        used_--;
        return true;
    }

    size_t size() const { return used_; }
    size_t bytes() const { return entries_.size() * sizeof(Entry); }

  private:
    struct Entry {
        const void* key = nullptr;
        uint32_t slot = 0;
    };

    size_t mask() const { return entries_.size() - 1; }
    size_t home(const void* key) const {
        // Fibonacci hashing of the pointer (its low bits are alignment).
        const uint64_t h = reinterpret_cast<uintptr_t>(key) * 0x9e3779b97f4a7c15ull;
        return static_cast<size_t>(h >> 32) & mask();
    }
    void grow() {
        std::vector<Entry> old = std::move(entries_);
        entries_.assign(old.empty() ? 64 : old.size() * 2, Entry{});
        used_ = 0;
        for (const Entry& e : old) {
            if (e.key) set(e.key, e.slot);
        }
    }

    std::vector<Entry> entries_;  // a power of two, or empty
    size_t used_ = 0;
};

}  // namespace ovscls::tail
