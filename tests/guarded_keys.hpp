// guarded_keys.hpp: keys placed against a PROT_NONE page, so that a lookup
// reading beyond what the key contract allows faults.
//
// The key contract (classifier/layout.hpp): a lookup reads a key's header
// (hash, len, map) and its values, and may read the one word after its last
// value (OVS's generic does, when the mask has a word the key lacks, and so
// do this project's lookups; the word is masked off).  So slot i holds the
// key's header and values, then one word of garbage, then the guard page.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "classifier/layout.hpp"

namespace ovscls::test {

template <uint32_t Slots>
class GuardedKeys {
  public:
    GuardedKeys() {
        page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        if (sizeof(FlowKey) + 8 > page_) {
            std::abort();
        }
        void* p = mmap(nullptr, 2 * page_ * Slots, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            std::abort();
        }
        base_ = static_cast<uint8_t*>(p);
        for (uint32_t i = 0; i < Slots; i++) {
            if (mprotect(base_ + (2 * i + 1) * page_, page_, PROT_NONE) != 0) {
                std::abort();
            }
        }
    }
    ~GuardedKeys() { munmap(base_, 2 * page_ * Slots); }
    GuardedKeys(const GuardedKeys&) = delete;
    GuardedKeys& operator=(const GuardedKeys&) = delete;

    // Copies `key` into slot i: its header and values, then one word of
    // garbage, then the guard page.
    const netdev_flow_key* place(uint32_t i, const FlowKey& key) {
        const size_t values = std::popcount(key.map.bits[0]) + std::popcount(key.map.bits[1]);
        const size_t used = offsetof(FlowKey, values) + values * sizeof(uint64_t);
        uint8_t* end = base_ + (2 * i + 1) * page_;
        uint8_t* start = end - used - sizeof(uint64_t);
        std::memcpy(start, &key, used);
        const uint64_t garbage = 0x5a5a'5a5a'5a5a'5a5aull ^ i;
        std::memcpy(end - sizeof garbage, &garbage, sizeof garbage);
        return reinterpret_cast<const netdev_flow_key*>(start);
    }

  private:
    size_t page_ = 0;
    uint8_t* base_ = nullptr;
};

}  // namespace ovscls::test
