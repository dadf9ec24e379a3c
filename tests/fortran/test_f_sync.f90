! narma-test: np=2,3,4 timeout=120
!> Module narma from Fortran: every synchronisation call and its nonblocking form, and the
!> request completion family on them: PSCW (wait and a Win_test loop; ipost/istart/
!> icomplete/iwait), fence and ifence, lock/unlock with flush_local/flush, lock_all with
!> flush_local_all/flush_all/sync, the ilock/iflush*/iunlock and ilock_all/iunlock_all forms,
!> Test/Testany/Testsome/Waitany/Waitsome/Testall. Each epoch puts into the right neighbour's
!> slot of its own; every slot is checked, with a barrier before a slot is written again.
program test_f_sync
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use narma
  implicit none
  integer, parameter :: nslot = 12
  type(NARMA_Win) :: win
  type(NARMA_Request) :: r(4), rr(4)
  type(c_ptr) :: base
  integer(c_int), pointer, asynchronous :: a(:)
  integer(c_int), target, asynchronous :: v(nslot)
  type(MPI_Group) :: world, gleft, gright
  type(MPI_Status) :: st, sts(4)
  integer :: rank, nprocs, left, right, ierr, i, idx, outc, ind(4), done, spins
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  call MPI_Comm_group(MPI_COMM_WORLD, world)
  call MPI_Group_incl(world, 1, [left], gleft)
  call MPI_Group_incl(world, 1, [right], gright)
  call NARMA_Win_allocate(int(4 * nslot, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, &
       base, win, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_allocate")
  call c_f_pointer(base, a, [nslot])
  a = -1
  v = [(1000 * rank + i, i = 1, nslot)]
  call MPI_Barrier(MPI_COMM_WORLD)

  ! 1: PSCW, blocking
  call NARMA_Win_post(gleft, 0, win, ierr)
  call check(ierr == NARMA_SUCCESS, "post")
  call NARMA_Win_start(gright, 0, win, ierr)
  call check(ierr == NARMA_SUCCESS, "start")
  call put(1)
  call NARMA_Win_complete(win, ierr)
  call check(ierr == NARMA_SUCCESS, "complete")
  call NARMA_Win_wait(win, ierr)
  call check(ierr == NARMA_SUCCESS, "wait")
  call slot(1)

  ! 2: PSCW, exposure closed by a Win_test loop
  call NARMA_Win_post(gleft, NARMA_MODE_NOCHECK, win, ierr)
  call NARMA_Win_start(gright, NARMA_MODE_NOCHECK, win, ierr)
  call put(2)
  call NARMA_Win_complete(win, ierr)
  flag = .false.
  spins = 0
  do while (.not. flag)
     call NARMA_Win_test(win, flag, ierr)
     call check(ierr == NARMA_SUCCESS, "Win_test")
     spins = spins + 1
  end do
  call slot(2)

  ! 3: nonblocking PSCW, completed by Waitall with statuses
  call NARMA_Win_ipost(gleft, 0, win, r(1), ierr)
  call check(ierr == NARMA_SUCCESS, "ipost")
  call NARMA_Win_istart(gright, 0, win, r(2), ierr)
  call check(ierr == NARMA_SUCCESS, "istart")
  call put(3)
  call NARMA_Win_icomplete(win, r(3), ierr)
  call check(ierr == NARMA_SUCCESS, "icomplete")
  call NARMA_Win_iwait(win, r(4), ierr)
  call check(ierr == NARMA_SUCCESS, "iwait")
  call NARMA_Waitall(4, r, sts, ierr)
  call check(ierr == NARMA_SUCCESS .and. all(r == NARMA_REQUEST_NULL), "Waitall (pscw)")
  call slot(3)

  ! 4: fence, then ifence closed by Wait and by a Test loop
  call NARMA_Win_fence(0, win, ierr)
  call put(4)
  call NARMA_Win_ifence(0, win, r(1), ierr)
  call check(ierr == NARMA_SUCCESS, "ifence")
  call NARMA_Wait(r(1), st, ierr)
  call check(ierr == NARMA_SUCCESS .and. r(1) == NARMA_REQUEST_NULL, "Wait (ifence)")
  call put(5)
  call NARMA_Win_ifence(NARMA_MODE_NOSUCCEED, win, r(1), ierr)
  flag = .false.
  do while (.not. flag)
     call NARMA_Test(r(1), flag, ierror=ierr)
     call check(ierr == NARMA_SUCCESS, "Test (ifence)")
  end do
  call check(r(1) == NARMA_REQUEST_NULL, "Test frees a completed request")
  call slot(4)
  call slot(5)

  ! 6: lock, flush_local, flush, unlock (exclusive)
  call NARMA_Win_lock(NARMA_LOCK_EXCLUSIVE, right, 0, win, ierr)
  call check(ierr == NARMA_SUCCESS, "lock")
  call put(6)
  call NARMA_Win_flush_local(right, win, ierr)
  call check(ierr == NARMA_SUCCESS, "flush_local")
  call NARMA_Win_flush(right, win, ierr)
  call check(ierr == NARMA_SUCCESS, "flush")
  call NARMA_Win_unlock(right, win, ierr)
  call check(ierr == NARMA_SUCCESS, "unlock")
  call MPI_Barrier(MPI_COMM_WORLD)
  call slot(6)

  ! 7: lock_all, flush_local_all, flush_all, sync, unlock_all
  call NARMA_Win_lock_all(0, win, ierr)
  call check(ierr == NARMA_SUCCESS, "lock_all")
  call put(7)
  call NARMA_Win_flush_local_all(win, ierr)
  call check(ierr == NARMA_SUCCESS, "flush_local_all")
  call NARMA_Win_flush_all(win, ierr)
  call check(ierr == NARMA_SUCCESS, "flush_all")
  call NARMA_Win_sync(win, ierr)
  call check(ierr == NARMA_SUCCESS, "sync")
  call NARMA_Win_unlock_all(win, ierr)
  call check(ierr == NARMA_SUCCESS, "unlock_all")
  call MPI_Barrier(MPI_COMM_WORLD)
  call slot(7)

  ! 8: ilock, iflush_local, iflush, iunlock; completed by Waitany/Testany
  call NARMA_Win_ilock(NARMA_LOCK_SHARED, right, 0, win, r(1), ierr)
  call check(ierr == NARMA_SUCCESS, "ilock")
  call put(8)
  call NARMA_Win_iflush_local(right, win, r(2), ierr)
  call check(ierr == NARMA_SUCCESS, "iflush_local")
  call NARMA_Win_iflush(right, win, r(3), ierr)
  call check(ierr == NARMA_SUCCESS, "iflush")
  call NARMA_Win_iunlock(right, win, r(4), ierr)
  call check(ierr == NARMA_SUCCESS, "iunlock")
  done = 0
  do while (done < 2)
     call NARMA_Waitany(4, r, idx, st, ierr)
     call check(ierr == NARMA_SUCCESS .and. idx >= 1 .and. idx <= 4, "Waitany index")
     call check(r(idx) == NARMA_REQUEST_NULL, "Waitany frees the completed request")
     done = done + 1
  end do
  do while (done < 4)
     call NARMA_Testany(4, r, idx, flag, ierror=ierr)
     call check(ierr == NARMA_SUCCESS, "Testany")
     if (flag) then
        call check(idx >= 1 .and. idx <= 4, "Testany index")
        done = done + 1
     end if
  end do
  call NARMA_Waitany(4, r, idx, ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. idx == NARMA_UNDEFINED, "Waitany on no active request")
  call MPI_Barrier(MPI_COMM_WORLD)
  call slot(8)

  ! 9: ilock_all, iflush_all, iflush_local_all, iunlock_all; Testsome, then Waitsome
  call NARMA_Win_ilock_all(0, win, r(1), ierr)
  call check(ierr == NARMA_SUCCESS, "ilock_all")
  call put(9)
  call NARMA_Win_iflush_local_all(win, r(2), ierr)
  call check(ierr == NARMA_SUCCESS, "iflush_local_all")
  call NARMA_Win_iflush_all(win, r(3), ierr)
  call check(ierr == NARMA_SUCCESS, "iflush_all")
  call NARMA_Win_iunlock_all(win, r(4), ierr)
  call check(ierr == NARMA_SUCCESS, "iunlock_all")
  done = 0
  call NARMA_Testsome(4, r, outc, ind, sts, ierr)
  call check(ierr == NARMA_SUCCESS .and. outc >= 0 .and. outc <= 4, "Testsome")
  do i = 1, outc
     call check(ind(i) >= 1 .and. ind(i) <= 4, "Testsome indices are 1-based")
     call check(r(ind(i)) == NARMA_REQUEST_NULL, "Testsome frees")
  end do
  done = outc
  do while (done < 4)
     call NARMA_Waitsome(4, r, outc, ind, ierror=ierr)
     call check(ierr == NARMA_SUCCESS .and. outc >= 1, "Waitsome")
     call check(all(ind(1:outc) >= 1 .and. ind(1:outc) <= 4), "Waitsome indices")
     done = done + outc
  end do
  call NARMA_Waitsome(4, r, outc, ind, ierror=ierr)
  call check(ierr == NARMA_SUCCESS .and. outc == NARMA_UNDEFINED, "Waitsome on no active request")
  call MPI_Barrier(MPI_COMM_WORLD)
  call slot(9)

  ! 10: R* requests completed by a Testall loop, inside a lock_all epoch
  call NARMA_Win_lock_all(NARMA_MODE_NOCHECK, win, ierr)
  do i = 1, 2
     call NARMA_Rput(v(10 + i), 1, MPI_INTEGER, right, int(9 + i, MPI_ADDRESS_KIND), 1, MPI_INTEGER, &
          win, rr(i), ierr)
     call check(ierr == NARMA_SUCCESS, "Rput")
  end do
  flag = .false.
  do while (.not. flag)
     call NARMA_Testall(2, rr, flag, ierror=ierr)
     call check(ierr == NARMA_SUCCESS, "Testall")
  end do
  call check(all(rr(1:2) == NARMA_REQUEST_NULL), "Testall frees")
  call NARMA_Win_unlock_all(win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD)
  call slot(11)
  call slot(12)

  call NARMA_Win_free(win, ierr)
  call check(ierr == NARMA_SUCCESS, "Win_free")
  call MPI_Group_free(gleft)
  call MPI_Group_free(gright)
  call MPI_Group_free(world)
  if (rank == 0) print '(a)', "test_f_sync: No Errors"
  call MPI_Finalize()

contains
  subroutine put(k)
    integer, intent(in) :: k
    call NARMA_Put(v(k), 1, MPI_INTEGER, right, int(k - 1, MPI_ADDRESS_KIND), 1, MPI_INTEGER, win, ierr)
    call check(ierr == NARMA_SUCCESS, "Put")
  end subroutine put
  subroutine slot(k)
    integer, intent(in) :: k
    character(len=16) :: s
    write (s, '(a,i0)') "slot ", k
    call check(a(k) == 1000 * left + k, trim(s))
  end subroutine slot
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       print '(a,i0,a,a,a,i0)', "FAIL rank ", rank, ": ", what, " ierr=", ierr
       call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program test_f_sync
