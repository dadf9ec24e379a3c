/* narma-test: np=2,3,4 transports=shm,mpi timeout=120 */
/*
 * Large request-based notified puts (Rput_notify and persistent starts) whose
 * data the target pulls on shm when asked (window info narma_pull_min,
 * NARMA_SHM_PULL_MIN; docs/design.md "Pulled puts"). Each rank puts to the
 * next one (a ring) and receives from the previous one. Windows are created
 * under several settings (below, main).
 *   - a stream of sizes around the threshold: the origin refills its buffer as
 *     soon as its request completes, the target checks every byte at the
 *     notification (completion means the data was taken);
 *   - who copies: the origin overwrites its buffer right after the call
 *     (erroneous for a program; here it shows the mechanism) and lets the
 *     target drain while it is in plain MPI: the target sees the new bytes
 *     when it pulls, the old ones when the put was copied in the call; which
 *     one is expected comes from the pair's transport and from this test's
 *     own process_vm_readv probe, so a pull that silently stops happening
 *     fails here;
 *   - the data is in the target's window, before it drains, after the
 *     origin's flush, unlock, PSCW complete and unlock_all of a lock_all(0)
 *     epoch (requests freed in flight, so only the epoch call completes them);
 *   - a target that computes outside narma: the origin's Wait completes
 *     (it copies itself once the target lets the patience pass);
 *   - persistent puts: Start/Wait with the buffer refilled between starts;
 *   - 80 puts in flight at once (more than the 64 pull words: the rest are
 *     copied in the call), all checked;
 *   - a small Put_notify after a pulled one: when its notification arrives,
 *     the earlier put's data is there (ring order);
 *   - an Accumulate, Fetch_and_op and Compare_and_swap to a pulled put's bytes
 *     right after it: they apply to its data (across pretend nodes they go
 *     through mpi while the put waits in shm);
 *   - a started persistent put freed in flight, then a flush: data there;
 *   - the window freed with a pulled put in flight whose request is waited
 *     after the free;
 *   - nothing pulled by default; window info narma_pull_min (per window)
 *     over the environment (NARMA_SHM_PULL_MIN), and a bad value refused on
 *     every rank;
 *   - NARMA_TEST_PULL_FAIL=1: every read fails (REFUSED): the origins copy,
 *     nothing hangs, every byte checked, later puts copied in the call.
 */
#define _GNU_SOURCE
#include "common.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define BIG   (1 << 20)
#define TAG_S 1
#define TAG_W 2
#define TAG_F 3
#define TAG_P 4

static int rank, size, next, prev;

static unsigned char pattern(int src, int it, size_t i)
{
    return (unsigned char)(src * 31 + it * 7 + (int)(i % 251));
}

static void fill(unsigned char *b, size_t n, int src, int it)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(src, it, i);
}

/* First index where mem differs from pattern(src, it), or -1. */
static long diff_at(const unsigned char *mem, size_t n, int src, int it)
{
    for (size_t i = 0; i < n; i++)
        if (mem[i] != pattern(src, it, i)) return (long)i;
    return -1;
}

static void wait_note(NARMA_Win win, int src, int tag)
{
    NARMA_Request note;
    CHECK_RC(NARMA_Notify_init(win, src, tag, 1, &note));
    CHECK_RC(NARMA_Start(&note));
    CHECK_RC(NARMA_Wait(&note, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Request_free(&note));
}

/* Plain MPI, no narma call: prev's pull cannot be served by me meanwhile. */
static void token(void)
{
    int t = rank, u;
    CHECK_MPI(MPI_Sendrecv(&t, 1, MPI_INT, next, 99, &u, 1, MPI_INT, prev, 99, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
}

/* Can this process read prev's memory with process_vm_readv (what narma needs to pull)? */
static int can_read_prev(void)
{
    static const uint64_t magic = 0x70756c6c70756c6cull;
    int64_t mine[2] = {(int64_t)getpid(), (int64_t)(intptr_t)&magic}, theirs[2];
    CHECK_MPI(MPI_Sendrecv(mine, 2, MPI_INT64_T, next, 98, theirs, 2, MPI_INT64_T, prev, 98,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    uint64_t v = 0;
    struct iovec l = {&v, sizeof v}, r = {(void *)(intptr_t)theirs[1], sizeof v};
    return process_vm_readv((pid_t)theirs[0], &l, 1, &r, 1, 0) == (ssize_t)sizeof v && v == magic;
}

/* pull_min: NARMA_SHM_PULL_MIN (NULL: unset); info: window info narma_pull_min (NULL: none);
 * threshold: the size from which puts to me are expected to be pulled (0: never). */
static void run(const char *pull_min, const char *info_min, size_t threshold, int fail)
{
    if (pull_min)
        setenv("NARMA_SHM_PULL_MIN", pull_min, 1);
    else
        unsetenv("NARMA_SHM_PULL_MIN");
    if (fail)
        setenv("NARMA_TEST_PULL_FAIL", "1", 1); /* every read fails: the origins copy */
    else
        unsetenv("NARMA_TEST_PULL_FAIL");
    unsigned char *mem, *buf = malloc(BIG);
    CHECK(buf != NULL, "malloc");
    NARMA_Win win;
    MPI_Info info = MPI_INFO_NULL;
    if (info_min) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "narma_pull_min", info_min);
    }
    CHECK_RC(NARMA_Win_allocate(BIG, 1, info, MPI_COMM_WORLD, &mem, &win));
    test_expect_transport(win);
    if (info_min) MPI_Info_free(&info);
    CHECK_RC(NARMA_Win_lock_all(NARMA_MODE_NOCHECK, win));
    /* I pull what prev puts: its path to me and whether I can read it decide. */
    const char *name = NARMA_Win_get_target_transport(win, prev);
    const int cma = can_read_prev();
    const int prev_shm = strcmp(name, "shm") == 0;

    test_phase("stream of sizes around the threshold");
    {
        const size_t sizes[] = {1, 4096, 65535, 65536, 100003, BIG};
        for (int it = 0; it < 60; it++) {
            size_t n = sizes[it % 6];
            fill(buf, n, rank, it);
            NARMA_Request req;
            CHECK_RC(NARMA_Rput_notify(buf, (int)n, MPI_BYTE, next, 0, (int)n, MPI_BYTE, win, &req,
                                       TAG_S));
            if (it % 3 == 0) token(); /* the target may be busy in MPI: the origin copies */
            CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(req == NARMA_REQUEST_NULL, "request not freed by Wait");
            memset(buf, 0xee, n); /* reusable: the data must have been taken */
            wait_note(win, prev, TAG_S);
            long at = diff_at(mem, n, prev, it);
            CHECK(at < 0, "size %zu iteration %d: byte %ld differs", n, it, at);
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
    }

    test_phase("who copies: the target pulls at its drain");
    {
        const size_t n =
            threshold > 0 && threshold <= BIG ? (threshold > 4096 ? threshold : 4096) : BIG;
        fill(buf, n, rank, 1000);
        NARMA_Request req;
        CHECK_RC(
            NARMA_Rput_notify(buf, (int)n, MPI_BYTE, next, 0, (int)n, MPI_BYTE, win, &req, TAG_W));
        fill(buf, n, rank, 2000); /* before completion: only a pull can see this */
        token();
        wait_note(win, prev, TAG_W);
        const int pulled = diff_at(mem, n, prev, 2000) < 0;
        const int copied = diff_at(mem, n, prev, 1000) < 0;
        /* With every read failing, whether the origin already learnt it (then it copies in
         * the call) depends on who got to an earlier put first: either outcome is right. */
        const int expect_pull = prev_shm && threshold > 0 && cma;
        CHECK(pulled || copied, "neither the old nor the new bytes arrived");
        CHECK(fail || pulled == expect_pull,
              "from rank %d (transport %s, NARMA_SHM_PULL_MIN=%s, info %s, readable %d): %s, "
              "expected %s",
              prev, name, pull_min ? pull_min : "(default)", info_min ? info_min : "-", cma,
              pulled ? "pulled" : "copied in the call", expect_pull ? "pulled" : "copied");
        CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("in the window before the drain: flush, unlock, PSCW complete, unlock_all");
    for (int how = 0; how < 4; how++) {
        static const char *const what[] = {"flush", "unlock", "PSCW complete", "unlock_all"};
        const size_t n = BIG - 8 * (size_t)how;
        const int it = 3000 + how;
        fill(buf, n, rank, it);
        memset(mem, 0, BIG);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        /* Every request is freed in flight: only the epoch call can complete the put. */
        NARMA_Request req;
        MPI_Group world, g_next, g_prev;
        if (how > 0) CHECK_RC(NARMA_Win_unlock_all(win));
        if (how == 1) CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, next, 0, win));
        if (how == 3) CHECK_RC(NARMA_Win_lock_all(0, win)); /* next is never locked */
        if (how == 2) {
            MPI_Comm_group(MPI_COMM_WORLD, &world);
            MPI_Group_incl(world, 1, &next, &g_next);
            MPI_Group_incl(world, 1, &prev, &g_prev);
            CHECK_RC(NARMA_Win_post(g_prev, 0, win));
            CHECK_RC(NARMA_Win_start(g_next, 0, win));
        }
        CHECK_RC(
            NARMA_Rput_notify(buf, (int)n, MPI_BYTE, next, 0, (int)n, MPI_BYTE, win, &req, TAG_F));
        CHECK_RC(NARMA_Request_free(&req));
        if (how == 0) CHECK_RC(NARMA_Win_flush(next, win));
        if (how == 1) CHECK_RC(NARMA_Win_unlock(next, win));
        if (how == 2) CHECK_RC(NARMA_Win_complete(win));
        if (how == 3) CHECK_RC(NARMA_Win_unlock_all(win));
        token(); /* the origin's call returned: now look without draining */
        /* On shm not Win_sync or Win_wait before looking: they drain (and pull). Elsewhere
         * MPI's rules: Win_wait, or Win_sync. */
        if (prev_shm)
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
        else if (how == 2)
            CHECK_RC(NARMA_Win_wait(win));
        else
            CHECK_RC(NARMA_Win_sync(win));
        long at = diff_at(mem, n, prev, it);
        CHECK(at < 0, "%s: byte %ld not there", what[how], at);
        if (how == 2) {
            if (prev_shm) CHECK_RC(NARMA_Win_wait(win));
            MPI_Group_free(&g_next);
            MPI_Group_free(&g_prev);
            MPI_Group_free(&world);
        }
        wait_note(win, prev, TAG_F);
        if (how > 0) CHECK_RC(NARMA_Win_lock_all(NARMA_MODE_NOCHECK, win));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("a target computing outside narma: the origin's Wait completes");
    {
        fill(buf, BIG, rank, 4000);
        NARMA_Request req;
        if (rank == 0) {
            CHECK_RC(
                NARMA_Rput_notify(buf, BIG, MPI_BYTE, next, 0, BIG, MPI_BYTE, win, &req, TAG_S));
            CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
            memset(buf, 0xee, BIG);
        }
        /* rank 0's target is busy in MPI until rank 0 has completed */
        CHECK_MPI(MPI_Bcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (rank == 1 % size) {
            wait_note(win, 0, TAG_S);
            long at = diff_at(mem, BIG, 0, 4000);
            CHECK(at < 0, "byte %ld", at);
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("persistent puts: Start/Wait, buffer refilled between starts");
    {
        NARMA_Request put;
        CHECK_RC(
            NARMA_Put_notify_init(buf, BIG, MPI_BYTE, next, 0, BIG, MPI_BYTE, win, TAG_P, &put));
        for (int it = 0; it < 20; it++) {
            fill(buf, BIG, rank, 5000 + it);
            CHECK_RC(NARMA_Start(&put));
            if (it % 2) token();
            CHECK_RC(NARMA_Wait(&put, MPI_STATUS_IGNORE));
            CHECK(put != NARMA_REQUEST_NULL, "persistent request freed by Wait");
            memset(buf, 0xee, BIG);
            wait_note(win, prev, TAG_P);
            long at = diff_at(mem, BIG, prev, 5000 + it);
            CHECK(at < 0, "start %d: byte %ld", it, at);
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        CHECK_RC(NARMA_Request_free(&put));
    }

    test_phase("more puts in flight than pull words (64): the rest are copied in the call");
    {
        enum { N = 80, PIECE = 8192 };
        NARMA_Request req[N];
        unsigned char *src = malloc((size_t)N * PIECE);
        CHECK(src != NULL, "malloc");
        for (int k = 0; k < N; k++) {
            fill(src + (size_t)k * PIECE, PIECE, rank, 7000 + k);
            CHECK_RC(NARMA_Rput_notify(src + (size_t)k * PIECE, PIECE, MPI_BYTE, next,
                                       (MPI_Aint)k * PIECE, PIECE, MPI_BYTE, win, &req[k], TAG_S));
        }
        token();
        CHECK_RC(NARMA_Waitall(N, req, MPI_STATUSES_IGNORE));
        memset(src, 0xee, (size_t)N * PIECE);
        NARMA_Request note;
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_S, N, &note));
        CHECK_RC(NARMA_Start(&note));
        CHECK_RC(NARMA_Wait(&note, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Request_free(&note));
        for (int k = 0; k < N; k++) {
            long at = diff_at(mem + (size_t)k * PIECE, PIECE, prev, 7000 + k);
            CHECK(at < 0, "piece %d: byte %ld", k, at);
        }
        free(src);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("a later small notified put: its notification finds the pulled data there");
    {
        const int small = 12345;
        fill(buf, BIG - 64, rank, 8000);
        NARMA_Request req;
        CHECK_RC(NARMA_Rput_notify(buf, BIG - 64, MPI_BYTE, next, 0, BIG - 64, MPI_BYTE, win, &req,
                                   TAG_P));
        CHECK_RC(NARMA_Put_notify(&small, 1, MPI_INT, next, BIG - 64, 1, MPI_INT, win, TAG_W));
        token();
        wait_note(win, prev, TAG_W); /* the later one first: the earlier waits as unexpected */
        long at = diff_at(mem, BIG - 64, prev, 8000);
        CHECK(at < 0, "byte %ld of the earlier put missing at the later notification", at);
        int got;
        memcpy(&got, mem + BIG - 64, sizeof got);
        CHECK(got == small, "small put: %d", got);
        wait_note(win, prev, TAG_P);
        CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("atomics after a pulled put to the same bytes: they apply to its data");
    {
        /* The origin's later accumulates, fetch-and-op and compare-and-swap to the put's bytes
         * land after its data, as after a put copied in the call (docs/design.md, "Pulled
         * puts"): across pretend nodes they go through mpi while the put waits to be pulled
         * through shm, and the origin must settle the pull first. */
        long long p16, p24, one = 1, old = -1, swap = 42, was = -1;
        fill(buf, BIG, rank, 8500);
        memcpy(&p16, buf + 16, sizeof p16);
        memcpy(&p24, buf + 24, sizeof p24);
        NARMA_Request req = NARMA_REQUEST_NULL;
        /* One origin at a time, the others in a plain MPI barrier: no target drains its ring
         * (and so pulls) before the origin's atomics, whatever the timing. */
        for (int o = 0; o < size; o++) {
            if (o == rank) {
                CHECK_RC(NARMA_Rput_notify(buf, BIG, MPI_BYTE, next, 0, BIG, MPI_BYTE, win, &req,
                                           TAG_P));
                CHECK_RC(NARMA_Accumulate(&one, 1, MPI_LONG_LONG, next, 8, 1, MPI_LONG_LONG,
                                          MPI_SUM, win));
                CHECK_RC(NARMA_Fetch_and_op(&one, &old, MPI_LONG_LONG, next, 16, MPI_SUM, win));
                CHECK_RC(NARMA_Compare_and_swap(&swap, &p24, &was, MPI_LONG_LONG, next, 24, win));
                CHECK_RC(NARMA_Win_flush(next, win));
                CHECK(old == p16, "fetch_and_op after the pulled put read %lld, expected %lld", old,
                      p16);
                CHECK(was == p24, "compare_and_swap after the pulled put read %lld, expected %lld",
                      was, p24);
            }
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        wait_note(win, prev, TAG_P);
        CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* every origin's atomics are done */
        if (prev_shm)
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
        else
            CHECK_RC(NARMA_Win_sync(win));
        /* What prev sent, with its atomics applied after it. */
        unsigned char *want = malloc(BIG);
        CHECK(want != NULL, "malloc");
        fill(want, BIG, prev, 8500);
        long long w8, w16, w24 = 42;
        memcpy(&w8, want + 8, sizeof w8);
        memcpy(&w16, want + 16, sizeof w16);
        w8 += 1;
        w16 += 1;
        memcpy(want + 8, &w8, sizeof w8);
        memcpy(want + 16, &w16, sizeof w16);
        memcpy(want + 24, &w24, sizeof w24);
        size_t at = 0;
        while (at < BIG && mem[at] == want[at])
            at++;
        CHECK(at == BIG, "byte %zu after the pulled put and the atomics: %d, expected %d", at,
              at < BIG ? mem[at] : 0, at < BIG ? want[at] : 0);
        free(want);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("a started persistent put freed in flight: the flush completes it");
    {
        NARMA_Request put;
        fill(buf, BIG, rank, 9000);
        memset(mem, 0, BIG);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(
            NARMA_Put_notify_init(buf, BIG, MPI_BYTE, next, 0, BIG, MPI_BYTE, win, TAG_F, &put));
        CHECK_RC(NARMA_Start(&put));
        CHECK_RC(NARMA_Request_free(&put));
        CHECK_RC(NARMA_Win_flush(next, win));
        token();
        if (prev_shm)
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
        else
            CHECK_RC(NARMA_Win_sync(win));
        long at = diff_at(mem, BIG, prev, 9000);
        CHECK(at < 0, "byte %ld", at);
        wait_note(win, prev, TAG_F);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("window freed with a pulled put in flight; its request waited after");
    {
        NARMA_Request req;
        fill(buf, BIG, rank, 6000);
        CHECK_RC(NARMA_Win_unlock_all(win)); /* notified puts need no epoch */
        CHECK_RC(NARMA_Rput_notify(buf, BIG, MPI_BYTE, next, 0, BIG, MPI_BYTE, win, &req, TAG_S));
        CHECK_RC(NARMA_Win_free(&win));
        CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req == NARMA_REQUEST_NULL, "request not freed");
    }
    free(buf);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_pull", 110);
    rank = test_rank;
    size = test_size;
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    test_phase("setup");
    run(NULL, NULL, 0, 0); /* by default nothing is pulled */
    run("65536", NULL, 65536, 0);
    run("1", NULL, 1, 0);
    run("0", NULL, 0, 0);
    run("0", "1", 1, 0); /* the window's info wins over the environment */
    run("1", "0", 0, 0); /* this window never pulls */
    run(NULL, "300000", 300000, 0);
    run("65536", NULL, 65536, 1); /* every read refused: the origins copy, nothing hangs */
    unsetenv("NARMA_TEST_PULL_FAIL");

    test_phase("narma_pull_min: a bad value is refused on every rank");
    {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "narma_pull_min",
                     rank == size - 1 ? "-5"
                     : rank == 0      ? "100000000000000000000000000000" /* never cut short */
                                      : "12x");
        NARMA_Win win;
        void *mem;
        CHECK_ERR(NARMA_Win_allocate(64, 1, info, MPI_COMM_WORLD, &mem, &win), NARMA_ERR_ARG);
        MPI_Info_free(&info);
    }
    return test_finish();
}
