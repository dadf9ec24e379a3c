/*
 * bench/pingpong: the narma schemes and the paper's cost-model figures.
 *
 *   narma_pscw    NARMA_Win_start/Put/complete, NARMA_Win_post/wait
 *   narma_fence   NARMA_Put between NARMA_Win_fence calls
 *   narma_lock    lock_all; Put data, flush, Put flag, flush; peer polls with NARMA_Win_sync
 *   narma_notify  Listing 1: Put_notify + Win_flush, then Start/Wait on a persistent
 *                 notification request; stream: PP_WINDOW Put_notify and one Win_flush,
 *                 the server waits for a counting request of PP_WINDOW and acks with a
 *                 0-byte Put_notify
 *
 * The window of every narma scheme has the flavor pp_flavor (--flavor): allocate
 * (NARMA_Win_allocate), create (NARMA_Win_create over malloc'ed memory) or dynamic
 * (NARMA_Win_create_dynamic + NARMA_Win_attach of a malloc'ed buffer; the peer's
 * base address, from MPI_Get_address, is exchanged once and added to every target
 * displacement). Only <narma/narma.h> is used.
 *
 * Probe rounds (per-call costs, pingpong.h): narma_notify brackets NARMA_Put_notify,
 * NARMA_Win_flush and the receiving NARMA_Start + NARMA_Test; narma_notify_persistent
 * the persistent put's NARMA_Start and NARMA_Wait; narma_pscw NARMA_Win_post and
 * NARMA_Win_start.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <narma/narma.h>

#include "harness.h"
#include "pingpong.h"

/* Notification tags: Listing 1 uses 99. */
#define TAG_PINGPONG 99
#define TAG_STREAM   100
#define TAG_ACK      101

/* ---- library ------------------------------------------------------------ */

enum pp_flavor pp_flavor = PP_ALLOCATE;

const char *const pp_flavor_names[PP_NFLAVORS] = {"allocate", "create", "dynamic"};

int pp_narma_init(int *argc, char ***argv) { return NARMA_Init(argc, argv); }

void pp_narma_finalize(void) { NARMA_CHECK(NARMA_Finalize()); }

/* A narma window of pp_flavor over `bytes` on comm (collective). *base is this rank's
 * memory, *mem what to free after the window (NULL for allocate), *peer_base what to
 * add to a target displacement at the other rank of the pair. */
static void flavor_window(enum pp_flavor flavor, MPI_Comm comm, int peer, size_t bytes,
                          MPI_Info info, unsigned char **base, void **mem, MPI_Aint *peer_base,
                          NARMA_Win *win)
{
    *mem = NULL;
    *peer_base = 0;
    switch (flavor) {
    case PP_ALLOCATE:
        NARMA_CHECK(NARMA_Win_allocate((MPI_Aint)bytes, 1, info, comm, base, win));
        break;
    case PP_CREATE:
        *base = *mem = bench_alloc(bytes);
        NARMA_CHECK(NARMA_Win_create(*mem, (MPI_Aint)bytes, 1, info, comm, win));
        break;
    case PP_DYNAMIC: {
        *base = *mem = bench_alloc(bytes);
        NARMA_CHECK(NARMA_Win_create_dynamic(info, comm, win));
        NARMA_CHECK(NARMA_Win_attach(*win, *mem, (MPI_Aint)bytes));
        MPI_Aint mine, all[2];
        MPI_CHECK(MPI_Get_address(*mem, &mine));
        MPI_CHECK(MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, comm));
        *peer_base = all[peer];
        break;
    }
    default:
        bench_die(BENCH_HERE, "unknown window flavor %d", (int)flavor);
    }
}

static void flavor_free(enum pp_flavor flavor, NARMA_Win *win, void *mem)
{
    if (flavor == PP_DYNAMIC) NARMA_CHECK(NARMA_Win_detach(*win, mem));
    NARMA_CHECK(NARMA_Win_free(win));
    free(mem); /* after the window: it may be accessed until the free returns */
}

void pp_narma_transport(const struct pp_env *env, char *buf, size_t len)
{
    unsigned char *base;
    void *mem;
    MPI_Aint peer_base;
    NARMA_Win win;
    flavor_window(pp_flavor, env->comm, env->peer, 64, MPI_INFO_NULL, &base, &mem, &peer_base,
                  &win);
    const char *t = NARMA_Win_get_transport(win);
    if (strchr(t, '+') != NULL) /* a window across (pretend) nodes: the pair measured */
        snprintf(buf, len, "%s, %s toward the peer", t,
                 NARMA_Win_get_target_transport(win, env->peer));
    else
        snprintf(buf, len, "%s", t);
    flavor_free(pp_flavor, &win, mem);
}

/* ---- shared window helpers -------------------------------------------- */

struct narma_state {
    enum pp_flavor flavor;
    NARMA_Win win;
    unsigned char *base;
    void *mem;              /* create, dynamic: the malloc'ed window memory */
    MPI_Aint peer;          /* added to every target displacement (dynamic: peer's base) */
    MPI_Group peer_group;   /* for PSCW */
    uint64_t *flag;         /* my flag word, written by the peer (narma_lock) */
    uint64_t flag_out;      /* origin buffer of flag puts */
    uint64_t seq;           /* flags carry sequence numbers: no reset, no stale match */
    NARMA_Win bystander[2]; /* narma_notify_crowd: a Win_create and a dynamic window */
    void *bystander_mem[2];
    NARMA_Request pingpong; /* narma_notify: persistent requests */
    NARMA_Request stream;
    NARMA_Request ack;
    NARMA_Request pput, pack; /* narma_notify_persistent: the put (for pput_size bytes), the ack */
    size_t pput_size;
};

/* deferred: the window's notified accesses follow MPI's completion rules (window info
 * narma_notify_completion=flush: complete at the next flush, not on return). */
static void win_setup_info(const struct pp_env *env, struct pp_inst *inst, enum pp_flavor flavor,
                           int deferred)
{
    struct narma_state *st = calloc(1, sizeof *st);
    if (!st) bench_die(BENCH_HERE, "out of memory");
    st->flavor = flavor;
    MPI_Info info = MPI_INFO_NULL;
    if (deferred) {
        MPI_CHECK(MPI_Info_create(&info));
        MPI_CHECK(MPI_Info_set(info, "narma_notify_completion", "flush"));
    }
    flavor_window(flavor, env->comm, env->peer, pp_region_bytes(env->max_size), info, &st->base,
                  &st->mem, &st->peer, &st->win);
    if (deferred) MPI_CHECK(MPI_Info_free(&info));
    st->flag = (uint64_t *)(st->base + pp_flag_offset(env->max_size));
    *st->flag = 0; /* window memory starts undefined */
    MPI_Group g;
    MPI_CHECK(MPI_Comm_group(env->comm, &g));
    MPI_CHECK(MPI_Group_incl(g, 1, &env->peer, &st->peer_group));
    MPI_CHECK(MPI_Group_free(&g));
    st->pingpong = st->stream = st->ack = st->pput = st->pack = NARMA_REQUEST_NULL;
    inst->sbuf = bench_alloc(env->max_size);
    inst->rbuf = st->base + pp_rx_offset(env->rank, env->max_size);
    inst->env = env;
    inst->priv = st;
    MPI_CHECK(MPI_Barrier(env->comm));
}

static void win_setup_flavor(const struct pp_env *env, struct pp_inst *inst, enum pp_flavor flavor)
{
    win_setup_info(env, inst, flavor, 0);
}

static void win_setup(const struct pp_env *env, struct pp_inst *inst)
{
    win_setup_flavor(env, inst, pp_flavor);
}

static void win_teardown(struct pp_inst *inst)
{
    struct narma_state *st = inst->priv;
    MPI_CHECK(MPI_Group_free(&st->peer_group));
    flavor_free(st->flavor, &st->win, st->mem);
    free(inst->sbuf);
    free(st);
}

static void put_data(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    NARMA_CHECK(NARMA_Put(inst->sbuf, (int)size, MPI_BYTE, env->peer,
                          st->peer + (MPI_Aint)pp_rx_offset(env->peer, env->max_size), (int)size,
                          MPI_BYTE, st->win));
}

static int win_only_setup(const struct pp_env *env, struct pp_inst *inst)
{
    win_setup(env, inst);
    return PP_READY;
}

/* ---- narma_pscw -------------------------------------------------------- */

static void pscw_round(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    if (inst->env->rank == PP_CLIENT) {
        NARMA_CHECK(NARMA_Win_start(st->peer_group, 0, st->win));
        put_data(inst, size);
        NARMA_CHECK(NARMA_Win_complete(st->win));
        NARMA_CHECK(NARMA_Win_post(st->peer_group, 0, st->win));
        NARMA_CHECK(NARMA_Win_wait(st->win));
        pp_consume(inst->rbuf, size);
    } else {
        NARMA_CHECK(NARMA_Win_post(st->peer_group, 0, st->win));
        NARMA_CHECK(NARMA_Win_wait(st->win));
        pp_consume(inst->rbuf, size);
        NARMA_CHECK(NARMA_Win_start(st->peer_group, 0, st->win));
        put_data(inst, size);
        NARMA_CHECK(NARMA_Win_complete(st->win));
    }
}

/* The round with tokens: each start is made after the peer's matching post (the token
 * says so), so NARMA_Win_start measures its work rather than a wait for the post. */
static void pscw_start_put(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    struct narma_state *st = inst->priv;
    uint64_t t = pp_meter_begin(m, PP_CALL_START);
    int rc = NARMA_Win_start(st->peer_group, 0, st->win);
    pp_meter_end(m, PP_CALL_START, t);
    NARMA_CHECK(rc);
    put_data(inst, size);
    NARMA_CHECK(NARMA_Win_complete(st->win));
}

static void pscw_post(struct pp_inst *inst, struct pp_meter *m)
{
    struct narma_state *st = inst->priv;
    uint64_t t = pp_meter_begin(m, PP_CALL_POST);
    int rc = NARMA_Win_post(st->peer_group, 0, st->win);
    pp_meter_end(m, PP_CALL_POST, t);
    NARMA_CHECK(rc);
    pp_token_send(inst->env);
}

static void pscw_probe(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    struct narma_state *st = inst->priv;
    if (inst->env->rank == PP_CLIENT) {
        pp_token_recv(inst->env);
        pscw_start_put(inst, size, m);
        pscw_post(inst, m);
        NARMA_CHECK(NARMA_Win_wait(st->win));
        pp_consume(inst->rbuf, size);
    } else {
        pscw_post(inst, m);
        NARMA_CHECK(NARMA_Win_wait(st->win));
        pp_consume(inst->rbuf, size);
        pp_token_recv(inst->env);
        pscw_start_put(inst, size, m);
    }
}

const struct pp_scheme pp_narma_pscw = {
    .name = "narma_pscw",
    .what = "NARMA_Win_start/Put/complete, NARMA_Win_post/wait",
    .setup = win_only_setup,
    .teardown = win_teardown,
    .round = pscw_round,
    .probe = pscw_probe,
};

/* ---- narma_fence ------------------------------------------------------- */

static int fence_setup(const struct pp_env *env, struct pp_inst *inst)
{
    win_setup(env, inst);
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Win_fence(NARMA_MODE_NOPRECEDE, st->win));
    return PP_READY;
}

static void fence_teardown(struct pp_inst *inst)
{
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Win_fence(NARMA_MODE_NOSUCCEED, st->win));
    win_teardown(inst);
}

static void fence_round(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    if (inst->env->rank == PP_CLIENT) put_data(inst, size);
    NARMA_CHECK(NARMA_Win_fence(0, st->win));
    if (inst->env->rank == PP_SERVER) {
        pp_consume(inst->rbuf, size);
        put_data(inst, size);
    }
    NARMA_CHECK(NARMA_Win_fence(0, st->win));
    if (inst->env->rank == PP_CLIENT) pp_consume(inst->rbuf, size);
}

const struct pp_scheme pp_narma_fence = {
    .name = "narma_fence",
    .what = "NARMA_Put between NARMA_Win_fence calls",
    .setup = fence_setup,
    .teardown = fence_teardown,
    .round = fence_round,
};

/* ---- narma_lock -------------------------------------------------------- */

static int lock_setup(const struct pp_env *env, struct pp_inst *inst)
{
    win_setup(env, inst);
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Win_lock_all(0, st->win));
    return PP_READY;
}

static void lock_teardown(struct pp_inst *inst)
{
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Win_unlock_all(st->win));
    win_teardown(inst);
}

static void lock_round(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    uint64_t seq = ++st->seq;
    if (env->rank == PP_SERVER) {
        /* NARMA_Win_sync exposes the peer's completed puts to my loads; the acquire
         * load orders the data reads after the flag. */
        while (bench_load_acquire(st->flag) != seq)
            NARMA_CHECK(NARMA_Win_sync(st->win));
        NARMA_CHECK(NARMA_Win_sync(st->win));
        pp_consume(inst->rbuf, size);
    }
    put_data(inst, size);
    NARMA_CHECK(NARMA_Win_flush(env->peer, st->win)); /* data complete before the flag */
    st->flag_out = seq;
    NARMA_CHECK(NARMA_Put(&st->flag_out, 1, MPI_UINT64_T, env->peer,
                          st->peer + (MPI_Aint)pp_flag_offset(env->max_size), 1, MPI_UINT64_T,
                          st->win));
    NARMA_CHECK(NARMA_Win_flush(env->peer, st->win));
    if (env->rank == PP_CLIENT) {
        while (bench_load_acquire(st->flag) != seq)
            NARMA_CHECK(NARMA_Win_sync(st->win));
        NARMA_CHECK(NARMA_Win_sync(st->win));
        pp_consume(inst->rbuf, size);
    }
}

const struct pp_scheme pp_narma_lock = {
    .name = "narma_lock",
    .what = "narma lock_all; Put data + flush + Put flag + flush; peer polls with NARMA_Win_sync",
    .setup = lock_setup,
    .teardown = lock_teardown,
    .round = lock_round,
};

/* ---- narma_notify ------------------------------------------------------ */

static int notify_setup_flavor(const struct pp_env *env, struct pp_inst *inst,
                               enum pp_flavor flavor, int deferred)
{
    win_setup_info(env, inst, flavor, deferred);
    struct narma_state *st = inst->priv;
    /* Listing 1 flushes after each Put_notify; a flush belongs in a passive-target epoch. */
    NARMA_CHECK(NARMA_Win_lock_all(NARMA_MODE_NOCHECK, st->win));
    NARMA_CHECK(NARMA_Notify_init(st->win, env->peer, TAG_PINGPONG, 1, &st->pingpong));
    NARMA_CHECK(NARMA_Notify_init(st->win, env->peer, TAG_STREAM, PP_WINDOW, &st->stream));
    NARMA_CHECK(NARMA_Notify_init(st->win, env->peer, TAG_ACK, 1, &st->ack));
    return PP_READY;
}

static void notify_teardown(struct pp_inst *inst)
{
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Request_free(&st->pingpong));
    NARMA_CHECK(NARMA_Request_free(&st->stream));
    NARMA_CHECK(NARMA_Request_free(&st->ack));
    NARMA_CHECK(NARMA_Win_unlock_all(st->win));
    win_teardown(inst);
}

static void wait_notification(NARMA_Request *req)
{
    NARMA_CHECK(NARMA_Start(req));
    NARMA_CHECK(NARMA_Wait(req, MPI_STATUS_IGNORE));
}

static void notify_round(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    if (env->rank == PP_SERVER) {
        wait_notification(&st->pingpong);
        pp_consume(inst->rbuf, size);
    }
    NARMA_CHECK(NARMA_Put_notify(inst->sbuf, (int)size, MPI_BYTE, env->peer,
                                 st->peer + (MPI_Aint)pp_rx_offset(env->peer, env->max_size),
                                 (int)size, MPI_BYTE, st->win, TAG_PINGPONG));
    NARMA_CHECK(NARMA_Win_flush(env->peer, st->win));
    if (env->rank == PP_CLIENT) {
        wait_notification(&st->pingpong);
        pp_consume(inst->rbuf, size);
    }
}

static void notify_stream(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    if (env->rank == PP_CLIENT) {
        for (int i = 0; i < PP_WINDOW; i++)
            NARMA_CHECK(
                NARMA_Put_notify(inst->sbuf, (int)size, MPI_BYTE, env->peer,
                                 st->peer + (MPI_Aint)pp_rx_offset(env->peer, env->max_size),
                                 (int)size, MPI_BYTE, st->win, TAG_STREAM));
        NARMA_CHECK(NARMA_Win_flush(env->peer, st->win)); /* one flush per window */
        wait_notification(&st->ack);
    } else {
        wait_notification(&st->stream);
        pp_consume(inst->rbuf, size);
        NARMA_CHECK(NARMA_Put_notify(&st->flag_out, 0, MPI_BYTE, env->peer,
                                     st->peer + (MPI_Aint)pp_flag_offset(env->max_size), 0,
                                     MPI_BYTE, st->win, TAG_ACK));
        /* Under MPI's completion rules (narma_notify_deferred) the flush sends the ack;
         * otherwise it has nothing to do. */
        NARMA_CHECK(NARMA_Win_flush(env->peer, st->win));
    }
}

/* The receiving call of a probe round: the token says the notification is there, so
 * Start + Test measures matching it; a Test that finds nothing is counted and a Wait
 * (outside the bracket) finishes the request. */
static void probe_receive(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    struct narma_state *st = inst->priv;
    int flag = 0;
    pp_token_recv(inst->env);
    uint64_t t = pp_meter_begin(m, PP_CALL_RECEIVE);
    int rc = NARMA_Start(&st->pingpong);
    if (rc == NARMA_SUCCESS) rc = NARMA_Test(&st->pingpong, &flag, MPI_STATUS_IGNORE);
    pp_meter_end(m, PP_CALL_RECEIVE, t);
    NARMA_CHECK(rc);
    if (!flag) {
        pp_meter_miss(m, PP_CALL_RECEIVE);
        NARMA_CHECK(NARMA_Wait(&st->pingpong, MPI_STATUS_IGNORE));
    }
    pp_consume(inst->rbuf, size);
}

static void notify_probe_send(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    uint64_t t = pp_meter_begin(m, PP_CALL_PUT_NOTIFY);
    int rc = NARMA_Put_notify(inst->sbuf, (int)size, MPI_BYTE, env->peer,
                              st->peer + (MPI_Aint)pp_rx_offset(env->peer, env->max_size),
                              (int)size, MPI_BYTE, st->win, TAG_PINGPONG);
    pp_meter_end(m, PP_CALL_PUT_NOTIFY, t);
    NARMA_CHECK(rc);
    t = pp_meter_begin(m, PP_CALL_FLUSH);
    rc = NARMA_Win_flush(env->peer, st->win);
    pp_meter_end(m, PP_CALL_FLUSH, t);
    NARMA_CHECK(rc);
    pp_token_send(env);
}

static void notify_probe(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    if (inst->env->rank == PP_SERVER) probe_receive(inst, size, m);
    notify_probe_send(inst, size, m);
    if (inst->env->rank == PP_CLIENT) probe_receive(inst, size, m);
}

static int notify_setup(const struct pp_env *env, struct pp_inst *inst)
{
    return notify_setup_flavor(env, inst, pp_flavor, 0);
}

const struct pp_scheme pp_narma_notify = {
    .name = "narma_notify",
    .what = "Listing 1: Put_notify + Win_flush, Start/Wait on a persistent notification request",
    .setup = notify_setup,
    .teardown = notify_teardown,
    .round = notify_round,
    .stream = notify_stream,
    .probe = notify_probe,
};

/* The same under MPI's completion rules (window info narma_notify_completion=flush): the
 * round's Win_flush completes each Put_notify, the stream's one flush all 64 of them. */
static int notify_deferred_setup(const struct pp_env *env, struct pp_inst *inst)
{
    return notify_setup_flavor(env, inst, pp_flavor, 1);
}

const struct pp_scheme pp_narma_notify_deferred = {
    .name = "narma_notify_deferred",
    .what = "narma_notify with window info narma_notify_completion=flush (MPI's rules)",
    .setup = notify_deferred_setup,
    .teardown = notify_teardown,
    .round = notify_round,
    .stream = notify_stream,
};

/* ---- narma_notify_persistent ------------------------------------------ */

/* The persistent put of `size` bytes to the peer: made on the first round of a size (the
 * validated, untimed one), reused by every later round and stream message of that size. */
static NARMA_Request *persistent_put(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    if (st->pput == NARMA_REQUEST_NULL || st->pput_size != size) {
        if (st->pput != NARMA_REQUEST_NULL) NARMA_CHECK(NARMA_Request_free(&st->pput));
        NARMA_CHECK(
            NARMA_Put_notify_init(inst->sbuf, (int)size, MPI_BYTE, env->peer,
                                  st->peer + (MPI_Aint)pp_rx_offset(env->peer, env->max_size),
                                  (int)size, MPI_BYTE, st->win, TAG_PINGPONG, &st->pput));
        st->pput_size = size;
    }
    return &st->pput;
}

static void persistent_send(NARMA_Request *req)
{
    NARMA_CHECK(NARMA_Start(req));
    NARMA_CHECK(NARMA_Wait(req, MPI_STATUS_IGNORE));
}

static void persistent_round(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    if (env->rank == PP_SERVER) {
        wait_notification(&st->pingpong);
        pp_consume(inst->rbuf, size);
    }
    persistent_send(persistent_put(inst, size));
    if (env->rank == PP_CLIENT) {
        wait_notification(&st->pingpong);
        pp_consume(inst->rbuf, size);
    }
}

static void persistent_stream(struct pp_inst *inst, size_t size)
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    if (env->rank == PP_CLIENT) {
        NARMA_Request *put = persistent_put(inst, size);
        for (int i = 0; i < PP_WINDOW; i++)
            persistent_send(put);
        NARMA_CHECK(NARMA_Win_flush(env->peer, st->win)); /* one flush per window */
        wait_notification(&st->ack);
    } else {
        /* The stream's messages carry TAG_PINGPONG here: count them with their own request. */
        wait_notification(&st->stream);
        pp_consume(inst->rbuf, size);
        persistent_send(&st->pack);
    }
}

static void persistent_probe_send(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    NARMA_Request *put = persistent_put(inst, size);
    uint64_t t = pp_meter_begin(m, PP_CALL_PSTART);
    int rc = NARMA_Start(put);
    pp_meter_end(m, PP_CALL_PSTART, t);
    NARMA_CHECK(rc);
    t = pp_meter_begin(m, PP_CALL_PWAIT);
    rc = NARMA_Wait(put, MPI_STATUS_IGNORE);
    pp_meter_end(m, PP_CALL_PWAIT, t);
    NARMA_CHECK(rc);
    pp_token_send(inst->env);
}

static void persistent_probe(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    if (inst->env->rank == PP_SERVER) probe_receive(inst, size, m);
    persistent_probe_send(inst, size, m);
    if (inst->env->rank == PP_CLIENT) probe_receive(inst, size, m);
}

static int persistent_setup(const struct pp_env *env, struct pp_inst *inst)
{
    int rc = notify_setup_flavor(env, inst, pp_flavor, 0);
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Request_free(&st->stream)); /* counts TAG_PINGPONG instead */
    NARMA_CHECK(NARMA_Notify_init(st->win, env->peer, TAG_PINGPONG, PP_WINDOW, &st->stream));
    NARMA_CHECK(NARMA_Put_notify_init(&st->flag_out, 0, MPI_BYTE, env->peer,
                                      st->peer + (MPI_Aint)pp_flag_offset(env->max_size), 0,
                                      MPI_BYTE, st->win, TAG_ACK, &st->pack));
    return rc;
}

static void persistent_teardown(struct pp_inst *inst)
{
    struct narma_state *st = inst->priv;
    if (st->pput != NARMA_REQUEST_NULL) NARMA_CHECK(NARMA_Request_free(&st->pput));
    NARMA_CHECK(NARMA_Request_free(&st->pack));
    notify_teardown(inst);
}

const struct pp_scheme pp_narma_notify_persistent = {
    .name = "narma_notify_persistent",
    .what = "Put_notify_init once per size, then Start + Wait per message (no flush: complete on "
            "return)",
    .setup = persistent_setup,
    .teardown = persistent_teardown,
    .round = persistent_round,
    .stream = persistent_stream,
    .probe = persistent_probe,
};

/* The same on a window of a fixed flavor whatever --flavor says, so that one run
 * compares the flavors side by side (interleaved like every scheme). */
static int notify_create_setup(const struct pp_env *env, struct pp_inst *inst)
{
    return notify_setup_flavor(env, inst, PP_CREATE, 0);
}

static int notify_dynamic_setup(const struct pp_env *env, struct pp_inst *inst)
{
    return notify_setup_flavor(env, inst, PP_DYNAMIC, 0);
}

const struct pp_scheme pp_narma_notify_create = {
    .name = "narma_notify_create",
    .what = "narma_notify on a Win_create window over malloc'ed memory",
    .setup = notify_create_setup,
    .teardown = notify_teardown,
    .round = notify_round,
    .stream = notify_stream,
};

const struct pp_scheme pp_narma_notify_dynamic = {
    .name = "narma_notify_dynamic",
    .what = "narma_notify on a dynamic window (one malloc'ed region attached)",
    .setup = notify_dynamic_setup,
    .teardown = notify_teardown,
    .round = notify_round,
    .stream = notify_stream,
};

/* ---- narma_notify_crowd ------------------------------------------------- */

/* The same ping-pong while two more windows merely exist: a Win_create and a
 * dynamic window (one region attached), on the transports narma picks for
 * them. Waiting on one window must not pay for polling the others. */
static int crowd_setup(const struct pp_env *env, struct pp_inst *inst)
{
    notify_setup(env, inst);
    struct narma_state *st = inst->priv;
    for (int i = 0; i < 2; i++)
        if (!(st->bystander_mem[i] = calloc(1, 4096))) bench_die(BENCH_HERE, "out of memory");
    NARMA_CHECK(NARMA_Win_create(st->bystander_mem[0], 4096, 1, MPI_INFO_NULL, env->comm,
                                 &st->bystander[0]));
    NARMA_CHECK(NARMA_Win_create_dynamic(MPI_INFO_NULL, env->comm, &st->bystander[1]));
    NARMA_CHECK(NARMA_Win_attach(st->bystander[1], st->bystander_mem[1], 4096));
    MPI_CHECK(MPI_Barrier(env->comm));
    return PP_READY;
}

static void crowd_teardown(struct pp_inst *inst)
{
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Win_detach(st->bystander[1], st->bystander_mem[1]));
    for (int i = 0; i < 2; i++) {
        NARMA_CHECK(NARMA_Win_free(&st->bystander[i]));
        free(st->bystander_mem[i]);
    }
    notify_teardown(inst);
}

const struct pp_scheme pp_narma_notify_crowd = {
    .name = "narma_notify_crowd",
    .what = "narma_notify while a Win_create and a dynamic window also exist",
    .setup = crowd_setup,
    .teardown = crowd_teardown,
    .round = notify_round,
};

/* ---- cost model (paper section V-A) ------------------------------------ */

#define COST_BATCH 64
#define TAG_COST   7

/* Median over `batches` of the per-call time of Notify_init, Request_free and Start. */
static void request_costs(NARMA_Win win, int peer, int batches, struct pp_costs *out)
{
    NARMA_Request req[COST_BATCH];
    double *ti = malloc(3 * (size_t)batches * sizeof *ti);
    if (!ti) bench_die(BENCH_HERE, "out of memory");
    double *tf = ti + batches, *ts = tf + batches;
    for (int b = 0; b < batches; b++) {
        double t0 = bench_now();
        for (int i = 0; i < COST_BATCH; i++)
            NARMA_CHECK(NARMA_Notify_init(win, peer, TAG_COST, 1, &req[i]));
        double t1 = bench_now();
        for (int i = 0; i < COST_BATCH; i++)
            NARMA_CHECK(NARMA_Start(&req[i]));
        double t2 = bench_now();
        /* These requests stay active: freeing withdraws them (nothing will match them). */
        for (int i = 0; i < COST_BATCH; i++)
            NARMA_CHECK(NARMA_Request_free(&req[i]));
        double t3 = bench_now();
        ti[b] = (t1 - t0) / COST_BATCH;
        ts[b] = (t2 - t1) / COST_BATCH;
        tf[b] = (t3 - t2) / COST_BATCH;
    }
    out->t_init = 1e6 * bench_median(ti, (size_t)batches);
    out->t_start = 1e6 * bench_median(ts, (size_t)batches);
    out->t_free = 1e6 * bench_median(tf, (size_t)batches);
    free(ti);
}

/* Client: per-call cost of Put_notify (8 B), optionally + flush, in batches the server
 * drains with a counting request; a 0-byte MPI message acks each batch. */
static double put_notify_cost(const struct pp_env *env, NARMA_Win win, int batches, int flush)
{
    uint64_t payload = 42;
    double *t = malloc((size_t)batches * sizeof *t);
    if (!t) bench_die(BENCH_HERE, "out of memory");
    NARMA_Request drain = NARMA_REQUEST_NULL;
    if (env->rank == PP_SERVER)
        NARMA_CHECK(NARMA_Notify_init(win, env->peer, TAG_COST, COST_BATCH, &drain));
    for (int b = 0; b < batches; b++) {
        if (env->rank == PP_CLIENT) {
            double t0 = bench_now();
            for (int i = 0; i < COST_BATCH; i++) {
                NARMA_CHECK(NARMA_Put_notify(&payload, 8, MPI_BYTE, env->peer, 0, 8, MPI_BYTE, win,
                                             TAG_COST));
                if (flush) NARMA_CHECK(NARMA_Win_flush(env->peer, win));
            }
            t[b] = (bench_now() - t0) / COST_BATCH;
            MPI_CHECK(
                MPI_Recv(NULL, 0, MPI_BYTE, env->peer, TAG_COST, env->comm, MPI_STATUS_IGNORE));
        } else {
            NARMA_CHECK(NARMA_Start(&drain));
            NARMA_CHECK(NARMA_Wait(&drain, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, env->peer, TAG_COST, env->comm));
        }
    }
    if (env->rank == PP_SERVER) NARMA_CHECK(NARMA_Request_free(&drain));
    double m = env->rank == PP_CLIENT ? 1e6 * bench_median(t, (size_t)batches) : NAN;
    free(t);
    return m;
}

/* Server: time of Start + Test on a request whose one notification has already arrived
 * (NARMA_Put_notify returns once the notification is at the target, and the client
 * sends its 0-byte MPI token after that). Returns microseconds on the server. */
static double receive_cost(const struct pp_env *env, NARMA_Win win, int samples, long *misses)
{
    uint64_t payload = 43;
    double *t = malloc((size_t)samples * sizeof *t);
    if (!t) bench_die(BENCH_HERE, "out of memory");
    NARMA_Request req = NARMA_REQUEST_NULL;
    *misses = 0;
    if (env->rank == PP_SERVER) NARMA_CHECK(NARMA_Notify_init(win, env->peer, TAG_COST, 1, &req));
    /* Clock overhead, subtracted from each Start+Test sample. */
    double clk[64];
    for (int i = 0; i < 64; i++) {
        double a = bench_now();
        clk[i] = bench_now() - a;
    }
    double overhead = bench_median(clk, 64);
    for (int s = 0; s < samples; s++) {
        if (env->rank == PP_CLIENT) {
            NARMA_CHECK(
                NARMA_Put_notify(&payload, 8, MPI_BYTE, env->peer, 0, 8, MPI_BYTE, win, TAG_COST));
            MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, env->peer, TAG_COST, env->comm));
            MPI_CHECK(
                MPI_Recv(NULL, 0, MPI_BYTE, env->peer, TAG_COST, env->comm, MPI_STATUS_IGNORE));
        } else {
            int flag = 0;
            MPI_CHECK(
                MPI_Recv(NULL, 0, MPI_BYTE, env->peer, TAG_COST, env->comm, MPI_STATUS_IGNORE));
            double t0 = bench_now();
            NARMA_CHECK(NARMA_Start(&req));
            NARMA_CHECK(NARMA_Test(&req, &flag, MPI_STATUS_IGNORE));
            t[s] = bench_now() - t0 - overhead;
            if (!flag) {
                (*misses)++;
                NARMA_CHECK(NARMA_Wait(&req, MPI_STATUS_IGNORE));
            }
            MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, env->peer, TAG_COST, env->comm));
        }
    }
    double m = NAN;
    if (env->rank == PP_SERVER) {
        NARMA_CHECK(NARMA_Request_free(&req));
        m = 1e6 * bench_median(t, (size_t)samples);
    }
    free(t);
    return m;
}

void pp_narma_costs(const struct pp_env *env, int samples, struct pp_costs *out)
{
    void *base;
    NARMA_Win win;
    out->t_init = out->t_free = out->t_start = out->o_s = out->o_s_flush = out->o_r = NAN;
    out->o_r_misses = 0;
    NARMA_CHECK(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, env->comm, &base, &win));
    NARMA_CHECK(NARMA_Win_lock_all(NARMA_MODE_NOCHECK, win)); /* for the flushes */
    int batches = samples / COST_BATCH > 8 ? samples / COST_BATCH : 8;

    if (env->rank == PP_CLIENT) request_costs(win, env->peer, batches, out);
    MPI_CHECK(MPI_Barrier(env->comm));
    out->o_s = put_notify_cost(env, win, batches, 0);
    out->o_s_flush = put_notify_cost(env, win, batches, 1);
    double o_r = receive_cost(env, win, samples, &out->o_r_misses);

    /* o_r was measured on the server: hand it to the client, which prints. */
    if (env->rank == PP_SERVER) {
        double msg[2] = {o_r, (double)out->o_r_misses};
        MPI_CHECK(MPI_Send(msg, 2, MPI_DOUBLE, env->peer, TAG_COST, env->comm));
    } else {
        double msg[2];
        MPI_CHECK(MPI_Recv(msg, 2, MPI_DOUBLE, env->peer, TAG_COST, env->comm, MPI_STATUS_IGNORE));
        out->o_r = msg[0];
        out->o_r_misses = (long)msg[1];
    }
    NARMA_CHECK(NARMA_Win_unlock_all(win));
    NARMA_CHECK(NARMA_Win_free(&win));
}

/* ---- narma_notify_counter ------------------------------------------------ */
/* The MPI-5.1 draft's model: NARMA_Put_notify_idx + Win_flush (as Listing 1), the receiver
 * waits on a threshold request (NARMA_Win_notify_ithreshold + NARMA_Wait) for its counter 0
 * to reach the rounds received so far (cumulative: nothing reset). */
static int counter_setup(const struct pp_env *env, struct pp_inst *inst)
{
    win_setup_info(env, inst, pp_flavor, 0);
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Win_set_num_notify(st->win, MPI_INFO_NULL, 1));
    NARMA_CHECK(NARMA_Win_lock_all(NARMA_MODE_NOCHECK, st->win));
    st->seq = 0;
    return PP_READY;
}

static void counter_teardown(struct pp_inst *inst)
{
    struct narma_state *st = inst->priv;
    NARMA_CHECK(NARMA_Win_unlock_all(st->win));
    win_teardown(inst);
}

static void counter_wait(struct narma_state *st)
{
    NARMA_Request r;
    NARMA_CHECK(NARMA_Win_notify_ithreshold(st->win, 0, (MPI_Count)++st->seq, &r));
    NARMA_CHECK(NARMA_Wait(&r, MPI_STATUS_IGNORE));
}

/* One round of a counter ping-pong; wait is how the receiver waits for counter 0. */
static void counter_round_with(struct pp_inst *inst, size_t size,
                               void (*wait)(struct narma_state *st))
{
    struct narma_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    if (env->rank == PP_SERVER) {
        wait(st);
        pp_consume(inst->rbuf, size);
    }
    NARMA_CHECK(NARMA_Put_notify_idx(inst->sbuf, (int)size, MPI_BYTE, env->peer,
                                     st->peer + (MPI_Aint)pp_rx_offset(env->peer, env->max_size),
                                     (int)size, MPI_BYTE, 0, st->win));
    NARMA_CHECK(NARMA_Win_flush(env->peer, st->win));
    if (env->rank == PP_CLIENT) {
        wait(st);
        pp_consume(inst->rbuf, size);
    }
}

static void counter_round(struct pp_inst *inst, size_t size)
{
    counter_round_with(inst, size, counter_wait);
}

const struct pp_scheme pp_narma_notify_counter = {
    .name = "narma_notify_counter",
    .what = "counter-indexed (MPI-5.1 draft): Put_notify_idx + Win_flush, ithreshold + Wait",
    .setup = counter_setup,
    .teardown = counter_teardown,
    .round = counter_round,
};

/* ---- narma_notify_counter_poll ------------------------------------------- */
/* The draft's other way to wait: no request, the receiver polls
 * NARMA_Win_get_notify_value until counter 0 reaches the rounds received so far. Kept apart
 * from narma_notify_counter (the judged counter/notify ratio is the threshold request's). */
static void counter_poll(struct narma_state *st)
{
    MPI_Count v, want = (MPI_Count)++st->seq;
    do
        NARMA_CHECK(NARMA_Win_get_notify_value(st->win, 0, &v));
    while (v < want);
}

static void counter_poll_round(struct pp_inst *inst, size_t size)
{
    counter_round_with(inst, size, counter_poll);
}

const struct pp_scheme pp_narma_notify_counter_poll = {
    .name = "narma_notify_counter_poll",
    .what = "counter-indexed, polled: Put_notify_idx + Win_flush, Win_get_notify_value loop",
    .setup = counter_setup,
    .teardown = counter_teardown,
    .round = counter_poll_round,
};
