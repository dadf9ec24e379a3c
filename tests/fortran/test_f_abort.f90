! narma-test: np=1,2 timeout=60 pass="narma: NARMA_Put failed: .*\(error class [0-9]+\).*no ierror argument: aborting"
!> Module narma from Fortran: a failing call without ierror prints narma's message and aborts
!> (mpi_f08's "errors go to the handler", as MPI_ERRORS_ARE_FATAL). The test passes on that
!> message only; a program that went on would print FAIL.
program test_f_abort
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use narma
  implicit none
  type(NARMA_Win) :: win
  real(c_double), target, asynchronous :: v(4)
  integer :: ierr, rank

  call NARMA_Init()
  v = 1
  ! with ierror: no abort
  call NARMA_Put(v, 4, MPI_DOUBLE_PRECISION, 0, 0_MPI_ADDRESS_KIND, 4, MPI_DOUBLE_PRECISION, win, ierr)
  if (ierr /= NARMA_ERR_WIN) then
     print '(a,i0)', "FAIL: Put on NARMA_WIN_NULL gave ", ierr
     call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  ! without: abort
  ! One rank aborts (the others wait in a barrier it never joins): two ranks aborting at
  ! once may lose a message while mpiexec tears the job down.
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  if (rank /= 0) call MPI_Barrier(MPI_COMM_WORLD)
  call NARMA_Put(v, 4, MPI_DOUBLE_PRECISION, 0, 0_MPI_ADDRESS_KIND, 4, MPI_DOUBLE_PRECISION, win)
  print '(a)', "FAIL: a failing call without ierror returned"
  call NARMA_Finalize()
end program test_f_abort
