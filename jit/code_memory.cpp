#include "jit/code_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ovscls::jit {
namespace {

size_t page_size() {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return page;
}

size_t page_round(size_t size) { return (size + page_size() - 1) / page_size() * page_size(); }

// Single pages kept for reuse.  A fresh page costs a mmap() and, at first
// touch, a page fault that zeroes it: 30-40 us on this project's VM, more
// than the code generation itself.  A pooled page is already mapped,
// touched and read-write (xbyak makes code RW again before freeing it,
// which happens only after an RCU grace period, when nothing runs it).
constexpr size_t kPoolPages = 256;
constexpr size_t kRefillPages = 16;

// Never destroyed: OVS-RCU's thread may free postponed code while the
// process exits.
struct Mappings {
    std::mutex mutex;
    std::unordered_map<uint8_t*, size_t> sizes;  // munmap() needs the length
    std::vector<uint8_t*> pool;
};
Mappings& mappings() {
    static Mappings* m = new Mappings;
    return *m;
}

// Every byte of a code page that the code does not use is int3 (0xcc): a
// jump into the rest of a page, or into what a previous lookup left there,
// traps instead of running stale instructions.  Pages are read-write here
// (fresh, or back from the pool, which xbyak made RW again before freeing).
uint8_t* filled(uint8_t* p, size_t len) {
    std::memset(p, 0xcc, len);
    return p;
}

}  // namespace

uint8_t* CodeMemory::alloc(size_t size) {
    for (int n = fail_next_.load(); n > 0;) {
        if (fail_next_.compare_exchange_weak(n, n - 1)) {
            return nullptr;
        }
    }
    const size_t len = page_round(size);
    Mappings& m = mappings();
    {
        std::lock_guard lock(m.mutex);
        if (len == page_size() && !m.pool.empty()) {
            uint8_t* p = m.pool.back();
            m.pool.pop_back();
            m.sizes[p] = len;
            mapped_.fetch_add(len, std::memory_order_relaxed);
            return filled(p, len);
        }
    }
    // Single pages come in batches, populated by the kernel in one go (one
    // fault-in pass instead of one fault per page); the rest go to the pool.
    const size_t batch = len == page_size() ? kRefillPages : 1;
    void* p = mmap(nullptr, len * batch, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) {
        return nullptr;
    }
    std::lock_guard lock(m.mutex);
    for (size_t i = 1; i < batch; i++) {
        m.pool.push_back(static_cast<uint8_t*>(p) + i * len);
    }
    m.sizes[static_cast<uint8_t*>(p)] = len;
    mapped_.fetch_add(len, std::memory_order_relaxed);
    return filled(static_cast<uint8_t*>(p), len);
}

void CodeMemory::free(uint8_t* p) {
    if (!p) {
        return;
    }
    Mappings& m = mappings();
    size_t len;
    {
        std::lock_guard lock(m.mutex);
        auto it = m.sizes.find(p);
        if (it == m.sizes.end()) {
            return;
        }
        len = it->second;
        m.sizes.erase(it);
        mapped_.fetch_sub(len, std::memory_order_relaxed);
        if (len == page_size() && m.pool.size() < kPoolPages) {
            m.pool.push_back(p);  // RW already: see kPoolPages
            return;
        }
    }
    munmap(p, len);
}

}  // namespace ovscls::jit
