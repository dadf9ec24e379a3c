/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 */
/*
 * Notified fetching atomics (Get_accumulate_notify, Rget_accumulate_notify, Fetch_and_op_notify,
 * Compare_and_swap_notify) and NARMA_Request_get_status:
 *  - Fetch_and_op_notify SUM from every rank on every rank's counter: each target matches
 *    exactly K notifications per source (tag, source, 8 bytes), no more; its counter ends at
 *    size*K and the size*K values the origins fetched are 0 .. size*K-1, each once;
 *  - the same counter under Fetch_and_op_notify, plain Accumulate and Accumulate_notify at
 *    once: no update lost (atomic with the other accumulate-family calls);
 *  - Compare_and_swap_notify: of all ranks racing to swap one word, exactly one wins; then as a
 *    lock around a plain, non-atomic read-modify-write: no increment lost, and the target gets
 *    one notification per attempt;
 *  - Get_accumulate_notify with MPI_REPLACE (a swap: the result is the old contents) and
 *    MPI_NO_OP (an atomic read, memory unchanged), and Rget_accumulate_notify;
 *  - the data is there when the notification matches: a target reads a 256-KiB region the
 *    instant its notification matches and finds every element of that round;
 *  - inside a fence epoch as outside one; MPI_PROC_NULL does nothing; bad input gets its error
 *    class and issues nothing;
 *  - Request_get_status on every kind of request: it reports completion and the status without
 *    freeing or deactivating the request or changing the handle, as often as asked, and the
 *    Test/Wait that follows completes it normally with the same status.
 */
#include "common.h"

#include <sched.h>

#define K      60        /* Fetch_and_op_notify per origin and target */
#define KLOCK  6         /* critical sections per rank */
#define BIG    (1 << 15) /* int64 elements of the region checked on arrival */
#define ROUNDS 8
#define RACES  30             /* compare-and-swap races */
#define NELEM  (16 + 2 * BIG) /* window elements per rank */

enum { E_CTR = 0, E_MIX = 1, E_LOCK = 2, E_CS = 3, E_RACE = 4, E_SWAP = 5, E_FENCE = 10 };
enum { T_FOP = 10, T_MIX_F = 11, T_MIX_A = 12, T_LOCK = 30, T_RACE = 31, T_SWAP = 32 };
enum { T_BIG = 20, T_FENCE = 33, T_STATUS = 40, T_NULL = 5, T_BAD = 6 };

static int rank, size, left, right;
static int64_t *mem; /* this rank's window memory */
static NARMA_Win win;

/* A barrier that keeps narma's progress going: a rank still issuing notified accesses may be
 * waiting for room in this rank's notification queue, which only this rank's narma calls drain. */
static void progress_barrier(void)
{
    MPI_Request r;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        CHECK_RC(NARMA_Progress());
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }
}

static int64_t load(int elem) { return __atomic_load_n(&mem[elem], __ATOMIC_ACQUIRE); }

static void check_status(const MPI_Status *st, int src, int tag, int bytes, const char *what)
{
    CHECK(st->MPI_SOURCE == src, "%s: status source %d, expected %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: status tag %d, expected %d", what, st->MPI_TAG, tag);
    CHECK(test_byte_count(st) == bytes, "%s: MPI_Get_count %d bytes, expected %d", what,
          test_byte_count(st), bytes);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* No notification with this tag is waiting here (call after every origin is done). */
static void expect_none(int tag, const char *what)
{
    NARMA_Request extra;
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, tag, 1, &extra));
    CHECK_RC(NARMA_Start(&extra));
    test_expect_incomplete(&extra, what);
    CHECK_RC(NARMA_Request_free(&extra));
}

static void fetch_and_op_counter(void)
{
    test_phase("Fetch_and_op_notify SUM: K per source, fetched values distinct");
    NARMA_Request *reqs = malloc(sizeof(NARMA_Request) * (size_t)size);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t)size);
    for (int s = 0; s < size; s++)
        CHECK_RC(NARMA_Notify_init(win, s, T_FOP, K, &reqs[s]));
    CHECK_RC(NARMA_Startall(size, reqs));
    progress_barrier();
    /* fetched[t*K + i]: the i-th value fetched from rank t's counter */
    int64_t *fetched = malloc(sizeof(int64_t) * (size_t)(size * K));
    const int64_t one = 1;
    /* every rank on the same counter at the same time: as much contention as there can be */
    for (int t = 0; t < size; t++)
        for (int i = 0; i < K; i++) {
            fetched[t * K + i] = -1;
            CHECK_RC(NARMA_Fetch_and_op_notify(&one, &fetched[t * K + i], MPI_INT64_T, t, E_CTR,
                                               NARMA_SUM, win, T_FOP));
            /* the result is there on return */
            CHECK(fetched[t * K + i] >= 0 && fetched[t * K + i] < size * K,
                  "fetched %lld from rank %d", (long long)fetched[t * K + i], t);
        }
    CHECK_RC(NARMA_Waitall(size, reqs, sts));
    for (int s = 0; s < size; s++) {
        char what[64];
        snprintf(what, sizeof what, "the %d notifications from rank %d", K, s);
        check_status(&sts[s], s, T_FOP, (int)sizeof(int64_t), what);
    }
    /* every notification means its increment was applied */
    CHECK(load(E_CTR) == (int64_t)size * K, "counter %lld after %d x %d increments",
          (long long)load(E_CTR), size, K);
    progress_barrier();
    expect_none(T_FOP, "a notification beyond the K per source");
    int64_t *mine = malloc(sizeof(int64_t) * (size_t)(size * K));
    MPI_Alltoall(fetched, K, MPI_INT64_T, mine, K, MPI_INT64_T, MPI_COMM_WORLD);
    qsort(mine, (size_t)(size * K), sizeof(int64_t), cmp64);
    for (int i = 0; i < size * K; i++)
        CHECK(mine[i] == i, "sorted fetched values: [%d] = %lld (a value fetched twice or never)",
              i, (long long)mine[i]);
    for (int s = 0; s < size; s++)
        CHECK_RC(NARMA_Request_free(&reqs[s]));
    free(mine);
    free(fetched);
    free(reqs);
    free(sts);
}

static void mixed_accumulates(void)
{
    test_phase("Fetch_and_op_notify, Accumulate and Accumulate_notify on one element");
    const int target = 0;
    NARMA_Request rf = NARMA_REQUEST_NULL, ra = NARMA_REQUEST_NULL;
    if (rank == target) {
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, T_MIX_F, size * K, &rf));
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, T_MIX_A, size * K, &ra));
        CHECK_RC(NARMA_Start(&rf));
        CHECK_RC(NARMA_Start(&ra));
    }
    progress_barrier();
    const int64_t one = 1, thousand = 1000, million = 1000000;
    int64_t got, last = -1;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int i = 0; i < K; i++) {
        CHECK_RC(NARMA_Fetch_and_op_notify(&one, &got, MPI_INT64_T, target, E_MIX, NARMA_SUM, win,
                                           T_MIX_F));
        CHECK(got > last, "fetched %lld after %lld: the element went backwards", (long long)got,
              (long long)last);
        last = got;
        CHECK_RC(NARMA_Accumulate(&thousand, 1, MPI_INT64_T, target, E_MIX, 1, MPI_INT64_T,
                                  NARMA_SUM, win));
        CHECK_RC(NARMA_Win_flush(target, win));
        CHECK_RC(NARMA_Accumulate_notify(&million, 1, MPI_INT64_T, target, E_MIX, 1, MPI_INT64_T,
                                         NARMA_SUM, win, T_MIX_A));
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    if (rank == target) {
        CHECK_RC(NARMA_Wait(&rf, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&ra, MPI_STATUS_IGNORE));
    }
    progress_barrier();
    if (rank == target) {
        const int64_t want = (int64_t)size * K * 1001001;
        CHECK(load(E_MIX) == want, "element %lld, expected %lld: an update was lost",
              (long long)load(E_MIX), (long long)want);
        CHECK_RC(NARMA_Request_free(&rf));
        CHECK_RC(NARMA_Request_free(&ra));
    }
}

static void compare_and_swap(void)
{
    test_phase("Compare_and_swap_notify: one winner of each race");
    const int target = size - 1;
    const int64_t freev = -1, me = rank;
    int64_t res = -2;
    NARMA_Request r = NARMA_REQUEST_NULL;
    if (rank == target) CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, T_RACE, size, &r));
    for (int round = 0; round < RACES; round++) {
        snprintf(test_detail, sizeof test_detail, "race %d", round);
        if (rank == target) {
            mem[E_RACE] = -1;
            CHECK_RC(NARMA_Start(&r));
        }
        progress_barrier();
        CHECK_RC(NARMA_Compare_and_swap_notify(&me, &freev, &res, MPI_INT64_T, target, E_RACE, win,
                                               T_RACE));
        int won = res == -1, winners = 0;
        CHECK(won || (res >= 0 && res < size), "CAS result %lld", (long long)res);
        MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(winners == 1, "%d ranks won the race for one word", winners);
        int64_t winner = won ? rank : res, w0 = winner;
        MPI_Bcast(&w0, 1, MPI_INT64_T, target, MPI_COMM_WORLD);
        CHECK(winner == w0, "I saw winner %lld, rank %d saw %lld", (long long)winner, target,
              (long long)w0);
        if (rank == target) {
            /* one notification per CAS, swapped or not */
            CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(load(E_RACE) == w0, "word %lld, winner %lld", (long long)load(E_RACE),
                  (long long)w0);
        }
    }
    if (rank == target) CHECK_RC(NARMA_Request_free(&r));

    test_phase("Compare_and_swap_notify as a lock around a non-atomic increment");
    const int owner = 0;
    int attempts = 0;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int i = 0; i < KLOCK; i++) {
        do { /* acquire */
            CHECK_RC(NARMA_Compare_and_swap_notify(&me, &freev, &res, MPI_INT64_T, owner, E_LOCK,
                                                   win, T_LOCK));
            attempts++;
            if (res != -1) sched_yield();
        } while (res != -1);
        int64_t c = -1;
        CHECK_RC(NARMA_Get(&c, 1, MPI_INT64_T, owner, E_CS, 1, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_flush(owner, win));
        c++;
        CHECK_RC(NARMA_Put(&c, 1, MPI_INT64_T, owner, E_CS, 1, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_flush(owner, win));
        /* release: the word must still be mine */
        CHECK_RC(NARMA_Compare_and_swap_notify(&freev, &me, &res, MPI_INT64_T, owner, E_LOCK, win,
                                               T_LOCK));
        attempts++;
        CHECK(res == me, "released a lock word holding %lld, not my rank", (long long)res);
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    int total = 0;
    MPI_Request ar;
    int done = 0;
    MPI_Iallreduce(&attempts, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ar);
    while (!done) {
        CHECK_RC(NARMA_Progress());
        MPI_Test(&ar, &done, MPI_STATUS_IGNORE);
    }
    if (rank == owner) {
        CHECK(load(E_CS) == (int64_t)size * KLOCK, "counter %lld after %d critical sections",
              (long long)load(E_CS), size * KLOCK);
        CHECK(load(E_LOCK) == -1, "lock word %lld at the end", (long long)load(E_LOCK));
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, T_LOCK, total, &r));
        CHECK_RC(NARMA_Start(&r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Request_free(&r));
        expect_none(T_LOCK, "a notification beyond one per CAS");
    }
    progress_barrier();
}

static void replace_and_no_op(void)
{
    test_phase("Get_accumulate_notify REPLACE swaps, NO_OP reads");
    NARMA_Request r;
    MPI_Status st;
    int64_t in[4], out[4];
    for (int i = 0; i < 4; i++)
        mem[E_SWAP + i] = 100 * rank + i;
    CHECK_RC(NARMA_Notify_init(win, left, T_SWAP, 1, &r));
    CHECK_RC(NARMA_Start(&r));
    progress_barrier();
    for (int i = 0; i < 4; i++) {
        in[i] = 1000 * rank + i;
        out[i] = -1;
    }
    CHECK_RC(NARMA_Get_accumulate_notify(in, 4, MPI_INT64_T, out, 4, MPI_INT64_T, right, E_SWAP, 4,
                                         MPI_INT64_T, NARMA_REPLACE, win, T_SWAP));
    for (int i = 0; i < 4; i++)
        CHECK(out[i] == 100 * right + i, "REPLACE result [%d] = %lld, expected the old %d", i,
              (long long)out[i], 100 * right + i);
    CHECK_RC(NARMA_Wait(&r, &st));
    check_status(&st, left, T_SWAP, 4 * (int)sizeof(int64_t), "REPLACE notification");
    for (int i = 0; i < 4; i++)
        CHECK(load(E_SWAP + i) == 1000 * left + i, "after REPLACE [%d] = %lld", i,
              (long long)load(E_SWAP + i));
    progress_barrier();

    /* NO_OP: the origin buffer is ignored (NULL here); Rget_accumulate_notify's request is
     * complete at once and the result there */
    CHECK_RC(NARMA_Start(&r));
    progress_barrier();
    NARMA_Request rr = NARMA_REQUEST_NULL;
    for (int i = 0; i < 4; i++)
        out[i] = -1;
    CHECK_RC(NARMA_Rget_accumulate_notify(NULL, 0, MPI_DATATYPE_NULL, out, 4, MPI_INT64_T, right,
                                          E_SWAP, 4, MPI_INT64_T, NARMA_NO_OP, win, T_SWAP, &rr));
    CHECK(rr != NARMA_REQUEST_NULL, "Rget_accumulate_notify returned no request");
    CHECK_RC(NARMA_Wait(&rr, MPI_STATUS_IGNORE));
    CHECK(rr == NARMA_REQUEST_NULL, "Wait did not free the request");
    for (int i = 0; i < 4; i++)
        CHECK(out[i] == 1000 * rank + i, "NO_OP read [%d] = %lld, expected %d", i,
              (long long)out[i], 1000 * rank + i);
    CHECK_RC(NARMA_Wait(&r, &st));
    check_status(&st, left, T_SWAP, 4 * (int)sizeof(int64_t), "NO_OP notification");
    progress_barrier();
    for (int i = 0; i < 4; i++)
        CHECK(load(E_SWAP + i) == 1000 * left + i, "NO_OP changed [%d] to %lld", i,
              (long long)load(E_SWAP + i));
    CHECK_RC(NARMA_Request_free(&r));

    test_phase("Fetch_and_op_notify NO_OP and REPLACE");
    CHECK_RC(NARMA_Notify_init(win, left, T_SWAP, 2, &r));
    CHECK_RC(NARMA_Start(&r));
    progress_barrier();
    int64_t v = 7 + rank, got = -1;
    CHECK_RC(NARMA_Fetch_and_op_notify(NULL, &got, MPI_INT64_T, right, E_SWAP, NARMA_NO_OP, win,
                                       T_SWAP));
    CHECK(got == 1000 * rank, "Fetch_and_op NO_OP read %lld", (long long)got);
    CHECK_RC(NARMA_Fetch_and_op_notify(&v, &got, MPI_INT64_T, right, E_SWAP, NARMA_REPLACE, win,
                                       T_SWAP));
    CHECK(got == 1000 * rank, "Fetch_and_op REPLACE fetched %lld", (long long)got);
    CHECK_RC(NARMA_Wait(&r, &st));
    check_status(&st, left, T_SWAP, (int)sizeof(int64_t), "Fetch_and_op notification");
    CHECK(load(E_SWAP) == 7 + left, "after REPLACE: %lld", (long long)load(E_SWAP));
    CHECK_RC(NARMA_Request_free(&r));
    progress_barrier();
}

/* Origin rank writes its round's value over a BIG-element region at its right neighbour,
 * which checks every element the moment the notification matches, then lets the next round
 * go (a zero-byte MPI message). The result of each swap is the previous round's region. */
static void data_before_notification(void)
{
    test_phase("the data is there when the notification matches");
    int64_t *in = malloc(sizeof(int64_t) * BIG), *out = malloc(sizeof(int64_t) * BIG);
    int64_t *region = mem + 16 + BIG; /* written by my left neighbour */
    for (int i = 0; i < BIG; i++)
        region[i] = -1;
    NARMA_Request r;
    CHECK_RC(NARMA_Notify_init(win, left, T_BIG, 1, &r));
    progress_barrier();
    for (int round = 0; round < ROUNDS; round++) {
        snprintf(test_detail, sizeof test_detail, "round %d", round);
        CHECK_RC(NARMA_Start(&r));
        const int64_t val = ((int64_t)rank << 20) + round, prev = round ? val - 1 : -1;
        for (int i = 0; i < BIG; i++)
            in[i] = val;
        if (round % 2) {
            NARMA_Request rr;
            CHECK_RC(NARMA_Rget_accumulate_notify(in, BIG, MPI_INT64_T, out, BIG, MPI_INT64_T,
                                                  right, 16 + BIG, BIG, MPI_INT64_T, NARMA_REPLACE,
                                                  win, T_BIG, &rr));
            CHECK_RC(NARMA_Wait(&rr, MPI_STATUS_IGNORE));
        } else {
            CHECK_RC(NARMA_Get_accumulate_notify(in, BIG, MPI_INT64_T, out, BIG, MPI_INT64_T, right,
                                                 16 + BIG, BIG, MPI_INT64_T, NARMA_REPLACE, win,
                                                 T_BIG));
        }
        MPI_Status st;
        CHECK_RC(NARMA_Wait(&r, &st));
        const int64_t want = ((int64_t)left << 20) + round;
        int bad = -1;
        for (int i = BIG - 1; i >= 0 && bad < 0; i--) /* the last element lands last */
            if (__atomic_load_n(&region[i], __ATOMIC_RELAXED) != want) bad = i;
        CHECK(bad < 0, "element %d is %lld when the notification matched, expected %lld", bad,
              bad < 0 ? 0LL : (long long)region[bad], (long long)want);
        check_status(&st, left, T_BIG, BIG * (int)sizeof(int64_t), "big swap");
        for (int i = 0; i < BIG; i += 997)
            CHECK(out[i] == prev, "swap result [%d] = %lld, expected %lld", i, (long long)out[i],
                  (long long)prev);
        /* the next round may go: my left neighbour waits for this */
        MPI_Request sr, rcv;
        int done = 0;
        MPI_Isend(NULL, 0, MPI_BYTE, left, 77, MPI_COMM_WORLD, &sr);
        MPI_Irecv(NULL, 0, MPI_BYTE, right, 77, MPI_COMM_WORLD, &rcv);
        while (!done) {
            CHECK_RC(NARMA_Progress());
            MPI_Test(&rcv, &done, MPI_STATUS_IGNORE);
        }
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
    }
    CHECK_RC(NARMA_Request_free(&r));
    free(in);
    free(out);
    progress_barrier();
}

static void in_fence_epoch(void)
{
    test_phase("inside a fence epoch");
    NARMA_Request r;
    MPI_Status st;
    mem[E_FENCE] = 0;
    CHECK_RC(NARMA_Notify_init(win, left, T_FENCE, 1, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Win_fence(0, win));
    const int64_t add = rank + 1;
    int64_t got = -1;
    CHECK_RC(NARMA_Fetch_and_op_notify(&add, &got, MPI_INT64_T, right, E_FENCE, NARMA_SUM, win,
                                       T_FENCE));
    CHECK(got == 0, "fetched %lld", (long long)got);
    /* complete at the target without the epoch ending */
    CHECK_RC(NARMA_Wait(&r, &st));
    check_status(&st, left, T_FENCE, (int)sizeof(int64_t), "notification in a fence epoch");
    CHECK(load(E_FENCE) == left + 1, "element %lld", (long long)load(E_FENCE));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Request_free(&r));
}

static void proc_null_and_bad_input(void)
{
    test_phase("MPI_PROC_NULL does nothing");
    int64_t v[2] = {5, 6}, c = 0, res[2] = {-9, -9};
    NARMA_Request rr = NARMA_REQUEST_NULL;
    const int P = MPI_PROC_NULL;
    CHECK_RC(NARMA_Get_accumulate_notify(v, 2, MPI_INT64_T, res, 2, MPI_INT64_T, P, 0, 2,
                                         MPI_INT64_T, NARMA_SUM, win, T_NULL));
    CHECK_RC(NARMA_Fetch_and_op_notify(v, res, MPI_INT64_T, P, 0, NARMA_SUM, win, T_NULL));
    CHECK_RC(NARMA_Compare_and_swap_notify(v, &c, res, MPI_INT64_T, P, 0, win, T_NULL));
    /* as the other notified calls: the tag of a call that does nothing is not checked */
    CHECK_RC(NARMA_Fetch_and_op_notify(v, res, MPI_INT64_T, P, 0, NARMA_SUM, win, -1));
    CHECK_RC(NARMA_Rget_accumulate_notify(v, 2, MPI_INT64_T, res, 2, MPI_INT64_T, P, 0, 2,
                                          MPI_INT64_T, NARMA_SUM, win, T_NULL, &rr));
    CHECK_RC(NARMA_Wait(&rr, MPI_STATUS_IGNORE));
    CHECK(rr == NARMA_REQUEST_NULL, "Wait did not free the MPI_PROC_NULL request");
    CHECK(res[0] == -9 && res[1] == -9, "MPI_PROC_NULL wrote the result buffer");
    CHECK_ERR(
        NARMA_Fetch_and_op_notify(v, res, MPI_INT64_T, P, 0, NARMA_SUM, NARMA_WIN_NULL, T_NULL),
        NARMA_ERR_WIN);

    test_phase("bad input: an error class, nothing issued");
    const int64_t before = load(E_CTR);
    progress_barrier();
    const int t = right, T = T_BAD;
    int64_t big[2] = {0, 0};
    double d = 1.0, dres;
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT64_T, &vec);
    MPI_Type_commit(&vec);
    /* tag */
    CHECK_ERR(NARMA_Fetch_and_op_notify(v, res, MPI_INT64_T, t, 0, NARMA_SUM, win, -1),
              NARMA_ERR_TAG);
    CHECK_ERR(
        NARMA_Fetch_and_op_notify(v, res, MPI_INT64_T, t, 0, NARMA_SUM, win, NARMA_TAG_UB + 1),
        NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Compare_and_swap_notify(v, &c, res, MPI_INT64_T, t, 0, win, NARMA_ANY_TAG),
              NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Get_accumulate_notify(v, 1, MPI_INT64_T, res, 1, MPI_INT64_T, t, 0, 1,
                                          MPI_INT64_T, NARMA_SUM, win, -5),
              NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Rget_accumulate_notify(v, 1, MPI_INT64_T, res, 1, MPI_INT64_T, t, 0, 1,
                                           MPI_INT64_T, NARMA_SUM, win, -5, &rr),
              NARMA_ERR_TAG);
    /* rank */
    CHECK_ERR(NARMA_Fetch_and_op_notify(v, res, MPI_INT64_T, size, 0, NARMA_SUM, win, T),
              NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Compare_and_swap_notify(v, &c, res, MPI_INT64_T, -7, 0, win, T),
              NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Get_accumulate_notify(v, 1, MPI_INT64_T, res, 1, MPI_INT64_T, size, 0, 1,
                                          MPI_INT64_T, NARMA_SUM, win, T),
              NARMA_ERR_RANK);
    /* displacement outside the target's window */
    CHECK_ERR(NARMA_Fetch_and_op_notify(v, res, MPI_INT64_T, t, NELEM, NARMA_SUM, win, T),
              NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Compare_and_swap_notify(v, &c, res, MPI_INT64_T, t, -1, win, T),
              NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Get_accumulate_notify(v, 2, MPI_INT64_T, res, 2, MPI_INT64_T, t, NELEM - 1, 2,
                                          MPI_INT64_T, NARMA_SUM, win, T),
              NARMA_ERR_DISP);
    /* datatypes: origin and target differ; result size differs; not predefined; CAS float */
    CHECK_ERR(NARMA_Get_accumulate_notify(v, 2, MPI_INT, res, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T,
                                          NARMA_SUM, win, T),
              NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Get_accumulate_notify(v, 1, MPI_INT64_T, big, 2, MPI_INT64_T, t, 0, 1,
                                          MPI_INT64_T, NARMA_SUM, win, T),
              NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Get_accumulate_notify(v, 1, MPI_INT64_T, res, 1, MPI_DATATYPE_NULL, t, 0, 1,
                                          MPI_INT64_T, NARMA_SUM, win, T),
              NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Fetch_and_op_notify(v, res, vec, t, 0, NARMA_SUM, win, T), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Compare_and_swap_notify(&d, &d, &dres, MPI_DOUBLE, t, 0, win, T),
              NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Compare_and_swap_notify(v, &c, res, vec, t, 0, win, T), NARMA_ERR_TYPE);
    /* operation not allowed on the type */
    CHECK_ERR(NARMA_Fetch_and_op_notify(&d, &dres, MPI_DOUBLE, t, 0, NARMA_BAND, win, T),
              NARMA_ERR_OP);
    /* counts, buffers, request pointer */
    CHECK_ERR(NARMA_Get_accumulate_notify(v, -1, MPI_INT64_T, res, 1, MPI_INT64_T, t, 0, -1,
                                          MPI_INT64_T, NARMA_SUM, win, T),
              NARMA_ERR_COUNT);
    CHECK_ERR(NARMA_Get_accumulate_notify(v, 1, MPI_INT64_T, NULL, 1, MPI_INT64_T, t, 0, 1,
                                          MPI_INT64_T, NARMA_SUM, win, T),
              NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Fetch_and_op_notify(v, NULL, MPI_INT64_T, t, 0, NARMA_SUM, win, T),
              NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Compare_and_swap_notify(v, NULL, res, MPI_INT64_T, t, 0, win, T),
              NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Rget_accumulate_notify(v, 1, MPI_INT64_T, res, 1, MPI_INT64_T, t, 0, 1,
                                           MPI_INT64_T, NARMA_SUM, win, T, NULL),
              NARMA_ERR_ARG);
    /* window */
    CHECK_ERR(NARMA_Get_accumulate_notify(v, 1, MPI_INT64_T, res, 1, MPI_INT64_T, t, 0, 1,
                                          MPI_INT64_T, NARMA_SUM, NARMA_WIN_NULL, T),
              NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Compare_and_swap_notify(v, &c, res, MPI_INT64_T, t, 0, NARMA_WIN_NULL, T),
              NARMA_ERR_WIN);
    MPI_Type_free(&vec);
    progress_barrier();
    expect_none(T, "a notification from a refused call");
    CHECK(load(E_CTR) == before, "a refused call changed the counter");
    progress_barrier();
}

/* Request_get_status on req until it reports completion; then once more: the same status,
 * the handle untouched. */
static void get_status_until_done(NARMA_Request req, MPI_Status *st, const char *what)
{
    int flag = 0;
    NARMA_Request copy = req;
    while (!flag)
        CHECK_RC(NARMA_Request_get_status(req, &flag, st));
    MPI_Status again;
    flag = 0;
    CHECK_RC(NARMA_Request_get_status(req, &flag, &again));
    CHECK(flag, "%s: get_status reported completion, then not", what);
    CHECK(again.MPI_SOURCE == st->MPI_SOURCE && again.MPI_TAG == st->MPI_TAG &&
              test_byte_count(&again) == test_byte_count(st),
          "%s: the status changed between two get_status calls", what);
    CHECK(req == copy, "%s: handle changed", what);
    CHECK_RC(NARMA_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "%s: not complete with MPI_STATUS_IGNORE", what);
}

/* After get_status reported completion: Wait completes the request with the same status and
 * frees it (or, persistent, leaves it inactive). */
static void wait_after(NARMA_Request *req, const MPI_Status *seen, int persistent, const char *what)
{
    MPI_Status st;
    CHECK_RC(NARMA_Wait(req, &st));
    CHECK(st.MPI_SOURCE == seen->MPI_SOURCE && st.MPI_TAG == seen->MPI_TAG &&
              test_byte_count(&st) == test_byte_count(seen),
          "%s: Wait gave source %d tag %d count %d, get_status %d %d %d", what, st.MPI_SOURCE,
          st.MPI_TAG, test_byte_count(&st), seen->MPI_SOURCE, seen->MPI_TAG, test_byte_count(seen));
    if (persistent)
        CHECK(*req != NARMA_REQUEST_NULL, "%s: Wait freed a persistent request", what);
    else
        CHECK(*req == NARMA_REQUEST_NULL, "%s: Wait did not free the request", what);
}

static void expect_empty_status(NARMA_Request req, const char *what)
{
    MPI_Status st;
    int flag = 0;
    st.MPI_SOURCE = 12345;
    st.MPI_TAG = 12345;
    CHECK_RC(NARMA_Request_get_status(req, &flag, &st));
    CHECK(flag, "%s: flag false", what);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && test_byte_count(&st) == 0,
          "%s: status source %d tag %d count %d, expected an empty one", what, st.MPI_SOURCE,
          st.MPI_TAG, test_byte_count(&st));
}

static void request_get_status(void)
{
    MPI_Status st;
    int flag;

    test_phase("Request_get_status: NARMA_REQUEST_NULL");
    expect_empty_status(NARMA_REQUEST_NULL, "NARMA_REQUEST_NULL");
    CHECK_RC(NARMA_Request_get_status(NARMA_REQUEST_NULL, &flag, MPI_STATUS_IGNORE));
    CHECK_ERR(NARMA_Request_get_status(NARMA_REQUEST_NULL, NULL, &st), NARMA_ERR_ARG);

    test_phase("Request_get_status: a persistent notification request");
    {
        NARMA_Request r, keep;
        CHECK_RC(NARMA_Notify_init(win, left, T_STATUS, 1, &r));
        keep = r;
        expect_empty_status(r, "inactive notification request");
        CHECK_RC(NARMA_Start(&r));
        for (int i = 0; i < 50; i++) {
            CHECK_RC(NARMA_Request_get_status(r, &flag, &st));
            CHECK(!flag, "completed before anything was sent");
        }
        progress_barrier(); /* every rank has seen its request incomplete */
        int64_t v = 1000 + rank;
        CHECK_RC(
            NARMA_Put_notify(&v, 1, MPI_INT64_T, right, E_SWAP, 1, MPI_INT64_T, win, T_STATUS));
        get_status_until_done(r, &st, "notification request");
        check_status(&st, left, T_STATUS, (int)sizeof(int64_t), "get_status of a notification");
        CHECK(load(E_SWAP) == 1000 + left, "data %lld", (long long)load(E_SWAP));
        wait_after(&r, &st, 1, "notification request");
        CHECK(r == keep, "the persistent handle changed");
        expect_empty_status(r, "notification request inactive again");
        /* still usable: a second round */
        CHECK_RC(NARMA_Start(&r));
        progress_barrier();
        CHECK_RC(
            NARMA_Put_notify(&v, 1, MPI_INT64_T, right, E_SWAP, 1, MPI_INT64_T, win, T_STATUS));
        get_status_until_done(r, &st, "notification request, second round");
        wait_after(&r, &st, 1, "notification request, second round");
        CHECK_RC(NARMA_Request_free(&r));
        progress_barrier();
    }

    test_phase("Request_get_status: Rget (request-based RMA)");
    {
        NARMA_Request r;
        int64_t got[4] = {0, 0, 0, 0};
        mem[E_SWAP] = 4242 + rank;
        progress_barrier();
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win));
        CHECK_RC(NARMA_Rget(got, 1, MPI_INT64_T, right, E_SWAP, 1, MPI_INT64_T, win, &r));
        get_status_until_done(r, &st, "Rget");
        CHECK(got[0] == 4242 + right, "Rget read %lld once get_status said complete",
              (long long)got[0]);
        wait_after(&r, &st, 0, "Rget");
        CHECK_RC(NARMA_Win_unlock(right, win));
        progress_barrier();
    }

    test_phase("Request_get_status: Rget_accumulate_notify and Rput_notify");
    {
        NARMA_Request r, n;
        int64_t one = 1, got = -1;
        CHECK_RC(NARMA_Notify_init(win, left, T_STATUS, 2, &n));
        CHECK_RC(NARMA_Start(&n));
        progress_barrier();
        CHECK_RC(NARMA_Rget_accumulate_notify(&one, 1, MPI_INT64_T, &got, 1, MPI_INT64_T, right,
                                              E_SWAP, 1, MPI_INT64_T, NARMA_SUM, win, T_STATUS,
                                              &r));
        get_status_until_done(r, &st, "Rget_accumulate_notify");
        CHECK(got == 4242 + right, "fetched %lld", (long long)got);
        wait_after(&r, &st, 0, "Rget_accumulate_notify");
        static int64_t bigbuf[1 << 16]; /* large enough for a pulled put where shm allows it */
        CHECK_RC(NARMA_Rput_notify(bigbuf, 1 << 16, MPI_INT64_T, right, 16, 1 << 16, MPI_INT64_T,
                                   win, &r, T_STATUS));
        get_status_until_done(r, &st, "Rput_notify");
        wait_after(&r, &st, 0, "Rput_notify");
        get_status_until_done(n, &st, "notification request expecting 2");
        check_status(&st, left, T_STATUS, (int)sizeof(int64_t) << 16, "last of 2 notifications");
        wait_after(&n, &st, 1, "notification request expecting 2");
        CHECK_RC(NARMA_Request_free(&n));
        progress_barrier();
    }

    test_phase("Request_get_status: i* epoch requests");
    {
        NARMA_Request r;
        CHECK_RC(NARMA_Win_ifence(0, win, &r));
        get_status_until_done(r, &st, "Win_ifence");
        wait_after(&r, &st, 0, "Win_ifence");
        CHECK_RC(NARMA_Win_ifence(NARMA_MODE_NOSUCCEED, win, &r));
        get_status_until_done(r, &st, "closing Win_ifence");
        wait_after(&r, &st, 0, "closing Win_ifence");
        CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_EXCLUSIVE, right, 0, win, &r));
        get_status_until_done(r, &st, "Win_ilock");
        wait_after(&r, &st, 0, "Win_ilock");
        int64_t v = 77;
        CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, right, E_SWAP + 1, 1, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_iflush(right, win, &r));
        get_status_until_done(r, &st, "Win_iflush");
        wait_after(&r, &st, 0, "Win_iflush");
        CHECK_RC(NARMA_Win_iunlock(right, win, &r));
        get_status_until_done(r, &st, "Win_iunlock");
        wait_after(&r, &st, 0, "Win_iunlock");
        progress_barrier();
        CHECK(load(E_SWAP + 1) == 77, "put under ilock: %lld", (long long)load(E_SWAP + 1));
    }

    test_phase("Request_get_status: a persistent notified put");
    {
        NARMA_Request p, n;
        int64_t v = 500 + rank;
        CHECK_RC(NARMA_Notify_init(win, left, T_STATUS, 1, &n));
        CHECK_RC(NARMA_Start(&n));
        CHECK_RC(NARMA_Put_notify_init(&v, 1, MPI_INT64_T, right, E_SWAP, 1, MPI_INT64_T, win,
                                       T_STATUS, &p));
        expect_empty_status(p, "inactive persistent put");
        progress_barrier();
        CHECK_RC(NARMA_Start(&p));
        get_status_until_done(p, &st, "started persistent put");
        wait_after(&p, &st, 1, "started persistent put");
        expect_empty_status(p, "persistent put inactive again");
        CHECK_RC(NARMA_Wait(&n, &st));
        CHECK(load(E_SWAP) == 500 + left, "persistent put data %lld", (long long)load(E_SWAP));
        CHECK_RC(NARMA_Request_free(&p));
        CHECK_RC(NARMA_Request_free(&n));
        progress_barrier();
    }

    test_phase("Request_get_status: a counter threshold request");
    {
        NARMA_Request r;
        CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 1));
        CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, 1, &r));
        CHECK_RC(NARMA_Request_get_status(r, &flag, &st));
        CHECK(!flag, "threshold request complete with the counter at 0");
        progress_barrier();
        int64_t v = 9;
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win));
        CHECK_RC(NARMA_Put_notify_idx(&v, 1, MPI_INT64_T, right, E_SWAP, 1, MPI_INT64_T, 0, win));
        CHECK_RC(NARMA_Win_unlock(right, win));
        get_status_until_done(r, &st, "threshold request");
        wait_after(&r, &st, 0, "threshold request");
        progress_barrier();
        CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 0));
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "notify_atomics", 80);
    rank = test_rank;
    size = test_size;
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    CHECK_RC(NARMA_Win_allocate(NELEM * (MPI_Aint)sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &mem, &win));
    test_expect_transport(win);
    for (int i = 0; i < NELEM; i++)
        mem[i] = 0;
    mem[E_LOCK] = -1;
    mem[E_RACE] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    fetch_and_op_counter();
    mixed_accumulates();
    compare_and_swap();
    replace_and_no_op();
    data_before_notification();
    in_fence_epoch();
    proc_null_and_bad_input();
    request_get_status();

    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
