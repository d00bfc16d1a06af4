// classifier.cpp: a model of OVS's dpcls, for the tests and benchmarks.
//
// What runs in ovs-vswitchd is OVS's own dpcls (lib/dpif-netdev.c) with the
// series' hooks (patches/3.1: the fused lookup of patch 7, the tail index
// of patch 9, the one-pass ranking of patch 10); this file is the same
// algorithm on the same structures (a pvector of subtables, each a cmap of
// rules), written again so that the lookups can be tested and measured
// without a switch.  It is a copy, and can drift; three checks hold it to
// OVS's:
// - tests/ovs_loop.hpp: OVS's loop with OVS's generic in every subtable;
//   the fused, tail-index and tail-soak tests compare every lookup() here
//   with it, rule for rule and in the lookups-per-hit count (the
//   differential tests compare single subtables' lookups with OVS's
//   generic, and need no loop);
// - tests/vswitchd/: OVS's own dpcls_lookup() with the plugin's lookups,
//   checked on every lookup by OVS's autovalidator (3.x) or the plugin's
//   validation mode (4.0) over OVS's testsuite subset;
// - the structures are OVS's (classifier/layout.hpp, asserted against
//   OVS's headers), reached through the OVS bridge (ovs_bridge.h).
// The contract both keep: per key, the rule of the first matching subtable
// in rank order, the same lookups-per-hit count, and hits counted by the
// subtables' lookup functions (as OVS's generic does).
#include "classifier/classifier.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace ovscls {
namespace {

const char* const kUnit1Range = "map bits beyond struct flow's 84 words";

// Why a miniflow map with `len` bytes of map and blocks is invalid, or "".
// In: the map and the length its holder claims.  Pure.
std::string validate_map(const MiniflowMap& map, uint32_t len) {
    if (map.bits[1] >> kUnit1Bits) {
        return kUnit1Range;
    }
    const uint32_t n = std::popcount(map.bits[0]) + std::popcount(map.bits[1]);
    if (n > kMaxKeyValues) {
        return std::to_string(n) + " blocks, more than a netdev_flow_key holds (" +
               std::to_string(kMaxKeyValues) + ")";
    }
    if (len != sizeof(MiniflowMap) + n * sizeof(uint64_t)) {
        return "length " + std::to_string(len) + " does not match its " + std::to_string(n) +
               " blocks";
    }
    return "";
}

}  // namespace

// (classifier.hpp)  Checks the key's map only.  Pure.
std::string validate_key(const FlowKey& key) {
    // A packet key's len is not always computed (OVS leaves it 0 before
    // lookup), so only its map is checked.
    const uint32_t n = std::popcount(key.map.bits[0]) + std::popcount(key.map.bits[1]);
    return validate_map(key.map, sizeof(MiniflowMap) + n * sizeof(uint64_t));
}

// (classifier.hpp)  Checks the map, the length and that no block is zero.
// Pure.
std::string validate_mask(const FlowKey& mask) {
    std::string why = validate_map(mask.map, mask.len);
    if (!why.empty()) {
        return why;
    }
    const uint32_t n = std::popcount(mask.map.bits[0]) + std::popcount(mask.map.bits[1]);
    for (uint32_t i = 0; i < n; i++) {
        if (!mask.values[i]) {
            return "block " + std::to_string(i) + " is zero (a mask holds only matched words)";
        }
    }
    return "";
}

// Makes an empty classifier: an empty published pvector, subscribed to the
// registry's priority changes (on_priority_change() re-probes).
Classifier::Classifier(LookupRegistry& registry, FusedProvider* fused,
                       std::unique_ptr<TailIndex> tail)
    : registry_(registry),
      fused_provider_(fused),
      tail_(std::move(tail)),
      subtables_(reinterpret_cast<Pvector*>(ovsb_pvector_create())) {
    registry_.subscribe(this);
}

// Unsubscribes, then frees every rule and subtable after a grace period
// (OVS-RCU), releasing each subtable's lookup entry and the fused lookup.
// No lookup() may run any more (the caller's promise).
Classifier::~Classifier() {
    registry_.unsubscribe(this);
    std::lock_guard lock(writer_);
    unpublish_fused();
    for (const Rule* rule : rules_) {
        ovsb_subtable_remove(ovs(subtable_of(rule)), ovs(const_cast<Rule*>(rule)));
        ovsb_rule_free_deferred(ovs(const_cast<Rule*>(rule)));
    }
    rules_.clear();
    for (auto& [hash, state] : by_mask_) {
        state.impl->use_count.fetch_sub(1, std::memory_order_relaxed);
        registry_.release(ovs(state.subtable), nullptr);
        ovsb_subtable_destroy_deferred(ovs(state.subtable), nullptr, nullptr);
    }
    by_mask_.clear();
    ovsb_pvector_destroy(reinterpret_cast<pvector*>(subtables_));
}

// Asks the registry for the best lookup for `state`'s subtable with `hits`
// in the last interval and installs it: moves the use counts, stores the
// function (readers call the old or the new), lets the registry release
// what the old one kept.  Out: false, and nothing changed, when no entry
// accepts.  Under writer_.
bool Classifier::probe(SubtableState& state, uint32_t hits) {
    Subtable& s = *state.subtable;
    const LookupRegistry::Choice choice =
        registry_.best_for({s.u0_bits, s.u1_bits, ovs(state.subtable), hits});
    if (!choice.fn) {
        return false;
    }
    if (choice.impl != state.impl) {
        if (state.impl) {
            state.impl->use_count.fetch_sub(1, std::memory_order_relaxed);
        }
        choice.impl->use_count.fetch_add(1, std::memory_order_relaxed);
        state.impl = choice.impl;
    }
    // Readers load the pointer atomically: they call the old or the new one.
    s.lookup_func.store(choice.fn, std::memory_order_release);
    // Only now may the entries let go of what readers can no longer reach.
    registry_.release(ovs(state.subtable), choice.fn);
    return true;
}

// The subtable of `mask`, created when there is none: probed (a subtable no
// entry accepts is not created: null), told to the tail index, inserted
// last with priority 0 and published.  Under writer_.
Classifier::SubtableState* Classifier::find_or_create_subtable(const FlowKey& mask) {
    auto [first, last] = by_mask_.equal_range(mask.hash);
    for (auto it = first; it != last; ++it) {
        if (ovsb_key_equal(ovs(&it->second.subtable->mask), ovs(&mask))) {
            return &it->second;
        }
    }
    Subtable* subtable = view(ovsb_subtable_create(ovs(&mask)));
    SubtableState state{subtable, nullptr};
    if (!probe(state, 0)) {
        ovsb_subtable_destroy_deferred(ovs(subtable), nullptr, nullptr);
        return nullptr;
    }
    auto it = by_mask_.emplace(mask.hash, state);
    if (tail_) {
        tail_->subtable_added(ovs(subtable));
    }
    // As dpcls_create_subtable(): new subtables go last, with no hits yet.
    ovsb_pvector_insert(reinterpret_cast<pvector*>(subtables_), subtable, 0);
    publish_ranking();
    return &it->second;
}

// Unpublishes an empty subtable and frees it after a grace period; drops
// its state, its use count and the tail index's and the registry's hold
// on it.  Under writer_.
void Classifier::destroy_subtable(Subtable* subtable) {
    ovsb_pvector_remove(reinterpret_cast<pvector*>(subtables_), subtable);
    publish_ranking();
    auto [first, last] = by_mask_.equal_range(subtable->mask.hash);
    for (auto it = first; it != last; ++it) {
        if (it->second.subtable == subtable) {
            it->second.impl->use_count.fetch_sub(1, std::memory_order_relaxed);
            by_mask_.erase(it);
            break;
        }
    }
    if (tail_) {
        tail_->subtable_removed(ovs(subtable));
    }
    registry_.release(ovs(subtable), nullptr);
    ovsb_subtable_destroy_deferred(ovs(subtable), nullptr, nullptr);
}

// (classifier.hpp)  Takes writer_.  The rule is in the tail index before
// it is in its subtable's cmap, so that no reader finds it in one and not
// the other.
Status Classifier::insert(const FlowKey& mask, const uint64_t flow[], dpcls_rule** rule_out) {
    if (std::string why = validate_mask(mask); !why.empty()) {
        return Status::error("invalid mask: " + why);
    }
    std::lock_guard lock(writer_);
    Rule* rule = view(ovsb_rule_alloc());
    ovsb_key_init_masked(ovs(&rule->flow), flow, ovs(&mask));

    SubtableState* state = find_or_create_subtable(mask);
    if (!state) {
        ovsb_rule_free(ovs(rule));
        return Status::error("no lookup implementation accepts a subtable of fingerprint (" +
                             std::to_string(std::popcount(mask.map.bits[0])) + "," +
                             std::to_string(std::popcount(mask.map.bits[1])) +
                             "): the registry has none for it");
    }
    // A duplicate lives in an existing subtable, so none is left empty here.
    if (ovsb_subtable_find(ovs(state->subtable), ovs(&rule->flow))) {
        ovsb_rule_free(ovs(rule));
        return Status::error("duplicate rule: a rule with the same mask and key exists");
    }
    if (tail_) {
        tail_->rule_inserted(ovs(state->subtable), ovs(rule));  // before readers can find it
    }
    ovsb_subtable_insert(ovs(state->subtable), ovs(rule));
    rules_.insert(rule);
    if (rule_out) {
        *rule_out = ovs(rule);
    }
    return Status::ok();
}

// (classifier.hpp)  Takes writer_; a subtable left empty is destroyed.
Status Classifier::remove(dpcls_rule* rule_) {
    Rule* rule = view(rule_);
    std::lock_guard lock(writer_);
    if (!rule || !rules_.erase(rule)) {
        return Status::error("rule not found: it is not in this classifier");
    }
    Subtable* subtable = subtable_of(rule);
    const size_t left = ovsb_subtable_remove(ovs(subtable), rule_);
    if (tail_) {
        tail_->rule_removed(ovs(subtable), rule_);
    }
    if (left == 0) {
        destroy_subtable(subtable);
    }
    ovsb_rule_free_deferred(rule_);
    return Status::ok();
}

// (classifier.hpp)  The reader: no lock, loads only.  Order of work, as
// dpcls_lookup() with the series: drop invalid keys; the fused lookup, if
// bound to the published ranking, over its first subtables; the loop over
// the rest up to where the tail index starts (keys the fused lookup did
// not take start at the first subtable, those it missed join after the
// subtables it served); the tail index for what is left.  Writes rules[],
// *num_lookups and the subtables' hit counts (through their lookups).
bool Classifier::lookup(const netdev_flow_key* keys[], size_t cnt, dpcls_rule** rules,
                        int* num_lookups) const {
    uint32_t keys_map = cnt >= kMaxBurst ? ~0u : (1u << cnt) - 1;
    std::memset(rules, 0, cnt * sizeof *rules);

    // Invalid miniflows would make a lookup read past the key: skip them.
    for (uint32_t map = keys_map; map; map &= map - 1) {
        const uint32_t i = std::countr_zero(map);
        const FlowKey& key = *view(keys[i]);
        const uint32_t n = std::popcount(key.map.bits[0]) + std::popcount(key.map.bits[1]);
        if ((key.map.bits[1] >> kUnit1Bits) || n > kMaxKeyValues) [[unlikely]] {
            keys_map &= ~(1u << i);
            invalid_keys_.fetch_add(1, std::memory_order_relaxed);
        }
    }
    const bool all_valid = std::popcount(keys_map) == static_cast<int>(cnt);

    int lookups_match = 0;
    const PvectorImpl* impl = subtables_->impl.load(std::memory_order_acquire);
    // Acquire: pvector_insert() may append to the published vector in place,
    // storing the entry before it release-stores the new size.
    const size_t size = impl->size.load(std::memory_order_acquire);
    // The fused lookup serves the first `served` subtables for the keys it
    // takes; those it does not take (`keys_map` after it) go through the
    // loop from the first subtable, those it missed join at `served`.
    uint32_t missed = 0;
    size_t served = 0;
    const FusedBinding* fused = fused_.load(std::memory_order_acquire);
    if (fused && fused->ranking == impl && keys_map) {
        const uint32_t found = fused->lookup.fn(keys_map, keys, rules, &missed, &lookups_match);
        keys_map &= ~(found | missed);
        served = fused->lookup.subtables;
    }
    // The tail index, if it serves this ranking, takes the subtables from
    // tail_view.start on: the loop stops there.
    TailIndex::View tail_view = tail_ ? tail_->view(impl, size) : TailIndex::View{};
    tail_view.start = std::max(tail_view.start, served);
    if (tail_view.start >= size) {
        tail_view.binding = nullptr;
    }
    const size_t loop_end = tail_view.binding ? tail_view.start : size;
    size_t s = 0;
    if (!keys_map) {
        s = served;  // nothing for the subtables the fused lookup served
    }
    for (int position = static_cast<int>(s) + 1; s < loop_end; s++, position++) {
        if (s == served) {
            keys_map |= missed;
            missed = 0;
        }
        if (!keys_map) {
            if (!missed) {
                break;
            }
            s = served - 1;  // on to where the missed keys join
            position = static_cast<int>(served);
            continue;
        }
        auto* subtable = static_cast<dpcls_subtable*>(impl->vector[s].ptr);
        ovsb_lookup_func fn = view(subtable)->lookup_func.load(std::memory_order_acquire);
        const uint32_t found = fn(subtable, keys_map, keys, rules);
        lookups_match += std::popcount(found) * position;
        keys_map &= ~found;
    }
    keys_map |= missed;  // served subtables were all there were
    if (keys_map && tail_view.binding) {
        keys_map &= ~tail_->lookup(tail_view, keys_map, keys, rules, &lookups_match);
    }
    if (num_lookups) {
        *num_lookups = lookups_match;
    }
    return all_valid && !keys_map;
}

// (classifier.hpp)  Takes writer_, and tells the registry that a ranking
// is running (the JIT holds compiles back meanwhile).  Resets every
// subtable's hit count.
void Classifier::sort_subtables() {
    std::lock_guard lock(writer_);
    registry_.ranking(true);
    for (auto& [hash, state] : by_mask_) {
        std::atomic_ref<uint32_t> hits(state.subtable->hit_cnt);
        const uint32_t interval_hits = hits.load(std::memory_order_relaxed);
        ovsb_pvector_change_priority(reinterpret_cast<pvector*>(subtables_), state.subtable,
                                     static_cast<int>(interval_hits));
        hits.store(0, std::memory_order_relaxed);
        // Tiered lookups: a subtable that proved hot may earn JIT code.
        if (interval_hits) {
            probe(state, interval_hits);
        }
    }
    publish_ranking();
    registry_.ranking(false);
}

// Takes the fused lookup away from readers and frees its binding after a
// grace period; the provider may let its code go.  Under writer_.
void Classifier::unpublish_fused() {
    const FusedBinding* old = fused_.exchange(nullptr, std::memory_order_acq_rel);
    if (!old) {
        return;
    }
    fused_provider_->release(old->lookup);
    ovsb_rcu_postpone([](void* p) { delete static_cast<FusedBinding*>(p); },
                      const_cast<FusedBinding*>(old));
}

// The provider's offer for `impl`: its first subtables (as many as the
// provider takes) and their lookup functions.
std::vector<std::pair<const dpcls_subtable*, ovsb_lookup_func>> Classifier::offer(
    const PvectorImpl* impl) const {
    const size_t n =
        std::min(fused_provider_->max_subtables(), impl->size.load(std::memory_order_relaxed));
    std::vector<std::pair<const dpcls_subtable*, ovsb_lookup_func>> out(n);
    for (size_t i = 0; i < n; i++) {
        const auto* subtable = static_cast<const dpcls_subtable*>(impl->vector[i].ptr);
        out[i] = {subtable, view(subtable)->lookup_func.load(std::memory_order_relaxed)};
    }
    return out;
}

// Publishes the pending ranking.  The fused lookup serves one ranking: it
// moves to the new one when that offers the provider the same subtables
// with the same functions, else it is unpublished and asked for anew
// (`ask_again`: always, e.g. after a priority change).  A reader that finds
// the new ranking before the binding moves runs the loop alone; the old
// ranking is freed only after a grace period, which cannot end before this
// writer quiesces.
void Classifier::publish_ranking(bool ask_again) {
    const FusedBinding* old = fused_.load(std::memory_order_relaxed);
    ovsb_pvector_publish(reinterpret_cast<pvector*>(subtables_));
    const PvectorImpl* impl = subtables_->impl.load(std::memory_order_relaxed);
    if (tail_) {
        tail_->ranking_published(impl);
    }
    if (old && !ask_again && old->offered == offer(impl)) {
        if (old->ranking != impl) {
            auto* moved = new FusedBinding(*old);
            moved->ranking = impl;
            fused_.store(moved, std::memory_order_release);
            ovsb_rcu_postpone([](void* p) { delete static_cast<FusedBinding*>(p); },
                              const_cast<FusedBinding*>(old));
        }
        return;
    }
    unpublish_fused();
    if (fused_provider_) {
        probe_fused();
    }
}

// Asks the provider for a fused lookup over the published ranking's first
// subtables, publishes it if it gives one, and remembers the provider's
// ready_count() so that refresh_fused() asks again only when it moves.
// Under writer_.
void Classifier::probe_fused() {
    const uint64_t ready = fused_provider_->ready_count();
    const PvectorImpl* impl = subtables_->impl.load(std::memory_order_relaxed);
    auto offered = offer(impl);
    FusedLookup lookup;
    if (!offered.empty()) {
        std::vector<const dpcls_subtable*> top(offered.size());
        for (size_t i = 0; i < offered.size(); i++) {
            top[i] = offered[i].first;
        }
        lookup = fused_provider_->probe(top.data(), top.size());
    }
    if (lookup.fn) {
        fused_.store(new FusedBinding{lookup, impl, std::move(offered)}, std::memory_order_release);
    }
    fused_asked_at_.store(ready, std::memory_order_relaxed);
}

// (classifier.hpp)  Lock-free when nothing is new; else takes writer_.
bool Classifier::refresh_fused() {
    if (!fused_provider_) {
        return false;
    }
    const uint64_t ready = fused_provider_->ready_count();
    if (ready == fused_asked_at_.load(std::memory_order_relaxed)) {
        return false;
    }
    std::lock_guard lock(writer_);
    if (fused_.load(std::memory_order_relaxed)) {
        fused_asked_at_.store(ready, std::memory_order_relaxed);
        return false;
    }
    probe_fused();
    return fused_.load(std::memory_order_relaxed) != nullptr;
}

// (classifier.hpp)  Takes writer_.
uint32_t Classifier::fused_subtables() const {
    std::lock_guard lock(writer_);
    const FusedBinding* b = fused_.load(std::memory_order_relaxed);
    return b ? b->lookup.subtables : 0;
}

// (classifier.hpp)  Takes writer_; asks for the fused lookup anew too.
uint32_t Classifier::reprobe() {
    std::lock_guard lock(writer_);
    uint32_t changed = 0;
    for (auto& [hash, state] : by_mask_) {
        const ovsb_lookup_func old = state.subtable->lookup_func.load(std::memory_order_relaxed);
        probe(state,
              std::atomic_ref<uint32_t>(state.subtable->hit_cnt).load(std::memory_order_relaxed));
        changed += old != state.subtable->lookup_func.load(std::memory_order_relaxed);
    }
    publish_ranking(true);  // the fused lookup may have been switched off or on
    return changed;
}

// (classifier.hpp)  Takes writer_; reads the published ranking.
std::vector<Classifier::SubtableInfo> Classifier::subtables() const {
    std::lock_guard lock(writer_);
    std::vector<SubtableInfo> out;
    // Each subtable's entry is in its state (OVS 4.0's subtable has no
    // member for it): found by the mask's hash, as a writer does.
    auto impl_of = [this](const Subtable* subtable) -> const LookupImpl* {
        auto [first, last] = by_mask_.equal_range(subtable->mask.hash);
        for (auto it = first; it != last; ++it) {
            if (it->second.subtable == subtable) {
                return it->second.impl;
            }
        }
        return nullptr;
    };
    const PvectorImpl* impl = subtables_->impl.load(std::memory_order_acquire);
    const size_t size = impl->size.load(std::memory_order_relaxed);
    for (size_t s = 0; s < size; s++) {
        auto* subtable = static_cast<Subtable*>(impl->vector[s].ptr);
        const LookupImpl* info = impl_of(subtable);
        out.push_back({subtable->u0_bits, subtable->u1_bits, ovsb_subtable_count(ovs(subtable)),
                       std::atomic_ref<uint32_t>(subtable->hit_cnt).load(std::memory_order_relaxed),
                       info ? info->name : "", ovs(subtable)});
    }
    return out;
}

// (classifier.hpp)  Takes writer_.
size_t Classifier::rule_count() const {
    std::lock_guard lock(writer_);
    return rules_.size();
}

}  // namespace ovscls
