! narma-test: np=2,3,4 timeout=120
!> Module narma from Fortran: notified access. Put_notify, Get_notify, Rput_notify,
!> Rget_notify, Accumulate_notify, the persistent Put/Get/Accumulate_notify_init forms with
!> Start/Startall, and notification requests (Notify_init, wildcards, expected counts) whose
!> statuses are checked (source, tag, MPI_Get_count on MPI_BYTE), the notified atomics
!> (Fetch_and_op_notify, Get_accumulate_notify, Rget_accumulate_notify, Compare_and_swap_notify)
!> and Request_get_status. Each rank targets its right
!> neighbour, each step in its own region of the window, and waits only for notifications.
program test_f_notify
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use narma
  implicit none
  integer, parameter :: n = 4, nreg = 9
  type(NARMA_Win) :: win
  type(NARMA_Request) :: nr, lr(2), pr(3), wild
  type(c_ptr) :: base
  real(c_double), pointer, asynchronous :: a(:, :)
  real(c_double), target, asynchronous :: v(n), got(n, 2)
  integer(c_int64_t), target, asynchronous :: iswap(1), icmp(1), ires(1)
  type(MPI_Status) :: st, sts(3)
  integer :: rank, nprocs, left, right, ierr, i, cnt, k, idx, outc, ind(3)
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  call NARMA_Win_allocate(int(8 * n * nreg, MPI_ADDRESS_KIND), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &
       base, win, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_allocate")
  call c_f_pointer(base, a, [n, nreg])
  a = 0
  do k = 1, nreg
     a(:, k) = [(-(1000 * rank + 10 * k + i), i = 1, n)]
  end do
  a(:, 9) = 0
  v = [(1000 * rank + i, i = 1, n)]
  call MPI_Barrier(MPI_COMM_WORLD)

  ! 1: Put_notify, matched by source and tag; the status says who and how much
  call NARMA_Notify_init(win, left, 11, 1, nr, ierr)
  call check(ierr == NARMA_SUCCESS .and. nr /= NARMA_REQUEST_NULL, "Notify_init")
  call NARMA_Start(nr, ierr)
  call check(ierr == NARMA_SUCCESS, "Start")
  call NARMA_Put_notify(v, n, MPI_DOUBLE_PRECISION, right, disp(1), n, MPI_DOUBLE_PRECISION, win, 11, ierr)
  call check(ierr == NARMA_SUCCESS, "Put_notify")
  call NARMA_Wait(nr, st, ierr)
  call check(ierr == NARMA_SUCCESS, "Wait (notification)")
  call check(nr /= NARMA_REQUEST_NULL, "a notification request stays allocated (persistent)")
  call check(st%MPI_SOURCE == left .and. st%MPI_TAG == 11, "notification status source/tag")
  call MPI_Get_count(st, MPI_BYTE, cnt)
  call check(cnt == 8 * n, "notification status count")
  call region(1)

  ! 2: Get_notify: I read the right neighbour's region 2 and it is told (tag 12)
  call NARMA_Notify_init(win, left, 12, 1, lr(1), ierr)
  call NARMA_Start(lr(1), ierr)
  got = 0
  call NARMA_Get_notify(got(:, 1), n, MPI_DOUBLE_PRECISION, right, disp(2), n, MPI_DOUBLE_PRECISION, &
       win, 12, ierr)
  call check(ierr == NARMA_SUCCESS, "Get_notify")
  call check(all(got(:, 1) == [(-(1000 * right + 20 + i), i = 1, n)]), "Get_notify data")
  call NARMA_Wait(lr(1), st, ierr)
  call check(ierr == NARMA_SUCCESS .and. st%MPI_SOURCE == left .and. st%MPI_TAG == 12, &
       "Get_notify notification at the target")
  call NARMA_Request_free(lr(1), ierr)
  call check(ierr == NARMA_SUCCESS .and. lr(1) == NARMA_REQUEST_NULL, "Request_free")

  ! 3: Rput_notify and Rget_notify; the target matches both with wildcards, expecting 2
  call NARMA_Notify_init(win, NARMA_ANY_SOURCE, NARMA_ANY_TAG, 2, wild, ierr)
  call check(ierr == NARMA_SUCCESS, "Notify_init (wildcards)")
  call NARMA_Start(wild, ierr)
  call NARMA_Rput_notify(v, n, MPI_DOUBLE_PRECISION, right, disp(3), n, MPI_DOUBLE_PRECISION, &
       win, lr(1), 13, ierr)
  call check(ierr == NARMA_SUCCESS, "Rput_notify")
  call NARMA_Rget_notify(got(:, 2), n, MPI_DOUBLE_PRECISION, right, disp(4), n, &
       MPI_DOUBLE_PRECISION, win, lr(2), 14, ierr)
  call check(ierr == NARMA_SUCCESS, "Rget_notify")
  call NARMA_Waitall(2, lr, ierror=ierr)
  call check(ierr == NARMA_SUCCESS, "Waitall (R*_notify)")
  call check(all(got(:, 2) == [(-(1000 * right + 40 + i), i = 1, n)]), "Rget_notify data")
  flag = .false.
  do while (.not. flag)
     call NARMA_Test(wild, flag, st, ierr)
     call check(ierr == NARMA_SUCCESS, "Test (wildcard notification)")
  end do
  call check(st%MPI_SOURCE == left .and. (st%MPI_TAG == 13 .or. st%MPI_TAG == 14), "wildcard status")
  call region(3)

  ! 4: Accumulate_notify (sum onto the negative values)
  call NARMA_Notify_init(win, left, 15, 1, lr(1), ierr)
  call NARMA_Start(lr(1), ierr)
  call NARMA_Accumulate_notify(v, n, MPI_DOUBLE_PRECISION, right, disp(5), n, MPI_DOUBLE_PRECISION, &
       MPI_SUM, win, 15, ierr)
  call check(ierr == NARMA_SUCCESS, "Accumulate_notify")
  call NARMA_Wait(lr(1), ierror=ierr)
  call check(all(a(:, 5) == [(1000 * left + i - (1000 * rank + 50 + i), i = 1, n)]), &
       "Accumulate_notify data")
  call NARMA_Request_free(lr(1), ierr)

  ! 5: persistent accesses, three rounds: Put_notify_init (region 6), Accumulate_notify_init
  !    (region 7), Get_notify_init (of region 8); their notifications counted by one request
  call NARMA_Put_notify_init(v, n, MPI_DOUBLE_PRECISION, right, disp(6), n, MPI_DOUBLE_PRECISION, &
       win, 16, pr(1), ierr)
  call check(ierr == NARMA_SUCCESS, "Put_notify_init")
  call NARMA_Accumulate_notify_init(v, n, MPI_DOUBLE_PRECISION, right, disp(7), n, &
       MPI_DOUBLE_PRECISION, MPI_SUM, win, 17, pr(2), ierr)
  call check(ierr == NARMA_SUCCESS, "Accumulate_notify_init")
  call NARMA_Get_notify_init(got(:, 1), n, MPI_DOUBLE_PRECISION, right, disp(8), n, &
       MPI_DOUBLE_PRECISION, win, 18, pr(3), ierr)
  call check(ierr == NARMA_SUCCESS, "Get_notify_init")
  call NARMA_Request_free(wild, ierr)
  call NARMA_Notify_init(win, left, NARMA_ANY_TAG, 3, wild, ierr)
  do k = 1, 3
     call NARMA_Start(wild, ierr)
     call NARMA_Startall(3, pr, ierr)
     call check(ierr == NARMA_SUCCESS, "Startall")
     if (k == 1) then
        call NARMA_Waitall(3, pr, sts, ierr)
        call check(ierr == NARMA_SUCCESS, "Waitall (persistent)")
        call check(all(pr /= NARMA_REQUEST_NULL), "persistent requests stay allocated")
     else if (k == 2) then
        outc = 0
        cnt = 0
        do while (cnt < 3)
           call NARMA_Waitsome(3, pr, outc, ind, sts, ierr)
           call check(ierr == NARMA_SUCCESS .and. outc >= 1, "Waitsome (persistent)")
           cnt = cnt + outc
        end do
     else
        cnt = 0
        do while (cnt < 3)
           call NARMA_Testany(3, pr, idx, flag, st, ierr)
           call check(ierr == NARMA_SUCCESS, "Testany (persistent)")
           if (flag .and. idx /= NARMA_UNDEFINED) cnt = cnt + 1
        end do
     end if
     call check(all(got(:, 1) == [(-(1000 * right + 80 + i), i = 1, n)]), "Get_notify_init data")
     call NARMA_Wait(wild, st, ierr)
     call check(ierr == NARMA_SUCCESS .and. st%MPI_SOURCE == left, "persistent notifications")
  end do
  call region(6)
  call check(all(a(:, 7) == [(3 * (1000 * left + i) - (1000 * rank + 70 + i), i = 1, n)]), &
       "Accumulate_notify_init data (3 rounds)")
  ! 6: notified atomics on region 9 (element 1 as a 64-bit integer), four notifications (tag 19)
  call NARMA_Notify_init(win, left, 19, 4, lr(1), ierr)
  call NARMA_Start(lr(1), ierr)
  got = -1
  call NARMA_Fetch_and_op_notify(v(1), got(1, 1), MPI_DOUBLE_PRECISION, right, disp(9) + 1, &
       MPI_SUM, win, 19, ierr)
  call check(ierr == NARMA_SUCCESS .and. got(1, 1) == 0, "Fetch_and_op_notify")
  call NARMA_Get_accumulate_notify(v, 2, MPI_DOUBLE_PRECISION, got(:, 2), 2, MPI_DOUBLE_PRECISION, &
       right, disp(9) + 2, 2, MPI_DOUBLE_PRECISION, MPI_REPLACE, win, 19, ierr)
  call check(ierr == NARMA_SUCCESS .and. all(got(1:2, 2) == 0), "Get_accumulate_notify")
  call NARMA_Rget_accumulate_notify(v, 1, MPI_DOUBLE_PRECISION, got(2, 1), 1, &
       MPI_DOUBLE_PRECISION, right, disp(9) + 1, 1, MPI_DOUBLE_PRECISION, MPI_NO_OP, win, 19, &
       lr(2), ierr)
  call check(ierr == NARMA_SUCCESS, "Rget_accumulate_notify")
  flag = .false.
  do while (.not. flag)
     call NARMA_Request_get_status(lr(2), flag, st, ierr)
     call check(ierr == NARMA_SUCCESS, "Request_get_status")
  end do
  call check(lr(2) /= NARMA_REQUEST_NULL, "Request_get_status kept the request")
  call NARMA_Wait(lr(2), ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. lr(2) == NARMA_REQUEST_NULL, "Wait after get_status")
  call check(got(2, 1) == 1000 * rank + 1, "Rget_accumulate_notify NO_OP read")
  iswap = 5
  icmp = 0
  ires = -1
  call NARMA_Compare_and_swap_notify(iswap, icmp, ires, MPI_INTEGER8, right, disp(9), win, 19, ierr)
  call check(ierr == NARMA_SUCCESS .and. ires(1) == 0, "Compare_and_swap_notify")
  call NARMA_Wait(lr(1), st, ierr)
  call check(ierr == NARMA_SUCCESS .and. st%MPI_SOURCE == left .and. st%MPI_TAG == 19, &
       "notified atomics' notifications")
  call check(a(2, 9) == 1000 * left + 1 .and. a(3, 9) == 1000 * left + 1 .and. &
       a(4, 9) == 1000 * left + 2, "notified atomics' data")
  call check(transfer(a(1, 9), 0_c_int64_t) == 5, "Compare_and_swap_notify data")
  call NARMA_Request_get_status(NARMA_REQUEST_NULL, flag, ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. flag, "Request_get_status (NARMA_REQUEST_NULL)")
  call NARMA_Request_free(lr(1), ierr)

  do i = 1, 3
     call NARMA_Request_free(pr(i), ierr)
     call check(ierr == NARMA_SUCCESS, "Request_free (persistent)")
  end do
  call NARMA_Request_free(wild, ierr)
  call NARMA_Request_free(nr, ierr)
  call check(ierr == NARMA_SUCCESS, "Request_free (notification)")

  call MPI_Barrier(MPI_COMM_WORLD)
  call NARMA_Win_free(win, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_free")
  if (rank == 0) print '(a)', "test_f_notify: No Errors"
  call MPI_Finalize()

contains
  integer(kind=MPI_ADDRESS_KIND) function disp(k)
    integer, intent(in) :: k
    disp = int(n * (k - 1), MPI_ADDRESS_KIND)
  end function disp
  subroutine region(k)
    integer, intent(in) :: k
    character(len=16) :: s
    write (s, '(a,i0)') "region ", k
    call check(all(a(:, k) == [(1000 * left + i, i = 1, n)]), trim(s))
  end subroutine region
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       print '(a,i0,a,a,a,i0)', "FAIL rank ", rank, ": ", what, " ierr=", ierr
       call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program test_f_notify
