"""cffi (API mode) build script of narma's Python extension, narma._narma.

The extension is compiled with the MPI compiler wrapper against narma's headers and linked to
libnarma and libnarma_halo. Where they are is found, in order, from
  NARMA_BUILD_DIR   a CMake build directory of narma (headers from the source tree beside it;
                    the compiler, unless CC or MPICC says, its MPI_C_COMPILER),
  NARMA_PREFIX      an install prefix (include/, lib/ or lib64/),
  pkg-config narma  (PKG_CONFIG_PATH pointing at an installed narma.pc).
The library directory is put in the extension's RUNPATH, so no LD_LIBRARY_PATH is needed.

Why cffi in API mode: the wrappers below are compiled C, so a call costs one cffi dispatch (no
ctypes argument conversion; about 60 ns for an empty function here, measured in
docs/performance.md, "Python bindings"), and cffi releases the GIL around every C call, so a
blocking Wait never holds it. MPI handles cross the boundary as
intptr_t: mpi4py's handles are MPICH's ints or Open MPI's pointers, and the casts below turn either
back into the MPI type of the library we are compiled against. Buffers cross as addresses
(uintptr_t): the package converts each NumPy array once and remembers its address (narma/__init__.py,
_msg), so a call on the same array again passes a plain int.

The calls on every message's path (Win.Put_notify, Win.Flush, Request.Wait/Test,
Prequest.Start) do not come through here but through narma._fast (narma/_fast.c, built by setup.py
with the same compiler, headers and libraries): a cffi dispatch and the Python method around it
cost ~330 ns for Put_notify, the C method ~30.

Counts are 64-bit here: a count that fits an int takes the int call, a larger one the MPI_Count
(_c) call where narma has one, else the glue refuses it with NARMA_ERR_COUNT through the window's
error handler, as narma itself would.
"""

import os
import shlex
import subprocess

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

CDEF = r"""
typedef struct narmai_win *NARMA_Win;
typedef struct narmai_request *NARMA_Request;
typedef struct narmai_errhandler *NARMA_Errhandler;
typedef struct narmah_plan *NARMA_Halo_plan;
typedef int... MPI_Count;

enum narma_error {
    NARMA_SUCCESS, NARMA_ERR_ARG, NARMA_ERR_RANK, NARMA_ERR_TAG, NARMA_ERR_COUNT, NARMA_ERR_TYPE,
    NARMA_ERR_OP, NARMA_ERR_WIN, NARMA_ERR_DISP, NARMA_ERR_RMA_SYNC, NARMA_ERR_RMA_CONFLICT,
    NARMA_ERR_REQUEST, NARMA_ERR_NO_MEM, NARMA_ERR_ATTACH, NARMA_ERR_KEYVAL, NARMA_ERR_NOT_INIT,
    NARMA_ERR_PENDING, NARMA_ERR_UNSUPPORTED, NARMA_ERR_MPI, NARMA_ERR_INTERN,
    NARMA_ERR_NOTIFY_IDX, NARMA_ERR_LASTCODE,
    ...
};
enum narma_halo_error {
    NARMA_HALO_ERR_TOPOLOGY, NARMA_HALO_ERR_SHAPE, NARMA_HALO_ERR_DEPTH, NARMA_HALO_ERR_SIZE,
    NARMA_HALO_ERR_STRATEGY, NARMA_HALO_ERR_STATE, NARMA_HALO_ERR_LASTCODE, ...
};
#define NARMA_TAG_UB ...
#define NARMA_WIN_FLAVOR_SHARED ...
#define NARMA_WIN_NOTIFICATION_NUM_UB ...
#define NARMA_WIN_NOTIFICATION_VALUE_UB ...
#define NARMA_MAX_ERROR_STRING ...

const char *NARMA_Strerror(int errorcode);
int NARMA_Error_string(int errorcode, char *string, int *resultlen);
const char *NARMA_Halo_error_string(int errorcode);
int NARMA_Get_mpi_error(void);
const char *NARMA_Get_version(void);
const char *NARMA_Win_get_transport(NARMA_Win win);
const char *NARMA_Win_get_target_transport(NARMA_Win win, int rank);
int NARMA_Init(int *argc, char ***argv);
int NARMA_Finalize(void);
int NARMA_Query_thread(int *provided);
int npy_alloc_mem(intptr_t size, uintptr_t info, void **base);
int NARMA_Free_mem(void *base);
/* handle: the address of an mpi4py Datatype's handle (MPI._addressof), set to NULL there. */
int npy_type_free(uintptr_t handle);

int npy_win_create(void *base, intptr_t size, int disp_unit, uintptr_t info, uintptr_t comm,
                   NARMA_Win *win);
int npy_win_allocate(intptr_t size, int disp_unit, uintptr_t info, uintptr_t comm, void **base,
                     NARMA_Win *win);
int npy_win_allocate_shared(intptr_t size, int disp_unit, uintptr_t info, uintptr_t comm,
                            void **base, NARMA_Win *win);
int npy_win_shared_query(NARMA_Win win, int rank, intptr_t *size, int *disp_unit, void **base);
int npy_win_create_dynamic(uintptr_t info, uintptr_t comm, NARMA_Win *win);
int NARMA_Win_free(NARMA_Win *win);
int npy_win_attach(NARMA_Win win, void *base, intptr_t size);
int NARMA_Win_detach(NARMA_Win win, const void *base);
int npy_win_get_group(NARMA_Win win, uintptr_t *group);
int NARMA_Win_set_name(NARMA_Win win, const char *win_name);
int NARMA_Win_get_name(NARMA_Win win, char *win_name, int *resultlen);
int npy_win_attrs(NARMA_Win win, intptr_t *base, intptr_t *size, int *disp_unit, int *flavor,
                  int *model);
int npy_win_get_info(NARMA_Win win, uintptr_t *info);
int npy_win_set_info(NARMA_Win win, uintptr_t info);

/* Attributes. Keyvals made here carry Python objects: the attribute's value is a key into the
 * package's table, and MPI's delete callback (window freed, attribute deleted or replaced) hands
 * it back to npy_attr_delete_py. Predefined keyvals: *value is the attribute (flag 1). */
int npy_win_create_keyval(int *keyval);
int NARMA_Win_free_keyval(int *win_keyval);
int npy_win_set_attr(NARMA_Win win, int keyval, intptr_t value);
int npy_win_get_attr(NARMA_Win win, int keyval, intptr_t *value, int *flag);
int NARMA_Win_delete_attr(NARMA_Win win, int win_keyval);
extern "Python" void npy_attr_delete_py(int keyval, intptr_t value);

/* Error handlers. Handlers made here all run npy_errhandler_py with the handler itself, so the
 * package finds the Python function behind it. */
NARMA_Errhandler npy_errhandler_predefined(int fatal);
int npy_win_create_errhandler(NARMA_Errhandler *errhandler);
int NARMA_Win_set_errhandler(NARMA_Win win, NARMA_Errhandler errhandler);
int NARMA_Win_get_errhandler(NARMA_Win win, NARMA_Errhandler *errhandler);
int NARMA_Win_call_errhandler(NARMA_Win win, int errorcode);
int NARMA_Errhandler_free(NARMA_Errhandler *errhandler);
extern "Python" void npy_errhandler_py(NARMA_Errhandler errhandler, NARMA_Win *win,
                                       int errorcode);

int NARMA_Win_fence(int assert, NARMA_Win win);
int npy_win_start(uintptr_t group, int assert, NARMA_Win win);
int NARMA_Win_complete(NARMA_Win win);
int npy_win_post(uintptr_t group, int assert, NARMA_Win win);
int NARMA_Win_wait(NARMA_Win win);
int NARMA_Win_test(NARMA_Win win, int *flag);
int NARMA_Win_lock(int lock_type, int rank, int assert, NARMA_Win win);
int NARMA_Win_unlock(int rank, NARMA_Win win);
int NARMA_Win_lock_all(int assert, NARMA_Win win);
int NARMA_Win_unlock_all(NARMA_Win win);
int NARMA_Win_flush(int rank, NARMA_Win win);
int NARMA_Win_flush_all(NARMA_Win win);
int NARMA_Win_flush_local(int rank, NARMA_Win win);
int NARMA_Win_flush_local_all(NARMA_Win win);
int NARMA_Win_sync(NARMA_Win win);

int npy_win_ipost(uintptr_t group, int assert, NARMA_Win win, NARMA_Request *request);
int npy_win_istart(uintptr_t group, int assert, NARMA_Win win, NARMA_Request *request);
int NARMA_Win_icomplete(NARMA_Win win, NARMA_Request *request);
int NARMA_Win_iwait(NARMA_Win win, NARMA_Request *request);
int NARMA_Win_ifence(int assert, NARMA_Win win, NARMA_Request *request);
int NARMA_Win_ilock(int lock_type, int rank, int assert, NARMA_Win win, NARMA_Request *request);
int NARMA_Win_iunlock(int rank, NARMA_Win win, NARMA_Request *request);
int NARMA_Win_ilock_all(int assert, NARMA_Win win, NARMA_Request *request);
int NARMA_Win_iunlock_all(NARMA_Win win, NARMA_Request *request);
int NARMA_Win_iflush(int rank, NARMA_Win win, NARMA_Request *request);
int NARMA_Win_iflush_local(int rank, NARMA_Win win, NARMA_Request *request);
int NARMA_Win_iflush_all(NARMA_Win win, NARMA_Request *request);
int NARMA_Win_iflush_local_all(NARMA_Win win, NARMA_Request *request);

/* kind: 0 put, 1 get, 2 accumulate, 3 put_notify, 4 get_notify, 5 accumulate_notify,
 * 6 put_notify_idx, 7 get_notify_idx, 8 accumulate_notify_idx (tag: the counter index);
 * request != NULL: the R* form (not 5); persistent: the _init form (kinds 3-5). */
int npy_rma(int kind, uintptr_t origin, long long ocount, uintptr_t odt, int target,
            intptr_t disp, long long tcount, uintptr_t tdt, uintptr_t op, NARMA_Win win, int tag,
            NARMA_Request *request, int persistent);
/* npy_rma's blocking put and get kinds (0, 1, 3, 4, 6, 7) whose target is the origin's count and
 * type at a displacement: the latency path, with 8 arguments to convert instead of 13. */
int npy_rma_short(int kind, uintptr_t origin, long long count, uintptr_t dt, int target,
                  intptr_t disp, NARMA_Win win, int tag);
/* kind: 0 Get_accumulate, 1 Get_accumulate_notify, 2 Get_accumulate_notify_idx (tag: index) */
int npy_get_accumulate(int kind, uintptr_t origin, long long ocount, uintptr_t odt,
                       uintptr_t result, long long rcount, uintptr_t rdt, int target,
                       intptr_t disp, long long tcount, uintptr_t tdt, uintptr_t op,
                       NARMA_Win win, int tag, NARMA_Request *request);
/* notify: 0 plain, 1 the _notify form with tag */
int npy_fetch_and_op(uintptr_t origin, uintptr_t result, uintptr_t dt, int target,
                     intptr_t disp, uintptr_t op, NARMA_Win win, int notify, int tag);
int npy_compare_and_swap(uintptr_t origin, uintptr_t compare, uintptr_t result, uintptr_t dt,
                         int target, intptr_t disp, NARMA_Win win, int notify, int tag);

int NARMA_Notify_init(NARMA_Win win, int src_rank, int tag, int expected_count,
                      NARMA_Request *request);
int NARMA_Start(NARMA_Request *request);
int NARMA_Startall(int count, NARMA_Request array_of_requests[]);

int npy_win_set_num_notify(NARMA_Win win, uintptr_t info, int n);
int NARMA_Win_get_num_notify(NARMA_Win win, int target_rank, int *n);
int NARMA_Win_get_notify_value(NARMA_Win win, int notification_idx, MPI_Count *value);
int NARMA_Win_reset_notify_value(NARMA_Win win, int notification_idx, MPI_Count *old_value);
/* NARMA_Win_get_notify_value (reset 0) or NARMA_Win_reset_notify_value (reset 1), the value
 * returned: a counter is never negative, so a failure comes back as minus the error class. No
 * output cell: Python threads reading one window's counters at once share none. */
MPI_Count npy_notify_value(NARMA_Win win, int notification_idx, int reset);
int NARMA_Win_notify_ithreshold(NARMA_Win win, int notification_idx, MPI_Count expected,
                                NARMA_Request *request);

/* status: int[4] = source, tag, error, count in bytes (NULL: ignored). */
int npy_test(NARMA_Request *request, int *flag, int *status);
int npy_wait(NARMA_Request *request, int *status);
int npy_testany(int count, NARMA_Request reqs[], int *index, int *flag, int *status);
int npy_waitany(int count, NARMA_Request reqs[], int *index, int *status);
int npy_testall(int count, NARMA_Request reqs[], int *flag, int *statuses);
int npy_waitall(int count, NARMA_Request reqs[], int *statuses);
int npy_testsome(int count, NARMA_Request reqs[], int *outcount, int *indices, int *statuses);
int npy_waitsome(int count, NARMA_Request reqs[], int *outcount, int *indices, int *statuses);
int npy_request_get_status(NARMA_Request request, int *flag, int *status);
int NARMA_Request_free(NARMA_Request *request);
int NARMA_Progress(void);

int npy_halo_plan_create(uintptr_t cart, int nz, int ny, int nx, int halo_x, int halo_y,
                         uintptr_t datatype, int nfields, int corners, int directions, int layout,
                         int strategy, size_t field_elems, NARMA_Halo_plan *plan);
int NARMA_Halo_exchange(NARMA_Halo_plan plan, void *fields[]);
int NARMA_Halo_start(NARMA_Halo_plan plan, void *fields[]);
int NARMA_Halo_finish(NARMA_Halo_plan plan);
int NARMA_Halo_plan_free(NARMA_Halo_plan *plan);
int npy_halo_plan_strategy(NARMA_Halo_plan plan);
const char *npy_halo_strategy_name(int strategy);
int npy_halo_strategy_from_name(const char *name, int *strategy);
size_t npy_halo_field_elems(int nz, int ny, int nx, int halo_x, int halo_y, int layout);

/* Measurement helpers (examples/python/bench_pingpong.py), not part of the package's API. */
/* The C reference of the Python ping-pong: bench/micro/pingpong's narma_notify round (Put_notify +
 * Win_flush, the receiver Start + Wait on a persistent notification request, then reads the first
 * and last byte of the message as pp_consume does), in C, on the caller's window and request;
 * with put != NULL narma_notify_persistent's (the persistent put's Start + Wait). nsamples x batch
 * rounds; samples (NULL: not timed) receives each batch's mean round trip in seconds
 * (CLOCK_MONOTONIC, as the C benchmark's clock). Returns a narma error or 0. */
int npy_bench_notify_pingpong(NARMA_Win win, NARMA_Request *req, const void *sbuf,
                              const unsigned char *rbuf, int size, int peer, int tag, int server,
                              NARMA_Request *put, int nsamples, int batch, double *samples);
/* n calls of one cheap narma call in a C loop: 0 NARMA_Progress, 1 NARMA_Win_get_notify_value
 * (counter 0), 2 NARMA_Win_flush(MPI_PROC_NULL), 3 NARMA_Put_notify to MPI_PROC_NULL (8 bytes),
 * 4 an empty function (the loop). */
int npy_bench_calls(int kind, NARMA_Win win, int n);
/* The same cffi dispatch without any work. */
int npy_noop(void);
int npy_noop_args(void *a, int b, intptr_t c, int d, intptr_t e, int f, intptr_t g,
                  NARMA_Win win, int tag);
"""

SOURCE = r"""
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <narma/narma.h>
#include <narma/narma_halo.h>

/* An mpi4py handle (int for MPICH, pointer for Open MPI) as the MPI type. */
#define H(type, h) ((type)(h))
/* A buffer address from Python. */
#define P(a) ((void *)(uintptr_t)(a))

/* The package's callbacks (cffi's extern "Python", defined by the generated module). */
static void npy_attr_delete_py(int keyval, intptr_t value);
static void npy_errhandler_py(NARMA_Errhandler errhandler, NARMA_Win *win, int errorcode);

static void npy_status(const MPI_Status *s, int *out)
{
    int count = 0;
    if (!out) return;
    out[0] = s->MPI_SOURCE;
    out[1] = s->MPI_TAG;
    out[2] = s->MPI_ERROR;
    if (MPI_Get_count(s, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) count = -1;
    out[3] = count;
}

static int npy_alloc_mem(intptr_t size, uintptr_t info, void **base)
{
    return NARMA_Alloc_mem((MPI_Aint)size, H(MPI_Info, info), base);
}

static int npy_type_free(uintptr_t handle) { return NARMA_Type_free((MPI_Datatype *)P(handle)); }

static int npy_win_create(void *base, intptr_t size, int disp_unit, uintptr_t info, uintptr_t comm,
                          NARMA_Win *win)
{
    return NARMA_Win_create(base, (MPI_Aint)size, disp_unit, H(MPI_Info, info),
                            H(MPI_Comm, comm), win);
}

static int npy_win_allocate(intptr_t size, int disp_unit, uintptr_t info, uintptr_t comm,
                            void **base, NARMA_Win *win)
{
    return NARMA_Win_allocate((MPI_Aint)size, disp_unit, H(MPI_Info, info), H(MPI_Comm, comm),
                              base, win);
}

static int npy_win_allocate_shared(intptr_t size, int disp_unit, uintptr_t info, uintptr_t comm,
                                   void **base, NARMA_Win *win)
{
    return NARMA_Win_allocate_shared((MPI_Aint)size, disp_unit, H(MPI_Info, info),
                                     H(MPI_Comm, comm), base, win);
}

static int npy_win_shared_query(NARMA_Win win, int rank, intptr_t *size, int *disp_unit,
                                void **base)
{
    MPI_Aint sz = 0;
    int rc = NARMA_Win_shared_query(win, rank, &sz, disp_unit, base);
    *size = (intptr_t)sz;
    return rc;
}

static int npy_win_create_dynamic(uintptr_t info, uintptr_t comm, NARMA_Win *win)
{
    return NARMA_Win_create_dynamic(H(MPI_Info, info), H(MPI_Comm, comm), win);
}

static int npy_win_attach(NARMA_Win win, void *base, intptr_t size)
{
    return NARMA_Win_attach(win, base, (MPI_Aint)size);
}

static int npy_win_get_group(NARMA_Win win, uintptr_t *group)
{
    MPI_Group g = MPI_GROUP_NULL;
    int rc = NARMA_Win_get_group(win, &g);
    *group = (uintptr_t)(intptr_t)g;
    return rc;
}

static int npy_win_attrs(NARMA_Win win, intptr_t *base, intptr_t *size, int *disp_unit,
                         int *flavor, int *model)
{
    void *v = NULL;
    int flag = 0, rc;
    if ((rc = NARMA_Win_get_attr(win, NARMA_WIN_BASE, &v, &flag))) return rc;
    *base = flag ? (intptr_t)v : 0;
    if ((rc = NARMA_Win_get_attr(win, NARMA_WIN_SIZE, &v, &flag))) return rc;
    *size = flag ? (intptr_t) * (MPI_Aint *)v : 0;
    if ((rc = NARMA_Win_get_attr(win, NARMA_WIN_DISP_UNIT, &v, &flag))) return rc;
    *disp_unit = flag ? *(int *)v : 0;
    if ((rc = NARMA_Win_get_attr(win, NARMA_WIN_CREATE_FLAVOR, &v, &flag))) return rc;
    *flavor = flag ? *(int *)v : 0;
    if ((rc = NARMA_Win_get_attr(win, NARMA_WIN_MODEL, &v, &flag))) return rc;
    *model = flag ? *(int *)v : 0;
    return NARMA_SUCCESS;
}

static int npy_win_get_info(NARMA_Win win, uintptr_t *info)
{
    MPI_Info i = MPI_INFO_NULL;
    int rc = NARMA_Win_get_info(win, &i);
    *info = (uintptr_t)(intptr_t)i;
    return rc;
}

static int npy_win_set_info(NARMA_Win win, uintptr_t info)
{
    return NARMA_Win_set_info(win, H(MPI_Info, info));
}

/* MPI calls it when an attribute of one of our keyvals goes (the window's MPI window freed, the
 * attribute deleted or replaced): the package drops its object. */
static int npy_attr_delete(MPI_Win w, int keyval, void *value, void *extra)
{
    (void)w;
    (void)extra;
    npy_attr_delete_py(keyval, (intptr_t)value);
    return MPI_SUCCESS;
}

static int npy_win_create_keyval(int *keyval)
{
    return NARMA_Win_create_keyval(MPI_WIN_NULL_COPY_FN, npy_attr_delete, keyval, NULL);
}

static int npy_win_set_attr(NARMA_Win win, int keyval, intptr_t value)
{
    return NARMA_Win_set_attr(win, keyval, (void *)value);
}

static int npy_win_get_attr(NARMA_Win win, int keyval, intptr_t *value, int *flag)
{
    void *v = NULL;
    int rc = NARMA_Win_get_attr(win, keyval, &v, flag);
    if (rc || !*flag) return rc;
    if (keyval == NARMA_WIN_BASE)
        *value = (intptr_t)v;
    else if (keyval == NARMA_WIN_SIZE)
        *value = (intptr_t) * (MPI_Aint *)v;
    else if (keyval == NARMA_WIN_DISP_UNIT || keyval == NARMA_WIN_CREATE_FLAVOR ||
             keyval == NARMA_WIN_MODEL)
        *value = *(int *)v;
    else if (keyval == NARMA_WIN_NOTIFICATION_NUM_UB || keyval == NARMA_WIN_NOTIFICATION_VALUE_UB)
        *value = (intptr_t) * (MPI_Count *)v;
    else
        *value = (intptr_t)v;
    return rc;
}

/* The one C function behind every handler made from Python: it looks up which handler the
 * window runs (a new reference, released again) and lets the package call its function. */
static void npy_errhandler_tramp(NARMA_Win *win, int *errorcode, ...)
{
    NARMA_Errhandler eh = NARMA_ERRHANDLER_NULL;
    if (NARMA_Win_get_errhandler(*win, &eh) != NARMA_SUCCESS) return;
    npy_errhandler_py(eh, win, *errorcode);
    NARMA_Errhandler_free(&eh);
}

static NARMA_Errhandler npy_errhandler_predefined(int fatal)
{
    return fatal ? NARMA_ERRORS_ARE_FATAL : NARMA_ERRORS_RETURN;
}

static int npy_win_create_errhandler(NARMA_Errhandler *errhandler)
{
    return NARMA_Win_create_errhandler(npy_errhandler_tramp, errhandler);
}

static int npy_win_start(uintptr_t group, int assert, NARMA_Win win)
{
    return NARMA_Win_start(H(MPI_Group, group), assert, win);
}
static int npy_win_post(uintptr_t group, int assert, NARMA_Win win)
{
    return NARMA_Win_post(H(MPI_Group, group), assert, win);
}
static int npy_win_ipost(uintptr_t group, int assert, NARMA_Win win, NARMA_Request *request)
{
    return NARMA_Win_ipost(H(MPI_Group, group), assert, win, request);
}
static int npy_win_istart(uintptr_t group, int assert, NARMA_Win win, NARMA_Request *request)
{
    return NARMA_Win_istart(H(MPI_Group, group), assert, win, request);
}

/* A count narma's int call cannot take, refused as narma refuses a bad count: through the
 * window's error handler. */
static int npy_refuse_count(NARMA_Win win)
{
    NARMA_Win_call_errhandler(win, NARMA_ERR_COUNT);
    return NARMA_ERR_COUNT;
}

#define FITS(c) ((c) >= INT_MIN && (c) <= INT_MAX)

static int npy_rma(int kind, uintptr_t origin, long long oc, uintptr_t odt, int t, intptr_t disp,
                   long long tc, uintptr_t tdt, uintptr_t op, NARMA_Win win, int tag,
                   NARMA_Request *req, int persistent)
{
    void *o = P(origin);
    MPI_Datatype od = H(MPI_Datatype, odt), td = H(MPI_Datatype, tdt);
    MPI_Op mop = H(MPI_Op, op);
    MPI_Aint d = (MPI_Aint)disp;
    int small = FITS(oc) && FITS(tc), ioc = (int)oc, itc = (int)tc;
    switch (kind) {
    case 0:
        if (!small)
            return req ? NARMA_Rput_c(o, oc, od, t, d, tc, td, win, req)
                       : NARMA_Put_c(o, oc, od, t, d, tc, td, win);
        return req ? NARMA_Rput(o, ioc, od, t, d, itc, td, win, req)
                   : NARMA_Put(o, ioc, od, t, d, itc, td, win);
    case 1:
        if (!small)
            return req ? NARMA_Rget_c(o, oc, od, t, d, tc, td, win, req)
                       : NARMA_Get_c(o, oc, od, t, d, tc, td, win);
        return req ? NARMA_Rget(o, ioc, od, t, d, itc, td, win, req)
                   : NARMA_Get(o, ioc, od, t, d, itc, td, win);
    case 2:
        if (!small)
            return req ? NARMA_Raccumulate_c(o, oc, od, t, d, tc, td, mop, win, req)
                       : NARMA_Accumulate_c(o, oc, od, t, d, tc, td, mop, win);
        return req ? NARMA_Raccumulate(o, ioc, od, t, d, itc, td, mop, win, req)
                   : NARMA_Accumulate(o, ioc, od, t, d, itc, td, mop, win);
    case 3:
        if (persistent)
            return small ? NARMA_Put_notify_init(o, ioc, od, t, d, itc, td, win, tag, req)
                         : npy_refuse_count(win);
        if (!small)
            return req ? NARMA_Rput_notify_c(o, oc, od, t, d, tc, td, win, req, tag)
                       : NARMA_Put_notify_c(o, oc, od, t, d, tc, td, win, tag);
        return req ? NARMA_Rput_notify(o, ioc, od, t, d, itc, td, win, req, tag)
                   : NARMA_Put_notify(o, ioc, od, t, d, itc, td, win, tag);
    case 4:
        if (persistent)
            return small ? NARMA_Get_notify_init(o, ioc, od, t, d, itc, td, win, tag, req)
                         : npy_refuse_count(win);
        if (!small)
            return req ? NARMA_Rget_notify_c(o, oc, od, t, d, tc, td, win, req, tag)
                       : NARMA_Get_notify_c(o, oc, od, t, d, tc, td, win, tag);
        return req ? NARMA_Rget_notify(o, ioc, od, t, d, itc, td, win, req, tag)
                   : NARMA_Get_notify(o, ioc, od, t, d, itc, td, win, tag);
    case 5:
        if (req && !persistent) return NARMA_ERR_ARG;
        if (persistent)
            return small ? NARMA_Accumulate_notify_init(o, ioc, od, t, d, itc, td, mop, win, tag,
                                                        req)
                         : npy_refuse_count(win);
        return small ? NARMA_Accumulate_notify(o, ioc, od, t, d, itc, td, mop, win, tag)
                     : NARMA_Accumulate_notify_c(o, oc, od, t, d, tc, td, mop, win, tag);
    case 6:
        if (!small) return npy_refuse_count(win);
        return req ? NARMA_Rput_notify_idx(o, ioc, od, t, d, itc, td, tag, win, req)
                   : NARMA_Put_notify_idx(o, ioc, od, t, d, itc, td, tag, win);
    case 7:
        if (!small) return npy_refuse_count(win);
        return req ? NARMA_Rget_notify_idx(o, ioc, od, t, d, itc, td, tag, win, req)
                   : NARMA_Get_notify_idx(o, ioc, od, t, d, itc, td, tag, win);
    case 8:
        if (!small) return npy_refuse_count(win);
        return req ? NARMA_Raccumulate_notify_idx(o, ioc, od, t, d, itc, td, mop, tag, win, req)
                   : NARMA_Accumulate_notify_idx(o, ioc, od, t, d, itc, td, mop, tag, win);
    default:
        return NARMA_ERR_ARG;
    }
}

static int npy_rma_short(int kind, uintptr_t origin, long long count, uintptr_t dt, int t,
                         intptr_t disp, NARMA_Win win, int tag)
{
    void *o = P(origin);
    MPI_Datatype d = H(MPI_Datatype, dt);
    MPI_Aint td = (MPI_Aint)disp;
    int c = (int)count;
    if (FITS(count)) {
        switch (kind) {
        case 3: return NARMA_Put_notify(o, c, d, t, td, c, d, win, tag);
        case 0: return NARMA_Put(o, c, d, t, td, c, d, win);
        case 1: return NARMA_Get(o, c, d, t, td, c, d, win);
        case 4: return NARMA_Get_notify(o, c, d, t, td, c, d, win, tag);
        case 6: return NARMA_Put_notify_idx(o, c, d, t, td, c, d, tag, win);
        case 7: return NARMA_Get_notify_idx(o, c, d, t, td, c, d, tag, win);
        default: break;
        }
    }
    return npy_rma(kind, origin, count, dt, t, disp, count, dt, 0, win, tag, NULL, 0);
}

static int npy_get_accumulate(int kind, uintptr_t origin, long long oc, uintptr_t odt,
                              uintptr_t result, long long rn, uintptr_t rdt, int t, intptr_t disp,
                              long long tc, uintptr_t tdt, uintptr_t op, NARMA_Win win, int tag,
                              NARMA_Request *req)
{
    const void *o = P(origin);
    void *r = P(result);
    MPI_Datatype od = H(MPI_Datatype, odt), rd = H(MPI_Datatype, rdt), td = H(MPI_Datatype, tdt);
    MPI_Op mop = H(MPI_Op, op);
    MPI_Aint d = (MPI_Aint)disp;
    int small = FITS(oc) && FITS(rn) && FITS(tc);
    int ioc = (int)oc, irc = (int)rn, itc = (int)tc;
    if (!small && kind != 0) return npy_refuse_count(win);
    switch (kind) {
    case 0:
        if (!small)
            return req ? NARMA_Rget_accumulate_c(o, oc, od, r, rn, rd, t, d, tc, td, mop, win, req)
                       : NARMA_Get_accumulate_c(o, oc, od, r, rn, rd, t, d, tc, td, mop, win);
        return req ? NARMA_Rget_accumulate(o, ioc, od, r, irc, rd, t, d, itc, td, mop, win, req)
                   : NARMA_Get_accumulate(o, ioc, od, r, irc, rd, t, d, itc, td, mop, win);
    case 1:
        return req ? NARMA_Rget_accumulate_notify(o, ioc, od, r, irc, rd, t, d, itc, td, mop, win,
                                                  tag, req)
                   : NARMA_Get_accumulate_notify(o, ioc, od, r, irc, rd, t, d, itc, td, mop, win,
                                                 tag);
    case 2:
        return req ? NARMA_Rget_accumulate_notify_idx(o, ioc, od, r, irc, rd, t, d, itc, td, mop,
                                                      tag, win, req)
                   : NARMA_Get_accumulate_notify_idx(o, ioc, od, r, irc, rd, t, d, itc, td, mop,
                                                     tag, win);
    default:
        return NARMA_ERR_ARG;
    }
}

static int npy_fetch_and_op(uintptr_t o, uintptr_t r, uintptr_t dt, int t, intptr_t disp,
                            uintptr_t op, NARMA_Win win, int notify, int tag)
{
    if (notify)
        return NARMA_Fetch_and_op_notify(P(o), P(r), H(MPI_Datatype, dt), t, (MPI_Aint)disp,
                                         H(MPI_Op, op), win, tag);
    return NARMA_Fetch_and_op(P(o), P(r), H(MPI_Datatype, dt), t, (MPI_Aint)disp, H(MPI_Op, op),
                              win);
}

static int npy_compare_and_swap(uintptr_t o, uintptr_t c, uintptr_t r, uintptr_t dt, int t,
                                intptr_t disp, NARMA_Win win, int notify, int tag)
{
    if (notify)
        return NARMA_Compare_and_swap_notify(P(o), P(c), P(r), H(MPI_Datatype, dt), t,
                                             (MPI_Aint)disp, win, tag);
    return NARMA_Compare_and_swap(P(o), P(c), P(r), H(MPI_Datatype, dt), t, (MPI_Aint)disp, win);
}

static int npy_win_set_num_notify(NARMA_Win win, uintptr_t info, int n)
{
    return NARMA_Win_set_num_notify(win, H(MPI_Info, info), n);
}

static MPI_Count npy_notify_value(NARMA_Win win, int notification_idx, int reset)
{
    MPI_Count v = 0;
    int rc = reset ? NARMA_Win_reset_notify_value(win, notification_idx, &v)
                   : NARMA_Win_get_notify_value(win, notification_idx, &v);
    return rc ? -(MPI_Count)rc : v;
}

static int npy_test(NARMA_Request *request, int *flag, int *status)
{
    MPI_Status s;
    int rc = NARMA_Test(request, flag, &s);
    if (rc == NARMA_SUCCESS && *flag) npy_status(&s, status);
    return rc;
}

static int npy_wait(NARMA_Request *request, int *status)
{
    MPI_Status s;
    int rc;
    if (!status) return NARMA_Wait(request, MPI_STATUS_IGNORE);
    rc = NARMA_Wait(request, &s);
    if (rc == NARMA_SUCCESS) npy_status(&s, status);
    return rc;
}

static int npy_request_get_status(NARMA_Request request, int *flag, int *status)
{
    MPI_Status s;
    int rc = NARMA_Request_get_status(request, flag, &s);
    if (rc == NARMA_SUCCESS && *flag) npy_status(&s, status);
    return rc;
}

static int npy_testany(int n, NARMA_Request reqs[], int *index, int *flag, int *status)
{
    MPI_Status s;
    int rc = NARMA_Testany(n, reqs, index, flag, &s);
    if (rc == NARMA_SUCCESS && *flag && *index != MPI_UNDEFINED) npy_status(&s, status);
    return rc;
}

static int npy_waitany(int n, NARMA_Request reqs[], int *index, int *status)
{
    MPI_Status s;
    int rc = NARMA_Waitany(n, reqs, index, &s);
    if (rc == NARMA_SUCCESS && *index != MPI_UNDEFINED) npy_status(&s, status);
    return rc;
}

static int statuses_out(int n, const MPI_Status *s, int *out)
{
    if (out)
        for (int i = 0; i < n; i++) npy_status(&s[i], out + 4 * i);
    return NARMA_SUCCESS;
}

static int npy_testall(int n, NARMA_Request reqs[], int *flag, int *out)
{
    MPI_Status *s = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    int rc;
    if (!s) return NARMA_ERR_NO_MEM;
    rc = NARMA_Testall(n, reqs, flag, s);
    if (rc == NARMA_SUCCESS && *flag) statuses_out(n, s, out);
    free(s);
    return rc;
}

static int npy_waitall(int n, NARMA_Request reqs[], int *out)
{
    MPI_Status *s = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    int rc;
    if (!s) return NARMA_ERR_NO_MEM;
    rc = NARMA_Waitall(n, reqs, s);
    if (rc == NARMA_SUCCESS) statuses_out(n, s, out);
    free(s);
    return rc;
}

static int some_out(int outcount, const int *idx, const MPI_Status *s, int *out)
{
    if (out && outcount != MPI_UNDEFINED)
        for (int i = 0; i < outcount; i++) npy_status(&s[i], out + 4 * idx[i]);
    return NARMA_SUCCESS;
}

static int npy_testsome(int n, NARMA_Request reqs[], int *outcount, int *idx, int *out)
{
    MPI_Status *s = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    int rc;
    if (!s) return NARMA_ERR_NO_MEM;
    rc = NARMA_Testsome(n, reqs, outcount, idx, s);
    if (rc == NARMA_SUCCESS) some_out(*outcount, idx, s, out);
    free(s);
    return rc;
}

static int npy_waitsome(int n, NARMA_Request reqs[], int *outcount, int *idx, int *out)
{
    MPI_Status *s = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    int rc;
    if (!s) return NARMA_ERR_NO_MEM;
    rc = NARMA_Waitsome(n, reqs, outcount, idx, s);
    if (rc == NARMA_SUCCESS) some_out(*outcount, idx, s, out);
    free(s);
    return rc;
}

static int npy_halo_plan_create(uintptr_t cart, int nz, int ny, int nx, int halo_x, int halo_y,
                                uintptr_t datatype, int nfields, int corners, int directions,
                                int layout, int strategy, size_t field_elems,
                                NARMA_Halo_plan *plan)
{
    NARMA_Halo_desc d = NARMA_HALO_DESC_INIT;
    d.nz = nz;
    d.ny = ny;
    d.nx = nx;
    d.halo_x = halo_x;
    d.halo_y = halo_y;
    d.datatype = H(MPI_Datatype, datatype);
    d.nfields = nfields;
    d.corners = corners;
    d.directions = directions;
    d.layout = (NARMA_Halo_layout)layout;
    d.strategy = (NARMA_Halo_strategy)strategy;
    d.field_elems = field_elems;
    return NARMA_Halo_plan_create(H(MPI_Comm, cart), &d, plan);
}

static int npy_halo_plan_strategy(NARMA_Halo_plan plan) { return (int)NARMA_Halo_plan_strategy(plan); }

static const char *npy_halo_strategy_name(int s)
{
    return NARMA_Halo_strategy_name((NARMA_Halo_strategy)s);
}

static int npy_halo_strategy_from_name(const char *name, int *strategy)
{
    NARMA_Halo_strategy s = NARMA_HALO_DEFAULT;
    int rc = NARMA_Halo_strategy_from_name(name, &s);
    *strategy = (int)s;
    return rc;
}

static size_t npy_halo_field_elems(int nz, int ny, int nx, int halo_x, int halo_y, int layout)
{
    NARMA_Halo_desc d = NARMA_HALO_DESC_INIT;
    d.nz = nz;
    d.ny = ny;
    d.nx = nx;
    d.halo_x = halo_x;
    d.halo_y = halo_y;
    d.layout = (NARMA_Halo_layout)layout;
    return NARMA_Halo_field_elems(&d);
}

static volatile unsigned npy_bench_sink;

static double npy_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int npy_bench_receive(NARMA_Request *req, const unsigned char *rbuf, int size)
{
    int rc = NARMA_Start(req);
    if (rc == 0) rc = NARMA_Wait(req, MPI_STATUS_IGNORE);
    if (rc == 0 && size > 0) npy_bench_sink += rbuf[0] + rbuf[size - 1];
    return rc;
}

static int npy_bench_notify_pingpong(NARMA_Win win, NARMA_Request *req, const void *sbuf,
                                     const unsigned char *rbuf, int size, int peer, int tag,
                                     int server, NARMA_Request *put, int nsamples, int batch,
                                     double *samples)
{
    int rc;
    double t = npy_bench_now();
    for (int i = 0; i < nsamples; i++) {
        for (int b = 0; b < batch; b++) {
            if (server && (rc = npy_bench_receive(req, rbuf, size))) return rc;
            if (put) {
                if ((rc = NARMA_Start(put)) || (rc = NARMA_Wait(put, MPI_STATUS_IGNORE)))
                    return rc;
            } else {
                if ((rc = NARMA_Put_notify(sbuf, size, MPI_BYTE, peer, 0, size, MPI_BYTE, win,
                                           tag)))
                    return rc;
                if ((rc = NARMA_Win_flush(peer, win))) return rc;
            }
            if (!server && (rc = npy_bench_receive(req, rbuf, size))) return rc;
        }
        if (samples) {
            double t2 = npy_bench_now();
            samples[i] = (t2 - t) / batch;
            t = t2;
        }
    }
    return 0;
}

/* The empty callee of npy_bench_calls' kind 4, out of the compiler's sight. */
static int (*volatile npy_bench_empty)(void);

static int npy_noop(void) { return 0; }

static int npy_bench_calls(int kind, NARMA_Win win, int n)
{
    static const char buf[8];
    MPI_Count v = 0;
    int rc = 0;
    npy_bench_empty = npy_noop;
    for (int i = 0; i < n && rc == 0; i++) {
        switch (kind) {
        case 0: rc = NARMA_Progress(); break;
        case 1: rc = NARMA_Win_get_notify_value(win, 0, &v); break;
        case 2: rc = NARMA_Win_flush(MPI_PROC_NULL, win); break;
        case 3:
            rc = NARMA_Put_notify(buf, 8, MPI_BYTE, MPI_PROC_NULL, 0, 8, MPI_BYTE, win, 1);
            break;
        default: rc = npy_bench_empty(); break;
        }
    }
    return rc;
}

static int npy_noop_args(void *a, int b, intptr_t c, int d, intptr_t e, int f, intptr_t g,
                         NARMA_Win win, int tag)
{
    (void)a; (void)b; (void)c; (void)d; (void)e; (void)f; (void)g; (void)win; (void)tag;
    return 0;
}
"""

def _locate():
    """(include_dirs, library_dirs, MPI compiler or None) of narma, from the environment (see
    the file comment)."""
    build = os.environ.get("NARMA_BUILD_DIR")
    if build:
        build = os.path.abspath(build)
        inc = [os.path.join(SRC_ROOT, "include"), os.path.join(build, "include")]
        src = build
        mpicc = None
        cache = os.path.join(build, "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache) as f:
                for line in f:
                    if line.startswith("narma_SOURCE_DIR:STATIC="):
                        src = line.split("=", 1)[1].strip()
                        inc[0] = os.path.join(src, "include")
                    elif line.startswith("MPI_C_COMPILER:"):
                        v = line.split("=", 1)[1].strip()
                        mpicc = v if v and not v.endswith("NOTFOUND") else None
        libs = [os.path.join(build, "src"), os.path.join(build, "src", "halo")]
        return inc, libs, mpicc
    prefix = os.environ.get("NARMA_PREFIX")
    if prefix:
        libs = [d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"))
                if os.path.isdir(d)]
        return [os.path.join(prefix, "include")], libs, None
    try:
        cflags = subprocess.check_output(["pkg-config", "--cflags-only-I", "narma"], text=True)
        ldirs = subprocess.check_output(["pkg-config", "--libs-only-L", "narma"], text=True)
    except (OSError, subprocess.CalledProcessError):
        raise RuntimeError(
            "narma not found: set NARMA_BUILD_DIR (a CMake build directory), NARMA_PREFIX "
            "(an install prefix) or PKG_CONFIG_PATH (to narma.pc)")
    inc = [f[2:] for f in shlex.split(cflags) if f.startswith("-I")]
    libs = [f[2:] for f in shlex.split(ldirs) if f.startswith("-L")]
    return inc, libs, None


ffibuilder = FFI()
ffibuilder.cdef(CDEF)
_inc, _libs, _mpicc = _locate()
if not os.environ.get("CC"):
    # narma.h includes mpi.h: compile and link with the MPI wrapper of the MPI narma was built with
    # (a build tree knows it; otherwise the first mpicc on PATH).
    os.environ["CC"] = os.environ.get("MPICC") or _mpicc or "mpicc"
ffibuilder.set_source(
    "narma._narma",
    SOURCE,
    include_dirs=_inc,
    library_dirs=_libs,
    libraries=["narma_halo", "narma"],
    runtime_library_dirs=_libs,
    extra_compile_args=["-O2"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
