/*
 * Notification ring: a bounded many-writer, one-reader queue of 64-byte
 * records in shared memory, one per target (the paper's section IV-C).
 *
 * A record carries only the notification (source, tag, kind, bytes accessed,
 * and the target offset of the first byte as a prefetch hint): the origin
 * moves the data itself, by load/store on the target's window, before it
 * publishes the record (a pulled put, NARMAT_REC_PULL, is the exception: the
 * reader copies its data from the origin before it delivers it; shm.c). So a notified access is
 * complete at the target when the origin's call returns, in order with every later access of that
 * origin (a payload carried inside the record and written by the reader would land after them). A
 * notification costs the reader one line transfer and the writer one ownership request, as a raw
 * flag store would; a put's data lines travel as they do for a plain put.
 *
 * Protocol. Positions are 64-bit and only grow; slot = pos % N (N a power of
 * two). A slot's cache line is written only by writers:
 *   - writer: pos = tail (relaxed). Space check against its private copy of
 *     the reader's head; only when pos - head_copy >= N does it reload the
 *     shared head (acquire, pairs with the reader's release below); still
 *     full -> NULL (the caller drives progress and retries: nothing is
 *     dropped or overwritten). Then claim pos with CAS(tail, pos, pos + 1),
 *     fill the record, and publish with a release store seq = pos + 1 (pairs
 *     with the reader's acquire; publishes the record and every store the
 *     writer made before it, i.e. the data of a notified put).
 *   - reader: at its private head h, an acquire load of slot[h % N].seq;
 *     == (uint32)(h + 1) means published: copy the record out, h++. After a
 *     batch it publishes h to the shared head with a release store (its
 *     copies happen-before a writer reuses those slots).
 * seq values of one slot differ by N between laps, so a stale record never
 * looks published; 32-bit sequence words wrap safely (compared for equality
 * with the low bits of a 64-bit position). Tail and head each have their own
 * cache line, apart from the header.
 */
#ifndef NARMAT_SHM_RING_H
#define NARMAT_SHM_RING_H

#include <stdint.h>
#include <string.h>
#include "util/atomic.h"

#define NARMAT_CACHELINE    64
#define NARMAT_RING_MAGIC   UINT64_C(0x6e61726d6172696e) /* "narmarin" */
#define NARMAT_RING_VERSION 4

struct narmat_rec {
    uint32_t seq; /* slot sequence number (see protocol) */
    int32_t src;  /* origin rank in the window */
    int32_t tag;
    uint32_t kind;  /* enum narmat_note_kind, | NARMAT_REC_PULL: the reader moves the data */
    uint64_t bytes; /* bytes accessed */
    uint64_t off;   /* target byte offset of the first byte accessed (prefetch hint) */
    /* NARMAT_REC_PULL only (shm.c, "Pulled puts"): */
    uint64_t from;   /* the origin's address of the data */
    uint64_t ticket; /* which of the origin's pull words, and its generation */
    uint8_t pad[NARMAT_CACHELINE - 4 * sizeof(uint32_t) - 4 * sizeof(uint64_t)];
};
#define NARMAT_REC_PULL 0x100u
_Static_assert(sizeof(struct narmat_rec) == NARMAT_CACHELINE, "a record is one cache line");

struct narmat_ring {
    /* 1st cache line: geometry, written once at creation */
    uint64_t magic, version, slot_size, slot_count;
    uint8_t pad0[NARMAT_CACHELINE - 4 * sizeof(uint64_t)];
    /* 2nd cache line: writers' claim position */
    uint64_t tail;
    uint8_t pad1[NARMAT_CACHELINE - sizeof(uint64_t)];
    /* 3rd cache line: the reader's published head (read by writers only when full) */
    uint64_t head;
    uint8_t pad2[NARMAT_CACHELINE - sizeof(uint64_t)];
    struct narmat_rec slots[];
};
_Static_assert(sizeof(struct narmat_ring) == 3 * NARMAT_CACHELINE, "ring header is three lines");

static inline size_t narmat_ring_bytes(uint32_t nslots)
{
    return sizeof(struct narmat_ring) + (size_t)nslots * sizeof(struct narmat_rec);
}

/* Called by the owner before any writer can see the ring. */
static inline void narmat_ring_init(struct narmat_ring *r, uint32_t nslots)
{
    r->magic = NARMAT_RING_MAGIC;
    r->version = NARMAT_RING_VERSION;
    r->slot_size = sizeof(struct narmat_rec);
    r->slot_count = nslots;
    r->tail = 0;
    r->head = 0;
    for (uint32_t i = 0; i < nslots; i++)
        r->slots[i].seq = 0; /* pos i publishes i + 1 */
}

/* Claim a slot; returns it (to be filled, then published) or NULL if full.
 * head_copy is this writer's private copy of the reader's head for this ring. */
static inline struct narmat_rec *narmat_ring_claim(struct narmat_ring *r, uint32_t mask,
                                                   uint64_t *head_copy, uint64_t *pos_out)
{
    /* Relaxed: tail is only a hint; the CAS below decides. */
    uint64_t pos = narmau_atomic_load_relaxed_u64(&r->tail);
    for (;;) {
        if (pos - *head_copy > mask) {
            /* Acquire: pairs with narmat_ring_consumed; the reader is done
             * with every slot below head, so we may overwrite them. */
            *head_copy = narmau_atomic_load_acq_u64(&r->head);
            if (pos - *head_copy > mask) return NULL; /* full */
        }
        if (narmau_atomic_cas_u64(&r->tail, &pos, pos + 1)) {
            *pos_out = pos;
            return &r->slots[pos & mask];
        }
        /* CAS failure reloaded pos: another writer took it */
    }
}

static inline void narmat_ring_publish(struct narmat_rec *s, uint64_t pos)
{
    /* Release: publishes the record fields and all earlier stores of this
     * writer (the data of the access); pairs with narmat_ring_peek's acquire. */
    narmau_atomic_store_rel_u32(&s->seq, (uint32_t)(pos + 1));
}

/* The record at head if published, else NULL. */
static inline const struct narmat_rec *narmat_ring_peek(struct narmat_ring *r, uint32_t mask,
                                                        uint64_t head)
{
    struct narmat_rec *s = &r->slots[head & mask];
    /* Acquire: pairs with narmat_ring_publish; the record and the writer's
     * earlier data stores are visible after it. */
    return narmau_atomic_load_acq_u32(&s->seq) == (uint32_t)(head + 1) ? s : NULL;
}

/* The reader has copied out every record below head: writers may reuse them. */
static inline void narmat_ring_consumed(struct narmat_ring *r, uint64_t head)
{
    /* Release: our copies out of the slots happen-before a writer that
     * acquires head (narmat_ring_claim) overwrites them. */
    narmau_atomic_store_rel_u64(&r->head, head);
}
#endif
