/*
 * Notification matching (paper section IV-B): arrived notifications are
 * matched, in arrival order, to the oldest started request whose <source, tag>
 * matches (wildcards allowed); those that find no active request wait in the
 * unexpected queue (UQ) until a request is started.
 *
 * The UQ never scans: every entry sits on four FIFO lists at once - all
 * entries, its exact <src,tag> bin, its <src,*> bin and its <*,tag> bin - so
 * the oldest entry matching any of the four request shapes is the head of one
 * list, found with one hash lookup.
 *
 * Memory follows the live entries, not the history (a program that uses the
 * time step as the tag meets a new key at every step). A bin whose last entry
 * is popped stays in the hash, empty ("idle"), so that a key that comes back
 * soon finds it; only a counter changes. When more than
 * max(NARMAI_UQ_IDLE_BINS_MIN, 2 x live bins) bins are idle, one sweep of the
 * table frees them all and shrinks the bucket array to at most 8 buckets per
 * live bin. The sweep costs O(buckets), which is O(idle bins freed), and the
 * array grows at one bin per bucket: push and pop stay O(1) amortised. Small
 * caches of free entries and bins spare malloc the steady push/pop cycle.
 */
#include "core/narmai.h"
#include <stdlib.h>

enum { BIN_EXACT = 0, BIN_SRC, BIN_TAG, BIN_KINDS };
enum { UQ_MIN_BUCKETS = 64, UQ_SHRINK = 8 };

struct narmai_uq_bin {
    struct narmai_uq_bin *hnext; /* hash chain, or the free-bin cache */
    int32_t kind, src, tag;
    narmau_dlist entries; /* empty: the bin is idle */
};

struct narmai_uq_entry {
    narmau_dlist all;
    narmau_dlist bin[BIN_KINDS];
    int32_t src, tag;
    int64_t bytes;
    struct narmai_uq_entry *next_free;
};

static inline uint32_t bin_hash(int32_t kind, int32_t src, int32_t tag)
{
    uint64_t h = ((uint64_t)(uint32_t)src << 32 | (uint32_t)tag) * UINT64_C(0x9e3779b97f4a7c15);
    return (uint32_t)(h >> 32) ^ (uint32_t)kind * 0x85ebca6bu;
}

void narmai_uq_init(struct narmai_uq *q)
{
    narmau_dlist_init(&q->all);
    q->buckets = NULL;
    q->nbuckets = q->nbins = q->nidle = q->nfree = q->nfreebins = 0;
    q->count = 0;
    q->freelist = NULL;
    q->freebins = NULL;
}

static int bin_rehash(struct narmai_uq *q, uint32_t n, int free_idle);

int narmai_uq_reserve(struct narmai_uq *q)
{
    if (q->nbuckets == 0 && bin_rehash(q, UQ_MIN_BUCKETS, 0) != NARMA_SUCCESS)
        return NARMA_ERR_NO_MEM;
    while (q->nfree < NARMAI_UQ_RESERVE_ENTRIES) {
        struct narmai_uq_entry *e = malloc(sizeof(*e));
        if (e == NULL) return NARMA_ERR_NO_MEM;
        e->next_free = q->freelist;
        q->freelist = e;
        q->nfree++;
    }
    while (q->nfreebins < NARMAI_UQ_RESERVE_BINS) {
        struct narmai_uq_bin *b = malloc(sizeof(*b));
        if (b == NULL) return NARMA_ERR_NO_MEM;
        b->hnext = q->freebins;
        q->freebins = b;
        q->nfreebins++;
    }
    return NARMA_SUCCESS;
}

void narmai_uq_destroy(struct narmai_uq *q)
{
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &q->all)
    {
        free(narmau_container_of(pos, struct narmai_uq_entry, all));
    }
    for (struct narmai_uq_entry *e = q->freelist, *n; e != NULL; e = n) {
        n = e->next_free;
        free(e);
    }
    for (uint32_t i = 0; i < q->nbuckets; i++) {
        for (struct narmai_uq_bin *b = q->buckets[i], *n; b != NULL; b = n) {
            n = b->hnext;
            free(b);
        }
    }
    for (struct narmai_uq_bin *b = q->freebins, *n; b != NULL; b = n) {
        n = b->hnext;
        free(b);
    }
    free(q->buckets);
    narmai_uq_init(q);
}

void narmai_uq_get_stats(const struct narmai_uq *q, struct narmai_uq_stats *st)
{
    st->entries = q->count;
    st->bins = q->nbins;
    st->idle_bins = q->nidle;
    st->buckets = q->nbuckets;
    st->cached_entries = q->nfree;
    st->cached_bins = q->nfreebins;
}

static struct narmai_uq_bin *bin_find(struct narmai_uq *q, int32_t kind, int32_t src, int32_t tag)
{
    if (q->nbuckets == 0) return NULL;
    struct narmai_uq_bin *b = q->buckets[bin_hash(kind, src, tag) & (q->nbuckets - 1)];
    while (b != NULL && (b->kind != kind || b->src != src || b->tag != tag))
        b = b->hnext;
    return b;
}

/* Moves the bins into a new array of n buckets (a power of two); idle bins
 * are freed on the way when free_idle is set. */
static void bin_free(struct narmai_uq *q, struct narmai_uq_bin *b)
{
    if (q->nfreebins < NARMAI_UQ_CACHED_BINS_MAX + NARMAI_UQ_RESERVE_BINS) {
        b->hnext = q->freebins;
        q->freebins = b;
        q->nfreebins++;
    } else {
        free(b);
    }
}

static int bin_rehash(struct narmai_uq *q, uint32_t n, int free_idle)
{
    struct narmai_uq_bin **nb = calloc(n, sizeof(*nb));
    if (nb == NULL) return NARMA_ERR_NO_MEM;
    for (uint32_t i = 0; i < q->nbuckets; i++) {
        for (struct narmai_uq_bin *b = q->buckets[i], *next; b != NULL; b = next) {
            next = b->hnext;
            if (free_idle && narmau_dlist_empty(&b->entries)) {
                bin_free(q, b);
                continue;
            }
            uint32_t h = bin_hash(b->kind, b->src, b->tag) & (n - 1);
            b->hnext = nb[h];
            nb[h] = b;
        }
    }
    if (free_idle) q->nidle = 0;
    free(q->buckets);
    q->buckets = nb;
    q->nbuckets = n;
    return NARMA_SUCCESS;
}

/* Frees every idle bin and shrinks the array to at most UQ_SHRINK buckets per
 * live bin. */
static void bin_sweep(struct narmai_uq *q)
{
    uint32_t n = q->nbuckets;
    while (n > UQ_MIN_BUCKETS && q->nbins < n / UQ_SHRINK)
        n /= 2;
    if (n < q->nbuckets && bin_rehash(q, n, 1) == NARMA_SUCCESS) return;
    /* Same size (or no memory for a smaller array): unlink in place. */
    for (uint32_t i = 0; i < q->nbuckets; i++) {
        for (struct narmai_uq_bin **pp = &q->buckets[i], *b; (b = *pp) != NULL;) {
            if (narmau_dlist_empty(&b->entries)) {
                *pp = b->hnext;
                bin_free(q, b);
            } else {
                pp = &b->hnext;
            }
        }
    }
    q->nidle = 0;
}

/* The bin of this key, made if missing. */
static struct narmai_uq_bin *bin_get(struct narmai_uq *q, int32_t kind, int32_t src, int32_t tag)
{
    struct narmai_uq_bin *b = bin_find(q, kind, src, tag);
    if (b != NULL) {
        /* An idle bin is live again. Without a branch: whether the bin is
         * empty is a coin toss when few entries wait per key. */
        uint32_t was_idle = narmau_dlist_empty(&b->entries);
        q->nidle -= was_idle;
        q->nbins += was_idle;
        return b;
    }
    /* Growing the table may fail: the chains then get longer (never with no buckets at all:
     * the reserve made them). */
    if (q->nbins + q->nidle >= q->nbuckets &&
        bin_rehash(q, q->nbuckets ? q->nbuckets * 2 : UQ_MIN_BUCKETS, 0) != NARMA_SUCCESS &&
        q->nbuckets == 0)
        return NULL;
    /* Cached bins beyond the reserve first; then malloc; then the reserve. */
    if (q->nfreebins <= NARMAI_UQ_RESERVE_BINS) b = malloc(sizeof(*b));
    if (b == NULL && (b = q->freebins) != NULL) {
        q->freebins = b->hnext;
        q->nfreebins--;
    }
    if (b == NULL) return NULL;
    b->kind = kind;
    b->src = src;
    b->tag = tag;
    narmau_dlist_init(&b->entries);
    uint32_t h = bin_hash(kind, src, tag) & (q->nbuckets - 1);
    b->hnext = q->buckets[h];
    q->buckets[h] = b;
    q->nbins++;
    return b;
}

/* Bins just became empty (idle): sweep when too many are idle. */
static inline void bins_idled(struct narmai_uq *q, uint32_t n)
{
    q->nbins -= n;
    q->nidle += n;
    uint32_t max = 2 * q->nbins > NARMAI_UQ_IDLE_BINS_MIN ? 2 * q->nbins : NARMAI_UQ_IDLE_BINS_MIN;
    if (q->nidle > max) bin_sweep(q);
}

int narmai_uq_push(struct narmai_uq *q, int32_t src, int32_t tag, int64_t bytes)
{
    struct narmai_uq_bin *bins[BIN_KINDS] = {
        bin_get(q, BIN_EXACT, src, tag), bin_get(q, BIN_SRC, src, 0), bin_get(q, BIN_TAG, 0, tag)};
    struct narmai_uq_entry *e = NULL;
    if (bins[0] != NULL && bins[1] != NULL && bins[2] != NULL) {
        /* Cached entries beyond the reserve first; then malloc; then the reserve. */
        if (q->nfree <= NARMAI_UQ_RESERVE_ENTRIES) e = malloc(sizeof(*e));
        if (e == NULL && (e = q->freelist) != NULL) {
            q->freelist = e->next_free;
            q->nfree--;
        }
    }
    if (e == NULL) {
        /* Out of memory: the bins this push made live go back to idle. */
        uint32_t idled = 0;
        for (int k = 0; k < BIN_KINDS; k++)
            idled += bins[k] != NULL && narmau_dlist_empty(&bins[k]->entries);
        bins_idled(q, idled);
        return NARMA_ERR_NO_MEM;
    }
    e->src = src;
    e->tag = tag;
    e->bytes = bytes;
    narmau_dlist_push_back(&q->all, &e->all);
    for (int k = 0; k < BIN_KINDS; k++)
        narmau_dlist_push_back(&bins[k]->entries, &e->bin[k]);
    q->count++;
    return NARMA_SUCCESS;
}

int narmai_uq_pop(struct narmai_uq *q, int32_t src, int32_t tag, int32_t *out_src, int32_t *out_tag,
                  int64_t *out_bytes)
{
    if (q->count == 0) return 0;
    struct narmai_uq_entry *e;
    if (src == NARMA_ANY_SOURCE && tag == NARMA_ANY_TAG) {
        e = narmau_container_of(q->all.next, struct narmai_uq_entry, all);
    } else {
        int kind = src == NARMA_ANY_SOURCE ? BIN_TAG : tag == NARMA_ANY_TAG ? BIN_SRC : BIN_EXACT;
        struct narmai_uq_bin *b =
            bin_find(q, kind, kind == BIN_TAG ? 0 : src, kind == BIN_SRC ? 0 : tag);
        if (b == NULL || narmau_dlist_empty(&b->entries)) return 0;
        e = narmau_container_of(b->entries.next, struct narmai_uq_entry, bin[kind]);
    }
    *out_src = e->src;
    *out_tag = e->tag;
    *out_bytes = e->bytes;
    narmau_dlist_remove(&e->all);
    uint32_t idled = 0;
    for (int k = 0; k < BIN_KINDS; k++) {
        /* Bin lists are circular through the bin's head: an entry alone on
         * its list has the head on both sides. */
        idled += e->bin[k].next == e->bin[k].prev;
        narmau_dlist_remove(&e->bin[k]);
    }
    bins_idled(q, idled);
    if (q->nfree < NARMAI_UQ_CACHED_ENTRIES_MAX + NARMAI_UQ_RESERVE_ENTRIES) {
        e->next_free = q->freelist;
        q->freelist = e;
        q->nfree++;
    } else {
        free(e);
    }
    q->count--;
    return 1;
}

static inline int req_matches(const struct narmai_request *r, int32_t src, int32_t tag)
{
    return (r->src == NARMA_ANY_SOURCE || r->src == src) &&
           (r->tag == NARMA_ANY_TAG || r->tag == tag);
}

static inline void req_count_match(struct narmai_request *r, int32_t src, int32_t tag,
                                   int64_t bytes)
{
    r->st_src = src;
    r->st_tag = tag;
    r->st_bytes = bytes;
    if (++r->matched == r->expected) {
        narmau_dlist_remove(&r->link);
        r->state = NARMAI_REQ_COMPLETE;
    }
}

/* Transport callback: one notification arrived (in arrival order). */
void narmai_notify_arrived(struct narmai_win *w, int32_t src, int32_t tag, int64_t bytes)
{
    if (tag < 0) { /* counter-indexed (counter.c): counted, never matched */
        narmai_counter_arrived(w, tag);
        return;
    }
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &w->active_reqs)
    {
        struct narmai_request *r = narmau_container_of(pos, struct narmai_request, link);
        if (req_matches(r, src, tag)) {
            req_count_match(r, src, tag, bytes);
            return;
        }
    }
    if (narmai_uq_push(&w->uq, src, tag, bytes) != NARMA_SUCCESS) {
        /* Out of memory while queueing: losing a notification would corrupt the
         * program silently, so stop loudly. */
        narmau_err(NARMA_ERR_NO_MEM, __func__, "unexpected queue allocation failed");
        MPI_Abort(MPI_COMM_WORLD, NARMA_ERR_NO_MEM);
    }
}

/* Start: consume notifications already matched into the unexpected queue
 * (oldest first), then join the active list unless complete. Records still in
 * the ring are matched when progress drains them, which is their arrival. */
int narmai_notify_start(struct narmai_request *r)
{
    struct narmai_win *w = r->win;
    /* A reserve spent in a shortage is made again here, where a failure harms nothing (bins,
     * unlike entries, come back only with a sweep). */
    if (__builtin_expect(
            w->uq.nfreebins < NARMAI_UQ_RESERVE_BINS || w->uq.nfree < NARMAI_UQ_RESERVE_ENTRIES, 0))
        (void)narmai_uq_reserve(&w->uq);
    r->matched = 0;
    r->st_src = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_bytes = 0;
    int32_t s, t;
    int64_t b;
    while (r->matched < r->expected && narmai_uq_pop(&w->uq, r->src, r->tag, &s, &t, &b)) {
        r->st_src = s;
        r->st_tag = t;
        r->st_bytes = b;
        r->matched++;
    }
    if (r->matched == r->expected) {
        r->state = NARMAI_REQ_COMPLETE;
    } else {
        r->state = NARMAI_REQ_ACTIVE;
        narmau_dlist_push_back(&w->active_reqs, &r->link);
    }
    return NARMA_SUCCESS;
}

void narmai_notify_withdraw(struct narmai_request *r)
{
    if (r->state == NARMAI_REQ_ACTIVE) narmau_dlist_remove(&r->link);
    r->state = NARMAI_REQ_INACTIVE;
}
