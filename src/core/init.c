/* Library set-up: lazy after a plain MPI_Init, or explicit through NARMA_Init. */
#include "core/narmai.h"
#include "util/dtype.h"
#include "util/pool.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct narmai_global narmai_g;

static uint32_t narmai_env_u32(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return dflt;
    char *end;
    unsigned long x = strtoul(v, &end, 0);
    if (*end != '\0' || x > UINT32_MAX) {
        fprintf(stderr, "narma: ignoring %s=%s (not a number)\n", name, v);
        return dflt;
    }
    return (uint32_t)x;
}

/* NARMA_THREADS=auto (default), on or off: whether the process lock is on. auto: on when
 * MPI provides MPI_THREAD_MULTIPLE (MPI_Query_thread), so a program that asked MPI for it is
 * safe, and one that did not pays nothing. */
static int narmai_threads_wanted(void)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    const char *v = getenv("NARMA_THREADS");
    if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0) return provided == MPI_THREAD_MULTIPLE;
    if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0) return 1;
    if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) {
        if (provided == MPI_THREAD_MULTIPLE)
            fprintf(stderr, "narma: NARMA_THREADS=off under MPI_THREAD_MULTIPLE: narma calls "
                            "must come from one thread at a time\n");
        return 0;
    }
    fprintf(stderr, "narma: ignoring NARMA_THREADS=%s (auto, on or off)\n", v);
    return provided == MPI_THREAD_MULTIPLE;
}

/* Initialisation is serialised: two threads whose first narma calls race set up once. */
static pthread_mutex_t narmai_init_lock = PTHREAD_MUTEX_INITIALIZER;

/* What MPI is: 0 up, 1 not yet initialised, 2 finalised. */
static int narmai_mpi_state(void)
{
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) return 1;
    MPI_Finalized(&flag);
    return flag ? 2 : 0;
}

static int narmai_setup(void)
{
    switch (narmai_mpi_state()) {
    case 1:
        return NARMAU_ERR(NARMA_ERR_NOT_INIT, "call MPI_Init or NARMA_Init first");
    case 2:
        return NARMAU_ERR(NARMA_ERR_NOT_INIT, "MPI is already finalised");
    default:
        break;
    }

    /* NARMA_TRANSPORT, NARMA_NODE_SIZE: read by the transport layer. */
    narmat_configure();
    /* NARMA_RING_SLOTS: notification ring capacity per target, rounded up to a power of two. */
    uint32_t slots = narmai_env_u32("NARMA_RING_SLOTS", NARMA_DEFAULT_RING_SLOTS);
    if (slots < 2) slots = 2;
    uint32_t p2 = 1;
    while (p2 < slots && p2 < (UINT32_C(1) << 24))
        p2 <<= 1;
    narmai_g.ring_slots = p2;
    /* NARMA_SPIN_COUNT: polls before a waiting call starts yielding the core. */
    narmau_spin_count = narmai_env_u32("NARMA_SPIN_COUNT", 2000);
    /* NARMA_TEST_POOL_NO_REUSE=1 (tests): retired handles are never reused (util/pool.h). */
    narmau_pool_no_reuse = narmai_env_u32("NARMA_TEST_POOL_NO_REUSE", 0) != 0;
    /* NARMA_FENCE_FLAT_MAX: windows up to this many ranks fence with a one-step barrier
     * (P^2 counter updates), larger ones with a dissemination barrier. */
    narmai_g.fence_flat_max = narmai_env_u32("NARMA_FENCE_FLAT_MAX", 16);
    /* NARMA_LOCK_PREFERENCE_MS: how long a shared locker that already holds a lock defers to
     * a waiting exclusive locker (epoch_lock.c). */
    narmai_g.lock_pref_ns = UINT64_C(1000000) * narmai_env_u32("NARMA_LOCK_PREFERENCE_MS", 100);
    narmau_dlist_init(&narmai_g.windows);
    /* Release: publish everything above to threads that see either flag (narmai_ensure_init,
     * narmai_api_enter). The mode is decided once: a later re-initialisation keeps it. */
    if (__atomic_load_n(&narmau_lock_mode, __ATOMIC_RELAXED) == NARMAU_LOCK_UNSET)
        __atomic_store_n(&narmau_lock_mode,
                         narmai_threads_wanted() ? NARMAU_LOCK_ON : NARMAU_LOCK_OFF,
                         __ATOMIC_RELEASE);
    __atomic_store_n(&narmai_g.initialized, 1, __ATOMIC_RELEASE);
    return NARMA_SUCCESS;
}

int narmai_lazy_init(void)
{
    pthread_mutex_lock(&narmai_init_lock);
    int rc =
        __atomic_load_n(&narmai_g.initialized, __ATOMIC_ACQUIRE) ? NARMA_SUCCESS : narmai_setup();
    pthread_mutex_unlock(&narmai_init_lock);
    return rc;
}

/* The first public call, or one with the lock on (narmai_api_enter). */
int narmai_api_enter_slow(void)
{
    /* Before MPI is up the call itself reports the error (no message twice). */
    if (__atomic_load_n(&narmau_lock_mode, __ATOMIC_ACQUIRE) == NARMAU_LOCK_UNSET &&
        narmai_mpi_state() == 0)
        (void)narmai_lazy_init();
    return narmau_threaded() ? narmau_api_enter_locked() : 0;
}

int NARMA_Init(int *argc, char ***argv)
{
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        NARMAU_MPI(MPI_Init(argc, argv));
        narmai_g.we_initialized_mpi = 1;
    }
    return narmai_ensure_init();
}

int NARMA_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (provided == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "provided is NULL");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return NARMAU_ERR(NARMA_ERR_ARG, "required thread level %d", required);
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        NARMAU_MPI(MPI_Init_thread(argc, argv, required, provided));
        narmai_g.we_initialized_mpi = 1;
    }
    int rc = narmai_ensure_init();
    if (rc) return rc;
    return NARMA_Query_thread(provided);
}

int NARMA_Query_thread(int *provided)
{
    NARMAI_API_LOCK();
    if (provided == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "provided is NULL");
    int rc = narmai_ensure_init();
    if (rc) return rc;
    NARMAU_MPI(MPI_Query_thread(provided));
    if (*provided == MPI_THREAD_MULTIPLE && !narmau_threaded()) *provided = MPI_THREAD_SERIALIZED;
    return NARMA_SUCCESS;
}

int NARMA_Finalize(void)
{
    NARMAI_API_LOCK();
    if (narmai_g.initialized) {
        if (!narmau_dlist_empty(&narmai_g.windows))
            fprintf(stderr, "narma: NARMA_Finalize with %d window(s) not freed\n",
                    narmai_g.nwindows);
        narmau_dtype_cache_clear();
        __atomic_store_n(&narmai_g.initialized, 0, __ATOMIC_RELAXED);
    }
    if (narmai_g.we_initialized_mpi) {
        narmai_g.we_initialized_mpi = 0;
        NARMAU_MPI(MPI_Finalize());
    }
    return NARMA_SUCCESS;
}

const char *NARMA_Get_version(void) { return NARMA_VERSION; }

int NARMA_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    NARMAI_API_LOCK();
    if (size < 0 || baseptr == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "size %ld", (long)size);
    NARMAU_MPI(MPI_Alloc_mem(size, info, baseptr));
    return NARMA_SUCCESS;
}

int NARMA_Free_mem(void *base)
{
    NARMAI_API_LOCK();
    NARMAU_MPI(MPI_Free_mem(base));
    return NARMA_SUCCESS;
}

int NARMA_Type_free(MPI_Datatype *datatype)
{
    NARMAI_API_LOCK();
    if (datatype == NULL || *datatype == MPI_DATATYPE_NULL)
        return NARMAU_ERR(NARMA_ERR_TYPE, "NULL datatype");
    /* MPI reports this to its handler of no object, fatal by default: refuse it here. */
    if (narmau_dtype_is_named(*datatype))
        return NARMAU_ERR(NARMA_ERR_TYPE, "a predefined datatype cannot be freed");
    narmau_dtype_forget(*datatype);
    NARMAU_MPI(MPI_Type_free(datatype));
    return NARMA_SUCCESS;
}
