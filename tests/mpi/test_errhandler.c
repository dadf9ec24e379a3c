/* narma-test: np=2,3 transports=shm,mpi timeout=60 */
/*
 * Window error handlers:
 *   - NARMA_ERRORS_RETURN is the default: errors are returned, nothing else happens;
 *   - a user handler attached with NARMA_Win_set_errhandler is called exactly once, with the
 *     window and the error class, for each failing call on the window (blocking, request,
 *     notified, counter-notified, large-count, epoch, attribute and Win_free calls), then the
 *     call returns that class; never for a successful call;
 *   - a large-count call whose own check fails, and one whose int form fails, call it once;
 *   - calls without a valid window (NARMA_WIN_NULL) call no handler;
 *   - NARMA_Win_get_errhandler returns the handler attached; the program may free its handle
 *     while the window still uses it; NARMA_Win_call_errhandler calls it with any code;
 *   - a handler that fails a narma call on its window is not re-entered;
 *   - errors of the error-handler calls themselves (NULL function, invalid handle);
 *   - a handle freed twice is refused and the window keeps its handler; a handle used after
 *     its last free is refused (under AddressSanitizer: without reading freed memory).
 * NARMA_ERRORS_ARE_FATAL: tests/mpi/errhandler_fatal.c (a job that must abort).
 */
#include "common.h"

#include <limits.h>

static int calls, last_code;
static NARMA_Win last_win;
static int nested; /* the handler makes a failing call on the window */

static void handler(NARMA_Win *win, int *code, ...)
{
    calls++;
    last_code = *code;
    last_win = *win;
    if (nested) {
        int v = 0;
        /* Fails with NARMA_ERR_RANK: must not call this handler again. */
        int rc = NARMA_Put(&v, 1, MPI_INT, 1 << 30, 0, 1, MPI_INT, *win);
        CHECK(rc == NARMA_ERR_RANK, "nested call returned %d", rc);
    }
}

/* The call failed with exactly `expected`, after calling the handler exactly once with it. */
#define EXPECT_HANDLED(call, expected, win)                                                      \
    do {                                                                                         \
        calls = 0;                                                                               \
        last_code = -1;                                                                          \
        last_win = NARMA_WIN_NULL;                                                               \
        CHECK_ERR(call, expected);                                                               \
        CHECK(calls == 1, "%s: handler called %d times, expected once", #call, calls);           \
        CHECK(last_code == (expected), "%s: handler got code %d, expected %d", #call, last_code, \
              (int)(expected));                                                                  \
        CHECK(last_win == (win), "%s: handler got another window", #call);                       \
    } while (0)

#define EXPECT_QUIET(call, expected)                                                   \
    do {                                                                               \
        calls = 0;                                                                     \
        CHECK_ERR(call, expected);                                                     \
        CHECK(calls == 0, "%s: handler called %d times, expected none", #call, calls); \
    } while (0)

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_errhandler", 50);
    const int rank = test_rank, size = test_size, right = (rank + 1) % size;
    NARMA_Win win;
    int *base;
    int v = rank, r = 0;
    CHECK_RC(NARMA_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));

    test_phase("the default is NARMA_ERRORS_RETURN");
    NARMA_Errhandler eh = NARMA_ERRHANDLER_NULL;
    CHECK_RC(NARMA_Win_get_errhandler(win, &eh));
    CHECK(eh == NARMA_ERRORS_RETURN, "default handler is not NARMA_ERRORS_RETURN");
    CHECK_RC(NARMA_Errhandler_free(&eh));
    CHECK(eh == NARMA_ERRHANDLER_NULL, "free did not set the handle to NULL");
    CHECK_ERR(NARMA_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), NARMA_ERR_RANK);

    test_phase("a user handler: once per failing call, with the window and the class");
    CHECK_RC(NARMA_Win_create_errhandler(handler, &eh));
    CHECK_RC(NARMA_Win_set_errhandler(win, eh));
    NARMA_Errhandler got = NARMA_ERRHANDLER_NULL;
    CHECK_RC(NARMA_Win_get_errhandler(win, &got));
    CHECK(got == eh, "get_errhandler returned another handler");
    CHECK_RC(NARMA_Errhandler_free(&got));
    CHECK_RC(NARMA_Errhandler_free(&eh)); /* the window keeps its own reference */
    calls = 0;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_flush_all(win));
    CHECK(calls == 0, "handler called %d times for successful calls", calls);
    EXPECT_HANDLED(NARMA_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), NARMA_ERR_RANK, win);
    EXPECT_HANDLED(NARMA_Get(&r, -1, MPI_INT, right, 0, 1, MPI_INT, win), NARMA_ERR_COUNT, win);
    EXPECT_HANDLED(NARMA_Accumulate(&v, 1, MPI_INT, right, 16, 1, MPI_INT, MPI_SUM, win),
                   NARMA_ERR_DISP, win);
    NARMA_Request req = NARMA_REQUEST_NULL;
    EXPECT_HANDLED(NARMA_Rput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, NULL), NARMA_ERR_ARG, win);
    EXPECT_HANDLED(NARMA_Rget_accumulate(&v, 1, MPI_INT, &r, 1, MPI_INT, right, 0, 1, MPI_INT,
                                         MPI_MAXLOC, win, &req),
                   NARMA_ERR_OP, win);
    EXPECT_HANDLED(NARMA_Put_notify(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, -2), NARMA_ERR_TAG,
                   win);
    EXPECT_HANDLED(NARMA_Rget_notify(&r, 1, MPI_INT, right, 0, 1, MPI_DOUBLE, win, &req, 1),
                   NARMA_ERR_TYPE, win);
    EXPECT_HANDLED(NARMA_Rput_notify_idx(&v, 1, MPI_INT, right, 0, 1, MPI_INT, 0, win, &req),
                   NARMA_ERR_NOTIFY_IDX, win);
    EXPECT_HANDLED(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win), NARMA_ERR_RMA_CONFLICT, win);
    EXPECT_HANDLED(NARMA_Win_fence(0, win), NARMA_ERR_RMA_SYNC, win);
    EXPECT_HANDLED(NARMA_Win_flush(size + 3, win), NARMA_ERR_RANK, win);
    EXPECT_HANDLED(NARMA_Win_set_attr(win, NARMA_WIN_BASE, NULL), NARMA_ERR_KEYVAL, win);
    EXPECT_HANDLED(NARMA_Win_get_info(win, NULL), NARMA_ERR_ARG, win);

    test_phase("large-count calls: once, for their own errors and their int form's");
    EXPECT_HANDLED(NARMA_Put_c(&v, -1, MPI_INT, right, 0, 1, MPI_INT, win), NARMA_ERR_COUNT, win);
    EXPECT_HANDLED(
        NARMA_Get_c(&r, (MPI_Count)INT_MAX + 2, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win),
        NARMA_ERR_TYPE, win);
    EXPECT_HANDLED(NARMA_Put_c(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), NARMA_ERR_RANK, win);
    EXPECT_HANDLED(NARMA_Accumulate_c(&v, (MPI_Count)INT_MAX + 2, MPI_INT, right, 0,
                                      (MPI_Count)INT_MAX + 2, MPI_INT, MPI_SUM, win),
                   NARMA_ERR_DISP, win);
    EXPECT_HANDLED(NARMA_Rput_notify_c(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req, -5),
                   NARMA_ERR_TAG, win);
    CHECK_RC(NARMA_Win_unlock_all(win));

    test_phase("Win_free refused (an epoch is open): handler once on every rank");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    NARMA_Win keep = win;
    EXPECT_HANDLED(NARMA_Win_free(&win), NARMA_ERR_PENDING, keep);
    CHECK(win == keep, "a refused Win_free changed the handle");
    CHECK_RC(NARMA_Win_unlock_all(win));

    test_phase("no window, no handler");
    EXPECT_QUIET(NARMA_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, NARMA_WIN_NULL), NARMA_ERR_WIN);
    EXPECT_QUIET(NARMA_Win_fence(0, NARMA_WIN_NULL), NARMA_ERR_WIN);
    EXPECT_QUIET(NARMA_Win_call_errhandler(NARMA_WIN_NULL, NARMA_ERR_ARG), NARMA_ERR_WIN);

    test_phase("Win_call_errhandler passes any code");
    calls = 0;
    CHECK_RC(NARMA_Win_call_errhandler(win, 12345));
    CHECK(calls == 1 && last_code == 12345 && last_win == win, "call_errhandler: %d calls, code %d",
          calls, last_code);

    test_phase("a failing call inside the handler does not re-enter it");
    nested = 1;
    EXPECT_HANDLED(NARMA_Win_unlock(right, win), NARMA_ERR_RMA_SYNC, win);
    nested = 0;

    test_phase("errors of the handler calls themselves");
    EXPECT_QUIET(NARMA_Win_create_errhandler(NULL, &eh), NARMA_ERR_ARG);
    EXPECT_QUIET(NARMA_Win_create_errhandler(handler, NULL), NARMA_ERR_ARG);
    EXPECT_QUIET(NARMA_Errhandler_free(NULL), NARMA_ERR_ARG);
    eh = NARMA_ERRHANDLER_NULL;
    EXPECT_QUIET(NARMA_Errhandler_free(&eh), NARMA_ERR_ARG);
    EXPECT_HANDLED(NARMA_Win_set_errhandler(win, NARMA_ERRHANDLER_NULL), NARMA_ERR_ARG, win);
    EXPECT_HANDLED(NARMA_Win_get_errhandler(win, NULL), NARMA_ERR_ARG, win);
    EXPECT_QUIET(NARMA_Win_set_errhandler(NARMA_WIN_NULL, NARMA_ERRORS_RETURN), NARMA_ERR_WIN);

    test_phase("a handle freed twice, or used after its last free");
    {
        NARMA_Errhandler h, copy;
        CHECK_RC(NARMA_Win_create_errhandler(handler, &h));
        copy = h;
        CHECK_RC(NARMA_Win_set_errhandler(win, h));
        CHECK_RC(NARMA_Errhandler_free(&h)); /* the program's only handle */
        /* The copy names the same handle: freeing it again is refused, and the window keeps
         * its use of the handler (it used to lose it, and the next error read freed memory). */
        EXPECT_QUIET(NARMA_Errhandler_free(&copy), NARMA_ERR_ARG);
        EXPECT_HANDLED(NARMA_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), NARMA_ERR_RANK, win);
        EXPECT_HANDLED(NARMA_Win_set_errhandler(win, copy), NARMA_ERR_ARG, win);
        /* The window's use ends: the handler is gone, its stale handle still refused. */
        CHECK_RC(NARMA_Win_set_errhandler(win, NARMA_ERRORS_RETURN));
        EXPECT_QUIET(NARMA_Win_set_errhandler(win, copy), NARMA_ERR_ARG);
        EXPECT_QUIET(NARMA_Errhandler_free(&copy), NARMA_ERR_ARG);
        CHECK_RC(NARMA_Win_create_errhandler(handler, &h));
        CHECK_RC(NARMA_Win_set_errhandler(win, h));
        CHECK_RC(NARMA_Errhandler_free(&h));
    }

    test_phase("back to NARMA_ERRORS_RETURN: no more calls");
    CHECK_RC(NARMA_Win_set_errhandler(win, NARMA_ERRORS_RETURN));
    EXPECT_QUIET(NARMA_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), NARMA_ERR_RANK);
    eh = NARMA_ERRORS_ARE_FATAL;
    CHECK_RC(NARMA_Errhandler_free(&eh)); /* predefined: only the handle is cleared */
    CHECK(eh == NARMA_ERRHANDLER_NULL, "freeing a predefined handler left the handle");

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
