/* narma-test: np=2,3 transports=mpi timeout=60 */
/*
 * The `mpi` transport's notified put takes its ring position before it
 * completes the data; when that completion (the data window's flush) fails,
 * the record still goes out, marked void, so that the target's reader moves
 * past the position instead of waiting at it forever, and the call returns
 * the MPI error (mpi.c, "A taken position is always filled").
 *
 * The data flush is made to fail once by this program's own PMPI_Win_flush
 * (libnarma calls PMPI_ names, which the executable's definition preempts): it
 * forwards to MPI's, so the data did arrive, and reports MPI_ERR_OTHER when
 * armed. Rank 1 notifies rank 0:
 *   - default contract: the armed Put_notify fails with NARMA_ERR_MPI; the
 *     next one (another tag, another value) succeeds;
 *   - MPI's completion rules (narma_notify_completion=flush): two Put_notify,
 *     then the armed Win_flush fails (both records go out void); a third
 *     Put_notify and a flush succeed.
 * Rank 0 must get exactly the successful notifications, in order, with their
 * payload in place, and nothing for the failed ones.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>

static volatile int fail_next_flush;

int PMPI_Win_flush(int rank, MPI_Win win)
{
    static int (*real)(int, MPI_Win);
    if (real == NULL) real = (int (*)(int, MPI_Win))dlsym(RTLD_NEXT, "PMPI_Win_flush");
    int rc = real(rank, win);
    if (rc == MPI_SUCCESS && fail_next_flush) {
        fail_next_flush = 0;
        return MPI_ERR_OTHER;
    }
    return rc;
}

#define T 0
#define O 1

/* At the target: the next notification from O is <O, tag> and none follows it. */
static void expect_only(NARMA_Win win, int tag, const int64_t *mem, int64_t value)
{
    NARMA_Request r;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(win, O, NARMA_ANY_TAG, 1, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == O && st.MPI_TAG == tag, "got <%d, %d>, expected <%d, %d>", st.MPI_SOURCE,
          st.MPI_TAG, O, tag);
    CHECK(mem[0] == value, "memory holds %lld, expected %lld", (long long)mem[0], (long long)value);
    /* Everything O issued is complete (a barrier followed it): after a few polls, no other
     * notification may be there. */
    int flag = 1;
    CHECK_RC(NARMA_Start(&r));
    for (int i = 0; i < 100 && flag; i++) {
        CHECK_RC(NARMA_Progress());
        CHECK_RC(NARMA_Test(&r, &flag, &st));
        flag = !flag;
    }
    CHECK(flag, "an extra notification <%d, %d> arrived", st.MPI_SOURCE, st.MPI_TAG);
    CHECK_RC(NARMA_Request_free(&r)); /* withdraws the active request */
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "notify_flush_fail", 50);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int deferred = 0; deferred < 2; deferred++) {
        test_phase(deferred ? "narma_notify_completion=flush" : "default contract");
        MPI_Info info;
        CHECK_MPI(MPI_Info_create(&info));
        if (deferred) CHECK_MPI(MPI_Info_set(info, "narma_notify_completion", "flush"));
        NARMA_Win win;
        int64_t *mem;
        CHECK_RC(NARMA_Win_allocate(64, 1, info, MPI_COMM_WORLD, &mem, &win));
        CHECK_MPI(MPI_Info_free(&info));
        mem[0] = 0;
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int rep = 0; rep < 3; rep++) {
            const int64_t a = 100 * rep + 1, b = 100 * rep + 2, c = 100 * rep + 3;
            if (rank == O && !deferred) {
                fail_next_flush = 1;
                CHECK_ERR(NARMA_Put_notify(&a, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win, 1),
                          NARMA_ERR_MPI);
                CHECK(!fail_next_flush, "the put did not flush the data");
                CHECK_RC(NARMA_Put_notify(&b, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win, 2));
            } else if (rank == O) {
                CHECK_RC(NARMA_Put_notify(&a, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win, 1));
                CHECK_RC(NARMA_Put_notify(&b, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win, 2));
                fail_next_flush = 1;
                CHECK_ERR(NARMA_Win_flush(T, win), NARMA_ERR_MPI);
                CHECK(!fail_next_flush, "the flush did not flush the data");
                CHECK_RC(NARMA_Put_notify(&c, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win, 3));
                CHECK_RC(NARMA_Win_flush(T, win));
            }
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            if (rank == T) expect_only(win, deferred ? 3 : 2, mem, deferred ? c : b);
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        CHECK_RC(NARMA_Win_free(&win));
    }
    return test_finish();
}
