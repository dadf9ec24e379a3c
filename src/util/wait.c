/* Bounded spin, then yield (wait.h). */
#include "util/wait.h"
#include "util/atomic.h"
#include <sched.h>

uint32_t narmau_spin_count = 2000;

void narmau_wait_step(narmau_waiter *wt)
{
    if (wt->spins < narmau_spin_count) {
        wt->spins++;
        narmau_cpu_relax();
    } else {
        sched_yield();
    }
}
