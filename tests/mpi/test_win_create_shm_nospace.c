/* narma-test: np=2 transports=shm timeout=90 env=UCX_MEM_EVENTS=no */
/*
 * A Win_create window over anonymous memory larger than the room left in /dev/shm, where shm
 * puts the pages it shares: creation either succeeds with memory the program can then write
 * in full, or shm refuses it and the window falls back to mpi. Writing every byte of the
 * window must never kill the process (SIGBUS from a shared object the kernel cannot grow).
 *
 * Runs where /dev/shm has less than 256 MiB free (a container's default 64 MiB, or
 * `unshare -m` with a small tmpfs mounted on /dev/shm); skipped elsewhere.
 */
#include "common.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/statvfs.h>

static void on_sigbus(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL win_create_shm_nospace: SIGBUS writing the window\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "win_create_shm_nospace", 80);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct statvfs sv;
    unsigned long long avail = 0;
    if (statvfs("/dev/shm", &sv) == 0) avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
    MPI_Allreduce(MPI_IN_PLACE, &avail, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (avail == 0 || avail > (256ull << 20)) {
        if (rank == 0)
            printf("SKIP: /dev/shm has %llu bytes free (the test needs less than 256 MiB)\n",
                   avail);
        MPI_Finalize();
        return 77;
    }
    /* Each rank's window alone is larger than what is free. */
    const size_t len = (size_t)avail + (16u << 20);
    char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED, "mmap of %zu bytes", len);
    mem[0] = (char)rank; /* one page touched */
    signal(SIGBUS, on_sigbus);

    test_phase("create");
    NARMA_Win win;
    CHECK_RC(NARMA_Win_create(mem, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    snprintf(test_detail, sizeof test_detail, "%zu-byte window on %s, %llu bytes free", len,
             NARMA_Win_get_transport(win), avail);

    test_phase("write every byte of the window");
    CHECK_RC(NARMA_Win_fence(0, win));
    memset(mem, 1 + rank, len);
    CHECK_RC(NARMA_Win_fence(0, win));
    char got = 0;
    CHECK_RC(NARMA_Get(&got, 1, MPI_CHAR, (rank + 1) % size, (MPI_Aint)len - 1, 1, MPI_CHAR, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK(got == (char)(1 + (rank + 1) % size), "last byte of the right neighbour: %d", got);

    test_phase("free");
    CHECK_RC(NARMA_Win_free(&win));
    CHECK(mem[len - 1] == (char)(1 + rank), "last byte after Win_free: %d", mem[len - 1]);
    munmap(mem, len);
    return test_finish();
}
