/* narma-test: np=2 transports=shm,mpi timeout=60 passthrough=1 */
/*
 * MPI_Init_thread through libnarma-mpi (README: the level is MPI's, as narma reports it):
 *  - asking for MPI_THREAD_MULTIPLE gives what MPI gives (PMPI_Query_thread), except that with
 *    narma's lock turned off (NARMA_THREADS=off, test_thread_level_off) MULTIPLE becomes
 *    MPI_THREAD_SERIALIZED; always at least MPI_THREAD_SINGLE;
 *  - MPI_Query_thread reports the same level, MPI_Is_thread_main says this is the main thread;
 *  - a window made after MPI_Init_thread (rather than MPI_Init) is carried by narma and moves
 *    data.
 */
#include "common.h"

#include <narma/narma_mpix.h>

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    test_setup("pmpi test_thread_level", 45);

    test_phase("MPI_Init_thread(MPI_THREAD_MULTIPLE) gives MPI's level, as narma reports it");
    int mpi_level = -1;
    CHECK_MPI(PMPI_Query_thread(&mpi_level));
    const char *threads = getenv("NARMA_THREADS"), *pmpi = getenv("NARMA_PMPI");
    int lock_off = threads != NULL && (strcmp(threads, "off") == 0 || strcmp(threads, "0") == 0);
    int passthrough = pmpi != NULL && strcmp(pmpi, "off") == 0;
    /* narma answers even when it carries no window (NARMA_PMPI=off): the program may still
     * call narma's API through MPIX_ calls */
    int want = mpi_level == MPI_THREAD_MULTIPLE && lock_off ? MPI_THREAD_SERIALIZED : mpi_level;
    CHECK(provided == want && provided >= MPI_THREAD_SINGLE,
          "provided %d, expected %d (MPI: %d; SINGLE %d, SERIALIZED %d, MULTIPLE %d)", provided,
          want, mpi_level, MPI_THREAD_SINGLE, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE);
    if (test_rank == 0)
        printf("MPI gives level %d, libnarma-mpi reports %d%s\n", mpi_level, provided,
               lock_off ? " (NARMA_THREADS=off)" : "");
    int q = -1, main_thread = 0;
    CHECK_MPI(MPI_Query_thread(&q));
    CHECK(q == provided, "MPI_Query_thread says %d, MPI_Init_thread gave %d", q, provided);
    CHECK_MPI(MPI_Is_thread_main(&main_thread));
    CHECK(main_thread, "MPI_Is_thread_main is false in the main thread");

    test_phase("a window after MPI_Init_thread is carried and moves data");
    int *mem, right = (test_rank + 1) % test_size, left = (test_rank + test_size - 1) % test_size;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_errors_return(win);
    NARMA_Win nw = NARMA_WIN_NULL;
    CHECK_MPI(MPIX_Win_get_narma(win, &nw));
    CHECK(passthrough || nw != NARMA_WIN_NULL, "no narma window behind the window");
    *mem = -1;
    int v = test_val(1, test_rank, 0);
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(*mem == test_val(1, left, 0), "got %d, expected %d", *mem, test_val(1, left, 0));
    CHECK_MPI(MPI_Win_free(&win));
    return test_finish();
}
