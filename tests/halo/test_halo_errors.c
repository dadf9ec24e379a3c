/*
 * Bad input gets a clear error class, the same on every rank, and leaves
 * no plan behind:
 *   - a communicator that is not Cartesian, or Cartesian but not 2-D;
 *   - invalid shapes, depth 0 (negative), halo deeper than the interior;
 *   - a field array too small (field_elems);
 *   - shapes that differ between neighbours (ny along a row, nz anywhere);
 *   - unknown strategies (value, $NARMA_HALO_STRATEGY) and strategies that
 *     differ between ranks;
 *   - a derived element type; NULL arguments;
 *   - start twice, finish without start, free while open;
 * and every class has a message.
 */
#include <narma/narma_halo.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nprocs;
static const char *phase = "";

#define EXPECT(call, want)                                                                   \
    do {                                                                                     \
        int rc_ = (call);                                                                    \
        if (rc_ != (want)) {                                                                 \
            fprintf(stderr, "FAIL rank %d [%s] line %d: %s -> %d (%s), expected %s\n", rank, \
                    phase, __LINE__, #call, rc_, NARMA_Halo_error_string(rc_), #want);       \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                    \
        }                                                                                    \
    } while (0)

static NARMA_Halo_desc base_desc(void)
{
    NARMA_Halo_desc d = NARMA_HALO_DESC_INIT;
    d.nz = 4, d.ny = 6, d.nx = 5;
    d.strategy = NARMA_HALO_P2P;
    return d;
}

/* Creation must fail with want and leave the handle NULL. */
static void expect_fail(MPI_Comm comm, const NARMA_Halo_desc *d, int want, const char *what)
{
    phase = what;
    NARMA_Halo_plan p = (NARMA_Halo_plan)&p; /* garbage in */
    EXPECT(NARMA_Halo_plan_create(comm, d, &p), want);
    if (p != NARMA_HALO_PLAN_NULL) {
        fprintf(stderr, "FAIL rank %d [%s]: plan handle not NULL after failure\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    alarm(120);
    int dims[2] = {1, nprocs}, periods[2] = {1, 1};
    MPI_Comm cart, cart3;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    NARMA_Halo_desc d;

    d = base_desc();
    expect_fail(MPI_COMM_WORLD, &d, NARMA_HALO_ERR_TOPOLOGY, "not Cartesian");
    int dims3[3] = {nprocs, 1, 1}, per3[3] = {0, 0, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims3, per3, 0, &cart3);
    expect_fail(cart3, &d, NARMA_HALO_ERR_TOPOLOGY, "3-D Cartesian");

    d = base_desc(), d.nx = 0;
    expect_fail(cart, &d, NARMA_HALO_ERR_SHAPE, "nx = 0");
    d = base_desc(), d.halo_x = -1;
    expect_fail(cart, &d, NARMA_HALO_ERR_DEPTH, "negative depth");
    d = base_desc(), d.halo_x = 6; /* nx = 5 */
    expect_fail(cart, &d, NARMA_HALO_ERR_DEPTH, "halo deeper than the interior (x)");
    d = base_desc(), d.halo_y = 7; /* ny = 6 */
    expect_fail(cart, &d, NARMA_HALO_ERR_DEPTH, "halo deeper than the interior (y)");
    d = base_desc(), d.halo_y = rank == nprocs - 1 ? 7 : 2;
    expect_fail(cart, &d, NARMA_HALO_ERR_DEPTH, "one rank's halo too deep: all ranks fail");
    d = base_desc(), d.field_elems = NARMA_Halo_field_elems(&d) - 1;
    expect_fail(cart, &d, NARMA_HALO_ERR_SIZE, "field array one element too small");
    d = base_desc(), d.field_elems = NARMA_Halo_field_elems(&d);
    if (d.field_elems != (size_t)4 * (6 + 4) * (5 + 4)) {
        fprintf(stderr, "FAIL NARMA_Halo_field_elems = %zu\n", d.field_elems);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (nprocs > 1) {
        d = base_desc(), d.ny = rank == 0 ? 7 : 6;
        expect_fail(cart, &d, NARMA_HALO_ERR_SHAPE, "ny differs between east-west neighbours");
        d = base_desc(), d.nz = rank == 0 ? 5 : 4;
        expect_fail(cart, &d, NARMA_HALO_ERR_SHAPE, "nz differs between neighbours");
        d = base_desc(), d.nfields = rank == 0 ? 2 : 1;
        expect_fail(cart, &d, NARMA_HALO_ERR_SHAPE, "nfields differs between neighbours");
        d = base_desc(), d.strategy = rank == 0 ? NARMA_HALO_NOTIFY : NARMA_HALO_P2P;
        expect_fail(cart, &d, NARMA_HALO_ERR_STRATEGY, "strategies differ between ranks");
    }
    /* nx may differ along a row: EW neighbours only share ny and nz. */
    d = base_desc(), d.nx = 5 + rank;
    {
        phase = "nx differs along a row (allowed)";
        NARMA_Halo_plan p;
        EXPECT(NARMA_Halo_plan_create(cart, &d, &p), NARMA_SUCCESS);
        EXPECT(NARMA_Halo_plan_free(&p), NARMA_SUCCESS);
    }
    d = base_desc(), d.strategy = (NARMA_Halo_strategy)99;
    expect_fail(cart, &d, NARMA_HALO_ERR_STRATEGY, "strategy value out of range");
    d = base_desc(), d.strategy = NARMA_HALO_DEFAULT;
    setenv("NARMA_HALO_STRATEGY", "carrier_pigeon", 1);
    expect_fail(cart, &d, NARMA_HALO_ERR_STRATEGY, "unknown $NARMA_HALO_STRATEGY");
    setenv("NARMA_HALO_STRATEGY", "notify", 1);
    {
        phase = "$NARMA_HALO_STRATEGY selects the strategy";
        NARMA_Halo_plan p;
        EXPECT(NARMA_Halo_plan_create(cart, &d, &p), NARMA_SUCCESS);
        EXPECT((int)NARMA_Halo_plan_strategy(p), (int)NARMA_HALO_NOTIFY);
        EXPECT(NARMA_Halo_plan_free(&p), NARMA_SUCCESS);
    }
    unsetenv("NARMA_HALO_STRATEGY");
    NARMA_Halo_strategy s;
    phase = "strategy names";
    EXPECT(NARMA_Halo_strategy_from_name("pscw_nb", &s), NARMA_SUCCESS);
    EXPECT((int)s, (int)NARMA_HALO_PSCW_NB);
    EXPECT(NARMA_Halo_strategy_from_name("PSCW", &s), NARMA_HALO_ERR_STRATEGY);
    EXPECT(strcmp(NARMA_Halo_strategy_name((NARMA_Halo_strategy)42), "unknown"), 0);

    MPI_Datatype vec;
    MPI_Type_contiguous(2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    d = base_desc(), d.datatype = vec;
    expect_fail(cart, &d, NARMA_ERR_TYPE, "derived element type");
    MPI_Type_free(&vec);
    d = base_desc(), d.directions = 7;
    expect_fail(cart, &d, NARMA_ERR_ARG, "bad directions");

    phase = "NULL arguments";
    NARMA_Halo_plan p = NARMA_HALO_PLAN_NULL;
    d = base_desc();
    EXPECT(NARMA_Halo_plan_create(cart, NULL, &p), NARMA_ERR_ARG);
    EXPECT(NARMA_Halo_plan_create(cart, &d, NULL), NARMA_ERR_ARG);
    EXPECT(NARMA_Halo_exchange(NARMA_HALO_PLAN_NULL, NULL), NARMA_ERR_ARG);
    EXPECT(NARMA_Halo_finish(NARMA_HALO_PLAN_NULL), NARMA_ERR_ARG);
    EXPECT(NARMA_Halo_plan_free(NULL), NARMA_ERR_ARG);

    for (int st = NARMA_HALO_P2P; st < NARMA_HALO_NSTRATEGIES; st++) {
        phase = "exchange state machine";
        d = base_desc(), d.strategy = (NARMA_Halo_strategy)st;
        EXPECT(NARMA_Halo_plan_create(cart, &d, &p), NARMA_SUCCESS);
        double *f = calloc(NARMA_Halo_field_elems(&d), sizeof(double));
        void *fields[1] = {f};
        EXPECT(NARMA_Halo_exchange(p, NULL), NARMA_ERR_ARG);
        EXPECT(NARMA_Halo_finish(p), NARMA_HALO_ERR_STATE);
        EXPECT(NARMA_Halo_start(p, fields), NARMA_SUCCESS);
        EXPECT(NARMA_Halo_start(p, fields), NARMA_HALO_ERR_STATE);
        EXPECT(NARMA_Halo_exchange(p, fields), NARMA_HALO_ERR_STATE);
        EXPECT(NARMA_Halo_plan_free(&p), NARMA_HALO_ERR_STATE);
        EXPECT(NARMA_Halo_finish(p), NARMA_SUCCESS);
        EXPECT(NARMA_Halo_finish(p), NARMA_HALO_ERR_STATE);
        EXPECT(NARMA_Halo_exchange(p, fields), NARMA_SUCCESS);
        EXPECT(NARMA_Halo_plan_free(&p), NARMA_SUCCESS);
        free(f);
    }

    phase = "error strings";
    for (int e = 0; e < NARMA_HALO_ERR_LASTCODE + 2; e++)
        if (NARMA_Halo_error_string(e) == NULL) EXPECT(e, -1);
    if (strstr(NARMA_Halo_error_string(NARMA_HALO_ERR_DEPTH), "deeper") == NULL) EXPECT(1, 0);

    MPI_Comm_free(&cart3);
    MPI_Comm_free(&cart);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_halo_errors: every bad input rejected with its class on %d ranks\n", nprocs);
    MPI_Finalize();
    return 0;
}
