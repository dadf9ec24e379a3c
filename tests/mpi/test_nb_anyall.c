/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Epoch requests and notification requests complete through the same
 * Test/Wait families. Each rank exposes to its left neighbour and accesses
 * its right one; the array mixes the exposure's iwait request, the access
 * epoch's icomplete request, the (already complete) opening requests and a
 * persistent notification request for a Put_notify from the left.
 *  - Testall is false while the left neighbour has not started (it waits for
 *    our message) and Testany finds only the complete opening request;
 *  - then Waitany / Testany loops / Waitall / Testall loops, in turn, drain
 *    the array; the data behind each request is checked when it completes,
 *    and the notification's status names its source and tag.
 */
#include "common.h"

#define N 6
enum { I_POST, I_START, I_WAIT, I_COMPLETE, I_NOTIFY, NREQ };
enum { D_EPOCH = 0, D_NOTIFY = N, WN = 2 * N, TAG_GO = 3, NTAG = 55 };

static int rank, size, right, left;
static int *base;
static NARMA_Win win;

static int val(int round, int origin, int i) { return 100000 * (round + 1) + 100 * origin + i; }
static void check_block(int disp, int round, const char *what)
{
    for (int i = 0; i < N; i++)
        CHECK(base[disp + i] == val(round, left, i) + disp, "%s, round %d: word %d = %d", what,
              round, i, base[disp + i]);
}

/* Checks when request `idx` completed (exposure data, notified data, statuses). */
static void on_complete(int idx, const MPI_Status *st, int round)
{
    if (idx == I_WAIT) check_block(D_EPOCH, round, "epoch data when iwait completed");
    if (idx == I_NOTIFY) {
        check_block(D_NOTIFY, round, "notified data when the notification completed");
        CHECK(st->MPI_SOURCE == left && st->MPI_TAG == NTAG, "notification status %d/%d",
              st->MPI_SOURCE, st->MPI_TAG);
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_nb_anyall", 25);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Group wg, to, from;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, 1, &right, &to);
    MPI_Group_incl(wg, 1, &left, &from);
    CHECK_RC(NARMA_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &win));
    NARMA_Request notify;
    CHECK_RC(NARMA_Notify_init(win, left, NTAG, 1, &notify));
    MPI_Barrier(MPI_COMM_WORLD);
    static const char *modes[4] = {"Waitany", "Testany", "Waitall", "Testall"};
    int out[2][N];

    for (int round = 0; round < 40; round++) {
        const int mode = round % 4;
        test_phase(modes[mode]);
        snprintf(test_detail, sizeof test_detail, "round %d", round);
        NARMA_Request req[NREQ];
        MPI_Status st[NREQ];
        int flag, idx;
        /* Target side first: nothing can complete but the opening request. */
        CHECK_RC(NARMA_Win_ipost(from, 0, win, &req[I_POST]));
        CHECK_RC(NARMA_Start(&notify));
        req[I_NOTIFY] = notify;
        req[I_START] = req[I_COMPLETE] = req[I_WAIT] = NARMA_REQUEST_NULL;
        CHECK_RC(NARMA_Testall(NREQ, req, &flag, st));
        CHECK(!flag, "Testall true before the origin started");
        CHECK_RC(NARMA_Testany(NREQ, req, &idx, &flag, &st[0]));
        CHECK(flag && idx == I_POST, "Testany gave flag %d index %d, expected the ipost request",
              flag, idx);
        CHECK(req[I_POST] == NARMA_REQUEST_NULL, "Testany did not free the completed request");
        /* Now let the left neighbour (our origin) go; wait for our own go as an origin. */
        MPI_Request sreq;
        MPI_Isend(NULL, 0, MPI_BYTE, left, TAG_GO, MPI_COMM_WORLD, &sreq);
        for (flag = 0; !flag;) {
            CHECK_RC(NARMA_Progress());
            MPI_Iprobe(right, TAG_GO, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        MPI_Recv(NULL, 0, MPI_BYTE, right, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            out[0][i] = val(round, rank, i) + D_EPOCH;
            out[1][i] = val(round, rank, i) + D_NOTIFY;
        }
        CHECK_RC(NARMA_Win_istart(to, 0, win, &req[I_START]));
        CHECK_RC(NARMA_Put(out[0], N, MPI_INT, right, D_EPOCH, N, MPI_INT, win));
        CHECK_RC(NARMA_Win_icomplete(win, &req[I_COMPLETE]));
        /* iwait after istart: an exposure closed before the access epoch opened would
         * have to complete first (epochs activate in order), and in a ring nobody could. */
        CHECK_RC(NARMA_Win_iwait(win, &req[I_WAIT]));
        CHECK_RC(NARMA_Put_notify(out[1], N, MPI_INT, right, D_NOTIFY, N, MPI_INT, win, NTAG));

        int seen = 0;
        switch (mode) {
        case 0: /* Waitany until every request is done */
            for (;;) {
                CHECK_RC(NARMA_Waitany(NREQ, req, &idx, &st[0]));
                if (idx == MPI_UNDEFINED) break;
                CHECK(!(seen & (1 << idx)), "Waitany returned index %d twice", idx);
                seen |= 1 << idx;
                on_complete(idx, &st[0], round);
            }
            break;
        case 1: /* Testany polling */
            for (;;) {
                CHECK_RC(NARMA_Testany(NREQ, req, &idx, &flag, &st[0]));
                if (!flag) continue;
                if (idx == MPI_UNDEFINED) break;
                seen |= 1 << idx;
                on_complete(idx, &st[0], round);
            }
            break;
        case 2:
            CHECK_RC(NARMA_Waitall(NREQ, req, st));
            seen = (1 << NREQ) - 1 - (1 << I_POST);
            for (int i = 0; i < NREQ; i++)
                if (i != I_POST) on_complete(i, &st[i], round);
            break;
        default:
            for (flag = 0; !flag;)
                CHECK_RC(NARMA_Testall(NREQ, req, &flag, st));
            seen = (1 << NREQ) - 1 - (1 << I_POST);
            for (int i = 0; i < NREQ; i++)
                if (i != I_POST) on_complete(i, &st[i], round);
            break;
        }
        CHECK(seen == (1 << NREQ) - 1 - (1 << I_POST), "completed set %#x", (unsigned)seen);
        for (int i = 0; i < NREQ; i++)
            if (i != I_NOTIFY)
                CHECK(req[i] == NARMA_REQUEST_NULL, "request %d not freed by completion", i);
        CHECK(req[I_NOTIFY] == notify, "the persistent request handle changed");
        MPI_Barrier(MPI_COMM_WORLD); /* nobody overwrites data still being checked */
    }
    CHECK_RC(NARMA_Request_free(&notify));
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    MPI_Group_free(&wg);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
