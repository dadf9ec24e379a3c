/* narma-test: np=3,4 transports=shm,mpi timeout=60 */
/*
 * The four reorder info keys (paper VI-B). Three roles: M, the middle rank,
 * opens two epochs back to back on a window; its first epoch is blocked by a
 * late rank L, its second involves an early rank E. With the key that covers
 * that pair of epoch kinds set to "true", M's second epoch activates and
 * completes while the first still waits for L; with the key "false" (or
 * absent) it must not complete until L acts, and E sees nothing of it.
 *
 *   pattern            M's first epoch       M's second epoch     L (late)       E (early)
 *   A_A_A_R (GATS)     access to L           access to E          posts          posts
 *   A_A_A_R (lock)     lock L (L holds it)   lock E               unlocks        passive
 *   A_A_E_R            exposure to L         access to E          starts, puts   posts
 *   E_A_E_R            exposure to L         exposure to E        starts, puts   starts, puts
 *   E_A_A_R            access to L           exposure to E        posts          starts, puts
 *   lock_all ignores   lock_all (L holds     lock E               unlocks        passive
 *   A_A_A_R            its own lock)
 *
 * Order of events, all by MPI messages (never timing): E does its early part
 * and tells M; M issues both epochs, checks its first request is incomplete,
 * then (key on) waits for the second or (key off) checks it stays incomplete;
 * M tells E, which checks its side the same way (data present / absent); E
 * tells L "go"; L acts; everything completes and all data is checked.
 *
 * The second round gives each key to NARMA_Win_set_info after creation instead (the window
 * created with the opposite value): the change takes effect for the epochs that follow.
 */
#include "common.h"
#include <string.h>

enum { M = 0, L = 1, E = 2 };
enum { TAG_READY = 1, TAG_ISSUED, TAG_GO, TAG_HELD };

enum kind { K_ACCESS, K_EXPOSURE, K_LOCK, K_LOCK_ALL };

struct pattern {
    const char *name;
    const char *key;    /* info key set to "true" in the "on" run */
    const char *alias;  /* its short alias (for MPIs with MPI_MAX_INFO_KEY < strlen(key)) */
    enum kind first;    /* M's epoch with L */
    enum kind second;   /* M's epoch with E */
    int expect_reorder; /* does the key take effect? */
};

static const struct pattern patterns[] = {
    {"A_A_A_R (GATS)", "narma_access_after_access_reorder", "narma_reorder_aaar", K_ACCESS,
     K_ACCESS, 1},
    {"A_A_A_R (lock)", "narma_access_after_access_reorder", "narma_reorder_aaar", K_LOCK, K_LOCK,
     1},
    {"A_A_E_R", "narma_access_after_exposure_reorder", "narma_reorder_aaer", K_EXPOSURE, K_ACCESS,
     1},
    {"E_A_E_R", "narma_exposure_after_exposure_reorder", "narma_reorder_eaer", K_EXPOSURE,
     K_EXPOSURE, 1},
    {"E_A_A_R", "narma_exposure_after_access_reorder", "narma_reorder_eaar", K_ACCESS, K_EXPOSURE,
     1},
    {"lock_all ignores A_A_A_R", "narma_access_after_access_reorder", "narma_reorder_aaar",
     K_LOCK_ALL, K_LOCK, 0},
};

static int rank;
static int *base;
static NARMA_Win win;
static MPI_Group world_group;
static char phase[160];

static MPI_Group group_of(int r)
{
    MPI_Group g;
    MPI_Group_incl(world_group, 1, &r, &g);
    return g;
}
static void send(int to, int tag) { MPI_Send(NULL, 0, MPI_BYTE, to, tag, MPI_COMM_WORLD); }
/* Receive while driving narma's progress: narma has no progress thread, so a
 * rank blocked in MPI_Recv would stall its own pending epochs (an early
 * origin's recorded put waits for this rank to see the grant). */
static void recv(int from, int tag)
{
    int flag = 0;
    while (!flag) {
        CHECK_RC(NARMA_Progress());
        MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    MPI_Recv(NULL, 0, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Word r of a window holds the value origin r put there; values identify pattern and run. */
static int value_of(int p, int on, int origin) { return 1000 * (p + 1) + 100 * on + origin + 1; }
static int vbuf[8]; /* origin buffers, valid until the epochs complete */

/*
 * Reading my own window memory: while one of my epochs is pending, a lock on
 * myself would queue behind it (epochs activate in order), so checks made
 * then read the memory directly (local loads are allowed during an exposure
 * epoch); checks made once everything completed take a shared lock.
 */
static int local(int i) { return ((volatile int *)base)[i]; }
static int peek(int i)
{
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, rank, 0, win));
    int v = base[i];
    CHECK_RC(NARMA_Win_unlock(rank, win));
    return v;
}

/* Open, fill and close one epoch of `kind` with `peer`; returns the closing request. */
static NARMA_Request epoch(enum kind kind, int peer, int value)
{
    NARMA_Request open, close;
    MPI_Group g = group_of(peer);
    vbuf[peer] = value;
    switch (kind) {
    case K_ACCESS:
        CHECK_RC(NARMA_Win_istart(g, 0, win, &open));
        CHECK_RC(NARMA_Put(&vbuf[peer], 1, MPI_INT, peer, rank, 1, MPI_INT, win));
        CHECK_RC(NARMA_Win_icomplete(win, &close));
        break;
    case K_EXPOSURE:
        CHECK_RC(NARMA_Win_ipost(g, 0, win, &open));
        CHECK_RC(NARMA_Win_iwait(win, &close));
        break;
    case K_LOCK:
        CHECK_RC(NARMA_Win_ilock(NARMA_LOCK_EXCLUSIVE, peer, 0, win, &open));
        CHECK_RC(NARMA_Put(&vbuf[peer], 1, MPI_INT, peer, rank, 1, MPI_INT, win));
        CHECK_RC(NARMA_Win_iunlock(peer, win, &close));
        break;
    case K_LOCK_ALL:
        CHECK_RC(NARMA_Win_ilock_all(0, win, &open));
        CHECK_RC(NARMA_Put(&vbuf[peer], 1, MPI_INT, peer, rank, 1, MPI_INT, win));
        CHECK_RC(NARMA_Win_iunlock_all(win, &close));
        break;
    }
    CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE)); /* opening requests are complete at once */
    MPI_Group_free(&g);
    return close;
}

/* The peer's counterpart of M's epoch of `kind` (E early, L late); returns its request or NULL. */
static NARMA_Request counterpart(enum kind kind, int value)
{
    switch (kind) {
    case K_ACCESS:
        return epoch(K_EXPOSURE, M, 0); /* M accesses me: I expose */
    case K_EXPOSURE:
        return epoch(K_ACCESS, M, value); /* M exposes to me: I access it */
    default:
        return NARMA_REQUEST_NULL; /* lock targets are passive */
    }
}

/* After M's epoch with me completed: my data at M, or M's data at me. */
static void check_data(enum kind kind_at_m, int p, int on, int present, int pending,
                       const char *who)
{
    if (kind_at_m == K_EXPOSURE) return; /* my data lands at M: M checks it */
    int want = present ? value_of(p, on, M) : -1, got = pending ? local(M) : peek(M);
    CHECK(got == want, "%s: %s: word from M is %d, expected %d", phase, who, got, want);
}

/* by_set_info: the key is given to NARMA_Win_set_info after creation (with the opposite value
 * at creation), not to the creation call. */
static void run(int p, int on, int by_set_info)
{
    const struct pattern *pt = &patterns[p];
    const int reorder = on && pt->expect_reorder;
    snprintf(phase, sizeof phase, "%s, key %s%s", pt->name, on ? "true" : "false",
             by_set_info ? " (NARMA_Win_set_info)" : "");
    test_phase(phase);

    MPI_Info info;
    MPI_Info_create(&info);
    /* The long key does not fit Open MPI's MPI_MAX_INFO_KEY (36): use the alias there. */
    const char *key = strlen(pt->key) <= MPI_MAX_INFO_KEY ? pt->key : pt->alias;
    MPI_Info_set(info, key, on != by_set_info ? "true" : "false");
    CHECK_RC(NARMA_Win_allocate(8 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win));
    if (by_set_info) {
        MPI_Info_set(info, key, on ? "true" : "false");
        CHECK_RC(NARMA_Win_set_info(win, info));
    }
    MPI_Info_free(&info);
    for (int i = 0; i < 8; i++)
        base[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    const int late_holds_lock = pt->first == K_LOCK || pt->first == K_LOCK_ALL;
    if (rank == E) {
        NARMA_Request mine = counterpart(pt->second, value_of(p, on, E));
        send(M, TAG_READY);
        recv(M, TAG_ISSUED);
        if (reorder) {
            CHECK_RC(NARMA_Wait(&mine, MPI_STATUS_IGNORE));
            check_data(pt->second, p, on, 1, 0, "E, before L acted");
        } else {
            if (mine != NARMA_REQUEST_NULL)
                test_expect_incomplete(&mine, "E's epoch with M before L acted");
            check_data(pt->second, p, on, 0, 1, "E, before L acted");
        }
        send(L, TAG_GO);
        CHECK_RC(NARMA_Wait(&mine, MPI_STATUS_IGNORE));
    } else if (rank == L) {
        if (late_holds_lock) {
            CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, L, 0, win));
            send(M, TAG_HELD);
        }
        recv(E, TAG_GO);
        NARMA_Request mine = NARMA_REQUEST_NULL;
        if (late_holds_lock)
            CHECK_RC(NARMA_Win_unlock(L, win));
        else
            mine = counterpart(pt->first, value_of(p, on, L));
        CHECK_RC(NARMA_Wait(&mine, MPI_STATUS_IGNORE));
    } else if (rank == M) {
        recv(E, TAG_READY);
        if (late_holds_lock) recv(L, TAG_HELD);
        NARMA_Request first = epoch(pt->first, L, value_of(p, on, M));
        NARMA_Request second = epoch(pt->second, E, value_of(p, on, M));
        test_expect_incomplete(&first, "M's first epoch before L acted");
        if (reorder) {
            CHECK_RC(NARMA_Wait(&second, MPI_STATUS_IGNORE));
            if (pt->second == K_EXPOSURE)
                CHECK(local(E) == value_of(p, on, E), "%s: E's data missing at M: %d", phase,
                      local(E));
        } else {
            test_expect_incomplete(&second, "M's second epoch before L acted");
            if (pt->second == K_EXPOSURE)
                CHECK(local(E) == -1, "%s: E's data reached M before L acted", phase);
        }
        send(E, TAG_ISSUED);
        NARMA_Request both[2] = {first, second};
        MPI_Status st[2];
        CHECK_RC(NARMA_Waitall(2, both, st));
        if (pt->first == K_EXPOSURE)
            CHECK(peek(L) == value_of(p, on, L), "%s: L's data missing at M: %d", phase, peek(L));
        if (pt->second == K_EXPOSURE)
            CHECK(peek(E) == value_of(p, on, E), "%s: E's data missing at M: %d", phase, peek(E));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* M's epochs are complete: L and E check what M wrote */
    if (rank == L) check_data(pt->first, p, on, 1, 0, "L, at the end");
    if (rank == E) check_data(pt->second, p, on, 1, 0, "E, at the end");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_free(&win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_nb_reorder", 25);
    rank = test_rank;
    if (test_size < 3) return test_skip("needs three ranks (middle, late, early)");
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int round = 0; round < 2; round++)
        for (int p = 0; p < (int)(sizeof patterns / sizeof patterns[0]); p++)
            for (int on = 0; on <= 1; on++)
                run(p, on, round);
    MPI_Group_free(&world_group);
    return test_finish();
}
