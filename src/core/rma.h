/* Boundary checks shared by RMA and notified-access entry points. */
#ifndef NARMAI_RMA_H
#define NARMAI_RMA_H
#include "core/narmai.h"

#define NARMAI_CHK_NO_ORIGIN 1 /* origin buffer unused (NO_OP) */
#define NARMAI_CHK_NO_EPOCH  2 /* legal outside an epoch (notified access) */

int narmai_rma_check(struct narmai_win *w, int target, MPI_Aint disp, int ocount,
                     MPI_Datatype otype, int tcount, MPI_Datatype ttype, int flags);
int narmai_acc_check(MPI_Op op, MPI_Datatype ttype);

/* MPI_PROC_NULL as the target (or lock/flush rank), or a transfer of no bytes:
 * the call succeeds and does nothing (MPI); a request form gets a request that
 * is already complete. */
int narmai_proc_null(struct narmai_win *w, NARMA_Request *request);

/* A datatype kept past the call that passed it: derived types are duplicated (the program may
 * free its own), predefined ones kept as they are; release undoes hold. */
int narmai_type_hold(MPI_Datatype *t);
void narmai_type_release(MPI_Datatype *t);
#endif
