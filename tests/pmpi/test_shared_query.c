/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 passthrough=1 */
/*
 * MPI_Win_shared_query on windows from MPI_Win_allocate and MPI_Win_create (MPI-4.1 allows it
 * on those flavors; libnarma-mpi answers for the windows narma carries):
 *  - for each rank t the answer is either "not shared" (size 0, baseptr NULL) or t's segment:
 *    t's size and displacement unit, and a pointer at which t's values are found;
 *  - asking for MPI_PROC_NULL answers for "the lowest rank that specified size > 0" (here rank 0
 *    of the allocated window, rank 1 of the created one, where rank 0 exposes nothing): either
 *    "not shared" or that rank's segment, never another rank's (this process's own, say);
 *  - this process's own segment is found where its memory is.
 * Skipped (exit 77) with an MPI older than 4.0.
 */
#include "common.h"

#if MPI_VERSION >= 4

#define N 4

static int rank, size;

struct answer {
    MPI_Aint size;
    int disp_unit;
    int *base;
};

static struct answer query(MPI_Win win, int t)
{
    struct answer a = {-1, -1, (int *)(uintptr_t)1};
    CHECK_MPI(MPI_Win_shared_query(win, t, &a.size, &a.disp_unit, &a.base));
    return a;
}

/* Rank t exposes bytes_of(t) bytes of ints, element i holding test_val(7, t, i). */
static void check_window(MPI_Win win, MPI_Aint (*bytes_of)(int), int *mine, const char *what)
{
    test_phase(what);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_sync(win));
    int lowest = -1;
    for (int t = 0; t < size && lowest < 0; t++)
        if (bytes_of(t) > 0) lowest = t;
    struct answer of_lowest = {0, 0, NULL};
    for (int t = 0; t < size; t++) {
        snprintf(test_detail, sizeof test_detail, "rank %d asked for rank %d", rank, t);
        struct answer a = query(win, t);
        if (t == lowest) of_lowest = a;
        if (a.size == 0 && a.base == NULL) continue; /* not shared with this process */
        CHECK(a.size == bytes_of(t) && a.disp_unit == (int)sizeof(int) && a.base != NULL,
              "size %ld unit %d base %p, expected size %ld unit %d (or size 0, NULL)", (long)a.size,
              a.disp_unit, (void *)a.base, (long)bytes_of(t), (int)sizeof(int));
        if (a.size != bytes_of(t) || a.base == NULL) continue;
        for (int i = 0; i < (int)(a.size / sizeof(int)); i++)
            CHECK(a.base[i] == test_val(7, t, i), "element %d at %p is %d, rank %d holds %d", i,
                  (void *)&a.base[i], a.base[i], t, test_val(7, t, i));
        if (t == rank)
            CHECK(a.base == mine, "own segment at %p, memory at %p", (void *)a.base, (void *)mine);
    }
    snprintf(test_detail, sizeof test_detail, "rank %d asked for MPI_PROC_NULL (lowest %d)", rank,
             lowest);
    struct answer p = query(win, MPI_PROC_NULL);
    if (!(p.size == 0 && p.base == NULL)) {
        /* then it is the lowest rank's segment, holding that rank's values */
        CHECK(p.size == bytes_of(lowest) && p.disp_unit == (int)sizeof(int) && p.base != NULL,
              "size %ld unit %d base %p, expected rank %d's size %ld (or size 0, NULL)",
              (long)p.size, p.disp_unit, (void *)p.base, lowest, (long)bytes_of(lowest));
        if (p.size == bytes_of(lowest) && p.base != NULL)
            for (int i = 0; i < (int)(p.size / sizeof(int)); i++)
                CHECK(p.base[i] == test_val(7, lowest, i),
                      "element %d is %d: not rank %d's segment (it holds %d)%s", i, p.base[i],
                      lowest, test_val(7, lowest, i),
                      p.base == mine ? "; this process's own segment was returned" : "");
        if (of_lowest.base != NULL)
            CHECK(p.base == of_lowest.base, "base %p, rank %d's segment is at %p", (void *)p.base,
                  lowest, (void *)of_lowest.base);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static MPI_Aint growing(int t) { return (MPI_Aint)(t + 1) * N * (MPI_Aint)sizeof(int); }
static MPI_Aint none_on_zero(int t) { return t == 0 ? 0 : N * (MPI_Aint)sizeof(int); }

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_shared_query", 45);
    rank = test_rank;
    size = test_size;

    int *mem;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate(growing(rank), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    test_errors_return(win);
    for (int i = 0; i < (int)(growing(rank) / sizeof(int)); i++)
        mem[i] = test_val(7, rank, i);
    check_window(win, growing, mem, "MPI_Win_allocate window (every rank has memory)");
    CHECK_MPI(MPI_Win_free(&win));

    int *cm = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        cm[i] = test_val(7, rank, i);
    CHECK_MPI(MPI_Win_create(rank == 0 ? NULL : cm, none_on_zero(rank), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    test_errors_return(win);
    check_window(win, none_on_zero, rank == 0 ? NULL : cm,
                 "MPI_Win_create window (rank 0 exposes nothing)");
    CHECK_MPI(MPI_Win_free(&win));
    free(cm);
    return test_finish();
}

#else
int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_shared_query", 45);
    return test_skip("MPI older than 4.0: MPI_Win_shared_query is for shared windows only");
}
#endif
