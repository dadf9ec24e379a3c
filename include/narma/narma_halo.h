/*
 * narma_halo: halo exchange over a 2-D Cartesian process grid, for weather
 * and climate codes. Declare once (a plan), exchange many times, with any
 * communication strategy chosen at run time; every strategy produces results
 * bit-identical to the message-passing one (NARMA_HALO_P2P).
 *
 * Geometry. The communicator is 2-D Cartesian with dims {npy, npx}
 * (MPI_Cart_create order): dimension 0 is north-south (y, "rows"), dimension
 * 1 is east-west (x). The east neighbour has coords {cy, cx + 1}, the north
 * neighbour {cy + 1, cx}. Columns are never split in z.
 *
 * Field storage. Each field is one contiguous array holding the interior
 * (nz, ny, nx) plus halo_y rows and halo_x columns on each side:
 *   NARMA_HALO_LAYOUT_ZYX (default): C  f[nz][ny + 2*halo_y][nx + 2*halo_x]
 *                                    Fortran f(1-hx:nx+hx, 1-hy:ny+hy, nz)
 *                                    (x fastest, the Unified Model's order)
 *   NARMA_HALO_LAYOUT_XYZ:           C  f[nx + 2*halo_x][ny + 2*halo_y][nz]
 *                                    Fortran f(nz, 1-hy:ny+hy, 1-hx:nx+hx)
 *                                    (z fastest, MONC's column order)
 * The interior point (i, j) with 0 <= i < nx, 0 <= j < ny is at x index
 * i + halo_x and y index j + halo_y of the array.
 *
 * What an exchange writes. The halo strips of the directions the plan
 * exchanges (east-west, north-south or both) receive the neighbour's
 * interior strip next to the shared edge. With corners on:
 *   - a plan exchanging both directions also fills the four corner blocks
 *     from the diagonal neighbours' interior corners (one message each);
 *   - a plan exchanging one direction extends its strips across the other
 *     direction's halo, so an EW plan then an NS plan with corners fills the
 *     corners the way the Unified Model does (two-phase).
 * Halo cells with no neighbour (non-periodic edges) are never written.
 * A neighbour that is the process itself (periodic, one process in that
 * direction) is served by a local copy.
 *
 * Collectivity. Plan creation and free are collective over the
 * communicator. An exchange is collective over the plan's neighbours (the
 * fence strategy: over the whole communicator); every rank must make the
 * same sequence of exchange/start/finish calls on a plan.
 *
 * Threads: plans over distinct communicators may be used by distinct threads
 * at once under MPI_THREAD_MULTIPLE (narma.h); a plan must not be used by
 * two threads at once, and plans over one communicator are created one thread
 * at a time (MPI's rule for collectives).
 *
 * Errors: every call returns NARMA_SUCCESS (0), a class of narma's enum
 * narma_error, or one of the halo classes below (all positive);
 * NARMA_Halo_error_string() describes any of them. Plan creation checks are
 * agreed on by all ranks: either every rank gets a plan or every rank gets
 * the same error and no plan.
 */
#ifndef NARMA_NARMA_HALO_H
#define NARMA_NARMA_HALO_H

#include <narma/narma.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque plan handle. */
typedef struct narmah_plan *NARMA_Halo_plan;
#define NARMA_HALO_PLAN_NULL ((NARMA_Halo_plan)0)

/** Communication strategies. The values are stable (Fortran uses them). */
typedef enum {
    NARMA_HALO_DEFAULT = 0,   /**< $NARMA_HALO_STRATEGY if set, else NARMA_HALO_P2P */
    NARMA_HALO_P2P,           /**< MPI_Irecv / MPI_Isend / MPI_Waitall of packed buffers */
    NARMA_HALO_FENCE,         /**< fence epochs, one Put per neighbour */
    NARMA_HALO_PSCW,          /**< post/start/complete/wait with groups built once */
    NARMA_HALO_PSCW_NB,       /**< nonblocking ipost/istart/icomplete/iwait epochs */
    NARMA_HALO_LOCK,          /**< lock_all held for the plan's life; Put, flush, flag */
    NARMA_HALO_DYNAMIC,       /**< dynamic window with the plan's receive buffers attached
                                   (addresses exchanged once per plan); PSCW; packed Put */
    NARMA_HALO_NOTIFY,        /**< one Put_notify per neighbour, one counting request */
    NARMA_HALO_NOTIFY_FIELDS, /**< the fields themselves exposed (Win_create at the first
                                   exchange, kept until plan free): one Put_notify per
                                   neighbour and field straight into its halo, after a
                                   credit from it; no packing or unpacking */
    NARMA_HALO_NSTRATEGIES
} NARMA_Halo_strategy;

/** Which directions a plan exchanges (a bit set). */
enum {
    NARMA_HALO_EW = 1,  /**< east-west (x) */
    NARMA_HALO_NS = 2,  /**< north-south (y) */
    NARMA_HALO_BOTH = 3 /**< both in one exchange (default when 0) */
};

/** Field storage orders (see the file comment). */
typedef enum { NARMA_HALO_LAYOUT_ZYX = 0, NARMA_HALO_LAYOUT_XYZ = 1 } NARMA_Halo_layout;

/** Halo-specific error classes (beyond narma's own enum narma_error). */
enum narma_halo_error {
    NARMA_HALO_ERR_TOPOLOGY = 64, /**< the communicator is not 2-D Cartesian */
    NARMA_HALO_ERR_SHAPE,         /**< invalid shape, or shapes/parameters differ between
                                       neighbours (or ranks) */
    NARMA_HALO_ERR_DEPTH,         /**< halo depth < 1 or deeper than the interior */
    NARMA_HALO_ERR_SIZE,          /**< a field array is smaller than its layout needs */
    NARMA_HALO_ERR_STRATEGY,      /**< unknown strategy (value or name) */
    NARMA_HALO_ERR_STATE,         /**< start while an exchange is open, finish without start */
    NARMA_HALO_ERR_LASTCODE
};

/**
 * Plan description. Zero-initialise it (or use NARMA_HALO_DESC_INIT) and set
 * what you need; zero means "default" for every member.
 */
typedef struct {
    int nz, ny, nx;               /**< interior shape of every field (required, >= 1) */
    int halo_x, halo_y;           /**< halo depth east-west and north-south (default 2) */
    MPI_Datatype datatype;        /**< a predefined element type (default MPI_DOUBLE) */
    int nfields;                  /**< fields exchanged together (default 1) */
    int corners;                  /**< nonzero: fill corners (see the file comment) */
    int directions;               /**< NARMA_HALO_EW, _NS or _BOTH (default _BOTH) */
    NARMA_Halo_layout layout;     /**< storage order (default NARMA_HALO_LAYOUT_ZYX) */
    NARMA_Halo_strategy strategy; /**< default: $NARMA_HALO_STRATEGY, else p2p */
    size_t field_elems;           /**< elements allocated per field; 0 = not checked, else
                                       NARMA_HALO_ERR_SIZE if below the layout's need */
} NARMA_Halo_desc;

#define NARMA_HALO_DESC_INIT                                                                    \
    {                                                                                           \
        0, 0, 0, 0, 0, MPI_DATATYPE_NULL, 0, 0, 0, NARMA_HALO_LAYOUT_ZYX, NARMA_HALO_DEFAULT, 0 \
    }

/**
 * Create a plan (collective over @p cart). Windows, groups, buffers and
 * notification requests are created here, once.
 * @param cart  a 2-D Cartesian communicator (duplicated internally)
 * @param desc  the description; all ranks must agree on everything except
 *              nx (equal within a process column) and ny (equal within a row)
 * @param plan  out: the plan
 * @return NARMA_SUCCESS; NARMA_ERR_ARG (NULL pointer, bad directions/layout/
 *         nfields); NARMA_HALO_ERR_TOPOLOGY; NARMA_HALO_ERR_SHAPE;
 *         NARMA_HALO_ERR_DEPTH; NARMA_HALO_ERR_SIZE; NARMA_HALO_ERR_STRATEGY
 *         (also for a bad $NARMA_HALO_STRATEGY); NARMA_ERR_TYPE (datatype not
 *         predefined); NARMA_ERR_NO_MEM; NARMA_ERR_MPI or any narma error from
 *         window creation.
 */
NARMA_API int NARMA_Halo_plan_create(MPI_Comm cart, const NARMA_Halo_desc *desc,
                                     NARMA_Halo_plan *plan);

/**
 * Exchange halos of @p fields (nfields pointers) and return when they are
 * complete. Same as NARMA_Halo_start followed by NARMA_Halo_finish.
 * @return NARMA_SUCCESS; NARMA_ERR_ARG (NULL plan or fields);
 *         NARMA_HALO_ERR_STATE (an exchange is open); narma/MPI errors.
 */
NARMA_API int NARMA_Halo_exchange(NARMA_Halo_plan plan, void *fields[]);

/**
 * Begin an exchange: the interior strips are read (packed or put) before
 * this returns or before NARMA_Halo_finish returns; until NARMA_Halo_finish
 * returns, the caller may compute on the interior away from the edges but
 * must not write the interior strips nor touch any halo. @p fields is copied:
 * the array of pointers may be reused at once.
 * @return as NARMA_Halo_exchange.
 */
NARMA_API int NARMA_Halo_start(NARMA_Halo_plan plan, void *fields[]);

/**
 * Complete the exchange begun by NARMA_Halo_start: halos are valid on return.
 * @return NARMA_SUCCESS; NARMA_ERR_ARG; NARMA_HALO_ERR_STATE (no exchange
 *         open); narma/MPI errors.
 */
NARMA_API int NARMA_Halo_finish(NARMA_Halo_plan plan);

/**
 * Free a plan (collective) and set *plan to NARMA_HALO_PLAN_NULL.
 * @return NARMA_SUCCESS; NARMA_ERR_ARG; NARMA_HALO_ERR_STATE (exchange open).
 */
NARMA_API int NARMA_Halo_plan_free(NARMA_Halo_plan *plan);

/** The strategy a plan uses (after resolving NARMA_HALO_DEFAULT). */
NARMA_API NARMA_Halo_strategy NARMA_Halo_plan_strategy(NARMA_Halo_plan plan);

/** Name of a strategy ("p2p", "fence", "pscw", "pscw_nb", "lock", "dynamic",
 *  "notify", "notify_fields"; "default"); "unknown" for other values. Never NULL. */
NARMA_API const char *NARMA_Halo_strategy_name(NARMA_Halo_strategy strategy);

/** Strategy from its name (as NARMA_Halo_strategy_name spells it).
 *  @return NARMA_SUCCESS or NARMA_HALO_ERR_STRATEGY. */
NARMA_API int NARMA_Halo_strategy_from_name(const char *name, NARMA_Halo_strategy *strategy);

/** Elements one field array needs for @p desc (0 for an invalid desc). */
NARMA_API size_t NARMA_Halo_field_elems(const NARMA_Halo_desc *desc);

/** Text for a narma or halo error class; never NULL. */
NARMA_API const char *NARMA_Halo_error_string(int errorcode);

#ifdef __cplusplus
}
#endif
#endif /* NARMA_NARMA_HALO_H */
