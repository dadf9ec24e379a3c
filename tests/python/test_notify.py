"""Notified access: Put_notify / Get_notify / Accumulate_notify and their R* and persistent forms,
notification requests (Notify_init, Start, Test, Wait, Startall) with status source/tag/count, and
the GIL released while a blocking Wait waits."""
import threading
import time

import numpy as np
from mpi4py import MPI

import narma


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def test_put_notify_status(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 8, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = 0
    req = win.Notify_init(left, 7)
    comm.Barrier()
    for it in range(5):
        req.Start()
        win.Put_notify(np.full(3, rank + it + 0.25), right, 1, tag=7)
        st = narma.Status()
        req.Wait(st)
        assert st.source == left and st.Get_source() == left
        assert st.tag == 7
        assert st.Get_count() == 24 and st.Get_count(MPI.DOUBLE) == 3
        assert np.array_equal(mem[1:4], np.full(3, left + it + 0.25))
        comm.Barrier()  # before the next put overwrites
    req.Free()
    win.Free()


def test_any_source_counting(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * size, 8, comm=comm)
    mem = win.tomemory(np.int64)
    mem[:] = 0
    req = win.Notify_init(narma.ANY_SOURCE, narma.ANY_TAG, size - 1)
    req.Start()
    comm.Barrier()
    for t in range(size):
        if t != rank:
            win.Accumulate_notify(np.array([rank + 1], dtype=np.int64), t, rank, MPI.SUM,
                                  tag=100 + rank)
    st = narma.Status()
    while not req.Test(st):
        pass
    assert 100 <= st.tag < 100 + size and st.tag - 100 == st.source
    want = np.arange(1, size + 1, dtype=np.int64)
    want[rank] = 0
    assert np.array_equal(mem, want)
    req.Free()
    comm.Barrier()
    win.Free()


def test_get_notify_and_request_forms(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = rank * 1.0
    nget = win.Notify_init(left, 3)
    nput = win.Notify_init(left, 4)
    comm.Barrier()
    nget.Start()
    out = np.zeros(4)
    win.Get_notify(out, right, 0, tag=3)
    assert np.array_equal(out, np.full(4, float(right)))
    st = narma.Status()
    nget.Wait(st)  # my left read me and notified me
    assert st.source == left and st.tag == 3
    comm.Barrier()
    nput.Start()
    rput = win.Rput_notify(np.full(2, -5.0), right, 2, tag=4)
    rget = win.Rget_notify(out, right, 0, tag=3)
    nget.Start()
    narma.Request.Waitall([rput, rget, nput, nget])
    assert np.array_equal(mem[2:], [-5.0, -5.0])
    comm.Barrier()
    nget.Free()
    nput.Free()
    win.Free()


def test_persistent_accesses(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = 0
    src = np.zeros(2)
    pput = win.Put_notify_init(src, right, 0, tag=11)
    dst = np.zeros(2)
    pget = win.Get_notify_init(dst, right, 2, tag=12)
    pacc = win.Accumulate_notify_init(np.ones(1), right, (3, 1, MPI.DOUBLE), MPI.SUM, tag=13)
    recv = win.Notify_init(left, 11)
    reads = win.Notify_init(left, 12)
    accs = win.Notify_init(left, 13)
    comm.Barrier()
    for it in range(4):
        src[:] = rank * 100 + it  # the persistent put reads the array at each start
        narma.Prequest.Startall([recv, reads, accs])
        pput.Start()
        pput.Wait()
        pget.Start()
        pacc.Start()
        narma.Request.Waitall([pget, pacc])
        narma.Request.Waitall([recv, reads, accs])
        assert np.array_equal(mem[:2], np.full(2, left * 100 + it))
        assert mem[3] == it + 1
        comm.Barrier()
    for r in (pput, pget, pacc, recv, reads, accs):
        r.Free()
    try:
        win.Free()
    finally:
        pass


def test_wait_releases_gil(comm):
    """A blocking Wait must let another Python thread run: rank 0 waits for a notification its
    peer sends only after 0.5 s; meanwhile a second thread counts. Holding the GIL would leave
    the counter near zero."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8, 8, comm=comm)
    peer = 1 if rank == 0 else 0
    req = win.Notify_init(peer, 5) if rank in (0, 1) else None
    comm.Barrier()
    if rank == 0:
        count = [0]
        stop = threading.Event()

        def spin():
            while not stop.is_set():
                count[0] += 1

        th = threading.Thread(target=spin)
        comm.Barrier()
        th.start()
        time.sleep(0.01)
        before = count[0]
        t0 = time.perf_counter()
        req.Start()
        req.Wait()
        waited = time.perf_counter() - t0
        during = count[0] - before
        stop.set()
        th.join()
        assert waited > 0.3, "Wait returned before the notification was sent"
        # A spinning Python thread does well over 10^5 increments per second when it runs.
        assert during > 10000, "the other thread ran %d steps during a %.2f s Wait" % (
            during, waited)
    elif rank == 1:
        comm.Barrier()
        time.sleep(0.5)
        win.Put_notify(np.zeros(1), 0, 0, tag=5)
    else:
        comm.Barrier()
    comm.Barrier()
    if req is not None:
        req.Free()
    win.Free()
