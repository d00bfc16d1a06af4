// tail_soak.cpp: the tail index against OVS's loop at volume (tests/soak.sh
// --tail runs it; not in tests/run.sh, it takes minutes).
//
//   tail_soak [--keys N] [--seed S]     (default 10^8 keys, seed 1)
//
// Round after round, a classifier whose tail a TuplePruningIndex serves,
// with a random configuration (head 0-8, minimum tail 1-32, a candidate
// bound of 2-64: small bounds send keys to the loop over the tail; the
// head fixed or following the hits), runs one of tests/tail_workloads.hpp's
// workloads: three times in five random tables churned by inserts,
// removals and rankings, once a mask flood of 64-640 attack masks, once a
// Tuple Space Explosion of a random shape (tse_shapes_workload).  Every burst, its keys against a
// PROT_NONE page, is looked up in the classifier and with OVS's loop over the same ranking
// (tests/ovs_loop.hpp): rule, lookups numerator, "all found" and every
// subtable's hit count must agree.  A "key" is one key looked up and
// compared; the keys the index itself served are counted apart, so that a
// pass cannot come from the loop alone.
//
// Prints the keys, those the index served and its probes, the workloads and
// the mismatches (the first ten in full) and the time; exits 1 on any
// mismatch or if the index served no key.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "classifier/classifier.hpp"
#include "count_arg.hpp"
#include "guarded_keys.hpp"
#include "ovs_loop.hpp"
#include "standalone/builtin_lookups.hpp"
#include "tail/tuple_pruning.hpp"
#include "tail_workloads.hpp"

namespace ovscls::test {
namespace {

struct TailSoak {
    LookupRegistry registry;
    GuardedKeys<kMaxBurst> guarded;
    uint64_t keys = 0, mismatches = 0, floods = 0, random_tables = 0, tse_shapes = 0;
    uint64_t served = 0, probes = 0, loops = 0, subtables = 0;

    TailSoak() { add_builtin_lookups(registry); }

    // One workload on a new classifier; false if it could not be built.
    enum class Kind { RandomTables, Flood, TseShape };
    bool round(Gen& g, Kind kind) {
        tail::TuplePruningConfig config;
        config.head = g.below(9);
        config.min_tail = 1 + g.below(32);
        config.max_candidates = g.chance(20) ? 2 + g.below(6) : 64;
        config.head_share = g.chance(30) ? 0.0 : 1.0 / (2 + g.below(31));
        auto owned = std::make_unique<tail::TuplePruningIndex>(config);
        tail::TuplePruningIndex* index = owned.get();
        Classifier cls(registry, nullptr, std::move(owned));
        auto check = [&](const std::vector<FlowKey>& batch, const char* what) {
            const auto ranked = cls.subtables();
            const uint32_t cnt = static_cast<uint32_t>(batch.size());
            const netdev_flow_key* ptrs[kMaxBurst];
            for (uint32_t i = 0; i < cnt; i++) {
                ptrs[i] = guarded.place(i, batch[i]);
            }
            const std::string difference = ovs_loop_difference(cls, ranked, ptrs, cnt);
            if (!difference.empty() && mismatches++ < 10) {
                std::fprintf(stderr,
                             "tail_soak: %s (head %zu, min_tail %zu, max_candidates %zu, %zu "
                             "subtables): %s\n",
                             what, config.head, config.min_tail, config.max_candidates,
                             ranked.size(), difference.c_str());
            }
            keys += cnt;
            ovsb_rcu_quiesce();
            return true;
        };
        const bool built = kind == Kind::Flood
                               ? mask_flood_workload(cls, g, 64 + g.below(577), 200, check)
                           : kind == Kind::TseShape ? tse_shapes_workload(cls, g, 200, check)
                                                    : random_tables_workload(cls, g, 8, check);
        const tail::TuplePruningStats st = cls.with_writer_lock([&] { return index->stats(); });
        served += st.keys;
        probes += st.probes;
        loops += st.loops;
        subtables += st.subtables + st.unindexed;
        (kind == Kind::Flood ? floods : kind == Kind::TseShape ? tse_shapes : random_tables)++;
        return built;
    }
};

}  // namespace
}  // namespace ovscls::test

int main(int argc, char** argv) {
    using namespace ovscls;
    using namespace ovscls::test;
    uint64_t target = 100'000'000, seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--keys") && i + 1 < argc && parse_count(argv[i + 1], &target)) {
            i++;
        } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc &&
                   parse_count(argv[i + 1], &seed)) {
            i++;
        } else {
            std::fprintf(stderr, "usage: tail_soak [--keys N (1..1e15)] [--seed S]\n");
            return 2;
        }
    }

    auto* soak = new TailSoak;  // never destroyed: OVS-RCU callbacks may still name it
    Gen g(seed);
    const auto start = std::chrono::steady_clock::now();
    auto last_report = start;
    uint64_t rounds = 0;
    while (soak->keys < target) {
        const uint64_t r = rounds++ % 5;
        if (!soak->round(g, r == 4   ? TailSoak::Kind::Flood
                            : r == 3 ? TailSoak::Kind::TseShape
                                     : TailSoak::Kind::RandomTables)) {
            std::fprintf(stderr, "tail_soak: a workload's table could not be built\n");
            return 1;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now - last_report > std::chrono::seconds(30)) {
            std::fprintf(stderr, "tail_soak: %llu keys so far, %llu mismatches\n",
                         (unsigned long long)soak->keys, (unsigned long long)soak->mismatches);
            last_report = now;
        }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "tail_soak: %llu keys checked against OVS's loop in %.0f s (seed %llu): %llu random "
        "tables, %llu mask floods and %llu TSE shapes, %llu subtables in all\n",
        (unsigned long long)soak->keys, secs, (unsigned long long)seed,
        (unsigned long long)soak->random_tables, (unsigned long long)soak->floods,
        (unsigned long long)soak->tse_shapes, (unsigned long long)soak->subtables);
    std::printf(
        "  the index served %llu keys with %llu probes (%.2f a key); %llu keys had too many "
        "candidates (the loop over the tail)\n",
        (unsigned long long)soak->served, (unsigned long long)soak->probes,
        soak->served ? double(soak->probes) / double(soak->served) : 0.0,
        (unsigned long long)soak->loops);
    std::printf("  mismatches: %llu\n", (unsigned long long)soak->mismatches);
    if (!soak->served) {
        std::printf("  the index served no key: nothing of it was checked\n");
    }
    return soak->mismatches || !soak->served ? 1 : 0;
}
