/* narma-test: np=2,4 transports=shm,mpi timeout=60 */
/*
 * With an MPI library built on UCX, UCX's memory hooks watch every mmap of the
 * process, and its registration cache crashed (in a later MPI_Win_create, in
 * MPI_Finalize) after narma had moved Win_create pages onto shared memory
 * under it. So while those hooks are active (UCX_MEM_EVENTS unset or yes),
 * Win_create windows use the mpi transport on every rank; this test runs in
 * the default environment and checks that, then the sequence that crashed:
 * a window, data through it, its free, an MPI window over the same memory
 * (UCX registers it), and MPI_Finalize. Skipped where no UCX hooks are loaded
 * (test_win_create_shm covers the shared path, with UCX_MEM_EVENTS=no).
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define N 512

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_win_create_ucx", 50);
    const int rank = test_rank, size = test_size;
    if (dlsym(RTLD_DEFAULT, "ucm_set_event_handler") == NULL)
        return test_skip("the MPI library loads no UCX memory hooks");
    const char *ev = getenv("UCX_MEM_EVENTS");
    if (ev != NULL && strcmp(ev, "yes") != 0 && strcmp(ev, "y") != 0)
        return test_skip("UCX_MEM_EVENTS is set: the hooks may be off");
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 3; round++) {
        test_phase("Win_create while UCX's hooks are active: mpi, data moves");
        int *mem = calloc(N, sizeof(int));
        NARMA_Win win;
        CHECK_RC(NARMA_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &win));
        const char *t = NARMA_Win_get_transport(win);
        /* shm refuses the memory. On one node the window falls back to mpi; across pretend
         * nodes to the network half, ofi with NARMA_TRANSPORT=ofi. */
        const long k = env_long("NARMA_NODE_SIZE", 0);
        const char *want = k > 0 && k < size ? test_net_name("mpi") : "mpi";
        CHECK(t != NULL && strcmp(t, want) == 0, "transport %s, expected %s", t ? t : "(null)",
              want);
        int v[N];
        for (int i = 0; i < N; i++)
            v[i] = 1000 * rank + i + round;
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Put(v, N, MPI_INT, right, 0, N, MPI_INT, win));
        CHECK_RC(NARMA_Win_unlock_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_sync(win));
        for (int i = 0; i < N; i++)
            CHECK(mem[i] == 1000 * left + i + round, "element %d is %d", i, mem[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&win));

        test_phase("an MPI window over the same memory afterwards");
        MPI_Win mw;
        CHECK_MPI(
            MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mw));
        CHECK_MPI(MPI_Win_fence(0, mw));
        CHECK_MPI(MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, mw));
        CHECK_MPI(MPI_Win_fence(0, mw));
        CHECK(mem[0] == 1000 * left + round, "MPI put: %d", mem[0]);
        CHECK_MPI(MPI_Win_free(&mw));
        free(mem);
    }
    return test_finish();
}
