/* Epoch engine internals shared by epoch_*.c. */
#ifndef NARMAI_EPOCH_H
#define NARMAI_EPOCH_H
#include "core/narmai.h"
#include "transport/transport.h"

/* Wait, driving progress, until my control word (kind, arg) reaches v. */
static inline void narmai_wait_ctl(struct narmai_win *w, int kind, int arg, uint64_t v)
{
    narmai_waiter wt = {0};
    while (narmat_ctl_load(w, kind, arg) < v) {
        narmai_progress();
        narmai_wait_step(&wt);
    }
}

/* A fence epoch is closed implicitly by another kind of synchronisation. */
static inline void narmai_fence_yield(struct narmai_win *w)
{
    if (w->access == NARMAI_ACC_FENCE) w->access = NARMAI_ACC_NONE;
}

int narmai_lock_acquire(struct narmai_win *w, int type, int rank);
int narmai_lock_release(struct narmai_win *w, int rank);
#endif
