/*
 * threads: what narma's thread support costs and gives, on 2 ranks.
 *
 *   mpiexec -n 2 -bind-to core threads [--reps R] [--iters N] [--puts P] [--threads LIST]
 *
 * Starts MPI at MPI_THREAD_MULTIPLE whatever narma is told (NARMA_THREADS=on|off), so that two
 * runs differ only in narma's process lock; bench/micro/thread_cost.sh alternates such runs and
 * reports the median of per-repetition ratios. Prints:
 *   pp_us        8-byte notified ping-pong (Put_notify + Win_flush, persistent Notify_init +
 *                Start/Wait), half round trip, median over R repetitions of N iterations;
 *   call_ns      one NARMA_Win_flush_local (nothing to complete: the cost of entering and
 *                leaving a call), median over R repetitions;
 *   rate T=t     (lock on only) t threads of each rank each stream P notified 8-byte puts to
 *                the other rank with its own tag, receiving its own in batches: notified puts
 *                per second per rank, all threads together, median over R repetitions.
 */
#include <narma/narma.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16
#define BATCH       64

#define CHECK(call)                                                                        \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        if (rc_ != 0) {                                                                    \
            fprintf(stderr, "threads: %s:%d: %s -> %d\n", __FILE__, __LINE__, #call, rc_); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
        }                                                                                  \
    } while (0)

static int rank, peer;
static NARMA_Win win;
static uint64_t *base;
static long puts_per_thread = 20000;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Tag 0 is the ping-pong's; thread t streams with tag 1 + t into slots [t * P, (t + 1) * P). */
static double pingpong_us(int iters)
{
    NARMA_Request r;
    uint64_t v = 1;
    CHECK(NARMA_Notify_init(win, peer, 0, 1, &r));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 1) {
            CHECK(NARMA_Start(&r));
            CHECK(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        }
        CHECK(NARMA_Put_notify(&v, 1, MPI_UINT64_T, peer, 0, 1, MPI_UINT64_T, win, 0));
        CHECK(NARMA_Win_flush(peer, win));
        if (rank == 0) {
            CHECK(NARMA_Start(&r));
            CHECK(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        }
    }
    double t = MPI_Wtime() - t0;
    CHECK(NARMA_Request_free(&r));
    return t / iters / 2 * 1e6;
}

static double call_ns(int iters)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        CHECK(NARMA_Win_flush_local(peer, win));
    return (MPI_Wtime() - t0) / iters * 1e9;
}

static void *stream(void *arg)
{
    const int t = (int)(intptr_t)arg;
    NARMA_Request r;
    CHECK(NARMA_Notify_init(win, peer, 1 + t, BATCH, &r));
    for (long i = 0; i < puts_per_thread; i += BATCH) {
        CHECK(NARMA_Start(&r));
        for (long j = i; j < i + BATCH; j++) {
            uint64_t v = (uint64_t)j;
            CHECK(NARMA_Put_notify(&v, 1, MPI_UINT64_T, peer, 1 + t * puts_per_thread + j, 1,
                                   MPI_UINT64_T, win, 1 + t));
        }
        CHECK(NARMA_Win_flush(peer, win));
        CHECK(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    }
    CHECK(NARMA_Request_free(&r));
    return NULL;
}

static double rate(int nthreads)
{
    pthread_t th[MAX_THREADS];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, stream, (void *)(intptr_t)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    double t1 = MPI_Wtime();
    /* Every slot holds its value: nothing lost on the way. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < nthreads; t++)
        for (long j = 0; j < puts_per_thread; j++)
            if (base[1 + t * puts_per_thread + j] != (uint64_t)j) {
                fprintf(stderr, "threads: rank %d: thread %d's slot %ld holds %llu\n", rank, t, j,
                        (unsigned long long)base[1 + t * puts_per_thread + j]);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    memset(base, 0xff, (size_t)(1 + nthreads * puts_per_thread) * sizeof *base);
    MPI_Barrier(MPI_COMM_WORLD);
    return (double)nthreads * (double)puts_per_thread / (t1 - t0);
}

int main(int argc, char **argv)
{
    int reps = 11, iters = 20000, threads[MAX_THREADS] = {1, 2, 4}, nthr = 3, size, provided;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--puts") && i + 1 < argc) {
            puts_per_thread = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            nthr = 0;
            for (char *tok = strtok(argv[++i], ","); tok && nthr < MAX_THREADS;
                 tok = strtok(NULL, ","))
                threads[nthr++] = atoi(tok);
        } else if (!strcmp(argv[i], "--quick")) {
            reps = 3, iters = 200, puts_per_thread = 640;
        } else {
            fprintf(stderr, "usage: threads [--reps R] [--iters N] [--puts P] [--threads LIST] "
                            "[--quick]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || iters < 1 || puts_per_thread < BATCH) {
        fprintf(stderr, "threads: bad --reps, --iters or --puts\n");
        return 2;
    }
    puts_per_thread -= puts_per_thread % BATCH;
    for (int i = 0; i < nthr; i++)
        if (threads[i] < 1 || threads[i] > MAX_THREADS) {
            fprintf(stderr, "threads: thread counts are 1..%d\n", MAX_THREADS);
            return 2;
        }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "threads: run on 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    peer = 1 - rank;
    int level;
    CHECK(NARMA_Query_thread(&level));
    int maxthr = 1;
    for (int i = 0; i < nthr; i++)
        if (threads[i] > maxthr) maxthr = threads[i];
    MPI_Aint bytes = (MPI_Aint)(1 + (long)maxthr * puts_per_thread) * 8;
    CHECK(NARMA_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK(NARMA_Win_lock_all(NARMA_MODE_NOCHECK, win));
    if (rank == 0)
        printf("# threads: MPI provides %s, narma offers %s (process lock %s), transport %s\n",
               provided == MPI_THREAD_MULTIPLE ? "MULTIPLE" : "less than MULTIPLE",
               level == MPI_THREAD_MULTIPLE ? "MULTIPLE" : "SERIALIZED",
               level == MPI_THREAD_MULTIPLE ? "on" : "off", NARMA_Win_get_transport(win));

    double *pp = malloc(sizeof(double) * (size_t)reps), *cn = malloc(sizeof(double) * reps);
    double *rt = malloc(sizeof(double) * (size_t)reps);
    pingpong_us(iters / 10 + 1); /* warm-up */
    for (int r = 0; r < reps; r++) {
        pp[r] = pingpong_us(iters);
        cn[r] = call_ns(iters * 10);
    }
    if (rank == 0) {
        printf("pp_us %.4f\n", median(pp, reps));
        printf("call_ns %.2f\n", median(cn, reps));
    }
    for (int i = 0; i < nthr && level == MPI_THREAD_MULTIPLE; i++) {
        for (int r = 0; r < reps; r++)
            rt[r] = rate(threads[i]);
        if (rank == 0) printf("rate T=%d %.0f\n", threads[i], median(rt, reps));
    }
    free(pp), free(cn), free(rt);
    CHECK(NARMA_Win_unlock_all(win));
    CHECK(NARMA_Win_free(&win));
    MPI_Finalize();
    return 0;
}
