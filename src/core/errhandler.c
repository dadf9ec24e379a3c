/* Window error handlers (MPI's MPI_Win_*_errhandler). Errors reach them from one place: every
 * public call taking a window returns through narmai_win_ret (narmai.h), whose error branch
 * lands here. The predefined handlers are the constants 1 and 2 (narma.h), never objects. */
#include "core/narmai.h"
#include "util/pool.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Retired handler objects (util/pool.h): a stale copy of a freed handle reads "freed". */
static narmau_pool eh_pool;

static int eh_predefined(NARMA_Errhandler eh)
{
    return eh == NARMA_ERRORS_RETURN || eh == NARMA_ERRORS_ARE_FATAL;
}

/* A handle the program may still use: predefined, or one of its handles not freed yet. The
 * program's handles and the windows' uses are counted apart, so that freeing one handle twice
 * is refused instead of taking a window's use away (MPI asks one Errhandler_free per handle
 * that create and get_errhandler gave). */
static int eh_ok(NARMA_Errhandler eh)
{
    return eh_predefined(eh) || (eh != NULL && eh->magic == NARMAI_EH_MAGIC && eh->handles > 0);
}

static void eh_retire_if_unused(struct narmai_errhandler *eh)
{
    if (eh->handles > 0 || eh->uses > 0) return;
    eh->magic = 0;
    narmau_pool_give(&eh_pool, eh, sizeof(*eh));
}

/* A window or a call stops using eh. */
static void eh_unuse(struct narmai_errhandler *eh)
{
    if (eh == NULL || eh_predefined(eh)) return;
    eh->uses--;
    eh_retire_if_unused(eh);
}

/* The window's handler as a handle: NULL stands for NARMA_ERRORS_RETURN. */
static NARMA_Errhandler win_eh(const struct narmai_win *w)
{
    return w->eh != NULL ? w->eh : NARMA_ERRORS_RETURN;
}

static void errors_are_fatal(struct narmai_win *w, int code)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    if (w->t.attr_win != MPI_WIN_NULL) MPI_Win_get_name(w->t.attr_win, name, &len);
    fprintf(stderr,
            "narma: error on window%s%s: %s (error class %d); NARMA_ERRORS_ARE_FATAL: "
            "aborting\n",
            len > 0 ? " " : "", name, NARMA_Strerror(code), code);
    fflush(stderr);
    /* Give mpiexec a moment to forward the message: Hydra tears the job down on MPI_Abort and
     * can drop output still in its pipes. */
    nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    MPI_Abort(w->t.comm, code);
    abort(); /* MPI_Abort does not return */
}

/* Run w's handler on code (any value); the caller checked the window. */
static void call_handler(struct narmai_win *w, int code)
{
    NARMA_Errhandler eh = win_eh(w);
    if (eh == NARMA_ERRORS_RETURN || w->in_handler) return;
    if (eh == NARMA_ERRORS_ARE_FATAL) errors_are_fatal(w, code);
    NARMA_Win handle = w;
    int c = code;
    w->in_handler = 1;
    eh->uses++; /* the handler may replace itself on the window */
    eh->fn(&handle, &c);
    eh_unuse(eh);
    /* The handler may have freed the window (its object is retired, not freed: the magic
     * says so). */
    if (narmai_win_ok(w)) w->in_handler = 0;
}

int narmai_win_error(NARMA_Win w, int rc)
{
    if (narmai_win_ok(w)) call_handler(w, rc);
    return rc;
}

void narmai_win_errhandler_release(struct narmai_win *w)
{
    eh_unuse(w->eh);
    w->eh = NULL;
}

int NARMA_Win_create_errhandler(NARMA_Win_errhandler_function *fn, NARMA_Errhandler *errhandler)
{
    NARMAI_API_LOCK();
    if (fn == NULL || errhandler == NULL)
        return NARMAU_ERR(NARMA_ERR_ARG, "NULL function or handle pointer");
    struct narmai_errhandler *eh = narmau_pool_take(&eh_pool, sizeof(*eh));
    if (eh == NULL && (eh = malloc(sizeof(*eh))) == NULL)
        return NARMAU_ERR(NARMA_ERR_NO_MEM, "error handler");
    eh->magic = NARMAI_EH_MAGIC;
    eh->handles = 1;
    eh->uses = 0;
    eh->fn = fn;
    *errhandler = eh;
    return NARMA_SUCCESS;
}

static int set_errhandler(NARMA_Win w, NARMA_Errhandler eh)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (!eh_ok(eh)) return NARMAU_ERR(NARMA_ERR_ARG, "invalid error handler");
    struct narmai_errhandler *old = w->eh;
    if (eh == NARMA_ERRORS_RETURN) {
        w->eh = NULL;
    } else {
        if (!eh_predefined(eh)) eh->uses++;
        w->eh = eh;
    }
    eh_unuse(old);
    return NARMA_SUCCESS;
}

int NARMA_Win_set_errhandler(NARMA_Win win, NARMA_Errhandler errhandler)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, set_errhandler(win, errhandler));
}

static int get_errhandler(NARMA_Win w, NARMA_Errhandler *eh)
{
    if (!narmai_win_ok(w)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    if (eh == NULL) return NARMAU_ERR(NARMA_ERR_ARG, "NULL errhandler");
    NARMA_Errhandler cur = win_eh(w);
    if (!eh_predefined(cur)) cur->handles++; /* a new handle: the caller frees it */
    *eh = cur;
    return NARMA_SUCCESS;
}

int NARMA_Win_get_errhandler(NARMA_Win win, NARMA_Errhandler *errhandler)
{
    NARMAI_API_LOCK();
    return narmai_win_ret(win, get_errhandler(win, errhandler));
}

int NARMA_Win_call_errhandler(NARMA_Win win, int errorcode)
{
    NARMAI_API_LOCK();
    if (!narmai_win_ok(win)) return NARMAU_ERR(NARMA_ERR_WIN, "invalid window");
    call_handler(win, errorcode);
    return NARMA_SUCCESS;
}

int NARMA_Errhandler_free(NARMA_Errhandler *errhandler)
{
    NARMAI_API_LOCK();
    if (errhandler == NULL || !eh_ok(*errhandler))
        return NARMAU_ERR(NARMA_ERR_ARG, "NULL, invalid or already freed error handler");
    struct narmai_errhandler *eh = *errhandler;
    if (!eh_predefined(eh)) {
        eh->handles--;
        eh_retire_if_unused(eh);
    }
    *errhandler = NARMA_ERRHANDLER_NULL;
    return NARMA_SUCCESS;
}
