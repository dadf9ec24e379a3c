/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * MPI-4's large-count forms on libnarma-mpi (README: carried when the counts fit an int,
 * refused with MPI_ERR_COUNT otherwise):
 *  - MPI_Win_allocate_c and MPI_Win_create_c windows are carried by narma (MPIX_Win_get_narma)
 *    and report the displacement unit they were given;
 *  - MPI_Put_c, MPI_Get_c, MPI_Accumulate_c, MPI_Get_accumulate_c, MPI_Rput_c, MPI_Rget_c,
 *    MPI_Raccumulate_c and MPI_Rget_accumulate_c move exactly the data of their int-sized
 *    counterparts;
 *  - a count of 2^32 + 1 (which would wrap to 1 in an int) is refused with MPI_ERR_COUNT and
 *    moves nothing;
 *  - MPI_Win_allocate_shared_c + MPI_Win_shared_query_c work: narma carries the window unless
 *    the node's ranks span pretend nodes (then MPI makes it).
 * Skipped (exit 77) with an MPI older than 4.0.
 */
#include "common.h"

#include <narma/narma_mpix.h>

#if MPI_VERSION >= 4

#define N 8

static int rank, size, right, left;

static void data_calls(MPI_Win win, int *mem, const char *what)
{
    test_phase(what);
    int out[N], in[N], one = rank + 1, fetched = -1;
    for (int i = 0; i < 2 * N + 2; i++)
        mem[i] = i < N ? -1 : (i < 2 * N ? test_val(1, rank, i) : 0);
    for (int i = 0; i < N; i++) {
        out[i] = test_val(2, rank, i);
        in[i] = -1;
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put_c(out, N, MPI_INT, right, 0, N, MPI_INT, win));
    CHECK_MPI(MPI_Get_c(in, N, MPI_INT, right, N, N, MPI_INT, win));
    CHECK_MPI(MPI_Accumulate_c(&one, 1, MPI_INT, 0, 2 * N, 1, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush_all(win));
    CHECK_MPI(MPI_Get_accumulate_c(&one, 1, MPI_INT, &fetched, 1, MPI_INT, 0, 2 * N + 1, 1, MPI_INT,
                                   MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        CHECK(mem[i] == test_val(2, left, i), "Put_c element %d = %d", i, mem[i]);
        CHECK(in[i] == test_val(1, right, N + i), "Get_c element %d = %d", i, in[i]);
    }
    CHECK(fetched >= 0 && fetched < size * (size + 1), "Get_accumulate_c fetched %d", fetched);
    if (rank == 0)
        CHECK(mem[2 * N] == size * (size + 1) / 2 && mem[2 * N + 1] == size * (size + 1) / 2,
              "Accumulate_c / Get_accumulate_c sums %d, %d, expected %d", mem[2 * N],
              mem[2 * N + 1], size * (size + 1) / 2);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    int rin[N], rres = -1;
    MPI_Request r[4];
    for (int i = 0; i < N; i++) {
        out[i] = test_val(3, rank, i);
        rin[i] = -1;
    }
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Rput_c(out, N, MPI_INT, right, 0, N, MPI_INT, win, &r[0]));
    CHECK_MPI(MPI_Rget_c(rin, N, MPI_INT, right, N, N, MPI_INT, win, &r[1]));
    CHECK_MPI(MPI_Raccumulate_c(&one, 1, MPI_INT, 0, 2 * N, 1, MPI_INT, MPI_SUM, win, &r[2]));
    CHECK_MPI(MPI_Rget_accumulate_c(&one, 1, MPI_INT, &rres, 1, MPI_INT, 0, 2 * N + 1, 1, MPI_INT,
                                    MPI_NO_OP, win, &r[3]));
    CHECK_MPI(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        CHECK(mem[i] == test_val(3, left, i), "Rput_c element %d = %d", i, mem[i]);
        CHECK(rin[i] == test_val(1, right, N + i), "Rget_c element %d = %d", i, rin[i]);
    }
    CHECK(rres == size * (size + 1) / 2, "Rget_accumulate_c NO_OP read %d", rres);
    if (rank == 0)
        CHECK(mem[2 * N] == size * (size + 1), "Raccumulate_c sum %d, expected %d", mem[2 * N],
              size * (size + 1));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void too_large(MPI_Win win, int *mem)
{
    test_phase("a count of 2^32 + 1 is refused with MPI_ERR_COUNT and moves nothing");
    const MPI_Count huge = ((MPI_Count)1 << 32) + 1;
    char b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Request r = MPI_REQUEST_NULL;
    mem[0] = -1;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_CLASS(MPI_Put_c(b, huge, MPI_BYTE, right, 0, huge, MPI_BYTE, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Get_c(b, huge, MPI_BYTE, right, 0, huge, MPI_BYTE, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Accumulate_c(b, huge, MPI_BYTE, right, 0, huge, MPI_BYTE, MPI_REPLACE, win),
                MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Rput_c(b, huge, MPI_BYTE, right, 0, huge, MPI_BYTE, win, &r), MPI_ERR_COUNT);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem[0] == -1, "a refused large-count access wrote %d", mem[0]);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void windows(void)
{
    int *mem = NULL, *du = NULL, flag = 0;
    MPI_Win win;
    test_phase("MPI_Win_allocate_c is carried by narma");
    CHECK_MPI(MPI_Win_allocate_c((2 * N + 2) * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                 MPI_COMM_WORLD, &mem, &win));
    test_errors_return(win);
    NARMA_Win nw = NARMA_WIN_NULL;
    CHECK_MPI(MPIX_Win_get_narma(win, &nw));
    CHECK(nw != NARMA_WIN_NULL, "no narma window behind MPI_Win_allocate_c");
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    CHECK(flag && du && *du == (int)sizeof(int), "MPI_WIN_DISP_UNIT %d", du ? *du : -1);
    data_calls(win, mem, "large-count data calls on an MPI_Win_allocate_c window");
    too_large(win, mem);
    CHECK_MPI(MPI_Win_free(&win));

    test_phase("MPI_Win_create_c is carried by narma");
    mem = malloc((2 * N + 2) * sizeof(int));
    CHECK_MPI(MPI_Win_create_c(mem, (2 * N + 2) * sizeof(int), sizeof(int), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &win));
    test_errors_return(win);
    nw = NARMA_WIN_NULL;
    CHECK_MPI(MPIX_Win_get_narma(win, &nw));
    CHECK(nw != NARMA_WIN_NULL, "no narma window behind MPI_Win_create_c");
    data_calls(win, mem, "large-count data calls on an MPI_Win_create_c window");
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);

    test_phase("MPI_Win_allocate_shared_c + MPI_Win_shared_query_c");
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    CHECK_MPI(MPI_Win_allocate_shared_c(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem, &win));
    test_errors_return(win);
    nw = (NARMA_Win)(uintptr_t)1;
    CHECK_MPI(MPIX_Win_get_narma(win, &nw));
    if (test_narma_carries_shared(node))
        CHECK(nw != NARMA_WIN_NULL, "no narma window behind MPI_Win_allocate_shared_c");
    else
        CHECK(nw == NARMA_WIN_NULL, "narma carries an MPI_Win_allocate_shared_c window");
    CHECK_MPI(MPI_Win_lock_all(0, win));
    *mem = test_val(4, nrank, 0);
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(node));
    CHECK_MPI(MPI_Win_sync(win));
    int nright = (nrank + 1) % nsize, *theirs = NULL;
    MPI_Aint sz = -1, qdu = -1;
    CHECK_MPI(MPI_Win_shared_query_c(win, nright, &sz, &qdu, &theirs));
    CHECK(sz == (MPI_Aint)sizeof(int) && qdu == (MPI_Aint)sizeof(int) && theirs != NULL,
          "shared_query_c: size %ld unit %ld pointer %p", (long)sz, (long)qdu, (void *)theirs);
    if (theirs) CHECK(*theirs == test_val(4, nright, 0), "neighbour's segment holds %d", *theirs);
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(node));
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Comm_free(&node);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_large_count", 45);
    rank = test_rank;
    size = test_size;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    windows();
    return test_finish();
}

#else
int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_large_count", 45);
    return test_skip("MPI older than 4.0: no large-count forms");
}
#endif
