/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 */
/*
 * NARMA_WIN_MODEL tells the truth. On the mpi transport it is the model of
 * the MPI window underneath, which this test compares with an MPI window of
 * the same flavor it creates itself on the same communicator; on shm (plain
 * shared memory, narma's own loads and stores) it is UNIFIED.
 *
 * Then, with NARMA_TEST_SEPARATE=1 (a testing hook read at window creation),
 * the mpi transport treats its windows as separate-model: the attribute says
 * SEPARATE, and notified accesses, fences, locks and dynamic windows still
 * deliver the right data through narma's separate-model paths (control words
 * and ring records read with MPI atomics, MPI_Win_sync of the data window
 * before a notification or an epoch's end is acted on).
 */
#include "common.h"

#define N 8

static int rank, size;

static int model_of(NARMA_Win win)
{
    int *m = NULL, flag = 0;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_MODEL, &m, &flag));
    CHECK(flag && m, "NARMA_WIN_MODEL not set");
    return *m;
}

static int mpi_model_of(MPI_Win win)
{
    int *m = NULL, flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &m, &flag));
    CHECK(flag && m, "MPI_WIN_MODEL not set");
    return *m;
}

static const char *name_of(int m)
{
    return m == NARMA_WIN_UNIFIED ? "UNIFIED" : m == NARMA_WIN_SEPARATE ? "SEPARATE" : "?";
}

/* Create a narma window and an MPI one of the same flavor; return both models. */
static void compare(int flavor, int separate)
{
    int *mem = calloc(N, sizeof(int)), *amem = NULL, *mmem = NULL;
    NARMA_Win win;
    MPI_Win mwin;
    if (flavor == NARMA_WIN_FLAVOR_CREATE) {
        CHECK_RC(NARMA_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &win));
        CHECK_MPI(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                 &mwin));
    } else if (flavor == NARMA_WIN_FLAVOR_ALLOCATE) {
        CHECK_RC(NARMA_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                    &amem, &win));
        CHECK_MPI(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                   &mmem, &mwin));
    } else {
        CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &mwin));
    }
    int got = model_of(win), mpi = mpi_model_of(mwin);
    const char *tp = NARMA_Win_get_transport(win);
    /* shm is unified; a window with mpi pairs (mpi, shm+mpi) has the MPI window's model. */
    int want = strcmp(tp, "shm") == 0 ? NARMA_WIN_UNIFIED : separate ? NARMA_WIN_SEPARATE : mpi;
    CHECK(got == want, "flavor %d on %s%s: NARMA_WIN_MODEL %s, expected %s (MPI says %s)", flavor,
          tp, separate ? " with NARMA_TEST_SEPARATE=1" : "", name_of(got), name_of(want),
          name_of(mpi));
    CHECK_MPI(MPI_Win_free(&mwin));
    CHECK_RC(NARMA_Win_free(&win));
    free(mem);
}

/* Notified puts, a fenced put, a locked put + get, a dynamic put: data must arrive. */
static void exercise(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                &win));
    for (int i = 0; i < N; i++)
        mem[i] = -1;
    CHECK_RC(NARMA_Win_sync(win)); /* local stores -> public copy (MPI's rule for SEPARATE) */
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("separate model: notified puts");
    for (int i = 0; i < 4; i++) {
        int v = 100 * rank + i;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT, right, i, 1, MPI_INT, win, 1));
    }
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(win, left, 1, 4, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&req));
    for (int i = 0; i < 4; i++)
        CHECK(mem[i] == 100 * left + i, "after notification: mem[%d] = %d, expected %d", i, mem[i],
              100 * left + i);

    test_phase("separate model: fence");
    CHECK_RC(NARMA_Win_fence(0, win));
    int v = 500 + rank;
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT, right, 4, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK(mem[4] == 500 + left, "after fence: mem[4] = %d, expected %d", mem[4], 500 + left);
    CHECK_RC(NARMA_Win_fence(0, win));

    test_phase("separate model: exclusive lock, put, get");
    v = 600 + rank;
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, right, 0, win));
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT, right, 5 + (rank == right), 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_unlock(right, win));
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win));
    int got = -2;
    CHECK_RC(NARMA_Get(&got, 1, MPI_INT, right, 5, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_unlock(right, win));
    CHECK(got == 600 + rank, "get after unlock: %d, expected %d", got, 600 + rank);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));

    test_phase("separate model: dynamic window");
    long long *dmem = calloc(2, sizeof(long long));
    MPI_Aint mine, *addr = malloc(size * sizeof(MPI_Aint));
    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(NARMA_Win_attach(win, dmem, 2 * sizeof(long long)));
    MPI_Get_address(dmem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    long long lv = 700 + rank;
    CHECK_ERR(NARMA_Put(&lv, 1, MPI_LONG_LONG, right, MPI_Aint_add(addr[right], 16), 1,
                        MPI_LONG_LONG, win),
              NARMA_ERR_DISP);
    CHECK_RC(NARMA_Put_notify(&lv, 1, MPI_LONG_LONG, right, MPI_Aint_add(addr[right], 8), 1,
                              MPI_LONG_LONG, win, 2));
    CHECK_RC(NARMA_Notify_init(win, left, 2, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK(dmem[1] == 700 + left, "dynamic: %lld, expected %d", dmem[1], 700 + left);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_detach(win, dmem));
    CHECK_RC(NARMA_Win_free(&win));
    free(dmem);
    free(addr);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_win_model", 80);
    rank = test_rank;
    size = test_size;
    static const int flavors[3] = {NARMA_WIN_FLAVOR_CREATE, NARMA_WIN_FLAVOR_ALLOCATE,
                                   NARMA_WIN_FLAVOR_DYNAMIC};

    test_phase("NARMA_WIN_MODEL equals MPI's model of a window of the same flavor");
    for (int f = 0; f < 3; f++)
        compare(flavors[f], 0);

    test_phase("NARMA_TEST_SEPARATE=1: the mpi transport reports and honours SEPARATE");
    setenv("NARMA_TEST_SEPARATE", "1", 1);
    for (int f = 0; f < 3; f++)
        compare(flavors[f], 1);
    exercise();
    unsetenv("NARMA_TEST_SEPARATE");
    return test_finish();
}
