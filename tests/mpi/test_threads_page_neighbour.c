/* narma-test: np=2 transports=shm,mpi timeout=300 env=UCX_MEM_EVENTS=no */
/*
 * A window's neighbours in memory belong to the program: under MPI_THREAD_MULTIPLE its other
 * threads go on writing them while one thread creates and frees windows. narma moves the
 * pages holding a Win_create window (or memory attached to a dynamic window) onto shared
 * memory and back (src/transport/shm/usermem.h): a store of another thread to those pages
 * between the copy and the remapping must not be lost, nor read back wrong.
 *
 * Each rank has one page-aligned block of two pages: the window covers bytes 512 .. 4096 +
 * 2048 (so both pages move), the words at 0 .. 511 and at 4096 + 2048 .. 8191 are the
 * neighbours. Thread 1 never calls narma or MPI: it stores an increasing count into its
 * neighbour words, with plain atomic stores, and after each store loads it back; a load that
 * does not give what it stored last, or a final value that is not the last one stored, is a
 * lost write. Thread 0 meanwhile creates a Win_create window over the window bytes, puts to
 * the peer and checks what the peer put, frees it; then the same with a dynamic window and
 * Win_attach/Win_detach; NARMA_THREADS_TEST_ROUNDS rounds (default 500). UCX_MEM_EVENTS=no:
 * with UCX's memory hooks on, narma moves no page (nothing to test then). A round whose
 * window does not use shm (NARMA_TRANSPORT=mpi) moves nothing either, and must pass too.
 *
 * Then the same within the thread contract itself: 4 threads, each on its own communicator,
 * create windows at once over their own row of one page-aligned array (the 4 rows share a
 * page). Each round a thread stores its own values into its row, creates its window (the
 * others create theirs meanwhile), finds its stores still there, lets the peer put into the
 * row, finds the peer's values, frees the window and finds them still there
 * (a tenth of NARMA_THREADS_TEST_ROUNDS rounds).
 * The creations take turns (each round: creation by thread 0..3, the same order on every rank),
 * while the other threads store, put or free; under MPICH the frees take turns too. Under
 * MPI_THREAD_MULTIPLE these windows are the mpi transport's, i.e. MPI windows, and both MPIs
 * fail at making them at once (docs/conformance.md): MPICH 5.0.2 crashes now and then when
 * threads create or free MPI windows at once; Open MPI 5.0.11's communicator creation, which
 * its MPI_Win_create does twice and narma's twice more, takes 6-8 times as long when other
 * threads create communicators at once, and under load stalled for minutes (a CI run timed
 * out at 300 s). NARMA_THREADS_TEST_TURNS=0..3 (a mask: 1 creation, 2 free) overrides.
 */
#include "threads.h"
#include "../turns.h"

#include <sched.h>

#define PAGE  4096
#define WOFF  512 /* window bytes: [WOFF, WEND) */
#define WEND  (PAGE + PAGE / 2)
#define NWORD ((WEND - WOFF) / 8) /* window words */
#define TAG   7

static int rank, size, peer;
static long rounds;
static unsigned char *block;
static int stop; /* atomic: the writer stops */
/* What thread 0 is doing (atomic), recorded by the writer with a lost store. */
enum {
    ST_OTHER,
    ST_CREATE,
    ST_CREATE_FREE,
    ST_ATTACH,
    ST_DETACH_FREE,
    ST_USE_CREATE,
    ST_USE_DYNAMIC
};
static int stage;
static const char *stage_name[] = {"between windows",
                                   "in NARMA_Win_create",
                                   "in NARMA_Win_free (Win_create window)",
                                   "in NARMA_Win_attach",
                                   "in NARMA_Win_detach/free (dynamic)",
                                   "using the Win_create window",
                                   "using the dynamic window"};
static void set_stage(int s)
{
    __atomic_store_n(&stage, s, __ATOMIC_RELAXED);
    thr_phase(s == ST_OTHER ? "windows" : stage_name[s]);
}
static uint64_t stores, misses;

#define NROW   4
#define ROWLEN 64
static uint64_t rows[NROW][ROWLEN] __attribute__((aligned(PAGE))); /* 2 KiB: one page */
static MPI_Comm row_comm[NROW];
static long row_rounds;
/* Creations take turns; frees too under MPICH (see the header). */
static struct test_turns row_turns = TEST_TURNS_INIT(NROW);

static uint64_t *nb_lo(void) { return (uint64_t *)block; }
static uint64_t *nb_hi(void) { return (uint64_t *)(block + WEND); }

static void writer(void)
{
    thr_phase("writer beside the window");
    uint64_t *lo = nb_lo(), *hi = nb_hi();
    uint64_t i = 0, miss = 0, first_bad = 0, got_bad = 0;
    int bad_stage = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        i++;
        __atomic_store_n(&lo[i % 64], i, __ATOMIC_RELAXED);
        __atomic_store_n(&hi[i % 64], i, __ATOMIC_RELAXED);
        uint64_t a = __atomic_load_n(&lo[i % 64], __ATOMIC_RELAXED);
        uint64_t b = __atomic_load_n(&hi[i % 64], __ATOMIC_RELAXED);
        if (a != i || b != i) {
            if (!miss) {
                first_bad = i;
                got_bad = a != i ? a : b;
                bad_stage = __atomic_load_n(&stage, __ATOMIC_RELAXED);
            }
            miss++;
        }
        if (i % 4096 == 0) sched_yield();
    }
    for (int k = 0; k < 64; k++) { /* every word holds the last value stored in it */
        const uint64_t last = i < (uint64_t)k ? 0 : i - (i - k) % 64; /* 0: never stored */
        uint64_t a = __atomic_load_n(&lo[k], __ATOMIC_RELAXED),
                 b = __atomic_load_n(&hi[k], __ATOMIC_RELAXED);
        CHECK(a == last && b == last,
              "neighbour word %d holds %llu below and %llu above the window, last stored %llu", k,
              (unsigned long long)a, (unsigned long long)b, (unsigned long long)last);
    }
    CHECK(miss == 0,
          "%llu of %llu stores beside the window were lost (first: stored %llu, read back %llu, "
          "while thread 0 was %s)",
          (unsigned long long)miss, (unsigned long long)i, (unsigned long long)first_bad,
          (unsigned long long)got_bad, stage_name[bad_stage]);
    stores = i;
    misses = miss;
}

/* Put this round's values into the peer's window, read back the peer's. */
static void exchange(NARMA_Win win, uint64_t *w, MPI_Aint peer_base, int disp_unit, long round)
{
    for (int e = 0; e < NWORD; e++)
        w[e] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t v[NWORD];
    for (int e = 0; e < NWORD; e++)
        v[e] = (uint64_t)rank << 48 | (uint64_t)round << 16 | (uint64_t)e;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put_notify(v, NWORD, MPI_UINT64_T, peer, peer_base / disp_unit, NWORD,
                              MPI_UINT64_T, win, TAG));
    CHECK_RC(NARMA_Win_unlock_all(win));
    NARMA_Request r;
    CHECK_RC(NARMA_Notify_init(win, peer, TAG, 1, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&r));
    for (int e = 0; e < NWORD; e++) {
        uint64_t want = (uint64_t)peer << 48 | (uint64_t)round << 16 | (uint64_t)e;
        CHECK(w[e] == want, "round %ld: window word %d holds %#llx, expected %#llx", round, e,
              (unsigned long long)w[e], (unsigned long long)want);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void windows(void)
{
    thr_phase("windows");
    uint64_t *w = (uint64_t *)(block + WOFF);
    long on_shm = 0;
    for (long round = 0; round < rounds; round++) {
        thr_round(round);
        NARMA_Win win;
        set_stage(ST_CREATE);
        CHECK_RC(NARMA_Win_create(w, WEND - WOFF, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        set_stage(ST_OTHER);
        on_shm += strcmp(NARMA_Win_get_target_transport(win, peer), "shm") == 0;
        set_stage(ST_USE_CREATE);
        exchange(win, w, 0, 8, round);
        set_stage(ST_CREATE_FREE);
        CHECK_RC(NARMA_Win_free(&win));
        set_stage(ST_OTHER);

        CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        set_stage(ST_ATTACH);
        CHECK_RC(NARMA_Win_attach(win, w, WEND - WOFF));
        set_stage(ST_OTHER);
        MPI_Aint mine, theirs;
        MPI_Get_address(w, &mine);
        MPI_Sendrecv(&mine, 1, MPI_AINT, peer, 0, &theirs, 1, MPI_AINT, peer, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        set_stage(ST_USE_DYNAMIC);
        exchange(win, w, theirs, 1, round);
        set_stage(ST_DETACH_FREE);
        CHECK_RC(NARMA_Win_detach(win, w));
        CHECK_RC(NARMA_Win_free(&win));
        set_stage(ST_OTHER);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    if (rank == 0) printf("# %ld rounds, %ld Win_create windows on shm\n", rounds, on_shm);
}

static uint64_t row_value(int origin, long round, int t, int e)
{
    return (uint64_t)(origin + 1) << 56 | (uint64_t)round << 24 | (uint64_t)t << 16 | (uint64_t)e;
}

static void row_check(const uint64_t *row, int origin, long round, int t, const char *when)
{
    for (int e = 0; e < ROWLEN; e++) {
        uint64_t want = row_value(origin, round, t, e), got = thr_load(&row[e]);
        CHECK(got == want, "round %ld, %s: row %d word %d holds %#llx, expected %#llx", round, when,
              t, e, (unsigned long long)got, (unsigned long long)want);
    }
}

static void row_thread(void *arg, int t)
{
    (void)arg;
    thr_phase("rows: one window per thread over its row of a shared page");
    uint64_t *row = rows[t], v[ROWLEN];
    for (long round = 0; round < row_rounds; round++) {
        thr_round(round);
        thr_phase("rows: creating the window");
        for (int e = 0; e < ROWLEN; e++)
            __atomic_store_n(&row[e], row_value(rank, round, t, e), __ATOMIC_RELAXED);
        NARMA_Win win;
        test_turn_wait(&row_turns, round, 0, t);
        CHECK_RC(NARMA_Win_create(row, sizeof rows[t], 8, MPI_INFO_NULL, row_comm[t], &win));
        test_turn_next(&row_turns, 0);
        row_check(row, rank, round, t, "this thread's stores, after NARMA_Win_create");
        thr_phase("rows: the put");
        MPI_Barrier(row_comm[t]);
        for (int e = 0; e < ROWLEN; e++)
            v[e] = row_value(size + rank, round, t, e);
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Put(v, ROWLEN, MPI_UINT64_T, peer, 0, ROWLEN, MPI_UINT64_T, win));
        CHECK_RC(NARMA_Win_unlock_all(win));
        MPI_Barrier(row_comm[t]);
        row_check(row, size + peer, round, t, "the peer's put");
        thr_phase("rows: freeing the window");
        test_turn_wait(&row_turns, round, 1, t);
        CHECK_RC(NARMA_Win_free(&win));
        test_turn_next(&row_turns, 1);
        row_check(row, size + peer, round, t, "the peer's put, after NARMA_Win_free");
    }
}

static void thread_main(void *arg, int t)
{
    (void)arg;
    if (t == 0)
        windows();
    else
        writer();
}

int main(int argc, char **argv)
{
    thr_init(&argc, &argv, "test_threads_page_neighbour");
    rank = test_rank;
    size = test_size;
    peer = (rank + 1) % size;
    rounds = env_long("NARMA_THREADS_TEST_ROUNDS", 500);
    row_rounds = rounds / 10 > 0 ? rounds / 10 : 1;
    block = aligned_alloc(PAGE, 2 * PAGE);
    CHECK(block != NULL, "out of memory");
    memset(block, 0, 2 * PAGE);

    /* The writer runs until the windows are done: nothing to run one after the other. */
    if (!env_long("NARMA_THREADS_TEST_SERIAL", 0)) {
        thr_run(2, thread_main, NULL);
        if (rank == 0)
            printf("# %llu stores beside the windows, %llu lost\n", (unsigned long long)stores,
                   (unsigned long long)misses);
    }
    free(block);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    CHECK_MPI(MPI_Get_library_version(lib, &liblen));
    const int mpich = strstr(lib, "MPICH") != NULL;
    row_turns.enabled = (int)env_long("NARMA_THREADS_TEST_TURNS", mpich ? TEST_TURNS_ALL : 1);
    CHECK(row_turns.enabled >= 0 && row_turns.enabled <= TEST_TURNS_ALL,
          "NARMA_THREADS_TEST_TURNS=%d: a mask of 1 (creation) and 2 (free)", row_turns.enabled);
    if (env_long("NARMA_THREADS_TEST_SERIAL", 0)) row_turns.enabled = 0; /* one thread at a time */
    for (int t = 0; t < NROW; t++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &row_comm[t]));
    const double t0 = MPI_Wtime();
    thr_run(NROW, row_thread, NULL);
    const double row_s = MPI_Wtime() - t0;
    for (int t = 0; t < NROW; t++)
        CHECK_MPI(MPI_Comm_free(&row_comm[t]));
    if (rank == 0)
        printf("# %d threads x %ld rounds of windows over rows of one page in %.2f s%s\n", NROW,
               row_rounds, row_s,
               row_turns.enabled == TEST_TURNS_ALL ? " (creation and free take turns)"
               : row_turns.enabled == 1            ? " (creation takes turns)"
               : row_turns.enabled == 2            ? " (free takes turns)"
                                                   : "");
    return test_finish();
}
