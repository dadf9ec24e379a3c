/* Large-count (MPI-4 _c) forms of the data calls. A count that fits an int goes to the int
 * form unchanged. A larger one becomes count 1 of a datatype describing all its elements
 * (narmau_dtype_large: chunks of INT_MAX elements of the caller's type, plus the rest), built
 * for the call and freed after it: narma holds its own duplicate of any datatype it keeps past
 * a call (deferred epochs, persistent requests), and MPI keeps a type its pending operations
 * use. Everything after that is the int form's path, checks included; errors of the int form
 * already went to the window's handler, so only this file's own go there from here. */
#include "core/narmai.h"
#include "util/dtype.h"
#include <limits.h>

/* One (count, datatype) argument as the int forms take it. */
struct side {
    int count;
    MPI_Datatype type;
    MPI_Datatype made; /* the large-count type built for it, or MPI_DATATYPE_NULL */
};

static int side_of(MPI_Count count, MPI_Datatype type, struct side *s, const char *which)
{
    s->made = MPI_DATATYPE_NULL;
    s->type = type;
    if (count < 0) return NARMAU_ERR(NARMA_ERR_COUNT, "%s count %lld", which, (long long)count);
    if (count <= INT_MAX) {
        s->count = (int)count;
        return NARMA_SUCCESS;
    }
    if (type == MPI_DATATYPE_NULL) return NARMAU_ERR(NARMA_ERR_TYPE, "%s datatype is NULL", which);
    int rc = narmau_dtype_large(count, type, INT_MAX, &s->made);
    if (rc == NARMA_ERR_MPI) return narmau_mpi_error(MPI_ERR_TYPE);
    if (rc)
        return NARMAU_ERR(rc, "%s count %lld of this datatype cannot be described", which,
                          (long long)count);
    s->count = 1;
    s->type = s->made;
    return NARMA_SUCCESS;
}

static void side_done(struct side *s)
{
    if (s->made != MPI_DATATYPE_NULL) MPI_Type_free(&s->made);
}

/* Origin, result and target sides of one call: sides[i] for (counts[i], types[i]). */
#define MAX_SIDES 3
struct sides {
    struct side s[MAX_SIDES];
    int n;
};

static int sides_of(struct sides *ss, int n, const MPI_Count *counts, const MPI_Datatype *types)
{
    static const char *const names[MAX_SIDES] = {"origin", "result", "target"};
    ss->n = 0;
    for (int i = 0; i < n; i++) {
        int rc = side_of(counts[i], types[i], &ss->s[i], names[n == 2 && i == 1 ? 2 : i]);
        ss->n = i + 1;
        if (rc) return rc;
    }
    return NARMA_SUCCESS;
}

static void sides_done(struct sides *ss)
{
    for (int i = 0; i < ss->n; i++)
        side_done(&ss->s[i]);
}

/* Body of every _c call: make the sides (an error goes to w's handler), run CALL (the int
 * form: its errors went to the handler already), free what was made. */
#define LARGE(w, n, counts, types, CALL)                        \
    do {                                                        \
        struct sides ss_;                                       \
        int rc_ = sides_of(&ss_, (n), (counts), (types));       \
        if (rc_ != NARMA_SUCCESS) {                             \
            sides_done(&ss_);                                   \
            return narmai_win_ret((w), rc_);                    \
        }                                                       \
        const struct side *o_ = &ss_.s[0], *t_ = &ss_.s[(n)-1]; \
        const struct side *r_ = &ss_.s[(n) == 3 ? 1 : 0];       \
        (void)o_, (void)t_, (void)r_;                           \
        rc_ = (CALL);                                           \
        sides_done(&ss_);                                       \
        return rc_;                                             \
    } while (0)

#define OT_COUNTS \
    (MPI_Count[]) { ocount, tcount }
#define OT_TYPES \
    (MPI_Datatype[]) { otype, ttype }
#define ORT_COUNTS \
    (MPI_Count[]) { ocount, rcount, tcount }
#define ORT_TYPES \
    (MPI_Datatype[]) { otype, rtype, ttype }
/* The int form's (count, datatype) pairs, as LARGE made them. */
#define ORIG o_->count, o_->type
#define TARG t_->count, t_->type
#define RES  r_->count, r_->type

int NARMA_Put_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                MPI_Count tcount, MPI_Datatype ttype, NARMA_Win w)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES, NARMA_Put(oaddr, ORIG, target, disp, TARG, w));
}

int NARMA_Get_c(void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                MPI_Count tcount, MPI_Datatype ttype, NARMA_Win w)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES, NARMA_Get(oaddr, ORIG, target, disp, TARG, w));
}

int NARMA_Accumulate_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                       MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, NARMA_Op op,
                       NARMA_Win w)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES, NARMA_Accumulate(oaddr, ORIG, target, disp, TARG, op, w));
}

int NARMA_Get_accumulate_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, void *raddr,
                           MPI_Count rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                           MPI_Count tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w)
{
    NARMAI_API_LOCK();
    /* MPI_NO_OP ignores the origin (its datatype may be anything, even NULL): nothing to make */
    if (op == MPI_NO_OP && (ocount < 0 || ocount > INT_MAX)) ocount = 0;
    LARGE(w, 3, ORT_COUNTS, ORT_TYPES,
          NARMA_Get_accumulate(oaddr, ORIG, raddr, RES, target, disp, TARG, op, w));
}

int NARMA_Rput_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                 MPI_Count tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES, NARMA_Rput(oaddr, ORIG, target, disp, TARG, w, request));
}

int NARMA_Rget_c(void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                 MPI_Count tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES, NARMA_Rget(oaddr, ORIG, target, disp, TARG, w, request));
}

int NARMA_Raccumulate_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                        MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, NARMA_Op op,
                        NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES,
          NARMA_Raccumulate(oaddr, ORIG, target, disp, TARG, op, w, request));
}

int NARMA_Rget_accumulate_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, void *raddr,
                            MPI_Count rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                            MPI_Count tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w,
                            NARMA_Request *request)
{
    NARMAI_API_LOCK();
    if (op == MPI_NO_OP && (ocount < 0 || ocount > INT_MAX)) ocount = 0;
    LARGE(w, 3, ORT_COUNTS, ORT_TYPES,
          NARMA_Rget_accumulate(oaddr, ORIG, raddr, RES, target, disp, TARG, op, w, request));
}

int NARMA_Put_notify_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                       MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, NARMA_Win w, int tag)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES, NARMA_Put_notify(oaddr, ORIG, target, disp, TARG, w, tag));
}

int NARMA_Get_notify_c(void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                       MPI_Count tcount, MPI_Datatype ttype, NARMA_Win w, int tag)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES, NARMA_Get_notify(oaddr, ORIG, target, disp, TARG, w, tag));
}

int NARMA_Rput_notify_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                        MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, NARMA_Win w,
                        NARMA_Request *request, int tag)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES,
          NARMA_Rput_notify(oaddr, ORIG, target, disp, TARG, w, request, tag));
}

int NARMA_Rget_notify_c(void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                        MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, NARMA_Win w,
                        NARMA_Request *request, int tag)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES,
          NARMA_Rget_notify(oaddr, ORIG, target, disp, TARG, w, request, tag));
}

int NARMA_Accumulate_notify_c(const void *oaddr, MPI_Count ocount, MPI_Datatype otype, int target,
                              MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, NARMA_Op op,
                              NARMA_Win w, int tag)
{
    NARMAI_API_LOCK();
    LARGE(w, 2, OT_COUNTS, OT_TYPES,
          NARMA_Accumulate_notify(oaddr, ORIG, target, disp, TARG, op, w, tag));
}
