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

/** Bytes of window/segment memory every scheme exposes: ping, pong, flag line. */
static inline size_t pp_region_bytes(size_t max_size) { return 2 * max_size + 64; }
/** Offset of the region the peer writes into on `rank`. */
static inline size_t pp_rx_offset(int rank, size_t max_size)
{
    return rank == PP_CLIENT ? max_size : 0;
}
/** Offset of the flag word (in the flag line) of a window. */
static inline size_t pp_flag_offset(size_t max_size) { return 2 * max_size; }

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
};

/* pp_mpi.c: MPI-only schemes. */
extern const struct pp_scheme pp_mpi_sendrecv, pp_mpi_pscw, pp_mpi_fence, pp_mpi_flush_flag;
/* pp_shm.c: the physical limit. */
extern const struct pp_scheme pp_raw_shm;
/* pp_narma.c: narma schemes. */
extern const struct pp_scheme pp_narma_pscw, pp_narma_fence, pp_narma_lock, pp_narma_notify,
    pp_narma_notify_crowd, pp_narma_notify_create, pp_narma_notify_dynamic,
    pp_narma_notify_deferred, pp_narma_notify_persistent;

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
