/*
 * Helpers for the multi-threaded MPI tests (tests/mpi/test_threads_*.c), on top of common.h.
 *
 * thr_init() starts MPI with MPI_Init_thread(MPI_THREAD_MULTIPLE) and skips the test (exit 77,
 * with a message) when the library provides less. Its watchdog (alarm) fires 10 s before
 * ctest's TIMEOUT (NARMA_TEST_TIMEOUT, set by tests/CMakeLists.txt; NARMA_TEST_WATCHDOG
 * overrides) and prints every thread's phase and round (thr_phase, thr_round): a hang then says
 * where each thread was, where ctest would kill the job without a word.
 *
 * A failed CHECK, CHECK_RC or CHECK_MPI (common.h) also names the thread and its own phase
 * (thr_phase(), per thread), then aborts the job (thr_init leaves NARMA_TEST_KEEP_GOING off:
 * another thread may be waiting on the failed one).
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

static TEST_UNUSED void thr_phase(const char *phase)
{
    test_thread_phase = phase;
    if (test_thread >= 0 && test_thread < TEST_MAX_THREADS) test_thread_phases[test_thread] = phase;
}

/** The round this thread is in (printed by the watchdog). */
static TEST_UNUSED void thr_round(long round)
{
    if (test_thread >= 0 && test_thread < TEST_MAX_THREADS) test_thread_rounds[test_thread] = round;
}

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
    long timeout = env_long("NARMA_TEST_TIMEOUT", 0);
    long wd = env_long("NARMA_TEST_WATCHDOG", timeout > 20 ? timeout - 10 : timeout);
    if (wd > 0) {
        signal(SIGALRM, test_watchdog);
        alarm((unsigned)wd);
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
    test_thread = s->t;
    if (s->t < TEST_MAX_THREADS) test_thread_phases[s->t] = "started";
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
    for (int t = 0; t < n && t < TEST_MAX_THREADS; t++) {
        test_thread_phases[t] = "not started";
        test_thread_rounds[t] = 0;
    }
    __atomic_store_n(&test_nthreads, n, __ATOMIC_RELAXED);
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

/** narma must offer MPI_THREAD_MULTIPLE (NARMA_THREADS=off would make the test meaningless). */
static TEST_UNUSED void thr_check_narma_multiple(void)
{
    int level = -1;
    CHECK_RC(NARMA_Query_thread(&level));
    CHECK(level == MPI_THREAD_MULTIPLE,
          "NARMA_Query_thread gives %d after MPI_Init_thread provided MPI_THREAD_MULTIPLE (%d); "
          "NARMA_THREADS=off?",
          level, MPI_THREAD_MULTIPLE);
}

/** Iterations per thread: NARMA_THREADS_TEST_ITERS, or dflt; checked to lie in 1 .. 2^30 - 1. */
static TEST_UNUSED long thr_iters(long dflt)
{
    const long k = env_long("NARMA_THREADS_TEST_ITERS", dflt);
    CHECK(k > 0 && k < (1L << 30), "NARMA_THREADS_TEST_ITERS=%ld is out of range", k);
    return k;
}

/** Once every access has arrived: no notification is left unmatched on win (1000 polls). */
static TEST_UNUSED void thr_check_no_leftover(NARMA_Win win)
{
    NARMA_Request any;
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &any));
    CHECK_RC(NARMA_Start(&any));
    for (int p = 0; p < 1000; p++) {
        int flag = 0;
        MPI_Status st;
        CHECK_RC(NARMA_Test(&any, &flag, &st));
        CHECK(!flag, "a notification (source %d, tag %d) was left over", st.MPI_SOURCE, st.MPI_TAG);
    }
    CHECK_RC(NARMA_Request_free(&any));
}

/** The current thread's view of a 64-bit word that other threads or processes store to. */
static TEST_UNUSED uint64_t thr_load(const void *p)
{
    return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
}

#endif /* NARMA_TEST_THREADS_H */
