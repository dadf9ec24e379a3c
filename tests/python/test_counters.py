"""Counter-indexed notifications (the MPI-5.1 draft's model): Set_num_notify / Get_num_notify,
Put/Get/Accumulate/Get_accumulate_notify_idx and their R* forms increment counter idx at the
target once the data is there; Get_notify_value, Reset_notify_value (nothing lost) and
Notify_ithreshold; passive target only (ERR_RMA_SYNC otherwise), ERR_NOTIFY_IDX for a counter the
target lacks; both models on one window; the attributes NOTIFICATION_NUM_UB / VALUE_UB."""
import numpy as np
import pytest
from mpi4py import MPI

import narma

K = 30


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def progress_barrier(comm):
    r = comm.Ibarrier()
    while not r.Test():
        narma.Progress()


def raises(cls, fn, *args, **kw):
    with pytest.raises(narma.Error) as e:
        fn(*args, **kw)
    assert e.value.error_class == cls, str(e.value)


def test_counts_and_errors(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    assert win.Get_num_notify(right) == 0
    win.Set_num_notify(rank + 1)  # every rank its own number
    assert [win.Get_num_notify(r) for r in range(size)] == list(range(1, size + 1))
    assert win.Get_attr(narma.WIN_NOTIFICATION_NUM_UB) >= size
    assert win.Get_notify_value(0) == 0
    x = np.zeros(1)
    raises(narma.ERR_RMA_SYNC, win.Put_notify_idx, x, right)  # no passive-target epoch
    win.Fence()
    raises(narma.ERR_RMA_SYNC, win.Put_notify_idx, x, right)  # a fence epoch is not one
    win.Fence()
    win.Lock_all()
    raises(narma.ERR_NOTIFY_IDX, win.Put_notify_idx, x, right, 0, notification_idx=right + 1)
    raises(narma.ERR_NOTIFY_IDX, win.Get_notify_value, rank + 1)
    raises(narma.ERR_NOTIFY_IDX, win.Reset_notify_value, -1)
    raises(narma.ERR_NOTIFY_IDX, win.Notify_ithreshold, rank + 1, 1)
    win.Unlock_all()
    raises(narma.ERR_ARG, win.Set_num_notify, -1)
    comm.Barrier()
    win.Free()


def test_every_access_counts(comm):
    """Each origin counts into its own counter at its right neighbour, K accesses of each kind;
    a counter never runs ahead of the data, and ends exact."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 8, 8, comm=comm)
    mem = win.tomemory(np.int64)
    mem[:] = 0
    win.Set_num_notify(4)
    win.Lock_all()
    comm.Barrier()
    one = np.ones(1, dtype=np.int64)
    res = np.zeros(1, dtype=np.int64)
    for i in range(K):
        win.Put_notify_idx(np.array([i + 1], dtype=np.int64), right, 0, notification_idx=0)
        win.Accumulate_notify_idx(one, right, 1, MPI.SUM, notification_idx=1)
        win.Get_accumulate_notify_idx(one, res, right, 2, MPI.SUM, notification_idx=2)
        assert res[0] == i  # the former contents
        reqs = [win.Rput_notify_idx(np.array([i + 1], dtype=np.int64), right, 4,
                                    notification_idx=3),
                win.Raccumulate_notify_idx(one, right, 5, MPI.SUM, notification_idx=3),
                win.Rget_accumulate_notify_idx(one, res, right, 6, MPI.SUM, notification_idx=3)]
        narma.Request.Waitall(reqs)
        # what the counters say has arrived, the memory holds
        v = [win.Get_notify_value(k) for k in range(4)]
        assert mem[0] >= v[0] and mem[1] >= v[1] and mem[2] >= v[2]
    thr = win.Notify_ithreshold(3, 3 * K)
    thr.Wait()
    assert win.Get_notify_value(3) == 3 * K
    for k in range(3):
        while win.Get_notify_value(k) < K:
            pass
    assert list(mem[:3]) == [K, K, K] and list(mem[4:7]) == [K, K, K]
    # a get counts at the target once the data was read there
    progress_barrier(comm)
    out = np.zeros(3, dtype=np.int64)
    win.Get_notify_idx(out, right, 0, notification_idx=0)
    assert list(out) == [K, K, K]
    r = win.Rget_notify_idx(out, right, 4, notification_idx=0)
    r.Wait()
    win.Notify_ithreshold(0, K + 2).Wait()
    old = win.Reset_notify_value(0)
    assert old == K + 2 and win.Get_notify_value(0) == 0
    win.Unlock_all()
    progress_barrier(comm)
    win.Free()


def test_reset_loses_nothing(comm):
    """Resets racing with arriving increments: the values reset add up to what was sent."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8, 8, comm=comm)
    win.Set_num_notify(1)
    win.Lock_all()
    comm.Barrier()
    total = 0
    x = np.zeros(1)
    for i in range(K * 4):
        win.Put_notify_idx(x, right, 0, notification_idx=0)
        if i % 3 == 0:
            total += win.Reset_notify_value(0)
    progress_barrier(comm)
    total += win.Reset_notify_value(0)
    assert total == K * 4
    win.Unlock_all()
    comm.Barrier()
    win.Free()


def test_both_models_on_one_window(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 2, 8, comm=comm)
    win.Set_num_notify(1)
    tagged = win.Notify_init(narma.ANY_SOURCE, narma.ANY_TAG)
    tagged.Start()
    win.Lock_all()
    comm.Barrier()
    win.Put_notify_idx(np.ones(1), right, 0)
    win.Notify_ithreshold(0, 1).Wait()
    progress_barrier(comm)
    assert not tagged.Test()  # a counter notification never matches a tag-matched request
    progress_barrier(comm)
    win.Put_notify(np.ones(1), right, 1, tag=4)
    st = narma.Status()
    tagged.Wait(st)
    assert st.source == left and st.tag == 4
    assert win.Get_notify_value(0) == 1  # and counters never count tag-matched ones
    win.Unlock_all()
    tagged.Free()
    progress_barrier(comm)
    # a pending threshold request holds the window
    thr = win.Notify_ithreshold(0, 100)
    raises(narma.ERR_PENDING, win.Free)
    thr.Free()
    comm.Barrier()
    win.Free()
