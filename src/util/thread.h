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

/* Whether the lock is on: UNSET until narma's initialisation decides (narmai_lazy_init, once,
 * under its own mutex), then OFF or ON for good. Release-stored there, acquire-loaded on entry:
 * a thread that sees it set sees the state initialisation set up. */
enum { NARMAU_LOCK_UNSET = 0, NARMAU_LOCK_OFF = 1, NARMAU_LOCK_ON = 2 };
extern int narmau_lock_mode;
/* This thread's nesting of public calls while the lock is on (0: not held). */
extern _Thread_local unsigned narmau_lock_depth;

static inline int narmau_threaded(void)
{
    return __atomic_load_n(&narmau_lock_mode, __ATOMIC_RELAXED) == NARMAU_LOCK_ON;
}

/* An identity of the calling thread (the address of its nesting counter). */
static inline const void *narmau_self(void) { return &narmau_lock_depth; }

void narmau_lock_acquire(void);
void narmau_lock_release(void);
/* Between two polls of a wait, holding the lock: when another thread is blocked on it, let
 * it go until that thread has taken it (bounded), then take it back. */
void narmau_lock_yield_slow(void);
extern unsigned narmau_lock_waiters;

static inline void narmau_lock_yield(void)
{
    if (narmau_threaded() && narmau_lock_depth > 0 &&
        __atomic_load_n(&narmau_lock_waiters, __ATOMIC_RELAXED) > 0)
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
 * for its duration if this thread holds it. Nothing of narma's shared state may be touched
 * inside, and no pointer into it kept across. */
static inline int narmau_unlock_begin(void)
{
    if (!narmau_threaded() || narmau_lock_depth == 0) return 0;
    narmau_lock_release();
    return 1;
}

static inline void narmau_unlock_end(int released)
{
    if (released) narmau_lock_acquire();
}

#define NARMAU_UNLOCKED(expr)                    \
    __extension__({                              \
        int narmau_rel_ = narmau_unlock_begin(); \
        __typeof__(expr) narmau_res_ = (expr);   \
        narmau_unlock_end(narmau_rel_);          \
        narmau_res_;                             \
    })

#endif
