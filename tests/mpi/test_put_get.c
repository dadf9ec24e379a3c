/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Put and Get move exactly the bytes their datatypes describe: contiguous and
 * derived types (vector, indexed, struct, subarray) with origin and target
 * types that differ in layout but share a signature, displacement units other
 * than 1, a ring-neighbour exchange, and the request-based Rput/Rget.
 */
#include "common.h"

#define N 64

static int rank, size, left, right;

/* Value that origin `o` writes at element i. */
static int ival(int o, int i) { return 100000 * (o + 1) + i; }

static void phase_contiguous_ring(void)
{
    test_phase("contiguous ring exchange, disp_unit=sizeof(int)");
    int *base;
    NARMA_Win win;
    /* layout: [0,N) written by left neighbour, [N,2N) by right neighbour */
    CHECK_RC(NARMA_Win_allocate(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &base, &win));
    int out[N], in_l[N], in_r[N];
    for (int iter = 0; iter < 20; iter++) {
        for (int i = 0; i < 2 * N; i++)
            base[i] = -1;
        for (int i = 0; i < N; i++)
            out[i] = ival(rank, i) + iter;
        CHECK_RC(NARMA_Win_fence(0, win));
        /* counts vary with the iteration to catch off-by-one lengths */
        int n = 1 + (iter * 7) % N;
        CHECK_RC(NARMA_Put(out, n, MPI_INT, right, 0, n, MPI_INT, win));
        CHECK_RC(NARMA_Put(out, n, MPI_INT, left, N, n, MPI_INT, win));
        CHECK_RC(NARMA_Win_fence(0, win));
        for (int i = 0; i < 2 * N; i++) {
            int from = i < N ? left : right, j = i % N;
            int want = j < n ? ival(from, j) + iter : -1;
            CHECK(base[i] == want, "iter %d: element %d is %d, expected %d", iter, i, base[i],
                  want);
        }
        /* now read both neighbours' halves back */
        CHECK_RC(NARMA_Get(in_l, n, MPI_INT, left, N, n, MPI_INT, win));
        CHECK_RC(NARMA_Get(in_r, n, MPI_INT, right, 0, n, MPI_INT, win));
        CHECK_RC(NARMA_Win_fence(0, win));
        for (int j = 0; j < n; j++) {
            /* left's [N..) was written by left's right neighbour: me */
            CHECK(in_l[j] == ival(rank, j) + iter, "iter %d: got %d from left at %d", iter, in_l[j],
                  j);
            CHECK(in_r[j] == ival(rank, j) + iter, "iter %d: got %d from right at %d", iter,
                  in_r[j], j);
        }
    }
    CHECK_RC(NARMA_Win_free(&win));
}

static void phase_disp_units(void)
{
    test_phase("disp_unit 8 (doubles) and 3 (odd byte unit)");
    double *d;
    NARMA_Win wd;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &d, &wd));
    for (int i = 0; i < N; i++)
        d[i] = -1.0;
    double v[3] = {rank + 0.25, rank + 0.5, rank + 0.75};
    CHECK_RC(NARMA_Win_fence(0, wd));
    CHECK_RC(NARMA_Put(v, 3, MPI_DOUBLE, right, 10, 3, MPI_DOUBLE, wd));
    CHECK_RC(NARMA_Win_fence(0, wd));
    CHECK(d[9] == -1.0 && d[10] == left + 0.25 && d[11] == left + 0.5 && d[12] == left + 0.75 &&
              d[13] == -1.0,
          "disp_unit 8: d[9..13] = %g %g %g %g %g", d[9], d[10], d[11], d[12], d[13]);
    CHECK_RC(NARMA_Win_free(&wd));

    unsigned char *c;
    NARMA_Win wc;
    CHECK_RC(NARMA_Win_allocate(64, 3, MPI_INFO_NULL, MPI_COMM_WORLD, &c, &wc));
    memset(c, 0xee, 64);
    unsigned char bytes[4] = {1, 2, 3, (unsigned char)rank};
    CHECK_RC(NARMA_Win_fence(0, wc));
    CHECK_RC(NARMA_Put(bytes, 4, MPI_BYTE, right, 5, 4, MPI_BYTE, wc)); /* byte offset 15 */
    CHECK_RC(NARMA_Win_fence(0, wc));
    CHECK(c[14] == 0xee && c[15] == 1 && c[16] == 2 && c[17] == 3 && c[18] == left && c[19] == 0xee,
          "disp_unit 3: bytes 14..19 = %d %d %d %d %d %d", c[14], c[15], c[16], c[17], c[18],
          c[19]);
    unsigned char got[4] = {0};
    CHECK_RC(NARMA_Get(got, 4, MPI_BYTE, left, 5, 4, MPI_BYTE, wc));
    CHECK_RC(NARMA_Win_fence(0, wc));
    int left2 = (left + size - 1) % size;
    CHECK(got[0] == 1 && got[3] == left2, "Get with disp_unit 3 gave %d..%d", got[0], got[3]);
    CHECK_RC(NARMA_Win_free(&wc));
}

static void phase_vector_indexed(void)
{
    test_phase("vector and indexed target types, contiguous origin");
    int *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    for (int i = 0; i < N; i++)
        base[i] = -1;

    /* 5 ints every 3rd element starting at target element 1 */
    MPI_Datatype vec;
    MPI_Type_vector(5, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    /* indexed: blocks {1@0, 3@4, 2@10} = 6 ints, placed at target element 32 */
    int bl[3] = {1, 3, 2}, dp[3] = {0, 4, 10};
    MPI_Datatype idx;
    MPI_Type_indexed(3, bl, dp, MPI_INT, &idx);
    MPI_Type_commit(&idx);

    int out[6];
    for (int i = 0; i < 6; i++)
        out[i] = ival(rank, i);
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(out, 5, MPI_INT, right, 1, 1, vec, win));
    CHECK_RC(NARMA_Put(out, 6, MPI_INT, right, 32, 1, idx, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    int expect[N];
    for (int i = 0; i < N; i++)
        expect[i] = -1;
    for (int k = 0; k < 5; k++)
        expect[1 + 3 * k] = ival(left, k);
    int k = 0;
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < bl[b]; j++)
            expect[32 + dp[b] + j] = ival(left, k++);
    for (int i = 0; i < N; i++)
        CHECK(base[i] == expect[i], "element %d is %d, expected %d", i, base[i], expect[i]);

    test_phase("vector target into indexed origin (Get)");
    /* read the vector back from the right neighbour into origin blocks */
    int in[16];
    for (int i = 0; i < 16; i++)
        in[i] = -7;
    int obl[2] = {2, 3}, odp[2] = {1, 8};
    MPI_Datatype oidx;
    MPI_Type_indexed(2, obl, odp, MPI_INT, &oidx);
    MPI_Type_commit(&oidx);
    CHECK_RC(NARMA_Get(in, 1, oidx, right, 1, 1, vec, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    int want_in[16];
    for (int i = 0; i < 16; i++)
        want_in[i] = -7;
    want_in[1] = ival(rank, 0);
    want_in[2] = ival(rank, 1);
    want_in[8] = ival(rank, 2);
    want_in[9] = ival(rank, 3);
    want_in[10] = ival(rank, 4);
    for (int i = 0; i < 16; i++)
        CHECK(in[i] == want_in[i], "origin element %d is %d, expected %d", i, in[i], want_in[i]);

    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    CHECK_RC(NARMA_Type_free(&oidx));
    CHECK(oidx == MPI_DATATYPE_NULL, "NARMA_Type_free did not reset the handle");
    CHECK_RC(NARMA_Win_free(&win));
}

struct pair_o {
    int a;
    double b;
}; /* natural layout: a@0, b@8, extent 16 */

static void phase_struct(void)
{
    test_phase("struct types: origin {int@0,double@8}x4, target {int@0,double@16}/24 x4");
    enum { M = 4 };
    unsigned char *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(M * 24 + 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0xab, M * 24 + 8);

    MPI_Datatype otype, ttype, tmp;
    int bl[2] = {1, 1};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Aint od[2] = {offsetof(struct pair_o, a), offsetof(struct pair_o, b)};
    MPI_Type_create_struct(2, bl, od, types, &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(struct pair_o), &otype);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&otype);
    MPI_Aint td[2] = {0, 16};
    MPI_Type_create_struct(2, bl, td, types, &tmp);
    MPI_Type_create_resized(tmp, 0, 24, &ttype);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&ttype);

    struct pair_o out[M];
    for (int i = 0; i < M; i++) {
        out[i].a = ival(rank, i);
        out[i].b = rank * 1000.0 + i + 0.125;
    }
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(out, M, otype, right, 8, M, ttype, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int i = 0; i < M; i++) {
        int a;
        double b;
        memcpy(&a, base + 8 + 24 * i, sizeof a);
        memcpy(&b, base + 8 + 24 * i + 16, sizeof b);
        CHECK(a == ival(left, i), "struct %d: int %d, expected %d", i, a, ival(left, i));
        CHECK(b == left * 1000.0 + i + 0.125, "struct %d: double %g", i, b);
        /* the 12 bytes between the int and the double are untouched */
        for (int g = 4; g < 16; g++)
            CHECK(base[8 + 24 * i + g] == 0xab, "struct %d: gap byte %d overwritten", i, g);
    }
    CHECK(base[0] == 0xab && base[7] == 0xab, "bytes before the target region overwritten");

    /* Get it back the other way round */
    struct pair_o in[M];
    memset(in, 0, sizeof in);
    CHECK_RC(NARMA_Get(in, M, otype, left, 8, M, ttype, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    int left2 = (left + size - 1) % size;
    for (int i = 0; i < M; i++)
        CHECK(in[i].a == ival(left2, i) && in[i].b == left2 * 1000.0 + i + 0.125,
              "Get struct %d: {%d, %g}", i, in[i].a, in[i].b);
    MPI_Type_free(&otype);
    MPI_Type_free(&ttype);
    CHECK_RC(NARMA_Win_free(&win));
}

static void phase_subarray(void)
{
    test_phase("subarray: 3x4 block of an origin 6x6 into a target 8x8 at (2,3)");
    double *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(64 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &base, &win));
    for (int i = 0; i < 64; i++)
        base[i] = -1;
    int tsz[2] = {8, 8}, osz[2] = {6, 6}, sub[2] = {3, 4}, tst[2] = {2, 3}, ost[2] = {1, 2};
    MPI_Datatype tsub, osub;
    MPI_Type_create_subarray(2, tsz, sub, tst, MPI_ORDER_C, MPI_DOUBLE, &tsub);
    MPI_Type_create_subarray(2, osz, sub, ost, MPI_ORDER_C, MPI_DOUBLE, &osub);
    MPI_Type_commit(&tsub);
    MPI_Type_commit(&osub);
    double o[36];
    for (int i = 0; i < 36; i++)
        o[i] = rank * 100 + i;
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(o, 1, osub, right, 0, 1, tsub, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) {
            double want = -1;
            if (r >= 2 && r < 5 && c >= 3 && c < 7)
                want = left * 100 + (r - 2 + 1) * 6 + (c - 3 + 2);
            CHECK(base[r * 8 + c] == want, "target (%d,%d) = %g, expected %g", r, c,
                  base[r * 8 + c], want);
        }
    /* subarray target into contiguous origin */
    double flat[12];
    CHECK_RC(NARMA_Get(flat, 12, MPI_DOUBLE, right, 0, 1, tsub, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int i = 0; i < 12; i++) {
        int r = i / 4, c = i % 4;
        double want = rank * 100 + (r + 1) * 6 + (c + 2);
        CHECK(flat[i] == want, "Get subarray element %d = %g, expected %g", i, flat[i], want);
    }
    MPI_Type_free(&tsub);
    MPI_Type_free(&osub);
    CHECK_RC(NARMA_Win_free(&win));
}

static void phase_large(void)
{
    test_phase("large contiguous put/get (1 MiB) under lock_all");
    const int n = 1 << 20;
    unsigned char *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0, n);
    unsigned char *out = malloc(n), *in = malloc(n);
    test_fill(out, n, rank, 77);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(out, n, MPI_BYTE, right, 0, n, MPI_BYTE, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    long bad = test_verify(base, n, left, 77);
    CHECK(bad < 0, "1 MiB put from %d differs at byte %ld", left, bad);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Get(in, n, MPI_BYTE, left, 0, n, MPI_BYTE, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    bad = test_verify(in, n, (left + size - 1) % size, 77);
    CHECK(bad < 0, "1 MiB get differs at byte %ld", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
    CHECK_RC(NARMA_Win_free(&win));
}

static void phase_request_based(void)
{
    test_phase("Rput/Rget with Wait under lock_all");
    long long *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(2 * N * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < 2 * N; i++)
        base[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    long long out[N];
    for (int i = 0; i < N; i++)
        out[i] = 1000000LL * rank + i;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    NARMA_Request reqs[2];
    CHECK_RC(NARMA_Rput(out, N / 2, MPI_LONG_LONG, right, 0, N / 2, MPI_LONG_LONG, win, &reqs[0]));
    CHECK_RC(NARMA_Rput(out + N / 2, N / 2, MPI_LONG_LONG, right, N / 2, N / 2, MPI_LONG_LONG, win,
                        &reqs[1]));
    CHECK(reqs[0] != NARMA_REQUEST_NULL && reqs[1] != NARMA_REQUEST_NULL, "Rput gave NULL");
    MPI_Status st;
    CHECK_RC(NARMA_Wait(&reqs[0], &st));
    CHECK(reqs[0] == NARMA_REQUEST_NULL, "Wait did not free the Rput request");
    CHECK_RC(NARMA_Wait(&reqs[1], MPI_STATUS_IGNORE));
    /* local completion: the origin buffer may be reused; the target must get the old data */
    for (int i = 0; i < N; i++)
        out[i] = -5;
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(base[i] == 1000000LL * left + i, "Rput element %d is %lld", i, base[i]);

    long long in[N];
    for (int i = 0; i < N; i++)
        in[i] = -9;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    NARMA_Request g;
    CHECK_RC(NARMA_Rget(in, N, MPI_LONG_LONG, left, 0, N, MPI_LONG_LONG, win, &g));
    test_wait_poll(&g, &st);
    CHECK(g == NARMA_REQUEST_NULL, "Test completion did not free the Rget request");
    int left2 = (left + size - 1) % size;
    for (int i = 0; i < N; i++)
        CHECK(in[i] == 1000000LL * left2 + i, "Rget element %d is %lld", i, in[i]);
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_put_get", 45);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    phase_contiguous_ring();
    phase_disp_units();
    phase_vector_indexed();
    phase_struct();
    phase_subarray();
    phase_large();
    phase_request_based();
    return test_finish();
}
