/*
 * Plans: validation (agreed by all ranks), link geometry, the neighbour
 * handshake, buffers, and dispatch to the strategy table.
 */
#include "halo.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* W, E, S, N, SW, NE, SE, NW: opposite directions differ in bit 0. */
const int narmah_dx[NARMAH_MAXLINKS] = {-1, +1, 0, 0, -1, +1, +1, -1};
const int narmah_dy[NARMAH_MAXLINKS] = {0, 0, -1, +1, -1, +1, -1, +1};

const narmah_strategy_ops *const narmah_strategies[NARMA_HALO_NSTRATEGIES] = {
    [NARMA_HALO_DEFAULT] = &narmah_p2p_ops, /* never used: resolved at creation */
    [NARMA_HALO_P2P] = &narmah_p2p_ops,
    [NARMA_HALO_FENCE] = &narmah_fence_ops,
    [NARMA_HALO_PSCW] = &narmah_pscw_ops,
    [NARMA_HALO_PSCW_NB] = &narmah_pscw_nb_ops,
    [NARMA_HALO_LOCK] = &narmah_lock_ops,
    [NARMA_HALO_DYNAMIC] = &narmah_dynamic_ops,
    [NARMA_HALO_NOTIFY] = &narmah_notify_ops,
    [NARMA_HALO_NOTIFY_FIELDS] = &narmah_notify_fields_ops,
};

static const char *const strategy_names[NARMA_HALO_NSTRATEGIES] = {
    "default", "p2p", "fence", "pscw", "pscw_nb", "lock", "dynamic", "notify", "notify_fields"};

const char *NARMA_Halo_strategy_name(NARMA_Halo_strategy s)
{
    return (unsigned)s < NARMA_HALO_NSTRATEGIES ? strategy_names[s] : "unknown";
}

int NARMA_Halo_strategy_from_name(const char *name, NARMA_Halo_strategy *s)
{
    if (name == NULL || s == NULL) return NARMA_ERR_ARG;
    for (int i = 0; i < NARMA_HALO_NSTRATEGIES; i++)
        if (strcmp(name, strategy_names[i]) == 0) {
            *s = (NARMA_Halo_strategy)i;
            return NARMA_SUCCESS;
        }
    return NARMA_HALO_ERR_STRATEGY;
}

const char *NARMA_Halo_error_string(int e)
{
    switch (e) {
    case NARMA_HALO_ERR_TOPOLOGY:
        return "halo: the communicator is not 2-D Cartesian";
    case NARMA_HALO_ERR_SHAPE:
        return "halo: invalid shape, or shapes/parameters differ between neighbours";
    case NARMA_HALO_ERR_DEPTH:
        return "halo: depth below 1 or deeper than the interior";
    case NARMA_HALO_ERR_SIZE:
        return "halo: a field array is smaller than its layout needs";
    case NARMA_HALO_ERR_STRATEGY:
        return "halo: unknown strategy";
    case NARMA_HALO_ERR_STATE:
        return "halo: exchange state (start while open, finish without start)";
    default:
        return NARMA_Strerror(e);
    }
}

int narmah_mpi_err(int mpirc)
{
    (void)mpirc;
    return NARMA_ERR_MPI;
}

/* Fill defaults; 0 when the desc is usable locally, else the error class. */
static int resolve(const NARMA_Halo_desc *in, NARMA_Halo_desc *d)
{
    *d = *in;
    if (d->halo_x == 0) d->halo_x = 2;
    if (d->halo_y == 0) d->halo_y = 2;
    if (d->datatype == MPI_DATATYPE_NULL) d->datatype = MPI_DOUBLE;
    if (d->nfields == 0) d->nfields = 1;
    if (d->directions == 0) d->directions = NARMA_HALO_BOTH;
    d->corners = d->corners != 0;
    if (d->nfields < 0 || d->directions < 0 || d->directions > NARMA_HALO_BOTH ||
        (d->layout != NARMA_HALO_LAYOUT_ZYX && d->layout != NARMA_HALO_LAYOUT_XYZ))
        return NARMA_ERR_ARG;
    if (d->nz < 1 || d->ny < 1 || d->nx < 1) return NARMA_HALO_ERR_SHAPE;
    if (d->halo_x < 1 || d->halo_y < 1 || d->halo_x > d->nx || d->halo_y > d->ny)
        return NARMA_HALO_ERR_DEPTH;
    int ni, na, nd, comb;
    if (MPI_Type_get_envelope(d->datatype, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        comb != MPI_COMBINER_NAMED)
        return NARMA_ERR_TYPE;
    if (d->strategy == NARMA_HALO_DEFAULT) {
        const char *env = getenv("NARMA_HALO_STRATEGY");
        d->strategy = NARMA_HALO_P2P;
        if (env != NULL && *env != '\0' && NARMA_Halo_strategy_from_name(env, &d->strategy))
            return NARMA_HALO_ERR_STRATEGY;
        if (d->strategy == NARMA_HALO_DEFAULT) d->strategy = NARMA_HALO_P2P;
    }
    if ((unsigned)d->strategy >= NARMA_HALO_NSTRATEGIES) return NARMA_HALO_ERR_STRATEGY;
    if (d->field_elems != 0 && d->field_elems < NARMA_Halo_field_elems(d))
        return NARMA_HALO_ERR_SIZE;
    return NARMA_SUCCESS;
}

size_t NARMA_Halo_field_elems(const NARMA_Halo_desc *desc)
{
    if (desc == NULL) return 0;
    size_t hx = desc->halo_x ? (size_t)desc->halo_x : 2,
           hy = desc->halo_y ? (size_t)desc->halo_y : 2;
    if (desc->nz < 1 || desc->ny < 1 || desc->nx < 1) return 0;
    return (size_t)desc->nz * ((size_t)desc->ny + 2 * hy) * ((size_t)desc->nx + 2 * hx);
}

/* Range along one axis for link offset dd: send or receive. span: a
 * straight (dd == 0) strip that extends across the halo. */
static void axis_range(int dd, int n, int h, int span, int recv, int *start, int *count)
{
    if (dd == 0) {
        *start = span ? 0 : h;
        *count = span ? n + 2 * h : n;
    } else if (dd < 0) {
        *start = recv ? 0 : h;
        *count = h;
    } else {
        *start = recv ? n + h : n;
        *count = h;
    }
}

/* Box in storage order from array-index ranges (x, y, z), merging
 * contiguous dimensions so runs are as long as possible. */
static narmah_box make_box(const NARMA_Halo_desc *d, int x0, int nx, int y0, int ny)
{
    const MPI_Aint nxt = d->nx + 2 * d->halo_x, nyt = d->ny + 2 * d->halo_y;
    narmah_box b;
    if (d->layout == NARMA_HALO_LAYOUT_ZYX) { /* f[z][y][x] */
        b.n[0] = d->nz, b.n[1] = ny, b.n[2] = nx;
        b.s[0] = nyt * nxt, b.s[1] = nxt, b.s[2] = 1;
        b.off = (MPI_Aint)y0 * nxt + x0;
    } else { /* f[x][y][z] */
        b.n[0] = nx, b.n[1] = ny, b.n[2] = d->nz;
        b.s[0] = nyt * d->nz, b.s[1] = d->nz, b.s[2] = 1;
        b.off = ((MPI_Aint)x0 * nyt + y0) * d->nz;
    }
    if (b.n[2] == b.s[1]) { /* whole lines: dims 1 and 2 are one run */
        b.n[2] *= b.n[1];
        b.n[1] = 1;
        if (b.n[2] == b.s[0]) { /* whole planes */
            b.n[2] *= b.n[0];
            b.n[0] = 1;
        }
    }
    if (b.n[1] == 1 && b.n[0] > 1) { /* one loop level suffices */
        b.n[1] = b.n[0], b.s[1] = b.s[0];
        b.n[0] = 1;
    }
    return b;
}

/* The send (recv = 0) or receive box of direction k for a rank whose
 * interior is nx by ny. One-direction plans with corners: strips span the
 * other direction's halo. */
static narmah_box link_box(const narmah_plan *p, int k, int nx, int ny, int recv)
{
    const NARMA_Halo_desc *d = &p->d;
    const int span = d->corners && d->directions != NARMA_HALO_BOTH;
    int x0, cx, y0, cy;
    axis_range(narmah_dx[k], nx, d->halo_x, span, recv, &x0, &cx);
    axis_range(narmah_dy[k], ny, d->halo_y, span, recv, &y0, &cy);
    NARMA_Halo_desc g = *d;
    g.nx = nx, g.ny = ny;
    return make_box(&g, x0, cx, y0, cy);
}

/* What one rank tells each neighbour at creation. */
typedef struct {
    int nz, ny, nx, hx, hy, elsize, nfields, corners, dirs, layout, strategy, pad;
    int64_t recv_stride;
    int64_t send_bytes[NARMAH_MAXLINKS]; /* per direction, -1 if no link */
    int64_t recv_disp[NARMAH_MAXLINKS];  /* window displacement of my parity-0 slot */
} hello;

static int build_links(narmah_plan *p)
{
    int dims[2], periods[2], coords[2];
    if (MPI_Cart_get(p->comm, 2, dims, periods, coords) != MPI_SUCCESS) return NARMA_ERR_MPI;
    const NARMA_Halo_desc *d = &p->d;
    const int ew = d->directions & NARMA_HALO_EW, ns = d->directions & NARMA_HALO_NS;
    const int diag = d->corners && ew && ns;
    p->nlinks = p->nremote = 0;
    size_t soff = 0, roff = 0;
    for (int k = 0; k < NARMAH_MAXLINKS; k++) {
        const int dx = narmah_dx[k], dy = narmah_dy[k];
        if (dx && dy && !diag) continue;
        if (dx && !dy && !ew) continue;
        if (dy && !dx && !ns) continue;
        int c[2] = {coords[0] + dy, coords[1] + dx}, ok = 1;
        for (int a = 0; a < 2; a++) {
            if (c[a] < 0 || c[a] >= dims[a]) {
                if (periods[a])
                    c[a] = (c[a] + dims[a]) % dims[a];
                else
                    ok = 0;
            }
        }
        if (!ok) continue;
        narmah_link *l = &p->link[p->nlinks++];
        memset(l, 0, sizeof *l);
        l->dir = k;
        if (MPI_Cart_rank(p->comm, c, &l->peer) != MPI_SUCCESS) return NARMA_ERR_MPI;
        l->self = l->peer == p->rank;
        l->send = link_box(p, k, d->nx, d->ny, 0);
        l->recv = link_box(p, k, d->nx, d->ny, 1);
        int cx, cy, x0, y0;
        axis_range(dx, d->nx, d->halo_x, d->corners && !diag, 0, &x0, &cx);
        axis_range(dy, d->ny, d->halo_y, d->corners && !diag, 0, &y0, &cy);
        l->bytes = (size_t)d->nfields * (size_t)d->nz * (size_t)cx * (size_t)cy * (size_t)p->elsize;
        if (l->self) continue;
        p->nremote++;
        l->send_off = soff;
        l->recv_off = roff;
        soff += (l->bytes + NARMAH_ALIGN - 1) / NARMAH_ALIGN * NARMAH_ALIGN;
        roff += (l->bytes + NARMAH_ALIGN - 1) / NARMAH_ALIGN * NARMAH_ALIGN;
        int seen = 0;
        for (int i = 0; i < p->npeers; i++)
            seen |= p->peers[i] == l->peer;
        if (!seen) p->peers[p->npeers++] = l->peer;
    }
    p->send_bytes = soff;
    p->recv_stride = roff;
    return NARMA_SUCCESS;
}

/* Exchange hellos with every link peer; check that each neighbour sends
 * what I expect. Returns the local verdict (all ranks then agree on it). */
static int handshake(narmah_plan *p)
{
    hello mine, theirs[NARMAH_MAXLINKS];
    memset(&mine, 0, sizeof mine);
    mine.nz = p->d.nz, mine.ny = p->d.ny, mine.nx = p->d.nx;
    mine.hx = p->d.halo_x, mine.hy = p->d.halo_y, mine.elsize = p->elsize;
    mine.nfields = p->d.nfields, mine.corners = p->d.corners, mine.dirs = p->d.directions;
    mine.layout = (int)p->d.layout, mine.strategy = (int)p->d.strategy;
    mine.recv_stride = (int64_t)p->recv_stride;
    for (int k = 0; k < NARMAH_MAXLINKS; k++)
        mine.send_bytes[k] = mine.recv_disp[k] = -1;
    for (int i = 0; i < p->nlinks; i++) {
        mine.send_bytes[p->link[i].dir] = (int64_t)p->link[i].bytes;
        mine.recv_disp[p->link[i].dir] = NARMAH_FLAGS_BYTES + (int64_t)p->link[i].recv_off;
    }
    MPI_Request req[2 * NARMAH_MAXLINKS];
    for (int i = 0; i < p->nlinks; i++) {
        const narmah_link *l = &p->link[i];
        MPI_Irecv(&theirs[i], (int)sizeof(hello), MPI_BYTE, l->peer, narmah_opp(l->dir), p->comm,
                  &req[2 * i]);
        MPI_Isend(&mine, (int)sizeof(hello), MPI_BYTE, l->peer, l->dir, p->comm, &req[2 * i + 1]);
    }
    if (MPI_Waitall(2 * p->nlinks, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return NARMA_ERR_MPI;
    for (int i = 0; i < p->nlinks; i++) {
        narmah_link *l = &p->link[i];
        const hello *t = &theirs[i];
        const int o = narmah_opp(l->dir);
        if (t->nz != mine.nz || t->hx != mine.hx || t->hy != mine.hy || t->elsize != mine.elsize ||
            t->nfields != mine.nfields || t->corners != mine.corners || t->dirs != mine.dirs ||
            t->layout != mine.layout || t->send_bytes[o] != (int64_t)l->bytes)
            return NARMA_HALO_ERR_SHAPE;
        if ((narmah_dy[l->dir] == 0 && t->ny != mine.ny) ||
            (narmah_dx[l->dir] == 0 && t->nx != mine.nx))
            return NARMA_HALO_ERR_SHAPE;
        l->target_disp = (MPI_Aint)t->recv_disp[o];
        l->target_stride = (MPI_Aint)t->recv_stride;
        l->peer_recv = link_box(p, o, t->nx, t->ny, 1);
    }
    return NARMA_SUCCESS;
}

static void plan_release(narmah_plan *p)
{
    if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
    free(p->sendbuf);
    free(p->fields);
    free(p);
}

int NARMA_Halo_plan_create(MPI_Comm cart, const NARMA_Halo_desc *desc, NARMA_Halo_plan *plan)
{
    if (desc == NULL || plan == NULL || cart == MPI_COMM_NULL) return NARMA_ERR_ARG;
    *plan = NARMA_HALO_PLAN_NULL;
    int topo, ndims;
    if (MPI_Topo_test(cart, &topo) != MPI_SUCCESS) return NARMA_ERR_MPI;
    if (topo != MPI_CART) return NARMA_HALO_ERR_TOPOLOGY;
    if (MPI_Cartdim_get(cart, &ndims) != MPI_SUCCESS) return NARMA_ERR_MPI;
    if (ndims != 2) return NARMA_HALO_ERR_TOPOLOGY;

    narmah_plan *p = calloc(1, sizeof *p);
    if (p == NULL) return NARMA_ERR_NO_MEM;
    p->comm = MPI_COMM_NULL;
    int rc = resolve(desc, &p->d);
    if (MPI_Comm_dup(cart, &p->comm) != MPI_SUCCESS) {
        plan_release(p);
        return NARMA_ERR_MPI;
    }
    MPI_Comm_rank(p->comm, &p->rank);
    MPI_Comm_size(p->comm, &p->size);
    if (rc == NARMA_SUCCESS) {
        MPI_Type_size(p->d.datatype, &p->elsize);
        p->field_elems = NARMA_Halo_field_elems(&p->d);
        rc = build_links(p);
    }
    /* Agree on the local checks before talking to neighbours (a rank that
     * failed them has no links to talk over), then on the handshake and on
     * the strategy. Same verdict everywhere: no rank is left waiting in a
     * window creation the others skipped. */
    int v[3] = {rc, 0, 0};
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MAX, p->comm);
    rc = v[0];
    if (rc == NARMA_SUCCESS) {
        v[0] = handshake(p), v[1] = (int)p->d.strategy, v[2] = -(int)p->d.strategy;
        MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MAX, p->comm);
        rc = v[0] ? v[0] : v[1] != -v[2] ? NARMA_HALO_ERR_STRATEGY : NARMA_SUCCESS;
    }
    if (rc == NARMA_SUCCESS) {
        p->strategy = p->d.strategy;
        p->fields = calloc((size_t)p->d.nfields, sizeof(void *));
        p->sendbuf = p->send_bytes ? aligned_alloc(NARMAH_ALIGN, p->send_bytes) : NULL;
        if (p->fields == NULL || (p->send_bytes && p->sendbuf == NULL)) rc = NARMA_ERR_NO_MEM;
        /* window sizes are padded to NARMAH_ALIGN (a multiple of 16): see halo.h */
        p->win_bytes = NARMAH_FLAGS_BYTES + 2 * p->recv_stride;
        v[0] = rc, v[1] = p->nremote;
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, p->comm);
        rc = v[0];
        p->any_remote = v[1] > 0;
    }
    if (rc == NARMA_SUCCESS) rc = narmah_strategies[p->strategy]->init(p);
    if (rc != NARMA_SUCCESS) {
        plan_release(p);
        return rc;
    }
    *plan = p;
    return NARMA_SUCCESS;
}

int NARMA_Halo_plan_free(NARMA_Halo_plan *plan)
{
    if (plan == NULL || *plan == NULL) return NARMA_ERR_ARG;
    narmah_plan *p = *plan;
    if (p->open) return NARMA_HALO_ERR_STATE;
    narmah_strategies[p->strategy]->free(p);
    plan_release(p);
    *plan = NARMA_HALO_PLAN_NULL;
    return NARMA_SUCCESS;
}

NARMA_Halo_strategy NARMA_Halo_plan_strategy(NARMA_Halo_plan p)
{
    return p ? p->strategy : NARMA_HALO_DEFAULT;
}

int NARMA_Halo_start(NARMA_Halo_plan p, void *fields[])
{
    if (p == NULL || fields == NULL) return NARMA_ERR_ARG;
    if (p->open) return NARMA_HALO_ERR_STATE;
    for (int f = 0; f < p->d.nfields; f++) {
        if (fields[f] == NULL) return NARMA_ERR_ARG;
        p->fields[f] = fields[f];
    }
    p->seq++;
    p->open = 1;
    int rc = narmah_strategies[p->strategy]->start(p);
    if (rc) p->open = 0;
    return rc;
}

int NARMA_Halo_finish(NARMA_Halo_plan p)
{
    if (p == NULL) return NARMA_ERR_ARG;
    if (!p->open) return NARMA_HALO_ERR_STATE;
    p->open = 0;
    return narmah_strategies[p->strategy]->finish(p);
}

int NARMA_Halo_exchange(NARMA_Halo_plan p, void *fields[])
{
    int rc = NARMA_Halo_start(p, fields);
    return rc ? rc : NARMA_Halo_finish(p);
}

/* ---- helpers shared by the RMA strategies ------------------------------ */

int narmah_alloc_recv_win(narmah_plan *p, NARMA_Win *win)
{
    void *base = NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    /* Halo slots are only written by Put: let the MPI library skip the
     * accumulate-ordering machinery. */
    MPI_Info_set(info, "accumulate_ordering", "none");
    /* The notify strategy waits for its puts right after starting them: copied in the call, a
     * large strip is there sooner than pulled by the neighbour (docs/design.md). */
    MPI_Info_set(info, "narma_pull_min", "0");
    int rc = NARMA_Win_allocate((MPI_Aint)p->win_bytes, 1, info, p->comm, &base, win);
    MPI_Info_free(&info);
    if (rc) return rc;
    memset(base, 0, p->win_bytes);
    p->recvbuf = (char *)base + NARMAH_FLAGS_BYTES;
    MPI_Barrier(p->comm); /* zeroed flags before anyone writes them */
    return NARMA_SUCCESS;
}

int narmah_peer_group(narmah_plan *p, NARMA_Win win, MPI_Group *g)
{
    MPI_Group all;
    int rc = NARMA_Win_get_group(win, &all);
    if (rc) return rc;
    rc = MPI_Group_incl(all, p->npeers, p->peers, g);
    MPI_Group_free(&all);
    return rc == MPI_SUCCESS ? NARMA_SUCCESS : NARMA_ERR_MPI;
}

/* The PSCW strategies' set-up: the receive window and the group of peers, or
 * nothing (both released) on error. */
int narmah_recv_win_and_group(narmah_plan *p, NARMA_Win *win, MPI_Group *g)
{
    *win = NARMA_WIN_NULL;
    *g = MPI_GROUP_NULL;
    int rc = narmah_alloc_recv_win(p, win);
    if (rc == NARMA_SUCCESS) rc = narmah_peer_group(p, *win, g);
    if (rc && *win != NARMA_WIN_NULL) NARMA_Win_free(win);
    return rc;
}
