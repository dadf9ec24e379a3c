/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 env=UCX_MEM_EVENTS=no */
/*
 * Transport per pair of ranks (pretend nodes with NARMA_NODE_SIZE):
 *  - with NARMA_NODE_SIZE=k, ranks r and s of MPI_COMM_WORLD are on one node
 *    when r / k == s / k (this machine's ranks all share memory);
 *  - a window whose ranks are all on one node uses "shm", one whose ranks are
 *    each alone on their node "mpi", anything between "shm+mpi" (Win_allocate:
 *    where the MPI library shares Win_allocate memory through
 *    MPI_Win_shared_query, else plain "mpi"; Win_create: where shm can move the
 *    pages, else "mpi" for that node's pairs);
 *    NARMA_TRANSPORT=mpi makes every window "mpi";
 *  - NARMA_Win_get_target_transport says "shm" toward a rank of this node and
 *    "mpi" toward the others (every window flavor), "invalid" for a rank
 *    outside the group or an invalid window;
 *  - nodes follow MPI_COMM_WORLD ranks, not the window's: a window over the
 *    even ranks puts 0 and 2 on different nodes when k = 2;
 *  - data moved either way arrives: a notified put from every rank to every
 *    rank of an allocate, create and dynamic window carries its payload;
 *  - a notification finds the origin's earlier accumulates to that rank done,
 *    also toward a node peer (accumulates through mpi, notifications through shm).
 */
#include "common.h"

static int node_size(void)
{
    const char *t = getenv("NARMA_TRANSPORT");
    if (t != NULL && strcmp(t, "mpi") == 0) return -1; /* every pair through mpi */
    return (int)env_long("NARMA_NODE_SIZE", 0);
}

/* What a window over the world ranks in members[0..n) should answer. */
static const char *expected(const int *members, int n, int k, int me, int target)
{
    if (k < 0) return "mpi";
    if (k == 0) return "shm";
    int same = 0, alone = 1, all = 1;
    for (int i = 0; i < n; i++) {
        all &= members[i] / k == members[0] / k;
        for (int j = 0; j < n; j++)
            if (i != j && members[i] / k == members[j] / k) alone = 0;
    }
    int mates = 0; /* ranks of the window on me's node, me included */
    for (int i = 0; me >= 0 && i < n; i++)
        mates += members[i] / k == members[me] / k;
    if (me >= 0) same = members[me] / k == members[target] / k && mates > 1;
    if (all) return "shm";
    if (alone) return "mpi";
    return me < 0 ? "shm+mpi" : same ? "shm" : "mpi";
}

/* strict: shm must serve every pair of a node; else (user memory shm may refuse) a pair may
 * also go through mpi, but never through shm across nodes. */
static void check_window(NARMA_Win win, const int *members, int n, int me, int k, int strict,
                         const char *what)
{
    /* net: what serves pairs across nodes ("ofi" with NARMA_TRANSPORT=ofi, test_net_name). */
    const char *net = test_net_name("mpi"), *got = NARMA_Win_get_transport(win);
    const char *want = test_net_name(expected(members, n, k, -1, 0));
    CHECK(strcmp(got, want) == 0 || (!strict && strcmp(got, net) == 0),
          "%s: transport '%s', want '%s'", what, got, want);
    for (int t = 0; t < n; t++) {
        got = NARMA_Win_get_target_transport(win, t);
        want = strcmp(NARMA_Win_get_transport(win), test_net_name("shm+mpi")) == 0
                   ? test_net_name(expected(members, n, k, me, t))
                   : NARMA_Win_get_transport(win);
        CHECK(strcmp(got, want) == 0 || (!strict && strcmp(got, net) == 0),
              "%s: toward %d '%s', want '%s'", what, t, got, want);
    }
    CHECK(strcmp(NARMA_Win_get_target_transport(win, n), "invalid") == 0, "%s: rank %d", what, n);
    CHECK(strcmp(NARMA_Win_get_target_transport(win, -1), "invalid") == 0, "%s: rank -1", what);
}

/* Every rank puts (rank, target) into its slot at every target, notified with tag = rank. */
static void exchange(NARMA_Win win, long long *slots, int n, int me, const char *what)
{
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(win, MPI_ANY_SOURCE, MPI_ANY_TAG, n, &req));
    CHECK_RC(NARMA_Start(&req));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < n; t++) {
        long long v = 1000LL * me + t;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_LONG_LONG, t, me, 1, MPI_LONG_LONG, win, me));
    }
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    for (int s = 0; s < n; s++)
        CHECK(slots[s] == 1000LL * s + me, "%s: slot %d holds %lld, want %lld", what, s, slots[s],
              1000LL * s + me);
    CHECK_RC(NARMA_Request_free(&req));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Across nodes a node peer's accumulates go through mpi and its notified puts through shm:
 * the notification still finds this origin's earlier accumulates done, as on one transport.
 * Slot s of every rank gets 3 * (s + 1) from rank s, then slot size + s a notified put. */
static void acc_then_notify(NARMA_Win win, long long *base, const char *what)
{
    const int rank = test_rank, size = test_size;
    for (int s = 0; s < 2 * size; s++)
        base[s] = 0;
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(win, MPI_ANY_SOURCE, 9, size, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(NARMA_Win_lock_all(0, win));
    const long long add = rank + 1, one = 1;
    for (int i = 0; i < 3; i++)
        for (int t = 0; t < size; t++)
            CHECK_RC(
                NARMA_Accumulate(&add, 1, MPI_LONG_LONG, t, rank, 1, MPI_LONG_LONG, MPI_SUM, win));
    for (int t = 0; t < size; t++)
        CHECK_RC(
            NARMA_Put_notify(&one, 1, MPI_LONG_LONG, t, size + rank, 1, MPI_LONG_LONG, win, 9));
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_sync(win));
    for (int s = 0; s < size; s++)
        CHECK(base[s] == 3LL * (s + 1) && base[size + s] == 1,
              "%s: slot %d holds %lld and %lld at the notification, want %lld and 1", what, s,
              base[s], base[size + s], 3LL * (s + 1));
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Does this MPI library share MPI_Win_allocate memory through MPI_Win_shared_query (MPI-4)?
 * narma's windows across nodes need it for Win_allocate (else they are plain mpi). */
static int mpi_shares_allocate(void)
{
    void *b, *q = NULL;
    MPI_Win mw;
    MPI_Aint qs = 0;
    int qd = 0, ok;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &mw);
    MPI_Win_set_errhandler(mw, MPI_ERRORS_RETURN);
    ok = MPI_Win_shared_query(mw, (test_rank + 1) % test_size, &qs, &qd, &q) == MPI_SUCCESS &&
         q != NULL;
    MPI_Win_free(&mw);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_node_split", 45);
    const int rank = test_rank, size = test_size, k = node_size();
    int *world = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        world[i] = i;

    test_phase("Win_allocate over MPI_COMM_WORLD");
    long long *base;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(size * (MPI_Aint)sizeof(long long), sizeof(long long),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    const int strict = mpi_shares_allocate(); /* else Win_allocate windows may be plain mpi */
    check_window(win, world, size, rank, k, strict, "allocate");
    exchange(win, base, size, rank, "allocate");
    CHECK_RC(NARMA_Win_free(&win));

    test_phase("accumulates, then a notified put, to every rank: the notification finds them");
    CHECK_RC(NARMA_Win_allocate(2 * size * (MPI_Aint)sizeof(long long), sizeof(long long),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    acc_then_notify(win, base, "allocate");
    CHECK_RC(NARMA_Win_free(&win));
    {
        long long *own = calloc(2 * (size_t)size, sizeof(long long));
        CHECK_RC(NARMA_Win_create(own, 2 * size * (MPI_Aint)sizeof(long long), sizeof(long long),
                                  MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        acc_then_notify(win, own, "create");
        CHECK_RC(NARMA_Win_free(&win));
        free(own);
    }

    test_phase("Win_create over malloc'd memory");
    long long *mem = calloc((size_t)size, sizeof(long long));
    CHECK_RC(NARMA_Win_create(mem, size * (MPI_Aint)sizeof(long long), sizeof(long long),
                              MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_window(win, world, size, rank, k, 0, "create"); /* shm may refuse user memory */
    exchange(win, mem, size, rank, "create");
    CHECK_RC(NARMA_Win_free(&win));
    free(mem);

    test_phase("dynamic window");
    mem = calloc((size_t)size, sizeof(long long));
    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(NARMA_Win_attach(win, mem, size * (MPI_Aint)sizeof(long long)));
    MPI_Aint *addr = malloc(sizeof(MPI_Aint) * (size_t)size), mine;
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    for (int t = 0; t < size; t++) {
        const char *tt = NARMA_Win_get_target_transport(win, t);
        CHECK(strcmp(tt, "shm") == 0 || strcmp(tt, "mpi") == 0, "dynamic: toward %d '%s'", t, tt);
    }
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(win, MPI_ANY_SOURCE, MPI_ANY_TAG, size, &req));
    CHECK_RC(NARMA_Start(&req));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < size; t++) {
        long long v = 1000LL * rank + t;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_LONG_LONG, t, addr[t] + rank * (MPI_Aint)sizeof v, 1,
                                  MPI_LONG_LONG, win, rank));
    }
    CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
    for (int s = 0; s < size; s++)
        CHECK(mem[s] == 1000LL * s + rank, "dynamic: slot %d holds %lld", s, mem[s]);
    CHECK_RC(NARMA_Request_free(&req));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_detach(win, mem));
    CHECK_RC(NARMA_Win_free(&win));
    free(mem);
    free(addr);

    test_phase("a window over the even (or odd) world ranks: nodes follow world ranks");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hn, hr;
    MPI_Comm_size(half, &hn);
    MPI_Comm_rank(half, &hr);
    int *members = malloc(sizeof(int) * (size_t)hn);
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, half);
    CHECK_RC(NARMA_Win_allocate(8, 8, MPI_INFO_NULL, half, &base, &win));
    check_window(win, members, hn, hr, k, strict, "half");
    CHECK_RC(NARMA_Win_free(&win));
    MPI_Comm_free(&half);
    free(members);

    test_phase("invalid window");
    CHECK(strcmp(NARMA_Win_get_target_transport(NARMA_WIN_NULL, 0), "invalid") == 0, "NULL window");
    free(world);
    return test_finish();
}
