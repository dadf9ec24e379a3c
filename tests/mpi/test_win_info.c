/* narma-test: np=2,3 transports=shm,mpi timeout=60 */
/*
 * NARMA_Win_get_info reports the hints narma honours with their values in force, and
 * NARMA_Win_set_info changes those it documents as changeable:
 *   - a window created without info: narma_notify_completion=return, the four reorder keys
 *     false, no narma_pull_min (the transport's default applies);
 *   - a window created with narma_notify_completion=flush, narma_pull_min=4096 and two reorder
 *     keys true (one by its alias): exactly those values;
 *   - set_info turns reorder keys on and off (the others keep theirs); it ignores
 *     narma_notify_completion and narma_pull_min (fixed at creation) and MPI's own keys;
 *   - a bad value (reorder "maybe", a value too long) is NARMA_ERR_ARG and changes nothing,
 *     not even the valid keys given with it; MPI_INFO_NULL changes nothing;
 *   - NARMA_ERR_WIN for NARMA_WIN_NULL, NARMA_ERR_ARG for a NULL info_used.
 * A reorder key set through set_info really takes effect: test_nb_reorder's second round.
 */
#include "common.h"

#define AAAR "narma_access_after_access_reorder"
#define AAER "narma_access_after_exposure_reorder"
#define EAER "narma_exposure_after_exposure_reorder"
#define EAAR "narma_exposure_after_access_reorder"

/* The name get_info reports a reorder key by: the documented one when this MPI holds it. */
static const char *reported(const char *key, const char *alias)
{
    return strlen(key) <= MPI_MAX_INFO_KEY ? key : alias;
}

/* The value of key in info, or "(absent)". */
static const char *value(MPI_Info info, const char *key)
{
    static char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
    return flag ? v : "(absent)";
}

static void expect(NARMA_Win win, const char *completion, const char *pull, const char *aaar,
                   const char *aaer, const char *eaer, const char *eaar, const char *what)
{
    MPI_Info info = MPI_INFO_NULL;
    CHECK_RC(NARMA_Win_get_info(win, &info));
    CHECK(info != MPI_INFO_NULL, "%s: no info", what);
    const char *keys[6] = {"narma_notify_completion",
                           "narma_pull_min",
                           reported(AAAR, "narma_reorder_aaar"),
                           reported(AAER, "narma_reorder_aaer"),
                           reported(EAER, "narma_reorder_eaer"),
                           reported(EAAR, "narma_reorder_eaar")};
    const char *want[6] = {completion, pull, aaar, aaer, eaer, eaar};
    for (int i = 0; i < 6; i++)
        CHECK(strcmp(value(info, keys[i]), want[i]) == 0, "%s: %s is %s, expected %s", what,
              keys[i], value(info, keys[i]), want[i]);
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    int nwant = strcmp(pull, "(absent)") == 0 ? 5 : 6;
    CHECK(nkeys == nwant, "%s: %d keys, expected %d", what, nkeys, nwant);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv, "test_win_info", 50);
    NARMA_Win win;
    void *base;

    test_phase("defaults: a window created without info");
    CHECK_RC(NARMA_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    expect(win, "return", "(absent)", "false", "false", "false", "false", "defaults");
    CHECK_ERR(NARMA_Win_get_info(win, NULL), NARMA_ERR_ARG);
    CHECK_ERR(NARMA_Win_get_info(NARMA_WIN_NULL, &(MPI_Info){MPI_INFO_NULL}), NARMA_ERR_WIN);
    CHECK_ERR(NARMA_Win_set_info(NARMA_WIN_NULL, MPI_INFO_NULL), NARMA_ERR_WIN);
    CHECK_RC(NARMA_Win_free(&win));

    test_phase("the values given at creation");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "narma_notify_completion", "flush");
    MPI_Info_set(info, "narma_pull_min", "4096");
    MPI_Info_set(info, AAAR, "true");
    MPI_Info_set(info, "narma_reorder_eaar", "true");
    MPI_Info_set(info, "no_locks", "false");
    CHECK_RC(NARMA_Win_allocate(64, 1, info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    expect(win, "flush", "4096", "true", "false", "false", "true", "creation");

    test_phase("set_info changes the reorder keys, keeps the others");
    MPI_Info_create(&info);
    MPI_Info_set(info, "narma_reorder_eaer", "true");
    MPI_Info_set(info, AAAR, "false");
    MPI_Info_set(info, "narma_notify_completion", "return"); /* fixed at creation: ignored */
    MPI_Info_set(info, "narma_pull_min", "0");               /* likewise */
    MPI_Info_set(info, "accumulate_ordering", "none");       /* MPI's: ignored */
    CHECK_RC(NARMA_Win_set_info(win, info));
    MPI_Info_free(&info);
    expect(win, "flush", "4096", "false", "false", "true", "true", "set_info");
    CHECK_RC(NARMA_Win_set_info(win, MPI_INFO_NULL));
    expect(win, "flush", "4096", "false", "false", "true", "true", "set_info(MPI_INFO_NULL)");

    test_phase("a bad value is refused and changes nothing");
    MPI_Info_create(&info);
    MPI_Info_set(info, AAAR, "true"); /* valid, but given with a bad one */
    MPI_Info_set(info, "narma_reorder_aaer", "maybe");
    CHECK_ERR(NARMA_Win_set_info(win, info), NARMA_ERR_ARG);
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "narma_reorder_aaer", "true_and_a_value_far_too_long");
    CHECK_ERR(NARMA_Win_set_info(win, info), NARMA_ERR_ARG);
    MPI_Info_free(&info);
    expect(win, "flush", "4096", "false", "false", "true", "true", "after refused set_info");

    test_phase("the window works after set_info");
    MPI_Barrier(MPI_COMM_WORLD);
    int right = (test_rank + 1) % test_size;
    unsigned char v = (unsigned char)(10 + test_rank);
    CHECK_RC(NARMA_Win_fence(0, win));
    CHECK_RC(NARMA_Put(&v, 1, MPI_BYTE, right, 3, 1, MPI_BYTE, win));
    CHECK_RC(NARMA_Win_fence(0, win));
    int left = (test_rank + test_size - 1) % test_size;
    CHECK(((unsigned char *)base)[3] == 10 + left, "put after set_info: got %d",
          ((unsigned char *)base)[3]);
    CHECK_RC(NARMA_Win_free(&win));
    return test_finish();
}
