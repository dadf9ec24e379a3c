/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 passthrough=1 */
/*
 * Every data call moves exactly the right data (windows from MPI_Win_allocate, passive-target
 * epochs; each phase checked after MPI_Win_unlock_all and a barrier):
 *  - MPI_Put / MPI_Get, contiguous and with a strided (vector) target datatype whose gaps must
 *    stay untouched;
 *  - MPI_Accumulate with MPI_SUM (ints from every rank, many times; doubles), MPI_REPLACE and
 *    MPI_MAX;
 *  - MPI_Get_accumulate with MPI_SUM as an atomic fetch-and-add from every rank (the fetched
 *    values are exactly 0 .. n-1, each once) and with MPI_NO_OP as an atomic read (the origin
 *    buffer is ignored, the target unchanged);
 *  - MPI_Fetch_and_op with MPI_SUM (fetch-and-add), MPI_REPLACE (swap) and MPI_NO_OP (read);
 *  - MPI_Compare_and_swap: exactly one of all ranks wins the same slot, a mismatching compare
 *    changes nothing and returns the current value; also on MPI_LONG_LONG;
 *  - MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate completed by MPI_Wait and
 *    MPI_Waitall (Rget's and Rget_accumulate's results are there when the request completes;
 *    an Rput needs a flush to be complete at the target);
 *  - MPI_PROC_NULL targets (every call succeeds and moves nothing, an Rput's request
 *    completes) and zero-count accesses;
 *  - derived datatypes created, used and freed in turn (MPI reuses their handles: each new
 *    type's layout must be used, not a remembered one).
 */
#include "common.h"

#define K 10 /* repetitions of the contended atomics */

/* Layout of the int window (W ints per rank). */
enum {
    PUT0 = 0,   /* [0,16): written by the left neighbour */
    OWN0 = 16,  /* [16,32): the owner's values, read by others */
    SUMS = 32,  /* Accumulate SUM from every rank */
    REPL = 33,  /* Accumulate REPLACE from the left neighbour */
    FADD = 34,  /* Get_accumulate SUM counter (rank 0) */
    FOPS = 35,  /* Fetch_and_op SUM counter (rank 0) */
    CASS = 36,  /* Compare_and_swap slot (rank 0) */
    MAXS = 37,  /* Accumulate MAX (rank 0) */
    SWAP = 38,  /* Fetch_and_op REPLACE from the left neighbour */
    VEC0 = 40,  /* [40,56): strided target of the vector put */
    RPUT0 = 56, /* [56,64): Rput from the left neighbour */
    RACC = 64,  /* Raccumulate SUM counter (rank 0) */
    RFADD = 65, /* Rget_accumulate SUM counter (rank 0) */
    W = 72
};

static int rank, size, right, left;
static int *mem;
static MPI_Win win;

static void epoch_end_and_barrier(void)
{
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The n values fetched on every rank, gathered on rank 0, must be exactly 0 .. size*n-1. */
static void check_permutation(const int *fetched, int n, const char *what)
{
    int *all = rank == 0 ? malloc((size_t)size * n * sizeof(int)) : NULL;
    CHECK_MPI(MPI_Gather(fetched, n, MPI_INT, all, n, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        qsort(all, (size_t)size * n, sizeof(int), cmp_int);
        for (int i = 0; i < size * n; i++)
            CHECK(all[i] == i, "%s: sorted fetched value %d is %d (a lost or repeated update)",
                  what, i, all[i]);
        free(all);
    }
}

static void put_get(void)
{
    test_phase("Put/Get contiguous");
    int out[16], in[16];
    for (int i = 0; i < 16; i++) {
        out[i] = test_val(1, rank, i);
        in[i] = -1;
    }
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put(out, 16, MPI_INT, right, PUT0, 16, MPI_INT, win));
    CHECK_MPI(MPI_Get(in, 16, MPI_INT, right, OWN0, 16, MPI_INT, win));
    epoch_end_and_barrier();
    for (int i = 0; i < 16; i++) {
        CHECK(mem[PUT0 + i] == test_val(1, left, i), "put element %d = %d, expected %d", i,
              mem[PUT0 + i], test_val(1, left, i));
        CHECK(in[i] == test_val(0, right, i), "got element %d = %d, expected %d", i, in[i],
              test_val(0, right, i));
    }

    test_phase("Put/Get with a strided target datatype");
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(8, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    int back[8];
    for (int i = 0; i < 8; i++)
        back[i] = -1;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put(out, 8, MPI_INT, right, VEC0, 1, vec, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Get(back, 8, MPI_INT, right, VEC0, 1, vec, win));
    epoch_end_and_barrier();
    for (int i = 0; i < 8; i++) {
        CHECK(mem[VEC0 + 2 * i] == test_val(1, left, i), "strided element %d = %d, expected %d", i,
              mem[VEC0 + 2 * i], test_val(1, left, i));
        CHECK(mem[VEC0 + 2 * i + 1] == -1, "gap %d was overwritten with %d", i,
              mem[VEC0 + 2 * i + 1]);
        CHECK(back[i] == test_val(1, rank, i), "strided get element %d = %d, expected %d", i,
              back[i], test_val(1, rank, i));
    }
    CHECK_MPI(MPI_Type_free(&vec));
}

static void accumulate(void)
{
    test_phase("Accumulate SUM from every rank to every rank, K times");
    int one = rank + 1, mx = rank * 3, rv = test_val(2, rank, 0);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; k++)
        for (int t = 0; t < size; t++)
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, t, SUMS, 1, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Accumulate(&rv, 1, MPI_INT, right, REPL, 1, MPI_INT, MPI_REPLACE, win));
    CHECK_MPI(MPI_Accumulate(&mx, 1, MPI_INT, 0, MAXS, 1, MPI_INT, MPI_MAX, win));
    epoch_end_and_barrier();
    int expect = K * size * (size + 1) / 2;
    CHECK(mem[SUMS] == expect, "SUM gave %d, expected %d", mem[SUMS], expect);
    CHECK(mem[REPL] == test_val(2, left, 0), "REPLACE gave %d, expected %d", mem[REPL],
          test_val(2, left, 0));
    if (rank == 0)
        CHECK(mem[MAXS] == (size - 1) * 3, "MAX gave %d, expected %d", mem[MAXS], (size - 1) * 3);

    test_phase("Accumulate SUM on doubles");
    double *dmem;
    MPI_Win dwin;
    CHECK_MPI(MPI_Win_allocate(2 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &dmem, &dwin));
    test_errors_return(dwin);
    dmem[0] = 0.25;
    dmem[1] = -1.0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    double d[2] = {0.5 * (rank + 1), 2.0}, dres[2] = {-7, -7};
    CHECK_MPI(MPI_Win_lock_all(0, dwin));
    CHECK_MPI(MPI_Accumulate(d, 2, MPI_DOUBLE, 0, 0, 2, MPI_DOUBLE, MPI_SUM, dwin));
    CHECK_MPI(MPI_Win_unlock_all(dwin));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, dwin));
    CHECK_MPI(MPI_Get_accumulate(d, 2, MPI_DOUBLE, dres, 2, MPI_DOUBLE, 0, 0, 2, MPI_DOUBLE,
                                 MPI_NO_OP, dwin));
    CHECK_MPI(MPI_Win_unlock(0, dwin));
    double dexp0 = 0.25 + 0.5 * size * (size + 1) / 2, dexp1 = -1.0 + 2.0 * size;
    CHECK(dres[0] == dexp0 && dres[1] == dexp1, "double SUM gave {%g, %g}, expected {%g, %g}",
          dres[0], dres[1], dexp0, dexp1);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&dwin));
}

static void get_accumulate(void)
{
    test_phase("Get_accumulate SUM: atomic fetch-and-add on rank 0 from every rank");
    int fetched[K], one = 1;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; k++) {
        fetched[k] = -1;
        CHECK_MPI(MPI_Get_accumulate(&one, 1, MPI_INT, &fetched[k], 1, MPI_INT, 0, FADD, 1, MPI_INT,
                                     MPI_SUM, win));
        CHECK_MPI(MPI_Win_flush(0, win));
    }
    epoch_end_and_barrier();
    check_permutation(fetched, K, "Get_accumulate SUM");
    if (rank == 0) CHECK(mem[FADD] == size * K, "counter %d, expected %d", mem[FADD], size * K);

    test_phase("Get_accumulate NO_OP: atomic read, origin ignored, target unchanged");
    int ignored[2] = {12345, 12345}, res[2] = {-1, -1};
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Get_accumulate(ignored, 2, MPI_INT, res, 2, MPI_INT, right, SUMS, 2, MPI_INT,
                                 MPI_NO_OP, win));
    epoch_end_and_barrier();
    CHECK(res[0] == K * size * (size + 1) / 2 && res[1] == test_val(2, rank, 0),
          "NO_OP read {%d, %d}, expected {%d, %d}", res[0], res[1], K * size * (size + 1) / 2,
          test_val(2, rank, 0));
    CHECK(mem[SUMS] == K * size * (size + 1) / 2, "NO_OP changed the target to %d", mem[SUMS]);
}

static void fetch_and_op(void)
{
    test_phase("Fetch_and_op SUM from every rank, REPLACE to the right neighbour");
    int one = 1, got = -1, mine = test_val(3, rank, 0), old = -1;
    mem[SWAP] = test_val(4, rank, 0);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &got, MPI_INT, 0, FOPS, MPI_SUM, win));
    CHECK_MPI(MPI_Fetch_and_op(&mine, &old, MPI_INT, right, SWAP, MPI_REPLACE, win));
    epoch_end_and_barrier();
    check_permutation(&got, 1, "Fetch_and_op SUM");
    CHECK(old == test_val(4, right, 0), "REPLACE fetched %d, expected %d", old,
          test_val(4, right, 0));
    CHECK(mem[SWAP] == test_val(3, left, 0), "REPLACE left %d, expected %d", mem[SWAP],
          test_val(3, left, 0));

    test_phase("Fetch_and_op NO_OP reads");
    int ignored = 777, val = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MPI_Fetch_and_op(&ignored, &val, MPI_INT, 0, FOPS, MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    CHECK(val == size, "NO_OP read %d, expected %d", val, size);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK(mem[FOPS] == size, "NO_OP changed the counter to %d", mem[FOPS]);
}

static void compare_and_swap(void)
{
    test_phase("Compare_and_swap: exactly one rank wins");
    int cmp = -1, mine = rank, res = -2;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Compare_and_swap(&mine, &cmp, &res, MPI_INT, 0, CASS, win));
    epoch_end_and_barrier();
    int won = res == -1, winners = 0, winner = res == -1 ? rank : -1, who = -1;
    CHECK(res == -1 || (res >= 0 && res < size), "CAS fetched %d", res);
    CHECK_MPI(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Allreduce(&winner, &who, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(winners == 1, "%d ranks won the compare-and-swap", winners);
    if (rank == 0) CHECK(mem[CASS] == who, "slot holds %d, the winner is %d", mem[CASS], who);
    if (!won) CHECK(res == who, "a loser fetched %d, not the winner %d", res, who);

    test_phase("Compare_and_swap with a mismatching compare changes nothing");
    int wrong = -5, nv = 4242;
    res = -2;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Compare_and_swap(&nv, &wrong, &res, MPI_INT, 0, CASS, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    CHECK(res == who, "mismatching CAS fetched %d, expected %d", res, who);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK(mem[CASS] == who, "mismatching CAS wrote %d", mem[CASS]);

    test_phase("Compare_and_swap on MPI_LONG_LONG: a chain of swaps");
    long long *lmem;
    MPI_Win lwin;
    CHECK_MPI(MPI_Win_allocate(sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &lmem, &lwin));
    test_errors_return(lwin);
    *lmem = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* rank r swaps r -> r+1 on rank 0 once the value is r: rank 0 first, then 1, ... */
    long long expect = rank, next = (long long)rank + 1 + (1LL << 40), lres = -1;
    if (rank > 0) expect = rank + (1LL << 40);
    CHECK_MPI(MPI_Win_lock_all(0, lwin));
    for (;;) {
        CHECK_MPI(MPI_Compare_and_swap(&next, &expect, &lres, MPI_LONG_LONG, 0, 0, lwin));
        CHECK_MPI(MPI_Win_flush(0, lwin));
        if (lres == expect) break;
        CHECK(lres >= 0 && lres < expect, "chain CAS fetched %lld while waiting for %lld", lres,
              expect);
    }
    CHECK_MPI(MPI_Win_unlock_all(lwin));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(*lmem == size + (1LL << 40), "chain ended at %lld, expected %lld", *lmem,
              size + (1LL << 40));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&lwin));
}

static void request_forms(void)
{
    test_phase("Rput + MPI_Wait (local) + flush (remote); Rget + MPI_Wait");
    int out[8], in[8];
    MPI_Request r;
    for (int i = 0; i < 8; i++) {
        out[i] = test_val(5, rank, i);
        in[i] = -1;
    }
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Rput(out, 8, MPI_INT, right, RPUT0, 8, MPI_INT, win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the Rput request non-null");
    for (int i = 0; i < 8; i++)
        out[i] = -99; /* the origin buffer is free once the request completed */
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Rget(in, 8, MPI_INT, right, OWN0, 8, MPI_INT, win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == test_val(0, right, i), "Rget element %d = %d, expected %d", i, in[i],
              test_val(0, right, i));
    epoch_end_and_barrier();
    for (int i = 0; i < 8; i++)
        CHECK(mem[RPUT0 + i] == test_val(5, left, i), "Rput element %d = %d, expected %d", i,
              mem[RPUT0 + i], test_val(5, left, i));

    test_phase("Raccumulate SUM to rank 0, K requests completed by MPI_Waitall");
    MPI_Request reqs[K];
    int inc = rank + 1;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; k++)
        CHECK_MPI(MPI_Raccumulate(&inc, 1, MPI_INT, 0, RACC, 1, MPI_INT, MPI_SUM, win, &reqs[k]));
    CHECK_MPI(MPI_Waitall(K, reqs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < K; k++)
        CHECK(reqs[k] == MPI_REQUEST_NULL, "Waitall left request %d non-null", k);
    epoch_end_and_barrier();
    if (rank == 0)
        CHECK(mem[RACC] == K * size * (size + 1) / 2, "Raccumulate SUM gave %d, expected %d",
              mem[RACC], K * size * (size + 1) / 2);

    test_phase("Rget_accumulate SUM: fetch-and-add, result there at MPI_Wait");
    int fetched[K], one = 1;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; k++) {
        fetched[k] = -1;
        CHECK_MPI(MPI_Rget_accumulate(&one, 1, MPI_INT, &fetched[k], 1, MPI_INT, 0, RFADD, 1,
                                      MPI_INT, MPI_SUM, win, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(fetched[k] >= 0 && fetched[k] < size * K, "Rget_accumulate fetched %d", fetched[k]);
    }
    epoch_end_and_barrier();
    check_permutation(fetched, K, "Rget_accumulate SUM");

    test_phase("Rget_accumulate NO_OP reads the counter");
    int val = -1, ignored = 5;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MPI_Rget_accumulate(&ignored, 1, MPI_INT, &val, 1, MPI_INT, 0, RFADD, 1, MPI_INT,
                                  MPI_NO_OP, win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_unlock(0, win));
    CHECK(val == size * K, "NO_OP read %d, expected %d", val, size * K);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void proc_null_and_empty(void)
{
    test_phase("MPI_PROC_NULL targets and zero counts do nothing and succeed");
    int v = 5, g = -3, res = -3;
    MPI_Request r;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Get(&g, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Accumulate(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Fetch_and_op(&v, &res, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, win));
    CHECK_MPI(MPI_Rput(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_flush(MPI_PROC_NULL, win));
    CHECK(g == -3 && res == -3, "MPI_PROC_NULL wrote results %d, %d", g, res);
    CHECK_MPI(MPI_Put(&v, 0, MPI_INT, right, PUT0, 0, MPI_INT, win));
    CHECK_MPI(MPI_Get(&g, 0, MPI_INT, right, PUT0, 0, MPI_INT, win));
    epoch_end_and_barrier();
    CHECK(g == -3, "a zero-count get wrote %d", g);
    for (int i = 0; i < 16; i++)
        CHECK(mem[PUT0 + i] == test_val(1, left, i), "element %d changed to %d", i, mem[PUT0 + i]);
}

static void datatype_churn(void)
{
    test_phase("derived datatypes freed and recreated: every put uses the current layout");
    for (int stride = 1; stride <= 4; stride++) {
        snprintf(test_detail, sizeof test_detail, "stride %d", stride);
        MPI_Datatype t;
        CHECK_MPI(MPI_Type_vector(4, 1, stride, MPI_INT, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        for (int i = 0; i < 16; i++)
            mem[VEC0 + i] = -1;
        int out[4];
        for (int i = 0; i < 4; i++)
            out[i] = test_val(20 + stride, rank, i);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        CHECK_MPI(MPI_Put(out, 4, MPI_INT, right, VEC0, 1, t, win));
        CHECK_MPI(MPI_Win_unlock(right, win));
        CHECK_MPI(MPI_Type_free(&t));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < 16; i++) {
            int want =
                i % stride == 0 && i / stride < 4 ? test_val(20 + stride, left, i / stride) : -1;
            CHECK(mem[VEC0 + i] == want, "stride %d: element %d = %d, expected %d", stride, i,
                  mem[VEC0 + i], want);
        }
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_data", 50);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    CHECK_MPI(
        MPI_Win_allocate(W * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_errors_return(win);
    for (int i = 0; i < W; i++)
        mem[i] = -1;
    for (int i = 0; i < 16; i++)
        mem[OWN0 + i] = test_val(0, rank, i);
    mem[SUMS] = mem[FADD] = mem[FOPS] = mem[RACC] = mem[RFADD] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    put_get();
    accumulate();
    get_accumulate();
    fetch_and_op();
    compare_and_swap();
    request_forms();
    proc_null_and_empty();
    datatype_churn();

    CHECK_MPI(MPI_Win_free(&win));
    return test_finish();
}
