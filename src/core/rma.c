/* RMA entry points: argument and epoch checks at the boundary, then the transport. */
#include "core/rma.h"
#include "core/epoch.h"
#include "util/acc_ops.h"
#include "util/dtype.h"

/* A dynamic window's target type with gaps: its span may cross memory the
 * target never attached (a vector over two regions with a gap between them),
 * which MPI allows as long as every byte accessed is attached, so each block is
 * checked on its own (one region per block). */
static int check_blocks(struct narmai_win *w, int target, MPI_Aint disp, const narmau_dtype *td,
                        int tcount)
{
    for (int i = 0; i < tcount; i++)
        for (int b = 0; b < td->nblocks; b++) {
            MPI_Aint lo, hi;
            if (__builtin_mul_overflow((MPI_Aint)i, td->extent, &lo) ||
                __builtin_add_overflow(lo, td->blocks[b].off, &lo) ||
                __builtin_add_overflow(lo, td->blocks[b].len, &hi))
                return NARMAU_ERR(NARMA_ERR_DISP, "block %d of element %d overflows", b, i);
            int rc = narmat_check_bounds(&w->t, target, disp, lo, hi);
            if (rc) return rc;
        }
    return NARMA_SUCCESS;
}

/* Check one side's (count, type) and return its size in bytes. */
static int check_side(int count, MPI_Datatype type, const narmau_dtype **d, const char *which)
{
    if (count < 0) return NARMAU_ERR(NARMA_ERR_COUNT, "%s count %d", which, count);
    if (type == MPI_DATATYPE_NULL) return NARMAU_ERR(NARMA_ERR_TYPE, "%s datatype is NULL", which);
    int rc = narmau_dtype_get(type, d);
    if (rc) return NARMAU_ERR(rc, "%s datatype is invalid or not committed", which);
    return NARMA_SUCCESS;
}

int narmai_rma_check(struct narmai_win *w, int target, MPI_Aint disp, int ocount,
                     MPI_Datatype otype, int tcount, MPI_Datatype ttype, int flags)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (target < 0 || target >= w->t.size)
        return NARMAU_ERR(NARMA_ERR_RANK, "target %d outside 0..%d", target, w->t.size - 1);
    /* The same access as one accepted before (a halo's or a ping-pong's puts repeat): every
     * check below would give the same answer. */
    struct narmai_chk_set *set = &w->chk_memo[target & (NARMAI_CHK_MEMO - 1)];
    const uint64_t gen1 = __atomic_load_n(&narmau_dtype_gen, __ATOMIC_RELAXED) + 1;
    const int no_origin = flags & NARMAI_CHK_NO_ORIGIN;
    for (int i = 0; i < NARMAI_CHK_WAYS; i++) {
        const struct narmai_chk_memo *m = &set->way[i];
        if (m->gen1 == gen1 && m->target == target && m->disp == disp && m->ttype == ttype &&
            m->tcount == tcount && m->otype == otype && m->ocount == ocount &&
            m->no_origin == no_origin)
            return NARMA_SUCCESS;
    }
    const narmau_dtype *td, *od;
    int rc = check_side(tcount, ttype, &td, "target");
    if (rc) return rc;
    if (!(flags & NARMAI_CHK_NO_ORIGIN)) {
        if (otype == ttype) { /* the common case: one description for both sides */
            if (ocount < 0) return NARMAU_ERR(NARMA_ERR_COUNT, "origin count %d", ocount);
            od = td;
        } else if ((rc = check_side(ocount, otype, &od, "origin"))) {
            return rc;
        }
        /* Type signatures: both built from one basic type -> the same one. An
         * empty transfer matches any signature (MPI), so compare only with bytes. */
        if (od->basic != MPI_DATATYPE_NULL && td->basic != MPI_DATATYPE_NULL &&
            od->basic != td->basic && (MPI_Aint)ocount * od->size > 0)
            return NARMAU_ERR(NARMA_ERR_TYPE, "origin and target basic datatypes differ");
        if ((MPI_Aint)ocount * od->size != (MPI_Aint)tcount * td->size)
            return NARMAU_ERR(NARMA_ERR_TYPE, "origin carries %ld bytes, target %ld",
                              (long)((MPI_Aint)ocount * od->size),
                              (long)((MPI_Aint)tcount * td->size));
    }
    /* Every flavor: for dynamic windows the transport checks the regions the
     * target attached. */
    if (w->t.flavor == MPI_WIN_FLAVOR_DYNAMIC && !td->contiguous && td->nblocks > 0)
        return check_blocks(w, target, disp, td, tcount);
    MPI_Aint lo, hi;
    narmau_dtype_span(td, tcount, &lo, &hi);
    if ((rc = narmat_check_bounds(&w->t, target, disp, lo, hi))) return rc;
    if (w->t.flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        set->way[set->next] = (struct narmai_chk_memo){.disp = disp,
                                                       .otype = otype,
                                                       .ttype = ttype,
                                                       .gen1 = gen1,
                                                       .target = target,
                                                       .ocount = ocount,
                                                       .tcount = tcount,
                                                       .no_origin = no_origin};
        set->next = (set->next + 1) % NARMAI_CHK_WAYS;
    }
    return NARMA_SUCCESS;
}

int narmai_proc_null(struct narmai_win *w, NARMA_Request *request)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (request == NULL) return NARMA_SUCCESS;
    int rc =
        narmai_request_born_complete(narmai_request_new(NARMAI_REQ_RMA, w), NARMA_SUCCESS, request);
    if (rc == NARMA_SUCCESS) (*request)->st_src = MPI_PROC_NULL;
    return rc;
}

/* A transfer of no bytes (zero count or a zero-size type) has no effect and
 * matches any signature (MPI); it never reaches the transport, since some MPI
 * libraries refuse zero-count calls whose datatypes differ (Open MPI). */
static int no_bytes(int tcount, MPI_Datatype ttype)
{
    const narmau_dtype *td;
    return tcount == 0 || (narmau_dtype_get(ttype, &td) == NARMA_SUCCESS && td->size == 0);
}

/* Submit an RMA call to its epoch; R* forms get a request that completes when
 * the operation is issued and locally complete. */
static int submit(struct narmai_win *w, struct narmai_op *op, NARMA_Request *request)
{
    struct narmai_request *r = NULL;
    if (request != NULL) {
        if ((r = narmai_request_new(NARMAI_REQ_RMA, w)) == NULL)
            return NARMAU_ERR(NARMA_ERR_NO_MEM, "request");
        r->st_src = w->t.rank;
        r->st_tag = MPI_ANY_TAG;
        op->req = r;
    }
    int rc = narmai_rma_submit(w, op);
    if (rc != NARMA_SUCCESS) {
        if (r != NULL) narmai_request_release(r);
        return rc;
    }
    if (r != NULL) *request = r;
    return NARMA_SUCCESS;
}

static int do_put(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                  int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, request);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, 0);
    if (rc) return rc;
#endif
    if (no_bytes(tcount, ttype)) return narmai_proc_null(w, request);
    struct narmai_op op = {.kind = NARMAI_OP_PUT,
                           .target = target,
                           .disp = disp,
                           .oaddr = oaddr,
                           .ocount = ocount,
                           .otype = otype,
                           .tcount = tcount,
                           .ttype = ttype,
                           .rtype = MPI_DATATYPE_NULL};
    return submit(w, &op, request);
}

static int do_get(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                  int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, request);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, 0);
    if (rc) return rc;
#endif
    if (no_bytes(tcount, ttype)) return narmai_proc_null(w, request);
    struct narmai_op op = {.kind = NARMAI_OP_GET,
                           .target = target,
                           .disp = disp,
                           .raddr = oaddr,
                           .ocount = ocount,
                           .otype = otype,
                           .tcount = tcount,
                           .ttype = ttype,
                           .rtype = MPI_DATATYPE_NULL};
    return submit(w, &op, request);
}

/* Checks shared by the accumulate family: op valid for the target's basic type. */
int narmai_acc_check(MPI_Op op, MPI_Datatype ttype)
{
    const narmau_dtype *td;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc) return rc;
    if (td->basic == MPI_DATATYPE_NULL)
        return NARMAU_ERR(NARMA_ERR_TYPE,
                          "accumulate datatypes must be built from one predefined type");
    rc = narmau_acc_check(op, td->basic);
    return rc ? NARMAU_ERR(rc, "operation not allowed on this datatype") : NARMA_SUCCESS;
}

int narmai_result_check(int rcount, MPI_Datatype rtype, int tcount, MPI_Datatype ttype)
{
    const narmau_dtype *rd, *td;
    int rc = check_side(rcount, rtype, &rd, "result");
    if (rc) return rc;
    narmau_dtype_get(ttype, &td);
    if ((MPI_Aint)rcount * rd->size != (MPI_Aint)tcount * td->size)
        return NARMAU_ERR(NARMA_ERR_TYPE, "result buffer size differs from target's");
    /* Signatures as for origin and target (narmai_rma_check): both of one basic type, the same
     * one. Zero bytes match anything. */
    if (rd->basic != MPI_DATATYPE_NULL && td->basic != MPI_DATATYPE_NULL &&
        rd->basic != td->basic && (MPI_Aint)rcount * rd->size > 0)
        return NARMAU_ERR(NARMA_ERR_TYPE, "result and target basic datatypes differ");
    return NARMA_SUCCESS;
}

static int do_acc(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr, int rcount,
                  MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                  MPI_Op op, NARMA_Win w, NARMA_Request *request)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, request);
#if NARMA_ARG_CHECKS
    /* With NO_OP the origin buffer is ignored (MPI). */
    int flags = op == MPI_NO_OP ? NARMAI_CHK_NO_ORIGIN : 0;
    int rc = narmai_rma_check(w, target, disp, ocount, otype, tcount, ttype, flags);
    if (rc) return rc;
    if ((rc = narmai_acc_check(op, ttype))) return rc;
    if (raddr != NULL && (rc = narmai_result_check(rcount, rtype, tcount, ttype))) return rc;
#endif
    if (no_bytes(tcount, ttype)) return narmai_proc_null(w, request);
    /* NO_OP ignores the origin: do not hold on to its (possibly NULL) datatype. */
    struct narmai_op rec = {.kind = NARMAI_OP_ACC,
                            .target = target,
                            .disp = disp,
                            .oaddr = oaddr,
                            .ocount = ocount,
                            .otype = op == MPI_NO_OP ? MPI_DATATYPE_NULL : otype,
                            .raddr = raddr,
                            .rcount = rcount,
                            .rtype = raddr ? rtype : MPI_DATATYPE_NULL,
                            .tcount = tcount,
                            .ttype = ttype,
                            .op = op};
    return submit(w, &rec, request);
}

int NARMA_Put(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
              int tcount, MPI_Datatype ttype, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, do_put(oaddr, ocount, otype, target, disp, tcount, ttype, w, NULL));
}

static int api_rput(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                    int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return do_put(oaddr, ocount, otype, target, disp, tcount, ttype, w, request);
}

int NARMA_Rput(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
               int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w,
                          api_rput(oaddr, ocount, otype, target, disp, tcount, ttype, w, request));
}

int NARMA_Get(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
              MPI_Datatype ttype, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, do_get(oaddr, ocount, otype, target, disp, tcount, ttype, w, NULL));
}

static int api_rget(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                    int tcount, MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    return do_get(oaddr, ocount, otype, target, disp, tcount, ttype, w, request);
}

int NARMA_Rget(void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
               MPI_Datatype ttype, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w,
                          api_rget(oaddr, ocount, otype, target, disp, tcount, ttype, w, request));
}

static int api_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                          MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w)
{
    if (op == MPI_NO_OP) return NARMAU_ERR(NARMA_ERR_OP, "MPI_NO_OP is only for get-accumulates");
    return do_acc(oaddr, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, target, disp, tcount, ttype, op,
                  w, NULL);
}

int NARMA_Accumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                     int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w,
                          api_accumulate(oaddr, ocount, otype, target, disp, tcount, ttype, op, w));
}

static int api_raccumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target,
                           MPI_Aint disp, int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w,
                           NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    if (op == MPI_NO_OP) return NARMAU_ERR(NARMA_ERR_OP, "MPI_NO_OP is only for get-accumulates");
    return do_acc(oaddr, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, target, disp, tcount, ttype, op,
                  w, request);
}

int NARMA_Raccumulate(const void *oaddr, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                      int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w,
                      NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(
        w, api_raccumulate(oaddr, ocount, otype, target, disp, tcount, ttype, op, w, request));
}

/* A NULL result buffer is refused only when the result carries bytes; an
 * empty result (zero count or a zero-size type) is no result at all. */
int narmai_null_result(const void *raddr, int rcount, MPI_Datatype rtype)
{
    if (raddr != NULL || rcount <= 0) return NARMA_SUCCESS;
    const narmau_dtype *rd;
    if (rtype != MPI_DATATYPE_NULL && narmau_dtype_get(rtype, &rd) == NARMA_SUCCESS &&
        rd->size == 0)
        return NARMA_SUCCESS;
    return NARMAU_ERR(NARMA_ERR_ARG, "NULL result buffer");
}

static int api_get_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                              int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
                              MPI_Datatype ttype, NARMA_Op op, NARMA_Win w)
{
    int rc = narmai_null_result(raddr, rcount, rtype);
    if (rc) return rc;
    return do_acc(oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount, ttype, op, w,
                  NULL);
}

int NARMA_Get_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr, int rcount,
                         MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
                         MPI_Datatype ttype, NARMA_Op op, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_get_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, target,
                                                disp, tcount, ttype, op, w));
}

static int api_rget_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                               int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                               int tcount, MPI_Datatype ttype, NARMA_Op op, NARMA_Win w,
                               NARMA_Request *request)
{
    if (request == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL request pointer");
    int rc = narmai_null_result(raddr, rcount, rtype);
    if (rc) return rc;
    return do_acc(oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount, ttype, op, w,
                  request);
}

int NARMA_Rget_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                          int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
                          MPI_Datatype ttype, NARMA_Op op, NARMA_Win w, NARMA_Request *request)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_rget_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, target,
                                                 disp, tcount, ttype, op, w, request));
}

/* Fetch_and_op: a result buffer and a predefined datatype (the datatype's validity itself is
 * checked with the window's other arguments). */
int narmai_fop_check(const void *raddr, MPI_Datatype type, struct narmai_win *w)
{
    if (raddr == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL result buffer");
    if (narmai_win_ok(w) && type != MPI_DATATYPE_NULL) {
        const narmau_dtype *d;
        int rc = narmau_dtype_get(type, &d);
        if (rc == NARMA_SUCCESS && (d->basic != type))
            return NARMAU_ERR(NARMA_ERR_TYPE, "Fetch_and_op needs a predefined datatype");
    }
    return NARMA_SUCCESS;
}

/* Compare_and_swap, after narmai_rma_check accepted (1, type) on both sides. */
int narmai_cas_check(const void *oaddr, const void *caddr, const void *raddr, MPI_Datatype type)
{
    if (oaddr == NULL || caddr == NULL || raddr == NULL)
        return NARMAU_ERR(NARMA_ERR_ARG, "NULL buffer");
    /* MPI: C integer, Fortran integer, logical, multi-language and byte types only. */
    if (type == MPI_FLOAT || type == MPI_DOUBLE || type == MPI_LONG_DOUBLE ||
        type == MPI_C_FLOAT_COMPLEX || type == MPI_C_DOUBLE_COMPLEX)
        return NARMAU_ERR(NARMA_ERR_TYPE,
                          "Compare_and_swap needs an integer, logical or byte type");
    const narmau_dtype *d;
    narmau_dtype_get(type, &d);
    if (d->basic != type)
        return NARMAU_ERR(NARMA_ERR_TYPE, "Compare_and_swap needs a predefined datatype");
    return NARMA_SUCCESS;
}

static int api_fetch_and_op(const void *oaddr, void *raddr, MPI_Datatype type, int target,
                            MPI_Aint disp, NARMA_Op op, NARMA_Win w)
{
    int rc = narmai_fop_check(raddr, type, w);
    if (rc) return rc;
    return do_acc(oaddr, 1, type, raddr, 1, type, target, disp, 1, type, op, w, NULL);
}

int NARMA_Fetch_and_op(const void *oaddr, void *raddr, MPI_Datatype type, int target, MPI_Aint disp,
                       NARMA_Op op, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_fetch_and_op(oaddr, raddr, type, target, disp, op, w));
}

static int api_compare_and_swap(const void *oaddr, const void *caddr, void *raddr,
                                MPI_Datatype type, int target, MPI_Aint disp, NARMA_Win w)
{
    if (target == MPI_PROC_NULL) return narmai_proc_null(w, NULL);
#if NARMA_ARG_CHECKS
    int rc = narmai_rma_check(w, target, disp, 1, type, 1, type, 0);
    if (rc || (rc = narmai_cas_check(oaddr, caddr, raddr, type))) return rc;
#endif
    struct narmai_op rec = {.kind = NARMAI_OP_CAS,
                            .target = target,
                            .disp = disp,
                            .oaddr = oaddr,
                            .caddr = caddr,
                            .raddr = raddr,
                            .ocount = 1,
                            .otype = type,
                            .rtype = MPI_DATATYPE_NULL,
                            .tcount = 1,
                            .ttype = type};
    return submit(w, &rec, NULL);
}

int NARMA_Compare_and_swap(const void *oaddr, const void *caddr, void *raddr, MPI_Datatype type,
                           int target, MPI_Aint disp, NARMA_Win w)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(w, api_compare_and_swap(oaddr, caddr, raddr, type, target, disp, w));
}
