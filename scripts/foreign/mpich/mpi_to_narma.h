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
 *  - Window error handlers: narma's handles (pointers) are parked in a table
 *    as requests are, and handed out as MPI_Errhandler values;
 *    MPI_Errhandler_free frees them through narma and MPI's own through PMPI_.
 *  - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) under NARMA_NODE_SIZE gives the
 *    pretend node, as narma sees it.
 * Everything else (communicators, datatypes, point-to-point, MPI_Alloc_mem,
 * attributes on other objects) is MPI's own. Requires MPICH (int handles).
 */
#ifndef NARMA_MPI_TO_NARMA_H
#define NARMA_MPI_TO_NARMA_H

#include <mpi.h>
#include <narma/narma.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>

/* ---- Window type and plain calls ---------------------------------------- */
#define MPI_Win      NARMA_Win
#define MPI_WIN_NULL NARMA_WIN_NULL

#define MPI_Win_create          NARMA_Win_create
#define MPI_Win_allocate        NARMA_Win_allocate
#define MPI_Win_allocate_shared NARMA_Win_allocate_shared
#define MPI_Win_shared_query    NARMA_Win_shared_query
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

/* ---- Parked handles ------------------------------------------------------ */
/* narma's requests and error handlers are pointers; programs keep them in MPICH's int handles.
 * Each kind has one table for the whole program (weak: every file that includes this shares
 * it); a parked handle is its slot's index under a tag MPICH never uses for a real handle.
 * NARMA_SHIM_TAKE_SLOT: the index of a free (NULL) slot of tab (n slots), the table grown
 * (doubled, first entries to begin with) when full; aborts past max. */
#define NARMA_SHIM_TAKE_SLOT(tab, n, first, max)                           \
    __extension__({                                                        \
        int i_;                                                            \
        for (i_ = 0; i_ < (n); i_++)                                       \
            if ((tab)[i_] == NULL) break;                                  \
        if (i_ == (n)) {                                                   \
            int n_ = (n) ? 2 * (n) : (first);                              \
            void *t_ = realloc((void *)(tab), (size_t)n_ * sizeof *(tab)); \
            if (t_ == NULL || n_ > (max)) abort();                         \
            (tab) = t_;                                                    \
            for (int k_ = (n); k_ < n_; k_++)                              \
                (tab)[k_] = NULL;                                          \
            (n) = n_;                                                      \
        }                                                                  \
        i_;                                                                \
    })

/* ---- Pretend nodes ------------------------------------------------------- */
/* With NARMA_NODE_SIZE=k narma sees nodes of k consecutive MPI_COMM_WORLD ranks, and refuses
 * Win_allocate_shared across them; MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) says what narma
 * sees, as narma's own split does (src/transport/transport.c, narmat_node_comm), so that a
 * program's shared-memory communicator is one narma can serve. */
static inline int narma_shim_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
                                             MPI_Comm *out)
{
    /* Read as narma reads it (transport.c): anything but a whole number 0..INT_MAX is 0. */
    const char *v = getenv("NARMA_NODE_SIZE");
    char *end = NULL;
    long k = v != NULL && *v != '\0' ? strtol(v, &end, 10) : 0;
    if (v != NULL && *v != '\0' && (*end != '\0' || k < 0 || k > INT_MAX)) k = 0;
    if (type != MPI_COMM_TYPE_SHARED || k == 0)
        return PMPI_Comm_split_type(comm, type, key, info, out);
    MPI_Comm shared;
    int world, rc = PMPI_Comm_split_type(comm, type, key, info, &shared);
    if (rc != MPI_SUCCESS || shared == MPI_COMM_NULL) {
        if (rc == MPI_SUCCESS) *out = MPI_COMM_NULL;
        return rc;
    }
    PMPI_Comm_rank(MPI_COMM_WORLD, &world);
    rc = PMPI_Comm_split(shared, (int)(world / k), key, out);
    PMPI_Comm_free(&shared);
    return rc;
}
#define MPI_Comm_split_type narma_shim_Comm_split_type

/* ---- Error handlers ------------------------------------------------------ */
/* A window's handler lives in narma (NARMA_Errhandler, a pointer); the program keeps it in an
 * MPI_Errhandler variable (an int in MPICH). Handlers made by MPI_Win_create_errhandler or
 * returned by MPI_Win_get_errhandler are parked in a table and handed out as values MPICH never
 * uses for a real handle (kind bits 00, object bits 0x6); MPI_ERRORS_RETURN and
 * MPI_ERRORS_ARE_FATAL map onto narma's predefined handlers; MPI_Errhandler_free frees parked
 * handlers through narma and real ones through PMPI_. */
#define NARMA_SHIM_EH_TAG           0x18000000
#define NARMA_SHIM_EH_MAX           (1 << 20)
#define MPI_Win_errhandler_function NARMA_Win_errhandler_function

__attribute__((weak)) NARMA_Errhandler *narma_shim_ehs;
__attribute__((weak)) int narma_shim_nehs;

/* A handle this header handed out (a tagged value outside the table goes to MPI, which
 * refuses it as the invalid handle it is). */
static inline int narma_shim_is_narma_eh(MPI_Errhandler e)
{
    return ((unsigned)e & 0xff000000u) == NARMA_SHIM_EH_TAG &&
           ((unsigned)e & 0xffffffu) < (unsigned)narma_shim_nehs;
}

static inline MPI_Errhandler narma_shim_park_eh(NARMA_Errhandler e)
{
    if (e == NARMA_ERRORS_RETURN) return MPI_ERRORS_RETURN;
    if (e == NARMA_ERRORS_ARE_FATAL) return MPI_ERRORS_ARE_FATAL;
    int i = NARMA_SHIM_TAKE_SLOT(narma_shim_ehs, narma_shim_nehs, 16, NARMA_SHIM_EH_MAX);
    narma_shim_ehs[i] = e;
    return (MPI_Errhandler)(NARMA_SHIM_EH_TAG | i);
}

static inline int narma_shim_Win_create_errhandler(NARMA_Win_errhandler_function *fn,
                                                   MPI_Errhandler *eh)
{
    NARMA_Errhandler e = NARMA_ERRHANDLER_NULL;
    int rc = NARMA_Win_create_errhandler(fn, &e);
    if (rc == NARMA_SUCCESS) *eh = narma_shim_park_eh(e);
    return rc;
}

static inline int narma_shim_Win_set_errhandler(NARMA_Win win, MPI_Errhandler eh)
{
    if (eh == MPI_ERRORS_RETURN) return NARMA_Win_set_errhandler(win, NARMA_ERRORS_RETURN);
    /* MPI's default for windows: a program that asks for it gets narma's own fatal handler */
    if (eh == MPI_ERRORS_ARE_FATAL) return NARMA_Win_set_errhandler(win, NARMA_ERRORS_ARE_FATAL);
#ifdef MPI_ERRORS_ABORT /* MPI-4: abort the processes of the window's communicator */
    if (eh == MPI_ERRORS_ABORT) return NARMA_Win_set_errhandler(win, NARMA_ERRORS_ARE_FATAL);
#endif
    if (!narma_shim_is_narma_eh(eh)) return MPI_ERR_ARG;
    return NARMA_Win_set_errhandler(win, narma_shim_ehs[(unsigned)eh & 0xffffffu]);
}

static inline int narma_shim_Win_get_errhandler(NARMA_Win win, MPI_Errhandler *eh)
{
    NARMA_Errhandler e = NARMA_ERRHANDLER_NULL;
    int rc = NARMA_Win_get_errhandler(win, &e);
    if (rc == NARMA_SUCCESS) *eh = narma_shim_park_eh(e);
    return rc;
}

static inline int narma_shim_Errhandler_free(MPI_Errhandler *eh)
{
    if (!narma_shim_is_narma_eh(*eh)) return PMPI_Errhandler_free(eh);
    NARMA_Errhandler *slot = &narma_shim_ehs[(unsigned)*eh & 0xffffffu];
    int rc = NARMA_Errhandler_free(slot);
    if (rc == NARMA_SUCCESS) {
        *slot = NARMA_ERRHANDLER_NULL;
        *eh = MPI_ERRHANDLER_NULL;
    }
    return rc;
}

#define MPI_Win_create_errhandler narma_shim_Win_create_errhandler
#define MPI_Win_set_errhandler    narma_shim_Win_set_errhandler
#define MPI_Win_get_errhandler    narma_shim_Win_get_errhandler
#define MPI_Win_call_errhandler   NARMA_Win_call_errhandler
#define MPI_Errhandler_free       narma_shim_Errhandler_free

/* ---- Requests ----------------------------------------------------------- */
#define NARMA_SHIM_REQ_TAG  0x14000000 /* kind 00 (never a real MPICH handle), object 0x5 */
#define NARMA_SHIM_REQ_MASK 0xff000000
#define NARMA_SHIM_REQ_MAX  (1 << 20)

__attribute__((weak)) NARMA_Request *narma_shim_reqs;
__attribute__((weak)) int narma_shim_nreqs;

static inline int narma_shim_is_narma(MPI_Request r)
{
    return ((unsigned)r & NARMA_SHIM_REQ_MASK) == NARMA_SHIM_REQ_TAG &&
           ((unsigned)r & ~NARMA_SHIM_REQ_MASK) < (unsigned)narma_shim_nreqs;
}

static inline MPI_Request narma_shim_park(NARMA_Request nr)
{
    int i = NARMA_SHIM_TAKE_SLOT(narma_shim_reqs, narma_shim_nreqs, 64, NARMA_SHIM_REQ_MAX);
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
