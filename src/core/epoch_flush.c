/*
 * The flush family and Win_sync. A flush covers the RMA calls made before it:
 * once none of them is still recorded (waiting for its epoch or target), the
 * transport flush completes them. Flushes are accepted in any epoch state:
 * besides passive-target epochs they complete notified accesses, which form
 * their own epochs (the paper's Listing 1 flushes with no epoch open).
 */
#include "core/epoch.h"
#include "core/rma.h"

/* Complete once no operation to the flush's target (or to any, for the _all
 * forms) made before it is still recorded: operations to other targets may
 * wait behind a lock held elsewhere and must not hold this flush up. */
static int flush_poll(struct narmai_request *r)
{
    struct narmai_win *w = r->win;
    if (narmai_recorded_upto(w, r->target, r->upto)) return 0;
    r->st_error = r->local ? narmat_flush_local(&w->t, r->target) : narmat_flush(&w->t, r->target);
    r->state = NARMAI_REQ_COMPLETE;
    w->nflush--; /* the request no longer needs the window */
    return 1;
}

static int iflush_common(NARMA_Win w, int rank, int local, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    if (rank >= w->t.size || rank < -1)
        return NARMAU_ERR(NARMA_ERR_RANK, "rank %d outside 0..%d", rank, w->t.size - 1);
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_EPOCH, w);
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    r->st_src = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->poll = flush_poll;
    r->upto = w->op_seq;
    r->target = rank;
    r->local = (uint8_t)local;
    w->nflush++;
    *request = r;
    /* Without blocking flushes (shm) the request is usually complete here. */
    if (!narmat_flush_blocks(&w->t)) flush_poll(r);
    return NARMA_SUCCESS;
}

static int api_win_iflush(int rank, NARMA_Win w, NARMA_Request *request)
{
    if (request && rank == MPI_PROC_NULL) return narmai_proc_null(w, request);
    if (rank < 0) return NARMAU_ERR(NARMA_ERR_RANK, "rank %d", rank);
    return iflush_common(w, rank, 0, request);
}

int NARMA_Win_iflush(int rank, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_iflush(rank, w, request));
}
int NARMA_Win_iflush_all(NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, iflush_common(w, -1, 0, request));
}
static int api_win_iflush_local(int rank, NARMA_Win w, NARMA_Request *request)
{
    if (request && rank == MPI_PROC_NULL) return narmai_proc_null(w, request);
    if (rank < 0) return NARMAU_ERR(NARMA_ERR_RANK, "rank %d", rank);
    return iflush_common(w, rank, 1, request);
}

int NARMA_Win_iflush_local(int rank, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_iflush_local(rank, w, request));
}
int NARMA_Win_iflush_local_all(NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, iflush_common(w, -1, 1, request));
}

/* Blocking forms: straight to the transport when nothing is recorded (the
 * common case, and the notified ping-pong's hot path). */
static int flush_blocking(NARMA_Win w, int rank, int local)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (rank >= w->t.size || rank < -1)
        return NARMAU_ERR(NARMA_ERR_RANK, "rank %d outside 0..%d", rank, w->t.size - 1);
    if (!narmai_recorded_upto(w, rank, w->op_seq))
        return local ? narmat_flush_local(&w->t, rank) : narmat_flush(&w->t, rank);
    NARMA_Request r;
    int rc = iflush_common(w, rank, local, &r);
    return rc ? rc : NARMA_Wait(&r, MPI_STATUS_IGNORE);
}

static int api_win_flush(int rank, NARMA_Win w)
{
    if (rank == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
    if (rank < 0) return NARMAU_ERR(NARMA_ERR_RANK, "rank %d", rank);
    return flush_blocking(w, rank, 0);
}

int NARMA_Win_flush(int rank, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_flush(rank, w));
}
int NARMA_Win_flush_all(NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, flush_blocking(w, -1, 0));
}
static int api_win_flush_local(int rank, NARMA_Win w)
{
    if (rank == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
    if (rank < 0) return NARMAU_ERR(NARMA_ERR_RANK, "rank %d", rank);
    return flush_blocking(w, rank, 1);
}

int NARMA_Win_flush_local(int rank, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_flush_local(rank, w));
}
int NARMA_Win_flush_local_all(NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, flush_blocking(w, -1, 1));
}

static int api_win_sync(NARMA_Win w)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    int rc = narmat_sync(&w->t);
    narmai_progress_win(w);
    return rc;
}

int NARMA_Win_sync(NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_sync(w));
}
