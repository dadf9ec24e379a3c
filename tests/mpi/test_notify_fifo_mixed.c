/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * One origin's notifications match in the order it issued them even when the
 * target finds them mixed with other origins' in one poll. Every rank,
 * the target included (to itself), issues K notified puts with tags 1..K to
 * rank 0 while rank 0 sits in MPI_Barrier and drains nothing; rank 0 then
 * matches each origin's with a request for that source and ANY_TAG and must
 * see tags 1..K in order, each with its own payload.
 *
 * On the `mpi` transport a poll that finds several origins' records sorts
 * them by the time each writer put in them (mpi.c, "Arrival order"). The
 * second window repeats the case with that clock stepping back 1 ms at every
 * record (test hook NARMA_TEST_CLOCK_BACK, read at window creation): one
 * origin's records keep their order only because a writer's times never
 * decrease (rec_time). `shm` windows have no clock and must pass both alike.
 */
#include "common.h"

#include <stdlib.h>

#define K 8
#define T 0

static void round_of(NARMA_Win win, int64_t *mem, int rank, int size, const char *what)
{
    test_phase(what);
    /* my slot at the target: K int64, one line per origin */
    const MPI_Aint slot = (MPI_Aint)rank * 64;
    for (int k = 1; k <= K; k++) {
        const int64_t v = 1000 * rank + k;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, T, slot, 1, MPI_INT64_T, win, k));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* all issued (and complete) before T polls */
    if (rank == T) {
        for (int o = 0; o < size; o++) {
            NARMA_Request r;
            MPI_Status st;
            CHECK_RC(NARMA_Notify_init(win, o, NARMA_ANY_TAG, 1, &r));
            for (int k = 1; k <= K; k++) {
                CHECK_RC(NARMA_Start(&r));
                CHECK_RC(NARMA_Wait(&r, &st));
                CHECK(st.MPI_SOURCE == o && st.MPI_TAG == k,
                      "origin %d's notification %d of %d matched as <%d, %d>", o, k, K,
                      st.MPI_SOURCE, st.MPI_TAG);
            }
            CHECK_RC(NARMA_Request_free(&r));
            CHECK(mem[o * 8] == 1000 * o + K, "origin %d's slot holds %lld", o,
                  (long long)mem[o * 8]);
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "notify_fifo_mixed", 50);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) CHECK(setenv("NARMA_TEST_CLOCK_BACK", "1", 1) == 0, "setenv");
        NARMA_Win win;
        int64_t *mem;
        CHECK_RC(NARMA_Win_allocate(64 * size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        test_expect_transport(win);
        memset(mem, 0, (size_t)(64 * size));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int rep = 0; rep < 20; rep++)
            round_of(win, mem, rank, size,
                     pass ? "clock stepping back at every record" : "the machine's clock");
        CHECK_RC(NARMA_Win_free(&win));
    }
    return test_finish();
}
