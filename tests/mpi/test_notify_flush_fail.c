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
 *
 * A failed data flush must not keep the peers waiting either: the control update after it
 * still goes out and the call returns the error.
 *   - PSCW: rank 1's Win_complete, whose data flush fails, returns NARMA_ERR_MPI and rank 0's
 *     Win_wait returns (the done count went out);
 *   - exclusive lock: rank 1's Win_unlock, whose flush fails twice (its own and the one the
 *     lock word's update would make), returns NARMA_ERR_MPI and releases the lock: rank 0 then
 *     takes it.
 * And a failure that progress met stays for the program's next flush of that target (3 ranks,
 * deferred records): rank 1's Put_notify to rank 2 is written by NARMA_Progress, whose data
 * flush fails; rank 1's Fetch_and_op_notify that follows, to rank 2 and then to rank 0, must
 * succeed and notify its target (its own flush must not report, and void, the earlier
 * failure), and rank 1's next Win_flush of rank 2 reports it.
 *
 * Also run at 4 ranks on pretend nodes of 2 (tests/CMakeLists.txt): there rank 0 is rank 1's
 * node peer (shm, whose flushes this program cannot fail: those phases are skipped) and rank 2
 * is reached through mpi; a fetching atomic to rank 0 goes through mpi too, and its flush of
 * rank 0 must not take the failure kept for rank 2.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <string.h>

static volatile int fail_next_flush; /* flushes still to fail */

int PMPI_Win_flush(int rank, MPI_Win win)
{
    static int (*real)(int, MPI_Win);
    if (real == NULL) real = (int (*)(int, MPI_Win))dlsym(RTLD_NEXT, "PMPI_Win_flush");
    int rc = real(rank, win);
    if (rc == MPI_SUCCESS && fail_next_flush > 0) {
        fail_next_flush--;
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

/* Collective: does rank a reach rank b through the mpi transport (a's answer, for all)? */
static int path_is_mpi(NARMA_Win win, int a, int b)
{
    int rank, yes = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == a) yes = strcmp(NARMA_Win_get_target_transport(win, b), "mpi") == 0;
    CHECK_MPI(MPI_Bcast(&yes, 1, MPI_INT, a, MPI_COMM_WORLD));
    return yes;
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
        const int o_t_mpi = path_is_mpi(win, O, T); /* else these phases fail no flush */
        for (int rep = 0; rep < 3 && o_t_mpi; rep++) {
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
        /* Rank 2 through mpi (always on mpi; on pretend nodes of 2 a rank off rank 1's node,
         * while rank 0 is its node peer, reached through shm, its atomics through mpi). */
        if (deferred && size >= 3 && path_is_mpi(win, O, 2)) {
            for (int same = 1; same >= 0; same--) {
                test_phase(same ? "a failure progress met, then a notified fetching atomic to "
                                  "that target"
                                : "a failure progress met, then a notified fetching atomic to "
                                  "another target");
                const int D = 2, A = same ? 2 : T; /* the failing record's and the atomic's */
                const int64_t a = 11, one = 1;
                int64_t old = -1;
                if (rank == A) mem[1] = 40;
                CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
                if (rank == O) {
                    CHECK_RC(NARMA_Put_notify(&a, 1, MPI_INT64_T, D, 0, 1, MPI_INT64_T, win, 1));
                    fail_next_flush = 1;
                    CHECK_RC(NARMA_Progress()); /* writes the record: its data flush fails */
                    CHECK(fail_next_flush == 0, "progress did not write the deferred record");
                    CHECK_RC(
                        NARMA_Fetch_and_op_notify(&one, &old, MPI_INT64_T, A, 8, MPI_SUM, win, 5));
                    CHECK(old == 40, "Fetch_and_op_notify fetched %lld, expected 40",
                          (long long)old);
                    CHECK_ERR(NARMA_Win_flush(D, win), NARMA_ERR_MPI); /* the earlier failure */
                    CHECK_RC(NARMA_Win_flush(D, win));
                    CHECK_RC(NARMA_Win_flush(A, win)); /* deferred: the atomic's record */
                }
                CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
                if (rank == A) {
                    NARMA_Request r;
                    MPI_Status st;
                    CHECK_RC(NARMA_Notify_init(win, O, 5, 1, &r));
                    CHECK_RC(NARMA_Start(&r));
                    CHECK_RC(NARMA_Wait(&r, &st));
                    CHECK_RC(NARMA_Request_free(&r));
                    CHECK(mem[1] == 41, "rank %d's counter holds %lld, expected 41", A,
                          (long long)mem[1]);
                }
                CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            }
        }
        CHECK_RC(NARMA_Win_free(&win));
    }

    NARMA_Win win;
    int64_t *mem;
    CHECK_RC(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    mem[0] = 0;
    MPI_Group world, peer;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    const int other = rank == T ? O : T;
    CHECK_MPI(MPI_Group_incl(world, 1, &other, &peer));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    const int o_t_mpi = path_is_mpi(win, O, T);
    for (int rep = 0; rep < 3 && o_t_mpi; rep++) {
        test_phase("PSCW: Win_complete whose data flush fails");
        const int64_t v = 500 + rep;
        if (rank == T) {
            CHECK_RC(NARMA_Win_post(peer, 0, win));
            CHECK_RC(NARMA_Win_wait(win));
            CHECK(mem[0] == v, "after the epoch memory holds %lld, expected %lld",
                  (long long)mem[0], (long long)v);
        } else if (rank == O) {
            CHECK_RC(NARMA_Win_start(peer, 0, win));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win));
            fail_next_flush = 1;
            CHECK_ERR(NARMA_Win_complete(win), NARMA_ERR_MPI);
            CHECK(fail_next_flush == 0, "Win_complete did not flush the data");
            fail_next_flush = 0;
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

        test_phase("exclusive lock: Win_unlock whose flushes fail");
        if (rank == O) {
            const int64_t u = 700 + rep;
            CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win));
            CHECK_RC(NARMA_Put(&u, 1, MPI_INT64_T, T, 0, 1, MPI_INT64_T, win));
            fail_next_flush = 2;
            CHECK_ERR(NARMA_Win_unlock(T, win), NARMA_ERR_MPI);
            fail_next_flush = 0;
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == T) { /* hangs (the watchdog fails the test) if the lock stayed held */
            CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win));
            CHECK(mem[0] == 700 + rep, "after the lock memory holds %lld", (long long)mem[0]);
            CHECK_RC(NARMA_Win_unlock(T, win));
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_MPI(MPI_Group_free(&peer));
    CHECK_MPI(MPI_Group_free(&world));
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
