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
 * freeing hold narma's process lock except inside MPI collectives; under
 * MPI_THREAD_MULTIPLE pages move only with NARMA_SHM_CREATE=1 (shm.c), and
 * programs whose other threads write near the window meanwhile must set
 * NARMA_SHM_CREATE=0. Only private, writable memory of the process itself is
 * moved (the heap, anonymous mappings, the program's own data and bss); the
 * stack, shared or file mappings of other files and memory already shared are
 * refused with the reason, and the window then uses the mpi transport.
 * Another window over pages that are already moved (an east-west and a
 * north-south halo plan over the same fields) uses the same object; one that
 * covers moved and unmoved pages at once cannot be shared.
 *
 * Dynamic windows (the arena, below) move pages one by one onto one growing
 * object per process and count holders per page; pages a Win_create window
 * shares are not taken by them, and a Win_create window over arena pages is
 * refused (shared mappings), so the two kinds never hold the same page.
 */
#ifndef NARMAT_SHM_USERMEM_H
#define NARMAT_SHM_USERMEM_H

#include <stddef.h>
#include <stdint.h>

#define NARMAT_USERMEM_NAME 48

/* The system's page size (sysconf, read once; 4096 if it cannot say). */
size_t narmat_page_size(void);

/* Cross-memory attach: all n bytes from process pid at from into to (process_vm_readv; short
 * reads continued, EINTR retried). 0, or an errno value. */
int narmat_cma_read(int64_t pid, void *to, const void *from, size_t n);

struct narmat_usermem_obj; /* a range of moved pages and its object (usermem.c) */

/* One window's hold on moved pages. */
struct narmat_usermem {
    struct narmat_usermem_obj *obj; /* NULL when this window holds none */
    char *obj_start;                /* first page of the object, in this process */
    size_t obj_len;                 /* its bytes */
    char name[NARMAT_USERMEM_NAME]; /* its name, for the peers to open */
    uint64_t dev, ino;              /* its identity: a peer checks it maps this object */
};

/* Whole pages holding [base, base + size). */
void narmat_usermem_span(const void *base, size_t size, char **start, size_t *len);

/* 1 when [start, start + len) may be shared (it lies inside pages already
 * moved for another window, or it may be moved); else 0 and a reason in why. */
int narmat_usermem_movable(const char *start, size_t len, char *why, size_t whylen);

/* Share the pages: inside pages an earlier window moved, that object is
 * used again (counted); otherwise the pages move onto a new object. 0, or -1
 * with why. m->name is what the peers open: /proc/PID/fd/N of an object
 * that has no name (O_TMPFILE on /dev/shm), else its /dev/shm name. */
int narmat_usermem_share(struct narmat_usermem *m, char *start, size_t len, char *why,
                         size_t whylen);

/* Map a peer's object (NULL with why on failure, also when what name opens
 * is not the object with that identity: another process's descriptor seen
 * through another PID namespace). */
void *narmat_usermem_map(const char *name, uint64_t dev, uint64_t ino, size_t len, char *why,
                         size_t whylen);

/* Drop this window's hold; the last one unlinks the name and puts the pages
 * back onto private anonymous memory, contents kept. */
void narmat_usermem_restore(struct narmat_usermem *m);

/* 1 when UCX's memory hooks watch this process's mappings (no page may move). */
int narmat_usermem_hooks_active(void);

/* Dynamic windows (see dynamic.h): pages move one by one onto one growing
 * object of the process, the arena, and are counted per page, so that regions
 * sharing pages (with each other, across windows) share them.
 *
 * narmat_usermem_arena: the arena's name for the peers (/proc/PID/fd/N) and
 * identity, created on first use; 0, or -1 with why. */
int narmat_usermem_arena(char *name, size_t namelen, uint64_t *dev, uint64_t *ino, char *why,
                         size_t whylen);

/* Hold the whole pages [start, start + len): those not moved yet move onto the
 * arena, all gain a holder. 0, or -1 with why and nothing held (memory that
 * cannot move, or pages a Win_create window shares). */
int narmat_usermem_hold(char *start, size_t len, char *why, size_t whylen);

/* Drop a hold; pages left with no holder move back onto private memory with
 * their contents (unless the program unmapped them meanwhile). */
void narmat_usermem_unhold(char *start, size_t len);

/* The arena offset of a held page, UINT64_MAX if it is not held. */
uint64_t narmat_usermem_page_off(const void *page);

#endif /* NARMAT_SHM_USERMEM_H */
