/*
 * Fence. Each (i)fence closes the program's current fence epoch (or, for the
 * first fence, an empty one) and opens the next unless NOSUCCEED. Closing
 * means: operations issued and flushed, then a barrier on control words,
 * advanced without blocking (epoch.c, fence_barrier: one step for up to 16
 * ranks, a dissemination barrier beyond). Counters only grow, so nothing is
 * reset and consecutive fences cannot be confused. The next fence epoch activates only
 * when the barrier is done (fence epochs never overlap or reorder).
 */
#include "core/epoch.h"

static int ifence_impl(int assert, NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    int rc = narmai_assert_check(assert);
    if (rc) return rc;
    if ((w->cur_access != NULL && w->cur_access->type != NARMAI_EP_FENCE) || w->nlock_open)
        return NARMAU_ERR(NARMA_ERR_RMA_SYNC, "fence inside a PSCW or lock epoch");
    if (w->cur_exposure != NULL)
        return NARMAU_ERR(NARMA_ERR_RMA_SYNC, "fence inside a PSCW exposure epoch");
    struct narmai_epoch *old = w->cur_access;
    /* Out of memory changes nothing: the epochs this call opens are reserved first, and a
     * close that could not make its request (it then closed nothing) is undone. A blocking
     * fence needs no spare for its successor: the epoch it closes is done, hence cached, when
     * the successor opens; it allocates nothing once the window's two reserved epochs are
     * there (the calls opening lock and PSCW epochs keep them, narmai_epoch_open_spared). */
    const int first = old == NULL;
    const int opens = first + (request != NULL && !(assert &MPI_MODE_NOSUCCEED));
    if ((rc = narmai_epoch_reserve(w, opens))) return rc;
    if (first) { /* the first fence still synchronises: close an empty epoch */
        if ((rc = narmai_epoch_open(w, NARMAI_EP_FENCE, &old))) return rc;
    }
    old->fence_n = ++w->fence_count;
    w->cur_access = NULL;
    if ((rc = narmai_epoch_close(w, old, request))) {
        /* Blocking: the epoch's own error, after the barrier. Nonblocking: no memory for the
         * request, before anything happened. */
        if (request == NULL) return rc;
        w->fence_count--;
        old->fence_n = 0;
        if (first)
            narmai_epoch_free(w, old);
        else
            w->cur_access = old;
        return rc;
    }
    if (!(assert &MPI_MODE_NOSUCCEED)) return narmai_fence_open(w, assert);
    return NARMA_SUCCESS;
}

static int api_win_fence(int assert, NARMA_Win w)
{
    int rc = ifence_impl(assert, w, NULL);
    if (rc == NARMA_SUCCESS) narmai_progress_win(w);
    return rc;
}

int NARMA_Win_fence(int assert, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_fence(assert, w));
}

/* Public nonblocking forms: the same calls, returning their request. */
static int api_win_ifence(int assert, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return ifence_impl(assert, w, request);
}

int NARMA_Win_ifence(int assert, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_ifence(assert, w, request));
}
