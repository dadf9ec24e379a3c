/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 env=NARMA_RING_SLOTS=4 */
/*
 * Full notification rings (run with NARMA_RING_SLOTS=4):
 *  1. every other rank blasts thousands of notified puts at rank 0 while
 *     rank 0 sleeps 200 ms without calling narma, then consumes them:
 *     nothing lost, nothing duplicated, per-origin order and data intact.
 *     An origin that finds the ring full must wait and retry, never fail
 *     or drop.
 *  2. all-to-all: every rank first sends all its notified puts to every
 *     other rank and only then receives. With 4-slot rings this finishes
 *     only if a rank blocked on a full remote ring keeps draining its own
 *     ring (into the unexpected queue).
 */
#include "common.h"

#define SLOT 128 /* bytes of target memory per message */

static int rank, size;

static int msg_len(int i)
{
    static const int lens[5] = {8, 24, 40, 100, 0};
    return lens[i % 5];
}

/*
 * Receive `per_src[s]` notifications from each source s (ANY_TAG, count 1,
 * one request per source) and verify order, tags, sizes and data. Message i
 * of source s lies at base_of(s) + i*SLOT and has tag i % 3.
 */
static void receive_all(NARMA_Win win, const unsigned char *mem, const int *per_src,
                        int64_t (*base_of)(int s), MPI_Request *done)
{
    NARMA_Request *R = malloc(size * sizeof *R);
    int *got = calloc(size, sizeof(int)), *idx = malloc(size * sizeof(int));
    MPI_Status *sts = malloc(size * sizeof(MPI_Status));
    long expected = 0, received = 0, idle = 0;
    int all_done = 0;
    for (int s = 0; s < size; s++) {
        R[s] = NARMA_REQUEST_NULL;
        expected += per_src[s];
        if (per_src[s]) {
            CHECK_RC(NARMA_Notify_init(win, s, NARMA_ANY_TAG, 1, &R[s]));
            CHECK_RC(NARMA_Start(&R[s]));
        }
    }
    while (received < expected) {
        int outcount = 0;
        if (!all_done) MPI_Test(done, &all_done, MPI_STATUS_IGNORE);
        CHECK_RC(NARMA_Testsome(size, R, &outcount, idx, sts));
        if (outcount == 0 || outcount == MPI_UNDEFINED) {
            if (all_done && ++idle > 200000) {
                for (int s = 0; s < size; s++)
                    if (got[s] != per_src[s])
                        fprintf(stderr, "rank %d: from %d got %d of %d\n", rank, s, got[s],
                                per_src[s]);
                CHECK(0, "%ld of %ld notifications lost (all origins finished)",
                      expected - received, expected);
            }
            continue;
        }
        idle = 0;
        for (int a = 0; a < outcount; a++) {
            const int s = idx[a], k = got[s]++;
            const MPI_Status *st = &sts[a];
            CHECK(st->MPI_SOURCE == s, "request for source %d matched source %d", s,
                  st->MPI_SOURCE);
            CHECK(k < per_src[s], "source %d: more than %d notifications (duplicate)", s,
                  per_src[s]);
            CHECK(st->MPI_TAG == k % 3, "source %d message %d: tag %d, expected %d (reordered?)", s,
                  k, st->MPI_TAG, k % 3);
            CHECK(test_byte_count(st) == msg_len(k), "source %d message %d: %d bytes, expected %d",
                  s, k, test_byte_count(st), msg_len(k));
            long bad = test_verify(mem + base_of(s) + (int64_t)k * SLOT, msg_len(k), s, k);
            CHECK(bad < 0, "source %d message %d: byte %ld differs", s, k, bad);
            received++;
            if (got[s] < per_src[s]) CHECK_RC(NARMA_Start(&R[s]));
        }
        if ((received & 255) == 0)
            snprintf(test_detail, sizeof test_detail, "received %ld of %ld", received, expected);
    }
    if (!all_done) MPI_Wait(done, MPI_STATUS_IGNORE);
    /* everything arrived: a catch-all request must find nothing more */
    NARMA_Request any;
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &any));
    CHECK_RC(NARMA_Start(&any));
    test_expect_incomplete(&any, "catch-all request after all expected notifications");
    CHECK_RC(NARMA_Request_free(&any));
    for (int s = 0; s < size; s++)
        if (R[s] != NARMA_REQUEST_NULL) CHECK_RC(NARMA_Request_free(&R[s]));
    free(R);
    free(got);
    free(idx);
    free(sts);
}

static int N1; /* messages per origin in part 1 */
static int64_t base1(int s) { return (int64_t)s * N1 * SLOT; }
static int N2; /* messages per (origin, target) pair in part 2 */
static int64_t base2(int s) { return (int64_t)s * N2 * SLOT; }

static void send_one(NARMA_Win win, int target, int64_t off, int i)
{
    unsigned char buf[SLOT];
    test_fill(buf, msg_len(i), rank, i);
    CHECK_RC(
        NARMA_Put_notify(buf, msg_len(i), MPI_BYTE, target, off, msg_len(i), MPI_BYTE, win, i % 3));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_ring_full", 80);
    rank = test_rank;
    size = test_size;
    N1 = (int)env_long("NARMA_TEST_ITERS", 1000);
    N2 = N1 / 4;
    if (!getenv("NARMA_RING_SLOTS") && rank == 0)
        printf("# note: NARMA_RING_SLOTS is not set; rings may not fill up\n");

    double t0 = MPI_Wtime();
    test_phase("part 1: origins blast rank 0 while it sleeps");
    {
        unsigned char *mem;
        NARMA_Win win;
        MPI_Aint bytes = rank == 0 ? (MPI_Aint)size * N1 * SLOT : 0;
        CHECK_RC(NARMA_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Request done;
        if (rank == 0) {
            usleep(200 * 1000); /* no narma call: the 4-slot ring fills up at once */
            MPI_Ibarrier(MPI_COMM_WORLD, &done);
            int *per_src = calloc(size, sizeof(int));
            for (int s = 1; s < size; s++)
                per_src[s] = N1;
            receive_all(win, mem, per_src, base1, &done);
            free(per_src);
        } else {
            for (int i = 0; i < N1; i++) {
                send_one(win, 0, base1(rank) + (int64_t)i * SLOT, i);
                if ((i & 255) == 0)
                    snprintf(test_detail, sizeof test_detail, "sent %d of %d to rank 0", i, N1);
            }
            MPI_Ibarrier(MPI_COMM_WORLD, &done);
            MPI_Wait(&done, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&win));
    }

    if (rank == 0)
        printf("# part 1: %d notified puts per origin in %.2f s\n", N1, MPI_Wtime() - t0);
    t0 = MPI_Wtime();
    test_phase("part 2: all-to-all, everyone sends everything before receiving");
    {
        unsigned char *mem;
        NARMA_Win win;
        CHECK_RC(NARMA_Win_allocate((MPI_Aint)size * N2 * SLOT, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                    &mem, &win));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < N2; i++) {
            for (int d = 1; d < size; d++) {
                int t = (rank + d) % size;
                send_one(win, t, base2(rank) + (int64_t)i * SLOT, i);
            }
            if ((i & 63) == 0)
                snprintf(test_detail, sizeof test_detail, "sent round %d of %d", i, N2);
        }
        MPI_Request done;
        MPI_Ibarrier(MPI_COMM_WORLD, &done);
        int *per_src = calloc(size, sizeof(int));
        for (int s = 0; s < size; s++)
            per_src[s] = s == rank ? 0 : N2;
        receive_all(win, mem, per_src, base2, &done);
        free(per_src);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&win));
    }
    if (rank == 0) printf("# part 2: %d notified puts per pair in %.2f s\n", N2, MPI_Wtime() - t0);
    return test_finish();
}
