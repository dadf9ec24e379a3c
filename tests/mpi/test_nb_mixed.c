/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Blocking and nonblocking synchronisation calls form valid epochs in any mix
 * (paper VI-A rule 1); data is checked after every completion:
 *  - PSCW ring: ipost + Win_wait, Win_post + iwait, istart + Win_complete,
 *    Win_start + icomplete, in all four combinations;
 *  - fence: ranks alternate Win_fence and Win_ifence in the same fences;
 *  - locks: ilock + Win_unlock and Win_lock + iunlock;
 *  - lock_all: iflush, iflush_local, iflush_all, iflush_local_all inside
 *    Win_lock_all, and ilock_all + iunlock_all; a Get after each flush reads
 *    back what the flushed Put wrote.
 */
#include "common.h"

#define N 8
/* D_FENCE has two blocks: a fence epoch writes one while the other is read (double buffering). */
enum { D_PSCW = 0, D_FENCE = N, D_LOCK = 3 * N, D_ALL = 4 * N, WN = 5 * N };

static int rank, size, right, left;
static int *base;
static NARMA_Win win;
static MPI_Group world_group;

static MPI_Group group_of(int r)
{
    MPI_Group g;
    MPI_Group_incl(world_group, 1, &r, &g);
    return g;
}
static int val(int it, int origin, int i) { return 10000 * it + 100 * origin + i; }
static void check_block(int disp, int it, int origin, const char *what)
{
    for (int i = 0; i < N; i++)
        CHECK(base[disp + i] == val(it, origin, i), "%s, iteration %d: word %d = %d, expected %d",
              what, it, i, base[disp + i], val(it, origin, i));
}
static int nb_wait(NARMA_Request *r) { return NARMA_Wait(r, MPI_STATUS_IGNORE); }

static void pscw(int iters)
{
    MPI_Group to = group_of(right), from = group_of(left);
    int out[N];
    for (int it = 0; it < iters; it++) {
        const int mix =
            it % 4; /* bit 0: nonblocking exposure side, bit 1: nonblocking access side */
        snprintf(test_detail, sizeof test_detail, "iteration %d, %s post/wait, %s start/complete",
                 it, mix & 1 ? "nonblocking" : "blocking", mix & 2 ? "nonblocking" : "blocking");
        NARMA_Request r_post, r_wait, r_start, r_comp;
        for (int i = 0; i < N; i++)
            out[i] = val(it, rank, i);
        if (it % 2)
            CHECK_RC(NARMA_Win_ipost(from, 0, win, &r_post));
        else
            CHECK_RC(NARMA_Win_post(from, 0, win));
        if (it % 3)
            CHECK_RC(NARMA_Win_istart(to, 0, win, &r_start));
        else
            CHECK_RC(NARMA_Win_start(to, 0, win));
        CHECK_RC(NARMA_Put(out, N, MPI_INT, right, D_PSCW, N, MPI_INT, win));
        if (mix & 2) {
            CHECK_RC(NARMA_Win_icomplete(win, &r_comp));
            CHECK_RC(nb_wait(&r_comp));
        } else {
            CHECK_RC(NARMA_Win_complete(win));
        }
        if (mix & 1) {
            CHECK_RC(NARMA_Win_iwait(win, &r_wait));
            CHECK_RC(nb_wait(&r_wait));
        } else {
            CHECK_RC(NARMA_Win_wait(win));
        }
        check_block(D_PSCW, it, left, "PSCW");
        if (it % 2) CHECK_RC(nb_wait(&r_post)); /* opening requests: complete long ago */
        if (it % 3) CHECK_RC(nb_wait(&r_start));
    }
    MPI_Group_free(&to);
    MPI_Group_free(&from);
}

static void fence(int iters)
{
    int out[N];
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOPRECEDE, win));
    for (int it = 0; it < iters; it++) {
        snprintf(test_detail, sizeof test_detail, "iteration %d", it);
        for (int i = 0; i < N; i++)
            out[i] = val(it, rank, i);
        CHECK_RC(NARMA_Put(out, N, MPI_INT, right, D_FENCE + N * (it % 2), N, MPI_INT, win));
        if ((rank + it) % 2) {
            NARMA_Request r;
            CHECK_RC(NARMA_Win_ifence(0, win, &r));
            CHECK_RC(nb_wait(&r));
        } else {
            CHECK_RC(NARMA_Win_fence(0, win));
        }
        check_block(D_FENCE + N * (it % 2), it, left, "fence");
    }
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOSUCCEED, win));
}

static void locks(int iters)
{
    int out[N];
    for (int it = 0; it < iters; it++) {
        snprintf(test_detail, sizeof test_detail, "iteration %d", it);
        NARMA_Request r;
        for (int i = 0; i < N; i++)
            out[i] = val(it, rank, i);
        if (it % 2) {
            CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_EXCLUSIVE, right, 0, win, &r));
            CHECK_RC(NARMA_Put(out, N, MPI_INT, right, D_LOCK, N, MPI_INT, win));
            CHECK_RC(NARMA_Win_unlock(right, win));
            CHECK_RC(nb_wait(&r));
        } else {
            CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, right, 0, win));
            CHECK_RC(NARMA_Put(out, N, MPI_INT, right, D_LOCK, N, MPI_INT, win));
            CHECK_RC(NARMA_Win_iunlock(right, win, &r));
            CHECK_RC(nb_wait(&r));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, win));
        check_block(D_LOCK, it, left, "lock");
        CHECK_RC(NARMA_Win_unlock(rank, win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* Put, flush with the i-form `kind`, Get back: the Get sees the Put. */
static void lock_all(int iters)
{
    int out[N], back[N];
    for (int it = 0; it < iters; it++) {
        const int kind = it % 4;
        static const char *names[4] = {"iflush", "iflush_local", "iflush_all", "iflush_local_all"};
        snprintf(test_detail, sizeof test_detail, "iteration %d, %s", it, names[kind]);
        NARMA_Request r, r_all = NARMA_REQUEST_NULL;
        if (it % 2)
            CHECK_RC(NARMA_Win_ilock_all(0, win, &r_all));
        else
            CHECK_RC(NARMA_Win_lock_all(0, win));
        for (int i = 0; i < N; i++)
            out[i] = val(it, rank, i);
        CHECK_RC(NARMA_Put(out, N, MPI_INT, right, D_ALL, N, MPI_INT, win));
        switch (kind) {
        case 0:
            CHECK_RC(NARMA_Win_iflush(right, win, &r));
            break;
        case 1:
            CHECK_RC(NARMA_Win_iflush_local(right, win, &r));
            break;
        case 2:
            CHECK_RC(NARMA_Win_iflush_all(win, &r));
            break;
        default:
            CHECK_RC(NARMA_Win_iflush_local_all(win, &r));
            break;
        }
        CHECK_RC(nb_wait(&r));
        memset(out, 0xff, sizeof out); /* local completion at least: the buffer is reusable */
        if (kind == 1 || kind == 3) CHECK_RC(NARMA_Win_flush(right, win)); /* now remote too */
        memset(back, 0, sizeof back);
        CHECK_RC(NARMA_Get(back, N, MPI_INT, right, D_ALL, N, MPI_INT, win));
        CHECK_RC(NARMA_Win_iflush(right, win, &r));
        CHECK_RC(nb_wait(&r));
        for (int i = 0; i < N; i++)
            CHECK(back[i] == val(it, rank, i), "Get after flush read %d, expected %d", back[i],
                  val(it, rank, i));
        if (it % 3) {
            CHECK_RC(NARMA_Win_iunlock_all(win, &r));
            CHECK_RC(nb_wait(&r));
        } else {
            CHECK_RC(NARMA_Win_unlock_all(win));
        }
        CHECK_RC(nb_wait(&r_all));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, win));
        check_block(D_ALL, it, left, "lock_all");
        CHECK_RC(NARMA_Win_unlock(rank, win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_nb_mixed", 25);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    const int iters = (int)env_long("NARMA_TEST_ITERS", 40);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    CHECK_RC(NARMA_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    MPI_Barrier(MPI_COMM_WORLD);
    test_phase("PSCW: every blocking/nonblocking combination of post/wait and start/complete");
    pscw(iters);
    test_phase("fence: Win_fence and Win_ifence mixed across ranks in the same fences");
    fence(iters);
    test_phase("locks: ilock + Win_unlock, Win_lock + iunlock");
    locks(iters / 2);
    test_phase("lock_all: the four iflush forms; ilock_all + iunlock_all mixed with blocking");
    lock_all(iters / 2);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&world_group);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
