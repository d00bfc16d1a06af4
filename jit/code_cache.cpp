#include "jit/code_cache.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

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

CodeCache& CodeCache::global() {
    static CodeCache* cache = new CodeCache;  // outlives postponed frees at exit
    return *cache;
}

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

CodeCache::Result CodeCache::acquire(const LookupShape& shape, const CacheOptions& options) {
    std::lock_guard lock(mutex_);
    if (auto it = lookups_.find(shape); it != lookups_.end()) {
        it->second->refs++;
        stats_.shared++;
        return {it->second, Outcome::kShared, ""};
    }
    if (CodeMemory::mapped_bytes() + LookupGenerator::reserved_bytes(shape) >
        options.code_budget_bytes) {
        return {nullptr, Outcome::kOverBudget,
                "code budget of " + std::to_string(options.code_budget_bytes) +
                    " bytes is spent (OVSCLS_JIT_CODE_BUDGET)"};
    }
    if (!take_token(options.compiles_per_sec)) {
        return {nullptr, Outcome::kOverRate,
                "more than " + std::to_string(options.compiles_per_sec) +
                    " compiles per second (OVSCLS_JIT_COMPILES_PER_SEC)"};
    }

    auto lookup = std::make_unique<CompiledLookup>();
    lookup->shape = shape;
    const int64_t start = now_ns();
    GenerateStatus status;
    lookup->code = LookupGenerator::create(shape, &lookup->profile, &memory_, &status);
    if (!status.ok()) {
        const bool memory = status.code == GenerateStatus::Code::kNoMemory;
        return {nullptr, memory ? Outcome::kNoMemory : Outcome::kGenerateFailed, status.detail};
    }
    lookup->compile_ns = static_cast<uint64_t>(now_ns() - start);
    lookup->code_bytes = lookup->code->getSize();
    lookup->fn = lookup->code->getCode<ovsb_lookup_func>();
    lookup->id = next_id_++;
    lookup->refs = 1;

    stats_.compiles++;
    stats_.code_bytes += lookup->code_bytes;
    stats_.compile_ns_total += lookup->compile_ns;
    stats_.compile_ns_max = std::max(stats_.compile_ns_max, lookup->compile_ns);
    announce(*lookup, options);
    CompiledLookup* raw = lookup.release();
    lookups_.emplace(shape, raw);
    return {raw, Outcome::kCompiled, ""};
}

void CodeCache::release(CompiledLookup* lookup) {
    std::lock_guard lock(mutex_);
    if (--lookup->refs > 0) {
        return;
    }
    lookups_.erase(lookup->shape);
    stats_.code_bytes -= lookup->code_bytes;
    ovsb_rcu_postpone(free_lookup, lookup);
}

CacheStats CodeCache::stats() const {
    std::lock_guard lock(mutex_);
    CacheStats out = stats_;
    out.live = lookups_.size();
    out.mapped_bytes = CodeMemory::mapped_bytes();
    return out;
}

void CodeCache::announce(const CompiledLookup& lookup, const CacheOptions& options) {
    if (options.perf_map) {
        // perf's JIT symbol convention: /tmp/perf-<pid>.map, "start size name".
        const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
        if (FILE* f = std::fopen(path.c_str(), "a")) {
            std::fprintf(f, "%lx %zx %s\n", reinterpret_cast<unsigned long>(lookup.fn),
                         lookup.code_bytes, symbol(lookup).c_str());
            std::fclose(f);
        }
    }
    if (!options.dump_dir.empty()) {
        std::string ignored;
        dump(lookup, options.dump_dir + "/" + symbol(lookup) + ".bin", &ignored);
    }
}

bool CodeCache::dump(const CompiledLookup& lookup, const std::string& path, std::string* error) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        *error = "cannot write " + path;
        return false;
    }
    const size_t n = std::fwrite(reinterpret_cast<const void*>(lookup.fn), 1, lookup.code_bytes, f);
    const bool ok = std::fclose(f) == 0 && n == lookup.code_bytes;
    if (!ok) {
        *error = "short write to " + path;
    }
    return ok;
}

}  // namespace ovscls::jit
