/* narma's own MPI calls go to the MPI library's profiling names (PMPI_), never to MPI_:
 * libnarma-mpi (bindings/pmpi) defines the MPI_ one-sided calls on top of narma, so an MPI_
 * call made from inside narma would come back into that library. Force-included into every
 * source of libnarma (src/CMakeLists.txt); the ctest unit.libnarma_calls_pmpi_only checks
 * that libnarma has no undefined MPI_ symbol left (add a line here when narma calls a new
 * MPI function). Both MPICH and Open MPI provide every PMPI_ name used below, except the MPI-4
 * large-count (_c) ones, which narma calls only where MPI_VERSION >= 4 (not Open MPI 5, an
 * MPI-3.1 library). The blocking collectives among them are redefined by
 * util/pmpi_unlocked.h, once mpi.h is in. */
#ifndef NARMA_UTIL_PMPI_H
#define NARMA_UTIL_PMPI_H

#define MPI_Abort                 PMPI_Abort
#define MPI_Accumulate            PMPI_Accumulate
#define MPI_Allgather             PMPI_Allgather
#define MPI_Alloc_mem             PMPI_Alloc_mem
#define MPI_Allreduce             PMPI_Allreduce
#define MPI_Barrier               PMPI_Barrier
#define MPI_Comm_create_keyval    PMPI_Comm_create_keyval
#define MPI_Comm_delete_attr      PMPI_Comm_delete_attr
#define MPI_Comm_dup              PMPI_Comm_dup
#define MPI_Comm_free             PMPI_Comm_free
#define MPI_Comm_get_attr         PMPI_Comm_get_attr
#define MPI_Comm_group            PMPI_Comm_group
#define MPI_Comm_rank             PMPI_Comm_rank
#define MPI_Comm_set_attr         PMPI_Comm_set_attr
#define MPI_Comm_set_errhandler   PMPI_Comm_set_errhandler
#define MPI_Comm_size             PMPI_Comm_size
#define MPI_Comm_split            PMPI_Comm_split
#define MPI_Comm_split_type       PMPI_Comm_split_type
#define MPI_Compare_and_swap      PMPI_Compare_and_swap
#define MPI_Errhandler_free       PMPI_Errhandler_free
#define MPI_Error_class           PMPI_Error_class
#define MPI_Fetch_and_op          PMPI_Fetch_and_op
#define MPI_Iallgather            PMPI_Iallgather
#define MPI_Iallreduce            PMPI_Iallreduce
#define MPI_Finalize              PMPI_Finalize
#define MPI_Finalized             PMPI_Finalized
#define MPI_Free_mem              PMPI_Free_mem
#define MPI_Get                   PMPI_Get
#define MPI_Get_accumulate        PMPI_Get_accumulate
#define MPI_Get_address           PMPI_Get_address
#define MPI_Group_compare         PMPI_Group_compare
#define MPI_Group_free            PMPI_Group_free
#define MPI_Group_incl            PMPI_Group_incl
#define MPI_Group_size            PMPI_Group_size
#define MPI_Group_translate_ranks PMPI_Group_translate_ranks
#define MPI_Info_create           PMPI_Info_create
#define MPI_Info_free             PMPI_Info_free
#define MPI_Info_get              PMPI_Info_get
#define MPI_Info_get_nkeys        PMPI_Info_get_nkeys
#define MPI_Info_get_nthkey       PMPI_Info_get_nthkey
#define MPI_Info_get_valuelen     PMPI_Info_get_valuelen
#define MPI_Info_set              PMPI_Info_set
#define MPI_Init                  PMPI_Init
#define MPI_Init_thread           PMPI_Init_thread
#define MPI_Initialized           PMPI_Initialized
#define MPI_Iprobe                PMPI_Iprobe
#define MPI_Pack                  PMPI_Pack
#define MPI_Pack_size             PMPI_Pack_size
#define MPI_Put                   PMPI_Put
#define MPI_Query_thread          PMPI_Query_thread
#define MPI_Raccumulate           PMPI_Raccumulate
#define MPI_Reduce_local          PMPI_Reduce_local
#define MPI_Request_free          PMPI_Request_free
#define MPI_Rget                  PMPI_Rget
#define MPI_Rget_accumulate       PMPI_Rget_accumulate
#define MPI_Rput                  PMPI_Rput
#define MPI_Status_set_cancelled  PMPI_Status_set_cancelled
#define MPI_Status_set_elements_x PMPI_Status_set_elements_x
#define MPI_Test                  PMPI_Test
#define MPI_Type_commit           PMPI_Type_commit
#define MPI_Type_contiguous       PMPI_Type_contiguous
#define MPI_Type_create_hindexed  PMPI_Type_create_hindexed
#define MPI_Type_create_keyval    PMPI_Type_create_keyval
#define MPI_Type_create_struct    PMPI_Type_create_struct
#define MPI_Type_dup              PMPI_Type_dup
#define MPI_Type_free             PMPI_Type_free
#define MPI_Type_free_keyval      PMPI_Type_free_keyval
#define MPI_Type_get_attr         PMPI_Type_get_attr
#define MPI_Type_get_contents     PMPI_Type_get_contents
#define MPI_Type_get_contents_c   PMPI_Type_get_contents_c
#define MPI_Type_get_envelope     PMPI_Type_get_envelope
#define MPI_Type_get_envelope_c   PMPI_Type_get_envelope_c
#define MPI_Type_get_extent       PMPI_Type_get_extent
#define MPI_Type_get_true_extent  PMPI_Type_get_true_extent
#define MPI_Type_set_attr         PMPI_Type_set_attr
#define MPI_Type_size             PMPI_Type_size
#define MPI_Type_size_x           PMPI_Type_size_x
#define MPI_Unpack                PMPI_Unpack
#define MPI_Wait                  PMPI_Wait
#define MPI_Win_allocate          PMPI_Win_allocate
#define MPI_Win_allocate_shared   PMPI_Win_allocate_shared
#define MPI_Win_attach            PMPI_Win_attach
#define MPI_Win_create            PMPI_Win_create
#define MPI_Win_create_dynamic    PMPI_Win_create_dynamic
#define MPI_Win_create_keyval     PMPI_Win_create_keyval
#define MPI_Win_delete_attr       PMPI_Win_delete_attr
#define MPI_Win_detach            PMPI_Win_detach
#define MPI_Win_flush             PMPI_Win_flush
#define MPI_Win_flush_all         PMPI_Win_flush_all
#define MPI_Win_flush_local       PMPI_Win_flush_local
#define MPI_Win_flush_local_all   PMPI_Win_flush_local_all
#define MPI_Win_free              PMPI_Win_free
#define MPI_Win_free_keyval       PMPI_Win_free_keyval
#define MPI_Win_get_attr          PMPI_Win_get_attr
#define MPI_Win_get_errhandler    PMPI_Win_get_errhandler
#define MPI_Win_get_name          PMPI_Win_get_name
#define MPI_Win_lock_all          PMPI_Win_lock_all
#define MPI_Win_set_attr          PMPI_Win_set_attr
#define MPI_Win_set_errhandler    PMPI_Win_set_errhandler
#define MPI_Win_set_name          PMPI_Win_set_name
#define MPI_Win_shared_query      PMPI_Win_shared_query
#define MPI_Win_sync              PMPI_Win_sync
#define MPI_Win_unlock_all        PMPI_Win_unlock_all
#define MPI_Wtime                 PMPI_Wtime

#endif
