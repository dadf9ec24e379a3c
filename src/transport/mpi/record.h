/*
 * The `mpi` transport's notification record (layout 4): one 64-byte slot of a
 * sub-ring, written by one MPI_Put and read by the target with plain loads
 * (see the top of mpi.c for the protocol).
 *
 *   w0 = pos + 1                (the sequence number; 0 in a slot never written)
 *   w1 = ctr << 31 | src        (ctr: the tag is a counter index)
 *   w2 = kind << 30 | tag       (tags are 30 bits)
 *   w3 = bytes
 *   w4 = ts                     (CLOCK_MONOTONIC ns, after the data completed)
 *   w5, w6 = 0                  (padding: one record per cache line)
 *   w7 = rec_check(w0..w6)
 *
 * MPI_Put promises no atomicity, not even per word, so a reader polling while
 * the Put lands can load any mix of the new record's bytes with the slot's old
 * contents. narmat_mpi_rec_whole accepts a slot only when w0 is the expected
 * sequence number and w7 is the hash of w0..w6; any other mix passes only if
 * 64 hash bits collide. tests/unit/test_mpi_record.c tears records every way.
 */
#ifndef NARMA_TRANSPORT_MPI_RECORD_H
#define NARMA_TRANSPORT_MPI_RECORD_H

#include <stdint.h>

#define NARMAT_MPI_REC_WORDS 8
#define NARMAT_MPI_REC_CHECK (NARMAT_MPI_REC_WORDS - 1) /* the check word */
#define NARMAT_MPI_REC_BYTES (NARMAT_MPI_REC_WORDS * 8)

struct narmat_mpi_rec {
    uint64_t w[NARMAT_MPI_REC_WORDS];
};
_Static_assert(sizeof(struct narmat_mpi_rec) == NARMAT_MPI_REC_BYTES, "records are packed");

/* The check word of a record: an NH sum (as in UMAC) of w0..w6 in pairs, each
 * word plus a key, so four independent 64x64->128-bit products, folded to 64
 * bits and finished with MurmurHash3's finaliser. No (word + key) wraps to 0
 * while sequence numbers and sizes stay below 7e18 and the clock below 230
 * years of uptime, so a change of any one word changes the 128-bit sum; the
 * fold to 64 bits is where that certainty ends (NH's 2^-64 bound assumes
 * random keys; these are fixed, and tears do not depend on them). About 20
 * cycles; the chained hash it replaced took about 75, which showed in Open
 * MPI's ping-pong.
 *
 * Compilers without 128-bit integers get a chained multiply instead: weaker
 * (a flip of bit 63 in two words cancels, though the values a record holds
 * never differ there), untested, and a different function, so every rank of
 * a job must be built the same way. */
static inline uint64_t narmat_mpi_rec_check(const uint64_t *r)
{
#if defined(__SIZEOF_INT128__)
    typedef unsigned __int128 u128;
    u128 s = (u128)(r[0] + UINT64_C(0x9e3779b97f4a7c15)) * (r[1] + UINT64_C(0xa0761d6478bd642f)) +
             (u128)(r[2] + UINT64_C(0xe7037ed1a0b428db)) * (r[3] + UINT64_C(0x8ebc6af09c88c6e3)) +
             (u128)(r[4] + UINT64_C(0x9a3a4fa2b77e3c1d)) * (r[5] + UINT64_C(0xc2b2ae3d27d4eb4f)) +
             (u128)(r[6] + UINT64_C(0x94d049bb133111eb)) * UINT64_C(0xbf58476d1ce4e5b9);
    uint64_t h = (uint64_t)s ^ ((uint64_t)(s >> 64) * UINT64_C(0xff51afd7ed558ccd));
#else
    uint64_t h = UINT64_C(0x6e61726d61726563); /* "narmarec" */
    for (int i = 0; i < NARMAT_MPI_REC_CHECK; i++)
        h = (h ^ r[i]) * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t)i;
#endif
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

/* 1 if the words v, loaded from a slot, are the whole record of sequence
 * number seq; 0 for a slot still holding an older record, zeros, or a mix. */
static inline int narmat_mpi_rec_whole(const uint64_t *v, uint64_t seq)
{
    return v[0] == seq && v[NARMAT_MPI_REC_CHECK] == narmat_mpi_rec_check(v);
}

#endif
