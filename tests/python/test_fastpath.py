"""The latency path in C (narma._fast): Win.Put_notify, Win.Flush, Request.Wait/Test and
Prequest.Start take the common case themselves and hand everything else, with the same arguments,
to the package's Python implementation. Each case checks that both paths deliver the same data,
notification and errors, and that neither keeps a stale handle (a freed window, a completed
request)."""
import numpy as np
import pytest
from mpi4py import MPI

import narma


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def test_methods_are_the_c_ones():
    assert narma.Win.Put_notify is narma._fast.Win.Put_notify
    assert narma.Win.Flush is narma._fast.Win.Flush
    assert narma.Request.Wait is narma._fast.Request.Wait
    assert narma.Prequest.Start is narma._fast.Prequest.Start


# (what the origin passes, the bytes that must land at displacement 8 of the target)
def _cases():
    f = np.arange(6, dtype=np.float64) + 0.5
    i32 = np.arange(5, dtype=np.int32) - 2
    grid = np.arange(6, dtype=np.int64).reshape(2, 3)
    fortran = np.asfortranarray(grid)
    return [
        ("float64 array", lambda: ((f,), {}), f.tobytes()),
        ("int32, target and tag by keyword", lambda: ((i32,), {}), i32.tobytes()),
        ("2-d C array", lambda: ((grid,), {}), grid.tobytes()),
        ("Fortran-order array (Python path)", lambda: ((fortran,), {}),
         fortran.tobytes(order="A")),
        ("[array, MPI.INT] (Python path)", lambda: (([i32, MPI.INT],), {}), i32.tobytes()),
        ("bool", lambda: ((np.array([True, False, True]),), {}),
         np.array([True, False, True]).tobytes()),
        ("0 elements", lambda: ((np.zeros(0),), {}), b""),
    ]


@pytest.mark.parametrize("name,make,expect", _cases(), ids=[c[0] for c in _cases()])
@pytest.mark.parametrize("target_form", ["int", "keyword", "numpy int (Python path)",
                                         "tuple (Python path)"])
def test_put_notify_forms(comm, name, make, expect, target_form):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(128, 1, comm=comm)
    mem = win.tomemory(np.uint8)
    mem[:] = 0xEE
    req = win.Notify_init(left, 11)
    req.Start()
    comm.Barrier()
    (origin,), _ = make()
    if target_form == "int":
        win.Put_notify(origin, right, 8, 11)
    elif target_form == "keyword":
        win.Put_notify(origin, right, target=8, tag=11)
    elif target_form == "numpy int (Python path)":
        win.Put_notify(origin, right, np.int64(8), tag=11)
    else:
        n = np.asarray(origin[0] if isinstance(origin, list) else origin).size
        if n == 0:
            win.Put_notify(origin, right, 8, tag=11)
        else:
            dt = origin[1] if isinstance(origin, list) else \
                narma._dtype_of(np.asarray(origin))
            win.Put_notify(origin, right, (8, n, dt), tag=11)
    win.Flush(right)
    st = narma.Status()
    req.Wait(st)
    assert st.source == left and st.tag == 11 and st.count == len(expect)
    assert mem[8:8 + len(expect)].tobytes() == expect
    assert (mem[:8] == 0xEE).all() and (mem[8 + len(expect):] == 0xEE).all()
    comm.Barrier()
    req.Free()
    win.Free()


def test_put_notify_refusals(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(64, 1, comm=comm)
    a = np.ones(2)
    with pytest.raises(narma.Error) as e:
        win.Put_notify(a, size, 0, tag=1)
    assert e.value.error_class == narma.ERR_RANK
    with pytest.raises(narma.Error) as e:
        win.Put_notify(a, right, 0, tag=-3)
    assert e.value.error_class == narma.ERR_TAG
    with pytest.raises(narma.Error) as e:
        win.Put_notify(a, right, 60, tag=1)  # 16 bytes at 60 of 64
    assert e.value.error_class == narma.ERR_DISP
    with pytest.raises(narma.Error) as e:  # not contiguous: the Python path refuses it
        win.Put_notify(np.ones(8)[::2], right, 0, tag=1)
    assert e.value.error_class == narma.ERR_ARG
    with pytest.raises(narma.Error) as e:  # byte-swapped: no predefined MPI type
        win.Put_notify(np.ones(2, dtype=">f8"), right, 0, tag=1)
    assert e.value.error_class == narma.ERR_TYPE
    with pytest.raises(TypeError):
        win.Put_notify(a, right, 0, tagg=1)
    with pytest.raises(TypeError):
        win.Put_notify(a, right, 0, 1, target=0)  # target twice
    with pytest.raises(TypeError):
        win.Put_notify(a)
    with pytest.raises(narma.Error) as e:
        win.Flush(size)
    assert e.value.error_class == narma.ERR_RANK
    with pytest.raises(OverflowError):
        win.Flush(2**40)
    with pytest.raises(OverflowError):
        win.Put_notify(a, 2**40, 0, tag=1)
    win.Put_notify(a, MPI.PROC_NULL, 0, tag=1)  # PROC_NULL: nothing, no error
    win.Flush(MPI.PROC_NULL)
    comm.Barrier()
    win.Free()
    # A freed window: the handle narma nulled is the one the C path reads.
    with pytest.raises(narma.Error) as e:
        win.Put_notify(a, right, 0, tag=1)
    assert e.value.error_class == narma.ERR_WIN
    with pytest.raises(narma.Error) as e:
        win.Flush(right)
    assert e.value.error_class == narma.ERR_WIN


def test_requests_wait_test(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(64, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = 0
    comm.Barrier()  # zeroed before any neighbour writes
    win.Lock_all()
    # A request-based notified put: complete after Wait, which drops what it kept alive.
    src = np.full(2, rank + 0.5)
    r = win.Rput_notify(src, right, 1, tag=3)
    assert r._keep is not None
    assert r.Wait() is True
    assert not r and r._keep is None
    assert r.Test() is True  # an inactive (null) request is complete
    # Persistent notification request: Start/Test/Wait in C, with a status through Python.
    n = win.Notify_init(left, 3)
    n.Start()
    st = narma.Status()
    while not n.Test(st):
        narma.Progress()
    assert st.source == left and st.tag == 3 and st.count == 16
    assert np.array_equal(mem[1:3], np.full(2, left + 0.5)), (rank, left, mem.copy())
    comm.Barrier()
    p = win.Put_notify_init(src, right, 4, tag=5)
    n2 = win.Notify_init(left, 5)
    for it in range(3):
        src[:] = rank + it
        n2.Start()
        p.Start()
        assert p.Wait() is True
        assert n2.Wait() is True
        assert np.array_equal(mem[4:6], np.full(2, left + it))
        comm.Barrier()
    assert p and n2  # persistent requests stay
    with pytest.raises(TypeError):
        n2.Wait(status=None, extra=1)
    n2.Start()
    with pytest.raises(narma.Error) as e:
        n2.Start()  # already active
    assert e.value.error_class == narma.ERR_REQUEST
    win.Put_notify(np.zeros(1), right, 7, tag=5)
    win.Flush(right)
    assert n2.Wait(narma.Status()) is True
    comm.Barrier()
    win.Unlock_all()
    for q in (n, p, n2):
        q.Free()
    win.Free()
