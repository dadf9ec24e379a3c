/*
 * A plain MPI program, linked with the MPI library only, run by ctest with
 * LD_PRELOAD=libnarma-mpi.so (test pmpi.preload.np2.ld_preload). It checks that the preloaded
 * library really carries its windows: MPIX_Win_get_narma, looked up at run time (the program
 * does not link it), exists and names a narma window behind each window, and the data of a
 * fence epoch and of a lock_all epoch arrive. Without the preload it fails.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>

#define N 8

typedef int (*get_narma_fn)(MPI_Win, void **);

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi preload", 45);
    const int rank = test_rank, size = test_size;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    test_phase("the interposer is loaded");
    get_narma_fn get_narma = (get_narma_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "MPIX_Win_get_narma");
    CHECK(get_narma != NULL, "MPIX_Win_get_narma not found: libnarma-mpi is not preloaded");

    test_phase("Win_allocate and Win_create windows are carried by narma");
    int *a, *c = malloc(N * sizeof(int));
    MPI_Win wa, wc;
    CHECK_MPI(
        MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &a, &wa));
    CHECK_MPI(MPI_Win_create(c, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wc));
    test_errors_return(wa);
    test_errors_return(wc);
    void *na = NULL, *nc = NULL;
    CHECK_MPI(get_narma(wa, &na));
    CHECK_MPI(get_narma(wc, &nc));
    CHECK(na != NULL && nc != NULL, "narma windows %p, %p: a window was passed through", na, nc);

    test_phase("fence epoch on the allocated window");
    int out[N];
    for (int i = 0; i < N; i++) {
        a[i] = c[i] = -1;
        out[i] = test_val(1, rank, i);
    }
    CHECK_MPI(MPI_Win_fence(0, wa));
    CHECK_MPI(MPI_Put(out, N, MPI_INT, right, 0, N, MPI_INT, wa));
    CHECK_MPI(MPI_Win_fence(0, wa));
    for (int i = 0; i < N; i++)
        CHECK(a[i] == test_val(1, left, i), "element %d = %d, expected %d", i, a[i],
              test_val(1, left, i));

    test_phase("lock_all epoch on the created window: accumulate from everyone");
    for (int i = 0; i < N; i++)
        c[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int one[N];
    for (int i = 0; i < N; i++)
        one[i] = i + 1;
    CHECK_MPI(MPI_Win_lock_all(0, wc));
    CHECK_MPI(MPI_Accumulate(one, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, wc));
    CHECK_MPI(MPI_Win_unlock_all(wc));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        for (int i = 0; i < N; i++)
            CHECK(c[i] == size * (i + 1), "element %d = %d, expected %d", i, c[i], size * (i + 1));

    CHECK_MPI(MPI_Win_free(&wa));
    CHECK_MPI(MPI_Win_free(&wc));
    free(c);
    return test_finish();
}
