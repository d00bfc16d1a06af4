// ovscls_plugin.cpp: what ovs-vswitchd's lookup registry calls.
//
// patches/0001 adds two entries to OVS's subtable_lookups[] whose probes
// are defined here.  The lookups they return are this project's, unchanged:
// they have OVS's dpcls_subtable_lookup_func signature and read OVS's own
// struct dpcls_subtable.  The library holds no OVS code; it needs only
// cmap_find_batch() from libopenvswitch.
#include "lookups.hpp"

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
