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

}  // namespace ovscls::test
