/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Errors of narma come back as MPI error codes of the right class, through the window's
 * error handler, and the window stays usable (a correct access afterwards delivers its data):
 *  - a window's default handler is MPI_ERRORS_ARE_FATAL; MPI_Win_set_errhandler /
 *    MPI_Win_get_errhandler round trip;
 *  - with MPI_ERRORS_RETURN: a target rank outside the group gives MPI_ERR_RANK (every access
 *    call and MPI_Win_flush); a displacement outside the target's window gives MPI_ERR_DISP or
 *    MPI_ERR_RMA_RANGE (MPI-4.1's one-sided error classes: "target memory is not part of the
 *    window", also for memory a dynamic window has not attached), negative counts MPI_ERR_COUNT,
 *    MPI_DATATYPE_NULL MPI_ERR_TYPE, ops not allowed (MAXLOC in Fetch_and_op on MPI_INT,
 *    NO_OP in Accumulate) MPI_ERR_OP, calls in the wrong epoch state (and MPI_Win_free
 *    inside an epoch, which frees nothing) MPI_ERR_RMA_SYNC;
 *  - a user error handler (MPI_Win_create_errhandler) is called once per failing call with the
 *    window and the code, and by MPI_Win_call_errhandler;
 *  - MPI_Win_allocate with a negative size fails (MPI_ERR_SIZE, or MPI_ERR_ARG) through
 *    MPI_COMM_WORLD's handler.
 * Not run with NARMA_PMPI=off: MPI libraries need not detect these errors.
 */
#include "common.h"

#define WN 16

static int rank, size, right, left;
static int *base;
static MPI_Win win;

/* Collective: a correct put to the right neighbour still works. */
static void still_usable(const char *after)
{
    static int round = 0;
    round++;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int v = round * 100 + rank;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, WN - 1, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(base[WN - 1] == round * 100 + left, "window unusable after %s: got %d, expected %d",
          after, base[WN - 1], round * 100 + left);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void handlers(void)
{
    test_phase("a window's default error handler is MPI_ERRORS_ARE_FATAL; set/get round trip");
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler is not MPI_ERRORS_ARE_FATAL");
    CHECK_MPI(MPI_Errhandler_free(&eh));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "set MPI_ERRORS_RETURN, got another handler back");
    CHECK_MPI(MPI_Errhandler_free(&eh));
}

static void argument_errors(void)
{
    int v[4] = {1, 2, 3, 4}, g[4], r = -1;
    MPI_Request req;
    CHECK_MPI(MPI_Win_lock_all(0, win));

    test_phase("target rank outside the group: MPI_ERR_RANK");
    CHECK_CLASS(MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Put(v, 1, MPI_INT, -7, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Get(g, 1, MPI_INT, size + 3, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Accumulate(v, 1, MPI_INT, size, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Get_accumulate(v, 1, MPI_INT, g, 1, MPI_INT, size, 0, 1, MPI_INT, MPI_SUM, win),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Fetch_and_op(v, &r, MPI_INT, size, 0, MPI_SUM, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Compare_and_swap(v, g, &r, MPI_INT, size, 0, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Rput(v, 1, MPI_INT, size, 0, 1, MPI_INT, win, &req), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Rget(g, 1, MPI_INT, -9, 0, 1, MPI_INT, win, &req), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_flush(size, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_flush_local(size, win), MPI_ERR_RANK);

    test_phase("displacement outside the target window: MPI_ERR_DISP or MPI_ERR_RMA_RANGE");
    CHECK_MPI(MPI_Put(v, 1, MPI_INT, right, WN - 2, 1, MPI_INT, win)); /* last-but-one fits */
    CHECK_CLASS2(MPI_Put(v, 1, MPI_INT, right, WN, 1, MPI_INT, win), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE);
    CHECK_CLASS2(MPI_Put(v, 2, MPI_INT, right, WN - 1, 2, MPI_INT, win), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE);
    CHECK_CLASS2(MPI_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE);
    CHECK_CLASS2(MPI_Get(g, 4, MPI_INT, right, WN - 3, 4, MPI_INT, win), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE);
    CHECK_CLASS2(MPI_Accumulate(v, 1, MPI_INT, right, 1000, 1, MPI_INT, MPI_SUM, win), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE);
    CHECK_CLASS2(MPI_Fetch_and_op(v, &r, MPI_INT, right, WN, MPI_SUM, win), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE);
    CHECK_CLASS2(MPI_Compare_and_swap(v, g, &r, MPI_INT, right, WN + 5, win), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE);
    CHECK_CLASS2(MPI_Rget(g, 1, MPI_INT, right, WN, 1, MPI_INT, win, &req), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE);

    test_phase("negative count: MPI_ERR_COUNT; MPI_DATATYPE_NULL: MPI_ERR_TYPE");
    CHECK_CLASS(MPI_Put(v, -1, MPI_INT, right, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Get(g, 1, MPI_INT, right, 0, -2, MPI_INT, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Put(v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Get(g, 1, MPI_INT, right, 0, 1, MPI_DATATYPE_NULL, win), MPI_ERR_TYPE);

    test_phase("operations not allowed: MPI_ERR_OP");
    CHECK_CLASS(MPI_Fetch_and_op(v, &r, MPI_INT, right, 0, MPI_MAXLOC, win), MPI_ERR_OP);
    CHECK_CLASS(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win), MPI_ERR_OP);

    test_phase("a valid access in the same epoch after the errors");
    int ok = test_val(1, rank, 0);
    CHECK_MPI(MPI_Put(&ok, 1, MPI_INT, right, 3, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(base[3] == test_val(1, left, 0), "valid put after errors gave %d, expected %d", base[3],
          test_val(1, left, 0));
    still_usable("argument errors");
}

static void sync_errors(void)
{
    int v = 1, g;
    test_phase("calls in the wrong epoch state: MPI_ERR_RMA_SYNC");
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Get(&g, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    if (size > 2) CHECK_CLASS(MPI_Win_unlock(left, win), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win)); /* the lock still works */
    CHECK_MPI(MPI_Win_unlock(right, win));
    still_usable("epoch-state errors");

    test_phase("MPI_Win_free inside a lock_all epoch: MPI_ERR_RMA_SYNC, nothing freed");
    CHECK_MPI(MPI_Win_lock_all(0, win));
    MPI_Win keep = win;
    CHECK_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    CHECK(win == keep, "a failed MPI_Win_free changed the handle");
    CHECK_MPI(MPI_Win_unlock_all(win));
    still_usable("a refused MPI_Win_free");
}

static void dynamic_range(void)
{
    test_phase("dynamic window: memory not attached gives MPI_ERR_RMA_RANGE or MPI_ERR_DISP");
    MPI_Win dw;
    int region[8], v = test_val(2, rank, 0);
    for (int i = 0; i < 8; i++)
        region[i] = -1;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
    CHECK_MPI(MPI_Win_set_errhandler(dw, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Win_attach(dw, region, 4 * sizeof(int))); /* half of it */
    MPI_Aint mine, *addr = malloc(size * sizeof(MPI_Aint));
    CHECK_MPI(MPI_Get_address(region, &mine));
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, dw));
    CHECK_CLASS2(
        MPI_Put(&v, 1, MPI_INT, right, MPI_Aint_add(addr[right], 6 * sizeof(int)), 1, MPI_INT, dw),
        MPI_ERR_RMA_RANGE, MPI_ERR_DISP);
    CHECK_MPI(
        MPI_Put(&v, 1, MPI_INT, right, MPI_Aint_add(addr[right], 3 * sizeof(int)), 1, MPI_INT, dw));
    CHECK_MPI(MPI_Win_unlock_all(dw));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(region[3] == test_val(2, left, 0) && region[6] == -1,
          "attached element %d (expected %d), unattached element %d (expected -1)", region[3],
          test_val(2, left, 0), region[6]);
    CHECK_MPI(MPI_Win_detach(dw, region));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&dw));
    free(addr);
}

static int handler_calls, handler_code;
static MPI_Win handler_win;
static void user_handler(MPI_Win *w, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *w;
}

static void user_handler_phase(void)
{
    test_phase("a user error handler is called with the window and the code");
    MPI_Errhandler eh, got;
    CHECK_MPI(MPI_Win_create_errhandler(user_handler, &eh));
    CHECK_MPI(MPI_Win_set_errhandler(win, eh));
    CHECK_MPI(MPI_Win_get_errhandler(win, &got));
    CHECK(got == eh, "MPI_Win_get_errhandler did not return the user handler");
    CHECK_MPI(MPI_Errhandler_free(&got));
    int v = 1;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    int rc = MPI_Put(&v, 1, MPI_INT, size + 1, 0, 1, MPI_INT, win);
    CHECK(rc != MPI_SUCCESS, "a put to rank %d succeeded", size + 1);
    CHECK(handler_calls == 1, "the handler ran %d times for one failing call", handler_calls);
    CHECK(test_class(handler_code) == MPI_ERR_RANK, "the handler got %s, expected MPI_ERR_RANK",
          test_errstr(handler_code));
    CHECK(handler_win == win, "the handler got window %ld, expected %ld", (long)handler_win,
          (long)win);
    CHECK_MPI(MPI_Win_unlock_all(win));

    test_phase("MPI_Win_call_errhandler calls the user handler");
    handler_calls = 0;
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER,
          "MPI_Win_call_errhandler: %d calls, code %d", handler_calls, handler_code);
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Errhandler_free(&eh));
    still_usable("the user handler");
}

static void creation_errors(void)
{
    test_phase("MPI_Win_allocate with a negative size fails");
    int *b = NULL;
    MPI_Win w = MPI_WIN_NULL;
    CHECK_CLASS2(MPI_Win_allocate(-8, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &w), MPI_ERR_SIZE,
                 MPI_ERR_ARG);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_errors", 45);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    CHECK_MPI(MPI_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                               &win));
    for (int i = 0; i < WN; i++)
        base[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    handlers();
    argument_errors();
    sync_errors();
    dynamic_range();
    user_handler_phase();
    creation_errors();

    CHECK_MPI(MPI_Win_free(&win));
    return test_finish();
}
