/*
 * Helpers for the multi-threaded MPI tests (tests/mpi/test_threads_*.c), on top of common.h.
 *
 * thr_init() starts MPI with MPI_Init_thread(MPI_THREAD_MULTIPLE) and skips the test (exit 77,
 * with a message) when the library provides less. No watchdog: alarm() would interrupt one
 * thread of many, and ctest's TIMEOUT already turns a hang into a failure.
 *
 * CHECK, CHECK_RC and CHECK_MPI are redefined so that a failure also names the thread and its
 * own phase (thr_phase(), per thread), then aborts the job: another thread may be waiting on
 * the failed one, so there is no keep-going mode here.
 *
 * thr_run(n, fn, arg) runs fn(arg, t) on n threads (t = 0 .. n-1) and joins them all. With
 * NARMA_THREADS_TEST_SERIAL=1 it runs them one after another (each joined before the next
 * starts), on every rank in the same order: the tests are written so that they pass that way
 * on a library without thread safety, which tells a mistake of the test from one of narma's.
 */
#ifndef NARMA_TEST_THREADS_H
#define NARMA_TEST_THREADS_H

#include "common.h"

#include <pthread.h>

/** This thread's index (-1: the main thread) and phase, printed by failed checks. */
static _Thread_local int thr_self = -1;
static _Thread_local const char *thr_phase_name = "init";

static TEST_UNUSED void thr_phase(const char *phase) { thr_phase_name = phase; }

static TEST_UNUSED TEST_PRINTF(4, 5) void thr_fail(const char *file, int line, const char *cond,
                                                   const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s rank %d/%d thread %d %s:%d [phase: %s] (%s): %s\n", test_name,
            test_rank, test_size, thr_self, file, line, thr_phase_name, cond, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

/* A failed narma call: its class, and for NARMA_ERR_MPI the MPI error behind it (this
 * thread's: NARMA_Get_mpi_error is per thread). */
static TEST_UNUSED void thr_fail_rc(const char *file, int line, const char *call, int rc)
{
    char mpi[MPI_MAX_ERROR_STRING + 32] = "";
    if (rc == NARMA_ERR_MPI) {
        char s[MPI_MAX_ERROR_STRING];
        int code = NARMA_Get_mpi_error(), len = 0;
        if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "?");
        snprintf(mpi, sizeof mpi, "; MPI error %d: %s", code, s);
    }
    thr_fail(file, line, call, "returned %d (%s)%s", rc, NARMA_Strerror(rc), mpi);
}

#undef CHECK
#undef CHECK_RC
#undef CHECK_MPI

/** CHECK(cond, fmt, ...): abort the job with a located message (rank, thread) unless cond. */
#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) thr_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

/** CHECK_RC(call): the narma call must return NARMA_SUCCESS. */
#define CHECK_RC(call)                                                                     \
    do {                                                                                   \
        int check_rc_ = (call);                                                            \
        if (check_rc_ != NARMA_SUCCESS) thr_fail_rc(__FILE__, __LINE__, #call, check_rc_); \
    } while (0)

/** CHECK_MPI(call): the MPI call must return MPI_SUCCESS. */
#define CHECK_MPI(call)                                                     \
    do {                                                                    \
        int check_rc_ = (call);                                             \
        if (check_rc_ != MPI_SUCCESS)                                       \
            thr_fail(__FILE__, __LINE__, #call, "MPI error %d", check_rc_); \
    } while (0)

/** MPI_Init_thread(MPI_THREAD_MULTIPLE); skip (exit 77) when the library provides less. */
static TEST_UNUSED void thr_init(int *argc, char ***argv, const char *name)
{
    test_name = name;
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &test_size);
    if (provided < MPI_THREAD_MULTIPLE) {
        char why[128];
        snprintf(why, sizeof why, "the MPI library provides thread level %d, not %d (MULTIPLE)",
                 provided, MPI_THREAD_MULTIPLE);
        test_skip(why);
    }
}

struct thr_slot {
    void (*fn)(void *arg, int t);
    void *arg;
    int t;
};

static void *thr_main(void *p)
{
    struct thr_slot *s = p;
    thr_self = s->t;
    s->fn(s->arg, s->t);
    return NULL;
}

/** Run fn(arg, t) on n new threads, t = 0 .. n-1, and join them all. */
static TEST_UNUSED void thr_run(int n, void (*fn)(void *arg, int t), void *arg)
{
    const int serial = (int)env_long("NARMA_THREADS_TEST_SERIAL", 0);
    pthread_t *th = malloc((size_t)n * sizeof *th);
    struct thr_slot *s = malloc((size_t)n * sizeof *s);
    CHECK(th && s, "out of memory for %d threads", n);
    for (int t = 0; t < n; t++) {
        s[t] = (struct thr_slot){fn, arg, t};
        int rc = pthread_create(&th[t], NULL, thr_main, &s[t]);
        CHECK(rc == 0, "pthread_create of thread %d: %s", t, strerror(rc));
        if (serial) pthread_join(th[t], NULL);
    }
    for (int t = 0; t < n && !serial; t++)
        pthread_join(th[t], NULL);
    free(th);
    free(s);
}

/** The current thread's view of a 64-bit word that other threads or processes store to. */
static TEST_UNUSED uint64_t thr_load(const void *p)
{
    return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
}

#endif /* NARMA_TEST_THREADS_H */
