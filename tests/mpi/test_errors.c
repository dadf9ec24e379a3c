/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Every error class is reported where it applies, and the window stays
 * usable after each error (a correct put afterwards still works, and an
 * erroneous notified access delivers no notification):
 *   NARMA_ERR_DISP          access outside the target's window
 *   NARMA_ERR_RANK          rank outside the window's group
 *   NARMA_ERR_TAG           notified-access tag < 0 or > NARMA_TAG_UB, or a
 *                           wildcard (wildcards only in Notify_init)
 *   NARMA_ERR_COUNT         negative count
 *   NARMA_ERR_TYPE          MPI_DATATYPE_NULL, signature mismatch,
 *                           Compare_and_swap on floating point
 *   NARMA_ERR_OP            op not allowed (MAXLOC on MPI_INT for
 *                           Fetch_and_op, user-defined ops)
 *   NARMA_ERR_RMA_SYNC      call not allowed in the epoch state
 *   NARMA_ERR_RMA_CONFLICT  lock held twice, lock inside lock_all
 *   NARMA_ERR_REQUEST       Start on an active or NULL request, free of NULL; Startall
 *                           with such an entry or one listed twice (starts none)
 *   NARMA_ERR_WIN           NARMA_WIN_NULL
 *   NARMA_ERR_PENDING       Win_free with an epoch or active request
 *   NARMA_ERR_KEYVAL, NARMA_ERR_ATTACH, NARMA_ERR_ARG (an assert with bits that are no
 *                           MPI_MODE_* value); Win_free_keyval of a keyval narma did not make
 *                           and Type_free of a predefined type are refused, not passed to MPI
 * Test/Wait on NARMA_REQUEST_NULL or an inactive persistent request follow
 * MPI: success, flag = 1, empty status.
 */
#include "common.h"

#define WN 16

static int rank, size, right, left;
static int *base;
static NARMA_Win win;

/* Collective: a correct put to the right neighbour still works. */
static void still_usable(const char *after)
{
    static int round = 0;
    round++;
    MPI_Barrier(MPI_COMM_WORLD);
    int v = round * 100 + rank;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT, right, WN - 1, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(base[WN - 1] == round * 100 + left, "window unusable after %s: got %d, expected %d",
          after, base[WN - 1], round * 100 + left);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_empty_status(const MPI_Status *st, const char *what)
{
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
          "%s: status (source %d, tag %d) is not empty", what, st->MPI_SOURCE, st->MPI_TAG);
    CHECK(test_byte_count(st) == 0, "%s: empty status has count %d", what, test_byte_count(st));
}

static int user_fn_called;
static void user_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)dt;
    user_fn_called++;
}

static void no_epoch(void)
{
    int v = 1, g;
    NARMA_Request r = NARMA_REQUEST_NULL;
    test_phase("RMA calls outside any epoch: NARMA_ERR_RMA_SYNC");
    CHECK_ERR(NARMA_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Get(&g, 1, MPI_INT, right, 0, 1, MPI_INT, win), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Accumulate(&v, 1, MPI_INT, right, 0, 1, MPI_INT, NARMA_SUM, win),
              NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Fetch_and_op(&v, &g, MPI_INT, right, 0, NARMA_SUM, win), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Rput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r), NARMA_ERR_RMA_SYNC);
    CHECK(r == NARMA_REQUEST_NULL, "a failed Rput produced a request");
    /* flushes are accepted with no epoch open (they complete notified accesses, which form
     * their own epochs: the paper's Listing 1 flushes outside any epoch) */
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK_RC(NARMA_Win_flush_all(win));
    CHECK_ERR(NARMA_Win_unlock(right, win), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Win_unlock_all(win), NARMA_ERR_RMA_SYNC);
    test_phase("PSCW calls without their opening call: NARMA_ERR_RMA_SYNC");
    CHECK_ERR(NARMA_Win_complete(win), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Win_wait(win), NARMA_ERR_RMA_SYNC);
    int flag = 1;
    CHECK_ERR(NARMA_Win_test(win, &flag), NARMA_ERR_RMA_SYNC);

    test_phase("asserts holding bits that are no MPI_MODE_* value: NARMA_ERR_ARG, no epoch");
    {
        /* With MPI_MODE_NOCHECK among them: taken as asserted, it would skip the matching. */
        const int junk = 0x40000000 | MPI_MODE_NOCHECK;
        MPI_Group world, peer;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, 1, &right, &peer);
        CHECK_ERR(NARMA_Win_fence(junk, win), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_ifence(junk, win, &r), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_post(peer, junk, win), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_ipost(peer, junk, win, &r), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_start(peer, junk, win), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_istart(peer, junk, win, &r), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_lock(MPI_LOCK_SHARED, right, junk, win), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_ilock(MPI_LOCK_EXCLUSIVE, right, junk, win, &r), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_lock(MPI_LOCK_SHARED, MPI_PROC_NULL, junk, win), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_lock(12345, MPI_PROC_NULL, 0, win), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_lock_all(junk, win), NARMA_ERR_ARG);
        CHECK_ERR(NARMA_Win_ilock_all(junk, win, &r), NARMA_ERR_ARG);
        CHECK(r == NARMA_REQUEST_NULL, "a refused epoch call made a request");
        /* Nothing was opened: closing calls still find no epoch. */
        CHECK_ERR(NARMA_Win_complete(win), NARMA_ERR_RMA_SYNC);
        CHECK_ERR(NARMA_Win_wait(win), NARMA_ERR_RMA_SYNC);
        CHECK_ERR(NARMA_Win_unlock(right, win), NARMA_ERR_RMA_SYNC);
        CHECK_ERR(NARMA_Win_unlock_all(win), NARMA_ERR_RMA_SYNC);
        MPI_Group_free(&peer);
        MPI_Group_free(&world);
    }
    still_usable("epoch-state errors");
}

static void argument_errors(void)
{
    int v[4] = {1, 2, 3, 4}, g[4];
    double d = 1.0, dr;
    float f = 1.0f, fr;
    CHECK_RC(NARMA_Win_lock_all(0, win));

    test_phase("displacement outside the target window: NARMA_ERR_DISP");
    CHECK_RC(NARMA_Put(v, 1, MPI_INT, right, WN - 2, 1, MPI_INT, win)); /* last-but-one fits */
    CHECK_ERR(NARMA_Put(v, 1, MPI_INT, right, WN, 1, MPI_INT, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Put(v, 2, MPI_INT, right, WN - 1, 2, MPI_INT, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Get(g, 4, MPI_INT, right, WN - 3, 4, MPI_INT, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Accumulate(v, 1, MPI_INT, right, 1000, 1, MPI_INT, NARMA_SUM, win),
              NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Fetch_and_op(v, g, MPI_INT, right, WN, NARMA_SUM, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_INT, right, WN, 1, MPI_INT, win, 1), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Get_notify(g, 1, MPI_INT, right, WN + 7, 1, MPI_INT, win, 1), NARMA_ERR_DISP);

    test_phase("rank outside the group: NARMA_ERR_RANK");
    CHECK_ERR(NARMA_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Put(v, 1, MPI_INT, -7, 0, 1, MPI_INT, win), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Get(g, 1, MPI_INT, size + 3, 0, 1, MPI_INT, win), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_INT, size, 0, 1, MPI_INT, win, 1), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Compare_and_swap(v, g, g + 1, MPI_INT, size, 0, win), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Win_flush(size, win), NARMA_ERR_RANK);

    test_phase("negative counts: NARMA_ERR_COUNT");
    CHECK_ERR(NARMA_Put(v, -1, MPI_INT, right, 0, -1, MPI_INT, win), NARMA_ERR_COUNT);
    CHECK_ERR(NARMA_Get(g, 1, MPI_INT, right, 0, -2, MPI_INT, win), NARMA_ERR_COUNT);
    CHECK_ERR(NARMA_Put_notify(v, -1, MPI_INT, right, 0, -1, MPI_INT, win, 1), NARMA_ERR_COUNT);

    test_phase("datatypes: NARMA_ERR_TYPE");
    CHECK_ERR(NARMA_Put(v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Put(v, 1, MPI_INT, right, 0, 1, MPI_DATATYPE_NULL, win), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win, 1),
              NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Compare_and_swap(&d, &d, &dr, MPI_DOUBLE, right, 0, win), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Compare_and_swap(&f, &f, &fr, MPI_FLOAT, right, 0, win), NARMA_ERR_TYPE);

    test_phase("operations: NARMA_ERR_OP");
    CHECK_ERR(NARMA_Fetch_and_op(v, g, MPI_INT, right, 0, NARMA_MAXLOC, win), NARMA_ERR_OP);
    MPI_Op uop;
    MPI_Op_create(user_op, 1, &uop);
    CHECK_ERR(NARMA_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, uop, win), NARMA_ERR_OP);
    CHECK(user_fn_called == 0, "a rejected user op was called");
    MPI_Op_free(&uop);
    int rc = NARMA_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, NARMA_BAND, win);
    CHECK(rc == NARMA_ERR_OP || rc == NARMA_ERR_TYPE,
          "BAND on MPI_DOUBLE returned %d (%s), expected NARMA_ERR_OP or NARMA_ERR_TYPE", rc,
          NARMA_Strerror(rc));

    /* MPI allows NO_OP only in Get_accumulate and Fetch_and_op: narma rejects it in every
     * accumulate that does not fetch, on every transport, before MPI sees it */
    CHECK_ERR(NARMA_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, NARMA_NO_OP, win),
              NARMA_ERR_OP);
    CHECK_ERR(NARMA_Accumulate_notify(v, 1, MPI_INT, right, 0, 1, MPI_INT, NARMA_NO_OP, win, 1),
              NARMA_ERR_OP);

    test_phase("notified-access tags: NARMA_ERR_TAG");
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, -1), NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, NARMA_TAG_UB + 1),
              NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, NARMA_ANY_TAG),
              NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Get_notify(g, 1, MPI_INT, right, 0, 1, MPI_INT, win, -3), NARMA_ERR_TAG);
    NARMA_Request r = NARMA_REQUEST_NULL;
    CHECK_ERR(NARMA_Rput_notify(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r, -1), NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Accumulate_notify(v, 1, MPI_INT, right, 0, 1, MPI_INT, NARMA_SUM, win,
                                      NARMA_TAG_UB + 1),
              NARMA_ERR_TAG);

    test_phase("conflicting epochs inside lock_all: NARMA_ERR_RMA_CONFLICT");
    CHECK_ERR(NARMA_Win_lock_all(0, win), NARMA_ERR_RMA_CONFLICT);
    CHECK_ERR(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win), NARMA_ERR_RMA_CONFLICT);

    CHECK_RC(NARMA_Win_unlock_all(win));
    still_usable("argument errors in a lock_all epoch");

    test_phase("argument errors outside any epoch (notified accesses)");
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_INT, right, WN, 1, MPI_INT, win, 2), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_INT, -7, 0, 1, MPI_INT, win, 2), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, -7), NARMA_ERR_TAG);
    still_usable("notified-access argument errors");
}

static void lock_errors(void)
{
    test_phase("lock errors: twice, unlock of an unlocked rank");
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, right, 0, win));
    CHECK_ERR(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, right, 0, win), NARMA_ERR_RMA_CONFLICT);
    CHECK_ERR(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win), NARMA_ERR_RMA_CONFLICT);
    CHECK_ERR(NARMA_Win_lock_all(0, win), NARMA_ERR_RMA_CONFLICT);
    if (size > 2) CHECK_ERR(NARMA_Win_unlock(left, win), NARMA_ERR_RMA_SYNC);
    int v = 5;
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win)); /* the lock still works */
    CHECK_RC(NARMA_Win_unlock(right, win));
    CHECK_ERR(NARMA_Win_unlock(right, win), NARMA_ERR_RMA_SYNC);
    still_usable("lock errors");
}

static void request_errors(void)
{
    NARMA_Request r = NARMA_REQUEST_NULL, bad = NARMA_REQUEST_NULL;
    MPI_Status st;
    int flag;
    test_phase("Notify_init argument errors");
    CHECK_ERR(NARMA_Notify_init(win, rank, -5, 1, &bad), NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Notify_init(win, rank, NARMA_TAG_UB + 1, 1, &bad), NARMA_ERR_TAG);
    CHECK_ERR(NARMA_Notify_init(win, size, 1, 1, &bad), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Notify_init(win, -7, 1, 1, &bad), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Notify_init(win, rank, 1, -1, &bad), NARMA_ERR_COUNT);
    CHECK_ERR(NARMA_Notify_init(NARMA_WIN_NULL, rank, 1, 1, &bad), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Notify_init(win, rank, 1, 1, NULL), NARMA_ERR_ARG);
    CHECK(bad == NARMA_REQUEST_NULL, "a failed Notify_init produced a request");

    test_phase("Test/Wait on an inactive persistent request: flag 1, empty status");
    CHECK_RC(NARMA_Notify_init(win, rank, 9, 1, &r));
    flag = 0;
    CHECK_RC(NARMA_Test(&r, &flag, &st));
    CHECK(flag, "Test on a never-started request gave flag 0");
    check_empty_status(&st, "Test on an inactive request");
    CHECK_RC(NARMA_Wait(&r, &st));
    check_empty_status(&st, "Wait on an inactive request");
    CHECK(r != NARMA_REQUEST_NULL, "Test/Wait freed an inactive persistent request");

    test_phase("Start on an active request: NARMA_ERR_REQUEST, request still works");
    CHECK_RC(NARMA_Start(&r));
    CHECK_ERR(NARMA_Start(&r), NARMA_ERR_REQUEST);
    CHECK_ERR(NARMA_Startall(1, &r), NARMA_ERR_REQUEST);
    int v = 77;
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT, rank, 2, 1, MPI_INT, win, 9));
    CHECK_RC(NARMA_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == 9, "status (%d,%d)", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(base[2] == 77, "notified put to self wrote %d", base[2]);

    test_phase("Startall refused as a whole: a bad entry or one listed twice starts nothing");
    {
        NARMA_Request put, active, seen, arr[2];
        int w42 = 42;
        base[3] = 0;
        CHECK_RC(NARMA_Put_notify_init(&w42, 1, MPI_INT, rank, 3, 1, MPI_INT, win, 55, &put));
        CHECK_RC(NARMA_Notify_init(win, rank, 56, 1, &active));
        CHECK_RC(NARMA_Start(&active));
        arr[0] = put;
        arr[1] = active;
        CHECK_ERR(NARMA_Startall(2, arr), NARMA_ERR_REQUEST);
        arr[1] = put;
        CHECK_ERR(NARMA_Startall(2, arr), NARMA_ERR_REQUEST);
        arr[1] = NARMA_REQUEST_NULL;
        CHECK_ERR(NARMA_Startall(2, arr), NARMA_ERR_REQUEST);
        CHECK_RC(NARMA_Notify_init(win, rank, 55, 1, &seen));
        CHECK_RC(NARMA_Start(&seen));
        for (int i = 0; i < 100; i++)
            CHECK_RC(NARMA_Progress());
        flag = 1;
        CHECK_RC(NARMA_Test(&seen, &flag, &st));
        CHECK(!flag && base[3] == 0, "a refused Startall issued its put (flag %d, value %d)", flag,
              base[3]);
        CHECK_RC(NARMA_Startall(1, &put)); /* not left marked by the refusals */
        CHECK_RC(NARMA_Wait(&put, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&seen, &st));
        CHECK(base[3] == 42 && st.MPI_TAG == 55, "the put after the refusals: %d, tag %d", base[3],
              st.MPI_TAG);
        CHECK_RC(NARMA_Put_notify(&w42, 1, MPI_INT, rank, 3, 1, MPI_INT, win, 56));
        CHECK_RC(NARMA_Wait(&active, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Request_free(&put));
        CHECK_RC(NARMA_Request_free(&active));
        CHECK_RC(NARMA_Request_free(&seen));
    }

    test_phase("freed request: handle is NULL; Start fails, Test/Wait follow MPI");
    CHECK_RC(NARMA_Request_free(&r));
    CHECK(r == NARMA_REQUEST_NULL, "Request_free did not reset the handle");
    CHECK_ERR(NARMA_Start(&r), NARMA_ERR_REQUEST);
    flag = 0;
    CHECK_RC(NARMA_Test(&r, &flag, &st));
    CHECK(flag, "Test on NARMA_REQUEST_NULL gave flag 0");
    check_empty_status(&st, "Test on NARMA_REQUEST_NULL");
    CHECK_RC(NARMA_Wait(&r, &st));
    check_empty_status(&st, "Wait on NARMA_REQUEST_NULL");
    CHECK_ERR(NARMA_Request_free(&r), NARMA_ERR_REQUEST);
    CHECK_ERR(NARMA_Test(&r, NULL, &st), NARMA_ERR_ARG);

    test_phase("Win_free with pending work: NARMA_ERR_PENDING, frees nothing");
    {
        int *b2;
        NARMA_Win w2;
        CHECK_RC(NARMA_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                    &b2, &w2));
        CHECK_RC(NARMA_Notify_init(w2, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &r));
        CHECK_RC(NARMA_Start(&r));
        CHECK_ERR(NARMA_Win_free(&w2), NARMA_ERR_PENDING);
        CHECK(w2 != NARMA_WIN_NULL, "a failed Win_free reset the handle");
        CHECK_RC(NARMA_Request_free(&r));
        CHECK_RC(NARMA_Win_lock_all(0, w2));
        CHECK_ERR(NARMA_Win_free(&w2), NARMA_ERR_PENDING);
        CHECK_RC(NARMA_Win_unlock_all(w2));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&w2));
    }
    still_usable("request errors");
}

static void handle_errors(void)
{
    int v = 1, flag;
    void *val;
    test_phase("NARMA_WIN_NULL: NARMA_ERR_WIN");
    NARMA_Win nw = NARMA_WIN_NULL;
    CHECK_ERR(NARMA_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, nw), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Put_notify(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, nw, 1), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_fence(0, nw), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_lock_all(0, nw), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_get_attr(nw, NARMA_WIN_BASE, &val, &flag), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_free(&nw), NARMA_ERR_WIN);

    test_phase("invalid keyval: NARMA_ERR_KEYVAL");
    CHECK_ERR(NARMA_Win_get_attr(win, MPI_KEYVAL_INVALID, &val, &flag), NARMA_ERR_KEYVAL);
    CHECK_ERR(NARMA_Win_set_attr(win, MPI_KEYVAL_INVALID, NULL), NARMA_ERR_KEYVAL);
    {
        /* Refused before MPI sees them (MPI reports a bad keyval or a predefined type to its
         * handler of no object: fatal by default, the job aborted). */
        int kv = 12345, made;
        CHECK_ERR(NARMA_Win_free_keyval(&kv), NARMA_ERR_KEYVAL);
        kv = NARMA_WIN_BASE;
        CHECK_ERR(NARMA_Win_free_keyval(&kv), NARMA_ERR_KEYVAL);
        CHECK_RC(
            NARMA_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &made, NULL));
        kv = made;
        CHECK_RC(NARMA_Win_free_keyval(&made));
        CHECK_ERR(NARMA_Win_free_keyval(&kv), NARMA_ERR_KEYVAL); /* freed already */
        /* Made by narma, freed by MPI, its number reused by narma: listed once. */
        CHECK_RC(
            NARMA_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &made, NULL));
        kv = made;
        CHECK_MPI(MPI_Win_free_keyval(&made));
        CHECK_RC(
            NARMA_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &made, NULL));
        kv = made; /* MPICH hands out the freed number again */
        CHECK_RC(NARMA_Win_free_keyval(&made));
        CHECK_ERR(NARMA_Win_free_keyval(&kv), NARMA_ERR_KEYVAL);
        MPI_Datatype t = MPI_INT;
        CHECK_ERR(NARMA_Type_free(&t), NARMA_ERR_TYPE);
        CHECK(t == MPI_INT, "a refused Type_free changed the handle");
    }

    test_phase("detach of memory never attached: NARMA_ERR_ATTACH");
    {
        NARMA_Win dw;
        CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
        int mem[4];
        CHECK_ERR(NARMA_Win_detach(dw, mem), NARMA_ERR_ATTACH);
        CHECK_RC(NARMA_Win_attach(dw, mem, sizeof mem));
        CHECK_RC(NARMA_Win_detach(dw, mem));
        CHECK_ERR(NARMA_Win_detach(dw, mem), NARMA_ERR_ATTACH);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&dw));
    }

    test_phase("error strings: never NULL, distinct for every class");
    for (int c = 0; c < NARMA_ERR_LASTCODE; c++) {
        const char *s = NARMA_Strerror(c);
        CHECK(s != NULL && s[0] != 0, "NARMA_Strerror(%d) is NULL or empty", c);
        for (int d = 0; d < c; d++)
            CHECK(strcmp(s, NARMA_Strerror(d)) != 0,
                  "classes %d and %d share the error string '%s'", d, c, s);
    }
    CHECK(NARMA_Strerror(NARMA_ERR_LASTCODE) != NULL, "NULL string for LASTCODE");
    CHECK(NARMA_Strerror(-1) != NULL && NARMA_Strerror(1 << 20) != NULL,
          "NULL string for an out-of-range code");
    still_usable("handle errors");
}

/* Run last so that a failure here does not hide the other checks. */
static void signature_mismatch(void)
{
    int v[2] = {1, 2};
    test_phase("type signature mismatch with equal byte sizes: NARMA_ERR_TYPE");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    /* 2 x MPI_INT and 1 x MPI_DOUBLE have the same size but different signatures */
    CHECK_ERR(NARMA_Put(v, 2, MPI_INT, right, 0, 1, MPI_DOUBLE, win), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Put_notify(v, 1, MPI_FLOAT, right, 0, 1, MPI_INT, win, 1), NARMA_ERR_TYPE);
    /* The result buffer's signature too (its size alone was compared). */
    float fres[2];
    CHECK_ERR(NARMA_Get_accumulate(v, 1, MPI_INT, fres, 1, MPI_FLOAT, right, 0, 1, MPI_INT,
                                   NARMA_SUM, win),
              NARMA_ERR_TYPE);
    CHECK_RC(NARMA_Win_unlock_all(win));
    still_usable("signature mismatch");
}

/* None of the erroneous notified accesses above may have left a notification anywhere. */
static void no_spurious_notifications(void)
{
    test_phase("no notification from any failed notified access");
    NARMA_Request any;
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &any));
    CHECK_RC(NARMA_Start(&any));
    MPI_Barrier(MPI_COMM_WORLD);
    test_expect_incomplete(&any, "catch-all request");
    CHECK_RC(NARMA_Request_free(&any));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_errors", 45);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    CHECK_RC(NARMA_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    for (int i = 0; i < WN; i++)
        base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    no_epoch();
    argument_errors();
    lock_errors();
    request_errors();
    handle_errors();
    no_spurious_notifications();
    signature_mismatch();

    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
