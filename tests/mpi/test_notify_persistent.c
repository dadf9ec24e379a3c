/* narma-test: np=2,3,4 transports=shm,mpi timeout=120 */
/*
 * Persistent notified accesses: NARMA_Put_notify_init, NARMA_Get_notify_init,
 * NARMA_Accumulate_notify_init, started with NARMA_Start/Startall and
 * completed with the Test/Wait family. Each rank works on the next one (a ring).
 *   - puts: one request started many times, its buffer refilled between starts
 *     (reusable once Wait returned), landing in rotating lanes: every payload
 *     checked at its notification; Startall mixing accesses and notification
 *     requests;
 *   - gets and accumulates: the result, the sum, the notifications;
 *   - a derived datatype freed right after init still describes the access;
 *   - MPI_PROC_NULL: starts that do nothing;
 *   - MPI's completion rules (narma_notify_completion=flush): Start, Wait,
 *     flush;
 *   - bad input refused at init with the blocking call's classes; Start of an
 *     active request refused;
 *   - the window cannot be freed under a persistent access (NARMA_ERR_PENDING
 *     on every rank), and can once it is freed;
 *   - a dynamic window whose region was detached after init: Start refuses
 *     (NARMA_ERR_DISP), nothing is written.
 */
#include "common.h"

#define LANES 16 /* > 2 x ranks: a rank is never more than size-1 rounds ahead */
#define ELEMS 8
#define ITERS 300
#define TAG_P 1
#define TAG_G 2
#define TAG_A 3
#define TAG_V 4
#define TAG_D 5

static double value(int rank, int it, int k) { return rank * 1e6 + it * 10.0 + k; }

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_persistent", 110);
    const int rank = test_rank, size = test_size;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double *mem;
    /* doubles: LANES x ELEMS lanes, then: a get word, an accumulate word, a vector area (16) */
    const int GETW = LANES * ELEMS, ACCW = GETW + 1, VEC = GETW + 2;
    NARMA_Win win;
    CHECK_RC(NARMA_Win_allocate((VEC + 16) * (MPI_Aint)sizeof(double), sizeof(double),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_expect_transport(win);
    for (int i = 0; i < VEC + 16; i++)
        mem[i] = 0;
    mem[GETW] = 4242.0 + rank;
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("one persistent put started many times, buffer refilled between starts");
    {
        double buf[ELEMS];
        NARMA_Request put[LANES], note;
        for (int l = 0; l < LANES; l++)
            CHECK_RC(NARMA_Put_notify_init(buf, ELEMS, MPI_DOUBLE, next, l * ELEMS, ELEMS,
                                           MPI_DOUBLE, win, TAG_P, &put[l]));
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_P, 1, &note));
        for (int it = 0; it < ITERS; it++) {
            for (int k = 0; k < ELEMS; k++)
                buf[k] = value(rank, it, k);
            NARMA_Request both[2] = {put[it % LANES], note};
            CHECK_RC(NARMA_Startall(2, both));
            put[it % LANES] = both[0];
            note = both[1];
            CHECK_RC(NARMA_Wait(&put[it % LANES], MPI_STATUS_IGNORE)); /* buf reusable */
            MPI_Status st;
            CHECK_RC(NARMA_Wait(&note, &st));
            CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == TAG_P &&
                      test_byte_count(&st) == ELEMS * (int)sizeof(double),
                  "iteration %d: source %d tag %d bytes %d", it, st.MPI_SOURCE, st.MPI_TAG,
                  test_byte_count(&st));
            const double *lane = &mem[(it % LANES) * ELEMS];
            for (int k = 0; k < ELEMS; k++)
                CHECK(lane[k] == value(prev, it, k), "iteration %d element %d: %g, expected %g", it,
                      k, lane[k], value(prev, it, k));
            CHECK(put[it % LANES] != NARMA_REQUEST_NULL, "a persistent request was freed by Wait");
        }
        MPI_Barrier(MPI_COMM_WORLD); /* every lane checked before the extra put below */
        test_phase("Start of a started request is refused");
        CHECK_RC(NARMA_Start(&put[0]));
        CHECK_ERR(NARMA_Start(&put[0]), NARMA_ERR_REQUEST);
        CHECK_RC(NARMA_Wait(&put[0], MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Start(&note));
        CHECK_RC(NARMA_Wait(&note, MPI_STATUS_IGNORE)); /* prev's extra put */
        for (int l = 0; l < LANES; l++)
            CHECK_RC(NARMA_Request_free(&put[l]));
        CHECK_RC(NARMA_Request_free(&note));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("persistent get and accumulate");
    {
        double got = 0, one = 1;
        NARMA_Request get, acc, gnote, anote;
        CHECK_RC(NARMA_Get_notify_init(&got, 1, MPI_DOUBLE, next, GETW, 1, MPI_DOUBLE, win, TAG_G,
                                       &get));
        CHECK_RC(NARMA_Accumulate_notify_init(&one, 1, MPI_DOUBLE, next, ACCW, 1, MPI_DOUBLE,
                                              MPI_SUM, win, TAG_A, &acc));
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_G, 10, &gnote));
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_A, 50, &anote));
        CHECK_RC(NARMA_Start(&gnote));
        CHECK_RC(NARMA_Start(&anote));
        for (int i = 0; i < 10; i++) {
            got = -1;
            CHECK_RC(NARMA_Start(&get));
            CHECK_RC(NARMA_Wait(&get, MPI_STATUS_IGNORE));
            CHECK(got == 4242.0 + next, "get %d read %g", i, got);
        }
        for (int i = 0; i < 50; i++) {
            CHECK_RC(NARMA_Start(&acc));
            CHECK_RC(NARMA_Wait(&acc, MPI_STATUS_IGNORE));
        }
        MPI_Status st;
        CHECK_RC(NARMA_Wait(&gnote, &st));
        CHECK(st.MPI_SOURCE == prev && test_byte_count(&st) == 8, "get notification %d %d",
              st.MPI_SOURCE, test_byte_count(&st));
        CHECK_RC(NARMA_Wait(&anote, &st));
        CHECK(mem[ACCW] == 50.0, "sum %g after 50 notified accumulates", mem[ACCW]);
        NARMA_Request all[4] = {get, acc, gnote, anote};
        for (int i = 0; i < 4; i++)
            CHECK_RC(NARMA_Request_free(&all[i]));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("derived datatype freed after init");
    {
        MPI_Datatype vec;
        CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &vec));
        CHECK_MPI(MPI_Type_commit(&vec));
        double src[4] = {1.5 + rank, 2.5 + rank, 3.5 + rank, 4.5 + rank};
        NARMA_Request p, n;
        CHECK_RC(NARMA_Put_notify_init(src, 4, MPI_DOUBLE, next, VEC, 1, vec, win, TAG_V, &p));
        CHECK_MPI(MPI_Type_free(&vec));
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_V, 1, &n));
        CHECK_RC(NARMA_Start(&n));
        CHECK_RC(NARMA_Start(&p));
        CHECK_RC(NARMA_Wait(&p, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&n, MPI_STATUS_IGNORE));
        for (int k = 0; k < 8; k++) {
            double want = k % 2 ? 0.0 : 1.5 + prev + k / 2;
            CHECK(mem[VEC + k] == want, "vector element %d: %g, expected %g", k, mem[VEC + k],
                  want);
        }
        CHECK_RC(NARMA_Request_free(&p));
        CHECK_RC(NARMA_Request_free(&n));
    }

    test_phase("MPI_PROC_NULL target");
    {
        double x = 1;
        NARMA_Request p;
        CHECK_RC(NARMA_Put_notify_init(&x, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, 1, MPI_DOUBLE, win,
                                       TAG_P, &p));
        for (int i = 0; i < 3; i++) {
            CHECK_RC(NARMA_Start(&p));
            CHECK_RC(NARMA_Wait(&p, MPI_STATUS_IGNORE));
        }
        CHECK_RC(NARMA_Request_free(&p));
    }

    test_phase("bad input refused at init");
    {
        double x = 0;
        NARMA_Request p = NARMA_REQUEST_NULL;
        CHECK_ERR(NARMA_Put_notify_init(&x, 1, MPI_DOUBLE, size, 0, 1, MPI_DOUBLE, win, 1, &p),
                  NARMA_ERR_RANK);
        CHECK_ERR(NARMA_Put_notify_init(&x, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, win, -1, &p),
                  NARMA_ERR_TAG);
        CHECK_ERR(
            NARMA_Put_notify_init(&x, 1, MPI_DOUBLE, next, VEC + 16, 1, MPI_DOUBLE, win, 1, &p),
            NARMA_ERR_DISP);
        CHECK_ERR(NARMA_Get_notify_init(&x, -1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, win, 1, &p),
                  NARMA_ERR_COUNT);
        CHECK_ERR(NARMA_Accumulate_notify_init(&x, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, MPI_NO_OP,
                                               win, 1, &p),
                  NARMA_ERR_OP);
        CHECK_ERR(NARMA_Put_notify_init(&x, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, win, 1, NULL),
                  NARMA_ERR_ARG);
        CHECK_ERR(
            NARMA_Put_notify_init(&x, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, NARMA_WIN_NULL, 1, &p),
            NARMA_ERR_WIN);
        CHECK(p == NARMA_REQUEST_NULL, "a refused init returned a request");
    }

    test_phase("the window cannot be freed under a persistent access");
    {
        double x = 0;
        NARMA_Request p;
        CHECK_RC(NARMA_Put_notify_init(&x, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, win, TAG_P, &p));
        NARMA_Win keep = win;
        int rc = NARMA_Win_free(&win);
        CHECK(rc == NARMA_ERR_PENDING, "Win_free under a persistent access: %s",
              NARMA_Strerror(rc));
        win = keep;
        CHECK_RC(NARMA_Request_free(&p));
    }

    test_phase("MPI's completion rules: Start, Wait, flush");
    {
        MPI_Info info;
        double *m2, v = 77.0 + rank;
        NARMA_Win w2;
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "narma_notify_completion", "flush"));
        CHECK_RC(NARMA_Win_allocate(8, 8, info, MPI_COMM_WORLD, &m2, &w2));
        CHECK_MPI(MPI_Info_free(&info));
        m2[0] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        NARMA_Request p, n;
        CHECK_RC(NARMA_Put_notify_init(&v, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, w2, TAG_P, &p));
        CHECK_RC(NARMA_Notify_init(w2, prev, TAG_P, 1, &n));
        CHECK_RC(NARMA_Start(&n));
        CHECK_RC(NARMA_Start(&p));
        CHECK_RC(NARMA_Wait(&p, MPI_STATUS_IGNORE));
        v = -1; /* reusable after the request completed */
        CHECK_RC(NARMA_Win_flush(next, w2));
        CHECK_RC(NARMA_Wait(&n, MPI_STATUS_IGNORE));
        CHECK(m2[0] == 77.0 + prev, "deferred persistent put delivered %g", m2[0]);
        CHECK_RC(NARMA_Request_free(&p));
        CHECK_RC(NARMA_Request_free(&n));
        CHECK_RC(NARMA_Win_free(&w2));
    }

    test_phase("dynamic window: a region detached after init");
    {
        NARMA_Win dw;
        CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
        double *reg = calloc(4, sizeof(double)), x = 5;
        CHECK_RC(NARMA_Win_attach(dw, reg, 4 * sizeof(double)));
        MPI_Aint mine, all[64];
        CHECK_MPI(MPI_Get_address(reg, &mine));
        CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD));
        NARMA_Request p, n;
        CHECK_RC(NARMA_Put_notify_init(&x, 1, MPI_DOUBLE, next, all[next], 1, MPI_DOUBLE, dw, TAG_D,
                                       &p));
        CHECK_RC(NARMA_Notify_init(dw, prev, TAG_D, 1, &n));
        CHECK_RC(NARMA_Start(&n));
        CHECK_RC(NARMA_Start(&p)); /* attached: fine */
        CHECK_RC(NARMA_Wait(&p, MPI_STATUS_IGNORE));
        CHECK_RC(NARMA_Wait(&n, MPI_STATUS_IGNORE));
        CHECK(reg[0] == 5.0, "dynamic put delivered %g", reg[0]);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_detach(dw, reg));
        MPI_Barrier(MPI_COMM_WORLD); /* every region is gone */
        CHECK_ERR(NARMA_Start(&p), NARMA_ERR_DISP);
        CHECK_RC(NARMA_Test(&p, &(int){0}, MPI_STATUS_IGNORE)); /* inactive: completes at once */
        CHECK_RC(NARMA_Request_free(&p));
        CHECK_RC(NARMA_Request_free(&n));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&dw));
        free(reg);
    }

    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
