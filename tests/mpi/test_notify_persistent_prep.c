/* narma-test: np=2,3,4 transports=shm,mpi env=NARMA_RING_SLOTS=4,NARMA_TEST_PPUT_STRICT=1 */
/*
 * Persistent notified puts that the transport prepares once at init (shm: one
 * contiguous type on both sides, a window with fixed memory; NARMA_Start then
 * copies and publishes only). Each rank puts to the next one (a ring), on a
 * Win_allocate and a Win_create window (disp_unit 1), and a Win_allocate window of
 * disp_unit 8. NARMA_TEST_PPUT_STRICT=1: every Put_notify_init toward a rank
 * served by shm fails unless the transport prepared the put, so these phases
 * run on the prepared path wherever shm serves (mpi prepares nothing).
 *   - every size from 0 to 40 bytes and 64, 4095, 65536, from an origin
 *     buffer and to a displacement at odd addresses: the bytes land, the
 *     status counts them, and the bytes around them are untouched (the small
 *     copies load and store whole words);
 *   - a contiguous derived type whose first byte is not at its origin (true
 *     lb 5, and resized to lb 3): origin and target offsets both move by the
 *     true lb, for one and for two instances;
 *   - the origin buffer is read at every start, not at init;
 *   - a rank's own window as target, the origin bytes inside the window too and
 *     overlapping the target bytes (as memmove);
 *   - order with every other access of the same origin to the same bytes:
 *     Start then Put, Accumulate, Put_notify, Get; Put, Accumulate and
 *     Put_notify (then a flush) before Start: after each, a Get reads what the
 *     later access wrote, and the target finds the last one;
 *   - more starts than the ring has slots (NARMA_RING_SLOTS=4): Start waits for
 *     room, nothing is lost, the last payload is what remains.
 */
#include "common.h"

#define AREA  70000 /* > 65536 + the guard and the offsets below */
#define GUARD 16
#define TAG_S 1
#define TAG_O 2
#define TAG_R 3
#define BURST 64

static const int sizes[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,   13,   14,
                            15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,   28,   29,
                            30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 64, 4095, 65536};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Wait for one notification from src with tag and check its byte count. */
static void wait_note(NARMA_Win win, int src, int tag, int bytes, const char *what)
{
    NARMA_Request note;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(win, src, tag, 1, &note));
    CHECK_RC(NARMA_Start(&note));
    CHECK_RC(NARMA_Wait(&note, &st));
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag && test_byte_count(&st) == bytes,
          "%s: source %d tag %d bytes %d, expected %d %d %d", what, st.MPI_SOURCE, st.MPI_TAG,
          test_byte_count(&st), src, tag, bytes);
    CHECK_RC(NARMA_Request_free(&note));
}

/* One start of a persistent put, complete on return (the buffer is reusable). */
static void start_wait(NARMA_Request *put)
{
    CHECK_RC(NARMA_Start(put));
    CHECK_RC(NARMA_Wait(put, MPI_STATUS_IGNORE));
}

/* Get the word at target's disp (the epoch is open) and check it. */
static void read_check(int64_t *got, int target, MPI_Aint disp, NARMA_Win win, int64_t want,
                       const char *what)
{
    *got = -1;
    CHECK_RC(NARMA_Get(got, 1, MPI_INT64_T, target, disp, 1, MPI_INT64_T, win));
    CHECK_RC(NARMA_Win_flush(target, win));
    CHECK(*got == want, "%s: the word is %lld, expected %lld", what, (long long)*got,
          (long long)want);
}

static void run(NARMA_Win win, unsigned char *mem, const char *flavor)
{
    const int rank = test_rank, size = test_size;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    unsigned char *src = malloc(AREA);
    CHECK(src != NULL, "malloc");
    char msg[96];

    snprintf(msg, sizeof msg, "%s: sizes 0..40, 64, 4095, 65536 at odd addresses", flavor);
    test_phase(msg);
    for (int i = 0; i < NSIZES; i++) {
        const int n = sizes[i];
        const MPI_Aint at = GUARD + 3; /* odd displacement (disp_unit 1) */
        memset(mem, 0xA5, AREA);
        test_fill(src + 1, (size_t)n, (uint32_t)rank, (uint32_t)n);
        MPI_Barrier(MPI_COMM_WORLD);
        NARMA_Request put;
        CHECK_RC(
            NARMA_Put_notify_init(src + 1, n, MPI_BYTE, next, at, n, MPI_BYTE, win, TAG_S, &put));
        start_wait(&put);
        wait_note(win, prev, TAG_S, n, "size");
        long bad = test_verify(mem + at, (size_t)n, (uint32_t)prev, (uint32_t)n);
        CHECK(bad < 0, "%d bytes: byte %ld differs", n, bad);
        for (MPI_Aint k = 0; k < AREA; k++)
            if (k < at || k >= at + n) {
                CHECK(mem[k] == 0xA5, "%d bytes: byte %ld outside the access changed to %#x", n,
                      (long)(k - at), mem[k]);
                if (mem[k] != 0xA5) break;
            }
        CHECK_RC(NARMA_Request_free(&put));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    snprintf(msg, sizeof msg, "%s: a contiguous type with lb 5, buffer read at each start", flavor);
    test_phase(msg);
    {
        MPI_Datatype t, r;
        int len = 7;
        MPI_Aint d = 5;
        CHECK_MPI(MPI_Type_create_hindexed(1, &len, &d, MPI_BYTE, &t));
        /* lb 3, extent 7: instances back to back, the first byte still at 5 */
        CHECK_MPI(MPI_Type_create_resized(t, 3, 7, &r));
        CHECK_MPI(MPI_Type_commit(&t));
        CHECK_MPI(MPI_Type_commit(&r));
        const struct {
            MPI_Datatype type;
            int count;
        } cases[] = {{t, 1}, {r, 1}, {r, 2}};
        for (int k = 0; k < 3; k++) {
            const int n = 7 * cases[k].count;
            memset(mem, 0xA5, AREA);
            MPI_Barrier(MPI_COMM_WORLD);
            NARMA_Request put;
            CHECK_RC(NARMA_Put_notify_init(src, cases[k].count, cases[k].type, next, 40,
                                           cases[k].count, cases[k].type, win, TAG_S, &put));
            for (int it = 0; it < 3; it++) {
                test_fill(src + 5, (size_t)n, (uint32_t)rank, 100u + (uint32_t)(k * 3 + it));
                start_wait(&put);
                wait_note(win, prev, TAG_S, n, "lb 5");
                long bad =
                    test_verify(mem + 45, (size_t)n, (uint32_t)prev, 100u + (uint32_t)(k * 3 + it));
                CHECK(bad < 0, "case %d start %d: byte %ld differs", k, it, bad);
                CHECK(mem[44] == 0xA5 && mem[45 + n] == 0xA5,
                      "case %d start %d: neighbours %#x %#x", k, it, mem[44], mem[45 + n]);
                MPI_Barrier(MPI_COMM_WORLD); /* prev refills its buffer only after this check */
            }
            CHECK_RC(NARMA_Request_free(&put));
        }
        CHECK_MPI(MPI_Type_free(&t)); /* after init: the requests kept what they needed */
        CHECK_MPI(MPI_Type_free(&r));
    }

    snprintf(msg, sizeof msg, "%s: my own window as target", flavor);
    test_phase(msg);
    {
        NARMA_Request put;
        uint64_t v = 0;
        CHECK_RC(NARMA_Put_notify_init(&v, 1, MPI_UINT64_T, rank, 64, 1, MPI_UINT64_T, win, TAG_O,
                                       &put));
        for (uint64_t it = 1; it <= 2 * BURST; it++) {
            v = UINT64_MAX - it;
            start_wait(&put);
            wait_note(win, rank, TAG_O, 8, "self");
            uint64_t got;
            memcpy(&got, mem + 64, 8);
            CHECK(got == UINT64_MAX - it, "self start %llu: %llu", (unsigned long long)it,
                  (unsigned long long)got);
        }
        CHECK_RC(NARMA_Request_free(&put));
        /* The origin bytes in the window, overlapping the target bytes by all but `shift`: shm
         * copies as memmove (MPI leaves overlapping buffers to the implementation: not on mpi). */
        const int lens[] = {3, 5, 8, 12, 16, 40};
        const int as_memmove = strcmp(NARMA_Win_get_target_transport(win, rank), "shm") == 0;
        for (int i = 0; i < 6 * as_memmove; i++)
            for (int shift = -3; shift <= 3; shift += 2) {
                const int n = lens[i];
                unsigned char *from = mem + 512, want[64];
                test_fill(from, (size_t)n, (uint32_t)n, (uint32_t)(shift + 8));
                memcpy(want, from, (size_t)n);
                CHECK_RC(NARMA_Put_notify_init(from, n, MPI_BYTE, rank, 512 + shift, n, MPI_BYTE,
                                               win, TAG_O, &put));
                start_wait(&put);
                wait_note(win, rank, TAG_O, n, "self overlap");
                CHECK(memcmp(mem + 512 + shift, want, (size_t)n) == 0,
                      "%d bytes onto themselves shifted by %d: not what memmove gives", n, shift);
                CHECK_RC(NARMA_Request_free(&put));
            }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    snprintf(msg, sizeof msg, "%s: order with the other accesses of the origin", flavor);
    test_phase(msg);
    {
        const MPI_Aint at = 128; /* one 8-byte word, through MPI_INT64_T */
        int64_t a = 0, b = 0, c = 0, got = 0;
        NARMA_Request put;
        CHECK_RC(
            NARMA_Put_notify_init(&a, 1, MPI_INT64_T, next, at, 1, MPI_INT64_T, win, TAG_R, &put));
        CHECK_RC(NARMA_Win_lock_all(0, win));
        for (int it = 0; it < 20; it++) {
            const int64_t base = (int64_t)rank * 1000000 + it * 1000;
            /* Start, then each other kind of access to the same word. */
            a = base + 1;
            start_wait(&put);
            read_check(&got, next, at, win, base + 1, "Get after Start");
            b = base + 2;
            CHECK_RC(NARMA_Put(&b, 1, MPI_INT64_T, next, at, 1, MPI_INT64_T, win));
            CHECK_RC(NARMA_Win_flush(next, win));
            read_check(&got, next, at, win, base + 2, "Put after Start");
            a = base + 3;
            start_wait(&put);
            c = 4;
            CHECK_RC(NARMA_Accumulate(&c, 1, MPI_INT64_T, next, at, 1, MPI_INT64_T, MPI_SUM, win));
            CHECK_RC(NARMA_Win_flush(next, win));
            read_check(&got, next, at, win, base + 7, "Accumulate after Start");
            /* Each other kind, then Start. */
            b = base + 8;
            CHECK_RC(NARMA_Put(&b, 1, MPI_INT64_T, next, at, 1, MPI_INT64_T, win));
            CHECK_RC(NARMA_Win_flush(next, win));
            a = base + 9;
            start_wait(&put);
            read_check(&got, next, at, win, base + 9, "Start after Put");
            c = 100;
            CHECK_RC(NARMA_Accumulate(&c, 1, MPI_INT64_T, next, at, 1, MPI_INT64_T, MPI_SUM, win));
            CHECK_RC(NARMA_Win_flush(next, win));
            a = base + 10;
            start_wait(&put);
            read_check(&got, next, at, win, base + 10, "Start after Accumulate");
            b = base + 11;
            CHECK_RC(NARMA_Put_notify(&b, 1, MPI_INT64_T, next, at, 1, MPI_INT64_T, win, TAG_R));
            a = base + 12;
            start_wait(&put);
            read_check(&got, next, at, win, base + 12, "Start after Put_notify");
            b = base + 13;
            CHECK_RC(NARMA_Put_notify(&b, 1, MPI_INT64_T, next, at, 1, MPI_INT64_T, win, TAG_R));
            CHECK_RC(NARMA_Win_flush(next, win));
            /* The target: 7 notifications of this round, the word holds the last put. */
            NARMA_Request note;
            CHECK_RC(NARMA_Notify_init(win, prev, TAG_R, 7, &note));
            CHECK_RC(NARMA_Start(&note));
            CHECK_RC(NARMA_Wait(&note, MPI_STATUS_IGNORE));
            CHECK_RC(NARMA_Request_free(&note));
            int64_t mine;
            CHECK_RC(NARMA_Win_sync(win));
            memcpy(&mine, mem + at, 8);
            const int64_t want = (int64_t)prev * 1000000 + it * 1000 + 13;
            CHECK(mine == want,
                  "round %d: the word is %lld after the last Put_notify, expected %lld", it,
                  (long long)mine, (long long)want);
            MPI_Barrier(MPI_COMM_WORLD); /* the word is checked before prev's next round */
        }
        CHECK_RC(NARMA_Win_unlock_all(win));
        CHECK_RC(NARMA_Request_free(&put));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    snprintf(msg, sizeof msg, "%s: %d starts through a ring of 4 slots", flavor, BURST);
    test_phase(msg);
    {
        uint32_t v = 0;
        NARMA_Request put, note;
        CHECK_RC(NARMA_Put_notify_init(&v, 1, MPI_UINT32_T, next, 256, 1, MPI_UINT32_T, win, TAG_S,
                                       &put));
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_S, BURST, &note));
        CHECK_RC(NARMA_Start(&note));
        for (uint32_t it = 1; it <= BURST; it++) {
            v = (uint32_t)rank << 16 | it;
            start_wait(&put);
        }
        CHECK_RC(NARMA_Wait(&note, MPI_STATUS_IGNORE));
        uint32_t got;
        memcpy(&got, mem + 256, 4);
        CHECK(got == ((uint32_t)prev << 16 | BURST), "after the burst: %#x, expected %#x", got,
              (uint32_t)prev << 16 | BURST);
        CHECK_RC(NARMA_Request_free(&put));
        CHECK_RC(NARMA_Request_free(&note));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(src);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_persistent_prep", 80);
    unsigned char *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(AREA, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    run(win, mem, "allocate");
    CHECK_RC(NARMA_Win_free(&win));

    unsigned char *user = malloc(AREA);
    CHECK(user != NULL, "malloc");
    CHECK_RC(NARMA_Win_create(user, AREA, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    /* Win_create may move the pages onto shared memory: the same address stays valid. */
    run(win, user, "create");
    CHECK_RC(NARMA_Win_free(&win));
    free(user);

    test_phase("disp_unit 8: displacements in doubles");
    {
        double *d;
        const int next = (test_rank + 1) % test_size,
                  prev = (test_rank + test_size - 1) % test_size;
        CHECK_RC(NARMA_Win_allocate(16 * sizeof(double), sizeof(double), MPI_INFO_NULL,
                                    MPI_COMM_WORLD, &d, &win));
        for (int i = 0; i < 16; i++)
            d[i] = -1;
        MPI_Barrier(MPI_COMM_WORLD);
        double v[3] = {test_rank + 0.25, test_rank + 0.5, test_rank + 0.75};
        NARMA_Request put;
        CHECK_RC(NARMA_Put_notify_init(v, 3, MPI_DOUBLE, next, 5, 3, MPI_DOUBLE, win, TAG_S, &put));
        start_wait(&put);
        wait_note(win, prev, TAG_S, 24, "disp_unit 8");
        for (int i = 0; i < 16; i++) {
            const double want = i >= 5 && i < 8 ? prev + 0.25 * (i - 4) : -1;
            CHECK(d[i] == want, "element %d is %g, expected %g", i, d[i], want);
        }
        CHECK_RC(NARMA_Request_free(&put));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&win));
    }
    return test_finish();
}
