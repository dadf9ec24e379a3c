/*
 * Retired objects of one kind, kept for reuse and never given back to malloc.
 *
 * The program holds windows, requests and error handlers as pointers. Using a freed handle is
 * erroneous in MPI, but narma answers it with an error, not a crash: so a freed object's memory
 * must stay readable, its magic saying "freed". Each kind keeps its retired objects: the last
 * NARMAU_POOL_QUARANTINE in a ring (not reused yet, so a stale copy of a handle just freed is
 * refused rather than taken for a new object), the older ones on a stack the next creation of
 * that kind takes from (a stale copy may then name the new object, as MPI's reused handles do).
 * The memory held is that of the most objects of the kind alive at once, plus the quarantine.
 * Under AddressSanitizer a retired object is poisoned past its first 8 bytes (the magic every
 * handle check reads), so narma's own use of a retired object is still reported.
 * Not thread-safe: every caller holds narma's process lock.
 */
#ifndef NARMA_UTIL_POOL_H
#define NARMA_UTIL_POOL_H

#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define NARMAU_POOL_POISON(o, n)   ASAN_POISON_MEMORY_REGION((char *)(o) + 8, (n)-8)
#define NARMAU_POOL_UNPOISON(o, n) ASAN_UNPOISON_MEMORY_REGION((o), (n))
#else
#define NARMAU_POOL_POISON(o, n)   ((void)(o), (void)(n))
#define NARMAU_POOL_UNPOISON(o, n) ((void)(o), (void)(n))
#endif

#define NARMAU_POOL_QUARANTINE 64

/* Test mode (NARMA_TEST_POOL_NO_REUSE, read at set-up): objects leaving the quarantine are kept
 * but never reused, so every new object comes from malloc (tests/mpi/test_oom.c fails them). */
extern int narmau_pool_no_reuse;

typedef struct {
    void **v; /* reusable */
    size_t n, cap;
    void *q[NARMAU_POOL_QUARANTINE]; /* retired most recently, oldest at q[head] */
    unsigned head, nq;
} narmau_pool;

/* A reusable object of size bytes (unpoisoned), or NULL when there is none: allocate one. */
static inline void *narmau_pool_take(narmau_pool *p, size_t size)
{
    if (p->n == 0) return NULL;
    void *o = p->v[--p->n];
    NARMAU_POOL_UNPOISON(o, size);
    (void)size;
    return o;
}

/* Retire o (size bytes, its magic already cleared). Without memory to remember an object that
 * leaves the quarantine, that object is abandoned, never freed: copies of its handle still read
 * valid memory. */
static inline void narmau_pool_give(narmau_pool *p, void *o, size_t size)
{
    NARMAU_POOL_POISON(o, size);
    (void)size;
    if (p->nq < NARMAU_POOL_QUARANTINE) {
        p->q[(p->head + p->nq++) % NARMAU_POOL_QUARANTINE] = o;
        return;
    }
    void *old = p->q[p->head];
    p->q[p->head] = o;
    p->head = (p->head + 1) % NARMAU_POOL_QUARANTINE;
    if (narmau_pool_no_reuse) return; /* old stays allocated: stale handles still read "freed" */
    if (p->n == p->cap) {
        size_t cap = p->cap > 0 ? 2 * p->cap : 64;
        void **v = realloc(p->v, cap * sizeof(*v));
        if (v == NULL) return;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = old;
}

#endif
