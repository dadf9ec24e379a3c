/*
 * Notification matching (src/core/notify_match.c) against reference models.
 *
 * Specification (the paper's section IV-B):
 *   - Notifications are matched in arrival order. An arriving notification
 *     goes to the oldest started, still active request whose <source, tag>
 *     matches it (NARMA_ANY_SOURCE / NARMA_ANY_TAG match anything); if there
 *     is none it waits in the unexpected queue (UQ).
 *   - Start consumes matching UQ entries oldest first, at most expected_count
 *     of them; the request completes at once if that is enough, otherwise it
 *     joins the end of the active list.
 *   - A request completes after expected_count matches and leaves the active
 *     list; its status (st_src, st_tag, st_bytes) is that of the last match.
 *     A started request that has not matched yet has the empty status
 *     (MPI_ANY_SOURCE, MPI_ANY_TAG, 0 bytes).
 *   - Withdraw makes a request inactive: it matches nothing afterwards.
 *   - The UQ pop returns the oldest entry matching each of the four request
 *     shapes (exact, any source, any tag, both).
 *   - The UQ's memory follows its live entries, not its history: at most
 *     three bins per entry hold entries, at most max(64, twice that) empty
 *     bins are kept, the hash table has at most 8 buckets per bin (or the
 *     minimum, 64) and the caches of free entries and bins stay within their
 *     limits. A program that uses the time step as the tag runs for ever in
 *     bounded memory.
 * The models are the plainest possible code: arrays in arrival / start order,
 * scanned linearly.
 */
#include "core/narmai.h"
#include "unit.h"
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- reference model of the unexpected queue ---- */

struct note {
    int32_t src, tag;
    int64_t bytes; /* unique per notification: identifies it */
};

struct model_uq {
    struct note *v;
    size_t n, cap;
};

static void muq_push(struct model_uq *m, int32_t src, int32_t tag, int64_t bytes)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->v = realloc(m->v, m->cap * sizeof *m->v);
        if (m->v == NULL) exit(1);
    }
    m->v[m->n++] = (struct note){src, tag, bytes};
}

static int matches(int32_t want_src, int32_t want_tag, int32_t src, int32_t tag)
{
    return (want_src == NARMA_ANY_SOURCE || want_src == src) &&
           (want_tag == NARMA_ANY_TAG || want_tag == tag);
}

/* Oldest entry matching (src, tag), removed; 1 if found. */
static int muq_pop(struct model_uq *m, int32_t src, int32_t tag, struct note *out)
{
    for (size_t i = 0; i < m->n; i++) {
        if (matches(src, tag, m->v[i].src, m->v[i].tag)) {
            *out = m->v[i];
            memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
            m->n--;
            return 1;
        }
    }
    return 0;
}

/* Does the real UQ hold exactly the model's entries, in order? Checked by
 * draining it (oldest first) and pushing everything back in the same order,
 * which leaves it observably unchanged. */
static int uq_equals_model(struct narmai_uq *q, const struct model_uq *m, const char *when)
{
    int ok = CHECK(q->count == m->n, "%s: UQ holds %zu entries, model %zu", when, q->count, m->n);
    size_t cap = (q->count > m->n ? q->count : m->n) + 1, n = 0;
    struct note *got = malloc(cap * sizeof *got);
    if (got == NULL) exit(1);
    while (n < cap && narmai_uq_pop(q, NARMA_ANY_SOURCE, NARMA_ANY_TAG, &got[n].src, &got[n].tag,
                                    &got[n].bytes))
        n++;
    ok &= CHECK(n == m->n, "%s: drained %zu entries, model has %zu", when, n, m->n);
    for (size_t i = 0; i < n && i < m->n && ok; i++)
        ok &= CHECK(got[i].src == m->v[i].src && got[i].tag == m->v[i].tag &&
                        got[i].bytes == m->v[i].bytes,
                    "%s: UQ entry %zu is (%d,%d,#%lld), model (%d,%d,#%lld)", when, i, got[i].src,
                    got[i].tag, (long long)got[i].bytes, m->v[i].src, m->v[i].tag,
                    (long long)m->v[i].bytes);
    for (size_t i = 0; i < n; i++)
        narmai_uq_push(q, got[i].src, got[i].tag, got[i].bytes);
    free(got);
    return ok;
}

static int32_t shape_src(int shape, int32_t src) { return shape & 1 ? NARMA_ANY_SOURCE : src; }
static int32_t shape_tag(int shape, int32_t tag) { return shape & 2 ? NARMA_ANY_TAG : tag; }
static const char *const shape_name[4] = {"exact", "ANY_SOURCE", "ANY_TAG", "ANY_SOURCE+ANY_TAG"};

/* The memory bound of the specification above. */
static int uq_bounded(const struct narmai_uq *q, const char *when, long op)
{
    struct narmai_uq_stats st;
    narmai_uq_get_stats(q, &st);
    uint32_t idle_max =
        2 * st.bins > NARMAI_UQ_IDLE_BINS_MIN ? 2 * st.bins : NARMAI_UQ_IDLE_BINS_MIN;
    return CHECK(st.bins <= 3 * st.entries, "%s %ld: %u bins hold %zu entries", when, op, st.bins,
                 st.entries) &&
           CHECK(st.idle_bins <= idle_max, "%s %ld: %u empty bins kept, %u live", when, op,
                 st.idle_bins, st.bins) &&
           CHECK(st.buckets <= 64 || st.buckets <= 8 * (st.bins + st.idle_bins),
                 "%s %ld: %u buckets for %u bins", when, op, st.buckets, st.bins + st.idle_bins) &&
           CHECK(st.cached_entries <= NARMAI_UQ_CACHED_ENTRIES_MAX + NARMAI_UQ_RESERVE_ENTRIES &&
                     st.cached_bins <= NARMAI_UQ_CACHED_BINS_MAX + NARMAI_UQ_RESERVE_BINS,
                 "%s %ld: %u cached entries, %u cached bins", when, op, st.cached_entries,
                 st.cached_bins);
}

/* ---- the unexpected queue ---- */

static void test_uq_basics(void)
{
    unit_phase("uq: each of the four pop shapes takes the oldest matching entry");
    struct narmai_uq q;
    narmai_uq_init(&q);
    int32_t s, t;
    int64_t b;
    CHECK(!narmai_uq_pop(&q, NARMA_ANY_SOURCE, NARMA_ANY_TAG, &s, &t, &b),
          "empty queue pops nothing");
    CHECK(!narmai_uq_pop(&q, 1, 1, &s, &t, &b), "empty queue pops nothing (exact)");
    /* arrival order: #1 (1,5) #2 (2,5) #3 (1,6) #4 (2,6) #5 (1,5) */
    narmai_uq_push(&q, 1, 5, 1);
    narmai_uq_push(&q, 2, 5, 2);
    narmai_uq_push(&q, 1, 6, 3);
    narmai_uq_push(&q, 2, 6, 4);
    narmai_uq_push(&q, 1, 5, 5);
    CHECK(q.count == 5, "count 5, got %zu", q.count);
    CHECK(narmai_uq_pop(&q, 2, 6, &s, &t, &b) && b == 4, "exact (2,6) takes #4, got #%lld",
          (long long)b);
    CHECK(narmai_uq_pop(&q, NARMA_ANY_SOURCE, 6, &s, &t, &b) && b == 3 && s == 1 && t == 6,
          "(*,6) takes #3 (1,6), got #%lld", (long long)b);
    CHECK(!narmai_uq_pop(&q, NARMA_ANY_SOURCE, 6, &s, &t, &b), "no (*,6) left");
    CHECK(narmai_uq_pop(&q, 1, NARMA_ANY_TAG, &s, &t, &b) && b == 1, "(1,*) takes #1, got #%lld",
          (long long)b);
    CHECK(narmai_uq_pop(&q, NARMA_ANY_SOURCE, NARMA_ANY_TAG, &s, &t, &b) && b == 2 && s == 2 &&
              t == 5,
          "(*,*) takes the oldest, #2, got #%lld", (long long)b);
    CHECK(!narmai_uq_pop(&q, 2, NARMA_ANY_TAG, &s, &t, &b), "no (2,*) left");
    CHECK(!narmai_uq_pop(&q, 1, 6, &s, &t, &b), "no (1,6) left");
    CHECK(narmai_uq_pop(&q, 1, 5, &s, &t, &b) && b == 5, "(1,5) takes #5, got #%lld", (long long)b);
    CHECK(q.count == 0, "empty at the end, count %zu", q.count);
    narmai_uq_destroy(&q);
}

/* Random pushes and pops (all four shapes) against the model. Phases bias
 * towards pushing or popping so the queue grows large, drains to empty and
 * refills. nsrc x ntag distinct keys: 8 x 16 creates enough bins to grow the
 * hash table more than once. drift > 0: the tags in use move up by one every
 * drift operations (tags as time steps), so bins are created and freed all
 * the time and the table grows and shrinks. */
static void uq_random(uint64_t seed, long ops, int32_t nsrc, int32_t ntag, long drift)
{
    struct narmai_uq q;
    struct model_uq m = {0};
    narmai_uq_init(&q);
    unit_rand r;
    unit_rand_seed(&r, seed);
    int64_t next = 1;
    long pops_found = 0, pops_empty = 0, sweeps = 0, shrinks = 0;
    struct narmai_uq_stats prev = {0};
    for (long op = 0; op < ops; op++) {
        /* With drift, the third phase all but drains the queue (old tags
         * leave only through wildcard pops), so empty bins pile up and the
         * table must shrink. */
        uint32_t push_pct = (op / 5000) % 3 == 0 ? 70 : (op / 5000) % 3 == 1 ? 50 : drift ? 5 : 20;
        int32_t src = (int32_t)unit_rand_below(&r, (uint32_t)nsrc);
        int32_t tag =
            (int32_t)unit_rand_below(&r, (uint32_t)ntag) + (int32_t)(drift ? op / drift : 0);
        if (unit_rand_below(&r, 100) < push_pct) {
            CHECK(narmai_uq_push(&q, src, tag, next) == NARMA_SUCCESS, "push");
            muq_push(&m, src, tag, next);
            next++;
        } else {
            int shape = (int)unit_rand_below(&r, 4);
            int32_t ps = shape_src(shape, src), pt = shape_tag(shape, tag);
            int32_t s = -7, t = -7;
            int64_t b = -7;
            struct note want;
            int got = narmai_uq_pop(&q, ps, pt, &s, &t, &b);
            int exp = muq_pop(&m, ps, pt, &want);
            if (!CHECK(got == exp, "op %ld: %s pop (%d,%d) found=%d, model found=%d", op,
                       shape_name[shape], ps, pt, got, exp))
                break;
            if (got && !CHECK(s == want.src && t == want.tag && b == want.bytes,
                              "op %ld: %s pop (%d,%d) gave (%d,%d,#%lld), model (%d,%d,#%lld)", op,
                              shape_name[shape], ps, pt, s, t, (long long)b, want.src, want.tag,
                              (long long)want.bytes))
                break;
            if (got)
                pops_found++;
            else
                pops_empty++;
        }
        if (!CHECK(q.count == m.n, "op %ld: count %zu, model %zu", op, q.count, m.n)) break;
        if (!uq_bounded(&q, "op", op)) break;
        struct narmai_uq_stats now;
        narmai_uq_get_stats(&q, &now);
        sweeps += now.bins + now.idle_bins < prev.bins + prev.idle_bins;
        shrinks += now.buckets < prev.buckets;
        prev = now;
    }
    struct narmai_uq_stats st;
    narmai_uq_get_stats(&q, &st);
    uq_equals_model(&q, &m, "after the random sequence");
    /* The queue stays usable after it has been drained completely. */
    struct note d;
    int32_t s, t;
    int64_t b;
    while (muq_pop(&m, NARMA_ANY_SOURCE, NARMA_ANY_TAG, &d))
        if (!CHECK(narmai_uq_pop(&q, NARMA_ANY_SOURCE, NARMA_ANY_TAG, &s, &t, &b) && b == d.bytes,
                   "drain: expected #%lld", (long long)d.bytes))
            break;
    CHECK(q.count == 0, "drained, count %zu", q.count);
    uq_bounded(&q, "drained, op", ops);
    narmai_uq_push(&q, 3, 4, next);
    CHECK(narmai_uq_pop(&q, 3, NARMA_ANY_TAG, &s, &t, &b) && b == next, "reusable after draining");
    narmai_uq_destroy(&q);
    CHECK(q.count == 0 && narmau_dlist_empty(&q.all), "destroy leaves an empty, initialised queue");
    narmai_uq_push(&q, 1, 2, 99);
    CHECK(narmai_uq_pop(&q, 1, 2, &s, &t, &b) && b == 99, "reusable after destroy");
    narmai_uq_destroy(&q);
    free(m.v);
    printf("uq seed %llu: %ld ops, %ld pops found an entry, %ld found none, %u bins, %u buckets "
           "at the end; %ld sweeps of empty bins, %ld shrinks\n",
           (unsigned long long)seed, ops, pops_found, pops_empty, st.bins, st.buckets, sweeps,
           shrinks);
    if (drift)
        CHECK(sweeps > 0 && shrinks > 0, "drifting tags swept %ld times and shrank %ld", sweeps,
              shrinks);
    if (pops_found < ops / 10 || pops_empty < ops / 100)
        CHECK(0, "the random sequence was too easy: %ld pops found, %ld found nothing", pops_found,
              pops_empty);
}

static void test_uq_random(void)
{
    unit_phase("uq: 1e5 random pushes and pops (sources 0..7, tags 0..15) against the model");
    uq_random(12345, 100000, 8, 16, 0);
    unit_phase("uq: random, few keys (long bins)");
    uq_random(777, 50000, 2, 2, 0);
    unit_phase("uq: random, many keys (hash table growth)");
    uq_random(4242, 50000, 64, 64, 0);
    unit_phase(
        "uq: random, tags drifting upwards (bins created and freed, table grows and shrinks)");
    uq_random(31337, 60000, 8, 16, 64);
}

/* The time step as the tag: 10^6 steps, each pushes a notification with a
 * tag never used before and pops the one pushed `window` steps earlier,
 * cycling through the four pop shapes (each finds exactly that entry, the
 * oldest). Bins, buckets and caches must stay bounded by the live entries. */
static void test_uq_time_step_tags(void)
{
    unit_phase("uq: 10^6 distinct tags (time steps), each pushed and popped: memory stays bounded");
    const long steps = 1000000, window = 16;
    const int32_t nsrc = 4;
    struct narmai_uq q;
    narmai_uq_init(&q);
    struct narmai_uq_stats st;
    uint32_t max_bins = 0, max_idle = 0, max_buckets = 0;
    int bounded = 1;
    double t0 = now_ns();
    for (long step = 0; step < steps + window; step++) {
        if (step < steps &&
            !CHECK(narmai_uq_push(&q, (int32_t)(step % nsrc), (int32_t)step, step) == NARMA_SUCCESS,
                   "push step %ld", step))
            break;
        long old = step - window;
        if (old >= 0) {
            int shape = (int)(old % 4);
            int32_t s = -7, t = -7;
            int64_t b = -7;
            int32_t ps = shape_src(shape, (int32_t)(old % nsrc)),
                    pt = shape_tag(shape, (int32_t)old);
            if (!CHECK(narmai_uq_pop(&q, ps, pt, &s, &t, &b) && b == old && t == (int32_t)old,
                       "step %ld: %s pop (%d,%d) gave #%lld, want #%ld", step, shape_name[shape],
                       ps, pt, (long long)b, old))
                break;
        }
        narmai_uq_get_stats(&q, &st);
        if (st.bins > max_bins) max_bins = st.bins;
        if (st.idle_bins > max_idle) max_idle = st.idle_bins;
        if (st.buckets > max_buckets) max_buckets = st.buckets;
        if (bounded && (step & 1023) == 0) bounded = uq_bounded(&q, "step", step); /* report once */
    }
    double dt = now_ns() - t0;
    narmai_uq_get_stats(&q, &st);
    CHECK(max_bins <= 3 * (window + 1), "at most %ld entries were queued, yet %u bins were live",
          window + 1, max_bins);
    CHECK(max_idle <= 2 * 3 * (window + 1) + NARMAI_UQ_IDLE_BINS_MIN, "%u empty bins were kept",
          max_idle);
    CHECK(max_buckets <= 8 * (3 * 3 * (window + 1) + NARMAI_UQ_IDLE_BINS_MIN),
          "the hash table reached %u buckets for %u live and %u empty bins at most", max_buckets,
          max_bins, max_idle);
    CHECK(st.entries == 0 && st.bins == 0 && st.idle_bins <= NARMAI_UQ_IDLE_BINS_MIN &&
              st.buckets <= 8 * NARMAI_UQ_IDLE_BINS_MIN,
          "drained: %zu entries, %u bins, %u empty bins, %u buckets", st.entries, st.bins,
          st.idle_bins, st.buckets);
    printf("uq time-step tags: %ld steps, at most %u live bins, %u empty bins, %u buckets; %.1f ns "
           "per push+pop\n",
           steps, max_bins, max_idle, max_buckets, dt / (double)steps);
    narmai_uq_destroy(&q);
}

/* A burst of distinct tags queued at once, then drained: the table grows
 * with the burst and gives the memory back once it is drained. */
static void test_uq_burst(void)
{
    unit_phase("uq: a burst of 2^17 distinct tags grows the table; draining shrinks it again");
    const long n = 1L << 17;
    struct narmai_uq q;
    narmai_uq_init(&q);
    struct narmai_uq_stats st;
    for (long i = 0; i < n; i++)
        if (!CHECK(narmai_uq_push(&q, (int32_t)(i % 3), (int32_t)i, i) == NARMA_SUCCESS, "push %ld",
                   i))
            break;
    narmai_uq_get_stats(&q, &st);
    uint32_t peak = st.buckets;
    CHECK(st.bins == (uint32_t)(2 * n + 3) && uq_bounded(&q, "burst", n),
          "burst: %u bins, expected %ld", st.bins, 2 * n + 3);
    for (long i = 0; i < n; i++) {
        int shape = (int)(i % 4);
        int32_t s, t;
        int64_t b = -1;
        int32_t ps = shape_src(shape, (int32_t)(i % 3)), pt = shape_tag(shape, (int32_t)i);
        if (!CHECK(narmai_uq_pop(&q, ps, pt, &s, &t, &b) && b == i, "drain %ld: got #%lld", i,
                   (long long)b))
            break;
        if ((i & 255) == 0 && !uq_bounded(&q, "drain", i)) break;
    }
    narmai_uq_get_stats(&q, &st);
    CHECK(st.entries == 0 && st.bins == 0 && st.idle_bins <= NARMAI_UQ_IDLE_BINS_MIN &&
              st.buckets <= 8 * NARMAI_UQ_IDLE_BINS_MIN,
          "drained: %zu entries, %u bins, %u empty bins, %u buckets (peak %u)", st.entries, st.bins,
          st.idle_bins, st.buckets, peak);
    CHECK(st.cached_entries <= NARMAI_UQ_CACHED_ENTRIES_MAX + NARMAI_UQ_RESERVE_ENTRIES,
          "%u free entries kept after the burst", st.cached_entries);
    narmai_uq_destroy(&q);
}

/* Cost of the common case, a few keys used over and over: 64 entries queued,
 * each step pushes a random key and pops the oldest entry of a random key
 * (or the oldest of all). Printed, not asserted. */
static void test_uq_steady_timing(void)
{
    unit_phase("uq: push/pop cost with a fixed key set (printed)");
    const long steps = 1000000;
    struct narmai_uq q;
    narmai_uq_init(&q);
    unit_rand r;
    unit_rand_seed(&r, 5);
    for (int i = 0; i < 64; i++)
        narmai_uq_push(&q, (int32_t)unit_rand_below(&r, 8), (int32_t)unit_rand_below(&r, 16), i);
    long found = 0;
    double t0 = now_ns();
    for (long i = 0; i < steps; i++) {
        int32_t s, t;
        int64_t b;
        narmai_uq_push(&q, (int32_t)unit_rand_below(&r, 8), (int32_t)unit_rand_below(&r, 16), i);
        if (!narmai_uq_pop(&q, (int32_t)unit_rand_below(&r, 8), (int32_t)unit_rand_below(&r, 16),
                           &s, &t, &b))
            found += narmai_uq_pop(&q, NARMA_ANY_SOURCE, NARMA_ANY_TAG, &s, &t, &b);
        else
            found++;
    }
    double dt = now_ns() - t0;
    CHECK(found == steps && q.count == 64, "the queue keeps 64 entries (%zu)", q.count);
    printf("uq fixed keys (8 sources x 16 tags, 64 queued): %.1f ns per push+pop\n",
           dt / (double)steps);
    narmai_uq_destroy(&q);
}

/* ---- the matching engine ---- */

/* A window with just what matching uses: the active list and the UQ. */
static void fake_win(struct narmai_win *w)
{
    memset(w, 0, sizeof *w);
    w->magic = NARMAI_WIN_MAGIC;
    narmau_dlist_init(&w->active_reqs);
    narmai_uq_init(&w->uq);
}

static struct narmai_request *new_req(struct narmai_win *w, int32_t src, int32_t tag,
                                      int32_t expected)
{
    struct narmai_request *r = narmai_request_new(NARMAI_REQ_NOTIFY, w);
    if (r == NULL) exit(1);
    r->state = NARMAI_REQ_INACTIVE; /* as NARMA_Notify_init leaves it */
    r->src = src;
    r->tag = tag;
    r->expected = expected;
    w->nreqs++;
    return r;
}

/* Model of one request. */
struct mreq {
    struct narmai_request *r;
    int state;
    int32_t src, tag, expected, matched;
    int32_t st_src, st_tag;
    int64_t st_bytes;
    uint64_t started; /* start stamp: the active list is ordered by it */
};

struct model {
    struct mreq *req;
    int nreq;
    struct model_uq uq;
    uint64_t clock;
    long contested; /* arrivals that had two or more candidate requests */
    long direct;    /* arrivals matched to an active request */
};

static void m_count(struct mreq *q, struct note n)
{
    q->st_src = n.src;
    q->st_tag = n.tag;
    q->st_bytes = n.bytes;
    if (++q->matched == q->expected) q->state = NARMAI_REQ_COMPLETE;
}

static void m_arrived(struct model *m, struct note n)
{
    struct mreq *best = NULL;
    int candidates = 0;
    for (int i = 0; i < m->nreq; i++) {
        struct mreq *q = &m->req[i];
        if (q->state != NARMAI_REQ_ACTIVE || !matches(q->src, q->tag, n.src, n.tag)) continue;
        candidates++;
        if (best == NULL || q->started < best->started) best = q;
    }
    m->contested += candidates > 1;
    m->direct += best != NULL;
    if (best != NULL)
        m_count(best, n);
    else
        muq_push(&m->uq, n.src, n.tag, n.bytes);
}

static void m_start(struct model *m, struct mreq *q)
{
    q->matched = 0;
    q->st_src = MPI_ANY_SOURCE;
    q->st_tag = MPI_ANY_TAG;
    q->st_bytes = 0;
    q->state = NARMAI_REQ_ACTIVE;
    q->started = ++m->clock;
    struct note n;
    while (q->state == NARMAI_REQ_ACTIVE && muq_pop(&m->uq, q->src, q->tag, &n))
        m_count(q, n);
}

static const char *state_name(int s)
{
    switch (s) {
    case NARMAI_REQ_INACTIVE:
        return "INACTIVE";
    case NARMAI_REQ_ACTIVE:
        return "ACTIVE";
    case NARMAI_REQ_COMPLETE:
        return "COMPLETE";
    case NARMAI_REQ_DEAD:
        return "DEAD";
    default:
        return "?";
    }
}

/* Compare every request, the active list (order included) and the UQ with
 * the model. full: compare the UQ entry by entry (else only its length). */
static int compare(struct narmai_win *w, struct model *m, long step, const char *what, int full)
{
    char when[160];
    snprintf(when, sizeof when, "step %ld (%s)", step, what);
    int ok = 1;
    for (int i = 0; i < m->nreq && ok; i++) {
        struct mreq *q = &m->req[i];
        struct narmai_request *r = q->r;
        ok &= CHECK(r->state == q->state, "%s: request %d (%d,%d,x%d) is %s, model %s", when, i,
                    q->src, q->tag, q->expected, state_name(r->state), state_name(q->state));
        if (!ok || q->state == NARMAI_REQ_INACTIVE) continue;
        ok &= CHECK(r->matched == q->matched, "%s: request %d matched %d, model %d", when, i,
                    r->matched, q->matched);
        ok &=
            CHECK(r->st_src == q->st_src && r->st_tag == q->st_tag && r->st_bytes == q->st_bytes,
                  "%s: request %d status (%d,%d,#%lld), model (%d,%d,#%lld)", when, i, r->st_src,
                  r->st_tag, (long long)r->st_bytes, q->st_src, q->st_tag, (long long)q->st_bytes);
    }
    /* The active list holds exactly the model's ACTIVE requests, in start order. */
    uint64_t last = 0;
    int nact = 0, mact = 0;
    narmau_dlist *pos, *tmp;
    narmau_dlist_foreach_safe(pos, tmp, &w->active_reqs)
    {
        struct narmai_request *r = narmau_container_of(pos, struct narmai_request, link);
        struct mreq *q = NULL;
        for (int i = 0; i < m->nreq; i++)
            if (m->req[i].r == r) q = &m->req[i];
        nact++;
        if (!(ok &= CHECK(q != NULL && q->state == NARMAI_REQ_ACTIVE,
                          "%s: the active list holds a request the model has %s", when,
                          q ? state_name(q->state) : "never made")))
            break;
        ok &= CHECK(q->started > last, "%s: the active list is not in start order", when);
        last = q->started;
        if (nact > m->nreq) break; /* corrupt list: do not loop forever */
    }
    for (int i = 0; i < m->nreq; i++)
        mact += m->req[i].state == NARMAI_REQ_ACTIVE;
    ok &= CHECK(nact == mact, "%s: %d requests on the active list, model %d", when, nact, mact);
    ok &= CHECK(w->uq.count == m->uq.n, "%s: UQ holds %zu, model %zu", when, w->uq.count, m->uq.n);
    if (ok && full) ok &= uq_equals_model(&w->uq, &m->uq, when);
    return ok;
}

static void test_engine_rules(void)
{
    struct narmai_win w;
    fake_win(&w);
    int32_t A = NARMA_ANY_SOURCE, T = NARMA_ANY_TAG;

    unit_phase("engine: an arrival goes to the oldest started request, not the most specific");
    struct narmai_request *any = new_req(&w, A, T, 1), *exact = new_req(&w, 1, 7, 1);
    narmai_notify_start(any);
    narmai_notify_start(exact);
    narmai_notify_arrived(&w, 1, 7, 10);
    CHECK(any->state == NARMAI_REQ_COMPLETE && any->st_src == 1 && any->st_tag == 7 &&
              any->st_bytes == 10,
          "the wildcard request started first takes it");
    CHECK(exact->state == NARMAI_REQ_ACTIVE && exact->matched == 0, "the exact one waits");
    narmai_notify_arrived(&w, 1, 7, 11);
    CHECK(exact->state == NARMAI_REQ_COMPLETE && exact->st_bytes == 11, "and takes the next");
    CHECK(narmau_dlist_empty(&w.active_reqs), "completed requests leave the active list");

    unit_phase("engine: a non-matching arrival waits in the UQ; Start consumes it");
    narmai_notify_arrived(&w, 2, 3, 20);
    CHECK(w.uq.count == 1, "UQ holds the unmatched notification");
    exact->state = NARMAI_REQ_INACTIVE; /* as Test/Wait leave a completed request */
    narmai_notify_start(exact);
    CHECK(exact->state == NARMAI_REQ_ACTIVE && w.uq.count == 1, "(1,7) does not take (2,3)");
    any->state = NARMAI_REQ_INACTIVE;
    narmai_notify_start(any);
    CHECK(any->state == NARMAI_REQ_COMPLETE && any->st_src == 2 && any->st_tag == 3 &&
              any->st_bytes == 20,
          "(*,*) started later takes it from the UQ at Start");
    CHECK(w.uq.count == 0, "UQ is empty again");

    unit_phase(
        "engine: Start takes at most expected_count, oldest first; status is the last match");
    narmai_notify_withdraw(exact);
    for (int i = 0; i < 5; i++)
        narmai_notify_arrived(&w, 4, i, 30 + i);
    struct narmai_request *three = new_req(&w, 4, T, 3);
    narmai_notify_start(three);
    CHECK(three->state == NARMAI_REQ_COMPLETE && three->matched == 3,
          "complete at Start with 3 matches");
    CHECK(three->st_tag == 2 && three->st_bytes == 32,
          "status is the 3rd oldest (tag 2), got tag %d", three->st_tag);
    CHECK(w.uq.count == 2, "two left in the UQ, got %zu", w.uq.count);

    unit_phase("engine: a partly satisfied Start stays active and counts later arrivals");
    three->state = NARMAI_REQ_INACTIVE;
    narmai_notify_start(three);
    CHECK(three->state == NARMAI_REQ_ACTIVE && three->matched == 2 && three->st_bytes == 34,
          "took the remaining two (status: the last, #34)");
    narmai_notify_arrived(&w, 5, 0, 40);
    CHECK(three->matched == 2 && w.uq.count == 1, "(5,0) does not match (4,*)");
    narmai_notify_arrived(&w, 4, 9, 41);
    CHECK(three->state == NARMAI_REQ_COMPLETE && three->st_tag == 9 && three->st_bytes == 41,
          "third match completes it with its status");

    unit_phase("engine: a withdrawn request matches nothing");
    struct narmai_request *wd = new_req(&w, 6, 6, 1);
    narmai_notify_start(wd);
    narmai_notify_withdraw(wd);
    CHECK(wd->state == NARMAI_REQ_INACTIVE && narmau_dlist_empty(&w.active_reqs),
          "withdrawn and unlinked");
    narmai_notify_arrived(&w, 6, 6, 50);
    CHECK(wd->matched == 0 && w.uq.count == 2, "the arrival goes to the UQ");

    unit_phase("engine: a started request with no match has the empty status");
    wd->st_src = 123;
    wd->st_tag = 456;
    wd->st_bytes = 789;
    struct narmai_request *none = wd;
    none->src = 7; /* nothing from 7 has arrived */
    narmai_notify_start(none);
    CHECK(none->state == NARMAI_REQ_ACTIVE && none->matched == 0 &&
              none->st_src == MPI_ANY_SOURCE && none->st_tag == MPI_ANY_TAG && none->st_bytes == 0,
          "status (%d,%d,%lld)", none->st_src, none->st_tag, (long long)none->st_bytes);
    narmai_notify_withdraw(none);

    narmai_request_release(any);
    narmai_request_release(exact);
    narmai_request_release(three);
    narmai_request_release(wd);
    narmai_uq_destroy(&w.uq);
}

/* Random interleavings of arrivals, Starts, completions observed by the
 * user (COMPLETE -> INACTIVE, as Test/Wait do), withdrawals and fresh match
 * specifications, compared with the model after every step. */
static void engine_random(uint64_t seed, long steps, int nreq)
{
    struct narmai_win w;
    fake_win(&w);
    struct model m = {0};
    m.nreq = nreq;
    m.req = calloc((size_t)nreq, sizeof *m.req);
    unit_rand r;
    unit_rand_seed(&r, seed);
    const int32_t nsrc = 4, ntag = 4;
    for (int i = 0; i < nreq; i++) {
        struct mreq *q = &m.req[i];
        q->state = NARMAI_REQ_INACTIVE;
        q->src = unit_rand_below(&r, 3) ? (int32_t)unit_rand_below(&r, nsrc) : NARMA_ANY_SOURCE;
        q->tag = unit_rand_below(&r, 3) ? (int32_t)unit_rand_below(&r, ntag) : NARMA_ANY_TAG;
        q->expected = 1 + (int32_t)unit_rand_below(&r, 3);
        q->r = new_req(&w, q->src, q->tag, q->expected);
    }
    int64_t next = 1;
    long counts[5] = {0};
    for (long step = 0; step < steps; step++) {
        const char *what;
        struct mreq *q = &m.req[unit_rand_below(&r, (uint32_t)nreq)];
        uint32_t dice = unit_rand_below(&r, 100);
        /* Fewer arrivals while the UQ is long, so that requests stay active
         * and arrivals meet them; half the arrivals aim at a request. */
        if (dice < (m.uq.n < 8 ? 40u : 10u)) {
            struct note n = {(int32_t)unit_rand_below(&r, nsrc), (int32_t)unit_rand_below(&r, ntag),
                             next++};
            if (unit_rand_below(&r, 2)) {
                if (q->src != NARMA_ANY_SOURCE) n.src = q->src;
                if (q->tag != NARMA_ANY_TAG) n.tag = q->tag;
            }
            narmai_notify_arrived(&w, n.src, n.tag, n.bytes);
            m_arrived(&m, n);
            what = "arrival";
            counts[0]++;
        } else if (dice < 70) {
            if (q->state != NARMAI_REQ_INACTIVE) continue; /* Start only inactive requests */
            CHECK(narmai_notify_start(q->r) == NARMA_SUCCESS, "start succeeds");
            m_start(&m, q);
            what = "start";
            counts[1]++;
        } else if (dice < 88) {
            if (q->state != NARMAI_REQ_COMPLETE) continue;
            q->r->state = NARMAI_REQ_INACTIVE; /* what Test/Wait do (request.c) */
            q->state = NARMAI_REQ_INACTIVE;
            what = "completion observed";
            counts[2]++;
        } else if (dice < 96) {
            narmai_notify_withdraw(q->r);
            q->state = NARMAI_REQ_INACTIVE;
            what = "withdraw";
            counts[3]++;
        } else {
            if (q->state != NARMAI_REQ_INACTIVE) continue;
            /* Free it and make a request with a new specification. */
            narmai_request_release(q->r);
            q->src = unit_rand_below(&r, 3) ? (int32_t)unit_rand_below(&r, nsrc) : NARMA_ANY_SOURCE;
            q->tag = unit_rand_below(&r, 3) ? (int32_t)unit_rand_below(&r, ntag) : NARMA_ANY_TAG;
            q->expected = 1 + (int32_t)unit_rand_below(&r, 3);
            q->r = new_req(&w, q->src, q->tag, q->expected);
            what = "new specification";
            counts[4]++;
        }
        if (!compare(&w, &m, step, what, step % 16 == 0)) break;
    }
    compare(&w, &m, steps, "end", 1);
    printf("engine seed %llu: %ld arrivals, %ld starts, %ld completions observed, %ld withdrawals, "
           "%ld new specifications; %ld arrivals matched directly (%ld with several candidates); "
           "UQ ends with %zu\n",
           (unsigned long long)seed, counts[0], counts[1], counts[2], counts[3], counts[4],
           m.direct, m.contested, m.uq.n);
    /* The sequence must exercise every rule; these floors catch a test that
     * silently stopped doing so (e.g. after a change of the mix above). */
    if (m.contested < 100 || counts[0] < steps / 50 || counts[1] < steps / 50 ||
        counts[2] < steps / 50 || counts[3] < steps / 50)
        CHECK(0,
              "the interleaving was too tame: %ld contested arrivals, %ld arrivals, %ld starts, "
              "%ld completions, %ld withdrawals",
              m.contested, counts[0], counts[1], counts[2], counts[3]);
    for (int i = 0; i < nreq; i++) {
        narmai_notify_withdraw(m.req[i].r);
        narmai_request_release(m.req[i].r);
    }
    narmai_uq_destroy(&w.uq);
    free(m.req);
    free(m.uq.v);
}

static void test_engine_random(void)
{
    unit_phase("engine: random interleavings, 6 requests");
    engine_random(99, 40000, 6);
    unit_phase("engine: random interleavings, 2 requests");
    engine_random(7, 40000, 2);
    unit_phase("engine: random interleavings, 16 requests (long active list)");
    engine_random(2024, 40000, 16);
}

int main(void)
{
    unit_begin(60); /* the sanitizer build on a loaded machine needs a few seconds */
    test_uq_basics();
    test_uq_random();
    test_uq_time_step_tags();
    test_uq_burst();
    test_uq_steady_timing();
    test_engine_rules();
    test_engine_random();
    return unit_done("test_match");
}
