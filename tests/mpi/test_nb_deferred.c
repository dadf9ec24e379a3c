/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Deferred epochs record their RMA calls and replay them in call order when
 * they activate (paper VI-A rule 4, VII-A):
 *  - a lock epoch opened while an access epoch toward a late target is still
 *    active stays deferred: the target sees none of its writes before it
 *    posts; afterwards successive puts to one word leave the last value, an
 *    order-sensitive accumulate chain gives the in-order result, a recorded
 *    Rput request is incomplete until replayed and a recorded Get returns the
 *    target's value;
 *  - epochs are never skipped: a lock on a third rank that is free waits for
 *    the earlier access epoch toward the late target (np >= 3);
 *  - a lock epoch whose lock another origin holds records its calls and
 *    replays them after the holder's, so its values win (np >= 3);
 *  - an epoch that activates while still open: calls recorded before and
 *    issued after activation keep their order.
 * Sequencing between ranks uses MPI messages, never timing.
 */
#include "common.h"

enum { W_FIRST = 0, W_LAST = 10, W_CHAIN = 11, W_RPUT = 12, W_GETSRC = 13, W_HOLDER = 20, WN = 32 };
enum { TAG_RECORDED = 1, TAG_GO, TAG_DONE, TAG_HELD, TAG_POSTED };

static int rank, size;
static int *base;
static NARMA_Win win;
static MPI_Group world_group;

static MPI_Group group_of(int r)
{
    MPI_Group g;
    MPI_Group_incl(world_group, 1, &r, &g);
    return g;
}

static void reset(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < WN; i++)
        base[i] = -1;
    base[W_CHAIN] = 1;
    base[W_GETSRC] = 99;
    CHECK_RC(NARMA_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Read my own window word under a shared lock (the portable way on every transport). */
static int peek(int i)
{
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, win));
    int v = base[i];
    CHECK_RC(NARMA_Win_unlock(rank, win));
    return v;
}

static void send(int to, int tag) { MPI_Send(NULL, 0, MPI_BYTE, to, tag, MPI_COMM_WORLD); }
static void recv(int from, int tag)
{
    MPI_Recv(NULL, 0, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Put 5, 6, 7 to W_LAST and accumulate +3, *5, +2, *10 onto W_CHAIN (1 -> 220). */
static const int last_vals[3] = {5, 6, 7};
static const int chain_vals[4] = {3, 5, 2, 10};
static void record_sequence(int target)
{
    for (int i = 0; i < 3; i++)
        CHECK_RC(NARMA_Put(&last_vals[i], 1, MPI_INT, target, W_LAST, 1, MPI_INT, win));
    for (int i = 0; i < 4; i++)
        CHECK_RC(NARMA_Accumulate(&chain_vals[i], 1, MPI_INT, target, W_CHAIN, 1, MPI_INT,
                                  i % 2 ? NARMA_PROD : NARMA_SUM, win));
}

static void check_sequence(const char *what)
{
    CHECK(peek(W_LAST) == 7, "%s: successive puts left %d, expected the last one (7)", what,
          peek(W_LAST));
    CHECK(peek(W_CHAIN) == 220, "%s: accumulate chain gave %d, expected ((1+3)*5+2)*10 = 220", what,
          peek(W_CHAIN));
}

static void check_untouched(const char *what)
{
    CHECK(peek(W_LAST) == -1 && peek(W_CHAIN) == 1 && peek(W_RPUT) == -1,
          "%s: a deferred epoch wrote before activation (last %d chain %d rput %d)", what,
          peek(W_LAST), peek(W_CHAIN), peek(W_RPUT));
}

/* Origin 0 opens an access epoch toward T (posting late) and closes it. */
static NARMA_Request access_to_late_target(int T)
{
    static const int first = 11;
    NARMA_Request open, close;
    MPI_Group g = group_of(T);
    CHECK_RC(NARMA_Win_istart(g, 0, win, &open));
    CHECK_RC(NARMA_Put(&first, 1, MPI_INT, T, W_FIRST, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_icomplete(win, &close));
    CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE));
    MPI_Group_free(&g);
    return close;
}

static void late_post(int O)
{
    NARMA_Request open, close;
    MPI_Group g = group_of(O);
    CHECK_RC(NARMA_Win_ipost(g, 0, win, &open));
    CHECK_RC(NARMA_Win_iwait(win, &close));
    CHECK_RC(NARMA_Wait(&close, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE));
    CHECK(peek(W_FIRST) == 11, "access epoch data missing after the exposure completed");
    MPI_Group_free(&g);
}

static void lock_behind_access(void)
{
    const int O = 0, T = 1;
    test_phase(
        "lock epoch deferred behind an access epoch to a late target: recorded, replayed in order");
    reset();
    if (rank == O) {
        NARMA_Request r_acc = access_to_late_target(T), open, r_rput, r_unlock;
        static const int rput_val = 42;
        int got = -1;
        CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_EXCLUSIVE, T, 0, win, &open));
        int flag = 0;
        CHECK_RC(NARMA_Test(&open, &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "ilock's request must be complete at creation, even for a deferred epoch");
        record_sequence(T);
        CHECK_RC(NARMA_Rput(&rput_val, 1, MPI_INT, T, W_RPUT, 1, MPI_INT, win, &r_rput));
        CHECK_RC(NARMA_Get(&got, 1, MPI_INT, T, W_GETSRC, 1, MPI_INT, win));
        CHECK_RC(NARMA_Win_iunlock(T, win, &r_unlock));
        test_expect_incomplete(&r_rput, "Rput recorded in a deferred epoch");
        test_expect_incomplete(&r_unlock, "iunlock of a deferred lock epoch");
        test_expect_incomplete(&r_acc, "icomplete toward a target that has not posted");
        CHECK(got == -1, "recorded Get wrote its result before the epoch activated");
        send(T, TAG_RECORDED);
        CHECK_RC(NARMA_Wait(&r_acc, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&r_unlock, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&r_rput, MPI_STATUS_IGNORE)); /* complete once replayed */
        CHECK(got == 99, "recorded Get returned %d, expected 99", got);
        send(T, TAG_DONE);
    } else if (rank == T) {
        recv(O, TAG_RECORDED);
        check_untouched("before the late post");
        late_post(O);
        recv(O, TAG_DONE);
        check_sequence("after the deferred lock epoch");
        CHECK(peek(W_RPUT) == 42, "recorded Rput wrote %d", peek(W_RPUT));
    }
}

static void never_skipped(void)
{
    const int O = 0, T = 1, B = 2;
    if (size < 3) return;
    test_phase("never skipped: a free lock on a third rank waits for the earlier access epoch");
    reset();
    if (rank == O) {
        NARMA_Request r_acc = access_to_late_target(T), open, r_unlock;
        CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_EXCLUSIVE, B, 0, win, &open));
        CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE));
        record_sequence(B);
        CHECK_RC(NARMA_Win_iunlock(B, win, &r_unlock));
        test_expect_incomplete(&r_unlock, "iunlock of B behind the access epoch to late T");
        send(B, TAG_RECORDED);
        NARMA_Request both[2] = {r_acc, r_unlock};
        MPI_Status st[2];
        CHECK_RC(NARMA_Waitall(2, both, st));
        send(B, TAG_DONE);
    } else if (rank == B) {
        recv(O, TAG_RECORDED);
        check_untouched("B before T posted");
        send(T, TAG_GO);
        recv(O, TAG_DONE);
        check_sequence("B after both epochs");
    } else if (rank == T) {
        recv(B, TAG_GO);
        late_post(O);
    }
}

static void lock_held_elsewhere(void)
{
    const int O = 0, T = 1, H = 2;
    if (size < 3) return;
    test_phase("lock held by another origin: calls recorded, replayed after the holder's");
    reset();
    if (rank == H) {
        static const int mine = 1000;
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, T, 0, win));
        send(O, TAG_HELD);
        recv(O, TAG_RECORDED);
        CHECK_RC(NARMA_Put(&mine, 1, MPI_INT, T, W_LAST, 1, MPI_INT, win));
        CHECK_RC(NARMA_Put(&mine, 1, MPI_INT, T, W_HOLDER, 1, MPI_INT, win));
        CHECK_RC(NARMA_Win_unlock(T, win));
    } else if (rank == O) {
        NARMA_Request open, r_unlock;
        recv(H, TAG_HELD);
        CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_EXCLUSIVE, T, 0, win, &open));
        record_sequence(T);
        CHECK_RC(NARMA_Win_iunlock(T, win, &r_unlock));
        test_expect_incomplete(&r_unlock, "iunlock while another origin holds the lock");
        send(H, TAG_RECORDED);
        CHECK_RC(NARMA_Wait(&r_unlock, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE));
        send(T, TAG_DONE);
    } else if (rank == T) {
        recv(O, TAG_DONE);
        check_sequence("after holder and recorded epoch");
        CHECK(peek(W_HOLDER) == 1000, "holder's own put lost: %d", peek(W_HOLDER));
    }
}

static void activates_while_open(void)
{
    const int O = 0, T = size - 1;
    test_phase("epoch activating while still open: recorded calls, then immediate ones, in order");
    reset();
    if (rank == O) {
        NARMA_Request r_acc = access_to_late_target(T), open, r_unlock;
        static const int v[4] = {1, 2, 3, 4};
        CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_EXCLUSIVE, T, 0, win, &open));
        CHECK_RC(NARMA_Put(&v[0], 1, MPI_INT, T, W_LAST, 1, MPI_INT, win));
        CHECK_RC(NARMA_Accumulate(&v[2], 1, MPI_INT, T, W_CHAIN, 1, MPI_INT, NARMA_SUM, win));
        send(T, TAG_GO);
        CHECK_RC(NARMA_Wait(&r_acc, MPI_STATUS_IGNORE)); /* the lock epoch may now activate */
        CHECK_RC(NARMA_Put(&v[1], 1, MPI_INT, T, W_LAST, 1, MPI_INT, win));
        CHECK_RC(NARMA_Accumulate(&v[3], 1, MPI_INT, T, W_CHAIN, 1, MPI_INT, NARMA_PROD, win));
        CHECK_RC(NARMA_Win_iunlock(T, win, &r_unlock));
        CHECK_RC(NARMA_Wait(&r_unlock, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE));
        send(T, TAG_DONE);
    } else if (rank == T) {
        recv(O, TAG_GO);
        late_post(O);
        recv(O, TAG_DONE);
        CHECK(peek(W_LAST) == 2, "put before activation overtook the one after: %d", peek(W_LAST));
        CHECK(peek(W_CHAIN) == 16, "(1+3)*4 expected, got %d", peek(W_CHAIN));
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_nb_deferred", 25);
    rank = test_rank;
    size = test_size;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    CHECK_RC(NARMA_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    for (int round = 0; round < 20; round++) {
        snprintf(test_detail, sizeof test_detail, "round %d", round);
        lock_behind_access();
        never_skipped();
        lock_held_elsewhere();
        activates_while_open();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&world_group);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
