/* Epoch-state checks for RMA calls and the flush family. */
#include "core/epoch.h"

int narmai_check_access(struct narmai_win *w, int target)
{
    switch (w->access) {
    case NARMAI_ACC_FENCE: return NARMA_SUCCESS;
    case NARMAI_ACC_PSCW:
        if (w->acc_ids[target] == 0)
            return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "rank %d is not in the access group", target);
        /* Access needs the target's matching exposure (its post) first. */
        narmai_wait_ctl(w, NARMAT_CTL_GRANT, target, w->acc_ids[target]);
        return NARMA_SUCCESS;
    case NARMAI_ACC_LOCK:
        if (w->lockstate[target] == NARMAI_UNLOCKED)
            return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "rank %d is not locked", target);
        return NARMA_SUCCESS;
    case NARMAI_ACC_LOCK_ALL:
        /* lock_all takes each target's shared lock at the first access to it. */
        if (w->lockstate[target] == NARMAI_UNLOCKED)
            return narmai_lock_acquire(w, MPI_LOCK_SHARED, target);
        return NARMA_SUCCESS;
    default:
        return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "no access epoch is open on the window");
    }
}

/* Flushes are accepted in any epoch state: besides passive-target epochs
 * they complete notified accesses, which form their own epochs (Listing 1). */
static int flush_common(NARMA_Win w, int rank, int local)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (rank >= w->size || rank < -1)
        return NARMAI_ERR(NARMA_ERR_RANK, "rank %d outside 0..%d", rank, w->size - 1);
    return local ? narmat_flush_local(w, rank) : narmat_flush(w, rank);
}

int NARMA_Win_flush(int rank, NARMA_Win w)
{
    if (rank < 0) return NARMAI_ERR(NARMA_ERR_RANK, "rank %d", rank);
    return flush_common(w, rank, 0);
}
int NARMA_Win_flush_all(NARMA_Win w) { return flush_common(w, -1, 0); }
int NARMA_Win_flush_local(int rank, NARMA_Win w)
{
    if (rank < 0) return NARMAI_ERR(NARMA_ERR_RANK, "rank %d", rank);
    return flush_common(w, rank, 1);
}
int NARMA_Win_flush_local_all(NARMA_Win w) { return flush_common(w, -1, 1); }

int NARMA_Win_sync(NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    int rc = narmat_sync(w);
    narmai_progress_win(w);
    return rc;
}
