/* narma-test: np=2,3,4 transports=shm,mpi timeout=120 env=NARMA_RING_SLOTS=8,NARMA_TEST_OFI_LAZY=1
 */
/*
 * The byte count a notification carries, at the edges of every way a transport may carry it,
 * and notifications left over when a window is freed.
 *
 * The ofi transport carries a count below 8190 in the message's completion data, a put's larger
 * count as the message's length, and any other larger count through a one-word mailbox per
 * origin at the target, written again only once the target emptied it (src/transport/ofi).
 * Each rank notifies the next one (a ring) and the status must count exactly the target's bytes:
 *   - contiguous puts of 0, 1, 8189, 8190, 8191, 8192 and 100000 bytes (one message each);
 *   - a strided put of 8191 bytes (data through mpi, then the notification alone);
 *   - notified gets of 8189, 8190 and 100000 bytes, and accumulates of 1023 and 4000 doubles,
 *     each twice in a row before the target matches any (the second must wait for the first's
 *     mailbox, not overwrite it): every status keeps its own count, in order;
 *   - a burst of 3 x NARMA_RING_SLOTS notified puts from every rank to rank 0, which sleeps
 *     first and then matches them (the origins' room runs out and comes back), nothing lost,
 *     in order.
 * NARMA_TEST_OFI_LAZY=1 makes an ofi target leave its peers' entries unread until it polls, so
 * that the second of two large counts finds its mailbox full (other transports ignore it).
 * Leftovers: K notifications sent to a window whose target never matches them, the window
 * freed, and another made just like it (a transport may hand the new window the old one's
 * identifiers): a notification sent there matches with its own tag and count, and nothing else
 * is pending (NARMA_Test finds no second one).
 * With NARMA_TEST_EXPECT_TRANSPORT set, the window's transport must have that name.
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AREA (1 << 17) /* > 100000 and 4000 doubles */
#define K    3         /* below every transport's room for one origin (4 at least) */

static int rank, size, next, prev;

static void expect(NARMA_Win win, int src, int tag, int bytes, const char *what)
{
    NARMA_Request r;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(win, src, tag, 1, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag && test_byte_count(&st) == bytes,
          "%s: <%d, %d> of %d bytes, expected <%d, %d> of %d", what, st.MPI_SOURCE, st.MPI_TAG,
          test_byte_count(&st), src, tag, bytes);
    CHECK_RC(NARMA_Request_free(&r));
}

static void puts_and_gets(NARMA_Win win, unsigned char *mem, unsigned char *buf)
{
    static const int put_sizes[] = {0, 1, 8189, 8190, 8191, 8192, 100000};
    char what[80];
    test_phase("contiguous notified puts at the count's edges");
    for (size_t i = 0; i < sizeof put_sizes / sizeof put_sizes[0]; i++) {
        const int n = put_sizes[i];
        test_fill(buf, (size_t)n, (uint32_t)rank, (uint32_t)n);
        CHECK_RC(NARMA_Put_notify(buf, n, MPI_BYTE, next, 0, n, MPI_BYTE, win, 10 + (int)i));
        snprintf(what, sizeof what, "put of %d bytes", n);
        expect(win, prev, 10 + (int)i, n, what);
        long bad = test_verify(mem, (size_t)n, (uint32_t)prev, (uint32_t)n);
        CHECK(bad < 0, "%s: byte %ld differs", what, bad);
        MPI_Barrier(MPI_COMM_WORLD); /* prev's next put may overwrite mem */
    }

    test_phase("a strided notified put of 8191 bytes");
    {
        MPI_Datatype vec;
        CHECK_MPI(MPI_Type_vector(8191, 1, 2, MPI_BYTE, &vec));
        CHECK_MPI(MPI_Type_commit(&vec));
        for (int j = 0; j < 2 * 8191; j++)
            buf[j] = (unsigned char)(j / 2 + rank);
        CHECK_RC(NARMA_Put_notify(buf, 1, vec, next, 0, 1, vec, win, 20));
        expect(win, prev, 20, 8191, "strided put");
        for (int j = 0; j < 8191; j++)
            if (mem[2 * j] != (unsigned char)(j + prev)) {
                CHECK(0, "strided put: element %d is %u", j, mem[2 * j]);
                break;
            }
        CHECK_MPI(MPI_Type_free(&vec));
        MPI_Barrier(MPI_COMM_WORLD);
    }

    test_phase("notified gets and accumulates, two in a row each");
    static const int get_sizes[] = {8189, 8190, 100000};
    for (size_t i = 0; i < sizeof get_sizes / sizeof get_sizes[0]; i++) {
        const int n = get_sizes[i];
        test_fill(mem, (size_t)n, (uint32_t)rank, (uint32_t)(n + 1));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Get_notify(buf, n, MPI_BYTE, next, 0, n, MPI_BYTE, win, 30));
        CHECK_RC(NARMA_Get_notify(buf, n - 1, MPI_BYTE, next, 0, n - 1, MPI_BYTE, win, 30));
        snprintf(what, sizeof what, "first get of %d bytes", n);
        expect(win, prev, 30, n, what);
        snprintf(what, sizeof what, "second get of %d bytes", n - 1);
        expect(win, prev, 30, n - 1, what);
        long bad = test_verify(buf, (size_t)n - 1, (uint32_t)next, (uint32_t)(n + 1));
        CHECK(bad < 0, "get of %d bytes: byte %ld differs", n, bad);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    static const int acc_counts[] = {1023, 4000};
    for (size_t i = 0; i < sizeof acc_counts / sizeof acc_counts[0]; i++) {
        const int n = acc_counts[i];
        double *d = (double *)(void *)mem, *s = (double *)(void *)buf;
        for (int j = 0; j < n; j++) {
            d[j] = 0.0;
            s[j] = (double)(j + 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(
            NARMA_Accumulate_notify(s, n, MPI_DOUBLE, next, 0, n, MPI_DOUBLE, NARMA_SUM, win, 40));
        CHECK_RC(NARMA_Accumulate_notify(s, n - 1, MPI_DOUBLE, next, 0, n - 1, MPI_DOUBLE,
                                         NARMA_SUM, win, 40));
        snprintf(what, sizeof what, "first accumulate of %d doubles", n);
        expect(win, prev, 40, 8 * n, what);
        snprintf(what, sizeof what, "second accumulate of %d doubles", n - 1);
        expect(win, prev, 40, 8 * (n - 1), what);
        for (int j = 0; j < n; j++)
            if (d[j] != (double)(j + 1) * (j < n - 1 ? 2 : 1)) {
                CHECK(0, "accumulate of %d: element %d is %g", n, j, d[j]);
                break;
            }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* More notified puts to one target than its ring (or credit) holds, matched only afterwards:
 * the origin must wait for room while the target matches, and nothing may be lost. */
static void burst(NARMA_Win win, unsigned char *mem, int slots)
{
    test_phase("a burst of three rings' worth of notified puts");
    const int n = 3 * slots;
    int64_t v;
    if (rank != 0) {
        for (int i = 0; i < n; i++) {
            v = (int64_t)rank * 100000 + i;
            CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, 0, 8 * rank, 1, MPI_INT64_T, win, 50));
        }
    } else {
        usleep(300 * 1000); /* the origins fill what room they have meanwhile */
        for (int o = 1; o < size; o++)
            for (int i = 0; i < n; i++) {
                NARMA_Request r;
                MPI_Status st;
                CHECK_RC(NARMA_Notify_init(win, o, NARMA_ANY_TAG, 1, &r));
                CHECK_RC(NARMA_Start(&r));
                CHECK_RC(NARMA_Wait(&r, &st));
                CHECK(st.MPI_TAG == 50 && test_byte_count(&st) == 8,
                      "burst from %d, #%d: tag %d, %d bytes", o, i, st.MPI_TAG,
                      test_byte_count(&st));
                CHECK_RC(NARMA_Request_free(&r));
            }
        for (int o = 1; o < size; o++) {
            memcpy(&v, mem + 8 * o, 8);
            CHECK(v == (int64_t)o * 100000 + n - 1, "burst from %d: the word is %lld", o,
                  (long long)v);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void leftovers(void)
{
    test_phase("notifications left over when a window is freed");
    unsigned char *m1, *m2;
    NARMA_Win w1, w2;
    int64_t v = rank;
    CHECK_RC(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &m1, &w1));
    for (int i = 0; i < K; i++)
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, next, 0, 1, MPI_INT64_T, w1, 60 + i));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&w1));
    CHECK_RC(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &m2, &w2));
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, next, 8, 1, MPI_INT64_T, w2, 70));
    NARMA_Request r;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(w2, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 70 && test_byte_count(&st) == 8,
          "new window: <%d, %d> of %d bytes, expected <%d, 70> of 8", st.MPI_SOURCE, st.MPI_TAG,
          test_byte_count(&st), prev);
    MPI_Barrier(MPI_COMM_WORLD); /* every notification of w2 has been sent */
    int flag = 0;
    CHECK_RC(NARMA_Start(&r));
    for (int i = 0; i < 100 && !flag; i++)
        CHECK_RC(NARMA_Test(&r, &flag, &st));
    CHECK(!flag, "new window: a notification <%d, %d> nobody sent to it", st.MPI_SOURCE,
          st.MPI_TAG);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has looked: one more completes the request */
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, next, 8, 1, MPI_INT64_T, w2, 71));
    CHECK_RC(NARMA_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 71, "new window: <%d, %d>, expected <%d, 71>",
          st.MPI_SOURCE, st.MPI_TAG, prev);
    CHECK_RC(NARMA_Request_free(&r));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&w2));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "notify_counts", 100);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    unsigned char *mem, *buf = malloc(2 * AREA);
    CHECK(buf != NULL, "malloc");
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(AREA, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    /* e.g. "mpi" where ofi finds no provider and every window falls back (tests/CMakeLists.txt) */
    test_expect_transport(win);
    puts_and_gets(win, mem, buf);
    burst(win, mem, (int)env_long("NARMA_RING_SLOTS", 8));
    CHECK_RC(NARMA_Win_free(&win));
    leftovers();
    free(buf);
    return test_finish();
}
