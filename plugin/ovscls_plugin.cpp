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
#include <pthread.h>

#include "lookups/lookups.hpp"

// What the JIT needs of OVS's threads and RCU, by the bridge's names
// (classifier/ovs_bridge.h), from libopenvswitch's exported functions: the
// plugin holds no OVS code and includes no OVS header.
extern "C" {
void ovsrcu_postpone__(void (*function)(void* aux), void* aux);
void ovsrcu_quiesce_start(void);
void ovsrcu_barrier(void);
pthread_t ovs_thread_create(const char* name, void* (*start)(void*), void* arg);
void xpthread_join(pthread_t thread, void** retval);
}

struct ovsb_thread {
    pthread_t thread;
    void (*fn)(void*);
    void* aux;
};

extern "C" void ovsb_rcu_postpone(void (*cb)(void*), void* aux) { ovsrcu_postpone__(cb, aux); }
extern "C" void ovsb_rcu_quiesce_start(void) { ovsrcu_quiesce_start(); }
extern "C" void ovsb_rcu_barrier(void) { ovsrcu_barrier(); }

extern "C" ovsb_thread* ovsb_thread_create(const char* name, void (*fn)(void*), void* aux) {
    auto* t = new ovsb_thread{{}, fn, aux};
    t->thread = ovs_thread_create(
        name,
        [](void* arg) -> void* {
            auto* self = static_cast<ovsb_thread*>(arg);
            self->fn(self->aux);
            return nullptr;
        },
        t);
    return t;
}

extern "C" void ovsb_thread_join(ovsb_thread* t) {
    xpthread_join(t->thread, nullptr);
    delete t;
}

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
