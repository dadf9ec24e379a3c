/* libnarma-mpi internals: MPI's one-sided calls on top of narma (see narma_mpix.h).
 *
 * Every MPI_Win the program sees is a real MPI window. For a window narma carries it is a
 * "handle window" (MPI_Win_create_dynamic on the same communicator, no memory attached): it
 * holds what MPI keeps per window and narma need not (names, user attributes and their
 * callbacks, error handlers, the group, info), so those calls go to the MPI library unchanged,
 * while every epoch and access goes to the narma window recorded for it here. A window narma
 * cannot or should not carry is a plain MPI window, recorded as passed through. */
#ifndef NARMA_PMPI_H
#define NARMA_PMPI_H

#include <mpi.h>
#include <narma/narma.h>
#include <narma/narma_mpix.h>
#include <stddef.h>
#include <stdint.h>

#ifndef NARMA_PMPI_API
#define NARMA_PMPI_API __attribute__((visibility("default")))
#endif

/* The calls counted per window (the report). */
#define PW_CALLS(X)                         \
    X(PUT, "MPI_Put")                       \
    X(GET, "MPI_Get")                       \
    X(ACC, "MPI_Accumulate")                \
    X(GACC, "MPI_Get_accumulate")           \
    X(FOP, "MPI_Fetch_and_op")              \
    X(CAS, "MPI_Compare_and_swap")          \
    X(RPUT, "MPI_Rput")                     \
    X(RGET, "MPI_Rget")                     \
    X(RACC, "MPI_Raccumulate")              \
    X(RGACC, "MPI_Rget_accumulate")         \
    X(NOTIFY, "MPIX_*_notify_tagged")       \
    X(COUNTER, "MPIX_*_notify (counters)")  \
    X(FENCE, "MPI_Win_fence")               \
    X(POST, "MPI_Win_post")                 \
    X(START, "MPI_Win_start")               \
    X(COMPLETE, "MPI_Win_complete")         \
    X(WAIT, "MPI_Win_wait")                 \
    X(TEST, "MPI_Win_test")                 \
    X(LOCK, "MPI_Win_lock")                 \
    X(UNLOCK, "MPI_Win_unlock")             \
    X(LOCK_ALL, "MPI_Win_lock_all")         \
    X(UNLOCK_ALL, "MPI_Win_unlock_all")     \
    X(FLUSH, "MPI_Win_flush*")              \
    X(SYNC, "MPI_Win_sync")                 \
    X(IEPOCH, "MPIX_Win_i*")                \
    X(ATTACH, "MPI_Win_attach/detach")      \
    X(SHARED_QUERY, "MPI_Win_shared_query") \
    X(INFO, "MPI_Win_get_info/set_info")

enum pw_call {
#define PW_ENUM(id, name) PW_##id,
    PW_CALLS(PW_ENUM)
#undef PW_ENUM
        PW_NCALLS
};

struct pw {
    MPI_Win handle;  /* what the program holds */
    NARMA_Win nw;    /* NARMA_WIN_NULL: passed through to the MPI library */
    int flavor;      /* MPI_WIN_FLAVOR_* as the program created it */
    int rank, size;  /* this process's rank in the window's group, its size */
    const char *why; /* passed through: the reason */
    uint64_t epochs; /* epochs narma opened (fence counts each call) */
    uint64_t ops;    /* data accesses narma carried */
    uint64_t reqs;   /* notification requests made */
    uint64_t calls[PW_NCALLS];
    struct pw *next;  /* hash chain */
    struct pw *older; /* every window ever created, for the report */
    int freed;
    unsigned id;
};

/* MPI_THREAD_MULTIPLE (window.c). narma's own calls are thread-safe then (its process lock);
 * what this library adds are its two tables (windows, requests) and the report's counters.
 * pw_threaded turns 1 for good when the level this library reports (MPI's, as
 * NARMA_Query_thread adjusts it) is MPI_THREAD_MULTIPLE: at MPI_Init_thread, or at a window's
 * creation (the program may have initialised MPI without this library's MPI_Init_thread, e.g.
 * with MPI_Init under an MPI whose default level is MULTIPLE, or with NARMA_Init_thread).
 * Before, no window and no request of narma exists, so the tables are empty. Off, nothing
 * below costs more than a load and a branch. */
extern int pw_threaded_flag;
static inline int pw_threaded(void) { return __atomic_load_n(&pw_threaded_flag, __ATOMIC_ACQUIRE); }
void pw_thread_check(void);
/* The tables' mutex, taken only when pw_threaded() (returns whether it was: pass that to
 * pw_unlock, so that a flag turning on in between never unlocks a mutex not locked). Never
 * held across a call into MPI or narma (MPI calls into the request table with its own lock
 * held: q_free). */
int pw_lock(void);
void pw_unlock(int locked);
/* A report counter (threads may count on one window at once). */
static inline void pw_count(uint64_t *c, uint64_t n)
{
    if (pw_threaded())
        __atomic_fetch_add(c, n, __ATOMIC_RELAXED);
    else
        *c += n;
}

/* Window table (window.c). Its records are never freed (the report reads them at
 * MPI_Finalize), so a pointer from pw_find stays valid after the lock is let go. */
struct pw *pw_find(MPI_Win win);
/* The narma window behind win, or NARMA_WIN_NULL to pass the call through (counted). */
static inline NARMA_Win pw_narma(MPI_Win win, enum pw_call c, struct pw **out)
{
    struct pw *p = pw_find(win);
    *out = p;
    if (p == NULL) return NARMA_WIN_NULL;
    pw_count(&p->calls[c], 1);
    return p->nw;
}

/* An error of narma as MPI reports it: the MPI error code, after the window's error handler
 * was called (win may be MPI_WIN_NULL: then MPI_COMM_WORLD's handler). */
int pw_error(MPI_Win win, int narma_rc);
/* The same for a window creation that failed: comm's error handler. */
int pw_error_comm(MPI_Comm comm, int narma_rc);
#define PW_RET(win, expr)                                                       \
    do {                                                                        \
        int pw_rc_ = (expr);                                                    \
        return pw_rc_ == NARMA_SUCCESS ? MPI_SUCCESS : pw_error((win), pw_rc_); \
    } while (0)

/* Requests (request.c): an MPI_Request standing for a narma request. */
int preq_new(NARMA_Request nr, int persistent, MPI_Win win, MPI_Request *out);
/* Whether the table holds any request of narma (0: every request is MPI's, and the completion
 * calls go straight to MPI). */
int preq_any(void);

/* The MPI error class of NARMA_ERR_NOTIFY_IDX, added to MPI's on first use (counter.c). */
int pw_notify_idx_class(void);

/* Report (window.c). */
void pw_report(void);

#endif
