/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * A program written against the MPI-5.1 draft's counter-indexed notifications only (the
 * draft's MPI_ names with the MPIX_ prefix of <narma/narma_mpix.h>), on plain MPI windows:
 *  - MPIX_Win_set_num_notify / MPIX_Win_get_num_notify, the attributes
 *    MPIX_WIN_NOTIFICATION_NUM_UB / _VALUE_UB through MPI_Win_get_attr;
 *  - a ring exchange for many rounds inside one MPI_Win_lock_all epoch: MPIX_Put_notify to
 *    the right neighbour, the target waits with MPIX_Win_notify_ithreshold + MPI_Wait and
 *    finds the round's data, then answers with a zero-byte MPIX_Put_notify on another counter
 *    (the origin polls MPIX_Win_get_notify_value) before the buffer is reused;
 *  - MPIX_Get_notify: the owner learns that its buffer was read; MPIX_Accumulate_notify and
 *    MPIX_Get_accumulate_notify from every rank to rank 0 (the sum is there when the counter
 *    says so); the MPIX_R* forms completed by MPI_Waitall;
 *  - MPIX_Win_reset_notify_value returns the count and restarts it at 0;
 *  - with MPI_ERRORS_RETURN: an index outside the target's counters returns MPIX_ERR_NOTIFY_IDX
 *    (and MPI_Error_string says so), a call outside a passive-target epoch MPI_ERR_RMA_SYNC.
 */
#include "common.h"

#include <narma/narma_mpix.h>

#define ROUNDS 100
enum { DATA = 0, GETBUF = 1, SUM = 2, FADD = 3, RBUF = 4, NSLOTS = 8 };
enum { C_DATA = 0, C_ACK, C_GET, C_SUM, C_R, NCTR };

static int rank, size, right, left;
static long *mem;
static MPI_Win win;

static void wait_at_least(int idx, MPI_Count n)
{
    MPI_Request r;
    CHECK_MPI(MPIX_Win_notify_ithreshold(win, idx, n, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

static void poll_at_least(int idx, MPI_Count n)
{
    MPI_Count v = 0;
    for (int i = 0;; i++) {
        CHECK_MPI(MPIX_Win_get_notify_value(win, idx, &v));
        if (v >= n) break;
        if (i % 16 == 15) usleep(20); /* the peer may share this core */
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_mpix_counter", 50);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    CHECK_MPI(MPI_Win_allocate(NSLOTS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &mem, &win));
    for (int i = 0; i < NSLOTS; i++)
        mem[i] = 0;
    test_errors_return(win);

    test_phase("counters and attributes");
    CHECK_MPI(MPIX_Win_set_num_notify(win, MPI_INFO_NULL, NCTR));
    int n = -1;
    CHECK_MPI(MPIX_Win_get_num_notify(win, right, &n));
    CHECK(n == NCTR, "right neighbour has %d counters", n);
    MPI_Count *ub = NULL;
    int flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPIX_WIN_NOTIFICATION_NUM_UB, &ub, &flag));
    CHECK(flag && *ub >= NCTR, "NOTIFICATION_NUM_UB");
    CHECK_MPI(MPI_Win_get_attr(win, MPIX_WIN_NOTIFICATION_VALUE_UB, &ub, &flag));
    CHECK(flag && *ub >= ROUNDS, "NOTIFICATION_VALUE_UB");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("ring with acknowledgements");
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int r = 1; r <= ROUNDS; r++) {
        long v = 1000L * rank + r;
        CHECK_MPI(MPIX_Put_notify(&v, 1, MPI_LONG, right, DATA, 1, MPI_LONG, C_DATA, win));
        wait_at_least(C_DATA, r);
        CHECK(mem[DATA] == 1000L * left + r, "round %d: %ld from %d", r, mem[DATA], left);
        CHECK_MPI(MPIX_Put_notify(NULL, 0, MPI_LONG, left, 0, 0, MPI_LONG, C_ACK, win));
        poll_at_least(C_ACK, r); /* right has read this round's value */
    }
    MPI_Count c = -1;
    CHECK_MPI(MPIX_Win_get_notify_value(win, C_DATA, &c));
    CHECK(c == ROUNDS, "data counter %lld", (long long)c);

    test_phase("get, accumulate, get-accumulate");
    mem[GETBUF] = 7 + rank;
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long got = -1, one = 1, before = -1;
    CHECK_MPI(MPIX_Get_notify(&got, 1, MPI_LONG, right, GETBUF, 1, MPI_LONG, C_GET, win));
    CHECK(got == 7 + right, "got %ld from %d", got, right);
    wait_at_least(C_GET, 1); /* left has read my GETBUF */
    long me = rank;
    CHECK_MPI(MPIX_Accumulate_notify(&me, 1, MPI_LONG, 0, SUM, 1, MPI_LONG, MPI_SUM, C_SUM, win));
    CHECK_MPI(MPIX_Get_accumulate_notify(&one, 1, MPI_LONG, &before, 1, MPI_LONG, 0, FADD, 1,
                                         MPI_LONG, MPI_SUM, C_SUM, win));
    CHECK(before >= 0 && before < size, "fetch-and-add gave %ld", before);
    if (rank == 0) {
        wait_at_least(C_SUM, 2 * size);
        CHECK_MPI(MPI_Win_sync(win));
        CHECK(mem[SUM] == (long)size * (size - 1) / 2, "sum %ld", mem[SUM]);
        CHECK(mem[FADD] == size, "fetch-and-add total %ld", mem[FADD]);
    }

    test_phase("request forms");
    MPI_Request rq[4];
    long rv = 50 + rank, rg = -1, rr = -1;
    CHECK_MPI(MPIX_Rput_notify(&rv, 1, MPI_LONG, right, RBUF, 1, MPI_LONG, C_R, win, &rq[0]));
    CHECK_MPI(MPIX_Rget_notify(&rg, 1, MPI_LONG, right, GETBUF, 1, MPI_LONG, C_R, win, &rq[1]));
    CHECK_MPI(MPIX_Raccumulate_notify(&one, 1, MPI_LONG, right, RBUF + 1, 1, MPI_LONG, MPI_SUM, C_R,
                                      win, &rq[2]));
    CHECK_MPI(MPIX_Rget_accumulate_notify(&one, 1, MPI_LONG, &rr, 1, MPI_LONG, right, RBUF + 2, 1,
                                          MPI_LONG, MPI_SUM, C_R, win, &rq[3]));
    CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    CHECK(rg == 7 + right && rr == 0, "Rget %ld, Rget_accumulate %ld", rg, rr);
    wait_at_least(C_R, 4);
    CHECK_MPI(MPI_Win_sync(win));
    CHECK(mem[RBUF] == 50 + left && mem[RBUF + 1] == 1 && mem[RBUF + 2] == 1,
          "request forms left %ld %ld %ld", mem[RBUF], mem[RBUF + 1], mem[RBUF + 2]);

    test_phase("reset");
    MPI_Count old = -1;
    CHECK_MPI(MPIX_Win_reset_notify_value(win, C_R, &old));
    CHECK(old == 4, "reset returned %lld", (long long)old);
    CHECK_MPI(MPIX_Win_get_notify_value(win, C_R, &c));
    CHECK(c == 0, "after reset %lld", (long long)c);

    test_phase("errors");
    /* The returned code is the class itself (Open MPI's MPI_Error_class answers
     * MPI_ERR_UNKNOWN for a class made by MPI_Add_error_class, MPICH's the class). */
    int rc = MPIX_Put_notify(&one, 1, MPI_LONG, right, DATA, 1, MPI_LONG, NCTR, win);
    CHECK(rc == MPIX_ERR_NOTIFY_IDX, "bad index to the target: %s", test_errstr(rc));
    rc = MPIX_Win_get_notify_value(win, -1, &c);
    CHECK(rc == MPIX_ERR_NOTIFY_IDX, "bad local index: %s", test_errstr(rc));
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK_MPI(MPI_Error_string(MPIX_ERR_NOTIFY_IDX, msg, &len));
    CHECK(strstr(msg, "notification index") != NULL, "error string: %s", msg);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_CLASS(MPIX_Put_notify(&one, 1, MPI_LONG, right, DATA, 1, MPI_LONG, 0, win),
                MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&win));
    return test_finish();
}
