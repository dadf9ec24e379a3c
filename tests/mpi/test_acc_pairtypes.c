/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 */
/*
 * Accumulates on MPI's value-index pair types, whose C structs carry padding
 * (MPI_SHORT_INT, MPI_LONG_INT, MPI_DOUBLE_INT, MPI_LONG_DOUBLE_INT; MPI_2INT
 * and MPI_FLOAT_INT have none). Each rank targets its right neighbour with
 * PAIRS elements at once and checks, element by element:
 *  - Get_accumulate MAXLOC returns the old pairs and leaves the larger value
 *    (the lower index on ties);
 *  - Get_accumulate MINLOC likewise with the smaller value;
 *  - Get_accumulate REPLACE returns the old pairs and stores the new ones;
 *  - Get_accumulate NO_OP returns the pairs and changes nothing;
 *  - Accumulate MAXLOC (no result buffer) updates the same way.
 * The origin and result buffers are the padded C arrays MPI describes, so a
 * transport that stages them at the data size instead of the extent writes past
 * its buffers (caught by the sanitizers, or by the allocator at free).
 */
#include "common.h"

#define PAIRS 1000 /* elements per operation: large enough that an overrun hits the heap */

/* One test body per pair type: V is the value member's C type. */
#define PAIR_TEST(NAME, V, MPITYPE)                                                              \
    static void test_##NAME(int rank, int size)                                                  \
    {                                                                                            \
        typedef struct {                                                                         \
            V v;                                                                                 \
            int i;                                                                               \
        } pair;                                                                                  \
        test_phase(#MPITYPE);                                                                    \
        const int right = (rank + 1) % size, left = (rank + size - 1) % size;                    \
        pair *base, *o = malloc(PAIRS * sizeof(pair)), *r = malloc(PAIRS * sizeof(pair));        \
        CHECK(o &&r, "malloc");                                                                  \
        NARMA_Win win;                                                                           \
        CHECK_RC(NARMA_Win_allocate(PAIRS *(MPI_Aint)sizeof(pair), (int)sizeof(pair),            \
                                    MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));                \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            base[k].v = (V)(k % 7);                                                              \
            base[k].i = 1000 + rank;                                                             \
        }                                                                                        \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        /* MAXLOC: even k win with a larger value, k % 3 == 1 tie with a lower index. */         \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            o[k].v = (V)(k % 2 == 0 ? 50 : k % 7);                                               \
            o[k].i = k % 3 == 1 ? 5 : 2000;                                                      \
        }                                                                                        \
        memset(r, 0xa5, PAIRS * sizeof(pair));                                                   \
        CHECK_RC(NARMA_Get_accumulate(o, PAIRS, MPITYPE, r, PAIRS, MPITYPE, right, 0, PAIRS,     \
                                      MPITYPE, NARMA_MAXLOC, win));                              \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            CHECK(r[k].v == (V)(k % 7) && r[k].i == 1000 + right, "MAXLOC result %d", k);        \
            int larger = k % 2 == 0, tie = !larger && k % 3 == 1;                                \
            V ev = larger ? (V)50 : (V)(k % 7);                                                  \
            int ei = larger || tie ? (k % 3 == 1 ? 5 : 2000) : 1000 + rank;                      \
            CHECK(base[k].v == ev && base[k].i == ei, "MAXLOC target %d: index %d, want %d", k,  \
                  base[k].i, ei);                                                                \
        }                                                                                        \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        /* MINLOC: every value 50 or k % 7 against -1: -1 wins everywhere. */                    \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            o[k].v = (V)-1;                                                                      \
            o[k].i = k;                                                                          \
        }                                                                                        \
        CHECK_RC(NARMA_Get_accumulate(o, PAIRS, MPITYPE, r, PAIRS, MPITYPE, right, 0, PAIRS,     \
                                      MPITYPE, NARMA_MINLOC, win));                              \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            CHECK(r[k].v == (k % 2 == 0 ? (V)50 : (V)(k % 7)), "MINLOC result %d", k);           \
            CHECK(base[k].v == (V)-1 && base[k].i == k, "MINLOC target %d", k);                  \
        }                                                                                        \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        /* REPLACE: old pairs back, the origin's stored. */                                      \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            o[k].v = (V)(rank + 3);                                                              \
            o[k].i = 3 * k;                                                                      \
        }                                                                                        \
        CHECK_RC(NARMA_Get_accumulate(o, PAIRS, MPITYPE, r, PAIRS, MPITYPE, right, 0, PAIRS,     \
                                      MPITYPE, NARMA_REPLACE, win));                             \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            CHECK(r[k].v == (V)-1 && r[k].i == k, "REPLACE result %d", k);                       \
            CHECK(base[k].v == (V)(left + 3) && base[k].i == 3 * k, "REPLACE target %d", k);     \
        }                                                                                        \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        /* NO_OP: a read; the origin is ignored. */                                              \
        CHECK_RC(NARMA_Get_accumulate(NULL, 0, MPITYPE, r, PAIRS, MPITYPE, right, 0, PAIRS,      \
                                      MPITYPE, NARMA_NO_OP, win));                               \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            CHECK(r[k].v == (V)(rank + 3) && r[k].i == 3 * k, "NO_OP result %d", k);             \
            CHECK(base[k].v == (V)(left + 3) && base[k].i == 3 * k, "NO_OP target %d", k);       \
        }                                                                                        \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        /* Accumulate MAXLOC without a result buffer. */                                         \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            o[k].v = (V)(k % 2 ? 100 : 0);                                                       \
            o[k].i = 7;                                                                          \
        }                                                                                        \
        CHECK_RC(                                                                                \
            NARMA_Accumulate(o, PAIRS, MPITYPE, right, 0, PAIRS, MPITYPE, NARMA_MAXLOC, win));   \
        CHECK_RC(NARMA_Win_fence(0, win));                                                       \
        for (int k = 0; k < PAIRS; k++) {                                                        \
            int won = k % 2;                                                                     \
            CHECK(base[k].v == (won ? (V)100 : (V)(left + 3)) && base[k].i == (won ? 7 : 3 * k), \
                  "Accumulate MAXLOC target %d", k);                                             \
        }                                                                                        \
        CHECK_RC(NARMA_Win_free(&win));                                                          \
        free(o);                                                                                 \
        free(r);                                                                                 \
    }

PAIR_TEST(short_int, short, MPI_SHORT_INT)
PAIR_TEST(two_int, int, MPI_2INT)
PAIR_TEST(long_int, long, MPI_LONG_INT)
PAIR_TEST(float_int, float, MPI_FLOAT_INT)
PAIR_TEST(double_int, double, MPI_DOUBLE_INT)
PAIR_TEST(long_double_int, long double, MPI_LONG_DOUBLE_INT)

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "acc_pairtypes", 80);
    test_short_int(test_rank, test_size);
    test_two_int(test_rank, test_size);
    test_long_int(test_rank, test_size);
    test_float_int(test_rank, test_size);
    test_double_int(test_rank, test_size);
    test_long_double_int(test_rank, test_size);
    return test_finish();
}
