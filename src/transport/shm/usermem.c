/* User memory moved onto shared memory in place: see usermem.h. */
#define _GNU_SOURCE
#include "transport/shm/usermem.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

size_t narmat_page_size(void)
{
    static size_t ps;
    if (ps == 0) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (size_t)v : 4096;
    }
    return ps;
}

int narmat_cma_read(int64_t pid, void *to, const void *from, size_t n)
{
    while (n > 0) {
        struct iovec l = {to, n}, r = {(void *)(uintptr_t)from, n};
        ssize_t got = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return got < 0 ? errno : EIO;
        to = (char *)to + got;
        from = (const char *)from + got;
        n -= (size_t)got;
    }
    return 0;
}

/* Copy whole pages. They hold other objects of the program too, and under
 * AddressSanitizer poisoned bytes between them: there the copy must be neither
 * the checked memcpy nor a loop the compiler turns into one. */
#if defined(__SANITIZE_ADDRESS__)
#define NARMAT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NARMAT_ASAN 1
#endif
#endif

#ifdef NARMAT_ASAN
__attribute__((no_sanitize_address)) static void copy_pages(void *dst, const void *src, size_t len)
{
    volatile uint64_t *d = dst;
    const volatile uint64_t *s = src;
    for (size_t i = 0; i < len / sizeof(uint64_t); i++)
        d[i] = s[i];
}
#endif

/* The object's contents from the pages: write() copies straight into the
 * object's pages, with no mapping of it to fault in (under AddressSanitizer,
 * whose write() checks every byte, through a mapping). */
static int fill_object(int fd, const char *start, size_t len, off_t off)
{
#ifdef NARMAT_ASAN
    void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    if (tmp == MAP_FAILED) return -1;
    copy_pages(tmp, start, len);
    munmap(tmp, len);
#else
    for (size_t done = 0; done < len;) {
        ssize_t w = pwrite(fd, start + done, len - done, off + (off_t)done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
#endif
    return 0;
}

/* Pages of anonymous memory that are neither present nor swapped have never
 * been written: they read as zero, as the object's holes do. A window over a
 * large, mostly untouched allocation (MPICH's datatype tests create 1-GiB
 * Win_create windows) then costs what the program touched, not its size.
 * Copies the touched runs of [start, start + len) into the object at off;
 * -1 when /proc/self/pagemap cannot say (the caller copies everything). */
static int fill_object_sparse(int fd, const char *start, size_t len, off_t off)
{
    const size_t ps = narmat_page_size(), npages = len / ps;
    int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pm < 0) return -1;
    enum { CHUNK = 1024 };
    uint64_t ent[CHUNK];
    size_t run_start = 0, run_len = 0; /* pages */
    int rc = 0;
    for (size_t p = 0; p < npages && rc == 0;) {
        size_t k = npages - p < CHUNK ? npages - p : CHUNK;
        off_t at = (off_t)(((uintptr_t)start / ps + p) * sizeof(uint64_t));
        ssize_t got = pread(pm, ent, k * sizeof(uint64_t), at);
        if (got != (ssize_t)(k * sizeof(uint64_t))) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < k && rc == 0; i++) {
            /* bit 63: present, bit 62: swapped */
            int touched = (ent[i] >> 62) != 0;
            if (touched) {
                if (run_len == 0) run_start = p + i;
                run_len++;
            }
            if ((!touched || p + i + 1 == npages) && run_len > 0) {
                rc = fill_object(fd, start + run_start * ps, run_len * ps,
                                 off + (off_t)(run_start * ps));
                run_len = 0;
            }
        }
        p += k;
    }
    close(pm);
    return rc;
}

/* Is every byte of [start, start + len) in anonymous private memory (the heap
 * or anonymous mappings: no file behind it whose contents untouched pages
 * would show)? */
static int all_anonymous(const char *start, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) return 0;
    uintptr_t want = (uintptr_t)start;
    const uintptr_t end = (uintptr_t)start + len;
    char line[4096 + 128];
    int ok = 1;
    while (ok && want < end && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi, ino;
        char perms[8] = "", path[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %4095[^\n]", &lo, &hi, perms, &ino, path) < 4)
            continue;
        if (hi <= want || lo >= end) continue;
        const char *q = path;
        while (*q == ' ')
            q++;
        ok = lo <= want && perms[3] == 'p' && ino == 0 &&
             (*q == '\0' || strcmp(q, "[heap]") == 0 || strncmp(q, "[anon:", 6) == 0);
        want = hi;
    }
    fclose(f);
    return ok && want >= end;
}

/* Private anonymous pages over [start, start + len), then the object's
 * contents at off into them (the reverse of fill_object); -1 when the mmap
 * fails (the pages are then untouched). The pages may hold the program's own
 * linkage table (a global window beside .got.plt), which reads as zero from
 * the mmap until the contents are back: no call in between may go through it,
 * so the functions are called through pointers taken before (volatile: the
 * compiler may not load them again from the table). */
static int restore_pages(int fd, char *start, size_t len, off_t off)
{
    /* The object's data runs, found before the pages go (lseek through the
     * table is still safe here), on the stack: the heap may lie in these pages.
     * Holes read as zero, as the fresh anonymous pages do. More runs than fit:
     * the last one takes the rest. Without SEEK_DATA: one run, everything. */
    enum { MAXRUNS = 64 };
    off_t ro[MAXRUNS], rl[MAXRUNS];
    int nr = 0;
    const off_t end = off + (off_t)len;
    for (off_t at = off; at < end && nr < MAXRUNS;) {
        off_t d = lseek(fd, at, SEEK_DATA);
        if (d < 0 && errno == ENXIO) break; /* only holes from here */
        if (d < 0) {                        /* no SEEK_DATA: everything */
            ro[0] = off;
            rl[0] = (off_t)len;
            nr = 1;
            break;
        }
        if (d >= end) break;
        off_t h = lseek(fd, d, SEEK_HOLE);
        if (h < 0 || h > end || nr == MAXRUNS - 1) h = end;
        ro[nr] = d;
        rl[nr++] = h - d;
        at = h;
    }
    void *(*volatile map_fn)(void *, size_t, int, int, int, off_t) = mmap;
    if (map_fn(start, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
               0) != start)
        return -1;
#ifdef NARMAT_ASAN
    int (*volatile unmap_fn)(void *, size_t) = munmap;
    for (int i = 0; i < nr; i++) {
        void *tmp = map_fn(NULL, (size_t)rl[i], PROT_READ, MAP_SHARED, fd, ro[i]);
        if (tmp == MAP_FAILED) continue;
        copy_pages(start + (ro[i] - off), tmp, (size_t)rl[i]);
        unmap_fn(tmp, (size_t)rl[i]);
    }
#else
    ssize_t (*volatile read_fn)(int, void *, size_t, off_t) = pread;
    /* No errno (a call too): a failed read is retried a few times. */
    for (int i = 0; i < nr; i++) {
        char *to = start + (ro[i] - off);
        size_t n = (size_t)rl[i];
        for (size_t done = 0, tries = 0; done < n && tries < 100;) {
            ssize_t r = read_fn(fd, to + done, n - done, ro[i] + (off_t)done);
            if (r <= 0) {
                tries++;
                continue;
            }
            done += (size_t)r;
        }
    }
#endif
    return 0;
}

void narmat_usermem_span(const void *base, size_t size, char **start, size_t *len)
{
    const uintptr_t ps = narmat_page_size(), b = (uintptr_t)base;
    const uintptr_t lo = b / ps * ps, hi = (b + size + ps - 1) / ps * ps;
    *start = (char *)lo;
    *len = hi - lo;
}

/* Moved ranges of this process (few: one per field array), newest first.
 * Guarded by the process lock (src/util/thread.h): window creation and free
 * hold it while they search or change the list, with no MPI call in between;
 * under MPI_THREAD_MULTIPLE ranges move only with NARMA_SHM_CREATE=1. */
struct narmat_usermem_obj {
    struct narmat_usermem_obj *next;
    char *start;
    size_t len;
    int refs;                       /* windows holding it */
    int fd;                         /* the object, kept open until its last window is freed */
    int anon;                       /* 1: it has no name (O_TMPFILE): peers open /proc/PID/fd/N */
    uint64_t ino;                   /* its inode, as /proc/self/maps shows it */
    char name[NARMAT_USERMEM_NAME]; /* what the peers open */
};
static struct narmat_usermem_obj *objs;

static struct narmat_usermem_obj *obj_holding(const char *start, size_t len)
{
    for (struct narmat_usermem_obj *o = objs; o != NULL; o = o->next)
        if (start >= o->start && start + len <= o->start + o->len) return o;
    return NULL;
}

static int obj_overlaps(const char *start, size_t len)
{
    for (struct narmat_usermem_obj *o = objs; o != NULL; o = o->next)
        if (start < o->start + o->len && o->start < start + len) return 1;
    return 0;
}

/* A process that ends without freeing its windows leaves no names behind. */
static void unlink_all(void)
{
    for (struct narmat_usermem_obj *o = objs; o != NULL; o = o->next)
        if (!o->anon) shm_unlink(o->name);
}

static unsigned serial;

/* A new object: without a name where the kernel allows (O_TMPFILE on
 * /dev/shm), so that nothing is left in /dev/shm if the process dies; else a
 * named one whose name stays until its last window is freed (or exit). */
static int obj_create(struct narmat_usermem_obj *o, char *why, size_t whylen)
{
    o->fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (o->fd >= 0) {
        o->anon = 1;
        return 0;
    }
    snprintf(o->name, sizeof o->name, "/narma-win.%ld.%u", (long)getpid(), serial++);
    o->fd = shm_open(o->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (o->fd < 0) {
        snprintf(why, whylen, "shm_open(%s): %s", o->name, strerror(errno));
        o->name[0] = '\0';
        return -1;
    }
    return 0;
}

/* The name the peers open: an anonymous object is reached through this
 * process's descriptor (/proc/PID/fd/N, open to processes of the same user;
 * where /proc hides other processes, the peers fail to map it and the window
 * falls back to mpi), so no name ever exists for it. */
static void obj_publish(struct narmat_usermem_obj *o)
{
    if (o->anon) snprintf(o->name, sizeof o->name, "/proc/%ld/fd/%d", (long)getpid(), o->fd);
}

/* UCX's memory hooks (libucm, loaded with MPI libraries built on UCX) watch
 * every mmap of the process to keep UCX's registration cache right, and that
 * cache was seen to crash later (in MPI_Win_create, in MPI_Finalize) after
 * pages were moved under it, whichever way they are moved back. With the hooks
 * off (UCX_MEM_EVENTS=no) nothing is left for it to get wrong. */
static int ucx_hooks_active(void)
{
    if (dlsym(RTLD_DEFAULT, "ucm_set_event_handler") == NULL) return 0;
    const char *v = getenv("UCX_MEM_EVENTS");
    return v == NULL || !(strcmp(v, "n") == 0 || strcmp(v, "no") == 0 || strcmp(v, "0") == 0 ||
                          strcmp(v, "off") == 0 || strcmp(v, "false") == 0);
}

/* Every byte of the range lies in mappings of /proc/self/maps that are private
 * and writable and are the heap, anonymous memory or the program's own file. */
int narmat_usermem_movable(const char *start, size_t len, char *why, size_t whylen)
{
    if (obj_holding(start, len) != NULL) return 1;
    if (ucx_hooks_active()) {
        snprintf(why, whylen,
                 "UCX's memory hooks are active in this process (UCX_MEM_EVENTS=no "
                 "lets narma share Win_create memory on one node)");
        return 0;
    }
    if (obj_overlaps(start, len)) {
        snprintf(why, whylen, "memory at %p is partly in pages another window shares",
                 (const void *)start);
        return 0;
    }
    char exe[4096] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) {
        snprintf(why, whylen, "cannot read /proc/self/maps (%s)", strerror(errno));
        return 0;
    }
    uintptr_t want = (uintptr_t)start;
    const uintptr_t end = (uintptr_t)start + len;
    char line[4096 + 128];
    int ok = 1;
    while (ok && want < end && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        char perms[8] = "", path[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095[^\n]", &lo, &hi, perms, path) < 3) continue;
        if (hi <= want || lo >= end) continue;
        const char *p = path;
        while (*p == ' ')
            p++;
        if (lo > want) {
            snprintf(why, whylen, "bytes at %#lx are not mapped", (unsigned long)want);
            ok = 0;
        } else if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p') {
            snprintf(why, whylen, "memory at %#lx is %s (%s), not private and writable",
                     (unsigned long)want, perms, *p ? p : "anonymous");
            ok = 0;
        } else if (*p != '\0' && strcmp(p, "[heap]") != 0 && strncmp(p, "[anon:", 6) != 0 &&
                   strcmp(p, exe) != 0) {
            snprintf(why, whylen, "memory at %#lx is %s", (unsigned long)want, p);
            ok = 0;
        } else {
            want = hi;
        }
    }
    fclose(f);
    if (ok && want < end) {
        snprintf(why, whylen, "bytes at %#lx are not mapped", (unsigned long)want);
        ok = 0;
    }
    return ok;
}

int narmat_usermem_share(struct narmat_usermem *m, char *start, size_t len, char *why,
                         size_t whylen)
{
    static int atexit_set;
    memset(m, 0, sizeof *m);
    struct narmat_usermem_obj *o = obj_holding(start, len);
    if (o == NULL) {
        if (!atexit_set) atexit_set = atexit(unlink_all) == 0;
        o = calloc(1, sizeof *o);
        if (o == NULL) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        if (obj_create(o, why, whylen) != 0) {
            free(o);
            return -1;
        }
        /* Copy, then map the object over the pages (page tables filled at once:
         * the program's next accesses do not fault): nothing may write them in
         * between. */
        int sparse = 0;
#ifndef NARMAT_ASAN
        /* Only where the object's file system has room for all of it: a hole that cannot be
         * filled later is a SIGBUS in whoever writes there (the program, a peer), where a full
         * copy fails here (ENOSPC) and the window goes to another transport. */
        struct statvfs sv;
        sparse = all_anonymous(start, len) && fstatvfs(o->fd, &sv) == 0 &&
                 (uint64_t)sv.f_bavail * sv.f_frsize >= (uint64_t)len;
#endif
        if (ftruncate(o->fd, (off_t)len) != 0 ||
            ((!sparse || fill_object_sparse(o->fd, start, len, 0) != 0) &&
             (sparse = 0, fill_object(o->fd, start, len, 0)) != 0)) {
            snprintf(why, whylen, "copying %zu bytes into the shared object: %s", len,
                     strerror(errno));
            goto fail;
        }
        /* Populated when everything was copied; a sparse object is not (that would
         * allocate its holes): its pages fault in as the program touches them. */
        if (mmap(start, len, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_FIXED | (sparse ? 0 : MAP_POPULATE), o->fd, 0) != start) {
            snprintf(why, whylen, "mmap over the window's pages: %s", strerror(errno));
            goto fail;
        }
        o->start = start;
        o->len = len;
        o->next = objs;
        objs = o;
    }
    obj_publish(o);
    struct stat sb;
    if (fstat(o->fd, &sb) != 0) {
        snprintf(why, whylen, "fstat of the shared object: %s", strerror(errno));
        if (o->refs == 0) narmat_usermem_restore(&(struct narmat_usermem){.obj = o});
        return -1;
    }
    m->dev = (uint64_t)sb.st_dev;
    m->ino = o->ino = (uint64_t)sb.st_ino;
    o->refs++;
    m->obj = o;
    m->obj_start = o->start;
    m->obj_len = o->len;
    memcpy(m->name, o->name, sizeof m->name);
    return 0;
fail:
    close(o->fd);
    if (!o->anon) shm_unlink(o->name);
    free(o);
    return -1;
}

void *narmat_usermem_map(const char *name, uint64_t dev, uint64_t ino, size_t len, char *why,
                         size_t whylen)
{
    int fd = strncmp(name, "/proc/", 6) == 0 ? open(name, O_RDWR | O_CLOEXEC)
                                             : shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, whylen, "opening %s: %s", name, strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_dev != dev || (uint64_t)sb.st_ino != ino ||
        (size_t)sb.st_size < len) {
        snprintf(why, whylen, "%s is not the peer's shared object (another PID namespace?)", name);
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(why, whylen, "mmap of %s: %s", name, strerror(e));
        return NULL;
    }
    return p;
}

/* Are the object's pages still mapped where it put them? A program may free
 * (and so unmap) window memory before freeing the window, erroneous in MPI
 * but done by MPICH's own tests; those pages, or whatever is mapped there
 * now, are then not ours to copy or replace. */
static int still_mapped(const struct narmat_usermem_obj *o)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) return 0;
    uintptr_t want = (uintptr_t)o->start;
    const uintptr_t end = (uintptr_t)o->start + o->len;
    char line[4096 + 128];
    int ok = 1;
    while (ok && want < end && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi, ino;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s %*s %*s %lu", &lo, &hi, perms, &ino) < 4) continue;
        if (hi <= want || lo >= end) continue;
        ok = lo <= want && perms[3] == 's' && (uint64_t)ino == o->ino;
        want = hi;
    }
    fclose(f);
    return ok && want >= end;
}

void narmat_usermem_restore(struct narmat_usermem *m)
{
    struct narmat_usermem_obj *o = m->obj;
    m->obj = NULL;
    if (o == NULL || (o->refs > 0 && --o->refs > 0)) return;
    for (struct narmat_usermem_obj **pp = &objs; *pp != NULL; pp = &(*pp)->next)
        if (*pp == o) {
            *pp = o->next;
            break;
        }
    if (!o->anon) shm_unlink(o->name);
    /* Private pages over the range, then the contents back from the object.
     * Not mremap of a private copy: MPI libraries' memory hooks (UCX's) wrap
     * mremap without honouring MREMAP_FIXED and corrupt their registration
     * cache. If the mmap fails, the shared pages stay (still this process's
     * memory, same contents). */
    /* Locals only from here: o itself may lie in these pages (it is heap
     * memory too), which read as zero until restore_pages has run. */
    char *const start = o->start;
    const size_t len = o->len;
    const int fd = o->fd, mapped = still_mapped(o);
    if (mapped) restore_pages(fd, start, len, 0);
    close(fd);
    free(o);
}

int narmat_usermem_hooks_active(void) { return ucx_hooks_active(); }

/* ---- Dynamic windows: pages moved one by one onto the process's arena ----
 *
 * One object per process (O_TMPFILE, the "arena"), growing: each run of pages
 * moved at once gets the next free range of it, never used again after the
 * pages move back (the range is punched out to free its memory), so that a
 * peer's stale mapping of an old range can never reach pages moved later.
 * Every moved page has a record {page, offset, holders}, sorted by page. */
struct page_rec {
    uintptr_t page;
    uint64_t off;
    uint32_t refs;
};
static struct page_rec *recs;
static size_t nrecs, caprecs;
static int arena_fd = -1;
static uint64_t arena_end, arena_dev, arena_ino;

static struct page_rec *rec_find_in(uintptr_t page, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (recs[mid].page < page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && recs[lo].page == page ? &recs[lo] : NULL;
}

static struct page_rec *rec_find(uintptr_t page) { return rec_find_in(page, nrecs); }

int narmat_usermem_arena(char *name, size_t namelen, uint64_t *dev, uint64_t *ino, char *why,
                         size_t whylen)
{
    if (arena_fd < 0) {
        int fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        struct stat sb;
        if (fd < 0 || fstat(fd, &sb) != 0) {
            snprintf(why, whylen, "O_TMPFILE on /dev/shm: %s", strerror(errno));
            if (fd >= 0) close(fd);
            return -1;
        }
        arena_fd = fd;
        arena_dev = (uint64_t)sb.st_dev;
        arena_ino = (uint64_t)sb.st_ino;
    }
    snprintf(name, namelen, "/proc/%ld/fd/%d", (long)getpid(), arena_fd);
    *dev = arena_dev;
    *ino = arena_ino;
    return 0;
}

uint64_t narmat_usermem_page_off(const void *page)
{
    const struct page_rec *r = rec_find((uintptr_t)page);
    return r != NULL ? r->off : UINT64_MAX;
}

static int cmp_rec(const void *a, const void *b)
{
    const struct page_rec *x = a, *y = b;
    return x->page < y->page ? -1 : x->page > y->page;
}

/* Is [start, start + len) still the arena's pages at off? (See still_mapped.) */
static int arena_mapped(uintptr_t start, size_t len, uint64_t off)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) return 0;
    uintptr_t want = start;
    const uintptr_t end = start + len;
    char line[4096 + 128];
    int ok = 1;
    while (ok && want < end && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi, moff, ino;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s %lx %*s %lu", &lo, &hi, perms, &moff, &ino) < 5) continue;
        if (hi <= want || lo >= end) continue;
        ok = lo <= want && perms[3] == 's' && (uint64_t)ino == arena_ino &&
             moff + (want - lo) == off + (want - start);
        want = hi;
    }
    fclose(f);
    return ok && want >= end;
}

/* Move the pages of [start, start + len) that no holder left back onto private
 * memory, a batch of runs at a time: the runs are copied to the stack and
 * their records dropped first, since the records (heap memory) may lie in
 * those very pages, which read as zero until their contents are read back. */
static void arena_put_back(uintptr_t start, size_t len)
{
    const uintptr_t ps = narmat_page_size(), end = start + len;
    for (;;) {
        struct put_run {
            uintptr_t addr;
            size_t len;
            uint64_t off;
        } run[32];
        int n = 0;
        for (size_t i = 0; i < nrecs && n < 32; i++) {
            const struct page_rec *r = &recs[i];
            if (r->page < start || r->page >= end || r->refs > 0) continue;
            if (n > 0 && run[n - 1].addr + run[n - 1].len == r->page &&
                run[n - 1].off + run[n - 1].len == r->off)
                run[n - 1].len += ps;
            else
                run[n++] = (struct put_run){r->page, ps, r->off};
        }
        if (n == 0) return;
        size_t k = 0;
        for (size_t i = 0; i < nrecs; i++) {
            int drop = 0;
            for (int j = 0; j < n && !drop; j++)
                drop = recs[i].page >= run[j].addr && recs[i].page < run[j].addr + run[j].len;
            if (!drop) recs[k++] = recs[i];
        }
        nrecs = k;
        for (int j = 0; j < n; j++) {
            char *a = (char *)run[j].addr;
            if (arena_mapped(run[j].addr, run[j].len, run[j].off))
                restore_pages(arena_fd, a, run[j].len, (off_t)run[j].off);
            fallocate(arena_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)run[j].off,
                      (off_t)run[j].len);
        }
    }
}

int narmat_usermem_hold(char *start, size_t len, char *why, size_t whylen)
{
    const uintptr_t ps = narmat_page_size(), s0 = (uintptr_t)start, end = s0 + len;
    if (obj_overlaps(start, len)) {
        snprintf(why, whylen, "memory at %p is in pages a Win_create window shares",
                 (const void *)start);
        return -1;
    }
    /* Every page not moved yet must be movable, before anything moves. */
    size_t fresh = 0;
    for (uintptr_t a = s0; a < end;) {
        if (rec_find(a) != NULL) {
            a += ps;
            continue;
        }
        uintptr_t b = a;
        while (b < end && rec_find(b) == NULL)
            b += ps;
        if (!narmat_usermem_movable((char *)a, b - a, why, whylen)) return -1;
        fresh += (b - a) / ps;
        a = b;
    }
    if (nrecs + fresh > caprecs) {
        size_t cap = caprecs ? caprecs : 64;
        while (cap < nrecs + fresh)
            cap *= 2;
        struct page_rec *r = realloc(recs, cap * sizeof *r);
        if (r == NULL) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        recs = r;
        caprecs = cap;
    }
    /* Move each run: copy it into a new range of the arena, then map that over
     * it; records are appended (unsorted) only after the run's mapping, since
     * they may lie in it. Nothing may write these pages meanwhile. */
    const size_t sorted = nrecs;
    int rc = 0;
    for (uintptr_t a = s0; a < end && rc == 0;) {
        if (rec_find_in(a, sorted) != NULL) {
            a += ps;
            continue;
        }
        uintptr_t b = a;
        while (b < end && rec_find_in(b, sorted) == NULL)
            b += ps;
        const uint64_t off = arena_end;
        if (ftruncate(arena_fd, (off_t)(off + (b - a))) != 0 ||
            fill_object(arena_fd, (char *)a, b - a, (off_t)off) != 0 ||
            mmap((void *)a, b - a, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
                 arena_fd, (off_t)off) != (void *)a) {
            snprintf(why, whylen, "moving %zu bytes at %#lx onto shared memory: %s",
                     (size_t)(b - a), (unsigned long)a, strerror(errno));
            rc = -1;
            break;
        }
        arena_end += b - a;
        for (uintptr_t p = a; p < b; p += ps)
            recs[nrecs++] = (struct page_rec){p, off + (p - a), 0};
        a = b;
    }
    if (nrecs > sorted) qsort(recs, nrecs, sizeof *recs, cmp_rec);
    if (rc != 0) {
        arena_put_back(s0, len); /* the runs moved so far, held by nobody */
        return -1;
    }
    for (uintptr_t a = s0; a < end; a += ps)
        rec_find(a)->refs++;
    return 0;
}

void narmat_usermem_unhold(char *start, size_t len)
{
    const uintptr_t ps = narmat_page_size(), s0 = (uintptr_t)start, end = s0 + len;
    for (uintptr_t a = s0; a < end; a += ps) {
        struct page_rec *r = rec_find(a);
        if (r != NULL && r->refs > 0) r->refs--;
    }
    arena_put_back(s0, len);
}
