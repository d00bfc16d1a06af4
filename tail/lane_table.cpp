// lane_table.cpp: see lane_table.hpp.
#include "tail/lane_table.hpp"

#include "classifier/ovs_services.h"

namespace ovscls::tail {

LaneTable::LaneTable() {
    for (auto& t : top_) t.store(0, std::memory_order_relaxed);
    for (auto& l : low_) l.store(nullptr, std::memory_order_relaxed);
}

LaneTable::~LaneTable() {
    for (auto& l : low_) delete l.load(std::memory_order_relaxed);
}

void LaneTable::free_low(void* low) { delete static_cast<Low*>(low); }

size_t LaneTable::bytes() const {
    // The two arrays, the low tables, and the counts (a node of the map:
    // the pair, a hash and a next pointer, and its bucket).
    return sizeof(*this) + n_low_ * sizeof(Low) + counts_.size() * (sizeof(uint32_t) * 2 + 24);
}

// Sets (on) or clears bit `depth` in every entry that the depth-`depth`
// prefix `value` covers: top_ entries for depth <= 8, else those of the
// low table of value's first byte (made when needed; on clearing, freed
// after a grace period once it holds no deep prefix).
void LaneTable::mark(uint16_t value, unsigned depth, bool on) {
    const unsigned high = value >> 8;
    if (depth <= 8) {
        const unsigned first = depth ? high & ~((1u << (8 - depth)) - 1) : 0;
        const unsigned count = 1u << (8 - depth);
        for (unsigned h = first; h < first + count; h++) {
            const uint16_t bits = top_[h].load(std::memory_order_relaxed);
            top_[h].store(on ? bits | uint16_t(1u << depth) : bits & uint16_t(~(1u << depth)),
                          std::memory_order_relaxed);
        }
        return;
    }
    Low* low = low_[high].load(std::memory_order_relaxed);
    if (!low) {
        low = new Low;  // on: a clear never finds none
        n_low_++;
    }
    const unsigned bit = depth - 9;
    const unsigned first = (value & 0xff) & ~((1u << (16 - depth)) - 1);
    const unsigned count = 1u << (16 - depth);
    for (unsigned l = first; l < first + count; l++) {
        const uint8_t bits = low->bits[l].load(std::memory_order_relaxed);
        low->bits[l].store(on ? bits | uint8_t(1u << bit) : bits & uint8_t(~(1u << bit)),
                           std::memory_order_relaxed);
    }
    if (on) {
        if (low->prefixes++ == 0) {
            // Release: its entries are set before a reader can find it.
            low_[high].store(low, std::memory_order_release);
        }
    } else if (--low->prefixes == 0) {
        low_[high].store(nullptr, std::memory_order_release);
        ovsb_rcu_postpone(free_low, low);
        n_low_--;
    }
}

// The bits of `value` below a prefix of `depth` bits: zero.
static uint16_t prefix_of(uint16_t value, unsigned depth) {
    return depth ? static_cast<uint16_t>(value & (0xffffu << (kLaneBits - depth))) : 0;
}

void LaneTable::insert(uint16_t value, unsigned depth) {
    value = prefix_of(value, depth);
    if (counts_[depth << 16 | value]++ == 0) {
        mark(value, depth, true);
    }
}

bool LaneTable::remove(uint16_t value, unsigned depth) {
    value = prefix_of(value, depth);
    const auto it = counts_.find(depth << 16 | value);
    if (it == counts_.end()) {
        return false;  // not there: the caller's bug, and nothing to undo
    }
    if (--it->second == 0) {
        counts_.erase(it);
        mark(value, depth, false);
    }
    return true;
}

}  // namespace ovscls::tail
