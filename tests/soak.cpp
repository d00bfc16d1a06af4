// soak.cpp: the lookup differential at volume (tests/soak.sh runs it; not in
// tests/run.sh, it takes minutes).
//
//   soak [--lookups N] [--seed S]     (default 10^8 lookups, seed 1)
//
// Round after round, for every fingerprint of lookups/fingerprints.def and
// then a random one (any (u0, u1) a key can hold): a subtable of OVS's
// structs with a random mask and 1-64 rules, then 64 bursts of 1-32 random
// keys of every kind (hit, miss, lacking some of the mask's words, carrying
// others; tests/random_subtable.hpp), each key against a PROT_NONE page
// (guarded_keys.hpp).  Every lookup the registry offers (generic,
// specialized where it has the fingerprint, jit_avx2 compiled at once),
// jit_avx2 with a fast path for a key's map, and OVS's avx512_gather where
// the CPU runs it must return exactly what OVS's generic returns; OVS's
// generic must agree with the brute-force reference on one burst in eight.
// A "lookup" is one key looked up by one implementation and compared.
//
// Prints the lookups per implementation, the subtables and fingerprints
// covered, the mismatches (the first ten in full) and the time; exits 1 on
// any mismatch.
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "count_arg.hpp"
#include "generators.hpp"
#include "lookup_fixture.hpp"
#include "random_subtable.hpp"

namespace ovscls::test {
namespace {

struct Fingerprint {
    uint32_t u0, u1;
};
constexpr Fingerprint kListed[] = {
#define FINGERPRINT(U0, U1, ORIGIN) {U0, U1},
#include "lookups/fingerprints.def"
#undef FINGERPRINT
};

struct Soak {
    LookupFixture f{"soak"};
    uint64_t lookups = 0, reference_keys = 0, reference_mismatches = 0, subtables = 0;
    std::set<std::pair<uint32_t, uint32_t>> fingerprints;

    void subtable(Gen& g, uint32_t u0, uint32_t u1) {
        RandomSubtable st(g, u0, u1, 1 + g.below(64), f.registry);
        subtables++;
        fingerprints.insert({u0, u1});
        std::vector<FlowKey> made(kMaxBurst);
        for (int burst = 0; burst < 64; burst++) {
            const uint32_t n = 1 + g.below(kMaxBurst);
            const netdev_flow_key* keys[kMaxBurst];
            for (uint32_t i = 0; i < n; i++) {
                made[i] = st.random_key(g);
                keys[i] = f.keys.place(i, made[i]);
            }
            const uint32_t all = n == 32 ? ~0u : (1u << n) - 1;
            const uint32_t keys_map =
                g.chance(75) ? all : (static_cast<uint32_t>(g.u64()) & all) | 1;
            // A new fast path every 16 bursts (a compile each).
            if (burst % 16 == 0) {
                impls_ = lookups_under_test(f, st.subtable, &made[g.below(n)].map);
            }
            uint32_t want_found;
            dpcls_rule* want[kMaxBurst];
            check_burst(f, impls_, st.subtable, keys_map, keys, &want_found, want, false);
            lookups += static_cast<uint64_t>(std::popcount(keys_map)) * impls_.size();
            if (burst % 8 == 0) {
                check_reference(st, made, keys_map, want_found, want);
            }
        }
        impls_.clear();
    }

    void check_reference(const RandomSubtable& st, const std::vector<FlowKey>& made,
                         uint32_t keys_map, uint32_t want_found, dpcls_rule* want[]) {
        for (uint32_t map = keys_map; map; map &= map - 1) {
            const uint32_t i = std::countr_zero(map);
            if (!st.reference.agrees_within_subtable(made[i], want_found >> i & 1, want[i])) {
                if (reference_mismatches++ < 10) {
                    std::fprintf(stderr, "soak: OVS's generic disagrees with the reference\n");
                }
            }
            reference_keys++;
        }
    }

  private:
    std::vector<NamedLookup> impls_;
};

}  // namespace
}  // namespace ovscls::test

int main(int argc, char** argv) {
    using namespace ovscls;
    using namespace ovscls::test;
    uint64_t target = 100'000'000, seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--lookups") && i + 1 < argc &&
            parse_count(argv[i + 1], &target)) {
            i++;
        } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc &&
                   parse_count(argv[i + 1], &seed)) {
            i++;
        } else {
            std::fprintf(stderr, "usage: soak [--lookups N (1..1e15)] [--seed S]\n");
            return 2;
        }
    }

    auto* soak = new Soak;  // never destroyed (lookup_fixture.hpp)
    Gen g(seed);
    const auto start = std::chrono::steady_clock::now();
    auto last_report = start;
    while (soak->lookups < target) {
        for (const Fingerprint& fp : kListed) {
            soak->subtable(g, fp.u0, fp.u1);
        }
        const uint32_t u1 = g.below(kUnit1Bits + 1);
        uint32_t u0 = g.below(std::min<uint32_t>(64, kMaxKeyValues - u1) + 1);
        soak->subtable(g, u0 + u1 == 0 ? 1 : u0, u1);
        const auto now = std::chrono::steady_clock::now();
        if (now - last_report > std::chrono::seconds(30)) {
            std::fprintf(stderr, "soak: %llu lookups so far, %llu mismatches\n",
                         (unsigned long long)soak->lookups, (unsigned long long)soak->f.mismatches);
            last_report = now;
        }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::printf(
        "soak: %llu differential lookups in %.0f s (seed %llu): %llu subtables of %zu "
        "fingerprints (all %zu of fingerprints.def and random ones)\n",
        (unsigned long long)soak->lookups, secs, (unsigned long long)seed,
        (unsigned long long)soak->subtables, soak->fingerprints.size(), std::size(kListed));
    std::printf("  bursts checked against OVS's generic:");
    for (const auto& [name, n] : soak->f.checked) {
        std::printf(" %s %llu", name.c_str(), (unsigned long long)n);
    }
    std::printf("\n  OVS's generic against the reference: %llu keys, %llu disagreements\n",
                (unsigned long long)soak->reference_keys,
                (unsigned long long)soak->reference_mismatches);
    std::printf("  mismatches: %llu\n", (unsigned long long)soak->f.mismatches);
    return soak->f.mismatches || soak->reference_mismatches ? 1 : 0;
}
