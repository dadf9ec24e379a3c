/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 */
/*
 * An access to a dynamic window may span memory the target never attached, or
 * run from one attached region into the next, as long as every byte it touches
 * is attached (MPI). MPI libraries need not agree: Open MPI looks one region
 * up for the whole span of an access and refuses the rest with
 * MPI_ERR_RMA_RANGE. narma accepts every such access on every MPI library and
 * moves exactly the bytes asked for.
 *
 * Each rank attaches, in memory of its own pages: P (4 long longs at the start
 * of page 0), Q (4 at the start of page 2), and R1, R2 (8 each, back to back
 * across the page 3|4 boundary, attached separately). Every kind of access is
 * made with a target type of one block in P and one in Q (the span between
 * them, page 1, is never attached), with non-contiguous origin and result
 * types, and with a contiguous access across R1|R2; the values read back, the
 * notifications and the target's memory (gaps untouched) are checked.
 */
#include "common.h"

#include <stdint.h>
#include <stdlib.h>

#define TAG  9
#define PAGE 4096
#define NPG  6
#define N    8 /* long longs per access: 4 in P, 4 in Q */

static NARMA_Win win;
static int rank, size;
static long long *mem;               /* NPG pages */
static MPI_Aint *pb, *qb, *r1b;      /* every rank's P, Q and R1 addresses */
static MPI_Datatype spread, stride2; /* origin/result types: N elements, stride 2 */
static const int NOTES = 3;          /* notified accesses per exercise() */
#define P_OFF  0                     /* long long index of P in mem */
#define Q_OFF  (2 * PAGE / 8)        /* of Q */
#define R1_OFF (4 * PAGE / 8 - 8)    /* of R1; R2 follows at 4 * PAGE / 8 */

/* The target type of target t: 4 elements at P, 4 at Q (relative to P). */
static MPI_Datatype pq_type(int t)
{
    int lens[2] = {4, 4};
    MPI_Aint d[2] = {0, MPI_Aint_diff(qb[t], pb[t])};
    MPI_Datatype ty;
    CHECK_MPI(MPI_Type_create_hindexed(2, lens, d, MPI_LONG_LONG, &ty));
    CHECK_MPI(MPI_Type_commit(&ty));
    return ty;
}

static void expect_vals(const long long *got, int stride, const long long *want, long long mul,
                        const char *what)
{
    for (int i = 0; i < N; i++)
        CHECK(got[i * stride] == mul * want[i], "%s: element %d is %lld, expected %lld", what, i,
              got[i * stride], mul * want[i]);
}

/* Every access kind on target t, values checked through the window. */
static void exercise(int t)
{
    MPI_Datatype pq = pq_type(t);
    long long o[N], os[2 * N] = {0}, g[N], gs[2 * N];
    for (int i = 0; i < N; i++)
        os[2 * i] = o[i] = 100 * (rank + 1) + i;
    const MPI_Aint P = pb[t];
    NARMA_Request rq;

    snprintf(test_detail, sizeof test_detail, "target %d, P|Q type", t);
    CHECK_RC(NARMA_Put(o, N, MPI_LONG_LONG, t, P, 1, pq, win));
    CHECK_RC(NARMA_Win_flush(t, win));
    CHECK_RC(NARMA_Get(g, N, MPI_LONG_LONG, t, P, 1, pq, win));
    CHECK_RC(NARMA_Win_flush(t, win));
    expect_vals(g, 1, o, 1, "Put then Get");
    CHECK_RC(NARMA_Accumulate(os, 1, spread, t, P, 1, pq, MPI_SUM, win));
    memset(gs, 0, sizeof gs);
    CHECK_RC(NARMA_Get_accumulate(o, N, MPI_LONG_LONG, gs, 1, stride2, t, P, 1, pq, MPI_SUM, win));
    CHECK_RC(NARMA_Win_flush(t, win));
    expect_vals(gs, 2, o, 2, "Get_accumulate after Accumulate");
    CHECK_RC(NARMA_Get_accumulate(NULL, 0, MPI_LONG_LONG, g, N, MPI_LONG_LONG, t, P, 1, pq,
                                  MPI_NO_OP, win));
    CHECK_RC(NARMA_Win_flush(t, win));
    expect_vals(g, 1, o, 3, "Get_accumulate(NO_OP)");

    /* Request-based forms, origin spread with stride 2. */
    CHECK_RC(NARMA_Rput(os, 1, spread, t, P, 1, pq, win, &rq));
    CHECK_RC(NARMA_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_flush(t, win));
    memset(gs, 0, sizeof gs);
    CHECK_RC(NARMA_Rget(gs, 1, stride2, t, P, 1, pq, win, &rq));
    CHECK_RC(NARMA_Wait(&rq, MPI_STATUS_IGNORE));
    expect_vals(gs, 2, o, 1, "Rput then Rget");
    CHECK_RC(NARMA_Raccumulate(o, N, MPI_LONG_LONG, t, P, 1, pq, MPI_SUM, win, &rq));
    CHECK_RC(NARMA_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Rget_accumulate(o, N, MPI_LONG_LONG, g, N, MPI_LONG_LONG, t, P, 1, pq,
                                   MPI_REPLACE, win, &rq));
    CHECK_RC(NARMA_Wait(&rq, MPI_STATUS_IGNORE));
    expect_vals(g, 1, o, 2, "Rget_accumulate after Raccumulate");
    CHECK_RC(NARMA_Win_flush(t, win));

    /* Notified forms (NOTES of them): their own epochs, ordered with the above. */
    CHECK_RC(NARMA_Put_notify(os, 1, spread, t, P, 1, pq, win, TAG));
    CHECK_RC(NARMA_Accumulate_notify(o, N, MPI_LONG_LONG, t, P, 1, pq, MPI_SUM, win, TAG));
    CHECK_RC(NARMA_Get_notify(g, N, MPI_LONG_LONG, t, P, 1, pq, win, TAG));
    expect_vals(g, 1, o, 2, "Get_notify after Put_notify and Accumulate_notify");

    /* The same bytes with P's and Q's elements far apart in a vector: refused when one
     * block falls in page 1 (never attached). */
    MPI_Datatype bad;
    int lens[2] = {4, 4};
    MPI_Aint d[2] = {0, PAGE};
    CHECK_MPI(MPI_Type_create_hindexed(2, lens, d, MPI_LONG_LONG, &bad));
    CHECK_MPI(MPI_Type_commit(&bad));
    CHECK_ERR(NARMA_Put(o, N, MPI_LONG_LONG, t, P, 1, bad, win), NARMA_ERR_DISP);
    CHECK_MPI(MPI_Type_free(&bad));

    /* Contiguous across R1|R2, then a vector over both. */
    snprintf(test_detail, sizeof test_detail, "target %d, across R1|R2", t);
    long long c[16], cg[16];
    for (int i = 0; i < 16; i++)
        c[i] = 1000 * (rank + 1) + i;
    CHECK_RC(NARMA_Put(c, 16, MPI_LONG_LONG, t, r1b[t], 16, MPI_LONG_LONG, win));
    CHECK_RC(NARMA_Accumulate(c, 16, MPI_LONG_LONG, t, r1b[t], 16, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_RC(NARMA_Win_flush(t, win));
    CHECK_RC(NARMA_Get(cg, 16, MPI_LONG_LONG, t, r1b[t], 16, MPI_LONG_LONG, win));
    CHECK_RC(NARMA_Win_flush(t, win));
    for (int i = 0; i < 16; i++)
        CHECK(cg[i] == 2 * c[i], "R1|R2 element %d is %lld, expected %lld", i, cg[i], 2 * c[i]);
    CHECK_RC(NARMA_Put(c, N, MPI_LONG_LONG, t, r1b[t], 1, stride2, win));
    CHECK_RC(NARMA_Win_flush(t, win));
    CHECK_RC(NARMA_Get(cg, 16, MPI_LONG_LONG, t, r1b[t], 16, MPI_LONG_LONG, win));
    CHECK_RC(NARMA_Win_flush(t, win));
    for (int i = 0; i < 16; i++) {
        long long want = i % 2 ? 2 * c[i] : c[i / 2];
        CHECK(cg[i] == want, "R1|R2 vector: element %d is %lld, expected %lld", i, cg[i], want);
    }
    CHECK_MPI(MPI_Type_free(&pq));
}

/* The owner's view after origin `from` exercised it: P and Q hold 2*o, the gaps 0. */
static void check_memory(int from)
{
    snprintf(test_detail, sizeof test_detail, "memory written by %d", from);
    for (int i = 0; i < N; i++) {
        long long want = 2 * (100 * (from + 1) + i);
        long long got = i < 4 ? mem[P_OFF + i] : mem[Q_OFF + i - 4];
        CHECK(got == want, "element %d is %lld, expected %lld", i, got, want);
    }
    for (int i = 4; i < Q_OFF; i++)
        CHECK(mem[P_OFF + i] == 0, "gap word %d was written", i);
    for (int i = 0; i < 16; i++) {
        long long c = 1000 * (from + 1) + i, want = i % 2 ? 2 * c : 1000 * (from + 1) + i / 2;
        CHECK(mem[R1_OFF + i] == want, "R1|R2 word %d is %lld, expected %lld", i, mem[R1_OFF + i],
              want);
    }
}

static void match_notes(int from)
{
    NARMA_Request r;
    CHECK_RC(NARMA_Notify_init(win, from, TAG, NOTES, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&r));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_dynamic_split", 80);
    rank = test_rank;
    size = test_size;
    if (size < 2) return test_skip("needs 2 ranks");
    CHECK(posix_memalign((void **)&mem, PAGE, NPG * PAGE) == 0, "posix_memalign");
    memset(mem, 0, NPG * PAGE);
    pb = malloc(3 * (size_t)size * sizeof(MPI_Aint));
    qb = pb + size;
    r1b = qb + size;
    CHECK_MPI(MPI_Type_vector(N, 1, 2, MPI_LONG_LONG, &spread));
    CHECK_MPI(MPI_Type_commit(&spread));
    CHECK_MPI(MPI_Type_dup(spread, &stride2));
    CHECK_MPI(MPI_Type_commit(&stride2));

    test_phase("attach P, Q and R1, R2 back to back");
    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(NARMA_Win_attach(win, mem + P_OFF, 4 * sizeof(long long)));
    CHECK_RC(NARMA_Win_attach(win, mem + Q_OFF, 4 * sizeof(long long)));
    CHECK_RC(NARMA_Win_attach(win, mem + R1_OFF, 8 * sizeof(long long)));
    CHECK_RC(NARMA_Win_attach(win, mem + R1_OFF + 8, 8 * sizeof(long long)));
    MPI_Aint mine;
    MPI_Get_address(mem + P_OFF, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, pb, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Get_address(mem + Q_OFF, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, qb, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Get_address(mem + R1_OFF, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, r1b, 1, MPI_AINT, MPI_COMM_WORLD);

    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    test_phase("every access across regions, to the right neighbour");
    CHECK_RC(NARMA_Win_lock_all(0, win));
    exercise(right);
    CHECK_RC(NARMA_Win_unlock_all(win));
    match_notes(left);
    MPI_Barrier(MPI_COMM_WORLD);
    check_memory(left);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("every access across regions, to self");
    CHECK_RC(NARMA_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    exercise(rank);
    CHECK_RC(NARMA_Win_unlock(rank, win));
    match_notes(rank);
    check_memory(rank);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("free");
    CHECK_RC(NARMA_Win_detach(win, mem + P_OFF));
    CHECK_RC(NARMA_Win_detach(win, mem + Q_OFF));
    CHECK_RC(NARMA_Win_detach(win, mem + R1_OFF));
    CHECK_RC(NARMA_Win_detach(win, mem + R1_OFF + 8));
    CHECK_RC(NARMA_Win_free(&win));
    CHECK_MPI(MPI_Type_free(&spread));
    CHECK_MPI(MPI_Type_free(&stride2));
    free(mem);
    free(pb);
    return test_finish();
}
