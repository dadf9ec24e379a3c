/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * The argument checks of an RMA call remember the last access they accepted
 * per target (core/rma.c): the same arguments again skip them. What must still
 * be refused or described anew:
 *   - a derived datatype freed and a new one made (MPI may give it the freed
 *     handle): the same handle, count and displacement, now beyond the window,
 *     is refused with NARMA_ERR_DISP, and a new layout that fits moves the new
 *     layout's bytes; the test says whether the handle was reused and requires
 *     it with MPICH, which reuses it (it cannot make other MPIs reuse it);
 *   - an access accepted on one window, repeated on a smaller window: refused;
 *   - after an accepted access, the same call with another displacement (out
 *     of bounds), origin count alone, target count, origin or target datatype
 *     alone, or rank: each refused as the first time;
 *   - a Get_accumulate with MPI_NO_OP accepted whatever its origin count, then
 *     a Put with the same arguments: the origin is checked (NARMA_ERR_TYPE);
 *   - plain Put/Get, Put_notify and Accumulate interleaved on the same
 *     arguments: all accepted, the data right.
 */
#include "common.h"

#define N 64 /* doubles per rank in the big window */

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_check_memo", 50);
    const int rank = test_rank, size = test_size;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double *big, *small;
    NARMA_Win wbig, wsmall;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &big, &wbig));
    CHECK_RC(NARMA_Win_allocate(4 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &small, &wsmall));
    for (int i = 0; i < N; i++)
        big[i] = -1;
    for (int i = 0; i < 4; i++)
        small[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock_all(0, wbig));
    CHECK_RC(NARMA_Win_lock_all(0, wsmall));

    test_phase("a freed datatype's handle given to a new type");
    {
        double src[N];
        for (int i = 0; i < N; i++)
            src[i] = rank * 1000 + i;
        MPI_Datatype t1, t2;
        CHECK_MPI(MPI_Type_contiguous(2, MPI_DOUBLE, &t1));
        CHECK_MPI(MPI_Type_commit(&t1));
        const MPI_Datatype first = t1;
        for (int k = 0; k < 3; k++) /* accepted, and remembered */
            CHECK_RC(NARMA_Put(src, 1, t1, next, 60, 1, t1, wbig));
        CHECK_RC(NARMA_Win_flush(next, wbig));
        CHECK_MPI(MPI_Type_free(&t1));
        CHECK_MPI(MPI_Type_contiguous(8, MPI_DOUBLE, &t2)); /* 60 + 8 > 64 */
        CHECK_MPI(MPI_Type_commit(&t2));
        const int reused = t2 == first;
        if (rank == 0)
            printf("# the new type %s the freed one's handle\n", reused ? "has" : "does not have");
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        CHECK_MPI(MPI_Get_library_version(lib, &len));
        if (strstr(lib, "MPICH") != NULL)
            CHECK(reused, "MPICH gave the new type another handle: this phase tests nothing");
        CHECK_ERR(NARMA_Put(src, 1, t2, next, 60, 1, t2, wbig), NARMA_ERR_DISP);
        CHECK_RC(NARMA_Put(src, 1, t2, next, 40, 1, t2, wbig));
        CHECK_RC(NARMA_Win_flush(next, wbig));
        CHECK_MPI(MPI_Type_free(&t2));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_sync(wbig));
        for (int i = 0; i < 8; i++)
            CHECK(big[40 + i] == prev * 1000 + i, "element %d: %g, expected %d", 40 + i,
                  big[40 + i], prev * 1000 + i);
        CHECK(big[60] == prev * 1000 && big[61] == prev * 1000 + 1 && big[62] == -1,
              "the first type's put: %g %g %g", big[60], big[61], big[62]);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("accepted on one window, refused on a smaller one");
    {
        double v[2] = {1, 2};
        CHECK_RC(NARMA_Put(v, 2, MPI_DOUBLE, next, 10, 2, MPI_DOUBLE, wbig));
        CHECK_RC(NARMA_Put(v, 2, MPI_DOUBLE, next, 10, 2, MPI_DOUBLE, wbig));
        CHECK_ERR(NARMA_Put(v, 2, MPI_DOUBLE, next, 10, 2, MPI_DOUBLE, wsmall), NARMA_ERR_DISP);
        CHECK_RC(NARMA_Put(v, 2, MPI_DOUBLE, next, 2, 2, MPI_DOUBLE, wsmall));
        CHECK_ERR(NARMA_Put(v, 2, MPI_DOUBLE, next, 3, 2, MPI_DOUBLE, wsmall), NARMA_ERR_DISP);
        CHECK_RC(NARMA_Win_flush_all(wbig));
        CHECK_RC(NARMA_Win_flush_all(wsmall));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("after an accepted access, each argument changed alone is checked");
    {
        double v[4] = {5, 6, 7, 8};
        for (int k = 0; k < 2; k++)
            CHECK_RC(NARMA_Put(v, 2, MPI_DOUBLE, next, 62, 2, MPI_DOUBLE, wbig));
        CHECK_ERR(NARMA_Put(v, 2, MPI_DOUBLE, next, 63, 2, MPI_DOUBLE, wbig), NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Put(v, 3, MPI_DOUBLE, next, 62, 3, MPI_DOUBLE, wbig), NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Put(v, 2, MPI_DOUBLE, next, 62, 3, MPI_DOUBLE, wbig), NARMA_ERR_TYPE);
        CHECK_ERR(NARMA_Put(v, 2, MPI_DOUBLE, next, 62, 2, MPI_INT, wbig), NARMA_ERR_TYPE);
        CHECK_ERR(NARMA_Put(v, 3, MPI_DOUBLE, next, 62, 2, MPI_DOUBLE, wbig), NARMA_ERR_TYPE);
        CHECK_ERR(NARMA_Put(v, 2, MPI_INT, next, 62, 2, MPI_DOUBLE, wbig), NARMA_ERR_TYPE);
        CHECK_ERR(NARMA_Put(v, 2, MPI_DOUBLE, size, 62, 2, MPI_DOUBLE, wbig), NARMA_ERR_RANK);
        CHECK_ERR(NARMA_Put(v, 2, MPI_DOUBLE, next, -1, 2, MPI_DOUBLE, wbig), NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Put(v, 2, MPI_DOUBLE, next, 62, -2, MPI_DOUBLE, wbig), NARMA_ERR_COUNT);
        CHECK_ERR(NARMA_Put_notify(v, 2, MPI_DOUBLE, next, 63, 2, MPI_DOUBLE, wbig, 1),
                  NARMA_ERR_DISP);
        CHECK_RC(NARMA_Put(v, 2, MPI_DOUBLE, next, 62, 2, MPI_DOUBLE, wbig)); /* still fine */
        CHECK_RC(NARMA_Win_flush(next, wbig));
        /* MPI_NO_OP: the origin is not read, so not checked; a Put of the same arguments is. */
        double res[2];
        for (int k = 0; k < 2; k++)
            CHECK_RC(NARMA_Get_accumulate(v, 3, MPI_DOUBLE, res, 2, MPI_DOUBLE, next, 30, 2,
                                          MPI_DOUBLE, MPI_NO_OP, wbig));
        CHECK_RC(NARMA_Win_flush(next, wbig));
        CHECK_ERR(NARMA_Put(v, 3, MPI_DOUBLE, next, 30, 2, MPI_DOUBLE, wbig), NARMA_ERR_TYPE);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("the same arguments through Put, Get, Put_notify and Accumulate");
    {
        double v[2], got[2];
        NARMA_Request note;
        CHECK_RC(NARMA_Notify_init(wbig, prev, 7, 20, &note));
        CHECK_RC(NARMA_Start(&note));
        for (int it = 0; it < 20; it++) {
            v[0] = rank + it;
            v[1] = -(rank + it);
            CHECK_RC(NARMA_Put(v, 2, MPI_DOUBLE, next, 20, 2, MPI_DOUBLE, wbig));
            CHECK_RC(NARMA_Win_flush(next, wbig));
            CHECK_RC(NARMA_Accumulate(v, 2, MPI_DOUBLE, next, 20, 2, MPI_DOUBLE, MPI_SUM, wbig));
            CHECK_RC(NARMA_Win_flush(next, wbig));
            CHECK_RC(NARMA_Get(got, 2, MPI_DOUBLE, next, 20, 2, MPI_DOUBLE, wbig));
            CHECK_RC(NARMA_Win_flush(next, wbig));
            CHECK(got[0] == 2 * v[0] && got[1] == 2 * v[1], "round %d: %g %g", it, got[0], got[1]);
            CHECK_RC(NARMA_Put_notify(v, 2, MPI_DOUBLE, next, 20, 2, MPI_DOUBLE, wbig, 7));
        }
        MPI_Status st;
        CHECK_RC(NARMA_Wait(&note, &st));
        CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 7, "notifications from %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
        CHECK_RC(NARMA_Request_free(&note));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_sync(wbig));
        CHECK(big[20] == prev + 19 && big[21] == -(prev + 19), "last put: %g %g", big[20], big[21]);
    }

    CHECK_RC(NARMA_Win_unlock_all(wsmall));
    CHECK_RC(NARMA_Win_unlock_all(wbig));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&wsmall));
    CHECK_RC(NARMA_Win_free(&wbig));
    return test_finish();
}
