/*
 * Dynamic windows on the shm transport: the memory a rank attaches is reached
 * by the other ranks with loads and stores, as on Win_allocate windows.
 *
 * Attach moves the region's whole pages onto the process's arena (usermem.h:
 * one growing shared object per process, pages counted per page, so that
 * regions sharing pages share them, across windows too) and publishes the
 * rank's region table; detach withdraws the region, then moves back the pages
 * no other region holds. The table {regions sorted by base: base, end, moved;
 * runs: page address -> arena offset} is private memory of the owner; what
 * the peers see in shared memory is one line of the owner's segment,
 * struct narmat_dyn_pub: a version (a sequence lock: odd while the owner
 * changes it) and where the arrays are. A peer copies the arrays with
 * process_vm_readv under the version, and keeps, per target, the version it
 * copied, the attached span of its last access and a view: a range of its own
 * address space where the target's pages are mapped from the target's arena
 * (pages the target did not attach stay PROT_NONE). The hot path reads the
 * version word and compares two ranges; any change of the version drops the
 * peer's views and copies the table again.
 *
 * A view maps arena ranges, never the target's private memory, and an arena
 * range is never reused once its pages moved back: an access racing with the
 * detach of its memory (erroneous in MPI) may be lost but cannot reach memory
 * of the target other than the arena.
 *
 * Regions whose pages cannot move (the stack, file or shared mappings, pages
 * a Win_create window shares) are attached all the same, marked not moved:
 * every access to them, the owner's own included, copies through
 * process_vm_readv/writev, and accumulates take the target's accumulate lock
 * around the read-modify-write (so they stay atomic with respect to each
 * other). Window creation checks once that this process may read its peers
 * (yama's ptrace_scope=1 is met with PR_SET_PTRACER_ANY); when it may not, or
 * when no page may move at all (UCX's memory hooks on, NARMA_SHM_CREATE=0),
 * the window falls back to the mpi transport, which is faster than copying
 * every access through the kernel.
 */
#ifndef NARMAT_SHM_DYNAMIC_H
#define NARMAT_SHM_DYNAMIC_H

#include "util/atomic.h"
#include "util/dtype.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* In the owner's segment, one cache line. */
struct narmat_dyn_pub {
    uint64_t version;  /* even: table stable; odd: the owner is changing it */
    uint64_t nregions; /* entries of struct narmat_dyn_region at regions */
    uint64_t regions;  /* address in the owner's process */
    uint64_t nruns;    /* entries of struct narmat_dyn_run at runs */
    uint64_t runs;
};

struct narmat_dyn_region {
    uint64_t base, end;
    uint64_t moved; /* 1: its pages are on the arena; 0: reached through the kernel */
};

struct narmat_dyn_run {
    uint64_t addr, len, off; /* pages [addr, addr + len) at arena offset off */
};

/* What a rank tells the others at window creation. */
struct narmat_dyn_info {
    int64_t pid;
    uint64_t seg;      /* its segment's address in its own process (the probe reads it) */
    char arena[48];    /* /proc/PID/fd/N of its arena */
    uint64_t dev, ino; /* the arena's identity */
};

struct narmat_dyn_view {
    uint64_t lo, hi; /* target pages [lo, hi) */
    char *map;       /* my address of lo; NULL: none */
};

#define NARMAT_DYN_VIEWS 8

/* A region table and its runs in arrays kept from one copy to the next and grown by doubling:
 * a dynamic window's tables change at every attach, and fresh arrays each time would scatter
 * the program's own small allocations (list elements it attaches one by one) over more pages,
 * and so over more of the MPI library's registered regions (Open MPI: 64 by default). */
struct narmat_dyn_tab {
    struct narmat_dyn_region *regions;
    struct narmat_dyn_run *runs;
    size_t reg_cap, run_cap;
};

/* What I know of one target. */
struct narmat_dyn_peer {
    const uint64_t *version; /* the target's version word (shared memory) */
    uint64_t ver;            /* version of my copy of its table (odd: none yet) */
    uint64_t lo, hi;         /* attached bytes around my last access, at ver */
    uint64_t vlo, vhi;       /* the view around my last access, at ver */
    char *vmap;              /* my address of vlo (NULL: no view) */
    struct narmat_dyn_pub *pub;
    struct narmat_dyn_info info;
    int fd; /* its arena, opened on first use; -1 */
    int nregions, nruns;
    struct narmat_dyn_tab tab;   /* my copy of its table, at ver */
    struct narmat_dyn_tab spare; /* the arrays the next copy goes into */
    struct narmat_dyn_view views[NARMAT_DYN_VIEWS];
    int next_view;
};

struct narmat_dyn_local; /* my attached regions (dynamic.c) */

struct narmat_dyn {
    int rank, size;
    struct narmat_dyn_peer *peers;
    struct narmat_dyn_local *local;
};

/* New state for a window of size ranks; my table is published in pub. NULL
 * when out of memory. */
struct narmat_dyn *narmat_dyn_new(int rank, int size, struct narmat_dyn_pub *pub);
/* What to tell the others (creates the arena); 0, or -1 with why. */
int narmat_dyn_info_mine(struct narmat_dyn_info *info, const void *seg, char *why, size_t whylen);
/* Rank r's published table and identity. */
void narmat_dyn_set_peer(struct narmat_dyn *d, int r, struct narmat_dyn_pub *pub,
                         const struct narmat_dyn_info *info);
/* Can I read rank r's memory? 0, or -1 with why. */
int narmat_dyn_probe(struct narmat_dyn *d, int r, uint64_t magic, char *why, size_t whylen);
/* Let the peers read this process (yama). */
void narmat_dyn_allow_peers(void);
/* Drop all regions (pages move back), views and state. */
void narmat_dyn_free(struct narmat_dyn *d);

int narmat_dyn_attach(struct narmat_dyn *d, void *base, size_t size);
int narmat_dyn_detach(struct narmat_dyn *d, const void *base); /* NARMA_ERR_ATTACH if unknown */

/* Slow paths of the inline functions below. */
int narmat_dyn_check_slow(struct narmat_dyn *d, int t, uint64_t a, uint64_t b);
int narmat_dyn_view_slow(struct narmat_dyn *d, int t, uint64_t a, uint64_t b);

/* 0 when every byte of [a, b) is attached at target t, else -1. */
static inline int narmat_dyn_check(struct narmat_dyn *d, int t, uint64_t a, uint64_t b)
{
    struct narmat_dyn_peer *p = &d->peers[t];
    /* Acquire: pairs with the owner's release of an even version; my copy of the table
     * and the views made at that version are valid while it holds. */
    if (narmau_atomic_load_acq_u64(p->version) == p->ver && a >= p->lo && b <= p->hi) return 0;
    return narmat_dyn_check_slow(d, t, a, b);
}

/* Where target t's attached bytes [a, b) are (checked by narmat_dyn_check):
 * *map receives my address of target address a (0 returned), or 1 when they
 * must be copied through the kernel (narmat_dyn_copy); <0 on error. */
static inline int narmat_dyn_where(struct narmat_dyn *d, int t, uint64_t a, uint64_t b, char **map)
{
    struct narmat_dyn_peer *p = &d->peers[t];
    /* Acquire: as in narmat_dyn_check. */
    if (narmau_atomic_load_acq_u64(p->version) != p->ver || p->vmap == NULL || a < p->vlo ||
        b > p->vhi) {
        int rc = narmat_dyn_view_slow(d, t, a, b);
        if (rc != 0) return rc;
    }
    *map = p->vmap + (a - p->vlo);
    return 0;
}

/* Copy between buf (standing for target t's bytes from address lo) and the
 * target: only the bytes of the tcount instances of td at address disp.
 * write: 1 buf to target, 0 target to buf. NARMA error class. */
int narmat_dyn_copy(struct narmat_dyn *d, int t, uint64_t disp, const narmau_dtype *td, int tcount,
                    char *buf, uint64_t lo, int write);

#endif /* NARMAT_SHM_DYNAMIC_H */
