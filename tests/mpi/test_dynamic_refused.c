/* narma-test: np=2 transports=mpi timeout=60 */
/*
 * The mpi transport retries an access to a dynamic window that MPI refuses with
 * MPI_ERR_RMA_RANGE although narma's table of the target's regions accepted it (Open MPI's
 * lagging view of attached regions, open-mpi/ompi#8475). Every data call is retried alike,
 * the request-based ones too, and a refused call is issued again exactly once (an accumulate
 * applied once). The refusal is simulated: this program's own PMPI_ definitions (libnarma
 * calls PMPI_ names, which the executable preempts) refuse the first call of each kind once,
 * when armed, without passing it to MPI.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>

static int armed; /* bit per kind: refuse its next call once */
enum { K_PUT = 1, K_RPUT = 2, K_ACC = 4, K_RACC = 8, K_GACC = 16, K_RGACC = 32, K_CAS = 64 };

static int refuse(int kind)
{
    if (!(armed & kind)) return 0;
    armed &= ~kind;
    return 1;
}

/* real_: MPI's definition of the function being defined. */
#define REAL(name)                  \
    static __typeof__(&name) real_; \
    if (real_ == NULL) real_ = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

int PMPI_Put(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
             MPI_Win w)
{
    REAL(PMPI_Put);
    return refuse(K_PUT) ? MPI_ERR_RMA_RANGE : real_(o, oc, ot, t, d, tc, tt, w);
}

int PMPI_Rput(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc, MPI_Datatype tt,
              MPI_Win w, MPI_Request *r)
{
    REAL(PMPI_Rput);
    return refuse(K_RPUT) ? MPI_ERR_RMA_RANGE : real_(o, oc, ot, t, d, tc, tt, w, r);
}

int PMPI_Accumulate(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc,
                    MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
    REAL(PMPI_Accumulate);
    return refuse(K_ACC) ? MPI_ERR_RMA_RANGE : real_(o, oc, ot, t, d, tc, tt, op, w);
}

int PMPI_Raccumulate(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint d, int tc,
                     MPI_Datatype tt, MPI_Op op, MPI_Win w, MPI_Request *r)
{
    REAL(PMPI_Raccumulate);
    return refuse(K_RACC) ? MPI_ERR_RMA_RANGE : real_(o, oc, ot, t, d, tc, tt, op, w, r);
}

int PMPI_Get_accumulate(const void *o, int oc, MPI_Datatype ot, void *res, int rc, MPI_Datatype rt,
                        int t, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
    REAL(PMPI_Get_accumulate);
    return refuse(K_GACC) ? MPI_ERR_RMA_RANGE : real_(o, oc, ot, res, rc, rt, t, d, tc, tt, op, w);
}

int PMPI_Rget_accumulate(const void *o, int oc, MPI_Datatype ot, void *res, int rc, MPI_Datatype rt,
                         int t, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win w,
                         MPI_Request *r)
{
    REAL(PMPI_Rget_accumulate);
    return refuse(K_RGACC) ? MPI_ERR_RMA_RANGE
                           : real_(o, oc, ot, res, rc, rt, t, d, tc, tt, op, w, r);
}

int PMPI_Compare_and_swap(const void *o, const void *c, void *res, MPI_Datatype type, int t,
                          MPI_Aint d, MPI_Win w)
{
    REAL(PMPI_Compare_and_swap);
    return refuse(K_CAS) ? MPI_ERR_RMA_RANGE : real_(o, c, res, type, t, d, w);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "dynamic_refused", 50);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    NARMA_Win win;
    CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    static int64_t mem[8];
    CHECK_RC(NARMA_Win_attach(win, mem, sizeof mem));
    MPI_Aint at;
    MPI_Get_address(mem, &at);
    MPI_Bcast(&at, 1, MPI_AINT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 1) {
        const int64_t one = 1, seven = 7;
        int64_t old = -1, cmp = 0;
        NARMA_Request r;
        CHECK_RC(NARMA_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        test_phase("put, refused once");
        armed = K_PUT | K_RPUT;
        CHECK_RC(NARMA_Put(&seven, 1, MPI_INT64_T, 0, at, 1, MPI_INT64_T, win));
        CHECK_RC(NARMA_Rput(&seven, 1, MPI_INT64_T, 0, at + 8, 1, MPI_INT64_T, win, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        test_phase("accumulate, refused once");
        armed = K_ACC;
        CHECK_RC(NARMA_Accumulate(&one, 1, MPI_INT64_T, 0, at + 16, 1, MPI_INT64_T, MPI_SUM, win));
        test_phase("raccumulate, refused once");
        armed = K_RACC;
        CHECK_RC(
            NARMA_Raccumulate(&one, 1, MPI_INT64_T, 0, at + 24, 1, MPI_INT64_T, MPI_SUM, win, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        test_phase("get_accumulate and fetch_and_op, refused once");
        armed = K_GACC | K_RGACC;
        CHECK_RC(NARMA_Get_accumulate(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, 0, at + 32, 1,
                                      MPI_INT64_T, MPI_SUM, win));
        CHECK_RC(NARMA_Win_flush(0, win));
        CHECK(old == 0, "get_accumulate fetched %lld", (long long)old);
        CHECK_RC(NARMA_Rget_accumulate(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, 0, at + 40, 1,
                                       MPI_INT64_T, MPI_SUM, win, &r));
        CHECK_RC(NARMA_Wait(&r, MPI_STATUS_IGNORE));
        test_phase("compare_and_swap, refused once");
        armed = K_CAS;
        CHECK_RC(NARMA_Compare_and_swap(&seven, &cmp, &old, MPI_INT64_T, 0, at + 48, win));
        CHECK_RC(NARMA_Win_unlock(0, win));
        CHECK(old == 0, "compare_and_swap fetched %lld", (long long)old);
        armed = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    test_phase("every access applied once");
    if (rank == 0) {
        const int64_t want[7] = {7, 7, 1, 1, 1, 1, 7};
        for (int i = 0; i < 7; i++)
            CHECK(mem[i] == want[i], "word %d is %lld, want %lld", i, (long long)mem[i],
                  (long long)want[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(NARMA_Win_detach(win, mem));
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
