// engine.hpp: jit_avx2, the registry entry that generates a lookup per
// subtable shape: when to compile, when to decline, when to let code go.
// One Engine owns everything the JIT holds: configuration, the code cache
// and its memory, the compiler thread, the per-subtable state and the
// statistics.  ovs-vswitchd and the standalone library each use one
// process engine (process_engine()); tests build their own.
//
// Tiers.  A new subtable is served by `specialized`/`generic` (the probe
// declines: tier 0).  When the classifier re-probes it at ranking time with
// at least `hot_hits` hits in the interval, the probe asks the compiler
// thread (compiler_thread.hpp) for a lookup of its mask map with no fast
// path (tier 1) and keeps declining; at a later ranking it finds the code
// ready and returns it.  That code samples the maps of the keys it matched
// by its slow path into the subtable's own profile slot (ProfileSlot).
// When, over a ranking interval, most of the subtable's hits came by the
// slow path, the probe asks for code with the sampled map as the fast
// path's expected map (tier 2),
// at most kMaxTierUps times.  Each step only swaps the subtable's function
// pointer; the code it replaces is freed after an RCU grace period once the
// classifier has published the swap (release()).
//
// Nothing on the probe's path compiles or waits for a compile: it takes the
// engine's mutex (never held across a compile) for a map lookup and maybe a
// queue push.  Compiles are counted by thread (JitStats): anything but the
// compiler thread (and compile_now(), which tests call) is a bug.
//
// Declines (the next implementation serves; each reason is logged once):
// disabled by configuration; CPU without AVX2, BMI1, BMI2, POPCNT or (when
// OVS hashes with CRC32) SSE4.2; OVS's cmap layout differs; more blocks than
// the generator supports; code budget or compile rate spent; compile queue
// full; no memory for code; the generator failed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "classifier/lookup_impl.hpp"
#include "jit/code_cache.hpp"
#include "jit/compiler_thread.hpp"
#include "jit/fused_lookups.hpp"
#include "jit/jit_config.hpp"

namespace ovscls::jit {

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

// A subtable is recompiled for a new expected map at most this often: once
// for its traffic, once more if the traffic's map changes.  Traffic whose
// maps keep changing (a flood of odd packets) stays on the slow path rather
// than making the JIT chase it.
inline constexpr uint32_t kMaxTierUps = 2;
// Compile requests waiting for the compiler thread, at most.
inline constexpr size_t kMaxQueued = 256;
// Fast-path variants (tier-2 shapes) of one mask map, at most.  Subtables of
// one map whose traffic carries yet another packet map stay on tier 1: a
// flood of masks over one map with odd packets costs at most 1 + 2
// compiles, while a port's prefix subtables (one packet map) share one.
inline constexpr uint32_t kMaxFastPathsPerMap = 2;

// What the engine reports as it goes, for OVS's coverage counters: a
// subtable's code compiled, a subtable declined, a subtable moved to a fast
// path (jit_avx2); a fused lookup compiled, a fused lookup not made
// (jit_fused: the budget, the rate or the generator said no).
enum class JitEvent { kCompile, kDecline, kTierUp, kFusedCompile, kFusedDecline };

struct JitStats {
    CacheStats cache;
    uint64_t declines[static_cast<int>(Decline::kCount)] = {};
    uint64_t requests = 0;           // compile requests submitted
    uint64_t pending = 0;            // requests queued or compiling now
    uint64_t installs = 0;           // finished code handed to a subtable
    uint64_t tier_ups = 0;           // of which with a fast path
    uint64_t cancelled = 0;          // finished for a subtable that was gone
    uint64_t subtables = 0;          // subtables the engine tracks
    uint64_t no_profile_slot = 0;    // probes of a subtable whose profile set was full
    uint64_t tier_ups_limited = 0;   // tier-ups refused by kMaxFastPathsPerMap
    uint64_t compile_ns_median = 0;  // of the last kCompileTimes compiles
    // Ranking calls (ranking_begin()/ranking_end()): how many, the median
    // wall time of the last 1024, the max and the sum since the start, and
    // the last call's (so that a reader who samples can time one interval).
    uint64_t rankings = 0;
    uint64_t ranking_ns_median = 0;
    uint64_t ranking_ns_max = 0;
    uint64_t ranking_ns_total = 0;
    uint64_t ranking_ns_last = 0;
};

struct EngineOptions {
    JitConfig config;
    // Where decline and warning lines go (default: stderr, "ovscls-jit: ...").
    std::function<void(const char* line)> log;
    // Decline as if the CPU lacked this feature (tests of the decline path).
    std::optional<CpuFeature> hide_cpu_feature;
    // How long the compiler thread waits, at most, before each compile while
    // some thread is inside a ranking call (ranking_begin()).
    std::chrono::nanoseconds ranking_hold_max = std::chrono::milliseconds(20);
};

class Engine {
  public:
    explicit Engine(EngineOptions options = {});
    // Stops the compiler thread, lets go of all code and waits for the
    // postponed frees.  The subtables it served must be gone or moved off
    // its code.
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // The registry entry: `jit_avx2` at priority 3, probe() and release().
    LookupDescriptor descriptor();

    ovsb_lookup_func probe(const ProbeContext& ctx);
    // The classifier published `in_use` as the subtable's lookup (null: the
    // subtable is being destroyed): code of this subtable other than
    // `in_use` is released, a pending request for it cancelled.
    void release(const dpcls_subtable* subtable, ovsb_lookup_func in_use);

    // Compiles (or shares) a lookup for `subtable` now, on the calling
    // thread, skipping the hot-hits threshold and the queue, with `expected`
    // as the fast path's map (none: slow path only).  Declines as probe()
    // does.  For tests and benchmarks; the subtable is then tracked as if
    // probe() had installed it, so release() frees the code.
    ovsb_lookup_func compile_now(const dpcls_subtable* subtable,
                                 std::optional<MiniflowMap> expected);
    // Returns once the compiler thread has nothing queued or in progress.
    void drain();

    // The compiled lookup a subtable runs, or null; and its profile slot.
    const CompiledLookup* compiled_for(const dpcls_subtable* subtable) const;
    const ProfileSlot* profile_for(const dpcls_subtable* subtable) const;

    JitConfig config() const;
    void configure(const JitConfig& config);
    // Applies ovs-vswitchd's other_config (keys[i] = values[i]; keys not of
    // the JIT are ignored) over the defaults.  A bad value turns the JIT
    // off; the returned text names it (empty when all were good).
    // `changed` tells whether the settings differ from before the call.
    std::string configure_from(const char* const keys[], const char* const values[], size_t n,
                               bool* changed = nullptr);
    void set_log(std::function<void(const char* line)> log);
    void set_events(std::function<void(JitEvent event, uint32_t n)> events);

    // Brackets one ranking call on the calling thread (OVS's
    // dpcls_sort_subtable_vector()): its wall time goes into the stats, and
    // the compiler thread waits (up to EngineOptions::ranking_hold_max)
    // while any thread ranks.  One ranking at a time per thread.
    void ranking_begin();
    void ranking_end();

    JitStats stats() const;
    // Human-readable state, statistics and configuration, for operators
    // (ovs-appctl dpcls-plugin/jit-show): one "name: value" per line.
    std::string info() const;
    // One line each for dpcls-plugin/show: "on (...)" with the instructions
    // the generated code uses, or why it serves nothing ("off (...)",
    // "declines every subtable (...)").
    std::string state() const;
    std::string fused_state() const;

    CodeMemory& code_memory() { return cache_.memory(); }

    // jit_fused (fused_lookups.hpp), the FusedProvider for classifiers; it
    // compiles on this engine's thread, under its budget and rate.
    FusedLookups& fused() { return *fused_; }
    // For FusedLookups: whether code may be generated at all now
    // (configuration, CPU, OVS's cmap layout; a "no" is logged once).
    bool fused_usable();
    // The packet map of `subtable`'s fast path, if it runs tier-2 code.
    std::optional<MiniflowMap> fast_path_map(const dpcls_subtable* subtable) const;
    // Queues work for the compiler thread; false when its queue is full.
    bool submit_job(std::function<void()> job);
    CodeCache& code_cache() { return cache_; }
    // Writes a line where the engine's log goes.
    void log_line(const std::string& line) const;
    // Reports `n` events of kind `what` (set_events()).  Takes the log lock.
    void event(JitEvent what, uint32_t n = 1) const;

  private:
    struct SubtableJit;
    struct State;

    bool usable(uint32_t u0, uint32_t u1);
    template <typename Detail>
    void decline(Decline why, Detail&& detail);
    void decline_for(const CodeCache::Result& result);
    void compile(const CompileRequest& request);  // on the compiler thread
    void record_compile_time(uint64_t ns);
    void request(const dpcls_subtable* subtable, SubtableJit& st, const LookupShape& shape);
    void install(const dpcls_subtable* subtable, SubtableJit& st, CompiledLookup* next);
    void maybe_tier_up(const dpcls_subtable* subtable, SubtableJit& st, uint32_t hits);
    void claim_profile_slot(const dpcls_subtable* subtable, SubtableJit& st);
    void release_orphans();
    void release_retired(SubtableJit& st);
    void release_all(SubtableJit& st);
    // The subtable's entry; made when missing if `create`, else null.
    SubtableJit* entry(const dpcls_subtable* subtable, bool create);

    void wait_for_rankings() const;
    void log_file_errors();
    void queue_full(SubtableJit& st);

    CodeCache cache_;
    std::unique_ptr<State> state_;
    std::atomic<int> rankings_active_{0};       // threads between ranking_begin() and _end()
    std::unique_ptr<FusedLookups> fused_;       // its jobs run on compiler_
    std::unique_ptr<CompilerThread> compiler_;  // after state_ and fused_: stopped first
};

// The engine ovs-vswitchd's plugin and the standalone builtin registry use,
// configured from the environment when first used; never destroyed (OVS-RCU
// may run postponed frees while the process exits).
Engine& process_engine();

}  // namespace ovscls::jit
