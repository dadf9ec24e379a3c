/*
 * bench/cholesky: task-based tiled Cholesky factorisation (notified-access
 * paper, section VI-C), a self-validating PRK-style kernel.
 *
 * A = L L^T for an SPD matrix of order n = nt*b, stored as the nt(nt+1)/2
 * lower tiles of b x b doubles (column-major inside a tile). Tiles are owned
 * 1-D (column-cyclic) or 2-D block-cyclic. Left-looking variant: tile (m,k)
 * is finished by
 *     m == k:  A_kk -= sum_{j<k} A_kj A_kj^T (DSYRK), then DPOTRF;
 *     m  > k:  A_mk -= sum_{j<k} A_mj A_kj^T (DGEMM), then DTRSM with L_kk^T.
 * Every rank walks that global order over the tiles it owns and waits for a
 * remote input only when it needs it. A finished tile goes to the ranks that
 * own a tile consuming it, along a binary tree rooted at its owner: the
 * position list is [owner, consumers in rank order from owner+1]; position p
 * forwards to 2p+1 and 2p+2 as soon as the tile arrives. Receivers cannot know
 * which tile arrives next, hence the three schemes:
 *
 *   mpi_probe     MPI_Isend with the tile index as tag; receivers MPI_Probe
 *                 (ANY_SOURCE, ANY_TAG) and MPI_Recv into the tile slot.
 *   mpi_onesided  MPI_Win_lock_all; MPI_Put of the tile into the receiver's
 *                 slot, MPI_Fetch_and_op on the receiver's queue counter to
 *                 claim a queue slot, flush, MPI_Compare_and_swap (0 -> tile
 *                 index + 1) into that slot, flush; receivers poll their
 *                 queue (MPI_Win_sync). The paper's listing, with the index
 *                 published atomically.
 *   narma_notify  NARMA_Put_notify of the tile into the receiver's slot with
 *                 the tile index as tag; receivers keep one persistent
 *                 notification request (ANY_SOURCE, ANY_TAG, count 1) and read
 *                 the tag from its status.
 *
 * The default (48 x 48 tiles of 8 x 8) keeps the computation per tile small,
 * as in the paper's experiment, so that synchronisation has a visible share;
 * larger --b makes the kernel compute-bound and brings the schemes together.
 *
 * Rate: n^3/3 flops over the slowest rank's time. Validation: rank 0 gathers L
 * and checks ||A - L L^T||_F / ||A||_F (lower triangles) against --tol.
 * BLAS/LAPACK are called through their Fortran symbols (no CBLAS/LAPACKE).
 */
#include <sched.h>
#include <stdint.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define BENCH "cholesky"

/* ---- BLAS / LAPACK (Fortran ABI: trailing hidden string lengths) ----- */

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t);
void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,
            const int *n, const double *alpha, const double *a, const int *lda, double *b,
            const int *ldb, size_t, size_t, size_t, size_t);
void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *beta, double *c, const int *ldc, size_t,
            size_t);
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc, size_t, size_t);

static const double one = 1.0, minus_one = -1.0;

/* ---- schemes and options ----------------------------------------------- */

enum { S_MPI_PROBE, S_MPI_ONESIDED, S_NARMA_NOTIFY, S_COUNT };
static const char *const scheme_names[S_COUNT] = {"mpi_probe", "mpi_onesided", "narma_notify"};

struct options {
    struct bench_common c; /* --reps, --iters, --sizes, --schemes, --csv, ... */
    int nt, b, dist2d;
    double tol;
};

/* ---- geometry: tiles, owners, broadcast trees ------------------------- */

struct geom {
    MPI_Comm comm;
    int rank, size;
    int nt, b, n, pr, pc;
    size_t tsz; /* doubles per tile */
    size_t ntiles;
    int *owner;    /* [ntiles] */
    int *tree_off; /* [ntiles+1]: tree[tree_off[t] ..) = owner then consumers */
    int *tree;
    int *pos;     /* [ntiles]: my position in the tile's tree, -1 if absent */
    long nexpect; /* tiles this rank receives */
};

static inline size_t tidx(int i, int j) { return (size_t)i * (size_t)(i + 1) / 2 + (size_t)j; }

static int tile_owner(const struct geom *g, int i, int j)
{
    return g->pr == 1 ? j % g->size : (i % g->pr) * g->pc + (j % g->pc);
}

static void geom_init(struct geom *g, MPI_Comm comm, const struct options *o)
{
    MPI_CHECK(MPI_Comm_rank(comm, &g->rank));
    MPI_CHECK(MPI_Comm_size(comm, &g->size));
    g->comm = comm;
    g->nt = o->nt;
    g->b = o->b;
    g->n = o->nt * o->b;
    g->tsz = (size_t)o->b * (size_t)o->b;
    g->ntiles = tidx(o->nt, 0);
    g->pr = 1;
    if (o->dist2d)
        for (int r = 1; r * r <= g->size; r++)
            if (g->size % r == 0) g->pr = r;
    g->pc = g->size / g->pr;
    g->owner = malloc(g->ntiles * sizeof *g->owner);
    g->pos = malloc(g->ntiles * sizeof *g->pos);
    g->tree_off = malloc((g->ntiles + 1) * sizeof *g->tree_off);
    g->tree = malloc(g->ntiles * (size_t)g->size * sizeof *g->tree);
    char *mark = malloc((size_t)g->size);
    if (!g->owner || !g->pos || !g->tree_off || !g->tree || !mark)
        bench_die(BENCH_HERE, "out of memory");
    int P = g->size, nt = g->nt, len = 0;
    g->nexpect = 0;
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++) {
            size_t t = tidx(i, j);
            int own = g->owner[t] = tile_owner(g, i, j);
            memset(mark, 0, (size_t)P);
            if (i == j) { /* L_jj: the TRSMs below it */
                for (int m = j + 1; m < nt; m++)
                    mark[tile_owner(g, m, j)] = 1;
            } else { /* L_ij: row i right of it (incl. the SYRK of (i,i)), column i below */
                for (int k = j + 1; k <= i; k++)
                    mark[tile_owner(g, i, k)] = 1;
                for (int m = i + 1; m < nt; m++)
                    mark[tile_owner(g, m, i)] = 1;
            }
            g->tree_off[t] = len;
            g->tree[len++] = own;
            g->pos[t] = own == g->rank ? 0 : -1;
            for (int d = 1; d < P; d++) {
                int r = (own + d) % P;
                if (!mark[r]) continue;
                if (r == g->rank) {
                    g->pos[t] = len - g->tree_off[t];
                    g->nexpect++;
                }
                g->tree[len++] = r;
            }
        }
    g->tree_off[g->ntiles] = len;
    free(mark);
}

static void geom_free(struct geom *g)
{
    free(g->owner);
    free(g->pos);
    free(g->tree_off);
    free(g->tree);
}

/* The generated SPD matrix: symmetric, entries in [0,1), n added on the diagonal
 * (strictly diagonally dominant). */
static inline double a_elem(int n, int r, int c)
{
    int hi = r > c ? r : c, lo = r > c ? c : r;
    double v = bench_uniform((uint64_t)hi * (uint64_t)n + (uint64_t)lo + 1);
    return r == c ? v + n : v;
}

static void fill_tile(const struct geom *g, double *T, int i, int j)
{
    for (int c = 0; c < g->b; c++)
        for (int r = 0; r < g->b; r++)
            T[r + (size_t)c * g->b] = a_elem(g->n, i * g->b + r, j * g->b + c);
}

/* ---- scheme state ------------------------------------------------------ */

struct state {
    int id;
    const struct geom *g;
    double *tiles;       /* ntiles * tsz; window memory for the one-sided schemes */
    unsigned char *have; /* [ntiles]: tile final here */
    long nrecv;
    /* mpi_probe */
    MPI_Comm comm;
    MPI_Request *sreq;
    long nsreq, capsreq;
    /* mpi_onesided: queue[0] is the counter, queue[1 + s] slot s (tile index + 1) */
    MPI_Win dwin, qwin;
    int64_t *queue;
    long qnext;
    /* narma_notify */
    NARMA_Win nwin;
    NARMA_Request nreq;
};

static inline double *tile(struct state *s, size_t t) { return s->tiles + t * s->g->tsz; }

static void state_setup(struct state *s, int id, const struct geom *g)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    s->g = g;
    MPI_Aint bytes = (MPI_Aint)(g->ntiles * g->tsz * sizeof(double));
    s->have = malloc(g->ntiles);
    if (!s->have) bench_die(BENCH_HERE, "out of memory");
    switch (id) {
    case S_MPI_PROBE:
        s->tiles = bench_alloc((size_t)bytes);
        MPI_CHECK(MPI_Comm_dup(g->comm, &s->comm));
        s->capsreq = (long)g->ntiles * 2 + 16;
        s->sreq = malloc((size_t)s->capsreq * sizeof *s->sreq);
        if (!s->sreq) bench_die(BENCH_HERE, "out of memory");
        break;
    case S_MPI_ONESIDED:
        MPI_CHECK(
            MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, g->comm, &s->tiles, &s->dwin));
        MPI_CHECK(MPI_Win_allocate((MPI_Aint)((g->ntiles + 1) * sizeof(int64_t)), sizeof(int64_t),
                                   MPI_INFO_NULL, g->comm, &s->queue, &s->qwin));
        MPI_CHECK(MPI_Win_lock_all(0, s->dwin));
        MPI_CHECK(MPI_Win_lock_all(0, s->qwin));
        break;
    case S_NARMA_NOTIFY:
        NARMA_CHECK(
            NARMA_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, g->comm, &s->tiles, &s->nwin));
        NARMA_CHECK(NARMA_Notify_init(s->nwin, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &s->nreq));
        NARMA_CHECK(NARMA_Start(&s->nreq));
        break;
    }
}

static void state_teardown(struct state *s)
{
    switch (s->id) {
    case S_MPI_PROBE:
        MPI_CHECK(MPI_Comm_free(&s->comm));
        free(s->tiles);
        free(s->sreq);
        break;
    case S_MPI_ONESIDED:
        MPI_CHECK(MPI_Win_unlock_all(s->dwin));
        MPI_CHECK(MPI_Win_unlock_all(s->qwin));
        MPI_CHECK(MPI_Win_free(&s->dwin));
        MPI_CHECK(MPI_Win_free(&s->qwin));
        break;
    case S_NARMA_NOTIFY:
        NARMA_CHECK(NARMA_Request_free(&s->nreq));
        NARMA_CHECK(NARMA_Win_free(&s->nwin));
        break;
    }
    free(s->have);
}

/* Between repetitions, with every rank quiet: fresh A in the own tiles, empty queues. */
static void state_reset(struct state *s)
{
    const struct geom *g = s->g;
    MPI_CHECK(MPI_Barrier(g->comm));
    memset(s->have, 0, g->ntiles);
    s->nrecv = 0;
    s->nsreq = 0;
    for (int i = 0; i < g->nt; i++)
        for (int j = 0; j <= i; j++)
            if (g->owner[tidx(i, j)] == g->rank) fill_tile(g, tile(s, tidx(i, j)), i, j);
    if (s->id == S_MPI_ONESIDED) {
        memset(s->queue, 0, (g->ntiles + 1) * sizeof(int64_t));
        s->qnext = 0;
        MPI_CHECK(MPI_Win_sync(s->qwin)); /* our stores before the others' next accesses */
        MPI_CHECK(MPI_Win_sync(s->dwin));
    }
    MPI_CHECK(MPI_Barrier(g->comm));
}

/* ---- communication ----------------------------------------------------- */

static void send_tile(struct state *s, size_t t, int dest)
{
    const struct geom *g = s->g;
    double *T = tile(s, t);
    switch (s->id) {
    case S_MPI_PROBE:
        if (s->nsreq == s->capsreq) bench_die(BENCH_HERE, "send request array full");
        MPI_CHECK(
            MPI_Isend(T, (int)g->tsz, MPI_DOUBLE, dest, (int)t, s->comm, &s->sreq[s->nsreq++]));
        break;
    case S_MPI_ONESIDED: {
        const int64_t inc = 1;
        int64_t slot, old, val = (int64_t)t + 1;
        const int64_t zero = 0;
        MPI_CHECK(MPI_Put(T, (int)g->tsz, MPI_DOUBLE, dest, (MPI_Aint)(t * g->tsz), (int)g->tsz,
                          MPI_DOUBLE, s->dwin));
        MPI_CHECK(MPI_Fetch_and_op(&inc, &slot, MPI_INT64_T, dest, 0, MPI_SUM, s->qwin));
        MPI_CHECK(MPI_Win_flush(dest, s->dwin)); /* the tile is at the target ... */
        MPI_CHECK(MPI_Win_flush(dest, s->qwin)); /* ... and we own queue slot `slot` */
        /* publish atomically (a plain put could tear against the reader's polling load) */
        MPI_CHECK(MPI_Compare_and_swap(&val, &zero, &old, MPI_INT64_T, dest, 1 + slot, s->qwin));
        MPI_CHECK(MPI_Win_flush(dest, s->qwin));
        if (old != 0)
            bench_die(BENCH_HERE, "mpi_onesided: queue slot %lld of rank %d already held %lld",
                      (long long)slot, dest, (long long)old);
        break;
    }
    case S_NARMA_NOTIFY:
        NARMA_CHECK(NARMA_Put_notify(T, (int)g->tsz, MPI_DOUBLE, dest, (MPI_Aint)(t * g->tsz),
                                     (int)g->tsz, MPI_DOUBLE, s->nwin, (int)t));
        break;
    }
}

/* Send tile t to my children in its broadcast tree. */
static void forward(struct state *s, size_t t)
{
    const struct geom *g = s->g;
    int p = g->pos[t], len = g->tree_off[t + 1] - g->tree_off[t];
    for (int c = 2 * p + 1; c <= 2 * p + 2 && c < len; c++)
        send_tile(s, t, g->tree[g->tree_off[t] + c]);
}

static void arrived(struct state *s, size_t t)
{
    if (t >= s->g->ntiles || s->have[t] || s->g->pos[t] <= 0)
        bench_die(BENCH_HERE, "%s: unexpected tile %zu (have %d, tree position %d)",
                  scheme_names[s->id], t, t < s->g->ntiles ? s->have[t] : -1,
                  t < s->g->ntiles ? s->g->pos[t] : -1);
    s->have[t] = 1;
    s->nrecv++;
    forward(s, t);
}

/* Take in one arrived tile; blocking or not. Returns 1 if a tile was taken. */
static int receive(struct state *s, int block)
{
    switch (s->id) {
    case S_MPI_PROBE: {
        MPI_Status st;
        int flag = 1;
        if (block)
            MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, s->comm, &st));
        else
            MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, s->comm, &flag, &st));
        if (!flag) return 0;
        size_t t = (size_t)st.MPI_TAG;
        if (t >= s->g->ntiles) bench_die(BENCH_HERE, "mpi_probe: bad tag %d", st.MPI_TAG);
        MPI_CHECK(MPI_Recv(tile(s, t), (int)s->g->tsz, MPI_DOUBLE, st.MPI_SOURCE, st.MPI_TAG,
                           s->comm, MPI_STATUS_IGNORE));
        arrived(s, t);
        return 1;
    }
    case S_MPI_ONESIDED:
        for (unsigned spins = 0;; spins++) {
            MPI_CHECK(MPI_Win_sync(s->qwin)); /* see the slot puts of the origins */
            int64_t v = (int64_t)bench_load_acquire((const uint64_t *)&s->queue[1 + s->qnext]);
            if (v != 0) {
                s->qnext++;
                MPI_CHECK(MPI_Win_sync(s->dwin)); /* the tile was flushed before its slot */
                arrived(s, (size_t)(v - 1));
                return 1;
            }
            if (!block) return 0;
            if (spins < 1000)
                bench_cpu_relax(); /* then yield, like MPICH and narma waits */
            else
                sched_yield();
        }
    case S_NARMA_NOTIFY: {
        MPI_Status st;
        int flag = 1;
        if (block)
            NARMA_CHECK(NARMA_Wait(&s->nreq, &st));
        else
            NARMA_CHECK(NARMA_Test(&s->nreq, &flag, &st));
        if (!flag) return 0;
        NARMA_CHECK(NARMA_Start(&s->nreq)); /* re-arm before forwarding */
        arrived(s, (size_t)st.MPI_TAG);
        return 1;
    }
    }
    return 0;
}

static inline void need(struct state *s, size_t t)
{
    while (!s->have[t])
        receive(s, 1);
}

/* ---- the factorisation ------------------------------------------------- */

static void factorise(struct state *s)
{
    const struct geom *g = s->g;
    const int b = g->b;
    for (int k = 0; k < g->nt; k++)
        for (int m = k; m < g->nt; m++) {
            size_t t = tidx(m, k);
            if (g->owner[t] != g->rank) continue;
            while (receive(s, 0)) {
            } /* forward whatever came in meanwhile */
            double *C = tile(s, t);
            for (int j = 0; j < k; j++) {
                size_t a = tidx(m, j);
                need(s, a);
                if (m == k) {
                    dsyrk_("L", "N", &b, &b, &minus_one, tile(s, a), &b, &one, C, &b, 1, 1);
                } else {
                    size_t bt = tidx(k, j);
                    need(s, bt);
                    dgemm_("N", "T", &b, &b, &b, &minus_one, tile(s, a), &b, tile(s, bt), &b, &one,
                           C, &b, 1, 1);
                }
            }
            if (m == k) {
                int info;
                dpotrf_("L", &b, C, &b, &info, 1);
                if (info != 0) bench_die(BENCH_HERE, "DPOTRF of tile (%d,%d): info %d", k, k, info);
            } else {
                size_t d = tidx(k, k);
                need(s, d);
                dtrsm_("R", "L", "T", "N", &b, &b, &one, tile(s, d), &b, C, &b, 1, 1, 1, 1);
            }
            s->have[t] = 1;
            forward(s, t);
        }
    while (s->nrecv < g->nexpect)
        receive(s, 1); /* tiles still to forward */
    if (s->id == S_MPI_PROBE) MPI_CHECK(MPI_Waitall((int)s->nsreq, s->sreq, MPI_STATUSES_IGNORE));
}

/* ---- validation -------------------------------------------------------- */

/* Rank 0 gathers L (over g->comm, outside the timed region) and returns
 * ||A - L L^T||_F / ||A||_F over the full symmetric matrices; other ranks return 0. */
static double residual(struct state *s)
{
    const struct geom *g = s->g;
    const int n = g->n, b = g->b;
    double *T = bench_alloc(g->tsz * sizeof(double));
    double *L = NULL, *C = NULL;
    if (g->rank == 0) {
        L = bench_alloc((size_t)n * n * sizeof(double));
        C = bench_alloc((size_t)n * n * sizeof(double));
    }
    for (int i = 0; i < g->nt; i++)
        for (int j = 0; j <= i; j++) {
            size_t t = tidx(i, j);
            int own = g->owner[t];
            const double *src = tile(s, t);
            if (g->rank == 0 && own != 0) {
                MPI_CHECK(MPI_Recv(T, (int)g->tsz, MPI_DOUBLE, own, 0, g->comm, MPI_STATUS_IGNORE));
                src = T;
            } else if (g->rank == own && own != 0) {
                MPI_CHECK(MPI_Send(src, (int)g->tsz, MPI_DOUBLE, 0, 0, g->comm));
            }
            if (g->rank != 0) continue;
            for (int c = 0; c < b; c++)
                for (int r = (i == j ? c : 0); r < b; r++)
                    L[(size_t)(j * b + c) * n + (size_t)(i * b + r)] = src[r + (size_t)c * b];
        }
    free(T);
    if (g->rank != 0) return 0;
    for (int c = 0; c < n; c++)
        for (int r = c; r < n; r++)
            C[(size_t)c * n + r] = a_elem(n, r, c);
    dsyrk_("L", "N", &n, &n, &minus_one, L, &n, &one, C, &n, 1, 1); /* C = A - L L^T (lower) */
    double num = 0, den = 0;
    for (int c = 0; c < n; c++)
        for (int r = c; r < n; r++) {
            double w = r == c ? 1.0 : 2.0, a = a_elem(n, r, c), e = C[(size_t)c * n + r];
            num += w * e * e;
            den += w * a * a;
        }
    free(L);
    free(C);
    return sqrt(num / den);
}

/* ---- driver ------------------------------------------------------------ */

static int parse(int argc, char **argv, struct options *o)
{
    const char *dist = "1d";
    *o = (struct options){.c = {.reps = 11, .timeout = 60}, .nt = 48, .b = 8, .tol = 1e-10};
    const struct bench_opt own[] = {
        {"nt", BENCH_OPT_INT, &o->nt, 1, "tiles per dimension (default 48)"},
        {"b", BENCH_OPT_INT, &o->b, 1, "tile order (default 8; matrix order n = nt*b)"},
        {"dist", BENCH_OPT_STRING, &dist, 0,
         "1d|2d: column-cyclic or 2-D block-cyclic (default 1d)"},
        {"tol", BENCH_OPT_DOUBLE, &o->tol, 0,
         "validation tolerance on ||A-LL^T||/||A|| (default 1e-10)"},
    };
    const struct bench_spec spec = {
        .prog = BENCH,
        .usage = "mpiexec -n P " BENCH " [options]",
        .uses = BENCH_USE_REPS | BENCH_USE_SCHEMES | BENCH_USE_TIMEOUT,
        .schemes = scheme_names,
        .nschemes = S_COUNT,
        .opts = own,
        .nopts = (int)(sizeof own / sizeof *own),
        .quick_reps = 3,
    };
    int rc = bench_parse(argc, argv, &spec, &o->c);
    if (rc == 0) {
        o->dist2d = !strcmp(dist, "2d");
        if (!o->dist2d && strcmp(dist, "1d")) rc = bench_error(BENCH ": bad --dist '%s'", dist);
    }
    return rc;
}

/* One block of the interleaved run: factorise, time (slowest rank), validate. */
struct chol_run {
    struct state *st;
    const struct geom *g;
    double tol, worst[S_COUNT]; /* worst residual per scheme */
    int rank;
};

static double chol_block(void *ctx, int s, int z, int rep, int *bad)
{
    struct chol_run *c = ctx;
    (void)z;
    state_reset(&c->st[s]);
    double t0 = bench_now();
    factorise(&c->st[s]);
    double dt = bench_now() - t0;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, c->g->comm));
    double res = residual(&c->st[s]);
    MPI_CHECK(MPI_Bcast(&res, 1, MPI_DOUBLE, 0, c->g->comm));
    if (res > c->worst[s] || isnan(res)) c->worst[s] = res;
    if (!(res <= c->tol)) {
        *bad = 1;
        if (c->rank == 0)
            fprintf(stderr,
                    "\n!!! " BENCH ": VALIDATION FAILED: %s repetition %d: "
                    "||A-LL^T||/||A|| = %.3e > %.1e\n",
                    scheme_names[s], rep, res, c->tol);
    }
    return (double)c->g->n * c->g->n * c->g->n / 3.0 / dt / 1e9;
}

int main(int argc, char **argv)
{
    NARMA_CHECK(NARMA_Init(&argc, &argv));
    int rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    struct options o;
    int rc = parse(argc, argv, &o);
    if (rc) return bench_stop(rc);
    struct geom g;
    geom_init(&g, MPI_COMM_WORLD, &o);
    int *tag_ub, flag;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    if ((flag && (size_t)*tag_ub < g.ntiles) || g.ntiles > NARMA_TAG_UB) {
        if (rank == 0) fprintf(stderr, BENCH ": %zu tiles exceed the tag range\n", g.ntiles);
        NARMA_CHECK(NARMA_Finalize());
        return 1;
    }

    bench_print_header("narma cholesky: task-based tiled Cholesky (notified-access paper VI-C)",
                       MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# matrix order %d = %d tiles of %d x %d (%zu B); %s distribution (%d x %d grid)\n",
               g.n, g.nt, g.b, g.b, g.tsz * sizeof(double),
               o.dist2d ? "2-D block-cyclic" : "1-D column-cyclic", g.pr, g.pc);
        printf("# repetitions %d, schemes interleaved (order rotated per repetition); "
               "rate = (n^3/3) / slowest rank's time\n",
               o.c.reps);
        printf("# tiles broadcast along binary trees [owner, consumers]; every repetition "
               "validated\n");
        fflush(stdout);
        bench_csv_open(o.c.csv);
    }

    struct state st[S_COUNT];
    int ids[S_COUNT], ns = 0;
    for (int s = 0; s < S_COUNT; s++)
        if (o.c.selected[s]) {
            state_setup(&st[s], s, &g);
            ids[ns++] = s;
        }
    double *gf = malloc((size_t)S_COUNT * o.c.reps * sizeof *gf);
    if (!gf) bench_die(BENCH_HERE, "out of memory");
    for (int i = 0; i < S_COUNT * o.c.reps; i++)
        gf[i] = NAN;
    struct chol_run cr = {.st = st, .g = &g, .tol = o.tol, .rank = rank};
    const struct bench_run run = bench_run_of(BENCH, &o.c, scheme_names, S_COUNT, 0, g.comm);
    enum bench_status status[S_COUNT];
    bench_status_init(status, o.c.selected, S_COUNT);
    bench_interleave(&run, status, chol_block, &cr, gf);
    int failed = bench_failed(status, S_COUNT);
    const double *worst = cr.worst;

    if (rank == 0) {
        printf("\n# %-14s %12s %12s %10s %14s\n", "Scheme", "GFlop/s", "time (ms)", "spread",
               "max residual");
        for (int k = 0; k < ns; k++) {
            int s = ids[k];
            double v = bench_rep_median(&gf[s * o.c.reps], NULL, o.c.reps);
            printf("  %-14s %12.3f %12.3f %10.2f %14.3e\n", scheme_names[s], v,
                   (double)g.n * g.n * g.n / 3.0 / v / 1e6,
                   bench_spread(&gf[s * o.c.reps], o.c.reps), worst[s]);
            bench_csv_row(BENCH, scheme_names[s], (size_t)g.n, "gflops", v);
            bench_csv_row(BENCH, scheme_names[s], (size_t)g.n, "residual", worst[s]);
        }
        static const struct bench_pair pairs[] = {{S_NARMA_NOTIFY, S_MPI_PROBE},
                                                  {S_NARMA_NOTIFY, S_MPI_ONESIDED},
                                                  {S_MPI_ONESIDED, S_MPI_PROBE}};
        bench_print_pairs(BENCH, "Rate ratios", scheme_names, o.c.selected, pairs,
                          (int)(sizeof pairs / sizeof *pairs), gf, o.c.reps, (size_t)g.n);
        printf(failed ? "\nERROR: solution does not validate\n" : "\nSolution validates\n");
        fflush(stdout);
        bench_csv_close();
    }
    for (int k = 0; k < ns; k++)
        state_teardown(&st[ids[k]]);
    free(gf);
    geom_free(&g);
    NARMA_CHECK(NARMA_Finalize());
    return failed;
}
