/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Win_ifence (paper VI-A rule 5):
 *  - barrier semantics without blocking: in each round one rank is late;
 *    every other rank calls ifence (which returns at once), checks that its
 *    request stays incomplete, and tells the late rank; only then does the
 *    late rank put its data and call ifence. Every rank's request completes
 *    with the late rank's data (written just before its ifence) in place.
 *  - overlap: computation runs between ifence and the completion of its
 *    request, polling with NARMA_Test; data is checked after completion.
 *  - back to back: RMA calls issued in the next fence epoch before the
 *    previous ifence completed are recorded and land after it.
 */
#include "common.h"

enum { TAG_TESTED = 7 };
static int rank, size;
static int *base;
static NARMA_Win win;

/* Slot of origin o in buffer b (two buffers: consecutive epochs never share one). */
static int slot(int b, int o) { return b * size + o; }
static int val(int round, int o) { return 1000 * (round + 1) + o; }
static int vbuf[64];

static void put_to_all(int round)
{
    vbuf[round % 64] = val(round, rank);
    for (int t = 0; t < size; t++)
        if (t != rank)
            CHECK_RC(NARMA_Put(&vbuf[round % 64], 1, MPI_INT, t, slot(round % 2, rank), 1, MPI_INT,
                               win));
}

static void check_all(int round)
{
    for (int o = 0; o < size; o++)
        if (o != rank)
            CHECK(base[slot(round % 2, o)] == val(round, o),
                  "round %d: data of rank %d is %d, expected %d", round, o,
                  base[slot(round % 2, o)], val(round, o));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_nb_ifence", 25);
    rank = test_rank;
    size = test_size;
    CHECK_RC(NARMA_Win_allocate(2 * size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &base, &win));
    for (int i = 0; i < 2 * size; i++)
        base[i] = -1;
    CHECK_RC(NARMA_Win_fence(0, win));
    int round = 0;

    test_phase("barrier semantics: no request completes before the late rank calls ifence");
    for (int k = 0; k < 4 * size; k++, round++) {
        const int late = k % size;
        snprintf(test_detail, sizeof test_detail, "round %d, late rank %d", round, late);
        NARMA_Request r;
        if (rank != late) {
            put_to_all(round);
            CHECK_RC(NARMA_Win_ifence(0, win, &r)); /* returns although `late` has not called it */
            test_expect_incomplete(&r, "ifence request while a rank has not called ifence");
            MPI_Send(NULL, 0, MPI_BYTE, late, TAG_TESTED, MPI_COMM_WORLD);
        } else {
            for (int i = 0; i < size - 1; i++)
                MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG_TESTED, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            put_to_all(round); /* written just before the late ifence */
            CHECK_RC(NARMA_Win_ifence(0, win, &r));
        }
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        check_all(round);
    }

    test_phase("overlap: computation between ifence and its completion");
    for (int k = 0; k < 20; k++, round++) {
        NARMA_Request r;
        put_to_all(round);
        CHECK_RC(NARMA_Win_ifence(0, win, &r));
        double x = 1.0;
        long steps = 0;
        for (int flag = 0; !flag; steps++) {
            for (int i = 0; i < 1000; i++) /* the computation */
                x = x * 1.0000001 + 1e-9;
            CHECK_RC(NARMA_Test(&r, &flag, MPI_STATUS_IGNORE));
        }
        CHECK(x > 1.0 && steps >= 1, "computation did not run");
        check_all(round);
    }

    test_phase("back to back: calls of the next epoch issued before the previous ifence completed");
    for (int k = 0; k < 20; k++, round += 2) {
        NARMA_Request r[2];
        MPI_Status st[2];
        put_to_all(round);
        CHECK_RC(NARMA_Win_ifence(0, win, &r[0]));
        put_to_all(round + 1);
        CHECK_RC(NARMA_Win_ifence(0, win, &r[1]));
        CHECK_RC(NARMA_Waitall(2, r, st));
        check_all(round);
        check_all(round + 1);
        CHECK_RC(NARMA_Win_fence(0, win)); /* nobody writes round's buffer before all checked */
    }

    NARMA_Request r;
    CHECK_RC(NARMA_Win_ifence(NARMA_MODE_NOSUCCEED, win, &r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
