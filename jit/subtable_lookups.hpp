// subtable_lookups.hpp: jit_avx2, the registry entry that generates a
// lookup per subtable shape: when to compile, when to decline, when to let
// code go.  A tier policy on the runtime (runtime.hpp): it compiles on the
// runtime's thread, under its budget and rate, and knows nothing of
// jit_fused, which reads the fast paths it chose (fast_path_map()).
//
// Tiers.  A new subtable is served by `specialized`/`generic` (the probe
// declines: tier 0).  When the classifier re-probes it at ranking time with
// at least `hot_hits` hits in the interval (and a share of the busiest
// subtable's: kBusiestShare), the probe asks the compiler
// thread (compiler_thread.hpp) for a lookup of its mask map with no fast
// path (tier 1) and keeps declining; at a later ranking it finds the code
// ready and returns it.  That code samples the maps of the keys it matched
// by its slow path into the subtable's own profile slot (ProfileSlot).
// When, over a ranking interval, most of the subtable's hits came by the
// slow path, the probe asks for code with the sampled map as the fast
// path's expected map (tier 2), at most kMaxTierUps times.  Each step only
// swaps the subtable's function pointer; the code it replaces is freed
// after an RCU grace period once the classifier has published the swap
// (release()).
//
// Nothing on the probe's path compiles or waits for a compile: it takes
// this object's mutex (never held across a compile) for a map lookup and
// maybe a queue push.  Compiles are counted by thread (CacheStats): anything
// but the compiler thread (and compile_now(), which tests call) is a bug.
//
// Declines (the next implementation serves; each reason is logged once by
// the runtime): disabled by configuration; CPU without AVX2, BMI1, BMI2,
// POPCNT or (when OVS hashes with CRC32) SSE4.2; OVS's cmap layout differs;
// more blocks than the generator supports; code budget or compile rate
// spent; compile queue full; no memory for code; the generator failed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "classifier/lookup_impl.hpp"
#include "jit/runtime.hpp"

namespace ovscls::jit {

// Hot also means at least 1/kBusiestShare of the hits of the busiest
// subtable the ranking call has probed (Runtime::ranking_busiest()).  In
// a mask flood the tail index makes each attack subtable's lookup cheap
// enough that thousands of them pass `hot_hits` (a 2500-mask flood at
// 9 Mpps: ~90 hits a second each) while the legitimate subtables have
// millions: compiling and installing code for each of them made the
// flood's ranking call ~330 us slower (tail_index, 2026-12-07), for
// lookups the index serves anyway.  Traffic spread evenly over many
// subtables is hot in each of them.
inline constexpr uint32_t kBusiestShare = 256;
// A subtable is recompiled for a new expected map at most this often: once
// for its traffic, once more if the traffic's map changes.  Traffic whose
// maps keep changing (a flood of odd packets) stays on the slow path rather
// than making the JIT chase it.
inline constexpr uint32_t kMaxTierUps = 2;
// Fast-path variants (tier-2 shapes) of one mask map, at most.  Subtables of
// one map whose traffic carries yet another packet map stay on tier 1: a
// flood of masks over one map with odd packets costs at most 1 + 2
// compiles, while a port's prefix subtables (one packet map) share one.
inline constexpr uint32_t kMaxFastPathsPerMap = 2;

struct SubtableStats {
    uint64_t requests = 0;           // compile requests submitted
    uint64_t installs = 0;           // finished code handed to a subtable
    uint64_t tier_ups = 0;           // of which with a fast path
    uint64_t cancelled = 0;          // finished for a subtable that was gone
    uint64_t subtables = 0;          // subtables tracked
    uint64_t no_profile_slot = 0;    // probes of a subtable whose profile set was full
    uint64_t tier_ups_limited = 0;   // tier-ups refused by kMaxFastPathsPerMap
    uint64_t compile_ns_median = 0;  // of the last TimeRing::kSize compiles
};

class SubtableLookups {
  public:
    explicit SubtableLookups(Runtime& runtime);
    // Lets go of all code.  The runtime's compiler thread must be stopped
    // (its jobs use this object), and the subtables served must be gone or
    // moved off the code.
    ~SubtableLookups();
    SubtableLookups(const SubtableLookups&) = delete;
    SubtableLookups& operator=(const SubtableLookups&) = delete;

    // The registry entry: `jit_avx2` at its priority, probe(), release()
    // and the ranking brackets (the runtime's).
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

    // The compiled lookup a subtable runs, or null; and its profile slot.
    const CompiledLookup* compiled_for(const dpcls_subtable* subtable) const;
    const ProfileSlot* profile_for(const dpcls_subtable* subtable) const;
    // The packet map of `subtable`'s fast path, if it runs tier-2 code.
    std::optional<MiniflowMap> fast_path_map(const dpcls_subtable* subtable) const;

    SubtableStats stats() const;

  private:
    struct SubtableJit;
    struct State;

    void queue_full(SubtableJit& st);
    void compile(const CompileRequest& request);  // on the compiler thread
    void request(const dpcls_subtable* subtable, SubtableJit& st, const LookupShape& shape);
    void install(const dpcls_subtable* subtable, SubtableJit& st, CompiledLookup* next);
    void maybe_tier_up(const dpcls_subtable* subtable, SubtableJit& st, uint32_t hits);
    void claim_profile_slot(const dpcls_subtable* subtable, SubtableJit& st);
    void release_orphans();
    void release_retired(SubtableJit& st);
    void release_all(SubtableJit& st);
    // The subtable's entry; made when missing if `create`, else null.
    SubtableJit* entry(const dpcls_subtable* subtable, bool create);

    Runtime& runtime_;
    std::unique_ptr<State> state_;
};

}  // namespace ovscls::jit
