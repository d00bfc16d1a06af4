// lookup_impls.hpp: every lookup implementation a test compares for one
// subtable: OVS 3.1's own (the truth is OVS's generic as its registry entry
// picks it) and each entry of this project's registry whose probe accepts.
//
// Entries are probed as for a hot subtable, so the JIT compiles (the first
// probe asks the compiler thread, the one after it drained installs the
// code): its first tier (slow path only) as the entry, and a second variant whose fast path
// expects the subtable's own mask map, so that keys carrying exactly the
// mask's words take the fast path and all others the slow one.  Call the
// registry's release(subtable, nullptr) before the subtable goes away.  The
// registry's jit_avx2 must be the process engine's (builtin_registry()).
//
// Which CPU-dependent lookups are in the list is decided by the CPU
// (cpu_case.hpp), not by their probes: a probe that declines where the CPU
// can run its code, or accepts where it cannot, fails the calling test.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <string>
#include <vector>

#include "classifier/layout.hpp"
#include "classifier/registry.hpp"
#include "cpu_case.hpp"
#include "lookup_check.hpp"
#include "reference/ovs_reference.h"
#include "standalone/builtin_lookups.hpp"
#if OVSCLS_WITH_JIT
#include "jit/engine.hpp"
#endif

namespace ovscls::test {

inline std::vector<NamedLookup> lookups_for(const dpcls_subtable* subtable,
                                            const LookupRegistry& registry) {
    const Subtable& s = *view(subtable);
    const uint32_t blocks = s.u0_bits + s.u1_bits;
    std::vector<NamedLookup> out;
    out.push_back({"ovs_generic_runtime", ovsb_ovs_generic_runtime(), false});

    const Availability avx512 = ovs_avx512_gather_availability();
    const ovsb_lookup_func avx512_fn = ovsb_ovs_avx512_gather_probe(s.u0_bits, s.u1_bits);
    EXPECT_EQ(avx512_fn != nullptr, avx512.available && blocks <= kOvsAvx512GatherMaxBlocks)
        << "OVS's avx512_gather probe on (" << s.u0_bits << "," << s.u1_bits << "), where "
        << avx512.why;
    if (avx512_fn) {
        out.push_back({"ovs_avx512_gather", avx512_fn, false});
    }

    for (size_t i = 0; i < registry.size(); i++) {
        const LookupImpl& impl = registry.at(i);
        const ProbeContext hot{s.u0_bits, s.u1_bits, subtable, UINT32_MAX};
        ovsb_lookup_func fn = impl.probe(hot);
#if OVSCLS_WITH_JIT
        if (!fn && impl.name == "jit_avx2") {
            jit::process_engine().drain();  // the code asked for is ready
            fn = impl.probe(hot);
        }
#endif
        if (fn) {
            out.push_back({impl.name, fn, true});
        }
    }

#if OVSCLS_WITH_JIT
    if (registry.find("jit_avx2")) {
        const Availability jit = jit_avx2_availability();
        jit::Engine& engine = jit::process_engine();
        const bool compiled = engine.compiled_for(subtable) != nullptr;
        EXPECT_EQ(compiled, jit.available && blocks <= jit::kMaxBlocks)
            << "jit_avx2 on (" << s.u0_bits << "," << s.u1_bits << "), where " << jit.why << "\n"
            << engine.info();
        if (compiled) {
            const ovsb_lookup_func fn = engine.compile_now(subtable, s.mask.map);
            EXPECT_NE(fn, nullptr) << engine.info();
            if (fn) {
                out.push_back({"jit_avx2+fast", fn, true});
            }
        }
    }
#endif
    return out;
}

// Prints the lookups each implementation served, and fails when one the
// CPU can run served none: a lookup that declined everything must not pass
// as one that agreed everywhere.  `specialized` only where it has the
// fingerprints (`expect_specialized`).
inline void expect_every_implementation_served(const std::map<std::string, uint64_t>& by_impl,
                                               bool expect_specialized) {
    std::printf("lookups served:");
    for (const auto& [name, n] : by_impl) {
        std::printf(" %s %llu", name.c_str(), static_cast<unsigned long long>(n));
    }
    std::printf("\n");
    auto served = [&](const char* name) {
        const auto it = by_impl.find(name);
        return it == by_impl.end() ? 0 : it->second;
    };
    EXPECT_GT(served("ovs_generic_runtime"), 0u);
    EXPECT_GT(served("generic"), 0u);
    if (expect_specialized) {
        EXPECT_GT(served("specialized"), 0u);
    }
    const Availability avx512 = ovs_avx512_gather_availability();
    if (avx512.available) {
        EXPECT_GT(served("ovs_avx512_gather"), 0u);
    } else {
        std::printf("not checked: ovs_avx512_gather (%s)\n", avx512.why.c_str());
    }
#if OVSCLS_WITH_JIT
    const Availability jit = jit_avx2_availability();
    if (jit.available) {
        EXPECT_GT(served("jit_avx2"), 0u);
        EXPECT_GT(served("jit_avx2+fast"), 0u);
    } else {
        std::printf("not checked: jit_avx2 (%s)\n", jit.why.c_str());
    }
#endif
}

}  // namespace ovscls::test
