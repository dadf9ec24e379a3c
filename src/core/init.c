/* Library set-up: lazy after a plain MPI_Init, or explicit through NARMA_Init. */
#include "core/narmai.h"
#include "util/dtype.h"
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

int narmai_lazy_init(void)
{
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) return NARMAU_ERR(NARMA_ERR_NOT_INIT, "call MPI_Init or NARMA_Init first");
    MPI_Finalized(&flag);
    if (flag) return NARMAU_ERR(NARMA_ERR_NOT_INIT, "MPI is already finalised");

    /* NARMA_TRANSPORT: auto (default), shm, mpi. */
    const char *t = getenv("NARMA_TRANSPORT");
    narmai_g.forced_transport = 0;
    if (t != NULL && strcmp(t, "shm") == 0)
        narmai_g.forced_transport = 1;
    else if (t != NULL && strcmp(t, "mpi") == 0)
        narmai_g.forced_transport = 2;
    else if (t != NULL && *t != '\0' && strcmp(t, "auto") != 0)
        fprintf(stderr, "narma: unknown NARMA_TRANSPORT=%s, using auto\n", t);

    /* NARMA_RING_SLOTS: notification ring capacity per target, rounded up to a power of two. */
    uint32_t slots = narmai_env_u32("NARMA_RING_SLOTS", NARMA_DEFAULT_RING_SLOTS);
    if (slots < 2) slots = 2;
    uint32_t p2 = 1;
    while (p2 < slots && p2 < (UINT32_C(1) << 24))
        p2 <<= 1;
    narmai_g.ring_slots = p2;
    /* NARMA_SPIN_COUNT: polls before a waiting call starts yielding the core. */
    narmau_spin_count = narmai_env_u32("NARMA_SPIN_COUNT", 2000);
    /* NARMA_FENCE_FLAT_MAX: windows up to this many ranks fence with a one-step barrier
     * (P^2 counter updates), larger ones with a dissemination barrier. */
    narmai_g.fence_flat_max = narmai_env_u32("NARMA_FENCE_FLAT_MAX", 16);
    /* NARMA_LOCK_PREFERENCE_MS: how long a shared locker that already holds a lock defers to
     * a waiting exclusive locker (epoch_lock.c). */
    narmai_g.lock_pref_ns = UINT64_C(1000000) * narmai_env_u32("NARMA_LOCK_PREFERENCE_MS", 100);
    narmau_dlist_init(&narmai_g.windows);
    narmai_g.initialized = 1;
    return NARMA_SUCCESS;
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

int NARMA_Finalize(void)
{
    if (narmai_g.initialized) {
        if (!narmau_dlist_empty(&narmai_g.windows))
            fprintf(stderr, "narma: NARMA_Finalize with %d window(s) not freed\n",
                    narmai_g.nwindows);
        narmau_dtype_cache_clear();
        narmai_g.initialized = 0;
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
    if (size < 0 || baseptr == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "size %ld", (long)size);
    NARMAU_MPI(MPI_Alloc_mem(size, info, baseptr));
    return NARMA_SUCCESS;
}

int NARMA_Free_mem(void *base)
{
    NARMAU_MPI(MPI_Free_mem(base));
    return NARMA_SUCCESS;
}

int NARMA_Type_free(MPI_Datatype *datatype)
{
    if (datatype == NULL || *datatype == MPI_DATATYPE_NULL)
        return NARMAU_ERR(NARMA_ERR_TYPE, "NULL datatype");
    narmau_dtype_forget(*datatype);
    NARMAU_MPI(MPI_Type_free(datatype));
    return NARMA_SUCCESS;
}
