/*
 * bench/overlap: how much of a transfer's latency computation can hide (the
 * Notified Access paper's figure 4a, section V-A). Rank 0 (origin) sends
 * `size` bytes to rank 1 (target) and places computation between the
 * initiation and the local completion of the transfer:
 *
 *   mpi_isend     MPI_Isend ... MPI_Wait            (target: MPI_Recv)
 *   mpi_put       MPI_Put ... MPI_Win_flush         (in an MPI_Win_lock_all epoch)
 *   narma_put     NARMA_Put ... NARMA_Win_flush     (in a NARMA_Win_lock_all epoch)
 *   narma_notify  NARMA_Put_notify ... NARMA_Win_flush (target: Start/Wait on a
 *                 persistent notification request)
 *   narma_rput    NARMA_Rput_notify ... NARMA_Wait (target as narma_notify)
 *   narma_pstart  NARMA_Start of a persistent notified put (NARMA_Put_notify_init,
 *                 one per size) ... NARMA_Wait (target as narma_notify)
 *
 * Per size and scheme a block measures, on the origin, medians over N
 * iterations of: t_comm (initiation + completion, no computation), then
 * t_compute (the computation alone, calibrated to 1.1 x t_comm) and t_total
 * (initiation + computation + completion). The share of the communication
 * that the computation hid is overlap = 1 - (t_total - t_compute) / t_comm,
 * clamped to [0, 1]. An untimed MPI_Barrier separates iterations, after the
 * target has received (isend) or drained the notification (notify). The
 * target checks the data of the block's last transfer.
 *
 * Note: a transfer that the library performs entirely inside the initiating
 * call cannot overlap anything; the measurement then reports ~0, which is the
 * honest answer for that design. narma's shm transport does so for every
 * blocking put (narma_put, narma_notify: complete at the target on return);
 * the request-based forms (narma_rput, narma_pstart) run on windows created
 * with info narma_pull_min=65536: from 64 KiB the target pulls the data while
 * the origin computes (by default narma copies in the call: docs/design.md).
 *
 * Schemes run interleaved (rotated order per repetition and size); the table
 * gives the median over repetitions of each block's overlap.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "harness.h"

#define PROG      "overlap"
#define NTAG      5
#define MTAG      5
#define OVERSHOOT 1.1     /* computation = OVERSHOOT x t_comm: "slightly more" than the transfer */
#define PULL_MIN  "65536" /* window info narma_pull_min of narma_rput and narma_pstart */

enum scheme_id { S_ISEND, S_MPI_PUT, S_NARMA_PUT, S_NOTIFY, S_RPUT, S_PSTART, S_COUNT };

static const char *const scheme_names[S_COUNT] = {
    [S_ISEND] = "mpi_isend",     [S_MPI_PUT] = "mpi_put", [S_NARMA_PUT] = "narma_put",
    [S_NOTIFY] = "narma_notify", [S_RPUT] = "narma_rput", [S_PSTART] = "narma_pstart"};

struct options {
    struct bench_common c; /* --reps, --iters, --sizes, --schemes, --csv, ... */
};

struct pair {
    MPI_Comm comm;
    int rank; /* 0 origin, 1 target */
    size_t max_size;
};

struct scheme {
    int id;
    unsigned char *sbuf, *rbuf; /* origin source; where the data lands on the target */
    MPI_Win mwin;
    NARMA_Win nwin;
    NARMA_Request note; /* narma_notify, narma_rput, narma_pstart: target */
    NARMA_Request pput; /* narma_pstart, origin: the persistent put of pput_size bytes */
    size_t pput_size;
};

/* ---- computation ------------------------------------------------------------ */

static double compute_sink;

/* A dependent chain of multiply-adds: no memory traffic, no vectorisation. */
static void compute(long units)
{
    double x = compute_sink;
    for (long i = 0; i < units; i++)
        x = x * 0.9999999 + 1e-9;
    compute_sink = x;
}

/* Seconds per unit of compute(), median of a few timings. */
static double calibrate_unit(void)
{
    double v[9];
    long units = 200000;
    for (int i = 0; i < 9; i++) {
        double t0 = bench_now();
        compute(units);
        v[i] = (bench_now() - t0) / (double)units;
    }
    return bench_median(v, 9);
}

/* ---- schemes ---------------------------------------------------------------- */

static void setup(struct scheme *s, int id, const struct pair *p)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    s->sbuf = bench_alloc(p->max_size);
    s->note = NARMA_REQUEST_NULL;
    s->pput = NARMA_REQUEST_NULL;
    MPI_Aint bytes = (MPI_Aint)p->max_size;
    switch (id) {
    case S_ISEND:
        s->rbuf = bench_alloc(p->max_size);
        break;
    case S_MPI_PUT:
        MPI_CHECK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, p->comm, &s->rbuf, &s->mwin));
        MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, s->mwin));
        break;
    default: {
        /* narma_rput, narma_pstart: ask for pulled puts from 64 KiB (docs/design.md) */
        MPI_Info info = MPI_INFO_NULL;
        if (id == S_RPUT || id == S_PSTART) {
            MPI_CHECK(MPI_Info_create(&info));
            MPI_CHECK(MPI_Info_set(info, "narma_pull_min", PULL_MIN));
        }
        NARMA_CHECK(NARMA_Win_allocate(bytes, 1, info, p->comm, &s->rbuf, &s->nwin));
        if (info != MPI_INFO_NULL) MPI_CHECK(MPI_Info_free(&info));
        NARMA_CHECK(NARMA_Win_lock_all(NARMA_MODE_NOCHECK, s->nwin));
        if (id != S_NARMA_PUT && p->rank == 1)
            NARMA_CHECK(NARMA_Notify_init(s->nwin, 0, NTAG, 1, &s->note));
        break;
    }
    }
}

static void teardown(struct scheme *s)
{
    switch (s->id) {
    case S_ISEND:
        free(s->rbuf);
        break;
    case S_MPI_PUT:
        MPI_CHECK(MPI_Win_unlock_all(s->mwin));
        MPI_CHECK(MPI_Win_free(&s->mwin));
        break;
    default:
        if (s->note != NARMA_REQUEST_NULL) NARMA_CHECK(NARMA_Request_free(&s->note));
        if (s->pput != NARMA_REQUEST_NULL) NARMA_CHECK(NARMA_Request_free(&s->pput));
        NARMA_CHECK(NARMA_Win_unlock_all(s->nwin));
        NARMA_CHECK(NARMA_Win_free(&s->nwin));
    }
    free(s->sbuf);
}

/* Origin: initiate, compute `units`, complete. Returns the elapsed seconds. */
static double origin_op(struct scheme *s, const struct pair *p, size_t size, long units)
{
    int n = (int)size;
    MPI_Request req;
    double t0 = bench_now();
    switch (s->id) {
    case S_ISEND:
        MPI_CHECK(MPI_Isend(s->sbuf, n, MPI_BYTE, 1, MTAG, p->comm, &req));
        compute(units);
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        break;
    case S_MPI_PUT:
        MPI_CHECK(MPI_Put(s->sbuf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, s->mwin));
        compute(units);
        MPI_CHECK(MPI_Win_flush(1, s->mwin));
        break;
    case S_NARMA_PUT:
        NARMA_CHECK(NARMA_Put(s->sbuf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, s->nwin));
        compute(units);
        NARMA_CHECK(NARMA_Win_flush(1, s->nwin));
        break;
    case S_NOTIFY:
        NARMA_CHECK(NARMA_Put_notify(s->sbuf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, s->nwin, NTAG));
        compute(units);
        NARMA_CHECK(NARMA_Win_flush(1, s->nwin));
        break;
    case S_RPUT: {
        NARMA_Request r;
        NARMA_CHECK(NARMA_Rput_notify(s->sbuf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, s->nwin, &r, NTAG));
        compute(units);
        NARMA_CHECK(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        break;
    }
    case S_PSTART:
        NARMA_CHECK(NARMA_Start(&s->pput));
        compute(units);
        NARMA_CHECK(NARMA_Wait(&s->pput, MPI_STATUS_IGNORE));
        break;
    }
    return bench_now() - t0;
}

/* Target: receive whatever the origin's op delivers (nothing to do for plain puts). */
static void target_op(struct scheme *s, const struct pair *p, size_t size)
{
    switch (s->id) {
    case S_ISEND:
        MPI_CHECK(MPI_Recv(s->rbuf, (int)size, MPI_BYTE, 0, MTAG, p->comm, MPI_STATUS_IGNORE));
        break;
    case S_NOTIFY:
    case S_RPUT:
    case S_PSTART:
        NARMA_CHECK(NARMA_Start(&s->note));
        NARMA_CHECK(NARMA_Wait(&s->note, MPI_STATUS_IGNORE));
        break;
    default:
        break;
    }
}

/* Target: make the origin's completed puts visible to loads (unified model). */
static void target_sync(struct scheme *s)
{
    if (s->id == S_MPI_PUT)
        MPI_CHECK(MPI_Win_sync(s->mwin));
    else if (s->id != S_ISEND)
        NARMA_CHECK(NARMA_Win_sync(s->nwin));
}

/* N iterations of the op with `units` of computation; the origin's median. */
static double phase(struct scheme *s, const struct pair *p, size_t size, long iters, long units,
                    double *samples)
{
    if (s->id == S_PSTART && p->rank == 0 && s->pput_size != size) { /* one request per size */
        if (s->pput != NARMA_REQUEST_NULL) NARMA_CHECK(NARMA_Request_free(&s->pput));
        NARMA_CHECK(NARMA_Put_notify_init(s->sbuf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE,
                                          s->nwin, NTAG, &s->pput));
        s->pput_size = size;
    }
    for (long i = -1; i < iters; i++) { /* i == -1: warm-up */
        double t = 0;
        if (p->rank == 0)
            t = origin_op(s, p, size, units);
        else
            target_op(s, p, size);
        MPI_CHECK(MPI_Barrier(p->comm));
        if (i >= 0) samples[i] = t;
    }
    return p->rank == 0 ? bench_median(samples, (size_t)iters) : NAN;
}

struct block_result {
    double t_comm, t_compute, t_total, overlap; /* seconds; overlap in [0, 1] */
};

static struct block_result block(struct scheme *s, const struct pair *p, size_t size, long iters,
                                 double unit, uint64_t seed, double *samples, int *bad)
{
    struct block_result r = {NAN, NAN, NAN, NAN};
    if (p->rank == 0) bench_fill(s->sbuf, size, seed);
    r.t_comm = phase(s, p, size, iters, 0, samples);
    double tc = r.t_comm;
    MPI_CHECK(MPI_Bcast(&tc, 1, MPI_DOUBLE, 0, p->comm));
    long units = (long)ceil(OVERSHOOT * tc / unit);
    if (p->rank == 0) {
        for (long i = -1; i < iters; i++) {
            double t0 = bench_now();
            compute(units);
            if (i >= 0) samples[i] = bench_now() - t0;
        }
        r.t_compute = bench_median(samples, (size_t)iters);
    }
    r.t_total = phase(s, p, size, iters, units, samples);

    int wrong = 0;
    if (p->rank == 1) {
        target_sync(s);
        long off = bench_verify(s->rbuf, size, seed);
        if (off >= 0) {
            fprintf(stderr,
                    "\n!!! " PROG ": VALIDATION FAILED: %s delivered wrong data: size %zu, byte "
                    "%ld is 0x%02x, expected 0x%02x\n",
                    scheme_names[s->id], size, off, s->rbuf[off],
                    bench_pattern_byte(seed, (size_t)off));
            wrong = 1;
        }
    }
    *bad = bench_any(wrong, p->comm);
    if (p->rank == 0) {
        double ov = 1.0 - (r.t_total - r.t_compute) / r.t_comm;
        r.overlap = ov < 0 ? 0 : ov > 1 ? 1 : ov;
    }
    return r;
}

/* ---- options and main ------------------------------------------------------ */

#define SCALE_FROM 65536 /* above this, iterations shrink in proportion to the size */
#define MIN_ITERS  10

static long iters_for(const struct options *o, size_t size)
{
    if (size <= SCALE_FROM) return o->c.iters;
    long it = (long)((double)o->c.iters * SCALE_FROM / (double)size);
    return it > MIN_ITERS ? it : (o->c.iters < MIN_ITERS ? o->c.iters : MIN_ITERS);
}

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.c = {.iters = 100, .reps = 5, .timeout = 120}};
    const struct bench_spec spec = {
        .prog = PROG,
        .usage = "mpiexec -n 2 " PROG " [options]  (ranks beyond 2 wait; --iters: per phase up "
                 "to 64 KiB, then iters*65536/size, at least 10; default sizes 8..1M)",
        .uses = BENCH_USE_ALL & ~BENCH_USE_WARMUP,
        .schemes = scheme_names,
        .nschemes = S_COUNT,
        .quick_reps = 2,
        .quick_iters = 10,
        .quick_sizes = "8,4K,64K",
    };
    int rc = bench_parse(argc, argv, &spec, &o->c);
    if (rc == 0 && !(o->c.given & BENCH_USE_SIZES) && !o->c.quick)
        o->c.nsizes = bench_parse_size_list("8,64,512,4K,32K,256K,1M", o->c.sizes, BENCH_MAX_SIZES);
    return rc;
}

enum metric { M_OVERLAP, M_COMM, M_COMPUTE, M_TOTAL, M_COUNT };

/* One block of the interleaved run; the four metrics go to res[metric]. */
struct overlap_run {
    struct scheme *sc;
    const struct pair *p;
    const struct options *o;
    double unit;
    uint64_t seed;
    double *samples;
    double **res; /* [metric][(scheme*nsizes + size)*reps + rep] */
};

static double overlap_block(void *ctx, int s, int z, int rep, int *bad)
{
    struct overlap_run *r = ctx;
    size_t size = r->o->c.sizes[z];
    struct block_result b =
        block(&r->sc[s], r->p, size, iters_for(r->o, size), r->unit, r->seed++, r->samples, bad);
    const double v[M_COUNT] = {[M_OVERLAP] = b.overlap,
                               [M_COMM] = b.t_comm,
                               [M_COMPUTE] = b.t_compute,
                               [M_TOTAL] = b.t_total};
    size_t at = ((size_t)s * (size_t)r->o->c.nsizes + (size_t)z) * (size_t)r->o->c.reps + rep;
    for (int m = 0; m < M_COUNT; m++)
        r->res[m][at] = v[m];
    return NAN;
}

int main(int argc, char **argv)
{
    NARMA_CHECK(NARMA_Init(&argc, &argv));
    int wrank, wsize;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    struct options o;
    int bad = parse_options(argc, argv, &o);
    if (!bad && wsize < 2) {
        if (wrank == 0) fprintf(stderr, PROG ": needs 2 ranks\n");
        bad = 1;
    }
    if (bad) return bench_stop(bad);

    struct pair p = {.rank = wrank};
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank < 2 ? 0 : MPI_UNDEFINED, wrank, &p.comm));
    int failed = 0;
    if (p.comm != MPI_COMM_NULL) {
        for (int z = 0; z < o.c.nsizes; z++)
            if (o.c.sizes[z] > p.max_size) p.max_size = o.c.sizes[z];
        bench_print_header("narma " PROG ": communication/computation overlap, paper section V-A "
                           "(figure 4a)",
                           p.comm);
        double unit = calibrate_unit();
        MPI_CHECK(MPI_Bcast(&unit, 1, MPI_DOUBLE, 0, p.comm));
        if (p.rank == 0) {
            printf("# ranks measuring : 0 (origin) -> 1 (target)%s\n",
                   wsize > 2 ? "; the others wait" : "");
            printf("# method          : computation = %.1f x t_comm (%.2f ns a unit) between "
                   "initiation and completion; overlap = 1 - (t_total - t_compute)/t_comm, "
                   "clamped to [0,1]\n",
                   OVERSHOOT, 1e9 * unit);
            printf("# iterations      : %ld per phase up to %d B (medians), %d interleaved "
                   "repetitions; untimed barrier between iterations\n",
                   o.c.iters, SCALE_FROM, o.c.reps);
            bench_print_schemes(scheme_names, o.c.selected, S_COUNT);
            fflush(stdout);
            bench_csv_open(o.c.csv);
        }

        struct scheme sc[S_COUNT];
        enum bench_status status[S_COUNT];
        for (int s = 0; s < S_COUNT; s++) {
            status[s] = o.c.selected[s] ? BENCH_READY : BENCH_OFF;
            if (o.c.selected[s]) {
                bench_watchdog(o.c.timeout, PROG, "set-up", scheme_names[s], p.max_size, -1);
                setup(&sc[s], s, &p);
            }
        }
        size_t cells = (size_t)S_COUNT * (size_t)o.c.nsizes * (size_t)o.c.reps;
        double *res[M_COUNT];
        for (int m = 0; m < M_COUNT; m++) {
            res[m] = malloc(cells * sizeof(double));
            if (!res[m]) bench_die(BENCH_HERE, "out of memory");
            for (size_t i = 0; i < cells; i++)
                res[m][i] = NAN;
        }
#define AT(m, s, z) (res[m] + ((size_t)(s) * (size_t)o.c.nsizes + (size_t)(z)) * (size_t)o.c.reps)
        double *samples = malloc((size_t)o.c.iters * sizeof *samples);
        if (!samples) bench_die(BENCH_HERE, "out of memory");
        struct overlap_run orun = {
            .sc = sc, .p = &p, .o = &o, .unit = unit, .seed = 1, .samples = samples, .res = res};
        const struct bench_run run = bench_run_of(PROG, &o.c, scheme_names, S_COUNT, 1, p.comm);
        bench_interleave(&run, status, overlap_block, &orun, NULL);
        failed = bench_failed(status, S_COUNT);

        if (p.rank == 0) {
            static const struct {
                const char *title, *metric;
                double scale;
            } tables[M_COUNT] = {
                [M_OVERLAP] = {"Overlap (%): share of t_comm hidden by computation, median over "
                               "repetitions",
                               "overlap", 100},
                [M_COMM] = {"t_comm (us): initiation + completion, no computation", "t_comm_us",
                            1e6},
                [M_COMPUTE] = {"t_compute (us): the calibrated computation alone", "t_compute_us",
                               1e6},
                [M_TOTAL] = {"t_total (us): initiation + computation + completion", "t_total_us",
                             1e6},
            };
            for (int m = 0; m < M_COUNT; m++) {
                /* CSV: overlap as a fraction in [0, 1] */
                const struct bench_table t = {.title = tables[m].title,
                                              .prog = PROG,
                                              .metric = tables[m].metric,
                                              .names = scheme_names,
                                              .status = status,
                                              .nschemes = S_COUNT,
                                              .sizes = o.c.sizes,
                                              .nsizes = o.c.nsizes,
                                              .reps = o.c.reps,
                                              .scale = tables[m].scale,
                                              .csv_scale = m == M_OVERLAP ? 1 : 0,
                                              .den = -1};
                bench_print_table(&t, res[m]);
            }
            printf(failed ? "\nERROR: data does not validate (see stderr)\n"
                          : "\nSolution validates\n");
            printf("# SUMMARY overlap (%%) at %zu B / %zu B:", o.c.sizes[0],
                   o.c.sizes[o.c.nsizes - 1]);
            for (int s = 0; s < S_COUNT; s++)
                if (status[s] == BENCH_READY)
                    printf(" %s=%.0f/%.0f", scheme_names[s],
                           (100) * bench_rep_median(AT(M_OVERLAP, s, 0), NULL, o.c.reps),
                           (100) *
                               bench_rep_median(AT(M_OVERLAP, s, o.c.nsizes - 1), NULL, o.c.reps));
            printf("\n");
            fflush(stdout);
        }
        for (int s = 0; s < S_COUNT; s++)
            if (status[s] != BENCH_OFF) teardown(&sc[s]);
        bench_csv_close();
        for (int m = 0; m < M_COUNT; m++)
            free(res[m]);
        free(samples);
        MPI_CHECK(MPI_Comm_free(&p.comm));
    }
    /* Ranks beyond the pair sleep here rather than spin on a core the pair needs. */
    MPI_Request idle;
    int done = 0;
    MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &idle));
    while (!done) {
        MPI_CHECK(MPI_Test(&idle, &done, MPI_STATUS_IGNORE));
        if (!done) usleep(1000);
    }
    NARMA_CHECK(NARMA_Finalize());
    return failed ? 1 : 0;
}
