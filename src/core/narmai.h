/* Core internals shared by src/core. Not installed. */
#ifndef NARMAI_H
#define NARMAI_H

#include <narma/narma.h>
#include <stdint.h>
#include <stddef.h>
#include "util/list.h"
#include "util/atomic.h"
#include "util/err.h"
#include "util/wait.h"
#include "util/thread.h"
#include "transport/transport.h"

/* ---- global state ---- */
struct narmai_global {
    int initialized;         /* narma state is set up */
    int we_initialized_mpi;  /* NARMA_Init called MPI_Init */
    uint32_t ring_slots;     /* notification ring capacity per target */
    uint32_t fence_flat_max; /* largest window whose fence barrier is one step */
    uint64_t lock_pref_ns;   /* longest a lock holder defers to a waiting writer */
    int nlocks_held;         /* passive-target locks held, every window (epoch_lock.c) */
    narmau_dlist windows;    /* every live window (progress visits them in creation order) */
    int nwindows;
    unsigned focused; /* passes of waits (progress.c: which windows each pass visits) */
};
extern struct narmai_global narmai_g;
int narmai_lazy_init(void);
static inline int narmai_ensure_init(void)
{
    /* Acquire: pairs with the release store that ends narmai_lazy_init, so a thread that
     * sees it set sees the state it set up. */
    return __atomic_load_n(&narmai_g.initialized, __ATOMIC_ACQUIRE) ? NARMA_SUCCESS
                                                                    : narmai_lazy_init();
}

/* ---- threads (util/thread.h) ----
 * NARMAI_API_LOCK(); opens every public call: narma initialises itself first when MPI is up
 * (so the process lock is known to be on or off before the call touches anything), then the
 * call holds the process lock until it returns, if the lock is on. The lock off, that is one
 * load and one branch here and one at the return. */
int narmai_api_enter_slow(void);
static inline int narmai_api_enter(void)
{
    if (__builtin_expect(__atomic_load_n(&narmau_lock_mode, __ATOMIC_ACQUIRE) == NARMAU_LOCK_OFF,
                         1))
        return 0;
    return narmai_api_enter_slow();
}
#define NARMAI_API_LOCK() \
    const int narmai_api_entered_ __attribute__((cleanup(narmau_api_leave))) = narmai_api_enter()

/* ---- epochs ---- */

/* ---- requests ----
 * Persistent notification requests (NARMA_Notify_init):
 *
 *     Notify_init ──> INACTIVE ──Start──> ACTIVE ──(matched == expected)──> COMPLETE
 *                        ^                   │                                  │
 *                        └───────────────────┴──────── Test/Wait ───────────────┘
 *                                        (Test/Wait on ACTIVE polls progress)
 *     Request_free from any state: an ACTIVE request is withdrawn from the
 *     window's active list first, so it matches nothing afterwards.
 *     Start on ACTIVE or COMPLETE is NARMA_ERR_REQUEST.
 *
 * Non-persistent requests (Rput, Rget, ..., R*_notify) are created ACTIVE (or
 * already COMPLETE); Test/Wait that observes completion frees them and sets
 * the caller's handle to NARMA_REQUEST_NULL. */
enum narmai_req_kind {
    NARMAI_REQ_NOTIFY = 1,
    NARMAI_REQ_RMA,
    NARMAI_REQ_EPOCH,
    NARMAI_REQ_PACC,
    NARMAI_REQ_THRESH /* NARMA_Win_notify_ithreshold (counter.c) */
};
enum narmai_req_state {
    NARMAI_REQ_INACTIVE = 1,
    NARMAI_REQ_ACTIVE,
    NARMAI_REQ_COMPLETE,
    NARMAI_REQ_DEAD
};
#define NARMAI_REQ_MAGIC 0x6e61726d61726571ull /* "narmareq" */

struct narmai_win;
struct narmai_request {
    uint64_t magic;
    uint8_t kind, state;
    uint8_t listed;   /* check_array: seen earlier in the array */
    int32_t src, tag; /* match specification (notification requests) */
    int32_t expected, matched;
    int32_t st_src, st_tag; /* status of the last match */
    int64_t st_bytes;
    int st_error;
    uint8_t st_cached; /* st_template holds the count for st_cached_bytes */
    int64_t st_cached_bytes;
    MPI_Status st_template;
    struct narmai_win *win;
    narmau_dlist link;   /* on win->active_reqs while ACTIVE */
    MPI_Request mpi_req; /* RMA requests on the mpi transport */
    /* Back pointer cleared by whichever side goes first, so neither touches
     * the other after it is gone: epoch-closing requests, the epoch
     * (e->close_req); RMA requests, their recorded operation (op->req)
     * until it is issued. */
    void *ctx;
    int (*poll)(struct narmai_request *r); /* flush requests: completion test */
    uint64_t upto;            /* flush: operations up to this sequence number; threshold: value */
    int target;               /* flush: rank or -1; threshold requests: the counter's index */
    uint8_t local;            /* flush requests: local completion only */
    uint8_t ticketed;         /* on win->pull_reqs: completes with a transport ticket (upto) */
    struct narmai_pacc *pacc; /* persistent notified accesses: the access, checked at init */
};

/* Persistent notified access (NARMA_Put_notify_init, ...): every argument checked once at
 * init; Start issues it with no further check except a dynamic window's bounds (regions
 * come and go). Same life cycle as a notification request; counted in win->nreqs, so the
 * window cannot be freed under it. */
enum narmai_pacc_kind { NARMAI_PACC_PUT = 1, NARMAI_PACC_GET, NARMAI_PACC_ACC };
struct narmai_pacc {
    int kind;
    void *oaddr;
    int ocount, target, tcount, tag;
    MPI_Datatype otype, ttype; /* held (narmai_type_hold) */
    MPI_Aint disp;
    MPI_Op op;
    int prepared;            /* a put the transport prepared: each start is pput_start(&prep) */
    struct narmat_pput prep; /* the transport's */
};
int narmai_pacc_start(struct narmai_request *r);
void narmai_pacc_release(struct narmai_request *r);

/* ---- unexpected queue (notify_match.c) ---- */
struct narmai_uq_entry;
struct narmai_uq_bin;
/* Memory follows the live entries (notify_match.c): at most
 * max(NARMAI_UQ_IDLE_BINS_MIN, 2 x live bins) empty bins stay in the hash, and
 * at most the _MAX free entries and bins are cached. */
/* A notification drained from the ring cannot be refused: the queue keeps a reserve of
 * entries and bins, made with the window, which a push takes only when malloc fails (made
 * again by the next NARMA_Start of a notification request), so a passing shortage loses
 * nothing. The caches' caps count beyond the reserve. */
enum {
    NARMAI_UQ_IDLE_BINS_MIN = 64,
    NARMAI_UQ_CACHED_ENTRIES_MAX = 256,
    NARMAI_UQ_CACHED_BINS_MAX = 64,
    NARMAI_UQ_RESERVE_ENTRIES = 8,
    NARMAI_UQ_RESERVE_BINS = 3 * NARMAI_UQ_RESERVE_ENTRIES
};
struct narmai_uq {
    narmau_dlist all;               /* every entry in arrival order */
    struct narmai_uq_bin **buckets; /* hash of bins keyed by (src,tag), by src, by tag */
    uint32_t nbuckets;
    uint32_t nbins;     /* bins holding entries */
    uint32_t nidle;     /* empty bins still in the hash */
    uint32_t nfree;     /* entries on freelist */
    uint32_t nfreebins; /* bins on freebins */
    size_t count;
    struct narmai_uq_entry *freelist; /* cached free entries */
    struct narmai_uq_bin *freebins;   /* cached free bins */
};
void narmai_uq_init(struct narmai_uq *q);
/* Makes the reserve and the first buckets; NARMA_ERR_NO_MEM. */
int narmai_uq_reserve(struct narmai_uq *q);
void narmai_uq_destroy(struct narmai_uq *q);
/* What the UQ holds, for the unit tests. */
struct narmai_uq_stats {
    size_t entries;
    uint32_t bins, idle_bins, buckets, cached_entries, cached_bins;
};
void narmai_uq_get_stats(const struct narmai_uq *q, struct narmai_uq_stats *st);
/* Append an arrived notification. Returns 0 or NARMA_ERR_NO_MEM. */
int narmai_uq_push(struct narmai_uq *q, int32_t src, int32_t tag, int64_t bytes);
/* Remove the oldest entry matching (src, tag) (wildcards allowed); 1 if found. O(1). */
int narmai_uq_pop(struct narmai_uq *q, int32_t src, int32_t tag, int32_t *out_src, int32_t *out_tag,
                  int64_t *out_bytes);

/* Matching of arrived notifications against active requests (notify_match.c). */
void narmai_notify_arrived(struct narmai_win *w, int32_t src, int32_t tag, int64_t bytes);
int narmai_notify_start(struct narmai_request *r);
void narmai_notify_withdraw(struct narmai_request *r);

/* ---- counter-indexed notifications (counter.c) ----
 * A counter-notified access travels as a tag-matched one whose tag is negative: tag
 * -1 - idx names counter idx (narmat_ctr_tag). The arrival callback counts it instead of
 * matching it, and completes the threshold requests the count reaches. */
void narmai_counter_arrived(struct narmai_win *w, int32_t tag);
/* NARMA_Request_free of a threshold request: a pending one leaves w->thresh_reqs. */
void narmai_threshold_withdraw(struct narmai_request *r);
void narmai_counter_free(struct narmai_win *w);
int narmai_counter_attr(struct narmai_win *w, int keyval, void *val);

/* ---- groups of post and start (group.c) ---- */
enum { NARMAI_GROUP_CACHE = 4 }; /* translations remembered per window */
struct narmai_group_entry {
    MPI_Group key;  /* the program's handle (MPI may reuse it once the group is freed) */
    MPI_Group copy; /* ours, same members in the same order; MPI_GROUP_NULL: entry unused */
    int n;          /* members */
    int *ranks;     /* their window ranks */
    uint64_t used;  /* last use, for replacement */
};

/* ---- windows ---- */
#define NARMAI_WIN_MAGIC 0x6e61726d6177696eull /* "narmawin" */

/* An access narmai_rma_check accepted (rma.c), remembered so that the same arguments again are
 * accepted without the checks while nothing they depend on changed: the window's geometry (fixed
 * but for dynamic windows, never remembered) and the datatype descriptions (narmau_dtype_gen,
 * bumped when MPI frees a described type, whose handle it may then reuse). */
#define NARMAI_CHK_MEMO 8 /* sets per window, indexed by target rank modulo this */
#define NARMAI_CHK_WAYS 2 /* accesses remembered per set (a neighbour's several fields) */
_Static_assert((NARMAI_CHK_MEMO & (NARMAI_CHK_MEMO - 1)) == 0, "a power of two");
struct narmai_chk_memo {
    MPI_Aint disp;
    MPI_Datatype otype, ttype;
    uint64_t gen1; /* narmau_dtype_gen + 1 when accepted; 0: empty */
    int target, ocount, tcount;
    int no_origin; /* flags & NARMAI_CHK_NO_ORIGIN (the only flag the checks read) */
};
struct narmai_chk_set {
    struct narmai_chk_memo way[NARMAI_CHK_WAYS];
    unsigned next; /* the way the next accepted access replaces */
};

struct narmai_win {
    uint64_t magic;
    /* What the transport sees: t.comm (the window's private duplicate), t.rank, t.size,
     * t.flavor, t.size_bytes (local size), t.disp_unit, t.base, t.model (NARMA_WIN_MODEL),
     * t.attr_win (the MPI window carrying attributes and the name), t.ops, t.tp. */
    struct narmat_win t;
    struct narmat_node *node_ref; /* t.node's reference (narmat_node_get) */
    MPI_Group group;              /* the window's group */
    int *iota;                    /* 0, 1, ..., size-1 (group translation) */
    narmau_dlist link;            /* on narmai_g.windows */

    /* epochs (epoch.h) */
    narmau_dlist epochs; /* every epoch not yet DONE (or not yet closed), opening order */
    uint64_t clock;      /* program-order stamp of synchronisation calls */
    struct narmai_epoch *cur_access;   /* program-open fence, PSCW access or lock_all epoch */
    struct narmai_epoch *cur_exposure; /* program-open PSCW exposure epoch */
    struct narmai_epoch **lock_ep;     /* per target: program-open lock epoch */
    int nlock_open;
    int *acc_member;           /* per target: 1 + index in cur_access's PSCW group, or 0 */
    uint64_t fence_count;      /* fences called so far (barrier numbers) */
    int reorder;               /* NARMAI_AAAR | ... from the window's info */
    uint32_t fence_flat_max;   /* at creation, agreed by every rank of the window */
    uint32_t test_fail_replay; /* test-only fault injection (epoch.c) */
    uint32_t test_fail_lock;   /* test-only fault injection (epoch.c) */
    int test_pput_strict;      /* test-only: an unprepared put toward shm fails (epoch.c) */
    struct narmai_chk_set chk_memo[NARMAI_CHK_MEMO]; /* accepted accesses (rma.c) */
    uint64_t op_seq;                                 /* RMA calls submitted so far */
    uint64_t nrecorded;                              /* of which still recorded (not issued) */
    /* O(1) epoch matching counters per peer (paper section VII-B) */
    uint64_t *a_req;  /* accesses requested toward peer */
    uint64_t *e_open; /* exposures opened toward peer */

    /* notification matching */
    narmau_dlist active_reqs; /* ACTIVE notification requests in Start order */
    int nreqs;                /* live notification requests bound to this window */
    int nflush;               /* flush requests not yet complete (they poll the window) */
    narmau_dlist pull_reqs;   /* Rput_notify / persistent starts whose data is still moving */
    struct narmai_uq uq;
    struct narmai_epoch *free_epochs; /* recycled epoch objects */

    /* counter-indexed notifications (counter.c): this process's counters, and how many
     * every rank has (NULL until NARMA_Win_set_num_notify) */
    uint64_t *ctr;
    int nctr;
    int *ctr_num; /* pending threshold requests count in nflush (the window is busy) */
    int nthresh;  /* of which threshold requests (NARMA_Win_set_num_notify refuses them) */
    narmau_dlist thresh_reqs; /* the pending threshold requests, in creation order */
    /* The last target a counter-notified access found ready (counter.c, ctr_ready): its
     * counter count, and the epoch clock and recorded operations then (none). */
    struct {
        int target, n;
        uint64_t clock;
    } ctr_memo;

    /* group translations of post and start (group.c) */
    struct narmai_group_entry gcache[NARMAI_GROUP_CACHE];
    uint64_t gcache_clock;

    /* error handler (errhandler.c): NULL is NARMA_ERRORS_RETURN */
    struct narmai_errhandler *eh;
    int in_handler; /* the handler runs: errors inside it call no handler */
    /* The thread running a collective call on this window (window free, set_num_notify),
     * whose MPI collectives run with the process lock let go: other threads' progress passes
     * leave the window alone meanwhile (narmau_self; 0: none). Written and read under the
     * process lock. */
    uintptr_t coll_owner;
};

/* Whether progress passes of the calling thread may poll w (see coll_owner). */
static inline int narmai_win_pollable(const struct narmai_win *w)
{
    return w->coll_owner == 0 || w->coll_owner == narmau_self();
}

static inline int narmai_win_ok(NARMA_Win w) { return w != NULL && w->magic == NARMAI_WIN_MAGIC; }

/* Around a collective call on a live window: marks it as this thread's (see coll_owner). */
static inline void narmai_coll_begin(struct narmai_win *w)
{
    if (narmai_win_ok(w)) w->coll_owner = narmau_self();
}

static inline void narmai_coll_end(struct narmai_win *w)
{
    if (narmai_win_ok(w)) w->coll_owner = 0;
}

/* ---- error handlers (errhandler.c) ----
 * Every public call that takes a window returns through narmai_win_ret, so the window's error
 * handler sees each error once, at the API boundary, and a success costs one predictable
 * branch. A public call that calls another public call returns the inner call's code as it is
 * (its handler already ran). */
struct narmai_errhandler {
    uint64_t magic;
    int handles; /* the program's handles (create, get_errhandler); Errhandler_free drops one */
    int uses;    /* the windows it is set on, and calls of it under way */
    NARMA_Win_errhandler_function *fn;
};
#define NARMAI_EH_MAGIC 0x6e61726d61656868ull /* "narmaehh" */
/* The error path: call w's handler (if w is valid and has one) with rc; returns rc. */
int narmai_win_error(NARMA_Win w, int rc) __attribute__((cold, noinline));
static inline int narmai_win_ret(NARMA_Win w, int rc)
{
    if (__builtin_expect(rc != NARMA_SUCCESS, 0)) return narmai_win_error(w, rc);
    return rc;
}
/* Drop the window's reference to its handler (Win_free). */
void narmai_win_errhandler_release(struct narmai_win *w);

/* Window info (win_info.c): parse the keys narma reads at creation (create != 0: every key;
 * 0: only those NARMA_Win_set_info may change). Nothing is changed when a value is refused. */
int narmai_win_info_apply(struct narmai_win *w, MPI_Info info, int create);

/* progress.c */
void narmai_progress(void);
void narmai_progress_win(struct narmai_win *w);
/* A wait for w: w now, every window at a bounded rate (w NULL: every window). */
void narmai_progress_on(struct narmai_win *w);
/* Complete a nonblocking collective over w's communicator, polling w meanwhile: a peer may be
 * held before the collective by a notification ring full toward this process, which only this
 * process's poll empties. */
int narmai_coll_wait(struct narmai_win *w, MPI_Request *req);

/* epochs: used by window.c and rma.c */
int narmai_epoch_free_check(struct narmai_win *w);
void narmai_epoch_drop_all(struct narmai_win *w);

/* The members of an MPI group as window ranks (group.c): *ranks stays valid until the next
 * call on the window. Errors: NARMA_ERR_ARG (MPI_GROUP_NULL), NARMA_ERR_RANK (larger than the
 * window, or a member outside it), NARMA_ERR_MPI, NARMA_ERR_NO_MEM. */
int narmai_group_ranks(struct narmai_win *w, MPI_Group g, const int **ranks, int *n);
void narmai_group_cache_init(struct narmai_win *w);
void narmai_group_cache_free(struct narmai_win *w);

struct narmai_request *narmai_request_new(int kind, struct narmai_win *w);
/* For the R* forms whose access is complete when the call returns. The request is taken before
 * the access is issued (r = narmai_request_new(NARMAI_REQ_RMA, w), NULL without memory: then the
 * call does nothing), and handed over after it: rc when r is NULL or rc an error (r released),
 * else r COMPLETE in *request, its status naming this process and MPI_ANY_TAG. */
int narmai_request_born_complete(struct narmai_request *r, int rc, NARMA_Request *request);
/* r (ACTIVE) completes when the transport says ticket toward target is done (notify.c). */
void narmai_request_ticket(struct narmai_request *r, int target, uint64_t ticket);
/* Off win->pull_reqs; COMPLETE. Win_free calls it for the requests left, once the transport
 * completed every access (their window is going). */
void narmai_request_unticket(struct narmai_request *r);
void narmai_request_release(struct narmai_request *r);

#endif
