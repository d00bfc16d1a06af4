// bench_classifier.hpp: what the whole-classifier benchmarks share
// (perf/dpcls_bench.cpp, perf/tse_grid.cpp): tables of megaflow text and
// packets, a classifier built from one per lookup configuration, rankings
// as a PMD thread runs them, and timed windows of bursts.
//
// A Table is text, parsed by OVS (odp_flow_from_string); packet keys are
// what OVS's miniflow_extract() makes of frames OVS composes from a flow,
// so they carry the words real packets carry.  A Setup is one lookup
// configuration: a registry, optionally a fused provider and a tail index,
// and a Classifier holding the table's rules.  Timing: windows of
// kWindowBursts bursts of kMaxBurst keys timed with the TSC; a repetition's
// figure is its median window, in ticks per packet.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "classifier/classifier.hpp"
#include "classifier/miniflow.hpp"
#include "jit/engine.hpp"
#include "lookups/lookups.hpp"
#include "tail/tuple_pruning.hpp"

namespace ovscls::perf {

inline constexpr size_t kPoolBursts = 256;  // bursts of keys cycled through
inline constexpr size_t kWindowBursts = 8;  // bursts per timed window

struct Table {
    std::string name, what;
    std::vector<std::string> rules;    // megaflow text, masked
    std::vector<std::string> packets;  // flow text, exact: the frames to extract
    bool flood = false;                // the tail index's setups, not the fused ones
};

// a as dotted quad text.
std::string ip(uint32_t a);

// One lookup configuration: a registry, a classifier with the table's rules,
// and the keys.
struct Setup {
    std::string name;
    std::unique_ptr<jit::Engine> engine;  // its own, or null: the process engine
    std::unique_ptr<LookupRegistry> registry;
    FusedProvider* fused = nullptr;
    std::unique_ptr<Classifier> cls;
    bool tail = false;                         // with a tail index
    tail::TuplePruningIndex* index = nullptr;  // owned by cls
    std::map<const dpcls_rule*, int> rule_index;
    size_t subtables = 0;
    std::string impls;  // subtables per lookup, "jit_avx2 13"
    double lookups_per_hit = 0;
    double insert_ticks = 0;   // per rule, building the table
    double ranking_ticks = 0;  // per sort_subtables(), median of settle()'s
    std::vector<int> answers;  // per key: the rule's index, or -1
    std::vector<double> reps;  // ticks per packet, one per repetition
};

// OVS's generic lookup as a registry entry (the base of every comparison).
ovsb_lookup_func ovs_generic_probe(void*, const ProbeContext& ctx);

struct Keys {
    std::vector<FlowKey> keys;
    std::vector<const netdev_flow_key*> ptrs;
};

// The keys of `t`'s packets (frames composed by OVS and extracted by its
// miniflow_extract()); none, with a message on stderr, on a parse error.
std::optional<Keys> make_keys(const Table& t);

// Builds `s`'s classifier from the table's rules (and its tail index when
// s.tail), timing the inserts.  False, with a message, on a parse error.
bool fill(Setup& s, const Table& t);

// Removes every rule (the last subtables' go first, as a flood's expire);
// returns ticks per removal.
double remove_all(Setup& s);

// One pass over the key pool; returns the hits, appends each key's rule
// index (or -1) to *answers and adds the lookups to *lookups when given.
size_t pass(const Setup& s, Keys& k, std::vector<int>* answers, int64_t* lookups);

double median(std::vector<double> v);

// Rankings as a PMD thread runs them (traffic, sort_subtables(), the JIT's
// compiles, fused lookups refreshed), seven times; then records the answers
// to the pool, lookups per hit, the lookups the subtables run and the tail
// index's figures in `s`.
void settle(Setup& s, Keys& k);

// One repetition: `windows` timed windows over the pool (after a warming
// pass); returns the median window's ticks per packet.
double timed_rep(const Setup& s, Keys& k, int windows);

}  // namespace ovscls::perf
