/* narma-test: np=3,4 transports=shm,mpi timeout=90 */
/*
 * An exclusive locker is not starved by a stream of shared lockers.
 *
 * Every rank but the last is a reader: in a loop it takes a shared lock on
 * rank 0 (lock_all and Win_lock(SHARED) in turn), counts its acquisition in
 * rank 0's window and keeps the lock until another reader has acquired it too
 * (or half a second has passed), so the shared count never drops to zero while
 * the readers keep coming. Without writer preference an exclusive request can
 * only slip in when the count is zero, so it waits forever. The last rank asks
 * for the exclusive lock once the stream runs; it must get it (the watchdog
 * bounds the wait, the test is otherwise not timed) and then tells the readers
 * to stop through the window. Readers that hold a lock meanwhile still finish
 * their epochs, so nothing here can deadlock when the lock is fair.
 */
#include "common.h"

enum { COUNT = 0, DONE = 1, START_TAG = 31 };
static const double hold_s = 0.5;

static void reader(NARMA_Win win)
{
    const uint64_t one = 1;
    uint64_t buf[2] = {0, 0};
    for (int iter = 0; !buf[DONE]; iter++) {
        snprintf(test_detail, sizeof test_detail, "reader iteration %d", iter);
        int all = iter % 2 == 0;
        if (all)
            CHECK_RC(NARMA_Win_lock_all(0, win));
        else
            CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        uint64_t mine = 0;
        CHECK_RC(NARMA_Fetch_and_op(&one, &mine, MPI_UINT64_T, 0, COUNT, MPI_SUM, win));
        CHECK_RC(NARMA_Win_flush(0, win)); /* the shared lock is held from here on */
        double t0 = MPI_Wtime();
        do {
            CHECK_RC(NARMA_Get(buf, 2, MPI_UINT64_T, 0, 0, 2, MPI_UINT64_T, win));
            CHECK_RC(NARMA_Win_flush(0, win));
        } while (buf[COUNT] <= mine + 1 && !buf[DONE] && MPI_Wtime() - t0 < hold_s);
        if (all)
            CHECK_RC(NARMA_Win_unlock_all(win));
        else
            CHECK_RC(NARMA_Win_unlock(0, win));
        if (test_rank == 0 && iter == 10)
            CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, test_size - 1, START_TAG, MPI_COMM_WORLD));
    }
}

static void writer(NARMA_Win win)
{
    const uint64_t done = 1;
    uint64_t seen = 0;
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, START_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    double t0 = MPI_Wtime();
    CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    double waited = MPI_Wtime() - t0;
    CHECK_RC(NARMA_Get(&seen, 1, MPI_UINT64_T, 0, COUNT, 1, MPI_UINT64_T, win));
    CHECK_RC(NARMA_Put(&done, 1, MPI_UINT64_T, 0, DONE, 1, MPI_UINT64_T, win));
    CHECK_RC(NARMA_Win_unlock(0, win));
    fprintf(stderr, "lock_fairness: exclusive lock after %.3f s, %llu shared acquisitions\n",
            waited, (unsigned long long)seen);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "lock_fairness", 60);
    if (test_size < 3) test_skip("needs two readers and a writer");
    uint64_t *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(2 * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    base[COUNT] = base[DONE] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    test_phase("shared lockers stream while one rank asks for the exclusive lock");
    if (test_rank == test_size - 1)
        writer(win);
    else
        reader(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
