/*
 * bench/stencil: the pipelined stencil of the Notified Access paper (section
 * VI-A), i.e. the Parallel Research Kernels' Synch_p2p: an m x n grid split by
 * columns, A(i,j) = A(i-1,j) + A(i,j-1) - A(i-1,j-1), computed row by row;
 * each rank waits for its left neighbour's value of row i, computes its part
 * of the row and passes its rightmost value on. Between iterations the last
 * rank feeds -A(m-1,n-1) back into rank 0's A(0,0), which serialises the
 * iterations as PRK does. Rate: 2*(m-1)*(n-1) flops per iteration (MFlops/s,
 * the paper's GMOPS up to a factor); validation as PRK: after T iterations
 * (the warm-up included) A(m-1,n-1) == T*(m+n-2).
 *
 * Schemes (same grid, same pipeline, only the hand-over differs):
 *   mpi_sendrecv  MPI_Recv from the left, MPI_Send to the right (PRK MPI1)
 *   mpi_pscw      per row: MPI_Win_start/Put/complete to the right; the right
 *                 neighbour re-posts its exposure right after each MPI_Win_wait
 *   mpi_fence     wavefront: at step s rank r computes row s-r+1, puts, fences
 *   narma_pscw    as mpi_pscw with narma's calls
 *   narma_fence   as mpi_fence with narma's calls
 *   narma_notify  NARMA_Put_notify of the boundary value into the neighbour's
 *                 ghost column with the row index as tag; the neighbour
 *                 Start/Waits a persistent request per row (tag = row)
 *
 * Buffer reuse (window schemes): the ghost column holds one slot per row, so
 * within an iteration nothing is overwritten. Row i of iteration k+1 can only
 * be written after rank 0 received the corner of iteration k, which the last
 * rank sends after its row m-1, which depends (through the pipeline) on every
 * rank having read all its ghost values of iteration k. The corner itself
 * lands in A(0,0) of rank 0, read only in row 1, long before the next corner.
 * The notify scheme's per-row requests are therefore never matched by a
 * notification of the wrong iteration either.
 *
 * Schemes run interleaved: each repetition runs every scheme once (fresh grid,
 * one untimed warm-up iteration, then --iters timed ones) in an order rotated
 * per repetition; the table gives medians over repetitions and the ratio to
 * mpi_sendrecv as the median of per-repetition ratios.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "harness.h"

#define PROG "stencil"

enum scheme_id {
    S_SENDRECV,
    S_MPI_PSCW,
    S_MPI_FENCE,
    S_NARMA_PSCW,
    S_NARMA_FENCE,
    S_NOTIFY,
    S_COUNT
};

static const char *const scheme_names[S_COUNT] = {
    [S_SENDRECV] = "mpi_sendrecv", [S_MPI_PSCW] = "mpi_pscw",       [S_MPI_FENCE] = "mpi_fence",
    [S_NARMA_PSCW] = "narma_pscw", [S_NARMA_FENCE] = "narma_fence", [S_NOTIFY] = "narma_notify",
};

#define TAG_ROW     1 /* MPI tags of mpi_sendrecv */
#define TAG_CORNER  2
#define NTAG_CORNER 0 /* notification tag of the corner (rows use tags 1..m-1) */

struct options {
    struct bench_common c; /* --reps, --iters, --sizes, --schemes, --csv, ... */
    long m, n;
};

/* One scheme's grid and synchronisation objects on this rank. */
struct stencil {
    int id;
    int narma; /* window schemes: narma's window (else MPI's) */
    long m, n;
    int rank, np, left, right, last; /* left/right: -1 at the ends */
    long jstart, jend;               /* global columns owned */
    long w, wright;                  /* local row width (ghost + owned), right neighbour's */
    double *a;                       /* m rows of w: column 0 is the ghost (global jstart-1) */
    MPI_Win mwin;
    NARMA_Win nwin;
    MPI_Group g_left, g_right, g_zero, g_last;
    NARMA_Request *rows; /* narma_notify: one persistent request per row (tag = row) */
    NARMA_Request corner;
};

#define A(s, i, jl) ((s)->a[(size_t)(i) * (size_t)(s)->w + (size_t)(jl)])

/* PRK's column distribution: the first n % np ranks own one column more. */
static void columns(long n, int np, int r, long *js, long *je)
{
    long width = n / np, leftover = n % np;
    if (r < leftover) {
        *js = (width + 1) * r;
        *je = *js + width;
    } else {
        *js = (width + 1) * leftover + width * (r - leftover);
        *je = *js + width - 1;
    }
}

static void init_grid(struct stencil *s)
{
    memset(s->a, 0, (size_t)s->m * (size_t)s->w * sizeof *s->a);
    for (long jl = 0; jl < s->w; jl++)
        A(s, 0, jl) = (double)(s->jstart - 1 + jl);
    if (s->rank == 0)
        for (long i = 0; i < s->m; i++)
            A(s, i, 1) = (double)i; /* global column 0 */
}

static inline void compute_row(struct stencil *s, long i)
{
    double *cur = s->a + (size_t)i * (size_t)s->w, *prev = cur - s->w;
    for (long jl = s->rank == 0 ? 2 : 1; jl < s->w; jl++)
        cur[jl] = prev[jl] + cur[jl - 1] - prev[jl - 1];
}

static inline double corner_out(struct stencil *s) { return -A(s, s->m - 1, s->w - 1); }

/* ---- window operations of both libraries --------------------------------- */

static void w_post(struct stencil *s, MPI_Group g)
{
    if (s->narma)
        NARMA_CHECK(NARMA_Win_post(g, 0, s->nwin));
    else
        MPI_CHECK(MPI_Win_post(g, 0, s->mwin));
}
static void w_start(struct stencil *s, MPI_Group g)
{
    if (s->narma)
        NARMA_CHECK(NARMA_Win_start(g, 0, s->nwin));
    else
        MPI_CHECK(MPI_Win_start(g, 0, s->mwin));
}
static void w_complete(struct stencil *s)
{
    if (s->narma)
        NARMA_CHECK(NARMA_Win_complete(s->nwin));
    else
        MPI_CHECK(MPI_Win_complete(s->mwin));
}
static void w_wait(struct stencil *s)
{
    if (s->narma)
        NARMA_CHECK(NARMA_Win_wait(s->nwin));
    else
        MPI_CHECK(MPI_Win_wait(s->mwin));
}
static void w_fence(struct stencil *s, int assert)
{
    if (s->narma)
        NARMA_CHECK(NARMA_Win_fence(assert, s->nwin));
    else
        MPI_CHECK(MPI_Win_fence(assert, s->mwin));
}
static void w_put(struct stencil *s, const double *v, int target, MPI_Aint disp)
{
    if (s->narma)
        NARMA_CHECK(NARMA_Put(v, 1, MPI_DOUBLE, target, disp, 1, MPI_DOUBLE, s->nwin));
    else
        MPI_CHECK(MPI_Put(v, 1, MPI_DOUBLE, target, disp, 1, MPI_DOUBLE, s->mwin));
}

/* ---- one iteration per scheme ---------------------------------------------- */

static void iter_sendrecv(struct stencil *s)
{
    for (long i = 1; i < s->m; i++) {
        if (s->left >= 0)
            MPI_CHECK(MPI_Recv(&A(s, i, 0), 1, MPI_DOUBLE, s->left, TAG_ROW, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        compute_row(s, i);
        if (s->right >= 0)
            MPI_CHECK(
                MPI_Send(&A(s, i, s->w - 1), 1, MPI_DOUBLE, s->right, TAG_ROW, MPI_COMM_WORLD));
    }
    if (s->np == 1) {
        A(s, 0, 1) = corner_out(s);
        return;
    }
    if (s->rank == s->last) {
        double v = corner_out(s);
        MPI_CHECK(MPI_Send(&v, 1, MPI_DOUBLE, 0, TAG_CORNER, MPI_COMM_WORLD));
    }
    if (s->rank == 0)
        MPI_CHECK(MPI_Recv(&A(s, 0, 1), 1, MPI_DOUBLE, s->last, TAG_CORNER, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
}

/* Exposure epochs: rank 0 exposes to the last rank (corner) for the whole
 * iteration; every other rank exposes to its left neighbour one row at a time
 * and re-posts for row i+1 as soon as row i has arrived, so the neighbour's
 * start rarely waits. No epoch is left open at the end of an iteration. */
static void iter_pscw(struct stencil *s)
{
    if (s->np == 1) {
        for (long i = 1; i < s->m; i++)
            compute_row(s, i);
        A(s, 0, 1) = corner_out(s);
        return;
    }
    if (s->rank == 0) w_post(s, s->g_last);
    if (s->left >= 0) w_post(s, s->g_left);
    for (long i = 1; i < s->m; i++) {
        if (s->left >= 0) {
            w_wait(s);
            if (i < s->m - 1) w_post(s, s->g_left);
        }
        compute_row(s, i);
        if (s->right >= 0) {
            w_start(s, s->g_right);
            w_put(s, &A(s, i, s->w - 1), s->right, (MPI_Aint)(i * s->wright));
            w_complete(s);
        }
    }
    if (s->rank == s->last) {
        double v = corner_out(s);
        w_start(s, s->g_zero);
        w_put(s, &v, 0, 1);
        w_complete(s);
    }
    if (s->rank == 0) w_wait(s);
}

/* Wavefront under fences: at step t rank r works on row t-r+1, whose ghost
 * value its left neighbour put at step t-1. The epoch is open on entry (see
 * run_scheme) and stays open on return. */
static void iter_fence(struct stencil *s)
{
    long steps = (s->m - 1) + (s->np - 1);
    for (long t = 0; t < steps; t++) {
        long i = t - s->rank + 1;
        if (i >= 1 && i < s->m) {
            compute_row(s, i);
            if (s->right >= 0) w_put(s, &A(s, i, s->w - 1), s->right, (MPI_Aint)(i * s->wright));
        }
        w_fence(s, 0);
    }
    if (s->np == 1) {
        A(s, 0, 1) = corner_out(s);
        return;
    }
    double v = corner_out(s);
    if (s->rank == s->last) w_put(s, &v, 0, 1);
    w_fence(s, 0);
}

static void iter_notify(struct stencil *s)
{
    for (long i = 1; i < s->m; i++) {
        if (s->left >= 0) {
            NARMA_CHECK(NARMA_Start(&s->rows[i]));
            NARMA_CHECK(NARMA_Wait(&s->rows[i], MPI_STATUS_IGNORE));
        }
        compute_row(s, i);
        if (s->right >= 0) {
            double v = A(s, i, s->w - 1); /* origin buffers may be reused on return */
            NARMA_CHECK(NARMA_Put_notify(&v, 1, MPI_DOUBLE, s->right, (MPI_Aint)(i * s->wright), 1,
                                         MPI_DOUBLE, s->nwin, (int)i));
        }
    }
    if (s->np == 1) {
        A(s, 0, 1) = corner_out(s);
        return;
    }
    if (s->rank == s->last) {
        double v = corner_out(s);
        NARMA_CHECK(NARMA_Put_notify(&v, 1, MPI_DOUBLE, 0, 1, 1, MPI_DOUBLE, s->nwin, NTAG_CORNER));
    }
    if (s->rank == 0) {
        NARMA_CHECK(NARMA_Start(&s->corner));
        NARMA_CHECK(NARMA_Wait(&s->corner, MPI_STATUS_IGNORE));
    }
}

static void iterate(struct stencil *s)
{
    switch (s->id) {
    case S_SENDRECV:
        iter_sendrecv(s);
        break;
    case S_MPI_PSCW:
    case S_NARMA_PSCW:
        iter_pscw(s);
        break;
    case S_MPI_FENCE:
    case S_NARMA_FENCE:
        iter_fence(s);
        break;
    case S_NOTIFY:
        iter_notify(s);
        break;
    }
}

/* ---- set-up and one timed run -------------------------------------------- */

static MPI_Group group_of(int rank)
{
    MPI_Group world, g;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    if (rank >= 0)
        MPI_CHECK(MPI_Group_incl(world, 1, &rank, &g));
    else
        g = MPI_GROUP_EMPTY;
    MPI_CHECK(MPI_Group_free(&world));
    return g;
}

static void setup(struct stencil *s, int id, const struct options *o)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    s->narma = id == S_NARMA_PSCW || id == S_NARMA_FENCE || id == S_NOTIFY;
    s->m = o->m;
    s->n = o->n;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &s->rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &s->np));
    s->left = s->rank > 0 ? s->rank - 1 : -1;
    s->right = s->rank < s->np - 1 ? s->rank + 1 : -1;
    s->last = s->np - 1;
    columns(s->n, s->np, s->rank, &s->jstart, &s->jend);
    s->w = s->jend - s->jstart + 2;
    if (s->right >= 0) {
        long js, je;
        columns(s->n, s->np, s->right, &js, &je);
        s->wright = je - js + 2;
    }
    MPI_Aint bytes = (MPI_Aint)((size_t)s->m * (size_t)s->w * sizeof(double));
    if (id == S_SENDRECV)
        s->a = bench_alloc((size_t)bytes);
    else if (s->narma)
        NARMA_CHECK(NARMA_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &s->a,
                                       &s->nwin));
    else
        MPI_CHECK(MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &s->a,
                                   &s->mwin));
    s->g_left = group_of(s->left);
    s->g_right = group_of(s->right);
    s->g_zero = group_of(0);
    s->g_last = group_of(s->last);
    s->corner = NARMA_REQUEST_NULL;
    if (id == S_NOTIFY) {
        s->rows = calloc((size_t)s->m, sizeof *s->rows);
        if (!s->rows) bench_die(BENCH_HERE, "out of memory");
        if (s->left >= 0)
            for (long i = 1; i < s->m; i++)
                NARMA_CHECK(NARMA_Notify_init(s->nwin, s->left, (int)i, 1, &s->rows[i]));
        if (s->rank == 0 && s->np > 1)
            NARMA_CHECK(NARMA_Notify_init(s->nwin, s->last, NTAG_CORNER, 1, &s->corner));
    }
}

static void teardown(struct stencil *s)
{
    if (s->rows) {
        for (long i = 1; i < s->m; i++)
            if (s->rows[i] != NARMA_REQUEST_NULL) NARMA_CHECK(NARMA_Request_free(&s->rows[i]));
        free(s->rows);
    }
    if (s->corner != NARMA_REQUEST_NULL) NARMA_CHECK(NARMA_Request_free(&s->corner));
    MPI_Group *gs[] = {&s->g_left, &s->g_right, &s->g_zero, &s->g_last};
    for (size_t k = 0; k < sizeof gs / sizeof *gs; k++)
        if (*gs[k] != MPI_GROUP_EMPTY) MPI_CHECK(MPI_Group_free(gs[k]));
    if (s->id == S_SENDRECV)
        free(s->a);
    else if (s->narma)
        NARMA_CHECK(NARMA_Win_free(&s->nwin));
    else
        MPI_CHECK(MPI_Win_free(&s->mwin));
}

/* Fresh grid, one warm-up iteration, `iters` timed ones. Returns the slowest
 * rank's time for the timed ones; *bad is set (on every rank) when the
 * corner does not validate. */
static double run_scheme(struct stencil *s, long iters, int *bad)
{
    int fence = s->id == S_MPI_FENCE || s->id == S_NARMA_FENCE;
    init_grid(s);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (fence) w_fence(s, 0); /* opens the epoch the wavefront runs in */
    iterate(s);               /* warm-up, PRK's iteration 0 */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = bench_now();
    for (long k = 0; k < iters; k++)
        iterate(s);
    double t = bench_now() - t0, tmax;
    MPI_CHECK(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (fence) w_fence(s, MPI_MODE_NOSUCCEED);

    int wrong = 0;
    if (s->rank == s->last) {
        double ref = (double)(iters + 1) * (double)(s->m + s->n - 2);
        double got = A(s, s->m - 1, s->w - 1);
        if (fabs(got - ref) > 1e-8 * fabs(ref)) {
            fprintf(stderr,
                    "\n!!! " PROG ": VALIDATION FAILED: %s: A(m-1,n-1) = %.17g, expected %.17g\n",
                    scheme_names[s->id], got, ref);
            wrong = 1;
        }
    }
    *bad = bench_any(wrong, MPI_COMM_WORLD);
    return tmax;
}

/* ---- options and main ------------------------------------------------------ */

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.c = {.iters = 10, .reps = 5, .timeout = 120}, .m = 1000, .n = 1000};
    const struct bench_opt own[] = {
        {"m", BENCH_OPT_LONG, &o->m, 2, "grid rows (default 1000)"},
        {"n", BENCH_OPT_LONG, &o->n, 2, "grid columns, split across ranks (default 1000)"},
    };
    const struct bench_spec spec = {
        .prog = PROG,
        .usage = "mpiexec -n N " PROG " [options]  (--iters: timed iterations after one warm-up)",
        .uses = BENCH_USE_REPS | BENCH_USE_ITERS | BENCH_USE_SCHEMES | BENCH_USE_TIMEOUT,
        .schemes = scheme_names,
        .nschemes = S_COUNT,
        .opts = own,
        .nopts = 2,
        .quick_reps = 2,
        .quick_iters = 3,
    };
    int rc = bench_parse(argc, argv, &spec, &o->c);
    if (rc == 0 && o->c.quick && o->m == 1000 && o->n == 1000) o->m = o->n = 200;
    if (rc == 0 && o->m - 1 > NARMA_TAG_UB)
        rc = bench_error(PROG ": --m must be at most %d", NARMA_TAG_UB + 1);
    return rc;
}

/* One block of the interleaved run: one warm-up and --iters timed iterations of scheme s. */
struct stencil_run {
    struct stencil *st;
    long iters;
};

static double stencil_block(void *ctx, int s, int z, int rep, int *bad)
{
    struct stencil_run *r = ctx;
    (void)z, (void)rep;
    return run_scheme(&r->st[s], r->iters, bad) / (double)r->iters; /* seconds per iteration */
}

int main(int argc, char **argv)
{
    NARMA_CHECK(NARMA_Init(&argc, &argv));
    int rank, np;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    struct options o;
    int bad = parse_options(argc, argv, &o);
    if (!bad && o.n < np) {
        if (rank == 0) fprintf(stderr, PROG ": --n (%ld) must be >= the ranks (%d)\n", o.n, np);
        bad = 1;
    }
    if (bad) return bench_stop(bad);

    bench_print_header("narma " PROG ": pipelined stencil (PRK Synch_p2p), paper section VI-A",
                       MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# grid            : %ld x %ld (columns split over %d ranks), %ld timed iterations "
               "+ 1 warm-up, %d interleaved repetitions\n",
               o.m, o.n, np, o.c.iters, o.c.reps);
        printf("# rate            : 2*(m-1)*(n-1) flops per iteration / slowest rank's time\n");
        bench_print_schemes(scheme_names, o.c.selected, S_COUNT);
        fflush(stdout);
    }
    if (rank == 0) bench_csv_open(o.c.csv);

    struct stencil st[S_COUNT];
    enum bench_status status[S_COUNT];
    for (int s = 0; s < S_COUNT; s++) {
        status[s] = o.c.selected[s] ? BENCH_READY : BENCH_OFF;
        if (o.c.selected[s]) {
            bench_watchdog(o.c.timeout, PROG, "set-up", scheme_names[s], (size_t)o.n, -1);
            setup(&st[s], s, &o);
        }
    }
    double *rate = malloc((size_t)S_COUNT * (size_t)o.c.reps * sizeof *rate);
    double *secs = malloc((size_t)S_COUNT * (size_t)o.c.reps * sizeof *secs);
    if (!rate || !secs) bench_die(BENCH_HERE, "out of memory");
    for (int i = 0; i < S_COUNT * o.c.reps; i++)
        rate[i] = secs[i] = NAN;
    double flops = 2.0 * (double)(o.m - 1) * (double)(o.n - 1);
    struct stencil_run sr = {.st = st, .iters = o.c.iters};
    const struct bench_run run = bench_run_of(PROG, &o.c, scheme_names, S_COUNT, 0, MPI_COMM_WORLD);
    bench_interleave(&run, status, stencil_block, &sr, secs);
    for (int i = 0; i < S_COUNT * o.c.reps; i++)
        rate[i] = 1e-6 * flops / secs[i];

    int failed = bench_failed(status, S_COUNT);
    if (rank == 0) {
        printf("\n# Rates: median over repetitions; ratio = median of per-repetition ratios\n");
        printf("# %-14s %14s %16s %12s %18s\n", "Scheme", "MFlops/s", "Avg time (s)", "max/min",
               "ratio_to_sendrecv");
        for (int s = 0; s < S_COUNT; s++) {
            if (status[s] == BENCH_OFF) continue;
            if (status[s] == BENCH_FAILED) {
                printf("%-16s %14s\n", scheme_names[s], "FAILED");
                continue;
            }
            double *r = rate + s * o.c.reps;
            double mn, mx, ratio = NAN;
            bench_minmax(r, (size_t)o.c.reps, &mn, &mx);
            if (status[S_SENDRECV] == BENCH_READY) {
                double q[o.c.reps];
                for (int i = 0; i < o.c.reps; i++)
                    q[i] = r[i] / rate[S_SENDRECV * o.c.reps + i];
                ratio = bench_rep_median(q, NULL, o.c.reps);
            }
            double mr = bench_rep_median(r, NULL, o.c.reps),
                   ms = bench_rep_median(secs + s * o.c.reps, NULL, o.c.reps);
            printf("%-16s %14.2f %16.6e %12.3f %18.3f\n", scheme_names[s], mr, ms, mx / mn, ratio);
            bench_csv_row(PROG, scheme_names[s], (size_t)o.n, "mflops", mr);
            bench_csv_row(PROG, scheme_names[s], (size_t)o.n, "avg_time_s", ms);
            bench_csv_row(PROG, scheme_names[s], (size_t)o.n, "spread", mx / mn);
            if (!isnan(ratio))
                bench_csv_row(PROG, scheme_names[s], (size_t)o.n, "ratio_to_sendrecv", ratio);
        }
        if (failed) {
            printf("\nERROR: solution does not validate (see stderr)\n");
        } else {
            printf("\nSolution validates\n");
            for (int s = 0; s < S_COUNT; s++)
                if (status[s] == BENCH_READY)
                    printf("Rate (MFlops/s) %-14s: %.2f  Avg time (s): %.6e\n", scheme_names[s],
                           bench_rep_median(rate + s * o.c.reps, NULL, o.c.reps),
                           bench_rep_median(secs + s * o.c.reps, NULL, o.c.reps));
        }
        if (status[S_NOTIFY] == BENCH_READY && status[S_SENDRECV] == BENCH_READY) {
            double q[o.c.reps];
            for (int i = 0; i < o.c.reps; i++)
                q[i] = rate[S_NOTIFY * o.c.reps + i] / rate[S_SENDRECV * o.c.reps + i];
            printf("# SUMMARY stencil narma_notify/mpi_sendrecv=%.2f (target >= 1.5)\n",
                   bench_rep_median(q, NULL, o.c.reps));
        }
        fflush(stdout);
    }
    for (int s = 0; s < S_COUNT; s++)
        if (status[s] != BENCH_OFF) teardown(&st[s]);
    bench_csv_close();
    free(rate);
    free(secs);
    NARMA_CHECK(NARMA_Finalize());
    return failed ? 1 : 0;
}
