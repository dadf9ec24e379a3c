/*
 * poll_cost: what one poll of a window costs its target as the window grows.
 *
 *   NARMA_TRANSPORT=mpi mpiexec -n P poll_cost [--reps R] [--iters N] [--joined K] [--quick]
 *
 * Rank 0 times NARMA_Test on a started notification request that nothing completes: each call
 * polls the window (on `mpi`, the sub-rings of the origins that ever notified rank 0, and
 * MPI_Win_sync). Before the timing, ranks 1..K each send rank 0 one notified put, which rank 0
 * matches, so that K origins have joined its list (default: every rank). The other ranks wait
 * in MPI_Ibarrier with a 1 ms sleep between tests, so that they leave the cores to rank 0 even
 * when P exceeds the cores. Prints one line per run:
 *   poll_cost transport=<t> ranks=P joined=K test_ns=<median over R repetitions of N calls>
 * Compare runs at several P (and the same P at several K): the cost of a poll should follow K,
 * the origins that notify this rank, not P.
 */
#include <narma/narma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        int rc_ = (call);                                                                    \
        if (rc_ != 0) {                                                                      \
            fprintf(stderr, "poll_cost: %s:%d: %s -> %d\n", __FILE__, __LINE__, #call, rc_); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                    \
        }                                                                                    \
    } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Wait for the others without taking a core from rank 0. */
static void sleepy_barrier(void)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (!done) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

int main(int argc, char **argv)
{
    int reps = 11, iters = 20000, joined = -1, rank, size;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--joined") && i + 1 < argc)
            joined = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            reps = 3, iters = 200;
        else {
            fprintf(stderr, "usage: poll_cost [--reps R] [--iters N] [--joined K] [--quick]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || iters < 1) {
        fprintf(stderr, "poll_cost: bad --reps or --iters\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (joined < 0 || joined > size - 1) joined = size - 1;

    NARMA_Win win;
    uint64_t *base;
    CHECK(NARMA_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    /* Origins 1..K join rank 0's list with one notified put each. */
    if (rank >= 1 && rank <= joined) {
        const uint64_t v = (uint64_t)rank;
        CHECK(NARMA_Put_notify(&v, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, win, 1));
    }
    if (rank == 0) {
        NARMA_Request r, idle;
        CHECK(NARMA_Notify_init(win, MPI_ANY_SOURCE, 1, joined > 0 ? joined : 1, &r));
        if (joined > 0) {
            CHECK(NARMA_Start(&r));
            CHECK(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        }
        CHECK(NARMA_Request_free(&r));
        CHECK(NARMA_Notify_init(win, MPI_ANY_SOURCE, 2, 1, &idle));
        CHECK(NARMA_Start(&idle));
        double *ns = malloc(sizeof(double) * (size_t)reps);
        for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
            int flag = 0;
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                CHECK(NARMA_Test(&idle, &flag, MPI_STATUS_IGNORE));
            if (flag) {
                fprintf(stderr, "poll_cost: the idle request completed\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            if (rep >= 0) ns[rep] = (MPI_Wtime() - t0) / iters * 1e9;
        }
        qsort(ns, (size_t)reps, sizeof *ns, cmp_double);
        printf("poll_cost transport=%s ranks=%d joined=%d test_ns=%.1f\n",
               NARMA_Win_get_transport(win), size, joined,
               reps % 2 ? ns[reps / 2] : 0.5 * (ns[reps / 2 - 1] + ns[reps / 2]));
        free(ns);
        CHECK(NARMA_Request_free(&idle));
    }
    sleepy_barrier();
    CHECK(NARMA_Win_free(&win));
    MPI_Finalize();
    return 0;
}
