/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * MPI_PROC_NULL is a valid target rank for every RMA call, and the call does
 * nothing (MPI-3.1 section 11.3: "The effect is the same as for MPI_PROC_NULL
 * in MPI point-to-point communication"):
 *  - Put, Get, Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap
 *    succeed inside fence, lock_all and PSCW epochs and touch no memory;
 *  - their request forms return a request that is already complete;
 *  - the notified forms (Put_notify, Get_notify, Accumulate_notify and the
 *    R* forms) succeed and deliver no notification;
 *  - Win_lock/Win_unlock/Win_flush/Win_flush_local of MPI_PROC_NULL succeed
 *    (as do their nonblocking forms), and a real lock epoch to another rank
 *    works around them;
 *  - an invalid window is still refused.
 */
#include "common.h"

#define N 4

static void all_ops(NARMA_Win win, int *buf, int *res)
{
    int one = 1, cmp = 0;
    CHECK_RC(NARMA_Put(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win));
    CHECK_RC(NARMA_Get(res, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win));
    CHECK_RC(NARMA_Accumulate(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, NARMA_SUM, win));
    CHECK_RC(NARMA_Get_accumulate(buf, N, MPI_INT, res, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT,
                                  NARMA_SUM, win));
    CHECK_RC(NARMA_Fetch_and_op(&one, res, MPI_INT, MPI_PROC_NULL, 0, NARMA_SUM, win));
    CHECK_RC(NARMA_Compare_and_swap(&one, &cmp, res, MPI_INT, MPI_PROC_NULL, 0, win));

    NARMA_Request req[4];
    CHECK_RC(NARMA_Rput(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win, &req[0]));
    CHECK_RC(NARMA_Rget(res, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win, &req[1]));
    CHECK_RC(NARMA_Raccumulate(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, NARMA_REPLACE, win,
                               &req[2]));
    CHECK_RC(NARMA_Rget_accumulate(buf, N, MPI_INT, res, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT,
                                   NARMA_SUM, win, &req[3]));
    for (int i = 0; i < 4; i++) {
        int flag = 0;
        CHECK(req[i] != NARMA_REQUEST_NULL, "request %d", i);
        CHECK_RC(NARMA_Test(&req[i], &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "request %d to MPI_PROC_NULL is not complete at once", i);
        CHECK(req[i] == NARMA_REQUEST_NULL, "completed request %d not freed", i);
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "proc_null", 50);
    const int rank = test_rank, size = test_size;
    int *base, buf[N], res[N];
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    for (int i = 0; i < N; i++) {
        base[i] = 100 * rank + i;
        buf[i] = -1;
        res[i] = -7;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("fence epoch");
    CHECK_RC(NARMA_Win_fence(0, win));
    all_ops(win, buf, res);
    CHECK_RC(NARMA_Win_fence(0, win));

    test_phase("lock_all epoch");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    all_ops(win, buf, res);
    CHECK_RC(NARMA_Win_flush(MPI_PROC_NULL, win));
    CHECK_RC(NARMA_Win_flush_local(MPI_PROC_NULL, win));
    NARMA_Request fr;
    CHECK_RC(NARMA_Win_iflush(MPI_PROC_NULL, win, &fr));
    CHECK_RC(NARMA_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_iflush_local(MPI_PROC_NULL, win, &fr));
    CHECK_RC(NARMA_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_unlock_all(win));

    test_phase("lock of MPI_PROC_NULL");
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win));
    all_ops(win, buf, res);
    CHECK_RC(NARMA_Win_unlock(MPI_PROC_NULL, win));
    NARMA_Request lr;
    CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_SHARED, MPI_PROC_NULL, 0, win, &lr));
    CHECK_RC(NARMA_Wait(&lr, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_iunlock(MPI_PROC_NULL, win, &lr));
    CHECK_RC(NARMA_Wait(&lr, MPI_STATUS_IGNORE));

    test_phase("a real lock epoch around MPI_PROC_NULL calls");
    const int right = (rank + 1) % size;
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win));
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, MPI_PROC_NULL, 0, win));
    CHECK_RC(NARMA_Get(res, N, MPI_INT, right, 0, N, MPI_INT, win));
    CHECK_RC(NARMA_Put(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win));
    CHECK_RC(NARMA_Win_unlock(MPI_PROC_NULL, win));
    CHECK_RC(NARMA_Win_unlock(right, win));
    for (int i = 0; i < N; i++)
        CHECK(res[i] == 100 * right + i, "Get from %d: [%d] = %d", right, i, res[i]);

    test_phase("notified forms");
    CHECK_RC(NARMA_Put_notify(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win, 5));
    CHECK_RC(NARMA_Get_notify(res, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win, 5));
    CHECK_RC(
        NARMA_Accumulate_notify(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, NARMA_SUM, win, 5));
    NARMA_Request nr[2];
    CHECK_RC(NARMA_Rput_notify(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win, &nr[0], 5));
    CHECK_RC(NARMA_Rget_notify(res, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win, &nr[1], 5));
    CHECK_RC(NARMA_Waitall(2, nr, MPI_STATUSES_IGNORE));
    /* Nothing may arrive: after a barrier, no notification with tag 5 is pending. */
    MPI_Barrier(MPI_COMM_WORLD);
    NARMA_Request note;
    int flag = 1;
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, 5, 1, &note));
    CHECK_RC(NARMA_Start(&note));
    for (int i = 0; i < 100; i++)
        CHECK_RC(NARMA_Test(&note, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a notification to MPI_PROC_NULL arrived somewhere");
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("window memory untouched");
    for (int i = 0; i < N; i++)
        CHECK(base[i] == 100 * rank + i, "base[%d] = %d", i, base[i]);

    test_phase("invalid window still refused");
    CHECK_ERR(NARMA_Put(buf, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, NARMA_WIN_NULL),
              NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_lock(NARMA_LOCK_SHARED, MPI_PROC_NULL, 0, NARMA_WIN_NULL), NARMA_ERR_WIN);

    /* The pending notification request is inactive-able only by completion:
     * send ourselves the one it waits for, then free everything. */
    test_phase("finish");
    CHECK_RC(NARMA_Put_notify(buf, 0, MPI_INT, rank, 0, 0, MPI_INT, win, 5));
    CHECK_RC(NARMA_Wait(&note, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&note));
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
