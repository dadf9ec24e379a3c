/* narma-test: np=2 transports=shm,mpi timeout=60 */
/*
 * NARMA_Init_thread and NARMA_Query_thread (narma.h): the arguments are checked before MPI is
 * touched (a bad level or a NULL provided is NARMA_ERR_ARG, MPI stays uninitialised); then
 * NARMA_Init_thread starts MPI at the level asked for and says what narma offers, which
 * NARMA_Query_thread repeats: MPI's level, or MPI_THREAD_SERIALIZED under MPI_THREAD_MULTIPLE
 * with NARMA_THREADS=off. A second NARMA_Init_thread only reports. NARMA_Finalize finalises
 * the MPI it started.
 */
#include "common.h"

int main(int argc, char **argv)
{
    test_name = "init_thread";
    int provided = -1, up = 0;

    /* Before MPI: refusals that leave MPI alone (CHECK could not abort a job yet: exit). */
    if (NARMA_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE + 1, &provided) != NARMA_ERR_ARG ||
        NARMA_Init_thread(&argc, &argv, MPI_THREAD_SINGLE - 1, &provided) != NARMA_ERR_ARG ||
        NARMA_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, NULL) != NARMA_ERR_ARG) {
        fprintf(stderr, "FAIL init_thread: a bad level or a NULL provided was not refused\n");
        return 1;
    }
    MPI_Initialized(&up);
    if (up) {
        fprintf(stderr, "FAIL init_thread: a refused NARMA_Init_thread initialised MPI\n");
        return 1;
    }

    if (NARMA_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != NARMA_SUCCESS) {
        fprintf(stderr, "FAIL init_thread: NARMA_Init_thread(MPI_THREAD_MULTIPLE) failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &test_size);

    test_phase("levels");
    int mpi_level = -1, level = -1;
    CHECK_MPI(MPI_Query_thread(&mpi_level));
    const char *env = getenv("NARMA_THREADS");
    const int off = env != NULL && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0);
    const int want = mpi_level == MPI_THREAD_MULTIPLE && off ? MPI_THREAD_SERIALIZED : mpi_level;
    CHECK(provided == want, "NARMA_Init_thread provided %d, MPI gives %d: want %d", provided,
          mpi_level, want);
    CHECK_RC(NARMA_Query_thread(&level));
    CHECK(level == provided, "NARMA_Query_thread says %d, NARMA_Init_thread said %d", level,
          provided);
    CHECK_ERR(NARMA_Query_thread(NULL), NARMA_ERR_ARG);

    test_phase("second call");
    int again = -1;
    CHECK_RC(NARMA_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &again));
    CHECK(again == provided, "a second NARMA_Init_thread says %d, the first %d", again, provided);

    test_phase("finish");
    MPI_Barrier(MPI_COMM_WORLD);
    if (test_rank == 0) printf("PASS init_thread (np=%d, level %d)\n", test_size, provided);
    CHECK_RC(NARMA_Finalize());
    MPI_Finalized(&up);
    if (!up) {
        fprintf(stderr, "FAIL init_thread: NARMA_Finalize left MPI up\n");
        return 1;
    }
    return 0;
}
