/* Transport selection and "not supported" stubs. */
#include "transport/transport.h"

int narmat_enosys_attach(struct narmai_win *w, void *base, MPI_Aint size)
{
    return NARMAI_ERR(NARMA_ERR_UNSUPPORTED, "attach on transport %s", w->ops->name);
}

int narmat_enosys_detach(struct narmai_win *w, const void *base)
{
    return NARMAI_ERR(NARMA_ERR_UNSUPPORTED, "detach on transport %s", w->ops->name);
}

/* shm serves windows whose memory narma allocates when every rank of the
 * communicator shares memory with every other; everything else (user memory
 * from Win_create, dynamic windows, ranks on several nodes) uses the portable
 * mpi transport. NARMA_TRANSPORT=mpi forces mpi everywhere; =shm means "shm
 * wherever it applies". Collective over comm. */
int narmat_select(MPI_Comm comm, int flavor, const struct narmat_ops **ops)
{
    *ops = &narmat_mpi_ops;
    if (narmai_g.forced_transport == 2 || flavor != MPI_WIN_FLAVOR_ALLOCATE) return NARMA_SUCCESS;
    MPI_Comm node;
    int size, nsize, all_local;
    NARMAI_MPI(MPI_Comm_size(comm, &size));
    NARMAI_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    NARMAI_MPI(MPI_Comm_size(node, &nsize));
    MPI_Comm_free(&node);
    int mine = nsize == size;
    NARMAI_MPI(MPI_Allreduce(&mine, &all_local, 1, MPI_INT, MPI_LAND, comm));
    if (all_local) *ops = &narmat_shm_ops;
    return NARMA_SUCCESS;
}
