// jit_lookup.hpp: the `jit_avx2` registry entry: when to compile a subtable's
// lookup, when to decline, and when to let code go.
//
// Tiers.  A new subtable is served by `specialized`/`generic` (the probe
// declines: tier 0).  When the classifier re-probes it at ranking time with
// at least `hot_hits` hits in the interval, the JIT compiles a lookup for
// its mask map with no fast path (tier 1); that code's slow path samples
// the packets' miniflow map.  At a later ranking, when most of the
// subtable's keys took the slow path, it is recompiled with the sampled map
// as the fast path's expected map (tier 2).  Each step only swaps the
// subtable's function pointer; the code it replaces is freed after an RCU
// grace period once the classifier has published the swap (release()).
//
// Declines (the next implementation serves; each reason is logged once):
// disabled by configuration; CPU without AVX2, BMI1, BMI2, POPCNT or (when
// OVS hashes with CRC32) SSE4.2; more blocks than the generator supports;
// code budget or compile rate spent; no memory for code.  The generated hash
// is the one of the OVS build: CRC32 or, for OVS built without SSE4.2
// (Debian's binary), mhash.
//
// Configuration, read from the environment on first use (bad values are
// reported and the default kept):
//   OVSCLS_JIT=off                    disable (also 0, false, no)
//   OVSCLS_JIT_HOT_HITS=N             hits per ranking interval to compile (64)
//   OVSCLS_JIT_CODE_BUDGET=BYTES      most code mapped at once (16 MiB)
//   OVSCLS_JIT_COMPILES_PER_SEC=N     compile rate limit (1000)
//   OVSCLS_JIT_PERF_MAP=1             write /tmp/perf-<pid>.map entries
//   OVSCLS_JIT_DUMP_DIR=DIR           write each lookup's code to DIR/*.bin
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "classifier/lookup_impl.hpp"
#include "jit/code_cache.hpp"

namespace ovscls::jit {

struct JitConfig {
    bool enabled = true;
    uint32_t hot_hits = 64;
    CacheOptions cache;

    // The defaults overridden by OVSCLS_JIT* variables; problems with their
    // values are appended to `errors`, one line each.
    static JitConfig from_env(std::string* errors);
};

JitConfig config();
void configure(const JitConfig& config);

enum class Decline {
    kDisabled,
    kCpu,
    kAbi,  // OVS's private cmap layout differs (jit/cmap_layout.hpp)
    kTooManyBlocks,
    kCodeBudget,
    kCompileRate,
    kNoMemory,
    kGenerateFailed,  // the generator failed otherwise: a bug, logged
    kCount
};
const char* decline_name(Decline why);

// The registry entry: `jit_avx2` at priority 3, probe() and release().
LookupDescriptor descriptor();

ovsb_lookup_func probe(const ProbeContext& ctx);
// The classifier published `in_use` as the subtable's lookup (null: the
// subtable is being destroyed): code of this subtable other than `in_use`
// is released.
void release(const dpcls_subtable* subtable, ovsb_lookup_func in_use);

// Compiles (or shares) a lookup for `subtable` now, skipping the hot-hits
// threshold, with `expected` as the fast path's map (none: slow path only).
// Declines as probe() does.  Used by tests and benchmarks; the subtable is
// then tracked as if probe() had compiled it, so release() frees the code.
ovsb_lookup_func compile_now(const dpcls_subtable* subtable, std::optional<MiniflowMap> expected);

// The compiled lookup a subtable runs, or null.
const CompiledLookup* compiled_for(const dpcls_subtable* subtable);

struct JitStats {
    CacheStats cache;
    uint64_t declines[static_cast<int>(Decline::kCount)] = {};
    uint64_t tier_ups = 0;   // recompiles with a fast path
    uint64_t subtables = 0;  // subtables holding JIT code
};
JitStats stats();
// Human-readable stats and configuration, for operators.
std::string info();

// Where decline messages go (default: stderr, "ovscls-jit: ...").
void set_log_sink(void (*sink)(const char* line));

// Test hooks.
enum class CpuFeature { kAvx2, kBmi1, kBmi2, kPopcnt, kSse42 };
void test_hide_cpu_feature(std::optional<CpuFeature> feature);  // nullopt: none
void test_reset_decline_log();

}  // namespace ovscls::jit
