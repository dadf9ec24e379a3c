/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Nonblocking PSCW epochs match first-in first-out, however far apart the
 * two sides run (paper VI-A rule 3, VII-B):
 *  - origin ahead: every rank opens and closes NE access epochs toward its
 *    right neighbour (istart/put/icomplete, no waiting in between) before its
 *    target has posted anything; the target then exposes in bursts of random
 *    length (ipost/iwait only), and after each iwait request completes checks
 *    that exactly that epoch's data arrived. Between bursts no exposure is
 *    open, so nothing of a later epoch may have landed.
 *  - target ahead: the target posts all NE exposures first; the origin, late,
 *    catches up in bursts and finds every grant still there.
 *  - groups: every rank exposes to and accesses all others, NE epochs each way.
 * Epoch k puts its index (and the origin) into slot k and into a "last" word,
 * so a mismatch shows as a missing slot or a stale "last".
 *
 * Epochs of one window activate in program order, access and exposure alike
 * (rule 4, no reorder flag). A rank that closes 128 access epochs and only
 * then posts would queue its exposures behind them, and in a ring everybody
 * would wait for everybody. So the first two phases give every origin o its
 * own window win[o]: o accesses its right neighbour there, and that
 * neighbour exposes there. The group phase uses one window and the classic
 * post; start; put; complete; wait order (post and start are concurrent).
 */
#include "common.h"

#define NE 128 /* epochs per pair (>= 100) */
#define K  4   /* ints per slot */

enum { TAG_READY = 1 };

static int rank, size, right, left;
static MPI_Group world_group;

static MPI_Group group_of(int n, const int *ranks)
{
    MPI_Group g;
    MPI_Group_incl(world_group, n, ranks, &g);
    return g;
}

static int value(int epoch, int origin, int i) { return 1000000 * (i + 1) + 1000 * epoch + origin; }

/* Window layout (ints): slot (k, origin) at (k * size + origin) * K; "last" word per origin after.
 */
static int slot_disp(int k, int origin) { return (k * size + origin) * K; }
static int last_disp(int origin) { return NE * size * K + origin; }

static MPI_Status sts[NE]; /* statuses of Waitall (unused) */
static int *base;          /* memory of the window being checked */

static void reset(NARMA_Win win, int *mem)
{
    const int len = NE * size * K + size;
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < len; i++)
        mem[i] = -1;
    CHECK_RC(NARMA_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The data of epoch k from origin must be in its slot. */
static void check_slot(int k, int origin)
{
    for (int i = 0; i < K; i++)
        CHECK(base[slot_disp(k, origin) + i] == value(k, origin, i),
              "epoch %d from %d: slot[%d] = %d, expected %d", k, origin, i,
              base[slot_disp(k, origin) + i], value(k, origin, i));
}

/* Epochs after k from origin must not have written anything yet. */
static void check_untouched_after(int k, int origin)
{
    for (int j = k + 1; j < NE; j++)
        CHECK(base[slot_disp(j, origin)] == -1,
              "epoch %d from %d landed while only %d were exposed", j, origin, k + 1);
    CHECK(base[last_disp(origin)] == k, "last word from %d is %d after exposure %d completed",
          origin, base[last_disp(origin)], k);
}

/* One access epoch k toward the group; origin buffers stay untouched until completion. */
static void access_epoch(NARMA_Win win, MPI_Group g, int n, const int *targets, int k,
                         int (*out)[K], NARMA_Request *close)
{
    NARMA_Request open;
    CHECK_RC(NARMA_Win_istart(g, 0, win, &open));
    CHECK(open != NARMA_REQUEST_NULL, "istart returned no request");
    int flag = 0;
    CHECK_RC(NARMA_Test(&open, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "an epoch-opening request must be complete at creation");
    for (int i = 0; i < K; i++)
        out[k][i] = value(k, rank, i);
    for (int t = 0; t < n; t++)
        CHECK_RC(NARMA_Put(out[k], K, MPI_INT, targets[t], slot_disp(k, rank), K, MPI_INT, win));
    static int lastv[NE];
    lastv[k] = k;
    for (int t = 0; t < n; t++)
        CHECK_RC(NARMA_Put(&lastv[k], 1, MPI_INT, targets[t], last_disp(rank), 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_icomplete(win, close));
}

static void post(NARMA_Win win, MPI_Group g)
{
    NARMA_Request open;
    CHECK_RC(NARMA_Win_ipost(g, 0, win, &open));
    CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE));
    CHECK(open == NARMA_REQUEST_NULL, "Wait did not reset the handle");
}

static void exposure_epoch(NARMA_Win win, MPI_Group g, NARMA_Request *close)
{
    post(win, g);
    CHECK_RC(NARMA_Win_iwait(win, close));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_nb_fifo", 25);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);

    const MPI_Aint bytes = (NE * size * K + size) * (MPI_Aint)sizeof(int);
    NARMA_Win *wins = malloc(sizeof(NARMA_Win) * (size_t)size);
    int **mems = malloc(sizeof(int *) * (size_t)size);
    for (int o = 0; o < size; o++)
        CHECK_RC(NARMA_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mems[o],
                                    &wins[o]));
    NARMA_Win win_acc = wins[rank], win_exp = wins[left], win = wins[0];
    base = mems[left]; /* the first two phases check the window I expose in */
    static int out[NE][K];
    NARMA_Request acc[NE], exp[NE];
    MPI_Group to = group_of(1, &right), from = group_of(1, &left);
    uint64_t seed = 12345 + (uint64_t)rank;

    test_phase(
        "origin ahead: NE access epochs issued before the target posts; bursts of exposures");
    reset(win_exp, base);
    for (int k = 0; k < NE; k++)
        access_epoch(win_acc, to, 1, &right, k, out, &acc[k]);
    /* The target starts only after its origin has issued everything. */
    MPI_Sendrecv(NULL, 0, MPI_BYTE, right, TAG_READY, NULL, 0, MPI_BYTE, left, TAG_READY,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(base[slot_disp(0, left)] == -1, "data landed before any exposure was posted");
    for (int k = 0; k < NE;) {
        int burst = 1 + (int)(test_rand(&seed) % 17);
        if (k + burst > NE) burst = NE - k;
        for (int j = k; j < k + burst; j++)
            exposure_epoch(win_exp, from, &exp[j]);
        for (int j = k; j < k + burst; j++) {
            snprintf(test_detail, sizeof test_detail, "exposure %d of burst [%d,%d)", j, k,
                     k + burst);
            CHECK_RC(NARMA_Wait(&exp[j], MPI_STATUS_IGNORE));
            check_slot(j, left);
            CHECK(base[last_disp(left)] >= j, "last word %d after exposure %d completed",
                  base[last_disp(left)], j);
        }
        k += burst;
        /* No exposure is open now: the origin cannot be past this burst. */
        check_untouched_after(k - 1, left);
    }
    CHECK_RC(NARMA_Waitall(NE, acc, sts));
    for (int k = 0; k < NE; k++)
        CHECK(acc[k] == NARMA_REQUEST_NULL, "Waitall left request %d set", k);

    test_phase("target ahead: NE exposures posted first; late origin catches up in bursts");
    reset(win_exp, base);
    for (int k = 0; k < NE; k++)
        exposure_epoch(win_exp, from, &exp[k]);
    MPI_Sendrecv(NULL, 0, MPI_BYTE, left, TAG_READY, NULL, 0, MPI_BYTE, right, TAG_READY,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int next_exp = 0; /* exposures completed and checked, in order */
    for (int k = 0; k < NE;) {
        int burst = 1 + (int)(test_rand(&seed) % 23);
        if (k + burst > NE) burst = NE - k;
        for (int j = k; j < k + burst; j++)
            access_epoch(win_acc, to, 1, &right, j, out, &acc[j]);
        CHECK_RC(NARMA_Waitall(burst, &acc[k], sts));
        k += burst;
        /* As a target, check whatever exposures have completed so far, in order. */
        for (int flag = 1; flag && next_exp < NE;) {
            CHECK_RC(NARMA_Test(&exp[next_exp], &flag, MPI_STATUS_IGNORE));
            if (flag) check_slot(next_exp++, left);
        }
    }
    for (; next_exp < NE; next_exp++) {
        CHECK_RC(NARMA_Wait(&exp[next_exp], MPI_STATUS_IGNORE));
        check_slot(next_exp, left);
        CHECK(base[last_disp(left)] >= next_exp, "last word %d after exposure %d",
              base[last_disp(left)], next_exp);
    }
    CHECK(base[last_disp(left)] == NE - 1, "last word %d at the end", base[last_disp(left)]);

    test_phase("groups: everyone exposes to and accesses all others, NE epochs in bursts");
    base = mems[0];
    reset(win, base);
    {
        int n = 0, *others = malloc(sizeof(int) * (size_t)size);
        for (int r = 0; r < size; r++)
            if (r != rank) others[n++] = r;
        MPI_Group g = group_of(n, others);
        uint64_t common = 777; /* the same burst lengths on every rank */
        for (int k = 0; k < NE;) {
            int burst = 1 + (int)(test_rand(&common) % 29);
            if (k + burst > NE) burst = NE - k;
            for (int j = k; j < k + burst; j++) {
                post(win, g);
                access_epoch(win, g, n, others, j, out, &acc[j]);
                CHECK_RC(NARMA_Win_iwait(win, &exp[j]));
            }
            for (int j = k; j < k + burst; j++) {
                snprintf(test_detail, sizeof test_detail, "exposure %d of burst [%d,%d)", j, k,
                         k + burst);
                CHECK_RC(NARMA_Wait(&exp[j], MPI_STATUS_IGNORE));
                for (int t = 0; t < n; t++) {
                    check_slot(j, others[t]);
                    CHECK(base[last_disp(others[t])] >= j, "last word %d from %d after exposure %d",
                          base[last_disp(others[t])], others[t], j);
                }
            }
            CHECK_RC(NARMA_Waitall(burst, &acc[k], sts));
            k += burst;
            /* My exposures of this burst are complete and no later one is posted. */
            for (int t = 0; t < n; t++)
                check_untouched_after(k - 1, others[t]);
        }
        MPI_Group_free(&g);
        free(others);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    MPI_Group_free(&world_group);
    for (int o = 0; o < size; o++)
        CHECK_RC(NARMA_Win_free(&wins[o]));
    free(wins);
    free(mems);
    return test_finish();
}
