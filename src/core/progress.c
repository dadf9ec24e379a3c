/*
 * The progress engine. One pass over a window, in a fixed order:
 *   1. the window's transport is polled: notifications drained from the
 *      local ring are matched (or queued as unexpected) in arrival order;
 *   2. (epoch engine) deferred epoch operations are retried;
 *   3. requests observe completion in Test/Wait themselves.
 * It runs inside every waiting call and from NARMA_Progress; no helper thread.
 * A call that waits for one window (a request's, an epoch's) passes over
 * that window every time and over all windows every NARMAI_OTHERS_EVERY-th
 * time, so the cost of a wait does not grow with the windows a program has
 * (an mpi window's poll enters the MPI library) while every window still
 * advances, and a wait that depends on another window's progress (a peer
 * that answers only after our epoch there completes) still ends.
 * Waits spin for a bounded number of polls (NARMA_SPIN_COUNT) and then yield
 * the core on every poll, so oversubscribed ranks make progress.
 */
#include "core/narmai.h"
#include "core/epoch.h"
#include <sched.h>

void narmai_progress_win(struct narmai_win *w)
{
    narmat_poll(w, narmai_notify_arrived);
    narmai_epoch_progress(w);
}

/* Passes over the waited-for window between two passes over all windows. */
#define NARMAI_OTHERS_EVERY 16

void narmai_progress_on(struct narmai_win *w)
{
    if (w != NULL && narmai_g.nwindows > 1 && narmai_win_ok(w) &&
        ++narmai_g.focused % NARMAI_OTHERS_EVERY != 0)
        narmai_progress_win(w);
    else
        narmai_progress();
}

void narmai_progress(void)
{
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &narmai_g.windows)
    {
        narmai_progress_win(narmau_container_of(pos, struct narmai_win, link));
    }
}

void narmau_wait_step(narmau_waiter *wt)
{
    if (wt->spins < narmau_spin_count) {
        wt->spins++;
        narmau_cpu_relax();
    } else {
        sched_yield();
    }
}

int NARMA_Progress(void)
{
    int rc = narmai_ensure_init();
    if (rc) return rc;
    narmai_progress();
    return NARMA_SUCCESS;
}
