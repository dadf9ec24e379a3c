/* Requests: an MPI_Request standing for a narma request, usable in every MPI completion call
 * beside point-to-point requests.
 *
 * The program's handle is an MPI generalized request, so MPI knows it and can complete and
 * free it with the others. A one-shot request (MPI_Rput & co., MPIX_Win_i*) is completed
 * (MPI_Grequest_complete) as soon as narma reports its request complete; from then on MPI's
 * own completion calls finish it, and its free function takes it out of the table here. The
 * completion calls therefore only have to drive narma's requests first ("pump") and never
 * block inside MPI while a narma request in the same call is incomplete. A persistent request
 * (MPIX_*_notify_tagged_init, MPIX_Notify_tagged_init) keeps its generalized request, never
 * completed, for its whole life: the completion calls answer for it themselves and hide it
 * from MPI (as MPI_REQUEST_NULL) in the arrays they pass on. */
#include "pmpi.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define PQ_BUCKETS 256

struct preq {
    MPI_Request handle;
    NARMA_Request nr; /* one-shot: NARMA_REQUEST_NULL once narma completed it */
    MPI_Win win;      /* for the error handler */
    int persistent;
    int active;        /* persistent: started, not yet returned complete */
    int ready;         /* narma completed it; status and err hold the outcome */
    int err;           /* narma's error class, 0 */
    MPI_Status status; /* narma's status (source, tag, size) */
    struct preq *next;
};

/* The table: a request is one thread's at a time (MPI's rule), the table everybody's, under
 * pw_lock when threads are on. preq_live is read without it; stored with release after the
 * threads flag turned on (window creation, before any request exists), so a thread that sees
 * it non-zero also sees the flag and takes the lock. */
static int preq_live;
static struct preq *pq[PQ_BUCKETS];

int preq_any(void) { return __atomic_load_n(&preq_live, __ATOMIC_ACQUIRE) != 0; }

static inline unsigned pq_bucket(MPI_Request r)
{
    uintptr_t k = 0;
    memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
    k ^= k >> 17;
    k *= UINT64_C(0x9E3779B97F4A7C15) & UINTPTR_MAX;
    return (unsigned)(k >> 7) & (PQ_BUCKETS - 1);
}

static struct preq *pq_find(MPI_Request r)
{
    if (!preq_any() || r == MPI_REQUEST_NULL) return NULL;
    int locked = pw_lock();
    struct preq *q = pq[pq_bucket(r)];
    while (q != NULL && q->handle != r)
        q = q->next;
    pw_unlock(locked);
    return q;
}

static void status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE) return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
}

static void status_copy(MPI_Status *st, const struct preq *q)
{
    if (st != MPI_STATUS_IGNORE) *st = q->status;
}

/* ---- generalized request callbacks ---- */

static int q_query(void *extra, MPI_Status *st)
{
    struct preq *q = extra;
    *st = q->status;
    return MPI_SUCCESS;
}

static int q_free(void *extra) /* MPI freed the handle: it leaves the table */
{
    struct preq *q = extra;
    int locked = pw_lock();
    struct preq **pp = &pq[pq_bucket(q->handle)];
    while (*pp != NULL && *pp != q)
        pp = &(*pp)->next;
    if (*pp == q) {
        *pp = q->next;
        __atomic_store_n(&preq_live, preq_live - 1, __ATOMIC_RELEASE);
    }
    pw_unlock(locked);
    if (q->nr != NARMA_REQUEST_NULL) NARMA_Request_free(&q->nr);
    free(q);
    return MPI_SUCCESS;
}

static int q_cancel(void *extra, int complete) { return MPI_SUCCESS; } /* RMA cannot cancel */

int preq_new(NARMA_Request nr, int persistent, MPI_Win win, MPI_Request *out)
{
    struct preq *q = calloc(1, sizeof(*q));
    if (q == NULL) {
        NARMA_Request_free(&nr);
        return pw_error(win, NARMA_ERR_NO_MEM);
    }
    q->nr = nr;
    q->win = win;
    q->persistent = persistent;
    status_empty(&q->status);
    int rc = PMPI_Grequest_start(q_query, q_free, q_cancel, q, out);
    if (rc != MPI_SUCCESS) {
        NARMA_Request_free(&q->nr);
        free(q);
        return rc;
    }
    q->handle = *out;
    unsigned b = pq_bucket(q->handle);
    int locked = pw_lock();
    q->next = pq[b];
    pq[b] = q;
    __atomic_store_n(&preq_live, preq_live + 1, __ATOMIC_RELEASE);
    pw_unlock(locked);
    return MPI_SUCCESS;
}

/* ---- driving narma ---- */

/* Record narma's outcome; a one-shot request's generalized request completes with it. */
static void q_ready(struct preq *q, int rc)
{
    q->ready = 1;
    q->err = rc;
    if (rc != NARMA_SUCCESS) q->status.MPI_ERROR = MPI_ERR_OTHER;
    if (!q->persistent) PMPI_Grequest_complete(q->handle);
}

/* Test narma's request once (never blocks). */
static void pump(struct preq *q)
{
    if (q->ready || (q->persistent && !q->active)) return;
    int flag = 0, rc = NARMA_Test(&q->nr, &flag, &q->status);
    if (rc != NARMA_SUCCESS || flag) q_ready(q, rc);
}

/* A persistent request returned complete: inactive again. Its outcome as MPI reports it. */
static int q_return(struct preq *q, MPI_Status *st)
{
    int err = q->err;
    status_copy(st, q);
    q->active = q->ready = 0;
    q->err = 0;
    return err ? pw_error(q->win, err) : MPI_SUCCESS;
}

static void pause_step(unsigned *spins)
{
    if (++*spins > 1000) sched_yield();
}

/* ---- single requests ---- */

NARMA_PMPI_API int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    struct preq *q = request != NULL ? pq_find(*request) : NULL;
    if (q == NULL) return PMPI_Wait(request, status);
    if (q->persistent) {
        if (!q->active) {
            status_empty(status);
            return MPI_SUCCESS;
        }
        if (!q->ready) q_ready(q, NARMA_Wait(&q->nr, &q->status));
        return q_return(q, status);
    }
    if (!q->ready) q_ready(q, NARMA_Wait(&q->nr, &q->status));
    int err = q->err;
    MPI_Win win = q->win;
    int rc = PMPI_Wait(request, status); /* frees q */
    return err ? pw_error(win, err) : rc;
}

NARMA_PMPI_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    struct preq *q = request != NULL ? pq_find(*request) : NULL;
    if (q == NULL) return PMPI_Test(request, flag, status);
    if (q->persistent && !q->active) {
        *flag = 1;
        status_empty(status);
        return MPI_SUCCESS;
    }
    pump(q);
    if (!q->ready) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    if (q->persistent) {
        *flag = 1;
        return q_return(q, status);
    }
    int err = q->err;
    MPI_Win win = q->win;
    int rc = PMPI_Test(request, flag, status); /* complete: frees q */
    return err ? pw_error(win, err) : rc;
}

NARMA_PMPI_API int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    struct preq *q = pq_find(request);
    if (q == NULL) return PMPI_Request_get_status(request, flag, status);
    if (q->persistent && !q->active) {
        *flag = 1;
        status_empty(status);
        return MPI_SUCCESS;
    }
    pump(q);
    *flag = q->ready;
    if (q->ready) status_copy(status, q);
    return MPI_SUCCESS;
}

NARMA_PMPI_API int MPI_Request_free(MPI_Request *request)
{
    struct preq *q = request != NULL ? pq_find(*request) : NULL;
    if (q == NULL) return PMPI_Request_free(request);
    if (q->persistent || !q->ready) {
        /* narma's request goes now (an active access still completes at the window's next
         * synchronisation; an active notification request is withdrawn) */
        int rc = q->nr != NARMA_REQUEST_NULL ? NARMA_Request_free(&q->nr) : NARMA_SUCCESS;
        if (rc != NARMA_SUCCESS) return pw_error(q->win, rc);
        if (!q->ready || q->persistent) {
            q->ready = 1;
            PMPI_Grequest_complete(q->handle);
        }
    }
    return PMPI_Request_free(request); /* frees q */
}

NARMA_PMPI_API int MPI_Start(MPI_Request *request)
{
    struct preq *q = request != NULL ? pq_find(*request) : NULL;
    if (q == NULL) return PMPI_Start(request);
    if (!q->persistent || q->active) return pw_error(q->win, NARMA_ERR_REQUEST);
    int rc = NARMA_Start(&q->nr);
    if (rc != NARMA_SUCCESS) return pw_error(q->win, rc);
    q->active = 1;
    q->ready = 0;
    q->err = 0;
    return MPI_SUCCESS;
}

NARMA_PMPI_API int MPI_Startall(int count, MPI_Request requests[])
{
    int mine = 0;
    for (int i = 0; i < count && preq_any() && !mine; i++)
        mine = pq_find(requests[i]) != NULL;
    if (!mine) return PMPI_Startall(count, requests);
    /* narma's entries are checked before any entry starts (NARMA_Startall's rule): inactive
     * persistent requests, none listed twice; MPI's own are left to MPI_Start. */
    for (int i = 0; i < count; i++) {
        struct preq *q = pq_find(requests[i]);
        if (q == NULL) continue;
        if (!q->persistent || q->active) return pw_error(q->win, NARMA_ERR_REQUEST);
        for (int j = 0; j < i; j++)
            if (requests[j] == requests[i]) return pw_error(q->win, NARMA_ERR_REQUEST);
    }
    for (int i = 0; i < count; i++) {
        int rc = MPI_Start(&requests[i]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* ---- arrays ---- */

/* The arrays MPI sees: persistent narma requests hidden as MPI_REQUEST_NULL. */
struct view {
    MPI_Request *req;
    struct preq **q;     /* narma's entry of each index, or NULL */
    unsigned char *pers; /* a persistent narma request (MPI may free the others' entries) */
    MPI_Request small_req[16];
    struct preq *small_q[16];
    unsigned char small_pers[16];
    int any;        /* some entry is narma's */
    int persistent; /* some entry is a persistent narma request */
};

static int view_open(struct view *v, int n, MPI_Request r[])
{
    v->any = v->persistent = 0;
    v->req = NULL;
    v->q = NULL;
    v->pers = NULL;
    if (!preq_any()) return 0;
    for (int i = 0; i < n && !v->any; i++)
        v->any = pq_find(r[i]) != NULL;
    if (!v->any) return 0;
    v->req = n <= 16 ? v->small_req : malloc((size_t)n * sizeof(*v->req));
    v->q = n <= 16 ? v->small_q : malloc((size_t)n * sizeof(*v->q));
    v->pers = n <= 16 ? v->small_pers : malloc((size_t)n);
    if (v->req == NULL || v->q == NULL || v->pers == NULL) return -1;
    for (int i = 0; i < n; i++) {
        struct preq *q = pq_find(r[i]);
        v->q[i] = q;
        v->pers[i] = q != NULL && q->persistent;
        v->req[i] = v->pers[i] ? MPI_REQUEST_NULL : r[i];
        if (v->pers[i]) v->persistent = 1;
    }
    return 1;
}

static void view_close(struct view *v, int n)
{
    if (v->req != v->small_req) free(v->req);
    if (v->q != v->small_q) free(v->q);
    if (v->pers != v->small_pers) free(v->pers);
}

static void view_pump(struct view *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v->q[i] != NULL) pump(v->q[i]);
}

/* MPI's progress for the other requests, without completing any (Testall must modify none
 * unless all are complete). */
static void mpi_progress(struct view *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v->q[i] == NULL && v->req[i] != MPI_REQUEST_NULL) {
            int f;
            PMPI_Request_get_status(v->req[i], &f, MPI_STATUS_IGNORE);
            return;
        }
}

/* The first narma error among the indices MPI completed (their entries are gone by then, so
 * errors were collected before). */
static int testall_view(struct view *v, int n, MPI_Request r[], int *flag, MPI_Status st[])
{
    view_pump(v, n);
    int err = 0;
    MPI_Win ewin = MPI_WIN_NULL;
    for (int i = 0; i < n; i++) {
        struct preq *q = v->q[i];
        if (q == NULL) continue;
        if (q->persistent ? q->active && !q->ready : !q->ready) {
            *flag = 0;
            mpi_progress(v, n);
            return MPI_SUCCESS;
        }
        if (q->err && !err) {
            err = q->err;
            ewin = q->win;
        }
    }
    int rc = PMPI_Testall(n, v->req, flag, st);
    if (rc != MPI_SUCCESS || !*flag) return rc;
    for (int i = 0; i < n; i++) { /* the one-shot entries are gone: only pers[] tells */
        struct preq *q = v->q[i];
        MPI_Status *s = st == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &st[i];
        if (v->pers[i]) {
            if (q->active)
                q_return(q, s);
            else
                status_empty(s);
        } else {
            r[i] = v->req[i];
        }
    }
    return err ? pw_error(ewin, err) : MPI_SUCCESS;
}

NARMA_PMPI_API int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    struct view v;
    int o = view_open(&v, count, requests);
    if (o == 0) return PMPI_Testall(count, requests, flag, statuses);
    int rc = o < 0 ? MPI_ERR_NO_MEM : testall_view(&v, count, requests, flag, statuses);
    view_close(&v, count);
    return rc;
}

NARMA_PMPI_API int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    struct view v;
    int o = view_open(&v, count, requests);
    if (o == 0) return PMPI_Waitall(count, requests, statuses);
    int rc = MPI_ERR_NO_MEM, flag = 0;
    unsigned spins = 0;
    if (o > 0)
        while ((rc = testall_view(&v, count, requests, &flag, statuses)) == MPI_SUCCESS && !flag)
            pause_step(&spins);
    view_close(&v, count);
    return rc;
}

static int testany_view(struct view *v, int n, MPI_Request r[], int *index, int *flag,
                        MPI_Status *st)
{
    view_pump(v, n);
    int waiting = 0; /* persistent narma requests still active */
    for (int i = 0; i < n; i++) {
        struct preq *q = v->q[i];
        if (q == NULL || !q->persistent || !q->active) continue;
        if (q->ready) {
            *index = i;
            *flag = 1;
            return q_return(q, st);
        }
        waiting = 1;
    }
    /* a one-shot narma request that is ready, first (MPI would find it too, but may prefer
     * another); its error is known only here */
    for (int i = 0; i < n; i++) {
        struct preq *q = v->q[i];
        if (q == NULL || q->persistent || !q->ready) continue;
        int err = q->err;
        MPI_Win win = q->win;
        int rc = PMPI_Test(&r[i], flag, st);
        *index = i;
        return err ? pw_error(win, err) : rc;
    }
    int rc = PMPI_Testany(n, v->req, index, flag, st);
    if (rc != MPI_SUCCESS) return rc;
    if (*flag && *index != MPI_UNDEFINED)
        r[*index] = v->req[*index];
    else if (*flag && waiting)
        *flag = 0; /* MPI saw no active request, but a narma one is still active */
    return MPI_SUCCESS;
}

NARMA_PMPI_API int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
                               MPI_Status *status)
{
    struct view v;
    int o = view_open(&v, count, requests);
    if (o == 0) return PMPI_Testany(count, requests, index, flag, status);
    int rc = o < 0 ? MPI_ERR_NO_MEM : testany_view(&v, count, requests, index, flag, status);
    view_close(&v, count);
    return rc;
}

NARMA_PMPI_API int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    struct view v;
    int o = view_open(&v, count, requests);
    if (o == 0) return PMPI_Waitany(count, requests, index, status);
    int rc = MPI_ERR_NO_MEM, flag = 0;
    unsigned spins = 0;
    if (o > 0)
        while ((rc = testany_view(&v, count, requests, index, &flag, status)) == MPI_SUCCESS &&
               !flag)
            pause_step(&spins);
    view_close(&v, count);
    return rc;
}

static int testsome_view(struct view *v, int n, MPI_Request r[], int *outcount, int idx[],
                         MPI_Status st[])
{
    view_pump(v, n);
    int err = 0, active = 0;
    MPI_Win ewin = MPI_WIN_NULL;
    for (int i = 0; i < n; i++) { /* errors of the one-shot requests MPI may complete */
        struct preq *q = v->q[i];
        if (q != NULL && !q->persistent && q->ready && q->err && !err) {
            err = q->err;
            ewin = q->win;
        }
    }
    int rc = PMPI_Testsome(n, v->req, outcount, idx, st);
    if (rc != MPI_SUCCESS) return rc;
    int out = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    for (int k = 0; k < out; k++)
        r[idx[k]] = v->req[idx[k]];
    for (int i = 0; i < n; i++) { /* the one-shot entries MPI completed are gone */
        struct preq *q = v->q[i];
        if (!v->pers[i] || !q->active) continue;
        active = 1;
        if (!q->ready) continue;
        if (q->err && !err) {
            err = q->err;
            ewin = q->win;
        }
        idx[out] = i;
        q_return(q, st == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &st[out]);
        out++;
    }
    *outcount = out == 0 && *outcount == MPI_UNDEFINED && !active ? MPI_UNDEFINED : out;
    return err ? pw_error(ewin, err) : MPI_SUCCESS;
}

NARMA_PMPI_API int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                                MPI_Status statuses[])
{
    struct view v;
    int o = view_open(&v, incount, requests);
    if (o == 0) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
    int rc =
        o < 0 ? MPI_ERR_NO_MEM : testsome_view(&v, incount, requests, outcount, indices, statuses);
    view_close(&v, incount);
    return rc;
}

NARMA_PMPI_API int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                                MPI_Status statuses[])
{
    struct view v;
    int o = view_open(&v, incount, requests);
    if (o == 0) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    int rc = MPI_ERR_NO_MEM;
    unsigned spins = 0;
    if (o > 0)
        while ((rc = testsome_view(&v, incount, requests, outcount, indices, statuses)) ==
                   MPI_SUCCESS &&
               *outcount == 0)
            pause_step(&spins);
    view_close(&v, incount);
    return rc;
}
