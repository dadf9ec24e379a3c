/* Waiting without hogging a core: a bounded spin, then a yield on every step,
 * so ranks oversubscribed on few cores still make progress. */
#ifndef NARMAU_WAIT_H
#define NARMAU_WAIT_H

#include <stdint.h>

/* Polls before a wait starts yielding (NARMA_SPIN_COUNT, set once at initialisation). */
extern uint32_t narmau_spin_count;

typedef struct {
    uint32_t spins; /* steps taken so far (start above 0 to yield sooner) */
} narmau_waiter;

/* One step of a wait: a CPU relax while spins < narmau_spin_count, else sched_yield; the
 * process lock (thread.h) is handed to a thread blocked on it first. Callers keep no
 * pointer into narma's shared state across a step that another thread may invalidate. */
void narmau_wait_step(narmau_waiter *wt);

#endif
