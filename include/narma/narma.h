/*
 * narma: Notified and Asynchronous RMA over any MPI-3 library.
 *
 * The API mirrors MPI's one-sided interface (same argument order, MPI
 * datatypes, communicators, groups, infos and statuses). Programs written for
 * foMPI-NA build with <narma/fompi.h>, which maps the foMPI_ names onto these
 * and keeps foMPI's conventions where they differ from MPI's. MPI_PROC_NULL
 * is a valid target (and lock/flush rank) everywhere: the call does nothing.
 *
 * Threads: narma offers the thread level MPI offers. Under MPI_THREAD_MULTIPLE
 * (MPI_Init_thread or NARMA_Init_thread asked for it and MPI provides it; or
 * NARMA_THREADS=on) a process lock makes these concurrent uses safe:
 *   - any calls on distinct windows and on distinct requests, collective ones
 *     included (window creation over distinct communicators, Win_free, fence,
 *     set_num_notify), as MPI allows collectives on distinct communicators;
 *   - on one window, from several threads at once: every RMA data call (Put,
 *     Get, the accumulates and atomics, their R, _notify, _idx and _c forms)
 *     inside an epoch that stays open meanwhile, the flushes and Win_sync,
 *     notification requests (Notify_init, Start, Test, Wait, Request_free, each
 *     request used by one thread at a time), counter reads and resets and
 *     threshold requests, NARMA_Progress.
 * One thread at a time per window (as MPI requires of synchronisation): the
 * calls that open or close epochs (fence, post/start/complete/wait,
 * lock/unlock, lock_all/unlock_all and their i-forms), Win_free,
 * Win_set_num_notify, attach and detach, set_info, set_errhandler. A request
 * is tested or waited by one thread at a time. Waiting calls let other threads
 * run between their polls, and blocking MPI collectives run outside the lock.
 * Without MPI_THREAD_MULTIPLE the lock is off and costs one branch per call;
 * narma calls then follow MPI's rules for the level (one thread at a time).
 * The lock serialises narma's own work: threads gain concurrency with their
 * computation and with the network, not parallel speed inside narma. A window
 * error handler runs holding it: it may call narma, but must not wait for
 * another thread's narma call.
 *
 * Errors: every call returns NARMA_SUCCESS (0) or a positive error class of
 * enum narma_error; NARMA_Error_string() (or NARMA_Strerror()) describes it. When an MPI call
 * failed underneath, the class is NARMA_ERR_MPI and NARMA_Get_mpi_error()
 * returns the MPI error code.
 */
#ifndef NARMA_NARMA_H
#define NARMA_NARMA_H

#include <mpi.h>
#include <narma/narma_version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(NARMA_NO_VISIBILITY)
#define NARMA_API __attribute__((visibility("default")))
#else
#define NARMA_API
#endif

/** Opaque window handle. */
typedef struct narmai_win *NARMA_Win;
/** Opaque request handle (notification, request-based RMA, epoch). */
typedef struct narmai_request *NARMA_Request;
/** Reduction operations are MPI's own. */
typedef MPI_Op NARMA_Op;

#define NARMA_WIN_NULL     ((NARMA_Win)0)
#define NARMA_REQUEST_NULL ((NARMA_Request)0)

/* Wildcards and limits for notification matching. */
#define NARMA_ANY_SOURCE MPI_ANY_SOURCE
#define NARMA_ANY_TAG    MPI_ANY_TAG
/** Largest valid notification tag (tags are 0 .. NARMA_TAG_UB). */
#define NARMA_TAG_UB    0x3fffffff
#define NARMA_UNDEFINED MPI_UNDEFINED
#define NARMA_COMM_NULL MPI_COMM_NULL

/* Window flavors and models, as reported by NARMA_Win_get_attr. */
#define NARMA_WIN_FLAVOR_CREATE   MPI_WIN_FLAVOR_CREATE
#define NARMA_WIN_FLAVOR_ALLOCATE MPI_WIN_FLAVOR_ALLOCATE
#define NARMA_WIN_FLAVOR_DYNAMIC  MPI_WIN_FLAVOR_DYNAMIC
#define NARMA_WIN_FLAVOR_SHARED   MPI_WIN_FLAVOR_SHARED
#define NARMA_WIN_SEPARATE        MPI_WIN_SEPARATE
#define NARMA_WIN_UNIFIED         MPI_WIN_UNIFIED

/* Assertions. */
#define NARMA_MODE_NOCHECK   MPI_MODE_NOCHECK
#define NARMA_MODE_NOSTORE   MPI_MODE_NOSTORE
#define NARMA_MODE_NOPUT     MPI_MODE_NOPUT
#define NARMA_MODE_NOPRECEDE MPI_MODE_NOPRECEDE
#define NARMA_MODE_NOSUCCEED MPI_MODE_NOSUCCEED

/* Lock types. */
#define NARMA_LOCK_SHARED    MPI_LOCK_SHARED
#define NARMA_LOCK_EXCLUSIVE MPI_LOCK_EXCLUSIVE

/* Predefined window attributes. */
#define NARMA_WIN_BASE          MPI_WIN_BASE
#define NARMA_WIN_SIZE          MPI_WIN_SIZE
#define NARMA_WIN_DISP_UNIT     MPI_WIN_DISP_UNIT
#define NARMA_WIN_CREATE_FLAVOR MPI_WIN_CREATE_FLAVOR
#define NARMA_WIN_MODEL         MPI_WIN_MODEL

/* Attributes of counter-indexed notifications (NARMA_Win_get_attr; the value is a pointer to
 * an MPI_Count): the largest number of counters NARMA_Win_set_num_notify accepts, and the
 * largest value a counter reaches (it saturates there: it never wraps). */
#define NARMA_WIN_NOTIFICATION_NUM_UB   (-0x4e4e0001)
#define NARMA_WIN_NOTIFICATION_VALUE_UB (-0x4e4e0002)

/* Operations. */
#define NARMA_SUM     MPI_SUM
#define NARMA_PROD    MPI_PROD
#define NARMA_MAX     MPI_MAX
#define NARMA_MIN     MPI_MIN
#define NARMA_LAND    MPI_LAND
#define NARMA_LOR     MPI_LOR
#define NARMA_LXOR    MPI_LXOR
#define NARMA_BAND    MPI_BAND
#define NARMA_BOR     MPI_BOR
#define NARMA_BXOR    MPI_BXOR
#define NARMA_MAXLOC  MPI_MAXLOC
#define NARMA_MINLOC  MPI_MINLOC
#define NARMA_REPLACE MPI_REPLACE
#define NARMA_NO_OP   MPI_NO_OP

/** Error classes. NARMA_SUCCESS is 0; every error is positive. */
enum narma_error {
    NARMA_SUCCESS = 0,
    NARMA_ERR_ARG,          /**< invalid argument (NULL pointer, bad value) */
    NARMA_ERR_RANK,         /**< rank outside the window's group */
    NARMA_ERR_TAG,          /**< tag outside 0..NARMA_TAG_UB (or wildcard where not allowed) */
    NARMA_ERR_COUNT,        /**< negative or inconsistent count */
    NARMA_ERR_TYPE,         /**< invalid or unsupported datatype, or type signature mismatch */
    NARMA_ERR_OP,           /**< operation not allowed for this call */
    NARMA_ERR_WIN,          /**< invalid window */
    NARMA_ERR_DISP,         /**< access outside the target's window memory */
    NARMA_ERR_RMA_SYNC,     /**< call not allowed in the window's epoch state */
    NARMA_ERR_RMA_CONFLICT, /**< conflicting epochs (e.g. lock held twice, mixed epoch types) */
    NARMA_ERR_REQUEST,      /**< invalid request, freed request or wrong request state */
    NARMA_ERR_NO_MEM,       /**< out of memory */
    NARMA_ERR_ATTACH,       /**< dynamic window attach/detach error */
    NARMA_ERR_KEYVAL,       /**< invalid attribute key */
    NARMA_ERR_NOT_INIT,     /**< MPI is not initialised */
    NARMA_ERR_PENDING,      /**< resources still in use (pending epochs or requests) */
    NARMA_ERR_UNSUPPORTED,  /**< not supported by the selected transport (or, for
                             *   NARMA_Win_allocate_shared, ranks that do not share memory) */
    NARMA_ERR_MPI,          /**< an MPI call failed: see NARMA_Get_mpi_error() */
    NARMA_ERR_INTERN,       /**< internal error (a bug: please report) */
    NARMA_ERR_NOTIFY_IDX,   /**< notification counter index outside the target's counters */
    NARMA_ERR_LASTCODE
};

/* foMPI-NA compatible error names. */
#define NARMA_ERROR_RMA_NO_SYNC               NARMA_ERR_RMA_SYNC
#define NARMA_ERROR_RMA_DATATYPE_MISMATCH     NARMA_ERR_TYPE
#define NARMA_ERROR_RMA_NO_LOCK_HOLDING       NARMA_ERR_RMA_SYNC
#define NARMA_ERROR_RMA_SYNC_CONFLICT         NARMA_ERR_RMA_CONFLICT
#define NARMA_ERROR_RMA_WRITE_SHARED_CONFLICT NARMA_ERR_RMA_CONFLICT
#define NARMA_ERROR_RMA_WIN_MEM_NOT_FOUND     NARMA_ERR_DISP
#define NARMA_OP_NOT_SUPPORTED                NARMA_ERR_OP
#define NARMA_DATATYPE_NOT_SUPPORTED          NARMA_ERR_TYPE

/* ---- Library ---------------------------------------------------------- */

/** Initialise MPI (if not yet) and narma. narma also works after a plain MPI_Init. */
NARMA_API int NARMA_Init(int *argc, char ***argv);
/** As MPI_Init_thread: initialise MPI (if not yet) asking for thread level @p required, then
 * narma; @p provided is the level both support (after a plain MPI_Init_thread, MPI's own).
 * narma supports every level MPI provides; see "Threads" above. */
NARMA_API int NARMA_Init_thread(int *argc, char ***argv, int required, int *provided);
/** As MPI_Query_thread: the thread level narma calls may be made at (MPI's, or
 * MPI_THREAD_SERIALIZED under MPI_THREAD_MULTIPLE with NARMA_THREADS=off). */
NARMA_API int NARMA_Query_thread(int *provided);
/** Release narma's resources and finalise MPI if NARMA_Init initialised it. */
NARMA_API int NARMA_Finalize(void);
/** Maximum length of an error string, including the terminating NUL (as MPI_MAX_ERROR_STRING). */
#define NARMA_MAX_ERROR_STRING 256
/** Text for an error class, as MPI_Error_string: copies at most NARMA_MAX_ERROR_STRING bytes
 *  (NUL included) into string and sets *resultlen to the length without the NUL.
 *  @return NARMA_SUCCESS; NARMA_ERR_ARG when string or resultlen is NULL. An unknown code
 *          gives the text "unknown narma error code" and NARMA_SUCCESS. */
NARMA_API int NARMA_Error_string(int errorcode, char *string, int *resultlen);
/** Convenience form of NARMA_Error_string: a static string for an error class; never NULL. */
NARMA_API const char *NARMA_Strerror(int errorcode);
/** The MPI error code behind the last NARMA_ERR_MPI of this process. */
NARMA_API int NARMA_Get_mpi_error(void);
/** Version string, e.g. "0.1.0". */
NARMA_API const char *NARMA_Get_version(void);
/** Name of the transport a window uses: "shm", "mpi", or "shm+mpi" when its ranks span nodes
 *  (shm between the ranks of a node, mpi between nodes). */
NARMA_API const char *NARMA_Win_get_transport(NARMA_Win win);
/** The transport that moves data between this process and `rank` of the window's group:
 *  "shm" or "mpi" (a window whose ranks span nodes uses shm between the ranks of a node and
 *  mpi between the others: NARMA_Win_get_transport then says "shm+mpi"). "invalid" for an
 *  invalid window or a rank outside the group. Local, not collective. */
NARMA_API const char *NARMA_Win_get_target_transport(NARMA_Win win, int rank);

NARMA_API int NARMA_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
NARMA_API int NARMA_Free_mem(void *base);
NARMA_API int NARMA_Type_free(MPI_Datatype *datatype);

/* ---- Windows ---------------------------------------------------------- */

/* Window creation (NARMA_Win_create, _allocate, _create_dynamic, _allocate_shared): collective;
 * on failure *win is NARMA_WIN_NULL (never the handle it held before), so that freeing it
 * anyway is NARMA_ERR_WIN, not a crash. */
NARMA_API int NARMA_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                               MPI_Comm comm, NARMA_Win *win);
NARMA_API int NARMA_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                 void *baseptr, NARMA_Win *win);
NARMA_API int NARMA_Win_create_dynamic(MPI_Info info, MPI_Comm comm, NARMA_Win *win);
/**
 * Collective over @p comm, as MPI_Win_allocate_shared: allocate @p size bytes on each rank in
 * memory that every rank of @p comm can load from and store to, and make it a narma window
 * (every RMA, synchronisation and notified call works on it; NARMA_WIN_CREATE_FLAVOR is
 * NARMA_WIN_FLAVOR_SHARED). Every rank of @p comm must share memory with every other: ranks
 * on different nodes, pretend nodes of NARMA_NODE_SIZE included, do not. The memory is
 * contiguous across ranks (rank r's segment starts where rank r-1's ends) unless @p info
 * sets alloc_shared_noncontig=true; NARMA_Win_shared_query gives any rank's segment. The
 * window uses the shm transport, or, with NARMA_TRANSPORT=mpi, the mpi transport over the
 * same kind of memory (MPI's shared allocation: load/store works as well). @p info also
 * takes narma's window keys (see NARMA_Win_create).
 * @param size      bytes of this rank's segment (>= 0; 0 allowed on any rank)
 * @param disp_unit displacement unit of this rank (> 0)
 * @param baseptr   out: (void **) the address of this rank's segment
 * @return NARMA_SUCCESS, or on every rank alike: NARMA_ERR_UNSUPPORTED when the ranks of
 *         @p comm do not all share memory (nothing is allocated); NARMA_ERR_ARG for
 *         MPI_COMM_NULL, NULL @p baseptr or @p win, negative @p size, @p disp_unit <= 0 or a bad
 *         narma info value; NARMA_ERR_NO_MEM; NARMA_ERR_MPI when MPI refused the allocation
 *         (a rank whose own arguments were bad returns its own class, the others that class).
 */
NARMA_API int NARMA_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                        void *baseptr, NARMA_Win *win);
/**
 * As MPI_Win_shared_query (MPI-4.1): the segment of @p rank in this process's address space:
 * its size, displacement unit and address, for load/store. Local, not collective.
 * Windows from NARMA_Win_allocate_shared: every rank's segment. Windows from
 * NARMA_Win_allocate and NARMA_Win_create: this process's own memory, and the segment of
 * each peer reached through the shm transport (NARMA_Win_get_target_transport says "shm":
 * its memory is mapped here); a peer reached through mpi does not share memory with this
 * process. @p rank MPI_PROC_NULL stands for the lowest rank whose size is not 0 (size 0 and
 * a NULL address when every size is 0).
 * @param size      out: bytes of the segment
 * @param disp_unit out: its displacement unit
 * @param baseptr   out: (void **) its address here
 * @return NARMA_SUCCESS; NARMA_ERR_WIN for an invalid or dynamic window (MPI:
 *         MPI_ERR_RMA_FLAVOR); NARMA_ERR_ARG for a NULL output; NARMA_ERR_RANK for a rank
 *         outside the group (outputs untouched) or one whose memory is not shared with this
 *         process: then *size = 0 and *baseptr = NULL, MPI's answer for such memory, and
 *         *disp_unit is its displacement unit.
 */
NARMA_API int NARMA_Win_shared_query(NARMA_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                     void *baseptr);
/** Collective. Fails with NARMA_ERR_PENDING (and frees nothing) while epochs or
 *  active notification requests remain on the window. */
NARMA_API int NARMA_Win_free(NARMA_Win *win);
NARMA_API int NARMA_Win_attach(NARMA_Win win, void *base, MPI_Aint size);
NARMA_API int NARMA_Win_detach(NARMA_Win win, const void *base);
NARMA_API int NARMA_Win_get_group(NARMA_Win win, MPI_Group *group);
NARMA_API int NARMA_Win_set_name(NARMA_Win win, const char *win_name);
/** As MPI-4.1 names MPI_WIN_NULL, NARMA_Win_get_name(NARMA_WIN_NULL, ...) succeeds with the
 *  name of narma's constant, "NARMA_WIN_NULL". */
NARMA_API int NARMA_Win_get_name(NARMA_Win win, char *win_name, int *resultlen);
NARMA_API int NARMA_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                                      MPI_Win_delete_attr_function *win_delete_attr_fn,
                                      int *win_keyval, void *extra_state);
NARMA_API int NARMA_Win_free_keyval(int *win_keyval);
NARMA_API int NARMA_Win_set_attr(NARMA_Win win, int win_keyval, void *attribute_val);
NARMA_API int NARMA_Win_get_attr(NARMA_Win win, int win_keyval, void *attribute_val, int *flag);
NARMA_API int NARMA_Win_delete_attr(NARMA_Win win, int win_keyval);

/**
 * The hints narma honours on @p win, with their current values, in a new info object
 * (the caller frees it with MPI_Info_free), as MPI_Win_get_info. Local.
 * Keys (always present, with the default when not given at creation, except narma_pull_min):
 *   narma_notify_completion            "return" (default) or "flush"
 *   narma_pull_min                     the byte count given at creation (R* notified puts
 *                                      from that size on may be pulled by the target; "0":
 *                                      never); absent when not given: the transport's
 *                                      default (NARMA_SHM_PULL_MIN) applies
 *   narma_access_after_access_reorder, narma_access_after_exposure_reorder,
 *   narma_exposure_after_exposure_reorder, narma_exposure_after_access_reorder
 *                                      "true"/"false" (default "false"); on an MPI whose info
 *                                      keys are limited to 36 characters (Open MPI), a key too
 *                                      long for it is reported under its alias
 *                                      (narma_reorder_aaar, _aaer, _eaer, _eaar) instead
 * MPI's standard window hints are not read by narma (it makes every guarantee they would
 * relax), so none is reported.
 * @param win        a window
 * @param info_used  out: a new MPI_Info
 * @return NARMA_SUCCESS; NARMA_ERR_WIN (invalid window), NARMA_ERR_ARG (NULL info_used),
 *         NARMA_ERR_MPI (MPI_Info_create or MPI_Info_set failed).
 * Thread safety: as the rest of narma. */
NARMA_API int NARMA_Win_get_info(NARMA_Win win, MPI_Info *info_used);
/**
 * Update @p win's hints, as MPI_Win_set_info (collective over the window's group in MPI;
 * narma's updates are local, so it needs no communication, but every process should pass
 * the same values). Keys that can change after creation: the four epoch reorder keys (and
 * their aliases), "true" or "false": they govern every epoch not yet active. Every other key
 * (narma_notify_completion and narma_pull_min, which the transport fixes when it sets the
 * window up, and MPI's own hints) is ignored, as MPI allows: NARMA_Win_get_info keeps
 * reporting the value in force. Keys absent from @p info keep their values.
 * @param win   a window
 * @param info  the hints (MPI_INFO_NULL: nothing changes)
 * @return NARMA_SUCCESS; NARMA_ERR_WIN (invalid window), NARMA_ERR_ARG (a reorder key whose
 *         value is not "true" or "false", or a narma_ value of more than 22 characters:
 *         nothing is changed then).
 * Thread safety: as the rest of narma. */
NARMA_API int NARMA_Win_set_info(NARMA_Win win, MPI_Info info);

/* ---- Error handlers ---------------------------------------------------- */
/*
 * Window error handlers, as MPI's: every call that takes a valid window and fails calls the
 * window's handler with the error class, then returns that class (when the handler returns).
 * The default, NARMA_ERRORS_RETURN, does nothing: calls just return their code, as always.
 * NARMA_ERRORS_ARE_FATAL prints the error's text on stderr and calls MPI_Abort on the
 * window's communicator. Calls without a valid window (creation, an invalid or freed handle:
 * NARMA_ERR_WIN for an invalid one, request completion such as NARMA_Wait) call no handler.
 * A handler that calls narma on the same window and fails there is not re-entered: that
 * inner call just returns its code. The cost of the mechanism on a successful call is one
 * well-predicted branch.
 */
/** Opaque error handler handle. The predefined handles are constants, never dereferenced. */
typedef struct narmai_errhandler *NARMA_Errhandler;
#define NARMA_ERRHANDLER_NULL  ((NARMA_Errhandler)0)
#define NARMA_ERRORS_RETURN    ((NARMA_Errhandler)1) /**< the default: return the code */
#define NARMA_ERRORS_ARE_FATAL ((NARMA_Errhandler)2) /**< print the error, MPI_Abort */
/** A window error handler, as MPI_Win_errhandler_function: @p win points to the window's
 *  handle, @p errorcode to the error class. Further arguments: none (reserved, as in MPI). */
typedef void NARMA_Win_errhandler_function(NARMA_Win *win, int *errorcode, ...);
/** Make an error handler calling @p fn.
 *  @return NARMA_SUCCESS; NARMA_ERR_ARG (fn or errhandler NULL); NARMA_ERR_NO_MEM. */
NARMA_API int NARMA_Win_create_errhandler(NARMA_Win_errhandler_function *fn,
                                          NARMA_Errhandler *errhandler);
/** Attach @p errhandler to @p win (the window keeps its own reference: the handle may be freed
 *  afterwards). Local.
 *  @return NARMA_SUCCESS; NARMA_ERR_WIN (invalid window); NARMA_ERR_ARG (NULL or freed
 *          handler: the window's handler is then called with NARMA_ERR_ARG). */
NARMA_API int NARMA_Win_set_errhandler(NARMA_Win win, NARMA_Errhandler errhandler);
/** The handler attached to @p win (NARMA_ERRORS_RETURN unless set), as a new reference that
 *  the caller frees with NARMA_Errhandler_free (a no-op for the predefined handlers).
 *  @return NARMA_SUCCESS; NARMA_ERR_WIN (invalid window); NARMA_ERR_ARG (NULL errhandler). */
NARMA_API int NARMA_Win_get_errhandler(NARMA_Win win, NARMA_Errhandler *errhandler);
/** Call @p win's handler with @p errorcode (any value), as MPI_Win_call_errhandler.
 *  @return NARMA_SUCCESS once the handler returned; NARMA_ERR_WIN (invalid window: no handler
 *          called). */
NARMA_API int NARMA_Win_call_errhandler(NARMA_Win win, int errorcode);
/** Release a handle and set it to NARMA_ERRHANDLER_NULL; the handler lives on while windows
 *  use it. Freeing a predefined handler only sets the handle to NULL.
 *  @return NARMA_SUCCESS; NARMA_ERR_ARG (NULL pointer, NARMA_ERRHANDLER_NULL or not a
 *          handler). */
NARMA_API int NARMA_Errhandler_free(NARMA_Errhandler *errhandler);

/* ---- Synchronisation -------------------------------------------------- */

NARMA_API int NARMA_Win_fence(int assert, NARMA_Win win);
NARMA_API int NARMA_Win_start(MPI_Group group, int assert, NARMA_Win win);
NARMA_API int NARMA_Win_complete(NARMA_Win win);
NARMA_API int NARMA_Win_post(MPI_Group group, int assert, NARMA_Win win);
NARMA_API int NARMA_Win_wait(NARMA_Win win);
NARMA_API int NARMA_Win_test(NARMA_Win win, int *flag);
NARMA_API int NARMA_Win_lock(int lock_type, int rank, int assert, NARMA_Win win);
NARMA_API int NARMA_Win_unlock(int rank, NARMA_Win win);
NARMA_API int NARMA_Win_lock_all(int assert, NARMA_Win win);
NARMA_API int NARMA_Win_unlock_all(NARMA_Win win);
NARMA_API int NARMA_Win_flush(int rank, NARMA_Win win);
NARMA_API int NARMA_Win_flush_all(NARMA_Win win);
NARMA_API int NARMA_Win_flush_local(int rank, NARMA_Win win);
NARMA_API int NARMA_Win_flush_local_all(NARMA_Win win);
NARMA_API int NARMA_Win_sync(NARMA_Win win);

/* ---- Nonblocking synchronisation -------------------------------------- */
/*
 * Every epoch call has a nonblocking form returning a request that completes
 * with NARMA_Test/Wait and friends (nonblocking RMA synchronisation paper,
 * sections V-VI). Epoch-opening calls return a request that is already
 * complete; the epoch itself may be deferred inside narma until earlier epochs
 * complete, and RMA calls issued in a deferred epoch are recorded and replayed
 * in order when it activates. An epoch closed by a nonblocking call is complete
 * only when its request is. Access and exposure epochs match first-in
 * first-out. Blocking calls are the nonblocking ones plus a wait, so any mix
 * forms a valid epoch. Window info keys (values "true"/"false", default
 * "false") let later epochs activate while earlier ones are still active,
 * when the program guarantees they touch disjoint memory:
 *   narma_access_after_access_reorder, narma_access_after_exposure_reorder,
 *   narma_exposure_after_exposure_reorder, narma_exposure_after_access_reorder
 * (ignored for fence and lock_all epochs), or their aliases narma_reorder_aaar,
 * narma_reorder_aaer, narma_reorder_eaer, narma_reorder_eaar (Open MPI limits
 * info keys to 36 characters).
 *
 * Ordering: without those keys, an epoch that the program opens after closing
 * an earlier one (even with a nonblocking call) activates only once the earlier
 * one is complete, exactly as with blocking calls. So "ipost; iwait; istart;
 * put; icomplete" in a ring deadlocks like "post; wait; start; put; complete"
 * would: open both epochs first ("ipost; istart; put; icomplete; iwait"), or
 * set the reorder keys. Epochs open at the same time in the program (post and
 * start, several locks) always progress together. narma has no progress
 * thread: deferred epochs advance inside narma calls (any Test/Wait does).
 */
NARMA_API int NARMA_Win_ipost(MPI_Group group, int assert, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_istart(MPI_Group group, int assert, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_icomplete(NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_iwait(NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_ifence(int assert, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_ilock(int lock_type, int rank, int assert, NARMA_Win win,
                              NARMA_Request *request);
NARMA_API int NARMA_Win_iunlock(int rank, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_ilock_all(int assert, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_iunlock_all(NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_iflush(int rank, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_iflush_local(int rank, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_iflush_all(NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Win_iflush_local_all(NARMA_Win win, NARMA_Request *request);

/* ---- Communication ---------------------------------------------------- */

NARMA_API int NARMA_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, NARMA_Win win);
NARMA_API int NARMA_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, NARMA_Win win);
NARMA_API int NARMA_Accumulate(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                               int target_count, MPI_Datatype target_datatype, NARMA_Op op,
                               NARMA_Win win);
NARMA_API int NARMA_Get_accumulate(const void *origin_addr, int origin_count,
                                   MPI_Datatype origin_datatype, void *result_addr,
                                   int result_count, MPI_Datatype result_datatype, int target_rank,
                                   MPI_Aint target_disp, int target_count,
                                   MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win);
NARMA_API int NARMA_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                                 int target_rank, MPI_Aint target_disp, NARMA_Op op, NARMA_Win win);
NARMA_API int NARMA_Compare_and_swap(const void *origin_addr, const void *compare_addr,
                                     void *result_addr, MPI_Datatype datatype, int target_rank,
                                     MPI_Aint target_disp, NARMA_Win win);
NARMA_API int NARMA_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Raccumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                                int target_count, MPI_Datatype target_datatype, NARMA_Op op,
                                NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Rget_accumulate(const void *origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, void *result_addr,
                                    int result_count, MPI_Datatype result_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win,
                                    NARMA_Request *request);

/* ---- Large counts (MPI-4 _c forms) ------------------------------------- */
/*
 * The data calls with MPI_Count counts, as MPI-4 spells them (same arguments, same errors,
 * same semantics as the int forms). Counts that fit an int take the int form's path
 * unchanged. A larger count really moves that many elements: narma describes the data as one
 * derived datatype built from the caller's datatype (count = q * INT_MAX + r: q contiguous
 * chunks of INT_MAX elements, then r elements, combined with MPI_Type_create_struct) and
 * issues count 1 of it, so an accumulate still applies its operation element by element
 * (atomically per element) on the same basic type. Errors beyond the int forms':
 * NARMA_ERR_COUNT for a negative count, or one so large that its byte size overflows
 * MPI_Aint; NARMA_ERR_MPI when MPI cannot build the datatype. On the shm transport a
 * non-contiguous datatype is described block by block, up to 4 Mi blocks per access: a
 * large-count access beyond that would go through MPI_Pack (an int size) and is refused with
 * NARMA_ERR_COUNT (accumulates: NARMA_ERR_TYPE). Thread safety: as the int forms.
 */
NARMA_API int NARMA_Put_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, NARMA_Win win);
NARMA_API int NARMA_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                          MPI_Datatype target_datatype, NARMA_Win win);
NARMA_API int NARMA_Accumulate_c(const void *origin_addr, MPI_Count origin_count,
                                 MPI_Datatype origin_datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Count target_count,
                                 MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win);
NARMA_API int NARMA_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                                     MPI_Datatype origin_datatype, void *result_addr,
                                     MPI_Count result_count, MPI_Datatype result_datatype,
                                     int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                     MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win);
NARMA_API int NARMA_Rput_c(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, NARMA_Win win,
                           NARMA_Request *request);
NARMA_API int NARMA_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                           MPI_Datatype target_datatype, NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                                  MPI_Datatype origin_datatype, int target_rank,
                                  MPI_Aint target_disp, MPI_Count target_count,
                                  MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win,
                                  NARMA_Request *request);
NARMA_API int NARMA_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                                      MPI_Datatype origin_datatype, void *result_addr,
                                      MPI_Count result_count, MPI_Datatype result_datatype,
                                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                      MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win,
                                      NARMA_Request *request);
/** Notified accesses with MPI_Count counts (see the notified-access section below). */
NARMA_API int NARMA_Put_notify_c(const void *origin_addr, MPI_Count origin_count,
                                 MPI_Datatype origin_datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Count target_count,
                                 MPI_Datatype target_datatype, NARMA_Win win, int tag);
NARMA_API int NARMA_Get_notify_c(void *origin_addr, MPI_Count origin_count,
                                 MPI_Datatype origin_datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Count target_count,
                                 MPI_Datatype target_datatype, NARMA_Win win, int tag);
NARMA_API int NARMA_Rput_notify_c(const void *origin_addr, MPI_Count origin_count,
                                  MPI_Datatype origin_datatype, int target_rank,
                                  MPI_Aint target_disp, MPI_Count target_count,
                                  MPI_Datatype target_datatype, NARMA_Win win,
                                  NARMA_Request *request, int tag);
NARMA_API int NARMA_Rget_notify_c(void *origin_addr, MPI_Count origin_count,
                                  MPI_Datatype origin_datatype, int target_rank,
                                  MPI_Aint target_disp, MPI_Count target_count,
                                  MPI_Datatype target_datatype, NARMA_Win win,
                                  NARMA_Request *request, int tag);
NARMA_API int NARMA_Accumulate_notify_c(const void *origin_addr, MPI_Count origin_count,
                                        MPI_Datatype origin_datatype, int target_rank,
                                        MPI_Aint target_disp, MPI_Count target_count,
                                        MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win,
                                        int tag);

/* ---- Notified Access -------------------------------------------------- */
/*
 * A notified access writes (or reads) target memory and then enqueues a
 * notification <origin rank, tag> at the target. Each notified access forms
 * its own epoch: it is legal inside any access epoch and outside one, and
 * when the call returns the access is complete at the target with its
 * notification (on every transport), so the target matches it without any
 * further call by the origin. The origin buffer may be reused on return.
 *
 * A window created with info narma_notify_completion=flush follows MPI's
 * completion rules instead: a notified access, and its notification, complete
 * at the origin's next flush (or unlock, complete, fence) to that target, or
 * at its next progress (any narma call that waits); the origin buffer is
 * reusable after that flush (the R* forms' requests complete once it is). A
 * transport may complete earlier (shm always does). On the mpi transport it
 * lets one flush complete many notified accesses. There, a start or R* call
 * whose local completion fails returns the error although its access was
 * issued: its notification may still arrive.
 */
NARMA_API int NARMA_Put_notify(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                               int target_count, MPI_Datatype target_datatype, NARMA_Win win,
                               int tag);
NARMA_API int NARMA_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                               int target_rank, MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, NARMA_Win win, int tag);
/** Request-based forms; as in foMPI-NA the tag is the last argument. */
NARMA_API int NARMA_Rput_notify(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                                int target_count, MPI_Datatype target_datatype, NARMA_Win win,
                                NARMA_Request *request, int tag);
NARMA_API int NARMA_Rget_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                int target_rank, MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, NARMA_Win win, NARMA_Request *request,
                                int tag);
/** Accumulate, then notify (beyond the paper). */
NARMA_API int NARMA_Accumulate_notify(const void *origin_addr, int origin_count,
                                      MPI_Datatype origin_datatype, int target_rank,
                                      MPI_Aint target_disp, int target_count,
                                      MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win,
                                      int tag);

/**
 * Notified fetching atomics (beyond the paper): NARMA_Get_accumulate,
 * NARMA_Fetch_and_op and NARMA_Compare_and_swap, then a notification
 * <origin rank, tag> at the target, matched by NARMA_Notify_init requests as
 * any other; MPI_Get_count(MPI_BYTE) on its status gives the target's bytes
 * (target_count x target_datatype; the datatype's size for the last two).
 * The arguments are the MPI call's, in MPI order, then tag (then the request
 * of the R form: unlike NARMA_Rput_notify and NARMA_Rget_notify, which keep
 * foMPI-NA's order, the tag comes before it, as in the _init forms).
 *
 * Semantics: as the other notified accesses, each forms its own epoch (legal
 * inside any access epoch and outside one). The operation is applied at the
 * target before its notification can match, so a target that matched it reads
 * the updated element. The result buffer holds the target's former contents
 * when the call returns (on every transport, also on a window with
 * narma_notify_completion=flush, where only the notification may wait for the
 * next flush or progress); NARMA_Rget_accumulate_notify's request is complete
 * at creation. Each is atomic, element by element, with every other
 * accumulate-family call (NARMA_Accumulate, NARMA_Get_accumulate,
 * NARMA_Fetch_and_op, NARMA_Compare_and_swap, their R* and notified forms) on
 * the same elements with the same basic datatype, as the plain calls are.
 * MPI_NO_OP reads atomically; MPI_REPLACE swaps. MPI_PROC_NULL as the target:
 * nothing happens and nothing is notified (the tag is not checked).
 *
 * Errors: NARMA_ERR_WIN (invalid window), NARMA_ERR_RANK (target outside the
 * window's group), NARMA_ERR_TAG (tag outside 0..NARMA_TAG_UB, wildcards
 * included), NARMA_ERR_COUNT (negative count), NARMA_ERR_TYPE (invalid or
 * uncommitted datatype, origin/target/result signatures or sizes that differ,
 * a datatype not built from one predefined type; Fetch_and_op and
 * Compare_and_swap: not a predefined type; Compare_and_swap: a floating-point
 * or complex type), NARMA_ERR_OP (operation not allowed on the datatype),
 * NARMA_ERR_DISP (outside the target's window memory), NARMA_ERR_ARG (NULL
 * result buffer where the result has bytes, NULL origin or compare buffer of
 * Compare_and_swap, NULL request pointer), NARMA_ERR_NO_MEM, NARMA_ERR_MPI.
 * No epoch state is wrong for them (no NARMA_ERR_RMA_SYNC).
 * Threads: as the other data calls (see the top of this file).
 */
NARMA_API int NARMA_Get_accumulate_notify(const void *origin_addr, int origin_count,
                                          MPI_Datatype origin_datatype, void *result_addr,
                                          int result_count, MPI_Datatype result_datatype,
                                          int target_rank, MPI_Aint target_disp, int target_count,
                                          MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win,
                                          int tag);
/** Request form of NARMA_Get_accumulate_notify: the request is complete when the call returns
 *  (Test/Wait free it; its status names this process, tag MPI_ANY_TAG). */
NARMA_API int NARMA_Rget_accumulate_notify(const void *origin_addr, int origin_count,
                                           MPI_Datatype origin_datatype, void *result_addr,
                                           int result_count, MPI_Datatype result_datatype,
                                           int target_rank, MPI_Aint target_disp, int target_count,
                                           MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win,
                                           int tag, NARMA_Request *request);
/** NARMA_Fetch_and_op, then notify: one element of a predefined datatype. */
NARMA_API int NARMA_Fetch_and_op_notify(const void *origin_addr, void *result_addr,
                                        MPI_Datatype datatype, int target_rank,
                                        MPI_Aint target_disp, NARMA_Op op, NARMA_Win win, int tag);
/** NARMA_Compare_and_swap, then notify (whether or not the swap happened: the result buffer
 *  tells). */
NARMA_API int NARMA_Compare_and_swap_notify(const void *origin_addr, const void *compare_addr,
                                            void *result_addr, MPI_Datatype datatype,
                                            int target_rank, MPI_Aint target_disp, NARMA_Win win,
                                            int tag);

/**
 * Persistent notified accesses (in the spirit of MPI-4's persistent
 * operations): the access described once, every argument checked once (bad
 * input is refused here, with the blocking call's error classes), then issued
 * by each NARMA_Start / NARMA_Startall and completed with the Test/Wait family
 * (local completion: the origin buffer may be reused, a get's result is
 * there; at the target, the access completes as the blocking call's does: on
 * return by default, at the next flush or progress on a window with
 * narma_notify_completion=flush). The request goes
 * back to inactive after Test/Wait, as a notification request does. The
 * window cannot be freed while such a request exists (NARMA_ERR_PENDING):
 * free the request first. A dynamic window's bounds are checked again at each
 * start (regions come and go). MPI_PROC_NULL targets make starts that do
 * nothing.
 */
NARMA_API int NARMA_Put_notify_init(const void *origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, NARMA_Win win, int tag,
                                    NARMA_Request *request);
NARMA_API int NARMA_Get_notify_init(void *origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, NARMA_Win win, int tag,
                                    NARMA_Request *request);
NARMA_API int NARMA_Accumulate_notify_init(const void *origin_addr, int origin_count,
                                           MPI_Datatype origin_datatype, int target_rank,
                                           MPI_Aint target_disp, int target_count,
                                           MPI_Datatype target_datatype, NARMA_Op op, NARMA_Win win,
                                           int tag, NARMA_Request *request);

/**
 * Create an inactive persistent notification request matching notified
 * accesses from @p src_rank (or NARMA_ANY_SOURCE) with @p tag (or
 * NARMA_ANY_TAG). Once started it completes after @p expected_count matches;
 * the status then holds source and tag of the last match (MPI_Get_count on
 * MPI_BYTE gives its size).
 */
NARMA_API int NARMA_Notify_init(NARMA_Win win, int src_rank, int tag, int expected_count,
                                NARMA_Request *request);
NARMA_API int NARMA_Start(NARMA_Request *request);
NARMA_API int NARMA_Startall(int count, NARMA_Request array_of_requests[]);

/* ---- Counter-indexed notifications (MPI-5.1 draft) ------------------- */
/*
 * The second notification model, as the MPI Forum's RMA working group drafts it
 * (MPI_Win_set_num_notify, MPI_Put_notify(..., notification_idx, win), ...):
 * each process exposes n counters on a window; a counter-notified access
 * increments counter notification_idx AT THE TARGET once its data is there (a
 * get: once the data was read from the target), whatever path moved it. The
 * target reads, resets or waits on its counters; nothing is matched and no
 * source or tag is recorded. Names carry the suffix _idx (the tag-matched
 * NARMA_Put_notify keeps its name); the MPIX_ names of <narma/narma_mpix.h>
 * spell the draft's exactly. docs/notify-models.md compares the two models.
 *
 * Passive target only (the draft's rule): the access needs an open lock or
 * lock_all epoch toward target_rank, else NARMA_ERR_RMA_SYNC; when that epoch
 * is still waiting for its lock (NARMA_Win_ilock) the call waits for it. On
 * return the access is complete at the target with its increment, as a
 * tag-matched notified access is (on a window with
 * narma_notify_completion=flush: at the next flush or progress). Both models
 * may be used on one window at the same time. Counters live in the target
 * process and advance when it enters narma (any call that reads a counter or
 * waits drives progress): memory is 8 bytes per counter per process, plus one
 * int per rank for NARMA_Win_get_num_notify. A counter saturates at
 * NARMA_WIN_NOTIFICATION_VALUE_UB.
 *
 * Errors: NARMA_ERR_NOTIFY_IDX for an index outside 0..n-1 of the target
 * (n = 0 until NARMA_Win_set_num_notify), and every error of the plain call.
 * Thread safety: as the rest of narma.
 */
/** Collective: give every process of the window n counters (n may differ between
 *  processes; 0 removes them), all set to 0. No counter-notified access may be in flight
 *  toward this process, and no threshold request pending on the window (NARMA_ERR_PENDING).
 *  info is reserved (MPI_INFO_NULL). NARMA_ERR_ARG: n < 0 or above NARMA_WIN_NOTIFICATION_NUM_UB.
 */
NARMA_API int NARMA_Win_set_num_notify(NARMA_Win win, MPI_Info info, int n);
/** The number of counters target_rank has on the window (local). */
NARMA_API int NARMA_Win_get_num_notify(NARMA_Win win, int target_rank, int *n);
NARMA_API int NARMA_Put_notify_idx(const void *origin_addr, int origin_count,
                                   MPI_Datatype origin_datatype, int target_rank,
                                   MPI_Aint target_disp, int target_count,
                                   MPI_Datatype target_datatype, int notification_idx,
                                   NARMA_Win win);
NARMA_API int NARMA_Get_notify_idx(void *origin_addr, int origin_count,
                                   MPI_Datatype origin_datatype, int target_rank,
                                   MPI_Aint target_disp, int target_count,
                                   MPI_Datatype target_datatype, int notification_idx,
                                   NARMA_Win win);
NARMA_API int NARMA_Accumulate_notify_idx(const void *origin_addr, int origin_count,
                                          MPI_Datatype origin_datatype, int target_rank,
                                          MPI_Aint target_disp, int target_count,
                                          MPI_Datatype target_datatype, NARMA_Op op,
                                          int notification_idx, NARMA_Win win);
NARMA_API int NARMA_Get_accumulate_notify_idx(const void *origin_addr, int origin_count,
                                              MPI_Datatype origin_datatype, void *result_addr,
                                              int result_count, MPI_Datatype result_datatype,
                                              int target_rank, MPI_Aint target_disp,
                                              int target_count, MPI_Datatype target_datatype,
                                              NARMA_Op op, int notification_idx, NARMA_Win win);
/** Request-based forms: the request completes locally (it is complete on return, as the
 *  access is). */
NARMA_API int NARMA_Rput_notify_idx(const void *origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, int notification_idx,
                                    NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Rget_notify_idx(void *origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, int notification_idx,
                                    NARMA_Win win, NARMA_Request *request);
NARMA_API int NARMA_Raccumulate_notify_idx(const void *origin_addr, int origin_count,
                                           MPI_Datatype origin_datatype, int target_rank,
                                           MPI_Aint target_disp, int target_count,
                                           MPI_Datatype target_datatype, NARMA_Op op,
                                           int notification_idx, NARMA_Win win,
                                           NARMA_Request *request);
NARMA_API int NARMA_Rget_accumulate_notify_idx(const void *origin_addr, int origin_count,
                                               MPI_Datatype origin_datatype, void *result_addr,
                                               int result_count, MPI_Datatype result_datatype,
                                               int target_rank, MPI_Aint target_disp,
                                               int target_count, MPI_Datatype target_datatype,
                                               NARMA_Op op, int notification_idx, NARMA_Win win,
                                               NARMA_Request *request);
/** Read this process's counter idx (drives progress first, so arrived increments count). */
NARMA_API int NARMA_Win_get_notify_value(NARMA_Win win, int notification_idx, MPI_Count *value);
/** Set this process's counter idx to 0 and return its value before, atomically with respect
 *  to increments (none is lost: each lands either in *old_value or in the new count). */
NARMA_API int NARMA_Win_reset_notify_value(NARMA_Win win, int notification_idx,
                                           MPI_Count *old_value);
/** A request that completes once this process's counter idx is >= expected (Test/Wait and
 *  friends; it does not change the counter): at once when the counter is there already, else
 *  when progress counts the increment that gets it there (a reset in between starts over from
 *  0). The window cannot be freed, nor its counters changed, while it is pending
 *  (NARMA_ERR_PENDING); NARMA_Request_free withdraws it. */
NARMA_API int NARMA_Win_notify_ithreshold(NARMA_Win win, int notification_idx, MPI_Count expected,
                                          NARMA_Request *request);

/* ---- Request completion (all request kinds) --------------------------- */

NARMA_API int NARMA_Test(NARMA_Request *request, int *flag, MPI_Status *status);
NARMA_API int NARMA_Wait(NARMA_Request *request, MPI_Status *status);
NARMA_API int NARMA_Testany(int count, NARMA_Request array_of_requests[], int *index, int *flag,
                            MPI_Status *status);
NARMA_API int NARMA_Waitany(int count, NARMA_Request array_of_requests[], int *index,
                            MPI_Status *status);
NARMA_API int NARMA_Testall(int count, NARMA_Request array_of_requests[], int *flag,
                            MPI_Status *array_of_statuses);
NARMA_API int NARMA_Waitall(int count, NARMA_Request array_of_requests[],
                            MPI_Status *array_of_statuses);
NARMA_API int NARMA_Testsome(int incount, NARMA_Request array_of_requests[], int *outcount,
                             int array_of_indices[], MPI_Status *array_of_statuses);
NARMA_API int NARMA_Waitsome(int incount, NARMA_Request array_of_requests[], int *outcount,
                             int array_of_indices[], MPI_Status *array_of_statuses);
/** Free a request. An active notification request is withdrawn: it matches nothing afterwards. */
NARMA_API int NARMA_Request_free(NARMA_Request *request);
/**
 * MPI_Request_get_status for narma requests: whether @p request is complete,
 * without freeing it, deactivating it or changing the handle (passed by
 * value). It drives progress as NARMA_Test does. When *flag is true, *status
 * is what NARMA_Test or NARMA_Wait will then give, and they still complete
 * the request normally (free it and set the handle to NARMA_REQUEST_NULL, or
 * make a persistent one inactive); until then get_status may be called any
 * number of times. Every kind of request: R* and R*_notify requests, the
 * i* epoch requests, notification requests (NARMA_Notify_init) and persistent
 * notified accesses, threshold requests. NARMA_REQUEST_NULL and an inactive
 * persistent request give *flag = true and an empty status (source
 * MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0). status may be MPI_STATUS_IGNORE.
 *
 * @param request the request (not modified)
 * @param flag    out: true (nonzero) if the request is complete
 * @param status  out: its status when *flag is true, or MPI_STATUS_IGNORE
 * @return NARMA_SUCCESS; the request's own error class when it completed with one (as
 *         NARMA_Test would return; status->MPI_ERROR is then MPI_ERR_OTHER);
 *         NARMA_ERR_ARG (NULL flag); NARMA_ERR_REQUEST (a freed or invalid request).
 * Thread safety: as the rest of narma.
 */
NARMA_API int NARMA_Request_get_status(NARMA_Request request, int *flag, MPI_Status *status);

/** Drive narma's progress engine once (never blocks). */
NARMA_API int NARMA_Progress(void);

#ifdef __cplusplus
}
#endif
#endif /* NARMA_NARMA_H */
