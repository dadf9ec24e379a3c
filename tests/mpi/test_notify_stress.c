/* narma-test: np=4 transports=shm,mpi timeout=180 */
/*
 * Notified-put stress: >= 100k notified puts in total (NARMA_STRESS_MSGS)
 * with random targets (self included), random tags (0..4 and NARMA_TAG_UB)
 * and random sizes (0, 1..15, 16..32, 33..512, 513..8192 bytes).
 *
 * Every rank computes the same plan from a shared seed (NARMA_STRESS_SEED),
 * so each target knows in advance how many notifications of each
 * (source, tag) it receives and where each payload lies: every message has
 * its own place in the target window, so nothing is ever overwritten.
 * Payloads of 16 bytes or more carry {origin, sequence, length, checksum};
 * shorter ones are a pattern of (origin, sequence).
 *
 * Each rank sends its plan in order and polls its requests with Testsome
 * between sends. The requests overlap: one per (source, tag), one per source
 * with ANY_TAG, ANY_SOURCE for two tags, and one ANY_SOURCE/ANY_TAG, all
 * count 1 and restarted after each completion. Within one Testsome call the
 * completions are processed in the order their requests were started (the
 * oldest started active request matches first), which must reproduce the
 * per-(origin, tag) send order exactly.
 *
 * Loss is detected without hanging: once an MPI_Ibarrier shows every rank
 * has finished sending, all notifications are complete at their targets,
 * so a long run of empty polls with notifications still missing is a
 * failure that names what is missing. Duplicates are caught by polling
 * the still-active requests after everything expected has arrived.
 */
#include "common.h"

#define NT 6
static const int tags[NT] = {0, 1, 2, 3, 4, NARMA_TAG_UB};

struct msg {
    int target;
    int tagi;
    int len;
    int64_t off;
};

struct req {
    int src;  /* rank or NARMA_ANY_SOURCE */
    int tagi; /* index or -1 for ANY_TAG */
    uint64_t started;
};

static int rank, size;

static int tag_index(int tag)
{
    for (int i = 0; i < NT; i++)
        if (tags[i] == tag) return i;
    return -1;
}

static uint32_t checksum(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static void make_payload(unsigned char *buf, int len, int origin, int seq)
{
    if (len < 16) {
        test_fill(buf, len, origin, seq);
        return;
    }
    test_fill(buf + 16, len - 16, origin, seq);
    uint32_t h[4] = {0xA5000000u | (uint32_t)origin, (uint32_t)seq, (uint32_t)len,
                     checksum(buf + 16, len - 16)};
    memcpy(buf, h, 16);
}

static void check_payload(const unsigned char *p, int len, int origin, int seq, int tag, int k)
{
    if (len < 16) {
        long bad = test_verify(p, len, origin, seq);
        CHECK(bad < 0, "(source %d, tag %d) #%d, seq %d, %d bytes: byte %ld differs", origin, tag,
              k, seq, len, bad);
        return;
    }
    uint32_t h[4];
    memcpy(h, p, 16);
    CHECK(h[0] == (0xA5000000u | (uint32_t)origin) && h[1] == (uint32_t)seq &&
              h[2] == (uint32_t)len,
          "(source %d, tag %d) #%d: header says origin %u seq %u len %u, expected origin %d seq %d "
          "len %d (out of order, or data not yet visible at notification time)",
          origin, tag, k, h[0] & 0xffffff, h[1], h[2], origin, seq, len);
    CHECK(h[3] == checksum(p + 16, len - 16), "(source %d, tag %d) seq %d: checksum mismatch",
          origin, tag, seq);
    long bad = test_verify(p + 16, len - 16, origin, seq);
    CHECK(bad < 0, "(source %d, tag %d) seq %d: body byte %ld differs", origin, tag, seq, bad);
}

static int draw_len(uint64_t *rng)
{
    int c = (int)(test_rand(rng) % 100);
    if (c < 5) return 0;
    if (c < 20) return 1 + (int)(test_rand(rng) % 15);
    if (c < 55) return 16 + (int)(test_rand(rng) % 17);
    if (c < 92) return 33 + (int)(test_rand(rng) % 480);
    return 513 + (int)(test_rand(rng) % 7680);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_stress", 170);
    rank = test_rank;
    size = test_size;
    const long total = env_long("NARMA_STRESS_MSGS", 100000);
    const int M = (int)((total + size - 1) / size); /* messages per origin */
    uint64_t rng = (uint64_t)env_long("NARMA_STRESS_SEED", 20150525);

    test_phase("plan");
    struct msg *plan = malloc((size_t)size * M * sizeof *plan);
    int64_t *inbytes = calloc(size, sizeof *inbytes);
    for (int o = 0; o < size; o++)
        for (int i = 0; i < M; i++) {
            struct msg *m = &plan[(size_t)o * M + i];
            m->target = (int)(test_rand(&rng) % size);
            m->tagi = (int)(test_rand(&rng) % NT);
            m->len = draw_len(&rng);
            m->off = inbytes[m->target];
            inbytes[m->target] += (m->len + 7) & ~7;
        }
    /* per (source, tag): the plan indices arriving here, in send order */
    int *expect_n = calloc((size_t)size * NT, sizeof(int));
    int *consumed = calloc((size_t)size * NT, sizeof(int));
    int **expect_i = calloc((size_t)size * NT, sizeof(int *));
    long expected_total = 0;
    for (int s = 0; s < size; s++)
        for (int i = 0; i < M; i++) {
            const struct msg *m = &plan[(size_t)s * M + i];
            if (m->target == rank) expect_n[s * NT + m->tagi]++;
        }
    for (int q = 0; q < size * NT; q++) {
        expect_i[q] = malloc((expect_n[q] + 1) * sizeof(int));
        expected_total += expect_n[q];
        expect_n[q] = 0;
    }
    for (int s = 0; s < size; s++)
        for (int i = 0; i < M; i++) {
            const struct msg *m = &plan[(size_t)s * M + i];
            if (m->target == rank) {
                int q = s * NT + m->tagi;
                expect_i[q][expect_n[q]++] = i;
            }
        }

    unsigned char *mem;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate(inbytes[rank] + 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_expect_transport(win);

    test_phase("requests");
    const int nreq = size * NT + size + 2 + 1;
    NARMA_Request *R = malloc(nreq * sizeof *R);
    struct req *D = malloc(nreq * sizeof *D);
    int n = 0;
    for (int s = 0; s < size; s++)
        for (int t = 0; t < NT; t++)
            D[n++] = (struct req){s, t, 0};
    for (int s = 0; s < size; s++)
        D[n++] = (struct req){s, -1, 0};
    D[n++] = (struct req){NARMA_ANY_SOURCE, 0, 0};
    D[n++] = (struct req){NARMA_ANY_SOURCE, 3, 0};
    D[n++] = (struct req){NARMA_ANY_SOURCE, -1, 0};
    uint64_t start_seq = 0;
    for (int j = 0; j < nreq; j++) {
        CHECK_RC(NARMA_Notify_init(win, D[j].src, D[j].tagi < 0 ? NARMA_ANY_TAG : tags[D[j].tagi],
                                   1, &R[j]));
        CHECK_RC(NARMA_Start(&R[j]));
        D[j].started = ++start_seq;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int *idx = malloc(nreq * sizeof(int));
    MPI_Status *sts = malloc(nreq * sizeof(MPI_Status));
    int *order = malloc(nreq * sizeof(int));
    unsigned char *buf = malloc(8192 + 16);
    long received = 0;
    int sent = 0, sends_done = 0, all_sent = 0;
    long idle_polls = 0;
    MPI_Request ibarrier = MPI_REQUEST_NULL;

    test_phase("send and receive");
    while (received < expected_total || !all_sent) {
        if (sent < M) {
            const struct msg *m = &plan[(size_t)rank * M + sent];
            make_payload(buf, m->len, rank, sent);
            CHECK_RC(NARMA_Put_notify(buf, m->len, MPI_BYTE, m->target, m->off, m->len, MPI_BYTE,
                                      win, tags[m->tagi]));
            sent++;
        } else if (!sends_done) {
            sends_done = 1;
            MPI_Ibarrier(MPI_COMM_WORLD, &ibarrier);
        } else if (!all_sent) {
            MPI_Test(&ibarrier, &all_sent, MPI_STATUS_IGNORE);
        }

        int outcount = 0;
        CHECK_RC(NARMA_Testsome(nreq, R, &outcount, idx, sts));
        CHECK(outcount != MPI_UNDEFINED, "Testsome found no active request");
        if (outcount == 0) {
            if (all_sent && ++idle_polls > 200000) {
                for (int q = 0; q < size * NT; q++)
                    if (consumed[q] != expect_n[q])
                        fprintf(stderr, "rank %d: from (source %d, tag %d) got %d of %d\n", rank,
                                q / NT, tags[q % NT], consumed[q], expect_n[q]);
                CHECK(0, "%ld of %ld notifications never matched although every origin finished",
                      expected_total - received, expected_total);
            }
            continue;
        }
        idle_polls = 0;
        /* process in start order: the oldest started request matched first */
        for (int a = 0; a < outcount; a++)
            order[a] = a;
        for (int a = 1; a < outcount; a++)
            for (int b = a; b > 0 && D[idx[order[b]]].started < D[idx[order[b - 1]]].started; b--) {
                int x = order[b];
                order[b] = order[b - 1];
                order[b - 1] = x;
            }
        for (int a = 0; a < outcount; a++) {
            const int j = idx[order[a]];
            const MPI_Status *st = &sts[order[a]];
            const int s = st->MPI_SOURCE, ti = tag_index(st->MPI_TAG);
            CHECK(s >= 0 && s < size && ti >= 0, "status (source %d, tag %d) is not a sent pair", s,
                  st->MPI_TAG);
            CHECK((D[j].src == NARMA_ANY_SOURCE || D[j].src == s) &&
                      (D[j].tagi < 0 || D[j].tagi == ti),
                  "request (source %d, tag %d) matched (source %d, tag %d)", D[j].src,
                  D[j].tagi < 0 ? -1 : tags[D[j].tagi], s, st->MPI_TAG);
            const int q = s * NT + ti, k = consumed[q]++;
            CHECK(k < expect_n[q], "more than %d notifications from (source %d, tag %d): duplicate",
                  expect_n[q], s, st->MPI_TAG);
            const int seq = expect_i[q][k];
            const struct msg *m = &plan[(size_t)s * M + seq];
            CHECK(test_byte_count(st) == m->len,
                  "(source %d, tag %d) #%d: MPI_Get_count %d, planned length %d (seq %d)", s,
                  st->MPI_TAG, k, test_byte_count(st), m->len, seq);
            check_payload(mem + m->off, m->len, s, seq, st->MPI_TAG, k);
            received++;
            CHECK_RC(NARMA_Start(&R[j]));
            D[j].started = ++start_seq;
        }
        if ((received & 1023) == 0)
            snprintf(test_detail, sizeof test_detail, "sent %d/%d, received %ld/%ld", sent, M,
                     received, expected_total);
    }

    test_phase("no duplicates after everything arrived");
    for (int p = 0; p < 2000; p++) {
        int outcount = 0;
        CHECK_RC(NARMA_Testsome(nreq, R, &outcount, idx, sts));
        CHECK(outcount == 0, "an extra notification (source %d, tag %d) arrived after all %ld",
              sts[0].MPI_SOURCE, sts[0].MPI_TAG, expected_total);
    }

    test_phase("global counts");
    long counts[2] = {sent, received}, sums[2];
    MPI_Allreduce(counts, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sums[0] == sums[1] && sums[0] == (long)M * size,
          "globally sent %ld, received %ld, planned %ld", sums[0], sums[1], (long)M * size);
    if (rank == 0) printf("# %ld notified puts verified\n", sums[1]);

    test_phase("free active requests and the window");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int j = 0; j < nreq; j++)
        CHECK_RC(NARMA_Request_free(&R[j]));
    CHECK_RC(NARMA_Win_free(&win));

    for (int q = 0; q < size * NT; q++)
        free(expect_i[q]);
    free(expect_i);
    free(expect_n);
    free(consumed);
    free(plan);
    free(inbytes);
    free(R);
    free(D);
    free(idx);
    free(sts);
    free(order);
    free(buf);
    return test_finish();
}
