/*
 * NARMA_ERRORS_ARE_FATAL: a failing call on a window with that handler prints the error and
 * aborts the job (MPI_Abort on the window's communicator). Registered by tests/CMakeLists.txt
 * (not a test_*.c: it must not exit 0): the test passes when the abort message appears and
 * fails when the program gets past the call ("NOT ABORTED").
 */
#include <narma/narma.h>

#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, v = 1;
    NARMA_Win win;
    void *base;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) != NARMA_SUCCESS ||
        NARMA_Win_set_errhandler(win, NARMA_ERRORS_ARE_FATAL) != NARMA_SUCCESS ||
        NARMA_Win_set_name(win, "fatal_window") != NARMA_SUCCESS) {
        printf("FAIL setup\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* A successful call goes through. */
    if (NARMA_Win_fence(0, win) != NARMA_SUCCESS) printf("FAIL fence\n");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int rc = NARMA_Put(&v, 1, MPI_BYTE, size, 0, 1, MPI_BYTE, win); /* rank out of range */
        printf("NOT ABORTED: NARMA_Put returned %d\n", rc);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    NARMA_Win_free(&win);
    MPI_Finalize();
    return 0;
}
