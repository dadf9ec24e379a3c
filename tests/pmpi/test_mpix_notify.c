/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Tag-matched notified access of <narma/narma_mpix.h> on MPI windows, notification requests
 * completed by MPI's completion calls:
 *  - MPIX_Put_notify_tagged to the right neighbour, matched by MPIX_Notify_tagged_init +
 *    MPI_Start + MPI_Wait: the status names the source and tag, MPI_Get_count the bytes, and
 *    the data is there (on Win_allocate, Win_create and dynamic windows);
 *  - wildcards: MPI_ANY_SOURCE / MPI_ANY_TAG with expected_count = size - 1 collect one put
 *    from every other rank; tags select the request (MPI_Waitany over two tags);
 *  - MPIX_Get_notify_tagged (the target learns that its memory was read),
 *    MPIX_Accumulate_notify_tagged (sums from every rank), MPIX_Rput_notify_tagged and
 *    MPIX_Rget_notify_tagged (origin requests completed by MPI_Wait);
 *  - persistent MPIX_Put_notify_tagged_init started many times in a ping-pong (MPI_Start /
 *    MPI_Startall with the notification request, MPI_Waitall), fresh data every round;
 *    MPIX_Get_notify_tagged_init and MPIX_Accumulate_notify_tagged_init started a few times;
 *  - MPIX_Win_get_narma: a narma window behind every window of this test;
 *  - request states as MPI has them: MPI_Test / MPI_Wait on an inactive persistent request
 *    give flag 1 and an empty status, MPI_Request_get_status sees a match without completing
 *    the request, an active notification request freed with MPI_Request_free matches nothing
 *    and does not keep MPI_Win_free from freeing the window; MPI_Startall and MPI_Waitsome over
 *    notification and persistent point-to-point requests together; MPI_Startall refuses a
 *    narma request listed twice or already active without starting any entry;
 *  - the persistent requests freed with MPI_Request_free before MPI_Win_free.
 */
#include "common.h"

#include <narma/narma_mpix.h>

#define N 8

enum { PUT0 = 0, OWN0 = N, ACC = 2 * N, SLOT0 };

static int rank, size, right, left;
static int *mem;
static MPI_Win win;

static void check_notify_status(const MPI_Status *st, int src, int tag, int bytes, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && n == bytes,
          "%s: status source %d tag %d count %d, expected %d, %d, %d", what, st->MPI_SOURCE,
          st->MPI_TAG, n, src, tag, bytes);
}

static void get_narma(void)
{
    test_phase("MPIX_Win_get_narma names the narma window behind each flavor");
    NARMA_Win nw = NARMA_WIN_NULL;
    CHECK_MPI(MPIX_Win_get_narma(win, &nw));
    CHECK(nw != NARMA_WIN_NULL, "no narma window behind a Win_allocate window");
    int *m = malloc(16);
    MPI_Win w;
    CHECK_MPI(MPI_Win_create(m, 16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    nw = NARMA_WIN_NULL;
    CHECK_MPI(MPIX_Win_get_narma(w, &nw));
    CHECK(nw != NARMA_WIN_NULL, "no narma window behind a Win_create window");
    CHECK_MPI(MPI_Win_free(&w));
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    nw = NARMA_WIN_NULL;
    CHECK_MPI(MPIX_Win_get_narma(w, &nw));
    CHECK(nw != NARMA_WIN_NULL, "no narma window behind a dynamic window");
    CHECK_MPI(MPI_Win_free(&w));
    free(m);
}

/* Rounds of put-notify around the ring on window w (ints at wmem, displacement of int k at
 * target t: disp(t, k)), each round matched by one started persistent request. */
static void ring_rounds(MPI_Win w, int *wmem, MPI_Aint *base_disp, int rounds, int tag)
{
    MPI_Request nreq;
    CHECK_MPI(MPIX_Notify_tagged_init(w, left, tag, 1, &nreq));
    CHECK(nreq != MPI_REQUEST_NULL, "MPIX_Notify_tagged_init gave MPI_REQUEST_NULL");
    int out[N];
    for (int it = 0; it < rounds; it++) {
        snprintf(test_detail, sizeof test_detail, "round %d", it);
        for (int i = 0; i < N; i++)
            out[i] = test_val(it, rank, i);
        CHECK_MPI(MPI_Start(&nreq));
        MPI_Aint d = base_disp ? base_disp[right] : 0;
        CHECK_MPI(MPIX_Put_notify_tagged(out, N, MPI_INT, right, d, N, MPI_INT, w, tag));
        MPI_Status st;
        CHECK_MPI(MPI_Wait(&nreq, &st));
        CHECK(nreq != MPI_REQUEST_NULL, "MPI_Wait freed a persistent notification request");
        check_notify_status(&st, left, tag, N * (int)sizeof(int), "ring put");
        for (int i = 0; i < N; i++)
            CHECK(wmem[i] == test_val(it, left, i), "round %d: element %d = %d, expected %d", it, i,
                  wmem[i], test_val(it, left, i));
        /* the left neighbour writes again only after we have read */
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_MPI(MPI_Request_free(&nreq));
    CHECK(nreq == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
}

static void put_notify(void)
{
    test_phase("MPIX_Put_notify_tagged around the ring (Win_allocate)");
    ring_rounds(win, mem + PUT0, NULL, 20, 7);

    test_phase("MPIX_Put_notify_tagged around the ring (Win_create over malloc'ed memory)");
    int *cm = malloc(N * sizeof(int));
    MPI_Win cw;
    CHECK_MPI(MPI_Win_create(cm, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &cw));
    test_errors_return(cw);
    ring_rounds(cw, cm, NULL, 5, 8);
    CHECK_MPI(MPI_Win_free(&cw));
    free(cm);

    test_phase("MPIX_Put_notify_tagged around the ring (dynamic window)");
    int *dm = malloc(N * sizeof(int));
    MPI_Win dw;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
    test_errors_return(dw);
    CHECK_MPI(MPI_Win_attach(dw, dm, N * sizeof(int)));
    MPI_Aint mine, *addr = malloc(size * sizeof(MPI_Aint));
    CHECK_MPI(MPI_Get_address(dm, &mine));
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    ring_rounds(dw, dm, addr, 5, 9);
    CHECK_MPI(MPI_Win_detach(dw, dm));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&dw));
    free(dm);
    free(addr);
}

static void wildcards(void)
{
    test_phase("MPI_ANY_SOURCE / MPI_ANY_TAG collect a put from every other rank");
    if (rank == 0) {
        MPI_Request req;
        MPI_Status st;
        CHECK_MPI(MPIX_Notify_tagged_init(win, MPI_ANY_SOURCE, MPI_ANY_TAG, size - 1, &req));
        CHECK_MPI(MPI_Start(&req));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        int flag = 0;
        while (!flag)
            CHECK_MPI(MPI_Test(&req, &flag, &st));
        CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < size && st.MPI_TAG == 100 + st.MPI_SOURCE,
              "last match: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        for (int r = 1; r < size; r++)
            CHECK(mem[SLOT0 + r] == test_val(60, r, 0), "slot %d = %d, expected %d", r,
                  mem[SLOT0 + r], test_val(60, r, 0));
        CHECK_MPI(MPI_Request_free(&req));
    } else {
        int v = test_val(60, rank, 0);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(
            MPIX_Put_notify_tagged(&v, 1, MPI_INT, 0, SLOT0 + rank, 1, MPI_INT, win, 100 + rank));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("tags select the request: MPI_Waitany over tags 1 and 2 from the right");
    MPI_Request two[2];
    CHECK_MPI(MPIX_Notify_tagged_init(win, MPI_ANY_SOURCE, 1, 1, &two[0]));
    CHECK_MPI(MPIX_Notify_tagged_init(win, right, 2, 1, &two[1]));
    CHECK_MPI(MPI_Startall(2, two));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int a = test_val(61, rank, 0), b = test_val(62, rank, 0);
    /* to the left neighbour: tag 2 first, then tag 1 */
    CHECK_MPI(MPIX_Put_notify_tagged(&b, 1, MPI_INT, left, SLOT0 + 1, 1, MPI_INT, win, 2));
    CHECK_MPI(MPIX_Put_notify_tagged(&a, 1, MPI_INT, left, SLOT0, 1, MPI_INT, win, 1));
    int got[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        int idx = -1;
        MPI_Status st;
        CHECK_MPI(MPI_Waitany(2, two, &idx, &st));
        CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
        if (idx != 0 && idx != 1) break;
        CHECK(!got[idx], "request %d completed twice", idx);
        got[idx] = 1;
        check_notify_status(&st, right, idx + 1, (int)sizeof(int), "tag-selected put");
    }
    CHECK(mem[SLOT0] == test_val(61, right, 0) && mem[SLOT0 + 1] == test_val(62, right, 0),
          "tagged puts left %d and %d", mem[SLOT0], mem[SLOT0 + 1]);
    CHECK_MPI(MPI_Request_free(&two[0]));
    CHECK_MPI(MPI_Request_free(&two[1]));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("MPI_Startall refuses narma entries listed twice or active, and starts none");
    MPI_Request p, dup[2];
    CHECK_MPI(MPIX_Notify_tagged_init(win, right, 3, 1, &p));
    dup[0] = dup[1] = p;
    CHECK(MPI_Startall(2, dup) != MPI_SUCCESS, "MPI_Startall accepted a request listed twice");
    CHECK_MPI(MPI_Start(&p)); /* refused above without starting it: inactive still */
    CHECK(MPI_Startall(1, &p) != MPI_SUCCESS, "MPI_Startall accepted an active request");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPIX_Put_notify_tagged(&a, 1, MPI_INT, left, SLOT0, 1, MPI_INT, win, 3));
    CHECK_MPI(MPI_Wait(&p, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Request_free(&p));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void other_accesses(void)
{
    MPI_Request nreq, r;
    MPI_Status st;
    test_phase("MPIX_Get_notify_tagged: the target learns its memory was read");
    for (int i = 0; i < N; i++)
        mem[OWN0 + i] = test_val(70, rank, i);
    CHECK_MPI(MPIX_Notify_tagged_init(win, right, 20, 1, &nreq)); /* right reads from us */
    CHECK_MPI(MPI_Start(&nreq));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int in[N];
    for (int i = 0; i < N; i++)
        in[i] = -1;
    CHECK_MPI(MPIX_Get_notify_tagged(in, N, MPI_INT, left, OWN0, N, MPI_INT, win, 20));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == test_val(70, left, i), "get-notify element %d = %d, expected %d", i, in[i],
              test_val(70, left, i));
    CHECK_MPI(MPI_Wait(&nreq, &st));
    check_notify_status(&st, right, 20, N * (int)sizeof(int), "get-notify");
    CHECK_MPI(MPI_Request_free(&nreq));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("MPIX_Accumulate_notify_tagged: sums from every rank to rank 0");
    if (rank == 0) {
        mem[ACC] = 0;
        CHECK_MPI(MPIX_Notify_tagged_init(win, MPI_ANY_SOURCE, 21, size, &nreq));
        CHECK_MPI(MPI_Start(&nreq));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int inc = rank + 1;
    CHECK_MPI(
        MPIX_Accumulate_notify_tagged(&inc, 1, MPI_INT, 0, ACC, 1, MPI_INT, MPI_SUM, win, 21));
    if (rank == 0) {
        CHECK_MPI(MPI_Wait(&nreq, &st));
        CHECK(st.MPI_TAG == 21, "accumulate-notify tag %d", st.MPI_TAG);
        CHECK(mem[ACC] == size * (size + 1) / 2, "accumulate-notify sum %d, expected %d", mem[ACC],
              size * (size + 1) / 2);
        CHECK_MPI(MPI_Request_free(&nreq));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("MPIX_Rput_notify_tagged and MPIX_Rget_notify_tagged with MPI_Wait");
    MPI_Request two[2];
    CHECK_MPI(MPIX_Notify_tagged_init(win, left, 22, 1, &two[0]));  /* left's Rput */
    CHECK_MPI(MPIX_Notify_tagged_init(win, right, 23, 1, &two[1])); /* right's Rget */
    CHECK_MPI(MPI_Startall(2, two));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int out[N];
    for (int i = 0; i < N; i++) {
        out[i] = test_val(71, rank, i);
        in[i] = -1;
    }
    CHECK_MPI(MPIX_Rput_notify_tagged(out, N, MPI_INT, right, PUT0, N, MPI_INT, win, &r, 22));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the Rput_notify request");
    CHECK_MPI(MPIX_Rget_notify_tagged(in, N, MPI_INT, left, OWN0, N, MPI_INT, win, &r, 23));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == test_val(70, left, i), "Rget_notify element %d = %d", i, in[i]);
    MPI_Status sts[2];
    CHECK_MPI(MPI_Waitall(2, two, sts));
    check_notify_status(&sts[0], left, 22, N * (int)sizeof(int), "Rput-notify");
    check_notify_status(&sts[1], right, 23, N * (int)sizeof(int), "Rget-notify");
    for (int i = 0; i < N; i++)
        CHECK(mem[PUT0 + i] == test_val(71, left, i), "Rput_notify element %d = %d", i,
              mem[PUT0 + i]);
    CHECK_MPI(MPI_Request_free(&two[0]));
    CHECK_MPI(MPI_Request_free(&two[1]));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void persistent(void)
{
    /* pairs (0,1), (2,3): a ping-pong of persistent notified puts; an odd last rank idles */
    int peer = rank % 2 ? rank - 1 : rank + 1;
    int active = peer < size;
    const int rounds = 100;
    test_phase("persistent MPIX_Put_notify_tagged_init ping-pong, started many times");
    if (active) {
        int buf[N];
        MPI_Request put, note;
        CHECK_MPI(
            MPIX_Put_notify_tagged_init(buf, N, MPI_INT, peer, PUT0, N, MPI_INT, win, 5, &put));
        CHECK_MPI(MPIX_Notify_tagged_init(win, peer, 5, 1, &note));
        for (int it = 0; it < rounds; it++) {
            snprintf(test_detail, sizeof test_detail, "round %d", it);
            MPI_Status st[2];
            if (rank % 2 == 0) {
                for (int i = 0; i < N; i++)
                    buf[i] = test_val(it, rank, i);
                MPI_Request both[2] = {note, put};
                CHECK_MPI(MPI_Startall(2, both));
                note = both[0];
                put = both[1];
                CHECK_MPI(MPI_Waitall(2, both, st));
                CHECK(both[0] == note && both[1] == put,
                      "MPI_Waitall changed persistent request handles");
                check_notify_status(&st[0], peer, 5, N * (int)sizeof(int), "pong");
                for (int i = 0; i < N; i++)
                    CHECK(mem[PUT0 + i] == test_val(it, rank, i) + 1,
                          "round %d: pong element %d = %d", it, i, mem[PUT0 + i]);
            } else {
                CHECK_MPI(MPI_Start(&note));
                CHECK_MPI(MPI_Wait(&note, &st[0]));
                check_notify_status(&st[0], peer, 5, N * (int)sizeof(int), "ping");
                for (int i = 0; i < N; i++) {
                    CHECK(mem[PUT0 + i] == test_val(it, peer, i), "round %d: ping element %d = %d",
                          it, i, mem[PUT0 + i]);
                    buf[i] = mem[PUT0 + i] + 1;
                }
                CHECK_MPI(MPI_Start(&put));
                CHECK_MPI(MPI_Wait(&put, MPI_STATUS_IGNORE));
            }
        }
        CHECK_MPI(MPI_Request_free(&put));
        CHECK_MPI(MPI_Request_free(&note));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("persistent Get_notify_tagged_init and Accumulate_notify_tagged_init");
    for (int i = 0; i < N; i++)
        mem[OWN0 + i] = test_val(80, rank, i);
    if (rank == 0) mem[ACC] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int in[N], inc = 1;
    MPI_Request g, a, note = MPI_REQUEST_NULL;
    CHECK_MPI(MPIX_Get_notify_tagged_init(in, N, MPI_INT, right, OWN0, N, MPI_INT, win, 30, &g));
    CHECK_MPI(MPIX_Accumulate_notify_tagged_init(&inc, 1, MPI_INT, 0, ACC, 1, MPI_INT, MPI_SUM, win,
                                                 31, &a));
    if (rank == 0) {
        CHECK_MPI(MPIX_Notify_tagged_init(win, MPI_ANY_SOURCE, 31, size * 3, &note));
        CHECK_MPI(MPI_Start(&note));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < N; i++)
            in[i] = -1;
        CHECK_MPI(MPI_Start(&g));
        CHECK_MPI(MPI_Wait(&g, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            CHECK(in[i] == test_val(80, right, i), "start %d: get element %d = %d", it, i, in[i]);
        CHECK_MPI(MPI_Start(&a));
        CHECK_MPI(MPI_Wait(&a, MPI_STATUS_IGNORE));
    }
    if (rank == 0) {
        MPI_Status st;
        CHECK_MPI(MPI_Wait(&note, &st));
        CHECK(mem[ACC] == size * 3, "persistent accumulate sum %d, expected %d", mem[ACC],
              size * 3);
        CHECK_MPI(MPI_Request_free(&note));
    }
    /* the gets notified the right neighbour's window: drain those with one request */
    MPI_Request drain;
    CHECK_MPI(MPIX_Notify_tagged_init(win, left, 30, 3, &drain));
    CHECK_MPI(MPI_Start(&drain));
    CHECK_MPI(MPI_Wait(&drain, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Request_free(&drain));
    CHECK_MPI(MPI_Request_free(&g));
    CHECK_MPI(MPI_Request_free(&a));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void check_empty_status(const MPI_Status *st, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0,
          "%s: status (source %d, tag %d, count %d) is not empty", what, st->MPI_SOURCE,
          st->MPI_TAG, n);
}

static void request_states(void)
{
    MPI_Request note;
    MPI_Status st;
    int flag = 0;
    test_phase("MPI_Test / MPI_Wait on an inactive persistent notification request");
    CHECK_MPI(MPIX_Notify_tagged_init(win, left, 40, 1, &note));
    CHECK_MPI(MPI_Test(&note, &flag, &st));
    CHECK(flag, "MPI_Test on a never-started request gave flag 0");
    check_empty_status(&st, "MPI_Test on an inactive request");
    CHECK_MPI(MPI_Wait(&note, &st));
    check_empty_status(&st, "MPI_Wait on an inactive request");
    CHECK(note != MPI_REQUEST_NULL, "MPI_Test/MPI_Wait freed an inactive persistent request");

    test_phase("MPI_Request_get_status sees the match, MPI_Wait then completes it");
    CHECK_MPI(MPI_Start(&note));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int v = test_val(90, rank, 0);
    CHECK_MPI(MPIX_Put_notify_tagged(&v, 1, MPI_INT, right, SLOT0, 1, MPI_INT, win, 40));
    flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Request_get_status(note, &flag, &st));
    check_notify_status(&st, left, 40, (int)sizeof(int), "get_status");
    CHECK_MPI(MPI_Wait(&note, &st));
    check_notify_status(&st, left, 40, (int)sizeof(int), "Wait after get_status");
    CHECK(mem[SLOT0] == test_val(90, left, 0), "notified put wrote %d", mem[SLOT0]);
    flag = 0;
    CHECK_MPI(MPI_Test(&note, &flag, &st));
    CHECK(flag, "MPI_Test on a completed (inactive) request gave flag 0");
    check_empty_status(&st, "MPI_Test on a completed persistent request");
    CHECK_MPI(MPI_Request_free(&note));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("MPI_Startall / MPI_Waitsome over notification and point-to-point requests");
    MPI_Request r[3];
    int sb = test_val(91, rank, 0), rb = -1, seen[3] = {0, 0, 0}, left_to_see = 3;
    CHECK_MPI(MPIX_Notify_tagged_init(win, left, 41, 1, &r[0]));
    CHECK_MPI(MPI_Send_init(&sb, 1, MPI_INT, right, 41, MPI_COMM_WORLD, &r[1]));
    CHECK_MPI(MPI_Recv_init(&rb, 1, MPI_INT, left, 41, MPI_COMM_WORLD, &r[2]));
    CHECK_MPI(MPI_Startall(3, r));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPIX_Put_notify_tagged(&sb, 1, MPI_INT, right, SLOT0 + 1, 1, MPI_INT, win, 41));
    while (left_to_see > 0) {
        int out = -1, idx[3];
        MPI_Status sts[3];
        CHECK_MPI(MPI_Waitsome(3, r, &out, idx, sts));
        CHECK(out != MPI_UNDEFINED && out >= 1 && out <= 3, "Waitsome outcount %d", out);
        if (out == MPI_UNDEFINED || out < 1) break;
        for (int k = 0; k < out; k++) {
            CHECK(idx[k] >= 0 && idx[k] < 3 && !seen[idx[k]], "Waitsome index %d", idx[k]);
            seen[idx[k]] = 1;
            left_to_see--;
            if (idx[k] == 0)
                check_notify_status(&sts[k], left, 41, (int)sizeof(int), "Waitsome notification");
            if (idx[k] == 2)
                CHECK(sts[k].MPI_SOURCE == left && sts[k].MPI_TAG == 41, "receive status %d/%d",
                      sts[k].MPI_SOURCE, sts[k].MPI_TAG);
        }
    }
    CHECK(rb == test_val(91, left, 0) && mem[SLOT0 + 1] == test_val(91, left, 0),
          "received %d, notified put wrote %d, expected %d", rb, mem[SLOT0 + 1],
          test_val(91, left, 0));
    for (int k = 0; k < 3; k++)
        CHECK_MPI(MPI_Request_free(&r[k]));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    test_phase("an active notification request freed: matches nothing, the window can go");
    int *m2;
    MPI_Win w2;
    CHECK_MPI(
        MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &m2, &w2));
    test_errors_return(w2);
    MPI_Request stale, fresh;
    CHECK_MPI(MPIX_Notify_tagged_init(w2, MPI_ANY_SOURCE, 42, 1, &stale));
    CHECK_MPI(MPI_Start(&stale));
    CHECK_MPI(MPI_Request_free(&stale));
    CHECK(stale == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    CHECK_MPI(MPIX_Notify_tagged_init(w2, left, 42, 1, &fresh));
    CHECK_MPI(MPI_Start(&fresh));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPIX_Put_notify_tagged(&sb, 1, MPI_INT, right, 0, 1, MPI_INT, w2, 42));
    CHECK_MPI(MPI_Wait(&fresh, &st)); /* the freed request did not take the notification */
    check_notify_status(&st, left, 42, (int)sizeof(int), "after a freed request");
    CHECK_MPI(MPI_Request_free(&fresh));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&w2));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_mpix_notify", 50);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    int len = SLOT0 + size + 2;
    CHECK_MPI(MPI_Win_allocate(len * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                               &win));
    test_errors_return(win);
    for (int i = 0; i < len; i++)
        mem[i] = -1;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    get_narma();
    put_notify();
    wildcards();
    other_accesses();
    persistent();
    request_states();

    CHECK_MPI(MPI_Win_free(&win));
    return test_finish();
}
