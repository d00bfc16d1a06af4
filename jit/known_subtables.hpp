// known_subtables.hpp: which subtables may have jit_avx2 state, readable
// without the lock of that state.
//
// A counter per hash of the subtable's address, changed under the state's
// lock when an entry comes or goes.  0 means surely none; a counter that
// reached 255 stays there (maybe, for good).  A ranking in a mask flood
// re-probes thousands of cold subtables; this lets their probes and
// releases skip the lock (perf/p2p's flood: 2500 cold masks, two mutex
// holds each per ranking otherwise).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "classifier/ovs_bridge.h"

namespace ovscls::jit {

class KnownSubtables {
  public:
    // False: the subtable surely has no entry.  Any thread, no lock.
    bool maybe(const dpcls_subtable* subtable) const {
        return counts_[slot(subtable)].load(std::memory_order_relaxed) != 0;
    }
    // An entry came or went: under the state's lock.
    void add(const dpcls_subtable* subtable) {
        std::atomic<uint8_t>& n = counts_[slot(subtable)];
        const uint8_t v = n.load(std::memory_order_relaxed);
        n.store(v == kSticky ? v : v + 1, std::memory_order_relaxed);
    }
    void remove(const dpcls_subtable* subtable) {
        std::atomic<uint8_t>& n = counts_[slot(subtable)];
        const uint8_t v = n.load(std::memory_order_relaxed);
        n.store(v == kSticky || v == 0 ? v : v - 1, std::memory_order_relaxed);
    }
    void clear() {
        for (auto& n : counts_) {
            n.store(0, std::memory_order_relaxed);
        }
    }

  private:
    static constexpr size_t kSlots = 4096;
    static constexpr uint8_t kSticky = 255;
    static size_t slot(const dpcls_subtable* subtable) {
        const auto a = reinterpret_cast<uintptr_t>(subtable);
        return (a >> 6) * 0x9E3779B97F4A7C15ull >> 52;  // top 12 bits: 4096 slots
    }
    std::array<std::atomic<uint8_t>, kSlots> counts_{};
};

}  // namespace ovscls::jit
