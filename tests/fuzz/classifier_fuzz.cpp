// classifier_fuzz.cpp: libFuzzer target, the classifier under a sequence of
// operations, against the brute-force reference (tests/reference.hpp).
//
// The input drives a sequence of up to 256 operations on one Classifier with
// up to 8 masks of random fingerprints, whose rules may overlap (a key can
// match rules of several subtables):
//   insert   a rule under one of the masks: a fresh flow, or a live rule's
//            flow (so a duplicate, which must be refused, or an overlap);
//   remove   a live rule, or a rule removed before (must be refused);
//   sort     sort_subtables(), then the JIT's queue is drained and the
//            subtables re-probed, so that compiled code runs (tier 1, later
//            tier 2), and the classifier's fused lookup asked for again
//            (jit_fused: the top subtables in one function, once they run
//            tier-2 code for one packet map);
//   prio     set_priority() of an entry to 0-255, or to a bad value (must be
//            refused and change nothing);
//   reprobe  every subtable re-probed;
//   lookup   a burst of 1-32 keys (rules' flows, bit-flipped or random,
//            some lacking words, some invalid miniflows), each placed
//            against a PROT_NONE page (guarded_keys.hpp).
// The classifier has a tail index (tail_index() below) in place throughout.
// After each lookup the result must be exactly what OVS's dpcls_lookup()
// would return: per key, the rule of the first subtable in rank order that
// matches it (the reference names every rule a key matches), null when none
// does or the key is invalid; "all found" and the lookups-per-hit numerator
// (sum of 1-based ranks of the matching subtables) exact as well.  The rule
// count must equal the reference's after every operation.  A difference
// aborts (libFuzzer keeps the input).  A seccomp filter refuses any writable
// and executable mapping meanwhile (wx_filter.hpp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "classifier/classifier.hpp"
#include "generators.hpp"
#include "lookup_fixture.hpp"
#include "reference.hpp"
#include "tail/tuple_pruning.hpp"

namespace ovscls::test {
namespace {

// The fuzz fixture and the registry's entries with their default priorities
// (restored after each input).
struct Fixture {
    LookupFixture lookups{"classifier_fuzz"};
    LookupRegistry& registry = lookups.registry;
    std::vector<std::string> names;
    std::vector<int> default_priorities;

    Fixture() {
        for (size_t i = 0; i < registry.size(); i++) {
            names.push_back(registry.at(i).name);
            default_priorities.push_back(static_cast<int>(registry.at(i).priority.load()));
        }
    }
};

// What the run covered, printed at exit: a run that never looked up through
// a subtable running jit_avx2 (or never refused a duplicate) says so.
struct Tally {
    uint64_t inputs = 0, ops = 0, keys = 0, hits = 0, overlaps = 0, invalid = 0;
    uint64_t duplicates = 0, bad_removes = 0, bad_prios = 0, fused_bursts = 0;
    uint64_t tail_keys = 0, tail_loops = 0;  // keys the tail index served; of them by its loop
    std::map<std::string, uint64_t> served;  // subtable lookups per implementation
};
Tally& tally() {
    static auto* t = new Tally;
    return *t;
}

void print_tally() {
    const Tally& t = tally();
    std::fprintf(stderr,
                 "classifier_fuzz: %llu inputs, %llu operations; %llu keys looked up "
                 "(%llu hits, %llu matching several subtables, %llu invalid); refused "
                 "%llu duplicates, %llu bad removes, %llu bad priorities; %llu bursts through a "
                 "jit_fused lookup; %llu keys through the tail index (%llu of them by its "
                 "loop); subtable lookups by",
                 (unsigned long long)t.inputs, (unsigned long long)t.ops,
                 (unsigned long long)t.keys, (unsigned long long)t.hits,
                 (unsigned long long)t.overlaps, (unsigned long long)t.invalid,
                 (unsigned long long)t.duplicates, (unsigned long long)t.bad_removes,
                 (unsigned long long)t.bad_prios, (unsigned long long)t.fused_bursts,
                 (unsigned long long)t.tail_keys, (unsigned long long)t.tail_loops);
    for (const auto& [name, n] : t.served) {
        std::fprintf(stderr, " %s %llu", name.c_str(), (unsigned long long)n);
    }
    std::fprintf(stderr, "\n");
}

Fixture& fixture() {
    static Fixture* f = [] {
        std::atexit(print_tally);
        return new Fixture;  // never destroyed (lookup_fixture.hpp)
    }();
    return *f;
}

[[noreturn]] void fail(const char* what, size_t op) {
    std::fprintf(stderr, "classifier_fuzz: operation %zu: %s\n", op, what);
    std::abort();
}

// jit_fused where the JIT is built: the classifier's top subtables in one
// generated lookup once they run tier-2 code for one packet map.
FusedProvider* fused_provider([[maybe_unused]] Fixture& f) {
#if OVSCLS_WITH_JIT
    return &f.lookups.engine.fused();
#else
    return nullptr;
#endif
}

// The tail index (tail/tuple_pruning.hpp), serving all subtables after the
// first 0-2 once there are 1-3 more, with 1-8 candidates a key before it
// falls back to the loop: input-driven, so that both of its paths run.
std::unique_ptr<TailIndex> tail_index(Gen& g) {
    tail::TuplePruningConfig config;
    config.head = g.below(3);
    config.min_tail = 1 + g.below(3);
    config.max_candidates = 1 + g.below(8);
    return std::make_unique<tail::TuplePruningIndex>(config);
}

// One input's classifier, its reference and the rules both hold.
class Run {
  public:
    Run(Fixture& f, Gen& g)
        : f_(f),
          g_(g),
          cls_(std::make_unique<Classifier>(f.registry, fused_provider(f), tail_index(g))) {
        const uint32_t n_masks = 1 + g.below(8);
        for (uint32_t m = 0; m < n_masks; m++) {
            // Mostly narrow masks, as megaflows are; sometimes a wide one.
            const uint32_t u1 = g.below(g.chance(10) ? kUnit1Bits + 1 : 6);
            uint32_t u0 =
                g.below(g.chance(10) ? std::min<uint32_t>(64, kMaxKeyValues - u1) + 1 : 13);
            u0 = u0 + u1 == 0 ? 1 : u0;
            masks_.push_back(g.mask(u0, u1));
        }
    }
    ~Run() {
        // Priorities back to the defaults for the next input.
        for (size_t i = 0; i < f_.names.size(); i++) {
            (void)f_.registry.set_priority(f_.names[i], f_.default_priorities[i]);
        }
        const auto* index = static_cast<const tail::TuplePruningIndex*>(cls_->tail());
        const tail::TuplePruningStats st = cls_->with_writer_lock([&] { return index->stats(); });
        tally().tail_keys += st.keys;
        tally().tail_loops += st.loops;
        cls_.reset();  // frees the rules after a grace period
        ovsb_rcu_quiesce();
    }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    void step(size_t op) {
        op_ = op;
        switch (g_.below(10)) {
            case 0:
            case 1:
            case 2:
                insert();
                break;
            case 3:
                remove();
                break;
            case 4:
                sort();
                break;
            case 5:
                prio();
                break;
            case 6:
                cls_->reprobe();
                break;
            default:
                lookup();
                break;
        }
        if (cls_->rule_count() != reference_.size()) {
            fail("rule count differs from the reference", op);
        }
        if (g_.chance(20)) {
            ovsb_rcu_quiesce();  // removed rules and subtables are freed
        }
        tally().ops++;
    }

  private:
    struct Live {
        dpcls_rule* rule;
        size_t mask;
        FullFlow flow;
    };

    void insert() {
        const size_t m = g_.below(masks_.size());
        FullFlow flow = g_.flow();
        if (!live_.empty() && g_.chance(40)) {
            flow = live_[g_.below(live_.size())].flow;  // duplicate or overlap
            if (g_.chance(30)) {
                flow[g_.below(kFlowU64s)] ^= uint64_t{1} << g_.below(64);
            }
        }
        dpcls_rule* rule = nullptr;
        const bool duplicate = has_rule(m, flow);
        if (Status s = cls_->insert(masks_[m], flow.data(), &rule); !s) {
            if (!duplicate) {
                fail(("insert refused a new rule: " + s.message()).c_str(), op_);
            }
            tally().duplicates++;
            return;
        }
        if (duplicate) {
            fail("insert accepted a duplicate rule", op_);
        }
        reference_.add(masks_[m], view(rule)->flow, rule);
        live_.push_back({rule, m, flow});
        removed_.erase(rule);  // the address may be a freed rule's
    }

    // A rule under mask m (or an equal mask: two draws may be the same
    // mask, hence the same subtable) with flow's masked value is live.
    bool has_rule(size_t m, const FullFlow& flow) const {
        const FullFlow mask = expand(masks_[m]);
        for (const Live& l : live_) {
            if (expand(masks_[l.mask]) != mask) {
                continue;
            }
            bool same = true;
            for (size_t w = 0; w < kFlowU64s && same; w++) {
                same = (l.flow[w] & mask[w]) == (flow[w] & mask[w]);
            }
            if (same) {
                return true;
            }
        }
        return false;
    }

    void remove() {
        if (!removed_.empty() && g_.chance(20)) {
            // Never dereferenced: the classifier must know it is not live.
            dpcls_rule* gone = *removed_.begin();
            if (cls_->remove(gone)) {
                fail("remove accepted a rule removed before", op_);
            }
            tally().bad_removes++;
            return;
        }
        if (live_.empty()) {
            return;
        }
        const size_t i = g_.below(live_.size());
        dpcls_rule* rule = live_[i].rule;
        if (Status s = cls_->remove(rule); !s) {
            fail(("remove refused a live rule: " + s.message()).c_str(), op_);
        }
        reference_.remove(rule);
        live_.erase(live_.begin() + static_cast<ptrdiff_t>(i));
        removed_.insert(rule);
    }

    // Ranks; the JIT compiles what the ranking asked for, and a re-probe
    // installs it (as the next ranking would).
    void sort() {
        cls_->sort_subtables();
#if OVSCLS_WITH_JIT
        f_.lookups.engine.drain();
        cls_->reprobe();
        f_.lookups.engine.drain();
        cls_->refresh_fused();  // fused code compiled for this ranking
#endif
    }

    void prio() {
        const std::string& name = f_.names[g_.below(f_.names.size())];
        if (g_.chance(10)) {
            const int64_t bad = g_.chance(50) ? -1 - int64_t{g_.below(1000)} : 256 + g_.below(1000);
            if (f_.registry.set_priority(name, bad)) {
                fail("set_priority accepted a priority outside 0-255", op_);
            }
            tally().bad_prios++;
            return;
        }
        if (Status s = f_.registry.set_priority(name, g_.below(256)); !s) {
            fail(("set_priority refused 0-255: " + s.message()).c_str(), op_);
        }
    }

    // A packet-like key: a rule's flow (perhaps one bit off) or random, with
    // every word of a packet key, some of them absent (zero words).
    FlowKey packet_key() {
        FullFlow flow = g_.flow();
        if (!live_.empty() && g_.chance(70)) {
            flow = live_[g_.below(live_.size())].flow;
            if (g_.chance(15)) {
                flow[g_.below(kFlowU64s)] ^= uint64_t{1} << g_.below(64);
            }
        }
        FlowKey all{};
        all.map.bits[0] = ~uint64_t{0};
        all.map.bits[1] = (uint64_t{1} << kUnit1Bits) - 1;
        FlowKey key = g_.key(flow, all, g_.chance(30), false);
        if (g_.chance(3) && std::popcount(key.map.bits[0]) + std::popcount(key.map.bits[1]) <
                                static_cast<int>(kMaxKeyValues)) {
            key.map.bits[1] |= uint64_t{1} << 63;  // no such block: invalid
        }
        return key;
    }

    void lookup() {
        const uint32_t cnt = 1 + g_.below(kMaxBurst);
        FlowKey keys[kMaxBurst];
        const netdev_flow_key* ptrs[kMaxBurst];
        for (uint32_t i = 0; i < cnt; i++) {
            keys[i] = packet_key();
            ptrs[i] = f_.lookups.keys.place(i, keys[i]);
        }
        const std::vector<Classifier::SubtableInfo> ranked = cls_->subtables();
        std::unordered_map<const void*, int> rank_of_mask;  // 1-based
        for (size_t r = 0; r < ranked.size(); r++) {
            rank_of_mask[&view(ranked[r].subtable)->mask] = static_cast<int>(r + 1);
        }

        dpcls_rule* got[kMaxBurst];
        int num_lookups = -1;
        if (cls_->fused_subtables()) {
            tally().fused_bursts++;
        }
        const bool all_found = cls_->lookup(ptrs, cnt, got, &num_lookups);

        bool want_all = true;
        int want_lookups = 0, deepest = 0;
        for (uint32_t i = 0; i < cnt; i++) {
            const bool invalid = keys[i].map.bits[1] >> kUnit1Bits;
            dpcls_rule* want = nullptr;
            int want_rank = 0;
            if (!invalid) {
                const auto matches = reference_.matches(keys[i]);
                tally().overlaps += matches.size() > 1;
                for (const void* m : matches) {
                    // The reference holds the classifier's own rules.
                    auto* rule = static_cast<dpcls_rule*>(const_cast<void*>(m));
                    const int rank = rank_of_mask.at(view(rule)->mask);
                    if (!want || rank < want_rank) {
                        want = rule;
                        want_rank = rank;
                    }
                }
            }
            tally().invalid += invalid;
            if (got[i] != want) {
                char what[128];
                std::snprintf(what, sizeof what, "key %u of %u: found %p, want %p (rank %d)", i,
                              cnt, static_cast<void*>(got[i]), static_cast<void*>(want), want_rank);
                fail(what, op_);
            }
            want_all = want_all && want;
            want_lookups += want_rank;
            if (!invalid) {  // a miss went through every subtable
                deepest = std::max(deepest, want ? want_rank : static_cast<int>(ranked.size()));
            }
            tally().hits += want != nullptr;
        }
        if (all_found != want_all) {
            fail("\"all found\" differs", op_);
        }
        if (num_lookups != want_lookups) {
            fail("subtable lookups per hit numerator differs", op_);
        }
        tally().keys += cnt;
        for (int r = 0; r < deepest; r++) {
            tally().served[ranked[r].impl]++;
        }
    }

    Fixture& f_;
    Gen& g_;
    std::unique_ptr<Classifier> cls_;
    std::vector<FlowKey> masks_;
    ReferenceClassifier reference_;
    std::vector<Live> live_;
    std::unordered_set<dpcls_rule*> removed_;
    size_t op_ = 0;
};

}  // namespace
}  // namespace ovscls::test

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace ovscls::test;
    Fixture& f = fixture();
    Gen g(data, size);
    {
        Run run(f, g);
        const size_t ops = 1 + g.below(256);
        for (size_t op = 0; op < ops; op++) {
            run.step(op);
        }
    }
    tally().inputs++;
    return 0;
}
