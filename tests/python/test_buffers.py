"""The package remembers each NumPy array's address, count and MPI type (so a call on the same
array skips the conversion): what it remembers must never outlive the array or survive a change
of what the array is. Arrays made and dropped in a loop (ids reused), an array whose dtype is
reassigned, one resized (NumPy refuses in place), one made read-only after a Get into it."""
import numpy as np
import pytest
from mpi4py import MPI

import narma


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


@pytest.fixture
def win(comm):
    w = narma.Win.Allocate(8 * 64, 1, comm=comm)
    w.tomemory()[:] = 0
    comm.Barrier()
    w.Lock_all()
    yield w
    w.Unlock_all()
    comm.Barrier()
    w.Free()


def test_arrays_made_per_call(comm, win):
    rank, size, right, left = ring(comm)
    out = np.zeros(4)
    for i in range(200):  # new arrays, often at an id a dead one had
        src = np.full(4, float(i * size + rank))
        win.Put_notify(src, right, 8 * (i % 8), tag=1)
        win.Flush(right)
        win.Get(out, right, 8 * (i % 8))
        assert np.array_equal(out, src)
        del src
    assert len(narma._bufs) < 50  # entries die with their arrays


def test_dtype_reassigned(comm, win):
    rank, size, right, left = ring(comm)
    a = np.arange(4, dtype=np.float64) + rank
    win.Put(a, right, 0)
    a.dtype = np.int32  # same memory, now 8 int32: count and type change
    a[:] = 7
    win.Put(a, right, 64)
    back = np.zeros(8, dtype=np.int32)
    win.Flush(right)
    win.Get(back, right, 64)
    assert list(back) == [7] * 8
    back = np.zeros(4)
    win.Get(back, right, 0)
    assert np.array_equal(back, np.arange(4) + rank)


def test_resized_in_place(comm, win):
    """NumPy refuses to resize an array that has weak references, so a remembered array's data
    cannot move under the package; np.resize (a new array) works as always."""
    rank, size, right, left = ring(comm)
    a = np.full(2, 1.0 + rank)
    win.Put(a, right, 0)
    with pytest.raises(ValueError):
        a.resize(40, refcheck=False)
    a = np.resize(a, 40)
    a[:] = 3.0 + rank
    win.Put(a, right, 0)
    win.Flush(right)
    back = np.zeros(40)
    win.Get(back, right, 0)
    assert np.array_equal(back, np.full(40, 3.0 + rank))


def test_read_only_after_get(comm, win):
    rank, size, right, left = ring(comm)
    a = np.zeros(2)
    win.Get(a, right, 0)
    a.flags.writeable = False
    with pytest.raises(narma.Error) as e:
        win.Get(a, right, 0)
    assert e.value.error_class == narma.ERR_ARG
    win.Put(a, right, 0)  # reading it is fine


def test_message_forms_share_nothing(comm, win):
    """[buf, type] and [buf, count, type] on a remembered array use their own count and type."""
    rank, size, right, left = ring(comm)
    a = np.arange(8, dtype=np.int64) + 10 * rank
    win.Put(a, right, 0)
    win.Put([a, 2, MPI.INT64_T], right, 128)
    win.Put([a, MPI.BYTE], right, 256)
    win.Flush(right)
    back = np.zeros(8, dtype=np.int64)
    win.Get(back, right, 128)
    assert list(back[:2]) == [10 * rank, 10 * rank + 1] and list(back[2:]) == [0] * 6
    win.Get(back, right, 256)
    assert np.array_equal(back, a)
