/* narma-test: np=2,3 transports=shm,mpi timeout=120 */
/*
 * Datatypes made by MPI-4's large-count constructors (MPI_Type_contiguous_c, ..._vector_c,
 * ..._create_hvector_c, ..._indexed_c, ..._create_hindexed_c, ..._create_indexed_block_c,
 * ..._create_hindexed_block_c, ..._create_struct_c, ..._create_subarray_c,
 * ..._create_darray_c, ..._create_resized_c, a dup of one, and nested ones: a vector_c of a
 * struct_c of an int-constructed indexed type, an int hvector of an indexed_c) work in every
 * narma call exactly as the same type made with the int constructors. MPICH refuses
 * MPI_Type_get_envelope for them; narma learns them with MPI_Type_get_envelope_c.
 *
 * For each pair of types, every rank (in a ring: to the next, from the previous) does with
 * the _c type and with the int type, into two regions of the window:
 *   Put, Get, Accumulate (MPI_SUM; types made of doubles), Put_notify with the two types
 *   crossed (_c origin into the int target type and back), a persistent Put_notify_init, and
 *   a Put deferred in an access epoch whose target posts late (narma holds a dup of the type,
 *   which the program frees right after the call).
 * Both regions must equal what MPI's own type map gives (MPI_Pack with the int type, then
 * MPI_Unpack), byte for byte, untouched bytes included.
 *
 * Values beyond an int, in a few KiB: a resized_c extent of 2^32 + 64 bytes, a subarray_c of
 * 3 x 2^32 doubles (4 of them in it), a vector_c stride of 2^33 elements with one block (count
 * 1 of each), and an indexed_c whose displacements are 2^31 + 7 elements and more, used on the
 * origin side from a base that far before the buffer. Refused, with nothing moved: two
 * instances of the resized_c type (4 GiB beyond the window: NARMA_ERR_DISP) and an
 * hvector_c whose third block lies at 2^63 bytes (MPI wraps its extent; narma refuses it with
 * NARMA_ERR_TYPE rather than wrap). What cannot be tested in a few MiB: a type whose data
 * really spreads over more than 2^31 bytes of a window (a stride beyond INT_MAX with two
 * blocks needs a window of 16 GiB); tests/unit/test_dtype_c.c checks such descriptions
 * without memory.
 *
 * Skipped (exit 77) on an MPI-3 library (Open MPI 5: MPI_VERSION 3, no _c constructors).
 */
#include "common.h"

#include <limits.h>

#if MPI_VERSION < 4

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_dtype_c", 60);
    return test_skip("an MPI-3 library: no large-count datatype constructors (MPI_Type_vector_c)");
}

#else

#define REGION   4096 /* bytes of each of a rank's two window regions */
#define NDBL     (REGION / 8)
#define TAG      7

static int rank, size, next, prev;
static NARMA_Win win;
static unsigned char *mem; /* the window: region 0 for the _c type, region 1 for the int one */
static MPI_Group next_group, prev_group;

/* The doubles a rank puts and accumulates, and those its window holds for Gets. */
static double src_value(int r, int j) { return 100000.0 * (r + 1) + j; }
static double win_value(int r, int j) { return 1000.0 * (r + 1) + j; }
#define SENTINEL (-1.0)

static void fill(void *buf, double (*value)(int, int), int r)
{
    double *d = buf;
    for (int j = 0; j < NDBL; j++)
        d[j] = value ? value(r, j) : SENTINEL;
}

/* What MPI's type map makes of (k, from) at src arriving as (k, to) in dst. */
static void oracle(void *dst, const void *src, int k, MPI_Datatype from, MPI_Datatype to)
{
    int bytes, pos = 0;
    CHECK_MPI(MPI_Pack_size(k, from, MPI_COMM_SELF, &bytes));
    void *packed = malloc((size_t)bytes + 1);
    CHECK_MPI(MPI_Pack(src, k, from, packed, bytes, &pos, MPI_COMM_SELF));
    int len = pos;
    pos = 0;
    CHECK_MPI(MPI_Unpack(packed, len, &pos, dst, k, to, MPI_COMM_SELF));
    free(packed);
}

static void same_bytes(const void *got, const void *want, const char *what)
{
    const unsigned char *g = got, *w = want;
    for (int b = 0; b < REGION; b++)
        if (g[b] != w[b]) {
            CHECK(0, "%s: byte %d is %#x, expected %#x (double %d: %g, expected %g)", what, b, g[b],
                  w[b], b / 8, ((const double *)got)[b / 8], ((const double *)want)[b / 8]);
            return;
        }
}

/* Both regions of the window hold want. */
static void check_regions(const void *want, const char *what)
{
    char s[160];
    snprintf(s, sizeof s, "%s, _c type (region 0)", what);
    same_bytes(mem, want, s);
    snprintf(s, sizeof s, "%s, int type (region 1)", what);
    same_bytes(mem + REGION, want, s);
}

static void fill_window(double (*value)(int, int))
{
    MPI_Barrier(MPI_COMM_WORLD); /* every access to the old contents is over */
    fill(mem, value, rank);
    fill(mem + REGION, value, rank);
    MPI_Barrier(MPI_COMM_WORLD);
}

struct pair {
    const char *name;
    MPI_Datatype c, i; /* made with the _c constructors, and with the int ones */
    int count;         /* instances per transfer */
    int acc;           /* made of doubles: Accumulate applies */
};

static MPI_Datatype committed(MPI_Datatype t)
{
    CHECK_MPI(MPI_Type_commit(&t));
    return t;
}

/* The two types describe the same data the same way, as far as MPI tells. */
static void check_pair_shape(const struct pair *p)
{
    MPI_Count sc, si;
    MPI_Aint lbc, exc, lbi, exi, tlc, tec, tli, tei;
    CHECK_MPI(MPI_Type_size_x(p->c, &sc));
    CHECK_MPI(MPI_Type_size_x(p->i, &si));
    CHECK_MPI(MPI_Type_get_extent(p->c, &lbc, &exc));
    CHECK_MPI(MPI_Type_get_extent(p->i, &lbi, &exi));
    CHECK_MPI(MPI_Type_get_true_extent(p->c, &tlc, &tec));
    CHECK_MPI(MPI_Type_get_true_extent(p->i, &tli, &tei));
    CHECK(sc == si && lbc == lbi && exc == exi && tlc == tli && tec == tei,
          "%s: _c and int types differ: size %lld/%lld lb %ld/%ld extent %ld/%ld true [%ld +%ld]/"
          "[%ld +%ld]",
          p->name, (long long)sc, (long long)si, (long)lbc, (long)lbi, (long)exc, (long)exi,
          (long)tlc, (long)tec, (long)tli, (long)tei);
    /* count instances lie inside a region (every type here has its data at offsets >= 0) */
    CHECK(tlc >= 0 && (p->count - 1) * exc + tlc + tec <= REGION, "%s: does not fit a region",
          p->name);
    MPI_Count ni, na, nc, nd;
    int comb;
    CHECK_MPI(MPI_Type_get_envelope_c(p->i, &ni, &na, &nc, &nd, &comb));
    CHECK(nc == 0, "%s: the int type reports %lld large counts", p->name, (long long)nc);
}

static void run_pair(const struct pair *p)
{
    const int k = p->count;
    static double src[NDBL], got_c[NDBL], got_i[NDBL], want[NDBL], image[NDBL];
    MPI_Count bytes;
    MPI_Status st;
    NARMA_Request note;
    char what[128];
    test_phase(p->name);
    check_pair_shape(p);
    CHECK_MPI(MPI_Type_size_x(p->i, &bytes));
    bytes *= k;
    fill(src, src_value, rank);

    snprintf(test_detail, sizeof test_detail, "Put");
    fill_window(NULL);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(src, k, p->c, next, 0, k, p->c, win));
    CHECK_RC(NARMA_Put(src, k, p->i, next, REGION, k, p->i, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    fill(image, src_value, prev);
    fill(want, NULL, 0);
    oracle(want, image, k, p->i, p->i);
    snprintf(what, sizeof what, "%s: Put", p->name);
    check_regions(want, what);

    snprintf(test_detail, sizeof test_detail, "Get");
    fill_window(win_value);
    fill(got_c, NULL, 0);
    fill(got_i, NULL, 0);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Get(got_c, k, p->c, next, 0, k, p->c, win));
    CHECK_RC(NARMA_Get(got_i, k, p->i, next, REGION, k, p->i, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    fill(image, win_value, next);
    fill(want, NULL, 0);
    oracle(want, image, k, p->i, p->i);
    snprintf(what, sizeof what, "%s: Get, _c type", p->name);
    same_bytes(got_c, want, what);
    snprintf(what, sizeof what, "%s: Get, int type", p->name);
    same_bytes(got_i, want, what);

    if (p->acc) {
        snprintf(test_detail, sizeof test_detail, "Accumulate");
        fill_window(win_value);
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Accumulate(src, k, p->c, next, 0, k, p->c, NARMA_SUM, win));
        CHECK_RC(NARMA_Accumulate(src, k, p->i, next, REGION, k, p->i, NARMA_SUM, win));
        CHECK_RC(NARMA_Win_unlock_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        double add[NDBL] = {0};
        fill(image, src_value, prev);
        oracle(add, image, k, p->i, p->i);
        for (int j = 0; j < NDBL; j++)
            want[j] = win_value(rank, j) + add[j];
        snprintf(what, sizeof what, "%s: Accumulate", p->name);
        check_regions(want, what);
    }

    snprintf(test_detail, sizeof test_detail, "Put_notify, types crossed");
    fill_window(NULL);
    CHECK_RC(NARMA_Notify_init(win, prev, TAG, 2, &note));
    CHECK_RC(NARMA_Start(&note));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Put_notify(src, k, p->c, next, REGION, k, p->i, win, TAG));
    CHECK_RC(NARMA_Put_notify(src, k, p->i, next, 0, k, p->c, win, TAG));
    CHECK_RC(NARMA_Win_flush(next, win));
    CHECK_RC(NARMA_Wait(&note, &st));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == TAG && test_byte_count(&st) == (int)bytes,
          "%s: notification from %d tag %d of %d bytes, expected %d bytes", p->name, st.MPI_SOURCE,
          st.MPI_TAG, test_byte_count(&st), (int)bytes);
    fill(image, src_value, prev);
    fill(want, NULL, 0);
    oracle(want, image, k, p->i, p->i);
    snprintf(what, sizeof what, "%s: Put_notify", p->name);
    check_regions(want, what);

    snprintf(test_detail, sizeof test_detail, "persistent Put_notify_init");
    fill_window(NULL);
    CHECK_RC(NARMA_Start(&note)); /* two matches: the _c and the int persistent puts */
    MPI_Barrier(MPI_COMM_WORLD);
    NARMA_Request pc, pi;
    CHECK_RC(NARMA_Put_notify_init(src, k, p->c, next, 0, k, p->c, win, TAG, &pc));
    CHECK_RC(NARMA_Put_notify_init(src, k, p->i, next, REGION, k, p->i, win, TAG, &pi));
    CHECK_RC(NARMA_Start(&pc));
    CHECK_RC(NARMA_Start(&pi));
    CHECK_RC(NARMA_Wait(&pc, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Wait(&pi, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_flush(next, win));
    CHECK_RC(NARMA_Wait(&note, &st));
    CHECK_RC(NARMA_Request_free(&pc));
    CHECK_RC(NARMA_Request_free(&pi));
    CHECK_RC(NARMA_Request_free(&note));
    snprintf(what, sizeof what, "%s: Put_notify_init", p->name);
    check_regions(want, what);

    /* The target posts only after the barrier, so the put waits in narma, on a held dup of
     * the program's type (which the program frees at once). */
    snprintf(test_detail, sizeof test_detail, "Put deferred behind a late post");
    fill_window(NULL);
    NARMA_Request open;
    MPI_Datatype dc, di;
    CHECK_MPI(MPI_Type_dup(p->c, &dc));
    CHECK_MPI(MPI_Type_dup(p->i, &di));
    CHECK_RC(NARMA_Win_istart(next_group, 0, win, &open));
    CHECK_RC(NARMA_Put(src, k, dc, next, 0, k, dc, win));
    CHECK_RC(NARMA_Put(src, k, di, next, REGION, k, di, win));
    CHECK_MPI(MPI_Type_free(&dc));
    CHECK_MPI(MPI_Type_free(&di));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_post(prev_group, 0, win)); /* while the access epoch is open: no cycle */
    CHECK_RC(NARMA_Win_complete(win));
    CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_wait(win));
    snprintf(what, sizeof what, "%s: deferred Put", p->name);
    check_regions(want, what);
}

static void free_pair(struct pair *p)
{
    CHECK_MPI(MPI_Type_free(&p->c));
    CHECK_MPI(MPI_Type_free(&p->i));
}

/* Every constructor, small values: the _c type and the same type made with int arguments. */
static int make_pairs(struct pair *ps)
{
    int n = 0;
    MPI_Datatype tc, ti, uc, ui;

    CHECK_MPI(MPI_Type_contiguous_c(6, MPI_DOUBLE, &tc));
    CHECK_MPI(MPI_Type_contiguous(6, MPI_DOUBLE, &ti));
    ps[n++] = (struct pair){"contiguous_c", committed(tc), committed(ti), 2, 1};

    CHECK_MPI(MPI_Type_vector_c(3, 2, 4, MPI_DOUBLE, &tc));
    CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &ti));
    ps[n++] = (struct pair){"vector_c", committed(tc), committed(ti), 2, 1};

    CHECK_MPI(MPI_Type_create_hvector_c(3, 2, 40, MPI_DOUBLE, &tc));
    CHECK_MPI(MPI_Type_create_hvector(3, 2, 40, MPI_DOUBLE, &ti));
    ps[n++] = (struct pair){"hvector_c", committed(tc), committed(ti), 2, 1};

    {
        MPI_Count bl[3] = {1, 3, 2}, dp[3] = {0, 3, 9};
        int ibl[3] = {1, 3, 2}, idp[3] = {0, 3, 9};
        CHECK_MPI(MPI_Type_indexed_c(3, bl, dp, MPI_DOUBLE, &tc));
        CHECK_MPI(MPI_Type_indexed(3, ibl, idp, MPI_DOUBLE, &ti));
        ps[n++] = (struct pair){"indexed_c", committed(tc), committed(ti), 2, 1};
    }
    {
        MPI_Count bl[3] = {2, 1, 2}, dp[3] = {8, 40, 80};
        int ibl[3] = {2, 1, 2};
        MPI_Aint adp[3] = {8, 40, 80};
        CHECK_MPI(MPI_Type_create_hindexed_c(3, bl, dp, MPI_DOUBLE, &tc));
        CHECK_MPI(MPI_Type_create_hindexed(3, ibl, adp, MPI_DOUBLE, &ti));
        ps[n++] = (struct pair){"hindexed_c", committed(tc), committed(ti), 2, 1};
    }
    {
        MPI_Count dp[3] = {1, 5, 10};
        int idp[3] = {1, 5, 10};
        CHECK_MPI(MPI_Type_create_indexed_block_c(3, 2, dp, MPI_DOUBLE, &tc));
        CHECK_MPI(MPI_Type_create_indexed_block(3, 2, idp, MPI_DOUBLE, &ti));
        ps[n++] = (struct pair){"indexed_block_c", committed(tc), committed(ti), 2, 1};
    }
    {
        MPI_Count dp[3] = {0, 32, 96};
        MPI_Aint adp[3] = {0, 32, 96};
        CHECK_MPI(MPI_Type_create_hindexed_block_c(3, 2, dp, MPI_DOUBLE, &tc));
        CHECK_MPI(MPI_Type_create_hindexed_block(3, 2, adp, MPI_DOUBLE, &ti));
        ps[n++] = (struct pair){"hindexed_block_c", committed(tc), committed(ti), 2, 1};
    }
    {
        MPI_Count bl[2] = {2, 3}, dp[2] = {8, 40};
        int ibl[2] = {2, 3};
        MPI_Aint adp[2] = {8, 40};
        MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_DOUBLE};
        CHECK_MPI(MPI_Type_create_struct_c(2, bl, dp, ts, &tc));
        CHECK_MPI(MPI_Type_create_struct(2, ibl, adp, ts, &ti));
        ps[n++] = (struct pair){"struct_c", committed(tc), committed(ti), 3, 1};
    }
    {
        MPI_Count bl[3] = {1, 2, 1}, dp[3] = {0, 8, 24};
        int ibl[3] = {1, 2, 1};
        MPI_Aint adp[3] = {0, 8, 24};
        MPI_Datatype ts[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
        CHECK_MPI(MPI_Type_create_struct_c(3, bl, dp, ts, &tc));
        CHECK_MPI(MPI_Type_create_struct(3, ibl, adp, ts, &ti));
        ps[n++] = (struct pair){"struct_c of int and double", committed(tc), committed(ti), 2, 0};
    }
    {
        MPI_Count sz[2] = {5, 7}, sub[2] = {2, 3}, st[2] = {1, 2};
        int isz[2] = {5, 7}, isub[2] = {2, 3}, ist[2] = {1, 2};
        CHECK_MPI(MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &tc));
        CHECK_MPI(MPI_Type_create_subarray(2, isz, isub, ist, MPI_ORDER_C, MPI_DOUBLE, &ti));
        ps[n++] = (struct pair){"subarray_c, C order", committed(tc), committed(ti), 2, 1};
    }
    {
        MPI_Count sz[3] = {4, 3, 5}, sub[3] = {2, 2, 3}, st[3] = {1, 0, 2};
        int isz[3] = {4, 3, 5}, isub[3] = {2, 2, 3}, ist[3] = {1, 0, 2};
        CHECK_MPI(MPI_Type_create_subarray_c(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_DOUBLE, &tc));
        CHECK_MPI(MPI_Type_create_subarray(3, isz, isub, ist, MPI_ORDER_FORTRAN, MPI_DOUBLE, &ti));
        ps[n++] =
            (struct pair){"subarray_c, 3-d, Fortran order", committed(tc), committed(ti), 1, 1};
    }
    {
        MPI_Count gs[2] = {4, 6};
        int igs[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps2[2] = {2, 1};
        CHECK_MPI(
            MPI_Type_create_darray_c(2, 1, 2, gs, dist, darg, ps2, MPI_ORDER_C, MPI_DOUBLE, &tc));
        CHECK_MPI(
            MPI_Type_create_darray(2, 1, 2, igs, dist, darg, ps2, MPI_ORDER_C, MPI_DOUBLE, &ti));
        ps[n++] = (struct pair){"darray_c", committed(tc), committed(ti), 1, 1};
    }
    CHECK_MPI(MPI_Type_contiguous_c(3, MPI_DOUBLE, &uc));
    CHECK_MPI(MPI_Type_contiguous(3, MPI_DOUBLE, &ui));
    CHECK_MPI(MPI_Type_create_resized_c(uc, -8, 40, &tc));
    CHECK_MPI(MPI_Type_create_resized(ui, -8, 40, &ti));
    ps[n++] = (struct pair){"resized_c", committed(tc), committed(ti), 3, 1};
    CHECK_MPI(MPI_Type_free(&uc));
    CHECK_MPI(MPI_Type_free(&ui));

    CHECK_MPI(MPI_Type_vector_c(2, 3, 5, MPI_DOUBLE, &uc));
    CHECK_MPI(MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &ui));
    CHECK_MPI(MPI_Type_dup(uc, &tc));
    CHECK_MPI(MPI_Type_dup(ui, &ti));
    ps[n++] = (struct pair){"dup of a vector_c", committed(tc), committed(ti), 2, 1};
    CHECK_MPI(MPI_Type_free(&uc));
    CHECK_MPI(MPI_Type_free(&ui));

    { /* vector_c of a struct_c of an int-constructed indexed type, and the same with ints */
        int ibl[2] = {2, 1}, idp[2] = {0, 4};
        MPI_Datatype idx, sc, si;
        CHECK_MPI(MPI_Type_indexed(2, ibl, idp, MPI_DOUBLE, &idx)); /* extent 40 */
        MPI_Count bl[2] = {1, 2}, dp[2] = {0, 56};
        int sbl[2] = {1, 2};
        MPI_Aint sdp[2] = {0, 56};
        MPI_Datatype ts[2] = {idx, MPI_DOUBLE};
        CHECK_MPI(MPI_Type_create_struct_c(2, bl, dp, ts, &sc)); /* extent 72 */
        CHECK_MPI(MPI_Type_create_struct(2, sbl, sdp, ts, &si));
        CHECK_MPI(MPI_Type_vector_c(3, 1, 2, sc, &tc));
        CHECK_MPI(MPI_Type_vector(3, 1, 2, si, &ti));
        ps[n++] = (struct pair){"vector_c of struct_c of int indexed", committed(tc), committed(ti),
                                2, 1};
        CHECK_MPI(MPI_Type_free(&idx));
        CHECK_MPI(MPI_Type_free(&sc));
        CHECK_MPI(MPI_Type_free(&si));
    }
    { /* an int constructor over an indexed_c */
        MPI_Count bl[2] = {2, 1}, dp[2] = {1, 4};
        int ibl[2] = {2, 1}, idp[2] = {1, 4};
        CHECK_MPI(MPI_Type_indexed_c(2, bl, dp, MPI_DOUBLE, &uc));
        CHECK_MPI(MPI_Type_indexed(2, ibl, idp, MPI_DOUBLE, &ui));
        CHECK_MPI(MPI_Type_create_hvector(3, 1, 56, uc, &tc));
        CHECK_MPI(MPI_Type_create_hvector(3, 1, 56, ui, &ti));
        ps[n++] = (struct pair){"int hvector of indexed_c", committed(tc), committed(ti), 2, 1};
        CHECK_MPI(MPI_Type_free(&uc));
        CHECK_MPI(MPI_Type_free(&ui));
    }

    /* Values beyond an int describing a few doubles; one instance each. */
    const MPI_Count big = ((MPI_Count)1 << 32) + 64;
    CHECK_MPI(MPI_Type_contiguous_c(4, MPI_DOUBLE, &uc));
    CHECK_MPI(MPI_Type_contiguous(4, MPI_DOUBLE, &ui));
    CHECK_MPI(MPI_Type_create_resized_c(uc, 0, big, &tc));
    CHECK_MPI(MPI_Type_create_resized(ui, 0, (MPI_Aint)big, &ti));
    ps[n++] = (struct pair){"resized_c, extent 2^32 + 64", committed(tc), committed(ti), 1, 1};
    CHECK_MPI(MPI_Type_free(&uc));
    CHECK_MPI(MPI_Type_free(&ui));
    {
        /* rows of 2^32 doubles: row 0, columns 2-5 (bytes 16-48); the int form: those bytes,
         * resized to the array's 3 x 2^35 bytes */
        MPI_Count sz[2] = {3, (MPI_Count)1 << 32}, sub[2] = {1, 4}, st[2] = {0, 2};
        int four = 4;
        MPI_Aint at = 16;
        CHECK_MPI(MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &tc));
        CHECK_MPI(MPI_Type_create_hindexed(1, &four, &at, MPI_DOUBLE, &ui));
        CHECK_MPI(MPI_Type_create_resized(ui, 0, (MPI_Aint)3 << 35, &ti));
        ps[n++] =
            (struct pair){"subarray_c of 3 x 2^32 doubles", committed(tc), committed(ti), 1, 1};
        CHECK_MPI(MPI_Type_free(&ui));
    }
    CHECK_MPI(MPI_Type_vector_c(1, 4, (MPI_Count)1 << 33, MPI_DOUBLE, &tc));
    CHECK_MPI(MPI_Type_contiguous(4, MPI_DOUBLE, &ti));
    ps[n++] = (struct pair){"vector_c, stride 2^33 elements", committed(tc), committed(ti), 1, 1};
    return n;
}

/* The origin's type reaches 2^31 + 7 doubles and more past its base address; the base lies
 * that far before the buffer. */
static void far_origin(void)
{
    test_phase("indexed_c with displacements beyond INT_MAX elements, origin side");
    const MPI_Count D = ((MPI_Count)1 << 31) + 7;
    static double src[8], got_c[8], got_i[8];
    MPI_Datatype fc, fi;
    MPI_Count bl[2] = {3, 2}, dp[2] = {D, D + 5};
    int ibl[2] = {3, 2};
    MPI_Aint adp[2] = {(MPI_Aint)D * 8, (MPI_Aint)(D + 5) * 8};
    CHECK_MPI(MPI_Type_indexed_c(2, bl, dp, MPI_DOUBLE, &fc));
    CHECK_MPI(MPI_Type_create_hindexed(2, ibl, adp, MPI_DOUBLE, &fi));
    fc = committed(fc);
    fi = committed(fi);
    if ((uintptr_t)src < (uintptr_t)D * 8 || (uintptr_t)got_c < (uintptr_t)D * 8 ||
        (uintptr_t)got_i < (uintptr_t)D * 8) {
        if (rank == 0) printf("(buffers below 16 GiB: the far-origin phase is not run)\n");
        return;
    }
    void *base_src = (void *)((uintptr_t)src - (uintptr_t)D * 8);
    void *base_c = (void *)((uintptr_t)got_c - (uintptr_t)D * 8);
    void *base_i = (void *)((uintptr_t)got_i - (uintptr_t)D * 8);
    static const int at[5] = {0, 1, 2, 5, 6}; /* the doubles of the buffer the types select */
    for (int j = 0; j < 8; j++)
        src[j] = src_value(rank, j);

    fill_window(NULL);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(base_src, 1, fc, next, 0, 5, MPI_DOUBLE, win));
    CHECK_RC(NARMA_Put(base_src, 1, fi, next, REGION, 5, MPI_DOUBLE, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    double want[NDBL];
    fill(want, NULL, 0);
    for (int j = 0; j < 5; j++)
        want[j] = src_value(prev, at[j]);
    check_regions(want, "far origin: Put");

    fill_window(win_value);
    for (int j = 0; j < 8; j++)
        got_c[j] = got_i[j] = SENTINEL;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Get(base_c, 1, fc, next, 0, 5, MPI_DOUBLE, win));
    CHECK_RC(NARMA_Get(base_i, 1, fi, next, REGION, 5, MPI_DOUBLE, win));
    CHECK_RC(NARMA_Accumulate(base_src, 1, fc, next, 8, 5, MPI_DOUBLE, NARMA_SUM, win));
    CHECK_RC(NARMA_Accumulate(base_src, 1, fi, next, REGION + 8, 5, MPI_DOUBLE, NARMA_SUM, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int j = 0, s = 0; j < 8; j++) {
        double w = (s < 5 && at[s] == j) ? win_value(next, s++) : SENTINEL;
        CHECK(got_c[j] == w && got_i[j] == w,
              "far origin: Get, double %d: %g (_c) %g (int), "
              "expected %g",
              j, got_c[j], got_i[j], w);
    }
    for (int j = 0; j < NDBL; j++)
        want[j] = win_value(rank, j) + (j >= 1 && j < 6 ? src_value(prev, at[j - 1]) : 0);
    check_regions(want, "far origin: Accumulate");

    NARMA_Request note;
    MPI_Status st;
    fill_window(NULL);
    CHECK_RC(NARMA_Notify_init(win, prev, TAG, 2, &note));
    CHECK_RC(NARMA_Start(&note));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Put_notify(base_src, 1, fc, next, 0, 5, MPI_DOUBLE, win, TAG));
    CHECK_RC(NARMA_Put_notify(base_src, 1, fi, next, REGION, 5, MPI_DOUBLE, win, TAG));
    CHECK_RC(NARMA_Win_flush(next, win));
    CHECK_RC(NARMA_Wait(&note, &st));
    CHECK(test_byte_count(&st) == 40, "far origin: notified %d bytes", test_byte_count(&st));
    CHECK_RC(NARMA_Request_free(&note));
    fill(want, NULL, 0);
    for (int j = 0; j < 5; j++)
        want[j] = src_value(prev, at[j]);
    check_regions(want, "far origin: Put_notify");
    CHECK_MPI(MPI_Type_free(&fc));
    CHECK_MPI(MPI_Type_free(&fi));
}

/* Types narma must refuse, with nothing moved. */
static void refused(const struct pair *resized_big)
{
    test_phase("refused: beyond the window, beyond MPI_Aint");
    static double src[NDBL];
    double want[NDBL];
    fill(src, src_value, rank);
    fill_window(NULL);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    /* two instances of an extent of 2^32 + 64 bytes: the second lies 4 GiB past the window */
    CHECK_ERR(NARMA_Put(src, 8, MPI_DOUBLE, next, 0, 2, resized_big->c, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Put(src, 8, MPI_DOUBLE, next, 0, 2, resized_big->i, win), NARMA_ERR_DISP);
    CHECK_ERR(NARMA_Get(src, 8, MPI_DOUBLE, next, 0, 2, resized_big->c, win), NARMA_ERR_DISP);
    /* blocks at 0, 2^62 and 2^63 bytes: MPI wraps the extent; narma refuses the type */
    MPI_Datatype wrap;
    CHECK_MPI(MPI_Type_create_hvector_c(3, 1, (MPI_Count)1 << 62, MPI_DOUBLE, &wrap));
    wrap = committed(wrap);
    CHECK_ERR(NARMA_Put(src, 3, MPI_DOUBLE, next, 0, 1, wrap, win), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Put(src, 1, wrap, next, 0, 3, MPI_DOUBLE, win), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Accumulate(src, 1, wrap, next, 0, 1, wrap, NARMA_SUM, win), NARMA_ERR_TYPE);
    CHECK_ERR(NARMA_Put_notify(src, 1, wrap, next, 0, 3, MPI_DOUBLE, win, TAG), NARMA_ERR_TYPE);
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    fill(want, NULL, 0);
    check_regions(want, "refused calls");
    CHECK_MPI(MPI_Type_free(&wrap));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_dtype_c", 100);
    rank = test_rank;
    size = test_size;
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &next, &next_group);
    MPI_Group_incl(world, 1, &prev, &prev_group);
    MPI_Group_free(&world);
    CHECK_RC(NARMA_Win_allocate(2 * REGION, 1, MPI_INFO_NULL, MPI_COMM_WORLD, (void *)&mem, &win));

    struct pair ps[32];
    const int n = make_pairs(ps);
    for (int i = 0; i < n; i++)
        run_pair(&ps[i]);
    far_origin();
    for (int i = 0; i < n; i++)
        if (strcmp(ps[i].name, "resized_c, extent 2^32 + 64") == 0) refused(&ps[i]);
    for (int i = 0; i < n; i++)
        free_pair(&ps[i]);

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    MPI_Group_free(&next_group);
    MPI_Group_free(&prev_group);
    return test_finish();
}

#endif /* MPI_VERSION < 4 */
