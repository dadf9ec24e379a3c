/*
 * narma_info: what this narma build is, which MPI it runs on, and every knob
 * that changes its behaviour at run time.
 *
 *     narma_info            (runs as a single process; mpiexec is not needed)
 *
 * A client of the public API only: everything it cannot ask the library is
 * given to it by tools/CMakeLists.txt (build options) or listed in the tables
 * below, which must follow the places where the library reads its settings.
 */
#include <narma/narma.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Build options, defined by tools/CMakeLists.txt from the configured library. */
#ifndef NARMA_INFO_BUILD_TYPE
#define NARMA_INFO_BUILD_TYPE "unknown"
#endif
#ifndef NARMA_INFO_ARG_CHECKS
#define NARMA_INFO_ARG_CHECKS -1
#endif
#ifndef NARMA_INFO_SANITIZE
#define NARMA_INFO_SANITIZE -1
#endif
#ifndef NARMA_INFO_C_COMPILER
#define NARMA_INFO_C_COMPILER "unknown"
#endif

/* Ring geometry: one notification record per 64-byte slot (one cache line); the data of a
 * notified access never travels in it. Taken from the public headers once they define it; until
 * then this mirrors the library (src/transport/shm/ring.h). */
#ifdef NARMA_RING_SLOT_BYTES
#define NARMA_INFO_SLOT_BYTES NARMA_RING_SLOT_BYTES
#else
#define NARMA_INFO_SLOT_BYTES 64
#endif

/* Transports compiled into every build, as src/transport/transport.c chooses between them. */
static const struct {
    const char *name;
    const char *use;
} transports[] = {
    {"shm", "pairs of ranks on one node (Win_allocate, Win_create memory it can share)"},
    {"mpi", "pairs on different nodes, dynamic windows, memory shm cannot share: MPI-3 RMA"},
    {"shm+mpi", "a window across nodes: shm inside each node, mpi between nodes"},
#if NARMA_INFO_OFI
    {"ofi", "NARMA_TRANSPORT=ofi: mpi with notified puts as one libfabric message (experimental)"},
    {"shm+ofi", "NARMA_TRANSPORT=ofi, a window across nodes: shm inside each node, ofi between"},
#endif
};

/* Every environment variable the library reads (src/core/init.c, src/core/errors.c, the test
 * hooks in src/core/epoch.c and src/transport/shm/shm.c, src/transport/mpi/mpi.c). */
static const struct {
    const char *name;
    const char *dflt;
    const char *meaning;
} env_vars[] = {
    {"NARMA_TRANSPORT", "auto",
     "auto or shm: shm wherever it applies; mpi: mpi for every window; ofi: ofi for mpi between "
     "nodes (builds with -DNARMA_OFI=ON)"},
    {"NARMA_OFI_PROVIDER", NULL,
     "the libfabric provider the ofi transport opens (default: the first that fits)"},
    {"NARMA_NODE_SIZE", "0",
     "pretend nodes of this many consecutive MPI_COMM_WORLD ranks (0: the machine's nodes)"},
    {"NARMA_RING_SLOTS", NULL,
     "notification ring capacity per target (rounded up to a power of two)"},
    {"NARMA_SPIN_COUNT", "2000", "polls before a waiting call starts yielding the core"},
    {"NARMA_VERBOSE", "0", "1: print a line on stderr for every error a call returns"},
    {"NARMA_FENCE_FLAT_MAX", "16",
     "windows up to this size fence in one step, larger ones by dissemination"},
    {"NARMA_TEST_FAIL_ALLOC", "unset",
     "test hook: RANK[:STAGE] fails window creation on that rank as if out of memory"},
    {"NARMA_TEST_FAIL_REPLAY", "unset",
     "test hook: N fails the Nth operation replayed from a deferred epoch (per window)"},
    {"NARMA_TEST_FAIL_LOCK", "unset",
     "test hook: N fails the Nth and every later passive-target lock attempt (per window)"},
    {"NARMA_TEST_PPUT_STRICT", "0",
     "test hook: 1 fails Put_notify_init toward shm when the put was not prepared"},
    {"NARMA_DYNAMIC_REGIONS", "64",
     "first capacity of a rank's table of attached regions (mpi transport; it doubles when full)"},
    {"NARMA_SHM_CREATE", "1",
     "0: Win_create memory is never moved onto shared memory (those windows use mpi)"},
    {"NARMA_LOCK_PREFERENCE_MS", "100",
     "longest a shared locker holding another lock waits behind a waiting exclusive locker"},
    {"NARMA_TEST_NOTIFY_FAIL", "0",
     "testing: the n-th notified access fails after claiming its ring slot (mpi transport)"},
    {"NARMA_TEST_SEPARATE", "0",
     "testing: 1 = the mpi transport treats its windows as separate-model"},
};

static const char *on_off(int v) { return v < 0 ? "unknown" : v ? "on" : "off"; }

/* Prints a multi-line text (MPICH's library version has one line per item) under one label. */
static void print_lines(const char *label, char *text)
{
    char *save = NULL;
    int first = 1;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        line += strspn(line, " \t");
        printf("  %-18s %s\n", first ? label : "", line);
        first = 0;
    }
}

static void print_env(void)
{
    char ring_default[32];
    snprintf(ring_default, sizeof(ring_default), "%d", NARMA_DEFAULT_RING_SLOTS);

    printf("\nEnvironment variables (value now, default, meaning)\n");
    for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++) {
        const char *now = getenv(env_vars[i].name);
        const char *dflt = env_vars[i].dflt != NULL ? env_vars[i].dflt : ring_default;
        printf("  %-18s %-10s default %-6s %s\n", env_vars[i].name, now != NULL ? now : "(unset)",
               dflt, env_vars[i].meaning);
    }
    /* Read by NARMA_Win_allocate/create/create_dynamic (src/core/window.c). */
    printf("\nWindow info keys (\"true\"/\"false\", default false; alias for MPIs with short info "
           "keys)\n");
    static const char *const keys[][3] = {
        {"narma_access_after_access_reorder", "narma_reorder_aaar",
         "an access epoch may activate while the previous access epoch is active"},
        {"narma_access_after_exposure_reorder", "narma_reorder_aaer",
         "an access epoch may activate while the previous exposure epoch is active"},
        {"narma_exposure_after_exposure_reorder", "narma_reorder_eaer",
         "an exposure epoch may activate while the previous exposure epoch is active"},
        {"narma_exposure_after_access_reorder", "narma_reorder_eaar",
         "an exposure epoch may activate while the previous access epoch is active"},
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        printf("  %-38s %-19s %s\n", keys[i][0], keys[i][1], keys[i][2]);
    printf("  (ignored for fence and lock_all epochs)\n");
}

int main(int argc, char **argv)
{
    int we_init = 0, flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
            fprintf(stderr, "narma_info: MPI_Init failed\n");
            return 1;
        }
        we_init = 1;
    }

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, major = 0, minor = 0;
    MPI_Get_library_version(lib, &len);
    while (len > 0 && (lib[len - 1] == '\n' || lib[len - 1] == ' '))
        lib[--len] = '\0';
    MPI_Get_version(&major, &minor);

    printf("narma %s (built as %s, NARMA_NUMVERSION 0x%06x)\n", NARMA_Get_version(), NARMA_VERSION,
           (unsigned)NARMA_NUMVERSION);

    printf("\nBuild\n");
    printf("  build type         %s\n", NARMA_INFO_BUILD_TYPE);
    printf("  C compiler         %s\n", NARMA_INFO_C_COMPILER);
    printf("  argument checks    %s\n", on_off(NARMA_INFO_ARG_CHECKS));
    printf("  sanitizers         %s\n", on_off(NARMA_INFO_SANITIZE));

    printf("\nMPI\n");
    print_lines("library", lib);
    printf("  standard           %d.%d (run time), %d.%d (mpi.h at build time)\n", major, minor,
           MPI_VERSION, MPI_SUBVERSION);

    printf("\nTransports (chosen per window at creation)\n");
    for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
        printf("  %-18s %s\n", transports[i].name, transports[i].use);

    printf("\nNotification rings\n");
    printf("  slots per target   %d (default; NARMA_RING_SLOTS overrides)\n",
           NARMA_DEFAULT_RING_SLOTS);
    printf("  slot size          %d bytes\n", NARMA_INFO_SLOT_BYTES);
    printf("  tags               0 .. %d (NARMA_TAG_UB)\n", NARMA_TAG_UB);

    print_env();

    if (we_init) MPI_Finalize();
    return 0;
}
