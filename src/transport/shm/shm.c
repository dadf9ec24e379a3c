/*
 * shm: the transport for ranks that share memory. Every rank's window memory,
 * control words and notification ring live in one MPI shared-memory segment
 * (MPI_Win_allocate_shared), mapped by every process of the window, so data
 * moves by load/store and synchronisation is atomics on the owner's words;
 * nothing needs the target to call MPI or narma, except that a notification
 * is delivered when the target polls. A notified access moves its data at
 * once, like any other access, and then publishes a record that carries only
 * the notification: it is complete at the target on return and ordered with
 * everything the origin does next.
 *
 * Segment of each rank (offsets, all cache-line aligned):
 *   [0]                 header: magic, layout version, slot size, slot count
 *   [LOCK]              passive-target lock word
 *   [ACCLOCK]           lock of every accumulate-family call into my memory
 *   [DYN]               dynamic windows: where the rank's region table is (dynamic.h)
 *   [FENCE + 64*k]      fence-barrier round k counter, k < 64
 *   [GRANT + 64*r]      exposures rank r granted me
 *   [DONE + 64*r]       access epochs rank r completed toward me
 *   [PULL + 64*i]       state of my pulled put i, i < 64 ("Pulled puts" below)
 *   [RING]              notification ring (tail line + slots)
 *   [DATA]              the user's window memory (page aligned)
 * One word per cache line: writers from different ranks never false-share.
 * Win_create windows have no DATA: the program's pages are moved onto shared
 * memory (usermem.h); dynamic windows neither: attached pages move onto the
 * process's arena and peers map them (dynamic.h). Win_allocate_shared windows
 * neither: their memory is a second MPI shared allocation of the user's sizes
 * alone (datawin), so that it is contiguous across ranks as MPI specifies
 * (or not, with the user's alloc_shared_noncontig=true).
 */
#include "transport/transport.h"
#include "transport/shm/dynamic.h"
#include "transport/shm/ring.h"
#include "transport/shm/usermem.h"
#include "util/acc_ops.h"
#include "util/dtype.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC            UINT64_C(0x6e61726d6173686d) /* "narmashm" */
#define SHM_LAYOUT_VERSION   3
#define LINE                 NARMAT_CACHELINE
#define PAGE                 4096
#define NARMAT_SHM_NOTE_VOID 0  /* record kind of a failed access (narmat_note_kind starts at 1) */
#define SHM_PULLS            64 /* pulled puts in flight per origin and window */
#define SHM_PULL_MIN_DEFAULT 0  /* bytes from which rput_notify lets the target pull: never */
#define SHM_PULL_PATIENCE_NS                                            \
    20000 /* a target that has not begun to pull by then is not polling \
           */
_Static_assert(SHM_LAYOUT_VERSION < 256, "a layout is one byte of the wire version");

/* A pulled put, as its origin remembers it (see "Pulled puts"). */
struct shm_pull {
    uint64_t gen; /* generation of pull word i: bumped per use, never 0 in use */
    uint64_t seq; /* issue order among this window's pulls */
    int target;
    const char *from; /* my data */
    char *to;         /* where it goes, in my mapping of the target's window */
    size_t bytes;
    uint64_t t_issue; /* CLOCK_MONOTONIC ns */
};

struct shm_peer {
    char *seg;     /* the peer's segment in my address space */
    char *data;    /* its window memory */
    MPI_Aint size; /* its window size in bytes */
    int disp_unit;
    char *map;      /* Win_create: my mapping of the peer's pages (NULL for myself) */
    size_t map_len; /* its length */
    int64_t pid;    /* its process (pulled puts read from it) */
};

struct shm_state {
    MPI_Win shwin;
    MPI_Win datawin; /* Win_allocate_shared: the user's memory (else MPI_WIN_NULL) */
    struct shm_peer *peers;
    struct narmat_ring *myring;
    uint64_t head;       /* reader's private index into my ring */
    uint64_t *head_copy; /* per target: my copy of its ring's published head */
    uint32_t mask;       /* slots - 1 */
    size_t off_fence, off_grant, off_done, off_ring, off_data;
    struct narmat_usermem um; /* Win_create: my pages, moved onto shared memory */
    struct narmat_dyn *dyn;   /* dynamic windows: attached regions (dynamic.h); else NULL */
    /* Pulled puts: */
    size_t off_pull;
    uint64_t pull_min;  /* rput_notify of at least this many bytes is pulled; 0: never */
    uint64_t pull_busy; /* bit i: my pull word i is in use */
    int *pull_out;      /* per target: my pulls to it not yet complete */
    char *pull_never;   /* per target: it refused a pull; copy in the call from now on */
    uint64_t pull_seq;  /* pulls issued so far */
    int pull_fail;      /* test hook NARMA_TEST_PULL_FAIL=1: every pull read fails */
    struct shm_pull pulls[SHM_PULLS];
};

struct shm_hdr {
    uint64_t magic, version, slot_size, slot_count;
};

static inline struct shm_state *st(struct narmat_win *w) { return (struct shm_state *)w->tp; }

static inline size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static inline uint64_t *ctl_word(struct shm_state *s, int rank, int kind, int arg)
{
    char *seg = s->peers[rank].seg;
    switch (kind) {
    case NARMAT_CTL_LOCK:
        return (uint64_t *)(seg + LINE);
    case NARMAT_CTL_FENCE:
        return (uint64_t *)(seg + s->off_fence + (size_t)arg * LINE);
    case NARMAT_CTL_GRANT:
        return (uint64_t *)(seg + s->off_grant + (size_t)arg * LINE);
    default:
        return (uint64_t *)(seg + s->off_done + (size_t)arg * LINE);
    }
}

static inline uint64_t *acc_lock(struct shm_state *s, int rank)
{
    return (uint64_t *)(s->peers[rank].seg + 2 * LINE);
}

/* Win_create: unmap the peers' pages and put mine back on private memory. */
static void shm_usermem_release(struct shm_state *s, int p)
{
    for (int r = 0; s->peers != NULL && r < p; r++)
        if (s->peers[r].map != NULL) {
            munmap(s->peers[r].map, s->peers[r].map_len);
            s->peers[r].map = NULL;
        }
    narmat_usermem_restore(&s->um);
    narmat_dyn_free(s->dyn);
    s->dyn = NULL;
}

static void shm_state_free(struct shm_state *s)
{
    if (s == NULL) return;
    free(s->peers);
    free(s->head_copy);
    free(s->pull_out);
    free(s->pull_never);
    free(s);
}

/* Test hook NARMA_TEST_FAIL_ALLOC=RANK[:STAGE]: window creation fails on that
 * rank of MPI_COMM_WORLD, as if out of memory, at stage 1 (its private state),
 * 2 (after the shared segment exists) or 3 (mapping the peers' segments), so
 * that tests can show every rank returns an error and none hangs; for
 * Win_create, stages 4 (after moving its pages) and 5 (mapping the peers'
 * pages) make it unable to share its memory instead, so that every rank falls
 * back to the mpi transport; for dynamic windows, stage 6 (reading a peer's
 * memory, dynamic.h) does the same. */
static int shm_test_fail(const struct narmat_win *w, int stage)
{
    return narmat_test_fail_alloc(stage);
}

/* ---- Pulled puts --------------------------------------------------------------------------
 *
 * A large Rput_notify (or persistent start) whose data the origin would copy inside the call
 * cannot overlap anything. Instead, from pull_min bytes (window info narma_pull_min, else
 * NARMA_SHM_PULL_MIN; by default never, since the kernel's copy can be several times slower than
 * the origin's own, which costs latency whenever the origin waits soon: docs/design.md), the
 * origin publishes a record carrying its buffer's address and returns at once; the target copies
 * the data into its window with process_vm_readv when it drains the record, before it delivers the
 * notification, while the origin computes. The request completes when the copy is done. Contiguous
 * puts of one type on both sides, on every window but a dynamic one (Win_allocate, Win_create,
 * Win_allocate_shared).
 *
 * Who copies is decided by one word in the origin's segment, pull word i (64 per origin and
 * window), holding gen << 2 | state, gen being pull i's generation (bumped per use):
 *   WAITING  set by the origin before it publishes the record;
 *   MOVING   claimed by CAS from WAITING (or REFUSED) by whichever side copies;
 *   DONE     (state 0) stored with release by that side once the data is in place;
 *   REFUSED  the target could not read the origin's memory: the origin must copy.
 * The target, draining, claims WAITING -> MOVING and copies; if the origin claimed first it
 * waits while the word is MOVING (the origin is copying: bounded); a REFUSED word (its own
 * failed read) stops its drain at that record until the origin has copied (the next poll looks
 * again): it never waits inside a poll for the origin to call narma. The origin copies itself
 * (claim, memmove into its mapping of the target's window) when it must complete the put and
 * the target has not begun: at a flush or control update to that target, before any other
 * access to it (so later accesses land after the pulled data, as they would after a put copied
 * in the call), at Win_free (and it waits for a target that is copying); at Test/Wait/progress
 * once the target has let 20 us pass without beginning (a target that polls begins within a
 * microsecond; one in computation or in a plain MPI call would otherwise hold the origin up), and
 * at once when the target refused, after which it never pulls to that target again. Pulls to one
 * target are settled in the order they were issued, so overlapping pulls land in that order. A
 * word is reused only after the origin saw it DONE; the target tells generations apart, so a late
 * look at a reused word is never taken for the pull it had. */
enum { PULL_DONE = 0, PULL_WAITING = 1, PULL_MOVING = 2, PULL_REFUSED = 3 };
enum pull_mode { PULL_PUSH_LATE, PULL_COMPLETE };

static inline uint64_t pull_val(uint64_t gen, int state) { return gen << 2 | (uint64_t)state; }

static inline uint64_t *pull_word(struct shm_state *s, int origin, unsigned i)
{
    return (uint64_t *)(s->peers[origin].seg + s->off_pull + (size_t)i * LINE);
}

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* NARMA_SHM_PULL_MIN: bytes, 0 (never); unset: the default (never); anything else is said on
 * stderr and ignored. */
static uint64_t env_pull_min(void)
{
    const char *env = getenv("NARMA_SHM_PULL_MIN");
    if (env == NULL || *env == '\0') return SHM_PULL_MIN_DEFAULT;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (*env < '0' || *env > '9' || *end != '\0' || errno != 0) {
        fprintf(stderr, "narma: NARMA_SHM_PULL_MIN=%s is not a byte count; using %d\n", env,
                SHM_PULL_MIN_DEFAULT);
        return SHM_PULL_MIN_DEFAULT;
    }
    return (uint64_t)v;
}

/* My threshold as an origin (window info narma_pull_min, else NARMA_SHM_PULL_MIN; 0: never). */
/* Whether user memory (Win_create, attached regions) may move onto shared memory: not with
 * NARMA_SHM_CREATE=0, and under MPI_THREAD_MULTIPLE only with NARMA_SHM_CREATE=1, since the
 * pages are copied and remapped and a write by another thread meanwhile would be lost. */
static int shm_may_move_pages(char *why, size_t whylen)
{
    const char *env = getenv("NARMA_SHM_CREATE");
    if (env != NULL && env[0] == '0') {
        snprintf(why, whylen, "NARMA_SHM_CREATE=0");
        return 0;
    }
    if (narmau_threaded() && (env == NULL || env[0] != '1')) {
        snprintf(why, whylen,
                 "MPI_THREAD_MULTIPLE (another thread could write to the pages "
                 "while they move; NARMA_SHM_CREATE=1 allows it)");
        return 0;
    }
    return 1;
}

static uint64_t shm_pull_threshold(const struct narmat_win *w)
{
    return w->pull_min >= 0 ? (uint64_t)w->pull_min : env_pull_min();
}

/* Pulls happen on a window where some rank asked for them (and every rank can read every
 * other). Then every process lets the node's other processes read it (yama's ptrace_scope 1;
 * see dynamic.h), before the collective that precedes every rank's probe, so that no probe
 * runs before its peer allowed it. Never on dynamic windows. */
static int shm_pull_allow(const struct narmat_win *w, int asked)
{
    if (!asked || w->flavor == MPI_WIN_FLAVOR_DYNAMIC || w->size < 2) return 0;
    narmat_dyn_allow_peers();
    return 1;
}

/* Test hook NARMA_TEST_PULL_FAIL=1 (read at window creation): every read of a pull fails, as
 * a buffer process_vm_readv cannot reach would. */
static int pull_fail_hook(void)
{
    const char *env = getenv("NARMA_TEST_PULL_FAIL");
    return env != NULL && env[0] == '1';
}

/* Can I read rank r's memory (its segment header, at seg in process pid)? */
static int shm_pull_probe(int r, int64_t pid, uint64_t seg)
{
    uint64_t magic = 0;
    int err = narmat_cma_read(pid, &magic, (const void *)(uintptr_t)seg, sizeof magic);
    if (err == 0 && magic == SHM_MAGIC) return 0;
    if (narmau_verbose())
        fprintf(stderr,
                "narma: shm: large notified puts are not pulled: cannot read rank %d's "
                "memory (pid %ld): %s\n",
                r, (long)pid, err ? strerror(err) : "another process");
    return -1;
}

/* Origin: settle my pull i. PULL_PUSH_LATE: copy if the target refused, or let the patience
 * pass (at now) without beginning; PULL_COMPLETE: copy if the target has not begun, else wait
 * for it. Returns 1 and frees the word when the pull is complete, else 0. */
static int pull_settle(struct shm_state *s, int me, unsigned i, enum pull_mode mode, uint64_t now)
{
    struct shm_pull *p = &s->pulls[i];
    uint64_t *word = pull_word(s, me, i);
    narmau_waiter wt = {0};
    for (;;) {
        /* Acquire: pairs with the target's release of DONE (its copy out of my buffer is
         * over: the buffer may be reused). */
        uint64_t v = narmau_atomic_load_acq_u64(word);
        if (v == pull_val(p->gen, PULL_DONE)) break;
        if (v == pull_val(p->gen, PULL_MOVING)) { /* the target is copying */
            if (mode != PULL_COMPLETE) return 0;
            narmau_wait_step_keep(&wt); /* keep the lock: the pull is half-settled */
            continue;
        }
        const int refused = v == pull_val(p->gen, PULL_REFUSED);
        if (refused) s->pull_never[p->target] = 1; /* it cannot read me: copy from now on */
        if (!refused && mode != PULL_COMPLETE && now - p->t_issue <= SHM_PULL_PATIENCE_NS) return 0;
        if (narmau_atomic_cas_u64(word, &v, pull_val(p->gen, PULL_MOVING))) {
            memmove(p->to, p->from, p->bytes);
            /* Release: the data before the word (the target delivers after it sees DONE). */
            narmau_atomic_store_rel_u64(word, pull_val(p->gen, PULL_DONE));
            break;
        }
    }
    s->pull_busy &= ~(UINT64_C(1) << i);
    s->pull_out[p->target]--;
    return 1;
}

/* Settle, in the order they were issued, my pulls to target (-1: every target) issued up to
 * sequence number upto; stops at the first of a target's that stays incomplete (a later one
 * copied by me could land before it). Returns 1 if all of them are complete. */
static int pull_settle_upto(struct narmat_win *w, int target, uint64_t upto, enum pull_mode mode)
{
    struct shm_state *s = st(w);
    uint64_t stuck = 0; /* pulls of a target with an earlier incomplete one */
    int all = 1;
    const uint64_t now = mode == PULL_PUSH_LATE ? now_ns() : 0;
    while (s->pull_busy & ~stuck) {
        unsigned first = SHM_PULLS;
        for (uint64_t b = s->pull_busy & ~stuck; b != 0; b &= b - 1) {
            unsigned i = (unsigned)__builtin_ctzll(b);
            if ((target < 0 || s->pulls[i].target == target) && s->pulls[i].seq <= upto &&
                (first == SHM_PULLS || s->pulls[i].seq < s->pulls[first].seq))
                first = i;
        }
        if (first == SHM_PULLS) break;
        if (!pull_settle(s, w->rank, first, mode, now)) {
            all = 0;
            for (uint64_t b = s->pull_busy; b != 0; b &= b - 1) { /* its target's later ones */
                unsigned i = (unsigned)__builtin_ctzll(b);
                if (s->pulls[i].target == s->pulls[first].target) stuck |= UINT64_C(1) << i;
            }
        }
    }
    return all;
}

/* Every pull in flight toward target (-1: every target), complete on return. */
static inline void shm_pull_complete(struct narmat_win *w, int target)
{
    if (st(w)->pull_busy != 0 && (target < 0 || st(w)->pull_out[target] != 0))
        pull_settle_upto(w, target, UINT64_MAX, PULL_COMPLETE);
}

/* Target: bring in the data of a pulled put from origin src before its notification is
 * delivered. 0: the data is there; -1: not yet (the origin has to copy it: stop draining here
 * and look again at the next poll). */
static int pull_in(struct narmat_win *w, int src, uint64_t from, uint64_t ticket, uint64_t off,
                   uint64_t bytes)
{
    struct shm_state *s = st(w);
    const unsigned i = (unsigned)(ticket & (SHM_PULLS - 1));
    const uint64_t gen = ticket / SHM_PULLS;
    uint64_t *word = pull_word(s, src, i);
    uint64_t v = pull_val(gen, PULL_WAITING);
    if (narmau_atomic_cas_u64(word, &v, pull_val(gen, PULL_MOVING))) {
        int err = s->pull_fail ? EFAULT
                               : narmat_cma_read(s->peers[src].pid, s->peers[w->rank].data + off,
                                                 (const void *)(uintptr_t)from, bytes);
        if (err == 0) {
            /* Release: the origin may reuse its buffer once it sees DONE. */
            narmau_atomic_store_rel_u64(word, pull_val(gen, PULL_DONE));
            return 0;
        }
        if (narmau_verbose())
            fprintf(stderr,
                    "narma: shm: rank %d could not read a %llu-byte put from rank %d: "
                    "%s; the origin copies it\n",
                    w->rank, (unsigned long long)bytes, src, strerror(err));
        narmau_atomic_store_rel_u64(word, pull_val(gen, PULL_REFUSED));
        return -1;
    }
    /* The origin copies (or copied) it. Acquire: its data before DONE. */
    narmau_waiter wt = {0};
    while (v == pull_val(gen, PULL_MOVING)) { /* it is copying: not for long */
        narmau_wait_step_keep(&wt);           /* keep the lock: the record is half-delivered */
        v = narmau_atomic_load_acq_u64(word);
    }
    return v == pull_val(gen, PULL_REFUSED) ? -1 : 0;
}

/* Window creation is collective and a rank that fails must not leave the
 * others blocked in the next collective: each failure point is followed by a
 * collective that carries every rank's status (the allreduce of the ring
 * geometry, the allgather of window sizes, the final allreduce that replaces
 * a barrier), and all ranks then return an error together. A Win_create
 * window whose memory some rank cannot share (see usermem.h) is refused by
 * every rank with NARMA_ERR_UNSUPPORTED, so that all create it on another
 * transport; a real error on any rank wins over that. */
struct shm_status {
    int err;      /* NARMA_SUCCESS or an error class other than NARMA_ERR_UNSUPPORTED */
    int fallback; /* 1: this rank's memory cannot be shared */
};

static struct shm_status status_of(int rc)
{
    struct shm_status st = {rc == NARMA_ERR_UNSUPPORTED ? NARMA_SUCCESS : rc,
                            rc == NARMA_ERR_UNSUPPORTED};
    return st;
}

/* The window's verdict from every rank's status (the same on every rank). */
static int shm_verdict(int rc, struct shm_status all)
{
    if (all.err != NARMA_SUCCESS)
        return rc != NARMA_SUCCESS && rc != NARMA_ERR_UNSUPPORTED
                   ? rc
                   : NARMAU_ERR(all.err, "another rank could not create its part of the window");
    if (all.fallback)
        return rc == NARMA_ERR_UNSUPPORTED
                   ? rc
                   : NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                                "another rank's Win_create memory cannot be shared");
    return rc;
}

/* nopull (may be NULL): in, 1 when this rank cannot read some peer's memory; out, 1 when any
 * rank cannot (pulled puts are then off on every rank). */
static int shm_agree(int rc, MPI_Comm comm, int *out, int *nopull)
{
    struct shm_status st = status_of(rc);
    int v[3] = {st.err, st.fallback, nopull != NULL ? *nopull : 0};
    int mrc = MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MAX, comm);
    if (mrc != MPI_SUCCESS) {
        *out = rc ? rc : narmau_mpi_error(mrc);
        return -1;
    }
    st.err = v[0];
    st.fallback = v[1];
    if (nopull != NULL) *nopull = v[2];
    *out = shm_verdict(rc, st);
    return 0;
}

static int shm_win_init(struct narmat_win *w, void *base, MPI_Aint size, MPI_Info info)
{
    (void)info;
    const size_t p = (size_t)w->size;
    /* Memory already shared through an MPI window (w->shared_win) moves nowhere. */
    const int shared = w->shared_win != MPI_WIN_NULL;
    const int create = w->flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && !shared;
    const int dynamic = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    const int shflavor = w->flavor == MPI_WIN_FLAVOR_SHARED;
    struct geom {
        MPI_Aint size;
        int disp_unit;
        int status;                         /* NARMA_SUCCESS, or this rank's error class */
        int have_win;                       /* MPI created the shared window(s) on this rank */
        MPI_Aint map_off;                   /* Win_create: base - first page */
        size_t map_len;                     /* Win_create: bytes of whole pages */
        char map_name[NARMAT_USERMEM_NAME]; /* Win_create: the pages' shared object */
        uint64_t map_dev, map_ino;          /* Win_create: its identity */
        struct narmat_dyn_info dyn;         /* dynamic windows */
        int64_t pid;                        /* pulled puts: read from this process */
        uint64_t seg;                       /* at this address, its segment (the probe) */
    } mine = {size, w->disp_unit, NARMA_SUCCESS, 0, 0, 0, "", 0, 0, {0}, (int64_t)getpid(), 0},
      *all = malloc(p * sizeof(mine));
    int rc = NARMA_SUCCESS, mrc, can_free = 0, nopull = 1;
    char *myseg = NULL, *mydata = NULL, *ustart = NULL, why[256] = "";
    size_t ulen = 0;
    struct shm_state *s = calloc(1, sizeof(*s));
    if (s != NULL) {
        s->shwin = s->datawin = MPI_WIN_NULL;
        s->peers = calloc(p, sizeof(*s->peers));
        s->head_copy = calloc(p, sizeof(uint64_t));
        s->pull_out = calloc(p, sizeof(int));
        s->pull_never = calloc(p, 1);
    }
    if (all == NULL || s == NULL || s->peers == NULL || s->head_copy == NULL ||
        s->pull_out == NULL || s->pull_never == NULL || shm_test_fail(w, 1))
        rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "shm window state");
    else if (size > PTRDIFF_MAX / 2)
        rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "shm window of %ld bytes", (long)size);
    else if (create) {
        narmat_usermem_span(base, (size_t)size, &ustart, &ulen);
        if (!shm_may_move_pages(why, sizeof why))
            rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                            "Win_create memory is not moved to shared "
                            "memory: %s",
                            why);
        else if (!narmat_usermem_movable(ustart, ulen, why, sizeof why))
            rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "Win_create memory cannot be shared: %s", why);
    } else if (dynamic) {
        if (!shm_may_move_pages(why, sizeof why))
            rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                            "attached memory is not moved to shared "
                            "memory: %s",
                            why);
        else if (narmat_usermem_hooks_active())
            rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                            "UCX's memory hooks are active in this process (UCX_MEM_EVENTS=no "
                            "lets narma share attached memory on one node)");
        else
            narmat_dyn_allow_peers();
    }

    /* Agree on the ring geometry (every rank must use the same), on whether any rank asked for
     * pulled puts, and on stage 1, in one reduction. */
    int geo[2];
    if (rc == NARMA_SUCCESS) s->pull_min = shm_pull_threshold(w);
    {
        struct shm_status st1 = status_of(rc);
        int v[4] = {(int)w->ring_slots, rc == NARMA_SUCCESS && s->pull_min > 0, st1.err,
                    st1.fallback};
        if ((mrc = MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_MAX, w->comm)) != MPI_SUCCESS) {
            if (rc == NARMA_SUCCESS) rc = narmau_mpi_error(mrc);
            goto out;
        }
        geo[0] = v[0];
        geo[1] = v[1];
        st1.err = v[2];
        st1.fallback = v[3];
        if ((rc = shm_verdict(rc, st1)) != NARMA_SUCCESS) goto out;
    }
    const unsigned slots = (unsigned)geo[0];
    s->mask = slots - 1;
    s->off_fence = 4 * LINE;
    s->off_grant = s->off_fence + NARMAT_FENCE_ROUNDS * LINE;
    s->off_done = s->off_grant + p * LINE;
    s->off_pull = s->off_done + p * LINE;
    s->off_ring = s->off_pull + SHM_PULLS * LINE;
    s->off_data = align_up(s->off_ring + narmat_ring_bytes(slots), PAGE);
    /* Pad to whole pages: some MPI libraries mishandle odd-sized segments. The
     * memory of a Win_create window stays where the program has it. */
    MPI_Aint total = (MPI_Aint)align_up(
        s->off_data + (w->flavor == MPI_WIN_FLAVOR_ALLOCATE ? (size_t)size : 0), PAGE);
    /* Win_allocate_shared: the user's memory first, unpadded (padding would break its
     * contiguity across ranks), with the user's info (alloc_shared_noncontig). Every rank
     * calls it: a failure is carried by the allgather below, as the segment's. */
    int have_data = !shflavor;
    if (shflavor) {
        mrc = MPI_Win_allocate_shared(size, w->disp_unit, info, w->comm, &mydata, &s->datawin);
        if (mrc == MPI_SUCCESS) {
            have_data = 1;
            MPI_Win_set_errhandler(s->datawin, MPI_ERRORS_RETURN);
        } else {
            s->datawin = MPI_WIN_NULL;
            rc = narmau_mpi_error(mrc);
        }
    }

    MPI_Info sinfo;
    MPI_Info_create(&sinfo);
    MPI_Info_set(sinfo, "alloc_shared_noncontig", "true");
    mrc = MPI_Win_allocate_shared(total, 1, sinfo, w->comm, &myseg, &s->shwin);
    MPI_Info_free(&sinfo);
    if (mrc == MPI_SUCCESS) {
        mine.have_win = have_data;
        MPI_Win_set_errhandler(s->shwin, MPI_ERRORS_RETURN);
        memset(myseg, 0, s->off_data);
        mine.seg = (uint64_t)(uintptr_t)myseg;
        struct shm_hdr *h = (struct shm_hdr *)myseg;
        h->magic = SHM_MAGIC;
        h->version = SHM_LAYOUT_VERSION;
        h->slot_size = sizeof(struct narmat_rec);
        h->slot_count = slots;
        s->myring = (struct narmat_ring *)(myseg + s->off_ring);
        narmat_ring_init(s->myring, slots);
        if (shm_test_fail(w, 2))
            rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "shm segment");
        else if (create && narmat_usermem_share(&s->um, ustart, ulen, why, sizeof why) != 0)
            rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "Win_create memory cannot be shared: %s", why);
        else if (create && shm_test_fail(w, 4)) /* after moving its pages, as the others did */
            rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "test hook: Win_create memory not shared");
        else if (dynamic &&
                 (s->dyn = narmat_dyn_new(w->rank, w->size,
                                          (struct narmat_dyn_pub *)(myseg + 3 * LINE))) == NULL)
            rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "dynamic window state");
        else if (dynamic && narmat_dyn_info_mine(&mine.dyn, myseg, why, sizeof why) != 0)
            rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "dynamic window: %s", why);
        else if (create) {
            mine.map_off = (char *)base - s->um.obj_start;
            mine.map_len = s->um.obj_len;
            memcpy(mine.map_name, s->um.name, sizeof mine.map_name);
            mine.map_dev = s->um.dev;
            mine.map_ino = s->um.ino;
        }
    } else if (rc == NARMA_SUCCESS) {
        rc = narmau_mpi_error(mrc);
    }

    /* Pulled puts: allowed (prctl) before the collective below, probed after it. */
    const int want_pull = rc == NARMA_SUCCESS && shm_pull_allow(w, geo[1]);
    /* The sizes every rank needs, with each rank's status from stage 2. */
    mine.status = rc;
    if ((mrc = MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE,
                             w->comm)) != MPI_SUCCESS) {
        if (rc == NARMA_SUCCESS) rc = narmau_mpi_error(mrc);
        goto out;
    }
    /* MPI_Win_free is collective: the window can be freed on error only when
     * every rank holds it; one that MPI created on some ranks only is left to
     * MPI_Finalize. */
    struct shm_status worst = {NARMA_SUCCESS, 0};
    can_free = 1;
    for (size_t r = 0; r < p; r++) {
        struct shm_status st = status_of(all[r].status);
        if (worst.err == NARMA_SUCCESS) worst.err = st.err;
        worst.fallback |= st.fallback;
        can_free &= all[r].have_win;
    }
    if ((rc = shm_verdict(rc, worst)) != NARMA_SUCCESS) goto out;
    for (int r = 0; r < w->size && rc == NARMA_SUCCESS; r++) {
        MPI_Aint qsize;
        int qdisp;
        char *seg;
        mrc = MPI_Win_shared_query(s->shwin, r, &qsize, &qdisp, &seg);
        if (mrc != MPI_SUCCESS) {
            rc = narmau_mpi_error(mrc);
            break;
        }
        struct shm_peer *pr = &s->peers[r];
        pr->seg = seg;
        pr->data = seg + s->off_data;
        pr->size = all[r].size;
        pr->disp_unit = all[r].disp_unit;
        pr->pid = all[r].pid;
        if (dynamic) {
            narmat_dyn_set_peer(s->dyn, r, (struct narmat_dyn_pub *)(seg + 3 * LINE), &all[r].dyn);
            if (shm_test_fail(w, 6))
                rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "test hook: peers' memory not readable");
            else if (narmat_dyn_probe(s->dyn, r, SHM_MAGIC, why, sizeof why) != 0)
                rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "dynamic window: %s", why);
            continue;
        }
        if (shflavor) {
            MPI_Aint ssize;
            int sdisp;
            mrc = MPI_Win_shared_query(s->datawin, r, &ssize, &sdisp, &pr->data);
            if (mrc != MPI_SUCCESS) rc = narmau_mpi_error(mrc);
            continue;
        }
        if (w->flavor != MPI_WIN_FLAVOR_CREATE) continue;
        if (shared) {
            MPI_Aint ssize;
            int sdisp;
            mrc = MPI_Win_shared_query(w->shared_win, w->shared_rank[r], &ssize, &sdisp, &pr->data);
            if (mrc != MPI_SUCCESS)
                rc = narmau_mpi_error(mrc);
            else if (pr->data == NULL && all[r].size > 0) /* MPI-4.1: memory not shared */
                rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED,
                                "MPI_Win_shared_query gives no address for rank %d's memory", r);
            else if (pr->data != NULL)
                pr->data = (char *)pr->data + w->shared_off;
            continue;
        }
        if (r == w->rank || all[r].size == 0) {
            pr->data = r == w->rank ? base : NULL;
            continue;
        }
        if (shm_test_fail(w, 5))
            snprintf(why, sizeof why, "test hook");
        else
            pr->map = narmat_usermem_map(all[r].map_name, all[r].map_dev, all[r].map_ino,
                                         all[r].map_len, why, sizeof why);
        if (pr->map == NULL) {
            rc = NARMAU_ERR(NARMA_ERR_UNSUPPORTED, "rank %d's Win_create memory: %s", r, why);
            break;
        }
        pr->map_len = all[r].map_len;
        pr->data = pr->map + all[r].map_off;
    }
    if (rc == NARMA_SUCCESS && shm_test_fail(w, 3)) rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "shm peers");
    nopull = rc != NARMA_SUCCESS || !want_pull;
    for (int r = 0; !nopull && r < w->size; r++)
        if (r != w->rank && shm_pull_probe(r, all[r].pid, all[r].seg) != 0) nopull = 1;
    /* Rings and control words are initialised everywhere before anyone uses
     * them (the fence orders our stores before the collective that doubles as
     * the barrier), and every rank learns whether all mapped their peers (and
     * whether all can read each other's memory: pulled puts). */
    narmau_atomic_fence_seq_cst();
    if (shm_agree(rc, w->comm, &rc, &nopull)) {
        /* The others may have returned success: a collective free here could wait for
         * them forever. The segment is left to MPI_Finalize. */
        can_free = 0;
    }
out:
    free(all);
    if (rc == NARMA_SUCCESS) {
        if (nopull) s->pull_min = 0;
        w->may_defer = s->pull_min != 0;
        s->pull_fail = pull_fail_hook();
        w->base = w->flavor == MPI_WIN_FLAVOR_CREATE ? base
                  : shflavor                         ? mydata
                  : size > 0                         ? myseg + s->off_data
                                                     : NULL;
        w->tp = s;
        w->attr_win = s->shwin;
        return NARMA_SUCCESS;
    }
    if (s != NULL) shm_usermem_release(s, w->size);
    if (can_free) {
        MPI_Win_free(&s->shwin);
        if (s->datawin != MPI_WIN_NULL) MPI_Win_free(&s->datawin);
    }
    shm_state_free(s);
    return rc;
}

static int shm_win_free(struct narmat_win *w)
{
    struct shm_state *s = st(w);
    /* Nobody may still write into our segment (a late notification): the
     * barrier inside MPI_Win_free orders every rank's last access before it. */
    shm_pull_complete(w, -1); /* a target may still be reading my memory */
    int rc = MPI_Win_free(&s->shwin);
    if (s->datawin != MPI_WIN_NULL) {
        int drc = MPI_Win_free(&s->datawin);
        if (rc == MPI_SUCCESS) rc = drc;
    }
    shm_usermem_release(s, w->size);
    shm_state_free(s);
    w->tp = NULL;
    w->attr_win = MPI_WIN_NULL;
    return rc == MPI_SUCCESS ? NARMA_SUCCESS : narmau_mpi_error(rc);
}

/* Dynamic windows: disp is the target's address; [disp + lo, disp + hi) must
 * not wrap. 0 and the bytes, or -1. */
static inline int dyn_bytes(MPI_Aint disp, MPI_Aint lo, MPI_Aint hi, uint64_t *a, uint64_t *b)
{
    MPI_Aint x, y;
    if (__builtin_add_overflow(disp, lo, &x) || __builtin_add_overflow(disp, hi, &y)) return -1;
    *a = (uint64_t)x;
    *b = (uint64_t)y;
    return *a <= *b ? 0 : -1;
}

static int shm_check_bounds(struct narmat_win *w, int target, MPI_Aint disp, MPI_Aint lo,
                            MPI_Aint hi)
{
    const struct shm_peer *p = &st(w)->peers[target];
    if (hi <= lo) return NARMA_SUCCESS; /* no byte accessed */
    if (st(w)->dyn != NULL) {
        uint64_t a, b;
        if (dyn_bytes(disp, lo, hi, &a, &b) == 0 && narmat_dyn_check(st(w)->dyn, target, a, b) == 0)
            return NARMA_SUCCESS;
        return NARMAU_ERR(NARMA_ERR_DISP,
                          "bytes [%#lx + %ld, %#lx + %ld) are not all attached at rank %d",
                          (unsigned long)disp, (long)lo, (unsigned long)disp, (long)hi, target);
    }
    return narmat_bounds_check(target, disp, p->disp_unit, lo, hi, p->size);
}

/* Every peer's memory is mapped here (Win_allocate, Win_allocate_shared, Win_create moved onto
 * shared memory, or shared through shared_win): its address in this process. */
static int shm_shared_query(struct narmat_win *w, int target, MPI_Aint *size, int *disp_unit,
                            void **base)
{
    const struct shm_peer *p = &st(w)->peers[target];
    *size = p->size;
    *disp_unit = p->disp_unit;
    *base = p->size > 0 || w->flavor == MPI_WIN_FLAVOR_SHARED ? p->data : NULL;
    if (st(w)->dyn == NULL) return NARMA_SUCCESS;
    *base = NULL;
    return NARMAU_ERR(NARMA_ERR_RANK, "shared_query on a dynamic window");
}

/* Only for accesses check_bounds accepted: an overflowing product belongs to an
 * access of no byte, which gets the window's base. */
static inline char *taddr(struct narmat_win *w, int target, MPI_Aint disp)
{
    const struct shm_peer *p = &st(w)->peers[target];
    MPI_Aint off;
    return __builtin_mul_overflow(disp, (MPI_Aint)p->disp_unit, &off) ? p->data : p->data + off;
}

/* Where a dynamic window's target bytes are for an access of tcount ttype at
 * disp (checked): t->at is my address standing for the target's address disp,
 * either in a view of its pages or, for memory reached through the kernel, in
 * a buffer that dyn_begin filled (read: 1) and dyn_end writes back (write: 1).
 * Accumulates on such memory hold the target's accumulate lock in between. */
struct dyn_access {
    char *at;
    char *buf;   /* NULL: a view, nothing to copy back */
    MPI_Aint lo; /* the buffer holds the target's bytes from disp + lo */
    int locked;
    uint64_t lock; /* the lock narmau_acc_apply takes inside a buffer: mine alone */
};

static int dyn_begin(struct narmat_win *w, int target, MPI_Aint disp, int tcount,
                     const narmau_dtype *td, int read, int lock, struct dyn_access *x)
{
    struct shm_state *s = st(w);
    MPI_Aint lo, hi;
    uint64_t a, b;
    char *map;
    memset(x, 0, sizeof *x);
    narmau_dtype_span(td, tcount, &lo, &hi);
    if (dyn_bytes(disp, lo, hi, &a, &b) != 0)
        return NARMAU_ERR(NARMA_ERR_DISP, "access at %#lx wraps", (unsigned long)disp);
    int rc = narmat_dyn_where(s->dyn, target, a, b, &map);
    if (rc < 0) return NARMA_ERR_DISP;
    if (rc == 0) {
        x->at = map - lo;
        return NARMA_SUCCESS;
    }
    if ((x->buf = malloc((size_t)(hi - lo) + 1)) == NULL)
        return NARMAU_ERR(NARMA_ERR_NO_MEM, "staging %ld bytes", (long)(hi - lo));
    x->lo = lo;
    x->at = x->buf - lo;
    if (lock) {
        narmau_acc_lock(acc_lock(s, target));
        x->locked = 1;
    }
    rc = read ? narmat_dyn_copy(s->dyn, target, (uint64_t)disp, td, tcount, x->buf, a, 0) : 0;
    return rc;
}

static int dyn_end(struct narmat_win *w, int target, MPI_Aint disp, int tcount,
                   const narmau_dtype *td, int write, int rc, struct dyn_access *x)
{
    struct shm_state *s = st(w);
    if (x->buf != NULL && write && rc == NARMA_SUCCESS)
        rc = narmat_dyn_copy(s->dyn, target, (uint64_t)disp, td, tcount, x->buf,
                             (uint64_t)(disp + x->lo), 1);
    if (x->locked) narmau_acc_unlock(acc_lock(s, target));
    free(x->buf);
    return rc;
}

static int shm_put(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                   int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq)
{
    if (mreq) *mreq = MPI_REQUEST_NULL;
    shm_pull_complete(w, target); /* a later access lands after a pulled put (issue order) */
    if (st(w)->dyn == NULL)
        return narmau_dtype_copy(taddr(w, target, disp), tcount, ttype, oaddr, ocount, otype);
    const narmau_dtype *td;
    struct dyn_access x;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc || (rc = dyn_begin(w, target, disp, tcount, td, 0, 0, &x))) return rc;
    rc = narmau_dtype_copy(x.at, tcount, ttype, oaddr, ocount, otype);
    return dyn_end(w, target, disp, tcount, td, 1, rc, &x);
}

static int shm_get(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype, int target,
                   MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq)
{
    if (mreq) *mreq = MPI_REQUEST_NULL;
    shm_pull_complete(w, target); /* as shm_put */
    if (st(w)->dyn == NULL)
        return narmau_dtype_copy(oaddr, ocount, otype, taddr(w, target, disp), tcount, ttype);
    const narmau_dtype *td;
    struct dyn_access x;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc || (rc = dyn_begin(w, target, disp, tcount, td, 1, 0, &x))) return rc;
    rc = narmau_dtype_copy(oaddr, ocount, otype, x.at, tcount, ttype);
    return dyn_end(w, target, disp, tcount, td, 0, rc, &x);
}

/* Accumulate family: origin (and result) staged as arrays of the target's
 * basic element type, then applied element-wise atomically. The arrays are
 * laid out as MPI lays out count elements of that type: element i at
 * i * extent, so pair types with padding (MPI_DOUBLE_INT: 12 data bytes,
 * extent 16) need n * extent bytes, not n * size. */
static int shm_acc(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                   void *raddr, int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Request *mreq)
{
    if (mreq) *mreq = MPI_REQUEST_NULL;
    shm_pull_complete(w, target); /* as shm_put */
    const narmau_dtype *td, *od = NULL, *rd = NULL;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc) return rc;
    if (td->basic == MPI_DATATYPE_NULL)
        return NARMAU_ERR(NARMA_ERR_TYPE, "accumulate target type mixes basic types");
    MPI_Aint n = td->basic_size ? (MPI_Aint)tcount * td->size / td->basic_size : 0;
    if (n == 0) return NARMA_SUCCESS;
    const narmau_dtype *bd;
    if ((rc = narmau_dtype_get(td->basic, &bd))) return rc;
    size_t bytes = (size_t)n * (size_t)bd->extent;
    const void *origin = NULL;
    void *result = NULL, *otmp = NULL, *rtmp = NULL;
    if (op != MPI_NO_OP) {
        if ((rc = narmau_dtype_get(otype, &od))) return rc;
        if (od->contiguous && od->basic == td->basic) {
            origin = (const char *)oaddr + od->true_lb;
        } else {
            if ((otmp = malloc(bytes)) == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "acc");
            if ((rc = narmau_dtype_copy(otmp, n, td->basic, oaddr, ocount, otype))) goto out;
            origin = otmp;
        }
    }
    if (raddr != NULL) {
        if ((rc = narmau_dtype_get(rtype, &rd))) goto out;
        if (rd->contiguous && rd->basic == td->basic &&
            (MPI_Aint)rcount * rd->size == (MPI_Aint)bytes) {
            result = (char *)raddr + rd->true_lb;
        } else if ((result = rtmp = malloc(bytes)) == NULL) {
            rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "acc");
            goto out;
        }
    }
    if (st(w)->dyn == NULL) {
        rc = narmau_acc_apply(taddr(w, target, disp), tcount, ttype, origin, result, op,
                              acc_lock(st(w), target));
    } else {
        struct dyn_access x;
        if ((rc = dyn_begin(w, target, disp, tcount, td, 1, 1, &x)) == NARMA_SUCCESS)
            rc = narmau_acc_apply(x.at, tcount, ttype, origin, result, op,
                                  x.buf ? &x.lock : acc_lock(st(w), target));
        rc = dyn_end(w, target, disp, tcount, td, op != MPI_NO_OP, rc, &x);
    }
    if (rc == NARMA_SUCCESS && rtmp != NULL)
        rc = narmau_dtype_copy(raddr, rcount, rtype, rtmp, n, td->basic);
out:
    free(otmp);
    free(rtmp);
    return rc;
}

static int shm_cas(struct narmat_win *w, const void *oaddr, const void *caddr, void *raddr,
                   MPI_Datatype type, int target, MPI_Aint disp)
{
    shm_pull_complete(w, target); /* as shm_put */
    if (st(w)->dyn == NULL)
        return narmau_acc_cas(taddr(w, target, disp), oaddr, caddr, raddr, type,
                              acc_lock(st(w), target));
    const narmau_dtype *td;
    struct dyn_access x;
    int rc = narmau_dtype_get(type, &td);
    if (rc || (rc = dyn_begin(w, target, disp, 1, td, 1, 1, &x))) return rc;
    rc = narmau_acc_cas(x.at, oaddr, caddr, raddr, type, x.buf ? &x.lock : acc_lock(st(w), target));
    return dyn_end(w, target, disp, 1, td, 1, rc, &x);
}

static int shm_attach(struct narmat_win *w, void *base, MPI_Aint size)
{
    if (st(w)->dyn == NULL) return narmat_enosys_attach(w, base, size);
    return narmat_dyn_attach(st(w)->dyn, base, (size_t)size);
}

static int shm_detach(struct narmat_win *w, const void *base)
{
    if (st(w)->dyn == NULL) return narmat_enosys_detach(w, base);
    return narmat_dyn_detach(st(w)->dyn, base);
}

/* Loads and stores are complete when they retire; a full fence makes them
 * visible before anything this process does next (flags, MPI messages).
 * Pulled puts to target still in flight complete first. */
static int shm_flush(struct narmat_win *w, int target)
{
    shm_pull_complete(w, target);
    narmau_atomic_fence_seq_cst();
    return NARMA_SUCCESS;
}

static int shm_sync(struct narmat_win *w)
{
    narmau_atomic_fence_seq_cst();
    return NARMA_SUCCESS;
}

/* A notified access: claim a slot in target's ring first (NARMAT_AGAIN, with
 * nothing done, while the ring is full: the core drives progress and calls
 * again, so an accumulate is never applied twice), then move the data, then
 * publish the record, whose release store publishes the data with it. An
 * access that fails after the claim publishes a void record (kind 0), which
 * the reader consumes without delivering. */
/* The data step of shm_notify: the origin moves the data itself, whatever its
 * size, so a later access of this origin finds it done, as after a plain put
 * or get. */
struct shm_move {
    struct narmat_win *w;
    int kind;
    const void *oaddr;
    void *raddr;
    int ocount;
    MPI_Datatype otype;
    int target;
    MPI_Aint disp;
    int tcount;
    MPI_Datatype ttype;
    MPI_Op op;
};

static int shm_move_data(void *arg)
{
    const struct shm_move *m = arg;
    if (m->kind == NARMAT_NOTE_PUT)
        return shm_put(m->w, m->oaddr, m->ocount, m->otype, m->target, m->disp, m->tcount, m->ttype,
                       NULL);
    if (m->kind == NARMAT_NOTE_GET)
        return shm_get(m->w, m->raddr, m->ocount, m->otype, m->target, m->disp, m->tcount, m->ttype,
                       NULL);
    return shm_acc(m->w, m->oaddr, m->ocount, m->otype, NULL, 0, MPI_DATATYPE_NULL, m->target,
                   m->disp, m->tcount, m->ttype, m->op, NULL);
}

/* Claim a slot in target's ring (NARMAT_AGAIN, with nothing done, while it is
 * full), move the data (move(arg)), then publish the record, whose release
 * store publishes the data with it (and orders a get's loads before the target
 * learns it may overwrite its buffer). An access whose data step fails
 * publishes a void record (kind 0), which the reader consumes without
 * delivering. off: the data's byte offset in the target's window (prefetch). */
static inline struct narmat_rec *shm_claim(struct shm_state *s, int target, uint64_t *pos)
{
    struct narmat_ring *ring = (struct narmat_ring *)(s->peers[target].seg + s->off_ring);
    return narmat_ring_claim(ring, s->mask, &s->head_copy[target], pos);
}

static inline void shm_publish(struct narmat_win *w, struct narmat_rec *rec, uint64_t pos,
                               uint32_t kind, int tag, int64_t bytes, uint64_t off)
{
    rec->src = w->rank;
    rec->tag = tag;
    rec->kind = kind;
    rec->bytes = (uint64_t)bytes;
    rec->off = bytes ? off : 0;
    narmat_ring_publish(rec, pos);
}

static int shm_publish_after(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                             uint64_t off, int (*move)(void *arg), void *arg)
{
    uint64_t pos;
    struct narmat_rec *rec = shm_claim(st(w), target, &pos);
    if (rec == NULL) return NARMAT_AGAIN;
    int rc = move(arg);
    shm_publish(w, rec, pos, rc ? NARMAT_SHM_NOTE_VOID : (uint32_t)kind, tag, bytes, off);
    return rc;
}

/* The common notified put (one contiguous type on both sides, a window with fixed memory), its
 * addresses and record fields computed: Put_notify computes them at each call, a persistent put
 * once (pput_prep). */
struct shm_pput {
    char *to;         /* the first byte, in my mapping of the target's window */
    const char *from; /* the origin's first byte */
    uint64_t bytes;
    uint64_t off; /* the record's offset (0 when no byte moves) */
    int32_t target, tag;
};
_Static_assert(sizeof(struct shm_pput) <= sizeof(((struct narmat_pput *)0)->bytes),
               "fits the core's storage");

static inline __attribute__((always_inline)) void pput_fill(struct narmat_win *w, const void *oaddr,
                                                            int target, MPI_Aint disp, int tcount,
                                                            const narmau_dtype *td, int tag,
                                                            struct shm_pput *q)
{
    const uint64_t bytes = (uint64_t)((MPI_Aint)tcount * td->size);
    const MPI_Aint lb = td->nblocks > 0 ? td->blocks[0].off : 0;
    *q = (struct shm_pput){.bytes = bytes, .target = target, .tag = tag};
    if (bytes > 0) { /* bounds were checked; with no byte accessed no address is formed */
        q->to = taddr(w, target, disp) + lb;
        q->from = (const char *)oaddr + lb;
        q->off = (uint64_t)(disp * st(w)->peers[target].disp_unit + td->true_lb);
    }
}

/* n bytes from src to dst, which may overlap (memmove), every load before any store for the
 * sizes a halo's or a ping-pong's notified put often has; memmove beyond 16. */
static inline void copy_bytes(char *dst, const char *src, uint64_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else if (n > 0 && n < 4) {
        const char a = src[0], b = src[n / 2], c = src[n - 1];
        dst[0] = a;
        dst[n / 2] = b;
        dst[n - 1] = c;
    } else if (n > 16) {
        memmove(dst, src, (size_t)n);
    }
}

/* Claim, copy, publish (pulled puts toward the target already settled by the caller). Inlined
 * into both callers: out of line it cost Put_notify 25 instructions (callgrind). */
static inline __attribute__((always_inline)) int pput_run(struct narmat_win *w,
                                                          const struct shm_pput *q)
{
    uint64_t pos;
    struct narmat_rec *rec = shm_claim(st(w), q->target, &pos);
    if (rec == NULL) return NARMAT_AGAIN;
    copy_bytes(q->to, q->from, q->bytes);
    shm_publish(w, rec, pos, NARMAT_NOTE_PUT, q->tag, (int64_t)q->bytes, q->off);
    return NARMA_SUCCESS;
}

/* A notified access; the slot is claimed before the data moves, so a full ring
 * answers NARMAT_AGAIN before anything happened (an accumulate is never
 * applied twice when the core calls again). */
static int shm_notify(struct narmat_win *w, int kind, const void *oaddr, void *raddr, int ocount,
                      MPI_Datatype otype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                      MPI_Op op, int tag)
{
    shm_pull_complete(w, target); /* as shm_put */
    const narmau_dtype *td;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc) return rc;
    struct shm_state *s = st(w);
    if (kind == NARMAT_NOTE_PUT && otype == ttype && td->contiguous && s->dyn == NULL) {
        /* The common put, without the generic data step (shm_move_data). */
        struct shm_pput q;
        pput_fill(w, oaddr, target, disp, tcount, td, tag, &q);
        return pput_run(w, &q);
    }
    const int64_t bytes = (int64_t)((MPI_Aint)tcount * td->size);
    /* Bounds were checked; with no byte accessed the offset is never used. */
    const uint64_t off = (uint64_t)(disp * s->peers[target].disp_unit + td->true_lb);
    struct shm_move m = {w, kind, oaddr, raddr, ocount, otype, target, disp, tcount, ttype, op};
    return shm_publish_after(w, target, kind, tag, bytes, off, shm_move_data, &m);
}

static int shm_pput_prep(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                         int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                         struct narmat_pput *p)
{
    if (otype != ttype || st(w)->dyn != NULL) return NARMAT_NO_PREP;
    const narmau_dtype *td;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc) return rc;
    if (!td->contiguous) return NARMAT_NO_PREP;
    struct shm_pput q;
    pput_fill(w, oaddr, target, disp, tcount, td, tag, &q);
    memset(p, 0, sizeof *p);
    memcpy(p->bytes, &q, sizeof q);
    return NARMA_SUCCESS;
}

static int shm_pput_start(struct narmat_win *w, const struct narmat_pput *p)
{
    struct shm_pput q;
    memcpy(&q, p->bytes, sizeof q); /* the loads a cast would make, without aliasing */
    shm_pull_complete(w, q.target); /* as shm_put */
    return pput_run(w, &q);
}

static int shm_note(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                    int (*move)(void *arg), void *arg)
{
    shm_pull_complete(w, target); /* as shm_put */
    return shm_publish_after(w, target, kind, tag, bytes, 0, move, arg);
}

static int shm_put_notify(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    return shm_notify(w, NARMAT_NOTE_PUT, oaddr, NULL, ocount, otype, target, disp, tcount, ttype,
                      MPI_OP_NULL, tag);
}

/* A put the target pulls when it is large enough and the window allows (see "Pulled puts");
 * else put_notify. The pull word goes WAITING before the record is published, whose release
 * store publishes it with the record. */
static int shm_rput_notify(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                           int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag,
                           uint64_t *ticket)
{
    struct shm_state *s = st(w);
    *ticket = 0;
    if (s->pull_min != 0 && target != w->rank && otype == ttype && ~s->pull_busy != 0 &&
        !s->pull_never[target]) {
        const narmau_dtype *td;
        int rc = narmau_dtype_get(ttype, &td);
        if (rc) return rc;
        const uint64_t bytes = (uint64_t)tcount * (uint64_t)td->size;
        if (td->contiguous && bytes >= s->pull_min) {
            uint64_t pos;
            struct narmat_rec *rec = shm_claim(s, target, &pos);
            if (rec == NULL) return NARMAT_AGAIN;
            const unsigned i = (unsigned)__builtin_ctzll(~s->pull_busy);
            const MPI_Aint lb = td->nblocks > 0 ? td->blocks[0].off : 0;
            struct shm_pull *p = &s->pulls[i];
            p->gen++;
            p->seq = ++s->pull_seq;
            p->target = target;
            p->from = (const char *)oaddr + lb;
            p->to = taddr(w, target, disp) + lb;
            p->bytes = (size_t)bytes;
            p->t_issue = now_ns();
            s->pull_busy |= UINT64_C(1) << i;
            s->pull_out[target]++;
            /* Release: a target that reads this generation also sees my copy of the last. */
            narmau_atomic_store_rel_u64(pull_word(s, w->rank, i), pull_val(p->gen, PULL_WAITING));
            rec->from = (uint64_t)(uintptr_t)p->from;
            rec->ticket = p->gen * SHM_PULLS + i;
            *ticket = rec->ticket; /* before publishing: the slot is the target's after */
            shm_publish(w, rec, pos, NARMAT_NOTE_PUT | NARMAT_REC_PULL, tag, (int64_t)bytes,
                        (uint64_t)(disp * s->peers[target].disp_unit + td->true_lb));
            return NARMA_SUCCESS;
        }
    }
    return shm_put_notify(w, oaddr, ocount, otype, target, disp, tcount, ttype, tag);
}

static int shm_ticket_done(struct narmat_win *w, int target, uint64_t ticket)
{
    struct shm_state *s = st(w);
    const unsigned i = (unsigned)(ticket & (SHM_PULLS - 1));
    if (!(s->pull_busy >> i & 1) || s->pulls[i].gen != ticket / SHM_PULLS)
        return 1; /* settled already (a flush, progress) */
    pull_settle_upto(w, target, s->pulls[i].seq, PULL_PUSH_LATE); /* earlier ones first */
    return !(s->pull_busy >> i & 1);
}

static int shm_get_notify(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    return shm_notify(w, NARMAT_NOTE_GET, NULL, oaddr, ocount, otype, target, disp, tcount, ttype,
                      MPI_OP_NULL, tag);
}

static int shm_acc_notify(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                          int tag)
{
    return shm_notify(w, NARMAT_NOTE_ACC, oaddr, NULL, ocount, otype, target, disp, tcount, ttype,
                      op, tag);
}

static int shm_poll(struct narmat_win *w, narmat_note_cb cb, void *arg)
{
    struct shm_state *s = st(w);
    const struct shm_peer *me = &s->peers[w->rank];
    const struct narmat_rec *rec;
    int n = 0, consumed = 0;
    /* Bounded: at most one ring's worth per call so a flood cannot starve the caller. */
    while (consumed <= (int)s->mask &&
           (rec = narmat_ring_peek(s->myring, s->mask, s->head)) != NULL) {
        int32_t src = rec->src, tag = rec->tag;
        int64_t bytes = (int64_t)rec->bytes;
        /* The data a put or accumulate left is what the program reads next:
         * start loading its first line while matching runs. */
        if (bytes > 0 && rec->kind != NARMAT_NOTE_GET && rec->off < (uint64_t)me->size)
            __builtin_prefetch(me->data + rec->off);
        uint32_t kind = rec->kind;
        if (kind & NARMAT_REC_PULL) {
            if (pull_in(w, src, rec->from, rec->ticket, rec->off, (uint64_t)bytes) != 0)
                break; /* the origin has to copy it: this record and those after it wait */
            kind &= ~NARMAT_REC_PULL;
        }
        s->head++;
        consumed++;
        if (kind == NARMAT_SHM_NOTE_VOID) continue; /* a failed access: nothing to deliver */
        n++;
        cb(arg, src, tag, bytes);
    }
    if (consumed > 0) narmat_ring_consumed(s->myring, s->head);
    /* My own pulled puts: free the words of those done; copy those the target has not begun. */
    if (s->pull_busy) pull_settle_upto(w, -1, UINT64_MAX, PULL_PUSH_LATE);
    return n;
}

static int shm_ctl_add(struct narmat_win *w, int target, int kind, int arg, uint64_t val)
{
    shm_pull_complete(w, target); /* data first */
    /* acq_rel RMW: releases this process's earlier data stores to whoever
     * acquires the word (shm_ctl_load). */
    narmau_atomic_fetch_add_u64(ctl_word(st(w), target, kind, arg), val);
    return NARMA_SUCCESS;
}

static int shm_ctl_cas(struct narmat_win *w, int target, int kind, int arg, uint64_t expected,
                       uint64_t desired, uint64_t *old)
{
    shm_pull_complete(w, target); /* data first */
    uint64_t e = expected;
    narmau_atomic_cas_u64(ctl_word(st(w), target, kind, arg), &e, desired);
    *old = e; /* on success e still holds expected */
    return NARMA_SUCCESS;
}

static uint64_t shm_ctl_load(struct narmat_win *w, int kind, int arg)
{
    /* Acquire: pairs with the peers' ctl_add/cas; their data is visible after. */
    return narmau_atomic_load_acq_u64(ctl_word(st(w), w->rank, kind, arg));
}

const struct narmat_ops narmat_shm_ops = {
    .size = sizeof(struct narmat_ops),
    .name = "shm",
    .layout = SHM_LAYOUT_VERSION,
    .target_name = narmat_own_name,
    .win_init = shm_win_init,
    .win_free = shm_win_free,
    .attach = shm_attach,
    .detach = shm_detach,
    .check_bounds = shm_check_bounds,
    .shared_query = shm_shared_query,
    .put = shm_put,
    .get = shm_get,
    .acc = shm_acc,
    .cas = shm_cas,
    .flush = shm_flush,
    .flush_local = shm_flush,
    .sync = shm_sync,
    .put_notify = shm_put_notify,
    .get_notify = shm_get_notify,
    .acc_notify = shm_acc_notify,
    .rput_notify = shm_rput_notify,
    .ticket_done = shm_ticket_done,
    .pput_prep = shm_pput_prep,
    .pput_start = shm_pput_start,
    .notify_prep = narmat_notify_prep_none,
    .note = shm_note,
    .poll = shm_poll,
    .ctl_add = shm_ctl_add,
    .ctl_cas = shm_ctl_cas,
    .ctl_load = shm_ctl_load,
};
