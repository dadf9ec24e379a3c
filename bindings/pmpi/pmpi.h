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

/* Window table (window.c). */
struct pw *pw_find(MPI_Win win);
/* The narma window behind win, or NARMA_WIN_NULL to pass the call through (counted). */
static inline NARMA_Win pw_narma(MPI_Win win, enum pw_call c, struct pw **out)
{
    struct pw *p = pw_find(win);
    *out = p;
    if (p == NULL) return NARMA_WIN_NULL;
    p->calls[c]++;
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
extern int preq_live; /* requests of narma in the table: 0 means every request is MPI's */

/* The MPI error class of NARMA_ERR_NOTIFY_IDX, added to MPI's on first use (counter.c). */
int pw_notify_idx_class(void);

/* Report (window.c). */
void pw_report(void);

#endif
