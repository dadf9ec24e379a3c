/* narma-test: np=2,4 transports=shm,mpi timeout=300 */
/*
 * One window per thread, 4 threads per rank at once, under MPI_THREAD_MULTIPLE: the
 * collective calls (creation, NARMA_Win_fence, NARMA_Win_set_num_notify, NARMA_Win_free) of
 * different threads run concurrently on windows over distinct communicators (each thread its
 * own MPI_Comm_dup, made by the main thread before the threads start).
 *
 * In each round (NARMA_THREADS_TEST_ROUNDS, default 6) every thread creates its window, the
 * flavor turning with the round and the thread: NARMA_Win_allocate, NARMA_Win_create over a
 * page-aligned array of the thread's own (whole pages: nothing else of the program shares
 * them), NARMA_Win_create_dynamic + NARMA_Win_attach of such an array (addresses exchanged on
 * the thread's communicator). It then runs an epoch of every kind on it, each writing its own
 * slots, values naming round, thread, epoch and origin:
 *   fence      Put to the right neighbour between two NARMA_Win_fence;
 *   pscw       NARMA_Win_post/start to both neighbours, Put to both, complete, wait;
 *   lock       NARMA_Win_lock exclusive per target, Accumulate SUM into one slot of it, unlock;
 *              then NARMA_Win_lock shared, Get of that slot once all have added (a barrier);
 *   lock_all   NARMA_Win_lock_all, Put to every rank, NARMA_Win_flush, Get back, unlock_all;
 *   nonblocking NARMA_Win_ipost/istart, Put, icomplete, iwait, all through NARMA_Waitall;
 *              NARMA_Win_ilock_all, Fetch_and_op SUM on rank 0's counter, iflush_all,
 *              iunlock_all; NARMA_Win_ifence, Put to the left neighbour, ifence;
 *   notified   NARMA_Win_set_num_notify(1), inside lock_all NARMA_Put_notify_idx to the right
 *              neighbour and NARMA_Put_notify (tag = thread) to the left one, received with
 *              NARMA_Win_notify_ithreshold and NARMA_Notify_init from the neighbour;
 * checks every slot (and the fetched values: each rank's Fetch_and_op fetched a distinct one
 * of 0 .. np-1), detaches and frees the window, and the array. The first narma calls of the
 * process are the threads' concurrent window creations.
 *
 * Under MPICH the creations and frees take turns (each round: creation by thread 0..3, then
 * free by thread 0..3, the same order on every rank; the epochs still overlap other threads'
 * creations and frees): MPICH 5.0.2 itself fails when threads create or free MPI windows at once
 * (docs/conformance.md), and every narma window here is carried by MPI windows (the shm
 * transport's MPI_Win_allocate_shared, the mpi transport's data and control windows). Then
 * every rank's thread 0 makes the first narma calls of the process, the others' overlap them.
 */
#include "threads.h"
#include "../turns.h"

#define NT 4 /* threads per rank */

/* Kinds of slots, np of each (slot kind * np + origin rank). */
enum {
    S_FENCE,
    S_PSCW_R, /* from the right-hand neighbour's put */
    S_PSCW_L, /* from the left-hand one's (with two ranks: the same rank) */
    S_LOCK,   /* slot 0: the sum of every rank's accumulate */
    S_ALL,
    S_NB,
    S_FAO, /* slot 0 of rank 0: the counter */
    S_IFENCE,
    S_IDX,
    S_TAG,
    NKINDS
};

static int size;
static MPI_Comm comms[NT];
static struct test_turns turns = TEST_TURNS_INIT(NT);
static long rounds;
static long done_rounds[NT];

static int64_t value(long round, int t, int kind, int origin)
{
    return (int64_t)0x5100000000000000 | (int64_t)round << 32 | (int64_t)t << 24 |
           (int64_t)kind << 16 | origin;
}

struct tw {
    int t, rank, left, right, flavor;
    long round;
    MPI_Comm comm;
    NARMA_Win win;
    int64_t *mem;   /* this rank's window memory, NKINDS * size slots */
    void *array;    /* Win_create / attached memory (NULL for Win_allocate) */
    MPI_Aint *base; /* dynamic windows: every rank's address of its array */
};

static const char *flavor_name[] = {"Win_allocate", "Win_create", "Win_create_dynamic"};

static MPI_Aint disp(const struct tw *w, int target, int slot)
{
    if (w->flavor == 2) return w->base[target] + slot * (MPI_Aint)sizeof(int64_t);
    return slot;
}

static int slot_of(int kind, int origin) { return kind * size + origin; }

static void expect(const struct tw *w, int kind, int slot, int64_t want, const char *what)
{
    int64_t got = (int64_t)thr_load(&w->mem[slot]);
    CHECK(got == want, "round %ld, %s window, %s: slot %d holds %#llx, expected %#llx (kind %d)",
          w->round, flavor_name[w->flavor], what, slot, (unsigned long long)got,
          (unsigned long long)want, kind);
}

static void put1(const struct tw *w, int64_t v, int target, int slot)
{
    CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, target, disp(w, target, slot), 1, MPI_INT64_T, w->win));
}

static void create(struct tw *w)
{
    const MPI_Aint bytes = NKINDS * size * (MPI_Aint)sizeof(int64_t);
    const size_t page = 4096, alloc = ((size_t)bytes + page - 1) / page * page;
    w->array = NULL;
    w->base = NULL;
    switch (w->flavor) {
    case 0:
        CHECK_RC(
            NARMA_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, w->comm, &w->mem, &w->win));
        break;
    case 1:
        w->array = aligned_alloc(page, alloc);
        CHECK(w->array != NULL, "aligned_alloc of %zu bytes", alloc);
        memset(w->array, 0, alloc);
        w->mem = w->array;
        CHECK_RC(NARMA_Win_create(w->mem, bytes, sizeof(int64_t), MPI_INFO_NULL, w->comm, &w->win));
        break;
    case 2:
        w->array = aligned_alloc(page, alloc);
        CHECK(w->array != NULL, "aligned_alloc of %zu bytes", alloc);
        w->mem = w->array;
        CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, w->comm, &w->win));
        CHECK_RC(NARMA_Win_attach(w->win, w->mem, bytes));
        w->base = malloc(size * sizeof(MPI_Aint));
        MPI_Aint mine;
        CHECK_MPI(MPI_Get_address(w->mem, &mine));
        CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, w->base, 1, MPI_AINT, w->comm));
        break;
    }
    memset(w->mem, 0, (size_t)bytes);
    char name[64];
    snprintf(name, sizeof name, "thread %d round %ld", w->t, w->round);
    CHECK_RC(NARMA_Win_set_name(w->win, name));
    CHECK_MPI(MPI_Barrier(w->comm)); /* every rank's memory is zero before anyone writes */
}

static void destroy(struct tw *w)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    CHECK_RC(NARMA_Win_get_name(w->win, name, &len));
    char want[64];
    snprintf(want, sizeof want, "thread %d round %ld", w->t, w->round);
    CHECK(strcmp(name, want) == 0, "the window is named '%s', expected '%s'", name, want);
    if (w->flavor == 2) {
        CHECK_MPI(MPI_Barrier(w->comm)); /* nobody reaches the region any more */
        CHECK_RC(NARMA_Win_detach(w->win, w->mem));
    }
    test_turn_wait(&turns, w->round, 1, w->t);
    CHECK_RC(NARMA_Win_free(&w->win));
    test_turn_next(&turns, 1);
    CHECK(w->win == NARMA_WIN_NULL, "NARMA_Win_free left the handle set");
    free(w->array);
    free(w->base);
}

static void epoch_fence(struct tw *w)
{
    thr_phase("fence");
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOPRECEDE, w->win));
    put1(w, value(w->round, w->t, S_FENCE, w->rank), w->right, slot_of(S_FENCE, w->rank));
    CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOSUCCEED, w->win));
    expect(w, S_FENCE, slot_of(S_FENCE, w->left), value(w->round, w->t, S_FENCE, w->left),
           "fence: the left neighbour's put");
}

static void neighbours(const struct tw *w, MPI_Group *g)
{
    MPI_Group all;
    CHECK_MPI(MPI_Comm_group(w->comm, &all));
    int ranks[2] = {w->left, w->right};
    CHECK_MPI(MPI_Group_incl(all, w->left == w->right ? 1 : 2, ranks, g));
    CHECK_MPI(MPI_Group_free(&all));
}

static void epoch_pscw(struct tw *w)
{
    thr_phase("pscw");
    MPI_Group g;
    neighbours(w, &g);
    CHECK_RC(NARMA_Win_post(g, 0, w->win));
    CHECK_RC(NARMA_Win_start(g, 0, w->win));
    put1(w, value(w->round, w->t, S_PSCW_L, w->rank), w->right, slot_of(S_PSCW_L, w->rank));
    put1(w, value(w->round, w->t, S_PSCW_R, w->rank), w->left, slot_of(S_PSCW_R, w->rank));
    CHECK_RC(NARMA_Win_complete(w->win));
    CHECK_RC(NARMA_Win_wait(w->win));
    CHECK_MPI(MPI_Group_free(&g));
    expect(w, S_PSCW_L, slot_of(S_PSCW_L, w->left), value(w->round, w->t, S_PSCW_L, w->left),
           "pscw: the left neighbour's put");
    expect(w, S_PSCW_R, slot_of(S_PSCW_R, w->right), value(w->round, w->t, S_PSCW_R, w->right),
           "pscw: the right neighbour's put");
}

/* Every rank adds origin + 1 into slot (S_LOCK, 0) of every rank, under an exclusive lock. */
static void epoch_lock(struct tw *w)
{
    thr_phase("lock");
    const int64_t add = w->rank + 1, sum = (int64_t)size * (size + 1) / 2;
    for (int j = 0; j < size; j++) {
        int target = (w->rank + j) % size;
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, target, 0, w->win));
        CHECK_RC(NARMA_Accumulate(&add, 1, MPI_INT64_T, target, disp(w, target, slot_of(S_LOCK, 0)),
                                  1, MPI_INT64_T, MPI_SUM, w->win));
        CHECK_RC(NARMA_Win_unlock(target, w->win));
    }
    CHECK_MPI(MPI_Barrier(w->comm));
    int64_t got = -1;
    CHECK_RC(NARMA_Win_lock(NARMA_LOCK_SHARED, w->right, 0, w->win));
    CHECK_RC(NARMA_Get(&got, 1, MPI_INT64_T, w->right, disp(w, w->right, slot_of(S_LOCK, 0)), 1,
                       MPI_INT64_T, w->win));
    CHECK_RC(NARMA_Win_unlock(w->right, w->win));
    CHECK(got == sum, "round %ld, %s window, lock: rank %d's sum is %lld, expected %lld", w->round,
          flavor_name[w->flavor], w->right, (long long)got, (long long)sum);
    expect(w, S_LOCK, slot_of(S_LOCK, 0), sum, "lock: the sum of every rank's accumulate");
}

static void epoch_lock_all(struct tw *w)
{
    thr_phase("lock_all + flush");
    const int64_t v = value(w->round, w->t, S_ALL, w->rank);
    CHECK_RC(NARMA_Win_lock_all(0, w->win));
    for (int j = 0; j < size; j++) {
        int target = (w->rank + j) % size;
        put1(w, v, target, slot_of(S_ALL, w->rank));
        CHECK_RC(NARMA_Win_flush(target, w->win));
        int64_t back = -1;
        CHECK_RC(NARMA_Get(&back, 1, MPI_INT64_T, target, disp(w, target, slot_of(S_ALL, w->rank)),
                           1, MPI_INT64_T, w->win));
        CHECK_RC(NARMA_Win_flush_local(target, w->win));
        CHECK(back == v, "round %ld, %s window, lock_all: got %#llx back from rank %d, put %#llx",
              w->round, flavor_name[w->flavor], (unsigned long long)back, target,
              (unsigned long long)v);
    }
    CHECK_RC(NARMA_Win_unlock_all(w->win));
    CHECK_MPI(MPI_Barrier(w->comm));
    for (int o = 0; o < size; o++)
        expect(w, S_ALL, slot_of(S_ALL, o), value(w->round, w->t, S_ALL, o),
               "lock_all: every rank's put");
}

static void epoch_nonblocking(struct tw *w)
{
    thr_phase("nonblocking epochs");
    MPI_Group g;
    neighbours(w, &g);
    NARMA_Request r[4];
    CHECK_RC(NARMA_Win_ipost(g, 0, w->win, &r[0]));
    CHECK_RC(NARMA_Win_istart(g, 0, w->win, &r[1]));
    put1(w, value(w->round, w->t, S_NB, w->rank), w->right, slot_of(S_NB, w->rank));
    CHECK_RC(NARMA_Win_icomplete(w->win, &r[2]));
    CHECK_RC(NARMA_Win_iwait(w->win, &r[3]));
    CHECK_RC(NARMA_Waitall(4, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(r[i] == NARMA_REQUEST_NULL, "epoch request %d not freed by NARMA_Waitall", i);
    CHECK_MPI(MPI_Group_free(&g));
    expect(w, S_NB, slot_of(S_NB, w->left), value(w->round, w->t, S_NB, w->left),
           "ipost/istart: the left neighbour's put");

    /* Every rank adds 1 to rank 0's counter (S_FAO, 0) and gets a distinct former value. */
    NARMA_Request q;
    const int64_t one = 1;
    int64_t old = -1;
    CHECK_RC(NARMA_Win_ilock_all(0, w->win, &q));
    CHECK_RC(NARMA_Wait(&q, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Fetch_and_op(&one, &old, MPI_INT64_T, 0, disp(w, 0, slot_of(S_FAO, 0)), MPI_SUM,
                                w->win));
    CHECK_RC(NARMA_Win_iflush_all(w->win, &q));
    CHECK_RC(NARMA_Wait(&q, MPI_STATUS_IGNORE));
    CHECK_RC(NARMA_Win_iunlock_all(w->win, &q));
    CHECK_RC(NARMA_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(old >= 0 && old < size, "round %ld, %s window: Fetch_and_op fetched %lld, expected 0..%d",
          w->round, flavor_name[w->flavor], (long long)old, size - 1);
    int64_t *olds = malloc(size * sizeof *olds);
    CHECK_MPI(MPI_Allgather(&old, 1, MPI_INT64_T, olds, 1, MPI_INT64_T, w->comm));
    for (int a = 0; a < size; a++)
        for (int b = a + 1; b < size; b++)
            CHECK(olds[a] != olds[b], "ranks %d and %d both fetched %lld from the counter", a, b,
                  (long long)olds[a]);
    free(olds);
    if (w->rank == 0) expect(w, S_FAO, slot_of(S_FAO, 0), size, "Fetch_and_op: the counter");

    CHECK_RC(NARMA_Win_ifence(0, w->win, &q));
    CHECK_RC(NARMA_Wait(&q, MPI_STATUS_IGNORE));
    put1(w, value(w->round, w->t, S_IFENCE, w->rank), w->left, slot_of(S_IFENCE, w->rank));
    CHECK_RC(NARMA_Win_ifence(NARMA_MODE_NOSUCCEED, w->win, &q));
    CHECK_RC(NARMA_Wait(&q, MPI_STATUS_IGNORE));
    expect(w, S_IFENCE, slot_of(S_IFENCE, w->right), value(w->round, w->t, S_IFENCE, w->right),
           "ifence: the right neighbour's put");
}

static void epoch_notified(struct tw *w)
{
    thr_phase("notified");
    CHECK_RC(NARMA_Win_set_num_notify(w->win, MPI_INFO_NULL, 1));
    NARMA_Request note, thr;
    CHECK_RC(NARMA_Notify_init(w->win, w->right, w->t, 1, &note));
    CHECK_RC(NARMA_Start(&note));
    CHECK_RC(NARMA_Win_lock_all(0, w->win));
    const int64_t vi = value(w->round, w->t, S_IDX, w->rank);
    const int64_t vt = value(w->round, w->t, S_TAG, w->rank);
    CHECK_RC(NARMA_Put_notify_idx(&vi, 1, MPI_INT64_T, w->right,
                                  disp(w, w->right, slot_of(S_IDX, w->rank)), 1, MPI_INT64_T, 0,
                                  w->win));
    CHECK_RC(NARMA_Put_notify(&vt, 1, MPI_INT64_T, w->left,
                              disp(w, w->left, slot_of(S_TAG, w->rank)), 1, MPI_INT64_T, w->win,
                              w->t));
    CHECK_RC(NARMA_Win_notify_ithreshold(w->win, 0, 1, &thr));
    CHECK_RC(NARMA_Wait(&thr, MPI_STATUS_IGNORE));
    MPI_Status st;
    CHECK_RC(NARMA_Wait(&note, &st));
    CHECK(st.MPI_SOURCE == w->right && st.MPI_TAG == w->t,
          "notification (source %d, tag %d), expected (%d, %d)", st.MPI_SOURCE, st.MPI_TAG,
          w->right, w->t);
    expect(w, S_IDX, slot_of(S_IDX, w->left), value(w->round, w->t, S_IDX, w->left),
           "the left neighbour's counter-notified put");
    expect(w, S_TAG, slot_of(S_TAG, w->right), value(w->round, w->t, S_TAG, w->right),
           "the right neighbour's tag-notified put");
    CHECK_RC(NARMA_Win_unlock_all(w->win));
    MPI_Count c = -1;
    CHECK_RC(NARMA_Win_get_notify_value(w->win, 0, &c));
    CHECK(c == 1, "counter 0 is %lld, expected 1 (one put from the left neighbour)", (long long)c);
    CHECK_RC(NARMA_Request_free(&note));
    CHECK_MPI(MPI_Barrier(w->comm));
}

static void thread_main(void *arg, int t)
{
    (void)arg;
    struct tw w = {.t = t, .comm = comms[t]};
    CHECK_MPI(MPI_Comm_rank(w.comm, &w.rank));
    w.left = (w.rank + size - 1) % size;
    w.right = (w.rank + 1) % size;
    for (w.round = 0; w.round < rounds; w.round++) {
        w.flavor = (int)((t + w.round) % 3);
        thr_round(w.round);
        thr_phase("create");
        test_turn_wait(&turns, w.round, 0, t);
        create(&w);
        test_turn_next(&turns, 0);
        epoch_fence(&w);
        epoch_pscw(&w);
        epoch_lock(&w);
        epoch_lock_all(&w);
        epoch_nonblocking(&w);
        epoch_notified(&w);
        thr_phase("free");
        destroy(&w);
        done_rounds[t]++;
    }
}

int main(int argc, char **argv)
{
    thr_init(&argc, &argv, "test_threads_windows");
    size = test_size;
    rounds = env_long("NARMA_THREADS_TEST_ROUNDS", 6);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    CHECK_MPI(MPI_Get_library_version(lib, &liblen));
    turns.enabled = strstr(lib, "MPICH") != NULL ? TEST_TURNS_ALL : 0;
    if (env_long("NARMA_THREADS_TEST_SERIAL", 0)) turns.enabled = 0; /* one thread at a time */
    for (int t = 0; t < NT; t++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));

    thr_run(NT, thread_main, NULL);

    thr_phase("after the threads");
    for (int t = 0; t < NT; t++) {
        CHECK(done_rounds[t] == rounds, "thread %d finished %ld rounds of %ld", t, done_rounds[t],
              rounds);
        CHECK_MPI(MPI_Comm_free(&comms[t]));
    }
    if (test_rank == 0)
        printf("# %d threads x %ld rounds of windows (%s, %s, %s), every epoch kind%s\n", NT,
               rounds, flavor_name[0], flavor_name[1], flavor_name[2],
               turns.enabled ? " (MPICH: creation and free take turns)" : "");
    return test_finish();
}
