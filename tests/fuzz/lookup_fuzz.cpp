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
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "classifier/registry.hpp"
#include "generators.hpp"
#include "guarded_keys.hpp"
#include "lookup_check.hpp"
#include "random_subtable.hpp"
#include "standalone/builtin_lookups.hpp"
#include "wx_filter.hpp"
#if OVSCLS_WITH_JIT
#include "jit/engine.hpp"
#endif

namespace ovscls::test {
namespace {

// The registry under test, with an engine of its own whose compile rate is
// unbounded (the process engine's 1000/s would decline most inputs).
struct Fixture {
#if OVSCLS_WITH_JIT
    jit::Engine engine{[] {
        jit::EngineOptions options;
        options.config.cache.compiles_per_sec = 1u << 30;
        return options;
    }()};
#endif
    LookupRegistry registry;
    GuardedKeys<kMaxBurst> keys;

    Fixture() {
        std::string why;
        if (!install_wx_filter(&why)) {
            std::fprintf(stderr, "lookup_fuzz: not checked: W^X by the kernel (%s)\n", why.c_str());
        }
#if OVSCLS_WITH_JIT
        add_builtin_lookups(registry, &engine);
#else
        add_builtin_lookups(registry);
#endif
    }
};

// Bursts each implementation was checked on, printed at exit: a run in
// which jit_avx2 (or any other) was never checked says so.
std::map<std::string, uint64_t>& checked() {
    static auto* counts = new std::map<std::string, uint64_t>;
    return *counts;
}
uint64_t inputs = 0;

void print_checked() {
    std::fprintf(stderr, "lookup_fuzz: %llu inputs; bursts checked against OVS's generic:",
                 (unsigned long long)inputs);
    for (const char* name :
         {"generic", "specialized", "jit_avx2", "jit_avx2+fast", "ovs_avx512_gather"}) {
        const auto it = checked().find(name);
        std::fprintf(stderr, " %s %llu", name,
                     (unsigned long long)(it == checked().end() ? 0 : it->second));
    }
    std::fprintf(stderr, "\n");
}

Fixture& fixture() {
    static Fixture* f = [] {
        std::atexit(print_checked);
        return new Fixture;  // never destroyed: OVS-RCU may still free code
    }();
    return *f;
}

[[noreturn]] void mismatch(const std::string& name, const dpcls_subtable* subtable,
                           uint32_t keys_map, uint32_t want, uint32_t got) {
    const Subtable& s = *view(subtable);
    std::fprintf(stderr,
                 "lookup_fuzz: %s differs from OVS's generic on (%u,%u), mask map "
                 "%016llx %016llx, keys_map %08x: found %08x, OVS %08x\n",
                 name.c_str(), s.u0_bits, s.u1_bits, (unsigned long long)s.mask.map.bits[0],
                 (unsigned long long)s.mask.map.bits[1], keys_map, got, want);
    std::abort();
}

}  // namespace
}  // namespace ovscls::test

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace ovscls;
    using namespace ovscls::test;
    Fixture& f = fixture();
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

    // The implementations, probed as for a hot subtable.
    std::vector<NamedLookup> impls;
    const Subtable& s = *view(st.subtable);
    const ProbeContext hot{s.u0_bits, s.u1_bits, st.subtable, UINT32_MAX};
    for (size_t i = 0; i < f.registry.size(); i++) {
        const LookupImpl& impl = f.registry.at(i);
        ovsb_lookup_func fn = impl.probe(hot);
#if OVSCLS_WITH_JIT
        if (!fn && impl.name == "jit_avx2") {
            f.engine.drain();
            fn = impl.probe(hot);
        }
#endif
        if (fn) {
            impls.push_back({impl.name, fn, true});
        }
    }
#if OVSCLS_WITH_JIT
    if (f.engine.compiled_for(st.subtable)) {
        // A fast path for the mask's map, a key's map or any map at all.
        MiniflowMap expected = s.mask.map;
        if (g.chance(50)) {
            expected = made[g.below(n)].map;
        } else if (g.chance(30)) {
            expected = {{g.u64(), g.u64() & ((uint64_t{1} << kUnit1Bits) - 1)}};
        }
        if (ovsb_lookup_func fn = f.engine.compile_now(st.subtable, expected)) {
            impls.push_back({"jit_avx2+fast", fn, true});
        }
    }
#endif
    if (ovsb_lookup_func fn = ovsb_ovs_avx512_gather_probe(s.u0_bits, s.u1_bits)) {
        impls.push_back({"ovs_avx512_gather", fn, false});
    }

    dpcls_rule* want[kMaxBurst];
    std::fill(std::begin(want), std::end(want), kUnset);
    const uint32_t want_found = ovs_truth(st.subtable)(st.subtable, keys_map, keys, want);
    for (const NamedLookup& impl : impls) {
        dpcls_rule* got[kMaxBurst];
        std::fill(std::begin(got), std::end(got), kUnset);
        const uint32_t got_found = impl.fn(st.subtable, keys_map, keys, got);
        if (!same_result(got_found, got, want_found, want)) {
            mismatch(impl.name, st.subtable, keys_map, want_found, got_found);
        }
        checked()[impl.name]++;
    }
    inputs++;
    return 0;
}
