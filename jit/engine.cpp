#include "jit/engine.hpp"

#include <xbyak/xbyak_util.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "classifier/lookup_table.h"
#include "jit/cmap_layout.hpp"

namespace ovscls::jit {

// JIT state of one subtable.  Guarded by State::mutex.
struct Engine::SubtableJit {
    MiniflowMap mask_map;
    uint64_t generation = 0;               // this life of the subtable's address
    CompiledLookup* current = nullptr;     // what probe() last returned
    std::vector<CompiledLookup*> retired;  // ran before; freed once the swap is published
    CompiledLookup* ready = nullptr;       // finished by the compiler thread, not yet returned
    bool pending = false;                  // a request is queued or compiling
    int profile_slot = -1;                 // its slot in current->profiles, or none
    uint64_t slow_seen = 0;                // the slot's slow_keys at the last probe
    uint32_t tier_ups = 0;
    // After a refused request (queue full), the rankings to let pass before
    // asking again, and the current back-off (doubling up to kMaxBackoff):
    // in a flood of new maps a ranking then costs a PMD a map lookup per
    // subtable, not a queue attempt per subtable.
    uint32_t skip = 0;
    uint32_t backoff = 0;
};

constexpr uint32_t kMaxBackoff = 32;

// Compile times kept for the median jit-show reports.
constexpr size_t kCompileTimes = 1024;

// Which subtables may have an entry, readable without the engine's mutex: a
// counter per hash of the subtable's address, changed under the mutex when
// an entry comes or goes.  0 means surely none; a counter that reached 255
// stays there (maybe, for good).  A ranking in a mask flood re-probes
// thousands of cold subtables; this lets their probes and releases skip the
// mutex (perf/p2p's flood: 2500 cold masks, two mutex holds each per
// ranking otherwise).
class KnownSubtables {
  public:
    bool maybe(const dpcls_subtable* subtable) const {
        return counts_[slot(subtable)].load(std::memory_order_relaxed) != 0;
    }
    void add(const dpcls_subtable* subtable) {
        std::atomic<uint8_t>& n = counts_[slot(subtable)];
        const uint8_t v = n.load(std::memory_order_relaxed);
        n.store(v == kSticky ? v : v + 1, std::memory_order_relaxed);
    }
    void remove(const dpcls_subtable* subtable) {
        std::atomic<uint8_t>& n = counts_[slot(subtable)];
        const uint8_t v = n.load(std::memory_order_relaxed);
        n.store(v == kSticky || v == 0 ? v : v - 1, std::memory_order_relaxed);
    }
    void clear() {
        for (auto& n : counts_) {
            n.store(0, std::memory_order_relaxed);
        }
    }

  private:
    static constexpr size_t kSlots = 4096;
    static constexpr uint8_t kSticky = 255;
    static size_t slot(const dpcls_subtable* subtable) {
        const auto a = reinterpret_cast<uintptr_t>(subtable);
        return (a >> 6) * 0x9E3779B97F4A7C15ull >> 52;  // top 12 bits: 4096 slots
    }
    std::array<std::atomic<uint8_t>, kSlots> counts_{};
};

struct Engine::State {
    mutable std::mutex mutex;  // guards all but the atomics; never held across a compile
    JitConfig config;
    std::atomic<uint32_t> hot_hits{0};  // config.hot_hits, for the lock-free cold check
    std::unordered_map<const dpcls_subtable*, SubtableJit> subtables;
    KnownSubtables known;                  // over `subtables`' keys
    std::vector<CompiledLookup*> orphans;  // finished for a subtable that is gone
    // Shapes queued or compiling: another subtable asking for one waits for
    // it (and shares it) instead of queueing it again.
    std::unordered_set<LookupShape, LookupShapeHash> pending_shapes;
    uint64_t next_generation = 1;
    uint64_t requests = 0, installs = 0, tier_ups = 0, cancelled = 0, no_profile_slot = 0;
    uint64_t tier_ups_limited = 0;
    std::vector<uint64_t> compile_ns;  // ring of the last kCompileTimes
    size_t compile_ns_next = 0;
    std::atomic<uint64_t> declines[static_cast<int>(Decline::kCount)] = {};
    std::atomic<bool> logged[static_cast<int>(Decline::kCount)] = {};
    std::vector<uint64_t> ranking_ns;  // ring of the last kCompileTimes
    size_t ranking_ns_next = 0;
    int64_t ranking_hold_max_ns = 0;  // EngineOptions::ranking_hold_max
    uint64_t rankings = 0, ranking_ns_max = 0, ranking_ns_total = 0, ranking_ns_last = 0;
    std::mutex log_mutex;
    std::function<void(const char*)> log;
    std::function<void(JitEvent, uint32_t)> events;  // guarded by log_mutex
    std::optional<CpuFeature> hidden;
    std::atomic<bool> file_error_logged{false};
};

namespace {

void stderr_log(const char* line) { std::fprintf(stderr, "ovscls-jit: %s\n", line); }

// The instructions the generated code uses; null when all are there.
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

// Why generated code cannot run on this host ("the CPU lacks AVX2", or how
// OVS's cmap layout differs), or "" when it can: jit-show's and
// dpcls-plugin/show's state lines.  Pure but for the CPU and layout reads.
std::string why_unavailable(std::optional<CpuFeature> hidden) {
    if (const char* feature = missing_cpu_feature(hidden)) {
        return std::string("the CPU lacks ") + feature;
    }
    std::string why;
    return cmap_layout_matches(&why) ? std::string() : why;
}

bool valid_sample(const MiniflowMap& m) {
    return !(m.bits[1] >> kUnit1Bits) &&
           std::popcount(m.bits[0]) + std::popcount(m.bits[1]) <= static_cast<int>(kMaxKeyValues);
}

uint64_t relaxed(const uint64_t& word) {
    return std::atomic_ref<const uint64_t>(word).load(std::memory_order_relaxed);
}

}  // namespace

Engine::Engine(EngineOptions options) : state_(std::make_unique<State>()) {
    state_->log = options.log ? std::move(options.log) : stderr_log;
    std::string note;
    state_->config = clamp_to_system(options.config, &note);
    state_->hot_hits.store(state_->config.hot_hits, std::memory_order_relaxed);
    if (!note.empty()) {
        log_line("jit_avx2: " + note);
    }
    state_->hidden = options.hide_cpu_feature;
    state_->ranking_hold_max_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(options.ranking_hold_max).count();
    fused_ = std::make_unique<FusedLookups>(*this);
    compiler_ = std::make_unique<CompilerThread>(kMaxQueued,
                                                 [this](const CompileRequest& r) { compile(r); });
}

Engine::~Engine() {
    compiler_.reset();  // no compile runs after this
    fused_.reset();     // no classifier holds its lookups any more
    {
        std::lock_guard lock(state_->mutex);
        for (auto& [subtable, st] : state_->subtables) {
            release_all(st);
        }
        state_->subtables.clear();
        state_->known.clear();
        for (CompiledLookup* orphan : state_->orphans) {
            cache_.release(orphan);
        }
        state_->orphans.clear();
    }
    // Profile slots cool and code is freed in OVS-RCU callbacks, which may
    // postpone more (the last reference of a cooled slot): two barriers.
    ovsb_rcu_barrier();
    ovsb_rcu_barrier();
}

void Engine::log_line(const std::string& line) const {
    std::lock_guard lock(state_->log_mutex);
    state_->log(line.c_str());
}

void Engine::set_log(std::function<void(const char* line)> log) {
    std::lock_guard lock(state_->log_mutex);
    state_->log = log ? std::move(log) : stderr_log;
}

void Engine::set_events(std::function<void(JitEvent event, uint32_t n)> events) {
    std::lock_guard lock(state_->log_mutex);
    state_->events = std::move(events);
}

void Engine::event(JitEvent what, uint32_t n) const {
    std::lock_guard lock(state_->log_mutex);
    if (state_->events) {
        state_->events(what, n);
    }
}

namespace {
// The ranking open on this thread, if any: one at a time per thread (a PMD
// thread ranks its classifiers one after another), for one engine.
struct OpenRanking {
    const Engine* engine = nullptr;
    int64_t start_ns = -1;
};
thread_local OpenRanking t_ranking;

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Appends `v` to a ring of at most kCompileTimes values.
void ring_push(std::vector<uint64_t>& ring, size_t& next, uint64_t v);

uint64_t median(std::vector<uint64_t> values) {
    if (values.empty()) {
        return 0;
    }
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    return values[values.size() / 2];
}
}  // namespace

void Engine::ranking_begin() {
    if (t_ranking.engine) {
        return;  // one is open on this thread already: counted once
    }
    t_ranking = {this, steady_ns()};
    rankings_active_.fetch_add(1, std::memory_order_relaxed);
}

void Engine::ranking_end() {
    if (t_ranking.engine != this) {
        return;
    }
    rankings_active_.fetch_sub(1, std::memory_order_relaxed);
    const auto ns = static_cast<uint64_t>(steady_ns() - t_ranking.start_ns);
    t_ranking = {};
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    ring_push(s.ranking_ns, s.ranking_ns_next, ns);
    s.rankings++;
    s.ranking_ns_max = std::max(s.ranking_ns_max, ns);
    s.ranking_ns_total += ns;
    s.ranking_ns_last = ns;
}

// Counts a decline; the first of each reason is logged, with `detail()`
// (built only then: declines may come once per subtable per ranking).
template <typename Detail>
void Engine::decline(Decline why, Detail&& detail) {
    State& s = *state_;
    s.declines[static_cast<int>(why)].fetch_add(1, std::memory_order_relaxed);
    event(JitEvent::kDecline);
    if (!s.logged[static_cast<int>(why)].exchange(true)) {
        log_line("jit_avx2 declines (" + std::string(decline_name(why)) + "): " + detail() +
                 "; the next lookup implementation serves.  Logged once.");
    }
}

// Declines that do not depend on the subtable's JIT state.  True when
// usable.  Called with the state's mutex held.
bool Engine::usable(uint32_t u0, uint32_t u1) {
    if (!state_->config.enabled) {
        decline(Decline::kDisabled,
                [] { return std::string("disabled by configuration (dpcls-jit, OVSCLS_JIT)"); });
        return false;
    }
    if (const char* feature = missing_cpu_feature(state_->hidden)) {
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

// The subtable's JIT state, created when missing.  A stale entry (a freed
// subtable's address reused by one with another mask) is dropped first.
Engine::SubtableJit* Engine::entry(const dpcls_subtable* subtable, bool create) {
    State& s = *state_;
    auto it = s.subtables.find(subtable);
    if (it == s.subtables.end() && !create) {
        return nullptr;
    }
    bool fresh = false;
    if (it == s.subtables.end()) {
        it = s.subtables.try_emplace(subtable).first;
        s.known.add(subtable);
        fresh = true;
    }
    const MiniflowMap& map = view(subtable)->mask.map;
    SubtableJit& st = it->second;
    if (!fresh && (st.mask_map.bits[0] != map.bits[0] || st.mask_map.bits[1] != map.bits[1])) {
        release_all(st);
        compiler_->cancel(subtable);
        st = SubtableJit{};
        fresh = true;
    }
    if (fresh) {
        st.mask_map = map;
        st.generation = s.next_generation++;
    }
    return &st;
}

// Asks for `shape` for the subtable: shared at once when the cache has it
// (sharing compiles nothing), else queued for the compiler thread unless it
// is queued already.  Sets st.ready or st.pending.
// A request refused for a full queue: declined, and the subtable backs off
// for 1, 2, 4 ... kMaxBackoff rankings.
void Engine::queue_full(SubtableJit& st) {
    decline(Decline::kQueueFull, [] {
        return std::to_string(kMaxQueued) + " compile requests are waiting for the compiler thread";
    });
    st.backoff = std::min(std::max(st.backoff * 2, 1u), kMaxBackoff);
    st.skip = st.backoff;
}

void Engine::request(const dpcls_subtable* subtable, SubtableJit& st, const LookupShape& shape) {
    State& s = *state_;
    if (st.pending || st.ready) {
        return;
    }
    if (st.skip) {  // backing off after a full queue
        st.skip--;
        return;
    }
    if (compiler_->full()) {
        // In a flood of new maps: back off before even looking in the cache,
        // which costs the ranking thread a mutex and a hash per subtable (a
        // shape that is there now is shared after the back-off).
        queue_full(st);
        return;
    }
    if (CompiledLookup* existing = cache_.share(shape)) {
        st.ready = existing;
        return;
    }
    if (shape.expected_map && cache_.fast_path_variants(shape.mask_map) >= kMaxFastPathsPerMap) {
        s.tier_ups_limited++;  // stays on the slow path its code has
        return;
    }
    if (s.pending_shapes.contains(shape)) {
        return;  // another subtable asked: shared at a later ranking
    }
    if (!compiler_->submit({subtable, st.generation, shape})) {
        queue_full(st);
        return;
    }
    st.backoff = 0;
    s.pending_shapes.insert(shape);
    st.pending = true;
    s.requests++;
}

// Counts and logs a failed acquire as its decline.
void Engine::decline_for(const CodeCache::Result& result) {
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

// On the compiler thread, with no lock held while compiling.
// Holds the compiler thread back while a PMD thread ranks.  A ranking
// call is the one moment a PMD stops forwarding for the JIT's sake, and it
// is memory-bound (OVS's pvector walk); a compile beside it, on a core that
// shares caches or an SMT sibling, made it up to 1.8x slower in jit_flood.
// The wait is bounded (EngineOptions::ranking_hold_max), so that a ranking
// that never ends (a bug) delays compiles but never stops them.
void Engine::wait_for_rankings() const {
    constexpr auto kPoll = std::chrono::microseconds(50);
    const int64_t start = steady_ns();
    while (rankings_active_.load(std::memory_order_relaxed) > 0 &&
           steady_ns() - start < state_->ranking_hold_max_ns) {
        std::this_thread::sleep_for(kPoll);
    }
}

// The first perf map line or dump that could not be written, logged once
// (OVSCLS_JIT_PERF_MAP, OVSCLS_JIT_DUMP_DIR); jit-show counts them all.
void Engine::log_file_errors() {
    if (cache_.stats().file_errors == 0 || state_->file_error_logged.exchange(true)) {
        return;
    }
    log_line("jit_avx2: " + cache_.first_file_error() +
             " (perf map or code dump; the code runs all the same).  Logged once.");
}

void Engine::compile(const CompileRequest& r) {
    wait_for_rankings();
    if (r.job) {
        r.job();
        return;
    }
    CacheOptions options;
    {
        std::lock_guard lock(state_->mutex);
        options = state_->config.cache;
    }
    CompiledLookup* lookup = cache_.share(r.shape);
    bool limited = false;
    if (!lookup) {
        // Two subtables may have asked for new fast paths of one map within
        // a ranking: the limit holds here, where compiles are serial.
        limited = r.shape.expected_map &&
                  cache_.fast_path_variants(r.shape.mask_map) >= kMaxFastPathsPerMap;
        if (!limited) {
            const CodeCache::Result result = cache_.acquire(r.shape, options);
            decline_for(result);
            lookup = result.lookup;
            if (result.outcome == CodeCache::Outcome::kCompiled) {
                record_compile_time(lookup->compile_ns);
                event(JitEvent::kCompile);
                log_file_errors();
            }
        }
    }
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    s.pending_shapes.erase(r.shape);
    s.tier_ups_limited += limited;
    auto it = s.subtables.find(r.subtable);
    if (it == s.subtables.end() || it->second.generation != r.generation) {
        if (lookup) {
            s.orphans.push_back(lookup);  // released by the next probe or release
            s.cancelled++;
        }
        return;
    }
    SubtableJit& st = it->second;
    st.pending = false;
    if (lookup) {
        if (st.ready) {
            s.orphans.push_back(st.ready);
        }
        st.ready = lookup;
    }
}

namespace {
void ring_push(std::vector<uint64_t>& ring, size_t& next, uint64_t v) {
    if (ring.size() < kCompileTimes) {
        ring.push_back(v);
    } else {
        ring[next++ % kCompileTimes] = v;
    }
}
}  // namespace

void Engine::record_compile_time(uint64_t ns) {
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    ring_push(s.compile_ns, s.compile_ns_next, ns);
}

// Makes `next` the subtable's lookup; the previous one waits for release().
void Engine::install(const dpcls_subtable* subtable, SubtableJit& st, CompiledLookup* next) {
    if (st.current) {
        if (st.profile_slot >= 0) {
            cache_.retire_profile_slot(st.current, static_cast<uint32_t>(st.profile_slot));
            st.profile_slot = -1;
        }
        st.retired.push_back(st.current);
    }
    st.current = next;
    state_->installs++;
    claim_profile_slot(subtable, st);
}

// A free way of the subtable's profile set in its current code, if any.
void Engine::claim_profile_slot(const dpcls_subtable* subtable, SubtableJit& st) {
    const uint32_t set = profile_set(subtable);
    for (uint32_t w = 0; w < kProfileWays; w++) {
        ProfileSlot& slot = st.current->profiles->slots[set * kProfileWays + w];
        std::atomic_ref<uint64_t> owner(slot.owner);
        if (owner.load(std::memory_order_acquire) == 0) {
            st.slow_seen = relaxed(slot.slow_keys);
            owner.store(reinterpret_cast<uintptr_t>(subtable), std::memory_order_release);
            st.profile_slot = static_cast<int>(set * kProfileWays + w);
            return;
        }
    }
    state_->no_profile_slot++;
}

// Tier 2: most of this subtable's hits since the last probe came by the
// slow path (its profile counts only keys it matched), so their sampled map
// becomes the fast path's.
void Engine::maybe_tier_up(const dpcls_subtable* subtable, SubtableJit& st, uint32_t hits) {
    if (st.tier_ups >= kMaxTierUps || st.pending) {
        return;
    }
    if (st.profile_slot < 0) {
        claim_profile_slot(subtable, st);  // a slot may have cooled meanwhile
        return;
    }
    const ProfileSlot& p = st.current->profiles->slots[st.profile_slot];
    const uint64_t slow = relaxed(p.slow_keys);
    const uint64_t delta = slow - st.slow_seen;
    st.slow_seen = slow;
    if (delta < std::max<uint32_t>(state_->config.hot_hits, 1) || delta * 2 < hits) {
        return;
    }
    const MiniflowMap sample{{relaxed(p.sample_map[0]), relaxed(p.sample_map[1])}};
    const auto& expected = st.current->shape.expected_map;
    if (!valid_sample(sample) ||
        (expected && expected->bits[0] == sample.bits[0] && expected->bits[1] == sample.bits[1])) {
        return;
    }
    request(subtable, st, {st.mask_map, sample});
}

// Lets go of what the compiler thread finished for subtables that are gone
// (it never releases: that may postpone an RCU callback).
void Engine::release_orphans() {
    for (CompiledLookup* orphan : state_->orphans) {
        cache_.release(orphan);
    }
    state_->orphans.clear();
}

// Lets go of the lookups the subtable ran before its current one.
void Engine::release_retired(SubtableJit& st) {
    for (CompiledLookup* old : st.retired) {
        cache_.release(old);
    }
    st.retired.clear();
}

// Lets go of all the subtable's code.
void Engine::release_all(SubtableJit& st) {
    release_retired(st);
    if (st.current) {
        if (st.profile_slot >= 0) {
            cache_.retire_profile_slot(st.current, static_cast<uint32_t>(st.profile_slot));
            st.profile_slot = -1;
        }
        cache_.release(st.current);
        st.current = nullptr;
    }
    if (st.ready) {
        cache_.release(st.ready);
        st.ready = nullptr;
    }
}

ovsb_lookup_func Engine::probe(const ProbeContext& ctx) {
    if (!ctx.subtable) {
        return nullptr;  // probing by counts alone: nothing to specialize on
    }
    State& s = *state_;
    // A cold subtable the engine knows nothing of stays at tier 0 without
    // an entry and, mostly, without the mutex: in a mask flood most
    // subtables are cold, and each ranking re-probes every one that had a
    // hit (a p2p flood of 2500 cold masks spent ~0.5 us per probe when each
    // had an entry).  A stale `known` read (another thread just made the
    // entry) only defers the subtable to the next ranking.
    const bool cold = ctx.hits < s.hot_hits.load(std::memory_order_relaxed);
    if (cold && !s.known.maybe(ctx.subtable)) {
        return nullptr;
    }
    std::lock_guard lock(s.mutex);
    release_orphans();
    if (!usable(ctx.u0, ctx.u1)) {
        return nullptr;
    }
    SubtableJit* known = entry(ctx.subtable, !cold);
    if (!known) {
        return nullptr;  // cold, and no entry after all
    }
    SubtableJit& st = *known;
    if (!st.current) {
        if (ctx.hits >= s.config.hot_hits) {
            request(ctx.subtable, st, {st.mask_map, std::nullopt});
        }
    } else {
        maybe_tier_up(ctx.subtable, st, ctx.hits);
    }
    if (st.ready) {  // finished since the last ranking, or shared just now
        const bool tier_up = st.current != nullptr;
        install(ctx.subtable, st, std::exchange(st.ready, nullptr));
        if (tier_up) {
            st.tier_ups++;
            s.tier_ups++;
            event(JitEvent::kTierUp);
        }
    }
    return st.current ? st.current->fn : nullptr;  // none yet: tier 0
}

void Engine::release(const dpcls_subtable* subtable, ovsb_lookup_func in_use) {
    State& s = *state_;
    // After a re-probe on this thread (in_use set), a subtable the probe
    // left unknown has nothing to let go of.  A dying subtable (in_use null)
    // always takes the mutex: its entry may come from another thread.
    if (in_use && !s.known.maybe(subtable)) {
        return;
    }
    std::lock_guard lock(s.mutex);
    release_orphans();
    auto it = s.subtables.find(subtable);
    if (it == s.subtables.end()) {
        return;
    }
    SubtableJit& st = it->second;
    if (in_use && st.current && st.current->fn == in_use) {
        release_retired(st);
        return;
    }
    if (in_use == nullptr || st.current) {
        // Destroyed, or moved off the JIT's code: let go of everything.
        release_all(st);
        compiler_->cancel(subtable);
        s.subtables.erase(it);
        s.known.remove(subtable);
    }
    // Else the subtable runs another implementation while its first code
    // is being compiled: the request stands.
}

ovsb_lookup_func Engine::compile_now(const dpcls_subtable* subtable,
                                     std::optional<MiniflowMap> expected) {
    const Subtable& v = *view(subtable);
    CacheOptions options;
    {
        std::lock_guard lock(state_->mutex);
        if (!usable(v.u0_bits, v.u1_bits)) {
            return nullptr;
        }
        options = state_->config.cache;
    }
    CodeCache::Result result = cache_.acquire({v.mask.map, expected}, options);
    log_file_errors();
    if (!result.lookup) {
        decline_for(result);
        return nullptr;
    }
    std::lock_guard lock(state_->mutex);
    SubtableJit& st = *entry(subtable, true);
    install(subtable, st, result.lookup);
    return result.lookup->fn;
}

void Engine::drain() { compiler_->drain(); }

bool Engine::fused_usable() {
    std::lock_guard lock(state_->mutex);
    return usable(0, 0);
}

std::optional<MiniflowMap> Engine::fast_path_map(const dpcls_subtable* subtable) const {
    std::lock_guard lock(state_->mutex);
    auto it = state_->subtables.find(subtable);
    if (it == state_->subtables.end() || !it->second.current) {
        return std::nullopt;
    }
    return it->second.current->shape.expected_map;
}

bool Engine::submit_job(std::function<void()> job) {
    return compiler_->submit({nullptr, 0, {}, std::move(job)});
}

const CompiledLookup* Engine::compiled_for(const dpcls_subtable* subtable) const {
    std::lock_guard lock(state_->mutex);
    auto it = state_->subtables.find(subtable);
    return it == state_->subtables.end() ? nullptr : it->second.current;
}

const ProfileSlot* Engine::profile_for(const dpcls_subtable* subtable) const {
    std::lock_guard lock(state_->mutex);
    auto it = state_->subtables.find(subtable);
    if (it == state_->subtables.end() || !it->second.current || it->second.profile_slot < 0) {
        return nullptr;
    }
    return &it->second.current->profiles->slots[it->second.profile_slot];
}

JitConfig Engine::config() const {
    std::lock_guard lock(state_->mutex);
    return state_->config;
}

void Engine::configure(const JitConfig& config) {
    std::string note;
    const JitConfig clamped = clamp_to_system(config, &note);
    {
        std::lock_guard lock(state_->mutex);
        state_->config = clamped;
        state_->hot_hits.store(clamped.hot_hits, std::memory_order_relaxed);
    }
    if (!note.empty()) {
        log_line("jit_avx2: " + note);
    }
}

std::string Engine::configure_from(const char* const keys[], const char* const values[], size_t n,
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

JitStats Engine::stats() const {
    State& s = *state_;
    JitStats out;
    out.cache = cache_.stats();
    for (int i = 0; i < static_cast<int>(Decline::kCount); i++) {
        out.declines[i] = s.declines[i].load(std::memory_order_relaxed);
    }
    out.pending = compiler_->queued();
    std::lock_guard lock(s.mutex);
    out.requests = s.requests;
    out.installs = s.installs;
    out.tier_ups = s.tier_ups;
    out.cancelled = s.cancelled;
    out.subtables = s.subtables.size();
    out.no_profile_slot = s.no_profile_slot;
    out.tier_ups_limited = s.tier_ups_limited;
    out.compile_ns_median = median(s.compile_ns);
    out.rankings = s.rankings;
    out.ranking_ns_median = median(s.ranking_ns);
    out.ranking_ns_max = s.ranking_ns_max;
    out.ranking_ns_total = s.ranking_ns_total;
    out.ranking_ns_last = s.ranking_ns_last;
    return out;
}

std::string Engine::info() const {
    const JitConfig c = config();
    const JitStats st = stats();
    std::string out = "jit_avx2: ";
    if (!c.enabled) {
        out += "disabled (dpcls-jit=false or a bad setting)";
    } else if (std::string why = why_unavailable(state_->hidden); !why.empty()) {
        out += "unavailable (" + why + ")";
    } else {
        out += "enabled";
    }
    out += "\n";
    // One "name: value" per line, as OVS's pmd-stats-show: each name is
    // unique in the report, so that a script reads a value with one sed.
    auto line = [&out](const std::string& name, const std::string& value) {
        out += "  " + name + ": " + value + "\n";
    };
    auto num = [](uint64_t v) { return std::to_string(v); };
    auto us = [](uint64_t ns) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1f us", static_cast<double>(ns) / 1e3);
        return std::string(text);
    };
    line("hot hits", num(c.hot_hits));
    line("code budget", num(c.cache.code_budget_bytes) + " bytes");
    line("compiles per second", num(c.cache.compiles_per_sec));
    line("subtables", num(st.subtables));
    line("lookups", num(st.cache.live));
    line("code bytes", num(st.cache.code_bytes));
    line("mapped bytes", num(st.cache.mapped_bytes));
    line("compiles", num(st.cache.compiles));
    line("compiles not on the compiler thread", num(st.cache.compiles_off_compiler));
    line("shared", num(st.cache.shared));
    line("requests", num(st.requests));
    line("pending", num(st.pending));
    line("installs", num(st.installs));
    line("tier-ups", num(st.tier_ups));
    line("tier-ups refused by the per-map limit", num(st.tier_ups_limited));
    line("probes without a profile slot", num(st.no_profile_slot));
    line("cancelled", num(st.cancelled));
    line("compile time median", us(st.compile_ns_median));
    line("compile time max", us(st.cache.compile_ns_max));
    line("ranking calls", num(st.rankings));
    line("ranking call median", us(st.ranking_ns_median));
    line("ranking call max", us(st.ranking_ns_max));
    line("ranking call last", us(st.ranking_ns_last));
    line("ranking calls in all", us(st.ranking_ns_total));
    if (c.cache.perf_map || !c.cache.dump_dir.empty() || st.cache.file_errors) {
        line("perf map", c.cache.perf_map ? "on" : "off");
        line("dumps", c.cache.dump_dir.empty() ? "off" : "to " + c.cache.dump_dir);
        line("files not written", num(st.cache.file_errors));
    }
    for (int i = 0; i < static_cast<int>(Decline::kCount); i++) {
        line(std::string("declined for ") + decline_name(static_cast<Decline>(i)),
             num(st.declines[i]));
    }
    const FusedStats f = fused_->stats();
    out += "jit_fused: ";
    out += !c.enabled          ? std::string("off (jit_avx2 is off)")
           : c.fused_subtables ? "up to " + num(c.fused_subtables) + " subtables of a port"
                               : std::string("off (dpcls-jit-fused-subtables=0)");
    out += "\n";
    line("fused lookups", num(f.live));
    line("fused code bytes", num(f.code_bytes));
    line("fused in use", num(f.in_use));
    line("fused rankings offered", num(f.probes));
    line("fused handed", num(f.handed));
    line("fused requests", num(f.requests));
    line("fused compiles", num(f.compiles));
    line("fused failed", num(f.failed));
    line("fused without a packet map yet", num(f.no_key_map));
    line("fused with too few subtables of one packet map", num(f.short_run));
    out += fused_->info();
    return out;
}

// (engine.hpp)  Reads the configuration; the CPU check as the probe's.
std::string Engine::state() const {
    const JitConfig c = config();
    if (!c.enabled) {
        return "off (other_config:dpcls-jit=false or a bad dpcls-jit* setting)";
    }
    if (std::string why = why_unavailable(state_->hidden); !why.empty()) {
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
    if (std::string why = why_unavailable(state_->hidden); !why.empty()) {
        return "declines every port (jit_avx2 declines every subtable (" + why + "))";
    }
    return "on (up to " + std::to_string(c.fused_subtables) + " subtables of a port)";
}

LookupDescriptor Engine::descriptor() {
    return {
        OVSCLS_LOOKUP_NAME_jit_avx2,
        OVSCLS_LIBRARY_PRIO_jit_avx2,
        [](void* self, const ProbeContext& ctx) { return static_cast<Engine*>(self)->probe(ctx); },
        [](void* self, const dpcls_subtable* subtable, ovsb_lookup_func in_use) {
            static_cast<Engine*>(self)->release(subtable, in_use);
        },
        this,
        [](void* self, bool begins) {
            auto* engine = static_cast<Engine*>(self);
            begins ? engine->ranking_begin() : engine->ranking_end();
        }};
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

Engine& process_engine() {
    static Engine* engine = [] {
        std::string errors;
        EngineOptions options;
        options.config = JitConfig::from_env(&errors);
        auto* e = new Engine(std::move(options));
        if (!errors.empty()) {
            e->log_line(errors);
        }
        return e;
    }();
    return *engine;
}

}  // namespace ovscls::jit
