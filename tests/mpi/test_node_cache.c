/* narma-test: np=2,3,4 transports=shm,mpi timeout=120 */
/*
 * The node communicator a window is built on is made once per communicator the program passes
 * and kept with it (narmat_node_get), referenced by every window built on it. This test breaks
 * what that shortcut could get wrong:
 *   - a communicator freed while windows built on it live on (they keep its node communicator);
 *   - communicators freed and made again with other groups, whose handles MPI reuses (a cache
 *     keyed on the handle would hand a new communicator the old one's node);
 *   - windows of several communicators alive at once, and a duplicate of a communicator that
 *     carries the cached entry (the entry must not be copied);
 *   - Win_allocate_shared, whose verdict (all ranks on one node or not) comes from that node
 *     communicator, on communicators that do and do not share a node.
 * Every window carries notified puts around its ranks, checked.
 */
#include "common.h"

#include <stdlib.h>

/* Whether every rank of comm is on this process's node: with NARMA_NODE_SIZE=k, node number
 * world_rank / k; otherwise (all test ranks run on one machine) yes. */
static int all_on_one_node(MPI_Comm comm)
{
    long k = env_long("NARMA_NODE_SIZE", 0);
    int world = test_rank, node = k > 0 ? (int)(world / k) : 0, lo = 0, hi = 0;
    CHECK_MPI(MPI_Allreduce(&node, &lo, 1, MPI_INT, MPI_MIN, comm));
    CHECK_MPI(MPI_Allreduce(&node, &hi, 1, MPI_INT, MPI_MAX, comm));
    return lo == hi;
}

#define WORDS 128 /* per window: every call of ring writes a word of its own (stamp) */

/* One notified put to the right neighbour among the window's n ranks (r is this one), into word
 * stamp, and the left one's checked. */
static void ring(NARMA_Win win, long long *base, int r, int n, long long stamp)
{
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(win, left, 3, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    long long v = stamp * 100 + r;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_LONG_LONG, right, stamp, 1, MPI_LONG_LONG, win, 3));
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK(base[stamp] == stamp * 100 + left, "got %lld, want %lld", base[stamp],
          stamp * 100 + left);
}

static void alloc(MPI_Comm comm, NARMA_Win *win, long long **base)
{
    CHECK_RC(NARMA_Win_allocate(WORDS * sizeof(long long), sizeof(long long), MPI_INFO_NULL, comm,
                                base, win));
    for (int i = 0; i < WORDS; i++)
        (*base)[i] = -1;
    CHECK_MPI(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_node_cache", 110);
    NARMA_Win w1, w2, w3;
    long long *b1, *b2, *b3;

    test_phase("the communicator freed under its windows");
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    alloc(c, &w1, &b1);
    alloc(c, &w2, &b2);
    CHECK_MPI(MPI_Comm_free(&c));
    ring(w1, b1, test_rank, test_size, 1);
    CHECK_RC(NARMA_Win_free(&w1));
    ring(w2, b2, test_rank, test_size, 2);
    CHECK_RC(NARMA_Win_free(&w2));

    test_phase("communicators of other groups, made and freed in turn");
    for (int i = 0; i < 12; i++) {
        snprintf(test_detail, sizeof test_detail, "round %d", i);
        /* Round 0 mod 3: everyone; 1: halves (ranks 0-1, 2-3: a pretend node at
         * NARMA_NODE_SIZE=2); 2: ranks in reverse order. */
        int color = i % 3 == 1 ? test_rank / 2 : 0;
        int key = i % 3 == 2 ? test_size - test_rank : test_rank;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, key, &c));
        int r, n;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        alloc(c, &w1, &b1);
        ring(w1, b1, r, n, 10 + i);
        int shared = all_on_one_node(c);
        long long *sb = NULL;
        int rc = NARMA_Win_allocate_shared(WORDS * sizeof(long long), sizeof(long long),
                                           MPI_INFO_NULL, c, &sb, &w2);
        CHECK(rc == (shared ? NARMA_SUCCESS : NARMA_ERR_UNSUPPORTED),
              "Win_allocate_shared on ranks %s one node: %s", shared ? "of" : "not all on",
              NARMA_Strerror(rc));
        if (rc == NARMA_SUCCESS) {
            for (int j = 0; j < WORDS; j++)
                sb[j] = -1;
            CHECK_MPI(MPI_Barrier(c));
            ring(w2, sb, r, n, 30 + i);
            CHECK_RC(NARMA_Win_free(&w2));
        }
        ring(w1, b1, r, n, 50 + i);
        CHECK_RC(NARMA_Win_free(&w1));
        CHECK_MPI(MPI_Comm_free(&c));
    }

    test_phase("windows of three communicators at once, one a duplicate of another");
    MPI_Comm half, dup;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, test_rank % 2, test_rank, &half));
    alloc(MPI_COMM_WORLD, &w1, &b1);
    alloc(half, &w2, &b2);
    CHECK_MPI(MPI_Comm_dup(half, &dup));
    alloc(dup, &w3, &b3);
    int hr, hn;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hn);
    CHECK_MPI(MPI_Comm_free(&half));
    for (int i = 0; i < 3; i++) {
        snprintf(test_detail, sizeof test_detail, "round %d", i);
        ring(w3, b3, hr, hn, 70 + i);
        ring(w1, b1, test_rank, test_size, 80 + i);
        ring(w2, b2, hr, hn, 90 + i);
    }
    CHECK_RC(NARMA_Win_free(&w2));
    CHECK_RC(NARMA_Win_free(&w1));
    CHECK_MPI(MPI_Comm_free(&dup));
    ring(w3, b3, hr, hn, 99);
    alloc(MPI_COMM_WORLD, &w1, &b1); /* WORLD's entry outlived the others */
    ring(w1, b1, test_rank, test_size, 100);
    CHECK_RC(NARMA_Win_free(&w1));
    CHECK_RC(NARMA_Win_free(&w3));
    return test_finish();
}
