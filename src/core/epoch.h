/*
 * The epoch engine (nonblocking RMA synchronisation paper, sections VI-VII).
 *
 * Every synchronisation call creates or closes an epoch object on the
 * window's FIFO queue; blocking calls are the nonblocking ones plus a wait.
 *
 *   opened ──> DEFERRED ──activate──> ACTIVE ──(closed + conditions met)──> DONE
 *
 * - Epoch-opening calls never block; their requests are complete at creation.
 * - Epochs activate in the order they were opened, never skipping one. An
 *   epoch may activate while an earlier one is still active only if
 *     (a) the two were open at the same time in the program (post + start,
 *         several locks: MPI's concurrent epochs), or
 *     (b) a window info key allows that pair of kinds (the four reorder
 *         flags; never for fence or lock_all epochs).
 *   Otherwise it waits for every earlier epoch to be DONE.
 * - RMA calls go to the epoch that is open in the program. They are issued at
 *   once when the epoch is active and the target is ready (PSCW: the target
 *   granted the matching exposure; lock: the lock is held), and recorded
 *   otherwise, then replayed in order by progress.
 * - A closed epoch completes in progress: fence = flush + a barrier on
 *   monotonic control words (fence_barrier in epoch.c): flat up to the
 *   window's fence_flat_max ranks (NARMA_FENCE_FLAT_MAX, agreed at creation;
 *   every rank adds 1 to every other's counter, one step), dissemination
 *   beyond (ceil(log2 P) rounds); PSCW access = grants seen, flush, a DONE count
 *   to every target; exposure = DONE counts of every origin reached; lock =
 *   held, flush, release. Completing an epoch completes its closing request.
 * - Errors: the first error raised in progress (activation, replay of a
 *   recorded operation, completion) stays on the epoch (err) and is returned
 *   by the closing call or its request; a replayed R* operation also
 *   completes its own request with it. When the synchronisation itself fails
 *   (a lock attempt, a grant, a barrier update), the epoch is marked failed:
 *   its recorded operations can never be issued, so they are dropped (their
 *   requests complete with the error) and closing it completes at once.
 * - Matching is O(1) per peer: accesses requested, exposures opened, grants
 *   received and completions received are four monotonic counters, assigned
 *   when an epoch activates, so any number of pending epochs costs nothing.
 */
#ifndef NARMAI_EPOCH_H
#define NARMAI_EPOCH_H
#include "core/narmai.h"
#include "transport/transport.h"

enum narmai_ep_type {
    NARMAI_EP_FENCE = 1,
    NARMAI_EP_ACCESS,
    NARMAI_EP_EXPOSURE,
    NARMAI_EP_LOCK,
    NARMAI_EP_LOCK_ALL
};
enum narmai_ep_state { NARMAI_EP_DEFERRED = 1, NARMAI_EP_ACTIVE, NARMAI_EP_DONE };

/* A recorded RMA call, replayed when its epoch and target are ready. */
enum narmai_op_kind { NARMAI_OP_PUT = 1, NARMAI_OP_GET, NARMAI_OP_ACC, NARMAI_OP_CAS };
struct narmai_op {
    narmau_dlist link;
    uint8_t kind;
    int target;
    MPI_Aint disp;
    const void *oaddr, *caddr;
    void *raddr;
    int ocount, rcount, tcount;
    MPI_Datatype otype, rtype, ttype; /* derived types are duplicated while recorded */
    MPI_Op op;
    struct narmai_request *req; /* R* forms: completes when issued (and its MPI request) */
    uint64_t seq;               /* w->op_seq when recorded */
};

/* Passive-target lock attempt state (epoch_lock.c). */
struct narmai_lock_state {
    uint8_t waiting;  /* exclusive: registered as a waiting writer in the lock word */
    uint8_t backoff;  /* polls to skip after the next failed attempt (doubles, bounded) */
    uint16_t skip;    /* polls still to skip before the next remote attempt */
    uint64_t pref_t0; /* shared, holding other locks: when it first deferred to a writer (ns) */
};

struct narmai_ep_waiter {
    int done, rc;
};

struct narmai_epoch {
    narmau_dlist link; /* on w->epochs, in opening order */
    uint8_t type, state;
    uint8_t closed;           /* the program closed it */
    uint8_t flushed;          /* completion: operations flushed */
    uint64_t t_open, t_close; /* program-order stamps (w->clock); t_close = UINT64_MAX while open */
    int assert;
    int n;         /* PSCW group size */
    int cap;       /* PSCW: room in ranks and ids (narmai_epoch_members) */
    int *ranks;    /* PSCW group (window ranks) */
    uint64_t *ids; /* PSCW: access or exposure id per member, set at activation */
    int lock_rank, lock_type;
    uint8_t held;                /* lock: held (or NOCHECK) */
    uint8_t *held_all;           /* lock_all: per target */
    narmau_dlist ops;            /* recorded operations, in call order */
    uint64_t nops;               /* operations ever recorded or issued in this epoch */
    uint64_t fence_n;            /* fence: barrier number */
    int fence_round;             /* fence: next dissemination round */
    uint8_t fence_sent;          /* fence: current round's increment sent */
    int err;                     /* first error raised in progress (see above) */
    uint8_t failed;              /* the synchronisation failed: nothing more can be issued */
    struct narmai_lock_state lk; /* lock (and lock_all: shared attempts) */
    struct narmai_request *close_req;
    struct narmai_epoch *next_free;
    struct narmai_ep_waiter *waiter; /* blocking close in progress */
};

/* Reorder flags (window info keys). */
#define NARMAI_AAAR 1
#define NARMAI_AAER 2
#define NARMAI_EAER 4
#define NARMAI_EAAR 8

int narmai_epoch_open(struct narmai_win *w, int type, struct narmai_epoch **out);
/* At least n epoch objects cached, so that the next n narmai_epoch_open cannot fail: a call
 * that opens an epoch after an irreversible step (a fence's close) reserves first. */
int narmai_epoch_reserve(struct narmai_win *w, int n);
/* Open an epoch (lock, PSCW) leaving NARMAI_EPOCH_SPARES cached for the next fence (which does
 * not agree on failures, so must not allocate): fails with NARMA_ERR_NO_MEM before anything. */
#define NARMAI_EPOCH_SPARES 2
int narmai_epoch_open_spared(struct narmai_win *w, int type, struct narmai_epoch **out);
int narmai_epoch_members(struct narmai_epoch *e, int n);
/* Blocking (request NULL): waits, and returns the epoch's error. Nonblocking: fails only
 * without memory for the request, before it changed anything. */
int narmai_epoch_close(struct narmai_win *w, struct narmai_epoch *e, NARMA_Request *request);
/* Advance every epoch of the window (the engine's step 2). */
void narmai_epoch_progress(struct narmai_win *w);
/* A request that is complete at creation (epoch-opening calls). */
int narmai_request_done(struct narmai_win *w, NARMA_Request *request);
/* Non-blocking lock attempt: 1 if acquired; 0 with *rc = 0 to retry later
 * (bounded exponential backoff counted in attempts), 0 with *rc set on error. */
int narmai_lock_try(struct narmai_win *w, int type, int rank, struct narmai_lock_state *lk,
                    int *rc);
/* Flush rank, then release the lock (type < 0: NOCHECK, nothing to release).
 * Releases even when the flush failed; returns the first error. */
int narmai_lock_release(struct narmai_win *w, int rank, int type);
/* An exclusive attempt abandoned after it registered as waiting writer. */
void narmai_lock_abandon(struct narmai_win *w, int rank, struct narmai_lock_state *lk);
/* Is the epoch's target ready for an RMA call to be issued now? */
int narmai_epoch_target_ready(struct narmai_win *w, struct narmai_epoch *e, int target);
/* Issue an operation now (the transport call). */
int narmai_op_issue(struct narmai_win *w, struct narmai_op *op);
void narmai_epoch_free(struct narmai_win *w, struct narmai_epoch *e);
void narmai_epoch_cache_free(struct narmai_win *w);
int narmai_rma_submit(struct narmai_win *w, const struct narmai_op *tmpl);
/* Is an operation to target (-1: any) numbered <= upto still recorded? */
int narmai_recorded_upto(struct narmai_win *w, int target, uint64_t upto);
/* Remember the first error of an epoch. */
static inline void narmai_epoch_error(struct narmai_epoch *e, int rc)
{
    if (rc && !e->err) e->err = rc;
}
/* Test-only fault injection (NARMA_TEST_FAIL_REPLAY, NARMA_TEST_FAIL_LOCK; epoch.c). */
void narmai_test_faults_init(struct narmai_win *w);
int narmai_test_fault(uint32_t *countdown, int sticky);
/* The access epoch open now is an empty fence epoch, which gives way to the other
 * synchronisation (post, start, lock, lock_all) as MPI allows: the opening call checks its
 * conflicts as if it were gone, and gives it up (narmai_fence_yield) only once nothing can fail
 * for memory, so a call that fails for memory leaves it open. narmai_fence_yield returns the
 * assert of the epoch it gave up (-1: none), so that a blocking lock whose attempt fails in the
 * transport after it gave way can open it again (narmai_fence_open, api_win_lock). */
int narmai_fence_empty(const struct narmai_win *w);
int narmai_fence_yield(struct narmai_win *w);
/* Open the next fence epoch (its assert as the fence gave it) and make it the access epoch. */
int narmai_fence_open(struct narmai_win *w, int assert);

/* An epoch call's assert: 0 or an OR of MPI_MODE_* values. Bits that are no MPI_MODE_* value
 * are refused (NARMA_ERR_ARG): taken as assertions, a stray MPI_MODE_NOCHECK among them would
 * skip synchronisation the program relies on. A MPI_MODE_* value the standard does not list for
 * the call is ignored, as MPI libraries do. */
#define NARMAI_MODES \
    (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)
static inline int narmai_assert_check(int assert)
{
    if ((assert & ~NARMAI_MODES) == 0) return NARMA_SUCCESS;
    return NARMAU_ERR(NARMA_ERR_ARG, "assert %#x holds bits that are no MPI_MODE_* value",
                      (unsigned)assert);
}
#endif
