/*
 * Notification matching (paper section IV-B): arrived notifications are
 * matched, in arrival order, to the oldest started request whose <source, tag>
 * matches (wildcards allowed); those that find no active request wait in the
 * unexpected queue (UQ) until a request is started.
 *
 * The UQ never scans: every entry sits on four FIFO lists at once - all
 * entries, its exact <src,tag> bin, its <src,*> bin and its <*,tag> bin - so
 * the oldest entry matching any of the four request shapes is the head of one
 * list, found with one hash lookup. Bins are kept once created (their number
 * is bounded by the distinct sources and tags in use).
 */
#include "core/narmai.h"
#include <stdlib.h>

enum { BIN_EXACT = 0, BIN_SRC, BIN_TAG, BIN_KINDS };

struct narmai_uq_bin {
    struct narmai_uq_bin *hnext; /* hash chain */
    int32_t kind, src, tag;
    narmau_dlist entries;
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
    q->nbuckets = q->nbins = 0;
    q->count = 0;
    q->freelist = NULL;
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
    free(q->buckets);
    narmai_uq_init(q);
}

static struct narmai_uq_bin *bin_find(struct narmai_uq *q, int32_t kind, int32_t src, int32_t tag)
{
    if (q->nbuckets == 0) return NULL;
    struct narmai_uq_bin *b = q->buckets[bin_hash(kind, src, tag) & (q->nbuckets - 1)];
    while (b != NULL && (b->kind != kind || b->src != src || b->tag != tag))
        b = b->hnext;
    return b;
}

static int bin_grow(struct narmai_uq *q)
{
    uint32_t n = q->nbuckets ? q->nbuckets * 2 : 64;
    struct narmai_uq_bin **nb = calloc(n, sizeof(*nb));
    if (nb == NULL) return NARMA_ERR_NO_MEM;
    for (uint32_t i = 0; i < q->nbuckets; i++) {
        for (struct narmai_uq_bin *b = q->buckets[i], *next; b != NULL; b = next) {
            next = b->hnext;
            uint32_t h = bin_hash(b->kind, b->src, b->tag) & (n - 1);
            b->hnext = nb[h];
            nb[h] = b;
        }
    }
    free(q->buckets);
    q->buckets = nb;
    q->nbuckets = n;
    return NARMA_SUCCESS;
}

static struct narmai_uq_bin *bin_get(struct narmai_uq *q, int32_t kind, int32_t src, int32_t tag)
{
    struct narmai_uq_bin *b = bin_find(q, kind, src, tag);
    if (b != NULL) return b;
    if (q->nbins >= q->nbuckets && bin_grow(q) != NARMA_SUCCESS) return NULL;
    b = malloc(sizeof(*b));
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

int narmai_uq_push(struct narmai_uq *q, int32_t src, int32_t tag, int64_t bytes)
{
    struct narmai_uq_bin *bins[BIN_KINDS] = {
        bin_get(q, BIN_EXACT, src, tag), bin_get(q, BIN_SRC, src, 0), bin_get(q, BIN_TAG, 0, tag)};
    if (bins[0] == NULL || bins[1] == NULL || bins[2] == NULL) return NARMA_ERR_NO_MEM;
    struct narmai_uq_entry *e = q->freelist;
    if (e != NULL)
        q->freelist = e->next_free;
    else if ((e = malloc(sizeof(*e))) == NULL)
        return NARMA_ERR_NO_MEM;
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
    for (int k = 0; k < BIN_KINDS; k++)
        narmau_dlist_remove(&e->bin[k]);
    e->next_free = q->freelist;
    q->freelist = e;
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
        narmai_err(NARMA_ERR_NO_MEM, __func__, "unexpected queue allocation failed");
        MPI_Abort(MPI_COMM_WORLD, NARMA_ERR_NO_MEM);
    }
}

/* Start: consume notifications already matched into the unexpected queue
 * (oldest first), then join the active list unless complete. Records still in
 * the ring are matched when progress drains them, which is their arrival. */
int narmai_notify_start(struct narmai_request *r)
{
    struct narmai_win *w = r->win;
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
