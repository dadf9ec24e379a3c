/* Error classes, their strings, and the wrapped MPI error code. */
#include "core/narmai.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local int narmai_last_mpi_error = MPI_SUCCESS;

static const char *const narmai_error_strings[NARMA_ERR_LASTCODE] = {
    [NARMA_SUCCESS] = "success",
    [NARMA_ERR_ARG] = "invalid argument",
    [NARMA_ERR_RANK] = "invalid rank: outside the window's group",
    [NARMA_ERR_TAG] = "invalid tag: outside 0..NARMA_TAG_UB or a wildcard where none is allowed",
    [NARMA_ERR_COUNT] = "invalid count",
    [NARMA_ERR_TYPE] = "invalid or unsupported datatype, or type signatures do not match",
    [NARMA_ERR_OP] = "operation not allowed for this call or datatype",
    [NARMA_ERR_WIN] = "invalid window",
    [NARMA_ERR_DISP] = "access outside the target's window memory",
    [NARMA_ERR_RMA_SYNC] = "call not allowed in the window's current epoch state",
    [NARMA_ERR_RMA_CONFLICT] = "conflicting synchronisation (epoch or lock already open)",
    [NARMA_ERR_REQUEST] = "invalid request, freed request, or request in the wrong state",
    [NARMA_ERR_NO_MEM] = "out of memory",
    [NARMA_ERR_ATTACH] = "dynamic window attach or detach failed",
    [NARMA_ERR_KEYVAL] = "invalid attribute key",
    [NARMA_ERR_NOT_INIT] = "MPI is not initialised",
    [NARMA_ERR_PENDING] = "resources still in use: pending epochs or active requests",
    [NARMA_ERR_UNSUPPORTED] = "not supported by the window's transport",
    [NARMA_ERR_MPI] = "an MPI call failed (NARMA_Get_mpi_error gives its code)",
    [NARMA_ERR_INTERN] = "internal error in narma",
};

const char *NARMA_Strerror(int errorcode)
{
    if (errorcode < 0 || errorcode >= NARMA_ERR_LASTCODE) return "unknown narma error code";
    return narmai_error_strings[errorcode];
}

int NARMA_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string == NULL || resultlen == NULL)
        return NARMAU_ERR(NARMA_ERR_ARG, "string and resultlen must not be NULL");
    int n = snprintf(string, NARMA_MAX_ERROR_STRING, "%s", NARMA_Strerror(errorcode));
    *resultlen = n < NARMA_MAX_ERROR_STRING ? n : NARMA_MAX_ERROR_STRING - 1;
    return NARMA_SUCCESS;
}

int NARMA_Get_mpi_error(void) { return narmai_last_mpi_error; }

int narmau_mpi_error(int mpi_code)
{
    narmai_last_mpi_error = mpi_code;
    return narmau_err(NARMA_ERR_MPI, "MPI", "MPI error code %d", mpi_code);
}

int narmau_err(int errclass, const char *func, const char *fmt, ...)
{
    static int verbose = -1;
    if (verbose < 0) {
        const char *v = getenv("NARMA_VERBOSE");
        verbose = v != NULL && v[0] != '\0' && v[0] != '0';
    }
    if (verbose) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "narma: %s: %s: ", func, NARMA_Strerror(errclass));
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    return errclass;
}
