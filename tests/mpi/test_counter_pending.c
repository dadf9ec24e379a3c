/* narma-test: np=2,3 transports=shm,mpi timeout=60 */
/*
 * narma.h: NARMA_Win_set_num_notify refuses, with NARMA_ERR_PENDING, to change the counters
 * while a threshold request is pending on the window, and being collective it fails on every
 * rank together (the others' counters stay as they were too). Once the request is freed (or
 * complete), set_num_notify works again.
 */
#include "common.h"

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "counter_pending", 50);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(size * (MPI_Aint)sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &mem, &win));
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 2));

    test_phase("a counter arrives, then a threshold request is left pending on rank 0");
    const int64_t one = 1;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, 1, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    NARMA_Request thr = NARMA_REQUEST_NULL;
    if (rank == 0) {
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 1, size + 1, &thr));
        int flag = 1;
        CHECK_RC(NARMA_Test(&thr, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "threshold %d complete with %d increments", size + 1, size);
    }

    test_phase("set_num_notify with the request pending: refused on every rank");
    int rc = NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 3);
    if (rank == 0)
        CHECK(rc == NARMA_ERR_PENDING, "set_num_notify with a pending threshold request: %d (%s)",
              rc, NARMA_Strerror(rc));
    else
        CHECK(rc != NARMA_SUCCESS, "set_num_notify succeeded while rank 0 had a pending request");
    int n = -1;
    CHECK_RC(NARMA_Win_get_num_notify(win, (rank + 1) % size, &n));
    CHECK(n == 2, "a refused set_num_notify changed the counter count to %d", n);
    if (rank == 0) {
        MPI_Count v = -1;
        CHECK_RC(NARMA_Win_get_notify_value(win, 1, &v));
        CHECK(v == size, "counter 1 is %lld after a refused set_num_notify, want %d", (long long)v,
              size);
        /* The request still watches the same counter: one more increment completes it. */
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, 1, win));
        CHECK_RC(NARMA_Win_unlock_all(win));
        CHECK_RC(NARMA_Wait(&thr, MPI_STATUS_IGNORE));
    }

    test_phase("a pending threshold request freed: set_num_notify works");
    if (rank == 0) {
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, 1000, &thr));
        CHECK_RC(NARMA_Request_free(&thr));
    }
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 3));
    CHECK_RC(NARMA_Win_get_num_notify(win, (rank + 1) % size, &n));
    CHECK(n == 3, "count %d after set_num_notify", n);

    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
