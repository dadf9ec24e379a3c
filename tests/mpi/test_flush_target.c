/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Win_flush(r) waits only for operations to r.
 *
 * Rank 0 is locked exclusively (by rank 2, or by itself with two ranks) until
 * rank 1 says so. Rank 1 opens lock_all, puts to rank 0 (recorded: the shared
 * lock cannot be taken) and then works with rank D (the last rank): every
 * flush form toward D must complete and make D's data visible while the put
 * to rank 0 is still waiting. A flush that also waited for rank 0 would hang
 * here (rank 0 is unlocked only after the flushes).
 */
#include "common.h"

enum { N = 8, RELEASE_TAG = 41 };

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "flush_target", 50);
    const int C = 0, B = 1, A = test_size > 2 ? 2 : 0, D = test_size - 1;
    uint64_t *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    memset(base, 0, N * sizeof(uint64_t));
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("rank A locks rank C exclusively");
    if (test_rank == A) CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, C, 0, win));
    MPI_Barrier(MPI_COMM_WORLD);

    if (test_rank == B) {
        const uint64_t toc = 99;
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Put(&toc, 1, MPI_UINT64_T, C, 0, 1, MPI_UINT64_T, win)); /* waits */
        for (int form = 0; form < 4; form++) {
            static const char *names[] = {"Win_flush(D)", "Win_flush_local(D)", "Win_iflush(D)",
                                          "Win_iflush_local(D)"};
            test_phase(names[form]);
            uint64_t v = 1000 + (uint64_t)form, back = 0;
            NARMA_Request req;
            CHECK_RC(NARMA_Put(&v, 1, MPI_UINT64_T, D, 1 + form, 1, MPI_UINT64_T, win));
            switch (form) {
            case 0:
                CHECK_RC(NARMA_Win_flush(D, win));
                break;
            case 1:
                CHECK_RC(NARMA_Win_flush_local(D, win));
                break;
            case 2:
                CHECK_RC(NARMA_Win_iflush(D, win, &req));
                CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
                break;
            default:
                CHECK_RC(NARMA_Win_iflush_local(D, win, &req));
                CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
                break;
            }
            CHECK_RC(NARMA_Get(&back, 1, MPI_UINT64_T, D, 1 + form, 1, MPI_UINT64_T, win));
            CHECK_RC(NARMA_Win_flush(D, win));
            CHECK(back == v, "%s: read back %llu, expected %llu", names[form],
                  (unsigned long long)back, (unsigned long long)v);
        }
        test_phase("release rank C, then unlock_all");
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, A, RELEASE_TAG, MPI_COMM_WORLD));
        CHECK_RC(NARMA_Win_unlock_all(win));
    }
    if (test_rank == A) {
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, B, RELEASE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Win_unlock(C, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    test_phase("the put to rank C landed after the release");
    if (test_rank == C) {
        CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, C, 0, win));
        CHECK(base[0] == 99, "rank C holds %llu, expected 99", (unsigned long long)base[0]);
        CHECK_RC(NARMA_Win_unlock(C, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
