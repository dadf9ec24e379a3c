/*
 * The progress engine. One pass over a window, in a fixed order:
 *   1. the window's transport is polled: notifications drained from the
 *      local ring are matched (or queued as unexpected) in arrival order;
 *   2. (epoch engine) deferred epoch operations are retried;
 *   3. requests observe completion in Test/Wait themselves.
 * It runs inside every waiting call and from NARMA_Progress; no helper thread.
 * A call that waits for one window (a request's, an epoch's) passes over
 * what can complete it: that window every time; every NARMAI_BUSY_EVERY-th
 * time also the windows with work under way (epochs not yet done, active
 * notification requests, flush requests), since a wait may depend on another
 * window's progress (a peer that answers only after our epoch there
 * completes); and every NARMAI_ALL_EVERY-th time every window, so that idle
 * ones still drain their rings (a writer facing a full ring drives its own
 * progress meanwhile). Only polls cost (an mpi window's enters the MPI
 * library): finding the busy windows is a walk over flags, so the cost of a
 * wait does not grow with the idle windows a program has.
 * Waits spin for a bounded number of polls (NARMA_SPIN_COUNT) and then yield
 * the core on every poll, so oversubscribed ranks make progress.
 */
#include "core/narmai.h"
#include "core/epoch.h"

/* The transport's notification callback: arg is the window polled. */
static void narmai_note(void *arg, int32_t src, int32_t tag, int64_t bytes)
{
    narmai_notify_arrived(arg, src, tag, bytes);
}

void narmai_progress_win(struct narmai_win *w)
{
    narmat_poll(&w->t, narmai_note, w);
    narmai_epoch_progress(w);
}

/* Passes over the waited-for window between two passes over the busy windows, and between
 * two passes over every window. */
#define NARMAI_BUSY_EVERY 16
#define NARMAI_ALL_EVERY  256

/* Work under way that a poll can advance. */
static int narmai_win_busy(const struct narmai_win *w)
{
    return !narmau_dlist_empty(&w->epochs) || !narmau_dlist_empty(&w->active_reqs) ||
           w->nflush > 0 || !narmau_dlist_empty(&w->pull_reqs);
}

void narmai_progress_on(struct narmai_win *w)
{
    if (w == NULL || narmai_g.nwindows <= 1 || !narmai_win_ok(w) ||
        ++narmai_g.focused % NARMAI_ALL_EVERY == 0) {
        narmai_progress();
        return;
    }
    if (narmai_g.focused % NARMAI_BUSY_EVERY != 0) {
        narmai_progress_win(w);
        return;
    }
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &narmai_g.windows)
    {
        struct narmai_win *x = narmau_container_of(pos, struct narmai_win, link);
        if (x == w || (narmai_win_busy(x) && narmai_win_pollable(x))) narmai_progress_win(x);
    }
}

void narmai_progress(void)
{
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &narmai_g.windows)
    {
        struct narmai_win *x = narmau_container_of(pos, struct narmai_win, link);
        if (narmai_win_pollable(x)) narmai_progress_win(x);
    }
}

int narmai_coll_wait(struct narmai_win *w, MPI_Request *req)
{
    narmau_waiter wt = {0};
    for (;;) {
        int done = 0, mrc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS) {
            /* The caller's buffers must not be left to a collective still under way. */
            MPI_Wait(req, MPI_STATUS_IGNORE);
            return narmau_mpi_error(mrc);
        }
        if (done) return NARMA_SUCCESS;
        /* w every time, the others at a bounded rate: the peer may be held by a full ring of
         * another window toward this process. */
        narmai_progress_on(w);
        narmau_wait_step(&wt);
    }
}

int NARMA_Progress(void)
{
    NARMAI_API_LOCK();
    int rc = narmai_ensure_init();
    if (rc) return rc;
    narmai_progress();
    return NARMA_SUCCESS;
}
