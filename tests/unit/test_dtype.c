/*
 * narmau_dtype: flattening, cached descriptions, copies and spans.
 *
 * MPI is the reference: for every type, narmau_dtype_copy must move the same
 * bytes as MPI_Pack (gather) and MPI_Unpack (scatter, leaving holes alone),
 * and the span must be exactly the bytes MPI_Unpack touches.
 */
#include "util/dtype.h"

#include <narma/narma.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *fmt, ...)
{
    if (ok) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

static void fill_random(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(rand() & 0xff);
}

#define MARGIN 64

/* A buffer holding count instances of a type: base is the buffer address
 * to pass to MPI, the allocation covers the true span plus margins. */
typedef struct {
    unsigned char *mem;
    size_t len;
    unsigned char *base;
} tbuf;

static void tbuf_make(tbuf *b, MPI_Datatype t, int count)
{
    MPI_Aint tlb, text, lb, ext;
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Aint last = (MPI_Aint)(count > 0 ? count - 1 : 0) * ext;
    MPI_Aint lo = tlb + (last < 0 ? last : 0);
    MPI_Aint hi = tlb + text + (last > 0 ? last : 0);
    b->len = (size_t)(hi - lo) + 2 * MARGIN;
    b->mem = malloc(b->len);
    b->base = b->mem + MARGIN - lo;
}

/* Everything about one type, checked against MPI. */
static void check_type(const char *name, MPI_Datatype t, int count)
{
    const narmau_dtype *d;
    int f0 = failures;
    int rc = narmau_dtype_get(t, &d);
    check(rc == 0, "%s: narmau_dtype_get returned %d", name, rc);
    if (rc) return;

    int size;
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    check(d->size == size && d->lb == lb && d->extent == ext && d->true_lb == tlb &&
              d->true_extent == text,
          "%s: size/extent differ from MPI", name);
    MPI_Aint dsum = 0;
    for (int i = 0; i < d->nblocks; i++)
        dsum += d->blocks[i].len;
    check(d->nblocks < 0 || dsum == size, "%s: blocks hold %ld bytes, size %d", name, (long)dsum,
          size);
    for (int i = 1; i < d->nblocks; i++)
        check(d->blocks[i - 1].off + d->blocks[i - 1].len != d->blocks[i].off,
              "%s: blocks %d and %d not merged", name, i - 1, i);

    MPI_Aint total = (MPI_Aint)size * count;
    tbuf src, ref, mine;
    tbuf_make(&src, t, count);
    tbuf_make(&ref, t, count);
    tbuf_make(&mine, t, count);
    unsigned char *packed = malloc((size_t)total + 1);
    unsigned char *flat = malloc((size_t)total + 1);
    fill_random(src.mem, src.len);

    /* gather: derived -> bytes */
    int pos = 0;
    MPI_Pack(src.base, count, t, packed, (int)total + 1, &pos, MPI_COMM_SELF);
    check(pos == total, "%s: MPI_Pack produced %d bytes, expected %ld", name, pos, (long)total);
    memset(flat, 0, (size_t)total + 1);
    rc = narmau_dtype_copy(flat, (int)total, MPI_BYTE, src.base, count, t);
    check(rc == 0 && memcmp(flat, packed, (size_t)total) == 0, "%s: gather differs from MPI_Pack",
          name);

    /* scatter: bytes -> derived; the holes must keep their contents */
    fill_random(ref.mem, ref.len);
    memcpy(mine.mem, ref.mem, ref.len);
    pos = 0;
    MPI_Unpack(packed, (int)total, &pos, ref.base, count, t, MPI_COMM_SELF);
    rc = narmau_dtype_copy(mine.base, count, t, packed, (int)total, MPI_BYTE);
    check(rc == 0 && memcmp(mine.mem, ref.mem, ref.len) == 0, "%s: scatter differs from MPI_Unpack",
          name);

    /* derived -> derived (same type): same as scatter of the gathered data */
    fill_random(ref.mem, ref.len); /* unrelated old contents in both */
    memcpy(mine.mem, ref.mem, ref.len);
    pos = 0;
    MPI_Unpack(packed, (int)total, &pos, ref.base, count, t, MPI_COMM_SELF);
    rc = narmau_dtype_copy(mine.base, count, t, src.base, count, t);
    check(rc == 0 && memcmp(mine.mem, ref.mem, ref.len) == 0, "%s: derived->derived differs", name);

    /* span: exactly the bytes MPI_Unpack writes */
    memset(ref.mem, 0, ref.len);
    memset(packed, 0xff, (size_t)total);
    pos = 0;
    MPI_Unpack(packed, (int)total, &pos, ref.base, count, t, MPI_COMM_SELF);
    MPI_Aint first = -1, last = -1;
    for (size_t i = 0; i < ref.len; i++) {
        if (ref.mem[i]) {
            if (first < 0) first = (MPI_Aint)i;
            last = (MPI_Aint)i;
        }
    }
    MPI_Aint lo, hi;
    narmau_dtype_span(d, count, &lo, &hi);
    if (total == 0)
        check(lo == 0 && hi == 0, "%s: empty span [%ld,%ld)", name, (long)lo, (long)hi);
    else
        check(lo == first - (ref.base - ref.mem) && hi == last + 1 - (ref.base - ref.mem),
              "%s: span [%ld,%ld), MPI touched [%ld,%ld)", name, (long)lo, (long)hi,
              (long)(first - (ref.base - ref.mem)), (long)(last + 1 - (ref.base - ref.mem)));

    printf("  %s %-38s count %-2d size %-7d nblocks %-6d contiguous %d basic %s\n",
           failures == f0 ? "ok  " : "FAIL", name, count, size, d->nblocks, d->contiguous,
           d->basic == MPI_DATATYPE_NULL ? "mixed" : "single");
    free(src.mem);
    free(ref.mem);
    free(mine.mem);
    free(packed);
    free(flat);
}

/* Copies between two different types of the same signature length. */
static void check_cross(const char *name, MPI_Datatype dt, int dcount, MPI_Datatype st, int scount)
{
    int ssize, dsize;
    MPI_Type_size(st, &ssize);
    MPI_Type_size(dt, &dsize);
    MPI_Aint total = (MPI_Aint)ssize * scount;
    int f0 = failures;
    tbuf src, ref, mine;
    tbuf_make(&src, st, scount);
    tbuf_make(&ref, dt, dcount);
    tbuf_make(&mine, dt, dcount);
    unsigned char *packed = malloc((size_t)total);
    fill_random(src.mem, src.len);
    fill_random(ref.mem, ref.len);
    memcpy(mine.mem, ref.mem, ref.len);
    int pos = 0;
    MPI_Pack(src.base, scount, st, packed, (int)total, &pos, MPI_COMM_SELF);
    pos = 0;
    MPI_Unpack(packed, (int)total, &pos, ref.base, dcount, dt, MPI_COMM_SELF);
    int rc = narmau_dtype_copy(mine.base, dcount, dt, src.base, scount, st);
    check(rc == 0 && memcmp(mine.mem, ref.mem, ref.len) == 0, "%s: cross copy differs", name);
    printf("  %s %s\n", failures == f0 ? "ok  " : "FAIL", name);
    free(src.mem);
    free(ref.mem);
    free(mine.mem);
    free(packed);
}

static MPI_Datatype commit(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    srand(12345);
    MPI_Datatype all[64];
    int n = 0;

    printf("predefined types, including pairs with padding\n");
    check_type("MPI_INT", MPI_INT, 7);
    check_type("MPI_DOUBLE", MPI_DOUBLE, 3);
    check_type("MPI_BYTE", MPI_BYTE, 100);
    check_type("MPI_2INT", MPI_2INT, 5);
    check_type("MPI_DOUBLE_INT", MPI_DOUBLE_INT, 5);
    check_type("MPI_FLOAT_INT", MPI_FLOAT_INT, 5);
    check_type("MPI_LONG_INT", MPI_LONG_INT, 5);
    check_type("MPI_SHORT_INT", MPI_SHORT_INT, 5);
    check_type("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, 3);
    check_type("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, 3);
    {
        const narmau_dtype *d;
        narmau_dtype_get(MPI_INT, &d);
        check(d->contiguous && d->nblocks == 1 && d->basic == MPI_INT && d->basic_size == 4,
              "MPI_INT description");
        narmau_dtype_get(MPI_SHORT_INT, &d);
        check(!d->contiguous && d->nblocks == 2 && d->blocks[0].off == 0 && d->blocks[0].len == 2 &&
                  d->blocks[1].len == 4 && d->basic == MPI_SHORT_INT && d->basic_size == 6,
              "MPI_SHORT_INT: two blocks around its padding");
        narmau_dtype_get(MPI_DOUBLE_INT, &d);
        check(!d->contiguous && d->nblocks == 1 && d->blocks[0].len == 12 && d->extent == 16,
              "MPI_DOUBLE_INT: one 12-byte block, extent 16");
    }

    printf("derived types\n");
    MPI_Datatype t, u, v;
    MPI_Type_contiguous(10, MPI_INT, &t);
    check_type("contiguous(10,int)", all[n++] = commit(t), 3);
    {
        const narmau_dtype *d;
        narmau_dtype_get(t, &d);
        check(d->contiguous && d->nblocks == 1 && d->basic == MPI_INT, "contiguous is one block");
    }
    MPI_Type_vector(5, 2, 3, MPI_INT, &t);
    check_type("vector(5,2,3,int)", all[n++] = commit(t), 4);
    MPI_Type_vector(4, 1, -2, MPI_DOUBLE, &t);
    check_type("vector(4,1,-2,double)", all[n++] = commit(t), 3);
    MPI_Type_create_hvector(4, 3, 40, MPI_SHORT, &t);
    check_type("hvector(4,3,40B,short)", all[n++] = commit(t), 2);
    {
        int bl[4] = {1, 3, 0, 2}, dp[4] = {5, 0, 12, 9};
        MPI_Type_indexed(4, bl, dp, MPI_DOUBLE, &t);
        check_type("indexed(out of order,double)", all[n++] = commit(t), 3);
        MPI_Aint hd[4] = {40, 0, 100, 72};
        MPI_Type_create_hindexed(4, bl, hd, MPI_INT, &t);
        check_type("hindexed(int)", all[n++] = commit(t), 2);
        MPI_Type_create_indexed_block(4, 2, dp, MPI_FLOAT, &t);
        check_type("indexed_block(2,float)", all[n++] = commit(t), 3);
        MPI_Type_create_hindexed_block(4, 2, hd, MPI_SHORT, &t);
        check_type("hindexed_block(2,short)", all[n++] = commit(t), 3);
    }
    {
        struct s {
            char c;
            double d;
            int i;
        };
        int bl[3] = {1, 1, 1};
        MPI_Aint dp[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
        MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
        MPI_Type_create_struct(3, bl, dp, ty, &u);
        check_type("struct{char,double,int}", all[n++] = commit(u), 1);
        MPI_Type_create_resized(u, 0, sizeof(struct s), &t);
        check_type("resized struct to sizeof", all[n++] = commit(t), 5);
        const narmau_dtype *d;
        narmau_dtype_get(t, &d);
        check(d->basic == MPI_DATATYPE_NULL && d->basic_size == 0,
              "struct of mixed types is mixed");
        MPI_Aint ndp[3] = {-16, 8, 0};
        MPI_Type_create_struct(3, bl, ndp, ty, &t);
        check_type("struct negative displacement", all[n++] = commit(t), 3);
        MPI_Datatype same[3] = {MPI_INT, MPI_INT, MPI_INT};
        MPI_Type_create_struct(3, bl, ndp, same, &t);
        all[n++] = commit(t);
        narmau_dtype_get(t, &d);
        check(d->basic == MPI_INT && d->basic_size == 4, "struct of ints has basic MPI_INT");
    }
    {
        int sizes[3] = {6, 5, 4}, subs[3] = {3, 2, 2}, starts[3] = {1, 2, 1};
        MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
        check_type("subarray 3d C order", all[n++] = commit(t), 2);
        MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
        check_type("subarray 3d Fortran order", all[n++] = commit(t), 2);
        int s1 = 10, b1 = 4, st1 = 3;
        MPI_Type_create_subarray(1, &s1, &b1, &st1, MPI_ORDER_C, MPI_SHORT_INT, &t);
        check_type("subarray 1d of MPI_SHORT_INT", all[n++] = commit(t), 2);
    }
    MPI_Type_vector(3, 2, 4, MPI_INT, &u);
    MPI_Type_create_resized(u, -8, 64, &t);
    check_type("resized(vector, lb -8, extent 64)", all[n++] = commit(t), 3);
    MPI_Type_create_resized(u, 4, 12, &v);
    check_type("resized(vector) overlapping instances", all[n++] = commit(v), 1);
    MPI_Type_free(&u);

    printf("nested types\n");
    {
        struct s {
            char c;
            double d;
            int i;
        };
        int bl[3] = {1, 1, 1};
        MPI_Aint dp[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
        MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
        MPI_Type_create_struct(3, bl, dp, ty, &u); /* never committed: only a child */
        MPI_Type_vector(3, 2, 3, u, &t);
        check_type("vector of uncommitted struct", all[n++] = commit(t), 2);
        /* Described (and cached) as the vector's child, the struct is still uncommitted:
         * used alone it is refused, at every lookup, until it is committed. */
        const narmau_dtype *d = NULL;
        for (int i = 0; i < 2; i++)
            check(narmau_dtype_get(u, &d) == NARMA_ERR_TYPE,
                  "an uncommitted type cached as a child is refused alone (lookup %d)", i);
        MPI_Type_commit(&u);
        for (int i = 0; i < 2; i++)
            check(narmau_dtype_get(u, &d) == 0 && d->size == 1 + 8 + 4,
                  "the same type once committed is accepted (lookup %d)", i);
        MPI_Type_free(&u);
    }
    {
        int sizes[2] = {8, 8}, subs[2] = {3, 4}, starts[2] = {2, 1};
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE_INT, &u);
        MPI_Type_contiguous(2, u, &t);
        check_type("contiguous of subarray of DOUBLE_INT", all[n++] = commit(t), 2);
        const narmau_dtype *d;
        narmau_dtype_get(t, &d);
        check(d->basic == MPI_DOUBLE_INT && d->basic_size == 12, "basic of nested pair type");
        MPI_Type_free(&u);
    }
    {
        int bl[3] = {2, 1, 1}, dp[3] = {3, 0, 7};
        MPI_Type_indexed(3, bl, dp, MPI_SHORT, &u);
        MPI_Type_create_hvector(3, 2, 50, u, &v);
        MPI_Datatype ty[2] = {v, MPI_DOUBLE};
        int sbl[2] = {1, 2};
        MPI_Aint sdp[2] = {16, 0};
        MPI_Type_create_struct(2, sbl, sdp, ty, &t);
        check_type("struct{hvector(indexed),double}", all[n++] = commit(t), 2);
        MPI_Type_free(&u);
        MPI_Type_dup(t, &u);
        check_type("dup of the struct", all[n++] = commit(u), 2);
        MPI_Type_free(&v);
    }
    {
        int gs[2] = {9, 7}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
        MPI_Type_create_darray(4, 3, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_FLOAT, &t);
        check_type("darray (traced)", all[n++] = commit(t), 2);
        const narmau_dtype *d;
        narmau_dtype_get(t, &d);
        check(d->nblocks > 0 && d->basic == MPI_FLOAT, "darray flattened, basic MPI_FLOAT");
    }
    {
        int bl[3] = {0, 2, 0}, dp[3] = {100, 1, -50};
        MPI_Type_indexed(3, bl, dp, MPI_INT, &t);
        check_type("indexed with zero blocklengths", all[n++] = commit(t), 3);
        MPI_Type_contiguous(0, MPI_INT, &t);
        check_type("contiguous(0) (empty)", all[n++] = commit(t), 4);
    }
    MPI_Type_vector(100000, 1, 2, MPI_INT, &t);
    check_type("vector(100000,1,2,int)", all[n++] = commit(t), 2);
    MPI_Type_contiguous(1000000, MPI_INT, &t);
    check_type("contiguous(1000000,int)", all[n++] = commit(t), 2);

    printf("copies between different types\n");
    {
        MPI_Datatype vec, sub;
        MPI_Type_vector(6, 2, 5, MPI_INT, &vec);
        vec = commit(vec);
        int sizes[2] = {4, 6}, subs[2] = {3, 4}, starts[2] = {1, 1};
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &sub);
        sub = commit(sub);
        check_cross("vector(6,2,5,int) x2 <- subarray 3x4 x2", vec, 2, sub, 2);
        check_cross("subarray x2 <- vector x2", sub, 2, vec, 2);
        check_cross("int[24] <- vector x2", MPI_INT, 24, vec, 2);
        check_cross("vector x2 <- int[24]", vec, 2, MPI_INT, 24);
        check_cross("vector x2 <- byte[96]", vec, 2, MPI_BYTE, 96);
        int rc = narmau_dtype_copy(NULL, 3, vec, NULL, 2, vec);
        check(rc == NARMA_ERR_TYPE, "size mismatch gives NARMA_ERR_TYPE (got %d)", rc);
        printf("  ok   size mismatch rejected\n");
        MPI_Type_free(&vec);
        MPI_Type_free(&sub);
    }

    printf("errors\n");
    {
        const narmau_dtype *d;
        int rc = narmau_dtype_get(MPI_DATATYPE_NULL, &d);
        check(rc == NARMA_ERR_TYPE, "MPI_DATATYPE_NULL gives NARMA_ERR_TYPE (got %d)", rc);
        MPI_Type_contiguous(3, MPI_INT, &t);
        rc = narmau_dtype_get(t, &d);
        check(rc == NARMA_ERR_TYPE, "uncommitted type gives NARMA_ERR_TYPE (got %d)", rc);
        MPI_Type_free(&t);
        printf("  ok   null and uncommitted types rejected\n");
    }

    printf("cache lifetime\n");
    {
        /* Free a described type behind narma's back, make another one that
         * MPI may give the same handle: it must be described afresh. */
        const narmau_dtype *d;
        MPI_Type_vector(2, 1, 4, MPI_INT, &t);
        MPI_Type_commit(&t);
        narmau_dtype_get(t, &d);
        MPI_Datatype old = t;
        MPI_Type_free(&t);
        MPI_Type_contiguous(5, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        printf("  handle %s\n", memcmp(&old, &t, sizeof(t)) == 0 ? "reused" : "not reused");
        narmau_dtype_get(t, &d);
        check(d->size == 40 && d->contiguous && d->basic == MPI_DOUBLE,
              "fresh description after free");
        narmau_dtype_forget(t);
        narmau_dtype_get(t, &d);
        check(d->size == 40, "description after forget");
        MPI_Type_free(&t);
        printf("  ok   stale entries evicted\n");
    }

    for (int i = 0; i < n; i++)
        MPI_Type_free(&all[i]);
    narmau_dtype_cache_clear();
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
