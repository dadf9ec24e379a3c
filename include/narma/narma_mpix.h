/*
 * narma_mpix.h: what libnarma-mpi adds to MPI for unmodified (and lightly modified) MPI
 * programs, in the style of MPI libraries' mpi-ext.h.
 *
 * libnarma-mpi defines MPI's one-sided calls (window creation, RMA, every synchronisation)
 * on top of narma through the MPI profiling interface and passes every other call to the MPI
 * library. Use it by linking -lnarma-mpi before the MPI library, or with
 * LD_PRELOAD=libnarma-mpi.so. A program that includes this header (and links -lnarma-mpi)
 * also gets what MPI lacks, on the same MPI_Win and MPI_Request handles:
 *
 *   - nonblocking synchronisation: MPIX_Win_ifence, _ipost, _istart, _icomplete, _iwait,
 *     _ilock, _iunlock, _ilock_all, _iunlock_all, _iflush, _iflush_local, _iflush_all,
 *     _iflush_local_all (NARMA_Win_i* with MPI handles);
 *   - tag-matched notified access (foMPI-NA's model, NARMA_Put_notify & co.): named
 *     *_notify_tagged so that they never collide with the MPI-5.1 draft's counter-indexed
 *     MPI_Put_notify(..., notification_idx, win);
 *   - counter-indexed notifications under the MPI-5.1 draft's names (MPIX_Put_notify(...,
 *     notification_idx, win), MPIX_Win_get_notify_value, MPIX_Win_notify_ithreshold, ...);
 *   - MPIX_Win_get_narma, the narma window behind an MPI window, for programs that mix in
 *     NARMA_ calls.
 *
 * Requests returned here (and by MPI_Rput & co. on windows narma carries) are MPI_Requests:
 * complete them with MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testany, ... mixed with
 * point-to-point requests; start the persistent ones with MPI_Start / MPI_Startall and free
 * them with MPI_Request_free. Every call returns an MPI error code and, on failure, calls the
 * window's error handler (MPI_ERRORS_ARE_FATAL by default), as MPI does.
 *
 * Window info keys select narma's options (the same keys as NARMA_Win_create's info), for
 * example "narma_access_after_access_reorder", "narma_notify_completion", "narma_pull_min"; the key
 * "narma_passthrough" = "true" leaves a window to the MPI library. Environment:
 * NARMA_PMPI=off passes every window through; NARMA_PMPI_REPORT=1 prints, at MPI_Finalize,
 * per window how many epochs and operations narma carried and which calls were passed
 * through.
 */
#ifndef NARMA_NARMA_MPIX_H
#define NARMA_NARMA_MPIX_H

#include <mpi.h>
#include <narma/narma.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Defined when the extensions below exist (this header and libnarma-mpi). */
#define NARMA_MPIX 1

/* ---- Nonblocking synchronisation --------------------------------------- */
NARMA_API int MPIX_Win_ifence(int assert, MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_ipost(MPI_Group group, int assert, MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_istart(MPI_Group group, int assert, MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_icomplete(MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_iwait(MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_ilock(int lock_type, int rank, int assert, MPI_Win win,
                             MPI_Request *request);
NARMA_API int MPIX_Win_iunlock(int rank, MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_ilock_all(int assert, MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_iunlock_all(MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_iflush(int rank, MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_iflush_local(int rank, MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_iflush_all(MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_iflush_local_all(MPI_Win win, MPI_Request *request);

/* ---- Tag-matched notified access ---------------------------------------- */
/* Tags are 0 .. NARMA_TAG_UB; the source may be MPI_ANY_SOURCE and the tag MPI_ANY_TAG in
 * MPIX_Notify_tagged_init. Semantics: NARMA_Put_notify & co. in narma.h. */
NARMA_API int MPIX_Put_notify_tagged(const void *origin_addr, int origin_count,
                                     MPI_Datatype origin_datatype, int target_rank,
                                     MPI_Aint target_disp, int target_count,
                                     MPI_Datatype target_datatype, MPI_Win win, int tag);
NARMA_API int MPIX_Get_notify_tagged(void *origin_addr, int origin_count,
                                     MPI_Datatype origin_datatype, int target_rank,
                                     MPI_Aint target_disp, int target_count,
                                     MPI_Datatype target_datatype, MPI_Win win, int tag);
NARMA_API int MPIX_Accumulate_notify_tagged(const void *origin_addr, int origin_count,
                                            MPI_Datatype origin_datatype, int target_rank,
                                            MPI_Aint target_disp, int target_count,
                                            MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                            int tag);
NARMA_API int MPIX_Rput_notify_tagged(const void *origin_addr, int origin_count,
                                      MPI_Datatype origin_datatype, int target_rank,
                                      MPI_Aint target_disp, int target_count,
                                      MPI_Datatype target_datatype, MPI_Win win,
                                      MPI_Request *request, int tag);
NARMA_API int MPIX_Rget_notify_tagged(void *origin_addr, int origin_count,
                                      MPI_Datatype origin_datatype, int target_rank,
                                      MPI_Aint target_disp, int target_count,
                                      MPI_Datatype target_datatype, MPI_Win win,
                                      MPI_Request *request, int tag);
/* Persistent forms: inactive requests, started by MPI_Start / MPI_Startall. */
NARMA_API int MPIX_Put_notify_tagged_init(const void *origin_addr, int origin_count,
                                          MPI_Datatype origin_datatype, int target_rank,
                                          MPI_Aint target_disp, int target_count,
                                          MPI_Datatype target_datatype, MPI_Win win, int tag,
                                          MPI_Request *request);
NARMA_API int MPIX_Get_notify_tagged_init(void *origin_addr, int origin_count,
                                          MPI_Datatype origin_datatype, int target_rank,
                                          MPI_Aint target_disp, int target_count,
                                          MPI_Datatype target_datatype, MPI_Win win, int tag,
                                          MPI_Request *request);
NARMA_API int MPIX_Accumulate_notify_tagged_init(const void *origin_addr, int origin_count,
                                                 MPI_Datatype origin_datatype, int target_rank,
                                                 MPI_Aint target_disp, int target_count,
                                                 MPI_Datatype target_datatype, MPI_Op op,
                                                 MPI_Win win, int tag, MPI_Request *request);
/* A persistent request matching expected_count notified accesses from source (or
 * MPI_ANY_SOURCE) with tag (or MPI_ANY_TAG); its status holds the source and tag of the last
 * match, MPI_Get_count(&status, MPI_BYTE, &n) its size. */
NARMA_API int MPIX_Notify_tagged_init(MPI_Win win, int source, int tag, int expected_count,
                                      MPI_Request *request);

/* ---- Counter-indexed notifications (the MPI-5.1 draft) ------------------- */
/* The draft's MPI_ names with the MPIX_ prefix and its argument order
 * (notification_idx before the window). Semantics: "Counter-indexed notifications" in
 * narma.h (passive target only; counter notification_idx at the target is incremented once
 * the access's data is there); docs/notify-models.md maps them onto the tag-matched model.
 * The threshold request completes with MPI_Wait & co. A bad index fails with the error class
 * MPIX_ERR_NOTIFY_IDX (added to MPI's at first use; MPI_Error_string describes it). */
#define MPIX_WIN_NOTIFICATION_NUM_UB   NARMA_WIN_NOTIFICATION_NUM_UB
#define MPIX_WIN_NOTIFICATION_VALUE_UB NARMA_WIN_NOTIFICATION_VALUE_UB
/** The error class of a bad notification index (a dynamic MPI error class). */
NARMA_API int MPIX_Err_notify_idx(void);
#define MPIX_ERR_NOTIFY_IDX (MPIX_Err_notify_idx())
NARMA_API int MPIX_Win_set_num_notify(MPI_Win win, MPI_Info info, int n);
NARMA_API int MPIX_Win_get_num_notify(MPI_Win win, int target_rank, int *n);
NARMA_API int MPIX_Put_notify(const void *origin_addr, int origin_count,
                              MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                              int target_count, MPI_Datatype target_datatype, int notification_idx,
                              MPI_Win win);
NARMA_API int MPIX_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                              int target_rank, MPI_Aint target_disp, int target_count,
                              MPI_Datatype target_datatype, int notification_idx, MPI_Win win);
NARMA_API int MPIX_Accumulate_notify(const void *origin_addr, int origin_count,
                                     MPI_Datatype origin_datatype, int target_rank,
                                     MPI_Aint target_disp, int target_count,
                                     MPI_Datatype target_datatype, MPI_Op op, int notification_idx,
                                     MPI_Win win);
NARMA_API int MPIX_Get_accumulate_notify(const void *origin_addr, int origin_count,
                                         MPI_Datatype origin_datatype, void *result_addr,
                                         int result_count, MPI_Datatype result_datatype,
                                         int target_rank, MPI_Aint target_disp, int target_count,
                                         MPI_Datatype target_datatype, MPI_Op op,
                                         int notification_idx, MPI_Win win);
NARMA_API int MPIX_Rput_notify(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                               int target_count, MPI_Datatype target_datatype, int notification_idx,
                               MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Rget_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                               int target_rank, MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, int notification_idx, MPI_Win win,
                               MPI_Request *request);
NARMA_API int MPIX_Raccumulate_notify(const void *origin_addr, int origin_count,
                                      MPI_Datatype origin_datatype, int target_rank,
                                      MPI_Aint target_disp, int target_count,
                                      MPI_Datatype target_datatype, MPI_Op op, int notification_idx,
                                      MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Rget_accumulate_notify(const void *origin_addr, int origin_count,
                                          MPI_Datatype origin_datatype, void *result_addr,
                                          int result_count, MPI_Datatype result_datatype,
                                          int target_rank, MPI_Aint target_disp, int target_count,
                                          MPI_Datatype target_datatype, MPI_Op op,
                                          int notification_idx, MPI_Win win, MPI_Request *request);
NARMA_API int MPIX_Win_get_notify_value(MPI_Win win, int notification_idx, MPI_Count *value);
NARMA_API int MPIX_Win_reset_notify_value(MPI_Win win, int notification_idx, MPI_Count *old_value);
NARMA_API int MPIX_Win_notify_ithreshold(MPI_Win win, int notification_idx, MPI_Count expected,
                                         MPI_Request *request);

/* ---- narma behind MPI ---------------------------------------------------- */
/** The narma window that carries win, or NARMA_WIN_NULL when win is passed through to the
 *  MPI library (MPI_Win_allocate_shared, info narma_passthrough, NARMA_PMPI=off). */
NARMA_API int MPIX_Win_get_narma(MPI_Win win, NARMA_Win *nwin);

#ifdef __cplusplus
}
#endif

#endif
