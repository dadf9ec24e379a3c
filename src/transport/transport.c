/* Transport selection and "not supported" stubs. */
#include "transport/transport.h"

#include <stdio.h>
#include <stdlib.h>

int narmat_enosys_attach(struct narmat_win *w, void *base, MPI_Aint size)
{
    return NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "attach on transport %s", narmat_name(w));
}

int narmat_enosys_detach(struct narmat_win *w, const void *base)
{
    return NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "detach on transport %s", narmat_name(w));
}

/* The table is read at the offsets this build of the core expects: a table
 * built against another layout (an entry added or removed) would be called
 * through the wrong pointers. Its size is the version check. A broken build,
 * not a usage error: said on stderr even without NARMA_VERBOSE. */
int narmat_ops_check(const struct narmat_ops *ops)
{
    if (ops->size == sizeof(struct narmat_ops)) return NARMA_SUCCESS;
    fprintf(stderr,
            "narma: transport '%s' has a %zu-byte operations table, the core expects %zu: it was "
            "built against another transport.h (NARMAT_OPS_VERSION %d); refusing it\n",
            ops->name, ops->size, sizeof(struct narmat_ops), NARMAT_OPS_VERSION);
    return NARMA_ERR_INTERN;
}

/* shm serves every flavor of window when every rank of the communicator
 * shares memory with every other (a Win_create window whose memory some rank
 * cannot share, or a dynamic window whose ranks cannot reach one another's
 * memory, falls back: narmat_fallback); ranks on several nodes use the
 * portable mpi transport.
 * NARMA_TRANSPORT=mpi forces mpi everywhere; =shm means "shm wherever it
 * applies". Collective over comm. */
int narmat_select(MPI_Comm comm, int flavor, const struct narmat_ops **ops)
{
    *ops = &narmat_mpi_ops;
    if (narmai_g.forced_transport == 2) return narmat_ops_check(*ops);
    MPI_Comm node;
    int size, nsize, all_local;
    NARMAU_MPI(MPI_Comm_size(comm, &size));
    NARMAU_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    NARMAU_MPI(MPI_Comm_size(node, &nsize));
    MPI_Comm_free(&node);
    int mine = nsize == size;
    NARMAU_MPI(MPI_Allreduce(&mine, &all_local, 1, MPI_INT, MPI_LAND, comm));
    if (all_local) *ops = &narmat_shm_ops;
    return narmat_ops_check(*ops);
}

int narmat_fallback(const struct narmat_ops **ops)
{
    if (*ops == &narmat_mpi_ops) return NARMA_ERR_UNSUPPORTED;
    *ops = &narmat_mpi_ops;
    return narmat_ops_check(*ops);
}

int narmat_test_fail_alloc(int rank, int stage)
{
    const char *v = getenv("NARMA_TEST_FAIL_ALLOC");
    if (v == NULL || *v == '\0') return 0;
    char *end;
    long r = strtol(v, &end, 10), at = 1;
    if (*end == ':') at = strtol(end + 1, &end, 10);
    return *end == '\0' && r == rank && at == stage;
}
