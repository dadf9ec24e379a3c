/*
 * The `mpi` transport's notification record (src/transport/mpi/record.h).
 *
 * The writer's MPI_Put is not atomic, so the target may load any mix of a new
 * record's bytes with what its slot held before. Specification:
 *   - a whole record of sequence number seq is accepted for seq, and for no
 *     other sequence number;
 *   - a slot holding the previous record of the slot (seq - slots, any number
 *     of slots, across 2^32 and near 2^64) or zeros is refused;
 *   - every mix of the new record with the old contents, at word granularity
 *     (all 2^8 choices) and at byte granularity (a tear at every byte offset,
 *     in both directions, and random byte subsets), is refused unless it is
 *     the new record itself;
 *   - changing any single bit of a whole record makes it refused;
 *   - the portable check (64-bit arithmetic only, for compilers without 128-bit
 *     integers) computes the same value as the one every build here uses.
 */
#include "transport/mpi/record.h"
#include "unit.h"

static unit_rand rng;

/* A record as the writer fills it (record.h's layout). */
static void rec_make(uint64_t *r, uint64_t seq)
{
    memset(r, 0, NARMAT_MPI_REC_BYTES);
    r[0] = seq;
    r[1] = unit_rand_below(&rng, 1u << 20) | (unit_rand_below(&rng, 2) ? UINT64_C(1) << 31 : 0);
    r[2] = (uint64_t)(1 + unit_rand_below(&rng, 3)) << 30 | unit_rand_below(&rng, 1u << 30);
    r[3] = unit_rand_below(&rng, 4) == 0 ? 8 : unit_rand_u64(&rng) >> unit_rand_below(&rng, 64);
    r[4] = unit_rand_u64(&rng) >> 1;
    r[NARMAT_MPI_REC_CHECK] = narmat_mpi_rec_check(r);
}

/* Accepted for seq? Also: the mix equals the new record (then it must be accepted). */
static int accepted(const uint64_t *v, uint64_t seq) { return narmat_mpi_rec_whole(v, seq); }

static int same(const uint64_t *a, const uint64_t *b)
{
    return memcmp(a, b, NARMAT_MPI_REC_BYTES) == 0;
}

/* Every way of tearing new over old; returns the number of mixes wrongly accepted. */
static long tear_all(const uint64_t *oldr, const uint64_t *newr, uint64_t seq)
{
    long bad = 0;
    uint64_t v[NARMAT_MPI_REC_WORDS];
    /* Word granularity: every subset of words from the new record. */
    for (unsigned m = 0; m < (1u << NARMAT_MPI_REC_WORDS); m++) {
        for (int i = 0; i < NARMAT_MPI_REC_WORDS; i++)
            v[i] = (m >> i & 1) ? newr[i] : oldr[i];
        if (accepted(v, seq) != same(v, newr)) bad++;
    }
    /* Byte granularity: a copy stopped at every byte, front to back and back to front. */
    const unsigned char *o = (const unsigned char *)oldr, *n = (const unsigned char *)newr;
    unsigned char *b = (unsigned char *)v;
    for (int cut = 0; cut <= NARMAT_MPI_REC_BYTES; cut++) {
        for (int i = 0; i < NARMAT_MPI_REC_BYTES; i++)
            b[i] = i < cut ? n[i] : o[i];
        if (accepted(v, seq) != same(v, newr)) bad++;
        for (int i = 0; i < NARMAT_MPI_REC_BYTES; i++)
            b[i] = i >= cut ? n[i] : o[i];
        if (accepted(v, seq) != same(v, newr)) bad++;
    }
    /* Random byte subsets, biased towards the mixes that keep seq whole (the hard case). */
    for (int k = 0; k < 2000; k++) {
        for (int i = 0; i < NARMAT_MPI_REC_BYTES; i++)
            b[i] = (i < 8 && k % 2 == 0) || unit_rand_below(&rng, 2) ? n[i] : o[i];
        if (accepted(v, seq) != same(v, newr)) bad++;
    }
    return bad;
}

int main(void)
{
    unit_begin(120);
    unit_rand_seed(&rng, 20261127);
    uint64_t oldr[NARMAT_MPI_REC_WORDS], newr[NARMAT_MPI_REC_WORDS], v[NARMAT_MPI_REC_WORDS];

    unit_phase("a whole record is accepted for its own sequence number only");
    const uint64_t seqs[] = {
        1, 2, 5, UINT64_C(1) << 32, (UINT64_C(1) << 32) + 3, UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
        rec_make(newr, seqs[i]);
        CHECK(accepted(newr, seqs[i]), "seq %llu refused", (unsigned long long)seqs[i]);
        CHECK(!accepted(newr, seqs[i] + 1), "seq %llu accepted as the next one",
              (unsigned long long)seqs[i]);
        CHECK(!accepted(newr, seqs[i] - 1), "seq %llu accepted as the previous one",
              (unsigned long long)seqs[i]);
    }

    unit_phase("zeroed and stale slots are refused");
    memset(v, 0, sizeof v);
    CHECK(!accepted(v, 1), "a zeroed slot passes for seq 1");
    for (uint64_t slots = 1; slots <= (UINT64_C(1) << 20); slots <<= 1) {
        uint64_t seq = slots + 1 + unit_rand_below(&rng, 1000);
        rec_make(oldr, seq - slots);
        CHECK(!accepted(oldr, seq), "the record a lap before (slots %llu) passes",
              (unsigned long long)slots);
    }

    unit_phase("a single flipped bit is refused");
    rec_make(newr, 77);
    long flips = 0;
    for (int bit = 0; bit < NARMAT_MPI_REC_BYTES * 8; bit++) {
        memcpy(v, newr, sizeof v);
        v[bit / 64] ^= UINT64_C(1) << (bit % 64);
        if (accepted(v, 77)) flips++;
    }
    CHECK(flips == 0, "%ld single-bit changes pass", flips);

    unit_phase("the portable check equals the 128-bit one");
    long differ = 0;
    for (int k = 0; k < 200000; k++) {
        for (int i = 0; i < NARMAT_MPI_REC_WORDS; i++) {
            switch (unit_rand_below(&rng, 4)) {
            case 0:
                v[i] = 0;
                break;
            case 1:
                v[i] = UINT64_MAX - unit_rand_below(&rng, 3);
                break;
            default:
                v[i] = unit_rand_u64(&rng);
                break;
            }
        }
        if (narmat_mpi_rec_check(v) != narmat_mpi_rec_check_portable(v)) differ++;
    }
    CHECK(differ == 0, "%ld of 200000 records get another check word without 128-bit integers",
          differ);

    unit_phase("torn reads: every mix of the new record with the slot's old contents");
    long bad = 0, cases = 0;
    for (int k = 0; k < 400; k++) {
        uint64_t slots = UINT64_C(1) << unit_rand_below(&rng, 21);
        uint64_t seq;
        switch (k % 4) {
        case 0:
            seq = slots + 1 + unit_rand_below(&rng, 100000);
            break;
        case 1:
            seq = (UINT64_C(1) << 32) + unit_rand_below(&rng, 64) - 32 + slots;
            break;
        case 2:
            seq = UINT64_MAX - unit_rand_below(&rng, 1000);
            break;
        default:
            seq = slots + 1;
            break; /* the slot's first reuse */
        }
        rec_make(newr, seq);
        if (k % 8 == 7) {
            memset(oldr, 0, sizeof oldr); /* first lap: the slot was zero */
        } else {
            rec_make(oldr, seq - slots);
            if (k % 3 == 0) { /* same source, tag and size: only seq, time and check differ */
                for (int i = 1; i < 4; i++)
                    oldr[i] = newr[i];
                oldr[NARMAT_MPI_REC_CHECK] = narmat_mpi_rec_check(oldr);
            }
        }
        bad += tear_all(oldr, newr, seq);
        cases++;
    }
    CHECK(bad == 0, "%ld torn mixes accepted (or whole records refused) over %ld slot pairs", bad,
          cases);
    return unit_done("test_mpi_record");
}
