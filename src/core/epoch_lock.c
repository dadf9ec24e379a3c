/*
 * Passive target on the epoch engine. A lock word per rank (bit 63
 * exclusive, low bits the number of shared holders) is taken with remote
 * compare-and-swap only (MPI promises atomicity between concurrent atomics
 * on one location only for the same operation): exclusive is CAS 0 -> EXCL,
 * shared is CAS n -> n + 1 while no exclusive holder is present; release is
 * the reverse CAS, so the target never has to call anything. Attempts never block: a lock epoch
 * that cannot take its lock yet stays active with its operations recorded, and progress retries.
 * Unlock flushes the epoch's operations, then releases with an atomic add that publishes them to
 * the next holder. lock_all takes each target's shared lock at the first access to that target.
 */
#include "core/epoch.h"
#include "core/rma.h"
#include <stdlib.h>

int narmai_lock_try(struct narmai_win *w, int type, int rank, int *rc)
{
    uint64_t old;
    if (type == MPI_LOCK_EXCLUSIVE) {
        *rc = narmat_ctl_cas(w, rank, NARMAT_CTL_LOCK, 0, 0, NARMAT_LOCK_EXCL, &old);
        return *rc == NARMA_SUCCESS && old == 0;
    }
    /* Shared: compare-and-swap count -> count + 1 while no exclusive holder. */
    for (uint64_t guess = 0;;) {
        if ((*rc = narmat_ctl_cas(w, rank, NARMAT_CTL_LOCK, 0, guess, guess + 1, &old))) return 0;
        if (old == guess) return 1;
        if (old & NARMAT_LOCK_EXCL) return 0;
        guess = old;
    }
}

/* type < 0: NOCHECK epoch, nothing to release. */
int narmai_lock_release(struct narmai_win *w, int rank, int type)
{
    int rc = narmat_flush(w, rank);
    if (rc || type < 0) return rc;
    uint64_t old;
    if (type == MPI_LOCK_EXCLUSIVE)
        return narmat_ctl_cas(w, rank, NARMAT_CTL_LOCK, 0, NARMAT_LOCK_EXCL, 0, &old);
    for (uint64_t guess = 1;;) {
        if ((rc = narmat_ctl_cas(w, rank, NARMAT_CTL_LOCK, 0, guess, guess - 1, &old))) return rc;
        if (old == guess) return NARMA_SUCCESS;
        guess = old;
    }
}

static int check_rank(struct narmai_win *w, int rank)
{
    if (rank < 0 || rank >= w->size)
        return NARMAI_ERR(NARMA_ERR_RANK, "rank %d outside 0..%d", rank, w->size - 1);
    return NARMA_SUCCESS;
}

static int ilock_impl(int lock_type, int rank, int assert, NARMA_Win w, NARMA_Request *request)
{
    if (rank == MPI_PROC_NULL) return narmai_proc_null(w, request);
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return NARMAI_ERR(NARMA_ERR_ARG, "lock type %d", lock_type);
    int rc = check_rank(w, rank);
    if (rc) return rc;
    narmai_fence_yield(w);
    if (w->cur_access != NULL)
        return NARMAI_ERR(NARMA_ERR_RMA_CONFLICT, "another access epoch is open");
    if (w->lock_ep[rank] != NULL)
        return NARMAI_ERR(NARMA_ERR_RMA_CONFLICT, "rank %d is already locked", rank);
    struct narmai_epoch *e;
    if ((rc = narmai_epoch_open(w, NARMAI_EP_LOCK, &e))) return rc;
    e->lock_rank = rank;
    e->lock_type = lock_type;
    e->assert = assert;
    w->lock_ep[rank] = e;
    w->nlock_open++;
    narmai_epoch_progress(w);
    return narmai_request_done(w, request);
}

static int iunlock_impl(int rank, NARMA_Win w, NARMA_Request *request)
{
    if (rank == MPI_PROC_NULL) return narmai_proc_null(w, request);
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    int rc = check_rank(w, rank);
    if (rc) return rc;
    struct narmai_epoch *e = w->lock_ep[rank];
    if (e == NULL) return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "rank %d is not locked", rank);
    w->lock_ep[rank] = NULL;
    w->nlock_open--;
    return narmai_epoch_close(w, e, request);
}

static int ilock_all_impl(int assert, NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    narmai_fence_yield(w);
    if (w->cur_access != NULL || w->nlock_open)
        return NARMAI_ERR(NARMA_ERR_RMA_CONFLICT, "another access epoch is open");
    uint8_t *held = calloc((size_t)w->size, 1);
    struct narmai_epoch *e;
    int rc;
    if (held == NULL) return NARMAI_ERR(NARMA_ERR_NO_MEM, "lock_all");
    if ((rc = narmai_epoch_open(w, NARMAI_EP_LOCK_ALL, &e))) {
        free(held);
        return rc;
    }
    /* NOCHECK: no lock is taken; every target counts as held, nothing is released. */
    if (assert & MPI_MODE_NOCHECK)
        for (int r = 0; r < w->size; r++)
            held[r] = 2;
    e->held_all = held;
    e->assert = assert;
    w->cur_access = e;
    narmai_epoch_progress(w);
    return narmai_request_done(w, request);
}

static int iunlock_all_impl(NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    struct narmai_epoch *e = w->cur_access;
    if (e == NULL || e->type != NARMAI_EP_LOCK_ALL)
        return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "unlock_all without lock_all");
    w->cur_access = NULL;
    return narmai_epoch_close(w, e, request);
}

/* Blocking lock returns once the lock is held, so the program may then access
 * its own window memory under the lock (as MPI requires for rank == self). */
int NARMA_Win_lock(int lock_type, int rank, int assert, NARMA_Win w)
{
    int rc = ilock_impl(lock_type, rank, assert, w, NULL);
    if (rc || rank == MPI_PROC_NULL) return rc;
    struct narmai_epoch *e = w->lock_ep[rank];
    narmai_waiter wt = {0};
    while (!narmai_epoch_target_ready(w, e, rank)) {
        narmai_progress();
        narmai_wait_step(&wt);
    }
    return NARMA_SUCCESS;
}

int NARMA_Win_unlock(int rank, NARMA_Win w) { return iunlock_impl(rank, w, NULL); }
int NARMA_Win_lock_all(int assert, NARMA_Win w) { return ilock_all_impl(assert, w, NULL); }
int NARMA_Win_unlock_all(NARMA_Win w) { return iunlock_all_impl(w, NULL); }

/* Public nonblocking forms: the same calls, returning their request. */
int NARMA_Win_ilock(int lock_type, int rank, int assert, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAI_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return ilock_impl(lock_type, rank, assert, w, request);
}

int NARMA_Win_iunlock(int rank, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAI_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return iunlock_impl(rank, w, request);
}

int NARMA_Win_ilock_all(int assert, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAI_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return ilock_all_impl(assert, w, request);
}

int NARMA_Win_iunlock_all(NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAI_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return iunlock_all_impl(w, request);
}
