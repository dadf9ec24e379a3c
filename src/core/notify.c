/* Notified Access entry points (paper section III-B). Each notified access
 * forms its own epoch: legal inside any access epoch and outside one. */
#include "core/rma.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "transport/transport.h"
#include "util/dtype.h"

/* Returns what call returns once it is not NARMAT_AGAIN. A full notification ring answers
 * NARMAT_AGAIN with nothing done: drain our own rings (two ranks filling each other's cannot
 * deadlock) and call again. */
#define NOTIFY_RETRY(call)                       \
    do {                                         \
        narmau_waiter wt_ = {0};                 \
        int rc_;                                 \
        while ((rc_ = (call)) == NARMAT_AGAIN) { \
            narmai_progress();                   \
            narmau_wait_step(&wt_);              \
        }                                        \
        return rc_;                              \
    } while (0)

static inline int check_tag(int tag)
{
    if (tag < 0 || tag > NARMA_TAG_UB)
        return NARMAU_ERR(NARMA_ERR_TAG, "tag %d outside 0..%d", tag, NARMA_TAG_UB);
    return NARMA_SUCCESS;
}

static int api_put_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                          MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Win w, int tag)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, NARMAI_CHK_NO_EPOCH);
    if (rc || (rc = check_tag(tag))) return rc;
#endif
    NOTIFY_RETRY(narmat_put_notify(&w->t, oaddr, ocount, otype, target, disp, tcount, ttype, tag));
}

int NARMA_Put_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                     int tcount, MPI_Datatype ttype, NARMA_Win w, int tag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_put_notify(oaddr, ocount, otype, target, disp, tcount, ttype, w, tag));
}

static int api_get_notify(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                          int tcount, MPI_Datatype ttype, NARMA_Win w, int tag)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, NARMAI_CHK_NO_EPOCH);
    if (rc || (rc = check_tag(tag))) return rc;
#endif
    NOTIFY_RETRY(narmat_get_notify(&w->t, oaddr, ocount, otype, target, disp, tcount, ttype, tag));
}

int NARMA_Get_notify(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                     int tcount, MPI_Datatype ttype, NARMA_Win w, int tag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_get_notify(oaddr, ocount, otype, target, disp, tcount, ttype, w, tag));
}

static int api_accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                 MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op,
                                 NARMA_Win w, int tag)
{
    if (op == MPI_NO_OP) return NARMAU_ERR(NARMA_ERR_OP, "MPI_NO_OP is only for get-accumulates");
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
#if NARMA_ARG_CHECKS
    int flags = NARMAI_CHK_NO_EPOCH | (op == MPI_NO_OP ? NARMAI_CHK_NO_ORIGIN : 0);
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, flags);
    if (rc || (rc = check_tag(tag)) || (rc = narmai_acc_check(op, ttype))) return rc;
#endif
    NOTIFY_RETRY(
        narmat_acc_notify(&w->t, oaddr, ocount, otype, target, disp, tcount, ttype, op, tag));
}

int NARMA_Accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                            MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w,
                            int tag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_accumulate_notify(oaddr, ocount, otype, target, disp, tcount, ttype, op, w, tag));
}

/* The request of the R* forms is complete at creation: the transports complete notified
 * accesses before returning, or, on a window with narma_notify_completion=flush, the caller
 * completes them locally first (the notification follows at the next flush or progress). */
/* Local completion of an issued notified access: there already, unless the window defers
 * (narma_notify_completion=flush: the origin buffer is reusable after a local flush). */
static inline int local_done(struct narmai_win *w, int target, int rc)
{
    if (rc == NARMA_SUCCESS && target != MPI_PROC_NULL && w->t.notify_deferred)
        rc = narmat_flush_local(&w->t, target);
    return rc;
}

/* ---- notified puts whose data may still move (the transport's rput_notify) ---- */

static int ticket_poll(struct narmai_request *r)
{
    if (!narmat_ticket_done(&r->win->t, r->target, r->upto)) return 0;
    narmai_request_unticket(r);
    return 1;
}

void narmai_request_ticket(struct narmai_request *r, int target, uint64_t ticket)
{
    r->state = NARMAI_REQ_ACTIVE;
    r->target = target;
    r->upto = ticket;
    r->poll = ticket_poll;
    r->ticketed = 1;
    narmau_dlist_push_back(&r->win->pull_reqs, &r->link);
}

void narmai_request_unticket(struct narmai_request *r)
{
    narmau_dlist_remove(&r->link);
    r->ticketed = 0;
    r->poll = NULL;
    r->state = NARMAI_REQ_COMPLETE;
}

static int put_notify_retry(struct narmai_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                            int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    NOTIFY_RETRY(narmat_put_notify(&w->t, oaddr, ocount, otype, target, disp, tcount, ttype, tag));
}

static int rput_notify_retry(struct narmai_win *w, const void *oaddr, int ocount,
                             MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                             MPI_Datatype ttype, int tag, uint64_t *ticket)
{
    NOTIFY_RETRY(
        narmat_rput_notify(&w->t, oaddr, ocount, otype, target, disp, tcount, ttype, tag, ticket));
}

/* A put through rput_notify where the window may defer (else the plain call, fewer
 * instructions): *ticket 0 when it completed (locally) on return. */
static int rput_issue(struct narmai_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                      int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                      uint64_t *ticket)
{
    *ticket = 0;
    int rc =
        w->t.may_defer
            ? rput_notify_retry(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag, ticket)
            : put_notify_retry(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag);
    return rc || *ticket ? rc : local_done(w, target, rc);
}

static int api_rput_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                           MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Win w,
                           NARMA_Request *request, int tag)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    if (target == MPI_PROC_NULL)
        return narmai_request_born_complete(narmai_request_new(NARMAI_REQ_RMA, w),
                                            narmai_proc_null(w, NULL), request);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, NARMAI_CHK_NO_EPOCH);
    if (rc || (rc = check_tag(tag))) return rc;
#else
    int rc;
#endif
    uint64_t ticket = 0;
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_RMA, w); /* before the access */
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    if ((rc = narmai_request_born_complete(
             r, rput_issue(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag, &ticket),
             request)))
        return rc;
    if (ticket) narmai_request_ticket(*request, target, ticket);
    return NARMA_SUCCESS;
}

int NARMA_Rput_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                      int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request, int tag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_rput_notify(oaddr, ocount, otype, target, disp, tcount, ttype, w, request, tag));
}

static int api_rget_notify(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                           int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request,
                           int tag)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_RMA, w); /* before the access */
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    int rc = api_get_notify(oaddr, ocount, otype, target, disp, tcount, ttype, w, tag);
    return narmai_request_born_complete(r, local_done(w, target, rc), request);
}

int NARMA_Rget_notify(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                      int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request, int tag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_rget_notify(oaddr, ocount, otype, target, disp, tcount, ttype, w, request, tag));
}

/* ---- notified fetching atomics ------------------------------------------- */
/*
 * Get_accumulate_notify, Fetch_and_op_notify and Compare_and_swap_notify have one path: the
 * transport's note() claims a slot in the target's notification queue (NARMAT_AGAIN, with
 * nothing applied, while it is full: the retry never applies an atomic twice), runs
 * fetch_move, then publishes the notification. fetch_move is the plain call's own data step
 * (narmat_acc, narmat_cas: the same atomicity with every other accumulate-family call as
 * Get_accumulate and Compare_and_swap have, on every transport and path), then a flush to the
 * target, so the result is in the origin's buffer and the target's element updated before the
 * notification can match. The notification carries the target's bytes (tcount x ttype).
 */
struct fetch_op {
    struct narmai_win *w;
    const void *oaddr, *caddr; /* caddr: compare-and-swap only */
    void *raddr;
    int ocount, rcount, target, tcount;
    MPI_Datatype otype, rtype, ttype;
    MPI_Aint disp;
    MPI_Op op; /* MPI_OP_NULL: compare-and-swap */
    int64_t bytes;
};

static int fetch_move(void *arg)
{
    const struct fetch_op *m = arg;
    struct narmat_win *t = &m->w->t;
    int rc = NARMA_SUCCESS;
    if (m->bytes == 0) return rc; /* the notification alone (no MPI call of no element) */
    if (m->op == MPI_OP_NULL)
        rc = narmat_cas(t, m->oaddr, m->caddr, m->raddr, m->ttype, m->target, m->disp);
    else
        rc = narmat_acc(t, m->oaddr, m->ocount, m->otype, m->raddr, m->rcount, m->rtype, m->target,
                        m->disp, m->tcount, m->ttype, m->op, NULL);
    return rc ? rc : narmat_flush(t, m->target);
}

static int fetch_notify(struct fetch_op *m, int tag)
{
    const narmau_dtype *td;
    int rc = narmau_dtype_get(m->ttype, &td);
    if (rc) return NARMAU_ERR(rc, "target datatype");
    m->bytes = (int64_t)m->tcount * (int64_t)td->size;
    NOTIFY_RETRY(narmat_note(&m->w->t, m->target, NARMAT_NOTE_ACC, tag, m->bytes, fetch_move, m));
}

static int api_get_accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                     int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                                     int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w,
                                     int tag)
{
    int rc = narmai_null_result(raddr, rcount, rtype);
    if (rc) return rc;
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
#if NARMA_ARG_CHECKS
    /* With NO_OP the origin buffer is ignored (MPI). */
    int flags = NARMAI_CHK_NO_EPOCH | (op == MPI_NO_OP ? NARMAI_CHK_NO_ORIGIN : 0);
    if ((rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, flags)) ||
        (rc = check_tag(tag)) || (rc = narmai_acc_check(op, ttype)) ||
        (rc = narmai_result_check(rcount, rtype, tcount, ttype)))
        return rc;
#endif
    /* NO_OP ignores the origin: its datatype is not passed on (as the plain call). */
    struct fetch_op m = {.w = w,
                         .oaddr = oaddr,
                         .raddr = raddr,
                         .ocount = ocount,
                         .rcount = rcount,
                         .target = target,
                         .tcount = tcount,
                         .otype = op == MPI_NO_OP ? MPI_DATATYPE_NULL : otype,
                         .rtype = rtype,
                         .ttype = ttype,
                         .disp = disp,
                         .op = op};
    return fetch_notify(&m, tag);
}

int NARMA_Get_accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                                int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w, int tag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_get_accumulate_notify(oaddr, ocount, otype, raddr, rcount, rtype,
                                                       target, disp, tcount, ttype, op, w, tag));
}

static int api_rget_accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype,
                                      void *raddr, int rcount, MPI_Datatype rtype, int target,
                                      MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op,
                                      NARMA_Win w, int tag, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    /* Complete (result there) on return: the request is born complete. */
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_RMA, w); /* before the access */
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    return narmai_request_born_complete(r,
                                        api_get_accumulate_notify(oaddr, ocount, otype, raddr,
                                                                  rcount, rtype, target, disp,
                                                                  tcount, ttype, op, w, tag),
                                        request);
}

int NARMA_Rget_accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                 int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                                 int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w, int tag,
                                 NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_rget_accumulate_notify(oaddr, ocount, otype, raddr, rcount, rtype,
                                                        target, disp, tcount, ttype, op, w, tag,
                                                        request));
}

int NARMA_Fetch_and_op_notify(const void *oaddr, void *raddr, MPI_Datatype type, int target,
                              MPI_Aint disp, NARMA_Op op, NARMA_Win w, int tag)
{
    NARMAI_API_LOCK();
    int rc = narmai_fop_check(raddr, type, w);
    if (rc == NARMA_SUCCESS)
        rc = api_get_accumulate_notify(oaddr, 1, type, raddr, 1, type, target, disp, 1, type, op, w,
                                       tag);
    return narmai_win_ret(w, rc);
}

static int api_compare_and_swap_notify(const void *oaddr, const void *caddr, void *raddr,
                                       MPI_Datatype type, int target, MPI_Aint disp, NARMA_Win w,
                                       int tag)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, 1, type, 1, type, NARMAI_CHK_NO_EPOCH);
    if (rc || (rc = check_tag(tag)) || (rc = narmai_cas_check(oaddr, caddr, raddr, type)))
        return rc;
#endif
    struct fetch_op m = {.w = w,
                         .oaddr = oaddr,
                         .caddr = caddr,
                         .raddr = raddr,
                         .ocount = 1,
                         .rcount = 1,
                         .target = target,
                         .tcount = 1,
                         .otype = type,
                         .rtype = type,
                         .ttype = type,
                         .disp = disp,
                         .op = MPI_OP_NULL};
    return fetch_notify(&m, tag);
}

int NARMA_Compare_and_swap_notify(const void *oaddr, const void *caddr, void *raddr,
                                  MPI_Datatype type, int target, MPI_Aint disp, NARMA_Win w,
                                  int tag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_compare_and_swap_notify(oaddr, caddr, raddr, type, target, disp, w, tag));
}

/* ---- persistent notified accesses ---------------------------------------- */

/* Check like the blocking call, keep the access in a persistent request (INACTIVE). */
static int pacc_init(int kind, const void *oaddr, int ocount, MPI_Datatype otype, int target,
                     MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op, NARMA_Win w, int tag,
                     NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    int rc;
    if ((rc = check_tag(tag))) return rc;
    if (kind == NARMAI_PACC_ACC) {
        if (op == MPI_NO_OP)
            return NARMAU_ERR(NARMA_ERR_OP, "MPI_NO_OP is only for get-accumulates");
        if ((rc = narmai_acc_check(op, ttype))) return rc;
    }
    /* MPI_PROC_NULL: a valid request whose every start does nothing. */
    if (target != MPI_PROC_NULL &&
        (rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, NARMAI_CHK_NO_EPOCH)))
        return rc;
    struct narmai_pacc *a = calloc(1, sizeof(*a));
    if (a == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "persistent access");
    *a = (struct narmai_pacc){.kind = kind,
                              .oaddr = (void *)(uintptr_t)oaddr,
                              .ocount = ocount,
                              .target = target,
                              .tcount = tcount,
                              .tag = tag,
                              .otype = otype,
                              .ttype = ttype,
                              .disp = disp,
                              .op = op};
    /* A put the transport can prepare once: each start then only moves the data and publishes
     * (not on dynamic windows, whose regions may move between starts). */
    if (kind == NARMAI_PACC_PUT && target != MPI_PROC_NULL &&
        w->t.flavor != MPI_WIN_FLAVOR_DYNAMIC && !w->t.may_defer) {
        rc = narmat_pput_prep(&w->t, oaddr, ocount, otype, target, disp, tcount, ttype, tag,
                              &a->prep);
        if (rc == NARMAT_NO_PREP && w->test_pput_strict &&
            strcmp(narmat_target_name(&w->t, target), "shm") == 0)
            rc = NARMAU_ERR(NARMA_ERR_INTERN, "put not prepared (NARMA_TEST_PPUT_STRICT)");
        if (rc != NARMA_SUCCESS && rc != NARMAT_NO_PREP) {
            free(a);
            return rc;
        }
        a->prepared = rc == NARMA_SUCCESS;
    }
    if (narmai_type_hold(&a->otype) != MPI_SUCCESS) {
        free(a);
        return NARMAU_ERR(NARMA_ERR_TYPE, "origin datatype");
    }
    if (ttype == otype) /* one held copy for both sides: the same-type paths still apply */
        a->ttype = a->otype;
    else if (narmai_type_hold(&a->ttype) != MPI_SUCCESS) {
        narmai_type_release(&a->otype);
        free(a);
        return NARMAU_ERR(NARMA_ERR_TYPE, "target datatype");
    }
    /* What the first start would allocate is made here: the held copies' descriptions (new
     * handles, described on first use) and the transport's state toward target. A start then
     * needs memory only on a dynamic window, for an accumulate's repacked origin or a type
     * copied through MPI_Pack, so a Startall of other accesses starts all or none. A type
     * narma cannot describe is left to the start, which reports it as before. */
    struct narmai_request *r = NULL;
    rc = NARMA_SUCCESS;
    if (target != MPI_PROC_NULL) {
        const narmau_dtype *d;
        if (narmau_dtype_get(a->otype, &d) == NARMA_ERR_NO_MEM ||
            narmau_dtype_get(a->ttype, &d) == NARMA_ERR_NO_MEM)
            rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "datatype description");
        else
            rc = narmat_notify_prep(&w->t, target);
    }
    if (rc == NARMA_SUCCESS && (r = narmai_request_new(NARMAI_REQ_PACC, w)) == NULL)
        rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    if (rc != NARMA_SUCCESS) {
        if (a->ttype != a->otype) narmai_type_release(&a->ttype);
        narmai_type_release(&a->otype);
        free(a);
        return rc;
    }
    r->state = NARMAI_REQ_INACTIVE;
    r->pacc = a;
    r->st_src = w->t.rank;
    r->st_tag = MPI_ANY_TAG;
    w->nreqs++;
    *request = r;
    return NARMA_SUCCESS;
}

int NARMA_Put_notify_init(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                          MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Win w, int tag,
                          NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, pacc_init(NARMAI_PACC_PUT, oaddr, ocount, otype, target, disp, tcount,
                                       ttype, MPI_OP_NULL, w, tag, request));
}

int NARMA_Get_notify_init(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                          int tcount, MPI_Datatype ttype, NARMA_Win w, int tag,
                          NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, pacc_init(NARMAI_PACC_GET, oaddr, ocount, otype, target, disp, tcount,
                                       ttype, MPI_OP_NULL, w, tag, request));
}

int NARMA_Accumulate_notify_init(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                 MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op,
                                 NARMA_Win w, int tag, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, pacc_init(NARMAI_PACC_ACC, oaddr, ocount, otype, target, disp, tcount,
                                       ttype, op, w, tag, request));
}

static int pacc_issue(struct narmai_win *w, const struct narmai_pacc *a)
{
    if (a->prepared) NOTIFY_RETRY(narmat_pput_start(&w->t, &a->prep));
    switch (a->kind) {
    case NARMAI_PACC_PUT:
        NOTIFY_RETRY(narmat_put_notify(&w->t, a->oaddr, a->ocount, a->otype, a->target, a->disp,
                                       a->tcount, a->ttype, a->tag));
    case NARMAI_PACC_GET:
        NOTIFY_RETRY(narmat_get_notify(&w->t, a->oaddr, a->ocount, a->otype, a->target, a->disp,
                                       a->tcount, a->ttype, a->tag));
    default:
        NOTIFY_RETRY(narmat_acc_notify(&w->t, a->oaddr, a->ocount, a->otype, a->target, a->disp,
                                       a->tcount, a->ttype, a->op, a->tag));
    }
}

/* Start: the access, complete (locally) on return as for the R* forms; the request is then
 * COMPLETE until Test/Wait make it INACTIVE again. A failure leaves it INACTIVE. */
int narmai_pacc_start(struct narmai_request *r)
{
    struct narmai_win *w = r->win;
    const struct narmai_pacc *a = r->pacc;
    int rc = NARMA_SUCCESS;
    if (a->target != MPI_PROC_NULL) {
        /* A dynamic window's regions may have changed since init. */
        if (w->t.flavor == MPI_WIN_FLAVOR_DYNAMIC &&
            (rc = narmai_rma_check(w, a->target, a->disp, a->ocount, a->otype, a->tcount, a->ttype,
                                   NARMAI_CHK_NO_EPOCH)))
            return rc;
        if (__builtin_expect(a->kind == NARMAI_PACC_PUT && w->t.may_defer, 0)) {
            uint64_t ticket;
            if ((rc = rput_issue(w, a->oaddr, a->ocount, a->otype, a->target, a->disp, a->tcount,
                                 a->ttype, a->tag, &ticket)))
                return rc;
            if (ticket) {
                r->st_error = NARMA_SUCCESS;
                narmai_request_ticket(r, a->target, ticket);
                return NARMA_SUCCESS;
            }
        } else if ((rc = local_done(w, a->target, pacc_issue(w, a)))) {
            return rc;
        }
    }
    r->st_error = NARMA_SUCCESS;
    r->state = NARMAI_REQ_COMPLETE;
    return NARMA_SUCCESS;
}

void narmai_pacc_release(struct narmai_request *r)
{
    struct narmai_pacc *a = r->pacc;
    if (a == NULL) return;
    if (a->ttype != a->otype) narmai_type_release(&a->ttype);
    narmai_type_release(&a->otype);
    free(a);
    r->pacc = NULL;
}
