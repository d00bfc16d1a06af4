// registry.hpp: the lookup implementations a classifier chooses from, with
// the semantics of OVS 3.1's lib/dpif-netdev-lookup.c.  Mechanism only: the
// registry knows no implementation; a composition root adds descriptors
// (lookup_impl.hpp), e.g. standalone/builtin_lookups.cpp.
//
// - An entry is {name, priority 0-255, probe, release, context, ranking}.  For a
//   subtable, the best implementation is the one with the highest priority
//   whose probe accepts the subtable; on equal priorities the earlier entry
//   wins (OVS: "strictly greater").
// - set_priority() changes an entry's priority and tells every subscribed
//   listener (each classifier) to re-probe its live subtables.  Lookups keep
//   running meanwhile: each subtable's function pointer is swapped
//   atomically, so a reader calls either the old or the new function.
// - info() prints the entries with use counts in OVS's format.
//
// An entry may hold resources per subtable (the JIT's code).  Its release
// hook is told which function the classifier published for a subtable
// (null when the subtable dies), after the publication, so that it frees
// only what no new reader can reach; the freeing itself waits for an RCU
// grace period.
//
// Lookups (readers) never touch the registry.  best_for() is lock-free, so
// classifiers may probe while holding their own writer lock; set_priority()
// takes the registry's lock and then each listener's, never the reverse.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/lookup_impl.hpp"
#include "classifier/status.hpp"

namespace ovscls {

// A registry entry: a descriptor with a priority that prio-set changes and
// the number of subtables using it.
struct LookupImpl {
    std::string name;
    std::atomic<uint32_t> priority;
    ProbeFn probe_fn;
    ReleaseFn release_fn = nullptr;
    RankingFn ranking_fn = nullptr;
    void* context = nullptr;
    std::atomic<int32_t> use_count{0};  // subtables currently using it

    ovsb_lookup_func probe(const ProbeContext& ctx) const { return probe_fn(context, ctx); }
};

// Whoever must re-probe subtables when a priority changes (a classifier).
class PriorityListener {
  public:
    // Re-probes; returns how many subtables changed implementation.
    virtual uint32_t on_priority_change() = 0;

  protected:
    ~PriorityListener() = default;
};

class LookupRegistry {
  public:
    static constexpr size_t kMaxImpls = 16;

    // An empty registry: add() the implementations to choose from.
    LookupRegistry() = default;
    LookupRegistry(const LookupRegistry&) = delete;
    LookupRegistry& operator=(const LookupRegistry&) = delete;

    // Appends an entry.  Fails on a duplicate or empty name, no probe, a
    // priority beyond 255, or a full registry.
    Status add(const LookupDescriptor& descriptor);

    // Tells every entry's release hook that `in_use` (null: none, the
    // subtable is going away) is what readers of `subtable` now call.
    void release(const dpcls_subtable* subtable, ovsb_lookup_func in_use) const;
    // Tells every entry's ranking hook that a ranking call begins or ends
    // on the calling thread.
    void ranking(bool begins) const;

    struct Choice {
        ovsb_lookup_func fn = nullptr;
        LookupImpl* impl = nullptr;
    };
    // The best implementation for a subtable.  Never empty while `generic`
    // is registered (it accepts everything).
    Choice best_for(const ProbeContext& ctx) const;

    // Sets NAME's priority (0-255) and has every listener re-probe.  On success `changed` holds the
    // number of subtables whose lookup function changed.
    Status set_priority(std::string_view name, int64_t priority, uint32_t* changed = nullptr);

    // OVS's `dpif-netdev/subtable-lookup-info-get` text.
    std::string info() const;

    // Looks an entry up by name; null when absent.
    LookupImpl* find(std::string_view name) const;
    size_t size() const { return count_.load(std::memory_order_acquire); }
    LookupImpl& at(size_t i) const { return *impls_[i]; }

    // Classifiers subscribe to be re-probed by set_priority().
    void subscribe(PriorityListener* listener);
    void unsubscribe(PriorityListener* listener);

  private:
    std::array<std::unique_ptr<LookupImpl>, kMaxImpls> impls_;
    std::atomic<size_t> count_{0};
    mutable std::mutex mutex_;  // guards add(), set_priority(), listeners_
    std::vector<PriorityListener*> listeners_;
};

}  // namespace ovscls
