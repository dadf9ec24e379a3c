/*
 * General active target synchronisation on the epoch engine, with the O(1)
 * matching of the nonblocking-RMA paper (section VII-B). Per peer r a process
 * keeps a_req[r] (accesses requested toward r) and e_open[r] (exposures opened
 * toward r); r writes GRANT[me] (exposures r granted me) and DONE[me] (access
 * epochs r completed toward me) in my control words. At activation:
 *   exposure: E = ++e_open[r]; GRANT[me]@r += 1
 *   access:   A = ++a_req[r]
 * then an access to r may proceed once GRANT[r] >= A; closing the access
 * epoch adds DONE[me]@r += 1 after flushing; the exposure completes when
 * DONE[r] >= E for every origin. Epochs therefore match first-in first-out,
 * and an origin several epochs late still finds its grant.
 */
#include "core/epoch.h"

/* The group is translated first, so a bad group leaves the epoch queue as it was. */
static int open_group_epoch(struct narmai_win *w, int type, MPI_Group group, int assert,
                            struct narmai_epoch **out)
{
    const int *ranks = NULL;
    int n, rc = narmai_group_ranks(w, group, &ranks, &n);
    if (rc) return rc;
    struct narmai_epoch *e;
    if ((rc = narmai_epoch_open_spared(w, type, &e))) return rc;
    if ((rc = narmai_epoch_members(e, n))) {
        narmai_epoch_free(w, e);
        return rc;
    }
    for (int i = 0; i < n; i++)
        e->ranks[i] = ranks[i];
    e->n = n;
    e->assert = assert;
    *out = e;
    return NARMA_SUCCESS;
}

static int ipost_impl(MPI_Group group, int assert, NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    int rc = narmai_assert_check(assert);
    if (rc) return rc;
    const int yield = narmai_fence_empty(w);
    if (w->cur_exposure != NULL ||
        (w->cur_access && w->cur_access->type == NARMAI_EP_FENCE && !yield))
        return NARMAU_ERR(NARMA_ERR_RMA_CONFLICT, "an exposure epoch is already open");
    struct narmai_epoch *e;
    rc = open_group_epoch(w, NARMAI_EP_EXPOSURE, group, assert, &e);
    if (rc) return rc;
    if ((rc = narmai_request_done(w, request))) { /* before anything moves */
        narmai_epoch_free(w, e);
        return rc;
    }
    if (yield) narmai_fence_yield(w);
    w->cur_exposure = e;
    narmai_epoch_progress(w); /* activate now if nothing is ahead: grants go out at once */
    return NARMA_SUCCESS;
}

static int istart_impl(MPI_Group group, int assert, NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    int rc = narmai_assert_check(assert);
    if (rc) return rc;
    const int yield = narmai_fence_empty(w);
    if ((w->cur_access != NULL && !yield) || w->nlock_open)
        return NARMAU_ERR(NARMA_ERR_RMA_CONFLICT, "an access epoch is already open");
    struct narmai_epoch *e;
    rc = open_group_epoch(w, NARMAI_EP_ACCESS, group, assert, &e);
    if (rc) return rc;
    if ((rc = narmai_request_done(w, request))) { /* before anything moves */
        narmai_epoch_free(w, e);
        return rc;
    }
    if (yield) narmai_fence_yield(w);
    for (int i = 0; i < e->n; i++)
        w->acc_member[e->ranks[i]] = i + 1;
    w->cur_access = e;
    narmai_epoch_progress(w);
    return NARMA_SUCCESS;
}

static int icomplete_impl(NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    struct narmai_epoch *e = w->cur_access;
    if (e == NULL || e->type != NARMAI_EP_ACCESS)
        return NARMAU_ERR(NARMA_ERR_RMA_SYNC, "complete without a matching start");
    for (int i = 0; i < e->n; i++)
        w->acc_member[e->ranks[i]] = 0;
    w->cur_access = NULL;
    int rc = narmai_epoch_close(w, e, request);
    if (rc && request != NULL) { /* no memory for the request: the epoch stays open */
        for (int i = 0; i < e->n; i++)
            w->acc_member[e->ranks[i]] = i + 1;
        w->cur_access = e;
    }
    return rc;
}

static int iwait_impl(NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    struct narmai_epoch *e = w->cur_exposure;
    if (e == NULL) return NARMAU_ERR(NARMA_ERR_RMA_SYNC, "wait without a matching post");
    w->cur_exposure = NULL;
    int rc = narmai_epoch_close(w, e, request);
    if (rc && request != NULL) w->cur_exposure = e; /* no memory for the request: still open */
    return rc;
}

int NARMA_Win_post(MPI_Group group, int assert, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, ipost_impl(group, assert, w, NULL));
}

int NARMA_Win_start(MPI_Group group, int assert, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, istart_impl(group, assert, w, NULL));
}

int NARMA_Win_complete(NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, icomplete_impl(w, NULL));
}

static int api_win_wait(NARMA_Win w)
{
    int rc = iwait_impl(w, NULL);
    if (rc == NARMA_SUCCESS) narmai_progress_win(w);
    return rc;
}

int NARMA_Win_wait(NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_wait(w));
}

/* MPI_Win_test: completes (and closes) the exposure epoch only if it is done. */
static int api_win_test(NARMA_Win w, int *flag)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (flag == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL flag");
    struct narmai_epoch *e = w->cur_exposure;
    if (e == NULL) return NARMAU_ERR(NARMA_ERR_RMA_SYNC, "test without a matching post");
    narmai_progress_on(w);
    *flag = 0;
    if (e->state != NARMAI_EP_ACTIVE) return NARMA_SUCCESS;
    for (int i = 0; i < e->n; i++)
        if (narmat_ctl_load(&w->t, NARMAT_CTL_DONE, e->ranks[i]) < e->ids[i]) return NARMA_SUCCESS;
    int rc = iwait_impl(w, NULL);
    *flag = 1;
    return rc;
}

int NARMA_Win_test(NARMA_Win w, int *flag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_test(w, flag));
}

/* Public nonblocking forms: the same calls, returning their request. */
static int api_win_ipost(MPI_Group group, int assert, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return ipost_impl(group, assert, w, request);
}

int NARMA_Win_ipost(MPI_Group group, int assert, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_ipost(group, assert, w, request));
}

static int api_win_istart(MPI_Group group, int assert, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return istart_impl(group, assert, w, request);
}

int NARMA_Win_istart(MPI_Group group, int assert, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_istart(group, assert, w, request));
}

static int api_win_icomplete(NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return icomplete_impl(w, request);
}

int NARMA_Win_icomplete(NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_icomplete(w, request));
}

static int api_win_iwait(NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return iwait_impl(w, request);
}

int NARMA_Win_iwait(NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_iwait(w, request));
}
