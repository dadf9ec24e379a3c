/* Transport selection and "not supported" stubs. */
#include "transport/transport.h"

#include <limits.h>
#include <pthread.h>
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
    int net_ofi;   /* NARMA_TRANSPORT=ofi: ofi instead of mpi between nodes */
    int node_size; /* NARMA_NODE_SIZE: pretend nodes of k world ranks, 0: the machine's */
} narmat_cfg;

void narmat_configure(void)
{
    /* NARMA_TRANSPORT: auto (default) or shm (shm wherever it applies), mpi (mpi everywhere),
     * ofi (as auto, with ofi instead of mpi between nodes; where narma was built with it). */
    const char *t = getenv("NARMA_TRANSPORT");
    narmat_cfg.force_mpi = t != NULL && strcmp(t, "mpi") == 0;
    narmat_cfg.net_ofi = t != NULL && strcmp(t, "ofi") == 0;
#ifndef NARMA_HAVE_OFI
    if (narmat_cfg.net_ofi)
        fprintf(stderr, "narma: NARMA_TRANSPORT=ofi, but narma was built without libfabric's "
                        "headers: using auto\n");
    narmat_cfg.net_ofi = 0;
#endif
    if (t != NULL && *t != '\0' && strcmp(t, "auto") && strcmp(t, "shm") && strcmp(t, "mpi") &&
        strcmp(t, "ofi"))
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

/* The split behind narmat_node_get (transport.h). Collective over comm. */
static int narmat_node_comm(MPI_Comm comm, MPI_Comm *node)
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

/* ---- Node communicators, one per program communicator ----------------------------------
 *
 * A window needs the ranks of its node (hybrid: shm's communicator and segment; mpi: whether
 * every rank runs on one host; select). Splitting once per window cost two collectives and,
 * held by hybrid for the window's life, one of the MPI library's context ids per window (MPICH
 * has 2048: with the others a window holds, 409 windows across pretend nodes): the split is now
 * made once per communicator the program passes ("parent") and kept as an attribute of it,
 * with a reference per window built on it. It is freed when the last of the parent and those
 * windows goes; at MPI_Finalize (an attribute of MPI_COMM_SELF, whose callbacks run first)
 * nothing is freed any more: MPI may be tearing itself down when it deletes the other
 * communicators' attributes. Entries stay on a list, so that memory checkers see them
 * reachable. The mutex guards the list, the counts and the flag; the only MPI calls made under
 * it create the keys and set MPI_COMM_SELF's attribute (no callback runs then). */
struct narmat_node {
    struct narmat_node *next, *prev;
    MPI_Comm comm;
    unsigned refs; /* windows holding it, plus one while the parent lives */
};

static pthread_mutex_t node_mu = PTHREAD_MUTEX_INITIALIZER;
static struct narmat_node node_list = {&node_list, &node_list, MPI_COMM_NULL, 0};
static int node_key = MPI_KEYVAL_INVALID;
static int node_self_key = MPI_KEYVAL_INVALID;
static int node_finalizing;

/* Drop one reference (node_mu held); the entry is unlinked when it was the last. Returns
 * whether the caller must free it (outside the mutex: node_drop_finish). */
static int node_drop_locked(struct narmat_node *e)
{
    if (--e->refs > 0) return 0;
    e->prev->next = e->next;
    e->next->prev = e->prev;
    return 1;
}

static void node_drop_finish(struct narmat_node *e, int finalizing)
{
    if (!finalizing && e->comm != MPI_COMM_NULL) MPI_Comm_free(&e->comm);
    free(e);
}

static void node_drop(struct narmat_node *e)
{
    pthread_mutex_lock(&node_mu);
    int last = node_drop_locked(e), fin = node_finalizing;
    pthread_mutex_unlock(&node_mu);
    if (last) node_drop_finish(e, fin);
}

/* The parent is being freed (by the program, or by MPI_Finalize). */
static int node_parent_gone(MPI_Comm parent, int key, void *val, void *extra)
{
    (void)parent;
    (void)key;
    (void)extra;
    node_drop(val);
    return MPI_SUCCESS;
}

/* MPI_Finalize began (MPI_COMM_SELF's attributes go first). */
static int node_finalize(MPI_Comm self, int key, void *val, void *extra)
{
    (void)self;
    (void)key;
    (void)val;
    (void)extra;
    pthread_mutex_lock(&node_mu);
    node_finalizing = 1;
    pthread_mutex_unlock(&node_mu);
    return MPI_SUCCESS;
}

/* The keys, once (node_mu held; each step is retried only until it succeeds). */
static int node_self_set;
static int node_keys_locked(void)
{
    int mrc = MPI_SUCCESS;
    if (node_self_key == MPI_KEYVAL_INVALID)
        mrc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, node_finalize, &node_self_key, NULL);
    if (mrc == MPI_SUCCESS && !node_self_set &&
        (mrc = MPI_Comm_set_attr(MPI_COMM_SELF, node_self_key, NULL)) == MPI_SUCCESS)
        node_self_set = 1;
    if (mrc == MPI_SUCCESS && node_key == MPI_KEYVAL_INVALID)
        mrc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, node_parent_gone, &node_key, NULL);
    return mrc;
}

int narmat_node_get(MPI_Comm parent, MPI_Comm comm, struct narmat_node **ref, MPI_Comm *node)
{
    *ref = NULL;
    *node = MPI_COMM_NULL;
    pthread_mutex_lock(&node_mu);
    int keys = node_keys_locked();
    pthread_mutex_unlock(&node_mu);
    /* Attribute calls outside the mutex: setting or deleting one runs node_parent_gone. A
     * program does not create windows over one communicator from two threads at once (creation
     * is collective over it), so nobody else changes parent's entry meanwhile. */
    void *val = NULL;
    int flag = 0;
    struct narmat_node *e = NULL;
    if (keys == MPI_SUCCESS && MPI_Comm_get_attr(parent, node_key, &val, &flag) == MPI_SUCCESS &&
        flag) {
        e = val;
        pthread_mutex_lock(&node_mu);
        e->refs++;
        pthread_mutex_unlock(&node_mu);
    }
    /* Every rank makes the entry with the others (below), but a rank that could not (no
     * memory, an attribute MPI refused) has none: all use their entry or none does, so that
     * the split below is everyone's or no one's. */
    int mine = e != NULL, all = 0;
    int mrc = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    if (mrc != MPI_SUCCESS) {
        if (e != NULL) node_drop(e);
        return narmau_mpi_error(mrc);
    }
    if (all) {
        *ref = e;
        *node = e->comm;
        return NARMA_SUCCESS;
    }
    /* Not kept everywhere: every rank splits, and those that had an entry drop it, so that
     * all ranks that keep one keep this split's (else two node peers could later use
     * different communicators for one collective). */
    if (e != NULL) {
        node_drop(e);
        MPI_Comm_delete_attr(parent, node_key); /* node_parent_gone drops the parent's */
    }
    MPI_Comm fresh;
    int rc = narmat_node_comm(comm, &fresh);
    if (rc) return rc;
    *node = fresh;
    if (keys != MPI_SUCCESS || (e = malloc(sizeof(*e))) == NULL)
        return NARMA_SUCCESS; /* uncached: the caller owns it (narmat_node_put) */
    e->comm = fresh;
    e->refs = 1; /* the caller's */
    e->next = e->prev = e;
    if (MPI_Comm_set_attr(parent, node_key, e) == MPI_SUCCESS) {
        pthread_mutex_lock(&node_mu);
        e->refs++; /* the parent's */
        e->next = &node_list;
        e->prev = node_list.prev;
        e->prev->next = e;
        node_list.prev = e;
        pthread_mutex_unlock(&node_mu);
    }
    *ref = e;
    return NARMA_SUCCESS;
}

void narmat_node_put(struct narmat_node *ref, MPI_Comm *node)
{
    if (ref != NULL)
        node_drop(ref);
    else if (*node != MPI_COMM_NULL)
        MPI_Comm_free(node);
    *node = MPI_COMM_NULL;
}

/* Win_allocate_shared: every rank of comm on one node (pretend nodes of NARMA_NODE_SIZE
 * count as nodes), else NARMA_ERR_UNSUPPORTED. Sharing a node is an equivalence, so every
 * rank reaches the same verdict without asking the others. shm serves the window; with
 * NARMA_TRANSPORT=mpi, mpi does (over MPI's own shared allocation: still load/store). */
static int select_shared(MPI_Comm comm, MPI_Comm node, const struct narmat_ops **ops)
{
    int size, nsize;
    MPI_Comm_size(comm, &size);
    MPI_Comm_size(node, &nsize);
    if (nsize != size)
        return NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                          "Win_allocate_shared: the communicator's %d ranks do not all share "
                          "memory (%d on this process's node%s)",
                          size, nsize, narmat_cfg.node_size ? ", NARMA_NODE_SIZE" : "");
    *ops = narmat_cfg.force_mpi ? &narmat_mpi_ops : &narmat_shm_ops;
    return narmat_ops_check(*ops);
}

/* Per window, from the nodes its ranks are on (narmat_node_get):
 *   every rank on one node          shm (Win_allocate, Win_create; dynamic windows once shm
 *                                   can attach), mpi otherwise;
 *   one rank per node               mpi;
 *   anything between                hybrid: shm between the ranks of a node, mpi between nodes.
 * NARMA_TRANSPORT=ofi: ofi where mpi would serve pairs of different nodes (ofi alone for one
 * rank per node, "shm+ofi" for hybrid windows), dynamic windows excepted (their memory moves). A
 * window shm refuses on every rank (user memory it cannot share) falls back: narmat_fallback.
 * NARMA_TRANSPORT=mpi forces mpi everywhere; =shm means "shm wherever it applies", as auto.
 * Win_allocate_shared windows: select_shared. Collective over comm. node: narmat_node_get. */
int narmat_select(MPI_Comm comm, MPI_Comm node, int flavor, const struct narmat_ops **ops)
{
    *ops = &narmat_mpi_ops;
    if (flavor == MPI_WIN_FLAVOR_SHARED) return select_shared(comm, node, ops);
    int shm_serves =
        flavor != MPI_WIN_FLAVOR_DYNAMIC || narmat_shm_ops.attach != narmat_enosys_attach;
    if (narmat_cfg.force_mpi || !shm_serves) return narmat_ops_check(*ops);
    int size, nsize;
    MPI_Comm_size(comm, &size);
    MPI_Comm_size(node, &nsize);
    /* Sharing a node is an equivalence: when one rank's node holds every rank, every rank's
     * does, and all of them see it without asking the others. Otherwise MIN over ranks of
     * {every rank on one node (0 by now), every rank alone on its node}. */
    int mine[2] = {nsize == size, nsize == 1}, all[2] = {1, 0};
    if (!mine[0]) NARMAU_MPI(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, comm));
    if (all[0])
        *ops = &narmat_shm_ops;
    else if (!all[1])
        *ops = &narmat_hybrid_ops;
#ifdef NARMA_HAVE_OFI
    if (narmat_cfg.net_ofi && *ops != &narmat_shm_ops && flavor != MPI_WIN_FLAVOR_DYNAMIC)
        *ops = *ops == &narmat_hybrid_ops ? &narmat_hybrid_ofi_ops : &narmat_ofi_ops;
#endif
    return narmat_ops_check(*ops);
}

int narmat_fallback(const struct narmat_ops **ops)
{
    if (*ops == &narmat_mpi_ops) return NARMA_ERR_UNSUPPORTED;
#ifdef NARMA_HAVE_OFI
    if (*ops == &narmat_ofi_ops) return NARMA_ERR_UNSUPPORTED;
    if (narmat_cfg.net_ofi && *ops == &narmat_hybrid_ofi_ops) {
        *ops = &narmat_ofi_ops; /* no node uses shm: every pair is between nodes */
        return narmat_ops_check(*ops);
    }
#endif
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
                 (narmat_mpi_ops.layout & 0xff) << 8 | (narmat_hybrid_ops.layout & 0x0f);
#ifdef NARMA_HAVE_OFI
    /* Ranks must agree on ofi (NARMA_TRANSPORT=ofi), which adds its own exchanges. */
    if (narmat_cfg.net_ofi) v |= 0x80 | (narmat_ofi_ops.layout & 0x7) << 4;
#endif
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
