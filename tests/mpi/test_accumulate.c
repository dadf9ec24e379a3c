/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Accumulate operations combine element-wise and atomically:
 *  - every predefined op on int, long long, double and float, with all ranks
 *    contributing to every target, equals the sequential fold (NO_OP through
 *    Get_accumulate, the only place MPI allows it besides Fetch_and_op);
 *  - Get_accumulate / Fetch_and_op return the value before the operation;
 *  - Compare_and_swap swaps only on equality and returns the old value;
 *  - MAXLOC / MINLOC on MPI_2INT pick the lowest index among ties;
 *  - concurrent SUMs from all ranks to one element lose nothing, and
 *    Fetch_and_op counters hand out unique tickets;
 *  - vector SUMs of doubles and single-element FAO / GACC / CAS on the same
 *    elements at once lose nothing.
 */
#include "common.h"

#define CNT 3 /* elements per accumulate */

enum {
    O_SUM,
    O_PROD,
    O_MAX,
    O_MIN,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_LAND,
    O_LOR,
    O_REPLACE,
    O_NO_OP,
    NOPS
};
static const char *op_name[NOPS] = {"SUM",  "PROD", "MAX", "MIN",     "BAND", "BOR",
                                    "BXOR", "LAND", "LOR", "REPLACE", "NO_OP"};
static MPI_Op op_handle(int o)
{
    switch (o) {
    case O_SUM:
        return NARMA_SUM;
    case O_PROD:
        return NARMA_PROD;
    case O_MAX:
        return NARMA_MAX;
    case O_MIN:
        return NARMA_MIN;
    case O_BAND:
        return NARMA_BAND;
    case O_BOR:
        return NARMA_BOR;
    case O_BXOR:
        return NARMA_BXOR;
    case O_LAND:
        return NARMA_LAND;
    case O_LOR:
        return NARMA_LOR;
    case O_REPLACE:
        return NARMA_REPLACE;
    default:
        return NARMA_NO_OP;
    }
}
static int op_is_bitwise_or_logical(int o)
{
    return o == O_BAND || o == O_BOR || o == O_BXOR || o == O_LAND || o == O_LOR;
}

static int rank, size;

/* Contribution of origin o to target t, element e (small, so sums and products are exact). */
static long long contrib(int op, int o, int t, int e)
{
    switch (op) {
    case O_SUM:
        return 10 * o + e + t;
    case O_PROD:
        return (o + e) % 3 + 1;
    case O_MAX:
    case O_MIN:
        return (o * 7 + e * 3 + t) % 11 - 5;
    case O_BAND:
        return ~(1LL << ((o + e) % 12));
    case O_BOR:
    case O_BXOR:
        return (1LL << ((o + 2 * e) % 12)) | (0x1000LL << t);
    case O_LAND:
        return (o + e) % 3 != 0 ? 2 : 0;
    case O_LOR:
        return (o == e % size) ? 5 : 0;
    case O_REPLACE:
        return -(100 * o + e + 1);
    default:
        return 777;
    }
}
static long long initial(int op, int e)
{
    switch (op) {
    case O_SUM:
        return 1000 + e;
    case O_PROD:
        return 2;
    case O_BAND:
        return -1;
    case O_BOR:
    case O_BXOR:
        return 0x5a5a;
    case O_LAND:
        return 1;
    case O_LOR:
        return 0;
    case O_NO_OP:
        return 42 + e;
    default:
        return 0;
    }
}
static long long fold(int op, long long a, long long v)
{
    switch (op) {
    case O_SUM:
        return a + v;
    case O_PROD:
        return a * v;
    case O_MAX:
        return a > v ? a : v;
    case O_MIN:
        return a < v ? a : v;
    case O_BAND:
        return a & v;
    case O_BOR:
        return a | v;
    case O_BXOR:
        return a ^ v;
    case O_LAND:
        return (a && v) ? 1 : 0;
    case O_LOR:
        return (a || v) ? 1 : 0;
    case O_REPLACE:
        return v;
    default:
        return a;
    }
}
static long long expected(int op, int t, int e)
{
    long long a = initial(op, e);
    if (op == O_REPLACE) return contrib(op, (t + 1) % size, t, e); /* only t+1 replaces at t */
    for (int o = 0; o < size; o++)
        a = fold(op, a, contrib(op, o, t, e));
    return a;
}

/* Run every applicable op on one type, all ranks to all targets, under fence. */
#define DEFINE_OPS_TEST(T, MPIT, NAME, INTEGER)                                                   \
    static void ops_##NAME(void)                                                                  \
    {                                                                                             \
        test_phase("all ops on " #T " under fence");                                              \
        T *base;                                                                                  \
        NARMA_Win win;                                                                            \
        CHECK_RC(NARMA_Win_allocate(NOPS *CNT * sizeof(T), sizeof(T), MPI_INFO_NULL,              \
                                    MPI_COMM_WORLD, &base, &win));                                \
        for (int op = 0; op < NOPS; op++)                                                         \
            for (int e = 0; e < CNT; e++)                                                         \
                base[op * CNT + e] = (T)initial(op, e);                                           \
        T fetched[64];                                                                            \
        CHECK_RC(NARMA_Win_fence(0, win));                                                        \
        for (int op = 0; op < NOPS; op++) {                                                       \
            if (!(INTEGER) && op_is_bitwise_or_logical(op)) continue;                             \
            for (int k = 0; k < size; k++) {                                                      \
                int t = (rank + k) % size; /* stagger targets */                                  \
                if (op == O_REPLACE && rank != (t + 1) % size) continue;                          \
                T v[CNT];                                                                         \
                for (int e = 0; e < CNT; e++)                                                     \
                    v[e] = (T)contrib(op, rank, t, e);                                            \
                T res[CNT];                                                                       \
                /* MPI allows NO_OP only in the fetching calls */                                 \
                int rc = op == O_NO_OP                                                            \
                             ? NARMA_Get_accumulate(v, CNT, MPIT, res, CNT, MPIT, t, op * CNT,    \
                                                    CNT, MPIT, NARMA_NO_OP, win)                  \
                             : NARMA_Accumulate(v, CNT, MPIT, t, op * CNT, CNT, MPIT,             \
                                                op_handle(op), win);                              \
                CHECK(rc == NARMA_SUCCESS, "Accumulate %s on " #T " to %d: %d (%s)%s",            \
                      op_name[op], t, rc, NARMA_Strerror(rc), test_mpi_error(rc));                \
                if (op == O_NO_OP) fetched[t] = res[1];                                           \
            }                                                                                     \
        }                                                                                         \
        CHECK_RC(NARMA_Win_fence(0, win));                                                        \
        for (int t = 0; t < size; t++)                                                            \
            CHECK(fetched[t] == (T)initial(O_NO_OP, 1),                                           \
                  "Get_accumulate NO_OP on " #T " from %d fetched %.17g", t, (double)fetched[t]); \
        for (int op = 0; op < NOPS; op++) {                                                       \
            if (!(INTEGER) && op_is_bitwise_or_logical(op)) continue;                             \
            for (int e = 0; e < CNT; e++) {                                                       \
                T want = (T)expected(op, rank, e);                                                \
                CHECK(base[op * CNT + e] == want,                                                 \
                      "%s on " #T " element %d: got %.17g, want %.17g", op_name[op], e,           \
                      (double)base[op * CNT + e], (double)want);                                  \
            }                                                                                     \
        }                                                                                         \
        CHECK_RC(NARMA_Win_free(&win));                                                           \
    }

DEFINE_OPS_TEST(int, MPI_INT, int, 1)
DEFINE_OPS_TEST(long long, MPI_LONG_LONG, longlong, 1)
DEFINE_OPS_TEST(double, MPI_DOUBLE, double, 0)
DEFINE_OPS_TEST(float, MPI_FLOAT, float, 0)

static void accumulate_derived(void)
{
    test_phase("Accumulate SUM into a vector target type");
    int *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    for (int i = 0; i < 16; i++)
        base[i] = i;
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int v[4] = {1, 10, 100, 1000};
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int t = 0; t < size; t++)
        CHECK_RC(NARMA_Accumulate(v, 4, MPI_INT, t, 2, 1, vec, NARMA_SUM, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int i = 0; i < 16; i++) {
        int want = i;
        if (i >= 2 && (i - 2) % 3 == 0 && (i - 2) / 3 < 4) want += size * v[(i - 2) / 3];
        CHECK(base[i] == want, "element %d = %d, expected %d", i, base[i], want);
    }
    MPI_Type_free(&vec);
    CHECK_RC(NARMA_Win_free(&win));
}

static void fetching_ops(void)
{
    /* each origin owns slot `rank` at its right neighbour: results are deterministic */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long long *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(size * 8 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    for (int o = 0; o < size; o++)
        for (int e = 0; e < 8; e++)
            base[o * 8 + e] = 10 * o + e;
    MPI_Barrier(MPI_COMM_WORLD);
    const MPI_Aint my = rank * 8;

    test_phase("Get_accumulate returns the old values (SUM, NO_OP, REPLACE)");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    long long add[4] = {1, 2, 3, 4}, res[4];
    CHECK_RC(NARMA_Get_accumulate(add, 4, MPI_LONG_LONG, res, 4, MPI_LONG_LONG, right, my, 4,
                                  MPI_LONG_LONG, NARMA_SUM, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    for (int e = 0; e < 4; e++)
        CHECK(res[e] == 10 * rank + e, "Get_accumulate SUM fetched %lld at %d", res[e], e);
    CHECK_RC(NARMA_Get_accumulate(NULL, 0, MPI_LONG_LONG, res, 4, MPI_LONG_LONG, right, my, 4,
                                  MPI_LONG_LONG, NARMA_NO_OP, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    for (int e = 0; e < 4; e++)
        CHECK(res[e] == 10 * rank + e + e + 1, "Get_accumulate NO_OP fetched %lld at %d", res[e],
              e);
    long long repl[4] = {-1, -2, -3, -4};
    CHECK_RC(NARMA_Get_accumulate(repl, 4, MPI_LONG_LONG, res, 4, MPI_LONG_LONG, right, my, 4,
                                  MPI_LONG_LONG, NARMA_REPLACE, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    for (int e = 0; e < 4; e++)
        CHECK(res[e] == 10 * rank + 2 * e + 1, "Get_accumulate REPLACE fetched %lld", res[e]);

    test_phase("Fetch_and_op returns the old value (SUM, NO_OP, REPLACE, MAX)");
    long long one = 5, old = 0;
    CHECK_RC(NARMA_Fetch_and_op(&one, &old, MPI_LONG_LONG, right, my + 4, NARMA_SUM, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK(old == 10 * rank + 4, "FAO SUM fetched %lld", old);
    CHECK_RC(NARMA_Fetch_and_op(NULL, &old, MPI_LONG_LONG, right, my + 4, NARMA_NO_OP, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK(old == 10 * rank + 9, "FAO NO_OP fetched %lld", old);
    long long nv = 123456789012LL;
    CHECK_RC(NARMA_Fetch_and_op(&nv, &old, MPI_LONG_LONG, right, my + 4, NARMA_REPLACE, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK(old == 10 * rank + 9, "FAO REPLACE fetched %lld", old);
    long long small = 3;
    CHECK_RC(NARMA_Fetch_and_op(&small, &old, MPI_LONG_LONG, right, my + 4, NARMA_MAX, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK(old == nv, "FAO MAX fetched %lld", old);

    test_phase("Compare_and_swap swaps only on equality");
    long long cmp = 10 * rank + 5, swp = 555, got = -1;
    CHECK_RC(NARMA_Compare_and_swap(&swp, &cmp, &got, MPI_LONG_LONG, right, my + 5, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK(got == 10 * rank + 5, "CAS (equal) returned %lld", got);
    long long wrong = 1, swp2 = 666;
    CHECK_RC(NARMA_Compare_and_swap(&swp2, &wrong, &got, MPI_LONG_LONG, right, my + 5, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK(got == 555, "CAS (not equal) returned %lld", got);
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* the target memory reflects the sequence above */
    const long long *s = &base[left * 8];
    for (int e = 0; e < 4; e++)
        CHECK(s[e] == -(e + 1), "after REPLACE element %d = %lld", e, s[e]);
    CHECK(s[4] == nv, "after FAO sequence element 4 = %lld", s[4]);
    CHECK(s[5] == 555, "after CAS element 5 = %lld (the failed CAS must not swap)", s[5]);
    CHECK(s[6] == 10 * left + 6, "element 6 untouched: %lld", s[6]);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));

    test_phase("Fetch_and_op / Compare_and_swap on int and double");
    {
        int *ib;
        NARMA_Win iw;
        CHECK_RC(NARMA_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                    &ib, &iw));
        for (int o = 0; o < size; o++)
            ib[o] = 7;
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_lock_all(0, iw));
        int iv = 3, iold = 0, icmp = 10, iswp = 99;
        CHECK_RC(NARMA_Fetch_and_op(&iv, &iold, MPI_INT, right, rank, NARMA_SUM, iw));
        CHECK_RC(NARMA_Win_flush(right, iw));
        CHECK(iold == 7, "int FAO fetched %d", iold);
        CHECK_RC(NARMA_Compare_and_swap(&iswp, &icmp, &iold, MPI_INT, right, rank, iw));
        CHECK_RC(NARMA_Win_flush(right, iw));
        CHECK(iold == 10, "int CAS fetched %d", iold);
        CHECK_RC(NARMA_Win_unlock_all(iw));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(ib[left] == 99, "int CAS result %d", ib[left]);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&iw));

        double *db;
        NARMA_Win dw;
        CHECK_RC(NARMA_Win_allocate(size * sizeof(double), sizeof(double), MPI_INFO_NULL,
                                    MPI_COMM_WORLD, &db, &dw));
        for (int o = 0; o < size; o++)
            db[o] = 1.5;
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_lock_all(0, dw));
        double dv = 0.25, dold = 0, dres[1];
        CHECK_RC(NARMA_Fetch_and_op(&dv, &dold, MPI_DOUBLE, right, rank, NARMA_SUM, dw));
        CHECK_RC(NARMA_Win_flush(right, dw));
        CHECK(dold == 1.5, "double FAO fetched %g", dold);
        double big = 9.0;
        CHECK_RC(NARMA_Get_accumulate(&big, 1, MPI_DOUBLE, dres, 1, MPI_DOUBLE, right, rank, 1,
                                      MPI_DOUBLE, NARMA_MAX, dw));
        CHECK_RC(NARMA_Win_flush(right, dw));
        CHECK(dres[0] == 1.75, "double Get_accumulate MAX fetched %g", dres[0]);
        CHECK_RC(NARMA_Win_unlock_all(dw));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(db[left] == 9.0, "double after MAX: %g", db[left]);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&dw));
    }
}

static void maxloc_minloc(void)
{
    test_phase("MAXLOC / MINLOC on MPI_2INT");
    int *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    base[0] = -1000;
    base[1] = -1; /* MAXLOC pair */
    base[2] = 1000;
    base[3] = -1; /* MINLOC pair */
    /* ranks 0 and size-1 tie at the maximum: the lower index (0) must win */
    int mx[2] = {(rank == 0 || rank == size - 1) ? 100 : rank, rank};
    /* odd ranks tie at the minimum: the lowest odd rank (1) must win */
    int mn[2] = {rank % 2 ? 1 : 5, rank};
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int k = 0; k < size; k++) {
        int t = (rank + k) % size;
        CHECK_RC(NARMA_Accumulate(mx, 1, MPI_2INT, t, 0, 1, MPI_2INT, NARMA_MAXLOC, win));
        CHECK_RC(NARMA_Accumulate(mn, 1, MPI_2INT, t, 2, 1, MPI_2INT, NARMA_MINLOC, win));
    }
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK(base[0] == 100 && base[1] == 0, "MAXLOC gave {%d,%d}, expected {100,0}", base[0],
          base[1]);
    CHECK(base[2] == 1 && base[3] == 1, "MINLOC gave {%d,%d}, expected {1,1}", base[2], base[3]);
    CHECK_RC(NARMA_Win_free(&win));
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void contention(void)
{
    const int K = (int)env_long("NARMA_TEST_ACC_ITERS", 1000);
    const int V = 32;
    const int hot = 0, hot2 = size - 1;
    long long *base;
    NARMA_Win win;
    /* [0] SUM target, [1] ticket counter, [2] mixed SUM/FAO target, [8..8+V) vector */
    CHECK_RC(NARMA_Win_allocate((8 + V) * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < 8 + V; i++)
        base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("all ranks SUM into one element and one vector (lock_all)");
    long long one = 1, ones[32];
    for (int i = 0; i < V; i++)
        ones[i] = i + 1;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int i = 0; i < K; i++) {
        CHECK_RC(
            NARMA_Accumulate(&one, 1, MPI_LONG_LONG, hot, 0, 1, MPI_LONG_LONG, NARMA_SUM, win));
        if (i % 4 == 0)
            CHECK_RC(NARMA_Accumulate(ones, V, MPI_LONG_LONG, hot2, 8, V, MPI_LONG_LONG, NARMA_SUM,
                                      win));
        if (i % 100 == 99) CHECK_RC(NARMA_Win_flush_all(win));
    }
    CHECK_RC(NARMA_Win_unlock_all(win));

    test_phase("Fetch_and_op tickets are unique; FAO and Accumulate mix atomically");
    long long *tickets = malloc(K * sizeof(long long));
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int i = 0; i < K; i++) {
        CHECK_RC(NARMA_Fetch_and_op(&one, &tickets[i], MPI_LONG_LONG, hot2, 1, NARMA_SUM, win));
        CHECK_RC(NARMA_Win_flush(hot2, win));
        CHECK(i == 0 || tickets[i] > tickets[i - 1],
              "tickets not increasing for one origin: %lld after %lld", tickets[i], tickets[i - 1]);
        long long dummy;
        if (i % 2)
            CHECK_RC(
                NARMA_Accumulate(&one, 1, MPI_LONG_LONG, hot, 2, 1, MPI_LONG_LONG, NARMA_SUM, win));
        else
            CHECK_RC(NARMA_Fetch_and_op(&one, &dummy, MPI_LONG_LONG, hot, 2, NARMA_SUM, win));
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("contention results");
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, win));
    if (rank == hot) {
        CHECK(base[0] == (long long)size * K, "SUM total %lld, expected %lld", base[0],
              (long long)size * K);
        CHECK(base[2] == (long long)size * K, "mixed SUM/FAO total %lld, expected %lld", base[2],
              (long long)size * K);
    }
    if (rank == hot2) {
        long long n = (K + 3) / 4;
        for (int i = 0; i < V; i++)
            CHECK(base[8 + i] == (long long)size * n * (i + 1),
                  "vector SUM element %d = %lld, expected %lld", i, base[8 + i],
                  (long long)size * n * (i + 1));
        CHECK(base[1] == (long long)size * K, "ticket counter %lld", base[1]);
    }
    CHECK_RC(NARMA_Win_unlock(rank, win));
    long long *all = rank == 0 ? malloc((size_t)size * K * sizeof(long long)) : NULL;
    MPI_Gather(tickets, K, MPI_LONG_LONG, all, K, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)size * K, sizeof(long long), cmp_ll);
        for (long long i = 0; i < (long long)size * K; i++)
            CHECK(all[i] == i, "ticket %lld missing or duplicated (sorted[%lld]=%lld)", i, i,
                  all[i]);
        free(all);
    }
    free(tickets);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("concurrent Compare_and_swap: exactly one winner");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    long long zero = 0, mine = rank + 1, prev = -1;
    CHECK_RC(NARMA_Compare_and_swap(&mine, &zero, &prev, MPI_LONG_LONG, hot, 3, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    int won = prev == 0, winners = 0;
    CHECK(prev == 0 || (prev >= 1 && prev <= size), "CAS returned %lld", prev);
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(winners == 1, "%d ranks won the same compare-and-swap", winners);
    int winner = won ? rank : -1, w = -1;
    MPI_Allreduce(&winner, &w, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(prev == 0 || prev == w + 1, "losers saw %lld, winner was rank %d", prev, w);
    if (rank == hot) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, win));
        CHECK(base[3] == w + 1, "CAS word holds %lld, winner wrote %d", base[3], w + 1);
        CHECK_RC(NARMA_Win_unlock(rank, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
}

/* Large accumulates and single-element atomics on the same elements at once:
 * vector SUMs by the even ranks (the typed, vectorised loops), Fetch_and_op,
 * Get_accumulate and a Compare_and_swap increment loop (integers only: MPI
 * allows no floating type there) by the odd ranks, all into the same elements
 * of one target. Every contribution is an integer, so the totals are exact in
 * double too; one lost update changes them. */
static void bulk_vs_single(void)
{
    const int K = (int)env_long("NARMA_TEST_ACC_ITERS", 1000);
    enum { V = 256 };
    const int hot = size - 1, nbulk = (size + 1) / 2, nsingle = size / 2;
    double *dbase, dones[V], done_ = 1.0, dgot[8];
    long long *lbase, lones[V], lone = 1, lgot;
    NARMA_Win dwin, lwin;
    CHECK_RC(NARMA_Win_allocate(V * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &dbase, &dwin));
    CHECK_RC(NARMA_Win_allocate(V * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &lbase, &lwin));
    for (int i = 0; i < V; i++) {
        dbase[i] = 0;
        lbase[i] = 0;
        dones[i] = 1.0;
        lones[i] = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    test_phase("vector SUMs against FAO, GACC and a CAS loop on the same elements");
    CHECK_RC(NARMA_Win_lock_all(0, dwin));
    CHECK_RC(NARMA_Win_lock_all(0, lwin));
    for (int i = 0; i < K; i++) {
        int e = (i * 7) % (V - 8);
        if (rank % 2 == 0) {
            CHECK_RC(
                NARMA_Accumulate(dones, V, MPI_DOUBLE, hot, 0, V, MPI_DOUBLE, NARMA_SUM, dwin));
            CHECK_RC(NARMA_Accumulate(lones, V, MPI_LONG_LONG, hot, 0, V, MPI_LONG_LONG, NARMA_SUM,
                                      lwin));
        } else {
            double dold;
            CHECK_RC(NARMA_Fetch_and_op(&done_, &dold, MPI_DOUBLE, hot, e, NARMA_SUM, dwin));
            CHECK_RC(NARMA_Get_accumulate(dones, 8, MPI_DOUBLE, dgot, 8, MPI_DOUBLE, hot, e, 8,
                                          MPI_DOUBLE, NARMA_SUM, dwin));
            CHECK_RC(NARMA_Fetch_and_op(&lone, &lgot, MPI_LONG_LONG, hot, e, NARMA_SUM, lwin));
            for (;;) { /* one increment of element e + 1 by compare-and-swap */
                long long cur, next, prev;
                CHECK_RC(
                    NARMA_Fetch_and_op(NULL, &cur, MPI_LONG_LONG, hot, e + 1, NARMA_NO_OP, lwin));
                CHECK_RC(NARMA_Win_flush(hot, lwin));
                next = cur + 1;
                CHECK_RC(
                    NARMA_Compare_and_swap(&next, &cur, &prev, MPI_LONG_LONG, hot, e + 1, lwin));
                CHECK_RC(NARMA_Win_flush(hot, lwin));
                if (prev == cur) break;
            }
        }
        if (i % 50 == 49) {
            CHECK_RC(NARMA_Win_flush_all(dwin));
            CHECK_RC(NARMA_Win_flush_all(lwin));
        }
    }
    CHECK_RC(NARMA_Win_unlock_all(lwin));
    CHECK_RC(NARMA_Win_unlock_all(dwin));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == hot) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, dwin));
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, lwin));
        double dtotal = 0, dwant = (double)K * (nbulk * V + nsingle * (1 + 8));
        long long ltotal = 0, lwant = (long long)K * (nbulk * V + nsingle * 2);
        for (int i = 0; i < V; i++) {
            dtotal += dbase[i];
            ltotal += lbase[i];
            CHECK(dbase[i] >= (double)nbulk * K && lbase[i] >= (long long)nbulk * K,
                  "element %d = %.0f / %lld, below the %d vector sums", i, dbase[i], lbase[i],
                  nbulk * K);
        }
        CHECK(dtotal == dwant, "double elements sum to %.0f, expected %.0f (lost updates)", dtotal,
              dwant);
        CHECK(ltotal == lwant, "long long elements sum to %lld, expected %lld (lost updates)",
              ltotal, lwant);
        CHECK_RC(NARMA_Win_unlock(rank, lwin));
        CHECK_RC(NARMA_Win_unlock(rank, dwin));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&lwin));
    CHECK_RC(NARMA_Win_free(&dwin));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_accumulate", 45);
    rank = test_rank;
    size = test_size;
    ops_int();
    ops_longlong();
    ops_double();
    ops_float();
    accumulate_derived();
    fetching_ops();
    maxloc_minloc();
    contention();
    bulk_vs_single();
    return test_finish();
}
