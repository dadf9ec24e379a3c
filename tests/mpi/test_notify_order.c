/* narma-test: np=2,3,4 transports=shm,mpi timeout=90 */
/*
 * A notified access forms its own epoch (paper, section III): when
 * NARMA_Put_notify returns, the data is at the target, so every later access
 * of the same origin sees it and is ordered after it, whether or not the
 * target has matched the notification yet. Small notified puts must obey this
 * like large ones (0.1.0 carried puts of <= 40 bytes inside the ring record and
 * wrote them only when the target drained its ring, so a later access of the
 * origin was overtaken by the older value).
 *
 * The last rank is the target; every other rank is an origin working on its
 * own slot of the target's window. While the origins run a case the target
 * sits in MPI_Barrier and calls no narma function, so it drains nothing; it
 * then matches the case's notifications and checks its memory.
 *
 * For each later access kind K of the same origin (put, get, accumulate,
 * get_accumulate, fetch_and_op, compare_and_swap, get_notify,
 * accumulate_notify, a larger put_notify covering the slot, a small one
 * covering it) and each ordering mode:
 *   - "alone": Put_notify outside any epoch, then K (in its own lock epoch
 *     unless K is notified);
 *   - "flush": inside lock_all, Put_notify, Win_flush, K, Win_flush;
 *   - "before": K first, then the small Put_notify (the reverse order);
 * the origin checks what K returned, the target checks the final value.
 * Then small notified puts (1..40 bytes) in the middle of a region that a
 * later plain Put of the same origin overwrites: the region ends as the Put
 * left it.
 */
#include "common.h"

#define SLOT(o)   ((MPI_Aint)(64 * (o)))         /* one int64 per origin, own line */
#define REGION(o) ((MPI_Aint)(4096 + 256 * (o))) /* 256 bytes per origin */
#define WIN_BYTES (4096 + 256 * 4 + 4096)

enum kind {
    K_PUT,
    K_GET,
    K_ACC,
    K_GACC,
    K_FOP,
    K_CAS,
    K_GETN,
    K_ACCN,
    K_PUTN_BIG,
    K_PUTN_SMALL,
    NKINDS
};
static const char *const kind_name[NKINDS] = {"put",
                                              "get",
                                              "accumulate",
                                              "get_accumulate",
                                              "fetch_and_op",
                                              "compare_and_swap",
                                              "get_notify",
                                              "accumulate_notify",
                                              "put_notify(64 B covering)",
                                              "put_notify(16 B covering)"};
enum mode { M_ALONE, M_FLUSH, M_BEFORE, NMODES };
static const char *const mode_name[NMODES] = {"alone", "flush", "before"};

enum { TAG_A = 1, TAG_B = 2 };
static const int64_t V0 = 1000, V1 = 2000, V2 = 3000, INC = 5;

static int rank, size, target, origin;
static unsigned char *mem;
static NARMA_Win win;

static int notified(enum kind k) { return k >= K_GETN; }

/* The later access K; *got receives what it read, if anything. */
static void do_kind(enum kind k, int64_t *got)
{
    const MPI_Aint x = SLOT(rank);
    int64_t v2 = V2, inc = INC, cmp = V1, big[8];
    switch (k) {
    case K_PUT:
        CHECK_RC(NARMA_Put(&v2, 1, MPI_INT64_T, target, x, 1, MPI_INT64_T, win));
        break;
    case K_GET:
        CHECK_RC(NARMA_Get(got, 1, MPI_INT64_T, target, x, 1, MPI_INT64_T, win));
        break;
    case K_ACC:
        CHECK_RC(NARMA_Accumulate(&inc, 1, MPI_INT64_T, target, x, 1, MPI_INT64_T, MPI_SUM, win));
        break;
    case K_GACC:
        CHECK_RC(NARMA_Get_accumulate(&inc, 1, MPI_INT64_T, got, 1, MPI_INT64_T, target, x, 1,
                                      MPI_INT64_T, MPI_SUM, win));
        break;
    case K_FOP:
        CHECK_RC(NARMA_Fetch_and_op(&inc, got, MPI_INT64_T, target, x, MPI_SUM, win));
        break;
    case K_CAS:
        CHECK_RC(NARMA_Compare_and_swap(&v2, &cmp, got, MPI_INT64_T, target, x, win));
        break;
    case K_GETN:
        CHECK_RC(NARMA_Get_notify(got, 1, MPI_INT64_T, target, x, 1, MPI_INT64_T, win, TAG_B));
        break;
    case K_ACCN:
        CHECK_RC(NARMA_Accumulate_notify(&inc, 1, MPI_INT64_T, target, x, 1, MPI_INT64_T, MPI_SUM,
                                         win, TAG_B));
        break;
    case K_PUTN_BIG: /* the origin's whole line: more than 0.1.0 carried in a record */
        for (int i = 0; i < 8; i++)
            big[i] = i == 0 ? V2 : -1;
        CHECK_RC(NARMA_Put_notify(big, 64, MPI_BYTE, target, x, 64, MPI_BYTE, win, TAG_B));
        break;
    case K_PUTN_SMALL:
        big[0] = V2;
        big[1] = -1;
        CHECK_RC(NARMA_Put_notify(big, 16, MPI_BYTE, target, x, 16, MPI_BYTE, win, TAG_B));
        break;
    default:
        break;
    }
}

/* What the slot holds once both accesses are done, and what K must have read. */
static void expected(enum kind k, enum mode m, int64_t *final, int64_t *read)
{
    const int64_t before = m == M_BEFORE ? V0 : V1; /* the value K finds */
    *read = before;
    switch (k) {
    case K_PUT:
    case K_CAS:
    case K_PUTN_SMALL:
    case K_PUTN_BIG:
        *final = V2;
        break;
    case K_ACC:
    case K_GACC:
    case K_FOP:
    case K_ACCN:
        *final = before + INC;
        break;
    default:
        *final = before;
        break;
    }
    if (m == M_BEFORE) *final = V1; /* the small Put_notify came last (a CAS found V0 != V1) */
}

static void small_put_notify(void)
{
    int64_t v1 = V1;
    CHECK_RC(NARMA_Put_notify(&v1, 1, MPI_INT64_T, target, SLOT(rank), 1, MPI_INT64_T, win, TAG_A));
}

static void origin_case(enum kind k, enum mode m)
{
    int64_t got = -7, final, want;
    const int plain = !notified(k);
    expected(k, m, &final, &want);
    if (m == M_FLUSH) CHECK_RC(NARMA_Win_lock_all(0, win));
    if (m != M_BEFORE) {
        small_put_notify();
        if (m == M_FLUSH) CHECK_RC(NARMA_Win_flush(target, win));
    }
    if (m != M_FLUSH && plain) CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    do_kind(k, &got);
    if (m != M_FLUSH && plain) CHECK_RC(NARMA_Win_unlock(target, win));
    if (m == M_FLUSH) CHECK_RC(NARMA_Win_flush(target, win));
    if (m == M_BEFORE) small_put_notify();
    if (m == M_FLUSH) CHECK_RC(NARMA_Win_unlock_all(win));
    if (k == K_GET || k == K_GACC || k == K_FOP || k == K_CAS || k == K_GETN)
        CHECK(got == want, "%s read %lld, expected %lld", kind_name[k], (long long)got,
              (long long)want);
}

static void match(int src, int tag)
{
    NARMA_Request req;
    MPI_Status st;
    CHECK_RC(NARMA_Notify_init(win, src, tag, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag, "status <%d,%d>, expected <%d,%d>",
          st.MPI_SOURCE, st.MPI_TAG, src, tag);
    CHECK_RC(NARMA_Request_free(&req));
}

static void run_case(enum kind k, enum mode m)
{
    char phase[128];
    snprintf(phase, sizeof phase, "%s then %s (%s)", m == M_BEFORE ? kind_name[k] : "put_notify",
             m == M_BEFORE ? "put_notify" : kind_name[k], mode_name[m]);
    test_phase(phase);
    if (rank == target) {
        for (int o = 0; o < size - 1; o++) {
            int64_t v0 = V0;
            memcpy(mem + SLOT(o), &v0, sizeof v0);
            memset(mem + SLOT(o) + 8, 0, 56);
        }
        CHECK_RC(NARMA_Win_sync(win));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* slots reset */
    if (origin) origin_case(k, m);
    MPI_Barrier(MPI_COMM_WORLD); /* every origin is done; the target has drained nothing */
    if (rank == target) {
        for (int o = 0; o < size - 1; o++) {
            int64_t final, want, have;
            expected(k, m, &final, &want);
            if (m == M_BEFORE && notified(k)) {
                match(o, TAG_B);
                match(o, TAG_A);
            } else {
                match(o, TAG_A);
                if (notified(k)) match(o, TAG_B);
            }
            memcpy(&have, mem + SLOT(o), sizeof have);
            CHECK(have == final, "origin %d: slot holds %lld, expected %lld", o, (long long)have,
                  (long long) final);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Small notified puts in the middle of a region, then a plain Put of the whole region. */
static void run_region(int flush)
{
    static const int offs[] = {0, 60, 100, 216}, lens[] = {1, 8, 40, 40};
    const int n = (int)(sizeof offs / sizeof offs[0]);
    unsigned char small[40], whole[256];
    test_phase(flush ? "small put_notify inside a region, then Put (flush)"
                     : "small put_notify inside a region, then Put");
    if (rank == target) {
        memset(mem + REGION(0), 0, 256 * 4);
        CHECK_RC(NARMA_Win_sync(win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (origin) {
        if (flush) CHECK_RC(NARMA_Win_lock_all(0, win));
        for (int i = 0; i < n; i++) {
            test_fill(small, (size_t)lens[i], (uint32_t)rank, 100u + (uint32_t)i);
            CHECK_RC(NARMA_Put_notify(small, lens[i], MPI_BYTE, target, REGION(rank) + offs[i],
                                      lens[i], MPI_BYTE, win, TAG_A));
            if (flush) CHECK_RC(NARMA_Win_flush(target, win));
        }
        test_fill(whole, sizeof whole, (uint32_t)rank, 7);
        if (!flush) CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        CHECK_RC(NARMA_Put(whole, 256, MPI_BYTE, target, REGION(rank), 256, MPI_BYTE, win));
        if (!flush) CHECK_RC(NARMA_Win_unlock(target, win));
        if (flush) CHECK_RC(NARMA_Win_flush(target, win));
        /* The origin reads back what it wrote last. */
        unsigned char back[256];
        memset(back, 0, sizeof back);
        if (!flush) CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        CHECK_RC(NARMA_Get(back, 256, MPI_BYTE, target, REGION(rank), 256, MPI_BYTE, win));
        if (!flush) CHECK_RC(NARMA_Win_unlock(target, win));
        if (flush) CHECK_RC(NARMA_Win_unlock_all(win));
        long bad = test_verify(back, sizeof back, (uint32_t)rank, 7);
        CHECK(bad < 0, "origin's Get after its Put: byte %ld is not the Put's", bad);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        for (int o = 0; o < size - 1; o++) {
            NARMA_Request req;
            MPI_Status st;
            CHECK_RC(NARMA_Notify_init(win, o, TAG_A, n, &req));
            CHECK_RC(NARMA_Start(&req));
            CHECK_RC(NARMA_Wait(&req, &st));
            CHECK_RC(NARMA_Request_free(&req));
            long bad = test_verify(mem + REGION(o), 256, (uint32_t)o, 7);
            CHECK(bad < 0, "origin %d: region byte %ld is not the later Put's", o, bad);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_order", 80);
    rank = test_rank;
    size = test_size;
    target = size - 1;
    origin = rank != target;
    CHECK(size <= 5, "the window holds slots for at most 4 origins");
    CHECK_RC(NARMA_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_expect_transport(win);
    for (int m = 0; m < NMODES; m++)
        for (int k = 0; k < NKINDS; k++)
            run_case((enum kind)k, (enum mode)m);
    run_region(0);
    run_region(1);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
