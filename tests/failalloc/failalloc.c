/*
 * failalloc: an LD_PRELOAD'd allocator that fails the Nth allocation libnarma asks for, for
 * tests/mpi/test_oom.c. malloc, calloc, realloc, aligned_alloc and posix_memalign called from
 * libnarma's code (the caller's return address lies in an executable segment of libnarma.so)
 * are counted once armed; the armed one returns NULL (ENOMEM, posix_memalign's ENOMEM). Every
 * other caller (the MPI library, libc itself, the test) is never failed, so what fails is
 * narma's own handling of an allocation, not MPI's.
 *
 *   void failalloc_arm(long nth);   count from now on; fail the nth (1-based); 0 disarms
 *   long failalloc_count(void);     allocations by libnarma since the last arm
 *   long failalloc_failed(void);    how many were failed since the last arm
 *   void failalloc_arm_all(int on); count from now on; fail every one while on (a shortage
 *                                   that lasts: what narma keeps in reserve must carry it)
 *
 * Found by the test with dlsym(RTLD_DEFAULT, ...). Built only without sanitizers (their
 * runtimes must be the first allocator in the process).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);

#define MAX_RANGES 8
static struct {
    uintptr_t lo, hi;
} ranges[MAX_RANGES];
static int nranges = -1; /* -1: not looked up yet */
static long armed_at, count, failed;
static int fail_all; /* failalloc_arm_all */

static int find_narma(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    name = name ? name + 1 : info->dlpi_name;
    if (name == NULL || strncmp(name, "libnarma.so", 11) != 0) return 0;
    for (int i = 0; i < info->dlpi_phnum && nranges < MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        ranges[nranges].lo = info->dlpi_addr + ph->p_vaddr;
        ranges[nranges].hi = ranges[nranges].lo + ph->p_memsz;
        nranges++;
    }
    return 1;
}

/* Whether this allocation, asked for from ra, is the one to fail. */
static int fail_now(const void *ra)
{
    if (armed_at <= 0 && !fail_all) return 0;
    if (nranges < 0) {
        nranges = 0;
        dl_iterate_phdr(find_narma, NULL);
    }
    const uintptr_t a = (uintptr_t)ra;
    int ours = 0;
    for (int i = 0; i < nranges && !ours; i++)
        ours = a >= ranges[i].lo && a < ranges[i].hi;
    if (!ours) return 0;
    if (++count != armed_at && !fail_all) return 0;
    failed++;
    if (getenv("NARMA_TEST_FAILALLOC_TRACE") != NULL) {
        Dl_info di;
        char buf[256];
        const int found = dladdr(ra, &di) != 0;
        int n = snprintf(buf, sizeof buf,
                         "failalloc: allocation %ld fails, asked for from %s (%s+%#lx)\n", count,
                         found && di.dli_sname ? di.dli_sname : "?",
                         found && di.dli_fname ? di.dli_fname : "?",
                         found ? (unsigned long)((uintptr_t)ra - (uintptr_t)di.dli_fbase) : 0UL);
        if (n > 0) (void)!write(2, buf, (size_t)n);
    }
    return 1;
}

void failalloc_arm(long nth)
{
    armed_at = nth;
    fail_all = 0;
    count = 0;
    failed = 0;
}

void failalloc_arm_all(int on)
{
    armed_at = 0;
    fail_all = on;
    count = 0;
    failed = 0;
}

long failalloc_count(void) { return count; }

long failalloc_failed(void) { return failed; }

void *malloc(size_t size)
{
    if (fail_now(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    if (fail_now(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    if (fail_now(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, size);
}

void *aligned_alloc(size_t align, size_t size)
{
    if (fail_now(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    if (fail_now(__builtin_return_address(0))) return ENOMEM;
    if (align < sizeof(void *) || (align & (align - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(align, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}
