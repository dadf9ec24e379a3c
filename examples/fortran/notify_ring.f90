!> Example: a periodic 1-D three-point smoother over module narma, with halos moved by
!> persistent notified puts (NARMA_Put_notify_init) and waited for by persistent
!> notification requests (NARMA_Notify_init): no barrier, no fence, no lock; each rank
!> waits only for the two values it needs. Halos alternate between two slots (even and odd
!> rounds), so a rank one round ahead never overwrites a halo its neighbour still reads.
!> Every rank checks its part against the same smoother computed serially on the whole ring.
!>   mpiexec -n 4 ./notify_ring_f08
program notify_ring
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use narma
  implicit none
  integer, parameter :: n = 16, rounds = 200
  real(c_double), target, asynchronous :: halo(4)   ! (left, right) x (even, odd)
  real(c_double), target, asynchronous :: edge(2)   ! values put: (leftmost, rightmost)
  real(c_double) :: u(0:n+1), unew(n)
  real(c_double), allocatable :: g(:), gnew(:)
  type(NARMA_Win) :: win
  type(NARMA_Request) :: put(2, 0:1), note(2, 0:1), round(4)
  type(MPI_Status) :: st(4)
  integer :: rank, nprocs, left, right, p, k, i, ntot, bad

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  ! No ierror below: a failing call prints narma's message and aborts (see module narma).
  call NARMA_Win_create(halo, 4 * 8_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  do p = 0, 1
     ! my leftmost value lands in the left neighbour's right halo of parity p (tag 10+p), my
     ! rightmost in the right neighbour's left halo (tag 20+p)
     call NARMA_Put_notify_init(edge(1), 1, MPI_DOUBLE_PRECISION, left, int(2 * p + 1, MPI_ADDRESS_KIND), &
          1, MPI_DOUBLE_PRECISION, win, 10 + p, put(1, p))
     call NARMA_Put_notify_init(edge(2), 1, MPI_DOUBLE_PRECISION, right, int(2 * p, MPI_ADDRESS_KIND), &
          1, MPI_DOUBLE_PRECISION, win, 20 + p, put(2, p))
     call NARMA_Notify_init(win, left, 20 + p, 1, note(1, p))
     call NARMA_Notify_init(win, right, 10 + p, 1, note(2, p))
  end do
  ! everyone's notification requests exist before anyone puts
  call MPI_Barrier(MPI_COMM_WORLD)

  u(1:n) = [(sin(real(rank * n + i, c_double)), i = 1, n)]
  do k = 1, rounds
     p = mod(k, 2)
     call NARMA_Start(note(1, p))
     call NARMA_Start(note(2, p))
     edge = [u(1), u(n)]
     round = [put(1, p), put(2, p), note(1, p), note(2, p)]
     call NARMA_Startall(2, round)
     call NARMA_Waitall(4, round, st)
     if (st(3)%MPI_SOURCE /= left .or. st(4)%MPI_TAG /= 10 + p) then
        print '(a,i0)', "notify_ring: wrong notification status on rank ", rank
        call MPI_Abort(MPI_COMM_WORLD, 1)
     end if
     u(0) = halo(2 * p + 1)
     u(n + 1) = halo(2 * p + 2)
     unew = (u(0:n-1) + u(1:n) + u(2:n+1)) / 3
     u(1:n) = unew
  end do
  do p = 0, 1
     call NARMA_Request_free(put(1, p))
     call NARMA_Request_free(put(2, p))
     call NARMA_Request_free(note(1, p))
     call NARMA_Request_free(note(2, p))
  end do
  call MPI_Barrier(MPI_COMM_WORLD)
  call NARMA_Win_free(win)

  ! the same smoother, serially on the whole ring
  ntot = n * nprocs
  allocate(g(0:ntot+1), gnew(ntot))
  g(1:ntot) = [(sin(real(i, c_double)), i = 1, ntot)]
  do k = 1, rounds
     g(0) = g(ntot)
     g(ntot + 1) = g(1)
     gnew = (g(0:ntot-1) + g(1:ntot) + g(2:ntot+1)) / 3
     g(1:ntot) = gnew
  end do
  bad = count(u(1:n) /= g(rank * n + 1:rank * n + n))
  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  deallocate(g, gnew)
  if (rank == 0) then
     if (bad == 0) then
        print '(a,i0,a)', "notify_ring: ", rounds, " rounds, halos correct"
     else
        print '(a,i0,a)', "notify_ring: ", bad, " values differ from the serial smoother"
     end if
  end if
  call MPI_Finalize()
  if (bad /= 0) error stop 1
end program notify_ring
