/* pscw_nb: the pscw protocol with nonblocking epochs. start issues ipost,
 * istart, the Puts and icomplete and returns at once: no call waits for a
 * neighbour, so computation overlaps the whole epoch. finish issues iwait and
 * waits for the closing requests. narma defers the access epoch (and records
 * its Puts) until the neighbour's post arrives. */
#include "halo.h"
#include <stdlib.h>

typedef struct {
    NARMA_Win win;
    MPI_Group group;
    NARMA_Request req[2]; /* icomplete, iwait */
} pscw_nb_state;

static int pnb_init(narmah_plan *p)
{
    pscw_nb_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    int rc = narmah_recv_win_and_group(p, &s->win, &s->group);
    if (rc) {
        free(s);
        return rc;
    }
    p->st = s;
    return NARMA_SUCCESS;
}

static int pnb_start(narmah_plan *p)
{
    pscw_nb_state *s = p->st;
    int rc = NARMA_SUCCESS;
    if (p->npeers) {
        NARMA_Request open[2] = {NARMA_REQUEST_NULL, NARMA_REQUEST_NULL};
        MPI_Status st[2];
        rc = NARMA_Win_ipost(s->group, NARMA_MODE_NOSTORE, s->win, &open[0]);
        if (rc == NARMA_SUCCESS) rc = NARMA_Win_istart(s->group, 0, s->win, &open[1]);
        /* Opening requests are complete at once; release them. */
        if (rc == NARMA_SUCCESS) rc = NARMA_Waitall(2, open, st);
        for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
            const narmah_link *l = &p->link[i];
            if (l->self) continue;
            narmah_pack(p, l, p->sendbuf + l->send_off);
            rc = NARMA_Put(p->sendbuf + l->send_off, (int)l->bytes, MPI_BYTE, l->peer,
                           narmah_target_slot(p, l), (int)l->bytes, MPI_BYTE, s->win);
        }
        if (rc == NARMA_SUCCESS) rc = NARMA_Win_icomplete(s->win, &s->req[0]);
    }
    if (rc == NARMA_SUCCESS) narmah_self_copies(p);
    return rc;
}

static int pnb_finish(narmah_plan *p)
{
    pscw_nb_state *s = p->st;
    if (p->npeers) {
        MPI_Status st[2];
        int rc = NARMA_Win_iwait(s->win, &s->req[1]);
        if (rc == NARMA_SUCCESS) rc = NARMA_Waitall(2, s->req, st);
        if (rc) return rc;
    }
    for (int i = 0; i < p->nlinks; i++)
        if (!p->link[i].self) narmah_unpack(p, &p->link[i], narmah_recv_slot(p, &p->link[i]));
    return NARMA_SUCCESS;
}

static void pnb_free(narmah_plan *p)
{
    pscw_nb_state *s = p->st;
    if (s) {
        MPI_Group_free(&s->group);
        NARMA_Win_free(&s->win);
    }
    free(s);
    p->st = NULL;
}

const narmah_strategy_ops narmah_pscw_nb_ops = {.name = "pscw_nb",
                                                .init = pnb_init,
                                                .start = pnb_start,
                                                .finish = pnb_finish,
                                                .free = pnb_free};
