"""narma from Python: a notified-access ping-pong and a halo exchange on NumPy fields.

    mpiexec -n 2 python examples/python/pingpong_halo.py [--sizes 8,64,1K,64K] [--iters N]
                                                       [--plot out.png] [--quick]

Part 1, ping-pong (the scheme of Listing 1 of the notified-access paper, as bench/micro/pingpong's
narma_notify): rank 0 and 1 hold lock_all on one window; each round a rank sends with Put_notify +
Flush and the peer waits on a persistent notification request (Start, Wait). Prints the one-way
latency (half the round trip) per message size, for Put_notify and for its persistent form
(Put_notify_init + Start/Wait).

Part 2, halo exchange: a 2-D periodic grid of all ranks, a field of (nz, ny, nx) with halo 2 and
corners, one narma.Halo plan per strategy; prints the time per exchange and checks every strategy
gives the same bytes as message passing (p2p).

With matplotlib the latency plot goes to --plot (default pingpong.png); without it, a text table.
"""
import argparse
import time

import numpy as np
from mpi4py import MPI

import narma

TAG = 99


def parse_size(s):
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1:], 1)
    return int(s[:-1] if mult > 1 else s) * mult


def pingpong(comm, sizes, iters):
    rank = comm.Get_rank()
    peer = 1 - rank
    maxsize = max(sizes)
    win = narma.Win.Allocate(maxsize, 1, comm=comm)
    win.Lock_all(narma.MODE_NOCHECK)
    req = win.Notify_init(peer, TAG, 1)
    sbuf = np.zeros(maxsize, dtype=np.uint8)
    rows = []
    transport = win.transport
    for size in sizes:
        msg = sbuf[:size]
        n = max(20, iters if size <= 131072 else iters * 131072 // size)
        put, flush, start, wait = win.Put_notify, win.Flush, req.Start, req.Wait
        lat = {}
        # Put_notify + Flush each round
        for rep in range(2):  # the first repetition warms up
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(n):
                if rank == 1:
                    start()
                    wait()
                put(msg, peer, 0, tag=TAG)
                flush(peer)
                if rank == 0:
                    start()
                    wait()
            lat["put_notify"] = (time.perf_counter() - t0) / n / 2 * 1e6
        # persistent: Put_notify_init once, Start/Wait each round
        preq = win.Put_notify_init(msg, peer, 0, tag=TAG)
        pstart, pwait = preq.Start, preq.Wait
        for rep in range(2):
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(n):
                if rank == 1:
                    start()
                    wait()
                pstart()
                pwait()
                if rank == 0:
                    start()
                    wait()
            lat["persistent"] = (time.perf_counter() - t0) / n / 2 * 1e6
        preq.Free()
        rows.append((size, lat["put_notify"], lat["persistent"]))
    req.Free()
    win.Unlock_all()
    win.Free()
    return transport, rows


def halo(comm, shape, iters):
    size, rank = comm.Get_size(), comm.Get_rank()
    dims = MPI.Compute_dims(size, 2)
    cart = comm.Create_cart(dims, periods=[True, True])
    rows, ref = [], None
    rng = np.random.default_rng(1234 + rank)
    init = rng.standard_normal(shape)
    for s in narma.halo.STRATEGIES[1:]:
        plan = narma.Halo(cart, shape, halo=2, corners=True, strategy=s)
        f = plan.field()
        plan.interior(f)[...] = init
        plan.exchange(f)
        cart.Barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            plan.exchange(f)
        dt = (time.perf_counter() - t0) / iters * 1e6
        plan.Free()
        if ref is None:
            ref = f.tobytes()
        same = cart.allreduce(f.tobytes() == ref, op=MPI.LAND)
        rows.append((s, cart.allreduce(dt, op=MPI.MAX), same))
    cart.Free()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="8,64,512,4K,32K,256K")
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--halo-shape", default="8,64,64", help="nz,ny,nx of each rank's interior")
    ap.add_argument("--plot", default="pingpong.png")
    ap.add_argument("--quick", action="store_true", help="tiny run (smoke test)")
    a = ap.parse_args()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    iters = 50 if a.quick else a.iters
    shape = (2, 8, 8) if a.quick else tuple(int(v) for v in a.halo_shape.split(","))

    if comm.Get_size() >= 2:
        pair = comm.Split(0 if rank < 2 else MPI.UNDEFINED, rank)
        res = pingpong(pair, sizes, iters) if pair != MPI.COMM_NULL else None
        if pair != MPI.COMM_NULL:
            pair.Free()
        if rank == 0:
            transport, rows = res
            print("ping-pong between ranks 0 and 1, one-way latency (us), narma transport %s"
                  % transport)
            print("%10s %14s %14s" % ("bytes", "Put_notify", "persistent"))
            for size, l1, l2 in rows:
                print("%10d %14.2f %14.2f" % (size, l1, l2))
            try:
                import matplotlib

                matplotlib.use("Agg")
                import matplotlib.pyplot as plt

                fig, ax = plt.subplots()
                ax.loglog([r[0] for r in rows], [r[1] for r in rows], "o-", label="Put_notify")
                ax.loglog([r[0] for r in rows], [r[2] for r in rows], "s-",
                          label="Put_notify_init + Start/Wait")
                ax.set_xlabel("message size (bytes)")
                ax.set_ylabel("one-way latency (us)")
                ax.set_title("narma notified ping-pong from Python")
                ax.legend()
                fig.savefig(a.plot, dpi=100)
                print("plot written to", a.plot)
            except ImportError:
                print("(matplotlib not available: table only)")
    rows = halo(comm, shape, 5 if a.quick else 200)
    if rank == 0:
        print("halo exchange of a %s field per rank, halo 2, corners; time per exchange (us)"
              % (shape,))
        for s, dt, same in rows:
            print("%14s %10.1f   %s" % (s, dt, "identical to p2p" if same else "DIFFERS from p2p"))
    if not all(r[2] for r in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
