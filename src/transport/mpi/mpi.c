/*
 * The portable transport: narma over plain MPI-3 passive-target RMA.
 *
 * Used for ranks that do not share memory, for user memory (Win_create),
 * for dynamic windows, and everywhere with NARMA_TRANSPORT=mpi (there, a
 * Win_allocate_shared window's data window is MPI_Win_allocate_shared's, so
 * the program still loads from and stores to its peers' memory).
 *
 * Each narma window owns two MPI windows, both held in
 * MPI_Win_lock_all(MPI_MODE_NOCHECK) for their whole life:
 *   data  the user's memory (create / allocate / dynamic), w->attr_win;
 *   ctl   MPI_Win_allocate'd, disp_unit 1, same layout on every rank:
 * except a Win_allocate window, whose ctl and data are one MPI window (an MPI
 * library has a few thousand communicator contexts, and each MPI window takes
 * one): MPI_Win_allocate of ctl_bytes + the user's size, disp_unit 1, with the
 * window's info; the ctl layout at offset 0, the user's memory at data_off =
 * ctl_bytes on every rank (mpi_disp adds it). t->data == t->ctl then. The
 * ctl layout:
 *
 *     line 0   header {magic, layout version, slot size, slots per origin}
 *     line 1   lock word (NARMAT_CTL_LOCK)
 *     8 lines  fence[64]
 *              grant[size], done[size]   (each padded to whole lines)
 *              credit[size]: credit[t] = how far target t consumed my
 *                            sub-ring there (written by t, read by me)
 *     1 line   joined: how many origins took a place in the list below
 *              list[2 x size]: the origins that ever notified me, in the
 *                          order they joined (see "Origins that joined")
 *              ring: size sub-rings (one per origin) x slots x 64-byte records
 *     dynamic windows only (see "Attached regions" below):
 *     2 lines  {table version (seqlock)}, {invalidation counter}
 *              subscriber bitmap: one bit per rank (padded to whole lines)
 *     1 line   {address of the published table, count} (MPI_Aint)
 *
 * Data operations are plain MPI RMA on the data window; a per-target "dirty"
 * flag remembers whether anything was issued since the last flush, so control
 * updates only pay for a data flush when there is data to order.
 *
 * Notification rings. A target's ring is partitioned per origin: origin o
 * alone writes sub-ring o, so it owns its write position (pos[t], never
 * shared) and nothing is claimed over the network. Positions are 64-bit
 * counters that never wrap; slot = pos & (slots - 1).
 *
 *   writer  1. (reserve) pos - credit < slots, where credit is the last value
 *              the target wrote into my credit[t] word: a local load (after
 *              MPI_Win_sync; Fetch_and_op(NO_OP) on self in the separate
 *              model), no network operation. Otherwise the access answers
 *              NARMAT_AGAIN having issued nothing: the core drives progress
 *              (which drains this process's own rings, so two ranks notifying
 *              each other cannot deadlock) and retries.
 *           2. issue the data access (Put / Get / Accumulate; none for 0
 *              bytes), take position pos, fill the record in my own copy of
 *              the sub-ring (kept until the slot comes round again);
 *           3. flush the data window to the target (the data is complete),
 *              then write the record with ONE MPI_Put of a 64-byte record
 *              (record.h: sequence number pos + 1, source, kind, tag, size,
 *              time, and a 64-bit check word hashing the rest) and flush ctl.
 *              A Put is not atomic, not even word by word: the reader checks
 *              the whole record (see "Torn and stale records").
 *           A notified access costs two flushes and two Puts (or one
 *           Get/Accumulate and one Put): the same network operations as MPI's
 *           own idiom (Put, flush, Put flag, flush); 0.1.0 added a
 *           Fetch_and_op round trip and a third flush, and until layout 4 the
 *           record was an MPI_Accumulate, which MPICH serialises on one
 *           process-shared mutex per window (docs/performance.md). Step 3 is
 *           written for several queued records (one Put per contiguous run of
 *           slots), but the contract (transport.h: complete with the
 *           notification on return) makes every access write its own at once.
 *   reader  (poll) MPI_Win_sync(ctl); for every sub-ring o, from head[o]:
 *           acquire-load the words (separate model: one MPI_Get from
 *           self); a record is whole when its sequence number is head + 1,
 *           its check word matches (narmat_mpi_rec_whole) and src == o.
 *           MPI_Win_sync(data) once (the writer completed the data before the
 *           record: make it visible to the program's loads), head[o]++,
 *           deliver through cb (unless kind is 0 = void). Once
 *           head[o] is slots/4 (at least 1) past the credit last returned to
 *           o, the reader returns credit: MPI_Accumulate(REPLACE) of head[o]
 *           into o's credit[me] word + flush (amortised: one per slots/4
 *           records). Lazy credit cannot stall a writer forever: a writer
 *           waits only when slots records are unconsumed, all of them whole
 *           at the target, so the reader consumes them and moves head[o] a
 *           full sub-ring (>= slots/4) past the credit it returned.
 *           Every poll on Win_create/dynamic windows (every 64th otherwise)
 *           also enters MPI's progress engine with MPI_Iprobe.
 *
 * Deferred records (window info narma_notify_completion=flush: MPI's completion
 * rules). Steps 1 and 2 as above, but step 3 waits: the target joins pend[] and
 * its records are written, all at once, by the first of: a flush to it (or
 * flush_all, unlock, fence), a control update to it (Win_complete's done count,
 * a lock word: records before the update, so a target that sees the update
 * finds them), a full sub-ring (reserve writes them before it looks for
 * credit), this process's next poll (progress: any narma call that waits), or
 * Win_free. 64 notified puts and one flush cost 64 Puts, one data flush, one
 * Put of 64 records and one ctl flush, instead of 64 of each. The origin
 * buffer is reusable after that flush (MPI_Put's rule), so the R* forms flush
 * locally before their request completes. Records written by progress that
 * fail report at the next flush.
 *
 * Arrival order across origins. With one sub-ring per origin the reader no
 * longer sees one arrival order, but programs may rely on it (an origin
 * notifies after learning that another origin's notification arrived: the
 * unexpected queue must match them in that order). Records carry the writer's
 * time taken after its data completed (rec_time: CLOCK_MONOTONIC when all
 * ranks run on one host, else CLOCK_REALTIME; never below the window's
 * previous one); a poll collects the whole records of every sub-ring (first
 * pass), then looks again (second pass) and delivers, sorted by (time,
 * origin, position), all first-pass records and the second-pass ones not
 * later than the latest first-pass one. Why that is enough: if record A was
 * complete before B's writer took B's time and B was seen in the first pass,
 * A was complete before the second pass began, so it is seen by then and
 * sorts before B. This is exact on a window whose ranks share one host (one
 * monotonic clock); between nodes it is as good as the clocks'
 * synchronisation by NTP or PTP, and for as long as a realtime clock is
 * stepped back, a writer that sent before the step keeps its last time
 * (documented limit: a network transport with a target-side arrival counter
 * would make it exact). Until layout 5 every window used CLOCK_MONOTONIC,
 * which counts from each node's boot and so ordered nothing between nodes.
 * One origin's records keep their order whatever the clock does: its times
 * never decrease, and position breaks ties (test_notify_fifo_mixed).
 *
 * A taken position is always filled: if the data access fails after step 2,
 * the record still goes out with kind 0 (void), which the reader consumes
 * without delivering, and the access returns the MPI error
 * (NARMA_TEST_NOTIFY_FAIL exercises this). Only a failure of ctl itself in
 * step 3 leaves a hole.
 *
 * Torn and stale records are refused. MPI_Put makes no atomicity promise, so
 * the reader may load any mix of the new record's bytes with the slot's
 * previous contents (the record of position pos - slots, or zeros). It accepts
 * a record only when w0 is the expected sequence number pos + 1 and the check
 * word equals the 64-bit hash of the other words (record.h). The previous
 * record has seq pos + 1 - slots (never equal: slots >= 1) and a zeroed slot
 * w0 == 0, never a valid seq; a torn read whose bytes happen to form the
 * expected seq still holds a word that differs from the new record's, or an
 * old or mixed check word, and passes only if 64 hash bits collide (about
 * 2^-64 per torn read, and a torn read needs the reader to load the slot while
 * the Put lands). tests/unit/test_mpi_record.c tears records at every word and
 * byte boundary. Layouts 1-3 wrote five or seven words with MPI_Accumulate,
 * a 32-bit check in each: atomic word by word, but MPICH serialises
 * accumulates on one mutex per window (on MPICH here: 400 ns per notified put,
 * 240 with a Put, on a slow day; 250 and 200 on a fast one). In the separate
 * model the reader reads the slot with one MPI_Get from itself (layout 3 used
 * eight Fetch_and_op(NO_OP)): against a Put that is as undefined as a load,
 * and the check word refuses what it may return. Nothing is
 * overwritten early: a writer fills slot pos only after the reader returned
 * credit > pos - slots, i.e. after it copied out that slot's previous record.
 * test_notify_torn drives many origins into one target and checks every
 * payload against its notification.
 *
 * Memory per window and rank: size x slots x 64 bytes of ring, plus 78 bytes
 * of per-peer notification state (credit word, two list places, head, credit returned,
 * position, records written, credit seen, a pointer, place in act[], two flags) and, lazily on the
 * first notified access to a target, my copy of that sub-ring (slots x 64 bytes). slots =
 * NARMA_RING_SLOTS / size rounded down to a power of two, at least NARMAT_MPI_MIN_SUBRING (4): the
 * ring of a target keeps the size NARMA_RING_SLOTS asked for until the ranks outgrow it. At 10^5
 * ranks: 4 slots per origin, 26 MB of ring and 7.8 MB of per-peer state per window and rank
 * (NARMA_RING_SLOTS=2 halves the ring).
 *
 * Origins that joined. A reader's poll visits only the sub-rings of origins that ever notified
 * it, not all size of them (layouts up to 5 did: at 10^5 ranks a poll read 10^5 cache lines).
 * Before its first notified access to a target (step 1, once per window and target) an origin
 * takes a place in the target's list: MPI_Fetch_and_op(SUM, 1) on the joined word, a flush
 * (one round trip, once per pair), then one MPI_Put of its entry into list[place], completed
 * by the flush that completes its first record. The entry is (o + 1) << 32 | ~(o + 1) (32-bit
 * halves), so a torn or unwritten one (zeros) reads as invalid. The reader, at the start of
 * each pass, reads the joined word (clamped to the list's 2 x size places) and the entries it
 * has not looked at yet; a place whose entry has not landed is remembered and looked at again
 * at each pass (one load) until it lands, and the places after it are taken meanwhile, so a
 * place taken by an origin whose join then failed (it joins again later, at a new place)
 * leaves a hole that delays nobody; the list has room for size such failures. A record is complete
 * only after its origin's entry (same flush or an earlier one), so the arrival-order argument above
 * still holds: the second pass reads the list again before it looks for records the first missed.
 *
 * Control words: remote updates are MPI atomics on ctl followed by a flush of
 * ctl; a flush of the data window to the same target (when dirty) precedes
 * them, which is the contract's release ordering. Local reads are acquire
 * loads after MPI_Win_sync (unified model), or Fetch_and_op(NO_OP) on self
 * when MPI reports the separate model, followed by MPI_Win_sync(data) so that
 * the data the updater released is visible to this process's loads.
 *
 * Attached regions (dynamic windows): each rank publishes its table of
 * {base, end} pairs in memory attached to the data window itself, and the
 * table's address and count in ctl, rewritten with MPI atomics on self under
 * a seqlock (version odd, table and {address, count}, version even). The
 * table has no fixed size: when it fills, a table of twice the capacity is
 * attached beside it (NARMA_DYNAMIC_REGIONS is the first capacity); old
 * tables stay attached until Win_free, so a reader holding an old address
 * still reads valid memory and then sees the version change. An origin
 * checks an access against its cached copy of the target's table, used while
 * the origin's own invalidation counter is unchanged; on a miss it refetches
 * (version, {address, count}, table, version: four round trips) and refuses with NARMA_ERR_DISP if
 * the access still lies outside every region. Its first fetch sets its bit in the target's
 * subscriber bitmap; a detach bumps every subscriber's invalidation counter (flushed) before
 * MPI_Win_detach, so a peer access ordered after the detach refetches.
 */
#include "transport/mpi/record.h"
#include "transport/transport.h"
#include "util/atomic.h"
#include "util/dtype.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NARMAT_MPI_MAGIC UINT64_C(0x6e61726d616d7069) /* "narmampi" */
/* Layout 7: a Win_allocate window's ctl and data in one MPI window. */
#define NARMAT_MPI_LAYOUT_VERSION 7
#define NARMAT_MPI_LINE           64
#define NARMAT_MPI_SEEN_FIRST     256 /* records one poll can order before seen[] grows */
#define NARMAT_MPI_MIN_SUBRING    4   /* slots per origin, whatever NARMA_RING_SLOTS / size is */
/* Largest window, in bytes, with room for the ctl words and padding below MPI_Aint's limit. */
#define NARMAT_MPI_MAX_BYTES ((MPI_Aint)(((uint64_t)1 << (8 * sizeof(MPI_Aint) - 1)) - 1) / 2)
_Static_assert(NARMAT_MPI_LAYOUT_VERSION < 256, "a layout is one byte of the wire version");
#define NARMAT_MPI_NOTE_VOID       0 /* record kind of a failed access (narmat_note_kind starts at 1) */
#define NARMAT_MPI_DEFAULT_REGIONS 64 /* NARMA_DYNAMIC_REGIONS */
#define NARMAT_MPI_MAX_REGIONS     (1 << 20)
#define NARMAT_MPI_MAX_TABLES      40 /* published tables: capacity doubles each time */

/* Fixed byte offsets inside the ctl window. */
enum {
    NARMAT_MPI_OFF_HDR = 0,
    NARMAT_MPI_OFF_LOCK = 1 * NARMAT_MPI_LINE,
    NARMAT_MPI_OFF_FENCE = 2 * NARMAT_MPI_LINE,
    NARMAT_MPI_OFF_GRANT = NARMAT_MPI_OFF_FENCE + NARMAT_FENCE_ROUNDS * 8,
};
_Static_assert(NARMAT_MPI_OFF_GRANT % NARMAT_MPI_LINE == 0, "grant[] starts on a cache line");

/* A record the reader found, before it is delivered in timestamp order (poll). */
struct narmat_mpi_seen {
    uint64_t ts, pos;
    int origin, second; /* found by the second pass */
    int ctr;            /* the tag is a counter index (w1 bit 31) */
    uint64_t w2, bytes;
};

/* An attached region of a dynamic window: addresses [base, end). Published as
 * two MPI_Aint in the owner's table (see "Attached regions" below). */
struct narmat_mpi_region {
    MPI_Aint base, end;
};

/* An origin's copy of one target's table of attached regions (dynamic windows,
 * created on the first access to that target). */
struct narmat_mpi_dyncache {
    uint64_t inval;              /* our invalidation counter when the copy was fetched */
    int n, cap;                  /* regions in r[], its capacity */
    int subscribed;              /* our bit is set in the target's subscriber map */
    int last;                    /* index of the last region that held an access */
    struct narmat_mpi_region *r; /* the copy */
};

struct narmat_mpi {
    MPI_Win data, ctl;     /* the same window for Win_allocate (see the top of the file) */
    MPI_Aint data_off;     /* Win_allocate: bytes from the MPI window's base to the user's */
    unsigned char *ctlmem; /* base of this rank's ctl window */
    MPI_Aint off_done, off_credit, off_joined, off_ring, ctl_bytes;
    uint64_t slots;               /* capacity of each origin's sub-ring, same on every rank */
    uint64_t publish_every;       /* reader: return credit after this many records (slots / 4) */
    uint64_t *head;               /* reader, per origin: next position to consume in its sub-ring */
    uint64_t *published;          /* reader, per origin: last head written to its credit word */
    uint64_t *pos;                /* writer, per target: next position of my sub-ring there */
    uint64_t *sent;               /* writer, per target: positions whose records were written */
    struct narmat_mpi_rec **out;  /* writer, per target (lazily): records not yet written,
                                   * at pos & (slots - 1) as in the target's sub-ring */
    int nout;                     /* entries of out[] */
    struct narmat_mpi_seen *seen; /* reader: records one poll found (nseen_cap, grows) */
    int nseen_cap;
    int *found; /* reader, per origin: records of seen[] (zero between polls) */
    int *act;   /* reader: origins that joined, in the order taken (nact) */
    int nact;
    uint64_t ntaken; /* reader: places of the list looked at */
    uint32_t *holes; /* reader: places looked at whose entry had not landed (lazily, 2 x size) */
    int nholes;
    uint8_t *in_act;    /* reader, per origin: in act[] */
    uint8_t *joined;    /* writer, per target: my entry is in its list */
    int join_hole;      /* NARMA_TEST_JOIN_HOLE=n: the first join leaves n holes */
    int progress_every; /* poll: enter MPI's progress engine every n-th poll */
    int polls;
    MPI_Aint *sizes;  /* per rank: window size in bytes (create/allocate) */
    int *units;       /* per rank: displacement unit */
    MPI_Aint *deltas; /* Win_create, per rank: bytes from the MPI window's base to the user's */
    uint8_t *dirty;   /* per target: data operations issued since the last flush */
    uint64_t *hd;     /* per target: its credit word (head of my sub-ring) as last read */
    int *pend;        /* w->notify_deferred: targets with records not yet written, npend */
    int npend;
    int *pend_errs;      /* deferred, per target: a failure of records progress wrote there,
                          * for the next flush of that target (or flush_all) */
    int npend_errs;      /* targets with one */
    uint64_t join_entry; /* my entry in targets' lists, kept for the Puts that carry it */
    uint64_t join_one, join_place; /* the join's Fetch_and_op operands */
    uint64_t last_ts;              /* writer: time of the last record sent (rec_time) */
    clockid_t clock;      /* of those times: CLOCK_MONOTONIC on one host, else CLOCK_REALTIME */
    uint64_t clock_steps; /* NARMA_TEST_CLOCK_BACK: records timed so far */
    int clock_back;       /* NARMA_TEST_CLOCK_BACK=1 */
    uint8_t *queued;      /* deferred, per target: in pend[] */
    int unified;          /* ctl is read with loads (MPI_WIN_UNIFIED) */
    int locked;           /* both windows are in their lock_all epoch */
    /* Dynamic windows (see "Attached regions" above). */
    struct narmat_mpi_region *regions; /* this rank's attached memory, dyn_cap entries */
    int nregions, dyn_cap;
    struct narmat_mpi_region *tabs[NARMAT_MPI_MAX_TABLES]; /* published tables, newest last */
    int ntabs;
    uint64_t dyn_version;                /* owner: seqlock word last published (even) */
    MPI_Aint off_dyn, off_subs, off_tab; /* ctl: {version}, {inval} lines; bitmap; {addr, n} */
    struct narmat_mpi_dyncache **dcache; /* per target, lazily */
    int nranks;                          /* entries of dcache */
};

static inline struct narmat_mpi *tp_of(struct narmat_win *w) { return w->tp; }

static int narmat_mpi_send(struct narmat_win *w, int target);
static int narmat_mpi_send_pending(struct narmat_win *w, int keep);

/* The displacement MPI gets: a Win_create window's MPI window has unit 1 and
 * starts delta bytes below the user's base (see win_init); a Win_allocate
 * window's has unit 1 and starts data_off bytes below it (its ctl words).
 * check_bounds accepted disp, so the product cannot overflow unless no byte is
 * accessed. */
static inline MPI_Aint mpi_disp(const struct narmat_win *w, const struct narmat_mpi *t, int target,
                                MPI_Aint disp)
{
    MPI_Aint off, delta;
    if (w->flavor == MPI_WIN_FLAVOR_CREATE)
        delta = t->deltas[target];
    else if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE)
        delta = t->data_off;
    else
        return disp;
    if (__builtin_mul_overflow(disp, (MPI_Aint)t->units[target], &off)) return delta;
    return off + delta;
}

/* Slots of each origin's sub-ring: the ring of `total` slots shared among `size` origins (a
 * power of two, rounded down), but at least NARMAT_MPI_MIN_SUBRING (or total if smaller) so
 * that a notified access need not wait for a credit round trip each time. */
static uint64_t narmat_mpi_subring(unsigned total, int size)
{
    uint64_t per = total / (unsigned)(size > 0 ? size : 1), s = 1;
    uint64_t floor = total < NARMAT_MPI_MIN_SUBRING ? total : NARMAT_MPI_MIN_SUBRING;
    while (s * 2 <= per)
        s <<= 1;
    while (s < floor)
        s <<= 1;
    return s;
}

static MPI_Aint pad_line(MPI_Aint n)
{
    return (n + NARMAT_MPI_LINE - 1) / NARMAT_MPI_LINE * NARMAT_MPI_LINE;
}

static MPI_Aint ctl_offset(const struct narmat_mpi *t, int kind, int arg)
{
    switch (kind) {
    case NARMAT_CTL_LOCK:
        return NARMAT_MPI_OFF_LOCK;
    case NARMAT_CTL_FENCE:
        return NARMAT_MPI_OFF_FENCE + (MPI_Aint)arg * 8;
    case NARMAT_CTL_GRANT:
        return NARMAT_MPI_OFF_GRANT + (MPI_Aint)arg * 8;
    default:
        return t->off_done + (MPI_Aint)arg * 8; /* NARMAT_CTL_DONE */
    }
}

static inline uint64_t *ctl_word(const struct narmat_mpi *t, MPI_Aint off)
{
    return (uint64_t *)(void *)(t->ctlmem + off);
}

/* ---- window life cycle ---- */

static void narmat_mpi_release(struct narmat_mpi *t)
{
    if (t == NULL) return;
    if (t->data == t->ctl) t->data = MPI_WIN_NULL; /* one window (Win_allocate) */
    if (t->ctl != MPI_WIN_NULL) {
        if (t->locked) MPI_Win_unlock_all(t->ctl);
        MPI_Win_free(&t->ctl);
    }
    if (t->data != MPI_WIN_NULL) {
        if (t->locked) MPI_Win_unlock_all(t->data);
        MPI_Win_free(&t->data);
    }
    free(t->sizes);
    free(t->units);
    free(t->deltas);
    free(t->dirty);
    free(t->hd);
    free(t->head);
    free(t->published);
    free(t->pos);
    free(t->seen);
    free(t->found);
    free(t->act);
    free(t->holes);
    free(t->in_act);
    free(t->joined);
    free(t->sent);
    free(t->pend);
    free(t->pend_errs);
    free(t->queued);
    if (t->out)
        for (int i = 0; i < t->nout; i++)
            free(t->out[i]);
    free(t->out);
    free(t->regions);
    for (int i = 0; i < NARMAT_MPI_MAX_TABLES; i++) /* also one allocated but never attached */
        free(t->tabs[i]);
    if (t->dcache)
        for (int i = 0; i < t->nranks; i++)
            if (t->dcache[i]) {
                free(t->dcache[i]->r);
                free(t->dcache[i]);
            }
    free(t->dcache);
    free(t);
}

/* NARMA_DYNAMIC_REGIONS: initial capacity of a rank's table of attached regions
 * (it doubles whenever it fills). */
static unsigned narmat_mpi_env_regions(void)
{
    const char *v = getenv("NARMA_DYNAMIC_REGIONS");
    if (v == NULL || *v == '\0') return NARMAT_MPI_DEFAULT_REGIONS;
    char *end;
    unsigned long x = strtoul(v, &end, 0);
    if (*end != '\0' || x < 1 || x > NARMAT_MPI_MAX_REGIONS) {
        fprintf(stderr, "narma: ignoring NARMA_DYNAMIC_REGIONS=%s (expected 1..%d)\n", v,
                NARMAT_MPI_MAX_REGIONS);
        return NARMAT_MPI_DEFAULT_REGIONS;
    }
    return (unsigned)x;
}

/* Inside win_init: record an MPI failure and leave through the one cleanup exit. */
#define NARMAT_MPI_TRY(call)                       \
    do {                                           \
        int narmat_mpi_rc_ = (call);               \
        if (narmat_mpi_rc_ != MPI_SUCCESS) {       \
            rc = narmau_mpi_error(narmat_mpi_rc_); \
            goto fail;                             \
        }                                          \
    } while (0)

/* Window creation is collective: a rank whose local step failed must not leave the others in a
 * collective it skips. Every rank contributes its status; all fail if any did (the failed rank
 * with its own class, the others with the worst class seen). */

static int narmat_mpi_agree(struct narmat_win *w, int mine)
{
    int worst = mine;
    int mrc = MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, w->comm);
    if (mrc != MPI_SUCCESS) return mine ? mine : narmau_mpi_error(mrc);
    if (worst == NARMA_SUCCESS || mine != NARMA_SUCCESS) return mine;
    return NARMAU_ERR(worst, "another rank could not create its part of the window");
}

/* The info of the MPI window holding the user's memory: the program's, less no_locks (narma
 * holds its windows in MPI_Win_lock_all, which Open MPI refuses on a no_locks window whatever
 * the program itself does) and, where the control words share that window (Win_allocate, see
 * the top of the file), less what would misdescribe them: they mix operations on one word
 * (accumulate_ops=same_op, MPICH's which_accumulate_ops). *align is the
 * mpi_minimum_memory_alignment asked for (0: none), which data_off then honours. */
static int data_info(MPI_Info in, int merged, MPI_Info *out, unsigned long *align)
{
    int n = 0, mrc = MPI_Info_create(out);
    *align = 0;
    if (mrc == MPI_SUCCESS && in != MPI_INFO_NULL) mrc = MPI_Info_get_nkeys(in, &n);
    for (int i = 0; i < n && mrc == MPI_SUCCESS; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[256];
        int len = 0, flag = 0;
        if ((mrc = MPI_Info_get_nthkey(in, i, key)) != MPI_SUCCESS) break;
        if (!strcmp(key, "no_locks")) continue;
        if (merged && (!strcmp(key, "accumulate_ops") || !strcmp(key, "which_accumulate_ops")))
            continue;
        mrc = MPI_Info_get_valuelen(in, key, &len, &flag);
        if (mrc != MPI_SUCCESS || !flag || len >= (int)sizeof(val)) continue; /* not ours */
        if ((mrc = MPI_Info_get(in, key, (int)sizeof(val) - 1, val, &flag)) != MPI_SUCCESS) break;
        if (!strcmp(key, "mpi_minimum_memory_alignment")) *align = strtoul(val, NULL, 10);
        mrc = MPI_Info_set(*out, key, val);
    }
    return mrc;
}

static int narmat_mpi_win_init(struct narmat_win *w, void *base, MPI_Aint size, MPI_Info info)
{
    int rc = NARMA_SUCCESS, flag, mrc0;
    MPI_Info cinfo = MPI_INFO_NULL, dinfo = MPI_INFO_NULL;
    unsigned long align = 0;
    size_t p = (size_t)w->size;
    /* NARMA_TEST_FAIL_ALLOC stages here: 1 transport state, 2 a dynamic window's tables. */
    struct narmat_mpi *t = calloc(1, sizeof(*t));
    if (t != NULL) {
        t->data = t->ctl = MPI_WIN_NULL;
        t->sizes = malloc(p * sizeof(*t->sizes));
        t->units = malloc(p * sizeof(*t->units));
        t->deltas = calloc(p, sizeof(*t->deltas));
        t->dirty = calloc(p, 1);
        t->hd = calloc(p, sizeof(*t->hd));
        t->head = calloc(p, sizeof(*t->head));
        t->published = calloc(p, sizeof(*t->published));
        t->pos = calloc(p, sizeof(*t->pos));
        t->sent = calloc(p, sizeof(*t->sent));
        t->seen = malloc(NARMAT_MPI_SEEN_FIRST * sizeof(*t->seen));
        t->nseen_cap = NARMAT_MPI_SEEN_FIRST;
        t->found = calloc(p, sizeof(*t->found));
        t->act = malloc(p * sizeof(*t->act));
        t->in_act = calloc(p, 1);
        t->joined = calloc(p, 1);
        t->out = calloc(p, sizeof(*t->out));
        t->nout = w->size;
        t->pend = malloc(p * sizeof(*t->pend));
        t->pend_errs = calloc(p, sizeof(*t->pend_errs));
        t->queued = calloc(p, 1);
    }
    if (t == NULL || !t->sizes || !t->units || !t->deltas || !t->dirty || !t->hd || !t->head ||
        !t->published || !t->pos || !t->sent || !t->out || !t->seen || !t->found || !t->pend ||
        !t->queued || !t->act || !t->in_act || !t->joined || !t->pend_errs ||
        narmat_test_fail_alloc(1))
        rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "mpi transport state");
    if ((rc = narmat_mpi_agree(w, rc))) {
        narmat_mpi_release(t);
        return rc;
    }

    /* The data window's info (data_info). A local failure (MPI short of memory for an info)
     * keeps no hint rather than skip the collectives below. */
    if (data_info(info, w->flavor == MPI_WIN_FLAVOR_ALLOCATE, &dinfo, &align) != MPI_SUCCESS) {
        if (dinfo != MPI_INFO_NULL) MPI_Info_free(&dinfo);
        dinfo = MPI_INFO_NULL;
        align = 0;
    }

    /* Data window. Allocations are padded to whole cache lines (Debian's
     * MPICH 4.0.2 loses puts on MPI_Win_allocate windows whose size is not a
     * multiple of 16); bounds checks still use the user's size. */
    switch (w->flavor) {
    case MPI_WIN_FLAVOR_CREATE: {
        /* Debian's MPICH 4.0.2 aligns a Win_create base down to 16 bytes and moves every
         * access with it: the MPI window starts at the cache line holding base, with
         * displacement unit 1, and accesses add each target's offset (mpi_disp). */
        char *aligned =
            size > 0 ? (char *)((uintptr_t)base & ~(uintptr_t)(NARMAT_MPI_LINE - 1)) : (char *)base;
        MPI_Aint delta = (char *)base - aligned;
        NARMAT_MPI_TRY(MPI_Win_create(aligned, size + delta, 1, dinfo, w->comm, &t->data));
        NARMAT_MPI_TRY(MPI_Allgather(&delta, 1, MPI_AINT, t->deltas, 1, MPI_AINT, w->comm));
        w->base = base;
        break;
    }
    case MPI_WIN_FLAVOR_ALLOCATE: /* with the ctl words, below */
        break;
    case MPI_WIN_FLAVOR_SHARED: {
        /* Unpadded: rank r's memory must start where rank r-1's ends. */
        void *b = NULL;
        NARMAT_MPI_TRY(MPI_Win_allocate_shared(size, w->disp_unit, dinfo, w->comm, &b, &t->data));
        w->base = b;
        break;
    }
    case MPI_WIN_FLAVOR_DYNAMIC:
        NARMAT_MPI_TRY(MPI_Win_create_dynamic(dinfo, w->comm, &t->data));
        w->base = NULL;
        break;
    default:
        rc = NARMAU_ERR(NARMA_ERR_INTERN, "unknown flavor %d", w->flavor);
        goto fail;
    }
    if (t->data != MPI_WIN_NULL) NARMAT_MPI_TRY(MPI_Win_set_errhandler(t->data, MPI_ERRORS_RETURN));

    /* Geometry of the targets, for check_bounds. */
    MPI_Aint mysize = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    NARMAT_MPI_TRY(MPI_Allgather(&mysize, 1, MPI_AINT, t->sizes, 1, MPI_AINT, w->comm));
    NARMAT_MPI_TRY(MPI_Allgather(&w->disp_unit, 1, MPI_INT, t->units, 1, MPI_INT, w->comm));

    /* The clock of the records' times (rec_time): one OS instance's CLOCK_MONOTONIC when every
     * rank runs on it (exact, never stepped), else CLOCK_REALTIME, which NTP or PTP keeps in
     * step between nodes. Every rank sees the same answer (one node holds all or none).
     * Pretend nodes (NARMA_NODE_SIZE) count as nodes, so that the tests split over them run
     * the realtime branch on one machine. */
    int hsize = 0;
    MPI_Comm_size(w->node, &hsize);
    t->clock = hsize == w->size ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    if (w->rank == 0 && narmau_verbose())
        fprintf(stderr, "narma: mpi transport: a window of %d ranks, %s; records timed by %s\n",
                w->size, hsize == w->size ? "one node" : "several nodes",
                hsize == w->size ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME");

    /* Sub-ring capacity (see "Notification rings"): NARMA_RING_SLOTS is the whole ring of a
     * target, shared out among its origins; every rank must agree on the layout. */
    unsigned long mine[2] = {w->ring_slots ? w->ring_slots : 2, align}, most[2] = {0, 0};
    NARMAT_MPI_TRY(MPI_Allreduce(mine, most, 2, MPI_UNSIGNED_LONG, MPI_MAX, w->comm));
    t->slots = narmat_mpi_subring((unsigned)most[0], w->size);
    align = most[1];

    t->publish_every = t->slots >= 4 ? t->slots / 4 : 1;
    /* Win_create and dynamic windows need the target inside MPI's progress
     * engine for a remote flush to complete; allocated ones do on some stacks. */
    t->progress_every =
        w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED ? 64 : 1;
    t->off_done = NARMAT_MPI_OFF_GRANT + pad_line((MPI_Aint)p * 8);
    t->off_credit = t->off_done + pad_line((MPI_Aint)p * 8);
    t->off_joined = t->off_credit + pad_line((MPI_Aint)p * 8);
    t->off_ring = t->off_joined + NARMAT_MPI_LINE + pad_line((MPI_Aint)p * 16);
    t->ctl_bytes = t->off_ring + pad_line((MPI_Aint)p * (MPI_Aint)t->slots * NARMAT_MPI_REC_BYTES);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* Table of attached regions: this rank's own copy, and the published one, attached
         * to the data window itself so that it can grow (see "Attached regions"). */
        t->dyn_cap = (int)narmat_mpi_env_regions();
        t->nranks = w->size;
        t->regions = malloc((size_t)t->dyn_cap * sizeof(*t->regions));
        t->tabs[0] = malloc((size_t)t->dyn_cap * sizeof(*t->regions));
        t->dcache = calloc(p, sizeof(*t->dcache));
        if (!t->regions || !t->tabs[0] || !t->dcache || narmat_test_fail_alloc(2))
            rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "dynamic window tables");
        else if ((mrc0 = MPI_Win_attach(t->data, t->tabs[0],
                                        (MPI_Aint)t->dyn_cap * (MPI_Aint)sizeof(*t->regions))))
            rc = narmau_mpi_error(mrc0);
        else
            t->ntabs = 1;
        /* Every rank holds the data window here: all free it together on failure. */
        if ((rc = narmat_mpi_agree(w, rc))) goto fail;
        t->off_dyn = t->ctl_bytes;
        t->off_subs = t->off_dyn + 2 * NARMAT_MPI_LINE;
        t->off_tab = t->off_subs + pad_line(((MPI_Aint)w->size + 63) / 64 * 8);
        t->ctl_bytes = t->off_tab + NARMAT_MPI_LINE;
    }

    /* Control window. We flush after every update, so MPI need not order
     * accumulates for us. */
    NARMAT_MPI_TRY(MPI_Info_create(&cinfo));
    NARMAT_MPI_TRY(MPI_Info_set(cinfo, "accumulate_ordering", "none"));
    NARMAT_MPI_TRY(MPI_Info_set(cinfo, "same_size", "true"));
    NARMAT_MPI_TRY(MPI_Info_set(cinfo, "same_disp_unit", "true"));
    void *cb = NULL;
    if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        /* One MPI window: the ctl words (whole cache lines), then the user's memory (padded:
         * see above), with the window's info (data_info; its accumulate ordering is the
         * user's). mpi_minimum_memory_alignment, where the MPI library aligns its window to
         * it, holds for the user's memory too: data_off is a multiple of it. The size is
         * checked from every rank's, so that no rank leaves before the collective alone. */
        MPI_Aint a = align > NARMAT_MPI_LINE && align <= ((MPI_Aint)1 << 30) ? (MPI_Aint)align
                                                                             : NARMAT_MPI_LINE;
        t->data_off = (t->ctl_bytes + a - 1) / a * a;
        MPI_Aint total = 0, most = 0;
        for (int r = 0; r < w->size; r++)
            if (t->sizes[r] > most) most = t->sizes[r];
        if (most > NARMAT_MPI_MAX_BYTES - t->data_off) {
            rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "a window of %ld bytes (on some rank)", (long)most);
            goto fail;
        }
        total = t->data_off + pad_line(size);
        NARMAT_MPI_TRY(MPI_Win_allocate(total, 1, dinfo, w->comm, &cb, &t->ctl));
        t->data = t->ctl;
        w->base = (char *)cb + t->data_off;
    } else {
        NARMAT_MPI_TRY(MPI_Win_allocate(t->ctl_bytes, 1, cinfo, w->comm, &cb, &t->ctl));
    }
    t->ctlmem = cb;
    w->attr_off = t->data_off;
    NARMAT_MPI_TRY(MPI_Win_set_errhandler(t->ctl, MPI_ERRORS_RETURN));
    /* Memory models: narma reads its ctl words with loads only where MPI
     * says ctl is unified, and reports the data window's model as the
     * window's NARMA_WIN_MODEL. NARMA_TEST_SEPARATE=1 (testing hook, read
     * at every window creation) makes both separate, to exercise those paths
     * on an MPI whose windows are all unified. */
    int *model = NULL;
    const char *sep = getenv("NARMA_TEST_SEPARATE");
    const char *back = getenv("NARMA_TEST_CLOCK_BACK");
    t->clock_back = back != NULL && back[0] == '1';
    const char *hole = getenv("NARMA_TEST_JOIN_HOLE");
    t->join_hole = hole != NULL ? atoi(hole) : 0;
    int force_separate = sep != NULL && sep[0] == '1';
    NARMAT_MPI_TRY(MPI_Win_get_attr(t->ctl, MPI_WIN_MODEL, &model, &flag));
    t->unified = flag && *model == MPI_WIN_UNIFIED && !force_separate;
    model = NULL;
    NARMAT_MPI_TRY(MPI_Win_get_attr(t->data, MPI_WIN_MODEL, &model, &flag));
    w->model =
        force_separate || (flag && *model == MPI_WIN_SEPARATE) ? MPI_WIN_SEPARATE : MPI_WIN_UNIFIED;

    /* Zero the control words and ring before anyone can reach them (no epoch
     * is open yet, so local stores are allowed); the barrier below publishes. */
    memset(t->ctlmem, 0, (size_t)t->ctl_bytes);
    uint64_t *hdr = ctl_word(t, NARMAT_MPI_OFF_HDR);
    hdr[0] = NARMAT_MPI_MAGIC;
    hdr[1] = NARMAT_MPI_LAYOUT_VERSION;
    hdr[2] = NARMAT_MPI_REC_BYTES;
    hdr[3] = t->slots;
    if (t->ntabs) { /* the (empty) table of attached regions: {address, count} */
        MPI_Aint a;
        NARMAT_MPI_TRY(MPI_Get_address(t->tabs[0], &a));
        ctl_word(t, t->off_tab)[0] = (uint64_t)a;
    }

    int mrc = MPI_Win_lock_all(MPI_MODE_NOCHECK, t->data);
    if (mrc == MPI_SUCCESS && t->ctl != t->data &&
        (mrc = MPI_Win_lock_all(MPI_MODE_NOCHECK, t->ctl)) != MPI_SUCCESS)
        MPI_Win_unlock_all(t->data);
    NARMAT_MPI_TRY(mrc);
    t->locked = 1;
    NARMAT_MPI_TRY(MPI_Win_sync(t->ctl));
    NARMAT_MPI_TRY(MPI_Barrier(w->comm));

    MPI_Info_free(&cinfo);
    if (dinfo != MPI_INFO_NULL) MPI_Info_free(&dinfo);
    w->tp = t;
    w->attr_win = t->data;
    return NARMA_SUCCESS;

fail:
    if (cinfo != MPI_INFO_NULL) MPI_Info_free(&cinfo);
    if (dinfo != MPI_INFO_NULL) MPI_Info_free(&dinfo);
    narmat_mpi_release(t);
    w->tp = NULL;
    return rc;
}

static int narmat_mpi_win_free(struct narmat_win *w)
{
    struct narmat_mpi *t = tp_of(w);
    int rc = NARMA_SUCCESS, mrc; /* deferred notifications: the core flushed them */
    /* Try every step even after a failure, and report the first one. */
    if (t->ctl == t->data) t->data = MPI_WIN_NULL; /* one window (Win_allocate) */
    if ((mrc = MPI_Win_unlock_all(t->ctl)) != MPI_SUCCESS && !rc) rc = narmau_mpi_error(mrc);
    if ((mrc = MPI_Win_free(&t->ctl)) != MPI_SUCCESS && !rc) rc = narmau_mpi_error(mrc);
    /* Every rank is in Win_free (the core agreed first): no one reads our tables any more. */
    for (int i = 0; i < t->ntabs; i++)
        if ((mrc = MPI_Win_detach(t->data, t->tabs[i])) != MPI_SUCCESS && !rc)
            rc = narmau_mpi_error(mrc);
    if (t->data != MPI_WIN_NULL) {
        if ((mrc = MPI_Win_unlock_all(t->data)) != MPI_SUCCESS && !rc) rc = narmau_mpi_error(mrc);
        if ((mrc = MPI_Win_free(&t->data)) != MPI_SUCCESS && !rc) rc = narmau_mpi_error(mrc);
    }
    t->ctl = t->data = MPI_WIN_NULL;
    narmat_mpi_release(t);
    w->tp = NULL;
    w->attr_win = MPI_WIN_NULL;
    return rc;
}

/* Drive MPI's progress engine: a probe on the window's private communicator,
 * which carries no messages. Every loop of this transport that waits for another
 * process calls it, because the peer it waits for may itself be waiting for this
 * process: Open MPI's osc/rdma completes some accesses to a target (over btl/sm,
 * by active messages) only when the target's MPI progresses, and MPI_Win_flush
 * with nothing outstanding does not progress it. Three ranks hung for good
 * without it (test_threads_dynamic: one waiting here for a peer's table update,
 * that peer stuck in a flush behind accesses the first one had to serve). */
static void mpi_poke(const struct narmat_win *w)
{
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, w->comm, &flag, MPI_STATUS_IGNORE);
}

/* One step of a wait for another process: MPI's progress, then a relax or a yield. */
static void peer_wait(const struct narmat_win *w, narmau_waiter *wt)
{
    mpi_poke(w);
    narmau_wait_step_keep(wt);
}

/* Open MPI's osc/rdma can refuse an access to a dynamic window with
 * MPI_ERR_RMA_RANGE although the target's MPI_Win_attach returned before the
 * target published the region in the table narma checked the access against
 * (open-mpi/ompi#8475: the origin's view of the target's regions lags). Such a
 * refusal is retried, yielding, for up to a second; any other error, or one on
 * a window that is not dynamic, is returned at once. Returns 1 to retry. */
static int dyn_refused(const struct narmat_win *w, int mrc, double *since)
{
    const struct narmat_mpi *t = w->tp;
    int cls = MPI_ERR_OTHER;
    if (t->ntabs == 0 || MPI_Error_class(mrc, &cls) != MPI_SUCCESS || cls != MPI_ERR_RMA_RANGE)
        return 0;
    double now = MPI_Wtime();
    if (*since < 0) {
        *since = now;
        if (narmau_verbose())
            fprintf(stderr, "narma: mpi transport: MPI refused an access to an attached region "
                            "narma knows of (MPI_ERR_RMA_RANGE); retrying\n");
    }
    if (now - *since > 1.0) return 0;
    mpi_poke(w);
    sched_yield();
    return 1;
}

/* One MPI data call on window w's data window, retried while dyn_refused says so. */
#define DATA_MPI(w, call)                                                     \
    do {                                                                      \
        double since_ = -1;                                                   \
        int m_;                                                               \
        while ((m_ = (call)) != MPI_SUCCESS && dyn_refused((w), m_, &since_)) \
            ;                                                                 \
        if (m_ != MPI_SUCCESS) return narmau_mpi_error(m_);                   \
    } while (0)

/* ---- dynamic windows: attached regions ---- */

/* *r = a + b unless that overflows MPI_Aint. */
static int aint_add(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
    const MPI_Aint max = (MPI_Aint)(((uintmax_t)1 << (sizeof(MPI_Aint) * 8 - 1)) - 1);
    if ((b > 0 && a > max - b) || (b < 0 && a < -max - 1 - b)) return 1;
    *r = a + b;
    return 0;
}

/* Index of the region holding all of [a, e) (a < e), or -1. An access may also
 * run through regions attached back to back: MPI asks only that every byte it
 * touches be attached. Then the index is the region holding its first byte. */
static int region_find(const struct narmat_mpi_region *r, int n, MPI_Aint a, MPI_Aint e)
{
    int first = -1;
    for (int i = 0; i < n; i++)
        if (a >= r[i].base && a < r[i].end) {
            first = i;
            break;
        }
    for (int i = first; i >= 0;) {
        if (e <= r[i].end) return first;
        MPI_Aint next = r[i].end; /* the region that starts where this one ends */
        i = -1;
        for (int j = 0; j < n; j++)
            if (r[j].base == next && r[j].end > next) {
                i = j;
                break;
            }
    }
    return -1;
}

/* Read n words of this rank's ctl window. Unified model: MPI_Win_sync makes
 * remote updates visible to the acquire loads (which pair with the updater's
 * flush). Separate model: MPI atomics on self read the public copy. */
static int ctl_read_atomic(struct narmat_win *w, MPI_Aint off, int n, uint64_t *out)
{
    struct narmat_mpi *t = tp_of(w);
    const uint64_t none = 0;
    for (int i = 0; i < n; i++)
        NARMAU_MPI(MPI_Fetch_and_op(&none, &out[i], MPI_UINT64_T, w->rank, off + 8 * i, MPI_NO_OP,
                                    t->ctl));
    NARMAU_MPI(MPI_Win_flush(w->rank, t->ctl));
    return NARMA_SUCCESS;
}

/* Separate model: a notification record from the public copy of this process's ctl, in one
 * MPI_Get (records are written by MPI_Put, so MPI atomics would buy nothing; ring_read's check
 * refuses whatever a Get concurrent with the writer's Put returns). */
static int ctl_get_record(struct narmat_win *w, MPI_Aint off, uint64_t *out)
{
    struct narmat_mpi *t = tp_of(w);
    NARMAU_MPI(MPI_Get(out, NARMAT_MPI_REC_WORDS, MPI_UINT64_T, w->rank, off, NARMAT_MPI_REC_WORDS,
                       MPI_UINT64_T, t->ctl));
    NARMAU_MPI(MPI_Win_flush(w->rank, t->ctl));
    return NARMA_SUCCESS;
}

/* ctl_read without the MPI_Win_sync: for a caller that has just made one (the poll). */
static inline int ctl_peek(struct narmat_win *w, MPI_Aint off, int n, uint64_t *out)
{
    struct narmat_mpi *t = tp_of(w);
    if (!t->unified) return ctl_read_atomic(w, off, n, out);
    for (int i = 0; i < n; i++)
        out[i] = narmau_atomic_load_acq_u64(ctl_word(t, off + 8 * i));
    return NARMA_SUCCESS;
}

static int ctl_read(struct narmat_win *w, MPI_Aint off, int n, uint64_t *out)
{
    struct narmat_mpi *t = tp_of(w);
    if (t->unified) NARMAU_MPI(MPI_Win_sync(t->ctl));
    return ctl_peek(w, off, n, out);
}

/* Publish this rank's table under the seqlock: version odd; the regions into
 * the newest published table (attached to the data window) and {its address,
 * count} into the ctl window; version even; each step completed by a flush to
 * self. All MPI atomics, so origins' atomic reads never conflict with them in
 * either memory model. Tables are never moved while the window lives (a grown
 * table is a new one; the old stays attached), so an origin that read an old
 * address reads valid memory and then sees the version change. */
static int dyn_publish(struct narmat_win *w)
{
    struct narmat_mpi *t = tp_of(w);
    uint64_t odd = t->dyn_version + 1, even = t->dyn_version + 2;
    int n = 2 * t->nregions, mrc;
    MPI_Aint hdr[2] = {0, t->nregions};
    mrc = MPI_Get_address(t->tabs[t->ntabs - 1], &hdr[0]);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Accumulate(&odd, 1, MPI_UINT64_T, w->rank, t->off_dyn, 1, MPI_UINT64_T,
                             MPI_REPLACE, t->ctl);
    if (mrc == MPI_SUCCESS) mrc = MPI_Win_flush(w->rank, t->ctl);
    if (mrc == MPI_SUCCESS && n > 0) {
        mrc = MPI_Accumulate(t->regions, n, MPI_AINT, w->rank, hdr[0], n, MPI_AINT, MPI_REPLACE,
                             t->data);
        int cls = MPI_ERR_OTHER;
        if (mrc != MPI_SUCCESS && MPI_Error_class(mrc, &cls) == MPI_SUCCESS &&
            cls == MPI_ERR_RMA_RANGE) {
            /* Open MPI can refuse this process's own table just attached (see dyn_refused),
             * for good. The table is this process's memory: word-atomic stores, then
             * MPI_Win_sync (the unified model makes them visible to the origins' reads, which
             * the version words around this update validate). */
            MPI_Aint *dst = (MPI_Aint *)(void *)t->tabs[t->ntabs - 1];
            const MPI_Aint *src = (const MPI_Aint *)(void *)t->regions;
            for (int i = 0; i < n; i++)
                __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            mrc = MPI_Win_sync(t->data);
        }
    }
    if (mrc == MPI_SUCCESS)
        mrc =
            MPI_Accumulate(hdr, 2, MPI_AINT, w->rank, t->off_tab, 2, MPI_AINT, MPI_REPLACE, t->ctl);
    if (mrc == MPI_SUCCESS && n > 0) mrc = MPI_Win_flush(w->rank, t->data);
    if (mrc == MPI_SUCCESS) mrc = MPI_Win_flush(w->rank, t->ctl);
    /* Even again whatever happened, so no origin waits for this update forever. */
    int mrc2 = MPI_Accumulate(&even, 1, MPI_UINT64_T, w->rank, t->off_dyn, 1, MPI_UINT64_T,
                              MPI_REPLACE, t->ctl);
    if (mrc2 == MPI_SUCCESS) mrc2 = MPI_Win_flush(w->rank, t->ctl);
    t->dyn_version = even;
    if (mrc == MPI_SUCCESS) mrc = mrc2;
    return mrc == MPI_SUCCESS ? NARMA_SUCCESS : narmau_mpi_error(mrc);
}

/* Room for one more region: the table doubles, and a new published table of
 * the new capacity is attached beside the old ones. */
static int dyn_grow(struct narmat_win *w)
{
    struct narmat_mpi *t = tp_of(w);
    if (t->ntabs == NARMAT_MPI_MAX_TABLES || t->dyn_cap > INT_MAX / 2)
        return NARMAU_ERR(NARMA_ERR_ATTACH, "%d regions attached: no room for more", t->dyn_cap);
    int cap = 2 * t->dyn_cap;
    size_t bytes = (size_t)cap * sizeof(*t->regions);
    struct narmat_mpi_region *r = realloc(t->regions, bytes);
    if (r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "table of %d attached regions", cap);
    t->regions = r;
    struct narmat_mpi_region *tab = malloc(bytes);
    if (tab == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "table of %d attached regions", cap);
    int mrc = MPI_Win_attach(t->data, tab, (MPI_Aint)bytes);
    if (mrc != MPI_SUCCESS) {
        free(tab);
        return narmau_mpi_error(mrc);
    }
    t->tabs[t->ntabs++] = tab;
    t->dyn_cap = cap;
    return NARMA_SUCCESS;
}

/* After a detach: bump the inval word of every rank that ever read our table,
 * so its next access to us refetches the table (its copy may hold the region
 * that is gone). Completed before Win_detach returns, hence before any
 * synchronisation that orders the detach before a peer's access. */
static int dyn_push_inval(struct narmat_win *w)
{
    struct narmat_mpi *t = tp_of(w);
    const uint64_t one = 1;
    int nwords = (w->size + 63) / 64, pushed = 0;
    for (int k = 0; k < nwords; k++) {
        uint64_t bits = 0;
        int rc = ctl_read(w, t->off_subs + 8 * k, 1, &bits);
        if (rc) return rc;
        for (int j = 0; j < 64; j++) {
            int r = 64 * k + j;
            if (!(bits >> j & 1) || r == w->rank) continue;
            NARMAU_MPI(MPI_Accumulate(&one, 1, MPI_UINT64_T, r, t->off_dyn + NARMAT_MPI_LINE, 1,
                                      MPI_UINT64_T, MPI_SUM, t->ctl));
            pushed = 1;
        }
    }
    if (pushed) NARMAU_MPI(MPI_Win_flush_all(t->ctl));
    return NARMA_SUCCESS;
}

/* Fetch target's table into c (seqlock read; inval = our inval word, read
 * before the fetch, so a detach pushed after that read forces another fetch).
 * The first fetch also subscribes us to target's invalidations, before the
 * table is read: a detach that misses our bit updated the table earlier. */
static int dyn_refresh(struct narmat_win *w, int target, struct narmat_mpi_dyncache *c,
                       uint64_t inval)
{
    struct narmat_mpi *t = tp_of(w);
    const uint64_t none = 0, bit = UINT64_C(1) << (w->rank % 64);
    narmau_waiter wt = {0};
    for (;;) {
        uint64_t v1 = 0, v2 = 0;
        MPI_Aint hdr[2] = {0, 0};
        if (!c->subscribed)
            NARMAU_MPI(MPI_Accumulate(&bit, 1, MPI_UINT64_T, target,
                                      t->off_subs + 8 * (w->rank / 64), 1, MPI_UINT64_T, MPI_BOR,
                                      t->ctl));
        NARMAU_MPI(
            MPI_Fetch_and_op(&none, &v1, MPI_UINT64_T, target, t->off_dyn, MPI_NO_OP, t->ctl));
        NARMAU_MPI(MPI_Win_flush(target, t->ctl));
        c->subscribed = 1;
        if (v1 & 1) {
            /* The owner is between its two version writes. The wait keeps narma's lock:
             * another thread must not refresh c meanwhile. */
            peer_wait(w, &wt);
            continue;
        }
        NARMAU_MPI(MPI_Get_accumulate(NULL, 0, MPI_AINT, hdr, 2, MPI_AINT, target, t->off_tab, 2,
                                      MPI_AINT, MPI_NO_OP, t->ctl));
        NARMAU_MPI(MPI_Win_flush(target, t->ctl));
        if (hdr[1] < 0 || hdr[1] > INT_MAX / 2)
            return NARMAU_ERR(NARMA_ERR_INTERN, "rank %d publishes %ld regions", target,
                              (long)hdr[1]);
        int n = (int)hdr[1];
        /* The copy is overwritten from here on: none of it is used (cache_find) until the
         * version check below accepts it, also when a call fails on the way. */
        c->n = 0;
        c->last = 0;
        if (n > c->cap) {
            /* Doubling (n <= INT_MAX / 2): a table that grows by one region per attach is
             * copied at every access after it, and a new array each time would scatter the
             * program's own small allocations over more pages (dynamic.h, narmat_dyn_tab). */
            int cap = c->cap > n / 2 ? 2 * c->cap : n;
            free(c->r); /* refilled below: nothing of it is kept */
            c->r = malloc((size_t)cap * sizeof(*c->r));
            c->cap = 0;
            if (c->r == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "copy of %d regions", n);
            c->cap = cap;
        }
        if (n > 0) {
            /* A table the target attached just now: MPI may not know it yet (dyn_refused). */
            DATA_MPI(w, MPI_Get_accumulate(NULL, 0, MPI_AINT, c->r, 2 * n, MPI_AINT, target, hdr[0],
                                           2 * n, MPI_AINT, MPI_NO_OP, t->data));
            NARMAU_MPI(MPI_Win_flush(target, t->data));
        }
        NARMAU_MPI(
            MPI_Fetch_and_op(&none, &v2, MPI_UINT64_T, target, t->off_dyn, MPI_NO_OP, t->ctl));
        NARMAU_MPI(MPI_Win_flush(target, t->ctl));
        if (v1 == v2) {
            c->n = n;
            break;
        }
        c->n = 0; /* torn: never used */
        peer_wait(w, &wt);
    }
    c->inval = inval;
    c->last = 0;
    return NARMA_SUCCESS;
}

/* Index of the region of c holding all of [a, e), or -1; the last hit first
 * (programs tend to access one region many times in a row). */
static int cache_find(struct narmat_mpi_dyncache *c, MPI_Aint a, MPI_Aint e)
{
    if (c->last < c->n && a >= c->r[c->last].base && e <= c->r[c->last].end) return c->last;
    int i = region_find(c->r, c->n, a, e);
    if (i >= 0) c->last = i;
    return i;
}

/* Bounds of a dynamic window: [disp + lo, disp + hi) inside memory the target
 * attached (one region, or regions attached back to back). Cheap when the cached table holds it and
 * no detach was pushed since (a local read of the inval word); the table is refetched only on a
 * miss or after an invalidation. */
static int dyn_check(struct narmat_win *w, int target, MPI_Aint disp, MPI_Aint lo, MPI_Aint hi)
{
    struct narmat_mpi *t = tp_of(w);
    MPI_Aint a, e;
    if (aint_add(disp, lo, &a) || aint_add(disp, hi, &e))
        return NARMAU_ERR(NARMA_ERR_DISP, "address %ld + [%ld, %ld) overflows", (long)disp,
                          (long)lo, (long)hi);
    if (target == w->rank) {
        if (region_find(t->regions, t->nregions, a, e) >= 0) return NARMA_SUCCESS;
    } else {
        struct narmat_mpi_dyncache *c = t->dcache[target];
        if (c == NULL) {
            c = calloc(1, sizeof(*c));
            if (c == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "dynamic window cache");
            t->dcache[target] = c;
        }
        uint64_t inval = 0;
        int rc = ctl_read(w, t->off_dyn + NARMAT_MPI_LINE, 1, &inval);
        if (rc) return rc;
        if (inval == c->inval && cache_find(c, a, e) >= 0) return NARMA_SUCCESS;
        if ((rc = dyn_refresh(w, target, c, inval))) return rc;
        if (cache_find(c, a, e) >= 0) return NARMA_SUCCESS;
    }
    return NARMAU_ERR(NARMA_ERR_DISP, "bytes [%#lx, %#lx) not inside memory rank %d attached",
                      (unsigned long)a, (unsigned long)e, target);
}

/* Attached regions are tracked here: MPI implementations need not (MPICH does
 * not) report detaching memory that was never attached, nor attaching
 * overlapping regions, both erroneous in MPI; and origins check their
 * accesses against the table each rank publishes. */
static int narmat_mpi_attach(struct narmat_win *w, void *base, MPI_Aint size)
{
    struct narmat_mpi *t = tp_of(w);
    MPI_Aint b, e;
    NARMAU_MPI(MPI_Get_address(base, &b));
    if (aint_add(b, size, &e)) return NARMAU_ERR(NARMA_ERR_ATTACH, "region wraps around");
    for (int i = 0; i < t->nregions; i++) {
        const struct narmat_mpi_region *r = &t->regions[i];
        /* Same base too: detach names a region by its base, so an empty region there
         * would make it ambiguous. */
        if ((b < r->end && r->base < e) || b == r->base)
            return NARMAU_ERR(NARMA_ERR_ATTACH, "region overlaps one already attached");
    }
    int rc;
    if (t->nregions == t->dyn_cap && (rc = dyn_grow(w))) return rc;
    /* An empty region holds nothing to access: it lives in narma's table only (Open MPI
     * records no zero-byte attachment and then fails to detach it). */
    if (size > 0) NARMAU_MPI(MPI_Win_attach(t->data, base, size));
    /* Attached in MPI before any origin can see it in the table. */
    t->regions[t->nregions++] = (struct narmat_mpi_region){b, e};
    rc = dyn_publish(w);
    if (rc) {
        t->nregions--;
        if (size > 0) MPI_Win_detach(t->data, base);
    }
    return rc;
}

static int narmat_mpi_detach(struct narmat_win *w, const void *base)
{
    struct narmat_mpi *t = tp_of(w);
    MPI_Aint b;
    NARMAU_MPI(MPI_Get_address(base, &b));
    int i = 0;
    while (i < t->nregions && t->regions[i].base != b)
        i++;
    if (i == t->nregions) return NARMAU_ERR(NARMA_ERR_ATTACH, "memory was not attached");
    /* Out of the table and out of every origin's copy before MPI forgets it. */
    int empty = t->regions[i].end == b;
    t->regions[i] = t->regions[--t->nregions];
    int rc = dyn_publish(w);
    int rc2 = dyn_push_inval(w);
    int mrc = empty ? MPI_SUCCESS : MPI_Win_detach(t->data, base);
    if (rc == NARMA_SUCCESS) rc = rc2;
    if (rc == NARMA_SUCCESS && mrc != MPI_SUCCESS) rc = narmau_mpi_error(mrc);
    return rc;
}

static int narmat_mpi_check_bounds(struct narmat_win *w, int target, MPI_Aint disp, MPI_Aint lo,
                                   MPI_Aint hi)
{
    const struct narmat_mpi *t = tp_of(w);
    if (hi <= lo) return NARMA_SUCCESS;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) return dyn_check(w, target, disp, lo, hi);
    return narmat_bounds_check(target, disp, t->units[target], lo, hi, t->sizes[target]);
}

/* Only a Win_allocate_shared window's memory is shared (MPI's shared allocation); other
 * windows' peers are reached through MPI RMA alone. */
static int narmat_mpi_shared_query(struct narmat_win *w, int target, MPI_Aint *size, int *disp_unit,
                                   void **base)
{
    const struct narmat_mpi *t = tp_of(w);
    *size = t->sizes[target];
    *disp_unit = t->units[target];
    *base = NULL;
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return NARMAU_ERR(NARMA_ERR_RANK, "rank %d is reached through MPI RMA only", target);
    MPI_Aint qsize;
    int qdisp;
    NARMAU_MPI(MPI_Win_shared_query(t->data, target, &qsize, &qdisp, base));
    return NARMA_SUCCESS;
}

/* ---- data movement ---- */

/* The contract makes a blocking operation locally complete on return (the
 * origin buffer is reusable, a get's result is there); MPI only promises that
 * at the next flush, so flush locally. Request-based forms complete through
 * their MPI request instead. */
static int narmat_mpi_local_done(struct narmat_mpi *t, int target, MPI_Request *mreq)
{
    if (mreq == NULL) NARMAU_MPI(MPI_Win_flush_local(target, t->data));
    return NARMA_SUCCESS;
}

/* ---- accesses across attached regions (dynamic windows) ---- */

/* MPI asks only that every byte an access touches be attached, but an MPI
 * library may refuse an access whose span runs from one attached region into
 * another (Open MPI looks one region up for the whole span). Such an access is
 * issued as one access per region: the target's type map is walked in order
 * beside the origin's (and the result's), cut where a block ends on any side
 * or a region ends on the target, and the pieces that fall in one region
 * become hindexed types of the basic element type on every side. Accumulates
 * stay element-wise atomic (no element is cut) and ordered (same origin,
 * same target, issued in type-map order). */

struct walk { /* the bytes of (count, type), in type-map order */
    const narmau_dtype *d;
    int count, inst, blk;
    MPI_Aint done; /* bytes of the current block already walked */
};

static MPI_Aint walk_len(const struct walk *s)
{
    return s->d->contiguous ? (MPI_Aint)s->count * s->d->size : s->d->blocks[s->blk].len;
}

static MPI_Aint walk_off(const struct walk *s)
{
    if (s->d->contiguous) return s->d->true_lb + s->done;
    return (MPI_Aint)s->inst * s->d->extent + s->d->blocks[s->blk].off + s->done;
}

static void walk_adv(struct walk *s, MPI_Aint n)
{
    s->done += n;
    if (s->done < walk_len(s)) return;
    s->done = 0;
    if (s->d->contiguous)
        s->inst = s->count;
    else if (++s->blk == s->d->nblocks) {
        s->blk = 0;
        s->inst++;
    }
}

struct piece {
    int region;
    MPI_Aint t, o, r, len; /* target address, origin and result offsets, bytes */
};

/* The table of target's regions this process checks accesses against (its own,
 * or its cached copy of the target's), or NULL when it has none. */
static const struct narmat_mpi_region *regions_of(struct narmat_win *w, int target, int *n)
{
    struct narmat_mpi *t = tp_of(w);
    if (target == w->rank) {
        *n = t->nregions;
        return t->regions;
    }
    const struct narmat_mpi_dyncache *c = t->dcache[target];
    if (c == NULL) return NULL;
    *n = c->n;
    return c->r;
}

static int region_at(const struct narmat_mpi_region *r, int n, MPI_Aint a, int hint)
{
    if (hint >= 0 && hint < n && a >= r[hint].base && a < r[hint].end) return hint;
    for (int i = 0; i < n; i++)
        if (a >= r[i].base && a < r[i].end) return i;
    return -1;
}

/* Does the access need cutting? Only when its span leaves the region holding its first byte. */
static int split_needed(struct narmat_win *w, int target, MPI_Aint disp, int tcount,
                        MPI_Datatype ttype)
{
    const narmau_dtype *td;
    int n;
    if (narmau_dtype_get(ttype, &td)) return 0;
    MPI_Aint lo, hi, a, e;
    narmau_dtype_span(td, tcount, &lo, &hi);
    if (hi <= lo || aint_add(disp, lo, &a) || aint_add(disp, hi, &e)) return 0;
    const struct narmat_mpi_region *r = regions_of(w, target, &n);
    if (r == NULL) return 0;
    int i = region_at(r, n, a, -1);
    return i >= 0 && e > r[i].end;
}

enum { SPLIT_PUT, SPLIT_GET, SPLIT_ACC };

/* One side's pieces of a region as a committed hindexed type (displacements
 * relative to base). */
static int piece_type(const struct piece *p, int np, int g, int side, MPI_Aint base,
                      MPI_Datatype et, int esize, int *blens, MPI_Aint *dis, MPI_Datatype *out)
{
    int k = 0;
    for (int i = 0; i < np; i++) {
        if (p[i].region != g) continue;
        MPI_Aint x = side == 0 ? p[i].t : side == 1 ? p[i].o : p[i].r;
        blens[k] = (int)(p[i].len / esize);
        dis[k++] = x - base;
    }
    NARMAU_MPI(MPI_Type_create_hindexed(k, blens, dis, et, out));
    int rc = MPI_Type_commit(out);
    if (rc != MPI_SUCCESS) {
        MPI_Type_free(out);
        return narmau_mpi_error(rc);
    }
    return NARMA_SUCCESS;
}

/* Issue one access per region it touches, locally complete on return. */
static int split_issue(struct narmat_win *w, const struct piece *p, int np, int kind,
                       const void *oaddr, void *raddr, int has_origin, int target, MPI_Op op,
                       MPI_Datatype et, int esize)
{
    struct narmat_mpi *t = tp_of(w);
    int *blens = malloc((size_t)np * sizeof(int));
    MPI_Aint *dis = malloc((size_t)np * sizeof(MPI_Aint));
    int rc = blens && dis ? NARMA_SUCCESS : NARMAU_ERR(NARMA_ERR_NO_MEM, "split access");
    for (int i = 0; i < np && rc == NARMA_SUCCESS; i++) {
        int g = p[i].region, seen = 0;
        for (int j = 0; j < i; j++)
            seen |= p[j].region == g;
        if (seen) continue;
        MPI_Datatype tt = MPI_DATATYPE_NULL, ot = MPI_DATATYPE_NULL, rt = MPI_DATATYPE_NULL;
        rc = piece_type(p, np, g, 0, p[i].t, et, esize, blens, dis, &tt);
        if (rc == NARMA_SUCCESS && has_origin)
            rc = piece_type(p, np, g, 1, 0, et, esize, blens, dis, &ot);
        if (rc == NARMA_SUCCESS && raddr != NULL)
            rc = piece_type(p, np, g, 2, 0, et, esize, blens, dis, &rt);
        if (rc == NARMA_SUCCESS) {
            int m, oc = has_origin;
            MPI_Datatype on = has_origin ? ot : et;
            t->dirty[target] = 1;
            double since = -1;
            do {
                if (kind == SPLIT_PUT)
                    m = MPI_Put(oaddr, 1, ot, target, p[i].t, 1, tt, t->data);
                else if (kind == SPLIT_GET)
                    m = MPI_Get((void *)oaddr, 1, ot, target, p[i].t, 1, tt, t->data);
                else if (raddr == NULL)
                    m = MPI_Accumulate(oaddr, 1, ot, target, p[i].t, 1, tt, op, t->data);
                else
                    m = MPI_Get_accumulate(oaddr, oc, on, raddr, 1, rt, target, p[i].t, 1, tt, op,
                                           t->data);
            } while (m != MPI_SUCCESS && dyn_refused(w, m, &since));
            if (m != MPI_SUCCESS) rc = narmau_mpi_error(m);
        }
        if (tt != MPI_DATATYPE_NULL) MPI_Type_free(&tt);
        if (ot != MPI_DATATYPE_NULL) MPI_Type_free(&ot);
        if (rt != MPI_DATATYPE_NULL) MPI_Type_free(&rt);
    }
    free(blens);
    free(dis);
    if (rc == NARMA_SUCCESS) NARMAU_MPI(MPI_Win_flush_local(target, t->data));
    return rc;
}

/* A dynamic window's access that crosses regions, cut per region (*done = 1),
 * or left to the caller (*done = 0) when it stays in one region or cannot be
 * cut (an element across a region boundary, a mixed or unflattened type: MPI
 * then judges it whole). For GET, oaddr is the buffer the data lands in and
 * raddr is NULL. */
static __attribute__((noinline)) int
split_dynamic(struct narmat_win *w, int kind, const void *oaddr, int ocount, MPI_Datatype otype,
              void *raddr, int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
              MPI_Datatype ttype, MPI_Op op, int *done)
{
    if (!split_needed(w, target, disp, tcount, ttype)) return NARMA_SUCCESS;
    const narmau_dtype *td, *od = NULL, *rd = NULL;
    int has_origin = kind != SPLIT_ACC || op != MPI_NO_OP;
    void *res = raddr;
    if (kind == SPLIT_ACC && raddr == NULL) has_origin = 1; /* Accumulate has no MPI_NO_OP */
    if (narmau_dtype_get(ttype, &td) || td->nblocks < 0 || td->basic == MPI_DATATYPE_NULL ||
        (has_origin && (narmau_dtype_get(otype, &od) || od->nblocks < 0)) ||
        (res != NULL && (narmau_dtype_get(rtype, &rd) || rd->nblocks < 0)))
        return NARMA_SUCCESS;
    MPI_Datatype et = td->basic;
    MPI_Aint elb, eext;
    NARMAU_MPI(MPI_Type_get_extent(et, &elb, &eext));
    const MPI_Aint esize = td->basic_size;
    /* Padded pairs (MPI_DOUBLE_INT) stride by their extent: one element per piece. */
    const MPI_Aint cap = eext == esize ? (MPI_Aint)INT_MAX / esize * esize : esize;
    int n = 0;
    const struct narmat_mpi_region *reg = regions_of(w, target, &n);
    if (reg == NULL) return NARMA_SUCCESS;

    struct walk ws[3] = {{td, tcount, 0, 0, 0}, {od, ocount, 0, 0, 0}, {rd, rcount, 0, 0, 0}};
    struct piece *p = NULL;
    int np = 0, cap_p = 0, g = -1, rc = NARMA_SUCCESS;
    for (MPI_Aint left = (MPI_Aint)tcount * td->size; left > 0 && rc == NARMA_SUCCESS;) {
        MPI_Aint a = disp + walk_off(&ws[0]), len = walk_len(&ws[0]) - ws[0].done;
        if ((g = region_at(reg, n, a, g)) < 0) {
            rc = NARMAU_ERR(NARMA_ERR_DISP, "address %#lx of rank %d is not attached",
                            (unsigned long)a, target);
            break;
        }
        if (reg[g].end - a < len) len = reg[g].end - a;
        if (has_origin && walk_len(&ws[1]) - ws[1].done < len) len = walk_len(&ws[1]) - ws[1].done;
        if (res && walk_len(&ws[2]) - ws[2].done < len) len = walk_len(&ws[2]) - ws[2].done;
        if (len > cap) len = cap;
        if (len % esize) break; /* an element cut by a region's end */
        struct piece q = {g, a, has_origin ? walk_off(&ws[1]) : 0, res ? walk_off(&ws[2]) : 0, len};
        struct piece *last = np ? &p[np - 1] : NULL;
        if (last && last->region == g && last->t + last->len == q.t &&
            (!has_origin || last->o + last->len == q.o) && (!res || last->r + last->len == q.r) &&
            last->len + len <= cap)
            last->len += len;
        else {
            if (np == cap_p) {
                int nc = cap_p ? 2 * cap_p : 16;
                struct piece *np_ = realloc(p, (size_t)nc * sizeof(*p));
                if (np_ == NULL) {
                    rc = NARMAU_ERR(NARMA_ERR_NO_MEM, "split access");
                    break;
                }
                p = np_;
                cap_p = nc;
            }
            p[np++] = q;
        }
        for (int s = 0; s < 3; s++)
            if (s == 0 || (s == 1 && has_origin) || (s == 2 && res)) walk_adv(&ws[s], len);
        left -= len;
        if (left == 0) *done = 1;
    }
    if (rc == NARMA_SUCCESS && *done)
        rc = split_issue(w, p, np, kind, oaddr, res, has_origin, target, op, et, (int)esize);
    free(p);
    return rc;
}

/* Only dynamic windows are cut: the other flavours pay one branch here, not a call of 14
 * arguments (about 20 instructions per data access on this transport). Sets *done, which
 * split_dynamic only ever sets to 1: call it through here. */
static inline int split_access(struct narmat_win *w, int kind, const void *oaddr, int ocount,
                               MPI_Datatype otype, void *raddr, int rcount, MPI_Datatype rtype,
                               int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                               int *done)
{
    *done = 0;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return NARMA_SUCCESS;
    return split_dynamic(w, kind, oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount,
                         ttype, op, done);
}

/* The data part of a put, get or accumulate: one MPI call, or one per attached
 * region (split_access, locally complete on return). Locally complete on
 * return too when `complete`; the notified forms leave completion to their
 * flush. */
static int data_put(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                    int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq,
                    int complete)
{
    struct narmat_mpi *t = tp_of(w);
    disp = mpi_disp(w, t, target, disp);
    int done, rc = split_access(w, SPLIT_PUT, oaddr, ocount, otype, NULL, 0, MPI_DATATYPE_NULL,
                                target, disp, tcount, ttype, MPI_OP_NULL, &done);
    if (rc || done) return rc;
    t->dirty[target] = 1;
    if (mreq)
        DATA_MPI(w, MPI_Rput(oaddr, ocount, otype, target, disp, tcount, ttype, t->data, mreq));
    else
        DATA_MPI(w, MPI_Put(oaddr, ocount, otype, target, disp, tcount, ttype, t->data));
    return complete ? narmat_mpi_local_done(t, target, mreq) : NARMA_SUCCESS;
}

static int data_get(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype, int target,
                    MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq, int complete)
{
    struct narmat_mpi *t = tp_of(w);
    disp = mpi_disp(w, t, target, disp);
    int done, rc = split_access(w, SPLIT_GET, oaddr, ocount, otype, NULL, 0, MPI_DATATYPE_NULL,
                                target, disp, tcount, ttype, MPI_OP_NULL, &done);
    if (rc || done) return rc;
    t->dirty[target] = 1;
    if (mreq)
        DATA_MPI(w, MPI_Rget(oaddr, ocount, otype, target, disp, tcount, ttype, t->data, mreq));
    else
        DATA_MPI(w, MPI_Get(oaddr, ocount, otype, target, disp, tcount, ttype, t->data));
    return complete ? narmat_mpi_local_done(t, target, mreq) : NARMA_SUCCESS;
}

static int data_acc(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                    void *raddr, int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                    int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Request *mreq, int complete)
{
    struct narmat_mpi *t = tp_of(w);
    disp = mpi_disp(w, t, target, disp);
    int done, rc = split_access(w, SPLIT_ACC, oaddr, ocount, otype, raddr, rcount, rtype, target,
                                disp, tcount, ttype, op, &done);
    if (rc || done) return rc;
    t->dirty[target] = 1;
    if (raddr == NULL && mreq)
        DATA_MPI(w, MPI_Raccumulate(oaddr, ocount, otype, target, disp, tcount, ttype, op, t->data,
                                    mreq));
    else if (raddr == NULL)
        DATA_MPI(w, MPI_Accumulate(oaddr, ocount, otype, target, disp, tcount, ttype, op, t->data));
    else if (mreq)
        DATA_MPI(w, MPI_Rget_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, target, disp,
                                        tcount, ttype, op, t->data, mreq));
    else
        DATA_MPI(w, MPI_Get_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, target, disp,
                                       tcount, ttype, op, t->data));
    return complete ? narmat_mpi_local_done(t, target, mreq) : NARMA_SUCCESS;
}

static int narmat_mpi_put(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                          MPI_Request *mreq)
{
    return data_put(w, oaddr, ocount, otype, target, disp, tcount, ttype, mreq, 1);
}

static int narmat_mpi_get(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                          MPI_Request *mreq)
{
    return data_get(w, oaddr, ocount, otype, target, disp, tcount, ttype, mreq, 1);
}

static int narmat_mpi_acc(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          void *raddr, int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                          int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Request *mreq)
{
    return data_acc(w, oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount, ttype, op,
                    mreq, 1);
}

static int narmat_mpi_cas(struct narmat_win *w, const void *oaddr, const void *caddr, void *raddr,
                          MPI_Datatype type, int target, MPI_Aint disp)
{
    struct narmat_mpi *t = tp_of(w);
    disp = mpi_disp(w, t, target, disp);
    t->dirty[target] = 1;
    DATA_MPI(w, MPI_Compare_and_swap(oaddr, caddr, raddr, type, target, disp, t->data));
    return narmat_mpi_local_done(t, target, NULL);
}

/* Failures of deferred records that progress wrote, kept per target for the program's next
 * flush of that target (pend_err_take with target -1: every target's, the first returned). */
static void pend_err_set(struct narmat_mpi *t, int target, int rc)
{
    if (rc == NARMA_SUCCESS || t->pend_errs[target] != NARMA_SUCCESS) return;
    t->pend_errs[target] = rc;
    t->npend_errs++;
}

static int pend_err_take(struct narmat_mpi *t, int target, int size)
{
    int rc = NARMA_SUCCESS;
    const int from = target < 0 ? 0 : target, to = target < 0 ? size : target + 1;
    for (int i = from; t->npend_errs > 0 && i < to; i++) {
        if (t->pend_errs[i] == NARMA_SUCCESS) continue;
        if (rc == NARMA_SUCCESS) rc = t->pend_errs[i];
        t->pend_errs[i] = NARMA_SUCCESS;
        t->npend_errs--;
    }
    return rc;
}

/* Every data access marks its target dirty and control updates are flushed
 * when issued, so a target that is not dirty has nothing to complete. */
static int narmat_mpi_flush(struct narmat_win *w, int target)
{
    struct narmat_mpi *t = tp_of(w);
    /* A failure of records progress wrote to this target (their data access failed; all
     * targets' for flush_all) is reported by this flush, which still does all its work. */
    int rc = pend_err_take(t, target, w->size);
    if (target >= 0) { /* the data, then deferred notified accesses' records */
        int rc2 = narmat_mpi_send(w, target);
        return rc ? rc : rc2;
    }
    int rc2 = t->npend > 0 ? narmat_mpi_send_pending(w, 0) : NARMA_SUCCESS;
    if (rc2 && !rc) rc = rc2;
    int mrc = MPI_Win_flush_all(t->data);
    memset(t->dirty, 0, (size_t)w->size); /* a failure is reported once (flush_dirty) */
    if (mrc != MPI_SUCCESS && !rc) rc = narmau_mpi_error(mrc);
    return rc;
}

/* Flush the data window to target only if something was issued to it. A failed flush is
 * reported once: the control update that follows (the release of an unlock, a PSCW done count)
 * must not fail again on it, or the peers would wait for that update for good. */
static int narmat_mpi_flush_dirty(struct narmat_mpi *t, int target)
{
    if (!t->dirty[target]) return NARMA_SUCCESS;
    t->dirty[target] = 0;
    NARMAU_MPI(MPI_Win_flush(target, t->data));
    return NARMA_SUCCESS;
}

static int narmat_mpi_flush_local(struct narmat_win *w, int target)
{
    struct narmat_mpi *t = tp_of(w);
    if (target < 0)
        NARMAU_MPI(MPI_Win_flush_local_all(t->data));
    else
        NARMAU_MPI(MPI_Win_flush_local(target, t->data));
    return NARMA_SUCCESS;
}

static int narmat_mpi_sync(struct narmat_win *w)
{
    struct narmat_mpi *t = tp_of(w);
    NARMAU_MPI(MPI_Win_sync(t->data));
    NARMAU_MPI(MPI_Win_sync(t->ctl));
    return NARMA_SUCCESS;
}

/* ---- notified accesses ---- */

/* Bytes of target data a notified access touches (the notification's size). */
static int narmat_mpi_bytes(int count, MPI_Datatype type, int64_t *bytes)
{
    const narmau_dtype *d; /* cached (the core checked it): no call into MPI */
    int rc = narmau_dtype_get(type, &d);
    if (rc == NARMA_SUCCESS) *bytes = (int64_t)count * (int64_t)d->size;
    return rc;
}

/* Testing hook: NARMA_TEST_NOTIFY_FAIL=n makes the n-th notified access of
 * this process fail with MPI_ERR_OTHER right after it claimed its ring slot
 * (as if its data access had failed at the flush). */
static int narmat_mpi_fault_now(void)
{
    static long countdown = -1;
    if (countdown < 0) {
        const char *v = getenv("NARMA_TEST_NOTIFY_FAIL");
        countdown = v != NULL ? strtol(v, NULL, 10) : 0;
        if (countdown < 0) countdown = 0;
    }
    return countdown > 0 && --countdown == 0;
}

/* Byte offset of slot `pos` of origin's sub-ring in a target's ctl window. */
static inline MPI_Aint ring_slot(const struct narmat_mpi *t, int origin, uint64_t pos)
{
    return t->off_ring +
           ((MPI_Aint)origin * (MPI_Aint)t->slots + (MPI_Aint)(pos & (t->slots - 1))) *
               NARMAT_MPI_REC_BYTES;
}

/* The time records carry (see "Arrival order" at the top of the file): CLOCK_MONOTONIC when the
 * window's ranks all run on one host, else CLOCK_REALTIME, the clock NTP or PTP keeps in step
 * across nodes (CLOCK_MONOTONIC counts from each node's boot: two nodes' values say nothing
 * about each other); never below the last value this window sent, so that a step of the clock
 * backwards cannot reorder one origin's records (the reader sorts by time first). Test hook
 * NARMA_TEST_CLOCK_BACK=1 (read at window creation): the clock reads 1 ms earlier at every
 * record, as if it kept stepping back. */
static uint64_t rec_time(struct narmat_mpi *t)
{
    struct timespec now;
    clock_gettime(t->clock, &now);
    uint64_t ts = (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
    if (t->clock_back) {
        const uint64_t back = UINT64_C(1000000) * ++t->clock_steps;
        ts = ts > back ? ts - back : 0;
    }
    if (ts < t->last_ts) ts = t->last_ts;
    t->last_ts = ts;
    return ts;
}

/* Step 3 of the ring protocol (see the top of the file): complete the data issued to target
 * (the release every flush and control update needs), then write the records not written yet
 * (one Put per contiguous run of slots: at most two) and complete them. If the data
 * flush failed, the records go out void: their positions are taken and the reader must be
 * able to move past them. */
static int narmat_mpi_send(struct narmat_win *w, int target)
{
    struct narmat_mpi *t = tp_of(w);
    int rc = narmat_mpi_flush_dirty(t, target);
    uint64_t from = t->sent[target], to = t->pos[target];
    if (from == to) return rc;
    struct narmat_mpi_rec *out = t->out[target];
    /* The time of every record: now, after its data completed (see "Arrival order"). */
    uint64_t ts = rec_time(t);
    for (uint64_t p = from; p != to; p++) {
        uint64_t *r = out[p & (t->slots - 1)].w;
        r[4] = ts;
        if (rc) r[2] &= ~(UINT64_C(3) << 30); /* void (kind 0): keep seq, src, tag and size */
        r[NARMAT_MPI_REC_CHECK] = narmat_mpi_rec_check(r);
    }
    t->sent[target] = to;
    while (from != to) {
        uint64_t a = from & (t->slots - 1), n = to - from;
        if (n > t->slots - a) n = t->slots - a;
        int cnt = (int)n * NARMAT_MPI_REC_WORDS;
        NARMAU_MPI(MPI_Put(out[a].w, cnt, MPI_UINT64_T, target, ring_slot(t, w->rank, from), cnt,
                           MPI_UINT64_T, t->ctl));
        from += n;
    }
    NARMAU_MPI(MPI_Win_flush(target, t->ctl));
    return rc;
}

/* Deferred records: write those of every target that has some (flush_all, poll, Win_free).
 * Every target is tried. Returns the first failure, or with keep (progress: nobody to tell
 * now) keeps each target's for its next flush. */
static int narmat_mpi_send_pending(struct narmat_win *w, int keep)
{
    struct narmat_mpi *t = tp_of(w);
    int rc = NARMA_SUCCESS;
    while (t->npend > 0) {
        int target = t->pend[--t->npend];
        t->queued[target] = 0;
        int rc2 = narmat_mpi_send(w, target);
        if (keep)
            pend_err_set(t, target, rc2);
        else if (rc == NARMA_SUCCESS)
            rc = rc2;
    }
    return rc;
}

/* An entry of a target's list of origins (see "Origins that joined"): o + 1 and its complement,
 * so that zeros or a torn write never decode; -1 for an invalid entry or rank. */
static uint64_t join_entry(int o)
{
    const uint32_t v = (uint32_t)o + 1;
    return (uint64_t)v << 32 | (uint32_t)~v;
}

static int join_origin(uint64_t e, int size)
{
    const uint32_t v = (uint32_t)(e >> 32);
    if ((uint32_t)e != (uint32_t)~v || v == 0 || v > (uint32_t)size) return -1;
    return (int)(v - 1);
}

/* Take a place in target's list of origins, once per window and target, before the first
 * record (step 1): a round trip for the place, then the entry, completed with that record. */
static int narmat_mpi_join(struct narmat_win *w, int target)
{
    struct narmat_mpi *t = tp_of(w);
    /* The operands live in t: a Put's origin buffer must stay until the flush that completes
     * it, which for the entry comes with the first record, after this function returned. */
    t->join_one = 1;
    t->join_entry = join_entry(w->rank);
    uint64_t place = 0;
    for (;;) {
        NARMAU_MPI(MPI_Fetch_and_op(&t->join_one, &t->join_place, MPI_UINT64_T, target,
                                    t->off_joined, MPI_SUM, t->ctl));
        NARMAU_MPI(MPI_Win_flush(target, t->ctl));
        place = t->join_place;
        if (place >= 2 * (uint64_t)w->size) /* only after size joins failed past their place */
            return NARMAU_ERR(NARMA_ERR_INTERN, "no place left in rank %d's list of origins",
                              target);
        if (t->join_hole <= 0) break;
        t->join_hole--; /* NARMA_TEST_JOIN_HOLE: as if a join had failed after the place */
    }
    NARMAU_MPI(MPI_Put(&t->join_entry, 1, MPI_UINT64_T, target,
                       t->off_joined + NARMAT_MPI_LINE + (MPI_Aint)place * 8, 1, MPI_UINT64_T,
                       t->ctl));
    t->joined[target] = 1;
    return NARMA_SUCCESS;
}

/* The records of my sub-ring at target, made at the first notified access toward it (or
 * before, by notify_prep: a persistent access's init). */
static int narmat_mpi_notify_prep(struct narmat_win *w, int target)
{
    struct narmat_mpi *t = tp_of(w);
    if (t->out[target] == NULL) {
        t->out[target] = calloc(t->slots, sizeof(struct narmat_mpi_rec));
        if (t->out[target] == NULL)
            return NARMAU_ERR(NARMA_ERR_NO_MEM, "notification records to rank %d", target);
    }
    return NARMA_SUCCESS;
}

/* Step 1: is there a free slot in my sub-ring at target? The credit word is local memory
 * (the target writes it), so this costs no network operation; NARMAT_AGAIN (nothing issued)
 * when the sub-ring is full. The first time, also join target's list of origins. */
static int narmat_mpi_reserve(struct narmat_win *w, int target)
{
    struct narmat_mpi *t = tp_of(w);
    int rc;
    if (__builtin_expect(t->out[target] == NULL, 0) && (rc = narmat_mpi_notify_prep(w, target)))
        return rc;
    if (!t->joined[target] && (rc = narmat_mpi_join(w, target))) return rc;
    if (t->pos[target] - t->hd[target] < t->slots) return NARMA_SUCCESS;
    /* Full: records still waiting here cannot be consumed, so no credit could come back. */
    if ((rc = narmat_mpi_send(w, target))) return rc;
    uint64_t hd = 0;
    if ((rc = ctl_read(w, t->off_credit + (MPI_Aint)target * 8, 1, &hd))) return rc;
    if (hd > t->hd[target]) t->hd[target] = hd; /* only grows: an old value only delays */
    return t->pos[target] - t->hd[target] < t->slots ? NARMA_SUCCESS : NARMAT_AGAIN;
}

/* Step 2: the data access (if any) was issued on the data window to target (data_rc is its
 * outcome) and step 1 found a free slot: take it, fill its record, and write it (step 3). */
static int narmat_mpi_enqueue(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                              int data_rc)
{
    struct narmat_mpi *t = tp_of(w);
    uint64_t pos = t->pos[target]++;
    /* From here on position pos is taken: the reader stops at it until it is filled, so a
     * failed access still writes its record, marked void (the reader consumes it without
     * delivering), and returns the failure. */
    int rc = data_rc;
    if (rc == NARMA_SUCCESS && narmat_mpi_fault_now()) rc = narmau_mpi_error(MPI_ERR_OTHER);
    if (rc) kind = NARMAT_MPI_NOTE_VOID;
    uint64_t *r = t->out[target][pos & (t->slots - 1)].w;
    r[0] = pos + 1;
    /* A negative tag (-1 - idx: a counter-indexed notification) travels as idx with bit 31
     * of the src word set (ranks are below 2^31). */
    uint32_t ctr = tag < 0 ? UINT32_C(1) << 31 : 0, tg = (uint32_t)(tag < 0 ? -1 - tag : tag);
    r[1] = (uint32_t)w->rank | ctr;
    r[2] = ((uint64_t)(uint32_t)kind << 30) | (tg & NARMA_TAG_UB);
    r[3] = (uint64_t)bytes;
    r[5] = r[6] = 0;          /* r[4], the time, and the check word: when the record is sent */
    if (w->notify_deferred) { /* written by the next flush, control update or poll */
        if (!t->queued[target]) {
            t->queued[target] = 1;
            t->pend[t->npend++] = target;
        }
        return rc;
    }
    int rc2 = narmat_mpi_send(w, target);
    return rc ? rc : rc2;
}

static int narmat_mpi_put_notify(struct narmat_win *w, const void *oaddr, int ocount,
                                 MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                                 MPI_Datatype ttype, int tag)
{
    int64_t bytes = 0;
    int rc = narmat_mpi_bytes(tcount, ttype, &bytes);
    if (rc == NARMA_SUCCESS) rc = narmat_mpi_reserve(w, target);
    if (rc) return rc;
    if (bytes > 0) rc = data_put(w, oaddr, ocount, otype, target, disp, tcount, ttype, NULL, 0);
    return narmat_mpi_enqueue(w, target, NARMAT_NOTE_PUT, tag, bytes, rc);
}

static int narmat_mpi_get_notify(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype,
                                 int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    int64_t bytes = 0;
    int rc = narmat_mpi_bytes(tcount, ttype, &bytes);
    if (rc == NARMA_SUCCESS) rc = narmat_mpi_reserve(w, target);
    if (rc) return rc;
    if (bytes > 0) rc = data_get(w, oaddr, ocount, otype, target, disp, tcount, ttype, NULL, 0);
    return narmat_mpi_enqueue(w, target, NARMAT_NOTE_GET, tag, bytes, rc);
}

static int narmat_mpi_acc_notify(struct narmat_win *w, const void *oaddr, int ocount,
                                 MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                                 MPI_Datatype ttype, MPI_Op op, int tag)
{
    int64_t bytes = 0;
    int rc = narmat_mpi_bytes(tcount, ttype, &bytes);
    if (rc == NARMA_SUCCESS) rc = narmat_mpi_reserve(w, target);
    if (rc) return rc;
    if (bytes > 0)
        rc = data_acc(w, oaddr, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, target, disp, tcount,
                      ttype, op, NULL, 0);
    return narmat_mpi_enqueue(w, target, NARMAT_NOTE_ACC, tag, bytes, rc);
}

/* A notification whose data move() moves (the fetching atomics' notified forms, through this
 * transport's own acc and cas): step 1 before anything is applied (NARMAT_AGAIN with nothing
 * done), so the core's retry never applies an atomic twice; step 3 completes the data before
 * the record, as for the other notified accesses. */
static int narmat_mpi_note(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                           int (*move)(void *move_arg), void *move_arg)
{
    struct narmat_mpi *t = tp_of(w);
    int rc = narmat_mpi_reserve(w, target);
    if (rc) return rc;
    /* move's flush must report its own access's outcome only: a failure of deferred records
     * to this target written earlier by progress stays for the program's next flush (else this
     * atomic, applied, would go out void and be reported failed). Other targets' stay anyway:
     * failures are kept per target (a hybrid window's fetching atomic to a node peer flushes
     * this transport to that peer too). */
    const int earlier = pend_err_take(t, target, w->size);
    const int mrc = move(move_arg);
    pend_err_set(t, target, earlier);
    return narmat_mpi_enqueue(w, target, kind, tag, bytes, mrc);
}

/* Read the record at slot pos of origin o's sub-ring into v; 1 if it is there and whole. */
static int ring_read(struct narmat_win *w, int o, uint64_t pos, uint64_t v[NARMAT_MPI_REC_WORDS])
{
    struct narmat_mpi *t = tp_of(w);
    MPI_Aint off = ring_slot(t, o, pos);
    uint64_t seq = pos + 1;
    if (t->unified) {
        /* Acquire: observe the record MPI wrote; pairs with the writer's Put completed by its
         * flush. The Put may still be landing: any mix of its bytes with the slot's old ones
         * fails the check below. */
        const uint64_t *r = (const uint64_t *)(const void *)(t->ctlmem + off);
        v[0] = narmau_atomic_load_acq_u64(&r[0]);
        if (v[0] != seq) return 0;
        for (int i = 1; i < NARMAT_MPI_REC_WORDS; i++)
            v[i] = narmau_atomic_load_acq_u64(&r[i]);
    } else if (ctl_get_record(w, off, v) != NARMA_SUCCESS || v[0] != seq) {
        return 0; /* separate model: read the public copy */
    }
    if (!narmat_mpi_rec_whole(v, seq)) return 0;       /* the rest arrives shortly: next poll */
    return (int32_t)((uint32_t)v[1] & INT32_MAX) == o; /* only o writes its sub-ring */
}

/* Return credit to origin o: write how far its sub-ring was consumed into o's credit word
 * for this rank (an MPI atomic: o reads it with atomics or after Win_sync). The records were
 * copied out before this is issued. */
static void credit_return(struct narmat_win *w, int o)
{
    struct narmat_mpi *t = tp_of(w);
    uint64_t hd = t->head[o];
    if (MPI_Accumulate(&hd, 1, MPI_UINT64_T, o, t->off_credit + (MPI_Aint)w->rank * 8, 1,
                       MPI_UINT64_T, MPI_REPLACE, t->ctl) == MPI_SUCCESS &&
        MPI_Win_flush(o, t->ctl) == MPI_SUCCESS)
        t->published[o] = hd;
}

/* Read place i of this rank's list of origins: the origin, or -1 while nothing valid is
 * there. */
static int joined_at(struct narmat_win *w, uint64_t i)
{
    const struct narmat_mpi *t = tp_of(w);
    uint64_t e = 0;
    if (ctl_peek(w, t->off_joined + NARMAT_MPI_LINE + (MPI_Aint)i * 8, 1, &e)) return -1;
    return join_origin(e, w->size);
}

static int take_origin(struct narmat_mpi *t, int o)
{
    if (o < 0 || t->in_act[o]) return 0;
    t->in_act[o] = 1;
    t->act[t->nact++] = o;
    return 1;
}

/* Take the origins that joined this rank's list since the last look into act[] (in the order
 * they joined); returns how many (see "Origins that joined"). Loads after the caller's
 * MPI_Win_sync in the unified model, MPI atomics on self in the separate one. A place whose
 * entry has not landed goes into holes[] and is looked at again at each pass (one load each)
 * until it lands; the places after it are taken meanwhile. */
static int take_joined(struct narmat_win *w)
{
    struct narmat_mpi *t = tp_of(w);
    uint64_t n = 0;
    int added = 0;
    for (int h = 0; h < t->nholes;) { /* places looked at whose entry had not landed */
        const int o = joined_at(w, t->holes[h]);
        if (o < 0) {
            h++;
            continue;
        }
        added += take_origin(t, o);
        t->holes[h] = t->holes[--t->nholes];
    }
    if (ctl_peek(w, t->off_joined, 1, &n)) return added;
    if (n > 2 * (uint64_t)w->size) n = 2 * (uint64_t)w->size;
    for (; t->ntaken < n; t->ntaken++) {
        const int o = joined_at(w, t->ntaken);
        if (o >= 0) {
            added += take_origin(t, o);
            continue;
        }
        if (t->holes == NULL &&
            (t->holes = malloc(2 * (size_t)w->size * sizeof(*t->holes))) == NULL)
            break; /* no memory to remember the place: it is looked at again next time */
        t->holes[t->nholes++] = (uint32_t)t->ntaken;
    }
    return added;
}

/* Room for one more record in seen[]: it doubles when full. Every sub-ring must be read to its
 * end in both passes for the arrival order to hold and for no origin to be passed over (a cap
 * on records per poll, as until layout 5, left the sub-rings after the cut unread while the
 * first ones kept refilling). It holds at most the records the ring has room for. Without
 * memory for more, the poll delivers what it holds, and the order across origins may suffer. */
static __attribute__((noinline, cold)) int seen_grow(struct narmat_mpi *t)
{
    if (t->nseen_cap > INT_MAX / 2) return 0;
    struct narmat_mpi_seen *g = realloc(t->seen, 2 * (size_t)t->nseen_cap * sizeof(*g));
    if (g == NULL) return 0;
    t->seen = g;
    t->nseen_cap *= 2;
    return 1;
}

static inline int seen_room(struct narmat_mpi *t, int n)
{
    return n < t->nseen_cap || seen_grow(t);
}

/* The whole records of origin o's sub-ring from head + found on, appended to t->seen. */
static __attribute__((noinline)) int collect(struct narmat_win *w, int o, int n, int second,
                                             int *found)
{
    struct narmat_mpi *t = tp_of(w);
    uint64_t v[NARMAT_MPI_REC_WORDS];
    for (;;) {
        const uint64_t pos = t->head[o] + (uint64_t)found[o];
        if (!ring_read(w, o, pos, v) || !seen_room(t, n)) return n;
        struct narmat_mpi_seen *e = &t->seen[n++];
        e->ts = v[4];
        e->pos = pos;
        found[o]++;
        e->origin = o;
        e->second = second;
        e->w2 = v[2];
        e->ctr = (int)(v[1] >> 31 & 1);
        e->bytes = v[3];
    }
}

/* One pass over the sub-rings of act[from, to): append the whole records after those already
 * found (from head + found) to t->seen. Returns the new count; *last = the highest index of
 * act[] whose sub-ring had a record. */
static int poll_pass(struct narmat_win *w, int n, int from, int to, int second, int *found,
                     int *last)
{
    const struct narmat_mpi *t = tp_of(w);
    /* The common case, nothing new in a sub-ring, costs one relaxed load: its next slot's
     * sequence word (unified model); collect's ring_read then loads the whole record with
     * acquire and checks it. */
    for (int i = from; i < to; i++) {
        const int o = t->act[i];
        if (t->unified) {
            const uint64_t pos = t->head[o] + (uint64_t)found[o];
            if (narmau_atomic_load_relaxed_u64(ctl_word(t, ring_slot(t, o, pos))) != pos + 1)
                continue;
        }
        const int n0 = n;
        n = collect(w, o, n, second, found);
        if (n > n0) *last = i;
    }
    return n;
}

static int seen_cmp(const void *a, const void *b)
{
    const struct narmat_mpi_seen *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->origin != y->origin) return x->origin < y->origin ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int narmat_mpi_poll(struct narmat_win *w, narmat_note_cb cb, void *arg)
{
    struct narmat_mpi *t = tp_of(w);
    int n = 0, delivered = 0;
    /* This process as an origin: deferred records go out at the latest here, so a program
     * that waits in narma without flushing still notifies its targets. A failure is kept for
     * the program's next flush of that target, not lost. */
    if (t->npend > 0) narmat_mpi_send_pending(w, 1);
    if (++t->polls >= t->progress_every) { /* MPI_Win_sync does not progress MPI (MPICH 5) */
        t->polls = 0;
        mpi_poke(w);
    }
    /* Records from different origins are delivered in timestamp order (see "Arrival order" at
     * the top of the file): a first pass finds records, a second pass finds those whose
     * writers completed them before any record of the first pass was written. Only sub-rings
     * read before the last one that had a record can have missed such a record (the others
     * were read after it was seen), so the second pass reads those; if origins joined since
     * the first pass (their entries complete before their records), it reads every sub-ring.
     * MPI_Win_sync makes remote writes visible to the loads (unified model); the second pass
     * needs no other: it looks for records complete before one the first pass acquired. */
    int *found = t->found, last = -1;
    if (t->unified && MPI_Win_sync(t->ctl) != MPI_SUCCESS) return 0;
    take_joined(w);
    n = poll_pass(w, 0, 0, t->nact, 0, found, &last);
    if (n > 0) {
        int first = n;
        uint64_t maxts = 0;
        for (int i = 0; i < first; i++)
            if (t->seen[i].ts > maxts) maxts = t->seen[i].ts;
        if (take_joined(w) > 0)
            n = poll_pass(w, n, 0, t->nact, 1, found, &last);
        else if (last > 0)
            n = poll_pass(w, n, 0, last, 1, found, &last);
        /* One origin's records are in position order already: sort only a mix. */
        int mixed = 0;
        for (int i = 1; i < n && !mixed; i++)
            mixed = t->seen[i].origin != t->seen[0].origin;
        if (mixed) qsort(t->seen, (size_t)n, sizeof(*t->seen), seen_cmp);
        /* The writer completed its data access before the record: make it visible to this
         * process's loads (the private copy in the separate model, a memory barrier in the
         * unified one) before the notification tells the program to read it. */
        int take = MPI_Win_sync(t->data) == MPI_SUCCESS ? n : 0; /* else the next poll */
        for (int i = 0; i < take; i++) {
            const struct narmat_mpi_seen *e = &t->seen[i];
            /* Later second-pass records wait for the next poll (sorted: none come back). */
            if (e->second && e->ts > maxts) break;
            int kind = (int)(e->w2 >> 30 & 3);
            t->head[e->origin]++;
            if (kind == NARMAT_MPI_NOTE_VOID) continue; /* a failed access: nothing to deliver */
            delivered++;
            int32_t tag = (int32_t)(e->w2 & NARMA_TAG_UB);
            cb(arg, e->origin, e->ctr ? -1 - tag : tag, (int64_t)e->bytes);
        }
        for (int i = 0; i < n; i++) { /* each origin once; found[] is zero again after */
            int o = t->seen[i].origin;
            if (found[o] == 0) continue;
            found[o] = 0;
            if (t->head[o] - t->published[o] >= t->publish_every) credit_return(w, o);
        }
    }
    return delivered;
}

/* ---- control words ---- */

/* The counts (grant, done, fence) are added even when the release before them failed: the
 * peer waits for them, and the failure is this process's to report (it returns it). */
static int narmat_mpi_ctl_add(struct narmat_win *w, int target, int kind, int arg, uint64_t val)
{
    struct narmat_mpi *t = tp_of(w);
    int rc = narmat_mpi_send(w, target); /* release: data and deferred records first */
    NARMAU_MPI(MPI_Accumulate(&val, 1, MPI_UINT64_T, target, ctl_offset(t, kind, arg), 1,
                              MPI_UINT64_T, MPI_SUM, t->ctl));
    NARMAU_MPI(MPI_Win_flush(target, t->ctl));
    return rc;
}

static int narmat_mpi_ctl_cas(struct narmat_win *w, int target, int kind, int arg,
                              uint64_t expected, uint64_t desired, uint64_t *old)
{
    struct narmat_mpi *t = tp_of(w);
    int rc = narmat_mpi_send(w, target); /* release: data and deferred records first */
    if (rc) return rc;
    NARMAU_MPI(MPI_Compare_and_swap(&desired, &expected, old, MPI_UINT64_T, target,
                                    ctl_offset(t, kind, arg), t->ctl));
    NARMAU_MPI(MPI_Win_flush(target, t->ctl));
    return NARMA_SUCCESS;
}

static uint64_t narmat_mpi_ctl_load(struct narmat_win *w, int kind, int arg)
{
    struct narmat_mpi *t = tp_of(w);
    uint64_t v = 0;
    /* Acquire: pairs with the remote update (flushed after the updater's data
     * flush). The sync of the data window then makes the data the updater
     * released visible to this process's loads: its private copy in the
     * separate model, a memory barrier in the unified one. (The interface has
     * no error path here: a failed read returns 0, which only delays.) */
    if (ctl_read(w, ctl_offset(t, kind, arg), 1, &v) != NARMA_SUCCESS) return 0;
    MPI_Win_sync(t->data);
    return v;
}

const struct narmat_ops narmat_mpi_ops = {
    .size = sizeof(struct narmat_ops),
    .layout = NARMAT_MPI_LAYOUT_VERSION,
    .name = "mpi",
    .target_name = narmat_own_name,
    .note = narmat_mpi_note,
    .flush_blocks = 1,
    .win_init = narmat_mpi_win_init,
    .win_free = narmat_mpi_win_free,
    .attach = narmat_mpi_attach,
    .detach = narmat_mpi_detach,
    .check_bounds = narmat_mpi_check_bounds,
    .shared_query = narmat_mpi_shared_query,
    .put = narmat_mpi_put,
    .get = narmat_mpi_get,
    .acc = narmat_mpi_acc,
    .cas = narmat_mpi_cas,
    .flush = narmat_mpi_flush,
    .flush_local = narmat_mpi_flush_local,
    .sync = narmat_mpi_sync,
    .put_notify = narmat_mpi_put_notify,
    .get_notify = narmat_mpi_get_notify,
    .acc_notify = narmat_mpi_acc_notify,
    .rput_notify = narmat_rput_notify_now,
    .ticket_done = narmat_ticket_none,
    .pput_prep = narmat_pput_none,
    .pput_start = narmat_pput_nostart,
    .notify_prep = narmat_mpi_notify_prep,
    .poll = narmat_mpi_poll,
    .ctl_add = narmat_mpi_ctl_add,
    .ctl_cas = narmat_mpi_ctl_cas,
    .ctl_load = narmat_mpi_ctl_load,
};
