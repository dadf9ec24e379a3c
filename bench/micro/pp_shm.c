/*
 * bench/pingpong: raw_shm, the physical limit of a shared-memory ping-pong.
 *
 * Each rank allocates (MPI_Win_allocate_shared, used only as an allocator)
 * a receive area: one 64-byte line holding a sequence-number flag at offset 0,
 * then the data. A message of up to 56 bytes sits in the flag's line (offset
 * 8), so it and its flag travel in one cache line each way; a larger one
 * starts at the adjacent, line-aligned offset 64 (an 8-byte misalignment costs
 * memcpy up to a third of its bandwidth here). The sender memcpy's the message
 * into the peer's area and then stores the sequence number with release
 * semantics; the receiver spins on its flag with acquire loads. No MPI call
 * sits on the critical path.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pingpong.h"

#define INLINE_MAX 56 /* bytes of data that share the flag's line */

static inline size_t data_offset(size_t size) { return size <= INLINE_MAX ? 8 : 64; }

struct shm_state {
    MPI_Win win;
    uint64_t *my_flag;   /* written by the peer (release), read by me (acquire) */
    uint64_t *peer_flag; /* written by me */
    unsigned char *peer; /* the peer's receive area */
    unsigned char *mine; /* my receive area */
    unsigned char *sbuf_alloc;
    uint64_t seq;
};

static int shm_setup(const struct pp_env *env, struct pp_inst *inst)
{
    if (env->shm_comm == MPI_COMM_NULL) return PP_UNAVAILABLE;
    struct shm_state *st = calloc(1, sizeof *st);
    if (!st) bench_die(BENCH_HERE, "out of memory");

    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    /* Page-aligned, separately placed segments: each rank's area is first-touched locally. */
    MPI_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    MPI_Aint bytes = (MPI_Aint)(64 + env->max_size + 64);
    unsigned char *mine;
    MPI_CHECK(MPI_Win_allocate_shared(bytes, 1, info, env->shm_comm, &mine, &st->win));
    MPI_CHECK(MPI_Info_free(&info));

    int peer_in_shm;
    MPI_Group wg, sg;
    MPI_CHECK(MPI_Comm_group(env->comm, &wg));
    MPI_CHECK(MPI_Comm_group(env->shm_comm, &sg));
    MPI_CHECK(MPI_Group_translate_ranks(wg, 1, &env->peer, sg, &peer_in_shm));
    MPI_CHECK(MPI_Group_free(&wg));
    MPI_CHECK(MPI_Group_free(&sg));

    MPI_Aint peer_bytes;
    int disp;
    unsigned char *peer;
    MPI_CHECK(MPI_Win_shared_query(st->win, peer_in_shm, &peer_bytes, &disp, &peer));

    memset(mine, 0, (size_t)bytes);
    st->mine = mine;
    st->peer = peer;
    st->my_flag = (uint64_t *)mine;
    st->peer_flag = (uint64_t *)peer;
    st->sbuf_alloc = bench_alloc(env->max_size + 64);
    inst->env = env;
    inst->priv = st;
    /* The barrier orders both memsets before any message (MPI_Barrier synchronises memory). */
    MPI_CHECK(MPI_Barrier(env->comm));
    return PP_READY;
}

/* Source and destination get the same alignment modulo 64, so memcpy aligns both at once. */
static void shm_place(struct pp_inst *inst, size_t size)
{
    struct shm_state *st = inst->priv;
    inst->sbuf = st->sbuf_alloc + data_offset(size);
    inst->rbuf = st->mine + data_offset(size);
}

static void shm_teardown(struct pp_inst *inst)
{
    struct shm_state *st = inst->priv;
    MPI_CHECK(MPI_Win_free(&st->win));
    free(st->sbuf_alloc);
    free(st);
}

static inline void shm_wait(const struct shm_state *st, uint64_t seq)
{
    /* Acquire pairs with the peer's release in shm_publish: its data is visible after this. */
    while (bench_load_acquire(st->my_flag) != seq)
        bench_cpu_relax();
}

static inline void shm_publish(struct shm_state *st, uint64_t seq)
{
    /* Release: the data copied before must be visible before the peer sees seq. */
    bench_store_release(st->peer_flag, seq);
}

static void shm_round(struct pp_inst *inst, size_t size)
{
    struct shm_state *st = inst->priv;
    uint64_t seq = ++st->seq;
    if (inst->env->rank == PP_SERVER) {
        shm_wait(st, seq);
        pp_consume(inst->rbuf, size);
    }
    memcpy(st->peer + data_offset(size), inst->sbuf, size);
    shm_publish(st, seq);
    if (inst->env->rank == PP_CLIENT) {
        shm_wait(st, seq);
        pp_consume(inst->rbuf, size);
    }
}

static void shm_stream(struct pp_inst *inst, size_t size)
{
    struct shm_state *st = inst->priv;
    uint64_t seq = ++st->seq;
    if (inst->env->rank == PP_CLIENT) {
        for (int i = 0; i < PP_WINDOW; i++) {
            memcpy(st->peer + data_offset(size), inst->sbuf, size);
            /* Compiler-only barrier: keep the compiler from merging the repeated copies. */
            atomic_signal_fence(memory_order_seq_cst);
        }
        shm_publish(st, seq);
        shm_wait(st, seq); /* the ack */
    } else {
        shm_wait(st, seq);
        pp_consume(inst->rbuf, size);
        shm_publish(st, seq);
    }
}

const struct pp_scheme pp_raw_shm = {
    .name = "raw_shm",
    .what = "memcpy into the peer's shared segment + release-store seq flag; peer spins (acquire)",
    .setup = shm_setup,
    .teardown = shm_teardown,
    .place = shm_place,
    .round = shm_round,
    .stream = shm_stream,
};
