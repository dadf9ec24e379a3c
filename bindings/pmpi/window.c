/* Windows: creation, the table from MPI handles to narma windows, what MPI keeps per window,
 * errors, and the report at MPI_Finalize. */
#include "pmpi.h"
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PW_BUCKETS 256 /* power of two */

static struct pw *buckets[PW_BUCKETS];
static struct pw *last; /* one-entry cache: most programs use one window at a time */
static struct pw *all;  /* every window, newest first (the report) */
static unsigned nwin;   /* windows created so far (their ids) */
static int mode = -1;   /* NARMA_PMPI: 1 carry windows (default), 0 pass everything */

/* ---- threads ---- */

int pw_threaded_flag;
static pthread_mutex_t pw_mutex = PTHREAD_MUTEX_INITIALIZER;

int pw_lock(void)
{
    if (!pw_threaded()) return 0;
    pthread_mutex_lock(&pw_mutex);
    return 1;
}

void pw_unlock(int locked)
{
    if (locked) pthread_mutex_unlock(&pw_mutex);
}

/* The flag turns on once and never off: at MPI_Init_thread, or at the first window's creation
 * (pass_reason), before that window enters the table. MPI's level does not change after
 * initialisation, so it is on before the first record of either table exists, and no thread
 * can be inside a table unlocked when it turns on. */
static void pw_set_threaded(int provided)
{
    if (provided == MPI_THREAD_MULTIPLE) __atomic_store_n(&pw_threaded_flag, 1, __ATOMIC_RELEASE);
}

void pw_thread_check(void)
{
    int provided = MPI_THREAD_SINGLE;
    if (!pw_threaded() && MPI_Query_thread(&provided) == MPI_SUCCESS) pw_set_threaded(provided);
}

/* MPICH's MPI_Win is an int, Open MPI's a pointer: both hash as an integer. */
static inline uintptr_t key_of(MPI_Win w)
{
    uintptr_t k = 0;
    memcpy(&k, &w, sizeof(w) < sizeof(k) ? sizeof(w) : sizeof(k));
    return k;
}

static inline unsigned bucket_of(MPI_Win w)
{
    uintptr_t k = key_of(w);
    k ^= k >> 17;
    k *= UINT64_C(0x9E3779B97F4A7C15) & UINTPTR_MAX;
    return (unsigned)(k >> 7) & (PW_BUCKETS - 1);
}

static struct pw *find_unlocked(MPI_Win win)
{
    struct pw *p = last;
    if (p != NULL && p->handle == win) return p;
    for (p = buckets[bucket_of(win)]; p != NULL; p = p->next)
        if (p->handle == win) {
            last = p;
            return p;
        }
    return NULL;
}

struct pw *pw_find(MPI_Win win)
{
    int locked = pw_lock();
    struct pw *p = find_unlocked(win);
    pw_unlock(locked);
    return p;
}

static struct pw *pw_add(MPI_Win handle, NARMA_Win nw, int flavor, const char *why)
{
    struct pw *p = calloc(1, sizeof(*p));
    if (p == NULL) return NULL;
    p->handle = handle;
    p->nw = nw;
    p->flavor = flavor;
    p->why = why;
    int locked = pw_lock();
    p->id = nwin++;
    unsigned b = bucket_of(handle);
    p->next = buckets[b];
    buckets[b] = p;
    p->older = all;
    all = p;
    pw_unlock(locked);
    return p;
}

/* The window leaves the table (MPI may reuse its handle); its record stays for the report. */
static void pw_forget(struct pw *p)
{
    int locked = pw_lock();
    struct pw **pp = &buckets[bucket_of(p->handle)];
    while (*pp != p)
        pp = &(*pp)->next;
    *pp = p->next;
    if (last == p) last = NULL;
    p->freed = 1;
    pw_unlock(locked);
}

/* ---- errors ---- */

static int mpi_class_of(int rc)
{
    switch (rc) {
    case NARMA_ERR_ARG:
        return MPI_ERR_ARG;
    case NARMA_ERR_RANK:
        return MPI_ERR_RANK;
    case NARMA_ERR_TAG:
        return MPI_ERR_TAG;
    case NARMA_ERR_COUNT:
        return MPI_ERR_COUNT;
    case NARMA_ERR_TYPE:
        return MPI_ERR_TYPE;
    case NARMA_ERR_OP:
        return MPI_ERR_OP;
    case NARMA_ERR_WIN:
        return MPI_ERR_WIN;
    case NARMA_ERR_DISP:
        return MPI_ERR_DISP;
    case NARMA_ERR_RMA_SYNC:
        return MPI_ERR_RMA_SYNC;
    case NARMA_ERR_RMA_CONFLICT:
        return MPI_ERR_RMA_CONFLICT;
    case NARMA_ERR_REQUEST:
        return MPI_ERR_REQUEST;
    case NARMA_ERR_NO_MEM:
        return MPI_ERR_NO_MEM;
    case NARMA_ERR_ATTACH:
        return MPI_ERR_RMA_ATTACH;
    case NARMA_ERR_KEYVAL:
        return MPI_ERR_KEYVAL;
    case NARMA_ERR_PENDING:
        return MPI_ERR_RMA_SYNC; /* MPI_Win_free inside an epoch */
    case NARMA_ERR_UNSUPPORTED:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case NARMA_ERR_MPI: {
        int code = NARMA_Get_mpi_error();
        return code != MPI_SUCCESS ? code : MPI_ERR_OTHER;
    }
    case NARMA_ERR_INTERN:
        return MPI_ERR_INTERN;
    case NARMA_ERR_NOTIFY_IDX:
        return pw_notify_idx_class();
    default:
        return MPI_ERR_OTHER;
    }
}

int pw_error_comm(MPI_Comm comm, int narma_rc)
{
    int code = mpi_class_of(narma_rc);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int pw_error(MPI_Win win, int narma_rc)
{
    int code = mpi_class_of(narma_rc);
    if (win != MPI_WIN_NULL && pw_find(win) != NULL)
        PMPI_Win_call_errhandler(win, code);
    else
        PMPI_Comm_call_errhandler(MPI_COMM_SELF, code);
    return code;
}

/* ---- creation ---- */

static int carry_windows(void)
{
    int m = __atomic_load_n(&mode, __ATOMIC_RELAXED);
    if (m < 0) { /* threads that get here at once all store the same value */
        const char *v = getenv("NARMA_PMPI");
        m = !(v != NULL && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0));
        __atomic_store_n(&mode, m, __ATOMIC_RELAXED);
    }
    return m;
}

/* Why this window is left to MPI (NULL: narma carries it). Every creation asks first. */
static const char *pass_reason(MPI_Info info)
{
    pw_thread_check();
    if (!carry_windows()) return "NARMA_PMPI=off";
    if (info == MPI_INFO_NULL) return NULL;
    int len = 0, flag = 0;
    char v[16];
    if (PMPI_Info_get_valuelen(info, "narma_passthrough", &len, &flag) != MPI_SUCCESS || !flag ||
        len >= (int)sizeof(v))
        return NULL;
    if (PMPI_Info_get(info, "narma_passthrough", (int)sizeof(v) - 1, v, &flag) != MPI_SUCCESS)
        return NULL;
    return flag && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0) ? "info narma_passthrough"
                                                                   : NULL;
}

/* The handle window of a narma window (see pmpi.h); the narma window is freed on failure. */
static int handle_for(NARMA_Win nw, int flavor, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    int rc = PMPI_Win_create_dynamic(info, comm, win);
    if (rc != MPI_SUCCESS) {
        NARMA_Win_free(&nw);
        return rc;
    }
    struct pw *p = pw_add(*win, nw, flavor, NULL);
    if (p == NULL) {
        NARMA_Win_free(&nw);
        PMPI_Win_free(win);
        return pw_error_comm(comm, NARMA_ERR_NO_MEM);
    }
    PMPI_Win_set_name(*win, ""); /* as a new window's: Open MPI names its own "rdma window N" */
    PMPI_Comm_rank(comm, &p->rank);
    PMPI_Comm_size(comm, &p->size);
    return MPI_SUCCESS;
}

static int passed(int rc, MPI_Win *win, int flavor, const char *why)
{
    if (rc == MPI_SUCCESS && pw_add(*win, NARMA_WIN_NULL, flavor, why) == NULL) {
        PMPI_Win_free(win);
        return MPI_ERR_NO_MEM;
    }
    return rc;
}

NARMA_PMPI_API int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                                  MPI_Comm comm, MPI_Win *win)
{
    const char *why = pass_reason(info);
    if (why == NULL) {
        NARMA_Win nw;
        int rc = NARMA_Win_create(base, size, disp_unit, info, comm, &nw);
        if (rc == NARMA_SUCCESS) return handle_for(nw, MPI_WIN_FLAVOR_CREATE, info, comm, win);
        if (rc != NARMA_ERR_UNSUPPORTED) return pw_error_comm(comm, rc);
        why = "narma refused the window (unsupported)";
    }
    return passed(PMPI_Win_create(base, size, disp_unit, info, comm, win), win,
                  MPI_WIN_FLAVOR_CREATE, why);
}

NARMA_PMPI_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                    void *baseptr, MPI_Win *win)
{
    const char *why = pass_reason(info);
    if (why == NULL) {
        NARMA_Win nw;
        int rc = NARMA_Win_allocate(size, disp_unit, info, comm, baseptr, &nw);
        if (rc == NARMA_SUCCESS) return handle_for(nw, MPI_WIN_FLAVOR_ALLOCATE, info, comm, win);
        if (rc != NARMA_ERR_UNSUPPORTED) return pw_error_comm(comm, rc);
        why = "narma refused the window (unsupported)";
    }
    return passed(PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win), win,
                  MPI_WIN_FLAVOR_ALLOCATE, why);
}

NARMA_PMPI_API int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    const char *why = pass_reason(info);
    if (why == NULL) {
        NARMA_Win nw;
        int rc = NARMA_Win_create_dynamic(info, comm, &nw);
        if (rc == NARMA_SUCCESS) return handle_for(nw, MPI_WIN_FLAVOR_DYNAMIC, info, comm, win);
        if (rc != NARMA_ERR_UNSUPPORTED) return pw_error_comm(comm, rc);
        why = "narma refused the window (unsupported)";
    }
    return passed(PMPI_Win_create_dynamic(info, comm, win), win, MPI_WIN_FLAVOR_DYNAMIC, why);
}

/* narma refuses (NARMA_ERR_UNSUPPORTED, every rank alike) a communicator whose ranks do not
 * all share memory as narma sees it (pretend nodes of NARMA_NODE_SIZE): MPI's own then. */
NARMA_PMPI_API int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                                           MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    const char *why = pass_reason(info);
    if (why == NULL) {
        NARMA_Win nw;
        int rc = NARMA_Win_allocate_shared(size, disp_unit, info, comm, baseptr, &nw);
        if (rc == NARMA_SUCCESS) return handle_for(nw, MPI_WIN_FLAVOR_SHARED, info, comm, win);
        if (rc != NARMA_ERR_UNSUPPORTED) return pw_error_comm(comm, rc);
        why = "narma refused the window (ranks that do not share memory)";
    }
    return passed(PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win), win,
                  MPI_WIN_FLAVOR_SHARED, why);
}

static int shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr,
                        int *mine);

#if MPI_VERSION >= 4
/* MPI-4's large-count creation: narma's disp_unit is an int. */
NARMA_PMPI_API int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                    MPI_Comm comm, MPI_Win *win)
{
    if (disp_unit <= 0 || disp_unit > INT_MAX || pass_reason(info) != NULL)
        return passed(PMPI_Win_create_c(base, size, disp_unit, info, comm, win), win,
                      MPI_WIN_FLAVOR_CREATE,
                      pass_reason(info) ? pass_reason(info) : "disp_unit beyond an int");
    return MPI_Win_create(base, size, (int)disp_unit, info, comm, win);
}

NARMA_PMPI_API int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                      MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    if (disp_unit <= 0 || disp_unit > INT_MAX || pass_reason(info) != NULL)
        return passed(PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win), win,
                      MPI_WIN_FLAVOR_ALLOCATE,
                      pass_reason(info) ? pass_reason(info) : "disp_unit beyond an int");
    return MPI_Win_allocate(size, (int)disp_unit, info, comm, baseptr, win);
}

NARMA_PMPI_API int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                             MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    if (disp_unit <= 0 || disp_unit > INT_MAX || pass_reason(info) != NULL)
        return passed(PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win), win,
                      MPI_WIN_FLAVOR_SHARED,
                      pass_reason(info) ? pass_reason(info) : "disp_unit beyond an int");
    return MPI_Win_allocate_shared(size, (int)disp_unit, info, comm, baseptr, win);
}

NARMA_PMPI_API int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size,
                                          MPI_Aint *disp_unit, void *baseptr)
{
    int mine, rc = shared_query(win, rank, size, disp_unit, baseptr, &mine);
    return mine ? rc : PMPI_Win_shared_query_c(win, rank, size, disp_unit, baseptr);
}
#endif

NARMA_PMPI_API int MPI_Win_free(MPI_Win *win)
{
    struct pw *p = win != NULL ? pw_find(*win) : NULL;
    if (p == NULL) return PMPI_Win_free(win);
    if (p->nw != NARMA_WIN_NULL) {
        int rc = NARMA_Win_free(&p->nw);
        if (rc != NARMA_SUCCESS) return pw_error(*win, rc);
    }
    pw_forget(p);
    return PMPI_Win_free(win); /* the handle window: attribute callbacks run here */
}

NARMA_PMPI_API int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    struct pw *p;
    NARMA_Win nw = pw_narma(win, PW_ATTACH, &p);
    if (nw == NARMA_WIN_NULL) return PMPI_Win_attach(win, base, size);
    PW_RET(win, NARMA_Win_attach(nw, base, size));
}

NARMA_PMPI_API int MPI_Win_detach(MPI_Win win, const void *base)
{
    struct pw *p;
    NARMA_Win nw = pw_narma(win, PW_ATTACH, &p);
    if (nw == NARMA_WIN_NULL) return PMPI_Win_detach(win, base);
    PW_RET(win, NARMA_Win_detach(nw, base));
}

/* The predefined attributes describe the narma window; user attributes live on the handle. */
NARMA_PMPI_API int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    struct pw *p = pw_find(win);
    if (p != NULL && p->nw != NARMA_WIN_NULL &&
        (keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
         keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL ||
         keyval == MPIX_WIN_NOTIFICATION_NUM_UB || keyval == MPIX_WIN_NOTIFICATION_VALUE_UB))
        PW_RET(win, NARMA_Win_get_attr(p->nw, keyval, attribute_val, flag));
    return PMPI_Win_get_attr(win, keyval, attribute_val, flag);
}

/* NARMA_Win_shared_query, on windows of every flavor but dynamic (MPI-4.1): every rank's
 * segment of an MPI_Win_allocate_shared window; of the others, this process's own memory and
 * that of the peers narma reaches through shared memory. A peer whose memory is not shared
 * with this process gets MPI's answer for it: size 0, NULL, and no error. Dynamic windows:
 * MPI's answer on the handle window (an error). */
static int shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr,
                        int *mine)
{
    struct pw *p;
    NARMA_Win nw = pw_narma(win, PW_SHARED_QUERY, &p);
    *mine = nw != NARMA_WIN_NULL && p->flavor != MPI_WIN_FLAVOR_DYNAMIC;
    if (!*mine) return MPI_SUCCESS;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= p->size))
        return pw_error(win, NARMA_ERR_RANK);
    MPI_Aint sz = 0;
    int du = 1, rc = NARMA_Win_shared_query(nw, rank, &sz, &du, baseptr);
    if (rc != NARMA_SUCCESS && rc != NARMA_ERR_RANK) return pw_error(win, rc);
    *size = sz; /* NARMA_ERR_RANK: not shared, 0 and NULL */
    *disp_unit = du;
    return MPI_SUCCESS;
}

NARMA_PMPI_API int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                        void *baseptr)
{
    MPI_Aint du = 0;
    int mine, rc = shared_query(win, rank, size, &du, baseptr, &mine);
    if (!mine) return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
    if (rc == MPI_SUCCESS) *disp_unit = (int)du;
    return rc;
}

/* MPI's hints of the handle window, and the narma_* hints of the narma window with their values
 * in force (NARMA_Win_get_info). */
NARMA_PMPI_API int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    struct pw *p;
    NARMA_Win nw = pw_narma(win, PW_INFO, &p);
    int rc = PMPI_Win_get_info(win, info_used);
    if (rc != MPI_SUCCESS || nw == NARMA_WIN_NULL) return rc;
    MPI_Info mine;
    int nrc = NARMA_Win_get_info(nw, &mine);
    if (nrc != NARMA_SUCCESS) {
        PMPI_Info_free(info_used);
        return pw_error(win, nrc);
    }
    int nkeys = 0;
    PMPI_Info_get_nkeys(mine, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[256];
        int flag = 0;
        if (PMPI_Info_get_nthkey(mine, i, key) == MPI_SUCCESS &&
            PMPI_Info_get(mine, key, (int)sizeof(val) - 1, val, &flag) == MPI_SUCCESS && flag)
            PMPI_Info_set(*info_used, key, val);
    }
    PMPI_Info_free(&mine);
    return MPI_SUCCESS;
}

/* MPI's hints go to the handle window; narma's (the epoch reorder keys) to the narma window. */
NARMA_PMPI_API int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    struct pw *p;
    NARMA_Win nw = pw_narma(win, PW_INFO, &p);
    if (nw != NARMA_WIN_NULL) {
        int nrc = NARMA_Win_set_info(nw, info);
        if (nrc != NARMA_SUCCESS) return pw_error(win, nrc);
    }
    return PMPI_Win_set_info(win, info);
}

NARMA_PMPI_API int MPIX_Win_get_narma(MPI_Win win, NARMA_Win *nwin)
{
    struct pw *p = pw_find(win);
    if (nwin == NULL) return pw_error(win, NARMA_ERR_ARG);
    if (p == NULL) {
        *nwin = NARMA_WIN_NULL;
        return pw_error(MPI_WIN_NULL, NARMA_ERR_WIN);
    }
    *nwin = p->nw;
    return MPI_SUCCESS;
}

/* ---- the report ---- */

static const char *const call_names[PW_NCALLS] = {
#define PW_NAME(id, name) name,
    PW_CALLS(PW_NAME)
#undef PW_NAME
};

static const char *flavor_name(int f)
{
    switch (f) {
    case MPI_WIN_FLAVOR_CREATE:
        return "create";
    case MPI_WIN_FLAVOR_ALLOCATE:
        return "allocate";
    case MPI_WIN_FLAVOR_DYNAMIC:
        return "dynamic";
    case MPI_WIN_FLAVOR_SHARED:
        return "allocate_shared";
    default:
        return "?";
    }
}

/* NARMA_PMPI_REPORT=1: rank 0's windows; =all: every rank's. One line per window. */
void pw_report(void)
{
    const char *v = getenv("NARMA_PMPI_REPORT");
    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0) return;
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0 && strcmp(v, "all") != 0) return;
    unsigned carried = 0, passed_n = 0;
    struct pw *rev = NULL; /* oldest first */
    for (struct pw *p = all; p != NULL;) {
        struct pw *o = p->older;
        p->older = rev;
        rev = p;
        p = o;
    }
    all = rev;
    for (struct pw *p = all; p != NULL; p = p->older) {
        char line[1024];
        int n = 0;
        int narma = p->why == NULL;
        narma ? carried++ : passed_n++;
        n += snprintf(line + n, sizeof(line) - (size_t)n,
                      "narma-pmpi: rank %d window %u (%s%s): ", rank, p->id, flavor_name(p->flavor),
                      p->freed ? "" : ", not freed");
        if (narma)
            n += snprintf(line + n, sizeof(line) - (size_t)n,
                          "narma carried %llu epochs, %llu operations",
                          (unsigned long long)p->epochs, (unsigned long long)p->ops);
        else
            n += snprintf(line + n, sizeof(line) - (size_t)n, "passed through (%s)", p->why);
        int first = 1;
        for (int c = 0; c < PW_NCALLS && n < (int)sizeof(line) - 64; c++) {
            /* narma windows: only the calls MPI answered; passed windows: every call */
            int to_mpi = !narma || c == PW_INFO ||
                         (c == PW_SHARED_QUERY && p->flavor == MPI_WIN_FLAVOR_DYNAMIC);
            if (!to_mpi || p->calls[c] == 0) continue;
            n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s %llu",
                          first ? "; to MPI: " : ", ", call_names[c],
                          (unsigned long long)p->calls[c]);
            first = 0;
        }
        fprintf(stderr, "%s\n", line);
    }
    fprintf(stderr,
            "narma-pmpi: rank %d: %u window(s) carried by narma, %u passed through to MPI\n", rank,
            carried, passed_n);
}

/* The level is MPI's, as narma reports it: MPI_THREAD_MULTIPLE stays MULTIPLE (narma's process
 * lock is on, and this library's tables are guarded then) unless narma's lock was turned off
 * (NARMA_THREADS=off: MPI_THREAD_SERIALIZED). Asking narma initialises it (local set-up, no
 * communication) if nothing did yet; narma itself asks MPI by the PMPI_ name, never here. */
NARMA_PMPI_API int MPI_Query_thread(int *provided)
{
    int rc = PMPI_Query_thread(provided);
    if (rc != MPI_SUCCESS || *provided != MPI_THREAD_MULTIPLE) return rc;
    int level = MPI_THREAD_MULTIPLE;
    if (NARMA_Query_thread(&level) == NARMA_SUCCESS) *provided = level;
    return MPI_SUCCESS;
}

NARMA_PMPI_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Query_thread(provided); /* MPI's level again, as narma adjusts it */
    pw_set_threaded(*provided);
    return MPI_SUCCESS;
}

NARMA_PMPI_API int MPI_Finalize(void)
{
    pw_report();
    NARMA_Finalize();
    return PMPI_Finalize();
}
