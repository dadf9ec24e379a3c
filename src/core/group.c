/*
 * Groups of Win_post and Win_start, translated into window ranks. Programs
 * pass the same few groups epoch after epoch, and MPI_Group_translate_ranks
 * (with MPI_Group_size) is most of the cost of a post or a start, so each
 * window keeps the translations of its last NARMAI_GROUP_CACHE groups.
 *
 * A hit needs more than an equal handle: once the program frees a group, MPI
 * hands the same handle value to the next group created (MPICH reuses the
 * integer handle at once, Open MPI the object's address), and no portable
 * call lets us hold a reference to the program's group object to prevent it.
 * So each entry owns a group of its own with the same members in the same
 * order, made from the translated ranks, and a hit is an equal handle whose
 * group MPI_Group_compare finds MPI_IDENT to ours: exactly the condition for
 * the translation to be the same, whatever happened to the handle. When the
 * handle was recycled for another group the entry is dropped and the group
 * translated again. The comparison costs about half a translation at one
 * member (callgrind: 133 instructions against 247 with MPICH, 157 against 285
 * with Open MPI) and never more than one: MPI_IDENT needs the members of one
 * group, a translation searches them in the whole window's group.
 */
#include "core/narmai.h"
#include <stdlib.h>

static void entry_drop(struct narmai_group_entry *c)
{
    if (c->copy != MPI_GROUP_NULL) MPI_Group_free(&c->copy);
    c->copy = MPI_GROUP_NULL;
    c->key = MPI_GROUP_NULL;
    free(c->ranks);
    c->ranks = NULL;
    c->n = 0;
}

void narmai_group_cache_init(struct narmai_win *w)
{
    for (int i = 0; i < NARMAI_GROUP_CACHE; i++)
        w->gcache[i] = (struct narmai_group_entry){MPI_GROUP_NULL, MPI_GROUP_NULL, 0, NULL, 0};
}

void narmai_group_cache_free(struct narmai_win *w)
{
    for (int i = 0; i < NARMAI_GROUP_CACHE; i++)
        entry_drop(&w->gcache[i]);
}

/* Translate g (size gs) and remember it in the least recently used entry. */
static int group_miss(struct narmai_win *w, MPI_Group g, int gs, const int **ranks)
{
    int *t = malloc(sizeof(int) * (size_t)gs);
    if (t == NULL) return NARMAU_ERR(NARMA_ERR_NO_MEM, "group translation");
    int rc = NARMA_SUCCESS, mrc = MPI_Group_translate_ranks(g, gs, w->iota, w->group, t);
    if (mrc != MPI_SUCCESS) rc = narmau_mpi_error(mrc);
    for (int i = 0; rc == NARMA_SUCCESS && i < gs; i++)
        if (t[i] == MPI_UNDEFINED)
            rc = NARMAU_ERR(NARMA_ERR_RANK, "group member %d is not in the window", i);
    MPI_Group copy = MPI_GROUP_NULL;
    if (rc == NARMA_SUCCESS && (mrc = MPI_Group_incl(w->group, gs, t, &copy)) != MPI_SUCCESS)
        rc = narmau_mpi_error(mrc);
    if (rc != NARMA_SUCCESS) {
        free(t);
        return rc;
    }
    struct narmai_group_entry *c = &w->gcache[0];
    for (int i = 1; i < NARMAI_GROUP_CACHE; i++)
        if (w->gcache[i].used < c->used) c = &w->gcache[i];
    entry_drop(c);
    *c = (struct narmai_group_entry){g, copy, gs, t, ++w->gcache_clock};
    *ranks = t;
    return NARMA_SUCCESS;
}

int narmai_group_ranks(struct narmai_win *w, MPI_Group g, const int **ranks, int *n)
{
    if (g == MPI_GROUP_NULL) return NARMAU_ERR(NARMA_ERR_ARG, "MPI_GROUP_NULL");
    *n = 0;
    if (g == MPI_GROUP_EMPTY) return NARMA_SUCCESS; /* a constant: never another group */
    for (int i = 0; i < NARMAI_GROUP_CACHE; i++) {
        struct narmai_group_entry *c = &w->gcache[i];
        if (c->key != g || c->copy == MPI_GROUP_NULL) continue;
        int same;
        NARMAU_MPI(MPI_Group_compare(g, c->copy, &same));
        if (same != MPI_IDENT) { /* the handle now names another group */
            entry_drop(c);
            break;
        }
        c->used = ++w->gcache_clock;
        *ranks = c->ranks;
        *n = c->n;
        return NARMA_SUCCESS;
    }
    int gs;
    NARMAU_MPI(MPI_Group_size(g, &gs));
    if (gs > w->t.size)
        return NARMAU_ERR(NARMA_ERR_RANK, "group of %d is larger than the window (%d)", gs,
                          w->t.size);
    if (gs == 0) return NARMA_SUCCESS; /* nothing to translate or to remember */
    int rc = group_miss(w, g, gs, ranks);
    if (rc == NARMA_SUCCESS) *n = gs;
    return rc;
}
