// ovscls_plugin.cpp: what ovs-vswitchd's lookup registry calls: the portable
// part (generic, specialized, the hash flavour).
//
// patches/0001 and 0004 add entries to OVS's subtable_lookups[] whose probes
// are defined here and in jit_entries.cpp (x86-64, the JIT) or
// jit_absent.cpp (every other build).  The lookups they return are this
// project's, unchanged: they have OVS's dpcls_subtable_lookup_func signature
// and read OVS's own struct dpcls_subtable.  The library holds no OVS code;
// it needs cmap_find_batch(), cmap_find() and ovsrcu_postpone__() from
// libopenvswitch.
#include "lookups/lookups.hpp"

// The JIT defers frees through the bridge's name for ovsrcu_postpone().
extern "C" void ovsrcu_postpone__(void (*function)(void* aux), void* aux);
extern "C" void ovsb_rcu_postpone(void (*cb)(void*), void* aux) { ovsrcu_postpone__(cb, aux); }

// The hash flavour this plugin was compiled for.  The patched
// dpif-netdev-lookup.c references the symbol of its own flavour, so linking
// a plugin built for the other flavour fails instead of missing every packet.
// CRC32C is one flavour on x86-64 (SSE4.2) and aarch64 (+crc): same hash.
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
