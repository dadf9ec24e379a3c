/*
 * bench/transactions: massive unstructured atomic transactions (nonblocking
 * RMA synchronisation paper, sections IV-B and VIII-B), self-validating.
 *
 * Every rank runs T transactions. A transaction picks a random target rank
 * (itself included) and applies K NARMA_Accumulate(MPI_SUM) of one int64 each
 * to random slots of the target's window inside an exclusive lock epoch.
 * Targets never know how many updates they get, from whom or where.
 *
 *   narma_blocking     NARMA_Win_lock(EXCLUSIVE) / accumulates / NARMA_Win_unlock
 *   narma_nonblocking  NARMA_Win_ilock / accumulates / NARMA_Win_iunlock, up to
 *                      --depth transactions in flight, their unlock requests
 *                      waited for in batches (NARMA_Waitall; with --sliding,
 *                      NARMA_Waitsome refills slots as transactions complete)
 *   narma_reorder      the same on a window created with the info key
 *                      narma_access_after_access_reorder=true, so a later lock
 *                      epoch may activate while earlier ones are still active
 *
 * Rate: transactions per second over all ranks (sum of T over the slowest
 * rank's time). Validation: each rank records what it added where; a
 * reduce-scatter of those expectations gives every target the exact sums its
 * window must hold, checked under an exclusive lock on itself (then zeroed).
 */
#include <stdint.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define BENCH "transactions"

enum { S_BLOCKING, S_NONBLOCKING, S_REORDER, S_COUNT };
static const char *const scheme_names[S_COUNT] = {"narma_blocking", "narma_nonblocking",
                                                  "narma_reorder"};

struct options {
    struct bench_common c; /* --reps, --iters, --sizes, --schemes, --csv, ... */
    long tx;
    int k, slots, depth, sliding;
};

struct tx {
    MPI_Comm comm;
    int rank, size;
    const struct options *o;
    NARMA_Win win[2]; /* [0] plain, [1] with narma_access_after_access_reorder */
    int64_t *base[2];
    int64_t *expect;      /* [size * slots]: what this rank added where */
    int64_t *sums;        /* [slots]: what my window must hold */
    int64_t *vals;        /* [depth * k]: origin buffers of the transactions in flight */
    NARMA_Request *req;   /* [depth] */
    int *freelist, *done; /* [depth] */
    /* narma.h declares the status arrays as MPI_Status[] (MPICH: MPI_Status *), so passing
     * MPI_STATUSES_IGNORE trips GCC's -Wstringop-overflow: use real arrays. */
    MPI_Status *status; /* [depth] */
    uint64_t rng;
};

static void tx_setup(struct tx *s, MPI_Comm comm, const struct options *o)
{
    memset(s, 0, sizeof *s);
    s->comm = comm;
    s->o = o;
    MPI_CHECK(MPI_Comm_rank(comm, &s->rank));
    MPI_CHECK(MPI_Comm_size(comm, &s->size));
    MPI_Aint bytes = (MPI_Aint)o->slots * (MPI_Aint)sizeof(int64_t);
    NARMA_CHECK(
        NARMA_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, comm, &s->base[0], &s->win[0]));
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "narma_access_after_access_reorder", "true"));
    NARMA_CHECK(NARMA_Win_allocate(bytes, sizeof(int64_t), info, comm, &s->base[1], &s->win[1]));
    MPI_CHECK(MPI_Info_free(&info));
    for (int w = 0; w < 2; w++)
        memset(s->base[w], 0, (size_t)bytes); /* window memory starts undefined */
    s->expect = bench_alloc((size_t)s->size * o->slots * sizeof(int64_t));
    s->sums = bench_alloc((size_t)o->slots * sizeof(int64_t));
    s->vals = bench_alloc((size_t)o->depth * o->k * sizeof(int64_t));
    s->req = bench_alloc((size_t)o->depth * sizeof *s->req);
    s->status = bench_alloc((size_t)o->depth * sizeof *s->status);
    s->freelist = bench_alloc((size_t)o->depth * sizeof *s->freelist);
    s->done = bench_alloc((size_t)o->depth * sizeof *s->done);
    s->rng = 0x5eed0000ull + (uint64_t)s->rank * 0x10001ull;
    MPI_CHECK(MPI_Barrier(comm));
}

static void tx_teardown(struct tx *s)
{
    for (int w = 0; w < 2; w++)
        NARMA_CHECK(NARMA_Win_free(&s->win[w]));
    free(s->expect);
    free(s->sums);
    free(s->vals);
    free(s->req);
    free(s->status);
    free(s->freelist);
    free(s->done);
}

/* Issue the accumulates of one transaction to a random target; record them. */
static void transaction_body(struct tx *s, NARMA_Win win, int target, int64_t *vals)
{
    const struct options *o = s->o;
    for (int a = 0; a < o->k; a++) {
        uint64_t r = bench_rand(&s->rng);
        int off = (int)(r % (uint64_t)o->slots);
        vals[a] = (int64_t)((r >> 32) % 1000) + 1;
        s->expect[(size_t)target * o->slots + off] += vals[a];
        NARMA_CHECK(NARMA_Accumulate(&vals[a], 1, MPI_INT64_T, target, off, 1, MPI_INT64_T,
                                     NARMA_SUM, win));
    }
}

static void run(struct tx *s, int scheme)
{
    const struct options *o = s->o;
    NARMA_Win win = s->win[scheme == S_REORDER];
    if (scheme == S_BLOCKING) {
        for (long t = 0; t < o->tx; t++) {
            int target = (int)(bench_rand(&s->rng) % (uint64_t)s->size);
            NARMA_CHECK(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, target, 0, win));
            transaction_body(s, win, target, s->vals);
            NARMA_CHECK(NARMA_Win_unlock(target, win));
        }
        return;
    }
    /* Slots 0..depth-1 each hold one transaction in flight (its unlock request and
     * its origin values); when all are busy, wait for some and refill those. */
    int nfree = o->depth, *freelist = s->freelist, *done = s->done;
    for (int i = 0; i < o->depth; i++)
        freelist[i] = o->depth - 1 - i;
    for (long t = 0; t < o->tx; t++) {
        if (nfree == 0) {
            int nd;
            if (o->sliding)
                NARMA_CHECK(NARMA_Waitsome(o->depth, s->req, &nd, done, s->status));
            else {
                NARMA_CHECK(NARMA_Waitall(o->depth, s->req, s->status));
                for (nd = 0; nd < o->depth; nd++)
                    done[nd] = nd;
            }
            for (int i = 0; i < nd; i++)
                freelist[nfree++] = done[i];
        }
        int slot = freelist[--nfree];
        int target = (int)(bench_rand(&s->rng) % (uint64_t)s->size);
        NARMA_Request lr;
        NARMA_CHECK(NARMA_Win_ilock(NARMA_LOCK_EXCLUSIVE, target, 0, win, &lr));
        NARMA_CHECK(NARMA_Request_free(&lr)); /* epoch-opening requests are complete at once */
        transaction_body(s, win, target, s->vals + (size_t)slot * o->k);
        NARMA_CHECK(NARMA_Win_iunlock(target, win, &s->req[slot]));
    }
    NARMA_CHECK(NARMA_Waitall(o->depth, s->req, s->status)); /* NULL entries are complete */
}

/* Collective: compare every window with the sums the origins recorded; zero
 * windows and records for the next repetition. Returns the number of wrong slots
 * over all ranks. */
static long check(struct tx *s, int scheme)
{
    const struct options *o = s->o;
    NARMA_Win win = s->win[scheme == S_REORDER];
    int64_t *mem = s->base[scheme == S_REORDER];
    MPI_CHECK(MPI_Barrier(s->comm)); /* every transaction is complete */
    MPI_CHECK(
        MPI_Reduce_scatter_block(s->expect, s->sums, o->slots, MPI_INT64_T, MPI_SUM, s->comm));
    long bad = 0, first = -1;
    int64_t held = 0;
    NARMA_CHECK(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, s->rank, 0, win));
    for (int i = 0; i < o->slots; i++) {
        if (mem[i] != s->sums[i] && bad++ == 0) {
            first = i;
            held = mem[i];
        }
        mem[i] = 0;
    }
    if (bad)
        fprintf(stderr,
                "\n!!! " BENCH ": VALIDATION FAILED: %s: rank %d has %ld wrong slots; "
                "slot %ld holds %lld, expected %lld\n",
                scheme_names[scheme], s->rank, bad, first, (long long)held,
                (long long)s->sums[first]);
    NARMA_CHECK(NARMA_Win_unlock(s->rank, win));
    memset(s->expect, 0, (size_t)s->size * o->slots * sizeof(int64_t));
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, s->comm));
    return bad;
}

/* ---- driver ------------------------------------------------------------ */

static int parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){
        .c = {.reps = 11, .timeout = 60}, .tx = 10000, .k = 8, .slots = 1024, .depth = 32};
    const struct bench_opt own[] = {
        {"tx", BENCH_OPT_LONG, &o->tx, 1, "transactions per rank and repetition (default 10000)"},
        {"k", BENCH_OPT_INT, &o->k, 1, "accumulates per transaction (default 8; the CSV size)"},
        {"slots", BENCH_OPT_INT, &o->slots, 1, "int64 slots per window (default 1024)"},
        {"depth", BENCH_OPT_INT, &o->depth, 1,
         "nonblocking transactions in flight per batch (default 32)"},
        {"sliding", BENCH_OPT_FLAG, &o->sliding, 0,
         "refill transactions as they complete (NARMA_Waitsome), not per batch"},
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
    if (rc == 0 && o->c.quick && o->tx == 10000) o->tx = 1000;
    return rc;
}

/* One block of the interleaved run: every rank's transactions, timed (slowest rank), checked. */
struct tx_run {
    struct tx *s;
    long tx;
    int rank;
};

static double tx_block(void *ctx, int sc, int z, int rep, int *bad)
{
    struct tx_run *t = ctx;
    (void)z;
    MPI_CHECK(MPI_Barrier(t->s->comm));
    double t0 = bench_now();
    run(t->s, sc);
    double dt = bench_now() - t0;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, t->s->comm));
    long wrong = check(t->s, sc);
    if (wrong && t->rank == 0)
        fprintf(stderr, "!!! " BENCH ": %s repetition %d: %ld wrong slots in total\n",
                scheme_names[sc], rep, wrong);
    *bad = wrong != 0;
    return (double)t->tx * t->s->size / dt;
}

int main(int argc, char **argv)
{
    NARMA_CHECK(NARMA_Init(&argc, &argv));
    int rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    struct options o;
    int rc = parse(argc, argv, &o);
    if (rc) return bench_stop(rc);
    bench_print_header(
        "narma transactions: unstructured atomic transactions in exclusive lock epochs "
        "(nonblocking-RMA paper IV-B, VIII-B)",
        MPI_COMM_WORLD);
    struct tx s;
    tx_setup(&s, MPI_COMM_WORLD, &o);
    if (rank == 0) {
        printf(
            "# %ld transactions per rank and repetition, each %d x NARMA_Accumulate(SUM, 1 int64) "
            "to random slots of %d at a random target (self included)\n",
            o.tx, o.k, o.slots);
        printf(
            "# nonblocking: up to %d transactions in flight, unlock requests waited in batches\n",
            o.depth);
        printf("# repetitions %d, schemes interleaved (order rotated per repetition); "
               "rate = all ranks' transactions / slowest rank's time; every repetition validated\n",
               o.c.reps);
        fflush(stdout);
        bench_csv_open(o.c.csv);
    }
    int ids[S_COUNT], ns = 0;
    for (int i = 0; i < S_COUNT; i++)
        if (o.c.selected[i]) ids[ns++] = i;
    double *rate = malloc((size_t)S_COUNT * o.c.reps * sizeof *rate);
    if (!rate) bench_die(BENCH_HERE, "out of memory");
    for (int i = 0; i < S_COUNT * o.c.reps; i++)
        rate[i] = NAN;
    struct tx_run tr = {.s = &s, .tx = o.tx, .rank = rank};
    const struct bench_run run = bench_run_of(BENCH, &o.c, scheme_names, S_COUNT, 0, s.comm);
    enum bench_status status[S_COUNT];
    bench_status_init(status, o.c.selected, S_COUNT);
    bench_interleave(&run, status, tx_block, &tr, rate);
    int failed = bench_failed(status, S_COUNT);

    if (rank == 0) {
        printf("\n# %-18s %16s %10s\n", "Scheme", "transactions/s", "spread");
        for (int k = 0; k < ns; k++) {
            int sc = ids[k];
            double v = bench_rep_median(&rate[sc * o.c.reps], NULL, o.c.reps);
            printf("  %-18s %16.0f %10.2f\n", scheme_names[sc], v,
                   bench_spread(&rate[sc * o.c.reps], o.c.reps));
            bench_csv_row(BENCH, scheme_names[sc], (size_t)o.k, "tx_per_s", v);
        }
        static const struct bench_pair pairs[] = {
            {S_REORDER, S_BLOCKING}, {S_NONBLOCKING, S_BLOCKING}, {S_REORDER, S_NONBLOCKING}};
        bench_print_pairs(BENCH, "Rate ratios", scheme_names, o.c.selected, pairs,
                          (int)(sizeof pairs / sizeof *pairs), rate, o.c.reps, (size_t)o.k);
        printf(failed ? "\nERROR: solution does not validate\n" : "\nSolution validates\n");
        fflush(stdout);
        bench_csv_close();
    }
    tx_teardown(&s);
    free(rate);
    NARMA_CHECK(NARMA_Finalize());
    return failed != 0;
}
