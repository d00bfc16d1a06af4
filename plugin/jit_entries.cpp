// jit_entries.cpp: the `jit_avx2` entry points ovs-vswitchd calls
// (patches/0004), in builds with the JIT (x86-64).  They all go to the
// process engine (jit/engine.hpp).
#include "classifier/layout.hpp"
#include "jit/engine.hpp"

// OVS's counts-only probe declines; the probe that sees the subtable and its
// hits compiles once the subtable is hot.
extern "C" ovsb_lookup_func dpcls_subtable_plugin_jit_probe(uint32_t, uint32_t) { return nullptr; }

extern "C" ovsb_lookup_func dpcls_subtable_plugin_jit_probe_subtable(dpcls_subtable* subtable,
                                                                     uint32_t hits) {
    const ovscls::Subtable& s = *ovscls::view(subtable);
    return ovscls::jit::process_engine().probe({s.u0_bits, s.u1_bits, subtable, hits});
}

extern "C" void dpcls_subtable_plugin_jit_release(dpcls_subtable* subtable,
                                                  ovsb_lookup_func in_use) {
    ovscls::jit::process_engine().release(subtable, in_use);
}

// Where the JIT's decline lines go: OVS's log (the patch passes a VLOG
// writer).
extern "C" void dpcls_subtable_plugin_jit_set_log(void (*sink)(const char* line)) {
    ovscls::jit::process_engine().set_log(sink);
}
