/*
 * narmau_dtype_large: the datatype the large-count (_c) calls issue instead of a count beyond
 * an int. With a small chunk the same construction runs at small counts, where MPI can check
 * it against the plain (count, type): the same size, extent, bytes (MPI_Pack), flattened
 * blocks and basic type, and the same accumulate result (narmau_acc_apply). With the real
 * chunk (INT_MAX) the description of 2^31 + 17 elements is checked without touching memory,
 * and the limits (negative, zero, overflowing counts) are refused.
 */
#include "util/acc_ops.h"
#include "util/dtype.h"
#include "unit.h"

#include <limits.h>
#include <narma/narma.h>

/* The large type of (count, type, chunk) and the plain (count, type) describe the same bytes. */
static void check_same(MPI_Count count, MPI_Datatype type, int chunk, const char *what)
{
    MPI_Datatype big;
    int rc = narmau_dtype_large(count, type, chunk, &big);
    if (!CHECK(rc == 0, "%s count %lld chunk %d: rc %d", what, (long long)count, chunk, rc)) return;
    MPI_Count bsize, psize;
    MPI_Aint blb, bext, plb, pext;
    MPI_Type_size_x(big, &bsize);
    MPI_Type_size_x(type, &psize);
    CHECK(bsize == psize * count, "%s count %lld chunk %d: size %lld, expected %lld", what,
          (long long)count, chunk, (long long)bsize, (long long)(psize * count));
    MPI_Type_get_true_extent(big, &blb, &bext);
    MPI_Type_get_extent(type, &plb, &pext);
    /* The data of count elements ends (count - 1) extents after the first one's. */
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(type, &tlb, &text);
    CHECK(blb == tlb && bext == (MPI_Aint)(count - 1) * pext + text,
          "%s count %lld chunk %d: true extent [%ld, +%ld), expected [%ld, +%ld)", what,
          (long long)count, chunk, (long)blb, (long)bext, (long)tlb,
          (long)((MPI_Aint)(count - 1) * pext + text));

    /* MPI packs the same bytes from both descriptions. */
    size_t span = (size_t)((MPI_Aint)count * pext + 64);
    unsigned char *buf = malloc(span), *p1 = malloc(span), *p2 = malloc(span);
    for (size_t i = 0; i < span; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    int pos1 = 0, pos2 = 0;
    MPI_Pack(buf, 1, big, p1, (int)span, &pos1, MPI_COMM_SELF);
    MPI_Pack(buf, (int)count, type, p2, (int)span, &pos2, MPI_COMM_SELF);
    CHECK(pos1 == pos2 && memcmp(p1, p2, (size_t)pos1) == 0,
          "%s count %lld chunk %d: packed bytes differ", what, (long long)count, chunk);

    /* narma's description: the same basic type, and its copy moves the same bytes. */
    const narmau_dtype *bd, *pd;
    CHECK(narmau_dtype_get(big, &bd) == 0 && narmau_dtype_get(type, &pd) == 0, "%s: lookup", what);
    CHECK(bd->basic == pd->basic, "%s count %lld chunk %d: basic type differs", what,
          (long long)count, chunk);
    unsigned char *c1 = calloc(1, span), *c2 = calloc(1, span);
    CHECK(narmau_dtype_copy(c1, 1, big, buf, 1, big) == 0, "%s: copy via large type", what);
    CHECK(narmau_dtype_copy(c2, (int)count, type, buf, (int)count, type) == 0, "%s: plain copy",
          what);
    CHECK(memcmp(c1, c2, span) == 0, "%s count %lld chunk %d: copies differ", what,
          (long long)count, chunk);
    free(c1);
    free(c2);
    free(buf);
    free(p1);
    free(p2);
    MPI_Type_free(&big);
}

/* An accumulate through the large type applies the op to every element, as the plain one. */
static void check_acc(MPI_Count count, int chunk)
{
    MPI_Datatype big;
    if (!CHECK(narmau_dtype_large(count, MPI_INT, chunk, &big) == 0, "acc: build")) return;
    int *t1 = malloc(sizeof(int) * (size_t)count), *t2 = malloc(sizeof(int) * (size_t)count);
    int *o = malloc(sizeof(int) * (size_t)count), *r = malloc(sizeof(int) * (size_t)count);
    for (MPI_Count i = 0; i < count; i++) {
        t1[i] = t2[i] = (int)(i * 3 + 1);
        o[i] = (int)(i * i);
    }
    uint64_t lock = 0;
    CHECK(narmau_acc_apply(t1, 1, big, o, r, MPI_SUM, &lock) == 0, "acc: large apply");
    CHECK(narmau_acc_apply(t2, (int)count, MPI_INT, o, NULL, MPI_SUM, &lock) == 0, "acc: apply");
    int same = memcmp(t1, t2, sizeof(int) * (size_t)count) == 0;
    for (MPI_Count i = 0; i < count && same; i++)
        same = r[i] == (int)(i * 3 + 1);
    CHECK(same, "acc count %lld chunk %d: results differ", (long long)count, chunk);
    free(t1);
    free(t2);
    free(o);
    free(r);
    MPI_Type_free(&big);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    unit_begin(120);

    unit_phase("small chunks: the same bytes as the plain count, with and without remainder");
    MPI_Datatype vec, padded;
    MPI_Type_vector(3, 2, 5, MPI_SHORT, &vec); /* holes inside, extent 12 shorts - 3 */
    MPI_Type_commit(&vec);
    MPI_Type_create_resized(MPI_DOUBLE, 0, 12, &padded); /* a hole after each element */
    MPI_Type_commit(&padded);
    for (int chunk = 1; chunk <= 8; chunk++)
        for (MPI_Count count = 1; count <= 40; count += 3) {
            check_same(count, MPI_BYTE, chunk, "MPI_BYTE");
            check_same(count, MPI_INT, chunk, "MPI_INT");
            check_same(count, MPI_DOUBLE_INT, chunk, "MPI_DOUBLE_INT");
            check_same(count, vec, chunk, "vector");
            check_same(count, padded, chunk, "resized");
        }

    unit_phase("small chunks: accumulate element by element");
    for (int chunk = 1; chunk <= 8; chunk += 3)
        for (MPI_Count count = 1; count <= 100; count += 11)
            check_acc(count, chunk);

    unit_phase("INT_MAX chunks: 2^31 + 17 elements described without memory");
    const MPI_Count n = ((MPI_Count)1 << 31) + 17;
    MPI_Datatype big;
    if (CHECK(narmau_dtype_large(n, MPI_DOUBLE, INT_MAX, &big) == 0, "build")) {
        MPI_Count size;
        MPI_Type_size_x(big, &size);
        CHECK(size == 8 * n, "size %lld, expected %lld", (long long)size, (long long)(8 * n));
        const narmau_dtype *d;
        CHECK(narmau_dtype_get(big, &d) == 0, "lookup");
        CHECK(d->basic == MPI_DOUBLE && d->contiguous && d->nblocks == 1 && d->blocks[0].off == 0 &&
                  d->blocks[0].len == 8 * n,
              "one contiguous block of doubles (basic ok %d, contiguous %d, nblocks %d)",
              d->basic == MPI_DOUBLE, d->contiguous, d->nblocks);
        MPI_Aint lo, hi;
        narmau_dtype_span(d, 1, &lo, &hi);
        CHECK(lo == 0 && hi == 8 * n, "span [%ld, %ld)", (long)lo, (long)hi);
        MPI_Type_free(&big);
    }
    if (CHECK(narmau_dtype_large(2 * (MPI_Count)INT_MAX, MPI_BYTE, INT_MAX, &big) == 0,
              "exactly two chunks")) {
        MPI_Count size;
        MPI_Type_size_x(big, &size);
        CHECK(size == 2 * (MPI_Count)INT_MAX, "two chunks: size %lld", (long long)size);
        MPI_Type_free(&big);
    }

    unit_phase("limits: refused, never wrapped");
    CHECK(narmau_dtype_large(0, MPI_BYTE, INT_MAX, &big) == NARMA_ERR_COUNT, "count 0");
    CHECK(narmau_dtype_large(-5, MPI_BYTE, INT_MAX, &big) == NARMA_ERR_COUNT, "negative count");
    CHECK(narmau_dtype_large((MPI_Count)1 << 62, MPI_DOUBLE, INT_MAX, &big) == NARMA_ERR_COUNT,
          "2^62 doubles: bytes overflow MPI_Aint");
    CHECK(narmau_dtype_large((MPI_Count)1 << 62, MPI_BYTE, 2, &big) == NARMA_ERR_COUNT,
          "more chunks than an int");
    CHECK(narmau_dtype_large(10, MPI_BYTE, 0, &big) == NARMA_ERR_ARG, "chunk 0");
    CHECK(big == MPI_DATATYPE_NULL, "nothing made on failure");

    unit_phase("copies of more than INT_MAX instances: counts are not cut to an int");
    /* 2^31 + 5 instances of an empty type: no memory touched, but the count must survive. */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_BYTE, &empty);
    MPI_Type_commit(&empty);
    char one = 0;
    CHECK(narmau_dtype_copy(&one, ((MPI_Aint)1 << 31) + 5, empty, &one, 0, MPI_BYTE) == 0,
          "an empty copy of 2^31 + 5 instances");
    CHECK(narmau_dtype_copy(&one, ((MPI_Aint)1 << 31) + 5, MPI_BYTE, &one, 1, MPI_BYTE) ==
              NARMA_ERR_TYPE,
          "2^31 + 5 bytes against 1: a size mismatch, not a wrapped count");
    CHECK(narmau_dtype_copy(&one, (MPI_Aint)1 << 61, MPI_DOUBLE, &one, 1, MPI_BYTE) ==
              NARMA_ERR_COUNT,
          "a byte total beyond MPI_Aint");
    MPI_Type_free(&empty);
    MPI_Type_free(&vec);
    MPI_Type_free(&padded);
    narmau_dtype_cache_clear();
    int rc = unit_done("test_dtype_large");
    MPI_Finalize();
    return rc;
}
