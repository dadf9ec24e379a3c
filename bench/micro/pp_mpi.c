/*
 * bench/pingpong: the MPI-only schemes, the baselines narma is judged against.
 *
 *   mpi_sendrecv    MPI_Send/MPI_Recv (stream: a window of Isend/Irecv, then an ack)
 *   mpi_pscw        start/put/complete, post/wait as in the paper's client/server listing
 *   mpi_fence       put between two fences
 *   mpi_flush_flag  lock_all; put data, flush, put a sequence-number flag, flush;
 *                   the peer polls its flag word with MPI_Win_sync
 *
 * Probe rounds (per-call costs, pingpong.h), MPI's counterparts of narma's calls:
 * MPI_Send and MPI_Recv of an arrived message, MPI_Put + MPI_Win_flush of the data,
 * MPI_Win_post and MPI_Win_start.
 */
#include <stdlib.h>

#include "harness.h"
#include "pingpong.h"

#define TAG_DATA 1
#define TAG_ACK  2

/* ---- shared window helpers -------------------------------------------- */

struct mpi_win_state {
    MPI_Win win;
    unsigned char *base;
    MPI_Group peer_group; /* for PSCW */
    uint64_t *flag;       /* my flag word, written by the peer */
    uint64_t flag_out;    /* origin buffer of flag puts (stable until the flush) */
    uint64_t seq;         /* flags carry sequence numbers: no reset, no stale match */
};

static void win_setup(const struct pp_env *env, struct pp_inst *inst)
{
    struct mpi_win_state *st = calloc(1, sizeof *st);
    if (!st) bench_die(BENCH_HERE, "out of memory");
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)pp_region_bytes(env->max_size), 1, MPI_INFO_NULL,
                               env->comm, &st->base, &st->win));
    /* Window memory starts undefined: zero my flag before anyone can write it. */
    st->flag = (uint64_t *)(st->base + pp_flag_offset(env->max_size));
    *st->flag = 0;
    MPI_Group g;
    MPI_CHECK(MPI_Win_get_group(st->win, &g));
    MPI_CHECK(MPI_Group_incl(g, 1, &env->peer, &st->peer_group));
    MPI_CHECK(MPI_Group_free(&g));
    inst->sbuf = bench_alloc(env->max_size);
    inst->rbuf = st->base + pp_rx_offset(env->rank, env->max_size);
    inst->env = env;
    inst->priv = st;
    MPI_CHECK(MPI_Barrier(env->comm));
}

static void win_teardown(struct pp_inst *inst)
{
    struct mpi_win_state *st = inst->priv;
    MPI_CHECK(MPI_Group_free(&st->peer_group));
    MPI_CHECK(MPI_Win_free(&st->win));
    free(inst->sbuf);
    free(st);
}

static void put_data(struct pp_inst *inst, size_t size)
{
    struct mpi_win_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    MPI_CHECK(MPI_Put(inst->sbuf, (int)size, MPI_BYTE, env->peer,
                      (MPI_Aint)pp_rx_offset(env->peer, env->max_size), (int)size, MPI_BYTE,
                      st->win));
}

/* ---- mpi_sendrecv ------------------------------------------------------ */

static int sendrecv_setup(const struct pp_env *env, struct pp_inst *inst)
{
    inst->sbuf = bench_alloc(env->max_size);
    inst->rbuf = bench_alloc(env->max_size);
    inst->env = env;
    inst->priv = NULL;
    return PP_READY;
}

static void sendrecv_teardown(struct pp_inst *inst)
{
    free(inst->sbuf);
    free(inst->rbuf);
}

static void sendrecv_round(struct pp_inst *inst, size_t size)
{
    const struct pp_env *env = inst->env;
    if (env->rank == PP_CLIENT) {
        MPI_CHECK(MPI_Send(inst->sbuf, (int)size, MPI_BYTE, env->peer, TAG_DATA, env->comm));
        MPI_CHECK(MPI_Recv(inst->rbuf, (int)size, MPI_BYTE, env->peer, TAG_DATA, env->comm,
                           MPI_STATUS_IGNORE));
        pp_consume(inst->rbuf, size);
    } else {
        MPI_CHECK(MPI_Recv(inst->rbuf, (int)size, MPI_BYTE, env->peer, TAG_DATA, env->comm,
                           MPI_STATUS_IGNORE));
        pp_consume(inst->rbuf, size);
        MPI_CHECK(MPI_Send(inst->sbuf, (int)size, MPI_BYTE, env->peer, TAG_DATA, env->comm));
    }
}

static void sendrecv_stream(struct pp_inst *inst, size_t size)
{
    const struct pp_env *env = inst->env;
    MPI_Request req[PP_WINDOW];
    for (int i = 0; i < PP_WINDOW; i++) {
        if (env->rank == PP_CLIENT)
            MPI_CHECK(MPI_Isend(inst->sbuf, (int)size, MPI_BYTE, env->peer, TAG_DATA, env->comm,
                                &req[i]));
        else
            MPI_CHECK(MPI_Irecv(inst->rbuf, (int)size, MPI_BYTE, env->peer, TAG_DATA, env->comm,
                                &req[i]));
    }
    MPI_CHECK(MPI_Waitall(PP_WINDOW, req, MPI_STATUSES_IGNORE));
    if (env->rank == PP_CLIENT) {
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, env->peer, TAG_ACK, env->comm, MPI_STATUS_IGNORE));
    } else {
        pp_consume(inst->rbuf, size);
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, env->peer, TAG_ACK, env->comm));
    }
}

/* The round with tokens: the receiver takes the token (another tag) first, so the data
 * message, sent before it, is already at the receiving side when MPI_Recv is called. */
static void sendrecv_probe_send(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    const struct pp_env *env = inst->env;
    uint64_t t = pp_meter_begin(m, PP_CALL_MPI_SEND);
    int rc = MPI_Send(inst->sbuf, (int)size, MPI_BYTE, env->peer, TAG_DATA, env->comm);
    pp_meter_end(m, PP_CALL_MPI_SEND, t);
    MPI_CHECK(rc);
    pp_token_send(env);
}

static void sendrecv_probe_recv(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    const struct pp_env *env = inst->env;
    pp_token_recv(env);
    uint64_t t = pp_meter_begin(m, PP_CALL_MPI_RECV);
    int rc = MPI_Recv(inst->rbuf, (int)size, MPI_BYTE, env->peer, TAG_DATA, env->comm,
                      MPI_STATUS_IGNORE);
    pp_meter_end(m, PP_CALL_MPI_RECV, t);
    MPI_CHECK(rc);
    pp_consume(inst->rbuf, size);
}

static void sendrecv_probe(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    if (inst->env->rank == PP_SERVER) sendrecv_probe_recv(inst, size, m);
    sendrecv_probe_send(inst, size, m);
    if (inst->env->rank == PP_CLIENT) sendrecv_probe_recv(inst, size, m);
}

const struct pp_scheme pp_mpi_sendrecv = {
    .name = "mpi_sendrecv",
    .what = "MPI_Send/MPI_Recv; stream: Isend/Irecv window + 0-byte ack",
    .setup = sendrecv_setup,
    .teardown = sendrecv_teardown,
    .round = sendrecv_round,
    .stream = sendrecv_stream,
    .probe = sendrecv_probe,
};

/* ---- mpi_pscw ---------------------------------------------------------- */

static int win_only_setup(const struct pp_env *env, struct pp_inst *inst)
{
    win_setup(env, inst);
    return PP_READY;
}

static void pscw_round(struct pp_inst *inst, size_t size)
{
    struct mpi_win_state *st = inst->priv;
    if (inst->env->rank == PP_CLIENT) {
        MPI_CHECK(MPI_Win_start(st->peer_group, 0, st->win));
        put_data(inst, size);
        MPI_CHECK(MPI_Win_complete(st->win));
        MPI_CHECK(MPI_Win_post(st->peer_group, 0, st->win));
        MPI_CHECK(MPI_Win_wait(st->win));
        pp_consume(inst->rbuf, size);
    } else {
        MPI_CHECK(MPI_Win_post(st->peer_group, 0, st->win));
        MPI_CHECK(MPI_Win_wait(st->win));
        pp_consume(inst->rbuf, size);
        MPI_CHECK(MPI_Win_start(st->peer_group, 0, st->win));
        put_data(inst, size);
        MPI_CHECK(MPI_Win_complete(st->win));
    }
}

/* As narma_pscw's probe: each start is made after the peer's matching post. */
static void pscw_start_put(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    struct mpi_win_state *st = inst->priv;
    uint64_t t = pp_meter_begin(m, PP_CALL_MPI_START);
    int rc = MPI_Win_start(st->peer_group, 0, st->win);
    pp_meter_end(m, PP_CALL_MPI_START, t);
    MPI_CHECK(rc);
    put_data(inst, size);
    MPI_CHECK(MPI_Win_complete(st->win));
}

static void pscw_post(struct pp_inst *inst, struct pp_meter *m)
{
    struct mpi_win_state *st = inst->priv;
    uint64_t t = pp_meter_begin(m, PP_CALL_MPI_POST);
    int rc = MPI_Win_post(st->peer_group, 0, st->win);
    pp_meter_end(m, PP_CALL_MPI_POST, t);
    MPI_CHECK(rc);
    pp_token_send(inst->env);
}

static void pscw_probe(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    struct mpi_win_state *st = inst->priv;
    if (inst->env->rank == PP_CLIENT) {
        pp_token_recv(inst->env);
        pscw_start_put(inst, size, m);
        pscw_post(inst, m);
        MPI_CHECK(MPI_Win_wait(st->win));
        pp_consume(inst->rbuf, size);
    } else {
        pscw_post(inst, m);
        MPI_CHECK(MPI_Win_wait(st->win));
        pp_consume(inst->rbuf, size);
        pp_token_recv(inst->env);
        pscw_start_put(inst, size, m);
    }
}

const struct pp_scheme pp_mpi_pscw = {
    .name = "mpi_pscw",
    .what = "MPI_Win_start/Put/complete, MPI_Win_post/wait (paper's listing)",
    .setup = win_only_setup,
    .teardown = win_teardown,
    .round = pscw_round,
    .probe = pscw_probe,
};

/* ---- mpi_fence --------------------------------------------------------- */

static int fence_setup(const struct pp_env *env, struct pp_inst *inst)
{
    win_setup(env, inst);
    struct mpi_win_state *st = inst->priv;
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, st->win));
    return PP_READY;
}

static void fence_teardown(struct pp_inst *inst)
{
    struct mpi_win_state *st = inst->priv;
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, st->win));
    win_teardown(inst);
}

static void fence_round(struct pp_inst *inst, size_t size)
{
    struct mpi_win_state *st = inst->priv;
    /* Client: put ping | fence | (server puts pong) | fence. */
    if (inst->env->rank == PP_CLIENT) put_data(inst, size);
    MPI_CHECK(MPI_Win_fence(0, st->win));
    if (inst->env->rank == PP_SERVER) {
        pp_consume(inst->rbuf, size);
        put_data(inst, size);
    }
    MPI_CHECK(MPI_Win_fence(0, st->win));
    if (inst->env->rank == PP_CLIENT) pp_consume(inst->rbuf, size);
}

const struct pp_scheme pp_mpi_fence = {
    .name = "mpi_fence",
    .what = "MPI_Put between MPI_Win_fence calls",
    .setup = fence_setup,
    .teardown = fence_teardown,
    .round = fence_round,
};

/* ---- mpi_flush_flag ---------------------------------------------------- */

static int flush_flag_setup(const struct pp_env *env, struct pp_inst *inst)
{
    win_setup(env, inst);
    struct mpi_win_state *st = inst->priv;
    MPI_CHECK(MPI_Win_lock_all(0, st->win));
    return PP_READY;
}

static void flush_flag_teardown(struct pp_inst *inst)
{
    struct mpi_win_state *st = inst->priv;
    MPI_CHECK(MPI_Win_unlock_all(st->win));
    win_teardown(inst);
}

/* Publish sequence number `seq` into the peer's flag word, after everything put before. */
static void put_flag(struct mpi_win_state *st, const struct pp_env *env, uint64_t seq)
{
    st->flag_out = seq;
    MPI_CHECK(MPI_Put(&st->flag_out, 1, MPI_UINT64_T, env->peer,
                      (MPI_Aint)pp_flag_offset(env->max_size), 1, MPI_UINT64_T, st->win));
    MPI_CHECK(MPI_Win_flush(env->peer, st->win));
}

static void wait_flag(struct mpi_win_state *st, uint64_t seq)
{
    /* MPI_Win_sync makes the peer's completed puts visible to my loads (unified model);
     * the acquire load orders the later reads of the data after the flag. */
    while (bench_load_acquire(st->flag) != seq)
        MPI_CHECK(MPI_Win_sync(st->win));
    MPI_CHECK(MPI_Win_sync(st->win));
}

static void flush_flag_round(struct pp_inst *inst, size_t size)
{
    struct mpi_win_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    uint64_t seq = ++st->seq;
    if (env->rank == PP_SERVER) {
        wait_flag(st, seq);
        pp_consume(inst->rbuf, size);
    }
    put_data(inst, size);
    MPI_CHECK(MPI_Win_flush(env->peer, st->win)); /* data complete before the flag is issued */
    put_flag(st, env, seq);
    if (env->rank == PP_CLIENT) {
        wait_flag(st, seq);
        pp_consume(inst->rbuf, size);
    }
}

static void flush_flag_stream(struct pp_inst *inst, size_t size)
{
    struct mpi_win_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    uint64_t seq = ++st->seq;
    if (env->rank == PP_CLIENT) {
        for (int i = 0; i < PP_WINDOW; i++)
            put_data(inst, size);
        MPI_CHECK(MPI_Win_flush(env->peer, st->win));
        put_flag(st, env, seq);
        wait_flag(st, seq); /* the ack */
    } else {
        wait_flag(st, seq);
        pp_consume(inst->rbuf, size);
        put_flag(st, env, seq);
    }
}

/* The round, with the data's put + flush bracketed (nothing waits there: no token needed). */
static void flush_flag_probe(struct pp_inst *inst, size_t size, struct pp_meter *m)
{
    struct mpi_win_state *st = inst->priv;
    const struct pp_env *env = inst->env;
    uint64_t seq = ++st->seq;
    if (env->rank == PP_SERVER) {
        wait_flag(st, seq);
        pp_consume(inst->rbuf, size);
    }
    uint64_t t = pp_meter_begin(m, PP_CALL_MPI_PUT_FLUSH);
    int rc =
        MPI_Put(inst->sbuf, (int)size, MPI_BYTE, env->peer,
                (MPI_Aint)pp_rx_offset(env->peer, env->max_size), (int)size, MPI_BYTE, st->win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(env->peer, st->win);
    pp_meter_end(m, PP_CALL_MPI_PUT_FLUSH, t);
    MPI_CHECK(rc);
    put_flag(st, env, seq);
    if (env->rank == PP_CLIENT) {
        wait_flag(st, seq);
        pp_consume(inst->rbuf, size);
    }
}

const struct pp_scheme pp_mpi_flush_flag = {
    .name = "mpi_flush_flag",
    .what = "MPI lock_all; Put data + flush + Put flag + flush; peer polls flag with MPI_Win_sync",
    .setup = flush_flag_setup,
    .teardown = flush_flag_teardown,
    .round = flush_flag_round,
    .stream = flush_flag_stream,
    .probe = flush_flag_probe,
};
