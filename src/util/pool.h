/*
 * Retired objects of one kind, kept for reuse and never given back to malloc.
 *
 * The program holds windows, requests and error handlers as pointers. Using a freed handle is
 * erroneous in MPI, but narma answers it with an error, not a crash: so a freed object's memory
 * must stay readable, its magic saying "freed". Each kind keeps its retired objects on a stack,
 * and the next creation of that kind takes one back (a stale copy of a handle may then name the
 * new object, as MPI's reused handles do). The memory held is that of the most objects of the
 * kind alive at once. Not thread-safe: every caller holds narma's process lock.
 */
#ifndef NARMA_UTIL_POOL_H
#define NARMA_UTIL_POOL_H

#include <stdlib.h>

typedef struct {
    void **v;
    size_t n, cap;
} narmau_pool;

/* A retired object, or NULL when there is none (then allocate one). */
static inline void *narmau_pool_take(narmau_pool *p) { return p->n > 0 ? p->v[--p->n] : NULL; }

/* Retire o. Without memory to remember it, o is abandoned, never freed: copies of its handle
 * still read valid memory. */
static inline void narmau_pool_give(narmau_pool *p, void *o)
{
    if (p->n == p->cap) {
        size_t cap = p->cap > 0 ? 2 * p->cap : 64;
        void **v = realloc(p->v, cap * sizeof(*v));
        if (v == NULL) return;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = o;
}

#endif
