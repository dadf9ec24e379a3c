/*
 * Counter-indexed notifications (the MPI-5.1 draft's model; narma.h, "Counter-indexed
 * notifications"; docs/notify-models.md).
 *
 * How they travel. A counter-notified access is a tag-matched notified access whose tag is
 * negative: tag = -1 - idx names counter idx (tags of the tag-matched model are 0 ..
 * NARMA_TAG_UB, so the two never meet). Every transport carries it exactly as it carries a
 * tag-matched one, so the guarantee is the same one, already tested for every path (plain,
 * staged, pulled, accumulate): the record is published only after the data access is
 * complete at the target (shm: release store of the record after the copy; mpi: data flush,
 * then the record's Accumulate; hybrid: whichever serves the pair). At the target the
 * progress engine drains records in arrival order; narmai_notify_arrived hands a negative
 * tag to narmai_counter_arrived, which adds 1 to counter idx instead of matching.
 *
 * Why not a remote fetch_add on a counter word in shared memory: the record has to be
 * written anyway for the tag-matched model and costs one cache line, while a second atomic
 * on another line would add a cross-core transfer per access; counting at the target keeps
 * one mechanism, one ordering argument and no per-peer state. The price: counters advance
 * when the target enters narma (reading a counter or waiting drives progress first), as
 * tag-matched notifications do.
 *
 * Atomicity of reset: counters are only ever touched by this process (increments happen in
 * its progress engine, on its thread), so a read-then-zero cannot lose an increment.
 *
 * Get-accumulate has no notified form in the transports: it is issued as a blocking
 * get-accumulate, flushed to the target (complete there), then a notification of 0 bytes
 * is sent, which every transport orders after completed accesses.
 */
#include "core/rma.h"
#include "core/epoch.h"
#include <stdint.h>
#include <stdlib.h>
#include "transport/transport.h"

/* Largest counter count per process (the mpi transport carries indices in 30 bits) and the
 * largest value (counters saturate there). */
#define NARMAI_CTR_NUM_UB   (1 << 24)
#define NARMAI_CTR_VALUE_UB INT64_MAX

static const MPI_Count ctr_num_ub = NARMAI_CTR_NUM_UB;
static const MPI_Count ctr_value_ub = NARMAI_CTR_VALUE_UB;

static inline int32_t ctr_tag(int idx) { return -1 - (int32_t)idx; }

/* A pending threshold request off the window's list (reached or withdrawn): it no longer
 * keeps the window busy. */
static void threshold_unlink(struct narmai_request *r)
{
    narmau_dlist_remove(&r->link);
    r->win->nflush--;
    r->win->nthresh--;
}

void narmai_counter_arrived(struct narmai_win *w, int32_t tag)
{
    int64_t idx = -1 - (int64_t)tag;
    /* An index past this process's counters can only come from an origin that checked
     * against an older NARMA_Win_set_num_notify (a program error the draft leaves
     * undefined): dropped. */
    if (idx >= w->nctr || w->ctr[idx] >= (uint64_t)NARMAI_CTR_VALUE_UB) return;
    uint64_t v = ++w->ctr[idx];
    if (w->nthresh == 0) return;
    /* Counters only grow here (reset and set_num_notify lower them or replace them, which
     * completes nothing), so this is the one place a pending threshold can be reached. The
     * walk is over the pending thresholds, like matching over the active tag-matched
     * requests: a handful in the programs this model is for. */
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &w->thresh_reqs)
    {
        struct narmai_request *r = narmau_container_of(pos, struct narmai_request, link);
        if (r->target == idx && v >= r->upto) {
            threshold_unlink(r);
            r->state = NARMAI_REQ_COMPLETE;
        }
    }
}

void narmai_counter_free(struct narmai_win *w)
{
    free(w->ctr);
    free(w->ctr_num);
    w->ctr = NULL;
    w->ctr_num = NULL;
    w->nctr = 0;
    w->ctr_memo.n = 0; /* remembers no target now */
}

int narmai_counter_attr(struct narmai_win *w, int keyval, void *val)
{
    (void)w;
    if (keyval == NARMA_WIN_NOTIFICATION_NUM_UB)
        *(const MPI_Count **)val = &ctr_num_ub;
    else if (keyval == NARMA_WIN_NOTIFICATION_VALUE_UB)
        *(const MPI_Count **)val = &ctr_value_ub;
    else
        return 0;
    return 1;
}

static void drain_cb(void *arg, int32_t src, int32_t tag, int64_t bytes)
{
    narmai_notify_arrived(arg, src, tag, bytes);
}

static int api_win_set_num_notify(NARMA_Win w, MPI_Info info, int n)
{
    (void)info;
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    int bad = n < 0 || n > NARMAI_CTR_NUM_UB;
    int *num = malloc((size_t)w->t.size * sizeof(int));
    uint64_t *ctr = n > 0 && !bad ? calloc((size_t)n, sizeof(uint64_t)) : NULL;
    int mine = bad ? -1 : (num == NULL || (n > 0 && ctr == NULL)) ? -2 : n;
    /* Deferred records (narmai_notify_completion=flush) go out before the others look. */
    int rc = w->t.notify_deferred ? narmat_flush(&w->t, -1) : NARMA_SUCCESS;
    /* A rank that cannot go on (its flush failed, a threshold request is pending) says so in
     * the allgather too, so that every rank returns instead of waiting in the barrier below. */
    if (mine >= 0 && (rc || w->nthresh > 0)) mine = rc ? -4 : -3;
    /* First the worst code of all (a rank without memory for the table can take part in that
     * but not in the allgather), then every rank's count; both polled until every rank is
     * there: a peer may still wait for room in our ring. */
    MPI_Request all;
    int worst = mine;
    int all_rc = MPI_Iallreduce(&mine, &worst, 1, MPI_INT, MPI_MIN, w->t.comm, &all);
    if (all_rc == MPI_SUCCESS && narmai_coll_wait(w, &all) != NARMA_SUCCESS) all_rc = MPI_ERR_OTHER;
    if (all_rc == MPI_SUCCESS && worst >= 0) {
        all_rc = MPI_Iallgather(&mine, 1, MPI_INT, num, 1, MPI_INT, w->t.comm, &all);
        if (all_rc == MPI_SUCCESS && narmai_coll_wait(w, &all) != NARMA_SUCCESS)
            all_rc = MPI_ERR_OTHER;
    }
    if (all_rc != MPI_SUCCESS) {
        free(num);
        free(ctr);
        return NARMAU_ERR(NARMA_ERR_MPI, "agreement on the counter counts");
    }
    if (worst < 0 || rc) {
        free(num);
        free(ctr);
        if (bad) return NARMAU_ERR(NARMA_ERR_ARG, "%d counters: want 0..%d", n, NARMAI_CTR_NUM_UB);
        if (rc) return rc;
        if (mine == -2) return NARMAU_ERR(NARMA_ERR_NO_MEM, "counter table");
        if (mine == -3)
            return NARMAU_ERR(NARMA_ERR_PENDING, "%d threshold request(s) pending", w->nthresh);
        if (worst <= -3)
            return NARMAU_ERR(NARMA_ERR_PENDING, "another rank has threshold requests pending "
                                                 "or could not flush its notified accesses");
        return worst == -1 ? NARMAU_ERR(NARMA_ERR_ARG, "another rank asked for a bad count")
                           : NARMAU_ERR(NARMA_ERR_NO_MEM, "counters (on another rank)");
    }
    /* Every rank is here, so every access it completed before is in our ring: count it into
     * the old counters, then start from zero. */
    while (narmat_poll(&w->t, drain_cb, w) > 0)
        ;
    narmai_counter_free(w);
    w->ctr = ctr;
    w->ctr_num = num;
    w->nctr = n;
    /* Nobody may count into the new counters before every rank has installed them. */
    if (MPI_Barrier(w->t.comm) != MPI_SUCCESS)
        return NARMAU_ERR(NARMA_ERR_MPI, "barrier after setting counters");
    return NARMA_SUCCESS;
}

int NARMA_Win_set_num_notify(NARMA_Win w, MPI_Info info, int n)
{
    NARMAI_API_LOCK();
    narmai_coll_begin(w);
    int rc = api_win_set_num_notify(w, info, n);
    narmai_coll_end(w);
    return narmai_win_ret(w, rc);
}

static int api_win_get_num_notify(NARMA_Win w, int target, int *n)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (n == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL n");
    if (target < 0 || target >= w->t.size)
        return NARMAU_ERR(NARMA_ERR_RANK, "target %d outside 0..%d", target, w->t.size - 1);
    *n = w->ctr_num ? w->ctr_num[target] : 0;
    return NARMA_SUCCESS;
}

int NARMA_Win_get_num_notify(NARMA_Win w, int target, int *n)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_get_num_notify(w, target, n));
}

/* Waits (driving progress, yielding) until e, the passive-target epoch toward target, is
 * active with its lock held and nothing recorded before us. */
static __attribute__((noinline, cold)) int passive_wait(struct narmai_win *w,
                                                        struct narmai_epoch *e, int target)
{
    narmau_waiter wt = {0};
    while (!narmai_epoch_target_ready(w, e, target) || !narmau_dlist_empty(&e->ops)) {
        if (e->failed)
            return e->err ? e->err
                          : NARMAU_ERR(NARMA_ERR_RMA_SYNC, "the epoch toward %d failed", target);
        narmai_progress_on(w);
        narmau_wait_step(&wt);
    }
    return NARMA_SUCCESS;
}

/* The passive-target epoch toward target (the draft allows no other), active with its lock
 * held and nothing recorded before us, so the access is ordered after the program's earlier
 * calls. The common case (a lock_all or lock epoch long since held, nothing recorded) is
 * answered from the epoch's flags; only an epoch still being acquired goes to passive_wait
 * (narmai_epoch_target_ready then also tries the lock). */
static inline int passive_ready(struct narmai_win *w, int target)
{
    struct narmai_epoch *e = w->lock_ep[target];
    if (e == NULL && w->cur_access != NULL && w->cur_access->type == NARMAI_EP_LOCK_ALL)
        e = w->cur_access;
    if (e == NULL)
        return NARMAU_ERR(NARMA_ERR_RMA_SYNC,
                          "counter notifications need a passive-target epoch (lock or "
                          "lock_all) toward rank %d",
                          target);
    int held = e->type == NARMAI_EP_LOCK_ALL ? e->held_all[target] : e->held;
    if (e->state == NARMAI_EP_ACTIVE && held && narmau_dlist_empty(&e->ops)) return NARMA_SUCCESS;
    return passive_wait(w, e, target);
}

static int check_idx(struct narmai_win *w, int target, int idx)
{
    int n = w->ctr_num ? w->ctr_num[target] : 0;
    if (idx < 0 || idx >= n)
        return NARMAU_ERR(NARMA_ERR_NOTIFY_IDX, "notification index %d: rank %d has %d counter(s)",
                          idx, target, n);
    return NARMA_SUCCESS;
}

/* May a counter-notified access to counter idx of target go out now (check_idx, then
 * passive_ready)? The answer for the last target found ready is remembered in the window
 * (w->ctr_memo) and holds while no synchronisation call opened or closed an epoch (w->clock
 * unchanged: the epoch and its lock toward target are still those found ready) and no
 * operation is recorded (w->nrecorded 0: none waits in that epoch); set_num_notify forgets
 * it. A program that sends to one target in a long lock_all epoch so reads two words of the
 * window and the memo, all in the window's object, instead of the counter counts, the lock
 * epoch table, the epoch and its lock flags, four or five cache lines elsewhere: in the test
 * machine's slow state (docs/notify-models.md, "Cost") those reads cost about 50 ns of each
 * half round trip of the counter ping-pong (issue 12). */
static inline int ctr_ready(struct narmai_win *w, int target, int idx)
{
    if (target == w->ctr_memo.target && w->clock == w->ctr_memo.clock && w->nrecorded == 0 &&
        idx >= 0 && idx < w->ctr_memo.n)
        return NARMA_SUCCESS;
    int rc = check_idx(w, target, idx);
    if (rc || (rc = passive_ready(w, target))) return rc;
    if (w->nrecorded == 0) {
        w->ctr_memo.target = target;
        w->ctr_memo.n = w->ctr_num[target];
        w->ctr_memo.clock = w->clock;
    }
    return NARMA_SUCCESS;
}

enum { CTR_PUT, CTR_GET, CTR_ACC, CTR_GACC };

struct ctr_access {
    int kind;
    const void *oaddr;
    void *raddr;
    int ocount, rcount, target, tcount, idx;
    MPI_Datatype otype, rtype, ttype;
    MPI_Aint disp;
    MPI_Op op;
};

/* ctr_issue_once and ctr_access are inlined into each caller, which passes a constant kind:
 * the kind tests fold away and the access is read from the caller's arguments, so a
 * NARMA_Put_notify_idx costs what a NARMA_Put_notify does plus the index and epoch checks
 * (issue 12: counter ping-pong within 1.1x of tag-matched). */
#define CTR_INLINE static inline __attribute__((always_inline))

CTR_INLINE int ctr_issue_once(struct narmai_win *w, const struct ctr_access *a)
{
    int32_t tag = ctr_tag(a->idx);
    switch (a->kind) {
    case CTR_PUT:
        return narmat_put_notify(&w->t, a->oaddr, a->ocount, a->otype, a->target, a->disp,
                                 a->tcount, a->ttype, tag);
    case CTR_GET:
        return narmat_get_notify(&w->t, a->raddr, a->ocount, a->otype, a->target, a->disp,
                                 a->tcount, a->ttype, tag);
    case CTR_ACC:
        return narmat_acc_notify(&w->t, a->oaddr, a->ocount, a->otype, a->target, a->disp,
                                 a->tcount, a->ttype, a->op, tag);
    default:
        /* Done with the data in an earlier round: the 0-byte notification alone. */
        return narmat_put_notify(&w->t, NULL, 0, MPI_BYTE, a->target, 0, 0, MPI_BYTE, tag);
    }
}

CTR_INLINE int ctr_access(struct narmai_win *w, struct ctr_access *a)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (a->target == MPI_PROC_NULL) return NARMA_SUCCESS;
    int flags = a->kind == CTR_GACC && a->op == MPI_NO_OP ? NARMAI_CHK_NO_ORIGIN : 0;
    int rc = narmai_rma_check(w, a->target, a->disp, a->ocount, a->otype, a->tcount, a->ttype,
                              flags | NARMAI_CHK_NO_EPOCH);
    if (rc) return rc;
    if (a->kind == CTR_ACC && a->op == MPI_NO_OP)
        return NARMAU_ERR(NARMA_ERR_OP, "MPI_NO_OP is only for get-accumulates");
    if ((a->kind == CTR_ACC || a->kind == CTR_GACC) && (rc = narmai_acc_check(a->op, a->ttype)))
        return rc;
    if ((rc = ctr_ready(w, a->target, a->idx))) return rc;
    if (a->kind == CTR_GACC) {
        /* Complete at the target before the notification goes out. */
        rc = narmat_acc(&w->t, a->oaddr, a->ocount, a->otype, a->raddr, a->rcount, a->rtype,
                        a->target, a->disp, a->tcount, a->ttype, a->op, NULL);
        if (rc == NARMA_SUCCESS) rc = narmat_flush(&w->t, a->target);
        if (rc) return rc;
    }
    /* A full ring answers NARMAT_AGAIN with nothing done: drain ours, call again. */
    narmau_waiter wt = {0};
    while ((rc = ctr_issue_once(w, a)) == NARMAT_AGAIN) {
        narmai_progress();
        narmau_wait_step(&wt);
    }
    /* Local completion on a window that defers notified accesses (origin buffer reusable). */
    if (rc == NARMA_SUCCESS && w->t.notify_deferred) rc = narmat_flush_local(&w->t, a->target);
    return rc;
}

CTR_INLINE int api_put_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                  MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx,
                                  NARMA_Win w)
{
    struct ctr_access a = {.kind = CTR_PUT,
                           .oaddr = oaddr,
                           .ocount = ocount,
                           .otype = otype,
                           .target = target,
                           .disp = disp,
                           .tcount = tcount,
                           .ttype = ttype,
                           .idx = idx,
                           .op = MPI_OP_NULL};
    return ctr_access(w, &a);
}

int NARMA_Put_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                         MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_put_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, w));
}

static int api_get_notify_idx(void *oaddr, int ocount, MPI_Datatype otype, int target,
                              MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx, NARMA_Win w)
{
    struct ctr_access a = {.kind = CTR_GET,
                           .raddr = oaddr,
                           .ocount = ocount,
                           .otype = otype,
                           .target = target,
                           .disp = disp,
                           .tcount = tcount,
                           .ttype = ttype,
                           .idx = idx,
                           .op = MPI_OP_NULL};
    return ctr_access(w, &a);
}

int NARMA_Get_notify_idx(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                         int tcount, MPI_Datatype ttype, int idx, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_get_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, w));
}

static int api_accumulate_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                     MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op,
                                     int idx, NARMA_Win w)
{
    struct ctr_access a = {.kind = CTR_ACC,
                           .oaddr = oaddr,
                           .ocount = ocount,
                           .otype = otype,
                           .target = target,
                           .disp = disp,
                           .tcount = tcount,
                           .ttype = ttype,
                           .idx = idx,
                           .op = op};
    return ctr_access(w, &a);
}

int NARMA_Accumulate_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op, int idx,
                                NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_accumulate_notify_idx(oaddr, ocount, otype, target, disp, tcount,
                                                       ttype, op, idx, w));
}

static int api_get_accumulate_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype,
                                         void *raddr, int rcount, MPI_Datatype rtype, int target,
                                         MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op,
                                         int idx, NARMA_Win w)
{
    if (raddr == NULL && rcount > 0) return NARMAU_ERR(NARMA_ERR_ARG, "NULL result buffer");
    if (rcount < 0) return NARMAU_ERR(NARMA_ERR_COUNT, "result count %d", rcount);
    struct ctr_access a = {.kind = CTR_GACC,
                           .oaddr = oaddr,
                           .raddr = raddr,
                           .ocount = ocount,
                           .rcount = rcount,
                           .otype = otype,
                           .rtype = rtype,
                           .target = target,
                           .disp = disp,
                           .tcount = tcount,
                           .ttype = ttype,
                           .idx = idx,
                           .op = op};
    return ctr_access(w, &a);
}

int NARMA_Get_accumulate_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                    int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                                    int tcount, MPI_Datatype ttype, NARMA_Op op, int idx,
                                    NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w,
                          api_get_accumulate_notify_idx(oaddr, ocount, otype, raddr, rcount, rtype,
                                                        target, disp, tcount, ttype, op, idx, w));
}

#define CTR_REQ(call)                                                                  \
    do {                                                                               \
        if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer"); \
        struct narmai_request *r_ = narmai_request_new(NARMAI_REQ_RMA, w);             \
        if (r_ == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");                \
        return narmai_request_born_complete(r_, (call), request);                      \
    } while (0)

static int api_rput_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                               MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx, NARMA_Win w,
                               NARMA_Request *request)
{
    CTR_REQ(api_put_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, w));
}

int NARMA_Rput_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                          MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx, NARMA_Win w,
                          NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_rput_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, w, request));
}

static int api_rget_notify_idx(void *oaddr, int ocount, MPI_Datatype otype, int target,
                               MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx, NARMA_Win w,
                               NARMA_Request *request)
{
    CTR_REQ(api_get_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, w));
}

int NARMA_Rget_notify_idx(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                          int tcount, MPI_Datatype ttype, int idx, NARMA_Win w,
                          NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_rget_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, w, request));
}

static int api_raccumulate_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                      MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op,
                                      int idx, NARMA_Win w, NARMA_Request *request)
{
    CTR_REQ(
        api_accumulate_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, op, idx, w));
}

int NARMA_Raccumulate_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                 MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op,
                                 int idx, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_raccumulate_notify_idx(oaddr, ocount, otype, target, disp, tcount,
                                                        ttype, op, idx, w, request));
}

static int api_rget_accumulate_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype,
                                          void *raddr, int rcount, MPI_Datatype rtype, int target,
                                          MPI_Aint disp, int tcount, MPI_Datatype ttype,
                                          NARMA_Op op, int idx, NARMA_Win w, NARMA_Request *request)
{
    CTR_REQ(api_get_accumulate_notify_idx(oaddr, ocount, otype, raddr, rcount, rtype, target, disp,
                                          tcount, ttype, op, idx, w));
}

int NARMA_Rget_accumulate_notify_idx(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                     int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                                     int tcount, MPI_Datatype ttype, NARMA_Op op, int idx,
                                     NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_rget_accumulate_notify_idx(oaddr, ocount, otype, raddr, rcount,
                                                            rtype, target, disp, tcount, ttype, op,
                                                            idx, w, request));
}

static int local_idx(struct narmai_win *w, int idx)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (idx < 0 || idx >= w->nctr)
        return NARMAU_ERR(NARMA_ERR_NOTIFY_IDX, "notification index %d: this process has %d", idx,
                          w->nctr);
    return NARMA_SUCCESS;
}

static int api_win_get_notify_value(NARMA_Win w, int idx, MPI_Count *value)
{
    int rc = local_idx(w, idx);
    if (rc) return rc;
    if (value == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL value");
    narmai_progress_on(w); /* arrived records count */
    *value = (MPI_Count)w->ctr[idx];
    return NARMA_SUCCESS;
}

int NARMA_Win_get_notify_value(NARMA_Win w, int idx, MPI_Count *value)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_get_notify_value(w, idx, value));
}

static int api_win_reset_notify_value(NARMA_Win w, int idx, MPI_Count *old)
{
    int rc = local_idx(w, idx);
    if (rc) return rc;
    if (old == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL old value");
    narmai_progress_on(w);
    /* Only this process's progress engine increments: no increment can fall between. */
    *old = (MPI_Count)w->ctr[idx];
    w->ctr[idx] = 0;
    return NARMA_SUCCESS;
}

int NARMA_Win_reset_notify_value(NARMA_Win w, int idx, MPI_Count *old)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_reset_notify_value(w, idx, old));
}

/* Threshold requests (kind NARMAI_REQ_THRESH): born COMPLETE when the counter is already at
 * the threshold; else ACTIVE on w->thresh_reqs, counted in w->nflush (the window is busy and
 * cannot be freed) and w->nthresh (its counters cannot be changed), until the arrival that
 * reaches the threshold completes them (narmai_counter_arrived). So Test/Wait find them
 * complete from the state alone, as tag-matched requests, with no callback per poll.
 * NARMA_Request_free withdraws a pending one (narmai_threshold_withdraw). */
static int api_win_notify_ithreshold(NARMA_Win w, int idx, MPI_Count expected,
                                     NARMA_Request *request)
{
    int rc = local_idx(w, idx);
    if (rc) return rc;
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_THRESH, w);
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    r->st_src = w->t.rank;
    r->st_tag = MPI_ANY_TAG;
    if ((MPI_Count)w->ctr[idx] >= expected) {
        r->state = NARMAI_REQ_COMPLETE;
    } else {
        r->state = NARMAI_REQ_ACTIVE;
        r->target = idx;
        r->upto = (uint64_t)expected;
        narmau_dlist_push_back(&w->thresh_reqs, &r->link);
        w->nflush++;
        w->nthresh++;
    }
    *request = r;
    return NARMA_SUCCESS;
}

void narmai_threshold_withdraw(struct narmai_request *r)
{
    if (r->state == NARMAI_REQ_ACTIVE) threshold_unlink(r);
}

int NARMA_Win_notify_ithreshold(NARMA_Win w, int idx, MPI_Count expected, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_win_notify_ithreshold(w, idx, expected, request));
}
