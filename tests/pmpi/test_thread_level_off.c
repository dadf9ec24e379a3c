/* narma-test: np=2 transports=shm,mpi timeout=60 env=NARMA_THREADS=off */
/* test_thread_level with narma's lock turned off: MPI_THREAD_MULTIPLE is reported as
 * MPI_THREAD_SERIALIZED (see there). */
#include "test_thread_level.c"
