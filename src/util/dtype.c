/*
 * Datatype flattening, caching and block-wise copies.
 *
 * Flattening walks the constructor tree with MPI_Type_get_envelope and
 * MPI_Type_get_contents, or their large-count forms (_c) on MPI-4 libraries:
 * those answer for every type, where MPICH refuses the int forms for types
 * made by the large-count constructors (MPI_Type_vector_c, ..., all of
 * mpi4py 4's derived types); for the other types they report no large count
 * and the int layout. Each child is itself looked up through the cache,
 * so a nested type is flattened bottom-up once. A combiner we do not decode
 * (DARRAY, the deprecated *_INTEGER ones, anything newer) and named types
 * with holes (MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, ...) are flattened by
 * "tracing": pack a buffer whose bytes hold their own offsets and read the
 * offsets back out of the packed stream, one byte of offset per pass. Only
 * when even that is too large do we keep no blocks (nblocks == -1) and copy
 * through MPI_Pack/MPI_Unpack. Offsets are computed with overflow checks: a
 * type whose blocks lie beyond what MPI_Aint can address is refused
 * (NARMA_ERR_TYPE), never wrapped.
 */
#include "util/dtype.h"
#include "util/thread.h"

#include <narma/narma.h>

#include <assert.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(MPI_Datatype) <= sizeof(uint64_t),
               "datatype handles are hashed as 64-bit keys");

/* Limits beyond which a type keeps no block list (nblocks == -1). */
#define DTYPE_MAX_BLOCKS   (1 << 22)           /* 64 MiB of block records */
#define DTYPE_TRACE_EXTENT ((MPI_Aint)1 << 26) /* bytes of scratch for tracing */
/* Blocks offered to one list, merged or not: bounds the walk of a type whose pieces keep
 * merging (the large-count constructors take counts far beyond an int). */
#define DTYPE_MAX_ADDS ((MPI_Aint)1 << 28)

/* flatten() results besides 0 and narma errors. */
#define FLAT_UNSUPPORTED (-1)

/* Decode with MPI-4's large-count calls where the MPI has them (MPICH 4 and 5; Open MPI 5 is
 * MPI-3.1 and has neither them nor the _c constructors). */
#if MPI_VERSION >= 4
#define DTYPE_LARGE_CONTENTS 1
#else
#define DTYPE_LARGE_CONTENTS 0
#endif

/* ---- block lists ------------------------------------------------------ */

typedef struct {
    narmau_block *b;
    int n, cap;
    MPI_Aint adds; /* blocks offered so far */
} blist;

/* Append a block, merging it with the previous one when they touch. A block
 * that ends beyond MPI_Aint is refused. */
static int blist_add(blist *l, MPI_Aint off, MPI_Aint len)
{
    MPI_Aint end;
    if (len <= 0) return 0;
    if (++l->adds > DTYPE_MAX_ADDS) return FLAT_UNSUPPORTED;
    if (__builtin_add_overflow(off, len, &end)) return NARMA_ERR_TYPE;
    if (l->n > 0 && l->b[l->n - 1].off + l->b[l->n - 1].len == off) { /* its end was checked */
        if (__builtin_sub_overflow(end, l->b[l->n - 1].off, &l->b[l->n - 1].len))
            return NARMA_ERR_TYPE;
        return 0;
    }
    if (l->n == l->cap) {
        if (l->cap >= DTYPE_MAX_BLOCKS) return FLAT_UNSUPPORTED;
        int cap = l->cap ? 2 * l->cap : 8;
        narmau_block *nb = realloc(l->b, (size_t)cap * sizeof(*nb));
        if (!nb) return NARMA_ERR_NO_MEM;
        l->b = nb;
        l->cap = cap;
    }
    l->b[l->n].off = off;
    l->b[l->n].len = len;
    l->n++;
    return 0;
}

/* Append reps consecutive instances of child c starting at disp. */
static int blist_emit(blist *l, const narmau_dtype *c, MPI_Aint disp, MPI_Aint reps)
{
    MPI_Aint off, len;
    if (reps <= 0 || c->size == 0) return 0;
    if (c->nblocks < 0) return FLAT_UNSUPPORTED;
    if (c->contiguous) {
        if (__builtin_add_overflow(disp, c->blocks[0].off, &off) ||
            __builtin_mul_overflow(reps, c->size, &len))
            return NARMA_ERR_TYPE;
        return blist_add(l, off, len);
    }
    /* Instance r starts at disp + r * extent. */
    MPI_Aint at = disp;
    for (MPI_Aint r = 0; r < reps; r++) {
        if (r > 0 && __builtin_add_overflow(at, c->extent, &at)) return NARMA_ERR_TYPE;
        for (int i = 0; i < c->nblocks; i++) {
            if (__builtin_add_overflow(at, c->blocks[i].off, &off)) return NARMA_ERR_TYPE;
            int rc = blist_add(l, off, c->blocks[i].len);
            if (rc) return rc;
        }
    }
    return 0;
}

/* ---- the cache ---------------------------------------------------------- */

struct entry {
    struct entry *next;
    uint64_t key;
    int checked; /* known committed (or predefined): only such entries enter the front cache,
                    whose hit checks nothing. A type first described as another type's child
                    was looked up without the check (a child need not be committed). */
    narmau_dtype d;
};

static struct {
    struct entry **bucket;
    size_t nbuckets; /* power of two */
    size_t n;
    int keyval;    /* attribute whose delete callback evicts a destroyed type */
    MPI_Comm self; /* MPI_COMM_SELF dup with MPI_ERRORS_RETURN, for MPI_Pack */
    int keyval_made;
} cache = {NULL, 0, 0, MPI_KEYVAL_INVALID, MPI_COMM_NULL, 0};

static uint64_t type_key(MPI_Datatype t)
{
    uint64_t k = 0;
    memcpy(&k, &t, sizeof(t));
    return k;
}

static size_t key_hash(uint64_t k)
{
    /* splitmix64 finaliser: MPICH handles differ in few bits, pointers in low ones */
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    k ^= k >> 31;
    return (size_t)k;
}

/* Direct-mapped front cache of recent lookups: RMA calls look the same few
 * types up several times each, and this keeps that to a compare. Cleared on
 * every eviction, so it never holds a freed entry. */
_Thread_local struct narmau_dtype_front narmau_dtype_front[NARMAU_DTYPE_FRONT]
    __attribute__((tls_model("initial-exec")));
uint64_t narmau_dtype_gen = 1;
#define front narmau_dtype_front

static inline size_t front_slot(uint64_t k) { return narmau_dtype_front_slot(k); }

/* Invalidate every thread's front cache (entries of older generations miss). */
static void front_clear(void) { __atomic_fetch_add(&narmau_dtype_gen, 1, __ATOMIC_RELAXED); }

static struct entry *cache_find(uint64_t key)
{
    if (!cache.nbuckets) return NULL;
    for (struct entry *e = cache.bucket[key_hash(key) & (cache.nbuckets - 1)]; e; e = e->next)
        if (e->key == key) return e;
    return NULL;
}

static int cache_insert(struct entry *e)
{
    if (cache.n + 1 > cache.nbuckets) {
        size_t nb = cache.nbuckets ? 2 * cache.nbuckets : 64;
        struct entry **b = calloc(nb, sizeof(*b));
        if (!b) return NARMA_ERR_NO_MEM;
        for (size_t i = 0; i < cache.nbuckets; i++) {
            struct entry *x = cache.bucket[i];
            while (x) {
                struct entry *next = x->next;
                size_t h = key_hash(x->key) & (nb - 1);
                x->next = b[h];
                b[h] = x;
                x = next;
            }
        }
        free(cache.bucket);
        cache.bucket = b;
        cache.nbuckets = nb;
    }
    size_t h = key_hash(e->key) & (cache.nbuckets - 1);
    e->next = cache.bucket[h];
    cache.bucket[h] = e;
    cache.n++;
    return 0;
}

static void entry_free(struct entry *e)
{
    free(e->d.blocks);
    free(e);
}

/* Types MPI destroyed while this thread did not hold narma's process lock (the program freed a
 * type with MPI_Type_free on one thread while another was inside narma). The attribute's delete
 * callback may then neither touch the cache nor wait for the lock: MPI may hold its own lock
 * around the callback while the narma lock's holder waits inside MPI for it. It pushes the
 * type's key on this stack instead (the node came with the attribute: no allocation there) and
 * bumps the generation, so no front cache or remembered check uses the type any more; the next
 * lookup or eviction, under the lock, evicts what the stack holds before it reads the cache, so
 * a handle MPI reuses for a new type is never taken for the old one. */
struct freed {
    struct freed *next;
    uint64_t key;
};
static struct freed *freed_top; /* atomic */

static void forget_key(uint64_t key);

static void freed_drain(void)
{
    if (__atomic_load_n(&freed_top, __ATOMIC_ACQUIRE) == NULL) return;
    struct freed *f = __atomic_exchange_n(&freed_top, NULL, __ATOMIC_ACQUIRE);
    while (f != NULL) {
        struct freed *next = f->next;
        forget_key(f->key);
        free(f);
        f = next;
    }
}

void narmau_dtype_forget(MPI_Datatype type)
{
    freed_drain();
    forget_key(type_key(type));
}

static void forget_key(uint64_t key)
{
    if (!cache.nbuckets) return;
    struct entry **pp = &cache.bucket[key_hash(key) & (cache.nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        if ((*pp)->key == key) {
            struct entry *e = *pp;
            *pp = e->next;
            cache.n--;
            front_clear();
            entry_free(e);
            return;
        }
    }
}

static int mpi_usable(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

void narmau_dtype_cache_clear(void)
{
    freed_drain();
    front_clear();
    for (size_t i = 0; i < cache.nbuckets; i++) {
        struct entry *e = cache.bucket[i];
        while (e) {
            struct entry *next = e->next;
            entry_free(e);
            e = next;
        }
    }
    free(cache.bucket);
    cache.bucket = NULL;
    cache.nbuckets = cache.n = 0;
    if (mpi_usable()) {
        /* Types still carrying the attribute keep the callback; it then finds
         * nothing to evict. */
        if (cache.keyval_made) MPI_Type_free_keyval(&cache.keyval);
        if (cache.self != MPI_COMM_NULL) MPI_Comm_free(&cache.self);
    }
    cache.keyval_made = 0;
    cache.keyval = MPI_KEYVAL_INVALID;
    cache.self = MPI_COMM_NULL;
}

/* MPI destroyed a type we described: its handle may be reused, so evict. attr is the node
 * watch_type attached; it goes on freed_top, drained at once when this thread holds narma's lock
 * (narma freed the type), else by the next lookup. */
static int evict_on_free(MPI_Datatype type, int keyval, void *attr, void *extra)
{
    (void)type;
    (void)keyval;
    (void)extra;
    struct freed *f = attr;
    f->next = __atomic_load_n(&freed_top, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&freed_top, &f->next, f, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED)) {
    }
    /* Only a holder of the lock may edit the cache. With the lock off narma's calls are
     * serialised, but MPI may still be at MPI_THREAD_MULTIPLE (NARMA_THREADS=off) and the
     * program free a type on another thread meanwhile. */
    if (narmau_lock_held()) {
        freed_drain();
        return MPI_SUCCESS;
    }
    /* Invalidate the front caches and the remembered checks. A thread may see the new
     * generation before the push and drain nothing; that is harmless: a lookup of a handle MPI
     * reuses for a new type comes after MPI created it, hence after this callback returned
     * (MPI's handle pool, then however the program passed the handle on), and sees the push. */
    front_clear();
    return MPI_SUCCESS;
}

static int self_comm(MPI_Comm *out)
{
    if (cache.self == MPI_COMM_NULL) {
        if (MPI_Comm_dup(MPI_COMM_SELF, &cache.self) != MPI_SUCCESS) return NARMA_ERR_MPI;
        MPI_Comm_set_errhandler(cache.self, MPI_ERRORS_RETURN);
    }
    *out = cache.self;
    return 0;
}

/* Attach the eviction attribute to a derived type (once). */
static int watch_type(MPI_Datatype type)
{
    if (!cache.keyval_made) {
        if (MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, evict_on_free, &cache.keyval, NULL) !=
            MPI_SUCCESS)
            return NARMA_ERR_MPI;
        cache.keyval_made = 1;
    }
    void *val;
    int flag = 0;
    if (MPI_Type_get_attr(type, cache.keyval, &val, &flag) != MPI_SUCCESS) return NARMA_ERR_MPI;
    /* Setting it again would run the callback on the old value and evict
     * the entry we are about to insert. */
    if (flag) return 0;
    struct freed *f = malloc(sizeof(*f));
    if (f == NULL) return NARMA_ERR_NO_MEM;
    f->next = NULL;
    f->key = type_key(type);
    if (MPI_Type_set_attr(type, cache.keyval, f) != MPI_SUCCESS) {
        free(f);
        return NARMA_ERR_MPI;
    }
    return 0;
}

/* ---- flattening --------------------------------------------------------- */

static int lookup(MPI_Datatype type, int check_commit, const narmau_dtype **out);

/* Flatten by tracing: pack a scratch image of one instance whose bytes hold
 * their own offsets, once per byte of offset, and rebuild the type map. */
static int flatten_by_tracing(MPI_Datatype type, narmau_dtype *d, blist *out)
{
    if (d->size == 0) return 0;
    if (d->true_extent > DTYPE_TRACE_EXTENT || d->size > DTYPE_TRACE_EXTENT || d->size > INT32_MAX)
        return FLAT_UNSUPPORTED;
    int rc = 0;
    MPI_Comm comm;
    MPI_Datatype dup = MPI_DATATYPE_NULL;
    unsigned char *image = malloc((size_t)d->true_extent);
    unsigned char *packed = malloc((size_t)d->size);
    MPI_Aint *offs = calloc((size_t)d->size, sizeof(*offs));
    if (!image || !packed || !offs) {
        rc = NARMA_ERR_NO_MEM;
        goto out;
    }
    if ((rc = self_comm(&comm))) goto out;
    /* A child may be uncommitted: trace a committed duplicate. */
    if (MPI_Type_dup(type, &dup) != MPI_SUCCESS || MPI_Type_commit(&dup) != MPI_SUCCESS) {
        rc = NARMA_ERR_MPI;
        goto out;
    }
    int passes = 1;
    while (passes < 8 && ((uint64_t)(d->true_extent - 1) >> (8 * passes)))
        passes++;
    const char *base = (const char *)image - d->true_lb; /* address of the instance */
    for (int p = 0; p < passes; p++) {
        for (MPI_Aint i = 0; i < d->true_extent; i++)
            image[i] = (unsigned char)((uint64_t)i >> (8 * p));
        int pos = 0;
        if (MPI_Pack(base, 1, dup, packed, (int)d->size, &pos, comm) != MPI_SUCCESS) {
            rc = NARMA_ERR_MPI;
            goto out;
        }
        if (pos != d->size) { /* not a raw packed format: give up on blocks */
            rc = FLAT_UNSUPPORTED;
            goto out;
        }
        for (MPI_Aint j = 0; j < d->size; j++)
            offs[j] |= (MPI_Aint)packed[j] << (8 * p);
    }
    for (MPI_Aint j = 0; j < d->size && !rc; j++)
        rc = blist_add(out, d->true_lb + offs[j], 1);
out:
    if (dup != MPI_DATATYPE_NULL) MPI_Type_free(&dup);
    free(image);
    free(packed);
    free(offs);
    return rc;
}

/* Basic type of a composite: the children's common basic type, or NULL. */
static void vote_basic(narmau_dtype *d, int *voted, const narmau_dtype *c)
{
    if (!*voted) {
        d->basic = c->basic;
        d->basic_size = c->basic_size;
        *voted = 1;
    } else if (d->basic != c->basic) {
        d->basic = MPI_DATATYPE_NULL;
        d->basic_size = 0;
    }
}

/* ---- constructors ------------------------------------------------------- */

/* How a type was made: its combiner and how many arguments of each kind it took (nc > 0 only
 * for types made by MPI-4's large-count constructors). */
typedef struct {
    MPI_Count ni, na, nc, nd;
    int comb;
} envelope;

/* Returns MPI's code. */
static int get_envelope(MPI_Datatype t, envelope *e)
{
#if DTYPE_LARGE_CONTENTS
    return MPI_Type_get_envelope_c(t, &e->ni, &e->na, &e->nc, &e->nd, &e->comb);
#else
    int ni = 0, na = 0, nd = 0;
    int rc = MPI_Type_get_envelope(t, &ni, &na, &nd, &e->comb);
    e->ni = ni;
    e->na = na;
    e->nc = 0;
    e->nd = nd;
    return rc;
#endif
}

int narmau_dtype_is_named(MPI_Datatype type)
{
    envelope e;
    return get_envelope(type, &e) == MPI_SUCCESS && e.comb == MPI_COMBINER_NAMED;
}

/* The arguments of one constructor call as MPI_Type_get_contents(_c) returns them, in one of
 * the two layouts of the MPI standard's table (MPI-4.1, section 5.1.13): the int one, for types
 * made by the int constructors, or the large-count one (nc > 0), which holds every count,
 * blocklength, displacement and stride in c[] in the order the constructor takes them; a
 * subarray's ndims and order stay in i[] (i[0], i[1]). */
typedef struct {
    const int *i;
    const MPI_Aint *a;
    const MPI_Count *c;
    int large;
} args;

/* Without the _c calls no type has the large layout (and the compiler sees no read of c[]). */
#define LARGE(x) (DTYPE_LARGE_CONTENTS && (x)->large)

/* An argument the int layout holds in i[ii], the large one in c[ci]. */
static MPI_Count arg_i(const args *x, MPI_Count ii, MPI_Count ci)
{
    return LARGE(x) ? x->c[ci] : x->i[ii];
}

/* An argument the int layout holds in a[ai] (an MPI_Aint), the large one in c[ci]. */
static MPI_Count arg_a(const args *x, MPI_Count ai, MPI_Count ci)
{
    return LARGE(x) ? x->c[ci] : x->a[ai];
}

/* Bound on a layout's count, so that its array sizes (up to 3 * count + 2) are computed
 * without overflow; MPI could not have stored more arguments anyway. */
#define DTYPE_MAX_ARGS ((MPI_Count)1 << 48)

/* Whether MPI returned every argument that the combiner's layout has us read; *n is its count
 * (blocks, or a subarray's dimensions). 0 for combiners we do not decode and for layouts other
 * than the standard's: the type is then traced. */
static int layout_ok(const envelope *e, const args *x, MPI_Count *n)
{
    const int L = LARGE(x);
    MPI_Count ni = 0, na = 0, nc = 0, nd = 1, k = 0;
    switch (e->comb) {
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
        if ((L ? e->nc : e->ni) < 1) return 0;
        k = arg_i(x, 0, 0);
        break;
    case MPI_COMBINER_SUBARRAY:
        if (e->ni < 1) return 0;
        k = x->i[0];
        break;
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* lb and extent: MPI_Type_get_extent tells them */
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        break;
    default:
        return 0;
    }
    if (k < 0 || k > DTYPE_MAX_ARGS) return 0;
    switch (e->comb) {
    case MPI_COMBINER_CONTIGUOUS: /* count */
        ni = L ? 0 : 1;
        nc = L ? 1 : 0;
        break;
    case MPI_COMBINER_VECTOR: /* count, blocklength, stride */
        ni = L ? 0 : 3;
        nc = L ? 3 : 0;
        break;
    case MPI_COMBINER_HVECTOR: /* the same; the int layout's stride in a[0] */
        ni = L ? 0 : 2;
        na = L ? 0 : 1;
        nc = L ? 3 : 0;
        break;
    case MPI_COMBINER_INDEXED: /* count, k blocklengths, k displacements */
        ni = L ? 0 : 1 + 2 * k;
        nc = L ? 1 + 2 * k : 0;
        break;
    case MPI_COMBINER_HINDEXED: /* the same; the int layout's displacements in a[] */
    case MPI_COMBINER_STRUCT:   /* and k types */
        ni = L ? 0 : 1 + k;
        na = L ? 0 : k;
        nc = L ? 1 + 2 * k : 0;
        nd = e->comb == MPI_COMBINER_STRUCT ? k : 1;
        break;
    case MPI_COMBINER_INDEXED_BLOCK: /* count, blocklength, k displacements */
        ni = L ? 0 : 2 + k;
        nc = L ? 2 + k : 0;
        break;
    case MPI_COMBINER_HINDEXED_BLOCK: /* the same; the int layout's displacements in a[] */
        ni = L ? 0 : 2;
        na = L ? 0 : k;
        nc = L ? 2 + k : 0;
        break;
    case MPI_COMBINER_SUBARRAY: /* ndims, k sizes, k subsizes, k starts, order */
        ni = L ? 2 : 2 + 3 * k;
        nc = L ? 3 * k : 0;
        break;
    default:
        break;
    }
    *n = k;
    return e->ni >= ni && e->na >= na && e->nc >= nc && e->nd >= nd;
}

/* v as an MPI_Aint (MPI_Count may be the wider type). */
static int to_aint(MPI_Count v, MPI_Aint *out)
{
    *out = (MPI_Aint)v;
    return (MPI_Count)*out == v;
}

/* reps instances of c at disp units of unit bytes (1, or the child's extent for displacements
 * counted in elements). */
static int emit_at(blist *l, const narmau_dtype *c, MPI_Count disp, MPI_Aint unit, MPI_Count reps)
{
    MPI_Aint d, r;
    if (reps <= 0 || c->size == 0) return 0;
    if (!to_aint(disp, &d) || !to_aint(reps, &r) || __builtin_mul_overflow(d, unit, &d))
        return NARMA_ERR_TYPE;
    return blist_emit(l, c, d, r);
}

/* count blocks of blocklen instances of c, block i at i * stride bytes (vector, hvector). */
static int flatten_strided(const narmau_dtype *c, MPI_Count count, MPI_Count blocklen,
                           MPI_Aint stride, blist *out)
{
    MPI_Aint n, bl, run;
    if (count <= 0 || blocklen <= 0 || c->size == 0) return 0;
    if (!to_aint(count, &n) || !to_aint(blocklen, &bl)) return NARMA_ERR_TYPE;
    /* Blocks that abut make one block, without a walk over them. */
    if (c->contiguous && !__builtin_mul_overflow(bl, c->size, &run) && (n == 1 || stride == run))
        return __builtin_mul_overflow(n, bl, &run) ? NARMA_ERR_TYPE : blist_emit(out, c, 0, run);
    for (MPI_Aint i = 0; i < n; i++) {
        MPI_Aint disp;
        if (__builtin_mul_overflow(i, stride, &disp)) return NARMA_ERR_TYPE;
        int rc = blist_emit(out, c, disp, bl);
        if (rc) return rc;
    }
    return 0;
}

/* A subarray of nd dimensions: its runs along the fastest dimension, row by row in memory
 * order. Where the child is contiguous, a run that fills its dimension joins the rows of the
 * next slower one into one run (a whole array is one block, without a walk). */
static int flatten_subarray(const args *x, MPI_Count ndims, const narmau_dtype *c, blist *out)
{
    if (ndims < 1 || ndims > INT_MAX) return FLAT_UNSUPPORTED; /* MPI takes an int ndims >= 1 */
    if (c->size == 0) return 0;
    const int nd = (int)ndims, order = LARGE(x) ? x->i[1] : x->i[1 + 3 * nd];
    MPI_Aint *v = malloc((size_t)nd * 5 * sizeof(*v)), span;
    if (!v) return NARMA_ERR_NO_MEM;
    /* Index k counts dimensions from the fastest (0) to the slowest (nd - 1). */
    MPI_Aint *sz = v, *sub = v + nd, *st = v + 2 * nd, *stride = v + 3 * nd, *idx = v + 4 * nd;
    int rc = 0, empty = 0;
    for (int k = 0; k < nd && !rc; k++) {
        const MPI_Count dim = order == MPI_ORDER_C ? nd - 1 - k : k;
        idx[k] = 0;
        stride[k] = c->extent;
        if (!to_aint(arg_i(x, 1 + dim, dim), &sz[k]) ||
            !to_aint(arg_i(x, 1 + nd + dim, nd + dim), &sub[k]) ||
            !to_aint(arg_i(x, 1 + 2 * (MPI_Count)nd + dim, 2 * (MPI_Count)nd + dim), &st[k]) ||
            (k > 0 && __builtin_mul_overflow(stride[k - 1], sz[k - 1], &stride[k])))
            rc = NARMA_ERR_TYPE;
        empty |= sub[k] <= 0;
    }
    /* The whole array's extent must be addressable too. */
    if (!rc && __builtin_mul_overflow(stride[nd - 1], sz[nd - 1], &span)) rc = NARMA_ERR_TYPE;
    if (rc || empty) goto out;
    int f = 0; /* the dimension runs go along, after joining the full ones below it */
    MPI_Aint run = sub[0];
    while (c->contiguous && f + 1 < nd && sub[f] == sz[f]) {
        f++;
        if (__builtin_mul_overflow(sub[f], stride[f] / c->extent, &run)) {
            rc = NARMA_ERR_TYPE;
            goto out;
        }
    }
    for (;;) {
        MPI_Aint disp = 0, at;
        for (int k = 0; k < nd && !rc; k++)
            if (__builtin_add_overflow(st[k], idx[k], &at) ||
                __builtin_mul_overflow(at, stride[k], &at) ||
                __builtin_add_overflow(disp, at, &disp))
                rc = NARMA_ERR_TYPE;
        if (!rc) rc = blist_emit(out, c, disp, run);
        if (rc) break;
        /* next row: increment the dimensions slower than f, the fastest of them first */
        int k;
        for (k = f + 1; k < nd; k++) {
            if (++idx[k] < sub[k]) break;
            idx[k] = 0;
        }
        if (k >= nd) break;
    }
out:
    free(v);
    return rc;
}

/* n zeroed elements of sz bytes, one more so that none is empty; NULL if n < 0 or too many. */
static void *alloc_n(MPI_Count n, size_t sz)
{
    if (n < 0 || (uint64_t)n >= SIZE_MAX / sz) return NULL;
    return calloc((size_t)n + 1, sz);
}

/* Fill d->basic and the block list of a derived type from its constructor. */
static int flatten_derived(MPI_Datatype type, narmau_dtype *d, blist *out)
{
    envelope e;
    int rc = 0, voted = 0;
    MPI_Count ngot = 0, n = 0;
    if (get_envelope(type, &e) != MPI_SUCCESS) return NARMA_ERR_MPI;
    int *ints = alloc_n(e.ni, sizeof(*ints));
    MPI_Aint *aints = alloc_n(e.na, sizeof(*aints));
    MPI_Count *counts = alloc_n(e.nc, sizeof(*counts));
    MPI_Datatype *types = alloc_n(e.nd, sizeof(*types));
    const narmau_dtype **kids = alloc_n(e.nd, sizeof(*kids));
    if (!ints || !aints || !counts || !types || !kids) {
        rc = NARMA_ERR_NO_MEM;
        goto out;
    }
#if DTYPE_LARGE_CONTENTS
    rc = MPI_Type_get_contents_c(type, e.ni, e.na, e.nc, e.nd, ints, aints, counts, types);
#else
    rc = MPI_Type_get_contents(type, (int)e.ni, (int)e.na, (int)e.nd, ints, aints, types);
#endif
    if (rc != MPI_SUCCESS) {
        rc = NARMA_ERR_MPI;
        goto out;
    }
    ngot = e.nd;
    for (MPI_Count i = 0; i < e.nd; i++) {
        if ((rc = lookup(types[i], 0, &kids[i]))) goto out;
        vote_basic(d, &voted, kids[i]);
    }
    const args x = {ints, aints, counts, e.nc > 0};
    const narmau_dtype *c = kids[0];
    if (!layout_ok(&e, &x, &n)) { /* DARRAY and anything else */
        rc = flatten_by_tracing(type, d, out);
        goto out;
    }
    switch (e.comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        rc = blist_emit(out, c, 0, 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = emit_at(out, c, 0, 1, arg_i(&x, 0, 0));
        break;
    case MPI_COMBINER_VECTOR: /* stride in elements */
    case MPI_COMBINER_HVECTOR: {
        const MPI_Count count = arg_i(&x, 0, 0),
                        stride = e.comb == MPI_COMBINER_VECTOR ? arg_i(&x, 2, 2) : arg_a(&x, 0, 2);
        MPI_Aint bytes = 0; /* one block: no stride */
        int bad = count > 1 && !to_aint(stride, &bytes);
        if (!bad && count > 1 && e.comb == MPI_COMBINER_VECTOR)
            bad = __builtin_mul_overflow(bytes, c->extent, &bytes);
        rc = bad ? NARMA_ERR_TYPE : flatten_strided(c, count, arg_i(&x, 1, 1), bytes, out);
        break;
    }
    case MPI_COMBINER_INDEXED: /* displacements in elements */
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
        for (MPI_Count k = 0; k < n && !rc; k++) {
            const narmau_dtype *kid = e.comb == MPI_COMBINER_STRUCT ? kids[k] : c;
            if (e.comb == MPI_COMBINER_INDEXED)
                rc = emit_at(out, kid, arg_i(&x, 1 + n + k, 1 + n + k), kid->extent,
                             arg_i(&x, 1 + k, 1 + k));
            else
                rc = emit_at(out, kid, arg_a(&x, k, 1 + n + k), 1, arg_i(&x, 1 + k, 1 + k));
        }
        break;
    case MPI_COMBINER_INDEXED_BLOCK: /* displacements in elements */
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (MPI_Count k = 0; k < n && !rc; k++) {
            if (e.comb == MPI_COMBINER_INDEXED_BLOCK)
                rc = emit_at(out, c, arg_i(&x, 2 + k, 2 + k), c->extent, arg_i(&x, 1, 1));
            else
                rc = emit_at(out, c, arg_a(&x, k, 2 + k), 1, arg_i(&x, 1, 1));
        }
        break;
    case MPI_COMBINER_SUBARRAY:
        rc = flatten_subarray(&x, n, c, out);
        break;
    default:
        break;
    }
out:
    /* Children are looked up before their handles are released: an MPI that
     * returned fresh objects would destroy them (and evict them) here. */
    for (MPI_Count i = 0; i < ngot; i++)
        if (!narmau_dtype_is_named(types[i])) MPI_Type_free(&types[i]);
    free(ints);
    free(aints);
    free(counts);
    free(types);
    free(kids);
    return rc;
}

/* Describe a type not in the cache. */
static int describe(MPI_Datatype type, narmau_dtype *d)
{
    envelope e;
    int rc;
    MPI_Count size;
    blist l = {NULL, 0, 0, 0};

    if (get_envelope(type, &e) != MPI_SUCCESS || MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent(type, &d->lb, &d->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &d->true_lb, &d->true_extent) != MPI_SUCCESS)
        return NARMA_ERR_MPI;
    if (size < 0 || !to_aint(size, &d->size)) return NARMA_ERR_TYPE; /* MPI_UNDEFINED: too big */
    d->basic = MPI_DATATYPE_NULL;
    d->basic_size = 0;

    int leaf = e.comb == MPI_COMBINER_NAMED || e.comb == MPI_COMBINER_F90_REAL ||
               e.comb == MPI_COMBINER_F90_COMPLEX || e.comb == MPI_COMBINER_F90_INTEGER;
    if (leaf) {
        d->basic = type;
        d->basic_size = (int)d->size;
        if (d->size == d->true_extent) /* no holes: one block */
            rc = blist_add(&l, d->true_lb, d->size);
        else /* pair types with padding */
            rc = flatten_by_tracing(type, d, &l);
    } else {
        rc = flatten_derived(type, d, &l);
    }
    if (rc == FLAT_UNSUPPORTED) {
        free(l.b);
        l.b = NULL;
        l.n = -1;
        rc = 0;
    }
    if (rc) {
        free(l.b);
        return rc;
    }
    d->blocks = l.b;
    d->nblocks = l.n;
    d->contiguous = d->size == 0 || (l.n == 1 && d->extent == d->size);
    return 0;
}

/* MPI reports use of an uncommitted type from MPI_Pack; ask it for nothing. */
static int check_committed(MPI_Datatype type)
{
    MPI_Comm comm;
    char dummy;
    int pos = 0, rc = self_comm(&comm);
    if (rc) return rc;
    return MPI_Pack(&dummy, 0, type, &dummy, 0, &pos, comm) == MPI_SUCCESS ? 0 : NARMA_ERR_TYPE;
}

static int lookup(MPI_Datatype type, int check_commit, const narmau_dtype **out)
{
    /* Also for children: an MPI whose MPI_Type_get_contents returns new objects may hand a
     * child the handle of a type freed since the top-level drain (one load when empty; entries
     * the outer lookups hold belong to live types, which a drain never evicts). */
    freed_drain();
    uint64_t key = type_key(type);
    size_t fs = front_slot(key);
    uint64_t gen = __atomic_load_n(&narmau_dtype_gen, __ATOMIC_RELAXED);
    if (front[fs].d != NULL && front[fs].key == key && front[fs].gen == gen) {
        *out = front[fs].d;
        return 0;
    }
    struct entry *e = cache_find(key);
    if (e) {
        if (!check_commit) {
            *out = &e->d;
            return 0;
        }
        if (!e->checked) { /* written only here, once: other hits only read the entry */
            int rc = check_committed(type);
            if (rc) return rc; /* still uncommitted */
            e->checked = 1;
        }
        front[fs].key = key;
        front[fs].gen = gen;
        front[fs].d = &e->d;
        *out = &e->d;
        return 0;
    }
    if (type == MPI_DATATYPE_NULL) return NARMA_ERR_TYPE;
    int rc;
    envelope env;
    if (get_envelope(type, &env) != MPI_SUCCESS) return NARMA_ERR_TYPE;
    int derived = env.comb != MPI_COMBINER_NAMED;
    if (derived && check_commit && (rc = check_committed(type))) return rc;
    e = calloc(1, sizeof(*e));
    if (!e) return NARMA_ERR_NO_MEM;
    e->key = key;
    e->checked = !derived || check_commit;
    if ((rc = describe(type, &e->d)) || (derived && (rc = watch_type(type))) ||
        (rc = cache_insert(e))) {
        entry_free(e);
        return rc;
    }
    *out = &e->d;
    return 0;
}

int narmau_dtype_get_slow(MPI_Datatype type, const narmau_dtype **out)
{
    return lookup(type, 1, out); /* which drains first */
}

/* ---- copies ------------------------------------------------------------- */

/* Position in the flattened data of count instances. */
typedef struct {
    char *base;
    const narmau_block *b;
    int nb;
    MPI_Aint extent;
    MPI_Aint inst; /* current instance (counts beyond an int: the large-count accumulates) */
    int bi;        /* current block */
    MPI_Aint done; /* bytes already taken from the current block */
    narmau_block whole;
} cursor;

static void cursor_init(cursor *c, const narmau_dtype *d, MPI_Aint count, char *base)
{
    c->base = base;
    c->inst = c->bi = 0;
    c->done = 0;
    if (d->contiguous) { /* all instances are one block */
        c->whole.off = d->nblocks > 0 ? d->blocks[0].off : 0;
        c->whole.len = (MPI_Aint)count * d->size;
        c->b = &c->whole;
        c->nb = 1;
        c->extent = 0;
    } else {
        c->b = d->blocks;
        c->nb = d->nblocks;
        c->extent = d->extent;
    }
}

/* The next run of bytes: its address, and length through *len. */
static char *cursor_run(const cursor *c, MPI_Aint *len)
{
    const narmau_block *b = &c->b[c->bi];
    *len = b->len - c->done;
    return c->base + c->inst * c->extent + b->off + c->done;
}

static void cursor_advance(cursor *c, MPI_Aint n)
{
    c->done += n;
    if (c->done == c->b[c->bi].len) {
        c->done = 0;
        if (++c->bi == c->nb) {
            c->bi = 0;
            c->inst++;
        }
    }
}

/* Types without a block list: go through MPI's packed format. */
static int copy_via_pack(void *dst, MPI_Aint dcount, MPI_Datatype dtype, const void *src,
                         MPI_Aint scount, MPI_Datatype stype)
{
    MPI_Comm comm;
    if (dcount > INT_MAX || scount > INT_MAX) return NARMA_ERR_COUNT; /* MPI_Pack's int count */
    int psize, pos = 0, rc = self_comm(&comm);
    if (rc) return rc;
    if (MPI_Pack_size((int)scount, stype, comm, &psize) != MPI_SUCCESS) return NARMA_ERR_MPI;
    void *tmp = malloc(psize > 0 ? (size_t)psize : 1);
    if (!tmp) return NARMA_ERR_NO_MEM;
    if (MPI_Pack(src, (int)scount, stype, tmp, psize, &pos, comm) != MPI_SUCCESS)
        rc = NARMA_ERR_MPI;
    int len = pos;
    pos = 0;
    if (!rc && MPI_Unpack(tmp, len, &pos, dst, (int)dcount, dtype, comm) != MPI_SUCCESS)
        rc = NARMA_ERR_MPI;
    free(tmp);
    return rc;
}

int narmau_dtype_copy(void *dst, MPI_Aint dcount, MPI_Datatype dtype, const void *src,
                      MPI_Aint scount, MPI_Datatype stype)
{
    const narmau_dtype *d, *s;
    int rc;
    if (dcount < 0 || scount < 0) return NARMA_ERR_COUNT;
    if ((rc = narmau_dtype_get(dtype, &d))) return rc;
    if (stype == dtype) /* the common case: one lookup */
        s = d;
    else if ((rc = narmau_dtype_get(stype, &s)))
        return rc;
    MPI_Aint total, dtotal;
    if (__builtin_mul_overflow(scount, s->size, &total) ||
        __builtin_mul_overflow(dcount, d->size, &dtotal))
        return NARMA_ERR_COUNT;
    if (total != dtotal) return NARMA_ERR_TYPE;
    if (total == 0) return 0;
    if (d->contiguous && s->contiguous) {
        memmove((char *)dst + d->blocks[0].off, (const char *)src + s->blocks[0].off,
                (size_t)total);
        return 0;
    }
    if (d->nblocks < 0 || s->nblocks < 0) /* MPI_Pack takes an int size */
        return total > INT_MAX ? NARMA_ERR_COUNT
                               : copy_via_pack(dst, dcount, dtype, src, scount, stype);

    cursor dc, sc;
    cursor_init(&dc, d, dcount, dst);
    cursor_init(&sc, s, scount, (char *)(uintptr_t)src);
    while (total > 0) {
        MPI_Aint dl, sl;
        char *dp = cursor_run(&dc, &dl);
        const char *sp = cursor_run(&sc, &sl);
        MPI_Aint n = dl < sl ? dl : sl;
        memcpy(dp, sp, (size_t)n);
        cursor_advance(&dc, n);
        cursor_advance(&sc, n);
        total -= n;
    }
    return 0;
}

_Static_assert(sizeof(MPI_Aint) == sizeof(ptrdiff_t), "MPI_Aint spans the address space");

void narmau_dtype_span(const narmau_dtype *d, int count, MPI_Aint *lo, MPI_Aint *hi)
{
    if (count <= 0 || d->size == 0) {
        *lo = *hi = 0;
        return;
    }
    /* instance i covers [i*extent + true_lb, i*extent + true_lb + true_extent);
     * the extent may be negative (resized types). A span MPI_Aint cannot hold
     * becomes [0, MPI_Aint's maximum), which no window contains. */
    MPI_Aint last, ub, l, h;
    if (__builtin_mul_overflow((MPI_Aint)(count - 1), d->extent, &last) ||
        __builtin_add_overflow(d->true_lb, d->true_extent, &ub) ||
        __builtin_add_overflow(d->true_lb, last < 0 ? last : 0, &l) ||
        __builtin_add_overflow(ub, last > 0 ? last : 0, &h)) {
        *lo = 0;
        *hi = (MPI_Aint)PTRDIFF_MAX;
        return;
    }
    *lo = l;
    *hi = h;
}

/* ---- large counts ------------------------------------------------------- */

int narmau_dtype_large(MPI_Count count, MPI_Datatype type, int chunk, MPI_Datatype *out)
{
    MPI_Aint lb, extent, bytes, span;
    MPI_Count size;
    *out = MPI_DATATYPE_NULL;
    if (chunk < 1) return NARMA_ERR_ARG;
    if (count < 1) return NARMA_ERR_COUNT;
    const MPI_Count q = count / chunk, r = count % chunk;
    if (q > INT_MAX) return NARMA_ERR_COUNT;
    if (MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_size_x(type, &size) != MPI_SUCCESS)
        return NARMA_ERR_TYPE;
    /* The whole access must stay addressable: its bytes and its span (count * extent). */
    if (__builtin_mul_overflow((MPI_Aint)count, (MPI_Aint)size, &bytes) ||
        __builtin_mul_overflow((MPI_Aint)count, extent < 0 ? -extent : extent, &span))
        return NARMA_ERR_COUNT;
    MPI_Datatype one = MPI_DATATYPE_NULL, chunks = MPI_DATATYPE_NULL, rest = MPI_DATATYPE_NULL;
    int rc = NARMA_SUCCESS;
    if (MPI_Type_contiguous(chunk, type, &one) != MPI_SUCCESS ||
        MPI_Type_contiguous((int)q, one, &chunks) != MPI_SUCCESS) {
        rc = NARMA_ERR_MPI;
        goto out;
    }
    if (r == 0) {
        *out = chunks;
        chunks = MPI_DATATYPE_NULL;
    } else {
        /* The remainder starts where the chunks end: q * chunk elements further. */
        int blens[2] = {1, 1};
        MPI_Aint disps[2] = {0, (MPI_Aint)(q * chunk) * extent};
        MPI_Datatype types[2] = {chunks, MPI_DATATYPE_NULL};
        if (MPI_Type_contiguous((int)r, type, &rest) != MPI_SUCCESS) {
            rc = NARMA_ERR_MPI;
            goto out;
        }
        types[1] = rest;
        if (MPI_Type_create_struct(2, blens, disps, types, out) != MPI_SUCCESS) {
            *out = MPI_DATATYPE_NULL;
            rc = NARMA_ERR_MPI;
            goto out;
        }
    }
    if (MPI_Type_commit(out) != MPI_SUCCESS) {
        MPI_Type_free(out);
        rc = NARMA_ERR_MPI;
    }
out:
    if (one != MPI_DATATYPE_NULL) MPI_Type_free(&one);
    if (chunks != MPI_DATATYPE_NULL) MPI_Type_free(&chunks);
    if (rest != MPI_DATATYPE_NULL) MPI_Type_free(&rest);
    return rc;
}
