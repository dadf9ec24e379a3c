"""Halo plans over NumPy fields: every strategy, both layouts, float64 and float32, checked value
by value against the oracle of the C halo tests (tests/halo/test_halo_exchange.c: value(),
expected()), and bit-identical to the message-passing strategy (p2p) on the same input."""
import numpy as np
import pytest
from mpi4py import MPI

import narma

NZ, NY, NX, ITERS = 3, 5, 4, 3
STRATS = ["p2p", "fence", "pscw", "pscw_nb", "lock", "dynamic", "notify", "notify_fields"]


def value(f, z, gy, gx, it):
    """The C tests' value(): exact in float and double (integers below 2^23)."""
    h = ((int(f) * 131 + int(z)) * 1031 + int(gy)) * 1033 + int(gx) + int(it) * 7919
    return (h % 8388593)


def grid(size):
    py = 2 if size % 2 == 0 and size > 2 else 1
    return py, size // py


def geometry(cart):
    cy, cx = cart.Get_coords(cart.Get_rank())
    return cy, cx


def zyx_index(layout, z, j, i):
    return (z, j, i) if layout == "zyx" else (i, j, z)


def fill(plan, fields, cy, cx, it, rank):
    hy, hx = plan.halo
    for f, a in enumerate(fields):
        a[...] = -1.0 - rank
        z, j, i = np.meshgrid(np.arange(NZ), np.arange(NY), np.arange(NX), indexing="ij")
        gy = cy * NY + j
        gx = cx * NX + i
        v = np.vectorize(lambda zz, yy, xx: value(f, zz, yy, xx, it))(z, gy, gx).astype(a.dtype)
        if plan.layout == 0:
            a[:, hy:hy + NY, hx:hx + NX] = v
        else:
            a[hx:hx + NX, hy:hy + NY, :] = v.transpose(2, 1, 0)


def expected(plan, f, it, cy, cx, py, px, rank, dtype):
    """Whole expected field (periodic both ways, corners on, both directions)."""
    hy, hx = plan.halo
    out = np.empty((NZ, NY + 2 * hy, NX + 2 * hx), dtype=dtype)
    for z in range(NZ):
        for j in range(NY + 2 * hy):
            for i in range(NX + 2 * hx):
                y = (cy * NY + j - hy) % (py * NY)
                x = (cx * NX + i - hx) % (px * NX)
                out[z, j, i] = value(f, z, y, x, it)
    return out if plan.layout == 0 else np.ascontiguousarray(out.transpose(2, 1, 0))


@pytest.mark.parametrize("layout", ["zyx", "xyz"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_halo_strategies(comm, layout, dtype):
    size, rank = comm.Get_size(), comm.Get_rank()
    py, px = grid(size)
    cart = comm.Create_cart([py, px], periods=[True, True])
    cy, cx = geometry(cart)
    results = {}
    for s in STRATS:
        plan = narma.Halo(cart, (NZ, NY, NX), halo=(2, 1), dtype=dtype, nfields=2, corners=True,
                          layout=layout, strategy=s)
        assert plan.strategy == s
        fields = [plan.field(), plan.field()]
        for it in range(ITERS):
            fill(plan, fields, cy, cx, it, rank)
            if it % 2:
                plan.start(fields)
                plan.finish()
            else:
                plan.exchange(fields)
            for f in range(2):
                want = expected(plan, f, it, cy, cx, py, px, rank, dtype)
                assert np.array_equal(fields[f], want), "strategy %s field %d iteration %d" % (
                    s, f, it)
        results[s] = [a.tobytes() for a in fields]
        plan.Free()
    for s in STRATS:
        assert results[s] == results["p2p"], "%s differs from p2p bit for bit" % s
    cart.Free()


def test_halo_nonperiodic_sentinels(comm):
    """Halo cells with no neighbour are never written."""
    size, rank = comm.Get_size(), comm.Get_rank()
    cart = comm.Create_cart([1, size], periods=[False, False])
    plan = narma.Halo(cart, (1, 2, 3), halo=1, strategy="notify")
    f = plan.field()
    f[...] = -7.0
    plan.interior(f)[...] = rank
    plan.exchange(f)
    if rank == 0:
        assert np.all(f[0, 1:-1, 0] == -7.0)
    else:
        assert np.all(f[0, 1:-1, 0] == rank - 1)
    if rank == size - 1:
        assert np.all(f[0, 1:-1, -1] == -7.0)
    else:
        assert np.all(f[0, 1:-1, -1] == rank + 1)
    assert np.all(f[0, 0, :] == -7.0) and np.all(f[0, -1, :] == -7.0)  # no NS neighbours
    plan.Free()
    cart.Free()
