/* narma-test: np=2,4 transports=shm,mpi timeout=120 env=NARMA_RING_SLOTS=16 */
/*
 * Many origins, one target, small rings (NARMA_RING_SLOTS=16: 4 records per
 * origin at np=4 on the mpi transport): a record accepted before all of it
 * arrived (torn) or an old record taken for a new one (stale) shows up as a
 * notification whose size, tag or payload does not match what its origin sent.
 *
 * Every origin sends N notified puts to rank 0. Put i of origin o carries
 * (1 + i % 200) bytes of pattern (o, i) into o's lane slot i % LANE, with tag i;
 * its size is in the notification. Rank 0 matches them one by one with an
 * ANY_SOURCE/ANY_TAG request and checks: the tag is the next one expected from
 * that origin (order per origin), the size is 1 + tag % 200, and the lane
 * slot holds the pattern. Every LANE/2 puts an origin waits for rank 0's
 * zero-byte ack, so it never overwrites a slot rank 0 has not checked yet.
 * Rank 0 also sends one notified put to itself per round, so the target's own
 * sub-ring is in the mix.
 */
#include "common.h"

#define LANE    16  /* slots per origin */
#define SLOTB   256 /* bytes per slot */
#define TAG_ACK 0x3fffffff

static int rank, size;

static size_t len_of(int i) { return (size_t)(1 + i % 200); }

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_torn", 110);
    rank = test_rank;
    size = test_size;
    const int n = (int)env_long("NARMA_TEST_ITERS", 4000);
    unsigned char *mem;
    NARMA_Win win;
    MPI_Aint bytes = rank == 0 ? (MPI_Aint)size * LANE * SLOTB : 0;
    CHECK_RC(NARMA_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();

    test_phase("origins stream checked notified puts into rank 0");
    if (rank != 0) {
        unsigned char buf[SLOTB];
        NARMA_Request ack;
        MPI_Status st;
        CHECK_RC(NARMA_Notify_init(win, 0, TAG_ACK, 1, &ack));
        for (int i = 0; i < n; i++) {
            test_fill(buf, len_of(i), (uint32_t)rank, (uint32_t)i);
            MPI_Aint off = ((MPI_Aint)rank * LANE + i % LANE) * SLOTB;
            CHECK_RC(NARMA_Put_notify(buf, (int)len_of(i), MPI_BYTE, 0, off, (int)len_of(i),
                                      MPI_BYTE, win, i));
            if (i % (LANE / 2) == LANE / 2 - 1) { /* rank 0 checked up to i - LANE/2 */
                CHECK_RC(NARMA_Start(&ack));
                CHECK_RC(NARMA_Wait(&ack, &st));
            }
        }
        CHECK_RC(NARMA_Request_free(&ack));
    } else {
        int *next = calloc((size_t)size, sizeof(int));
        long total = (long)(size - 1) * n, got = 0;
        NARMA_Request any;
        MPI_Status st;
        CHECK_RC(NARMA_Notify_init(win, MPI_ANY_SOURCE, NARMA_ANY_TAG, 1, &any));
        while (got < total) {
            CHECK_RC(NARMA_Start(&any));
            CHECK_RC(NARMA_Wait(&any, &st));
            int o = st.MPI_SOURCE, i = st.MPI_TAG;
            if (o == 0) continue; /* our own filler */
            got++;
            CHECK(o > 0 && o < size && i == next[o], "from %d: tag %d, expected %d", o, i,
                  o > 0 && o < size ? next[o] : -1);
            if (o <= 0 || o >= size) break;
            next[o] = i + 1;
            CHECK(test_byte_count(&st) == (int)len_of(i), "from %d tag %d: %d bytes, sent %zu", o,
                  i, test_byte_count(&st), len_of(i));
            long bad = test_verify(mem + ((MPI_Aint)o * LANE + i % LANE) * SLOTB, len_of(i),
                                   (uint32_t)o, (uint32_t)i);
            CHECK(bad < 0, "from %d tag %d: byte %ld is not what was sent", o, i, bad);
            if (i % (LANE / 2) == LANE / 2 - 1) {
                CHECK_RC(NARMA_Put_notify(NULL, 0, MPI_BYTE, o, 0, 0, MPI_BYTE, win, TAG_ACK));
                CHECK_RC(NARMA_Put_notify(NULL, 0, MPI_BYTE, 0, 0, 0, MPI_BYTE, win, 1));
            }
        }
        CHECK_RC(NARMA_Request_free(&any));
        free(next);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("# %d origins x %d notified puts in %.2f s\n", size - 1, n, MPI_Wtime() - t0);
    /* The filler notifications to self that the loop did not consume. */
    if (rank == 0) {
        NARMA_Request r;
        int flag = 1;
        CHECK_RC(NARMA_Notify_init(win, 0, 1, 1, &r));
        while (flag) {
            CHECK_RC(NARMA_Start(&r));
            CHECK_RC(NARMA_Test(&r, &flag, MPI_STATUS_IGNORE));
            if (!flag) CHECK_RC(NARMA_Request_free(&r));
        }
    }
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
