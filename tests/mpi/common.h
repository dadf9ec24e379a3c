/*
 * Shared helpers for the MPI test programs in tests/mpi/.
 *
 * Every test is one program that reads like a specification: a sequence of
 * phases (test_phase("...")), each a handful of CHECKs. A failed CHECK prints
 * rank, file:line, the current phase and a message, then aborts the job with
 * exit code 1 (with NARMA_TEST_KEEP_GOING=1 it continues, for diagnosis, and
 * the test fails at the end). A watchdog (alarm) turns a hang into a failure that names the
 * phase it hung in, before ctest's TIMEOUT kills the job without a word.
 *
 * Tests use only the public header and MPI; they start with MPI_Init (not
 * NARMA_Init: narma must work after a plain MPI_Init).
 */
#ifndef NARMA_TEST_COMMON_H
#define NARMA_TEST_COMMON_H

#include <narma/narma.h>

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int test_rank = -1;
static int test_size = 0;
static const char *test_name = "?";
static const char *volatile test_current_phase = "init";
/** Free-form progress detail, printed with the phase by failures and the watchdog. */
static char test_detail[256];
/* NARMA_TEST_KEEP_GOING=1 (diagnosis only): report failed CHECKs and continue. */
static int test_keep_going;
static int test_failures;
/* Tests that start threads (threads.h): this thread's index (-1: the main thread) and its own
 * phase (NULL: the program's), printed by failures. */
static _Thread_local int test_thread = -1;
static _Thread_local const char *test_thread_phase;
/* Every thread's phase and round, for the watchdog (threads.h: thr_phase, thr_round). */
#define TEST_MAX_THREADS 16
static const char *volatile test_thread_phases[TEST_MAX_THREADS];
static volatile long test_thread_rounds[TEST_MAX_THREADS];
static int test_nthreads; /* threads started by thr_run (atomic) */

#if defined(__GNUC__)
#define TEST_UNUSED       __attribute__((unused))
#define TEST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TEST_UNUSED
#define TEST_PRINTF(f, a)
#endif

static TEST_UNUSED TEST_PRINTF(4, 5) void test_fail(const char *file, int line, const char *cond,
                                                    const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char thread[32] = "";
    if (test_thread >= 0) snprintf(thread, sizeof thread, " thread %d", test_thread);
    fprintf(stderr, "FAIL %s rank %d/%d%s %s:%d [phase: %s%s%s] (%s): %s\n", test_name, test_rank,
            test_size, thread, file, line,
            test_thread_phase ? test_thread_phase : test_current_phase, test_detail[0] ? "; " : "",
            test_detail, cond, msg);
    fflush(stderr);
    test_failures++;
    if (test_keep_going) return;
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

/** CHECK(cond, fmt, ...): abort the job with a located message unless cond holds. */
#define CHECK(cond, ...)                                                \
    do {                                                                \
        if (!(cond)) test_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

/** Text of the MPI error behind the last NARMA_ERR_MPI (empty for other classes); this
 * thread's, as NARMA_Get_mpi_error is. */
static TEST_UNUSED const char *test_mpi_error(int rc)
{
    static _Thread_local char buf[MPI_MAX_ERROR_STRING + 32];
    buf[0] = 0;
    if (rc == NARMA_ERR_MPI) {
        int code = NARMA_Get_mpi_error(), len = 0;
        char s[MPI_MAX_ERROR_STRING];
        if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "?");
        snprintf(buf, sizeof buf, "; MPI error %d: %s", code, s);
    }
    return buf;
}

/** CHECK_RC(call): the narma call must return NARMA_SUCCESS. */
#define CHECK_RC(call)                                                            \
    do {                                                                          \
        int check_rc_ = (call);                                                   \
        if (check_rc_ != NARMA_SUCCESS)                                           \
            test_fail(__FILE__, __LINE__, #call, "returned %d (%s)%s", check_rc_, \
                      NARMA_Strerror(check_rc_), test_mpi_error(check_rc_));      \
    } while (0)

/** CHECK_ERR(call, expected): the narma call must fail with exactly this class. */
#define CHECK_ERR(call, expected)                                                        \
    do {                                                                                 \
        int check_rc_ = (call);                                                          \
        if (check_rc_ != (expected))                                                     \
            test_fail(__FILE__, __LINE__, #call, "returned %d (%s), expected %d (%s)%s", \
                      check_rc_, NARMA_Strerror(check_rc_), (int)(expected),             \
                      NARMA_Strerror(expected), test_mpi_error(check_rc_));              \
    } while (0)

/** CHECK_MPI(call): the MPI call must return MPI_SUCCESS. */
#define CHECK_MPI(call)                                                      \
    do {                                                                     \
        int check_rc_ = (call);                                              \
        if (check_rc_ != MPI_SUCCESS)                                        \
            test_fail(__FILE__, __LINE__, #call, "MPI error %d", check_rc_); \
    } while (0)

/** Name the phase that follows (shown by failures and by the watchdog). */
static TEST_UNUSED void test_phase(const char *phase)
{
    test_current_phase = phase;
    test_detail[0] = 0;
}

/** 'p' (private) or 's' (shared) for the mapping holding addr, from /proc/self/maps ('?' when
 *  none holds it): whether narma moved a page onto shared memory. */
static TEST_UNUSED char test_map_kind(const void *addr)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512], perms[8], kind = '?';
    unsigned long lo, hi, a = (unsigned long)(uintptr_t)addr;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && a >= lo && a < hi) kind = perms[3];
    if (f) fclose(f);
    return kind;
}

static TEST_UNUSED long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end;
    long v = strtol(s, &end, 0);
    return *end ? dflt : v;
}

static TEST_UNUSED const char *env_str(const char *name, const char *dflt)
{
    const char *s = getenv(name);
    return (s && *s) ? s : dflt;
}

/* The name a window of fixed memory reports where the automatic choice would name `name`:
 * with NARMA_TRANSPORT=ofi (narma built with it), ofi takes mpi's place between nodes ("mpi"
 * becomes "ofi", "shm+mpi" "shm+ofi"); dynamic windows keep mpi. */
static TEST_UNUSED const char *test_net_name(const char *name)
{
    if (strcmp(env_str("NARMA_TRANSPORT", ""), "ofi") != 0) return name;
    if (strcmp(name, "mpi") == 0) return "ofi";
    if (strcmp(name, "shm+mpi") == 0) return "shm+ofi";
    return name;
}

/* NARMA_TEST_EXPECT_TRANSPORT, when set: the name a window must report (tests/CMakeLists.txt
 * sets it where a fallback would otherwise pass unnoticed, e.g. "ofi" over a given libfabric
 * provider, "mpi" where no provider fits). */
static TEST_UNUSED void test_expect_transport(NARMA_Win win)
{
    const char *expect = getenv("NARMA_TEST_EXPECT_TRANSPORT");
    if (expect == NULL) return;
    const char *tr = NARMA_Win_get_transport(win);
    CHECK(tr != NULL && strcmp(tr, expect) == 0, "window transport %s, expected %s",
          tr != NULL ? tr : "(null)", expect);
}

static void test_watchdog(int sig)
{
    (void)sig;
    /* Not async-signal-safe in theory; we are about to die anyway. */
    char buf[512];
    int n =
        snprintf(buf, sizeof buf, "FAIL %s rank %d: watchdog expired (hang) in phase: %s%s%s\n",
                 test_name, test_rank, test_current_phase, test_detail[0] ? "; " : "", test_detail);
    if (n > 0) (void)!write(2, buf, (size_t)n);
    const int nt = __atomic_load_n(&test_nthreads, __ATOMIC_RELAXED);
    for (int t = 0; t < nt && t < TEST_MAX_THREADS; t++) {
        const char *ph = test_thread_phases[t];
        n = snprintf(buf, sizeof buf, "  rank %d thread %d: phase: %s, round %ld\n", test_rank, t,
                     ph ? ph : "(none)", test_thread_rounds[t]);
        if (n > 0) (void)!write(2, buf, (size_t)n);
    }
    _exit(1);
}

/**
 * Start a test: MPI_Init, rank/size, and a watchdog of @p watchdog_s seconds
 * (NARMA_TEST_WATCHDOG overrides) that fails the test if it hangs.
 */
static TEST_UNUSED void test_init(int *argc, char ***argv, const char *name, int watchdog_s)
{
    test_name = name;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &test_size);
    test_keep_going = (int)env_long("NARMA_TEST_KEEP_GOING", 0);
    long wd = env_long("NARMA_TEST_WATCHDOG", watchdog_s);
    if (wd > 0) {
        signal(SIGALRM, test_watchdog);
        alarm((unsigned)wd);
    }
}

/** Finish a test: barrier, "PASS <name>" on rank 0, MPI_Finalize. Returns 0. */
static TEST_UNUSED int test_finish(void)
{
    test_phase("finish");
    int failures = 0;
    MPI_Allreduce(&test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failures) {
        if (test_rank == 0) printf("FAIL %s: %d failed checks\n", test_name, failures);
        alarm(0);
        MPI_Finalize();
        exit(1);
    }
    if (test_rank == 0) {
        printf("PASS %s (np=%d, transport=%s)\n", test_name, test_size,
               env_str("NARMA_TRANSPORT", "auto"));
        fflush(stdout);
    }
    alarm(0);
    MPI_Finalize();
    return 0;
}

/** Skip the test (exit 77) with a reason, collectively. */
static TEST_UNUSED int test_skip(const char *why)
{
    if (test_rank == 0) {
        printf("SKIP %s: %s\n", test_name, why);
        fflush(stdout);
    }
    alarm(0);
    MPI_Finalize();
    exit(77);
}

/** Deterministic PRNG (splitmix64) so every rank can compute the same plan. */
static TEST_UNUSED uint64_t test_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/** Byte i of a payload that depends on (a, b): used to fill and verify buffers. */
static TEST_UNUSED unsigned char test_byte(uint32_t a, uint32_t b, size_t i)
{
    uint32_t x = a * 2654435761u ^ b * 40503u ^ (uint32_t)i * 2246822519u;
    x ^= x >> 13;
    return (unsigned char)(x * 3266489917u >> 24);
}

static TEST_UNUSED void test_fill(void *buf, size_t n, uint32_t a, uint32_t b)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = test_byte(a, b, i);
}

/** Index of the first byte that differs from the pattern, or -1. */
static TEST_UNUSED long test_verify(const void *buf, size_t n, uint32_t a, uint32_t b)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != test_byte(a, b, i)) return (long)i;
    return -1;
}

/** Poll a request with NARMA_Test until it completes (the watchdog bounds the wait). */
static TEST_UNUSED void test_wait_poll(NARMA_Request *req, MPI_Status *st)
{
    int flag = 0;
    while (!flag) {
        int rc = NARMA_Test(req, &flag, st);
        CHECK(rc == NARMA_SUCCESS, "NARMA_Test returned %d (%s)", rc, NARMA_Strerror(rc));
    }
}

/**
 * Test a request a few times and require that it is still incomplete. Used
 * after every notification that could match it has already arrived, so a
 * completion here is a wrong match, not a race.
 */
static TEST_UNUSED void test_expect_incomplete(NARMA_Request *req, const char *what)
{
    for (int i = 0; i < 100; i++) {
        int flag = 0;
        MPI_Status st;
        CHECK_RC(NARMA_Test(req, &flag, &st));
        CHECK(!flag, "%s completed unexpectedly (source %d tag %d)", what, st.MPI_SOURCE,
              st.MPI_TAG);
        if (flag) break;
    }
}

static TEST_UNUSED int test_byte_count(const MPI_Status *st)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    return n;
}

#endif /* NARMA_TEST_COMMON_H */
