"""Windows (Allocate, Create over a NumPy array, dynamic) and every RMA data call, with mpi4py's
buffer conventions (plain arrays, [buf, datatype], [buf, count, datatype]) and target specs."""
import numpy as np
import pytest
from mpi4py import MPI

import narma


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


N = 16


def make_win(kind, comm, n=N, dtype=np.float64):
    """A window of `kind` over n elements; returns (win, local array, target base disp of right)."""
    item = np.dtype(dtype).itemsize
    if kind == "allocate":
        win = narma.Win.Allocate(n * item, item, comm=comm)
        mem = win.tomemory(dtype)
        return win, mem, None
    if kind == "create":
        mem = np.zeros(n, dtype=dtype)
        win = narma.Win.Create(mem, item, comm=comm)
        return win, mem, None
    mem = np.zeros(n, dtype=dtype)
    win = narma.Win.Create_dynamic(comm=comm)
    win.Attach(mem)
    return win, mem, comm.allgather(MPI.Get_address(mem))


def disp_of(bases, rank, k):
    """Target displacement of element k at rank: elements for allocate/create (disp_unit = item
    size), bytes from the attached array's address for a dynamic window (disp_unit 1)."""
    return k if bases is None else bases[rank] + 8 * k


@pytest.mark.parametrize("kind", ["allocate", "create", "dynamic"])
def test_put_get_fence(comm, kind):
    rank, size, right, left = ring(comm)
    win, mem, bases = make_win(kind, comm)
    mem[:] = -1
    comm.Barrier()
    win.Fence()
    src = np.arange(N, dtype=np.float64) + 100 * rank
    win.Put(src, right, disp_of(bases, right, 0))
    win.Fence()
    assert np.array_equal(mem, np.arange(N) + 100 * left)
    out = np.zeros(4)
    win.Get([out, MPI.DOUBLE], right, (disp_of(bases, right, 2), 4, MPI.DOUBLE))
    win.Fence()
    assert np.array_equal(out, np.arange(2, 6) + 100 * rank)  # right holds what I put
    flavor = win.flavor
    assert flavor == {"allocate": narma.WIN_FLAVOR_ALLOCATE, "create": narma.WIN_FLAVOR_CREATE,
                      "dynamic": narma.WIN_FLAVOR_DYNAMIC}[kind]
    if kind != "dynamic":
        assert win.size == N * 8 and win.disp_unit == 8
        win.Free()
    else:
        win.Detach(mem)
        win.Free()
    assert not win


def test_message_forms(comm):
    rank, size, right, left = ring(comm)
    win, mem, _ = make_win("allocate", comm, 32)
    mem[:] = 0
    win.Fence()
    a = np.full(8, rank + 1.0)
    win.Put([a, 3, MPI.DOUBLE], right, 0)           # [buf, count, datatype]
    win.Put([a, MPI.DOUBLE], right, (8, 8, MPI.DOUBLE))  # [buf, datatype] with a target spec
    win.Put(a[:2], right, [20])                     # plain array, displacement only
    win.Fence()
    want = np.zeros(32)
    want[0:3] = left + 1
    want[8:16] = left + 1
    want[20:22] = left + 1
    assert np.array_equal(mem, want)
    win.Fence()  # everyone has checked before element 30 changes
    # Byte-typed origin into a double target: the signatures must agree (8 bytes = 1 double)
    b = np.frombuffer(np.float64(7.5).tobytes(), dtype=np.uint8).copy()
    win.Put([b, 8, MPI.BYTE], right, (30, 8, MPI.BYTE))
    win.Fence()
    assert mem[30] == 7.5
    win.Free()


def test_accumulate_family(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    mem = win.tomemory(np.int64)
    mem[:] = 0
    comm.Barrier()
    win.Fence()
    win.Accumulate(np.array([1, 2, 3, 4], dtype=np.int64), 0, op=MPI.SUM)
    win.Fence()
    if rank == 0:
        assert list(mem) == [size, 2 * size, 3 * size, 4 * size]
    win.Fence()
    # Get_accumulate: everyone adds 1 to element 0 of rank 0 and gets the old value
    res = np.zeros(1, dtype=np.int64)
    win.Lock(0)
    win.Get_accumulate(np.ones(1, dtype=np.int64), res, 0, 0, MPI.SUM)
    win.Unlock(0)
    olds = comm.allgather(int(res[0]))
    assert sorted(olds) == list(range(size, 2 * size))
    # Fetch_and_op on element 1, Compare_and_swap on element 2 (one rank wins)
    win.Lock_all()
    fres = np.zeros(1, dtype=np.int64)
    win.Fetch_and_op(np.array([10], dtype=np.int64), fres, 0, 1, MPI.SUM)
    win.Flush(0)
    cres = np.zeros(1, dtype=np.int64)
    win.Compare_and_swap(np.array([1000 + rank], dtype=np.int64),
                         np.array([3 * size], dtype=np.int64), cres, 0, 2)
    win.Flush(0)
    win.Unlock_all()
    comm.Barrier()
    winners = comm.allgather(int(cres[0]) == 3 * size)
    assert sum(winners) == 1
    fetched = sorted(comm.allgather(int(fres[0])))
    assert fetched == [2 * size + 10 * k for k in range(size)]
    win.Fence()
    if rank == 0:
        assert mem[1] == 2 * size + 10 * size
        assert mem[2] == 1000 + winners.index(True)
    win.Fence()
    win.Free()


def test_request_based(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 8, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = 0
    comm.Barrier()
    win.Lock_all()
    reqs = [win.Rput(np.full(2, rank + 0.5), right, 0),
            win.Raccumulate(np.full(2, 1.0), right, 2, MPI.SUM)]
    st = [narma.Status(), narma.Status()]
    narma.Request.Waitall(reqs, st)
    assert not reqs[0] and not reqs[1]
    win.Flush_all()
    comm.Barrier()
    got = np.zeros(4)
    r = win.Rget(got, right, 0)
    while not r.Test():
        pass
    res = np.zeros(2)
    r2 = win.Rget_accumulate(np.full(2, 2.0), res, right, 2, MPI.SUM)
    r2.Wait()
    win.Flush(right)
    win.Unlock_all()
    comm.Barrier()
    assert np.array_equal(got, [rank + 0.5, rank + 0.5, 1.0, 1.0])
    assert np.array_equal(res, [1.0, 1.0])
    assert np.array_equal(mem[:4], [left + 0.5, left + 0.5, 3.0, 3.0])
    win.Free()


def test_attributes(comm):
    win = narma.Win.Allocate(64, 8, comm=comm)
    win.Set_name("pywin")
    assert win.Get_name() == "pywin"
    g = win.Get_group()
    assert g.Get_size() == comm.Get_size()
    assert MPI.Group.Compare(g, comm.Get_group()) in (MPI.IDENT, MPI.CONGRUENT)
    g.Free()
    assert win.transport in ("shm", "mpi", "shm+mpi")
    assert win.model in (narma.WIN_UNIFIED, narma.WIN_SEPARATE)
    assert win.base != 0
    assert narma.Get_version()
    win.Free()


def test_create_keeps_array_alive(comm):
    """Win.Create holds the array: dropping the caller's reference must not free the memory."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Create(np.zeros(4), 8, comm=comm)
    import gc

    gc.collect()
    win.Fence()
    win.Put(np.full(4, float(rank)), right)
    win.Fence()
    assert np.array_equal(win.tomemory(np.float64), np.full(4, float(left)))
    win.Free()
