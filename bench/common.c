/* Helpers shared by the narma benchmarks (see common.h). */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void bench_die(const char *where, const char *fmt, ...)
{
    int rank = -1;
    int init = 0;
    MPI_Initialized(&init);
    if (init) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench[%d]: %s: ", rank, where);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    if (init) MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* ---- statistics -------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_minmax(const double *v, size_t n, double *min, double *max)
{
    *min = INFINITY;
    *max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < *min) *min = v[i];
        if (v[i] > *max) *max = v[i];
    }
}

/* ---- sizes ------------------------------------------------------------- */

size_t bench_parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return 0;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'b' || *end == 'B') end++;
    return *end ? 0 : (size_t)v;
}

int bench_parse_size_list(const char *s, size_t *out, int cap)
{
    int n = 0;
    char *copy = strdup(s);
    if (!copy) return -1;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        size_t v = bench_parse_size(tok);
        if (v == 0 || n == cap) {
            n = -1;
            break;
        }
        out[n++] = v;
    }
    free(copy);
    return n;
}

/* ---- validation -------------------------------------------------------- */

/* splitmix64: one well-mixed 64-bit word per (seed, word index). */
static inline uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t pattern_word(uint64_t seed, size_t w)
{
    return mix(seed * 0x100000001b3ull + w);
}

unsigned char bench_pattern_byte(uint64_t seed, size_t i)
{
    uint64_t w = pattern_word(seed, i / 8);
    return (unsigned char)(w >> (8 * (i % 8)));
}

void bench_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = pattern_word(seed, i / 8);
        memcpy(p + i, &w, 8); /* little-endian order matches bench_pattern_byte on x86/arm */
    }
    for (; i < n; i++)
        p[i] = bench_pattern_byte(seed, i);
}

long bench_verify(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* word at a time; locate the byte only on a mismatch */
        uint64_t w, want = pattern_word(seed, i / 8);
        memcpy(&w, p + i, 8);
        if (w != want) break;
    }
    for (; i < n; i++)
        if (p[i] != bench_pattern_byte(seed, i)) return (long)i;
    return -1;
}

/* ---- memory ------------------------------------------------------------ */

void *bench_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64)) bench_die(BENCH_HERE, "out of memory (%zu bytes)", n);
    memset(p, 0, n);
    return p;
}

/* ---- CSV --------------------------------------------------------------- */

static FILE *csv;

void bench_csv_open(const char *path)
{
    if (!path) return;
    csv = fopen(path, "w");
    if (!csv) bench_die(BENCH_HERE, "cannot open %s: %s", path, strerror(errno));
    fprintf(csv, "bench,scheme,size,metric,value\n");
}

void bench_csv_row(const char *bench, const char *scheme, size_t size, const char *metric,
                   double value)
{
    if (csv) fprintf(csv, "%s,%s,%zu,%s,%.6g\n", bench, scheme, size, metric, value);
}

void bench_csv_close(void)
{
    if (csv) fclose(csv);
    csv = NULL;
}
