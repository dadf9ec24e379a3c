"""Notified fetching atomics: Fetch_and_op_notify (every rank on every rank's counter: fetched
values distinct, K notifications per source, counter exact), Compare_and_swap_notify (one winner
of a race, a notification per attempt), Get_accumulate_notify with REPLACE and NO_OP and
Rget_accumulate_notify; and Request.Get_status, which reports completion without completing."""
import numpy as np
from mpi4py import MPI

import narma

K = 20


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def progress_barrier(comm):
    """A barrier that keeps narma's progress going (a rank still issuing notified accesses may
    wait for room in this rank's queue, which only this rank's narma calls drain)."""
    r = comm.Ibarrier()
    while not r.Test():
        narma.Progress()


def test_fetch_and_op_notify(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 2, 8, comm=comm)
    mem = win.tomemory(np.int64)
    mem[:] = 0
    reqs = [win.Notify_init(s, 10, K) for s in range(size)]
    narma.Prequest.Startall(reqs)
    progress_barrier(comm)
    one = np.ones(1, dtype=np.int64)
    fetched = np.full((size, K), -1, dtype=np.int64)
    for t in range(size):
        for i in range(K):
            win.Fetch_and_op_notify(one, fetched[t, i:i + 1], t, 0, MPI.SUM, tag=10)
            assert 0 <= fetched[t, i] < size * K  # the result is there on return
    sts = [narma.Status() for _ in range(size)]
    narma.Request.Waitall(reqs, sts)
    for s, st in enumerate(sts):
        assert st.source == s and st.tag == 10 and st.Get_count() == 8
    assert mem[0] == size * K
    progress_barrier(comm)
    mine = np.empty((size, K), dtype=np.int64)
    comm.Alltoall(fetched, mine)
    assert np.array_equal(np.sort(mine.ravel()), np.arange(size * K))
    # NO_OP with no origin reads atomically
    got = np.zeros(1, dtype=np.int64)
    win.Fetch_and_op_notify(None, got, right, 0, MPI.NO_OP, tag=11)
    assert got[0] == size * K
    req = win.Notify_init(left, 11)
    req.Start()
    req.Wait()
    for r in reqs + [req]:
        r.Free()
    progress_barrier(comm)
    win.Free()


def test_compare_and_swap_notify(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8, 8, comm=comm)
    mem = win.tomemory(np.int64)
    mem[:] = -1
    req = win.Notify_init(narma.ANY_SOURCE, 12, size) if rank == 0 else None
    if req:
        req.Start()
    progress_barrier(comm)
    old = np.zeros(1, dtype=np.int64)
    win.Compare_and_swap_notify(np.array([rank], dtype=np.int64), np.array([-1], dtype=np.int64),
                                old, 0, 0, tag=12)
    won = comm.allgather(int(old[0]) == -1)
    assert sum(won) == 1  # exactly one rank swapped
    winner = won.index(True)
    if rank != winner:
        assert old[0] == winner
    if req:
        st = narma.Status()
        req.Wait(st)  # one notification per attempt, swapped or not
        assert st.tag == 12
        assert mem[0] == winner
        req.Free()
    progress_barrier(comm)
    win.Free()


def test_get_accumulate_notify(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = rank
    reqs = [win.Notify_init(left, 13), win.Notify_init(left, 14), win.Notify_init(left, 15)]
    narma.Prequest.Startall(reqs)
    progress_barrier(comm)
    # REPLACE: a swap, the result is the former contents
    res = np.zeros(2)
    win.Get_accumulate_notify(np.full(2, 100.0 + rank), res, right, 0, MPI.REPLACE, tag=13)
    assert np.array_equal(res, [right, right])
    # NO_OP: an atomic read, memory unchanged
    res2 = np.zeros(2)
    win.Get_accumulate_notify(np.zeros(2), res2, right, (0, 2, MPI.DOUBLE), MPI.NO_OP, tag=14)
    assert np.array_equal(res2, [100.0 + rank] * 2)
    # the request form is complete on return
    res3 = np.zeros(1)
    r = win.Rget_accumulate_notify(np.ones(1), res3, right, 3, MPI.SUM, tag=15)
    assert r.Get_status()
    r.Wait()
    assert not r and res3[0] == right
    sts = [narma.Status() for _ in reqs]
    narma.Request.Waitall(reqs, sts)
    assert [st.tag for st in sts] == [13, 14, 15] and all(st.source == left for st in sts)
    assert sts[0].Get_count(MPI.DOUBLE) == 2 and sts[2].Get_count(MPI.DOUBLE) == 1
    assert np.array_equal(mem, [100.0 + left] * 2 + [rank, rank + 1.0])
    for q in reqs:
        q.Free()
    progress_barrier(comm)
    win.Free()


def test_request_get_status(comm):
    """Get_status reports completion and the status as often as asked, without freeing or
    deactivating the request; the Wait that follows completes it with the same status."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8, 8, comm=comm)
    req = win.Notify_init(left, 16)
    st = narma.Status()
    assert req.Get_status(st)  # inactive persistent request: complete, empty status
    assert st.source == narma.ANY_SOURCE and st.tag == narma.ANY_TAG
    req.Start()
    progress_barrier(comm)
    assert not req.Get_status() or size == 1
    comm.Barrier()
    win.Lock_all()
    win.Put_notify(np.full(1, float(rank)), right, 0, tag=16)
    win.Unlock_all()
    while not req.Get_status():
        pass
    for _ in range(3):
        st = narma.Status()
        assert req.Get_status(st)
        assert st.source == left and st.tag == 16 and st.Get_count() == 8
    assert req  # still there
    st2 = narma.Status()
    req.Wait(st2)
    assert (st2.source, st2.tag, st2.count) == (left, 16, 8)
    assert req  # persistent: inactive, not freed
    req.Free()
    assert narma.Request().Get_status()  # a null request is complete
    comm.Barrier()
    win.Free()
