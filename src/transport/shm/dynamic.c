/* Dynamic windows on the shm transport: see dynamic.h. */
#define _GNU_SOURCE
#include "transport/shm/dynamic.h"
#include "transport/shm/usermem.h"
#include "transport/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE_MASK_OF(x) ((x) & ~(uint64_t)(page() - 1))

static inline uint64_t page(void) { return (uint64_t)narmat_page_size(); }

static uint64_t page_up(uint64_t x) { return (x + page() - 1) & ~(page() - 1); }

/* My attached regions, in attach order, and the arrays last published. */
struct narmat_dyn_local {
    struct narmat_dyn_pub *pub;
    struct narmat_dyn_region *reg; /* attached, in attach order */
    int n, cap;
    struct narmat_dyn_tab pubtab; /* published: regions sorted by base, and their page runs */
    struct narmat_dyn_tab spare;  /* the arrays the next publication fills */
};

/* Room for need elements of elem bytes in *arr (capacity *cap, doubled); what it held is not
 * kept. 0, or -1 when out of memory. */
static int array_reserve(void **arr, size_t *cap, uint64_t need, size_t elem)
{
    if (need <= *cap && *arr != NULL) return 0;
    size_t n = *cap * 2 > need ? *cap * 2 : (size_t)need + 8;
    void *a = malloc(n * elem);
    if (a == NULL) return -1;
    free(*arr);
    *arr = a;
    *cap = n;
    return 0;
}

/* Room for nreg regions and nrun runs in t. 0, or -1 when out of memory (or for counts no
 * array can hold: a torn read of a peer's counts). */
static int tab_reserve(struct narmat_dyn_tab *t, uint64_t nreg, uint64_t nrun)
{
    const uint64_t most = SIZE_MAX / 8 / sizeof(struct narmat_dyn_region);
    if (nreg > most || nrun > most) return -1;
    void *r = t->regions, *u = t->runs;
    const int rc = array_reserve(&r, &t->reg_cap, nreg, sizeof *t->regions) != 0 ||
                   array_reserve(&u, &t->run_cap, nrun, sizeof *t->runs) != 0;
    t->regions = r;
    t->runs = u;
    return rc ? -1 : 0;
}

static void tab_swap(struct narmat_dyn_tab *a, struct narmat_dyn_tab *b)
{
    const struct narmat_dyn_tab x = *a;
    *a = *b;
    *b = x;
}

static void tab_free(struct narmat_dyn_tab *t)
{
    free(t->regions);
    free(t->runs);
    memset(t, 0, sizeof *t);
}

struct narmat_dyn *narmat_dyn_new(int rank, int size, struct narmat_dyn_pub *pub)
{
    struct narmat_dyn *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->rank = rank;
    d->size = size;
    d->peers = calloc((size_t)size, sizeof *d->peers);
    d->local = calloc(1, sizeof *d->local);
    if (d->peers == NULL || d->local == NULL) {
        free(d->peers);
        free(d->local);
        free(d);
        return NULL;
    }
    d->local->pub = pub;
    for (int r = 0; r < size; r++)
        d->peers[r].fd = -1;
    return d;
}

int narmat_dyn_info_mine(struct narmat_dyn_info *info, const void *seg, char *why, size_t whylen)
{
    memset(info, 0, sizeof *info);
    info->pid = (int64_t)getpid();
    info->seg = (uint64_t)(uintptr_t)seg;
    return narmat_usermem_arena(info->arena, sizeof info->arena, &info->dev, &info->ino, why,
                                whylen);
}

void narmat_dyn_set_peer(struct narmat_dyn *d, int r, struct narmat_dyn_pub *pub,
                         const struct narmat_dyn_info *info)
{
    struct narmat_dyn_peer *p = &d->peers[r];
    p->pub = pub;
    p->version = &pub->version;
    p->ver = 1; /* odd: no copy yet */
    p->info = *info;
}

/* yama's ptrace_scope 1 lets a process read only its descendants unless the
 * target names its readers: the ranks of a window are no one's descendants. */
void narmat_dyn_allow_peers(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;
    if (f != NULL) {
        if (fscanf(f, "%d", &scope) != 1) scope = 0;
        fclose(f);
    }
    if (scope == 1) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

int narmat_dyn_probe(struct narmat_dyn *d, int r, uint64_t magic, char *why, size_t whylen)
{
    const struct narmat_dyn_peer *p = &d->peers[r];
    uint64_t v = 0;
    int err = narmat_cma_read(p->info.pid, &v, (const void *)(uintptr_t)p->info.seg, sizeof v);
    if (err == 0 && v == magic) return 0;
    snprintf(why, whylen, "process_vm_readv of rank %d (pid %ld): %s", r, (long)p->info.pid,
             err ? strerror(err) : "read something else (another PID namespace?)");
    return -1;
}

/* ---- owner side ---- */

static int cmp_region(const void *a, const void *b)
{
    const struct narmat_dyn_region *x = a, *y = b;
    return x->base < y->base ? -1 : x->base > y->base ? 1 : (x->end > y->end) - (x->end < y->end);
}

static int cmp_run(const void *a, const void *b)
{
    const struct narmat_dyn_run *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The pages of moved region r as runs (consecutive pages at consecutive arena offsets as one),
 * written to out unless it is NULL; how many. */
static size_t region_runs(const struct narmat_dyn_region *r, struct narmat_dyn_run *out)
{
    size_t k = 0;
    struct narmat_dyn_run cur = {0, 0, 0};
    for (uint64_t a = PAGE_MASK_OF(r->base); a < page_up(r->end); a += page()) {
        const uint64_t off = narmat_usermem_page_off((void *)(uintptr_t)a);
        if (cur.len > 0 && cur.addr + cur.len == a && cur.off + cur.len == off) {
            cur.len += page();
            continue;
        }
        if (cur.len > 0 && out != NULL) out[k] = cur;
        k += cur.len > 0;
        cur = (struct narmat_dyn_run){a, page(), off};
    }
    if (cur.len > 0 && out != NULL) out[k] = cur;
    return k + (cur.len > 0);
}

/* Build the table from my regions and publish it under the version. It goes into the spare
 * arrays, never into the published ones, so a peer copying the current version reads arrays
 * that do not change; a peer still copying an older version's arrays (the spare ones now)
 * finds the version changed after its copy and copies again (copy_table). The runs are counted
 * before they are written, so the arrays hold about one run per region, not one per page. */
static int publish(struct narmat_dyn_local *l)
{
    uint64_t nruns = 0;
    for (int i = 0; i < l->n; i++)
        if (l->reg[i].moved) nruns += region_runs(&l->reg[i], NULL);
    if (tab_reserve(&l->spare, (uint64_t)l->n, nruns) != 0)
        return NARMAU_ERR(NARMA_ERR_NO_MEM, "dynamic window region table");
    struct narmat_dyn_region *regs = l->spare.regions;
    struct narmat_dyn_run *runs = l->spare.runs;
    memcpy(regs, l->reg, (size_t)l->n * sizeof *regs);
    qsort(regs, (size_t)l->n, sizeof *regs, cmp_region);
    size_t k = 0;
    for (int i = 0; i < l->n; i++)
        if (l->reg[i].moved) k += region_runs(&l->reg[i], runs + k);
    qsort(runs, k, sizeof *runs, cmp_run);
    /* Pages shared by two regions (the last of one, the first of the next) appear in the runs
     * of both, at the same arena offset: a run that starts inside the one before it keeps only
     * its pages beyond it. Then consecutive pages at consecutive offsets as one run. */
    size_t nr = 0;
    for (size_t i = 0; i < k; i++) {
        struct narmat_dyn_run x = runs[i];
        if (nr > 0) {
            struct narmat_dyn_run *last = &runs[nr - 1];
            const uint64_t end = last->addr + last->len;
            if (x.addr + x.len <= end) continue;
            if (x.addr < end) {
                const uint64_t cut = end - x.addr;
                x.addr += cut;
                x.off += cut;
                x.len -= cut;
            }
            if (end == x.addr && last->off + last->len == x.off) {
                last->len += x.len;
                continue;
            }
        }
        runs[nr++] = x;
    }
    struct narmat_dyn_pub *pub = l->pub;
    /* Odd version first: a peer that copies the table meanwhile sees the version change.
     * The fetch-add (acq_rel) and the release fence keep the stores below after it. */
    narmau_atomic_fetch_add_u64(&pub->version, 1);
    narmau_atomic_fence_rel();
    narmau_atomic_store_relaxed_u64(&pub->nregions, (uint64_t)l->n);
    narmau_atomic_store_relaxed_u64(&pub->regions, (uint64_t)(uintptr_t)regs);
    narmau_atomic_store_relaxed_u64(&pub->nruns, (uint64_t)nr);
    narmau_atomic_store_relaxed_u64(&pub->runs, (uint64_t)(uintptr_t)runs);
    /* Release: publishes the fields above; pairs with the peers' acquire loads of the version
     * (narmat_dyn_check/where, copy_table). */
    narmau_atomic_store_rel_u64(&pub->version, narmau_atomic_load_relaxed_u64(&pub->version) + 1);
    tab_swap(&l->pubtab, &l->spare);
    return NARMA_SUCCESS;
}

int narmat_dyn_attach(struct narmat_dyn *d, void *base, size_t size)
{
    struct narmat_dyn_local *l = d->local;
    const uint64_t b = (uint64_t)(uintptr_t)base;
    if (size > UINT64_MAX - b) return NARMAU_ERR(NARMA_ERR_ATTACH, "region wraps around");
    for (int i = 0; i < l->n; i++) {
        const struct narmat_dyn_region *r = &l->reg[i];
        /* Same base too: detach names a region by its base (as on the mpi transport). */
        if ((b < r->end && r->base < b + size) || b == r->base)
            return NARMAU_ERR(NARMA_ERR_ATTACH, "region overlaps one already attached");
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        struct narmat_dyn_region *r = realloc(l->reg, (size_t)cap * sizeof *r);
        if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "dynamic window regions");
        l->reg = r;
        l->cap = cap;
    }
    struct narmat_dyn_region reg = {b, b + size, 0};
    char why[256] = "";
    if (size > 0) {
        const uint64_t s0 = PAGE_MASK_OF(b);
        if (narmat_usermem_hold((char *)(uintptr_t)s0, page_up(b + size) - s0, why, sizeof why) ==
            0)
            reg.moved = 1;
        else /* one line under NARMA_VERBOSE; the region is attached all the same */
            (void)NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                             "region %p of %zu bytes is reached through the kernel: %s", base, size,
                             why);
    }
    l->reg[l->n++] = reg;
    int rc = publish(l);
    if (rc != NARMA_SUCCESS) {
        l->n--;
        if (reg.moved)
            narmat_usermem_unhold((char *)(uintptr_t)PAGE_MASK_OF(b),
                                  page_up(b + size) - PAGE_MASK_OF(b));
    }
    return rc;
}

int narmat_dyn_detach(struct narmat_dyn *d, const void *base)
{
    struct narmat_dyn_local *l = d->local;
    const uint64_t b = (uint64_t)(uintptr_t)base;
    int i = l->n - 1;
    while (i >= 0 && l->reg[i].base != b)
        i--;
    if (i < 0) return NARMAU_ERR(NARMA_ERR_ATTACH, "no region attached at %p", base);
    struct narmat_dyn_region reg = l->reg[i];
    memmove(&l->reg[i], &l->reg[i + 1], (size_t)(l->n - i - 1) * sizeof *l->reg);
    l->n--;
    /* Withdrawn from the table first: a peer that sees the new version no longer
     * reaches the pages, which may then move back. */
    int rc = publish(l);
    if (reg.moved)
        narmat_usermem_unhold((char *)(uintptr_t)PAGE_MASK_OF(reg.base),
                              page_up(reg.end) - PAGE_MASK_OF(reg.base));
    return rc;
}

/* ---- peer side ---- */

static void drop_views(struct narmat_dyn_peer *p)
{
    for (int i = 0; i < NARMAT_DYN_VIEWS; i++) {
        struct narmat_dyn_view *v = &p->views[i];
        if (v->map != NULL && v->map != (char *)(uintptr_t)v->lo) munmap(v->map, v->hi - v->lo);
        v->map = NULL;
    }
    p->vmap = NULL;
}

/* My copy of target t's table at its current version. */
static int copy_table(struct narmat_dyn *d, int t)
{
    struct narmat_dyn_peer *p = &d->peers[t];
    for (int attempt = 0;; attempt++) {
        /* Acquire: pairs with the owner's release store of the version (publish). */
        const uint64_t v = narmau_atomic_load_acq_u64(p->version);
        if (v == p->ver) return 0;
        if (v & 1) {
            sched_yield();
            continue;
        }
        const uint64_t nreg = narmau_atomic_load_relaxed_u64(&p->pub->nregions),
                       regs = narmau_atomic_load_relaxed_u64(&p->pub->regions),
                       nrun = narmau_atomic_load_relaxed_u64(&p->pub->nruns),
                       runs = narmau_atomic_load_relaxed_u64(&p->pub->runs);
        if (tab_reserve(&p->spare, nreg, nrun) != 0)
            return NARMAU_ERR(NARMA_ERR_NO_MEM, "copy of rank %d's region table", t);
        struct narmat_dyn_region *rg = p->spare.regions;
        struct narmat_dyn_run *rn = p->spare.runs;
        int ok = 1;
        if (t == d->rank) {
            memcpy(rg, (void *)(uintptr_t)regs, nreg * sizeof *rg);
            memcpy(rn, (void *)(uintptr_t)runs, nrun * sizeof *rn);
        } else {
            struct iovec li[2] = {{rg, nreg * sizeof *rg}, {rn, nrun * sizeof *rn}},
                         ri[2] = {{(void *)(uintptr_t)regs, nreg * sizeof *rg},
                                  {(void *)(uintptr_t)runs, nrun * sizeof *rn}};
            /* The arrays may be freed under us: a short read or EFAULT means a new version. */
            ok = process_vm_readv((pid_t)p->info.pid, li, 2, ri, 2, 0) ==
                 (ssize_t)(li[0].iov_len + li[1].iov_len);
        }
        /* Acquire fence: the copy above happens before the version is read again. */
        narmau_atomic_fence_acq();
        if (ok && narmau_atomic_load_relaxed_u64(p->version) == v) {
            drop_views(p);
            tab_swap(&p->tab, &p->spare);
            p->nregions = (int)nreg;
            p->nruns = (int)nrun;
            p->ver = v;
            p->lo = p->hi = 0;
            return 0;
        }
        if (attempt > 1000) return NARMAU_ERR(NARMA_ERR_MPI, "cannot read rank %d's regions", t);
    }
}

/* The attached bytes around [a, b): regions are sorted by base; those that
 * follow one another without a gap form one span. 0 and [*lo, *hi), or -1. */
static int attached_span(const struct narmat_dyn_peer *p, uint64_t a, uint64_t b, uint64_t *lo,
                         uint64_t *hi)
{
    uint64_t slo = 0, shi = 0;
    int have = 0;
    for (int i = 0; i < p->nregions; i++) {
        const struct narmat_dyn_region *r = &p->tab.regions[i];
        if (r->end <= r->base) continue;
        if (have && r->base <= shi) {
            if (r->end > shi) shi = r->end;
        } else {
            if (have && slo <= a && b <= shi) break;
            slo = r->base;
            shi = r->end;
            have = 1;
        }
    }
    if (!have || a < slo || b > shi) return -1;
    *lo = slo;
    *hi = shi;
    return 0;
}

int narmat_dyn_check_slow(struct narmat_dyn *d, int t, uint64_t a, uint64_t b)
{
    struct narmat_dyn_peer *p = &d->peers[t];
    if (copy_table(d, t) != 0) return -1;
    uint64_t lo, hi;
    if (attached_span(p, a, b, &lo, &hi) != 0) return -1;
    p->lo = lo;
    p->hi = hi;
    return 0;
}

static int open_arena(struct narmat_dyn_peer *p)
{
    if (p->fd >= 0) return 0;
    int fd = open(p->info.arena, O_RDWR | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) return -1;
    if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_dev != p->info.dev ||
        (uint64_t)sb.st_ino != p->info.ino) {
        close(fd);
        return -1;
    }
    p->fd = fd;
    return 0;
}

int narmat_dyn_view_slow(struct narmat_dyn *d, int t, uint64_t a, uint64_t b)
{
    struct narmat_dyn_peer *p = &d->peers[t];
    int rc = copy_table(d, t);
    if (rc != 0) return rc;
    const uint64_t lo = PAGE_MASK_OF(a), hi = page_up(b);
    for (int i = 0; i < NARMAT_DYN_VIEWS; i++) {
        const struct narmat_dyn_view *v = &p->views[i];
        if (v->map != NULL && v->lo <= a && b <= v->hi) {
            p->vlo = v->lo;
            p->vhi = v->hi;
            p->vmap = v->map;
            return 0;
        }
    }
    /* Regions not moved near the bytes: through the kernel. */
    for (int i = 0; i < p->nregions; i++) {
        const struct narmat_dyn_region *r = &p->tab.regions[i];
        if (!r->moved && r->end > r->base && r->base < hi && lo < r->end) return 1;
    }
    char *map;
    if (t == d->rank) {
        map = (char *)(uintptr_t)lo; /* my own pages, where they are */
    } else {
        if (open_arena(p) != 0) return 1;
        map = mmap(NULL, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (map == MAP_FAILED) return 1;
        for (int i = 0; i < p->nruns; i++) {
            const struct narmat_dyn_run *r = &p->tab.runs[i];
            const uint64_t x = r->addr > lo ? r->addr : lo,
                           y = r->addr + r->len < hi ? r->addr + r->len : hi;
            if (x >= y) continue;
            if (mmap(map + (x - lo), y - x, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd,
                     (off_t)(r->off + (x - r->addr))) == MAP_FAILED) {
                munmap(map, hi - lo);
                return 1;
            }
        }
    }
    struct narmat_dyn_view *v = &p->views[p->next_view];
    p->next_view = (p->next_view + 1) % NARMAT_DYN_VIEWS;
    if (v->map != NULL && v->map != (char *)(uintptr_t)v->lo) munmap(v->map, v->hi - v->lo);
    *v = (struct narmat_dyn_view){lo, hi, map};
    p->vlo = lo;
    p->vhi = hi;
    p->vmap = map;
    return 0;
}

/* One process_vm_readv/writev of n pieces. */
static int copy_batch(const struct narmat_dyn_peer *p, int t, struct iovec *li, struct iovec *ri,
                      int n, int write)
{
    size_t want = 0;
    for (int j = 0; j < n; j++)
        want += li[j].iov_len;
    const pid_t pid = (pid_t)p->info.pid;
    ssize_t got = write ? process_vm_writev(pid, li, (unsigned long)n, ri, (unsigned long)n, 0)
                        : process_vm_readv(pid, li, (unsigned long)n, ri, (unsigned long)n, 0);
    if (got == (ssize_t)want) return NARMA_SUCCESS;
    return NARMAU_ERR(NARMA_ERR_DISP, "%s rank %d's memory at %p: %s",
                      write ? "writing" : "reading", t, ri[0].iov_base,
                      got < 0 ? strerror(errno) : "short copy");
}

int narmat_dyn_copy(struct narmat_dyn *d, int t, uint64_t disp, const narmau_dtype *td, int tcount,
                    char *buf, uint64_t lo, int write)
{
    const struct narmat_dyn_peer *p = &d->peers[t];
    enum { BATCH = 256 };
    struct iovec li[BATCH], ri[BATCH];
    int n = 0, rc;
    if (td->contiguous) {
        const uint64_t at = disp + (uint64_t)td->true_lb;
        li[0] = (struct iovec){buf + (at - lo), (size_t)tcount * (size_t)td->size};
        ri[0] = (struct iovec){(void *)(uintptr_t)at, li[0].iov_len};
        return li[0].iov_len ? copy_batch(p, t, li, ri, 1, write) : NARMA_SUCCESS;
    }
    if (td->nblocks < 0)
        return NARMAU_ERR(NARMA_ERR_TYPE, "target type cannot be flattened for a copy through "
                                          "the kernel");
    for (int i = 0; i < tcount; i++)
        for (int k = 0; k < td->nblocks; k++) {
            const uint64_t at = disp + (uint64_t)((MPI_Aint)i * td->extent + td->blocks[k].off);
            const size_t len = (size_t)td->blocks[k].len;
            if (len == 0) continue;
            li[n] = (struct iovec){buf + (at - lo), len};
            ri[n] = (struct iovec){(void *)(uintptr_t)at, len};
            if (++n == BATCH) {
                if ((rc = copy_batch(p, t, li, ri, n, write))) return rc;
                n = 0;
            }
        }
    return n ? copy_batch(p, t, li, ri, n, write) : NARMA_SUCCESS;
}

void narmat_dyn_free(struct narmat_dyn *d)
{
    if (d == NULL) return;
    struct narmat_dyn_local *l = d->local;
    while (l->n > 0) {
        const struct narmat_dyn_region r = l->reg[--l->n];
        if (r.moved)
            narmat_usermem_unhold((char *)(uintptr_t)PAGE_MASK_OF(r.base),
                                  page_up(r.end) - PAGE_MASK_OF(r.base));
    }
    for (int r = 0; r < d->size; r++) {
        struct narmat_dyn_peer *p = &d->peers[r];
        drop_views(p);
        if (p->fd >= 0) close(p->fd);
        tab_free(&p->tab);
        tab_free(&p->spare);
    }
    free(l->reg);
    tab_free(&l->pubtab);
    tab_free(&l->spare);
    free(l);
    free(d->peers);
    free(d);
}
