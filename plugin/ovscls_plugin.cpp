// ovscls_plugin.cpp: the portable part of what ovs_registration.c registers
// with ovs-vswitchd: the probes of `specialized` and `runtime`, and the hash
// function OVS checks at registration.
//
// The lookups the probes return are this project's, unchanged: they have
// OVS's dpcls_subtable_lookup_func signature and read OVS's own struct
// dpcls_subtable.  The library holds no OVS code; it needs cmap_find_batch(),
// cmap_find() and ovsrcu_postpone__() from libopenvswitch.
#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "classifier/hash.hpp"
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
