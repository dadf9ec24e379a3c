/*
 * narma's descriptions of datatypes whose counts, strides, displacements or extents go
 * beyond an int, checked without memory (the blocks of one instance, as offsets):
 *   - on every MPI, types made with the int constructors from MPI_Aint arguments beyond an
 *     int (hvector strides, hindexed and struct displacements, resized extents);
 *   - on MPI-4 libraries, every large-count constructor (MPI_Type_vector_c, ...): the int
 *     constructors' types report no large count through MPI_Type_get_envelope_c, the _c
 *     types get the description of the same type made with ints, and values no int holds
 *     (2^33-element strides, 2^35-element displacements, a subarray of 2^32 columns) give the
 *     blocks of the standard's type map;
 *   - abutting pieces make one block however many there are (2^33 bytes of a vector_c, a
 *     2^40-byte subarray_c), with no walk over them;
 *   - a type whose blocks lie beyond MPI_Aint is refused with NARMA_ERR_TYPE (MPI wraps its
 *     extent, narma does not), and a type whose pieces keep merging (overlapping instances)
 *     ends its walk with no block list, within the watchdog.
 */
#include "util/dtype.h"
#include "unit.h"

#include <limits.h>
#include <narma/narma.h>

struct blk {
    MPI_Aint off, len;
};

#define TB ((MPI_Aint)1 << 40)

static MPI_Datatype commit(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

/* narma describes one instance of t as exactly the n blocks of want, of MPI's size. */
static void expect_blocks(const char *what, MPI_Datatype t, const struct blk *want, int n)
{
    const narmau_dtype *d;
    int rc = narmau_dtype_get(t, &d);
    if (!CHECK(rc == 0, "%s: lookup returned %d", what, rc)) return;
    MPI_Count size;
    MPI_Type_size_x(t, &size);
    CHECK(d->size == size, "%s: size %ld, MPI says %lld", what, (long)d->size, (long long)size);
    if (!CHECK(d->nblocks == n, "%s: %d blocks, expected %d", what, d->nblocks, n)) return;
    for (int i = 0; i < n; i++)
        CHECK(d->blocks[i].off == want[i].off && d->blocks[i].len == want[i].len,
              "%s: block %d is [%ld, +%ld), expected [%ld, +%ld)", what, i, (long)d->blocks[i].off,
              (long)d->blocks[i].len, (long)want[i].off, (long)want[i].len);
}

/* narma describes tc exactly as ti. */
static void expect_same(const char *what, MPI_Datatype tc, MPI_Datatype ti)
{
    const narmau_dtype *c, *i;
    int rc = narmau_dtype_get(tc, &c), ri = narmau_dtype_get(ti, &i);
    if (!CHECK(rc == 0 && ri == 0, "%s: lookups returned %d and %d", what, rc, ri)) return;
    CHECK(c->size == i->size && c->extent == i->extent && c->lb == i->lb &&
              c->true_lb == i->true_lb && c->true_extent == i->true_extent &&
              c->basic == i->basic && c->contiguous == i->contiguous && c->nblocks == i->nblocks,
          "%s: size %ld/%ld extent %ld/%ld nblocks %d/%d contiguous %d/%d", what, (long)c->size,
          (long)i->size, (long)c->extent, (long)i->extent, c->nblocks, i->nblocks, c->contiguous,
          i->contiguous);
    for (int b = 0; b < c->nblocks && b < i->nblocks; b++)
        if (!CHECK(c->blocks[b].off == i->blocks[b].off && c->blocks[b].len == i->blocks[b].len,
                   "%s: block %d: [%ld, +%ld) against [%ld, +%ld)", what, b, (long)c->blocks[b].off,
                   (long)c->blocks[b].len, (long)i->blocks[b].off, (long)i->blocks[b].len))
            break;
    MPI_Type_free(&tc);
    MPI_Type_free(&ti);
}

static void expect_refused(const char *what, MPI_Datatype t)
{
    const narmau_dtype *d;
    int rc = narmau_dtype_get(t, &d);
    CHECK(rc == NARMA_ERR_TYPE, "%s: lookup returned %d, expected NARMA_ERR_TYPE", what, rc);
}

static void int_constructors(void)
{
    unit_phase("int constructors, MPI_Aint arguments beyond an int");
    MPI_Datatype t;
    MPI_Type_create_hvector(3, 2, TB, MPI_DOUBLE, &t);
    t = commit(t);
    expect_blocks("hvector, stride 2^40", t, (struct blk[]){{0, 16}, {TB, 16}, {2 * TB, 16}}, 3);
    MPI_Type_free(&t);
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {32 * TB, 0};
    MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, dp, ts, &t);
    t = commit(t);
    expect_blocks("struct, displacement 2^45", t, (struct blk[]){{32 * TB, 4}, {0, 8}}, 2);
    MPI_Type_free(&t);
    MPI_Type_vector(INT_MAX, 1, 1, MPI_BYTE, &t); /* INT_MAX abutting blocks: one, at once */
    t = commit(t);
    expect_blocks("vector of INT_MAX abutting bytes", t, (struct blk[]){{0, INT_MAX}}, 1);
    MPI_Type_free(&t);

    unit_phase("int constructors: blocks beyond MPI_Aint are refused, not wrapped");
    MPI_Type_create_hvector(3, 1, (MPI_Aint)1 << 62, MPI_DOUBLE, &t); /* block 2 at 2^63 */
    t = commit(t);
    expect_refused("hvector, stride 2^62", t);
    MPI_Type_free(&t);
    MPI_Type_vector(2, 1, 1 << 30, MPI_DOUBLE, &t); /* 2^33 bytes: fine */
    MPI_Datatype v;
    MPI_Type_create_hvector(2, 1, (MPI_Aint)1 << 62, t, &v); /* 2^62 + 2^33 + 8: fine */
    v = commit(v);
    expect_blocks("hvector of vector near 2^62", v,
                  (struct blk[]){{0, 8},
                                 {(MPI_Aint)1 << 33, 8},
                                 {(MPI_Aint)1 << 62, 8},
                                 {((MPI_Aint)1 << 62) + ((MPI_Aint)1 << 33), 8}},
                  4);
    MPI_Type_free(&v);
    MPI_Type_free(&t);
}

#if MPI_VERSION >= 4

static void large_constructors(void)
{
    unit_phase("the int types report no large count; the _c types report theirs");
    {
        MPI_Datatype ti, tc;
        MPI_Count ni, na, nc, nd;
        int comb;
        MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &ti);
        MPI_Type_vector_c(3, 2, 4, MPI_DOUBLE, &tc);
        MPI_Type_get_envelope_c(ti, &ni, &na, &nc, &nd, &comb);
        CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nc == 0 && nd == 1,
              "int vector: ni %lld na %lld nc %lld nd %lld", (long long)ni, (long long)na,
              (long long)nc, (long long)nd);
        MPI_Type_get_envelope_c(tc, &ni, &na, &nc, &nd, &comb);
        CHECK(comb == MPI_COMBINER_VECTOR && ni == 0 && na == 0 && nc == 3 && nd == 1,
              "vector_c: ni %lld na %lld nc %lld nd %lld", (long long)ni, (long long)na,
              (long long)nc, (long long)nd);
        MPI_Type_free(&ti);
        MPI_Type_free(&tc);
    }

    unit_phase("every _c constructor, small values: the int type's description");
    MPI_Datatype tc, ti, uc, ui;
    MPI_Type_contiguous_c(5, MPI_INT, &tc);
    MPI_Type_contiguous(5, MPI_INT, &ti);
    expect_same("contiguous_c", commit(tc), commit(ti));
    MPI_Type_vector_c(4, 2, -3, MPI_SHORT, &tc); /* a negative stride */
    MPI_Type_vector(4, 2, -3, MPI_SHORT, &ti);
    expect_same("vector_c, negative stride", commit(tc), commit(ti));
    MPI_Type_create_hvector_c(3, 1, 12, MPI_DOUBLE_INT, &tc); /* a pair type with a hole */
    MPI_Type_create_hvector(3, 1, 12, MPI_DOUBLE_INT, &ti);
    expect_same("hvector_c of MPI_DOUBLE_INT", commit(tc), commit(ti));
    {
        MPI_Count bl[4] = {2, 0, 1, 3}, dp[4] = {5, 1, 0, 9};
        int ibl[4] = {2, 0, 1, 3}, idp[4] = {5, 1, 0, 9};
        MPI_Aint adp[4] = {40, 8, 0, 72};
        MPI_Count cdp[4] = {40, 8, 0, 72};
        MPI_Type_indexed_c(4, bl, dp, MPI_DOUBLE, &tc);
        MPI_Type_indexed(4, ibl, idp, MPI_DOUBLE, &ti);
        expect_same("indexed_c, a zero-length block, out of order", commit(tc), commit(ti));
        MPI_Type_create_hindexed_c(4, bl, cdp, MPI_DOUBLE, &tc);
        MPI_Type_create_hindexed(4, ibl, adp, MPI_DOUBLE, &ti);
        expect_same("hindexed_c", commit(tc), commit(ti));
        MPI_Type_create_indexed_block_c(4, 2, dp, MPI_INT, &tc);
        MPI_Type_create_indexed_block(4, 2, idp, MPI_INT, &ti);
        expect_same("indexed_block_c", commit(tc), commit(ti));
        MPI_Type_create_hindexed_block_c(4, 2, cdp, MPI_INT, &tc);
        MPI_Type_create_hindexed_block(4, 2, adp, MPI_INT, &ti);
        expect_same("hindexed_block_c", commit(tc), commit(ti));
        MPI_Datatype ts[4] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_SHORT};
        MPI_Type_create_struct_c(4, bl, cdp, ts, &tc);
        MPI_Type_create_struct(4, ibl, adp, ts, &ti);
        expect_same("struct_c", commit(tc), commit(ti));
    }
    {
        MPI_Count sz[3] = {4, 5, 6}, sub[3] = {2, 5, 3}, st[3] = {1, 0, 2};
        int isz[3] = {4, 5, 6}, isub[3] = {2, 5, 3}, ist[3] = {1, 0, 2};
        MPI_Type_create_subarray_c(3, sz, sub, st, MPI_ORDER_C, MPI_INT, &tc);
        MPI_Type_create_subarray(3, isz, isub, ist, MPI_ORDER_C, MPI_INT, &ti);
        expect_same("subarray_c, C order", commit(tc), commit(ti));
        MPI_Type_create_subarray_c(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &tc);
        MPI_Type_create_subarray(3, isz, isub, ist, MPI_ORDER_FORTRAN, MPI_INT, &ti);
        expect_same("subarray_c, Fortran order", commit(tc), commit(ti));
        /* full dimensions below a partial one: one run per row of the partial one */
        MPI_Count fsz[3] = {3, 4, 5}, fsub[3] = {2, 4, 5}, fst[3] = {1, 0, 0};
        int ifsz[3] = {3, 4, 5}, ifsub[3] = {2, 4, 5}, ifst[3] = {1, 0, 0};
        MPI_Type_create_subarray_c(3, fsz, fsub, fst, MPI_ORDER_C, MPI_INT, &tc);
        MPI_Type_create_subarray(3, ifsz, ifsub, ifst, MPI_ORDER_C, MPI_INT, &ti);
        tc = commit(tc);
        expect_blocks("subarray_c, full fast dimensions", tc, (struct blk[]){{80, 160}}, 1);
        expect_same("subarray_c, full fast dimensions", tc, commit(ti));
    }
    {
        MPI_Count gs[2] = {6, 5};
        int igs[2] = {6, 5}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
            darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, psz[2] = {2, 2};
        MPI_Type_create_darray_c(4, 3, 2, gs, dist, darg, psz, MPI_ORDER_C, MPI_INT, &tc);
        MPI_Type_create_darray(4, 3, 2, igs, dist, darg, psz, MPI_ORDER_C, MPI_INT, &ti);
        expect_same("darray_c", commit(tc), commit(ti));
    }
    MPI_Type_vector_c(2, 1, 3, MPI_INT, &uc);
    MPI_Type_vector(2, 1, 3, MPI_INT, &ui);
    MPI_Type_create_resized_c(uc, -4, 32, &tc);
    MPI_Type_create_resized(ui, -4, 32, &ti);
    expect_same("resized_c", commit(tc), commit(ti));
    MPI_Type_dup(uc, &tc);
    MPI_Type_dup(ui, &ti);
    expect_same("dup of a vector_c", commit(tc), commit(ti));
    MPI_Type_free(&uc);
    MPI_Type_free(&ui);

    unit_phase("_c values no int holds: the standard's type map, without memory");
    MPI_Datatype t;
    MPI_Type_vector_c(2, 1, (MPI_Count)1 << 33, MPI_DOUBLE, &t);
    t = commit(t);
    expect_blocks("vector_c, stride 2^33 elements", t,
                  (struct blk[]){{0, 8}, {(MPI_Aint)1 << 36, 8}}, 2);
    MPI_Type_free(&t);
    MPI_Type_create_hvector_c(3, 2, TB, MPI_DOUBLE, &t);
    t = commit(t);
    expect_blocks("hvector_c, stride 2^40 bytes", t,
                  (struct blk[]){{0, 16}, {TB, 16}, {2 * TB, 16}}, 3);
    MPI_Type_free(&t);
    {
        MPI_Count bl[2] = {1, 2}, dp[2] = {0, (MPI_Count)1 << 35};
        MPI_Type_indexed_c(2, bl, dp, MPI_DOUBLE, &t);
        t = commit(t);
        expect_blocks("indexed_c, displacement 2^35 elements", t,
                      (struct blk[]){{0, 8}, {(MPI_Aint)1 << 38, 16}}, 2);
        MPI_Type_free(&t);
        MPI_Count hbl[2] = {1, 1}, hdp[2] = {TB, 0};
        MPI_Type_create_hindexed_c(2, hbl, hdp, MPI_DOUBLE, &t);
        t = commit(t);
        expect_blocks("hindexed_c, displacement 2^40 first", t, (struct blk[]){{TB, 8}, {0, 8}}, 2);
        MPI_Type_free(&t);
        MPI_Count bdp[2] = {(MPI_Count)1 << 32, 0};
        MPI_Type_create_indexed_block_c(2, 3, bdp, MPI_INT, &t);
        t = commit(t);
        expect_blocks("indexed_block_c, displacement 2^32 elements", t,
                      (struct blk[]){{(MPI_Aint)1 << 34, 12}, {0, 12}}, 2);
        MPI_Type_free(&t);
        MPI_Count ndp[2] = {-TB, TB};
        MPI_Type_create_hindexed_block_c(2, 1, ndp, MPI_DOUBLE, &t);
        t = commit(t);
        expect_blocks("hindexed_block_c, displacements -2^40 and 2^40", t,
                      (struct blk[]){{-TB, 8}, {TB, 8}}, 2);
        MPI_Type_free(&t);
        MPI_Count sdp[2] = {0, 32 * TB};
        MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct_c(2, hbl, sdp, ts, &t);
        t = commit(t);
        expect_blocks("struct_c, displacement 2^45", t, (struct blk[]){{0, 4}, {32 * TB, 8}}, 2);
        const narmau_dtype *d;
        if (narmau_dtype_get(t, &d) == 0)
            CHECK(d->basic == MPI_DATATYPE_NULL, "struct_c of int and double: a basic type");
        MPI_Type_free(&t);
    }
    {
        MPI_Count sz[2] = {3, (MPI_Count)1 << 32}, sub[2] = {1, 4}, st[2] = {0, 2};
        MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
        t = commit(t);
        expect_blocks("subarray_c of 3 x 2^32 doubles", t, (struct blk[]){{16, 32}}, 1);
        const narmau_dtype *d;
        if (narmau_dtype_get(t, &d) == 0)
            CHECK(d->extent == (MPI_Aint)3 << 35 && !d->contiguous, "extent %ld", (long)d->extent);
        MPI_Type_free(&t);
    }
    MPI_Type_create_resized_c(MPI_DOUBLE, 0, TB, &t);
    t = commit(t);
    expect_blocks("resized_c, extent 2^40", t, (struct blk[]){{0, 8}}, 1);
    MPI_Type_free(&t);

    unit_phase("abutting pieces make one block, however many");
    const MPI_Aint G8 = (MPI_Aint)1 << 33;
    MPI_Type_contiguous_c(G8 + 3, MPI_BYTE, &t);
    t = commit(t);
    expect_blocks("contiguous_c of 2^33 + 3 bytes", t, (struct blk[]){{0, G8 + 3}}, 1);
    MPI_Type_free(&t);
    MPI_Type_vector_c(G8, 2, 2, MPI_BYTE, &t);
    t = commit(t);
    expect_blocks("vector_c of 2^33 abutting blocks", t, (struct blk[]){{0, 2 * G8}}, 1);
    MPI_Type_free(&t);
    {
        /* Fortran order: dimensions 0 and 1 full (2^20 bytes each), dimension 2 from 1 to 3 */
        MPI_Count sz[3] = {1 << 20, 1 << 20, 4}, sub[3] = {1 << 20, 1 << 20, 2}, st[3] = {0, 0, 1};
        MPI_Type_create_subarray_c(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_BYTE, &t);
        t = commit(t);
        expect_blocks("subarray_c, 2^40-byte planes", t, (struct blk[]){{TB, 2 * TB}}, 1);
        MPI_Type_free(&t);
    }

    unit_phase("_c types whose blocks lie beyond MPI_Aint are refused");
    MPI_Type_create_hvector_c(3, 1, (MPI_Count)1 << 62, MPI_DOUBLE, &t); /* block 2 at 2^63 */
    t = commit(t);
    expect_refused("hvector_c, stride 2^62 bytes", t);
    MPI_Type_free(&t);
    MPI_Type_vector_c(3, 1, (MPI_Count)1 << 61, MPI_DOUBLE, &t); /* stride 2^64 bytes */
    t = commit(t);
    expect_refused("vector_c, stride 2^61 doubles", t);
    MPI_Type_free(&t);
    {
        MPI_Count bl[1] = {1}, dp[1] = {(MPI_Count)1 << 61};
        MPI_Type_indexed_c(1, bl, dp, MPI_DOUBLE, &t); /* at 2^64 bytes */
        t = commit(t);
        expect_refused("indexed_c, displacement 2^61 doubles", t);
        MPI_Type_free(&t);
    }
    for (int at = 0; at < 2; at++) {
        /* 2^62 doubles: the array spans 2^65 bytes; its element (2^30, 0) lies at 2^64 */
        MPI_Count sz[2] = {(MPI_Count)1 << 31, (MPI_Count)1 << 31}, sub[2] = {1, 1},
                  st[2] = {at ? (MPI_Count)1 << 30 : 0, 0};
        if (MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t) ==
            MPI_SUCCESS) {
            t = commit(t);
            expect_refused(
                at ? "subarray_c, element at 2^64 bytes" : "subarray_c, array of 2^65 bytes", t);
            MPI_Type_free(&t);
        } else {
            printf("(MPI refuses a subarray of 2^31 x 2^31 doubles itself)\n");
        }
    }

    unit_phase("pieces that keep merging: the walk ends without a block list");
    {
        /* 8 bytes every 4 (overlapping instances), one per row of a 2^29 x 2 subarray: each
         * row's block touches the last one, 2^29 times */
        MPI_Datatype over;
        MPI_Type_create_resized(MPI_DOUBLE, 0, 4, &over);
        MPI_Count sz[2] = {(MPI_Count)1 << 29, 2}, sub[2] = {(MPI_Count)1 << 29, 1}, st[2] = {0, 0};
        MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, over, &t);
        t = commit(t);
        const narmau_dtype *d;
        int rc = narmau_dtype_get(t, &d);
        CHECK(rc == 0 && d->nblocks == -1, "rc %d nblocks %d", rc, rc == 0 ? d->nblocks : 0);
        MPI_Type_free(&t);
        MPI_Type_free(&over);
    }
}

#endif /* MPI_VERSION >= 4 */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unit_begin(120);
    int_constructors();
#if MPI_VERSION >= 4
    large_constructors();
#else
    printf("an MPI-3 library: no large-count constructors to check\n");
#endif
    narmau_dtype_cache_clear();
    MPI_Finalize();
    return unit_done("test_dtype_c");
}
