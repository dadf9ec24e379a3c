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
 * are refilled by ranges shorter and longer than the ones freed. Every rank notifies every rank
 * of each window (itself too), so each target's whole range of ids is used; every window has
 * its own tag. A notification routed to the wrong window leaves its own request waiting (the
 * watchdog fails the test: with the ranges left unsorted it hangs in round 0) or shows up in
 * the check for strays at the end of each round. Under NARMA_TRANSPORT=ofi the windows on
 * MPI_COMM_WORLD must name ofi: a channel that silently fell back to mpi would test nothing.
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#define NSLOT  24
#define ROUNDS 12 /* < 100: the values carry the round */

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
    /* Word r: origin r's value; word size: the stray check's. */
    CHECK_RC(NARMA_Win_allocate((MPI_Aint)(s->size + 1) * (MPI_Aint)sizeof(long long),
                                sizeof(long long), MPI_INFO_NULL, s->comm, &s->base, &s->win));
    for (int r = 0; r <= s->size; r++)
        s->base[r] = -1;
    if (strcmp(env_str("NARMA_TRANSPORT", ""), "ofi") == 0 && s->comm == world) {
        const char *tr = NARMA_Win_get_transport(s->win);
        CHECK(tr != NULL && strstr(tr, "ofi") != NULL, "window %d: transport %s, want ofi", id,
              tr != NULL ? tr : "(null)");
    }
}

/* Every rank notifies every rank of the window once; each target checks what arrived. */
static void slot_exchange(struct slot *s, int round)
{
    const int tag = s->id;
    snprintf(test_detail, sizeof test_detail, "window %d", s->id);
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(s->win, NARMA_ANY_SOURCE, tag, s->size, &req));
    CHECK_RC(NARMA_Start(&req));
    const long long want0 = (100LL * s->id + round) * 1000; /* + origin */
    long long v = want0 + s->rank;
    CHECK_RC(NARMA_Win_lock_all(0, s->win));
    for (int k = 1; k <= s->size; k++) { /* the right neighbour first, myself last */
        const int target = (s->rank + k) % s->size;
        CHECK_RC(
            NARMA_Put_notify(&v, 1, MPI_LONG_LONG, target, s->rank, 1, MPI_LONG_LONG, s->win, tag));
    }
    CHECK_RC(NARMA_Win_unlock_all(s->win));
    MPI_Status st;
    CHECK_RC(NARMA_Wait(&req, &st));
    CHECK_RC(NARMA_Request_free(&req));
    CHECK(st.MPI_TAG == tag, "window %d: tag %d, want %d", s->id, st.MPI_TAG, tag);
    for (int r = 0; r < s->size; r++)
        CHECK(s->base[r] == want0 + r, "window %d: word %d holds %lld, want %lld", s->id, r,
              s->base[r], want0 + r);
    CHECK(s->base[s->size] == -1, "window %d: word %d changed to %lld", s->id, s->size,
          s->base[s->size]);
}

/* Nothing else arrived on the window: a wildcard request stays incomplete; then it is freed,
 * which withdraws it. */
static void slot_no_stray(struct slot *s)
{
    snprintf(test_detail, sizeof test_detail, "window %d", s->id);
    NARMA_Request req;
    CHECK_RC(NARMA_Notify_init(s->win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 1, &req));
    CHECK_RC(NARMA_Start(&req));
    int flag = 0;
    MPI_Status st;
    for (int i = 0; i < 50 && !flag; i++)
        CHECK_RC(NARMA_Test(&req, &flag, &st));
    CHECK(!flag, "window %d: a stray notification from %d with tag %d", s->id, st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK_RC(NARMA_Request_free(&req));
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
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

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
        /* Every rank has set its new windows' words before any rank puts into them. */
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        snprintf(phase, sizeof phase, "round %d: a notified put on every window", round);
        test_phase(phase);
        for (int i = 0; i < NSLOT; i++)
            if (live[i]) slot_exchange(&s[i], round);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        snprintf(phase, sizeof phase, "round %d: no stray notifications", round);
        test_phase(phase);
        for (int i = 0; i < NSLOT; i++)
            if (live[i]) slot_no_stray(&s[i]);
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
