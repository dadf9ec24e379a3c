/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Ranks whose narma builds do not speak the same protocol (a memory layout or
 * record format of any transport, or the core's use of control words) must
 * not create a window together: each would misread what the others write.
 * Window creation compares the builds' wire versions in its first agreement,
 * before any transport exchanges a byte, and every rank refuses the window
 * with NARMA_ERR_UNSUPPORTED, no rank hangs, nothing is left behind.
 *
 * NARMA_TEST_WIRE=R (read at every window creation) makes world rank R answer
 * another version. Every flavor is tried with rank 1 and then the last rank
 * differing; then, without the hook, the same windows are created and carry
 * a notified put, as after any refused creation.
 */
#include "common.h"

#include <stdlib.h>

enum { F_ALLOCATE, F_CREATE, F_DYNAMIC, F_SHARED, NFLAVORS };
static const char *const flavor_name[NFLAVORS] = {"Win_allocate", "Win_create",
                                                  "Win_create_dynamic", "Win_allocate_shared"};
static int rank, size;
static int64_t user[8];

/* Create a window of the flavor over 64 bytes (mem: its memory on this rank). */
static int create(int f, NARMA_Win *win, int64_t **mem)
{
    switch (f) {
    case F_ALLOCATE:
        return NARMA_Win_allocate(sizeof user, 1, MPI_INFO_NULL, MPI_COMM_WORLD, mem, win);
    case F_CREATE:
        *mem = user;
        return NARMA_Win_create(user, sizeof user, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win);
    case F_DYNAMIC:
        *mem = user;
        return NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win);
    default:
        return NARMA_Win_allocate_shared(sizeof user, 1, MPI_INFO_NULL, MPI_COMM_WORLD, mem, win);
    }
}

static int shares_memory(void)
{
    MPI_Comm node;
    int n;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n == size && getenv("NARMA_NODE_SIZE") == NULL;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "wire_version", 50);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int nflavors = shares_memory() ? NFLAVORS : F_SHARED;
    const int odd[2] = {1, size - 1};
    char hook[16];

    for (int k = 0; k < 2; k++) {
        snprintf(hook, sizeof hook, "%d", odd[k]);
        CHECK(setenv("NARMA_TEST_WIRE", hook, 1) == 0, "setenv");
        for (int f = 0; f < nflavors; f++) {
            test_phase(flavor_name[f]);
            snprintf(test_detail, sizeof test_detail, "rank %d differs", odd[k]);
            NARMA_Win win = NARMA_WIN_NULL;
            int64_t *mem = NULL;
            CHECK_ERR(create(f, &win, &mem), NARMA_ERR_UNSUPPORTED);
            CHECK(win == NARMA_WIN_NULL, "a refused window was returned");
        }
    }

    CHECK(unsetenv("NARMA_TEST_WIRE") == 0, "unsetenv");
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int f = 0; f < nflavors; f++) {
        test_phase(flavor_name[f]);
        snprintf(test_detail, sizeof test_detail, "every rank the same build");
        NARMA_Win win = NARMA_WIN_NULL;
        int64_t *mem = NULL;
        memset(user, 0, sizeof user);
        CHECK_RC(create(f, &win, &mem));
        if (f == F_SHARED) memset(mem, 0, sizeof user);
        /* Each rank puts its number into its right neighbour's window, notified. */
        MPI_Aint disp = 8; /* bytes (disp_unit 1); a dynamic window's: right's address + 8 */
        if (f == F_DYNAMIC) {
            MPI_Aint mine, theirs;
            CHECK_RC(NARMA_Win_attach(win, user, sizeof user));
            CHECK_MPI(MPI_Get_address(&user[1], &mine));
            CHECK_MPI(MPI_Sendrecv(&mine, 1, MPI_AINT, left, 0, &theirs, 1, MPI_AINT, right, 0,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            disp = theirs;
        }
        NARMA_Request r;
        MPI_Status st;
        CHECK_RC(NARMA_Notify_init(win, left, 7, 1, &r));
        CHECK_RC(NARMA_Start(&r));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        const int64_t v = 100 + rank;
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_INT64_T, right, disp, 1, MPI_INT64_T, win, 7));
        CHECK_RC(NARMA_Wait(&r, &st));
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "status <%d, %d>", st.MPI_SOURCE,
              st.MPI_TAG);
        CHECK(mem[1] == 100 + left, "got %lld, expected %d", (long long)mem[1], 100 + left);
        CHECK_RC(NARMA_Request_free(&r));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (f == F_DYNAMIC) CHECK_RC(NARMA_Win_detach(win, user));
        CHECK_RC(NARMA_Win_free(&win));
    }
    return test_finish();
}
