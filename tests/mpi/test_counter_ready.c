/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * A counter-notified access remembers the last target it found ready (index in range,
 * passive-target epoch active with its lock, nothing recorded) and skips those checks while
 * that answer holds. The answer must be forgotten when it stops holding:
 *  - the epoch closed (unlock_all, unlock): the next access is NARMA_ERR_RMA_SYNC, also after
 *    a fence epoch opened meanwhile;
 *  - the counters changed (set_num_notify inside the open lock_all, fewer of them): an index
 *    valid before is NARMA_ERR_NOTIFY_IDX now, with no synchronisation call in between;
 *  - an operation of the epoch recorded because another target's lock is not free: the next
 *    access to the remembered target waits for it as any access does (its increment is not
 *    seen before the other target's lock was released; 3 ranks and more).
 * Rank 0 is the origin, rank 1 the target, rank 2 (when there) holds its own lock.
 */
#include "common.h"

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "counter_ready", 50);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(4 * (MPI_Aint)sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, 4 * sizeof(int64_t));
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 2));
    const int64_t one = 1;
    MPI_Count c;

    test_phase("the epoch closed: the access is refused again");
    if (rank == 0) {
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 1, win));
        CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 1, win));
        CHECK_RC(NARMA_Win_unlock_all(win));
        CHECK_ERR(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 1, win),
                  NARMA_ERR_RMA_SYNC);
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 1, 0, win));
        CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 1, win));
        CHECK_RC(NARMA_Win_unlock(1, win));
        CHECK_ERR(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 1, win),
                  NARMA_ERR_RMA_SYNC);
    }
    CHECK_RC(NARMA_Win_fence(0, win));
    if (rank == 0)
        CHECK_ERR(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 1, win),
                  NARMA_ERR_RMA_SYNC);
    CHECK_RC(NARMA_Win_fence(0, win));
    if (rank == 1) {
        CHECK_RC(NARMA_Win_get_notify_value(win, 1, &c));
        CHECK(c == 3, "counter 1 counted %lld accesses, 3 went out", (long long)c);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("the counters changed under an open epoch: the index is checked again");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    if (rank == 0)
        CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 1, win));
    if (rank == 1) {
        do
            CHECK_RC(NARMA_Win_get_notify_value(win, 1, &c));
        while (c != 4);
    }
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 1));
    if (rank == 0) {
        CHECK_ERR(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 1, win),
                  NARMA_ERR_NOTIFY_IDX);
        CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 0, win));
    }
    if (rank == 1) {
        do
            CHECK_RC(NARMA_Win_get_notify_value(win, 0, &c));
        while (c != 1);
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    if (size >= 3) {
        test_phase("an operation recorded in the epoch: the access waits behind it");
        /* Rank 2 holds its own window exclusively; rank 0's lock_all (no NOCHECK) then
         * records its put to rank 2, and an access to rank 1 after it waits until rank 2
         * lets go. Rank 1 watches its counter meanwhile and only then tells rank 2. */
        if (rank == 2) CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, 2, 0, win));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            const int64_t v = 42;
            CHECK_RC(NARMA_Win_lock_all(0, win));
            CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 0, win));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, 2, 1, 1, MPI_INT64_T, win));
            CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 0, win));
            CHECK_RC(NARMA_Win_unlock_all(win));
        } else if (rank == 1) {
            do
                CHECK_RC(NARMA_Win_get_notify_value(win, 0, &c));
            while (c < 2);
            CHECK(c == 2, "counter 0 is %lld", (long long)c);
            for (int i = 0; i < 200; i++) { /* 20 ms or more */
                CHECK_RC(NARMA_Win_get_notify_value(win, 0, &c));
                CHECK(c == 2, "the access after a recorded one went out first (counter %lld)",
                      (long long)c);
                usleep(100);
            }
            CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 2, 0, MPI_COMM_WORLD));
            do
                CHECK_RC(NARMA_Win_get_notify_value(win, 0, &c));
            while (c < 3);
        } else if (rank == 2) {
            CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(NARMA_Win_unlock(2, win));
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 2) {
            CHECK_RC(NARMA_Win_sync(win));
            CHECK(mem[1] == 42, "the recorded put left %lld", (long long)mem[1]);
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
