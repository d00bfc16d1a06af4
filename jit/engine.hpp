// engine.hpp: the JIT as its users see it: one object that puts together the
// runtime (runtime.hpp: configuration, code cache, compiler thread, log,
// host checks) and the two tier policies on it, peers that know the runtime
// and not each other:
//
//   jit_avx2   SubtableLookups (subtable_lookups.hpp): a lookup per hot
//              subtable, tier 1 (slow path) then tier 2 (a fast path for
//              the packets' map);
//   jit_fused  FusedLookups (fused_lookups.hpp): one function over a port's
//              top subtables, for the packet map jit_avx2 chose for them
//              (handed over here, as a function).
//
// The Engine also writes the operator's views of all three
// (dpcls-plugin/jit-show, dpcls-plugin/show's state lines).
// ovs-vswitchd's plugin and the standalone library each use one process
// engine (process_engine()); tests build their own.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "classifier/lookup_impl.hpp"
#include "jit/fused_lookups.hpp"
#include "jit/runtime.hpp"
#include "jit/subtable_lookups.hpp"

namespace ovscls::jit {

using EngineOptions = RuntimeOptions;

// jit-show's figures, of the runtime and of jit_avx2.
struct JitStats : RuntimeStats, SubtableStats {};

class Engine {
  public:
    explicit Engine(EngineOptions options = {});
    // Stops the compiler thread, lets go of all code and waits for the
    // postponed frees.  The subtables it served must be gone or moved off
    // its code, and every classifier must have released its fused lookups.
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    Runtime& runtime() { return runtime_; }
    // jit_avx2: its registry entry (descriptor()) and its state per subtable.
    SubtableLookups& subtables() { return subtables_; }
    // jit_fused, the FusedProvider for classifiers.
    FusedLookups& fused() { return fused_; }

    // The calls most users make, forwarded (see the classes above).
    LookupDescriptor descriptor() { return subtables_.descriptor(); }
    ovsb_lookup_func probe(const ProbeContext& ctx) { return subtables_.probe(ctx); }
    void release(const dpcls_subtable* subtable, ovsb_lookup_func in_use) {
        subtables_.release(subtable, in_use);
    }
    ovsb_lookup_func compile_now(const dpcls_subtable* subtable,
                                 std::optional<MiniflowMap> expected) {
        return subtables_.compile_now(subtable, expected);
    }
    const CompiledLookup* compiled_for(const dpcls_subtable* subtable) const {
        return subtables_.compiled_for(subtable);
    }
    const ProfileSlot* profile_for(const dpcls_subtable* subtable) const {
        return subtables_.profile_for(subtable);
    }
    std::optional<MiniflowMap> fast_path_map(const dpcls_subtable* subtable) const {
        return subtables_.fast_path_map(subtable);
    }
    void drain() { runtime_.drain(); }
    JitConfig config() const { return runtime_.config(); }
    void configure(const JitConfig& config) { runtime_.configure(config); }
    std::string configure_from(const char* const keys[], const char* const values[], size_t n,
                               bool* changed = nullptr) {
        return runtime_.configure_from(keys, values, n, changed);
    }
    void set_log(std::function<void(const char* line)> log) { runtime_.set_log(std::move(log)); }
    void set_events(std::function<void(JitEvent event, uint32_t n)> events) {
        runtime_.set_events(std::move(events));
    }
    void ranking_begin() { runtime_.ranking_begin(); }
    void ranking_end() { runtime_.ranking_end(); }
    CodeMemory& code_memory() { return runtime_.code_cache().memory(); }

    JitStats stats() const;
    // Human-readable state, statistics and configuration, for operators
    // (ovs-appctl dpcls-plugin/jit-show): one "name: value" per line.
    std::string info() const;
    // One line each for dpcls-plugin/show: "on (...)" with the instructions
    // the generated code uses, or why it serves nothing ("off (...)",
    // "declines every subtable (...)").
    std::string state() const;
    std::string fused_state() const;

  private:
    Runtime runtime_;            // first: the tiers use it until they are gone
    SubtableLookups subtables_;  // jit_avx2
    FusedLookups fused_;         // jit_fused
};

// The engine ovs-vswitchd's plugin and the standalone builtin registry use,
// configured from the environment when first used; never destroyed (OVS-RCU
// may run postponed frees while the process exits).
Engine& process_engine();

}  // namespace ovscls::jit
