/*
 * Every strategy gives results bit-identical to p2p, and p2p gives the right
 * values.
 *
 * For each process grid the rank count allows (1x1, 1x2, 2x1, 2x2, ...),
 * each periodicity (none, x, y, both), halo depth 1..3 (and one asymmetric
 * 1x3), corners off and on, both directions in one plan or an EW plan then
 * an NS plan (the Unified Model's two-phase order), element type double or
 * float, layout ZYX or XYZ and one to three fields:
 *   - fields hold a function of (field, z, global y, global x, iteration) in
 *     the interior and a per-rank sentinel in the halo;
 *   - three exchanges run, the interior changing between them, the second
 *     through start/finish, the third on new arrays (no strategy may keep
 *     addresses of the previous ones);
 *   - after each, p2p's halos must match the function wherever a neighbour
 *     owns the source point (and keep the sentinel where none does), and
 *     every other strategy's arrays must equal p2p's byte for byte.
 * With --pairwise, grids of more than two ranks run a pairwise sample of
 * (periodicity, depth, corners, phases) instead of the full product (see
 * in_sample); 1x2 and 2x1 always run all of it.
 * Exit 0 on success; any mismatch aborts with its location.
 */
#include <narma/narma_halo.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nprocs;
static char where[512];

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, "FAIL rank %d [%s] line %d: ", rank, where, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        MPI_Abort(MPI_COMM_WORLD, 1);                                          \
    } while (0)
#define CHECK_RC(call)                                                                   \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != NARMA_SUCCESS) FAIL("%s -> %s", #call, NARMA_Halo_error_string(rc_)); \
    } while (0)

typedef struct {
    int py, px, pery, perx, hx, hy, corners, twophase, dbl, layout, nfields;
} config;

enum { NZ = 3, NY = 5, NX = 4, ITERS = 3 };

/* Exact in float and double: integers below 2^23. */
static double value(int f, int z, long gy, long gx, int it)
{
    unsigned long h =
        (((unsigned long)f * 131u + (unsigned long)z) * 1031u + (unsigned long)gy) * 1033u +
        (unsigned long)gx + (unsigned long)it * 7919u;
    return (double)(h % 8388593u);
}

typedef struct {
    config c;
    int cy, cx; /* my coords */
    size_t elems, es;
    int nxt, nyt;
} geom;

static size_t idx(const geom *g, int z, int j, int i) /* j, i: array indices incl. halo */
{
    if (g->c.layout == NARMA_HALO_LAYOUT_ZYX) return ((size_t)z * g->nyt + j) * g->nxt + i;
    return ((size_t)i * g->nyt + j) * NZ + z;
}

static void put_val(const geom *g, void *a, size_t k, double v)
{
    if (g->c.dbl)
        ((double *)a)[k] = v;
    else
        ((float *)a)[k] = (float)v;
}

static double get_val(const geom *g, const void *a, size_t k)
{
    return g->c.dbl ? ((const double *)a)[k] : (double)((const float *)a)[k];
}

static void fill(const geom *g, void **fields, int it, int halos_too)
{
    for (int f = 0; f < g->c.nfields; f++)
        for (int z = 0; z < NZ; z++)
            for (int j = 0; j < g->nyt; j++)
                for (int i = 0; i < g->nxt; i++) {
                    int inner =
                        j >= g->c.hy && j < g->c.hy + NY && i >= g->c.hx && i < g->c.hx + NX;
                    if (inner)
                        put_val(g, fields[f], idx(g, z, j, i),
                                value(f, z, (long)g->cy * NY + j - g->c.hy,
                                      (long)g->cx * NX + i - g->c.hx, it));
                    else if (halos_too)
                        put_val(g, fields[f], idx(g, z, j, i), -1.0 - rank);
                }
}

/* Expected contents of halo point (j, i) after an exchange of iteration it.
 * A point is filled from the process owning its (wrapped) global position,
 * if any; corners only with corners on. Two-phase corners (EW plan, then NS
 * plan, both spanning the other halo) differ at non-periodic edges: where
 * only the x neighbour exists the corner receives that neighbour's y halo
 * (its sentinel), where only the y neighbour exists, that neighbour's
 * x halo (its sentinel). */
static double expected(const geom *g, int f, int z, int j, int i, int it)
{
    int oy = j < g->c.hy ? -1 : j >= g->c.hy + NY ? 1 : 0;
    int ox = i < g->c.hx ? -1 : i >= g->c.hx + NX ? 1 : 0;
    const double mine = -1.0 - rank;
    if (ox && oy && !g->c.corners) return mine;
    long y = (long)g->cy * NY + j - g->c.hy, x = (long)g->cx * NX + i - g->c.hx;
    long NYg = (long)g->c.py * NY, NXg = (long)g->c.px * NX;
    int ys = 1, xs = 1, ny = g->cy + oy, nx = g->cx + ox;
    if (y < 0 || y >= NYg) {
        ys = g->c.pery;
        y = (y + NYg) % NYg;
        ny = (ny + g->c.py) % g->c.py;
    }
    if (x < 0 || x >= NXg) {
        xs = g->c.perx;
        x = (x + NXg) % NXg;
        nx = (nx + g->c.px) % g->c.px;
    }
    if (xs && ys) return value(f, z, y, x, it);
    if (ox && oy && g->c.twophase) {
        if (xs) return -1.0 - (g->cy * g->c.px + nx);
        if (ys) return -1.0 - (ny * g->c.px + g->cx);
    }
    return mine;
}

static void check_oracle(const geom *g, void **fields, int it)
{
    for (int f = 0; f < g->c.nfields; f++)
        for (int z = 0; z < NZ; z++)
            for (int j = 0; j < g->nyt; j++)
                for (int i = 0; i < g->nxt; i++) {
                    int inner =
                        j >= g->c.hy && j < g->c.hy + NY && i >= g->c.hx && i < g->c.hx + NX;
                    if (inner) continue;
                    double got = get_val(g, fields[f], idx(g, z, j, i));
                    double want = expected(g, f, z, j, i, it);
                    if (got != want)
                        FAIL("p2p: field %d z %d halo (j %d, i %d) = %g, expected %g", f, z, j, i,
                             got, want);
                }
}

static void run_config(const config *c)
{
    int dims[2] = {c->py, c->px}, periods[2] = {c->pery, c->perx};
    MPI_Comm world_part, cart;
    MPI_Comm_split(MPI_COMM_WORLD, rank < c->py * c->px ? 0 : MPI_UNDEFINED, rank, &world_part);
    if (world_part == MPI_COMM_NULL) return;
    MPI_Cart_create(world_part, 2, dims, periods, 0, &cart);
    int coords[2];
    MPI_Cart_coords(cart, rank, 2, coords);
    geom g = {*c, coords[0], coords[1], 0, c->dbl ? 8 : 4, NX + 2 * c->hx, NY + 2 * c->hy};
    NARMA_Halo_desc d = NARMA_HALO_DESC_INIT;
    d.nz = NZ, d.ny = NY, d.nx = NX, d.halo_x = c->hx, d.halo_y = c->hy;
    d.datatype = c->dbl ? MPI_DOUBLE : MPI_FLOAT;
    d.nfields = c->nfields, d.corners = c->corners, d.layout = (NARMA_Halo_layout)c->layout;
    g.elems = NARMA_Halo_field_elems(&d);
    d.field_elems = g.elems;

    void *ref[ITERS][3];
    void *a[2][3];
    for (int s = NARMA_HALO_P2P; s < NARMA_HALO_NSTRATEGIES; s++) {
        snprintf(
            where, sizeof where,
            "%s grid %dx%d periods y%d x%d depth x%d y%d corners %d %s %s layout %s nfields %d",
            NARMA_Halo_strategy_name((NARMA_Halo_strategy)s), c->py, c->px, c->pery, c->perx, c->hx,
            c->hy, c->corners, c->twophase ? "EW-then-NS" : "both-at-once",
            c->dbl ? "double" : "float", c->layout ? "XYZ" : "ZYX", c->nfields);
        d.strategy = (NARMA_Halo_strategy)s;
        NARMA_Halo_plan plan[2] = {NARMA_HALO_PLAN_NULL, NARMA_HALO_PLAN_NULL};
        if (c->twophase) {
            d.directions = NARMA_HALO_EW;
            CHECK_RC(NARMA_Halo_plan_create(cart, &d, &plan[0]));
            d.directions = NARMA_HALO_NS;
            CHECK_RC(NARMA_Halo_plan_create(cart, &d, &plan[1]));
        } else {
            d.directions = NARMA_HALO_BOTH;
            CHECK_RC(NARMA_Halo_plan_create(cart, &d, &plan[0]));
        }
        if (NARMA_Halo_plan_strategy(plan[0]) != (NARMA_Halo_strategy)s) FAIL("plan strategy");
        for (int b = 0; b < 2; b++)
            for (int f = 0; f < c->nfields; f++)
                a[b][f] = calloc(g.elems, g.es);
        fill(&g, a[0], 0, 1);
        for (int it = 0; it < ITERS; it++) {
            void **cur = a[it == ITERS - 1];
            if (it == ITERS - 1) /* new arrays, same contents */
                for (int f = 0; f < c->nfields; f++)
                    memcpy(a[1][f], a[0][f], g.elems * g.es);
            if (it > 0) fill(&g, cur, it, 0);
            for (int ph = 0; ph < 2; ph++) {
                if (plan[ph] == NARMA_HALO_PLAN_NULL) continue;
                if (it == 1) {
                    CHECK_RC(NARMA_Halo_start(plan[ph], cur));
                    CHECK_RC(NARMA_Halo_finish(plan[ph]));
                } else {
                    CHECK_RC(NARMA_Halo_exchange(plan[ph], cur));
                }
            }
            if (s == NARMA_HALO_P2P) {
                check_oracle(&g, cur, it);
                for (int f = 0; f < c->nfields; f++) {
                    ref[it][f] = malloc(g.elems * g.es);
                    memcpy(ref[it][f], cur[f], g.elems * g.es);
                }
            } else {
                for (int f = 0; f < c->nfields; f++)
                    if (memcmp(ref[it][f], cur[f], g.elems * g.es) != 0) {
                        for (size_t k = 0; k < g.elems; k++)
                            if (get_val(&g, ref[it][f], k) != get_val(&g, cur[f], k) ||
                                memcmp((char *)ref[it][f] + k * g.es, (char *)cur[f] + k * g.es,
                                       g.es))
                                FAIL("exchange %d field %d element %zu: %g, p2p has %g", it, f, k,
                                     get_val(&g, cur[f], k), get_val(&g, ref[it][f], k));
                    }
            }
        }
        for (int ph = 0; ph < 2; ph++)
            if (plan[ph]) CHECK_RC(NARMA_Halo_plan_free(&plan[ph]));
        if (plan[0] != NARMA_HALO_PLAN_NULL) FAIL("plan_free did not clear the handle");
        for (int b = 0; b < 2; b++)
            for (int f = 0; f < c->nfields; f++)
                free(a[b][f]);
    }
    for (int it = 0; it < ITERS; it++)
        for (int f = 0; f < c->nfields; f++)
            free(ref[it][f]);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&world_part);
}

/* The pairwise sample (--pairwise): of the 64 combinations of periodicity
 * (4), depth (4), corners (2) and one/two-phase (2) on a grid, the 16 with
 *   corners  == (per >> 1) ^ ((depth - 1) >> 1)
 *   twophase == (per >> 1) ^ ((depth - 1) & 1)
 * which hold every pair of values of any two of the four (each periodicity
 * with each depth, each depth with corners on and off, ...). */
static int in_sample(int per, int depth, int corners, int two)
{
    return corners == ((per >> 1) ^ ((depth - 1) >> 1)) && two == ((per >> 1) ^ ((depth - 1) & 1));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    alarm(240); /* a hang becomes a failure */
    /* --pairwise: the sample above on grids using more than two ranks, which
     * are slow oversubscribed (ctest runs it for np4 over the mpi transport;
     * np1/np2 and np4 over shm run everything). NARMA_HALO_TEST_ALL=1 overrides. */
    const int pairwise =
        argc > 1 && strcmp(argv[1], "--pairwise") == 0 && !getenv("NARMA_HALO_TEST_ALL");
    int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 4}, {4, 1}};
    long nconf = 0;
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
        if (grids[gi][0] * grids[gi][1] > nprocs) continue;
        /* with more ranks, only grids that use them all (the smaller ones ran at lower np) */
        if (nprocs >= 2 && grids[gi][0] * grids[gi][1] == 1) continue;
        if (nprocs == 4 && grids[gi][0] * grids[gi][1] == 2) continue;
        /* 1x4 and 4x1 add little over 1x2/2x1 and 2x2 and are slow oversubscribed */
        if ((grids[gi][0] == 4 || grids[gi][1] == 4) && !getenv("NARMA_HALO_TEST_ALL")) continue;
        for (int per = 0; per < 4; per++)
            for (int depth = 1; depth <= 4; depth++) /* 4: asymmetric x1 y3 */
                for (int corners = 0; corners < 2; corners++)
                    for (int two = 0; two < 2; two++) {
                        if (pairwise && grids[gi][0] * grids[gi][1] > 2 &&
                            !in_sample(per, depth, corners, two))
                            continue;
                        config c = {grids[gi][0],
                                    grids[gi][1],
                                    per >> 1,
                                    per & 1,
                                    depth == 4 ? 1 : depth,
                                    depth == 4 ? 3 : depth,
                                    corners,
                                    two,
                                    (depth + corners) % 2,
                                    (per + two) % 2,
                                    1 + (depth + two) % 3};
                        run_config(&c);
                        nconf++;
                    }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_halo_exchange: %ld configurations%s x %d strategies on %d ranks: all "
               "bit-identical to p2p\n",
               nconf, pairwise ? " (pairwise sample)" : "", NARMA_HALO_NSTRATEGIES - 1, nprocs);
    MPI_Finalize();
    return 0;
}
