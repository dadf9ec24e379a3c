/*
 * shm: the transport for ranks that share memory. Every rank's window memory,
 * control words and notification ring live in one MPI shared-memory segment
 * (MPI_Win_allocate_shared), mapped by every process of the window, so data
 * moves by load/store and synchronisation is atomics on the owner's words;
 * nothing needs the target to call MPI or narma, except that a notification
 * is delivered (and its inline payload written) when the target polls.
 *
 * Segment of each rank (offsets, all cache-line aligned):
 *   [0]                 header: magic, layout version, slot size, slot count
 *   [LOCK]              passive-target lock word
 *   [ACCLOCK]           lock for accumulates on elements wider than 8 bytes
 *   [FENCE + 64*k]      fence-barrier round k counter, k < 64
 *   [GRANT + 64*r]      exposures rank r granted me
 *   [DONE + 64*r]       access epochs rank r completed toward me
 *   [RING]              notification ring (tail line + slots)
 *   [DATA]              the user's window memory (page aligned)
 * One word per cache line: writers from different ranks never false-share.
 */
#include "transport/transport.h"
#include "transport/shm/ring.h"
#include "util/acc_ops.h"
#include "util/dtype.h"
#include <stdlib.h>
#include <string.h>

#define SHM_MAGIC          UINT64_C(0x6e61726d6173686d) /* "narmashm" */
#define SHM_LAYOUT_VERSION 1
#define LINE               NARMAT_CACHELINE
#define PAGE               4096

struct shm_peer {
    char *seg;     /* the peer's segment in my address space */
    char *data;    /* its window memory */
    MPI_Aint size; /* its window size in bytes */
    int disp_unit;
};

struct shm_state {
    MPI_Win shwin;
    struct shm_peer *peers;
    struct narmat_ring *myring;
    uint64_t head;       /* reader's private index into my ring */
    uint64_t *head_copy; /* per target: my copy of its ring's published head */
    uint32_t mask;       /* slots - 1 */
    size_t off_fence, off_grant, off_done, off_ring, off_data;
};

struct shm_hdr {
    uint64_t magic, version, slot_size, slot_count;
};

static inline struct shm_state *st(struct narmai_win *w) { return (struct shm_state *)w->tp; }

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

static int shm_win_init(struct narmai_win *w, void *base, MPI_Aint size, MPI_Info info)
{
    struct shm_state *s = calloc(1, sizeof(*s));
    if (s == NULL) return NARMAI_ERR(NARMA_ERR_NO_MEM, "shm state");
    s->peers = calloc((size_t)w->size, sizeof(*s->peers));
    s->head_copy = calloc((size_t)w->size, sizeof(uint64_t));
    if (s->peers == NULL || s->head_copy == NULL) {
        free(s->peers);
        free(s->head_copy);
        free(s);
        return NARMAI_ERR(NARMA_ERR_NO_MEM, "shm peers");
    }
    /* Every rank must agree on the ring geometry. */
    unsigned slots = narmai_g.ring_slots;
    MPI_Allreduce(MPI_IN_PLACE, &slots, 1, MPI_UNSIGNED, MPI_MAX, w->comm);
    s->mask = slots - 1;
    size_t p = (size_t)w->size;
    s->off_fence = 3 * LINE;
    s->off_grant = s->off_fence + NARMAT_FENCE_ROUNDS * LINE;
    s->off_done = s->off_grant + p * LINE;
    s->off_ring = s->off_done + p * LINE;
    s->off_data = align_up(s->off_ring + narmat_ring_bytes(slots), PAGE);
    /* Pad to whole pages: some MPI libraries mishandle odd-sized segments. */
    MPI_Aint total = (MPI_Aint)align_up(s->off_data + (size_t)size, PAGE);

    MPI_Info sinfo;
    MPI_Info_create(&sinfo);
    MPI_Info_set(sinfo, "alloc_shared_noncontig", "true");
    char *myseg = NULL;
    int rc = MPI_Win_allocate_shared(total, 1, sinfo, w->comm, &myseg, &s->shwin);
    MPI_Info_free(&sinfo);
    if (rc != MPI_SUCCESS) {
        free(s->peers);
        free(s);
        return narmai_mpi_error(rc);
    }
    MPI_Win_set_errhandler(s->shwin, MPI_ERRORS_RETURN);
    memset(myseg, 0, s->off_data);
    struct shm_hdr *h = (struct shm_hdr *)myseg;
    h->magic = SHM_MAGIC;
    h->version = SHM_LAYOUT_VERSION;
    h->slot_size = sizeof(struct narmat_rec);
    h->slot_count = slots;
    s->myring = (struct narmat_ring *)(myseg + s->off_ring);
    narmat_ring_init(s->myring, slots);

    struct {
        MPI_Aint size;
        int disp_unit;
    } mine = {size, w->disp_unit}, *all = malloc(p * sizeof(mine));
    if (all == NULL) goto fail_nomem;
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, w->comm);
    for (int r = 0; r < w->size; r++) {
        MPI_Aint qsize;
        int qdisp;
        char *seg;
        rc = MPI_Win_shared_query(s->shwin, r, &qsize, &qdisp, &seg);
        if (rc != MPI_SUCCESS) {
            free(all);
            MPI_Win_free(&s->shwin);
            free(s->peers);
            free(s->head_copy);
            free(s);
            return narmai_mpi_error(rc);
        }
        s->peers[r].seg = seg;
        s->peers[r].data = seg + s->off_data;
        s->peers[r].size = all[r].size;
        s->peers[r].disp_unit = all[r].disp_unit;
    }
    free(all);
    w->base = size > 0 ? myseg + s->off_data : NULL;
    w->tp = s;
    w->attr_win = s->shwin;
    /* Rings and control words are initialised everywhere before anyone uses them. */
    narmau_atomic_fence_seq_cst();
    MPI_Barrier(w->comm);
    return NARMA_SUCCESS;

fail_nomem:
    MPI_Win_free(&s->shwin);
    free(s->peers);
    free(s->head_copy);
    free(s);
    return NARMAI_ERR(NARMA_ERR_NO_MEM, "shm");
}

static int shm_win_free(struct narmai_win *w)
{
    struct shm_state *s = st(w);
    /* Nobody may still write into our segment (a late notification): the
     * barrier inside MPI_Win_free orders every rank's last access before it. */
    int rc = MPI_Win_free(&s->shwin);
    free(s->peers);
    free(s->head_copy);
    free(s);
    w->tp = NULL;
    w->attr_win = MPI_WIN_NULL;
    return rc == MPI_SUCCESS ? NARMA_SUCCESS : narmai_mpi_error(rc);
}

static int shm_check_bounds(struct narmai_win *w, int target, MPI_Aint disp, MPI_Aint lo,
                            MPI_Aint hi)
{
    const struct shm_peer *p = &st(w)->peers[target];
    MPI_Aint off = disp * p->disp_unit;
    if (hi > lo && (off + lo < 0 || off + hi > p->size))
        return NARMAI_ERR(NARMA_ERR_DISP, "bytes [%ld, %ld) outside rank %d's window of %ld bytes",
                          (long)(off + lo), (long)(off + hi), target, (long)p->size);
    return NARMA_SUCCESS;
}

static inline char *taddr(struct narmai_win *w, int target, MPI_Aint disp)
{
    const struct shm_peer *p = &st(w)->peers[target];
    return p->data + disp * p->disp_unit;
}

static int shm_put(struct narmai_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                   int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq)
{
    if (mreq) *mreq = MPI_REQUEST_NULL;
    return narmau_dtype_copy(taddr(w, target, disp), tcount, ttype, oaddr, ocount, otype);
}

static int shm_get(struct narmai_win *w, void *oaddr, int ocount, MPI_Datatype otype, int target,
                   MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq)
{
    if (mreq) *mreq = MPI_REQUEST_NULL;
    return narmau_dtype_copy(oaddr, ocount, otype, taddr(w, target, disp), tcount, ttype);
}

/* Accumulate family: origin (and result) staged as arrays of the target's
 * basic element type, then applied element-wise atomically. The arrays are
 * laid out as MPI lays out count elements of that type: element i at
 * i * extent, so pair types with padding (MPI_DOUBLE_INT: 12 data bytes,
 * extent 16) need n * extent bytes, not n * size. */
static int shm_acc(struct narmai_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                   void *raddr, int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Request *mreq)
{
    if (mreq) *mreq = MPI_REQUEST_NULL;
    const narmau_dtype *td, *od = NULL, *rd = NULL;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc) return rc;
    if (td->basic == MPI_DATATYPE_NULL)
        return NARMAI_ERR(NARMA_ERR_TYPE, "accumulate target type mixes basic types");
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
            if ((otmp = malloc(bytes)) == NULL) return NARMAI_ERR(NARMA_ERR_NO_MEM, "acc");
            if ((rc = narmau_dtype_copy(otmp, (int)n, td->basic, oaddr, ocount, otype))) goto out;
            origin = otmp;
        }
    }
    if (raddr != NULL) {
        if ((rc = narmau_dtype_get(rtype, &rd))) goto out;
        if (rd->contiguous && rd->basic == td->basic &&
            (MPI_Aint)rcount * rd->size == (MPI_Aint)bytes) {
            result = (char *)raddr + rd->true_lb;
        } else if ((result = rtmp = malloc(bytes)) == NULL) {
            rc = NARMAI_ERR(NARMA_ERR_NO_MEM, "acc");
            goto out;
        }
    }
    rc = narmau_acc_apply(taddr(w, target, disp), tcount, ttype, origin, result, op,
                          acc_lock(st(w), target));
    if (rc == NARMA_SUCCESS && rtmp != NULL)
        rc = narmau_dtype_copy(raddr, rcount, rtype, rtmp, (int)n, td->basic);
out:
    free(otmp);
    free(rtmp);
    return rc;
}

static int shm_cas(struct narmai_win *w, const void *oaddr, const void *caddr, void *raddr,
                   MPI_Datatype type, int target, MPI_Aint disp)
{
    return narmau_acc_cas(taddr(w, target, disp), oaddr, caddr, raddr, type,
                          acc_lock(st(w), target));
}

/* Loads and stores are complete when they retire; a full fence makes them
 * visible before anything this process does next (flags, MPI messages). */
static int shm_flush(struct narmai_win *w, int target)
{
    narmau_atomic_fence_seq_cst();
    return NARMA_SUCCESS;
}

static int shm_sync(struct narmai_win *w)
{
    narmau_atomic_fence_seq_cst();
    return NARMA_SUCCESS;
}

/* Enqueue one record at target; waits (driving progress) while its ring is full. */
static void shm_enqueue(struct narmai_win *w, int target, int kind, int tag, uint64_t word,
                        const void *inl, int ilen)
{
    struct shm_state *s = st(w);
    struct narmat_ring *ring = (struct narmat_ring *)(s->peers[target].seg + s->off_ring);
    uint64_t pos;
    struct narmat_rec *rec;
    narmai_waiter wt = {0};
    while ((rec = narmat_ring_claim(ring, s->mask, &s->head_copy[target], &pos)) == NULL) {
        narmai_progress(); /* drain our own ring: two ranks filling each other's cannot deadlock */
        narmai_wait_step(&wt);
    }
    rec->src = w->rank;
    rec->tag = tag;
    rec->kind = (uint8_t)kind;
    rec->ilen = (uint8_t)ilen;
    rec->word = word;
    if (ilen > 0) memcpy(rec->payload, inl, (size_t)ilen);
    narmat_ring_publish(rec, pos);
}

static int shm_put_notify(struct narmai_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    const narmau_dtype *td;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc) return rc;
    MPI_Aint bytes = (MPI_Aint)tcount * td->size;
    if (bytes > 0 && bytes <= (MPI_Aint)narmai_g.inline_max && td->contiguous) {
        /* Inline transfer: the payload travels in the record; the target writes it
         * into its window when it drains the ring, before matching. */
        uint8_t buf[NARMAT_RING_INLINE];
        const narmau_dtype *od;
        if ((rc = narmau_dtype_get(otype, &od))) return rc;
        const void *src = (const char *)oaddr + od->true_lb;
        if (!od->contiguous) {
            if ((rc = narmau_dtype_copy(buf, (int)bytes, MPI_BYTE, oaddr, ocount, otype)))
                return rc;
            src = buf;
        } else if ((MPI_Aint)ocount * od->size != bytes) {
            return NARMAI_ERR(NARMA_ERR_TYPE, "origin and target sizes differ");
        }
        const struct shm_peer *p = &st(w)->peers[target];
        uint64_t off = (uint64_t)(disp * p->disp_unit + td->true_lb);
        shm_enqueue(w, target, NARMAT_NOTE_PUT | NARMAT_REC_INLINE, tag, off, src, (int)bytes);
        return NARMA_SUCCESS;
    }
    if ((rc = shm_put(w, oaddr, ocount, otype, target, disp, tcount, ttype, NULL))) return rc;
    shm_enqueue(w, target, NARMAT_NOTE_PUT, tag, (uint64_t)bytes, NULL, 0);
    return NARMA_SUCCESS;
}

static int shm_get_notify(struct narmai_win *w, void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    const narmau_dtype *td;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc) return rc;
    if ((rc = shm_get(w, oaddr, ocount, otype, target, disp, tcount, ttype, NULL))) return rc;
    /* The publish (release) orders our loads of the target's buffer before the
     * target learns it may overwrite it. */
    shm_enqueue(w, target, NARMAT_NOTE_GET, tag, (uint64_t)((MPI_Aint)tcount * td->size), NULL, 0);
    return NARMA_SUCCESS;
}

static int shm_acc_notify(struct narmai_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                          int tag)
{
    const narmau_dtype *td;
    int rc = narmau_dtype_get(ttype, &td);
    if (rc) return rc;
    rc = shm_acc(w, oaddr, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, target, disp, tcount, ttype,
                 op, NULL);
    if (rc) return rc;
    shm_enqueue(w, target, NARMAT_NOTE_ACC, tag, (uint64_t)((MPI_Aint)tcount * td->size), NULL, 0);
    return NARMA_SUCCESS;
}

static int shm_poll(struct narmai_win *w, narmat_note_cb cb)
{
    struct shm_state *s = st(w);
    const struct narmat_rec *rec;
    int n = 0;
    /* Bounded: at most one ring's worth per call so a flood cannot starve the caller. */
    while (n <= (int)s->mask && (rec = narmat_ring_peek(s->myring, s->mask, s->head)) != NULL) {
        int32_t src = rec->src, tag = rec->tag;
        int64_t bytes;
        if (rec->kind & NARMAT_REC_INLINE) {
            memcpy(s->peers[w->rank].data + rec->word, rec->payload, rec->ilen);
            bytes = rec->ilen;
        } else {
            bytes = (int64_t)rec->word;
        }
        s->head++;
        n++;
        cb(w, src, tag, bytes);
    }
    if (n > 0) narmat_ring_consumed(s->myring, s->head);
    return n;
}

static int shm_ctl_add(struct narmai_win *w, int target, int kind, int arg, uint64_t val)
{
    /* acq_rel RMW: releases this process's earlier data stores to whoever
     * acquires the word (shm_ctl_load). */
    narmau_atomic_fetch_add_u64(ctl_word(st(w), target, kind, arg), val);
    return NARMA_SUCCESS;
}

static int shm_ctl_cas(struct narmai_win *w, int target, int kind, int arg, uint64_t expected,
                       uint64_t desired, uint64_t *old)
{
    uint64_t e = expected;
    narmau_atomic_cas_u64(ctl_word(st(w), target, kind, arg), &e, desired);
    *old = e; /* on success e still holds expected */
    return NARMA_SUCCESS;
}

static uint64_t shm_ctl_load(struct narmai_win *w, int kind, int arg)
{
    /* Acquire: pairs with the peers' ctl_add/cas; their data is visible after. */
    return narmau_atomic_load_acq_u64(ctl_word(st(w), w->rank, kind, arg));
}

const struct narmat_ops narmat_shm_ops = {
    .size = sizeof(struct narmat_ops),
    .name = "shm",
    .win_init = shm_win_init,
    .win_free = shm_win_free,
    .attach = narmat_enosys_attach,
    .detach = narmat_enosys_detach,
    .check_bounds = shm_check_bounds,
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
    .poll = shm_poll,
    .ctl_add = shm_ctl_add,
    .ctl_cas = shm_ctl_cas,
    .ctl_load = shm_ctl_load,
};
