/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 env=NARMA_DYNAMIC_REGIONS=8 */
/*
 * Dynamic windows check every access against what the target attached: every
 * byte an access touches must be attached (in one region, or in regions
 * attached back to back), otherwise the origin gets NARMA_ERR_DISP and nothing
 * reaches the target (no rank may crash).
 *
 * Each rank attaches two adjacent regions A = mem[0..4) and B = mem[4..8)
 * (long longs) and keeps never[] unattached. Every kind of access (put, get,
 * accumulate, get_accumulate, fetch_and_op, compare_and_swap, the three
 * notified forms and every R* form) is refused at a never-attached address,
 * one byte past the end of B, and, once the target detached A and attached C
 * elsewhere, at A and across the A|B boundary; the same accesses at the exact
 * edges of the regions succeed, and so does an access across the A|B boundary
 * while both are attached. A derived type with a gap that spans unattached
 * memory succeeds when the bytes it touches are attached. A rank may attach many more regions than
 * NARMA_DYNAMIC_REGIONS (8 here, the first capacity of its table): origins
 * that cached the small table reach regions attached after it grew, and
 * refuse what was detached since.
 */
#include "common.h"

#define TAG  5
#define CAP  8 /* NARMA_DYNAMIC_REGIONS in the header above: the first table's capacity */
#define NVAL 4

static NARMA_Win win;
static int rank, size;

/* Every kind of access to nll long longs at disp of target (the single-element atomics only
 * when nll == 1); each call must return expect. */
static void every_access(int target, MPI_Aint disp, int nll, int expect, const char *where)
{
    snprintf(test_detail, sizeof test_detail, "target %d, %s", target, where);
    long long o[NVAL] = {1, 2, 3, 4}, r[NVAL] = {0}, c = 0;
    int n = nll;
    NARMA_Request req;
#define EXPECT(call)                                                                        \
    do {                                                                                    \
        int rc_ = (call);                                                                   \
        if (rc_ != expect)                                                                  \
            test_fail(__FILE__, __LINE__, #call, "returned %d (%s), expected %d (%s)", rc_, \
                      NARMA_Strerror(rc_), expect, NARMA_Strerror(expect));                 \
    } while (0)
#define EXPECT_REQ(call)                                                        \
    do {                                                                        \
        req = NARMA_REQUEST_NULL;                                               \
        EXPECT(call);                                                           \
        if (expect == NARMA_SUCCESS)                                            \
            CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));                      \
        else                                                                    \
            CHECK(req == NARMA_REQUEST_NULL, "a refused call set its request"); \
    } while (0)

    EXPECT(NARMA_Put(o, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, win));
    EXPECT(NARMA_Get(r, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, win));
    EXPECT(NARMA_Accumulate(o, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, MPI_SUM, win));
    EXPECT(NARMA_Get_accumulate(o, n, MPI_LONG_LONG, r, n, MPI_LONG_LONG, target, disp, n,
                                MPI_LONG_LONG, MPI_SUM, win));
    EXPECT_REQ(NARMA_Rput(o, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, win, &req));
    EXPECT_REQ(NARMA_Rget(r, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, win, &req));
    EXPECT_REQ(
        NARMA_Raccumulate(o, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, MPI_SUM, win, &req));
    EXPECT_REQ(NARMA_Rget_accumulate(o, n, MPI_LONG_LONG, r, n, MPI_LONG_LONG, target, disp, n,
                                     MPI_LONG_LONG, MPI_SUM, win, &req));
    CHECK_RC(NARMA_Win_flush(target, win));
    if (n == 1) { /* single-element atomics */
        EXPECT(NARMA_Fetch_and_op(o, r, MPI_LONG_LONG, target, disp, MPI_SUM, win));
        EXPECT(NARMA_Compare_and_swap(o, &c, r, MPI_LONG_LONG, target, disp, win));
        CHECK_RC(NARMA_Win_flush(target, win));
    }
    /* Notified accesses are their own epochs. */
    EXPECT(NARMA_Put_notify(o, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, win, TAG));
    EXPECT(NARMA_Get_notify(r, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, win, TAG));
    EXPECT(NARMA_Accumulate_notify(o, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, MPI_SUM,
                                   win, TAG));
    EXPECT_REQ(
        NARMA_Rput_notify(o, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, win, &req, TAG));
    EXPECT_REQ(
        NARMA_Rget_notify(r, n, MPI_LONG_LONG, target, disp, n, MPI_LONG_LONG, win, &req, TAG));
#undef EXPECT
#undef EXPECT_REQ
}
#define NOTES_PER_VALID 5 /* notified accesses in one successful every_access() */

/* Accesses to right, then to self; each rank counts the notifications it must match. */
static int round_of(const MPI_Aint *a, const MPI_Aint *b, const MPI_Aint *never, int after_detach,
                    const MPI_Aint *c)
{
    int valid = 0, right = (rank + 1) % size;
    int targets[2] = {right, rank};
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int k = 0; k < 2; k++) {
        int t = targets[k];
        /* First, while this origin's copy of t's table may still hold A. */
        if (after_detach) every_access(t, a[t], 1, NARMA_ERR_DISP, "A after its detach");
        every_access(t, never[t], 1, NARMA_ERR_DISP, "never-attached address");
        every_access(t, MPI_Aint_add(b[t], 25), 1, NARMA_ERR_DISP, "one byte past the end of B");
        every_access(t, MPI_Aint_add(b[t], 32), 1, NARMA_ERR_DISP, "at the end of B");
        every_access(t, MPI_Aint_add(a[t], -8), 1, NARMA_ERR_DISP, "just before A");
        every_access(t, MPI_Aint_add(a[t], 24), 2, after_detach ? NARMA_ERR_DISP : NARMA_SUCCESS,
                     "across the A|B boundary");
        if (!after_detach) valid++;
        if (after_detach)
            every_access(t, MPI_Aint_add(a[t], 28), 1, NARMA_ERR_DISP, "4 bytes in A, 4 in B");
        every_access(t, MPI_Aint_add(b[t], 0), 4, NARMA_SUCCESS, "all of B");
        every_access(t, MPI_Aint_add(b[t], 24), 1, NARMA_SUCCESS, "last element of B");
        valid += 2;
        if (!after_detach) {
            every_access(t, a[t], 4, NARMA_SUCCESS, "all of A");
            valid++;
        } else {
            every_access(t, MPI_Aint_add(a[t], 24), 1, NARMA_ERR_DISP, "end of A after detach");
            every_access(t, c[t], 4, NARMA_SUCCESS, "all of C, attached after A's detach");
            every_access(t, MPI_Aint_add(c[t], 8), 4, NARMA_ERR_DISP, "past the end of C");
            valid++;
        }
        /* A derived type whose span leaves B although its first element is inside. */
        MPI_Datatype vec;
        CHECK_MPI(MPI_Type_vector(2, 1, 3, MPI_LONG_LONG, &vec));
        CHECK_MPI(MPI_Type_commit(&vec));
        long long two[2] = {7, 8};
        snprintf(test_detail, sizeof test_detail, "target %d, vector type leaving B", t);
        CHECK_ERR(NARMA_Put(two, 2, MPI_LONG_LONG, t, MPI_Aint_add(b[t], 8), 1, vec, win),
                  NARMA_ERR_DISP);
        CHECK_RC(NARMA_Put(two, 2, MPI_LONG_LONG, t, b[t], 1, vec, win));
        CHECK_RC(NARMA_Win_flush(t, win));
        CHECK_MPI(MPI_Type_free(&vec));
        if (after_detach) {
            /* One element in B, one in C: the span between them is not attached, the two
             * elements are, so the access is valid (MPI); with A's address instead of C's
             * it is not. */
            MPI_Datatype two_regions, to_a;
            int lens[2] = {1, 1};
            MPI_Aint d[2] = {0, MPI_Aint_diff(c[t], b[t])}, da[2] = {0, MPI_Aint_diff(a[t], b[t])};
            CHECK_MPI(MPI_Type_create_hindexed(2, lens, d, MPI_LONG_LONG, &two_regions));
            CHECK_MPI(MPI_Type_create_hindexed(2, lens, da, MPI_LONG_LONG, &to_a));
            CHECK_MPI(MPI_Type_commit(&two_regions));
            CHECK_MPI(MPI_Type_commit(&to_a));
            snprintf(test_detail, sizeof test_detail, "target %d, one element in B, one in C", t);
            CHECK_RC(NARMA_Put(two, 2, MPI_LONG_LONG, t, b[t], 1, two_regions, win));
            CHECK_ERR(NARMA_Put(two, 2, MPI_LONG_LONG, t, b[t], 1, to_a, win), NARMA_ERR_DISP);
            CHECK_RC(NARMA_Win_flush(t, win));
            CHECK_MPI(MPI_Type_free(&two_regions));
            CHECK_MPI(MPI_Type_free(&to_a));
        }
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    return valid;
}

/* Match the notifications of the valid accesses from the left neighbour and from self. */
static void match_notes(int n_from_each)
{
    int left = (rank + size - 1) % size;
    NARMA_Request r[2];
    int nr = 0;
    CHECK_RC(NARMA_Notify_init(win, left, TAG, n_from_each * NOTES_PER_VALID, &r[nr++]));
    CHECK_RC(NARMA_Notify_init(win, rank, TAG, n_from_each * NOTES_PER_VALID, &r[nr++]));
    CHECK_RC(NARMA_Startall(nr, r));
    CHECK_RC(NARMA_Waitall(nr, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < nr; i++)
        CHECK_RC(NARMA_Request_free(&r[i]));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_dynamic_bounds", 80);
    rank = test_rank;
    size = test_size;
    if (size < 2) return test_skip("needs 2 ranks");

    long long *mem = calloc(8, sizeof(long long)), *cmem = calloc(NVAL, sizeof(long long));
    long long *never = calloc(NVAL, sizeof(long long));
    MPI_Aint *a = malloc(4 * (size_t)size * sizeof(MPI_Aint));
    MPI_Aint *b = a + size, *nv = b + size, *c = nv + size, mine;

    test_phase("create a dynamic window, attach two adjacent regions A and B");
    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(NARMA_Win_attach(win, mem, 4 * sizeof(long long)));     /* A */
    CHECK_RC(NARMA_Win_attach(win, mem + 4, 4 * sizeof(long long))); /* B */
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, a, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Get_address(mem + 4, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, b, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Get_address(never, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, nv, 1, MPI_AINT, MPI_COMM_WORLD);

    test_phase("every access outside one region is refused, every one inside succeeds");
    int valid = round_of(a, b, nv, 0, NULL);
    match_notes(valid / 2);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("detach A, attach C elsewhere: A is refused, C reachable");
    CHECK_RC(NARMA_Win_detach(win, mem));
    CHECK_ERR(NARMA_Win_detach(win, mem), NARMA_ERR_ATTACH);
    CHECK_ERR(NARMA_Win_detach(win, never), NARMA_ERR_ATTACH);
    CHECK_RC(NARMA_Win_attach(win, cmem, NVAL * sizeof(long long)));
    MPI_Get_address(cmem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, c, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* every detach before any origin's next access */
    valid = round_of(a, b, nv, 1, c);
    match_notes(valid / 2);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NVAL; i++)
        CHECK(never[i] == 0, "never-attached memory was written: never[%d] = %lld", i, never[i]);

    test_phase("many regions: the table grows past NARMA_DYNAMIC_REGIONS");
    {
        /* Region k of rank r is slot 2k of its many[], one long long; odd slots stay
         * unattached. First a few regions (origins cache the first table), then many more
         * (the owner's table grows 8 -> 128 through four new tables). */
        enum { FEW = 3, MANY = 16 * CAP + 5 };
        long long *many = calloc(2 * MANY, sizeof(long long));
        MPI_Aint mb, *bases = malloc((size_t)size * sizeof(MPI_Aint));
        MPI_Get_address(many, &mb);
        MPI_Allgather(&mb, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
        const int to = (rank + 1) % size, from = (rank + size - 1) % size;
        const MPI_Aint tb = bases[to];
        for (int k = 0; k < MANY; k++) {
            if (k == FEW) {
                MPI_Barrier(MPI_COMM_WORLD);
                CHECK_RC(NARMA_Win_lock_all(0, win));
                for (int j = 0; j < FEW; j++) {
                    long long v = 1000 * rank + j;
                    CHECK_RC(
                        NARMA_Put(&v, 1, MPI_LONG_LONG, to, tb + 16 * j, 1, MPI_LONG_LONG, win));
                }
                CHECK_RC(NARMA_Win_unlock_all(win));
                MPI_Barrier(MPI_COMM_WORLD);
            }
            CHECK_RC(NARMA_Win_attach(win, many + 2 * k, sizeof(long long)));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_lock_all(0, win));
        for (int k = FEW; k < MANY; k++) {
            long long v = 1000 * rank + k;
            CHECK_RC(NARMA_Put(&v, 1, MPI_LONG_LONG, to, tb + 16 * k, 1, MPI_LONG_LONG, win));
            CHECK_ERR(NARMA_Put(&v, 1, MPI_LONG_LONG, to, tb + 16 * k + 8, 1, MPI_LONG_LONG, win),
                      NARMA_ERR_DISP);
        }
        CHECK_RC(NARMA_Win_unlock_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < MANY; k++) {
            CHECK(many[2 * k] == 1000 * from + k, "region %d holds %lld, expected %d", k,
                  many[2 * k], 1000 * from + k);
            CHECK(many[2 * k + 1] == 0, "unattached slot %d was written", 2 * k + 1);
        }
        /* Detach the even regions: origins must refuse them from now on, and still reach
         * the odd ones. */
        for (int k = 0; k < MANY; k += 2)
            CHECK_RC(NARMA_Win_detach(win, many + 2 * k));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_lock_all(0, win));
        for (int k = 0; k < MANY; k++) {
            long long v = -k;
            CHECK_ERR(NARMA_Put(&v, 1, MPI_LONG_LONG, to, tb + 16 * k, 1, MPI_LONG_LONG, win),
                      k % 2 ? NARMA_SUCCESS : NARMA_ERR_DISP);
        }
        CHECK_RC(NARMA_Win_unlock_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < MANY; k++) {
            long long want = k % 2 ? -k : 1000 * from + k;
            CHECK(many[2 * k] == want, "after detach: region %d holds %lld, expected %lld", k,
                  many[2 * k], want);
        }
        for (int k = 1; k < MANY; k += 2)
            CHECK_RC(NARMA_Win_detach(win, many + 2 * k));
        /* An empty region may not share its base with another (detach names regions by
         * base); elsewhere it is fine. */
        CHECK_RC(NARMA_Win_attach(win, many, 2 * sizeof(long long)));
        CHECK_ERR(NARMA_Win_attach(win, many, 0), NARMA_ERR_ATTACH);
        CHECK_RC(NARMA_Win_attach(win, many + 4, 0));
        CHECK_RC(NARMA_Win_detach(win, many + 4));
        CHECK_RC(NARMA_Win_detach(win, many));
        CHECK_ERR(NARMA_Win_detach(win, many), NARMA_ERR_ATTACH);
        MPI_Barrier(MPI_COMM_WORLD);
        free(many);
        free(bases);
    }

    test_phase("free");
    CHECK_RC(NARMA_Win_detach(win, mem + 4));
    CHECK_RC(NARMA_Win_detach(win, cmem));
    CHECK_RC(NARMA_Win_free(&win));
    free(mem);
    free(cmem);
    free(never);
    free(a);
    return test_finish();
}
