/*
 * Accumulate, fetch-and-op and compare-and-swap on target memory.
 *
 * Each basic type is classified once per call: its MPI class (decides which
 * ops are allowed) and its C representation ("kind", decides how we compute
 * an op without MPI). Kinds we do not compute natively (Fortran logicals and
 * pairs) go through MPI_Reduce_local on a private copy of the element.
 */
#include "util/acc_ops.h"

#include "util/atomic.h"
#include "util/dtype.h"

#include <narma/narma.h>

#include <complex.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* ---- classification ----------------------------------------------------- */

enum cls {
    CL_OTHER,   /* REPLACE and NO_OP only (MPI_WCHAR, MPI_PACKED, unknown) */
    CL_CINT,    /* C integer (and MPI_CHAR) */
    CL_FINT,    /* Fortran integer */
    CL_FLOAT,   /* floating point */
    CL_COMPLEX, /* complex */
    CL_LOGICAL, /* C bool, Fortran logical */
    CL_BYTE,    /* MPI_BYTE */
    CL_MULTI,   /* MPI_AINT, MPI_OFFSET, MPI_COUNT */
    CL_PAIR     /* value-index pairs for MAXLOC/MINLOC */
};

enum kind {
    K_MPI, /* computed by MPI_Reduce_local */
    K_I8,
    K_U8,
    K_I16,
    K_U16,
    K_I32,
    K_U32,
    K_I64,
    K_U64,
    K_F32,
    K_F64,
    K_LD,
    K_CF,
    K_CD,
    K_CLD,
    K_BOOL,
    K_2INT,
    K_FLOAT_INT,
    K_DOUBLE_INT,
    K_LONG_INT,
    K_SHORT_INT,
    K_LDOUBLE_INT,
    K_SINT_BY_SIZE,
    K_FLOAT_BY_SIZE,
    K_COMPLEX_BY_SIZE /* Fortran: resolved from the size */
};

#define SINT_KIND(T) \
    (sizeof(T) == 1 ? K_I8 : sizeof(T) == 2 ? K_I16 : sizeof(T) == 4 ? K_I32 : K_I64)
#define UINT_KIND(T) \
    (sizeof(T) == 1 ? K_U8 : sizeof(T) == 2 ? K_U16 : sizeof(T) == 4 ? K_U32 : K_U64)
#define CHAR_KIND ((char)-1 < 0 ? K_I8 : K_U8)

static const struct typeinfo {
    MPI_Datatype type;
    unsigned char cls, kind;
} types[] = {
    {MPI_INT, CL_CINT, SINT_KIND(int)},
    {MPI_UNSIGNED, CL_CINT, UINT_KIND(unsigned)},
    {MPI_LONG, CL_CINT, SINT_KIND(long)},
    {MPI_UNSIGNED_LONG, CL_CINT, UINT_KIND(unsigned long)},
    {MPI_LONG_LONG_INT, CL_CINT, SINT_KIND(long long)},
    {MPI_LONG_LONG, CL_CINT, SINT_KIND(long long)},
    {MPI_UNSIGNED_LONG_LONG, CL_CINT, UINT_KIND(unsigned long long)},
    {MPI_SHORT, CL_CINT, SINT_KIND(short)},
    {MPI_UNSIGNED_SHORT, CL_CINT, UINT_KIND(unsigned short)},
    {MPI_CHAR, CL_CINT, CHAR_KIND},
    {MPI_SIGNED_CHAR, CL_CINT, K_I8},
    {MPI_UNSIGNED_CHAR, CL_CINT, K_U8},
    {MPI_INT8_T, CL_CINT, K_I8},
    {MPI_INT16_T, CL_CINT, K_I16},
    {MPI_INT32_T, CL_CINT, K_I32},
    {MPI_INT64_T, CL_CINT, K_I64},
    {MPI_UINT8_T, CL_CINT, K_U8},
    {MPI_UINT16_T, CL_CINT, K_U16},
    {MPI_UINT32_T, CL_CINT, K_U32},
    {MPI_UINT64_T, CL_CINT, K_U64},
    {MPI_AINT, CL_MULTI, SINT_KIND(MPI_Aint)},
    {MPI_OFFSET, CL_MULTI, SINT_KIND(MPI_Offset)},
    {MPI_COUNT, CL_MULTI, SINT_KIND(MPI_Count)},
    {MPI_FLOAT, CL_FLOAT, K_F32},
    {MPI_DOUBLE, CL_FLOAT, K_F64},
    {MPI_LONG_DOUBLE, CL_FLOAT, K_LD},
    {MPI_C_FLOAT_COMPLEX, CL_COMPLEX, K_CF},
    {MPI_C_COMPLEX, CL_COMPLEX, K_CF},
    {MPI_C_DOUBLE_COMPLEX, CL_COMPLEX, K_CD},
    {MPI_C_LONG_DOUBLE_COMPLEX, CL_COMPLEX, K_CLD},
    {MPI_C_BOOL, CL_LOGICAL, K_BOOL},
    {MPI_BYTE, CL_BYTE, K_U8},
    {MPI_2INT, CL_PAIR, K_2INT},
    {MPI_FLOAT_INT, CL_PAIR, K_FLOAT_INT},
    {MPI_DOUBLE_INT, CL_PAIR, K_DOUBLE_INT},
    {MPI_LONG_INT, CL_PAIR, K_LONG_INT},
    {MPI_SHORT_INT, CL_PAIR, K_SHORT_INT},
    {MPI_LONG_DOUBLE_INT, CL_PAIR, K_LDOUBLE_INT},
    {MPI_WCHAR, CL_OTHER, K_MPI},
    {MPI_PACKED, CL_OTHER, K_MPI},
    /* Fortran (handles may be MPI_DATATYPE_NULL without Fortran support;
     * lookups never search for MPI_DATATYPE_NULL) */
    {MPI_INTEGER, CL_FINT, K_SINT_BY_SIZE},
    {MPI_REAL, CL_FLOAT, K_FLOAT_BY_SIZE},
    {MPI_DOUBLE_PRECISION, CL_FLOAT, K_FLOAT_BY_SIZE},
    {MPI_COMPLEX, CL_COMPLEX, K_COMPLEX_BY_SIZE},
    {MPI_DOUBLE_COMPLEX, CL_COMPLEX, K_COMPLEX_BY_SIZE},
    {MPI_LOGICAL, CL_LOGICAL, K_MPI},
    {MPI_CHARACTER, CL_OTHER, K_MPI},
    {MPI_2REAL, CL_PAIR, K_MPI},
    {MPI_2DOUBLE_PRECISION, CL_PAIR, K_MPI},
    {MPI_2INTEGER, CL_PAIR, K_MPI},
#ifdef MPI_INTEGER1
    {MPI_INTEGER1, CL_FINT, K_SINT_BY_SIZE},
#endif
#ifdef MPI_INTEGER2
    {MPI_INTEGER2, CL_FINT, K_SINT_BY_SIZE},
#endif
#ifdef MPI_INTEGER4
    {MPI_INTEGER4, CL_FINT, K_SINT_BY_SIZE},
#endif
#ifdef MPI_INTEGER8
    {MPI_INTEGER8, CL_FINT, K_SINT_BY_SIZE},
#endif
#ifdef MPI_REAL4
    {MPI_REAL4, CL_FLOAT, K_FLOAT_BY_SIZE},
#endif
#ifdef MPI_REAL8
    {MPI_REAL8, CL_FLOAT, K_FLOAT_BY_SIZE},
#endif
#ifdef MPI_COMPLEX8
    {MPI_COMPLEX8, CL_COMPLEX, K_COMPLEX_BY_SIZE},
#endif
#ifdef MPI_COMPLEX16
    {MPI_COMPLEX16, CL_COMPLEX, K_COMPLEX_BY_SIZE},
#endif
#ifdef MPI_CXX_BOOL
    {MPI_CXX_BOOL, CL_LOGICAL, K_BOOL},
#endif
};

static int resolve_by_size(int kind, MPI_Datatype type)
{
    int size = 0;
    MPI_Type_size(type, &size);
    switch (kind) {
    case K_SINT_BY_SIZE:
        return size == 1 ? K_I8 : size == 2 ? K_I16 : size == 4 ? K_I32 : size == 8 ? K_I64 : K_MPI;
    case K_FLOAT_BY_SIZE:
        return size == (int)sizeof(float) ? K_F32 : size == (int)sizeof(double) ? K_F64 : K_MPI;
    case K_COMPLEX_BY_SIZE:
        return size == (int)sizeof(float complex)    ? K_CF
               : size == (int)sizeof(double complex) ? K_CD
                                                     : K_MPI;
    default:
        return kind;
    }
}

/* Class and kind of a basic type. Types outside the table (made by
 * MPI_Type_create_f90_*) are classified by their combiner. */
static void classify(MPI_Datatype type, int *cls, int *kind)
{
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (types[i].type == type) {
            *cls = types[i].cls;
            *kind = resolve_by_size(types[i].kind, type);
            return;
        }
    }
    int ni, na, nd, comb;
    *cls = CL_OTHER;
    *kind = K_MPI;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS) return;
    if (comb == MPI_COMBINER_F90_INTEGER)
        *cls = CL_FINT, *kind = resolve_by_size(K_SINT_BY_SIZE, type);
    else if (comb == MPI_COMBINER_F90_REAL)
        *cls = CL_FLOAT, *kind = resolve_by_size(K_FLOAT_BY_SIZE, type);
    else if (comb == MPI_COMBINER_F90_COMPLEX)
        *cls = CL_COMPLEX, *kind = resolve_by_size(K_COMPLEX_BY_SIZE, type);
}

enum opc {
    O_USER,
    O_SUM,
    O_PROD,
    O_MAX,
    O_MIN,
    O_LAND,
    O_LOR,
    O_LXOR,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_MAXLOC,
    O_MINLOC,
    O_REPLACE,
    O_NO_OP
};

static int op_code(MPI_Op op)
{
    if (op == MPI_SUM) return O_SUM;
    if (op == MPI_REPLACE) return O_REPLACE;
    if (op == MPI_NO_OP) return O_NO_OP;
    if (op == MPI_MAX) return O_MAX;
    if (op == MPI_MIN) return O_MIN;
    if (op == MPI_PROD) return O_PROD;
    if (op == MPI_BAND) return O_BAND;
    if (op == MPI_BOR) return O_BOR;
    if (op == MPI_BXOR) return O_BXOR;
    if (op == MPI_LAND) return O_LAND;
    if (op == MPI_LOR) return O_LOR;
    if (op == MPI_LXOR) return O_LXOR;
    if (op == MPI_MAXLOC) return O_MAXLOC;
    if (op == MPI_MINLOC) return O_MINLOC;
    return O_USER;
}

/* MPI's table of which op applies to which class of type. */
static int op_allowed(int opc, int cls)
{
    switch (opc) {
    case O_REPLACE:
    case O_NO_OP:
        return 1;
    case O_MAX:
    case O_MIN:
        return cls == CL_CINT || cls == CL_FINT || cls == CL_FLOAT || cls == CL_MULTI;
    case O_SUM:
    case O_PROD:
        return cls == CL_CINT || cls == CL_FINT || cls == CL_FLOAT || cls == CL_COMPLEX ||
               cls == CL_MULTI;
    case O_LAND:
    case O_LOR:
    case O_LXOR:
        return cls == CL_CINT || cls == CL_LOGICAL;
    case O_BAND:
    case O_BOR:
    case O_BXOR:
        return cls == CL_CINT || cls == CL_FINT || cls == CL_BYTE || cls == CL_MULTI;
    case O_MAXLOC:
    case O_MINLOC:
        return cls == CL_PAIR;
    default:
        return 0;
    }
}

/* classify() scans a table and may ask MPI for sizes: remember the last few
 * answers per thread (basic types are predefined or made by
 * MPI_Type_create_f90_*, which returns the same handle for the same
 * arguments, so an answer never changes). */
static void classify_memo(MPI_Datatype type, int *cls, int *kind)
{
    static _Thread_local struct {
        MPI_Datatype type;
        int cls, kind, valid;
    } memo[4];
    static _Thread_local unsigned memo_next;
    for (int i = 0; i < 4; i++)
        if (memo[i].valid && memo[i].type == type) {
            *cls = memo[i].cls;
            *kind = memo[i].kind;
            return;
        }
    classify(type, cls, kind);
    unsigned slot = memo_next++ & 3;
    memo[slot].type = type;
    memo[slot].cls = *cls;
    memo[slot].kind = *kind;
    memo[slot].valid = 1;
}

int narmau_acc_check(MPI_Op op, MPI_Datatype basic)
{
    int cls, kind;
    if (basic == MPI_DATATYPE_NULL) return NARMA_ERR_TYPE;
    int opc = op_code(op);
    if (opc == O_USER) return NARMA_ERR_OP;
    classify_memo(basic, &cls, &kind);
    return op_allowed(opc, cls) ? 0 : NARMA_ERR_OP;
}

/* ---- computing one element --------------------------------------------- */

/* Scratch big enough and aligned for any basic element. */
typedef union {
    long double ld;
    long double complex cld;
    struct {
        long double v;
        int i;
    } ldi;
    uint64_t u64;
    unsigned char bytes[64];
} elem_buf;

#define PAIR(T) \
    struct {    \
        T v;    \
        int i;  \
    }

/* Integers: arithmetic wraps (done in the unsigned type), logical ops give 0/1. */
#define INT_OPS(T, U)               \
    {                               \
        T *x = acc;                 \
        T y = *(const T *)in;       \
        switch (opc) {              \
        case O_SUM:                 \
            *x = (T)((U)*x + (U)y); \
            return 0;               \
        case O_PROD:                \
            *x = (T)((U)*x * (U)y); \
            return 0;               \
        case O_MAX:                 \
            if (y > *x) *x = y;     \
            return 0;               \
        case O_MIN:                 \
            if (y < *x) *x = y;     \
            return 0;               \
        case O_LAND:                \
            *x = (T)(*x && y);      \
            return 0;               \
        case O_LOR:                 \
            *x = (T)(*x || y);      \
            return 0;               \
        case O_LXOR:                \
            *x = (T)(!*x != !y);    \
            return 0;               \
        case O_BAND:                \
            *x = (T)(*x & y);       \
            return 0;               \
        case O_BOR:                 \
            *x = (T)(*x | y);       \
            return 0;               \
        case O_BXOR:                \
            *x = (T)(*x ^ y);       \
            return 0;               \
        default:                    \
            return -1;              \
        }                           \
    }

#define FLOAT_OPS(T)            \
    {                           \
        T *x = acc;             \
        T y = *(const T *)in;   \
        switch (opc) {          \
        case O_SUM:             \
            *x = *x + y;        \
            return 0;           \
        case O_PROD:            \
            *x = *x * y;        \
            return 0;           \
        case O_MAX:             \
            if (y > *x) *x = y; \
            return 0;           \
        case O_MIN:             \
            if (y < *x) *x = y; \
            return 0;           \
        default:                \
            return -1;          \
        }                       \
    }

#define COMPLEX_OPS(T)        \
    {                         \
        T *x = acc;           \
        T y = *(const T *)in; \
        switch (opc) {        \
        case O_SUM:           \
            *x = *x + y;      \
            return 0;         \
        case O_PROD:          \
            *x = *x * y;      \
            return 0;         \
        default:              \
            return -1;        \
        }                     \
    }

/* MAXLOC/MINLOC: the better value wins; equal values keep the smaller index. */
#define PAIR_OPS(T)                                               \
    {                                                             \
        PAIR(T) *x = acc;                                         \
        const PAIR(T) *y = in;                                    \
        if (opc != O_MAXLOC && opc != O_MINLOC) return -1;        \
        if (x->v == y->v) {                                       \
            if (y->i < x->i) x->i = y->i;                         \
        } else if (opc == O_MAXLOC ? y->v > x->v : y->v < x->v) { \
            x->v = y->v;                                          \
            x->i = y->i;                                          \
        }                                                         \
        return 0;                                                 \
    }

/* acc = op(acc, in) on local, aligned copies. -1 if this kind needs MPI. */
static int compute_native(int kind, int opc, void *acc, const void *in)
{
    switch (kind) {
    case K_I8:
        INT_OPS(int8_t, uint8_t)
    case K_U8:
        INT_OPS(uint8_t, uint8_t)
    case K_I16:
        INT_OPS(int16_t, uint16_t)
    case K_U16:
        INT_OPS(uint16_t, uint16_t)
    case K_I32:
        INT_OPS(int32_t, uint32_t)
    case K_U32:
        INT_OPS(uint32_t, uint32_t)
    case K_I64:
        INT_OPS(int64_t, uint64_t)
    case K_U64:
        INT_OPS(uint64_t, uint64_t)
    case K_F32:
        FLOAT_OPS(float)
    case K_F64:
        FLOAT_OPS(double)
    case K_LD:
        FLOAT_OPS(long double)
    case K_CF:
        COMPLEX_OPS(float complex)
    case K_CD:
        COMPLEX_OPS(double complex)
    case K_CLD:
        COMPLEX_OPS(long double complex)
    case K_BOOL: {
        bool *x = acc;
        bool y = *(const bool *)in;
        switch (opc) {
        case O_LAND:
            *x = *x && y;
            return 0;
        case O_LOR:
            *x = *x || y;
            return 0;
        case O_LXOR:
            *x = *x != y;
            return 0;
        default:
            return -1;
        }
    }
    case K_2INT:
        PAIR_OPS(int)
    case K_FLOAT_INT:
        PAIR_OPS(float)
    case K_DOUBLE_INT:
        PAIR_OPS(double)
    case K_LONG_INT:
        PAIR_OPS(long)
    case K_SHORT_INT:
        PAIR_OPS(short)
    case K_LDOUBLE_INT:
        PAIR_OPS(long double)
    default:
        return -1;
    }
}

/* How to update the elements of one call. */
typedef struct {
    MPI_Datatype basic;
    MPI_Op op;
    int opc, kind;
    int size;               /* bytes of data per element */
    MPI_Aint stride;        /* extent of the basic type: element distance in origin/result */
    int dense;              /* size == extent: no padding inside or after the element */
    const narmau_dtype *bt; /* the basic type's blocks: where the data bytes are */
} elem_op;

/* Copy the data bytes of one element (pairs with padding have holes). */
static void copy_elem(const elem_op *e, void *dst, const void *src)
{
    if (e->dense) {
        memcpy(dst, src, (size_t)e->size);
        return;
    }
    for (int i = 0; i < e->bt->nblocks; i++)
        memcpy((char *)dst + e->bt->blocks[i].off, (const char *)src + e->bt->blocks[i].off,
               (size_t)e->bt->blocks[i].len);
}

/* acc = op(acc, in), natively or by MPI_Reduce_local (which computes
 * inout = in op inout: for MPI's commutative predefined ops the same). */
static int compute(const elem_op *e, void *acc, const void *in)
{
    if (compute_native(e->kind, e->opc, acc, in) == 0) return 0;
    return MPI_Reduce_local(in, acc, 1, e->basic, e->op) == MPI_SUCCESS ? 0 : NARMA_ERR_MPI;
}

/* One element without hardware atomics; the caller holds the lock.
 * Works on aligned copies with the members at their own offsets, reads the
 * origin before writing the result (they may be the same buffer), and
 * touches only data bytes of target memory. */
static int apply_plain(const elem_op *e, char *t, const char *o, char *r)
{
    elem_buf acc, in;
    memset(&acc, 0, sizeof(acc));
    memset(&in, 0, sizeof(in));
    if (o) copy_elem(e, &in, o);
    copy_elem(e, &acc, t);
    if (r) copy_elem(e, r, &acc);
    if (e->opc == O_NO_OP) return 0;
    if (e->opc == O_REPLACE) {
        copy_elem(e, t, &in);
        return 0;
    }
    int rc = compute(e, &acc, &in);
    if (!rc) copy_elem(e, t, &acc);
    return rc;
}

/* Whole runs of dense elements of the common kinds, computed in place
 * without copies: element by element, the origin read before the result is
 * written (they may be one buffer). Addresses aligned for T only (the caller
 * checks), so plain typed accesses are valid. Returns 0, or -1 when this
 * (kind, op) has no loop here. */
#define FAST_INT(T, U)                                                            \
    {                                                                             \
        T *t = tv;                                                                \
        const T *o = ov;                                                          \
        T *r = rv;                                                                \
        switch (opc) {                                                            \
        case O_SUM:                                                               \
            if (!r) {                                                             \
                for (MPI_Aint i = 0; i < n; i++)                                  \
                    t[i] = (T)((U)t[i] + (U)o[i]);                                \
                return 0;                                                         \
            }                                                                     \
            for (MPI_Aint i = 0; i < n; i++) {                                    \
                T y = o[i], x = t[i];                                             \
                r[i] = x;                                                         \
                t[i] = (T)((U)x + (U)y);                                          \
            }                                                                     \
            return 0;                                                             \
        case O_REPLACE:                                                           \
            for (MPI_Aint i = 0; i < n; i++) {                                    \
                T y = o[i], x = t[i];                                             \
                if (r) r[i] = x;                                                  \
                t[i] = y;                                                         \
            }                                                                     \
            return 0;                                                             \
        case O_NO_OP:                                                             \
            if (r)                                                                \
                for (MPI_Aint i = 0; i < n; i++)                                  \
                    r[i] = t[i];                                                  \
            return 0;                                                             \
        case O_MAX:                                                               \
        case O_MIN:                                                               \
            for (MPI_Aint i = 0; i < n; i++) {                                    \
                T y = o[i], x = t[i];                                             \
                if (r) r[i] = x;                                                  \
                if (opc == O_MAX ? y > x : y < x) t[i] = y;                       \
            }                                                                     \
            return 0;                                                             \
        case O_BAND:                                                              \
        case O_BOR:                                                               \
        case O_BXOR:                                                              \
            for (MPI_Aint i = 0; i < n; i++) {                                    \
                T y = o[i], x = t[i];                                             \
                if (r) r[i] = x;                                                  \
                t[i] = (T)(opc == O_BAND ? x & y : opc == O_BOR ? x | y : x ^ y); \
            }                                                                     \
            return 0;                                                             \
        default:                                                                  \
            return -1;                                                            \
        }                                                                         \
    }

#define FAST_FLOAT(T)                                                         \
    {                                                                         \
        T *t = tv;                                                            \
        const T *o = ov;                                                      \
        T *r = rv;                                                            \
        switch (opc) {                                                        \
        case O_SUM:                                                           \
            if (!r) {                                                         \
                for (MPI_Aint i = 0; i < n; i++)                              \
                    t[i] = t[i] + o[i];                                       \
                return 0;                                                     \
            }                                                                 \
            for (MPI_Aint i = 0; i < n; i++) {                                \
                T y = o[i], x = t[i];                                         \
                r[i] = x;                                                     \
                t[i] = x + y;                                                 \
            }                                                                 \
            return 0;                                                         \
        case O_REPLACE:                                                       \
            for (MPI_Aint i = 0; i < n; i++) {                                \
                T y = o[i], x = t[i];                                         \
                if (r) r[i] = x;                                              \
                t[i] = y;                                                     \
            }                                                                 \
            return 0;                                                         \
        case O_NO_OP:                                                         \
            if (r)                                                            \
                for (MPI_Aint i = 0; i < n; i++)                              \
                    r[i] = t[i];                                              \
            return 0;                                                         \
        case O_MAX:                                                           \
        case O_MIN:                                                           \
            for (MPI_Aint i = 0; i < n; i++) { /* as FLOAT_OPS: NaNs alike */ \
                T y = o[i], x = t[i];                                         \
                if (r) r[i] = x;                                              \
                if (opc == O_MAX ? y > x : y < x) t[i] = y;                   \
            }                                                                 \
            return 0;                                                         \
        default:                                                              \
            return -1;                                                        \
        }                                                                     \
    }

static int apply_fast(int kind, int opc, void *tv, const void *ov, void *rv, MPI_Aint n)
{
    switch (kind) {
    case K_I8:
        FAST_INT(int8_t, uint8_t)
    case K_U8:
        FAST_INT(uint8_t, uint8_t)
    case K_I16:
        FAST_INT(int16_t, uint16_t)
    case K_U16:
        FAST_INT(uint16_t, uint16_t)
    case K_I32:
        FAST_INT(int32_t, uint32_t)
    case K_U32:
        FAST_INT(uint32_t, uint32_t)
    case K_I64:
        FAST_INT(int64_t, uint64_t)
    case K_U64:
        FAST_INT(uint64_t, uint64_t)
    case K_F32:
        FAST_FLOAT(float)
    case K_F64:
        FAST_FLOAT(double)
    default:
        return -1;
    }
}

static int fast_kind(int kind)
{
    return kind == K_I8 || kind == K_U8 || kind == K_I16 || kind == K_U16 || kind == K_I32 ||
           kind == K_U32 || kind == K_I64 || kind == K_U64 || kind == K_F32 || kind == K_F64;
}

void narmau_acc_lock(uint64_t *lock)
{
    for (;;) {
        uint64_t free_ = 0;
        /* acquire: pairs with the release store in narmau_acc_unlock, so the
         * previous holder's element updates are visible */
        if (narmau_atomic_cas_u64(lock, &free_, 1)) return;
        /* wait with plain reads until it looks free; yield after a while so
         * an oversubscribed holder can run */
        for (int spins = 0; narmau_atomic_load_relaxed_u64(lock) != 0; spins++) {
            if (spins < 1000) {
                narmau_cpu_relax();
            } else {
                sched_yield();
                spins = 0;
            }
        }
    }
}

void narmau_acc_unlock(uint64_t *lock)
{
    /* release: publishes the element updates made under the lock; pairs with
     * the acquiring cas in narmau_acc_lock */
    narmau_atomic_store_rel_u64(lock, 0);
}

static int elem_op_init(elem_op *e, MPI_Datatype basic, MPI_Op op)
{
    const narmau_dtype *b;
    int cls, rc;
    if (basic == MPI_DATATYPE_NULL) return NARMA_ERR_TYPE;
    e->basic = basic;
    e->op = op;
    e->opc = op_code(op);
    if (e->opc == O_USER) return NARMA_ERR_OP;
    classify_memo(basic, &cls, &e->kind);
    if (!op_allowed(e->opc, cls)) return NARMA_ERR_OP;
    if ((rc = narmau_dtype_get(basic, &b))) return rc;
    if (b->nblocks < 0) return NARMA_ERR_TYPE;
    e->bt = b;
    e->size = (int)b->size;
    e->stride = b->extent;
    e->dense = b->size == b->extent;
    if (e->size <= 0 || e->size > (int)sizeof(elem_buf)) return NARMA_ERR_TYPE;
    return 0;
}

int narmau_acc_apply(void *taddr, int tcount, MPI_Datatype ttype, const void *origin, void *result,
                     MPI_Op op, uint64_t *lock)
{
    const narmau_dtype *d;
    elem_op e;
    int rc;
    if (tcount < 0) return NARMA_ERR_COUNT;
    if ((rc = narmau_dtype_get(ttype, &d))) return rc;
    if ((rc = elem_op_init(&e, d->basic, op))) return rc;
    if (d->nblocks < 0 || d->size % e.size) return NARMA_ERR_TYPE;
    if (!origin && e.opc != O_NO_OP) return NARMA_ERR_ARG;
    MPI_Aint n = (MPI_Aint)tcount * (d->size / e.size);
    const char *o = origin;
    char *r = result;
    if (n == 0) return 0;

    if (lock) narmau_acc_lock(lock); /* the whole call: see the header */
    if (d->contiguous && e.dense) {  /* elements back to back */
        char *t = (char *)taddr + d->blocks[0].off;
        uintptr_t mis = (uintptr_t)t | (uintptr_t)o | (uintptr_t)r;
        if (!fast_kind(e.kind) || (mis & (uintptr_t)(e.size - 1)) != 0 ||
            apply_fast(e.kind, e.opc, t, o, r, n) != 0) {
            for (MPI_Aint i = 0; i < n && !rc; i++)
                rc = apply_plain(&e, t + i * e.size, o ? o + i * e.stride : NULL,
                                 r ? r + i * e.stride : NULL);
        }
    } else {
        /* Walk the data bytes of the type map; an element starts wherever
         * a multiple of its size has been consumed, and its bytes follow
         * its own layout (pairs with holes span two blocks). */
        MPI_Aint i = 0, consumed = 0;
        for (int inst = 0; inst < tcount && !rc; inst++) {
            char *ibase = (char *)taddr + (MPI_Aint)inst * d->extent;
            for (int bi = 0; bi < d->nblocks && !rc; bi++) {
                MPI_Aint off = d->blocks[bi].off, len = d->blocks[bi].len;
                while (len > 0 && !rc) {
                    MPI_Aint part = consumed % e.size;
                    if (part == 0) {
                        rc = apply_plain(&e, ibase + off, o ? o + i * e.stride : NULL,
                                         r ? r + i * e.stride : NULL);
                        i++;
                    }
                    MPI_Aint take = e.size - part < len ? e.size - part : len;
                    consumed += take;
                    off += take;
                    len -= take;
                }
            }
        }
    }
    if (lock) narmau_acc_unlock(lock);
    return rc;
}

int narmau_acc_cas(void *taddr, const void *origin, const void *compare, void *result,
                   MPI_Datatype type, uint64_t *lock)
{
    int cls, kind;
    const narmau_dtype *b;
    if (type == MPI_DATATYPE_NULL) return NARMA_ERR_TYPE;
    classify_memo(type, &cls, &kind);
    if (cls != CL_CINT && cls != CL_FINT && cls != CL_LOGICAL && cls != CL_BYTE &&
        cls != CL_MULTI && cls != CL_FLOAT)
        return NARMA_ERR_TYPE;
    int rc = narmau_dtype_get(type, &b);
    if (rc) return rc;
    size_t size = (size_t)b->size;
    /* result may alias origin or compare: read both first */
    elem_buf desired, expect, old;
    if (size > sizeof(elem_buf)) return NARMA_ERR_TYPE;
    memcpy(&desired, origin, size);
    memcpy(&expect, compare, size);
    if (lock) narmau_acc_lock(lock);
    memcpy(&old, taddr, size);
    if (memcmp(&old, &expect, size) == 0) memcpy(taddr, &desired, size);
    if (lock) narmau_acc_unlock(lock);
    memcpy(result, &old, size);
    return 0;
}
