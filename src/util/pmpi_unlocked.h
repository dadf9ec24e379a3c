/* The blocking MPI collectives narma makes (window creation and free, set_num_notify) wait for
 * other processes, so they run with the process lock let go (util/thread.h): a thread creating
 * a window over one communicator must not keep another thread out of narma while the peers it
 * waits for are themselves waiting for that other thread's collective on another communicator.
 * Included by transport/transport.h, once mpi.h is in (its prototypes must not meet these
 * function-like macros); util/pmpi.h named them PMPI_ before. Their arguments are evaluated
 * with the lock let go: they must not read narma's shared state, and nobody may keep a pointer
 * into it across them. */
#ifndef NARMA_UTIL_PMPI_UNLOCKED_H
#define NARMA_UTIL_PMPI_UNLOCKED_H

#include <mpi.h>
#include "util/thread.h"

#undef MPI_Allgather
#undef MPI_Allreduce
#undef MPI_Barrier
#undef MPI_Comm_dup
#undef MPI_Comm_split
#undef MPI_Comm_split_type
#undef MPI_Win_allocate
#undef MPI_Win_allocate_shared
#undef MPI_Win_create
#undef MPI_Win_create_dynamic
#undef MPI_Win_free
#define MPI_Allgather(...)           NARMAU_UNLOCKED(PMPI_Allgather(__VA_ARGS__))
#define MPI_Allreduce(...)           NARMAU_UNLOCKED(PMPI_Allreduce(__VA_ARGS__))
#define MPI_Barrier(...)             NARMAU_UNLOCKED(PMPI_Barrier(__VA_ARGS__))
#define MPI_Comm_dup(...)            NARMAU_UNLOCKED(PMPI_Comm_dup(__VA_ARGS__))
#define MPI_Comm_split(...)          NARMAU_UNLOCKED(PMPI_Comm_split(__VA_ARGS__))
#define MPI_Comm_split_type(...)     NARMAU_UNLOCKED(PMPI_Comm_split_type(__VA_ARGS__))
#define MPI_Win_allocate(...)        NARMAU_UNLOCKED(PMPI_Win_allocate(__VA_ARGS__))
#define MPI_Win_allocate_shared(...) NARMAU_UNLOCKED(PMPI_Win_allocate_shared(__VA_ARGS__))
#define MPI_Win_create(...)          NARMAU_UNLOCKED(PMPI_Win_create(__VA_ARGS__))
#define MPI_Win_create_dynamic(...)  NARMAU_UNLOCKED(PMPI_Win_create_dynamic(__VA_ARGS__))
#define MPI_Win_free(...)            NARMAU_UNLOCKED(PMPI_Win_free(__VA_ARGS__))

#endif
