/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Windows libnarma-mpi leaves to the MPI library still work, beside windows narma carries:
 *  - MPI_Win_allocate_shared on the node's communicator (MPI_COMM_TYPE_SHARED), with info
 *    narma_passthrough=true (no narma window behind it: MPIX_Win_get_narma gives
 *    NARMA_WIN_NULL) and without (narma carries it, unless the node's ranks span pretend
 *    nodes, where narma refuses it and MPI makes it): either way MPI_Win_shared_query gives
 *    every rank's segment (size, displacement unit, a pointer this process can store
 *    through, contiguous across ranks), stores through those pointers and MPI_Put / MPI_Get
 *    in a lock_all epoch with MPI_Win_sync deliver, and the flavor attribute is
 *    MPI_WIN_FLAVOR_SHARED;
 *  - MPI_Win_create, MPI_Win_allocate and MPI_Win_create_dynamic with info
 *    narma_passthrough=true: NARMA_WIN_NULL; fence, accumulate and exclusive-lock epochs (and
 *    attach/detach) deliver exactly;
 *  - a narma window alive at the same time (a narma window behind it), epochs on both
 *    interleaved; R* requests of the passed-through window and of the narma window completed
 *    together with point-to-point requests by one MPI_Waitall and by MPI_Testany;
 *  - windows created and freed in turn, carried and passed through alternately (MPI reuses
 *    window handles): each is what it should be and moves its data.
 */
#include "common.h"

#include <narma/narma_mpix.h>

#define N 8

static int rank, size, right, left;

static void expect_narma(MPI_Win w, int carried, const char *what)
{
    NARMA_Win nw = (NARMA_Win)(uintptr_t)1;
    CHECK_MPI(MPIX_Win_get_narma(w, &nw));
    if (carried)
        CHECK(nw != NARMA_WIN_NULL, "%s: no narma window behind it", what);
    else
        CHECK(nw == NARMA_WIN_NULL, "%s: narma carries it, expected it passed through", what);
}

static MPI_Info passthrough_info(void);

static void shared(int pass)
{
    test_phase(pass ? "MPI_Win_allocate_shared (narma_passthrough) + MPI_Win_shared_query"
                    : "MPI_Win_allocate_shared (carried) + MPI_Win_shared_query");
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    int nright = (nrank + 1) % nsize, nleft = (nrank + nsize - 1) % nsize;
    int *mine = NULL;
    MPI_Win sw;
    MPI_Info info = pass ? passthrough_info() : MPI_INFO_NULL;
    int carried = !pass && test_narma_carries_shared(node);
    CHECK_MPI(MPI_Win_allocate_shared((MPI_Aint)(nrank + 1) * N * sizeof(int), sizeof(int), info,
                                      node, &mine, &sw));
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    test_errors_return(sw);
    expect_narma(sw, carried, "MPI_Win_allocate_shared window");
    int *flavor = NULL, flag = 0;
    CHECK_MPI(MPI_Win_get_attr(sw, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && flavor && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor attribute %d",
          flavor ? *flavor : -1);
    int **seg = malloc(nsize * sizeof(int *));
    for (int r = 0; r < nsize; r++) {
        MPI_Aint sz = -1;
        int du = -1;
        CHECK_MPI(MPI_Win_shared_query(sw, r, &sz, &du, &seg[r]));
        CHECK(sz == (MPI_Aint)(r + 1) * N * (MPI_Aint)sizeof(int) && du == (int)sizeof(int),
              "segment of node rank %d: size %ld unit %d", r, (long)sz, du);
        CHECK(seg[r] != NULL, "segment of node rank %d is NULL", r);
        if (r > 0)
            CHECK(seg[r] == seg[r - 1] + r * N, "segment of node rank %d at %p, not after %d's", r,
                  (void *)seg[r], r - 1);
    }
    CHECK(seg[nrank] == mine, "my segment %p is not my base %p", (void *)seg[nrank], (void *)mine);
    {
        MPI_Aint sz = -1;
        int du = -1;
        int *p0 = NULL;
        CHECK_MPI(MPI_Win_shared_query(sw, MPI_PROC_NULL, &sz, &du, &p0));
        CHECK(p0 == seg[0] && sz == N * (MPI_Aint)sizeof(int),
              "MPI_PROC_NULL query: %p size %ld, expected node rank 0's %p size %ld", (void *)p0,
              (long)sz, (void *)seg[0], (long)(N * sizeof(int)));
    }

    for (int i = 0; i < (nrank + 1) * N; i++)
        mine[i] = -1;
    CHECK_MPI(MPI_Win_lock_all(0, sw));
    CHECK_MPI(MPI_Win_sync(sw));
    CHECK_MPI(MPI_Barrier(node));
    /* a store into the right neighbour's segment, a put into its second element */
    seg[nright][0] = test_val(1, nrank, 0);
    int v = test_val(1, nrank, 1), g = -1;
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, nright, 1, 1, MPI_INT, sw));
    CHECK_MPI(MPI_Win_flush(nright, sw));
    CHECK_MPI(MPI_Win_sync(sw));
    CHECK_MPI(MPI_Barrier(node));
    CHECK_MPI(MPI_Win_sync(sw));
    CHECK(mine[0] == test_val(1, nleft, 0) && mine[1] == test_val(1, nleft, 1),
          "shared segment holds %d, %d; expected %d, %d", mine[0], mine[1], test_val(1, nleft, 0),
          test_val(1, nleft, 1));
    CHECK_MPI(MPI_Get(&g, 1, MPI_INT, nleft, 0, 1, MPI_INT, sw));
    CHECK_MPI(MPI_Win_flush(nleft, sw));
    int lleft = (nleft + nsize - 1) % nsize;
    CHECK(g == test_val(1, lleft, 0), "get from the shared window: %d, expected %d", g,
          test_val(1, lleft, 0));
    CHECK_MPI(MPI_Win_unlock_all(sw));
    CHECK_MPI(MPI_Barrier(node));
    CHECK_MPI(MPI_Win_free(&sw));
    free(seg);
    MPI_Comm_free(&node);
}

static MPI_Info passthrough_info(void)
{
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "narma_passthrough", "true"));
    return info;
}

static void created_passthrough(void)
{
    test_phase("MPI_Win_create with narma_passthrough=true: fence, accumulate, exclusive lock");
    MPI_Info info = passthrough_info();
    int *mem = malloc(2 * N * sizeof(int));
    MPI_Win pw;
    CHECK_MPI(MPI_Win_create(mem, 2 * N * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &pw));
    CHECK_MPI(MPI_Info_free(&info));
    test_errors_return(pw);
    expect_narma(pw, 0, "Win_create with narma_passthrough");
    for (int i = 0; i < 2 * N; i++)
        mem[i] = i < N ? -1 : test_val(2, rank, i);
    int out[N], in[N];
    for (int i = 0; i < N; i++) {
        out[i] = test_val(3, rank, i);
        in[i] = -1;
    }
    CHECK_MPI(MPI_Win_fence(0, pw));
    CHECK_MPI(MPI_Put(out, N, MPI_INT, right, 0, N, MPI_INT, pw));
    CHECK_MPI(MPI_Get(in, N, MPI_INT, left, N, N, MPI_INT, pw));
    CHECK_MPI(MPI_Win_fence(0, pw));
    for (int i = 0; i < N; i++) {
        CHECK(mem[i] == test_val(3, left, i), "fence put element %d = %d", i, mem[i]);
        CHECK(in[i] == test_val(2, left, N + i), "fence get element %d = %d", i, in[i]);
    }
    int one = rank + 1;
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, 0, N, 1, MPI_INT, MPI_SUM, pw));
    CHECK_MPI(MPI_Win_fence(0, pw));
    if (rank == 0)
        CHECK(mem[N] == test_val(2, 0, N) + size * (size + 1) / 2, "accumulate gave %d", mem[N]);
    for (int it = 0; it < 5; it++) {
        int c = -1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, pw));
        CHECK_MPI(MPI_Get(&c, 1, MPI_INT, 0, 1, 1, MPI_INT, pw));
        CHECK_MPI(MPI_Win_flush(0, pw));
        c++;
        CHECK_MPI(MPI_Put(&c, 1, MPI_INT, 0, 1, 1, MPI_INT, pw));
        CHECK_MPI(MPI_Win_unlock(0, pw));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(mem[1] == test_val(3, size - 1, 1) + 5 * size, "locked counter %d, expected %d",
              mem[1], test_val(3, size - 1, 1) + 5 * size);
    CHECK_MPI(MPI_Win_free(&pw));
    free(mem);
}

static void dynamic_passthrough(void)
{
    test_phase("MPI_Win_create_dynamic with narma_passthrough=true: attach, put, detach");
    MPI_Info info = passthrough_info();
    MPI_Win dw;
    CHECK_MPI(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &dw));
    CHECK_MPI(MPI_Info_free(&info));
    test_errors_return(dw);
    expect_narma(dw, 0, "dynamic window with narma_passthrough");
    int region[N];
    for (int i = 0; i < N; i++)
        region[i] = -1;
    CHECK_MPI(MPI_Win_attach(dw, region, sizeof region));
    MPI_Aint mine, *addr = malloc(size * sizeof(MPI_Aint));
    CHECK_MPI(MPI_Get_address(region, &mine));
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    int out[N];
    for (int i = 0; i < N; i++)
        out[i] = test_val(5, rank, i);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, dw));
    CHECK_MPI(MPI_Put(out, N, MPI_INT, right, addr[right], N, MPI_INT, dw));
    CHECK_MPI(MPI_Win_unlock(right, dw));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(region[i] == test_val(5, left, i), "dynamic element %d = %d", i, region[i]);
    CHECK_MPI(MPI_Win_detach(dw, region));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&dw));
    free(addr);
}

static void mixed_requests(void)
{
    test_phase("a passed-through and a narma window side by side, R* requests in one Waitall");
    MPI_Info info = passthrough_info();
    int *pm, *nm;
    MPI_Win pw, nw;
    CHECK_MPI(MPI_Win_allocate(2 * N * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &pm, &pw));
    CHECK_MPI(MPI_Info_free(&info));
    CHECK_MPI(MPI_Win_allocate(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &nm,
                               &nw));
    test_errors_return(pw);
    test_errors_return(nw);
    expect_narma(pw, 0, "Win_allocate with narma_passthrough");
    expect_narma(nw, 1, "plain Win_allocate");

    for (int round = 0; round < 4; round++) {
        snprintf(test_detail, sizeof test_detail, "round %d", round);
        for (int i = 0; i < N; i++) {
            pm[i] = nm[i] = -1;
            pm[N + i] = test_val(round, rank, i) + 10;
            nm[N + i] = test_val(round, rank, i) + 20;
        }
        int po[N], no[N], pi[N], ni[N], sb = test_val(round, rank, 99), rb = -1;
        for (int i = 0; i < N; i++) {
            po[i] = test_val(round, rank, i) + 1;
            no[i] = test_val(round, rank, i) + 2;
            pi[i] = ni[i] = -1;
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Win_lock_all(0, pw));
        CHECK_MPI(MPI_Win_lock_all(0, nw));
        MPI_Request r[6];
        CHECK_MPI(MPI_Irecv(&rb, 1, MPI_INT, left, round, MPI_COMM_WORLD, &r[0]));
        CHECK_MPI(MPI_Rput(po, N, MPI_INT, right, 0, N, MPI_INT, pw, &r[1]));
        CHECK_MPI(MPI_Rput(no, N, MPI_INT, right, 0, N, MPI_INT, nw, &r[2]));
        CHECK_MPI(MPI_Rget(pi, N, MPI_INT, right, N, N, MPI_INT, pw, &r[3]));
        CHECK_MPI(MPI_Rget(ni, N, MPI_INT, right, N, N, MPI_INT, nw, &r[4]));
        CHECK_MPI(MPI_Isend(&sb, 1, MPI_INT, right, round, MPI_COMM_WORLD, &r[5]));
        if (round % 2 == 0) {
            CHECK_MPI(MPI_Waitall(6, r, MPI_STATUSES_IGNORE));
        } else {
            int done = 0;
            for (;;) {
                int idx = -5, flag = 0;
                CHECK_MPI(MPI_Testany(6, r, &idx, &flag, MPI_STATUS_IGNORE));
                if (!flag) continue;
                if (idx == MPI_UNDEFINED) break;
                done++;
            }
            CHECK(done == 6, "Testany completed %d of 6 requests", done);
        }
        for (int i = 0; i < N; i++) {
            CHECK(pi[i] == test_val(round, right, i) + 10, "passed-through Rget %d = %d", i, pi[i]);
            CHECK(ni[i] == test_val(round, right, i) + 20, "narma Rget %d = %d", i, ni[i]);
        }
        CHECK(rb == test_val(round, left, 99), "received %d", rb);
        CHECK_MPI(MPI_Win_unlock_all(nw));
        CHECK_MPI(MPI_Win_unlock_all(pw));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            CHECK(pm[i] == test_val(round, left, i) + 1, "passed-through Rput %d = %d", i, pm[i]);
            CHECK(nm[i] == test_val(round, left, i) + 2, "narma Rput %d = %d", i, nm[i]);
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("fence epochs interleaved on both windows");
    int v = test_val(7, rank, 0);
    CHECK_MPI(MPI_Win_fence(0, pw));
    CHECK_MPI(MPI_Win_fence(0, nw));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, nw));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, left, 0, 1, MPI_INT, pw));
    CHECK_MPI(MPI_Win_fence(0, pw));
    CHECK_MPI(MPI_Win_fence(0, nw));
    CHECK(nm[0] == test_val(7, left, 0) && pm[0] == test_val(7, right, 0),
          "interleaved fences: narma %d (expected %d), passed-through %d (expected %d)", nm[0],
          test_val(7, left, 0), pm[0], test_val(7, right, 0));
    CHECK_MPI(MPI_Win_free(&pw));
    CHECK_MPI(MPI_Win_free(&nw));
}

static void churn(void)
{
    test_phase("windows created and freed in turn, carried and passed through alternately");
    for (int it = 0; it < 12; it++) {
        snprintf(test_detail, sizeof test_detail, "window %d", it);
        int carried = it % 3 != 1, *m = NULL;
        MPI_Info info = carried ? MPI_INFO_NULL : passthrough_info();
        MPI_Win w;
        CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &m, &w));
        if (info != MPI_INFO_NULL) CHECK_MPI(MPI_Info_free(&info));
        test_errors_return(w);
        expect_narma(w, carried, carried ? "plain Win_allocate" : "narma_passthrough window");
        *m = -1;
        int v = test_val(it, rank, 0);
        CHECK_MPI(MPI_Win_fence(0, w));
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w));
        CHECK_MPI(MPI_Win_fence(0, w));
        CHECK(*m == test_val(it, left, 0), "window %d: got %d, expected %d", it, *m,
              test_val(it, left, 0));
        CHECK_MPI(MPI_Win_free(&w));
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_passthrough", 50);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    shared(0);
    shared(1);
    created_passthrough();
    dynamic_passthrough();
    mixed_requests();
    churn();
    return test_finish();
}
