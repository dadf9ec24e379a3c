! narma-test: np=2,3,4 timeout=120
!> Module narma from Fortran: windows (allocate, create on a Fortran array, dynamic with
!> attach/detach), attributes, group, name, transport, and every data call (put, get,
!> accumulate, get_accumulate, fetch_and_op, compare_and_swap and the R* forms) in fence and
!> lock_all epochs, each result checked. Every rank writes to its right neighbour in a ring.
program test_f_rma
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use narma
  implicit none
  integer, parameter :: n = 8
  integer(kind=MPI_ADDRESS_KIND), parameter :: dbl = 8, zero = 0
  type(NARMA_Win) :: win, cwin, dwin
  type(NARMA_Request) :: reqs(4)
  type(c_ptr) :: base
  real(c_double), pointer, asynchronous :: a(:)  ! window memory: see module narma
  real(c_double), target, asynchronous :: c(n), buf(n), res(n)
  integer(c_int64_t), target, asynchronous :: dyn(n), one, old, cmp
  integer(kind=MPI_ADDRESS_KIND) :: val, dyn_addr
  integer :: rank, nprocs, right, left, ierr, i, rlen
  logical :: flag
  type(MPI_Group) :: g, wg, diff
  integer :: cmpres
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call NARMA_Init(ierr)
  call check(ierr == NARMA_SUCCESS, "NARMA_Init")
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ! ---- Win_allocate, fence, put/get/accumulate -------------------------------
  call NARMA_Win_allocate(n * dbl, 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win, ierr)
  call check(ierr == NARMA_SUCCESS .and. win /= NARMA_WIN_NULL, "Win_allocate")
  call c_f_pointer(base, a, [n])
  a = -1
  call NARMA_Win_fence(NARMA_MODE_NOPRECEDE, win, ierr)
  call check(ierr == NARMA_SUCCESS, "fence")
  buf = [(100 * rank + i, i = 1, n)]
  call NARMA_Put(buf, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, win, ierr)
  call check(ierr == NARMA_SUCCESS, "Put")
  call NARMA_Win_fence(0, win, ierr)
  call check(all(a == [(100 * left + i, i = 1, n)]), "Put data")
  res = 0
  call NARMA_Get(res, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, win, ierr)
  call check(ierr == NARMA_SUCCESS, "Get")
  call NARMA_Win_fence(0, win, ierr)
  call check(all(res == buf), "Get data (own values back from the right)")
  ! a scalar and a 2-D section-free array are buffers too
  call NARMA_Accumulate(buf(1), 1, MPI_DOUBLE_PRECISION, right, 1_MPI_ADDRESS_KIND, 1, &
       MPI_DOUBLE_PRECISION, MPI_SUM, win, ierr)
  call check(ierr == NARMA_SUCCESS, "Accumulate")
  call NARMA_Win_fence(0, win, ierr)
  call check(a(2) == 200 * left + 3, "Accumulate data")
  call MPI_Barrier(MPI_COMM_WORLD)  ! checked before the left neighbour's next epoch writes
  res = 0
  call NARMA_Get_accumulate(buf, 2, MPI_DOUBLE_PRECISION, res, 2, MPI_DOUBLE_PRECISION, right, &
       zero, 2, MPI_DOUBLE_PRECISION, MPI_REPLACE, win, ierr)
  call check(ierr == NARMA_SUCCESS, "Get_accumulate")
  call NARMA_Win_fence(NARMA_MODE_NOSUCCEED, win, ierr)
  call check(res(1) == 100 * rank + 1 .and. res(2) == 2 * (100 * rank + 1) + 1, "Get_accumulate result")
  call check(a(1) == 100 * left + 1 .and. a(2) == 100 * left + 2, "Get_accumulate data")
  call MPI_Barrier(MPI_COMM_WORLD)

  ! ---- attributes, group, name, transport --------------------------------------
  call NARMA_Win_get_attr(win, NARMA_WIN_SIZE, val, flag, ierr)
  call check(ierr == NARMA_SUCCESS .and. flag .and. val == n * dbl, "attr WIN_SIZE")
  call NARMA_Win_get_attr(win, MPI_WIN_DISP_UNIT, val, flag, ierr)
  call check(ierr == NARMA_SUCCESS .and. flag .and. val == 8, "attr MPI_WIN_DISP_UNIT (mpi_f08 keyval)")
  call NARMA_Win_get_attr(win, NARMA_WIN_BASE, val, flag, ierr)
  call check(ierr == NARMA_SUCCESS .and. flag .and. val == transfer(base, val), "attr WIN_BASE")
  call NARMA_Win_get_attr(win, NARMA_WIN_CREATE_FLAVOR, val, flag, ierr)
  call check(flag .and. val == NARMA_WIN_FLAVOR_ALLOCATE, "attr flavor")
  call NARMA_Win_get_group(win, g, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, wg)
  call MPI_Group_compare(g, wg, cmpres)
  call check(ierr == NARMA_SUCCESS .and. cmpres == MPI_IDENT, "Win_get_group")
  call MPI_Group_free(g)
  call MPI_Group_free(wg)
  call NARMA_Win_set_name(win, "fortran window   ", ierr)
  call NARMA_Win_get_name(win, name, rlen, ierr)
  call check(ierr == NARMA_SUCCESS .and. name == "fortran window" .and. rlen == 14, "Win_get/set_name")
  call check(NARMA_Win_get_transport(win) == "shm" .or. NARMA_Win_get_transport(win) == "mpi" &
       .or. NARMA_Win_get_transport(win) == "shm+mpi", "Win_get_transport: " // NARMA_Win_get_transport(win))
  call check(NARMA_Win_get_target_transport(win, nprocs) == "invalid", "target transport of a bad rank")
  call check(len(NARMA_Get_version()) > 0, "Get_version")

  ! ---- lock_all: R* forms, atomics ---------------------------------------------
  call NARMA_Win_lock_all(0, win, ierr)
  call check(ierr == NARMA_SUCCESS, "lock_all")
  buf = [(1000 * rank + i, i = 1, n)]
  call NARMA_Rput(buf, 4, MPI_DOUBLE_PRECISION, right, zero, 4, MPI_DOUBLE_PRECISION, win, reqs(1), ierr)
  call check(ierr == NARMA_SUCCESS .and. reqs(1) /= NARMA_REQUEST_NULL, "Rput")
  call NARMA_Wait(reqs(1), ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. reqs(1) == NARMA_REQUEST_NULL, "Wait on Rput")
  call NARMA_Win_flush(right, win, ierr)
  res = 0
  call NARMA_Rget(res, 4, MPI_DOUBLE_PRECISION, right, zero, 4, MPI_DOUBLE_PRECISION, win, reqs(1), ierr)
  call NARMA_Raccumulate(buf(5:8), 4, MPI_DOUBLE_PRECISION, right, 4_MPI_ADDRESS_KIND, 4, &
       MPI_DOUBLE_PRECISION, MPI_REPLACE, win, reqs(2), ierr)
  call NARMA_Waitall(2, reqs, ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. all(res(1:4) == buf(1:4)), "Rget after Rput")
  call NARMA_Win_flush_all(win, ierr)
  res = 0
  call NARMA_Rget_accumulate(buf, 0, MPI_DOUBLE_PRECISION, res, 4, MPI_DOUBLE_PRECISION, right, &
       4_MPI_ADDRESS_KIND, 4, MPI_DOUBLE_PRECISION, MPI_NO_OP, win, reqs(3), ierr)
  call NARMA_Wait(reqs(3), ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. all(res(1:4) == buf(5:8)), "Rget_accumulate NO_OP after Raccumulate")
  call NARMA_Win_unlock_all(win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD)
  call check(all(a == [(1000 * left + i, i = 1, n)]), "R* data at the target")
  call NARMA_Win_free(win, ierr)
  call check(ierr == NARMA_SUCCESS .and. win == NARMA_WIN_NULL, "Win_free")

  ! ---- Win_create on a Fortran array, with PSCW-free fence --------------------
  c = 0
  call NARMA_Win_create(c, n * dbl, 8, MPI_INFO_NULL, MPI_COMM_WORLD, cwin, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_create")
  call NARMA_Win_get_attr(cwin, NARMA_WIN_BASE, val, flag, ierr)
  call check(flag .and. val == transfer(c_loc(c), val), "Win_create base is the array")
  call NARMA_Win_fence(0, cwin, ierr)
  buf = rank + 1
  call NARMA_Put(buf, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, cwin, ierr)
  call NARMA_Win_fence(0, cwin, ierr)
  call check(all(c == left + 1), "Put into a Win_create window")
  call NARMA_Win_free(cwin, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_free (create)")

  ! ---- dynamic window: attach, addresses through MPI, atomics -------------------
  call NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, dwin, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_create_dynamic")
  dyn = 0
  call NARMA_Win_attach(dwin, dyn, n * 8_MPI_ADDRESS_KIND, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_attach")
  call MPI_Get_address(dyn, dyn_addr)
  call MPI_Sendrecv_replace(dyn_addr, 1, MPI_AINT, left, 0, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  ! now dyn_addr is the right neighbour's array
  call NARMA_Win_lock(NARMA_LOCK_SHARED, right, 0, dwin, ierr)
  call check(ierr == NARMA_SUCCESS, "lock")
  one = 1
  do i = 1, 3
     call NARMA_Fetch_and_op(one, old, MPI_INTEGER8, right, dyn_addr, MPI_SUM, dwin, ierr)
     call NARMA_Win_flush(right, dwin, ierr)
     call check(ierr == NARMA_SUCCESS .and. old == i - 1, "Fetch_and_op")
  end do
  cmp = 3
  one = 42
  call NARMA_Compare_and_swap(one, cmp, old, MPI_INTEGER8, right, dyn_addr + 8, dwin, ierr)
  call NARMA_Win_flush(right, dwin, ierr)
  call check(ierr == NARMA_SUCCESS .and. old == 0, "Compare_and_swap (no swap)")
  cmp = 0
  call NARMA_Compare_and_swap(one, cmp, old, MPI_INTEGER8, right, dyn_addr + 8, dwin, ierr)
  call NARMA_Win_unlock(right, dwin, ierr)
  call check(ierr == NARMA_SUCCESS .and. old == 0, "Compare_and_swap (swap)")
  call MPI_Barrier(MPI_COMM_WORLD)
  call check(dyn(1) == 3 .and. dyn(2) == 42, "atomics at the target")
  call MPI_Barrier(MPI_COMM_WORLD)
  call NARMA_Win_detach(dwin, dyn, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_detach")
  call NARMA_Win_free(dwin, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_free (dynamic)")

  if (rank == 0) print '(a)', "test_f_rma: No Errors"
  call NARMA_Finalize(ierr)  ! finalises MPI too: NARMA_Init initialised it
  call check(ierr == NARMA_SUCCESS, "NARMA_Finalize")

contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       print '(a,i0,a,a,a,i0)', "FAIL rank ", rank, ": ", what, " ierr=", ierr
       call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program test_f_rma
