// jit_flood: what a flood of new masks (Tuple Space Explosion,
// CVE-2019-25076) costs the JIT, in memory and CPU.
//
// A classifier receives 10000 rules, each under its own mask, and every
// subtable is then hit like a hot one (64 packets each, through its own
// lookup function, as a PMD thread would after the ranking placed it).
// Ranking intervals follow, one second apart as OVS's are: each re-probes
// the hot subtables, which asks the JIT's compiler thread for code (and
// installs what it finished since the last ranking).  The same masks go into
// a second classifier whose only lookup is `generic`, ranked right before
// the JIT's in each interval: the ranking call's time with jit_avx2 is
// compared with generic's side by side.  Two floods:
//
//   same-fields    masks differ only in their values (prefix lengths over
//                  the same flow words, as attack traffic against one ACL
//                  makes them): one mask map, so all subtables share code;
//   random-fields  every mask matches its own set of words: every subtable
//                  needs its own code, and the budget and rate limits bound
//                  what the JIT spends.
//
// Per interval it prints: subtables on JIT code, compiles, requests still
// pending, declines by reason, code bytes, mapped bytes, the compile time
// (on the compiler thread), and the ranking call's wall time with jit_avx2
// and with generic; at the end the process's RSS growth and the JIT's state.
//
// Fails (exit 1) when a packet misses its rule or when any compile ran on a
// thread other than the compiler thread (the ranking thread stands for a PMD
// thread, which must never compile): a count, not a time.
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
#include "jit/engine.hpp"
#include "lookups/lookups.hpp"
#include "standalone/builtin_lookups.hpp"

namespace ovscls::perf {
namespace {

constexpr int kMasks = 10000;
constexpr int kIntervals = 4;

// The process's mappings (VMAs): each code page may be one of its own, and
// vm.max_map_count bounds them all (jit::code_budget_ceiling()).
long vma_count() {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    long n = 0;
    while (std::getline(maps, line)) {
        n++;
    }
    return n;
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

double elapsed_ms(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
        .count();
}

// Each subtable of `cls` hit twice by `packet`'s burst through the lookup it
// has now; false when a packet missed its rule.
struct Target {
    dpcls_subtable* subtable;
    dpcls_rule* rule;
    FlowKey packet;
};
bool hit_all(const std::vector<Target>& targets) {
    for (const Target& t : targets) {
        const ovsb_lookup_func fn = view(t.subtable)->lookup_func.load();
        const netdev_flow_key* keys[kMaxBurst];
        std::fill(std::begin(keys), std::end(keys), ovs(&t.packet));
        dpcls_rule* rules[kMaxBurst];
        for (int rep = 0; rep < 2; rep++) {
            if (fn(t.subtable, ~0u, keys, rules) != ~0u || rules[kMaxBurst - 1] != t.rule) {
                return false;
            }
        }
    }
    return true;
}

int flood(const char* name, bool same_fields, const jit::JitConfig& config) {
    std::mt19937_64 rng(same_fields ? 1 : 2);
    jit::EngineOptions options;
    options.config = config;
    jit::Engine engine(options);
    LookupRegistry jit_registry, generic_registry;
    add_builtin_lookups(jit_registry, &engine);
    generic_registry.add(generic_descriptor());
    Classifier cls(jit_registry), base(generic_registry);
    const long rss_before = rss_kib();
    const long vmas_before = vma_count();
    const jit::JitStats before = engine.stats();

    // The masks, one rule each, and a packet per rule.
    const uint64_t fixed_map[2] = {random_bits(rng, 4, 64), random_bits(rng, 1, kUnit1Bits)};
    std::set<std::vector<uint64_t>> seen;
    // Per mask: its subtable, its rule and a packet that hits it, in both.
    std::vector<Target> targets, base_targets;
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
        dpcls_rule* base_rule = nullptr;
        if (!cls.insert(mask, flow.data(), &rule) || !base.insert(mask, flow.data(), &base_rule)) {
            std::fprintf(stderr, "%s: insert failed\n", name);
            return 1;
        }
        // The packet carries the mask's words and a few more.
        MiniflowMap packet_map = mask.map;
        packet_map.bits[0] |= random_bits(rng, 3, 64);
        const FlowKey packet = make_key(packet_map, flow.data());
        targets.push_back({ovs(subtable_of(view(rule))), rule, packet});
        base_targets.push_back({ovs(subtable_of(view(base_rule))), base_rule, packet});
        if (targets.size() % 100 == 0) {
            ovsb_rcu_quiesce();  // as a PMD thread does: lets RCU free old pvectors
        }
    }
    ovsb_rcu_quiesce();
    const long rss_inserted = rss_kib();
    std::printf("\n%s: %d masks, %zu subtables, RSS +%ld KiB after inserting\n", name, kMasks,
                cls.subtables().size(), rss_inserted - rss_before);
    std::printf("%-8s %7s %8s %7s %9s %9s %9s %9s %10s %11s %11s %7s\n", "interval", "on_jit",
                "compiles", "pending", "decl_rate", "decl_budg", "code_B", "mapped_B", "compile_ms",
                "rank_jit_ms", "rank_gen_ms", "ratio");

    for (int interval = 1; interval <= kIntervals; interval++) {
        // Every subtable is hit 64 times through the lookup it has now.
        if (!hit_all(targets) || !hit_all(base_targets)) {
            std::fprintf(stderr, "%s: a packet missed its rule\n", name);
            return 1;
        }
        // The ranking calls, side by side; each as a PMD thread runs it,
        // with the quiescent point after it.  Generic's first: the JIT's
        // ranking queues compiles, which the compiler thread starts once no
        // ranking runs (Engine::ranking_begin()), so they run after both,
        // as in a switch they run between its PMDs' rankings, and neither
        // call is timed beside a compile.
        auto t0 = std::chrono::steady_clock::now();
        base.sort_subtables();
        ovsb_rcu_quiesce();
        const double rank_generic_ms = elapsed_ms(t0);
        t0 = std::chrono::steady_clock::now();
        cls.sort_subtables();
        ovsb_rcu_quiesce();
        const double rank_jit_ms = elapsed_ms(t0);

        const jit::JitStats st = engine.stats();
        size_t on_jit = 0;
        for (const auto& s : cls.subtables()) {
            on_jit += s.impl == "jit_avx2";
        }
        auto declines = [&](jit::Decline d) {
            return st.declines[static_cast<int>(d)] - before.declines[static_cast<int>(d)];
        };
        std::printf(
            "%-8d %7zu %8llu %7llu %9llu %9llu %9llu %9llu %10.1f %11.1f %11.1f %7.2f\n", interval,
            on_jit, (unsigned long long)(st.cache.compiles - before.cache.compiles),
            (unsigned long long)st.pending,
            (unsigned long long)declines(jit::Decline::kCompileRate),
            (unsigned long long)declines(jit::Decline::kCodeBudget),
            (unsigned long long)st.cache.code_bytes, (unsigned long long)st.cache.mapped_bytes,
            (st.cache.compile_ns_total - before.cache.compile_ns_total) / 1e6, rank_jit_ms,
            rank_generic_ms, rank_jit_ms / rank_generic_ms);
        if (interval < kIntervals) {
            // OVS ranks once a second; quiescent meanwhile, as a PMD thread
            // is between its bursts (OVS-RCU waits for this thread now that
            // the JIT's compiler thread made the process multi-threaded).
            ovsb_rcu_quiesce_start();
            std::this_thread::sleep_for(std::chrono::seconds(1));
            ovsb_rcu_quiesce_end();
        }
    }
    const jit::JitStats st = engine.stats();
    const uint64_t compiles = st.cache.compiles - before.cache.compiles;
    std::printf(
        "%s: %llu compiles, %.1f us each on average, %.1f code bytes each; "
        "RSS +%ld KiB over the intervals\n",
        name, (unsigned long long)compiles,
        compiles ? (st.cache.compile_ns_total - before.cache.compile_ns_total) / 1e3 / compiles
                 : 0.0,
        double(st.cache.code_bytes) / std::max<uint64_t>(st.cache.live, 1),
        rss_kib() - rss_inserted);
    std::printf(
        "%s: process mappings (VMAs) %ld before the flood, %ld after (%.0f KiB of JIT code "
        "mapped; vm.max_map_count / 4 caps the budget at %llu bytes)\n",
        name, vmas_before, vma_count(), st.cache.mapped_bytes / 1024.0,
        (unsigned long long)jit::code_budget_ceiling());
    std::printf("%s", engine.info().c_str());
    if (st.cache.compiles_off_compiler) {
        std::fprintf(stderr, "%s: %llu compiles ran outside the compiler thread\n", name,
                     (unsigned long long)st.cache.compiles_off_compiler);
        return 1;
    }
    std::printf("%s: compiles outside the compiler thread: 0 (checked)\n", name);
    return 0;
}

}  // namespace
}  // namespace ovscls::perf

int main() {
    using namespace ovscls;
    std::string errors;
    const jit::JitConfig config = jit::JitConfig::from_env(&errors);
    if (!errors.empty()) {
        std::fprintf(stderr, "jit_flood: %s\n", errors.c_str());
    }
    std::printf(
        "jit_flood: %d masks per flood; jit_avx2 %s, hot after %u hits, %u compiles/s, "
        "budget %zu bytes\n",
        perf::kMasks, config.enabled ? "on" : "OFF", config.hot_hits, config.cache.compiles_per_sec,
        config.cache.code_budget_bytes);
    int rc = perf::flood("same-fields", true, config);
    rc |= perf::flood("random-fields", false, config);
    return rc;
}
