// microbench: one subtable lookup over 32-packet bursts, in TSC ticks per
// packet, for OVS 3.1's own lookups and this project's, side by side.
//
// For every subtable case (subtable_cases.hpp) x {1, 1000, 100000} rules x
// {all hit, all miss}, each implementation looks up the same bursts of the
// same subtable.  Google Benchmark repeats every measurement and, with
// --benchmark_enable_random_interleaving, interleaves the repetitions of all
// implementations so that drift on a shared machine spreads over all of
// them; perf/table.py turns the medians into the comparison table.
//
// Implementations:
//   ovs_generic_runtime  OVS's generic with run-time block counts
//   ovs_generic          OVS's generic as its probe picks it: specialized for
//                        its eight fingerprints, run-time otherwise (ratio base)
//   ovs_avx512_gather    OVS's AVX512 gather (SSE4.2 build, AVX512F+BMI2 CPU)
//   generic, specialized this project's registry entries
//   jit_avx2             this project's JIT, in the tier the classifier would
//                        give a hot subtable: compiled, run over the key pool
//                        once (its slow path samples the packets' map), then
//                        re-probed, which recompiles it with that fast path
//
// An implementation this machine cannot run (avx512_gather without AVX512,
// jit_avx2 without AVX2) is not measured; the output's context says why
// ("n/a ovs_avx512_gather": "CPU lacks AVX512F"), and table.py prints n/a
// with that reason instead of leaving its column out.
#include <benchmark/benchmark.h>
#include <valgrind/callgrind.h>
#include <x86intrin.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <regex>

#include "classifier/miniflow.hpp"
#include "classifier/registry.hpp"
#include "jit/engine.hpp"
#include "lookups/lookups.hpp"
#include "reference/ovs_reference.h"
#include "standalone/builtin_lookups.hpp"
#include "subtable_cases.hpp"

namespace ovscls::perf {
namespace {

constexpr size_t kPoolBursts = 256;  // bursts cycled through per measurement

struct Workload {
    dpcls_subtable* subtable;
    std::vector<dpcls_rule*> rules;
    std::vector<FlowKey> keys;  // kPoolBursts * 32
    std::vector<const netdev_flow_key*> key_ptrs;
};

std::unique_ptr<Workload> build(const MaskCase& c, size_t n_rules, bool hit) {
    auto w = std::make_unique<Workload>();
    std::mt19937_64 rng(n_rules * 31 + c.u0 * 7 + c.u1);
    const FullFlow m = expand(c.mask);
    auto random_flow = [&] {
        std::vector<uint64_t> f = c.base_flow;
        for (size_t i = 0; i < kFlowU64s; i++) {
            // Outside the mask: the frame's value with some noise; inside:
            // random, so that rules differ.
            f[i] = (f[i] & m[i]) ^ (rng() & m[i]) ^ (rng() & ~m[i] & 0xffff);
        }
        return f;
    };
    w->subtable = ovsb_subtable_create(ovs(&c.mask));
    std::vector<std::vector<uint64_t>> flows;
    size_t duplicates = 0;
    while (w->rules.size() < n_rules) {
        std::vector<uint64_t> f = random_flow();
        dpcls_rule* rule = ovsb_rule_alloc();
        ovsb_key_init_masked(ovs(&view(rule)->flow), f.data(), ovs(&c.mask));
        if (ovsb_subtable_find(w->subtable, ovs(&view(rule)->flow))) {
            ovsb_rule_free(rule);
            if (++duplicates > 1000 * n_rules) {
                break;  // the mask admits fewer distinct rules than asked
            }
            continue;
        }
        ovsb_subtable_insert(w->subtable, rule);
        w->rules.push_back(rule);
        flows.push_back(std::move(f));
    }
    // Keys: hits drawn from the rules, misses from fresh random flows.
    const ovsb_lookup_func truth = ovsb_ovs_generic_probe(c.u0, c.u1);
    for (size_t b = 0; b < kPoolBursts; b++) {
        for (size_t i = 0; i < kMaxBurst; i++) {
            std::vector<uint64_t> f = hit ? flows[rng() % flows.size()] : random_flow();
            if (hit) {  // vary the words the mask ignores
                for (size_t k = 0; k < kFlowU64s; k++) f[k] ^= rng() & ~m[k] & 0xff00;
            }
            w->keys.push_back(make_key(c.packet_map, f.data()));
        }
    }
    for (const FlowKey& k : w->keys) w->key_ptrs.push_back(ovs(&k));
    // The workload is what it claims: every key hits, or every key misses.
    for (size_t b = 0; b < kPoolBursts; b++) {
        dpcls_rule* rules[kMaxBurst];
        const uint32_t found = truth(w->subtable, ~0u, &w->key_ptrs[b * kMaxBurst], rules);
        if (found != (hit ? ~0u : 0u)) {
            std::fprintf(stderr, "workload %s/%zu/%s: burst %zu found %08x\n", c.name.c_str(),
                         n_rules, hit ? "hit" : "miss", b, found);
            std::exit(1);
        }
    }
    view(w->subtable)->hit_cnt = 0;
    return w;
}

// The implementation answers as OVS's generic on the whole pool: a
// benchmark of a wrong lookup would measure nothing.
bool agrees_with_ovs(const Workload& w, const MaskCase& c, ovsb_lookup_func fn) {
    const ovsb_lookup_func truth = ovsb_ovs_generic_probe(c.u0, c.u1);
    for (size_t b = 0; b < kPoolBursts; b++) {
        dpcls_rule* want[kMaxBurst] = {};
        dpcls_rule* got[kMaxBurst] = {};
        const netdev_flow_key* const* keys = &w.key_ptrs[b * kMaxBurst];
        const uint32_t want_found =
            truth(w.subtable, ~0u, const_cast<const netdev_flow_key**>(keys), want);
        const uint32_t found = fn(w.subtable, ~0u, const_cast<const netdev_flow_key**>(keys), got);
        if (found != want_found || !std::equal(want, want + kMaxBurst, got)) {
            return false;
        }
    }
    view(w.subtable)->hit_cnt = 0;
    return true;
}

// A ranking's re-probe of jit_avx2, and the next one once the compiler
// thread has finished what the first asked for.
ovsb_lookup_func probe_settled(const LookupImpl& impl, const ProbeContext& ctx) {
    impl.probe(ctx);
    jit::process_engine().drain();
    return impl.probe(ctx);
}

// jit_avx2 as a hot subtable runs it: tier 1, one pass over the pool, then
// the re-probes that tier it up to the fast path.
ovsb_lookup_func hot_jit(const LookupImpl& impl, Workload& w, const ProbeContext& ctx) {
    ovsb_lookup_func fn = probe_settled(impl, ctx);
    if (!fn) {
        return nullptr;
    }
    dpcls_rule* rules[kMaxBurst];
    for (size_t b = 0; b < kPoolBursts; b++) {
        fn(w.subtable, ~0u, &w.key_ptrs[b * kMaxBurst], rules);
    }
    view(w.subtable)->hit_cnt = 0;
    return probe_settled(impl, ctx);
}

// Every burst of the pool once, so that caches hold what a steady-state PMD
// thread would hold.
[[gnu::noinline]] void warm_up(Workload* w, ovsb_lookup_func fn) {
    dpcls_rule* rules[kMaxBurst];
    for (size_t b = 0; b < kPoolBursts; b++) {
        benchmark::DoNotOptimize(fn(w->subtable, ~0u, &w->key_ptrs[b * kMaxBurst], rules));
    }
}

// One Google Benchmark iteration looks up kWindowBursts bursts and is timed
// with the TSC on its own; a repetition reports the median window.  On a
// shared machine a window that the hypervisor or another task interrupted
// is an outlier, and the median ignores it where a total would not.
constexpr size_t kWindowBursts = 8;

void run(benchmark::State& state, Workload* w, ovsb_lookup_func fn) {
    dpcls_rule* rules[kMaxBurst];
    warm_up(w, fn);
    std::vector<uint64_t> windows;
    windows.reserve(1 << 16);
    size_t burst = 0;
    for (auto _ : state) {
        const uint64_t start = __rdtsc();
        for (size_t i = 0; i < kWindowBursts; i++) {
            const uint32_t found = fn(w->subtable, ~0u, &w->key_ptrs[burst * kMaxBurst], rules);
            benchmark::DoNotOptimize(found);
            benchmark::DoNotOptimize(rules);
            burst = (burst + 1) % kPoolBursts;
        }
        windows.push_back(__rdtsc() - start);
    }
    std::nth_element(windows.begin(), windows.begin() + windows.size() / 2, windows.end());
    state.counters["ticks_per_pkt"] = static_cast<double>(windows[windows.size() / 2]) /
                                      static_cast<double>(kWindowBursts * kMaxBurst);
}

// --count mode (perf/instructions.sh runs it under callgrind): no timing;
// `bursts` lookups of the pool, in this function only, so that callgrind
// collects exactly them (its client requests are no-ops outside valgrind).
[[gnu::noinline]] void count_bursts(Workload* w, ovsb_lookup_func fn, size_t bursts) {
    dpcls_rule* rules[kMaxBurst];
    for (size_t b = 0; b < bursts; b++) {
        benchmark::DoNotOptimize(
            fn(w->subtable, ~0u, &w->key_ptrs[(b % kPoolBursts) * kMaxBurst], rules));
    }
}

// Why OVS's avx512_gather probe declined every case on this machine.
std::string why_no_avx512_gather() {
    if (OVSCLS_OVS_VERSION >= 40000) {
        return "removed in OVS 4.0";
    }
    if (!ovsb_ovs_avx512_gather_built()) {
        return "not built into this OVS flavour (it needs OVS core built with SSE4.2)";
    }
    __builtin_cpu_init();
    std::string lacks;
    if (!__builtin_cpu_supports("avx512f")) lacks += "AVX512F";
    if (!__builtin_cpu_supports("bmi2")) lacks += lacks.empty() ? "BMI2" : " and BMI2";
    return lacks.empty() ? "its probe declined every case" : "CPU lacks " + lacks;
}

// The JIT's decline lines (one per reason), to say why it is not measured.
std::string& jit_declines() {
    static std::string lines;
    return lines;
}

}  // namespace
}  // namespace ovscls::perf

int main(int argc, char** argv) {
    using namespace ovscls;
    using namespace ovscls::perf;
    std::string corpus = CORPUS_FILE;
    std::vector<size_t> rule_counts = {1, 1000, 100000};
    int repetitions = 9;
    size_t count = 0;     // --count=N: N bursts per implementation, no timing
    std::regex only("");  // --only=REGEX: with --count, the cases to run
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--quick")) {  // CI smoke run
            rule_counts = {1, 1000};
            repetitions = 3;
        } else if (!std::strncmp(argv[i], "--count=", 8)) {
            count = std::strtoul(argv[i] + 8, nullptr, 10);
        } else if (!std::strncmp(argv[i], "--only=", 7)) {
            only = std::regex(argv[i] + 7);
        }
    }
    // OVS's eight, the ones it leaves to run-time generic, and a few of ours.
    const std::vector<std::pair<uint32_t, uint32_t>> wanted = {
        {9, 4}, {9, 1}, {8, 1}, {5, 3}, {5, 2}, {5, 1}, {4, 1}, {4, 0}, {5, 0}, {4, 2}, {4, 3}};
    std::vector<MaskCase> cases = load_mask_cases(corpus, wanted);

    static std::vector<std::unique_ptr<Workload>> workloads;
    LookupRegistry& registry = builtin_registry();
    jit::process_engine().set_log(
        [](const char* line) {  // "jit_avx2 declines (cpu): ...; the next ..."
            const std::string text = line;
            jit_declines() += (jit_declines().empty() ? "" : " ") + text.substr(0, text.find(';'));
        });
    std::map<std::string, size_t> measured;  // implementation -> cases
    for (const MaskCase& c : cases) {
        for (size_t n_rules : rule_counts) {
            for (bool hit : {true, false}) {
                workloads.push_back(build(c, n_rules, hit));
                Workload* w = workloads.back().get();
                const ProbeContext ctx{c.u0, c.u1, w->subtable, UINT32_MAX};
                std::vector<std::pair<std::string, ovsb_lookup_func>> impls = {
                    {"ovs_generic_runtime", ovsb_ovs_generic_runtime()},
                    {"ovs_generic", ovsb_ovs_generic_probe(c.u0, c.u1)},
                    {"ovs_avx512_gather", ovsb_ovs_avx512_gather_probe(c.u0, c.u1)},
                };
                for (size_t i = 0; i < registry.size(); i++) {
                    const LookupImpl& impl = registry.at(i);
                    impls.push_back({impl.name, impl.name == "jit_avx2" ? hot_jit(impl, *w, ctx)
                                                                        : impl.probe(ctx)});
                }
                char name[256];
                for (auto& [impl, fn] : impls) {
                    measured[impl] += fn != nullptr;
                    if (!fn) continue;
                    if (!agrees_with_ovs(*w, c, fn)) {
                        std::fprintf(stderr, "%s disagrees with OVS on %s\n", impl.c_str(),
                                     c.name.c_str());
                        return 1;
                    }
                    std::snprintf(name, sizeof name, "%u,%u/%s/%zu/%s/%s", c.u0, c.u1,
                                  c.synthetic ? "synthetic" : "real", w->rules.size(),
                                  hit ? "hit" : "miss", impl.c_str());
                    if (count) {
                        if (std::regex_search(name, only)) {
                            warm_up(w, fn);
                            CALLGRIND_ZERO_STATS;
                            count_bursts(w, fn, count);
                            CALLGRIND_DUMP_STATS_AT(name);  // one dump per case, named
                        }
                        continue;
                    }
                    benchmark::RegisterBenchmark(name, run, w, fn)
                        ->Repetitions(repetitions)
                        ->ReportAggregatesOnly(true)
                        ->MinTime(0.01);
                }
            }
        }
    }
    for (const MaskCase& c : cases) {
        std::fprintf(stderr, "case (%u,%u) %s: %s\n", c.u0, c.u1,
                     c.synthetic ? "synthetic mask" : "real megaflow", c.name.c_str());
    }
    for (const auto& [impl, cases] : measured) {
        if (cases) continue;
        const std::string why = impl == "ovs_avx512_gather" ? why_no_avx512_gather()
                                : impl == "jit_avx2" && !jit_declines().empty()
                                    ? jit_declines()
                                    : "its probe declined every case";
        std::fprintf(stderr, "%s: not measured: %s\n", impl.c_str(), why.c_str());
        if (!count) {
            benchmark::AddCustomContext("n/a " + impl, why);
        }
    }
    if (count) {
        return 0;
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
