#include "jit/jit_config.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>

namespace ovscls::jit {
namespace {

std::optional<uint64_t> parse_number(std::string_view text, uint64_t max) {
    const std::string s(text);
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) {
        return std::nullopt;
    }
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (*end || errno || v > max) {
        return std::nullopt;
    }
    return v;
}

// 1/0, on/off, true/false, yes/no, in any case.
std::optional<bool> parse_switch(std::string_view text) {
    std::string word(text);
    for (char& ch : word) {
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    for (const char* on : {"1", "on", "true", "yes"}) {
        if (word == on) {
            return true;
        }
    }
    for (const char* off : {"0", "off", "false", "no"}) {
        if (word == off) {
            return false;
        }
    }
    return std::nullopt;
}

// One setting, whatever its source: `name` is how the operator spelled the
// key, for the error.
enum class Setting { kEnabled, kHotHits, kCodeBudget, kCompilesPerSec, kPerfMap, kFused };

bool set(JitConfig& c, Setting what, const std::string& name, std::string_view value,
         std::string* error) {
    auto bad = [&](const std::string& expected) {
        *error = name + "=\"" + std::string(value) + "\" is not " + expected +
                 "; jit_avx2 is OFF until it is fixed";
        c.enabled = false;
        return false;
    };
    switch (what) {
        case Setting::kEnabled:
        case Setting::kPerfMap: {
            const std::optional<bool> on = parse_switch(value);
            if (!on) {
                return bad("a switch (true/false, on/off, yes/no, 1/0)");
            }
            (what == Setting::kEnabled ? c.enabled : c.cache.perf_map) = *on;
            return true;
        }
        case Setting::kHotHits:
        case Setting::kCompilesPerSec: {
            const uint64_t max = what == Setting::kHotHits ? UINT32_MAX : kMaxCompilesPerSec;
            const std::optional<uint64_t> n = parse_number(value, max);
            if (!n) {
                return bad("a number from 0 to " + std::to_string(max));
            }
            (what == Setting::kHotHits ? c.hot_hits : c.cache.compiles_per_sec) =
                static_cast<uint32_t>(*n);
            return true;
        }
        case Setting::kFused: {
            const std::optional<uint64_t> n = parse_number(value, kMaxFusedSetting);
            if (!n) {
                return bad("a number of subtables from 0 (off) to " +
                           std::to_string(kMaxFusedSetting));
            }
            c.fused_subtables = static_cast<uint32_t>(*n);
            return true;
        }
        case Setting::kCodeBudget: {
            const std::optional<uint64_t> n = parse_number(value, kMaxCodeBudget);
            if (!n) {
                return bad("a number of bytes from 0 to " + std::to_string(kMaxCodeBudget));
            }
            c.cache.code_budget_bytes = *n;
            return true;
        }
    }
    return true;
}

struct Key {
    Setting setting;
    const char* other_config;  // null: environment only
    const char* env;
};
constexpr Key kKeys[] = {
    {Setting::kEnabled, "dpcls-jit", "OVSCLS_JIT"},
    {Setting::kHotHits, "dpcls-jit-hot-hits", "OVSCLS_JIT_HOT_HITS"},
    {Setting::kCodeBudget, "dpcls-jit-code-budget", "OVSCLS_JIT_CODE_BUDGET"},
    {Setting::kCompilesPerSec, "dpcls-jit-compiles-per-sec", "OVSCLS_JIT_COMPILES_PER_SEC"},
    {Setting::kFused, "dpcls-jit-fused-subtables", "OVSCLS_JIT_FUSED_SUBTABLES"},
    {Setting::kPerfMap, nullptr, "OVSCLS_JIT_PERF_MAP"},
};

}  // namespace

JitConfig JitConfig::from_env(std::string* errors) {
    JitConfig c;
    bool failed = false;
    for (const Key& key : kKeys) {
        if (const char* text = std::getenv(key.env)) {
            std::string error;
            if (!set(c, key.setting, key.env, text, &error)) {
                *errors += error + "\n";
                failed = true;
            }
        }
    }
    if (const char* dir = std::getenv("OVSCLS_JIT_DUMP_DIR")) {
        c.cache.dump_dir = dir;
    }
    if (failed) {
        c.enabled = false;  // a later good OVSCLS_JIT must not turn it back on
    }
    if (!errors->empty() && errors->back() == '\n') {
        errors->pop_back();
    }
    return c;
}

JitConfig JitConfig::with_other_config_defaults(const JitConfig& defaults) const {
    JitConfig c = *this;
    for (const Key& k : kKeys) {
        if (!k.other_config) {
            continue;
        }
        switch (k.setting) {
            case Setting::kEnabled:
                c.enabled = defaults.enabled;
                break;
            case Setting::kHotHits:
                c.hot_hits = defaults.hot_hits;
                break;
            case Setting::kCodeBudget:
                c.cache.code_budget_bytes = defaults.cache.code_budget_bytes;
                break;
            case Setting::kCompilesPerSec:
                c.cache.compiles_per_sec = defaults.cache.compiles_per_sec;
                break;
            case Setting::kFused:
                c.fused_subtables = defaults.fused_subtables;
                break;
            case Setting::kPerfMap:
                break;  // environment only
        }
    }
    return c;
}

bool JitConfig::apply(std::string_view key, std::string_view value, std::string* error) {
    for (const Key& k : kKeys) {
        if (k.other_config && key == k.other_config) {
            return set(*this, k.setting, "other_config:" + std::string(key), value, error);
        }
    }
    if (key.starts_with("dpcls-jit")) {  // a misspelt key must not pass for a limit
        *error = "other_config:" + std::string(key) +
                 " is not a jit_avx2 setting (dpcls-jit, dpcls-jit-hot-hits, "
                 "dpcls-jit-code-budget, dpcls-jit-compiles-per-sec, "
                 "dpcls-jit-fused-subtables); jit_avx2 is OFF until it is fixed";
        enabled = false;
        return false;
    }
    return true;
}

std::string JitConfig::describe() const {
    return std::string(enabled ? "on" : "OFF") + ", hot after " + std::to_string(hot_hits) +
           " hits, code budget " + std::to_string(cache.code_budget_bytes) + " bytes, " +
           std::to_string(cache.compiles_per_sec) + " compiles/s, " +
           (fused_subtables ? "fused over up to " + std::to_string(fused_subtables) + " subtables"
                            : std::string("fused OFF"));
}

bool operator==(const JitConfig& a, const JitConfig& b) {
    return a.enabled == b.enabled && a.hot_hits == b.hot_hits &&
           a.fused_subtables == b.fused_subtables &&
           a.cache.code_budget_bytes == b.cache.code_budget_bytes &&
           a.cache.compiles_per_sec == b.cache.compiles_per_sec &&
           a.cache.perf_map == b.cache.perf_map && a.cache.dump_dir == b.cache.dump_dir;
}

uint64_t code_budget_ceiling(uint64_t max_map_count) {
    if (max_map_count == 0) {
        max_map_count = 65530;
        std::ifstream f("/proc/sys/vm/max_map_count");
        uint64_t v = 0;
        if (f >> v && v > 0) {
            max_map_count = v;
        }
    }
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    return max_map_count / 4 * page;
}

JitConfig clamp_to_system(JitConfig config, std::string* note) {
    note->clear();
    const uint64_t ceiling = code_budget_ceiling();
    if (config.cache.code_budget_bytes > ceiling) {
        *note = "dpcls-jit-code-budget " + std::to_string(config.cache.code_budget_bytes) +
                " bytes clamped to " + std::to_string(ceiling) +
                ": each code page may be a mapping of its own, and the JIT may take a quarter "
                "of vm.max_map_count";
        config.cache.code_budget_bytes = ceiling;
    }
    return config;
}

}  // namespace ovscls::jit
