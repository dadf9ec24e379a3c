/*
 * bench/rma_latency: the OSU one-sided latency tests (osu_put_latency, osu_get_latency,
 * osu_acc_latency with -s MODE -w FLAVOR) as an unmodified MPI program runs them, for MPI's
 * own implementation and through libnarma-mpi, in one run.
 *
 * The program is linked with libnarma-mpi before the MPI library, so its MPI_ one-sided calls
 * are narma's (scheme "narma"), while the PMPI_ names still reach the MPI library's own
 * implementation (scheme "native"). Each kernel is written once against a table of the calls
 * (struct rma_api): the two schemes run identical code and differ only in the table, PMPI_Put
 * or MPI_Put, PMPI_Win_allocate or MPI_Win_allocate, and so on. A scheme's windows are created
 * by its own calls.
 *
 * Patterns, rank 0 the origin, rank 1 the target (as OSU):
 *   lock        lock(shared, 1); op; unlock(1)                 per iteration
 *   flush       lock(shared, 1) once; op; flush(1)             per iteration
 *   flush_local lock(shared, 1) once; op; flush_local(1)       per iteration (not by default)
 *   lock_all    lock_all; op; unlock_all                       per iteration
 *   fence       0: fence; op; fence; fence   1: fence; fence; op; fence     (half the period)
 *   pscw        0: start; op; complete; post; wait   1: post; wait; start; op; complete (half)
 * op: put and get of `size` bytes (MPI_BYTE), acc of size/8 doubles with MPI_SUM; at
 * displacement 0 of a window from MPI_Win_allocate, MPI_Win_create (page-aligned memory of the
 * program's) or MPI_Win_create_dynamic (such memory attached, its address exchanged). In the
 * passive modes the target waits in MPI_Barrier, as in OSU.
 *
 * A block (one scheme, one pattern, one size) runs --warmup untimed and --iters timed
 * iterations and yields rank 0's mean time per iteration (halved for fence and pscw). Per
 * window flavor and operation, the blocks of every mode and both schemes run interleaved
 * (bench_interleave: each repetition runs every block once, in rotating order); the table
 * gives medians over repetitions and the median of the per-repetition ratios narma/native.
 * Every block checks the data it moved: each put carries the block's own pattern and the
 * target compares its window with it afterwards; a get reads a pattern the target wrote into
 * its window for the block; the accumulates start from a zeroed window and must sum to
 * (warmup + iters) x the origin's values exactly. Local window accesses are bracketed by a
 * lock of the rank's own window (the scheme's calls).
 *
 * Output: one table per window flavor, CSV rows (scheme "<op>_<mode>_<flavor>:native" or
 * ":narma", metric latency_us; ":narma/native", metric ratio) and a SUMMARY line of the ratios
 * narma/native, keyed <op>_<mode> for allocate windows and <op>_<mode>_<flavor> for the others,
 * with "@<size>B" for sizes other than 8 (tools/narma-bench judges them).
 */
#define _GNU_SOURCE /* dlsym(RTLD_DEFAULT), dladdr */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <narma/narma_mpix.h>

#include "harness.h"

#define PROG "rma_latency"

/* ---- the two implementations ------------------------------------------------ */

enum impl { I_NATIVE, I_NARMA, I_COUNT };
static const char *const impl_names[I_COUNT] = {[I_NATIVE] = "native", [I_NARMA] = "narma"};

/* The calls the kernels make, typed as MPI declares them. */
struct rma_api {
    __typeof__(PMPI_Win_allocate) *win_allocate;
    __typeof__(PMPI_Win_create) *win_create;
    __typeof__(PMPI_Win_create_dynamic) *win_create_dynamic;
    __typeof__(PMPI_Win_attach) *win_attach;
    __typeof__(PMPI_Win_detach) *win_detach;
    __typeof__(PMPI_Win_free) *win_free;
    __typeof__(PMPI_Put) *put;
    __typeof__(PMPI_Get) *get;
    __typeof__(PMPI_Accumulate) *acc;
    __typeof__(PMPI_Win_fence) *fence;
    __typeof__(PMPI_Win_post) *post;
    __typeof__(PMPI_Win_start) *start;
    __typeof__(PMPI_Win_complete) *complete;
    __typeof__(PMPI_Win_wait) *wait;
    __typeof__(PMPI_Win_lock) *lock;
    __typeof__(PMPI_Win_unlock) *unlock;
    __typeof__(PMPI_Win_lock_all) *lock_all;
    __typeof__(PMPI_Win_unlock_all) *unlock_all;
    __typeof__(PMPI_Win_flush) *flush;
    __typeof__(PMPI_Win_flush_local) *flush_local;
};

/* P = PMPI: the MPI library's own implementation; P = MPI: libnarma-mpi's (linked first). */
#define RMA_API(P)                                                                              \
    {                                                                                           \
        .win_allocate = P##_Win_allocate, .win_create = P##_Win_create,                         \
        .win_create_dynamic = P##_Win_create_dynamic, .win_attach = P##_Win_attach,             \
        .win_detach = P##_Win_detach, .win_free = P##_Win_free, .put = P##_Put, .get = P##_Get, \
        .acc = P##_Accumulate, .fence = P##_Win_fence, .post = P##_Win_post,                    \
        .start = P##_Win_start, .complete = P##_Win_complete, .wait = P##_Win_wait,             \
        .lock = P##_Win_lock, .unlock = P##_Win_unlock, .lock_all = P##_Win_lock_all,           \
        .unlock_all = P##_Win_unlock_all, .flush = P##_Win_flush,                               \
        .flush_local = P##_Win_flush_local                                                      \
    }

static const struct rma_api apis[I_COUNT] = {[I_NATIVE] = RMA_API(PMPI), [I_NARMA] = RMA_API(MPI)};

/* ---- patterns ------------------------------------------------------------------ */

enum op { O_PUT, O_GET, O_ACC, O_COUNT };
static const char *const op_names[O_COUNT] = {"put", "get", "acc"};

enum mode { M_PSCW, M_FENCE, M_LOCK, M_FLUSH, M_FLUSH_LOCAL, M_LOCK_ALL, M_COUNT };
static const char *const mode_names[M_COUNT] = {"pscw",  "fence",       "lock",
                                                "flush", "flush_local", "lock_all"};
#define DEFAULT_MODES "pscw,fence,lock,flush,lock_all" /* OSU's -s, flush_local on request */

enum flavor { F_ALLOCATE, F_CREATE, F_DYNAMIC, F_COUNT };
static const char *const flavor_names[F_COUNT] = {"allocate", "create", "dynamic"};

/* Both ranks originate (and are targets) in the active-target modes. */
static int symmetric(int mode) { return mode == M_PSCW || mode == M_FENCE; }

/* Scheme index of a run (one flavor, one operation): mode x implementation. */
#define NSCHEMES (M_COUNT * I_COUNT)
static int scheme_of(int mode, int impl) { return mode * I_COUNT + impl; }

/* ---- state ---------------------------------------------------------------------- */

struct options {
    struct bench_common c;
    const char *ops, *modes, *flavors;
    int op_sel[O_COUNT], mode_sel[M_COUNT], flavor_sel[F_COUNT];
};

/* One scheme's window of one flavor. */
struct window {
    MPI_Win win;
    unsigned char *base; /* this rank's window memory */
    void *own;           /* create, dynamic: the program's memory (freed after the window) */
    MPI_Aint peer_disp;  /* displacement of the peer's memory (dynamic: its address) */
    int made;
};

struct ctx {
    const struct options *o;
    MPI_Comm comm;
    int rank, peer;
    MPI_Group peer_group;
    size_t max_size;
    unsigned char *sbuf, *rbuf; /* origin buffers: what op sends / where get lands */
    struct window w[F_COUNT][I_COUNT];
    int flavor, op;            /* of the running run */
    char carrier[F_COUNT][40]; /* what carries the narma scheme's window of each flavor */
    uint64_t block;            /* blocks so far (the seed of the next block's data) */
    char names[F_COUNT][O_COUNT][NSCHEMES][48];
    const char *name_ptr[F_COUNT][O_COUNT][NSCHEMES];
};

/* ---- windows -------------------------------------------------------------------- */

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

/* Page-aligned, zeroed memory of whole pages: narma may move such pages onto shared memory
 * (Win_create, attach), and then no other data shares them. */
static void *page_alloc(size_t n)
{
    void *p = NULL;
    size_t len = page_round(n ? n : 1);
    if (posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), len))
        bench_die(BENCH_HERE, "out of memory (%zu bytes)", len);
    memset(p, 0, len);
    return p;
}

static void window_make(struct ctx *x, int flavor, int impl)
{
    const struct rma_api *a = &apis[impl];
    struct window *w = &x->w[flavor][impl];
    MPI_Aint bytes = (MPI_Aint)x->max_size;
    memset(w, 0, sizeof *w);
    switch (flavor) {
    case F_ALLOCATE:
        MPI_CHECK(a->win_allocate(bytes, 1, MPI_INFO_NULL, x->comm, &w->base, &w->win));
        break;
    case F_CREATE:
        w->own = page_alloc(x->max_size);
        w->base = w->own;
        MPI_CHECK(a->win_create(w->base, bytes, 1, MPI_INFO_NULL, x->comm, &w->win));
        break;
    case F_DYNAMIC: {
        w->own = page_alloc(x->max_size);
        w->base = w->own;
        MPI_CHECK(a->win_create_dynamic(MPI_INFO_NULL, x->comm, &w->win));
        MPI_CHECK(a->win_attach(w->win, w->base, bytes));
        MPI_Aint mine;
        MPI_CHECK(MPI_Get_address(w->base, &mine));
        MPI_CHECK(MPI_Sendrecv(&mine, 1, MPI_AINT, x->peer, 0, &w->peer_disp, 1, MPI_AINT, x->peer,
                               0, x->comm, MPI_STATUS_IGNORE));
        break;
    }
    }
    w->made = 1;
}

static void window_free(struct ctx *x, int flavor, int impl)
{
    const struct rma_api *a = &apis[impl];
    struct window *w = &x->w[flavor][impl];
    if (!w->made) return;
    if (flavor == F_DYNAMIC) MPI_CHECK(a->win_detach(w->win, w->base));
    MPI_CHECK(a->win_free(&w->win));
    free(w->own);
    w->made = 0;
}

/* What carries the narma scheme's window: narma's transport, or MPI when passed through. */
static const char *narma_carrier(struct window *w)
{
    NARMA_Win nw = NARMA_WIN_NULL;
    MPI_CHECK(MPIX_Win_get_narma(w->win, &nw));
    if (nw == NARMA_WIN_NULL) return "passed through to MPI";
    const char *t = NARMA_Win_get_transport(nw);
    return t ? t : "?";
}

/* ---- the kernels ------------------------------------------------------------------ */

/* One access of `size` bytes to the peer. */
static inline void issue(const struct rma_api *a, const struct ctx *x, const struct window *w,
                         int op, int n)
{
    switch (op) {
    case O_PUT:
        MPI_CHECK(a->put(x->sbuf, n, MPI_BYTE, x->peer, w->peer_disp, n, MPI_BYTE, w->win));
        break;
    case O_GET:
        MPI_CHECK(a->get(x->rbuf, n, MPI_BYTE, x->peer, w->peer_disp, n, MPI_BYTE, w->win));
        break;
    case O_ACC:
        MPI_CHECK(a->acc(x->sbuf, n / 8, MPI_DOUBLE, x->peer, w->peer_disp, n / 8, MPI_DOUBLE,
                         MPI_SUM, w->win));
        break;
    }
}

/* warmup + iters iterations of the pattern; rank 0's seconds per iteration (halved where one
 * iteration is a round trip), NaN on rank 1. */
static double kernel(const struct rma_api *a, const struct ctx *x, const struct window *w, int mode,
                     int op, size_t size, long warmup, long iters)
{
    const int n = (int)size, origin = x->rank == 0;
    const long total = warmup + iters;
    MPI_Win win = w->win;
    double t0 = bench_now();
    switch (mode) {
    case M_LOCK:
        if (!origin) break;
        for (long i = 0; i < total; i++) {
            if (i == warmup) t0 = bench_now();
            MPI_CHECK(a->lock(MPI_LOCK_SHARED, x->peer, 0, win));
            issue(a, x, w, op, n);
            MPI_CHECK(a->unlock(x->peer, win));
        }
        break;
    case M_FLUSH:
    case M_FLUSH_LOCAL:
        if (!origin) break;
        MPI_CHECK(a->lock(MPI_LOCK_SHARED, x->peer, 0, win));
        for (long i = 0; i < total; i++) {
            if (i == warmup) t0 = bench_now();
            issue(a, x, w, op, n);
            if (mode == M_FLUSH)
                MPI_CHECK(a->flush(x->peer, win));
            else
                MPI_CHECK(a->flush_local(x->peer, win));
        }
        t0 -= bench_now(); /* the closing unlock is not timed */
        MPI_CHECK(a->unlock(x->peer, win));
        t0 += bench_now();
        break;
    case M_LOCK_ALL:
        if (!origin) break;
        for (long i = 0; i < total; i++) {
            if (i == warmup) t0 = bench_now();
            MPI_CHECK(a->lock_all(0, win));
            issue(a, x, w, op, n);
            MPI_CHECK(a->unlock_all(win));
        }
        break;
    case M_FENCE:
        for (long i = 0; i < total; i++) {
            if (i == warmup) t0 = bench_now();
            MPI_CHECK(a->fence(0, win));
            if (origin) issue(a, x, w, op, n);
            MPI_CHECK(a->fence(0, win));
            if (!origin) issue(a, x, w, op, n);
            MPI_CHECK(a->fence(0, win));
        }
        break;
    case M_PSCW:
        for (long i = 0; i < total; i++) {
            if (i == warmup) t0 = bench_now();
            if (origin) {
                MPI_CHECK(a->start(x->peer_group, 0, win));
                issue(a, x, w, op, n);
                MPI_CHECK(a->complete(win));
                MPI_CHECK(a->post(x->peer_group, 0, win));
                MPI_CHECK(a->wait(win));
            } else {
                MPI_CHECK(a->post(x->peer_group, 0, win));
                MPI_CHECK(a->wait(win));
                MPI_CHECK(a->start(x->peer_group, 0, win));
                issue(a, x, w, op, n);
                MPI_CHECK(a->complete(win));
            }
        }
        break;
    }
    double t = bench_now() - t0;
    /* Close the fence sequence, so that the next block may lock the window. */
    if (mode == M_FENCE) MPI_CHECK(a->fence(MPI_MODE_NOSUCCEED, win));
    if (!origin) return NAN;
    return t / (double)iters / (symmetric(mode) ? 2.0 : 1.0);
}

/* ---- data and its check ---------------------------------------------------------- */

/* The data of rank r in block b: a byte pattern, or small integers (sums stay exact). */
static uint64_t seed_of(uint64_t block, int r) { return 2 * block + (uint64_t)r + 1; }
static double acc_value(uint64_t seed, size_t i) { return (double)(1 + (seed + i) % 7); }

/* Before a block: origins set what they send, targets what is read or summed. */
static void prepare(const struct rma_api *a, struct ctx *x, const struct window *w, int mode,
                    int op, size_t size, uint64_t block)
{
    int origin = x->rank == 0 || symmetric(mode), target = x->rank == 1 || symmetric(mode);
    uint64_t mine = seed_of(block, x->rank);
    if (origin && op == O_PUT) bench_fill(x->sbuf, size, mine);
    if (origin && op == O_GET) memset(x->rbuf, 0, size);
    if (origin && op == O_ACC)
        for (size_t i = 0; i < size / 8; i++)
            ((double *)x->sbuf)[i] = acc_value(mine, i);
    if (target && op != O_PUT) { /* local stores into the window: in an epoch on itself */
        MPI_CHECK(a->lock(MPI_LOCK_EXCLUSIVE, x->rank, 0, w->win));
        if (op == O_GET)
            bench_fill(w->base, size, mine);
        else
            memset(w->base, 0, size);
        MPI_CHECK(a->unlock(x->rank, w->win));
    }
}

/* After a block: 1 (with a line on stderr) when the data moved is wrong on this rank. */
static int check(const struct rma_api *a, struct ctx *x, const struct window *w, int mode, int op,
                 size_t size, uint64_t block, long total, const char *scheme)
{
    int origin = x->rank == 0 || symmetric(mode), target = x->rank == 1 || symmetric(mode);
    uint64_t theirs = seed_of(block, x->peer);
    long off = -1;
    double got = 0, want = 0;
    if (origin && op == O_GET) {
        off = bench_verify(x->rbuf, size, theirs);
        if (off >= 0) got = x->rbuf[off], want = bench_pattern_byte(theirs, (size_t)off);
    }
    if (target && op != O_GET) {
        MPI_CHECK(a->lock(MPI_LOCK_SHARED, x->rank, 0, w->win));
        if (op == O_PUT) {
            off = bench_verify(w->base, size, theirs);
            if (off >= 0) got = w->base[off], want = bench_pattern_byte(theirs, (size_t)off);
        } else {
            const double *v = (const double *)w->base;
            for (size_t i = 0; i < size / 8 && off < 0; i++)
                if (v[i] != (double)total * acc_value(theirs, i)) {
                    off = (long)(8 * i);
                    got = v[i], want = (double)total * acc_value(theirs, i);
                }
        }
        MPI_CHECK(a->unlock(x->rank, w->win));
    }
    if (off < 0) return 0;
    fprintf(stderr,
            "\n!!! " PROG ": VALIDATION FAILED: %s moved wrong data: rank %d, size %zu, byte "
            "offset %ld holds %g, expected %g%s\n",
            scheme, x->rank, size, off, got, want, op == O_ACC ? " (sum of doubles)" : "");
    return 1;
}

/* One block of the interleaved run of (x->flavor, x->op): scheme s at size index z. */
static double block(void *cx, int s, int z, int rep, int *bad)
{
    (void)rep;
    struct ctx *x = cx;
    const struct options *o = x->o;
    int mode = s / I_COUNT, impl = s % I_COUNT;
    const struct rma_api *a = &apis[impl];
    const struct window *w = &x->w[x->flavor][impl];
    size_t size = o->c.sizes[z];
    uint64_t b = x->block++;
    prepare(a, x, w, mode, x->op, size, b);
    MPI_CHECK(MPI_Barrier(x->comm));
    double t = kernel(a, x, w, mode, x->op, size, o->c.warmup, o->c.iters);
    MPI_CHECK(MPI_Barrier(x->comm));
    *bad = check(a, x, w, mode, x->op, size, b, o->c.warmup + o->c.iters,
                 x->names[x->flavor][x->op][s]);
    return t;
}

/* ---- options ------------------------------------------------------------------------ */

/* A comma-separated subset of names[0..n) into sel; 1 (message on rank 0) when unknown. */
static int parse_subset(const char *opt, const char *list, const char *const *names, int n,
                        int *sel)
{
    char *copy = strdup(list);
    if (!copy) bench_die(BENCH_HERE, "out of memory");
    memset(sel, 0, (size_t)n * sizeof *sel);
    int bad = 0, any = 0;
    for (char *t = strtok(copy, ","); t && !bad; t = strtok(NULL, ",")) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(t, names[i]) || !strcmp(t, "all")) sel[i] = found = any = 1;
        if (!found) bad = bench_error(PROG ": --%s: unknown '%s'", opt, t);
    }
    free(copy);
    if (!bad && !any) bad = bench_error(PROG ": --%s: empty list", opt);
    return bad;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.c = {.iters = 5000, .warmup = 500, .reps = 11, .timeout = 60},
                          .ops = "put,get,acc",
                          .modes = DEFAULT_MODES,
                          .flavors = "allocate,create,dynamic"};
    const struct bench_opt opts[] = {
        {"ops", BENCH_OPT_STRING, &o->ops, 0, "operations: put,get,acc (default all)"},
        {"modes", BENCH_OPT_STRING, &o->modes, 0,
         "synchronisation (OSU -s): pscw,fence,lock,flush,flush_local,lock_all (default "
         "all but flush_local)"},
        {"flavors", BENCH_OPT_STRING, &o->flavors, 0,
         "windows (OSU -w, + dynamic): allocate,create,dynamic (default all)"},
    };
    const struct bench_spec spec = {
        .prog = PROG,
        .usage = "mpiexec -n 2 " PROG " [options]  (linked with libnarma-mpi before MPI; ranks "
                 "beyond 2 wait; default size 8)",
        .uses = BENCH_USE_ALL,
        .schemes = impl_names,
        .nschemes = I_COUNT,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof *opts),
        .quick_reps = 2,
        .quick_iters = 20,
        .quick_sizes = "8",
    };
    int rc = bench_parse(argc, argv, &spec, &o->c);
    if (rc) return rc;
    if (o->c.quick && !(o->c.given & BENCH_USE_WARMUP)) o->c.warmup = 2;
    if (!(o->c.given & BENCH_USE_SIZES) && !o->c.quick)
        o->c.nsizes = bench_parse_size_list("8", o->c.sizes, BENCH_MAX_SIZES);
    if (parse_subset("ops", o->ops, op_names, O_COUNT, o->op_sel) ||
        parse_subset("modes", o->modes, mode_names, M_COUNT, o->mode_sel) ||
        parse_subset("flavors", o->flavors, flavor_names, F_COUNT, o->flavor_sel))
        return 1;
    for (int z = 0; z < o->c.nsizes; z++)
        if (o->c.sizes[z] > 0x7fffffff || (o->op_sel[O_ACC] && o->c.sizes[z] % 8))
            return bench_error(PROG ": size %zu: sizes are below 2 GiB and, with acc (doubles), "
                                    "multiples of 8",
                               o->c.sizes[z]);
    return 0;
}

/* ---- report ------------------------------------------------------------------------- */

/* Where MPI_Put resolves in this process (the library that defines it), and whether that is
 * the MPI library's own PMPI_Put. */
static int interposed(char *lib, size_t len)
{
    void *mpi = dlsym(RTLD_DEFAULT, "MPI_Put"), *pmpi = dlsym(RTLD_DEFAULT, "PMPI_Put");
    Dl_info info;
    snprintf(lib, len, "?");
    if (mpi && dladdr(mpi, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        snprintf(lib, len, "%s", slash ? slash + 1 : info.dli_fname);
    }
    return mpi != NULL && mpi != pmpi;
}

/* The key of a pattern in the SUMMARY line (see the top of the file). */
static void summary_key(char *buf, size_t len, int op, int mode, int flavor, size_t size)
{
    int n = snprintf(buf, len, "%s_%s", op_names[op], mode_names[mode]);
    if (flavor != F_ALLOCATE) n += snprintf(buf + n, len - (size_t)n, "_%s", flavor_names[flavor]);
    if (size != 8) snprintf(buf + n, len - (size_t)n, "@%zuB", size);
}

/* Results of one (flavor, op) run: [(scheme*nsizes + size)*reps + rep], and its statuses. */
struct results {
    double *v[F_COUNT][O_COUNT];
    enum bench_status st[F_COUNT][O_COUNT][NSCHEMES];
};

static void print_report(const struct options *o, const struct ctx *x, struct results *r,
                         int failed)
{
    const int reps = o->c.reps, nz = o->c.nsizes;
    char buf[3][32];
    printf("# narma windows   :");
    for (int f = 0; f < F_COUNT; f++)
        if (o->flavor_sel[f]) printf(" %s %s;", flavor_names[f], x->carrier[f]);
    printf("\n");
    for (int f = 0; f < F_COUNT; f++) {
        if (!o->flavor_sel[f]) continue;
        const char *call = f == F_DYNAMIC ? "create_dynamic" : flavor_names[f];
        printf("\n# %s windows (PMPI_Win_%s / MPI_Win_%s; narma: %s): latency (us), median "
               "over %d repetitions; narma/native: median of per-repetition ratios\n",
               flavor_names[f], call, call, x->carrier[f], reps);
        printf("# %-18s %-10s %12s %12s %14s\n", "pattern", "Size", "native", "narma",
               "narma/native");
        for (int op = 0; op < O_COUNT; op++) {
            if (!o->op_sel[op]) continue;
            for (int m = 0; m < M_COUNT; m++) {
                if (!o->mode_sel[m]) continue;
                for (int z = 0; z < nz; z++) {
                    const enum bench_status *st = r->st[f][op];
                    const double *v[I_COUNT];
                    double med[I_COUNT];
                    char pat[40], scheme[64];
                    snprintf(pat, sizeof pat, "%s_%s", op_names[op], mode_names[m]);
                    for (int i = 0; i < I_COUNT; i++) {
                        int s = scheme_of(m, i);
                        v[i] = r->v[f][op] + ((size_t)s * (size_t)nz + (size_t)z) * (size_t)reps;
                        med[i] = st[s] == BENCH_READY ? bench_rep_median(v[i], NULL, reps) : NAN;
                        if (!isnan(med[i])) {
                            snprintf(scheme, sizeof scheme, "%s_%s:%s", pat, flavor_names[f],
                                     impl_names[i]);
                            bench_csv_row(PROG, scheme, o->c.sizes[z], "latency_us", 1e6 * med[i]);
                        }
                    }
                    int sn = scheme_of(m, I_NARMA), sd = scheme_of(m, I_NATIVE);
                    double ratio = st[sn] == BENCH_READY && st[sd] == BENCH_READY
                                       ? bench_rep_median(v[I_NARMA], v[I_NATIVE], reps)
                                       : NAN;
                    if (!isnan(ratio)) {
                        snprintf(scheme, sizeof scheme, "%s_%s:narma/native", pat, flavor_names[f]);
                        bench_csv_row(PROG, scheme, o->c.sizes[z], "ratio", ratio);
                    }
                    printf("  %-18s %-10zu %12s %12s %14s\n", pat, o->c.sizes[z],
                           bench_cell(st[sd] == BENCH_FAILED, 1e6 * med[I_NATIVE], buf[0], 32),
                           bench_cell(st[sn] == BENCH_FAILED, 1e6 * med[I_NARMA], buf[1], 32),
                           bench_cell(st[sn] == BENCH_FAILED || st[sd] == BENCH_FAILED, ratio,
                                      buf[2], 32));
                }
            }
        }
    }
    printf(failed ? "\nERROR: data does not validate (see stderr)\n" : "\nSolution validates\n");
    printf("\n# SUMMARY rma_latency narma/native (median of per-repetition ratios):");
    for (int f = 0; f < F_COUNT; f++)
        for (int op = 0; op < O_COUNT; op++)
            for (int m = 0; m < M_COUNT; m++)
                for (int z = 0; z < nz && o->flavor_sel[f] && o->op_sel[op] && o->mode_sel[m];
                     z++) {
                    const enum bench_status *st = r->st[f][op];
                    int sn = scheme_of(m, I_NARMA), sd = scheme_of(m, I_NATIVE);
                    const double *v = r->v[f][op];
                    double ratio = st[sn] == BENCH_READY && st[sd] == BENCH_READY
                                       ? bench_rep_median(v + ((size_t)sn * nz + z) * reps,
                                                          v + ((size_t)sd * nz + z) * reps, reps)
                                       : NAN;
                    char key[64];
                    summary_key(key, sizeof key, op, m, f, o->c.sizes[z]);
                    printf(" %s=%.3f", key, ratio);
                }
    printf("%s\n", failed ? "  VALIDATION FAILED (see stderr)" : "");
    fflush(stdout);
}

/* ---- main --------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int wrank, wsize;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    struct options o;
    int bad = parse_options(argc, argv, &o);
    if (!bad && wsize < 2) bad = bench_error(PROG ": needs 2 ranks");
    if (bad) {
        MPI_CHECK(MPI_Finalize());
        return bad < 0 ? 0 : 1;
    }

    struct ctx *x = calloc(1, sizeof *x);
    if (!x) bench_die(BENCH_HERE, "out of memory");
    x->o = &o;
    x->rank = wrank;
    x->peer = 1 - wrank;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank < 2 ? 0 : MPI_UNDEFINED, wrank, &x->comm));
    int failed = 0;
    if (x->comm != MPI_COMM_NULL) {
        x->max_size = 8;
        for (int z = 0; z < o.c.nsizes; z++)
            if (o.c.sizes[z] > x->max_size) x->max_size = o.c.sizes[z];
        x->sbuf = bench_alloc(x->max_size);
        x->rbuf = bench_alloc(x->max_size);
        MPI_Group all;
        MPI_CHECK(MPI_Comm_group(x->comm, &all));
        MPI_CHECK(MPI_Group_incl(all, 1, &x->peer, &x->peer_group));
        MPI_CHECK(MPI_Group_free(&all));

        bench_print_header("narma " PROG ": OSU one-sided latency (osu_put/get/acc_latency -s "
                           "MODE -w FLAVOR) of an unmodified MPI program, MPI's own (PMPI_ "
                           "calls) vs libnarma-mpi (MPI_ calls)",
                           x->comm);
        char lib[256];
        int intercepted = interposed(lib, sizeof lib);
        if (!intercepted && o.c.selected[I_NARMA]) {
            if (x->rank == 0)
                fprintf(stderr,
                        PROG ": MPI_Put resolves to %s, the MPI library's own: the program is "
                             "not linked with libnarma-mpi before MPI; the narma scheme does "
                             "not run\n",
                        lib);
            o.c.selected[I_NARMA] = 0;
            failed = 1;
        }
        if (x->rank == 0) {
            printf("# MPI_Put from    : %s (%s)\n", lib,
                   intercepted ? "libnarma-mpi interposed" : "NOT interposed");
            printf("# method          : OSU's patterns, rank 0 origin, rank 1 target; %ld "
                   "timed iterations after %ld untimed per block, %d interleaved repetitions; "
                   "fence and pscw: half the period; data checked after every block\n",
                   o.c.iters, o.c.warmup, o.c.reps);
            printf("# patterns        : ops");
            for (int op = 0; op < O_COUNT; op++)
                if (o.op_sel[op]) printf(" %s", op_names[op]);
            printf("; modes");
            for (int m = 0; m < M_COUNT; m++)
                if (o.mode_sel[m]) printf(" %s", mode_names[m]);
            printf("\n");
            bench_print_schemes(impl_names, o.c.selected, I_COUNT);
            fflush(stdout);
            bench_csv_open(o.c.csv);
        }

        int wrong = 0; /* some block moved wrong data */
        struct results *r = calloc(1, sizeof *r);
        if (!r) bench_die(BENCH_HERE, "out of memory");
        size_t cells = (size_t)NSCHEMES * (size_t)o.c.nsizes * (size_t)o.c.reps;
        for (int f = 0; f < F_COUNT; f++) {
            if (!o.flavor_sel[f]) continue;
            /* The flavor's windows, one per scheme, live while its runs interleave them. */
            for (int i = 0; i < I_COUNT; i++)
                if (o.c.selected[i]) {
                    bench_watchdog(o.c.timeout, PROG, "window creation", impl_names[i], x->max_size,
                                   -1);
                    window_make(x, f, i);
                }
            alarm(0);
            snprintf(x->carrier[f], sizeof x->carrier[f], "%s",
                     x->w[f][I_NARMA].made ? narma_carrier(&x->w[f][I_NARMA]) : "-");
            for (int op = 0; op < O_COUNT; op++) {
                if (!o.op_sel[op]) continue;
                for (int s = 0; s < NSCHEMES; s++) {
                    int m = s / I_COUNT, i = s % I_COUNT;
                    snprintf(x->names[f][op][s], sizeof x->names[f][op][s], "%s_%s_%s/%s",
                             op_names[op], mode_names[m], flavor_names[f], impl_names[i]);
                    x->name_ptr[f][op][s] = x->names[f][op][s];
                    r->st[f][op][s] = o.mode_sel[m] && o.c.selected[i] ? BENCH_READY : BENCH_OFF;
                }
                r->v[f][op] = malloc(cells * sizeof(double));
                if (!r->v[f][op]) bench_die(BENCH_HERE, "out of memory");
                for (size_t k = 0; k < cells; k++)
                    r->v[f][op][k] = NAN;
                char what[64];
                snprintf(what, sizeof what, "%s on %s windows", op_names[op], flavor_names[f]);
                struct bench_run run =
                    bench_run_of(PROG, &o.c, x->name_ptr[f][op], NSCHEMES, 1, x->comm);
                run.what = what;
                x->flavor = f;
                x->op = op;
                bench_interleave(&run, r->st[f][op], block, x, r->v[f][op]);
                wrong |= bench_failed(r->st[f][op], NSCHEMES);
            }
            for (int i = 0; i < I_COUNT; i++)
                window_free(x, f, i);
        }
        failed |= wrong;
        if (x->rank == 0) print_report(&o, x, r, wrong);
        bench_csv_close();
        for (int f = 0; f < F_COUNT; f++)
            for (int op = 0; op < O_COUNT; op++)
                free(r->v[f][op]);
        free(r);
        free(x->sbuf);
        free(x->rbuf);
        MPI_CHECK(MPI_Group_free(&x->peer_group));
        MPI_CHECK(MPI_Comm_free(&x->comm));
    }
    /* Ranks beyond the pair sleep here rather than spin on a core the pair needs. */
    MPI_Request idle;
    int done = 0;
    MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &idle));
    while (!done) {
        MPI_CHECK(MPI_Test(&idle, &done, MPI_STATUS_IGNORE));
        if (!done) usleep(1000);
    }
    free(x);
    MPI_CHECK(MPI_Finalize());
    return failed ? 1 : 0;
}
