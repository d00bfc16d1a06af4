// jit_flood: what a flood of new masks (Tuple Space Explosion,
// CVE-2019-25076) costs the JIT, in memory and CPU.
//
// A classifier receives 10000 rules, each under its own mask, and every
// subtable is then hit like a hot one (64 packets each, through its own
// lookup function, as a PMD thread would after the ranking placed it).
// Ranking intervals follow, one second apart as OVS's are: each re-probes
// the hot subtables, which asks the JIT for code.  Two floods:
//
//   same-fields    masks differ only in their values (prefix lengths over
//                  the same flow words, as attack traffic against one ACL
//                  makes them): one mask map, so all subtables share code;
//   random-fields  every mask matches its own set of words: every subtable
//                  needs its own code, and the budget and rate limits bound
//                  what the JIT spends.
//
// Per interval it prints: subtables on JIT code, compiles, declines by
// reason, code bytes, mapped bytes, the JIT's compile time and the writer's
// CPU time for the ranking call; and at the end the process's RSS growth.
// Every lookup result is checked (each packet must hit its rule).
#include <sys/resource.h>

#include <bit>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "classifier/classifier.hpp"
#include "classifier/miniflow.hpp"
#include "jit/jit_lookup.hpp"
#include "standalone/builtin_lookups.hpp"

namespace ovscls::perf {
namespace {

constexpr int kMasks = 10000;
constexpr int kIntervals = 4;

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long rss_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::atol(line.c_str() + 6);
        }
    }
    return -1;
}

// `count` distinct bits below `width`.
uint64_t random_bits(std::mt19937_64& rng, int count, int width) {
    uint64_t out = 0;
    while (std::popcount(out) < count) {
        out |= uint64_t{1} << (rng() % width);
    }
    return out;
}

FlowKey make_mask(const uint64_t map[2], const std::vector<uint64_t>& values) {
    FlowKey mask{};
    ovsb_mask_init_raw(ovs(&mask), map, values.data(), values.size());
    return mask;
}

int flood(const char* name, bool same_fields) {
    std::mt19937_64 rng(same_fields ? 1 : 2);
    Classifier cls(builtin_registry());
    const long rss_before = rss_kib();
    const jit::JitStats before = jit::stats();

    // The masks, one rule each, and a packet per rule.
    const uint64_t fixed_map[2] = {random_bits(rng, 4, 64), random_bits(rng, 1, kUnit1Bits)};
    std::set<std::vector<uint64_t>> seen;
    // Per mask: its subtable, its rule and a packet that hits it.
    struct Target {
        dpcls_subtable* subtable;
        dpcls_rule* rule;
        FlowKey packet;
    };
    std::vector<Target> targets;
    while (static_cast<int>(targets.size()) < kMasks) {
        uint64_t map[2] = {fixed_map[0], fixed_map[1]};
        if (!same_fields) {
            map[0] = random_bits(rng, 3 + rng() % 6, 64);
            map[1] = random_bits(rng, rng() % 4, kUnit1Bits);
        }
        const int n = std::popcount(map[0]) + std::popcount(map[1]);
        std::vector<uint64_t> values(n);
        for (auto& v : values) {
            v = ~uint64_t{0} << (rng() % 64);  // prefixes
        }
        std::vector<uint64_t> id = values;
        id.push_back(map[0]);
        id.push_back(map[1]);
        if (!seen.insert(id).second) {
            continue;
        }
        const FlowKey mask = make_mask(map, values);
        FullFlow flow{};
        for (auto& w : flow) {
            w = rng();
        }
        dpcls_rule* rule = nullptr;
        if (!cls.insert(mask, flow.data(), &rule)) {
            std::fprintf(stderr, "%s: insert failed\n", name);
            return 1;
        }
        // The packet carries the mask's words and a few more.
        MiniflowMap packet_map = mask.map;
        packet_map.bits[0] |= random_bits(rng, 3, 64);
        targets.push_back({ovs(subtable_of(view(rule))), rule, make_key(packet_map, flow.data())});
        if (targets.size() % 100 == 0) {
            ovsb_rcu_quiesce();  // as a PMD thread does: lets RCU free old pvectors
        }
    }
    ovsb_rcu_quiesce();
    const long rss_inserted = rss_kib();
    std::printf("\n%s: %d masks, %zu subtables, RSS +%ld KiB after inserting\n", name, kMasks,
                cls.subtables().size(), rss_inserted - rss_before);
    std::printf("%-9s %9s %9s %9s %9s %10s %10s %11s %11s %11s\n", "interval", "on_jit", "compiles",
                "decl_rate", "decl_budg", "code_B", "mapped_B", "compile_ms", "rank_ms",
                "rank_cpu_ms");

    for (int interval = 1; interval <= kIntervals; interval++) {
        // Every subtable is hit 64 times through the lookup it has now.
        for (const Target& t : targets) {
            const ovsb_lookup_func fn = view(t.subtable)->lookup_func.load();
            const netdev_flow_key* keys[kMaxBurst];
            std::fill(std::begin(keys), std::end(keys), ovs(&t.packet));
            dpcls_rule* rules[kMaxBurst];
            for (int rep = 0; rep < 2; rep++) {
                if (fn(t.subtable, ~0u, keys, rules) != ~0u || rules[kMaxBurst - 1] != t.rule) {
                    std::fprintf(stderr, "%s: a packet missed its rule\n", name);
                    return 1;
                }
            }
        }
        const double cpu0 = cpu_seconds();
        const auto wall0 = std::chrono::steady_clock::now();
        cls.sort_subtables();
        ovsb_rcu_quiesce();  // replaced code is unmapped after the grace period
        const double ranking_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0)
                .count();
        const double ranking_cpu_ms = (cpu_seconds() - cpu0) * 1e3;
        const jit::JitStats st = jit::stats();
        size_t on_jit = 0;
        for (const auto& s : cls.subtables()) {
            on_jit += s.impl == "jit_avx2";
        }
        auto declines = [&](jit::Decline d) {
            return st.declines[static_cast<int>(d)] - before.declines[static_cast<int>(d)];
        };
        std::printf("%-9d %9zu %9llu %9llu %9llu %10llu %10llu %11.1f %11.1f %11.1f\n", interval,
                    on_jit, (unsigned long long)(st.cache.compiles - before.cache.compiles),
                    (unsigned long long)declines(jit::Decline::kCompileRate),
                    (unsigned long long)declines(jit::Decline::kCodeBudget),
                    (unsigned long long)st.cache.code_bytes,
                    (unsigned long long)st.cache.mapped_bytes,
                    (st.cache.compile_ns_total - before.cache.compile_ns_total) / 1e6, ranking_ms,
                    ranking_cpu_ms);
        if (interval < kIntervals) {
            std::this_thread::sleep_for(std::chrono::seconds(1));  // OVS ranks once a second
        }
    }
    const jit::JitStats st = jit::stats();
    const uint64_t compiles = st.cache.compiles - before.cache.compiles;
    std::printf(
        "%s: %llu compiles, %.1f us each on average, %.1f code bytes each; "
        "RSS +%ld KiB over the intervals\n",
        name, (unsigned long long)compiles,
        compiles ? (st.cache.compile_ns_total - before.cache.compile_ns_total) / 1e3 / compiles
                 : 0.0,
        double(st.cache.code_bytes) / std::max<uint64_t>(st.cache.live, 1),
        rss_kib() - rss_inserted);
    return 0;
}

}  // namespace
}  // namespace ovscls::perf

int main() {
    using namespace ovscls;
    std::printf("jit_flood: %s", jit::info().c_str());
    int rc = perf::flood("same-fields", true);
    rc |= perf::flood("random-fields", false);
    std::printf("\n%s", jit::info().c_str());
    return rc;
}
