/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 */
/*
 * Windows: creation flavours, predefined attributes, user attributes with
 * delete callbacks, names (NARMA_WIN_NULL's too, as MPI-4.1 names
 * MPI_WIN_NULL), groups, and that narma works after a plain MPI_Init
 * (NARMA_Init is optional; NARMA_Finalize does not finalise MPI when narma
 * did not initialise it).
 */
#include "common.h"

static int deletes_seen; /* delete callbacks invoked on this rank */
static void *last_deleted;

static int count_delete(MPI_Win win, int keyval, void *attr, void *extra)
{
    (void)win;
    (void)keyval;
    CHECK(extra == &deletes_seen, "delete callback got extra_state %p, expected %p", extra,
          (void *)&deletes_seen);
    deletes_seen++;
    last_deleted = attr;
    return MPI_SUCCESS;
}

/* Predefined attributes must describe the window as MPI would. */
static void check_attrs(NARMA_Win win, void *base, MPI_Aint size, int disp_unit, int flavor)
{
    int flag = 0;
    void *got_base = (void *)1;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_BASE, &got_base, &flag));
    CHECK(flag, "NARMA_WIN_BASE not set");
    if (flavor != NARMA_WIN_FLAVOR_DYNAMIC)
        CHECK(got_base == base, "WIN_BASE %p, expected %p", got_base, base);

    MPI_Aint *got_size = NULL;
    flag = 0;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_SIZE, &got_size, &flag));
    CHECK(flag && got_size, "NARMA_WIN_SIZE not set");
    CHECK(*got_size == size, "WIN_SIZE %ld, expected %ld", (long)*got_size, (long)size);

    int *got_du = NULL;
    flag = 0;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_DISP_UNIT, &got_du, &flag));
    CHECK(flag && got_du, "NARMA_WIN_DISP_UNIT not set");
    CHECK(*got_du == disp_unit, "WIN_DISP_UNIT %d, expected %d", *got_du, disp_unit);

    int *got_flavor = NULL;
    flag = 0;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_CREATE_FLAVOR, &got_flavor, &flag));
    CHECK(flag && got_flavor, "NARMA_WIN_CREATE_FLAVOR not set");
    CHECK(*got_flavor == flavor, "WIN_CREATE_FLAVOR %d, expected %d", *got_flavor, flavor);

    int *got_model = NULL;
    flag = 0;
    CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_MODEL, &got_model, &flag));
    CHECK(flag && got_model, "NARMA_WIN_MODEL not set");
    CHECK(*got_model == NARMA_WIN_UNIFIED || *got_model == NARMA_WIN_SEPARATE,
          "WIN_MODEL %d is neither UNIFIED nor SEPARATE", *got_model);
}

/* The window's group is the group of the communicator it was created on. */
static void check_group(NARMA_Win win, MPI_Comm comm)
{
    MPI_Group wg, cg;
    int result;
    CHECK_RC(NARMA_Win_get_group(win, &wg));
    MPI_Comm_group(comm, &cg);
    MPI_Group_compare(wg, cg, &result);
    CHECK(result == MPI_IDENT, "window group compares %d to its communicator's group", result);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
}

/* One put to the right neighbour, under fence, proves the window moves data. */
static void check_ring_put(NARMA_Win win, MPI_Comm comm, int *local, MPI_Aint disp)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int value = 1000 + rank;
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(&value, 1, MPI_INT, right, disp, 1, MPI_INT, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK(*local == 1000 + left, "got %d from left neighbour, expected %d", *local, 1000 + left);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_window", 45);
    const int rank = test_rank, size = test_size;

    test_phase("Win_allocate: attributes, group, data movement, free");
    {
        NARMA_Win win = NARMA_WIN_NULL;
        int *base = NULL;
        MPI_Aint bytes = 16 * sizeof(int);
        CHECK_RC(
            NARMA_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        CHECK(win != NARMA_WIN_NULL, "Win_allocate returned NARMA_WIN_NULL");
        CHECK(base != NULL, "Win_allocate returned a NULL base for %ld bytes", (long)bytes);
        check_attrs(win, base, bytes, sizeof(int), NARMA_WIN_FLAVOR_ALLOCATE);
        check_group(win, MPI_COMM_WORLD);
        const char *tr = NARMA_Win_get_transport(win);
        CHECK(tr != NULL, "NARMA_Win_get_transport returned NULL");
        const char *want = getenv("NARMA_TRANSPORT");
        /* ofi serves pairs across pretend nodes only ("shm+ofi" when some share one). */
        if (want && *want)
            CHECK(strcmp(tr, want) == 0 || (strcmp(want, "ofi") == 0 && !strcmp(tr, "shm+ofi")),
                  "transport is '%s' but NARMA_TRANSPORT=%s", tr, want);
        for (int i = 0; i < 16; i++)
            base[i] = -1;
        check_ring_put(win, MPI_COMM_WORLD, &base[3], 3);
        CHECK(base[2] == -1 && base[4] == -1, "put with disp_unit=4 touched neighbours");
        CHECK_RC(NARMA_Win_free(&win));
        CHECK(win == NARMA_WIN_NULL, "Win_free did not set the handle to NARMA_WIN_NULL");
    }

    test_phase("Win_allocate with zero size on some ranks");
    {
        NARMA_Win win;
        void *base = NULL;
        MPI_Aint bytes = (rank % 2) ? 0 : 64;
        CHECK_RC(NARMA_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        MPI_Aint *got_size = NULL;
        int flag = 0;
        CHECK_RC(NARMA_Win_get_attr(win, NARMA_WIN_SIZE, &got_size, &flag));
        CHECK(flag && *got_size == bytes, "WIN_SIZE %ld, expected %ld", (long)*got_size,
              (long)bytes);
        CHECK_RC(NARMA_Win_free(&win));
    }

    test_phase("Win_create over user memory (odd ranks expose nothing)");
    {
        double *mem = NULL;
        MPI_Aint bytes = 0;
        if (rank % 2 == 0) {
            mem = calloc(32, sizeof(double));
            bytes = 32 * sizeof(double);
        }
        NARMA_Win win;
        CHECK_RC(NARMA_Win_create(mem, bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        check_attrs(win, mem, bytes, sizeof(double), NARMA_WIN_FLAVOR_CREATE);
        check_group(win, MPI_COMM_WORLD);
        /* every rank puts its rank into slot `rank` of rank 0's memory */
        double v = rank + 0.5;
        CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOPRECEDE, win));
        CHECK_RC(NARMA_Put(&v, 1, MPI_DOUBLE, 0, rank, 1, MPI_DOUBLE, win));
        CHECK_RC(NARMA_Win_fence(NARMA_MODE_NOSUCCEED, win));
        if (rank == 0)
            for (int r = 0; r < size; r++)
                CHECK(mem[r] == r + 0.5, "user memory slot %d holds %g", r, mem[r]);
        CHECK_RC(NARMA_Win_free(&win));
        free(mem);
    }

    test_phase("Win_create_dynamic + attach/put/detach");
    {
        NARMA_Win win;
        CHECK_RC(NARMA_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        check_attrs(win, NULL, 0, 1, NARMA_WIN_FLAVOR_DYNAMIC);
        check_group(win, MPI_COMM_WORLD);
        int *mem = malloc(8 * sizeof(int));
        for (int i = 0; i < 8; i++)
            mem[i] = -1;
        CHECK_RC(NARMA_Win_attach(win, mem, 8 * sizeof(int)));
        MPI_Aint my_addr, *addrs = malloc(size * sizeof(MPI_Aint));
        MPI_Get_address(mem, &my_addr);
        MPI_Allgather(&my_addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int v[2] = {rank, rank * 10};
        CHECK_RC(NARMA_Win_lock_all(0, win));
        CHECK_RC(NARMA_Put(v, 2, MPI_INT, right, MPI_Aint_add(addrs[right], 2 * sizeof(int)), 2,
                           MPI_INT, win));
        CHECK_RC(NARMA_Win_flush(right, win));
        CHECK_RC(NARMA_Win_unlock_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(mem[2] == left && mem[3] == left * 10 && mem[1] == -1 && mem[4] == -1,
              "dynamic window memory holds {%d,%d,%d,%d}, expected {-1,%d,%d,-1}", mem[1], mem[2],
              mem[3], mem[4], left, left * 10);
        /* a second region, attached later, is reachable too */
        long long *mem2 = calloc(4, sizeof(long long));
        CHECK_RC(NARMA_Win_attach(win, mem2, 4 * sizeof(long long)));
        MPI_Get_address(mem2, &my_addr);
        MPI_Allgather(&my_addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
        long long lv = 7000 + rank;
        CHECK_RC(NARMA_Win_fence(0, win));
        CHECK_RC(NARMA_Put(&lv, 1, MPI_LONG_LONG, right, addrs[right], 1, MPI_LONG_LONG, win));
        CHECK_RC(NARMA_Win_fence(0, win));
        CHECK(mem2[0] == 7000 + left, "second attached region holds %lld", mem2[0]);
        CHECK_RC(NARMA_Win_detach(win, mem));
        CHECK_RC(NARMA_Win_detach(win, mem2));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(NARMA_Win_free(&win));
        free(mem);
        free(mem2);
        free(addrs);
    }

    test_phase("Window on a reversed communicator: ranks are the communicator's");
    {
        MPI_Comm rev;
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
        int *base;
        NARMA_Win win;
        CHECK_RC(NARMA_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, rev, &base, &win));
        base[1] = -1;
        check_group(win, rev);
        check_ring_put(win, rev, &base[1], 1);
        CHECK_RC(NARMA_Win_free(&win));
        MPI_Comm_free(&rev);
    }

    test_phase("names");
    {
        int *base;
        NARMA_Win win;
        CHECK_RC(NARMA_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                    &win));
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        CHECK_RC(NARMA_Win_get_name(win, name, &len));
        CHECK(len >= 0 && (size_t)len == strlen(name), "default name '%s' with length %d", name,
              len);
        CHECK_RC(NARMA_Win_set_name(win, "halo window"));
        CHECK_RC(NARMA_Win_get_name(win, name, &len));
        CHECK(strcmp(name, "halo window") == 0 && len == 11, "name '%s' (len %d)", name, len);
        CHECK_RC(NARMA_Win_set_name(win, "renamed"));
        CHECK_RC(NARMA_Win_get_name(win, name, &len));
        CHECK(strcmp(name, "renamed") == 0 && len == 7, "name '%s' (len %d)", name, len);
        CHECK_RC(NARMA_Win_free(&win));
        /* MPI-4.1: the null handle's name is the name of its constant. */
        CHECK_RC(NARMA_Win_get_name(NARMA_WIN_NULL, name, &len));
        CHECK(strcmp(name, "NARMA_WIN_NULL") == 0 && len == 14, "null name '%s' (len %d)", name,
              len);
        CHECK_ERR(NARMA_Win_get_name(NARMA_WIN_NULL, NULL, &len), NARMA_ERR_ARG);
    }

    test_phase("user attributes: set/get/overwrite/delete/free and delete callbacks");
    {
        int *base;
        NARMA_Win win;
        CHECK_RC(NARMA_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                    &win));
        int key = MPI_KEYVAL_INVALID, key2 = MPI_KEYVAL_INVALID;
        CHECK_RC(NARMA_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, &deletes_seen));
        CHECK_RC(NARMA_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key2, &deletes_seen));
        CHECK(key != MPI_KEYVAL_INVALID && key2 != MPI_KEYVAL_INVALID && key != key2,
              "keyvals %d and %d", key, key2);
        CHECK(key != NARMA_WIN_BASE && key != NARMA_WIN_SIZE && key != NARMA_WIN_DISP_UNIT &&
                  key != NARMA_WIN_CREATE_FLAVOR && key != NARMA_WIN_MODEL,
              "user keyval %d collides with a predefined attribute", key);

        int flag = 1;
        void *val = NULL;
        CHECK_RC(NARMA_Win_get_attr(win, key, &val, &flag));
        CHECK(!flag, "attribute present before being set");

        static int a = 1, b = 2, c = 3;
        CHECK_RC(NARMA_Win_set_attr(win, key, &a));
        CHECK_RC(NARMA_Win_get_attr(win, key, &val, &flag));
        CHECK(flag && val == &a, "get_attr returned flag %d value %p, expected %p", flag, val,
              (void *)&a);
        CHECK(deletes_seen == 0, "delete callback ran %d times before any delete", deletes_seen);

        /* overwriting calls the delete callback on the old value */
        CHECK_RC(NARMA_Win_set_attr(win, key, &b));
        CHECK(deletes_seen == 1 && last_deleted == &a,
              "overwrite: %d deletes, last on %p (expected 1 on %p)", deletes_seen, last_deleted,
              (void *)&a);
        CHECK_RC(NARMA_Win_get_attr(win, key, &val, &flag));
        CHECK(flag && val == &b, "after overwrite get_attr gave %p", val);

        CHECK_RC(NARMA_Win_delete_attr(win, key));
        CHECK(deletes_seen == 2 && last_deleted == &b, "delete_attr: %d deletes", deletes_seen);
        CHECK_RC(NARMA_Win_get_attr(win, key, &val, &flag));
        CHECK(!flag, "attribute still present after delete_attr");

        /* an attribute outlives its freed keyval; Win_free deletes it */
        CHECK_RC(NARMA_Win_set_attr(win, key2, &c));
        CHECK_RC(NARMA_Win_free_keyval(&key2));
        CHECK(key2 == MPI_KEYVAL_INVALID, "free_keyval left keyval %d", key2);
        CHECK(deletes_seen == 2, "free_keyval ran the delete callback");
        CHECK_RC(NARMA_Win_set_attr(win, key, &a));
        CHECK_RC(NARMA_Win_free(&win));
        CHECK(deletes_seen == 4, "Win_free ran %d delete callbacks in total, expected 4",
              deletes_seen);
        CHECK_RC(NARMA_Win_free_keyval(&key));
    }

    test_phase("many windows alive at once, freed in another order");
    {
        enum { NW = 8 };
        NARMA_Win w[NW];
        int *b[NW];
        for (int i = 0; i < NW; i++) {
            CHECK_RC(NARMA_Win_allocate((i + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                        MPI_COMM_WORLD, &b[i], &w[i]));
            b[i][0] = -1;
        }
        for (int i = 0; i < NW; i++)
            check_ring_put(w[(i * 3) % NW], MPI_COMM_WORLD, &b[(i * 3) % NW][0], 0);
        for (int i = NW - 1; i >= 0; i--)
            CHECK_RC(NARMA_Win_free(&w[(i * 5) % NW]));
    }

    test_phase("NARMA_Init after MPI_Init; NARMA_Finalize leaves MPI initialised");
    {
        CHECK_RC(NARMA_Init(&argc, &argv));
        int *base;
        NARMA_Win win;
        CHECK_RC(NARMA_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                    &win));
        *base = -1;
        check_ring_put(win, MPI_COMM_WORLD, base, 0);
        CHECK_RC(NARMA_Win_free(&win));
        CHECK_RC(NARMA_Finalize());
        int finalized = 1;
        MPI_Finalized(&finalized);
        CHECK(!finalized, "NARMA_Finalize finalised MPI that the application initialised");
        CHECK(NARMA_Get_version() != NULL && strcmp(NARMA_Get_version(), NARMA_VERSION) == 0,
              "run-time version '%s' differs from header version '%s'", NARMA_Get_version(),
              NARMA_VERSION);
    }

    return test_finish();
}
