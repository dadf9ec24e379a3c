/* narma-test: np=2,3,4 transports=shm,mpi timeout=120 env=NARMA_RING_SLOTS=8 */
/*
 * Window info narma_notify_completion=flush: notified accesses follow MPI's
 * completion rules (complete at the origin's next flush, unlock, complete,
 * fence or progress; the origin buffer reusable after the flush, or when the
 * request of an R* form completes). Tiny rings (NARMA_RING_SLOTS=8: 4 records
 * per origin on the mpi transport) so that sub-rings fill with records not
 * yet written. Each rank notifies the next one (a ring of pairs). Checked:
 *   - a stream of notified puts and accumulates, one flush: every payload,
 *     order per origin, sums;
 *   - a window full of deferred records does not wait forever (the origin
 *     writes them when it needs credit);
 *   - the notification is there when PSCW's Win_wait returns (the origin's
 *     Win_complete writes it before its done count): the target's first Test
 *     matches it;
 *   - an origin that waits in narma without flushing still notifies (progress
 *     writes its records): a ping-pong with no flush does not hang;
 *   - Get_notify: the origin buffer holds the target's data after the flush;
 *   - Rput_notify: the origin buffer may be overwritten once the request
 *     completes, the target still gets the value put;
 *   - Win_unlock_all of a lock_all(0) epoch (which locked no target: notified
 *     accesses need no lock) completes the notified accesses: the origin then
 *     blocks in MPI_Barrier while its target waits for the notification;
 *   - Win_free completes them too: the origin frees the window while its
 *     target waits for the notification, then frees;
 *   - Win_free with deferred records pending (their matching requests never
 *     started): no crash, no leak;
 *   - a bad value of the key is refused on every rank.
 * On shm (stronger: complete on return) the same program must pass unchanged.
 */
#include "common.h"

#define N     200 /* stream length: many times a 4-slot sub-ring */
#define TAG_S 1
#define TAG_A 2
#define TAG_P 3
#define TAG_G 4
#define TAG_R 5
#define TAG_X 6

static NARMA_Win deferred_window(MPI_Aint bytes, uint64_t **mem)
{
    MPI_Info info;
    NARMA_Win win;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "narma_notify_completion", "flush"));
    CHECK_RC(NARMA_Win_allocate(bytes, sizeof(uint64_t), info, MPI_COMM_WORLD, mem, &win));
    test_expect_transport(win);
    CHECK_MPI(MPI_Info_free(&info));
    return win;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_notify_deferred", 110);
    const int rank = test_rank, size = test_size;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    uint64_t *mem;
    /* words: [0, N) stream lanes, N accumulate word, N+1 PSCW word, N+2 get word, N+3 rput */
    NARMA_Win win = deferred_window((N + 4) * 8, &mem);
    for (int i = 0; i < N + 4; i++)
        mem[i] = 0;
    mem[N + 2] = 0xabc000u + (uint64_t)rank;
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("stream of notified puts and accumulates, one flush");
    {
        NARMA_Request any;
        MPI_Status st;
        uint64_t vals[N];
        CHECK_RC(NARMA_Notify_init(win, prev, NARMA_ANY_TAG, 1, &any));
        for (int i = 0; i < N; i++) {
            vals[i] = ((uint64_t)rank << 32) | (uint64_t)i;
            CHECK_RC(
                NARMA_Put_notify(&vals[i], 1, MPI_UINT64_T, next, i, 1, MPI_UINT64_T, win, TAG_S));
            uint64_t one = 1;
            CHECK_RC(NARMA_Accumulate_notify(&one, 1, MPI_UINT64_T, next, N, 1, MPI_UINT64_T,
                                             MPI_SUM, win, TAG_A));
        }
        CHECK_RC(NARMA_Win_flush(next, win));
        /* From prev: put i then accumulate i, in that order, 2N notifications. */
        for (int i = 0; i < 2 * N; i++) {
            CHECK_RC(NARMA_Start(&any));
            CHECK_RC(NARMA_Wait(&any, &st));
            int want = i % 2 == 0 ? TAG_S : TAG_A;
            CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == want,
                  "notification %d: source %d tag %d, expected %d tag %d", i, st.MPI_SOURCE,
                  st.MPI_TAG, prev, want);
            if (i % 2 == 0) {
                uint64_t got = __atomic_load_n(&mem[i / 2], __ATOMIC_ACQUIRE);
                uint64_t exp = ((uint64_t)prev << 32) | (uint64_t)(i / 2);
                CHECK(got == exp, "lane %d holds %#llx, expected %#llx when notified", i / 2,
                      (unsigned long long)got, (unsigned long long)exp);
            } else {
                uint64_t got = __atomic_load_n(&mem[N], __ATOMIC_ACQUIRE);
                CHECK(got >= (uint64_t)(i / 2 + 1), "sum %llu after accumulate %d notified",
                      (unsigned long long)got, i / 2);
            }
        }
        CHECK_RC(NARMA_Request_free(&any));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(mem[N] == (uint64_t)N, "sum %llu, expected %d", (unsigned long long)mem[N], N);
    }

    test_phase("PSCW: the notification is there when Win_wait returns");
    {
        MPI_Group g, gnext, gprev;
        CHECK_RC(NARMA_Win_get_group(win, &g));
        CHECK_MPI(MPI_Group_incl(g, 1, &next, &gnext));
        CHECK_MPI(MPI_Group_incl(g, 1, &prev, &gprev));
        NARMA_Request req;
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_P, 1, &req));
        CHECK_RC(NARMA_Start(&req));
        uint64_t v = 0x5c00u + (uint64_t)rank;
        /* Expose to prev, access next (the same rank when size is 2). */
        CHECK_RC(NARMA_Win_post(gprev, 0, win));
        MPI_Barrier(MPI_COMM_WORLD); /* every grant is out: Win_complete need not wait */
        CHECK_RC(NARMA_Win_start(gnext, 0, win));
        CHECK_RC(NARMA_Put_notify(&v, 1, MPI_UINT64_T, next, N + 1, 1, MPI_UINT64_T, win, TAG_P));
        CHECK_RC(NARMA_Win_complete(win));
        CHECK_RC(NARMA_Win_wait(win));
        int flag = 0;
        MPI_Status st;
        CHECK_RC(NARMA_Test(&req, &flag, &st));
        CHECK(flag, "Win_wait returned but the first Test did not match the notification");
        if (!flag) test_wait_poll(&req, &st);
        CHECK(mem[N + 1] == 0x5c00u + (uint64_t)prev, "PSCW word %#llx",
              (unsigned long long)mem[N + 1]);
        CHECK_RC(NARMA_Request_free(&req));
        MPI_Group_free(&g);
        MPI_Group_free(&gnext);
        MPI_Group_free(&gprev);
    }

    test_phase("ping-pong with no flush: progress writes the records");
    if (rank < 2) {
        int peer = 1 - rank;
        NARMA_Request req;
        CHECK_RC(NARMA_Notify_init(win, peer, TAG_X, 1, &req));
        uint64_t v = 7;
        for (int i = 0; i < 50; i++) {
            if (rank == 1) {
                CHECK_RC(NARMA_Start(&req));
                CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
            }
            CHECK_RC(NARMA_Put_notify(&v, 0, MPI_UINT64_T, peer, 0, 0, MPI_UINT64_T, win, TAG_X));
            if (rank == 0) { /* no flush: waiting in narma is enough */
                CHECK_RC(NARMA_Start(&req));
                CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
            }
        }
        CHECK_RC(NARMA_Win_flush(peer, win)); /* rank 1's last one */
        CHECK_RC(NARMA_Request_free(&req));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("Get_notify: the buffer after the flush, the notification at the target");
    {
        NARMA_Request req;
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_G, 1, &req));
        CHECK_RC(NARMA_Start(&req));
        uint64_t got = 0;
        CHECK_RC(NARMA_Get_notify(&got, 1, MPI_UINT64_T, next, N + 2, 1, MPI_UINT64_T, win, TAG_G));
        CHECK_RC(NARMA_Win_flush(next, win));
        CHECK(got == 0xabc000u + (uint64_t)next, "Get_notify read %#llx", (unsigned long long)got);
        MPI_Status st;
        CHECK_RC(NARMA_Wait(&req, &st));
        CHECK(st.MPI_SOURCE == prev && test_byte_count(&st) == 8, "get notification %d, %d B",
              st.MPI_SOURCE, test_byte_count(&st));
        CHECK_RC(NARMA_Request_free(&req));
    }

    test_phase("Rput_notify: the origin buffer is reusable once the request completes");
    {
        NARMA_Request req, r;
        CHECK_RC(NARMA_Notify_init(win, prev, TAG_R, 1, &req));
        CHECK_RC(NARMA_Start(&req));
        MPI_Barrier(MPI_COMM_WORLD); /* every target's request is started */
        uint64_t v = 0x77700u + (uint64_t)rank;
        CHECK_RC(
            NARMA_Rput_notify(&v, 1, MPI_UINT64_T, next, N + 3, 1, MPI_UINT64_T, win, &r, TAG_R));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        v = 0xdead; /* reusable now */
        CHECK_RC(NARMA_Win_flush(next, win));
        CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(mem[N + 3] == 0x77700u + (uint64_t)prev, "Rput_notify delivered %#llx",
              (unsigned long long)mem[N + 3]);
        CHECK_RC(NARMA_Request_free(&req));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    test_phase("Win_unlock_all completes notified accesses; then only plain MPI");
    {
        NARMA_Request req;
        uint64_t v = 0x10c4;
        CHECK_RC(NARMA_Notify_init(win, 0, TAG_X, 1, &req));
        if (rank == 0) {
            CHECK_RC(NARMA_Win_lock_all(0, win));
            CHECK_RC(NARMA_Put_notify(&v, 1, MPI_UINT64_T, 1, N + 1, 1, MPI_UINT64_T, win, TAG_X));
            CHECK_RC(NARMA_Win_unlock_all(win));
        } else if (rank == 1) { /* before the barrier: only the unlock can have sent it */
            CHECK_RC(NARMA_Start(&req));
            CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(mem[N + 1] == 0x10c4, "word %#llx after the notification",
                  (unsigned long long)mem[N + 1]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Request_free(&req));
    }

    test_phase("Win_free completes notified accesses");
    {
        uint64_t *m2, v = 0xf4ee;
        NARMA_Win w2 = deferred_window(64, &m2);
        m2[0] = 0;
        NARMA_Request req = NARMA_REQUEST_NULL;
        CHECK_RC(NARMA_Notify_init(w2, 0, TAG_X, 1, &req));
        CHECK_RC(NARMA_Start(&req));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            CHECK_RC(NARMA_Put_notify(&v, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, w2, TAG_X));
        if (rank == 1) { /* rank 0 is already in Win_free: only it can have sent it */
            CHECK_RC(NARMA_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(m2[0] == 0xf4ee, "word %#llx after the notification", (unsigned long long)m2[0]);
        }
        CHECK_RC(NARMA_Request_free(&req));
        CHECK_RC(NARMA_Win_free(&w2));
    }

    test_phase("Win_free with deferred records pending");
    {
        uint64_t *m2;
        NARMA_Win w2 = deferred_window(64, &m2);
        uint64_t v = 1;
        for (int i = 0; i < 3; i++) /* fewer than a sub-ring: none needs credit */
            CHECK_RC(NARMA_Put_notify(&v, 1, MPI_UINT64_T, next, i, 1, MPI_UINT64_T, w2, TAG_S));
        CHECK_RC(NARMA_Win_free(&w2));
    }

    test_phase("a bad value is refused on every rank");
    {
        MPI_Info info;
        NARMA_Win w3 = NARMA_WIN_NULL;
        uint64_t *m3;
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "narma_notify_completion", rank == 0 ? "later" : "return"));
        int rc = NARMA_Win_allocate(64, 8, info, MPI_COMM_WORLD, &m3, &w3);
        CHECK(rc != NARMA_SUCCESS, "narma_notify_completion=later accepted");
        if (rank == 0) CHECK(rc == NARMA_ERR_ARG, "rank 0 got %s", NARMA_Strerror(rc));
        if (rc == NARMA_SUCCESS) NARMA_Win_free(&w3);
        CHECK_MPI(MPI_Info_free(&info));
    }

    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
