"""Python threads calling narma: the thread level narma.Query_thread reports, and under
MPI_THREAD_MULTIPLE four threads per rank putting with notifications on one window at once.

The level is the one mpi4py asked MPI for when conftest.py imported mpi4py.MPI, before this file:
mpi4py.rc.thread_level, which MPI4PY_RC_THREAD_LEVEL sets. ctest runs this file at 2 ranks on
each transport three times (tests/python/CMakeLists.txt): at mpi4py's default "multiple", with
MPI4PY_RC_THREAD_LEVEL=funneled, and at "multiple" with NARMA_THREADS=off. The threaded test runs
only where narma says THREAD_MULTIPLE; test_query_thread_reflects_the_level makes sure that is
the "multiple" run.
"""
import os
import sys
import threading
import time
import traceback

import mpi4py
import numpy as np
import pytest
from mpi4py import MPI

import narma

LEVELS = {"single": MPI.THREAD_SINGLE, "funneled": MPI.THREAD_FUNNELED,
          "serialized": MPI.THREAD_SERIALIZED, "multiple": MPI.THREAD_MULTIPLE}
NTHREADS = 4      # threads per rank
BATCHES = 2000    # notification request Start/Wait rounds per thread (see below)
PUTS = 6          # notified puts per batch (the request's expected count)
ELEMS = 5         # int64 elements per put
TAG = 40          # thread t's tag: TAG + t
ROUNDS = 3000     # counter test: rounds per thread


def lock_off():
    return os.environ.get("NARMA_THREADS", "auto") in ("off", "0")


def lock_on():
    v = os.environ.get("NARMA_THREADS", "auto")
    return v in ("on", "1") or (not lock_off() and MPI.Query_thread() == MPI.THREAD_MULTIPLE)


def test_query_thread_reflects_the_level():
    asked = LEVELS[mpi4py.rc.thread_level]
    # Both MPI libraries the tests run on provide every level; mpi4py got what it asked for.
    assert MPI.Query_thread() == asked
    want = MPI.THREAD_SERIALIZED if asked == MPI.THREAD_MULTIPLE and lock_off() else asked
    assert narma.Query_thread() == want
    assert narma.THREAD_MULTIPLE == MPI.THREAD_MULTIPLE
    assert narma.THREAD_SERIALIZED == MPI.THREAD_SERIALIZED
    assert narma.THREAD_FUNNELED == MPI.THREAD_FUNNELED
    assert narma.THREAD_SINGLE == MPI.THREAD_SINGLE


def test_win_create_transport_follows_the_lock(comm):
    """With narma's lock on, Win.Create memory is not moved onto shared memory (another thread
    could write to it while it moves): on the shm transport such a window goes through mpi,
    unless NARMA_SHM_CREATE=1, which narma reads at each window's creation."""
    if os.environ.get("NARMA_TRANSPORT") != "shm":
        pytest.skip("only the shm transport moves Win.Create memory")
    if os.environ.get("UCX_MEM_EVENTS") != "no":
        pytest.skip("UCX's memory hooks (MPICH's wheel) keep Win.Create memory where it is "
                    "whatever the thread level; ctest sets UCX_MEM_EVENTS=no")
    for shm_create in (None, "1"):
        if shm_create:
            os.environ["NARMA_SHM_CREATE"] = shm_create
        try:
            win = narma.Win.Create(np.zeros(512), 8, comm=comm)
            want = "mpi" if lock_on() and not shm_create else "shm"
            assert win.transport == want, ("NARMA_SHM_CREATE", shm_create)
            win.Free()
        finally:
            os.environ.pop("NARMA_SHM_CREATE", None)


def pattern(rank, thread, batch, put):
    """What `rank`'s thread `thread` puts in its batch `batch`, put `put`: ELEMS distinct ints."""
    first = (((rank * NTHREADS + thread) * BATCHES + batch) * PUTS + put) * ELEMS
    return np.arange(first, first + ELEMS, dtype=np.int64)


def slot(thread, batch, put):
    """Element displacement of a put: every put of the run has its own slot in the window."""
    return ((thread * BATCHES + batch) * PUTS + put) * ELEMS


def test_threads_put_notify_one_window(comm):
    """Every rank runs NTHREADS threads on one window inside the main thread's Lock_all. Thread t
    puts with notifications to the right neighbour under its own tag, in batches of PUTS
    (Put_notify, or Rput_notify + Wait in odd threads), and receives the left neighbour's thread
    t's batches with a persistent Notify_init(left, tag, PUTS) request it starts and waits once
    per batch, then checks the status and the data of the batch. The main thread drives
    narma.Progress meanwhile. At the end no notification is left over on any tag.

    This many batches take a second or two; with narma's lock forced off (the skip below
    removed, NARMA_THREADS=off) most runs on shm fail a data check or crash."""
    if narma.Query_thread() != MPI.THREAD_MULTIPLE:
        pytest.skip("narma.Query_thread() is not THREAD_MULTIPLE: one thread at a time")
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    win = narma.Win.Allocate(8 * NTHREADS * BATCHES * PUTS * ELEMS, 8, comm=comm)
    mem = win.tomemory(np.int64)
    mem[:] = -1
    comm.Barrier()
    win.Lock_all()
    errors = []
    started = threading.Barrier(NTHREADS)

    def worker(t):
        tag = TAG + t
        req = win.Notify_init(left, tag, PUTS)
        src = np.empty(ELEMS, dtype=np.int64)
        st = narma.Status()
        try:
            started.wait()
            for b in range(BATCHES):
                req.Start()
                for k in range(PUTS):
                    src[:] = pattern(rank, t, b, k)
                    if t % 2:
                        win.Rput_notify(src, right, slot(t, b, k), tag=tag).Wait()
                    else:
                        win.Put_notify(src, right, slot(t, b, k), tag=tag)
                req.Wait(st)
                assert (st.source, st.tag) == (left, tag), st
                assert st.Get_count(MPI.INT64_T) == ELEMS, st
                for k in range(PUTS):
                    at = slot(t, b, k)
                    assert np.array_equal(mem[at:at + ELEMS], pattern(left, t, b, k)), (t, b, k)
            win.Flush(right)
        except BaseException as e:  # raised again by the main thread
            # Said at once: the other rank's threads may now wait forever for this one's puts.
            sys.stderr.write("rank %d thread %d: %s" % (rank, t, traceback.format_exc()))
            errors.append(e)
            started.abort()
        finally:
            req.Free()

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(NTHREADS)]
    for th in threads:
        th.start()
    deadline = time.monotonic() + 90
    while any(th.is_alive() for th in threads) and time.monotonic() < deadline:
        narma.Progress()
        for th in threads:
            th.join(0.001)
    if errors:
        raise errors[0]
    assert not any(th.is_alive() for th in threads), "threads still waiting after 90 s"
    comm.Barrier()  # every put everywhere is done and matched

    # Nothing left over: a wildcard request finds no unmatched notification.
    extra = win.Notify_init(narma.ANY_SOURCE, narma.ANY_TAG)
    extra.Start()
    for _ in range(100):
        assert not extra.Test()
    extra.Free()
    assert (mem >= 0).all()  # every slot was written
    win.Unlock_all()
    comm.Barrier()
    win.Free()


def test_threads_counters_one_window(comm):
    """Counter notifications from NTHREADS threads per rank on one window: thread t adds t + 1
    to the right neighbour's counter t per round (Put_notify_idx) and reads its own counter t
    after each round, while the other threads read theirs. The counters grow at different
    rates, so a value read from another thread's counter (a shared output cell) shows as a
    counter going down or beyond its bound; at the end each is ROUNDS * (t + 1)."""
    if narma.Query_thread() != MPI.THREAD_MULTIPLE:
        pytest.skip("narma.Query_thread() is not THREAD_MULTIPLE: one thread at a time")
    rank, size = comm.Get_rank(), comm.Get_size()
    right = (rank + 1) % size
    win = narma.Win.Allocate(8 * NTHREADS, 8, comm=comm)
    win.Set_num_notify(NTHREADS)
    win.Lock_all()
    errors = []

    def worker(t):
        one = np.full(1, t, dtype=np.int64)
        final = ROUNDS * (t + 1)
        seen = 0
        try:
            for _ in range(ROUNDS):
                for _ in range(t + 1):
                    win.Put_notify_idx(one, right, t, notification_idx=t)
                v = win.Get_notify_value(t)
                assert seen <= v <= final, (t, seen, v)
                seen = v
            win.Flush(right)
            deadline = time.monotonic() + 60
            while seen < final and time.monotonic() < deadline:
                seen = win.Get_notify_value(t)
            assert seen == final, (t, seen)
        except BaseException as e:  # raised again by the main thread
            sys.stderr.write("rank %d thread %d: %s" % (rank, t, traceback.format_exc()))
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(NTHREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(90)
    if errors:
        raise errors[0]
    assert not any(th.is_alive() for th in threads), "threads still running after 90 s"
    comm.Barrier()
    for t in range(NTHREADS):
        assert win.Reset_notify_value(t) == ROUNDS * (t + 1)
        assert win.Get_notify_value(t) == 0
    win.Unlock_all()
    comm.Barrier()
    win.Free()
