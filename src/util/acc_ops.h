/*
 * Accumulate operations done in place on target memory by the origin process.
 *
 * Atomicity is per basic element, as MPI requires, and holds among all the
 * accumulate-family calls on one target: each call (accumulate, get-accumulate,
 * fetch-and-op, compare-and-swap) runs under the target's lock, one 64-bit
 * word in shared memory, 0 when free, and updates its elements with plain
 * loads and stores. One lock for every element costs one atomic per call,
 * what a hardware atomic on a single element costs, and leaves a call of n
 * doubles at plain-loop speed, where an atomic per element (~10 ns on x86)
 * made large accumulates an order of magnitude slower than MPI's. The price:
 * accumulates of different origins into one target serialise, even on
 * disjoint elements.
 *
 * Origin and result buffers are C arrays of the basic type: element i at
 * i * extent(basic) (so MPI_DOUBLE_INT elements are 16 bytes apart).
 *
 * Thread safety: any number of threads and processes may accumulate into the
 * same target concurrently (they share its lock), provided the datatypes
 * involved are already in the dtype cache (narmau_dtype_get inserts without locking).
 */
#ifndef NARMA_UTIL_ACC_OPS_H
#define NARMA_UTIL_ACC_OPS_H

#include <mpi.h>
#include <stdint.h>

/* Is op allowed on this basic type in accumulate-family calls (MPI's table:
 * arithmetic on integer/floating/complex, logical on integer/logical, bitwise
 * on integer/byte, MAXLOC/MINLOC on pair types, REPLACE and NO_OP on all)?
 * Returns 0, NARMA_ERR_TYPE (MPI_DATATYPE_NULL: a mixed type) or
 * NARMA_ERR_OP (user-defined op, or op not defined on the type). MPI_CHAR
 * counts as a C integer, as in MPICH. */
int narmau_acc_check(MPI_Op op, MPI_Datatype basic);

/* For each of the n basic elements laid out at (taddr, tcount, ttype), with
 * n = tcount * size(ttype) / size(basic): if result, result[i] = old value;
 * then element = op(old, origin[i]) (REPLACE: origin[i]; NO_OP: unchanged).
 * origin may be NULL for NO_OP. lock: the target's lock, held for the whole
 * call (NULL: the caller guarantees nobody else touches the memory). Returns 0, NARMA_ERR_TYPE,
 * NARMA_ERR_OP, NARMA_ERR_COUNT or NARMA_ERR_MPI (only when MPI_Reduce_local computes an unusual
 * type). */
int narmau_acc_apply(void *taddr, int tcount, MPI_Datatype ttype, const void *origin, void *result,
                     MPI_Op op, uint64_t *lock);

/* Compare-and-swap of one element of a predefined integer, logical, byte or
 * floating type (compared bit for bit): *result = old; if old == *compare the
 * element becomes *origin. Atomic with respect to narmau_acc_apply on the
 * same type and lock. Returns 0 or NARMA_ERR_TYPE. */
int narmau_acc_cas(void *taddr, const void *origin, const void *compare, void *result,
                   MPI_Datatype type, uint64_t *lock);

/* The target spinlock, also usable on its own. */
void narmau_acc_lock(uint64_t *lock);
void narmau_acc_unlock(uint64_t *lock);

#endif /* NARMA_UTIL_ACC_OPS_H */
