/* Requests: creation, persistent start, completion (Test/Wait families), free. */
#include "core/epoch.h"
#include "util/pool.h"
#include <stdlib.h>

/* Retired request objects (util/pool.h): requests are created and retired on every epoch
 * call, so they must not cost a malloc each, and a stale copy of a freed request's handle must
 * read memory that says so (it is never given back to malloc). */
static narmau_pool narmai_req_pool;
/* A recycled request is cleared by copying this: GCC compiles the copy to a few vector moves
 * but a memset of the same 160 bytes to `rep stos`, whose start-up cost was a third of
 * creating a threshold request on x86-64 (counter ping-pong, issue 12). */
static const struct narmai_request narmai_req_zero;

struct narmai_request *narmai_request_new(int kind, struct narmai_win *w)
{
    struct narmai_request *r = narmau_pool_take(&narmai_req_pool, sizeof(*r));
    if (r != NULL) {
        *r = narmai_req_zero;
    } else if ((r = calloc(1, sizeof(*r))) == NULL) {
        return NULL;
    }
    r->magic = NARMAI_REQ_MAGIC;
    r->kind = (uint8_t)kind;
    r->state = NARMAI_REQ_ACTIVE;
    r->win = w;
    r->mpi_req = MPI_REQUEST_NULL;
    narmau_dlist_init(&r->link);
    return r;
}

int narmai_request_born_complete(struct narmai_request *r, int rc, NARMA_Request *request)
{
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    if (rc) {
        narmai_request_release(r);
        return rc;
    }
    r->state = NARMAI_REQ_COMPLETE;
    r->st_src = r->win->t.rank;
    r->st_tag = MPI_ANY_TAG;
    *request = r;
    return NARMA_SUCCESS;
}

void narmai_request_release(struct narmai_request *r)
{
    if (r->magic != NARMAI_REQ_MAGIC) return; /* retired already: never into the pool twice */
    if ((r->kind == NARMAI_REQ_NOTIFY || r->kind == NARMAI_REQ_PACC) && r->win != NULL)
        r->win->nreqs--;
    if (r->kind == NARMAI_REQ_PACC) narmai_pacc_release(r);
    r->magic = 0;
    r->state = NARMAI_REQ_DEAD;
    narmau_pool_give(&narmai_req_pool, r, sizeof(*r));
}

static inline int req_ok(const struct narmai_request *r)
{
    return r != NULL && r->magic == NARMAI_REQ_MAGIC;
}

static void status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE) return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_elements_x(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
}

/* Is the request complete? Drives MPI for RMA requests on the mpi transport. */
static int req_done(struct narmai_request *r)
{
    if (r->state == NARMAI_REQ_COMPLETE) return 1;
    if (r->mpi_req != MPI_REQUEST_NULL) {
        int flag = 0;
        int rc = MPI_Test(&r->mpi_req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            r->st_error = narmau_mpi_error(rc);
            flag = 1;
        }
        if (flag) r->state = NARMAI_REQ_COMPLETE;
        return flag;
    }
    if (r->poll != NULL) return r->poll(r);
    return 0;
}

/* A completed request's status, as Test/Wait give it (it stays COMPLETE). Returns its error. */
static int req_status(struct narmai_request *r, MPI_Status *st)
{
    int err = r->st_error;
    if (st != MPI_STATUS_IGNORE) {
        /* The count lives in implementation-defined fields: set it through MPI
         * once per size and reuse that status while the size repeats. */
        if (!r->st_cached || r->st_cached_bytes != r->st_bytes) {
            MPI_Status_set_elements_x(&r->st_template, MPI_BYTE, (MPI_Count)r->st_bytes);
            MPI_Status_set_cancelled(&r->st_template, 0);
            r->st_cached = 1;
            r->st_cached_bytes = r->st_bytes;
        }
        *st = r->st_template;
        st->MPI_SOURCE = r->st_src;
        st->MPI_TAG = r->st_tag;
        st->MPI_ERROR = err ? MPI_ERR_OTHER : MPI_SUCCESS;
    }
    return err;
}

/* Hand a completed request's status to the user and retire it (persistent:
 * back to INACTIVE; others: freed, handle set to NULL). Returns its error. */
static int req_finish(NARMA_Request *handle, MPI_Status *st)
{
    struct narmai_request *r = *handle;
    int err = req_status(r, st);
    if (r->kind == NARMAI_REQ_NOTIFY || r->kind == NARMAI_REQ_PACC) {
        r->state = NARMAI_REQ_INACTIVE;
    } else {
        narmai_request_release(r);
        *handle = NARMA_REQUEST_NULL;
    }
    return err;
}

/* Inactive persistent or null requests complete at once with an empty status (as in MPI). */
static inline int req_is_inert(const struct narmai_request *r)
{
    return r == NULL || r->state == NARMAI_REQ_INACTIVE;
}

int NARMA_Test(NARMA_Request *request, int *flag, MPI_Status *status)
{
    NARMAI_API_LOCK();
#if NARMA_ARG_CHECKS
    if (request == NULL || flag == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL argument");
    if (*request != NULL && !req_ok(*request))
        return NARMAU_ERR(NARMA_ERR_REQUEST, "not a live request");
#endif
    struct narmai_request *r = *request;
    if (req_is_inert(r)) {
        *flag = 1;
        status_empty(status);
        return NARMA_SUCCESS;
    }
    if (!req_done(r)) {
        narmai_progress_on(r->win);
        if (!req_done(r)) {
            *flag = 0;
            return NARMA_SUCCESS;
        }
    }
    *flag = 1;
    return req_finish(request, status);
}

/* Test without retiring: req_done only ever moves a request to COMPLETE (and its poll
 * callbacks do their one-time bookkeeping then), which Test/Wait later finish. */
int NARMA_Request_get_status(NARMA_Request request, int *flag, MPI_Status *status)
{
    NARMAI_API_LOCK();
#if NARMA_ARG_CHECKS
    if (flag == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL flag");
    if (request != NULL && !req_ok(request))
        return NARMAU_ERR(NARMA_ERR_REQUEST, "not a live request");
#endif
    if (req_is_inert(request)) {
        *flag = 1;
        status_empty(status);
        return NARMA_SUCCESS;
    }
    if (!req_done(request)) {
        narmai_progress_on(request->win);
        if (!req_done(request)) {
            *flag = 0;
            return NARMA_SUCCESS;
        }
    }
    *flag = 1;
    return req_status(request, status);
}

int NARMA_Wait(NARMA_Request *request, MPI_Status *status)
{
    NARMAI_API_LOCK();
#if NARMA_ARG_CHECKS
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL argument");
    if (*request != NULL && !req_ok(*request))
        return NARMAU_ERR(NARMA_ERR_REQUEST, "not a live request");
#endif
    struct narmai_request *r = *request;
    if (req_is_inert(r)) {
        status_empty(status);
        return NARMA_SUCCESS;
    }
    narmau_waiter wt = {0};
    while (!req_done(r)) {
        narmai_progress_on(r->win);
        if (req_done(r)) break;
        narmau_wait_step(&wt);
    }
    return req_finish(request, status);
}

/* The window of every live request of the array, or NULL if they have several. */
static struct narmai_win *common_win(int count, NARMA_Request reqs[])
{
    struct narmai_win *w = NULL;
    for (int i = 0; i < count; i++) {
        if (req_is_inert(reqs[i])) continue;
        if (w == NULL)
            w = reqs[i]->win;
        else if (reqs[i]->win != w)
            return NULL;
    }
    return w;
}

static int start_check(const NARMA_Request *request);

/* A request array: every entry checked (to_start: one Start accepts; else live or null), none
 * listed twice (finishing it twice would retire one object twice; starting it twice finds it
 * active), all before the caller does anything with any of them. */
static int check_array(int count, NARMA_Request reqs[], int to_start)
{
    if (count < 0) return NARMAU_ERR(NARMA_ERR_COUNT, "count %d", count);
    if (count > 0 && reqs == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request array");
    int rc = NARMA_SUCCESS, n = 0;
    for (; n < count; n++) {
        if (to_start) {
            if ((rc = start_check(&reqs[n]))) break;
        } else if (reqs[n] == NULL) {
            continue;
        } else if (!req_ok(reqs[n])) {
            rc = NARMAU_ERR(NARMA_ERR_REQUEST, "request %d is not live", n);
            break;
        }
        if (reqs[n]->listed) {
            rc = NARMAU_ERR(NARMA_ERR_REQUEST, "request %d is listed twice", n);
            break;
        }
        reqs[n]->listed = 1;
    }
    for (int i = 0; i < n; i++) /* the entries before n passed their check */
        if (reqs[i] != NULL) reqs[i]->listed = 0;
    return rc;
}

int NARMA_Testany(int count, NARMA_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    NARMAI_API_LOCK();
    int rc = check_array(count, reqs, 0);
    if (rc) return rc;
    if (index == NULL || flag == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL argument");
    for (int pass = 0; pass < 2; pass++) {
        int live = 0;
        for (int i = 0; i < count; i++) {
            if (req_is_inert(reqs[i])) continue;
            live++;
            if (req_done(reqs[i])) {
                *index = i;
                *flag = 1;
                return req_finish(&reqs[i], status);
            }
        }
        if (live == 0) { /* all null or inactive: MPI says flag = true, index = UNDEFINED */
            *index = MPI_UNDEFINED;
            *flag = 1;
            status_empty(status);
            return NARMA_SUCCESS;
        }
        if (pass == 0) narmai_progress_on(common_win(count, reqs));
    }
    *index = MPI_UNDEFINED;
    *flag = 0;
    return NARMA_SUCCESS;
}

int NARMA_Waitany(int count, NARMA_Request reqs[], int *index, MPI_Status *status)
{
    NARMAI_API_LOCK();
    int flag = 0, rc;
    narmau_waiter wt = {0};
    while ((rc = NARMA_Testany(count, reqs, index, &flag, status)) == NARMA_SUCCESS && !flag)
        narmau_wait_step(&wt);
    return rc;
}

int NARMA_Testall(int count, NARMA_Request reqs[], int *flag, MPI_Status *statuses)
{
    NARMAI_API_LOCK();
    int rc = check_array(count, reqs, 0);
    if (rc) return rc;
    if (flag == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL flag");
    int all = 1;
    for (int pass = 0; pass < 2; pass++) {
        all = 1;
        for (int i = 0; i < count && all; i++)
            if (!req_is_inert(reqs[i]) && !req_done(reqs[i])) all = 0;
        if (all || pass == 1) break;
        narmai_progress_on(common_win(count, reqs));
    }
    *flag = all;
    if (!all) return NARMA_SUCCESS;
    int err = NARMA_SUCCESS;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (req_is_inert(reqs[i]))
            status_empty(st);
        else {
            int e = req_finish(&reqs[i], st);
            if (e && !err) err = e;
        }
    }
    return err;
}

int NARMA_Waitall(int count, NARMA_Request reqs[], MPI_Status *statuses)
{
    NARMAI_API_LOCK();
    int flag = 0, rc;
    narmau_waiter wt = {0};
    while ((rc = NARMA_Testall(count, reqs, &flag, statuses)) == NARMA_SUCCESS && !flag)
        narmau_wait_step(&wt);
    return rc;
}

int NARMA_Testsome(int incount, NARMA_Request reqs[], int *outcount, int indices[],
                   MPI_Status *statuses)
{
    NARMAI_API_LOCK();
    int rc = check_array(incount, reqs, 0);
    if (rc) return rc;
    if (outcount == NULL || (incount > 0 && indices == NULL))
        return NARMAU_ERR(NARMA_ERR_ARG, "NULL argument");
    int live = 0, n = 0, err = NARMA_SUCCESS;
    for (int pass = 0; pass < 2 && n == 0; pass++) {
        if (pass == 1) narmai_progress_on(common_win(incount, reqs));
        live = 0;
        for (int i = 0; i < incount; i++) {
            if (req_is_inert(reqs[i])) continue;
            live++;
            if (req_done(reqs[i])) {
                MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
                indices[n++] = i;
                int e = req_finish(&reqs[i], st);
                if (e && !err) err = e;
            }
        }
        if (live == 0) break;
    }
    *outcount = live == 0 && n == 0 ? MPI_UNDEFINED : n;
    return err;
}

int NARMA_Waitsome(int incount, NARMA_Request reqs[], int *outcount, int indices[],
                   MPI_Status *statuses)
{
    NARMAI_API_LOCK();
    int rc;
    narmau_waiter wt = {0};
    while ((rc = NARMA_Testsome(incount, reqs, outcount, indices, statuses)) == NARMA_SUCCESS &&
           *outcount == 0)
        narmau_wait_step(&wt);
    return rc;
}

static int api_notify_init(NARMA_Win win, int src_rank, int tag, int expected_count,
                           NARMA_Request *request)
{
#if NARMA_ARG_CHECKS
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    if (src_rank != NARMA_ANY_SOURCE && (src_rank < 0 || src_rank >= win->t.size))
        return NARMAU_ERR(NARMA_ERR_RANK, "source %d outside 0..%d", src_rank, win->t.size - 1);
    if (tag != NARMA_ANY_TAG && (tag < 0 || tag > NARMA_TAG_UB))
        return NARMAU_ERR(NARMA_ERR_TAG, "tag %d", tag);
    if (expected_count < 1) return NARMAU_ERR(NARMA_ERR_COUNT, "expected_count %d", expected_count);
#endif
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_NOTIFY, win);
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    r->state = NARMAI_REQ_INACTIVE;
    r->src = src_rank;
    r->tag = tag;
    r->expected = expected_count;
    win->nreqs++;
    *request = r;
    return NARMA_SUCCESS;
}

int NARMA_Notify_init(NARMA_Win win, int src_rank, int tag, int expected_count,
                      NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_notify_init(win, src_rank, tag, expected_count, request));
}

/* What Start refuses: a request it cannot start. */
static int start_check(const NARMA_Request *request)
{
    if (request == NULL || !req_ok(*request))
        return NARMAU_ERR(NARMA_ERR_REQUEST, "NULL or freed request");
    if ((*request)->kind != NARMAI_REQ_NOTIFY && (*request)->kind != NARMAI_REQ_PACC)
        return NARMAU_ERR(NARMA_ERR_REQUEST, "not a persistent request");
    if ((*request)->state != NARMAI_REQ_INACTIVE)
        return NARMAU_ERR(NARMA_ERR_REQUEST, "request is already active");
    return NARMA_SUCCESS;
}

static int start_one(struct narmai_request *r)
{
    if (r->kind == NARMAI_REQ_PACC) return narmai_pacc_start(r);
    return narmai_notify_start(r);
}

int NARMA_Start(NARMA_Request *request)
{
    NARMAI_API_LOCK();
#if NARMA_ARG_CHECKS
    int rc = start_check(request);
    if (rc) return rc;
#endif
    return start_one(*request);
}

/* Every entry is checked before any is started, so a refused array starts nothing (it used to
 * start the entries before the bad one). Starts take no memory (the inits made what they need)
 * except on dynamic windows, for a persistent accumulate's repacked origin and for types
 * copied through MPI_Pack; a start failing there, or failing past the checks in MPI, leaves
 * the entries before it started, as MPI_Startall may. */
int NARMA_Startall(int count, NARMA_Request reqs[])
{
    NARMAI_API_LOCK();
    if (count < 0 || (count > 0 && reqs == NULL)) return NARMAU_ERR(NARMA_ERR_ARG, "bad array");
#if NARMA_ARG_CHECKS
    int rc = check_array(count, reqs, 1);
    if (rc) return rc;
#endif
    for (int i = 0; i < count; i++) {
        int rc2 = start_one(reqs[i]);
        if (rc2) return rc2;
    }
    return NARMA_SUCCESS;
}

int NARMA_Request_free(NARMA_Request *request)
{
    NARMAI_API_LOCK();
    if (request == NULL || !req_ok(*request))
        return NARMAU_ERR(NARMA_ERR_REQUEST, "NULL or freed request");
    struct narmai_request *r = *request;
    if (r->kind == NARMAI_REQ_NOTIFY) {
        narmai_notify_withdraw(r);
    } else if (r->kind == NARMAI_REQ_THRESH) {
        narmai_threshold_withdraw(r);
    } else if (r->kind == NARMAI_REQ_EPOCH && r->ctx != NULL) {
        /* The epoch still completes; nobody is told. */
        ((struct narmai_epoch *)r->ctx)->close_req = NULL;
    } else if (r->kind == NARMAI_REQ_RMA && r->ctx != NULL) {
        /* Still recorded: the operation is issued later without a request
         * (and completes at the epoch's end, as MPI says of a freed request). */
        ((struct narmai_op *)r->ctx)->req = NULL;
    } else if (r->mpi_req != MPI_REQUEST_NULL) {
        /* An RMA operation still in flight completes at the next flush/unlock. */
        MPI_Request_free(&r->mpi_req);
    }
    if (r->ticketed)
        narmai_request_unticket(r); /* the access completes at the next flush, as MPI says */
    else if (r->poll != NULL && r->state != NARMAI_REQ_COMPLETE) {
        r->win->nflush--;
    }
    narmai_request_release(r);
    *request = NARMA_REQUEST_NULL;
    return NARMA_SUCCESS;
}
