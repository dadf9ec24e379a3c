"""Every synchronisation call: fence, PSCW, lock/unlock, lock_all, flushes, sync, and the
nonblocking i* forms with narma requests (Wait, Test, Waitall, Testall, Waitany, Waitsome)."""
import numpy as np
from mpi4py import MPI

import narma


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def test_pscw(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[0] = -1
    cg = comm.Get_group()
    to_right, from_left = cg.Incl([right]), cg.Incl([left])
    comm.Barrier()
    for it in range(3):
        win.Post(from_left)
        win.Start(to_right)
        win.Put(np.array([rank * 10.0 + it]), right)
        win.Complete()
        win.Wait()
        assert mem[0] == left * 10.0 + it
    # Test form of the exposure epoch's end
    win.Post(from_left)
    win.Start(to_right)
    win.Put(np.array([42.0 + rank]), right)
    win.Complete()
    while not win.Test():
        pass
    assert mem[0] == 42.0 + left
    for g in (to_right, from_left, cg):
        g.Free()
    win.Free()


def test_lock_flush_sync(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * size, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = 0
    comm.Barrier()
    for t in range(size):
        win.Lock(t, narma.LOCK_SHARED)
        win.Put(np.array([rank + 1.0]), t, rank)
        win.Flush_local(t)
        win.Flush(t)
        win.Unlock(t)
    comm.Barrier()
    win.Lock(rank, narma.LOCK_EXCLUSIVE)
    win.Sync()
    assert np.array_equal(mem, np.arange(1, size + 1, dtype=np.float64))
    win.Unlock(rank)
    comm.Barrier()
    win.Lock_all(narma.MODE_NOCHECK)
    win.Put(np.array([-1.0]), right, rank)
    win.Flush_local_all()
    win.Flush_all()
    win.Unlock_all()
    comm.Barrier()
    win.Lock_all()
    win.Sync()
    assert mem[left] == -1.0
    win.Unlock_all()
    win.Free()


def test_nonblocking_epochs(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = 0
    cg = comm.Get_group()
    to_right, from_left = cg.Incl([right]), cg.Incl([left])
    comm.Barrier()
    # ifence
    narma.Request.Waitall([win.Ifence()])
    win.Put(np.array([1.0 + rank]), right, 0)
    r = win.Ifence()
    r.Wait()
    assert mem[0] == 1.0 + left
    win.Ifence(narma.MODE_NOSUCCEED).Wait()
    # ipost / istart / icomplete / iwait, opened together (no ring deadlock)
    rp = win.Ipost(from_left)
    rs = win.Istart(to_right)
    win.Put(np.array([2.0 + rank]), right, 1)
    rc = win.Icomplete()
    rw = win.Iwait()
    reqs = [rp, rs, rc, rw]
    done = set()
    while len(done) < 4:
        idx = narma.Request.Waitsome(reqs)
        assert idx is not None or len(done) == 4
        done.update(idx or [])
    assert mem[1] == 2.0 + left
    # ilock / iflush / iunlock and the lock_all forms, completed with Testall / Waitany
    comm.Barrier()
    r1 = win.Ilock(right, narma.LOCK_SHARED)
    win.Put(np.array([3.0 + rank]), right, 2)
    r2 = win.Iflush(right)
    r3 = win.Iflush_local(right)
    r4 = win.Iunlock(right)
    reqs = [r1, r2, r3, r4]
    while not narma.Request.Testall(reqs):
        pass
    r5 = win.Ilock_all()
    win.Put(np.array([4.0 + rank]), right, 3)
    more = [r5, win.Iflush_all(), win.Iflush_local_all(), win.Iunlock_all()]
    left_ = list(more)
    for _ in range(4):
        i = narma.Request.Waitany(left_)
        assert 0 <= i < 4
    assert narma.Request.Waitany(left_) == narma.UNDEFINED
    comm.Barrier()
    win.Lock(rank)
    assert np.array_equal(mem, [1.0 + left, 2.0 + left, 3.0 + left, 4.0 + left])
    win.Unlock(rank)
    for g in (to_right, from_left, cg):
        g.Free()
    win.Free()


def test_testany_testsome(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8, 8, comm=comm)
    win.Lock_all()
    reqs = [win.Iflush(right), win.Iflush_all()]
    seen = set()
    while len(seen) < 2:
        i, flag = narma.Request.Testany(reqs)
        if flag and i != narma.UNDEFINED:
            seen.add(i)
        elif flag:
            break
    assert seen == {0, 1}
    reqs = [win.Iflush(right)]
    got = None
    while not got:
        got = narma.Request.Testsome(reqs)
    assert got == [0]
    assert narma.Request.Testsome(reqs) is None  # all inactive: MPI_UNDEFINED
    win.Unlock_all()
    win.Free()
