"""Counts beyond an int: Python counts are ints, and a count that does not fit a C int goes to
narma's MPI_Count (_c) call (Put, Get, Accumulate, Get_accumulate, Put_notify, Get_notify,
Accumulate_notify and the R* forms); calls without one (persistent and counter-notified
accesses) refuse it with ERR_COUNT. Without moving gigabytes: a count of 2^31 + 5 toward
PROC_NULL succeeds (an int call could not even be given it), 2^62 doubles is ERR_COUNT (bytes
beyond MPI_Aint). At 2 ranks with enough free memory, 2^31 + 17 bytes really travel: put into the
peer's window and read back, checked at the chunk boundary and the end."""
import os

import numpy as np
import pytest
from mpi4py import MPI

import narma

BIG = 2 ** 31 + 5


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def raises(cls, fn, *args, **kw):
    with pytest.raises(narma.Error) as e:
        fn(*args, **kw)
    assert e.value.error_class == cls, str(e.value)


def test_c_forms_chosen(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(64, 1, comm=comm)
    win.Lock_all()
    x = np.zeros(8, dtype=np.uint8)
    big = [x, BIG, MPI.BYTE]
    null = narma.PROC_NULL
    win.Put(big, null)
    win.Get(big, null)
    win.Accumulate(big, null, None, MPI.SUM)
    win.Get_accumulate(big, [x, BIG, MPI.BYTE], null, None, MPI.SUM)
    win.Put_notify(big, null, 0, tag=1)
    win.Get_notify(big, null, 0, tag=1)
    win.Accumulate_notify(big, null, 0, MPI.SUM, tag=1)
    narma.Request.Waitall([win.Rput(big, null), win.Rget(big, null),
                           win.Raccumulate(big, null), win.Rput_notify(big, null, tag=1),
                           win.Rget_notify(big, null, tag=1),
                           win.Rget_accumulate(big, [x, BIG, MPI.BYTE], null)])
    # bytes beyond MPI_Aint: refused before anything moves
    huge = [np.zeros(1), 2 ** 62, MPI.DOUBLE]
    raises(narma.ERR_COUNT, win.Put, huge, right)
    raises(narma.ERR_COUNT, win.Get, huge, right)
    raises(narma.ERR_COUNT, win.Put_notify, huge, right, 0, tag=1)
    raises(narma.ERR_COUNT, win.Put, [x, -1, MPI.BYTE], right)
    # no MPI_Count form: refused
    raises(narma.ERR_COUNT, win.Put_notify_init, big, right, 0, tag=1)
    raises(narma.ERR_COUNT, win.Get_notify_init, big, right, 0, tag=1)
    raises(narma.ERR_COUNT, win.Accumulate_notify_init, big, right, 0, tag=1)
    raises(narma.ERR_COUNT, win.Get_accumulate_notify, big, [x, BIG, MPI.BYTE], right)
    raises(narma.ERR_COUNT, win.Put_notify_idx, big, right)
    win.Unlock_all()
    comm.Barrier()
    win.Free()


def _mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


N = 2 ** 31 + 17


def test_really_large(comm):
    """Rank 0 puts N bytes into rank 1's window with Put_notify, then reads them back with Get."""
    rank, size, right, left = ring(comm)
    # about 2 GiB in each of rank 0 (origin) and rank 1 (window), twice at rank 0 for the get
    ok = size == 2 and _mem_available() > 7 * 2 ** 30 and not os.environ.get("ASAN_OPTIONS")
    if not comm.allreduce(ok, op=MPI.LAND):
        pytest.skip("2 ranks and 7 GiB of free memory needed (2^31 + 17 bytes each way)")
    win = narma.Win.Allocate(N if rank == 1 else 0, 1, comm=comm)
    if rank == 1:
        req = win.Notify_init(0, 2)
        req.Start()
    comm.Barrier()
    probes = [0, 2 ** 31 - 2, 2 ** 31 - 1, 2 ** 31, N - 1]
    if rank == 0:
        src = np.empty(N, dtype=np.uint8)
        src[:] = 7
        src[probes] = [1, 2, 3, 4, 5]
        win.Lock(1, narma.LOCK_SHARED)
        win.Put_notify(src, 1, 0, tag=2)  # count N: Put_notify_c
        del src
        back = np.zeros(N, dtype=np.uint8)
        win.Get(back, 1, 0)
        win.Unlock(1)
        assert list(back[probes]) == [1, 2, 3, 4, 5]
        assert back[12345] == 7 and back[N - 2] == 7
        del back
    else:
        st = narma.Status()
        req.Wait(st)
        assert st.source == 0 and st.tag == 2
        mem = win.tomemory()
        assert list(mem[probes]) == [1, 2, 3, 4, 5]
        req.Free()
    comm.Barrier()
    win.Free()
