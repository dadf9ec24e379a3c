"""Python vs C notified ping-pong, interleaved in one run, and the per-call overhead of the bindings.

    mpiexec -n 2 python examples/python/bench_pingpong.py [--size 8] [--iters 20000] [--reps 11]

Schemes (bench/micro/pingpong's narma_notify round: lock_all; a rank sends with Put_notify +
Win_flush, the peer waits with Start + Wait on a persistent notification request):
  c           the round in C (narma._narma's npy_bench_notify_pingpong), same window and request
  py          the round in Python: win.Put_notify(buf, peer, 0, tag=99); win.Flush(peer);
              req.Start(); req.Wait()
  py_pers     Python with a persistent put (Put_notify_init): preq.Start(); preq.Wait() instead
              of Put_notify + Flush (narma completes it at the target on return, so no flush)
Each repetition runs the schemes one after the other (order rotated); reported: median one-way
latency per scheme and the median over repetitions of the per-repetition ratio py/c.

Per-call overhead (rank 0 alone, no communication): a cffi call of an empty C function, a narma
call doing nothing (Put_notify to PROC_NULL) through the Python method and straight through cffi,
and Flush(PROC_NULL).
"""
import argparse
import statistics
import time

import numpy as np
from mpi4py import MPI

import narma
from narma._narma import ffi, lib

TAG = 99


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=11)
    a = ap.parse_args()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    assert comm.Get_size() == 2, "run with 2 ranks"
    peer, server = 1 - rank, rank == 1
    win = narma.Win.Allocate(max(a.size, 8), 1, comm=comm)
    win.Lock_all(narma.MODE_NOCHECK)
    req = win.Notify_init(peer, TAG, 1)
    buf = np.zeros(a.size, dtype=np.uint8)
    preq = win.Put_notify_init(buf, peer, 0, tag=TAG)
    cbuf = ffi.from_buffer(buf)

    def run_c(n):
        rc = lib.npy_bench_notify_pingpong(win._w, req._h, cbuf, a.size, peer, TAG, n,
                                           int(server), ffi.NULL)
        assert rc == 0, narma.Get_error_string(rc)

    def run_py(n):
        put, flush, start, wait = win.Put_notify, win.Flush, req.Start, req.Wait
        for _ in range(n):
            if server:
                start()
                wait()
            put(buf, peer, 0, tag=TAG)
            flush(peer)
            if not server:
                start()
                wait()

    def run_pers(n):
        start, wait, pstart, pwait = req.Start, req.Wait, preq.Start, preq.Wait
        for _ in range(n):
            if server:
                start()
                wait()
            pstart()
            pwait()
            if not server:
                start()
                wait()

    schemes = [("c", run_c), ("py", run_py), ("py_pers", run_pers)]
    for _, fn in schemes:  # warm-up
        comm.Barrier()
        fn(a.iters // 10 + 1)
    lat = {s: [] for s, _ in schemes}
    for rep in range(a.reps):
        order = schemes[rep % 3:] + schemes[:rep % 3]
        for s, fn in order:
            comm.Barrier()
            t0 = time.perf_counter()
            fn(a.iters)
            lat[s].append((time.perf_counter() - t0) / a.iters / 2 * 1e6)
    ratios = [p / c for p, c in zip(lat["py"], lat["c"])]
    pratios = [p / c for p, c in zip(lat["py_pers"], lat["c"])]
    preq.Free()
    req.Free()
    win.Unlock_all()

    if rank == 0:
        print("notified ping-pong, %d B, transport %s, %d reps x %d iters (one-way latency, us)"
              % (a.size, win.transport, a.reps, a.iters))
        for s, _ in schemes:
            print("  %-8s median %7.3f  (min %7.3f, max %7.3f)"
                  % (s, statistics.median(lat[s]), min(lat[s]), max(lat[s])))
        print("  ratio py/c       median of per-rep ratios %.3f (min %.3f, max %.3f)"
              % (statistics.median(ratios), min(ratios), max(ratios)))
        print("  ratio py_pers/c  median of per-rep ratios %.3f (min %.3f, max %.3f)"
              % (statistics.median(pratios), min(pratios), max(pratios)))
        n = 200000
        x = np.zeros(1)
        noop = lib.npy_noop
        put = win.Put_notify
        flush = win.Flush
        xp = int(ffi.cast("uintptr_t", ffi.from_buffer(x)))
        dt = MPI._handleof(MPI.DOUBLE)
        w = win._w
        rma = lib.npy_rma
        probes = [
            ("cffi call of an empty C function", lambda: noop()),
            ("Put_notify(PROC_NULL) straight through cffi",
             lambda: rma(3, xp, 1, dt, narma.PROC_NULL, 0, 1, dt, 0, w, TAG, ffi.NULL, 0)),
            ("win.Put_notify(x, PROC_NULL) (the Python method)",
             lambda: put(x, narma.PROC_NULL, 0, tag=TAG)),
            ("win.Flush(PROC_NULL)", lambda: flush(narma.PROC_NULL)),
        ]
        win.Lock_all()
        print("per-call cost (ns, median of 5 x %d calls; the loop's own cost subtracted)" % n)
        empty = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                pass
            empty.append((time.perf_counter() - t0) / n * 1e9)
        base = statistics.median(empty)
        for name, fn in probes:
            ts = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                ts.append((time.perf_counter() - t0) / n * 1e9)
            print("  %-50s %7.0f" % (name, statistics.median(ts) - base))
        win.Unlock_all()
    comm.Barrier()
    win.Free()


if __name__ == "__main__":
    main()
