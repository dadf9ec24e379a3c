/*
 * narma_halo internals. The halo module is a client of narma's public API:
 * it includes <narma/narma.h>, <narma/narma_halo.h> and MPI, nothing else.
 *
 * A plan is a list of links, one per neighbour direction (up to 8: W, E, S,
 * N and, with corners in a two-direction plan, SW, SE, NW, NE). Link k sends
 * my interior strip next to direction k to peer[k]; peer[k] stores it in
 * the halo of its link opp(k). Every strategy moves, per remote link, one
 * message holding the strip of every field; self links (periodic, one
 * process in that direction) are local copies. Regions and buffer layouts
 * are shared by all strategies, which is why they are bit-identical.
 *
 * Receive buffers (RMA strategies) hold two slots per
 * remote link, used by exchange parity. A slot of parity p is rewritten at
 * exchange n + 2 at the earliest, and a neighbour cannot begin exchange
 * n + 2 before finishing n + 1, which needs our data of n + 1, which we send
 * only after unpacking n: so a slot is never overwritten before it is read.
 */
#ifndef NARMA_HALO_INTERNAL_H
#define NARMA_HALO_INTERNAL_H

#include <narma/narma.h>
#include <narma/narma_halo.h>
#include <stdint.h>

#define NARMAH_MAXLINKS 8
#define NARMAH_ALIGN                                             \
    64 /* slot alignment; also pads windows (some MPIs lose puts \
          on MPI_Win_allocate sizes that are not multiples of 16) */

/* A box of one field in storage order: dimension 0 slowest, 2 contiguous.
 * Offsets and strides in elements. */
typedef struct {
    MPI_Aint off;
    int n[3];
    MPI_Aint s[3];
} narmah_box;

typedef struct {
    int dir;  /* direction index, see narmah_dirs */
    int peer; /* rank in the plan communicator */
    int self; /* peer is this process */
    narmah_box send, recv;
    size_t bytes;           /* all fields */
    size_t send_off;        /* into plan->sendbuf */
    size_t recv_off;        /* slot of parity 0 in my receive buffer; parity 1 at + recv_stride */
    MPI_Aint target_disp;   /* parity-0 slot for me in the peer's receive buffer */
    MPI_Aint target_stride; /* the peer's parity stride (its link set may differ from ours) */
    narmah_box peer_recv;   /* the peer's halo box for this link, over its field (its shape) */
} narmah_link;

struct narmah_plan;

/* One strategy: a table entry. init/free are collective; start/finish run
 * once per exchange. Defaults (NULL) are never called: every entry is full. */
typedef struct {
    const char *name;
    int (*init)(struct narmah_plan *p);
    int (*start)(struct narmah_plan *p);
    int (*finish)(struct narmah_plan *p);
    void (*free)(struct narmah_plan *p);
} narmah_strategy_ops;

struct narmah_plan {
    MPI_Comm comm;
    int rank, size;
    NARMA_Halo_desc d; /* resolved: no zero defaults left */
    NARMA_Halo_strategy strategy;
    int elsize;
    size_t field_elems;
    int nlinks, nremote;
    int any_remote; /* some rank of the plan has a remote link */
    narmah_link link[NARMAH_MAXLINKS];
    int peers[NARMAH_MAXLINKS]; /* distinct remote peers */
    int npeers;
    char *sendbuf; /* packed strips, remote links */
    size_t send_bytes;
    char *recvbuf;      /* 2 * recv_stride bytes: window memory or malloc'd */
    size_t recv_stride; /* bytes per parity */
    size_t win_bytes;   /* window size incl. flags and padding */
    void **fields;      /* current exchange's fields (copied) */
    uint64_t seq;       /* exchanges begun */
    int open;           /* start called, finish not yet */
    void *st;           /* strategy state */
};

typedef struct narmah_plan narmah_plan;

extern const narmah_strategy_ops *const narmah_strategies[NARMA_HALO_NSTRATEGIES];
extern const narmah_strategy_ops narmah_p2p_ops, narmah_fence_ops, narmah_pscw_ops,
    narmah_pscw_nb_ops, narmah_lock_ops, narmah_dynamic_ops, narmah_notify_ops,
    narmah_notify_fields_ops;

/* Direction geometry: dx, dy of direction k and its opposite. */
extern const int narmah_dx[NARMAH_MAXLINKS], narmah_dy[NARMAH_MAXLINKS];
static inline int narmah_opp(int k) { return k ^ 1; }

/* pack.c. A box's bytes in one field; a box as a committed byte datatype over
 * a field (rows of n[2] elements, n[1] rows s[1] apart, n[0] planes s[0]
 * apart: the order narmah_pack packs in), for puts with no packing pass. */
size_t narmah_box_bytes(const narmah_plan *p, const narmah_box *b);
int narmah_box_type(const narmah_plan *p, const narmah_box *b, MPI_Datatype *t);
void narmah_pack(const narmah_plan *p, const narmah_link *l, char *dst);
void narmah_unpack(const narmah_plan *p, const narmah_link *l, const char *src);
void narmah_self_copies(const narmah_plan *p);

/* Parity of the exchange in progress (seq counts from 1). */
static inline int narmah_parity(const narmah_plan *p) { return (int)(p->seq & 1); }
static inline char *narmah_recv_slot(const narmah_plan *p, const narmah_link *l)
{
    return p->recvbuf + l->recv_off + (size_t)narmah_parity(p) * p->recv_stride;
}
static inline MPI_Aint narmah_target_slot(const narmah_plan *p, const narmah_link *l)
{
    return l->target_disp + (MPI_Aint)narmah_parity(p) * l->target_stride;
}

/* Common window helpers (plan.c): receive window over allocated memory with
 * the flag area first, and the group of distinct remote peers. */
#define NARMAH_FLAGS_BYTES NARMAH_ALIGN /* 8 uint64 flags, one per direction */
int narmah_alloc_recv_win(narmah_plan *p, NARMA_Win *win);
int narmah_peer_group(narmah_plan *p, NARMA_Win win, MPI_Group *g);
int narmah_recv_win_and_group(narmah_plan *p, NARMA_Win *win, MPI_Group *g);
int narmah_mpi_err(int mpirc);

#endif /* NARMA_HALO_INTERNAL_H */
