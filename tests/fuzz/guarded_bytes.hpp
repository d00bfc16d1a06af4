// guarded_bytes.hpp: a byte string placed so that its last byte is the last
// one before a PROT_NONE page.  OVS's parser and miniflow_extract() are C
// code of the OVS lib, which the fuzz build does not instrument: a read
// past the text or the frame faults here instead of going unseen.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace ovscls::test {

class GuardedBytes {
  public:
    // Room for strings of up to `max` bytes.
    explicit GuardedBytes(size_t max) {
        const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        room_ = (max + page - 1) / page * page;
        void* p =
            mmap(nullptr, room_ + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED || mprotect(static_cast<uint8_t*>(p) + room_, page, PROT_NONE)) {
            std::abort();
        }
        base_ = static_cast<uint8_t*>(p);
        mapped_ = room_ + page;
    }
    ~GuardedBytes() { munmap(base_, mapped_); }
    GuardedBytes(const GuardedBytes&) = delete;
    GuardedBytes& operator=(const GuardedBytes&) = delete;

    size_t max() const { return room_; }

    // Copies data[0..len) so that it ends at the guard page; len <= max().
    const uint8_t* place(const void* data, size_t len) {
        if (len > room_) {
            std::abort();
        }
        uint8_t* start = base_ + room_ - len;
        std::memcpy(start, data, len);
        return start;
    }

  private:
    uint8_t* base_;
    size_t room_, mapped_;
};

}  // namespace ovscls::test
