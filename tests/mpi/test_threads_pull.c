/* narma-test: np=2,4 transports=shm,mpi timeout=300 */
/*
 * Pulled notified puts from 4 threads per rank at once on one window, under
 * MPI_THREAD_MULTIPLE. The window asks for pulls from 16 KiB on (info narma_pull_min): on shm
 * the target copies such a put out of the origin's buffer when it drains its notification
 * (process_vm_readv), or the origin copies it itself when the target is late, and either side
 * may have to wait while the other copies (docs/design.md, "Pulled puts"). On mpi nothing is
 * pulled: the test runs the same.
 *
 * Ranks pair up (r with r + np/2), thread t with thread t of the peer, each thread with its own
 * tag and its own region of the peer's window, double-buffered: batch k (B puts of 32 KiB) goes
 * into half k % 2, and a thread sends batch k only after it received and checked the peer's
 * batch k - 1, so the peer never writes a half the thread still reads. Threads 0 and 1 use
 * NARMA_Rput_notify + NARMA_Wait, threads 2 and 3 persistent NARMA_Put_notify_init requests
 * (NARMA_Start + NARMA_Wait); the origin buffer is refilled as soon as its request completes.
 * Each thread receives with NARMA_Notify_init(peer, tag, B): every notification once (the
 * batch's status, then no more than N in all: an NARMA_ANY_SOURCE/NARMA_ANY_TAG request finds
 * nothing left at the end), every byte of every put checked when its batch matched.
 * NARMA_THREADS_TEST_ITERS batches per thread (default 400).
 */
#include "threads.h"

#define NT    4
#define B     4           /* puts per batch */
#define BYTES (32 * 1024) /* per put: above the pull threshold */
#define TAG0  200

static int rank, size, peer;
static long K;
static unsigned char *mem; /* NT regions of 2 halves of B puts */
static NARMA_Win win;

static size_t slot_off(int t, long k, int j)
{
    return (((size_t)t * 2 + (size_t)(k % 2)) * B + (size_t)j) * BYTES;
}

static void thread_main(void *arg, int t)
{
    (void)arg;
    thr_phase("pulled puts");
    const int tag = TAG0 + t;
    unsigned char *buf = malloc((size_t)B * BYTES);
    CHECK(buf != NULL, "out of memory");
    NARMA_Request put[B], recv, pers[2][B];
    CHECK_RC(NARMA_Notify_init(win, peer, tag, B, &recv));
    if (t >= 2) /* persistent: one request per slot of both halves */
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < B; j++)
                CHECK_RC(NARMA_Put_notify_init(buf + (size_t)j * BYTES, BYTES, MPI_BYTE, peer,
                                               (MPI_Aint)slot_off(t, h, j), BYTES, MPI_BYTE, win,
                                               tag, &pers[h][j]));
    for (long k = 0; k < K; k++) {
        for (int j = 0; j < B; j++) {
            unsigned char *b = buf + (size_t)j * BYTES;
            test_fill(b, BYTES, (uint32_t)(rank * 64 + t), (uint32_t)(k * B + j));
            if (t < 2) {
                CHECK_RC(NARMA_Rput_notify(b, BYTES, MPI_BYTE, peer, (MPI_Aint)slot_off(t, k, j),
                                           BYTES, MPI_BYTE, win, &put[j], tag));
                CHECK_RC(NARMA_Wait(&put[j], MPI_STATUS_IGNORE));
            } else {
                CHECK_RC(NARMA_Start(&pers[k % 2][j]));
                CHECK_RC(NARMA_Wait(&pers[k % 2][j], MPI_STATUS_IGNORE));
            }
            /* The request is complete: the buffer is the program's again. */
            memset(b, 0xEE, BYTES);
        }
        MPI_Status st;
        CHECK_RC(NARMA_Start(&recv));
        CHECK_RC(NARMA_Wait(&recv, &st));
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag && test_byte_count(&st) == BYTES,
              "batch %ld: status (source %d, tag %d, %d bytes), expected (%d, %d, %d)", k,
              st.MPI_SOURCE, st.MPI_TAG, test_byte_count(&st), peer, tag, BYTES);
        for (int j = 0; j < B; j++) {
            const unsigned char *got = mem + slot_off(t, k, j);
            long bad = test_verify(got, BYTES, (uint32_t)(peer * 64 + t), (uint32_t)(k * B + j));
            if (bad < 0) continue;
            /* What is there instead: the slot's previous put (batch k - 2), or the origin's
             * buffer refilled after its request completed? */
            const int old = k >= 2 && test_verify(got, BYTES, (uint32_t)(peer * 64 + t),
                                                  (uint32_t)((k - 2) * B + j)) < 0;
            long ee = 0;
            while (ee < BYTES && got[ee] == 0xEE)
                ee++;
            CHECK(bad < 0,
                  "batch %ld, put %d: byte %ld is %#x, expected %#x, when its notification "
                  "matched (%s)",
                  k, j, bad, got[bad],
                  test_byte((uint32_t)(peer * 64 + t), (uint32_t)(k * B + j), (size_t)bad),
                  old ? "the slot holds the put of batch k - 2 in full: this one is not there"
                  : ee == BYTES
                      ? "the slot holds 0xee: the origin's buffer after its request completed"
                      : "neither this put nor the slot's previous one");
        }
    }
    CHECK_RC(NARMA_Request_free(&recv));
    if (t >= 2)
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < B; j++)
                CHECK_RC(NARMA_Request_free(&pers[h][j]));
    free(buf);
}

int main(int argc, char **argv)
{
    thr_init(&argc, &argv, "test_threads_pull");
    rank = test_rank;
    size = test_size;
    if (size % 2 != 0) test_skip("needs an even number of ranks (pairs)");
    peer = (rank + size / 2) % size;
    K = thr_iters(400);

    thr_phase("window");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "narma_pull_min", "16384");
    const MPI_Aint bytes = (MPI_Aint)NT * 2 * B * BYTES;
    CHECK_RC(NARMA_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    memset(mem, 0, (size_t)bytes);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD);

    thr_run(NT, thread_main, NULL);

    thr_phase("after the threads");
    MPI_Barrier(MPI_COMM_WORLD);
    thr_check_no_leftover(win);
    if (rank == 0)
        printf("# %d threads x %d ranks x %ld x %d notified puts of %d bytes (%s to the peer)\n",
               NT, size, K, B, BYTES, NARMA_Win_get_target_transport(win, peer));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
