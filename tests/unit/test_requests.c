/*
 * Error strings and the request state machine, through the public API, in a
 * singleton MPI process (MPI_COMM_SELF windows; no mpiexec needed).
 *
 * Specification:
 *   - NARMA_Error_string gives a distinct, non-empty string for every class
 *     0 .. NARMA_ERR_LASTCODE-1 and a non-NULL string for any other code.
 *   - A persistent notification request (see src/core/narmai.h):
 *       Notify_init -> INACTIVE; Start -> ACTIVE; Start on an ACTIVE or
 *       COMPLETE request is NARMA_ERR_REQUEST; the matching notification
 *       completes it; Test/Wait report completion with the status of the last
 *       match (source, tag, MPI_Get_count on MPI_BYTE = bytes) and leave it
 *       INACTIVE and reusable; Request_free sets the handle to
 *       NARMA_REQUEST_NULL and withdraws an active request, which then
 *       matches nothing.
 *   - As in MPI, null and inactive persistent requests complete at once with
 *     the empty status (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, error
 *     MPI_SUCCESS, count 0, not cancelled); an array holding nothing else
 *     makes Testany/Waitany give index MPI_UNDEFINED (Testany flag = 1),
 *     Testsome/Waitsome outcount MPI_UNDEFINED, Testall flag = 1.
 *   - Start and Request_free on NARMA_REQUEST_NULL are NARMA_ERR_REQUEST.
 * The request checks run on two windows: one from NARMA_Win_allocate and one
 * from NARMA_Win_create, which select different transports.
 * (Start on NULL relies on the argument checks, on by default: NARMA_ARG_CHECKS.)
 */
#include <narma/narma.h>

#include "core/narmai.h" /* only to observe the internal state alongside the public behaviour */
#include "unit.h"

#include <mpi.h>

#define CHECK_RC(call)                                                                       \
    do {                                                                                     \
        int rc_ = (call);                                                                    \
        CHECK(rc_ == NARMA_SUCCESS, "%s returned %d (%s)", #call, rc_, NARMA_Strerror(rc_)); \
    } while (0)

#define POLL_LIMIT 100000 /* Tests before a request that must complete is declared stuck */

static NARMA_Win win;
static unsigned char sbuf[64];
static const char *tp = "?"; /* transport of the window under test */

/* ---- error strings ---- */

static void test_error_strings(void)
{
    unit_phase("errors: every class has its own non-empty string");
    const char *s[NARMA_ERR_LASTCODE];
    CHECK(NARMA_SUCCESS == 0, "NARMA_SUCCESS is 0");
    for (int c = 0; c < NARMA_ERR_LASTCODE; c++) {
        s[c] = NARMA_Strerror(c);
        if (!CHECK(s[c] != NULL, "class %d has no string", c)) continue;
        CHECK(s[c][0] != '\0', "class %d has an empty string", c);
        for (int d = 0; d < c; d++)
            if (s[d] != NULL)
                CHECK(strcmp(s[c], s[d]) != 0, "classes %d and %d share \"%s\"", d, c, s[c]);
    }
    unit_phase("errors: codes outside the classes still give a string");
    const int bad[] = {-1, -1000, NARMA_ERR_LASTCODE, NARMA_ERR_LASTCODE + 1, 1 << 20};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *t = NARMA_Strerror(bad[i]);
        CHECK(t != NULL && t[0] != '\0', "code %d gives %s", bad[i],
              t ? "an empty string" : "NULL");
    }
    unit_phase("errors: NARMA_Error_string mirrors MPI_Error_string");
    for (int c = -1; c <= NARMA_ERR_LASTCODE; c++) {
        char buf[NARMA_MAX_ERROR_STRING];
        int len = -1;
        memset(buf, 'x', sizeof buf);
        CHECK(NARMA_Error_string(c, buf, &len) == NARMA_SUCCESS, "code %d: not SUCCESS", c);
        CHECK(len >= 0 && len < NARMA_MAX_ERROR_STRING && buf[len] == '\0' &&
                  (size_t)len == strlen(buf),
              "code %d: resultlen %d does not match the string", c, len);
        CHECK(strcmp(buf, NARMA_Strerror(c)) == 0, "code %d: \"%s\" differs from Strerror", c, buf);
    }
    int len = 0;
    char one[NARMA_MAX_ERROR_STRING];
    CHECK(NARMA_Error_string(NARMA_SUCCESS, NULL, &len) == NARMA_ERR_ARG, "NULL string accepted");
    CHECK(NARMA_Error_string(NARMA_SUCCESS, one, NULL) == NARMA_ERR_ARG, "NULL resultlen accepted");
}

/* ---- statuses ---- */

static void junk(MPI_Status *st)
{
    memset(st, 0x5a, sizeof *st);
    st->MPI_SOURCE = -77;
    st->MPI_TAG = -77;
    st->MPI_ERROR = -77;
}

static int count_bytes(const MPI_Status *st)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    return n;
}

static void check_empty(const MPI_Status *st, const char *what)
{
    int cancelled = -1;
    MPI_Test_cancelled(st, &cancelled);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG &&
              st->MPI_ERROR == MPI_SUCCESS && count_bytes(st) == 0 && cancelled == 0,
          "[%s] %s: status (source %d, tag %d, error %d, count %d, cancelled %d) is not empty", tp,
          what, st->MPI_SOURCE, st->MPI_TAG, st->MPI_ERROR, count_bytes(st), cancelled);
}

static void check_status(const MPI_Status *st, int src, int tag, int bytes, const char *what)
{
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count_bytes(st) == bytes &&
              st->MPI_ERROR == MPI_SUCCESS,
          "[%s] %s: status (source %d, tag %d, count %d, error %d), expected (%d, %d, %d, 0)", tp,
          what, st->MPI_SOURCE, st->MPI_TAG, count_bytes(st), st->MPI_ERROR, src, tag, bytes);
}

static int state(NARMA_Request r) { return r == NULL ? 0 : r->state; }

/* A notified put of n bytes to myself (rank 0). */
static void notify_self(int n, int tag)
{
    CHECK_RC(NARMA_Put_notify(sbuf, n, MPI_BYTE, 0, 0, n, MPI_BYTE, win, tag));
}

/* Test until complete (bounded); returns the number of Tests it took or -1. */
static int test_until_done(NARMA_Request *req, MPI_Status *st)
{
    for (int i = 1; i <= POLL_LIMIT; i++) {
        int flag = 0;
        int rc = NARMA_Test(req, &flag, st);
        if (!CHECK(rc == NARMA_SUCCESS, "[%s] Test returned %d", tp, rc)) return -1;
        if (flag) return i;
    }
    return -1;
}

/* ---- the persistent request's life ---- */

static void test_lifecycle(void)
{
    NARMA_Request req = NARMA_REQUEST_NULL;
    MPI_Status st;
    int flag;

    unit_phase("lifecycle: Notify_init gives an inactive request");
    CHECK_RC(NARMA_Notify_init(win, 0, 5, 1, &req));
    if (!CHECK(req != NARMA_REQUEST_NULL, "[%s] Notify_init gave NARMA_REQUEST_NULL", tp)) return;
    CHECK(state(req) == NARMAI_REQ_INACTIVE, "[%s] state %d after init", tp, state(req));

    unit_phase("lifecycle: Test on an inactive request: flag 1, empty status, still inactive");
    junk(&st);
    flag = -1;
    CHECK_RC(NARMA_Test(&req, &flag, &st));
    CHECK(flag == 1, "[%s] flag %d", tp, flag);
    check_empty(&st, "Test on inactive");
    CHECK(req != NARMA_REQUEST_NULL && state(req) == NARMAI_REQ_INACTIVE,
          "[%s] handle kept, inactive", tp);
    junk(&st);
    CHECK_RC(NARMA_Wait(&req, &st));
    check_empty(&st, "Wait on inactive");

    unit_phase("lifecycle: Start makes it active; nothing has arrived, so Test says not yet");
    CHECK_RC(NARMA_Start(&req));
    CHECK(state(req) == NARMAI_REQ_ACTIVE, "[%s] state %d after Start", tp, state(req));
    for (int i = 0; i < 10; i++) {
        flag = -1;
        CHECK_RC(NARMA_Test(&req, &flag, &st));
        if (!CHECK(flag == 0, "[%s] Test %d on a started request with nothing arrived: flag %d", tp,
                   i, flag))
            break;
    }

    unit_phase("lifecycle: Start on an active request is NARMA_ERR_REQUEST and changes nothing");
    int rc = NARMA_Start(&req);
    CHECK(rc == NARMA_ERR_REQUEST, "[%s] second Start returned %d", tp, rc);
    CHECK(state(req) == NARMAI_REQ_ACTIVE, "[%s] still active, state %d", tp, state(req));

    unit_phase("lifecycle: a notification with another tag does not complete it");
    notify_self(3, 6);
    for (int i = 0; i < 10; i++) {
        flag = -1;
        CHECK_RC(NARMA_Test(&req, &flag, &st));
        if (!CHECK(flag == 0, "[%s] a tag-6 notification completed a tag-5 request", tp)) break;
    }

    unit_phase("lifecycle: Put_notify to self completes it with source 0, its tag and size");
    notify_self(8, 5);
    junk(&st);
    int tests = test_until_done(&req, &st);
    CHECK(tests > 0, "[%s] request never completed", tp);
    check_status(&st, 0, 5, 8, "completion");
    CHECK(req != NARMA_REQUEST_NULL && state(req) == NARMAI_REQ_INACTIVE,
          "[%s] a completed persistent request stays allocated and inactive (state %d)", tp,
          state(req));

    unit_phase("lifecycle: Test again on the now inactive request: flag 1, empty status");
    junk(&st);
    flag = -1;
    CHECK_RC(NARMA_Test(&req, &flag, &st));
    CHECK(flag == 1, "[%s] flag %d", tp, flag);
    check_empty(&st, "Test after completion");

    unit_phase("lifecycle: the request is reusable: Start, notify, Wait");
    CHECK_RC(NARMA_Start(&req));
    notify_self(16, 5);
    junk(&st);
    CHECK_RC(NARMA_Wait(&req, &st));
    check_status(&st, 0, 5, 16, "second round");

    unit_phase("lifecycle: Request_free sets the handle to NULL");
    CHECK_RC(NARMA_Request_free(&req));
    CHECK(req == NARMA_REQUEST_NULL, "[%s] handle not NULL after Request_free", tp);

    /* The tag-6 notification above is still unexpected: the next request for it gets it. */
    unit_phase("lifecycle: an unexpected notification waits for a later Start");
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, 6, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    junk(&st);
    CHECK(test_until_done(&req, &st) > 0, "[%s] the unexpected tag-6 notification was lost", tp);
    check_status(&st, 0, 6, 3, "unexpected notification");
    CHECK_RC(NARMA_Request_free(&req));
}

static void test_null(void)
{
    NARMA_Request req = NARMA_REQUEST_NULL;
    MPI_Status st;
    int flag = -1;

    unit_phase("null: Test and Wait on NARMA_REQUEST_NULL complete at once with the empty status");
    junk(&st);
    CHECK_RC(NARMA_Test(&req, &flag, &st));
    CHECK(flag == 1, "flag %d", flag);
    check_empty(&st, "Test on NULL");
    junk(&st);
    CHECK_RC(NARMA_Wait(&req, &st));
    check_empty(&st, "Wait on NULL");
    CHECK_RC(NARMA_Test(&req, &flag, MPI_STATUS_IGNORE));

    unit_phase("null: Start and Request_free on NARMA_REQUEST_NULL are NARMA_ERR_REQUEST");
    int rc = NARMA_Start(&req);
    CHECK(rc == NARMA_ERR_REQUEST, "Start on NULL returned %d", rc);
    rc = NARMA_Request_free(&req);
    CHECK(rc == NARMA_ERR_REQUEST, "Request_free on NULL returned %d", rc);
    NARMA_Request none[2] = {NARMA_REQUEST_NULL, NARMA_REQUEST_NULL};
    rc = NARMA_Startall(2, none);
    CHECK(rc == NARMA_ERR_REQUEST, "Startall on NULLs returned %d", rc);
}

/* A completed request observed by nobody yet is COMPLETE: Start is an error. */
static void test_start_complete(void)
{
    NARMA_Request a, b;
    MPI_Status st;
    int flag;
    unit_phase("complete: Start on a complete (not yet tested) request is NARMA_ERR_REQUEST");
    CHECK_RC(NARMA_Notify_init(win, 0, 11, 1, &a));
    CHECK_RC(NARMA_Notify_init(win, 0, 12, 1, &b));
    CHECK_RC(NARMA_Start(&a));
    CHECK_RC(NARMA_Start(&b));
    notify_self(4, 11);
    /* Testing b drives progress, which completes a without a Test on it. */
    for (int i = 0; i < POLL_LIMIT && state(a) != NARMAI_REQ_COMPLETE; i++) {
        flag = -1;
        CHECK_RC(NARMA_Test(&b, &flag, &st));
        if (!CHECK(flag == 0, "[%s] b (tag 12) completed by a tag-11 notification", tp)) break;
    }
    if (CHECK(state(a) == NARMAI_REQ_COMPLETE, "[%s] a not complete (state %d)", tp, state(a))) {
        int rc = NARMA_Start(&a);
        CHECK(rc == NARMA_ERR_REQUEST, "[%s] Start on a complete request returned %d", tp, rc);
        junk(&st);
        flag = -1;
        CHECK_RC(NARMA_Test(&a, &flag, &st));
        CHECK(flag == 1, "[%s] flag %d", tp, flag);
        check_status(&st, 0, 11, 4, "the completion survives the refused Start");
    }

    unit_phase("complete: expected_count 2 completes on the 2nd match with its status");
    NARMA_Request two;
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 2, &two));
    CHECK_RC(NARMA_Start(&two));
    notify_self(12, 12); /* b, started first, takes this one */
    notify_self(20, 21);
    notify_self(24, 22);
    CHECK_RC(NARMA_Wait(&two, &st));
    check_status(&st, 0, 22, 24, "status of the last of two matches");
    CHECK_RC(NARMA_Wait(&b, &st));
    check_status(&st, 0, 12, 12, "the older request took the first match");
    CHECK_RC(NARMA_Request_free(&a));
    CHECK_RC(NARMA_Request_free(&b));
    CHECK_RC(NARMA_Request_free(&two));
}

/* Request_free on an active request withdraws it: it matches nothing. */
static void test_free_active(void)
{
    NARMA_Request gone, later;
    MPI_Status st;
    unit_phase("free: a freed active request matches nothing; the notification waits for the next");
    CHECK_RC(NARMA_Notify_init(win, 0, 13, 1, &later)); /* made first: not a recycled object */
    CHECK_RC(NARMA_Notify_init(win, 0, 13, 1, &gone));
    CHECK_RC(NARMA_Start(&gone));
    CHECK_RC(NARMA_Request_free(&gone));
    CHECK(gone == NARMA_REQUEST_NULL, "[%s] handle not NULL", tp);
    notify_self(5, 13);
    CHECK_RC(NARMA_Start(&later));
    junk(&st);
    CHECK(test_until_done(&later, &st) > 0, "[%s] the notification went to the freed request", tp);
    check_status(&st, 0, 13, 5, "after freeing an active request");
    CHECK_RC(NARMA_Request_free(&later));
}

static void test_arrays(void)
{
    NARMA_Request inact, act;
    MPI_Status st, sts[3];
    int index, flag, outcount, idx[3];

    CHECK_RC(NARMA_Notify_init(win, 0, 14, 1, &inact));
    CHECK_RC(NARMA_Notify_init(win, 0, 15, 1, &act));

    unit_phase("arrays: only NULL and inactive requests -> MPI's 'nothing to wait for' results");
    NARMA_Request a[3] = {NARMA_REQUEST_NULL, inact, NARMA_REQUEST_NULL};
    junk(&st);
    index = -5;
    flag = -5;
    CHECK_RC(NARMA_Testany(3, a, &index, &flag, &st));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "[%s] Testany: flag %d index %d", tp, flag, index);
    check_empty(&st, "Testany");
    junk(&st);
    index = -5;
    CHECK_RC(NARMA_Waitany(3, a, &index, &st));
    CHECK(index == MPI_UNDEFINED, "[%s] Waitany: index %d", tp, index);
    check_empty(&st, "Waitany");
    for (int i = 0; i < 3; i++)
        junk(&sts[i]);
    flag = -5;
    CHECK_RC(NARMA_Testall(3, a, &flag, sts));
    CHECK(flag == 1, "[%s] Testall: flag %d", tp, flag);
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "Testall");
    for (int i = 0; i < 3; i++)
        junk(&sts[i]);
    CHECK_RC(NARMA_Waitall(3, a, sts));
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "Waitall");
    outcount = -5;
    CHECK_RC(NARMA_Testsome(3, a, &outcount, idx, sts));
    CHECK(outcount == MPI_UNDEFINED, "[%s] Testsome: outcount %d", tp, outcount);
    outcount = -5;
    CHECK_RC(NARMA_Waitsome(3, a, &outcount, idx, sts));
    CHECK(outcount == MPI_UNDEFINED, "[%s] Waitsome: outcount %d", tp, outcount);
    CHECK(a[0] == NARMA_REQUEST_NULL && a[1] == inact && a[2] == NARMA_REQUEST_NULL,
          "[%s] the array is left as it was", tp);

    unit_phase("arrays: empty arrays");
    index = -5;
    flag = -5;
    CHECK_RC(NARMA_Testany(0, NULL, &index, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "[%s] Testany(0): flag %d index %d", tp, flag,
          index);
    CHECK_RC(NARMA_Waitall(0, NULL, sts));
    flag = -5;
    CHECK_RC(NARMA_Testall(0, NULL, &flag, sts));
    CHECK(flag == 1, "[%s] Testall(0): flag %d", tp, flag);

    unit_phase("arrays: one active request among NULL and inactive ones");
    CHECK_RC(NARMA_Start(&act));
    NARMA_Request b[3] = {NARMA_REQUEST_NULL, inact, act};
    index = -5;
    flag = -5;
    CHECK_RC(NARMA_Testany(3, b, &index, &flag, &st));
    CHECK(flag == 0 && index == MPI_UNDEFINED, "[%s] Testany before arrival: flag %d index %d", tp,
          flag, index);
    flag = -5;
    CHECK_RC(NARMA_Testall(3, b, &flag, sts));
    CHECK(flag == 0, "[%s] Testall before arrival: flag %d", tp, flag);
    outcount = -5;
    CHECK_RC(NARMA_Testsome(3, b, &outcount, idx, sts));
    CHECK(outcount == 0, "[%s] Testsome before arrival: outcount %d", tp, outcount);
    notify_self(6, 15);
    flag = 0;
    for (int i = 0; i < POLL_LIMIT && !flag; i++)
        CHECK_RC(NARMA_Testany(3, b, &index, &flag, &st));
    CHECK(flag == 1 && index == 2, "[%s] Testany after arrival: flag %d index %d", tp, flag, index);
    check_status(&st, 0, 15, 6, "Testany");
    CHECK(b[2] == act && state(act) == NARMAI_REQ_INACTIVE,
          "[%s] the persistent request stays, inactive", tp);

    unit_phase("arrays: Waitall over NULL, inactive and a completed active request");
    CHECK_RC(NARMA_Start(&act));
    notify_self(7, 15);
    for (int i = 0; i < 3; i++)
        junk(&sts[i]);
    CHECK_RC(NARMA_Waitall(3, b, sts));
    check_empty(&sts[0], "Waitall NULL entry");
    check_empty(&sts[1], "Waitall inactive entry");
    check_status(&sts[2], 0, 15, 7, "Waitall active entry");

    unit_phase("arrays: Waitsome reports the completed one by index");
    CHECK_RC(NARMA_Start(&act));
    notify_self(9, 15);
    outcount = -5;
    CHECK_RC(NARMA_Waitsome(3, b, &outcount, idx, sts));
    CHECK(outcount == 1 && idx[0] == 2, "[%s] Waitsome: outcount %d index %d", tp, outcount,
          idx[0]);
    if (outcount == 1) check_status(&sts[0], 0, 15, 9, "Waitsome");

    CHECK_RC(NARMA_Request_free(&inact));
    CHECK_RC(NARMA_Request_free(&act));
}

static void test_win_free(void)
{
    NARMA_Request req;
    unit_phase("win_free: a window with a live notification request cannot be freed");
    CHECK_RC(NARMA_Notify_init(win, 0, 1, 1, &req));
    NARMA_Win w = win;
    int rc = NARMA_Win_free(&w);
    CHECK(rc == NARMA_ERR_PENDING && w == win, "[%s] Win_free returned %d", tp, rc);
    CHECK_RC(NARMA_Request_free(&req));
}

static void run_on(NARMA_Win w)
{
    win = w;
    tp = NARMA_Win_get_transport(w);
    if (tp == NULL) tp = "?";
    test_lifecycle();
    test_null();
    test_start_complete();
    test_free_active();
    test_arrays();
    test_win_free();
    CHECK_RC(NARMA_Win_free(&win));
    printf("requests: checked on a window with the %s transport\n", tp);
}

int main(int argc, char **argv)
{
    unit_begin(30);
    test_error_strings();

    MPI_Init(&argc, &argv);
    unit_phase("setup: windows on MPI_COMM_SELF");
    NARMA_Win w = NARMA_WIN_NULL;
    void *base = NULL;
    CHECK_RC(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_SELF, &base, &w));
    if (w != NARMA_WIN_NULL) run_on(w);

    static unsigned char mem[64];
    w = NARMA_WIN_NULL;
    CHECK_RC(NARMA_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_SELF, &w));
    if (w != NARMA_WIN_NULL) run_on(w);

    MPI_Finalize();
    return unit_done("test_requests");
}
