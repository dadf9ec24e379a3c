"""Bad input raises narma.Error carrying the right error class and narma's message; nothing
crashes or hangs."""
import numpy as np
import pytest
from mpi4py import MPI

import narma


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def raises(cls, fn, *args, **kw):
    with pytest.raises(narma.Error) as e:
        fn(*args, **kw)
    assert e.value.error_class == cls, str(e.value)
    assert e.value.Get_error_class() == cls
    assert narma.Get_error_string(cls) in str(e.value)
    return e.value


def test_error_classes(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    win.Lock_all()
    x = np.zeros(1)
    raises(narma.ERR_RANK, win.Put, x, size)          # rank outside the group
    raises(narma.ERR_RANK, win.Put_notify, x, -5, 0, tag=1)
    raises(narma.ERR_TAG, win.Put_notify, x, right, 0, tag=-3)
    raises(narma.ERR_TAG, win.Put_notify, x, right, 0, tag=narma.TAG_UB + 1)
    raises(narma.ERR_DISP, win.Put, np.zeros(2), right, 3)  # past the 4-element window
    raises(narma.ERR_COUNT, win.Put, [x, -1, MPI.DOUBLE], right)
    raises(narma.ERR_TAG, win.Notify_init, right, -7, 1)
    e = raises(narma.ERR_TYPE, win.Put, x, right, (0, 1, MPI.INT))  # signature mismatch
    assert isinstance(e, RuntimeError)
    win.Unlock_all()
    # RMA outside any epoch
    raises(narma.ERR_RMA_SYNC, win.Put, x, right)
    raises(narma.ERR_RMA_SYNC, win.Unlock, right)
    # Free with a notification request still alive
    req = win.Notify_init(left, 1)
    raises(narma.ERR_PENDING, win.Free)
    req.Free()
    raises(narma.ERR_REQUEST, req.Start)  # freed (null) request
    comm.Barrier()
    win.Free()
    raises(narma.ERR_WIN, win.Fence)  # freed window


def test_bad_buffers(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    win.Lock_all()
    ro = np.zeros(2)
    ro.flags.writeable = False
    raises(narma.ERR_ARG, win.Get, ro, right)                 # Get into a read-only array
    raises(narma.ERR_ARG, win.Put, np.zeros((4, 4))[:, 0], right)  # not contiguous
    raises(narma.ERR_TYPE, win.Put, [np.zeros(1), "double"], right)
    raises(narma.ERR_TYPE, win.Put, np.zeros(1, dtype=object), right)
    win.Unlock_all()
    comm.Barrier()
    win.Free()


def test_dynamic_errors(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Create_dynamic(comm=comm)
    a = np.zeros(4)
    win.Attach(a)
    raises(narma.ERR_ATTACH, win.Detach, np.zeros(4))  # never attached
    comm.Barrier()
    win.Lock_all()
    # address 8 at the target is in no attached region
    raises(narma.ERR_DISP, win.Put, np.zeros(1), right, 8)
    win.Unlock_all()
    win.Detach(a)
    comm.Barrier()
    win.Free()


def test_halo_errors(comm):
    size = comm.Get_size()
    raises(narma.HALO_ERR_TOPOLOGY, narma.Halo, comm, (1, 4, 4))  # not Cartesian
    cart = comm.Create_cart([1, size], periods=[True, True])
    raises(narma.HALO_ERR_DEPTH, narma.Halo, cart, (1, 4, 4), halo=5)
    raises(narma.HALO_ERR_STRATEGY, narma.Halo, cart, (1, 4, 4), strategy="carrier-pigeon")
    plan = narma.Halo(cart, (1, 4, 4), halo=1)
    raises(narma.HALO_ERR_SIZE, plan.exchange, np.zeros((1, 6, 5)))
    raises(narma.ERR_TYPE, plan.exchange, np.zeros((1, 6, 6), dtype=np.float32))
    raises(narma.HALO_ERR_STATE, plan.finish)
    plan.Free()
    cart.Free()
