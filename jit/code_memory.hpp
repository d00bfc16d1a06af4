// code_memory.hpp: where generated code lives, never writable and
// executable at once.
//
// Each generated lookup gets its own page(s), mapped read-write for the
// generator to emit into and switched to read-execute before its address is
// published (LookupGenerator + setProtectModeRE()).  Pages are never
// switched back while any thread may run them: only after an RCU grace
// period (code_cache.cpp) are they made read-write again and unmapped, or
// kept in a small pool of ready pages for the next compile.  A page per
// lookup costs 4 KiB but means no page that is executing is ever made
// writable again to add a neighbour's code.  One instance per engine (its
// counters); the pool of ready pages is the process's, like the heap.
#pragma once

#include <xbyak/xbyak.h>

#include <atomic>
#include <cstddef>

namespace ovscls::jit {

class CodeMemory : public Xbyak::Allocator {
  public:
    // mmap()s RW pages; null (xbyak then throws ERR_CANT_ALLOC) when the
    // kernel refuses or a test asked for a failure.
    uint8_t* alloc(size_t size) override;
    void free(uint8_t* p) override;

    // Bytes this instance has holding code (live or awaiting its grace
    // period); pooled pages are not counted.
    size_t mapped_bytes() const { return mapped_.load(std::memory_order_relaxed); }

    // Fault injection (tests): the next `n` allocations fail.
    void fail_next_allocations(int n) { fail_next_.store(n); }

  private:
    std::atomic<size_t> mapped_{0};
    std::atomic<int> fail_next_{0};
};

}  // namespace ovscls::jit
