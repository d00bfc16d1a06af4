/* ovs_services.h: the services of Open vSwitch that every layer above may
 * call: OVS threads and OVS-RCU.
 *
 * The classifier, the tail index and the JIT free memory that readers may
 * still see only after an OVS-RCU grace period (ovsb_rcu_postpone()), and
 * the JIT runs its compiler on an OVS thread.  They call these functions,
 * never OVS's, so that none of them includes an OVS header.
 *
 * An interface (CMake target ovscls_services, which ovscls_core, ovscls_tail
 * and ovscls_jit link) with two implementations, one per kind of program:
 * classifier/ovs_services.c, on OVS's ovs-rcu.h and ovs-thread.h, compiled
 * against the OVS that program is linked with:
 *   ovscls_services_standalone  the cached OVS lib of the build's flavour:
 *               linked by ovscls, the standalone library of tests,
 *               benchmarks and programs;
 *   ovscls_services_vswitchd  the patched tree the plugin is built for:
 *               linked into ovscls_plugin (plugin/link-into-ovs.sh), which
 *               ovs-vswitchd links.
 * The C is the same (OVS's functions are the services in both); what
 * differs is the OVS it is compiled against and linked into, so it is one
 * file compiled by two targets, not two copies.
 *
 * Reader threads must be OVS threads, as PMD threads are: OVS-RCU treats a
 * process in which ovs_thread_create() was never called as single-threaded
 * and runs postponed frees at the next quiescent point of the writer, with
 * no grace period for readers it does not know of.
 *
 * Plain C and C++. */
#ifndef OVSCLS_OVS_SERVICES_H
#define OVSCLS_OVS_SERVICES_H 1

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ovsb_thread ovsb_thread;
/* ovs_thread_create(): starts 'fn(aux)' on a new OVS thread. */
ovsb_thread* ovsb_thread_create(const char* name, void (*fn)(void*), void* aux);
/* Waits for the thread to end and frees the handle. */
void ovsb_thread_join(ovsb_thread*);

/* ovsrcu_postpone(): cb(aux) once every thread has quiesced. */
void ovsb_rcu_postpone(void (*cb)(void*), void* aux);
void ovsb_rcu_quiesce(void);
void ovsb_rcu_quiesce_start(void);
void ovsb_rcu_quiesce_end(void);
void ovsb_rcu_synchronize(void);
/* ovsrcu_barrier(): returns once every callback postponed so far has run. */
void ovsb_rcu_barrier(void);

#ifdef __cplusplus
}
#endif

#endif /* OVSCLS_OVS_SERVICES_H */
