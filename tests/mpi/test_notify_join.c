/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Origins that start notifying a target one after another, late, and with a hole in the
 * target's list of origins.
 *
 * On the `mpi` transport a target's poll reads only the sub-rings of origins that joined its
 * list (mpi.c, "Origins that joined"): an origin takes a place before its first notified
 * access to that target. Here rank 0 first polls with nobody joined, then the origins notify
 * it one at a time in the order 1, size-1, ..., 2, 0 (itself last), rank 0 matching each
 * origin's notifications before the next one starts, so it polls with a list that grows
 * between its polls. Rank 1 runs with the test hook NARMA_TEST_JOIN_HOLE=1 (read at window
 * creation): its join takes one place and leaves it empty, as a join that failed after taking
 * its place would, then takes the next; everyone after it must still be seen. A last round
 * has every rank notify at once (the list complete, the arrival order across origins
 * exercised). The second window, without the hook, checks that each window has its own list.
 * `shm` windows have no list and must pass alike. On a third window rank 1's join leaves 2 x
 * size holes, every place of rank 0's list: where rank 1 reaches rank 0 through `mpi`, its
 * notified put must then fail with NARMA_ERR_INTERN (no place left), not hang or corrupt.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 6
#define T 0

static void notify_k(NARMA_Win win, int rank, int round)
{
    for (int k = 1; k <= K; k++) {
        const int64_t v = 100000 * round + 1000 * rank + k;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, T, (MPI_Aint)(rank * K + k - 1), 1,
                                  MPI_INT64_T, win, k));
    }
}

/* Rank T: origin o's K notifications, in order, each with its payload in place. */
static void match_k(NARMA_Win win, const int64_t *mem, int o, int round)
{
    NARMA_Request r;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(win, o, NARMA_ANY_TAG, 1, &r));
    for (int k = 1; k <= K; k++) {
        CHECK_RC(NARMA_Start(&r));
        CHECK_RC(NARMA_Wait(&r, &st));
        CHECK(st.MPI_SOURCE == o && st.MPI_TAG == k,
              "round %d: origin %d's notification %d matched as <%d, %d>", round, o, k,
              st.MPI_SOURCE, st.MPI_TAG);
        CHECK(mem[o * K + k - 1] == 100000 * round + 1000 * o + k,
              "round %d: origin %d's value %d is %lld", round, o, k, (long long)mem[o * K + k - 1]);
    }
    CHECK_RC(NARMA_Request_free(&r));
}

static void one_window(int rank, int size, int hole)
{
    if (hole && rank == 1) CHECK(setenv("NARMA_TEST_JOIN_HOLE", "1", 1) == 0, "setenv");
    NARMA_Win win;
    int64_t *mem;
    CHECK_RC(
        NARMA_Win_allocate((MPI_Aint)(size * K) * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    if (hole && rank == 1) CHECK(unsetenv("NARMA_TEST_JOIN_HOLE") == 0, "unsetenv");
    memset(mem, 0, (size_t)(size * K) * 8);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("polls before anyone joined");
    if (rank == T) {
        NARMA_Request any;
        CHECK_RC(NARMA_Notify_init(win, MPI_ANY_SOURCE, NARMA_ANY_TAG, 1, &any));
        CHECK_RC(NARMA_Start(&any));
        test_expect_incomplete(&any, "a request before any notification");
        CHECK_RC(NARMA_Request_free(&any));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* nobody notifies before rank 0 looked */

    /* One origin at a time: 1, size-1, ..., 2, then T itself. */
    int order[64], n = 0;
    if (size > 1) order[n++] = 1;
    for (int r = size - 1; r >= 2; r--)
        order[n++] = r;
    order[n++] = T;
    for (int i = 0; i < n; i++) {
        test_phase(i == 0 ? "the first origin (rank 1 with a hole before its place)"
                          : "origins joining after it");
        if (rank == order[i]) notify_k(win, rank, 1);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == T) match_k(win, mem, order[i], 1);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("every origin at once");
    for (int round = 2; round < 6; round++) {
        notify_k(win, rank, round);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == T)
            for (int o = 0; o < size; o++)
                match_k(win, mem, o, round);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_RC(NARMA_Win_free(&win));
}

static void full_list(int rank, int size)
{
    test_phase("a list with no place left");
    char holes[16];
    snprintf(holes, sizeof holes, "%d", 2 * size);
    if (rank == 1) CHECK(setenv("NARMA_TEST_JOIN_HOLE", holes, 1) == 0, "setenv");
    NARMA_Win win;
    int64_t *mem;
    CHECK_RC(NARMA_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    if (rank == 1) {
        CHECK(unsetenv("NARMA_TEST_JOIN_HOLE") == 0, "unsetenv");
        const int64_t v = 7;
        if (strcmp(NARMA_Win_get_target_transport(win, T), "mpi") == 0)
            for (int i = 0; i < 2; i++) /* the second try takes a place past the end too */
                CHECK_ERR(NARMA_Put_notify(&v, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win, 1),
                          NARMA_ERR_INTERN);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(NARMA_Win_free(&win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "notify_join", 50);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64) return test_skip("at most 64 ranks");
    one_window(rank, size, 1);
    one_window(rank, size, 0);
    full_list(rank, size);
    return test_finish();
}
