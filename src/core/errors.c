/* NARMA_Error_string and the wrapped MPI error code (the texts: util/err.c). */
#include "core/narmai.h"
#include <stdio.h>

int NARMA_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string == NULL || resultlen == NULL)
        return NARMAU_ERR(NARMA_ERR_ARG, "string and resultlen must not be NULL");
    int n = snprintf(string, NARMA_MAX_ERROR_STRING, "%s", NARMA_Strerror(errorcode));
    *resultlen = n < NARMA_MAX_ERROR_STRING ? n : NARMA_MAX_ERROR_STRING - 1;
    return NARMA_SUCCESS;
}

int NARMA_Get_mpi_error(void) { return narmau_last_mpi_error(); }
