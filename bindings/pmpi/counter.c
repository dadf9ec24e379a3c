/* Counter-indexed notifications under the MPI-5.1 draft's names, with the MPIX_ prefix
 * (narma_mpix.h): each call is the NARMA_*_notify_idx / NARMA_Win_*_notify call on the window
 * narma carries; a window the MPI library carries has none (MPI_ERR_UNSUPPORTED_OPERATION). */
#include "pmpi.h"

#include <pthread.h>

#define PC_WIN(win)                                \
    struct pw *p_;                                 \
    NARMA_Win nw = pw_narma(win, PW_COUNTER, &p_); \
    if (nw == NARMA_WIN_NULL) return pw_error(win, NARMA_ERR_UNSUPPORTED)
#define PC_OP(win, expr)       \
    do {                       \
        PC_WIN(win);           \
        pw_count(&p_->ops, 1); \
        PW_RET(win, (expr));   \
    } while (0)
#define PC_REQ(win, expr, counter)                           \
    do {                                                     \
        PC_WIN(win);                                         \
        NARMA_Request nr = NARMA_REQUEST_NULL;               \
        int rc_ = (expr);                                    \
        if (rc_ != NARMA_SUCCESS) return pw_error(win, rc_); \
        pw_count(&p_->counter, 1);                           \
        return preq_new(nr, 0, win, request);                \
    } while (0)

/* The error class of a bad notification index: added to MPI's on first use, once also when
 * threads ask at once. Its own mutex, not the tables': this one is held across calls into MPI,
 * and MPI may hold its own lock when it calls back into the tables (a generalized request's
 * free function), so sharing one would make a lock-order cycle. */
static int notify_idx_class = -1;
static pthread_mutex_t class_mutex = PTHREAD_MUTEX_INITIALIZER;

int pw_notify_idx_class(void)
{
    int c = __atomic_load_n(&notify_idx_class, __ATOMIC_ACQUIRE);
    if (c >= 0) return c;
    pthread_mutex_lock(&class_mutex);
    if ((c = notify_idx_class) < 0) {
        if (PMPI_Add_error_class(&c) != MPI_SUCCESS) {
            pthread_mutex_unlock(&class_mutex);
            return MPI_ERR_ARG;
        }
        PMPI_Add_error_string(c, "MPIX_ERR_NOTIFY_IDX: notification index outside the "
                                 "target's counters (MPIX_Win_set_num_notify)");
        __atomic_store_n(&notify_idx_class, c, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&class_mutex);
    return c;
}

NARMA_PMPI_API int MPIX_Err_notify_idx(void) { return pw_notify_idx_class(); }

NARMA_PMPI_API int MPIX_Win_set_num_notify(MPI_Win win, MPI_Info info, int n)
{
    PC_WIN(win);
    PW_RET(win, NARMA_Win_set_num_notify(nw, info, n));
}

NARMA_PMPI_API int MPIX_Win_get_num_notify(MPI_Win win, int target_rank, int *n)
{
    PC_WIN(win);
    PW_RET(win, NARMA_Win_get_num_notify(nw, target_rank, n));
}

NARMA_PMPI_API int MPIX_Put_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                   MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx,
                                   MPI_Win win)
{
    PC_OP(win, NARMA_Put_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, nw));
}

NARMA_PMPI_API int MPIX_Get_notify(void *oaddr, int ocount, MPI_Datatype otype, int target,
                                   MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx,
                                   MPI_Win win)
{
    PC_OP(win, NARMA_Get_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, nw));
}

NARMA_PMPI_API int MPIX_Accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype,
                                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                                          MPI_Op op, int idx, MPI_Win win)
{
    PC_OP(win, NARMA_Accumulate_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, op,
                                           idx, nw));
}

NARMA_PMPI_API int MPIX_Get_accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype,
                                              void *raddr, int rcount, MPI_Datatype rtype,
                                              int target, MPI_Aint disp, int tcount,
                                              MPI_Datatype ttype, MPI_Op op, int idx, MPI_Win win)
{
    PC_OP(win, NARMA_Get_accumulate_notify_idx(oaddr, ocount, otype, raddr, rcount, rtype, target,
                                               disp, tcount, ttype, op, idx, nw));
}

NARMA_PMPI_API int MPIX_Rput_notify(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                                    MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx,
                                    MPI_Win win, MPI_Request *request)
{
    PC_REQ(win,
           NARMA_Rput_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, nw, &nr),
           ops);
}

NARMA_PMPI_API int MPIX_Rget_notify(void *oaddr, int ocount, MPI_Datatype otype, int target,
                                    MPI_Aint disp, int tcount, MPI_Datatype ttype, int idx,
                                    MPI_Win win, MPI_Request *request)
{
    PC_REQ(win,
           NARMA_Rget_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, idx, nw, &nr),
           ops);
}

NARMA_PMPI_API int MPIX_Raccumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype,
                                           int target, MPI_Aint disp, int tcount,
                                           MPI_Datatype ttype, MPI_Op op, int idx, MPI_Win win,
                                           MPI_Request *request)
{
    PC_REQ(win,
           NARMA_Raccumulate_notify_idx(oaddr, ocount, otype, target, disp, tcount, ttype, op, idx,
                                        nw, &nr),
           ops);
}

NARMA_PMPI_API int MPIX_Rget_accumulate_notify(const void *oaddr, int ocount, MPI_Datatype otype,
                                               void *raddr, int rcount, MPI_Datatype rtype,
                                               int target, MPI_Aint disp, int tcount,
                                               MPI_Datatype ttype, MPI_Op op, int idx, MPI_Win win,
                                               MPI_Request *request)
{
    PC_REQ(win,
           NARMA_Rget_accumulate_notify_idx(oaddr, ocount, otype, raddr, rcount, rtype, target,
                                            disp, tcount, ttype, op, idx, nw, &nr),
           ops);
}

NARMA_PMPI_API int MPIX_Win_get_notify_value(MPI_Win win, int idx, MPI_Count *value)
{
    PC_WIN(win);
    PW_RET(win, NARMA_Win_get_notify_value(nw, idx, value));
}

NARMA_PMPI_API int MPIX_Win_reset_notify_value(MPI_Win win, int idx, MPI_Count *old_value)
{
    PC_WIN(win);
    PW_RET(win, NARMA_Win_reset_notify_value(nw, idx, old_value));
}

NARMA_PMPI_API int MPIX_Win_notify_ithreshold(MPI_Win win, int idx, MPI_Count expected,
                                              MPI_Request *request)
{
    PC_REQ(win, NARMA_Win_notify_ithreshold(nw, idx, expected, &nr), reqs);
}
