/* narma-test: np=2,3,4 transports=shm,mpi timeout=60 passthrough=1 */
/*
 * What MPI keeps about a window, for each flavor (create over malloc'ed memory with a size
 * and displacement unit that differ between ranks, and with size 0 and base NULL on the last
 * of 3 or more ranks; allocate; dynamic):
 *  - the five predefined attributes are the base, size and displacement unit the program
 *    passed (MPI_BOTTOM, 0 and 1 for a dynamic window, as MPI-4.1 section 12.2.6 says), the
 *    flavor it used, and a memory model that is UNIFIED or SEPARATE;
 *  - a user keyval: unset it reads flag 0; set, it reads back; replacing or deleting a value
 *    runs the delete callback on the old one; MPI_Win_free runs it on the values still set
 *    (also for a keyval freed before the window), with the window and extra state;
 *  - names: empty at first, then what MPI_Win_set_name gave (also the longest name);
 *  - MPI_Win_get_group is the group of the communicator (MPI_IDENT), also for a window over a
 *    split communicator; MPI_Win_f2c(MPI_Win_c2f(win)) is the window and works;
 *  - info: MPI_Win_set_info of MPI's hints accumulate_ordering and accumulate_ops comes back
 *    from MPI_Win_get_info whenever the MPI library keeps them on a window of its own (MPI
 *    lets it ignore hints); a narma hint given at creation (narma_access_after_access_reorder,
 *    honoured by narma) comes back too, as MPI-4.1 requires of hints an implementation does
 *    not ignore (not checked with NARMA_PMPI=off, where MPI rightly ignores it).
 */
#include "common.h"

static int rank, size;

static void check_attrs(MPI_Win win, void *base, MPI_Aint bytes, int disp_unit, int flavor)
{
    int flag = 0;
    void *got_base = (void *)1;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &got_base, &flag));
    CHECK(flag, "MPI_WIN_BASE not set");
    CHECK(got_base == base, "MPI_WIN_BASE %p, expected %p", got_base, base);

    MPI_Aint *got_size = NULL;
    flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &got_size, &flag));
    CHECK(flag && got_size, "MPI_WIN_SIZE not set");
    if (got_size)
        CHECK(*got_size == bytes, "MPI_WIN_SIZE %ld, expected %ld", (long)*got_size, (long)bytes);

    int *got_du = NULL;
    flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &got_du, &flag));
    CHECK(flag && got_du, "MPI_WIN_DISP_UNIT not set");
    if (got_du)
        CHECK(*got_du == disp_unit, "MPI_WIN_DISP_UNIT %d, expected %d", *got_du, disp_unit);

    int *got_flavor = NULL;
    flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &got_flavor, &flag));
    CHECK(flag && got_flavor, "MPI_WIN_CREATE_FLAVOR not set");
    if (got_flavor)
        CHECK(*got_flavor == flavor, "MPI_WIN_CREATE_FLAVOR %d, expected %d", *got_flavor, flavor);

    int *got_model = NULL;
    flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &got_model, &flag));
    CHECK(flag && got_model, "MPI_WIN_MODEL not set");
    if (got_model)
        CHECK(*got_model == MPI_WIN_UNIFIED || *got_model == MPI_WIN_SEPARATE,
              "MPI_WIN_MODEL %d is neither MPI_WIN_UNIFIED nor MPI_WIN_SEPARATE", *got_model);
}

static void check_group(MPI_Win win, MPI_Comm comm)
{
    MPI_Group wg, cg;
    int result = -1, n = -1;
    CHECK_MPI(MPI_Win_get_group(win, &wg));
    CHECK_MPI(MPI_Comm_group(comm, &cg));
    CHECK_MPI(MPI_Group_compare(wg, cg, &result));
    CHECK(result == MPI_IDENT, "the window's group compares %d to its communicator's group",
          result);
    CHECK_MPI(MPI_Group_size(wg, &n));
    int csize;
    MPI_Comm_size(comm, &csize);
    CHECK(n == csize, "window group size %d, communicator size %d", n, csize);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
}

static void attrs_per_flavor(void)
{
    test_phase("predefined attributes: Win_create over malloc'ed memory");
    MPI_Aint bytes = (rank + 1) * 24;
    int du = 1 << (rank % 4); /* 1, 2, 4, 8 */
    void *mem = malloc(bytes);
    int empty = size > 2 && rank == size - 1;
    if (empty) bytes = 0;
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(empty ? NULL : mem, bytes, du, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    test_errors_return(win);
    check_attrs(win, empty ? NULL : mem, bytes, du, MPI_WIN_FLAVOR_CREATE);
    check_group(win, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);

    test_phase("predefined attributes: Win_allocate");
    void *base = NULL;
    CHECK_MPI(MPI_Win_allocate((rank + 1) * 40, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    test_errors_return(win);
    check_attrs(win, base, (rank + 1) * 40, 8, MPI_WIN_FLAVOR_ALLOCATE);
    check_group(win, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_free(&win));

    test_phase("Fortran handle conversion: MPI_Win_f2c(MPI_Win_c2f(win)) is the same window");
    CHECK_MPI(
        MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Win back = MPI_Win_f2c(MPI_Win_c2f(win));
    CHECK(back == win, "the window came back as another handle");
    test_errors_return(back);
    *(int *)base = -1;
    int fv = rank + 100;
    CHECK_MPI(MPI_Win_fence(0, back));
    CHECK_MPI(MPI_Put(&fv, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, back));
    CHECK_MPI(MPI_Win_fence(0, back));
    CHECK(*(int *)base == (rank + size - 1) % size + 100, "put through the converted handle: %d",
          *(int *)base);
    CHECK_MPI(MPI_Win_free(&back));

    test_phase("predefined attributes: Win_create_dynamic (MPI_BOTTOM, 0, 1)");
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    test_errors_return(win);
    check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
    int region[4];
    CHECK_MPI(MPI_Win_attach(win, region, sizeof region));
    check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC); /* constant for its life */
    CHECK_MPI(MPI_Win_detach(win, region));
    check_group(win, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_free(&win));

    test_phase("MPI_Win_get_group on a window over a split communicator");
    MPI_Comm half;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half)); /* reversed */
    CHECK_MPI(MPI_Win_allocate(16, 4, MPI_INFO_NULL, half, &base, &win));
    test_errors_return(win);
    check_group(win, half);
    MPI_Group wg, world;
    CHECK_MPI(MPI_Win_get_group(win, &wg));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int hsize, hrank, wr = -1;
    MPI_Comm_size(half, &hsize);
    MPI_Comm_rank(half, &hrank);
    CHECK_MPI(MPI_Group_translate_ranks(wg, 1, &hrank, world, &wr));
    CHECK(wr == rank, "my rank in the window's group translates to world rank %d", wr);
    MPI_Group_free(&wg);
    MPI_Group_free(&world);
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Comm_free(&half);
}

/* The delete callback records what it was given. */
static int deletes;
static void *last_deleted;
static MPI_Win deleted_on;
static void *deleted_extra;
static int del_fn(MPI_Win win, int keyval, void *attr, void *extra)
{
    (void)keyval;
    deletes++;
    last_deleted = attr;
    deleted_on = win;
    deleted_extra = extra;
    return MPI_SUCCESS;
}

static void user_keyvals(void)
{
    test_phase("user keyval: unset, set, read back, replace, delete");
    int extra = 17, key = MPI_KEYVAL_INVALID, key2 = MPI_KEYVAL_INVALID;
    int payload[4] = {1, 2, 3, 4};
    void *got = NULL;
    int flag = 1;
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, &extra));
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key2, &extra));
    CHECK(key != MPI_KEYVAL_INVALID && key2 != MPI_KEYVAL_INVALID && key != key2,
          "keyvals %d and %d", key, key2);
    int *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    test_errors_return(win);
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(!flag, "an unset keyval reads with flag 1");
    CHECK_MPI(MPI_Win_set_attr(win, key, &payload[0]));
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &payload[0], "read back flag %d value %p, expected %p", flag, got,
          (void *)&payload[0]);
    CHECK(deletes == 0, "delete callback ran %d times on a first set", deletes);
    CHECK_MPI(MPI_Win_set_attr(win, key, &payload[1]));
    CHECK(deletes == 1 && last_deleted == &payload[0],
          "replacing a value: %d deletes, last %p, expected 1 and %p", deletes, last_deleted,
          (void *)&payload[0]);
    CHECK_MPI(MPI_Win_delete_attr(win, key));
    CHECK(deletes == 2 && last_deleted == &payload[1],
          "MPI_Win_delete_attr: %d deletes, last %p, expected 2 and %p", deletes, last_deleted,
          (void *)&payload[1]);
    CHECK(deleted_on == win && deleted_extra == &extra,
          "callback got window %ld extra %p, expected %ld and %p", (long)deleted_on, deleted_extra,
          (long)win, (void *)&extra);
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(!flag, "a deleted attribute reads with flag 1");
    /* the predefined attributes are untouched by user attributes */
    check_attrs(win, base, 64, 4, MPI_WIN_FLAVOR_ALLOCATE);

    test_phase("user keyvals: MPI_Win_free runs the delete callbacks");
    CHECK_MPI(MPI_Win_set_attr(win, key, &payload[2]));
    CHECK_MPI(MPI_Win_set_attr(win, key2, &payload[3]));
    CHECK_MPI(MPI_Win_free_keyval(&key2)); /* the attribute stays until the window goes */
    CHECK(key2 == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval left %d", key2);
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &payload[2], "read back flag %d value %p", flag, got);
    MPI_Win saved = win;
    deletes = 0;
    last_deleted = NULL;
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    CHECK(deletes == 2, "MPI_Win_free ran the delete callback %d times, expected 2", deletes);
    CHECK(last_deleted == &payload[2] || last_deleted == &payload[3], "MPI_Win_free deleted %p",
          last_deleted);
    CHECK(deleted_on == saved && deleted_extra == &extra,
          "callback at free got window %ld extra %p, expected %ld and %p", (long)deleted_on,
          deleted_extra, (long)saved, (void *)&extra);
    CHECK_MPI(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval left %d", key);

    test_phase("user keyval on a Win_create window: the callback runs at free");
    int *mem = malloc(64);
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, NULL));
    CHECK_MPI(MPI_Win_create(mem, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    test_errors_return(win);
    CHECK_MPI(MPI_Win_set_attr(win, key, mem));
    deletes = 0;
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(deletes == 1 && last_deleted == mem, "free ran %d deletes, last %p, expected 1, %p",
          deletes, last_deleted, (void *)mem);
    CHECK_MPI(MPI_Win_free_keyval(&key));
    free(mem);
}

static void names(void)
{
    test_phase("names: empty at first, then what was set");
    int *base;
    MPI_Win win;
    char name[MPI_MAX_OBJECT_NAME], want[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Win_allocate(16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    test_errors_return(win);
    name[0] = 'x';
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == 0, "a fresh window is named '%s' (length %d)", name, len);
    snprintf(want, sizeof want, "pmpi window of rank %d", rank);
    CHECK_MPI(MPI_Win_set_name(win, want));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, want) == 0 && len == (int)strlen(want), "name '%s' (%d), expected '%s'",
          name, len, want);
    memset(want, 'a' + rank, MPI_MAX_OBJECT_NAME - 1);
    want[MPI_MAX_OBJECT_NAME - 1] = 0;
    CHECK_MPI(MPI_Win_set_name(win, want));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, want) == 0 && len == MPI_MAX_OBJECT_NAME - 1,
          "the longest name came back with length %d", len);
    CHECK_MPI(MPI_Win_free(&win));
}

/* The value of key in win's info (0 when absent). */
static int info_value(MPI_Win win, const char *key, char *val, int vlen)
{
    MPI_Info used = MPI_INFO_NULL;
    int flag = 0;
    CHECK_MPI(MPI_Win_get_info(win, &used));
    CHECK(used != MPI_INFO_NULL, "MPI_Win_get_info returned MPI_INFO_NULL");
    if (used == MPI_INFO_NULL) return 0;
    CHECK_MPI(MPI_Info_get(used, key, vlen - 1, val, &flag));
    CHECK_MPI(MPI_Info_free(&used));
    return flag;
}

/* Whether the MPI library itself keeps hint key=val through MPI_Win_set_info (MPI lets an
 * implementation ignore hints): asked of a window it carries alone (narma_passthrough). */
static int mpi_keeps(const char *key, const char *val)
{
    MPI_Info in;
    int *b, kept;
    char got[MPI_MAX_INFO_VAL + 1];
    MPI_Win ref;
    CHECK_MPI(MPI_Info_create(&in));
    CHECK_MPI(MPI_Info_set(in, "narma_passthrough", "true"));
    CHECK_MPI(MPI_Win_allocate(16, 4, in, MPI_COMM_WORLD, &b, &ref));
    CHECK_MPI(MPI_Info_free(&in));
    test_errors_return(ref);
    CHECK_MPI(MPI_Info_create(&in));
    CHECK_MPI(MPI_Info_set(in, key, val));
    CHECK_MPI(MPI_Win_set_info(ref, in));
    CHECK_MPI(MPI_Info_free(&in));
    kept = info_value(ref, key, got, sizeof got) && strcmp(got, val) == 0;
    CHECK_MPI(MPI_Win_free(&ref));
    return kept;
}

static void info(void)
{
    test_phase("info: MPI_Win_set_info / MPI_Win_get_info round trip of MPI's hints");
    /* each hint must come back from a narma window whenever the MPI library keeps it */
    int keeps_ordering = mpi_keeps("accumulate_ordering", "none");
    int keeps_ops = mpi_keeps("accumulate_ops", "same_op");
    MPI_Info in;
    char val[MPI_MAX_INFO_VAL + 1];
    CHECK_MPI(MPI_Info_create(&in));
    CHECK_MPI(MPI_Info_set(in, "narma_access_after_access_reorder", "false"));
    int *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(16, 4, in, MPI_COMM_WORLD, &base, &win));
    test_errors_return(win);
    CHECK_MPI(MPI_Info_free(&in));
    CHECK_MPI(MPI_Info_create(&in));
    CHECK_MPI(MPI_Info_set(in, "accumulate_ordering", "none"));
    CHECK_MPI(MPI_Info_set(in, "accumulate_ops", "same_op"));
    CHECK_MPI(MPI_Win_set_info(win, in));
    CHECK_MPI(MPI_Info_free(&in));
    int flag = info_value(win, "accumulate_ordering", val, sizeof val);
    if (keeps_ordering)
        CHECK(flag && strcmp(val, "none") == 0, "accumulate_ordering: %s '%s', expected 'none'",
              flag ? "value" : "absent", flag ? val : "");
    flag = info_value(win, "accumulate_ops", val, sizeof val);
    if (keeps_ops)
        CHECK(flag && strcmp(val, "same_op") == 0, "accumulate_ops: %s '%s', expected 'same_op'",
              flag ? "value" : "absent", flag ? val : "");

    test_phase("info: the window still works after set_info");
    int v = rank + 1;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(base[0] == (rank + size - 1) % size + 1, "put after set_info gave %d", base[0]);

    /* last, so that a failure here hides nothing else */
    test_phase("info: a narma hint given at creation comes back from MPI_Win_get_info");
    if (!test_pmpi_off()) {
        flag = info_value(win, "narma_access_after_access_reorder", val, sizeof val);
        CHECK(flag && strcmp(val, "false") == 0,
              "narma_access_after_access_reorder: %s '%s' (narma honours the hint, so "
              "MPI_Win_get_info must return it)",
              flag ? "value" : "absent", flag ? val : "");
    }
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "pmpi test_attrs", 45);
    rank = test_rank;
    size = test_size;
    attrs_per_flavor();
    user_keyvals();
    names();
    info(); /* last: see there */
    return test_finish();
}
