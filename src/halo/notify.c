/* notify: Notified Access. Per exchange: start the counting request of the
 * exchange's parity (it completes after one notification per field and remote
 * link), then per neighbour and field one Put_notify of the field's strip,
 * described by a datatype over the field itself (no packing pass at the
 * origin), into the field's place in the neighbour's parity slot, tagged with
 * the parity. finish waits for the request and unpacks.
 *
 * Why two requests and parity tags: a fast neighbour can finish exchange n
 * (it has our data) and send n + 1 before a slower neighbour's n has arrived
 * here; tagged n + 1's parity, its notification cannot be counted for n (it
 * waits as unexpected until we start n + 1's request). It cannot send n + 2
 * before we send n + 1, i.e. before we finished n: two parities suffice,
 * for the tags as for the slots (halo.h). */
#include "halo.h"
#include <stdlib.h>

typedef struct {
    NARMA_Win win;
    NARMA_Request req[2];
    MPI_Datatype strip[NARMAH_MAXLINKS]; /* one field's send strip of link i, in place */
} notify_state;

static void notify_free(narmah_plan *p);

static int notify_init(narmah_plan *p)
{
    notify_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    p->st = s;
    for (int i = 0; i < NARMAH_MAXLINKS; i++)
        s->strip[i] = MPI_DATATYPE_NULL;
    int rc = narmah_alloc_recv_win(p, &s->win);
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++)
        if (!p->link[i].self) rc = narmah_box_type(p, &p->link[i].send, &s->strip[i]);
    /* One notified put per field and remote link, counted by one request per parity. */
    for (int q = 0; q < 2 && rc == NARMA_SUCCESS && p->nremote; q++)
        rc = NARMA_Notify_init(s->win, NARMA_ANY_SOURCE, q, p->nremote * p->d.nfields, &s->req[q]);
    if (rc) notify_free(p);
    return rc;
}

static int notify_start(narmah_plan *p)
{
    notify_state *s = p->st;
    const int q = narmah_parity(p);
    int rc = p->nremote ? NARMA_Start(&s->req[q]) : NARMA_SUCCESS;
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        const size_t fb = narmah_box_bytes(p, &l->send);
        for (int f = 0; f < p->d.nfields && rc == NARMA_SUCCESS; f++)
            rc = NARMA_Put_notify((char *)p->fields[f] + l->send.off * p->elsize, 1, s->strip[i],
                                  l->peer, narmah_target_slot(p, l) + (MPI_Aint)(f * fb), (int)fb,
                                  MPI_BYTE, s->win, q);
    }
    if (rc == NARMA_SUCCESS) narmah_self_copies(p);
    return rc;
}

static int notify_finish(narmah_plan *p)
{
    notify_state *s = p->st;
    if (p->nremote) {
        int rc = NARMA_Wait(&s->req[narmah_parity(p)], MPI_STATUS_IGNORE);
        if (rc) return rc;
    }
    for (int i = 0; i < p->nlinks; i++)
        if (!p->link[i].self) narmah_unpack(p, &p->link[i], narmah_recv_slot(p, &p->link[i]));
    return NARMA_SUCCESS;
}

static void notify_free(narmah_plan *p)
{
    notify_state *s = p->st;
    if (s) {
        for (int q = 0; q < 2; q++)
            if (s->req[q] != NARMA_REQUEST_NULL) NARMA_Request_free(&s->req[q]);
        for (int i = 0; i < NARMAH_MAXLINKS; i++)
            if (s->strip[i] != MPI_DATATYPE_NULL) NARMA_Type_free(&s->strip[i]);
        if (s->win != NARMA_WIN_NULL) {
            MPI_Barrier(p->comm); /* every notified put has landed */
            NARMA_Win_free(&s->win);
        }
    }
    free(s);
    p->st = NULL;
}

const narmah_strategy_ops narmah_notify_ops = {.name = "notify",
                                               .init = notify_init,
                                               .start = notify_start,
                                               .finish = notify_finish,
                                               .free = notify_free};
