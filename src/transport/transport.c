/* Transport selection and "not supported" stubs. */
#include "transport/transport.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int narmat_enosys_attach(struct narmat_win *w, void *base, MPI_Aint size)
{
    return NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "attach on transport %s", narmat_name(w));
}

int narmat_enosys_detach(struct narmat_win *w, const void *base)
{
    return NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "detach on transport %s", narmat_name(w));
}

int narmat_enosys_shared_query(struct narmat_win *w, int target, MPI_Aint *size, int *disp_unit,
                               void **base)
{
    return NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "shared_query on transport %s", narmat_name(w));
}

int narmat_enosys_note(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                       int (*move)(void *move_arg), void *move_arg)
{
    return NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "notification without data on transport %s",
                      narmat_name(w));
}

int narmat_rput_notify_now(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                           int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                           uint64_t *ticket)
{
    *ticket = 0;
    return narmat_put_notify(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag);
}

int narmat_ticket_none(struct narmat_win *w, int target, uint64_t ticket) { return 1; }

int narmat_pput_none(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                     int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                     struct narmat_pput *p)
{
    return NARMAT_NO_PREP;
}

int narmat_pput_nostart(struct narmat_win *w, const struct narmat_pput *p)
{
    return NARMAU_ERR(NARMA_ERR_INTERN, "no prepared puts on transport %s", narmat_name(w));
}

int narmat_notify_prep_none(struct narmat_win *w, int target) { return NARMA_SUCCESS; }

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

const char *narmat_own_name(struct narmat_win *w, int target) { return w->ops->name; }

/* The transport layer's environment (narmat_configure). */
static struct {
    int force_mpi; /* NARMA_TRANSPORT=mpi */
    int node_size; /* NARMA_NODE_SIZE: pretend nodes of k world ranks, 0: the machine's */
} narmat_cfg;

void narmat_configure(void)
{
    /* NARMA_TRANSPORT: auto (default) or shm (shm wherever it applies), mpi (mpi everywhere). */
    const char *t = getenv("NARMA_TRANSPORT");
    narmat_cfg.force_mpi = t != NULL && strcmp(t, "mpi") == 0;
    if (t != NULL && *t != '\0' && strcmp(t, "auto") && strcmp(t, "shm") && strcmp(t, "mpi"))
        fprintf(stderr, "narma: unknown NARMA_TRANSPORT=%s, using auto\n", t);
    /* NARMA_NODE_SIZE=k: pretend nodes of k consecutive MPI_COMM_WORLD ranks. */
    const char *v = getenv("NARMA_NODE_SIZE");
    char *end = NULL;
    long k = v != NULL && *v != '\0' ? strtol(v, &end, 10) : 0;
    if (v != NULL && *v != '\0' && (*end != '\0' || k < 0 || k > INT_MAX)) {
        fprintf(stderr, "narma: ignoring NARMA_NODE_SIZE=%s (not a rank count)\n", v);
        k = 0;
    }
    narmat_cfg.node_size = (int)k;
}

int narmat_node_comm(MPI_Comm comm, MPI_Comm *node)
{
    MPI_Comm shared;
    int k = narmat_cfg.node_size;
    NARMAU_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    if (k == 0) {
        *node = shared;
        return NARMA_SUCCESS;
    }
    int world, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_rank(comm, &rank);
    int mrc = MPI_Comm_split(shared, world / k, rank, node);
    MPI_Comm_free(&shared);
    return mrc == MPI_SUCCESS ? NARMA_SUCCESS : narmau_mpi_error(mrc);
}

/* Win_allocate_shared: every rank of comm on one node (pretend nodes of NARMA_NODE_SIZE
 * count as nodes), else NARMA_ERR_UNSUPPORTED. Sharing a node is an equivalence, so every
 * rank reaches the same verdict without asking the others. shm serves the window; with
 * NARMA_TRANSPORT=mpi, mpi does (over MPI's own shared allocation: still load/store). */
static int select_shared(MPI_Comm comm, const struct narmat_ops **ops)
{
    MPI_Comm node;
    int rc = narmat_node_comm(comm, &node);
    if (rc) return rc;
    int size, nsize;
    MPI_Comm_size(comm, &size);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    if (nsize != size)
        return NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                          "Win_allocate_shared: the communicator's %d ranks do not all share "
                          "memory (%d on this process's node%s)",
                          size, nsize, narmat_cfg.node_size ? ", NARMA_NODE_SIZE" : "");
    *ops = narmat_cfg.force_mpi ? &narmat_mpi_ops : &narmat_shm_ops;
    return narmat_ops_check(*ops);
}

/* Per window, from the nodes its ranks are on (narmat_node_comm):
 *   every rank on one node          shm (Win_allocate, Win_create; dynamic windows once shm
 *                                   can attach), mpi otherwise;
 *   one rank per node               mpi;
 *   anything between                hybrid: shm between the ranks of a node, mpi between nodes.
 * A window shm refuses on every rank (user memory it cannot share) falls back: narmat_fallback.
 * NARMA_TRANSPORT=mpi forces mpi everywhere; =shm means "shm wherever it applies", as auto.
 * Win_allocate_shared windows: select_shared. Collective over comm. */
int narmat_select(MPI_Comm comm, int flavor, const struct narmat_ops **ops)
{
    *ops = &narmat_mpi_ops;
    if (flavor == MPI_WIN_FLAVOR_SHARED) return select_shared(comm, ops);
    int shm_serves =
        flavor != MPI_WIN_FLAVOR_DYNAMIC || narmat_shm_ops.attach != narmat_enosys_attach;
    if (narmat_cfg.force_mpi || !shm_serves) return narmat_ops_check(*ops);
    MPI_Comm node;
    int rc = narmat_node_comm(comm, &node);
    if (rc) return rc;
    int size, nsize;
    MPI_Comm_size(comm, &size);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    /* Sharing a node is an equivalence: when one rank's node holds every rank, every rank's
     * does, and all of them see it without asking the others. Otherwise MIN over ranks of
     * {every rank on one node (0 by now), every rank alone on its node}. */
    int mine[2] = {nsize == size, nsize == 1}, all[2] = {1, 0};
    if (!mine[0]) NARMAU_MPI(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, comm));
    if (all[0])
        *ops = &narmat_shm_ops;
    else if (!all[1])
        *ops = &narmat_hybrid_ops;
    return narmat_ops_check(*ops);
}

int narmat_fallback(const struct narmat_ops **ops)
{
    if (*ops == &narmat_mpi_ops) return NARMA_ERR_UNSUPPORTED;
    *ops = &narmat_mpi_ops;
    return narmat_ops_check(*ops);
}

int narmat_bounds_error(int target, MPI_Aint disp, int unit, MPI_Aint lo, MPI_Aint hi,
                        MPI_Aint size)
{
    return NARMAU_ERR(
        NARMA_ERR_DISP,
        "displacement %ld (unit %d), bytes [%ld, %ld) outside rank %d's window of %ld "
        "bytes",
        (long)disp, unit, (long)lo, (long)hi, target, (long)size);
}

/* This process's rank in MPI_COMM_WORLD: the test hooks name processes by it. */
static int world_rank(void)
{
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* The core's version is the top byte, below 128 (NARMA_TEST_WIRE flips bit 31); each transport's
 * layout is one byte (each asserts it is below 256 where it is defined). */
_Static_assert(NARMAT_WIRE_CORE < 128, "the core's wire version fits its byte");

uint32_t narmat_wire_version(void)
{
    uint32_t v = (uint32_t)NARMAT_WIRE_CORE << 24 | (narmat_shm_ops.layout & 0xff) << 16 |
                 (narmat_mpi_ops.layout & 0xff) << 8 | (narmat_hybrid_ops.layout & 0xff);
    const char *h = getenv("NARMA_TEST_WIRE");
    if (h != NULL && *h != '\0' && strtol(h, NULL, 10) == world_rank()) v ^= UINT32_C(0x80000000);
    return v;
}

int narmat_test_fail_alloc(int stage)
{
    const char *v = getenv("NARMA_TEST_FAIL_ALLOC");
    if (v == NULL || *v == '\0') return 0;
    char *end;
    long r = strtol(v, &end, 10), at = 1;
    if (*end == ':') at = strtol(end + 1, &end, 10);
    return *end == '\0' && r == world_rank() && at == stage;
}
