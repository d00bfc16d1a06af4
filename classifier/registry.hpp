// registry.hpp: the lookup implementations a classifier chooses from, with
// the semantics of OVS 3.1's lib/dpif-netdev-lookup.c.
//
// - An entry is {name, priority 0-255, probe}.  For a subtable, the best
//   implementation is the one with the highest priority whose probe accepts
//   the subtable; on equal priorities the earlier entry wins (OVS:
//   "strictly greater").
// - set_priority() changes an entry's priority and re-probes every live
//   subtable of every attached classifier.  Lookups keep running meanwhile:
//   each subtable's function pointer is swapped atomically, so a reader
//   calls either the old or the new function.
// - info() prints the entries with use counts in OVS's format.
//
// Built-in entries, in order: `generic` (priority 1, any fingerprint),
// `specialized` (priority 2, the fingerprints of fingerprints.def) and
// `jit_avx2` (priority 3, code generated per subtable once it is hot:
// jit/jit_lookup.hpp).
//
// An entry may hold resources per subtable (the JIT's code).  Its release
// hook is told which function the classifier published for a subtable
// (null when the subtable dies), after the publication, so that it frees
// only what no new reader can reach; the freeing itself waits for an RCU
// grace period.
//
// Lookups (readers) never touch the registry.  best_for() is lock-free, so
// classifiers may probe while holding their own writer lock; set_priority()
// takes the registry's lock and then each classifier's, never the reverse.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lookups.hpp"
#include "status.hpp"

namespace ovscls {

class Classifier;

using ProbeFn = ovsb_lookup_func (*)(const ProbeContext&);
using ReleaseFn = void (*)(const dpcls_subtable* subtable, ovsb_lookup_func in_use);

struct LookupImpl {
    std::string name;
    std::atomic<uint32_t> priority;
    ProbeFn probe;
    ReleaseFn release = nullptr;        // optional
    std::atomic<int32_t> use_count{0};  // subtables currently using it
};

class LookupRegistry {
  public:
    static constexpr size_t kMaxImpls = 16;

    // A registry holding the built-in entries.
    LookupRegistry();
    LookupRegistry(const LookupRegistry&) = delete;
    LookupRegistry& operator=(const LookupRegistry&) = delete;

    // The process-wide registry classifiers use by default.
    static LookupRegistry& global();

    // Appends an entry.  Fails on a duplicate or empty name, a priority
    // beyond 255, or a full registry.
    Status add(std::string_view name, uint32_t priority, ProbeFn probe,
               ReleaseFn release = nullptr);

    // Tells every entry's release hook that `in_use` (null: none, the
    // subtable is going away) is what readers of `subtable` now call.
    void release(const dpcls_subtable* subtable, ovsb_lookup_func in_use) const;

    struct Choice {
        ovsb_lookup_func fn = nullptr;
        LookupImpl* impl = nullptr;
    };
    // The best implementation for a subtable.  Never empty while `generic`
    // is registered (it accepts everything).
    Choice best_for(const ProbeContext& ctx) const;

    // Sets NAME's priority (0-255) and re-probes the subtables of every
    // attached classifier.  On success `changed` holds the number of
    // subtables whose lookup function changed.
    Status set_priority(std::string_view name, int64_t priority, uint32_t* changed = nullptr);

    // OVS's `dpif-netdev/subtable-lookup-info-get` text.
    std::string info() const;

    // Looks an entry up by name; null when absent.
    LookupImpl* find(std::string_view name) const;
    size_t size() const { return count_.load(std::memory_order_acquire); }
    LookupImpl& at(size_t i) const { return *impls_[i]; }

    // Classifiers register themselves to be re-probed by set_priority().
    void attach(Classifier* cls);
    void detach(Classifier* cls);

  private:
    std::array<std::unique_ptr<LookupImpl>, kMaxImpls> impls_;
    std::atomic<size_t> count_{0};
    mutable std::mutex mutex_;  // guards add(), set_priority(), classifiers_
    std::vector<Classifier*> classifiers_;
};

}  // namespace ovscls
