/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Post/Start/Complete/Wait (general active target) epochs:
 *  - ring: everybody exposes to its left and accesses its right neighbour;
 *  - all-to-one and one-to-all groups;
 *  - Win_test reports 0 while an origin has not completed and 1 after, and
 *    can replace Win_wait;
 *  - posts are matched by rank: a post meant for a later epoch of an origin does not open
 *    its current epoch towards another target;
 *  - Start with NOCHECK when the post is known to have happened;
 *  - many iterations, data verified each time (a new epoch never lets the
 *    next iteration's data overwrite the current one before it is read).
 */
#include "common.h"

#include <sched.h>

#define N 16

static MPI_Group world_group;

static MPI_Group group_of(int n, const int *ranks)
{
    MPI_Group g;
    MPI_Group_incl(world_group, n, ranks, &g);
    return g;
}

/* Poll Win_test until the exposure epoch ends (the watchdog bounds it). */
static void wait_by_test(NARMA_Win win)
{
    int flag = 0;
    while (!flag)
        CHECK_RC(NARMA_Win_test(win, &flag));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_pscw", 45);
    const int rank = test_rank, size = test_size;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int iters = (int)env_long("NARMA_TEST_ITERS", 100);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);

    int *base;
    NARMA_Win win;
    /* [0,N) ring data, [N, N+size) all-to-one slots, [N+size, N+size+N) one-to-all data */
    const int len = N + size + N;
    CHECK_RC(NARMA_Win_allocate(len * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &base, &win));
    for (int i = 0; i < len; i++)
        base[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("ring: post {left}, start {right}, put, complete, wait/test");
    {
        MPI_Group from = group_of(1, &left), to = group_of(1, &right);
        int out[N];
        for (int it = 0; it < iters; it++) {
            for (int i = 0; i < N; i++)
                out[i] = it * 100 + rank + i;
            CHECK_RC(NARMA_Win_post(from, 0, win));
            CHECK_RC(NARMA_Win_start(to, 0, win));
            CHECK_RC(NARMA_Put(out, N, MPI_INT, right, 0, N, MPI_INT, win));
            CHECK_RC(NARMA_Win_complete(win));
            if (it % 2)
                wait_by_test(win);
            else
                CHECK_RC(NARMA_Win_wait(win));
            for (int i = 0; i < N; i++)
                CHECK(base[i] == it * 100 + left + i, "iteration %d: element %d = %d, expected %d",
                      it, i, base[i], it * 100 + left + i);
        }
        MPI_Group_free(&from);
        MPI_Group_free(&to);
    }

    test_phase("all-to-one: rank 0 exposes to everyone, others put and get");
    {
        int *others = malloc(size * sizeof(int));
        for (int i = 1; i < size; i++)
            others[i - 1] = i;
        MPI_Group g_others = group_of(size - 1, others), g_zero = group_of(1, (int[]){0});
        for (int it = 0; it < iters / 2; it++) {
            if (rank == 0) {
                base[N] = 5000 + it; /* local store before post: read by the others */
                CHECK_RC(NARMA_Win_post(g_others, 0, win));
                if (it % 2)
                    wait_by_test(win);
                else
                    CHECK_RC(NARMA_Win_wait(win));
                for (int r = 1; r < size; r++)
                    CHECK(base[N + r] == it * 10 + r, "iteration %d: slot %d = %d", it, r,
                          base[N + r]);
            } else {
                int v = it * 10 + rank, g = -1;
                CHECK_RC(NARMA_Win_start(g_zero, 0, win));
                CHECK_RC(NARMA_Put(&v, 1, MPI_INT, 0, N + rank, 1, MPI_INT, win));
                CHECK_RC(NARMA_Get(&g, 1, MPI_INT, 0, N, 1, MPI_INT, win));
                CHECK_RC(NARMA_Win_complete(win));
                CHECK(g == 5000 + it, "iteration %d: got %d from rank 0, expected %d", it, g,
                      5000 + it);
            }
        }

        test_phase("one-to-all: rank 0 accesses everyone");
        for (int it = 0; it < iters / 2; it++) {
            if (rank == 0) {
                /* one origin buffer per target: none may change before Win_complete */
                int(*v)[N] = malloc(size * sizeof *v);
                CHECK_RC(NARMA_Win_start(g_others, 0, win));
                for (int r = 1; r < size; r++) {
                    for (int i = 0; i < N; i++)
                        v[r][i] = it * 1000 + r * 10 + i;
                    CHECK_RC(NARMA_Put(v[r], N, MPI_INT, r, N + size, N, MPI_INT, win));
                }
                CHECK_RC(NARMA_Win_complete(win));
                free(v);
            } else {
                CHECK_RC(NARMA_Win_post(g_zero, 0, win));
                CHECK_RC(NARMA_Win_wait(win));
                for (int i = 0; i < N; i++)
                    CHECK(base[N + size + i] == it * 1000 + rank * 10 + i,
                          "iteration %d: element %d = %d", it, i, base[N + size + i]);
            }
        }
        MPI_Group_free(&g_others);
        MPI_Group_free(&g_zero);
        free(others);
    }

    test_phase("Win_test is 0 until the origin completes (rank 1 -> rank 0)");
    {
        MPI_Group g0 = group_of(1, (int[]){0}), g1 = group_of(1, (int[]){1});
        if (rank == 0) {
            base[0] = -1;
            CHECK_RC(NARMA_Win_post(g1, 0, win));
            for (int i = 0; i < 100; i++) {
                int flag = 1;
                CHECK_RC(NARMA_Win_test(win, &flag));
                CHECK(!flag, "Win_test reported completion before the origin even started");
            }
            MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            wait_by_test(win);
            CHECK(base[0] == 31337, "after Win_test the data is %d", base[0]);
        } else if (rank == 1) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int v = 31337;
            CHECK_RC(NARMA_Win_start(g0, 0, win));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
            CHECK_RC(NARMA_Win_complete(win));
        }
        MPI_Group_free(&g0);
        MPI_Group_free(&g1);
    }

    test_phase("a post is matched by its rank: rank 0's post to rank 1 does not open rank 1's "
               "epoch towards rank 2");
    if (size >= 3) {
        /* Rank 0 posts to rank 1 at once, for rank 1's second access epoch; rank 1's first
         * epoch is towards rank 2, which posts late. MPICH 5.0.2 matches a start with any
         * post (by count, not by rank): there rank 1's put lands in rank 2 before rank 2
         * posts (MPI_Win_* directly, 3 ranks, every run). */
        MPI_Group g0 = group_of(1, (int[]){0}), g1 = group_of(1, (int[]){1}),
                  g2 = group_of(1, (int[]){2});
        if (rank <= 2) base[0] = -1;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            CHECK_RC(NARMA_Win_post(g1, 0, win));
            CHECK_RC(NARMA_Win_wait(win));
            CHECK(base[0] == 4242, "rank 1's second epoch put %d, expected 4242", base[0]);
        } else if (rank == 1) {
            int v = 4141, w = 4242;
            CHECK_RC(NARMA_Win_start(g2, 0, win));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT, 2, 0, 1, MPI_INT, win));
            CHECK_RC(NARMA_Win_complete(win));
            CHECK_RC(NARMA_Win_start(g0, 0, win));
            CHECK_RC(NARMA_Put(&w, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
            CHECK_RC(NARMA_Win_complete(win));
        } else if (rank == 2) {
            /* give a wrongly matched put 0.3 s to land (and progress, for the mpi transport) */
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.3 && base[0] == -1) {
                CHECK_RC(NARMA_Progress());
                sched_yield();
            }
            int before = base[0];
            CHECK(before == -1, "rank 1's put (%d) landed before rank 2 posted", before);
            CHECK_RC(NARMA_Win_post(g1, 0, win));
            CHECK_RC(NARMA_Win_wait(win));
            CHECK(base[0] == 4141, "rank 1's first epoch put %d, expected 4141", base[0]);
        }
        MPI_Group_free(&g0);
        MPI_Group_free(&g1);
        MPI_Group_free(&g2);
    }

    test_phase("Start with NOCHECK after a barrier that follows the post");
    {
        MPI_Group from = group_of(1, &left), to = group_of(1, &right);
        CHECK_RC(NARMA_Win_post(from, NARMA_MODE_NOCHECK, win));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_start(to, NARMA_MODE_NOCHECK, win));
        int v = 900 + rank;
        CHECK_RC(NARMA_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win));
        CHECK_RC(NARMA_Win_complete(win));
        CHECK_RC(NARMA_Win_wait(win));
        CHECK(base[1] == 900 + left, "NOCHECK epoch delivered %d", base[1]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Group_free(&from);
        MPI_Group_free(&to);
    }

    test_phase("empty groups are legal");
    {
        CHECK_RC(NARMA_Win_post(MPI_GROUP_EMPTY, 0, win));
        CHECK_RC(NARMA_Win_start(MPI_GROUP_EMPTY, 0, win));
        CHECK_RC(NARMA_Win_complete(win));
        CHECK_RC(NARMA_Win_wait(win));
    }

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
    MPI_Group_free(&world_group);
    return test_finish();
}
