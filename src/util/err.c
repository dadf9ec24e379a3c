/* Error reporting (err.h). */
#include "util/err.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local int narmau_last_mpi_code = MPI_SUCCESS;

int narmau_last_mpi_error(void) { return narmau_last_mpi_code; }

int narmau_mpi_error(int mpi_code)
{
    narmau_last_mpi_code = mpi_code;
    return narmau_err(NARMA_ERR_MPI, "MPI", "MPI error code %d", mpi_code);
}

int narmau_verbose(void)
{
    static int verbose = -1;
    if (verbose < 0) {
        const char *v = getenv("NARMA_VERBOSE");
        verbose = v != NULL && v[0] != '\0' && v[0] != '0';
    }
    return verbose;
}

int narmau_err(int errclass, const char *func, const char *fmt, ...)
{
    if (narmau_verbose()) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "narma: %s: %s: ", func, NARMA_Strerror(errclass));
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    return errclass;
}
