// code_cache.hpp: compiled lookups, shared by shape, bounded, freed safely.
//
// - Sharing: one compiled lookup per LookupShape, reference-counted by the
//   subtables using it.  Subtables of one mask map (all nw_dst prefixes of a
//   port, the same mask on every port and PMD thread) share code.
// - Bounds (Tuple Space Explosion, CVE-2019-25076): a new compile is
//   refused when it would take the mapped code beyond the byte budget, or
//   when the compile rate (a token bucket refilled at N per second, holding
//   at most N) is spent.  The caller then falls back to a lookup that needs
//   no code (specialized/generic).
// - Freeing: when the last subtable lets go, the lookup leaves the cache at
//   once (no new users) and its pages are unmapped after an OVS-RCU grace
//   period, when no reader can still be running it.
// - Observability: optional /tmp/perf-<pid>.map lines ("<addr> <size>
//   dpcls_jit_u4_u1_<id>") so perf names the code, and optional dumps of
//   each lookup's bytes for `objdump -D -b binary -m i386:x86-64`.
//
// All methods are thread-safe (one mutex, never held while code is
// generated and never taken by lookups).  The runtime (jit/runtime.hpp) owns
// one cache; its compiler thread is where acquire() normally compiles.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "classifier/ovs_bridge.h"
#include "jit/code_memory.hpp"
#include "jit/lookup_generator.hpp"
#include "jit/lookup_shape.hpp"

namespace ovscls::jit {

struct CompiledLookup {
    LookupShape shape;
    uint64_t id = 0;
    ovsb_lookup_func fn = nullptr;
    size_t code_bytes = 0;  // emitted bytes (the mapping is whole pages)
    uint64_t compile_ns = 0;
    // Per-subtable tier-up input, written by the code's slow path; slots are
    // handed out by the engine (ProfileSlot).
    std::unique_ptr<ProfileTable> profiles = std::make_unique<ProfileTable>();
    std::unique_ptr<LookupGenerator> code;
    uint32_t refs = 0;  // guarded by the cache's mutex
};

struct CacheOptions {
    size_t code_budget_bytes = 16u << 20;
    uint32_t compiles_per_sec = 1000;
    bool perf_map = false;
    std::string dump_dir;  // empty: no dumps
};

struct CacheStats {
    uint64_t compiles = 0;
    uint64_t compiles_off_compiler = 0;  // compiles on a thread not marked as the compiler's
    uint64_t shared = 0;                 // acquisitions served by an existing lookup
    uint64_t live = 0;                   // lookups in the cache (stats() counts them)
    uint64_t code_bytes = 0;
    uint64_t mapped_bytes = 0;  // includes lookups awaiting their grace period
    uint64_t compile_ns_total = 0;
    uint64_t compile_ns_max = 0;
    uint64_t file_errors = 0;  // perf map lines and dumps not written
};

class CodeCache {
  public:
    enum class Outcome { kCompiled, kShared, kOverBudget, kOverRate, kNoMemory, kGenerateFailed };
    struct Result {
        CompiledLookup* lookup = nullptr;  // null unless kCompiled or kShared
        Outcome outcome = Outcome::kNoMemory;
        std::string detail;  // why, for the log
    };

    CodeCache() = default;
    CodeCache(const CodeCache&) = delete;
    CodeCache& operator=(const CodeCache&) = delete;

    // A reference to the lookup for `shape`, compiling it when new (without
    // holding the cache's mutex: release() and stats() never wait for a
    // compile).
    Result acquire(const LookupShape& shape, const CacheOptions& options);
    // Admission for code compiled outside the cache (fused lookups,
    // jit/fused_lookups.hpp), under the same budget and rate: kCompiled
    // when a compile token was taken and `bytes` of the budget reserved
    // (until end_compile()); kOverBudget or kOverRate, with why, otherwise.
    Result begin_compile(size_t bytes, const CacheOptions& options);
    // The compile admitted for `bytes` is over; `code_bytes` emitted (0:
    // it failed).  The code's pages count against the budget until freed.
    void end_compile(size_t bytes, size_t code_bytes, uint64_t compile_ns);
    // Such code of `code_bytes` is no longer live (its pages go after a
    // grace period, with the allocator).
    void end_code(size_t code_bytes);
    // Perf map line and dump (CacheOptions) for such code, named `name`.
    void announce(const void* code, size_t bytes, const std::string& name,
                  const CacheOptions& options);

    // A reference to the lookup for `shape` if one exists (no compile, no
    // budget or rate check: sharing costs nothing), else null.
    CompiledLookup* share(const LookupShape& shape);
    // How many lookups with a fast path (an expected map) there are for
    // `mask_map`.
    uint32_t fast_path_variants(const MiniflowMap& mask_map) const;
    // Drops a reference; the last one retires the lookup (freed after an
    // RCU grace period).
    void release(CompiledLookup* lookup);
    // The owner of `lookup`'s profile slot `slot` left: the slot cools for an
    // RCU grace period (holding a reference), then is free.
    void retire_profile_slot(CompiledLookup* lookup, uint32_t slot);

    CacheStats stats() const;
    CodeMemory& memory() { return memory_; }

    // Marks the calling thread as the compiler thread (counted apart in
    // CacheStats: a compile anywhere else, on a PMD thread say, shows).
    static void mark_compiler_thread();

    // Writes the lookup's machine code to a new file `path` (0600, never
    // through a symbolic link, never over an existing file); false with
    // `error` set when it cannot.
    static bool dump(const CompiledLookup& lookup, const std::string& path, std::string* error);
    static bool dump(const void* code, size_t bytes, const std::string& path, std::string* error);
    // Why the first perf map line or dump was not written ("" if none was).
    std::string first_file_error() const;

  private:
    void file_error(const std::string& error);
    bool take_token(uint32_t per_sec);
    // Budget and rate check; reserves `bytes` when admitted.  Under mutex_.
    bool admit(size_t bytes, const CacheOptions& options, Result* refused);
    void count_compile(size_t code_bytes, uint64_t compile_ns);  // under mutex_
    void announce(const CompiledLookup& lookup, const CacheOptions& options);
    static void end_cooling(void* aux);

    mutable std::mutex mutex_;
    std::unordered_map<LookupShape, CompiledLookup*, LookupShapeHash> lookups_;
    // Per mask map, the lookups of lookups_ that have a fast path.
    std::unordered_map<LookupShape, uint32_t, LookupShapeHash> variants_;
    CodeMemory memory_;
    size_t reserving_bytes_ = 0;  // reserved by compiles in progress
    uint64_t next_id_ = 1;
    std::string first_file_error_;  // guarded by mutex_
    CacheStats stats_;
    double tokens_ = 0;  // compile-rate bucket
    int64_t tokens_ns_ = 0;
    uint32_t tokens_rate_ = 0;  // the rate the bucket was filled for
};

}  // namespace ovscls::jit
