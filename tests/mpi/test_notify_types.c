/* narma-test: np=2,3 transports=shm,mpi timeout=60 */
/*
 * Notified puts whose one datatype (the same on both sides) is contiguous but
 * does not start at its lower bound zero, into a window with a displacement
 * unit of 8: the shm transport's fast path for contiguous puts must place
 * the bytes exactly where the generic path does, touch nothing around them,
 * and report the size in the notification. Also a contiguous put of a type
 * with a resized extent (count 3 of MPI_INT padded to 16 bytes: not
 * contiguous, the generic path), and a zero-count put of the shifted type.
 * Each rank puts to the next one.
 */
#include "common.h"

#define WBYTES 512

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_types", 50);
    const int rank = test_rank, size = test_size;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    unsigned char *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(WBYTES, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_expect_transport(win);
    memset(mem, 0xee, WBYTES);
    MPI_Barrier(MPI_COMM_WORLD);

    /* shifted: one block of 3 doubles at byte 16; 2 instances = bytes [16, 64), contiguous */
    MPI_Datatype shifted, padded;
    int bl = 3;
    MPI_Aint at = 16;
    CHECK_MPI(MPI_Type_create_hindexed(1, &bl, &at, MPI_DOUBLE, &shifted));
    CHECK_MPI(MPI_Type_commit(&shifted));
    MPI_Datatype three;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &three));
    CHECK_MPI(MPI_Type_create_resized(three, 0, 16, &padded)); /* 12 bytes of data every 16 */
    CHECK_MPI(MPI_Type_commit(&padded));
    CHECK_MPI(MPI_Type_free(&three));

    unsigned char src[128];
    test_fill(src, sizeof src, (uint32_t)rank, 7);
    NARMA_Request req;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(win, prev, NARMA_ANY_TAG, 1, &req));

    test_phase("contiguous type with a lower bound of 16 bytes");
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Put_notify(src, 2, shifted, next, 3, 2, shifted, win, 1)); /* disp 3 x 8 */
    CHECK_RC(NARMA_Win_flush(next, win));
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK(st.MPI_TAG == 1 && test_byte_count(&st) == 48, "tag %d bytes %d", st.MPI_TAG,
          test_byte_count(&st));
    unsigned char exp[128];
    test_fill(exp, sizeof exp, (uint32_t)prev, 7);
    for (int b = 0; b < WBYTES; b++) {
        int in = b >= 24 + 16 && b < 24 + 64;
        unsigned char want = in ? exp[b - 24] : 0xee;
        CHECK(mem[b] == want, "byte %d: %#x, expected %#x", b, mem[b], want);
        if (mem[b] != want) break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(mem, 0xee, WBYTES);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("a padded type (not contiguous): the generic path");
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Put_notify(src, 3, padded, next, 8, 3, padded, win, 2)); /* byte 64 */
    CHECK_RC(NARMA_Win_flush(next, win));
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK(st.MPI_TAG == 2 && test_byte_count(&st) == 36, "tag %d bytes %d", st.MPI_TAG,
          test_byte_count(&st));
    for (int b = 0; b < WBYTES; b++) {
        int r = b - 64, in = r >= 0 && r < 48 && r % 16 < 12;
        unsigned char want = in ? exp[r] : 0xee;
        CHECK(mem[b] == want, "byte %d: %#x, expected %#x", b, mem[b], want);
        if (mem[b] != want) break;
    }

    MPI_Barrier(MPI_COMM_WORLD); /* every rank checked before the puts at the end */
    test_phase("zero instances of the shifted type");
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Put_notify(src, 0, shifted, next, 0, 0, shifted, win, 3));
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK(st.MPI_TAG == 3 && test_byte_count(&st) == 0, "tag %d bytes %d", st.MPI_TAG,
          test_byte_count(&st));

    test_phase("the end of the window: the last byte in, one more refused");
    CHECK_ERR(NARMA_Put_notify(src, 2, shifted, next, (WBYTES - 64) / 8 + 1, 2, shifted, win, 4),
              NARMA_ERR_DISP);
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Put_notify(src, 2, shifted, next, (WBYTES - 64) / 8, 2, shifted, win, 5));
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK(st.MPI_TAG == 5, "tag %d", st.MPI_TAG);
    CHECK(memcmp(mem + WBYTES - 48, exp + 16, 48) == 0, "last 48 bytes not the put's");

    CHECK_RC(NARMA_Request_free(&req));
    CHECK_MPI(MPI_Type_free(&shifted));
    CHECK_MPI(MPI_Type_free(&padded));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
