/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * A program written against foMPI-NA's API builds and runs on narma through
 * <narma/fompi.h>:
 *  - foMPI_Win_get_attr stores the VALUE of the predefined attributes, as
 *    foMPI does (flavor, disp_unit and model into an int, size into an
 *    MPI_Aint, the base address), for create, allocate and dynamic windows,
 *    while NARMA_Win_get_attr keeps MPI's convention (a pointer) in the same
 *    program;
 *  - foMPI_Win_set_name returns foMPI_NAME_ABBREVIATED for a name longer
 *    than MPI_MAX_OBJECT_NAME - 1 characters, MPI_SUCCESS otherwise;
 *  - the foMPI_ calls of a notified ring exchange (foMPI_Put_notify,
 *    foMPI_Notify_init/Start/Wait, foMPI_Win_flush, foMPI_Request_free)
 *    and of a lock epoch work, and the standard headers foMPI's fompi.h
 *    provides (PRId64, int64_t) are there.
 */
#include <narma/fompi.h>

#include "common.h"

static void check_attrs(foMPI_Win win, int flavor, void *base, MPI_Aint size, int disp_unit)
{
    int flag = 0, ival = -1;
    MPI_Aint aval = -1;
    void *pval = NULL;
    CHECK_RC(foMPI_Win_get_attr(win, foMPI_WIN_CREATE_FLAVOR, &ival, &flag));
    CHECK(flag && ival == flavor, "flavor %d, expected %d", ival, flavor);
    CHECK_RC(foMPI_Win_get_attr(win, foMPI_WIN_MODEL, &ival, &flag));
    CHECK(flag && (ival == foMPI_WIN_UNIFIED || ival == foMPI_WIN_SEPARATE), "model %d", ival);
    CHECK_RC(foMPI_Win_get_attr(win, foMPI_WIN_DISP_UNIT, &ival, &flag));
    CHECK(flag && ival == disp_unit, "disp_unit %d, expected %d", ival, disp_unit);
    CHECK_RC(foMPI_Win_get_attr(win, foMPI_WIN_SIZE, &aval, &flag));
    CHECK(flag && aval == size, "size %ld, expected %ld", (long)aval, (long)size);
    CHECK_RC(foMPI_Win_get_attr(win, foMPI_WIN_BASE, &pval, &flag));
    CHECK(flag && pval == base, "base %p, expected %p", pval, base);
    /* MPI's convention is unchanged for NARMA_ code. */
    int *iptr = NULL;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_CREATE_FLAVOR, &iptr, &flag));
    CHECK(flag && iptr != NULL && *iptr == flavor, "NARMA_Win_get_attr flavor");
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "fompi_compat", 50);
    const int rank = test_rank, size = test_size;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    foMPI_Win win;
    int status;

    test_phase("create window attributes");
    int64_t *mem = calloc(4, sizeof(int64_t));
    status = foMPI_Win_create(mem, 4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win);
    CHECK(status == MPI_SUCCESS, "foMPI_Win_create: %d", status);
    check_attrs(win, foMPI_WIN_FLAVOR_CREATE, mem, 4 * sizeof(int64_t), sizeof(int64_t));
    CHECK_RC(foMPI_Win_free(&win));
    free(mem);

    test_phase("dynamic window attributes");
    CHECK_RC(foMPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, foMPI_WIN_FLAVOR_DYNAMIC, MPI_BOTTOM, 0, 1);
    CHECK_RC(foMPI_Win_free(&win));

    test_phase("allocate window attributes");
    int64_t *base;
    CHECK_RC(foMPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &base, &win));
    check_attrs(win, foMPI_WIN_FLAVOR_ALLOCATE, base, 4 * sizeof(int64_t), sizeof(int64_t));

    test_phase("names");
    char longname[MPI_MAX_OBJECT_NAME + 20], got[MPI_MAX_OBJECT_NAME];
    int len = 0;
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    CHECK(foMPI_Win_set_name(win, "short") == MPI_SUCCESS, "short name");
    CHECK_RC(foMPI_Win_get_name(win, got, &len));
    CHECK(strcmp(got, "short") == 0, "name '%s'", got);
    status = foMPI_Win_set_name(win, longname);
    CHECK(status == foMPI_NAME_ABBREVIATED, "long name: %d, expected foMPI_NAME_ABBREVIATED",
          status);
    CHECK_RC(foMPI_Win_get_name(win, got, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strncmp(got, longname, (size_t)len) == 0,
          "truncated name of %d characters", len);

    test_phase("notified put around the ring");
    for (int i = 0; i < 4; i++)
        base[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    foMPI_Request req = foMPI_REQUEST_NULL;
    MPI_Status st;
    CHECK_RC(foMPI_Notify_init(win, left, 7, 1, &req));
    CHECK_RC(foMPI_Start(&req));
    int64_t v = 1000 + rank;
    CHECK_RC(foMPI_Put_notify(&v, 1, MPI_INT64_T, right, 2, 1, MPI_INT64_T, win, 7));
    CHECK_RC(foMPI_Win_flush(right, win));
    CHECK_RC(foMPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(base[2] == 1000 + left, "base[2] = %" PRId64, base[2]);
    CHECK_RC(foMPI_Request_free(&req));

    test_phase("lock epoch");
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t one = 1, old = -5;
    CHECK_RC(foMPI_Win_lock(foMPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_RC(foMPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, foMPI_SUM, win));
    CHECK_RC(foMPI_Win_unlock(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(base[0] == -1 + size, "counter %" PRId64 ", expected %d", base[0], size - 1);

    CHECK_RC(foMPI_Win_free(&win));
    return test_finish();
}
