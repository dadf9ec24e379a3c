/*
 * halo_bench: weather-code halo exchanges with every narma_halo strategy.
 *
 *   UM-like (Szpindler's Unified Model study): one field, depth 2, global
 *   grid 448x616x70 periodic east-west, EW and NS exchanged separately (an
 *   EW plan and an NS plan), 170 exchanges per direction per step, 48 steps;
 *   EW and NS times reported separately as in the paper's Tables I and II
 *   (per strategy: average, minimum and maximum over ranks of each rank's
 *   total time).
 *   MONC-like: u, v, w, th and q tracers in one exchange per step, depth 2,
 *   corners, z-fastest columns (MONC's layout), doubly periodic.
 *
 * Strategies are interleaved step by step (every strategy runs its step's
 * exchanges before the next step starts), so load from other jobs on a
 * shared machine hits them alike. Every strategy exchanges its own copy of
 * the fields, perturbed identically every step; at the end each copy must be
 * bit-identical to p2p's, and the run says so (exit 1 otherwise).
 *
 * Usage: halo_bench [--preset um-small|um|monc-small|monc] [--strategies a,b,..]
 *                   [--steps N] [--exchanges N] [--grid PYxPX] [--global NYxNXxNZ]
 *                   [--tracers N] [--csv FILE] [--quick]
 *
 * CSV (one row per strategy and direction: EW, NS and their total for UM, "all"
 * for MONC): preset,strategy,direction,avg_s,min_s,max_s,ratio_to_p2p,
 * bit_identical, where ratio_to_p2p is that direction's average time over
 * p2p's average time in the same direction.
 */
#include <narma/narma_halo.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int rank, nprocs;

static double now(void) { return bench_now(); }

static void die(const char *msg, int rc)
{
    fprintf(stderr, "halo_bench: rank %d: %s: %s\n", rank, msg, NARMA_Halo_error_string(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define TRY(call, what)          \
    do {                         \
        int rc_ = (call);        \
        if (rc_) die(what, rc_); \
    } while (0)

typedef struct {
    const char *name;
    int monc;
    int gny, gnx, gnz, exchanges, steps, tracers;
} preset;

static const preset presets[] = {
    {"um-small", 0, 308, 224, 70, 170, 3, 0},
    {"um", 0, 616, 448, 70, 170, 48, 0},
    {"monc-small", 1, 128, 128, 64, 1, 300, 3},
    {"monc", 1, 512, 512, 128, 1, 200, 5},
};

typedef struct {
    NARMA_Halo_strategy s;
    NARMA_Halo_plan plan[2]; /* UM: EW, NS; MONC: one */
    void **fields;
    double t[2];
} run;

/* Deterministic fill: interior and halo, different per rank, field, point. */
static void fill(double *a, size_t n, int f)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(rank * 64 + f + 1);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[i] = (double)(x >> 11) * 0x1p-53;
    }
}

/* Per-step change of the interior: one z level (cheap; exchanged strips
 * change every step, so a stale halo anywhere shows at the end). */
static void perturb(const NARMA_Halo_desc *d, double *a, int step, int f)
{
    const int z = step % d->nz, hx = d->halo_x, hy = d->halo_y;
    const size_t nxt = (size_t)d->nx + 2 * hx, nyt = (size_t)d->ny + 2 * hy;
    for (int j = hy; j < d->ny + hy; j++)
        for (int i = hx; i < d->nx + hx; i++) {
            size_t k = d->layout == NARMA_HALO_LAYOUT_ZYX ? ((size_t)z * nyt + j) * nxt + i
                                                          : ((size_t)i * nyt + j) * d->nz + z;
            a[k] = a[k] * 0.5 + (double)(step + f + rank) + 1e-3 * (double)(i + j);
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    preset P = presets[0];
    const char *slist = "p2p,fence,pscw,pscw_nb,lock,dynamic,notify", *pname = "um-small";
    const char *grid_s = NULL, *global_s = NULL;
    int steps = -1, exch = -1, grid[2] = {0, 0}, tracers = -1, gl[3] = {0, 0, 0};
    struct bench_common c = {0};
    const struct bench_opt own[] = {
        {"preset", BENCH_OPT_STRING, &pname, 0, "um-small|um|monc-small|monc (default um-small)"},
        {"strategies", BENCH_OPT_STRING, &slist, 0, "comma-separated strategies (p2p always runs)"},
        {"steps", BENCH_OPT_INT, &steps, 1, "steps (default: the preset's)"},
        {"exchanges", BENCH_OPT_INT, &exch, 1, "UM: exchanges per direction per step"},
        {"tracers", BENCH_OPT_INT, &tracers, 0, "MONC: q tracers"},
        {"grid", BENCH_OPT_STRING, &grid_s, 0, "PYxPX process grid"},
        {"global", BENCH_OPT_STRING, &global_s, 0, "NYxNXxNZ global grid"},
    };
    const struct bench_spec spec = {
        .prog = "halo_bench",
        .usage = "mpiexec -n P halo_bench [options]",
        .opts = own,
        .nopts = (int)(sizeof own / sizeof *own),
    };
    int prc = bench_parse(argc, argv, &spec, &c);
    int found = 0;
    for (size_t k = 0; prc == 0 && k < sizeof presets / sizeof presets[0]; k++)
        if (!strcmp(pname, presets[k].name)) P = presets[k], found = 1;
    if (prc == 0 && !found) prc = bench_error("halo_bench: unknown preset '%s'", pname);
    if (prc) {
        MPI_Finalize();
        return prc < 0 ? 0 : 2;
    }
    if (grid_s) sscanf(grid_s, "%dx%d", &grid[0], &grid[1]);
    if (global_s) sscanf(global_s, "%dx%dx%d", &gl[0], &gl[1], &gl[2]);
    if (c.quick && steps < 0) steps = P.monc ? 20 : 1;
    const char *csv = c.csv;
    if (steps > 0) P.steps = steps;
    if (exch > 0) P.exchanges = exch;
    if (tracers >= 0) P.tracers = tracers;
    if (gl[0] > 0) P.gny = gl[0], P.gnx = gl[1], P.gnz = gl[2];

    int dims[2] = {grid[0], grid[1]};
    if (dims[0] * dims[1] != nprocs) dims[0] = dims[1] = 0;
    MPI_Dims_create(nprocs, 2, dims);
    int periods[2] = {P.monc, 1}; /* UM: periodic east-west only; MONC: both */
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int coords[2];
    MPI_Cart_coords(cart, rank, 2, coords);

    NARMA_Halo_desc d = NARMA_HALO_DESC_INIT;
    /* Uneven splits: the first (global % procs) rows/columns get one more. */
    d.ny = P.gny / dims[0] + (coords[0] < P.gny % dims[0]);
    d.nx = P.gnx / dims[1] + (coords[1] < P.gnx % dims[1]);
    d.nz = P.gnz, d.halo_x = d.halo_y = 2, d.datatype = MPI_DOUBLE;
    d.nfields = P.monc ? 4 + P.tracers : 1;
    d.corners = P.monc;
    d.layout = P.monc ? NARMA_HALO_LAYOUT_XYZ : NARMA_HALO_LAYOUT_ZYX;
    const size_t elems = NARMA_Halo_field_elems(&d);
    d.field_elems = elems;

    run runs[NARMA_HALO_NSTRATEGIES];
    int nruns = 0;
    char *sl = strdup(slist);
    for (char *tok = strtok(sl, ","); tok; tok = strtok(NULL, ",")) {
        NARMA_Halo_strategy s;
        TRY(NARMA_Halo_strategy_from_name(tok, &s), tok);
        if (s == NARMA_HALO_DEFAULT || nruns == NARMA_HALO_NSTRATEGIES) continue;
        runs[nruns++] = (run){.s = s};
    }
    free(sl);
    if (nruns == 0 || runs[0].s != NARMA_HALO_P2P) { /* p2p first: the reference */
        memmove(runs + 1, runs, (size_t)nruns * sizeof(run));
        runs[0] = (run){.s = NARMA_HALO_P2P};
        nruns++;
    }
    for (int r = 0; r < nruns; r++) {
        run *R = &runs[r];
        d.strategy = R->s;
        if (P.monc) {
            d.directions = NARMA_HALO_BOTH;
            TRY(NARMA_Halo_plan_create(cart, &d, &R->plan[0]), "plan_create");
        } else {
            d.directions = NARMA_HALO_EW;
            TRY(NARMA_Halo_plan_create(cart, &d, &R->plan[0]), "plan_create EW");
            d.directions = NARMA_HALO_NS;
            TRY(NARMA_Halo_plan_create(cart, &d, &R->plan[1]), "plan_create NS");
        }
        R->fields = malloc((size_t)d.nfields * sizeof(void *));
        for (int f = 0; f < d.nfields; f++) {
            R->fields[f] = malloc(elems * sizeof(double));
            fill(R->fields[f], elems, f);
        }
    }

    char title[96];
    snprintf(title, sizeof title, "narma halo_bench, preset %s (%s-like)", P.name,
             P.monc ? "MONC" : "UM");
    bench_print_header(title, cart);
    if (rank == 0) {
        printf("# process grid %dx%d (NSxEW)\n", dims[0], dims[1]);
        printf("# global %dx%dx%d (y x x x z), local %dx%dx%d on rank 0, depth 2, %d field(s)%s\n",
               P.gny, P.gnx, P.gnz, d.ny, d.nx, d.nz, d.nfields,
               P.monc ? " (u v w th + q tracers), corners, z-fastest" : "");
        if (P.monc)
            printf("# %d steps, one exchange of all fields per step\n", P.steps);
        else
            printf("# %d steps x %d exchanges per direction, EW then NS plans\n", P.steps,
                   P.exchanges);
        printf("# strategies interleaved step by step\n");
    }

    MPI_Barrier(cart);
    for (int step = 0; step < P.steps; step++) {
        for (int r = 0; r < nruns; r++) {
            run *R = &runs[r];
            for (int f = 0; f < d.nfields; f++)
                perturb(&d, R->fields[f], step, f);
            MPI_Barrier(cart);
            if (P.monc) {
                double t0 = now();
                TRY(NARMA_Halo_exchange(R->plan[0], R->fields), "exchange");
                R->t[0] += now() - t0;
            } else {
                for (int e = 0; e < P.exchanges; e++) {
                    double t0 = now();
                    TRY(NARMA_Halo_exchange(R->plan[0], R->fields), "exchange EW");
                    double t1 = now();
                    TRY(NARMA_Halo_exchange(R->plan[1], R->fields), "exchange NS");
                    R->t[0] += t1 - t0;
                    R->t[1] += now() - t1;
                }
            }
        }
    }

    /* Statistics over ranks and validation against p2p. */
    FILE *out = NULL;
    if (csv && rank == 0) {
        out = fopen(csv, "w");
        if (out)
            fprintf(out,
                    "preset,strategy,direction,avg_s,min_s,max_s,ratio_to_p2p,bit_identical\n");
    }
    double p2p_tot = 0, p2p_dir[2] = {0, 0}, notify_ratio = -1, worst_ratio = -1;
    const char *worst = NULL;
    int all_ok = 1;
    if (rank == 0) {
        if (P.monc)
            printf("%-10s %10s %10s %10s %12s %9s  %s\n", "# strategy", "AVG (s)", "MIN (s)",
                   "MAX (s)", "per step(us)", "vs p2p", "result");
        else
            printf("%-10s %8s %8s %8s %8s %8s %8s %7s %7s %9s  %s\n", "# strategy", "EW AVG",
                   "EW MIN", "EW MAX", "NS AVG", "NS MIN", "NS MAX", "EW/p2p", "NS/p2p", "vs p2p",
                   "result");
    }
    for (int r = 0; r < nruns; r++) {
        run *R = &runs[r];
        double sum[2], mn[2], mx[2];
        MPI_Allreduce(R->t, sum, 2, MPI_DOUBLE, MPI_SUM, cart);
        MPI_Allreduce(R->t, mn, 2, MPI_DOUBLE, MPI_MIN, cart);
        MPI_Allreduce(R->t, mx, 2, MPI_DOUBLE, MPI_MAX, cart);
        double mine = R->t[0] + R->t[1], tmn, tmx; /* a rank's EW + NS */
        MPI_Allreduce(&mine, &tmn, 1, MPI_DOUBLE, MPI_MIN, cart);
        MPI_Allreduce(&mine, &tmx, 1, MPI_DOUBLE, MPI_MAX, cart);
        int same = 1;
        for (int f = 0; f < d.nfields; f++)
            same &= memcmp(R->fields[f], runs[0].fields[f], elems * sizeof(double)) == 0;
        MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, cart);
        all_ok &= same;
        double avg[2] = {sum[0] / nprocs, sum[1] / nprocs}, tot = avg[0] + avg[1];
        if (r == 0) p2p_tot = tot, p2p_dir[0] = avg[0], p2p_dir[1] = avg[1];
        /* per direction: this strategy's EW (NS) time over p2p's EW (NS) time */
        const double dir[2] = {p2p_dir[0] > 0 ? avg[0] / p2p_dir[0] : 0,
                               p2p_dir[1] > 0 ? avg[1] / p2p_dir[1] : 0};
        const char *name = NARMA_Halo_strategy_name(R->s);
        const double ratio = p2p_tot > 0 ? tot / p2p_tot : 0;
        if (R->s == NARMA_HALO_NOTIFY) notify_ratio = ratio;
        if (r > 0 && ratio > worst_ratio) worst_ratio = ratio, worst = name;
        const char *res = r == 0 ? "reference" : same ? "bit-identical to p2p" : "DIFFERS from p2p";
        if (rank == 0) {
            if (P.monc)
                printf("%-10s %10.4f %10.4f %10.4f %12.1f %9.2f  %s\n", name, avg[0], mn[0], mx[0],
                       1e6 * avg[0] / P.steps, ratio, res);
            else
                printf("%-10s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %7.2f %7.2f %9.2f  %s\n", name,
                       avg[0], mn[0], mx[0], avg[1], mn[1], mx[1], dir[0], dir[1], ratio, res);
            if (out && P.monc)
                fprintf(out, "%s,%s,all,%.6f,%.6f,%.6f,%.4f,%d\n", P.name, name, avg[0], mn[0],
                        mx[0], ratio, same);
            else if (out) {
                for (int k = 0; k < 2; k++)
                    fprintf(out, "%s,%s,%s,%.6f,%.6f,%.6f,%.4f,%d\n", P.name, name, k ? "NS" : "EW",
                            avg[k], mn[k], mx[k], dir[k], same);
                fprintf(out, "%s,%s,total,%.6f,%.6f,%.6f,%.4f,%d\n", P.name, name, tot, tmn, tmx,
                        ratio, same);
            }
        }
    }
    if (rank == 0) {
        if (!P.monc)
            printf("# EW/p2p, NS/p2p: that direction's AVG over p2p's; vs p2p: (EW AVG + NS AVG) / "
                   "p2p's; times are each rank's total exchange time\n");
        else
            printf("# vs p2p: AVG / p2p's AVG; times are each rank's total exchange time\n");
        if (notify_ratio >= 0) printf("# notify/p2p %.2f\n", notify_ratio);
        if (worst) printf("# worst RMA/p2p %.2f (%s)\n", worst_ratio, worst);
        printf("%s\n", all_ok ? "Solution validates: every strategy bit-identical to p2p"
                              : "Solution does NOT validate");
    }
    if (out) fclose(out);
    for (int r = 0; r < nruns; r++) {
        for (int k = 0; k < 2; k++)
            if (runs[r].plan[k]) NARMA_Halo_plan_free(&runs[r].plan[k]);
        for (int f = 0; f < d.nfields; f++)
            free(runs[r].fields[f]);
        free(runs[r].fields);
    }
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
