/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Transfers that carry no bytes succeed and change nothing (MPI: a zero-size
 * message matches any type signature), in fence and lock epochs:
 *  - zero counts whose origin, result and target basic types differ
 *    (MPI_INT against MPI_DOUBLE);
 *  - non-zero counts of a zero-size derived type against zero counts of
 *    anything, for Put, Get, Accumulate and Get_accumulate;
 *  - NULL origin and result buffers when their side carries no bytes,
 *    including Get_accumulate with a NULL result buffer;
 *  - the request forms complete.
 * A transfer with bytes whose basic types differ is still refused.
 */
#include "common.h"

#define N 8

static int *obuf, *rbuf;

static void zero_ops(NARMA_Win win, int target, int oc, MPI_Datatype ot, int rc_, MPI_Datatype rt,
                     int tc, MPI_Datatype tt)
{
    CHECK_RC(NARMA_Put(obuf, oc, ot, target, 0, tc, tt, win));
    CHECK_RC(NARMA_Get(obuf, oc, ot, target, 0, tc, tt, win));
    CHECK_RC(NARMA_Accumulate(obuf, oc, ot, target, 0, tc, tt, NARMA_SUM, win));
    CHECK_RC(NARMA_Get_accumulate(obuf, oc, ot, rbuf, rc_, rt, target, 0, tc, tt, NARMA_SUM, win));
    CHECK_RC(NARMA_Put(NULL, oc, ot, target, 0, tc, tt, win));
    CHECK_RC(NARMA_Get(NULL, oc, ot, target, 0, tc, tt, win));
    CHECK_RC(NARMA_Accumulate(NULL, oc, ot, target, 0, tc, tt, NARMA_SUM, win));
    CHECK_RC(NARMA_Get_accumulate(NULL, oc, ot, rbuf, rc_, rt, target, 0, tc, tt, NARMA_SUM, win));
    CHECK_RC(NARMA_Get_accumulate(NULL, oc, ot, NULL, rc_, rt, target, 0, tc, tt, NARMA_SUM, win));
    NARMA_Request r[3];
    CHECK_RC(NARMA_Rput(NULL, oc, ot, target, 0, tc, tt, win, &r[0]));
    CHECK_RC(NARMA_Rget(NULL, oc, ot, target, 0, tc, tt, win, &r[1]));
    CHECK_RC(NARMA_Rget_accumulate(NULL, oc, ot, NULL, rc_, rt, target, 0, tc, tt, NARMA_SUM, win,
                                   &r[2]));
    CHECK_RC(NARMA_Waitall(3, r, MPI_STATUSES_IGNORE));
}

static void all_combinations(NARMA_Win win, int target, MPI_Datatype *types)
{
    /* types[0] has size zero, the others not. */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 4; k++) {
                snprintf(test_detail, sizeof test_detail, "zero counts, types %d %d %d", i, j, k);
                zero_ops(win, target, 0, types[i], 0, types[j], 0, types[k]);
            }
    for (int i = 1; i < 4; i++)
        for (int j = 1; j < 4; j++) {
            snprintf(test_detail, sizeof test_detail, "one zero-size type, %d %d", i, j);
            zero_ops(win, target, 1, types[0], 0, types[i], 0, types[j]);
            zero_ops(win, target, 0, types[i], 1, types[0], 0, types[j]);
            zero_ops(win, target, 0, types[i], 0, types[j], 1, types[0]);
        }
    for (int i = 1; i < 4; i++) {
        snprintf(test_detail, sizeof test_detail, "two zero-size types, %d", i);
        zero_ops(win, target, 2, types[0], 1, types[0], 0, types[i]);
        zero_ops(win, target, 1, types[0], 0, types[i], 2, types[0]);
        zero_ops(win, target, 0, types[i], 2, types[0], 1, types[0]);
    }
    snprintf(test_detail, sizeof test_detail, "three zero-size types");
    zero_ops(win, target, 2, types[0], 1, types[0], 3, types[0]);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "zero_size", 50);
    const int rank = test_rank, size = test_size, right = (rank + 1) % size;
    MPI_Datatype types[4];
    MPI_Type_contiguous(0, MPI_INT, &types[0]);
    MPI_Type_commit(&types[0]);
    MPI_Type_contiguous(1, MPI_INT, &types[1]);
    MPI_Type_commit(&types[1]);
    types[2] = MPI_INT;
    types[3] = MPI_DOUBLE;
    obuf = calloc(N, sizeof(double));
    rbuf = calloc(N, sizeof(double));
    CHECK(obuf && rbuf, "calloc");
    int *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    for (int i = 0; i < N; i++)
        base[i] = 10 * rank + i;
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("fence epoch");
    CHECK_RC(NARMA_Win_fence(0, win));
    all_combinations(win, right, types);
    CHECK_RC(NARMA_Win_fence(0, win));

    test_phase("lock epoch");
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win));
    all_combinations(win, right, types);
    CHECK_RC(NARMA_Win_unlock(right, win));

    test_phase("bytes with differing basic types are still refused");
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win));
    CHECK_ERR(NARMA_Put(obuf, 2, MPI_INT, right, 0, 1, MPI_DOUBLE, win), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Get_accumulate(obuf, 1, MPI_INT, NULL, 1, MPI_INT, right, 0, 1, MPI_INT,
                                   NARMA_SUM, win),
              NARMA_ERR_ARG);
    CHECK_RC(NARMA_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("window unchanged");
    for (int i = 0; i < N; i++)
        CHECK(base[i] == 10 * rank + i, "base[%d] = %d", i, base[i]);

    CHECK_RC(NARMA_Win_free(&win));
    MPI_Type_free(&types[0]);
    MPI_Type_free(&types[1]);
    free(obuf);
    free(rbuf);
    return test_finish();
}
