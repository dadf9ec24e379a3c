/* narma-test: np=1,2 transports=shm,mpi timeout=600 env=NARMA_TEST_POOL_NO_REUSE=1 */
/*
 * Out of memory at every allocation narma makes. A scenario of narma calls (windows of every
 * flavor, notified puts with their requests, persistent puts, a derived type, counters, PSCW,
 * nonblocking epochs, attributes and error handlers, then the frees) runs over and over; run
 * N fails the Nth allocation libnarma asks for (tests/failalloc, LD_PRELOAD'd: this program
 * re-executes itself with it), until a run makes fewer than N and nothing failed. Two sweeps:
 * every rank failing its Nth allocation, then rank 0 alone (the others must learn of it where
 * the call is collective, and not hang).
 *
 * Each call is checked. A local call that met the failed allocation returns NARMA_ERR_NO_MEM
 * and has done nothing: made again (nothing fails any more) it succeeds, and the data and
 * notifications that arrive are exactly those of one call (no notification is left over). A
 * collective call (creation, fence, NARMA_Win_set_num_notify, free) fails on every rank or on
 * none, and is then made again by all. A call may also succeed when narma could do without the
 * memory (a cache). The process goes on with the next N, so narma's state after a failure is
 * used again: a dangling pointer or a half-linked object shows up in later runs, in the data
 * checks or as a crash. A crash, a hang (watchdog), an error other than NARMA_ERR_NO_MEM where
 * only memory failed, a collective failing on some ranks only, or wrong data fails the test.
 *
 * Retired windows and requests are not reused (NARMA_TEST_POOL_NO_REUSE=1, set by ctest), so
 * theirs are allocations of every run, failed in turn like the others. What a process allocates
 * once (set-up, the datatype cache's keyval) is failed only when its index comes up in an early
 * run. NARMA_TEST_OOM_VERBOSE=1 prints every failed call, NARMA_TEST_FAILALLOC_TRACE=1 where
 * each failed allocation was asked for; NARMA_TEST_OOM_FROM / NARMA_TEST_OOM_TO (default 1 ..
 * until done) restrict N, for diagnosis.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>

#ifndef NARMA_FAILALLOC
#error "NARMA_FAILALLOC (the path of tests/failalloc's library) must be defined"
#endif

static void (*fa_arm)(long);
static void (*fa_arm_all)(int);
static long (*fa_count)(void);
static long (*fa_failed)(void);

static int rank, size, right, left;
static long run_n; /* the N of this run */
static int asym;   /* sweep 2: rank 0 alone fails */
static long steps_failed, runs_done;

#define TAG   5
#define WORDS 64

/* A local call made once: when it met the failed allocation it returns NARMA_ERR_NO_MEM and
 * has done nothing; an error that no allocation explains fails the test. Its code. */
#define ONCE(call)                                                                           \
    __extension__({                                                                          \
        where(__LINE__, #call);                                                              \
        const long before_ = fa_failed();                                                    \
        const int rc_ = (call);                                                              \
        if (rc_ != NARMA_SUCCESS) local_failed(__LINE__, #call, rc_, fa_failed() > before_); \
        rc_;                                                                                 \
    })

/* A local call: ONCE, and when it failed the same call made again (nothing fails any more),
 * which must succeed. */
#define LOCAL(call)                                          \
    local_call(__LINE__, #call, __extension__({              \
                   int rc2_ = ONCE(call);                    \
                   if (rc2_ != NARMA_SUCCESS) rc2_ = (call); \
                   rc2_;                                     \
               }))

/* A collective call: when it fails on one rank it fails on every rank (narma agrees on it),
 * with NARMA_ERR_NO_MEM where the allocation failed; then every rank makes it again (a rank
 * may meet its own failed allocation in the second call: each rank fails one at most). */
#define COLL(call)                                                                                \
    __extension__({                                                                               \
        where(__LINE__, #call);                                                                   \
        int rc_;                                                                                  \
        for (int try_ = 0;; try_++) {                                                             \
            const long before_ = fa_failed();                                                     \
            rc_ = (call);                                                                         \
            if (!coll_failed(__LINE__, #call, rc_, fa_failed() > before_) || try_ == size) break; \
        }                                                                                         \
        local_call(__LINE__, #call, rc_);                                                         \
    })

/* What the watchdog names: the run and the call under way. */
static void where(int line, const char *call)
{
    snprintf(test_detail, sizeof test_detail, "run %ld%s, line %d: %.160s", run_n,
             asym ? " (rank 0 only)" : "", line, call);
}

static int verbose; /* NARMA_TEST_OOM_VERBOSE=1: print every failed call */

static void local_failed(int line, const char *what, int rc, int hit)
{
    steps_failed++;
    if (verbose)
        printf("# rank %d run %ld%s, line %d: %s returned %d (%s)\n", rank, run_n,
               asym ? " (rank 0 only)" : "", line, what, rc, NARMA_Strerror(rc));
    CHECK(hit && rc == NARMA_ERR_NO_MEM, "run %ld%s, line %d: %s returned %d (%s)%s", run_n,
          asym ? " (rank 0 only)" : "", line, what, rc, NARMA_Strerror(rc),
          hit ? ", not NARMA_ERR_NO_MEM, when an allocation failed" : " with no allocation failed");
}

/* The retry (or the first call) must succeed. */
static int local_call(int line, const char *what, int rc)
{
    CHECK(rc == NARMA_SUCCESS, "run %ld%s, line %d: %s returned %d (%s) with nothing failing",
          run_n, asym ? " (rank 0 only)" : "", line, what, rc, NARMA_Strerror(rc));
    return rc;
}

static int coll_failed(int line, const char *what, int rc, int hit)
{
    const int failed = rc != NARMA_SUCCESS;
    int nfailed = 0;
    MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (nfailed == 0) return 0;
    steps_failed++;
    if (verbose)
        printf("# rank %d run %ld%s, line %d: %s returned %d (%s) on %d rank(s)\n", rank, run_n,
               asym ? " (rank 0 only)" : "", line, what, rc, NARMA_Strerror(rc), nfailed);
    CHECK(nfailed == size, "run %ld%s, line %d: %s failed on %d rank(s) of %d (here: %d, %s)",
          run_n, asym ? " (rank 0 only)" : "", line, what, nfailed, size, rc, NARMA_Strerror(rc));
    CHECK(rc != NARMA_ERR_INTERN && (!hit || rc == NARMA_ERR_NO_MEM),
          "run %ld%s, line %d: %s returned %d (%s)%s", run_n, asym ? " (rank 0 only)" : "", line,
          what, rc, NARMA_Strerror(rc),
          hit ? ", not NARMA_ERR_NO_MEM, when an allocation failed" : "");
    return 1;
}

static void errh_fn(NARMA_Win *win, int *code, ...)
{
    (void)win;
    (void)code;
}

static int64_t val(int origin, int i)
{
    return (int64_t)origin << 32 | (int64_t)(run_n & 0xffffff) << 8 | i;
}

/* After a barrier every origin's notified accesses have arrived: none may be left over on w
 * (a failed call that notified anyway, or a retried one that notified twice). */
static void no_leftover(NARMA_Win w, const char *which)
{
    NARMA_Request any = NARMA_REQUEST_NULL;
    MPI_Status st;
    int flag = 0;
    LOCAL(NARMA_Notify_init(w, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &any));
    LOCAL(NARMA_Start(&any));
    for (int p = 0; p < 100 && !flag; p++)
        LOCAL(NARMA_Test(&any, &flag, &st));
    CHECK(!flag,
          "run %ld: a notification (source %d, tag %d) was left over on the %s window (a failed "
          "call that notified anyway?)",
          run_n, st.MPI_SOURCE, st.MPI_TAG, which);
    CHECK_RC(NARMA_Request_free(&any));
}

/* One run of the scenario: every call succeeds in the end, every value arrives. */
static void scenario(void)
{
    int64_t *mem = NULL;
    int64_t *arr = calloc(WORDS, sizeof(int64_t)), *dyn = calloc(WORDS, sizeof(int64_t));
    int64_t src[WORDS], back[WORDS];
    NARMA_Win w1 = NARMA_WIN_NULL, w2 = NARMA_WIN_NULL, w3 = NARMA_WIN_NULL;
    NARMA_Request nreq = NARMA_REQUEST_NULL, preq = NARMA_REQUEST_NULL, rreq = NARMA_REQUEST_NULL,
                  ereq = NARMA_REQUEST_NULL;
    NARMA_Request two[2] = {NARMA_REQUEST_NULL, NARMA_REQUEST_NULL};
    NARMA_Errhandler eh = NARMA_ERRHANDLER_NULL;
    MPI_Datatype vec = MPI_DATATYPE_NULL;
    MPI_Group world = MPI_GROUP_NULL, peers = MPI_GROUP_NULL;
    int keyval = MPI_KEYVAL_INVALID;
    MPI_Status st;
    CHECK(arr && dyn, "out of memory (test)");
    for (int i = 0; i < WORDS; i++)
        src[i] = val(rank, i);

    COLL(NARMA_Win_allocate(WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w1));
    memset(mem, 0, WORDS * 8); /* MPI gives no zeroed memory */
    mem[60] = val(rank, 60);
    MPI_Barrier(MPI_COMM_WORLD);
    COLL(NARMA_Win_create(arr, WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &w2));
    COLL(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w3));
    LOCAL(NARMA_Win_attach(w3, dyn, WORDS * 8));
    MPI_Aint my_addr, right_addr = 0;
    MPI_Get_address(dyn, &my_addr);
    MPI_Sendrecv(&my_addr, 1, MPI_AINT, left, 0, &right_addr, 1, MPI_AINT, right, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    /* Notified puts: words 0..7 to the right neighbour, matched there by a persistent request;
     * words 8..15 by a persistent notified put, 16..23 by Rput_notify. */
    LOCAL(NARMA_Notify_init(w1, left, TAG, 1, &nreq));
    LOCAL(NARMA_Win_lock_all(0, w1));
    LOCAL(NARMA_Put_notify(src, 8, MPI_INT64_T, right, 0, 8, MPI_INT64_T, w1, TAG));
    LOCAL(NARMA_Win_flush(right, w1));
    LOCAL(NARMA_Start(&nreq));
    LOCAL(NARMA_Wait(&nreq, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == TAG, "run %ld: notification from %d tag %d", run_n,
          st.MPI_SOURCE, st.MPI_TAG);
    LOCAL(NARMA_Put_notify_init(src + 8, 8, MPI_INT64_T, right, 8, 8, MPI_INT64_T, w1, TAG + 1,
                                &preq));
    LOCAL(NARMA_Start(&preq));
    LOCAL(NARMA_Wait(&preq, MPI_STATUS_IGNORE));
    LOCAL(
        NARMA_Rput_notify(src + 16, 8, MPI_INT64_T, right, 16, 8, MPI_INT64_T, w1, &rreq, TAG + 2));
    LOCAL(NARMA_Wait(&rreq, MPI_STATUS_IGNORE));
    /* Rget_notify of the right neighbour's word 60 (its own value, set below before the
     * barrier), Rget_accumulate_notify adding 1 to its word 61. */
    int64_t got = -1, fetched = -1, one_ = 1;
    LOCAL(NARMA_Rget_notify(&got, 1, MPI_INT64_T, right, 60, 1, MPI_INT64_T, w1, &rreq, TAG + 3));
    LOCAL(NARMA_Wait(&rreq, MPI_STATUS_IGNORE));
    LOCAL(NARMA_Rget_accumulate_notify(&one_, 1, MPI_INT64_T, &fetched, 1, MPI_INT64_T, right, 61,
                                       1, MPI_INT64_T, NARMA_SUM, w1, TAG + 4, &rreq));
    LOCAL(NARMA_Wait(&rreq, MPI_STATUS_IGNORE));
    LOCAL(NARMA_Win_flush_all(w1));
    LOCAL(NARMA_Win_unlock_all(w1));
    CHECK(got == val(right, 60), "run %ld: Rget_notify got %llx", run_n, (unsigned long long)got);
    CHECK(fetched == 0, "run %ld: Rget_accumulate_notify fetched %lld (an accumulate twice?)",
          run_n, (long long)fetched);
    NARMA_Request four[4] = {NARMA_REQUEST_NULL, NARMA_REQUEST_NULL, NARMA_REQUEST_NULL,
                             NARMA_REQUEST_NULL};
    LOCAL(NARMA_Notify_init(w1, left, TAG + 1, 1, &two[0]));
    LOCAL(NARMA_Notify_init(w1, NARMA_ANY_SOURCE, TAG + 2, 1, &two[1]));
    LOCAL(NARMA_Notify_init(w1, left, TAG + 3, 1, &four[0]));
    LOCAL(NARMA_Notify_init(w1, left, TAG + 4, 1, &four[1]));
    LOCAL(NARMA_Startall(2, two));
    LOCAL(NARMA_Waitall(2, two, MPI_STATUSES_IGNORE));
    LOCAL(NARMA_Startall(2, four));
    LOCAL(NARMA_Waitall(2, four, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 2; i++)
        LOCAL(NARMA_Request_free(&four[i]));
    CHECK(mem[61] == 1, "run %ld: word 61 is %lld after one Rget_accumulate_notify", run_n,
          (long long)mem[61]);
    MPI_Barrier(MPI_COMM_WORLD); /* every origin's puts are done: no notification is left */
    no_leftover(w1, "Win_allocate");
    for (int i = 0; i < 24; i++)
        CHECK(mem[i] == val(left, i), "run %ld: word %d of the notified puts is %llx", run_n, i,
              (unsigned long long)mem[i]);

    /* A derived type (flattened and cached), by fence, into the Win_create window. */
    CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT64_T, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    COLL(NARMA_Win_fence(0, w2));
    LOCAL(NARMA_Put(src, 1, vec, right, 0, 1, vec, w2));
    COLL(NARMA_Win_fence(0, w2));
    for (int i = 0; i < 8; i += 2)
        CHECK(arr[i] == val(left, i), "run %ld: word %d of the vector put is %llx", run_n, i,
              (unsigned long long)arr[i]);

    /* Persistent notified accesses on the Win_create window, never notified before: a
     * contiguous put (words 40..43), a derived type's put (24, 26, 28, 30) and an accumulate
     * (word 50), started by one Startall, which starts all or none (a retry of a Startall that
     * started some would find them active): on mpi the first start would make the records toward
     * the target, the second the description of the held copy of the type. */
    {
        NARMA_Request ps[3], pn = NARMA_REQUEST_NULL;
        int64_t inc = 1;
        LOCAL(NARMA_Put_notify_init(src + 40, 4, MPI_INT64_T, right, 40, 4, MPI_INT64_T, w2,
                                    TAG + 5, &ps[0]));
        LOCAL(NARMA_Put_notify_init(src + 24, 1, vec, right, 24, 1, vec, w2, TAG + 5, &ps[1]));
        LOCAL(NARMA_Accumulate_notify_init(&inc, 1, MPI_INT64_T, right, 50, 1, MPI_INT64_T,
                                           NARMA_SUM, w2, TAG + 5, &ps[2]));
        LOCAL(NARMA_Notify_init(w2, left, TAG + 5, 3, &pn));
        LOCAL(NARMA_Start(&pn));
        LOCAL(NARMA_Win_lock_all(0, w2));
        LOCAL(NARMA_Startall(3, ps));
        LOCAL(NARMA_Waitall(3, ps, MPI_STATUSES_IGNORE));
        LOCAL(NARMA_Win_unlock_all(w2));
        LOCAL(NARMA_Wait(&pn, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3; i++)
            LOCAL(NARMA_Request_free(&ps[i]));
        LOCAL(NARMA_Request_free(&pn));
        for (int i = 24; i < 31; i += 2)
            CHECK(arr[i] == val(left, i), "run %ld: word %d of the persistent vector put is %llx",
                  run_n, i, (unsigned long long)arr[i]);
        for (int i = 40; i < 44; i++)
            CHECK(arr[i] == val(left, i), "run %ld: word %d of the persistent put is %llx", run_n,
                  i, (unsigned long long)arr[i]);
        CHECK(arr[50] == 1, "run %ld: word 50 is %lld after one persistent accumulate", run_n,
              (long long)arr[50]);
        MPI_Barrier(MPI_COMM_WORLD); /* arr is read before the next access reaches it; every
                                      * start's notification has arrived: none is left over */
        no_leftover(w2, "Win_create");
    }

    /* PSCW with the neighbours, on the dynamic window. */
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int nb[2] = {left, right};
    CHECK_MPI(MPI_Group_incl(world, size > 1 ? 2 : 1, nb, &peers));
    LOCAL(NARMA_Win_post(peers, 0, w3));
    LOCAL(NARMA_Win_start(peers, 0, w3));
    LOCAL(NARMA_Put(src, 4, MPI_INT64_T, right, right_addr, 4, MPI_INT64_T, w3));
    LOCAL(NARMA_Win_complete(w3));
    LOCAL(NARMA_Win_wait(w3));
    for (int i = 0; i < 4; i++)
        CHECK(dyn[i] == val(left, i), "run %ld: word %d of the PSCW put is %llx", run_n, i,
              (unsigned long long)dyn[i]);

    /* The same by the nonblocking calls: ipost, istart, Put (words 4..7), icomplete, iwait. */
    NARMA_Request pr[4];
    LOCAL(NARMA_Win_ipost(peers, 0, w3, &pr[0]));
    LOCAL(NARMA_Win_istart(peers, 0, w3, &pr[1]));
    LOCAL(NARMA_Put(src + 4, 4, MPI_INT64_T, right, right_addr + 32, 4, MPI_INT64_T, w3));
    LOCAL(NARMA_Win_icomplete(w3, &pr[2]));
    LOCAL(NARMA_Win_iwait(w3, &pr[3]));
    LOCAL(NARMA_Waitall(4, pr, MPI_STATUSES_IGNORE));
    for (int i = 4; i < 8; i++)
        CHECK(dyn[i] == val(left, i), "run %ld: word %d of the nonblocking PSCW put is %llx", run_n,
              i, (unsigned long long)dyn[i]);

    /* ilock, Put (word 40 of the right neighbour's w1), iunlock. */
    NARMA_Request lr[2];
    LOCAL(NARMA_Win_ilock(MPI_LOCK_EXCLUSIVE, right, 0, w1, &lr[0]));
    LOCAL(NARMA_Put(src + 40, 1, MPI_INT64_T, right, 40, 1, MPI_INT64_T, w1));
    LOCAL(NARMA_Win_iunlock(right, w1, &lr[1]));
    LOCAL(NARMA_Waitall(2, lr, MPI_STATUSES_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[40] == val(left, 40), "run %ld: word 40 of the ilock put is %llx", run_n,
          (unsigned long long)mem[40]);

    /* Nonblocking epochs: ifence, Get, ifence; ilock_all, Fetch_and_op, iflush_all, iunlock_all. */
    LOCAL(NARMA_Win_ifence(0, w1, &ereq));
    /* A blocking fence while the first one is pending: it must take no memory, since a fence
     * failing on one rank would leave the others in its barrier. */
    COLL(NARMA_Win_fence(0, w1));
    LOCAL(NARMA_Wait(&ereq, MPI_STATUS_IGNORE));
    LOCAL(NARMA_Get(back, 8, MPI_INT64_T, right, 0, 8, MPI_INT64_T, w1));
    LOCAL(NARMA_Win_ifence(0, w1, &ereq));
    LOCAL(NARMA_Wait(&ereq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(back[i] == src[i], "run %ld: word %d got back is %llx", run_n, i,
              (unsigned long long)back[i]);
    /* A Put that cannot be recorded (the fence epoch an ifence opened, still pending) leaves
     * the epoch empty: not made again, the epoch gives way to a lock_all epoch that carries the
     * Put instead (a count left at one would refuse the lock_all), then the closing fences
     * pair on every rank. */
    {
        NARMA_Request fr[2];
        LOCAL(NARMA_Win_ifence(0, w1, &fr[0]));
        if (ONCE(NARMA_Put(src + 44, 1, MPI_INT64_T, right, 44, 1, MPI_INT64_T, w1))) {
            LOCAL(NARMA_Win_lock_all(0, w1));
            LOCAL(NARMA_Put(src + 44, 1, MPI_INT64_T, right, 44, 1, MPI_INT64_T, w1));
            LOCAL(NARMA_Win_unlock_all(w1));
        }
        LOCAL(NARMA_Win_ifence(MPI_MODE_NOSUCCEED, w1, &fr[1]));
        LOCAL(NARMA_Waitall(2, fr, MPI_STATUSES_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(mem[44] == val(left, 44), "run %ld: word 44 of the fence-or-lock put is %llx", run_n,
              (unsigned long long)mem[44]);
    }
    /* An accumulate issued at once (the fence epoch is ready) that the transport refuses for
     * memory (a strided origin is staged) leaves the epoch empty: not made again, the epoch
     * gives way to a lock_all epoch that carries it instead (a count taken before the issue
     * would refuse the lock_all). Words 52, 54, 56, 58 of src added to 52..55. */
    {
        COLL(NARMA_Win_fence(0, w1));
        if (ONCE(NARMA_Accumulate(src + 52, 1, vec, right, 52, 4, MPI_INT64_T, NARMA_SUM, w1))) {
            LOCAL(NARMA_Win_lock_all(0, w1));
            LOCAL(NARMA_Accumulate(src + 52, 1, vec, right, 52, 4, MPI_INT64_T, NARMA_SUM, w1));
            LOCAL(NARMA_Win_unlock_all(w1));
        }
        COLL(NARMA_Win_fence(MPI_MODE_NOSUCCEED, w1));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 4; i++)
            CHECK(mem[52 + i] == val(left, 52 + 2 * i),
                  "run %ld: word %d is %llx after one accumulate of %llx", run_n, 52 + i,
                  (unsigned long long)mem[52 + i], (unsigned long long)val(left, 52 + 2 * i));
    }
    /* An epoch-opening call that fails for memory has done nothing: the empty fence epoch the
     * last fence opened is still open (it gives way only to a call that succeeds), so the Put
     * goes there instead (refused if the failed call had closed it). Each passive opening in
     * turn; the PSCW openings below. */
    for (int k = 0; k < 4; k++) {
        static const char *const opening[4] = {"lock_all", "lock", "ilock", "ilock_all"};
        NARMA_Request lq = NARMA_REQUEST_NULL;
        COLL(NARMA_Win_fence(0, w1));
        const int rc = k == 0   ? ONCE(NARMA_Win_lock_all(0, w1))
                       : k == 1 ? ONCE(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w1))
                       : k == 2 ? ONCE(NARMA_Win_ilock(MPI_LOCK_EXCLUSIVE, right, 0, w1, &lq))
                                : ONCE(NARMA_Win_ilock_all(0, w1, &lq));
        LOCAL(NARMA_Put(src + 45 + k, 1, MPI_INT64_T, right, 45 + k, 1, MPI_INT64_T, w1));
        if (rc == NARMA_SUCCESS) {
            if (k == 0 || k == 3)
                LOCAL(NARMA_Win_unlock_all(w1));
            else
                LOCAL(NARMA_Win_unlock(right, w1));
            if (k >= 2) LOCAL(NARMA_Wait(&lq, MPI_STATUS_IGNORE));
        }
        COLL(NARMA_Win_fence(MPI_MODE_NOSUCCEED, w1));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(mem[45 + k] == val(left, 45 + k), "run %ld: word %d of the %s-or-fence put is %llx",
              run_n, 45 + k, opening[k], (unsigned long long)mem[45 + k]);
    }
    /* The same for the PSCW openings, with a group of this rank alone, so that no peer's
     * matching call depends on the one that may fail: istart (k = 0) or ipost (k = 1) first.
     * When it fails the Put goes to the right neighbour in the fence epoch (word 36 + k); when it
     * succeeds the other call follows and the rank puts its own word 38 + k to itself. */
    for (int k = 0; k < 2; k++) {
        MPI_Group self = MPI_GROUP_NULL;
        NARMA_Request q[2] = {NARMA_REQUEST_NULL, NARMA_REQUEST_NULL}, c[2];
        CHECK_MPI(MPI_Group_incl(world, 1, &rank, &self));
        COLL(NARMA_Win_fence(0, w1));
        const int rc = k == 0 ? ONCE(NARMA_Win_istart(self, 0, w1, &q[0]))
                              : ONCE(NARMA_Win_ipost(self, 0, w1, &q[0]));
        if (rc != NARMA_SUCCESS) {
            LOCAL(NARMA_Put(src + 36 + k, 1, MPI_INT64_T, right, 36 + k, 1, MPI_INT64_T, w1));
        } else {
            if (k == 0)
                LOCAL(NARMA_Win_ipost(self, 0, w1, &q[1]));
            else
                LOCAL(NARMA_Win_istart(self, 0, w1, &q[1]));
            LOCAL(NARMA_Put(src + 38 + k, 1, MPI_INT64_T, rank, 38 + k, 1, MPI_INT64_T, w1));
            LOCAL(NARMA_Win_icomplete(w1, &c[0]));
            LOCAL(NARMA_Win_iwait(w1, &c[1]));
            LOCAL(NARMA_Waitall(2, q, MPI_STATUSES_IGNORE));
            LOCAL(NARMA_Waitall(2, c, MPI_STATUSES_IGNORE));
        }
        COLL(NARMA_Win_fence(MPI_MODE_NOSUCCEED, w1));
        int failed = rc != NARMA_SUCCESS, left_failed = 0;
        MPI_Sendrecv(&failed, 1, MPI_INT, right, 0, &left_failed, 1, MPI_INT, left, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (left_failed)
            CHECK(mem[36 + k] == val(left, 36 + k), "run %ld: word %d of the fence put is %llx",
                  run_n, 36 + k, (unsigned long long)mem[36 + k]);
        if (!failed)
            CHECK(mem[38 + k] == val(rank, 38 + k), "run %ld: word %d of the PSCW put is %llx",
                  run_n, 38 + k, (unsigned long long)mem[38 + k]);
        CHECK_MPI(MPI_Group_free(&self));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int64_t one = 1, old = -1;
    LOCAL(NARMA_Win_ilock_all(0, w1, &ereq));
    LOCAL(NARMA_Wait(&ereq, MPI_STATUS_IGNORE));
    LOCAL(NARMA_Fetch_and_op(&one, &old, MPI_INT64_T, 0, WORDS - 1, NARMA_SUM, w1));
    LOCAL(NARMA_Win_iflush_all(w1, &ereq));
    LOCAL(NARMA_Wait(&ereq, MPI_STATUS_IGNORE));
    LOCAL(NARMA_Win_iunlock_all(w1, &ereq));
    LOCAL(NARMA_Wait(&ereq, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(mem[WORDS - 1] == size, "run %ld: the counter is %lld after %d fetch-and-adds", run_n,
              (long long)mem[WORDS - 1], size);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Counters (passive target). */
    COLL(NARMA_Win_set_num_notify(w1, MPI_INFO_NULL, 2));
    LOCAL(NARMA_Win_lock_all(0, w1));
    LOCAL(NARMA_Put_notify_idx(src, 2, MPI_INT64_T, right, 32, 2, MPI_INT64_T, 1, w1));
    LOCAL(NARMA_Rput_notify_idx(src, 2, MPI_INT64_T, right, 34, 2, MPI_INT64_T, 0, w1, &rreq));
    LOCAL(NARMA_Wait(&rreq, MPI_STATUS_IGNORE));
    LOCAL(NARMA_Win_unlock_all(w1));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int idx = 0; idx < 2; idx++) {
        MPI_Count value = -1;
        LOCAL(NARMA_Win_get_notify_value(w1, idx, &value));
        CHECK(value == 1, "run %ld: counter %d is %lld (one notified access each)", run_n, idx,
              (long long)value);
    }

    /* Attributes, names and error handlers. */
    LOCAL(NARMA_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &keyval, NULL));
    LOCAL(NARMA_Win_set_attr(w1, keyval, &one));
    LOCAL(NARMA_Win_set_name(w1, "oom window"));
    LOCAL(NARMA_Win_create_errhandler(errh_fn, &eh));
    LOCAL(NARMA_Win_set_errhandler(w2, eh));

    /* The frees (failing too). */
    LOCAL(NARMA_Request_free(&nreq));
    LOCAL(NARMA_Request_free(&preq));
    for (int i = 0; i < 2; i++)
        LOCAL(NARMA_Request_free(&two[i]));
    LOCAL(NARMA_Win_delete_attr(w1, keyval));
    LOCAL(NARMA_Win_free_keyval(&keyval));
    LOCAL(NARMA_Errhandler_free(&eh));
    LOCAL(NARMA_Type_free(&vec));
    CHECK_MPI(MPI_Group_free(&peers));
    CHECK_MPI(MPI_Group_free(&world));
    LOCAL(NARMA_Win_detach(w3, dyn));
    COLL(NARMA_Win_free(&w1));
    COLL(NARMA_Win_free(&w2));
    COLL(NARMA_Win_free(&w3));
    free(arr);
    free(dyn);
}

/* A shortage that lasts: notifications queued while every allocation of libnarma fails live
 * on the unexpected queue's reserve (8 entries, 24 bins); the next Start of a notification
 * request makes the reserve again, so each round may spend all of it (bins, unlike entries,
 * come back only with a sweep: without the remaking, the second round finds too few). Each
 * round every rank sends 8 notifications of 8 tags not used before (16 new bins: one for the
 * exact source and tag, one for the tag under any source) to its right neighbour, and
 * drains its own ring with every allocation failing (without the reserve, or with one spent
 * and not made again, narma would stop the job: a notification cannot be refused once the
 * ring gave it up); then one request takes all 8 (the last one's tag checked). */
static void uq_shortage(void)
{
    enum { NOTES = 8, ROUNDS = 5, TAG0 = 1000 };
    int64_t *mem = NULL;
    NARMA_Win w = NARMA_WIN_NULL;
    long failed = 0;
    CHECK_RC(NARMA_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
    CHECK_RC(NARMA_Win_lock_all(0, w));
    for (int round = 0; round < ROUNDS; round++) {
        snprintf(test_detail, sizeof test_detail, "round %d", round);
        for (int i = 0; i < NOTES; i++)
            CHECK_RC(NARMA_Put_notify(NULL, 0, MPI_BYTE, right, 0, 0, MPI_BYTE, w,
                                      TAG0 + round * NOTES + i));
        CHECK_RC(NARMA_Win_flush(right, w));
        MPI_Barrier(MPI_COMM_WORLD); /* every record is in its target's ring */
        NARMA_Request none = NARMA_REQUEST_NULL, all = NARMA_REQUEST_NULL;
        CHECK_RC(NARMA_Notify_init(w, left, 1, 1, &none)); /* tag 1: nobody sends it */
        CHECK_RC(NARMA_Start(&none));
        fa_arm_all(1);
        int flag = 0;
        for (int p = 0; p < 200; p++)
            CHECK_RC(NARMA_Test(&none, &flag, MPI_STATUS_IGNORE));
        failed += fa_failed();
        fa_arm_all(0);
        CHECK(!flag, "round %d: the request for tag 1 completed", round);
        CHECK_RC(NARMA_Request_free(&none));
        CHECK_RC(NARMA_Notify_init(w, left, NARMA_ANY_TAG, NOTES, &all));
        CHECK_RC(NARMA_Start(&all));
        MPI_Status st;
        CHECK_RC(NARMA_Wait(&all, &st));
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == TAG0 + round * NOTES + NOTES - 1,
              "round %d: the last of %d notifications is (%d, %d), not (%d, %d)", round, NOTES,
              st.MPI_SOURCE, st.MPI_TAG, left, TAG0 + round * NOTES + NOTES - 1);
        CHECK_RC(NARMA_Request_free(&all));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK_RC(NARMA_Win_unlock_all(w));
    CHECK_RC(NARMA_Win_free(&w));
    CHECK(failed >= ROUNDS,
          "only %ld allocations failed while the queue filled: the test "
          "no longer reaches the reserve",
          failed);
}

static void sweep(int asymmetric)
{
    asym = asymmetric;
    const long from = env_long("NARMA_TEST_OOM_FROM", 1), to = env_long("NARMA_TEST_OOM_TO", 0);
    long n = from, clean = 0, most = 0;
    for (;; n++) {
        run_n = n;
        snprintf(test_detail, sizeof test_detail, "run %ld%s", n, asym ? " (rank 0 only)" : "");
        fa_arm(!asym || rank == 0 ? n : 0);
        scenario();
        const long made = fa_count(), failed = fa_failed();
        fa_arm(0);
        runs_done++;
        if (n == from)
            CHECK(made > 0 || (asym && rank != 0),
                  "run %ld counted no allocation by libnarma: tests/failalloc sees none", n);
        if (made > most) most = made;
        /* Done after two runs in a row in which no rank failed an allocation (every rank made
         * fewer than n: how many depends a little on timing, e.g. unexpected notifications). */
        long any = 0;
        MPI_Allreduce(&failed, &any, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        clean = any == 0 ? clean + 1 : 0;
        if (clean == 2 || (to > 0 && n >= to)) {
            if (rank == 0)
                printf("# sweep %s: %ld runs, up to %ld allocations in libnarma per run\n",
                       asym ? "rank 0 alone" : "every rank", n - from + 1, most);
            break;
        }
    }
}

int main(int argc, char **argv)
{
    /* Re-execute with the failing allocator preloaded (before MPI starts). */
    if (dlsym(RTLD_DEFAULT, "failalloc_arm") == NULL) {
        const char *pre = getenv("LD_PRELOAD");
        char buf[4096];
        snprintf(buf, sizeof buf, "%s%s%s", NARMA_FAILALLOC, pre && *pre ? ":" : "",
                 pre ? pre : "");
        setenv("LD_PRELOAD", buf, 1);
        execv("/proc/self/exe", argv);
        fprintf(stderr, "FAIL test_oom: re-executing with LD_PRELOAD=%s failed\n", buf);
        return 1;
    }
    fa_arm = (void (*)(long))dlsym(RTLD_DEFAULT, "failalloc_arm");
    fa_arm_all = (void (*)(int))dlsym(RTLD_DEFAULT, "failalloc_arm_all");
    fa_count = (long (*)(void))dlsym(RTLD_DEFAULT, "failalloc_count");
    fa_failed = (long (*)(void))dlsym(RTLD_DEFAULT, "failalloc_failed");
    /* The watchdog fires 10 s before ctest's limit (600 s, or 900 s for the run across pretend
     * nodes), so a slow machine gets all of it and a hang is still named. */
    test_init(&argc, &argv, "test_oom", (int)env_long("NARMA_TEST_TIMEOUT", 600) - 10);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    CHECK(fa_count && fa_failed && fa_arm_all, "tests/failalloc is incomplete");
    verbose = (int)env_long("NARMA_TEST_OOM_VERBOSE", 0);

    test_phase("every rank fails its Nth allocation");
    sweep(0);
    if (size > 1) {
        test_phase("rank 0 alone fails its Nth allocation");
        sweep(1);
    }
    test_phase("the unexpected queue through a lasting shortage");
    uq_shortage();
    test_phase("a run with nothing failing");
    run_n = 0;
    scenario();
    if (rank == 0) printf("# %ld runs, %ld steps failed on purpose\n", runs_done, steps_failed);
    long all_failed = 0;
    MPI_Allreduce(&steps_failed, &all_failed, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all_failed > 0, "no call ever failed: the sweep tested nothing");
    return test_finish();
}
