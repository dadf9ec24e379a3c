/*
 * The notified ping-pong of the Notified Access paper (Listing 1), as in the
 * README: rank 0 puts a message into rank 1's window with a notification,
 * rank 1 waits for it and answers the same way. Every message is checked.
 *
 *     mpiexec -n 2 ./notify_pingpong
 */
#include <narma/narma.h>
#include <stdio.h>

#define MAX 1024

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "notify_pingpong needs 2 ranks\n");
        MPI_Finalize();
        return 77;
    }
    int peer = 1 - rank, tag = 99, rc = 0;
    double *buf;
    NARMA_Win win;
    NARMA_Request req = NARMA_REQUEST_NULL;
    NARMA_Win_allocate(2 * MAX * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &buf, &win);
    if (rank < 2) {
        NARMA_Notify_init(win, peer, tag, 1, &req); /* persistent: reused every round */
        for (int i = 0; i < 1000 && rc == 0; i++) {
            if (rank == 0) {
                buf[MAX] = i; /* the ping: lands in buf[MAX..] of rank 1 */
                NARMA_Put_notify(buf + MAX, 8, MPI_DOUBLE, peer, MAX, 8, MPI_DOUBLE, win, tag);
                NARMA_Start(&req);
                NARMA_Wait(&req, MPI_STATUS_IGNORE); /* the pong is in buf[0..7] */
                rc = buf[0] != i + 0.5;
            } else {
                MPI_Status st;
                NARMA_Start(&req);
                NARMA_Wait(&req, &st); /* the ping is in buf[MAX..] */
                rc = buf[MAX] != i || st.MPI_SOURCE != peer || st.MPI_TAG != tag;
                buf[0] = i + 0.5;
                NARMA_Put_notify(buf, 8, MPI_DOUBLE, peer, 0, 8, MPI_DOUBLE, win, tag);
            }
        }
        NARMA_Request_free(&req);
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    NARMA_Win_free(&win);
    if (rank == 0)
        printf(rc ? "notify_pingpong: WRONG DATA\n"
                  : "notify_pingpong: 1000 round trips, data checked\n");
    MPI_Finalize();
    return rc;
}
