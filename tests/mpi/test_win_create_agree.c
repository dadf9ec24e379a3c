/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Window creation is collective, and a failure on one rank is a failure on all of them: no rank
 * is left blocked in a collective that a failed rank skipped (0.1.0 returned at once on the rank
 * with the bad argument and left the others waiting forever). For each kind of bad input, given
 * by the last rank only:
 *   - the last rank gets its own error class (NARMA_ERR_ARG for arguments and info values);
 *   - every other rank gets an error too (the same class: the worst one seen), never success;
 *   - no window exists afterwards: the handle is NARMA_WIN_NULL, whatever it held before (it
 *     holds a stale value going in), and a correct creation that follows works and carries data.
 * Kinds: disp_unit 0, negative size, NULL base with a size (Win_create), NULL baseptr
 * (Win_allocate), NULL window pointer, a narma info key with a value that is neither true nor
 * false (on every flavor).
 */
#include "common.h"

static int rank, size, last;

/* What a handle holds before a failed creation: not a window (as a freed or never-set one). */
#define STALE ((NARMA_Win)(uintptr_t)0x1a1a1a1a1a1a1a1aULL)

/* A correct window after a failed creation: lock_all, put to the right, flush, check. */
static void still_creates(const char *after)
{
    test_phase(after);
    int *base = NULL;
    NARMA_Win w = NARMA_WIN_NULL;
    CHECK_RC(
        NARMA_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w));
    base[0] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 1000 + rank;
    CHECK_RC(NARMA_Win_lock_all(0, w));
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, w));
    CHECK_RC(NARMA_Win_unlock_all(w));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_sync(w));
    CHECK(base[0] == 1000 + (rank + size - 1) % size, "got %d after %s", base[0], after);
    CHECK_RC(NARMA_Win_free(&w));
}

/* Every rank must fail; the last rank with `mine`, the others with the same class. */
static void expect_all_fail(int rc, int mine, NARMA_Win w, const char *what)
{
    if (rank == last)
        CHECK(rc == mine, "%s: the failing rank got %d (%s), expected %d", what, rc,
              NARMA_Strerror(rc), mine);
    else
        CHECK(rc == mine, "%s: a rank with good arguments got %d (%s), expected %d (%s)", what, rc,
              NARMA_Strerror(rc), mine, NARMA_Strerror(mine));
    CHECK(w == NARMA_WIN_NULL, "%s: a window handle was returned with an error", what);
    still_creates(what);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_win_create_agree", 50);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    last = size - 1;
    int buf[8];
    NARMA_Win w;
    int *base = NULL;

    test_phase("disp_unit 0 on the last rank (Win_allocate)");
    w = STALE;
    int rc = NARMA_Win_allocate(64, rank == last ? 0 : 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
    expect_all_fail(rc, NARMA_ERR_ARG, w, "disp_unit 0");

    test_phase("negative size on the last rank (Win_create)");
    w = STALE;
    rc = NARMA_Win_create(buf, rank == last ? -8 : (MPI_Aint)sizeof buf, 4, MPI_INFO_NULL,
                          MPI_COMM_WORLD, &w);
    expect_all_fail(rc, NARMA_ERR_ARG, w, "negative size");

    test_phase("NULL base with a size on the last rank (Win_create)");
    w = STALE;
    rc = NARMA_Win_create(rank == last ? NULL : buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD,
                          &w);
    expect_all_fail(rc, NARMA_ERR_ARG, w, "NULL base");

    test_phase("NULL baseptr on the last rank (Win_allocate)");
    w = STALE;
    rc = NARMA_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, rank == last ? NULL : &base, &w);
    expect_all_fail(rc, NARMA_ERR_ARG, w, "NULL baseptr");

    test_phase("NULL window pointer on the last rank (Win_create_dynamic)");
    w = rank == last ? NARMA_WIN_NULL : STALE; /* the last rank passes no handle to set */
    rc = NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, rank == last ? NULL : &w);
    expect_all_fail(rc, NARMA_ERR_ARG, w, "NULL window pointer");

    MPI_Info bad;
    CHECK_MPI(MPI_Info_create(&bad));
    CHECK_MPI(MPI_Info_set(bad, "narma_reorder_aaar", "maybe"));
    MPI_Info info = rank == last ? bad : MPI_INFO_NULL;

    test_phase("bad info value on the last rank (Win_allocate)");
    w = STALE;
    rc = NARMA_Win_allocate(64, 4, info, MPI_COMM_WORLD, &base, &w);
    expect_all_fail(rc, NARMA_ERR_ARG, w, "bad info, allocate");

    test_phase("bad info value on the last rank (Win_create)");
    w = STALE;
    rc = NARMA_Win_create(buf, sizeof buf, 4, info, MPI_COMM_WORLD, &w);
    expect_all_fail(rc, NARMA_ERR_ARG, w, "bad info, create");

    test_phase("bad info value on the last rank (Win_create_dynamic)");
    w = STALE;
    rc = NARMA_Win_create_dynamic(info, MPI_COMM_WORLD, &w);
    expect_all_fail(rc, NARMA_ERR_ARG, w, "bad info, dynamic");
    MPI_Info_free(&bad);

    return test_finish();
}
