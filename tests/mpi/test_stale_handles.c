/* narma-test: np=2,3 transports=shm,mpi timeout=60 */
/*
 * Copies of freed handles. Using a handle after its free is erroneous in MPI; narma answers
 * it with an error class, and must not read freed memory to do so (windows, requests and error
 * handlers are never given back to malloc: util/pool.h). The checks below pass on any build;
 * under AddressSanitizer (scripts/test.sh --sanitize) a check that reads freed memory fails the
 * test with a heap-use-after-free report.
 *   - a window: every kind of call through a copy of its handle after Win_free (data, notified,
 *     epoch, flush, attribute, name, free again) returns NARMA_ERR_WIN; a new window works;
 *   - a window freed, then a new one made: the old handle is still refused (the last objects
 *     retired are not reused at once) while the new one works;
 *   - requests: more than the 64 request objects narma used to keep for reuse (N_REQ) are made
 *     and freed; Start, Test, Wait, Request_get_status and Request_free through copies of their
 *     handles return NARMA_ERR_REQUEST; after new requests reuse the objects, those work;
 *   - a request listed twice in Waitall/Testall/Testany/Testsome/Waitsome is refused (finishing
 *     it twice retired one object twice: the next two requests shared it), and the request
 *     still completes normally afterwards.
 * Error handlers: tests/mpi/test_errhandler.c.
 */
#include "common.h"

enum { N_REQ = 200 };

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_stale_handles", 50);
    const int rank = test_rank, size = test_size, right = (rank + 1) % size,
              left = (rank + size - 1) % size;
    int v = 7, *base;
    NARMA_Win win, stale;
    MPI_Status st;
    int flag = 0;

    test_phase("a freed window's handle");
    CHECK_RC(NARMA_Win_allocate(64, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    stale = win;
    CHECK_RC(NARMA_Win_free(&win));
    CHECK(win == NARMA_WIN_NULL, "Win_free left the handle");
    CHECK_ERR(NARMA_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, stale), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Get(&v, 1, MPI_INT, right, 0, 1, MPI_INT, stale), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Put_notify(&v, 1, MPI_INT, right, 0, 1, MPI_INT, stale, 1), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_fence(0, stale), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_lock_all(0, stale), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_flush(right, stale), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_set_name(stale, "stale"), NARMA_ERR_WIN);
    NARMA_Request r = NARMA_REQUEST_NULL;
    CHECK_ERR(NARMA_Notify_init(stale, right, 1, 1, &r), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_free(&stale), NARMA_ERR_WIN);

    test_phase("a new window after it");
    CHECK_RC(NARMA_Win_allocate(64, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    {
        NARMA_Win old = win, again;
        CHECK_RC(NARMA_Win_free(&old));
        CHECK_RC(NARMA_Win_allocate(64, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &again));
        CHECK(again != win, "the window freed last was reused at once");
        CHECK_ERR(NARMA_Win_lock_all(0, win), NARMA_ERR_WIN);
        win = again;
    }
    base[0] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    v = 100 + rank;
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(base[0] == 100 + left, "the new window holds %d", base[0]);

    test_phase("freed requests' handles");
    static NARMA_Request req[N_REQ], copy[N_REQ];
    for (int i = 0; i < N_REQ; i++) {
        CHECK_RC(NARMA_Notify_init(win, MPI_ANY_SOURCE, 1000 + i, 1, &req[i]));
        copy[i] = req[i];
    }
    for (int i = 0; i < N_REQ; i++) {
        CHECK_RC(NARMA_Request_free(&req[i]));
        CHECK(req[i] == NARMA_REQUEST_NULL, "Request_free left handle %d", i);
    }
    for (int i = 0; i < N_REQ; i++) {
        NARMA_Request c = copy[i];
        CHECK_ERR(NARMA_Start(&c), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Test(&c, &flag, &st), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Wait(&c, &st), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Request_get_status(c, &flag, &st), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Request_free(&c), NARMA_ERR_REQUEST);
    }

    test_phase("a request listed twice in a Test/Wait array");
    {
        NARMA_Request q, arr[3];
        int idx = -1, outc = -1, idxs[3];
        MPI_Status sts[3];
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Rput(&v, 1, MPI_INT, right, 2, 1, MPI_INT, win, &q));
        arr[0] = q;
        arr[1] = NARMA_REQUEST_NULL;
        arr[2] = q;
        CHECK_ERR(NARMA_Waitall(3, arr, sts), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Testall(3, arr, &flag, sts), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Testany(3, arr, &idx, &flag, &st), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Waitany(3, arr, &idx, &st), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Testsome(3, arr, &outc, idxs, sts), NARMA_ERR_REQUEST);
        CHECK_ERR(NARMA_Waitsome(3, arr, &outc, idxs, sts), NARMA_ERR_REQUEST);
        CHECK(arr[0] == q && arr[2] == q, "a refused array changed its entries");
        CHECK_RC(NARMA_Waitall(2, arr, sts)); /* once: fine, and not left marked */
        CHECK(arr[0] == NARMA_REQUEST_NULL, "Waitall left the completed request");
        NARMA_Request a, b;
        CHECK_RC(NARMA_Rput(&v, 1, MPI_INT, right, 2, 1, MPI_INT, win, &a));
        CHECK_RC(NARMA_Rput(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win, &b));
        CHECK(a != b, "two live requests share one object");
        CHECK_RC(NARMA_Wait(&a, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&b, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Win_unlock_all(win));
    }

    test_phase("new requests reuse the objects");
    for (int i = 0; i < N_REQ; i++)
        CHECK_RC(NARMA_Notify_init(win, left, 2000 + i, 1, &req[i]));
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Start(&req[0]));
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win, 2000));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK_RC(NARMA_Wait(&req[0], &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 2000, "notification from %d, tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    CHECK_RC(NARMA_Win_unlock_all(win));
    for (int i = 0; i < N_REQ; i++)
        CHECK_RC(NARMA_Request_free(&req[i]));

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
