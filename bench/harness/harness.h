/*
 * The harness every narma benchmark links (as OSU's util/osu_util*.c): one
 * option parser (the shared options plus those a benchmark registers), the
 * run header (MPI library, narma version and transport, ranks, pinning),
 * interleaved repetitions (each repetition runs every selected scheme once, in
 * an order rotated per repetition), medians and medians of per-repetition
 * ratios, OSU-style tables and CSV rows (bench,scheme,size,metric,value), a
 * watchdog, timing, validation patterns and polling atomics.
 *
 * A benchmark file holds only its schemes and what it reports. Everything
 * here is a client of <narma/narma.h>; nothing includes internals.
 */
#ifndef NARMA_BENCH_HARNESS_H
#define NARMA_BENCH_HARNESS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <mpi.h>
#include <narma/narma.h>

/* Instruction counts under callgrind are optional: the build never needs valgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif

/* ---- fatal errors ------------------------------------------------------ */

/** Print "bench: <where>: <message>" and abort every rank. */
void bench_die(const char *where, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#define BENCH_STR2(x) #x
#define BENCH_STR(x)  BENCH_STR2(x)
#define BENCH_HERE    __FILE__ ":" BENCH_STR(__LINE__)

/** Abort unless an MPI call returns MPI_SUCCESS. */
#define MPI_CHECK(call)                                                    \
    do {                                                                   \
        int bench_rc_ = (call);                                            \
        if (bench_rc_ != MPI_SUCCESS)                                      \
            bench_die(BENCH_HERE, "%s -> MPI error %d", #call, bench_rc_); \
    } while (0)

/** Abort every rank unless a narma call returns NARMA_SUCCESS. */
#define NARMA_CHECK(call)                                                       \
    do {                                                                        \
        int bench_nrc_ = (call);                                                \
        if (bench_nrc_ != NARMA_SUCCESS)                                        \
            bench_die(BENCH_HERE, "%s -> %s (%d; MPI error %d)", #call,         \
                      NARMA_Strerror(bench_nrc_), bench_nrc_,                   \
                      bench_nrc_ == NARMA_ERR_MPI ? NARMA_Get_mpi_error() : 0); \
    } while (0)

/* ---- options ------------------------------------------------------------ */
/*
 * Every benchmark parses its command line with bench_parse(): the shared
 * options it asks for (spec->uses) plus its own (spec->opts). Values keep the
 * defaults the caller stored unless the option is given; --quick applies the
 * spec's quick defaults to the shared options that were not given. Parsing is
 * identical on every rank; only rank 0 prints (usage, errors).
 */
#define BENCH_MAX_SIZES   64
#define BENCH_MAX_SCHEMES 32

enum bench_uses {
    BENCH_USE_REPS = 1 << 0,    /**< --reps R: interleaved repetitions */
    BENCH_USE_ITERS = 1 << 1,   /**< --iters N: timed iterations per block */
    BENCH_USE_WARMUP = 1 << 2,  /**< --warmup N: untimed iterations before a block */
    BENCH_USE_SIZES = 1 << 3,   /**< --sizes LIST, --max-size N */
    BENCH_USE_SCHEMES = 1 << 4, /**< --schemes LIST (spec->schemes) */
    BENCH_USE_TIMEOUT = 1 << 5, /**< --timeout S: the watchdog */
    BENCH_USE_ALL = 0x3f,
};

/** The shared options (--csv, --quick and --help are always accepted). */
struct bench_common {
    int reps;
    long iters, warmup;
    int timeout;
    size_t sizes[BENCH_MAX_SIZES];
    int nsizes;
    size_t max_size; /**< default list: powers of two from 8 to max_size */
    const char *csv;
    int quick;
    int selected[BENCH_MAX_SCHEMES]; /**< per scheme of spec->schemes (all by default) */
    unsigned given;                  /**< bench_uses bits of the options on the command line */
};

enum bench_opt_type {
    BENCH_OPT_INT,    /**< int *, at least `min` */
    BENCH_OPT_LONG,   /**< long *, at least `min` */
    BENCH_OPT_DOUBLE, /**< double *, greater than 0 */
    BENCH_OPT_SIZE,   /**< size_t *: "8", "4K", "1MiB" */
    BENCH_OPT_STRING, /**< const char ** */
    BENCH_OPT_FLAG,   /**< int *, set to 1; no argument */
    BENCH_OPT_UNFLAG, /**< int *, set to 0; no argument */
};

/** One option of a benchmark's own. */
struct bench_opt {
    const char *name; /**< without the leading "--" */
    enum bench_opt_type type;
    void *ptr;
    long min;         /**< INT and LONG: smallest value accepted */
    const char *help; /**< one line; "%s"-free */
};

struct bench_spec {
    const char *prog;  /**< "pingpong" */
    const char *usage; /**< "mpiexec -n 2 -bind-to core pingpong [options]" */
    unsigned uses;     /**< enum bench_uses */
    const char *const *schemes;
    int nschemes;
    const struct bench_opt *opts;
    int nopts;
    /** --quick: reps, iters and sizes (a list, NULL: keep) for options not given. */
    int quick_reps;
    long quick_iters;
    const char *quick_sizes;
};

/**
 * Parse argv (collective-free; call on every rank). The caller sets the
 * defaults of c and of its own options first. Returns 0, 1 after an error
 * (printed on rank 0), or -1 after --help.
 */
int bench_parse(int argc, char **argv, const struct bench_spec *spec, struct bench_common *c);

/* ---- time and statistics ---------------------------------------------- */

/** Monotonic time in seconds (vDSO clock_gettime, ~20 ns). */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Median of v[0..n) (reorders v). NaN when n == 0. */
double bench_median(double *v, size_t n);
/** Smallest and largest of v[0..n). */
void bench_minmax(const double *v, size_t n, double *min, double *max);
/**
 * Median over reps of x[i] (y == NULL) or of the per-repetition ratio
 * x[i]/y[i]: both schemes of a ratio saw the same machine state. NaNs are
 * skipped; NaN when nothing is left.
 */
double bench_rep_median(const double *x, const double *y, int reps);
/** max/min over reps of x (the noise of a scheme). */
double bench_spread(const double *x, int reps);

/* ---- cycle counter ------------------------------------------------------ */
/*
 * Ticks for brackets around one call, where clock_gettime (~20 ns a read) would
 * swamp what it measures: rdtsc on x86-64 (the invariant TSC, a fixed-rate
 * reference clock, not core cycles), cntvct_el0 on aarch64 (the generic timer,
 * often only 25-100 MHz), CLOCK_MONOTONIC nanoseconds elsewhere. The fences keep
 * the call's instructions between the two reads; the bracket's own cost is for
 * the caller to measure (an empty bracket) and subtract.
 */
static inline uint64_t bench_ticks_begin(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;
    /* lfence: earlier instructions have finished before the read (and later ones start after) */
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return (uint64_t)hi << 32 | lo;
#elif defined(__aarch64__)
    uint64_t t;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(t)::"memory");
    return t;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static inline uint64_t bench_ticks_end(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi, aux;
    /* rdtscp waits for the measured instructions; lfence keeps later ones out */
    __asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    (void)aux;
    return (uint64_t)hi << 32 | lo;
#elif defined(__aarch64__)
    uint64_t t;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t)::"memory");
    return t;
#else
    return bench_ticks_begin();
#endif
}

/** What bench_ticks_* read, for the output header: "rdtsc (x86-64 TSC)", ... */
const char *bench_ticks_source(void);
/** Ticks per nanosecond, calibrated once (about 20 ms) against CLOCK_MONOTONIC. */
double bench_ticks_per_ns(void);
/** Smallest step between two reads, in ticks (virtual machines may coarsen the TSC). */
double bench_ticks_granularity(void);

/* ---- instruction counts under callgrind --------------------------------- */
/*
 * A benchmark run under `valgrind --tool=callgrind --collect-atstart=no` counts
 * instructions only between pairs of bench_instr_toggle(), and writes one dump per
 * bench_instr_dump() whose description names what was counted and how many calls
 * (scripts/instructions.sh reads them). Without valgrind, or when the build did
 * not find <valgrind/callgrind.h>, these do nothing.
 */
enum bench_instr_state {
    BENCH_INSTR_ON,           /**< under callgrind: toggles and dumps take effect */
    BENCH_INSTR_NOT_UNDER_VG, /**< built with the header, not running under valgrind */
    BENCH_INSTR_NO_HEADER,    /**< built without <valgrind/callgrind.h> */
};
/** Whether instruction counting can work in this process (sets what the toggles do). */
enum bench_instr_state bench_instr_init(void);
/** One line saying why no instructions are counted (NULL when they are). */
const char *bench_instr_why_not(enum bench_instr_state s);
extern int bench_instr_on;
/** Start or stop counting (callgrind's CALLGRIND_TOGGLE_COLLECT); inline so it brackets closely. */
static inline void bench_instr_toggle(void)
{
#ifdef BENCH_HAVE_CALLGRIND
    if (bench_instr_on) CALLGRIND_TOGGLE_COLLECT;
#endif
}
/** Forget what was counted so far. */
void bench_instr_zero(void);
/** Write what was counted since the last dump or zero into a dump described by desc. */
void bench_instr_dump(const char *desc);

/* ---- interleaved repetitions ------------------------------------------ */

/**
 * The k-th scheme to run in repetition rep among the selected ones (-1 when
 * none): the order rotates per repetition so no scheme always runs first, or
 * right after the same neighbour, on a machine whose speed drifts.
 */
int bench_rotated(const int *selected, int n, int rep, int k);
/** Status of a scheme over a run. */
enum bench_status { BENCH_OFF, BENCH_UNAVAILABLE, BENCH_READY, BENCH_FAILED };

/** Number of selected schemes. */
int bench_count(const int *selected, int n);
/**
 * One block of an interleaved run: scheme s at size index z in repetition rep
 * (collective on the run's comm). Returns the value to store (NaN: none) and
 * sets *bad when the block failed validation on this rank.
 */
typedef double (*bench_block_fn)(void *ctx, int s, int z, int rep, int *bad);

/** What bench_interleave runs. */
struct bench_run {
    const char *prog, *what;  /**< name the work on the watchdog and progress lines */
    const char *const *names; /**< scheme names */
    int nschemes;
    const size_t *sizes; /**< NULL: one block per scheme and repetition */
    int nsizes;          /**< 1 with sizes == NULL */
    int reps, timeout;
    MPI_Comm comm; /**< agrees on failures; rank 0 prints progress */
};

/**
 * The run of the shared options c: its repetitions, timeout and (with_sizes)
 * sizes; what = "run".
 */
struct bench_run bench_run_of(const char *prog, const struct bench_common *c,
                              const char *const *names, int nschemes, int with_sizes,
                              MPI_Comm comm);
/** status[s] = BENCH_READY for the selected schemes, BENCH_OFF for the others. */
void bench_status_init(enum bench_status *status, const int *selected, int n);
/** 1 when some scheme is BENCH_FAILED. */
int bench_failed(const enum bench_status *status, int n);

/**
 * The interleaved repetitions: for every repetition and size, every scheme
 * that is BENCH_READY runs one block, in an order rotated per repetition and
 * size; the watchdog names each block; a failure on any rank marks the scheme
 * BENCH_FAILED (it runs no more blocks). out[(s*nsizes + z)*reps + rep] gets
 * the block's value (out may be NULL). A line per repetition on stderr shows
 * that a long run is alive.
 */
void bench_interleave(const struct bench_run *run, enum bench_status *status, bench_block_fn fn,
                      void *ctx, double *out);

/** Agree across comm on a failure flag (max). */
int bench_any(int flag, MPI_Comm comm);

/* ---- header ------------------------------------------------------------- */

/** Transport of a fresh narma window on comm (collective). */
void bench_transport(MPI_Comm comm, char *buf, size_t len);
/**
 * Collective on comm; rank 0 prints the standard header: "# <title>", then
 * "# MPI library     : ...", narma version, narma transport (and
 * NARMA_TRANSPORT), NARMA_NODE_SIZE when set, ranks and nodes, host and CPU,
 * and the core each rank runs on.
 */
void bench_print_header(const char *title, MPI_Comm comm);

/** Rank 0's "# schemes         : a b c" line: the selected ones of names[0..n). */
void bench_print_schemes(const char *const *names, const int *selected, int n);

/* ---- watchdog ----------------------------------------------------------- */
/*
 * A benchmark that hangs (a lost notification, a mismatched epoch) fails
 * loudly instead of sitting until the launcher's timeout: bench_watchdog()
 * (re)arms an alarm naming what runs; when it fires the process prints
 * "TIMEOUT: ..." on stderr and exits with 3.
 */
/** Arm for `seconds` (0 disarms); prog/what/scheme/size/rep name the work (scheme NULL, rep < 0:
 * not said). */
void bench_watchdog(int seconds, const char *prog, const char *what, const char *scheme,
                    size_t size, int rep);

/* ---- random numbers ----------------------------------------------------- */

/** splitmix64 step: a well-mixed 64-bit word; *state advances. */
uint64_t bench_rand(uint64_t *state);
/** A uniform double in [0, 1) that depends only on key (matrices generated anywhere). */
double bench_uniform(uint64_t key);

/* ---- sizes ------------------------------------------------------------- */

/** Parse "8", "4K", "1M", "2MiB": bytes, or 0 on a malformed string. */
size_t bench_parse_size(const char *s);
/** Parse a comma-separated size list into out[0..cap); returns the count, or -1 on error. */
int bench_parse_size_list(const char *s, size_t *out, int cap);

/* ---- validation -------------------------------------------------------- */

/** Fill buf[0..n) with a pattern derived from seed (different seeds give different bytes). */
void bench_fill(void *buf, size_t n, uint64_t seed);
/** Offset of the first byte of buf[0..n) that differs from bench_fill(seed), or -1 if none. */
long bench_verify(const void *buf, size_t n, uint64_t seed);
/** The byte bench_fill(seed) puts at offset i. */
unsigned char bench_pattern_byte(uint64_t seed, size_t i);

/* ---- polling ----------------------------------------------------------- */
/*
 * Flags in window or shared memory are plain uint64_t words written by another
 * process (or by the MPI library on its behalf). Loads go through C11 atomics
 * so the compiler re-reads memory on every poll; the acquire pairs with the
 * writer's release store (raw shm) or with the completion of the flag put
 * (MPI/narma windows, where MPI_Win_sync/NARMA_Win_sync supply the fence).
 */
static inline uint64_t bench_load_acquire(const uint64_t *p)
{
    return atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)p, memory_order_acquire);
}
static inline void bench_store_release(uint64_t *p, uint64_t v)
{
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)p, v, memory_order_release);
}
static inline void bench_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* ---- memory ------------------------------------------------------------ */

/** 64-byte aligned, zeroed allocation; aborts on failure. Free with free(). */
void *bench_alloc(size_t n);

/* ---- CSV --------------------------------------------------------------- */

/** Open the CSV file (NULL path: CSV disabled) and write the header line. */
void bench_csv_open(const char *path);
/** Append "bench,scheme,size,metric,value" (no-op when disabled). */
void bench_csv_row(const char *bench, const char *scheme, size_t size, const char *metric,
                   double value);
void bench_csv_close(void);

/* ---- tables ------------------------------------------------------------- */

/**
 * A table cell: "FAILED" when failed, "-" for NaN, else the value with three
 * significant decimals (buf holds it).
 */
const char *bench_cell(int failed, double v, char *buf, size_t len);

/** A ratio of two schemes: numerator over denominator (indices into the scheme names). */
struct bench_pair {
    int num, den;
};

/**
 * Print "# <title> (median of per-repetition ratios)" and, for every pair
 * whose schemes are both selected, "  num/den  value", where value is the
 * median over reps of x[num*reps + r] / x[den*reps + r]; each also as a CSV
 * row (bench, "num/den", size, "ratio", value).
 */
void bench_print_pairs(const char *bench, const char *title, const char *const *names,
                       const int *selected, const struct bench_pair *pairs, int npairs,
                       const double *x, int reps, size_t size);

/** Print "prog: message" on rank 0 of MPI_COMM_WORLD only (option errors); returns 1. */
int bench_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** After bench_parse returned rc != 0: finalize narma; the exit code (0 after --help). */
int bench_stop(int rc);

/** An OSU-style table of values laid out [(scheme*nsizes + size)*reps + rep]. */
struct bench_table {
    const char *title;  /**< "# <title>" */
    const char *prog;   /**< CSV bench column */
    const char *metric; /**< CSV metric column; NULL: no CSV rows */
    const char *const *names;
    const enum bench_status *status; /**< a column per scheme that is not BENCH_OFF */
    int nschemes;
    const size_t *sizes;
    int nsizes, reps;
    double scale;     /**< the printed value is scale * the median (0: 1) */
    double csv_scale; /**< the same for the CSV value (0: scale) */
    int den;          /**< -1: medians; else medians of per-repetition ratios to scheme den */
    int invert;       /**< with den: den's value over the scheme's (a speed-up) */
    int spread;       /**< max/min over repetitions instead */
};

/** Print the table ("# Size" and a column per scheme, a row per size) and its CSV rows. */
void bench_print_table(const struct bench_table *t, const double *x);

#endif /* NARMA_BENCH_HARNESS_H */
