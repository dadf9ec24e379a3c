/* narma-test: np=2,3,4 transports=shm,mpi timeout=120 env=UCX_MEM_EVENTS=no */
/*
 * A dynamic window that grows one small element at a time, the way MPICH's
 * linked_list_bench tests (and the MPI standard's list example) use one: every rank
 * allocates ELEMS elements of 24 bytes with NARMA_Alloc_mem (MPI_Alloc_mem), attaching each as it
 * goes, and after each attach reaches its right neighbour's newest element (Get, Fetch_and_op
 * and Compare_and_swap under an exclusive lock, then Get_accumulate under a shared one), so that
 * every access meets a table that changed since the last one and copies it again. At the end every
 * element of every rank holds what its left neighbour's atomics left there.
 *
 * Why: Open MPI's dynamic windows hold at most 64 registered regions per process by default
 * (osc_rdma_max_attach), one per run of pages the attached memory covers, and MPICH's
 * linked_list_bench_lock_excl and _shr_nocheck failed across pretend nodes (MPI_Win_attach:
 * MPI_ERR_RMA_ATTACH) because narma took fresh arrays for every copy and publication of a
 * region table, which scattered the program's elements over about twice the pages they cover
 * natively (57-63 instead of 28-32 for 250 elements). The tables' arrays are now kept and
 * grown by doubling (narmat_dyn_tab, dyn_refresh). This test keeps the pattern and checks
 * every value; it does not reach Open MPI's limit by itself (its elements cover 40-47 pages
 * with the old code), so the foreign suite (docs/conformance.md) is the one that shows the
 * limit.
 */
#include "common.h"

#include <stdint.h>
#include <stdlib.h>

#define ELEMS 250

struct elem {
    long long value; /* the owner's id, then the left neighbour's atomics */
    long long count; /* fetch_and_op adds 1 */
    long long flag;  /* compare_and_swap: 0 -> 1 */
};

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_dynamic_many", 110);
    int rank = test_rank, size = test_size;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    struct elem **mine = calloc(ELEMS, sizeof *mine);
    CHECK(mine != NULL, "out of memory");

    test_phase("attach one element at a time, each followed by atomics on the neighbour's");
    for (int i = 0; i < ELEMS; i++) {
        struct elem *e = NULL;
        CHECK_RC(NARMA_Alloc_mem((MPI_Aint)sizeof *e, MPI_INFO_NULL, &e));
        *e = (struct elem){1000LL * rank + i, 0, 0};
        mine[i] = e;
        snprintf(test_detail, sizeof test_detail, "element %d", i);
        CHECK_RC(NARMA_Win_attach(win, e, sizeof *e));
        MPI_Aint me, there = 0;
        CHECK_MPI(MPI_Get_address(e, &me));
        CHECK_MPI(MPI_Sendrecv(&me, 1, MPI_AINT, left, 1, &there, 1, MPI_AINT, right, 1,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        long long v = -1, one = 1, old = -1, zero = 0, set = 1, prev = -1, add = 0, got = -1;
        CHECK_RC(NARMA_Get(&v, 1, MPI_LONG_LONG, right, there, 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Fetch_and_op(&one, &old, MPI_LONG_LONG, right,
                                    there + (MPI_Aint)offsetof(struct elem, count), MPI_SUM, win));
        CHECK_RC(NARMA_Compare_and_swap(&set, &zero, &prev, MPI_LONG_LONG, right,
                                        there + (MPI_Aint)offsetof(struct elem, flag), win));
        CHECK_RC(NARMA_Win_unlock(right, win));
        CHECK(v == 1000LL * right + i && old == 0 && prev == 0,
              "element %d at rank %d: value %lld count %lld flag %lld, expected %lld 0 0", i, right,
              v, old, prev, 1000LL * right + i);
        CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        CHECK_RC(NARMA_Get_accumulate(&add, 1, MPI_LONG_LONG, &got, 1, MPI_LONG_LONG, right, there,
                                      1, MPI_LONG_LONG, MPI_NO_OP, win));
        CHECK_RC(NARMA_Win_unlock(right, win));
        CHECK(got == v, "element %d at rank %d: get_accumulate read %lld, expected %lld", i, right,
              got, v);
    }

    test_phase("every element holds what its left neighbour left");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK_RC(NARMA_Win_sync(win));
    for (int i = 0; i < ELEMS; i++)
        CHECK(mine[i]->value == 1000LL * rank + i && mine[i]->count == 1 && mine[i]->flag == 1,
              "element %d: %lld %lld %lld, expected %lld 1 1", i, mine[i]->value, mine[i]->count,
              mine[i]->flag, 1000LL * rank + i);
    CHECK_RC(NARMA_Win_unlock(rank, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < ELEMS; i++) {
        CHECK_RC(NARMA_Win_detach(win, mine[i]));
        CHECK_RC(NARMA_Free_mem(mine[i]));
    }
    free(mine);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
