// bench_classifier.cpp: see bench_classifier.hpp.
#include "perf/bench_classifier.hpp"

#include <x86intrin.h>

#include <algorithm>
#include <cstdio>

#include "reference/ovs_reference.h"

namespace ovscls::perf {

std::string ip(uint32_t a) {
    char s[16];
    std::snprintf(s, sizeof s, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
    return s;
}

ovsb_lookup_func ovs_generic_probe(void*, const ProbeContext& ctx) {
    return ovsb_ovs_generic_probe(ctx.u0, ctx.u1);
}

std::optional<Keys> make_keys(const Table& t) {
    Keys k;
    k.keys.reserve(t.packets.size());
    for (const std::string& p : t.packets) {
        FullFlow flow{}, wc{};
        char err[256];
        if (ovsb_megaflow_parse(p.c_str(), flow.data(), wc.data(), err, sizeof err)) {
            std::fprintf(stderr, "%s: packet '%s': %s\n", t.name.c_str(), p.c_str(), err);
            return std::nullopt;
        }
        uint8_t frame[2048];
        const size_t len = ovsb_frame_compose(flow.data(), frame, sizeof frame);
        FlowKey key{};
        ovsb_key_from_frame(ovs(&key), frame, len, 1);
        k.keys.push_back(key);
    }
    for (const FlowKey& key : k.keys) k.ptrs.push_back(ovs(&key));
    return k;
}

// Builds `s`'s classifier from the table's rules.  False on a parse error.
bool fill(Setup& s, const Table& t) {
    std::unique_ptr<TailIndex> tail_index;
    if (s.tail) {
        auto owned = std::make_unique<tail::TuplePruningIndex>();
        s.index = owned.get();
        tail_index = std::move(owned);
    }
    s.cls = std::make_unique<Classifier>(*s.registry, s.fused, std::move(tail_index));
    std::vector<std::pair<FlowKey, FullFlow>> parsed;
    for (const std::string& text : t.rules) {
        FullFlow flow{}, wc{};
        char err[256];
        FlowKey mask{};
        if (ovsb_megaflow_parse(text.c_str(), flow.data(), wc.data(), err, sizeof err) ||
            !ovsb_mask_init(ovs(&mask), flow.data(), wc.data())) {
            std::fprintf(stderr, "%s: rule '%s': %s\n", t.name.c_str(), text.c_str(), err);
            return false;
        }
        parsed.emplace_back(mask, flow);
    }
    // The writer's side: ticks per insert (most of the flood's make a new
    // subtable each), over the whole table.
    const uint64_t start = __rdtsc();
    for (size_t index = 0; index < parsed.size(); index++) {
        if (index % 1024 == 1023) {
            ovsb_rcu_quiesce();  // a long build: OVS's RCU must not wait on it
        }
        dpcls_rule* rule = nullptr;
        // A megaflow whose masked key is already there (the corpus repeats
        // some across bridges) is left out, as dpcls would never hold both.
        if (s.cls->insert(parsed[index].first, parsed[index].second.data(), &rule)) {
            s.rule_index[rule] = static_cast<int>(index);
        }
    }
    s.insert_ticks = static_cast<double>(__rdtsc() - start) / static_cast<double>(parsed.size());
    return true;
}

// Removes every rule (the last subtables' go first, as a flood's expire),
// timed: ticks per removal.
double remove_all(Setup& s) {
    std::vector<std::pair<int, dpcls_rule*>> rules;
    for (const auto& [rule, index] : s.rule_index) {
        rules.emplace_back(index, const_cast<dpcls_rule*>(rule));
    }
    std::sort(rules.rbegin(), rules.rend());
    const uint64_t start = __rdtsc();
    for (const auto& [index, rule] : rules) {
        s.cls->remove(rule);
    }
    const double ticks = static_cast<double>(__rdtsc() - start) / static_cast<double>(rules.size());
    s.rule_index.clear();
    ovsb_rcu_quiesce();
    return ticks;
}

// One pass over the key pool; returns the hits and adds to *lookups.
size_t pass(const Setup& s, Keys& k, std::vector<int>* answers, int64_t* lookups) {
    size_t hits = 0;
    for (size_t b = 0; b < kPoolBursts; b++) {
        dpcls_rule* rules[kMaxBurst] = {};
        int n = 0;
        s.cls->lookup(&k.ptrs[b * kMaxBurst], kMaxBurst, rules, &n);
        ovsb_rcu_quiesce();  // as a PMD thread does: OVS's RCU waits for none of ours
        if (lookups) *lookups += n;
        for (size_t i = 0; i < kMaxBurst; i++) {
            hits += rules[i] != nullptr;
            if (answers) {
                answers->push_back(rules[i] ? s.rule_index.at(rules[i]) : -1);
            }
        }
    }
    return hits;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

jit::Engine& engine_of(const Setup& s) { return s.engine ? *s.engine : jit::process_engine(); }

// Rankings as a PMD thread runs them, once a second in OVS: traffic, then
// sort_subtables(), which re-probes the subtables with hits (where hot ones
// move to JIT code); the JIT's compiles finish in between.
void settle(Setup& s, Keys& k) {
    std::vector<double> rankings;
    for (int round = 0; round < 6; round++) {
        pass(s, k, nullptr, nullptr);
        const uint64_t start = __rdtsc();
        s.cls->sort_subtables();
        rankings.push_back(static_cast<double>(__rdtsc() - start));
        engine_of(s).drain();
        s.cls->refresh_fused();  // as a PMD thread does between bursts
        ovsb_rcu_quiesce();
    }
    pass(s, k, nullptr, nullptr);
    const uint64_t start = __rdtsc();
    s.cls->sort_subtables();  // the ranking the timed lookups run under
    rankings.push_back(static_cast<double>(__rdtsc() - start));
    s.ranking_ticks = median(rankings);
    engine_of(s).drain();
    s.cls->refresh_fused();
    int64_t lookups = 0;
    const size_t hits = pass(s, k, &s.answers, &lookups);
    s.lookups_per_hit = hits ? static_cast<double>(lookups) / static_cast<double>(hits) : 0;
    std::map<std::string, int> by_impl;
    const auto infos = s.cls->subtables();
    for (const auto& info : infos) by_impl[info.impl]++;
    s.subtables = infos.size();
    for (const auto& [impl, n] : by_impl) {
        s.impls += (s.impls.empty() ? "" : ", ") + impl + " " + std::to_string(n);
    }
    if (s.fused) {
        s.impls =
            "jit_fused over " + std::to_string(s.cls->fused_subtables()) + ", then " + s.impls;
    }
    if (s.index) {
        const auto st = s.cls->with_writer_lock([&] { return s.index->stats(); });
        char line[160];
        std::snprintf(line, sizeof line,
                      "; tail index: %zu subtables in %zu families, %zu not indexed, %zu KiB, "
                      "%.2f probes a key",
                      st.subtables, st.families, st.unindexed, st.bytes / 1024,
                      st.keys ? double(st.probes) / double(st.keys) : 0.0);
        s.impls += line;
    }
}

double timed_rep(const Setup& s, Keys& k, int windows) {
    std::vector<uint64_t> w;
    w.reserve(windows);
    dpcls_rule* rules[kMaxBurst];
    size_t burst = 0;
    for (size_t b = 0; b < kPoolBursts; b++) {  // warm caches as a PMD's are
        s.cls->lookup(&k.ptrs[b * kMaxBurst], kMaxBurst, rules);
    }
    for (int i = 0; i < windows; i++) {
        const uint64_t start = __rdtsc();
        for (size_t j = 0; j < kWindowBursts; j++) {
            s.cls->lookup(&k.ptrs[burst * kMaxBurst], kMaxBurst, rules);
            burst = (burst + 1) % kPoolBursts;
        }
        w.push_back(__rdtsc() - start);
    }
    std::nth_element(w.begin(), w.begin() + w.size() / 2, w.end());
    return static_cast<double>(w[w.size() / 2]) / static_cast<double>(kWindowBursts * kMaxBurst);
}

}  // namespace ovscls::perf
