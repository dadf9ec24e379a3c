/*
 * bench/lu: LU decomposition with generalised active target (PSCW) epochs
 * (nonblocking RMA synchronisation paper, section VIII-B), a self-validating
 * PRK-style kernel.
 *
 * A (n x n, diagonally dominant, so no pivoting) is factorised in place into
 * unit-lower L and upper U. Rows are mapped cyclically (row i on rank i % P).
 * At step k every rank eliminates column k from its rows i > k with pivot row
 * k, which its owner puts (U part, columns k..n-1) into slot k%2 of every
 * other rank's window inside an access epoch (start/put/complete to all
 * others) while the others expose their window to that owner (post/wait).
 * Receivers post one step early, so posts are never late. As in the paper,
 * the owner overlaps its own step-k update with the epoch; the schemes differ
 * only in how the epoch closes:
 *
 *   narma_blocking     NARMA_Win_start, puts, local update, NARMA_Win_complete:
 *                      the paper's blocking series; overlapping inside the
 *                      epoch makes it suffer Late Complete (the receivers'
 *                      NARMA_Win_wait returns only after the owner's update).
 *   narma_eager        NARMA_Win_start, puts, NARMA_Win_complete at once, then
 *                      the update: blocking without Late Complete (it pays the
 *                      transfer instead). Not in the paper; the honest baseline.
 *   narma_nonblocking  NARMA_Win_istart, puts, NARMA_Win_icomplete, then the
 *                      update; the request is tested each step and waited for
 *                      two broadcasts later or at the end. Receivers ipost and
 *                      iwait one step early and NARMA_Wait on the iwait request
 *                      when they need the row.
 *
 * --lookahead changes the algorithm: the owner of row k+1 finishes that row
 * first at step k and broadcasts it before its other step-k updates, so the
 * overlapped update runs while the receivers do their own step-k work.
 *
 * Rate: 2n^3/3 flops over the slowest rank's time. Validation: rank 0 gathers
 * the factors and checks ||A - LU||_F / ||A||_F against --tol.
 */
#include <stdint.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define BENCH "lu"

enum { S_BLOCKING, S_EAGER, S_NONBLOCKING, S_COUNT };
static const char *const scheme_names[S_COUNT] = {"narma_blocking", "narma_eager",
                                                  "narma_nonblocking"};

struct options {
    struct bench_common c; /* --reps, --iters, --sizes, --schemes, --csv, ... */
    int n, lookahead;
    double tol;
};

struct lu {
    MPI_Comm comm;
    int rank, size, n, nloc;
    double *a;     /* nloc rows of n: local row l is global row l*P + rank */
    double *slots; /* window: 2 pivot rows of n */
    NARMA_Win win;
    MPI_Group others;      /* everybody but me (access epochs) */
    MPI_Group *single;     /* [P]: {r} (exposure epochs to row owners) */
    NARMA_Request wreq[2]; /* nonblocking: exposure epoch of slot s */
    NARMA_Request creq[2]; /* nonblocking: access epochs in flight */
};

static inline int owner(const struct lu *s, int i) { return i % s->size; }
static inline double *row(struct lu *s, int i) { return s->a + (size_t)(i / s->size) * s->n; }

static inline double a_elem(int n, int r, int c)
{
    double v = bench_uniform((uint64_t)r * (uint64_t)n + (uint64_t)c + 7);
    return r == c ? v + n : v;
}

static void lu_setup(struct lu *s, MPI_Comm comm, int n)
{
    memset(s, 0, sizeof *s);
    s->comm = comm;
    MPI_CHECK(MPI_Comm_rank(comm, &s->rank));
    MPI_CHECK(MPI_Comm_size(comm, &s->size));
    s->n = n;
    s->nloc = (n - s->rank + s->size - 1) / s->size;
    s->a = bench_alloc((size_t)(s->nloc ? s->nloc : 1) * n * sizeof(double));
    NARMA_CHECK(NARMA_Win_allocate((MPI_Aint)(2 * (size_t)n * sizeof(double)), sizeof(double),
                                   MPI_INFO_NULL, comm, &s->slots, &s->win));
    MPI_Group g;
    MPI_CHECK(MPI_Comm_group(comm, &g));
    MPI_CHECK(MPI_Group_excl(g, 1, &s->rank, &s->others));
    s->single = malloc((size_t)s->size * sizeof *s->single);
    if (!s->single) bench_die(BENCH_HERE, "out of memory");
    for (int r = 0; r < s->size; r++)
        MPI_CHECK(MPI_Group_incl(g, 1, &r, &s->single[r]));
    MPI_CHECK(MPI_Group_free(&g));
}

static void lu_teardown(struct lu *s)
{
    NARMA_CHECK(NARMA_Win_free(&s->win));
    MPI_CHECK(MPI_Group_free(&s->others));
    for (int r = 0; r < s->size; r++)
        MPI_CHECK(MPI_Group_free(&s->single[r]));
    free(s->single);
    free(s->a);
}

static void lu_fill(struct lu *s)
{
    for (int i = s->rank; i < s->n; i += s->size)
        for (int j = 0; j < s->n; j++)
            row(s, i)[j] = a_elem(s->n, i, j);
}

/* ---- epochs ------------------------------------------------------------ */

/* Receivers: expose slot k%2 to the owner of row k. */
static void expose(struct lu *s, int scheme, int k)
{
    if (scheme == S_NONBLOCKING) {
        NARMA_Request r;
        NARMA_CHECK(NARMA_Win_ipost(s->single[owner(s, k)], 0, s->win, &r));
        NARMA_CHECK(NARMA_Wait(&r, MPI_STATUS_IGNORE)); /* epoch-opening requests are complete */
        NARMA_CHECK(NARMA_Win_iwait(s->win, &s->wreq[k % 2]));
    } else {
        NARMA_CHECK(NARMA_Win_post(s->single[owner(s, k)], 0, s->win));
    }
}

/* Receivers: row k has arrived once this returns. */
static const double *receive(struct lu *s, int scheme, int k)
{
    if (scheme == S_NONBLOCKING)
        NARMA_CHECK(NARMA_Wait(&s->wreq[k % 2], MPI_STATUS_IGNORE));
    else
        NARMA_CHECK(NARMA_Win_wait(s->win));
    return s->slots + (size_t)(k % 2) * s->n;
}

/* Owner of row k: put its U part (columns k..n-1) into every other rank's slot k%2.
 * Leaves the access epoch open for narma_blocking (closed by close_late). */
static void broadcast(struct lu *s, int scheme, int k)
{
    const double *src = row(s, k) + k;
    int cnt = s->n - k;
    MPI_Aint disp = (MPI_Aint)(k % 2) * s->n + k;
    if (scheme == S_NONBLOCKING) {
        NARMA_Request *c = &s->creq[k % 2];
        if (*c != NARMA_REQUEST_NULL)
            NARMA_CHECK(NARMA_Wait(c, MPI_STATUS_IGNORE)); /* 2 in flight at most */
        NARMA_Request r;
        NARMA_CHECK(NARMA_Win_istart(s->others, 0, s->win, &r));
        NARMA_CHECK(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        NARMA_CHECK(NARMA_Win_start(s->others, 0, s->win));
    }
    for (int d = 1; d < s->size; d++)
        NARMA_CHECK(NARMA_Put(src, cnt, MPI_DOUBLE, (s->rank + d) % s->size, disp, cnt, MPI_DOUBLE,
                              s->win));
    if (scheme == S_NONBLOCKING)
        NARMA_CHECK(NARMA_Win_icomplete(s->win, &s->creq[k % 2]));
    else if (scheme == S_EAGER)
        NARMA_CHECK(NARMA_Win_complete(s->win));
}

static void poll_pending(struct lu *s)
{
    for (int i = 0; i < 2; i++)
        if (s->creq[i] != NARMA_REQUEST_NULL) {
            int flag;
            NARMA_CHECK(NARMA_Test(&s->creq[i], &flag, MPI_STATUS_IGNORE));
        }
}

/* ---- the factorisation ------------------------------------------------- */

static inline void eliminate(double *r, const double *p, int k, int n)
{
    double l = r[k] / p[k];
    r[k] = l;
    for (int j = k + 1; j < n; j++)
        r[j] -= l * p[j];
}

static void factorise(struct lu *s, int scheme, int lookahead)
{
    const int n = s->n, me = s->rank, P = s->size;
    const int last = n - 2; /* rows 0..n-2 are pivots for someone */
    if (P > 1 && last >= 0) {
        if (owner(s, 0) != me)
            expose(s, scheme, 0);
        else if (lookahead) {
            broadcast(s, scheme, 0);
            if (scheme == S_BLOCKING) NARMA_CHECK(NARMA_Win_complete(s->win));
        }
    }
    for (int k = 0; k <= last; k++) {
        int mine = owner(s, k) == me, next_mine = owner(s, k + 1) == me;
        /* without look-ahead, row k was finished last step and goes out now */
        int bcast_k = !lookahead && P > 1 && mine;
        if (bcast_k) broadcast(s, scheme, k);
        const double *p = mine ? row(s, k) : receive(s, scheme, k);
        if (P > 1 && k + 1 <= last && !next_mine) expose(s, scheme, k + 1);
        if (scheme == S_NONBLOCKING) poll_pending(s);
        int bcast_next = lookahead && P > 1 && k + 1 <= last && next_mine;
        if (lookahead && next_mine) {
            eliminate(row(s, k + 1), p, k, n); /* look-ahead */
            if (bcast_next) broadcast(s, scheme, k + 1);
        }
        int from = lookahead ? k + 2 : k + 1; /* first row left to update, then my first one */
        for (int i = from + ((me - from) % P + P) % P; i < n; i += P)
            eliminate(row(s, i), p, k, n);
        if ((bcast_k || bcast_next) && scheme == S_BLOCKING)
            NARMA_CHECK(NARMA_Win_complete(s->win)); /* late: after the overlapped update */
    }
    if (scheme == S_NONBLOCKING)
        for (int i = 0; i < 2; i++)
            if (s->creq[i] != NARMA_REQUEST_NULL)
                NARMA_CHECK(NARMA_Wait(&s->creq[i], MPI_STATUS_IGNORE));
}

/* ---- validation -------------------------------------------------------- */

/* Rank 0 gathers the factors and returns ||A - LU||_F / ||A||_F; others return 0. */
static double residual(struct lu *s)
{
    const int n = s->n;
    double *F = NULL;
    if (s->rank == 0) F = bench_alloc((size_t)n * n * sizeof(double));
    for (int i = 0; i < n; i++) {
        int o = owner(s, i);
        if (s->rank == 0) {
            if (o == 0)
                memcpy(F + (size_t)i * n, row(s, i), (size_t)n * sizeof(double));
            else
                MPI_CHECK(
                    MPI_Recv(F + (size_t)i * n, n, MPI_DOUBLE, o, 0, s->comm, MPI_STATUS_IGNORE));
        } else if (o == s->rank) {
            MPI_CHECK(MPI_Send(row(s, i), n, MPI_DOUBLE, 0, 0, s->comm));
        }
    }
    if (s->rank != 0) return 0;
    double num = 0, den = 0;
    double *acc = bench_alloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) {
        /* row i of LU = U_i. + sum_{k<i} L_ik U_k. */
        const double *Fi = F + (size_t)i * n;
        for (int j = 0; j < n; j++)
            acc[j] = j >= i ? Fi[j] : 0.0;
        for (int k = 0; k < i; k++) {
            double l = Fi[k];
            const double *Uk = F + (size_t)k * n;
            for (int j = k; j < n; j++)
                acc[j] += l * Uk[j];
        }
        for (int j = 0; j < n; j++) {
            double a = a_elem(n, i, j), e = a - acc[j];
            num += e * e;
            den += a * a;
        }
    }
    free(acc);
    free(F);
    return sqrt(num / den);
}

/* ---- driver ------------------------------------------------------------ */

static int parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.c = {.reps = 21, .timeout = 60}, .n = 384, .tol = 1e-12};
    const struct bench_opt own[] = {
        {"n", BENCH_OPT_INT, &o->n, 1, "matrix order (default 384)"},
        {"tol", BENCH_OPT_DOUBLE, &o->tol, 0,
         "validation tolerance on ||A-LU||/||A|| (default 1e-12)"},
        {"lookahead", BENCH_OPT_FLAG, &o->lookahead, 0,
         "owner of row k+1 finishes and sends it before its other updates"},
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
    return rc;
}

/* One block of the interleaved run: fill, factorise, time (slowest rank), validate. */
struct lu_run {
    struct lu *s;
    const struct options *o;
    double flops, worst[S_COUNT]; /* worst residual per scheme */
    int rank;
};

static double lu_block(void *ctx, int sc, int z, int rep, int *bad)
{
    struct lu_run *l = ctx;
    (void)z;
    lu_fill(l->s);
    MPI_CHECK(MPI_Barrier(l->s->comm));
    double t0 = bench_now();
    factorise(l->s, sc, l->o->lookahead);
    double dt = bench_now() - t0;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, l->s->comm));
    double res = residual(l->s);
    MPI_CHECK(MPI_Bcast(&res, 1, MPI_DOUBLE, 0, l->s->comm));
    if (res > l->worst[sc] || isnan(res)) l->worst[sc] = res;
    if (!(res <= l->o->tol)) {
        *bad = 1;
        if (l->rank == 0)
            fprintf(stderr,
                    "\n!!! " BENCH ": VALIDATION FAILED: %s repetition %d: "
                    "||A-LU||/||A|| = %.3e > %.1e\n",
                    scheme_names[sc], rep, res, l->o->tol);
    }
    return l->flops / dt / 1e9;
}

int main(int argc, char **argv)
{
    NARMA_CHECK(NARMA_Init(&argc, &argv));
    int rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    struct options o;
    int rc = parse(argc, argv, &o);
    if (rc) return bench_stop(rc);
    bench_print_header("narma lu: 1-D row-cyclic LU with PSCW pivot-row broadcasts "
                       "(nonblocking-RMA paper VIII-B)",
                       MPI_COMM_WORLD);
    struct lu s;
    lu_setup(&s, MPI_COMM_WORLD, o.n);
    if (rank == 0) {
        printf("# matrix order %d, no pivoting (diagonally dominant); %s;\n"
               "# repetitions %d, schemes interleaved (order rotated per repetition); "
               "rate = (2n^3/3) / slowest rank's time; every repetition validated\n",
               o.n, o.lookahead ? "look-ahead of one row" : "no look-ahead (as in the paper)",
               o.c.reps);
        fflush(stdout);
        bench_csv_open(o.c.csv);
    }
    int ids[S_COUNT], ns = 0;
    for (int i = 0; i < S_COUNT; i++)
        if (o.c.selected[i]) ids[ns++] = i;
    double *gf = malloc((size_t)S_COUNT * o.c.reps * sizeof *gf);
    if (!gf) bench_die(BENCH_HERE, "out of memory");
    for (int i = 0; i < S_COUNT * o.c.reps; i++)
        gf[i] = NAN;
    const double flops = 2.0 * o.n * (double)o.n * o.n / 3.0;
    struct lu_run lr = {.s = &s, .o = &o, .flops = flops, .rank = rank};
    const struct bench_run run = bench_run_of(BENCH, &o.c, scheme_names, S_COUNT, 0, s.comm);
    enum bench_status status[S_COUNT];
    bench_status_init(status, o.c.selected, S_COUNT);
    bench_interleave(&run, status, lu_block, &lr, gf);
    int failed = bench_failed(status, S_COUNT);
    const double *worst = lr.worst;

    if (rank == 0) {
        printf("\n# %-18s %12s %12s %10s %14s\n", "Scheme", "GFlop/s", "time (ms)", "spread",
               "max residual");
        for (int k = 0; k < ns; k++) {
            int sc = ids[k];
            double v = bench_rep_median(&gf[sc * o.c.reps], NULL, o.c.reps);
            printf("  %-18s %12.3f %12.3f %10.2f %14.3e\n", scheme_names[sc], v, flops / v / 1e6,
                   bench_spread(&gf[sc * o.c.reps], o.c.reps), worst[sc]);
            bench_csv_row(BENCH, scheme_names[sc], (size_t)o.n, "gflops", v);
            bench_csv_row(BENCH, scheme_names[sc], (size_t)o.n, "residual", worst[sc]);
        }
        static const struct bench_pair pairs[] = {
            {S_NONBLOCKING, S_BLOCKING}, {S_NONBLOCKING, S_EAGER}, {S_EAGER, S_BLOCKING}};
        bench_print_pairs(BENCH, "Rate ratios", scheme_names, o.c.selected, pairs,
                          (int)(sizeof pairs / sizeof *pairs), gf, o.c.reps, (size_t)o.n);
        printf(failed ? "\nERROR: solution does not validate\n" : "\nSolution validates\n");
        fflush(stdout);
        bench_csv_close();
    }
    lu_teardown(&s);
    free(gf);
    NARMA_CHECK(NARMA_Finalize());
    return failed;
}
