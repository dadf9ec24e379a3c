!> Example: a Fortran 2008 program exchanging the halos of two fields with
!> every narma_halo strategy on a doubly periodic 2-D process grid, checking
!> each result is bit-identical to p2p's.
!>   mpiexec -n 4 ./halo_f08
program halo_f08
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use narma_halo
  implicit none
  integer, parameter :: nx = 8, ny = 6, nz = 5, h = 2, nf = 2
  real(c_double), target :: u(1-h:nx+h, 1-h:ny+h, nz), th(1-h:nx+h, 1-h:ny+h, nz)
  real(c_double), allocatable :: ref(:,:,:,:)
  type(MPI_Comm) :: cart
  type(narma_halo_plan) :: plan
  type(c_ptr) :: fields(nf)
  integer :: dims(2), coords(2), rank, nprocs, ierr, s, i, j, k, bad, allbad
  logical :: periods(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  dims = 0
  call MPI_Dims_create(nprocs, 2, dims)
  periods = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart)
  call MPI_Cart_coords(cart, rank, 2, coords)
  allocate(ref(1-h:nx+h, 1-h:ny+h, nz, nf))
  fields = [c_loc(u), c_loc(th)]
  bad = 0

  do s = NARMA_HALO_P2P, NARMA_HALO_NSTRATEGIES - 1
     ! interior: a function of the global point; halo: a sentinel
     u = -1.0d0 - rank
     th = -1.0d0 - rank
     do k = 1, nz
        do j = 1, ny
           do i = 1, nx
              u(i, j, k) = 1000.0d0 * k + 100.0d0 * (coords(1) * ny + j) + (coords(2) * nx + i)
              th(i, j, k) = 0.5d0 * u(i, j, k) + 3.0d0
           end do
        end do
     end do
     call narma_halo_plan_create(cart, nz, ny, nx, plan, ierr, halo_x=h, halo_y=h, &
          datatype=MPI_DOUBLE_PRECISION, nfields=nf, corners=.true., strategy=s)
     if (ierr /= NARMA_SUCCESS) then
        print *, 'plan_create failed: ', trim(narma_halo_error_string(ierr))
        call MPI_Abort(MPI_COMM_WORLD, 1)
     end if
     call narma_halo_start(plan, fields, ierr)          ! split form: overlap here
     if (ierr == NARMA_SUCCESS) call narma_halo_finish(plan, ierr)
     if (ierr == NARMA_SUCCESS) call narma_halo_exchange(plan, fields, ierr)  ! and again
     if (ierr /= NARMA_SUCCESS) then
        print *, 'exchange failed: ', trim(narma_halo_error_string(ierr))
        call MPI_Abort(MPI_COMM_WORLD, 1)
     end if
     call narma_halo_plan_free(plan, ierr)
     if (s == NARMA_HALO_P2P) then
        ref(:,:,:,1) = u
        ref(:,:,:,2) = th
     else if (any(ref(:,:,:,1) /= u) .or. any(ref(:,:,:,2) /= th)) then
        print '(a,i0,2a)', 'rank ', rank, ': differs from p2p: ', trim(narma_halo_strategy_name(s))
        bad = 1
     end if
  end do

  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  if (rank == 0) then
     if (allbad == 0) then
        print '(a,i0,a,i0,a,i0,a)', 'halo_f08: all strategies bit-identical to p2p (', &
             nprocs, ' ranks, grid ', dims(1), 'x', dims(2), ')'
     else
        print '(a)', 'halo_f08: FAILED'
     end if
  end if
  call MPI_Comm_free(cart)
  deallocate(ref)
  call MPI_Finalize()
  if (allbad /= 0) error stop 1
end program halo_f08
