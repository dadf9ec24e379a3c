/* Window info: the narma_* keys read at creation (NARMA_Win_create/allocate/create_dynamic),
 * NARMA_Win_get_info and NARMA_Win_set_info. tools/narma_info.c lists the keys too. */
#include "core/narmai.h"
#include "core/epoch.h"
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The epoch reorder keys. The long names are the documented ones; Open MPI limits keys to
 * MPI_MAX_INFO_KEY = 36 characters, which narma_exposure_after_exposure_reorder exceeds, so
 * each also has a short alias that every MPI can store. */
static const struct {
    const char *key, *alias;
    int flag;
} reorder_keys[] = {
    {"narma_access_after_access_reorder", "narma_reorder_aaar", NARMAI_AAAR},
    {"narma_access_after_exposure_reorder", "narma_reorder_aaer", NARMAI_AAER},
    {"narma_exposure_after_exposure_reorder", "narma_reorder_eaer", NARMAI_EAER},
    {"narma_exposure_after_access_reorder", "narma_reorder_eaar", NARMAI_EAAR},
};
#define NREORDER (sizeof(reorder_keys) / sizeof(reorder_keys[0]))

/* Whether key is name. A name longer than MPI_MAX_INFO_KEY (Open MPI's 36) cannot be a key
 * this MPI returns: refused by length first, which is also what GCC would otherwise warn that
 * strcmp on the key's array evaluates to. */
static int key_is(const char *key, const char *name)
{
    return strlen(name) <= MPI_MAX_INFO_KEY && strcmp(key, name) == 0;
}

/* What the keys set, parsed completely before anything changes. */
struct win_hints {
    int reorder;
    int64_t pull_min;    /* -1: not given (the transport's default) */
    int notify_deferred; /* narma_notify_completion=flush */
};

/* Walk the keys present (never query a name the MPI cannot hold). Every value narma reads is
 * short: a longer one is refused, never cut. */
static int parse(MPI_Info info, struct win_hints *h)
{
    int nkeys = 0;
    if (info == MPI_INFO_NULL || MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return NARMA_SUCCESS;
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1], val[24];
        int flag = 0, len = 0;
        if (MPI_Info_get_nthkey(info, k, key) != MPI_SUCCESS) continue;
        if (strncmp(key, "narma_", 6) != 0) continue;
        if (MPI_Info_get_valuelen(info, key, &len, &flag) == MPI_SUCCESS && flag &&
            len >= (int)sizeof(val) - 1)
            return NARMAU_ERR(NARMA_ERR_ARG, "info %s: value of %d characters is too long", key,
                              len);
        flag = 0;
        MPI_Info_get(info, key, (int)sizeof(val) - 1, val, &flag);
        if (!flag) continue;
        if (strcmp(key, "narma_pull_min") == 0) {
            char *end;
            errno = 0;
            long long v = strtoll(val, &end, 10);
            if (val[0] < '0' || val[0] > '9' || *end != '\0' || errno != 0)
                return NARMAU_ERR(NARMA_ERR_ARG, "info %s=%s: expected a byte count (0: never)",
                                  key, val);
            h->pull_min = (int64_t)v;
            continue;
        }
        if (strcmp(key, "narma_notify_completion") == 0) {
            if (strcmp(val, "return") == 0)
                h->notify_deferred = 0;
            else if (strcmp(val, "flush") == 0)
                h->notify_deferred = 1;
            else
                return NARMAU_ERR(NARMA_ERR_ARG, "info %s=%s: expected return or flush", key, val);
            continue;
        }
        for (size_t i = 0; i < NREORDER; i++) {
            if (!key_is(key, reorder_keys[i].key) && !key_is(key, reorder_keys[i].alias)) continue;
            if (strcmp(val, "true") == 0)
                h->reorder |= reorder_keys[i].flag;
            else if (strcmp(val, "false") == 0)
                h->reorder &= ~reorder_keys[i].flag;
            else
                return NARMAU_ERR(NARMA_ERR_ARG, "info %s=%s: expected true or false", key, val);
        }
    }
    return NARMA_SUCCESS;
}

int narmai_win_info_apply(struct narmai_win *w, MPI_Info info, int create)
{
    struct win_hints h = {w->reorder, w->t.pull_min, w->t.notify_deferred};
    int rc = parse(info, &h);
    if (rc) return rc;
    /* After creation only the reorder keys change: the transport set the window up with the
     * others (completion mode, pull threshold), and they stay as they are. */
    w->reorder = h.reorder;
    if (create) {
        w->t.pull_min = h.pull_min;
        w->t.notify_deferred = h.notify_deferred;
    }
    return NARMA_SUCCESS;
}

#define INFO_SET(info, key, val) NARMAU_MPI(MPI_Info_set((info), (key), (val)))

static int fill_info(const struct narmai_win *w, MPI_Info info)
{
    INFO_SET(info, "narma_notify_completion", w->t.notify_deferred ? "flush" : "return");
    if (w->t.pull_min >= 0) {
        char v[24];
        snprintf(v, sizeof v, "%lld", (long long)w->t.pull_min);
        INFO_SET(info, "narma_pull_min", v);
    }
    for (size_t i = 0; i < NREORDER; i++) {
        /* The documented name when this MPI can hold it, else the alias. */
        const char *key = strlen(reorder_keys[i].key) <= MPI_MAX_INFO_KEY ? reorder_keys[i].key
                                                                          : reorder_keys[i].alias;
        INFO_SET(info, key, (w->reorder & reorder_keys[i].flag) ? "true" : "false");
    }
    return NARMA_SUCCESS;
}

static int win_get_info(NARMA_Win w, MPI_Info *info_used)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (info_used == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL info_used");
    MPI_Info info;
    NARMAU_MPI(MPI_Info_create(&info));
    int rc = fill_info(w, info);
    if (rc) {
        MPI_Info_free(&info);
        return rc;
    }
    *info_used = info;
    return NARMA_SUCCESS;
}

int NARMA_Win_get_info(NARMA_Win win, MPI_Info *info_used)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, win_get_info(win, info_used));
}

static int win_set_info(NARMA_Win w, MPI_Info info)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    return narmai_win_info_apply(w, info, 0);
}

int NARMA_Win_set_info(NARMA_Win win, MPI_Info info)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, win_set_info(win, info));
}
