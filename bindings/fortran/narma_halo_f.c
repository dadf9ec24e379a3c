/* C side of the Fortran module narma_halo: handle conversion only (MPI_*_f2c),
 * no logic. Called through bind(C) interfaces in narma_halo.f90. */
#include <narma/narma_halo.h>
#include <string.h>

NARMA_API int narmah_f_plan_create(MPI_Fint comm, int nz, int ny, int nx, int hx, int hy,
                                   MPI_Fint datatype, int nfields, int corners, int directions,
                                   int layout, int strategy, NARMA_Halo_plan *plan)
{
    NARMA_Halo_desc d = NARMA_HALO_DESC_INIT;
    d.nz = nz, d.ny = ny, d.nx = nx, d.halo_x = hx, d.halo_y = hy;
    d.datatype = MPI_Type_f2c(datatype);
    d.nfields = nfields, d.corners = corners, d.directions = directions;
    d.layout = (NARMA_Halo_layout)layout;
    d.strategy = (NARMA_Halo_strategy)strategy;
    return NARMA_Halo_plan_create(MPI_Comm_f2c(comm), &d, plan);
}

NARMA_API int narmah_f_strategy_name(int strategy, char *buf, int len)
{
    const char *s = NARMA_Halo_strategy_name((NARMA_Halo_strategy)strategy);
    int n = (int)strlen(s);
    memset(buf, ' ', (size_t)len);
    memcpy(buf, s, (size_t)(n < len ? n : len));
    return n;
}

NARMA_API int narmah_f_error_string(int code, char *buf, int len)
{
    const char *s = NARMA_Halo_error_string(code);
    int n = (int)strlen(s);
    memset(buf, ' ', (size_t)len);
    memcpy(buf, s, (size_t)(n < len ? n : len));
    return n;
}
