/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 */
/*
 * Threshold requests (NARMA_Win_notify_ithreshold), the cases their fast paths could break:
 *  - a threshold the counter already reached when the request is made: the request is born
 *    complete (Test says so at once, status names this process), it is not pending
 *    (set_num_notify goes ahead) and is still finished by Wait; expected 0 or negative too;
 *  - one whose increments are still in the ring when it is made completes in the wait;
 *  - the threshold is on the counter's value: a reset while a request is pending does not
 *    complete it, nor do as many increments as it lacked at creation, only the value itself;
 *  - a pending request freed, its memory reused by the next requests (a tag-matched one, a
 *    threshold on another counter): counter increments complete nothing freed, and the
 *    window is not held busy by it (set_num_notify and Win_free work at the end);
 *  - several requests on one counter complete at their own thresholds, one on another counter
 *    not before its own;
 *  - both models on one window: a ping-pong alternating tag-matched and counter rounds
 *    (persistent request, then ithreshold per round, as the benchmark), with other origins
 *    counting into a second counter meanwhile; nothing crosses from one model to the other.
 * Origins are every rank but 0; rank 0 is the target. Rounds are separated by barriers, so
 * rank 0 knows what was sent; it sees increments only when it drives progress.
 */
#include "common.h"

#define ROUNDS 400 /* ping-pong rounds of the last phase */
#define TAG_PP 7

static int rank, size;
static NARMA_Win win;
static int64_t *mem; /* [0]: ping-pong slot; [1 + o]: origin o's slot */

/* Every origin sends `each` increments of counter idx to rank 0 (inside the open lock_all). */
static void origins_send(int idx, int each)
{
    if (rank != 0)
        for (int k = 0; k < each; k++) {
            int64_t v = k;
            CHECK_RC(
                NARMA_Put_notify_idx(&v, 1, MPI_INT64_T, 0, 1 + rank, 1, MPI_INT64_T, idx, win));
        }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Rank 0: drive progress until counter idx reads want (every increment sent has landed). */
static void settle(int idx, MPI_Count want)
{
    MPI_Count v = -1;
    for (int spins = 0; v != want; spins++) {
        CHECK_RC(NARMA_Win_get_notify_value(win, idx, &v));
        CHECK(v <= want, "counter %d is %lld, more than the %lld sent", idx, (long long)v,
              (long long)want);
        if (spins % 64 == 63) usleep(20);
    }
}

static int done(NARMA_Request *r)
{
    int flag = -1;
    CHECK_RC(NARMA_Test(r, &flag, MPI_STATUS_IGNORE));
    return flag;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "counter_threshold", 80);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = size - 1; /* origins */
    CHECK_RC(NARMA_Win_allocate((1 + size) * (MPI_Aint)sizeof(int64_t), sizeof(int64_t),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, (1 + size) * sizeof(int64_t));
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 2));
    CHECK_RC(NARMA_Win_lock_all(0, win));

    test_phase("born complete: the threshold reached exactly when the request is made");
    origins_send(0, 1);
    NARMA_Request r = NARMA_REQUEST_NULL, keep = NARMA_REQUEST_NULL;
    if (rank == 0) {
        settle(0, n);
        MPI_Status st;
        int flag = 0;
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, n, &r));
        CHECK_RC(NARMA_Test(&r, &flag, &st));
        CHECK(flag, "threshold %d not complete with the counter at %d", n, n);
        CHECK(r == NARMA_REQUEST_NULL, "a completed threshold request was not freed by Test");
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == MPI_ANY_TAG && st.MPI_ERROR == MPI_SUCCESS,
              "status source %d tag %d error %d", st.MPI_SOURCE, st.MPI_TAG, st.MPI_ERROR);
        for (MPI_Count e = -3; e <= 0; e++) {
            CHECK_RC(NARMA_Win_notify_ithreshold(win, 1, e, &r));
            CHECK(done(&r), "threshold %lld on a counter at 0 not complete", (long long)e);
        }
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, n + 1, &r));
        CHECK(!done(&r), "threshold %d complete with the counter at %d", n + 1, n);
        CHECK_RC(NARMA_Request_free(&r));
        /* Complete but not yet waited for: not pending, set_num_notify below goes ahead. */
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, 1, &keep));
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 2));
    if (rank == 0) {
        CHECK_RC(NARMA_Wait(&keep, MPI_STATUS_IGNORE));
        CHECK(keep == NARMA_REQUEST_NULL, "Wait did not free the request");
    }
    CHECK_RC(NARMA_Win_lock_all(0, win));

    test_phase("the increments still in the ring when the request is made");
    origins_send(0, 3); /* rank 0 has not driven progress since: they wait in its ring */
    if (rank == 0) {
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, 3 * n, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        settle(0, 3 * n);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("a reset while a threshold is pending: the threshold is on the value");
    MPI_Count old;
    if (rank == 0) {
        CHECK_RC(NARMA_Win_reset_notify_value(win, 0, &old));
        CHECK(old == 3 * n, "reset gave %lld", (long long)old);
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, 2 * n, &r));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    origins_send(0, 1);
    if (rank == 0) {
        settle(0, n);
        CHECK(!done(&r), "threshold %d complete at %d", 2 * n, n);
        CHECK_RC(NARMA_Win_reset_notify_value(win, 0, &old));
        CHECK(old == n, "reset gave %lld", (long long)old);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    origins_send(0, 1); /* 2n since the request was made, but the counter is at n */
    if (rank == 0) {
        settle(0, n);
        CHECK(!done(&r), "threshold %d complete with the counter reset to 0 and then at %d", 2 * n,
              n);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    origins_send(0, 1);
    if (rank == 0) {
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        settle(0, 2 * n);
        CHECK_RC(NARMA_Win_reset_notify_value(win, 0, &old));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("a pending threshold request freed, its memory reused");
    NARMA_Request tagreq = NARMA_REQUEST_NULL, other = NARMA_REQUEST_NULL;
    if (rank == 0) {
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 1, 1, &r));
        CHECK_RC(NARMA_Request_free(&r));
        CHECK(r == NARMA_REQUEST_NULL, "Request_free left the handle");
        /* The request objects are recycled: these may well be the one just freed. */
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, TAG_PP, n, &tagreq));
        CHECK_RC(NARMA_Start(&tagreq));
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, 1, &other));
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 1, 2, &r));
        CHECK_RC(NARMA_Request_free(&r)); /* pending on counter 1, freed in turn */
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    origins_send(1, 2);
    if (rank == 0) {
        settle(1, 2 * n);
        CHECK(!done(&tagreq), "counter increments completed a tag-matched request");
        CHECK(!done(&other), "increments of counter 1 completed a threshold on counter 0");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank != 0) {
        int64_t v = rank;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, 0, 1 + rank, 1, MPI_INT64_T, win, TAG_PP));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_Status st;
        CHECK_RC(NARMA_Wait(&tagreq, &st));
        CHECK(st.MPI_TAG == TAG_PP && st.MPI_SOURCE >= 1 && st.MPI_SOURCE < size,
              "tag-matched status: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        CHECK_RC(NARMA_Request_free(&tagreq));
        CHECK(!done(&other), "threshold on counter 0 complete with nothing sent to it");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    origins_send(0, 1);
    if (rank == 0) {
        CHECK_RC(NARMA_Wait(&other, MPI_STATUS_IGNORE));
        settle(0, n);
        CHECK_RC(NARMA_Win_reset_notify_value(win, 0, &old));
        CHECK_RC(NARMA_Win_reset_notify_value(win, 1, &old));
        CHECK(old == 2 * n, "counter 1 counted %lld, want %d", (long long)old, 2 * n);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("several thresholds on one counter, one on another");
    NARMA_Request th[3] = {NARMA_REQUEST_NULL, NARMA_REQUEST_NULL, NARMA_REQUEST_NULL};
    if (rank == 0) {
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, 2 * n, &th[0]));
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, n, &th[1]));
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 1, 1, &th[2]));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    origins_send(0, 1);
    if (rank == 0) {
        int idx = -1;
        CHECK_RC(NARMA_Waitany(3, th, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == 1, "Waitany completed threshold %d first, want 1 (the counter is at %d)", idx,
              n);
        settle(0, n);
        CHECK(!done(&th[0]) && !done(&th[2]), "a threshold completed before its counter got there");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    origins_send(0, 1);
    origins_send(1, 1);
    if (rank == 0) {
        CHECK_RC(NARMA_Waitall(3, th, MPI_STATUSES_IGNORE));
        CHECK_RC(NARMA_Win_reset_notify_value(win, 0, &old));
        CHECK(old == 2 * n, "counter 0 counted %lld", (long long)old);
        CHECK_RC(NARMA_Win_reset_notify_value(win, 1, &old));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("both models on one window: a ping-pong alternating them, other origins meanwhile");
    /* Ranks 0 and 1 play; ranks 2.. count into rank 0's counter 1 all along. */
    NARMA_Request pp = NARMA_REQUEST_NULL;
    MPI_Count seq = 0;
    const int peer = rank == 0 ? 1 : 0;
    if (rank <= 1) CHECK_RC(NARMA_Notify_init(win, peer, TAG_PP, 1, &pp));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int64_t k = 1; rank <= 1 && k <= ROUNDS; k++) {
        int tagged = k % 3 == 0, mine = (k % 2 == 1) == (rank == 0);
        if (mine) {
            if (tagged)
                CHECK_RC(
                    NARMA_Put_notify(&k, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, win, TAG_PP));
            else
                CHECK_RC(NARMA_Put_notify_idx(&k, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, 0, win));
        } else {
            if (tagged) {
                CHECK_RC(NARMA_Start(&pp));
                CHECK_RC(NARMA_Wait(&pp, MPI_STATUS_IGNORE));
            } else {
                CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, ++seq, &r));
                CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            }
            int64_t got = __atomic_load_n(&mem[0], __ATOMIC_ACQUIRE);
            CHECK(got == k, "round %lld (%s) delivered %lld", (long long)k,
                  tagged ? "tag-matched" : "counter", (long long)got);
        }
    }
    /* Rank 0 drains what the others sent before its barrier (they may be waiting for room
     * in its ring, which only its progress makes). */
    if (rank >= 2) origins_send(1, ROUNDS);
    if (rank == 0) settle(1, (MPI_Count)ROUNDS * (size - 2));
    if (rank <= 1) {
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Count c;
        CHECK_RC(NARMA_Win_get_notify_value(win, 0, &c));
        CHECK(c == seq, "counter 0 is %lld after %lld counter rounds", (long long)c,
              (long long)seq);
        CHECK_RC(NARMA_Request_free(&pp));
        /* Nothing left over in either model. */
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &pp));
        CHECK_RC(NARMA_Start(&pp));
        for (int i = 0; i < 20; i++)
            CHECK_RC(NARMA_Progress());
        CHECK(!done(&pp), "a tag-matched notification left over after the ping-pong");
        CHECK_RC(NARMA_Request_free(&pp));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("nothing pending: counters replaced, window freed");
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 1));
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
