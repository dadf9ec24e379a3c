/* narma-test: np=2,4 transports=shm,mpi timeout=300 */
/*
 * Every kind of data call from 4 threads per rank at once on one window, under
 * MPI_THREAD_MULTIPLE, inside one lock_all epoch the main thread opens before the threads
 * start and closes after they end; a fifth thread drives NARMA_Progress meanwhile.
 *
 * Thread t of each rank makes K iterations (NARMA_THREADS_TEST_ITERS, default 4000), iteration
 * k aimed at rank (rank + k) % np (itself included), each one:
 *   - adds 1 to the target's counter C with one of 8 fetching forms in turn: Fetch_and_op,
 *     Get_accumulate, Rget_accumulate + Wait, Fetch_and_op_notify, Get_accumulate_notify,
 *     Rget_accumulate_notify + Wait, Get_accumulate_notify_idx, Rget_accumulate_notify_idx +
 *     Wait. They are atomic with each other: the values fetched from one counter by all
 *     threads of all ranks are 0 .. n-1, each exactly once, and C ends at n;
 *   - adds 1 to the target's sum S with Accumulate, Raccumulate + Wait, Accumulate_notify or
 *     Accumulate_notify_idx in turn: S ends exact;
 *   - every 4th iteration, adds 1 to the target's word W by a Compare_and_swap loop (read
 *     with Fetch_and_op MPI_NO_OP, swap in the successor, retry when another thread or rank got
 *     there first): W ends exact; and steps its own word at the target with
 *     Compare_and_swap_notify (compare with the value it last stored: the swap must happen);
 *   - writes its own region at the target and reads it back, with one of 8 forms in turn:
 *     Put + flush + Get + flush_local; Rput/Rget + Wait (flush between); Put_notify +
 *     Get_notify; Rput_notify/Rget_notify + Wait; Put_notify_idx + Get_notify_idx;
 *     Rput_notify_idx/Rget_notify_idx + Wait; persistent Put_notify_init/Get_notify_init +
 *     Start + Wait + Request_free; Put_c + iflush + Wait + Get_c + flush_all +
 *     flush_local_all. The data read back is what was written.
 * Tag-matched notifications carry tag 100 + t, counter-indexed ones counter t (the main
 * thread gives each process NT counters beforehand): at the end thread t receives every
 * notification sent to its tag from all ranks with one NARMA_Notify_init(NARMA_ANY_SOURCE,
 * 100 + t, n) and waits on a threshold request for its counter; the counts are computed from
 * the plan. The progress thread polls a wildcard-source request on a tag nobody sends with
 * NARMA_Request_get_status: it must never complete. NARMA_Query_thread must say
 * MPI_THREAD_MULTIPLE before anything starts. After all threads of all ranks are done:
 * C, S, W and every counter hold exactly what the plan says, and an
 * NARMA_ANY_SOURCE/NARMA_ANY_TAG request finds no notification left over.
 */
#include "threads.h"

#include <sched.h>

#define NT         4  /* data threads per rank; thread NT drives progress */
#define L          16 /* elements of each thread's region at each target */
#define TAG0       100
#define TAG_NOBODY 99

enum { E_CTR, E_SUM, E_CAS, E_CASN = 8 };

static int rank, size;
static long K;
static int64_t *mem;
static NARMA_Win win;
static int64_t *fetched[NT]; /* thread t's k-th fetched counter value */
static int threads_done;     /* data threads finished (atomic) */

static MPI_Aint e_reg(int origin, int t)
{
    return E_CASN + (MPI_Aint)size * NT + (origin * NT + t) * L;
}
static MPI_Aint e_casn(int origin, int t) { return E_CASN + origin * NT + t; }
static int target_of(int origin, long k) { return (int)((origin + k) % size); }

/* Tag-matched and counter-indexed notifications iteration k sends to its target. */
static int tagged(long k)
{
    const int f = (int)(k % 8), a = (int)(k % 4);
    return (f == 3 || f == 4 || f == 5) + (a == 2) + (k % 4 == 0) +
           2 * (f == 2 || f == 3 || f == 6);
}
static int indexed(long k)
{
    const int f = (int)(k % 8), a = (int)(k % 4);
    return (f == 6 || f == 7) + (a == 3) + 2 * (f == 4 || f == 5);
}

/* What the plan sends to this rank from thread t of every rank: iterations, tag-matched and
 * counter-indexed notifications, compare-and-swap increments. */
static void expected(int t, long *iters, long *tags, long *idxs, long *cas)
{
    (void)t;
    *iters = *tags = *idxs = *cas = 0;
    for (int o = 0; o < size; o++)
        for (long k = 0; k < K; k++)
            if (target_of(o, k) == rank) {
                ++*iters;
                *tags += tagged(k);
                *idxs += indexed(k);
                *cas += k % 4 == 0;
            }
}

static int64_t pattern(int origin, int t, long k, int e)
{
    return (int64_t)origin << 48 | (int64_t)t << 40 | (int64_t)k << 8 | e;
}

static void wait_null(NARMA_Request *r, const char *what)
{
    CHECK_RC(NARMA_Wait(r, MPI_STATUS_IGNORE));
    CHECK(*r == NARMA_REQUEST_NULL, "NARMA_Wait left the %s request set", what);
}

/* One fetching +1 on the target's counter; returns the value fetched. */
static int64_t counter_add(int t, long k, int target)
{
    const int64_t one = 1;
    int64_t old = -1;
    NARMA_Request r;
    const int tag = TAG0 + t;
    switch (k % 8) {
    case 0:
        CHECK_RC(NARMA_Fetch_and_op(&one, &old, MPI_INT64_T, target, E_CTR, MPI_SUM, win));
        break;
    case 1:
        CHECK_RC(NARMA_Get_accumulate(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, target, E_CTR, 1,
                                      MPI_INT64_T, MPI_SUM, win));
        break;
    case 2:
        CHECK_RC(NARMA_Rget_accumulate(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, target, E_CTR, 1,
                                       MPI_INT64_T, MPI_SUM, win, &r));
        wait_null(&r, "Rget_accumulate");
        break;
    case 3:
        CHECK_RC(
            NARMA_Fetch_and_op_notify(&one, &old, MPI_INT64_T, target, E_CTR, MPI_SUM, win, tag));
        break;
    case 4:
        CHECK_RC(NARMA_Get_accumulate_notify(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, target,
                                             E_CTR, 1, MPI_INT64_T, MPI_SUM, win, tag));
        break;
    case 5:
        CHECK_RC(NARMA_Rget_accumulate_notify(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, target,
                                              E_CTR, 1, MPI_INT64_T, MPI_SUM, win, tag, &r));
        wait_null(&r, "Rget_accumulate_notify");
        break;
    case 6:
        CHECK_RC(NARMA_Get_accumulate_notify_idx(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, target,
                                                 E_CTR, 1, MPI_INT64_T, MPI_SUM, t, win));
        break;
    case 7:
        CHECK_RC(NARMA_Rget_accumulate_notify_idx(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T,
                                                  target, E_CTR, 1, MPI_INT64_T, MPI_SUM, t, win,
                                                  &r));
        wait_null(&r, "Rget_accumulate_notify_idx");
        break;
    }
    return old;
}

static void sum_add(int t, long k, int target)
{
    const int64_t one = 1;
    NARMA_Request r;
    switch (k % 4) {
    case 0:
        CHECK_RC(
            NARMA_Accumulate(&one, 1, MPI_INT64_T, target, E_SUM, 1, MPI_INT64_T, MPI_SUM, win));
        break;
    case 1:
        CHECK_RC(NARMA_Raccumulate(&one, 1, MPI_INT64_T, target, E_SUM, 1, MPI_INT64_T, MPI_SUM,
                                   win, &r));
        wait_null(&r, "Raccumulate");
        break;
    case 2:
        CHECK_RC(NARMA_Accumulate_notify(&one, 1, MPI_INT64_T, target, E_SUM, 1, MPI_INT64_T,
                                         MPI_SUM, win, TAG0 + t));
        break;
    case 3:
        CHECK_RC(NARMA_Accumulate_notify_idx(&one, 1, MPI_INT64_T, target, E_SUM, 1, MPI_INT64_T,
                                             MPI_SUM, t, win));
        break;
    }
}

/* +1 on the target's W by compare-and-swap, retried until it is this thread's swap that
 * lands; then one step of this thread's own word at the target, which nobody else swaps. */
static void cas_add(int t, int target, int64_t *own_next)
{
    const int64_t nothing = 0;
    for (int tries = 0;; tries++) {
        int64_t cur = -1, next, got = -1;
        CHECK_RC(NARMA_Fetch_and_op(&nothing, &cur, MPI_INT64_T, target, E_CAS, MPI_NO_OP, win));
        next = cur + 1;
        CHECK_RC(NARMA_Compare_and_swap(&next, &cur, &got, MPI_INT64_T, target, E_CAS, win));
        if (got == cur) break;
        CHECK(got > cur, "W at rank %d went back from %lld to %lld", target, (long long)cur,
              (long long)got);
        CHECK(tries < 1000000, "no compare-and-swap on rank %d's W succeeded in 10^6 tries",
              target);
    }
    const int64_t cmp = own_next[target], swap = cmp + 1;
    int64_t got = -1;
    CHECK_RC(NARMA_Compare_and_swap_notify(&swap, &cmp, &got, MPI_INT64_T, target, e_casn(rank, t),
                                           win, TAG0 + t));
    CHECK(got == cmp,
          "Compare_and_swap_notify on this thread's own word at rank %d found %lld, "
          "expected %lld",
          target, (long long)got, (long long)cmp);
    own_next[target] = swap;
}

/* Write this thread's region at the target and read it back. */
static void put_get(int t, long k, int target)
{
    int64_t out[L], in[L];
    for (int e = 0; e < L; e++) {
        out[e] = pattern(rank, t, k, e);
        in[e] = -1;
    }
    const MPI_Aint d = e_reg(rank, t);
    const int tag = TAG0 + t;
    NARMA_Request r;
    switch (k % 8) {
    case 0:
        CHECK_RC(NARMA_Put(out, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_flush(target, win));
        CHECK_RC(NARMA_Get(in, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_flush_local(target, win));
        break;
    case 1:
        CHECK_RC(NARMA_Rput(out, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win, &r));
        wait_null(&r, "Rput");
        CHECK_RC(NARMA_Win_flush(target, win));
        CHECK_RC(NARMA_Rget(in, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win, &r));
        wait_null(&r, "Rget");
        break;
    case 2:
        CHECK_RC(NARMA_Put_notify(out, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win, tag));
        CHECK_RC(NARMA_Get_notify(in, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win, tag));
        break;
    case 3:
        CHECK_RC(NARMA_Rput_notify(out, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win, &r, tag));
        wait_null(&r, "Rput_notify");
        CHECK_RC(NARMA_Rget_notify(in, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win, &r, tag));
        wait_null(&r, "Rget_notify");
        break;
    case 4:
        CHECK_RC(NARMA_Put_notify_idx(out, L, MPI_INT64_T, target, d, L, MPI_INT64_T, t, win));
        CHECK_RC(NARMA_Get_notify_idx(in, L, MPI_INT64_T, target, d, L, MPI_INT64_T, t, win));
        break;
    case 5:
        CHECK_RC(NARMA_Rput_notify_idx(out, L, MPI_INT64_T, target, d, L, MPI_INT64_T, t, win, &r));
        wait_null(&r, "Rput_notify_idx");
        CHECK_RC(NARMA_Rget_notify_idx(in, L, MPI_INT64_T, target, d, L, MPI_INT64_T, t, win, &r));
        wait_null(&r, "Rget_notify_idx");
        break;
    case 6:
        CHECK_RC(
            NARMA_Put_notify_init(out, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win, tag, &r));
        CHECK_RC(NARMA_Start(&r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Request_free(&r));
        CHECK_RC(
            NARMA_Get_notify_init(in, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win, tag, &r));
        CHECK_RC(NARMA_Start(&r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Request_free(&r));
        break;
    case 7:
        CHECK_RC(NARMA_Put_c(out, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_iflush(target, win, &r));
        wait_null(&r, "iflush");
        CHECK_RC(NARMA_Get_c(in, L, MPI_INT64_T, target, d, L, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_flush_all(win));
        CHECK_RC(NARMA_Win_flush_local_all(win));
        break;
    }
    for (int e = 0; e < L; e++)
        CHECK(in[e] == out[e],
              "iteration %ld (form %ld), rank %d: element %d read back %#llx, written %#llx", k,
              k % 8, target, e, (unsigned long long)in[e], (unsigned long long)out[e]);
}

static void progress_thread(void)
{
    thr_phase("progress thread");
    NARMA_Request nobody;
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, TAG_NOBODY, 1, &nobody));
    CHECK_RC(NARMA_Start(&nobody));
    while (__atomic_load_n(&threads_done, __ATOMIC_ACQUIRE) < NT) {
        int flag = 0;
        MPI_Status st;
        CHECK_RC(NARMA_Progress());
        CHECK_RC(NARMA_Request_get_status(nobody, &flag, &st));
        CHECK(!flag, "a request for tag %d matched (source %d, tag %d)", TAG_NOBODY, st.MPI_SOURCE,
              st.MPI_TAG);
        sched_yield();
    }
    CHECK_RC(NARMA_Request_free(&nobody));
}

static void thread_main(void *arg, int t)
{
    (void)arg;
    if (t == NT) {
        progress_thread();
        return;
    }
    thr_phase("data calls");
    int64_t *own_next = calloc(size, sizeof *own_next);
    for (long k = 0; k < K; k++) {
        const int target = target_of(rank, k);
        fetched[t][k] = counter_add(t, k, target);
        sum_add(t, k, target);
        if (k % 4 == 0) cas_add(t, target, own_next);
        put_get(t, k, target);
    }
    free(own_next);

    thr_phase("receive this thread's notifications");
    long iters, tags, idxs, cas;
    expected(t, &iters, &tags, &idxs, &cas);
    NARMA_Request r;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(win, NARMA_ANY_SOURCE, TAG0 + t, (int)tags, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Wait(&r, &st));
    CHECK(st.MPI_TAG == TAG0 + t && st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size,
          "status (source %d, tag %d) of the last of %ld notifications", st.MPI_SOURCE, st.MPI_TAG,
          tags);
    CHECK_RC(NARMA_Request_free(&r));
    CHECK_RC(NARMA_Win_notify_ithreshold(win, t, idxs, &r));
    wait_null(&r, "threshold");
    __atomic_fetch_add(&threads_done, 1, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
    thr_init(&argc, &argv, "test_threads_rma");
    rank = test_rank;
    size = test_size;
    K = thr_iters(4000);
    thr_check_narma_multiple();
    for (int t = 0; t < NT; t++) {
        fetched[t] = malloc(K * sizeof(int64_t));
        CHECK(fetched[t] != NULL, "out of memory");
    }

    thr_phase("window");
    const MPI_Aint nelem = e_reg(size, 0);
    CHECK_RC(NARMA_Win_allocate(nelem * (MPI_Aint)sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, nelem * sizeof(int64_t));
    CHECK_RC(NARMA_Win_set_num_notify(win, MPI_INFO_NULL, NT));
    CHECK_RC(NARMA_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD);

    thr_run(NT + 1, thread_main, NULL);

    thr_phase("after the threads");
    MPI_Barrier(MPI_COMM_WORLD);
    long total = 0, total_cas = 0; /* counter and CAS increments this rank received */
    for (int t = 0; t < NT; t++) {
        long iters, tags, idxs, cas;
        expected(t, &iters, &tags, &idxs, &cas);
        total += iters;
        total_cas += cas;
        MPI_Count c = -1;
        CHECK_RC(NARMA_Win_get_notify_value(win, t, &c));
        CHECK(c == idxs, "counter %d is %lld, expected %ld", t, (long long)c, idxs);
    }
    CHECK(thr_load(&mem[E_CTR]) == (uint64_t)total, "counter C is %lld, expected %ld",
          (long long)thr_load(&mem[E_CTR]), total);
    CHECK(thr_load(&mem[E_SUM]) == (uint64_t)total, "sum S is %lld, expected %ld",
          (long long)thr_load(&mem[E_SUM]), total);
    CHECK(thr_load(&mem[E_CAS]) == (uint64_t)total_cas, "W is %lld, expected %ld",
          (long long)thr_load(&mem[E_CAS]), total_cas);

    /* Every value fetched from rank j's counter, from all threads of all ranks, once. */
    long *n_at = calloc(size, sizeof(long)); /* increments of rank j's counter */
    long maxn = 0;
    for (int j = 0; j < size; j++) {
        for (int o = 0; o < size; o++)
            for (long k = 0; k < K; k++)
                n_at[j] += target_of(o, k) == j;
        n_at[j] *= NT;
        maxn = n_at[j] > maxn ? n_at[j] : maxn;
    }
    int *seen = calloc((size_t)size * maxn, sizeof(int)); /* [j][v]: times v was fetched */
    CHECK(seen != NULL, "out of memory");
    for (int t = 0; t < NT; t++)
        for (long k = 0; k < K; k++) {
            const int j = target_of(rank, k);
            const int64_t v = fetched[t][k];
            CHECK(v >= 0 && v < n_at[j], "thread %d fetched %lld from rank %d's counter (0..%ld)",
                  t, (long long)v, j, n_at[j] - 1);
            seen[j * maxn + v]++;
        }
    MPI_Allreduce(MPI_IN_PLACE, seen, (int)(size * maxn), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int j = 0; j < size; j++)
        for (long v = 0; v < n_at[j]; v++)
            CHECK(seen[j * maxn + v] == 1,
                  "value %ld was fetched %d times from rank %d's counter (atomicity)", v,
                  seen[j * maxn + v], j);
    free(seen);
    free(n_at);

    thr_check_no_leftover(win);
    if (rank == 0)
        printf("# %d threads x %d ranks x %ld iterations of every data call on one window\n", NT,
               size, K);

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Win_free(&win));
    for (int t = 0; t < NT; t++)
        free(fetched[t]);
    return test_finish();
}
