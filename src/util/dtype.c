/*
 * Datatype flattening, caching and block-wise copies.
 *
 * Flattening walks the constructor tree with MPI_Type_get_envelope and
 * MPI_Type_get_contents. Each child is itself looked up through the cache, so
 * a nested type is flattened bottom-up once. A combiner we do not decode
 * (DARRAY, the deprecated *_INTEGER ones, anything newer) and named types
 * with holes (MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, ...) are flattened by
 * "tracing": pack a buffer whose bytes hold their own offsets and read the
 * offsets back out of the packed stream, one byte of offset per pass. Only
 * when even that is too large do we keep no blocks (nblocks == -1) and copy
 * through MPI_Pack/MPI_Unpack.
 */
#include "util/dtype.h"

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

/* flatten() results besides 0 and narma errors. */
#define FLAT_UNSUPPORTED (-1)

/* ---- block lists ------------------------------------------------------ */

typedef struct {
    narmau_block *b;
    int n, cap;
} blist;

/* Append a block, merging it with the previous one when they touch. */
static int blist_add(blist *l, MPI_Aint off, MPI_Aint len)
{
    if (len <= 0) return 0;
    if (l->n > 0 && l->b[l->n - 1].off + l->b[l->n - 1].len == off) {
        l->b[l->n - 1].len += len;
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
    if (reps <= 0 || c->size == 0) return 0;
    if (c->nblocks < 0) return FLAT_UNSUPPORTED;
    if (c->contiguous) return blist_add(l, disp + c->blocks[0].off, reps * c->size);
    for (MPI_Aint r = 0; r < reps; r++) {
        for (int i = 0; i < c->nblocks; i++) {
            int rc = blist_add(l, disp + r * c->extent + c->blocks[i].off, c->blocks[i].len);
            if (rc) return rc;
        }
    }
    return 0;
}

/* ---- the cache ---------------------------------------------------------- */

struct entry {
    struct entry *next;
    uint64_t key;
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

void narmau_dtype_forget(MPI_Datatype type)
{
    uint64_t key = type_key(type);
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

/* MPI destroyed a type we described: its handle may be reused, so evict. */
static int evict_on_free(MPI_Datatype type, int keyval, void *attr, void *extra)
{
    (void)keyval;
    (void)attr;
    (void)extra;
    narmau_dtype_forget(type);
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
    if (!flag && MPI_Type_set_attr(type, cache.keyval, NULL) != MPI_SUCCESS) return NARMA_ERR_MPI;
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

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    return comb == MPI_COMBINER_NAMED;
}

/* Row-major walk of a subarray: emit the fastest dimension's runs. */
static int flatten_subarray(const int *ints, const narmau_dtype *c, blist *out)
{
    int nd = ints[0];
    const int *sizes = ints + 1, *subs = ints + 1 + nd, *starts = ints + 1 + 2 * nd;
    int order = ints[1 + 3 * nd];
    int fast = order == MPI_ORDER_C ? nd - 1 : 0;
    MPI_Aint stride[nd > 0 ? nd : 1];
    int idx[nd > 0 ? nd : 1];
    MPI_Aint s = c->extent;
    for (int k = 0; k < nd; k++) {
        int dim = order == MPI_ORDER_C ? nd - 1 - k : k; /* fastest first */
        stride[dim] = s;
        s *= sizes[dim];
        idx[dim] = 0;
        if (subs[dim] <= 0) return 0;
    }
    for (;;) {
        MPI_Aint disp = 0;
        for (int dim = 0; dim < nd; dim++)
            disp += (MPI_Aint)(starts[dim] + (dim == fast ? 0 : idx[dim])) * stride[dim];
        int rc = blist_emit(out, c, disp, subs[fast]);
        if (rc) return rc;
        /* next row: increment the slower dimensions, fastest of them first */
        int k;
        for (k = 1; k < nd; k++) {
            int dim = order == MPI_ORDER_C ? nd - 1 - k : k;
            if (++idx[dim] < subs[dim]) break;
            idx[dim] = 0;
        }
        if (k >= nd) return 0;
    }
}

/* Fill d->basic and the block list of a derived type from its constructor. */
static int flatten_derived(MPI_Datatype type, narmau_dtype *d, blist *out)
{
    int ni, na, nd, comb, rc = 0, voted = 0;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS) return NARMA_ERR_MPI;
    int *ints = malloc((size_t)(ni + 1) * sizeof(*ints));
    MPI_Aint *aints = malloc((size_t)(na + 1) * sizeof(*aints));
    MPI_Datatype *types = malloc((size_t)(nd + 1) * sizeof(*types));
    const narmau_dtype **kids = calloc((size_t)nd + 1, sizeof(*kids));
    int ngot = 0;
    if (!ints || !aints || !types || !kids) {
        rc = NARMA_ERR_NO_MEM;
        goto out;
    }
    if (MPI_Type_get_contents(type, ni, na, nd, ints, aints, types) != MPI_SUCCESS) {
        rc = NARMA_ERR_MPI;
        goto out;
    }
    ngot = nd;
    for (int i = 0; i < nd; i++) {
        if ((rc = lookup(types[i], 0, &kids[i]))) goto out;
        vote_basic(d, &voted, kids[i]);
    }
    const narmau_dtype *c = kids[0];
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        rc = blist_emit(out, c, 0, 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = blist_emit(out, c, 0, ints[0]);
        break;
    case MPI_COMBINER_VECTOR:
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = blist_emit(out, c, (MPI_Aint)i * ints[2] * c->extent, ints[1]);
        break;
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = blist_emit(out, c, (MPI_Aint)i * aints[0], ints[1]);
        break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = blist_emit(out, c, (MPI_Aint)ints[1 + ints[0] + i] * c->extent, ints[1 + i]);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = blist_emit(out, c, aints[i], ints[1 + i]);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = blist_emit(out, c, (MPI_Aint)ints[2 + i] * c->extent, ints[1]);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = blist_emit(out, c, aints[i], ints[1]);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = blist_emit(out, kids[i], aints[i], ints[1 + i]);
        break;
    case MPI_COMBINER_SUBARRAY:
        rc = flatten_subarray(ints, c, out);
        break;
    default: /* DARRAY and anything else */
        rc = flatten_by_tracing(type, d, out);
        break;
    }
out:
    /* Children are looked up before their handles are released: an MPI that
     * returned fresh objects would destroy them (and evict them) here. */
    for (int i = 0; i < ngot; i++)
        if (!is_named(types[i])) MPI_Type_free(&types[i]);
    free(ints);
    free(aints);
    free(types);
    free(kids);
    return rc;
}

/* Describe a type not in the cache. */
static int describe(MPI_Datatype type, narmau_dtype *d)
{
    int ni, na, nd, comb, rc;
    MPI_Count size;
    blist l = {NULL, 0, 0};

    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent(type, &d->lb, &d->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &d->true_lb, &d->true_extent) != MPI_SUCCESS)
        return NARMA_ERR_MPI;
    d->size = (MPI_Aint)size;
    d->basic = MPI_DATATYPE_NULL;
    d->basic_size = 0;

    int leaf = comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
               comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER;
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
    uint64_t key = type_key(type);
    size_t fs = front_slot(key);
    uint64_t gen = __atomic_load_n(&narmau_dtype_gen, __ATOMIC_RELAXED);
    if (front[fs].d != NULL && front[fs].key == key && front[fs].gen == gen) {
        *out = front[fs].d;
        return 0;
    }
    struct entry *e = cache_find(key);
    if (e) {
        front[fs].key = key;
        front[fs].gen = gen;
        front[fs].d = &e->d;
        *out = &e->d;
        return 0;
    }
    if (type == MPI_DATATYPE_NULL) return NARMA_ERR_TYPE;
    int rc, ni, na, nd, comb;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS) return NARMA_ERR_TYPE;
    int derived = comb != MPI_COMBINER_NAMED;
    if (derived && check_commit && (rc = check_committed(type))) return rc;
    e = calloc(1, sizeof(*e));
    if (!e) return NARMA_ERR_NO_MEM;
    e->key = key;
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
    return lookup(type, 1, out);
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
