/* narma-test: np=2,4 transports=shm,mpi timeout=600 */
/*
 * Notified puts from 4 threads per rank at once on one window, under MPI_THREAD_MULTIPLE:
 * nothing lost, nothing doubled, every value where it belongs.
 *
 * Ranks pair up (rank r with r + np/2), every thread t of a rank with thread t of its peer.
 * Each thread sends N 8-byte values (NARMA_THREADS_TEST_MSGS, default 10^5: lower it only for
 * quick local runs) into its own slots of the peer's window, slot t * N + i holding
 * value(origin, t, i), in batches of B, and after each batch receives the peer thread's batch
 * before sending the next (so a thread is never more than a batch ahead of its peer, and the
 * finite notification ring is drained by the receiving threads as it fills). The window is in
 * a lock_all epoch that the main thread opens before the threads start and closes after they
 * end. Each thread uses another form:
 *   0  NARMA_Put_notify, tag 0; receives with one persistent NARMA_Notify_init(peer, 0, B),
 *      NARMA_Start + NARMA_Wait per batch; NARMA_Win_flush to the peer after each batch;
 *   1  NARMA_Rput_notify + NARMA_Wait, tag 1; receives each notification on its own, with 4
 *      persistent count-1 requests (peer, 1) restarted as they complete (NARMA_Waitany),
 *      counting them one by one; NARMA_Win_flush_all after each batch;
 *   2  NARMA_Put_notify_idx into counter 0 (one counter per process, set by the main thread
 *      with NARMA_Win_set_num_notify); waits with NARMA_Win_notify_ithreshold + NARMA_Wait,
 *      then takes the counter's value with NARMA_Win_reset_notify_value, adding up what the
 *      resets returned (a doubled increment would show as a sum above N);
 *   3  NARMA_Put_notify, tag 3; receives with wildcard source (NARMA_ANY_SOURCE, 3: no other
 *      thread's tag, so it steals nothing), polling with NARMA_Request_get_status and
 *      NARMA_Progress, then NARMA_Wait to retire the completed request.
 * Checked: NARMA_Query_thread says MPI_THREAD_MULTIPLE; every status (source, tag, 8 bytes); each
 * received batch's slots hold their values when its notifications matched; each thread received
 * exactly N (tag-matched threads by their completed requests, the counter thread by the sum of its
 * resets); after all threads ended and a barrier, every slot holds its exact value, the counter
 * holds nothing more, and an NARMA_ANY_SOURCE/NARMA_ANY_TAG request finds no notification left
 * over.
 *
 * On a library that is not thread safe this crashes, corrupts a ring or a queue (lost or
 * doubled notifications, a Wait that never returns: ctest's timeout), or mixes up statuses.
 */
#include "threads.h"

#define NT 4  /* threads per rank */
#define B  64 /* notifications per batch */
#define NR 4  /* count-1 requests of thread 1 */

static int rank, size, peer;
static long N;
static uint64_t *mem; /* NT * N slots */
static NARMA_Win win;

static uint64_t value(int origin, int t, long i)
{
    return UINT64_C(0xA5) << 56 | (uint64_t)origin << 40 | (uint64_t)t << 32 | (uint64_t)i;
}

static void check_status(const MPI_Status *st, int tag, const char *what)
{
    CHECK(st->MPI_SOURCE == peer, "%s: status source %d, expected %d", what, st->MPI_SOURCE, peer);
    CHECK(st->MPI_TAG == tag, "%s: status tag %d, expected %d", what, st->MPI_TAG, tag);
    int n = test_byte_count(st);
    CHECK(n == 8, "%s: status count %d bytes, expected 8", what, n);
}

/* The peer thread t's slots [from, to) in this rank's window must hold their values. */
static void check_slots(int t, long from, long to, const char *when)
{
    for (long i = from; i < to; i++) {
        uint64_t got = thr_load(&mem[t * N + i]), want = value(peer, t, i);
        CHECK(got == want, "%s: slot %ld (thread %d, #%ld) holds %#llx, expected %#llx", when,
              t * N + i, t, i, (unsigned long long)got, (unsigned long long)want);
    }
}

/* Send [from, to) of thread t's values to the peer. */
static void send_batch(int t, long from, long to)
{
    for (long i = from; i < to; i++) {
        const uint64_t v = value(rank, t, i);
        const MPI_Aint disp = t * N + i;
        NARMA_Request r = NARMA_REQUEST_NULL;
        switch (t) {
        case 0:
        case 3:
            CHECK_RC(NARMA_Put_notify(&v, 1, MPI_UINT64_T, peer, disp, 1, MPI_UINT64_T, win, t));
            break;
        case 1:
            CHECK_RC(
                NARMA_Rput_notify(&v, 1, MPI_UINT64_T, peer, disp, 1, MPI_UINT64_T, win, &r, t));
            CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(r == NARMA_REQUEST_NULL, "NARMA_Wait left the Rput_notify request set");
            break;
        case 2:
            CHECK_RC(
                NARMA_Put_notify_idx(&v, 1, MPI_UINT64_T, peer, disp, 1, MPI_UINT64_T, 0, win));
            break;
        }
    }
    if (t == 0) CHECK_RC(NARMA_Win_flush(peer, win));
    if (t == 1) CHECK_RC(NARMA_Win_flush_all(win));
}

static long received[NT]; /* per thread, written by that thread only */

static void thread_main(void *arg, int t)
{
    (void)arg;
    char phase[64];
    snprintf(phase, sizeof phase, "thread %d: send and receive", t);
    thr_phase(phase);

    NARMA_Request batch = NARMA_REQUEST_NULL; /* threads 0 and 3 */
    int batch_count = 0;
    NARMA_Request one[NR]; /* thread 1 */
    int one_active = 0;
    MPI_Count accounted = 0; /* thread 2: the sum of its counter's resets */
    if (t == 1)
        for (int j = 0; j < NR; j++)
            CHECK_RC(NARMA_Notify_init(win, peer, 1, 1, &one[j]));

    for (long from = 0; from < N; from += B) {
        const long to = from + B < N ? from + B : N;
        const int n = (int)(to - from);
        send_batch(t, from, to);
        MPI_Status st;
        if (t == 0 || t == 3) {
            if (batch_count != n) { /* the first batch, and a shorter last one */
                if (batch != NARMA_REQUEST_NULL) CHECK_RC(NARMA_Request_free(&batch));
                CHECK_RC(NARMA_Notify_init(win, t == 3 ? NARMA_ANY_SOURCE : peer, t, n, &batch));
                batch_count = n;
            }
            CHECK_RC(NARMA_Start(&batch));
            if (t == 0) {
                CHECK_RC(NARMA_Wait(&batch, &st));
            } else {
                int flag = 0;
                while (!flag) {
                    CHECK_RC(NARMA_Request_get_status(batch, &flag, &st));
                    if (!flag) CHECK_RC(NARMA_Progress());
                }
                MPI_Status st2;
                CHECK_RC(NARMA_Wait(&batch, &st2));
                CHECK(st2.MPI_SOURCE == st.MPI_SOURCE && st2.MPI_TAG == st.MPI_TAG,
                      "NARMA_Wait's status (%d, %d) differs from get_status's (%d, %d)",
                      st2.MPI_SOURCE, st2.MPI_TAG, st.MPI_SOURCE, st.MPI_TAG);
            }
            CHECK(batch != NARMA_REQUEST_NULL, "a persistent request was freed by NARMA_Wait");
            check_status(&st, t, "batch request");
            received[t] += n;
        } else if (t == 1) {
            long need = n; /* notifications of this batch still to arrive */
            while (one_active < NR && one_active < need)
                CHECK_RC(NARMA_Start(&one[one_active++]));
            while (need > 0) {
                int idx = -1;
                CHECK_RC(NARMA_Waitany(NR, one, &idx, &st));
                CHECK(idx >= 0 && idx < NR, "NARMA_Waitany gave index %d with %d requests active",
                      idx, one_active);
                check_status(&st, 1, "count-1 request");
                received[1]++;
                need--;
                one_active--;
                /* Keep as many started as may still arrive in this batch: a request started
                 * beyond that would take a notification of the next batch. */
                if (one_active < need) {
                    CHECK_RC(NARMA_Start(&one[idx]));
                    one_active++;
                }
            }
            CHECK(one_active == 0, "%d count-1 requests still active after the batch", one_active);
        } else {
            const MPI_Count want = to; /* the peer's thread 2 has sent this many at least */
            if (accounted < want) {
                NARMA_Request thr;
                CHECK_RC(NARMA_Win_notify_ithreshold(win, 0, want - accounted, &thr));
                CHECK_RC(NARMA_Wait(&thr, MPI_STATUS_IGNORE));
                CHECK(thr == NARMA_REQUEST_NULL, "NARMA_Wait left the threshold request set");
            }
            MPI_Count old = -1;
            CHECK_RC(NARMA_Win_reset_notify_value(win, 0, &old));
            CHECK(old >= 0, "the counter's value was %lld", (long long)old);
            accounted += old;
            CHECK(accounted >= want && accounted <= N,
                  "the counter's resets add up to %lld after batch [%ld, %ld): expected %lld to "
                  "%ld",
                  (long long)accounted, from, to, (long long)want, N);
            received[2] = (long)accounted;
        }
        check_slots(t, from, to, "when the batch's notifications matched");
    }
    if (batch != NARMA_REQUEST_NULL) CHECK_RC(NARMA_Request_free(&batch));
    if (t == 1)
        for (int j = 0; j < NR; j++)
            CHECK_RC(NARMA_Request_free(&one[j]));
    CHECK(received[t] == N, "thread %d received %ld notifications, expected %ld", t, received[t],
          N);
}

int main(int argc, char **argv)
{
    thr_init(&argc, &argv, "test_threads_notify");
    rank = test_rank;
    size = test_size;
    if (size % 2 != 0) test_skip("needs an even number of ranks (pairs)");
    peer = (rank + size / 2) % size;
    N = env_long("NARMA_THREADS_TEST_MSGS", 100000);
    thr_check_narma_multiple();
    CHECK(N > 0 && N < (1L << 32) / NT, "NARMA_THREADS_TEST_MSGS=%ld is out of range", N);

    thr_phase("window");
    CHECK_RC(NARMA_Win_allocate(NT * N * (MPI_Aint)sizeof(uint64_t), sizeof(uint64_t),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_expect_transport(win);
    memset(mem, 0, NT * N * sizeof(uint64_t));
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, 1));
    CHECK_RC(NARMA_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD);

    thr_run(NT, thread_main, NULL);

    thr_phase("after the threads");
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's threads are done: all sent, all received */
    for (int t = 0; t < NT; t++)
        check_slots(t, 0, N, "at the end");
    MPI_Count extra = -1;
    CHECK_RC(NARMA_Win_get_notify_value(win, 0, &extra));
    CHECK(extra == 0, "counter 0 holds %lld more increments after all %ld were taken",
          (long long)extra, N);
    thr_check_no_leftover(win);
    long sums[NT], mine[NT];
    for (int t = 0; t < NT; t++)
        mine[t] = received[t];
    MPI_Allreduce(mine, sums, NT, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# %d threads x %d ranks x %ld notified puts: received %ld, %ld, %ld, %ld\n", NT,
               size, N, sums[0], sums[1], sums[2], sums[3]);

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
