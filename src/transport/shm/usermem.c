/* User memory moved onto shared memory in place: see usermem.h. */
#define _GNU_SOURCE
#include "transport/shm/usermem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page_size(void)
{
    static size_t ps;
    if (ps == 0) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (size_t)v : 4096;
    }
    return ps;
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
#else
static void copy_pages(void *dst, const void *src, size_t len) { memcpy(dst, src, len); }
#endif

void narmat_usermem_span(const void *base, size_t size, char **start, size_t *len)
{
    const uintptr_t ps = page_size(), b = (uintptr_t)base;
    const uintptr_t lo = b / ps * ps, hi = (b + size + ps - 1) / ps * ps;
    *start = (char *)lo;
    *len = hi - lo;
}

/* Every byte of the range lies in mappings of /proc/self/maps that are private
 * and writable and are the heap, anonymous memory or the program's own file. */
int narmat_usermem_movable(const char *start, size_t len, char *why, size_t whylen)
{
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
    static unsigned serial;
    m->start = NULL;
    m->len = 0;
    snprintf(m->name, sizeof m->name, "/narma-win.%ld.%u", (long)getpid(), serial++);
    int fd = shm_open(m->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "shm_open(%s): %s", m->name, strerror(errno));
        m->name[0] = '\0';
        return -1;
    }
    void *tmp = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) != 0 ||
        (tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        snprintf(why, whylen, "%s of %zu bytes: %s", tmp == MAP_FAILED ? "mmap" : "ftruncate", len,
                 strerror(errno));
        goto fail;
    }
    /* Copy, then map the object over the pages: nothing may write them in between. */
    copy_pages(tmp, start, len);
    if (mmap(start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != start) {
        snprintf(why, whylen, "mmap over the window's pages: %s", strerror(errno));
        munmap(tmp, len);
        goto fail;
    }
    munmap(tmp, len);
    close(fd);
    m->start = start;
    m->len = len;
    return 0;
fail:
    close(fd);
    shm_unlink(m->name);
    m->name[0] = '\0';
    return -1;
}

void *narmat_usermem_map(const char *name, size_t len, char *why, size_t whylen)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        snprintf(why, whylen, "shm_open(%s): %s", name, strerror(errno));
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

void narmat_usermem_unlink(struct narmat_usermem *m)
{
    if (m->name[0] != '\0') shm_unlink(m->name);
    m->name[0] = '\0';
}

void narmat_usermem_restore(struct narmat_usermem *m)
{
    narmat_usermem_unlink(m);
    if (m->start == NULL) return;
    /* A private copy moved over the pages in one step: the pages never read as
     * anything but their contents. On failure the shared pages stay (still
     * this process's memory, with the same contents). */
    void *tmp = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tmp != MAP_FAILED) {
        copy_pages(tmp, m->start, m->len);
        void *r = mremap(tmp, m->len, m->len, MREMAP_MAYMOVE | MREMAP_FIXED, m->start);
        if (r != m->start) {
            /* Some MPI libraries wrap mremap (memory hooks of registration caches) and
             * not every wrapper honours MREMAP_FIXED: map private pages over the
             * range, then copy the contents back. */
            void *back = r != MAP_FAILED ? r : tmp;
            if (mmap(m->start, m->len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m->start)
                copy_pages(m->start, back, m->len);
            munmap(back, m->len);
        }
    }
    m->start = NULL;
    m->len = 0;
}
