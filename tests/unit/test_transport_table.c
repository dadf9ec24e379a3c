/*
 * The transport tables (src/transport/transport.h) and their version check.
 *
 * Specification:
 *   - Every transport table names itself and records the size of struct
 *     narmat_ops it was built with; narmat_ops_check accepts a table whose
 *     size is this core's sizeof(struct narmat_ops).
 *   - A table of any other size (built against another transport.h: an entry
 *     added or removed) is refused with NARMA_ERR_INTERN, and stderr says
 *     which transport and both sizes, even without NARMA_VERBOSE.
 *   - No entry is NULL: unsupported operations point at "not supported" stubs.
 */
#include "transport/transport.h"
#include "unit.h"

#include <fcntl.h>

/* Runs narmat_ops_check with stderr captured into msg. */
static int check_captured(const struct narmat_ops *ops, char *msg, size_t cap)
{
    char path[] = "/tmp/narma_unit_opsXXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) exit(1);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    int rc = narmat_ops_check(ops);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, msg, cap - 1, 0);
    msg[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return rc;
}

static void test_table(const struct narmat_ops *t, const char *name)
{
    char msg[1024], want[64];
    unit_phase("a transport's own table passes the check");
    CHECK(t->name != NULL && strcmp(t->name, name) == 0, "table is named %s", name);
    CHECK(t->size == sizeof(struct narmat_ops), "%s: size %zu, struct narmat_ops is %zu", name,
          t->size, sizeof(struct narmat_ops));
    CHECK(check_captured(t, msg, sizeof msg) == NARMA_SUCCESS && msg[0] == '\0',
          "%s: accepted silently (got '%s')", name, msg);

    unit_phase("a table of another size is refused with NARMA_ERR_INTERN and a message");
    const size_t sizes[] = {t->size - sizeof(void *), t->size + sizeof(void *), 0};
    for (int i = 0; i < 3; i++) {
        struct narmat_ops bad = *t;
        bad.size = sizes[i];
        int rc = check_captured(&bad, msg, sizeof msg);
        CHECK(rc == NARMA_ERR_INTERN, "%s with size %zu: rc %d, want NARMA_ERR_INTERN", name,
              sizes[i], rc);
        snprintf(want, sizeof want, "%zu-byte", sizes[i]);
        CHECK(strstr(msg, name) != NULL && strstr(msg, want) != NULL,
              "%s with size %zu: the message names the transport and the size: '%s'", name,
              sizes[i], msg);
    }

    unit_phase("no entry is NULL (unsupported ones are stubs)");
#define ENTRY(f) CHECK(t->f != NULL, "%s: " #f " is NULL", name)
    ENTRY(target_name);
    ENTRY(win_init);
    ENTRY(win_free);
    ENTRY(attach);
    ENTRY(detach);
    ENTRY(check_bounds);
    ENTRY(shared_query);
    ENTRY(put);
    ENTRY(get);
    ENTRY(acc);
    ENTRY(cas);
    ENTRY(flush);
    ENTRY(flush_local);
    ENTRY(sync);
    ENTRY(put_notify);
    ENTRY(get_notify);
    ENTRY(acc_notify);
    ENTRY(rput_notify);
    ENTRY(ticket_done);
    ENTRY(pput_prep);
    ENTRY(pput_start);
    ENTRY(notify_prep);
    ENTRY(note);
    ENTRY(poll);
    ENTRY(ctl_add);
    ENTRY(ctl_cas);
    ENTRY(ctl_load);
#undef ENTRY
}

int main(void)
{
    unit_begin(30);
    test_table(&narmat_shm_ops, "shm");
    test_table(&narmat_mpi_ops, "mpi");
    test_table(&narmat_hybrid_ops, "shm+mpi");
    return unit_done("test_transport_table");
}
