// lookup_fixture.hpp: what the fuzz targets (tests/fuzz/) and the soak
// (tests/soak.cpp) share: a registry with its own JIT engine, guarded key
// slots and the W^X filter (LookupFixture); the implementations to compare
// for one subtable (lookups_under_test()); and the check of one burst
// against OVS's generic (check_burst()).
//
// No GoogleTest: the callers report through stderr (a fuzz target aborts on
// the first difference so that libFuzzer keeps the input; the soak counts).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "classifier/registry.hpp"
#include "guarded_keys.hpp"
#include "lookup_check.hpp"
#include "standalone/builtin_lookups.hpp"
#include "wx_filter.hpp"
#if OVSCLS_WITH_JIT
#include "jit/engine.hpp"
#endif

namespace ovscls::test {

class LookupFixture {
  public:
    // `target` names the fuzz target in messages.  Never destroy one: OVS-RCU
    // may still free JIT code after the last input.
    explicit LookupFixture(const char* target) : target_(target) {
        std::string why;
        if (!install_wx_filter(&why)) {
            std::fprintf(stderr, "%s: not checked: W^X by the kernel (%s)\n", target, why.c_str());
        }
#if OVSCLS_WITH_JIT
        add_builtin_lookups(registry, &engine);
#else
        add_builtin_lookups(registry);
#endif
    }
    LookupFixture(const LookupFixture&) = delete;
    LookupFixture& operator=(const LookupFixture&) = delete;

#if OVSCLS_WITH_JIT
    // Unbounded compile rate (the process engine's 1000/s would decline
    // most inputs), and hot after 2 hits (a fuzz input's classifier sees
    // far fewer than the default 64 per ranking).
    jit::Engine engine{[] {
        jit::EngineOptions options;
        options.config.cache.compiles_per_sec = 1u << 30;
        options.config.hot_hits = 2;
        return options;
    }()};
#endif
    LookupRegistry registry;
    GuardedKeys<kMaxBurst> keys;

    // Bursts each implementation was checked on, for the exit line: a run in
    // which jit_avx2 (or any other) was never checked says so.
    std::map<std::string, uint64_t> checked;
    uint64_t mismatches = 0;  // when check_burst() does not abort
    const char* target() const { return target_; }

    void print_checked(const char* prefix) const {
        std::fprintf(stderr, "%s; bursts checked against OVS's generic:", prefix);
        for (const char* name :
             {"generic", "specialized", "jit_avx2", "jit_avx2+fast", "ovs_avx512_gather"}) {
            const auto it = checked.find(name);
            std::fprintf(stderr, " %s %llu", name,
                         (unsigned long long)(it == checked.end() ? 0 : it->second));
        }
        std::fprintf(stderr, "\n");
    }

  private:
    const char* target_;
};

// Every lookup the registry offers for `subtable`, probed as for a hot
// subtable (the JIT compiles at once); jit_avx2 a second time with a fast
// path for `fast_map` when given (its code must still handle every other
// map); OVS's avx512_gather where the CPU runs it.  Call
// f.registry.release(subtable, nullptr) before the subtable goes away.
inline std::vector<NamedLookup> lookups_under_test(LookupFixture& f, dpcls_subtable* subtable,
                                                   const MiniflowMap* fast_map) {
    std::vector<NamedLookup> impls;
    const Subtable& s = *view(subtable);
    const ProbeContext hot{s.u0_bits, s.u1_bits, subtable, UINT32_MAX};
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
    if (fast_map && f.engine.compiled_for(subtable)) {
        if (ovsb_lookup_func fn = f.engine.compile_now(subtable, *fast_map)) {
            impls.push_back({"jit_avx2+fast", fn, true});
        }
    }
#else
    (void)fast_map;
#endif
    if (ovsb_lookup_func fn = ovsb_ovs_avx512_gather_probe(s.u0_bits, s.u1_bits)) {
        impls.push_back({"ovs_avx512_gather", fn, false});
    }
    return impls;
}

// Prints what differed: an implementation's result on a burst.
inline void print_mismatch(const char* who, const NamedLookup& impl, const dpcls_subtable* subtable,
                           uint32_t keys_map, uint32_t want_found, uint32_t got_found) {
    const Subtable& s = *view(subtable);
    std::fprintf(stderr,
                 "%s: %s differs from OVS's generic on (%u,%u), mask map %016llx %016llx, "
                 "keys_map %08x: found %08x, OVS %08x\n",
                 who, impl.name.c_str(), s.u0_bits, s.u1_bits,
                 (unsigned long long)s.mask.map.bits[0], (unsigned long long)s.mask.map.bits[1],
                 keys_map, got_found, want_found);
}

// Looks the burst up with OVS's generic (the truth: its found map and rules
// go to want_found and want[]) and with each of `impls`, counting the bursts
// each was checked on in f.checked.  Returns how many implementations
// differed (counted in f.mismatches, the first ten printed); with
// `abort_on_mismatch`, prints the first difference and aborts instead.
inline uint32_t check_burst(LookupFixture& f, const std::vector<NamedLookup>& impls,
                            dpcls_subtable* subtable, uint32_t keys_map,
                            const netdev_flow_key* keys[], uint32_t* want_found,
                            dpcls_rule* want[kMaxBurst], bool abort_on_mismatch = true) {
    std::fill(want, want + kMaxBurst, kUnset);
    *want_found = ovs_truth(subtable)(subtable, keys_map, keys, want);
    uint32_t differed = 0;
    for (const NamedLookup& impl : impls) {
        dpcls_rule* got[kMaxBurst];
        std::fill(std::begin(got), std::end(got), kUnset);
        const uint32_t got_found = impl.fn(subtable, keys_map, keys, got);
        if (!same_result(got_found, got, *want_found, want)) {
            if (abort_on_mismatch || f.mismatches < 10) {
                print_mismatch(f.target(), impl, subtable, keys_map, *want_found, got_found);
            }
            if (abort_on_mismatch) {
                std::abort();
            }
            f.mismatches++;
            differed++;
        }
        f.checked[impl.name]++;
    }
    return differed;
}

}  // namespace ovscls::test
