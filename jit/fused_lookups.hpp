// fused_lookups.hpp: jit_fused, the FusedProvider (classifier/fused.hpp)
// that generates a lookup over a port's top-ranked subtables: when to
// compile, what to share, when to let code go.  A tier policy on the
// runtime (runtime.hpp), a peer of jit_avx2's (subtable_lookups.hpp): it
// reads the fast paths jit_avx2 chose through a function the engine hands
// it, and knows nothing else of it.
//
// At a ranking the classifier offers its top subtables in rank order
// (probe()).  The offer becomes a FusedSpec (fused_generator.hpp): the
// packets' miniflow map, which is the fast-path map jit_avx2 profiled for
// the top subtable, and the leading subtables whose own profiled map is the
// same, up to dpcls-jit-fused-subtables of them (at least 2), with their
// mask values (copied now: the compiler thread never reads a subtable).  So
// fusing is the JIT's third tier: a port's subtables fuse once they run
// tier-2 code for one kind of packet (a port's nw_dst prefixes: all of
// them); the fused code serves packets of that map, others go through the
// subtable loop as before.
//
// - Ready code for an equal spec is handed out at once (a reference).
// - Otherwise the spec is queued for the runtime's compiler thread (never
//   compiled here), under the runtime's code budget and compile rate; when it
//   is ready, ready_count() moves and the classifier, still at the same
//   ranking, asks again (Classifier::refresh_fused()) and gets it.
// - Code no classifier uses stays for kIdleProbes probes (the next ranking
//   of an unchanged port takes it), then is freed after an RCU grace period,
//   as is code released while in use.
// Everything here is under one mutex, never held across a compile.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "classifier/fused.hpp"
#include "jit/runtime.hpp"

namespace ovscls::jit {

struct FusedStats {
    uint64_t probes = 0;      // offers by rankings
    uint64_t handed = 0;      // of which answered with ready code
    uint64_t requests = 0;    // compiles queued
    uint64_t compiles = 0;    // fused lookups generated
    uint64_t failed = 0;      // refused (budget, rate, memory) or failed to generate
    uint64_t no_key_map = 0;  // offers whose top subtable had no profiled packet map yet
    uint64_t short_run = 0;   // offers whose top subtable's map too few leading ones share
    uint64_t live = 0;        // fused lookups in memory
    uint64_t in_use = 0;      // references held by classifiers
    uint64_t code_bytes = 0;  // of the live ones
};

class FusedLookups final : public FusedProvider {
  public:
    // The packet map of a subtable's fast path, if it runs tier-2 code:
    // what jit_avx2 profiled (SubtableLookups::fast_path_map(), handed in by
    // the engine: the two tiers do not know each other).
    using FastPathMap = std::function<std::optional<MiniflowMap>(const dpcls_subtable*)>;

    // Uses `runtime`'s configuration, code cache (budget, rate, memory) and
    // compiler thread; `runtime` outlives this object, whose compiles must
    // have stopped (Runtime::stop_compiler()) before it goes.
    FusedLookups(Runtime& runtime, FastPathMap fast_path_map);
    ~FusedLookups();  // all classifiers must have released their lookups
    FusedLookups(const FusedLookups&) = delete;
    FusedLookups& operator=(const FusedLookups&) = delete;

    size_t max_subtables() const override;
    FusedLookup probe(const dpcls_subtable* const subtables[], size_t n) override;
    void release(const FusedLookup& lookup) override;
    uint64_t ready_count() const override { return ready_.load(std::memory_order_acquire); }

    // Generates serialized code from now on (FusedSpec::serialize): for
    // perf/dpcls_bench's measure of speculation, never in a switch.
    void serialize_for_measurement(bool on);

    FusedStats stats() const;
    // One line per live fused lookup, for jit-show.
    std::string info() const;

  private:
    struct Entry;
    struct State;
    void compile(const std::shared_ptr<Entry>& entry);  // on the compiler thread
    void sweep();                                       // under the mutex

    Runtime& runtime_;
    const FastPathMap fast_path_map_;
    std::unique_ptr<State> state_;
    std::atomic<uint64_t> ready_{0};
};

}  // namespace ovscls::jit
