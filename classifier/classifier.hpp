// classifier.hpp: a dpcls-compatible datapath classifier on Open vSwitch
// 3.1's own structures.
//
// As OVS's dpcls (lib/dpif-netdev.c), one classifier serves one in_port:
// - one subtable (struct dpcls_subtable) per distinct mask, holding its
//   rules (struct dpcls_rule) in an OVS cmap under the masked-key hash;
// - subtables in an OVS pvector, ranked by hits: sort_subtables() moves the
//   subtables that matched most in the last interval to the front;
// - lookup() of 1..32 keys tries the subtables in rank order and stops for a
//   key at the first subtable with a matching rule (rules do not overlap).
// - Each subtable's lookup function is chosen at creation by the registry's
//   probe (registry.hpp) and swapped when priorities change: the classifier
//   subscribes to its registry's priority changes.
// - Optionally a fused lookup (fused.hpp) serves the first subtables of the
//   ranking in one call: asked of a FusedProvider at every ranking, bound
//   to that ranking (the published pvector) and dropped whenever it changes.
// - Optionally a tail index (tail.hpp) serves the subtables after the first
//   few: told of every subtable, rule and ranking, asked per burst for the
//   keys the loop over the first ones left.
//
// Concurrency: lookup() is the reader side.  It takes no lock and may run on
// any number of threads while one writer at a time inserts, removes, sorts
// or re-probes (writers serialize on an internal mutex).  Memory a reader
// may still see (rules, subtables, pvector arrays) is freed only after an
// OVS-RCU grace period, so reader threads must be OVS threads
// (ovsb_thread_create(), as PMD threads are) and quiesce now and then
// (ovsb_rcu_quiesce()).  With readers OVS-RCU does not know of, memory is
// freed under them.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "classifier/fused.hpp"
#include "classifier/layout.hpp"
#include "classifier/registry.hpp"
#include "classifier/status.hpp"
#include "classifier/tail.hpp"

namespace ovscls {

// Why a key or mask is not a valid miniflow, or "" when it is.
std::string validate_key(const FlowKey& key);
std::string validate_mask(const FlowKey& mask);

class Classifier final : private PriorityListener {
  public:
    // Chooses subtables' lookups from `registry`, which must outlive it
    // (standalone/builtin_lookups.hpp has this project's).
    // `fused`, if not null, must outlive it too; `tail`, if not null, is its
    // own.
    explicit Classifier(LookupRegistry& registry, FusedProvider* fused = nullptr,
                        std::unique_ptr<TailIndex> tail = nullptr);
    ~Classifier();  // no lookups may be running; frees all rules
    Classifier(const Classifier&) = delete;
    Classifier& operator=(const Classifier&) = delete;

    // Inserts the rule matching `flow` (OVSCLS_FLOW_U64S words) under `mask`,
    // creating the mask's subtable if needed.  Fails on an invalid mask,
    // when a rule with the same mask and masked key is already present, or
    // when no registry entry accepts a new subtable.
    Status insert(const FlowKey& mask, const uint64_t flow[], dpcls_rule** rule_out = nullptr);

    // Removes a rule returned by insert(); its memory is freed after an RCU
    // grace period, and its subtable too when it was the last rule.
    Status remove(dpcls_rule* rule);

    // dpcls_lookup(): for each of keys[0..cnt) sets rules[i] to the matching
    // rule or null.  Returns true when every key matched.  `num_lookups`, if
    // not null, receives OVS's "subtable lookups per hit" numerator (sum over
    // matched keys of the rank of the subtable that matched).  Keys that are
    // not valid miniflows (validate_key) are not looked up: they miss and
    // are counted in invalid_keys().  1 <= cnt <= 32.
    bool lookup(const netdev_flow_key* keys[], size_t cnt, dpcls_rule** rules,
                int* num_lookups = nullptr) const;

    // dpcls_sort_subtable_vector(): rank subtables by hits since last call.
    // Subtables with hits are re-probed too: this is where a hot subtable
    // moves up to JIT code (jit/engine.hpp).
    void sort_subtables();

    // When the fused provider has new code ready (ready_count() moved) and
    // none is published: asks it again for the ranking in place.  Cheap
    // when nothing moved (one atomic load, no lock): a PMD thread calls it
    // between bursts.  True when a fused lookup was published.
    bool refresh_fused();

    // Re-probes every subtable's implementation; returns how many changed.
    uint32_t reprobe();

    struct SubtableInfo {
        uint32_t u0, u1;
        size_t rules;
        uint32_t hits;  // in the current ranking interval
        std::string impl;
        const dpcls_subtable* subtable;
    };
    // Subtables in rank order (writer side).
    std::vector<SubtableInfo> subtables() const;
    // How many leading subtables the published fused lookup serves (0: none).
    uint32_t fused_subtables() const;
    size_t rule_count() const;
    // The tail index, if any (its writer-side calls need the classifier's
    // writer lock: with_writer_lock()).
    const TailIndex* tail() const { return tail_.get(); }
    template <class F>
    auto with_writer_lock(F&& f) const {
        std::lock_guard lock(writer_);
        return f();
    }
    uint64_t invalid_keys() const { return invalid_keys_.load(std::memory_order_relaxed); }

  private:
    uint32_t on_priority_change() override { return reprobe(); }

    struct SubtableState {
        Subtable* subtable;
        LookupImpl* impl;
    };
    SubtableState* find_or_create_subtable(const FlowKey& mask);
    void destroy_subtable(Subtable* subtable);
    // False when no entry accepts (the subtable keeps its function, if any).
    bool probe(SubtableState& state, uint32_t hits);
    // Publishes the pvector's pending changes.  The fused lookup moves to
    // the new ranking when that offers the provider the same subtables and
    // functions (unless `ask_again`); else it is unpublished and the
    // provider asked for one bound to the new ranking.  Under writer_.
    void publish_ranking(bool ask_again = false);
    void unpublish_fused();
    void probe_fused();  // under writer_
    // The provider's offer for a ranking: its first subtables (as many as
    // the provider takes) with their lookup functions.  Under writer_.
    std::vector<std::pair<const dpcls_subtable*, ovsb_lookup_func>> offer(
        const PvectorImpl* impl) const;

    // What readers find in fused_: a fused lookup and the ranking (the
    // published pvector impl) it was made for.
    struct FusedBinding {
        FusedLookup lookup;
        const PvectorImpl* ranking;
        // What the provider was offered: the ranking's first subtables and
        // their lookup functions.  A ranking that offers the same again
        // keeps the lookup (publish_ranking(), as the 3.x series' patch 7).
        std::vector<std::pair<const dpcls_subtable*, ovsb_lookup_func>> offered;
    };

    LookupRegistry& registry_;
    FusedProvider* const fused_provider_;
    const std::unique_ptr<TailIndex> tail_;
    Pvector* subtables_;                        // OVS pvector of Subtable*, read by lookup()
    std::atomic<const FusedBinding*> fused_{};  // read by lookup(); RCU-freed
    // The provider's ready_count() when it was last asked.
    std::atomic<uint64_t> fused_asked_at_{~uint64_t{0}};
    mutable std::mutex writer_;
    // Writer-side indexes: subtables by mask hash, and the live rules.
    std::unordered_multimap<uint32_t, SubtableState> by_mask_;
    std::unordered_set<const Rule*> rules_;
    mutable std::atomic<uint64_t> invalid_keys_{0};
};

}  // namespace ovscls
