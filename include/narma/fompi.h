/*
 * foMPI-NA source compatibility: a program written against foMPI-NA's
 * fompi.h builds against narma by including <narma/fompi.h> instead.
 *
 * Every foMPI_ name of foMPI-NA's public header maps onto its NARMA_
 * counterpart (same arguments, same order: narma's API was modelled on it).
 * Two things differ from a plain prefix swap, and this header bridges them:
 *
 *  - foMPI_Win_get_attr stores the VALUE of the predefined attributes
 *    (WIN_SIZE as an MPI_Aint, DISP_UNIT, CREATE_FLAVOR and MODEL as ints),
 *    where MPI and NARMA_Win_get_attr store a POINTER to it. foMPI programs
 *    read the flavor into an int; here foMPI_Win_get_attr dereferences for
 *    the predefined keys (WIN_BASE is the base address in both conventions).
 *  - foMPI_Win_set_name returns foMPI_NAME_ABBREVIATED when the name did
 *    not fit into MPI_MAX_OBJECT_NAME characters (and stores it truncated).
 *
 * The header also pulls in the standard headers foMPI-NA's fompi.h does, so
 * programs that relied on them (printf, malloc, memcpy, int64_t, PRId64,
 * assert, sleep) still compile. Operation constants (foMPI_SUM, ...) are
 * narma's (MPI_Op handles), not foMPI's small integers: programs that use the
 * names are unaffected.
 *
 * Include either this header or <narma/narma.h> with the NARMA_ names, not
 * foMPI-NA's own fompi.h. Threads: as narma (narma.h).
 */
#ifndef NARMA_FOMPI_H
#define NARMA_FOMPI_H

#include <narma/narma.h>

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <strings.h>
#include <time.h>
#include <unistd.h>
#endif

/* ---- Types and handles ------------------------------------------------ */
typedef NARMA_Win foMPI_Win;
typedef NARMA_Request foMPI_Request;
typedef NARMA_Op foMPI_Op;

#define foMPI_WIN_NULL     NARMA_WIN_NULL
#define foMPI_REQUEST_NULL NARMA_REQUEST_NULL
#define foMPI_COMM_NULL    NARMA_COMM_NULL
#define foMPI_UNDEFINED    NARMA_UNDEFINED
#define foMPI_TAG_UB       NARMA_TAG_UB
#define foMPI_ANY_SOURCE   NARMA_ANY_SOURCE
#define foMPI_ANY_TAG      NARMA_ANY_TAG

/* ---- Window flavors, models, asserts, locks, attributes --------------- */
#define foMPI_WIN_FLAVOR_CREATE   NARMA_WIN_FLAVOR_CREATE
#define foMPI_WIN_FLAVOR_ALLOCATE NARMA_WIN_FLAVOR_ALLOCATE
#define foMPI_WIN_FLAVOR_DYNAMIC  NARMA_WIN_FLAVOR_DYNAMIC
#define foMPI_WIN_SEPARATE        NARMA_WIN_SEPARATE
#define foMPI_WIN_UNIFIED         NARMA_WIN_UNIFIED

#define foMPI_MODE_NOCHECK   NARMA_MODE_NOCHECK
#define foMPI_MODE_NOSTORE   NARMA_MODE_NOSTORE
#define foMPI_MODE_NOPUT     NARMA_MODE_NOPUT
#define foMPI_MODE_NOPRECEDE NARMA_MODE_NOPRECEDE
#define foMPI_MODE_NOSUCCEED NARMA_MODE_NOSUCCEED

#define foMPI_LOCK_SHARED    NARMA_LOCK_SHARED
#define foMPI_LOCK_EXCLUSIVE NARMA_LOCK_EXCLUSIVE

#define foMPI_WIN_BASE          NARMA_WIN_BASE
#define foMPI_WIN_SIZE          NARMA_WIN_SIZE
#define foMPI_WIN_DISP_UNIT     NARMA_WIN_DISP_UNIT
#define foMPI_WIN_CREATE_FLAVOR NARMA_WIN_CREATE_FLAVOR
#define foMPI_WIN_MODEL         NARMA_WIN_MODEL

/* ---- Operations -------------------------------------------------------- */
#define foMPI_SUM     NARMA_SUM
#define foMPI_PROD    NARMA_PROD
#define foMPI_MAX     NARMA_MAX
#define foMPI_MIN     NARMA_MIN
#define foMPI_LAND    NARMA_LAND
#define foMPI_LOR     NARMA_LOR
#define foMPI_LXOR    NARMA_LXOR
#define foMPI_BAND    NARMA_BAND
#define foMPI_BOR     NARMA_BOR
#define foMPI_BXOR    NARMA_BXOR
#define foMPI_MAXLOC  NARMA_MAXLOC
#define foMPI_MINLOC  NARMA_MINLOC
#define foMPI_REPLACE NARMA_REPLACE
#define foMPI_NO_OP   NARMA_NO_OP

/* ---- Error codes (foMPI_SUCCESS is MPI_SUCCESS, 0, in both) ------------ */
#define foMPI_ERROR_RMA_NO_SYNC               NARMA_ERROR_RMA_NO_SYNC
#define foMPI_ERROR_RMA_DATATYPE_MISMATCH     NARMA_ERROR_RMA_DATATYPE_MISMATCH
#define foMPI_ERROR_RMA_NO_LOCK_HOLDING       NARMA_ERROR_RMA_NO_LOCK_HOLDING
#define foMPI_ERROR_RMA_SYNC_CONFLICT         NARMA_ERROR_RMA_SYNC_CONFLICT
#define foMPI_ERROR_RMA_WRITE_SHARED_CONFLICT NARMA_ERROR_RMA_WRITE_SHARED_CONFLICT
#define foMPI_ERROR_RMA_WIN_MEM_NOT_FOUND     NARMA_ERROR_RMA_WIN_MEM_NOT_FOUND
#define foMPI_OP_NOT_SUPPORTED                NARMA_OP_NOT_SUPPORTED
#define foMPI_DATATYPE_NOT_SUPPORTED          NARMA_DATATYPE_NOT_SUPPORTED
/** A warning, not an error class of narma's: foMPI_Win_set_name truncated the name. */
#define foMPI_NAME_ABBREVIATED (NARMA_ERR_LASTCODE + 1)

/* ---- Functions: the same calls under narma's names --------------------- */
#define foMPI_Init          NARMA_Init
#define foMPI_Finalize      NARMA_Finalize
#define foMPI_Alloc_mem     NARMA_Alloc_mem
#define foMPI_Free_mem      NARMA_Free_mem
#define foMPI_Type_free     NARMA_Type_free
#define foMPI_Error_string  NARMA_Error_string
#define foMPI_Get_mpi_error NARMA_Get_mpi_error

#define foMPI_Win_create         NARMA_Win_create
#define foMPI_Win_allocate       NARMA_Win_allocate
#define foMPI_Win_create_dynamic NARMA_Win_create_dynamic
#define foMPI_Win_free           NARMA_Win_free
#define foMPI_Win_attach         NARMA_Win_attach
#define foMPI_Win_detach         NARMA_Win_detach
#define foMPI_Win_get_group      NARMA_Win_get_group
#define foMPI_Win_get_name       NARMA_Win_get_name
#define foMPI_Win_create_keyval  NARMA_Win_create_keyval
#define foMPI_Win_free_keyval    NARMA_Win_free_keyval
#define foMPI_Win_set_attr       NARMA_Win_set_attr
#define foMPI_Win_delete_attr    NARMA_Win_delete_attr

#define foMPI_Win_fence           NARMA_Win_fence
#define foMPI_Win_start           NARMA_Win_start
#define foMPI_Win_complete        NARMA_Win_complete
#define foMPI_Win_post            NARMA_Win_post
#define foMPI_Win_wait            NARMA_Win_wait
#define foMPI_Win_test            NARMA_Win_test
#define foMPI_Win_lock            NARMA_Win_lock
#define foMPI_Win_unlock          NARMA_Win_unlock
#define foMPI_Win_lock_all        NARMA_Win_lock_all
#define foMPI_Win_unlock_all      NARMA_Win_unlock_all
#define foMPI_Win_flush           NARMA_Win_flush
#define foMPI_Win_flush_all       NARMA_Win_flush_all
#define foMPI_Win_flush_local     NARMA_Win_flush_local
#define foMPI_Win_flush_local_all NARMA_Win_flush_local_all
#define foMPI_Win_sync            NARMA_Win_sync

#define foMPI_Put              NARMA_Put
#define foMPI_Get              NARMA_Get
#define foMPI_Accumulate       NARMA_Accumulate
#define foMPI_Get_accumulate   NARMA_Get_accumulate
#define foMPI_Fetch_and_op     NARMA_Fetch_and_op
#define foMPI_Compare_and_swap NARMA_Compare_and_swap
#define foMPI_Rput             NARMA_Rput
#define foMPI_Rget             NARMA_Rget
#define foMPI_Raccumulate      NARMA_Raccumulate
#define foMPI_Rget_accumulate  NARMA_Rget_accumulate

#define foMPI_Notify_init NARMA_Notify_init
#define foMPI_Put_notify  NARMA_Put_notify
#define foMPI_Get_notify  NARMA_Get_notify
#define foMPI_Rput_notify NARMA_Rput_notify
#define foMPI_Rget_notify NARMA_Rget_notify

#define foMPI_Start        NARMA_Start
#define foMPI_Wait         NARMA_Wait
#define foMPI_Test         NARMA_Test
#define foMPI_Waitany      NARMA_Waitany
#define foMPI_Testany      NARMA_Testany
#define foMPI_Request_free NARMA_Request_free

/**
 * foMPI's convention for the predefined attributes: *attribute_val receives
 * the value (void * for WIN_BASE, MPI_Aint for WIN_SIZE, int for the others),
 * not a pointer to it. Other keys behave as NARMA_Win_get_attr (the stored
 * attribute pointer). Errors: those of NARMA_Win_get_attr.
 */
static inline int foMPI_Win_get_attr(foMPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    void *p = NULL;
    int rc = NARMA_Win_get_attr(win, win_keyval, &p, flag);
    if (rc != NARMA_SUCCESS || !*flag) return rc;
    if (win_keyval == NARMA_WIN_BASE)
        *(void **)attribute_val = p;
    else if (win_keyval == NARMA_WIN_SIZE)
        *(MPI_Aint *)attribute_val = *(MPI_Aint *)p;
    else if (win_keyval == NARMA_WIN_DISP_UNIT || win_keyval == NARMA_WIN_CREATE_FLAVOR ||
             win_keyval == NARMA_WIN_MODEL)
        *(int *)attribute_val = *(int *)p;
    else
        *(void **)attribute_val = p;
    return NARMA_SUCCESS;
}

/** Set the name; foMPI_NAME_ABBREVIATED if it had to be truncated to
 *  MPI_MAX_OBJECT_NAME - 1 characters. Errors: those of NARMA_Win_set_name. */
static inline int foMPI_Win_set_name(foMPI_Win win, const char *win_name)
{
    int rc = NARMA_Win_set_name(win, win_name);
    if (rc == NARMA_SUCCESS && strlen(win_name) >= MPI_MAX_OBJECT_NAME)
        return foMPI_NAME_ABBREVIATED;
    return rc;
}

#endif /* NARMA_FOMPI_H */
