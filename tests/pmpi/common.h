/*
 * Shared helpers for the test programs of libnarma-mpi (tests/pmpi/).
 *
 * The tests are plain MPI programs: they include <mpi.h> (and <narma/narma_mpix.h> only where
 * they test the extensions) and never a narma header otherwise, so each one is also a valid
 * program for any MPI library. ctest links them with libnarma-mpi, which carries their windows
 * on narma; the "passthrough" variants run the same binaries with NARMA_PMPI=off, where the
 * MPI library does everything, and so check the tests themselves against MPI.
 *
 * Every test is a sequence of phases (test_phase("...")), each a handful of CHECKs. A failed
 * CHECK prints rank, file:line, the phase and a message, then aborts the job (exit code 1;
 * with NARMA_TEST_KEEP_GOING=1 it continues and the test fails at the end). A watchdog
 * (alarm) turns a hang into a failure that names the phase it hung in. When every check
 * held, rank 0 prints "No Errors" (MPICH's test-suite convention) and the program exits 0.
 *
 * MPI_COMM_WORLD and the test's windows use MPI_ERRORS_RETURN, so a failing call is reported
 * by CHECK_MPI with its place and error string instead of aborting inside the library.
 */
#ifndef NARMA_PMPI_TEST_COMMON_H
#define NARMA_PMPI_TEST_COMMON_H

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    fprintf(stderr, "FAIL %s rank %d/%d %s:%d [phase: %s%s%s] (%s): %s\n", test_name, test_rank,
            test_size, file, line, test_current_phase, test_detail[0] ? "; " : "", test_detail,
            cond, msg);
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

/** "class N (MPI_ERR_X: text)" for an MPI error code, in a static buffer. */
static TEST_UNUSED const char *test_errstr(int code)
{
    static char buf[2 * MPI_MAX_ERROR_STRING + 64];
    char s[MPI_MAX_ERROR_STRING], cs[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = -1;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "?");
    if (cls < 0 || MPI_Error_string(cls, cs, &len) != MPI_SUCCESS) snprintf(cs, sizeof cs, "?");
    snprintf(buf, sizeof buf, "code %d, class %d (%s): %s", code, cls, cs, s);
    return buf;
}

/** CHECK_MPI(call): the MPI call must return MPI_SUCCESS. */
#define CHECK_MPI(call)                                                                  \
    do {                                                                                 \
        int check_rc_ = (call);                                                          \
        if (check_rc_ != MPI_SUCCESS)                                                    \
            test_fail(__FILE__, __LINE__, #call, "returned %s", test_errstr(check_rc_)); \
    } while (0)

/** The error class of an MPI error code (-1 when MPI_Error_class itself fails). */
static TEST_UNUSED int test_class(int code)
{
    int cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) return -1;
    return cls;
}

/** CHECK_CLASS(call, cls): the MPI call must fail with an error of class cls. */
#define CHECK_CLASS(call, cls)                                                          \
    do {                                                                                \
        int check_rc_ = (call);                                                         \
        if (test_class(check_rc_) != (cls))                                             \
            test_fail(__FILE__, __LINE__, #call, "returned %s; expected class %d (%s)", \
                      test_errstr(check_rc_), (int)(cls), #cls);                        \
    } while (0)

/** CHECK_CLASS2(call, c1, c2): the MPI call must fail with an error of class c1 or c2. */
#define CHECK_CLASS2(call, c1, c2)                                                       \
    do {                                                                                 \
        int check_rc_ = (call), check_cls_ = test_class(check_rc_);                      \
        if (check_cls_ != (c1) && check_cls_ != (c2))                                    \
            test_fail(__FILE__, __LINE__, #call, "returned %s; expected class %s or %s", \
                      test_errstr(check_rc_), #c1, #c2);                                 \
    } while (0)

/** Name the phase that follows (shown by failures and by the watchdog). */
static TEST_UNUSED void test_phase(const char *phase)
{
    test_current_phase = phase;
    test_detail[0] = 0;
}

static TEST_UNUSED long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end;
    long v = strtol(s, &end, 0);
    return *end ? dflt : v;
}

/** True when libnarma-mpi is told to pass every window through (NARMA_PMPI=off): the MPI
 *  library then does everything, and checks of narma-only behaviour are left out. */
static TEST_UNUSED int test_pmpi_off(void)
{
    const char *s = getenv("NARMA_PMPI");
    return s && (!strcmp(s, "off") || !strcmp(s, "0") || !strcmp(s, "false"));
}

/** Whether libnarma-mpi carries an MPI_Win_allocate_shared window on comm (collective): not
 *  with NARMA_PMPI=off, nor when comm's ranks span pretend nodes (NARMA_NODE_SIZE=k: k
 *  consecutive world ranks each), where narma refuses it and MPI makes it. */
static TEST_UNUSED int test_narma_carries_shared(MPI_Comm comm)
{
    int k = (int)env_long("NARMA_NODE_SIZE", 0), world = 0, mm[2], all[2];
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    mm[0] = k > 0 ? world / k : 0;
    mm[1] = -mm[0];
    MPI_Allreduce(mm, all, 2, MPI_INT, MPI_MIN, comm);
    return !test_pmpi_off() && all[0] == -all[1];
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
    _exit(1);
}

/* After MPI's initialisation: rank, size, MPI_ERRORS_RETURN on MPI_COMM_WORLD, watchdog. */
static TEST_UNUSED void test_setup(const char *name, int watchdog_s)
{
    test_name = name;
    MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &test_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_keep_going = (int)env_long("NARMA_TEST_KEEP_GOING", 0);
    long wd = env_long("NARMA_TEST_WATCHDOG", watchdog_s);
    if (wd > 0) {
        signal(SIGALRM, test_watchdog);
        alarm((unsigned)wd);
    }
}

/**
 * Start a test: MPI_Init, rank/size, MPI_ERRORS_RETURN on MPI_COMM_WORLD and a watchdog of
 * @p watchdog_s seconds (NARMA_TEST_WATCHDOG overrides) that fails the test if it hangs.
 */
static TEST_UNUSED void test_init(int *argc, char ***argv, const char *name, int watchdog_s)
{
    MPI_Init(argc, argv);
    test_setup(name, watchdog_s);
}

/** Errors on @p win are returned to the test (and reported by CHECK_MPI), not fatal. */
static TEST_UNUSED void test_errors_return(MPI_Win win)
{
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
}

/** Finish a test: every rank's failures summed, "No Errors" on rank 0, MPI_Finalize. */
static TEST_UNUSED int test_finish(void)
{
    test_phase("finish");
    int failures = 0;
    MPI_Allreduce(&test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (test_rank == 0) {
        if (failures)
            printf("FAIL %s: %d failed checks\n", test_name, failures);
        else
            printf("No Errors\n");
        fflush(stdout);
    }
    alarm(0);
    MPI_Finalize();
    return failures ? 1 : 0;
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

/** A value that depends on (round, origin, index): what origins write and targets expect. */
static TEST_UNUSED int test_val(int round, int origin, int i)
{
    return round * 100000 + origin * 1000 + i;
}

/** Group of @p n ranks of MPI_COMM_WORLD (free with MPI_Group_free). */
static TEST_UNUSED MPI_Group test_group(int n, const int *ranks)
{
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, n, ranks, &g);
    MPI_Group_free(&world);
    return g;
}

#endif /* NARMA_PMPI_TEST_COMMON_H */
