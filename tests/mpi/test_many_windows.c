/* narma-test: np=4 transports=shm,mpi timeout=240 */
/*
 * 500 windows alive at once (the number MPICH's window_allocation test keeps), each carrying
 * one notified put around the ring of ranks, checked, before any is freed.
 *
 * Why: an MPI library has a few thousand communicator contexts (MPICH 2048), and every MPI
 * window takes one. A window across nodes held five of them (narma's duplicate of the
 * communicator, the hybrid transport's node communicator, mpi's data and control windows, shm's
 * segment), so with MPICH at NARMA_NODE_SIZE=2 the 410th window failed. The node communicator
 * is now made once per communicator the program passes and kept with it (narmat_node_get), and
 * mpi's control words and data are one MPI window for Win_allocate: three per window, 680 fit.
 * With Open MPI, which has no such limit, this passes either way.
 */
#include "common.h"

#include <stdlib.h>

#define NWIN 500

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_many_windows", 230);
    const int right = (test_rank + 1) % test_size;
    const int left = (test_rank + test_size - 1) % test_size;
    NARMA_Win *win = calloc(NWIN, sizeof *win);
    long long **base = calloc(NWIN, sizeof *base);
    CHECK(win != NULL && base != NULL, "out of memory");

    test_phase("create the windows");
    for (int i = 0; i < NWIN; i++) {
        snprintf(test_detail, sizeof test_detail, "window %d", i);
        CHECK_RC(NARMA_Win_allocate(2 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                                    MPI_COMM_WORLD, &base[i], &win[i]));
        base[i][0] = base[i][1] = -1;
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("a notified put on every window, then every value");
    for (int i = 0; i < NWIN; i++) {
        snprintf(test_detail, sizeof test_detail, "window %d", i);
        NARMA_Request req;
        CHECK_RC(NARMA_Notify_init(win[i], left, 7, 1, &req));
        CHECK_RC(NARMA_Start(&req));
        long long v = 1000LL * test_rank + i;
        CHECK_RC(NARMA_Win_lock_all(0, win[i]));
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, win[i], 7));
        CHECK_RC(NARMA_Win_unlock_all(win[i]));
        CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Request_free(&req));
        CHECK(base[i][1] == 1000LL * left + i, "window %d holds %lld, want %lld", i, base[i][1],
              1000LL * left + i);
        CHECK(base[i][0] == -1, "window %d: word 0 changed to %lld", i, base[i][0]);
    }

    test_phase("free them");
    for (int i = NWIN - 1; i >= 0; i--) {
        snprintf(test_detail, sizeof test_detail, "window %d", i);
        CHECK_RC(NARMA_Win_free(&win[i]));
    }
    free(win);
    free(base);
    return test_finish();
}
