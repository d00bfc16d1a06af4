// dpcls_bench: a whole classifier's lookup, in TSC ticks per packet, where
// traffic crosses many subtables.
//
// microbench measures one subtable's lookup.  A port's classifier tries its
// subtables in rank order until every key of the burst has matched
// (dpcls_lookup()), so where traffic spreads over several subtables a
// packet pays for every subtable it visits: OVS reports the average as
// "subtable lookups per hit" (pmd-perf-show).  This measures the whole
// lookup, Classifier::lookup() (OVS's dpcls_lookup() loop, over OVS's own
// structures), for tables of real megaflow masks:
//
//   prefix-13  phy-to-phy scenario (b): 221 disjoint nw_dst prefix rules,
//              17 of each length /20../32, 13 subtables of one fingerprint
//              (4,2), traffic spread evenly over the rules (7 lookups/hit)
//   prefix-20  the same with lengths /13../32: 20 subtables, 340 rules
//              (10.5 lookups/hit)
//   corpus     the in_port(1) megaflows of tests/corpus/megaflows.txt (real
//              dumps of several bridges; mixed fingerprints), a packet per
//              megaflow composed by OVS from it (flow_compose)
//   flood-N-hit, flood-N-miss (N = 100, 1000, 10000): a mask flood (Tuple
//              Space Explosion) on top of prefix-13's rules: N attack
//              megaflows of N masks of perf/p2p scenario (e)'s shape (nw_src
//              /i+1, nw_dst /j+1, tp_src /k+1, TCP), each holding the one
//              rule attack frame (i, j, k) makes.  -hit: the keys are the
//              attack frames, each matching its own subtable somewhere in
//              the cold tail; -miss: UDP keys that match no subtable.
//
// Rules are megaflow text parsed by OVS (odp_flow_from_string); packet keys
// are what OVS's miniflow_extract() makes of frames OVS composes from a
// flow, so they carry the words real packets carry.
//
// Lookups, each in a classifier of its own holding the same rules:
//   ovs_generic  OVS 3.1's own generic lookup (lib/dpif-netdev-lookup-
//                generic.c, the reference build) in every subtable: the base
//   specialized  this project's registry without the JIT (specialized where
//                its fingerprints are listed, generic elsewhere)
//   jit_avx2     with the JIT (x86-64, AVX2): hot subtables on JIT code,
//                after rankings as a PMD thread would run them
//   jit_fused    and jit_fused: the port's top subtables in one generated
//                lookup (jit/fused_generator.hpp)
//   fused_lfence the same with an lfence before each subtable: no work of
//                a subtable starts before the previous one's answer; the
//                difference is what speculation across subtables gains
// and on the flood tables, instead of the fused ones:
//   tail_generic ovs_generic's lookups, and the tail index
//                (tail/tuple_pruning.hpp) serving all but the first 16
//                subtables: what the index changes, nothing else
//   tail_jit     jit_avx2's lookups and the tail index
// Before timing, every lookup's answer for every key must be the base's
// (the same rule, by index): a mismatch fails the run (exit 1).
//
// Timing: repetitions interleave the lookups (rotating their order), each
// timing windows of 8 bursts of 32 keys with the TSC; a repetition's figure
// is its median window, the result the median over repetitions with the
// min-max spread, and its ratio to ovs_generic's (below 1: faster).  --quick: few repetitions (the
// smoke run of tests/run.sh, where the answer check is what counts).  --broken-lookup adds a
// lookup that drops one found key per call: the answer check must fail the run (tests/run.sh
// checks that it does).
#include <x86intrin.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "perf/bench_classifier.hpp"
#include "reference/ovs_reference.h"
#include "standalone/builtin_lookups.hpp"

namespace ovscls::perf {
namespace {

// Lengths first_len..32, `per_len` rules each: rule k of length L is the
// network (L << 24) + (k << (32 - L)), as perf/p2p/make_pcaps.py's
// prefix_rules() (disjoint: the first octet is the length).  Packet i goes
// to rule i % n, its nw_dst spread inside the prefix.
Table prefix_table(const std::string& name, int first_len, int per_len) {
    Table t;
    t.name = name;
    struct Net {
        uint32_t net;
        int len;
    };
    std::vector<Net> nets;
    for (int k = 0; k < per_len; k++) {
        for (int len = first_len; len <= 32; len++) {
            nets.push_back({(uint32_t(len) << 24) + (uint32_t(k) << (32 - len)), len});
        }
    }
    const int n_lengths = 33 - first_len;
    t.what = std::to_string(nets.size()) + " nw_dst prefix rules, " + std::to_string(per_len) +
             " of each length /" + std::to_string(first_len) +
             "../32: " + std::to_string(n_lengths) + " subtables (4,2)";
    for (const Net& n : nets) {
        const uint32_t mask = n.len == 0 ? 0 : ~uint32_t{0} << (32 - n.len);
        t.rules.push_back(
            "recirc_id(0),in_port(1),packet_type(ns=0,id=0),"
            "eth(src=00:00:00:00:00:00/00:00:00:00:00:00,dst=00:00:00:00:00:00/00:00:00:00:00:00),"
            "eth_type(0x0800),ipv4(dst=" +
            ip(n.net) + "/" + ip(mask) + ",frag=no)");
    }
    for (size_t i = 0; i < kPoolBursts * kMaxBurst; i++) {
        const Net& n = nets[i % nets.size()];
        const uint64_t span = uint64_t{1} << (32 - n.len);
        const uint32_t dst = n.net + uint32_t((i / nets.size()) * 2654435761u % span);
        t.packets.push_back(
            "in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),"
            "ipv4(src=10.0.0.1,dst=" +
            ip(dst) + ",proto=17,tos=0,ttl=64,frag=no),udp(src=" +
            std::to_string(1024 + i % 50000) + ",dst=5000)");
    }
    return t;
}

// prefix-13's rules, then n attack megaflows (perf/p2p/make_pcaps.py's
// attack_frame(m): nw_src 10.0.0.1, nw_dst 10.0.0.2 and tp_src 1000 with
// bits i, j, k flipped, under the prefixes that tell them apart).
Table flood_table(size_t n, bool hit) {
    Table t = prefix_table("", 20, 17);
    t.name = "flood-" + std::to_string(n) + (hit ? "-hit" : "-miss");
    t.flood = true;
    t.what = std::to_string(n) + " attack masks after prefix-13's 13 subtables; keys " +
             (hit ? "of the attack frames (each matches its own subtable)"
                  : "of UDP flows to nowhere (match no subtable)");
    auto frame = [](size_t m) {
        const unsigned i = m % 32, j = (m / 32) % 32, k = (m / 1024) % 16;
        struct {
            uint32_t src, dst;
            unsigned sport, i, j, k;
        } f{0x0A000001u ^ (0x80000000u >> i),
            0x0A000002u ^ (0x80000000u >> j),
            1000u ^ (0x8000u >> k),
            i,
            j,
            k};
        return f;
    };
    for (size_t m = 0; m < n; m++) {
        const auto f = frame(m);
        const uint32_t ms = ~uint32_t{0} << (31 - f.i), md = ~uint32_t{0} << (31 - f.j);
        const unsigned mp = 0xffffu << (15 - f.k) & 0xffff;
        char tcp[64];
        std::snprintf(tcp, sizeof tcp, "tcp(src=%u/0x%04x)", f.sport & mp, mp);
        t.rules.push_back(
            "recirc_id(0),in_port(1),packet_type(ns=0,id=0),"
            "eth(src=00:00:00:00:00:00/00:00:00:00:00:00,dst=00:00:00:00:00:00/00:00:00:00:00:00),"
            "eth_type(0x0800),ipv4(src=" +
            ip(f.src & ms) + "/" + ip(ms) + ",dst=" + ip(f.dst & md) + "/" + ip(md) +
            ",proto=6,frag=no)," + tcp);
    }
    t.packets.clear();
    for (size_t p = 0; p < kPoolBursts * kMaxBurst; p++) {
        if (hit) {
            const auto f = frame(p * 7919 % n);
            t.packets.push_back(
                "in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),"
                "ipv4(src=" +
                ip(f.src) + ",dst=" + ip(f.dst) +
                ",proto=6,tos=0,ttl=64,frag=no),tcp(src=" + std::to_string(f.sport) + ",dst=4000)");
        } else {
            t.packets.push_back(
                "in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),"
                "ipv4(src=10.0.0.1,dst=" +
                ip(0x01000000u + uint32_t(p * 2654435761u % 0xffffff)) +
                ",proto=17,tos=0,ttl=64,frag=no),udp(src=" + std::to_string(1024 + p % 50000) +
                ",dst=5000)");
        }
    }
    return t;
}

// The corpus's in_port(1) megaflows; each is also the packet (its flow,
// composed into a frame by OVS).
Table corpus_table(const std::string& corpus) {
    Table t;
    t.name = "corpus";
    std::ifstream in(corpus);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.find("in_port(1),") == std::string::npos ||
            line.find("tunnel(") != std::string::npos) {
            continue;
        }
        t.rules.push_back(line);
    }
    for (size_t i = 0; i < kPoolBursts * kMaxBurst && !t.rules.empty(); i++) {
        t.packets.push_back(t.rules[i % t.rules.size()]);
    }
    t.what = std::to_string(t.rules.size()) +
             " in_port(1) megaflows of tests/corpus (several bridges' dumps)";
    return t;
}

// --broken-lookup, the answer check's negative control: OVS's generic, but
// the lowest key it finds in each call is dropped (reported as a miss).
uint32_t broken_lookup(dpcls_subtable* subtable, uint32_t keys_map, const netdev_flow_key* keys[],
                       dpcls_rule** rules) {
    uint32_t found = ovsb_ovs_generic_runtime()(subtable, keys_map, keys, rules);
    if (found) {
        rules[std::countr_zero(found)] = nullptr;
        found &= found - 1;
    }
    return found;
}
ovsb_lookup_func broken_probe(void*, const ProbeContext&) { return broken_lookup; }

int run_table(const Table& t, int reps, int windows, bool broken) {
    std::optional<Keys> keys = make_keys(t);
    if (!keys || t.rules.empty()) {
        return 1;
    }
    std::vector<Setup> setups;
    auto add = [&](const std::string& name, auto&& fill_registry, FusedProvider* fused = nullptr) {
        Setup s;
        s.name = name;
        s.fused = fused;
        s.registry = std::make_unique<LookupRegistry>();
        fill_registry(*s.registry);
        setups.push_back(std::move(s));
        return &setups.back();
    };
    add("ovs_generic", [](LookupRegistry& r) {
        r.add({"ovs_generic", 1, ovs_generic_probe, nullptr, nullptr});
    });
    add("specialized", [](LookupRegistry& r) {
        r.add(generic_descriptor());
        r.add(specialized_descriptor());
    });
    if (t.flood) {
        add("tail_generic", [](LookupRegistry& r) {
            r.add({"ovs_generic", 1, ovs_generic_probe, nullptr, nullptr});
        })->tail = true;
    }
    if (jit_built()) {
        add("jit_avx2", [](LookupRegistry& r) { add_builtin_lookups(r); });
    }
    if (jit_built() && t.flood) {
        add("tail_jit", [](LookupRegistry& r) { add_builtin_lookups(r); })->tail = true;
    } else if (jit_built()) {
        add(
            "jit_fused", [](LookupRegistry& r) { add_builtin_lookups(r); },
            &jit::process_engine().fused());
        // Speculation across subtables: the same code with an lfence before
        // each subtable (its own engine, so that the two never share code).
        auto serial = std::make_unique<jit::Engine>();
        serial->fused().serialize_for_measurement(true);
        jit::Engine* e = serial.get();
        add(
            "fused_lfence", [e](LookupRegistry& r) { add_builtin_lookups(r, e); }, &e->fused())
            ->engine = std::move(serial);
    }
    if (broken) {
        add("broken", [](LookupRegistry& r) {
            r.add({"broken", 1, broken_probe, nullptr, nullptr});
        });
    }
    for (Setup& s : setups) {
        if (!fill(s, t)) {
            return 1;
        }
        settle(s, *keys);
    }
    // Every lookup answers as OVS's generic does, key by key.
    int status = 0;
    for (Setup& s : setups) {
        size_t mismatches = 0;
        for (size_t i = 0; i < s.answers.size(); i++) {
            mismatches += s.answers[i] != setups[0].answers[i];
        }
        if (mismatches) {
            std::fprintf(stderr, "%s/%s: %zu of %zu keys answered differently from ovs_generic\n",
                         t.name.c_str(), s.name.c_str(), mismatches, s.answers.size());
            status = 1;
        }
    }
    if (status) {
        return status;
    }
    const size_t hits = static_cast<size_t>(std::count_if(
        setups[0].answers.begin(), setups[0].answers.end(), [](int a) { return a >= 0; }));
    // The loop over thousands of subtables takes ~100 us a key: fewer
    // windows there (each is still 256 keys).
    const size_t n_subtables = setups[0].subtables;
    const int table_windows =
        n_subtables > 100 ? std::max(4, windows * 100 / static_cast<int>(n_subtables)) : windows;
    for (int r = 0; r < reps; r++) {
        for (size_t i = 0; i < setups.size(); i++) {
            Setup& s = setups[(i + static_cast<size_t>(r)) % setups.size()];
            s.reps.push_back(timed_rep(s, *keys, table_windows));
            ovsb_rcu_quiesce();
        }
    }
    std::printf("\n%s: %s; %zu of %zu keys hit; every lookup answered as ovs_generic\n",
                t.name.c_str(), t.what.c_str(), hits, setups[0].answers.size());
    std::printf("  %-12s %9s %17s %6s %11s  %s\n", "lookup", "ticks/pkt", "(min-max)", "ratio",
                "lookups/hit", "subtables on");
    const double base = median(setups[0].reps);
    for (const Setup& s : setups) {
        const double m = median(s.reps);
        char spread[32];
        std::snprintf(spread, sizeof spread, "(%.1f-%.1f)",
                      *std::min_element(s.reps.begin(), s.reps.end()),
                      *std::max_element(s.reps.begin(), s.reps.end()));
        std::printf("  %-12s %9.1f %17s %6.2f %11.2f  %s\n", s.name.c_str(), m, spread,
                    base > 0 ? m / base : 0.0, s.lookups_per_hit, s.impls.c_str());
    }
    if (!jit_built()) {
        std::printf("  jit_avx2: not measured: %s\n", jit_build_note().c_str());
    }
    if (t.flood) {
        std::printf(
            "  writer side, ticks per rule: insert (building the table), remove (all); ticks\n"
            "  per ranking (sort_subtables() after a pass over the keys, median of 7)\n");
        for (Setup& s : setups) {
            const double removal = remove_all(s);
            std::printf("  %-12s insert %9.1f  remove %9.1f  ranking %11.0f\n", s.name.c_str(),
                        s.insert_ticks, removal, s.ranking_ticks);
        }
    }
    return 0;
}

}  // namespace
}  // namespace ovscls::perf

int main(int argc, char** argv) {
    using namespace ovscls::perf;
    int reps = 15, windows = 256;
    bool broken = false;
    std::string only;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--quick")) {
            reps = 3;
            windows = 32;
        } else if (!std::strcmp(argv[i], "--broken-lookup")) {
            broken = true;
        } else if (!std::strcmp(argv[i], "--table") && i + 1 < argc) {
            only = argv[++i];
        } else {
            std::fprintf(stderr,
                         "usage: dpcls_bench [--quick] [--broken-lookup] "
                         "[--table prefix-13|prefix-20|corpus|flood-N-hit|flood-N-miss]\n");
            return 2;
        }
    }
    std::printf(
        "dpcls_bench: whole-classifier lookups, TSC ticks per packet (median of %d "
        "repetitions, each the median of %d windows of %zu bursts of %u keys)\n",
        reps, windows, kWindowBursts, ovscls::kMaxBurst);
    std::vector<Table> tables = {prefix_table("prefix-13", 20, 17),
                                 prefix_table("prefix-20", 13, 17), corpus_table(CORPUS_FILE)};
    // The flood: 10000 masks take the loop ~10 s to settle; --quick stops at 1000.
    for (size_t n : {100, 1000, 10000}) {
        if (n > 1000 && reps < 15 && only.empty()) {
            continue;
        }
        tables.push_back(flood_table(n, true));
        tables.push_back(flood_table(n, false));
    }
    int status = 0;
    for (const Table& t : tables) {
        if (only.empty() || only == t.name) {
            status |= run_table(t, reps, windows, broken);
        }
    }
    return status;
}
