/*
 * Helpers for the serial unit tests in tests/unit/.
 *
 * A unit test is a sequence of phases (unit_phase("...")), each a handful of
 * CHECKs that state what the code under test must do. A failed CHECK prints
 * file:line, the phase and a message and the test goes on (so one run shows
 * every broken rule); after UNIT_MAX_FAILURES failures it stops. unit_done()
 * turns the count into the exit code. A watchdog (alarm) turns a hang into a
 * failure that names the phase it hung in.
 *
 * Random tests use unit_rand, a small generator with a fixed seed, so that a
 * failure reproduces exactly.
 */
#ifndef NARMA_UNIT_H
#define NARMA_UNIT_H

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__)
#define UNIT_UNUSED       __attribute__((unused))
#define UNIT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define UNIT_UNUSED
#define UNIT_PRINTF(f, a)
#endif

#define UNIT_MAX_FAILURES 20

static const char *volatile unit_current_phase = "start";
static int unit_failures;

static UNIT_UNUSED void unit_phase(const char *name) { unit_current_phase = name; }

static UNIT_UNUSED UNIT_PRINTF(4, 5) void unit_fail(const char *file, int line, const char *cond,
                                                    const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s:%d [%s] (%s): %s\n", file, line, unit_current_phase, cond, msg);
    fflush(stderr);
    if (++unit_failures >= UNIT_MAX_FAILURES) {
        fprintf(stderr, "too many failures, stopping\n");
        exit(1);
    }
}

/** CHECK(cond, fmt, ...): report a located failure unless cond holds; evaluates to cond. */
#define CHECK(cond, ...) ((cond) ? 1 : (unit_fail(__FILE__, __LINE__, #cond, __VA_ARGS__), 0))

static void unit_watchdog(int sig)
{
    (void)sig;
    /* Only async-signal-safe calls here. */
    const char *p = unit_current_phase;
    static const char pre[] = "FAIL: watchdog expired in phase: ";
    if (write(2, pre, sizeof pre - 1) < 0) _exit(1);
    if (write(2, p, strlen(p)) < 0) _exit(1);
    if (write(2, "\n", 1) < 0) _exit(1);
    _exit(1);
}

/** Start the watchdog: the test fails if it runs longer than seconds. */
static UNIT_UNUSED void unit_begin(unsigned seconds)
{
    signal(SIGALRM, unit_watchdog);
    alarm(seconds);
}

/** Exit code of the test: 0 if every CHECK held. */
static UNIT_UNUSED int unit_done(const char *name)
{
    if (unit_failures)
        fprintf(stderr, "%s: %d failure(s)\n", name, unit_failures);
    else
        printf("%s: all checks passed\n", name);
    return unit_failures ? 1 : 0;
}

/* xorshift64*: small, fast, and the same sequence on every platform. */
typedef struct {
    uint64_t s;
} unit_rand;

static UNIT_UNUSED void unit_rand_seed(unit_rand *r, uint64_t seed)
{
    r->s = seed ? seed : UINT64_C(0x9e3779b97f4a7c15);
}

static UNIT_UNUSED uint64_t unit_rand_u64(unit_rand *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * UINT64_C(0x2545f4914f6cdd1d);
}

/** Uniform in 0 .. n-1 (n small: the bias is negligible). */
static UNIT_UNUSED uint32_t unit_rand_below(unit_rand *r, uint32_t n)
{
    return (uint32_t)((unit_rand_u64(r) >> 32) % n);
}

#endif
