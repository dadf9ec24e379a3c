/*
 * Fence: complete this process's RMA operations, then a dissemination
 * barrier on control words (ceil(log2 P) rounds; in round k each rank bumps
 * the round-k counter of rank + 2^k and waits for its own to reach the
 * number of fences so far). Counters only grow, so no reset is needed and
 * consecutive fences cannot be confused. Every wait polls local memory only.
 */
#include "core/epoch.h"

int NARMA_Win_fence(int assert, NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (w->access != NARMAI_ACC_NONE && w->access != NARMAI_ACC_FENCE)
        return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "fence inside a PSCW or lock epoch");
    if (w->exposed) return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "fence inside a PSCW exposure epoch");
    int rc = narmat_flush(w, -1);
    if (rc) return rc;
    uint64_t n = ++w->fence_count;
    for (int k = 0, d = 1; d < w->size; k++, d <<= 1) {
        if ((rc = narmat_ctl_add(w, (w->rank + d) % w->size, NARMAT_CTL_FENCE, k, 1))) return rc;
        narmai_wait_ctl(w, NARMAT_CTL_FENCE, k, n);
    }
    w->access = (assert & MPI_MODE_NOSUCCEED) ? NARMAI_ACC_NONE : NARMAI_ACC_FENCE;
    narmai_progress_win(w);
    return NARMA_SUCCESS;
}
