/*
 * Datatype descriptions for doing RMA with loads and stores.
 *
 * A datatype is flattened once into the byte blocks of one instance (in
 * type-map order, offsets relative to the buffer address, adjacent blocks
 * merged) and cached by handle. Instance i of a count lies at i * extent.
 *
 * Cache lifetime: a derived type's entry is dropped when the type is really
 * destroyed (an attribute delete callback, so MPI_Type_free by the user is
 * safe too), by narmau_dtype_forget, or by narmau_dtype_cache_clear.
 * A pointer returned by narmau_dtype_get is valid until then.
 *
 * Thread safety: none of its own; every caller holds narma's process lock
 * (util/thread.h) when it is on.
 */
#ifndef NARMA_UTIL_DTYPE_H
#define NARMA_UTIL_DTYPE_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    MPI_Aint off;
    MPI_Aint len;
} narmau_block;

typedef struct narmau_dtype {
    MPI_Datatype basic;  /* the single predefined element type the type is built from,
                            or MPI_DATATYPE_NULL if mixed */
    int basic_size;      /* data bytes of one basic element (0 if mixed); an array of
                            them strides by the basic type's extent, which is larger
                            for padded pairs (MPI_DOUBLE_INT: size 12, extent 16) */
    MPI_Aint size;       /* MPI_Type_size of one instance */
    MPI_Aint lb, extent; /* MPI_Type_get_extent */
    MPI_Aint true_lb, true_extent;
    int contiguous; /* count instances form one block of count*size bytes at true_lb
                       (one block per instance and extent == size) */
    int nblocks;    /* blocks of ONE instance; -1 if the type could not be flattened
                       (copies then go through MPI_Pack/MPI_Unpack) */
    narmau_block *blocks;
} narmau_dtype;

/* Look up (and cache) the description of a datatype. Predefined types cost no
 * MPI call after their first lookup. Returns 0, NARMA_ERR_TYPE (MPI_DATATYPE_NULL
 * or an uncommitted derived type), NARMA_ERR_NO_MEM or NARMA_ERR_MPI. */
int narmau_dtype_get_slow(MPI_Datatype type, const narmau_dtype **out);

/* Direct-mapped front cache of recent lookups, checked inline: RMA calls look
 * the same few types up several times each. Per thread (no thread ever sees
 * another's half-written entry); an entry counts only while its generation
 * equals narmau_dtype_gen, which every eviction bumps, so no thread keeps a
 * freed description. */
#define NARMAU_DTYPE_FRONT 8
struct narmau_dtype_front {
    uint64_t key, gen;
    const narmau_dtype *d;
};
extern _Thread_local struct narmau_dtype_front narmau_dtype_front[NARMAU_DTYPE_FRONT]
    __attribute__((tls_model("initial-exec")));
extern uint64_t narmau_dtype_gen;

static inline size_t narmau_dtype_front_slot(uint64_t k)
{
    return (size_t)((k ^ (k >> 7) ^ (k >> 17)) & (NARMAU_DTYPE_FRONT - 1));
}

static inline int narmau_dtype_get(MPI_Datatype type, const narmau_dtype **out)
{
    uint64_t k = 0;
    memcpy(&k, &type, sizeof(type));
    const struct narmau_dtype_front *f = &narmau_dtype_front[narmau_dtype_front_slot(k)];
    /* Relaxed: the generation only invalidates; descriptions are immutable. */
    if (f->d != NULL && f->key == k &&
        f->gen == __atomic_load_n(&narmau_dtype_gen, __ATOMIC_RELAXED)) {
        *out = f->d;
        return 0;
    }
    return narmau_dtype_get_slow(type, out);
}

/* Whether a type is predefined (MPI_COMBINER_NAMED); 0 when MPI cannot tell. Asks
 * MPI_Type_get_envelope_c on MPI-4 libraries: MPICH refuses the int form for types made by the
 * large-count constructors (MPI_Type_vector_c, ...) and aborts under MPI_ERRORS_ARE_FATAL. */
int narmau_dtype_is_named(MPI_Datatype type);

/* Drop a cached type (NARMA_Type_free calls it before MPI_Type_free; also
 * done automatically when MPI destroys the type). Unknown types are ignored. */
void narmau_dtype_forget(MPI_Datatype type);

/* Drop everything (at finalize, before MPI_Finalize). */
void narmau_dtype_cache_clear(void);

/* Copy the data of (src, scount, stype) into (dst, dcount, dtype), block by
 * block. Returns 0, NARMA_ERR_TYPE if scount*size(stype) != dcount*size(dtype)
 * or a type is invalid, NARMA_ERR_COUNT for a negative count (or a byte total MPI_Aint cannot
 * hold, or a count beyond an int for a type that goes through MPI_Pack), NARMA_ERR_NO_MEM
 * or NARMA_ERR_MPI (only types that could not be flattened use MPI). Counts are MPI_Aint: the
 * accumulates stage arrays of more than INT_MAX elements. */
int narmau_dtype_copy(void *dst, MPI_Aint dcount, MPI_Datatype dtype, const void *src,
                      MPI_Aint scount, MPI_Datatype stype);

/* Bytes touched by count instances: [*lo, *hi) relative to the buffer
 * address (true bounds, so padding outside the data is not counted).
 * count <= 0 or an empty type gives lo == hi == 0; a span that overflows
 * MPI_Aint gives [0, PTRDIFF_MAX), which no window contains. */
void narmau_dtype_span(const narmau_dtype *d, int count, MPI_Aint *lo, MPI_Aint *hi);

/* A datatype describing count consecutive elements of type (count of them at i * extent, as
 * MPI lays out count elements), for counts an int cannot hold: q = count / chunk contiguous
 * chunks of chunk elements, then the r = count % chunk left, combined by
 * MPI_Type_create_struct (just the chunks when r == 0); built from type alone, so its basic
 * element type is type's (accumulate rules hold). chunk: INT_MAX for the _c calls (smaller in
 * the unit tests), 1..INT_MAX. *out is committed; the caller frees it. Returns 0,
 * NARMA_ERR_COUNT (count < 1, q above INT_MAX, or a byte size or span MPI_Aint cannot hold),
 * NARMA_ERR_ARG (bad chunk) or NARMA_ERR_MPI. */
int narmau_dtype_large(MPI_Count count, MPI_Datatype type, int chunk, MPI_Datatype *out);

#endif /* NARMA_UTIL_DTYPE_H */
