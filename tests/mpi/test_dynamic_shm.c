/* narma-test: np=2,3,4 transports=shm,mpi timeout=120 env=UCX_MEM_EVENTS=no */
/*
 * Dynamic windows among ranks of one node use shm: attached pages move onto a
 * shared object of the process (counted per page) and peers reach them by
 * load/store; memory that cannot move is reached through the kernel. Each
 * rank is the target of its left neighbour. Checked here, with every access
 * kind and the values in the target's memory:
 *   - two regions in one page (the page moves once; it is shared while either
 *     holds it), a Win_create window over that page afterwards (mpi), and a
 *     region in a page a Win_create window shares (reached through the kernel,
 *     also after that window is freed);
 *   - a region over a moved page and pages not moved yet; the bytes beside
 *     every region keep their values, pages are private again once no region
 *     holds them (/proc/self/maps);
 *   - attach, detach and re-attach of the same memory, 20 rounds, peers
 *     accessing it in between (refused while detached);
 *   - a stack region, and accumulates from every rank into one counter in a
 *     stack region and one in a moved region (element-wise atomic);
 *   - 400 small malloc'd regions, freed by the program after detach;
 *   - a linked list whose nodes are attached: the program's own pointers work
 *     during and after, also after Win_free with regions still attached;
 *   - memory detached and freed: peers' accesses are refused (NARMA_ERR_DISP);
 *   - a rank unable to read its peers (test hook stage 6) or NARMA_SHM_CREATE=0:
 *     every rank creates the window on mpi.
 */
#include "common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG   4
#define MANY  400
#define ROUND 20

static int rank, size, right, left, want_shm;
static NARMA_Win win;

/* My right neighbour's address of its copy of p. */
static MPI_Aint right_addr(const void *p)
{
    MPI_Aint mine, r = 0;
    CHECK_MPI(MPI_Get_address(p, &mine));
    CHECK_MPI(MPI_Sendrecv(&mine, 1, MPI_AINT, left, 7, &r, 1, MPI_AINT, right, 7, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    return r;
}

/* Every access kind from each rank to n long longs at its right neighbour's
 * mem (attached there); mem ends up holding 2 * (1000 * left + i), except the
 * last element, which a notified put sets to -left. */
static void exercise(long long *mem, int n, const char *what)
{
    snprintf(test_detail, sizeof test_detail, "%s", what);
    const MPI_Aint t = right_addr(mem);
    long long *v = malloc((size_t)n * sizeof *v), *g = malloc((size_t)n * sizeof *g);
    for (int i = 0; i < n; i++) {
        mem[i] = -1;
        v[i] = 1000 * rank + i;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(v, n, MPI_LONG_LONG, right, t, n, MPI_LONG_LONG, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK_RC(NARMA_Get(g, n, MPI_LONG_LONG, right, t, n, MPI_LONG_LONG, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    for (int i = 0; i < n; i++)
        CHECK(g[i] == v[i], "get %d: %lld, expected %lld", i, g[i], v[i]);
    CHECK_RC(NARMA_Accumulate(v, n, MPI_LONG_LONG, right, t, n, MPI_LONG_LONG, MPI_SUM, win));
    long long one = 0, old = -5, minus = -rank;
    CHECK_RC(NARMA_Fetch_and_op(&one, &old, MPI_LONG_LONG, right, t, MPI_SUM, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK(old == 2 * v[0], "fetch_and_op read %lld, expected %lld", old, 2 * v[0]);
    CHECK_RC(NARMA_Put_notify(&minus, 1, MPI_LONG_LONG, right, t + (MPI_Aint)(n - 1) * 8, 1,
                              MPI_LONG_LONG, win, TAG));
    CHECK_RC(NARMA_Win_unlock_all(win));
    NARMA_Request r;
    CHECK_RC(NARMA_Notify_init(win, left, TAG, 1, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&r));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_sync(win));
    for (int i = 0; i < n; i++) {
        long long w = i == n - 1 ? -left : 2 * (1000 * left + i);
        CHECK(mem[i] == w, "element %d of %d is %lld, expected %lld", i, n, mem[i], w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(v);
    free(g);
}

/* A put of one long long to my right neighbour's p must return expect. */
static void put_one(const void *p, int expect, const char *what)
{
    snprintf(test_detail, sizeof test_detail, "%s", what);
    const MPI_Aint t = right_addr(p);
    long long v = 77;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_ERR(NARMA_Put(&v, 1, MPI_LONG_LONG, right, t, 1, MPI_LONG_LONG, win), expect);
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The bytes of blk outside [skip_lo, skip_hi) still hold their pattern. */
static void check_pattern(const char *blk, size_t len, size_t skip_lo, size_t skip_hi,
                          const char *what)
{
    for (size_t i = 0; i < len; i++) {
        if (i >= skip_lo && i < skip_hi) continue;
        if (blk[i] != (char)(i * 7 + rank)) {
            CHECK(0, "%s: byte %zu beside the regions changed", what, i);
            return;
        }
    }
}

/* Every rank adds 1, 300 times, to rank 0's counter at *c. */
static void count_up(long long *c, const char *what)
{
    snprintf(test_detail, sizeof test_detail, "%s", what);
    MPI_Aint a;
    CHECK_MPI(MPI_Get_address(c, &a));
    CHECK_MPI(MPI_Bcast(&a, 1, MPI_AINT, 0, MPI_COMM_WORLD));
    *c = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    long long one = 1, old;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int k = 0; k < 300; k++) {
        if (k % 2)
            CHECK_RC(
                NARMA_Accumulate(&one, 1, MPI_LONG_LONG, 0, a, 1, MPI_LONG_LONG, MPI_SUM, win));
        else
            CHECK_RC(NARMA_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, a, MPI_SUM, win));
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK(*c == 300LL * size, "counter %lld, expected %lld", *c, 300LL * size);
}

struct node {
    struct node *next;
    long long val;
};

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_dynamic_shm", 110);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    const char *tr = getenv("NARMA_TRANSPORT"), *ns = getenv("NARMA_NODE_SIZE");
    /* Pretend nodes (NARMA_NODE_SIZE=k: world ranks r / k): pages move where a node has more
     * than one rank; the window is "shm" on one node, "mpi" with every rank alone, else
     * "shm+mpi". */
    const int nk = ns != NULL ? atoi(ns) : 0, forced_mpi = tr && strcmp(tr, "mpi") == 0;
    int mates = 0, one_node = 1, all_alone = 1;
    for (int p = 0; p < size; p++) {
        int node = nk > 0 ? p / nk : 0, pmates = 0;
        mates += node == (nk > 0 ? rank / nk : 0);
        one_node &= node == 0;
        for (int q = 0; q < size; q++)
            pmates += node == (nk > 0 ? q / nk : 0);
        all_alone &= pmates == 1;
    }
    want_shm = !forced_mpi && mates > 1;
    const int my_node = nk > 0 ? rank / nk : 0;
    const char *want_tr = forced_mpi || all_alone ? "mpi" : one_node ? "shm" : "shm+mpi";
    const size_t ps = 4096;

    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    const char *t = NARMA_Win_get_transport(win);
    CHECK(strcmp(t, want_tr) == 0, "transport %s, expected %s", t, want_tr);

    test_phase("two regions in one page, then a Win_create window over it");
    char *blk = NULL;
    CHECK(posix_memalign((void **)&blk, ps, 4 * ps) == 0, "posix_memalign");
    for (size_t i = 0; i < 4 * ps; i++)
        blk[i] = (char)(i * 7 + rank);
    long long *r1 = (long long *)(blk + ps + 8), *r2 = (long long *)(blk + ps + 128);
    CHECK_RC(NARMA_Win_attach(win, r1, 4 * 8));
    CHECK_RC(NARMA_Win_attach(win, r2, 8 * 8));
    if (want_shm) CHECK(test_map_kind(r1) == 's', "the regions' page is not shared");
    CHECK(test_map_kind(blk) == 'p' && test_map_kind(blk + 2 * ps) == 'p', "pages beside moved");
    exercise(r1, 4, "r1");
    exercise(r2, 8, "r2");
    check_pattern(blk + ps, ps, 8, 128 + 64, "r1, r2");
    NARMA_Win cw;
    int *cmem = (int *)(blk + ps + 512);
    CHECK_RC(NARMA_Win_create(cmem, 16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &cw));
    int x = 100 + rank, y = -1;
    CHECK_RC(NARMA_Win_lock_all(0, cw));
    CHECK_RC(NARMA_Put(&x, 1, MPI_INT, right, 2, 1, MPI_INT, cw));
    CHECK_RC(NARMA_Win_unlock_all(cw));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(cmem[2] == 100 + left, "Win_create window over moved pages: %d", cmem[2]);
    CHECK_RC(NARMA_Win_free(&cw));
    exercise(r2, 8, "r2 after the Win_create window");
    CHECK(cmem[2] == 100 + left, "Win_create memory after its window: %d", cmem[2]);

    test_phase("a region in a page a Win_create window shares");
    char *blk2 = NULL;
    CHECK(posix_memalign((void **)&blk2, ps, 2 * ps) == 0, "posix_memalign");
    CHECK_RC(NARMA_Win_create(blk2 + 512, 64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &cw));
    long long *r3 = (long long *)(blk2 + 16);
    CHECK_RC(NARMA_Win_attach(win, r3, 6 * 8));
    exercise(r3, 6, "r3 beside a Win_create window");
    count_up(r3, "counter beside a Win_create window");
    CHECK_RC(NARMA_Win_free(&cw));
    exercise(r3, 6, "r3 after the Win_create window was freed");
    CHECK_RC(NARMA_Win_detach(win, r3));
    free(blk2);

    test_phase("a region over a moved page and pages not moved yet");
    long long *r4 = (long long *)(blk + ps + 1024);
    const int n4 = (int)((2 * ps) / 8);
    CHECK_RC(NARMA_Win_attach(win, r4, (MPI_Aint)n4 * 8));
    if (want_shm) CHECK(test_map_kind(blk + 3 * ps) == 's', "the region's last page is not shared");
    exercise(r4, n4, "r4");
    count_up(r4 + 3, "counter in moved pages");
    CHECK_RC(NARMA_Win_detach(win, r1));
    CHECK_RC(NARMA_Win_detach(win, r2));
    if (want_shm) CHECK(test_map_kind(r1) == 's', "the page r4 still holds went back");
    put_one(r2, NARMA_ERR_DISP, "r2 detached");
    CHECK_RC(NARMA_Win_detach(win, r4));
    for (int p = 0; p < 4; p++)
        CHECK(test_map_kind(blk + p * ps) == 'p', "page %d not private after detach", p);
    for (int i = 0; i < 8; i++)
        CHECK(r2[i] == (i == 7 ? -left : 2 * (1000 * left + i)), "r2 after detach: %d", i);
    CHECK(r4[3] == 300LL * size || rank != 0, "r4 counter after detach");
    check_pattern(blk, ps + 8, 0, 0, "page 0");

    test_phase("attach, detach, re-attach while peers access");
    long long *rr = malloc(64 * 8);
    for (int k = 0; k < ROUND; k++) {
        const int n = 4 + (k % 3) * 20;
        CHECK_RC(NARMA_Win_attach(win, rr, (MPI_Aint)n * 8));
        exercise(rr, n, "re-attached");
        CHECK_RC(NARMA_Win_detach(win, rr));
        put_one(rr, NARMA_ERR_DISP, "detached between rounds");
        CHECK(rr[0] == 2 * 1000 * left, "content after detach, round %d: %lld", k, rr[0]);
    }
    free(rr);

    test_phase("a stack region");
    long long stk[24];
    CHECK_RC(NARMA_Win_attach(win, stk, sizeof stk));
    CHECK(test_map_kind(stk) == 'p', "stack pages moved");
    exercise(stk, 24, "stack region");
    count_up(&stk[5], "counter on the stack");
    CHECK_RC(NARMA_Win_detach(win, stk));

    test_phase("many small regions, freed after detach");
    long long *small[MANY];
    for (int k = 0; k < MANY; k++) {
        small[k] = malloc(3 * 8);
        small[k][0] = small[k][1] = small[k][2] = -1;
        CHECK_RC(NARMA_Win_attach(win, small[k], 3 * 8));
    }
    MPI_Aint *ta = malloc(MANY * sizeof *ta);
    for (int k = 0; k < MANY; k++)
        ta[k] = right_addr(small[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int k = 0; k < MANY; k++) {
        long long v[2] = {k, rank};
        CHECK_RC(NARMA_Put(v, 2, MPI_LONG_LONG, right, ta[k] + 8, 2, MPI_LONG_LONG, win));
    }
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < MANY; k++) {
        CHECK(small[k][0] == -1 && small[k][1] == k && small[k][2] == left,
              "small region %d: %lld %lld %lld", k, small[k][0], small[k][1], small[k][2]);
        CHECK_RC(NARMA_Win_detach(win, small[k]));
    }
    for (int k = 0; k < MANY; k++)
        free(small[k]);
    free(ta);
    char *again = malloc(100000); /* the heap works on */
    memset(again, 1, 100000);
    free(again);

    test_phase("detached and freed: accesses refused");
    long long *big = malloc(300000); /* its own mapping: free unmaps it */
    CHECK_RC(NARMA_Win_attach(win, big, 300000));
    exercise(big, 300000 / 8, "big region");
    CHECK_RC(NARMA_Win_detach(win, big));
    free(big);
    put_one(big, NARMA_ERR_DISP, "freed region");
    put_one(big + 1000, NARMA_ERR_DISP, "freed region, inside");

    test_phase("a linked list, kept across Win_free");
    struct node *head = NULL;
    for (int k = 0; k < 50; k++) {
        struct node *nd = malloc(sizeof *nd);
        nd->next = head;
        nd->val = k;
        head = nd;
        CHECK_RC(NARMA_Win_attach(win, &nd->val, 8));
    }
    struct node *nd = head;
    for (int k = 49; k >= 0; k--, nd = nd->next) {
        const MPI_Aint a = right_addr(&nd->val);
        long long add = 1000;
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(
            NARMA_Accumulate(&add, 1, MPI_LONG_LONG, right, a, 1, MPI_LONG_LONG, MPI_SUM, win));
        CHECK_RC(NARMA_Win_unlock_all(win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_detach(win, &head->val)); /* the others stay attached until Win_free */
    CHECK_RC(NARMA_Win_free(&win));
    int k = 49;
    for (nd = head; nd != NULL; k--) {
        CHECK(nd->val == k + 1000, "node %d holds %lld", k, nd->val);
        struct node *next = nd->next;
        free(nd);
        nd = next;
    }
    CHECK(k == -1, "list of %d nodes", 49 - k);
    for (int p = 0; p < 4; p++)
        CHECK(test_map_kind(blk + p * ps) == 'p', "page %d not private after Win_free", p);
    free(blk);

    test_phase("falling back to mpi at creation");
    /* A rank that cannot read a peer's memory (test hook), or NARMA_SHM_CREATE=0: every
     * rank creates the window on mpi, and it works there. */
    char hook[32];
    snprintf(hook, sizeof hook, "%d:6", size - 1);
    for (int v = 0; v < 2; v++) {
        setenv(v == 0 ? "NARMA_TEST_FAIL_ALLOC" : "NARMA_SHM_CREATE", v == 0 ? hook : "0", 1);
        CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        unsetenv(v == 0 ? "NARMA_TEST_FAIL_ALLOC" : "NARMA_SHM_CREATE");
        /* The hook fails the last rank's node only: on pretend nodes the others keep shm. */
        int last_node = nk > 0 ? (size - 1) / nk : 0, mine_fell = v == 1 || last_node == my_node;
        int others_share = 0;
        for (int p = 0; p < size && v == 0; p++)
            for (int q = 0; q < size; q++)
                others_share |= p != q && (nk > 0 ? p / nk : 0) == (nk > 0 ? q / nk : 0) &&
                                (nk > 0 ? p / nk : 0) != last_node;
        const char *want_fb = !forced_mpi && others_share ? "shm+mpi" : "mpi";
        CHECK(strcmp(NARMA_Win_get_transport(win), want_fb) == 0,
              "fallback %d: transport %s, expected %s", v, NARMA_Win_get_transport(win), want_fb);
        long long *m = malloc(8 * 8);
        CHECK_RC(NARMA_Win_attach(win, m, 8 * 8));
        CHECK(test_map_kind(m) == 'p' || !want_shm || !mine_fell, "fallback %d moved pages", v);
        exercise(m, 8, "fallback window");
        CHECK_RC(NARMA_Win_detach(win, m));
        CHECK_RC(NARMA_Win_free(&win));
        free(m);
    }
    return test_finish();
}
