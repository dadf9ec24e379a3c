/* narma-test: np=2,3,4 transports=shm timeout=60 */
/*
 * A window creation that fails on one rank fails on every rank, and none is
 * left blocked in a collective (0.1.0's shm transport returned at once on the
 * rank that ran out of memory while the others waited in the next
 * collective). The failure is injected with the shm transport's test hook
 * NARMA_TEST_FAIL_ALLOC=RANK:STAGE (src/transport/shm/shm.c), on the first and
 * on the last rank, at each stage of creation: the rank's private state (1),
 * after the shared segment exists (2), while mapping the peers (3). Every
 * rank must return NARMA_ERR_NO_MEM, and a window created afterwards works.
 * A window of 2^62 bytes on one rank alone (narma refuses what no machine
 * can map, before asking MPI) fails on every rank too. The hook and the
 * shared segment belong to the shm transport, hence shm only. (A size MPI
 * itself cannot map, e.g. 2^61, is not used: Open MPI 5.0.11 then returns
 * the error on that rank only and leaves the others inside
 * MPI_Win_allocate_shared.)
 */
#include "common.h"

static int rank, size;

/* A window created after a failure works: everybody puts its rank into its right neighbour. */
static void window_works(void)
{
    int *base = NULL, got = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
    NARMA_Win win = NARMA_WIN_NULL;
    CHECK_RC(
        NARMA_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    got = *base;
    CHECK(got == left, "after a failed creation, a new window got %d from the left, expected %d",
          got, left);
    CHECK_RC(NARMA_Win_free(&win));
}

static void injected(int failing, int stage)
{
    char phase[96], val[32];
    snprintf(phase, sizeof phase, "creation fails on rank %d at stage %d", failing, stage);
    test_phase(phase);
    snprintf(val, sizeof val, "%d:%d", failing, stage);
    setenv("NARMA_TEST_FAIL_ALLOC", val, 1);
    int *base = NULL;
    NARMA_Win win = NARMA_WIN_NULL;
    int rc = NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    unsetenv("NARMA_TEST_FAIL_ALLOC");
    CHECK(rc == NARMA_ERR_NO_MEM, "Win_allocate returned %d (%s) on %s rank, expected %d (%s)", rc,
          NARMA_Strerror(rc), rank == failing ? "the failing" : "a healthy", NARMA_ERR_NO_MEM,
          NARMA_Strerror(NARMA_ERR_NO_MEM));
    if (rc == NARMA_SUCCESS) CHECK_RC(NARMA_Win_free(&win));
    window_works();
}

static void huge_on_one_rank(void)
{
    test_phase("a window of 2^62 bytes on rank 0 only");
    int *base = NULL;
    NARMA_Win win = NARMA_WIN_NULL;
    MPI_Aint bytes = rank == 0 ? (MPI_Aint)1 << 62 : 64;
    int rc = NARMA_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    CHECK(rc == NARMA_ERR_NO_MEM, "Win_allocate returned %d (%s), expected %d (%s)", rc,
          NARMA_Strerror(rc), NARMA_ERR_NO_MEM, NARMA_Strerror(NARMA_ERR_NO_MEM));
    if (rc == NARMA_SUCCESS) CHECK_RC(NARMA_Win_free(&win));
    int all_failed = 0, failed = rc != NARMA_SUCCESS;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    CHECK(all_failed, "some rank created the window");
    window_works();
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_win_create_fail", 50);
    rank = test_rank;
    size = test_size;
    window_works();
    for (int stage = 1; stage <= 3; stage++) {
        injected(0, stage);
        injected(size - 1, stage);
    }
    huge_on_one_rank();
    return test_finish();
}
