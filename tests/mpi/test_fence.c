/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Fence epochs: operations issued between two fences are complete at both
 * ends after the second fence; local stores before a fence are visible to
 * remote Gets after it; assertions (NOPRECEDE, NOSUCCEED, NOSTORE, NOPUT)
 * are accepted; many iterations with fresh data each time; two windows
 * fenced alternately do not interfere.
 */
#include "common.h"

#define N 32

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_fence", 45);
    const int rank = test_rank, size = test_size;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int iters = (int)env_long("NARMA_TEST_ITERS", 200);

    int *a, *b;
    NARMA_Win wa, wb;
    /* wa: [0,N) put by left, [N,2N) my local data read by others, [2N] accumulated */
    CHECK_RC(NARMA_Win_allocate((2 * N + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &a, &wa));
    CHECK_RC(
        NARMA_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &b, &wb));
    for (int i = 0; i < 2 * N + 1; i++)
        a[i] = 0;
    for (int i = 0; i < N; i++)
        b[i] = 0;

    test_phase("first fence with NOPRECEDE");
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOPRECEDE, wa));
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOPRECEDE, wb));

    int out[N], got[N];
    for (int it = 0; it < iters; it++) {
        test_phase("iteration: put to right, accumulate to all, fence");
        for (int i = 0; i < N; i++)
            out[i] = it * 1000 + rank * 10 + (i % 10);
        int one = 1;
        CHECK_RC(NARMA_Put(out, N, MPI_INT, right, 0, N, MPI_INT, wa));
        for (int t = 0; t < size; t++)
            CHECK_RC(NARMA_Accumulate(&one, 1, MPI_INT, t, 2 * N, 1, MPI_INT, NARMA_SUM, wa));
        CHECK_RC(NARMA_Put(&out[1], 1, MPI_INT, left, it % N, 1, MPI_INT, wb));
        /* origin buffers are reusable only after the fence; keep them intact until then */
        CHECK_RC(NARMA_Win_fence(0, wa));
        CHECK_RC(NARMA_Win_fence(0, wb));
        for (int i = 0; i < N; i++) {
            int want = it * 1000 + left * 10 + (i % 10);
            CHECK(a[i] == want, "iteration %d: a[%d] = %d, expected %d", it, i, a[i], want);
        }
        CHECK(a[2 * N] == (it + 1) * size, "iteration %d: accumulated %d, expected %d", it,
              a[2 * N], (it + 1) * size);
        CHECK(b[it % N] == it * 1000 + right * 10 + 1, "iteration %d: b[%d] = %d", it, it % N,
              b[it % N]);

        test_phase("iteration: local stores then remote Get after a fence");
        for (int i = 0; i < N; i++)
            a[N + i] = -(it * 100 + rank + i);
        /* a fence with NOPUT: nobody puts into wa during the coming epoch */
        CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOPUT, wa));
        CHECK_RC(NARMA_Get(got, N, MPI_INT, left, N, N, MPI_INT, wa));
        /* NOSTORE: no local stores to wa since the NOPUT fence */
        CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOSTORE, wa));
        for (int i = 0; i < N; i++)
            CHECK(got[i] == -(it * 100 + left + i), "iteration %d: got[%d] = %d, expected %d", it,
                  i, got[i], -(it * 100 + left + i));
    }

    test_phase("closing fence with NOSUCCEED, then a fresh NOPRECEDE epoch");
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOSUCCEED, wa));
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOSUCCEED, wb));
    /* outside any epoch now: plain barrier-separated local writes */
    a[0] = 4242 + rank;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOPRECEDE, wa));
    int v = -1;
    CHECK_RC(NARMA_Get(&v, 1, MPI_INT, right, 0, 1, MPI_INT, wa));
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOSUCCEED | NARMA_MODE_NOPUT, wa));
    CHECK(v == 4242 + right, "Get after NOPRECEDE fence got %d, expected %d", v, 4242 + right);

    test_phase("a lock_all epoch after the fence sequence ended");
    CHECK_RC(NARMA_Win_lock_all(0, wa));
    CHECK_RC(NARMA_Put(&rank, 1, MPI_INT, right, 1, 1, MPI_INT, wa));
    CHECK_RC(NARMA_Win_unlock_all(wa));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(a[1] == left, "put in lock_all after fences: a[1] = %d, expected %d", a[1], left);

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&wa));
    CHECK_RC(NARMA_Win_free(&wb));
    return test_finish();
}
