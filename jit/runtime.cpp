#include "jit/runtime.hpp"

#include <xbyak/xbyak_util.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <thread>
#include <utility>

#include "classifier/layout.hpp"
#include "jit/cmap_layout.hpp"

namespace ovscls::jit {
namespace {

void stderr_log(const char* line) { std::fprintf(stderr, "ovscls-jit: %s\n", line); }

// The instructions the generated code uses that the CPU lacks (or that a
// test hides); null when all are there.
const char* missing_cpu_feature(std::optional<CpuFeature> hidden) {
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
    for (const auto& n : needed) {
        if (n.feature == CpuFeature::kSse42 && !OVSCLS_HASH_CRC32) {
            continue;  // the mhash flavour emits no crc32
        }
        if (!cpu.has(n.type) || n.feature == hidden) {
            return n.name;
        }
    }
    return nullptr;
}

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The ranking open on this thread, if any: one at a time per thread (a PMD
// thread ranks its classifiers one after another), for one runtime.
struct OpenRanking {
    const Runtime* runtime = nullptr;
    int64_t start_ns = -1;
    uint32_t busiest = 0;  // the most hits a subtable probed in it had
};
thread_local OpenRanking t_ranking;

}  // namespace

void TimeRing::push(uint64_t v) {
    if (values_.size() < kSize) {
        values_.push_back(v);
    } else {
        values_[next_++ % kSize] = v;
    }
}

uint64_t TimeRing::median() const {
    if (values_.empty()) {
        return 0;
    }
    std::vector<uint64_t> v = values_;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

Runtime::Runtime(RuntimeOptions options) {
    log_ = options.log ? std::move(options.log) : stderr_log;
    hidden_ = options.hide_cpu_feature;
    ranking_hold_max_ns_ =
        std::chrono::duration_cast<std::chrono::nanoseconds>(options.ranking_hold_max).count();
    configure(options.config);
    // Every request carries its job: a tier's compile, run as is once no
    // PMD thread ranks.
    compiler_ = std::make_unique<CompilerThread>(kMaxQueued, [this](const CompileRequest& r) {
        wait_for_rankings();
        r.job();
    });
}

Runtime::~Runtime() {
    compiler_.reset();
    // Profile slots cool and code is freed in OVS-RCU callbacks, which may
    // postpone more (the last reference of a cooled slot): two barriers.
    ovsb_rcu_barrier();
    ovsb_rcu_barrier();
}

JitConfig Runtime::config() const {
    std::lock_guard lock(mutex_);
    return config_;
}

void Runtime::configure(const JitConfig& config) {
    std::string note;
    const JitConfig clamped = clamp_to_system(config, &note);
    {
        std::lock_guard lock(mutex_);
        config_ = clamped;
        enabled_.store(clamped.enabled, std::memory_order_relaxed);
        hot_hits_.store(clamped.hot_hits, std::memory_order_relaxed);
    }
    if (!note.empty()) {
        log_line("jit_avx2: " + note);
    }
}

std::string Runtime::configure_from(const char* const keys[], const char* const values[], size_t n,
                                    bool* changed) {
    const JitConfig before = config();
    JitConfig c = before.with_other_config_defaults(JitConfig{});
    std::string errors;
    for (size_t i = 0; i < n; i++) {
        std::string error;
        if (!c.apply(keys[i], values[i], &error)) {
            errors += (errors.empty() ? "" : "; ") + error;
        }
    }
    if (!errors.empty()) {
        c.enabled = false;  // fail closed, whatever the order of the keys
    }
    configure(c);
    if (changed) {
        *changed = !(c == before);
    }
    return errors;
}

void Runtime::set_log(std::function<void(const char* line)> log) {
    std::lock_guard lock(log_mutex_);
    log_ = log ? std::move(log) : stderr_log;
}

void Runtime::set_events(std::function<void(JitEvent event, uint32_t n)> events) {
    std::lock_guard lock(log_mutex_);
    events_ = std::move(events);
}

void Runtime::log_line(const std::string& line) const {
    std::lock_guard lock(log_mutex_);
    log_(line.c_str());
}

void Runtime::event(JitEvent what, uint32_t n) const {
    std::lock_guard lock(log_mutex_);
    if (events_) {
        events_(what, n);
    }
}

void Runtime::decline_for(const CodeCache::Result& result) {
    Decline why = Decline::kGenerateFailed;
    switch (result.outcome) {
        case CodeCache::Outcome::kCompiled:
        case CodeCache::Outcome::kShared:
            return;
        case CodeCache::Outcome::kOverBudget:
            why = Decline::kCodeBudget;
            break;
        case CodeCache::Outcome::kOverRate:
            why = Decline::kCompileRate;
            break;
        case CodeCache::Outcome::kNoMemory:
            why = Decline::kNoMemory;
            break;
        case CodeCache::Outcome::kGenerateFailed:
            break;
    }
    decline(why, [&] { return result.detail; });
}

void Runtime::log_file_errors() {
    if (cache_.stats().file_errors == 0 || file_error_logged_.exchange(true)) {
        return;
    }
    log_line("jit_avx2: " + cache_.first_file_error() +
             " (perf map or code dump; the code runs all the same).  Logged once.");
}

bool Runtime::usable(uint32_t u0, uint32_t u1) {
    if (!enabled_.load(std::memory_order_relaxed)) {
        decline(Decline::kDisabled,
                [] { return std::string("disabled by configuration (dpcls-jit, OVSCLS_JIT)"); });
        return false;
    }
    if (const char* feature = missing_cpu_feature(hidden_)) {
        decline(Decline::kCpu, [&] {
            return std::string("the CPU lacks ") + feature +
                   " (needed: AVX2, BMI1, BMI2, POPCNT and, with OVS's CRC32 hash, SSE4.2)";
        });
        return false;
    }
    if (std::string why; !cmap_layout_matches(&why)) {
        decline(Decline::kAbi, [&] { return why; });
        return false;
    }
    if (u0 + u1 > kMaxBlocks) {
        decline(Decline::kTooManyBlocks, [&] {
            return "fingerprint (" + std::to_string(u0) + "," + std::to_string(u1) +
                   ") has more than " + std::to_string(kMaxBlocks) + " blocks";
        });
        return false;
    }
    return true;
}

std::string Runtime::why_unavailable() const {
    if (const char* feature = missing_cpu_feature(hidden_)) {
        return std::string("the CPU lacks ") + feature;
    }
    std::string why;
    return cmap_layout_matches(&why) ? std::string() : why;
}

bool Runtime::submit(const CompileRequest& request) { return compiler_->submit(request); }

void Runtime::ranking_begin() {
    if (t_ranking.runtime) {
        return;  // one is open on this thread already: counted once
    }
    t_ranking = {this, steady_ns(), 0};
    rankings_active_.fetch_add(1, std::memory_order_relaxed);
}

uint32_t Runtime::ranking_busiest(uint32_t hits) {
    if (t_ranking.runtime != this) {
        return 0;
    }
    t_ranking.busiest = std::max(t_ranking.busiest, hits);
    return t_ranking.busiest;
}

void Runtime::ranking_end() {
    if (t_ranking.runtime != this) {
        return;
    }
    rankings_active_.fetch_sub(1, std::memory_order_relaxed);
    const auto ns = static_cast<uint64_t>(steady_ns() - t_ranking.start_ns);
    t_ranking = {};
    std::lock_guard lock(mutex_);
    ranking_ns_.push(ns);
    rankings_++;
    ranking_ns_max_ = std::max(ranking_ns_max_, ns);
    ranking_ns_total_ += ns;
    ranking_ns_last_ = ns;
}

// On the compiler thread, before each compile: holds it back while a PMD
// thread ranks.  A ranking call is the one moment a PMD stops forwarding
// for the JIT's sake, and it is memory-bound (OVS's pvector walk); a
// compile beside it, on a core that shares caches or an SMT sibling, made
// it up to 1.8x slower in jit_flood.  The wait is bounded
// (RuntimeOptions::ranking_hold_max), so that a ranking that never ends (a
// bug) delays compiles but never stops them.
void Runtime::wait_for_rankings() const {
    constexpr auto kPoll = std::chrono::microseconds(50);
    const int64_t start = steady_ns();
    while (rankings_active_.load(std::memory_order_relaxed) > 0 &&
           steady_ns() - start < ranking_hold_max_ns_) {
        std::this_thread::sleep_for(kPoll);
    }
}

RuntimeStats Runtime::stats() const {
    RuntimeStats out;
    out.cache = cache_.stats();
    for (int i = 0; i < static_cast<int>(Decline::kCount); i++) {
        out.declines[i] = declines_[i].load(std::memory_order_relaxed);
    }
    out.pending = compiler_ ? compiler_->queued() : 0;
    std::lock_guard lock(mutex_);
    out.rankings = rankings_;
    out.ranking_ns_median = ranking_ns_.median();
    out.ranking_ns_max = ranking_ns_max_;
    out.ranking_ns_total = ranking_ns_total_;
    out.ranking_ns_last = ranking_ns_last_;
    return out;
}

const char* decline_name(Decline why) {
    // By Decline's order: jit-show's and the log's names.
    static constexpr const char* kNames[] = {"disabled",        "cpu",         "abi",
                                             "too-many-blocks", "code-budget", "compile-rate",
                                             "queue-full",      "no-memory",   "codegen"};
    static_assert(std::size(kNames) == static_cast<size_t>(Decline::kCount));
    const auto i = static_cast<size_t>(why);
    return i < std::size(kNames) ? kNames[i] : "?";
}

}  // namespace ovscls::jit
