/*
 * The transport interface: everything the core asks of a transport.
 *
 * A transport is a versioned table of function pointers (`size` first, then
 * designated initializers; unsupported entries point at narmat_enosys_*
 * stubs, never NULL). narmat_select refuses a table whose size is not this
 * header's (a transport built against another version). The core calls a
 * transport and reads its table only through the static inline wrappers
 * below, and never reaches into a transport's state (tw->tp).
 *
 * The boundary: a transport sees one window as a struct narmat_win, an
 * opaque-to-the-core context of ranks, sizes and displacement units that the
 * core fills before win_init; it includes no core header and never calls the
 * core. Notifications reach the core through the callback poll() is given.
 * When a notification ring is full a notified access answers NARMAT_AGAIN
 * (nothing was issued) and the core drives progress and calls again: waiting
 * is the core's. A transport may itself serve a window through other
 * transports' tables on sub-contexts (the hybrid transport: shm between ranks
 * that share memory, mpi between the others).
 *
 * Contract for every data operation (put/get/acc/cas): arguments were checked
 * by the core (rank, counts, datatypes, bounds, epoch state). A blocking
 * operation (mreq == NULL) is locally complete when it returns, so the origin
 * buffer may be reused at once on every transport (stricter than MPI, which
 * lets programs reuse it only after a flush); it is remotely complete after
 * flush(w, target). Request-based forms return an MPI request in *mreq
 * (MPI_REQUEST_NULL when already complete) and are locally complete with it.
 *
 * Notified accesses (put_notify/get_notify/acc_notify) are complete at the
 * target *with their notification* when they return: the target's poll()
 * delivers the notification without any further action by the origin. When
 * the target's ring is full, they drive narma's progress (so two ranks
 * notifying each other cannot deadlock) and retry; they never drop.
 *
 * Control words ("ctl") are 64-bit counters owned by each rank, updated
 * remotely with atomics and read locally; the epoch engine is built on them.
 */
#ifndef NARMAT_TRANSPORT_H
#define NARMAT_TRANSPORT_H

#include <narma/narma.h>
#include <stddef.h>
#include <stdint.h>
#include "util/err.h"
#include "util/wait.h"
#include "util/pmpi_unlocked.h"

/* Internal "try again": a queue (notification ring) is full; nothing was done. Never returned
 * to the user: the core drives progress and calls again. */
#define NARMAT_AGAIN (-11)
/* Internal: pput_prep has no prepared form for this access; the core calls put_notify at every
 * start instead. Never returned to the user. */
#define NARMAT_NO_PREP (-12)

/* A persistent notified put prepared once (pput_prep fills it, pput_start reads it): the
 * transport's own storage, opaque to the core, which keeps it in the persistent request. A
 * transport copies its own struct in and out of bytes with memcpy (no access through another
 * type). A transport serving through others (hybrid) lets one of them fill bytes and keeps
 * what it needs itself in outer. */
struct narmat_pput {
    _Alignas(8) unsigned char bytes[56];
    int32_t outer; /* the serving transport's (hybrid: the target's window rank) */
    int32_t unused;
};

struct narmat_ops;

/* What a transport sees of a window. The core fills every field but tp, base (allocate),
 * model and attr_win before win_init; win_init fills those. A transport serving a window
 * through others builds sub-contexts of its own (other comm, rank, size). */
struct narmat_win {
    const struct narmat_ops *ops; /* the transport serving this context */
    void *tp;                     /* that transport's state */
    MPI_Comm comm;                /* the ranks of this context (a private communicator) */
    MPI_Comm node;                /* comm's ranks on this process's node (narmat_node_get): for
                                   * win_init; shared, never freed by a transport */
    int rank, size;               /* this process's rank in comm, and comm's size */
    int flavor;                   /* MPI_WIN_FLAVOR_CREATE, _ALLOCATE, _DYNAMIC or _SHARED */
    int disp_unit;                /* this rank's displacement unit */
    MPI_Aint size_bytes;          /* this rank's window memory in bytes (0 when dynamic) */
    void *base;                   /* this rank's window memory (win_init sets it: allocate) */
    int model;                    /* MPI_WIN_UNIFIED unless win_init says MPI_WIN_SEPARATE */
    MPI_Win attr_win;             /* win_init sets it: an MPI window carrying attributes, name */
    MPI_Aint attr_off;            /* win_init sets it: bytes from the start of attr_win's memory
                                   * (MPI_Win_shared_query) to the window's, on every rank */
    uint32_t ring_slots;          /* notification ring capacity per target (power of two) */
    /* Window info narma_notify_completion=flush: a notified access, its data and its
     * notification may complete at the origin's next flush (or unlock, complete, fence, control
     * update to that target, or progress pass) instead of on return, as MPI_Put does; the
     * origin buffer is reusable after that flush. A transport may complete earlier (shm does). */
    int notify_deferred;
    /* Window info narma_pull_min: request-based notified puts of at least this many bytes may
     * move after the call returns (rput_notify; the shm transport lets the target pull them);
     * 0: never; -1: not given (the transport's default). */
    int64_t pull_min;
    /* Set by win_init: rput_notify may answer with a ticket on this window (else the core
     * calls put_notify, which costs fewer instructions). */
    int may_defer;
    /* Set only by a transport that serves the window through this one: the window memory of
     * rank r is already shared through this MPI window, as its rank shared_rank[r]
     * (MPI_Win_shared_query), so nothing is allocated or moved (flavor CREATE). */
    MPI_Win shared_win;
    const int *shared_rank;
    MPI_Aint shared_off; /* and starts this many bytes into that window's memory */
};

/* Control words every rank owns. */
enum narmat_ctl_kind {
    NARMAT_CTL_LOCK = 0, /* passive-target lock word: bit 63 exclusive, bits 32-62 waiting
                          * writers, bits 0-31 shared holders (epoch_lock.c) */
    NARMAT_CTL_FENCE,    /* arg = round (0..63) of the fence barrier (0 only when flat) */
    NARMAT_CTL_GRANT,    /* arg = peer: exposures the peer granted me (written by the peer) */
    NARMAT_CTL_DONE,     /* arg = peer: access epochs the peer completed toward me */
};
#define NARMAT_LOCK_EXCL    (UINT64_C(1) << 63)
#define NARMAT_FENCE_ROUNDS 64

/* Notification kinds carried in a record. */
enum narmat_note_kind { NARMAT_NOTE_PUT = 1, NARMAT_NOTE_GET, NARMAT_NOTE_ACC };

/* Called by poll() for each notification drained from the local ring, in arrival order, with
 * the arg poll() was given; src is a rank of the context poll() was called on. */
typedef void (*narmat_note_cb)(void *arg, int32_t src, int32_t tag, int64_t bytes);

#define NARMAT_OPS_VERSION 8

struct narmat_ops {
    size_t size; /* sizeof(struct narmat_ops) the transport was built with */
    const char *name;
    int flush_blocks; /* flush waits for the network: epoch-closing calls defer it to progress */
    /* Version of what this transport's processes exchange (memory layouts, records, protocol):
     * bumped with any change a process of another build would misread (narmat_wire_version). */
    unsigned layout;

    /* The transport that moves data between this process and target (its own name, or one of
     * the transports it serves the window through). */
    const char *(*target_name)(struct narmat_win *w, int target);
    /* The name the created window reports, where it can differ from `name` (a transport whose
     * own path could not open and that serves the window through another); NULL: `name`. */
    const char *(*win_name)(struct narmat_win *w);

    /* Window life cycle. win_init fills w->base (allocate), w->tp and w->attr_win.
     * base/size: user memory for FLAVOR_CREATE; size for FLAVOR_ALLOCATE and FLAVOR_SHARED.
     * Collective. It sets w->model when the memory model is not MPI_WIN_UNIFIED.
     * FLAVOR_SHARED (Win_allocate_shared; narmat_select offers it only when every rank of
     * comm shares memory): memory every rank can load from and store to, from one MPI shared
     * allocation over comm with the window's info, so that it is contiguous across ranks
     * (rank r's after rank r-1's) unless info says alloc_shared_noncontig=true. A transport
     * that cannot share memory refuses it with NARMA_ERR_UNSUPPORTED on every rank. */
    int (*win_init)(struct narmat_win *w, void *base, MPI_Aint size, MPI_Info info);
    int (*win_free)(struct narmat_win *w); /* collective */
    int (*attach)(struct narmat_win *w, void *base, MPI_Aint size);
    int (*detach)(struct narmat_win *w, const void *base);
    /* Bounds of target memory: 0 if [lo, hi) bytes from disp*disp_unit is inside the target's
     * window, NARMA_ERR_DISP otherwise. */
    int (*check_bounds)(struct narmat_win *w, int target, MPI_Aint disp, MPI_Aint lo, MPI_Aint hi);
    /* Where target's window memory is in this process's address space (Win_shared_query;
     * never called for dynamic windows). Sets *size and *disp_unit to target's, and *base to
     * that address with NARMA_SUCCESS when this process can load from and store to it;
     * otherwise *base = NULL and NARMA_ERR_RANK (its memory is not shared with this process). */
    int (*shared_query)(struct narmat_win *w, int target, MPI_Aint *size, int *disp_unit,
                        void **base);

    /* Data movement. */
    int (*put)(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype, int target,
               MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq);
    int (*get)(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype, int target,
               MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq);
    /* Accumulate (raddr == NULL) or get-accumulate. */
    int (*acc)(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
               int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
               MPI_Datatype ttype, MPI_Op op, MPI_Request *mreq);
    int (*cas)(struct narmat_win *w, const void *oaddr, const void *caddr, void *raddr,
               MPI_Datatype type, int target, MPI_Aint disp);
    int (*flush)(struct narmat_win *w, int target);       /* target < 0: all */
    int (*flush_local)(struct narmat_win *w, int target); /* target < 0: all */
    int (*sync)(struct narmat_win *w); /* public/private copies, memory barrier */

    /* Notified accesses. A negative tag (-1 - idx, idx < 2^30) is a counter-indexed
     * notification (core/counter.c): carried and delivered unchanged, like any tag. */
    int (*put_notify)(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                      int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag);
    int (*get_notify)(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype, int target,
                      MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag);
    int (*acc_notify)(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                      int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                      int tag);
    /* The request-based notified put (Rput_notify, persistent starts): as put_notify, except
     * that the data may move after the call returns (e.g. the target pulls it while the origin
     * computes). *ticket = 0: complete on return, as put_notify. Otherwise the access is
     * complete (origin buffer reusable, data and notification at the target) once
     * ticket_done(w, target, *ticket) answers 1, and at the target after flush(w, target), a
     * control update to target or win_free, whichever comes first. */
    int (*rput_notify)(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                       int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                       uint64_t *ticket);
    /* 1 if the access behind ticket (from rput_notify toward target) is complete, else 0.
     * Never waits; a transport may move the data itself when the target has not begun to. */
    int (*ticket_done)(struct narmat_win *w, int target, uint64_t ticket);
    /* A persistent notified put (Put_notify_init), checked by the core: compute once into *p
     * what each start needs (addresses, sizes, the record) and answer NARMA_SUCCESS, or answer
     * NARMAT_NO_PREP when this access has no prepared form here (the core then calls put_notify
     * at every start). What *p holds stays valid for the window's life (the core never
     * prepares accesses of dynamic windows, whose memory moves). */
    int (*pput_prep)(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                     int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                     struct narmat_pput *p);
    /* A start of what pput_prep prepared: exactly put_notify with pput_prep's arguments
     * (NARMAT_AGAIN, nothing done, while the ring is full). */
    int (*pput_start)(struct narmat_win *w, const struct narmat_pput *p);
    /* Make now what a notified access toward target will need of this context's memory
     * (per-target state it would otherwise allocate at the first access), so that the starts
     * of a persistent notified access allocate nothing there (a Startall then fails, if at all,
     * before it started any). NARMA_ERR_NO_MEM when it cannot; no network operation. */
    int (*notify_prep)(struct narmat_win *w, int target);
    /* A notification of `kind` and `bytes` whose data another path moves: claim room in
     * target's ring (NARMAT_AGAIN, with nothing done, when full), call move(move_arg) (the
     * data access, complete at the target when it returns), then publish the notification
     * (void, never delivered, if move failed; its error is returned). Lets a transport that
     * serves pairs through others keep one origin's notifications in one ring, and the core
     * notify a fetching atomic (Get_accumulate_notify, Fetch_and_op_notify,
     * Compare_and_swap_notify) whose data step is this context's own acc or cas. move may call
     * this context's data operations and flush; the claimed slot is published after it
     * returns. */
    int (*note)(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                int (*move)(void *move_arg), void *move_arg);
    /* Drain the local notification ring, calling cb(arg, ...) per record; returns how many
     * records were delivered. */
    int (*poll)(struct narmat_win *w, narmat_note_cb cb, void *arg);

    /* Control words. Remote updates are atomic and ordered after every data operation this
     * process issued to that target before the call (release semantics: a peer that observes
     * the new value also observes the data). */
    int (*ctl_add)(struct narmat_win *w, int target, int kind, int arg, uint64_t val);
    int (*ctl_cas)(struct narmat_win *w, int target, int kind, int arg, uint64_t expected,
                   uint64_t desired, uint64_t *old);
    /* Local read with acquire semantics (pairs with the release of the remote update). */
    uint64_t (*ctl_load)(struct narmat_win *w, int kind, int arg);
};

extern const struct narmat_ops narmat_shm_ops;
extern const struct narmat_ops narmat_mpi_ops;
extern const struct narmat_ops narmat_hybrid_ops;
#ifdef NARMA_HAVE_OFI
extern const struct narmat_ops narmat_ofi_ops;        /* transport/ofi/ofi.c */
extern const struct narmat_ops narmat_hybrid_ofi_ops; /* hybrid with ofi between nodes */
#endif

/* Choose the transport for a new window on comm, whose node communicator is node
 * (narmat_node_get); collective: every rank gets the same answer. NARMA_ERR_INTERN if the
 * chosen table fails narmat_ops_check. */
int narmat_select(MPI_Comm comm, MPI_Comm node, int flavor, const struct narmat_ops **ops);

/* Read the transport layer's environment (NARMA_TRANSPORT, NARMA_NODE_SIZE) once, at narma's
 * initialisation; unknown values are reported on stderr and ignored. */
void narmat_configure(void);

/* Ranks of comm that share a node with this process: the ranks that share memory, split
 * further by NARMA_NODE_SIZE=k (pretend nodes of k consecutive MPI_COMM_WORLD ranks, so that
 * several nodes are tested on one machine). comm is a duplicate of parent (the communicator the
 * program passed); the communicator is made once per parent (collective over comm then) and
 * kept with it, so a window costs no split and holds no communicator of its own for its node
 * (MPI libraries have a few thousand). The caller holds a reference until narmat_node_put and
 * must not free *node itself. Fails only when the split does (every rank alike). */
struct narmat_node;
int narmat_node_get(MPI_Comm parent, MPI_Comm comm, struct narmat_node **ref, MPI_Comm *node);
void narmat_node_put(struct narmat_node *ref, MPI_Comm *node);

/* The transport to try when the selected one refused a window with
 * NARMA_ERR_UNSUPPORTED on every rank (the portable one); NARMA_ERR_UNSUPPORTED
 * when there is none left. */
int narmat_fallback(const struct narmat_ops **ops);
/* NARMA_SUCCESS if ops->size is sizeof(struct narmat_ops) as this header defines it, else
 * NARMA_ERR_INTERN with a message naming the transport and both sizes. */
int narmat_ops_check(const struct narmat_ops *ops);

/* What every rank of a window must agree on before any transport exchanges anything: the
 * layouts of all transports (a window may use any of them) and the core's use of control words
 * (NARMAT_WIRE_CORE). Window creation compares it across ranks (window.c) and refuses, on
 * every rank, a window whose ranks run builds that would misread each other. Test hook
 * NARMA_TEST_WIRE=RANK (MPI_COMM_WORLD rank, read at every window creation): that process
 * answers another version. */
#define NARMAT_WIRE_CORE 1
uint32_t narmat_wire_version(void);

/* Test hook NARMA_TEST_FAIL_ALLOC=RANK[:STAGE] (STAGE defaults to 1): 1 when this process,
 * rank RANK of MPI_COMM_WORLD, should fail window creation at this stage as if out of memory.
 * Each transport numbers its own stages (shm.c, mpi.c); tests use it to show that every rank
 * fails together. World ranks, so that the hook means the same process in a sub-context. */
int narmat_test_fail_alloc(int stage);

/* check_bounds of a window of fixed size per rank: the bytes [disp * unit + lo, disp * unit + hi)
 * inside [0, size) of target's window (a product or sum that overflows would wrap to an address
 * inside it; no division, which costs tens of cycles on every access); NARMA_ERR_DISP, with a
 * message, otherwise. Empty ranges (hi <= lo) are the caller's. */
int narmat_bounds_error(int target, MPI_Aint disp, int unit, MPI_Aint lo, MPI_Aint hi,
                        MPI_Aint size) __attribute__((cold));
static inline int narmat_bounds_check(int target, MPI_Aint disp, int unit, MPI_Aint lo, MPI_Aint hi,
                                      MPI_Aint size)
{
    MPI_Aint off, first, end;
    if (disp < 0 || __builtin_mul_overflow(disp, (MPI_Aint)unit, &off) ||
        __builtin_add_overflow(off, lo, &first) || __builtin_add_overflow(off, hi, &end) ||
        first < 0 || end > size)
        return narmat_bounds_error(target, disp, unit, lo, hi, size);
    return NARMA_SUCCESS;
}

/* "Not supported" stubs for unused entries; target_name for a transport that serves every
 * target itself. */
const char *narmat_own_name(struct narmat_win *w, int target);
int narmat_enosys_attach(struct narmat_win *w, void *base, MPI_Aint size);
int narmat_enosys_detach(struct narmat_win *w, const void *base);
/* shared_query for a transport that cannot tell: NARMA_ERR_UNSUPPORTED. */
int narmat_enosys_shared_query(struct narmat_win *w, int target, MPI_Aint *size, int *disp_unit,
                               void **base);
int narmat_enosys_note(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                       int (*move)(void *move_arg), void *move_arg);
/* rput_notify for a transport whose notified puts are complete on return: put_notify, ticket 0;
 * ticket_done for it (never called with a ticket: 1). */
int narmat_rput_notify_now(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                           int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                           uint64_t *ticket);
int narmat_ticket_none(struct narmat_win *w, int target, uint64_t ticket);
/* pput_prep for a transport without prepared puts (NARMAT_NO_PREP); its pput_start, never
 * called then, answers NARMA_ERR_INTERN. */
int narmat_pput_none(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                     int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                     struct narmat_pput *p);
int narmat_pput_nostart(struct narmat_win *w, const struct narmat_pput *p);
/* notify_prep for a transport whose notified accesses allocate nothing per target. */
int narmat_notify_prep_none(struct narmat_win *w, int target);

/* ---- wrappers: the only way the core calls a transport ---- */
static inline const char *narmat_name(const struct narmat_win *w) { return w->ops->name; }
/* What NARMA_Win_get_transport says of a created window. */
static inline const char *narmat_win_name(struct narmat_win *w)
{
    return w->ops->win_name != NULL ? w->ops->win_name(w) : w->ops->name;
}
static inline int narmat_flush_blocks(const struct narmat_win *w) { return w->ops->flush_blocks; }
static inline const char *narmat_target_name(struct narmat_win *w, int target)
{
    return w->ops->target_name(w, target);
}
static inline int narmat_win_init(struct narmat_win *w, void *base, MPI_Aint size, MPI_Info info)
{
    return w->ops->win_init(w, base, size, info);
}
static inline int narmat_win_free(struct narmat_win *w) { return w->ops->win_free(w); }
static inline int narmat_attach(struct narmat_win *w, void *base, MPI_Aint size)
{
    return w->ops->attach(w, base, size);
}
static inline int narmat_detach(struct narmat_win *w, const void *base)
{
    return w->ops->detach(w, base);
}
static inline int narmat_check_bounds(struct narmat_win *w, int target, MPI_Aint disp, MPI_Aint lo,
                                      MPI_Aint hi)
{
    return w->ops->check_bounds(w, target, disp, lo, hi);
}
static inline int narmat_shared_query(struct narmat_win *w, int target, MPI_Aint *size,
                                      int *disp_unit, void **base)
{
    return w->ops->shared_query(w, target, size, disp_unit, base);
}
static inline int narmat_put(struct narmat_win *w, const void *oaddr, int ocount,
                             MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                             MPI_Datatype ttype, MPI_Request *mreq)
{
    return w->ops->put(w, oaddr, ocount, otype, target, disp, tcount, ttype, mreq);
}
static inline int narmat_get(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype,
                             int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                             MPI_Request *mreq)
{
    return w->ops->get(w, oaddr, ocount, otype, target, disp, tcount, ttype, mreq);
}
static inline int narmat_acc(struct narmat_win *w, const void *oaddr, int ocount,
                             MPI_Datatype otype, void *raddr, int rcount, MPI_Datatype rtype,
                             int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                             MPI_Request *mreq)
{
    return w->ops->acc(w, oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount, ttype,
                       op, mreq);
}
static inline int narmat_cas(struct narmat_win *w, const void *oaddr, const void *caddr,
                             void *raddr, MPI_Datatype type, int target, MPI_Aint disp)
{
    return w->ops->cas(w, oaddr, caddr, raddr, type, target, disp);
}
static inline int narmat_flush(struct narmat_win *w, int target)
{
    return w->ops->flush(w, target);
}
static inline int narmat_flush_local(struct narmat_win *w, int target)
{
    return w->ops->flush_local(w, target);
}
static inline int narmat_sync(struct narmat_win *w) { return w->ops->sync(w); }
static inline int narmat_put_notify(struct narmat_win *w, const void *oaddr, int ocount,
                                    MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                                    MPI_Datatype ttype, int tag)
{
    return w->ops->put_notify(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag);
}
static inline int narmat_rput_notify(struct narmat_win *w, const void *oaddr, int ocount,
                                     MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                                     MPI_Datatype ttype, int tag, uint64_t *ticket)
{
    return w->ops->rput_notify(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag, ticket);
}
static inline int narmat_ticket_done(struct narmat_win *w, int target, uint64_t ticket)
{
    return w->ops->ticket_done(w, target, ticket);
}
static inline int narmat_pput_prep(struct narmat_win *w, const void *oaddr, int ocount,
                                   MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                                   MPI_Datatype ttype, int tag, struct narmat_pput *p)
{
    return w->ops->pput_prep(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag, p);
}
static inline int narmat_pput_start(struct narmat_win *w, const struct narmat_pput *p)
{
    return w->ops->pput_start(w, p);
}
static inline int narmat_notify_prep(struct narmat_win *w, int target)
{
    return w->ops->notify_prep(w, target);
}
static inline int narmat_get_notify(struct narmat_win *w, void *oaddr, int ocount,
                                    MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                                    MPI_Datatype ttype, int tag)
{
    return w->ops->get_notify(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag);
}
static inline int narmat_acc_notify(struct narmat_win *w, const void *oaddr, int ocount,
                                    MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                                    MPI_Datatype ttype, MPI_Op op, int tag)
{
    return w->ops->acc_notify(w, oaddr, ocount, otype, target, disp, tcount, ttype, op, tag);
}
static inline int narmat_note(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                              int (*move)(void *move_arg), void *move_arg)
{
    return w->ops->note(w, target, kind, tag, bytes, move, move_arg);
}
static inline int narmat_poll(struct narmat_win *w, narmat_note_cb cb, void *arg)
{
    return w->ops->poll(w, cb, arg);
}
static inline int narmat_ctl_add(struct narmat_win *w, int target, int kind, int arg, uint64_t v)
{
    return w->ops->ctl_add(w, target, kind, arg, v);
}
static inline int narmat_ctl_cas(struct narmat_win *w, int target, int kind, int arg, uint64_t e,
                                 uint64_t d, uint64_t *old)
{
    return w->ops->ctl_cas(w, target, kind, arg, e, d, old);
}
static inline uint64_t narmat_ctl_load(struct narmat_win *w, int kind, int arg)
{
    return w->ops->ctl_load(w, kind, arg);
}
#endif
