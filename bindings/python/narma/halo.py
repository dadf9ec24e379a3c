"""Halo exchange plans over NumPy fields (narma's narma_halo module, include/narma/narma_halo.h).

    cart = MPI.COMM_WORLD.Create_cart([npy, npx], periods=[True, True])
    plan = narma.Halo(cart, (nz, ny, nx), halo=(2, 2), corners=True, strategy="notify")
    f = plan.field()          # zeros of shape (nz, ny + 2*hy, nx + 2*hx) (layout "zyx")
    f[:, hy:-hy, hx:-hx] = ...
    plan.exchange(f)          # or plan.start(f); ...; plan.finish()
    plan.Free()
"""

from mpi4py import MPI
import numpy as _np

from ._narma import ffi as _ffi, lib as _lib

EW, NS, BOTH = 1, 2, 3
LAYOUT_ZYX, LAYOUT_XYZ = 0, 1
STRATEGIES = ("default", "p2p", "fence", "pscw", "pscw_nb", "lock", "dynamic", "notify",
              "notify_fields")


def strategy_from_name(name):
    s = _ffi.new("int *")
    rc = _lib.npy_halo_strategy_from_name(name.encode(), s)
    if rc:
        from . import Error

        raise Error(rc, "strategy %r" % name)
    return s[0]


def strategy_name(strategy):
    return _ffi.string(_lib.npy_halo_strategy_name(int(strategy))).decode()


class Halo:
    """A halo-exchange plan (collective creation and Free) over a 2-D Cartesian communicator.

    shape: interior (nz, ny, nx); halo: (halo_y, halo_x) or one int; dtype: a NumPy type with an
    MPI equivalent; layout: "zyx" (C array [nz][ny+2hy][nx+2hx]) or "xyz" ([nx+2hx][ny+2hy][nz]);
    directions: narma.halo.EW, NS or BOTH; strategy: a name of STRATEGIES or its number.
    """

    def __init__(self, cart, shape, halo=2, dtype=_np.float64, nfields=1, corners=False,
                 directions=BOTH, layout="zyx", strategy="default"):
        from . import Error, _dtype_of, _handleof

        nz, ny, nx = (int(v) for v in shape)
        hy, hx = (halo, halo) if isinstance(halo, int) else (int(halo[0]), int(halo[1]))
        self.dtype = _np.dtype(dtype)
        self.layout = {"zyx": LAYOUT_ZYX, "xyz": LAYOUT_XYZ}.get(layout, layout)
        if self.layout not in (LAYOUT_ZYX, LAYOUT_XYZ):
            raise Error(_lib.NARMA_ERR_ARG, "Halo: layout must be 'zyx' or 'xyz'")
        if isinstance(strategy, str):
            strategy = strategy_from_name(strategy)
        self.shape = (nz, ny, nx)
        self.halo = (hy, hx)
        self.nfields = int(nfields)
        if self.layout == LAYOUT_ZYX:
            self.field_shape = (nz, ny + 2 * hy, nx + 2 * hx)
        else:
            self.field_shape = (nx + 2 * hx, ny + 2 * hy, nz)
        dt = _dtype_of(_np.zeros(0, self.dtype))
        self._plan = _ffi.new("NARMA_Halo_plan *")
        self._fields = _ffi.new("void *[]", max(self.nfields, 1))
        self._keep = None
        rc = _lib.npy_halo_plan_create(_handleof(cart), nz, ny, nx, hx, hy, _handleof(dt),
                                       self.nfields, int(bool(corners)), int(directions),
                                       self.layout, int(strategy), 0, self._plan)
        if rc:
            raise Error(rc, "Halo")

    @property
    def strategy(self):
        """Name of the strategy the plan uses (after resolving "default")."""
        return strategy_name(_lib.npy_halo_plan_strategy(self._plan[0]))

    def field(self):
        """A zeroed field array of the plan's layout, shape and dtype."""
        return _np.zeros(self.field_shape, dtype=self.dtype)

    def interior(self, f):
        """The interior of field array f (a view)."""
        hy, hx = self.halo
        if self.layout == LAYOUT_ZYX:
            return f[:, hy:f.shape[1] - hy, hx:f.shape[2] - hx]
        return f[hx:f.shape[0] - hx, hy:f.shape[1] - hy, :]

    def _set_fields(self, fields):
        from . import Error

        if isinstance(fields, _np.ndarray):
            fields = [fields]
        fields = list(fields)
        if len(fields) != self.nfields:
            raise Error(_lib.NARMA_ERR_ARG, "Halo: %d fields given, the plan has %d"
                        % (len(fields), self.nfields))
        keep = []
        for i, f in enumerate(fields):
            if not isinstance(f, _np.ndarray) or f.dtype != self.dtype:
                raise Error(_lib.NARMA_ERR_TYPE, "Halo: field %d is not a %s NumPy array"
                            % (i, self.dtype))
            if f.shape != self.field_shape or not f.flags.c_contiguous or not f.flags.writeable:
                raise Error(_lib.NARMA_HALO_ERR_SIZE,
                            "Halo: field %d must be a writable C-contiguous array of shape %s"
                            % (i, self.field_shape))
            p = _ffi.from_buffer(f, require_writable=True)
            keep.append((f, p))
            self._fields[i] = p
        return keep

    def exchange(self, fields):
        """Exchange the halos of `fields` (one array or a list of nfields arrays)."""
        from . import Error

        keep = self._set_fields(fields)
        rc = _lib.NARMA_Halo_exchange(self._plan[0], self._fields)
        del keep
        if rc:
            raise Error(rc, "Halo.exchange")

    def start(self, fields):
        from . import Error

        keep = self._set_fields(fields)
        rc = _lib.NARMA_Halo_start(self._plan[0], self._fields)
        if rc:
            raise Error(rc, "Halo.start")
        self._keep = keep

    def finish(self):
        from . import Error

        rc = _lib.NARMA_Halo_finish(self._plan[0])
        if rc:
            raise Error(rc, "Halo.finish")
        self._keep = None

    def Free(self):
        from . import Error

        rc = _lib.NARMA_Halo_plan_free(self._plan)
        if rc:
            raise Error(rc, "Halo.Free")
        self._keep = None
