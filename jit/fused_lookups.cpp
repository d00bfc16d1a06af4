#include "jit/fused_lookups.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <mutex>
#include <utility>
#include <vector>

#include "classifier/layout.hpp"
#include "jit/fused_generator.hpp"

namespace ovscls::jit {
namespace {

// Probes (of any classifier) an unused fused lookup waits for a taker.
constexpr uint64_t kIdleProbes = 64;
// Fusing one subtable would be jit_avx2's lookup with extra steps.
constexpr size_t kMinFusedSubtables = 2;

// steady_clock now, in ns: a compile's duration for the code cache.
int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

struct FusedLookups::Entry {
    FusedSpec spec;
    uint64_t id = 0;
    std::unique_ptr<FusedGenerator> code;  // set once ready
    bool pending = true;                   // queued or compiling
    bool failed = false;
    uint32_t refs = 0;  // classifiers publishing it
    uint64_t idle_since = 0;
};

struct FusedLookups::State {
    mutable std::mutex mutex;
    std::vector<std::shared_ptr<Entry>> entries;  // a few per port: searched linearly
    uint64_t epoch = 0;                           // probes so far
    uint64_t next_id = 1;
    bool serialize = false;
    FusedStats stats;
    bool logged_failure = false;
};

// (fused_lookups.hpp)  No entries; nothing compiled until a probe.
FusedLookups::FusedLookups(Runtime& runtime, FastPathMap fast_path_map)
    : runtime_(runtime),
      fast_path_map_(std::move(fast_path_map)),
      state_(std::make_unique<State>()) {}

// Gives the code budget back for every entry with code; the code itself
// goes with the entries (no reader may run it any more: every classifier
// has released its lookup).  Takes the mutex.
FusedLookups::~FusedLookups() {
    std::lock_guard lock(state_->mutex);
    for (const auto& e : state_->entries) {
        if (e->code) {
            runtime_.code_cache().end_code(e->code->getSize());
        }
    }
}

// How many top subtables a classifier should offer: the configured
// dpcls-jit-fused-subtables, at most kMaxFusedSubtables, 0 when the JIT is
// off.  Reads the runtime's configuration (its lock).
size_t FusedLookups::max_subtables() const {
    const JitConfig config = runtime_.config();
    return config.enabled ? std::min<size_t>(config.fused_subtables, kMaxFusedSubtables) : 0;
}

// A classifier's offer at a ranking: its first `n` subtables in rank
// order (writer side, under the classifier's writer lock).
// Out: ready code for an equal spec, one reference more (the classifier
// releases it); else {} and, unless compiling or failed already, the spec
// queued for the compiler thread (ready_count() moves when it is done).
// Reads the subtables' masks and profiled maps; never compiles.  Takes the
// mutex, not across the submit; sweeps idle entries (one probe = one epoch).
FusedLookup FusedLookups::probe(const dpcls_subtable* const subtables[], size_t n) {
    n = std::min(n, max_subtables());
    bool serialize;
    {
        std::lock_guard lock(state_->mutex);
        state_->stats.probes++;
        serialize = state_->serialize;
    }
    if (n < kMinFusedSubtables || !runtime_.usable(0, 0)) {
        return {};
    }
    const std::optional<MiniflowMap> key_map = fast_path_map_(subtables[0]);
    if (!key_map) {
        std::lock_guard lock(state_->mutex);
        state_->stats.no_key_map++;
        return {};
    }
    auto spec = std::make_shared<FusedSpec>();
    spec->key_map = *key_map;
    spec->serialize = serialize;
    for (size_t i = 0; i < n; i++) {
        const Subtable& s = *view(subtables[i]);
        const uint32_t blocks = s.u0_bits + s.u1_bits;
        // The leading subtables whose own packets carry the map: where
        // another map's packets start, fusing would only defer them.  The
        // loop serves the rest, in order.
        const std::optional<MiniflowMap> own = i ? fast_path_map_(subtables[i]) : key_map;
        if (blocks > kMaxBlocks || !own || own->bits[0] != key_map->bits[0] ||
            own->bits[1] != key_map->bits[1]) {
            break;
        }
        spec->subtables.push_back({subtables[i], s.mask.map,
                                   std::vector<uint64_t>(s.mask.values, s.mask.values + blocks)});
    }
    if (spec->subtables.size() < kMinFusedSubtables) {
        // The next subtable's packets carry another map (or it has none
        // yet, or is too wide): nothing worth fusing, and jit-show says so.
        std::lock_guard lock(state_->mutex);
        state_->stats.short_run++;
        return {};
    }

    std::unique_lock lock(state_->mutex);
    State& st = *state_;
    st.epoch++;
    sweep();
    for (const auto& e : st.entries) {
        if (e->spec == *spec) {
            if (!e->code) {
                return {};  // compiling, or failed (retried once swept)
            }
            e->refs++;
            st.stats.handed++;
            return {e->code->function(), static_cast<uint32_t>(e->spec.subtables.size()), e.get()};
        }
    }
    auto entry = std::make_shared<Entry>();
    entry->spec = std::move(*spec);
    entry->id = st.next_id++;
    st.entries.push_back(entry);
    st.stats.requests++;
    lock.unlock();
    if (!runtime_.submit({nullptr, 0, {}, [this, entry] { compile(entry); }})) {
        lock.lock();
        std::erase(st.entries, entry);  // queue full: asked again next ranking
        st.stats.requests--;
    }
    return {};
}

// On the compiler thread, no lock held while generating: admits the code
// to the cache's budget and rate, generates it, announces it to perf, then
// under the mutex stores it in `entry` and moves ready_count(), or marks
// the entry failed and logs the first failure (once); then reports the
// event (kFusedCompile or kFusedDecline) with no lock of its own held.
void FusedLookups::compile(const std::shared_ptr<Entry>& entry) {
    CodeCache& cache = runtime_.code_cache();
    const CacheOptions options = runtime_.config().cache;
    const size_t bytes = FusedGenerator::reserved_bytes(entry->spec);
    std::unique_ptr<FusedGenerator> code;
    std::string why;
    const CodeCache::Result admitted = cache.begin_compile(bytes, options);
    if (admitted.outcome == CodeCache::Outcome::kCompiled) {
        const int64_t start = now_ns();
        GenerateStatus status;
        code = FusedGenerator::create(entry->spec, &cache.memory(), &status);
        const auto ns = static_cast<uint64_t>(now_ns() - start);
        cache.end_compile(bytes, code ? code->getSize() : 0, ns);
        why = status.detail;
    } else {
        why = admitted.detail;
    }
    if (code) {
        cache.announce(code->getCode(), code->getSize(),
                       "dpcls_jit_fused_" + std::to_string(entry->spec.subtables.size()) + "_" +
                           std::to_string(entry->id),
                       options);
    }
    std::unique_lock lock(state_->mutex);
    State& st = *state_;
    entry->pending = false;
    entry->idle_since = st.epoch;
    if (code) {
        entry->code = std::move(code);
        st.stats.compiles++;
        ready_.fetch_add(1, std::memory_order_release);
        lock.unlock();
        runtime_.event(JitEvent::kFusedCompile);
        return;
    }
    entry->failed = true;
    st.stats.failed++;
    const bool log = !st.logged_failure;
    st.logged_failure = true;
    lock.unlock();
    runtime_.event(JitEvent::kFusedDecline);
    if (log) {
        runtime_.log_line("jit_fused: no fused lookup over " +
                          std::to_string(entry->spec.subtables.size()) + " subtables: " + why +
                          "; the subtables run their own lookups.  Logged once.");
    }
}

// A classifier stops publishing `lookup`: one reference less; unused code
// starts its idle wait (sweep()).  Takes the mutex.
void FusedLookups::release(const FusedLookup& lookup) {
    std::lock_guard lock(state_->mutex);
    auto* entry = static_cast<Entry*>(lookup.handle);
    entry->refs--;
    if (entry->refs == 0) {
        entry->idle_since = state_->epoch;
    }
}

// Drops the entries nobody holds, none compiling, idle for more than
// kIdleProbes probes (failed ones too, so they are retried): their budget
// back now, their code after a grace period.  Under the mutex.
void FusedLookups::sweep() {
    State& st = *state_;
    std::erase_if(st.entries, [&](const std::shared_ptr<Entry>& e) {
        if (e->refs || e->pending || st.epoch - e->idle_since <= kIdleProbes) {
            return false;
        }
        if (e->code) {
            runtime_.code_cache().end_code(e->code->getSize());
        }
        // A reader that found it before its classifier unpublished it may
        // still run it: the pages go after a grace period.
        ovsb_rcu_postpone([](void* p) { delete static_cast<std::shared_ptr<Entry>*>(p); },
                          new std::shared_ptr<Entry>(e));
        return true;
    });
}

// (fused_lookups.hpp)  Applies to specs probed from now on.  Takes the mutex.
void FusedLookups::serialize_for_measurement(bool on) {
    std::lock_guard lock(state_->mutex);
    state_->serialize = on;
}

// The counters, with the live, in-use and code-bytes figures summed now.
// Takes the mutex.
FusedStats FusedLookups::stats() const {
    std::lock_guard lock(state_->mutex);
    FusedStats out = state_->stats;
    for (const auto& e : state_->entries) {
        if (e->code) {
            out.live++;
            out.code_bytes += e->code->getSize();
        }
        out.in_use += e->refs;
    }
    return out;
}

// (fused_lookups.hpp)  Lines for entries with code only.  Takes the mutex.
std::string FusedLookups::info() const {
    std::lock_guard lock(state_->mutex);
    std::string out;
    for (const auto& e : state_->entries) {
        if (!e->code) {
            continue;
        }
        // Appended piecewise: GCC 12's -O3 warns falsely (-Wrestrict) on
        // "literal" + std::string temporaries.
        std::string fps;
        for (const FusedSubtable& s : e->spec.subtables) {
            fps += fps.empty() ? "(" : " (";
            fps += std::to_string(std::popcount(s.mask_map.bits[0]));
            fps += ",";
            fps += std::to_string(std::popcount(s.mask_map.bits[1]));
            fps += ")";
        }
        out += "  jit_fused #" + std::to_string(e->id) + ": " +
               std::to_string(e->spec.subtables.size()) + " subtables " + fps + ", " +
               std::to_string(e->code->getSize()) + " code bytes, used by " +
               std::to_string(e->refs) + " classifier(s)\n";
    }
    return out;
}

}  // namespace ovscls::jit
