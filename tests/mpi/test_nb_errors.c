/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Bad use of the nonblocking synchronisation calls returns a clear error
 * class, changes nothing, and leaves the window usable:
 *   NARMA_ERR_RMA_SYNC     icomplete without istart, iwait without ipost,
 *                          iunlock of a rank not locked, iunlock_all without
 *                          ilock_all, ifence inside a PSCW epoch
 *   NARMA_ERR_RMA_CONFLICT ipost twice, istart twice, ilock of a rank twice
 *   NARMA_ERR_RANK         istart/ipost with a group member outside the
 *                          window (window on a split communicator), ilock,
 *                          iunlock and iflush of a rank outside 0..size-1
 *   NARMA_ERR_ARG          NULL request pointer; reorder info value "maybe"
 *   NARMA_ERR_PENDING      Win_free with a pending epoch (on every rank);
 *                          the window works afterwards and then frees
 */
#include "common.h"

static int rank, size;
static MPI_Group world_group;

static MPI_Group group_of(int r)
{
    MPI_Group g;
    MPI_Group_incl(world_group, 1, &r, &g);
    return g;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_nb_errors", 25);
    rank = test_rank;
    size = test_size;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int *base;
    NARMA_Win win;
    NARMA_Request r = NARMA_REQUEST_NULL, r2;
    CHECK_RC(NARMA_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    MPI_Group to = group_of(right), from = group_of(left);

    test_phase("closing calls without their opening call: NARMA_ERR_RMA_SYNC");
    CHECK_ERR(NARMA_Win_icomplete(win, &r), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Win_iwait(win, &r), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Win_iunlock(right, win, &r), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Win_iunlock_all(win, &r), NARMA_ERR_RMA_SYNC);
    CHECK(r == NARMA_REQUEST_NULL, "a failed call set the request handle");
    /* icomplete after an exposure only, iwait after an access only */
    CHECK_RC(NARMA_Win_ipost(from, 0, win, &r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_ERR(NARMA_Win_icomplete(win, &r), NARMA_ERR_RMA_SYNC);
    CHECK_ERR(NARMA_Win_ifence(0, win, &r), NARMA_ERR_RMA_SYNC);
    CHECK_RC(NARMA_Win_istart(to, 0, win, &r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_icomplete(win, &r));
    CHECK_ERR(NARMA_Win_icomplete(win, &r2), NARMA_ERR_RMA_SYNC);
    CHECK_RC(NARMA_Win_iwait(win, &r2));
    CHECK_ERR(NARMA_Win_iwait(win, &r), NARMA_ERR_RMA_SYNC);
    NARMA_Request both[2] = {r, r2};
    MPI_Status st[2];
    CHECK_RC(NARMA_Waitall(2, both, st));

    test_phase("opening twice: NARMA_ERR_RMA_CONFLICT");
    CHECK_RC(NARMA_Win_ipost(from, 0, win, &r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_ERR(NARMA_Win_ipost(from, 0, win, &r), NARMA_ERR_RMA_CONFLICT);
    CHECK_RC(NARMA_Win_istart(to, 0, win, &r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_ERR(NARMA_Win_istart(to, 0, win, &r), NARMA_ERR_RMA_CONFLICT);
    CHECK_ERR(NARMA_Win_ilock(NARMA_LOCK_SHARED, right, 0, win, &r), NARMA_ERR_RMA_CONFLICT);
    CHECK_RC(NARMA_Win_icomplete(win, &r));
    CHECK_RC(NARMA_Win_iwait(win, &r2));
    both[0] = r;
    both[1] = r2;
    CHECK_RC(NARMA_Waitall(2, both, st));
    CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_SHARED, right, 0, win, &r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_ERR(NARMA_Win_ilock(NARMA_LOCK_SHARED, right, 0, win, &r), NARMA_ERR_RMA_CONFLICT);
    CHECK_RC(NARMA_Win_iunlock(right, win, &r));
    CHECK_ERR(NARMA_Win_iunlock(right, win, &r2), NARMA_ERR_RMA_SYNC);
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));

    test_phase("ranks outside the window: NARMA_ERR_RANK");
    CHECK_ERR(NARMA_Win_ilock(NARMA_LOCK_SHARED, size, 0, win, &r), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Win_ilock(NARMA_LOCK_SHARED, -7, 0, win, &r), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Win_iunlock(size, win, &r), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Win_iflush(size, win, &r), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Win_iflush_local(-7, win, &r), NARMA_ERR_RANK);
    {
        /* A window on half of the ranks; the group names a rank of the other half. */
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        int *hb;
        NARMA_Win hw;
        CHECK_RC(NARMA_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, half, &hb, &hw));
        MPI_Group outside = group_of(rank % 2 == 0 ? 1 : 0); /* in the other half */
        CHECK_ERR(NARMA_Win_istart(outside, 0, hw, &r), NARMA_ERR_RANK);
        CHECK_ERR(NARMA_Win_ipost(outside, 0, hw, &r), NARMA_ERR_RANK);
        /* nothing was opened: a fence epoch works and the window frees */
        CHECK_RC(NARMA_Win_ifence(0, hw, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Win_ifence(NARMA_MODE_NOSUCCEED, hw, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        MPI_Group_free(&outside);
        CHECK_RC(NARMA_Win_free(&hw));
        MPI_Comm_free(&half);
    }

    test_phase("NULL request pointer: NARMA_ERR_ARG");
    CHECK_ERR(NARMA_Win_ipost(from, 0, win, NULL), NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Win_istart(to, 0, win, NULL), NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Win_ifence(0, win, NULL), NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Win_ilock_all(0, win, NULL), NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Win_iflush_all(win, NULL), NARMA_ERR_ARG);

    test_phase("reorder info value \"maybe\": NARMA_ERR_ARG, no window");
    {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "narma_exposure_after_access_reorder", "maybe");
        int *b2 = NULL;
        NARMA_Win w2 = NARMA_WIN_NULL;
        CHECK_ERR(NARMA_Win_allocate(64, 1, info, MPI_COMM_WORLD, &b2, &w2), NARMA_ERR_ARG);
        CHECK(w2 == NARMA_WIN_NULL, "a failed Win_allocate set the handle");
        MPI_Info_set(info, "narma_exposure_after_access_reorder", "false");
        MPI_Info_set(info, "narma_access_after_access_reorder", "true");
        CHECK_RC(NARMA_Win_allocate(64, 1, info, MPI_COMM_WORLD, &b2, &w2));
        CHECK_RC(NARMA_Win_free(&w2));
        MPI_Info_free(&info);
        /* The short aliases (for MPIs whose info keys are at most 36 characters) are read too. */
        const char *aliases[] = {"narma_reorder_aaar", "narma_reorder_aaer", "narma_reorder_eaer",
                                 "narma_reorder_eaar"};
        for (int i = 0; i < 4; i++) {
            MPI_Info_create(&info);
            MPI_Info_set(info, aliases[i], "maybe");
            CHECK_ERR(NARMA_Win_allocate(64, 1, info, MPI_COMM_WORLD, &b2, &w2), NARMA_ERR_ARG);
            MPI_Info_free(&info);
        }
    }

    test_phase(
        "Win_free with a pending epoch: NARMA_ERR_PENDING on every rank, window still usable");
    {
        /* rank 0 closes an access epoch toward rank 1, which has not posted */
        static const int v = 4242;
        NARMA_Request acc = NARMA_REQUEST_NULL;
        if (rank == 0) {
            MPI_Group g1 = group_of(1);
            CHECK_RC(NARMA_Win_istart(g1, 0, win, &r));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT, 1, 3, 1, MPI_INT, win));
            CHECK_RC(NARMA_Win_icomplete(win, &acc));
            CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            MPI_Group_free(&g1);
        }
        NARMA_Win keep = win;
        CHECK_ERR(NARMA_Win_free(&win), NARMA_ERR_PENDING);
        CHECK(win == keep, "a failed Win_free changed the handle");
        if (rank == 1) {
            MPI_Group g0 = group_of(0);
            CHECK_RC(NARMA_Win_ipost(g0, 0, win, &r));
            CHECK_RC(NARMA_Win_iwait(win, &r2));
            CHECK_RC(NARMA_Wait(&r2, MPI_STATUS_IGNORE));
            CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(base[3] == 4242, "the pending epoch's put did not arrive: %d", base[3]);
            MPI_Group_free(&g0);
        }
        if (rank == 0) CHECK_RC(NARMA_Wait(&acc, MPI_STATUS_IGNORE));
        /* an opened, not closed lock epoch is pending too */
        CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_SHARED, right, 0, win, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_ERR(NARMA_Win_free(&win), NARMA_ERR_PENDING);
        CHECK_RC(NARMA_Win_iunlock(right, win, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    MPI_Group_free(&world_group);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
