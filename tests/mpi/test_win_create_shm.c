/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 env=UCX_MEM_EVENTS=no */
/*
 * Win_create windows among ranks of one node use shm: the pages holding each
 * rank's memory are moved in place onto shared memory for the window's life,
 * so that the others reach it by load/store, and put back on private memory at
 * Win_free. Checked here:
 *   - heap memory at an odd address in a page it shares with other data: the
 *     window is on shm (NARMA_TRANSPORT=mpi: on mpi), every access kind moves
 *     the right bytes, the neighbours in the same pages keep their values while
 *     the window exists and after it is freed, and the pages are private again
 *     after Win_free (/proc/self/maps);
 *   - a second window over the same memory while the first exists uses the
 *     same shared pages (both see each other's writes, and freeing the first
 *     leaves them shared for the second); a window over moved and unmoved
 *     pages at once falls back to mpi on every rank;
 *   - a program global (the executable's data) and a window where some ranks
 *     expose no memory;
 *   - stack memory on one rank only, or (test hook) the last rank failing to
 *     share after the others moved their pages or failing to map a peer's:
 *     every rank falls back to mpi together, with its pages private again.
 */
#include "common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define N   64 /* ints per rank */
#define TAG 3

static int rank, size, want_shm;
static int global_arr[N + 3]; /* the executable's own data */

/* Every access kind to the right neighbour's window of N ints at mem, values checked. */
static void exercise(NARMA_Win win, int *mem, const char *what)
{
    snprintf(test_detail, sizeof test_detail, "%s", what);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++)
        mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    int v[N], g[N], one = 1, old = 0;
    for (int i = 0; i < N; i++)
        v[i] = 1000 * rank + i;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(v, N, MPI_INT, right, 0, N, MPI_INT, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK_RC(NARMA_Get(g, N, MPI_INT, right, 0, N, MPI_INT, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    for (int i = 0; i < N; i++)
        CHECK(g[i] == v[i], "get %d: %d, expected %d", i, g[i], v[i]);
    CHECK_RC(NARMA_Accumulate(v, N, MPI_INT, right, 0, N, MPI_INT, MPI_SUM, win));
    CHECK_RC(NARMA_Fetch_and_op(&one, &old, MPI_INT, right, 1, MPI_SUM, win));
    CHECK_RC(NARMA_Win_flush(right, win));
    CHECK(old == 2 * v[1], "fetch_and_op read %d, expected %d", old, 2 * v[1]);
    CHECK_RC(NARMA_Put_notify(v, 2, MPI_INT, right, N - 2, 2, MPI_INT, win, TAG));
    CHECK_RC(NARMA_Win_unlock_all(win));
    NARMA_Request r;
    CHECK_RC(NARMA_Notify_init(win, left, TAG, 1, &r));
    CHECK_RC(NARMA_Start(&r));
    CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&r));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_sync(win));
    for (int i = 0; i < N; i++) {
        int w = 2 * (1000 * left + i) + (i == 1);
        if (i >= N - 2) w = 1000 * left + i - (N - 2);
        if (mem[i] != w) {
            fprintf(stderr, "rank %d mem:", rank);
            for (int k = 0; k < N; k++)
                fprintf(stderr, " %d", mem[k]);
            fprintf(stderr, "\n");
        }
        CHECK(mem[i] == w, "element %d is %d, expected %d", i, mem[i], w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Pretend nodes (NARMA_NODE_SIZE=k): world ranks r / k; 0 or unset: one node. */
static int node_size_env;
static int node_of(int r) { return node_size_env > 0 ? r / node_size_env : 0; }

/* shm: whether this rank's node shares the window's memory. Then every peer of this node is
 * reached through shm and every other through mpi (ofi with NARMA_TRANSPORT=ofi); without
 * pretend nodes the window as a whole says "shm" or "mpi". */
static void expect_transport(NARMA_Win win, int shm, const char *what)
{
    const char *t = NARMA_Win_get_transport(win);
    CHECK(t != NULL, "%s: no transport", what);
    if (node_size_env == 0)
        CHECK(strcmp(t, shm ? "shm" : "mpi") == 0, "%s: transport %s, expected %s", what, t,
              shm ? "shm" : "mpi");
    for (int p = 0; p < size; p++) {
        const char *want = shm && node_of(p) == node_of(rank) ? "shm" : test_net_name("mpi");
        const char *got = NARMA_Win_get_target_transport(win, p);
        if (p != rank)
            CHECK(strcmp(got, want) == 0, "%s: toward %d %s, expected %s", what, p, got, want);
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_win_create_shm", 80);
    rank = test_rank;
    size = test_size;
    const char *tr = getenv("NARMA_TRANSPORT"), *ns = getenv("NARMA_NODE_SIZE");
    node_size_env = ns != NULL ? atoi(ns) : 0;
    int node_ranks = 0;
    for (int p = 0; p < size; p++)
        node_ranks += node_of(p) == node_of(rank);
    /* Memory is moved where a node has more than one rank to share it with. */
    want_shm = !(tr && strcmp(tr, "mpi") == 0) && node_ranks > 1;

    test_phase("heap memory sharing its pages with other data");
    /* 5 pages; the window starts 100 bytes into the second page, neighbours on both sides. */
    const size_t ps = 4096;
    char *blk = NULL;
    CHECK(posix_memalign((void **)&blk, ps, 5 * ps) == 0, "posix_memalign");
    for (size_t i = 0; i < 5 * ps; i++)
        blk[i] = (char)(i * 7 + rank);
    int *mem = (int *)(blk + ps + 100);
    NARMA_Win win;
    CHECK_RC(
        NARMA_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    expect_transport(win, want_shm, "heap window");
    if (want_shm) CHECK(test_map_kind(mem) == 's', "the window's pages are not shared");
    exercise(win, mem, "heap window");
    for (size_t i = 0; i < 5 * ps; i++) {
        if (i >= ps + 100 && i < ps + 100 + N * sizeof(int)) continue;
        CHECK(blk[i] == (char)(i * 7 + rank), "byte %zu beside the window changed", i);
    }

    test_phase("a second window over the same memory shares the same pages");
    NARMA_Win win2;
    CHECK_RC(
        NARMA_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win2));
    expect_transport(win2, want_shm, "second window");
    exercise(win2, mem, "second window");
    /* Both windows are the same memory: a put through one is seen through the other. */
    int x = 4242 + rank, y = 0;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    CHECK_RC(NARMA_Win_lock_all(0, win));
    CHECK_RC(NARMA_Put(&x, 1, MPI_INT, right, 5, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_lock_all(0, win2));
    CHECK_RC(NARMA_Get(&y, 1, MPI_INT, right, 5, 1, MPI_INT, win2));
    CHECK_RC(NARMA_Win_unlock_all(win2));
    CHECK(y == x, "win2 read %d where win wrote %d", y, x);
    CHECK(mem[5] == 4242 + left, "local word is %d, expected %d", mem[5], 4242 + left);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("a window over shared and private pages at once falls back to mpi");
    {
        /* From 64 bytes before the window's pages into the next page: the first page is
         * private, the rest is shared. */
        char *lo = blk + ps - 64;
        NARMA_Win win3;
        CHECK_RC(NARMA_Win_create(lo, 256, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win3));
        expect_transport(win3, 0, "window over shared and private pages");
        char g = 0;
        CHECK_RC(NARMA_Win_lock_all(0, win3));
        CHECK_RC(NARMA_Get(&g, 1, MPI_CHAR, right, 0, 1, MPI_CHAR, win3));
        CHECK_RC(NARMA_Win_unlock_all(win3));
        CHECK(g == (char)((ps - 64) * 7 + right), "win3 read %d", g);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&win3));
    }

    test_phase("free the first window: the second still shares the pages");
    int keep[N];
    memcpy(keep, mem, sizeof keep);
    CHECK_RC(NARMA_Win_free(&win));
    if (want_shm)
        CHECK(test_map_kind(mem) == 's', "the pages were unshared under the second window");
    CHECK_RC(NARMA_Win_lock_all(0, win2));
    x = 777 + rank;
    CHECK_RC(NARMA_Put(&x, 1, MPI_INT, right, 6, 1, MPI_INT, win2));
    CHECK_RC(NARMA_Win_unlock_all(win2));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[6] == 777 + left, "after the first free: word is %d, expected %d", mem[6],
          777 + left);
    keep[6] = mem[6];
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win2));

    test_phase("after Win_free: private pages, same contents");
    CHECK(test_map_kind(mem) == 'p', "the window's pages are still shared after Win_free");
    CHECK(memcmp(keep, mem, sizeof keep) == 0, "the window's contents changed at Win_free");
    for (size_t i = 0; i < 5 * ps; i++) {
        if (i >= ps + 100 && i < ps + 100 + N * sizeof(int)) continue;
        CHECK(blk[i] == (char)(i * 7 + rank), "byte %zu beside the window changed at free", i);
    }
    free(blk);

    test_phase("a small heap window beside narma's own heap objects");
    for (int k = 0; k < 3; k++) {
        /* Small allocations right before Win_create: narma's own bookkeeping is then
         * allocated in the same heap pages, which move with the window and must never be
         * touched while they are being moved back. */
        int *small = malloc(N * sizeof(int));
        CHECK_RC(NARMA_Win_create(small, N * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                  MPI_COMM_WORLD, &win));
        expect_transport(win, want_shm, "small heap window");
        exercise(win, small, "small heap window");
        CHECK_RC(NARMA_Win_free(&win));
        int *other = malloc(3 * sizeof(int)); /* the heap still works */
        free(other);
        free(small);
    }

    test_phase("a program global; the last rank exposes no memory");
    int *gmem = global_arr + 1;
    CHECK_RC(NARMA_Win_create(rank == size - 1 ? NULL : gmem,
                              rank == size - 1 ? 0 : N * sizeof(int), sizeof(int), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win));
    expect_transport(win, want_shm, "global window");
    {
        int v = 77 + rank, g = 0, tgt = (rank + 1) % size;
        if (tgt == size - 1) tgt = 0;
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Put(&v, 1, MPI_INT, tgt, rank, 1, MPI_INT, win));
        CHECK_RC(NARMA_Win_flush(tgt, win));
        CHECK_RC(NARMA_Get(&g, 1, MPI_INT, tgt, rank, 1, MPI_INT, win));
        CHECK_RC(NARMA_Win_flush(tgt, win));
        CHECK(g == v, "global window: read %d, expected %d", g, v);
        CHECK_ERR(NARMA_Put(&v, 1, MPI_INT, size - 1, 0, 1, MPI_INT, win), NARMA_ERR_DISP);
        CHECK_RC(NARMA_Win_unlock_all(win));
    }
    CHECK_RC(NARMA_Win_free(&win));

    test_phase("the last rank fails to share after the others moved their pages: all on mpi");
    for (int stage = 4; stage <= 5; stage++) {
        /* NARMA_TEST_FAIL_ALLOC=RANK:4 (after moving its pages) or :5 (mapping a peer's). */
        char hook[32];
        snprintf(hook, sizeof hook, "%d:%d", size - 1, stage);
        setenv("NARMA_TEST_FAIL_ALLOC", hook, 1);
        int *heap = calloc(N, sizeof(int));
        CHECK_RC(NARMA_Win_create(heap, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &win));
        unsetenv("NARMA_TEST_FAIL_ALLOC");
        snprintf(test_detail, sizeof test_detail, "stage %d", stage);
        /* The last rank's node falls back; the other nodes share as before. */
        int fell = node_of(rank) == node_of(size - 1);
        expect_transport(win, want_shm && !fell, "window whose last rank could not share");
        if (fell || !want_shm)
            CHECK(test_map_kind(heap) == 'p', "stage %d: pages left shared after the fallback",
                  stage);
        exercise(win, heap, "after the fallback");
        CHECK_RC(NARMA_Win_free(&win));
        free(heap);
    }
    {
        /* The same memory shares again once nothing fails. */
        int *heap = calloc(N, sizeof(int));
        CHECK_RC(NARMA_Win_create(heap, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &win));
        expect_transport(win, want_shm, "window after the fallbacks");
        exercise(win, heap, "after the fallbacks");
        CHECK_RC(NARMA_Win_free(&win));
        free(heap);
    }

    test_phase("a large anonymous mapping, mostly untouched: contents kept, holes read zero");
    {
        /* 64 MiB: 100 touched pages among the first 200 (more runs of data than the
         * restore at Win_free keeps apart), one in the middle, the last one. Untouched
         * pages are not copied into the shared object; the peers' puts into them, and
         * into touched ones, must survive Win_free like the program's own data. */
        const size_t npg = 16384, len = npg * ps;
        char *big = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(big != MAP_FAILED, "mmap of %zu bytes", len);
#define TOUCHED(p) (((p) < 200 && (p) % 2 == 0) || (p) == 8000 || (p) == npg - 1)
        for (size_t p = 0; p < npg; p++)
            if (TOUCHED(p)) memset(big + p * ps, (int)(p % 251) + 1, ps);
        NARMA_Win bw;
        CHECK_RC(NARMA_Win_create(big, len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bw));
        expect_transport(bw, want_shm, "large sparse window");
        if (want_shm) CHECK(test_map_kind(big) == 's', "the large window's pages are not shared");
        /* The left neighbour writes into this rank: untouched pages 151 (past the 64th run),
         * 12000 and 1, touched page 8000. */
        static const size_t into[] = {151, 12000, 1, 8000};
        const size_t nin = sizeof into / sizeof into[0];
        CHECK_RC(NARMA_Win_lock_all(0, bw));
        for (size_t k = 0; k < nin; k++) {
            char v = (char)(0x70 + k + rank);
            CHECK_RC(
                NARMA_Put(&v, 1, MPI_CHAR, right, (MPI_Aint)(into[k] * ps + 17), 1, MPI_CHAR, bw));
        }
        CHECK_RC(NARMA_Win_unlock_all(bw));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int pass = 0; pass < 2; pass++) {
            /* pass 0: while the window exists, the pages with data only (reading a hole
             * of the shared object would fill it); pass 1: after Win_free, every page. */
            for (size_t p = 0; p < npg; p++) {
                const char *pg = big + p * ps;
                int written = 0;
                for (size_t k = 0; k < nin; k++)
                    written |= into[k] == p;
                if (pass == 0 && !TOUCHED(p) && !written) continue;
                char want = TOUCHED(p) ? (char)((int)(p % 251) + 1) : 0;
                static const size_t at[] = {0, 16, 17, 18, 2048, 4095};
                for (size_t j = 0; j < sizeof at / sizeof at[0]; j++) {
                    char w = want;
                    for (size_t k = 0; k < nin; k++)
                        if (at[j] == 17 && into[k] == p) w = (char)(0x70 + k + left);
                    if (pg[at[j]] != w) {
                        CHECK(0, "%s: page %zu byte %zu is %d, expected %d",
                              pass ? "after Win_free" : "in the window", p, at[j], pg[at[j]], w);
                        p = npg; /* one report is enough */
                        break;
                    }
                }
            }
            if (pass == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                CHECK_RC(NARMA_Win_free(&bw));
                CHECK(test_map_kind(big) == 'p', "the large window's pages are still shared");
            }
        }
#undef TOUCHED
        munmap(big, len);
    }

    test_phase("stack memory on rank 0 only: every rank falls back to mpi");
    {
        int stackmem[N];
        int *heap = calloc(N, sizeof(int));
        int *m = rank == 0 ? stackmem : heap;
        CHECK_RC(
            NARMA_Win_create(m, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        expect_transport(win, want_shm && node_of(rank) != node_of(0), "stack window");
        exercise(win, m, "stack window");
        CHECK_RC(NARMA_Win_free(&win));
        free(heap);
    }
    return test_finish();
}
