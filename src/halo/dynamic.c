/*
 * dynamic: the Unified Model study's second step, done properly. One
 * dynamic window per plan; the user's field arrays are attached to it and
 * their addresses circulated to the neighbours once (and again whenever the
 * arrays change). Each exchange is a PSCW epoch with the group built once
 * and ONE Put per neighbour that reads the strips of all fields straight
 * from our arrays (origin datatype) and writes them straight into the
 * neighbour's halo (target datatype): no packing, no receive buffer, no
 * unpacking.
 *
 * Changing arrays: when the fields passed to an exchange differ from the
 * attached ones, the plan detaches them, attaches the new ones and swaps
 * addresses with its neighbours. Every rank of the plan must then pass new
 * arrays in the same exchange (the swap is collective over the neighbours).
 */
#include "halo.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    NARMA_Win win;
    MPI_Group group;
    void **bound;                             /* attached arrays, NULL until the first exchange */
    MPI_Datatype otype[NARMAH_MAXLINKS];      /* my strips of all fields, relative to bound[0] */
    MPI_Datatype ttype[NARMAH_MAXLINKS];      /* the peer's halo of all fields, relative to its field 0 */
    MPI_Aint taddr[NARMAH_MAXLINKS];          /* the peer's field 0 address */
} dyn_state;

static void free_types(narmah_plan *p, dyn_state *s)
{
    for (int i = 0; i < NARMAH_MAXLINKS; i++) {
        if (s->otype[i] != MPI_DATATYPE_NULL) MPI_Type_free(&s->otype[i]);
        if (s->ttype[i] != MPI_DATATYPE_NULL) MPI_Type_free(&s->ttype[i]);
    }
}

/* Struct over nfields copies of box b, field f displaced by addr[f] - addr[0]. */
static int fields_type(narmah_plan *p, const narmah_box *b, const MPI_Aint *addr, MPI_Datatype *t)
{
    const int n = p->d.nfields;
    MPI_Datatype one;
    int rc = narmah_box_type(p, b, &one);
    if (rc) return rc;
    int *bl = malloc((size_t)n * sizeof *bl);
    MPI_Aint *disp = malloc((size_t)n * sizeof *disp);
    MPI_Datatype *ty = malloc((size_t)n * sizeof *ty);
    int mrc = MPI_ERR_NO_MEM;
    if (bl && disp && ty) {
        for (int f = 0; f < n; f++) bl[f] = 1, disp[f] = MPI_Aint_diff(addr[f], addr[0]), ty[f] = one;
        mrc = MPI_Type_create_struct(n, bl, disp, ty, t);
        if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(t);
    }
    free(bl), free(disp), free(ty);
    MPI_Type_free(&one);
    return mrc == MPI_SUCCESS ? NARMA_SUCCESS : NARMA_ERR_MPI;
}

static int bind(narmah_plan *p, dyn_state *s)
{
    const int n = p->d.nfields;
    const MPI_Aint bytes = (MPI_Aint)(p->field_elems * (size_t)p->elsize);
    int rc = NARMA_SUCCESS;
    if (s->bound[0] != NULL) {
        for (int f = 0; f < n && rc == NARMA_SUCCESS; f++) {
            int dup = 0;
            for (int g = 0; g < f; g++) dup |= s->bound[g] == s->bound[f];
            if (!dup) rc = NARMA_Win_detach(s->win, s->bound[f]);
        }
        free_types(p, s);
    }
    memcpy(s->bound, p->fields, (size_t)n * sizeof(void *));
    for (int f = 0; f < n && rc == NARMA_SUCCESS; f++) {
        /* Two fields may be one array (aliases): attach each region once. */
        int dup = 0;
        for (int g = 0; g < f; g++) dup |= s->bound[g] == s->bound[f];
        if (!dup) rc = NARMA_Win_attach(s->win, s->bound[f], bytes);
    }
    if (rc) return rc;
    MPI_Aint *mine = malloc((size_t)n * (NARMAH_MAXLINKS + 1) * sizeof(MPI_Aint));
    if (mine == NULL) return NARMA_ERR_NO_MEM;
    MPI_Aint *theirs = mine + n;
    for (int f = 0; f < n; f++) MPI_Get_address(s->bound[f], &mine[f]);
    MPI_Request req[2 * NARMAH_MAXLINKS];
    int nr = 0;
    for (int i = 0; i < p->nlinks; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        MPI_Irecv(theirs + (size_t)i * n, n, MPI_AINT, l->peer, narmah_opp(l->dir), p->comm, &req[nr++]);
        MPI_Isend(mine, n, MPI_AINT, l->peer, l->dir, p->comm, &req[nr++]);
    }
    if (MPI_Waitall(nr, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) rc = NARMA_ERR_MPI;
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        const MPI_Aint *ta = theirs + (size_t)i * n;
        /* Our strip k lands in the peer's halo of direction opp(k), laid out by its shape. */
        narmah_box tb = narmah_link_box(p, narmah_opp(l->dir), l->peer_nx, l->peer_ny, 1);
        rc = fields_type(p, &l->send, mine, &s->otype[i]);
        if (rc == NARMA_SUCCESS) rc = fields_type(p, &tb, ta, &s->ttype[i]);
        s->taddr[i] = ta[0];
    }
    free(mine);
    return rc;
}

static void dyn_free(narmah_plan *p);

static int dyn_init(narmah_plan *p)
{
    dyn_state *s = calloc(1, sizeof *s);
    if (s == NULL) return NARMA_ERR_NO_MEM;
    p->st = s;
    s->group = MPI_GROUP_NULL;
    for (int i = 0; i < NARMAH_MAXLINKS; i++) s->otype[i] = s->ttype[i] = MPI_DATATYPE_NULL;
    s->bound = calloc((size_t)p->d.nfields, sizeof(void *));
    int rc = s->bound ? NARMA_Win_create_dynamic(MPI_INFO_NULL, p->comm, &s->win) : NARMA_ERR_NO_MEM;
    if (rc == NARMA_SUCCESS) rc = narmah_peer_group(p, s->win, &s->group);
    if (rc) dyn_free(p);
    return rc;
}

static int dyn_start(narmah_plan *p)
{
    dyn_state *s = p->st;
    int rc = NARMA_SUCCESS;
    if (memcmp(s->bound, p->fields, (size_t)p->d.nfields * sizeof(void *)) != 0) rc = bind(p, s);
    if (rc == NARMA_SUCCESS && p->npeers) {
        rc = NARMA_Win_post(s->group, 0, s->win);
        if (rc == NARMA_SUCCESS) rc = NARMA_Win_start(s->group, 0, s->win);
    }
    for (int i = 0; i < p->nlinks && rc == NARMA_SUCCESS; i++) {
        const narmah_link *l = &p->link[i];
        if (l->self) continue;
        rc = NARMA_Put(p->fields[0], 1, s->otype[i], l->peer, s->taddr[i], 1, s->ttype[i], s->win);
    }
    if (rc == NARMA_SUCCESS) narmah_self_copies(p);
    return rc;
}

static int dyn_finish(narmah_plan *p)
{
    dyn_state *s = p->st;
    if (!p->npeers) return NARMA_SUCCESS;
    int rc = NARMA_Win_complete(s->win);
    return rc ? rc : NARMA_Win_wait(s->win);
}

static void dyn_free(narmah_plan *p)
{
    dyn_state *s = p->st;
    if (s == NULL) return;
    if (s->win != NARMA_WIN_NULL) {
        if (s->bound && s->bound[0] != NULL)
            for (int f = 0; f < p->d.nfields; f++) {
                int dup = 0;
                for (int g = 0; g < f; g++) dup |= s->bound[g] == s->bound[f];
                if (!dup) NARMA_Win_detach(s->win, s->bound[f]);
            }
        NARMA_Win_free(&s->win);
    }
    free_types(p, s);
    if (s->group != MPI_GROUP_NULL) MPI_Group_free(&s->group);
    free(s->bound);
    free(s);
    p->st = NULL;
}

const narmah_strategy_ops narmah_dynamic_ops = {
    .name = "dynamic", .init = dyn_init, .start = dyn_start, .finish = dyn_finish, .free = dyn_free};
