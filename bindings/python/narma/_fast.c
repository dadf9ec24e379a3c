/*
 * narma._fast: the latency path of the Python package in CPython's C API.
 *
 * The package is cffi (narma/_narma): every call there is a cffi dispatch, and the package's
 * Python method around it a Python frame, about 330 ns for Win.Put_notify where narma itself
 * takes 3 (docs/performance.md, "Python bindings"). The calls a notified ping-pong or a halo
 * loop makes on every message are implemented here instead, as methods of base classes that
 * narma.Win, narma.Request and narma.Prequest derive from:
 *
 *   Win.Put_notify(origin, target_rank, target=None, tag=0)   a whole C-contiguous NumPy array
 *                                                               of a predefined type, target None
 *                                                               or an int displacement
 *   Win.Flush(rank)
 *   Request.Wait(status=None), Request.Test(status=None)      status None
 *   Prequest.Start()
 *
 * Anything else (another buffer specification, a status object, ...) is handed, with the same
 * arguments, to the package's Python implementation (_Put_notify_py, _wait_py, _test_py), so both
 * paths behave alike; errors are raised by the package's own _raise. The handles are read from
 * the cffi cells the Python objects own (Win._wp, Request._h), whose addresses the package gives
 * once (_bind): narma updates those cells (Win_free, a completed request), so this side never
 * holds a stale handle.
 *
 * The GIL. cffi releases it around every call. Here a call that does not wait keeps it, unless
 * narma runs with its process lock (MPI_THREAD_MULTIPLE: other threads may then be inside narma,
 * and one of them may need the GIL for a Python error handler while this thread waits for the
 * lock). Wait polls with the GIL held for a short while (NARMA_Test, as narma's own waits spin
 * before they yield) and then releases it for NARMA_Wait. Put_notify and Flush may wait in
 * narma (a full notification ring, a flush on the mpi transport) with the GIL held when narma
 * is not threaded: other Python threads then wait too.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <limits.h>
#include <numpy/arrayobject.h>
#include <stdint.h>

#include <narma/narma.h>

/* Polls of Request.Wait with the GIL held before it releases it and blocks in NARMA_Wait. */
#define WAIT_SPINS 1000

static PyObject *raise_fn;            /* narma._raise(code, where) */
#define NTYPES 64                     /* NumPy's built-in type numbers are below this */
static MPI_Datatype dtype_of[NTYPES]; /* by NumPy type number; MPI_DATATYPE_NULL: unknown */
static int threaded = -1;             /* narma's process lock is on (-1: not asked yet) */
static PyObject *str_put_py, *str_wait_py, *str_test_py, *str_keep, *str_target, *str_tag;

/* Asked once, without the GIL: NARMA_Query_thread takes narma's process lock when it is on, and
 * the thread holding it may be waiting for the GIL (a Python error handler narma is calling). A
 * failed answer (MPI not initialised yet) is not kept: the next call asks again. */
static int narma_threaded(void)
{
    if (threaded < 0) {
        int provided = MPI_THREAD_SINGLE, rc;
        Py_BEGIN_ALLOW_THREADS;
        rc = NARMA_Query_thread(&provided);
        Py_END_ALLOW_THREADS;
        if (rc != NARMA_SUCCESS) return 1; /* unknown: let the GIL go, as cffi does */
        threaded = provided == MPI_THREAD_MULTIPLE;
    }
    return threaded;
}

/* rc = call, with the GIL let go when narma is threaded (see the file comment). */
#define NARMA_CALL(rc, call)        \
    do {                            \
        if (narma_threaded()) {     \
            Py_BEGIN_ALLOW_THREADS; \
            (rc) = (call);          \
            Py_END_ALLOW_THREADS;   \
        } else {                    \
            (rc) = (call);          \
        }                           \
    } while (0)

/* The objects of this module hold a handle cell (cffi memory the Python object made) and a
 * reference to the cdata that owns it, so the cell lives as long as they use it. */
typedef struct {
    PyObject_HEAD void *cell;
    PyObject *owner;
} CellObject;

/* _bind(cdata, address of the cell it owns) */
static PyObject *cell_bind(CellObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_bind(cdata, address)");
        return NULL;
    }
    void *p = PyLong_AsVoidPtr(args[1]);
    if (p == NULL && PyErr_Occurred()) return NULL;
    Py_INCREF(args[0]);
    Py_XSETREF(self->owner, args[0]);
    self->cell = p;
    Py_RETURN_NONE;
}

static void cell_dealloc(CellObject *self)
{
    self->cell = NULL;
    Py_CLEAR(self->owner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The type objects: CellObjects that Python classes derive from. */
#define CELL_TYPE(var, name, doc, methods)                    \
    static PyTypeObject var = {                               \
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = name,        \
        .tp_basicsize = sizeof(CellObject),                   \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, \
        .tp_doc = doc,                                        \
        .tp_methods = methods,                                \
        .tp_new = PyType_GenericNew,                          \
        .tp_dealloc = (destructor)cell_dealloc,               \
    }

/* Raise narma.Error for code through the package (which runs no handler: narma did). */
static PyObject *fail(int code, const char *where)
{
    PyObject *r = PyObject_CallFunction(raise_fn, "is", code, where);
    Py_XDECREF(r);
    return NULL;
}

/* ---- Win ---------------------------------------------------------------------------------- */

typedef CellObject WinObject; /* cell: Win._wp, the handle narma created and frees */

static inline NARMA_Win win_of(const WinObject *self)
{
    return self->cell != NULL ? *(NARMA_Win *)self->cell : NARMA_WIN_NULL;
}

/* An exact Python int that fits an int, or 0 (no error set). */
static inline int small_int(PyObject *o, int *v)
{
    if (!PyLong_CheckExact(o)) return 0;
    int overflow = 0;
    long x = PyLong_AsLongAndOverflow(o, &overflow);
    if (overflow || x < INT_MIN || x > INT_MAX) {
        PyErr_Clear();
        return 0;
    }
    *v = (int)x;
    return 1;
}

/* Call the package's Python implementation `name` of this method with the same arguments. */
static PyObject *forward(PyObject *self, PyObject *name, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    const Py_ssize_t n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *stack[8], **fa = n < 8 ? stack : PyMem_Malloc((size_t)(n + 1) * sizeof(*fa));
    if (fa == NULL) return PyErr_NoMemory();
    fa[0] = self;
    for (Py_ssize_t i = 0; i < n; i++)
        fa[i + 1] = args[i];
    PyObject *r = PyObject_VectorcallMethod(name, fa, (size_t)(nargs + 1), kwnames);
    if (fa != stack) PyMem_Free(fa);
    return r;
}

static PyObject *win_put_notify(WinObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *a[4] = {NULL, NULL, Py_None, NULL}; /* origin, target_rank, target, tag */
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int ok = nargs >= 2 && nargs <= 4;
    for (Py_ssize_t i = 0; ok && i < nargs; i++)
        a[i] = args[i];
    for (Py_ssize_t k = 0; ok && k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int slot = name == str_target ? 2 : name == str_tag ? 3 : -1;
        if (slot < 0)
            slot = PyUnicode_Compare(name, str_target) == 0 ? 2
                   : PyUnicode_Compare(name, str_tag) == 0  ? 3
                                                            : -1;
        if (slot < 0 || slot < nargs)
            ok = 0; /* unknown, or given twice: Python says which */
        else
            a[slot] = args[nargs + k];
    }
    int rank = 0, disp = 0, tag = 0;
    if (ok && PyArray_CheckExact(a[0]) && small_int(a[1], &rank) &&
        (a[2] == Py_None || small_int(a[2], &disp)) && (a[3] == NULL || small_int(a[3], &tag))) {
        PyArrayObject *arr = (PyArrayObject *)a[0];
        const int tn = PyArray_TYPE(arr);
        const npy_intp n = PyArray_SIZE(arr);
        if (PyArray_IS_C_CONTIGUOUS(arr) && PyArray_ISNOTSWAPPED(arr) && tn >= 0 && tn < NTYPES &&
            dtype_of[tn] != MPI_DATATYPE_NULL && n <= INT_MAX) {
            const MPI_Datatype dt = dtype_of[tn];
            const void *buf = PyArray_DATA(arr);
            const NARMA_Win w = win_of(self);
            int rc;
            NARMA_CALL(rc, NARMA_Put_notify(buf, (int)n, dt, rank, disp, (int)n, dt, w, tag));
            if (rc) return fail(rc, "Win.Put_notify");
            Py_RETURN_NONE;
        }
    }
    return forward((PyObject *)self, str_put_py, args, nargs, kwnames);
}

static PyObject *win_flush(WinObject *self, PyObject *arg)
{
    int rank;
    if (!small_int(arg, &rank)) { /* an int subclass or __index__ (not a float), as cffi takes */
        PyObject *i = PyNumber_Index(arg);
        if (i == NULL) return NULL;
        long r = PyLong_AsLong(i);
        Py_DECREF(i);
        if (r == -1 && PyErr_Occurred()) return NULL;
        if (r < INT_MIN || r > INT_MAX) { /* as cffi said for the int argument */
            PyErr_SetString(PyExc_OverflowError, "rank does not fit an int");
            return NULL;
        }
        rank = (int)r;
    }
    const NARMA_Win w = win_of(self);
    int rc;
    NARMA_CALL(rc, NARMA_Win_flush(rank, w));
    if (rc) return fail(rc, "Win.Flush");
    Py_RETURN_NONE;
}

static PyMethodDef win_methods[] = {
    {"_bind", (PyCFunction)(void (*)(void))cell_bind, METH_FASTCALL,
     "_bind(cdata, address of the NARMA_Win cell it owns)"},
    {"Put_notify", (PyCFunction)(void (*)(void))win_put_notify, METH_FASTCALL | METH_KEYWORDS,
     "Put_notify(origin, target_rank, target=None, tag=0)\n--\n\n"
     "Put, then a notification <this rank, tag> at the target (complete on return)."},
    {"Flush", (PyCFunction)win_flush, METH_O,
     "Flush(rank)\n--\n\nComplete every access of this process to rank."},
    {NULL, NULL, 0, NULL}};

CELL_TYPE(WinType, "narma._fast.Win", "C base of narma.Win: its latency-path methods.",
          win_methods);

/* ---- Request, Prequest -------------------------------------------------------------------- */

typedef CellObject ReqObject; /* cell: Request._h, which narma nulls when a request is gone */

static PyTypeObject PreqType;

/* Wait/Test as the C path takes them: a bound request, no status (else the Python forms). */
static inline int plain(const ReqObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    return self->cell != NULL && kwnames == NULL &&
           (nargs == 0 || (nargs == 1 && args[0] == Py_None));
}

static inline NARMA_Request *req_cell(const ReqObject *self) { return self->cell; }

static inline int persistent(const ReqObject *self)
{
    return PyObject_TypeCheck((PyObject *)self, &PreqType);
}

/* A request that completed and is gone (not persistent): drop what kept its buffers alive. */
static int req_retired(ReqObject *self)
{
    if (*req_cell(self) != NARMA_REQUEST_NULL) return 0;
    return PyObject_SetAttr((PyObject *)self, str_keep, Py_None);
}

static PyObject *req_wait(ReqObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    if (!plain(self, args, nargs, kwnames))
        return forward((PyObject *)self, str_wait_py, args, nargs, kwnames);
    const char *where = persistent(self) ? "Prequest.Wait" : "Request.Wait";
    int rc = NARMA_SUCCESS, flag = 0;
    /* Spin a little with the GIL (the answer often comes within microseconds), then block
     * without it. Unthreaded narma: nothing else can be inside it meanwhile. */
    if (!narma_threaded())
        for (int i = 0; i < WAIT_SPINS && !flag && rc == NARMA_SUCCESS; i++)
            rc = NARMA_Test(req_cell(self), &flag, MPI_STATUS_IGNORE);
    if (rc == NARMA_SUCCESS && !flag) {
        Py_BEGIN_ALLOW_THREADS;
        rc = NARMA_Wait(req_cell(self), MPI_STATUS_IGNORE);
        Py_END_ALLOW_THREADS;
    }
    if (rc) return fail(rc, where);
    if (!persistent(self) && req_retired(self) < 0) return NULL;
    Py_RETURN_TRUE;
}

static PyObject *req_test(ReqObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    if (!plain(self, args, nargs, kwnames))
        return forward((PyObject *)self, str_test_py, args, nargs, kwnames);
    int rc, flag = 0;
    NARMA_CALL(rc, NARMA_Test(req_cell(self), &flag, MPI_STATUS_IGNORE));
    if (rc) return fail(rc, persistent(self) ? "Prequest.Test" : "Request.Test");
    if (flag && !persistent(self) && req_retired(self) < 0) return NULL;
    return PyBool_FromLong(flag);
}

static PyObject *preq_start(ReqObject *self, PyObject *unused)
{
    (void)unused;
    NARMA_Request *cell = req_cell(self);
    if (cell == NULL) return fail(NARMA_ERR_REQUEST, "Prequest.Start");
    int rc;
    NARMA_CALL(rc, NARMA_Start(cell));
    if (rc) return fail(rc, "Prequest.Start");
    Py_RETURN_NONE;
}

static PyMethodDef req_methods[] = {
    {"_bind", (PyCFunction)(void (*)(void))cell_bind, METH_FASTCALL,
     "_bind(cdata, address of the NARMA_Request cell it owns)"},
    {"Wait", (PyCFunction)(void (*)(void))req_wait, METH_FASTCALL | METH_KEYWORDS,
     "Wait(status=None)\n--\n\nWait for completion (the GIL is released while waiting)."},
    {"Test", (PyCFunction)(void (*)(void))req_test, METH_FASTCALL | METH_KEYWORDS,
     "Test(status=None)\n--\n\nTrue once complete."},
    {NULL, NULL, 0, NULL}};

static PyMethodDef preq_methods[] = {
    {"Start", (PyCFunction)preq_start, METH_NOARGS, "Start()\n--\n\nStart the request again."},
    {NULL, NULL, 0, NULL}};

CELL_TYPE(ReqType, "narma._fast.Request", "C base of narma.Request: its latency-path methods.",
          req_methods);
CELL_TYPE(PreqType, "narma._fast.Prequest", "C base of narma.Prequest: Start.", preq_methods);

/* ---- module ------------------------------------------------------------------------------- */

/* _setup(raise_fn, {numpy type number: MPI datatype handle as an int}) */
static PyObject *fast_setup(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *fn, *types, *k, *v;
    Py_ssize_t pos = 0;
    if (!PyArg_ParseTuple(args, "OO!", &fn, &PyDict_Type, &types)) return NULL;
    Py_INCREF(fn);
    Py_XDECREF(raise_fn);
    raise_fn = fn;
    while (PyDict_Next(types, &pos, &k, &v)) {
        long tn = PyLong_AsLong(k);
        if (tn == -1 && PyErr_Occurred()) return NULL;
        if (tn < 0 || tn >= NTYPES) continue;
        /* MPICH's handles are ints, Open MPI's pointers: an intptr_t holds either. */
        void *h = PyLong_AsVoidPtr(v);
        if (h == NULL && PyErr_Occurred()) return NULL;
        dtype_of[tn] = (MPI_Datatype)(intptr_t)h;
    }
    Py_RETURN_NONE;
}

/* _ntypes(): how many NumPy types Put_notify takes itself (tests: the table is not empty). */
static PyObject *fast_ntypes(PyObject *mod, PyObject *unused)
{
    (void)mod, (void)unused;
    long n = 0;
    for (int i = 0; i < NTYPES; i++)
        n += dtype_of[i] != MPI_DATATYPE_NULL;
    return PyLong_FromLong(n);
}

static PyMethodDef fast_functions[] = {
    {"_ntypes", fast_ntypes, METH_NOARGS, "_ntypes()"},
    {"_setup", fast_setup, METH_VARARGS, "_setup(raise_fn, types)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef fast_module = {PyModuleDef_HEAD_INIT, "narma._fast",
                                         "The latency path of narma's Python package.", -1,
                                         fast_functions};

PyMODINIT_FUNC PyInit__fast(void)
{
    import_array();
    for (int i = 0; i < NTYPES; i++)
        dtype_of[i] = MPI_DATATYPE_NULL;
    str_put_py = PyUnicode_InternFromString("_Put_notify_py");
    str_wait_py = PyUnicode_InternFromString("_wait_py");
    str_test_py = PyUnicode_InternFromString("_test_py");
    str_keep = PyUnicode_InternFromString("_keep");
    str_target = PyUnicode_InternFromString("target");
    str_tag = PyUnicode_InternFromString("tag");
    if (!str_put_py || !str_wait_py || !str_test_py || !str_keep || !str_target || !str_tag)
        return NULL;
    PreqType.tp_base = &ReqType;
    if (PyType_Ready(&WinType) < 0 || PyType_Ready(&ReqType) < 0 || PyType_Ready(&PreqType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&fast_module);
    if (m == NULL) return NULL;
    PyTypeObject *types[3] = {&WinType, &ReqType, &PreqType};
    const char *names[3] = {"Win", "Request", "Prequest"};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(types[i]);
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
