/*
 * bench/pingpong: ping-pong latency and streaming bandwidth of narma's
 * synchronisation schemes against MPI's own and against raw shared memory,
 * measured in one run on two ranks (mpiexec -n 2 -bind-to core).
 *
 * The machine is noisy, so schemes are interleaved: the run makes R
 * repetitions, and each repetition measures every size and, for each size,
 * every scheme once (a block of iterations, schemes in an order rotated per
 * repetition). A size's repetitions are thus spread over the whole run, so a
 * machine that changes speed mid-run shifts every size alike. A block yields the
 * median half round-trip time of its iterations; a table entry is the median
 * over repetitions of those, and a ratio is the median over repetitions of
 * the per-repetition ratio (so both schemes of a ratio saw the same machine
 * state). Every block first runs one validated round trip with fresh data.
 *
 * The schemes live in pp_mpi.c, pp_narma.c and pp_shm.c behind the interface
 * in pingpong.h; this file is the driver and the reporting.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "pingpong.h"

#define MAX_SIZES 64

unsigned pp_sink; /* see pp_consume */
#define BENCH "pingpong"

/* ---- the schemes ------------------------------------------------------- */

enum scheme_id {
    S_MPI_SENDRECV,
    S_MPI_PSCW,
    S_MPI_FENCE,
    S_MPI_FLUSH_FLAG,
    S_NARMA_PSCW,
    S_NARMA_FENCE,
    S_NARMA_LOCK,
    S_NARMA_NOTIFY,
    S_RAW_SHM,
    S_COUNT
};

static const struct pp_scheme *const schemes[S_COUNT] = {
    [S_MPI_SENDRECV] = &pp_mpi_sendrecv, [S_MPI_PSCW] = &pp_mpi_pscw,
    [S_MPI_FENCE] = &pp_mpi_fence,       [S_MPI_FLUSH_FLAG] = &pp_mpi_flush_flag,
    [S_NARMA_PSCW] = &pp_narma_pscw,     [S_NARMA_FENCE] = &pp_narma_fence,
    [S_NARMA_LOCK] = &pp_narma_lock,     [S_NARMA_NOTIFY] = &pp_narma_notify,
    [S_RAW_SHM] = &pp_raw_shm,
};

/* The judged ratios: numerator over denominator, per repetition. */
static const struct {
    enum scheme_id num, den;
    const char *label;
} key_ratios[] = {
    {S_NARMA_NOTIFY, S_MPI_SENDRECV, "notify/sendrecv"},
    {S_NARMA_NOTIFY, S_RAW_SHM, "notify/raw"},
    {S_NARMA_PSCW, S_MPI_PSCW, "narma_pscw/mpi_pscw"},
    {S_NARMA_FENCE, S_MPI_FENCE, "narma_fence/mpi_fence"},
    {S_NARMA_LOCK, S_MPI_FLUSH_FLAG, "narma_lock/mpi_flush_flag"},
};

enum scheme_status { ST_OFF, ST_UNAVAILABLE, ST_READY, ST_FAILED };

/* ---- options ----------------------------------------------------------- */

struct options {
    size_t sizes[MAX_SIZES];
    int nsizes;
    long iters; /* iterations per block for sizes up to SCALE_FROM */
    int reps;
    const char *csv;
    int selected[S_COUNT];
    int bw, costs;
    int timeout; /* seconds without finishing a block before giving up */
};

#define SCALE_FROM 131072 /* above this, iterations shrink in proportion to the size */
#define MIN_ITERS  20
#define BW_BUDGET  ((size_t)1 << 28) /* bytes streamed per timed bandwidth block */
#define BW_MIN_WIN 3

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -n 2 -bind-to core pingpong [options]\n"
            "  --sizes LIST     comma-separated message sizes (e.g. 8,64,1K,1M)\n"
            "  --max-size N     powers of two from 8 to N (default 4M)\n"
            "  --iters N        iterations per block for sizes <= %d B (default 10000);\n"
            "                   larger sizes run N*%d/size (at least %d)\n"
            "  --reps R         interleaved repetitions (default 7)\n"
            "  --schemes LIST   subset of:",
            SCALE_FROM, SCALE_FROM, MIN_ITERS);
    for (int s = 0; s < S_COUNT; s++)
        fprintf(f, " %s", schemes[s]->name);
    fprintf(f, "\n"
               "  --csv FILE       also write every table row as bench,scheme,size,metric,value\n"
               "  --no-bw          skip the streaming bandwidth table\n"
               "  --no-costs       skip the cost-model figures\n"
               "  --timeout S      abort when one block takes more than S seconds (default 120)\n");
}

/* Parse argv identically on every rank; returns 0, 1 after printing an error, -1 after --help. */
static int parse_options(int argc, char **argv, struct options *o, int verbose)
{
    static const struct option longopts[] = {{"sizes", required_argument, 0, 's'},
                                             {"max-size", required_argument, 0, 'm'},
                                             {"iters", required_argument, 0, 'i'},
                                             {"reps", required_argument, 0, 'r'},
                                             {"schemes", required_argument, 0, 'S'},
                                             {"csv", required_argument, 0, 'c'},
                                             {"no-bw", no_argument, 0, 'B'},
                                             {"no-costs", no_argument, 0, 'C'},
                                             {"timeout", required_argument, 0, 't'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    FILE *err = verbose ? stderr : fopen("/dev/null", "w");
    size_t max_size = 4u << 20;
    int have_sizes = 0, bad = 0, c;
    *o = (struct options){.iters = 10000, .reps = 7, .bw = 1, .costs = 1, .timeout = 120};
    for (int s = 0; s < S_COUNT; s++)
        o->selected[s] = 1;
    opterr = 0;
    while (!bad && (c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            o->nsizes = bench_parse_size_list(optarg, o->sizes, MAX_SIZES);
            have_sizes = 1;
            if (o->nsizes <= 0) bad = fprintf(err, "pingpong: bad --sizes '%s'\n", optarg);
            break;
        case 'm':
            max_size = bench_parse_size(optarg);
            if (max_size < 8) bad = fprintf(err, "pingpong: bad --max-size '%s'\n", optarg);
            break;
        case 'i':
            o->iters = atol(optarg);
            if (o->iters < 1) bad = fprintf(err, "pingpong: bad --iters '%s'\n", optarg);
            break;
        case 'r':
            o->reps = atoi(optarg);
            if (o->reps < 1) bad = fprintf(err, "pingpong: bad --reps '%s'\n", optarg);
            break;
        case 'S': {
            char *copy = strdup(optarg);
            for (int s = 0; s < S_COUNT; s++)
                o->selected[s] = 0;
            for (char *tok = strtok(copy, ","); tok && !bad; tok = strtok(NULL, ",")) {
                int found = 0;
                for (int s = 0; s < S_COUNT; s++)
                    if (!strcmp(tok, schemes[s]->name) || !strcmp(tok, "all"))
                        o->selected[s] = found = 1;
                if (!found) bad = fprintf(err, "pingpong: unknown scheme '%s'\n", tok);
            }
            free(copy);
            break;
        }
        case 'c':
            o->csv = optarg;
            break;
        case 'B':
            o->bw = 0;
            break;
        case 'C':
            o->costs = 0;
            break;
        case 't':
            o->timeout = atoi(optarg);
            break;
        case 'h':
            usage(verbose ? stdout : err);
            bad = -1;
            break;
        default:
            bad = fprintf(err, "pingpong: unknown option '%s'\n", argv[optind - 1]);
        }
    }
    if (!have_sizes)
        for (size_t sz = 8; sz <= max_size && o->nsizes < MAX_SIZES; sz *= 2)
            o->sizes[o->nsizes++] = sz;
    if (bad > 0 && verbose) usage(stderr);
    if (err != stderr) fclose(err);
    return bad < 0 ? -1 : bad > 0;
}

static long iters_for(const struct options *o, size_t size)
{
    if (size <= SCALE_FROM) return o->iters;
    long scaled = (long)((double)o->iters * SCALE_FROM / (double)size);
    long floor = o->iters < MIN_ITERS ? o->iters : MIN_ITERS;
    return scaled > floor ? scaled : floor;
}

/* Round trips per timing sample: 8 while that leaves >= 1000 samples, else 1. */
static long batch_for(long iters) { return iters >= 8000 ? 8 : 1; }

static long windows_for(const struct options *o, size_t size)
{
    long w = (long)(BW_BUDGET / (PP_WINDOW * size));
    long cap = o->iters / 50 > BW_MIN_WIN ? o->iters / 50 : BW_MIN_WIN;
    return w < BW_MIN_WIN ? BW_MIN_WIN : w > cap ? cap : w;
}

/* ---- watchdog ---------------------------------------------------------- */

static char watchdog_msg[256];

static void watchdog(int sig)
{
    (void)sig;
    static const char head[] = "\npingpong: TIMEOUT: no progress in ";
    ssize_t r = write(2, head, sizeof head - 1);
    r = write(2, watchdog_msg, strlen(watchdog_msg));
    (void)r;
    _exit(3);
}

static void arm_watchdog(int seconds, const char *what, const char *scheme, size_t size, int rep)
{
    snprintf(watchdog_msg, sizeof watchdog_msg, "%s of %s, size %zu, repetition %d\n", what, scheme,
             size, rep);
    alarm((unsigned)seconds);
}

/* ---- measurement ------------------------------------------------------- */

struct results {
    int nsizes, reps;
    double *lat; /* [scheme][size][rep], half round trip, microseconds */
    double *bw;  /* [scheme][size][rep], MB/s */
};

static double *at(const struct results *r, double *base, int s, int z, int rep)
{
    return base + ((size_t)s * r->nsizes + z) * r->reps + rep;
}

/* Validate what the last round delivered to this rank; loud on failure. Returns 1 if bad. */
static int check_delivery(const struct pp_scheme *s, const struct pp_inst *inst, size_t size,
                          uint64_t seed, const char *what)
{
    long off = bench_verify(inst->rbuf, size, seed);
    if (off < 0) return 0;
    fprintf(stderr,
            "\n!!! pingpong: VALIDATION FAILED: %s %s delivered wrong data: size %zu, rank %d, "
            "byte %ld is 0x%02x, expected 0x%02x\n",
            s->name, what, size, inst->env->rank, off, inst->rbuf[off],
            bench_pattern_byte(seed, (size_t)off));
    fflush(stderr);
    return 1;
}

/* Seeds differ per block, so a block cannot pass on data left by an earlier one. */
static uint64_t block_seed(uint64_t block, int rank) { return 2 * block + (uint64_t)rank + 1; }

/* One latency block; returns the client's median half round trip in microseconds. */
static double latency_block(const struct pp_scheme *s, struct pp_inst *inst, size_t size,
                            long iters, uint64_t block, double *samples, int *bad)
{
    const struct pp_env *env = inst->env;
    if (s->place) s->place(inst, size);
    bench_fill(inst->sbuf, size, block_seed(block, env->rank));
    s->round(inst, size);
    *bad = check_delivery(s, inst, size, block_seed(block, env->peer), "ping-pong");
    for (long i = 0, warm = iters / 10 + 1; i < warm; i++)
        s->round(inst, size);
    /* A sample is the mean of `batch` round trips, so that the clock (~30 ns a read,
     * 10 ns granularity here) stays small against a 120 ns raw round trip. */
    long batch = batch_for(iters), nsamples = iters / batch;
    double t = bench_now();
    for (long i = 0; i < nsamples; i++) {
        for (long b = 0; b < batch; b++)
            s->round(inst, size);
        double t2 = bench_now();
        samples[i] = (t2 - t) / (double)batch;
        t = t2;
    }
    return 0.5e6 * bench_median(samples, (size_t)nsamples);
}

/* One bandwidth block; returns the client's median window bandwidth in MB/s. */
static double stream_block(const struct pp_scheme *s, struct pp_inst *inst, size_t size,
                           long windows, uint64_t block, double *samples, int *bad)
{
    const struct pp_env *env = inst->env;
    if (s->place) s->place(inst, size);
    bench_fill(inst->sbuf, size, block_seed(block, env->rank));
    s->stream(inst, size);
    *bad = env->rank == PP_SERVER &&
           check_delivery(s, inst, size, block_seed(block, env->peer), "stream");
    if (size < 65536) s->stream(inst, size); /* warm-up; large sizes warm with the first */
    double t = bench_now();
    for (long i = 0; i < windows; i++) {
        s->stream(inst, size);
        double t2 = bench_now();
        samples[i] = t2 - t;
        t = t2;
    }
    return (double)PP_WINDOW * (double)size / bench_median(samples, (size_t)windows) / 1e6;
}

/* Agree on failures (both ranks must skip a failed scheme from now on). */
static void settle_block(const struct pp_env *env, int bad, enum scheme_status *st)
{
    int any;
    MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, env->comm));
    if (any) *st = ST_FAILED;
}

/* A line on stderr per repetition, so a long run shows it is alive. */
static void progress(const char *what, int rep, int reps)
{
    static double t0;
    if (t0 == 0) t0 = bench_now();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "pingpong: %s repetition %d/%d (%.0f s)\n", what, rep + 1, reps,
                bench_now() - t0);
}

static void run_latency(const struct options *o, const struct pp_env *env, struct pp_inst *inst,
                        enum scheme_status *st, struct results *res, uint64_t *block)
{
    int order[S_COUNT], n = 0;
    for (int s = 0; s < S_COUNT; s++)
        if (st[s] == ST_READY) order[n++] = s;
    double *samples = malloc((size_t)o->iters * sizeof *samples);
    if (!samples) bench_die(BENCH_HERE, "out of memory");
    for (int rep = 0; rep < o->reps; rep++) {
        progress("ping-pong", rep, o->reps);
        for (int z = 0; z < o->nsizes; z++) {
            size_t size = o->sizes[z];
            long iters = iters_for(o, size);
            for (int k = 0; k < n; k++) {
                int s = order[(k + rep + z) % n]; /* rotate who goes first */
                if (st[s] != ST_READY) continue;
                int bad;
                arm_watchdog(o->timeout, "ping-pong", schemes[s]->name, size, rep);
                *at(res, res->lat, s, z, rep) =
                    latency_block(schemes[s], &inst[s], size, iters, (*block)++, samples, &bad);
                settle_block(env, bad, &st[s]);
            }
        }
    }
    alarm(0);
    free(samples);
}

static void run_bandwidth(const struct options *o, const struct pp_env *env, struct pp_inst *inst,
                          enum scheme_status *st, struct results *res, uint64_t *block)
{
    int order[S_COUNT], n = 0;
    for (int s = 0; s < S_COUNT; s++)
        if (st[s] == ST_READY && schemes[s]->stream) order[n++] = s;
    long maxwin = windows_for(o, 1);
    double *samples = malloc((size_t)maxwin * sizeof *samples);
    if (!samples) bench_die(BENCH_HERE, "out of memory");
    for (int rep = 0; rep < o->reps; rep++) {
        progress("stream", rep, o->reps);
        for (int z = 0; z < o->nsizes; z++) {
            size_t size = o->sizes[z];
            for (int k = 0; k < n; k++) {
                int s = order[(k + rep + z) % n];
                if (st[s] != ST_READY) continue;
                int bad;
                arm_watchdog(o->timeout, "stream", schemes[s]->name, size, rep);
                *at(res, res->bw, s, z, rep) = stream_block(
                    schemes[s], &inst[s], size, windows_for(o, size), (*block)++, samples, &bad);
                settle_block(env, bad, &st[s]);
            }
        }
    }
    alarm(0);
    free(samples);
}

/* ---- reporting (client only) ------------------------------------------- */

/* Median over repetitions of x[rep], or of x[rep]/y[rep] when y is given; NaNs skipped. */
static double rep_median(const struct results *r, const double *x, const double *y)
{
    double v[r->reps];
    size_t n = 0;
    for (int i = 0; i < r->reps; i++) {
        double q = y ? x[i] / y[i] : x[i];
        if (!isnan(q)) v[n++] = q;
    }
    return bench_median(v, n);
}

static double spread(const struct results *r, const double *x)
{
    double mn, mx;
    bench_minmax(x, (size_t)r->reps, &mn, &mx);
    return mx / mn;
}

enum view { V_VALUE, V_RATIO_SENDRECV, V_RATIO_RAW, V_SPREAD };

static const char *cell(enum scheme_status st, double v, char *buf, size_t len)
{
    if (st == ST_FAILED) return "FAILED";
    if (st != ST_READY || isnan(v)) return "-";
    snprintf(buf, len, v >= 1000 ? "%.1f" : v >= 10 ? "%.2f" : "%.3f", v);
    return buf;
}

/* One OSU-style table: "# Size" then a column per scheme. */
static void print_table(const struct options *o, const struct results *r, double *base,
                        const enum scheme_status *st, int stream_only, enum view view,
                        const char *title, const char *metric)
{
    printf("\n# %s\n# %-10s", title, "Size");
    for (int s = 0; s < S_COUNT; s++)
        if (st[s] != ST_OFF && (!stream_only || schemes[s]->stream))
            printf(" %15s", schemes[s]->name);
    printf("\n");
    for (int z = 0; z < o->nsizes; z++) {
        printf("%-12zu", o->sizes[z]);
        for (int s = 0; s < S_COUNT; s++) {
            if (st[s] == ST_OFF || (stream_only && !schemes[s]->stream)) continue;
            const double *x = at(r, base, s, z, 0);
            double v = NAN;
            switch (view) {
            case V_VALUE:
                v = rep_median(r, x, NULL);
                break;
            case V_RATIO_SENDRECV:
                if (st[S_MPI_SENDRECV] == ST_READY)
                    v = rep_median(r, x, at(r, base, S_MPI_SENDRECV, z, 0));
                break;
            case V_RATIO_RAW:
                if (st[S_RAW_SHM] == ST_READY) v = rep_median(r, x, at(r, base, S_RAW_SHM, z, 0));
                break;
            case V_SPREAD:
                v = spread(r, x);
                break;
            }
            char buf[32];
            printf(" %15s", cell(st[s], v, buf, sizeof buf));
            if (st[s] == ST_READY && !isnan(v))
                bench_csv_row(BENCH, schemes[s]->name, o->sizes[z], metric, v);
        }
        printf("\n");
    }
}

static double key_ratio(const struct results *r, double *base, const enum scheme_status *st, int k,
                        int z)
{
    if (st[key_ratios[k].num] != ST_READY || st[key_ratios[k].den] != ST_READY) return NAN;
    return rep_median(r, at(r, base, key_ratios[k].num, z, 0),
                      at(r, base, key_ratios[k].den, z, 0));
}

static void print_key_ratios(const struct options *o, const struct results *r,
                             const enum scheme_status *st)
{
    printf("\n# Key latency ratios (median over repetitions of per-repetition ratios)\n# %-10s",
           "Size");
    for (size_t k = 0; k < sizeof key_ratios / sizeof *key_ratios; k++)
        printf(" %26s", key_ratios[k].label);
    printf("\n");
    for (int z = 0; z < o->nsizes; z++) {
        printf("%-12zu", o->sizes[z]);
        for (size_t k = 0; k < sizeof key_ratios / sizeof *key_ratios; k++) {
            double v = key_ratio(r, r->lat, st, (int)k, z);
            char buf[32];
            int ok = st[key_ratios[k].num] == ST_READY && st[key_ratios[k].den] == ST_READY;
            printf(" %26s", cell(ok ? ST_READY : ST_OFF, v, buf, sizeof buf));
            if (!isnan(v)) bench_csv_row(BENCH, key_ratios[k].label, o->sizes[z], "ratio", v);
        }
        printf("\n");
    }
}

static void print_bw_ratio(const struct options *o, const struct results *r,
                           const enum scheme_status *st)
{
    int ok = st[S_NARMA_NOTIFY] == ST_READY && st[S_RAW_SHM] == ST_READY;
    printf("\n# Streaming bandwidth ratio (median of per-repetition ratios)\n# %-10s %26s\n",
           "Size", "notify_bw/raw_memcpy_bw");
    for (int z = 0; z < o->nsizes; z++) {
        double v =
            ok ? rep_median(r, at(r, r->bw, S_NARMA_NOTIFY, z, 0), at(r, r->bw, S_RAW_SHM, z, 0))
               : NAN;
        char buf[32];
        printf("%-12zu %26s\n", o->sizes[z], cell(ok ? ST_READY : ST_OFF, v, buf, sizeof buf));
        if (ok) bench_csv_row(BENCH, "notify_bw/raw_memcpy_bw", o->sizes[z], "ratio", v);
    }
}

static void print_costs(const struct pp_costs *c)
{
    printf("\n# Cost model (paper section V-A; us). Paper, foMPI-NA on a Cray XC30: t_init 0.07, "
           "t_free 0.04, t_start 0.008, o_s 0.29, o_r 0.07\n");
    printf("# %10s %10s %10s %10s %12s %10s\n", "t_init", "t_free", "t_start", "o_s", "o_s+flush",
           "o_r");
    printf("  %10.3f %10.3f %10.3f %10.3f %12.3f %10.3f\n", c->t_init, c->t_free, c->t_start,
           c->o_s, c->o_s_flush, c->o_r);
    printf(
        "# t_init/t_start/t_free: per call over batches of 64 (t_free of active requests);\n"
        "# o_s: NARMA_Put_notify of 8 B while the target drains (+flush: with NARMA_Win_flush);\n"
        "# o_r: NARMA_Start+NARMA_Test finding one arrived notification (clock overhead "
        "subtracted; %ld of the tests found nothing)\n",
        c->o_r_misses);
    const struct {
        const char *m;
        double v;
    } rows[] = {{"t_init_us", c->t_init},       {"t_free_us", c->t_free},
                {"t_start_us", c->t_start},     {"o_s_us", c->o_s},
                {"o_s_flush_us", c->o_s_flush}, {"o_r_us", c->o_r}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        bench_csv_row("costs", "narma_notify", 8, rows[i].m, rows[i].v);
}

static int size_index(const struct options *o, size_t size)
{
    for (int z = 0; z < o->nsizes; z++)
        if (o->sizes[z] == size) return z;
    return -1;
}

static void print_summary(const struct options *o, const struct results *r,
                          const enum scheme_status *st, int failed)
{
    int z8 = size_index(o, 8), z1m = size_index(o, 1u << 20);
    double v[4] = {NAN, NAN, NAN, NAN};
    if (z8 >= 0) {
        v[0] = key_ratio(r, r->lat, st, 0, z8);
        v[1] = key_ratio(r, r->lat, st, 1, z8);
        v[2] = key_ratio(r, r->lat, st, 2, z8);
    }
    if (z1m >= 0 && o->bw && st[S_NARMA_NOTIFY] == ST_READY && st[S_RAW_SHM] == ST_READY)
        v[3] = rep_median(r, at(r, r->bw, S_NARMA_NOTIFY, z1m, 0), at(r, r->bw, S_RAW_SHM, z1m, 0));
    printf("\n# SUMMARY notify/sendrecv@8B=%.2f notify/raw@8B=%.2f narma_pscw/mpi_pscw@8B=%.2f "
           "notify_bw/raw_memcpy_bw@1MiB=%.2f%s\n",
           v[0], v[1], v[2], v[3], failed ? "  VALIDATION FAILED (see above)" : "");
}

/* ---- header ------------------------------------------------------------ */

/* Median cost of one clock read, in nanoseconds. */
static double clock_cost_ns(void)
{
    double d[257];
    double t = bench_now();
    for (int i = 0; i < 257; i++) {
        double t2 = bench_now();
        d[i] = t2 - t;
        t = t2;
    }
    return 1e9 * bench_median(d, 257);
}

struct whereabouts {
    int cpu;
    char host[MPI_MAX_PROCESSOR_NAME];
};

static void print_header(const struct options *o, const struct pp_env *env, int world,
                         const char *transport, const enum scheme_status *st)
{
    struct whereabouts me = {.cpu = sched_getcpu()}, peer;
    int len;
    MPI_CHECK(MPI_Get_processor_name(me.host, &len));
    if (env->rank == PP_SERVER) {
        MPI_CHECK(MPI_Send(&me, sizeof me, MPI_BYTE, env->peer, 0, env->comm));
        return;
    }
    MPI_CHECK(MPI_Recv(&peer, sizeof peer, MPI_BYTE, env->peer, 0, env->comm, MPI_STATUS_IGNORE));
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    lib[strcspn(lib, "\n")] = '\0';
    const char *tenv = getenv("NARMA_TRANSPORT");

    printf("# narma pingpong: half round-trip latency and streaming bandwidth, interleaved\n");
    printf("# MPI library     : %s\n", lib);
    printf("# narma version   : %s\n", pp_narma_version());
    printf("# narma transport : %s (NARMA_TRANSPORT=%s)\n", transport, tenv ? tenv : "unset");
    printf("# ranks           : %d (ranks 0 and 1 measure%s)\n", world,
           world > 2 ? ", the others wait at a barrier" : "");
    printf("# rank 0 (client) : host %s, core %d\n", me.host, me.cpu);
    printf("# rank 1 (server) : host %s, core %d\n", peer.host, peer.cpu);
    printf("# shared memory   : %s\n", env->shm_comm != MPI_COMM_NULL ? "yes" : "no (raw_shm off)");
    printf("# repetitions %d; iterations per block %ld up to %d B, then %ld*%d/size (>= %d); "
           "warm-up iters/10 + 1 validated round\n",
           o->reps, o->iters, SCALE_FROM, o->iters, SCALE_FROM, MIN_ITERS);
    printf("# timing: CLOCK_MONOTONIC, %.0f ns a read; a sample is the mean of %ld round trips "
           "when a block has >= 8000, else of 1\n",
           clock_cost_ns(), batch_for(8000));
    printf("# the receiver reads the first and last byte of every message (pp_consume)\n");
    printf("# bandwidth: windows of %d messages, one synchronisation + ack per window\n",
           PP_WINDOW);
    printf("# schemes:\n");
    for (int s = 0; s < S_COUNT; s++)
        if (st[s] != ST_OFF)
            printf("#   %-15s %s%s\n", schemes[s]->name, schemes[s]->what,
                   st[s] == ST_UNAVAILABLE ? " [unavailable]" : "");
    fflush(stdout);
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int world_rank, world_size;
    if (pp_narma_init(&argc, &argv) != 0) {
        fprintf(stderr, "pingpong: NARMA_Init failed\n");
        return 1;
    }
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));

    struct options o;
    int bad = parse_options(argc, argv, &o, world_rank == 0);
    if (bad || world_size < 2) {
        if (!bad && world_rank == 0)
            fprintf(stderr, "pingpong: needs 2 ranks (mpiexec -n 2 -bind-to core)\n");
        pp_narma_finalize();
        return bad < 0 ? 0 : 1; /* --help is not an error */
    }

    struct pp_env env = {.shm_comm = MPI_COMM_NULL};
    MPI_CHECK(
        MPI_Comm_split(MPI_COMM_WORLD, world_rank < 2 ? 0 : MPI_UNDEFINED, world_rank, &env.comm));
    int failed = 0;
    if (env.comm != MPI_COMM_NULL) {
        signal(SIGALRM, watchdog);
        env.rank = world_rank;
        env.peer = 1 - world_rank;
        for (int z = 0; z < o.nsizes; z++)
            if (o.sizes[z] > env.max_size) env.max_size = o.sizes[z];
        MPI_Comm shm;
        int nshm;
        MPI_CHECK(MPI_Comm_split_type(env.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
        MPI_CHECK(MPI_Comm_size(shm, &nshm));
        if (nshm == 2)
            env.shm_comm = shm;
        else
            MPI_CHECK(MPI_Comm_free(&shm));
        if (world_rank == 0) bench_csv_open(o.csv);

        enum scheme_status st[S_COUNT];
        struct pp_inst inst[S_COUNT];
        for (int s = 0; s < S_COUNT; s++) {
            st[s] = ST_OFF;
            if (!o.selected[s]) continue;
            arm_watchdog(o.timeout, "setup", schemes[s]->name, 0, 0);
            st[s] = schemes[s]->setup(&env, &inst[s]) == PP_READY ? ST_READY : ST_UNAVAILABLE;
        }
        char transport[64];
        arm_watchdog(o.timeout, "setup", "narma transport query", 0, 0);
        pp_narma_transport(&env, transport, sizeof transport);
        alarm(0);
        print_header(&o, &env, world_size, transport, st);

        struct results res = {.nsizes = o.nsizes, .reps = o.reps};
        size_t cells = (size_t)S_COUNT * o.nsizes * o.reps;
        res.lat = malloc(cells * sizeof *res.lat);
        res.bw = malloc(cells * sizeof *res.bw);
        if (!res.lat || !res.bw) bench_die(BENCH_HERE, "out of memory");
        for (size_t i = 0; i < cells; i++)
            res.lat[i] = res.bw[i] = NAN;

        uint64_t block = 0;
        double t0 = bench_now();
        run_latency(&o, &env, inst, st, &res, &block);
        double t1 = bench_now();
        if (o.bw) run_bandwidth(&o, &env, inst, st, &res, &block);
        double t2 = bench_now();
        struct pp_costs costs;
        if (o.costs) {
            arm_watchdog(o.timeout, "cost model", "narma_notify", 8, 0);
            pp_narma_costs(&env, 4096, &costs);
            alarm(0);
        }
        for (int s = 0; s < S_COUNT; s++)
            failed |= st[s] == ST_FAILED;

        if (env.rank == PP_CLIENT) {
            print_table(&o, &res, res.lat, st, 0, V_VALUE,
                        "Size  Latency (us): half round trip, median over repetitions of "
                        "per-block medians",
                        "latency_us");
            print_table(&o, &res, res.lat, st, 0, V_RATIO_SENDRECV,
                        "Latency ratio to mpi_sendrecv (median of per-repetition ratios)",
                        "ratio_to_sendrecv");
            print_table(&o, &res, res.lat, st, 0, V_RATIO_RAW,
                        "Latency ratio to raw_shm (median of per-repetition ratios)",
                        "ratio_to_raw");
            print_key_ratios(&o, &res, st);
            print_table(&o, &res, res.lat, st, 0, V_SPREAD,
                        "Latency noise: max/min over repetitions of the per-block medians",
                        "latency_spread");
            if (o.bw) {
                print_table(&o, &res, res.bw, st, 1, V_VALUE,
                            "Size  Bandwidth (MB/s): windows of 64 back-to-back messages",
                            "bw_MBps");
                print_table(&o, &res, res.bw, st, 1, V_RATIO_SENDRECV,
                            "Bandwidth ratio to mpi_sendrecv", "bw_ratio_to_sendrecv");
                print_table(&o, &res, res.bw, st, 1, V_RATIO_RAW, "Bandwidth ratio to raw_shm",
                            "bw_ratio_to_raw");
                print_bw_ratio(&o, &res, st);
            }
            if (o.costs) print_costs(&costs);
            printf("\n# run time: latency %.1f s, bandwidth %.1f s\n", t1 - t0, t2 - t1);
            print_summary(&o, &res, st, failed);
            fflush(stdout);
        }

        for (int s = 0; s < S_COUNT; s++)
            if (st[s] == ST_READY || st[s] == ST_FAILED) schemes[s]->teardown(&inst[s]);
        bench_csv_close();
        free(res.lat);
        free(res.bw);
        if (env.shm_comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&env.shm_comm));
        MPI_CHECK(MPI_Comm_free(&env.comm));
    }
    /* Ranks beyond the pair idle here; they sleep between tests rather than spin on a
     * core the pair needs. The reduction tells every rank about validation failures. */
    MPI_Request idle;
    int done = 0;
    MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &idle));
    for (;;) {
        MPI_CHECK(MPI_Test(&idle, &done, MPI_STATUS_IGNORE));
        if (done) break;
        usleep(1000);
    }
    pp_narma_finalize();
    return failed ? 1 : 0;
}
