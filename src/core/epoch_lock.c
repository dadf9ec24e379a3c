/*
 * Passive target: a lock word per rank (bit 63 exclusive, low bits the number
 * of shared holders), taken with remote atomics, so the target never has to
 * call anything. Exclusive: CAS 0 -> EXCL. Shared: fetch_add 1, and back off
 * (fetch_add -1) if an exclusive holder was present. Unlock completes the
 * epoch's operations first (flush), then releases with an atomic add that
 * publishes them to the next holder.
 */
#include "core/epoch.h"

int narmai_lock_acquire(struct narmai_win *w, int type, int rank)
{
    narmai_waiter wt = {0};
    uint64_t old;
    int rc;
    if (type == MPI_LOCK_EXCLUSIVE) {
        while ((rc = narmat_ctl_cas(w, rank, NARMAT_CTL_LOCK, 0, 0, NARMAT_LOCK_EXCL, &old)) ==
                   NARMA_SUCCESS && old != 0) {
            narmai_progress();
            narmai_wait_step(&wt);
        }
        if (rc) return rc;
        w->lockstate[rank] = NARMAI_LOCKED_EXCL;
    } else {
        for (;;) {
            if ((rc = narmat_ctl_fetch_add(w, rank, NARMAT_CTL_LOCK, 0, 1, &old))) return rc;
            if (!(old & NARMAT_LOCK_EXCL)) break;
            if ((rc = narmat_ctl_add(w, rank, NARMAT_CTL_LOCK, 0, UINT64_MAX))) return rc;
            narmai_progress();
            narmai_wait_step(&wt);
        }
        w->lockstate[rank] = NARMAI_LOCKED_SHARED;
    }
    w->nlocked++;
    return NARMA_SUCCESS;
}

int narmai_lock_release(struct narmai_win *w, int rank)
{
    int rc = narmat_flush(w, rank);
    if (rc) return rc;
    uint8_t s = w->lockstate[rank];
    if (s == NARMAI_LOCKED_EXCL) rc = narmat_ctl_add(w, rank, NARMAT_CTL_LOCK, 0, NARMAT_LOCK_EXCL);
    else if (s == NARMAI_LOCKED_SHARED) rc = narmat_ctl_add(w, rank, NARMAT_CTL_LOCK, 0, UINT64_MAX);
    w->lockstate[rank] = NARMAI_UNLOCKED;
    w->nlocked--;
    return rc;
}

int NARMA_Win_lock(int lock_type, int rank, int assert, NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return NARMAI_ERR(NARMA_ERR_ARG, "lock type %d", lock_type);
    if (rank < 0 || rank >= w->size)
        return NARMAI_ERR(NARMA_ERR_RANK, "rank %d outside 0..%d", rank, w->size - 1);
    narmai_fence_yield(w);
    if (w->access != NARMAI_ACC_NONE && w->access != NARMAI_ACC_LOCK)
        return NARMAI_ERR(NARMA_ERR_RMA_CONFLICT, "another access epoch is open");
    if (w->lockstate[rank] != NARMAI_UNLOCKED)
        return NARMAI_ERR(NARMA_ERR_RMA_CONFLICT, "rank %d is already locked", rank);
    if (assert & MPI_MODE_NOCHECK) {
        w->lockstate[rank] = NARMAI_LOCKED_NOCHECK;
        w->nlocked++;
    } else {
        int rc = narmai_lock_acquire(w, lock_type, rank);
        if (rc) return rc;
    }
    w->access = NARMAI_ACC_LOCK;
    return NARMA_SUCCESS;
}

int NARMA_Win_unlock(int rank, NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (rank < 0 || rank >= w->size)
        return NARMAI_ERR(NARMA_ERR_RANK, "rank %d outside 0..%d", rank, w->size - 1);
    if (w->access != NARMAI_ACC_LOCK || w->lockstate[rank] == NARMAI_UNLOCKED)
        return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "rank %d is not locked", rank);
    int rc = narmai_lock_release(w, rank);
    if (w->nlocked == 0) w->access = NARMAI_ACC_NONE;
    return rc;
}

int NARMA_Win_lock_all(int assert, NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    narmai_fence_yield(w);
    if (w->access != NARMAI_ACC_NONE)
        return NARMAI_ERR(NARMA_ERR_RMA_CONFLICT, "another access epoch is open");
    if (assert & MPI_MODE_NOCHECK) {
        for (int r = 0; r < w->size; r++) w->lockstate[r] = NARMAI_LOCKED_NOCHECK;
        w->nlocked = w->size;
    }
    w->access = NARMAI_ACC_LOCK_ALL;
    return NARMA_SUCCESS;
}

int NARMA_Win_unlock_all(NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (w->access != NARMAI_ACC_LOCK_ALL)
        return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "unlock_all without lock_all");
    int rc = NARMA_SUCCESS;
    for (int r = 0; r < w->size; r++) {
        if (w->lockstate[r] != NARMAI_UNLOCKED) {
            int e = narmai_lock_release(w, r);
            if (e && !rc) rc = e;
        }
    }
    w->access = NARMAI_ACC_NONE;
    return rc;
}
