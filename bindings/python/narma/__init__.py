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
displacement, or ``(disp, count, datatype)``. Every error raises :class:`narma.Error`, whose
``error_class`` is narma's error class (``narma.ERR_ARG`` ...). Blocking waits release the GIL.
Thread safety is narma's (MPI_THREAD_FUNNELED): one thread at a time calls narma.
"""

from mpi4py import MPI
import numpy as _np

from ._narma import ffi as _ffi, lib as _lib

__all__ = ["Win", "Request", "Prequest", "Status", "Error", "Halo"]

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
LOCK_SHARED = MPI.LOCK_SHARED
LOCK_EXCLUSIVE = MPI.LOCK_EXCLUSIVE
WIN_FLAVOR_CREATE = MPI.WIN_FLAVOR_CREATE
WIN_FLAVOR_ALLOCATE = MPI.WIN_FLAVOR_ALLOCATE
WIN_FLAVOR_DYNAMIC = MPI.WIN_FLAVOR_DYNAMIC
WIN_SEPARATE = MPI.WIN_SEPARATE
WIN_UNIFIED = MPI.WIN_UNIFIED

SUCCESS = _lib.NARMA_SUCCESS
_ERRS = ["ARG", "RANK", "TAG", "COUNT", "TYPE", "OP", "WIN", "DISP", "RMA_SYNC", "RMA_CONFLICT",
         "REQUEST", "NO_MEM", "ATTACH", "KEYVAL", "NOT_INIT", "PENDING", "UNSUPPORTED", "MPI",
         "INTERN", "LASTCODE"]
for _e in _ERRS:
    globals()["ERR_" + _e] = getattr(_lib, "NARMA_ERR_" + _e)
for _e in ["TOPOLOGY", "SHAPE", "DEPTH", "SIZE", "STRATEGY", "STATE", "LASTCODE"]:
    globals()["HALO_ERR_" + _e] = getattr(_lib, "NARMA_HALO_ERR_" + _e)
del _e


def Get_version():
    """narma's version string."""
    return _ffi.string(_lib.NARMA_Get_version()).decode()


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


def _raise(rc, where):
    raise Error(rc, where)


def Get_error_string(errorcode):
    """Text of a narma (or halo) error class."""
    return _ffi.string(_lib.NARMA_Halo_error_string(int(errorcode))).decode()


# ---- handles and buffers ---------------------------------------------------------------------

try:
    _handleof = MPI._handleof
except AttributeError:  # pragma: no cover - very old mpi4py
    def _handleof(obj):
        return obj.handle

_NULLH = {}


def _h(obj, default):
    """C handle (as an int) of an mpi4py object, or of `default` when obj is None."""
    return _handleof(default if obj is None else obj)


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


def _msg(spec, writable):
    """(keepalive, pointer, count, datatype handle) of a buffer specification."""
    if isinstance(spec, (list, tuple)):
        if len(spec) == 2:
            buf, dtype = spec
            count = None
        elif len(spec) == 3:
            buf, count, dtype = spec
        else:
            raise Error(_lib.NARMA_ERR_ARG, "a message is buf, [buf, datatype] or "
                                             "[buf, count, datatype]")
        arr = _as_array(buf)
        if not isinstance(dtype, MPI.Datatype):
            raise Error(_lib.NARMA_ERR_TYPE, "expected an mpi4py Datatype, got %r" % (dtype,))
        if count is None:
            size = dtype.Get_size()
            count = arr.nbytes // size if size else 0
        dth = _handleof(dtype)
    elif spec is None:
        return None, _ffi.NULL, 0, _handleof(MPI.BYTE)
    else:
        arr = _as_array(spec)
        count = arr.size
        dth = _handleof(_dtype_of(arr))
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        raise Error(_lib.NARMA_ERR_ARG, "buffer must be contiguous")
    if writable and not arr.flags.writeable:
        raise Error(_lib.NARMA_ERR_ARG, "buffer must be writable")
    try:
        ptr = _ffi.from_buffer(arr, require_writable=writable)
    except TypeError:
        ptr = _ffi.cast("void *", arr.ctypes.data)
    return arr, ptr, int(count), dth


def _target(target, ocount, odt):
    """(disp, count, datatype handle) of an mpi4py target specification."""
    if target is None:
        return 0, ocount, odt
    if isinstance(target, (list, tuple)):
        disp = target[0] if len(target) > 0 else 0
        count = target[1] if len(target) > 1 else ocount
        dt = _handleof(target[2]) if len(target) > 2 else odt
        return int(disp), int(count), dt
    return int(target), ocount, odt


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
    return _ffi.NULL if status is None else status._s


# ---- requests --------------------------------------------------------------------------------

class Request:
    """A narma request (request-based RMA, nonblocking synchronisation, notification)."""

    __slots__ = ("_h", "_keep", "__weakref__")

    def __init__(self, keep=None):
        self._h = _ffi.new("NARMA_Request *")
        self._keep = keep  # buffers and windows the operation uses, alive until completion

    def __bool__(self):
        return self._h[0] != _ffi.NULL

    def Wait(self, status=None):
        """Wait for completion (the GIL is released while waiting)."""
        rc = _lib.npy_wait(self._h, _st(status))
        if rc:
            _raise(rc, "Request.Wait")
        if self._h[0] == _ffi.NULL:
            self._keep = None
        return True

    def Test(self, status=None):
        flag = _ffi.new("int *")
        rc = _lib.npy_test(self._h, flag, _st(status))
        if rc:
            _raise(rc, "Request.Test")
        if flag[0] and self._h[0] == _ffi.NULL:
            self._keep = None
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
            if arr[i] == _ffi.NULL:
                r._keep = None

    @staticmethod
    def _statuses(statuses, n):
        if statuses is None:
            return _ffi.NULL, None
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
            if self._h[0] != _ffi.NULL:
                _lib.NARMA_Request_free(self._h)
        except Exception:
            pass


class Prequest(Request):
    """A persistent request: notification (Win.Notify_init) or persistent notified access
    (Win.Put_notify_init ...). Start it, complete it with Wait/Test, start it again."""

    __slots__ = ()

    def Start(self):
        rc = _lib.NARMA_Start(self._h)
        if rc:
            _raise(rc, "Prequest.Start")

    def Wait(self, status=None):
        rc = _lib.npy_wait(self._h, _st(status))
        if rc:
            _raise(rc, "Prequest.Wait")
        return True

    def Test(self, status=None):
        flag = _ffi.new("int *")
        rc = _lib.npy_test(self._h, flag, _st(status))
        if rc:
            _raise(rc, "Prequest.Test")
        return bool(flag[0])

    @staticmethod
    def Startall(requests):
        n, arr = Request._array(requests)
        rc = _lib.NARMA_Startall(n, arr)
        if rc:
            _raise(rc, "Prequest.Startall")


# ---- windows ---------------------------------------------------------------------------------

_RMA_PUT, _RMA_GET, _RMA_ACC, _RMA_PUT_N, _RMA_GET_N, _RMA_ACC_N = range(6)


class Win:
    """A narma window (mpi4py.MPI.Win's names and argument conventions)."""

    __slots__ = ("_w", "_wp", "_mem", "_attached", "__weakref__")

    def __init__(self):
        self._wp = _ffi.new("NARMA_Win *")
        self._w = _ffi.NULL
        self._mem = None
        self._attached = {}

    def _set(self, rc, where):
        if rc:
            _raise(rc, where)
        self._w = self._wp[0]

    # -- creation and destruction

    @classmethod
    def Create(cls, memory, disp_unit=1, info=None, comm=None):
        """Window over existing memory (a NumPy array or buffer, or None / MPI.BOTTOM for none).
        The array is kept alive as long as the window."""
        w = cls()
        if memory is None or memory is MPI.BOTTOM:
            arr, ptr, size = None, _ffi.NULL, 0
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
        """Collective: free the window (narma.ERR_PENDING while epochs or requests remain)."""
        rc = _lib.NARMA_Win_free(self._wp)
        if rc:
            _raise(rc, "Win.Free")
        self._w = _ffi.NULL
        self._mem = None
        self._attached = {}

    def __bool__(self):
        return self._w != _ffi.NULL

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

    def tomemory(self, dtype=_np.uint8):
        """This rank's window memory (Allocate, Create) as a NumPy array of `dtype` (no copy)."""
        if self._mem is None:
            raise Error(_lib.NARMA_ERR_WIN, "Win.tomemory: no memory (dynamic or freed window)")
        if self._mem[0] is not None:
            return self._mem[0].view(dtype).reshape(-1)
        ptr, size = self._mem[1], self._mem[2]
        if size == 0:
            return _np.zeros(0, dtype=dtype)
        return _np.frombuffer(_ffi.buffer(ptr, size), dtype=dtype)

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

    def Flush(self, rank):
        rc = _lib.NARMA_Win_flush(rank, self._w)
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
        keep, ptr, count, odt = _msg(origin, writable)
        disp, tcount, tdt = _target(target, count, odt)
        rp = _ffi.NULL
        if req is not None:
            req._keep = (keep, ptr, self)
            rp = req._h
        rc = _lib.npy_rma(kind, ptr, count, odt, target_rank, disp, tcount, tdt,
                          _handleof(op) if op is not None else 0, self._w, tag, rp, persistent)
        if rc:
            _raise(rc, where)
        return req

    def Put(self, origin, target_rank, target=None):
        self._rma(_RMA_PUT, origin, target_rank, target, None, 0, "Win.Put")

    def Get(self, origin, target_rank, target=None):
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

    def _getacc(self, origin, result, target_rank, target, op, req, where):
        okeep, optr, ocount, odt = _msg(origin, False)
        rkeep, rptr, rcount, rdt = _msg(result, True)
        disp, tcount, tdt = _target(target, rcount, rdt)
        rp = _ffi.NULL
        if req is not None:
            req._keep = (okeep, optr, rkeep, rptr, self)
            rp = req._h
        rc = _lib.npy_get_accumulate(optr, ocount, odt, rptr, rcount, rdt, target_rank, disp,
                                     tcount, tdt, _handleof(op), self._w, rp)
        if rc:
            _raise(rc, where)
        return req

    def Get_accumulate(self, origin, result, target_rank, target=None, op=MPI.SUM):
        self._getacc(origin, result, target_rank, target, op, None, "Win.Get_accumulate")

    def Rget_accumulate(self, origin, result, target_rank, target=None, op=MPI.SUM):
        return self._getacc(origin, result, target_rank, target, op, Request(),
                            "Win.Rget_accumulate")

    def Fetch_and_op(self, origin, result, target_rank, target_disp=0, op=MPI.SUM):
        _, optr, _, dt = _msg(origin, False)
        _, rptr, _, _ = _msg(result, True)
        rc = _lib.npy_fetch_and_op(optr, rptr, dt, target_rank, target_disp, _handleof(op),
                                   self._w)
        if rc:
            _raise(rc, "Win.Fetch_and_op")

    def Compare_and_swap(self, origin, compare, result, target_rank, target_disp=0):
        _, optr, _, dt = _msg(origin, False)
        _, cptr, _, _ = _msg(compare, False)
        _, rptr, _, _ = _msg(result, True)
        rc = _lib.npy_compare_and_swap(optr, cptr, rptr, dt, target_rank, target_disp, self._w)
        if rc:
            _raise(rc, "Win.Compare_and_swap")

    # -- notified access

    def Put_notify(self, origin, target_rank, target=None, tag=0):
        """Put, then a notification <this rank, tag> at the target (complete on return)."""
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


def Progress():
    """Drive narma's progress engine once."""
    rc = _lib.NARMA_Progress()
    if rc:
        _raise(rc, "Progress")


from .halo import Halo  # noqa: E402
