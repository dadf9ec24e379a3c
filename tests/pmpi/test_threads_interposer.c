/* narma-test: np=2,4 transports=shm,mpi timeout=120 passthrough=1 */
/*
 * libnarma-mpi under MPI_THREAD_MULTIPLE: plain MPI calls from 4 threads per rank at once, so
 * that the library's window and request tables are used concurrently:
 *  - each thread, on its own duplicate of MPI_COMM_WORLD, makes a window (allocate, create
 *    over its own array, dynamic with one attached region, in turn) while the others use and
 *    free theirs: the window table changes under the other threads' lookups. Creation and
 *    MPI_Win_free themselves take turns (each round: creation by thread 0, 1, 2, 3, then free
 *    by thread 0, 1, 2, 3, the same order on every rank, as collectives on several
 *    communicators must be): MPICH 5.0.2 does not survive
 *    them at once, without narma too (the passthrough run: "Assertion failed in
 *    mpidu_shm_alloc.c: shm_seg != NULL" in MPI_Win_free, or a crash in MPI_Finalize, in
 *    about 1 run in 10 at 4 ranks). narma's own creation from several threads at once is
 *    tests/mpi/test_threads_windows.c;
 *  - in a lock_all epoch it puts to its right neighbour with MPI_Rput + MPI_Wait, MPI_Put +
 *    flush, MPI_Raccumulate polled with MPI_Test, gets back with MPI_Rget + MPI_Waitall beside
 *    an MPI_Isend/MPI_Irecv pair on its communicator (narma's and MPI's requests in one array);
 *  - all threads of all ranks MPI_Fetch_and_op one counter at rank 0 on a shared window: every
 *    value from 0 to the total is fetched exactly once;
 *  - every round's data is checked at the target after a barrier on the thread's communicator.
 * Skipped (77) when MPI does not give MPI_THREAD_MULTIPLE.
 */
#include "common.h"

#include "../turns.h"

#include <pthread.h>

#define NT    4
#define SLOTS 8 /* ints per window: [0] Rput, [1] Put, [2] Raccumulate (sum), [3..] spare */

static int rounds;
static MPI_Comm comms[NT];
static MPI_Win counter_win;
static int *counter_mem;
static unsigned char *seen; /* rank 0: fetched values */
static long *fetched;       /* per thread: values it fetched, sent to rank 0 at the end */
static int nfetch;          /* per thread per round */
static struct test_turns turns = TEST_TURNS_INIT(NT); /* see the header */

static void thread_round(int t, int round, MPI_Comm comm, long *out)
{
    const int right = (test_rank + 1) % test_size, left = (test_rank + test_size - 1) % test_size;
    const int flavor = round % 3; /* 0 allocate, 1 create, 2 dynamic */
    int *mem = NULL, *own = NULL;
    MPI_Aint base_addr = 0;
    MPI_Win win;
    test_turn_wait(&turns, round, 0, t);
    if (flavor == 0) {
        CHECK_MPI(
            MPI_Win_allocate(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &mem, &win));
    } else if (flavor == 1) {
        own = calloc(SLOTS, sizeof(int));
        mem = own;
        CHECK_MPI(MPI_Win_create(mem, SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &win));
    } else {
        own = calloc(SLOTS, sizeof(int));
        mem = own;
        CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
        CHECK_MPI(MPI_Win_attach(win, mem, SLOTS * sizeof(int)));
        CHECK_MPI(MPI_Get_address(mem, &base_addr));
    }
    test_turn_next(&turns, 0);
    test_errors_return(win);
    for (int i = 0; i < SLOTS; i++)
        mem[i] = -1;
    mem[2] = 0;
    /* the right neighbour's base address (dynamic windows address by it) */
    MPI_Aint right_base = 0;
    CHECK_MPI(MPI_Sendrecv(&base_addr, 1, MPI_AINT, left, 1, &right_base, 1, MPI_AINT, right, 1,
                           comm, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Barrier(comm)); /* every target initialised its slots */
#define AT(i) (flavor == 2 ? right_base + (MPI_Aint)((i) * sizeof(int)) : (MPI_Aint)(i))

    CHECK_MPI(MPI_Win_lock_all(0, win));
    int v0 = test_val(round, test_rank, t), v1 = v0 + 1, add = v0 + 2;
    MPI_Request r;
    CHECK_MPI(MPI_Rput(&v0, 1, MPI_INT, right, AT(0), 1, MPI_INT, win, &r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the request");
    CHECK_MPI(MPI_Put(&v1, 1, MPI_INT, right, AT(1), 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_MPI(MPI_Raccumulate(&add, 1, MPI_INT, right, AT(2), 1, MPI_INT, MPI_SUM, win, &r));
    for (int flag = 0; !flag;)
        CHECK_MPI(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_flush(right, win));
    /* a get of what we put, beside a message exchange on the same communicator */
    int g[2] = {-2, -2}, msg_out = v0, msg_in = -3;
    MPI_Request rs[4];
    CHECK_MPI(MPI_Irecv(&msg_in, 1, MPI_INT, left, 2, comm, &rs[0]));
    CHECK_MPI(MPI_Rget(&g[0], 1, MPI_INT, right, AT(0), 1, MPI_INT, win, &rs[1]));
    CHECK_MPI(MPI_Isend(&msg_out, 1, MPI_INT, right, 2, comm, &rs[2]));
    CHECK_MPI(MPI_Rget(&g[1], 1, MPI_INT, right, AT(1), 1, MPI_INT, win, &rs[3]));
    MPI_Status st[4];
    CHECK_MPI(MPI_Waitall(4, rs, st));
    CHECK(g[0] == v0 && g[1] == v1, "thread %d round %d: got back %d %d, expected %d %d", t, round,
          g[0], g[1], v0, v1);
    int lv = test_val(round, left, t);
    CHECK(msg_in == lv && st[0].MPI_SOURCE == left && st[0].MPI_TAG == 2,
          "thread %d round %d: message %d from %d tag %d, expected %d from %d", t, round, msg_in,
          st[0].MPI_SOURCE, st[0].MPI_TAG, lv, left);
    /* the shared counter */
    for (int k = 0; k < nfetch; k++) {
        long one = 1, old = -1;
        CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, counter_win));
        CHECK_MPI(MPI_Win_flush(0, counter_win));
        out[k] = old;
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(comm)); /* every origin's epoch is over: the data is here */
    /* read in an epoch on this rank's own window (MPI_Win_sync needs one under MPICH) */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, test_rank, 0, win));
    CHECK_MPI(MPI_Win_sync(win));
    CHECK(mem[0] == lv && mem[1] == lv + 1 && mem[2] == lv + 2,
          "thread %d round %d flavor %d: slots %d %d %d, expected %d %d %d", t, round, flavor,
          mem[0], mem[1], mem[2], lv, lv + 1, lv + 2);
    CHECK_MPI(MPI_Win_unlock(test_rank, win));
    CHECK_MPI(MPI_Barrier(comm)); /* nobody reads this window any more */
    if (flavor == 2) CHECK_MPI(MPI_Win_detach(win, mem));
    test_turn_wait(&turns, round, 1, t);
    CHECK_MPI(MPI_Win_free(&win));
    test_turn_next(&turns, 1);
    free(own);
#undef AT
}

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int round = 0; round < rounds; round++)
        thread_round(t, round, comms[t], fetched + ((size_t)t * rounds + round) * nfetch);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    test_setup("pmpi test_threads_interposer", 110);
    if (provided != MPI_THREAD_MULTIPLE) {
        char why[96];
        snprintf(why, sizeof why, "MPI gives thread level %d, not MPI_THREAD_MULTIPLE", provided);
        return test_skip(why);
    }
    rounds = (int)env_long("NARMA_TEST_ROUNDS", 100);
    nfetch = 8;
    for (int t = 0; t < NT; t++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    CHECK_MPI(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &counter_mem, &counter_win));
    test_errors_return(counter_win);
    *(long *)counter_mem = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, counter_win));
    const size_t per_rank = (size_t)NT * rounds * nfetch;
    fetched = malloc(per_rank * sizeof(long));
    CHECK(fetched != NULL, "out of memory");

    test_phase("4 threads: windows made, used and freed at once; one shared counter");
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) == 0,
              "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    CHECK_MPI(MPI_Win_unlock_all(counter_win));

    test_phase("every counter value fetched exactly once");
    const long total = (long)per_rank * test_size;
    long *all = test_rank == 0 ? malloc((size_t)total * sizeof(long)) : NULL;
    CHECK(test_rank != 0 || all != NULL, "out of memory");
    CHECK_MPI(MPI_Gather(fetched, (int)per_rank, MPI_LONG, all, (int)per_rank, MPI_LONG, 0,
                         MPI_COMM_WORLD));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (test_rank == 0) {
        /* this rank's own counter, read in an epoch on it */
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, counter_win));
        CHECK_MPI(MPI_Win_sync(counter_win));
        CHECK(*(long *)counter_mem == total, "counter %ld, expected %ld", *(long *)counter_mem,
              total);
        seen = calloc((size_t)total, 1);
        CHECK(seen != NULL, "out of memory");
        for (long i = 0; i < total; i++) {
            CHECK(all[i] >= 0 && all[i] < total && !seen[all[i]], "value %ld fetched %s", all[i],
                  all[i] >= 0 && all[i] < total ? "twice" : "out of range");
            if (all[i] >= 0 && all[i] < total) seen[all[i]] = 1;
        }
        free(seen);
        free(all);
        CHECK_MPI(MPI_Win_unlock(0, counter_win));
    }
    free(fetched);
    CHECK_MPI(MPI_Win_free(&counter_win));
    for (int t = 0; t < NT; t++)
        CHECK_MPI(MPI_Comm_free(&comms[t]));
    return test_finish();
}
