// tail_entries.cpp: the tail index (tail/tuple_pruning.hpp) behind the
// series' tail hooks (lib/dpif-netdev-lookup.h: 'tail_create' ...), as C
// entry points for ovs_registration.c.  One index per dpcls; OVS calls the
// writer-side entries under the owning thread's flow_mutex, the reader-side
// ones (view, lookup) from dpcls_lookup() without a lock.
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "plugin/ovscls_plugin.h"
#include "tail/tuple_pruning.hpp"

namespace {

using ovscls::tail::TuplePruningConfig;
using ovscls::tail::TuplePruningIndex;

// other_config's settings (set by the main thread), read by the threads
// that rank and look up: on/off, head and minimum tail, published whole.
// Off takes effect at a PMD's next burst (view() serves none), head and
// minimum tail at each dpcls's next ranking.
constexpr uint64_t kOn = uint64_t{1} << 63;
std::atomic<uint64_t> settings{kOn | uint64_t{16} << 32 | 32};

uint32_t head_of(uint64_t s) { return static_cast<uint32_t>(s >> 32) & 0x7fffffffu; }
uint32_t min_tail_of(uint64_t s) { return static_cast<uint32_t>(s); }

// Over all indexes, since the start (relaxed: statistics): how many exist,
// the keys dpcls_lookup() handed them and those they matched.
std::atomic<uint64_t> live{0}, keys_in{0}, keys_found{0};

// The validation mode (ovscls_plugin_tail_validate(), in OVS builds with
// the autovalidator): each lookup's answer checked against OVS's loop over
// the same positions; keys checked, those answered differently, and those
// that disagreed once and agreed when looked up again (another thread
// inserted or removed a flow between the two lookups).
std::atomic<void (*)(const char*)> on_mismatch{nullptr};
std::atomic<void (*)(uint64_t, uint64_t)> on_progress{nullptr};
std::atomic<uint64_t> validated{0}, mismatches{0}, rechecked{0};

// The writer-side hooks' cost, over all indexes since the start (relaxed:
// statistics): calls, time in them and the longest call.
struct HookCost {
    std::atomic<uint64_t> calls{0}, ns{0}, max_ns{0};

    void add(uint64_t took) {
        calls.fetch_add(1, std::memory_order_relaxed);
        ns.fetch_add(took, std::memory_order_relaxed);
        uint64_t seen = max_ns.load(std::memory_order_relaxed);
        while (took > seen &&
               !max_ns.compare_exchange_weak(seen, took, std::memory_order_relaxed)) {
        }
    }
    double mean_us() const {
        const uint64_t n = calls.load(std::memory_order_relaxed);
        return n ? static_cast<double>(ns.load(std::memory_order_relaxed)) / 1e3 / double(n) : 0.0;
    }
    double max_us() const {
        return static_cast<double>(max_ns.load(std::memory_order_relaxed)) / 1e3;
    }
};
HookCost subtable_cost, rule_cost, ranking_cost;

// The live indexes, for tail-show's lines per index: added and removed by
// tail_create/tail_destroy (the thread that makes or ends a dpcls), read by
// tail-show on the main thread; the lock is held only to copy a summary.
std::mutex indexes_mutex;
std::vector<const TuplePruningIndex*> indexes;

TuplePruningIndex* index_of(void* tail) { return static_cast<TuplePruningIndex*>(tail); }
const TuplePruningIndex* index_of(const void* tail) {
    return static_cast<const TuplePruningIndex*>(tail);
}

}  // namespace

// Turns the validation mode on; `report` is called (from the thread that
// looks up) with a description of each mismatch, `progress` with the
// counts so far each time the keys checked pass a power of two.
extern "C" void ovscls_plugin_tail_validate(void (*report)(const char* what),
                                            void (*progress)(uint64_t checked,
                                                             uint64_t mismatched)) {
    on_progress.store(progress, std::memory_order_release);
    on_mismatch.store(report, std::memory_order_release);
}

// Keys checked by the validation mode, mismatches, and keys that agreed
// only when rechecked, since the start.
extern "C" void ovscls_plugin_tail_validated(uint64_t* checked, uint64_t* mismatched,
                                             uint64_t* rechecks) {
    *checked = validated.load(std::memory_order_relaxed);
    *mismatched = mismatches.load(std::memory_order_relaxed);
    *rechecks = rechecked.load(std::memory_order_relaxed);
}

extern "C" void ovscls_plugin_tail_configure(bool on, uint32_t head, uint32_t min_tail) {
    settings.store((on ? kOn : 0) | uint64_t{head & 0x7fffffffu} << 32 | min_tail,
                   std::memory_order_relaxed);
}

extern "C" void* ovscls_plugin_tail_create(void) {
    const uint64_t s = settings.load(std::memory_order_relaxed);
    TuplePruningConfig config;
    config.head = head_of(s);
    config.min_tail = min_tail_of(s);
    auto* index = new (std::nothrow) TuplePruningIndex(config);
    if (index) {
        try {
            std::lock_guard lock(indexes_mutex);
            indexes.push_back(index);
        } catch (...) {  // no memory for the list: an index tail-show does not list
        }
    }
    live.fetch_add(index != nullptr, std::memory_order_relaxed);
    return index;
}

extern "C" void ovscls_plugin_tail_destroy(void* tail) {
    {
        std::lock_guard lock(indexes_mutex);
        indexes.erase(std::remove(indexes.begin(), indexes.end(), index_of(tail)), indexes.end());
    }
    delete index_of(tail);
    live.fetch_sub(1, std::memory_order_relaxed);
}

namespace {
std::string validation_text() {
    if (!on_mismatch.load(std::memory_order_relaxed)) {
        return "";
    }
    return "\n  validation: " + std::to_string(validated.load(std::memory_order_relaxed)) +
           " keys checked against OVS's loop over the tail, " +
           std::to_string(mismatches.load(std::memory_order_relaxed)) + " mismatches, " +
           std::to_string(rechecked.load(std::memory_order_relaxed)) +
           " agreed only when rechecked (a flow changed between the two lookups)";
}
}  // namespace

namespace {
// A line per live index (the first kShown): its subtables and memory, where
// it serves from in its last ranking, and its keys' candidates.
std::string per_index_text() {
    constexpr size_t kShown = 16;
    std::vector<ovscls::tail::TuplePruningSummary> sums;
    size_t n = 0;
    {
        std::lock_guard lock(indexes_mutex);
        n = indexes.size();
        for (size_t i = 0; i < std::min(n, kShown); i++) sums.push_back(indexes[i]->summary());
    }
    std::string out;
    for (size_t i = 0; i < sums.size(); i++) {
        const auto& s = sums[i];
        const uint64_t served = s.keys - s.loops;
        char line[320];
        std::snprintf(
            line, sizeof line,
            "\n  index %zu: %zu subtables in %zu families (%zu not indexed), %.1f KiB; %s; keys "
            "%llu, "
            "candidates a key %.2f (max %zu), probes a key %.2f, over the candidate bound %llu",
            i + 1, s.subtables, s.families, s.unindexed, static_cast<double>(s.bytes) / 1024,
            s.stepped_aside     ? "stepped aside (too many not indexed): OVS's loop does all"
            : s.start >= s.size ? "not serving (the ranking is short)"
                                : ("serving from rank " + std::to_string(s.start + 1) + " of " +
                                   std::to_string(s.size))
                                      .c_str(),
            (unsigned long long)s.keys, served ? double(s.candidates) / double(served) : 0.0,
            s.max_candidates, s.keys ? double(s.probes) / double(s.keys) : 0.0,
            (unsigned long long)s.loops);
        out += line;
    }
    if (n > kShown) out += "\n  ... and " + std::to_string(n - kShown) + " more indexes";
    return out;
}
}  // namespace

// The report of `ovs-appctl dpcls-plugin/tail-show` (malloc'ed).
extern "C" char* ovscls_plugin_tail_show(void) {
    const uint64_t s = settings.load(std::memory_order_relaxed);
    std::string per_index;
    try {
        per_index = per_index_text();
    } catch (...) {  // no memory: the report without its lines per index
    }
    char* text = nullptr;
    if (asprintf(&text,
                 "tail_index: %s, head %u at most (each rank with 1/%.0f or more of the hits "
                 "at it and after it, or of the busiest rank's where those hold most), served "
                 "with %u or more subtables after it\n"
                 "  bounds: %zu MiB an index (past it new subtables are probed one by one), "
                 "%zu candidates a key (past it OVS's loop over the tail)\n"
                 "  indexes %llu, keys looked up %llu, matched %llu%s%s\n"
                 "  writer side (mean / max us a call): subtables added or removed %llu "
                 "(%.2f / %.1f), rules inserted or removed %llu (%.2f / %.1f), rankings %llu "
                 "(%.1f / %.1f, %.0f us in all)\n",
                 s & kOn ? "on" : "OFF", head_of(s), 1 / TuplePruningConfig{}.head_share,
                 min_tail_of(s), TuplePruningConfig{}.max_bytes >> 20,
                 TuplePruningConfig{}.max_candidates,
                 (unsigned long long)live.load(std::memory_order_relaxed),
                 (unsigned long long)keys_in.load(std::memory_order_relaxed),
                 (unsigned long long)keys_found.load(std::memory_order_relaxed),
                 validation_text().c_str(), per_index.c_str(),
                 (unsigned long long)subtable_cost.calls.load(std::memory_order_relaxed),
                 subtable_cost.mean_us(), subtable_cost.max_us(),
                 (unsigned long long)rule_cost.calls.load(std::memory_order_relaxed),
                 rule_cost.mean_us(), rule_cost.max_us(),
                 (unsigned long long)ranking_cost.calls.load(std::memory_order_relaxed),
                 ranking_cost.mean_us(), ranking_cost.max_us(),
                 static_cast<double>(ranking_cost.ns.load(std::memory_order_relaxed)) / 1e3) < 0) {
        return nullptr;
    }
    return text;
}

// The writer-side entries run inside OVS's C code: no exception may leave
// them.  One that cannot be made (bad_alloc) leaves the index unable to
// answer: it stops serving (TuplePruningIndex::fail()), the loop does all.
// Each call's time goes to `cost`.
namespace {
template <class F>
void guarded(void* tail, HookCost& cost, F&& f) {
    const auto start = std::chrono::steady_clock::now();
    try {
        f(*index_of(tail));
    } catch (...) {
        index_of(tail)->fail();
    }
    cost.add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - start)
                                       .count()));
}
}  // namespace

extern "C" void ovscls_plugin_tail_subtable(void* tail, const dpcls_subtable* subtable,
                                            bool added) {
    guarded(tail, subtable_cost, [&](TuplePruningIndex& index) {
        if (added) {
            index.subtable_added(subtable);
        } else {
            index.subtable_removed(subtable);
        }
    });
}

extern "C" void ovscls_plugin_tail_rule(void* tail, const dpcls_subtable* subtable,
                                        const dpcls_rule* rule, bool inserted) {
    guarded(tail, rule_cost, [&](TuplePruningIndex& index) {
        if (inserted) {
            index.rule_inserted(subtable, rule);
        } else {
            index.rule_removed(subtable, rule);
        }
    });
}

extern "C" void ovscls_plugin_tail_ranking(void* tail, const pvector_impl* ranking) {
    const uint64_t s = settings.load(std::memory_order_relaxed);
    guarded(tail, ranking_cost, [&](TuplePruningIndex& index) {
        index.set_serving(head_of(s), min_tail_of(s));
        index.ranking_published(reinterpret_cast<const ovscls::PvectorImpl*>(ranking));
    });
}

extern "C" size_t ovscls_plugin_tail_view(const void* tail, const pvector_impl* ranking,
                                          size_t size, const void** view) {
    if (!(settings.load(std::memory_order_relaxed) & kOn)) {
        *view = nullptr;
        return size;  // off: the loop does all
    }
    const ovscls::TailIndex::View v =
        index_of(tail)->view(reinterpret_cast<const ovscls::PvectorImpl*>(ranking), size);
    *view = v.binding;
    return v.binding ? v.start : size;
}

namespace {
// The keys of `keys_map` on which the index's answer (`found`, rules[])
// and the loop's (`want_found`, want[]) differ.
uint32_t disagreeing(uint32_t keys_map, uint32_t found, dpcls_rule* const* rules,
                     uint32_t want_found, dpcls_rule* const* want) {
    uint32_t bad = (found ^ want_found) & keys_map;
    for (uint32_t map = found & want_found & keys_map; map; map &= map - 1) {
        const int i = __builtin_ctz(map);
        if (rules[i] != want[i]) {
            bad |= 1u << i;
        }
    }
    return bad;
}

// The validation mode's check of one lookup: the index's answer (`found`,
// rules[], the lookups numerator `got`) against the loop's, which ran
// first.  Keys that disagree are looked up again by both (the numerator
// too, when only it differed); those that agree then saw another thread
// insert or remove a flow between the two lookups and are counted as
// rechecked, the others are mismatches, each reported.
void validate(const TuplePruningIndex& index, ovscls::TailIndex::View view, uint32_t keys_map,
              const netdev_flow_key* keys[], uint32_t found, dpcls_rule* const* rules, int got,
              uint32_t want_found, dpcls_rule* const* want, int want_lookups,
              void (*report)(const char*)) {
    const auto n = static_cast<uint64_t>(__builtin_popcount(keys_map));
    const uint64_t before = validated.fetch_add(n, std::memory_order_relaxed);
    // The counts so far each time they pass a power of two (1, 2, 4, ...):
    // a switch stopped without its exit hooks (SIGKILL) still leaves them
    // in its log, in a few dozen lines over its life.
    if (n && std::bit_width(before) != std::bit_width(before + n)) {
        if (auto* progress = on_progress.load(std::memory_order_acquire)) {
            progress(before + n, mismatches.load(std::memory_order_relaxed));
        }
    }
    uint32_t bad = disagreeing(keys_map, found, rules, want_found, want);
    // The numerator is compared when both found the same keys (their rules
    // may still differ), as before the recheck existed.
    bool numerator_bad = found == want_found && got != want_lookups;
    if (bad || numerator_bad) {
        // The whole burst again when the numerator is in question: it
        // counts over every key.
        const uint32_t again = numerator_bad ? keys_map : bad;
        dpcls_rule *rules2[32] = {}, *want2[32] = {};
        int got2 = 0, want_lookups2 = 0;
        const uint32_t want_found2 = index.loop_over_tail(view, again, keys, want2, &want_lookups2);
        const uint32_t found2 = index.lookup(view, again, keys, rules2, &got2);
        const uint32_t still = disagreeing(again, found2, rules2, want_found2, want2);
        const bool numerator_still =
            numerator_bad && found2 == want_found2 && got2 != want_lookups2;
        rechecked.fetch_add(static_cast<uint64_t>(__builtin_popcount(bad & ~still)) +
                                (numerator_bad && !numerator_still),
                            std::memory_order_relaxed);
        // The first answer is what OVS goes on with; the report says how
        // it differed.
        bad &= still;
        numerator_bad = numerator_still;
    }
    for (uint32_t map = bad; map; map &= map - 1) {
        const int i = __builtin_ctz(map);
        const bool hit = found >> i & 1, want_hit = want_found >> i & 1;
        mismatches.fetch_add(1, std::memory_order_relaxed);
        char what[160];
        std::snprintf(what, sizeof what,
                      "tail_index: key %d of a burst: %s, OVS's loop over the same "
                      "subtables: %s (so again when both looked it up again)",
                      i, hit ? "a rule" : "a miss",
                      !want_hit ? "a miss"
                      : hit     ? "another rule"
                                : "a rule");
        report(what);
    }
    if (numerator_bad) {
        mismatches.fetch_add(1, std::memory_order_relaxed);
        char what[160];
        std::snprintf(what, sizeof what,
                      "tail_index: lookups numerator %d, OVS's loop over the same subtables: %d",
                      got, want_lookups);
        report(what);
    }
}
}  // namespace

extern "C" uint32_t ovscls_plugin_tail_lookup(const void* tail, const void* view, size_t start,
                                              uint32_t keys_map, const netdev_flow_key* keys[],
                                              dpcls_rule** rules, int* lookups) {
    const TuplePruningIndex* index = index_of(tail);
    if (auto* report = on_mismatch.load(std::memory_order_acquire)) {
        dpcls_rule* want[32] = {};
        int want_lookups = 0, got = 0;
        const uint32_t want_found =
            index->loop_over_tail({view, start}, keys_map, keys, want, &want_lookups);
        const uint32_t found = index->lookup({view, start}, keys_map, keys, rules, &got);
        validate(*index, {view, start}, keys_map, keys, found, rules, got, want_found, want,
                 want_lookups, report);
        *lookups += got;
        keys_in.fetch_add(__builtin_popcount(keys_map), std::memory_order_relaxed);
        keys_found.fetch_add(__builtin_popcount(found), std::memory_order_relaxed);
        return found;
    }
    const uint32_t found = index->lookup({view, start}, keys_map, keys, rules, lookups);
    keys_in.fetch_add(__builtin_popcount(keys_map), std::memory_order_relaxed);
    keys_found.fetch_add(__builtin_popcount(found), std::memory_order_relaxed);
    return found;
}
