/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 passthrough=1 */
/*
 * Every window flavor moves data, checked element by element:
 *  - MPI_Win_create over malloc'ed memory (disp_unit sizeof(int)), over MPI_Alloc_mem memory,
 *    and with a displacement unit that differs between ranks (4 on even, 8 on odd ranks: the
 *    origin's displacement is scaled by the target's unit);
 *  - MPI_Win_allocate, also with size 0 on odd ranks (they expose nothing and still access);
 *  - MPI_Win_create_dynamic: regions attached (before and after other ranks access), their
 *    addresses exchanged with MPI_Get_address, accessed with displacement = address, one
 *    detached while the other stays usable, then the second detached before MPI_Win_free.
 * Each static window takes a fence epoch (put to the right neighbour, get from it) and a
 * lock_all epoch (put to the left neighbour).
 *  - MPI_Win_allocate over a communicator that reverses MPI_COMM_WORLD's order (freed right
 *    after the window's creation), over one that splits it in two and over MPI_COMM_SELF:
 *    ranks in RMA calls are ranks of the window's group.
 */
#include "common.h"

#define N 32

static int rank, size, right, left;

/*
 * The window holds 2N ints at `mem` on every rank: [0,N) is written by the left neighbour,
 * [N,2N) holds the owner's own values, read by the left neighbour. disp_of(t, k) is the
 * displacement of int k at target t.
 */
static void fence_and_lock_all(MPI_Win win, int *mem, MPI_Aint (*disp_of)(int, int), int round)
{
    int out[N], in[N];
    for (int i = 0; i < N; i++) {
        mem[i] = -1;
        mem[N + i] = test_val(round, rank, i);
        out[i] = test_val(round, rank, i) + 7;
        in[i] = -1;
    }
    test_phase("fence epoch: put to the right, get from the right");
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    CHECK_MPI(MPI_Put(out, N, MPI_INT, right, disp_of(right, 0), N, MPI_INT, win));
    CHECK_MPI(MPI_Get(in, N, MPI_INT, right, disp_of(right, N), N, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < N; i++) {
        CHECK(mem[i] == test_val(round, left, i) + 7, "round %d: put element %d = %d, expected %d",
              round, i, mem[i], test_val(round, left, i) + 7);
        CHECK(in[i] == test_val(round, right, i), "round %d: got element %d = %d, expected %d",
              round, i, in[i], test_val(round, right, i));
    }

    test_phase("lock_all epoch: put to the left");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int one = test_val(round, rank, 99);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put(&one, 1, MPI_INT, left, disp_of(left, 2), 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[2] == test_val(round, right, 99), "round %d: lock_all put gave %d, expected %d",
          round, mem[2], test_val(round, right, 99));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static MPI_Aint disp_int_unit(int target, int k)
{
    (void)target;
    return k;
}

/* Units of the mixed-unit window: 4 bytes on even ranks, 8 on odd ones. */
static int unit_of(int r) { return r % 2 ? 8 : 4; }
static MPI_Aint disp_mixed_unit(int target, int k)
{
    /* k is even whenever this is used with unit 8: the put/get start at 0 and N, N even */
    return (MPI_Aint)k * (MPI_Aint)sizeof(int) / unit_of(target);
}

static void create_malloc(void)
{
    test_phase("Win_create over malloc'ed memory");
    int *mem = malloc(2 * N * sizeof(int));
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_create(mem, 2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    test_errors_return(win);
    for (int round = 1; round <= 3; round++)
        fence_and_lock_all(win, mem, disp_int_unit, round);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set the handle to MPI_WIN_NULL");
    free(mem);
}

static void create_alloc_mem(void)
{
    test_phase("Win_create over MPI_Alloc_mem memory");
    int *mem;
    CHECK_MPI(MPI_Alloc_mem(2 * N * sizeof(int), MPI_INFO_NULL, &mem));
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_create(mem, 2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    test_errors_return(win);
    fence_and_lock_all(win, mem, disp_int_unit, 4);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Free_mem(mem));
}

static void create_mixed_units(void)
{
    test_phase("Win_create with a displacement unit that differs between ranks");
    int *mem = malloc(2 * N * sizeof(int));
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(mem, 2 * N * sizeof(int), unit_of(rank), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &win));
    test_errors_return(win);
    fence_and_lock_all(win, mem, disp_mixed_unit, 5);
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

static void allocate(void)
{
    test_phase("Win_allocate");
    int *mem = NULL;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &mem, &win));
    CHECK(mem != NULL, "MPI_Win_allocate returned a NULL base for %d bytes",
          2 * N * (int)sizeof(int));
    CHECK((uintptr_t)mem % sizeof(int) == 0, "base %p is not aligned for int", (void *)mem);
    test_errors_return(win);
    for (int round = 6; round <= 8; round++)
        fence_and_lock_all(win, mem, disp_int_unit, round);
    CHECK_MPI(MPI_Win_free(&win));
}

static void allocate_zero_on_odd(void)
{
    test_phase("Win_allocate with size 0 on odd ranks: everyone puts to rank 0");
    int *mem = NULL;
    MPI_Win win;
    MPI_Aint bytes = rank % 2 ? 0 : (MPI_Aint)(size * sizeof(int));
    CHECK_MPI(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_errors_return(win);
    if (bytes)
        for (int i = 0; i < size; i++)
            mem[i] = -1;
    int v = test_val(9, rank, 0), got = -1;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0)
        for (int r = 0; r < size; r++)
            CHECK(mem[r] == test_val(9, r, 0), "slot %d = %d, expected %d", r, mem[r],
                  test_val(9, r, 0));
    /* and a read back of the last slot by everyone, in a lock epoch on rank 0 */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MPI_Get(&got, 1, MPI_INT, 0, size - 1, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    CHECK(got == test_val(9, size - 1, 0), "read back %d, expected %d", got,
          test_val(9, size - 1, 0));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&win));
}

/* Every rank's address of its region, gathered (displacements of a dynamic window). */
static void gather_addresses(void *region, MPI_Aint *addrs)
{
    MPI_Aint mine;
    CHECK_MPI(MPI_Get_address(region, &mine));
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
}

static void dynamic(void)
{
    test_phase("Win_create_dynamic: attach region A, put/get by address");
    MPI_Win win;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    test_errors_return(win);
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    MPI_Aint *addr_a = malloc(size * sizeof(MPI_Aint)), *addr_b = malloc(size * sizeof(MPI_Aint));
    for (int i = 0; i < N; i++) {
        a[i] = test_val(10, rank, i);
        b[i] = -1;
    }
    CHECK_MPI(MPI_Win_attach(win, a, N * sizeof(int)));
    gather_addresses(a, addr_a);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* read the right neighbour's A[0,N/2), then write our values into its A[N/2,N) */
    int in[N], out[N];
    for (int i = 0; i < N; i++) {
        in[i] = -1;
        out[i] = test_val(11, rank, i);
    }
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Get(in, N / 2, MPI_INT, right, addr_a[right], N / 2, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Put(out, N / 2, MPI_INT, right,
                      MPI_Aint_add(addr_a[right], (N / 2) * sizeof(int)), N / 2, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N / 2; i++) {
        CHECK(in[i] == test_val(10, right, i), "A[%d] of rank %d read as %d, expected %d", i, right,
              in[i], test_val(10, right, i));
        CHECK(a[N / 2 + i] == test_val(11, left, i), "A[%d] = %d, expected %d", N / 2 + i,
              a[N / 2 + i], test_val(11, left, i));
    }

    test_phase("Win_create_dynamic: attach region B later, fence epoch into it");
    CHECK_MPI(MPI_Win_attach(win, b, N * sizeof(int)));
    gather_addresses(b, addr_b);
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        out[i] = test_val(12, rank, i);
    CHECK_MPI(MPI_Put(out, N, MPI_INT, right, addr_b[right], N, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        CHECK(b[i] == test_val(12, left, i), "B[%d] = %d, expected %d", i, b[i],
              test_val(12, left, i));

    test_phase("Win_create_dynamic: detach A, B stays usable");
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Win_detach(win, a));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int v = test_val(13, rank, 0);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, MPI_Aint_add(addr_b[right], 5 * sizeof(int)), 1,
                      MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(b[5] == test_val(13, left, 0), "B[5] after detaching A = %d, expected %d", b[5],
          test_val(13, left, 0));
    CHECK_MPI(MPI_Win_detach(win, b));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&win));
    free(a);
    free(b);
    free(addr_a);
    free(addr_b);
}

static void sub_communicators(void)
{
    test_phase("Win_allocate over a communicator in reverse order");
    MPI_Comm rev;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    int crank, csize;
    MPI_Comm_rank(rev, &crank);
    MPI_Comm_size(rev, &csize);
    CHECK(crank == size - 1 - rank, "reversed rank %d", crank);
    int *mem;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, rev, &mem, &win));
    test_errors_return(win);
    mem[0] = mem[1] = -1;
    MPI_Comm_free(&rev); /* the window keeps what it needs of the communicator */
    /* to the next rank of the reversed communicator, i.e. the world's left neighbour */
    int v[2] = {test_val(20, rank, 0), crank};
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(v, 2, MPI_INT, (crank + 1) % csize, 0, 2, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(mem[0] == test_val(20, right, 0) && mem[1] == (crank + csize - 1) % csize,
          "reversed communicator: got {%d, %d} expected {%d, %d}", mem[0], mem[1],
          test_val(20, right, 0), (crank + csize - 1) % csize);
    CHECK_MPI(MPI_Win_free(&win));

    test_phase("Win_create over a communicator split in two (even and odd world ranks)");
    MPI_Comm half;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MPI_Comm_rank(half, &crank);
    MPI_Comm_size(half, &csize);
    int *cm = malloc(sizeof(int));
    *cm = -1;
    CHECK_MPI(MPI_Win_create(cm, sizeof(int), sizeof(int), MPI_INFO_NULL, half, &win));
    test_errors_return(win);
    int w = test_val(21, rank, 0), got = -1;
    int to = (crank + 1) % csize, from = (crank + csize - 1) % csize;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win));
    CHECK_MPI(MPI_Put(&w, 1, MPI_INT, to, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(to, win));
    CHECK_MPI(MPI_Barrier(half));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, crank, 0, win));
    CHECK_MPI(MPI_Get(&got, 1, MPI_INT, crank, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(crank, win));
    /* half rank k is world rank 2k + parity */
    int from_world = 2 * from + rank % 2;
    CHECK(got == test_val(21, from_world, 0) && *cm == got,
          "split communicator: got %d (memory %d), expected %d from world rank %d", got, *cm,
          test_val(21, from_world, 0), from_world);
    CHECK_MPI(MPI_Barrier(half));
    CHECK_MPI(MPI_Win_free(&win));
    free(cm);
    MPI_Comm_free(&half);

    test_phase("Win_allocate and Win_create over MPI_COMM_SELF: rank 0 is this process");
    int *sm, own[2] = {-1, -1};
    MPI_Win sw, cw;
    CHECK_MPI(
        MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &sm, &sw));
    CHECK_MPI(MPI_Win_create(own, sizeof own, sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &cw));
    test_errors_return(sw);
    test_errors_return(cw);
    sm[0] = sm[1] = -1;
    int pair[2] = {test_val(22, rank, 0), test_val(22, rank, 1)}, back[2] = {0, 0};
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, sw));
    CHECK_MPI(MPI_Put(pair, 2, MPI_INT, 0, 0, 2, MPI_INT, sw));
    CHECK_MPI(MPI_Win_unlock(0, sw));
    CHECK_MPI(MPI_Win_fence(0, cw));
    CHECK_MPI(MPI_Get(back, 2, MPI_INT, 0, 0, 2, MPI_INT, cw));
    CHECK_MPI(MPI_Win_fence(0, cw));
    CHECK(sm[0] == pair[0] && sm[1] == pair[1], "self put left {%d, %d}", sm[0], sm[1]);
    CHECK(back[0] == -1 && back[1] == -1, "self get of the created window read {%d, %d}", back[0],
          back[1]);
    CHECK_MPI(MPI_Win_free(&sw));
    CHECK_MPI(MPI_Win_free(&cw));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_flavors", 45);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    create_malloc();
    create_alloc_mem();
    create_mixed_units();
    allocate();
    allocate_zero_on_odd();
    dynamic();
    sub_communicators();
    return test_finish();
}
