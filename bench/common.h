/*
 * Helpers shared by the narma benchmarks: timing, statistics, size lists,
 * data patterns for validation, polling atomics, CSV output, fatal errors.
 * Benchmarks are clients of the public API; nothing here includes internals.
 */
#ifndef NARMA_BENCH_COMMON_H
#define NARMA_BENCH_COMMON_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <mpi.h>

/* ---- fatal errors ------------------------------------------------------ */

/** Print "bench: <where>: <message>" and abort every rank. */
void bench_die(const char *where, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#define BENCH_STR2(x) #x
#define BENCH_STR(x)  BENCH_STR2(x)
#define BENCH_HERE    __FILE__ ":" BENCH_STR(__LINE__)

/** Abort unless an MPI call returns MPI_SUCCESS. */
#define MPI_CHECK(call)                                                    \
    do {                                                                   \
        int bench_rc_ = (call);                                            \
        if (bench_rc_ != MPI_SUCCESS)                                      \
            bench_die(BENCH_HERE, "%s -> MPI error %d", #call, bench_rc_); \
    } while (0)

/* ---- time and statistics ---------------------------------------------- */

/** Monotonic time in seconds (vDSO clock_gettime, ~20 ns). */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Median of v[0..n) (reorders v). NaN when n == 0. */
double bench_median(double *v, size_t n);
/** Smallest and largest of v[0..n). */
void bench_minmax(const double *v, size_t n, double *min, double *max);

/* ---- sizes ------------------------------------------------------------- */

/** Parse "8", "4K", "1M", "2MiB": bytes, or 0 on a malformed string. */
size_t bench_parse_size(const char *s);
/** Parse a comma-separated size list into out[0..cap); returns the count, or -1 on error. */
int bench_parse_size_list(const char *s, size_t *out, int cap);

/* ---- validation -------------------------------------------------------- */

/** Fill buf[0..n) with a pattern derived from seed (different seeds give different bytes). */
void bench_fill(void *buf, size_t n, uint64_t seed);
/** Offset of the first byte of buf[0..n) that differs from bench_fill(seed), or -1 if none. */
long bench_verify(const void *buf, size_t n, uint64_t seed);
/** The byte bench_fill(seed) puts at offset i. */
unsigned char bench_pattern_byte(uint64_t seed, size_t i);

/* ---- polling ----------------------------------------------------------- */
/*
 * Flags in window or shared memory are plain uint64_t words written by another
 * process (or by the MPI library on its behalf). Loads go through C11 atomics
 * so the compiler re-reads memory on every poll; the acquire pairs with the
 * writer's release store (raw shm) or with the completion of the flag put
 * (MPI/narma windows, where MPI_Win_sync/NARMA_Win_sync supply the fence).
 */
static inline uint64_t bench_load_acquire(const uint64_t *p)
{
    return atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)p, memory_order_acquire);
}
static inline void bench_store_release(uint64_t *p, uint64_t v)
{
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)p, v, memory_order_release);
}
static inline void bench_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* ---- memory ------------------------------------------------------------ */

/** 64-byte aligned, zeroed allocation; aborts on failure. Free with free(). */
void *bench_alloc(size_t n);

/* ---- CSV --------------------------------------------------------------- */

/** Open the CSV file (NULL path: CSV disabled) and write the header line. */
void bench_csv_open(const char *path);
/** Append "bench,scheme,size,metric,value" (no-op when disabled). */
void bench_csv_row(const char *bench, const char *scheme, size_t size, const char *metric,
                   double value);
void bench_csv_close(void);

#endif /* NARMA_BENCH_COMMON_H */
