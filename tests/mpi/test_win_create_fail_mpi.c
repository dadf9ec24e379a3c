/* narma-test: np=2,3,4 transports=mpi timeout=60 */
/*
 * The mpi transport's window creation fails on every rank when it fails on
 * one, and leaves none blocked in a collective (before, a rank whose
 * transport state could not be allocated returned at once while the others
 * entered MPI_Win_create/allocate, and a dynamic window whose region tables
 * could not be allocated freed its data window alone). The failure is
 * injected with NARMA_TEST_FAIL_ALLOC=RANK:STAGE (src/transport/mpi/mpi.c):
 * stage 1, the rank's transport state, on every flavor; stage 2, a dynamic
 * window's region tables. On the first and on the last rank, every rank must
 * return NARMA_ERR_NO_MEM, and a window created afterwards works.
 */
#include "common.h"

static int rank, size;
static int buf[4];

static void window_works(void)
{
    int *base = NULL, right = (rank + 1) % size, left = (rank + size - 1) % size;
    NARMA_Win win = NARMA_WIN_NULL;
    CHECK_RC(
        NARMA_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK(*base == left, "after a failed creation, a new window got %d, expected %d", *base, left);
    CHECK_RC(NARMA_Win_free(&win));
}

static int create(int flavor, NARMA_Win *win)
{
    int *base = NULL;
    switch (flavor) {
    case 0:
        return NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, win);
    case 1:
        return NARMA_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win);
    default:
        return NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win);
    }
}

static void injected(int failing, int stage, int flavor)
{
    static const char *const names[] = {"allocate", "create", "dynamic"};
    char phase[128], val[32];
    snprintf(phase, sizeof phase, "%s window fails on rank %d at stage %d", names[flavor], failing,
             stage);
    test_phase(phase);
    snprintf(val, sizeof val, "%d:%d", failing, stage);
    setenv("NARMA_TEST_FAIL_ALLOC", val, 1);
    NARMA_Win win = NARMA_WIN_NULL;
    int rc = create(flavor, &win);
    unsetenv("NARMA_TEST_FAIL_ALLOC");
    CHECK(rc == NARMA_ERR_NO_MEM, "creation returned %d (%s) on %s rank, expected %d (%s)", rc,
          NARMA_Strerror(rc), rank == failing ? "the failing" : "a healthy", NARMA_ERR_NO_MEM,
          NARMA_Strerror(NARMA_ERR_NO_MEM));
    if (rc == NARMA_SUCCESS) CHECK_RC(NARMA_Win_free(&win));
    window_works();
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_win_create_fail_mpi", 50);
    rank = test_rank;
    size = test_size;
    const char *t = getenv("NARMA_TRANSPORT");
    if (t == NULL || strcmp(t, "mpi") != 0)
        return test_skip("the hook tested here is the mpi transport's");
    for (int f = 0; f < 3; f++) {
        injected(0, 1, f);
        injected(size - 1, 1, f);
    }
    injected(0, 2, 2);
    injected(size - 1, 2, 2);
    return test_finish();
}
