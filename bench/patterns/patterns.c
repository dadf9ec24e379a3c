/*
 * bench/patterns: the inefficiency patterns and reorder flags of the
 * nonblocking-RMA-synchronisation paper, section VIII-A (figures 2-11), on
 * three ranks (mpiexec -n 3; more ranks idle).
 *
 * Series: "narma blk" (blocking narma calls), "narma nb" (the i* calls plus
 * NARMA_Wait where the paper's nonblocking series completes), "MPI blk"
 * (MPI's own calls on an MPI_Win_allocate window). Reorder patterns run the
 * nonblocking calls only, on a window with the flag "false" and "true".
 * Every epoch hosts one put of --size bytes (1 MiB); a late peer or a
 * computation sleeps --delay-us (1000 us, nanosleep: the cores stay free).
 *
 * A repetition starts at a common instant of the node's monotonic clock
 * (time 0 on every rank; the ranks must share a node); each measured
 * quantity is taken on the rank the paper measures and reduced with MAX;
 * tables show the median over --reps repetitions. The judged ratio is the
 * quantity the paper compares, nonblocking / blocking (target <= 0.35) or
 * flag on / flag off (target <= 0.5).
 *
 * narma has no progress thread: a rank drives its epochs only inside narma
 * calls. Patterns therefore end every nonblocking series in NARMA_Wait, as
 * the paper's programs end in wait or test.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <narma/narma.h>

#include "harness.h"

#define BENCH "patterns"
#define MAXQ  4
#define MAXS  3

enum { S_BLK, S_NB, S_MPI }; /* series of the pattern patterns */
enum { S_OFF, S_ON };        /* series of the reorder patterns */
enum { F_AAAR, F_AAER, F_EAER, F_EAAR, NFLAGS };

static const char *const flag_keys[NFLAGS] = {
    "narma_access_after_access_reorder", "narma_access_after_exposure_reorder",
    "narma_exposure_after_exposure_reorder", "narma_exposure_after_access_reorder"};

static struct {
    int rank, nranks;
    size_t size; /* bytes per put */
    long delay_us;
    char *src;                 /* origin buffer */
    MPI_Win mwin;              /* MPI's window */
    NARMA_Win nwin;            /* narma window, no flag */
    NARMA_Win fwin[NFLAGS][2]; /* narma windows with one flag false / true */
    NARMA_Win cur;             /* the narma window of the running series */
    int series;
    int mpi; /* the running series uses MPI's calls */
    double t0;
    MPI_Group world;
} g;

/* ---- time ---------------------------------------------------------------- */

static double us_since_t0(void) { return (bench_now() - g.t0) * 1e6; }

/* Sleep until CLOCK_MONOTONIC (shared by the ranks of a node) reaches t seconds. */
static void sleep_until(double t)
{
    struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

/* The late peer's or the computation's delay, from now (a sleep: the core stays free). */
static void delay(void) { sleep_until(bench_now() + 1e-6 * (double)g.delay_us); }

/* Time 0: one instant on the shared monotonic clock, chosen by rank 0 a little
 * ahead; every rank sleeps until it, so a rank descheduled at the barrier
 * does not shift the origin of its measurements. */
static void start_at_common_t0(void)
{
    double t0 = bench_now() + 300e-6;
    MPI_CHECK(MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    g.t0 = t0;
    sleep_until(t0);
}

/* ---- one set of synchronisation calls over the three series ---------------- */

#define NCHECK(call)                                                                           \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != NARMA_SUCCESS) bench_die(BENCH_HERE, "%s: %s", #call, NARMA_Strerror(rc_)); \
    } while (0)

static MPI_Group group_of(int r)
{
    MPI_Group grp;
    MPI_Group_incl(g.world, 1, &r, &grp);
    return grp;
}

static int nonblocking(void) { return !g.mpi && g.series != S_BLK; }

static void x_done(NARMA_Request *r) { NCHECK(NARMA_Wait(r, MPI_STATUS_IGNORE)); }

/* An epoch-opening i-call: its request is complete at once. */
static void opened(int rc, NARMA_Request *r)
{
    NCHECK(rc);
    x_done(r);
}

static void x_start(int peer)
{
    MPI_Group grp = group_of(peer);
    NARMA_Request r;
    if (g.mpi)
        MPI_CHECK(MPI_Win_start(grp, 0, g.mwin));
    else if (nonblocking())
        opened(NARMA_Win_istart(grp, 0, g.cur, &r), &r);
    else
        NCHECK(NARMA_Win_start(grp, 0, g.cur));
    MPI_Group_free(&grp);
}

static void x_post(int peer)
{
    MPI_Group grp = group_of(peer);
    NARMA_Request r;
    if (g.mpi)
        MPI_CHECK(MPI_Win_post(grp, 0, g.mwin));
    else if (nonblocking())
        opened(NARMA_Win_ipost(grp, 0, g.cur, &r), &r);
    else
        NCHECK(NARMA_Win_post(grp, 0, g.cur));
    MPI_Group_free(&grp);
}

/* Closing calls: nonblocking series return a request, the others block and return NULL. */
static NARMA_Request x_complete(void)
{
    NARMA_Request r = NARMA_REQUEST_NULL;
    if (g.mpi)
        MPI_CHECK(MPI_Win_complete(g.mwin));
    else if (nonblocking())
        NCHECK(NARMA_Win_icomplete(g.cur, &r));
    else
        NCHECK(NARMA_Win_complete(g.cur));
    return r;
}

static NARMA_Request x_wait(void)
{
    NARMA_Request r = NARMA_REQUEST_NULL;
    if (g.mpi)
        MPI_CHECK(MPI_Win_wait(g.mwin));
    else if (nonblocking())
        NCHECK(NARMA_Win_iwait(g.cur, &r));
    else
        NCHECK(NARMA_Win_wait(g.cur));
    return r;
}

static NARMA_Request x_fence(int assert)
{
    NARMA_Request r = NARMA_REQUEST_NULL;
    if (g.mpi)
        MPI_CHECK(MPI_Win_fence(assert, g.mwin));
    else if (nonblocking())
        NCHECK(NARMA_Win_ifence(assert, g.cur, &r));
    else
        NCHECK(NARMA_Win_fence(assert, g.cur));
    return r;
}

static void x_lock(int target)
{
    NARMA_Request r;
    if (g.mpi)
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, g.mwin));
    else if (nonblocking())
        opened(NARMA_Win_ilock(MPI_LOCK_EXCLUSIVE, target, 0, g.cur, &r), &r);
    else
        NCHECK(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, g.cur));
}

static NARMA_Request x_unlock(int target)
{
    NARMA_Request r = NARMA_REQUEST_NULL;
    if (g.mpi)
        MPI_CHECK(MPI_Win_unlock(target, g.mwin));
    else if (nonblocking())
        NCHECK(NARMA_Win_iunlock(target, g.cur, &r));
    else
        NCHECK(NARMA_Win_unlock(target, g.cur));
    return r;
}

/* One put of g.size bytes into the origin's own region of the target (disjoint memory). */
static void x_put(int target)
{
    MPI_Aint disp = (MPI_Aint)g.rank * (MPI_Aint)g.size;
    int n = (int)g.size;
    if (g.mpi)
        MPI_CHECK(MPI_Put(g.src, n, MPI_BYTE, target, disp, n, MPI_BYTE, g.mwin));
    else
        NCHECK(NARMA_Put(g.src, n, MPI_BYTE, target, disp, n, MPI_BYTE, g.cur));
}

/* Zero-byte messages that order ranks without timing. */
static void signal_to(int r) { MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, r, 99, MPI_COMM_WORLD)); }
static void await_from(int r)
{
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, r, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* ---- the patterns (one repetition each; q[] in microseconds) --------------- */

/* Late Post (fig. 2): P0 posts late; P2 closes its access epoch, then sends
 * size bytes to P1 (the subsequent activity). Measured on P2. */
static void late_post(double *q)
{
    if (g.rank == 0) {
        delay();
        x_post(2);
        NARMA_Request r = x_wait();
        x_done(&r);
    } else if (g.rank == 1) {
        MPI_CHECK(MPI_Recv(g.src, (int)g.size, MPI_BYTE, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (g.rank == 2) {
        x_start(0);
        x_put(0);
        NARMA_Request r = x_complete();
        double closed = us_since_t0();
        MPI_CHECK(MPI_Send(g.src, (int)g.size, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
        double act = us_since_t0();
        x_done(&r);
        double ep = nonblocking() ? us_since_t0() : closed;
        q[0] = ep;
        q[1] = act;
        q[2] = act > ep ? act : ep;
    }
}

/* Late Complete (fig. 3): the origin P0 puts, then computes before
 * completing (blocking) or after icomplete (nonblocking). Target P1's
 * exposure duration. The target posts before time 0. */
static void late_complete_pre(void)
{
    if (g.rank == 1) x_post(0);
}
static void late_complete(double *q)
{
    if (g.rank == 0) {
        x_start(1);
        x_put(1);
        NARMA_Request r = NARMA_REQUEST_NULL;
        if (nonblocking()) r = x_complete();
        delay();
        if (!nonblocking()) r = x_complete();
        x_done(&r);
        q[1] = us_since_t0();
    } else if (g.rank == 1) {
        NARMA_Request r = x_wait();
        x_done(&r);
        q[0] = us_since_t0();
    }
}

/* Fences are collective: every rank opens the epoch before time 0 and P2
 * only fences. */
static void fence_pre(void)
{
    NARMA_Request r = x_fence(0);
    x_done(&r);
}
static void fence_post(void)
{
    NARMA_Request r = x_fence(MPI_MODE_NOSUCCEED);
    x_done(&r);
}

/* Early Fence (fig. 4): P0 puts in a fence epoch; P1 (target) closes it and
 * then computes. Cumulative time on P1 and its part beyond the computation. */
static void early_fence(double *q)
{
    if (g.rank != 1) {
        if (g.rank == 0) x_put(1);
        NARMA_Request r = x_fence(0);
        x_done(&r);
    } else {
        NARMA_Request r = x_fence(0);
        delay();
        x_done(&r);
        q[0] = us_since_t0();
        q[1] = q[0] - (double)g.delay_us;
    }
}

/* Wait at Fence (fig. 5): origin P0 puts, computes, then fences; target P1's fence duration. */
static void wait_at_fence(double *q)
{
    if (g.rank >= 2) {
        NARMA_Request r = x_fence(0);
        x_done(&r);
    } else if (g.rank == 0) {
        x_put(1);
        NARMA_Request r = NARMA_REQUEST_NULL;
        if (nonblocking()) r = x_fence(0);
        delay();
        if (!nonblocking()) r = x_fence(0);
        x_done(&r);
        q[1] = us_since_t0();
    } else if (g.rank == 1) {
        NARMA_Request r = x_fence(0);
        x_done(&r);
        q[0] = us_since_t0();
    }
}

/* Late Unlock (fig. 6): O0 = P0 locks T = P2 first, puts, computes before
 * unlocking (after iunlock when nonblocking); O1 = P1 locks T once O0 holds it. */
static void late_unlock(double *q)
{
    if (g.rank == 0) {
        x_lock(2);
        signal_to(1);
        x_put(2);
        NARMA_Request r = NARMA_REQUEST_NULL;
        if (nonblocking()) r = x_unlock(2);
        delay();
        if (!nonblocking()) r = x_unlock(2);
        x_done(&r);
        q[0] = us_since_t0();
    } else if (g.rank == 1) {
        await_from(0);
        double t = us_since_t0();
        x_lock(2);
        x_put(2);
        NARMA_Request r = x_unlock(2);
        x_done(&r);
        q[1] = us_since_t0() - t;
    }
}

/* A_A_A_R, GATS (fig. 7): O = P0 accesses T0 = P1 (posts late) then T1 = P2. */
static void aaar_gats(double *q)
{
    if (g.rank == 0) {
        x_start(1);
        x_put(1);
        NARMA_Request r1 = x_complete();
        x_start(2);
        x_put(2);
        NARMA_Request r2 = x_complete();
        x_done(&r2);
        x_done(&r1);
        q[1] = us_since_t0();
    } else {
        if (g.rank == 1) delay();
        x_post(0);
        NARMA_Request r = x_wait();
        x_done(&r);
        q[g.rank == 2 ? 0 : 2] = us_since_t0();
    }
}

/* A_A_A_R, locks (fig. 8): O0 = P0 holds T0 = P2 for the delay; O1 = P1 locks
 * T0 once O0 holds it, then T1 = P0. O1's second epoch and both epochs. */
static void aaar_lock(double *q)
{
    if (g.rank == 0) {
        x_lock(2);
        signal_to(1);
        x_put(2);
        delay();
        NARMA_Request r = x_unlock(2);
        x_done(&r);
    } else if (g.rank == 1) {
        await_from(0);
        x_lock(2);
        x_put(2);
        NARMA_Request r1 = x_unlock(2);
        x_lock(0);
        x_put(0);
        NARMA_Request r2 = x_unlock(0);
        x_done(&r2);
        q[0] = us_since_t0();
        x_done(&r1);
        q[1] = us_since_t0();
    }
}

/* A_A_E_R (fig. 9): P0 (late) accesses P2; P2 exposes to P0, then accesses P1. */
static void aaer(double *q)
{
    if (g.rank == 0) {
        delay();
        x_start(2);
        x_put(2);
        NARMA_Request r = x_complete();
        x_done(&r);
    } else if (g.rank == 1) {
        x_post(2);
        NARMA_Request r = x_wait();
        x_done(&r);
        q[0] = us_since_t0();
    } else if (g.rank == 2) {
        x_post(0);
        NARMA_Request r1 = x_wait();
        x_start(1);
        x_put(1);
        NARMA_Request r2 = x_complete();
        x_done(&r2);
        x_done(&r1);
        q[1] = us_since_t0();
    }
}

/* E_A_E_R (fig. 10): target P2 exposes to O0 = P0 (late), then to O1 = P1. */
static void eaer(double *q)
{
    if (g.rank == 0 || g.rank == 1) {
        if (g.rank == 0) delay();
        x_start(2);
        x_put(2);
        NARMA_Request r = x_complete();
        x_done(&r);
        if (g.rank == 1) q[0] = us_since_t0();
    } else if (g.rank == 2) {
        x_post(0);
        NARMA_Request r1 = x_wait();
        x_post(1);
        NARMA_Request r2 = x_wait();
        x_done(&r2);
        x_done(&r1);
        q[1] = us_since_t0();
    }
}

/* E_A_A_R (fig. 11): P2 accesses P0 (posts late), then exposes to origin P1. */
static void eaar(double *q)
{
    if (g.rank == 0) {
        delay();
        x_post(2);
        NARMA_Request r = x_wait();
        x_done(&r);
    } else if (g.rank == 1) {
        x_start(2);
        x_put(2);
        NARMA_Request r = x_complete();
        x_done(&r);
        q[0] = us_since_t0();
    } else if (g.rank == 2) {
        x_start(0);
        x_put(0);
        NARMA_Request r1 = x_complete();
        x_post(1);
        NARMA_Request r2 = x_wait();
        x_done(&r2);
        x_done(&r1);
        q[1] = us_since_t0();
    }
}

/* ---- the table of patterns ------------------------------------------------- */

struct pattern {
    const char *name, *figure;
    void (*run)(double *q);
    void (*pre)(void);  /* before time 0 (e.g. an early post), may be NULL */
    void (*post)(void); /* after the measurement, may be NULL */
    int flag;           /* -1: blocking vs nonblocking vs MPI; else the reorder flag */
    int nq;
    const char *qname[MAXQ];
    int judged;    /* index of the compared quantity */
    double target; /* the ratio must not exceed it */
};

static const struct pattern patterns[] = {
    {"late_post",
     "fig. 2",
     late_post,
     NULL,
     NULL,
     -1,
     3,
     {"access epoch", "next activity done", "cumulative"},
     1,
     0.35},
    {"late_complete",
     "fig. 3",
     late_complete,
     late_complete_pre,
     NULL,
     -1,
     2,
     {"target exposure", "origin epoch"},
     0,
     0.35},
    {"early_fence",
     "fig. 4",
     early_fence,
     fence_pre,
     fence_post,
     -1,
     2,
     {"cumulative", "beyond computation"},
     1,
     0.35},
    {"wait_at_fence",
     "fig. 5",
     wait_at_fence,
     fence_pre,
     fence_post,
     -1,
     2,
     {"target fence", "origin fence"},
     0,
     0.35},
    {"late_unlock",
     "fig. 6",
     late_unlock,
     NULL,
     NULL,
     -1,
     2,
     {"first lock (O0)", "second lock (O1)"},
     1,
     0.35},
    {"aaar_gats",
     "fig. 7",
     aaar_gats,
     NULL,
     NULL,
     F_AAAR,
     3,
     {"T1 exposure", "origin cumulative", "T0 exposure"},
     0,
     0.5},
    {"aaar_lock",
     "fig. 8",
     aaar_lock,
     NULL,
     NULL,
     F_AAAR,
     2,
     {"O1 second epoch", "O1 cumulative"},
     0,
     0.5},
    {"aaer", "fig. 9", aaer, NULL, NULL, F_AAER, 2, {"P1 exposure", "P2 cumulative"}, 0, 0.5},
    {"eaer",
     "fig. 10",
     eaer,
     NULL,
     NULL,
     F_EAER,
     2,
     {"O1 access epoch", "target cumulative"},
     0,
     0.5},
    {"eaar", "fig. 11", eaar, NULL, NULL, F_EAAR, 2, {"P1 access epoch", "P2 cumulative"}, 0, 0.5},
};
#define NPATTERNS (int)(sizeof patterns / sizeof patterns[0])

static const char *series_name(const struct pattern *p, int s)
{
    static const char *const plain[MAXS] = {"narma blk", "narma nb", "MPI blk"};
    static const char *const flag[2] = {"flag off", "flag on"};
    return p->flag < 0 ? plain[s] : flag[s];
}

static void select_series(const struct pattern *p, int s)
{
    g.series = p->flag < 0 ? s : S_NB;
    g.mpi = p->flag < 0 && s == S_MPI;
    g.cur = p->flag < 0 ? g.nwin : g.fwin[p->flag][s];
}

/* Run a pattern: reps x series, interleaved; returns 1 if its ratio meets the target. */
static int run_pattern(const struct pattern *p, int reps)
{
    const int nseries = p->flag < 0 ? 3 : 2;
    double *v = calloc((size_t)(reps * MAXS * MAXQ), sizeof(double));
    for (int rep = 0; rep < reps; rep++) {
        for (int s = 0; s < nseries; s++) {
            double q[MAXQ] = {0}, all[MAXQ];
            select_series(p, s);
            if (p->pre) p->pre();
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            start_at_common_t0();
            p->run(q);
            if (p->post) p->post();
            MPI_CHECK(MPI_Allreduce(q, all, MAXQ, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
            for (int k = 0; k < MAXQ; k++)
                v[(k * MAXS + s) * reps + rep] = all[k];
        }
    }
    double med[MAXS][MAXQ];
    for (int s = 0; s < nseries; s++)
        for (int k = 0; k < p->nq; k++)
            med[s][k] = bench_median(&v[(k * MAXS + s) * reps], (size_t)reps);
    free(v);
    const int num = p->flag < 0 ? S_NB : S_ON, den = p->flag < 0 ? S_BLK : S_OFF;
    const double ratio = med[num][p->judged] / med[den][p->judged];
    if (g.rank == 0) {
        printf("\n# %s (paper %s)%s%s: median over %d reps, microseconds from time 0\n", p->name,
               p->figure, p->flag < 0 ? "" : ", key ", p->flag < 0 ? "" : flag_keys[p->flag], reps);
        printf("# %-12s", "series");
        for (int k = 0; k < p->nq; k++)
            printf(" %20s", p->qname[k]);
        printf("\n");
        for (int s = 0; s < nseries; s++) {
            printf("  %-12s", series_name(p, s));
            for (int k = 0; k < p->nq; k++) {
                printf(" %20.1f", med[s][k]);
                char metric[96];
                snprintf(metric, sizeof metric, "%s:%s", p->name, p->qname[k]);
                bench_csv_row(BENCH, series_name(p, s), g.size, metric, med[s][k]);
            }
            printf("\n");
        }
        printf("  ratio %s / %s of \"%s\": %.3f (target <= %.2f) %s\n", series_name(p, num),
               series_name(p, den), p->qname[p->judged], ratio, p->target,
               ratio <= p->target ? "PASS" : "MISS");
    }
    return ratio <= p->target;
}

/* ---- setup ----------------------------------------------------------------- */

static NARMA_Win make_window(const char *key, const char *value)
{
    MPI_Info info = MPI_INFO_NULL;
    void *base;
    NARMA_Win w;
    if (key) {
        MPI_Info_create(&info);
        /* Open MPI holds info keys of at most MPI_MAX_INFO_KEY (36) characters: use the
         * short alias narma_reorder_<flag> for longer ones. */
        char alias[32];
        if (strlen(key) > MPI_MAX_INFO_KEY) {
            static const char *const longkeys[4] = {
                "narma_access_after_access_reorder", "narma_access_after_exposure_reorder",
                "narma_exposure_after_exposure_reorder", "narma_exposure_after_access_reorder"};
            static const char *const shortkeys[4] = {"aaar", "aaer", "eaer", "eaar"};
            for (int i = 0; i < 4; i++)
                if (strcmp(key, longkeys[i]) == 0)
                    snprintf(alias, sizeof alias, "narma_reorder_%s", shortkeys[i]);
            key = alias;
        }
        MPI_Info_set(info, key, value);
    }
    NCHECK(NARMA_Win_allocate((MPI_Aint)(3 * g.size), 1, info, MPI_COMM_WORLD, &base, &w));
    if (key) MPI_Info_free(&info);
    return w;
}

static void list_patterns(void)
{
    if (g.rank != 0) return;
    printf("patterns:");
    for (int i = 0; i < NPATTERNS; i++)
        printf(" %s", patterns[i].name);
    printf("\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.nranks);
    MPI_Comm_group(MPI_COMM_WORLD, &g.world);
    const char *only = NULL;
    struct bench_common c = {.reps = 20};
    g.size = 1 << 20;
    g.delay_us = 1000;
    const struct bench_opt own[] = {
        {"pattern", BENCH_OPT_STRING, &only, 0, "run one pattern only (see the list below)"},
        {"delay-us", BENCH_OPT_LONG, &g.delay_us, 0,
         "a late peer's or a computation's delay (default 1000)"},
        {"size", BENCH_OPT_SIZE, &g.size, 0, "bytes per put (default 1M)"},
    };
    const struct bench_spec spec = {
        .prog = BENCH,
        .usage = "mpiexec -n 3 " BENCH " [options]",
        .uses = BENCH_USE_REPS,
        .opts = own,
        .nopts = 3,
        .quick_reps = 3,
    };
    int rc = bench_parse(argc, argv, &spec, &c);
    if (rc < 0) list_patterns();
    if (rc == 0 && (g.nranks < 3 || g.size > (1u << 30))) {
        if (g.rank == 0) fprintf(stderr, "patterns: needs >= 3 ranks and a size <= 1 GiB\n");
        rc = 1;
    }
    if (rc) {
        MPI_Finalize();
        return rc < 0 ? 0 : 1;
    }
    int reps = c.reps;
    g.src = bench_alloc(g.size);
    bench_fill(g.src, g.size, 42);
    void *mbase;
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)(3 * g.size), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mbase,
                               &g.mwin));
    g.nwin = make_window(NULL, NULL);
    for (int f = 0; f < NFLAGS; f++) {
        g.fwin[f][S_OFF] = make_window(flag_keys[f], "false");
        g.fwin[f][S_ON] = make_window(flag_keys[f], "true");
    }
    bench_print_header("narma patterns: inefficiency patterns of RMA synchronisation "
                       "(nonblocking-RMA paper VIII-A)",
                       MPI_COMM_WORLD);
    if (g.rank == 0) {
        printf("# put size %zu bytes, delay %ld us (nanosleep), %d repetitions\n", g.size,
               g.delay_us, reps);
        bench_csv_open(c.csv);
    }
    int found = 0, met = 0, ran = 0;
    for (int i = 0; i < NPATTERNS; i++) {
        if (only && strcmp(only, patterns[i].name) != 0) continue;
        found = 1;
        ran++;
        met += run_pattern(&patterns[i], reps);
    }
    if (!found)
        list_patterns();
    else if (g.rank == 0)
        printf("\n# %d of %d judged ratios meet their target\n", met, ran);
    if (g.rank == 0) bench_csv_close();
    for (int f = 0; f < NFLAGS; f++)
        for (int s = 0; s < 2; s++)
            NCHECK(NARMA_Win_free(&g.fwin[f][s]));
    NCHECK(NARMA_Win_free(&g.nwin));
    MPI_Win_free(&g.mwin);
    MPI_Group_free(&g.world);
    free(g.src);
    MPI_Finalize();
    return found ? 0 : 1;
}
