/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Notification matching (paper, section III-B):
 *  - specific and wildcard source/tag; a specific request skips earlier
 *    notifications with other tags;
 *  - counting requests complete after exactly expected_count matches, and
 *    their status describes the last match;
 *  - among several matching active requests the oldest *started* one wins;
 *  - notifications that arrive before any request is started wait in the
 *    unexpected queue and are matched in arrival order (also across origins);
 *  - Testany/Waitany/Testall/Waitall/Testsome/Waitsome/Startall;
 *  - Request_free withdraws an active request: the notification it would
 *    have matched goes to another request, it is not lost;
 *  - a request is reusable thousands of times;
 *  - notifications of one window never match requests of another;
 *  - Rput_notify/Rget_notify complete locally through their request.
 *
 * Rank 0 is the target, rank 1 the origin (others join as extra origins
 * where said). Every "must still be incomplete" check is made after all
 * notifications that could complete the request have been delivered
 * (a notified access is complete at the target when it returns, and a
 * barrier follows), so those checks do not depend on timing.
 */
#include "common.h"

static int rank, size;
static NARMA_Win win;
static unsigned char *mem;

#define T 0 /* target */
#define O 1 /* origin */

static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }

/* A notified put of `bytes` bytes (pattern of rank and tag) to `target`. */
static void note(int target, int tag, int bytes)
{
    unsigned char buf[64];
    test_fill(buf, bytes, rank, tag);
    CHECK_RC(NARMA_Put_notify(buf, bytes, MPI_BYTE, target, 64 * rank, bytes, MPI_BYTE, win, tag));
}

static void expect(const MPI_Status *st, int src, int tag, const char *what)
{
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag,
          "%s: matched (source %d, tag %d), expected (source %d, tag %d)", what, st->MPI_SOURCE,
          st->MPI_TAG, src, tag);
}

static void specific_and_wildcards(void)
{
    NARMA_Request r[8];
    MPI_Status st;

    test_phase("specific source and tag skip earlier notifications with other tags");
    if (rank != T) {
        note(T, 10 + rank, 4);
        note(T, 20 + rank, 8);
    }
    barrier();
    if (rank == T) {
        NARMA_Request never;
        CHECK_RC(NARMA_Notify_init(win, O, 30, 1, &never));
        CHECK_RC(NARMA_Start(&never));
        for (int s = 1; s < size; s++) {
            CHECK_RC(NARMA_Notify_init(win, s, 20 + s, 1, &r[0]));
            CHECK_RC(NARMA_Start(&r[0]));
            CHECK_RC(NARMA_Wait(&r[0], &st));
            expect(&st, s, 20 + s, "specific request for the second notification");
            CHECK(test_byte_count(&st) == 8, "count %d bytes, expected 8", test_byte_count(&st));
            CHECK_RC(NARMA_Request_free(&r[0]));
            CHECK_RC(NARMA_Notify_init(win, s, 10 + s, 1, &r[0]));
            CHECK_RC(NARMA_Start(&r[0]));
            CHECK_RC(NARMA_Wait(&r[0], &st));
            expect(&st, s, 10 + s, "specific request for the first notification");
            CHECK(test_byte_count(&st) == 4, "count %d bytes, expected 4", test_byte_count(&st));
            CHECK_RC(NARMA_Request_free(&r[0]));
        }
        test_expect_incomplete(&never, "a request for a tag nobody sent");
        CHECK_RC(NARMA_Request_free(&never));
    }
    barrier();

    test_phase("ANY_SOURCE counting request: completes with the last origin");
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, 40, size - 1, &r[0]));
        CHECK_RC(NARMA_Start(&r[0]));
    }
    barrier();
    if (rank != T && rank != size - 1) note(T, 40, 0);
    barrier();
    if (rank == T && size > 2)
        test_expect_incomplete(&r[0], "ANY_SOURCE request before the last origin sent");
    barrier();
    if (rank == size - 1) note(T, 40, 12);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&r[0], &st));
        expect(&st, size - 1, 40, "ANY_SOURCE counting request");
        CHECK(test_byte_count(&st) == 12, "status count %d, expected 12 (the last match)",
              test_byte_count(&st));
        CHECK_RC(NARMA_Request_free(&r[0]));
    }
    barrier();

    test_phase("ANY_TAG counting request from one source: status is the last match");
    if (rank == O) {
        note(T, 1, 4);
        note(T, 2, 8);
        note(T, 3, 12);
    }
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, NARMA_ANY_TAG, 3, &r[0]));
        CHECK_RC(NARMA_Start(&r[0]));
        CHECK_RC(NARMA_Wait(&r[0], &st));
        expect(&st, O, 3, "ANY_TAG count=3");
        CHECK(test_byte_count(&st) == 12, "status count %d, expected 12", test_byte_count(&st));
        CHECK_RC(NARMA_Request_free(&r[0]));
    }
    barrier();

    test_phase("ANY_SOURCE + ANY_TAG; tag 0 and NARMA_TAG_UB match exactly");
    if (rank == O) {
        note(T, 0, 1);
        note(T, NARMA_TAG_UB, 2);
    }
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, NARMA_TAG_UB, 1, &r[0]));
        CHECK_RC(NARMA_Notify_init(win, O, 0, 1, &r[1]));
        CHECK_RC(NARMA_Startall(2, r));
        CHECK_RC(NARMA_Wait(&r[0], &st));
        expect(&st, O, NARMA_TAG_UB, "tag NARMA_TAG_UB");
        CHECK_RC(NARMA_Wait(&r[1], &st));
        expect(&st, O, 0, "tag 0");
        CHECK_RC(NARMA_Request_free(&r[0]));
        CHECK_RC(NARMA_Request_free(&r[1]));
    }
    barrier();
    if (rank == O) note(T, 12345, 3);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &r[0]));
        CHECK_RC(NARMA_Start(&r[0]));
        CHECK_RC(NARMA_Wait(&r[0], &st));
        expect(&st, O, 12345, "ANY_SOURCE/ANY_TAG");
        CHECK(test_byte_count(&st) == 3, "count %d", test_byte_count(&st));
        CHECK_RC(NARMA_Request_free(&r[0]));
    }
    barrier();
}

static void counting(void)
{
    const int k = 5;
    NARMA_Request r = NARMA_REQUEST_NULL;
    MPI_Status st;
    test_phase("expected_count=5 completes on the 5th match, not the 4th (3 rounds)");
    if (rank == T) CHECK_RC(NARMA_Notify_init(win, O, 50, k, &r));
    for (int round = 0; round < 3; round++) {
        if (rank == T) CHECK_RC(NARMA_Start(&r));
        barrier();
        if (rank == O)
            for (int i = 0; i < k - 1; i++)
                note(T, 50, i);
        barrier();
        if (rank == T) test_expect_incomplete(&r, "counting request after k-1 matches");
        barrier();
        if (rank == O) note(T, 50, 20 + round);
        barrier();
        if (rank == T) {
            CHECK_RC(NARMA_Wait(&r, &st));
            expect(&st, O, 50, "counting request");
            CHECK(test_byte_count(&st) == 20 + round, "count %d, expected %d (the last match)",
                  test_byte_count(&st), 20 + round);
        }
    }
    if (rank == T) CHECK_RC(NARMA_Request_free(&r));
    barrier();
}

static void oldest_started_wins(void)
{
    NARMA_Request a = NARMA_REQUEST_NULL, b = NARMA_REQUEST_NULL;
    MPI_Status st;
    test_phase("oldest started (not oldest created) request wins");
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, 60, 1, &b)); /* created first */
        CHECK_RC(
            NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &a)); /* created second */
        CHECK_RC(NARMA_Start(&a));                                           /* started first */
        CHECK_RC(NARMA_Start(&b));
    }
    barrier();
    if (rank == O) note(T, 60, 1);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&a, &st));
        expect(&st, O, 60, "wildcard request started first");
        test_expect_incomplete(&b, "specific request started second");
        CHECK_RC(NARMA_Start(&a)); /* now b is the older active request */
    }
    barrier();
    if (rank == O) note(T, 60, 2);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&b, &st));
        expect(&st, O, 60, "specific request, now the oldest started");
        test_expect_incomplete(&a, "wildcard request restarted after the specific one");
    }
    barrier();
    if (rank == O) note(T, 61, 3);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&a, &st));
        expect(&st, O, 61, "wildcard request gets the next notification");
        CHECK_RC(NARMA_Request_free(&a));
        CHECK_RC(NARMA_Request_free(&b));
    }
    barrier();
}

static void unexpected_order(void)
{
    NARMA_Request r = NARMA_REQUEST_NULL;
    MPI_Status st;
    test_phase("unexpected notifications from one origin match in arrival order");
    if (rank == O)
        for (int t = 71; t <= 75; t++)
            note(T, t, t - 70);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, NARMA_ANY_TAG, 1, &r));
        for (int t = 71; t <= 75; t++) {
            CHECK_RC(NARMA_Start(&r));
            CHECK_RC(NARMA_Wait(&r, &st));
            expect(&st, O, t, "unexpected queue order");
            CHECK(test_byte_count(&st) == t - 70, "count %d", test_byte_count(&st));
        }
        CHECK_RC(NARMA_Request_free(&r));
    }
    barrier();

    test_phase("unexpected notifications from several origins match in arrival order");
    /* Origin s sends only after the target's progress took in origin s-1's notification
     * (barrier, target progress, barrier). Arrival is when the target's progress takes a
     * notification in: a window across nodes has two rings (shm, mpi), and what waits in both
     * at one poll is taken shm first. */
    for (int s = 1; s < size; s++) {
        if (rank == s) note(T, 80, s);
        barrier();
        if (rank == T) CHECK_RC(NARMA_Progress());
        barrier();
    }
    /* and once more in the reverse order with an ANY_TAG/ANY_SOURCE request */
    for (int s = size - 1; s >= 1; s--) {
        if (rank == s) note(T, 81, s);
        barrier();
        if (rank == T) CHECK_RC(NARMA_Progress());
        barrier();
    }
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, 80, 1, &r));
        for (int s = 1; s < size; s++) {
            CHECK_RC(NARMA_Start(&r));
            CHECK_RC(NARMA_Wait(&r, &st));
            expect(&st, s, 80, "ANY_SOURCE unexpected queue order");
        }
        CHECK_RC(NARMA_Request_free(&r));
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &r));
        for (int s = size - 1; s >= 1; s--) {
            CHECK_RC(NARMA_Start(&r));
            CHECK_RC(NARMA_Wait(&r, &st));
            expect(&st, s, 81, "ANY_SOURCE/ANY_TAG unexpected queue order (reverse ranks)");
        }
        CHECK_RC(NARMA_Request_free(&r));
    }
    barrier();
}

static void completion_family(void)
{
    NARMA_Request r[4];
    MPI_Status sts[4], st;
    int idx, flag, outcount, indices[4];
    test_phase("Startall / Testany / Waitany / Testsome / Waitsome / Testall / Waitall");
    if (rank == T) {
        for (int i = 0; i < 4; i++)
            CHECK_RC(NARMA_Notify_init(win, O, 90 + i, 1, &r[i]));
        CHECK_RC(NARMA_Startall(4, r));
        flag = 1;
        CHECK_RC(NARMA_Testany(4, r, &idx, &flag, &st));
        CHECK(!flag && idx == MPI_UNDEFINED, "Testany with nothing sent: flag %d index %d", flag,
              idx);
    }
    barrier();
    if (rank == O) note(T, 92, 5);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Waitany(4, r, &idx, &st));
        CHECK(idx == 2, "Waitany index %d, expected 2", idx);
        expect(&st, O, 92, "Waitany");
        CHECK(r[2] != NARMA_REQUEST_NULL, "Waitany freed a persistent request");
        outcount = -1;
        CHECK_RC(NARMA_Testsome(4, r, &outcount, indices, sts));
        CHECK(outcount == 0, "Testsome found %d completions, expected 0", outcount);
    }
    barrier();
    if (rank == O) {
        note(T, 93, 6);
        note(T, 90, 7);
    }
    barrier();
    if (rank == T) {
        int seen0 = 0, seen3 = 0;
        while (!(seen0 && seen3)) {
            CHECK_RC(NARMA_Waitsome(4, r, &outcount, indices, sts));
            CHECK(outcount >= 1 && outcount <= 2, "Waitsome outcount %d", outcount);
            for (int i = 0; i < outcount; i++) {
                CHECK(indices[i] == 0 || indices[i] == 3, "Waitsome completed index %d",
                      indices[i]);
                expect(&sts[i], O, 90 + indices[i], "Waitsome");
                CHECK(!(indices[i] == 0 && seen0) && !(indices[i] == 3 && seen3),
                      "Waitsome reported index %d twice", indices[i]);
                seen0 |= indices[i] == 0;
                seen3 |= indices[i] == 3;
            }
        }
        flag = 1;
        CHECK_RC(NARMA_Testall(4, r, &flag, sts));
        CHECK(!flag, "Testall true while request 1 is still waiting");
    }
    barrier();
    if (rank == O) note(T, 91, 8);
    barrier();
    if (rank == T) {
        flag = 0;
        while (!flag)
            CHECK_RC(NARMA_Testall(4, r, &flag, sts));
        expect(&sts[1], O, 91, "Testall");
        /* all inactive: everything returns at once */
        CHECK_RC(NARMA_Waitall(4, r, sts));
        CHECK_RC(NARMA_Testany(4, r, &idx, &flag, &st));
        CHECK(flag && idx == MPI_UNDEFINED, "Testany on inactive requests: flag %d index %d", flag,
              idx);
        CHECK_RC(NARMA_Waitsome(4, r, &outcount, indices, sts));
        CHECK(outcount == MPI_UNDEFINED, "Waitsome on inactive requests: outcount %d", outcount);
        CHECK_RC(NARMA_Startall(4, r));
    }
    barrier();
    if (rank == O)
        for (int i = 3; i >= 0; i--)
            note(T, 90 + i, i);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Waitall(4, r, sts));
        for (int i = 0; i < 4; i++) {
            expect(&sts[i], O, 90 + i, "Waitall");
            CHECK(test_byte_count(&sts[i]) == i, "Waitall status %d count %d", i,
                  test_byte_count(&sts[i]));
        }
        for (int i = 0; i < 4; i++)
            CHECK_RC(NARMA_Request_free(&r[i]));
    }
    barrier();
}

static void free_active(void)
{
    NARMA_Request a, b, c;
    MPI_Status st;
    test_phase("Request_free withdraws an active request; the notification goes elsewhere");
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, 100, 1, &a));
        CHECK_RC(NARMA_Notify_init(win, O, 100, 1, &b));
        CHECK_RC(NARMA_Start(&a)); /* a is older than b... */
        CHECK_RC(NARMA_Start(&b));
        CHECK_RC(NARMA_Request_free(&a)); /* ...but withdrawn */
        CHECK(a == NARMA_REQUEST_NULL, "Request_free left the handle set");
    }
    barrier();
    if (rank == O) note(T, 100, 9);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&b, &st));
        expect(&st, O, 100, "request started after a withdrawn one");
        CHECK_RC(NARMA_Request_free(&b));
    }
    barrier();

    test_phase("a notification for a withdrawn request waits for the next request");
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, 101, 1, &a));
        CHECK_RC(NARMA_Start(&a));
        CHECK_RC(NARMA_Request_free(&a));
    }
    barrier();
    if (rank == O) note(T, 101, 10);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, 101, 1, &c));
        CHECK_RC(NARMA_Start(&c));
        CHECK_RC(NARMA_Wait(&c, &st));
        expect(&st, O, 101, "notification after withdrawal");
        CHECK(test_byte_count(&st) == 10, "count %d", test_byte_count(&st));
        CHECK_RC(NARMA_Request_free(&c));
    }
    barrier();
}

static void reuse(void)
{
    const int iters = (int)env_long("NARMA_TEST_ITERS", 2000);
    const int partner = rank ^ 1;
    test_phase("one persistent request per side reused for thousands of ping-pongs");
    if (partner < size) {
        NARMA_Request r;
        MPI_Status st;
        int *slot = (int *)(mem + 1024);
        CHECK_RC(NARMA_Notify_init(win, partner, 7, 1, &r));
        for (int i = 0; i < iters; i++) {
            int v = i * 2 + (rank & 1);
            if ((rank & 1) == 0) {
                CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT, partner, 1024, 1, MPI_INT, win, 7));
                CHECK_RC(NARMA_Start(&r));
                CHECK_RC(NARMA_Wait(&r, &st));
                CHECK(*slot == i * 2 + 1, "iteration %d: pong carried %d", i, *slot);
            } else {
                CHECK_RC(NARMA_Start(&r));
                CHECK_RC(NARMA_Wait(&r, &st));
                CHECK(*slot == i * 2, "iteration %d: ping carried %d", i, *slot);
                CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT, partner, 1024, 1, MPI_INT, win, 7));
            }
            CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 7, "iteration %d: status (%d,%d)", i,
                  st.MPI_SOURCE, st.MPI_TAG);
        }
        CHECK_RC(NARMA_Request_free(&r));
    }
    barrier();
}

static void windows_are_separate(void)
{
    NARMA_Win w2;
    unsigned char *m2;
    NARMA_Request r1 = NARMA_REQUEST_NULL, r2 = NARMA_REQUEST_NULL;
    MPI_Status st;
    test_phase("notifications on one window never match another window's requests");
    CHECK_RC(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &m2, &w2));
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, 120, 1, &r1));
        CHECK_RC(NARMA_Notify_init(w2, O, 120, 1, &r2));
        CHECK_RC(NARMA_Start(&r1));
        CHECK_RC(NARMA_Start(&r2));
    }
    barrier();
    if (rank == O) CHECK_RC(NARMA_Put_notify(&rank, 1, MPI_INT, T, 0, 1, MPI_INT, w2, 120));
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&r2, &st));
        expect(&st, O, 120, "second window");
        CHECK(*(int *)m2 == O, "second window data %d", *(int *)m2);
        test_expect_incomplete(&r1, "first window's request");
    }
    barrier();
    if (rank == O) note(T, 120, 4);
    barrier();
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&r1, &st));
        expect(&st, O, 120, "first window");
        CHECK_RC(NARMA_Request_free(&r1));
        CHECK_RC(NARMA_Request_free(&r2));
    }
    barrier();
    CHECK_RC(NARMA_Win_free(&w2));
}

static void request_based(void)
{
    const int n = 4096;
    NARMA_Request r = NARMA_REQUEST_NULL, note_req = NARMA_REQUEST_NULL;
    MPI_Status st;
    test_phase("Rput_notify: Wait means the origin buffer is reusable");
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, O, 110, 1, &note_req));
        CHECK_RC(NARMA_Start(&note_req));
    }
    barrier();
    if (rank == O) {
        unsigned char *buf = malloc(n);
        test_fill(buf, n, rank, 110);
        CHECK_RC(NARMA_Rput_notify(buf, n, MPI_BYTE, T, 8192, n, MPI_BYTE, win, &r, 110));
        CHECK(r != NARMA_REQUEST_NULL, "Rput_notify returned a NULL request");
        CHECK_RC(NARMA_Wait(&r, &st));
        CHECK(r == NARMA_REQUEST_NULL, "Wait did not free the Rput_notify request");
        memset(buf, 0, n);
        free(buf);
    }
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&note_req, &st));
        expect(&st, O, 110, "Rput_notify notification");
        CHECK(test_byte_count(&st) == n, "count %d", test_byte_count(&st));
        long bad = test_verify(mem + 8192, n, O, 110);
        CHECK(bad < 0, "Rput_notify data differs at byte %ld", bad);
        CHECK_RC(NARMA_Request_free(&note_req));
    }
    barrier();

    test_phase("Rget_notify: Wait means the data arrived; the target is notified");
    if (rank == T) {
        test_fill(mem + 8192, n, T, 111);
        CHECK_RC(NARMA_Notify_init(win, O, 111, 1, &note_req));
        CHECK_RC(NARMA_Start(&note_req));
    }
    barrier();
    if (rank == O) {
        unsigned char *buf = calloc(n, 1);
        CHECK_RC(NARMA_Rget_notify(buf, n, MPI_BYTE, T, 8192, n, MPI_BYTE, win, &r, 111));
        test_wait_poll(&r, &st);
        CHECK(r == NARMA_REQUEST_NULL, "completion did not free the Rget_notify request");
        long bad = test_verify(buf, n, T, 111);
        CHECK(bad < 0, "Rget_notify data differs at byte %ld", bad);
        free(buf);
    }
    if (rank == T) {
        CHECK_RC(NARMA_Wait(&note_req, &st));
        expect(&st, O, 111, "Rget_notify notification");
        CHECK_RC(NARMA_Request_free(&note_req));
    }
    barrier();
}

/* After every phase, nothing may be left over: no duplicate or stray notification. */
static void nothing_left(const char *after)
{
    barrier();
    if (rank == T) {
        NARMA_Request any;
        CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &any));
        CHECK_RC(NARMA_Start(&any));
        char what[96];
        snprintf(what, sizeof what, "a catch-all request after %s (stray notification)", after);
        test_expect_incomplete(&any, what);
        CHECK_RC(NARMA_Request_free(&any));
    }
    barrier();
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_match", 50);
    rank = test_rank;
    size = test_size;
    CHECK_RC(NARMA_Win_allocate(16384, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, 16384);
    barrier();

    specific_and_wildcards();
    nothing_left("specific/wildcard matching");
    counting();
    nothing_left("counting requests");
    oldest_started_wins();
    nothing_left("oldest-started matching");
    unexpected_order();
    nothing_left("unexpected-queue matching");
    completion_family();
    nothing_left("Test*/Wait* family");
    free_active();
    nothing_left("Request_free of active requests");
    reuse();
    nothing_left("request reuse");
    windows_are_separate();
    nothing_left("two-window matching");
    request_based();
    nothing_left("Rput_notify/Rget_notify");

    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
