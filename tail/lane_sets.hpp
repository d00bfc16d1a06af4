// lane_sets.hpp: which of a lane's non-prefix masks some rule agrees with.
//
// A varying lane whose masks are not prefixes (tcp_flags bits, a VLAN id
// without its priority bits) has no trie: for each of its first
// kPrunedMasks masks m, a set of the 65536 possible lane values says which
// values `v & m` its rules hold, one bit each (8 KiB per mask).  A key's
// lane value k allows mask id i when bit (k & m_i) is set in set i; ids
// past kPrunedMasks are always allowed (not pruned on, still exact).
//
// Readers test bits without locks; the one writer (under the classifier's
// writer lock) counts the rules per value and sets or clears a bit when a
// count leaves or reaches zero.  Sets are allocated as their mask appears
// and freed with the LaneSets.  (Header-only: small, and the writer's
// calls inline into the index's.)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace ovscls::tail {

class LaneSets {
  public:
    static constexpr unsigned kPrunedMasks = 16;
    static constexpr size_t kSetBytes = 65536 / 8;

    LaneSets() = default;
    ~LaneSets();
    LaneSets(const LaneSets&) = delete;
    LaneSets& operator=(const LaneSets&) = delete;

    // Writer: mask id `id` is lane mask `mask` (ids come in order 0, 1, ...).
    void add_mask(unsigned id, uint16_t mask);
    // Writer: one rule more or less whose lane value under mask id `id` is
    // `value` (already masked).
    void insert(unsigned id, uint16_t value);
    void remove(unsigned id, uint16_t value);

    // Reader: the mask ids a key's lane value `key` allows.
    uint64_t allowed(uint16_t key) const {
        const unsigned n = n_.load(std::memory_order_acquire);
        uint64_t out = ~uint64_t{0} << n;  // ids without a set: not pruned on
        for (unsigned id = 0; id < n; id++) {
            const uint16_t v = key & masks_[id];
            const uint64_t word = sets_[id][v / 64].load(std::memory_order_relaxed);
            out |= ((word >> (v % 64)) & 1) << id;
        }
        return out;
    }
    size_t bytes() const { return n_.load(std::memory_order_relaxed) * kSetBytes; }

  private:
    uint16_t masks_[kPrunedMasks] = {};
    std::atomic<uint64_t>* sets_[kPrunedMasks] = {};  // 1024 words each
    std::atomic<unsigned> n_{0};                      // sets published
    std::unordered_map<uint32_t, uint32_t> counts_;   // writer: id << 16 | value -> rules
};

inline LaneSets::~LaneSets() {
    for (std::atomic<uint64_t>* set : sets_) {
        delete[] set;
    }
}

inline void LaneSets::add_mask(unsigned id, uint16_t mask) {
    if (id != n_.load(std::memory_order_relaxed) || id >= kPrunedMasks) {
        return;  // past the pruned ones (or out of order: not pruned on)
    }
    masks_[id] = mask;
    sets_[id] = new std::atomic<uint64_t>[1024]();
    // Release: a reader that sees the count sees the mask and an empty set.
    n_.store(id + 1, std::memory_order_release);
}

inline void LaneSets::insert(unsigned id, uint16_t value) {
    if (id >= n_.load(std::memory_order_relaxed)) {
        return;
    }
    if (counts_[id << 16 | value]++ == 0) {
        sets_[id][value / 64].fetch_or(uint64_t{1} << (value % 64), std::memory_order_release);
    }
}

inline void LaneSets::remove(unsigned id, uint16_t value) {
    if (id >= n_.load(std::memory_order_relaxed)) {
        return;
    }
    auto it = counts_.find(id << 16 | value);
    if (it == counts_.end()) {
        return;
    }
    if (--it->second == 0) {
        counts_.erase(it);
        sets_[id][value / 64].fetch_and(~(uint64_t{1} << (value % 64)), std::memory_order_relaxed);
    }
}

}  // namespace ovscls::tail
