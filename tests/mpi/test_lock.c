/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Passive-target epochs:
 *  - an exclusive lock gives mutual exclusion: a non-atomic Get/+1/Put from
 *    all ranks counts exactly;
 *  - shared locks coexist; readers under a shared lock never observe a
 *    writer's half-finished update made under an exclusive lock;
 *  - locks on several targets at once; lock on self with local load/store;
 *  - lock_all + flush (remote completion), flush_local (origin buffer
 *    reusable), flush_all, flush_local_all, Win_sync.
 */
#include "common.h"

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_lock", 45);
    const int rank = test_rank, size = test_size;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int K = (int)env_long("NARMA_TEST_ITERS", 100);

    long long *base;
    NARMA_Win win;
    /* [0] counter, [1],[2] invariant pair, [8, 8+size) per-origin slots, [16..32) scratch */
    CHECK_RC(NARMA_Win_allocate(32 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < 32; i++)
        base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("exclusive lock: non-atomic read-modify-write counts exactly");
    for (int i = 0; i < K; i++) {
        long long v = -1;
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_RC(NARMA_Get(&v, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_flush(0, win));
        v++;
        CHECK_RC(NARMA_Put(&v, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, 0, 0, win));
        CHECK(base[0] == (long long)size * K,
              "counter %lld, expected %lld: exclusive locks overlapped", base[0],
              (long long)size * K);
        CHECK_RC(NARMA_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("shared readers never see a torn update made under an exclusive lock");
    {
        /* rank 0 writes the pair {i, i} in two separate Puts; the others read it */
        long long torn = 0;
        for (int i = 1; i <= K; i++) {
            if (rank == 0) {
                long long x = i, y = i;
                CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, right, 0, win));
                CHECK_RC(NARMA_Put(&x, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, win));
                CHECK_RC(NARMA_Win_flush(right, win));
                CHECK_RC(NARMA_Put(&y, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, win));
                CHECK_RC(NARMA_Win_unlock(right, win));
            }
            long long pair[2] = {-1, -2};
            int t = 1 % size; /* everybody reads rank 1's pair (written by rank 0) */
            CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, t, 0, win));
            CHECK_RC(NARMA_Get(pair, 2, MPI_LONG_LONG, t, 1, 2, MPI_LONG_LONG, win));
            CHECK_RC(NARMA_Win_unlock(t, win));
            if (pair[0] != pair[1]) torn++;
        }
        CHECK(torn == 0, "%lld reads under a shared lock saw a torn pair", torn);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("shared locks on all targets at once, disjoint puts");
    for (int t = 0; t < size; t++)
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, t, 0, win));
    for (int t = 0; t < size; t++) {
        long long v = 100 * rank + t;
        CHECK_RC(NARMA_Put(&v, 1, MPI_LONG_LONG, t, 8 + rank, 1, MPI_LONG_LONG, win));
    }
    for (int t = size - 1; t >= 0; t--)
        CHECK_RC(NARMA_Win_unlock(t, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, rank, 0, win));
    for (int o = 0; o < size; o++)
        CHECK(base[8 + o] == 100 * o + rank, "slot %d = %lld", o, base[8 + o]);
    /* local load/store under a lock on self */
    base[16] = 1000 + rank;
    CHECK_RC(NARMA_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    {
        long long v = -1;
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, win));
        CHECK_RC(NARMA_Get(&v, 1, MPI_LONG_LONG, right, 16, 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_unlock(right, win));
        CHECK(v == 1000 + right, "local store under self-lock not visible: %lld", v);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("lock_all + flush: data is at the target before a message says so");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int i = 0; i < K; i++) {
        long long v = i * 10 + rank;
        CHECK_RC(NARMA_Put(&v, 1, MPI_LONG_LONG, right, 17, 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_flush(right, win));
        MPI_Sendrecv(&i, 1, MPI_INT, right, 7, &(int){0}, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        CHECK_RC(NARMA_Win_sync(win));
        CHECK(base[17] == i * 10 + left, "iteration %d: flushed put not visible: %lld", i,
              base[17]);
        MPI_Barrier(MPI_COMM_WORLD); /* nobody overwrites [17] before everyone checked it */
    }

    test_phase("flush_local: the origin buffer is reusable, the target gets the old value");
    {
        long long buf[64];
        for (int i = 0; i < 64; i++)
            buf[i] = 5000 + rank;
        /* region [18, 32) is 14 elements */
        CHECK_RC(NARMA_Put(buf, 14, MPI_LONG_LONG, right, 18, 14, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_flush_local(right, win));
        for (int i = 0; i < 64; i++)
            buf[i] = -1;
        CHECK_RC(NARMA_Win_flush(right, win));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_sync(win));
        for (int i = 18; i < 32; i++)
            CHECK(base[i] == 5000 + left, "element %d = %lld after flush_local reuse", i, base[i]);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    test_phase("flush_all and flush_local_all to every target");
    {
        long long v[1] = {7000 + rank};
        for (int t = 0; t < size; t++)
            CHECK_RC(NARMA_Put(v, 1, MPI_LONG_LONG, t, 8 + rank, 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_flush_local_all(win));
        v[0] = -1;
        CHECK_RC(NARMA_Win_flush_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_sync(win));
        for (int o = 0; o < size; o++)
            CHECK(base[8 + o] == 7000 + o, "slot %d = %lld after flush_all", o, base[8 + o]);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    test_phase("Win_sync publishes local stores to remote Gets in the same lock_all epoch");
    {
        base[16] = 8000 + rank;
        CHECK_RC(NARMA_Win_sync(win));
        MPI_Barrier(MPI_COMM_WORLD);
        long long g = -1;
        CHECK_RC(NARMA_Get(&g, 1, MPI_LONG_LONG, left, 16, 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_flush(left, win));
        CHECK(g == 8000 + left, "Get after Win_sync saw %lld", g);
        /* Rget under lock_all completes with its request */
        NARMA_Request r;
        g = -1;
        CHECK_RC(NARMA_Rget(&g, 1, MPI_LONG_LONG, right, 16, 1, MPI_LONG_LONG, win, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(g == 8000 + right, "Rget saw %lld", g);
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("exclusive lock on self excludes remote exclusive lockers");
    {
        /* everyone increments everyone's [0] with exclusive locks, including itself */
        base[0] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < K / 4 + 1; k++)
            for (int d = 0; d < size; d++) {
                int t = (rank + d) % size;
                CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, t, 0, win));
                if (t == rank) {
                    base[0] += 1; /* plain load/store under the exclusive self-lock */
                } else {
                    long long v;
                    CHECK_RC(NARMA_Get(&v, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
                    CHECK_RC(NARMA_Win_flush(t, win));
                    v++;
                    CHECK_RC(NARMA_Put(&v, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
                }
                CHECK_RC(NARMA_Win_unlock(t, win));
            }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, win));
        CHECK(base[0] == (long long)size * (K / 4 + 1), "counter %lld, expected %lld", base[0],
              (long long)size * (K / 4 + 1));
        CHECK_RC(NARMA_Win_unlock(rank, win));
    }

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
