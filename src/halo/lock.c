/* lock: passive target. lock_all is held for the plan's life. Per exchange
 * n and neighbour: Put the packed strips into its parity slot, flush, then
 * write n into its flag for our direction (an atomic Accumulate REPLACE),
 * flush. The receiver polls its own flags (one Get_accumulate NO_OP of all
 * of them + flush per pass, yielding after a short spin) until each reaches
 * n, syncs the window and unpacks. The parity slots (halo.h)
 * are the credit: a neighbour cannot write a slot again before we read it. */
#include "halo.h"
#include <sched.h>
#include <stdlib.h>

_Static_assert(NARMAH_MAXLINKS * sizeof(int64_t) <= NARMAH_FLAGS_BYTES, "one flag per direction");

typedef struct {
    NARMA_Win win;
} lock_state;

static int lock_init(narmah_plan *p)
{
    lock_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    int rc = narmah_alloc_recv_win(p, &s->win);
    if (rc == NARMA_SUCCESS) {
        rc = NARMA_Win_lock_all(NARMA_MODE_NOCHECK, s->win);
        if (rc) NARMA_Win_free(&s->win);
    }
    if (rc) {
        free(s);
        return rc;
    }
    p->st = s;
    return NARMA_SUCCESS;
}

static int lock_start(narmah_plan *p)
{
    lock_state *s = p->st;
    int rc = NARMA_SUCCESS;
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        narmah_pack(p, l, p->sendbuf + l->send_off);
        rc = NARMA_Put(p->sendbuf + l->send_off, (int)l->bytes, MPI_BYTE, l->peer,
                       narmah_target_slot(p, l), (int)l->bytes, MPI_BYTE, s->win);
    }
    /* The data must be complete at each target before its flag changes. */
    if (rc == NARMA_SUCCESS && p->nremote) rc = NARMA_Win_flush_all(s->win);
    const int64_t seq = (int64_t)p->seq;
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        /* The receiver reads flag opp(dir): the direction we lie in. */
        rc = NARMA_Accumulate(&seq, 1, MPI_INT64_T, l->peer,
                              (MPI_Aint)(narmah_opp(l->dir) * (int)sizeof(int64_t)), 1, MPI_INT64_T,
                              NARMA_REPLACE, s->win);
    }
    if (rc == NARMA_SUCCESS && p->nremote) rc = NARMA_Win_flush_all(s->win);
    if (rc == NARMA_SUCCESS) narmah_self_copies(p);
    return rc;
}

static int lock_finish(narmah_plan *p)
{
    lock_state *s = p->st;
    const int64_t seq = (int64_t)p->seq;
    int rc = NARMA_SUCCESS;
    /* Poll all flags at once: one atomic read of the flag area (Get_accumulate
     * NO_OP, atomic per element) and one flush per pass, not one round trip
     * per link. Spin a little, then yield the core: on an oversubscribed node
     * the neighbour we wait for may need it to write our flag. */
    for (unsigned spins = 0; p->nremote; spins++) {
        int64_t flag[NARMAH_MAXLINKS];
        rc = NARMA_Get_accumulate(NULL, 0, MPI_INT64_T, flag, NARMAH_MAXLINKS, MPI_INT64_T, p->rank,
                                  0, NARMAH_MAXLINKS, MPI_INT64_T, NARMA_NO_OP, s->win);
        if (rc == NARMA_SUCCESS) rc = NARMA_Win_flush(p->rank, s->win);
        if (rc) return rc;
        int ready = 1;
        for (int i = 0; i < p->nlinks; i++)
            if (!p->link[i].self && flag[p->link[i].dir] < seq) ready = 0;
        if (ready) break;
        NARMA_Progress();
        if (spins >= 64) sched_yield();
    }
    /* Make the neighbours' Puts visible to our loads (separate model). */
    if (p->nremote) rc = NARMA_Win_sync(s->win);
    if (rc) return rc;
    for (int i = 0; i < p->nlinks; i++)
        if (!p->link[i].self) narmah_unpack(p, &p->link[i], narmah_recv_slot(p, &p->link[i]));
    return NARMA_SUCCESS;
}

static void lock_free(narmah_plan *p)
{
    lock_state *s = p->st;
    if (s) {
        NARMA_Win_unlock_all(s->win);
        MPI_Barrier(p->comm); /* nobody frees while a neighbour's flag write is in flight */
        NARMA_Win_free(&s->win);
    }
    free(s);
    p->st = NULL;
}

const narmah_strategy_ops narmah_lock_ops = {.name = "lock",
                                             .init = lock_init,
                                             .start = lock_start,
                                             .finish = lock_finish,
                                             .free = lock_free};
