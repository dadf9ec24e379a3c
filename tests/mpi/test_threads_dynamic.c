/* narma-test: np=2,3,4 transports=shm,mpi timeout=300 */
/* At 3 and 4 ranks on Open MPI 5 (mpi transport) this test hung for good until the transport's
 * waits drove MPI's progress (mpi_poke in src/transport/mpi/mpi.c): a rank waiting for a
 * peer's table update never served the accesses that peer's own flush waited for. */
/*
 * A dynamic window under MPI_THREAD_MULTIPLE: on every rank one thread attaches and detaches
 * regions over and over (attach/detach are one thread at a time per window) while 3 threads
 * access the other ranks' one stable region at once, inside a lock_all epoch the main thread
 * opens before the threads start. Each detach makes the peers' copies of this rank's region
 * table stale (on mpi they fetch it again, with a retry while the owner is between its two
 * writes), so accesses from several threads keep meeting a table that changes under them.
 *
 * Each accessor thread t makes NARMA_THREADS_TEST_ITERS iterations (default 3000) toward rank
 * (rank + 1 + k % (np - 1)) % np: Put of 8 values into its own slot of the target's stable
 * region, NARMA_Win_flush, Get back (must be what it put), Accumulate SUM +1 on the region's
 * counter, and every 8th iteration the same through Rput/Rget/Raccumulate + NARMA_Wait. No
 * call may fail (a stale table must be refetched, never refuse an access to a region that was
 * attached the whole time). At the end every counter holds exactly what the plan sent it, and
 * every slot its last values. The churning thread checks its own temporary regions: each is
 * zero-filled, attached, detached, and must still hold what it held (nobody writes them).
 */
#include "threads.h"

#define NA    3    /* accessor threads; thread NA churns */
#define VALS  8    /* int64 per slot */
#define CHURN 5000 /* attach/detach pairs at most */

static int rank, size;
static long K;
static NARMA_Win win;
static int64_t *stable;    /* [0]: counter, then one slot of VALS per (origin, accessor) */
static MPI_Aint *bases;    /* every rank's address of its stable region */
static int accessors_done; /* atomic */
static long churned;

static MPI_Aint slot_disp(int target, int origin, int t)
{
    return bases[target] + (MPI_Aint)sizeof(int64_t) * (1 + (origin * NA + t) * VALS);
}

static int target_of(long k) { return (rank + 1 + (int)(k % (size - 1))) % size; }

static void accessor(int t)
{
    thr_phase("accessing the stable regions");
    int64_t out[VALS], in[VALS];
    const int64_t one = 1;
    for (long k = 0; k < K; k++) {
        const int target = target_of(k);
        const MPI_Aint d = slot_disp(target, rank, t);
        for (int e = 0; e < VALS; e++) {
            out[e] = (int64_t)rank << 48 | (int64_t)t << 40 | (int64_t)k << 8 | e;
            in[e] = -1;
        }
        if (k % 8 != 7) {
            CHECK_RC(NARMA_Put(out, VALS, MPI_INT64_T, target, d, VALS, MPI_INT64_T, win));
            CHECK_RC(NARMA_Win_flush(target, win));
            CHECK_RC(NARMA_Get(in, VALS, MPI_INT64_T, target, d, VALS, MPI_INT64_T, win));
            CHECK_RC(NARMA_Accumulate(&one, 1, MPI_INT64_T, target, bases[target], 1, MPI_INT64_T,
                                      MPI_SUM, win));
            CHECK_RC(NARMA_Win_flush(target, win));
        } else {
            NARMA_Request r;
            CHECK_RC(NARMA_Rput(out, VALS, MPI_INT64_T, target, d, VALS, MPI_INT64_T, win, &r));
            CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            CHECK_RC(NARMA_Win_flush(target, win));
            CHECK_RC(NARMA_Rget(in, VALS, MPI_INT64_T, target, d, VALS, MPI_INT64_T, win, &r));
            CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            CHECK_RC(NARMA_Raccumulate(&one, 1, MPI_INT64_T, target, bases[target], 1, MPI_INT64_T,
                                       MPI_SUM, win, &r));
            CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
            CHECK_RC(NARMA_Win_flush(target, win));
        }
        for (int e = 0; e < VALS; e++)
            CHECK(in[e] == out[e], "iteration %ld, rank %d: element %d read back %#llx, put %#llx",
                  k, target, e, (unsigned long long)in[e], (unsigned long long)out[e]);
    }
    __atomic_fetch_add(&accessors_done, 1, __ATOMIC_RELEASE);
}

static void churner(void)
{
    thr_phase("attaching and detaching");
    const size_t page = 4096;
    unsigned char *prev = NULL;
    long i = 0;
    for (; i < CHURN && __atomic_load_n(&accessors_done, __ATOMIC_ACQUIRE) < NA; i++) {
        unsigned char *cur = aligned_alloc(page, page);
        CHECK(cur != NULL, "out of memory");
        memset(cur, (int)(i & 0xff), page);
        CHECK_RC(NARMA_Win_attach(win, cur, (MPI_Aint)page));
        if (prev != NULL) {
            CHECK_RC(NARMA_Win_detach(win, prev));
            for (size_t b = 0; b < page; b++)
                CHECK(prev[b] == (unsigned char)((i - 1) & 0xff),
                      "temporary region %ld: byte %zu changed to %#x", i - 1, b, prev[b]);
            free(prev);
        }
        prev = cur;
    }
    if (prev != NULL) {
        CHECK_RC(NARMA_Win_detach(win, prev));
        free(prev);
    }
    churned = i;
}

static void thread_main(void *arg, int t)
{
    (void)arg;
    if (t < NA)
        accessor(t);
    else
        churner();
}

int main(int argc, char **argv)
{
    thr_init(&argc, &argv, "test_threads_dynamic");
    rank = test_rank;
    size = test_size;
    K = thr_iters(3000);

    thr_phase("window");
    const size_t nvals = 1 + (size_t)size * NA * VALS;
    const size_t bytes = (nvals * sizeof(int64_t) + 4095) / 4096 * 4096;
    stable = aligned_alloc(4096, bytes);
    CHECK(stable != NULL, "out of memory");
    memset(stable, 0, bytes);
    bases = malloc(size * sizeof(MPI_Aint));
    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(NARMA_Win_attach(win, stable, (MPI_Aint)bytes));
    MPI_Aint mine;
    MPI_Get_address(stable, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD);

    thr_run(NA + 1, thread_main, NULL);

    thr_phase("after the threads");
    MPI_Barrier(MPI_COMM_WORLD); /* every access of every rank is flushed */
    long want = 0;
    for (int o = 0; o < size; o++) {
        if (o == rank) continue;
        for (long k = 0; k < K; k++)
            want += (o + 1 + (int)(k % (size - 1))) % size == rank;
    }
    want *= NA;
    CHECK(thr_load(&stable[0]) == (uint64_t)want, "the counter is %lld, expected %ld",
          (long long)thr_load(&stable[0]), want);
    for (int o = 0; o < size; o++)
        for (int t = 0; t < NA && o != rank; t++) {
            long last = -1;
            for (long k = 0; k < K; k++)
                if ((o + 1 + (int)(k % (size - 1))) % size == rank) last = k;
            if (last < 0) continue;
            const int64_t *s = &stable[1 + (o * NA + t) * VALS];
            for (int e = 0; e < VALS; e++) {
                int64_t v = (int64_t)thr_load(&s[e]);
                int64_t w = (int64_t)o << 48 | (int64_t)t << 40 | (int64_t)last << 8 | e;
                CHECK(v == w, "rank %d thread %d's slot element %d holds %#llx, expected %#llx", o,
                      t, e, (unsigned long long)v, (unsigned long long)w);
            }
        }
    long tot = churned;
    MPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# %d accessor threads x %d ranks x %ld iterations, %ld attach/detach pairs "
               "meanwhile\n",
               NA, size, K, tot);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Win_detach(win, stable));
    CHECK_RC(NARMA_Win_free(&win));
    free(stable);
    free(bases);
    return test_finish();
}
