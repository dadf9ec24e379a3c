/* Window creation, destruction, attributes, names and groups. */
#include "core/narmai.h"
#include "core/epoch.h"
#include "util/pool.h"
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Retired window objects (util/pool.h). */
static narmau_pool win_pool;

static void win_release(struct narmai_win *w)
{
    narmai_epoch_drop_all(w);
    narmai_epoch_cache_free(w);
    free(w->lock_ep);
    free(w->acc_member);
    free(w->a_req);
    free(w->e_open);
    narmai_group_cache_free(w);
    free(w->iota);
    if (w->group != MPI_GROUP_NULL) MPI_Group_free(&w->group);
    narmai_uq_destroy(&w->uq);
    narmai_counter_free(w);
    narmai_win_errhandler_release(w);
    narmat_node_put(w->node_ref, &w->t.node);
    w->node_ref = NULL;
    if (w->t.comm != MPI_COMM_NULL) MPI_Comm_free(&w->t.comm);
    w->magic = 0;
    narmau_pool_give(&win_pool, w, sizeof(*w)); /* a stale handle reads "freed" */
}

/* Window creation is collective: a rank that fails (bad argument, no memory, bad info value)
 * must not leave the others blocked in a later collective. Every rank contributes its status to
 * an MPI_MAX reduction before each collective a failed rank would skip; all then return an error
 * (the failed rank its own class, the others the worst class seen). The same reduction compares
 * the ranks' wire versions (narmat_wire_version, before any transport exchanges a byte): the
 * maxima of v and of ~v are this rank's own on every rank only if all ranks have the same v. */
static int win_agree(int mine, MPI_Comm comm, unsigned *flat)
{
    /* Never change this reduction's count or type: it is what builds of different versions
     * still share, so that a later build can refuse an older one instead of mismatching MPI. */
    const uint32_t wire = narmat_wire_version();
    unsigned v[4] = {(unsigned)mine, flat != NULL ? *flat : 0, wire, ~wire}, worst[4];
    int mrc = MPI_Allreduce(v, worst, 4, MPI_UNSIGNED, MPI_MAX, comm);
    if (mrc != MPI_SUCCESS) return mine ? mine : narmau_mpi_error(mrc);
    if (flat != NULL) *flat = worst[1];
    if (mine == NARMA_SUCCESS && (worst[2] != v[2] || worst[3] != v[3]))
        return NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                          "the ranks run narma builds that do not speak the same protocol (wire "
                          "version %#x here, another rank's differs): link every rank with the "
                          "same narma",
                          (unsigned)wire);
    if (worst[0] == NARMA_SUCCESS) return NARMA_SUCCESS;
    return mine ? mine
                : NARMAU_ERR((int)worst[0], "another rank could not create the window (%s)",
                             NARMA_Strerror((int)worst[0]));
}

static int win_check_args(MPI_Aint size, int disp_unit, void *base, int flavor, void *baseptr,
                          NARMA_Win *out)
{
#if NARMA_ARG_CHECKS
    if (out == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL window pointer");
    if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && baseptr == NULL)
        return NARMAU_ERR(NARMA_ERR_ARG, "NULL baseptr");
    if (size < 0) return NARMAU_ERR(NARMA_ERR_ARG, "negative size %ld", (long)size);
    if (disp_unit <= 0) return NARMAU_ERR(NARMA_ERR_ARG, "disp_unit %d", disp_unit);
    if (flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && base == NULL)
        return NARMAU_ERR(NARMA_ERR_ARG, "NULL base with size %ld", (long)size);
#else
    (void)size, (void)disp_unit, (void)base, (void)flavor, (void)baseptr, (void)out;
#endif
    return NARMA_SUCCESS;
}

static int win_new(MPI_Comm comm, int flavor, MPI_Info info, void *base, MPI_Aint size,
                   int disp_unit, void *baseptr, NARMA_Win *out)
{
    /* A failed creation leaves no stale handle behind, whatever *out held. */
    if (out != NULL) *out = NARMA_WIN_NULL;
    int rc = narmai_ensure_init();
    if (rc) return rc;
    /* No communicator, no agreement: every rank of a NULL communicator returns here. */
    if (comm == MPI_COMM_NULL) return NARMAU_ERR(NARMA_ERR_ARG, "MPI_COMM_NULL");
    struct narmai_win *w = NULL;
    rc = win_check_args(size, disp_unit, base, flavor, baseptr, out);
    if (rc == NARMA_SUCCESS) {
        if ((w = narmau_pool_take(&win_pool, sizeof(*w))) != NULL)
            memset(w, 0, sizeof(*w));
        else if ((w = calloc(1, sizeof(*w))) == NULL)
            rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "window");
    }
    if (rc != NARMA_SUCCESS) {
        /* Take part in the collectives the others make before their agreement (the dup, then
         * win_agree below), so that they learn of this failure there instead of waiting. */
        MPI_Comm dup;
        unsigned flat = 0;
        if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS) return rc;
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        win_agree(rc, dup, &flat);
        MPI_Comm_free(&dup);
        return rc;
    }
    w->magic = NARMAI_WIN_MAGIC;
    w->t.flavor = flavor;
    w->t.disp_unit = disp_unit;
    w->t.model = MPI_WIN_UNIFIED;
    w->t.size_bytes = size;
    w->t.base = base;
    w->t.attr_win = MPI_WIN_NULL;
    w->t.ring_slots = narmai_g.ring_slots;
    w->t.shared_win = MPI_WIN_NULL;
    w->t.node = MPI_COMM_NULL;
    w->t.pull_min = -1;
    w->group = MPI_GROUP_NULL;
    narmai_group_cache_init(w);
    narmau_dlist_init(&w->active_reqs);
    narmau_dlist_init(&w->pull_reqs);
    narmau_dlist_init(&w->thresh_reqs);
    narmau_dlist_init(&w->epochs);
    narmai_uq_init(&w->uq);
    int mrc = MPI_Comm_dup(comm, &w->t.comm);
    if (mrc != MPI_SUCCESS) {
        w->t.comm = MPI_COMM_NULL;
        win_release(w);
        return narmau_mpi_error(mrc);
    }
    MPI_Comm_set_errhandler(w->t.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(w->t.comm, &w->t.rank);
    MPI_Comm_size(w->t.comm, &w->t.size);
    size_t p = (size_t)w->t.size;
    w->lock_ep = calloc(p, sizeof(*w->lock_ep));
    w->acc_member = calloc(p, sizeof(int));
    w->a_req = calloc(p, sizeof(uint64_t));
    w->e_open = calloc(p, sizeof(uint64_t));
    w->iota = malloc(p * sizeof(int));
    MPI_Comm_group(w->t.comm, &w->group);
    /* Reserves, so that a passing shortage of memory breaks no collective: a fence, which does
     * not agree on failures, finds the epochs it opens cached (2 for the first fence; each
     * later one reuses the epoch the previous fence closed); a notification drained from the
     * ring always finds room in the unexpected queue. */
    if (!w->lock_ep || !w->acc_member || !w->a_req || !w->e_open || !w->iota ||
        narmai_uq_reserve(&w->uq) != NARMA_SUCCESS ||
        narmai_epoch_reserve(w, NARMAI_EPOCH_SPARES) != NARMA_SUCCESS) {
        rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "window state");
    } else {
        for (int i = 0; i < w->t.size; i++)
            w->iota[i] = i;
        narmai_test_faults_init(w);
        rc = narmai_win_info_apply(w, info, 1);
    }
    /* All ranks must pick the same barrier: take the largest setting (same reduction). */
    unsigned flat = narmai_g.fence_flat_max;
    if ((rc = win_agree(rc, w->t.comm, &flat))) {
        win_release(w);
        return rc;
    }
    w->fence_flat_max = flat;
    /* A refusal of select (Win_allocate_shared over ranks that do not share memory) is every
     * rank's alike and final. */
    rc = narmat_node_get(comm, w->t.comm, &w->node_ref, &w->t.node);
    if (rc == NARMA_SUCCESS) rc = narmat_select(w->t.comm, w->t.node, flavor, &w->t.ops);
    if (rc == NARMA_SUCCESS) {
        rc = narmat_win_init(&w->t, base, size, info);
        /* Refused by every rank alike (e.g. user memory shm cannot share): the next transport. */
        if (rc == NARMA_ERR_UNSUPPORTED && narmat_fallback(&w->t.ops) == NARMA_SUCCESS)
            rc = narmat_win_init(&w->t, base, size, info);
    }
    if (rc != NARMA_SUCCESS) {
        win_release(w);
        return rc;
    }
    narmau_dlist_push_back(&narmai_g.windows, &w->link);
    narmai_g.nwindows++;
    *out = w;
    return NARMA_SUCCESS;
}

int NARMA_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     NARMA_Win *win)
{
    NARMAI_API_LOCK();
    return win_new(comm, MPI_WIN_FLAVOR_CREATE, info, base, size, disp_unit, NULL, win);
}

int NARMA_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                       NARMA_Win *win)
{
    NARMAI_API_LOCK();
    int rc = win_new(comm, MPI_WIN_FLAVOR_ALLOCATE, info, NULL, size, disp_unit, baseptr, win);
    if (rc == NARMA_SUCCESS) *(void **)baseptr = (*win)->t.base;
    return rc;
}

int NARMA_Win_create_dynamic(MPI_Info info, MPI_Comm comm, NARMA_Win *win)
{
    NARMAI_API_LOCK();
    return win_new(comm, MPI_WIN_FLAVOR_DYNAMIC, info, NULL, 0, 1, NULL, win);
}

/* The transport allocates the memory (one MPI shared allocation: contiguous across ranks
 * unless info says alloc_shared_noncontig) and maps every rank's. */
int NARMA_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                              void *baseptr, NARMA_Win *win)
{
    NARMAI_API_LOCK();
    int rc = win_new(comm, MPI_WIN_FLAVOR_SHARED, info, NULL, size, disp_unit, baseptr, win);
    if (rc == NARMA_SUCCESS) *(void **)baseptr = (*win)->t.base;
    return rc;
}

/* Answered by the transport, which knows which peers' memory this process maps; this
 * process's own memory is always its own to load from. MPI_PROC_NULL stands for the lowest
 * rank whose size is not 0 (MPI); when every size is 0, size 0 and NULL. */
static int win_shared_query(NARMA_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (size == NULL || disp_unit == NULL || baseptr == NULL)
        return NARMAU_ERR(NARMA_ERR_ARG, "NULL argument");
    struct narmat_win *t = &win->t;
    if (t->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return NARMAU_ERR(NARMA_ERR_WIN, "shared_query on a dynamic window (no segment)");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= t->size))
        return NARMAU_ERR(NARMA_ERR_RANK, "rank %d outside the window's %d ranks", rank, t->size);
    MPI_Aint sz = 0;
    int du = 1, rc = NARMA_SUCCESS;
    void *base = NULL;
    if (rank == MPI_PROC_NULL) {
        for (int r = 0; r < t->size; r++) {
            rc = r == t->rank ? NARMA_SUCCESS : narmat_shared_query(t, r, &sz, &du, &base);
            if (r == t->rank) sz = t->size_bytes, du = t->disp_unit, base = t->base;
            if (rc == NARMA_ERR_UNSUPPORTED) return rc;
            if (sz > 0) {
                rank = r;
                break;
            }
        }
        if (rank == MPI_PROC_NULL) sz = 0, du = 1, base = NULL, rc = NARMA_SUCCESS;
    } else if (rank == t->rank) {
        sz = t->size_bytes, du = t->disp_unit, base = t->base;
    } else {
        rc = narmat_shared_query(t, rank, &sz, &du, &base);
        if (rc == NARMA_ERR_UNSUPPORTED) return rc;
    }
    if (rc == NARMA_SUCCESS) {
        *size = sz;
        *disp_unit = du;
        *(void **)baseptr = base;
        return NARMA_SUCCESS;
    }
    /* Not shared with this process: MPI-4.1's answer for such memory, and an error. */
    *size = 0;
    *disp_unit = du;
    *(void **)baseptr = NULL;
    return NARMAU_ERR(NARMA_ERR_RANK, "rank %d's memory is not shared with this process (%s)", rank,
                      narmat_target_name(t, rank));
}

int NARMA_Win_shared_query(NARMA_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, win_shared_query(win, rank, size, disp_unit, baseptr));
}

static int win_free(NARMA_Win *win)
{
    if (win == NULL || !narmai_win_ok(*win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    struct narmai_win *w = *win;
    /* Deferred notifications (narma_notify_completion=flush) go out before the agreement, so
     * that each target's last poll below, after it, finds them. */
    int flushed = w->t.notify_deferred ? narmat_flush(&w->t, -1) : NARMA_SUCCESS;
    /* Every rank learns whether any rank cannot free, so an error never leaves
     * the others blocked in the collective free. The window is polled until all are there:
     * a peer may still be waiting for room in this rank's notification ring. */
    int mine = narmai_epoch_free_check(w), worst = 0;
    if (mine == NARMA_SUCCESS) mine = flushed;
    MPI_Request agree;
    NARMAU_MPI(MPI_Iallreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, w->t.comm, &agree));
    int rc0 = narmai_coll_wait(w, &agree);
    if (rc0) return rc0;
    if (worst != NARMA_SUCCESS)
        return mine ? mine : NARMAU_ERR(NARMA_ERR_PENDING, "another rank cannot free the window");
    narmai_progress_win(w);          /* deliver what already arrived */
    narmai_epoch_drop_all(w);        /* only an empty fence epoch can remain */
    int rc = narmat_win_free(&w->t); /* completes every pulled put of this process too */
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &w->pull_reqs)
    {
        narmai_request_unticket(narmau_container_of(pos, struct narmai_request, link));
    }
    narmau_dlist_remove(&w->link);
    narmai_g.nwindows--;
    win_release(w);
    *win = NARMA_WIN_NULL;
    return rc;
}

/* A failure leaves the window alive: its handler sees the error (one freed on the way has
 * none left). */
int NARMA_Win_free(NARMA_Win *win)
{
    NARMAI_API_LOCK();
    struct narmai_win *w = win != NULL ? *win : NULL;
    narmai_coll_begin(w);
    int rc = win_free(win);
    if (rc != NARMA_SUCCESS) narmai_coll_end(w); /* freed on success */
    return rc == NARMA_SUCCESS ? rc : narmai_win_ret(win != NULL ? *win : NULL, rc);
}

static int api_win_attach(NARMA_Win win, void *base, MPI_Aint size)
{
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (win->t.flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return NARMAU_ERR(NARMA_ERR_ATTACH, "not a dynamic window");
    if (size < 0 || (size > 0 && base == NULL)) return NARMAU_ERR(NARMA_ERR_ARG, "bad region");
    return narmat_attach(&win->t, base, size);
}

int NARMA_Win_attach(NARMA_Win win, void *base, MPI_Aint size)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_win_attach(win, base, size));
}

static int api_win_detach(NARMA_Win win, const void *base)
{
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (win->t.flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return NARMAU_ERR(NARMA_ERR_ATTACH, "not a dynamic window");
    return narmat_detach(&win->t, base);
}

int NARMA_Win_detach(NARMA_Win win, const void *base)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_win_detach(win, base));
}

const char *NARMA_Win_get_transport(NARMA_Win win)
{
    return narmai_win_ok(win) ? narmat_win_name(&win->t) : "invalid";
}

const char *NARMA_Win_get_target_transport(NARMA_Win win, int rank)
{
    if (!narmai_win_ok(win) || rank < 0 || rank >= win->t.size) return "invalid";
    return narmat_target_name(&win->t, rank);
}

static int api_win_get_group(NARMA_Win win, MPI_Group *group)
{
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (group == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL group");
    NARMAU_MPI(MPI_Comm_group(win->t.comm, group));
    return NARMA_SUCCESS;
}

int NARMA_Win_get_group(NARMA_Win win, MPI_Group *group)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_win_get_group(win, group));
}

static int api_win_set_name(NARMA_Win win, const char *name)
{
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (name == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL name");
    NARMAU_MPI(MPI_Win_set_name(win->t.attr_win, name));
    return NARMA_SUCCESS;
}

int NARMA_Win_set_name(NARMA_Win win, const char *name)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_win_set_name(win, name));
}

/* MPI-4.1: the name of the null handle is the name of its constant, so
 * NARMA_WIN_NULL is called "NARMA_WIN_NULL" (narma's constant, not MPI's). */
static int api_win_get_name(NARMA_Win win, char *name, int *resultlen)
{
    if (name == NULL || resultlen == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL argument");
    if (win == NARMA_WIN_NULL) {
        *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "NARMA_WIN_NULL");
        return NARMA_SUCCESS;
    }
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    NARMAU_MPI(MPI_Win_get_name(win->t.attr_win, name, resultlen));
    return NARMA_SUCCESS;
}

int NARMA_Win_get_name(NARMA_Win win, char *name, int *resultlen)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_win_get_name(win, name, resultlen));
}

/* The keyvals NARMA_Win_create_keyval made and NARMA_Win_free_keyval has not freed. Freeing is
 * checked against them first: MPI_Win_free_keyval reports a bad keyval to MPI's handler of no
 * window, fatal by default, so it must only ever see a valid one. A keyval is freed the way it
 * was made: one from MPI_Win_create_keyval (usable with NARMA_Win_set_attr) with
 * MPI_Win_free_keyval. */
static struct {
    int *v;
    int n, cap;
} keyvals;

static int keyval_find(int k)
{
    for (int i = 0; i < keyvals.n; i++)
        if (keyvals.v[i] == k) return i;
    return -1;
}

int NARMA_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                            MPI_Win_delete_attr_function *delete_fn, int *keyval, void *extra_state)
{
    NARMAI_API_LOCK();
    if (keyval == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL keyval");
    if (keyvals.n == keyvals.cap) {
        int cap = keyvals.cap > 0 ? 2 * keyvals.cap : 16;
        int *v = realloc(keyvals.v, (size_t)cap * sizeof(*v));
        if (v == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "keyval");
        keyvals.v = v;
        keyvals.cap = cap;
    }
    NARMAU_MPI(MPI_Win_create_keyval(copy_fn, delete_fn, keyval, extra_state));
    /* Already listed: the program freed it with MPI_Win_free_keyval and MPI reused the number. */
    if (keyval_find(*keyval) < 0) keyvals.v[keyvals.n++] = *keyval;
    return NARMA_SUCCESS;
}

int NARMA_Win_free_keyval(int *keyval)
{
    NARMAI_API_LOCK();
    if (keyval == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL keyval");
    const int i = keyval_find(*keyval);
    if (i < 0)
        return NARMAU_ERR(NARMA_ERR_KEYVAL,
                          "keyval %d was not made by NARMA_Win_create_keyval, or is freed",
                          *keyval);
    int rc = MPI_Win_free_keyval(keyval);
    if (rc != MPI_SUCCESS) return NARMAU_ERR(NARMA_ERR_KEYVAL, "keyval");
    keyvals.v[i] = keyvals.v[--keyvals.n];
    return NARMA_SUCCESS;
}

static int is_predefined_keyval(int k)
{
    return k == MPI_WIN_BASE || k == MPI_WIN_SIZE || k == MPI_WIN_DISP_UNIT ||
           k == MPI_WIN_CREATE_FLAVOR || k == MPI_WIN_MODEL || k == NARMA_WIN_NOTIFICATION_NUM_UB ||
           k == NARMA_WIN_NOTIFICATION_VALUE_UB;
}

static int api_win_set_attr(NARMA_Win win, int keyval, void *val)
{
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (is_predefined_keyval(keyval))
        return NARMAU_ERR(NARMA_ERR_KEYVAL, "predefined attributes are read-only");
    int rc = MPI_Win_set_attr(win->t.attr_win, keyval, val);
    return rc == MPI_SUCCESS ? NARMA_SUCCESS : NARMAU_ERR(NARMA_ERR_KEYVAL, "keyval %d", keyval);
}

int NARMA_Win_set_attr(NARMA_Win win, int keyval, void *val)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_win_set_attr(win, keyval, val));
}

/* Predefined attributes describe narma's window (they differ from the MPI
 * window underneath, e.g. for shm where one segment holds control words too). */
static int api_win_get_attr(NARMA_Win win, int keyval, void *val, int *flag)
{
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (val == NULL || flag == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL argument");
    *flag = 1;
    if (keyval == MPI_WIN_BASE)
        *(void **)val = win->t.base;
    else if (keyval == MPI_WIN_SIZE)
        *(MPI_Aint **)val = &win->t.size_bytes;
    else if (keyval == MPI_WIN_DISP_UNIT)
        *(int **)val = &win->t.disp_unit;
    else if (keyval == MPI_WIN_CREATE_FLAVOR)
        *(int **)val = &win->t.flavor;
    else if (keyval == MPI_WIN_MODEL)
        *(int **)val = &win->t.model;
    else if (narmai_counter_attr(win, keyval, val))
        ;
    else {
        int rc = MPI_Win_get_attr(win->t.attr_win, keyval, val, flag);
        if (rc != MPI_SUCCESS) return NARMAU_ERR(NARMA_ERR_KEYVAL, "keyval %d", keyval);
    }
    return NARMA_SUCCESS;
}

int NARMA_Win_get_attr(NARMA_Win win, int keyval, void *val, int *flag)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_win_get_attr(win, keyval, val, flag));
}

static int api_win_delete_attr(NARMA_Win win, int keyval)
{
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (is_predefined_keyval(keyval))
        return NARMAU_ERR(NARMA_ERR_KEYVAL, "predefined attributes cannot be deleted");
    int rc = MPI_Win_delete_attr(win->t.attr_win, keyval);
    return rc == MPI_SUCCESS ? NARMA_SUCCESS : NARMAU_ERR(NARMA_ERR_KEYVAL, "keyval %d", keyval);
}

int NARMA_Win_delete_attr(NARMA_Win win, int keyval)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, api_win_delete_attr(win, keyval));
}
