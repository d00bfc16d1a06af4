// lookup_fuzz.cpp: libFuzzer target, the lookup differential.
//
// The input drives the project's own generators (tests/generators.hpp reads
// its decisions from the input bytes): a subtable of any fingerprint up to
// (64, 20) with a random mask and up to 8 rules, a burst of up to 32 keys of
// every kind (hit, miss, lacking some of the mask's words, carrying others),
// a keys_map, and an expected map for the JIT's fast path.  Every lookup the
// registry offers for the subtable (generic, specialized where it has the
// fingerprint, jit_avx2's first tier), jit_avx2 with that fast path, and
// OVS's own avx512_gather where the CPU runs it, must return exactly what
// OVS's generic returns.  A difference aborts (libFuzzer keeps the input).
//
// Key contract (classifier/layout.hpp): a lookup reads a key's header and
// values and at most the one word after them.  Each key of the burst is
// copied so that a PROT_NONE page begins right after that word
// (guarded_keys.hpp): generated code reading further faults, which
// AddressSanitizer could not see (it does not instrument JIT code).  A
// seccomp filter (wx_filter.hpp) refuses any writable and executable
// mapping meanwhile.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "generators.hpp"
#include "lookup_fixture.hpp"
#include "random_subtable.hpp"

namespace ovscls::test {
namespace {

uint64_t inputs = 0;

LookupFixture& fixture() {
    static LookupFixture* f = [] {
        std::atexit([] {
            char prefix[64];
            std::snprintf(prefix, sizeof prefix, "lookup_fuzz: %llu inputs",
                          (unsigned long long)inputs);
            fixture().print_checked(prefix);
        });
        return new LookupFixture("lookup_fuzz");  // never destroyed (lookup_fixture.hpp)
    }();
    return *f;
}

}  // namespace
}  // namespace ovscls::test

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace ovscls;
    using namespace ovscls::test;
    LookupFixture& f = fixture();
    Gen g(data, size);

    // Any fingerprint a subtable can have: a mask holds at most as many
    // words as a packet key (a rule's key is a netdev_flow_key too).
    const uint32_t u1 = g.below(kUnit1Bits + 1);
    uint32_t u0 = g.below(std::min<uint32_t>(64, kMaxKeyValues - u1) + 1);
    u0 = u0 + u1 == 0 ? 1 : u0;
    RandomSubtable st(g, u0, u1, g.below(9), f.registry);

    const uint32_t n = 1 + g.below(kMaxBurst);
    std::vector<FlowKey> made;
    made.reserve(n);
    const netdev_flow_key* keys[kMaxBurst];
    for (uint32_t i = 0; i < n; i++) {
        made.push_back(st.random_key(g));
        keys[i] = f.keys.place(i, made.back());
    }
    const uint32_t all = n == 32 ? ~0u : (1u << n) - 1;
    uint32_t keys_map = g.chance(50) ? all : static_cast<uint32_t>(g.u64()) & all;
    keys_map = keys_map ? keys_map : 1;

    // jit_avx2's fast path for the mask's map, a key's map or any map.
    MiniflowMap fast = view(st.subtable)->mask.map;
    if (g.chance(50)) {
        fast = made[g.below(n)].map;
    } else if (g.chance(30)) {
        fast = {{g.u64(), g.u64() & ((uint64_t{1} << kUnit1Bits) - 1)}};
    }
    const std::vector<NamedLookup> impls = lookups_under_test(f, st.subtable, &fast);

    uint32_t want_found;
    dpcls_rule* want[kMaxBurst];
    check_burst(f, impls, st.subtable, keys_map, keys, &want_found, want);
    inputs++;
    return 0;
}
