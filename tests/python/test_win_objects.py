"""What hangs off a window besides its memory: hints (Get_info / Set_info / the info property),
error handlers (Create_errhandler, Set/Get/Call_errhandler, ERRORS_RETURN, ERRORS_ARE_FATAL,
Errhandler.Free), attributes (predefined keys, Create_keyval with a delete function, Set/Get/
Delete_attr, Free_keyval), and the memory and datatype helpers Alloc_mem / Free_mem and
Type_free."""
import gc

import numpy as np
import pytest
from mpi4py import MPI

import narma

AAAR = "narma_access_after_access_reorder"


def ring(comm):
    r, n = comm.Get_rank(), comm.Get_size()
    return r, n, (r + 1) % n, (r - 1) % n


def reorder_value(info):
    """The access-after-access reorder hint, under its name or its alias (Open MPI's 36
    characters)."""
    v = info.Get(AAAR)
    return v if v is not None else info.Get("narma_reorder_aaar")


def test_info(comm):
    info = MPI.Info.Create()
    info.Set("narma_notify_completion", "flush")
    win = narma.Win.Allocate(64, 8, info=info, comm=comm)
    info.Free()
    used = win.Get_info()
    assert used.Get("narma_notify_completion") == "flush"
    assert reorder_value(used) == "false"
    used.Free()
    # the reorder keys change after creation; narma_notify_completion does not
    new = MPI.Info.Create()
    new.Set(AAAR, "true")
    new.Set("narma_notify_completion", "return")
    win.Set_info(new)
    new.Free()
    used = win.info
    assert reorder_value(used) == "true"
    assert used.Get("narma_notify_completion") == "flush"
    used.Free()
    bad = MPI.Info.Create()
    bad.Set(AAAR, "maybe")
    with pytest.raises(narma.Error) as e:
        win.info = bad
    assert e.value.error_class == narma.ERR_ARG
    bad.Free()
    win.Set_info(None)  # MPI_INFO_NULL: nothing changes
    used = win.Get_info()
    assert reorder_value(used) == "true"
    used.Free()
    comm.Barrier()
    win.Free()


def test_errhandler_called(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 4, 8, comm=comm)
    assert win.Get_errhandler() == narma.ERRORS_RETURN
    seen = []
    eh = narma.Win.Create_errhandler(lambda w, code: seen.append((w, code)))
    win.Set_errhandler(eh)
    eh.Free()  # the window keeps its own reference
    assert not eh
    got = win.Get_errhandler()
    assert got != narma.ERRORS_RETURN and got != narma.ERRORS_ARE_FATAL
    got.Free()
    x = np.zeros(1)
    with pytest.raises(narma.Error) as e:
        win.Put(x, right)  # no epoch
    assert e.value.error_class == narma.ERR_RMA_SYNC
    assert len(seen) == 1 and seen[0][0] is win and seen[0][1] == narma.ERR_RMA_SYNC
    win.Lock_all()
    with pytest.raises(narma.Error):
        win.Put_notify(x, right, 0, tag=-1)
    assert seen[-1][1] == narma.ERR_TAG
    # a count the int call cannot take and that has no _c form: refused through the handler too
    with pytest.raises(narma.Error) as e:
        win.Put_notify_idx([x, 2 ** 31, MPI.DOUBLE], right)
    assert e.value.error_class == narma.ERR_COUNT and seen[-1][1] == narma.ERR_COUNT
    win.Unlock_all()
    win.Call_errhandler(narma.ERR_DISP)
    assert seen[-1] == (win, narma.ERR_DISP)
    n = len(seen)
    win.Set_errhandler(narma.ERRORS_RETURN)
    with pytest.raises(narma.Error):
        win.Put(x, right)
    assert len(seen) == n  # no handler any more
    comm.Barrier()
    win.Free()


def test_errhandler_raising(comm):
    """What a handler raises comes out of the failing call, with the narma.Error as its cause."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8, 8, comm=comm)

    class Mine(Exception):
        pass

    def handler(w, code):
        raise Mine("class %d" % code)

    eh = narma.Win.Create_errhandler(handler)
    win.Set_errhandler(eh)
    with pytest.raises(Mine) as e:
        win.Put(np.zeros(1), right)  # no epoch
    assert isinstance(e.value.__cause__, narma.Error)
    assert e.value.__cause__.error_class == narma.ERR_RMA_SYNC
    with pytest.raises(Mine):
        win.Call_errhandler(narma.ERR_ARG)
    win.Lock_all()  # nothing pending afterwards: good calls do not raise
    win.Flush(right)
    win.Unlock_all()
    win.Set_errhandler(narma.ERRORS_ARE_FATAL)
    assert win.Get_errhandler() == narma.ERRORS_ARE_FATAL
    win.Set_errhandler(narma.ERRORS_RETURN)
    eh.Free()
    comm.Barrier()
    win.Free()


def test_attributes(comm):
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 3, 8, comm=comm)
    assert win.Get_attr(narma.WIN_BASE) == win.base != 0
    assert win.Get_attr(narma.WIN_SIZE) == 24
    assert win.Get_attr(narma.WIN_DISP_UNIT) == 8
    assert win.Get_attr(narma.WIN_CREATE_FLAVOR) == narma.WIN_FLAVOR_ALLOCATE
    assert win.Get_attr(narma.WIN_MODEL) in (narma.WIN_UNIFIED, narma.WIN_SEPARATE)
    assert win.Get_attr(narma.WIN_NOTIFICATION_NUM_UB) > 0
    assert win.Get_attr(narma.WIN_NOTIFICATION_VALUE_UB) > 0
    deleted = []
    kv = narma.Win.Create_keyval(delete_fn=lambda w, k, v: deleted.append((w, k, v)))
    plain = narma.Win.Create_keyval()
    assert win.Get_attr(kv) is None
    obj = {"rank": rank}
    win.Set_attr(kv, obj)
    assert win.Get_attr(kv) is obj
    win.Set_attr(kv, [1, 2])  # replaces: the old value is deleted
    assert deleted == [(win, kv, obj)]
    assert win.Get_attr(kv) == [1, 2]
    win.Delete_attr(kv)
    assert deleted[-1] == (win, kv, [1, 2]) and win.Get_attr(kv) is None
    win.Set_attr(kv, "last")
    win.Set_attr(plain, 42.5)
    assert win.Get_attr(plain) == 42.5
    with pytest.raises(narma.Error) as e:
        win.Set_attr(narma.WIN_BASE, 0)  # predefined attributes are read-only
    assert e.value.error_class == narma.ERR_KEYVAL
    comm.Barrier()
    win.Free()  # the attributes go with the window
    assert deleted[-1] == (win, kv, "last")
    assert narma.Win.Free_keyval(kv) == narma.KEYVAL_INVALID
    narma.Win.Free_keyval(plain)


def test_attribute_delete_raising(comm):
    win = narma.Win.Allocate(8, 8, comm=comm)

    def bad(w, k, v):
        raise ValueError("delete_fn of %r" % (v,))

    kv = narma.Win.Create_keyval(delete_fn=bad)
    win.Set_attr(kv, "x")
    with pytest.raises(ValueError):
        win.Delete_attr(kv)
    assert win.Get_attr(kv) is None
    narma.Win.Free_keyval(kv)
    comm.Barrier()
    win.Free()


def test_alloc_mem_window(comm):
    """Memory from Alloc_mem under a Create window, then given back."""
    rank, size, right, left = ring(comm)
    mem = narma.Alloc_mem(8 * 4)
    assert mem.nbytes == 32 and mem.dtype == np.uint8
    view = mem.view(np.float64)
    view[:] = 0
    win = narma.Win.Create(mem, 8, comm=comm)
    win.Fence()
    win.Put(np.full(4, float(rank)), right)
    win.Fence()
    assert np.array_equal(view, np.full(4, float(left)))
    win.Free()
    del view
    narma.Free_mem(mem)
    with pytest.raises(narma.Error) as e:
        narma.Free_mem(np.zeros(4))
    assert e.value.error_class == narma.ERR_ARG
    narma.Free_mem(narma.Alloc_mem(0))


def test_type_free(comm):
    """A derived datatype used by narma, freed through narma.Type_free: the mpi4py object
    becomes DATATYPE_NULL, and the next type (which may get the same handle) is learnt afresh."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(8 * 8, 8, comm=comm)
    mem = win.tomemory(np.float64)
    for it in range(3):
        mem[:] = -1
        dup = MPI.DOUBLE.Dup().Commit()  # MPI_Type_dup: no count, so no MPI-4 _c constructor
        comm.Barrier()
        win.Lock_all()
        win.Put(np.arange(3.0) + rank + it, right, (2, 3, dup))
        win.Flush(right)
        win.Unlock_all()
        comm.Barrier()
        want = np.full(8, -1.0)
        want[2:5] = np.arange(3.0) + left + it
        assert np.array_equal(mem, want)
        narma.Type_free(dup)
        assert dup == MPI.DATATYPE_NULL
        comm.Barrier()
    comm.Barrier()
    win.Free()


def test_derived_types_from_mpi4py(comm):
    """mpi4py 4 builds derived types with MPI-4's large-count constructors (MPI_Type_vector_c
    ...) where the MPI has them (MPICH; Open MPI 5 has not, and gets the int ones). MPICH
    refuses MPI_Type_get_envelope on those; narma learns every type with
    MPI_Type_get_envelope_c and MPI_Type_get_contents_c there (src/util/dtype.c). A vector on
    the target side of a Put, a subarray on the origin side of a Get, an indexed block on the
    target side of an Accumulate: the bytes land where MPI's type map says."""
    rank, size, right, left = ring(comm)
    win = narma.Win.Allocate(16 * 8, 8, comm=comm)
    mem = win.tomemory(np.float64)
    mem[:] = -1
    vec = MPI.DOUBLE.Create_vector(3, 1, 2).Commit()
    sub = MPI.DOUBLE.Create_subarray([3, 4], [2, 2], [1, 1]).Commit()  # rows 1-2, columns 1-2
    blk = MPI.DOUBLE.Create_indexed_block(2, [0, 3]).Commit()  # [0, 2) and [3, 5)
    comm.Barrier()
    win.Lock_all()
    win.Put(np.arange(3.0) + rank, right, (0, 1, vec))
    win.Flush(right)
    win.Unlock_all()
    comm.Barrier()
    assert np.array_equal(mem[0:6:2], np.arange(3.0) + left)
    assert np.all(mem[1:6:2] == -1) and np.all(mem[6:] == -1)

    mem[:] = np.arange(16.0) + 100 * rank
    comm.Barrier()
    got = np.zeros(12)
    win.Lock_all()
    win.Get([got, 1, sub], right, (0, 4, MPI.DOUBLE))
    win.Flush(right)
    win.Accumulate(np.ones(4), right, (8, 1, blk), op=MPI.SUM)
    win.Flush(right)
    win.Unlock_all()
    comm.Barrier()
    want = np.zeros(12)
    want[[5, 6, 9, 10]] = np.arange(4.0) + 100 * right
    assert np.array_equal(got, want)
    want = np.arange(16.0) + 100 * rank
    want[[8, 9, 11, 12]] += 1
    assert np.array_equal(mem, want)
    comm.Barrier()
    for t in (vec, sub, blk):
        narma.Type_free(t)
    win.Free()
    gc.collect()
