/*
 * The notification ring (src/transport/shm/ring.h) in plain process memory.
 *
 * Specification, as the ring's header states it:
 *   - records come out in the order their slots were claimed (FIFO), and a
 *     record becomes visible to the reader only once it is published;
 *   - claim returns NULL exactly when N records are claimed and not yet
 *     given back by the reader (narmat_ring_consumed): a full ring never
 *     overwrites a record, even one the reader has copied but not given back;
 *   - giving back k records makes exactly k slots claimable again;
 *   - positions and 32-bit slot sequence numbers wrap without effect, over
 *     any number of laps and across 2^32;
 *   - with many writer threads and one reader, every record arrives exactly
 *     once, intact, and each writer's records in the order it wrote them.
 * Every test compares against a reference model (a counter per writer).
 */
#include "transport/shm/ring.h"
#include "unit.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

/* ---- helpers ---- */

static struct narmat_ring *ring_new(uint32_t nslots)
{
    size_t bytes = narmat_ring_bytes(nslots); /* a multiple of 64 */
    struct narmat_ring *r = aligned_alloc(NARMAT_CACHELINE, bytes);
    if (r == NULL) {
        perror("aligned_alloc");
        exit(1);
    }
    memset(r, 0xa5, bytes); /* no reliance on zeroed memory */
    narmat_ring_init(r, nslots);
    return r;
}

/* Put the ring in the state it has after `start` records went through it:
 * tail = head = start, and each slot holding the sequence number its record
 * of the previous lap was published with (pos + 1). The reader's private
 * head must then start at `start` too. */
static void ring_fast_forward(struct narmat_ring *r, uint64_t start)
{
    uint32_t n = (uint32_t)r->slot_count;
    r->tail = start;
    r->head = start;
    for (uint64_t p = start; p < start + n; p++)
        r->slots[p & (n - 1)].seq = (uint32_t)(p - n + 1);
}

/* A word derived from (writer, seq): any corruption or mix-up of records shows. */
static uint64_t pattern(uint32_t writer, uint64_t seq)
{
    uint64_t x = (seq * UINT64_C(0x9e3779b97f4a7c15)) ^ ((uint64_t)writer << 56);
    return x ^ (x >> 29) ^ (x >> 47);
}

static void fill(struct narmat_rec *s, uint32_t writer, uint64_t seq)
{
    s->src = (int32_t)writer;
    s->tag = (int32_t)(seq & 0x3fffffff);
    s->kind = 1;
    s->bytes = seq;
    s->off = pattern(writer, seq);
}

/* Is rec exactly the record fill(writer, seq) made? Returns a reason or NULL. */
static const char *verify(const struct narmat_rec *rec, uint32_t writer, uint64_t seq)
{
    if (rec->src != (int32_t)writer) return "wrong writer";
    if (rec->bytes != seq) return "wrong sequence";
    if (rec->tag != (int32_t)(seq & 0x3fffffff)) return "wrong tag";
    if (rec->kind != 1) return "wrong kind";
    if (rec->off != pattern(writer, seq)) return "record corrupted";
    return NULL;
}

/* The single-threaded tests have one writer; its private copy of the
 * reader's head starts at 0, as the shm transport's does. */
static uint64_t head_copy;

static struct narmat_rec *claim(struct narmat_ring *r, uint64_t *pos)
{
    return narmat_ring_claim(r, (uint32_t)r->slot_count - 1, &head_copy, pos);
}

static int write_one(struct narmat_ring *r, uint32_t writer, uint64_t seq)
{
    uint64_t pos;
    struct narmat_rec *s = claim(r, &pos);
    if (s == NULL) return 0;
    fill(s, writer, seq);
    narmat_ring_publish(s, pos);
    return 1;
}

/* Read the record at *head into out (copy out, advance) without giving the
 * slot back; 0 if nothing is published there. */
static int read_keep(struct narmat_ring *r, uint64_t *head, struct narmat_rec *out)
{
    const struct narmat_rec *s = narmat_ring_peek(r, (uint32_t)r->slot_count - 1, *head);
    if (s == NULL) return 0;
    memcpy(out, s, sizeof *out);
    ++*head;
    return 1;
}

/* Read one record and give its slot back at once. */
static int read_one(struct narmat_ring *r, uint64_t *head, struct narmat_rec *out)
{
    if (!read_keep(r, head, out)) return 0;
    narmat_ring_consumed(r, *head);
    return 1;
}

/* ---- single thread ---- */

static void test_geometry(void)
{
    unit_phase("geometry: the header records magic, version and slot geometry");
    struct narmat_ring *r = ring_new(8);
    CHECK(r->magic == NARMAT_RING_MAGIC, "magic %llx", (unsigned long long)r->magic);
    CHECK(r->version == NARMAT_RING_VERSION, "version %llu", (unsigned long long)r->version);
    CHECK(r->slot_size == sizeof(struct narmat_rec), "slot size %llu",
          (unsigned long long)r->slot_size);
    CHECK(r->slot_count == 8, "slot count %llu", (unsigned long long)r->slot_count);
    size_t tail_line = (size_t)((char *)&r->tail - (char *)r) / NARMAT_CACHELINE;
    size_t head_line = (size_t)((char *)&r->head - (char *)r) / NARMAT_CACHELINE;
    CHECK(
        tail_line >= 1 && head_line >= 1 && tail_line != head_line,
        "writers' tail and reader's head on separate lines, apart from the header (lines %zu, %zu)",
        tail_line, head_line);
    CHECK(((uintptr_t)&r->slots[0]) % NARMAT_CACHELINE == 0, "slots are cache-line aligned");
    free(r);
}

static void test_fifo(void)
{
    unit_phase("fifo: records come out in claim order; nothing before it is published");
    struct narmat_ring *r = ring_new(8);
    uint32_t mask = 7;
    uint64_t head = 0;
    struct narmat_rec rec;
    CHECK(narmat_ring_peek(r, mask, head) == NULL, "an empty ring has nothing to read");

    for (uint64_t i = 0; i < 5; i++)
        CHECK(write_one(r, 0, i), "claim %llu of 5 in an 8-ring", (unsigned long long)i);
    for (uint64_t i = 0; i < 5; i++) {
        if (!CHECK(read_one(r, &head, &rec), "record %llu is readable", (unsigned long long)i))
            break;
        const char *why = verify(&rec, 0, i);
        CHECK(why == NULL, "record %llu: %s", (unsigned long long)i, why);
    }
    CHECK(narmat_ring_peek(r, mask, head) == NULL, "drained ring has nothing to read");

    unit_phase("fifo: peek shows the record without consuming it, release consumes it");
    CHECK(write_one(r, 3, 42), "claim");
    const struct narmat_rec *p1 = narmat_ring_peek(r, mask, head);
    const struct narmat_rec *p2 = narmat_ring_peek(r, mask, head);
    CHECK(p1 != NULL && p1 == p2, "peek twice gives the same record");
    CHECK(p1 != NULL && verify(p1, 3, 42) == NULL, "peeked record is the one written");
    narmat_ring_consumed(r, ++head);
    CHECK(narmat_ring_peek(r, mask, head) == NULL, "consumed record is gone");

    unit_phase(
        "fifo: a claimed but unpublished record blocks the reader; later ones wait behind it");
    uint64_t pa, pb;
    struct narmat_rec *a = claim(r, &pa);
    struct narmat_rec *b = claim(r, &pb);
    CHECK(a != NULL && b != NULL && a != b && pb == pa + 1, "two claims get consecutive slots");
    if (a != NULL && b != NULL) {
        fill(b, 1, 101);
        narmat_ring_publish(b, pb); /* the later claim publishes first */
        CHECK(narmat_ring_peek(r, mask, head) == NULL, "reader must not skip an unpublished slot");
        fill(a, 1, 100);
        narmat_ring_publish(a, pa);
        CHECK(read_one(r, &head, &rec) && verify(&rec, 1, 100) == NULL,
              "first claimed comes first");
        CHECK(read_one(r, &head, &rec) && verify(&rec, 1, 101) == NULL, "then the second");
    }
    free(r);
}

/* Fill to capacity from position `start`: claim succeeds exactly N times,
 * then fails without moving tail or touching any record; each release lets
 * exactly one more claim through. */
static void check_full(uint32_t n, uint64_t start)
{
    struct narmat_ring *r = ring_new(n);
    uint32_t mask = n - 1;
    ring_fast_forward(r, start);
    head_copy = 0;
    uint64_t head = start, next = 0; /* next record to write */
    struct narmat_rec rec;

    for (uint32_t i = 0; i < n; i++)
        CHECK(write_one(r, 0, next++), "claim %u of %u must succeed (start %llu)", i, n,
              (unsigned long long)start);
    uint64_t pos = 0;
    uint64_t tail_full = r->tail;
    CHECK(claim(r, &pos) == NULL, "claim on a full %u-ring returns NULL (start %llu)", n,
          (unsigned long long)start);
    CHECK(r->tail == tail_full, "a failed claim leaves tail alone");
    CHECK(claim(r, &pos) == NULL, "and keeps failing while full");
    for (uint64_t p = head; p < head + n; p++)
        CHECK(verify(&r->slots[p & mask], 0, p - start) == NULL,
              "record %llu intact in a full ring", (unsigned long long)(p - start));

    /* Release one at a time, each time exactly one claim succeeds. */
    uint64_t expect = 0;
    for (uint32_t k = 0; k < 3 * n; k++) {
        if (!CHECK(read_one(r, &head, &rec), "read %u", k)) break;
        const char *why = verify(&rec, 0, expect);
        CHECK(why == NULL, "read %u: %s", k, why);
        expect++;
        CHECK(write_one(r, 0, next++), "after one release one claim succeeds (k=%u)", k);
        CHECK(claim(r, &pos) == NULL, "... and only one (k=%u)", k);
    }
    /* Records copied out but not given back still occupy their slots; giving
     * back k of them frees exactly k. */
    uint32_t k = n > 1 ? n / 2 : 1;
    for (uint32_t i = 0; i < k; i++) {
        if (!CHECK(read_keep(r, &head, &rec), "batch read %u", i)) break;
        CHECK(verify(&rec, 0, expect) == NULL, "batch record %llu", (unsigned long long)expect);
        expect++;
    }
    CHECK(claim(r, &pos) == NULL, "slots read but not given back are not reusable (n=%u)", n);
    narmat_ring_consumed(r, head);
    for (uint32_t i = 0; i < k; i++)
        CHECK(write_one(r, 0, next++), "giving back %u slots frees them: claim %u (n=%u)", k, i, n);
    CHECK(claim(r, &pos) == NULL, "... and no more (n=%u)", n);
    while (read_one(r, &head, &rec)) {
        CHECK(verify(&rec, 0, expect) == NULL, "drain record %llu", (unsigned long long)expect);
        expect++;
    }
    CHECK(expect == next, "read %llu records, wrote %llu", (unsigned long long)expect,
          (unsigned long long)next);
    free(r);
}

static void test_full(void)
{
    unit_phase("full: claim returns NULL exactly when N records are unconsumed, never overwrites");
    /* N >= 2: with one slot "published" (seq = pos + 1) and "free for the next
     * lap" (seq = pos + N) coincide, so the protocol needs two slots at least
     * (init.c never makes a smaller ring). */
    for (uint32_t n = 2; n <= 64; n *= 2)
        check_full(n, 0);
    unit_phase("full: the same on a fresh ring (narmat_ring_init only)");
    for (uint32_t n = 2; n <= 64; n *= 2) {
        struct narmat_ring *r = ring_new(n);
        head_copy = 0;
        uint32_t ok = 0;
        while (ok <= n && write_one(r, 0, ok))
            ok++;
        CHECK(ok == n, "a fresh %u-ring takes %u records before it is full", n, ok);
        free(r);
    }
    unit_phase("full: the same across the 32-bit sequence wrap");
    for (uint32_t n = 2; n <= 64; n *= 2)
        for (uint64_t back = 0; back <= 2 * n; back++)
            check_full(n, (UINT64_C(1) << 32) - back);
}

/* Many laps with a varying fill level: writes in bursts of 1..n, reads in
 * bursts of 1..fill, all against the model "record k is the k-th written". */
static void laps(uint32_t n, uint64_t start, uint64_t records, uint64_t seed)
{
    struct narmat_ring *r = ring_new(n);
    ring_fast_forward(r, start);
    head_copy = 0;
    uint64_t head = start, written = 0, read = 0;
    unit_rand rnd;
    unit_rand_seed(&rnd, seed);
    struct narmat_rec rec;
    while (read < records) {
        uint32_t w = 1 + unit_rand_below(&rnd, n);
        for (uint32_t i = 0; i < w && written < records; i++) {
            int ok = write_one(r, 7, written);
            /* Model: a claim fails iff n records are outstanding. */
            if (!CHECK(ok == (written - read < n), "claim %s with %llu outstanding in a %u-ring",
                       ok ? "succeeded" : "failed", (unsigned long long)(written - read), n))
                goto out;
            if (!ok) break;
            written++;
        }
        uint32_t k = 1 + unit_rand_below(&rnd, (uint32_t)(written - read) + 1);
        for (uint32_t i = 0; i < k; i++) {
            int ok = read_one(r, &head, &rec);
            if (!CHECK(ok == (read < written), "read %s with %llu outstanding",
                       ok ? "succeeded" : "failed", (unsigned long long)(written - read)))
                goto out;
            if (!ok) break;
            const char *why = verify(&rec, 7, read);
            if (!CHECK(why == NULL, "record %llu (position %llu): %s", (unsigned long long)read,
                       (unsigned long long)(start + read), why))
                goto out;
            read++;
        }
    }
    CHECK(r->tail == start + records && head == start + records, "tail and head end at %llu",
          (unsigned long long)(start + records));
out:
    free(r);
}

static void test_wrap(void)
{
    unit_phase("wrap: more than 2^16 laps of a 4-slot ring from position 0");
    laps(4, 0, (UINT64_C(1) << 16) * 4 + 123, 1);
    unit_phase("wrap: 2^16 laps of a 2-slot ring crossing the 32-bit sequence wrap");
    laps(2, (UINT64_C(1) << 32) - (UINT64_C(1) << 16) + 1, UINT64_C(1) << 17, 2);
    unit_phase("wrap: a 16-slot ring crossing the 32-bit sequence wrap twice");
    laps(16, (UINT64_C(1) << 32) - 1000, 4000, 3);
    laps(16, (UINT64_C(2) << 32) - 1000, 4000, 4);
    unit_phase("wrap: the smallest ring (2 slots) crossing the 32-bit wrap at every phase");
    for (uint64_t back = 0; back < 8; back++)
        laps(2, (UINT64_C(1) << 32) - back, 64, 5 + back);
}

/* ---- many writers, one reader ---- */

#define MT_WRITERS       4
#define MT_RECORDS       200000 /* per writer */
#define MT_STALL_SECONDS 5      /* no record for this long: the ring lost or stuck records */

static uint32_t mt_writers_done;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct mt {
    struct narmat_ring *ring;
    uint64_t head_copy; /* this writer's copy of the reader's head */
    uint32_t writer;
    uint64_t fulls; /* claims that found the ring full */
};

static void *mt_writer(void *arg)
{
    struct mt *m = arg;
    uint32_t mask = (uint32_t)m->ring->slot_count - 1;
    for (uint64_t seq = 0; seq < MT_RECORDS; seq++) {
        uint64_t pos;
        struct narmat_rec *s;
        unsigned spins = 0;
        while ((s = narmat_ring_claim(m->ring, mask, &m->head_copy, &pos)) == NULL) {
            m->fulls++;
            /* Full: the reader must run. Yield soon: the machine may have fewer
             * cores than threads. */
            if (++spins > 16)
                sched_yield();
            else
                narmau_cpu_relax();
        }
        fill(s, m->writer, seq);
        narmat_ring_publish(s, pos);
    }
    narmau_atomic_fetch_add_u32(&mt_writers_done, 1); /* read by the stall report only */
    return NULL;
}

static void threads(uint32_t slots)
{
    struct narmat_ring *r = ring_new(slots);
    mt_writers_done = 0;
    struct mt m[MT_WRITERS];
    pthread_t th[MT_WRITERS];
    for (uint32_t w = 0; w < MT_WRITERS; w++) {
        m[w] = (struct mt){.ring = r, .head_copy = 0, .writer = w, .fulls = 0};
        if (pthread_create(&th[w], NULL, mt_writer, &m[w]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    /* The reader (this thread) holds the model: the next sequence number
     * expected from each writer. A lost record shows as a gap, a duplicate as
     * a step back, a torn or mixed record as a bad record. */
    uint64_t expect[MT_WRITERS] = {0};
    uint64_t head = 0, total = (uint64_t)MT_WRITERS * MT_RECORDS, got = 0;
    struct narmat_rec rec;
    unsigned idle = 0;
    double last = now();
    while (got < total) {
        if (!read_one(r, &head, &rec)) {
            if (++idle > 16)
                sched_yield();
            else
                narmau_cpu_relax();
            /* A hang is a failure too: say so rather than wait for the watchdog. */
            if (idle % 1024 == 0 && now() - last > MT_STALL_SECONDS) break;
            continue;
        }
        idle = 0;
        last = now();
        got++;
        uint32_t w = (uint32_t)rec.src;
        if (!CHECK(rec.src >= 0 && w < MT_WRITERS, "record %llu names writer %d",
                   (unsigned long long)got, rec.src))
            continue;
        if (!CHECK(rec.bytes == expect[w], "writer %u: got sequence %llu, expected %llu (%s)", w,
                   (unsigned long long)rec.bytes, (unsigned long long)expect[w],
                   rec.bytes < expect[w] ? "duplicate or reordered" : "lost record(s)")) {
            if (rec.bytes > expect[w]) expect[w] = rec.bytes + 1;
            continue;
        }
        const char *why = verify(&rec, w, expect[w]);
        CHECK(why == NULL, "writer %u record %llu: %s", w, (unsigned long long)expect[w], why);
        expect[w]++;
    }
    uint32_t done = narmau_atomic_load_acq_u32(&mt_writers_done);
    if (!CHECK(got == total,
               "stalled: no record for %d s after %llu of %llu; %u of %d writers finished",
               MT_STALL_SECONDS, (unsigned long long)got, (unsigned long long)total, done,
               MT_WRITERS)) {
        for (uint32_t w = 0; w < MT_WRITERS; w++)
            fprintf(stderr, "  writer %u: %llu records arrived in order\n", w,
                    (unsigned long long)expect[w]);
        if (done < MT_WRITERS)
            exit(unit_done("test_ring")); /* writers stuck in claim: cannot join */
    }
    for (uint32_t w = 0; w < MT_WRITERS; w++)
        pthread_join(th[w], NULL);
    uint64_t fulls = 0;
    for (uint32_t w = 0; w < MT_WRITERS; w++) {
        CHECK(expect[w] == MT_RECORDS, "writer %u: %llu of %d records arrived", w,
              (unsigned long long)expect[w], MT_RECORDS);
        fulls += m[w].fulls;
    }
    CHECK(narmat_ring_peek(r, slots - 1, head) == NULL, "nothing left after the last record");
    CHECK(r->tail == total && head == total, "tail %llu and head %llu both equal %llu",
          (unsigned long long)r->tail, (unsigned long long)head, (unsigned long long)total);
    printf("threads: %llu records through %u slots, writers found the ring full %llu times\n",
           (unsigned long long)total, slots, (unsigned long long)fulls);
    free(r);
}

static void test_threads(void)
{
    unit_phase("threads: 4 writers x 200k records through 16 slots, one reader");
    threads(16);
    /* A large ring is rarely full, so writers race each other for the tail
     * more often than they wait for the reader. */
    unit_phase("threads: 4 writers x 200k records through 4096 slots, one reader");
    threads(4096);
}

int main(void)
{
    unit_begin(30);
    test_geometry();
    test_fifo();
    test_full();
    test_wrap();
    test_threads();
    return unit_done("test_ring");
}
