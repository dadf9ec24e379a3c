/*
 * Accumulate operations done in place on target memory by the origin process.
 *
 * Atomicity is per basic element, as MPI requires. Elements of 1, 2, 4 or 8
 * bytes at naturally aligned addresses use hardware atomics: fetch_add for
 * integer SUM, fetch_and/or/xor for BAND/BOR/BXOR, exchange for REPLACE, a
 * load for NO_OP and a compare-exchange loop for every other op. Any other
 * element (long double, complex double, MPI_DOUBLE_INT, a misaligned int, ...)
 * is updated under a spinlock: one 64-bit word per target in shared memory,
 * 0 when free. Whether an element is atomic or locked depends only on its
 * type and its address modulo 8, which every process sees alike (segments
 * are page aligned); since concurrent accumulates to one location must use
 * one basic type, a location is never updated both ways.
 *
 * Origin and result buffers are C arrays of the basic type: element i at
 * i * extent(basic) (so MPI_DOUBLE_INT elements are 16 bytes apart).
 *
 * Thread safety: any number of threads and processes may accumulate into the
 * same target concurrently, provided the datatypes involved are already in
 * the dtype cache (narmau_dtype_get inserts without locking).
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
 * origin may be NULL for NO_OP. lock: the target's spinlock for elements
 * without hardware atomics (NULL: the caller guarantees nobody else touches
 * the memory). Returns 0, NARMA_ERR_TYPE, NARMA_ERR_OP, NARMA_ERR_COUNT or
 * NARMA_ERR_MPI (only when MPI_Reduce_local computes an unusual type). */
int narmau_acc_apply(void *taddr, int tcount, MPI_Datatype ttype, const void *origin, void *result,
                     MPI_Op op, uint64_t *lock);

/* Compare-and-swap of one element of a predefined integer, logical, byte or
 * floating type (compared bit for bit): *result = old; if old == *compare the
 * element becomes *origin. Atomic with respect to narmau_acc_apply on the
 * same type. Returns 0 or NARMA_ERR_TYPE. */
int narmau_acc_cas(void *taddr, const void *origin, const void *compare, void *result,
                   MPI_Datatype type, uint64_t *lock);

/* The target spinlock, also usable on its own. */
void narmau_acc_lock(uint64_t *lock);
void narmau_acc_unlock(uint64_t *lock);

#endif /* NARMA_UTIL_ACC_OPS_H */
