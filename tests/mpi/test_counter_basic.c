/* narma-test: np=2,3,4 transports=shm,mpi,node2 timeout=90 */
/*
 * Counter-indexed notifications (the MPI-5.1 draft's model, narma.h):
 *  - NARMA_Win_set_num_notify gives each rank its own number of counters (collective, all
 *    zero), NARMA_Win_get_num_notify reports every rank's; the attributes
 *    NARMA_WIN_NOTIFICATION_NUM_UB / _VALUE_UB exist; a bad count is refused on every rank;
 *  - errors: outside a passive-target epoch (none, fence) NARMA_ERR_RMA_SYNC; an index
 *    outside the target's counters NARMA_ERR_NOTIFY_IDX (origin and local calls);
 *  - every origin counts into its own counter at every target, many accesses each: the
 *    counter never runs ahead of the data (put: slot value >= counter; accumulate: sum >=
 *    counter; get-accumulate likewise), and ends exact;
 *  - get: once the counter says the data was read, the target may overwrite it;
 *  - reset races with arriving increments: the sum of the values reset equals the number
 *    sent (none lost, none doubled); a threshold request completes at the threshold;
 *  - both models on one window: tag-matched requests (even ANY_TAG) never see a counter
 *    notification, counters never count tag-matched ones;
 *  - a window with counters and a pending threshold request cannot be freed; after the
 *    request is freed it can; counters are reset by a new set_num_notify.
 */
#include "common.h"

#define K 200 /* accesses per origin and target */

static int rank, size;
static NARMA_Win win;
static int64_t *mem; /* slots: [0, size) puts, [size, 2 size) acc, [2 size, 3 size) gacc, get */

static void wait_threshold(int idx, MPI_Count expected)
{
    NARMA_Request r;
    CHECK_RC(NARMA_Win_notify_ithreshold(win, idx, expected, &r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == NARMA_REQUEST_NULL, "threshold request not freed by Wait");
    MPI_Count v;
    CHECK_RC(NARMA_Win_get_notify_value(win, idx, &v));
    CHECK(v >= expected, "counter %d is %lld after its threshold %lld", idx, (long long)v,
          (long long)expected);
}

static int64_t load(int slot) { return __atomic_load_n(&mem[slot], __ATOMIC_ACQUIRE); }

/* Counter and data observed while they arrive: the data first. */
static void watch(int idx, int slot, int64_t per_count, MPI_Count final)
{
    MPI_Count c = 0;
    int spins = 0;
    while (c < final) {
        CHECK_RC(NARMA_Win_get_notify_value(win, idx, &c));
        int64_t v = load(slot);
        CHECK(v >= c * per_count, "counter %d says %lld but slot %d holds %lld", idx, (long long)c,
              slot, (long long)v);
        if (++spins % 16 == 0) usleep(50);
    }
    CHECK(c == final, "counter %d is %lld, want %lld", idx, (long long)c, (long long) final);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "counter_basic", 80);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int nslots = 4 * size + 1;
    CHECK_RC(NARMA_Win_allocate(nslots * (MPI_Aint)sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, nslots * sizeof(int64_t));

    test_phase("attributes and counts");
    MPI_Count *ub;
    int flag = 0;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_NOTIFICATION_NUM_UB, &ub, &flag));
    CHECK(flag && *ub >= 1024, "NUM_UB flag %d", flag);
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_NOTIFICATION_VALUE_UB, &ub, &flag));
    CHECK(flag && *ub > ((MPI_Count)1 << 31), "VALUE_UB");
    int n = -1;
    CHECK_RC(NARMA_Win_get_num_notify(win, (rank + 1) % size, &n));
    CHECK(n == 0, "counters before set_num_notify: %d", n);
    CHECK_ERR(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, rank == size - 1 ? -1 : 2),
              NARMA_ERR_ARG);
    CHECK_RC(NARMA_Win_get_num_notify(win, 0, &n));
    CHECK(n == 0, "a refused set_num_notify changed the count: %d", n);
    const int myn = size + 2 + rank; /* counter o: from origin o; size, size+1: shared */
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, myn));
    for (int r = 0; r < size; r++) {
        CHECK_RC(NARMA_Win_get_num_notify(win, r, &n));
        CHECK(n == size + 2 + r, "rank %d has %d counters, want %d", r, n, size + 2 + r);
    }
    CHECK_ERR(NARMA_Win_get_num_notify(win, size, &n), NARMA_ERR_RANK);
    for (int i = 0; i < myn; i++) {
        MPI_Count v = -1;
        CHECK_RC(NARMA_Win_get_notify_value(win, i, &v));
        CHECK(v == 0, "counter %d starts at %lld", i, (long long)v);
    }

    test_phase("errors: epoch and index");
    int64_t one = 1, res = 0;
    int t = (rank + 1) % size;
    CHECK_ERR(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, 0, win),
              NARMA_ERR_RMA_SYNC);
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_ERR(NARMA_Get_notify_idx(&res, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, 0, win),
              NARMA_ERR_RMA_SYNC);
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_ERR(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, -1, win),
              NARMA_ERR_NOTIFY_IDX);
    CHECK_ERR(NARMA_Accumulate_notify_idx(&one, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, MPI_SUM,
                                          size + 2 + t, win),
              NARMA_ERR_NOTIFY_IDX);
    CHECK_ERR(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, size, 0, 1, MPI_INT64_T, 0, win),
              NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Win_get_notify_value(win, myn, NULL), NARMA_ERR_NOTIFY_IDX);
    MPI_Count old;
    CHECK_ERR(NARMA_Win_reset_notify_value(win, -1, &old), NARMA_ERR_NOTIFY_IDX);
    NARMA_Request rq;
    CHECK_ERR(NARMA_Win_notify_ithreshold(win, myn, 1, &rq), NARMA_ERR_NOTIFY_IDX);
    CHECK(strstr(NARMA_Strerror(NARMA_ERR_NOTIFY_IDX), "index") != NULL, "error string: %s",
          NARMA_Strerror(NARMA_ERR_NOTIFY_IDX));
    CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1, MPI_INT64_T, 99, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("puts from every origin: data before counter");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int k = 1; k <= K; k++) {
        int64_t v = k;
        for (int d = 1; d < size; d++) {
            int tg = (rank + d) % size;
            if (k % 2)
                CHECK_RC(
                    NARMA_Put_notify_idx(&v, 1, MPI_INT64_T, tg, rank, 1, MPI_INT64_T, rank, win));
            else {
                NARMA_Request r;
                CHECK_RC(NARMA_Rput_notify_idx(&v, 1, MPI_INT64_T, tg, rank, 1, MPI_INT64_T, rank,
                                               win, &r));
                CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            }
        }
        if (k % 32 == 0) { /* look at what arrived meanwhile */
            for (int o = 0; o < size; o++) {
                MPI_Count c;
                CHECK_RC(NARMA_Win_get_notify_value(win, o, &c));
                CHECK(load(o) >= c, "origin %d: counter %lld, slot %lld", o, (long long)c,
                      (long long)load(o));
            }
        }
    }
    for (int o = 0; o < size; o++)
        if (o != rank) watch(o, o, 1, K);
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int o = 0; o < size; o++) {
        if (o == rank) continue;
        CHECK(load(o) == K, "slot %d: %lld", o, (long long)load(o));
        CHECK_RC(NARMA_Win_reset_notify_value(win, o, &old));
        CHECK(old == K, "reset of counter %d gave %lld", o, (long long)old);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* every counter reset before the next phase */

    test_phase("accumulates and get-accumulates: data before counter");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int k = 1; k <= K; k++) {
        for (int d = 1; d < size; d++) {
            int tg = (rank + d) % size;
            if (k % 2)
                CHECK_RC(NARMA_Accumulate_notify_idx(&one, 1, MPI_INT64_T, tg, size + rank, 1,
                                                     MPI_INT64_T, MPI_SUM, rank, win));
            else {
                NARMA_Request r;
                CHECK_RC(NARMA_Raccumulate_notify_idx(&one, 1, MPI_INT64_T, tg, size + rank, 1,
                                                      MPI_INT64_T, MPI_SUM, rank, win, &r));
                CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            }
            int64_t before = -1;
            if (k % 3)
                CHECK_RC(NARMA_Get_accumulate_notify_idx(&one, 1, MPI_INT64_T, &before, 1,
                                                         MPI_INT64_T, tg, 2 * size + rank, 1,
                                                         MPI_INT64_T, MPI_SUM, size, win));
            else {
                NARMA_Request r;
                CHECK_RC(NARMA_Rget_accumulate_notify_idx(&one, 1, MPI_INT64_T, &before, 1,
                                                          MPI_INT64_T, tg, 2 * size + rank, 1,
                                                          MPI_INT64_T, MPI_SUM, size, win, &r));
                CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            }
            CHECK(before == k - 1, "get-accumulate %d to %d fetched %lld", k, tg,
                  (long long)before);
        }
    }
    for (int o = 0; o < size; o++)
        if (o != rank) watch(o, size + o, 1, K);
    /* Counter `size` counts every origin's get-accumulates; their slots sum to it. */
    MPI_Count c = 0, want = (MPI_Count)K * (size - 1);
    while (c < want) {
        CHECK_RC(NARMA_Win_get_notify_value(win, size, &c));
        int64_t sum = 0;
        for (int o = 0; o < size; o++)
            sum += load(2 * size + o);
        CHECK(sum >= c, "get-accumulates: counter %lld, data %lld", (long long)c, (long long)sum);
        usleep(20);
    }
    CHECK(c == want, "get-accumulate counter %lld, want %lld", (long long)c, (long long)want);
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("get: the counter says the data was read");
    /* Rank 0 is read by everyone at slot 4 size; once its counter says all read it, it
     * overwrites the slot: nobody may have read the new value. */
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 2)); /* resets */
    CHECK_RC(NARMA_Win_get_notify_value(win, 0, &c));
    CHECK(c == 0, "set_num_notify did not reset: %lld", (long long)c);
    if (rank == 0) __atomic_store_n(&mem[4 * size], 111, __ATOMIC_RELEASE);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank != 0) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 0, 0, win));
        int64_t got[2] = {-1, -1};
        CHECK_RC(
            NARMA_Get_notify_idx(&got[0], 1, MPI_INT64_T, 0, 4 * size, 1, MPI_INT64_T, 1, win));
        NARMA_Request r;
        CHECK_RC(NARMA_Rget_notify_idx(&got[1], 1, MPI_INT64_T, 0, 4 * size, 1, MPI_INT64_T, 1, win,
                                       &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Win_unlock(0, win));
        CHECK(got[0] == 111 && got[1] == 111, "got %lld %lld", (long long)got[0],
              (long long)got[1]);
    } else {
        wait_threshold(1, 2 * (size - 1));
        __atomic_store_n(&mem[4 * size], 222, __ATOMIC_RELEASE);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("reset races with arriving increments");
    /* Everyone sends K increments to counter 0 of rank 0, which resets as they come. */
    if (rank != 0) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 0, 0, win));
        for (int k = 0; k < K; k++)
            CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, 0, win));
        CHECK_RC(NARMA_Win_unlock(0, win));
    } else {
        MPI_Count total = 0;
        want = (MPI_Count)K * (size - 1);
        int spins = 0;
        while (total < want) {
            CHECK_RC(NARMA_Win_reset_notify_value(win, 0, &old));
            CHECK(old >= 0 && old <= want, "reset gave %lld", (long long)old);
            total += old;
            if (++spins % 8 == 0) usleep(20);
        }
        CHECK(total == want, "resets summed to %lld, want %lld", (long long)total, (long long)want);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_RC(NARMA_Win_get_notify_value(win, 0, &c));
        CHECK(c == 0, "extra increments after the resets: %lld", (long long)c);
    }

    test_phase("threshold requests");
    /* Rank 0 posts thresholds 1 and 2*(size-1) on counter 1 before anything arrives. */
    NARMA_Request th[2] = {NARMA_REQUEST_NULL, NARMA_REQUEST_NULL};
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 2)); /* counter 1 counted the gets */
    if (rank == 0) {
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 1, 1, &th[0]));
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 1, 2 * (size - 1), &th[1]));
        int done = 1;
        CHECK_RC(NARMA_Test(&th[0], &done, MPI_STATUS_IGNORE));
        CHECK(!done, "threshold 1 complete with nothing sent");
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank != 0) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, 0, 0, win));
        for (int k = 0; k < 2; k++)
            CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, 1, win));
        CHECK_RC(NARMA_Win_unlock(0, win));
    } else {
        CHECK_RC(NARMA_Waitall(2, th, MPI_STATUSES_IGNORE));
        CHECK_RC(NARMA_Win_get_notify_value(win, 1, &c));
        CHECK(c == 2 * (size - 1), "counter 1: %lld", (long long)c);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("both models on one window");
    NARMA_Request any = NARMA_REQUEST_NULL;
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 1));
    if (rank == 0) {
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, K * (size - 1), &any));
        CHECK_RC(NARMA_Start(&any));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank != 0) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 0, 0, win));
        for (int k = 0; k < K; k++) {
            CHECK_RC(NARMA_Put_notify_idx(&one, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, 0, win));
            CHECK_RC(NARMA_Put_notify(&one, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, win, k % 5));
        }
        CHECK_RC(NARMA_Win_unlock(0, win));
    } else {
        MPI_Status st;
        CHECK_RC(NARMA_Wait(&any, &st));
        wait_threshold(0, (MPI_Count)K * (size - 1));
        /* Nothing left over for either model. */
        CHECK_RC(NARMA_Request_free(&any));
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &any));
        CHECK_RC(NARMA_Start(&any));
        for (int i = 0; i < 50; i++)
            CHECK_RC(NARMA_Progress());
        int done = 1;
        CHECK_RC(NARMA_Test(&any, &done, MPI_STATUS_IGNORE));
        CHECK(!done, "a tag-matched request matched more than was sent");
        CHECK_RC(NARMA_Win_get_notify_value(win, 0, &c));
        CHECK(c == (MPI_Count)K * (size - 1), "counter counted tag-matched ones: %lld",
              (long long)c);
        CHECK_RC(NARMA_Request_free(&any));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("free with counters and a pending threshold");
    CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, (MPI_Count)1 << 40, &rq));
    NARMA_Win keep = win;
    CHECK_ERR(NARMA_Win_free(&win), NARMA_ERR_PENDING);
    CHECK(win == keep, "a refused free changed the handle");
    CHECK_RC(NARMA_Request_free(&rq));
    CHECK_RC(NARMA_Win_free(&win));
    CHECK(win == NARMA_WIN_NULL, "handle not cleared");
    return test_finish();
}
