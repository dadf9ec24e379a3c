/*
 * narmau_acc_*: which ops are allowed, what they compute, and that they are
 * atomic per element.
 *
 * MPI_Reduce_local is the reference for every allowed (type, op) pair, on
 * contiguous targets, strided targets and misaligned targets (the locked
 * path). Four threads then hammer single elements; every fetched old value
 * is kept, and the history must be one that atomic updates could produce.
 */
#include "util/acc_ops.h"
#include "util/dtype.h"

#include <narma/narma.h>

#include <complex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
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

/* How to store a small integer k as an element of each type. */
enum gen {
    G_SINT,
    G_UINT,
    G_FLT,
    G_DBL,
    G_LDBL,
    G_CF,
    G_CD,
    G_CLD,
    G_BOOL,
    G_FLOG,
    G_2INT,
    G_FLOAT_INT,
    G_DOUBLE_INT,
    G_LONG_INT,
    G_SHORT_INT,
    G_LDOUBLE_INT,
    G_2FLT
};

static const struct {
    const char *name;
    MPI_Datatype type;
    int gen;
} types[] = {
    {"MPI_INT", MPI_INT, G_SINT},
    {"MPI_UNSIGNED", MPI_UNSIGNED, G_UINT},
    {"MPI_LONG", MPI_LONG, G_SINT},
    {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, G_UINT},
    {"MPI_LONG_LONG", MPI_LONG_LONG, G_SINT},
    {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, G_UINT},
    {"MPI_SHORT", MPI_SHORT, G_SINT},
    {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, G_UINT},
    {"MPI_CHAR", MPI_CHAR, G_SINT},
    {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, G_SINT},
    {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, G_UINT},
    {"MPI_INT8_T", MPI_INT8_T, G_SINT},
    {"MPI_INT16_T", MPI_INT16_T, G_SINT},
    {"MPI_INT32_T", MPI_INT32_T, G_SINT},
    {"MPI_INT64_T", MPI_INT64_T, G_SINT},
    {"MPI_UINT8_T", MPI_UINT8_T, G_UINT},
    {"MPI_UINT16_T", MPI_UINT16_T, G_UINT},
    {"MPI_UINT32_T", MPI_UINT32_T, G_UINT},
    {"MPI_UINT64_T", MPI_UINT64_T, G_UINT},
    {"MPI_AINT", MPI_AINT, G_SINT},
    {"MPI_OFFSET", MPI_OFFSET, G_SINT},
    {"MPI_COUNT", MPI_COUNT, G_SINT},
    {"MPI_BYTE", MPI_BYTE, G_UINT},
    {"MPI_FLOAT", MPI_FLOAT, G_FLT},
    {"MPI_DOUBLE", MPI_DOUBLE, G_DBL},
    {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, G_LDBL},
    {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, G_CF},
    {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, G_CD},
    {"MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, G_CLD},
    {"MPI_C_BOOL", MPI_C_BOOL, G_BOOL},
    {"MPI_2INT", MPI_2INT, G_2INT},
    {"MPI_FLOAT_INT", MPI_FLOAT_INT, G_FLOAT_INT},
    {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, G_DOUBLE_INT},
    {"MPI_LONG_INT", MPI_LONG_INT, G_LONG_INT},
    {"MPI_SHORT_INT", MPI_SHORT_INT, G_SHORT_INT},
    {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, G_LDOUBLE_INT},
    {"MPI_INTEGER", MPI_INTEGER, G_SINT},
    {"MPI_REAL", MPI_REAL, G_FLT},
    {"MPI_DOUBLE_PRECISION", MPI_DOUBLE_PRECISION, G_DBL},
    {"MPI_COMPLEX", MPI_COMPLEX, G_CF},
    {"MPI_LOGICAL", MPI_LOGICAL, G_FLOG},
    {"MPI_2INTEGER", MPI_2INTEGER, G_2INT},
    {"MPI_2REAL", MPI_2REAL, G_2FLT},
};
#define NTYPES ((int)(sizeof(types) / sizeof(types[0])))

static const struct {
    const char *name;
    MPI_Op op;
} ops[] = {
    {"SUM", MPI_SUM},         {"PROD", MPI_PROD},   {"MAX", MPI_MAX},       {"MIN", MPI_MIN},
    {"LAND", MPI_LAND},       {"LOR", MPI_LOR},     {"LXOR", MPI_LXOR},     {"BAND", MPI_BAND},
    {"BOR", MPI_BOR},         {"BXOR", MPI_BXOR},   {"MAXLOC", MPI_MAXLOC}, {"MINLOC", MPI_MINLOC},
    {"REPLACE", MPI_REPLACE}, {"NO_OP", MPI_NO_OP},
};
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))

#define PAIR(T) \
    struct {    \
        T v;    \
        int i;  \
    }

/* Store k (small, with ties and zeros) as one element; padding stays 0. */
static void store(int gen, int size, void *p, int k, int idx)
{
    switch (gen) {
    case G_SINT:
    case G_UINT: {
        int64_t v = gen == G_SINT ? k : (int64_t)(k & 0xff) * 0x01000001;
        memcpy(p, &v, (size_t)size); /* little endian: the low bytes */
        break;
    }
    case G_FLT: {
        float v = (float)k;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_DBL: {
        double v = k;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_LDBL: {
        long double v = k;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_CF: {
        float complex v = CMPLXF((float)k, (float)(idx % 3));
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_CD: {
        double complex v = CMPLX(k, idx % 3);
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_CLD: {
        long double complex v = CMPLXL(k, idx % 3);
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_BOOL: {
        bool v = k != 0;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_FLOG: {
        int v = k > 0;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_2INT: {
        PAIR(int) v = {k, idx % 4};
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_2FLT: {
        struct {
            float v, i;
        } v = {(float)k, (float)(idx % 4)};
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_FLOAT_INT: {
        PAIR(float) v;
        memset(&v, 0, sizeof(v));
        v.v = (float)k;
        v.i = idx % 4;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_DOUBLE_INT: {
        PAIR(double) v;
        memset(&v, 0, sizeof(v));
        v.v = k;
        v.i = idx % 4;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_LONG_INT: {
        PAIR(long) v;
        memset(&v, 0, sizeof(v));
        v.v = k;
        v.i = idx % 4;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_SHORT_INT: {
        PAIR(short) v;
        memset(&v, 0, sizeof(v));
        v.v = (short)k;
        v.i = idx % 4;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case G_LDOUBLE_INT: {
        PAIR(long double) v;
        memset(&v, 0, sizeof(v));
        v.v = k;
        v.i = idx % 4;
        memcpy(p, &v, sizeof(v));
        break;
    }
    }
}

#define N 37

/* Target layouts: where element i lives, relative to the buffer. */
enum layout { L_CONTIG, L_VECTOR, L_MISALIGNED, L_COUNT };
static const char *layout_name[] = {"contiguous", "vector stride 2", "hvector misaligned"};

/* One (type, op, layout): compare target and fetched values with MPI. */

/* Some MPI libraries reduce a few (type, op) pairs wrongly themselves: the
 * Open MPI 5.0.11 wheel saturates MPI_SUM on 8-bit unsigned integers (its
 * AVX path) and compares MPI_OFFSET as unsigned. Probe once; for a pair the
 * library gets wrong, compute the reference here and say so. */
static int mpi_uchar_sum_broken = -1, mpi_offset_cmp_broken = -1;

static void probe_mpi_reductions(void)
{
    unsigned char a[64], b[64];
    for (int i = 0; i < 64; i++)
        a[i] = 250, b[i] = 10;
    MPI_Reduce_local(a, b, 64, MPI_UNSIGNED_CHAR, MPI_SUM);
    mpi_uchar_sum_broken = b[0] != 4;
    MPI_Offset x[2] = {-5, 7}, y[2] = {3, -9};
    MPI_Reduce_local(x, y, 2, MPI_OFFSET, MPI_MAX);
    mpi_offset_cmp_broken = !(y[0] == 3 && y[1] == 7);
    if (mpi_uchar_sum_broken)
        printf("NOTE: this MPI's MPI_Reduce_local saturates MPI_SUM on unsigned char; "
               "the test computes that reference itself\n");
    if (mpi_offset_cmp_broken)
        printf("NOTE: this MPI's MPI_Reduce_local compares MPI_OFFSET as unsigned; "
               "the test computes that reference itself\n");
}

static int own_reference(MPI_Datatype type, MPI_Op op, const unsigned char *org, unsigned char *ref,
                         int n)
{
    if (mpi_uchar_sum_broken < 0) probe_mpi_reductions();
    if (mpi_uchar_sum_broken && op == MPI_SUM &&
        (type == MPI_UNSIGNED_CHAR || type == MPI_UINT8_T)) {
        for (int i = 0; i < n; i++)
            ref[i] = (unsigned char)(ref[i] + org[i]);
        return 1;
    }
    if (mpi_offset_cmp_broken && type == MPI_OFFSET && (op == MPI_MAX || op == MPI_MIN)) {
        for (int i = 0; i < n; i++) {
            MPI_Offset a, b;
            memcpy(&a, org + i * sizeof(a), sizeof(a));
            memcpy(&b, ref + i * sizeof(b), sizeof(b));
            MPI_Offset r = op == MPI_MAX ? (a > b ? a : b) : (a < b ? a : b);
            memcpy(ref + i * sizeof(r), &r, sizeof(r));
        }
        return 1;
    }
    return 0;
}

static void check_apply(int ti, int oi, int layout)
{
    MPI_Datatype type = types[ti].type;
    MPI_Op op = ops[oi].op;
    int size;
    MPI_Aint lb, ext;
    MPI_Type_size(type, &size);
    MPI_Type_get_extent(type, &lb, &ext);

    MPI_Aint stride = layout == L_CONTIG ? ext : layout == L_VECTOR ? 2 * ext : 2 * ext + 1;
    MPI_Aint shift = layout == L_MISALIGNED ? 1 : 0;
    MPI_Datatype ttype = type;
    int tcount = N;
    if (layout != L_CONTIG) {
        MPI_Type_create_hvector(N, 1, stride, type, &ttype);
        MPI_Type_commit(&ttype);
        tcount = 1;
    }
    size_t tlen = (size_t)(stride * N + shift + 64), alen = (size_t)(ext * N);
    unsigned char *tmem = calloc(1, tlen), *tgt = tmem + shift;
    unsigned char *org = calloc(1, alen), *res = calloc(1, alen), *old = calloc(1, alen),
                  *ref = calloc(1, alen), *now = calloc(1, alen);
    for (int i = 0; i < N; i++) {
        store(types[ti].gen, size, tgt + i * stride, rand() % 7 - 3, rand());
        store(types[ti].gen, size, org + i * ext, rand() % 7 - 3, rand());
        memcpy(old + i * ext, tgt + i * stride, (size_t)ext);
    }
    memcpy(ref, old, alen);
    if (op == MPI_REPLACE)
        memcpy(ref, org, alen);
    else if (op != MPI_NO_OP && !own_reference(type, op, org, ref, N))
        MPI_Reduce_local(org, ref, N, type, op);

    uint64_t lock = 0;
    memset(res, 0, alen);
    int rc = narmau_acc_apply(tgt, tcount, ttype, org, res, op, &lock);
    for (int i = 0; i < N; i++)
        memcpy(now + i * ext, tgt + i * stride, (size_t)ext);
    check(rc == 0, "%s %s %s: rc %d", types[ti].name, ops[oi].name, layout_name[layout], rc);
    check(memcmp(now, ref, alen) == 0, "%s %s %s: target differs from MPI_Reduce_local",
          types[ti].name, ops[oi].name, layout_name[layout]);
    check(memcmp(res, old, alen) == 0, "%s %s %s: fetched values are not the old ones",
          types[ti].name, ops[oi].name, layout_name[layout]);
    check(lock == 0, "%s %s %s: lock left held", types[ti].name, ops[oi].name, layout_name[layout]);

    /* without a result buffer, same outcome */
    for (int i = 0; i < N; i++)
        memcpy(tgt + i * stride, old + i * ext, (size_t)ext);
    rc = narmau_acc_apply(tgt, tcount, ttype, org, NULL, op, &lock);
    for (int i = 0; i < N; i++)
        memcpy(now + i * ext, tgt + i * stride, (size_t)ext);
    check(rc == 0 && memcmp(now, ref, alen) == 0, "%s %s %s: differs without result buffer",
          types[ti].name, ops[oi].name, layout_name[layout]);

    if (layout != L_CONTIG) MPI_Type_free(&ttype);
    free(tmem);
    free(org);
    free(res);
    free(old);
    free(ref);
    free(now);
}

static void test_check_table(void)
{
    printf("allowed (type, op) pairs agree with MPI_Reduce_local\n");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int allowed = 0, stricter = 0;
    for (int ti = 0; ti < NTYPES; ti++) {
        for (int oi = 0; oi < NOPS; oi++) {
            MPI_Op op = ops[oi].op;
            int rc = narmau_acc_check(op, types[ti].type);
            check(rc == 0 || rc == NARMA_ERR_OP, "%s %s: check gave %d", types[ti].name,
                  ops[oi].name, rc);
            if (op == MPI_REPLACE || op == MPI_NO_OP) {
                check(rc == 0, "%s %s must be allowed", types[ti].name, ops[oi].name);
                continue;
            }
            unsigned char a[64] = {0}, b[64] = {0};
            int mpi_ok = MPI_Reduce_local(a, b, 1, types[ti].type, op) == MPI_SUCCESS;
            if (rc == 0) {
                allowed++;
                check(mpi_ok, "%s %s: allowed by narma, rejected by MPI", types[ti].name,
                      ops[oi].name);
            } else if (mpi_ok) {
                stricter++;
                printf("  note: %s %s rejected by narma (MPI's table), accepted by this MPI\n",
                       types[ti].name, ops[oi].name);
            }
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    printf("  %d pairs allowed besides REPLACE/NO_OP, %d stricter than this MPI\n", allowed,
           stricter);

    printf("forbidden combinations are rejected\n");
    static const struct {
        MPI_Datatype t;
        MPI_Op op;
        int rc;
        const char *what;
    } bad[] = {
        {MPI_FLOAT, MPI_BAND, NARMA_ERR_OP, "float BAND"},
        {MPI_DOUBLE, MPI_LAND, NARMA_ERR_OP, "double LAND"},
        {MPI_BYTE, MPI_SUM, NARMA_ERR_OP, "byte SUM"},
        {MPI_BYTE, MPI_MAX, NARMA_ERR_OP, "byte MAX"},
        {MPI_2INT, MPI_SUM, NARMA_ERR_OP, "2int SUM"},
        {MPI_INT, MPI_MAXLOC, NARMA_ERR_OP, "int MAXLOC"},
        {MPI_C_BOOL, MPI_SUM, NARMA_ERR_OP, "bool SUM"},
        {MPI_C_DOUBLE_COMPLEX, MPI_MAX, NARMA_ERR_OP, "complex MAX"},
        {MPI_WCHAR, MPI_SUM, NARMA_ERR_OP, "wchar SUM"},
        {MPI_DATATYPE_NULL, MPI_SUM, NARMA_ERR_TYPE, "mixed type"},
        {MPI_INT, MPI_OP_NULL, NARMA_ERR_OP, "MPI_OP_NULL"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = narmau_acc_check(bad[i].op, bad[i].t);
        check(rc == bad[i].rc, "%s: got %d, want %d", bad[i].what, rc, bad[i].rc);
    }
    MPI_Op user;
    MPI_Op_create((MPI_User_function *)(void (*)(void))abort, 1, &user);
    check(narmau_acc_check(user, MPI_INT) == NARMA_ERR_OP, "user-defined op rejected");
    MPI_Op_free(&user);

    /* a mixed derived target cannot be accumulated into */
    struct {
        int i;
        double d;
    } s;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, mixed;
    MPI_Type_create_struct(2, bl, dp, ty, &mixed);
    MPI_Type_commit(&mixed);
    uint64_t lock = 0;
    int rc = narmau_acc_apply(&s, 1, mixed, &s, NULL, MPI_REPLACE, &lock);
    check(rc == NARMA_ERR_TYPE, "accumulate into a mixed struct: got %d", rc);
    MPI_Type_free(&mixed);
    printf("  ok   %d forbidden combinations, user op and mixed target rejected\n",
           (int)(sizeof(bad) / sizeof(bad[0])));
}

static void test_apply_all(void)
{
    printf("accumulate vs MPI_Reduce_local (%d elements per call)\n", N);
    for (int layout = 0; layout < L_COUNT; layout++) {
        int f0 = failures, pairs = 0;
        for (int ti = 0; ti < NTYPES; ti++)
            for (int oi = 0; oi < NOPS; oi++)
                if (narmau_acc_check(ops[oi].op, types[ti].type) == 0) {
                    check_apply(ti, oi, layout);
                    pairs++;
                }
        printf("  %s %-20s %d (type, op) pairs\n", failures == f0 ? "ok  " : "FAIL",
               layout_name[layout], pairs);
    }
}

static void test_cas(void)
{
    printf("compare-and-swap\n");
    int f0 = failures, tested = 0;
    for (int ti = 0; ti < NTYPES; ti++) {
        MPI_Datatype t = types[ti].type;
        int size;
        MPI_Aint lb, ext;
        MPI_Type_size(t, &size);
        MPI_Type_get_extent(t, &lb, &ext);
        _Alignas(16) unsigned char tgt[64], cmp[64], org[64], res[64], old[64];
        memset(tgt, 0, sizeof(tgt));
        memset(cmp, 0, sizeof(cmp));
        memset(org, 0, sizeof(org));
        store(types[ti].gen, size, tgt, 2, 1);
        store(types[ti].gen, size, org, -1, 3);
        memcpy(old, tgt, sizeof(old));
        uint64_t lock = 0;
        int expect_ok =
            types[ti].gen <= G_LDBL || types[ti].gen == G_BOOL || types[ti].gen == G_FLOG;
        if (!expect_ok) {
            int rc = narmau_acc_cas(tgt, org, cmp, res, t, &lock);
            check(rc == NARMA_ERR_TYPE, "CAS %s must be rejected (got %d)", types[ti].name, rc);
            continue;
        }
        tested++;
        /* mismatch: target unchanged (logicals have only two values) */
        int two = types[ti].gen == G_BOOL || types[ti].gen == G_FLOG;
        store(types[ti].gen, size, cmp, two ? 0 : 3, 1);
        int rc = narmau_acc_cas(tgt, org, cmp, res, t, &lock);
        check(rc == 0 && memcmp(res, old, (size_t)size) == 0 && memcmp(tgt, old, sizeof(tgt)) == 0,
              "CAS %s mismatch", types[ti].name);
        /* match: target becomes origin */
        memcpy(cmp, old, sizeof(cmp));
        rc = narmau_acc_cas(tgt, org, cmp, res, t, &lock);
        check(rc == 0 && memcmp(res, old, (size_t)size) == 0 && memcmp(tgt, org, (size_t)size) == 0,
              "CAS %s match", types[ti].name);
        /* same on a misaligned element (locked path) */
        unsigned char mis[80] = {0};
        memcpy(mis + 1, old, (size_t)size);
        rc = narmau_acc_cas(mis + 1, org, cmp, res, t, &lock);
        check(rc == 0 && memcmp(res, old, (size_t)size) == 0 &&
                  memcmp(mis + 1, org, (size_t)size) == 0 && lock == 0,
              "CAS %s misaligned", types[ti].name);
    }
    printf("  %s %d types (match, mismatch, misaligned); pairs and complex rejected\n",
           failures == f0 ? "ok  " : "FAIL", tested);
}

/* ---- threads ---------------------------------------------------------- */

#define NTHREADS 4
#define ITERS    100000

static struct {
    _Alignas(64) int64_t counter;
    _Alignas(64) double dsum;
    _Alignas(64) long double ldsum;
    _Alignas(64) PAIR(int) max_aligned;         /* 8-byte aligned: compare-exchange */
    _Alignas(64) unsigned char max_mis_mem[16]; /* 4-aligned, not 8: locked */
    _Alignas(64) uint64_t lock;
} shared;

typedef struct {
    int64_t old;
    int64_t val;
} raise_rec;

typedef struct {
    int tid;
    int64_t *fetched;     /* old counter values */
    raise_rec *raises[2]; /* MAXLOC updates that raised the maximum */
    int nraises[2];
} targ;

static void *hammer(void *p)
{
    targ *a = p;
    const int64_t one = 1;
    const double done = 1.0;
    const long double ldone = 1.0L;
    void *maxloc[2] = {&shared.max_aligned, shared.max_mis_mem + 4};
    for (int i = 0; i < ITERS; i++) {
        narmau_acc_apply(&shared.counter, 1, MPI_INT64_T, &one, &a->fetched[i], MPI_SUM,
                         &shared.lock);
        narmau_acc_apply(&shared.dsum, 1, MPI_DOUBLE, &done, NULL, MPI_SUM, &shared.lock);
        narmau_acc_apply(&shared.ldsum, 1, MPI_LONG_DOUBLE, &ldone, NULL, MPI_SUM, &shared.lock);
        /* values unique across threads, rising with jitter */
        int v = (i + (i * 7919) % 64) * NTHREADS + a->tid;
        PAIR(int) mine = {v, a->tid}, was;
        for (int k = 0; k < 2; k++) {
            narmau_acc_apply(maxloc[k], 1, MPI_2INT, &mine, &was, MPI_MAXLOC, &shared.lock);
            if (was.v < v) a->raises[k][a->nraises[k]++] = (raise_rec){was.v, v};
        }
    }
    return NULL;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int cmp_raise(const void *x, const void *y)
{
    return cmp_i64(&((const raise_rec *)x)->val, &((const raise_rec *)y)->val);
}

static void test_threads(void)
{
    printf("atomicity: %d threads x %d iterations\n", NTHREADS, ITERS);
    /* the dtype cache is filled without locks: describe the types first */
    const narmau_dtype *d;
    narmau_dtype_get(MPI_INT64_T, &d);
    narmau_dtype_get(MPI_DOUBLE, &d);
    narmau_dtype_get(MPI_LONG_DOUBLE, &d);
    narmau_dtype_get(MPI_2INT, &d);
    PAIR(int) init = {-1, 0};
    memcpy(&shared.max_aligned, &init, sizeof(init));
    memcpy(shared.max_mis_mem + 4, &init, sizeof(init));

    pthread_t th[NTHREADS];
    targ args[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        args[t] = (targ){.tid = t, .fetched = malloc(ITERS * sizeof(int64_t))};
        for (int k = 0; k < 2; k++) {
            args[t].raises[k] = malloc(ITERS * sizeof(raise_rec));
            args[t].nraises[k] = 0;
        }
        pthread_create(&th[t], NULL, hammer, &args[t]);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);

    const int64_t total = (int64_t)NTHREADS * ITERS;
    check(shared.counter == total, "int64 SUM: %lld, want %lld", (long long)shared.counter,
          (long long)total);
    /* fetch-and-add hands out every value exactly once */
    int64_t *all = malloc((size_t)total * sizeof(int64_t));
    for (int t = 0; t < NTHREADS; t++)
        memcpy(all + (size_t)t * ITERS, args[t].fetched, ITERS * sizeof(int64_t));
    qsort(all, (size_t)total, sizeof(int64_t), cmp_i64);
    int64_t bad = 0;
    for (int64_t i = 0; i < total; i++)
        bad += all[i] != i;
    check(bad == 0, "int64 fetch-and-add: %lld fetched values wrong", (long long)bad);
    printf("  %s int64 SUM (fetch_add): total and every fetched value unique\n",
           shared.counter == total && !bad ? "ok  " : "FAIL");
    check(shared.dsum == (double)total, "double SUM: %.1f, want %lld", shared.dsum,
          (long long)total);
    printf("  %s double SUM (compare-exchange loop): %.1f\n",
           shared.dsum == (double)total ? "ok  " : "FAIL", shared.dsum);
    long double ldwant = (long double)total;
    check(shared.ldsum == ldwant, "long double SUM: %.1Lf, want %.1Lf", shared.ldsum, ldwant);
    printf("  %s long double SUM (spinlock): %.1Lf\n", shared.ldsum == ldwant ? "ok  " : "FAIL",
           shared.ldsum);

    /* MAXLOC: the raises must chain, each starting where the previous ended */
    const char *kname[2] = {"MPI_2INT MAXLOC aligned (compare-exchange)",
                            "MPI_2INT MAXLOC misaligned (spinlock)"};
    void *maxloc[2] = {&shared.max_aligned, shared.max_mis_mem + 4};
    for (int k = 0; k < 2; k++) {
        int n = 0, f0 = failures;
        for (int t = 0; t < NTHREADS; t++)
            n += args[t].nraises[k];
        raise_rec *r = malloc((size_t)n * sizeof(*r));
        n = 0;
        for (int t = 0; t < NTHREADS; t++) {
            memcpy(r + n, args[t].raises[k], (size_t)args[t].nraises[k] * sizeof(*r));
            n += args[t].nraises[k];
        }
        qsort(r, (size_t)n, sizeof(*r), cmp_raise);
        int broken = 0;
        for (int i = 0; i < n; i++)
            broken += r[i].old != (i ? r[i - 1].val : -1);
        PAIR(int) fin;
        memcpy(&fin, maxloc[k], sizeof(fin));
        int64_t vmax = n ? r[n - 1].val : -1;
        check(!broken, "%s: %d raises do not chain (lost update)", kname[k], broken);
        check(fin.v == vmax && fin.i == (int)(vmax % NTHREADS), "%s: final (%d,%d)", kname[k],
              fin.v, fin.i);
        printf("  %s %s: %d raises chain, final (%d,%d)\n", failures == f0 ? "ok  " : "FAIL",
               kname[k], n, fin.v, fin.i);
        free(r);
    }
    check(shared.lock == 0, "lock left held");
    for (int t = 0; t < NTHREADS; t++) {
        free(args[t].fetched);
        free(args[t].raises[0]);
        free(args[t].raises[1]);
    }
    free(all);
}

/* MAXLOC/MINLOC ties keep the smaller index, whichever side it comes from. */
static void test_ties(void)
{
    printf("MAXLOC/MINLOC ties\n");
    int f0 = failures;
    PAIR(int) t[4] = {{5, 3}, {5, 1}, {2, 7}, {9, 0}}, o[4] = {{5, 1}, {5, 3}, {2, 2}, {9, 0}};
    PAIR(int) want[4] = {{5, 1}, {5, 1}, {2, 2}, {9, 0}};
    uint64_t lock = 0;
    narmau_acc_apply(t, 4, MPI_2INT, o, NULL, MPI_MAXLOC, &lock);
    check(memcmp(t, want, sizeof(t)) == 0, "MAXLOC ties");
    PAIR(double) dt[2], dox[2];
    memset(dt, 0, sizeof(dt));
    memset(dox, 0, sizeof(dox));
    dt[0].v = 1.5, dt[0].i = 4, dt[1].v = -2, dt[1].i = 0;
    dox[0].v = 1.5, dox[0].i = 2, dox[1].v = -3, dox[1].i = 9;
    narmau_acc_apply(dt, 2, MPI_DOUBLE_INT, dox, NULL, MPI_MINLOC, &lock);
    check(dt[0].v == 1.5 && dt[0].i == 2 && dt[1].v == -3 && dt[1].i == 9, "MINLOC double_int");
    printf("  %s smaller index wins\n", failures == f0 ? "ok  " : "FAIL");
}

/* Fetch-and-op may hand the same buffer as origin and result. */
static void test_aliasing(void)
{
    printf("result buffer aliasing the origin buffer\n");
    int f0 = failures;
    uint64_t lock = 0;
    long double lt[2] = {1.5L, 2.0L}, lb[2] = {10.0L, 20.0L};
    narmau_acc_apply(lt, 2, MPI_LONG_DOUBLE, lb, lb, MPI_SUM, &lock);
    check(lt[0] == 11.5L && lt[1] == 22.0L && lb[0] == 1.5L && lb[1] == 2.0L,
          "long double SUM with result == origin");
    int it[2] = {3, 4}, ib[2] = {5, 6};
    narmau_acc_apply(it, 2, MPI_INT, ib, ib, MPI_PROD, &lock);
    check(it[0] == 15 && it[1] == 24 && ib[0] == 3 && ib[1] == 4, "int PROD with result == origin");
    narmau_acc_apply(lt, 2, MPI_LONG_DOUBLE, lb, lb, MPI_REPLACE, &lock);
    check(lt[0] == 1.5L && lt[1] == 2.0L && lb[0] == 11.5L && lb[1] == 22.0L,
          "long double REPLACE (swap) with result == origin");
    long double cas_t = 7.0L, cas_b = 7.0L;
    narmau_acc_cas(&cas_t, &cas_b, &cas_b, &cas_b, MPI_LONG_DOUBLE, &lock);
    check(cas_t == 7.0L && cas_b == 7.0L, "CAS with all buffers the same");
    printf("  %s fetch-and-op and CAS read their inputs before writing results\n",
           failures == f0 ? "ok  " : "FAIL");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    srand(4242);
    test_check_table();
    test_apply_all();
    test_ties();
    test_cas();
    test_aliasing();
    test_threads();
    narmau_dtype_cache_clear();
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
