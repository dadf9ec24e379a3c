/*
 * The hybrid transport: one window whose ranks span nodes, served per pair of
 * ranks: shm between the ranks of a node, mpi between the others.
 *
 * It holds two sub-contexts and forwards every call to the transport of the
 * pair it concerns, translating ranks:
 *   shm  over the node's ranks (narmat_node_comm: ranks that share memory,
 *        split further by NARMA_NODE_SIZE); present on nodes of more than
 *        one rank, unless shm refused the window there (every rank of that
 *        node alike, so both ends of a pair always agree on its path);
 *   mpi  over every rank of the window. Win_allocate memory comes from mpi
 *        (MPI_Win_allocate) and shm reaches the node peers' share of it through
 *        MPI_Win_shared_query (MPI-4; a node whose library does not answer
 *        talks through mpi, and a window where no node can use shm is plain
 *        mpi). Win_create memory is moved in place by shm first, then exposed
 *        to mpi.
 *
 * Notifications: poll drains both rings; shm's sources are node ranks and are
 * translated back to window ranks. Each origin uses one path toward a target,
 * so the order of one origin's notifications is kept.
 *
 * Accumulates (and compare-and-swap) go through mpi for every peer, the
 * node's own included: element-wise atomicity holds only among accumulates of
 * one mechanism, and CPU atomics on shm memory are not atomic with respect to
 * the MPI library's (Open MPI's lose updates when both hit one element). A
 * notified accumulate to a node peer moves its data that way and its
 * notification through shm's ring (narmat_note), where the origin's other
 * notifications to that peer go, so their order is kept.
 *
 * Control words: a word written by one peer only (grant[p], done[p], fence
 * round r of the dissemination barrier) is written through that peer's path;
 * the owner reads it as the sum of its shm and mpi copies (the other copy stays
 * 0), and the flat fence's round 0, written by every peer, is a sum anyway.
 * The lock word is updated by compare-and-swap from every peer: atomic only
 * if every peer uses one mechanism, so it lives in mpi's copy for every peer,
 * the node's own included. A seq_cst fence before such an update orders the
 * data this process stored through shm before it (release), and one after a
 * lock word read orders the loads that follow (acquire).
 *
 * Per-peer state: two int arrays of the window's size (rank translation),
 * beside what the sub-transports keep.
 */
#include "transport/transport.h"

#include <stdlib.h>
#include <string.h>
#include "util/atomic.h"

struct hyb {
    struct narmat_win shm, mpi; /* sub-contexts */
    int has_shm;                /* this node's ranks talk through shm */
    int *node_of;               /* window rank -> rank in shm's context, or -1 (mpi) */
    int *win_of;                /* rank in shm's context -> window rank */
    narmat_note_cb cb;          /* during poll: the core's callback and its argument */
    void *cb_arg;
};

static inline struct hyb *hy(struct narmat_win *w) { return w->tp; }

/* The shm rank of target, or -1 when the pair goes through mpi. */
static inline int via_shm(struct narmat_win *w, int target) { return hy(w)->node_of[target]; }

static const char *hyb_target_name(struct narmat_win *w, int target)
{
    return via_shm(w, target) >= 0 ? hy(w)->shm.ops->name : hy(w)->mpi.ops->name;
}

/* "shm+ofi" names the network half; when that half serves through mpi alone (ofi found no
 * provider), the window is "shm+mpi". */
static const char *hyb_win_name(struct narmat_win *w)
{
    return strcmp(narmat_win_name(&hy(w)->mpi), "mpi") == 0 ? "shm+mpi" : w->ops->name;
}

static void hyb_release(struct hyb *h)
{
    free(h->node_of);
    free(h->win_of);
    free(h);
}

/* Every rank's status: the worst class any rank saw (collective over comm). */
static int hyb_agree(MPI_Comm comm, int mine)
{
    int worst = mine;
    int mrc = MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (mrc != MPI_SUCCESS) return mine ? mine : narmau_mpi_error(mrc);
    if (worst == NARMA_SUCCESS || mine) return mine;
    return NARMAU_ERR(worst, "another rank could not create the window (%s)",
                      NARMA_Strerror(worst));
}

/* Which ranks of the window share this node's shm context: node_of/win_of. */
static int hyb_map(struct narmat_win *w, struct hyb *h)
{
    int n = w->size;
    h->node_of = malloc(sizeof(int) * (size_t)n);
    h->win_of = malloc(sizeof(int) * (size_t)n);
    if (h->node_of == NULL || h->win_of == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "rank maps");
    for (int i = 0; i < n; i++)
        h->node_of[i] = -1;
    if (!h->has_shm) return NARMA_SUCCESS;
    MPI_Group wg, ng;
    int *iota = malloc(sizeof(int) * (size_t)h->shm.size);
    if (iota == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "rank maps");
    for (int i = 0; i < h->shm.size; i++)
        iota[i] = i;
    MPI_Comm_group(w->comm, &wg);
    MPI_Comm_group(h->shm.comm, &ng);
    int mrc = MPI_Group_translate_ranks(ng, h->shm.size, iota, wg, h->win_of);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    free(iota);
    if (mrc != MPI_SUCCESS) return narmau_mpi_error(mrc);
    for (int i = 0; i < h->shm.size; i++)
        h->node_of[h->win_of[i]] = i;
    return NARMA_SUCCESS;
}

/* Win_allocate: MPI allocates the memory (mpi first, MPI_Win_allocate over every rank) and
 * shm reaches the node's share of it through MPI_Win_shared_query (MPI-4: any window's memory
 * that is shared), so the MPI library sees its own window (its fast paths, no Win_create of
 * memory it did not allocate) and shm moves no page. 1 when every node peer's memory answers
 * (size 0 and a NULL base, MPI-4.1's answer for memory not shared, is also an empty window's:
 * shm's creation tells them apart by the sizes it gathers, and falls back to mpi). */
static int hyb_node_shares(struct hyb *h)
{
    int ok = 1;
    MPI_Errhandler prev;
    MPI_Win_get_errhandler(h->mpi.attr_win, &prev);
    MPI_Win_set_errhandler(h->mpi.attr_win, MPI_ERRORS_RETURN);
    for (int i = 0; i < h->shm.size && ok; i++) {
        MPI_Aint qsize = 0;
        int qdisp = 0;
        void *qbase = NULL;
        ok = MPI_Win_shared_query(h->mpi.attr_win, h->win_of[i], &qsize, &qdisp, &qbase) ==
                 MPI_SUCCESS &&
             (qbase != NULL || qsize == 0);
    }
    MPI_Win_set_errhandler(h->mpi.attr_win, prev);
    MPI_Errhandler_free(&prev);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, h->shm.comm);
    if (!all)
        NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "the MPI library does not share Win_allocate memory "
                                          "through MPI_Win_shared_query: this node uses mpi");
    return all;
}

/* shm among the node's ranks (collective over the node; a refusal is the node's alike). */
static int hyb_shm_init(struct hyb *h, void *base, MPI_Aint size, MPI_Info info)
{
    int rc = narmat_win_init(&h->shm, base, size, info);
    if (rc == NARMA_ERR_UNSUPPORTED) h->has_shm = 0; /* that node talks through mpi */
    return rc == NARMA_ERR_UNSUPPORTED ? NARMA_SUCCESS : rc;
}

static int hyb_win_init(struct narmat_win *w, void *base, MPI_Aint size, MPI_Info info)
{
    struct hyb *h = calloc(1, sizeof(*h));
    int rc = h != NULL ? NARMA_SUCCESS : NARMAU_ERR(NARMA_ERR_NO_MEM, "hybrid state");
    if (h != NULL) h->shm.comm = MPI_COMM_NULL;
    if (h == NULL) return hyb_agree(w->comm, rc);
    MPI_Comm node = w->node; /* the core's, kept with the program's communicator */
    struct narmat_win tmpl = *w;
    tmpl.tp = NULL;
    tmpl.attr_win = MPI_WIN_NULL;
    h->shm = tmpl;
    h->shm.ops = &narmat_shm_ops;
    h->shm.comm = node;
    MPI_Comm_rank(node, &h->shm.rank);
    MPI_Comm_size(node, &h->shm.size);
    h->mpi = tmpl;
    h->mpi.ops = &narmat_mpi_ops;
#ifdef NARMA_HAVE_OFI
    if (w->ops == &narmat_hybrid_ofi_ops) h->mpi.ops = &narmat_ofi_ops; /* between nodes */
#endif
    h->has_shm = h->shm.size > 1;
    rc = hyb_map(w, h);
    if ((rc = hyb_agree(w->comm, rc))) {
        hyb_release(h);
        return rc;
    }

    int mpi_up = 0;
    if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        /* mpi first, then shm over its memory where the MPI library shares it. */
        if ((rc = narmat_win_init(&h->mpi, NULL, size, info)) != NARMA_SUCCESS) {
            hyb_release(h);
            return rc; /* mpi agrees on failure among every rank */
        }
        mpi_up = 1;
        if (h->has_shm) h->has_shm = hyb_node_shares(h);
        if (h->has_shm) {
            h->shm.flavor = MPI_WIN_FLAVOR_CREATE;
            h->shm.shared_win = h->mpi.attr_win;
            h->shm.shared_off = h->mpi.attr_off;
            h->shm.shared_rank = h->win_of;
            rc = hyb_shm_init(h, h->mpi.base, size, info);
        }
    } else if (h->has_shm) {
        /* User memory (moved in place by shm) or attached regions: shm first, mpi over it. */
        rc = hyb_shm_init(h, base, size, info);
    }
    if (!h->has_shm) /* every pair through mpi from here on */
        for (int i = 0; i < w->size; i++)
            h->node_of[i] = -1;
    /* Every rank got this far? Does any node use shm? (None: the window is plain mpi, the
     * core's fallback, not a hybrid whose every pair goes through mpi.) */
    int st[2] = {rc, h->has_shm}, all[2];
    int mrc = MPI_Allreduce(st, all, 2, MPI_INT, MPI_MAX, w->comm);
    if (mrc != MPI_SUCCESS && rc == NARMA_SUCCESS) rc = narmau_mpi_error(mrc);
    if (rc == NARMA_SUCCESS && all[0] != NARMA_SUCCESS)
        rc = NARMAU_ERR(all[0], "another rank could not create the window (%s)",
                        NARMA_Strerror(all[0]));
    else if (rc == NARMA_SUCCESS && !all[1])
        rc = NARMA_ERR_UNSUPPORTED; /* every rank alike: the core falls back to mpi */
    if (rc == NARMA_SUCCESS && !mpi_up) {
        rc = narmat_win_init(&h->mpi, base, size, info);
        mpi_up = rc == NARMA_SUCCESS;
    }
    if (rc) {
        if (h->has_shm && st[0] == NARMA_SUCCESS) narmat_win_free(&h->shm);
        if (mpi_up) narmat_win_free(&h->mpi);
        hyb_release(h);
        return rc;
    }
    w->tp = h;
    if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE) w->base = h->mpi.base;
    w->may_defer = h->has_shm && h->shm.may_defer;
    w->model = h->mpi.model;
    w->attr_win = h->mpi.attr_win;
    w->attr_off = h->mpi.attr_off;
    return NARMA_SUCCESS;
}

static int hyb_win_free(struct narmat_win *w)
{
    struct hyb *h = hy(w);
    /* Pulled puts through shm complete first: their target may be a node peer whose window
     * memory the mpi window holds. */
    if (h->has_shm) narmat_flush(&h->shm, -1);
    int rc = narmat_win_free(&h->mpi);
    if (h->has_shm) {
        int src = narmat_win_free(&h->shm);
        if (rc == NARMA_SUCCESS) rc = src;
    }
    hyb_release(h);
    w->tp = NULL;
    w->attr_win = MPI_WIN_NULL;
    return rc;
}

/* shm moves the region's pages onto shared memory: it goes first on attach and last on
 * detach, so that the MPI library registers (and deregisters) the pages where they will stay,
 * never pages that move under it. */
static int hyb_attach(struct narmat_win *w, void *base, MPI_Aint size)
{
    struct hyb *h = hy(w);
    int rc = h->has_shm ? narmat_attach(&h->shm, base, size) : NARMA_SUCCESS;
    if (rc == NARMA_SUCCESS && (rc = narmat_attach(&h->mpi, base, size)) && h->has_shm)
        narmat_detach(&h->shm, base);
    return rc;
}

static int hyb_detach(struct narmat_win *w, const void *base)
{
    struct hyb *h = hy(w);
    int rc = narmat_detach(&h->mpi, base);
    int src = h->has_shm ? narmat_detach(&h->shm, base) : NARMA_SUCCESS;
    return rc ? rc : src;
}

static int hyb_check_bounds(struct narmat_win *w, int target, MPI_Aint disp, MPI_Aint lo,
                            MPI_Aint hi)
{
    int s = via_shm(w, target);
    return s >= 0 ? narmat_check_bounds(&hy(w)->shm, s, disp, lo, hi)
                  : narmat_check_bounds(&hy(w)->mpi, target, disp, lo, hi);
}

/* A node peer's memory is mapped by shm (the node's share of mpi's window for Win_allocate);
 * the others' is not shared. */
static int hyb_shared_query(struct narmat_win *w, int target, MPI_Aint *size, int *disp_unit,
                            void **base)
{
    int s = via_shm(w, target);
    return s >= 0 ? narmat_shared_query(&hy(w)->shm, s, size, disp_unit, base)
                  : narmat_shared_query(&hy(w)->mpi, target, size, disp_unit, base);
}

static int hyb_put(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                   int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq)
{
    int s = via_shm(w, target);
    return s >= 0
               ? narmat_put(&hy(w)->shm, oaddr, ocount, otype, s, disp, tcount, ttype, mreq)
               : narmat_put(&hy(w)->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, mreq);
}

static int hyb_get(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype, int target,
                   MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq)
{
    int s = via_shm(w, target);
    return s >= 0
               ? narmat_get(&hy(w)->shm, oaddr, ocount, otype, s, disp, tcount, ttype, mreq)
               : narmat_get(&hy(w)->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, mreq);
}

/* Accumulates go through mpi for every peer, the node's own included: element-wise atomicity
 * holds only among accumulates of one mechanism (CPU atomics on shm and the MPI library's, or a
 * network's, are not atomic with respect to each other). Toward a node peer, shm's flush first:
 * it settles this origin's pulled puts to that peer (their data lands before the accumulate, as
 * after a put copied in the call: docs/design.md, "Pulled puts") and its fence orders the data
 * this process stored through shm before it, as for control words. */
static int acc_order(struct narmat_win *w, int target)
{
    struct hyb *h = hy(w);
    const int s = h->has_shm ? via_shm(w, target) : -1;
    return s >= 0 ? narmat_flush(&h->shm, s) : NARMA_SUCCESS;
}

static int hyb_acc(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                   void *raddr, int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Request *mreq)
{
    int rc = acc_order(w, target);
    return rc ? rc
              : narmat_acc(&hy(w)->mpi, oaddr, ocount, otype, raddr, rcount, rtype, target, disp,
                           tcount, ttype, op, mreq);
}

static int hyb_cas(struct narmat_win *w, const void *oaddr, const void *caddr, void *raddr,
                   MPI_Datatype type, int target, MPI_Aint disp)
{
    int rc = acc_order(w, target);
    return rc ? rc : narmat_cas(&hy(w)->mpi, oaddr, caddr, raddr, type, target, disp);
}

/* Before a notification to a node peer through shm: this origin's accumulates to that peer
 * went through mpi, and complete there first, so that the peer that matches the notification
 * finds them done, as on one transport (mpi's notified access flushes its target; shm's
 * accesses are complete on return). mpi's flush returns at once when nothing was issued. */
static int note_order(struct narmat_win *w, int target)
{
    return narmat_flush(&hy(w)->mpi, target);
}

/* A node peer is reached through shm and, for accumulates, through mpi: its flush completes
 * both (mpi's returns at once when nothing was issued to that target). */
static int hyb_flush(struct narmat_win *w, int target)
{
    struct hyb *h = hy(w);
    int rc = h->has_shm && (target < 0 || via_shm(w, target) >= 0)
                 ? narmat_flush(&h->shm, target < 0 ? -1 : via_shm(w, target))
                 : NARMA_SUCCESS;
    int mrc = narmat_flush(&h->mpi, target);
    return rc ? rc : mrc;
}

static int hyb_flush_local(struct narmat_win *w, int target)
{
    struct hyb *h = hy(w);
    int rc = h->has_shm && (target < 0 || via_shm(w, target) >= 0)
                 ? narmat_flush_local(&h->shm, target < 0 ? -1 : via_shm(w, target))
                 : NARMA_SUCCESS;
    int mrc = narmat_flush_local(&h->mpi, target);
    return rc ? rc : mrc;
}

static int hyb_sync(struct narmat_win *w)
{
    struct hyb *h = hy(w);
    int rc = h->has_shm ? narmat_sync(&h->shm) : NARMA_SUCCESS;
    int mrc = narmat_sync(&h->mpi);
    return rc ? rc : mrc;
}

static int hyb_put_notify(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    int s = via_shm(w, target), rc;
    if (s >= 0 && (rc = note_order(w, target))) return rc;
    return s >= 0
               ? narmat_put_notify(&hy(w)->shm, oaddr, ocount, otype, s, disp, tcount, ttype, tag)
               : narmat_put_notify(&hy(w)->mpi, oaddr, ocount, otype, target, disp, tcount, ttype,
                                   tag);
}

static int hyb_rput_notify(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                           int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                           uint64_t *ticket)
{
    int s = via_shm(w, target), rc;
    if (s >= 0 && (rc = note_order(w, target))) return rc;
    return s >= 0 ? narmat_rput_notify(&hy(w)->shm, oaddr, ocount, otype, s, disp, tcount, ttype,
                                       tag, ticket)
                  : narmat_rput_notify(&hy(w)->mpi, oaddr, ocount, otype, target, disp, tcount,
                                       ttype, tag, ticket);
}

/* Prepared only toward the ranks served through shm (the mpi transport prepares nothing), so a
 * start is always shm's. */
static int hyb_pput_prep(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                         int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                         struct narmat_pput *p)
{
    int s = via_shm(w, target);
    if (s < 0) return NARMAT_NO_PREP;
    int rc = narmat_pput_prep(&hy(w)->shm, oaddr, ocount, otype, s, disp, tcount, ttype, tag, p);
    p->outer = target; /* for note_order at each start */
    return rc;
}

static int hyb_notify_prep(struct narmat_win *w, int target)
{
    int s = via_shm(w, target);
    return s >= 0 ? narmat_notify_prep(&hy(w)->shm, s) : narmat_notify_prep(&hy(w)->mpi, target);
}

static int hyb_pput_start(struct narmat_win *w, const struct narmat_pput *p)
{
    int rc = note_order(w, p->outer);
    return rc ? rc : narmat_pput_start(&hy(w)->shm, p);
}

static int hyb_ticket_done(struct narmat_win *w, int target, uint64_t ticket)
{
    int s = via_shm(w, target);
    return s >= 0 ? narmat_ticket_done(&hy(w)->shm, s, ticket)
                  : narmat_ticket_done(&hy(w)->mpi, target, ticket);
}

static int hyb_get_notify(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    int s = via_shm(w, target), rc;
    if (s >= 0 && (rc = note_order(w, target))) return rc;
    return s >= 0
               ? narmat_get_notify(&hy(w)->shm, oaddr, ocount, otype, s, disp, tcount, ttype, tag)
               : narmat_get_notify(&hy(w)->mpi, oaddr, ocount, otype, target, disp, tcount, ttype,
                                   tag);
}

/* A notified accumulate to a peer of the node: the accumulate through mpi (see acc_path),
 * completed at the target, and its notification through shm's ring, where this origin's other
 * notifications to that peer are, so that their order is kept. */
struct hyb_acc_move {
    struct narmat_win *mpi;
    const void *oaddr;
    int ocount;
    MPI_Datatype otype;
    int target;
    MPI_Aint disp;
    int tcount;
    MPI_Datatype ttype;
    MPI_Op op;
};

static int hyb_acc_move(void *arg)
{
    const struct hyb_acc_move *m = arg;
    narmau_atomic_fence_seq_cst(); /* as acc_order (shm's note settled the pulls before) */
    int rc = narmat_acc(m->mpi, m->oaddr, m->ocount, m->otype, NULL, 0, MPI_DATATYPE_NULL,
                        m->target, m->disp, m->tcount, m->ttype, m->op, NULL);
    return rc ? rc : narmat_flush(m->mpi, m->target);
}

static int hyb_acc_notify(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                          int tag)
{
    struct hyb *h = hy(w);
    int s = via_shm(w, target);
    if (s < 0)
        return narmat_acc_notify(&h->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, op,
                                 tag);
    int tsize;
    int mrc = MPI_Type_size(ttype, &tsize);
    if (mrc != MPI_SUCCESS) return narmau_mpi_error(mrc);
    struct hyb_acc_move m = {&h->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, op};
    return narmat_note(&h->shm, s, NARMAT_NOTE_ACC, tag, (int64_t)tcount * tsize, hyb_acc_move, &m);
}

/* A notification whose data move() moves (through this window's acc or cas, hence mpi for every
 * peer, completed at the target by move): in the ring this origin's other notifications to
 * target use, so that their order is kept. */
static int hyb_note(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                    int (*move)(void *move_arg), void *move_arg)
{
    int s = via_shm(w, target), rc;
    if (s >= 0 && (rc = note_order(w, target))) return rc;
    return s >= 0 ? narmat_note(&hy(w)->shm, s, kind, tag, bytes, move, move_arg)
                  : narmat_note(&hy(w)->mpi, target, kind, tag, bytes, move, move_arg);
}

/* shm's sources are node ranks: back to window ranks for the core. */
static void hyb_note_from_shm(void *arg, int32_t src, int32_t tag, int64_t bytes)
{
    struct hyb *h = arg;
    h->cb(h->cb_arg, h->win_of[src], tag, bytes);
}

static int hyb_poll(struct narmat_win *w, narmat_note_cb cb, void *arg)
{
    struct hyb *h = hy(w);
    int n = 0;
    if (h->has_shm) {
        h->cb = cb;
        h->cb_arg = arg;
        n = narmat_poll(&h->shm, hyb_note_from_shm, h);
    }
    return n + narmat_poll(&h->mpi, cb, arg);
}

/* The context a control word of (kind, writer) lives in, and the writer's rank there. */
static struct narmat_win *ctl_path(struct narmat_win *w, int kind, int peer, int *rank)
{
    struct hyb *h = hy(w);
    int s = kind == NARMAT_CTL_LOCK ? -1 : via_shm(w, peer);
    *rank = s >= 0 ? s : peer;
    return s >= 0 ? &h->shm : &h->mpi;
}

/* grant[p] and done[p] are indexed by the writer's rank in the context that carries them. */
static int ctl_arg(struct narmat_win *sub, int kind, int arg)
{
    return kind == NARMAT_CTL_GRANT || kind == NARMAT_CTL_DONE ? sub->rank : arg;
}

/* The contract's release ordering across the two paths. A control word of a node peer goes
 * through shm, but this process's accumulates to that peer went through mpi: complete them
 * first (mpi's flush returns at once when nothing was issued). A lock word of a node peer goes
 * through mpi, but notified puts to it through shm may still be moving (rput_notify): complete
 * them first (shm's flush is a fence when none is). */
static int ctl_order(struct narmat_win *w, struct narmat_win *sub, int target)
{
    struct hyb *h = hy(w);
    if (sub == &h->shm) return narmat_flush(&h->mpi, target);
    int s = h->has_shm && target >= 0 ? via_shm(w, target) : -1;
    return s >= 0 ? narmat_flush(&h->shm, s) : NARMA_SUCCESS;
}

static int hyb_ctl_add(struct narmat_win *w, int target, int kind, int arg, uint64_t val)
{
    int t;
    struct narmat_win *sub = ctl_path(w, kind, target, &t);
    int rc = ctl_order(w, sub, target);
    if (rc) return rc;
    /* Release: data stored through shm before a lock word update through mpi. */
    if (sub == &hy(w)->mpi && hy(w)->has_shm) narmau_atomic_fence_seq_cst();
    return narmat_ctl_add(sub, t, kind, ctl_arg(sub, kind, arg), val);
}

static int hyb_ctl_cas(struct narmat_win *w, int target, int kind, int arg, uint64_t expected,
                       uint64_t desired, uint64_t *old)
{
    int t;
    struct narmat_win *sub = ctl_path(w, kind, target, &t);
    int orc = ctl_order(w, sub, target);
    if (orc) return orc;
    if (sub == &hy(w)->mpi && hy(w)->has_shm) narmau_atomic_fence_seq_cst(); /* as ctl_add */
    int rc = narmat_ctl_cas(sub, t, kind, ctl_arg(sub, kind, arg), expected, desired, old);
    /* Acquire: a lock taken through mpi orders the shm loads that follow. */
    if (sub == &hy(w)->mpi && hy(w)->has_shm) narmau_atomic_fence_seq_cst();
    return rc;
}

static uint64_t hyb_ctl_load(struct narmat_win *w, int kind, int arg)
{
    struct hyb *h = hy(w);
    if (kind == NARMAT_CTL_LOCK) return narmat_ctl_load(&h->mpi, kind, arg);
    if (kind == NARMAT_CTL_GRANT || kind == NARMAT_CTL_DONE) {
        int s = via_shm(w, arg); /* arg: the peer that writes the word */
        return s >= 0 ? narmat_ctl_load(&h->shm, kind, s) : narmat_ctl_load(&h->mpi, kind, arg);
    }
    /* A fence round: written by peers of both paths (round 0 of the flat barrier). */
    uint64_t v = h->has_shm ? narmat_ctl_load(&h->shm, kind, arg) : 0;
    return v + narmat_ctl_load(&h->mpi, kind, arg);
}

/* The table, with the name the window reports (hyb_win_init picks the network half by it). */
#define HYB_OPS(tname)                                                                            \
    {                                                                                             \
        .size = sizeof(struct narmat_ops), .name = tname,                                         \
        .layout = 1, /* its own agreements at window creation (hyb_win_init) */                   \
            .flush_blocks = 1, .target_name = hyb_target_name, .win_name = hyb_win_name,          \
        .win_init = hyb_win_init, .win_free = hyb_win_free, .attach = hyb_attach,                 \
        .detach = hyb_detach, .check_bounds = hyb_check_bounds, .shared_query = hyb_shared_query, \
        .put = hyb_put, .get = hyb_get, .acc = hyb_acc, .cas = hyb_cas, .flush = hyb_flush,       \
        .flush_local = hyb_flush_local, .sync = hyb_sync, .put_notify = hyb_put_notify,           \
        .get_notify = hyb_get_notify, .acc_notify = hyb_acc_notify,                               \
        .rput_notify = hyb_rput_notify, .ticket_done = hyb_ticket_done,                           \
        .pput_prep = hyb_pput_prep, .pput_start = hyb_pput_start, .notify_prep = hyb_notify_prep, \
        .note = hyb_note, .poll = hyb_poll, .ctl_add = hyb_ctl_add, .ctl_cas = hyb_ctl_cas,       \
        .ctl_load = hyb_ctl_load,                                                                 \
    }

const struct narmat_ops narmat_hybrid_ops = HYB_OPS("shm+mpi");
#ifdef NARMA_HAVE_OFI
const struct narmat_ops narmat_hybrid_ofi_ops = HYB_OPS("shm+ofi");
#endif
