// builtin_lookups.hpp: the composition root of the standalone library (what
// tests, benchmarks and other programs link): which lookup implementations
// a registry holds, in which order, at which priority.
//
// In ovs-vswitchd the same wiring is OVS's subtable_lookups[] table, which
// patches/ extends with the plugin's probes; nothing here is linked there.
//
//   generic      lookups/lookups.hpp
//   specialized  lookups/lookups.hpp
//   jit_avx2     jit/engine.hpp, only when the JIT is built (OVSCLS_JIT, ON
//                on x86-64 and OFF elsewhere)
//
// at the library priorities of classifier/lookup_table.h.
#pragma once

#include <string>

#include "classifier/registry.hpp"

namespace ovscls {

namespace jit {
class Engine;
}

// Adds the entries above to `registry`, in that order; jit_avx2 served by
// `engine` (null: the process engine, jit::process_engine()).
void add_builtin_lookups(LookupRegistry& registry, jit::Engine* engine = nullptr);

// A process-wide registry holding them, created on first use.
LookupRegistry& builtin_registry();

// True when this build has the JIT (jit_avx2 is in the registry).
bool jit_built();
// One line saying whether jit_avx2 is in this build, and why not.
std::string jit_build_note();

}  // namespace ovscls
