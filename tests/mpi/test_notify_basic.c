/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Notified Access basics (paper, section III):
 *  - Listing 1: ping-pong with Put_notify + Win_flush + Start/Wait, data
 *    verified at 0, 1, 8, 31, 32, 33, 64, 4096 bytes and 1 MiB; the status
 *    names the partner and the tag, MPI_Get_count(MPI_BYTE) the size;
 *  - the same outside any epoch (a notified access is its own epoch), and
 *    inside fence, PSCW and lock epochs;
 *  - Get_notify: the target's notification means its buffer has been read,
 *    so overwriting it afterwards cannot change what the origin got;
 *  - Accumulate_notify, derived target types, zero-byte and self-targeted
 *    notified puts.
 * Ranks are paired (0,1), (2,3); with an odd count the last rank only joins
 * the collective calls.
 */
#include "common.h"

#define MAXB (1 << 20)

static int rank, size, partner, client, paired;
static unsigned char *win_mem, *sbuf;
static NARMA_Win win;

static const int sizes[] = {0, 1, 8, 31, 32, 33, 64, 4096, MAXB};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Zero-byte handshake with the partner: both have reached this point. */
static void pair_sync(void)
{
    MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, 3, NULL, 0, MPI_BYTE, partner, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

static void check_status(const MPI_Status *st, int src, int tag, int bytes, const char *what)
{
    CHECK(st->MPI_SOURCE == src, "%s: status source %d, expected %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: status tag %d, expected %d", what, st->MPI_TAG, tag);
    if (bytes >= 0)
        CHECK(test_byte_count(st) == bytes, "%s: MPI_Get_count %d bytes, expected %d", what,
              test_byte_count(st), bytes);
}

/* Listing 1, with or without a surrounding lock_all epoch and flushes. */
static void ping_pong(int in_lock_all, int iters)
{
    const int tag = in_lock_all ? 99 : 98;
    NARMA_Request req;
    MPI_Status st;
    if (!paired) return;
    CHECK_RC(NARMA_Notify_init(win, partner, tag, 1, &req));
    CHECK(req != NARMA_REQUEST_NULL, "Notify_init returned NARMA_REQUEST_NULL");
    if (in_lock_all) CHECK_RC(NARMA_Win_lock_all(0, win));
    for (int s = 0; s < NSIZES; s++) {
        const int n = sizes[s];
        for (int it = 0; it < iters; it++) {
            const uint32_t key = (uint32_t)(n * 16 + it + (in_lock_all << 30));
            char what[96];
            if (client) {
                test_fill(sbuf, n, rank, key);
                CHECK_RC(NARMA_Put_notify(sbuf, n, MPI_BYTE, partner, 0, n, MPI_BYTE, win, tag));
                /* Listing 1 flushes even with no epoch open; narma accepts that */
                CHECK_RC(NARMA_Win_flush(partner, win));
                /* the origin buffer is reusable once Put_notify returns */
                memset(sbuf, 0x5c, n);
                CHECK_RC(NARMA_Start(&req));
                CHECK_RC(NARMA_Wait(&req, &st));
                CHECK(req != NARMA_REQUEST_NULL, "Wait freed a persistent request");
                snprintf(what, sizeof what, "pong of %d bytes, iteration %d", n, it);
                check_status(&st, partner, tag, n, what);
                long bad = test_verify(win_mem + MAXB, n, partner, key);
                CHECK(bad < 0, "%s: byte %ld differs", what, bad);
            } else {
                CHECK_RC(NARMA_Start(&req));
                CHECK_RC(NARMA_Wait(&req, &st));
                snprintf(what, sizeof what, "ping of %d bytes, iteration %d", n, it);
                check_status(&st, partner, tag, n, what);
                long bad = test_verify(win_mem, n, partner, key);
                CHECK(bad < 0, "%s: byte %ld differs", what, bad);
                test_fill(sbuf, n, rank, key);
                CHECK_RC(NARMA_Put_notify(sbuf, n, MPI_BYTE, partner, MAXB, n, MPI_BYTE, win, tag));
                CHECK_RC(NARMA_Win_flush(partner, win));
            }
        }
    }
    if (in_lock_all) CHECK_RC(NARMA_Win_unlock_all(win));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK(req == NARMA_REQUEST_NULL, "Request_free did not reset the handle");
}

/* Get_notify: once the target sees the notification, the data has been read. */
static void get_notify(int in_lock_all)
{
    const int tag = 5 + in_lock_all, n = 4096;
    if (!paired) return;
    if (client) {
        unsigned char *got = malloc(n);
        memset(got, 0, n);
        if (in_lock_all) CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Get_notify(got, n, MPI_BYTE, partner, 0, n, MPI_BYTE, win, tag));
        if (in_lock_all) {
            CHECK_RC(NARMA_Win_flush(partner, win));
            CHECK_RC(NARMA_Win_unlock_all(win));
        }
        /* wait until the target has overwritten its buffer */
        MPI_Recv(NULL, 0, MPI_BYTE, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long bad = test_verify(got, n, partner, 0xA0 + tag);
        CHECK(bad < 0, "Get_notify: byte %ld is not the value from before the notification", bad);
        free(got);
    } else {
        NARMA_Request req;
        MPI_Status st;
        CHECK_RC(NARMA_Notify_init(win, partner, tag, 1, &req));
        CHECK_RC(NARMA_Start(&req));
        CHECK_RC(NARMA_Wait(&req, &st));
        check_status(&st, partner, tag, -1, "Get_notify notification");
        test_fill(win_mem, n, 0xdead, 0xbeef); /* the buffer may be overwritten now */
        MPI_Send(NULL, 0, MPI_BYTE, partner, 1, MPI_COMM_WORLD);
        CHECK_RC(NARMA_Request_free(&req));
    }
}

/* One notified put client->server inside an epoch of the given kind. */
static void in_epoch(const char *kind, int tag)
{
    const int n = 33;
    NARMA_Request req = NARMA_REQUEST_NULL;
    MPI_Status st;
    MPI_Group world, pg = MPI_GROUP_EMPTY;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (paired) MPI_Group_incl(world, 1, &partner, &pg);
    if (paired && !client) {
        CHECK_RC(NARMA_Notify_init(win, partner, tag, 1, &req));
        CHECK_RC(NARMA_Start(&req));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (!strcmp(kind, "fence"))
        CHECK_RC(NARMA_Win_fence(0, win));
    else if (!strcmp(kind, "pscw") && paired)
        CHECK_RC(client ? NARMA_Win_start(pg, 0, win) : NARMA_Win_post(pg, 0, win));
    else if (!strcmp(kind, "lock") && paired && client)
        CHECK_RC(NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, partner, 0, win));
    else if (!strcmp(kind, "lock_all"))
        CHECK_RC(NARMA_Win_lock_all(0, win));

    if (paired && client) {
        test_fill(sbuf, n, rank, tag);
        CHECK_RC(NARMA_Put_notify(sbuf, n, MPI_BYTE, partner, 100, n, MPI_BYTE, win, tag));
        /* a plain put in the same epoch does not disturb the notified one */
        CHECK_RC(NARMA_Put(sbuf, 4, MPI_BYTE, partner, 200, 4, MPI_BYTE, win));
    } else if (paired) {
        /* the notified access completes at the target without the epoch ending */
        CHECK_RC(NARMA_Wait(&req, &st));
        char what[64];
        snprintf(what, sizeof what, "notified put inside a %s epoch", kind);
        check_status(&st, partner, tag, n, what);
        long bad = test_verify(win_mem + 100, n, partner, tag);
        CHECK(bad < 0, "%s: byte %ld differs", what, bad);
    }

    if (!strcmp(kind, "fence"))
        CHECK_RC(NARMA_Win_fence(0, win));
    else if (!strcmp(kind, "pscw") && paired)
        CHECK_RC(client ? NARMA_Win_complete(win) : NARMA_Win_wait(win));
    else if (!strcmp(kind, "lock") && paired && client)
        CHECK_RC(NARMA_Win_unlock(partner, win));
    else if (!strcmp(kind, "lock_all"))
        CHECK_RC(NARMA_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (paired && !client) {
        long bad = test_verify(win_mem + 200, 4, partner, tag);
        CHECK(bad < 0, "plain put in a %s epoch: byte %ld differs", kind, bad);
        CHECK_RC(NARMA_Request_free(&req));
    }
    if (pg != MPI_GROUP_EMPTY) MPI_Group_free(&pg);
    MPI_Group_free(&world);
}

static void misc(void)
{
    NARMA_Request req;
    MPI_Status st;

    test_phase("Put_notify to self");
    {
        CHECK_RC(NARMA_Notify_init(win, rank, 300, 1, &req));
        CHECK_RC(NARMA_Start(&req));
        test_fill(sbuf, 40, rank, 300);
        CHECK_RC(NARMA_Put_notify(sbuf, 40, MPI_BYTE, rank, 3000, 40, MPI_BYTE, win, 300));
        CHECK_RC(NARMA_Wait(&req, &st));
        check_status(&st, rank, 300, 40, "self put");
        CHECK(test_verify(win_mem + 3000, 40, rank, 300) < 0, "self put data differs");
        CHECK_RC(NARMA_Request_free(&req));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!paired) return;

    test_phase("zero-byte Put_notify with a NULL origin buffer");
    if (client) {
        CHECK_RC(NARMA_Put_notify(NULL, 0, MPI_BYTE, partner, 0, 0, MPI_BYTE, win, 301));
    } else {
        CHECK_RC(NARMA_Notify_init(win, partner, 301, 1, &req));
        CHECK_RC(NARMA_Start(&req));
        CHECK_RC(NARMA_Wait(&req, &st));
        check_status(&st, partner, 301, 0, "zero-byte put");
        CHECK_RC(NARMA_Request_free(&req));
    }

    test_phase("Put_notify into a vector target type");
    {
        int *iw = (int *)(win_mem + 8192);
        MPI_Datatype vec;
        MPI_Type_vector(6, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        if (client) {
            int v[6] = {11, 22, 33, 44, 55, 66};
            pair_sync(); /* the target has initialised its memory */
            CHECK_RC(NARMA_Put_notify(v, 6, MPI_INT, partner, 8192, 1, vec, win, 302));
        } else {
            for (int i = 0; i < 12; i++)
                iw[i] = -1;
            pair_sync();
            CHECK_RC(NARMA_Notify_init(win, partner, 302, 1, &req));
            CHECK_RC(NARMA_Start(&req));
            CHECK_RC(NARMA_Wait(&req, &st));
            check_status(&st, partner, 302, 6 * (int)sizeof(int), "vector put");
            for (int i = 0; i < 12; i++) {
                int want = i % 2 ? -1 : 11 * (i / 2 + 1);
                CHECK(iw[i] == want, "vector put element %d = %d, expected %d", i, iw[i], want);
            }
            CHECK_RC(NARMA_Request_free(&req));
        }
        MPI_Type_free(&vec);
    }

    test_phase("Accumulate_notify");
    {
        int *iw = (int *)(win_mem + 16384);
        if (!client) {
            iw[0] = 1;
            iw[1] = 2;
            iw[2] = 3;
            CHECK_RC(NARMA_Notify_init(win, partner, 303, 2, &req));
            CHECK_RC(NARMA_Start(&req));
        }
        pair_sync();
        if (client) {
            int v[3] = {10, 20, 30};
            CHECK_RC(NARMA_Accumulate_notify(v, 3, MPI_INT, partner, 16384, 3, MPI_INT, NARMA_SUM,
                                             win, 303));
            CHECK_RC(NARMA_Accumulate_notify(v, 3, MPI_INT, partner, 16384, 3, MPI_INT, NARMA_SUM,
                                             win, 303));
        } else {
            CHECK_RC(NARMA_Wait(&req, &st));
            check_status(&st, partner, 303, -1, "Accumulate_notify");
            CHECK(iw[0] == 21 && iw[1] == 42 && iw[2] == 63,
                  "Accumulate_notify left {%d,%d,%d}, expected {21,42,63}", iw[0], iw[1], iw[2]);
            CHECK_RC(NARMA_Request_free(&req));
        }
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_basic", 50);
    rank = test_rank;
    size = test_size;
    partner = rank ^ 1;
    paired = partner < size;
    client = rank % 2 == 0;

    CHECK_RC(NARMA_Win_allocate(2 * MAXB, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win));
    test_expect_transport(win);
    memset(win_mem, 0, 2 * MAXB);
    sbuf = malloc(MAXB);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("Listing 1 ping-pong in lock_all with Win_flush");
    ping_pong(1, 4);
    MPI_Barrier(MPI_COMM_WORLD);
    test_phase("ping-pong outside any epoch (Listing 1 verbatim: flush with no epoch)");
    ping_pong(0, 4);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("Get_notify outside any epoch");
    test_fill(win_mem, 4096, rank, 0xA0 + 5);
    MPI_Barrier(MPI_COMM_WORLD);
    get_notify(0);
    MPI_Barrier(MPI_COMM_WORLD);
    test_phase("Get_notify inside lock_all");
    test_fill(win_mem, 4096, rank, 0xA0 + 6);
    MPI_Barrier(MPI_COMM_WORLD);
    get_notify(1);
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("notified put inside a fence epoch");
    in_epoch("fence", 401);
    test_phase("notified put inside a PSCW epoch");
    in_epoch("pscw", 402);
    test_phase("notified put inside an exclusive lock epoch");
    in_epoch("lock", 403);
    test_phase("notified put inside a lock_all epoch");
    in_epoch("lock_all", 404);

    misc();

    MPI_Barrier(MPI_COMM_WORLD);
    free(sbuf);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
