"""The latency path in C (narma._fast): Win.Put_notify, Win.Flush, Request.Wait/Test and
Prequest.Start take the common case themselves and hand everything else, with the same arguments,
to the package's Python implementation. Each case checks that both paths deliver the same data,
notification and errors, and that neither keeps a stale handle (a freed window, a completed
request)."""
import os

import numpy as np
import pytest
from mpi4py import MPI

import narma

NOFAST = os.environ.get("NARMA_PYTHON_FAST") == "0"


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def test_methods_are_the_c_ones():
    if NOFAST:  # the package without narma._fast: the Python methods, through cffi
        assert narma._fast is None and narma._fast_error == "NARMA_PYTHON_FAST=0"
        assert narma.Win.Put_notify is narma.Win._Put_notify_py
        assert narma.Win.Flush is narma.Win._flush_py
        assert narma.Request.Wait is narma.Request._wait_py
        assert narma.Prequest.Start is narma.Prequest._start_py
        return
    assert narma._fast is not None, narma._fast_error  # built and loaded
    assert narma.Win.Put_notify is narma._fast.Win.Put_notify
    assert narma.Win.Flush is narma._fast.Win.Flush
    assert narma.Request.Wait is narma._fast.Request.Wait
    assert narma.Prequest.Start is narma._fast.Prequest.Start
    assert narma._fast._ntypes() >= 10  # bool, the integers, the floats and complexes


@pytest.mark.skipif(NOFAST, reason="narma._fast is off (NARMA_PYTHON_FAST=0)")
def test_routing(comm, monkeypatch):
    """What the C path takes never reaches the Python implementation; the rest always does."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(64, 1, comm=comm)
    calls = []

    def python_path(self, *args, **kwargs):
        calls.append((args, kwargs))

    monkeypatch.setattr(narma.Win, "_Put_notify_py", python_path)
    a = np.arange(3, dtype=np.int32)
    for args, kwargs in [((a, right), {}), ((a, right, 8), {}), ((a, right, 8, 4), {}),
                         ((a, right), {"target": 8, "tag": 4}), ((a, right, None), {"tag": 4}),
                         ((np.ones(2), right, 0), {"tag": 4}),
                         ((np.array([True]), right, 0), {"tag": 4})]:
        win.Put_notify(*args, **kwargs)
    assert calls == []
    others = [((a[::2], right, 0), {"tag": 4}),           # not contiguous
              ((np.ones(2, dtype=">f8"), right, 0), {}),  # byte-swapped
              (([a, MPI.INT], right, 0), {}),              # a [buf, datatype] message
              ((a, right, (8, 3, MPI.INT)), {}),            # a target triple
              ((a, right, np.int64(8)), {}),                # not an exact int
              ((a, right, 2**31), {}),                      # a displacement beyond an int
              ((bytearray(4), right, 0), {}),               # not an ndarray
              ((np.asfortranarray(np.ones((2, 2))), right, 0), {})]
    for args, kwargs in others:
        win.Put_notify(*args, **kwargs)
    assert len(calls) == len(others)
    assert calls[0][1] == {"tag": 4} and calls[3][0][2] == (8, 3, MPI.INT)
    monkeypatch.undo()
    comm.Barrier()
    # drain what the C path sent: 7 notifications from the left neighbour
    r = win.Notify_init(left, narma.ANY_TAG, 7)
    r.Start()
    r.Wait()
    r.Free()
    comm.Barrier()
    win.Free()


# (what the origin passes, the bytes that must land at displacement 8 of the target)
def _cases():
    f = np.arange(6, dtype=np.float64) + 0.5
    i32 = np.arange(5, dtype=np.int32) - 2
    grid = np.arange(6, dtype=np.int64).reshape(2, 3)
    fortran = np.asfortranarray(grid)
    return [
        ("float64 array", lambda: ((f,), {}), f.tobytes()),
        ("int32", lambda: ((i32,), {}), i32.tobytes()),
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
    with pytest.raises(narma.Error) as e:  # beyond an int: the Python path, narma refuses it
        win.Put_notify(a, right, 2**31, tag=1)
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
