/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Windows created with info no_locks=true (the program promises not to lock them, as PRK's
 * MPIRMA p2p does for its PSCW window), of every flavor, used with fence and PSCW epochs and
 * notified puts; every value checked.
 *
 * Why: narma holds its own MPI windows in MPI_Win_lock_all for their whole life, and passed
 * the program's info on to them; Open MPI refuses MPI_Win_lock_all on a no_locks window
 * (MPI_ERR_RMA_SYNC), so every such window failed to be created wherever the mpi transport
 * served it (PRK p2p through libnarma-mpi with NARMA_NODE_SIZE=1 or =2). The mpi transport no
 * longer passes no_locks on.
 */
#include "common.h"

#include <stdlib.h>

#define N 16

static void use(NARMA_Win win, long long *base, const char *flavor)
{
    const int right = (test_rank + 1) % test_size, left = (test_rank + test_size - 1) % test_size;
    snprintf(test_detail, sizeof test_detail, "%s window", flavor);
    long long v = 100 + test_rank;
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(&v, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK(base[0] == 100 + left, "fence: got %lld, want %d", base[0], 100 + left);

    MPI_Group all, from, to;
    CHECK_RC(NARMA_Win_get_group(win, &all));
    CHECK_MPI(MPI_Group_incl(all, 1, &left, &from));
    CHECK_MPI(MPI_Group_incl(all, 1, &right, &to));
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(win, left, 5, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Win_post(from, 0, win));
    CHECK_RC(NARMA_Win_start(to, 0, win));
    v = 200 + test_rank;
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, win, 5));
    CHECK_RC(NARMA_Win_complete(win));
    CHECK_RC(NARMA_Win_wait(win));
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK(base[1] == 200 + left, "PSCW: got %lld, want %d", base[1], 200 + left);
    MPI_Group_free(&all);
    MPI_Group_free(&from);
    MPI_Group_free(&to);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_info_no_locks", 55);
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "no_locks", "true"));
    NARMA_Win win;

    test_phase("Win_allocate with no_locks");
    long long *a = NULL;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(long long), sizeof(long long), info, MPI_COMM_WORLD, &a,
                                &win));
    use(win, a, "allocate");
    CHECK_RC(NARMA_Win_free(&win));

    test_phase("Win_create with no_locks");
    long long *c = calloc(N, sizeof *c);
    CHECK(c != NULL, "out of memory");
    CHECK_RC(
        NARMA_Win_create(c, N * sizeof(long long), sizeof(long long), info, MPI_COMM_WORLD, &win));
    use(win, c, "create");
    CHECK_RC(NARMA_Win_free(&win));
    free(c);

    test_phase("Win_create_dynamic with no_locks");
    long long *d = calloc(N, sizeof *d);
    CHECK(d != NULL, "out of memory");
    CHECK_RC(NARMA_Win_create_dynamic(info, MPI_COMM_WORLD, &win));
    CHECK_RC(NARMA_Win_attach(win, d, N * sizeof(long long)));
    /* Displacements of a dynamic window are addresses: the right neighbour's. */
    const int right = (test_rank + 1) % test_size, left = (test_rank + test_size - 1) % test_size;
    MPI_Aint mine, there = 0;
    CHECK_MPI(MPI_Get_address(d, &mine));
    CHECK_MPI(MPI_Sendrecv(&mine, 1, MPI_AINT, left, 9, &there, 1, MPI_AINT, right, 9,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    long long v = 300 + test_rank;
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(&v, 1, MPI_LONG_LONG, right, there, 1, MPI_LONG_LONG, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK(d[0] == 300 + left, "dynamic, fence: got %lld, want %d", d[0], 300 + left);
    CHECK_RC(NARMA_Win_detach(win, d));
    CHECK_RC(NARMA_Win_free(&win));
    free(d);

    CHECK_MPI(MPI_Info_free(&info));
    return test_finish();
}
