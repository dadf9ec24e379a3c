/*
 * bench/tree: the hierarchical tree computation of the Notified Access paper
 * (section VI-B): a 16-ary tree over all ranks (parent of r is (r-1)/16)
 * reduces a vector of doubles to rank 0, each rank adding its children's
 * partial sums to its own before passing the result up.
 *
 * Schemes:
 *   mpi_reduce    MPI_Reduce(MPI_SUM) to rank 0 (the vendor's collective)
 *   mpi_sendrecv  the tree with MPI_Irecv from every child, MPI_Send up
 *   narma_pscw    the tree with NARMA_Win_post/wait for the children,
 *                 NARMA_Win_start/Put/complete to the parent
 *   narma_notify  the tree with NARMA_Put_notify into the parent's slot for
 *                 this child; the parent waits for all its children with one
 *                 counting request, NARMA_Notify_init(win, ANY_SOURCE, tag,
 *                 nchildren), started each time
 *
 * Each reduction is one iteration: a barrier (untimed, as OSU's collective
 * benchmarks do), then the reduction timed on rank 0 from its barrier exit to
 * the result. The barrier also makes slot reuse safe: a child writes its slot
 * for reduction k+1 only after the parent has summed reduction k. Rank 0
 * checks every result: rank r contributes r + 1 + 7*k + j at element j of
 * reduction k, so the sum is np(np+1)/2 + np*(7k + j), exact in doubles.
 *
 * A block is a scheme's run of iterations at one size (untimed warm-up first);
 * its figure is the median over iterations. Each repetition runs every size
 * and, per size, every scheme once in a rotated order; tables give medians
 * over repetitions and speedups as medians of per-repetition ratios.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "harness.h"

#define PROG      "tree"
#define ARITY     16 /* default; --arity changes it (deeper trees on few ranks) */
#define MAX_ARITY 64
#define NTAG      17 /* notification tag of child contributions */
#define MTAG      17 /* MPI tag of mpi_sendrecv */

enum scheme_id { S_REDUCE, S_SENDRECV, S_NARMA_PSCW, S_NOTIFY, S_COUNT };

static const char *const scheme_names[S_COUNT] = {
    [S_REDUCE] = "mpi_reduce",
    [S_SENDRECV] = "mpi_sendrecv",
    [S_NARMA_PSCW] = "narma_pscw",
    [S_NOTIFY] = "narma_notify",
};

struct options {
    struct bench_common c; /* --reps, --iters, --sizes, --schemes, --csv, ... */
    int arity;
};

/* The tree around this rank, and one scheme's objects. */
struct tree {
    int id, rank, np, arity;
    int parent, slot;      /* parent rank (-1 at the root), my slot in the parent's window */
    int child0, nchildren; /* children are child0 .. child0+nchildren-1 */
    size_t max_count;      /* doubles per contribution, largest size */
    double *mine, *acc;    /* my contribution; my partial sum (the result at the root) */
    double *slots;         /* arity contributions of max_count doubles (window memory) */
    NARMA_Win win;
    MPI_Group g_parent, g_children;
    NARMA_Request children; /* narma_notify: counting request */
    MPI_Request *reqs;      /* mpi_sendrecv */
};

static double value(int rank, long k, size_t j)
{
    return (double)(rank + 1) + 7.0 * (double)(k % 1000) + (double)j;
}

static void fill(struct tree *t, size_t count, long k)
{
    for (size_t j = 0; j < count; j++)
        t->mine[j] = value(t->rank, k, j);
}

/* 1 (after printing) when the root's result of reduction k is wrong. */
static int check(const struct tree *t, size_t count, long k)
{
    double np = (double)t->np;
    for (size_t j = 0; j < count; j++) {
        double want = np * (np + 1) / 2 + np * (7.0 * (double)(k % 1000) + (double)j);
        if (t->acc[j] != want) {
            fprintf(stderr,
                    "\n!!! " PROG ": VALIDATION FAILED: %s, %zu B, reduction %ld: element %zu is "
                    "%.17g, expected %.17g\n",
                    scheme_names[t->id], count * sizeof(double), k, j, t->acc[j], want);
            return 1;
        }
    }
    return 0;
}

static void add_children(struct tree *t, size_t count)
{
    for (int c = 0; c < t->nchildren; c++) {
        const double *in = t->slots + (size_t)c * t->max_count;
        for (size_t j = 0; j < count; j++)
            t->acc[j] += in[j];
    }
}

/* One reduction of `count` doubles; on return t->acc holds the result at the root. */
static void reduce(struct tree *t, size_t count)
{
    int n = (int)count;
    switch (t->id) {
    case S_REDUCE:
        MPI_CHECK(MPI_Reduce(t->mine, t->acc, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
        return;
    case S_SENDRECV:
        for (int c = 0; c < t->nchildren; c++)
            MPI_CHECK(MPI_Irecv(t->slots + (size_t)c * t->max_count, n, MPI_DOUBLE, t->child0 + c,
                                MTAG, MPI_COMM_WORLD, &t->reqs[c]));
        memcpy(t->acc, t->mine, count * sizeof(double));
        if (t->nchildren) MPI_CHECK(MPI_Waitall(t->nchildren, t->reqs, MPI_STATUSES_IGNORE));
        add_children(t, count);
        if (t->parent >= 0)
            MPI_CHECK(MPI_Send(t->acc, n, MPI_DOUBLE, t->parent, MTAG, MPI_COMM_WORLD));
        return;
    case S_NARMA_PSCW:
        if (t->nchildren) NARMA_CHECK(NARMA_Win_post(t->g_children, 0, t->win));
        memcpy(t->acc, t->mine, count * sizeof(double));
        if (t->nchildren) NARMA_CHECK(NARMA_Win_wait(t->win));
        add_children(t, count);
        if (t->parent >= 0) {
            NARMA_CHECK(NARMA_Win_start(t->g_parent, 0, t->win));
            NARMA_CHECK(NARMA_Put(t->acc, n, MPI_DOUBLE, t->parent,
                                  (MPI_Aint)((size_t)t->slot * t->max_count), n, MPI_DOUBLE,
                                  t->win));
            NARMA_CHECK(NARMA_Win_complete(t->win));
        }
        return;
    case S_NOTIFY:
        if (t->nchildren) NARMA_CHECK(NARMA_Start(&t->children));
        memcpy(t->acc, t->mine, count * sizeof(double));
        if (t->nchildren) NARMA_CHECK(NARMA_Wait(&t->children, MPI_STATUS_IGNORE));
        add_children(t, count);
        if (t->parent >= 0)
            NARMA_CHECK(NARMA_Put_notify(t->acc, n, MPI_DOUBLE, t->parent,
                                         (MPI_Aint)((size_t)t->slot * t->max_count), n, MPI_DOUBLE,
                                         t->win, NTAG));
        return;
    }
}

static MPI_Group world_group_incl(int n, int first)
{
    MPI_Group world, g = MPI_GROUP_EMPTY;
    int range[1][3] = {{first, first + n - 1, 1}};
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    if (n > 0) MPI_CHECK(MPI_Group_range_incl(world, 1, range, &g));
    MPI_CHECK(MPI_Group_free(&world));
    return g;
}

static void setup(struct tree *t, int id, size_t max_size, int arity)
{
    memset(t, 0, sizeof *t);
    t->id = id;
    t->arity = arity;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &t->rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &t->np));
    t->parent = t->rank ? (t->rank - 1) / arity : -1;
    t->slot = t->rank ? (t->rank - 1) % arity : 0;
    t->child0 = arity * t->rank + 1;
    t->nchildren = t->child0 >= t->np ? 0 : t->np - t->child0 < arity ? t->np - t->child0 : arity;
    t->max_count = max_size / sizeof(double);
    t->mine = bench_alloc(max_size);
    t->acc = bench_alloc(max_size);
    size_t slot_bytes = (size_t)arity * max_size;
    t->children = NARMA_REQUEST_NULL;
    t->g_parent = t->g_children = MPI_GROUP_EMPTY;
    if (id == S_NARMA_PSCW || id == S_NOTIFY) {
        NARMA_CHECK(NARMA_Win_allocate((MPI_Aint)slot_bytes, sizeof(double), MPI_INFO_NULL,
                                       MPI_COMM_WORLD, &t->slots, &t->win));
        memset(t->slots, 0, slot_bytes);
    } else {
        t->slots = bench_alloc(slot_bytes);
    }
    if (id == S_NARMA_PSCW) {
        t->g_parent = world_group_incl(t->parent >= 0, t->parent);
        t->g_children = world_group_incl(t->nchildren, t->child0);
    }
    if (id == S_NOTIFY && t->nchildren)
        NARMA_CHECK(NARMA_Notify_init(t->win, NARMA_ANY_SOURCE, NTAG, t->nchildren, &t->children));
    if (id == S_SENDRECV) {
        t->reqs = calloc((size_t)arity, sizeof *t->reqs);
        if (!t->reqs) bench_die(BENCH_HERE, "out of memory");
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void teardown(struct tree *t)
{
    if (t->children != NARMA_REQUEST_NULL) NARMA_CHECK(NARMA_Request_free(&t->children));
    if (t->g_parent != MPI_GROUP_EMPTY) MPI_CHECK(MPI_Group_free(&t->g_parent));
    if (t->g_children != MPI_GROUP_EMPTY) MPI_CHECK(MPI_Group_free(&t->g_children));
    if (t->id == S_NARMA_PSCW || t->id == S_NOTIFY)
        NARMA_CHECK(NARMA_Win_free(&t->win));
    else
        free(t->slots);
    free(t->reqs);
    free(t->mine);
    free(t->acc);
}

/* One block: warm-up, then `iters` timed reductions. Returns rank 0's median
 * time in microseconds (NaN elsewhere); *bad is set on every rank on failure. */
static double block(struct tree *t, size_t size, long iters, long *k, double *samples, int *bad)
{
    size_t count = size / sizeof(double);
    int wrong = 0;
    long warm = iters / 10 + 1;
    for (long i = -warm; i < iters; i++) {
        fill(t, count, *k);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = bench_now();
        reduce(t, count);
        double t1 = bench_now();
        if (t->rank == 0) {
            if (i >= 0) samples[i] = t1 - t0;
            if (!wrong) wrong = check(t, count, *k);
        }
        (*k)++;
    }
    *bad = bench_any(wrong, MPI_COMM_WORLD);
    return t->rank == 0 ? 1e6 * bench_median(samples, (size_t)iters) : NAN;
}

/* ---- options and main ------------------------------------------------------ */

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.c = {.iters = 2000, .reps = 5, .timeout = 120}, .arity = ARITY};
    const struct bench_opt own[] = {
        {"arity", BENCH_OPT_INT, &o->arity, 1, "children per node, 1..64 (default 16)"},
    };
    const struct bench_spec spec = {
        .prog = PROG,
        .usage = "mpiexec -n N " PROG " [options]  (sizes: bytes per contribution, multiples "
                 "of 8; default 8)",
        .uses = BENCH_USE_ALL & ~BENCH_USE_WARMUP,
        .schemes = scheme_names,
        .nschemes = S_COUNT,
        .opts = own,
        .nopts = 1,
        .quick_reps = 2,
        .quick_iters = 100,
        .quick_sizes = "8",
    };
    int rc = bench_parse(argc, argv, &spec, &o->c);
    if (rc == 0 && !(o->c.given & BENCH_USE_SIZES) && !o->c.quick) {
        o->c.nsizes = 1; /* the default is 8 B only */
        o->c.sizes[0] = 8;
    }
    for (int z = 0; rc == 0 && z < o->c.nsizes; z++)
        if (o->c.sizes[z] % sizeof(double) || o->c.sizes[z] / sizeof(double) > (1u << 30))
            rc = bench_error(PROG ": sizes must be multiples of 8 B");
    if (rc == 0 && o->arity > MAX_ARITY)
        rc = bench_error(PROG ": --arity must be at most %d", MAX_ARITY);
    return rc;
}

/* Levels below the root of the k-ary tree over np ranks. */
static int depth(int np, int k)
{
    int d = 0;
    for (long last = np - 1; last > 0; last = (last - 1) / k)
        d++;
    return d;
}

/* One block of the interleaved run: --iters reductions of one size. */
struct tree_run {
    struct tree *tr;
    const size_t *sizes;
    long iters, k; /* k: reductions so far (seeds the data) */
    double *samples;
};

static double tree_block(void *ctx, int s, int z, int rep, int *bad)
{
    struct tree_run *r = ctx;
    (void)rep;
    return block(&r->tr[s], r->sizes[z], r->iters, &r->k, r->samples, bad);
}

int main(int argc, char **argv)
{
    NARMA_CHECK(NARMA_Init(&argc, &argv));
    int rank, np;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    struct options o;
    int bad = parse_options(argc, argv, &o);
    if (bad) return bench_stop(bad);
    size_t max_size = 0;
    for (int z = 0; z < o.c.nsizes; z++)
        if (o.c.sizes[z] > max_size) max_size = o.c.sizes[z];

    bench_print_header("narma " PROG
                       ": k-ary tree reduction to rank 0 (paper: 16-ary), section VI-B",
                       MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# tree            : arity %d, depth %d over %d ranks; %ld reductions per block "
               "(+ %ld warm-up), %d interleaved repetitions\n",
               o.arity, depth(np, o.arity), np, o.c.iters, o.c.iters / 10 + 1, o.c.reps);
        printf("# time            : rank 0, from its exit of an untimed MPI_Barrier to the "
               "validated result; median per block\n");
        bench_print_schemes(scheme_names, o.c.selected, S_COUNT);
        fflush(stdout);
    }
    if (rank == 0) bench_csv_open(o.c.csv);

    struct tree tr[S_COUNT];
    enum bench_status status[S_COUNT];
    for (int s = 0; s < S_COUNT; s++) {
        status[s] = o.c.selected[s] ? BENCH_READY : BENCH_OFF;
        if (o.c.selected[s]) {
            bench_watchdog(o.c.timeout, PROG, "set-up", scheme_names[s], max_size, -1);
            setup(&tr[s], s, max_size, o.arity);
        }
    }
    size_t cells = (size_t)S_COUNT * (size_t)o.c.nsizes * (size_t)o.c.reps;
    double *lat = malloc(cells * sizeof *lat);
    double *samples = malloc((size_t)o.c.iters * sizeof *samples);
    if (!lat || !samples) bench_die(BENCH_HERE, "out of memory");
    for (size_t i = 0; i < cells; i++)
        lat[i] = NAN;
#define LAT(s, z) (lat + ((size_t)(s) * (size_t)o.c.nsizes + (size_t)(z)) * (size_t)o.c.reps)

    struct tree_run trun = {.tr = tr, .sizes = o.c.sizes, .iters = o.c.iters, .samples = samples};
    const struct bench_run run = bench_run_of(PROG, &o.c, scheme_names, S_COUNT, 1, MPI_COMM_WORLD);
    bench_interleave(&run, status, tree_block, &trun, lat);

    int failed = bench_failed(status, S_COUNT);
    if (rank == 0) {
        struct bench_table t = {
            .title = "Size  Latency (us): rank 0's reduction time, median over repetitions",
            .prog = PROG,
            .metric = "latency_us",
            .names = scheme_names,
            .status = status,
            .nschemes = S_COUNT,
            .sizes = o.c.sizes,
            .nsizes = o.c.nsizes,
            .reps = o.c.reps,
            .den = -1};
        bench_print_table(&t, lat);
        if (status[S_REDUCE] == BENCH_READY) {
            t.title = "Speedup over mpi_reduce (its time / the scheme's; median of per-repetition "
                      "ratios)";
            t.metric = "speedup_vs_reduce";
            t.den = S_REDUCE;
            t.invert = 1;
            bench_print_table(&t, lat);
        }
        if (failed) {
            printf("\nERROR: solution does not validate (see stderr)\n");
        } else {
            printf("\nSolution validates\n");
            for (int s = 0; s < S_COUNT; s++)
                if (status[s] == BENCH_READY)
                    printf("Rate (1/latency, reductions/s) %-14s: %.0f at %zu B\n", scheme_names[s],
                           1e6 / bench_rep_median(LAT(s, 0), NULL, o.c.reps), o.c.sizes[0]);
        }
        int z8 = -1;
        for (int z = 0; z < o.c.nsizes; z++)
            if (o.c.sizes[z] == 8) z8 = z;
        if (z8 >= 0 && status[S_REDUCE] == BENCH_READY && status[S_NOTIFY] == BENCH_READY)
            printf("# SUMMARY tree mpi_reduce/narma_notify@8B=%.2f (target > 1)\n",
                   bench_rep_median(LAT(S_REDUCE, z8), LAT(S_NOTIFY, z8), o.c.reps));
        fflush(stdout);
    }
    for (int s = 0; s < S_COUNT; s++)
        if (status[s] != BENCH_OFF) teardown(&tr[s]);
    bench_csv_close();
    free(lat);
    free(samples);
    NARMA_CHECK(NARMA_Finalize());
    return failed ? 1 : 0;
}
