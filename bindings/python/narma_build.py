"""cffi (API mode) build script of narma's Python extension, narma._narma.

The extension is compiled with the MPI compiler wrapper against narma's headers and linked to
libnarma and libnarma_halo. Where they are is found, in order, from
  NARMA_BUILD_DIR   a CMake build directory of narma (headers from the source tree beside it),
  NARMA_PREFIX      an install prefix (include/, lib/ or lib64/),
  pkg-config narma  (PKG_CONFIG_PATH pointing at an installed narma.pc).
The library directory is put in the extension's RUNPATH, so no LD_LIBRARY_PATH is needed.

Why cffi in API mode: the wrappers below are compiled C, so a call costs one cffi dispatch (no
ctypes argument conversion; measured in bindings/python/README.md), and cffi releases the GIL
around every C call, so a blocking Wait never holds it. MPI handles cross the boundary as
intptr_t: mpi4py's handles are MPICH's ints or Open MPI's pointers, and the casts below turn either
back into the MPI type of the library we are compiled against.
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
typedef struct narmah_plan *NARMA_Halo_plan;

enum narma_error {
    NARMA_SUCCESS, NARMA_ERR_ARG, NARMA_ERR_RANK, NARMA_ERR_TAG, NARMA_ERR_COUNT, NARMA_ERR_TYPE,
    NARMA_ERR_OP, NARMA_ERR_WIN, NARMA_ERR_DISP, NARMA_ERR_RMA_SYNC, NARMA_ERR_RMA_CONFLICT,
    NARMA_ERR_REQUEST, NARMA_ERR_NO_MEM, NARMA_ERR_ATTACH, NARMA_ERR_KEYVAL, NARMA_ERR_NOT_INIT,
    NARMA_ERR_PENDING, NARMA_ERR_UNSUPPORTED, NARMA_ERR_MPI, NARMA_ERR_INTERN, NARMA_ERR_LASTCODE,
    ...
};
enum narma_halo_error {
    NARMA_HALO_ERR_TOPOLOGY, NARMA_HALO_ERR_SHAPE, NARMA_HALO_ERR_DEPTH, NARMA_HALO_ERR_SIZE,
    NARMA_HALO_ERR_STRATEGY, NARMA_HALO_ERR_STATE, NARMA_HALO_ERR_LASTCODE, ...
};
#define NARMA_TAG_UB ...

const char *NARMA_Strerror(int errorcode);
const char *NARMA_Halo_error_string(int errorcode);
int NARMA_Get_mpi_error(void);
const char *NARMA_Get_version(void);
const char *NARMA_Win_get_transport(NARMA_Win win);
const char *NARMA_Win_get_target_transport(NARMA_Win win, int rank);
int NARMA_Init(int *argc, char ***argv);
int NARMA_Finalize(void);

int npy_win_create(void *base, intptr_t size, int disp_unit, uintptr_t info, uintptr_t comm,
                   NARMA_Win *win);
int npy_win_allocate(intptr_t size, int disp_unit, uintptr_t info, uintptr_t comm, void **base,
                     NARMA_Win *win);
int npy_win_create_dynamic(uintptr_t info, uintptr_t comm, NARMA_Win *win);
int NARMA_Win_free(NARMA_Win *win);
int npy_win_attach(NARMA_Win win, void *base, intptr_t size);
int NARMA_Win_detach(NARMA_Win win, const void *base);
int npy_win_get_group(NARMA_Win win, uintptr_t *group);
int NARMA_Win_set_name(NARMA_Win win, const char *win_name);
int NARMA_Win_get_name(NARMA_Win win, char *win_name, int *resultlen);
int npy_win_attrs(NARMA_Win win, intptr_t *base, intptr_t *size, int *disp_unit, int *flavor,
                  int *model);

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

/* kind: 0 put, 1 get, 2 accumulate, 3 put_notify, 4 get_notify, 5 accumulate_notify;
 * request != NULL: the R* form (kinds 0-4); persistent: the _init form (kinds 3-5). */
int npy_rma(int kind, void *origin, int ocount, uintptr_t odt, int target, intptr_t disp,
            int tcount, uintptr_t tdt, uintptr_t op, NARMA_Win win, int tag,
            NARMA_Request *request, int persistent);
int npy_get_accumulate(const void *origin, int ocount, uintptr_t odt, void *result, int rcount,
                       uintptr_t rdt, int target, intptr_t disp, int tcount, uintptr_t tdt,
                       uintptr_t op, NARMA_Win win, NARMA_Request *request);
int npy_fetch_and_op(const void *origin, void *result, uintptr_t dt, int target, intptr_t disp,
                     uintptr_t op, NARMA_Win win);
int npy_compare_and_swap(const void *origin, const void *compare, void *result, uintptr_t dt,
                         int target, intptr_t disp, NARMA_Win win);

int NARMA_Notify_init(NARMA_Win win, int src_rank, int tag, int expected_count,
                      NARMA_Request *request);
int NARMA_Start(NARMA_Request *request);
int NARMA_Startall(int count, NARMA_Request array_of_requests[]);
/* status: int[4] = source, tag, error, count in bytes (NULL: ignored). */
int npy_test(NARMA_Request *request, int *flag, int *status);
int npy_wait(NARMA_Request *request, int *status);
int npy_testany(int count, NARMA_Request reqs[], int *index, int *flag, int *status);
int npy_waitany(int count, NARMA_Request reqs[], int *index, int *status);
int npy_testall(int count, NARMA_Request reqs[], int *flag, int *statuses);
int npy_waitall(int count, NARMA_Request reqs[], int *statuses);
int npy_testsome(int count, NARMA_Request reqs[], int *outcount, int *indices, int *statuses);
int npy_waitsome(int count, NARMA_Request reqs[], int *outcount, int *indices, int *statuses);
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

/* Overhead probes: the same cffi dispatch without any work. */
/* The C reference of the Python ping-pong (bench/micro/pingpong's narma_notify round, in C, on the
 * caller's window and notification request): iters rounds; returns a narma error or 0. */
int npy_bench_notify_pingpong(NARMA_Win win, NARMA_Request *req, const void *buf, int size,
                              int peer, int tag, int iters, int server);
int npy_noop(void);
int npy_noop_args(void *a, int b, intptr_t c, int d, intptr_t e, int f, intptr_t g,
                  NARMA_Win win, int tag);
"""

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <narma/narma.h>
#include <narma/narma_halo.h>

/* An mpi4py handle (int for MPICH, pointer for Open MPI) as the MPI type. */
#define H(type, h) ((type)(h))

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

static int npy_rma(int kind, void *o, int oc, uintptr_t odt, int t, intptr_t disp, int tc,
                   uintptr_t tdt, uintptr_t op, NARMA_Win win, int tag, NARMA_Request *req,
                   int persistent)
{
    MPI_Datatype od = H(MPI_Datatype, odt), td = H(MPI_Datatype, tdt);
    MPI_Aint d = (MPI_Aint)disp;
    switch (kind) {
    case 0:
        return req ? NARMA_Rput(o, oc, od, t, d, tc, td, win, req)
                   : NARMA_Put(o, oc, od, t, d, tc, td, win);
    case 1:
        return req ? NARMA_Rget(o, oc, od, t, d, tc, td, win, req)
                   : NARMA_Get(o, oc, od, t, d, tc, td, win);
    case 2:
        return req ? NARMA_Raccumulate(o, oc, od, t, d, tc, td, H(MPI_Op, op), win, req)
                   : NARMA_Accumulate(o, oc, od, t, d, tc, td, H(MPI_Op, op), win);
    case 3:
        if (persistent) return NARMA_Put_notify_init(o, oc, od, t, d, tc, td, win, tag, req);
        return req ? NARMA_Rput_notify(o, oc, od, t, d, tc, td, win, req, tag)
                   : NARMA_Put_notify(o, oc, od, t, d, tc, td, win, tag);
    case 4:
        if (persistent) return NARMA_Get_notify_init(o, oc, od, t, d, tc, td, win, tag, req);
        return req ? NARMA_Rget_notify(o, oc, od, t, d, tc, td, win, req, tag)
                   : NARMA_Get_notify(o, oc, od, t, d, tc, td, win, tag);
    case 5:
        if (persistent)
            return NARMA_Accumulate_notify_init(o, oc, od, t, d, tc, td, H(MPI_Op, op), win, tag,
                                                req);
        if (req) return NARMA_ERR_ARG;
        return NARMA_Accumulate_notify(o, oc, od, t, d, tc, td, H(MPI_Op, op), win, tag);
    default:
        return NARMA_ERR_ARG;
    }
}

static int npy_get_accumulate(const void *o, int oc, uintptr_t odt, void *r, int rc, uintptr_t rdt,
                              int t, intptr_t disp, int tc, uintptr_t tdt, uintptr_t op,
                              NARMA_Win win, NARMA_Request *req)
{
    if (req)
        return NARMA_Rget_accumulate(o, oc, H(MPI_Datatype, odt), r, rc, H(MPI_Datatype, rdt), t,
                                     (MPI_Aint)disp, tc, H(MPI_Datatype, tdt), H(MPI_Op, op), win,
                                     req);
    return NARMA_Get_accumulate(o, oc, H(MPI_Datatype, odt), r, rc, H(MPI_Datatype, rdt), t,
                                (MPI_Aint)disp, tc, H(MPI_Datatype, tdt), H(MPI_Op, op), win);
}

static int npy_fetch_and_op(const void *o, void *r, uintptr_t dt, int t, intptr_t disp,
                            uintptr_t op, NARMA_Win win)
{
    return NARMA_Fetch_and_op(o, r, H(MPI_Datatype, dt), t, (MPI_Aint)disp, H(MPI_Op, op), win);
}

static int npy_compare_and_swap(const void *o, const void *c, void *r, uintptr_t dt, int t,
                                intptr_t disp, NARMA_Win win)
{
    return NARMA_Compare_and_swap(o, c, r, H(MPI_Datatype, dt), t, (MPI_Aint)disp, win);
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

static int npy_bench_notify_pingpong(NARMA_Win win, NARMA_Request *req, const void *buf,
                                     int size, int peer, int tag, int iters, int server)
{
    int rc;
    for (int i = 0; i < iters; i++) {
        if (server) {
            if ((rc = NARMA_Start(req)) || (rc = NARMA_Wait(req, MPI_STATUS_IGNORE))) return rc;
        }
        if ((rc = NARMA_Put_notify(buf, size, MPI_BYTE, peer, 0, size, MPI_BYTE, win, tag)))
            return rc;
        if ((rc = NARMA_Win_flush(peer, win))) return rc;
        if (!server) {
            if ((rc = NARMA_Start(req)) || (rc = NARMA_Wait(req, MPI_STATUS_IGNORE))) return rc;
        }
    }
    return 0;
}

static int npy_noop(void) { return 0; }
static int npy_noop_args(void *a, int b, intptr_t c, int d, intptr_t e, int f, intptr_t g,
                         NARMA_Win win, int tag)
{
    (void)a; (void)b; (void)c; (void)d; (void)e; (void)f; (void)g; (void)win; (void)tag;
    return 0;
}
"""


def _locate():
    """(include_dirs, library_dirs) of narma, from the environment (see the file comment)."""
    build = os.environ.get("NARMA_BUILD_DIR")
    if build:
        build = os.path.abspath(build)
        inc = [os.path.join(SRC_ROOT, "include"), os.path.join(build, "include")]
        src = build
        cache = os.path.join(build, "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache) as f:
                for line in f:
                    if line.startswith("narma_SOURCE_DIR:STATIC="):
                        src = line.split("=", 1)[1].strip()
                        inc[0] = os.path.join(src, "include")
        libs = [os.path.join(build, "src"), os.path.join(build, "src", "halo")]
        return inc, libs
    prefix = os.environ.get("NARMA_PREFIX")
    if prefix:
        libs = [d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"))
                if os.path.isdir(d)]
        return [os.path.join(prefix, "include")], libs
    try:
        cflags = subprocess.check_output(["pkg-config", "--cflags-only-I", "narma"], text=True)
        ldirs = subprocess.check_output(["pkg-config", "--libs-only-L", "narma"], text=True)
    except (OSError, subprocess.CalledProcessError):
        raise RuntimeError(
            "narma not found: set NARMA_BUILD_DIR (a CMake build directory), NARMA_PREFIX "
            "(an install prefix) or PKG_CONFIG_PATH (to narma.pc)")
    inc = [f[2:] for f in shlex.split(cflags) if f.startswith("-I")]
    libs = [f[2:] for f in shlex.split(ldirs) if f.startswith("-L")]
    return inc, libs


ffibuilder = FFI()
ffibuilder.cdef(CDEF)
_inc, _libs = _locate()
if not os.environ.get("CC"):
    # narma.h includes mpi.h: compile and link with the MPI wrapper of the MPI narma was built with.
    os.environ["CC"] = os.environ.get("MPICC", "mpicc")
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
