/* Accesses and synchronisation: each MPI call becomes the narma call of the same name on the
 * window narma carries, or goes to the MPI library when the window is passed through. */
#include "pmpi.h"

/* Look the window up; pass the call to MPI when narma does not carry it. */
#define PW_WIN(win, call, pmpi_expr)         \
    struct pw *p_;                           \
    NARMA_Win nw = pw_narma(win, call, &p_); \
    if (nw == NARMA_WIN_NULL) return pmpi_expr
#define PW_OP(win, call, pmpi_expr, narma_expr) \
    do {                                        \
        PW_WIN(win, call, pmpi_expr);           \
        pw_count(&p_->ops, 1);                  \
        PW_RET(win, narma_expr);                \
    } while (0)
#define PW_EPOCH(win, call, pmpi_expr, narma_expr, opens) \
    do {                                                  \
        PW_WIN(win, call, pmpi_expr);                     \
        pw_count(&p_->epochs, (opens));                   \
        PW_RET(win, narma_expr);                          \
    } while (0)
/* A request-based call: the narma request behind a new MPI_Request. */
#define PW_REQ(win, call, pmpi_expr, narma_expr, persistent, counter) \
    do {                                                              \
        PW_WIN(win, call, pmpi_expr);                                 \
        NARMA_Request nr = NARMA_REQUEST_NULL;                        \
        int rc_ = (narma_expr);                                       \
        if (rc_ != NARMA_SUCCESS) return pw_error(win, rc_);          \
        pw_count(&p_->counter, 1);                                    \
        return preq_new(nr, persistent, win, request);                \
    } while (0)

/* ---- data ---- */

NARMA_PMPI_API int MPI_Put(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                           MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Win win)
{
    PW_OP(win, PW_PUT, PMPI_Put(oaddr, ocount, otype, target, disp, tcount, ttype, win),
          NARMA_Put(oaddr, ocount, otype, target, disp, tcount, ttype, nw));
}

NARMA_PMPI_API int MPI_Get(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                           int tcount, MPI_Datatype ttype, MPI_Win win)
{
    PW_OP(win, PW_GET, PMPI_Get(oaddr, ocount, otype, target, disp, tcount, ttype, win),
          NARMA_Get(oaddr, ocount, otype, target, disp, tcount, ttype, nw));
}

NARMA_PMPI_API int MPI_Accumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                  MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                                  MPI_Win win)
{
    PW_OP(win, PW_ACC, PMPI_Accumulate(oaddr, ocount, otype, target, disp, tcount, ttype, op, win),
          NARMA_Accumulate(oaddr, ocount, otype, target, disp, tcount, ttype, op, nw));
}

NARMA_PMPI_API int MPI_Get_accumulate(const void *oaddr, int ocount, MPI_Datatype otype,
                                      void *raddr, int rcount, MPI_Datatype rtype, int target,
                                      MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                                      MPI_Win win)
{
    PW_OP(win, PW_GACC,
          PMPI_Get_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount,
                              ttype, op, win),
          NARMA_Get_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount,
                               ttype, op, nw));
}

NARMA_PMPI_API int MPI_Fetch_and_op(const void *oaddr, void *raddr, MPI_Datatype type, int target,
                                    MPI_Aint disp, MPI_Op op, MPI_Win win)
{
    PW_OP(win, PW_FOP, PMPI_Fetch_and_op(oaddr, raddr, type, target, disp, op, win),
          NARMA_Fetch_and_op(oaddr, raddr, type, target, disp, op, nw));
}

NARMA_PMPI_API int MPI_Compare_and_swap(const void *oaddr, const void *caddr, void *raddr,
                                        MPI_Datatype type, int target, MPI_Aint disp, MPI_Win win)
{
    PW_OP(win, PW_CAS, PMPI_Compare_and_swap(oaddr, caddr, raddr, type, target, disp, win),
          NARMA_Compare_and_swap(oaddr, caddr, raddr, type, target, disp, nw));
}

NARMA_PMPI_API int MPI_Rput(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                            MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Win win,
                            MPI_Request *request)
{
    PW_REQ(win, PW_RPUT, PMPI_Rput(oaddr, ocount, otype, target, disp, tcount, ttype, win, request),
           NARMA_Rput(oaddr, ocount, otype, target, disp, tcount, ttype, nw, &nr), 0, ops);
}

NARMA_PMPI_API int MPI_Rget(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                            int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_RGET, PMPI_Rget(oaddr, ocount, otype, target, disp, tcount, ttype, win, request),
           NARMA_Rget(oaddr, ocount, otype, target, disp, tcount, ttype, nw, &nr), 0, ops);
}

NARMA_PMPI_API int MPI_Raccumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                   MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                                   MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_RACC,
           PMPI_Raccumulate(oaddr, ocount, otype, target, disp, tcount, ttype, op, win, request),
           NARMA_Raccumulate(oaddr, ocount, otype, target, disp, tcount, ttype, op, nw, &nr), 0,
           ops);
}

NARMA_PMPI_API int MPI_Rget_accumulate(const void *oaddr, int ocount, MPI_Datatype otype,
                                       void *raddr, int rcount, MPI_Datatype rtype, int target,
                                       MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                                       MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_RGACC,
           PMPI_Rget_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount,
                                ttype, op, win, request),
           NARMA_Rget_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount,
                                 ttype, op, nw, &nr),
           0, ops);
}

/* ---- synchronisation ---- */

NARMA_PMPI_API int MPI_Win_fence(int assert, MPI_Win win)
{
    PW_EPOCH(win, PW_FENCE, PMPI_Win_fence(assert, win), NARMA_Win_fence(assert, nw), 1);
}

NARMA_PMPI_API int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    PW_EPOCH(win, PW_POST, PMPI_Win_post(group, assert, win), NARMA_Win_post(group, assert, nw), 1);
}

NARMA_PMPI_API int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    PW_EPOCH(win, PW_START, PMPI_Win_start(group, assert, win), NARMA_Win_start(group, assert, nw),
             1);
}

NARMA_PMPI_API int MPI_Win_complete(MPI_Win win)
{
    PW_EPOCH(win, PW_COMPLETE, PMPI_Win_complete(win), NARMA_Win_complete(nw), 0);
}

NARMA_PMPI_API int MPI_Win_wait(MPI_Win win)
{
    PW_EPOCH(win, PW_WAIT, PMPI_Win_wait(win), NARMA_Win_wait(nw), 0);
}

NARMA_PMPI_API int MPI_Win_test(MPI_Win win, int *flag)
{
    PW_EPOCH(win, PW_TEST, PMPI_Win_test(win, flag), NARMA_Win_test(nw, flag), 0);
}

NARMA_PMPI_API int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    PW_EPOCH(win, PW_LOCK, PMPI_Win_lock(lock_type, rank, assert, win),
             NARMA_Win_lock(lock_type, rank, assert, nw), 1);
}

NARMA_PMPI_API int MPI_Win_unlock(int rank, MPI_Win win)
{
    PW_EPOCH(win, PW_UNLOCK, PMPI_Win_unlock(rank, win), NARMA_Win_unlock(rank, nw), 0);
}

NARMA_PMPI_API int MPI_Win_lock_all(int assert, MPI_Win win)
{
    PW_EPOCH(win, PW_LOCK_ALL, PMPI_Win_lock_all(assert, win), NARMA_Win_lock_all(assert, nw), 1);
}

NARMA_PMPI_API int MPI_Win_unlock_all(MPI_Win win)
{
    PW_EPOCH(win, PW_UNLOCK_ALL, PMPI_Win_unlock_all(win), NARMA_Win_unlock_all(nw), 0);
}

NARMA_PMPI_API int MPI_Win_flush(int rank, MPI_Win win)
{
    PW_EPOCH(win, PW_FLUSH, PMPI_Win_flush(rank, win), NARMA_Win_flush(rank, nw), 0);
}

NARMA_PMPI_API int MPI_Win_flush_all(MPI_Win win)
{
    PW_EPOCH(win, PW_FLUSH, PMPI_Win_flush_all(win), NARMA_Win_flush_all(nw), 0);
}

NARMA_PMPI_API int MPI_Win_flush_local(int rank, MPI_Win win)
{
    PW_EPOCH(win, PW_FLUSH, PMPI_Win_flush_local(rank, win), NARMA_Win_flush_local(rank, nw), 0);
}

NARMA_PMPI_API int MPI_Win_flush_local_all(MPI_Win win)
{
    PW_EPOCH(win, PW_FLUSH, PMPI_Win_flush_local_all(win), NARMA_Win_flush_local_all(nw), 0);
}

NARMA_PMPI_API int MPI_Win_sync(MPI_Win win)
{
    PW_EPOCH(win, PW_SYNC, PMPI_Win_sync(win), NARMA_Win_sync(nw), 0);
}

/* ---- extensions: nonblocking synchronisation ---- */

/* A window MPI's library carries has no nonblocking epochs. */
#define PW_NO_MPI(win) pw_error(win, NARMA_ERR_UNSUPPORTED)

NARMA_PMPI_API int MPIX_Win_ifence(int assert, MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_ifence(assert, nw, &nr), 0, epochs);
}

NARMA_PMPI_API int MPIX_Win_ipost(MPI_Group group, int assert, MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_ipost(group, assert, nw, &nr), 0, epochs);
}

NARMA_PMPI_API int MPIX_Win_istart(MPI_Group group, int assert, MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_istart(group, assert, nw, &nr), 0, epochs);
}

NARMA_PMPI_API int MPIX_Win_icomplete(MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_icomplete(nw, &nr), 0, calls[PW_COMPLETE]);
}

NARMA_PMPI_API int MPIX_Win_iwait(MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_iwait(nw, &nr), 0, calls[PW_WAIT]);
}

NARMA_PMPI_API int MPIX_Win_ilock(int lock_type, int rank, int assert, MPI_Win win,
                                  MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_ilock(lock_type, rank, assert, nw, &nr), 0,
           epochs);
}

NARMA_PMPI_API int MPIX_Win_iunlock(int rank, MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_iunlock(rank, nw, &nr), 0, calls[PW_UNLOCK]);
}

NARMA_PMPI_API int MPIX_Win_ilock_all(int assert, MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_ilock_all(assert, nw, &nr), 0, epochs);
}

NARMA_PMPI_API int MPIX_Win_iunlock_all(MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_iunlock_all(nw, &nr), 0, calls[PW_UNLOCK_ALL]);
}

NARMA_PMPI_API int MPIX_Win_iflush(int rank, MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_iflush(rank, nw, &nr), 0, calls[PW_FLUSH]);
}

NARMA_PMPI_API int MPIX_Win_iflush_local(int rank, MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_iflush_local(rank, nw, &nr), 0,
           calls[PW_FLUSH]);
}

NARMA_PMPI_API int MPIX_Win_iflush_all(MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_iflush_all(nw, &nr), 0, calls[PW_FLUSH]);
}

NARMA_PMPI_API int MPIX_Win_iflush_local_all(MPI_Win win, MPI_Request *request)
{
    PW_REQ(win, PW_IEPOCH, PW_NO_MPI(win), NARMA_Win_iflush_local_all(nw, &nr), 0, calls[PW_FLUSH]);
}

/* ---- extensions: tag-matched notified access ---- */

NARMA_PMPI_API int MPIX_Put_notify_tagged(const void *oaddr, int ocount, MPI_Datatype otype,
                                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                                          MPI_Win win, int tag)
{
    PW_OP(win, PW_NOTIFY, PW_NO_MPI(win),
          NARMA_Put_notify(oaddr, ocount, otype, target, disp, tcount, ttype, nw, tag));
}

NARMA_PMPI_API int MPIX_Get_notify_tagged(void *oaddr, int ocount, MPI_Datatype otype, int target,
                                          MPI_Aint disp, int tcount, MPI_Datatype ttype,
                                          MPI_Win win, int tag)
{
    PW_OP(win, PW_NOTIFY, PW_NO_MPI(win),
          NARMA_Get_notify(oaddr, ocount, otype, target, disp, tcount, ttype, nw, tag));
}

NARMA_PMPI_API int MPIX_Accumulate_notify_tagged(const void *oaddr, int ocount, MPI_Datatype otype,
                                                 int target, MPI_Aint disp, int tcount,
                                                 MPI_Datatype ttype, MPI_Op op, MPI_Win win,
                                                 int tag)
{
    PW_OP(win, PW_NOTIFY, PW_NO_MPI(win),
          NARMA_Accumulate_notify(oaddr, ocount, otype, target, disp, tcount, ttype, op, nw, tag));
}

NARMA_PMPI_API int MPIX_Rput_notify_tagged(const void *oaddr, int ocount, MPI_Datatype otype,
                                           int target, MPI_Aint disp, int tcount,
                                           MPI_Datatype ttype, MPI_Win win, MPI_Request *request,
                                           int tag)
{
    PW_REQ(win, PW_NOTIFY, PW_NO_MPI(win),
           NARMA_Rput_notify(oaddr, ocount, otype, target, disp, tcount, ttype, nw, &nr, tag), 0,
           ops);
}

NARMA_PMPI_API int MPIX_Rget_notify_tagged(void *oaddr, int ocount, MPI_Datatype otype, int target,
                                           MPI_Aint disp, int tcount, MPI_Datatype ttype,
                                           MPI_Win win, MPI_Request *request, int tag)
{
    PW_REQ(win, PW_NOTIFY, PW_NO_MPI(win),
           NARMA_Rget_notify(oaddr, ocount, otype, target, disp, tcount, ttype, nw, &nr, tag), 0,
           ops);
}

/* Persistent: each request made counts as one operation (its starts are not counted). */
NARMA_PMPI_API int MPIX_Put_notify_tagged_init(const void *oaddr, int ocount, MPI_Datatype otype,
                                               int target, MPI_Aint disp, int tcount,
                                               MPI_Datatype ttype, MPI_Win win, int tag,
                                               MPI_Request *request)
{
    PW_REQ(win, PW_NOTIFY, PW_NO_MPI(win),
           NARMA_Put_notify_init(oaddr, ocount, otype, target, disp, tcount, ttype, nw, tag, &nr),
           1, ops);
}

NARMA_PMPI_API int MPIX_Get_notify_tagged_init(void *oaddr, int ocount, MPI_Datatype otype,
                                               int target, MPI_Aint disp, int tcount,
                                               MPI_Datatype ttype, MPI_Win win, int tag,
                                               MPI_Request *request)
{
    PW_REQ(win, PW_NOTIFY, PW_NO_MPI(win),
           NARMA_Get_notify_init(oaddr, ocount, otype, target, disp, tcount, ttype, nw, tag, &nr),
           1, ops);
}

NARMA_PMPI_API int MPIX_Accumulate_notify_tagged_init(const void *oaddr, int ocount,
                                                      MPI_Datatype otype, int target, MPI_Aint disp,
                                                      int tcount, MPI_Datatype ttype, MPI_Op op,
                                                      MPI_Win win, int tag, MPI_Request *request)
{
    PW_REQ(win, PW_NOTIFY, PW_NO_MPI(win),
           NARMA_Accumulate_notify_init(oaddr, ocount, otype, target, disp, tcount, ttype, op, nw,
                                        tag, &nr),
           1, ops);
}

NARMA_PMPI_API int MPIX_Notify_tagged_init(MPI_Win win, int source, int tag, int expected_count,
                                           MPI_Request *request)
{
    PW_REQ(win, PW_NOTIFY, PW_NO_MPI(win), NARMA_Notify_init(nw, source, tag, expected_count, &nr),
           1, reqs);
}

/* ---- MPI-4 large-count forms: narma's counts are ints ---- */
#if MPI_VERSION >= 4
#include <limits.h>

/* Both counts fit narma's int, or the call is refused with MPI_ERR_COUNT. */
#define PW_COUNTS(win, a, b)                                      \
    do {                                                          \
        if ((a) < 0 || (a) > INT_MAX || (b) < 0 || (b) > INT_MAX) \
            return pw_error(win, NARMA_ERR_COUNT);                \
    } while (0)

NARMA_PMPI_API int MPI_Put_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                             MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, MPI_Win win)
{
    PW_WIN(win, PW_PUT, PMPI_Put_c(oaddr, ocount, otype, target, disp, tcount, ttype, win));
    PW_COUNTS(win, ocount, tcount);
    pw_count(&p_->ops, 1);
    PW_RET(win, NARMA_Put(oaddr, (int)ocount, otype, target, disp, (int)tcount, ttype, nw));
}

NARMA_PMPI_API int MPI_Get_c(void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                             MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, MPI_Win win)
{
    PW_WIN(win, PW_GET, PMPI_Get_c(oaddr, ocount, otype, target, disp, tcount, ttype, win));
    PW_COUNTS(win, ocount, tcount);
    pw_count(&p_->ops, 1);
    PW_RET(win, NARMA_Get(oaddr, (int)ocount, otype, target, disp, (int)tcount, ttype, nw));
}

NARMA_PMPI_API int MPI_Accumulate_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype,
                                    int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                                    MPI_Op op, MPI_Win win)
{
    PW_WIN(win, PW_ACC,
           PMPI_Accumulate_c(oaddr, ocount, otype, target, disp, tcount, ttype, op, win));
    PW_COUNTS(win, ocount, tcount);
    pw_count(&p_->ops, 1);
    PW_RET(win,
           NARMA_Accumulate(oaddr, (int)ocount, otype, target, disp, (int)tcount, ttype, op, nw));
}

NARMA_PMPI_API int MPI_Get_accumulate_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype,
                                        void *raddr, MPI_Count rcount, MPI_Datatype rtype,
                                        int target, MPI_Aint disp, MPI_Count tcount,
                                        MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    PW_WIN(win, PW_GACC,
           PMPI_Get_accumulate_c(oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount,
                                 ttype, op, win));
    PW_COUNTS(win, ocount, tcount);
    PW_COUNTS(win, rcount, 0);
    pw_count(&p_->ops, 1);
    PW_RET(win, NARMA_Get_accumulate(oaddr, (int)ocount, otype, raddr, (int)rcount, rtype, target,
                                     disp, (int)tcount, ttype, op, nw));
}

NARMA_PMPI_API int MPI_Rput_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                              MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, MPI_Win win,
                              MPI_Request *request)
{
    PW_WIN(win, PW_RPUT,
           PMPI_Rput_c(oaddr, ocount, otype, target, disp, tcount, ttype, win, request));
    PW_COUNTS(win, ocount, tcount);
    return MPI_Rput(oaddr, (int)ocount, otype, target, disp, (int)tcount, ttype, win, request);
}

NARMA_PMPI_API int MPI_Rget_c(void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                              MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, MPI_Win win,
                              MPI_Request *request)
{
    PW_WIN(win, PW_RGET,
           PMPI_Rget_c(oaddr, ocount, otype, target, disp, tcount, ttype, win, request));
    PW_COUNTS(win, ocount, tcount);
    return MPI_Rget(oaddr, (int)ocount, otype, target, disp, (int)tcount, ttype, win, request);
}

NARMA_PMPI_API int MPI_Raccumulate_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype,
                                     int target, MPI_Aint disp, MPI_Count tcount,
                                     MPI_Datatype ttype, MPI_Op op, MPI_Win win,
                                     MPI_Request *request)
{
    PW_WIN(win, PW_RACC,
           PMPI_Raccumulate_c(oaddr, ocount, otype, target, disp, tcount, ttype, op, win, request));
    PW_COUNTS(win, ocount, tcount);
    return MPI_Raccumulate(oaddr, (int)ocount, otype, target, disp, (int)tcount, ttype, op, win,
                           request);
}

NARMA_PMPI_API int MPI_Rget_accumulate_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype,
                                         void *raddr, MPI_Count rcount, MPI_Datatype rtype,
                                         int target, MPI_Aint disp, MPI_Count tcount,
                                         MPI_Datatype ttype, MPI_Op op, MPI_Win win,
                                         MPI_Request *request)
{
    PW_WIN(win, PW_RGACC,
           PMPI_Rget_accumulate_c(oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount,
                                  ttype, op, win, request));
    PW_COUNTS(win, ocount, tcount);
    PW_COUNTS(win, rcount, 0);
    return MPI_Rget_accumulate(oaddr, (int)ocount, otype, raddr, (int)rcount, rtype, target, disp,
                               (int)tcount, ttype, op, win, request);
}
#endif
