/*
 * The `mpi` transport's notification record (layout 5; layout 4 was the same
 * with CLOCK_MONOTONIC times between nodes too): one 64-byte slot of a
 * sub-ring, written by one MPI_Put and read by the target with plain loads
 * (see the top of mpi.c for the protocol).
 *
 *   w0 = pos + 1                (the sequence number; 0 in a slot never written)
 *   w1 = ctr << 31 | src        (ctr: the tag is a counter index)
 *   w2 = kind << 30 | tag       (tags are 30 bits)
 *   w3 = bytes
 *   w4 = ts                     (ns, after the data completed: mpi.c, rec_time)
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
 * bits and finished with the last steps of MurmurHash3's finaliser. No
 * (word + key) wraps to 0 while sequence numbers and sizes stay below 7e18 and
 * the clock below 7.3e18 ns (realtime: the year 2202), so a change of any one word changes the
 * 128-bit sum; the fold to 64 bits is where that certainty ends (NH's 2^-64
 * bound assumes random keys; these are fixed, and tears do not depend on
 * them). 12 TSC ticks (4.6 ns) per call in a dependent loop here; the chained
 * hash it replaced took 60 (23 ns), which showed in Open MPI's ping-pong.
 * Every build computes the same value: compilers without 128-bit integers (or
 * NARMAT_MPI_REC_PORTABLE) use 32-bit halves. */
static const uint64_t narmat_mpi_rec_keys[8] = {
    UINT64_C(0x9e3779b97f4a7c15), UINT64_C(0xa0761d6478bd642f), UINT64_C(0xe7037ed1a0b428db),
    UINT64_C(0x8ebc6af09c88c6e3), UINT64_C(0x9a3a4fa2b77e3c1d), UINT64_C(0xc2b2ae3d27d4eb4f),
    UINT64_C(0x94d049bb133111eb), UINT64_C(0xbf58476d1ce4e5b9)};

static inline uint64_t narmat_mpi_rec_finish(uint64_t lo, uint64_t hi)
{
    uint64_t h = lo ^ (hi * UINT64_C(0xff51afd7ed558ccd));
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

/* The same sum with 64-bit arithmetic only: each product from four 32x32 ones. */
static inline uint64_t narmat_mpi_rec_check_portable(const uint64_t *r)
{
    const uint64_t *k = narmat_mpi_rec_keys, m = UINT32_MAX;
    uint64_t lo = 0, hi = 0;
    for (int i = 0; i < 8; i += 2) {
        uint64_t a = r[i] + k[i], b = (i + 1 == NARMAT_MPI_REC_CHECK ? 0 : r[i + 1]) + k[i + 1];
        uint64_t p00 = (a & m) * (b & m), p01 = (a & m) * (b >> 32);
        uint64_t p10 = (a >> 32) * (b & m), p11 = (a >> 32) * (b >> 32);
        uint64_t mid = (p00 >> 32) + (p01 & m) + (p10 & m);
        uint64_t plo = (p00 & m) | (mid << 32);
        uint64_t phi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
        lo += plo;
        hi += phi + (lo < plo); /* carry out of the low half */
    }
    return narmat_mpi_rec_finish(lo, hi);
}

static inline uint64_t narmat_mpi_rec_check(const uint64_t *r)
{
#if defined(__SIZEOF_INT128__) && !defined(NARMAT_MPI_REC_PORTABLE)
    const uint64_t *k = narmat_mpi_rec_keys;
    typedef unsigned __int128 u128;
    u128 s = (u128)(r[0] + k[0]) * (u128)(r[1] + k[1]) + (u128)(r[2] + k[2]) * (u128)(r[3] + k[3]) +
             (u128)(r[4] + k[4]) * (u128)(r[5] + k[5]) + (u128)(r[6] + k[6]) * (u128)k[7];
    return narmat_mpi_rec_finish((uint64_t)s, (uint64_t)(s >> 64));
#else
    return narmat_mpi_rec_check_portable(r);
#endif
}

/* 1 if the words v, loaded from a slot, are the whole record of sequence
 * number seq; 0 for a slot still holding an older record, zeros, or a mix. */
static inline int narmat_mpi_rec_whole(const uint64_t *v, uint64_t seq)
{
    return v[0] == seq && v[NARMAT_MPI_REC_CHECK] == narmat_mpi_rec_check(v);
}

#endif
