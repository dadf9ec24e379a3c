/*
 * Notification ring: a bounded many-writer, one-reader queue of 64-byte
 * records in shared memory, one per target (the paper's section IV-C).
 *
 * Protocol (sequence number per slot, after D. Vyukov's bounded queue):
 *   - slot i starts with seq = i; capacity N is a power of two.
 *   - writer: pos = tail (relaxed); look at slot[pos % N].seq (acquire, pairs
 *     with the reader's release below):
 *       seq == pos      slot free: claim it with CAS(tail, pos, pos + 1);
 *       seq <  pos      ring full: return NARMAI_AGAIN (the caller drives
 *                       progress and retries; nothing is dropped or overwritten);
 *       seq >  pos      another writer claimed pos: reload tail and retry.
 *     then fill the record and publish it with a release store seq = pos + 1
 *     (pairs with the reader's acquire load; publishes the record and every
 *     store the writer made before it, e.g. the data of a notified put).
 *   - reader: at its private head h, an acquire load of slot[h % N].seq;
 *     == h + 1 means published: copy the record out, then release the slot
 *     with a release store seq = h + N (the copy happens-before reuse), h++.
 * Sequence numbers are 32-bit and compared by signed difference, so they wrap
 * safely. The tail lives on its own cache line, apart from the header; the
 * reader's head is private (nobody else needs it). A record is one cache
 * line: a notification with up to NARMAT_RING_INLINE bytes of payload costs
 * the target one cache-line transfer (the paper's inline transfer).
 */
#ifndef NARMAT_SHM_RING_H
#define NARMAT_SHM_RING_H

#include <stdint.h>
#include <string.h>
#include "util/atomic.h"

#define NARMAT_CACHELINE 64
#define NARMAT_RING_MAGIC UINT64_C(0x6e61726d6172696e) /* "narmarin" */
#define NARMAT_RING_VERSION 1
#define NARMAT_RING_INLINE 40

/* Record kinds (low 7 bits); NARMAT_REC_INLINE marks a payload to apply. */
#define NARMAT_REC_INLINE 0x80

struct narmat_rec {
    uint32_t seq;     /* slot sequence number (see protocol) */
    int32_t src;      /* origin rank in the window */
    int32_t tag;
    uint8_t kind;     /* enum narmat_note_kind | NARMAT_REC_INLINE */
    uint8_t ilen;     /* inline payload bytes */
    uint16_t pad;
    uint64_t word;    /* inline: target byte offset; otherwise: bytes accessed */
    uint8_t payload[NARMAT_RING_INLINE];
};
_Static_assert(sizeof(struct narmat_rec) == NARMAT_CACHELINE, "a record is one cache line");

struct narmat_ring {
    /* 1st cache line: geometry, written once at creation */
    uint64_t magic, version, slot_size, slot_count;
    uint8_t pad0[NARMAT_CACHELINE - 4 * sizeof(uint64_t)];
    /* 2nd cache line: writers' claim index */
    uint64_t tail;
    uint8_t pad1[NARMAT_CACHELINE - sizeof(uint64_t)];
    struct narmat_rec slots[];
};
_Static_assert(sizeof(struct narmat_ring) == 2 * NARMAT_CACHELINE, "ring header is two lines");

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
    for (uint32_t i = 0; i < nslots; i++) r->slots[i].seq = i;
}

/* Claim a slot; returns it (to be filled, then published) or NULL if full. */
static inline struct narmat_rec *narmat_ring_claim(struct narmat_ring *r, uint32_t mask,
                                                   uint64_t *pos_out)
{
    /* Relaxed: tail is only a hint; the CAS below decides. */
    uint64_t pos = narmau_atomic_load_relaxed_u64(&r->tail);
    for (;;) {
        struct narmat_rec *s = &r->slots[pos & mask];
        /* Acquire: pairs with the reader's release of this slot, so our
         * writes to it cannot precede its copy-out. */
        uint32_t seq = narmau_atomic_load_acq_u32(&s->seq);
        int32_t dif = (int32_t)(seq - (uint32_t)pos);
        if (dif == 0) {
            if (narmau_atomic_cas_u64(&r->tail, &pos, pos + 1)) {
                *pos_out = pos;
                return s;
            }
            /* CAS failure reloaded pos */
        } else if (dif < 0) {
            return NULL; /* full */
        } else {
            pos = narmau_atomic_load_relaxed_u64(&r->tail);
        }
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

static inline void narmat_ring_release(struct narmat_ring *r, uint32_t mask, uint64_t head)
{
    /* Release: our copy-out of the record happens-before a writer reuses the
     * slot; pairs with the acquire in narmat_ring_claim. */
    narmau_atomic_store_rel_u32(&r->slots[head & mask].seq, (uint32_t)(head + mask + 1));
}
#endif
