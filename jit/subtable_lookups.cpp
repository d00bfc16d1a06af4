#include "jit/subtable_lookups.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "classifier/lookup_table.h"
#include "jit/known_subtables.hpp"

namespace ovscls::jit {

// JIT state of one subtable.  Guarded by State::mutex.
struct SubtableLookups::SubtableJit {
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

// After a refused request, rankings to let pass at most (see skip).
constexpr uint32_t kMaxBackoff = 32;

struct SubtableLookups::State {
    mutable std::mutex mutex;  // guards all of it; never held across a compile
    std::unordered_map<const dpcls_subtable*, SubtableJit> subtables;
    KnownSubtables known;                  // over `subtables`' keys
    std::vector<CompiledLookup*> orphans;  // finished for a subtable that is gone
    // Shapes queued or compiling: another subtable asking for one waits for
    // it (and shares it) instead of queueing it again.
    std::unordered_set<LookupShape, LookupShapeHash> pending_shapes;
    uint64_t next_generation = 1;
    uint64_t requests = 0, installs = 0, tier_ups = 0, cancelled = 0, no_profile_slot = 0;
    uint64_t tier_ups_limited = 0;
    TimeRing compile_ns;
};

namespace {

bool valid_sample(const MiniflowMap& m) {
    return !(m.bits[1] >> kUnit1Bits) &&
           std::popcount(m.bits[0]) + std::popcount(m.bits[1]) <= static_cast<int>(kMaxKeyValues);
}

uint64_t relaxed(const uint64_t& word) {
    return std::atomic_ref<const uint64_t>(word).load(std::memory_order_relaxed);
}

}  // namespace

SubtableLookups::SubtableLookups(Runtime& runtime)
    : runtime_(runtime), state_(std::make_unique<State>()) {}

SubtableLookups::~SubtableLookups() {
    std::lock_guard lock(state_->mutex);
    for (auto& [subtable, st] : state_->subtables) {
        release_all(st);
    }
    state_->subtables.clear();
    state_->known.clear();
    release_orphans();
}

// The subtable's JIT state, created when missing.  A stale entry (a freed
// subtable's address reused by one with another mask) is dropped first.
SubtableLookups::SubtableJit* SubtableLookups::entry(const dpcls_subtable* subtable, bool create) {
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
        runtime_.cancel(subtable);
        st = SubtableJit{};
        fresh = true;
    }
    if (fresh) {
        st.mask_map = map;
        st.generation = s.next_generation++;
    }
    return &st;
}

// A request refused for a full queue: declined, and the subtable backs off
// for 1, 2, 4 ... kMaxBackoff rankings.
void SubtableLookups::queue_full(SubtableJit& st) {
    runtime_.decline(Decline::kQueueFull, [] {
        return std::to_string(kMaxQueued) + " compile requests are waiting for the compiler thread";
    });
    st.backoff = std::min(std::max(st.backoff * 2, 1u), kMaxBackoff);
    st.skip = st.backoff;
}

// Asks for `shape` for the subtable: shared at once when the cache has it
// (sharing compiles nothing), else queued for the compiler thread unless it
// is queued already.  Sets st.ready or st.pending.
void SubtableLookups::request(const dpcls_subtable* subtable, SubtableJit& st,
                              const LookupShape& shape) {
    State& s = *state_;
    if (st.pending || st.ready) {
        return;
    }
    if (st.skip) {  // backing off after a full queue
        st.skip--;
        return;
    }
    if (runtime_.queue_full()) {
        // In a flood of new maps: back off before even looking in the cache,
        // which costs the ranking thread a mutex and a hash per subtable (a
        // shape that is there now is shared after the back-off).
        queue_full(st);
        return;
    }
    if (CompiledLookup* existing = runtime_.code_cache().share(shape)) {
        st.ready = existing;
        return;
    }
    if (shape.expected_map &&
        runtime_.code_cache().fast_path_variants(shape.mask_map) >= kMaxFastPathsPerMap) {
        s.tier_ups_limited++;  // stays on the slow path its code has
        return;
    }
    if (s.pending_shapes.contains(shape)) {
        return;  // another subtable asked: shared at a later ranking
    }
    CompileRequest r{subtable, st.generation, shape};
    r.job = [this, subtable, generation = st.generation, shape] {
        compile({subtable, generation, shape});
    };
    if (!runtime_.submit(r)) {
        queue_full(st);
        return;
    }
    st.backoff = 0;
    s.pending_shapes.insert(shape);
    st.pending = true;
    s.requests++;
}

// On the compiler thread, with no lock held while compiling: shares or
// compiles the request's shape, then hands it to the subtable if it is the
// same life of the address that asked (st.ready), else keeps it for release
// by the next probe or release (the compiler thread never releases: that
// may postpone an RCU callback).
void SubtableLookups::compile(const CompileRequest& r) {
    CodeCache& cache = runtime_.code_cache();
    const CacheOptions options = runtime_.config().cache;
    CompiledLookup* lookup = cache.share(r.shape);
    bool limited = false;
    bool compiled = false;
    if (!lookup) {
        // Two subtables may have asked for new fast paths of one map within
        // a ranking: the limit holds here, where compiles are serial.
        limited = r.shape.expected_map &&
                  cache.fast_path_variants(r.shape.mask_map) >= kMaxFastPathsPerMap;
        if (!limited) {
            const CodeCache::Result result = cache.acquire(r.shape, options);
            runtime_.decline_for(result);
            lookup = result.lookup;
            compiled = result.outcome == CodeCache::Outcome::kCompiled;
            if (compiled) {
                runtime_.event(JitEvent::kCompile);
                runtime_.log_file_errors();
            }
        }
    }
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    if (compiled) {
        s.compile_ns.push(lookup->compile_ns);
    }
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

// Makes `next` the subtable's lookup; the previous one waits for release().
void SubtableLookups::install(const dpcls_subtable* subtable, SubtableJit& st,
                              CompiledLookup* next) {
    if (st.current) {
        if (st.profile_slot >= 0) {
            runtime_.code_cache().retire_profile_slot(st.current,
                                                      static_cast<uint32_t>(st.profile_slot));
            st.profile_slot = -1;
        }
        st.retired.push_back(st.current);
    }
    st.current = next;
    state_->installs++;
    claim_profile_slot(subtable, st);
}

// A free way of the subtable's profile set in its current code, if any.
void SubtableLookups::claim_profile_slot(const dpcls_subtable* subtable, SubtableJit& st) {
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
void SubtableLookups::maybe_tier_up(const dpcls_subtable* subtable, SubtableJit& st,
                                    uint32_t hits) {
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
    if (delta < std::max<uint32_t>(runtime_.hot_hits(), 1) || delta * 2 < hits) {
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
void SubtableLookups::release_orphans() {
    for (CompiledLookup* orphan : state_->orphans) {
        runtime_.code_cache().release(orphan);
    }
    state_->orphans.clear();
}

// Lets go of the lookups the subtable ran before its current one.
void SubtableLookups::release_retired(SubtableJit& st) {
    for (CompiledLookup* old : st.retired) {
        runtime_.code_cache().release(old);
    }
    st.retired.clear();
}

// Lets go of all the subtable's code.
void SubtableLookups::release_all(SubtableJit& st) {
    release_retired(st);
    if (st.current) {
        if (st.profile_slot >= 0) {
            runtime_.code_cache().retire_profile_slot(st.current,
                                                      static_cast<uint32_t>(st.profile_slot));
            st.profile_slot = -1;
        }
        runtime_.code_cache().release(st.current);
        st.current = nullptr;
    }
    if (st.ready) {
        runtime_.code_cache().release(st.ready);
        st.ready = nullptr;
    }
}

ovsb_lookup_func SubtableLookups::probe(const ProbeContext& ctx) {
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
    const bool cold = ctx.hits < runtime_.hot_hits() ||
                      uint64_t{ctx.hits} * kBusiestShare < runtime_.ranking_busiest(ctx.hits);
    if (cold && !s.known.maybe(ctx.subtable)) {
        return nullptr;
    }
    std::lock_guard lock(s.mutex);
    release_orphans();
    if (!runtime_.usable(ctx.u0, ctx.u1)) {
        return nullptr;
    }
    SubtableJit* known = entry(ctx.subtable, !cold);
    if (!known) {
        return nullptr;  // cold, and no entry after all
    }
    SubtableJit& st = *known;
    if (!st.current) {
        if (!cold) {
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
            runtime_.event(JitEvent::kTierUp);
        }
    }
    return st.current ? st.current->fn : nullptr;  // none yet: tier 0
}

void SubtableLookups::release(const dpcls_subtable* subtable, ovsb_lookup_func in_use) {
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
        runtime_.cancel(subtable);
        s.subtables.erase(it);
        s.known.remove(subtable);
    }
    // Else the subtable runs another implementation while its first code
    // is being compiled: the request stands.
}

ovsb_lookup_func SubtableLookups::compile_now(const dpcls_subtable* subtable,
                                              std::optional<MiniflowMap> expected) {
    const Subtable& v = *view(subtable);
    if (!runtime_.usable(v.u0_bits, v.u1_bits)) {
        return nullptr;
    }
    const CacheOptions options = runtime_.config().cache;
    CodeCache::Result result = runtime_.code_cache().acquire({v.mask.map, expected}, options);
    runtime_.log_file_errors();
    if (!result.lookup) {
        runtime_.decline_for(result);
        return nullptr;
    }
    std::lock_guard lock(state_->mutex);
    SubtableJit& st = *entry(subtable, true);
    install(subtable, st, result.lookup);
    return result.lookup->fn;
}

std::optional<MiniflowMap> SubtableLookups::fast_path_map(const dpcls_subtable* subtable) const {
    std::lock_guard lock(state_->mutex);
    auto it = state_->subtables.find(subtable);
    if (it == state_->subtables.end() || !it->second.current) {
        return std::nullopt;
    }
    return it->second.current->shape.expected_map;
}

const CompiledLookup* SubtableLookups::compiled_for(const dpcls_subtable* subtable) const {
    std::lock_guard lock(state_->mutex);
    auto it = state_->subtables.find(subtable);
    return it == state_->subtables.end() ? nullptr : it->second.current;
}

const ProfileSlot* SubtableLookups::profile_for(const dpcls_subtable* subtable) const {
    std::lock_guard lock(state_->mutex);
    auto it = state_->subtables.find(subtable);
    if (it == state_->subtables.end() || !it->second.current || it->second.profile_slot < 0) {
        return nullptr;
    }
    return &it->second.current->profiles->slots[it->second.profile_slot];
}

SubtableStats SubtableLookups::stats() const {
    const State& s = *state_;
    std::lock_guard lock(s.mutex);
    SubtableStats out;
    out.requests = s.requests;
    out.installs = s.installs;
    out.tier_ups = s.tier_ups;
    out.cancelled = s.cancelled;
    out.subtables = s.subtables.size();
    out.no_profile_slot = s.no_profile_slot;
    out.tier_ups_limited = s.tier_ups_limited;
    out.compile_ns_median = s.compile_ns.median();
    return out;
}

LookupDescriptor SubtableLookups::descriptor() {
    return {OVSCLS_LOOKUP_NAME_jit_avx2,
            OVSCLS_LIBRARY_PRIO_jit_avx2,
            [](void* self, const ProbeContext& ctx) {
                return static_cast<SubtableLookups*>(self)->probe(ctx);
            },
            [](void* self, const dpcls_subtable* subtable, ovsb_lookup_func in_use) {
                static_cast<SubtableLookups*>(self)->release(subtable, in_use);
            },
            this,
            [](void* self, bool begins) {
                Runtime& runtime = static_cast<SubtableLookups*>(self)->runtime_;
                begins ? runtime.ranking_begin() : runtime.ranking_end();
            }};
}

}  // namespace ovscls::jit
