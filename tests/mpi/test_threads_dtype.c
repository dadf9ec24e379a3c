/* narma-test: np=2,4 transports=shm,mpi timeout=300 */
/*
 * Datatypes created and freed with plain MPI calls on several threads while other threads are
 * inside narma, under MPI_THREAD_MULTIPLE. narma describes a derived type once and caches the
 * description; MPI tells it when the type is destroyed (an attribute's delete callback), and
 * MPI may then hand the same handle to a new type. The callback runs on the thread that called
 * MPI_Type_free, which holds no narma lock: it must neither touch the cache another thread is
 * reading nor wait for narma's lock (MPI may hold its own around the callback), and the next
 * lookup of a reused handle must describe the new type.
 *
 * NT threads per rank, K iterations each (NARMA_THREADS_TEST_ITERS, default 2000), inside one
 * lock_all epoch the main thread opens. Iteration k of thread t, toward rank (rank + k) % np:
 *   - a vector type of c = 1 + (k % 5) int64 elements at stride s = 1 + (k + t) % 4, created
 *     and committed with MPI (handles are reused across iterations and threads);
 *   - Put of the span (c - 1) * s + 1 as contiguous "hole" values, flush, Put of c pattern
 *     values through the vector on both sides, flush, contiguous Get of the span, flush_local:
 *     the elements at multiples of s hold the pattern, the others the holes. A stale
 *     description (another stride or count) puts the pattern elsewhere;
 *   - MPI_Type_free of the vector (the callback on this thread, outside narma), every third
 *     iteration NARMA_Type_free instead (the callback inside narma, holding its lock).
 * Each thread writes only its own region at each target. The cache touched outside the lock
 * (the race this guards against) is caught by ThreadSanitizer (ctest -L threads,
 * scripts/test.sh --tsan), not by the data checks; a stale description (a drain or an
 * invalidation missing) fails the data checks on shm, where narma moves the data itself.
 */
#include "threads.h"

#define NT   3  /* threads per rank */
#define SPAN 32 /* int64 elements of a region: the largest span is (5 - 1) * 4 + 1 = 17 */

static int rank, size;
static long K;
static int64_t *mem;
static NARMA_Win win;

static MPI_Aint region(int origin, int t) { return ((MPI_Aint)origin * NT + t) * SPAN; }

static int64_t value(int t, long k, int i, int hole)
{
    return ((int64_t)rank << 48) ^ ((int64_t)t << 40) ^ ((int64_t)k << 8) ^ (hole ? 0x80 : 0) ^ i;
}

static void thread_main(void *arg, int t)
{
    (void)arg;
    thr_phase("types made and freed around narma calls");
    int64_t holes[SPAN], pattern[SPAN], got[SPAN];
    for (long k = 0; k < K; k++) {
        const int target = (int)((rank + k) % size);
        const int c = 1 + (int)(k % 5), s = 1 + (int)((k + t) % 4), span = (c - 1) * s + 1;
        const MPI_Aint disp = region(rank, t);
        MPI_Datatype vec;
        CHECK_MPI(MPI_Type_vector(c, 1, s, MPI_INT64_T, &vec));
        CHECK_MPI(MPI_Type_commit(&vec));
        for (int i = 0; i < span; i++) {
            holes[i] = value(t, k, i, 1);
            pattern[i] = i % s == 0 ? value(t, k, i, 0) : -1; /* what the vector picks */
            got[i] = 0;
        }
        CHECK_RC(NARMA_Put(holes, span, MPI_INT64_T, target, disp, span, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_flush(target, win));
        CHECK_RC(NARMA_Put(pattern, 1, vec, target, disp, 1, vec, win));
        CHECK_RC(NARMA_Win_flush(target, win));
        CHECK_RC(NARMA_Get(got, span, MPI_INT64_T, target, disp, span, MPI_INT64_T, win));
        CHECK_RC(NARMA_Win_flush_local(target, win));
        for (int i = 0; i < span; i++) {
            const int64_t want = i % s == 0 ? value(t, k, i, 0) : value(t, k, i, 1);
            CHECK(got[i] == want,
                  "iteration %ld, vector(%d, 1, %d) to %d: element %d is %#llx, not %#llx", k, c, s,
                  target, i, (unsigned long long)got[i], (unsigned long long)want);
        }
        if (k % 3 == 2)
            CHECK_RC(NARMA_Type_free(&vec)); /* evicted under narma's lock, at once */
        else
            CHECK_MPI(MPI_Type_free(&vec)); /* evicted by the next lookup */
    }
}

int main(int argc, char **argv)
{
    thr_init(&argc, &argv, "test_threads_dtype");
    rank = test_rank;
    size = test_size;
    K = thr_iters(2000);
    thr_check_narma_multiple();

    thr_phase("window");
    const MPI_Aint nelem = region(size, 0);
    CHECK_RC(NARMA_Win_allocate(nelem * (MPI_Aint)sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, (size_t)nelem * sizeof(int64_t));
    CHECK_RC(NARMA_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD);

    thr_run(NT, thread_main, NULL);

    thr_phase("after the threads");
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    if (rank == 0)
        printf("# %d threads x %ld types made, used and freed with MPI_Type_free\n", NT, K);
    return test_finish();
}
