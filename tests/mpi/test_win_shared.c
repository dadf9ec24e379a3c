/* narma-test: np=1,2,3,4 transports=shm,mpi timeout=60 */
/*
 * NARMA_Win_allocate_shared and NARMA_Win_shared_query (MPI-3/4 semantics).
 *
 * Windows from NARMA_Win_allocate_shared, on the ranks of one (pretend) node:
 *  - the memory is contiguous across ranks by default: rank r's segment starts where rank
 *    r-1's ends (where the last non-empty one before it ends, when segments of 0 bytes lie
 *    between: those have no address of their own), so one rank can fill every rank's segment
 *    through its own pointer; with info alloc_shared_noncontig=true the segments need not be
 * contiguous but never overlap;
 *  - shared_query answers every rank's size, displacement unit and address, the caller's own
 *    address being the baseptr it got; MPI_PROC_NULL answers the lowest rank whose size is not
 *    0 (size 0, NULL when every size is 0); the flavor attribute is NARMA_WIN_FLAVOR_SHARED;
 *  - stores of one rank are seen by loads of another after NARMA_Win_sync and a barrier;
 *  - the window is a narma window: Put, Get, Accumulate and notified puts to a neighbour,
 *    in fence and lock epochs, land where that neighbour's segment is; with NARMA_TRANSPORT=mpi
 *    the mpi transport serves it (NARMA_Win_get_transport), the memory still shared;
 *  - bad arguments on one rank fail the call on every rank; ranks that do not share memory
 *    (MPI_COMM_WORLD split by NARMA_NODE_SIZE into pretend nodes) are refused with
 *    NARMA_ERR_UNSUPPORTED on every rank, and nothing hangs.
 * shared_query on other windows: own memory always; a peer reached through shm
 * (NARMA_Win_get_target_transport "shm") answers with its segment, whose loads see the peer's
 * stores; any other peer is NARMA_ERR_RANK with size 0 and NULL; dynamic windows
 * NARMA_ERR_WIN; ranks outside the group NARMA_ERR_RANK; NULL outputs NARMA_ERR_ARG.
 */
#include "common.h"

static int rank, size, node_size; /* node_size: NARMA_NODE_SIZE (0: one node) */
static MPI_Comm node;             /* this rank's (pretend) node */
static int nrank, nsize;

static int val(int seed, int r, int i) { return seed * 1000003 + r * 1009 + i; }

/* Bytes of rank r's segment in the windows of the first phases: some are 0. */
static MPI_Aint bytes_of(int r) { return r % 3 == 1 ? 0 : (MPI_Aint)(r + 2) * 4 * sizeof(int); }
static int unit_of(int r) { return r % 2 ? 1 : (int)sizeof(int); }
/* Sizes of the PROC_NULL window: rank 0 and 2 have none. */
static MPI_Aint pn_bytes(int r) { return r == 0 || r == 2 ? 0 : (MPI_Aint)(r + 1) * sizeof(int); }

struct seg {
    MPI_Aint size;
    int unit;
    char *base;
};

static struct seg query(NARMA_Win win, int r)
{
    struct seg s = {-1, -1, (char *)(uintptr_t)1};
    CHECK_RC(NARMA_Win_shared_query(win, r, &s.size, &s.unit, &s.base));
    return s;
}

static int is_mpi_transport(void) { return strcmp(env_str("NARMA_TRANSPORT", ""), "mpi") == 0; }

/* A window over the node's ranks, bytes_of(nrank) each; checks what every one answers. */
static NARMA_Win shared_window(MPI_Info info, char **mine, struct seg *segs)
{
    NARMA_Win win = NARMA_WIN_NULL;
    *mine = (char *)(uintptr_t)1;
    CHECK_RC(NARMA_Win_allocate_shared(bytes_of(nrank), unit_of(nrank), info, node, mine, &win));
    CHECK(win != NARMA_WIN_NULL, "no window");
    const char *want = is_mpi_transport() ? "mpi" : "shm";
    CHECK(strcmp(NARMA_Win_get_transport(win), want) == 0, "transport %s, expected %s",
          NARMA_Win_get_transport(win), want);
    int *flavor = NULL, flag = 0;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == NARMA_WIN_FLAVOR_SHARED, "flavor %d", flag ? *flavor : -1);
    MPI_Aint *sz = NULL;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == bytes_of(nrank), "size attribute %ld", flag ? (long)*sz : -1L);
    for (int r = 0; r < nsize; r++) {
        snprintf(test_detail, sizeof test_detail, "rank %d asked for node rank %d", nrank, r);
        segs[r] = query(win, r);
        CHECK(segs[r].size == bytes_of(r) && segs[r].unit == unit_of(r),
              "size %ld unit %d, expected %ld %d", (long)segs[r].size, segs[r].unit,
              (long)bytes_of(r), unit_of(r));
        CHECK(segs[r].size == 0 || segs[r].base != NULL, "NULL base for %ld bytes",
              (long)segs[r].size);
    }
    CHECK(segs[nrank].base == *mine, "own segment at %p, baseptr %p", (void *)segs[nrank].base,
          (void *)*mine);
    return win;
}

/* Stores of every rank seen by every other's loads, after Win_sync and a barrier. */
static void check_load_store(NARMA_Win win, const struct seg *segs, int seed)
{
    CHECK_RC(NARMA_Win_lock_all(0, win));
    int *me = (int *)segs[nrank].base;
    for (int i = 0; i < (int)(segs[nrank].size / sizeof(int)); i++)
        me[i] = val(seed, nrank, i);
    CHECK_RC(NARMA_Win_sync(win));
    CHECK_MPI(MPI_Barrier(node));
    CHECK_RC(NARMA_Win_sync(win));
    for (int r = 0; r < nsize; r++)
        for (int i = 0; i < (int)(segs[r].size / sizeof(int)); i++) {
            int v = ((const int *)segs[r].base)[i];
            CHECK(v == val(seed, r, i), "rank %d element %d is %d, expected %d", r, i, v,
                  val(seed, r, i));
        }
    CHECK_MPI(MPI_Barrier(node));
    CHECK_RC(NARMA_Win_unlock_all(win));
}

static void contiguous(void)
{
    test_phase("allocate_shared: contiguous segments, every rank's answer, PROC_NULL");
    char *mine;
    struct seg *segs = calloc((size_t)nsize, sizeof *segs);
    NARMA_Win win = shared_window(MPI_INFO_NULL, &mine, segs);
    /* A segment of 0 bytes has no address of its own (MPICH answers NULL): each segment that
     * has bytes starts where the last one before it ends. */
    for (int r = 1, prev = 0; r < nsize; r++) {
        if (segs[r].size == 0) continue;
        CHECK(segs[r].base == segs[prev].base + segs[prev].size,
              "rank %d's segment at %p, rank %d's ends at %p", r, (void *)segs[r].base, prev,
              (void *)(segs[prev].base + segs[prev].size));
        prev = r;
    }
    int lowest = -1;
    for (int r = 0; r < nsize && lowest < 0; r++)
        if (bytes_of(r) > 0) lowest = r;
    struct seg p = query(win, MPI_PROC_NULL);
    CHECK(p.base == segs[lowest].base && p.size == segs[lowest].size && p.unit == segs[lowest].unit,
          "PROC_NULL: %p %ld %d, rank %d: %p %ld %d", (void *)p.base, (long)p.size, p.unit, lowest,
          (void *)segs[lowest].base, (long)segs[lowest].size, segs[lowest].unit);

    test_phase("allocate_shared: stores seen by the other ranks' loads");
    check_load_store(win, segs, 1);

    test_phase("allocate_shared: one rank fills every segment through its own pointer");
    MPI_Aint total = 0;
    for (int r = 0; r < nsize; r++)
        total += segs[r].size;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    if (nrank == nsize - 1) /* the last rank, whose own segment is at the end */
        for (MPI_Aint i = 0; i < total / (MPI_Aint)sizeof(int); i++)
            ((int *)(void *)segs[0].base)[i] = val(2, 0, (int)i);
    CHECK_RC(NARMA_Win_sync(win));
    CHECK_MPI(MPI_Barrier(node));
    CHECK_RC(NARMA_Win_sync(win));
    MPI_Aint before = segs[nrank].base - segs[0].base;
    for (int i = 0; i < (int)(segs[nrank].size / sizeof(int)); i++) {
        int want = val(2, 0, (int)(before / (MPI_Aint)sizeof(int)) + i);
        CHECK(((int *)(void *)mine)[i] == want, "element %d is %d, expected %d", i,
              ((int *)(void *)mine)[i], want);
    }
    CHECK_MPI(MPI_Barrier(node));
    CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Win_free(&win));
    CHECK(win == NARMA_WIN_NULL, "handle not cleared");

    test_phase("allocate_shared: PROC_NULL when every size but a few is 0, or all are");
    char *b;
    CHECK_RC(
        NARMA_Win_allocate_shared(pn_bytes(nrank), sizeof(int), MPI_INFO_NULL, node, &b, &win));
    lowest = -1;
    for (int r = 0; r < nsize && lowest < 0; r++)
        if (pn_bytes(r) > 0) lowest = r;
    p = query(win, MPI_PROC_NULL);
    if (lowest < 0) {
        CHECK(p.size == 0 && p.base == NULL, "every size 0: PROC_NULL gave %ld bytes at %p",
              (long)p.size, (void *)p.base);
    } else {
        struct seg l = query(win, lowest);
        CHECK(p.size == pn_bytes(lowest) && p.base == l.base && p.base != NULL,
              "PROC_NULL: %ld bytes at %p, rank %d has %ld at %p", (long)p.size, (void *)p.base,
              lowest, (long)pn_bytes(lowest), (void *)l.base);
    }
    CHECK_RC(NARMA_Win_free(&win));
    free(segs);
}

static void noncontig(void)
{
    test_phase("allocate_shared with alloc_shared_noncontig=true: disjoint segments");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    char *mine;
    struct seg *segs = calloc((size_t)nsize, sizeof *segs);
    NARMA_Win win = shared_window(info, &mine, segs);
    MPI_Info_free(&info);
    for (int a = 0; a < nsize; a++)
        for (int c = a + 1; c < nsize; c++)
            if (segs[a].size > 0 && segs[c].size > 0)
                CHECK(segs[a].base + segs[a].size <= segs[c].base ||
                          segs[c].base + segs[c].size <= segs[a].base,
                      "segments of %d and %d overlap", a, c);
    check_load_store(win, segs, 3);
    CHECK_RC(NARMA_Win_free(&win));
    free(segs);
}

/* Put, Get, Accumulate and a notified put to the next rank of the node, each landing where
 * shared_query says that rank's segment is. */
static void rma(void)
{
    test_phase("allocate_shared: RMA and notified puts land in the target's segment");
    const int n = 4;
    char *mine;
    struct seg *segs = calloc((size_t)nsize, sizeof *segs);
    /* Every rank has memory here: n ints, displacement unit 1 or sizeof(int). */
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate_shared(n * sizeof(int), unit_of(nrank), MPI_INFO_NULL, node, &mine,
                                       &win));
    for (int r = 0; r < nsize; r++)
        segs[r] = query(win, r);
    int right = (nrank + 1) % nsize, left = (nrank + nsize - 1) % nsize;
    int *my = (int *)(void *)mine;
    int src[4], got[4];
    for (int i = 0; i < n; i++) {
        src[i] = val(4, nrank, i);
        my[i] = -1;
    }
    /* Element 2 of the target, whatever its displacement unit. */
    MPI_Aint d2 = 2 * (MPI_Aint)sizeof(int) / unit_of(right);
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(src, 2, MPI_INT, right, 0, 2, MPI_INT, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int i = 0; i < 2; i++)
        CHECK(my[i] == val(4, left, i), "put: element %d is %d, expected %d", i, my[i],
              val(4, left, i));
    CHECK_RC(NARMA_Get(got, 2, MPI_INT, right, 0, 2, MPI_INT, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    for (int i = 0; i < 2; i++)
        CHECK(got[i] == ((int *)(void *)segs[right].base)[i] && got[i] == val(4, nrank, i),
              "get: element %d is %d", i, got[i]);

    test_phase("allocate_shared: accumulate in a lock epoch, seen by the target's loads");
    my[2] = 0;
    CHECK_MPI(MPI_Barrier(node));
    int one = nrank + 1;
    for (int t = 0; t < nsize; t++) {
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, t, 0, win));
        CHECK_RC(NARMA_Accumulate(&one, 1, MPI_INT, t, 2 * (MPI_Aint)sizeof(int) / unit_of(t), 1,
                                  MPI_INT, NARMA_SUM, win));
        CHECK_RC(NARMA_Win_unlock(t, win));
    }
    CHECK_MPI(MPI_Barrier(node));
    CHECK_RC(NARMA_Win_sync(win));
    CHECK(my[2] == nsize * (nsize + 1) / 2, "accumulated %d, expected %d", my[2],
          nsize * (nsize + 1) / 2);

    test_phase("allocate_shared: notified put to the right, matched by the target");
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(win, left, 7, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_MPI(MPI_Barrier(node));
    int x = val(5, nrank, 0);
    CHECK_RC(NARMA_Put_notify(&x, 1, MPI_INT, right, d2 + (MPI_Aint)sizeof(int) / unit_of(right), 1,
                              MPI_INT, win, 7));
    MPI_Status st;
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "status %d %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(my[3] == val(5, left, 0), "notified put: %d, expected %d", my[3], val(5, left, 0));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK_MPI(MPI_Barrier(node));
    CHECK_RC(NARMA_Win_free(&win));
    free(segs);
}

static void refusals(void)
{
    test_phase("allocate_shared: a bad argument on one rank fails it on every rank");
    char *b = NULL;
    /* A failed creation leaves NARMA_WIN_NULL, whatever the handle held: a program that frees
     * it anyway (MPICH's win_zero does, under pretend nodes) gets NARMA_ERR_WIN, not a crash. */
    const NARMA_Win garbage = (NARMA_Win)(uintptr_t)0x1a1a1a1a1a1a1a1aULL;
    NARMA_Win win = garbage;
    int rc =
        NARMA_Win_allocate_shared(nrank == nsize - 1 ? -8 : 8, 1, MPI_INFO_NULL, node, &b, &win);
    CHECK(rc == NARMA_ERR_ARG && win == NARMA_WIN_NULL, "negative size somewhere: %d (%s)", rc,
          NARMA_Strerror(rc));
    CHECK_ERR(NARMA_Win_free(&win), NARMA_ERR_WIN);
    rc = NARMA_Win_allocate_shared(8, nrank == 0 ? 0 : 1, MPI_INFO_NULL, node, &b, &win);
    CHECK(rc == NARMA_ERR_ARG, "disp_unit 0 somewhere: %d", rc);
    rc = NARMA_Win_allocate_shared(8, 1, MPI_INFO_NULL, node, nrank == 0 ? NULL : &b, &win);
    CHECK(rc == NARMA_ERR_ARG, "NULL baseptr somewhere: %d", rc);
    CHECK_ERR(NARMA_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_NULL, &b, &win),
              NARMA_ERR_ARG);

    test_phase("allocate_shared: ranks that do not share memory are refused on every rank");
    int nodes = node_size > 0 ? (size + node_size - 1) / node_size : 1;
    win = garbage;
    rc = NARMA_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &win);
    if (nodes > 1) {
        CHECK(rc == NARMA_ERR_UNSUPPORTED && win == NARMA_WIN_NULL,
              "%d pretend nodes: returned %d (%s)", nodes, rc, NARMA_Strerror(rc));
        CHECK_ERR(NARMA_Win_free(&win), NARMA_ERR_WIN);
        /* The first and last ranks alone: on different pretend nodes too. */
        MPI_Comm ends;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || rank == size - 1 ? 0 : MPI_UNDEFINED,
                                 rank, &ends));
        if (ends != MPI_COMM_NULL) {
            CHECK_ERR(NARMA_Win_allocate_shared(64, 1, MPI_INFO_NULL, ends, &b, &win),
                      NARMA_ERR_UNSUPPORTED);
            MPI_Comm_free(&ends);
        }
    } else {
        CHECK(rc == NARMA_SUCCESS, "one node: returned %d (%s)", rc, NARMA_Strerror(rc));
        CHECK_RC(NARMA_Win_free(&win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* nobody left behind in a collective */
}

/* shared_query on a Win_allocate or Win_create window over MPI_COMM_WORLD: rank t exposes
 * bytes(t), element i holding val(6, t, i). */
static void query_other(NARMA_Win win, MPI_Aint (*bytes)(int), char *mine, const char *what)
{
    test_phase(what);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Win_sync(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(NARMA_Win_sync(win));
    for (int t = 0; t < size; t++) {
        snprintf(test_detail, sizeof test_detail, "rank %d asked for rank %d (%s)", rank, t,
                 NARMA_Win_get_target_transport(win, t));
        struct seg s = {-1, -1, (char *)(uintptr_t)1};
        int rc = NARMA_Win_shared_query(win, t, &s.size, &s.unit, &s.base);
        int shared = t == rank || strcmp(NARMA_Win_get_target_transport(win, t), "shm") == 0;
        if (!shared) {
            CHECK(rc == NARMA_ERR_RANK && s.size == 0 && s.base == NULL,
                  "not shared: returned %d (%s), %ld bytes at %p", rc, NARMA_Strerror(rc),
                  (long)s.size, (void *)s.base);
            continue;
        }
        CHECK(rc == NARMA_SUCCESS && s.size == bytes(t) && s.unit == (int)sizeof(int),
              "returned %d (%s), %ld bytes unit %d", rc, NARMA_Strerror(rc), (long)s.size, s.unit);
        if (t == rank)
            CHECK(s.base == mine, "own memory at %p, got %p", (void *)mine, (void *)s.base);
        for (int i = 0; i < (int)(s.size / sizeof(int)); i++)
            CHECK(((int *)(void *)s.base)[i] == val(6, t, i), "element %d is %d, expected %d", i,
                  ((int *)(void *)s.base)[i], val(6, t, i));
    }
    /* PROC_NULL: the lowest rank with memory, by the same rule. */
    int lowest = -1;
    for (int t = 0; t < size && lowest < 0; t++)
        if (bytes(t) > 0) lowest = t;
    snprintf(test_detail, sizeof test_detail, "PROC_NULL, lowest %d", lowest);
    struct seg s;
    int rc = NARMA_Win_shared_query(win, MPI_PROC_NULL, &s.size, &s.unit, &s.base);
    if (lowest < 0)
        CHECK(rc == NARMA_SUCCESS && s.size == 0 && s.base == NULL, "returned %d", rc);
    else if (lowest == rank || strcmp(NARMA_Win_get_target_transport(win, lowest), "shm") == 0)
        CHECK(rc == NARMA_SUCCESS && s.size == bytes(lowest) &&
                  ((int *)(void *)s.base)[0] == val(6, lowest, 0),
              "returned %d, %ld bytes", rc, (long)s.size);
    else
        CHECK(rc == NARMA_ERR_RANK && s.size == 0 && s.base == NULL, "returned %d", rc);

    test_detail[0] = 0;
    CHECK_ERR(NARMA_Win_shared_query(win, size, &s.size, &s.unit, &s.base), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Win_shared_query(win, -7, &s.size, &s.unit, &s.base), NARMA_ERR_RANK);
    CHECK_ERR(NARMA_Win_shared_query(win, 0, NULL, &s.unit, &s.base), NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Win_shared_query(win, 0, &s.size, NULL, &s.base), NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Win_shared_query(win, 0, &s.size, &s.unit, NULL), NARMA_ERR_ARG);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(NARMA_Win_unlock_all(win));
}

static MPI_Aint world_bytes(int t) { return t == 0 && size > 1 ? 0 : (t + 1) * 3 * sizeof(int); }

static void other_flavors(void)
{
    char *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(world_bytes(rank), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                &win));
    for (int i = 0; i < (int)(world_bytes(rank) / sizeof(int)); i++)
        ((int *)(void *)mem)[i] = val(6, rank, i);
    query_other(win, world_bytes, mem, "shared_query on a Win_allocate window");
    CHECK_RC(NARMA_Win_free(&win));

    int *cm = malloc((size_t)world_bytes(rank) + sizeof(int));
    for (int i = 0; i < (int)(world_bytes(rank) / sizeof(int)); i++)
        cm[i] = val(6, rank, i);
    CHECK_RC(
        NARMA_Win_create(cm, world_bytes(rank), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    query_other(win, world_bytes, (char *)cm, "shared_query on a Win_create window");
    CHECK_RC(NARMA_Win_free(&win));
    free(cm);

    test_phase("shared_query on a dynamic window, on no window");
    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    struct seg s;
    CHECK_ERR(NARMA_Win_shared_query(win, rank, &s.size, &s.unit, &s.base), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_shared_query(win, MPI_PROC_NULL, &s.size, &s.unit, &s.base), NARMA_ERR_WIN);
    CHECK_RC(NARMA_Win_free(&win));
    CHECK_ERR(NARMA_Win_shared_query(NARMA_WIN_NULL, 0, &s.size, &s.unit, &s.base), NARMA_ERR_WIN);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_win_shared", 50);
    rank = test_rank;
    size = test_size;
    node_size = (int)env_long("NARMA_NODE_SIZE", 0);
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, node_size > 0 ? rank / node_size : 0, rank, &node));
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);

    contiguous();
    noncontig();
    rma();
    refusals();
    other_flavors();

    MPI_Comm_free(&node);
    return test_finish();
}
