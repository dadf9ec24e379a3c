"""pytest under MPI: every rank runs the same tests in the same order (collective calls line up).

Run as `mpiexec -n N python -m pytest tests/python` (ctest does it through run.py at 2 and 4 ranks
on each narma transport). A failed assertion on one rank can leave the others in a collective:
ctest's timeout then ends the run, and the failing rank's report says why.
"""
import pytest
from mpi4py import MPI

import narma  # noqa: F401  (a missing or broken narma is an error, not a skip)


@pytest.fixture
def comm():
    c = MPI.COMM_WORLD.Dup()
    yield c
    c.Free()


def ring(comm):
    """(rank, size, right neighbour, left neighbour)."""
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n
