/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Collective calls wait for a peer held by a full notification ring.
 *
 * Rank 1 sends rank 0 many more notified puts than rank 0's ring has room for
 * (NARMA_RING_SLOTS=16, set before the window is made) and nobody matches them;
 * then it calls the collective. Rank 0 calls the collective at once. Rank 1's
 * puts can only finish once rank 0 empties its ring, and rank 0 is inside the
 * collective: NARMA_Win_set_num_notify and NARMA_Win_free must poll the window
 * while they wait for the others (before, both sat in a blocking MPI
 * collective and the two ranks waited for each other for good). The other
 * ranks go straight to the collective. After set_num_notify rank 0 matches
 * every notification rank 1 sent, in order, with the last value in place.
 */
#include "common.h"

#include <stdlib.h>

#define N 200
#define T 0
#define O 1

static void flood(NARMA_Win win, int rank, int base)
{
    if (rank != O) return;
    for (int i = 0; i < N; i++) {
        const int64_t v = base + i;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win, 1 + i % 7));
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "free_full_ring", 50);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(setenv("NARMA_RING_SLOTS", "16", 1) == 0, "setenv");

    test_phase("set_num_notify while the origin waits for ring room");
    NARMA_Win win;
    int64_t *mem;
    CHECK_RC(NARMA_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    mem[0] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    flood(win, rank, 1000);
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 2));
    if (rank == T) {
        NARMA_Request r;
        MPI_Status st;
        CHECK_RC(NARMA_Notify_init(win, O, NARMA_ANY_TAG, 1, &r));
        for (int i = 0; i < N; i++) {
            CHECK_RC(NARMA_Start(&r));
            CHECK_RC(NARMA_Wait(&r, &st));
            CHECK(st.MPI_TAG == 1 + i % 7, "notification %d has tag %d, expected %d", i, st.MPI_TAG,
                  1 + i % 7);
        }
        CHECK_RC(NARMA_Request_free(&r));
        CHECK(mem[0] == 1000 + N - 1, "memory holds %lld, expected %d", (long long)mem[0],
              1000 + N - 1);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("Win_free while the origin waits for ring room");
    flood(win, rank, 2000);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
