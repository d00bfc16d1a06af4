#include "tail/tuple_pruning.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

#include "classifier/ovs_services.h"

namespace ovscls::tail {
namespace {

constexpr unsigned kLanesPerWord = 4;

uint16_t prefix_mask(unsigned depth) {
    return depth ? static_cast<uint16_t>(0xffffu << (kLaneBits - depth)) : 0;
}
bool is_prefix(uint16_t mask) { return mask == prefix_mask(std::countl_one(mask)); }

// The key's word `flow_word` of struct flow, 0 when its map lacks it (as
// OVS's lookups read a key against a mask it lacks words of).
uint64_t key_word(const FlowKey& key, unsigned flow_word) {
    const unsigned unit = flow_word / 64;
    const unsigned bit = flow_word % 64;
    if (!((key.map.bits[unit] >> bit) & 1)) {
        return 0;
    }
    const uint64_t below = (uint64_t{1} << bit) - 1;
    const unsigned idx =
        unit ? std::popcount(key.map.bits[0]) + std::popcount(key.map.bits[1] & below)
             : std::popcount(key.map.bits[0] & below);
    return key.values[idx];
}

// True when every word of `inner` is one of `outer`'s.
bool covers(const MiniflowMap& outer, const MiniflowMap& inner) {
    return (inner.bits[0] & ~outer.bits[0]) == 0 && (inner.bits[1] & ~outer.bits[1]) == 0;
}

// Per block of `map`, its word of struct flow.
std::vector<uint8_t> flow_words_of(const MiniflowMap& map) {
    std::vector<uint8_t> out;
    for (unsigned u = 0, flow_word = 0; u < 2; u++, flow_word = 64) {
        for (uint64_t m = map.bits[u]; m; m &= m - 1) {
            out.push_back(static_cast<uint8_t>(flow_word + std::countr_zero(m)));
        }
    }
    return out;
}

struct Candidate {
    uint32_t position;
    const dpcls_subtable* subtable;
};

template <class T>
void postpone_delete(const T* p) {
    ovsb_rcu_postpone([](void* q) { delete static_cast<T*>(q); }, const_cast<T*>(p));
}
void postpone_free(const void* p) {
    ovsb_rcu_postpone([](void* q) { std::free(q); }, const_cast<void*>(p));
}

}  // namespace

size_t TuplePruningIndex::bytes(const Family* building) const {
    size_t out = binding_bytes_;
    bool counted = false;
    for (const auto& [map, state] : families_by_map_) {
        if (state.published) {
            out += state.published->bytes();
            counted = counted || state.published == building;
        }
    }
    return out + (building && !counted ? building->bytes() : 0);
}

uint16_t TuplePruningIndex::lane_of(uint64_t word, unsigned shift) {
    return __builtin_bswap16(static_cast<uint16_t>(word >> shift));
}

uint16_t TuplePruningIndex::Family::lane_value(const FlowKey& flow, const Lane& lane) const {
    return lane_of(key_word(flow, flow_words[lane.block]), lane.shift);
}

void TuplePruningIndex::Family::run_values(const FlowKey& flow, const Run& run,
                                           uint16_t values[]) const {
    for (unsigned k = 0; k < run.n; k++) {
        values[k] = lane_value(flow, lanes[run.first + k]);
    }
}

size_t TuplePruningIndex::Family::bytes() const {
    size_t out = sizeof(Family) + (tuples ? tuples->bytes() : 0);
    for (const auto& run : run_tables) {
        out += run->bytes();
    }
    for (const auto& set : sets) {
        if (set) {
            out += sizeof(LaneSets) + set->bytes();
        }
    }
    return out;
}

TuplePruningIndex::TuplePruningIndex(TuplePruningConfig config) : config_(config) {}

TuplePruningIndex::~TuplePruningIndex() {
    for (auto& [map, state] : families_by_map_) {
        delete state.published;
    }
    std::free(const_cast<Families*>(families_.load(std::memory_order_relaxed)));
    std::free(const_cast<Unindexed*>(unindexed_.load(std::memory_order_relaxed)));
    delete binding_.load(std::memory_order_relaxed);
}

// ---- writer side ----

// A lane must be rebuilt into the family when it varies now and did not,
// or holds a non-prefix mask now where it was pruned on.
bool TuplePruningIndex::needs_rebuild(const FamilyState& state, const Family& family) const {
    if (!family.indexed) {
        return false;  // stays unindexed until it is gone
    }
    std::vector<int> varying(state.lane_masks.size(), -1);
    for (size_t i = 0; i < family.lanes.size(); i++) {
        varying[family.lanes[i].block * kLanesPerWord + family.lanes[i].shift / 16] =
            static_cast<int>(i);
    }
    for (size_t l = 0; l < state.lane_masks.size(); l++) {
        const auto& masks = state.lane_masks[l];
        if (varying[l] < 0) {
            if (masks.size() > 1) {
                return true;
            }
            continue;
        }
        const Lane& lane = family.lanes[varying[l]];
        for (const auto& [mask, count] : masks) {
            const bool known =
                std::find(lane.masks.begin(), lane.masks.end(), mask) != lane.masks.end();
            if (lane.prefix ? !is_prefix(mask) : !known && lane.masks.size() >= kMaxLaneIds) {
                return true;  // not pruned on any more / not indexed any more
            }
        }
    }
    return false;
}

bool TuplePruningIndex::run_lengths(const Family& family, const FlowKey& mask,
                                    unsigned lengths[]) const {
    for (size_t r = 0; r < family.runs.size(); r++) {
        const Run& run = family.runs[r];
        unsigned length = 0;
        bool full = true;  // the lanes before are masked whole
        for (unsigned k = run.first; k < run.first + run.n; k++) {
            const Lane& lane = family.lanes[k];
            const uint16_t m = family.lane_value(mask, lane);
            const unsigned depth = std::countl_one(m);
            if (!is_prefix(m) || (depth && !full)) {
                return false;
            }
            full = depth == kLaneBits;
            length += depth;
        }
        lengths[r] = length;
    }
    return true;
}

bool TuplePruningIndex::tuple_of(const Family& family, const Member& member,
                                 std::vector<uint8_t>& ids) const {
    const FlowKey& mask = ovscls::view(member.subtable)->mask;
    unsigned lengths[kMaxLevels];
    ids.clear();
    if (!run_lengths(family, mask, lengths)) {
        return false;
    }
    for (const Level& level : family.levels) {
        if (level.run) {
            const unsigned l = std::clamp<unsigned>(lengths[level.index], level.lo, level.hi);
            ids.push_back(static_cast<uint8_t>(l - level.lo));
            continue;
        }
        const Lane& lane = family.lanes[level.index];
        const uint16_t m = family.lane_value(mask, lane);
        auto it = std::find(lane.masks.begin(), lane.masks.end(), m);
        if (it == lane.masks.end()) {
            return false;
        }
        ids.push_back(static_cast<uint8_t>(it - lane.masks.begin()));
    }
    return true;
}

// Marks (or unmarks) the rule in the family's runs and lane sets.  The
// mask is its subtable's: a rule is marked before it is filed (and its
// mask pointer set).
void TuplePruningIndex::add_rule_marks(Family& family, const FlowKey& mask, const dpcls_rule* rule_,
                                       bool add) {
    const Rule* rule = reinterpret_cast<const Rule*>(rule_);
    unsigned lengths[kMaxLevels];
    if (!run_lengths(family, mask, lengths)) {
        return;  // not indexed (tuple_of() said so first)
    }
    for (size_t r = 0; r < family.runs.size(); r++) {
        uint16_t values[kMaxRunLanes];
        family.run_values(rule->flow, family.runs[r], values);
        if (add) {
            family.run_tables[r]->insert(values, lengths[r]);
        } else {
            family.run_tables[r]->remove(values, lengths[r]);
        }
    }
    for (size_t i = 0; i < family.lanes.size(); i++) {
        const Lane& lane = family.lanes[i];
        if (lane.prefix) {
            continue;
        }
        // A word the member's map lacks is a zero mask (any value) there.
        const uint16_t m = family.lane_value(mask, lane);
        const uint16_t value = family.lane_value(rule->flow, lane);
        const auto id = static_cast<unsigned>(std::find(lane.masks.begin(), lane.masks.end(), m) -
                                              lane.masks.begin());
        if (add) {
            family.sets[i]->insert(id, value);
        } else {
            family.sets[i]->remove(id, value);
        }
    }
}

// Files the member's tuple and its rules' marks; the member stays
// unindexed when the index is full or its tuple does not fit.
void TuplePruningIndex::index_member(Family& family, Member& member) {
    member.indexed = false;
    if (!family.indexed || bytes(&family) >= config_.max_bytes ||
        !tuple_of(family, member, member.ids)) {
        return;
    }
    const FlowKey& mask = ovscls::view(member.subtable)->mask;
    // Marks first: once the tuple is reachable, its rules' lanes are there.
    for (const dpcls_rule* rule : member.rules) {
        add_rule_marks(family, mask, rule, true);
    }
    if (!family.tuples->insert(member.ids.data(), member.slot, member.subtable)) {
        for (const dpcls_rule* rule : member.rules) {
            add_rule_marks(family, mask, rule, false);
        }
        return;  // two subtables of one mask: cannot be
    }
    member.indexed = true;
}

void TuplePruningIndex::unindex_member(Family& family, Member& member) {
    if (!member.indexed) {
        return;
    }
    family.tuples->remove(member.ids.data());
    for (const dpcls_rule* rule : member.rules) {
        add_rule_marks(family, ovscls::view(member.subtable)->mask, rule, false);
    }
    member.indexed = false;
}

// Runs: the longest sequences of prefix lanes, adjacent in struct flow (a
// word boundary too, where the map's words are adjacent), that every
// member masks as one prefix (a lane holds bits only under a full lane
// before it), at most kMaxRunLanes; a lane alone is a run of one.  The
// tuple levels follow the lanes' order: a run's lengths 0..16n in levels of
// at most 48 (ids 0..48: IPv6's 128 bits take three), a non-prefix lane's
// mask ids in one.  Example: nw_src /i and nw_dst /j of a flood, both
// IPv4 addresses' lanes adjacent, make two runs (a member with nw_src /1
// and nw_dst /5 breaks nw_src's second lane from nw_dst's first), each one
// level of ids 0..32.
void TuplePruningIndex::find_runs(const FamilyState& state, Family& family) const {
    const size_t n = family.lanes.size();
    std::vector<bool> chains(n, false);  // lanes[a] and lanes[a + 1] may share a run
    for (size_t a = 0; a + 1 < n; a++) {
        const Lane& x = family.lanes[a];
        const Lane& y = family.lanes[a + 1];
        const bool adjacent = (x.block == y.block && x.shift + 16 == y.shift) ||
                              (x.block + 1 == y.block && x.shift == 48 && y.shift == 0 &&
                               family.flow_words[x.block] + 1 == family.flow_words[y.block]);
        chains[a] = x.prefix && y.prefix && adjacent;
    }
    for (uint32_t slot : state.members) {
        const FlowKey& mask = ovscls::view(members_[slot].subtable)->mask;
        for (size_t a = 0; a + 1 < n; a++) {
            if (!chains[a]) {
                continue;
            }
            const Lane& x = family.lanes[a];
            const Lane& y = family.lanes[a + 1];
            chains[a] = family.lane_value(mask, y) == 0 || family.lane_value(mask, x) == 0xffff;
        }
    }
    for (size_t a = 0; a < n;) {
        const auto level = static_cast<uint8_t>(family.levels.size());
        if (!family.lanes[a].prefix) {
            family.levels.push_back({false, static_cast<uint8_t>(a), 0, 0});
            a++;
            continue;
        }
        size_t b = a + 1;
        while (b < n && chains[b - 1] && b - a < kMaxRunLanes) {
            b++;
        }
        const auto run = static_cast<uint8_t>(family.runs.size());
        const unsigned bits = static_cast<unsigned>(b - a) * kLaneBits;
        for (unsigned lo = 0; lo < bits; lo += 48) {
            family.levels.push_back({true, run, static_cast<uint8_t>(lo),
                                     static_cast<uint8_t>(std::min(lo + 48, bits))});
        }
        family.runs.push_back({static_cast<uint8_t>(a), static_cast<uint8_t>(b - a), level,
                               static_cast<uint8_t>(family.levels.size() - level)});
        a = b;
    }
}

// A new Family for the state's members, replacing the published one.
void TuplePruningIndex::rebuild(FamilyState& state) {
    auto family = std::make_unique<Family>();
    family->map = state.map;
    family->flow_words = state.flow_words;
    for (size_t l = 0; l < state.lane_masks.size(); l++) {
        const auto& masks = state.lane_masks[l];
        if (masks.size() < 2) {
            continue;
        }
        Lane lane{static_cast<uint8_t>(l / kLanesPerWord),
                  static_cast<uint8_t>(l % kLanesPerWord * 16),
                  true,
                  {}};
        for (const auto& [mask, count] : masks) {
            lane.prefix = lane.prefix && is_prefix(mask);
            lane.masks.push_back(mask);
        }
        if (lane.prefix) {
            lane.masks.clear();
        } else if (lane.masks.size() > kMaxLaneIds) {
            family->indexed = false;
        }
        family->lanes.push_back(std::move(lane));
    }
    find_runs(state, *family);
    if (family->levels.size() > kMaxLevels) {
        family->indexed = false;
    }
    if (family->indexed) {
        for (const Lane& lane : family->lanes) {
            family->sets.push_back(lane.prefix ? nullptr : std::make_unique<LaneSets>());
            for (size_t id = 0; id < lane.masks.size(); id++) {
                family->sets.back()->add_mask(static_cast<unsigned>(id), lane.masks[id]);
            }
        }
        for (const Run& run : family->runs) {
            family->run_tables.push_back(std::make_unique<RunTable>(run.n));
        }
        family->tuples = std::make_unique<TupleTrie>(static_cast<unsigned>(family->levels.size()));
    } else {
        family->lanes.clear();
        family->runs.clear();
        family->levels.clear();
    }
    for (uint32_t slot : state.members) {
        index_member(*family, members_[slot]);
    }
    if (state.published) {
        retire_family(state.published);
    }
    state.published = family.release();
    rebuilds_++;
}

void TuplePruningIndex::retire_family(Family* family) { postpone_delete(family); }

void TuplePruningIndex::publish_families() {
    const size_t n = families_by_map_.size();
    auto* next = static_cast<Families*>(std::malloc(sizeof(Families) + n * sizeof(const Family*)));
    if (!next) {
        throw std::bad_alloc();
    }
    next->n = 0;
    for (const auto& [map, state] : families_by_map_) {
        if (state.published && state.published->indexed) {
            next->family[next->n++] = state.published;
        }
    }
    const Families* old = families_.exchange(next, std::memory_order_acq_rel);
    if (old) {
        postpone_free(old);
    }
}

void TuplePruningIndex::publish_unindexed() {
    std::vector<uint32_t> slots;
    for (const Member& m : members_) {
        if (m.subtable && !m.indexed) {
            slots.push_back(m.slot);
        }
    }
    auto* next =
        static_cast<Unindexed*>(std::malloc(sizeof(Unindexed) + slots.size() * sizeof(uint32_t)));
    if (!next) {
        throw std::bad_alloc();
    }
    next->n = slots.size();
    std::copy(slots.begin(), slots.end(), next->slot);
    const Unindexed* old = unindexed_.exchange(next, std::memory_order_acq_rel);
    if (old) {
        postpone_free(old);
    }
}

// Counts of the member's lane masks over the state's blocks (a word its own
// map lacks: a zero mask).
void TuplePruningIndex::count_lanes(FamilyState& state, const FlowKey& mask, int delta) {
    for (size_t l = 0; l < state.lane_masks.size(); l++) {
        const uint16_t m =
            lane_of(key_word(mask, state.flow_words[l / kLanesPerWord]), l % kLanesPerWord * 16);
        auto& counts = state.lane_masks[l];
        if (delta > 0) {
            counts[m]++;
        } else if (auto c = counts.find(m); c != counts.end() && --c->second == 0) {
            counts.erase(c);
        }
    }
}

// Families are maps, but a word a mask leaves out of its map is a zero
// mask there: a subtable whose map another family's covers joins that
// family (the one of fewest words), its lanes in the missing words of
// depth 0.  Otherwise its map makes a family, and the families whose maps
// it covers move into it (one rebuild).  So an attack whose masks leave
// different words out (an IPv6 address's later words under a short prefix,
// ports in some masks and not others) is one family, walked once a key,
// not one per map.
TuplePruningIndex::FamilyState& TuplePruningIndex::family_for(const MiniflowMap& map) {
    FamilyState* best = nullptr;
    for (auto& [m, state] : families_by_map_) {
        if (covers(m, map) &&
            (!best || std::popcount(m.bits[0]) + std::popcount(m.bits[1]) <
                          std::popcount(best->map.bits[0]) + std::popcount(best->map.bits[1]))) {
            best = &state;
        }
    }
    if (best) {
        return *best;
    }
    FamilyState merged;
    merged.map = map;
    merged.flow_words = flow_words_of(map);
    merged.lane_masks.resize(merged.flow_words.size() * kLanesPerWord);
    for (auto it = families_by_map_.begin(); it != families_by_map_.end();) {
        if (!covers(map, it->first)) {
            ++it;
            continue;
        }
        FamilyState& old = it->second;
        for (uint32_t slot : old.members) {
            Member& member = members_[slot];
            member.family = map;
            member.indexed = false;  // the old family goes whole; the rebuild files it again
            count_lanes(merged, ovscls::view(member.subtable)->mask, +1);
            merged.members.push_back(slot);
        }
        if (old.published) {
            retire_family(old.published);
        }
        it = families_by_map_.erase(it);
    }
    return families_by_map_.emplace(map, std::move(merged)).first->second;
}

void TuplePruningIndex::subtable_added(const dpcls_subtable* subtable) {
    uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
    } else {
        slot = static_cast<uint32_t>(members_.size());
        members_.push_back({});
    }
    Member& member = members_[slot];
    member = Member{subtable, slot, false, {}, {}, {}};
    slot_of_.set(subtable, slot);
    subtable_of_slot_.resize(members_.size());
    subtable_of_slot_[slot] = subtable;

    const FlowKey& mask = ovscls::view(subtable)->mask;
    FamilyState& state = family_for(mask.map);
    member.family = state.map;
    count_lanes(state, mask, +1);
    state.members.push_back(slot);
    unsigned lengths[kMaxLevels];
    if (!state.published || needs_rebuild(state, *state.published) ||
        !run_lengths(*state.published, mask, lengths)) {
        rebuild(state);
        // Subtables the new family does not index are probed one by one
        // before it replaces the old one.
        publish_unindexed();
        publish_families();
        return;
    } else {
        Family& family = *state.published;
        for (size_t i = 0; i < family.lanes.size(); i++) {  // a new non-prefix id
            Lane& lane = family.lanes[i];
            const uint16_t m = family.lane_value(mask, lane);
            if (!lane.prefix &&
                std::find(lane.masks.begin(), lane.masks.end(), m) == lane.masks.end()) {
                // Readers never read `masks` (the writer alone maps masks to
                // ids); they read the sets' own copy.
                family.sets[i]->add_mask(static_cast<unsigned>(lane.masks.size()), m);
                lane.masks.push_back(m);
            }
        }
        index_member(family, member);
    }
    if (!member.indexed) {
        publish_unindexed();
    }
}

void TuplePruningIndex::subtable_removed(const dpcls_subtable* subtable) {
    const uint32_t slot = slot_of_.find(subtable);
    if (slot == SlotTable::kNone) {
        return;
    }
    slot_of_.erase(subtable);
    Member& member = members_[slot];
    const FlowKey& mask = ovscls::view(subtable)->mask;
    auto it = families_by_map_.find(member.family);
    FamilyState& state = it->second;
    const bool was_indexed = member.indexed;
    unindex_member(*state.published, member);
    count_lanes(state, mask, -1);
    std::erase(state.members, slot);
    member = Member{};
    subtable_of_slot_[slot] = nullptr;
    free_slots_.push_back(slot);
    if (state.members.empty()) {
        retire_family(state.published);
        families_by_map_.erase(it);
        publish_families();
    }
    if (!was_indexed) {
        publish_unindexed();
    }
}

void TuplePruningIndex::rule_inserted(const dpcls_subtable* subtable, const dpcls_rule* rule) {
    const uint32_t slot = slot_of_.find(subtable);
    if (slot == SlotTable::kNone) {
        return;
    }
    Member& member = members_[slot];
    member.rules.push_back(rule);
    if (member.indexed) {
        const FlowKey& mask = ovscls::view(subtable)->mask;
        add_rule_marks(*families_by_map_.at(member.family).published, mask, rule, true);
    }
}

void TuplePruningIndex::rule_removed(const dpcls_subtable* subtable, const dpcls_rule* rule) {
    const uint32_t slot = slot_of_.find(subtable);
    if (slot == SlotTable::kNone) {
        return;
    }
    Member& member = members_[slot];
    auto it = std::find(member.rules.begin(), member.rules.end(), rule);
    if (it == member.rules.end()) {
        return;
    }
    *it = member.rules.back();
    member.rules.pop_back();
    if (member.indexed) {
        const FlowKey& mask = ovscls::view(subtable)->mask;
        add_rule_marks(*families_by_map_.at(member.family).published, mask, rule, false);
    }
}

// The head: the first positions of `ranking`, at most config_.head, that
// the loop (and the fused and JIT lookups) keeps; the index serves the
// rest.  A position earns its place by its hits in the last ranking
// interval (its priority): a subtable probed one by one costs every key
// that reaches it a probe, and saves the index's cost for the keys it
// finds.  It stays while it finds at least head_share of the keys that
// reach it (of the hits at it and after it).  Traffic spread evenly over
// many subtables fails that (20 subtables of 4.5% each: none stayed, and
// every legitimate key asked the index instead of the fused lookups), so
// the head also takes the first ranks with at least head_share of the
// busiest rank's hits when together they hold most (half or more) of the
// hits.  The attacker's subtables cannot hold the head with a trickle
// each: to keep one there, its frames must be head_share of all the
// traffic that gets past the head before it, or with the ranks before it
// most of the traffic.  Example (head_share 1/16): legitimate traffic in
// two subtables of 45% each and an attack of 10% over 1000 masks:
// positions 0 (45 of 100) and 1 (45 of 55) stay; position 2 (0.01 of 10)
// does not: head 2, where a fixed head of 16 made every attack key probe
// 14 attack subtables one by one before the index.  Legitimate traffic in
// 20 subtables of 4.5%: the first 16 (72%).  A flood alone over 100 masks
// of 1% each: none (16 hold 16%).  No hits at all (no ranking yet):
// `head`.
size_t TuplePruningIndex::head_of(const PvectorImpl* ranking, size_t size) const {
    const size_t most = std::min(config_.head, size);
    if (config_.head_share <= 0) {
        return most;
    }
    uint64_t total = 0, top = 0;  // hits of all positions; the most at one
    for (size_t p = 0; p < size; p++) {
        const auto hits = static_cast<uint64_t>(std::max(ranking->vector[p].priority, 0));
        total += hits;
        top = std::max(top, hits);
    }
    if (total == 0) {
        return most;
    }
    const double share = config_.head_share;
    auto hits_at = [&](size_t p) {
        return static_cast<uint64_t>(std::max(ranking->vector[p].priority, 0));
    };
    size_t earns = 0;  // ranks that earn their probe against what follows
    for (uint64_t rest = total; earns < most; earns++) {
        const uint64_t hits = hits_at(earns);
        if (hits == 0 || static_cast<double>(hits) < share * static_cast<double>(rest)) {
            break;
        }
        rest -= hits;
    }
    size_t busy = 0;  // ranks near the busiest one's hits
    uint64_t held = 0;
    for (; busy < most && hits_at(busy) > 0 &&
           static_cast<double>(hits_at(busy)) >= share * static_cast<double>(top);
         busy++) {
        held += hits_at(busy);
    }
    return held * 2 >= total ? std::max(earns, busy) : earns;
}

void TuplePruningIndex::ranking_published(const PvectorImpl* ranking) {
    auto* next = new Binding;
    next->ranking = ranking;
    next->size = ranking->size.load(std::memory_order_relaxed);
    // Served once the tail is long enough, and only while the subtables it
    // could not index fit in a key's candidates: past that every key would
    // take the loop over the tail after the index's own work, slower than
    // the loop alone (perf/tse's arbitrary masks), so the loop does all.
    const Unindexed* unindexed = unindexed_.load(std::memory_order_relaxed);
    stepped_aside_ = unindexed && unindexed->n > config_.max_candidates;
    next->start = next->size >= config_.head + config_.min_tail && !stepped_aside_
                      ? head_of(ranking, next->size)
                      : next->size;
    next->by_slot.assign(members_.size(), {UINT32_MAX, nullptr});
    // The last ranking's slot at each position answers most positions of
    // a publish that adds or removes a subtable (a new one goes last, a
    // removal shifts the ones after it by one) without the slot table; a
    // sort in a flood moves most, each then one SlotTable lookup.
    std::vector<uint32_t> slots(next->size, UINT32_MAX);
    auto is = [&](uint32_t slot, const dpcls_subtable* subtable) {
        return slot < subtable_of_slot_.size() && subtable_of_slot_[slot] == subtable;
    };
    for (size_t p = 0; p < next->size; p++) {
        const auto* subtable = static_cast<const dpcls_subtable*>(ranking->vector[p].ptr);
        uint32_t slot = UINT32_MAX;
        if (p < slot_at_.size() && is(slot_at_[p], subtable)) {
            slot = slot_at_[p];
        } else if (p + 1 < slot_at_.size() && is(slot_at_[p + 1], subtable)) {
            slot = slot_at_[p + 1];
        } else {
            slot = slot_of_.find(subtable);  // kNone: not a member
        }
        if (slot != UINT32_MAX) {
            next->by_slot[slot] = {static_cast<uint32_t>(p), subtable};
            slots[p] = slot;
        }
    }
    slot_at_ = std::move(slots);
    binding_bytes_ = sizeof(Binding) + next->by_slot.size() * sizeof(Binding::Entry);
    // summary()'s writer side: counts kept as they change, bytes over the
    // (few) families.
    sum_subtables_.store(members_.size() - free_slots_.size(), std::memory_order_relaxed);
    sum_unindexed_.store(unindexed ? unindexed->n : 0, std::memory_order_relaxed);
    sum_families_.store(families_by_map_.size(), std::memory_order_relaxed);
    sum_bytes_.store(bytes(nullptr), std::memory_order_relaxed);
    sum_size_.store(next->size, std::memory_order_relaxed);
    sum_start_.store(next->start, std::memory_order_relaxed);
    sum_stepped_aside_.store(stepped_aside_, std::memory_order_relaxed);
    const Binding* old = binding_.exchange(next, std::memory_order_acq_rel);
    if (old) {
        postpone_delete(old);
    }
}

TuplePruningSummary TuplePruningIndex::summary() const {
    TuplePruningSummary s;
    s.subtables = sum_subtables_.load(std::memory_order_relaxed);
    s.unindexed = sum_unindexed_.load(std::memory_order_relaxed);
    s.families = sum_families_.load(std::memory_order_relaxed);
    s.bytes = sum_bytes_.load(std::memory_order_relaxed);
    s.size = sum_size_.load(std::memory_order_relaxed);
    s.start = sum_start_.load(std::memory_order_relaxed);
    s.stepped_aside = sum_stepped_aside_.load(std::memory_order_relaxed);
    s.keys = keys_.load(std::memory_order_relaxed);
    s.candidates = candidates_.load(std::memory_order_relaxed);
    s.probes = probes_.load(std::memory_order_relaxed);
    s.loops = loops_.load(std::memory_order_relaxed);
    s.max_candidates = max_candidates_seen_.load(std::memory_order_relaxed);
    return s;
}

TuplePruningStats TuplePruningIndex::stats() const {
    TuplePruningStats out;
    out.bytes = bytes(nullptr);
    for (const auto& [map, state] : families_by_map_) {
        out.families++;
        if (state.published) {
            for (const auto& run : state.published->run_tables) {
                out.lane_tables += run->low_tables();
            }
        }
    }
    for (const Member& m : members_) {
        if (!m.subtable) {
            continue;
        }
        if (m.indexed) {
            out.subtables++;
            out.rules += m.rules.size();
        } else {
            out.unindexed++;
        }
    }
    out.rebuilds = rebuilds_;
    out.stepped_aside = stepped_aside_;
    out.keys = keys_.load(std::memory_order_relaxed);
    out.probes = probes_.load(std::memory_order_relaxed);
    out.loops = loops_.load(std::memory_order_relaxed);
    return out;
}

// ---- reader side ----

TailIndex::View TuplePruningIndex::view(const PvectorImpl* ranking, size_t size) const {
    const Binding* b = binding_.load(std::memory_order_acquire);
    if (!b || b->ranking != ranking || b->size != size || b->start >= size || failed()) {
        return {};
    }
    return {b, b->start};
}

// Two phases.  Per key, its candidates in rank order (a span of one pool);
// then rounds: each key still unmatched probes its next candidate, and
// the keys whose next candidate is the same subtable share one call of its
// lookup (as the loop's calls take the burst).  Keys with too many
// candidates go through the tail's subtables together, as the loop would.
uint32_t TuplePruningIndex::lookup(const View& v, uint32_t keys_map, const netdev_flow_key* keys[],
                                   dpcls_rule** rules, int* lookups) const {
    constexpr size_t kPool = 512;
    const auto* b = static_cast<const Binding*>(v.binding);
    const Families* families = families_.load(std::memory_order_acquire);
    const Unindexed* unindexed = unindexed_.load(std::memory_order_acquire);
    Candidate pool[kPool];
    size_t used = 0;
    uint16_t first[kMaxBurst], count[kMaxBurst] = {}, next[kMaxBurst] = {};
    uint32_t pending = 0, to_loop = 0, found = 0;
    uint64_t probes = 0;
    size_t most_candidates = 0;
    // A candidate's position, if it belongs to this ranking's tail.
    auto position_of = [&](uint32_t slot, const dpcls_subtable* subtable) -> uint32_t {
        if (slot >= b->by_slot.size() || b->by_slot[slot].subtable != subtable) {
            return UINT32_MAX;  // not in the ranking this reader reads
        }
        const uint32_t p = b->by_slot[slot].position;
        return p >= v.start ? p : UINT32_MAX;
    };
    for (uint32_t map = keys_map; map; map &= map - 1) {
        const uint32_t i = std::countr_zero(map);
        const FlowKey& key = *ovscls::view(keys[i]);
        const size_t max = std::min(config_.max_candidates, kPool - used);
        size_t n = 0;
        bool overflow = false;
        auto add = [&](uint32_t slot, const dpcls_subtable* subtable) {
            const uint32_t p = position_of(slot, subtable);
            if (p == UINT32_MAX) {
                return true;
            }
            if (n == max) {
                overflow = true;
                return false;
            }
            pool[used + n++] = {p, subtable};
            return true;
        };
        for (size_t f = 0; families && f < families->n && !overflow; f++) {
            const Family& family = *families->family[f];
            uint64_t allowed[kMaxLevels];
            bool none = false;
            for (size_t r = 0; r < family.runs.size() && !none; r++) {
                const Run& run = family.runs[r];
                uint16_t values[kMaxRunLanes];
                family.run_values(key, run, values);
                const RunLengths lengths = family.run_tables[r]->lengths(values);
                // No rule of the family agrees with the key here: none is
                // a candidate.
                none = lengths.empty();
                for (unsigned l = run.level; l < run.level + run.levels; l++) {
                    allowed[l] = lengths.clamped(family.levels[l].lo, family.levels[l].hi);
                }
            }
            for (size_t l = 0; l < family.levels.size() && !none; l++) {
                const Level& level = family.levels[l];
                if (!level.run) {
                    allowed[l] = family.sets[level.index]->allowed(
                        family.lane_value(key, family.lanes[level.index]));
                    none = !allowed[l];
                }
            }
            if (!none) {
                family.tuples->collect(
                    allowed, [&](const TupleLeaf& leaf) { return add(leaf.slot, leaf.subtable); });
            }
        }
        for (size_t u = 0; unindexed && u < unindexed->n && !overflow; u++) {
            const uint32_t slot = unindexed->slot[u];
            if (slot < b->by_slot.size()) {
                add(slot, b->by_slot[slot].subtable);
            }
        }
        if (overflow) {
            to_loop |= 1u << i;
            continue;
        }
        std::sort(pool + used, pool + used + n,
                  [](const Candidate& x, const Candidate& y) { return x.position < y.position; });
        first[i] = static_cast<uint16_t>(used);
        count[i] = static_cast<uint16_t>(n);
        most_candidates = std::max(most_candidates, n);
        used += n;
        pending |= n ? 1u << i : 0;
    }
    while (pending) {
        struct Group {
            const Candidate* c;
            uint32_t keys;
        } groups[kMaxBurst];
        size_t n_groups = 0;
        for (uint32_t map = pending; map; map &= map - 1) {
            const uint32_t i = std::countr_zero(map);
            const Candidate* c = &pool[first[i] + next[i]];
            size_t g = 0;
            while (g < n_groups && groups[g].c->subtable != c->subtable) {
                g++;
            }
            if (g == n_groups) {
                groups[n_groups++] = {c, 0};
            }
            groups[g].keys |= 1u << i;
        }
        for (size_t g = 0; g < n_groups; g++) {
            auto* subtable = const_cast<dpcls_subtable*>(groups[g].c->subtable);
            auto fn = ovscls::view(subtable)->lookup_func.load(std::memory_order_acquire);
            const uint32_t hit = fn(subtable, groups[g].keys, keys, rules);
            probes += std::popcount(groups[g].keys);
            found |= hit;
            *lookups += std::popcount(hit) * (static_cast<int>(groups[g].c->position) + 1);
            pending &= ~hit;
            for (uint32_t map = groups[g].keys & ~hit; map; map &= map - 1) {
                const uint32_t i = std::countr_zero(map);
                if (++next[i] == count[i]) {
                    pending &= ~(1u << i);  // its last candidate: a miss
                }
            }
        }
    }
    // Keys with too many candidates: the loop over the tail, in rank order.
    const uint32_t looped = to_loop;
    for (size_t p = v.start; to_loop && p < b->size; p++) {
        auto* subtable = static_cast<dpcls_subtable*>(b->ranking->vector[p].ptr);
        auto fn = ovscls::view(subtable)->lookup_func.load(std::memory_order_acquire);
        const uint32_t hit = fn(subtable, to_loop, keys, rules);
        probes += std::popcount(to_loop);
        found |= hit;
        *lookups += std::popcount(hit) * (static_cast<int>(p) + 1);
        to_loop &= ~hit;
    }
    keys_.fetch_add(std::popcount(keys_map), std::memory_order_relaxed);
    probes_.fetch_add(probes, std::memory_order_relaxed);
    loops_.fetch_add(std::popcount(looped), std::memory_order_relaxed);
    candidates_.fetch_add(used, std::memory_order_relaxed);
    size_t seen = max_candidates_seen_.load(std::memory_order_relaxed);
    const size_t most = looped ? config_.max_candidates + 1 : most_candidates;
    while (most > seen &&
           !max_candidates_seen_.compare_exchange_weak(seen, most, std::memory_order_relaxed)) {
    }
    return found;
}

uint32_t TuplePruningIndex::loop_over_tail(const View& v, uint32_t keys_map,
                                           const netdev_flow_key* keys[], dpcls_rule** rules,
                                           int* lookups) const {
    const auto* b = static_cast<const Binding*>(v.binding);
    uint32_t found = 0;
    for (size_t p = v.start; keys_map && p < b->size; p++) {
        auto* subtable = static_cast<dpcls_subtable*>(b->ranking->vector[p].ptr);
        std::atomic_ref<uint32_t> hits(ovscls::view(subtable)->hit_cnt);
        const uint32_t hits_before = hits.load(std::memory_order_relaxed);
        auto fn = ovscls::view(subtable)->lookup_func.load(std::memory_order_acquire);
        const uint32_t hit = fn(subtable, keys_map, keys, rules);
        hits.store(hits_before, std::memory_order_relaxed);
        found |= hit;
        *lookups += std::popcount(hit) * (static_cast<int>(p) + 1);
        keys_map &= ~hit;
    }
    return found;
}

}  // namespace ovscls::tail
