/* narma-test: np=2,3 transports=mpi timeout=60 */
/*
 * NARMA_Win_set_num_notify is collective and must fail on every rank together: on a window
 * whose notified accesses complete at the next flush (narma_notify_completion=flush), the
 * call first flushes them; when that flush fails on one rank, that rank returns the error
 * and every other rank must return an error too, never wait for it in a later collective.
 *
 * The flush is made to fail on the last rank by this program's own PMPI_Win_flush_all
 * (libnarma calls PMPI_ names, which the executable's definition preempts); it forwards to
 * MPI's and then reports MPI_ERR_OTHER once, when armed.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>

static volatile int fail_next_flush_all;

int PMPI_Win_flush_all(MPI_Win win)
{
    static int (*real)(MPI_Win);
    if (real == NULL) real = (int (*)(MPI_Win))dlsym(RTLD_NEXT, "PMPI_Win_flush_all");
    int rc = real(win);
    if (rc == MPI_SUCCESS && fail_next_flush_all) {
        fail_next_flush_all = 0;
        return MPI_ERR_OTHER;
    }
    return rc;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "counter_setnum_fail", 40);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "narma_notify_completion", "flush"));
    int64_t *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(size * (MPI_Aint)sizeof(int64_t), sizeof(int64_t), info,
                                MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    memset(mem, 0, size * sizeof(int64_t));
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 1));
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("a notified put, then set_num_notify whose flush fails on the last rank");
    const int64_t one = 1;
    const int to = (rank + 1) % size;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, to, rank, 1, MPI_INT64_T, 0, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    if (rank == size - 1) fail_next_flush_all = 1;
    int rc = NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 2);
    CHECK(rc != NARMA_SUCCESS, "set_num_notify succeeded although rank %d's flush failed",
          size - 1);
    fail_next_flush_all = 0;

    test_phase("the window still works and frees");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 1));
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
