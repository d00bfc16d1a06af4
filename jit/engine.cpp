#include "jit/engine.hpp"

#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

namespace ovscls::jit {

Engine::Engine(EngineOptions options)
    : runtime_(std::move(options)),
      subtables_(runtime_),
      fused_(runtime_, [this](const dpcls_subtable* subtable) {
          return subtables_.fast_path_map(subtable);
      }) {}

Engine::~Engine() {
    // No job may run once the tiers start going; the runtime goes last and
    // waits for the frees they postpone.
    runtime_.stop_compiler();
}

JitStats Engine::stats() const {
    JitStats out;
    static_cast<RuntimeStats&>(out) = runtime_.stats();
    static_cast<SubtableStats&>(out) = subtables_.stats();
    return out;
}

std::string Engine::info() const {
    const JitConfig c = config();
    const JitStats st = stats();
    std::string out = "jit_avx2: ";
    if (!c.enabled) {
        out += "disabled (dpcls-jit=false or a bad setting)";
    } else if (std::string why = runtime_.why_unavailable(); !why.empty()) {
        out += "unavailable (" + why + ")";
    } else {
        out += "enabled";
    }
    out += "\n";
    // One "name: value" per line, as OVS's pmd-stats-show: each name is
    // unique in the report, so that a script reads a value with one sed.
    using Rows = std::initializer_list<std::pair<std::string, std::string>>;
    auto put = [&out](Rows rows) {
        for (const auto& [name, value] : rows) {
            out += "  " + name + ": " + value + "\n";
        }
    };
    auto num = [](uint64_t v) { return std::to_string(v); };
    auto us = [](uint64_t ns) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1f us", static_cast<double>(ns) / 1e3);
        return std::string(text);
    };
    const CacheStats& cache = st.cache;
    put({{"hot hits", num(c.hot_hits)},
         {"code budget", num(c.cache.code_budget_bytes) + " bytes"},
         {"compiles per second", num(c.cache.compiles_per_sec)},
         {"subtables", num(st.subtables)},
         {"lookups", num(cache.live)},
         {"code bytes", num(cache.code_bytes)},
         {"mapped bytes", num(cache.mapped_bytes)},
         {"compiles", num(cache.compiles)},
         {"compiles not on the compiler thread", num(cache.compiles_off_compiler)},
         {"shared", num(cache.shared)},
         {"requests", num(st.requests)},
         {"pending", num(st.pending)},
         {"installs", num(st.installs)},
         {"tier-ups", num(st.tier_ups)},
         {"tier-ups refused by the per-map limit", num(st.tier_ups_limited)},
         {"probes without a profile slot", num(st.no_profile_slot)},
         {"cancelled", num(st.cancelled)},
         {"compile time median", us(st.compile_ns_median)},
         {"compile time max", us(cache.compile_ns_max)},
         {"ranking calls", num(st.rankings)},
         {"ranking call median", us(st.ranking_ns_median)},
         {"ranking call max", us(st.ranking_ns_max)},
         {"ranking call last", us(st.ranking_ns_last)},
         {"ranking calls in all", us(st.ranking_ns_total)}});
    if (c.cache.perf_map || !c.cache.dump_dir.empty() || cache.file_errors) {
        put({{"perf map", c.cache.perf_map ? "on" : "off"},
             {"dumps", c.cache.dump_dir.empty() ? "off" : "to " + c.cache.dump_dir},
             {"files not written", num(cache.file_errors)}});
    }
    for (int i = 0; i < static_cast<int>(Decline::kCount); i++) {
        put({{std::string("declined for ") + decline_name(static_cast<Decline>(i)),
              num(st.declines[i])}});
    }
    const FusedStats f = fused_.stats();
    out += "jit_fused: ";
    out += !c.enabled          ? std::string("off (jit_avx2 is off)")
           : c.fused_subtables ? "up to " + num(c.fused_subtables) + " subtables of a port"
                               : std::string("off (dpcls-jit-fused-subtables=0)");
    out += "\n";
    // The fused counters, in jit-show's order.
    static constexpr std::pair<const char*, uint64_t FusedStats::*> kFusedCounters[] = {
        {"fused lookups", &FusedStats::live},
        {"fused code bytes", &FusedStats::code_bytes},
        {"fused in use", &FusedStats::in_use},
        {"fused rankings offered", &FusedStats::probes},
        {"fused handed", &FusedStats::handed},
        {"fused requests", &FusedStats::requests},
        {"fused compiles", &FusedStats::compiles},
        {"fused failed", &FusedStats::failed},
        {"fused without a packet map yet", &FusedStats::no_key_map},
        {"fused with too few subtables of one packet map", &FusedStats::short_run}};
    for (const auto& [name, counter] : kFusedCounters) {
        put({{name, num(f.*counter)}});
    }
    out += fused_.info();
    return out;
}

// (engine.hpp)  Reads the configuration; the CPU check as the probe's.
std::string Engine::state() const {
    const JitConfig c = config();
    if (!c.enabled) {
        return "off (other_config:dpcls-jit=false or a bad dpcls-jit* setting)";
    }
    if (std::string why = runtime_.why_unavailable(); !why.empty()) {
        return "declines every subtable (" + why + ")";
    }
    return OVSCLS_HASH_CRC32 ? "on (its code uses AVX2, BMI1, BMI2, POPCNT and SSE4.2's CRC32)"
                             : "on (its code uses AVX2, BMI1, BMI2 and POPCNT)";
}

// (engine.hpp)  jit_fused fuses jit_avx2's code: off or declining with it.
std::string Engine::fused_state() const {
    const JitConfig c = config();
    if (!c.enabled) {
        return "off (jit_avx2 is off)";
    }
    if (!c.fused_subtables) {
        return "off (other_config:dpcls-jit-fused-subtables=0)";
    }
    if (std::string why = runtime_.why_unavailable(); !why.empty()) {
        return "declines every port (jit_avx2 declines every subtable (" + why + "))";
    }
    return "on (up to " + std::to_string(c.fused_subtables) + " subtables of a port)";
}

Engine& process_engine() {
    static Engine* engine = [] {
        std::string errors;
        EngineOptions options;
        options.config = JitConfig::from_env(&errors);
        auto* e = new Engine(std::move(options));
        if (!errors.empty()) {
            e->runtime().log_line(errors);
        }
        return e;
    }();
    return *engine;
}

}  // namespace ovscls::jit
