/*
 * The process lock: what makes narma safe under MPI_THREAD_MULTIPLE.
 *
 * One mutex guards all of narma's state in a process (windows, requests,
 * the matching queues, the epoch engine, the datatype and request caches),
 * in the manner of MPICH's global critical section. It is on only when the
 * process asked MPI for MPI_THREAD_MULTIPLE (or NARMA_THREADS=on), decided
 * once at initialisation; off, entering and leaving a call cost one load of
 * narmau_lock_mode and two branches, and nothing else changes.
 *
 * Every public call takes it (NARMAI_API_LOCK in core/narmai.h); a public
 * call made from inside another (an error handler, a wrapper) nests: the
 * depth is per thread and only the outermost level locks. A call never holds
 * it while it waits for something another thread of this process may have
 * to do:
 *   - a waiting call hands it over between two polls to a thread blocked on
 *     it (narmau_lock_yield, from narmau_wait_step), so several threads
 *     waiting on distinct requests all progress;
 *   - blocking MPI collectives (window creation and free, set_num_notify) run
 *     with it released (NARMAU_UNLOCKED), so threads creating windows over
 *     distinct communicators do not deadlock against another process whose
 *     threads entered them in another order. The window being built or torn
 *     down is then out of progress' reach (narmai_win.coll_owner).
 */
#ifndef NARMA_UTIL_THREAD_H
#define NARMA_UTIL_THREAD_H

#include <pthread.h>
#include <stdint.h>

/* Whether the lock is on: UNSET until narma's initialisation decides (narmai_lazy_init, once,
 * under its own mutex), then OFF or ON for good. Release-stored there, acquire-loaded on entry:
 * a thread that sees it set sees the state initialisation set up. */
enum { NARMAU_LOCK_UNSET = 0, NARMAU_LOCK_OFF = 1, NARMAU_LOCK_ON = 2 };
extern int narmau_lock_mode;

static inline int narmau_threaded(void)
{
    return __atomic_load_n(&narmau_lock_mode, __ATOMIC_RELAXED) == NARMAU_LOCK_ON;
}

/* The calling thread's identity (pthread_self reads a register: no TLS lookup, which costs a
 * call into the dynamic linker in a shared library). */
static inline uintptr_t narmau_self(void) { return (uintptr_t)pthread_self(); }

/* The holder (0: none) and its nesting of public calls. Only the holder writes them; another
 * thread reading the holder sees some other thread or 0, never itself, so "do I hold it?" needs
 * no ordering. */
extern uintptr_t narmau_lock_owner;
extern unsigned narmau_lock_waiters; /* threads blocked in narmau_lock_acquire */

static inline int narmau_lock_held(void)
{
    return __atomic_load_n(&narmau_lock_owner, __ATOMIC_RELAXED) == narmau_self();
}

void narmau_lock_acquire(void); /* takes it, becomes the holder (nesting 1) */
void narmau_lock_release(void); /* lets it go, whatever the nesting */
/* Between two polls of a wait, holding the lock: when another thread is blocked on it, let
 * it go until that thread has taken it (bounded), then take it back, nesting kept. */
void narmau_lock_yield_slow(void);

static inline void narmau_lock_yield(void)
{
    if (__atomic_load_n(&narmau_lock_waiters, __ATOMIC_RELAXED) > 0 && narmau_threaded() &&
        narmau_lock_held())
        narmau_lock_yield_slow();
}

/* Entering a public call with the lock on: take it unless this thread holds it already
 * (returns 1: leave with narmau_api_leave). */
int narmau_api_enter_locked(void);
void narmau_api_leave_locked(void);

static inline void narmau_api_leave(const int *entered)
{
    if (__builtin_expect(*entered, 0)) narmau_api_leave_locked();
}

/* Around a blocking call that waits for other processes (MPI collectives): the lock is let go
 * for its duration if this thread holds it (returns the nesting to restore, 0: not held).
 * Nothing of narma's shared state may be touched inside, and no pointer into it kept across. */
unsigned narmau_unlock_begin_slow(void);
void narmau_unlock_end_slow(unsigned depth);

static inline unsigned narmau_unlock_begin(void)
{
    return narmau_threaded() && narmau_lock_held() ? narmau_unlock_begin_slow() : 0;
}

static inline void narmau_unlock_end(unsigned depth)
{
    if (depth) narmau_unlock_end_slow(depth);
}

#define NARMAU_UNLOCKED(expr)                           \
    __extension__({                                     \
        unsigned narmau_depth_ = narmau_unlock_begin(); \
        __typeof__(expr) narmau_res_ = (expr);          \
        narmau_unlock_end(narmau_depth_);               \
        narmau_res_;                                    \
    })

#endif
