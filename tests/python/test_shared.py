"""Shared-memory windows: Win.Allocate_shared gives every rank of a node memory it loads from and
stores to, contiguous across ranks unless alloc_shared_noncontig; Win.Shared_query answers any
rank's segment (NumPy array, disp_unit), PROC_NULL the lowest non-empty one; the window is a full
narma window (puts and notified puts land in the neighbour's segment). On Allocate windows
Shared_query answers the peers reached through shm and refuses the others with ERR_RANK; dynamic
windows are refused with ERR_WIN."""
import numpy as np
import pytest
from mpi4py import MPI

import narma


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


@pytest.fixture
def node(comm):
    c = comm.Split_type(MPI.COMM_TYPE_SHARED)
    yield c
    c.Free()


def test_allocate_shared_loads_and_stores(node):
    rank, size, right, left = ring(node)
    n = 4 + rank  # segments of different sizes
    win = narma.Win.Allocate_shared(8 * n, 8, comm=node)
    assert win.flavor == narma.WIN_FLAVOR_SHARED
    mine = win.tomemory(np.int64)
    assert mine.size == n
    mine[:] = -1
    win.Sync()
    node.Barrier()
    # every rank's segment, through its own address here; contiguous: each starts where the
    # previous one ends
    segs = [win.Shared_query(r) for r in range(size)]
    for r, (mem, du) in enumerate(segs):
        assert du == 8 and mem.nbytes == 8 * (4 + r)
    addr = [mem.__array_interface__["data"][0] for mem, _ in segs]
    for r in range(1, size):
        assert addr[r] == addr[r - 1] + segs[r - 1][0].nbytes
    assert addr[rank] == mine.__array_interface__["data"][0]
    # store into the right neighbour's segment; it loads what we stored
    segs[right][0].view(np.int64)[:] = 1000 * rank + np.arange(4 + right)
    win.Sync()
    node.Barrier()
    win.Sync()
    assert np.array_equal(mine, 1000 * left + np.arange(n))
    node.Barrier()
    # PROC_NULL: the lowest rank whose segment is not empty (rank 0 here)
    mem0, du0 = win.Shared_query(narma.PROC_NULL)
    assert du0 == 8 and mem0.__array_interface__["data"][0] == addr[0]
    with pytest.raises(narma.Error) as e:
        win.Shared_query(size)
    assert e.value.error_class == narma.ERR_RANK
    win.Free()


def test_allocate_shared_is_a_narma_window(node):
    rank, size, right, left = ring(node)
    info = MPI.Info.Create()
    info.Set("alloc_shared_noncontig", "true")
    win = narma.Win.Allocate_shared(8 * 4, 8, info=info, comm=node)
    info.Free()
    mem = win.tomemory(np.float64)
    mem[:] = 0
    req = win.Notify_init(left, 3)
    req.Start()
    node.Barrier()
    win.Lock_all()
    win.Put_notify(np.full(2, rank + 0.5), right, 1, tag=3)
    req.Wait()
    assert np.array_equal(mem[1:3], [left + 0.5, left + 0.5])
    win.Unlock_all()
    node.Barrier()
    win.Fence()
    win.Accumulate(np.ones(1), right, 3, MPI.SUM)
    win.Fence()
    assert mem[3] == 1.0
    # the neighbour's segment, loaded directly, holds what this rank put there
    seg, du = win.Shared_query(right)
    assert du == 8 and seg.view(np.float64)[1] == rank + 0.5
    req.Free()
    node.Barrier()
    win.Free()


def test_shared_query_other_windows(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 2, 8, comm=comm)
    mine = win.tomemory(np.int64)
    mine[:] = 10 + rank
    win.Sync()
    comm.Barrier()
    mem, du = win.Shared_query(rank)
    assert du == 8 and mem.__array_interface__["data"][0] == win.base
    if win.Get_target_transport(right) == "shm":
        mem, du = win.Shared_query(right)
        win.Sync()
        assert du == 8 and np.array_equal(mem.view(np.int64), [10 + right] * 2)
    elif right != rank:
        with pytest.raises(narma.Error) as e:
            win.Shared_query(right)
        assert e.value.error_class == narma.ERR_RANK
    comm.Barrier()
    win.Free()
    dyn = narma.Win.Create_dynamic(comm=comm)
    with pytest.raises(narma.Error) as e:
        dyn.Shared_query(rank)
    assert e.value.error_class == narma.ERR_WIN
    dyn.Free()
