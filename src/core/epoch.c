/* The epoch queue: opening, activation, recorded operations, completion. See epoch.h. */
#include "core/epoch.h"
#include "core/rma.h"
#include "util/dtype.h"
#include <stdlib.h>
#include <string.h>

#define NARMAI_KEEP_ORIGIN_MAX 65536

static inline int ep_access_side(const struct narmai_epoch *e)
{
    return e->type != NARMAI_EP_EXPOSURE;
}
static inline int ep_exposure_side(const struct narmai_epoch *e)
{
    return e->type == NARMAI_EP_EXPOSURE || e->type == NARMAI_EP_FENCE;
}

/* Epoch objects are recycled per window, so the common case allocates nothing:
 * a recycled object keeps its member arrays (grown to the largest PSCW group
 * it has held), and every other field is set here, one by one rather than by
 * clearing the whole object (a new field must be added here). */
int narmai_epoch_open(struct narmai_win *w, int type, struct narmai_epoch **out)
{
    struct narmai_epoch *e = w->free_epochs;
    if (e != NULL) {
        w->free_epochs = e->next_free;
    } else {
        e = calloc(1, sizeof(*e));
        if (e == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "epoch");
    }
    e->type = (uint8_t)type;
    e->state = NARMAI_EP_DEFERRED;
    e->closed = 0;
    e->flushed = 0;
    e->t_open = ++w->clock;
    e->t_close = UINT64_MAX;
    e->assert = 0;
    e->n = 0;
    e->lock_rank = -1;
    e->lock_type = 0;
    e->held = 0;
    e->held_all = NULL;
    narmau_dlist_init(&e->ops);
    e->nops = 0;
    e->fence_n = 0;
    e->fence_round = 0;
    e->fence_sent = 0;
    e->err = NARMA_SUCCESS;
    e->failed = 0;
    e->lk = (struct narmai_lock_state){0};
    e->close_req = NULL;
    e->waiter = NULL;
    narmau_dlist_push_back(&w->epochs, &e->link);
    *out = e;
    return NARMA_SUCCESS;
}

int narmai_epoch_reserve(struct narmai_win *w, int n)
{
    int have = 0;
    for (struct narmai_epoch *e = w->free_epochs; e != NULL && have < n; e = e->next_free)
        have++;
    for (; have < n; have++) {
        struct narmai_epoch *e = calloc(1, sizeof(*e));
        if (e == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "epoch");
        e->next_free = w->free_epochs;
        w->free_epochs = e;
    }
    return NARMA_SUCCESS;
}

int narmai_epoch_open_spared(struct narmai_win *w, int type, struct narmai_epoch **out)
{
    int rc = narmai_epoch_reserve(w, 1 + NARMAI_EPOCH_SPARES);
    return rc ? rc : narmai_epoch_open(w, type, out);
}

/* Room for a PSCW group of n members (kept when the object is recycled). */
int narmai_epoch_members(struct narmai_epoch *e, int n)
{
    if (n <= e->cap) return NARMA_SUCCESS;
    int *ranks = realloc(e->ranks, sizeof(int) * (size_t)n);
    if (ranks == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "epoch group");
    e->ranks = ranks;
    uint64_t *ids = realloc(e->ids, sizeof(uint64_t) * (size_t)n);
    if (ids == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "epoch group");
    e->ids = ids;
    e->cap = n;
    return NARMA_SUCCESS;
}

void narmai_epoch_free(struct narmai_win *w, struct narmai_epoch *e)
{
    narmau_dlist_remove(&e->link);
    free(e->held_all);
    e->held_all = NULL;
    e->next_free = w->free_epochs;
    w->free_epochs = e;
}

void narmai_epoch_cache_free(struct narmai_win *w)
{
    for (struct narmai_epoch *e = w->free_epochs, *n; e != NULL; e = n) {
        n = e->next_free;
        free(e->ranks);
        free(e->ids);
        free(e);
    }
    w->free_epochs = NULL;
}

/* May e activate while the earlier, still active epoch p is not DONE? */
static int may_overlap(const struct narmai_win *w, const struct narmai_epoch *p,
                       const struct narmai_epoch *e)
{
    if (p->t_close > e->t_open) return 1; /* open at the same time in the program */
    if (p->type == NARMAI_EP_FENCE || e->type == NARMAI_EP_FENCE || p->type == NARMAI_EP_LOCK_ALL ||
        e->type == NARMAI_EP_LOCK_ALL)
        return 0;
    int pa = ep_access_side(p), ea = ep_access_side(e);
    if (ea && pa) return (w->reorder & NARMAI_AAAR) != 0;
    if (ea && !pa) return (w->reorder & NARMAI_AAER) != 0;
    if (!ea && !pa) return (w->reorder & NARMAI_EAER) != 0;
    return (w->reorder & NARMAI_EAAR) != 0;
}

static int can_activate(struct narmai_win *w, struct narmai_epoch *e)
{
    for (narmau_dlist *pos = w->epochs.next; pos != &e->link; pos = pos->next) {
        struct narmai_epoch *p = narmau_container_of(pos, struct narmai_epoch, link);
        if (p->state == NARMAI_EP_DEFERRED) return 0; /* in order, never skipping */
        if (p->state != NARMAI_EP_DONE && !may_overlap(w, p, e)) return 0;
    }
    return 1;
}

/* Activation: the epoch's ids are drawn from the per-peer counters now, in
 * activation order, which is what makes FIFO matching O(1). */
static void activate(struct narmai_win *w, struct narmai_epoch *e)
{
    e->state = NARMAI_EP_ACTIVE;
    switch (e->type) {
    case NARMAI_EP_ACCESS:
        for (int i = 0; i < e->n; i++)
            e->ids[i] = ++w->a_req[e->ranks[i]];
        break;
    case NARMAI_EP_EXPOSURE:
        /* The grant releases our earlier stores to the window (ctl_add is a
         * release). Every member gets its grant even if one fails, so only the
         * failed origin is left waiting; the epoch still waits for the members
         * that were granted (they may be writing into the window), but not for
         * the failed one (ids 0: it may never have learnt of the epoch). */
        for (int i = 0; i < e->n; i++) {
            int r = e->ranks[i];
            e->ids[i] = ++w->e_open[r];
            int rc = narmat_ctl_add(&w->t, r, NARMAT_CTL_GRANT, w->t.rank, 1);
            if (rc) {
                narmai_epoch_error(e, rc);
                e->failed = 1;
                e->ids[i] = 0;
            }
        }
        break;
    case NARMAI_EP_LOCK:
        if (e->assert & MPI_MODE_NOCHECK)
            e->held = 1;
        else
            (void)narmai_epoch_target_ready(w, e, e->lock_rank);
        break;
    default:
        break;
    }
}

/* One lock attempt for e (lock: its rank; lock_all: target's shared lock). An
 * error fails the epoch: the lock will never be held. */
static int lock_attempt(struct narmai_win *w, struct narmai_epoch *e, int type, int rank)
{
    int rc;
    if (narmai_lock_try(w, type, rank, &e->lk, &rc)) return 1;
    if (rc) {
        narmai_epoch_error(e, rc);
        e->failed = 1;
        narmai_lock_abandon(w, rank, &e->lk);
    }
    return 0;
}

int narmai_epoch_target_ready(struct narmai_win *w, struct narmai_epoch *e, int target)
{
    if (e->state != NARMAI_EP_ACTIVE) return 0;
    switch (e->type) {
    case NARMAI_EP_ACCESS: {
        for (int i = 0; i < e->n; i++)
            if (e->ranks[i] == target)
                return narmat_ctl_load(&w->t, NARMAT_CTL_GRANT, target) >= e->ids[i];
        return 0;
    }
    case NARMAI_EP_LOCK:
        if (!e->held && !e->failed && lock_attempt(w, e, e->lock_type, e->lock_rank)) e->held = 1;
        return e->held;
    case NARMAI_EP_LOCK_ALL:
        if (!e->held_all[target] && !e->failed && lock_attempt(w, e, MPI_LOCK_SHARED, target))
            e->held_all[target] = 1;
        return e->held_all[target];
    default:
        return 1;
    }
}

int narmai_op_issue(struct narmai_win *w, struct narmai_op *op)
{
    MPI_Request mreq = MPI_REQUEST_NULL, *mp = op->req ? &mreq : NULL;
    int rc;
    switch (op->kind) {
    case NARMAI_OP_PUT:
        rc = narmat_put(&w->t, op->oaddr, op->ocount, op->otype, op->target, op->disp, op->tcount,
                        op->ttype, mp);
        break;
    case NARMAI_OP_GET:
        rc = narmat_get(&w->t, op->raddr, op->ocount, op->otype, op->target, op->disp, op->tcount,
                        op->ttype, mp);
        break;
    case NARMAI_OP_ACC:
        rc = narmat_acc(&w->t, op->oaddr, op->ocount, op->otype, op->raddr, op->rcount, op->rtype,
                        op->target, op->disp, op->tcount, op->ttype, op->op, mp);
        break;
    default:
        rc = narmat_cas(&w->t, op->oaddr, op->caddr, op->raddr, op->ttype, op->target, op->disp);
        break;
    }
    if (op->req != NULL) { /* the request no longer refers to the operation */
        op->req->ctx = NULL;
        op->req->st_error = rc;
        op->req->mpi_req = mreq;
        if (mreq == MPI_REQUEST_NULL) op->req->state = NARMAI_REQ_COMPLETE;
        op->req = NULL;
    }
    return rc;
}

/* A recorded operation that will never be issued: its request completes with rc. */
static void op_abandon(struct narmai_op *op, int rc)
{
    if (op->req == NULL) return;
    op->req->ctx = NULL;
    op->req->st_error = rc;
    op->req->state = NARMAI_REQ_COMPLETE;
    op->req = NULL;
}

void narmai_type_release(MPI_Datatype *t)
{
    if (*t == MPI_DATATYPE_NULL) return;
    if (!narmau_dtype_is_named(*t)) MPI_Type_free(t);
}

int narmai_type_hold(MPI_Datatype *t)
{
    if (*t == MPI_DATATYPE_NULL) return MPI_SUCCESS;
    if (narmau_dtype_is_named(*t)) return MPI_SUCCESS;
    /* The program may free its datatype once the call returns. */
    return MPI_Type_dup(*t, t);
}

static void op_free(struct narmai_op *op)
{
    if (op->req != NULL)
        op_abandon(op, NARMAU_ERR(NARMA_ERR_WIN, "window freed before the operation was issued"));
    narmai_type_release(&op->otype);
    narmai_type_release(&op->rtype);
    narmai_type_release(&op->ttype);
    free(op);
}

static void op_unrecord(struct narmai_win *w, struct narmai_op *op)
{
    w->nrecorded--;
    narmau_dlist_remove(&op->link);
    op_free(op);
}

/* Issue recorded operations whose target is ready, keeping call order per
 * target. Errors stay on the epoch (and on the operation's request); in a
 * failed epoch the operations left are dropped with the epoch's error. */
static void replay(struct narmai_win *w, struct narmai_epoch *e)
{
    narmau_dlist *pos, *tmp;
    uint64_t blocked = 0; /* small bloom of targets that must keep order */
    narmau_dlist_foreach_safe(pos, tmp, &e->ops)
    {
        struct narmai_op *op = narmau_container_of(pos, struct narmai_op, link);
        uint64_t bit = UINT64_C(1) << (op->target & 63);
        if (e->failed) {
            op_abandon(op, e->err);
        } else if ((blocked & bit) || !narmai_epoch_target_ready(w, e, op->target)) {
            if (!e->failed) { /* else dropped on the next pass */
                blocked |= bit;
                continue;
            }
            op_abandon(op, e->err);
        } else if (narmai_test_fault(&w->test_fail_replay, 0)) {
            int rc = NARMAU_ERR(NARMA_ERR_INTERN, "injected fault (NARMA_TEST_FAIL_REPLAY)");
            narmai_epoch_error(e, rc);
            op_abandon(op, rc);
        } else {
            narmai_epoch_error(e, narmai_op_issue(w, op));
        }
        op_unrecord(w, op);
    }
}

/* The epoch that an RMA call to target belongs to in the program's view. */
static struct narmai_epoch *current_for(struct narmai_win *w, int target, int *slot_err)
{
    if (w->lock_ep[target] != NULL) return w->lock_ep[target];
    struct narmai_epoch *e = w->cur_access;
    if (e == NULL) {
        *slot_err = NARMAU_ERR(NARMA_ERR_RMA_SYNC, "no access epoch is open on the window");
        return NULL;
    }
    if (e->type == NARMAI_EP_ACCESS && w->acc_member[target] == 0) {
        *slot_err = NARMAU_ERR(NARMA_ERR_RMA_SYNC, "rank %d is not in the access group", target);
        return NULL;
    }
    if (e->type == NARMAI_EP_LOCK) e = NULL;
    if (e == NULL) *slot_err = NARMAU_ERR(NARMA_ERR_RMA_SYNC, "rank %d is not locked", target);
    return e;
}

int narmai_rma_submit(struct narmai_win *w, const struct narmai_op *tmpl)
{
    int rc = NARMA_SUCCESS;
    struct narmai_epoch *e = current_for(w, tmpl->target, &rc);
    if (e == NULL) return rc;
    if (e->failed) return e->err; /* e.g. the lock attempt failed: nothing can be issued */
    if (narmau_dlist_empty(&e->ops) && narmai_epoch_target_ready(w, e, tmpl->target)) {
        w->op_seq++;
        struct narmai_op op = *tmpl;
        rc = narmai_op_issue(w, &op);
        /* Counted unless the transport refused it for memory (then nothing was issued, and an
         * empty fence epoch stays empty: it still gives way to a lock or PSCW epoch). */
        if (rc != NARMA_ERR_NO_MEM) e->nops++;
        return rc;
    }
    if (e->failed) return e->err; /* the attempt just made failed */
    /* Programs often reuse a put's origin buffer before the epoch closes (MPI
     * forbids it, but issuing at once hides the error); keep small contiguous
     * origins by value so a recorded operation behaves the same. */
    size_t keep = 0;
    const narmau_dtype *od = NULL;
    if ((tmpl->kind == NARMAI_OP_PUT || (tmpl->kind == NARMAI_OP_ACC && tmpl->op != MPI_NO_OP)) &&
        narmau_dtype_get(tmpl->otype, &od) == NARMA_SUCCESS && od->contiguous &&
        (size_t)tmpl->ocount * (size_t)od->size <= NARMAI_KEEP_ORIGIN_MAX)
        keep = (size_t)tmpl->ocount * (size_t)od->size;
    /* Counted once recorded: an operation that could not be (no memory) leaves an empty fence
     * epoch empty, so that it still gives way to a lock or PSCW epoch. */
    struct narmai_op *op = malloc(sizeof(*op) + keep);
    if (op == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "recorded operation");
    *op = *tmpl;
    if (keep > 0) {
        memcpy(op + 1, (const char *)tmpl->oaddr + od->true_lb, keep);
        op->oaddr = (const char *)(op + 1) - od->true_lb;
    }
    /* Hold the datatypes one by one, so a failure frees only our duplicates. */
    int held = 0;
    if (narmai_type_hold(&op->otype) == 0) {
        held = 1;
        if (narmai_type_hold(&op->rtype) == 0) {
            held = 2;
            if (narmai_type_hold(&op->ttype) == 0) held = 3;
        }
    }
    if (held < 3) {
        if (held > 1) narmai_type_release(&op->rtype);
        if (held > 0) narmai_type_release(&op->otype);
        free(op);
        return NARMAU_ERR(NARMA_ERR_TYPE, "cannot hold datatype for a deferred operation");
    }
    e->nops++;
    op->seq = ++w->op_seq;
    w->nrecorded++;
    if (op->req != NULL) { /* NARMA_Request_free detaches the request through ctx */
        op->req->state = NARMAI_REQ_ACTIVE;
        op->req->ctx = op;
    }
    narmau_dlist_push_back(&e->ops, &op->link);
    return NARMA_SUCCESS;
}

/* ---- completion of closed epochs ---- */

/* Fence barrier. Up to NARMA_FENCE_FLAT_MAX ranks (default 16): one step, every rank adds
 * 1 to every other rank's counter and waits for its own to reach
 * n * (P - 1); the last rank to arrive completes everybody's barrier, so a
 * rank that called Win_ifence and then computes without calling narma delays
 * nobody. Beyond that, a dissemination barrier (ceil(log2 P) rounds, P log P
 * updates instead of P^2), whose later rounds need each rank's progress. */
static void fence_send(struct narmai_win *w, struct narmai_epoch *e, int to, int round)
{
    int rc = narmat_ctl_add(&w->t, to, NARMAT_CTL_FENCE, round, 1);
    if (rc) { /* the barrier cannot complete here: report instead of waiting */
        narmai_epoch_error(e, rc);
        e->failed = 1;
    }
}

static int fence_barrier(struct narmai_win *w, struct narmai_epoch *e)
{
    if ((uint32_t)w->t.size <= w->fence_flat_max) {
        if (!e->fence_sent) {
            for (int d = 1; d < w->t.size; d++)
                fence_send(w, e, (w->t.rank + d) % w->t.size, 0);
            e->fence_sent = 1;
        }
        return e->failed || narmat_ctl_load(&w->t, NARMAT_CTL_FENCE, 0) >=
                                e->fence_n * (uint64_t)(w->t.size - 1);
    }
    for (int d = 1 << e->fence_round; d < w->t.size; d <<= 1) {
        if (!e->fence_sent) {
            fence_send(w, e, (w->t.rank + d) % w->t.size, e->fence_round);
            e->fence_sent = 1;
            if (e->failed) return 1;
        }
        if (narmat_ctl_load(&w->t, NARMAT_CTL_FENCE, e->fence_round) < e->fence_n) return 0;
        e->fence_round++;
        e->fence_sent = 0;
    }
    return 1;
}

/* Try to complete a closed, active epoch whose operations are all issued.
 * Errors go to the epoch; a failed epoch completes without waiting for what
 * can no longer happen. */
static int try_complete(struct narmai_win *w, struct narmai_epoch *e, int may_block)
{
    if (!narmau_dlist_empty(&e->ops)) return 0;
    switch (e->type) {
    case NARMAI_EP_FENCE:
        if (e->failed) return 1;
        if (!e->flushed) {
            if (!may_block) return 0;
            narmai_epoch_error(e, narmat_flush(&w->t, -1));
            e->flushed = 1;
        }
        return fence_barrier(w, e);
    case NARMAI_EP_ACCESS:
        for (int i = 0; i < e->n; i++)
            if (narmat_ctl_load(&w->t, NARMAT_CTL_GRANT, e->ranks[i]) < e->ids[i]) return 0;
        if (!may_block) return 0;
        /* ctl_add orders our data to each target before the count it acquires;
         * every target gets its count even if one update fails. */
        for (int i = 0; i < e->n; i++)
            narmai_epoch_error(e,
                               narmat_ctl_add(&w->t, e->ranks[i], NARMAT_CTL_DONE, w->t.rank, 1));
        return 1;
    case NARMAI_EP_EXPOSURE:
        for (int i = 0; i < e->n; i++)
            if (narmat_ctl_load(&w->t, NARMAT_CTL_DONE, e->ranks[i]) < e->ids[i]) return 0;
        return 1;
    case NARMAI_EP_LOCK:
        if (!narmai_epoch_target_ready(w, e, e->lock_rank)) return e->failed; /* never held */
        if (!may_block) return 0;
        narmai_epoch_error(e,
                           narmai_lock_release(w, e->lock_rank,
                                               (e->assert &MPI_MODE_NOCHECK) ? -1 : e->lock_type));
        return 1;
    case NARMAI_EP_LOCK_ALL:
        if (!may_block) return 0;
        for (int r = 0; r < w->t.size; r++)
            if (e->held_all[r] == 1)
                narmai_epoch_error(e, narmai_lock_release(w, r, MPI_LOCK_SHARED));
        /* Targets reached only by notified accesses were never locked: with deferred
         * notifications (narma_notify_completion=flush), or on a window whose request-based
         * puts may still be moving (pulled puts), they are completed here too. */
        if ((e->assert &MPI_MODE_NOCHECK) || w->t.notify_deferred || w->t.may_defer)
            narmai_epoch_error(e, narmat_flush(&w->t, -1));
        return 1;
    }
    return 0;
}

static void epoch_finish(struct narmai_win *w, struct narmai_epoch *e)
{
    int rc = e->err;
    e->state = NARMAI_EP_DONE;
    if (e->waiter != NULL) { /* a blocking close waits on the stack */
        e->waiter->done = 1;
        e->waiter->rc = rc;
    }
    if (e->close_req != NULL) {
        e->close_req->st_error = rc;
        e->close_req->state = NARMAI_REQ_COMPLETE;
        e->close_req->ctx = NULL;
        e->close_req = NULL;
    }
    if (e->closed) narmai_epoch_free(w, e);
}

/* One pass over the queue. may_block: flushes (blocking on the mpi transport)
 * are allowed; epoch-closing calls pass 0 there so they never wait. */
static void epoch_pass(struct narmai_win *w, int may_block)
{
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &w->epochs)
    {
        struct narmai_epoch *e = narmau_container_of(pos, struct narmai_epoch, link);
        if (e->state == NARMAI_EP_DEFERRED) {
            if (!can_activate(w, e)) break;
            activate(w, e);
        }
        if (e->state != NARMAI_EP_ACTIVE) continue;
        if (!narmau_dlist_empty(&e->ops)) replay(w, e);
        if (e->closed && try_complete(w, e, may_block)) epoch_finish(w, e);
    }
}

void narmai_epoch_progress(struct narmai_win *w)
{
    if (narmau_dlist_empty(&w->epochs)) return;
    /* The common case of a program that keeps one epoch open (lock_all for its whole life):
     * active, open, nothing recorded. epoch_pass would find nothing to do; say so in a few
     * instructions, since every progress pass (every wait) comes here. */
    const struct narmai_epoch *e = narmau_container_of(w->epochs.next, struct narmai_epoch, link);
    if (w->epochs.next == w->epochs.prev && e->state == NARMAI_EP_ACTIVE && !e->closed &&
        narmau_dlist_empty(&e->ops))
        return;
    epoch_pass(w, 1);
}

/* Close e in the program; completion happens now if possible, else in
 * progress. With request == NULL (the blocking calls) wait here instead, with
 * no request object at all. */
int narmai_epoch_close(struct narmai_win *w, struct narmai_epoch *e, NARMA_Request *request)
{
    struct narmai_request *r = NULL;
    if (request != NULL && (r = narmai_request_new(NARMAI_REQ_EPOCH, w)) == NULL)
        return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    e->closed = 1;
    e->t_close = ++w->clock;
    if (request == NULL) {
        struct narmai_ep_waiter wt = {0, NARMA_SUCCESS};
        narmau_waiter spin = {0};
        e->waiter = &wt;
        epoch_pass(w, 1);
        while (!wt.done) {
            narmai_progress_on(w);
            if (wt.done) break;
            narmau_wait_step(&spin);
        }
        return wt.rc;
    }
    r->st_src = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->ctx = e;
    e->close_req = r;
    *request = r;
    epoch_pass(w, narmat_flush_blocks(&w->t) ? 0 : 1);
    return NARMA_SUCCESS;
}

int narmai_request_done(struct narmai_win *w, NARMA_Request *request)
{
    if (request == NULL) return NARMA_SUCCESS; /* blocking form: no request */
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_EPOCH, w);
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    r->state = NARMAI_REQ_COMPLETE;
    r->st_src = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    *request = r;
    return NARMA_SUCCESS;
}

/* Anything still open or pending on this rank's side of the window? A fence
 * epoch left open by the last fence holds nothing and is not pending. */
int narmai_epoch_free_check(struct narmai_win *w)
{
    narmau_dlist *pos;
    for (pos = w->epochs.next; pos != &w->epochs; pos = pos->next) {
        struct narmai_epoch *e = narmau_container_of(pos, struct narmai_epoch, link);
        if (e->type == NARMAI_EP_FENCE && !e->closed && e->nops == 0) continue;
        if (e->state == NARMAI_EP_DONE && !e->closed)
            return NARMAU_ERR(NARMA_ERR_PENDING, "an epoch is still open");
        return NARMAU_ERR(NARMA_ERR_PENDING, "an epoch is open or not yet complete");
    }
    if (w->nreqs)
        return NARMAU_ERR(NARMA_ERR_PENDING, "%d notification request(s) not freed", w->nreqs);
    if (w->nflush)
        return NARMAU_ERR(NARMA_ERR_PENDING, "%d flush request(s) not complete", w->nflush);
    return NARMA_SUCCESS;
}

void narmai_epoch_drop_all(struct narmai_win *w)
{
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &w->epochs)
    {
        struct narmai_epoch *e = narmau_container_of(pos, struct narmai_epoch, link);
        narmau_dlist *opos, *otmp;
        narmau_dlist_foreach_safe(opos, otmp, &e->ops)
        {
            op_free(narmau_container_of(opos, struct narmai_op, link));
        }
        w->nrecorded = 0;
        narmai_epoch_free(w, e);
    }
    w->cur_access = w->cur_exposure = NULL;
}

/* An epoch's operations are in call order, so each scan stops at the first
 * operation newer than upto. */
int narmai_recorded_upto(struct narmai_win *w, int target, uint64_t upto)
{
    if (w->nrecorded == 0) return 0;
    for (narmau_dlist *pos = w->epochs.next; pos != &w->epochs; pos = pos->next) {
        struct narmai_epoch *e = narmau_container_of(pos, struct narmai_epoch, link);
        for (narmau_dlist *o = e->ops.next; o != &e->ops; o = o->next) {
            const struct narmai_op *op = narmau_container_of(o, struct narmai_op, link);
            if (op->seq > upto) break;
            if (target < 0 || op->target == target) return 1;
        }
    }
    return 0;
}

/* Test-only fault injection, read from the environment when a window is
 * created (documented in narma_info; never needed by programs):
 *   NARMA_TEST_FAIL_REPLAY=N  the Nth operation replayed from the record on the
 *                             window fails with NARMA_ERR_INTERN (once);
 *   NARMA_TEST_FAIL_LOCK=N    the Nth passive-target lock attempt on the window,
 *                             and every later one, fails with NARMA_ERR_INTERN;
 *   NARMA_TEST_PPUT_STRICT=1  Put_notify_init toward a target served by shm fails
 *                             with NARMA_ERR_INTERN when the transport did not
 *                             prepare the put (a test that every put it makes is
 *                             preparable proves the prepared path ran).
 * They exercise the error paths that real transports reach only on network
 * failures. */
void narmai_test_faults_init(struct narmai_win *w)
{
    const char *v = getenv("NARMA_TEST_FAIL_REPLAY");
    w->test_fail_replay = v ? (uint32_t)strtoul(v, NULL, 0) : 0;
    v = getenv("NARMA_TEST_FAIL_LOCK");
    w->test_fail_lock = v ? (uint32_t)strtoul(v, NULL, 0) : 0;
    v = getenv("NARMA_TEST_PPUT_STRICT");
    w->test_pput_strict = v != NULL && strcmp(v, "1") == 0;
}

/* countdown 0: off; it fails the call that brings it to 1 (and the later ones if sticky). */
int narmai_test_fault(uint32_t *countdown, int sticky)
{
    if (*countdown == 0) return 0;
    if (*countdown > 1) {
        (*countdown)--;
        return 0;
    }
    if (!sticky) *countdown = 0;
    return 1;
}

int narmai_fence_empty(const struct narmai_win *w)
{
    const struct narmai_epoch *f = w->cur_access;
    return f != NULL && f->type == NARMAI_EP_FENCE && f->nops == 0;
}

/* An empty fence epoch left open by the last fence yields to other
 * synchronisation (post, start, lock, lock_all), as MPI allows. */
int narmai_fence_yield(struct narmai_win *w)
{
    if (!narmai_fence_empty(w)) return -1;
    struct narmai_epoch *f = w->cur_access;
    const int assert = f->assert;
    w->cur_access = NULL;
    narmai_epoch_free(w, f);
    return assert;
}

int narmai_fence_open(struct narmai_win *w, int assert)
{
    struct narmai_epoch *e;
    int rc = narmai_epoch_open(w, NARMAI_EP_FENCE, &e);
    if (rc) return rc;
    e->assert = assert;
    w->cur_access = e;
    return NARMA_SUCCESS;
}
