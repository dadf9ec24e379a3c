/*
 * User memory in shared memory: the pages holding a Win_create window are
 * moved, in place, onto a POSIX shared-memory object that the window's other
 * processes map, so that they reach the memory by load/store as for
 * Win_allocate. The addresses and contents the program sees do not change;
 * Win_free puts the pages back onto private anonymous memory (same addresses,
 * same contents).
 *
 * The move copies the pages, then maps the object over them (MAP_FIXED): a
 * write by another thread to these pages (also to bytes of other objects that
 * share a page with the window) between the two is lost. Window creation and
 * freeing are collective calls of one thread (narma is MPI_THREAD_FUNNELED);
 * programs whose other threads write near the window meanwhile must set
 * NARMA_SHM_CREATE=0. Only private, writable memory of the process itself is
 * moved (the heap, anonymous mappings, the program's own data and bss); the
 * stack, shared or file mappings of other files and memory already shared are
 * refused with the reason, and the window then uses the mpi transport.
 */
#ifndef NARMAT_SHM_USERMEM_H
#define NARMAT_SHM_USERMEM_H

#include <stddef.h>

#define NARMAT_USERMEM_NAME 48

struct narmat_usermem {
    char *start; /* first page holding the window, or NULL when nothing was moved */
    size_t len;  /* bytes of whole pages */
    char name[NARMAT_USERMEM_NAME]; /* the object's name while it is linked, else "" */
};

/* Whole pages holding [base, base + size). */
void narmat_usermem_span(const void *base, size_t size, char **start, size_t *len);

/* 1 when [start, start + len) may be moved; else 0 and a reason in why. */
int narmat_usermem_movable(const char *start, size_t len, char *why, size_t whylen);

/* Move the pages onto a new object (its name in m->name). 0, or -1 with why. */
int narmat_usermem_share(struct narmat_usermem *m, char *start, size_t len, char *why,
                         size_t whylen);

/* Map a peer's object (NULL with why on failure). */
void *narmat_usermem_map(const char *name, size_t len, char *why, size_t whylen);

/* Unlink the object's name (peers keep their mappings). */
void narmat_usermem_unlink(struct narmat_usermem *m);

/* Put the pages back onto private anonymous memory, contents kept, and unlink. */
void narmat_usermem_restore(struct narmat_usermem *m);

#endif /* NARMAT_SHM_USERMEM_H */
