/*
 * bench/pingpong: the interface between the driver (pingpong.c) and the
 * schemes (pp_mpi.c, pp_narma.c, pp_shm.c).
 *
 * Rank 0 of env->comm is the client, rank 1 the server. Every scheme uses the
 * same memory layout on each rank (as in Listing 1 of the Notified Access
 * paper): a ping region [0, max_size) that the client writes at the server, a
 * pong region [max_size, 2*max_size) that the server writes at the client,
 * and one 64-byte line of flags after them that only the peer writes.
 *
 * A scheme's round() performs one ping-pong round trip of `size` bytes:
 * the client sends the ping and returns once the pong has arrived; the
 * server returns once it has sent the pong. Whoever receives a message
 * consumes it (pp_consume) before going on. stream() moves PP_WINDOW
 * back-to-back messages client -> server, the server synchronises once
 * and returns a small acknowledgement that the client waits for.
 */
#ifndef NARMA_BENCH_PINGPONG_H
#define NARMA_BENCH_PINGPONG_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "harness.h"

#define PP_CLIENT 0
#define PP_SERVER 1
/** Messages per synchronisation in the bandwidth test (OSU's window size). */
#define PP_WINDOW 64

/** The pair of ranks a scheme runs on. */
struct pp_env {
    MPI_Comm comm;     /**< ranks 0 (client) and 1 (server) of MPI_COMM_WORLD */
    MPI_Comm shm_comm; /**< the same pair if it shares memory, else MPI_COMM_NULL */
    int rank;          /**< PP_CLIENT or PP_SERVER */
    int peer;          /**< the other one */
    size_t max_size;   /**< largest message */
};

/** Offset of the region the peer writes into on `rank`. */
static inline size_t pp_rx_offset(int rank, size_t max_size)
{
    return rank == PP_CLIENT ? max_size : 0;
}
/**
 * Offset of the flag word of a window: the first line after both messages, so
 * that the flag never shares a cache line with the data, whatever the largest
 * size of the run. (It once sat at 2 * max_size: with --sizes 8 the idiom's
 * flag then shared the data's line and moved with it, at 8,64K it did not.)
 * raw_shm keeps data and flag in one line on purpose: it is the limit.
 */
static inline size_t pp_flag_offset(size_t max_size) { return (2 * max_size + 63) / 64 * 64; }
/** Bytes of window/segment memory every scheme exposes: ping, pong, flag line. */
static inline size_t pp_region_bytes(size_t max_size) { return pp_flag_offset(max_size) + 64; }

/**
 * The receiver reads the first and last byte of every message it gets, as the
 * paper's limit benchmark does: data nobody reads never has to leave the
 * writer's cache, which would flatter schemes whose data and flag travel
 * separately against those that carry small data with the notification.
 */
extern unsigned pp_sink;
static inline void pp_consume(const unsigned char *buf, size_t size)
{
    pp_sink += buf[0] + buf[size - 1];
}

/*
 * Per-call costs. A scheme's probe() makes one round trip like round(), with two
 * differences: a 0-byte MPI token follows every message (pp_token_send), and
 * whoever receives takes the token (pp_token_recv) before its receiving call, so
 * that call finds the message there and measures its work, not the wait; and the
 * calls of interest are bracketed with pp_meter_begin/end. Only the call
 * m->call is measured in a block (the others run unbracketed), so under
 * callgrind a block's dump holds the instructions of that one kind of call.
 * Probe rounds are never timed as round trips: the latency tables stay
 * undisturbed.
 */
enum pp_call {
    PP_CALL_NONE = -1,     /**< a warm-up block: nothing bracketed */
    PP_CALL_BRACKET,       /**< an empty bracket: the cost of measuring */
    PP_CALL_PUT_NOTIFY,    /**< NARMA_Put_notify (narma_notify) */
    PP_CALL_FLUSH,         /**< NARMA_Win_flush after it */
    PP_CALL_RECEIVE,       /**< NARMA_Start + NARMA_Test of the notification request */
    PP_CALL_PSTART,        /**< NARMA_Start of a persistent notified put */
    PP_CALL_PWAIT,         /**< NARMA_Wait of that put (local completion) */
    PP_CALL_POST,          /**< NARMA_Win_post */
    PP_CALL_START,         /**< NARMA_Win_start */
    PP_CALL_MPI_SEND,      /**< MPI_Send (mpi_sendrecv) */
    PP_CALL_MPI_RECV,      /**< MPI_Recv of an arrived message */
    PP_CALL_MPI_PUT_FLUSH, /**< MPI_Put + MPI_Win_flush of the data (mpi_flush_flag) */
    PP_CALL_MPI_POST,      /**< MPI_Win_post */
    PP_CALL_MPI_START,     /**< MPI_Win_start */
    PP_NCALLS
};

/** What one rank records in a probe block. */
struct pp_meter {
    enum pp_call call; /**< the kind bracketed in this block */
    uint64_t *ticks;   /**< bench_ticks of each bracketed call */
    long n, cap;
    long misses; /**< receiving calls that did not find the message (finished by a wait) */
};

/** Open the bracket of call c if it is the kind measured (returns the start tick). */
static inline uint64_t pp_meter_begin(const struct pp_meter *m, enum pp_call c)
{
    if (m->call != c) return 0;
    uint64_t t = bench_ticks_begin();
    bench_instr_toggle(); /* count from here ... */
    return t;
}

static inline void pp_meter_end(struct pp_meter *m, enum pp_call c, uint64_t t0)
{
    if (m->call != c) return;
    bench_instr_toggle(); /* ... to here */
    uint64_t t = bench_ticks_end();
    if (m->n < m->cap) m->ticks[m->n++] = t - t0;
}

/** A receiving call of kind c found nothing: count it once (the bracket is closed already). */
static inline void pp_meter_miss(struct pp_meter *m, enum pp_call c)
{
    if (m->call == c) m->misses++;
}

#define PP_TAG_TOKEN 77 /* MPI tag of the probe rounds' tokens on env->comm */

static inline void pp_token_send(const struct pp_env *env)
{
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, env->peer, PP_TAG_TOKEN, env->comm));
}

static inline void pp_token_recv(const struct pp_env *env)
{
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, env->peer, PP_TAG_TOKEN, env->comm, MPI_STATUS_IGNORE));
}

/** A scheme set up on the pair: what the driver needs to see. */
struct pp_inst {
    unsigned char *sbuf; /**< local source of every message (max_size bytes) */
    unsigned char *rbuf; /**< where the peer's message lands on this rank */
    const struct pp_env *env;
    void *priv; /**< the scheme's own state */
};

enum pp_setup_result { PP_READY = 0, PP_UNAVAILABLE = 1 };

struct pp_scheme {
    const char *name;
    const char *what; /**< one line for the output header */
    /** Collective on env->comm. PP_UNAVAILABLE (on both ranks) skips the scheme. */
    int (*setup)(const struct pp_env *env, struct pp_inst *inst);
    void (*teardown)(struct pp_inst *inst);
    /** Optional: move inst->sbuf/rbuf for messages of `size` (called before each block). */
    void (*place)(struct pp_inst *inst, size_t size);
    void (*round)(struct pp_inst *inst, size_t size);
    /** NULL when the scheme takes no part in the bandwidth table. */
    void (*stream)(struct pp_inst *inst, size_t size);
    /** NULL when none of its calls is measured on its own; see struct pp_meter. */
    void (*probe)(struct pp_inst *inst, size_t size, struct pp_meter *m);
};

/* pp_mpi.c: MPI-only schemes. */
extern const struct pp_scheme pp_mpi_sendrecv, pp_mpi_pscw, pp_mpi_fence, pp_mpi_flush_flag;
/* pp_shm.c: the physical limit. */
extern const struct pp_scheme pp_raw_shm;
/* pp_narma.c: narma schemes. */
extern const struct pp_scheme pp_narma_pscw, pp_narma_fence, pp_narma_lock, pp_narma_notify,
    pp_narma_notify_crowd, pp_narma_notify_create, pp_narma_notify_dynamic,
    pp_narma_notify_deferred, pp_narma_notify_persistent, pp_narma_notify_counter,
    pp_narma_notify_counter_poll;

/** Paper section V cost-model figures, in microseconds (NaN when not measured). */
struct pp_costs {
    double t_init, t_free, t_start; /**< Notify_init, Request_free, Start */
    double o_s;                     /**< Put_notify of 8 B while the target drains */
    double o_s_flush;               /**< Put_notify of 8 B + Win_flush */
    double o_r;                     /**< Start + Test finding one arrived notification */
    long o_r_misses;                /**< Tests that did not find the arrived notification */
};

/** The kind of window every narma scheme uses (--flavor; pp_narma.c). */
enum pp_flavor { PP_ALLOCATE, PP_CREATE, PP_DYNAMIC, PP_NFLAVORS };
extern enum pp_flavor pp_flavor;
extern const char *const pp_flavor_names[PP_NFLAVORS];

/** Library start-up (pp_narma.c). */
int pp_narma_init(int *argc, char ***argv);
void pp_narma_finalize(void);
/** Transport of a fresh narma window of pp_flavor on env->comm (collective). */
void pp_narma_transport(const struct pp_env *env, char *buf, size_t len);
/** Measure the cost-model figures (collective on env->comm; results valid on the client). */
void pp_narma_costs(const struct pp_env *env, int samples, struct pp_costs *out);

#endif /* NARMA_BENCH_PINGPONG_H */
