/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * narma's waits keep MPI's own communication moving: a program that leaves point-to-point
 * messages in flight (large ones, which MPI moves in pieces as both sides progress) and then
 * waits in narma (a fence, a lock, a notification) must not deadlock with a peer that waits in
 * MPI for those messages. Each phase: rank r sends a large message to its right neighbour with
 * MPI_Isend, then the one side waits in narma while the other side waits in MPI_Recv first.
 */
#include "common.h"

#define BIG (4 << 20) /* bytes: far above every MPI's eager limit */

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_mpi_progress", 50);
    const int rank = test_rank, size = test_size;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char *out = malloc(BIG), *in = malloc(BIG);
    CHECK(out != NULL && in != NULL, "no memory");
    int *base;
    NARMA_Win win;
    CHECK_RC(
        NARMA_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    *base = -1;
    CHECK_RC(NARMA_Win_fence(0, win));

    for (int round = 0; round < 3; round++) {
        memset(out, 'a' + rank + round, BIG);
        memset(in, 0, BIG);
        MPI_Request sreq;
        test_phase(round == 0   ? "even ranks fence while odd ranks receive"
                   : round == 1 ? "even ranks wait for a notification while odd ranks receive"
                                : "even ranks lock while odd ranks receive");
        CHECK_MPI(MPI_Isend(out, BIG, MPI_CHAR, right, round, MPI_COMM_WORLD, &sreq));
        /* waiters: even ranks, except the last of an odd count (its right neighbour, rank 0,
         * is a waiter too, and two waiters side by side would wait for each other) */
        int waiter = rank % 2 == 0 && !(size % 2 == 1 && rank == size - 1);
        if (!waiter)
            CHECK_MPI(MPI_Recv(in, BIG, MPI_CHAR, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (round == 0) {
            CHECK_RC(NARMA_Win_fence(0, win)); /* needs every rank, the receivers too */
        } else if (round == 1) {
            if (waiter) { /* from the left neighbour, which notifies after its receive, which
                           * needs this rank's MPI progress while it waits here */
                NARMA_Request nreq;
                CHECK_RC(NARMA_Notify_init(win, left, 7, 1, &nreq));
                CHECK_RC(NARMA_Start(&nreq));
                CHECK_RC(NARMA_Wait(&nreq, MPI_STATUS_IGNORE));
                CHECK_RC(NARMA_Request_free(&nreq));
            }
        } else {
            if (waiter) {
                CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, left, 0, win));
                CHECK_RC(NARMA_Win_unlock(left, win));
            }
        }
        if (waiter)
            CHECK_MPI(MPI_Recv(in, BIG, MPI_CHAR, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (round == 1) {
            int right_waits = right % 2 == 0 && !(size % 2 == 1 && right == size - 1);
            if (right_waits)
                CHECK_RC(NARMA_Put_notify(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win, 7));
        }
        CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i += 4093)
            CHECK(in[i] == (char)('a' + left + round), "byte %d: %d", i, in[i]);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Win_free(&win));
    free(out);
    free(in);
    return test_finish();
}
