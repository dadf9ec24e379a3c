/* p2p: the message-passing baseline (Irecv, pack + Isend, Waitall, unpack),
 * as the Unified Model's halo module does it. Defines the results every
 * other strategy must reproduce bit for bit. */
#include "halo.h"
#include <stdlib.h>

typedef struct {
    char *recvbuf;
    MPI_Request req[2 * NARMAH_MAXLINKS];
    int nreq;
} p2p_state;

static int p2p_init(narmah_plan *p)
{
    p2p_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    s->recvbuf = p->recv_stride ? aligned_alloc(NARMAH_ALIGN, p->recv_stride) : NULL;
    if (p->recv_stride && s->recvbuf == NULL) {
        free(s);
        return NARMA_ERR_NO_MEM;
    }
    p->st = s;
    return NARMA_SUCCESS;
}

static int p2p_start(narmah_plan *p)
{
    p2p_state *s = p->st;
    s->nreq = 0;
    /* Tag = the direction the sender sent in, so two links to one peer
     * (periodic with two processes) never cross. */
    for (int i = 0; i < p->nlinks; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        int rc = MPI_Irecv(s->recvbuf + l->recv_off, (int)l->bytes, MPI_BYTE, l->peer,
                           narmah_opp(l->dir), p->comm, &s->req[s->nreq++]);
        if (rc != MPI_SUCCESS) return NARMA_ERR_MPI;
    }
    for (int i = 0; i < p->nlinks; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        narmah_pack(p, l, p->sendbuf + l->send_off);
        int rc = MPI_Isend(p->sendbuf + l->send_off, (int)l->bytes, MPI_BYTE, l->peer, l->dir,
                           p->comm, &s->req[s->nreq++]);
        if (rc != MPI_SUCCESS) return NARMA_ERR_MPI;
    }
    narmah_self_copies(p);
    return NARMA_SUCCESS;
}

static int p2p_finish(narmah_plan *p)
{
    p2p_state *s = p->st;
    if (MPI_Waitall(s->nreq, s->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return NARMA_ERR_MPI;
    for (int i = 0; i < p->nlinks; i++)
        if (!p->link[i].self) narmah_unpack(p, &p->link[i], s->recvbuf + p->link[i].recv_off);
    return NARMA_SUCCESS;
}

static void p2p_free(narmah_plan *p)
{
    p2p_state *s = p->st;
    if (s) free(s->recvbuf);
    free(s);
    p->st = NULL;
}

const narmah_strategy_ops narmah_p2p_ops = {
    .name = "p2p", .init = p2p_init, .start = p2p_start, .finish = p2p_finish, .free = p2p_free};
