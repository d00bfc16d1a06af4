#include "code_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <mutex>
#include <unordered_map>

namespace ovscls::jit {
namespace {

size_t page_round(size_t size) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return (size + page - 1) / page * page;
}

// munmap() needs the length: remember it per mapping.  Never destroyed:
// OVS-RCU's thread may unmap postponed code while the process exits.
struct Mappings {
    std::mutex mutex;
    std::unordered_map<uint8_t*, size_t> sizes;
};
Mappings& mappings() {
    static Mappings* m = new Mappings;
    return *m;
}

}  // namespace

std::atomic<size_t> CodeMemory::mapped_{0};
std::atomic<int> CodeMemory::fail_next_{0};

uint8_t* CodeMemory::alloc(size_t size) {
    for (int n = fail_next_.load(); n > 0;) {
        if (fail_next_.compare_exchange_weak(n, n - 1)) {
            return nullptr;
        }
    }
    const size_t len = page_round(size);
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return nullptr;
    }
    Mappings& m = mappings();
    std::lock_guard lock(m.mutex);
    m.sizes[static_cast<uint8_t*>(p)] = len;
    mapped_.fetch_add(len, std::memory_order_relaxed);
    return static_cast<uint8_t*>(p);
}

void CodeMemory::free(uint8_t* p) {
    if (!p) {
        return;
    }
    size_t len;
    {
        Mappings& m = mappings();
        std::lock_guard lock(m.mutex);
        auto it = m.sizes.find(p);
        if (it == m.sizes.end()) {
            return;
        }
        len = it->second;
        m.sizes.erase(it);
    }
    munmap(p, len);
    mapped_.fetch_sub(len, std::memory_order_relaxed);
}

}  // namespace ovscls::jit
