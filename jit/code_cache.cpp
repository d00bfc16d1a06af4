#include "jit/code_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace ovscls::jit {
namespace {

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string symbol(const CompiledLookup& lookup) {
    return "dpcls_jit_" + lookup.shape.fingerprint() + "_" + std::to_string(lookup.id);
}

// Runs after an RCU grace period: no reader can be in the code any more.
void free_lookup(void* aux) { delete static_cast<CompiledLookup*>(aux); }

}  // namespace

thread_local bool t_compiler_thread = false;

void CodeCache::mark_compiler_thread() { t_compiler_thread = true; }

bool CodeCache::take_token(uint32_t per_sec) {
    const int64_t now = now_ns();
    if (per_sec != tokens_rate_) {  // first use or a new rate: a full bucket
        tokens_ = per_sec;
        tokens_rate_ = per_sec;
    } else {
        tokens_ += static_cast<double>(now - tokens_ns_) * per_sec / 1e9;
        if (tokens_ > per_sec) {
            tokens_ = per_sec;
        }
    }
    tokens_ns_ = now;
    if (tokens_ < 1) {
        return false;
    }
    tokens_ -= 1;
    return true;
}

bool CodeCache::admit(size_t bytes, const CacheOptions& options, Result* refused) {
    if (memory_.mapped_bytes() + reserving_bytes_ + bytes > options.code_budget_bytes) {
        *refused = {nullptr, Outcome::kOverBudget,
                    "code budget of " + std::to_string(options.code_budget_bytes) +
                        " bytes is spent (dpcls-jit-code-budget)"};
        return false;
    }
    if (!take_token(options.compiles_per_sec)) {
        *refused = {nullptr, Outcome::kOverRate,
                    "more than " + std::to_string(options.compiles_per_sec) +
                        " compiles per second (dpcls-jit-compiles-per-sec)"};
        return false;
    }
    reserving_bytes_ += bytes;
    return true;
}

CodeCache::Result CodeCache::begin_compile(size_t bytes, const CacheOptions& options) {
    std::lock_guard lock(mutex_);
    Result result{nullptr, Outcome::kCompiled, ""};
    admit(bytes, options, &result);
    return result;
}

void CodeCache::end_compile(size_t bytes, size_t code_bytes, uint64_t compile_ns) {
    std::lock_guard lock(mutex_);
    reserving_bytes_ -= bytes;
    if (code_bytes) {
        count_compile(code_bytes, compile_ns);
    }
}

void CodeCache::end_code(size_t code_bytes) {
    std::lock_guard lock(mutex_);
    stats_.code_bytes -= code_bytes;
}

void CodeCache::count_compile(size_t code_bytes, uint64_t compile_ns) {
    stats_.compiles++;
    stats_.compiles_off_compiler += !t_compiler_thread;
    stats_.code_bytes += code_bytes;
    stats_.compile_ns_total += compile_ns;
    stats_.compile_ns_max = std::max(stats_.compile_ns_max, compile_ns);
}

CodeCache::Result CodeCache::acquire(const LookupShape& shape, const CacheOptions& options) {
    const size_t reserve = LookupGenerator::reserved_bytes(shape);
    {
        std::lock_guard lock(mutex_);
        if (auto it = lookups_.find(shape); it != lookups_.end()) {
            it->second->refs++;
            stats_.shared++;
            return {it->second, Outcome::kShared, ""};
        }
        if (Result refused; !admit(reserve, options, &refused)) {
            return refused;
        }
    }

    auto lookup = std::make_unique<CompiledLookup>();
    lookup->shape = shape;
    const int64_t start = now_ns();
    GenerateStatus status;
    lookup->code = LookupGenerator::create(shape, lookup->profiles.get(), &memory_, &status);
    lookup->compile_ns = static_cast<uint64_t>(now_ns() - start);

    std::unique_lock lock(mutex_);
    reserving_bytes_ -= reserve;
    if (!status.ok()) {
        const bool memory = status.code == GenerateStatus::Code::kNoMemory;
        return {nullptr, memory ? Outcome::kNoMemory : Outcome::kGenerateFailed, status.detail};
    }
    if (auto it = lookups_.find(shape); it != lookups_.end()) {
        // Another thread compiled the shape meanwhile (compile_now() beside
        // the compiler thread): share theirs; ours was never published.
        it->second->refs++;
        stats_.shared++;
        return {it->second, Outcome::kShared, ""};
    }
    lookup->code_bytes = lookup->code->getSize();
    lookup->fn = lookup->code->getCode<ovsb_lookup_func>();
    lookup->id = next_id_++;
    lookup->refs = 1;

    count_compile(lookup->code_bytes, lookup->compile_ns);
    CompiledLookup* raw = lookup.release();
    lookups_.emplace(shape, raw);
    if (shape.expected_map) {
        variants_[{shape.mask_map, std::nullopt}]++;
    }
    // The caller holds a reference, so `raw` outlives the files' writing,
    // which happens without the mutex (a probe may be waiting for it).
    lock.unlock();
    announce(*raw, options);
    return {raw, Outcome::kCompiled, ""};
}

CompiledLookup* CodeCache::share(const LookupShape& shape) {
    std::lock_guard lock(mutex_);
    auto it = lookups_.find(shape);
    if (it == lookups_.end()) {
        return nullptr;
    }
    it->second->refs++;
    stats_.shared++;
    return it->second;
}

uint32_t CodeCache::fast_path_variants(const MiniflowMap& mask_map) const {
    std::lock_guard lock(mutex_);
    auto it = variants_.find({mask_map, std::nullopt});
    return it == variants_.end() ? 0 : it->second;
}

void CodeCache::release(CompiledLookup* lookup) {
    std::lock_guard lock(mutex_);
    if (--lookup->refs > 0) {
        return;
    }
    lookups_.erase(lookup->shape);
    if (lookup->shape.expected_map) {
        auto it = variants_.find({lookup->shape.mask_map, std::nullopt});
        if (--it->second == 0) {
            variants_.erase(it);
        }
    }
    stats_.code_bytes -= lookup->code_bytes;
    ovsb_rcu_postpone(free_lookup, lookup);
}

namespace {
struct CoolingSlot {
    CodeCache* cache;
    CompiledLookup* lookup;
    uint32_t slot;
};
}  // namespace

void CodeCache::retire_profile_slot(CompiledLookup* lookup, uint32_t slot) {
    {
        std::lock_guard lock(mutex_);
        lookup->refs++;  // the slot's memory lives until it has cooled
    }
    std::atomic_ref<uint64_t>(lookup->profiles->slots[slot].owner)
        .store(kProfileCooling, std::memory_order_relaxed);
    ovsb_rcu_postpone(end_cooling, new CoolingSlot{this, lookup, slot});
}

// After a grace period: no reader that saw the old owner is left.
void CodeCache::end_cooling(void* aux) {
    std::unique_ptr<CoolingSlot> c(static_cast<CoolingSlot*>(aux));
    ProfileSlot& slot = c->lookup->profiles->slots[c->slot];
    std::atomic_ref<uint64_t>(slot.slow_keys).store(0, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(slot.owner).store(0, std::memory_order_release);
    c->cache->release(c->lookup);
}

CacheStats CodeCache::stats() const {
    std::lock_guard lock(mutex_);
    CacheStats out = stats_;
    out.live = lookups_.size();
    out.mapped_bytes = memory_.mapped_bytes();
    return out;
}

namespace {

// Writes all of `data` to `fd`; false on any error.
bool write_all(int fd, const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

// Opens `path` for the JIT's own output: never through a symbolic link,
// created 0600 (the files reveal code addresses), and, for appending, only a
// regular file the process's user owns (a file another user planted in /tmp
// is refused).  -1 with `error` set on failure.
int open_private(const std::string& path, bool append, std::string* error) {
    const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append ? O_APPEND : O_EXCL);
    const int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0) {
        *error = "cannot open " + path + ": " + std::strerror(errno);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        *error = path + " is not a regular file of this user: not written";
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace

// On the compiling thread (the compiler thread: no file I/O on a PMD), with
// no lock held.  Failures are counted (CacheStats::file_errors) and the
// first is kept for the engine to log.
void CodeCache::announce(const CompiledLookup& lookup, const CacheOptions& options) {
    announce(reinterpret_cast<const void*>(lookup.fn), lookup.code_bytes, symbol(lookup), options);
}

void CodeCache::announce(const void* code, size_t bytes, const std::string& name,
                         const CacheOptions& options) {
    std::string error;
    if (options.perf_map) {
        // perf's JIT symbol convention: /tmp/perf-<pid>.map, "start size name".
        const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
        char line[160];
        const int n = std::snprintf(line, sizeof line, "%lx %zx %s\n",
                                    reinterpret_cast<unsigned long>(code), bytes, name.c_str());
        const int fd = open_private(path, true, &error);
        if (fd >= 0) {
            if (!write_all(fd, line, static_cast<size_t>(n))) {
                error = "cannot write " + path + ": " + std::strerror(errno);
            }
            ::close(fd);
        }
        file_error(error);
    }
    if (!options.dump_dir.empty()) {
        error.clear();
        dump(code, bytes, options.dump_dir + "/" + name + ".bin", &error);
        file_error(error);
    }
}

void CodeCache::file_error(const std::string& error) {
    if (error.empty()) {
        return;
    }
    std::lock_guard lock(mutex_);
    stats_.file_errors++;
    if (first_file_error_.empty()) {
        first_file_error_ = error;
    }
}

std::string CodeCache::first_file_error() const {
    std::lock_guard lock(mutex_);
    return first_file_error_;
}

bool CodeCache::dump(const CompiledLookup& lookup, const std::string& path, std::string* error) {
    return dump(reinterpret_cast<const void*>(lookup.fn), lookup.code_bytes, path, error);
}

bool CodeCache::dump(const void* code, size_t bytes, const std::string& path, std::string* error) {
    const int fd = open_private(path, false, error);
    if (fd < 0) {
        return false;
    }
    bool ok = write_all(fd, code, bytes);
    if (!ok) {
        *error = "cannot write " + path + ": " + std::strerror(errno);
    }
    if (::close(fd) != 0 && ok) {
        *error = "cannot write " + path + ": " + std::strerror(errno);
        ok = false;
    }
    return ok;
}

}  // namespace ovscls::jit
