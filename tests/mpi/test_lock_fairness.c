/* narma-test: np=3,4 transports=shm,mpi timeout=120 env=NARMA_LOCK_PREFERENCE_MS=2000 */
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
 *
 * The second phase is the same stream from lock_all epochs that first read
 * the writer's rank, so every reader already holds a lock when it reaches
 * rank 0, and holds rank 0 for at most 50 ms: a reader that holds a lock
 * defers to the waiting writer for NARMA_LOCK_PREFERENCE_MS (2 s here), longer
 * than the epochs in front of it, so the writer gets in. (A holder that
 * ignored the writer at once, as narma did before, relays the lock forever.)
 *
 * The third phase (4 ranks) is the cycle that writer preference must not
 * turn into a deadlock: ranks 0 and 1 run lock_all epochs that touch ranks 2
 * and 3 in opposite orders, and ranks 2 and 3 ask for the exclusive lock on
 * each other in between. Under MPI's own locks both readers get their second
 * target (shared locks are compatible); here they defer to the writers for
 * the preference bound and then take it, so all four finish.
 */
#include "common.h"

enum { COUNT = 0, DONE = 1, START_TAG = 31 };

static void reader(NARMA_Win win, int phase)
{
    const uint64_t one = 1;
    const double hold_s = phase == 1 ? 0.5 : 0.05;
    uint64_t buf[2] = {0, 0}, other = 0;
    for (int iter = 0; !buf[DONE]; iter++) {
        snprintf(test_detail, sizeof test_detail, "phase %d, reader iteration %d", phase, iter);
        int all = phase == 2 || iter % 2 == 0;
        if (all)
            CHECK_RC(NARMA_Win_lock_all(0, win));
        else
            CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        if (phase == 2) { /* hold another rank's lock before reaching rank 0 */
            CHECK_RC(NARMA_Get(&other, 1, MPI_UINT64_T, test_size - 1, 0, 1, MPI_UINT64_T, win));
            CHECK_RC(NARMA_Win_flush(test_size - 1, win));
        }
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
            CHECK_MPI(
                MPI_Send(NULL, 0, MPI_BYTE, test_size - 1, START_TAG + phase, MPI_COMM_WORLD));
    }
}

static void writer(NARMA_Win win, int phase)
{
    const uint64_t done = 1;
    uint64_t seen = 0;
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, START_TAG + phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    double t0 = MPI_Wtime();
    CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    double waited = MPI_Wtime() - t0;
    CHECK_RC(NARMA_Get(&seen, 1, MPI_UINT64_T, 0, COUNT, 1, MPI_UINT64_T, win));
    CHECK_RC(NARMA_Put(&done, 1, MPI_UINT64_T, 0, DONE, 1, MPI_UINT64_T, win));
    CHECK_RC(NARMA_Win_unlock(0, win));
    fprintf(stderr,
            "lock_fairness: phase %d: exclusive lock after %.3f s, %llu shared acquisitions\n",
            phase, waited, (unsigned long long)seen);
}

static void cycle(NARMA_Win win)
{
    const int r = test_rank;
    uint64_t v = 0;
    if (r <= 1) { /* readers: 0 touches 2 then 3, 1 touches 3 then 2 */
        const int first = r == 0 ? 2 : 3, second = r == 0 ? 3 : 2;
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Get(&v, 1, MPI_UINT64_T, first, 0, 1, MPI_UINT64_T, win));
        CHECK_RC(NARMA_Win_flush(first, win)); /* first's shared lock is held */
        /* The writer that wants first's lock asks once we hold it. */
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 5 - first, START_TAG, MPI_COMM_WORLD));
        CHECK_MPI(
            MPI_Recv(NULL, 0, MPI_BYTE, 5 - first, START_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.2) /* let the writer's request reach the lock word */
            NARMA_Progress();
        CHECK_RC(NARMA_Get(&v, 1, MPI_UINT64_T, second, 0, 1, MPI_UINT64_T, win));
        CHECK_RC(NARMA_Win_unlock_all(win));
    } else { /* writers: 2 wants 3's exclusive lock, 3 wants 2's */
        const int reader = 5 - r == 2 ? 0 : 1; /* the reader that holds 5 - r first */
        CHECK_MPI(
            MPI_Recv(NULL, 0, MPI_BYTE, reader, START_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, reader, START_TAG, MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, 5 - r, 0, win));
        CHECK_RC(NARMA_Put(&v, 1, MPI_UINT64_T, 5 - r, 1, 1, MPI_UINT64_T, win));
        CHECK_RC(NARMA_Win_unlock(5 - r, win));
        fprintf(stderr, "lock_fairness: cycle: rank %d had the exclusive lock after %.3f s\n", r,
                MPI_Wtime() - t0);
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "lock_fairness", 60);
    if (test_size < 3) test_skip("needs two readers and a writer");
    uint64_t *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(2 * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    for (int phase = 1; phase <= 2; phase++) {
        base[COUNT] = base[DONE] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        test_phase(phase == 1 ? "shared lockers stream while one rank asks for the exclusive lock"
                              : "the stream from lock_all epochs that already hold another lock");
        if (test_rank == test_size - 1)
            writer(win, phase);
        else
            reader(win, phase);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (test_size == 4) {
        test_phase("lock_all epochs touching two targets in opposite orders, writers on both");
        cycle(win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
