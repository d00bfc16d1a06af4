// runtime.hpp: what the JIT's two tiers share, and nothing of either's
// policy.  One Runtime holds:
//
//   - the configuration (JitConfig: other_config keys, OVSCLS_JIT*
//     variables; bad values fail closed);
//   - the code cache and its memory (code_cache.hpp): the code budget and
//     the compile rate that both tiers spend;
//   - the compiler thread (compiler_thread.hpp), where every compile runs,
//     held back while a PMD thread ranks (ranking_begin()/ranking_end());
//   - the log and OVS's coverage events, and the declines: why generated
//     code cannot serve, counted, each reason logged once;
//   - the host checks: the CPU has the instructions the code uses, OVS's
//     private cmap layout is the one the code reads.
//
// The tiers are peers on it, each knowing the runtime and not the other:
// subtable_lookups.hpp (jit_avx2: a lookup per hot subtable, tier 1 and 2)
// and fused_lookups.hpp (jit_fused: one function over a port's top
// subtables).  engine.hpp puts the three together.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jit/code_cache.hpp"
#include "jit/compiler_thread.hpp"
#include "jit/jit_config.hpp"

namespace ovscls::jit {

// Why generated code does not serve a subtable.
enum class Decline {
    kDisabled,
    kCpu,
    kAbi,  // OVS's private cmap layout differs (jit/cmap_layout.hpp)
    kTooManyBlocks,
    kCodeBudget,
    kCompileRate,
    kQueueFull,  // the compiler thread has kMaxQueued requests waiting
    kNoMemory,
    kGenerateFailed,  // the generator failed otherwise: a bug, logged
    kCount
};
const char* decline_name(Decline why);

enum class CpuFeature { kAvx2, kBmi1, kBmi2, kPopcnt, kSse42 };

// Compile requests waiting for the compiler thread, at most.
inline constexpr size_t kMaxQueued = 256;

// What the JIT reports as it goes, for OVS's coverage counters: a
// subtable's code compiled, a subtable declined, a subtable moved to a fast
// path (jit_avx2); a fused lookup compiled, a fused lookup not made
// (jit_fused: the budget, the rate or the generator said no).
enum class JitEvent { kCompile, kDecline, kTierUp, kFusedCompile, kFusedDecline };

struct RuntimeOptions {
    JitConfig config;
    // Where decline and warning lines go (default: stderr, "ovscls-jit: ...").
    std::function<void(const char* line)> log;
    // Decline as if the CPU lacked this feature (tests of the decline path).
    std::optional<CpuFeature> hide_cpu_feature;
    // How long the compiler thread waits, at most, before each compile while
    // some thread is inside a ranking call (ranking_begin()).
    std::chrono::nanoseconds ranking_hold_max = std::chrono::milliseconds(20);
};

struct RuntimeStats {
    CacheStats cache;
    uint64_t declines[static_cast<int>(Decline::kCount)] = {};
    uint64_t pending = 0;  // compile requests queued or compiling now
    // Ranking calls (ranking_begin()/ranking_end()): how many, the median
    // wall time of the last 1024, the max and the sum since the start, and
    // the last call's (so that a reader who samples can time one interval).
    uint64_t rankings = 0;
    uint64_t ranking_ns_median = 0;
    uint64_t ranking_ns_max = 0;
    uint64_t ranking_ns_total = 0;
    uint64_t ranking_ns_last = 0;
};

// The kSize most recent values (a ring) and their median: the compile and
// ranking times jit-show reports.  Not thread-safe.
class TimeRing {
  public:
    static constexpr size_t kSize = 1024;
    void push(uint64_t v);
    uint64_t median() const;

  private:
    std::vector<uint64_t> values_;
    size_t next_ = 0;
};

class Runtime {
  public:
    explicit Runtime(RuntimeOptions options);
    // Stops the compiler thread (if stop_compiler() did not), then waits for
    // the code frees that OVS-RCU postponed: they return pages to the cache,
    // which goes last.
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    // ---- Configuration. ----
    JitConfig config() const;
    void configure(const JitConfig& config);
    // Applies ovs-vswitchd's other_config (keys[i] = values[i]; keys not of
    // the JIT are ignored) over the defaults.  A bad value turns the JIT
    // off; the returned text names it (empty when all were good).
    // `changed` tells whether the settings differ from before the call.
    std::string configure_from(const char* const keys[], const char* const values[], size_t n,
                               bool* changed = nullptr);
    // config().hot_hits, without the lock (a ranking asks per subtable).
    uint32_t hot_hits() const { return hot_hits_.load(std::memory_order_relaxed); }

    // ---- Log, events, declines. ----
    void set_log(std::function<void(const char* line)> log);
    void set_events(std::function<void(JitEvent event, uint32_t n)> events);
    void log_line(const std::string& line) const;
    // Reports `n` events of kind `what` (set_events()).  Takes the log lock.
    void event(JitEvent what, uint32_t n = 1) const;
    // Counts a decline and reports kDecline; the first of each reason is
    // logged, with `detail()` (built only then: declines may come once per
    // subtable per ranking).
    template <typename Detail>
    void decline(Decline why, Detail&& detail);
    // Counts and logs a failed CodeCache acquire or admission as its
    // decline; nothing for a success.
    void decline_for(const CodeCache::Result& result);
    // The first perf map line or dump that could not be written, logged
    // once; jit-show counts them all.
    void log_file_errors();

    // ---- The host. ----
    // Whether generated code may serve a subtable of fingerprint (u0, u1)
    // now ((0, 0): any): enabled, the CPU and OVS's cmap layout as the code
    // needs, within the generator's blocks.  A "no" is declined
    // (decline()).  Lock-free.
    bool usable(uint32_t u0, uint32_t u1);
    // Why generated code cannot run on this host ("the CPU lacks AVX2", or
    // how OVS's cmap layout differs), or "".
    std::string why_unavailable() const;

    // ---- Code and the compiler thread. ----
    CodeCache& code_cache() { return cache_; }
    // Queues `request` (its job set) for the compiler thread; false when
    // the queue is full.
    bool submit(const CompileRequest& request);
    // Whether submit() would refuse, without the queue's mutex.
    bool queue_full() const { return compiler_->full(); }
    // Drops the queued requests of `subtable`.
    void cancel(const dpcls_subtable* subtable) { compiler_->cancel(subtable); }
    // Returns once the compiler thread has nothing queued or in progress.
    void drain() { compiler_->drain(); }
    // Drops what is queued, waits for the compile in progress, joins: the
    // owner calls it before destroying what the jobs use.
    void stop_compiler() { compiler_.reset(); }

    // ---- Rankings. ----
    // Brackets one ranking call on the calling thread (OVS's
    // dpcls_sort_subtable_vector()): its wall time goes into the stats, and
    // the compiler thread waits (up to RuntimeOptions::ranking_hold_max)
    // while any thread ranks.  One ranking at a time per thread.
    void ranking_begin();
    void ranking_end();
    // Inside a ranking call on this thread: the most hits of the subtables
    // probed in it so far, `hits` (this probe's) included; 0 outside one.
    // A ranking probes in the previous ranking's order, so the busiest
    // subtables come first.
    uint32_t ranking_busiest(uint32_t hits);

    RuntimeStats stats() const;

  private:
    void wait_for_rankings() const;

    CodeCache cache_;
    mutable std::mutex mutex_;  // guards config_ and the rankings' times
    JitConfig config_;
    std::atomic<bool> enabled_{false};  // config_.enabled, for usable()
    std::atomic<uint32_t> hot_hits_{0};
    std::optional<CpuFeature> hidden_;
    std::atomic<uint64_t> declines_[static_cast<int>(Decline::kCount)] = {};
    std::atomic<bool> logged_[static_cast<int>(Decline::kCount)] = {};
    std::atomic<bool> file_error_logged_{false};
    mutable std::mutex log_mutex_;  // guards log_ and events_
    std::function<void(const char*)> log_;
    std::function<void(JitEvent, uint32_t)> events_;
    std::atomic<int> rankings_active_{0};  // threads between ranking_begin() and _end()
    int64_t ranking_hold_max_ns_ = 0;
    TimeRing ranking_ns_;  // this and the next: under mutex_
    uint64_t rankings_ = 0, ranking_ns_max_ = 0, ranking_ns_total_ = 0, ranking_ns_last_ = 0;
    std::unique_ptr<CompilerThread> compiler_;  // last: stopped first
};

template <typename Detail>
void Runtime::decline(Decline why, Detail&& detail) {
    declines_[static_cast<int>(why)].fetch_add(1, std::memory_order_relaxed);
    event(JitEvent::kDecline);
    if (!logged_[static_cast<int>(why)].exchange(true)) {
        log_line("jit_avx2 declines (" + std::string(decline_name(why)) + "): " + detail() +
                 "; the next lookup implementation serves.  Logged once.");
    }
}

}  // namespace ovscls::jit
