/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Request lifetimes: freeing a request never lets narma touch it again.
 *
 * MPI lets a program free an active request; the operation still completes
 * (at the end of its epoch) and the request object is gone. narma recycles
 * request objects, so a freed request that is still referenced shows up as a
 * *new* request changing state behind the program's back. Each phase frees a
 * request whose operation or epoch is still pending, creates a notification
 * request (which reuses the freed object), lets the pending work finish, and
 * checks that the new request is untouched (NARMA_Start accepts it) and that
 * the data moved.
 *
 * Rank 0 is the origin, rank 1 the target; other ranks only join the
 * collectives. The target posts only after the origin has recorded its
 * operation, so the operation waits in a deferred PSCW epoch.
 */
#include "common.h"

enum { N = 8, GO_TAG = 11, DONE_TAG = 12 };
enum kind { K_RPUT, K_RGET, K_RACC, K_RGACC, K_COUNT };
static const char *kind_name[K_COUNT] = {"Rput", "Rget", "Raccumulate", "Rget_accumulate"};

static MPI_Group g_origin, g_target;
static uint64_t *base;

static NARMA_Win win_new(uint64_t init)
{
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < N; i++)
        base[i] = init + (uint64_t)i;
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

/* Issue one request-based operation of the given kind on element 0 of rank 1. */
static void issue(enum kind k, NARMA_Win win, uint64_t *val, uint64_t *res, NARMA_Request *req)
{
    switch (k) {
    case K_RPUT:
        CHECK_RC(NARMA_Rput(val, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, win, req));
        break;
    case K_RGET:
        CHECK_RC(NARMA_Rget(res, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, win, req));
        break;
    case K_RACC:
        CHECK_RC(NARMA_Raccumulate(val, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, MPI_SUM, win, req));
        break;
    default:
        CHECK_RC(NARMA_Rget_accumulate(val, 1, MPI_UINT64_T, res, 1, MPI_UINT64_T, 1, 0, 1,
                                       MPI_UINT64_T, MPI_SUM, win, req));
        break;
    }
}

/* The target's side of one deferred PSCW round: post when told, wait. */
static void target_round(NARMA_Win win)
{
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_post(g_origin, 0, win));
    CHECK_RC(NARMA_Win_wait(win));
}

/* A freed request of each kind whose operation is still recorded. */
static void phase_freed_recorded_op(enum kind k)
{
    const uint64_t init = 1000 + 10 * (uint64_t)k;
    NARMA_Win win = win_new(init);
    if (test_rank == 0) {
        uint64_t val = 5, res = 0;
        NARMA_Request req, nreq;
        CHECK_RC(NARMA_Win_start(g_target, 0, win));
        issue(k, win, &val, &res, &req);
        CHECK_RC(NARMA_Request_free(&req));
        CHECK(req == NARMA_REQUEST_NULL, "Request_free leaves the handle set");
        /* Likely the very object just freed. */
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, 7, 1, &nreq));
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, GO_TAG, MPI_COMM_WORLD));
        CHECK_RC(NARMA_Win_complete(win)); /* the recorded operation is issued here */
        CHECK_RC(NARMA_Start(&nreq));      /* still INACTIVE: nobody wrote into it */
        /* No notification is sent: nothing (e.g. a stale MPI request) completes it. */
        test_expect_incomplete(&nreq, "notification request reusing a freed RMA request");
        CHECK_RC(NARMA_Request_free(&nreq));
        if (k == K_RGET || k == K_RGACC)
            CHECK(res == init, "%s result %llu, expected %llu", kind_name[k],
                  (unsigned long long)res, (unsigned long long)init);
    } else if (test_rank == 1) {
        target_round(win);
        uint64_t want = k == K_RPUT ? 5 : (k == K_RGET ? init : init + 5);
        CHECK(base[0] == want, "%s left %llu at the target, expected %llu", kind_name[k],
              (unsigned long long)base[0], (unsigned long long)want);
    }
    /* The epoch completed with the request freed: the window frees cleanly. */
    CHECK_RC(NARMA_Win_free(&win));
}

/* Win_free while an operation is recorded fails on every rank, frees nothing,
 * and the window still works afterwards; with a live request and a freed one. */
static void phase_free_with_recorded_op(int free_req_first)
{
    NARMA_Win win = win_new(0);
    uint64_t val = 77;
    NARMA_Request req = NARMA_REQUEST_NULL;
    if (test_rank == 0) {
        CHECK_RC(NARMA_Win_start(g_target, 0, win));
        CHECK_RC(NARMA_Rput(&val, 1, MPI_UINT64_T, 1, 1, 1, MPI_UINT64_T, win, &req));
        if (free_req_first) CHECK_RC(NARMA_Request_free(&req));
    }
    CHECK_ERR(NARMA_Win_free(&win), NARMA_ERR_PENDING);
    CHECK(win != NARMA_WIN_NULL, "a failed Win_free cleared the handle");
    if (test_rank == 0) {
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, GO_TAG, MPI_COMM_WORLD));
        CHECK_RC(NARMA_Win_complete(win));
        if (!free_req_first) CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    } else if (test_rank == 1) {
        target_round(win);
        CHECK(base[1] == 77, "put after a refused Win_free left %llu", (unsigned long long)base[1]);
    }
    CHECK_RC(NARMA_Win_free(&win));
}

/* A freed NARMA_Win_icomplete request: the epoch completes later, untold. */
static void phase_freed_close_request(void)
{
    NARMA_Win win = win_new(0);
    if (test_rank == 0) {
        uint64_t val = 9;
        NARMA_Request creq, nreq;
        CHECK_RC(NARMA_Win_start(g_target, 0, win));
        CHECK_RC(NARMA_Put(&val, 1, MPI_UINT64_T, 1, 2, 1, MPI_UINT64_T, win));
        CHECK_RC(NARMA_Win_icomplete(win, &creq));
        CHECK_RC(NARMA_Request_free(&creq));
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, 7, 1, &nreq));
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, GO_TAG, MPI_COMM_WORLD));
        /* The target's Win_wait returns only after our epoch completed. */
        int flag = 0;
        while (!flag) {
            CHECK_RC(NARMA_Progress());
            CHECK_MPI(MPI_Iprobe(1, DONE_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        }
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, DONE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Start(&nreq));
        CHECK_RC(NARMA_Request_free(&nreq));
    } else if (test_rank == 1) {
        target_round(win);
        CHECK(base[2] == 9, "put of a freed icomplete's epoch left %llu",
              (unsigned long long)base[2]);
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, DONE_TAG, MPI_COMM_WORLD));
    }
    CHECK_RC(NARMA_Win_free(&win));
}

/* A freed flush request while its operation is recorded behind a lock held by
 * the target, and a freed request-based get already issued (on the mpi
 * transport an MPI request in flight). */
static void phase_freed_flush_and_issued(void)
{
    NARMA_Win win = win_new(500);
    if (test_rank == 1) CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank == 0) {
        uint64_t val = 31, res = 0;
        NARMA_Request freq, req, nreq;
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Put(&val, 1, MPI_UINT64_T, 1, 3, 1, MPI_UINT64_T, win));
        CHECK_RC(NARMA_Win_iflush(1, win, &freq));
        CHECK_RC(NARMA_Request_free(&freq));
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, 7, 1, &nreq));
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, GO_TAG, MPI_COMM_WORLD));
        CHECK_RC(NARMA_Win_flush(1, win));
        CHECK_RC(NARMA_Rget(&res, 1, MPI_UINT64_T, 1, 3, 1, MPI_UINT64_T, win, &req));
        CHECK_RC(NARMA_Request_free(&req));
        CHECK_RC(NARMA_Win_unlock_all(win));
        CHECK(res == 31, "freed Rget returned %llu", (unsigned long long)res);
        CHECK_RC(NARMA_Start(&nreq));
        CHECK_RC(NARMA_Request_free(&nreq));
    } else if (test_rank == 1) {
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Win_unlock(1, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "request_lifetime", 50);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int r0 = 0, r1 = 1;
    MPI_Group_incl(world, 1, &r0, &g_origin);
    MPI_Group_incl(world, 1, &r1, &g_target);

    for (int k = 0; k < K_COUNT; k++) {
        test_phase(kind_name[k]);
        phase_freed_recorded_op((enum kind)k);
    }
    test_phase("Win_free with a recorded operation and its live request");
    phase_free_with_recorded_op(0);
    test_phase("Win_free with a recorded operation whose request was freed");
    phase_free_with_recorded_op(1);
    test_phase("freed Win_icomplete request");
    phase_freed_close_request();
    test_phase("freed flush request and freed issued Rget");
    phase_freed_flush_and_issued();

    MPI_Group_free(&g_origin);
    MPI_Group_free(&g_target);
    MPI_Group_free(&world);
    return test_finish();
}
