#include "jit/jit_lookup.hpp"

#include <xbyak/xbyak_util.h>

#include <atomic>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "jit/cmap_layout.hpp"

namespace ovscls::jit {
namespace {

// JIT code a subtable holds: the lookup it runs, and lookups it ran until
// the classifier has published the swap.
struct SubtableJit {
    MiniflowMap mask_map;
    CompiledLookup* current = nullptr;
    std::vector<CompiledLookup*> retired;
    uint64_t slow_seen = 0;  // current->profile.slow_keys at the last probe
    uint32_t tier_ups = 0;
};

// A subtable is recompiled for a new expected map at most this often: once
// for its traffic, once more if the traffic's map changes.  Traffic whose
// maps keep changing (a flood of odd packets) stays on the slow path rather
// than making the JIT chase it.
constexpr uint32_t kMaxTierUps = 2;

void stderr_sink(const char* line) { std::fprintf(stderr, "ovscls-jit: %s\n", line); }

struct State {
    std::mutex mutex;  // guards everything but the atomics
    JitConfig config;
    std::unordered_map<const dpcls_subtable*, SubtableJit> subtables;
    uint64_t tier_ups = 0;
    std::atomic<uint64_t> declines[static_cast<int>(Decline::kCount)] = {};
    std::atomic<bool> logged[static_cast<int>(Decline::kCount)] = {};
    std::atomic<void (*)(const char*)> sink{stderr_sink};
    std::atomic<int> hidden_feature{-1};

    State() {
        std::string errors;
        config = JitConfig::from_env(&errors);
        if (!errors.empty()) {
            stderr_sink(errors.c_str());
        }
    }
};

State& state() {
    static State* s = new State;  // postponed frees may run at exit
    return *s;
}

void log_line(const std::string& line) { state().sink.load()(line.c_str()); }

void decline(Decline why, const std::string& detail) {
    State& s = state();
    s.declines[static_cast<int>(why)].fetch_add(1, std::memory_order_relaxed);
    if (!s.logged[static_cast<int>(why)].exchange(true)) {
        log_line("jit_avx2 declines (" + std::string(decline_name(why)) + "): " + detail +
                 "; the next lookup implementation serves.  Logged once.");
    }
}

// The instructions the generated code uses.
const char* missing_cpu_feature() {
    static const Xbyak::util::Cpu cpu;
    using Cpu = Xbyak::util::Cpu;
    const struct {
        CpuFeature feature;
        Cpu::Type type;
        const char* name;
    } needed[] = {{CpuFeature::kAvx2, Cpu::tAVX2, "AVX2"},
                  {CpuFeature::kBmi1, Cpu::tBMI1, "BMI1"},
                  {CpuFeature::kBmi2, Cpu::tBMI2, "BMI2"},
                  {CpuFeature::kPopcnt, Cpu::tPOPCNT, "POPCNT"},
                  {CpuFeature::kSse42, Cpu::tSSE42, "SSE4.2"}};
    const int hidden = state().hidden_feature.load();
    for (const auto& n : needed) {
        if (n.feature == CpuFeature::kSse42 && !OVSCLS_HASH_CRC32) {
            continue;  // the mhash flavour emits no crc32
        }
        if (!cpu.has(n.type) || static_cast<int>(n.feature) == hidden) {
            return n.name;
        }
    }
    return nullptr;
}

// Declines that do not depend on the subtable's JIT state.  True when
// usable.  Called with the state's mutex held (`cfg` is guarded by it).
bool usable(uint32_t u0, uint32_t u1, const JitConfig& cfg) {
    if (!cfg.enabled) {
        decline(Decline::kDisabled, "disabled by configuration (OVSCLS_JIT=off)");
        return false;
    }
    if (const char* feature = missing_cpu_feature()) {
        decline(Decline::kCpu, std::string("the CPU lacks ") + feature +
                                   " (needed: AVX2, BMI1, BMI2, POPCNT and, with OVS's "
                                   "CRC32 hash, SSE4.2)");
        return false;
    }
    if (std::string why; !cmap_layout_matches(&why)) {
        decline(Decline::kAbi, why);
        return false;
    }
    if (u0 + u1 > kMaxBlocks) {
        decline(Decline::kTooManyBlocks, "fingerprint (" + std::to_string(u0) + "," +
                                             std::to_string(u1) + ") has more than " +
                                             std::to_string(kMaxBlocks) + " blocks");
        return false;
    }
    return true;
}

// A reference to the lookup for `shape`, or null (declined and logged).
CompiledLookup* acquire(const LookupShape& shape, const JitConfig& cfg) {
    CodeCache::Result r = CodeCache::global().acquire(shape, cfg.cache);
    switch (r.outcome) {
        case CodeCache::Outcome::kCompiled:
        case CodeCache::Outcome::kShared:
            return r.lookup;
        case CodeCache::Outcome::kOverBudget:
            decline(Decline::kCodeBudget, r.detail);
            break;
        case CodeCache::Outcome::kOverRate:
            decline(Decline::kCompileRate, r.detail);
            break;
        case CodeCache::Outcome::kNoMemory:
            decline(Decline::kNoMemory, r.detail);
            break;
        case CodeCache::Outcome::kGenerateFailed:
            decline(Decline::kGenerateFailed, r.detail);
            break;
    }
    return nullptr;
}

// Lets go of the lookups the subtable ran before its current one.
void release_retired(SubtableJit& st) {
    for (CompiledLookup* old : st.retired) {
        CodeCache::global().release(old);
    }
    st.retired.clear();
}

// Lets go of all the subtable's code.
void release_all(SubtableJit& st) {
    release_retired(st);
    if (st.current) {
        CodeCache::global().release(st.current);
        st.current = nullptr;
    }
}

// The subtable's JIT state, created when missing.  A stale entry (a freed
// subtable's address reused by one with another mask) is dropped first.
SubtableJit& entry(State& s, const dpcls_subtable* subtable) {
    const MiniflowMap& map = view(subtable)->mask.map;
    auto [it, fresh] = s.subtables.try_emplace(subtable);
    SubtableJit& st = it->second;
    if (!fresh && (st.mask_map.bits[0] != map.bits[0] || st.mask_map.bits[1] != map.bits[1])) {
        release_all(st);
        st = SubtableJit{};
    }
    st.mask_map = map;
    return st;
}

// Makes `next` the subtable's lookup; the previous one waits for release().
void install(SubtableJit& st, CompiledLookup* next) {
    if (st.current) {
        st.retired.push_back(st.current);
    }
    st.current = next;
    st.slow_seen =
        std::atomic_ref<uint64_t>(next->profile.slow_keys).load(std::memory_order_relaxed);
}

bool valid_sample(const MiniflowMap& m) {
    return !(m.bits[1] >> kUnit1Bits) &&
           std::popcount(m.bits[0]) + std::popcount(m.bits[1]) <= static_cast<int>(kMaxKeyValues);
}

// Tier 2: most keys took the slow path since the last probe, so the
// sampled map becomes the fast path's.
void maybe_tier_up(State& s, SubtableJit& st, uint32_t hits) {
    LookupProfile& p = st.current->profile;
    const uint64_t slow = std::atomic_ref<uint64_t>(p.slow_keys).load(std::memory_order_relaxed);
    const uint64_t delta = slow - st.slow_seen;
    st.slow_seen = slow;
    if (st.tier_ups >= kMaxTierUps || delta < std::max<uint32_t>(s.config.hot_hits, 1) ||
        delta * 2 < hits) {
        return;
    }
    const MiniflowMap sample{
        {std::atomic_ref<uint64_t>(p.sample_map[0]).load(std::memory_order_relaxed),
         std::atomic_ref<uint64_t>(p.sample_map[1]).load(std::memory_order_relaxed)}};
    const auto& expected = st.current->shape.expected_map;
    if (!valid_sample(sample) ||
        (expected && expected->bits[0] == sample.bits[0] && expected->bits[1] == sample.bits[1])) {
        return;
    }
    if (CompiledLookup* next = acquire({st.mask_map, sample}, s.config)) {
        install(st, next);
        st.tier_ups++;
        s.tier_ups++;
    }
}

uint64_t parse_number(const char* name, uint64_t fallback, uint64_t max, std::string* errors) {
    const char* text = std::getenv(name);
    if (!text) {
        return fallback;
    }
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (!*text || *end || errno || v > max || text[0] == '-') {
        *errors += std::string(name) + "=\"" + text + "\" is not a number from 0 to " +
                   std::to_string(max) + "; using " + std::to_string(fallback) + "\n";
        return fallback;
    }
    return v;
}

// A switch: 1/0, on/off, true/false, yes/no (any case); anything else is
// reported and `fallback` stands.
bool parse_switch(const char* name, bool fallback, std::string* errors) {
    const char* text = std::getenv(name);
    if (!text) {
        return fallback;
    }
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
    *errors += std::string(name) + "=\"" + text +
               "\" is not a switch (1/0, on/off, true/false, yes/no); using " +
               (fallback ? "1" : "0") + "\n";
    return fallback;
}

}  // namespace

JitConfig JitConfig::from_env(std::string* errors) {
    JitConfig c;
    c.enabled = parse_switch("OVSCLS_JIT", true, errors);
    c.hot_hits =
        static_cast<uint32_t>(parse_number("OVSCLS_JIT_HOT_HITS", c.hot_hits, UINT32_MAX, errors));
    c.cache.code_budget_bytes = parse_number("OVSCLS_JIT_CODE_BUDGET", c.cache.code_budget_bytes,
                                             uint64_t{1} << 40, errors);
    c.cache.compiles_per_sec = static_cast<uint32_t>(
        parse_number("OVSCLS_JIT_COMPILES_PER_SEC", c.cache.compiles_per_sec, 1000000, errors));
    c.cache.perf_map = parse_switch("OVSCLS_JIT_PERF_MAP", false, errors);
    if (const char* dir = std::getenv("OVSCLS_JIT_DUMP_DIR")) {
        c.cache.dump_dir = dir;
    }
    if (!errors->empty() && errors->back() == '\n') {
        errors->pop_back();
    }
    return c;
}

JitConfig config() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    return s.config;
}

void configure(const JitConfig& config) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.config = config;
}

const char* decline_name(Decline why) {
    switch (why) {
        case Decline::kDisabled:
            return "disabled";
        case Decline::kCpu:
            return "cpu";
        case Decline::kAbi:
            return "abi";
        case Decline::kTooManyBlocks:
            return "too-many-blocks";
        case Decline::kCodeBudget:
            return "code-budget";
        case Decline::kCompileRate:
            return "compile-rate";
        case Decline::kNoMemory:
            return "no-memory";
        case Decline::kGenerateFailed:
            return "codegen";
        case Decline::kCount:
            break;
    }
    return "?";
}

ovsb_lookup_func probe(const ProbeContext& ctx) {
    if (!ctx.subtable) {
        return nullptr;  // probing by counts alone: nothing to specialize on
    }
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!usable(ctx.u0, ctx.u1, s.config)) {
        return nullptr;
    }
    SubtableJit& st = entry(s, ctx.subtable);
    if (!st.current) {
        if (ctx.hits < s.config.hot_hits) {
            return nullptr;  // tier 0: not hot yet
        }
        CompiledLookup* first = acquire({st.mask_map, std::nullopt}, s.config);
        if (!first) {
            return nullptr;
        }
        install(st, first);
        return first->fn;
    }
    maybe_tier_up(s, st, ctx.hits);
    return st.current->fn;
}

void release(const dpcls_subtable* subtable, ovsb_lookup_func in_use) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.subtables.find(subtable);
    if (it == s.subtables.end()) {
        return;
    }
    SubtableJit& st = it->second;
    if (in_use && st.current && st.current->fn == in_use) {
        release_retired(st);
        return;
    }
    release_all(st);
    s.subtables.erase(it);
}

LookupDescriptor descriptor() {
    return {"jit_avx2", 3, [](void*, const ProbeContext& ctx) { return probe(ctx); },
            [](void*, const dpcls_subtable* subtable, ovsb_lookup_func in_use) {
                release(subtable, in_use);
            },
            nullptr};
}

ovsb_lookup_func compile_now(const dpcls_subtable* subtable, std::optional<MiniflowMap> expected) {
    State& s = state();
    const Subtable& v = *view(subtable);
    std::lock_guard lock(s.mutex);
    if (!usable(v.u0_bits, v.u1_bits, s.config)) {
        return nullptr;
    }
    SubtableJit& st = entry(s, subtable);
    CompiledLookup* next = acquire({st.mask_map, expected}, s.config);
    if (!next) {
        if (!st.current) {
            s.subtables.erase(subtable);
        }
        return nullptr;
    }
    install(st, next);
    return next->fn;
}

const CompiledLookup* compiled_for(const dpcls_subtable* subtable) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.subtables.find(subtable);
    return it == s.subtables.end() ? nullptr : it->second.current;
}

JitStats stats() {
    State& s = state();
    JitStats out;
    out.cache = CodeCache::global().stats();
    for (int i = 0; i < static_cast<int>(Decline::kCount); i++) {
        out.declines[i] = s.declines[i].load(std::memory_order_relaxed);
    }
    std::lock_guard lock(s.mutex);
    out.tier_ups = s.tier_ups;
    out.subtables = s.subtables.size();
    return out;
}

std::string info() {
    const JitConfig c = config();
    const JitStats st = stats();
    std::string out = "jit_avx2: " + std::string(c.enabled ? "enabled" : "disabled") +
                      ", hot after " + std::to_string(c.hot_hits) + " hits, budget " +
                      std::to_string(c.cache.code_budget_bytes) + " bytes, " +
                      std::to_string(c.cache.compiles_per_sec) + " compiles/s\n";
    out += "  subtables " + std::to_string(st.subtables) + ", lookups " +
           std::to_string(st.cache.live) + " (" + std::to_string(st.cache.code_bytes) +
           " code bytes, " + std::to_string(st.cache.mapped_bytes) + " mapped), compiles " +
           std::to_string(st.cache.compiles) + ", shared " + std::to_string(st.cache.shared) +
           ", tier-ups " + std::to_string(st.tier_ups) + "\n  declines:";
    for (int i = 0; i < static_cast<int>(Decline::kCount); i++) {
        out += std::string(" ") + decline_name(static_cast<Decline>(i)) + "=" +
               std::to_string(st.declines[i]);
    }
    return out + "\n";
}

void set_log_sink(void (*sink)(const char* line)) { state().sink.store(sink ? sink : stderr_sink); }

void test_hide_cpu_feature(std::optional<CpuFeature> feature) {
    state().hidden_feature.store(feature ? static_cast<int>(*feature) : -1);
}

void test_reset_decline_log() {
    for (auto& logged : state().logged) {
        logged.store(false);
    }
}

}  // namespace ovscls::jit
