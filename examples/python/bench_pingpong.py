"""Python vs C: the notified ping-pong through the bindings against the same round in C, in one
process, and the per-call cost of the bindings.

    mpiexec -n 2 -bind-to core python examples/python/bench_pingpong.py [--size 8] [--iters 10000]
            [--reps 7] [--calls 20000] [--thread-level funneled] [--csv FILE]

(examples/python/compare_pingpong.py runs this and bench/micro/pingpong alternately, on both
transports, and prints the table of docs/performance.md.)

Ping-pong schemes, on one window and one notification request; each repetition runs every scheme
once, in rotating order:
  c        bench/micro/pingpong's narma_notify round, in C (narma._narma.npy_bench_notify_pingpong):
           Put_notify + Win_flush; the peer Start + Wait, then reads the first and last byte
  py       the same round in Python: win.Put_notify(buf, peer, 0, tag=TAG); win.Flush(peer);
           req.Start(); req.Wait(); mem[0]; mem[size - 1]
  c_pers   narma_notify_persistent in C: the persistent put's Start + Wait (no flush: narma
           completes it at the target on return)
  py_pers  the same in Python: preq.Start(); preq.Wait()
Statistics as bench/micro/pingpong's: a sample is the mean half round trip of 8 rounds, a block's
latency the median of its samples (rank 0's), a scheme's latency the median over repetitions;
ratios are medians of per-repetition ratios. Every block checks that the last message arrived.

Per-call cost (rank 0 alone, rank 1 waits in a barrier): cheap calls that do no communication,
each timed in a C loop (narma._narma.npy_bench_calls), as a bare cffi call of the C function, and
through the package's method, in a Python loop of --calls calls (the loop's own cost, shown
apart, included). A probe's time is the fastest of 20 such chunks in a repetition (short
chunks, so that some run without being preempted on a busy machine: preemption only ever adds),
then the median over repetitions.

mpi4py initialises MPI with MPI_THREAD_MULTIPLE unless told otherwise; this script asks for
--thread-level (default funneled, all a one-thread program needs and what the C benchmark's
MPI_Init gives), because under MULTIPLE narma takes its process lock in every call and MPICH's
one-sided calls (narma's mpi transport) are several times slower. The header says the level
narma gives (narma.Query_thread).
"""
import argparse
import statistics
import sys
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--size", type=int, default=8, help="message bytes (default 8)")
ap.add_argument("--iters", type=int, default=10000, help="timed rounds per block")
ap.add_argument("--reps", type=int, default=7, help="interleaved repetitions")
ap.add_argument("--calls", type=int, default=1000,
                help="calls per chunk of a per-call probe (0: skip the probes)")
ap.add_argument("--thread-level", default="funneled",
                choices=["single", "funneled", "serialized", "multiple"])
ap.add_argument("--csv", help="also write rows bench,scheme,size,metric,value")
a = ap.parse_args()

import mpi4py  # noqa: E402

mpi4py.rc.thread_level = a.thread_level
from mpi4py import MPI  # noqa: E402
import numpy as np  # noqa: E402

import narma  # noqa: E402
from narma._narma import ffi, lib  # noqa: E402

TAG = 99
BATCH = 8


def main():
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if comm.Get_size() != 2:
        if rank == 0:
            print("bench_pingpong.py: run with 2 ranks", file=sys.stderr)
        return 2
    peer, server = 1 - rank, rank == 1
    size = a.size
    win = narma.Win.Allocate(max(size, 8), 1, comm=comm)
    mem = win.tomemory()
    win.Set_num_notify(1)  # for the per-call probe of Get_notify_value
    win.Lock_all(narma.MODE_NOCHECK)
    req = win.Notify_init(peer, TAG, 1)
    buf = np.zeros(size, dtype=np.uint8)
    preq = win.Put_notify_init(buf, peer, 0, tag=TAG)
    sbuf = ffi.from_buffer(buf)
    rbuf = ffi.cast("unsigned char *", ffi.from_buffer(mem))
    last = size - 1

    def run_c(nsamples, samples, persistent=False):
        rc = lib.npy_bench_notify_pingpong(win._w, req._h, sbuf, rbuf, size, peer, TAG,
                                           int(server), preq._h if persistent else ffi.NULL,
                                           nsamples, BATCH, samples)
        if rc:
            raise narma.Error(rc, "npy_bench_notify_pingpong")

    def run_c_pers(nsamples, samples):
        run_c(nsamples, samples, True)

    def run_py(nsamples, samples):
        put, flush, start, wait, clock = win.Put_notify, win.Flush, req.Start, req.Wait, \
            time.perf_counter
        t = clock()
        for i in range(nsamples):
            for _ in range(BATCH):
                if server:
                    start()
                    wait()
                    mem[0]
                    mem[last]
                put(buf, peer, 0, tag=TAG)
                flush(peer)
                if not server:
                    start()
                    wait()
                    mem[0]
                    mem[last]
            t2 = clock()
            samples[i] = (t2 - t) / BATCH
            t = t2

    def run_py_pers(nsamples, samples):
        pstart, pwait, start, wait, clock = preq.Start, preq.Wait, req.Start, req.Wait, \
            time.perf_counter
        t = clock()
        for i in range(nsamples):
            for _ in range(BATCH):
                if server:
                    start()
                    wait()
                    mem[0]
                    mem[last]
                pstart()
                pwait()
                if not server:
                    start()
                    wait()
                    mem[0]
                    mem[last]
            t2 = clock()
            samples[i] = (t2 - t) / BATCH
            t = t2

    schemes = [("c", run_c), ("py", run_py), ("c_pers", run_c_pers), ("py_pers", run_py_pers)]
    nsamples = max(a.iters // BATCH, 1)
    csamples = ffi.new("double[]", nsamples)
    psamples = [0.0] * nsamples
    warm = max(nsamples // 10, 1)
    lat = {s: [] for s, _ in schemes}
    bad = 0
    block = 0
    for rep in range(a.reps):
        k = rep % len(schemes)
        for s, fn in schemes[k:] + schemes[:k]:
            block += 1
            buf[:] = (2 * block + rank) % 251
            comm.Barrier()
            c = s.startswith("c")
            fn(warm, csamples if c else psamples)
            fn(nsamples, csamples if c else psamples)
            got = [csamples[i] for i in range(nsamples)] if c else psamples
            lat[s].append(0.5e6 * statistics.median(got))
            if mem[0] != (2 * block + peer) % 251 or mem[last] != mem[0]:
                bad += 1
    bad = comm.allreduce(bad)
    preq.Free()
    req.Free()

    calls = per_call_costs(comm, win) if a.calls > 0 else None
    win.Unlock_all()
    comm.Barrier()
    transport = win.transport
    win.Free()
    if rank != 0:
        return 0

    provided = {MPI.THREAD_SINGLE: "single", MPI.THREAD_FUNNELED: "funneled",
                MPI.THREAD_SERIALIZED: "serialized", MPI.THREAD_MULTIPLE: "multiple"}
    print("# narma Python bindings vs C: notified ping-pong, half round trip")
    print("# MPI library     : %s" % MPI.Get_library_version().splitlines()[0].strip())
    print("# mpi4py %s, NumPy %s, Python %s, narma %s" % (
        mpi4py.__version__, np.__version__, sys.version.split()[0], narma.Get_version()))
    print("# thread level    : %s (asked %s; narma: %s)" % (
        provided.get(MPI.Query_thread()), a.thread_level, provided.get(narma.Query_thread())))
    print("# narma transport : %s" % transport)
    print("# %d B; %d reps x %d rounds per block (samples of %d rounds, median per block)"
          % (size, a.reps, nsamples * BATCH, BATCH))
    if bad:
        print("# DELIVERY CHECK FAILED in %d blocks" % bad)
    print("# %-10s %12s %12s %12s" % ("scheme", "median (us)", "min", "max"))
    for s, _ in schemes:
        print("  %-10s %12.3f %12.3f %12.3f" % (s, statistics.median(lat[s]), min(lat[s]),
                                               max(lat[s])))
    ratios = {}
    for py, c in (("py", "c"), ("py_pers", "c_pers"), ("py_pers", "c")):
        r = [p / q for p, q in zip(lat[py], lat[c])]
        ratios["%s/%s" % (py, c)] = r
        print("  ratio %-15s median of per-rep ratios %6.2f (min %.2f, max %.2f)"
              % ("%s/%s" % (py, c), statistics.median(r), min(r), max(r)))
    if calls:
        loop = calls.pop("loop")[2]
        print("\n# per-call cost, ns per call (median over reps of the fastest of 20 chunks "
              "of %d calls)" % a.calls)
        print("#   python loop of nothing: %.1f ns per iteration (included in the Python "
              "columns)" % loop)
        print("# %-34s %8s %10s %10s %12s" % ("call", "C loop", "cffi call", "method",
                                              "method - C"))
        for name, v in calls.items():
            print("  %-34s %8.1f %10.1f %10.1f %12.1f" % (name, v[0], v[1], v[2], v[2] - v[0]))
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("bench,scheme,size,metric,value\n")
            for s, _ in schemes:
                for i, v in enumerate(lat[s]):
                    f.write("python_pingpong,%s,%d,latency_us_rep%d,%.6f\n" % (s, size, i, v))
                f.write("python_pingpong,%s,%d,latency_us,%.6f\n"
                        % (s, size, statistics.median(lat[s])))
            for k, r in ratios.items():
                f.write("python_pingpong,%s,%d,ratio,%.6f\n" % (k, size, statistics.median(r)))
            if calls:
                f.write("python_calls,loop,0,ns,%.3f\n" % loop)
                for name, v in calls.items():
                    key = name.split(" ")[0]
                    for col, x in zip(("c_loop", "cffi", "method"), v):
                        f.write("python_calls,%s,0,%s_ns,%.3f\n" % (key, col, x))
            f.write("python_pingpong,delivery,%d,bad_blocks,%d\n" % (size, bad))
    return 1 if bad else 0


def per_call_costs(comm, win):
    """{probe: (C loop, bare cffi call, method) ns per call}, the Python loop's own cost under
    "loop"; on rank 0 (the others: None)."""
    comm.Barrier()
    if comm.Get_rank() != 0:
        comm.Barrier()
        return None
    n = a.calls
    w = win._w
    cnt = ffi.new("MPI_Count *")
    x = np.zeros(8, dtype=np.uint8)
    xaddr = narma._address(x)
    byte = MPI._handleof(MPI.BYTE)
    null = narma.PROC_NULL
    win.Put_notify(x, null, 0, tag=1)  # x is remembered from here on

    def c_loop(kind):
        def run():
            rc = lib.npy_bench_calls(kind, w, n)
            if rc:
                raise narma.Error(rc, "npy_bench_calls")
        return run

    # Every Python probe is a plain loop around the one call, as a program would write it.
    def loop_nothing():
        for _ in range(n):
            pass

    def cffi_empty():
        f = lib.npy_noop
        for _ in range(n):
            f()

    def cffi_progress():
        f = lib.NARMA_Progress
        for _ in range(n):
            f()

    def py_progress():
        f = narma.Progress
        for _ in range(n):
            f()

    def cffi_value():
        f = lib.NARMA_Win_get_notify_value
        for _ in range(n):
            f(w, 0, cnt)

    def py_value():
        f = win.Get_notify_value
        for _ in range(n):
            f(0)

    def cffi_flush():
        f = lib.NARMA_Win_flush
        for _ in range(n):
            f(null, w)

    def py_flush():
        f = win.Flush
        for _ in range(n):
            f(null)

    def cffi_put():
        f = lib.npy_rma_short
        for _ in range(n):
            f(3, xaddr, 8, byte, null, 0, w, 1)

    def py_put():
        f = win.Put_notify
        for _ in range(n):
            f(x, null, 0, tag=1)

    probes = [
        ("loop", (None, None, loop_nothing)),
        ("empty C function", (c_loop(4), cffi_empty, None)),
        ("NARMA_Progress", (c_loop(0), cffi_progress, py_progress)),
        ("Win_get_notify_value (counter 0)", (c_loop(1), cffi_value, py_value)),
        ("Win_flush(PROC_NULL)", (c_loop(2), cffi_flush, py_flush)),
        ("Put_notify(8 B to PROC_NULL)", (c_loop(3), cffi_put, py_put)),
    ]
    res = {name: ([], [], []) for name, _ in probes}
    for rep in range(max(a.reps, 3)):
        k = rep % len(probes)
        for name, fns in probes[k:] + probes[:k]:
            for col, fn in enumerate(fns):
                if fn is None:
                    continue
                best = float("inf")
                for _ in range(20):
                    t0 = time.perf_counter()
                    fn()
                    best = min(best, time.perf_counter() - t0)
                res[name][col].append(best / n * 1e9)
    comm.Barrier()
    return {name: tuple(statistics.median(c) if c else float("nan") for c in cols)
            for name, cols in res.items()}


if __name__ == "__main__":
    sys.exit(main())
