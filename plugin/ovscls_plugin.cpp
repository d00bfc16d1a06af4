// ovscls_plugin.cpp: the portable part of what ovs_registration.c registers
// with ovs-vswitchd: the probes of `specialized` and `runtime`, and the hash
// function OVS checks at registration.
//
// The lookups the probes return are this project's, unchanged: they have
// OVS's dpcls_subtable_lookup_func signature and read OVS's own struct
// dpcls_subtable.  The library holds no OVS code; it needs cmap_find_batch()
// and cmap_find() from libopenvswitch (classifier/ovs_functions.h), and OVS's
// threads and RCU through classifier/ovs_services.c, which the plugin
// compiles against the OVS tree it is built for.
#include "plugin/ovscls_plugin.h"

#include <cstddef>
#include <cstdint>

#include "classifier/hash.hpp"
#include "lookups/lookups.hpp"

// The hash this plugin computes for a key's masked blocks, which OVS
// compares with its own at registration (dpcls_subtable_lookup_register()):
// a plugin built for the other hash flavour (CRC32C against mhash) would
// miss every packet, and is refused instead.
extern "C" uint32_t ovscls_plugin_hash_blocks(const uint64_t* blocks, size_t n_blocks,
                                              uint32_t basis) {
    uint32_t hash = basis;
    for (size_t i = 0; i < n_blocks; i++) {
        hash = ovscls::hash::add64(hash, blocks[i]);
    }
    return ovscls::hash::finish(hash, static_cast<uint32_t>(n_blocks * 8));
}

// OVS's counts-only probes.
extern "C" ovsb_lookup_func ovscls_plugin_specialized_probe(uint32_t u0, uint32_t u1) {
    return ovscls::specialized_probe({u0, u1, nullptr});
}

extern "C" ovsb_lookup_func ovscls_plugin_runtime_probe(uint32_t u0, uint32_t u1) {
    return ovscls::generic_probe({u0, u1, nullptr});
}
