/* Notified Access entry points (paper section III-B). Each notified access
 * forms its own epoch: legal inside any access epoch and outside one. */
#include "core/rma.h"
#include "transport/transport.h"

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

int NARMA_Put_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                     int tcount, MPI_Datatype ttype, NARMA_Win w, int tag)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, NARMAI_CHK_NO_EPOCH);
    if (rc || (rc = check_tag(tag))) return rc;
#endif
    NOTIFY_RETRY(narmat_put_notify(&w->t, oaddr, ocount, otype, target, disp, tcount, ttype, tag));
}

int NARMA_Get_notify(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                     int tcount, MPI_Datatype ttype, NARMA_Win w, int tag)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, NARMAI_CHK_NO_EPOCH);
    if (rc || (rc = check_tag(tag))) return rc;
#endif
    NOTIFY_RETRY(narmat_get_notify(&w->t, oaddr, ocount, otype, target, disp, tcount, ttype, tag));
}

int NARMA_Accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                            MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w,
                            int tag)
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

/* The request of the R* forms is complete at creation: the transports complete notified
 * accesses before returning, or, on a window with narma_notify_completion=flush, the caller
 * completes them locally first (the notification follows at the next flush or progress). */
static int completed_request(struct narmai_win *w, int rc, NARMA_Request *request)
{
    if (rc) return rc;
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_RMA, w);
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
    r->state = NARMAI_REQ_COMPLETE;
    r->st_src = w->t.rank;
    r->st_tag = MPI_ANY_TAG;
    *request = r;
    return NARMA_SUCCESS;
}

int NARMA_Rput_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                      int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request, int tag)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    int rc = NARMA_Put_notify(oaddr, ocount, otype, target, disp, tcount, ttype, w, tag);
    if (rc == NARMA_SUCCESS && target != MPI_PROC_NULL && w->t.notify_deferred)
        rc = narmat_flush_local(&w->t, target);
    return completed_request(w, rc, request);
}

int NARMA_Rget_notify(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                      int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request, int tag)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    int rc = NARMA_Get_notify(oaddr, ocount, otype, target, disp, tcount, ttype, w, tag);
    if (rc == NARMA_SUCCESS && target != MPI_PROC_NULL && w->t.notify_deferred)
        rc = narmat_flush_local(&w->t, target);
    return completed_request(w, rc, request);
}
