/* The benchmark harness (see harness.h). */
#define _GNU_SOURCE /* sched_getcpu */
#include "harness.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void bench_die(const char *where, const char *fmt, ...)
{
    int rank = -1;
    int init = 0;
    MPI_Initialized(&init);
    if (init) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench[%d]: %s: ", rank, where);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    if (init) MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* ---- statistics -------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- cycle counter and instruction counts ------------------------------ */

const char *bench_ticks_source(void)
{
#if defined(__x86_64__)
    return "rdtsc (x86-64 TSC: fixed-rate reference ticks, not core cycles)";
#elif defined(__aarch64__)
    return "cntvct_el0 (aarch64 generic timer)";
#else
    return "clock_gettime(CLOCK_MONOTONIC) (ns)";
#endif
}

double bench_ticks_per_ns(void)
{
    static double rate;
    if (rate > 0) return rate;
    /* Spin ~20 ms between two pairs of reads: the clocks' own costs vanish in the span. */
    double t0 = bench_now();
    uint64_t k0 = bench_ticks_begin();
    double t1;
    do
        t1 = bench_now();
    while (t1 - t0 < 0.02);
    uint64_t k1 = bench_ticks_end();
    rate = (double)(k1 - k0) / (1e9 * (t1 - t0));
    return rate;
}

double bench_ticks_granularity(void)
{
    uint64_t step = UINT64_MAX;
    for (int i = 0; i < 1000; i++) {
        uint64_t a = bench_ticks_begin(), b;
        do
            b = bench_ticks_begin();
        while (b == a);
        if (b - a < step) step = b - a;
    }
    return (double)step;
}

int bench_instr_on;

enum bench_instr_state bench_instr_init(void)
{
#ifdef BENCH_HAVE_CALLGRIND
    bench_instr_on = RUNNING_ON_VALGRIND ? 1 : 0;
    return bench_instr_on ? BENCH_INSTR_ON : BENCH_INSTR_NOT_UNDER_VG;
#else
    return BENCH_INSTR_NO_HEADER;
#endif
}

const char *bench_instr_why_not(enum bench_instr_state s)
{
    switch (s) {
    case BENCH_INSTR_NOT_UNDER_VG:
        return "not running under valgrind: no instruction counts (scripts/instructions.sh "
               "runs the benchmark under callgrind)";
    case BENCH_INSTR_NO_HEADER:
        return "built without <valgrind/callgrind.h>: no instruction counts (install valgrind "
               "and rebuild)";
    default:
        return NULL;
    }
}

void bench_instr_zero(void)
{
#ifdef BENCH_HAVE_CALLGRIND
    if (bench_instr_on) CALLGRIND_ZERO_STATS;
#endif
}

void bench_instr_dump(const char *desc)
{
#ifdef BENCH_HAVE_CALLGRIND
    if (bench_instr_on) CALLGRIND_DUMP_STATS_AT(desc);
#else
    (void)desc;
#endif
}

double bench_median(double *v, size_t n)
{
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_minmax(const double *v, size_t n, double *min, double *max)
{
    *min = INFINITY;
    *max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < *min) *min = v[i];
        if (v[i] > *max) *max = v[i];
    }
}

double bench_rep_median(const double *x, const double *y, int reps)
{
    double v[reps > 0 ? reps : 1];
    size_t n = 0;
    for (int i = 0; i < reps; i++) {
        double q = y ? x[i] / y[i] : x[i];
        if (!isnan(q)) v[n++] = q;
    }
    return bench_median(v, n);
}

double bench_spread(const double *x, int reps)
{
    double mn, mx;
    bench_minmax(x, (size_t)reps, &mn, &mx);
    return mx / mn;
}

/* ---- interleaved repetitions ------------------------------------------ */

int bench_rotated(const int *selected, int n, int rep, int k)
{
    int order[BENCH_MAX_SCHEMES], m = 0;
    for (int s = 0; s < n && m < BENCH_MAX_SCHEMES; s++)
        if (selected[s]) order[m++] = s;
    return m ? order[(k + rep) % m] : -1;
}

int bench_count(const int *selected, int n)
{
    int m = 0;
    for (int s = 0; s < n; s++)
        m += selected[s] != 0;
    return m;
}

int bench_any(int flag, MPI_Comm comm)
{
    int any;
    MPI_CHECK(MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_MAX, comm));
    return any;
}

struct bench_run bench_run_of(const char *prog, const struct bench_common *c,
                              const char *const *names, int nschemes, int with_sizes, MPI_Comm comm)
{
    return (struct bench_run){.prog = prog,
                              .what = "run",
                              .names = names,
                              .nschemes = nschemes,
                              .sizes = with_sizes ? c->sizes : NULL,
                              .nsizes = with_sizes ? c->nsizes : 1,
                              .reps = c->reps,
                              .timeout = c->timeout,
                              .comm = comm};
}

void bench_status_init(enum bench_status *status, const int *selected, int n)
{
    for (int s = 0; s < n; s++)
        status[s] = selected[s] ? BENCH_READY : BENCH_OFF;
}

int bench_failed(const enum bench_status *status, int n)
{
    int failed = 0;
    for (int s = 0; s < n; s++)
        failed |= status[s] == BENCH_FAILED;
    return failed;
}

void bench_interleave(const struct bench_run *run, enum bench_status *status, bench_block_fn fn,
                      void *ctx, double *out)
{
    int sel[BENCH_MAX_SCHEMES], rank;
    for (int s = 0; s < run->nschemes && s < BENCH_MAX_SCHEMES; s++)
        sel[s] = status[s] == BENCH_READY;
    int n = bench_count(sel, run->nschemes);
    MPI_CHECK(MPI_Comm_rank(run->comm, &rank));
    double t0 = bench_now();
    for (int rep = 0; rep < run->reps; rep++) {
        if (rank == 0)
            fprintf(stderr, "%s: %s repetition %d/%d (%.1f s)\n", run->prog, run->what, rep + 1,
                    run->reps, bench_now() - t0);
        for (int z = 0; z < run->nsizes; z++) {
            size_t size = run->sizes ? run->sizes[z] : 0;
            for (int k = 0; k < n; k++) {
                int s = bench_rotated(sel, run->nschemes, rep + z, k);
                if (status[s] != BENCH_READY) continue;
                int bad = 0;
                bench_watchdog(run->timeout, run->prog, run->what, run->names[s], size, rep);
                double v = fn(ctx, s, z, rep, &bad);
                if (out) out[((size_t)s * run->nsizes + z) * run->reps + rep] = v;
                if (bench_any(bad, run->comm)) status[s] = BENCH_FAILED;
            }
        }
    }
    alarm(0);
}

/* ---- sizes ------------------------------------------------------------- */

size_t bench_parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return 0;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'b' || *end == 'B') end++;
    return *end ? 0 : (size_t)v;
}

int bench_parse_size_list(const char *s, size_t *out, int cap)
{
    int n = 0;
    char *copy = strdup(s);
    if (!copy) return -1;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        size_t v = bench_parse_size(tok);
        if (v == 0 || n == cap) {
            n = -1;
            break;
        }
        out[n++] = v;
    }
    free(copy);
    return n;
}

/* ---- validation -------------------------------------------------------- */

/* splitmix64: one well-mixed 64-bit word per (seed, word index). */
uint64_t bench_rand(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

double bench_uniform(uint64_t key)
{
    uint64_t s = key * 0x100000001b3ull;
    return (double)(bench_rand(&s) >> 11) * 0x1.0p-53;
}

static inline uint64_t pattern_word(uint64_t seed, size_t w)
{
    uint64_t s = seed * 0x100000001b3ull + w;
    return bench_rand(&s);
}

unsigned char bench_pattern_byte(uint64_t seed, size_t i)
{
    uint64_t w = pattern_word(seed, i / 8);
    return (unsigned char)(w >> (8 * (i % 8)));
}

void bench_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = pattern_word(seed, i / 8);
        memcpy(p + i, &w, 8); /* little-endian order matches bench_pattern_byte on x86/arm */
    }
    for (; i < n; i++)
        p[i] = bench_pattern_byte(seed, i);
}

long bench_verify(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* word at a time; locate the byte only on a mismatch */
        uint64_t w, want = pattern_word(seed, i / 8);
        memcpy(&w, p + i, 8);
        if (w != want) break;
    }
    for (; i < n; i++)
        if (p[i] != bench_pattern_byte(seed, i)) return (long)i;
    return -1;
}

/* ---- memory ------------------------------------------------------------ */

void *bench_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64)) bench_die(BENCH_HERE, "out of memory (%zu bytes)", n);
    memset(p, 0, n);
    return p;
}

/* ---- CSV --------------------------------------------------------------- */

static FILE *csv;

void bench_csv_open(const char *path)
{
    if (!path) return;
    csv = fopen(path, "w");
    if (!csv) bench_die(BENCH_HERE, "cannot open %s: %s", path, strerror(errno));
    fprintf(csv, "bench,scheme,size,metric,value\n");
}

void bench_csv_row(const char *bench, const char *scheme, size_t size, const char *metric,
                   double value)
{
    if (csv) fprintf(csv, "%s,%s,%zu,%s,%.6g\n", bench, scheme, size, metric, value);
}

void bench_csv_close(void)
{
    if (csv) fclose(csv);
    csv = NULL;
}

/* ---- tables ------------------------------------------------------------- */

const char *bench_cell(int failed, double v, char *buf, size_t len)
{
    if (failed) return "FAILED";
    if (isnan(v)) return "-";
    snprintf(buf, len, v >= 1000 ? "%.1f" : v >= 10 ? "%.2f" : "%.3f", v);
    return buf;
}

void bench_print_pairs(const char *bench, const char *title, const char *const *names,
                       const int *selected, const struct bench_pair *pairs, int npairs,
                       const double *x, int reps, size_t size)
{
    printf("\n# %s (median of per-repetition ratios)\n", title);
    for (int p = 0; p < npairs; p++) {
        int a = pairs[p].num, b = pairs[p].den;
        if (!selected[a] || !selected[b]) continue;
        char label[96];
        snprintf(label, sizeof label, "%s/%s", names[a], names[b]);
        double v = bench_rep_median(x + (size_t)a * reps, x + (size_t)b * reps, reps);
        printf("  %-38s %8.3f\n", label, v);
        bench_csv_row(bench, label, size, "ratio", v);
    }
}

int bench_error(const char *fmt, ...)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return 1;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int bench_stop(int rc)
{
    NARMA_Finalize();
    return rc < 0 ? 0 : 1;
}

void bench_print_table(const struct bench_table *t, const double *x)
{
    printf("\n# %s\n# %-10s", t->title, "Size");
    for (int s = 0; s < t->nschemes; s++)
        if (t->status[s] != BENCH_OFF) printf(" %15s", t->names[s]);
    printf("\n");
    double scale = t->scale ? t->scale : 1, csv_scale = t->csv_scale ? t->csv_scale : scale;
    for (int z = 0; z < t->nsizes; z++) {
        printf("%-12zu", t->sizes[z]);
        for (int s = 0; s < t->nschemes; s++) {
            if (t->status[s] == BENCH_OFF) continue;
            const double *v = x + ((size_t)s * t->nsizes + z) * t->reps;
            double m = NAN;
            if (t->spread)
                m = bench_spread(v, t->reps);
            else if (t->den < 0)
                m = bench_rep_median(v, NULL, t->reps);
            else if (t->status[t->den] == BENCH_READY) {
                const double *d = x + ((size_t)t->den * t->nsizes + z) * t->reps;
                m = t->invert ? bench_rep_median(d, v, t->reps) : bench_rep_median(v, d, t->reps);
            }
            int ok = t->status[s] == BENCH_READY && !isnan(m);
            char buf[32];
            printf(" %15s",
                   bench_cell(t->status[s] == BENCH_FAILED, ok ? scale * m : NAN, buf, sizeof buf));
            if (ok && t->metric)
                bench_csv_row(t->prog, t->names[s], t->sizes[z], t->metric, csv_scale * m);
        }
        printf("\n");
    }
}

/* ---- watchdog ----------------------------------------------------------- */

static char watchdog_msg[256];

static void watchdog_fire(int sig)
{
    (void)sig;
    ssize_t r = write(2, watchdog_msg, strlen(watchdog_msg));
    (void)r;
    _exit(3);
}

void bench_watchdog(int seconds, const char *prog, const char *what, const char *scheme,
                    size_t size, int rep)
{
    char r[32] = "";
    if (rep >= 0) snprintf(r, sizeof r, ", repetition %d", rep);
    snprintf(watchdog_msg, sizeof watchdog_msg,
             "\n%s: TIMEOUT: no progress in %d s: %s%s%s, size %zu%s\n", prog, seconds, what,
             scheme ? " of " : "", scheme ? scheme : "", size, r);
    signal(SIGALRM, watchdog_fire);
    alarm((unsigned)(seconds > 0 ? seconds : 0));
}

/* ---- header ------------------------------------------------------------- */

void bench_transport(MPI_Comm comm, char *buf, size_t len)
{
    void *base;
    NARMA_Win win;
    NARMA_CHECK(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, comm, &base, &win));
    const char *t = NARMA_Win_get_transport(win);
    snprintf(buf, len, "%s", t ? t : "(null)");
    NARMA_CHECK(NARMA_Win_free(&win));
}

/* CPU model from /proc/cpuinfo ("unknown" elsewhere). */
static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *v = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !v) continue;
        for (v++; *v == ' ' || *v == '\t'; v++)
            ;
        snprintf(buf, len, "%s", v);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

void bench_print_header(const char *title, MPI_Comm comm)
{
    int rank, size, len, nshm, leader;
    char transport[64];
    bench_transport(comm, transport, sizeof transport);
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    MPI_Comm shm;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    MPI_CHECK(MPI_Comm_size(shm, &nshm));
    MPI_CHECK(MPI_Comm_rank(shm, &leader));
    MPI_CHECK(MPI_Comm_free(&shm));
    leader = leader == 0;
    int nodes;
    MPI_CHECK(MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, comm));
    /* Pinning: the core every rank runs on now, and how many it may run on. */
    cpu_set_t set;
    int mine[2] = {sched_getcpu(), -1};
    if (sched_getaffinity(0, sizeof set, &set) == 0) mine[1] = CPU_COUNT(&set);
    int *cores = rank == 0 ? malloc(2 * (size_t)size * sizeof *cores) : NULL;
    if (rank == 0 && !cores) bench_die(BENCH_HERE, "out of memory");
    MPI_CHECK(MPI_Gather(mine, 2, MPI_INT, cores, 2, MPI_INT, 0, comm));
    if (rank != 0) return;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], host[MPI_MAX_PROCESSOR_NAME], cpu[256];
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    lib[strcspn(lib, "\n")] = '\0';
    MPI_CHECK(MPI_Get_processor_name(host, &len));
    cpu_model(cpu, sizeof cpu);
    const char *tenv = getenv("NARMA_TRANSPORT"), *nenv = getenv("NARMA_NODE_SIZE");
    printf("# %s\n", title);
    printf("# MPI library     : %s\n", lib);
    printf("# narma version   : %s\n", NARMA_Get_version());
    printf("# narma transport : %s (NARMA_TRANSPORT=%s)\n", transport, tenv ? tenv : "unset");
    if (nenv) printf("# node split      : NARMA_NODE_SIZE=%s\n", nenv);
    printf("# ranks           : %d on %d node(s), %d on rank 0's\n", size, nodes, nshm);
    printf("# host            : %s, %s, %ld cores online\n", host, cpu,
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("# pinning         :");
    for (int r = 0; r < size && r < 16; r++)
        printf(" r%d@cpu%d%s", r, cores[2 * r], cores[2 * r + 1] == 1 ? "" : "(unbound)");
    printf("%s\n", size > 16 ? " ..." : "");
    free(cores);
    fflush(stdout);
}

void bench_print_schemes(const char *const *names, const int *selected, int n)
{
    printf("# schemes         :");
    for (int s = 0; s < n; s++)
        if (selected[s]) printf(" %s", names[s]);
    printf("\n");
}

/* ---- options ------------------------------------------------------------ */

static const struct {
    const char *name;
    unsigned use;
    const char *help;
} shared_opts[] = {
    {"reps R", BENCH_USE_REPS, "interleaved repetitions"},
    {"iters N", BENCH_USE_ITERS, "timed iterations per block"},
    {"warmup N", BENCH_USE_WARMUP, "untimed iterations before each block"},
    {"sizes LIST", BENCH_USE_SIZES, "comma-separated sizes (e.g. 8,64,1K,1M)"},
    {"max-size N", BENCH_USE_SIZES, "powers of two from 8 to N"},
    {"schemes LIST", BENCH_USE_SCHEMES, "subset of the schemes (or all):"},
    {"timeout S", BENCH_USE_TIMEOUT, "abort when one block takes more than S seconds"},
};
#define NSHARED ((int)(sizeof shared_opts / sizeof *shared_opts))
#define OWN     1000 /* getopt value of the first benchmark option */

static void usage(FILE *f, const struct bench_spec *spec, const struct bench_common *c)
{
    fprintf(f, "usage: %s\n", spec->usage);
    for (int i = 0; i < NSHARED; i++) {
        if (!(spec->uses & shared_opts[i].use)) continue;
        fprintf(f, "  --%-16s %s", shared_opts[i].name, shared_opts[i].help);
        if (shared_opts[i].use == BENCH_USE_SCHEMES)
            for (int s = 0; s < spec->nschemes; s++)
                fprintf(f, " %s", spec->schemes[s]);
        else if (i == 0)
            fprintf(f, " (default %d)", c->reps);
        else if (shared_opts[i].use == BENCH_USE_ITERS)
            fprintf(f, " (default %ld)", c->iters);
        else if (shared_opts[i].use == BENCH_USE_WARMUP && c->warmup >= 0)
            fprintf(f, " (default %ld)", c->warmup);
        else if (!strncmp(shared_opts[i].name, "max-size", 8))
            fprintf(f, " (default %zu)", c->max_size);
        else if (shared_opts[i].use == BENCH_USE_TIMEOUT)
            fprintf(f, " (default %d)", c->timeout);
        fputc('\n', f);
    }
    for (int i = 0; i < spec->nopts; i++) {
        const struct bench_opt *o = &spec->opts[i];
        int arg = o->type != BENCH_OPT_FLAG && o->type != BENCH_OPT_UNFLAG;
        char name[64];
        snprintf(name, sizeof name, "%s%s", o->name, arg ? " X" : "");
        fprintf(f, "  --%-16s %s\n", name, o->help);
    }
    fprintf(f, "  --%-16s %s\n  --%-16s %s\n  --%-16s %s\n", "csv FILE",
            "also write rows bench,scheme,size,metric,value", "quick",
            "a tiny run (smoke test; numbers mean nothing)", "help", "this text");
}

/* Store optarg into a benchmark option; 0 or 1 on a bad value. */
static int set_opt(const struct bench_opt *o, const char *arg)
{
    char *end = NULL;
    errno = 0;
    switch (o->type) {
    case BENCH_OPT_INT: {
        long v = strtol(arg, &end, 10);
        if (errno || *end || end == arg || v < o->min || v > 0x7fffffff) return 1;
        *(int *)o->ptr = (int)v;
        return 0;
    }
    case BENCH_OPT_LONG: {
        long v = strtol(arg, &end, 10);
        if (errno || *end || end == arg || v < o->min) return 1;
        *(long *)o->ptr = v;
        return 0;
    }
    case BENCH_OPT_DOUBLE: {
        double v = strtod(arg, &end);
        if (errno || *end || end == arg || !(v > 0)) return 1;
        *(double *)o->ptr = v;
        return 0;
    }
    case BENCH_OPT_SIZE: {
        size_t v = bench_parse_size(arg);
        if (v == 0) return 1;
        *(size_t *)o->ptr = v;
        return 0;
    }
    case BENCH_OPT_STRING:
        *(const char **)o->ptr = arg;
        return 0;
    case BENCH_OPT_FLAG:
        *(int *)o->ptr = 1;
        return 0;
    case BENCH_OPT_UNFLAG:
        *(int *)o->ptr = 0;
        return 0;
    }
    return 1;
}

static int parse_schemes(const char *list, const struct bench_spec *spec, int *sel, FILE *err)
{
    char *copy = strdup(list);
    int bad = copy == NULL;
    for (int s = 0; s < spec->nschemes; s++)
        sel[s] = 0;
    for (char *tok = copy ? strtok(copy, ",") : NULL; tok && !bad; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int s = 0; s < spec->nschemes; s++)
            if (!strcmp(tok, spec->schemes[s]) || !strcmp(tok, "all")) sel[s] = found = 1;
        if (!found) bad = fprintf(err, "%s: unknown scheme '%s'\n", spec->prog, tok) > 0;
    }
    free(copy);
    return bad;
}

static long parse_long(const char *arg, long min, int *bad)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || *end || end == arg || v < min) *bad = 1;
    return v;
}

int bench_parse(int argc, char **argv, const struct bench_spec *spec, struct bench_common *c)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    FILE *err = rank == 0 ? stderr : fopen("/dev/null", "w");
    if (!err) err = stderr;
    int n = 0, bad = 0, help = 0;
    char bare[NSHARED][16]; /* "reps R" -> "reps" */
    for (int i = 0; i < NSHARED; i++) {
        snprintf(bare[i], sizeof bare[i], "%s", shared_opts[i].name);
        bare[i][strcspn(bare[i], " ")] = '\0';
    }
    struct option *lo = calloc((size_t)(NSHARED + spec->nopts + 4), sizeof *lo);
    if (!lo) bench_die(BENCH_HERE, "out of memory");
    /* getopt's val: 0..NSHARED-1 shared, OWN+i the benchmark's own, 'c' 'q' 'h'. */
    for (int i = 0; i < NSHARED; i++)
        if (spec->uses & shared_opts[i].use)
            lo[n++] = (struct option){bare[i], required_argument, 0, i};
    for (int i = 0; i < spec->nopts; i++) {
        int arg = spec->opts[i].type != BENCH_OPT_FLAG && spec->opts[i].type != BENCH_OPT_UNFLAG;
        lo[n++] =
            (struct option){spec->opts[i].name, arg ? required_argument : no_argument, 0, OWN + i};
    }
    lo[n++] = (struct option){"csv", required_argument, 0, 'c'};
    lo[n++] = (struct option){"quick", no_argument, 0, 'q'};
    lo[n++] = (struct option){"help", no_argument, 0, 'h'};
    if (c->max_size == 0) c->max_size = 4u << 20;
    for (int s = 0; s < spec->nschemes && s < BENCH_MAX_SCHEMES; s++)
        c->selected[s] = 1;
    c->given = 0;
    const char *sizes = NULL;
    opterr = 0;
    optind = 1;
    for (int o; !bad && !help && (o = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        if (o >= OWN) {
            bad = set_opt(&spec->opts[o - OWN], optarg);
        } else if (o >= 0 && o < NSHARED) {
            c->given |= shared_opts[o].use;
            const char *name = bare[o];
            if (!strcmp(name, "reps"))
                c->reps = (int)parse_long(optarg, 1, &bad);
            else if (!strcmp(name, "iters"))
                c->iters = parse_long(optarg, 1, &bad);
            else if (!strcmp(name, "warmup"))
                c->warmup = parse_long(optarg, 0, &bad);
            else if (!strcmp(name, "timeout"))
                c->timeout = (int)parse_long(optarg, 1, &bad);
            else if (!strcmp(name, "sizes"))
                sizes = optarg;
            else if (!strcmp(name, "max-size"))
                bad = (c->max_size = bench_parse_size(optarg)) < 8;
            else if (!strcmp(name, "schemes"))
                bad = parse_schemes(optarg, spec, c->selected, err) ? 2 : 0;
        } else if (o == 'c') {
            c->csv = optarg;
        } else if (o == 'q') {
            c->quick = 1;
        } else if (o == 'h') {
            help = 1;
        } else {
            bad = fprintf(err, "%s: unknown option '%s'\n", spec->prog, argv[optind - 1]) > 0;
            bad = bad ? 2 : 1;
        }
        if (bad == 1) fprintf(err, "%s: bad value in '%s'\n", spec->prog, argv[optind - 1]);
    }
    if (!bad && optind < argc)
        bad = fprintf(err, "%s: unexpected argument '%s'\n", spec->prog, argv[optind]) > 0;
    if (c->quick) {
        if (!(c->given & BENCH_USE_REPS) && spec->quick_reps) c->reps = spec->quick_reps;
        if (!(c->given & BENCH_USE_ITERS) && spec->quick_iters) c->iters = spec->quick_iters;
        if (!(c->given & BENCH_USE_SIZES) && spec->quick_sizes) sizes = spec->quick_sizes;
    }
    if (!bad && (spec->uses & BENCH_USE_SIZES)) {
        c->nsizes = 0;
        if (sizes) {
            c->nsizes = bench_parse_size_list(sizes, c->sizes, BENCH_MAX_SIZES);
            if (c->nsizes <= 0) bad = fprintf(err, "%s: bad sizes '%s'\n", spec->prog, sizes) > 0;
        } else {
            for (size_t sz = 8; sz <= c->max_size && c->nsizes < BENCH_MAX_SIZES; sz *= 2)
                c->sizes[c->nsizes++] = sz;
        }
    }
    if (help) usage(rank == 0 ? stdout : err, spec, c);
    if (bad) usage(err, spec, c);
    free(lo);
    if (err != stderr) fclose(err);
    return help ? -1 : bad ? 1 : 0;
}
