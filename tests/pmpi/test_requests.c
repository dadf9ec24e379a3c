/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 passthrough=1 */
/*
 * Requests of MPI_Rput / MPI_Rget / MPI_Raccumulate / MPI_Rget_accumulate are MPI_Requests
 * that every completion call takes mixed with point-to-point ones (and MPI_REQUEST_NULL):
 *  - MPI_Waitall: every request completes and becomes MPI_REQUEST_NULL, the receive's status
 *    names its source, tag and count, the get's data is there;
 *  - MPI_Testany, MPI_Waitany, MPI_Waitsome, MPI_Testsome, MPI_Testall, MPI_Test: polled until
 *    everything completed, each index reported exactly once, MPI_UNDEFINED at the end;
 *  - MPI_Request_get_status: completion seen without freeing, MPI_Wait frees afterwards;
 *  - MPI_Request_free of an R* request whose operation a flush completed (and of one still
 *    pending, completed by the flush afterwards): the handle becomes MPI_REQUEST_NULL and the
 *    data arrives;
 *  - persistent point-to-point requests (MPI_Send_init, MPI_Recv_init) started by
 *    MPI_Startall and completed by MPI_Waitall together with an R* request.
 * Every round puts fresh values (a Rput to the right neighbour, an Rget of its values, an
 * Raccumulate to rank 0) and exchanges a message around the ring.
 */
#include "common.h"

#define N 8

enum { PUT0 = 0, OWN0 = N, ACC = 2 * N, W = 2 * N + 1 };

static int rank, size, right, left;
static int *mem;
static MPI_Win win;
static int acc_expected; /* what rank 0's ACC must hold */

/* One round's requests: [0] Irecv from left, [1] Rput to right, [2] Isend to right,
 * [3] Rget from right, [4] MPI_REQUEST_NULL, [5] Raccumulate to rank 0. */
#define NREQ 6
struct round {
    int id;
    int sendbuf[N], recvbuf[N], putbuf[N], getbuf[N], inc;
    MPI_Request r[NREQ];
};

static void round_start(struct round *rd, int id)
{
    rd->id = id;
    rd->inc = rank + id;
    for (int i = 0; i < N; i++) {
        rd->sendbuf[i] = test_val(id, rank, i) + 3;
        rd->putbuf[i] = test_val(id, rank, i);
        rd->recvbuf[i] = rd->getbuf[i] = -1;
    }
    for (int i = 0; i < N; i++)
        mem[OWN0 + i] = test_val(id, rank, i) + 5; /* read by the left neighbour's Rget */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Irecv(rd->recvbuf, N, MPI_INT, left, id, MPI_COMM_WORLD, &rd->r[0]));
    CHECK_MPI(MPI_Rput(rd->putbuf, N, MPI_INT, right, PUT0, N, MPI_INT, win, &rd->r[1]));
    CHECK_MPI(MPI_Isend(rd->sendbuf, N, MPI_INT, right, id, MPI_COMM_WORLD, &rd->r[2]));
    CHECK_MPI(MPI_Rget(rd->getbuf, N, MPI_INT, right, OWN0, N, MPI_INT, win, &rd->r[3]));
    rd->r[4] = MPI_REQUEST_NULL;
    CHECK_MPI(MPI_Raccumulate(&rd->inc, 1, MPI_INT, 0, ACC, 1, MPI_INT, MPI_SUM, win, &rd->r[5]));
    acc_expected += size * id + size * (size - 1) / 2;
}

/* The status of request i (or NULL when the call gave none to check). */
static void check_status(int i, const MPI_Status *st, const struct round *rd)
{
    if (i != 0 || st == NULL) return;
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == left && st->MPI_TAG == rd->id && count == N,
          "round %d: receive status source %d tag %d count %d, expected %d, %d, %d", rd->id,
          st->MPI_SOURCE, st->MPI_TAG, count, left, rd->id, N);
}

/* After every request completed: the local data, then (after unlock_all) the remote data. */
static void round_finish(struct round *rd)
{
    for (int i = 0; i < NREQ; i++)
        CHECK(rd->r[i] == MPI_REQUEST_NULL, "round %d: request %d not MPI_REQUEST_NULL", rd->id, i);
    for (int i = 0; i < N; i++) {
        CHECK(rd->recvbuf[i] == test_val(rd->id, left, i) + 3,
              "round %d: received element %d = %d, expected %d", rd->id, i, rd->recvbuf[i],
              test_val(rd->id, left, i) + 3);
        CHECK(rd->getbuf[i] == test_val(rd->id, right, i) + 5,
              "round %d: Rget element %d = %d, expected %d", rd->id, i, rd->getbuf[i],
              test_val(rd->id, right, i) + 5);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(mem[PUT0 + i] == test_val(rd->id, left, i), "round %d: Rput element %d = %d", rd->id,
              i, mem[PUT0 + i]);
    if (rank == 0)
        CHECK(mem[ACC] == acc_expected, "round %d: Raccumulate total %d, expected %d", rd->id,
              mem[ACC], acc_expected);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Each index must be reported once. */
static void note_done(struct round *rd, int *seen, int i)
{
    CHECK(i >= 0 && i < NREQ, "round %d: index %d out of range", rd->id, i);
    CHECK(!seen[i], "round %d: index %d reported twice", rd->id, i);
    seen[i] = 1;
}

static void count_done(struct round *rd, const int *seen)
{
    for (int i = 0; i < NREQ; i++)
        if (i != 4) CHECK(seen[i], "round %d: request %d never reported complete", rd->id, i);
}

static void waitall(void)
{
    test_phase("MPI_Waitall over R* and point-to-point requests");
    struct round rd;
    MPI_Status st[NREQ];
    round_start(&rd, 1);
    CHECK_MPI(MPI_Waitall(NREQ, rd.r, st));
    check_status(0, &st[0], &rd);
    round_finish(&rd);
}

static void testany(void)
{
    test_phase("MPI_Testany until MPI_UNDEFINED");
    struct round rd;
    int seen[NREQ] = {0};
    round_start(&rd, 2);
    for (;;) {
        int idx = -5, flag = 0;
        MPI_Status st;
        CHECK_MPI(MPI_Testany(NREQ, rd.r, &idx, &flag, &st));
        if (!flag) continue;
        if (idx == MPI_UNDEFINED) break;
        note_done(&rd, seen, idx);
        check_status(idx, &st, &rd);
    }
    count_done(&rd, seen);
    round_finish(&rd);
}

static void waitany(void)
{
    test_phase("MPI_Waitany until MPI_UNDEFINED");
    struct round rd;
    int seen[NREQ] = {0};
    round_start(&rd, 3);
    for (;;) {
        int idx = -5;
        MPI_Status st;
        CHECK_MPI(MPI_Waitany(NREQ, rd.r, &idx, &st));
        if (idx == MPI_UNDEFINED) break;
        note_done(&rd, seen, idx);
        check_status(idx, &st, &rd);
    }
    count_done(&rd, seen);
    round_finish(&rd);
}

static void waitsome(void)
{
    test_phase("MPI_Waitsome until MPI_UNDEFINED");
    struct round rd;
    int seen[NREQ] = {0};
    round_start(&rd, 4);
    for (;;) {
        int out = -5, idx[NREQ];
        MPI_Status st[NREQ];
        CHECK_MPI(MPI_Waitsome(NREQ, rd.r, &out, idx, st));
        if (out == MPI_UNDEFINED) break;
        CHECK(out >= 1 && out <= NREQ, "Waitsome outcount %d", out);
        for (int k = 0; k < out; k++) {
            note_done(&rd, seen, idx[k]);
            check_status(idx[k], &st[k], &rd);
        }
    }
    count_done(&rd, seen);
    round_finish(&rd);
}

static void testsome(void)
{
    test_phase("MPI_Testsome until MPI_UNDEFINED");
    struct round rd;
    int seen[NREQ] = {0};
    round_start(&rd, 5);
    for (;;) {
        int out = -5, idx[NREQ];
        MPI_Status st[NREQ];
        CHECK_MPI(MPI_Testsome(NREQ, rd.r, &out, idx, st));
        if (out == MPI_UNDEFINED) break;
        CHECK(out >= 0 && out <= NREQ, "Testsome outcount %d", out);
        for (int k = 0; k < out; k++) {
            note_done(&rd, seen, idx[k]);
            check_status(idx[k], &st[k], &rd);
        }
    }
    count_done(&rd, seen);
    round_finish(&rd);
}

static void testall_and_test(void)
{
    test_phase("MPI_Testall until true");
    struct round rd;
    MPI_Status st[NREQ];
    round_start(&rd, 6);
    int flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Testall(NREQ, rd.r, &flag, st));
    check_status(0, &st[0], &rd);
    round_finish(&rd);

    test_phase("MPI_Test on each request in turn");
    round_start(&rd, 7);
    for (int i = 0; i < NREQ; i++) {
        MPI_Status s;
        flag = 0;
        while (!flag)
            CHECK_MPI(MPI_Test(&rd.r[i], &flag, &s));
        check_status(i, &s, &rd);
    }
    round_finish(&rd);
}

static void get_status_and_free(void)
{
    test_phase("MPI_Request_get_status on an Rget: complete, not freed; MPI_Wait frees");
    int g[N], p[N];
    for (int i = 0; i < N; i++) {
        g[i] = -1;
        p[i] = test_val(8, rank, i);
        mem[OWN0 + i] = test_val(8, rank, i) + 5;
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request r, q;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Rget(g, N, MPI_INT, right, OWN0, N, MPI_INT, win, &r));
    int flag = 0;
    MPI_Status st;
    while (!flag)
        CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
    CHECK(r != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    for (int i = 0; i < N; i++)
        CHECK(g[i] == test_val(8, right, i) + 5, "Rget element %d = %d after get_status", i, g[i]);
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait after get_status did not free the request");

    test_phase("MPI_Request_free of a completed Rput (flushed), and of a pending Raccumulate");
    CHECK_MPI(MPI_Rput(p, N, MPI_INT, right, PUT0, N, MPI_INT, win, &r));
    CHECK_MPI(MPI_Win_flush(right, win)); /* completes the Rput's operation */
    CHECK_MPI(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free did not reset a completed Rput's handle");
    int inc = 1000;
    CHECK_MPI(MPI_Raccumulate(&inc, 1, MPI_INT, 0, ACC, 1, MPI_INT, MPI_SUM, win, &q));
    CHECK_MPI(MPI_Request_free(&q));
    CHECK(q == MPI_REQUEST_NULL, "MPI_Request_free did not reset a pending Raccumulate's handle");
    acc_expected += 1000 * size;
    CHECK_MPI(MPI_Win_unlock_all(win)); /* completes the freed Raccumulate */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(mem[PUT0 + i] == test_val(8, left, i), "freed Rput element %d = %d", i,
              mem[PUT0 + i]);
    if (rank == 0)
        CHECK(mem[ACC] == acc_expected, "freed Raccumulate total %d, expected %d", mem[ACC],
              acc_expected);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void persistent_p2p(void)
{
    test_phase("MPI_Startall of persistent sends/receives, MPI_Waitall with an Rget_accumulate");
    int sb = test_val(9, rank, 0), rb = -1, one = 1, fetched = -1;
    MPI_Request r[3];
    CHECK_MPI(MPI_Send_init(&sb, 1, MPI_INT, right, 99, MPI_COMM_WORLD, &r[0]));
    CHECK_MPI(MPI_Recv_init(&rb, 1, MPI_INT, left, 99, MPI_COMM_WORLD, &r[1]));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int it = 0; it < 3; it++) {
        sb = test_val(9 + it, rank, 0);
        rb = -1;
        CHECK_MPI(MPI_Startall(2, r));
        CHECK_MPI(MPI_Rget_accumulate(&one, 1, MPI_INT, &fetched, 1, MPI_INT, right, ACC, 1,
                                      MPI_INT, MPI_NO_OP, win, &r[2]));
        MPI_Status st[3];
        CHECK_MPI(MPI_Waitall(3, r, st));
        CHECK(rb == test_val(9 + it, left, 0), "persistent receive %d got %d", it, rb);
        CHECK(st[1].MPI_SOURCE == left && st[1].MPI_TAG == 99, "persistent receive status %d/%d",
              st[1].MPI_SOURCE, st[1].MPI_TAG);
        CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL,
              "Waitall freed a persistent point-to-point request");
        CHECK(r[2] == MPI_REQUEST_NULL, "Waitall left the Rget_accumulate request");
        int expect_acc = right == 0 ? acc_expected : 0;
        CHECK(fetched == expect_acc, "NO_OP fetched %d from rank %d, expected %d", fetched, right,
              expect_acc);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Request_free(&r[0]));
    CHECK_MPI(MPI_Request_free(&r[1]));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_requests", 50);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    CHECK_MPI(
        MPI_Win_allocate(W * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_errors_return(win);
    for (int i = 0; i < W; i++)
        mem[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    waitall();
    testany();
    waitany();
    waitsome();
    testsome();
    testall_and_test();
    get_status_and_free();
    persistent_p2p();

    CHECK_MPI(MPI_Win_free(&win));
    return test_finish();
}
