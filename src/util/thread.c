/* The process lock (thread.h). */
#include "util/thread.h"
#include <sched.h>

int narmau_lock_mode;
uintptr_t narmau_lock_owner;
unsigned narmau_lock_waiters;

static pthread_mutex_t narmau_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned narmau_lock_depth; /* the holder's nesting (written by the holder only) */
static unsigned narmau_lock_gen;   /* acquisitions so far: a yielder sees whether it was taken */

void narmau_lock_acquire(void)
{
    if (pthread_mutex_trylock(&narmau_lock) != 0) {
        __atomic_add_fetch(&narmau_lock_waiters, 1, __ATOMIC_RELAXED);
        pthread_mutex_lock(&narmau_lock);
        __atomic_sub_fetch(&narmau_lock_waiters, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&narmau_lock_gen, narmau_lock_gen + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&narmau_lock_owner, narmau_self(), __ATOMIC_RELAXED);
    narmau_lock_depth = 1;
}

void narmau_lock_release(void)
{
    __atomic_store_n(&narmau_lock_owner, (uintptr_t)0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&narmau_lock);
}

/* Handing over: a plain unlock-lock would mostly take it straight back (the woken thread is
 * still getting on a core), starving the waiters of a thread that polls. So wait until some
 * thread took it, or nobody waits any more, for at most a bounded number of yields. */
#define NARMAU_HANDOVER_YIELDS 64

void narmau_lock_yield_slow(void)
{
    const unsigned gen = narmau_lock_gen, depth = narmau_lock_depth; /* ours: we hold it */
    narmau_lock_release();
    for (int i = 0; i < NARMAU_HANDOVER_YIELDS; i++) {
        if (__atomic_load_n(&narmau_lock_gen, __ATOMIC_RELAXED) != gen ||
            __atomic_load_n(&narmau_lock_waiters, __ATOMIC_RELAXED) == 0)
            break;
        sched_yield();
    }
    narmau_lock_acquire();
    narmau_lock_depth = depth;
}

int narmau_api_enter_locked(void)
{
    if (narmau_lock_held())
        narmau_lock_depth++;
    else
        narmau_lock_acquire();
    return 1;
}

/* Leaving the outermost call: a thread blocked on the lock gets a chance at it before this one
 * comes back for its next call (the mutex is not fair: a thread calling narma back to back
 * would otherwise keep the others out). */
void narmau_api_leave_locked(void)
{
    if (--narmau_lock_depth > 0) return;
    narmau_lock_release();
    if (__atomic_load_n(&narmau_lock_waiters, __ATOMIC_RELAXED) > 0) sched_yield();
}

unsigned narmau_unlock_begin_slow(void)
{
    const unsigned depth = narmau_lock_depth;
    narmau_lock_release();
    return depth;
}

void narmau_unlock_end_slow(unsigned depth)
{
    narmau_lock_acquire();
    narmau_lock_depth = depth;
}
