/*
 * dynamic: the Unified Model study's second step. One dynamic window per
 * plan, with memory attached to it by NARMA_Win_attach and its address
 * circulated to the neighbours (MPI_Get_address, one message per link) once,
 * at plan creation; each exchange is a PSCW epoch on the neighbour group
 * (built once) with one Put per neighbour.
 *
 * What is attached: the plan's receive buffer (two parity slots per remote
 * link, after an unused flag area so displacements are those of the other
 * RMA strategies), not the user's field arrays. The first version attached
 * the fields and put straight into the neighbour's halo with derived
 * datatypes on both sides; dynamic windows always run over narma's mpi
 * transport, where MPI moves such strided types piece by piece (thousands of
 * runs a message for z-fastest fields), which made it about four times
 * slower than p2p. Packing into one contiguous Put and unpacking on arrival
 * costs two memory copies and keeps it within p2p's range; it also means the
 * fields may change between exchanges with no re-attachment or collective
 * address swap. The attached buffer never moves, so addresses are exchanged
 * once per plan.
 *
 * Ordering: a neighbour's Put into our slot waits for our post, which we
 * issue only after unpacking the previous exchange (as in pscw).
 */
#include "halo.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    NARMA_Win win;
    MPI_Group group;
    char *mem;                           /* attached: flag area + 2 * recv_stride */
    MPI_Aint peer_base[NARMAH_MAXLINKS]; /* link i: address of the peer's attached memory */
} dyn_state;

static void dyn_free(narmah_plan *p);

/* Swap attached base addresses with every remote link peer. Tag = the
 * direction sent in, so two links to one peer never cross. */
static int swap_addresses(narmah_plan *p, dyn_state *s)
{
    MPI_Aint mine;
    MPI_Request req[2 * NARMAH_MAXLINKS];
    int nr = 0;
    if (MPI_Get_address(s->mem, &mine) != MPI_SUCCESS) return NARMA_ERR_MPI;
    for (int i = 0; i < p->nlinks; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        MPI_Irecv(&s->peer_base[i], 1, MPI_AINT, l->peer, narmah_opp(l->dir), p->comm, &req[nr++]);
        MPI_Isend(&mine, 1, MPI_AINT, l->peer, l->dir, p->comm, &req[nr++]);
    }
    return MPI_Waitall(nr, req, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? NARMA_SUCCESS : NARMA_ERR_MPI;
}

static int dyn_init(narmah_plan *p)
{
    dyn_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    p->st = s;
    s->group = MPI_GROUP_NULL;
    /* Slots are only written by Put. Every rank attaches once here and
     * detaches once in dyn_free, so attach and detach are collective: the
     * "coll_attach" hint (MPICH >= 4.1; others ignore it) lets MPI use its
     * native RMA on the attached memory instead of active messages through
     * the target's progress engine (measured ~1.5x faster on MONC-like). */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Info_set(info, "coll_attach", "true");
    int rc = NARMA_Win_create_dynamic(info, p->comm, &s->win); /* collective */
    MPI_Info_free(&info);
    if (rc) {
        dyn_free(p);
        return rc;
    }
    /* win_bytes is a multiple of NARMAH_ALIGN and at least the flag area. */
    s->mem = aligned_alloc(NARMAH_ALIGN, p->win_bytes);
    rc = s->mem ? NARMA_SUCCESS : NARMA_ERR_NO_MEM;
    if (rc == NARMA_SUCCESS) {
        memset(s->mem, 0, p->win_bytes);
        rc = NARMA_Win_attach(s->win, s->mem, (MPI_Aint)p->win_bytes);
        if (rc) free(s->mem), s->mem = NULL;
    }
    /* Agree before talking to neighbours: a rank that failed would not. */
    int v = rc;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, p->comm);
    rc = v;
    if (rc == NARMA_SUCCESS) {
        p->recvbuf = s->mem + NARMAH_FLAGS_BYTES;
        rc = swap_addresses(p, s);
    }
    if (rc == NARMA_SUCCESS) rc = narmah_peer_group(p, s->win, &s->group);
    if (rc) dyn_free(p);
    return rc;
}

static int dyn_start(narmah_plan *p)
{
    dyn_state *s = p->st;
    int rc = NARMA_SUCCESS;
    if (p->npeers) {
        rc = NARMA_Win_post(s->group, NARMA_MODE_NOSTORE, s->win);
        if (rc == NARMA_SUCCESS) rc = NARMA_Win_start(s->group, 0, s->win);
    }
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        narmah_pack(p, l, p->sendbuf + l->send_off);
        /* Dynamic windows address targets by absolute address. */
        rc = NARMA_Put(p->sendbuf + l->send_off, (int)l->bytes, MPI_BYTE, l->peer,
                       MPI_Aint_add(s->peer_base[i], narmah_target_slot(p, l)), (int)l->bytes,
                       MPI_BYTE, s->win);
    }
    if (rc == NARMA_SUCCESS) narmah_self_copies(p);
    return rc;
}

static int dyn_finish(narmah_plan *p)
{
    dyn_state *s = p->st;
    if (p->npeers) {
        int rc = NARMA_Win_complete(s->win);
        if (rc == NARMA_SUCCESS) rc = NARMA_Win_wait(s->win);
        if (rc) return rc;
    }
    for (int i = 0; i < p->nlinks; i++)
        if (!p->link[i].self) narmah_unpack(p, &p->link[i], narmah_recv_slot(p, &p->link[i]));
    return NARMA_SUCCESS;
}

static void dyn_free(narmah_plan *p)
{
    dyn_state *s = p->st;
    if (s == NULL) return;
    if (s->win != NARMA_WIN_NULL) {
        if (s->mem != NULL) NARMA_Win_detach(s->win, s->mem);
        NARMA_Win_free(&s->win); /* collective: no neighbour still targets s->mem after it */
    }
    free(s->mem);
    if (s->group != MPI_GROUP_NULL) MPI_Group_free(&s->group);
    free(s);
    p->recvbuf = NULL;
    p->st = NULL;
}

const narmah_strategy_ops narmah_dynamic_ops = {.name = "dynamic",
                                                .init = dyn_init,
                                                .start = dyn_start,
                                                .finish = dyn_finish,
                                                .free = dyn_free};
