/* narma-test: np=3,4 transports=shm,mpi timeout=60 env=NARMA_FENCE_FLAT_MAX=0 */
/* The fence tests again with the dissemination barrier that narma uses for
 * windows larger than NARMA_FENCE_FLAT_MAX ranks (forced here at 3 and 4). */
#include "test_fence.c"
