/*
 * Runs ONE test case of foMPI-NA's test suite (tests/test_foMPI-NA) against
 * narma:  fompi_driver <case> [create|allocate|dynamic]
 *
 * foMPI-NA's own main.c runs every case in one long program; this driver sets
 * up the same windows and attachments that main.c has in place when it calls
 * the case (communicator MPI_COMM_WORLD, DIM 5), calls it, and frees them, so
 * that a failure or a hang names its case. `fompi_driver --list` prints the
 * cases, one "case flavor" per line. Built by scripts/foreign-suites.sh
 * together with the suite's test files; narma's code, not foMPI-NA's.
 */
#include "fompi.h"
#include "test_mpi3rma.h"

#define DIM 5

struct narma_fompi_glob_info glob_info;

/* excl_lock.c reads foMPI-NA's window internals and builds only against foMPI-NA: the
 * case stays listed (as excluded), its function may be absent. */
#pragma weak test_mpi3rma_excl_lock

enum sig { S_COMM, S_SELF, S_NAME, S_DIM_WIN, S_BASE_DIM, S_BASE, S_WIN, S_MAXLOC, S_I64 };
/* Which attachments main.c has made on a dynamic window before the case. */
enum setup { A_NONE, A_GET_FENCE, A_THREE, A_ONE, A_TWO_GAP, A_THREE_LATE, A_MAXLOC, A_I64 };

struct tcase {
    const char *name;
    enum sig sig;
    enum setup setup;
    int flavors; /* bit j: run with flavor j (1 create, 2 allocate, 4 dynamic); 0: no window */
    void (*fn)(void);
};

#define C(n, s, a, f)                                \
    {                                                \
#n, s, a, f, (void (*)(void))test_mpi3rma##n \
    }
static const struct tcase cases[] = {
    C(ex_put_notify, S_COMM, A_NONE, 0),
    C(ex_put_notify_2, S_COMM, A_NONE, 0),
    C(ex_put_notify_pingpong, S_COMM, A_NONE, 0),
    C(ex_put_notify_no_data, S_COMM, A_NONE, 0),
    C(ex_put_notify_no_data_wildcards, S_COMM, A_NONE, 0),
    C(ex_get_notify, S_COMM, A_NONE, 0),
    C(_null_pointer, S_SELF, A_NONE, 0),
    C(_win_attr, S_SELF, A_NONE, 0),
    C(_excl_lock, S_COMM, A_NONE, 0),
    C(_win_name, S_NAME, A_NONE, 7),
    C(_dynamic_attach_1, S_DIM_WIN, A_NONE, 4),
    C(_dynamic_attach_2, S_DIM_WIN, A_NONE, 4),
    C(_put_fence, S_BASE_DIM, A_NONE, 7),
    C(_get_fence, S_BASE_DIM, A_GET_FENCE, 7),
    C(_get_lock, S_BASE_DIM, A_THREE, 7),
    C(_put_lock, S_BASE_DIM, A_THREE, 7),
    C(_rput_rget_lock, S_BASE_DIM, A_THREE, 7),
    C(_rget_lockall, S_BASE_DIM, A_THREE, 7),
    C(_lock_exclusive_concurrency, S_BASE_DIM, A_THREE, 7),
    C(_put_pscw, S_BASE_DIM, A_THREE, 7),
    C(_get_pscw, S_BASE_DIM, A_THREE, 7),
    C(_pscw2, S_WIN, A_THREE, 7),
    C(_acc_sum_fence, S_BASE_DIM, A_THREE, 7),
    C(_acc_sum_pscw, S_BASE_DIM, A_THREE, 7),
    C(_acc_sum_lock, S_BASE_DIM, A_THREE, 7),
    C(_acc_replace_lock, S_BASE_DIM, A_THREE, 7),
    C(_racc_sum_lock, S_BASE_DIM, A_THREE, 7),
    C(_get_acc_sum_fence, S_BASE_DIM, A_THREE, 7),
    C(_get_acc_sum_pscw, S_BASE_DIM, A_THREE, 7),
    C(_get_acc_sum_lock, S_BASE_DIM, A_THREE, 7),
    C(_get_acc_replace_lock, S_BASE_DIM, A_THREE, 7),
    C(_get_acc_no_op_lock, S_BASE_DIM, A_THREE, 7),
    C(_rget_acc_sum_lock, S_BASE_DIM, A_THREE, 7),
    C(_cswap_fence, S_BASE, A_THREE, 7),
    C(_cswap_pscw, S_BASE, A_THREE, 7),
    C(_cswap_lock, S_BASE, A_THREE, 7),
    C(_fetch_and_op_sum_fence, S_BASE, A_THREE, 7),
    C(_fetch_and_op_sum_pscw, S_BASE, A_THREE, 7),
    C(_fetch_and_op_sum_lock, S_BASE, A_THREE, 7),
    C(_ddt_1, S_BASE, A_ONE, 7),
    C(_ddt_2, S_BASE, A_ONE, 7),
    C(_ddt_3, S_BASE, A_ONE, 7),
    C(_dynamic_ddt_1, S_BASE, A_TWO_GAP, 4),
    C(_dynamic_ddt_notify_1, S_BASE, A_TWO_GAP, 4),
    C(_dynamic_ddt_get_notify_1, S_BASE, A_TWO_GAP, 4),
    C(_dynamic_ddt_4, S_BASE, A_TWO_GAP, 4),
    C(_dynamic_ddt_2, S_BASE, A_THREE_LATE, 4),
    C(_dynamic_ddt_notify_2, S_BASE, A_THREE_LATE, 4),
    C(_dynamic_ddt_get_notify_2, S_BASE, A_THREE_LATE, 4),
    C(_dynamic_ddt_3, S_BASE_DIM, A_THREE_LATE, 4),
    C(_dynamic_ddt_notify_3, S_BASE_DIM, A_THREE_LATE, 4),
    C(_dynamic_ddt_5, S_BASE, A_THREE_LATE, 4),
    C(_dynamic_ddt_6, S_BASE_DIM, A_THREE_LATE, 4),
    C(_get_acc_maxloc_lock, S_MAXLOC, A_MAXLOC, 7),
    C(_cswap_special_fence, S_I64, A_I64, 7),
    C(_cswap_special_pscw, S_I64, A_I64, 7),
    C(_cswap_special_lock, S_I64, A_I64, 7),
};
#undef C

static const char *flavor_name[3] = {"create", "allocate", "dynamic"};

/* The case's name as the suite's file names it (test_mpi3rmaex_put_notify -> put_notify). */
static const char *short_name(const struct tcase *c)
{
    return c->name + (c->name[0] == 'e' ? 3 : 1);
}

static void ok(int status, int line)
{
    if (status == MPI_SUCCESS) return;
    fprintf(stderr, "Error: fompi_driver line %d: narma call returned %d (%s)\n", line, status,
            NARMA_Strerror(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define OK(call) ok((call), __LINE__)

int main(int argc, char **argv)
{
    int rank, size;
    OK(foMPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    glob_info.debug_pe = rank;
    glob_info.v_option = 0;

    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        if (rank == 0)
            for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                if (cases[i].flavors == 0) printf("%s\n", short_name(&cases[i]));
                for (int j = 0; j < 3; j++)
                    if (cases[i].flavors & (1 << j))
                        printf("%s %s\n", short_name(&cases[i]), flavor_name[j]);
            }
        foMPI_Finalize();
        return 0;
    }
    const struct tcase *c = NULL;
    for (size_t i = 0; argc >= 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], short_name(&cases[i])) == 0) c = &cases[i];
    int j = -1;
    for (int k = 0; argc >= 3 && k < 3; k++)
        if (strcmp(argv[2], flavor_name[k]) == 0) j = k;
    if (c == NULL || (c->flavors != 0 && (j < 0 || !(c->flavors & (1 << j))))) {
        if (rank == 0) fprintf(stderr, "usage: fompi_driver --list | <case> [flavor]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (size < 4 || size % 2) {
        if (rank == 0)
            fprintf(stderr, "Error: foMPI-NA's tests need an even number >= 4 of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    if (c->fn == NULL) {
        if (rank == 0) fprintf(stderr, "Error: case %s was not built\n", short_name(c));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    if (c->sig == S_COMM || c->sig == S_SELF) {
        if (strcmp(short_name(c), "get_notify") == 0) glob_info.v_option = 3; /* as main.c */
        if (c->sig == S_COMM)
            ((void (*)(MPI_Comm))c->fn)(comm);
        else if (rank == 0)
            ((void (*)(MPI_Comm))c->fn)(MPI_COMM_SELF);
        MPI_Barrier(MPI_COMM_WORLD);
        foMPI_Finalize();
        return 0;
    }

    /* The windows main.c creates for flavor j. */
    foMPI_Win win = foMPI_WIN_NULL, win2 = foMPI_WIN_NULL;
    int *base = NULL, *base2 = NULL;
    switch (j) {
    case 0:
        base = malloc(3 * DIM * sizeof(int));
        OK(foMPI_Win_create(&base[5], DIM * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &win2));
        OK(foMPI_Win_create(base, 3 * DIM * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &win));
        break;
    case 1:
        OK(foMPI_Win_allocate(3 * DIM * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &base,
                              &win));
        OK(foMPI_Win_allocate(DIM * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base2,
                              &win2));
        break;
    default:
        OK(foMPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win2));
        OK(foMPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
        base = malloc(3 * DIM * sizeof(int));
        OK(foMPI_Win_attach(win2, base, 2 * DIM * sizeof(int)));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    (void)base2;

    /* The attachments main.c has made on the dynamic windows by then. */
    float_int_t *base3 = NULL;
    int64_t *base4 = NULL;
    if (j == 2) {
        switch (c->setup) {
        case A_GET_FENCE:
            OK(foMPI_Win_detach(win2, base));
            OK(foMPI_Win_attach(win2, base, 3 * DIM * sizeof(int)));
            break;
        case A_THREE:
        case A_THREE_LATE:
            for (int k = 0; k < 3; k++)
                OK(foMPI_Win_attach(win, &base[k * DIM], DIM * sizeof(int)));
            break;
        case A_ONE:
            OK(foMPI_Win_attach(win, base, 3 * DIM * sizeof(int)));
            break;
        case A_TWO_GAP:
            OK(foMPI_Win_attach(win, &base[0], DIM * sizeof(int)));
            OK(foMPI_Win_attach(win, &base[2 * DIM], DIM * sizeof(int)));
            break;
        default:
            break;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (c->setup == A_MAXLOC || c->setup == A_I64) {
        size_t esz = c->setup == A_MAXLOC ? sizeof(float_int_t) : sizeof(int64_t);
        int n = c->setup == A_MAXLOC ? DIM : 1;
        void *mem = NULL;
        if (j < 2) {
            OK(foMPI_Win_free(&win));
            OK(foMPI_Win_free(&win2));
        }
        switch (j) {
        case 0:
            mem = malloc(n * esz);
            OK(foMPI_Win_create(mem, n * esz, (int)esz, MPI_INFO_NULL, comm, &win));
            break;
        case 1:
            OK(foMPI_Win_allocate(n * esz, (int)esz, MPI_INFO_NULL, comm, &mem, &win));
            break;
        default:
            mem = malloc(n * esz);
            OK(foMPI_Win_attach(win, mem, n * esz));
            MPI_Barrier(comm);
        }
        if (c->setup == A_MAXLOC)
            base3 = mem;
        else
            base4 = mem;
    }

    if (rank == 0) printf("fompi_driver: %s (%s)\n", short_name(c), flavor_name[j]);
    fflush(stdout);
    switch (c->sig) {
    case S_NAME:
        if (rank == 0) ((void (*)(foMPI_Win))c->fn)(win2);
        break;
    case S_DIM_WIN:
        ((void (*)(int, foMPI_Win, MPI_Comm))c->fn)(DIM, win, comm);
        break;
    case S_BASE_DIM:
        /* main.c runs the fence cases of a dynamic window on win2 */
        if (j == 2 && c->setup <= A_GET_FENCE)
            ((void (*)(int *, int, foMPI_Win, MPI_Comm))c->fn)(base, DIM, win2, MPI_COMM_WORLD);
        else
            ((void (*)(int *, int, foMPI_Win, MPI_Comm))c->fn)(base, DIM, win, comm);
        break;
    case S_BASE:
        ((void (*)(int *, foMPI_Win, MPI_Comm))c->fn)(base, win, comm);
        break;
    case S_WIN:
        ((void (*)(foMPI_Win, MPI_Comm))c->fn)(win, comm);
        break;
    case S_MAXLOC:
        ((void (*)(float_int_t *, int, foMPI_Win, MPI_Comm))c->fn)(base3, DIM, win, comm);
        break;
    case S_I64:
        ((void (*)(int64_t *, foMPI_Win, MPI_Comm))c->fn)(base4, win, comm);
        break;
    default:
        break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(foMPI_Win_free(&win));
    if (win2 != foMPI_WIN_NULL) OK(foMPI_Win_free(&win2));
    foMPI_Finalize();
    return 0;
}
