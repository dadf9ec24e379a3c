/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Bounds at the limits of the types: every access whose target bytes
 * disp * disp_unit + [lo, hi) do not lie inside the target's window is
 * refused with NARMA_ERR_DISP, including when the product or the sums
 * overflow MPI_Aint (0.1.0's shm transport let a Put at displacement
 * 2^61 + 1 with disp_unit 8 wrap to byte 8 and write there):
 *   - displacements near INT64_MAX / disp_unit, INT64_MAX, negative ones,
 *     -2^61 (whose product with 8 wraps to 0), INT64_MIN;
 *   - target types whose lower bound is near MPI_Aint's limits;
 *   - counts whose span overflows (a type of extent 2^40 repeated 2^24 + 1
 *     times spans 2^64 bytes, which wraps to 0);
 * on every access kind, and the windows of all ranks stay untouched.
 * Accesses right at the end of the window still work.
 */
#include "common.h"

#define UNIT  8
#define NELEM 8 /* window: 8 elements of 8 bytes */

static int rank, size, right;
static int64_t *base;
static NARMA_Win win;

/* Every access kind at displacement disp with target type t (count tc). */
static void refuse_all(MPI_Aint disp, int tc, MPI_Datatype t, const char *what)
{
    static int64_t v[4] = {1, 2, 3, 4}, g[4];
    snprintf(test_detail, sizeof test_detail, "%s", what);
    int n = tc; /* origin int64s */
    if (t != MPI_INT64_T) n = 1;
    CHECK_ERR(NARMA_Put(v, n, MPI_INT64_T, right, disp, tc, t, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Get(g, n, MPI_INT64_T, right, disp, tc, t, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Accumulate(v, n, MPI_INT64_T, right, disp, tc, t, MPI_SUM, win),
              NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Get_accumulate(v, n, MPI_INT64_T, g, n, MPI_INT64_T, right, disp, tc, t,
                                   MPI_SUM, win),
              NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Put_notify(v, n, MPI_INT64_T, right, disp, tc, t, win, 1), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Get_notify(g, n, MPI_INT64_T, right, disp, tc, t, win, 1), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Accumulate_notify(v, n, MPI_INT64_T, right, disp, tc, t, MPI_SUM, win, 1),
              NARMA_ERR_DISP);
    if (t == MPI_INT64_T && tc == 1) {
        CHECK_ERR(NARMA_Fetch_and_op(v, g, MPI_INT64_T, right, disp, MPI_SUM, win), NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Compare_and_swap(v, v + 1, g, MPI_INT64_T, right, disp, win),
                  NARMA_ERR_DISP);
    }
}

static void displacements(void)
{
    static const struct {
        MPI_Aint disp;
        const char *what;
    } cases[] = {
        {((MPI_Aint)1 << 61) + 1, "2^61 + 1 (times 8 wraps to byte 8)"},
        {(MPI_Aint)1 << 61, "2^61 (times 8 wraps to byte 0)"},
        {INT64_MAX / UNIT, "INT64_MAX / 8 (the end overflows)"},
        {INT64_MAX / UNIT + 1, "INT64_MAX / 8 + 1"},
        {INT64_MAX, "INT64_MAX"},
        {-1, "-1"},
        {-((MPI_Aint)1 << 61), "-2^61 (times 8 wraps to byte 0)"},
        {INT64_MIN, "INT64_MIN"},
        {NELEM, "one past the end"},
    };
    test_phase("displacements at the limits of MPI_Aint: NARMA_ERR_DISP");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        refuse_all(cases[i].disp, 1, MPI_INT64_T, cases[i].what);
    CHECK_RC(NARMA_Win_unlock_all(win));
}

static void type_bounds(void)
{
    MPI_Datatype hi_lb, lo_lb, wide;
    int one = 1;
    /* one int64 at a byte displacement near INT64_MAX, and one near INT64_MIN */
    MPI_Aint dhi = INT64_MAX - 64, dlo = INT64_MIN + 64;
    CHECK_MPI(MPI_Type_create_hindexed(1, &one, &dhi, MPI_INT64_T, &hi_lb));
    CHECK_MPI(MPI_Type_create_hindexed(1, &one, &dlo, MPI_INT64_T, &lo_lb));
    /* one int64 per 2^40 bytes */
    CHECK_MPI(MPI_Type_create_resized(MPI_INT64_T, 0, (MPI_Aint)1 << 40, &wide));
    CHECK_MPI(MPI_Type_commit(&hi_lb));
    CHECK_MPI(MPI_Type_commit(&lo_lb));
    CHECK_MPI(MPI_Type_commit(&wide));

    test_phase("target types with bounds near MPI_Aint's limits: NARMA_ERR_DISP");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    refuse_all(0, 1, hi_lb, "lb INT64_MAX - 64, disp 0");
    refuse_all(NELEM - 1, 1, hi_lb, "lb INT64_MAX - 64, disp 7 (the sum overflows)");
    refuse_all(0, 1, lo_lb, "lb INT64_MIN + 64, disp 0");
    refuse_all(1, 1, lo_lb, "lb INT64_MIN + 64, disp 1");
    refuse_all(INT64_MIN / UNIT, 1, lo_lb, "lb INT64_MIN + 64, disp INT64_MIN / 8");

    test_phase("counts whose span overflows: NARMA_ERR_DISP");
    {
        /* 2^24 + 1 instances of extent 2^40: (count - 1) * extent = 2^64, which wraps to 0 */
        const int tc = (1 << 24) + 1;
        int64_t *src = calloc((size_t)tc, sizeof(int64_t));
        CHECK(src != NULL, "no memory for %d int64s", tc);
        snprintf(test_detail, sizeof test_detail, "count 2^24 + 1 of extent 2^40");
        CHECK_ERR(NARMA_Put(src, tc, MPI_INT64_T, right, 0, tc, wide, win), NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Get(src, tc, MPI_INT64_T, right, 0, tc, wide, win), NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Put_notify(src, tc, MPI_INT64_T, right, 0, tc, wide, win, 1),
                  NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Accumulate(src, tc, MPI_INT64_T, right, 0, tc, wide, MPI_SUM, win),
                  NARMA_ERR_DISP);
        /* 2^23 + 1 instances: the span is 2^63, one past MPI_Aint's range */
        CHECK_ERR(NARMA_Put(src, (1 << 23) + 1, MPI_INT64_T, right, 0, (1 << 23) + 1, wide, win),
                  NARMA_ERR_DISP);
        /* INT_MAX int64s: a span of 16 GiB, simply too large */
        CHECK_ERR(NARMA_Get(src, INT32_MAX, MPI_INT64_T, right, 0, INT32_MAX, MPI_INT64_T, win),
                  NARMA_ERR_DISP);
        free(src);
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Type_free(&hi_lb);
    MPI_Type_free(&lo_lb);
    MPI_Type_free(&wide);
}

/* The refused calls wrote nothing anywhere; the edges of the window still work. */
static void still_intact(void)
{
    test_phase("no window was written; accesses at the edge work");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_sync(win));
    for (int i = 0; i < NELEM; i++)
        CHECK(base[i] == 0, "element %d of my window is %lld after refused accesses", i,
              (long long)base[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t v = 100 + rank, g = -1;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, right, NELEM - 1, 1, MPI_INT64_T, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK_RC(NARMA_Get(&g, 1, MPI_INT64_T, right, NELEM - 1, 1, MPI_INT64_T, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK(g == v, "read back %lld from the last element, expected %lld", (long long)g,
          (long long)v);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_bounds_limits", 50);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    CHECK_RC(NARMA_Win_allocate(NELEM * UNIT, UNIT, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0, NELEM * UNIT);
    MPI_Barrier(MPI_COMM_WORLD);
    displacements();
    type_bounds();
    still_intact();
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
