/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 env=UCX_MEM_EVENTS=no */
/*
 * An MPI library that does not share a Win_allocate window's memory may say so the MPI-4.1
 * way: MPI_Win_shared_query succeeds with size 0 and a NULL base. A window across (pretend)
 * nodes then talks to the node's peers through mpi, not through shm at a NULL address.
 *
 * This program stands in for such a library: it defines PMPI_Win_shared_query (the symbol
 * narma calls; the executable's definition comes first), and while `refuse` is set answers
 * every query on an MPI_Win_allocate window with success, size 0 and NULL, as MPI-4.1
 * prescribes for memory not shared; otherwise it passes the call to the MPI library. narma took
 * that answer for an empty window that is shared, and the first put to a node peer wrote through
 * NULL (a crash). Checked: Win_allocate windows of several sizes, created while the library
 * refuses, move data between every pair (a notified put from every rank to every rank, and a get
 * back), and a window made when the library answers normally still works after.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>

static volatile int refuse;

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr);
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    typedef int (*query_fn)(MPI_Win, int, MPI_Aint *, int *, void *);
    static query_fn real;
    int *flavor = NULL, found = 0;
    /* Only Win_allocate windows: MPI_Win_allocate_shared memory is shared by definition. */
    if (refuse && PMPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &found) == MPI_SUCCESS &&
        found && *flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        *size = 0;
        *disp_unit = 1;
        *(void **)baseptr = NULL;
        return MPI_SUCCESS;
    }
    if (real == NULL) real = (query_fn)(uintptr_t)dlsym(RTLD_NEXT, "PMPI_Win_shared_query");
    return real != NULL ? real(win, rank, size, disp_unit, baseptr) : MPI_ERR_OTHER;
}

/* Every rank puts (1000 * rank + t) into slot rank of every rank t, notified, then gets back
 * slot rank of every rank. */
static void exchange(long long *slots, NARMA_Win win, const char *what)
{
    const int rank = test_rank, size = test_size;
    snprintf(test_detail, sizeof test_detail, "%s (%s)", what, NARMA_Win_get_transport(win));
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(win, MPI_ANY_SOURCE, 5, size, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; t < size; t++) {
        long long v = 1000LL * rank + t;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_LONG_LONG, t, rank, 1, MPI_LONG_LONG, win, 5));
    }
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&req));
    for (int s = 0; s < size; s++)
        CHECK(slots[s] == 1000LL * s + rank, "%s: slot %d holds %lld, want %lld", what, s, slots[s],
              1000LL * s + rank);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int t = 0; t < size; t++) {
        long long g = -1;
        CHECK_RC(NARMA_Get(&g, 1, MPI_LONG_LONG, t, rank, 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_flush(t, win));
        CHECK(g == 1000LL * rank + t, "%s: got %lld back from %d, want %lld", what, g, t,
              1000LL * rank + t);
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_shared_query_null", 50);
    const int size = test_size;
    long long *slots;
    NARMA_Win win;

    test_phase("Win_allocate while MPI says the memory is not shared (size 0, NULL)");
    const MPI_Aint extra[] = {0, 4096, 1 << 20};
    for (int i = 0; i < 3; i++) {
        refuse = 1;
        CHECK_RC(NARMA_Win_allocate(size * (MPI_Aint)sizeof(long long) + extra[i],
                                    sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &slots,
                                    &win));
        refuse = 0;
        for (int s = 0; s < size; s++)
            slots[s] = -1;
        exchange(slots, win, "refused");
        CHECK_RC(NARMA_Win_free(&win));
    }

    test_phase("Win_allocate with MPI answering normally");
    CHECK_RC(NARMA_Win_allocate(size * (MPI_Aint)sizeof(long long), sizeof(long long),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &slots, &win));
    for (int s = 0; s < size; s++)
        slots[s] = -1;
    exchange(slots, win, "answered");
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
