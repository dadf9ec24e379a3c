/*
 * Helpers shared by the application kernels cholesky, lu and transactions
 * (the paper kernels of issue 5): error checks, the run header, scheme lists,
 * a watchdog, a counter-based random generator and the interleaved-repetition
 * statistics. Header-only on top of common.h; clients of the public API only.
 *
 * Statistics: a run makes R repetitions; each repetition runs every selected
 * scheme once, in an order rotated per repetition, so all schemes see the same
 * machine state. A rate is the median over repetitions; a ratio is the median
 * over repetitions of the per-repetition ratio.
 */
#ifndef NARMA_BENCH_KERN2_COMMON_H
#define NARMA_BENCH_KERN2_COMMON_H

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <narma/narma.h>

#include "common.h"

#define NARMA_CHECK(call)                                                                        \
    do {                                                                                         \
        int k2_nrc_ = (call);                                                                    \
        if (k2_nrc_ != NARMA_SUCCESS)                                                            \
            bench_die(BENCH_HERE, "%s -> %s (%d; MPI error %d)", #call, NARMA_Strerror(k2_nrc_), \
                      k2_nrc_, k2_nrc_ == NARMA_ERR_MPI ? NARMA_Get_mpi_error() : 0);            \
    } while (0)

/* ---- random numbers ---------------------------------------------------- */

/** splitmix64 step: a well-mixed 64-bit word; *state advances. */
static inline uint64_t k2_rand(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/** A uniform double in [0, 1) that depends only on key (for matrices generated anywhere). */
static inline double k2_uniform(uint64_t key)
{
    uint64_t s = key * 0x100000001b3ull;
    return (double)(k2_rand(&s) >> 11) * 0x1.0p-53;
}

/* ---- watchdog ---------------------------------------------------------- */

static char k2_watch_msg[256];

static void k2_watchdog_fire(int sig)
{
    (void)sig;
    ssize_t r = write(2, k2_watch_msg, strlen(k2_watch_msg));
    (void)r;
    _exit(3);
}

/** Abort this process (exit 3, message on stderr) unless re-armed within seconds. */
static inline void k2_watchdog(int seconds, const char *bench, const char *what, int rep)
{
    snprintf(k2_watch_msg, sizeof k2_watch_msg,
             "\n%s: TIMEOUT: no progress in %d s: %s, repetition %d\n", bench, seconds, what, rep);
    signal(SIGALRM, k2_watchdog_fire);
    alarm((unsigned)seconds);
}

/* ---- scheme lists ------------------------------------------------------ */

/** Parse "a,b" (or "all") against names[0..n); sets sel[]. Returns 0, or -1 on an unknown name. */
static inline int k2_parse_schemes(const char *list, const char *const *names, int n, int *sel)
{
    char *copy = strdup(list);
    int bad = copy == NULL;
    for (int s = 0; s < n; s++)
        sel[s] = 0;
    for (char *tok = copy ? strtok(copy, ",") : NULL; tok && !bad; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int s = 0; s < n; s++)
            if (!strcmp(tok, names[s]) || !strcmp(tok, "all")) sel[s] = found = 1;
        bad = !found;
    }
    free(copy);
    return bad ? -1 : 0;
}

/* ---- statistics -------------------------------------------------------- */

/** Median over reps of x[i] (y == NULL) or x[i]/y[i]; NaNs are skipped. */
static inline double k2_median(const double *x, const double *y, int reps)
{
    double v[reps > 0 ? reps : 1];
    size_t n = 0;
    for (int i = 0; i < reps; i++) {
        double q = y ? x[i] / y[i] : x[i];
        if (!isnan(q)) v[n++] = q;
    }
    return bench_median(v, n);
}

/** max/min over reps of x (noise indicator). */
static inline double k2_spread(const double *x, int reps)
{
    double mn, mx;
    bench_minmax(x, (size_t)reps, &mn, &mx);
    return mx / mn;
}

/* ---- header ------------------------------------------------------------ */

/** Rank 0 prints the standard header: what, MPI library, narma version and transport, ranks. */
static inline void k2_header(MPI_Comm comm, const char *title)
{
    int rank, size, len;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    void *base;
    NARMA_Win win;
    NARMA_CHECK(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, comm, &base, &win));
    const char *tr = NARMA_Win_get_transport(win);
    char transport[32];
    snprintf(transport, sizeof transport, "%s", tr ? tr : "(null)");
    NARMA_CHECK(NARMA_Win_free(&win));
    MPI_Comm shm;
    int nshm;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    MPI_CHECK(MPI_Comm_size(shm, &nshm));
    MPI_CHECK(MPI_Comm_free(&shm));
    if (rank != 0) return;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    lib[strcspn(lib, "\n")] = '\0';
    const char *tenv = getenv("NARMA_TRANSPORT");
    printf("# narma %s\n", title);
    printf("# MPI library     : %s\n", lib);
    printf("# narma version   : %s\n", NARMA_Get_version());
    printf("# narma transport : %s (NARMA_TRANSPORT=%s)\n", transport, tenv ? tenv : "unset");
    printf("# ranks           : %d (%d on rank 0's node)\n", size, nshm);
}

#endif /* NARMA_BENCH_KERN2_COMMON_H */
