/* narma-test: np=3,4 transports=shm,mpi timeout=90 */
/*
 * Arrival order across origins when one origin's burst fills the target's poll.
 *
 * Rank 2 notifies rank 0 (tag 1) and then tells rank 1 so with a message; rank 1 then issues a
 * burst of B notified puts (tag 2) to rank 0 and tells rank 0 with a message. Rank 2's
 * notification arrived before any of rank 1's, so rank 0's request for any source must match
 * <2, 1> first, then rank 1's B in order. Rank 1 joined rank 0's list of origins first (a
 * warm-up), so on the `mpi` transport a poll reads rank 1's sub-ring before rank 2's: until
 * layout 6 a poll stopped collecting at 256 records and delivered them without reading rank
 * 2's sub-ring, matching <1, 2> first. NARMA_RING_SLOTS=4096 (set before the window is made)
 * gives each origin room for the whole burst. On a window across (pretend) nodes where rank 0
 * reaches ranks 1 and 2 through different transports, the notifications come through two rings
 * and the README promises no order between them: there the test checks only that each
 * origin's arrive, in its own order.
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#define B      600
#define ROUNDS 4
#define T      0

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "notify_order_burst", 80);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(setenv("NARMA_RING_SLOTS", "4096", 1) == 0, "setenv");
    NARMA_Win win;
    int64_t *mem;
    CHECK_RC(NARMA_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, 64);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("warm-up: rank 1 joins first, then rank 2");
    for (int o = 1; o <= 2; o++) {
        const int64_t v = o;
        if (rank == o) CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, T, o, 1, MPI_INT64_T, win, 9));
        if (rank == T) {
            NARMA_Request r;
            MPI_Status st;
            CHECK_RC(NARMA_Notify_init(win, o, 9, 1, &r));
            CHECK_RC(NARMA_Start(&r));
            CHECK_RC(NARMA_Wait(&r, &st));
            CHECK_RC(NARMA_Request_free(&r));
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* One ring for both origins (their notifications reach rank 0 by one transport)? */
    const int one_ring =
        strcmp(NARMA_Win_get_target_transport(win, 1), NARMA_Win_get_target_transport(win, 2)) == 0;
    NARMA_Request any = NARMA_REQUEST_NULL, from1 = NARMA_REQUEST_NULL;
    if (rank == T) {
        CHECK_RC(NARMA_Notify_init(win, one_ring ? MPI_ANY_SOURCE : 2, NARMA_ANY_TAG, 1, &any));
        CHECK_RC(NARMA_Notify_init(win, 1, 2, 1, &from1));
    }
    for (int round = 0; round < ROUNDS; round++) {
        test_phase("rank 2's notification, then rank 1's burst");
        int token = round;
        if (rank == 2) {
            const int64_t v = 1000 + round;
            CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, T, 2, 1, MPI_INT64_T, win, 1));
            CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
        } else if (rank == 1) {
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < B; i++) {
                const int64_t v = (int64_t)round * B + i;
                CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, T, 1, 1, MPI_INT64_T, win, 2));
            }
            CHECK_MPI(MPI_Send(&token, 1, MPI_INT, T, 0, MPI_COMM_WORLD));
        } else if (rank == T) {
            MPI_Status st;
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(NARMA_Start(&any));
            CHECK_RC(NARMA_Wait(&any, &st));
            CHECK(st.MPI_SOURCE == 2 && st.MPI_TAG == 1,
                  "round %d: the first notification matched is <%d, %d>, not rank 2's <2, 1>",
                  round, st.MPI_SOURCE, st.MPI_TAG);
            CHECK(mem[2] == 1000 + round, "round %d: rank 2's value is %lld", round,
                  (long long)mem[2]);
            for (int i = 0; i < B; i++) {
                CHECK_RC(NARMA_Start(&from1));
                CHECK_RC(NARMA_Wait(&from1, &st));
            }
            CHECK(mem[1] == (int64_t)round * B + B - 1, "round %d: rank 1's last value is %lld",
                  round, (long long)mem[1]);
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rank == T) {
        CHECK_RC(NARMA_Request_free(&any));
        CHECK_RC(NARMA_Request_free(&from1));
    }
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
