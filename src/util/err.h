/* Error reporting shared by every layer: a class returned unchanged, with a
 * one-line diagnostic on stderr when NARMA_VERBOSE is set, and the code of the
 * last failed MPI call kept for NARMA_Get_mpi_error. */
#ifndef NARMAU_ERR_H
#define NARMAU_ERR_H

#include <narma/narma.h>

/* Report an error: returns errclass unchanged, after printing "narma: func: class: message"
 * when NARMA_VERBOSE is set. */
int narmau_err(int errclass, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define NARMAU_ERR(cls, ...) narmau_err((cls), __func__, __VA_ARGS__)

/* Record an MPI failure and return NARMA_ERR_MPI (the MPI code stays retrievable). */
int narmau_mpi_error(int mpi_code);
/* The same, saying (with NARMA_VERBOSE) which call of which function failed. */
int narmau_mpi_error_in(int mpi_code, const char *func, const char *call);
/* The MPI code behind this thread's last NARMA_ERR_MPI. */
int narmau_last_mpi_error(void);
#define NARMAU_MPI(call)                                                 \
    do {                                                                 \
        int narmau_mpi_rc_ = (call);                                     \
        if (narmau_mpi_rc_ != MPI_SUCCESS)                               \
            return narmau_mpi_error_in(narmau_mpi_rc_, __func__, #call); \
    } while (0)

/* NARMA_VERBOSE is set (read once). */
int narmau_verbose(void);

#endif
