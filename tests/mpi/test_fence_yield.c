/* narma-test: np=2,3,4 transports=shm,mpi timeout=120 */
/*
 * A fence opens an access epoch on every rank whether or not the program uses it; an epoch it
 * left empty gives way to the other synchronisation (lock, lock_all, post, start), as MPI
 * allows. Here the fence is an ifence whose barrier is still pending (rank 0 reaches the fence
 * late), so the epoch that gives way is one narma has not started: the deferred engine must
 * drop it without leaving anything pointing at it, order the next epoch after the fence, and
 * keep pairing the ranks' fences. Each round, by kind:
 *   - lock_all, Put to the right neighbour, unlock_all;
 *   - lock (exclusive), Put, unlock;
 *   - start/complete toward the right neighbour with post/wait from the left;
 *   - ipost/istart (nonblocking openings) the same way;
 *   - nothing: the closing fence alone;
 * then an ifence with MPI_MODE_NOSUCCEED (a first fence after the epoch gave way) and a
 * barrier, after which the word the left neighbour put is checked. A Put after the epoch gave
 * way and before any other epoch is refused (NARMA_ERR_RMA_SYNC).
 */
#include "common.h"

#define ROUNDS 40
enum { K_LOCK_ALL, K_LOCK, K_PSCW, K_IPSCW, K_NONE, NKINDS };
static const char *const kind_name[NKINDS] = {"lock_all", "lock", "PSCW", "ipost/istart",
                                              "nothing"};

static int rank, size, right, left;

static int64_t val(int round, int origin) { return (int64_t)round << 20 | origin << 4 | 7; }

static MPI_Group group_of(MPI_Group world, int r)
{
    MPI_Group g;
    CHECK_MPI(MPI_Group_incl(world, 1, &r, &g));
    return g;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_fence_yield", 110);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    int64_t *mem = NULL;
    NARMA_Win win;
    MPI_Group world, to_right, from_left;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    to_right = group_of(world, right);
    from_left = group_of(world, left);
    CHECK_RC(NARMA_Win_allocate(8 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &mem, &win));
    for (int i = 0; i < 8; i++)
        mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("an empty epoch of a pending ifence gives way");
    for (int round = 0; round < ROUNDS; round++) {
        const int kind = round % NKINDS;
        snprintf(test_detail, sizeof test_detail, "round %d, %s", round, kind_name[kind]);
        const int64_t v = val(round, rank);
        NARMA_Request open = NARMA_REQUEST_NULL, close = NARMA_REQUEST_NULL;
        if (rank == 0) usleep(2000); /* the others' ifence stays pending meanwhile */
        CHECK_RC(NARMA_Win_ifence(0, win, &open));
        switch (kind) {
        case K_LOCK_ALL:
            CHECK_RC(NARMA_Win_lock_all(0, win));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
            CHECK_RC(NARMA_Win_unlock_all(win));
            break;
        case K_LOCK:
            CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, right, 0, win));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
            CHECK_RC(NARMA_Win_unlock(right, win));
            break;
        case K_PSCW:
            CHECK_RC(NARMA_Win_post(from_left, 0, win));
            CHECK_RC(NARMA_Win_start(to_right, 0, win));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
            CHECK_RC(NARMA_Win_complete(win));
            CHECK_RC(NARMA_Win_wait(win));
            break;
        case K_IPSCW: {
            NARMA_Request r[4];
            CHECK_RC(NARMA_Win_ipost(from_left, 0, win, &r[0]));
            CHECK_RC(NARMA_Win_istart(to_right, 0, win, &r[1]));
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
            CHECK_RC(NARMA_Win_icomplete(win, &r[2]));
            CHECK_RC(NARMA_Win_iwait(win, &r[3]));
            CHECK_RC(NARMA_Waitall(4, r, MPI_STATUSES_IGNORE));
            break;
        }
        default:
            break;
        }
        if (kind != K_NONE) {
            /* The epoch gave way and the one after it is closed: no epoch is open. */
            CHECK_ERR(NARMA_Put(&v, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, win),
                      NARMA_ERR_RMA_SYNC);
            CHECK_RC(NARMA_Win_ifence(MPI_MODE_NOSUCCEED, win, &close));
        } else {
            CHECK_RC(NARMA_Put(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
            CHECK_RC(NARMA_Win_ifence(MPI_MODE_NOSUCCEED, win, &close));
        }
        CHECK_RC(NARMA_Wait(&open, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&close, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(mem[0] == val(round, left), "round %d (%s): word 0 is %llx, not %llx", round,
              kind_name[kind], (unsigned long long)mem[0], (unsigned long long)val(round, left));
        CHECK(mem[1] == -1, "round %d: word 1 written by a refused Put", round);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    test_phase("free");
    CHECK_RC(NARMA_Win_free(&win));
    CHECK_MPI(MPI_Group_free(&to_right));
    CHECK_MPI(MPI_Group_free(&from_left));
    CHECK_MPI(MPI_Group_free(&world));
    return test_finish();
}
