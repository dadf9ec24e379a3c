"""narma: notified access and nonblocking RMA synchronisation over mpi4py.

Names and conventions follow mpi4py's one-sided interface::

    from mpi4py import MPI
    import numpy as np
    import narma

    win = narma.Win.Allocate(8 * n, 8, comm=MPI.COMM_WORLD)
    mem = win.tomemory(np.float64)          # this rank's window memory as a NumPy array
    win.Lock_all()
    win.Put_notify(np.ones(n), peer, tag=7)  # data and a <rank, tag> notification
    req = win.Notify_init(narma.ANY_SOURCE, 7)
    req.Start(); st = narma.Status(); req.Wait(st)

Buffers are NumPy arrays (or any object with the buffer protocol), ``[buf, datatype]`` or
``[buf, count, datatype]``; a target is ``None`` (displacement 0, the origin's count and type), a
displacement, or ``(disp, count, datatype)``. Counts are Python ints: beyond an int the call goes
to narma's MPI_Count (``_c``) form. Every error raises :class:`narma.Error`, whose
``error_class`` is narma's error class (``narma.ERR_ARG`` ...); a window's error handler
(``Win.Create_errhandler``) runs first.

Threads: cffi releases the GIL around every C call (so a blocking ``Wait`` lets other Python
threads run), and Python threads can therefore be inside narma at the same time. The latency
path (``Win.Put_notify``, ``Win.Flush``, ``Request.Wait/Test``, ``Prequest.Start``: narma._fast)
keeps the GIL for calls that do not wait unless narma's process lock is on (below), and
``Wait`` lets it go once it has polled for a while. What they may
do is the thread level :func:`Query_thread` returns, the one mpi4py asked MPI for when it was
imported (``mpi4py.rc.thread_level``: ``"multiple"`` unless set before ``from mpi4py import
MPI``, or ``MPI4PY_RC_THREAD_LEVEL``); there is no ``narma.Init_thread`` (see Query_thread).

- ``THREAD_MULTIPLE``, mpi4py's default: narma's process lock is on. Threads may call narma at
  once on distinct windows and requests; on one window, inside an epoch that stays open
  meanwhile (a ``Lock_all`` say), they may all issue data calls (``Put``, ``Put_notify``, the
  accumulates, their ``R*``, ``_idx`` and persistent forms), flush, use notification requests
  (``Notify_init``, ``Start``, ``Wait``, ``Test``; each request in one thread at a time), read
  and reset counters and call ``Progress``. Epoch calls (``Fence``, ``Lock_all``,
  ``Unlock_all`` ...), ``Free``, ``Set_num_notify``, ``Attach``/``Detach``, ``Set_info``,
  ``Set_errhandler`` and a halo plan's calls stay one thread at a time per window (per plan).
  The lock serialises narma's work (threads overlap their computation, not narma's) and costs
  13.5 ns per call uncontended (docs/performance.md, "Threads"). ``Win.Create`` memory is then
  not moved onto shared memory, so such windows use the ``mpi`` transport (and ``Attach``-ed
  regions are reached through the kernel), unless ``NARMA_SHM_CREATE=1`` says no other thread
  writes to those pages while windows are created, attached or freed (UCX's memory hooks, on
  in the MPICH wheel unless ``UCX_MEM_EVENTS=no``, keep them off shared memory at every level);
  and MPICH's own one-sided calls, which the ``mpi`` transport makes, are several times slower
  under ``MPI_THREAD_MULTIPLE``.
- Below it (``mpi4py.rc.thread_level = "funneled"`` or ``"serialized"`` before importing
  ``mpi4py.MPI``), or with ``NARMA_THREADS=off`` (``Query_thread`` then says
  ``THREAD_SERIALIZED``): no lock, and one thread at a time calls narma (the main thread under
  ``THREAD_FUNNELED``). Holding the GIL does not serialise the calls: each call lets it go.

The package itself keeps nothing that threads share through a call: an exception a callback
raised waits in its own thread for the call that ran it, and counter values come back as
return values.

The package remembers the address of each NumPy array it was given (through a weak reference,
until the array dies), so a call on the same array again skips the buffer conversion (arrays
made per call, slices, ``bytes``, are converted each time); NumPy then refuses to resize that
array in place (``ndarray.resize``), as it does for any array with weak references.
"""

import itertools as _itertools
import os as _os
import threading as _threading
import weakref as _weakref

from mpi4py import MPI
import numpy as _np

from ._narma import ffi as _ffi, lib as _lib

# The latency path in C (narma/_fast.c). Without it (not built, a NumPy of another ABI, or
# NARMA_PYTHON_FAST=0) the same methods run in Python through cffi, ~10x slower per call;
# narma._fast_error says why.
# (No name _fast before the import: `from . import _fast` would take it instead of importing.)
_fast_error = None
if _os.environ.get("NARMA_PYTHON_FAST", "1") == "0":
    _fast, _fast_error = None, "NARMA_PYTHON_FAST=0"
else:
    try:
        from . import _fast
    except ImportError as _e:
        _fast, _fast_error = None, _e


class _NoFast:
    __slots__ = ()

    def _bind(self, owner, address):
        pass


class _NoFastPrequest(_NoFast):
    __slots__ = ()

__all__ = ["Win", "Request", "Prequest", "Status", "Error", "Errhandler", "Halo", "Progress",
           "Alloc_mem", "Free_mem", "Type_free", "Get_error_string", "Get_version",
           "Query_thread"]

# ---- constants -------------------------------------------------------------------------------

ANY_SOURCE = MPI.ANY_SOURCE
ANY_TAG = MPI.ANY_TAG
PROC_NULL = MPI.PROC_NULL
UNDEFINED = MPI.UNDEFINED
TAG_UB = _lib.NARMA_TAG_UB
MODE_NOCHECK = MPI.MODE_NOCHECK
MODE_NOSTORE = MPI.MODE_NOSTORE
MODE_NOPUT = MPI.MODE_NOPUT
MODE_NOPRECEDE = MPI.MODE_NOPRECEDE
MODE_NOSUCCEED = MPI.MODE_NOSUCCEED
THREAD_SINGLE = MPI.THREAD_SINGLE
THREAD_FUNNELED = MPI.THREAD_FUNNELED
THREAD_SERIALIZED = MPI.THREAD_SERIALIZED
THREAD_MULTIPLE = MPI.THREAD_MULTIPLE
LOCK_SHARED = MPI.LOCK_SHARED
LOCK_EXCLUSIVE = MPI.LOCK_EXCLUSIVE
WIN_FLAVOR_CREATE = MPI.WIN_FLAVOR_CREATE
WIN_FLAVOR_ALLOCATE = MPI.WIN_FLAVOR_ALLOCATE
WIN_FLAVOR_DYNAMIC = MPI.WIN_FLAVOR_DYNAMIC
WIN_FLAVOR_SHARED = _lib.NARMA_WIN_FLAVOR_SHARED
WIN_SEPARATE = MPI.WIN_SEPARATE
WIN_UNIFIED = MPI.WIN_UNIFIED
# Predefined window attributes (Win.Get_attr): MPI's, and the counter notifications' bounds.
WIN_BASE = MPI.WIN_BASE
WIN_SIZE = MPI.WIN_SIZE
WIN_DISP_UNIT = MPI.WIN_DISP_UNIT
WIN_CREATE_FLAVOR = MPI.WIN_CREATE_FLAVOR
WIN_MODEL = MPI.WIN_MODEL
WIN_NOTIFICATION_NUM_UB = _lib.NARMA_WIN_NOTIFICATION_NUM_UB
WIN_NOTIFICATION_VALUE_UB = _lib.NARMA_WIN_NOTIFICATION_VALUE_UB
KEYVAL_INVALID = MPI.KEYVAL_INVALID
_PREDEFINED_KEYVALS = frozenset((WIN_BASE, WIN_SIZE, WIN_DISP_UNIT, WIN_CREATE_FLAVOR, WIN_MODEL,
                                 WIN_NOTIFICATION_NUM_UB, WIN_NOTIFICATION_VALUE_UB))

SUCCESS = _lib.NARMA_SUCCESS
_ERRS = ["ARG", "RANK", "TAG", "COUNT", "TYPE", "OP", "WIN", "DISP", "RMA_SYNC", "RMA_CONFLICT",
         "REQUEST", "NO_MEM", "ATTACH", "KEYVAL", "NOT_INIT", "PENDING", "UNSUPPORTED", "MPI",
         "INTERN", "NOTIFY_IDX", "LASTCODE"]
for _e in _ERRS:
    globals()["ERR_" + _e] = getattr(_lib, "NARMA_ERR_" + _e)
for _e in ["TOPOLOGY", "SHAPE", "DEPTH", "SIZE", "STRATEGY", "STATE", "LASTCODE"]:
    globals()["HALO_ERR_" + _e] = getattr(_lib, "NARMA_HALO_ERR_" + _e)
del _e

_NULL = _ffi.NULL


def Get_version():
    """narma's version string."""
    return _ffi.string(_lib.NARMA_Get_version()).decode()


def Query_thread():
    """The thread level narma calls may be made at, as mpi4py's ``MPI.THREAD_*`` (also
    ``narma.THREAD_*``): MPI's own level (``MPI.Query_thread()``, which mpi4py asked for at
    import: ``mpi4py.rc.thread_level``), except ``THREAD_SERIALIZED`` under
    ``THREAD_MULTIPLE`` when ``NARMA_THREADS=off`` turned narma's lock off. ``THREAD_MULTIPLE``:
    Python threads may call narma at once (see the package's documentation for what on one
    window); below it, one thread at a time.

    There is no ``narma.Init_thread``: importing narma imports ``mpi4py.MPI``, which initialises
    MPI (or the program does, with ``MPI.Init_thread``, after ``mpi4py.rc.initialize = False``),
    and narma sets itself up at its first call with the level MPI provided."""
    provided = _ffi.new("int *")
    rc = _lib.NARMA_Query_thread(provided)
    if rc:
        _raise(rc, "Query_thread")
    return provided[0]


# ---- errors ----------------------------------------------------------------------------------

class Error(RuntimeError):
    """A narma call failed. ``error_class`` is narma's error class (``narma.ERR_*`` or
    ``narma.HALO_ERR_*``); for ``ERR_MPI`` ``mpi_error`` is the MPI error code."""

    def __init__(self, error_class, where=None):
        self.error_class = int(error_class)
        self.mpi_error = _lib.NARMA_Get_mpi_error() if error_class == _lib.NARMA_ERR_MPI else 0
        text = _ffi.string(_lib.NARMA_Halo_error_string(self.error_class)).decode()
        self.error_string = text
        msg = "%s (narma error class %d)" % (text, self.error_class)
        if where:
            msg = "%s: %s" % (where, msg)
        super().__init__(msg)

    def Get_error_class(self):
        return self.error_class

    def Get_error_string(self):
        return self.error_string


# Exceptions raised by Python callbacks that narma (or MPI) called: error handlers and attribute
# delete functions. C cannot carry them, so they wait for the call that ran the callback, which
# narma ran in the calling thread: one list per thread (_tls.pending), so that under
# MPI_THREAD_MULTIPLE a thread never raises what another thread's callback raised.
_tls = _threading.local()


def _callback_error(exc_type, exc_value, tb):
    pending = getattr(_tls, "pending", None)
    if pending is None:
        pending = _tls.pending = []
    pending.append(exc_value.with_traceback(tb))


def _raise(rc, where):
    err = Error(rc, where)
    pending = getattr(_tls, "pending", None)
    if pending:
        exc = pending.pop()
        pending.clear()
        raise exc from err
    raise err


def _check_pending():
    """Raise what a callback raised during the call that just succeeded."""
    pending = getattr(_tls, "pending", None)
    if pending:
        exc = pending.pop()
        pending.clear()
        raise exc


def Get_error_string(errorcode):
    """Text of a narma (or halo) error class."""
    return _ffi.string(_lib.NARMA_Halo_error_string(int(errorcode))).decode()


# ---- handles and buffers ---------------------------------------------------------------------

try:
    _handleof = MPI._handleof
except AttributeError:  # pragma: no cover - very old mpi4py
    def _handleof(obj):
        return obj.handle


def _h(obj, default):
    """C handle (as an int) of an mpi4py object, or of `default` when obj is None."""
    return _handleof(default if obj is None else obj)


_BYTE = _handleof(MPI.BYTE)
_dt_cache = {}


def _dtype_of(arr):
    """The MPI datatype matching a NumPy array's element type."""
    dt = arr.dtype
    t = _dt_cache.get(dt)
    if t is None:
        # The predefined MPI type of the dtype's character code (mpi4py's own table);
        # mpi4py.util.dtlib would build a derived type, which atomics and halos refuse.
        t = getattr(MPI, "_typedict", {}).get(dt.char) if dt.isnative else None
        if t is None:
            raise Error(_lib.NARMA_ERR_TYPE, "no predefined MPI datatype for NumPy dtype %s"
                        % dt)
        _dt_cache[dt] = t
    return t


def _as_array(buf):
    if isinstance(buf, _np.ndarray):
        return buf
    return _np.frombuffer(buf, dtype=_np.uint8) if not isinstance(buf, memoryview) \
        else _np.asarray(buf)


def _address(arr):
    if arr.flags.c_contiguous:
        return int(_ffi.cast("uintptr_t", _ffi.from_buffer(arr)))
    # Fortran order (cffi's from_buffer takes C order only): the memory goes in address order.
    return arr.__array_interface__["data"][0]


class _Ref(_weakref.ref):
    __slots__ = ("key",)


def _drop(ref):
    _bufs.pop(ref.key, None)


# What the package knows of each NumPy array it converted, by id(): (weak reference, dtype, size,
# writable when converted, address, count, datatype handle). This is the Python side of the
# latency path: a hit costs a dict lookup and two attribute reads, converting an array about five
# times that (docs/performance.md, "Python bindings").
# - An entry goes when its array dies: the weak reference's callback (_drop) runs as the array is
#   deallocated, before its id can be reused, so an entry found under id(a) is a's own.
# - An array's address cannot change: ndarray.data cannot be assigned, and NumPy refuses to
#   resize an array that has weak references. Its element count and type change only with its
#   dtype (a new dtype object) or size, which every hit compares; calls writing into the array
#   ask its flags again. (Strides assigned in place, deprecated since NumPy 2.4, go unnoticed:
#   the memory is sent in address order.)
_bufs = {}
_BUFS_MAX = 4096
_ndarray = _np.ndarray


def _convert(arr, writable, remember):
    """(address, count, datatype handle) of a whole NumPy array; `remember`: enter it in _bufs."""
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        raise Error(_lib.NARMA_ERR_ARG, "buffer must be contiguous")
    if writable and not arr.flags.writeable:
        raise Error(_lib.NARMA_ERR_ARG, "buffer must be writable")
    dth = _handleof(_dtype_of(arr))
    addr = _address(arr)
    count = arr.size
    if remember and len(_bufs) < _BUFS_MAX:
        ref = _Ref(arr, _drop)
        ref.key = id(arr)
        _bufs[ref.key] = (ref, arr.dtype, count, arr.flags.writeable, addr, count, dth)
    return addr, count, dth


def _msg(spec, writable):
    """(keepalive, address, count, datatype handle) of a buffer specification."""
    if type(spec) is _ndarray:
        e = _bufs.get(id(spec))
        if (e is not None and spec.dtype is e[1] and spec.size == e[2]
                and (not writable or spec.flags.writeable)):
            return spec, e[4], e[5], e[6]
        return (spec,) + _convert(spec, writable, True)
    if isinstance(spec, (list, tuple)):
        if len(spec) == 2:
            buf, dtype = spec
            count = None
        elif len(spec) == 3:
            buf, count, dtype = spec
        else:
            raise Error(_lib.NARMA_ERR_ARG, "a message is buf, [buf, datatype] or "
                                             "[buf, count, datatype]")
        if not isinstance(dtype, MPI.Datatype):
            raise Error(_lib.NARMA_ERR_TYPE, "expected an mpi4py Datatype, got %r" % (dtype,))
        arr = _as_array(buf)
        if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
            raise Error(_lib.NARMA_ERR_ARG, "buffer must be contiguous")
        if writable and not arr.flags.writeable:
            raise Error(_lib.NARMA_ERR_ARG, "buffer must be writable")
        if count is None:
            size = dtype.Get_size()
            count = arr.nbytes // size if size else 0
        return arr, _address(arr), int(count), _handleof(dtype)
    if spec is None:
        return None, 0, 0, _BYTE
    arr = _as_array(spec)
    return (arr,) + _convert(arr, writable, False)


def _target(target, ocount, odt):
    """(disp, count, datatype handle) of an mpi4py target specification."""
    if target is None:
        return 0, ocount, odt
    if type(target) is int:
        return target, ocount, odt
    if isinstance(target, (list, tuple)):
        disp = target[0] if len(target) > 0 else 0
        count = target[1] if len(target) > 1 else ocount
        dt = _handleof(target[2]) if len(target) > 2 else odt
        return int(disp), int(count), dt
    return int(target), ocount, odt


def Alloc_mem(size, info=None):
    """Memory from MPI_Alloc_mem (through narma), as a NumPy uint8 array of `size` bytes; give
    it back with Free_mem (the array must not be used afterwards)."""
    base = _ffi.new("void **")
    rc = _lib.npy_alloc_mem(int(size), _h(info, MPI.INFO_NULL), base)
    if rc:
        _raise(rc, "Alloc_mem")
    if int(size) == 0:
        # Nothing to hand out: an empty array, and the allocation goes back at once.
        _lib.NARMA_Free_mem(base[0])
        return _np.zeros(0, dtype=_np.uint8)
    _allocs[int(_ffi.cast("uintptr_t", base[0]))] = base[0]
    return _np.frombuffer(_ffi.buffer(base[0], int(size)), dtype=_np.uint8)


_allocs = {}  # address -> pointer of the memory Alloc_mem handed out


def Free_mem(mem):
    """Release memory from Alloc_mem (the array it returned, or any array starting there)."""
    arr = _as_array(mem)
    if arr.size == 0:
        return
    ptr = _allocs.pop(_address(arr), None)
    if ptr is None:
        raise Error(_lib.NARMA_ERR_ARG, "Free_mem: not memory from narma.Alloc_mem")
    rc = _lib.NARMA_Free_mem(ptr)
    if rc:
        _raise(rc, "Free_mem")


def Type_free(datatype):
    """Free a derived mpi4py Datatype through narma (NARMA_Type_free: narma forgets what it
    learnt about the type, so MPI may reuse the handle); `datatype` becomes MPI.DATATYPE_NULL.
    Use it instead of datatype.Free() for types narma has seen."""
    rc = _lib.npy_type_free(MPI._addressof(datatype))
    if rc:
        _raise(rc, "Type_free")


# ---- status ----------------------------------------------------------------------------------

class Status:
    """What a completed request reports: ``source``, ``tag``, ``error`` and ``count`` (bytes;
    notification requests: the size of the last matched access)."""

    __slots__ = ("_s",)

    def __init__(self):
        self._s = _ffi.new("int[4]", [MPI.ANY_SOURCE, MPI.ANY_TAG, 0, 0])

    source = property(lambda self: self._s[0])
    tag = property(lambda self: self._s[1])
    error = property(lambda self: self._s[2])

    @property
    def count(self):
        return self._s[3]

    def Get_source(self):
        return self._s[0]

    def Get_tag(self):
        return self._s[1]

    def Get_error(self):
        return self._s[2]

    def Get_count(self, datatype=None):
        """Elements of `datatype` (default MPI.BYTE) in the last access, MPI.UNDEFINED when not
        a whole number."""
        size = 1 if datatype is None else datatype.Get_size()
        n = self._s[3]
        if n < 0 or size == 0 or n % size:
            return MPI.UNDEFINED
        return n // size

    def __repr__(self):
        return "narma.Status(source=%d, tag=%d, error=%d, count=%d)" % tuple(self._s)


def _st(status):
    return _NULL if status is None else status._s


# The calls on the latency path, bound once (a module global is found faster than an attribute
# of the cffi library object).
_npy_wait = _lib.npy_wait
_npy_test = _lib.npy_test
_npy_rma = _lib.npy_rma
_npy_rma_short = _lib.npy_rma_short
_start = _lib.NARMA_Start
_flush = _lib.NARMA_Win_flush
_notify_value = _lib.npy_notify_value
_progress = _lib.NARMA_Progress


# ---- requests --------------------------------------------------------------------------------

class Request(_fast.Request if _fast else _NoFast):
    """A narma request (request-based RMA, nonblocking synchronisation, notification).

    ``Wait(status=None)`` waits for completion (the GIL is released while it blocks) and
    ``Test(status=None)`` says whether it is complete; both are implemented in C (narma._fast)
    and hand a status object to the Python forms below."""

    __slots__ = ("_h", "_keep", "_flag", "__weakref__")

    def __init__(self, keep=None):
        self._h = _ffi.new("NARMA_Request *")
        self._bind(self._h, int(_ffi.cast("uintptr_t", self._h)))  # narma._fast reads it there
        self._keep = keep  # buffers and windows the operation uses, alive until completion
        self._flag = None  # Test's output, made on the first Test (polling loops reuse it)

    def __bool__(self):
        return self._h[0] != _NULL

    def _wait_py(self, status=None):
        rc = _npy_wait(self._h, _NULL if status is None else status._s)
        if rc:
            _raise(rc, "Request.Wait")
        if self._h[0] == _NULL:
            self._keep = None
        return True

    def _test_py(self, status=None):
        flag = self._flag
        if flag is None:
            flag = self._flag = _ffi.new("int *")
        rc = _npy_test(self._h, flag, _NULL if status is None else status._s)
        if rc:
            _raise(rc, "Request.Test")
        if flag[0] and self._h[0] == _NULL:
            self._keep = None
        return bool(flag[0])

    def Get_status(self, status=None):
        """Whether the request is complete, without completing it (MPI_Request_get_status):
        Test or Wait still have to complete it. A null or inactive request is complete, with
        an empty status."""
        flag = self._flag
        if flag is None:
            flag = self._flag = _ffi.new("int *")
        rc = _lib.npy_request_get_status(self._h[0], flag, _st(status))
        if rc:
            _raise(rc, "Request.Get_status")
        return bool(flag[0])

    def Free(self):
        rc = _lib.NARMA_Request_free(self._h)
        if rc:
            _raise(rc, "Request.Free")
        self._keep = None

    @staticmethod
    def _array(requests):
        n = len(requests)
        arr = _ffi.new("NARMA_Request[]", max(n, 1))
        for i, r in enumerate(requests):
            arr[i] = r._h[0]
        return n, arr

    @staticmethod
    def _back(requests, arr):
        for i, r in enumerate(requests):
            r._h[0] = arr[i]
            if arr[i] == _NULL:
                r._keep = None

    @staticmethod
    def _statuses(statuses, n):
        if statuses is None:
            return _NULL, None
        return _ffi.new("int[]", 4 * max(n, 1)), statuses

    @staticmethod
    def _fill(buf, statuses, indices):
        if statuses is None:
            return
        for i in indices:
            while len(statuses) <= i:
                statuses.append(Status())
            for k in range(4):
                statuses[i]._s[k] = buf[4 * i + k]

    @classmethod
    def Waitall(cls, requests, statuses=None):
        n, arr = cls._array(requests)
        sbuf, statuses = cls._statuses(statuses, n)
        rc = _lib.npy_waitall(n, arr, sbuf)
        cls._back(requests, arr)
        if rc:
            _raise(rc, "Request.Waitall")
        cls._fill(sbuf, statuses, range(n))
        return True

    @classmethod
    def Testall(cls, requests, statuses=None):
        n, arr = cls._array(requests)
        sbuf, statuses = cls._statuses(statuses, n)
        flag = _ffi.new("int *")
        rc = _lib.npy_testall(n, arr, flag, sbuf)
        cls._back(requests, arr)
        if rc:
            _raise(rc, "Request.Testall")
        if flag[0]:
            cls._fill(sbuf, statuses, range(n))
        return bool(flag[0])

    @classmethod
    def Waitany(cls, requests, status=None):
        n, arr = cls._array(requests)
        index = _ffi.new("int *")
        rc = _lib.npy_waitany(n, arr, index, _st(status))
        cls._back(requests, arr)
        if rc:
            _raise(rc, "Request.Waitany")
        return index[0]

    @classmethod
    def Testany(cls, requests, status=None):
        n, arr = cls._array(requests)
        index = _ffi.new("int *")
        flag = _ffi.new("int *")
        rc = _lib.npy_testany(n, arr, index, flag, _st(status))
        cls._back(requests, arr)
        if rc:
            _raise(rc, "Request.Testany")
        return index[0], bool(flag[0])

    @classmethod
    def _some(cls, fn, name, requests, statuses):
        n, arr = cls._array(requests)
        sbuf, statuses = cls._statuses(statuses, n)
        outcount = _ffi.new("int *")
        idx = _ffi.new("int[]", max(n, 1))
        rc = fn(n, arr, outcount, idx, sbuf)
        cls._back(requests, arr)
        if rc:
            _raise(rc, name)
        if outcount[0] == MPI.UNDEFINED:
            return None
        indices = [idx[i] for i in range(outcount[0])]
        cls._fill(sbuf, statuses, indices)
        return indices

    @classmethod
    def Waitsome(cls, requests, statuses=None):
        return cls._some(_lib.npy_waitsome, "Request.Waitsome", requests, statuses)

    @classmethod
    def Testsome(cls, requests, statuses=None):
        return cls._some(_lib.npy_testsome, "Request.Testsome", requests, statuses)

    def __del__(self):
        # A request dropped without completion is freed (narma withdraws notification requests);
        # errors cannot be raised from here.
        try:
            if self._h[0] != _NULL:
                _lib.NARMA_Request_free(self._h)
        except Exception:
            pass


class Prequest(Request, _fast.Prequest if _fast else _NoFastPrequest):
    """A persistent request: notification (Win.Notify_init) or persistent notified access
    (Win.Put_notify_init ...). Start it (``Start()``, in C), complete it with Wait/Test, start
    it again."""

    __slots__ = ()

    def _start_py(self):
        rc = _start(self._h)
        if rc:
            _raise(rc, "Prequest.Start")

    def _wait_py(self, status=None):
        rc = _npy_wait(self._h, _NULL if status is None else status._s)
        if rc:
            _raise(rc, "Prequest.Wait")
        return True

    def _test_py(self, status=None):
        flag = self._flag
        if flag is None:
            flag = self._flag = _ffi.new("int *")
        rc = _npy_test(self._h, flag, _NULL if status is None else status._s)
        if rc:
            _raise(rc, "Prequest.Test")
        return bool(flag[0])

    @staticmethod
    def Startall(requests):
        n, arr = Request._array(requests)
        rc = _lib.NARMA_Startall(n, arr)
        if rc:
            _raise(rc, "Prequest.Startall")


# ---- error handlers --------------------------------------------------------------------------

class Errhandler:
    """A window error handler: ``narma.ERRORS_RETURN`` (the default: the call just fails, here
    by raising narma.Error), ``narma.ERRORS_ARE_FATAL`` (narma prints the error and calls
    MPI_Abort), or one made by ``Win.Create_errhandler(fn)``."""

    __slots__ = ("_eh", "__weakref__")

    def __init__(self):
        self._eh = _ffi.new("NARMA_Errhandler *")

    def __bool__(self):
        return self._eh[0] != _NULL

    def __eq__(self, other):
        return isinstance(other, Errhandler) and self._eh[0] == other._eh[0]

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(int(_ffi.cast("uintptr_t", self._eh[0])))

    def Free(self):
        """Release this handle (a window using the handler keeps it alive)."""
        if self is ERRORS_RETURN or self is ERRORS_ARE_FATAL:
            return
        rc = _lib.NARMA_Errhandler_free(self._eh)
        if rc:
            _raise(rc, "Errhandler.Free")

    def __del__(self):
        try:
            if self._eh[0] != _NULL:
                _lib.NARMA_Errhandler_free(self._eh)
        except Exception:
            pass

    def __repr__(self):
        if self == ERRORS_RETURN:
            return "narma.ERRORS_RETURN"
        if self == ERRORS_ARE_FATAL:
            return "narma.ERRORS_ARE_FATAL"
        return "<narma.Errhandler %s>" % ("null" if not self else hex(self.__hash__()))


def _predefined_errhandler(fatal):
    eh = Errhandler()
    eh._eh[0] = _lib.npy_errhandler_predefined(fatal)
    return eh


ERRORS_RETURN = _predefined_errhandler(0)
ERRORS_ARE_FATAL = _predefined_errhandler(1)

# Python functions of the handlers made by Win.Create_errhandler, by the C handler's address.
# Kept for the life of the process: a window may run a handler whose handles were all freed.
_errhandler_fns = {}
# Live windows by handle (for callbacks, which get the C handle).
_wins = _weakref.WeakValueDictionary()


def _win_of(handle):
    w = _wins.get(int(_ffi.cast("uintptr_t", handle)))
    if w is None:  # a window this package did not create: a non-owning wrapper
        w = Win()
        w._wp[0] = handle
        w._w = handle
    return w


@_ffi.def_extern(onerror=_callback_error)
def npy_errhandler_py(eh, winp, errorcode):
    fn = _errhandler_fns.get(int(_ffi.cast("uintptr_t", eh)))
    if fn is not None:
        fn(_win_of(winp[0]), errorcode)


# ---- attributes ------------------------------------------------------------------------------

# Keyvals made by Win.Create_keyval -> their delete function (or None); attribute values set on
# them, by the key narma stores: key -> (keyval, weak reference to the window, value).
_keyvals = {}
_attr_values = {}
_attr_keys = _itertools.count(1)


@_ffi.def_extern(onerror=_callback_error)
def npy_attr_delete_py(keyval, key):
    entry = _attr_values.pop(key, None)
    if entry is None:
        return
    fn = _keyvals.get(keyval)
    if fn is not None:
        fn(entry[1](), keyval, entry[2])


# ---- windows ---------------------------------------------------------------------------------

_RMA_PUT, _RMA_GET, _RMA_ACC, _RMA_PUT_N, _RMA_GET_N, _RMA_ACC_N = range(6)
_RMA_PUT_I, _RMA_GET_I, _RMA_ACC_I = range(6, 9)
_GACC, _GACC_N, _GACC_I = range(3)


class Win(_fast.Win if _fast else _NoFast):
    """A narma window (mpi4py.MPI.Win's names and argument conventions). ``Put_notify`` and
    ``Flush`` are implemented in C (narma._fast); ``Put_notify`` hands what it does not take
    itself (anything but a whole C-contiguous NumPy array of a predefined type with an int or
    no target) to ``_Put_notify_py``."""

    __slots__ = ("_w", "_wp", "_mem", "_attached", "__weakref__")

    def __init__(self):
        self._wp = _ffi.new("NARMA_Win *")
        self._bind(self._wp, int(_ffi.cast("uintptr_t", self._wp)))  # narma._fast reads it there
        self._w = _NULL
        self._mem = None
        self._attached = {}

    def _set(self, rc, where):
        if rc:
            _raise(rc, where)
        self._w = self._wp[0]
        _wins[int(_ffi.cast("uintptr_t", self._w))] = self

    # -- creation and destruction

    @classmethod
    def Create(cls, memory, disp_unit=1, info=None, comm=None):
        """Window over existing memory (a NumPy array or buffer, or None / MPI.BOTTOM for none).
        The array is kept alive as long as the window."""
        w = cls()
        if memory is None or memory is MPI.BOTTOM:
            arr, ptr, size = None, _NULL, 0
        else:
            arr = _as_array(memory)
            if not arr.flags.c_contiguous:
                raise Error(_lib.NARMA_ERR_ARG, "Win.Create: memory must be C-contiguous")
            ptr = _ffi.from_buffer(arr, require_writable=True)
            size = arr.nbytes
        w._mem = (arr, ptr)
        w._set(_lib.npy_win_create(ptr, size, disp_unit, _h(info, MPI.INFO_NULL),
                                   _h(comm, MPI.COMM_SELF), w._wp), "Win.Create")
        return w

    @classmethod
    def Allocate(cls, size, disp_unit=1, info=None, comm=None):
        """Window over `size` bytes allocated by narma (see tomemory)."""
        w = cls()
        base = _ffi.new("void **")
        w._set(_lib.npy_win_allocate(int(size), disp_unit, _h(info, MPI.INFO_NULL),
                                     _h(comm, MPI.COMM_SELF), base, w._wp), "Win.Allocate")
        w._mem = (None, base[0], int(size))
        return w

    @classmethod
    def Allocate_shared(cls, size, disp_unit=1, info=None, comm=None):
        """Collective over `comm`, whose ranks must share memory (else narma.ERR_UNSUPPORTED,
        e.g. split COMM_WORLD with MPI.COMM_TYPE_SHARED first): `size` bytes on each rank that
        every rank loads from and stores to (Shared_query), contiguous across ranks unless info
        says alloc_shared_noncontig=true, and a full narma window over them (tomemory: this
        rank's segment)."""
        w = cls()
        base = _ffi.new("void **")
        w._set(_lib.npy_win_allocate_shared(int(size), disp_unit, _h(info, MPI.INFO_NULL),
                                            _h(comm, MPI.COMM_SELF), base, w._wp),
               "Win.Allocate_shared")
        w._mem = (None, base[0], int(size))
        return w

    def Shared_query(self, rank):
        """(memory, disp_unit) of `rank`'s segment as this process sees it: a NumPy uint8
        array over it (no copy; valid until Free), for loads and stores. Windows from
        Allocate_shared: every rank; from Allocate and Create: this rank and each peer reached
        through the shm transport. PROC_NULL: the lowest rank whose segment is not empty.
        narma.ERR_RANK for a rank whose memory is not shared with this process."""
        size = _ffi.new("intptr_t *")
        du = _ffi.new("int *")
        base = _ffi.new("void **")
        rc = _lib.npy_win_shared_query(self._w, rank, size, du, base)
        if rc:
            _raise(rc, "Win.Shared_query")
        if size[0] == 0 or base[0] == _NULL:
            return _np.zeros(0, dtype=_np.uint8), du[0]
        return _np.frombuffer(_ffi.buffer(base[0], size[0]), dtype=_np.uint8), du[0]

    @classmethod
    def Create_dynamic(cls, info=None, comm=None):
        w = cls()
        w._set(_lib.npy_win_create_dynamic(_h(info, MPI.INFO_NULL), _h(comm, MPI.COMM_SELF),
                                           w._wp), "Win.Create_dynamic")
        return w

    def Attach(self, memory):
        """Attach a NumPy array (kept alive until Detach) to a dynamic window."""
        arr = _as_array(memory)
        ptr = _ffi.from_buffer(arr, require_writable=True)
        rc = _lib.npy_win_attach(self._w, ptr, arr.nbytes)
        if rc:
            _raise(rc, "Win.Attach")
        self._attached[int(_ffi.cast("intptr_t", ptr))] = (arr, ptr)

    def Detach(self, memory):
        arr = _as_array(memory)
        ptr = _ffi.from_buffer(arr)
        rc = _lib.NARMA_Win_detach(self._w, ptr)
        if rc:
            _raise(rc, "Win.Detach")
        self._attached.pop(int(_ffi.cast("intptr_t", ptr)), None)

    def Free(self):
        """Collective: free the window (narma.ERR_PENDING while epochs or requests remain).
        Attributes go with it (their keyvals' delete functions run)."""
        key = int(_ffi.cast("uintptr_t", self._w))
        rc = _lib.NARMA_Win_free(self._wp)
        if rc:
            _raise(rc, "Win.Free")
        _wins.pop(key, None)
        self._w = self._wp[0] = _NULL  # narma._fast reads _wp
        self._mem = None
        self._attached = {}
        _check_pending()

    def __bool__(self):
        return self._w != _NULL

    # -- attributes

    def _attrs(self):
        base = _ffi.new("intptr_t *")
        size = _ffi.new("intptr_t *")
        du, fl, mo = _ffi.new("int *"), _ffi.new("int *"), _ffi.new("int *")
        rc = _lib.npy_win_attrs(self._w, base, size, du, fl, mo)
        if rc:
            _raise(rc, "Win.Get_attr")
        return base[0], size[0], du[0], fl[0], mo[0]

    @property
    def base(self):
        return self._attrs()[0]

    @property
    def size(self):
        return self._attrs()[1]

    @property
    def disp_unit(self):
        return self._attrs()[2]

    @property
    def flavor(self):
        return self._attrs()[3]

    @property
    def model(self):
        return self._attrs()[4]

    @property
    def transport(self):
        """"shm", "mpi" or "shm+mpi"."""
        return _ffi.string(_lib.NARMA_Win_get_transport(self._w)).decode()

    def Get_target_transport(self, rank):
        return _ffi.string(_lib.NARMA_Win_get_target_transport(self._w, rank)).decode()

    def Get_group(self):
        g = _ffi.new("uintptr_t *")
        rc = _lib.npy_win_get_group(self._w, g)
        if rc:
            _raise(rc, "Win.Get_group")
        return MPI.Group.fromhandle(g[0])

    def Set_name(self, name):
        rc = _lib.NARMA_Win_set_name(self._w, name.encode())
        if rc:
            _raise(rc, "Win.Set_name")

    def Get_name(self):
        buf = _ffi.new("char[]", MPI.MAX_OBJECT_NAME + 1)
        n = _ffi.new("int *")
        rc = _lib.NARMA_Win_get_name(self._w, buf, n)
        if rc:
            _raise(rc, "Win.Get_name")
        return _ffi.string(buf, n[0]).decode()

    name = property(Get_name, Set_name)

    def Get_info(self):
        """The hints narma honours on the window, with their values in force, in a new
        MPI.Info (free it with Free())."""
        i = _ffi.new("uintptr_t *")
        rc = _lib.npy_win_get_info(self._w, i)
        if rc:
            _raise(rc, "Win.Get_info")
        return MPI.Info.fromhandle(i[0])

    def Set_info(self, info):
        """Update the hints (narma: the four epoch reorder keys can change after creation; other
        keys are ignored). Every process of the window should pass the same values."""
        rc = _lib.npy_win_set_info(self._w, _h(info, MPI.INFO_NULL))
        if rc:
            _raise(rc, "Win.Set_info")

    info = property(Get_info, Set_info)

    @classmethod
    def Create_keyval(cls, copy_fn=None, delete_fn=None):
        """A new attribute key for windows; values are Python objects. delete_fn(win, keyval,
        value) runs when an attribute goes (Delete_attr, replaced by Set_attr, window freed).
        Windows are never copied, so copy_fn is never called (accepted as mpi4py does)."""
        k = _ffi.new("int *")
        rc = _lib.npy_win_create_keyval(k)
        if rc:
            _raise(rc, "Win.Create_keyval")
        _keyvals[k[0]] = delete_fn
        return k[0]

    @classmethod
    def Free_keyval(cls, keyval):
        """Free a key made by Create_keyval; returns KEYVAL_INVALID. Attributes already set keep
        their values until they are deleted."""
        k = _ffi.new("int *", keyval)
        rc = _lib.NARMA_Win_free_keyval(k)
        if rc:
            _raise(rc, "Win.Free_keyval")
        return k[0]

    def Set_attr(self, keyval, attrval):
        """Store `attrval` under `keyval` (a key from Create_keyval; for any other key the
        value must be an int, stored as it is)."""
        if keyval in _keyvals:
            key = next(_attr_keys)
            _attr_values[key] = (keyval, _weakref.ref(self), attrval)
        else:
            key = int(attrval)
        rc = _lib.npy_win_set_attr(self._w, keyval, key)
        if rc:
            if keyval in _keyvals:
                _attr_values.pop(key, None)
            _raise(rc, "Win.Set_attr")
        _check_pending()

    def Get_attr(self, keyval):
        """The attribute's value, or None when it is not set. Predefined keys (WIN_BASE,
        WIN_SIZE, WIN_DISP_UNIT, WIN_CREATE_FLAVOR, WIN_MODEL, WIN_NOTIFICATION_NUM_UB,
        WIN_NOTIFICATION_VALUE_UB) give ints (WIN_BASE: the address)."""
        v = _ffi.new("intptr_t *")
        flag = _ffi.new("int *")
        rc = _lib.npy_win_get_attr(self._w, keyval, v, flag)
        if rc:
            _raise(rc, "Win.Get_attr")
        if not flag[0]:
            return None
        if keyval in _keyvals:
            entry = _attr_values.get(v[0])
            return None if entry is None else entry[2]
        return v[0]

    def Delete_attr(self, keyval):
        rc = _lib.NARMA_Win_delete_attr(self._w, keyval)
        if rc:
            _raise(rc, "Win.Delete_attr")
        _check_pending()

    def tomemory(self, dtype=_np.uint8):
        """This rank's window memory (Allocate, Allocate_shared, Create) as a NumPy array of
        `dtype` (no copy)."""
        if self._mem is None:
            raise Error(_lib.NARMA_ERR_WIN, "Win.tomemory: no memory (dynamic or freed window)")
        if self._mem[0] is not None:
            return self._mem[0].view(dtype).reshape(-1)
        ptr, size = self._mem[1], self._mem[2]
        if size == 0:
            return _np.zeros(0, dtype=dtype)
        return _np.frombuffer(_ffi.buffer(ptr, size), dtype=dtype)

    # -- error handlers

    @classmethod
    def Create_errhandler(cls, errhandler_fn):
        """An error handler calling errhandler_fn(win, error_class) when a call on a window that
        uses it fails; the call then raises narma.Error (or what the function raised, with the
        narma.Error as its cause)."""
        eh = Errhandler()
        rc = _lib.npy_win_create_errhandler(eh._eh)
        if rc:
            _raise(rc, "Win.Create_errhandler")
        _errhandler_fns[int(_ffi.cast("uintptr_t", eh._eh[0]))] = errhandler_fn
        return eh

    def Set_errhandler(self, errhandler):
        rc = _lib.NARMA_Win_set_errhandler(self._w, errhandler._eh[0])
        if rc:
            _raise(rc, "Win.Set_errhandler")

    def Get_errhandler(self):
        """The window's handler (compare with ==; free with Free(), or let it go)."""
        eh = Errhandler()
        rc = _lib.NARMA_Win_get_errhandler(self._w, eh._eh)
        if rc:
            _raise(rc, "Win.Get_errhandler")
        return eh

    def Call_errhandler(self, errorcode):
        """Run the window's handler on `errorcode` (MPI_Win_call_errhandler)."""
        rc = _lib.NARMA_Win_call_errhandler(self._w, errorcode)
        if rc:
            _raise(rc, "Win.Call_errhandler")
        _check_pending()

    # -- synchronisation

    def Fence(self, assertion=0):
        rc = _lib.NARMA_Win_fence(assertion, self._w)
        if rc:
            _raise(rc, "Win.Fence")

    def Start(self, group, assertion=0):
        rc = _lib.npy_win_start(_handleof(group), assertion, self._w)
        if rc:
            _raise(rc, "Win.Start")

    def Complete(self):
        rc = _lib.NARMA_Win_complete(self._w)
        if rc:
            _raise(rc, "Win.Complete")

    def Post(self, group, assertion=0):
        rc = _lib.npy_win_post(_handleof(group), assertion, self._w)
        if rc:
            _raise(rc, "Win.Post")

    def Wait(self):
        rc = _lib.NARMA_Win_wait(self._w)
        if rc:
            _raise(rc, "Win.Wait")

    def Test(self):
        flag = _ffi.new("int *")
        rc = _lib.NARMA_Win_test(self._w, flag)
        if rc:
            _raise(rc, "Win.Test")
        return bool(flag[0])

    def Lock(self, rank, lock_type=LOCK_EXCLUSIVE, assertion=0):
        rc = _lib.NARMA_Win_lock(lock_type, rank, assertion, self._w)
        if rc:
            _raise(rc, "Win.Lock")

    def Unlock(self, rank):
        rc = _lib.NARMA_Win_unlock(rank, self._w)
        if rc:
            _raise(rc, "Win.Unlock")

    def Lock_all(self, assertion=0):
        rc = _lib.NARMA_Win_lock_all(assertion, self._w)
        if rc:
            _raise(rc, "Win.Lock_all")

    def Unlock_all(self):
        rc = _lib.NARMA_Win_unlock_all(self._w)
        if rc:
            _raise(rc, "Win.Unlock_all")

    def _flush_py(self, rank):
        rc = _flush(rank, self._w)
        if rc:
            _raise(rc, "Win.Flush")

    def Flush_all(self):
        rc = _lib.NARMA_Win_flush_all(self._w)
        if rc:
            _raise(rc, "Win.Flush_all")

    def Flush_local(self, rank):
        rc = _lib.NARMA_Win_flush_local(rank, self._w)
        if rc:
            _raise(rc, "Win.Flush_local")

    def Flush_local_all(self):
        rc = _lib.NARMA_Win_flush_local_all(self._w)
        if rc:
            _raise(rc, "Win.Flush_local_all")

    def Sync(self):
        rc = _lib.NARMA_Win_sync(self._w)
        if rc:
            _raise(rc, "Win.Sync")

    # -- nonblocking synchronisation: each returns a narma.Request

    def _ireq(self, rc, req, where):
        if rc:
            _raise(rc, where)
        return req

    def Ifence(self, assertion=0):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_ifence(assertion, self._w, r._h), r, "Win.Ifence")

    def Istart(self, group, assertion=0):
        r = Request(self)
        return self._ireq(_lib.npy_win_istart(_handleof(group), assertion, self._w, r._h), r,
                          "Win.Istart")

    def Icomplete(self):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_icomplete(self._w, r._h), r, "Win.Icomplete")

    def Ipost(self, group, assertion=0):
        r = Request(self)
        return self._ireq(_lib.npy_win_ipost(_handleof(group), assertion, self._w, r._h), r,
                          "Win.Ipost")

    def Iwait(self):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_iwait(self._w, r._h), r, "Win.Iwait")

    def Ilock(self, rank, lock_type=LOCK_EXCLUSIVE, assertion=0):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_ilock(lock_type, rank, assertion, self._w, r._h), r,
                          "Win.Ilock")

    def Iunlock(self, rank):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_iunlock(rank, self._w, r._h), r, "Win.Iunlock")

    def Ilock_all(self, assertion=0):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_ilock_all(assertion, self._w, r._h), r, "Win.Ilock_all")

    def Iunlock_all(self):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_iunlock_all(self._w, r._h), r, "Win.Iunlock_all")

    def Iflush(self, rank):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_iflush(rank, self._w, r._h), r, "Win.Iflush")

    def Iflush_local(self, rank):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_iflush_local(rank, self._w, r._h), r,
                          "Win.Iflush_local")

    def Iflush_all(self):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_iflush_all(self._w, r._h), r, "Win.Iflush_all")

    def Iflush_local_all(self):
        r = Request(self)
        return self._ireq(_lib.NARMA_Win_iflush_local_all(self._w, r._h), r,
                          "Win.Iflush_local_all")

    # -- communication

    def _rma(self, kind, origin, target_rank, target, op, tag, where, req=None, persistent=0,
             writable=False):
        # _msg's fast path inlined (one Python call less on the latency path)
        if (type(origin) is _ndarray and (e := _bufs.get(id(origin))) is not None
                and origin.dtype is e[1] and origin.size == e[2]
                and (not writable or origin.flags.writeable)):
            keep, addr, count, odt = origin, e[4], e[5], e[6]
        else:
            keep, addr, count, odt = _msg(origin, writable)
        if req is None and op is None and (target is None or type(target) is int):
            # the target is the origin's count and type: 8 arguments for cffi to convert, not 13
            rc = _npy_rma_short(kind, addr, count, odt, target_rank, target or 0, self._w, tag)
            if rc:
                _raise(rc, where)
            return None
        if target is None:
            disp, tcount, tdt = 0, count, odt
        elif type(target) is int:
            disp, tcount, tdt = target, count, odt
        else:
            disp, tcount, tdt = _target(target, count, odt)
        if req is None:
            rp = _NULL
        else:
            req._keep = (keep, self)
            rp = req._h
        rc = _npy_rma(kind, addr, count, odt, target_rank, disp, tcount, tdt,
                      0 if op is None else _handleof(op), self._w, tag, rp, persistent)
        if rc:
            _raise(rc, where)
        return req

    # Put, Get, Put_notify and Put_notify_idx write _rma's fast path out (one Python call less
    # on the latency path): a remembered array, the target the origin's count and type.

    def Put(self, origin, target_rank, target=None):
        if (type(origin) is _ndarray and (target is None or type(target) is int)
                and (e := _bufs.get(id(origin))) is not None and origin.dtype is e[1]
                and origin.size == e[2]):
            rc = _npy_rma_short(_RMA_PUT, e[4], e[5], e[6], target_rank, target or 0, self._w, 0)
            if rc:
                _raise(rc, "Win.Put")
            return
        self._rma(_RMA_PUT, origin, target_rank, target, None, 0, "Win.Put")

    def Get(self, origin, target_rank, target=None):
        if (type(origin) is _ndarray and (target is None or type(target) is int)
                and (e := _bufs.get(id(origin))) is not None and origin.dtype is e[1]
                and origin.size == e[2] and origin.flags.writeable):
            rc = _npy_rma_short(_RMA_GET, e[4], e[5], e[6], target_rank, target or 0, self._w, 0)
            if rc:
                _raise(rc, "Win.Get")
            return
        self._rma(_RMA_GET, origin, target_rank, target, None, 0, "Win.Get", writable=True)

    def Accumulate(self, origin, target_rank, target=None, op=MPI.SUM):
        self._rma(_RMA_ACC, origin, target_rank, target, op, 0, "Win.Accumulate")

    def Rput(self, origin, target_rank, target=None):
        return self._rma(_RMA_PUT, origin, target_rank, target, None, 0, "Win.Rput", Request())

    def Rget(self, origin, target_rank, target=None):
        return self._rma(_RMA_GET, origin, target_rank, target, None, 0, "Win.Rget", Request(),
                         writable=True)

    def Raccumulate(self, origin, target_rank, target=None, op=MPI.SUM):
        return self._rma(_RMA_ACC, origin, target_rank, target, op, 0, "Win.Raccumulate",
                         Request())

    def _getacc(self, kind, origin, result, target_rank, target, op, tag, req, where):
        okeep, oaddr, ocount, odt = _msg(origin, False)
        rkeep, raddr, rcount, rdt = _msg(result, True)
        disp, tcount, tdt = _target(target, rcount, rdt)
        rp = _NULL
        if req is not None:
            req._keep = (okeep, rkeep, self)
            rp = req._h
        rc = _lib.npy_get_accumulate(kind, oaddr, ocount, odt, raddr, rcount, rdt, target_rank,
                                     disp, tcount, tdt, _handleof(op), self._w, tag, rp)
        if rc:
            _raise(rc, where)
        return req

    def Get_accumulate(self, origin, result, target_rank, target=None, op=MPI.SUM):
        self._getacc(_GACC, origin, result, target_rank, target, op, 0, None,
                     "Win.Get_accumulate")

    def Rget_accumulate(self, origin, result, target_rank, target=None, op=MPI.SUM):
        return self._getacc(_GACC, origin, result, target_rank, target, op, 0, Request(),
                            "Win.Rget_accumulate")

    def _atomic_dt(self, origin, result):
        """(origin address, result address, datatype): the origin's type, or the result's when
        there is no origin (MPI.NO_OP)."""
        _, oaddr, _, dt = _msg(origin, False)
        _, raddr, _, rdt = _msg(result, True)
        return oaddr, raddr, (rdt if origin is None else dt)

    def Fetch_and_op(self, origin, result, target_rank, target_disp=0, op=MPI.SUM):
        """Origin None (with op MPI.NO_OP) reads atomically."""
        oaddr, raddr, dt = self._atomic_dt(origin, result)
        rc = _lib.npy_fetch_and_op(oaddr, raddr, dt, target_rank, target_disp, _handleof(op),
                                   self._w, 0, 0)
        if rc:
            _raise(rc, "Win.Fetch_and_op")

    def Compare_and_swap(self, origin, compare, result, target_rank, target_disp=0):
        oaddr, raddr, dt = self._atomic_dt(origin, result)
        _, caddr, _, _ = _msg(compare, False)
        rc = _lib.npy_compare_and_swap(oaddr, caddr, raddr, dt, target_rank, target_disp,
                                       self._w, 0, 0)
        if rc:
            _raise(rc, "Win.Compare_and_swap")

    # -- notified access (tag-matched: a <origin rank, tag> notification at the target)

    def _Put_notify_py(self, origin, target_rank, target=None, tag=0):
        """Put_notify for what narma._fast does not take itself."""
        if (type(origin) is _ndarray and (target is None or type(target) is int)
                and (e := _bufs.get(id(origin))) is not None and origin.dtype is e[1]
                and origin.size == e[2]):
            rc = _npy_rma_short(_RMA_PUT_N, e[4], e[5], e[6], target_rank, target or 0, self._w,
                                tag)
            if rc:
                _raise(rc, "Win.Put_notify")
            return
        self._rma(_RMA_PUT_N, origin, target_rank, target, None, tag, "Win.Put_notify")

    def Get_notify(self, origin, target_rank, target=None, tag=0):
        self._rma(_RMA_GET_N, origin, target_rank, target, None, tag, "Win.Get_notify",
                  writable=True)

    def Accumulate_notify(self, origin, target_rank, target=None, op=MPI.SUM, tag=0):
        self._rma(_RMA_ACC_N, origin, target_rank, target, op, tag, "Win.Accumulate_notify")

    def Rput_notify(self, origin, target_rank, target=None, tag=0):
        return self._rma(_RMA_PUT_N, origin, target_rank, target, None, tag, "Win.Rput_notify",
                         Request())

    def Rget_notify(self, origin, target_rank, target=None, tag=0):
        return self._rma(_RMA_GET_N, origin, target_rank, target, None, tag, "Win.Rget_notify",
                         Request(), writable=True)

    def Get_accumulate_notify(self, origin, result, target_rank, target=None, op=MPI.SUM, tag=0):
        """Get_accumulate, then a notification <this rank, tag> at the target (which then reads
        the updated element); `result` holds the former contents on return."""
        self._getacc(_GACC_N, origin, result, target_rank, target, op, tag, None,
                     "Win.Get_accumulate_notify")

    def Rget_accumulate_notify(self, origin, result, target_rank, target=None, op=MPI.SUM,
                               tag=0):
        """Request form of Get_accumulate_notify (the request is complete on return)."""
        return self._getacc(_GACC_N, origin, result, target_rank, target, op, tag, Request(),
                            "Win.Rget_accumulate_notify")

    def Fetch_and_op_notify(self, origin, result, target_rank, target_disp=0, op=MPI.SUM, tag=0):
        """Fetch_and_op, then a notification <this rank, tag> at the target."""
        oaddr, raddr, dt = self._atomic_dt(origin, result)
        rc = _lib.npy_fetch_and_op(oaddr, raddr, dt, target_rank, target_disp, _handleof(op),
                                   self._w, 1, tag)
        if rc:
            _raise(rc, "Win.Fetch_and_op_notify")

    def Compare_and_swap_notify(self, origin, compare, result, target_rank, target_disp=0,
                                tag=0):
        """Compare_and_swap, then a notification <this rank, tag> at the target, whether or not
        it swapped (`result` tells)."""
        oaddr, raddr, dt = self._atomic_dt(origin, result)
        _, caddr, _, _ = _msg(compare, False)
        rc = _lib.npy_compare_and_swap(oaddr, caddr, raddr, dt, target_rank, target_disp,
                                       self._w, 1, tag)
        if rc:
            _raise(rc, "Win.Compare_and_swap_notify")

    def Put_notify_init(self, origin, target_rank, target=None, tag=0):
        """Persistent Put_notify: a Prequest issuing the put at each Start."""
        return self._rma(_RMA_PUT_N, origin, target_rank, target, None, tag,
                         "Win.Put_notify_init", Prequest(), 1)

    def Get_notify_init(self, origin, target_rank, target=None, tag=0):
        return self._rma(_RMA_GET_N, origin, target_rank, target, None, tag,
                         "Win.Get_notify_init", Prequest(), 1, writable=True)

    def Accumulate_notify_init(self, origin, target_rank, target=None, op=MPI.SUM, tag=0):
        return self._rma(_RMA_ACC_N, origin, target_rank, target, op, tag,
                         "Win.Accumulate_notify_init", Prequest(), 1)

    def Notify_init(self, source=ANY_SOURCE, tag=ANY_TAG, expected_count=1):
        """Persistent notification request: after Start, completes once `expected_count`
        notified accesses from `source` with `tag` have arrived."""
        r = Prequest(self)
        rc = _lib.NARMA_Notify_init(self._w, source, tag, expected_count, r._h)
        if rc:
            _raise(rc, "Win.Notify_init")
        return r

    # -- counter-indexed notifications (the MPI-5.1 draft's model; passive target only)

    def Set_num_notify(self, n, info=None):
        """Collective: give every process n counters on this window (n may differ between
        processes; 0 removes them), all set to 0."""
        rc = _lib.npy_win_set_num_notify(self._w, _h(info, MPI.INFO_NULL), n)
        if rc:
            _raise(rc, "Win.Set_num_notify")

    def Get_num_notify(self, target_rank):
        """The number of counters `target_rank` has on this window."""
        n = _ffi.new("int *")
        rc = _lib.NARMA_Win_get_num_notify(self._w, target_rank, n)
        if rc:
            _raise(rc, "Win.Get_num_notify")
        return n[0]

    def Put_notify_idx(self, origin, target_rank, target=None, notification_idx=0):
        """Put, then counter `notification_idx` of the target incremented once the data is
        there (needs a Lock or Lock_all epoch toward the target)."""
        if (type(origin) is _ndarray and (target is None or type(target) is int)
                and (e := _bufs.get(id(origin))) is not None and origin.dtype is e[1]
                and origin.size == e[2]):
            rc = _npy_rma_short(_RMA_PUT_I, e[4], e[5], e[6], target_rank, target or 0, self._w,
                                notification_idx)
            if rc:
                _raise(rc, "Win.Put_notify_idx")
            return
        self._rma(_RMA_PUT_I, origin, target_rank, target, None, notification_idx,
                  "Win.Put_notify_idx")

    def Get_notify_idx(self, origin, target_rank, target=None, notification_idx=0):
        self._rma(_RMA_GET_I, origin, target_rank, target, None, notification_idx,
                  "Win.Get_notify_idx", writable=True)

    def Accumulate_notify_idx(self, origin, target_rank, target=None, op=MPI.SUM,
                              notification_idx=0):
        self._rma(_RMA_ACC_I, origin, target_rank, target, op, notification_idx,
                  "Win.Accumulate_notify_idx")

    def Get_accumulate_notify_idx(self, origin, result, target_rank, target=None, op=MPI.SUM,
                                  notification_idx=0):
        self._getacc(_GACC_I, origin, result, target_rank, target, op, notification_idx, None,
                     "Win.Get_accumulate_notify_idx")

    def Rput_notify_idx(self, origin, target_rank, target=None, notification_idx=0):
        return self._rma(_RMA_PUT_I, origin, target_rank, target, None, notification_idx,
                         "Win.Rput_notify_idx", Request())

    def Rget_notify_idx(self, origin, target_rank, target=None, notification_idx=0):
        return self._rma(_RMA_GET_I, origin, target_rank, target, None, notification_idx,
                         "Win.Rget_notify_idx", Request(), writable=True)

    def Raccumulate_notify_idx(self, origin, target_rank, target=None, op=MPI.SUM,
                               notification_idx=0):
        return self._rma(_RMA_ACC_I, origin, target_rank, target, op, notification_idx,
                         "Win.Raccumulate_notify_idx", Request())

    def Rget_accumulate_notify_idx(self, origin, result, target_rank, target=None, op=MPI.SUM,
                                   notification_idx=0):
        return self._getacc(_GACC_I, origin, result, target_rank, target, op, notification_idx,
                            Request(), "Win.Rget_accumulate_notify_idx")

    def Get_notify_value(self, notification_idx):
        """This process's counter `notification_idx` (arrived increments counted first)."""
        v = _notify_value(self._w, notification_idx, 0)
        if v < 0:
            _raise(-v, "Win.Get_notify_value")
        return v

    def Reset_notify_value(self, notification_idx):
        """Set this process's counter to 0 and return its value before (no increment lost)."""
        v = _notify_value(self._w, notification_idx, 1)
        if v < 0:
            _raise(-v, "Win.Reset_notify_value")
        return v

    def Notify_ithreshold(self, notification_idx, expected):
        """A Request completing once this process's counter `notification_idx` reaches
        `expected` (the counter is not changed)."""
        r = Request(self)
        rc = _lib.NARMA_Win_notify_ithreshold(self._w, notification_idx, expected, r._h)
        if rc:
            _raise(rc, "Win.Notify_ithreshold")
        return r


def Progress():
    """Drive narma's progress engine once."""
    rc = _progress()
    if rc:
        _raise(rc, "Progress")


def _fast_types():
    """{NumPy type number: MPI datatype handle} of every native dtype _dtype_of maps, the table
    narma._fast's Put_notify uses (the same types the Python path would pass)."""
    types = {}
    for char in "?bBhHiIlLqQefdgFDG":
        try:
            dt = _np.dtype(char)
            types[dt.num] = _handleof(_dtype_of(_np.empty(0, dtype=dt)))
        except (TypeError, Error):
            pass
    return types


if _fast:
    _fast._setup(_raise, _fast_types())
else:
    Win.Put_notify = Win._Put_notify_py
    Win.Flush = Win._flush_py
    Request.Wait, Request.Test = Request._wait_py, Request._test_py
    Prequest.Start = Prequest._start_py
    Prequest.Wait, Prequest.Test = Prequest._wait_py, Prequest._test_py

from .halo import Halo  # noqa: E402
