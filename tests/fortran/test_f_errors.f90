! narma-test: np=2 timeout=60
!> Module narma from Fortran: bad input gives narma's error class in ierror (never an abort
!> when ierror is present), the constants agree with their mpi_f08 twins where both exist, the
!> error classes with C's (their strings), and the library calls (error strings, version,
!> Alloc_mem/Free_mem, Type_free, Progress, keyvals and attributes) work.
program test_f_errors
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use narma
  implicit none
  integer, parameter :: n = 8
  type(NARMA_Win) :: win, bad
  type(NARMA_Request) :: req, reqs(2)
  type(c_ptr) :: base, mem
  real(c_double), target, asynchronous :: v(2 * n), r(n)
  integer(c_int), target, asynchronous :: iv(2)
  integer(kind=MPI_ADDRESS_KIND) :: val
  type(MPI_Datatype) :: t
  character(len=NARMA_MAX_ERROR_STRING) :: msg
  character(len=:), allocatable :: s
  integer :: rank, nprocs, right, ierr, i, rlen, key, idx, outc, ind(2)
  logical :: flag
  integer(kind=MPI_ADDRESS_KIND), parameter :: z = 0

  call NARMA_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)

  ! ---- constants ----------------------------------------------------------------
  call check(NARMA_SUCCESS == 0, "NARMA_SUCCESS is 0")
  call check(NARMA_LOCK_SHARED == MPI_LOCK_SHARED .and. NARMA_LOCK_EXCLUSIVE == MPI_LOCK_EXCLUSIVE, &
       "lock types as mpi_f08's")
  call check(NARMA_MODE_NOCHECK == MPI_MODE_NOCHECK .and. NARMA_MODE_NOSTORE == MPI_MODE_NOSTORE &
       .and. NARMA_MODE_NOPUT == MPI_MODE_NOPUT .and. NARMA_MODE_NOPRECEDE == MPI_MODE_NOPRECEDE &
       .and. NARMA_MODE_NOSUCCEED == MPI_MODE_NOSUCCEED, "assert flags as mpi_f08's")
  call check(NARMA_ANY_SOURCE == MPI_ANY_SOURCE .and. NARMA_ANY_TAG == MPI_ANY_TAG &
       .and. NARMA_UNDEFINED == MPI_UNDEFINED, "wildcards as mpi_f08's")
  call check(NARMA_WIN_FLAVOR_CREATE == MPI_WIN_FLAVOR_CREATE .and. &
       NARMA_WIN_FLAVOR_ALLOCATE == MPI_WIN_FLAVOR_ALLOCATE .and. &
       NARMA_WIN_FLAVOR_DYNAMIC == MPI_WIN_FLAVOR_DYNAMIC .and. &
       NARMA_WIN_SEPARATE == MPI_WIN_SEPARATE .and. NARMA_WIN_UNIFIED == MPI_WIN_UNIFIED, &
       "flavors and models as mpi_f08's")
  call check(NARMA_TAG_UB == 1073741823, "NARMA_TAG_UB")
  ! every class below LASTCODE has its own text in C, and codes beyond are unknown
  do i = 1, NARMA_ERR_LASTCODE - 1
     call NARMA_Error_string(i, msg, rlen, ierr)
     call check(ierr == NARMA_SUCCESS .and. rlen > 0 .and. rlen == len_trim(msg), "Error_string")
     call check(index(msg, "unknown") == 0, "error class known to C: " // trim(msg))
     call check(NARMA_Strerror(i) == msg(1:rlen), "Strerror")
  end do
  call check(index(NARMA_Strerror(NARMA_ERR_LASTCODE + 5), "unknown") > 0, "unknown error class")
  call check(NARMA_Strerror(NARMA_ERR_TAG) /= NARMA_Strerror(NARMA_ERR_RANK), "distinct texts")
  call check(len(NARMA_Get_version()) >= 5, "version " // NARMA_Get_version())
  call NARMA_Progress(ierr)
  call check(ierr == NARMA_SUCCESS, "Progress")

  ! ---- library calls ---------------------------------------------------------------
  call NARMA_Alloc_mem(1024_MPI_ADDRESS_KIND, MPI_INFO_NULL, mem, ierr)
  call check(ierr == NARMA_SUCCESS .and. c_associated(mem), "Alloc_mem")
  block
    real(c_double), pointer :: p(:)
    call c_f_pointer(mem, p, [128])
    p = 1
    call NARMA_Free_mem(p, ierr)
    call check(ierr == NARMA_SUCCESS, "Free_mem")
  end block
  call MPI_Type_contiguous(2, MPI_DOUBLE_PRECISION, t)
  call MPI_Type_commit(t)
  call NARMA_Type_free(t, ierr)
  call check(ierr == NARMA_SUCCESS .and. t == MPI_DATATYPE_NULL, "Type_free")

  ! ---- window calls on bad input ---------------------------------------------------
  bad = NARMA_WIN_NULL
  call NARMA_Win_fence(0, bad, ierr)
  call expect(NARMA_ERR_WIN, "fence on NARMA_WIN_NULL")
  call NARMA_Put(v, n, MPI_DOUBLE_PRECISION, right, z, n, MPI_DOUBLE_PRECISION, bad, ierr)
  call expect(NARMA_ERR_WIN, "Put on NARMA_WIN_NULL")
  call NARMA_Win_get_name(NARMA_WIN_NULL, msg, rlen, ierr)
  call check(ierr == NARMA_SUCCESS .and. msg(1:rlen) == "NARMA_WIN_NULL", "get_name of WIN_NULL")
  call NARMA_Win_allocate(-8_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win, ierr)
  call check(ierr /= NARMA_SUCCESS .and. win == NARMA_WIN_NULL, "Win_allocate with a negative size")

  call NARMA_Win_allocate(int(8 * n, MPI_ADDRESS_KIND), 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_allocate")
  call NARMA_Put(v, n, MPI_DOUBLE_PRECISION, right, z, n, MPI_DOUBLE_PRECISION, win, ierr)
  call expect(NARMA_ERR_RMA_SYNC, "Put outside an epoch")
  call NARMA_Win_unlock(right, win, ierr)
  call expect(NARMA_ERR_RMA_SYNC, "unlock without lock")
  call NARMA_Win_test(win, flag, ierr)
  call expect(NARMA_ERR_RMA_SYNC, "Win_test without post")
  call NARMA_Win_attach(win, v, 8_MPI_ADDRESS_KIND, ierr)
  call expect(NARMA_ERR_ATTACH, "attach to an allocated window")

  call NARMA_Win_lock_all(0, win, ierr)
  call check(ierr == NARMA_SUCCESS, "lock_all")
  call NARMA_Win_lock_all(0, win, ierr)
  call check(ierr /= NARMA_SUCCESS, "lock_all twice")
  call NARMA_Put(v, n, MPI_DOUBLE_PRECISION, nprocs, z, n, MPI_DOUBLE_PRECISION, win, ierr)
  call expect(NARMA_ERR_RANK, "Put to rank nprocs")
  call NARMA_Put(v, -1, MPI_DOUBLE_PRECISION, right, z, -1, MPI_DOUBLE_PRECISION, win, ierr)
  call expect(NARMA_ERR_COUNT, "Put with a negative count")
  call NARMA_Put(v, n, MPI_DATATYPE_NULL, right, z, n, MPI_DOUBLE_PRECISION, win, ierr)
  call expect(NARMA_ERR_TYPE, "Put with MPI_DATATYPE_NULL")
  call NARMA_Put(v, n, MPI_DOUBLE_PRECISION, right, 1_MPI_ADDRESS_KIND, n, MPI_DOUBLE_PRECISION, win, ierr)
  call expect(NARMA_ERR_DISP, "Put beyond the window")
  call NARMA_Put(v(1:2*n:2), n, MPI_DOUBLE_PRECISION, right, z, n, MPI_DOUBLE_PRECISION, win, ierr)
  call expect(NARMA_ERR_ARG, "Put from a non-contiguous section")
  call NARMA_Get(r(1:n:2), 4, MPI_DOUBLE_PRECISION, right, z, 4, MPI_DOUBLE_PRECISION, win, ierr)
  call expect(NARMA_ERR_ARG, "Get into a non-contiguous section")
  call NARMA_Accumulate(v, n, MPI_DOUBLE_PRECISION, right, z, n, MPI_DOUBLE_PRECISION, MPI_OP_NULL, &
       win, ierr)
  call expect(NARMA_ERR_OP, "Accumulate with MPI_OP_NULL")
  call NARMA_Put_notify(v, n, MPI_DOUBLE_PRECISION, right, z, n, MPI_DOUBLE_PRECISION, win, &
       NARMA_TAG_UB + 1, ierr)
  call expect(NARMA_ERR_TAG, "Put_notify with tag NARMA_TAG_UB+1")
  call NARMA_Put_notify(v, n, MPI_DOUBLE_PRECISION, right, z, n, MPI_DOUBLE_PRECISION, win, -3, ierr)
  call expect(NARMA_ERR_TAG, "Put_notify with a negative tag")
  call NARMA_Put_notify_init(v, n, MPI_DOUBLE_PRECISION, right, z, n, MPI_DOUBLE_PRECISION, win, &
       NARMA_ANY_TAG, req, ierr)
  call expect(NARMA_ERR_TAG, "Put_notify_init with NARMA_ANY_TAG")
  call NARMA_Notify_init(win, nprocs + 3, 1, 1, req, ierr)
  call expect(NARMA_ERR_RANK, "Notify_init from a bad rank")
  call NARMA_Notify_init(win, 0, NARMA_TAG_UB + 1, 1, req, ierr)
  call expect(NARMA_ERR_TAG, "Notify_init with a bad tag")
  ! MPI_PROC_NULL is a valid target that does nothing
  call NARMA_Put(v, n, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, z, n, MPI_DOUBLE_PRECISION, win, ierr)
  call check(ierr == NARMA_SUCCESS, "Put to MPI_PROC_NULL")
  call NARMA_Win_unlock_all(win, ierr)
  call check(ierr == NARMA_SUCCESS, "unlock_all")

  ! ---- requests -------------------------------------------------------------------
  req = NARMA_REQUEST_NULL
  call NARMA_Request_free(req, ierr)
  call expect(NARMA_ERR_REQUEST, "Request_free(NARMA_REQUEST_NULL)")
  call NARMA_Wait(req, ierror=ierr)
  call check(ierr == NARMA_SUCCESS, "Wait on NARMA_REQUEST_NULL returns at once")
  reqs = NARMA_REQUEST_NULL
  call NARMA_Testany(2, reqs, idx, flag, ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. flag .and. idx == NARMA_UNDEFINED, "Testany on null requests")
  call NARMA_Testsome(2, reqs, outc, ind, ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. outc == NARMA_UNDEFINED, "Testsome on null requests")
  call NARMA_Waitall(-1, reqs, ierror=ierr)
  call check(ierr /= NARMA_SUCCESS, "Waitall with a negative count")
  call NARMA_Start(req, ierr)
  call check(ierr /= NARMA_SUCCESS, "Start(NARMA_REQUEST_NULL)")

  ! Win_free refuses while an active notification request remains (NARMA_ERR_PENDING)
  call NARMA_Notify_init(win, NARMA_ANY_SOURCE, 5, 1, req, ierr)
  call NARMA_Start(req, ierr)
  call check(ierr == NARMA_SUCCESS, "Start")
  call NARMA_Win_free(win, ierr)
  call expect(NARMA_ERR_PENDING, "Win_free with an active request")
  call check(win /= NARMA_WIN_NULL, "a refused Win_free keeps the handle")
  call NARMA_Request_free(req, ierr)
  call check(ierr == NARMA_SUCCESS .and. req == NARMA_REQUEST_NULL, "Request_free (active)")

  ! ---- attributes and keyvals ----------------------------------------------------------
  call NARMA_Win_set_attr(win, NARMA_WIN_SIZE, 5_MPI_ADDRESS_KIND, ierr)
  call expect(NARMA_ERR_KEYVAL, "set a predefined attribute")
  call NARMA_Win_set_attr(win, MPI_WIN_BASE, 5_MPI_ADDRESS_KIND, ierr)
  call expect(NARMA_ERR_KEYVAL, "set a predefined attribute (mpi_f08 keyval)")
  call NARMA_Win_get_attr(win, MPI_WIN_MODEL, val, flag, ierr)
  call check(ierr == NARMA_SUCCESS .and. flag .and. (val == NARMA_WIN_UNIFIED .or. &
       val == NARMA_WIN_SEPARATE), "get MPI_WIN_MODEL")
  call NARMA_Win_create_keyval(key, 7_MPI_ADDRESS_KIND, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_create_keyval")
  call NARMA_Win_get_attr(win, key, val, flag, ierr)
  call check(ierr == NARMA_SUCCESS .and. .not. flag, "unset attribute")
  call NARMA_Win_set_attr(win, key, 123456789012_MPI_ADDRESS_KIND, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_set_attr")
  call NARMA_Win_get_attr(win, key, val, flag, ierr)
  call check(ierr == NARMA_SUCCESS .and. flag .and. val == 123456789012_MPI_ADDRESS_KIND, &
       "attribute value round trip")
  call NARMA_Win_delete_attr(win, key, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_delete_attr")
  call NARMA_Win_get_attr(win, key, val, flag, ierr)
  call check(ierr == NARMA_SUCCESS .and. .not. flag, "deleted attribute")
  call NARMA_Win_free_keyval(key, ierr)
  call check(ierr == NARMA_SUCCESS .and. key == MPI_KEYVAL_INVALID, "Win_free_keyval")
  call NARMA_Win_delete_attr(win, NARMA_WIN_BASE, ierr)
  call expect(NARMA_ERR_KEYVAL, "delete a predefined attribute")

  ! a dynamic window: detach of memory never attached
  call NARMA_Win_free(win, ierr)
  call check(ierr == NARMA_SUCCESS .and. win == NARMA_WIN_NULL, "Win_free")
  call NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call NARMA_Win_detach(win, iv, ierr)
  call expect(NARMA_ERR_ATTACH, "detach of memory never attached")
  call NARMA_Win_free(win, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_free (dynamic)")

  if (rank == 0) print '(a)', "test_f_errors: No Errors"
  call NARMA_Finalize(ierr)

contains
  subroutine expect(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (ierr /= code) then
       print '(a,i0,a,a,a,i0,a,i0,a)', "FAIL rank ", rank, ": ", what, ": ierror ", ierr, &
            " (expected ", code, ")"
       call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine expect
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       print '(a,i0,a,a,a,i0)', "FAIL rank ", rank, ": ", what, " ierr=", ierr
       call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program test_f_errors
