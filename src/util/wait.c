/* Bounded spin, then yield (wait.h). */
#include "util/wait.h"
#include "util/atomic.h"
#include "util/thread.h"
#include <sched.h>

uint32_t narmau_spin_count = 2000;
int narmau_pool_no_reuse; /* util/pool.h */

void narmau_wait_step_keep(narmau_waiter *wt)
{
    if (wt->spins < narmau_spin_count) {
        wt->spins++;
        narmau_cpu_relax();
    } else {
        sched_yield();
    }
}

void narmau_wait_step(narmau_waiter *wt)
{
    /* Under MPI_THREAD_MULTIPLE, a thread blocked on the process lock gets it between two
     * polls: what this wait waits for may be that thread's to do. */
    narmau_lock_yield();
    narmau_wait_step_keep(wt);
}
