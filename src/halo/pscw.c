/* pscw: general active target with the neighbour group built once. start:
 * post (our slots may be written), start, one Put per neighbour; finish:
 * complete, wait, unpack. A neighbour's Put waits for our post, which we
 * issue only after unpacking the previous exchange. */
#include "halo.h"
#include <stdlib.h>

typedef struct {
    NARMA_Win win;
    MPI_Group group;
} pscw_state;

static int pscw_init(narmah_plan *p)
{
    pscw_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    int rc = narmah_recv_win_and_group(p, &s->win, &s->group);
    if (rc) {
        free(s);
        return rc;
    }
    p->st = s;
    return NARMA_SUCCESS;
}

static int pscw_start(narmah_plan *p)
{
    pscw_state *s = p->st;
    int rc = NARMA_SUCCESS;
    if (p->npeers) {
        rc = NARMA_Win_post(s->group, NARMA_MODE_NOSTORE, s->win);
        if (rc == NARMA_SUCCESS) rc = NARMA_Win_start(s->group, 0, s->win);
    }
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        narmah_pack(p, l, p->sendbuf + l->send_off);
        rc = NARMA_Put(p->sendbuf + l->send_off, (int)l->bytes, MPI_BYTE, l->peer,
                       narmah_target_slot(p, l), (int)l->bytes, MPI_BYTE, s->win);
    }
    if (rc == NARMA_SUCCESS) narmah_self_copies(p);
    return rc;
}

static int pscw_finish(narmah_plan *p)
{
    pscw_state *s = p->st;
    if (p->npeers) {
        int rc = NARMA_Win_complete(s->win);
        if (rc == NARMA_SUCCESS) rc = NARMA_Win_wait(s->win);
        if (rc) return rc;
    }
    for (int i = 0; i < p->nlinks; i++)
        if (!p->link[i].self) narmah_unpack(p, &p->link[i], narmah_recv_slot(p, &p->link[i]));
    return NARMA_SUCCESS;
}

static void pscw_free(narmah_plan *p)
{
    pscw_state *s = p->st;
    if (s) {
        MPI_Group_free(&s->group);
        NARMA_Win_free(&s->win);
    }
    free(s);
    p->st = NULL;
}

const narmah_strategy_ops narmah_pscw_ops = {.name = "pscw",
                                             .init = pscw_init,
                                             .start = pscw_start,
                                             .finish = pscw_finish,
                                             .free = pscw_free};
