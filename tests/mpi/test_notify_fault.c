/* narma-test: np=2,3,4 transports=mpi timeout=60 env=NARMA_TEST_NOTIFY_FAIL=3,NARMA_RING_SLOTS=4 */
/*
 * A notified access that fails after its ring slot was claimed leaves no hole
 * in the target's ring. NARMA_TEST_NOTIFY_FAIL=3 (a testing hook of the mpi
 * transport) makes the 3rd notified access of each process fail with an MPI
 * error right after the claim, as if its data access had failed at the flush.
 * The call must return NARMA_ERR_MPI with the MPI code kept, and the target
 * must go on delivering every later notification (with a 4-slot ring, the
 * origin's later accesses also need the slot to be released again).
 */
#include "common.h"

#define K   16 /* notified puts per origin */
#define BAD 2  /* 0-based index of the failing one */
#define TAG 9

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_fault", 50);
    int rank = test_rank, size = test_size;
    if (size < 2) return test_skip("needs 2 ranks");
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                &win));
    for (int i = 0; i < K; i++)
        mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("origins: the 3rd notified put fails with NARMA_ERR_MPI, the others succeed");
    for (int i = 0; i < K; i++) {
        int v = 1000 * rank + i;
        snprintf(test_detail, sizeof test_detail, "put %d", i);
        int rc = NARMA_Put_notify(&v, 1, MPI_INT, right, i, 1, MPI_INT, win, TAG);
        if (i != BAD) {
            CHECK_RC(rc);
            continue;
        }
        CHECK_ERR(rc, NARMA_ERR_MPI);
        int cls = -1;
        MPI_Error_class(NARMA_Get_mpi_error(), &cls);
        CHECK(cls == MPI_ERR_OTHER, "NARMA_Get_mpi_error() has class %d, expected MPI_ERR_OTHER",
              cls);
    }

    test_phase("target: every notification after the failed one is delivered");
    NARMA_Request req;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(win, left, TAG, K - 1, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == TAG, "status {%d, %d}", st.MPI_SOURCE, st.MPI_TAG);
    CHECK_RC(NARMA_Request_free(&req));
    for (int i = 0; i < K; i++)
        if (i != BAD)
            CHECK(mem[i] == 1000 * left + i, "mem[%d] = %d, expected %d", i, mem[i],
                  1000 * left + i);

    test_phase("and the ring keeps working afterwards (into the failed put's slot)");
    int v = 7;
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT, right, BAD, 1, MPI_INT, win, TAG + 1));
    CHECK_RC(NARMA_Notify_init(win, left, TAG + 1, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK(mem[BAD] == 7, "mem[%d] = %d after the last put", BAD, mem[BAD]);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
