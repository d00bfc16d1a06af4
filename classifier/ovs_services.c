/* ovs_services.c: OVS threads and OVS-RCU for the layers above
 * (ovs_services.h), on OVS's own functions.  Compiled against the OVS it is
 * linked with: the cached OVS lib in standalone builds, the patched tree
 * inside ovs-vswitchd. */
#include <config.h>

#include <pthread.h>
#include <stdlib.h>

#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "util.h"

#include "classifier/ovs_services.h"

/* An OVS thread running fn(aux). */
struct ovsb_thread {
    pthread_t thread;
    void (*fn)(void *);
    void *aux;
};

static void *
ovsb_thread_main(void *thread_)
{
    struct ovsb_thread *thread = thread_;
    thread->fn(thread->aux);
    return NULL;
}

ovsb_thread *
ovsb_thread_create(const char *name, void (*fn)(void *), void *aux)
{
    struct ovsb_thread *thread = xmalloc(sizeof *thread);
    thread->fn = fn;
    thread->aux = aux;
    thread->thread = ovs_thread_create(name, ovsb_thread_main, thread);
    return thread;
}

void
ovsb_thread_join(ovsb_thread *thread)
{
    xpthread_join(thread->thread, NULL);
    free(thread);
}

void
ovsb_rcu_postpone(void (*cb)(void *), void *aux)
{
    ovsrcu_postpone(cb, aux);
}

void
ovsb_rcu_quiesce(void)
{
    ovsrcu_quiesce();
}

void
ovsb_rcu_quiesce_start(void)
{
    ovsrcu_quiesce_start();
}

void
ovsb_rcu_quiesce_end(void)
{
    ovsrcu_quiesce_end();
}

void
ovsb_rcu_synchronize(void)
{
    ovsrcu_synchronize();
}

void
ovsb_rcu_barrier(void)
{
    ovsrcu_barrier();
}
