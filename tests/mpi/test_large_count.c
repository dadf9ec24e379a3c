/* narma-test: np=2 transports=shm,mpi timeout=900 */
/*
 * The large-count (_c) calls move more than INT_MAX elements for real: rank 0 puts, gets,
 * notifies and accumulates 2^31 + 17 (and 2^31 + 1024) bytes of MPI_BYTE into rank 1's window
 * of 2^31 + 2048 bytes, and every byte is checked at both ends, the first chunk's end
 * (INT_MAX) included. About 2.1 GB per rank for the window and as much for rank 0's buffer:
 * np=2 only. Counts that fit an int take the int path; bad counts are refused before any byte
 * moves:
 *   NARMA_ERR_COUNT  a negative origin, target or result count; 2^62 doubles (bytes beyond
 *                    MPI_Aint)
 *   NARMA_ERR_TYPE   MPI_DATATYPE_NULL with a count beyond an int
 *   NARMA_ERR_DISP   one byte more than the window, or 2^40 bytes (from a 64-byte buffer:
 *                    the bounds check comes first, nothing is read)
 * The accumulate's origin is laid out with holes (blocks of 1024 bytes at a stride of 1025),
 * so the shm transport stages more than INT_MAX elements into an array first.
 */
#include "common.h"

#include <limits.h>

#define N    (((MPI_Count)1 << 31) + 17)   /* bytes put, got, notified */
#define M    (((MPI_Count)1 << 31) + 1024) /* bytes accumulated */
#define W    (((MPI_Aint)1 << 31) + 2048)  /* rank 1's window */
#define BLK  1024                          /* accumulate origin: BLK bytes every BLK + 1 */
#define NBLK (M / BLK)

static int rank;
static NARMA_Win win;
static unsigned char *wbase; /* rank 1: the window */
static unsigned char *buf;   /* rank 0: origin and result buffer */
static size_t buf_len;

/* Rank 1: every byte of [0, n) is pattern (a, b), naming the first that is not. */
static void verify_window(MPI_Count n, uint32_t a, uint32_t b, const char *what)
{
    static const MPI_Count probes[] = {0, INT_MAX - 1, INT_MAX, (MPI_Count)INT_MAX + 1};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        CHECK(wbase[probes[i]] == test_byte(a, b, (size_t)probes[i]),
              "%s: byte %lld (chunk boundary) wrong", what, (long long)probes[i]);
    CHECK(wbase[n - 1] == test_byte(a, b, (size_t)(n - 1)), "%s: last byte %lld wrong", what,
          (long long)(n - 1));
    long bad = test_verify(wbase, (size_t)n, a, b);
    CHECK(bad < 0, "%s: byte %ld of %lld wrong", what, bad, (long long)n);
}

static void phase_errors(void)
{
    test_phase("small counts take the int path; bad counts refused before any byte moves");
    unsigned char small[64];
    memset(small, 7, sizeof small);
    if (rank == 0) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 1, 0, win));
        CHECK_RC(NARMA_Put_c(small, 64, MPI_BYTE, 1, 0, 64, MPI_BYTE, win));
        CHECK_RC(NARMA_Win_flush(1, win));
        memset(small, 0, sizeof small);
        CHECK_RC(NARMA_Get_c(small, 64, MPI_BYTE, 1, 0, 64, MPI_BYTE, win));
        CHECK_RC(NARMA_Win_flush(1, win));
        for (int i = 0; i < 64; i++)
            CHECK(small[i] == 7, "small Put_c/Get_c: byte %d is %d", i, small[i]);
        CHECK_ERR(NARMA_Put_c(small, -1, MPI_BYTE, 1, 0, 1, MPI_BYTE, win), NARMA_ERR_COUNT);
        CHECK_ERR(NARMA_Put_c(small, 1, MPI_BYTE, 1, 0, -1, MPI_BYTE, win), NARMA_ERR_COUNT);
        CHECK_ERR(NARMA_Get_c(small, (MPI_Count)INT_MIN - 5, MPI_BYTE, 1, 0, 1, MPI_BYTE, win),
                  NARMA_ERR_COUNT);
        CHECK_ERR(NARMA_Get_accumulate_c(small, 1, MPI_BYTE, small, -3, MPI_BYTE, 1, 0, 1, MPI_BYTE,
                                         MPI_BXOR, win),
                  NARMA_ERR_COUNT);
        CHECK_ERR(NARMA_Put_c(small, N, MPI_DATATYPE_NULL, 1, 0, N, MPI_BYTE, win), NARMA_ERR_TYPE);
        CHECK_ERR(NARMA_Put_c(small, (MPI_Count)1 << 62, MPI_DOUBLE, 1, 0, (MPI_Count)1 << 62,
                              MPI_DOUBLE, win),
                  NARMA_ERR_COUNT);
        CHECK_ERR(NARMA_Put_c(small, (MPI_Count)1 << 40, MPI_BYTE, 1, 0, (MPI_Count)1 << 40,
                              MPI_BYTE, win),
                  NARMA_ERR_DISP);
        CHECK_ERR(
            NARMA_Put_c(small, (MPI_Count)W + 1, MPI_BYTE, 1, 0, (MPI_Count)W + 1, MPI_BYTE, win),
            NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Put_c(small, N, MPI_BYTE, 1, W - N + 1, N, MPI_BYTE, win), NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Accumulate_c(small, M, MPI_BYTE, 1, W - M + 1, M, MPI_BYTE, MPI_BXOR, win),
                  NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Put_notify_c(small, N, MPI_BYTE, 1, 1 - N + W, N, MPI_BYTE, win, 1),
                  NARMA_ERR_DISP);
        CHECK_RC(NARMA_Win_unlock(1, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void phase_put_get(void)
{
    test_phase("Put_c of 2^31 + 17 bytes: every byte at the target");
    if (rank == 0) {
        test_fill(buf, (size_t)N, 1, 0);
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, 1, 0, win));
        CHECK_RC(NARMA_Put_c(buf, N, MPI_BYTE, 1, 0, N, MPI_BYTE, win));
        CHECK_RC(NARMA_Win_unlock(1, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        verify_window(N, 1, 0, "Put_c");
        CHECK(wbase[N] == 0xee, "Put_c wrote past its %lld bytes", (long long)N);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("Rget_c of 2^31 + 17 bytes back: every byte at the origin");
    if (rank == 0) {
        memset(buf, 0, (size_t)N);
        buf[N] = 0xab;
        NARMA_Request req;
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 1, 0, win));
        CHECK_RC(NARMA_Rget_c(buf, N, MPI_BYTE, 1, 0, N, MPI_BYTE, win, &req));
        CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Win_unlock(1, win));
        CHECK(buf[INT_MAX] == test_byte(1, 0, INT_MAX), "Rget_c: byte INT_MAX wrong");
        long bad = test_verify(buf, (size_t)N, 1, 0);
        CHECK(bad < 0, "Rget_c: byte %ld wrong", bad);
        CHECK(buf[N] == 0xab, "Rget_c wrote past its %lld bytes", (long long)N);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void phase_notify(void)
{
    test_phase("Put_notify_c of 2^31 + 17 bytes: data complete with its notification");
    NARMA_Request nreq = NARMA_REQUEST_NULL;
    if (rank == 1) {
        CHECK_RC(NARMA_Notify_init(win, 0, 7, 1, &nreq));
        CHECK_RC(NARMA_Start(&nreq));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        test_fill(buf, (size_t)N, 2, 0);
        CHECK_RC(NARMA_Put_notify_c(buf, N, MPI_BYTE, 1, 0, N, MPI_BYTE, win, 7));
    } else {
        MPI_Status st;
        CHECK_RC(NARMA_Wait(&nreq, &st));
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 7, "notification from %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        MPI_Count bytes = 0;
        CHECK_MPI(MPI_Get_elements_x(&st, MPI_BYTE, &bytes));
        CHECK(bytes == N, "notification says %lld bytes, expected %lld", (long long)bytes,
              (long long)N);
        verify_window(N, 2, 0, "Put_notify_c");
        CHECK_RC(NARMA_Request_free(&nreq));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void phase_accumulate(void)
{
    test_phase("Accumulate_c BXOR of 2^31 + 1024 bytes from an origin with holes");
    /* Rank 1 holds pattern (2, 0) in [0, N) and 0 above; rank 0 xors pattern (3, 0) in. */
    MPI_Datatype blk;
    CHECK_MPI(MPI_Type_contiguous(BLK, MPI_BYTE, &blk));
    MPI_Datatype holed;
    CHECK_MPI(MPI_Type_create_resized(blk, 0, BLK + 1, &holed));
    CHECK_MPI(MPI_Type_commit(&holed));
    MPI_Type_free(&blk);
    if (rank == 0) {
        for (MPI_Count j = 0; j < M; j++)
            buf[(j / BLK) * (BLK + 1) + j % BLK] = test_byte(3, 0, (size_t)j);
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 1, 0, win));
        CHECK_RC(NARMA_Accumulate_c(buf, NBLK, holed, 1, 0, M, MPI_BYTE, MPI_BXOR, win));
        CHECK_RC(NARMA_Win_unlock(1, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        long bad = -1;
        for (MPI_Count j = 0; j < M && bad < 0; j++) {
            unsigned char old = j < N ? test_byte(2, 0, (size_t)j) : 0;
            if (wbase[j] != (unsigned char)(old ^ test_byte(3, 0, (size_t)j))) bad = (long)j;
        }
        CHECK(bad < 0, "Accumulate_c: byte %ld of %lld wrong", bad, (long long)M);
        CHECK(wbase[M] == 0, "Accumulate_c touched byte %lld past its end", (long long)M);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("Get_accumulate_c NO_OP of 2^31 + 1024 bytes: the accumulated bytes back");
    if (rank == 0) {
        memset(buf, 0, (size_t)M + 1);
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 1, 0, win));
        CHECK_RC(NARMA_Get_accumulate_c(NULL, 0, MPI_DATATYPE_NULL, buf, M, MPI_BYTE, 1, 0, M,
                                        MPI_BYTE, MPI_NO_OP, win));
        CHECK_RC(NARMA_Win_unlock(1, win));
        long bad = -1;
        for (MPI_Count j = 0; j < M && bad < 0; j++) {
            unsigned char old = j < N ? test_byte(2, 0, (size_t)j) : 0;
            if (buf[j] != (unsigned char)(old ^ test_byte(3, 0, (size_t)j))) bad = (long)j;
        }
        CHECK(bad < 0, "Get_accumulate_c: byte %ld of %lld wrong", bad, (long long)M);
        CHECK(buf[M] == 0, "Get_accumulate_c wrote past its %lld bytes", (long long)M);
    }
    MPI_Type_free(&holed);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_large_count", 850);
    rank = test_rank;
    if (test_size != 2) test_skip("needs exactly 2 ranks (2.1 GB windows)");
    buf_len = (size_t)(NBLK * (BLK + 1)) + 64; /* the largest use: the holed origin */
    if (rank == 0 && (buf = malloc(buf_len)) == NULL)
        test_fail(__FILE__, __LINE__, "malloc", "no memory");
    void *b = NULL;
    CHECK_RC(NARMA_Win_allocate(rank == 1 ? W : 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &win));
    wbase = b;
    if (rank == 1) {
        memset(wbase, 0, (size_t)N);
        memset(wbase + N, 0xee, 1);
        memset(wbase + N + 1, 0, (size_t)(W - N - 1));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    phase_errors();
    phase_put_get();
    phase_notify();
    /* Above N, the window is zero again for the accumulate's expectations. */
    if (rank == 1) wbase[N] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    phase_accumulate();

    CHECK_RC(NARMA_Win_free(&win));
    free(buf);
    return test_finish();
}
