/*
 * Forced-include header (-include) that runs MPI one-sided programs on narma:
 * MPI's window type, its RMA calls and their synchronisation map onto the
 * NARMA_ calls of the same name and arguments. Used only by
 * scripts/foreign-suites.sh to build MPICH's test/mpi/rma against narma.
 *
 * What is mapped, and the only places where the mapping is more than a rename:
 *  - MPI_Win, MPI_WIN_NULL and every MPI_Win_* / RMA call narma has.
 *  - Request-based RMA (MPI_Rput, ...) returns NARMA_Request objects, while the
 *    program keeps them in MPI_Request variables next to point-to-point ones.
 *    The header parks each narma request in a table and hands out an
 *    MPI_Request value that MPICH never uses for a real handle (MPICH's
 *    handle kind bits 00, object bits 0x5); MPI_Wait, MPI_Test, MPI_Waitall,
 *    MPI_Testall, MPI_Waitany, MPI_Testany and MPI_Request_free complete
 *    narma's requests through narma and pass real ones to PMPI_.
 *  - MPI_Win_set_errhandler with MPI_ERRORS_RETURN or MPI_ERRORS_ARE_FATAL
 *    succeeds and does nothing: narma always returns its errors. User error
 *    handlers (MPI_Win_create_errhandler, MPI_Win_call_errhandler) are not
 *    mapped, nor are MPI_Win_allocate_shared and MPI_Win_shared_query: tests
 *    that use them do not build and are listed as excluded.
 * Everything else (communicators, datatypes, point-to-point, MPI_Alloc_mem,
 * attributes on other objects) is MPI's own. Requires MPICH (int handles).
 */
#ifndef NARMA_MPI_TO_NARMA_H
#define NARMA_MPI_TO_NARMA_H

#include <mpi.h>
#include <narma/narma.h>
#include <sched.h>
#include <stdlib.h>

/* ---- Window type and plain calls ---------------------------------------- */
#define MPI_Win      NARMA_Win
#define MPI_WIN_NULL NARMA_WIN_NULL

#define MPI_Win_create          NARMA_Win_create
#define MPI_Win_allocate        NARMA_Win_allocate
#define MPI_Win_create_dynamic  NARMA_Win_create_dynamic
#define MPI_Win_free            NARMA_Win_free
#define MPI_Win_attach          NARMA_Win_attach
#define MPI_Win_detach          NARMA_Win_detach
#define MPI_Win_get_group       NARMA_Win_get_group
#define MPI_Win_set_name        NARMA_Win_set_name
#define MPI_Win_get_name        NARMA_Win_get_name
#define MPI_Win_create_keyval   NARMA_Win_create_keyval
#define MPI_Win_free_keyval     NARMA_Win_free_keyval
#define MPI_Win_set_attr        NARMA_Win_set_attr
#define MPI_Win_get_attr        NARMA_Win_get_attr
#define MPI_Win_delete_attr     NARMA_Win_delete_attr
#define MPI_Win_fence           NARMA_Win_fence
#define MPI_Win_start           NARMA_Win_start
#define MPI_Win_complete        NARMA_Win_complete
#define MPI_Win_post            NARMA_Win_post
#define MPI_Win_wait            NARMA_Win_wait
#define MPI_Win_test            NARMA_Win_test
#define MPI_Win_lock            NARMA_Win_lock
#define MPI_Win_unlock          NARMA_Win_unlock
#define MPI_Win_lock_all        NARMA_Win_lock_all
#define MPI_Win_unlock_all      NARMA_Win_unlock_all
#define MPI_Win_flush           NARMA_Win_flush
#define MPI_Win_flush_all       NARMA_Win_flush_all
#define MPI_Win_flush_local     NARMA_Win_flush_local
#define MPI_Win_flush_local_all NARMA_Win_flush_local_all
#define MPI_Win_sync            NARMA_Win_sync
#define MPI_Put                 NARMA_Put
#define MPI_Get                 NARMA_Get
#define MPI_Accumulate          NARMA_Accumulate
#define MPI_Get_accumulate      NARMA_Get_accumulate
#define MPI_Fetch_and_op        NARMA_Fetch_and_op
#define MPI_Compare_and_swap    NARMA_Compare_and_swap

/* ---- Error handlers: narma returns every error ------------------------- */
static inline int narma_shim_Win_set_errhandler(NARMA_Win win, MPI_Errhandler eh)
{
    (void)win;
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL ? MPI_SUCCESS : MPI_ERR_OTHER;
}
#define MPI_Win_set_errhandler narma_shim_Win_set_errhandler

/* ---- Requests ----------------------------------------------------------- */
#define NARMA_SHIM_REQ_TAG  0x14000000 /* kind 00 (never a real MPICH handle), object 0x5 */
#define NARMA_SHIM_REQ_MASK 0xff000000
#define NARMA_SHIM_REQ_MAX  (1 << 20)

/* One table for the whole program (weak: every file that includes this shares it). */
__attribute__((weak)) NARMA_Request *narma_shim_reqs;
__attribute__((weak)) int narma_shim_nreqs;

static inline int narma_shim_is_narma(MPI_Request r)
{
    return ((unsigned)r & NARMA_SHIM_REQ_MASK) == NARMA_SHIM_REQ_TAG;
}

static inline MPI_Request narma_shim_park(NARMA_Request nr)
{
    int i;
    for (i = 0; i < narma_shim_nreqs; i++)
        if (narma_shim_reqs[i] == NARMA_REQUEST_NULL) break;
    if (i == narma_shim_nreqs) {
        int n = narma_shim_nreqs ? 2 * narma_shim_nreqs : 64;
        NARMA_Request *t = (NARMA_Request *)realloc(narma_shim_reqs, (size_t)n * sizeof *t);
        if (t == NULL || n > NARMA_SHIM_REQ_MAX) abort();
        for (int k = narma_shim_nreqs; k < n; k++)
            t[k] = NARMA_REQUEST_NULL;
        narma_shim_reqs = t;
        narma_shim_nreqs = n;
    }
    narma_shim_reqs[i] = nr;
    return (MPI_Request)(NARMA_SHIM_REQ_TAG | i);
}

static inline NARMA_Request *narma_shim_slot(MPI_Request r)
{
    return &narma_shim_reqs[(unsigned)r & ~NARMA_SHIM_REQ_MASK];
}

#define NARMA_SHIM_RFORM(call, req)                              \
    do {                                                         \
        NARMA_Request nr_ = NARMA_REQUEST_NULL;                  \
        int rc_ = (call);                                        \
        if (rc_ == NARMA_SUCCESS) *(req) = narma_shim_park(nr_); \
        return rc_;                                              \
    } while (0)

static inline int narma_shim_Rput(const void *oa, int oc, MPI_Datatype ot, int t, MPI_Aint d,
                                  int tc, MPI_Datatype tt, NARMA_Win w, MPI_Request *req)
{
    NARMA_SHIM_RFORM(NARMA_Rput(oa, oc, ot, t, d, tc, tt, w, &nr_), req);
}
static inline int narma_shim_Rget(void *oa, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc,
                                  MPI_Datatype tt, NARMA_Win w, MPI_Request *req)
{
    NARMA_SHIM_RFORM(NARMA_Rget(oa, oc, ot, t, d, tc, tt, w, &nr_), req);
}
static inline int narma_shim_Raccumulate(const void *oa, int oc, MPI_Datatype ot, int t, MPI_Aint d,
                                         int tc, MPI_Datatype tt, MPI_Op op, NARMA_Win w,
                                         MPI_Request *req)
{
    NARMA_SHIM_RFORM(NARMA_Raccumulate(oa, oc, ot, t, d, tc, tt, op, w, &nr_), req);
}
static inline int narma_shim_Rget_accumulate(const void *oa, int oc, MPI_Datatype ot, void *ra,
                                             int rc, MPI_Datatype rt, int t, MPI_Aint d, int tc,
                                             MPI_Datatype tt, MPI_Op op, NARMA_Win w,
                                             MPI_Request *req)
{
    NARMA_SHIM_RFORM(NARMA_Rget_accumulate(oa, oc, ot, ra, rc, rt, t, d, tc, tt, op, w, &nr_), req);
}
#define MPI_Rput            narma_shim_Rput
#define MPI_Rget            narma_shim_Rget
#define MPI_Raccumulate     narma_shim_Raccumulate
#define MPI_Rget_accumulate narma_shim_Rget_accumulate

/* Complete narma's request *r (flag: done?); frees its slot when done. */
static inline int narma_shim_test1(MPI_Request *r, int *flag, MPI_Status *st)
{
    NARMA_Request *slot = narma_shim_slot(*r);
    int rc = NARMA_Test(slot, flag, st);
    if (rc == NARMA_SUCCESS && *flag && *slot == NARMA_REQUEST_NULL) *r = MPI_REQUEST_NULL;
    return rc;
}

static inline int narma_shim_Wait(MPI_Request *r, MPI_Status *st)
{
    if (!narma_shim_is_narma(*r)) return PMPI_Wait(r, st);
    NARMA_Request *slot = narma_shim_slot(*r);
    int rc = NARMA_Wait(slot, st);
    if (rc == NARMA_SUCCESS && *slot == NARMA_REQUEST_NULL) *r = MPI_REQUEST_NULL;
    return rc;
}

static inline int narma_shim_Test(MPI_Request *r, int *flag, MPI_Status *st)
{
    if (!narma_shim_is_narma(*r)) return PMPI_Test(r, flag, st);
    return narma_shim_test1(r, flag, st);
}

static inline int narma_shim_Testall(int n, MPI_Request *rs, int *flag, MPI_Status *sts)
{
    /* Test each in order. Unlike MPI_Testall, requests that are complete are
     * released (set to MPI_REQUEST_NULL, statuses filled) even while others
     * are pending; a later call skips them. The tests only use the flag. */
    int all = 1;
    for (int i = 0; i < n; i++) {
        int f = 0, rc;
        MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
        if (rs[i] == MPI_REQUEST_NULL) continue;
        rc = narma_shim_is_narma(rs[i]) ? narma_shim_test1(&rs[i], &f, st)
                                        : PMPI_Test(&rs[i], &f, st);
        if (rc != MPI_SUCCESS) return rc;
        all &= f;
    }
    *flag = all;
    return MPI_SUCCESS;
}

static inline int narma_shim_Waitall(int n, MPI_Request *rs, MPI_Status *sts)
{
    for (;;) {
        int flag = 0, rc = narma_shim_Testall(n, rs, &flag, sts);
        if (rc != MPI_SUCCESS || flag) return rc;
        NARMA_Progress();
        sched_yield(); /* the machine may be oversubscribed: let the peers run */
    }
}

static inline int narma_shim_Testany(int n, MPI_Request *rs, int *index, int *flag, MPI_Status *st)
{
    int active = 0;
    *flag = 0;
    *index = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        int f = 0, rc;
        if (rs[i] == MPI_REQUEST_NULL) continue;
        active = 1;
        rc = narma_shim_is_narma(rs[i]) ? narma_shim_test1(&rs[i], &f, st)
                                        : PMPI_Test(&rs[i], &f, st);
        if (rc != MPI_SUCCESS) return rc;
        if (f) {
            *flag = 1;
            *index = i;
            return MPI_SUCCESS;
        }
    }
    if (!active) *flag = 1; /* no active request: MPI says flag = true, index = UNDEFINED */
    return MPI_SUCCESS;
}

static inline int narma_shim_Waitany(int n, MPI_Request *rs, int *index, MPI_Status *st)
{
    for (;;) {
        int flag = 0, rc = narma_shim_Testany(n, rs, index, &flag, st);
        if (rc != MPI_SUCCESS || flag) return rc;
        NARMA_Progress();
        sched_yield(); /* the machine may be oversubscribed: let the peers run */
    }
}

static inline int narma_shim_Request_free(MPI_Request *r)
{
    if (!narma_shim_is_narma(*r)) return PMPI_Request_free(r);
    int rc = NARMA_Request_free(narma_shim_slot(*r));
    if (rc == NARMA_SUCCESS) {
        *narma_shim_slot(*r) = NARMA_REQUEST_NULL;
        *r = MPI_REQUEST_NULL;
    }
    return rc;
}

#define MPI_Wait         narma_shim_Wait
#define MPI_Test         narma_shim_Test
#define MPI_Waitall      narma_shim_Waitall
#define MPI_Testall      narma_shim_Testall
#define MPI_Waitany      narma_shim_Waitany
#define MPI_Testany      narma_shim_Testany
#define MPI_Request_free narma_shim_Request_free

#endif /* NARMA_MPI_TO_NARMA_H */
