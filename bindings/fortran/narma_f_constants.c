/* Build-time generator of narma_constants.inc, the constants of module narma: every value is
 * printed from <narma/narma.h> as this MPI's C compiler sees it, so the Fortran parameters
 * cannot drift from the C header. (tests/fortran/test_f_constants.f90 compares those that
 * have an mpi_f08 twin, e.g. NARMA_LOCK_SHARED and MPI_LOCK_SHARED.)
 *   narma_f_constants OUTPUT_FILE */
#include <narma/narma.h>
#include <stdio.h>

/* The module's NARMA_Errhandler parameters (1 and 2) must be the C constants. */
_Static_assert(NARMA_ERRORS_RETURN == (NARMA_Errhandler)1 &&
                   NARMA_ERRORS_ARE_FATAL == (NARMA_Errhandler)2,
               "bindings/fortran/narma_module.f90.in: NARMA_ERRORS_* parameters");

#define C(name) {#name, (long)(name)}

static const struct {
    const char *name;
    long value;
} consts[] = {
    C(NARMA_SUCCESS), C(NARMA_ERR_ARG), C(NARMA_ERR_RANK), C(NARMA_ERR_TAG), C(NARMA_ERR_COUNT),
    C(NARMA_ERR_TYPE), C(NARMA_ERR_OP), C(NARMA_ERR_WIN), C(NARMA_ERR_DISP),
    C(NARMA_ERR_RMA_SYNC), C(NARMA_ERR_RMA_CONFLICT), C(NARMA_ERR_REQUEST),
    C(NARMA_ERR_NO_MEM), C(NARMA_ERR_ATTACH), C(NARMA_ERR_KEYVAL), C(NARMA_ERR_NOT_INIT),
    C(NARMA_ERR_PENDING), C(NARMA_ERR_UNSUPPORTED), C(NARMA_ERR_MPI), C(NARMA_ERR_INTERN),
    C(NARMA_ERR_NOTIFY_IDX), C(NARMA_WIN_NOTIFICATION_NUM_UB), C(NARMA_WIN_NOTIFICATION_VALUE_UB),
    C(NARMA_ERR_LASTCODE), C(NARMA_ERROR_RMA_NO_SYNC), C(NARMA_ERROR_RMA_DATATYPE_MISMATCH),
    C(NARMA_ERROR_RMA_NO_LOCK_HOLDING), C(NARMA_ERROR_RMA_SYNC_CONFLICT),
    C(NARMA_ERROR_RMA_WRITE_SHARED_CONFLICT), C(NARMA_ERROR_RMA_WIN_MEM_NOT_FOUND),
    C(NARMA_OP_NOT_SUPPORTED), C(NARMA_DATATYPE_NOT_SUPPORTED), C(NARMA_ANY_SOURCE),
    C(NARMA_ANY_TAG), C(NARMA_TAG_UB), C(NARMA_UNDEFINED), C(NARMA_MAX_ERROR_STRING),
    C(NARMA_WIN_FLAVOR_CREATE), C(NARMA_WIN_FLAVOR_ALLOCATE), C(NARMA_WIN_FLAVOR_DYNAMIC),
    C(NARMA_WIN_FLAVOR_SHARED),
    C(NARMA_WIN_SEPARATE), C(NARMA_WIN_UNIFIED), C(NARMA_MODE_NOCHECK), C(NARMA_MODE_NOSTORE),
    C(NARMA_MODE_NOPUT), C(NARMA_MODE_NOPRECEDE), C(NARMA_MODE_NOSUCCEED),
    C(NARMA_LOCK_SHARED), C(NARMA_LOCK_EXCLUSIVE), C(NARMA_WIN_BASE), C(NARMA_WIN_SIZE),
    C(NARMA_WIN_DISP_UNIT), C(NARMA_WIN_CREATE_FLAVOR), C(NARMA_WIN_MODEL),
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: narma_f_constants OUTPUT_FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    fprintf(f, "! GENERATED at build time by narma_f_constants from <narma/narma.h>: do not edit\n");
    for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++)
        fprintf(f, "  integer, parameter, public :: %s = %ld\n", consts[i].name, consts[i].value);
    return fclose(f) == 0 ? 0 : 1;
}
