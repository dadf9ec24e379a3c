!> Fortran 2008 interface to narma_halo (see include/narma/narma_halo.h).
!> Interfaces only: every routine is the C function (or a handle-converting
!> shim in narma_halo_f.c) called through ISO_C_BINDING; MPI handles are
!> mpi_f08 types. A field is passed as c_loc() of a contiguous TARGET array
!> laid out a(1-halo_x:nx+halo_x, 1-halo_y:ny+halo_y, nz) (NARMA_HALO_LAYOUT_ZYX,
!> the default) or a(nz, 1-halo_y:ny+halo_y, 1-halo_x:nx+halo_x) (_XYZ).
module narma_halo
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_DOUBLE_PRECISION
  use narma, only: NARMA_SUCCESS
  implicit none
  private

  ! narma's own, so that a program may use both modules
  public :: NARMA_SUCCESS
  ! strategies (values of NARMA_Halo_strategy)
  integer, parameter, public :: NARMA_HALO_DEFAULT = 0, NARMA_HALO_P2P = 1, &
       NARMA_HALO_FENCE = 2, NARMA_HALO_PSCW = 3, NARMA_HALO_PSCW_NB = 4, &
       NARMA_HALO_LOCK = 5, NARMA_HALO_DYNAMIC = 6, NARMA_HALO_NOTIFY = 7, &
       NARMA_HALO_NOTIFY_FIELDS = 8, NARMA_HALO_NSTRATEGIES = 9
  integer, parameter, public :: NARMA_HALO_EW = 1, NARMA_HALO_NS = 2, NARMA_HALO_BOTH = 3
  integer, parameter, public :: NARMA_HALO_LAYOUT_ZYX = 0, NARMA_HALO_LAYOUT_XYZ = 1
  integer, parameter, public :: NARMA_HALO_ERR_TOPOLOGY = 64, NARMA_HALO_ERR_SHAPE = 65, &
       NARMA_HALO_ERR_DEPTH = 66, NARMA_HALO_ERR_SIZE = 67, NARMA_HALO_ERR_STRATEGY = 68, &
       NARMA_HALO_ERR_STATE = 69

  !> Opaque plan handle.
  type, public :: narma_halo_plan
     type(c_ptr) :: p = c_null_ptr
  end type narma_halo_plan

  public :: narma_halo_plan_create, narma_halo_exchange, narma_halo_start, &
       narma_halo_finish, narma_halo_plan_free, narma_halo_strategy_name, &
       narma_halo_error_string

  interface
     integer(c_int) function c_plan_create(comm, nz, ny, nx, hx, hy, dtype, nfields, corners, &
          directions, layout, strategy, plan) bind(C, name="narmah_f_plan_create")
       import :: c_int, c_ptr
       integer(c_int), value :: comm, nz, ny, nx, hx, hy, dtype, nfields, corners, directions, &
            layout, strategy
       type(c_ptr), intent(out) :: plan
     end function c_plan_create
     integer(c_int) function c_exchange(plan, fields) bind(C, name="NARMA_Halo_exchange")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), intent(in) :: fields(*)
     end function c_exchange
     integer(c_int) function c_start(plan, fields) bind(C, name="NARMA_Halo_start")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), intent(in) :: fields(*)
     end function c_start
     integer(c_int) function c_finish(plan) bind(C, name="NARMA_Halo_finish")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
     end function c_finish
     integer(c_int) function c_plan_free(plan) bind(C, name="NARMA_Halo_plan_free")
       import :: c_int, c_ptr
       type(c_ptr), intent(inout) :: plan
     end function c_plan_free
     integer(c_int) function c_strategy_name(s, buf, len) bind(C, name="narmah_f_strategy_name")
       import :: c_int, c_char
       integer(c_int), value :: s, len
       character(kind=c_char), intent(out) :: buf(*)
     end function c_strategy_name
     integer(c_int) function c_error_string(e, buf, len) bind(C, name="narmah_f_error_string")
       import :: c_int, c_char
       integer(c_int), value :: e, len
       character(kind=c_char), intent(out) :: buf(*)
     end function c_error_string
  end interface

contains

  !> Create a plan (collective). Optional arguments default as in C (0 = default).
  subroutine narma_halo_plan_create(comm, nz, ny, nx, plan, ierr, halo_x, halo_y, datatype, &
       nfields, corners, directions, layout, strategy)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: nz, ny, nx
    type(narma_halo_plan), intent(out) :: plan
    integer, intent(out) :: ierr
    integer, intent(in), optional :: halo_x, halo_y, nfields, directions, layout, strategy
    logical, intent(in), optional :: corners
    type(MPI_Datatype), intent(in), optional :: datatype
    integer(c_int) :: hx, hy, nf, cr, dirs, lay, st, dt
    hx = 0; hy = 0; nf = 0; cr = 0; dirs = 0; lay = 0; st = 0
    dt = MPI_DOUBLE_PRECISION%MPI_VAL
    if (present(halo_x)) hx = halo_x
    if (present(halo_y)) hy = halo_y
    if (present(nfields)) nf = nfields
    if (present(corners)) then
       if (corners) cr = 1
    end if
    if (present(directions)) dirs = directions
    if (present(layout)) lay = layout
    if (present(strategy)) st = strategy
    if (present(datatype)) dt = datatype%MPI_VAL
    ierr = c_plan_create(comm%MPI_VAL, nz, ny, nx, hx, hy, dt, nf, cr, dirs, lay, st, plan%p)
  end subroutine narma_halo_plan_create

  !> Exchange the halos of fields(1:nfields) (each c_loc of a field array).
  subroutine narma_halo_exchange(plan, fields, ierr)
    type(narma_halo_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: fields(:)
    integer, intent(out) :: ierr
    ierr = c_exchange(plan%p, fields)
  end subroutine narma_halo_exchange

  subroutine narma_halo_start(plan, fields, ierr)
    type(narma_halo_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: fields(:)
    integer, intent(out) :: ierr
    ierr = c_start(plan%p, fields)
  end subroutine narma_halo_start

  subroutine narma_halo_finish(plan, ierr)
    type(narma_halo_plan), intent(in) :: plan
    integer, intent(out) :: ierr
    ierr = c_finish(plan%p)
  end subroutine narma_halo_finish

  subroutine narma_halo_plan_free(plan, ierr)
    type(narma_halo_plan), intent(inout) :: plan
    integer, intent(out) :: ierr
    ierr = c_plan_free(plan%p)
  end subroutine narma_halo_plan_free

  function narma_halo_strategy_name(strategy) result(name)
    integer, intent(in) :: strategy
    character(len=16) :: name
    character(kind=c_char) :: buf(16)
    integer :: n, i
    n = c_strategy_name(strategy, buf, 16)
    do i = 1, 16
       name(i:i) = buf(i)
    end do
  end function narma_halo_strategy_name

  function narma_halo_error_string(code) result(msg)
    integer, intent(in) :: code
    character(len=96) :: msg
    character(kind=c_char) :: buf(96)
    integer :: n, i
    n = c_error_string(code, buf, 96)
    do i = 1, 96
       msg(i:i) = buf(i)
    end do
  end function narma_halo_error_string
end module narma_halo
