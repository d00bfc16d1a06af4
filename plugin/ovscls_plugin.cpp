// ovscls_plugin.cpp: what ovs-vswitchd's lookup registry calls.
//
// patches/0001 and 0004 add three entries to OVS's subtable_lookups[] whose
// probes are defined here.  The lookups they return are this project's,
// unchanged: they have OVS's dpcls_subtable_lookup_func signature and read
// OVS's own struct dpcls_subtable.  The library holds no OVS code; it needs
// cmap_find_batch(), cmap_find() and ovsrcu_postpone__() from
// libopenvswitch.
#include "jit_lookup.hpp"
#include "layout.hpp"
#include "lookups.hpp"

// The JIT defers frees through the bridge's name for ovsrcu_postpone().
extern "C" void ovsrcu_postpone__(void (*function)(void* aux), void* aux);
extern "C" void ovsb_rcu_postpone(void (*cb)(void*), void* aux) { ovsrcu_postpone__(cb, aux); }

// The hash flavour this plugin was compiled for.  The patched
// dpif-netdev-lookup.c references the symbol of its own flavour, so linking
// a plugin built for the other flavour fails instead of missing every packet.
#if OVSCLS_HASH_CRC32
extern "C" const int ovscls_plugin_hash_crc32 = 1;
#else
extern "C" const int ovscls_plugin_hash_mhash = 1;
#endif

// OVS 3.1's probe sees only the fingerprint counts.
extern "C" ovsb_lookup_func dpcls_subtable_plugin_specialized_probe(uint32_t u0, uint32_t u1) {
    return ovscls::specialized_probe({u0, u1, nullptr});
}

extern "C" ovsb_lookup_func dpcls_subtable_plugin_generic_probe(uint32_t u0, uint32_t u1) {
    return ovscls::generic_probe({u0, u1, nullptr});
}

// `jit_avx2` (patches/0004): OVS's counts-only probe declines; the probe
// that sees the subtable and its hits compiles once the subtable is hot.
extern "C" ovsb_lookup_func dpcls_subtable_plugin_jit_probe(uint32_t, uint32_t) { return nullptr; }

extern "C" ovsb_lookup_func dpcls_subtable_plugin_jit_probe_subtable(dpcls_subtable* subtable,
                                                                     uint32_t hits) {
    const ovscls::Subtable& s = *ovscls::view(subtable);
    return ovscls::jit::probe({s.u0_bits, s.u1_bits, subtable, hits});
}

extern "C" void dpcls_subtable_plugin_jit_release(dpcls_subtable* subtable,
                                                  ovsb_lookup_func in_use) {
    ovscls::jit::release(subtable, in_use);
}

// Where the JIT's decline lines go: OVS's log (the patch passes a VLOG
// writer).
extern "C" void dpcls_subtable_plugin_jit_set_log(void (*sink)(const char* line)) {
    ovscls::jit::set_log_sink(sink);
}
