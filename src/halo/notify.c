/* notify: Notified Access. Per exchange: start the counting request of the
 * exchange's parity (it completes after one notification per field and remote
 * link), then per neighbour and field one Put_notify of the field's strip,
 * described by a datatype over the field itself (no packing pass at the
 * origin), into the field's place in the neighbour's parity slot, tagged with
 * the parity. finish waits for the request and unpacks.
 *
 * The notified puts are persistent (NARMA_Put_notify_init): one per parity,
 * remote link and field, each checked once, made at the first exchange (the
 * fields are known then) and made again only when the program passes other
 * field pointers; an exchange starts its parity's set with one Startall (and
 * retires them with one Waitall: they are complete, locally and at the
 * target, when Start returns, since the plan's window keeps narma's default
 * completion, not narma_notify_completion=flush).
 *
 * Why two requests and parity tags: a fast neighbour can finish exchange n
 * (it has our data) and send n + 1 before a slower neighbour's n has arrived
 * here; tagged n + 1's parity, its notification cannot be counted for n (it
 * waits as unexpected until we start n + 1's request). It cannot send n + 2
 * before we send n + 1, i.e. before we finished n: two parities suffice,
 * for the tags as for the slots (halo.h). */
#include "halo.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    NARMA_Win win;
    NARMA_Request req[2];
    MPI_Datatype strip[NARMAH_MAXLINKS]; /* one field's send strip of link i, in place */
    NARMA_Request *put[2];               /* per parity: nput persistent notified puts */
    int made[2];                         /* of which made so far */
    int nput;                            /* per parity, once all are made */
    void **bound;                        /* the field pointers the puts were made for */
} notify_state;

static void notify_free(narmah_plan *p);

static int notify_init(narmah_plan *p)
{
    notify_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    p->st = s;
    for (int i = 0; i < NARMAH_MAXLINKS; i++)
        s->strip[i] = MPI_DATATYPE_NULL;
    s->bound = calloc((size_t)p->d.nfields, sizeof(void *));
    int rc = s->bound == NULL ? NARMA_ERR_NO_MEM : narmah_alloc_recv_win(p, &s->win);
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++)
        if (!p->link[i].self) rc = narmah_box_type(p, &p->link[i].send, &s->strip[i]);
    /* One notified put per field and remote link, counted by one request per parity. */
    for (int q = 0; q < 2 && rc == NARMA_SUCCESS && p->nremote; q++)
        rc = NARMA_Notify_init(s->win, NARMA_ANY_SOURCE, q, p->nremote * p->d.nfields, &s->req[q]);
    if (rc) notify_free(p);
    return rc;
}

static void puts_free(notify_state *s)
{
    for (int q = 0; q < 2; q++) {
        for (int i = 0; i < s->made[q]; i++)
            NARMA_Request_free(&s->put[q][i]);
        free(s->put[q]);
        s->put[q] = NULL;
        s->made[q] = 0;
    }
    s->nput = 0;
}

/* The persistent puts for the fields of this exchange (made again if they moved). */
static int puts_bind(narmah_plan *p, notify_state *s)
{
    const int n = p->nremote * p->d.nfields;
    if (n == 0) return NARMA_SUCCESS;
    if (s->nput == n && memcmp(s->bound, p->fields, (size_t)p->d.nfields * sizeof(void *)) == 0)
        return NARMA_SUCCESS;
    puts_free(s);
    int rc = NARMA_SUCCESS;
    /* The puts of each parity, in the order the exchange used to issue them. */
    for (int q = 0; q < 2 && rc == NARMA_SUCCESS; q++) {
        if ((s->put[q] = malloc((size_t)n * sizeof(NARMA_Request))) == NULL) {
            rc = NARMA_ERR_NO_MEM;
            break;
        }
        for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
            const narmah_link *l = &p->link[i];
            if (l->self) continue;
            const size_t fb = narmah_box_bytes(p, &l->send);
            const MPI_Aint slot = l->target_disp + (MPI_Aint)q * l->target_stride;
            for (int f = 0; f < p->d.nfields && rc == NARMA_SUCCESS; f++) {
                rc = NARMA_Put_notify_init((char *)p->fields[f] + l->send.off * p->elsize, 1,
                                           s->strip[i], l->peer, slot + (MPI_Aint)(f * fb), (int)fb,
                                           MPI_BYTE, s->win, q, &s->put[q][s->made[q]]);
                if (rc == NARMA_SUCCESS) s->made[q]++;
            }
        }
    }
    if (rc == NARMA_SUCCESS) {
        s->nput = n;
        memcpy(s->bound, p->fields, (size_t)p->d.nfields * sizeof(void *));
    } else {
        puts_free(s);
    }
    return rc;
}

static int notify_start(narmah_plan *p)
{
    notify_state *s = p->st;
    const int q = narmah_parity(p);
    int rc = puts_bind(p, s);
    if (rc == NARMA_SUCCESS && p->nremote) rc = NARMA_Start(&s->req[q]);
    if (rc == NARMA_SUCCESS && s->nput > 0) rc = NARMA_Startall(s->nput, s->put[q]);
    if (rc == NARMA_SUCCESS && s->nput > 0)
        rc = NARMA_Waitall(s->nput, s->put[q], MPI_STATUSES_IGNORE);
    if (rc == NARMA_SUCCESS) {
        narmah_self_copies(p);
        return rc;
    }
    /* A failed start leaves some puts started and the request active: make both again, so
     * that the next exchange starts from a clean state (the plan stays usable). */
    puts_free(s);
    if (s->req[q] != NARMA_REQUEST_NULL) {
        NARMA_Request_free(&s->req[q]);
        NARMA_Notify_init(s->win, NARMA_ANY_SOURCE, q, p->nremote * p->d.nfields, &s->req[q]);
    }
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
        puts_free(s);
        free(s->bound);
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
