/* Boundary checks shared by RMA and notified-access entry points. */
#ifndef NARMAI_RMA_H
#define NARMAI_RMA_H
#include "core/narmai.h"

#define NARMAI_CHK_NO_ORIGIN 1 /* origin buffer unused (NO_OP) */
#define NARMAI_CHK_NO_EPOCH  2 /* legal outside an epoch (notified access) */

int narmai_rma_check(struct narmai_win *w, int target, MPI_Aint disp, int ocount,
                     MPI_Datatype otype, int tcount, MPI_Datatype ttype, int flags);
int narmai_acc_check(MPI_Op op, MPI_Datatype ttype);
/* Get-accumulate results: a NULL result buffer is refused only when the result carries bytes
 * (NARMA_ERR_ARG); result_check: (rcount, rtype) valid and as many bytes as the target's
 * (NARMA_ERR_COUNT, NARMA_ERR_TYPE). */
int narmai_null_result(const void *raddr, int rcount, MPI_Datatype rtype);
int narmai_result_check(int rcount, MPI_Datatype rtype, int tcount, MPI_Datatype ttype);
/* Fetch_and_op's and Compare_and_swap's own rules (result buffer, predefined types, CAS's
 * integer types): NARMA_ERR_ARG, NARMA_ERR_TYPE. */
int narmai_fop_check(const void *raddr, MPI_Datatype type, struct narmai_win *w);
int narmai_cas_check(const void *oaddr, const void *caddr, const void *raddr, MPI_Datatype type);

/* MPI_PROC_NULL as the target (or lock/flush rank), or a transfer of no bytes:
 * the call succeeds and does nothing (MPI); a request form gets a request that
 * is already complete. */
int narmai_proc_null(struct narmai_win *w, NARMA_Request *request);

/* A datatype kept past the call that passed it: derived types are duplicated (the program may
 * free its own), predefined ones kept as they are; release undoes hold. */
int narmai_type_hold(MPI_Datatype *t);
void narmai_type_release(MPI_Datatype *t);
#endif
