/* Error reporting (err.h). */
#include "util/err.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static _Thread_local int narmau_last_mpi_code = MPI_SUCCESS;

/* The error classes' texts (NARMA_Strerror, public: every layer reports through them). */
static const char *const narmau_error_strings[NARMA_ERR_LASTCODE] = {
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
    [NARMA_ERR_NOTIFY_IDX] = "notification counter index outside the target's counters",
};

const char *NARMA_Strerror(int errorcode)
{
    if (errorcode < 0 || errorcode >= NARMA_ERR_LASTCODE) return "unknown narma error code";
    return narmau_error_strings[errorcode];
}

int narmau_last_mpi_error(void) { return narmau_last_mpi_code; }

int narmau_mpi_error(int mpi_code)
{
    narmau_last_mpi_code = mpi_code;
    return narmau_err(NARMA_ERR_MPI, "MPI", "MPI error code %d", mpi_code);
}

int narmau_mpi_error_in(int mpi_code, const char *func, const char *call)
{
    narmau_last_mpi_code = mpi_code;
    const char *paren = strchr(call, '(');
    int n = paren != NULL ? (int)(paren - call) : (int)strlen(call);
    return narmau_err(NARMA_ERR_MPI, func, "%.*s: MPI error code %d", n, call, mpi_code);
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
