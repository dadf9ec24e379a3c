/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * The nonblocking synchronisation of <narma/narma_mpix.h> on MPI windows, its requests
 * completed by MPI's completion calls (mixed with point-to-point requests), data checked:
 *  - MPIX_Win_ifence: runs of epochs (open, close-and-open, close) completed by MPI_Waitall
 *    and by polling MPI_Test;
 *  - MPIX_Win_ipost / _istart / _icomplete / _iwait in a ring (open both epochs first, as
 *    narma.h says), completed by MPI_Waitall together with an Isend/Irecv pair, and by
 *    MPI_Testany;
 *  - MPIX_Win_ilock / _iunlock: an exclusive get-increment-put counter on rank 0 (the get
 *    completed by MPIX_Win_iflush + MPI_Wait) loses no update;
 *  - MPIX_Win_ilock_all / _iunlock_all with MPIX_Win_iflush (data at the target before a
 *    message sent after the flush completed), _iflush_all, _iflush_local (origin buffer
 *    reusable) and _iflush_local_all;
 *  - an epoch deferred behind another rank's exclusive lock (MPIX_Win_ilock): a put with a
 *    derived datatype issued in it and the datatype freed at once (as MPI allows) still
 *    delivers once the epoch runs.
 */
#include "common.h"

#include <narma/narma_mpix.h>

#define N 8

enum { PUT0 = 0, OWN0 = N, RING = 2 * N, COUNTER = RING + 1, FLAG = COUNTER + 1, SLOT0 };

static int rank, size, right, left;
static int *mem;
static MPI_Win win;

static void ifence(void)
{
    test_phase("MPIX_Win_ifence: epochs completed by MPI_Waitall and MPI_Test");
    int out[N], in[N];
    for (int it = 0; it < 10; it++) {
        for (int i = 0; i < N; i++) {
            mem[OWN0 + i] = test_val(it, rank, i);
            out[i] = test_val(it, rank, i) + 1;
            in[i] = -1;
        }
        MPI_Request r[3];
        CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOPRECEDE, win, &r[0]));
        CHECK_MPI(MPI_Put(out, N, MPI_INT, right, PUT0, N, MPI_INT, win));
        CHECK_MPI(MPIX_Win_ifence(0, win, &r[1]));
        CHECK_MPI(MPI_Get(in, N, MPI_INT, left, OWN0, N, MPI_INT, win));
        CHECK_MPI(MPIX_Win_ifence(MPI_MODE_NOSUCCEED, win, &r[2]));
        if (it % 2) {
            CHECK_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        } else {
            for (int k = 0; k < 3; k++) {
                int flag = 0;
                while (!flag)
                    CHECK_MPI(MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE));
            }
        }
        for (int k = 0; k < 3; k++)
            CHECK(r[k] == MPI_REQUEST_NULL, "ifence request %d not freed", k);
        for (int i = 0; i < N; i++) {
            CHECK(mem[PUT0 + i] == test_val(it, left, i) + 1,
                  "iteration %d: put element %d = %d, expected %d", it, i, mem[PUT0 + i],
                  test_val(it, left, i) + 1);
            CHECK(in[i] == test_val(it, left, i), "iteration %d: got element %d = %d, expected %d",
                  it, i, in[i], test_val(it, left, i));
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* everyone read OWN0 before it changes */
    }
}

static void ipscw(void)
{
    test_phase("MPIX_Win_ipost/istart/icomplete/iwait ring, MPI_Waitall with Isend/Irecv");
    MPI_Group from = test_group(1, &left), to = test_group(1, &right);
    for (int it = 0; it < 10; it++) {
        int v = test_val(it, rank, 3), sb = test_val(it, rank, 4), rb = -1;
        MPI_Request r[6];
        CHECK_MPI(MPI_Irecv(&rb, 1, MPI_INT, left, it, MPI_COMM_WORLD, &r[0]));
        CHECK_MPI(MPIX_Win_ipost(from, 0, win, &r[1]));
        CHECK_MPI(MPIX_Win_istart(to, 0, win, &r[2]));
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, RING, 1, MPI_INT, win));
        CHECK_MPI(MPIX_Win_icomplete(win, &r[3]));
        CHECK_MPI(MPIX_Win_iwait(win, &r[4]));
        CHECK_MPI(MPI_Isend(&sb, 1, MPI_INT, right, it, MPI_COMM_WORLD, &r[5]));
        if (it % 2) {
            MPI_Status st[6];
            CHECK_MPI(MPI_Waitall(6, r, st));
            CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == it, "receive status %d/%d",
                  st[0].MPI_SOURCE, st[0].MPI_TAG);
        } else {
            int done = 0, seen[6] = {0};
            for (;;) {
                int idx = -5, flag = 0;
                CHECK_MPI(MPI_Testany(6, r, &idx, &flag, MPI_STATUS_IGNORE));
                if (!flag) continue;
                if (idx == MPI_UNDEFINED) break;
                CHECK(idx >= 0 && idx < 6 && !seen[idx], "Testany index %d", idx);
                seen[idx] = 1;
                done++;
            }
            CHECK(done == 6, "Testany completed %d of 6 requests", done);
        }
        CHECK(mem[RING] == test_val(it, left, 3), "iteration %d: ring slot %d, expected %d", it,
              mem[RING], test_val(it, left, 3));
        CHECK(rb == test_val(it, left, 4), "iteration %d: received %d", it, rb);
    }
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void ilock(void)
{
    test_phase("MPIX_Win_ilock exclusive / iflush / iunlock: a counter on rank 0");
    const int iters = 10;
    for (int it = 0; it < iters; it++) {
        int c = -1;
        MPI_Request r;
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Get(&c, 1, MPI_INT, 0, COUNTER, 1, MPI_INT, win));
        CHECK_MPI(MPIX_Win_iflush(0, win, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(c >= 0 && c < size * iters, "counter read %d", c);
        c++;
        CHECK_MPI(MPI_Put(&c, 1, MPI_INT, 0, COUNTER, 1, MPI_INT, win));
        CHECK_MPI(MPIX_Win_iunlock(0, win, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(mem[COUNTER] == size * iters, "counter %d, expected %d (lost updates)", mem[COUNTER],
              size * iters);

    test_phase("MPIX_Win_ilock shared + iunlock, completed together by MPI_Waitall");
    int g = -1;
    MPI_Request r[2];
    CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_SHARED, 0, 0, win, &r[0]));
    CHECK_MPI(MPI_Get(&g, 1, MPI_INT, 0, COUNTER, 1, MPI_INT, win));
    CHECK_MPI(MPIX_Win_iunlock(0, win, &r[1]));
    CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(g == size * iters, "shared-lock read %d, expected %d", g, size * iters);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void token_ring(int tag)
{
    CHECK_MPI(MPI_Sendrecv(NULL, 0, MPI_BYTE, right, tag, NULL, 0, MPI_BYTE, left, tag,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void ilock_all_and_flushes(void)
{
    MPI_Request r;
    test_phase("MPIX_Win_ilock_all + MPIX_Win_iflush");
    CHECK_MPI(MPIX_Win_ilock_all(0, win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int it = 0; it < 5; it++) {
        int v = test_val(20 + it, rank, 0);
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, FLAG, 1, MPI_INT, win));
        CHECK_MPI(MPIX_Win_iflush(right, win, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        token_ring(it);
        CHECK_MPI(MPI_Win_sync(win));
        CHECK(mem[FLAG] == test_val(20 + it, left, 0), "iteration %d: flag %d, expected %d", it,
              mem[FLAG], test_val(20 + it, left, 0));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("MPIX_Win_iflush_all");
    int v = test_val(30, rank, 0);
    for (int t = 0; t < size; t++)
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, t, SLOT0 + rank, 1, MPI_INT, win));
    CHECK_MPI(MPIX_Win_iflush_all(win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_sync(win));
    for (int s = 0; s < size; s++)
        CHECK(mem[SLOT0 + s] == test_val(30, s, 0), "iflush_all slot %d = %d, expected %d", s,
              mem[SLOT0 + s], test_val(30, s, 0));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("MPIX_Win_iflush_local: the origin buffer is reusable, then iflush");
    int b[N];
    for (int i = 0; i < N; i++)
        b[i] = test_val(40, rank, i);
    CHECK_MPI(MPI_Put(b, N, MPI_INT, right, PUT0, N, MPI_INT, win));
    CHECK_MPI(MPIX_Win_iflush_local(right, win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        b[i] = -77;
    CHECK_MPI(MPIX_Win_iflush(right, win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    token_ring(100);
    CHECK_MPI(MPI_Win_sync(win));
    for (int i = 0; i < N; i++)
        CHECK(mem[PUT0 + i] == test_val(40, left, i), "iflush_local put element %d = %d", i,
              mem[PUT0 + i]);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("MPIX_Win_iflush_local_all, then iflush_all, then iunlock_all");
    int *bs = malloc(size * sizeof(int));
    for (int t = 0; t < size; t++) {
        bs[t] = test_val(50, rank, t);
        CHECK_MPI(MPI_Put(&bs[t], 1, MPI_INT, t, SLOT0 + rank, 1, MPI_INT, win));
    }
    CHECK_MPI(MPIX_Win_iflush_local_all(win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int t = 0; t < size; t++)
        bs[t] = -88;
    MPI_Request rr[2];
    CHECK_MPI(MPIX_Win_iflush_all(win, &rr[0]));
    CHECK_MPI(MPIX_Win_iunlock_all(win, &rr[1]));
    CHECK_MPI(MPI_Waitall(2, rr, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int s = 0; s < size; s++)
        CHECK(mem[SLOT0 + s] == test_val(50, s, rank), "iflush_local_all slot %d = %d, expected %d",
              s, mem[SLOT0 + s], test_val(50, s, rank));
    free(bs);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void deferred_with_freed_type(void)
{
    test_phase("a deferred epoch's put keeps its datatype after MPI_Type_free");
    /* rank 1 holds rank 0's window exclusively; rank 0 opens its own exclusive epoch on
     * itself (deferred), puts with a strided type, frees the type, closes the epoch; rank 1
     * releases its lock only after that, so the put really waits */
    for (int i = 0; i < 2 * N; i++)
        if (rank == 0) mem[PUT0 + i] = -1;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request r[2];
    int out[N / 2];
    if (rank == 0) {
        MPI_Datatype strided;
        CHECK_MPI(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &strided));
        CHECK_MPI(MPI_Type_commit(&strided));
        for (int i = 0; i < N / 2; i++)
            out[i] = test_val(60, rank, i);
        CHECK_MPI(MPIX_Win_ilock(MPI_LOCK_EXCLUSIVE, 0, 0, win, &r[0]));
        CHECK_MPI(MPI_Put(out, N / 2, MPI_INT, 0, PUT0, 1, strided, win));
        CHECK_MPI(MPI_Type_free(&strided));
        /* a new type that may take the freed handle */
        MPI_Datatype other;
        CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &other));
        CHECK_MPI(MPI_Type_commit(&other));
        CHECK_MPI(MPIX_Win_iunlock(0, win, &r[1]));
        CHECK_MPI(MPI_Type_free(&other));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) CHECK_MPI(MPI_Win_unlock(0, win));
    if (rank == 0) {
        CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; i++) {
            int want = i % 2 == 0 ? test_val(60, 0, i / 2) : -1;
            CHECK(mem[PUT0 + i] == want, "element %d = %d, expected %d", i, mem[PUT0 + i], want);
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_mpix_nbsync", 50);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    int len = SLOT0 + size;
    CHECK_MPI(MPI_Win_allocate(len * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                               &win));
    test_errors_return(win);
    for (int i = 0; i < len; i++)
        mem[i] = -1;
    mem[COUNTER] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    ifence();
    ipscw();
    ilock();
    ilock_all_and_flushes();
    deferred_with_freed_type();

    CHECK_MPI(MPI_Win_free(&win));
    return test_finish();
}
