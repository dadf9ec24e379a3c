/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Errors raised in progress reach the program.
 *
 * An operation recorded in a deferred epoch is issued later, by progress; if
 * that fails, the closing call (Win_unlock, Win_complete, Win_fence) or its
 * request must return the error, even when the operation was replayed in an
 * earlier progress pass than the one that completes the epoch. A failed lock
 * attempt must make Win_lock return, not retry forever.
 *
 * Failures come from narma's test-only fault injection, read when a window is
 * created: NARMA_TEST_FAIL_REPLAY=N fails the Nth replayed operation,
 * NARMA_TEST_FAIL_LOCK=N the Nth and every later lock attempt (both with
 * NARMA_ERR_INTERN). Only rank 0 creates its windows with faults.
 */
#include "common.h"

enum { N = 8, GO_TAG = 21 };
static uint64_t *base;

/* A window whose rank 0 injects the given fault (name = "N"). */
static NARMA_Win win_new(const char *fault, const char *n)
{
    NARMA_Win win;
    if (test_rank == 0 && fault != NULL) setenv(fault, n, 1);
    CHECK_RC(NARMA_Win_allocate(N * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    if (test_rank == 0 && fault != NULL) unsetenv(fault);
    memset(base, 0, N * sizeof(uint64_t));
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

static void go(int to) { CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, to, GO_TAG, MPI_COMM_WORLD)); }
static void wait_go(int from)
{
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, from, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* Rank 1 holds its own lock until told; rank 0's lock epoch records its
 * operations meanwhile; a flush makes progress replay them before the unlock. */
static void phase_unlock(int nonblocking, int with_request)
{
    NARMA_Win win = win_new("NARMA_TEST_FAIL_REPLAY", "1");
    if (test_rank == 1) CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank == 0) {
        uint64_t val = 3;
        NARMA_Request lreq, req = NARMA_REQUEST_NULL, ureq;
        CHECK_RC(NARMA_Win_ilock(MPI_LOCK_EXCLUSIVE, 1, 0, win, &lreq));
        CHECK_RC(NARMA_Wait(&lreq, MPI_STATUS_IGNORE));
        if (with_request)
            CHECK_RC(NARMA_Rput(&val, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, win, &req));
        else
            CHECK_RC(NARMA_Put(&val, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, win));
        go(1);
        /* Returns once the put was replayed (and failed); the epoch is still open. */
        CHECK_RC(NARMA_Win_flush(1, win));
        if (with_request) CHECK_ERR(NARMA_Wait(&req, MPI_STATUS_IGNORE), NARMA_ERR_INTERN);
        if (nonblocking) {
            CHECK_RC(NARMA_Win_iunlock(1, win, &ureq));
            CHECK_ERR(NARMA_Wait(&ureq, MPI_STATUS_IGNORE), NARMA_ERR_INTERN);
        } else {
            CHECK_ERR(NARMA_Win_unlock(1, win), NARMA_ERR_INTERN);
        }
    } else if (test_rank == 1) {
        wait_go(0);
        CHECK_RC(NARMA_Win_unlock(1, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
}

/* PSCW: the access epoch starts before the exposure; the put is replayed when
 * the grant arrives, and Win_complete reports its failure. */
static void phase_complete(void)
{
    NARMA_Win win = win_new("NARMA_TEST_FAIL_REPLAY", "1");
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int peer = test_rank == 0 ? 1 : 0;
    MPI_Group_incl(world, 1, &peer, &g);
    if (test_rank == 0) {
        uint64_t val = 4;
        CHECK_RC(NARMA_Win_start(g, 0, win));
        CHECK_RC(NARMA_Put(&val, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, win));
        go(1);
        CHECK_RC(NARMA_Win_flush(1, win));
        CHECK_ERR(NARMA_Win_complete(win), NARMA_ERR_INTERN);
    } else if (test_rank == 1) {
        wait_go(0);
        CHECK_RC(NARMA_Win_post(g, 0, win));
        CHECK_RC(NARMA_Win_wait(win)); /* the origin's epoch still completes */
    }
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    CHECK_RC(NARMA_Win_free(&win));
}

/* Fence: rank 0's next fence epoch is deferred behind a barrier the others
 * have not reached, so its put is recorded; it is replayed when that barrier
 * completes, and the fence closing the epoch reports the failure. */
static void phase_fence(void)
{
    NARMA_Win win = win_new("NARMA_TEST_FAIL_REPLAY", "1");
    CHECK_RC(NARMA_Win_fence(0, win));
    if (test_rank == 0) {
        uint64_t val = 5;
        NARMA_Request freq;
        CHECK_RC(NARMA_Win_ifence(0, win, &freq));
        CHECK_RC(NARMA_Put(&val, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, win));
        for (int r = 1; r < test_size; r++)
            go(r);
        CHECK_RC(NARMA_Wait(&freq, MPI_STATUS_IGNORE)); /* barrier done, put replayed */
        CHECK_ERR(NARMA_Win_fence(0, win), NARMA_ERR_INTERN);
    } else {
        wait_go(0);
        CHECK_RC(NARMA_Win_fence(0, win));
        CHECK_RC(NARMA_Win_fence(0, win));
    }
    CHECK_RC(NARMA_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_RC(NARMA_Win_free(&win));
}

/* A lock attempt that fails: the RMA call and the unlock report it. */
static void phase_failed_lock_epoch(int lock_all)
{
    NARMA_Win win = win_new("NARMA_TEST_FAIL_LOCK", "1");
    if (test_rank == 0) {
        uint64_t val = 6;
        NARMA_Request ureq;
        if (lock_all)
            CHECK_RC(NARMA_Win_lock_all(0, win));
        else {
            CHECK_RC(NARMA_Win_ilock(MPI_LOCK_SHARED, 1, 0, win, &ureq));
            CHECK_RC(NARMA_Request_free(&ureq));
        }
        CHECK_ERR(NARMA_Put(&val, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, win), NARMA_ERR_INTERN);
        if (lock_all) {
            CHECK_RC(NARMA_Win_iunlock_all(win, &ureq));
            CHECK_ERR(NARMA_Wait(&ureq, MPI_STATUS_IGNORE), NARMA_ERR_INTERN);
        } else {
            CHECK_ERR(NARMA_Win_unlock(1, win), NARMA_ERR_INTERN);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
}

/* Blocking Win_lock whose attempt fails returns the error (it used to retry
 * forever), holds nothing, and leaves the window free of epochs. */
static void phase_blocking_lock(void)
{
    NARMA_Win win = win_new("NARMA_TEST_FAIL_LOCK", "1");
    if (test_rank == 0) {
        CHECK_ERR(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win), NARMA_ERR_INTERN);
        CHECK_ERR(NARMA_Win_unlock(1, win), NARMA_ERR_RMA_SYNC); /* nothing was locked */
        CHECK_ERR(NARMA_Win_lock(MPI_LOCK_SHARED, 0, 0, win), NARMA_ERR_INTERN);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* The lock word of rank 1 is untouched: other ranks can still lock it. */
    if (test_rank == test_size - 1 && test_rank != 0) {
        CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        CHECK_RC(NARMA_Win_unlock(1, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
}

/* A blocking Win_lock right after a fence gives way to the empty fence epoch; when its attempt
 * fails the call has done nothing, so that epoch is open again: a Put goes there and the next
 * fence completes it (refused with NARMA_ERR_RMA_SYNC when the failed lock had closed it).
 * Round 1 opens the epoch with an ifence whose request rank 0 waits for only after the Put (the
 * lock, queued behind the ifence's barrier, fails only once that barrier is done). */
static void phase_lock_after_fence(void)
{
    NARMA_Win win = win_new("NARMA_TEST_FAIL_LOCK", "1");
    const uint64_t val = 7;
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int round = 0; round < 2; round++) {
        NARMA_Request freq = NARMA_REQUEST_NULL;
        if (test_rank == 0 && round == 1)
            CHECK_RC(NARMA_Win_ifence(0, win, &freq));
        else
            CHECK_RC(NARMA_Win_fence(0, win));
        if (test_rank == 0) {
            CHECK_ERR(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win), NARMA_ERR_INTERN);
            CHECK_RC(NARMA_Put(&val, 1, MPI_UINT64_T, 1, round, 1, MPI_UINT64_T, win));
            CHECK_ERR(NARMA_Win_unlock(1, win), NARMA_ERR_RMA_SYNC); /* nothing was locked */
            if (round == 1) CHECK_RC(NARMA_Wait(&freq, MPI_STATUS_IGNORE));
        }
        CHECK_RC(NARMA_Win_fence(0, win));
        if (test_rank == 1)
            CHECK(base[round] == val, "round %d: the fence epoch's put left %llu", round,
                  (unsigned long long)base[round]);
    }
    CHECK_RC(NARMA_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_RC(NARMA_Win_free(&win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "epoch_errors", 50);
    test_phase("Win_unlock after a replayed put failed");
    phase_unlock(0, 0);
    test_phase("Win_iunlock's request after a replayed Rput failed");
    phase_unlock(1, 1);
    test_phase("Win_complete after a replayed put failed");
    phase_complete();
    test_phase("Win_fence after a replayed put failed");
    phase_fence();
    test_phase("failed lock attempt in a lock epoch");
    phase_failed_lock_epoch(0);
    test_phase("failed lock attempt in a lock_all epoch");
    phase_failed_lock_epoch(1);
    test_phase("blocking Win_lock whose attempt fails");
    phase_blocking_lock();
    test_phase("blocking Win_lock whose attempt fails after a fence");
    phase_lock_after_fence();
    return test_finish();
}
