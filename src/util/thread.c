/* The process lock (thread.h). */
#include "util/thread.h"
#include <pthread.h>
#include <sched.h>

int narmau_lock_mode;
_Thread_local unsigned narmau_lock_depth;
unsigned narmau_lock_waiters; /* threads blocked in narmau_lock_acquire */

static pthread_mutex_t narmau_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned narmau_lock_gen; /* acquisitions so far: a yielder sees whether it was taken */

void narmau_lock_acquire(void)
{
    if (pthread_mutex_trylock(&narmau_lock) != 0) {
        __atomic_add_fetch(&narmau_lock_waiters, 1, __ATOMIC_RELAXED);
        pthread_mutex_lock(&narmau_lock);
        __atomic_sub_fetch(&narmau_lock_waiters, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&narmau_lock_gen, narmau_lock_gen + 1, __ATOMIC_RELAXED);
}

void narmau_lock_release(void) { pthread_mutex_unlock(&narmau_lock); }

/* Handing over: a plain unlock-lock would mostly take it straight back (the woken thread is
 * still getting on a core), starving the waiters of a thread that polls. So wait until some
 * thread took it, or nobody waits any more, for at most a bounded number of yields. */
#define NARMAU_HANDOVER_YIELDS 64

void narmau_lock_yield_slow(void)
{
    unsigned gen = narmau_lock_gen; /* stable: we hold the lock */
    narmau_lock_release();
    for (int i = 0; i < NARMAU_HANDOVER_YIELDS; i++) {
        if (__atomic_load_n(&narmau_lock_gen, __ATOMIC_RELAXED) != gen ||
            __atomic_load_n(&narmau_lock_waiters, __ATOMIC_RELAXED) == 0)
            break;
        sched_yield();
    }
    narmau_lock_acquire();
}

int narmau_api_enter_locked(void)
{
    if (narmau_lock_depth++ == 0) narmau_lock_acquire();
    return 1;
}

void narmau_api_leave_locked(void)
{
    if (--narmau_lock_depth == 0) narmau_lock_release();
}
