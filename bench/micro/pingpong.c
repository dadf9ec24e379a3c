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
 * The streaming rate is the bandwidth block at small sizes read as messages
 * per second: PP_WINDOW (64) notified puts and one flush per window for
 * narma_notify, against MPI's own idiom (lock_all, 64 MPI_Put, flush, flag)
 * in mpi_flush_flag.
 *
 * --flavor chooses the window of the narma schemes (allocate, create,
 * dynamic); --node-size N sets NARMA_NODE_SIZE before narma initialises: with
 * N = 1 the two measuring ranks are on different pretend nodes (the pair goes
 * through mpi inside a shm+mpi window when more ranks share a node), and the
 * header says which transport serves the measured pair.
 *
 * Per-call costs (--no-calls to skip, --call-size N, default 8 B): after the timed
 * phases, probe rounds of the schemes that have them (pingpong.h, struct pp_meter)
 * bracket one kind of call at a time with a cycle counter (bench_ticks_*: rdtsc,
 * cntvct_el0 or clock_gettime), so the timed round trips stay as they were. The
 * table gives per call kind the median and the mean ticks (empty bracket
 * subtracted), ns, and the scheme's half round trip beside them. With --instr under
 * `valgrind --tool=callgrind --collect-atstart=no` the same brackets count
 * instructions and each block is dumped with the call's name and the number of
 * calls it made; scripts/instructions.sh runs both and prints Ir per call.
 *
 * The schemes live in pp_mpi.c, pp_narma.c and pp_shm.c behind the interface
 * in pingpong.h; this file is the driver and the reporting. Options, header,
 * statistics and CSV come from the harness (bench/harness).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "pingpong.h"

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
    S_NARMA_NOTIFY_CROWD,
    S_NARMA_NOTIFY_CREATE,
    S_NARMA_NOTIFY_DYNAMIC,
    S_NARMA_NOTIFY_DEFERRED,
    S_NARMA_NOTIFY_PERSISTENT,
    S_NARMA_NOTIFY_COUNTER,
    S_NARMA_NOTIFY_COUNTER_POLL,
    S_RAW_SHM,
    S_COUNT
};

static const struct pp_scheme *const schemes[S_COUNT] = {
    [S_MPI_SENDRECV] = &pp_mpi_sendrecv,
    [S_MPI_PSCW] = &pp_mpi_pscw,
    [S_MPI_FENCE] = &pp_mpi_fence,
    [S_MPI_FLUSH_FLAG] = &pp_mpi_flush_flag,
    [S_NARMA_PSCW] = &pp_narma_pscw,
    [S_NARMA_FENCE] = &pp_narma_fence,
    [S_NARMA_LOCK] = &pp_narma_lock,
    [S_NARMA_NOTIFY] = &pp_narma_notify,
    [S_NARMA_NOTIFY_CROWD] = &pp_narma_notify_crowd,
    [S_NARMA_NOTIFY_CREATE] = &pp_narma_notify_create,
    [S_NARMA_NOTIFY_DYNAMIC] = &pp_narma_notify_dynamic,
    [S_NARMA_NOTIFY_DEFERRED] = &pp_narma_notify_deferred,
    [S_NARMA_NOTIFY_PERSISTENT] = &pp_narma_notify_persistent,
    [S_NARMA_NOTIFY_COUNTER] = &pp_narma_notify_counter,
    [S_NARMA_NOTIFY_COUNTER_POLL] = &pp_narma_notify_counter_poll,
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
    {S_NARMA_NOTIFY, S_MPI_FLUSH_FLAG, "notify/flush_flag"},  /* MPI's own idiom */
    {S_NARMA_NOTIFY_CROWD, S_NARMA_NOTIFY, "crowd/notify"},   /* other windows exist */
    {S_NARMA_NOTIFY_CREATE, S_NARMA_NOTIFY, "create/notify"}, /* Win_create vs --flavor */
    {S_NARMA_NOTIFY_DYNAMIC, S_NARMA_NOTIFY, "dynamic/notify"},
    {S_NARMA_NOTIFY_DEFERRED, S_MPI_FLUSH_FLAG, "deferred/flush_flag"}, /* MPI's rules */
    {S_NARMA_NOTIFY_PERSISTENT, S_RAW_SHM, "persistent/raw"},
    {S_NARMA_NOTIFY_PERSISTENT, S_NARMA_NOTIFY, "persistent/notify"},
    {S_NARMA_NOTIFY_COUNTER, S_NARMA_NOTIFY, "counter/notify"}, /* the two models */
    {S_NARMA_NOTIFY_COUNTER_POLL, S_NARMA_NOTIFY, "counter_poll/notify"},
};

/* ---- options ----------------------------------------------------------- */

struct options {
    struct bench_common c; /* --reps, --iters, --warmup, --sizes, --schemes, --csv, ... */
    int bw, costs, calls, instr;
    size_t call_size;
    const char *flavor, *node_size;
};

#define SCALE_FROM 131072 /* above this, iterations shrink in proportion to the size */
#define MIN_ITERS  20
#define BW_BUDGET  ((size_t)1 << 28) /* bytes streamed per timed bandwidth block */
#define BW_MIN_WIN 3

static const char *scheme_names[S_COUNT];

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.c = {.iters = 10000, .warmup = -1, .reps = 7, .timeout = 120},
                          .bw = 1,
                          .costs = 1,
                          .calls = 1,
                          .call_size = 8,
                          .flavor = "allocate"};
    for (int s = 0; s < S_COUNT; s++)
        scheme_names[s] = schemes[s]->name;
    const struct bench_opt own[] = {
        {"flavor", BENCH_OPT_STRING, &o->flavor, 0,
         "window of the narma schemes: allocate|create|dynamic (default allocate)"},
        {"node-size", BENCH_OPT_STRING, &o->node_size, 0,
         "set NARMA_NODE_SIZE=X for the library (ranks per pretend node)"},
        {"no-bw", BENCH_OPT_UNFLAG, &o->bw, 0, "skip the streaming bandwidth and rate tables"},
        {"no-costs", BENCH_OPT_UNFLAG, &o->costs, 0, "skip the cost-model figures"},
        {"no-calls", BENCH_OPT_UNFLAG, &o->calls, 0, "skip the per-call costs (ticks per call)"},
        {"call-size", BENCH_OPT_SIZE, &o->call_size, 0,
         "message size of the per-call costs (default 8)"},
        {"instr", BENCH_OPT_FLAG, &o->instr, 0,
         "count instructions per call under callgrind (see scripts/instructions.sh)"},
    };
    const struct bench_spec spec = {
        .prog = BENCH,
        .usage = "mpiexec -n 2 -bind-to core pingpong [options]\n"
                 "  (--iters: per block up to 128 KiB, then iters*131072/size, at least 20;\n"
                 "   --warmup: default iters/10 + 1; --max-size default 4M)",
        .uses = BENCH_USE_ALL,
        .schemes = scheme_names,
        .nschemes = S_COUNT,
        .opts = own,
        .nopts = (int)(sizeof own / sizeof *own),
        .quick_reps = 1,
        .quick_iters = 200,
        .quick_sizes = "8,4K,64K,1M",
    };
    int rc = bench_parse(argc, argv, &spec, &o->c);
    if (rc == 0 && o->c.quick) o->costs = 0;
    if (rc == 0 && o->instr) o->calls = 1; /* instructions are counted in the per-call blocks */
    int f = 0;
    while (f < PP_NFLAVORS && strcmp(o->flavor, pp_flavor_names[f]))
        f++;
    if (rc == 0 && f == PP_NFLAVORS) rc = bench_error(BENCH ": unknown --flavor '%s'", o->flavor);
    pp_flavor = (enum pp_flavor)(f % PP_NFLAVORS);
    return rc;
}

/* --node-size must reach the environment before narma initialises, i.e. before the
 * options are parsed (bench_parse needs MPI): look for it alone first. */
static void preset_node_size(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--node-size") && i + 1 < argc)
            v = argv[i + 1];
        else if (!strncmp(argv[i], "--node-size=", 12))
            v = argv[i] + 12;
        if (v) setenv("NARMA_NODE_SIZE", v, 1);
    }
}

static long iters_for(const struct options *o, size_t size)
{
    if (size <= SCALE_FROM) return o->c.iters;
    long scaled = (long)((double)o->c.iters * SCALE_FROM / (double)size);
    long floor = o->c.iters < MIN_ITERS ? o->c.iters : MIN_ITERS;
    return scaled > floor ? scaled : floor;
}

/* Round trips per timing sample: 8 while that leaves >= 1000 samples, else 1. */
static long batch_for(long iters) { return iters >= 8000 ? 8 : 1; }

static long windows_for(const struct options *o, size_t size)
{
    long w = (long)(BW_BUDGET / (PP_WINDOW * size));
    long cap = o->c.iters / 50 > BW_MIN_WIN ? o->c.iters / 50 : BW_MIN_WIN;
    return w < BW_MIN_WIN ? BW_MIN_WIN : w > cap ? cap : w;
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
                            long iters, long warm, uint64_t block, double *samples, int *bad)
{
    const struct pp_env *env = inst->env;
    if (s->place) s->place(inst, size);
    bench_fill(inst->sbuf, size, block_seed(block, env->rank));
    s->round(inst, size);
    *bad = check_delivery(s, inst, size, block_seed(block, env->peer), "ping-pong");
    for (long i = 0; i < warm; i++)
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

/* One block of an interleaved phase (latency, or streaming when stream != 0). */
struct phase {
    const struct options *o;
    struct pp_inst *inst;
    uint64_t *block;
    double *samples;
    int stream;
};

static double phase_block(void *ctx, int s, int z, int rep, int *bad)
{
    struct phase *ph = ctx;
    const struct options *o = ph->o;
    size_t size = o->c.sizes[z];
    (void)rep;
    if (ph->stream)
        return stream_block(schemes[s], &ph->inst[s], size, windows_for(o, size), (*ph->block)++,
                            ph->samples, bad);
    long iters = iters_for(o, size);
    long warm = o->c.warmup >= 0 ? o->c.warmup : iters / 10 + 1;
    return latency_block(schemes[s], &ph->inst[s], size, iters, warm, (*ph->block)++, ph->samples,
                         bad);
}

/* One phase through the harness's interleaved repetitions; streaming runs only the
 * schemes that stream, and a failure in either phase retires the scheme. */
static void run_phase(const struct options *o, const struct pp_env *env, struct pp_inst *inst,
                      enum bench_status *st, struct results *res, uint64_t *block, int stream)
{
    static const char *names[S_COUNT];
    enum bench_status phase_st[S_COUNT];
    for (int s = 0; s < S_COUNT; s++) {
        names[s] = schemes[s]->name;
        phase_st[s] = stream && !schemes[s]->stream ? BENCH_OFF : st[s];
    }
    long cap = stream ? windows_for(o, 1) : o->c.iters;
    struct phase ph = {.o = o, .inst = inst, .block = block, .stream = stream};
    ph.samples = malloc((size_t)cap * sizeof *ph.samples);
    if (!ph.samples) bench_die(BENCH_HERE, "out of memory");
    const struct bench_run run = {.prog = BENCH,
                                  .what = stream ? "stream" : "ping-pong",
                                  .names = names,
                                  .nschemes = S_COUNT,
                                  .sizes = o->c.sizes,
                                  .nsizes = o->c.nsizes,
                                  .reps = o->c.reps,
                                  .timeout = o->c.timeout,
                                  .comm = env->comm};
    bench_interleave(&run, phase_st, phase_block, &ph, stream ? res->bw : res->lat);
    for (int s = 0; s < S_COUNT; s++)
        if (phase_st[s] == BENCH_FAILED) st[s] = BENCH_FAILED;
    free(ph.samples);
}

/* ---- per-call costs ---------------------------------------------------- */

/* The calls measured on their own, indexed by enum pp_call (pingpong.h), each in the
 * probe rounds of one scheme; PP_CALL_BRACKET is the driver's empty bracket. */
static const struct {
    int scheme; /* -1: none */
    const char *name;
} call_kinds[PP_NCALLS] = {
    [PP_CALL_BRACKET] = {-1, "empty_bracket"},
    [PP_CALL_PUT_NOTIFY] = {S_NARMA_NOTIFY, "NARMA_Put_notify"},
    [PP_CALL_FLUSH] = {S_NARMA_NOTIFY, "NARMA_Win_flush"},
    [PP_CALL_RECEIVE] = {S_NARMA_NOTIFY, "NARMA_Start+NARMA_Test"},
    [PP_CALL_PSTART] = {S_NARMA_NOTIFY_PERSISTENT, "NARMA_Start(put)"},
    [PP_CALL_PWAIT] = {S_NARMA_NOTIFY_PERSISTENT, "NARMA_Wait(put)"},
    [PP_CALL_POST] = {S_NARMA_PSCW, "NARMA_Win_post"},
    [PP_CALL_START] = {S_NARMA_PSCW, "NARMA_Win_start"},
    [PP_CALL_MPI_SEND] = {S_MPI_SENDRECV, "MPI_Send"},
    [PP_CALL_MPI_RECV] = {S_MPI_SENDRECV, "MPI_Recv"},
    [PP_CALL_MPI_PUT_FLUSH] = {S_MPI_FLUSH_FLAG, "MPI_Put+MPI_Win_flush"},
    [PP_CALL_MPI_POST] = {S_MPI_PSCW, "MPI_Win_post"},
    [PP_CALL_MPI_START] = {S_MPI_PSCW, "MPI_Win_start"},
};

#define CALL_TAG 78 /* the server's samples to the client */

struct calls {
    size_t size;
    int reps;
    long per_block;                  /* probe rounds (or empty brackets) per block */
    double *ticks;                   /* [call][rep]: block median over both ranks' calls */
    double *mean;                    /* [call][rep]: their mean, the slowest 1 % left out */
    long counted[PP_NCALLS];         /* bracketed calls per block, both ranks */
    long misses[PP_NCALLS];          /* over the run, both ranks */
    enum bench_status st[PP_NCALLS]; /* per call kind */
};

struct call_phase {
    const struct pp_env *env;
    struct pp_inst *inst;
    struct calls *res;
    struct pp_meter m;
    uint64_t *all; /* both ranks' ticks of a block (client) */
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* One block: warm-up probe rounds, then per_block rounds with call c bracketed (under
 * callgrind: counted, then dumped with a description naming the call and how many).
 * Returns the median ticks per call over both ranks' calls (client; NaN on the server). */
static double call_block(void *ctx, int c, int z, int rep, int *bad)
{
    struct call_phase *cp = ctx;
    struct calls *res = cp->res;
    const struct pp_env *env = cp->env;
    struct pp_meter *m = &cp->m;
    long n = res->per_block;
    (void)z;
    *bad = 0;
    m->n = 0;
    m->misses = 0;
    if (c == PP_CALL_BRACKET) {
        m->call = PP_CALL_BRACKET;
        bench_instr_zero();
        for (long i = 0; i < n; i++) {
            uint64_t t = pp_meter_begin(m, PP_CALL_BRACKET);
            pp_meter_end(m, PP_CALL_BRACKET, t);
        }
    } else {
        const struct pp_scheme *s = schemes[call_kinds[c].scheme];
        struct pp_inst *inst = &cp->inst[call_kinds[c].scheme];
        if (s->place) s->place(inst, res->size);
        m->call = PP_CALL_NONE;
        for (long i = 0; i < n / 10 + 1; i++)
            s->probe(inst, res->size, m);
        m->call = (enum pp_call)c;
        bench_instr_zero();
        for (long i = 0; i < n; i++)
            s->probe(inst, res->size, m);
    }
    char desc[192];
    snprintf(desc, sizeof desc, "pingpong-calls call=%s size=%zu rank=%d rep=%d calls=%ld",
             call_kinds[c].name, res->size, env->rank, rep, m->n);
    bench_instr_dump(desc);

    long hdr[2] = {m->n, m->misses};
    if (env->rank == PP_SERVER) {
        MPI_CHECK(MPI_Send(hdr, 2, MPI_LONG, env->peer, CALL_TAG, env->comm));
        MPI_CHECK(MPI_Send(m->ticks, (int)m->n, MPI_UINT64_T, env->peer, CALL_TAG, env->comm));
        return NAN;
    }
    long peer[2];
    MPI_CHECK(MPI_Recv(peer, 2, MPI_LONG, env->peer, CALL_TAG, env->comm, MPI_STATUS_IGNORE));
    memcpy(cp->all, m->ticks, (size_t)m->n * sizeof *m->ticks);
    MPI_CHECK(MPI_Recv(cp->all + m->n, (int)peer[0], MPI_UINT64_T, env->peer, CALL_TAG, env->comm,
                       MPI_STATUS_IGNORE));
    long total = m->n + peer[0];
    res->counted[c] = total;
    res->misses[c] += m->misses + peer[1];
    if (total == 0) return NAN;
    qsort(cp->all, (size_t)total, sizeof *cp->all, cmp_u64);
    /* The mean sees through a coarse counter (readings of a call that takes less than a step
     * are 0 or 1 step, in proportion); the slowest 1 % (interrupts, preemption) stay out. */
    long kept = total - total / 100;
    double sum = 0;
    for (long i = 0; i < kept; i++)
        sum += (double)cp->all[i];
    res->mean[(size_t)c * res->reps + rep] = sum / (double)kept;
    return total % 2 ? (double)cp->all[total / 2]
                     : 0.5 * ((double)cp->all[total / 2 - 1] + (double)cp->all[total / 2]);
}

/* The per-call phase: every call kind whose scheme is ready, one block a repetition,
 * interleaved (order rotated per repetition) as the other phases. */
static void run_calls(const struct options *o, const struct pp_env *env, struct pp_inst *inst,
                      enum bench_status *st, struct calls *res)
{
    static const char *names[PP_NCALLS];
    res->size = o->call_size;
    res->reps = o->c.reps;
    res->per_block = o->c.iters < 2000 ? o->c.iters : 2000;
    for (int c = 0; c < PP_NCALLS; c++) {
        names[c] = call_kinds[c].name;
        int s = call_kinds[c].scheme;
        res->st[c] = s < 0                                       ? BENCH_READY
                     : st[s] == BENCH_READY && schemes[s]->probe ? BENCH_READY
                                                                 : BENCH_OFF;
        res->counted[c] = res->misses[c] = 0;
    }
    struct call_phase cp = {.env = env, .inst = inst, .res = res};
    cp.m.cap = res->per_block;
    cp.m.ticks = malloc((size_t)res->per_block * sizeof *cp.m.ticks);
    cp.all = malloc(2 * (size_t)res->per_block * sizeof *cp.all);
    if (!cp.m.ticks || !cp.all) bench_die(BENCH_HERE, "out of memory");
    res->ticks = malloc(2 * (size_t)PP_NCALLS * res->reps * sizeof *res->ticks);
    if (!res->ticks) bench_die(BENCH_HERE, "out of memory");
    res->mean = res->ticks + (size_t)PP_NCALLS * res->reps;
    for (int i = 0; i < 2 * PP_NCALLS * res->reps; i++)
        res->ticks[i] = NAN;
    const struct bench_run run = {.prog = BENCH,
                                  .what = "per-call",
                                  .names = names,
                                  .nschemes = PP_NCALLS,
                                  .sizes = NULL,
                                  .nsizes = 1,
                                  .reps = res->reps,
                                  .timeout = o->c.timeout,
                                  .comm = env->comm};
    bench_interleave(&run, res->st, call_block, &cp, res->ticks);
    for (int c = 0; c < PP_NCALLS; c++)
        if (res->st[c] == BENCH_FAILED && call_kinds[c].scheme >= 0)
            st[call_kinds[c].scheme] = BENCH_FAILED;
    free(cp.m.ticks);
    free(cp.all);
}

/* ---- reporting (client only) ------------------------------------------- */

static double rep_median(const struct results *r, const double *x, const double *y)
{
    return bench_rep_median(x, y, r->reps);
}

enum view { V_VALUE, V_RATIO_SENDRECV, V_RATIO_RAW, V_SPREAD };

static const char *cell(enum bench_status st, double v, char *buf, size_t len)
{
    return bench_cell(st == BENCH_FAILED, st == BENCH_READY ? v : NAN, buf, len);
}

/* One OSU-style table (the harness's): "# Size" then a column per scheme. */
static void print_table(const struct options *o, const struct results *r, double *base,
                        const enum bench_status *st, int stream_only, enum view view,
                        const char *title, const char *metric)
{
    static const char *names[S_COUNT];
    enum bench_status shown[S_COUNT];
    for (int s = 0; s < S_COUNT; s++) {
        names[s] = schemes[s]->name;
        shown[s] = stream_only && !schemes[s]->stream ? BENCH_OFF : st[s];
    }
    const struct bench_table t = {
        .title = title,
        .prog = BENCH,
        .metric = metric,
        .names = names,
        .status = shown,
        .nschemes = S_COUNT,
        .sizes = o->c.sizes,
        .nsizes = r->nsizes,
        .reps = r->reps,
        .den = view == V_RATIO_SENDRECV ? S_MPI_SENDRECV
               : view == V_RATIO_RAW    ? S_RAW_SHM
                                        : -1,
        .spread = view == V_SPREAD,
    };
    bench_print_table(&t, base);
}

static double key_ratio(const struct results *r, double *base, const enum bench_status *st, int k,
                        int z)
{
    if (st[key_ratios[k].num] != BENCH_READY || st[key_ratios[k].den] != BENCH_READY) return NAN;
    return rep_median(r, at(r, base, key_ratios[k].num, z, 0),
                      at(r, base, key_ratios[k].den, z, 0));
}

static void print_key_ratios(const struct options *o, const struct results *r,
                             const enum bench_status *st)
{
    printf("\n# Key latency ratios (median over repetitions of per-repetition ratios)\n# %-10s",
           "Size");
    for (size_t k = 0; k < sizeof key_ratios / sizeof *key_ratios; k++)
        printf(" %26s", key_ratios[k].label);
    printf("\n");
    for (int z = 0; z < o->c.nsizes; z++) {
        printf("%-12zu", o->c.sizes[z]);
        for (size_t k = 0; k < sizeof key_ratios / sizeof *key_ratios; k++) {
            double v = key_ratio(r, r->lat, st, (int)k, z);
            char buf[32];
            int ok = st[key_ratios[k].num] == BENCH_READY && st[key_ratios[k].den] == BENCH_READY;
            printf(" %26s", cell(ok ? BENCH_READY : BENCH_OFF, v, buf, sizeof buf));
            if (!isnan(v)) bench_csv_row(BENCH, key_ratios[k].label, o->c.sizes[z], "ratio", v);
        }
        printf("\n");
    }
}

static void print_bw_ratio(const struct options *o, const struct results *r,
                           const enum bench_status *st)
{
    int ok = st[S_NARMA_NOTIFY] == BENCH_READY && st[S_RAW_SHM] == BENCH_READY;
    printf("\n# Streaming bandwidth ratio (median of per-repetition ratios)\n# %-10s %26s\n",
           "Size", "notify_bw/raw_memcpy_bw");
    for (int z = 0; z < o->c.nsizes; z++) {
        double v =
            ok ? rep_median(r, at(r, r->bw, S_NARMA_NOTIFY, z, 0), at(r, r->bw, S_RAW_SHM, z, 0))
               : NAN;
        char buf[32];
        printf("%-12zu %26s\n", o->c.sizes[z],
               cell(ok ? BENCH_READY : BENCH_OFF, v, buf, sizeof buf));
        if (ok) bench_csv_row(BENCH, "notify_bw/raw_memcpy_bw", o->c.sizes[z], "ratio", v);
    }
}

/* Streaming rate: the bandwidth blocks of small sizes read as messages per second. */
static void print_rate(const struct options *o, const struct results *r,
                       const enum bench_status *st)
{
    printf("\n# Streaming rate (M msgs/s): windows of %d messages, one flush + ack per window; "
           "median over repetitions\n# %-10s",
           PP_WINDOW, "Size");
    for (int s = 0; s < S_COUNT; s++)
        if (st[s] != BENCH_OFF && schemes[s]->stream) printf(" %15s", schemes[s]->name);
    printf(" %26s %26s\n", "notify/flush_flag (rate)", "deferred/notify (rate)");
    for (int z = 0; z < o->c.nsizes && o->c.sizes[z] <= 4096; z++) {
        size_t size = o->c.sizes[z];
        printf("%-12zu", size);
        char buf[32];
        for (int s = 0; s < S_COUNT; s++) {
            if (st[s] == BENCH_OFF || !schemes[s]->stream) continue;
            /* bw is MB/s of `size`-byte messages: messages per microsecond = bw / size */
            double v = rep_median(r, at(r, r->bw, s, z, 0), NULL) / (double)size;
            printf(" %15s", cell(st[s], v, buf, sizeof buf));
            if (st[s] == BENCH_READY && !isnan(v))
                bench_csv_row(BENCH, schemes[s]->name, size, "rate_Mmsgs", v);
        }
        int ok = st[S_NARMA_NOTIFY] == BENCH_READY && st[S_MPI_FLUSH_FLAG] == BENCH_READY;
        double q = ok ? rep_median(r, at(r, r->bw, S_NARMA_NOTIFY, z, 0),
                                   at(r, r->bw, S_MPI_FLUSH_FLAG, z, 0))
                      : NAN;
        printf(" %26s", cell(ok ? BENCH_READY : BENCH_OFF, q, buf, sizeof buf));
        if (ok) bench_csv_row(BENCH, "notify_rate/flush_flag_rate", size, "ratio", q);
        /* MPI's completion rules against narma's default, interleaved in this run */
        ok = st[S_NARMA_NOTIFY_DEFERRED] == BENCH_READY && st[S_NARMA_NOTIFY] == BENCH_READY;
        q = ok ? rep_median(r, at(r, r->bw, S_NARMA_NOTIFY_DEFERRED, z, 0),
                            at(r, r->bw, S_NARMA_NOTIFY, z, 0))
               : NAN;
        printf(" %26s\n", cell(ok ? BENCH_READY : BENCH_OFF, q, buf, sizeof buf));
        if (ok) bench_csv_row(BENCH, "deferred_rate/notify_rate", size, "ratio", q);
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
    for (int z = 0; z < o->c.nsizes; z++)
        if (o->c.sizes[z] == size) return z;
    return -1;
}

/* Median over repetitions of (call c's block value - the empty bracket's, same repetition);
 * v is res->ticks (block medians) or res->mean. */
static double call_ticks(const struct calls *res, const double *v, int c)
{
    double *d = malloc((size_t)res->reps * sizeof *d);
    if (!d) bench_die(BENCH_HERE, "out of memory");
    const double *x = v + (size_t)c * res->reps, *b = v + (size_t)PP_CALL_BRACKET * res->reps;
    for (int r = 0; r < res->reps; r++)
        d[r] = x[r] - b[r];
    double m = bench_rep_median(d, NULL, res->reps);
    free(d);
    return m;
}

static void print_calls(const struct options *o, const struct results *r,
                        const enum bench_status *st, const struct calls *res)
{
    double rate = bench_ticks_per_ns();
    double bracket =
        bench_rep_median(res->ticks + (size_t)PP_CALL_BRACKET * res->reps, NULL, res->reps);
    double bracket_mean =
        bench_rep_median(res->mean + (size_t)PP_CALL_BRACKET * res->reps, NULL, res->reps);
    int z = size_index(o, res->size);
    printf("\n# Per-call cost at %zu B: probe rounds apart from the timed ones (a 0-byte MPI "
           "token follows each message, so the receiving call finds it there); %ld calls a rank "
           "per block; median over %d repetitions of the block median (ticks) and mean without "
           "the slowest 1 %% (mean, ns) of both ranks' calls, less the empty bracket's\n",
           res->size, res->per_block, res->reps);
    printf("# counter: %s, %.3f ticks/ns, steps of %.0f ticks; empty bracket %.1f ticks, mean "
           "%.1f (subtracted); half_rt_us: the scheme's half round trip at this size (latency "
           "table)\n",
           bench_ticks_source(), rate, bench_ticks_granularity(), bracket, bracket_mean);
    printf("# %-24s %-24s %10s %10s %10s %10s %8s %8s\n", "call", "scheme", "half_rt_us", "ticks",
           "mean", "ns", "calls", "missed");
    for (int c = PP_CALL_BRACKET + 1; c < PP_NCALLS; c++) {
        if (res->st[c] == BENCH_OFF) continue;
        int s = call_kinds[c].scheme;
        int ok = res->st[c] == BENCH_READY;
        double rt = z >= 0 ? rep_median(r, at(r, r->lat, s, z, 0), NULL) : NAN;
        double v = ok ? call_ticks(res, res->ticks, c) : NAN;
        double m = ok ? call_ticks(res, res->mean, c) : NAN;
        char b1[32], b2[32], b3[32], b4[32];
        printf("  %-24s %-24s %10s %10s %10s %10s %8ld %8ld\n", call_kinds[c].name,
               schemes[s]->name, cell(st[s], rt, b1, sizeof b1), cell(res->st[c], v, b2, sizeof b2),
               cell(res->st[c], m, b3, sizeof b3), cell(res->st[c], m / rate, b4, sizeof b4),
               res->counted[c], res->misses[c]);
        if (ok) {
            bench_csv_row("calls", call_kinds[c].name, res->size, "ticks", v);
            bench_csv_row("calls", call_kinds[c].name, res->size, "ticks_mean", m);
            bench_csv_row("calls", call_kinds[c].name, res->size, "ns", m / rate);
        }
    }
    bench_csv_row("calls", "empty_bracket", res->size, "ticks", bracket);
    bench_csv_row("calls", "empty_bracket", res->size, "ticks_mean", bracket_mean);
}

static void print_summary(const struct options *o, const struct results *r,
                          const enum bench_status *st, int failed)
{
    int z8 = size_index(o, 8), z1m = size_index(o, 1u << 20);
    double v[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
    if (z8 >= 0) {
        v[0] = key_ratio(r, r->lat, st, 0, z8);
        v[1] = key_ratio(r, r->lat, st, 1, z8);
        v[2] = key_ratio(r, r->lat, st, 2, z8);
        v[4] = key_ratio(r, r->lat, st, 5, z8);
        if (o->bw && st[S_NARMA_NOTIFY] == BENCH_READY && st[S_MPI_FLUSH_FLAG] == BENCH_READY)
            v[5] = rep_median(r, at(r, r->bw, S_NARMA_NOTIFY, z8, 0),
                              at(r, r->bw, S_MPI_FLUSH_FLAG, z8, 0));
    }
    if (z1m >= 0 && o->bw && st[S_NARMA_NOTIFY] == BENCH_READY && st[S_RAW_SHM] == BENCH_READY)
        v[3] = rep_median(r, at(r, r->bw, S_NARMA_NOTIFY, z1m, 0), at(r, r->bw, S_RAW_SHM, z1m, 0));
    printf("\n# SUMMARY notify/sendrecv@8B=%.2f notify/raw@8B=%.2f narma_pscw/mpi_pscw@8B=%.2f "
           "notify_bw/raw_memcpy_bw@1MiB=%.2f notify/flush_flag@8B=%.2f "
           "notify_rate/flush_flag_rate@8B=%.2f%s\n",
           v[0], v[1], v[2], v[3], v[4], v[5], failed ? "  VALIDATION FAILED (see above)" : "");
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

static void print_header(const struct options *o, const struct pp_env *env, int world,
                         const char *transport, const enum bench_status *st,
                         enum bench_instr_state instr)
{
    bench_print_header("narma pingpong: half round-trip latency, streaming bandwidth and rate, "
                       "interleaved",
                       env->comm);
    if (env->rank != PP_CLIENT) return;
    const char *node = getenv("NARMA_NODE_SIZE");
    printf("# ranks measuring : 0 (client) and 1 (server)%s\n",
           world > 2 ? "; the others wait at a barrier" : "");
    printf("# shared memory   : %s\n", env->shm_comm != MPI_COMM_NULL ? "yes" : "no (raw_shm off)");
    printf("# window flavor   : %s (narma schemes; MPI's schemes use MPI_Win_allocate); "
           "its narma transport: %s\n",
           pp_flavor_names[pp_flavor], transport);
    if (node) printf("# pretend nodes   : NARMA_NODE_SIZE=%s set before NARMA_Init\n", node);
    printf("# repetitions %d; iterations per block %ld up to %d B, then %ld*%d/size (>= %d); "
           "one validated round, then %s warm-up rounds\n",
           o->c.reps, o->c.iters, SCALE_FROM, o->c.iters, SCALE_FROM, MIN_ITERS,
           o->c.warmup >= 0 ? "--warmup" : "iters/10 + 1");
    printf("# timing: CLOCK_MONOTONIC, %.0f ns a read; a sample is the mean of %ld round trips "
           "when a block has >= 8000, else of 1\n",
           clock_cost_ns(), batch_for(8000));
    printf("# the receiver reads the first and last byte of every message (pp_consume)\n");
    if (o->calls)
        printf("# per-call costs  : %zu B, counter %s\n", o->call_size, bench_ticks_source());
    if (o->instr) {
        const char *why = bench_instr_why_not(instr);
        printf("# instructions    : %s\n",
               why ? why
                   : "counted under callgrind in the per-call blocks only, one dump a block "
                     "(scripts/instructions.sh reads them)");
    }
    printf("# bandwidth and rate: windows of %d messages, one flush/synchronisation + ack per "
           "window\n",
           PP_WINDOW);
    printf("# schemes:\n");
    for (int s = 0; s < S_COUNT; s++)
        if (st[s] != BENCH_OFF)
            printf("#   %-15s %s%s\n", schemes[s]->name, schemes[s]->what,
                   st[s] == BENCH_UNAVAILABLE ? " [unavailable]" : "");
    fflush(stdout);
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int world_rank, world_size;
    preset_node_size(argc, argv);
    if (pp_narma_init(&argc, &argv) != 0) {
        fprintf(stderr, "pingpong: NARMA_Init failed\n");
        return 1;
    }
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));

    struct options o;
    int bad = parse_options(argc, argv, &o);
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
        env.rank = world_rank;
        env.peer = 1 - world_rank;
        for (int z = 0; z < o.c.nsizes; z++)
            if (o.c.sizes[z] > env.max_size) env.max_size = o.c.sizes[z];
        if (o.calls && o.call_size > env.max_size) env.max_size = o.call_size;
        MPI_Comm shm;
        int nshm;
        MPI_CHECK(MPI_Comm_split_type(env.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
        MPI_CHECK(MPI_Comm_size(shm, &nshm));
        if (nshm == 2)
            env.shm_comm = shm;
        else
            MPI_CHECK(MPI_Comm_free(&shm));
        if (world_rank == 0) bench_csv_open(o.c.csv);

        enum bench_status st[S_COUNT];
        struct pp_inst inst[S_COUNT];
        for (int s = 0; s < S_COUNT; s++) {
            st[s] = BENCH_OFF;
            if (!o.c.selected[s]) continue;
            bench_watchdog(o.c.timeout, BENCH, "setup", schemes[s]->name, 0, -1);
            st[s] = schemes[s]->setup(&env, &inst[s]) == PP_READY ? BENCH_READY : BENCH_UNAVAILABLE;
        }
        char transport[64];
        bench_watchdog(o.c.timeout, BENCH, "setup", "narma transport query", 0, -1);
        pp_narma_transport(&env, transport, sizeof transport);
        alarm(0);
        enum bench_instr_state instr = o.instr ? bench_instr_init() : BENCH_INSTR_NOT_UNDER_VG;
        print_header(&o, &env, world_size, transport, st, instr);

        struct results res = {.nsizes = o.c.nsizes, .reps = o.c.reps};
        size_t cells = (size_t)S_COUNT * o.c.nsizes * o.c.reps;
        res.lat = malloc(cells * sizeof *res.lat);
        res.bw = malloc(cells * sizeof *res.bw);
        if (!res.lat || !res.bw) bench_die(BENCH_HERE, "out of memory");
        for (size_t i = 0; i < cells; i++)
            res.lat[i] = res.bw[i] = NAN;

        uint64_t block = 0;
        double t0 = bench_now();
        run_phase(&o, &env, inst, st, &res, &block, 0);
        double t1 = bench_now();
        if (o.bw) run_phase(&o, &env, inst, st, &res, &block, 1);
        double t2 = bench_now();
        struct calls calls = {.ticks = NULL};
        if (o.calls) run_calls(&o, &env, inst, st, &calls);
        double t3 = bench_now();
        struct pp_costs costs;
        if (o.costs) {
            bench_watchdog(o.c.timeout, BENCH, "cost model", "narma_notify", 8, -1);
            pp_narma_costs(&env, 4096, &costs);
            alarm(0);
        }
        for (int s = 0; s < S_COUNT; s++)
            failed |= st[s] == BENCH_FAILED;

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
                print_rate(&o, &res, st);
            }
            if (o.calls) print_calls(&o, &res, st, &calls);
            if (o.costs) print_costs(&costs);
            printf("\n# run time: latency %.1f s, bandwidth %.1f s, per-call %.1f s\n", t1 - t0,
                   t2 - t1, t3 - t2);
            print_summary(&o, &res, st, failed);
            fflush(stdout);
        }

        for (int s = 0; s < S_COUNT; s++)
            if (st[s] == BENCH_READY || st[s] == BENCH_FAILED) schemes[s]->teardown(&inst[s]);
        bench_csv_close();
        free(res.lat);
        free(res.bw);
        free(calls.ticks);
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
