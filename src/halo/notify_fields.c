/* notify_fields: Notified Access into the fields themselves, as the Unified
 * Model exposes its field arrays (MPI_Win_create) instead of receive buffers.
 *
 * The first exchange creates one window per field over the arrays it is
 * given (Win_create, collective: every rank makes that first exchange; on one
 * node they are shared memory, see narma's README). From then on a neighbour
 * puts my halo straight into my field with one Put_notify per field: a
 * datatype over its field on its side, over my halo box on mine (built from
 * my interior shape, learnt at plan creation), so neither side packs or
 * unpacks.
 *
 * A halo written in place may be overwritten only once I am done with it:
 * each exchange starts with a credit to every neighbour, a notified put of
 * one word into its mailbox (word k of the flag area of its receive window,
 * k its direction towards me) saying where to put: 1 = into my fields, 2 =
 * into my receive slots (when this exchange's arrays are not the exposed ones:
 * new arrays, e.g. swapped time levels, are served through the slots and
 * unpacked, never by writing into arrays the program may have freed). A
 * neighbour puts its strips after it has my credit of this exchange, in start
 * if it has already arrived, else in finish. The credit of exchange n + 2 (the
 * same parity tag) cannot come before the data of n: I send it in start(n + 2),
 * after finish(n + 1), which waited for that neighbour's data of n + 1, which
 * it sent after reading my credit of n. The mailbox is rewritten by the same
 * argument only after it was read.
 *
 * Tags: data 0/1 (the parity) on every window, counted per window; credits
 * 2 + 2k + parity on the receive window, one persistent request per link.
 * The exposed arrays must stay allocated until the plan is freed.
 */
#include "halo.h"
#include <stdlib.h>
#include <string.h>

#define CREDIT_TAG(k, q) (2 + 2 * (k) + (q))
#define MODE_FIELDS      1
#define MODE_SLOTS       2

typedef struct {
    NARMA_Win slotwin; /* receive slots (allocate), flags area = mailboxes */
    NARMA_Win *fwin;   /* per field, created at the first exchange */
    void **exposed;    /* the arrays fwin exposes */
    int have_fwin;
    int direct;                /* this exchange: neighbours put into my fields */
    NARMA_Request slot_req[2]; /* slot mode: nremote * nfields notifications */
    NARMA_Request *field_req;  /* [q * nfields + f]: nremote notifications each */
    NARMA_Request credit[2][NARMAH_MAXLINKS];
    MPI_Datatype strip[NARMAH_MAXLINKS]; /* my send strip of link i over one field */
    MPI_Datatype halo[NARMAH_MAXLINKS];  /* the peer's halo box for link i over its field */
    int sent[NARMAH_MAXLINKS];
    uint64_t mode_out; /* origin buffer of the credits */
} fields_state;

static void fields_free(narmah_plan *p);

static int fields_init(narmah_plan *p)
{
    fields_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    p->st = s;
    s->slotwin = NARMA_WIN_NULL;
    for (int i = 0; i < NARMAH_MAXLINKS; i++) {
        s->strip[i] = s->halo[i] = MPI_DATATYPE_NULL;
        s->credit[0][i] = s->credit[1][i] = NARMA_REQUEST_NULL;
    }
    s->slot_req[0] = s->slot_req[1] = NARMA_REQUEST_NULL;
    const size_t nf = (size_t)p->d.nfields;
    s->fwin = malloc(nf * sizeof *s->fwin);
    s->exposed = calloc(nf, sizeof *s->exposed);
    s->field_req = malloc(2 * nf * sizeof *s->field_req);
    int rc = s->fwin && s->exposed && s->field_req ? NARMA_SUCCESS : NARMA_ERR_NO_MEM;
    for (size_t f = 0; rc == NARMA_SUCCESS && f < nf; f++) {
        s->fwin[f] = NARMA_WIN_NULL;
        s->field_req[f] = s->field_req[nf + f] = NARMA_REQUEST_NULL;
    }
    if (rc == NARMA_SUCCESS) rc = narmah_alloc_recv_win(p, &s->slotwin);
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        rc = narmah_box_type(p, &l->send, &s->strip[i]);
        if (rc == NARMA_SUCCESS) rc = narmah_box_type(p, &l->peer_recv, &s->halo[i]);
        for (int q = 0; q < 2 && rc == NARMA_SUCCESS; q++)
            rc = NARMA_Notify_init(s->slotwin, l->peer, CREDIT_TAG(l->dir, q), 1, &s->credit[q][i]);
    }
    for (int q = 0; q < 2 && rc == NARMA_SUCCESS && p->nremote; q++)
        rc = NARMA_Notify_init(s->slotwin, NARMA_ANY_SOURCE, q, p->nremote * p->d.nfields,
                               &s->slot_req[q]);
    if (rc) fields_free(p);
    return rc;
}

/* The first exchange: windows over its arrays (collective). */
static int expose(narmah_plan *p)
{
    fields_state *s = p->st;
    const int nf = p->d.nfields;
    int rc = NARMA_SUCCESS;
    for (int f = 0; f < nf && rc == NARMA_SUCCESS; f++) {
        rc = NARMA_Win_create(p->fields[f], (MPI_Aint)(p->field_elems * (size_t)p->elsize), 1,
                              MPI_INFO_NULL, p->comm, &s->fwin[f]);
        if (rc == NARMA_SUCCESS) s->exposed[f] = p->fields[f];
        for (int q = 0; q < 2 && rc == NARMA_SUCCESS && p->nremote; q++)
            rc = NARMA_Notify_init(s->fwin[f], NARMA_ANY_SOURCE, q, p->nremote,
                                   &s->field_req[q * nf + f]);
    }
    s->have_fwin = 1; /* also after an error: what exists is freed with the plan */
    return rc;
}

/* Put link i's strips where its peer's credit says. */
static int send_link(narmah_plan *p, int i)
{
    fields_state *s = p->st;
    const narmah_link *l = &p->link[i];
    const int q = narmah_parity(p);
    const volatile uint64_t *mbox = (const volatile uint64_t *)(p->recvbuf - NARMAH_FLAGS_BYTES);
    const uint64_t mode = mbox[l->dir];
    const size_t es = (size_t)p->elsize, fb = narmah_box_bytes(p, &l->send);
    int rc = NARMA_SUCCESS;
    s->sent[i] = 1;
    for (int f = 0; f < p->d.nfields && rc == NARMA_SUCCESS; f++) {
        const char *src = (const char *)p->fields[f] + (size_t)l->send.off * es;
        if (mode == MODE_FIELDS)
            rc = NARMA_Put_notify(src, 1, s->strip[i], l->peer, l->peer_recv.off * (MPI_Aint)es, 1,
                                  s->halo[i], s->fwin[f], q);
        else if (mode == MODE_SLOTS)
            rc = NARMA_Put_notify(src, 1, s->strip[i], l->peer,
                                  narmah_target_slot(p, l) + (MPI_Aint)(f * fb), (int)fb, MPI_BYTE,
                                  s->slotwin, q);
        else
            rc = NARMA_ERR_INTERN; /* a credit without a mode: cannot happen */
    }
    return rc;
}

static int fields_start(narmah_plan *p)
{
    fields_state *s = p->st;
    const int q = narmah_parity(p), nf = p->d.nfields;
    int rc = s->have_fwin ? NARMA_SUCCESS : expose(p);
    if (rc) return rc;
    s->direct = 1;
    for (int f = 0; f < nf; f++)
        s->direct &= p->fields[f] == s->exposed[f];
    if (p->nremote) {
        if (s->direct)
            rc = NARMA_Startall(nf, &s->field_req[q * nf]);
        else
            rc = NARMA_Start(&s->slot_req[q]);
    }
    /* Credits: my halos may be written now, and where. */
    s->mode_out = s->direct ? MODE_FIELDS : MODE_SLOTS;
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        const int k = narmah_opp(l->dir); /* the peer's direction towards me */
        rc = NARMA_Put_notify(&s->mode_out, 1, MPI_UINT64_T, l->peer, (MPI_Aint)k * 8, 1,
                              MPI_UINT64_T, s->slotwin, CREDIT_TAG(k, q));
    }
    /* Send to the neighbours whose credit is already here. */
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        if (p->link[i].self) continue;
        s->sent[i] = 0;
        int flag = 0;
        rc = NARMA_Start(&s->credit[q][i]);
        if (rc == NARMA_SUCCESS) rc = NARMA_Test(&s->credit[q][i], &flag, MPI_STATUS_IGNORE);
        if (rc == NARMA_SUCCESS && flag) rc = send_link(p, i);
    }
    if (rc == NARMA_SUCCESS) narmah_self_copies(p);
    return rc;
}

static int fields_finish(narmah_plan *p)
{
    fields_state *s = p->st;
    const int q = narmah_parity(p), nf = p->d.nfields;
    int rc = NARMA_SUCCESS;
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        if (p->link[i].self || s->sent[i]) continue;
        rc = NARMA_Wait(&s->credit[q][i], MPI_STATUS_IGNORE);
        if (rc == NARMA_SUCCESS) rc = send_link(p, i);
    }
    if (rc || !p->nremote) return rc;
    if (s->direct) return NARMA_Waitall(nf, &s->field_req[q * nf], MPI_STATUSES_IGNORE);
    rc = NARMA_Wait(&s->slot_req[q], MPI_STATUS_IGNORE);
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++)
        if (!p->link[i].self) narmah_unpack(p, &p->link[i], narmah_recv_slot(p, &p->link[i]));
    return rc;
}

static void fields_free(narmah_plan *p)
{
    fields_state *s = p->st;
    if (s == NULL) return;
    const int nf = p->d.nfields;
    for (int q = 0; q < 2; q++) {
        if (s->slot_req[q] != NARMA_REQUEST_NULL) NARMA_Request_free(&s->slot_req[q]);
        for (int i = 0; i < NARMAH_MAXLINKS; i++)
            if (s->credit[q][i] != NARMA_REQUEST_NULL) NARMA_Request_free(&s->credit[q][i]);
        for (int f = 0; s->field_req && f < nf; f++)
            if (s->field_req[q * nf + f] != NARMA_REQUEST_NULL)
                NARMA_Request_free(&s->field_req[q * nf + f]);
    }
    for (int i = 0; i < NARMAH_MAXLINKS; i++) {
        if (s->strip[i] != MPI_DATATYPE_NULL) MPI_Type_free(&s->strip[i]);
        if (s->halo[i] != MPI_DATATYPE_NULL) MPI_Type_free(&s->halo[i]);
    }
    if (s->slotwin != NARMA_WIN_NULL) {
        MPI_Barrier(p->comm); /* every notified put has landed */
        for (int f = 0; s->have_fwin && f < nf; f++)
            if (s->fwin[f] != NARMA_WIN_NULL) NARMA_Win_free(&s->fwin[f]);
        NARMA_Win_free(&s->slotwin);
    }
    free(s->fwin);
    free(s->exposed);
    free(s->field_req);
    free(s);
    p->st = NULL;
}

const narmah_strategy_ops narmah_notify_fields_ops = {.name = "notify_fields",
                                                      .init = fields_init,
                                                      .start = fields_start,
                                                      .finish = fields_finish,
                                                      .free = fields_free};
