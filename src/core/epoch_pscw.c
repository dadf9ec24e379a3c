/*
 * General active target synchronisation (post/start/complete/wait) with the
 * O(1) epoch matching of the nonblocking-RMA paper, section VII-B. Per peer r
 * a process keeps a_req[r] (accesses it requested toward r) and e_open[r]
 * (exposures it opened toward r); r writes GRANT[me] (exposures r granted me)
 * and DONE[me] (access epochs r completed toward me) in my control words.
 *   post:     e_open[r]++, E = e_open[r]; GRANT[me]@r += 1
 *   start:    a_req[r]++,  A = a_req[r]   (nothing sent)
 *   access r: wait GRANT[r] >= A          (r has opened the matching exposure)
 *   complete: wait every grant; flush; DONE[me]@r += 1
 *   wait:     wait DONE[r] >= E for every r of the exposure group
 * Epochs match first-in first-out; any number of pending epochs costs the
 * same three counters per peer.
 */
#include "core/epoch.h"
#include <stdlib.h>

int NARMA_Win_post(MPI_Group group, int assert, NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (w->exposed) return NARMAI_ERR(NARMA_ERR_RMA_CONFLICT, "an exposure epoch is already open");
    int *ranks, n, rc = narmai_group_ranks(w, group, &ranks, &n);
    if (rc) return rc;
    if (w->access == NARMAI_ACC_FENCE) narmai_fence_yield(w);
    /* Our local stores to the window are released by the grant (ctl_add). */
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        w->exp_ids[r] = ++w->e_open[r];
        w->exp_group[i] = r;
        if ((rc = narmat_ctl_add(w, r, NARMAT_CTL_GRANT, w->rank, 1))) break;
    }
    free(ranks);
    if (rc) return rc;
    w->nexp = n;
    w->exposed = 1;
    return NARMA_SUCCESS;
}

int NARMA_Win_start(MPI_Group group, int assert, NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (w->access != NARMAI_ACC_NONE && w->access != NARMAI_ACC_FENCE)
        return NARMAI_ERR(NARMA_ERR_RMA_CONFLICT, "an access epoch is already open");
    int *ranks, n, rc = narmai_group_ranks(w, group, &ranks, &n);
    if (rc) return rc;
    narmai_fence_yield(w);
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        w->acc_ids[r] = ++w->a_req[r];
        w->acc_group[i] = r;
    }
    free(ranks);
    w->nacc = n;
    w->access = NARMAI_ACC_PSCW;
    return NARMA_SUCCESS;
}

int NARMA_Win_complete(NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (w->access != NARMAI_ACC_PSCW)
        return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "complete without a matching start");
    int rc = NARMA_SUCCESS;
    for (int i = 0; i < w->nacc; i++) {
        int r = w->acc_group[i];
        narmai_wait_ctl(w, NARMAT_CTL_GRANT, r, w->acc_ids[r]);
    }
    for (int i = 0; i < w->nacc && rc == NARMA_SUCCESS; i++) {
        int r = w->acc_group[i];
        /* ctl_add orders our data to r before the done count r acquires. */
        rc = narmat_ctl_add(w, r, NARMAT_CTL_DONE, w->rank, 1);
        w->acc_ids[r] = 0;
    }
    w->nacc = 0;
    w->access = NARMAI_ACC_NONE;
    return rc;
}

static int exposure_done(struct narmai_win *w)
{
    for (int i = 0; i < w->nexp; i++) {
        int r = w->exp_group[i];
        if (narmat_ctl_load(w, NARMAT_CTL_DONE, r) < w->exp_ids[r]) return 0;
    }
    return 1;
}

static void exposure_close(struct narmai_win *w)
{
    w->exposed = 0;
    w->nexp = 0;
    narmai_progress_win(w);
}

int NARMA_Win_wait(NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (!w->exposed) return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "wait without a matching post");
    for (int i = 0; i < w->nexp; i++) {
        int r = w->exp_group[i];
        narmai_wait_ctl(w, NARMAT_CTL_DONE, r, w->exp_ids[r]);
    }
    exposure_close(w);
    return NARMA_SUCCESS;
}

int NARMA_Win_test(NARMA_Win w, int *flag)
{
    if (!narmai_win_ok(w)) return NARMAI_ERR(NARMA_ERR_WIN, "invalid window");
    if (flag == NULL) return NARMAI_ERR(NARMA_ERR_ARG, "NULL flag");
    if (!w->exposed) return NARMAI_ERR(NARMA_ERR_RMA_SYNC, "test without a matching post");
    narmai_progress();
    *flag = exposure_done(w);
    if (*flag) exposure_close(w);
    return NARMA_SUCCESS;
}
