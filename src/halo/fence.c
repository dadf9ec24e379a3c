/* fence: one fence opens the exchange's epoch, one Put per neighbour of the
 * packed strips into its receive slot, one fence closes it. The opening
 * fence also guarantees every neighbour has unpacked the previous exchange
 * (it fenced after unpacking). Collective over the whole communicator. */
#include "halo.h"
#include <stdlib.h>

typedef struct {
    NARMA_Win win;
} fence_state;

static int fence_init(narmah_plan *p)
{
    fence_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    int rc = narmah_alloc_recv_win(p, &s->win);
    if (rc) {
        free(s);
        return rc;
    }
    p->st = s;
    return NARMA_SUCCESS;
}

static int fence_start(narmah_plan *p)
{
    fence_state *s = p->st;
    for (int i = 0; i < p->nlinks; i++)
        if (!p->link[i].self) narmah_pack(p, &p->link[i], p->sendbuf + p->link[i].send_off);
    /* No RMA since the closing fence of the previous exchange. */
    /* A plan in which nobody has a remote neighbour needs no epoch at all. */
    int rc = p->any_remote ? NARMA_Win_fence(NARMA_MODE_NOPRECEDE | NARMA_MODE_NOSTORE, s->win) : 0;
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        rc = NARMA_Put(p->sendbuf + l->send_off, (int)l->bytes, MPI_BYTE, l->peer,
                       narmah_target_slot(p, l), (int)l->bytes, MPI_BYTE, s->win);
    }
    narmah_self_copies(p);
    return rc;
}

static int fence_finish(narmah_plan *p)
{
    fence_state *s = p->st;
    int rc = p->any_remote ? NARMA_Win_fence(NARMA_MODE_NOSUCCEED | NARMA_MODE_NOSTORE, s->win) : 0;
    if (rc) return rc;
    for (int i = 0; i < p->nlinks; i++)
        if (!p->link[i].self) narmah_unpack(p, &p->link[i], narmah_recv_slot(p, &p->link[i]));
    return NARMA_SUCCESS;
}

static void fence_free(narmah_plan *p)
{
    fence_state *s = p->st;
    if (s) NARMA_Win_free(&s->win);
    free(s);
    p->st = NULL;
}

const narmah_strategy_ops narmah_fence_ops = {.name = "fence",
                                              .init = fence_init,
                                              .start = fence_start,
                                              .finish = fence_finish,
                                              .free = fence_free};
