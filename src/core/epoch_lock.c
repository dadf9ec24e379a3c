/*
 * Passive target on the epoch engine. Each rank owns a lock word
 * (transport.h):
 *
 *     bit 63      EXCL    an exclusive holder
 *     bits 32-62  WAIT    exclusive lockers waiting (writer preference)
 *     bits 0-31   SHARED  shared holders
 *
 * It is changed with remote compare-and-swap only (MPI promises atomicity
 * between concurrent atomics on one location only for the same operation),
 * so the target never has to call anything:
 *   exclusive  CAS 0 -> EXCL at once; otherwise register once (WAIT + 1) and
 *              later take it with WAIT - 1 + EXCL when SHARED and EXCL are 0;
 *   shared     CAS n -> n + 1 while EXCL = 0 and WAIT = 0, so a stream of
 *              shared lockers drains and the waiting writer gets in. A process
 *              that already holds a lock (on any window) defers to WAIT for at
 *              most NARMA_LOCK_PREFERENCE_MS (100 ms) and then ignores it:
 *              preference could otherwise close a cycle that MPI's own locks
 *              do not have (two lock_all epochs touching two targets in
 *              opposite orders while writers wait on both; a holder of an
 *              exclusive lock that a shared holder of the target waits for).
 *              The bound only delays such programs; a writer still gets in as
 *              soon as the shared epochs in front of it are shorter than it
 *              (lock_all takes its targets one at a time, so its epochs
 *              usually hold a lock when they reach the next target);
 *   release    the reverse CAS (EXCL -> 0 or n -> n - 1, WAIT kept).
 * Attempts never block: a lock epoch that cannot take its lock yet stays
 * active with its operations recorded, and progress retries with bounded
 * exponential backoff (1, 2, 4, ... up to NARMAI_LOCK_BACKOFF_MAX polls
 * skipped between remote attempts), so waiting lockers do not flood the
 * target's word. Unlock flushes the epoch's operations, then releases: the
 * releasing CAS is ordered after the flushed data (ctl_cas is a release,
 * transport.h), which the next holder's acquiring attempt pairs with.
 * lock_all takes each target's shared lock at the first access to that target.
 */
#include "core/epoch.h"
#include "core/rma.h"
#include <stdlib.h>
#include <time.h>

#define LOCK_WAIT_ONE    (UINT64_C(1) << 32)
#define LOCK_WAIT_MASK   (NARMAT_LOCK_EXCL - LOCK_WAIT_ONE)
#define LOCK_SHARED_MASK (LOCK_WAIT_ONE - 1)
/* Largest number of polls skipped between two remote attempts. */
#define NARMAI_LOCK_BACKOFF_MAX 32
/* CAS retries within one attempt when the word changes under us. */
#define NARMAI_LOCK_CAS_TRIES 8

static int lock_cas(struct narmai_win *w, int rank, uint64_t expected, uint64_t desired,
                    uint64_t *old)
{
    return narmat_ctl_cas(&w->t, rank, NARMAT_CTL_LOCK, 0, expected, desired, old);
}

/* Exclusive: 1 if taken. Registers as a waiting writer at the first refusal. */
static int excl_try(struct narmai_win *w, int rank, struct narmai_lock_state *lk, int *rc)
{
    uint64_t guess = lk->waiting ? LOCK_WAIT_ONE : 0, old;
    for (int i = 0; i < NARMAI_LOCK_CAS_TRIES; i++) {
        int take = (guess & (NARMAT_LOCK_EXCL | LOCK_SHARED_MASK)) == 0;
        uint64_t want;
        if (take)
            want = (guess - (lk->waiting ? LOCK_WAIT_ONE : 0)) | NARMAT_LOCK_EXCL;
        else if (lk->waiting)
            return 0; /* registered already: wait for the holders to leave */
        else
            want = guess + LOCK_WAIT_ONE;
        if ((*rc = lock_cas(w, rank, guess, want, &old))) return 0;
        if (old == guess) {
            lk->waiting = !take;
            return take;
        }
        guess = old;
    }
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* May this shared attempt ignore a waiting writer? Only a process that holds a
 * lock, and only once it has deferred for the preference bound. */
static int shared_bypass(struct narmai_lock_state *lk)
{
    if (narmai_g.nlocks_held == 0) return 0;
    uint64_t t = now_ns();
    if (lk->pref_t0 == 0) {
        lk->pref_t0 = t;
        return narmai_g.lock_pref_ns == 0;
    }
    return t - lk->pref_t0 >= narmai_g.lock_pref_ns;
}

/* Shared: 1 if taken. */
static int shared_try(struct narmai_win *w, int rank, struct narmai_lock_state *lk, int *rc)
{
    uint64_t guess = 0, old;
    int bypass = -1; /* not asked yet */
    for (int i = 0; i < NARMAI_LOCK_CAS_TRIES; i++) {
        if (guess & NARMAT_LOCK_EXCL) return 0;
        if (guess & LOCK_WAIT_MASK) {
            if (bypass < 0) bypass = shared_bypass(lk);
            if (!bypass) return 0;
        }
        if ((*rc = lock_cas(w, rank, guess, guess + 1, &old))) return 0;
        if (old == guess) {
            lk->pref_t0 = 0;
            return 1;
        }
        if (!(old & LOCK_WAIT_MASK)) lk->pref_t0 = 0; /* that writer is gone: a new deferral */
        guess = old;
    }
    return 0;
}

int narmai_lock_try(struct narmai_win *w, int type, int rank, struct narmai_lock_state *lk, int *rc)
{
    *rc = NARMA_SUCCESS;
    if (lk->skip > 0) { /* backing off: no remote traffic this poll */
        lk->skip--;
        return 0;
    }
    if (narmai_test_fault(&w->test_fail_lock, 1)) {
        *rc = NARMAU_ERR(NARMA_ERR_INTERN, "injected fault (NARMA_TEST_FAIL_LOCK)");
        return 0;
    }
    int got = type == MPI_LOCK_EXCLUSIVE ? excl_try(w, rank, lk, rc) : shared_try(w, rank, lk, rc);
    if (got) {
        narmai_g.nlocks_held++;
        lk->backoff = 0;
    } else if (*rc == NARMA_SUCCESS) {
        lk->backoff = lk->backoff == 0 ? 1 : (uint8_t)(lk->backoff * 2);
        if (lk->backoff > NARMAI_LOCK_BACKOFF_MAX) lk->backoff = NARMAI_LOCK_BACKOFF_MAX;
        lk->skip = lk->backoff;
    }
    return got;
}

void narmai_lock_abandon(struct narmai_win *w, int rank, struct narmai_lock_state *lk)
{
    if (!lk->waiting) return;
    /* Give up the writer's place: retry until the CAS succeeds (the word changes only by
     * other lockers' counts) or the word is unreachable (then nothing more can be done). */
    uint64_t guess = LOCK_WAIT_ONE, old;
    for (;;) {
        if (lock_cas(w, rank, guess, guess - LOCK_WAIT_ONE, &old)) break;
        if (old == guess) break;
        guess = old;
    }
    lk->waiting = 0;
}

int narmai_lock_release(struct narmai_win *w, int rank, int type)
{
    /* Release even if the flush failed: a lock left held would block every
     * other rank for good. */
    int rc = narmat_flush(&w->t, rank);
    if (type < 0) return rc;
    narmai_g.nlocks_held--;
    uint64_t guess = type == MPI_LOCK_EXCLUSIVE ? NARMAT_LOCK_EXCL : 1, old;
    for (;;) { /* the word changes under us only by WAIT and SHARED counts */
        uint64_t want = type == MPI_LOCK_EXCLUSIVE ? guess & ~NARMAT_LOCK_EXCL : guess - 1;
        int x = lock_cas(w, rank, guess, want, &old);
        if (x) return rc ? rc : x;
        if (old == guess) return rc;
        guess = old;
    }
}

static int check_rank(struct narmai_win *w, int rank)
{
    if (rank < 0 || rank >= w->t.size)
        return NARMAU_ERR(NARMA_ERR_RANK, "rank %d outside 0..%d", rank, w->t.size - 1);
    return NARMA_SUCCESS;
}

/* gave_way (may be NULL): the assert of the empty fence epoch the lock gave way to, or -1. */
static int ilock_impl(int lock_type, int rank, int assert, NARMA_Win w, NARMA_Request *request,
                      int *gave_way)
{
    /* The lock type and assert are checked for MPI_PROC_NULL too, as every epoch call's. */
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return NARMAU_ERR(NARMA_ERR_ARG, "lock type %d", lock_type);
    int rc = narmai_assert_check(assert);
    if (rc) return rc;
    if (rank == MPI_PROC_NULL) return narmai_proc_null(w, request);
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if ((rc = check_rank(w, rank))) return rc;
    const int yield = narmai_fence_empty(w);
    if (w->cur_access != NULL && !yield)
        return NARMAU_ERR(NARMA_ERR_RMA_CONFLICT, "another access epoch is open");
    if (w->lock_ep[rank] != NULL)
        return NARMAU_ERR(NARMA_ERR_RMA_CONFLICT, "rank %d is already locked", rank);
    struct narmai_epoch *e;
    if ((rc = narmai_epoch_open_spared(w, NARMAI_EP_LOCK, &e))) return rc;
    e->lock_rank = rank;
    e->lock_type = lock_type;
    e->assert = assert;
    /* The request before anything moves: without memory for it the call did nothing. */
    if ((rc = narmai_request_done(w, request))) {
        narmai_epoch_free(w, e);
        return rc;
    }
    const int fence_assert = yield ? narmai_fence_yield(w) : -1;
    if (gave_way != NULL) *gave_way = fence_assert;
    w->lock_ep[rank] = e;
    w->nlock_open++;
    narmai_epoch_progress(w);
    return NARMA_SUCCESS;
}

static int iunlock_impl(int rank, NARMA_Win w, NARMA_Request *request)
{
    if (rank == MPI_PROC_NULL) return narmai_proc_null(w, request);
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    int rc = check_rank(w, rank);
    if (rc) return rc;
    struct narmai_epoch *e = w->lock_ep[rank];
    if (e == NULL) return NARMAU_ERR(NARMA_ERR_RMA_SYNC, "rank %d is not locked", rank);
    w->lock_ep[rank] = NULL;
    w->nlock_open--;
    rc = narmai_epoch_close(w, e, request);
    if (rc && request != NULL) { /* no memory for the request: the epoch stays open */
        w->lock_ep[rank] = e;
        w->nlock_open++;
    }
    return rc;
}

static int ilock_all_impl(int assert, NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    int rc = narmai_assert_check(assert);
    if (rc) return rc;
    const int yield = narmai_fence_empty(w);
    if ((w->cur_access != NULL && !yield) || w->nlock_open)
        return NARMAU_ERR(NARMA_ERR_RMA_CONFLICT, "another access epoch is open");
    uint8_t *held = calloc((size_t)w->t.size, 1);
    struct narmai_epoch *e;
    if (held == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "lock_all");
    if ((rc = narmai_epoch_open_spared(w, NARMAI_EP_LOCK_ALL, &e))) {
        free(held);
        return rc;
    }
    /* NOCHECK: no lock is taken; every target counts as held, nothing is released. */
    if (assert & MPI_MODE_NOCHECK)
        for (int r = 0; r < w->t.size; r++)
            held[r] = 2;
    e->held_all = held;
    e->assert = assert;
    if ((rc = narmai_request_done(w, request))) {
        narmai_epoch_free(w, e); /* frees held_all */
        return rc;
    }
    if (yield) narmai_fence_yield(w);
    w->cur_access = e;
    narmai_epoch_progress(w);
    return NARMA_SUCCESS;
}

static int iunlock_all_impl(NARMA_Win w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    struct narmai_epoch *e = w->cur_access;
    if (e == NULL || e->type != NARMAI_EP_LOCK_ALL)
        return NARMAU_ERR(NARMA_ERR_RMA_SYNC, "unlock_all without lock_all");
    w->cur_access = NULL;
    int rc = narmai_epoch_close(w, e, request);
    if (rc && request != NULL) w->cur_access = e; /* no memory for the request: still open */
    return rc;
}

/* Blocking lock returns once the lock is held, so the program may then access
 * its own window memory under the lock (as MPI requires for rank == self). */
static int api_win_lock(int lock_type, int rank, int assert, NARMA_Win w)
{
    int fence_assert = -1;
    int rc = ilock_impl(lock_type, rank, assert, w, NULL, &fence_assert);
    if (rc || rank == MPI_PROC_NULL) return rc;
    struct narmai_epoch *e = w->lock_ep[rank];
    narmau_waiter wt = {0};
    while (!narmai_epoch_target_ready(w, e, rank)) {
        if (e->failed) { /* the attempt itself failed: the lock will never be held */
            rc = e->err;
            w->lock_ep[rank] = NULL;
            w->nlock_open--;
            narmai_epoch_free(w, e); /* active, nothing held, no operation yet */
            /* The call failed, so it leaves the window as it found it: the empty fence epoch
             * it gave way to is open again (the object just freed comes back from the cache,
             * so this allocates nothing). Not when another thread opened an epoch while this
             * one waited (MPI_THREAD_MULTIPLE: the wait lets the process lock go). */
            if (fence_assert >= 0 && w->nlock_open == 0 && w->cur_access == NULL &&
                w->cur_exposure == NULL && narmai_fence_open(w, fence_assert) == NARMA_SUCCESS)
                narmai_epoch_progress(w);
            return rc;
        }
        narmai_progress_on(w);
        narmau_wait_step(&wt);
    }
    return NARMA_SUCCESS;
}

int NARMA_Win_lock(int lock_type, int rank, int assert, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_lock(lock_type, rank, assert, w));
}

int NARMA_Win_unlock(int rank, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, iunlock_impl(rank, w, NULL));
}
int NARMA_Win_lock_all(int assert, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, ilock_all_impl(assert, w, NULL));
}
int NARMA_Win_unlock_all(NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, iunlock_all_impl(w, NULL));
}

/* Public nonblocking forms: the same calls, returning their request. */
static int api_win_ilock(int lock_type, int rank, int assert, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return ilock_impl(lock_type, rank, assert, w, request, NULL);
}

int NARMA_Win_ilock(int lock_type, int rank, int assert, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_ilock(lock_type, rank, assert, w, request));
}

static int api_win_iunlock(int rank, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return iunlock_impl(rank, w, request);
}

int NARMA_Win_iunlock(int rank, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_iunlock(rank, w, request));
}

static int api_win_ilock_all(int assert, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return ilock_all_impl(assert, w, request);
}

int NARMA_Win_ilock_all(int assert, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_ilock_all(assert, w, request));
}

static int api_win_iunlock_all(NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return iunlock_all_impl(w, request);
}

int NARMA_Win_iunlock_all(NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_iunlock_all(w, request));
}
