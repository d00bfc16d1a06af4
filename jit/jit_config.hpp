// jit_config.hpp: what an operator can set for jit_avx2, and how it is read.
//
// Two sources, one vocabulary:
//   ovs-vswitchd   other_config of the Open_vSwitch table, applied live
//                  (patches/: dpif_netdev_set_config() hands the keys over):
//                    dpcls-jit                    true/false (also on/off, yes/no, 1/0)
//                    dpcls-jit-hot-hits           hits per ranking interval to compile
//                    dpcls-jit-code-budget        most code bytes mapped at once
//                    dpcls-jit-compiles-per-sec   compile rate limit
//                    dpcls-jit-fused-subtables    most subtables of a port one
//                                                 jit_fused lookup serves (0: off)
//   standalone     the environment, read once when the engine starts:
//                    OVSCLS_JIT, OVSCLS_JIT_HOT_HITS, OVSCLS_JIT_CODE_BUDGET,
//                    OVSCLS_JIT_COMPILES_PER_SEC, OVSCLS_JIT_FUSED_SUBTABLES, and
//                    OVSCLS_JIT_PERF_MAP=1
//                    (/tmp/perf-<pid>.map), OVSCLS_JIT_DUMP_DIR=DIR (code dumps)
// A value that cannot be parsed turns the JIT off (fail closed: a typo must
// not leave an operator believing limits hold that do not) and is reported,
// naming the key and the value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "jit/code_cache.hpp"

namespace ovscls::jit {

// Most subtables one jit_fused lookup may serve (jit/fused_generator.hpp's
// kMaxFusedSubtables).
inline constexpr uint32_t kMaxFusedSetting = 16;

struct JitConfig {
    bool enabled = true;
    uint32_t hot_hits = 64;
    uint32_t fused_subtables = kMaxFusedSetting;  // jit_fused (jit/fused_lookups.hpp); 0: off
    CacheOptions cache;

    // The defaults overridden by OVSCLS_JIT* variables.  Each bad value is
    // appended to `errors` (one line each) and turns the JIT off.
    static JitConfig from_env(std::string* errors);

    // Applies one other_config setting ("dpcls-jit", "dpcls-jit-hot-hits",
    // ...).  A bad value, or a "dpcls-jit..." key that is no setting, turns
    // the JIT off and is described in `error`; returns false then.  Other
    // keys are ignored (true).
    bool apply(std::string_view key, std::string_view value, std::string* error);

    // This configuration with every setting that has an other_config key
    // back at `defaults`' value (the settings from the environment only, the
    // perf map and the dump folder, kept): what a set of other_config keys
    // is applied over, so that a key removed from other_config brings back
    // its default.
    JitConfig with_other_config_defaults(const JitConfig& defaults) const;

    // "on, hot after 64 hits, code budget 16777216 bytes, 1000 compiles/s".
    std::string describe() const;
};
bool operator==(const JitConfig& a, const JitConfig& b);

// Limits of the numeric settings.
inline constexpr uint64_t kMaxCodeBudget = uint64_t{1} << 40;
inline constexpr uint64_t kMaxCompilesPerSec = 1000000;

// The most code bytes this process can map for the JIT: each code page may
// be a mapping of its own (read-execute between read-write neighbours), and
// a process has vm.max_map_count mappings in all, which OVS, DPDK and malloc
// need too: a quarter of them, in pages.  `max_map_count` is read from
// /proc/sys/vm/max_map_count when 0 (65530, Linux's default, if unreadable).
uint64_t code_budget_ceiling(uint64_t max_map_count = 0);

// `config` with its code budget clamped to code_budget_ceiling(); `note`
// says so when it was (empty otherwise).
JitConfig clamp_to_system(JitConfig config, std::string* note);

}  // namespace ovscls::jit
