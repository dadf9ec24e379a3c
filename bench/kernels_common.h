/*
 * Helpers shared by the application kernels (stencil.c, tree.c, overlap.c):
 * the NARMA_CHECK macro, the output header every kernel prints (MPI library,
 * narma version and transport, ranks, host and CPU), scheme-list parsing and
 * the interleaving order. Header-only so that each kernel is one source file
 * plus common.c; everything here is a client of <narma/narma.h> only.
 */
#ifndef NARMA_BENCH_KERNELS_COMMON_H
#define NARMA_BENCH_KERNELS_COMMON_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <narma/narma.h>

#include "common.h"

/** Abort every rank unless a narma call returns NARMA_SUCCESS. */
#define NARMA_CHECK(call)                                                                          \
    do {                                                                                           \
        int kern_nrc_ = (call);                                                                    \
        if (kern_nrc_ != NARMA_SUCCESS)                                                            \
            bench_die(BENCH_HERE, "%s -> %s (%d; MPI error %d)", #call, NARMA_Strerror(kern_nrc_), \
                      kern_nrc_, kern_nrc_ == NARMA_ERR_MPI ? NARMA_Get_mpi_error() : 0);          \
    } while (0)

/** Status of a scheme over a run. */
enum kern_status { KS_OFF, KS_READY, KS_FAILED };

/* ---- machine facts ------------------------------------------------------ */

/** CPU model from /proc/cpuinfo ("unknown" elsewhere). */
static inline void kern_cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *v = strchr(line, ':');
        if (!v) continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(buf, len, "%s", v);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

/** Transport of a fresh narma window on comm (collective). */
static inline void kern_transport(MPI_Comm comm, char *buf, size_t len)
{
    void *base;
    NARMA_Win win;
    NARMA_CHECK(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, comm, &base, &win));
    const char *t = NARMA_Win_get_transport(win);
    snprintf(buf, len, "%s", t ? t : "(null)");
    NARMA_CHECK(NARMA_Win_free(&win));
}

/**
 * Print the common header on rank 0 of comm (collective: queries the transport).
 * Lines follow bench/pingpong: "# MPI library     : ..." and so on.
 */
static inline void kern_print_header(const char *title, MPI_Comm comm)
{
    int rank, size, len;
    char transport[64], lib[MPI_MAX_LIBRARY_VERSION_STRING], host[MPI_MAX_PROCESSOR_NAME];
    char cpu[256];
    kern_transport(comm, transport, sizeof transport);
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    if (rank != 0) return;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    lib[strcspn(lib, "\n")] = '\0';
    MPI_CHECK(MPI_Get_processor_name(host, &len));
    kern_cpu_model(cpu, sizeof cpu);
    const char *tenv = getenv("NARMA_TRANSPORT");
    printf("# %s\n", title);
    printf("# MPI library     : %s\n", lib);
    printf("# narma version   : %s\n", NARMA_Get_version());
    printf("# narma transport : %s (NARMA_TRANSPORT=%s)\n", transport, tenv ? tenv : "unset");
    printf("# ranks           : %d\n", size);
    printf("# host            : %s, %s, %ld cores online\n", host, cpu,
           sysconf(_SC_NPROCESSORS_ONLN));
}

/* ---- options ------------------------------------------------------------ */

/**
 * Parse a comma-separated subset of names[0..n) ("all" selects every one) into
 * selected[]. Returns 0, or 1 after printing the unknown name to err.
 */
static inline int kern_parse_schemes(const char *list, const char *const *names, int n,
                                     int *selected, const char *prog, FILE *err)
{
    char *copy = strdup(list);
    int bad = 0;
    if (!copy) return 1;
    for (int s = 0; s < n; s++)
        selected[s] = 0;
    for (char *tok = strtok(copy, ","); tok && !bad; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int s = 0; s < n; s++)
            if (!strcmp(tok, names[s]) || !strcmp(tok, "all")) selected[s] = found = 1;
        if (!found) bad = fprintf(err, "%s: unknown scheme '%s'\n", prog, tok) > 0;
    }
    free(copy);
    return bad;
}

/** Print " name1 name2 ..." (for usage texts). */
static inline void kern_list_schemes(FILE *f, const char *const *names, int n)
{
    for (int s = 0; s < n; s++)
        fprintf(f, " %s", names[s]);
    fprintf(f, "\n");
}

/**
 * The k-th scheme to run in repetition rep, among the selected ones: the order
 * rotates per repetition so no scheme always runs first (or right after the
 * same neighbour) on a machine whose speed drifts.
 */
static inline int kern_rotated(const int *selected, int n, int rep, int k)
{
    int order[64], m = 0;
    for (int s = 0; s < n && m < 64; s++)
        if (selected[s]) order[m++] = s;
    return m ? order[(k + rep) % m] : -1;
}

/** Number of selected schemes. */
static inline int kern_count(const int *selected, int n)
{
    int m = 0;
    for (int s = 0; s < n; s++)
        m += selected[s] != 0;
    return m;
}

/* ---- watchdog ----------------------------------------------------------- */
/*
 * A kernel that hangs (a lost notification, a mismatched epoch) should fail
 * loudly rather than sit until the launcher's timeout: kern_arm() starts an
 * alarm naming what is running; the handler prints it and exits with 3.
 */
static char kern_watchdog_msg[256];

static inline void kern_watchdog(int sig)
{
    (void)sig;
    static const char head[] = "\nTIMEOUT: no progress in ";
    ssize_t r = write(2, head, sizeof head - 1);
    r = write(2, kern_watchdog_msg, strlen(kern_watchdog_msg));
    (void)r;
    _exit(3);
}

/** (Re)arm the watchdog for `seconds` (0 disarms); what/scheme/size name the work. */
static inline void kern_arm(int seconds, const char *prog, const char *scheme, size_t size)
{
    snprintf(kern_watchdog_msg, sizeof kern_watchdog_msg, "%s, scheme %s, size %zu\n", prog, scheme,
             size);
    signal(SIGALRM, kern_watchdog);
    alarm((unsigned)seconds);
}

/** Agree across comm on a failure flag (max). */
static inline int kern_any(int flag, MPI_Comm comm)
{
    int any;
    MPI_CHECK(MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_MAX, comm));
    return any;
}

#endif /* NARMA_BENCH_KERNELS_COMMON_H */
