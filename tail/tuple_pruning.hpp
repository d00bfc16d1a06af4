// tuple_pruning.hpp: the tail index (classifier/tail.hpp) by tuple pruning.
//
// Why not hash on relaxed masks (TupleMerge).  A Tuple Space Explosion
// makes masks that differ in prefix lengths, with rules that agree with the
// attacked rule up to their own length: attack frame m of perf/p2p's
// scenario (e) differs from the ACL's nw_src 10.0.0.1 first at bit i, so
// its megaflow holds nw_src = 10.0.0.1 with bit i flipped, under /i+1.
// Under any relaxed mask of k bits, every rule with i >= k has the same
// relaxed key: one bucket holds most of the flood, and a key walks it.
//
// Tuple pruning (Srinivasan, Suri and Varghese, "Packet classification
// using tuple space search", SIGCOMM 1999) asks each field which prefix
// lengths can match at all, and probes only the tuples (subtables) whose
// every length is allowed.  Here, without knowing OVS's fields:
// - Subtables whose miniflow maps nest form a *family* (of the widest map:
//   a word a mask leaves out of its map is a zero mask there, depth 0 in
//   its lanes; so an IPv6 address's later words under a short prefix do
//   not make a family per map).  Each mask word is four
//   16-bit *lanes*; a lane whose mask differs between the family's
//   subtables is *varying*.  Varying lanes whose masks are all prefixes
//   (in network bit order) and that every member masks as one prefix
//   together (adjacent bytes, bits in a lane only under a full lane before
//   it: an IPv4 or IPv6 address, a port pair as OVS's trie makes it) form a
//   *run*, with a RunTable (run_table.hpp) of its rules' values, walked 16
//   bits at a time; a varying lane with other masks (tcp_flags bits, say)
//   gets LaneSets (lane_sets.hpp): per mask, which masked values its rules
//   hold (its first 16 masks; any further ones are not pruned on).
// - A subtable is a tuple of ids: per run its length (0..16n; a run longer
//   than 48 bits is cut into levels of at most 48), per other varying lane
//   the index of its mask, filed in the family's TupleTrie (tuple_trie.hpp).
// - A key: per family, per run, the lengths some rule holds on its path
//   (RunTable::lengths, a node's ends and a child lookup per lane), per
//   other varying lane the masks some rule agrees with (a bit test each);
//   then the tuple trie yields only subtables every level allows (the
//   candidates); they are probed with their own lookup_func in rank order
//   until one matches.
//
// Worked example (scenario (e)): 2500 attack subtables, one family; attack
// subtable m = (i, j, k) masks nw_src /i+1, nw_dst /j+1, tp_src /k+1.  Its
// runs: nw_src (two lanes), nw_dst (two), tp_src (one; tp_dst does not
// vary).  A legitimate UDP key from 10.0.0.7 to 16.0.3.9:
// - nw_src's root holds the ends of the rules with i < 16 (10.0 with bit
//   i flipped: none agrees with 10.0) and, under 10.0, those with i >= 16:
//   .0.7 leaves .0.1 at bit 29, so the rule with i = 29 agrees (its flipped
//   bit is the key's): {30}.
// - nw_dst: 16.0 leaves 10.0 at bit 3: the rule with j = 3 agrees: {4};
//   no node under 16.0.
// - tp_src: the one length at which the key's port leaves 1000.
// So at most the one subtable (i = 29, j = 3, k) is probed (it holds a TCP
// rule: a miss), instead of 2500.  An attack frame's key reaches its own
// subtable the same way.  Had nw_dst's lanes been pruned one by one, a
// route 16.1.0.0/20 of another subtable of the family would allow 20 by
// its second lane alone (.0.0/4 agrees with .0.2) though its first is
// not the key's: in a run it is under 16.1, off the key's path.
//
// Exactness: a rule that matches a key agrees with it on every lane of its
// mask, so its subtable's depth is among the lane's allowed depths and its
// tuple is a candidate; the candidate is probed by the subtable's own
// lookup, which decides.  So the index can only probe too much, never miss.
//
// Limits (each counted in stats()): a family with more than 64 masks in a
// non-prefix lane or more than 32 tuple levels is not indexed, and no
// subtable is indexed once the index holds max_bytes; subtables not
// indexed are probed one by one, in rank order with the candidates.  A key
// with more than max_candidates candidates runs the plain loop over the
// tail.  The cost of a key: the families' run walks (per lane on the
// key's path, a node's ends and a child lookup) and the tuple trie's
// nodes on allowed paths, whatever the number of subtables.
//
// Writers (classifier/tail.hpp's order, under the classifier's writer
// lock) update the tries in place; a family whose lanes change (a new mask
// makes a lane vary, puts a non-prefix mask in a prefix lane, or breaks a
// run: bits in a lane under a short prefix in the one before) is rebuilt
// and replaced whole.  Readers take no lock; what they may still see is
// freed after an RCU grace period.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "classifier/tail.hpp"
#include "tail/lane_sets.hpp"
#include "tail/run_table.hpp"
#include "tail/slot_table.hpp"
#include "tail/tuple_trie.hpp"

namespace ovscls::tail {

struct TuplePruningConfig {
    size_t head = 16;      // at most this many positions left to the loop, fused and JIT lookups
    size_t min_tail = 32;  // served only when the ranking has this many after `head`
    // The head ends at the first position whose hits in the last ranking
    // interval are less than this share of the hits at it and after it,
    // unless the ranks with this share of the busiest one's hits hold most
    // of them (head_of()); 0: always `head` positions.
    double head_share = 1.0 / 16;
    size_t max_bytes = size_t{64} << 20;
    size_t max_candidates = 64;  // per key; more: the loop over the tail
};

struct TuplePruningStats {
    size_t families = 0;     // miniflow maps in the index
    size_t subtables = 0;    // indexed
    size_t unindexed = 0;    // subtables probed one by one (limits above)
    size_t rules = 0;        // of indexed subtables
    size_t lane_tables = 0;  // low tables of the lanes' LaneTables
    size_t bytes = 0;        // lane tries, tuple tries, bindings
    uint64_t rebuilds = 0;
    // Reader side, since the start: keys looked up, subtables probed for
    // them, and keys that had too many candidates (the loop over the tail).
    uint64_t keys = 0;
    uint64_t probes = 0;
    uint64_t loops = 0;
    // The last ranking was left to the loop: more subtables not indexed
    // than max_candidates (each key would take the loop over the tail).
    bool stepped_aside = false;
};

// What an index is doing, readable from any thread (tail-show): what its
// writer published at the last ranking, and what its readers counted.
struct TuplePruningSummary {
    size_t subtables = 0;  // members, indexed or not
    size_t unindexed = 0;
    size_t families = 0;
    size_t bytes = 0;
    size_t size = 0, start = 0;  // the last ranking's subtables, and where the index serves from
    bool stepped_aside = false;
    uint64_t keys = 0, candidates = 0, probes = 0, loops = 0;
    size_t max_candidates = 0;  // the most one key had (the loop's keys: the bound + 1)
};

class TuplePruningIndex final : public TailIndex {
  public:
    explicit TuplePruningIndex(TuplePruningConfig config = {});
    ~TuplePruningIndex() override;  // readers must be gone

    void subtable_added(const dpcls_subtable* subtable) override;
    void subtable_removed(const dpcls_subtable* subtable) override;
    void rule_inserted(const dpcls_subtable* subtable, const dpcls_rule* rule) override;
    void rule_removed(const dpcls_subtable* subtable, const dpcls_rule* rule) override;
    void ranking_published(const PvectorImpl* ranking) override;

    View view(const PvectorImpl* ranking, size_t size) const override;
    uint32_t lookup(const View& view, uint32_t keys_map, const netdev_flow_key* keys[],
                    dpcls_rule** rules, int* lookups) const override;

    // What OVS's loop over the view's positions would answer, without the
    // index (the reference of the plugin's validation mode): rules,
    // lookups numerator and the keys found, as lookup() returns them.
    // Leaves the subtables' hit counts as it found them (the thread that
    // looks up is their one writer).
    uint32_t loop_over_tail(const View& view, uint32_t keys_map, const netdev_flow_key* keys[],
                            dpcls_rule** rules, int* lookups) const;

    TuplePruningStats stats() const;      // writer side
    TuplePruningSummary summary() const;  // any thread
    // Writer: a change could not be made (no memory): the index no longer
    // knows every rule, so it serves no ranking from now on (view() none:
    // the loop does all), for good.
    void fail() { failed_.store(true, std::memory_order_release); }
    bool failed() const { return failed_.load(std::memory_order_acquire); }
    const TuplePruningConfig& config() const { return config_; }
    // Writer: from the next ranking_published() on, serve from position
    // `head` when at least `min_tail` subtables follow it.
    void set_serving(size_t head, size_t min_tail) {
        config_.head = head;
        config_.min_tail = min_tail;
    }

  private:
    struct Lane {
        uint8_t block;                // of the family's mask words
        uint8_t shift;                // 16 * the lane's place in the word
        bool prefix;                  // pruned on: in a run
        std::vector<uint16_t> masks;  // !prefix: id -> lane mask
    };
    // Prefix lanes that every member masks as one prefix (run_table.hpp),
    // lanes[first..first + n); its tuple levels are [level, level + levels).
    struct Run {
        uint8_t first, n, level, levels;
    };
    // A level of the tuple trie: a run's lengths lo..hi as ids 0..hi-lo
    // (runs longer than 48 bits take several: ids are < kMaxLaneIds), or a
    // non-prefix lane's mask ids.
    struct Level {
        bool run;
        uint8_t index;  // of `runs`, or of `lanes`
        uint8_t lo, hi;
    };
    // What readers walk: one family, immutable but for its tries.
    struct Family {
        MiniflowMap map{};
        bool indexed = true;
        std::vector<uint8_t> flow_words;  // per mask block: its word of struct flow
        std::vector<Lane> lanes;          // the varying ones
        std::vector<Run> runs;
        std::vector<Level> levels;
        std::vector<std::unique_ptr<RunTable>> run_tables;  // per run
        std::vector<std::unique_ptr<LaneSets>> sets;        // per lane; null if prefix
        std::unique_ptr<TupleTrie> tuples;
        // Lane `lane` of `flow` (a key, a rule's flow or a mask) in network
        // bit order; 0 where its map lacks the lane's word.
        uint16_t lane_value(const FlowKey& flow, const Lane& lane) const;
        // The values of `run`'s lanes in `flow`, values[0..run.n).
        void run_values(const FlowKey& flow, const Run& run, uint16_t values[]) const;
        size_t bytes() const;
    };
    struct Families {
        size_t n;
        const Family* family[];
    };
    // Per published ranking: slot -> position and subtable.
    struct Binding {
        const PvectorImpl* ranking;
        size_t size;
        size_t start;  // == size: serves none
        struct Entry {
            uint32_t position;
            const dpcls_subtable* subtable;
        };
        std::vector<Entry> by_slot;
    };
    struct Unindexed {
        size_t n;
        uint32_t slot[];
    };

    // Writer side.
    struct Member {
        const dpcls_subtable* subtable;
        uint32_t slot;
        bool indexed;
        MiniflowMap family;        // the map of the family it is in (covers its own)
        std::vector<uint8_t> ids;  // the tuple, while indexed
        std::vector<const dpcls_rule*> rules;
    };
    struct FamilyState {
        MiniflowMap map;
        std::vector<uint8_t> flow_words;  // per block of `map`: its word of struct flow
        Family* published = nullptr;
        std::vector<uint32_t> members;  // slots
        // Per lane (4 per mask block): how many members mask it how.
        std::vector<std::map<uint16_t, uint32_t>> lane_masks;
    };
    struct MapHash {
        size_t operator()(const MiniflowMap& m) const {
            return std::hash<uint64_t>()(m.bits[0] * 0x9e3779b97f4a7c15ull ^ m.bits[1]);
        }
    };
    struct MapEq {
        bool operator()(const MiniflowMap& a, const MiniflowMap& b) const {
            return a.bits[0] == b.bits[0] && a.bits[1] == b.bits[1];
        }
    };

    // The positions of `ranking` left to the loop (head_of(), at its definition).
    size_t head_of(const PvectorImpl* ranking, size_t size) const;
    // Lane `lane` of the family's words, as its mask or value in network bit order.
    static uint16_t lane_of(uint64_t word, unsigned shift);
    bool needs_rebuild(const FamilyState& state, const Family& family) const;
    // A member's run lengths: false when `mask` does not mask some run of
    // `family` as one prefix (then it breaks the family's runs).
    bool run_lengths(const Family& family, const FlowKey& mask, unsigned lengths[]) const;
    // The family's runs and tuple levels from its prefix lanes and the
    // state's members' masks.
    void find_runs(const FamilyState& state, Family& family) const;
    // The family state for a new subtable of mask map `map` (made, or
    // merged from the families `map` covers).
    FamilyState& family_for(const MiniflowMap& map);
    // Adds (+1) or takes (-1) a member's mask to or from the state's lane counts.
    void count_lanes(FamilyState& state, const FlowKey& mask, int delta);
    void rebuild(FamilyState& state);
    // The member's tuple in `family`; false when a lane id does not fit.
    bool tuple_of(const Family& family, const Member& member, std::vector<uint8_t>& ids) const;
    void index_member(Family& family, Member& member);
    void unindex_member(Family& family, Member& member);
    void add_rule_marks(Family& family, const FlowKey& mask, const dpcls_rule* rule, bool add);
    // What the published families (and `building`, if not one of them) and
    // the binding hold.
    size_t bytes(const Family* building) const;
    void publish_families();
    void publish_unindexed();
    void retire_family(Family* family);

    TuplePruningConfig config_;  // writer side
    std::atomic<const Families*> families_{nullptr};
    std::atomic<const Binding*> binding_{nullptr};
    std::atomic<const Unindexed*> unindexed_{nullptr};

    std::vector<Member> members_;  // by slot; subtable null: free
    std::vector<uint32_t> free_slots_;
    SlotTable slot_of_;                                    // subtable -> slot
    std::vector<uint32_t> slot_at_;                        // the last binding's slot per position
    std::vector<const dpcls_subtable*> subtable_of_slot_;  // members_[slot].subtable, dense
    std::unordered_map<MiniflowMap, FamilyState, MapHash, MapEq> families_by_map_;
    size_t binding_bytes_ = 0;
    bool stepped_aside_ = false;
    uint64_t rebuilds_ = 0;
    // Reader-side counts, added once per lookup() call (relaxed: statistics).
    mutable std::atomic<uint64_t> keys_{0};
    mutable std::atomic<uint64_t> probes_{0};
    mutable std::atomic<uint64_t> loops_{0};
    mutable std::atomic<uint64_t> candidates_{0};
    mutable std::atomic<size_t> max_candidates_seen_{0};
    // The writer's part of summary(), published at each ranking.
    std::atomic<size_t> sum_subtables_{0}, sum_unindexed_{0}, sum_families_{0}, sum_bytes_{0},
        sum_size_{0}, sum_start_{0};
    std::atomic<bool> sum_stepped_aside_{false};
    std::atomic<bool> failed_{false};
};

}  // namespace ovscls::tail
