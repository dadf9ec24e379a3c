/* narma-test: transports=shm,mpi timeout=240 */
/*
 * Windows of different sizes created and freed out of order, with notified puts on every live
 * window after each round: each notification must reach its own window, from the right origin,
 * with the right tag and data, and no window may see one that was not meant for it.
 *
 * Why: a transport that names a notification by a number it hands out per window and pair (the
 * ofi transport's pair ids: a window of n ranks takes n consecutive ids at each rank, returned
 * when it is freed) must reuse the gaps that out-of-order frees leave without ever giving two
 * live windows the same id, and must find a window from an id however many windows exist.
 * Windows on MPI_COMM_WORLD and on both halves of a split give ranges of two lengths, so gaps
 * are refilled by ranges shorter and longer than the ones freed. Every window has its own tag;
 * a notification routed to the wrong window leaves its own request waiting (the watchdog fails
 * the test) or shows up in the check for strays at the end of each round.
 */
#include "common.h"

#include <stdlib.h>

#define NSLOT  24
#define ROUNDS 12

struct slot {
    NARMA_Win win;
    long long *base;
    MPI_Comm comm; /* MPI_COMM_WORLD or this rank's half */
    int rank, size;
    int id; /* unique over the run: tag and data */
};

static void slot_create(struct slot *s, int id, MPI_Comm world, MPI_Comm half)
{
    /* Every third window on the half, the others on the world (the same choice on every rank:
     * creation is collective). */
    s->comm = id % 3 == 1 ? half : world;
    CHECK_MPI(MPI_Comm_rank(s->comm, &s->rank));
    CHECK_MPI(MPI_Comm_size(s->comm, &s->size));
    s->id = id;
    snprintf(test_detail, sizeof test_detail, "window %d", id);
    CHECK_RC(NARMA_Win_allocate(2 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, s->comm,
                                &s->base, &s->win));
    s->base[0] = s->base[1] = -1;
}

/* One notified put around the window's ring, checked at its target. */
static void slot_exchange(struct slot *s)
{
    const int right = (s->rank + 1) % s->size;
    const int left = (s->rank + s->size - 1) % s->size;
    const int tag = s->id;
    snprintf(test_detail, sizeof test_detail, "window %d", s->id);
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(s->win, left, tag, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    long long v = 1000000LL * s->id + s->rank;
    CHECK_RC(NARMA_Win_lock_all(0, s->win));
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, s->win, tag));
    CHECK_RC(NARMA_Win_unlock_all(s->win));
    MPI_Status st;
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag, "window %d: source %d tag %d, want %d %d",
          s->id, st.MPI_SOURCE, st.MPI_TAG, left, tag);
    CHECK(s->base[1] == 1000000LL * s->id + left, "window %d holds %lld, want %lld", s->id,
          s->base[1], 1000000LL * s->id + left);
}

/* Nothing else arrived on the window: a wildcard request stays incomplete. */
static void slot_no_stray(struct slot *s, NARMA_Request *req)
{
    snprintf(test_detail, sizeof test_detail, "window %d", s->id);
    CHECK_RC(NARMA_Notify_init(s->win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, req));
    CHECK_RC(NARMA_Start(req));
    int flag = 0;
    MPI_Status st;
    for (int i = 0; i < 50 && !flag; i++)
        CHECK_RC(NARMA_Test(req, &flag, &st));
    CHECK(!flag, "window %d: a stray notification from %d with tag %d", s->id, st.MPI_SOURCE,
          st.MPI_TAG);
}

/* Once every rank has checked: an incomplete persistent request cannot be freed (narma has no
 * cancel), so one more notification of the window's own completes it, from the left. */
static void slot_stray_done(struct slot *s, NARMA_Request *req)
{
    snprintf(test_detail, sizeof test_detail, "window %d", s->id);
    const int right = (s->rank + 1) % s->size;
    const int left = (s->rank + s->size - 1) % s->size;
    long long v = -2;
    CHECK_RC(NARMA_Win_lock_all(0, s->win));
    CHECK_RC(NARMA_Put_notify(&v, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, s->win, s->id));
    CHECK_RC(NARMA_Win_unlock_all(s->win));
    MPI_Status st;
    CHECK_RC(NARMA_Wait(req, &st));
    CHECK_RC(NARMA_Request_free(req));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == s->id && s->base[0] == -2,
          "window %d: source %d, tag %d, word 0 %lld", s->id, st.MPI_SOURCE, st.MPI_TAG,
          s->base[0]);
    s->base[0] = -1;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_window_churn", 230);
    MPI_Comm half;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, test_rank < test_size / 2, test_rank, &half));
    struct slot s[NSLOT];
    int live[NSLOT] = {0};
    int next_id = 1;
    unsigned lcg = 12345; /* the same sequence on every rank */

    test_phase("fill every slot");
    for (int i = 0; i < NSLOT; i++) {
        slot_create(&s[i], next_id++, MPI_COMM_WORLD, half);
        live[i] = 1;
    }

    for (int round = 0; round < ROUNDS; round++) {
        char phase[64];
        snprintf(phase, sizeof phase, "round %d: free some, out of order", round);
        test_phase(phase);
        for (int i = 0; i < NSLOT; i++) {
            lcg = lcg * 1103515245u + 12345u;
            if (live[i] && (lcg >> 16) % 3 == 0) {
                snprintf(test_detail, sizeof test_detail, "window %d", s[i].id);
                CHECK_RC(NARMA_Win_free(&s[i].win));
                live[i] = 0;
            }
        }
        snprintf(phase, sizeof phase, "round %d: create into the gaps", round);
        test_phase(phase);
        for (int i = 0; i < NSLOT; i++) {
            lcg = lcg * 1103515245u + 12345u;
            if (!live[i] && (lcg >> 16) % 2 == 0) {
                slot_create(&s[i], next_id++, MPI_COMM_WORLD, half);
                live[i] = 1;
            }
        }
        snprintf(phase, sizeof phase, "round %d: a notified put on every window", round);
        test_phase(phase);
        for (int i = 0; i < NSLOT; i++)
            if (live[i]) slot_exchange(&s[i]);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        snprintf(phase, sizeof phase, "round %d: no stray notifications", round);
        test_phase(phase);
        NARMA_Request stray[NSLOT];
        for (int i = 0; i < NSLOT; i++)
            if (live[i]) slot_no_stray(&s[i], &stray[i]);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < NSLOT; i++)
            if (live[i]) slot_stray_done(&s[i], &stray[i]);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    test_phase("free the rest");
    for (int i = 0; i < NSLOT; i++)
        if (live[i]) {
            snprintf(test_detail, sizeof test_detail, "window %d", s[i].id);
            CHECK_RC(NARMA_Win_free(&s[i].win));
        }
    CHECK_MPI(MPI_Comm_free(&half));
    return test_finish();
}
