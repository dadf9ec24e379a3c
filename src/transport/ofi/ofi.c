/*
 * The ofi transport: the network half of a window whose notified accesses
 * travel as one libfabric message each.
 *
 * A window served by ofi holds an mpi sub-context and forwards to it every
 * call but the notified ones: memory, bounds, plain RMA, accumulates, flushes
 * and control words are mpi's, unchanged. What ofi adds is the notification
 * channel. A notified put of contiguous data is one fi_writedata with
 * FI_DELIVERY_COMPLETE into the target's registered window memory, carrying
 * the notification in 64 bits of remote completion data; the target learns of
 * it from its completion queue, as foMPI-NA's uGNI path does (docs/design.md,
 * "A one-message network transport"). Every other notified access (a get, an
 * accumulate, a put of non-contiguous data, a fetching atomic's note) moves its
 * data through mpi, flushes it, then sends the notification as a zero-byte
 * fi_writedata. One origin's notifications to a target thus all travel one
 * way, each complete at the target before the call returns, so their order
 * is kept.
 *
 * The 64 bits: pair (20, the target's id for this window and origin) | tag
 * (31: tag + 2^30, the counter notifications' negative tags included) | bytes
 * (13). Bytes below OFI_BYTES_LEN are the count itself; OFI_BYTES_LEN says
 * "the message's length" (a put); OFI_BYTES_BOX says "read the 8-byte count
 * the message wrote into my mailbox for you". An origin writes its mailbox at
 * a target only once the target has emptied it (an fi_read first; NARMAT_AGAIN
 * when still full, so the core drives progress and calls again).
 *
 * Before a notification, mpi's flush to that target: the data this origin
 * moved through mpi earlier (plain puts, accumulates) is complete at the
 * target when the notification is, as on the other transports.
 *
 * One endpoint per process (FI_EP_RDM, one completion queue), opened by the
 * first window that uses it and kept for the process's life, with a progress
 * thread of narma's so that a target inside an MPI call, not narma's, still
 * lands data (ofi_progress). Each window takes a range of pair ids (its size) in the process's
 * 2^20, and registers its memory and mailboxes; peers' {name, pair base,
 * memory, mailbox} are allgathered at creation. A poll drains the completion
 * queue into the windows' queues (under ofi's own mutex: window creation runs
 * outside narma's process lock) and delivers this window's.
 *
 * libfabric is loaded at run time (dlopen of libfabric.so.1: the MPI
 * library's own copy when it has loaded one, the system's otherwise), its
 * entry points bound at the ABI of the headers narma was built with
 * (dlvsym). Where it cannot be loaded, no provider offers what the channel
 * needs (RDM endpoints with FI_RMA, 8 bytes of remote completion data,
 * delivery completion, a wait descriptor), or a window is dynamic (its memory moves), the window is
 * served by mpi alone (every rank alike, said with NARMA_VERBOSE) and NARMA_Win_get_transport
 * answers "mpi". NARMA_OFI_PROVIDER names a provider (libfabric's FI_PROVIDER works too).
 */
#define _GNU_SOURCE /* dlvsym */
#include "transport/transport.h"

#include <dlfcn.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include "util/atomic.h"
#include "util/dtype.h"

#define NARMAT_OFI_LAYOUT_VERSION 1
_Static_assert(NARMAT_OFI_LAYOUT_VERSION < 256, "the layout version fits its byte");

#define OFI_PAIR_BITS  20
#define OFI_TAG_BITS   31
#define OFI_BYTES_BITS 13
#define OFI_BYTES_LEN  ((UINT64_C(1) << OFI_BYTES_BITS) - 1)
#define OFI_BYTES_BOX  (OFI_BYTES_LEN - 1)
#define OFI_TAG_BIAS   (INT64_C(1) << 30)
#define OFI_PAIRS      (UINT32_C(1) << OFI_PAIR_BITS)
#define OFI_NAME_MAX   128
_Static_assert(OFI_PAIR_BITS + OFI_TAG_BITS + OFI_BYTES_BITS == 64, "the CQ data is 64 bits");

static inline uint64_t ofi_data(uint32_t pair, int tag, uint64_t code)
{
    return (uint64_t)pair << (OFI_TAG_BITS + OFI_BYTES_BITS) |
           (uint64_t)((int64_t)tag + OFI_TAG_BIAS) << OFI_BYTES_BITS | code;
}

/* ---- libfabric, loaded at run time ------------------------------------------------------- */

static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
} fab;

/* The symbol at the version the headers' default binds to (libfabric 1.x: fi_getinfo,
 * fi_freeinfo and fi_dupinfo FABRIC_1.3, fi_fabric FABRIC_1.1), so a newer library loaded by
 * the MPI library answers with the structures these headers describe. */
static void *fab_sym(void *h, const char *name, const char *version)
{
    return dlvsym(h, name, version); /* none at that version: refused (another ABI) */
}

static int fab_load(const char **why)
{
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (h == NULL) h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        *why = "libfabric.so.1 cannot be loaded";
        return 0;
    }
    fab.getinfo = (int (*)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                           struct fi_info **))fab_sym(h, "fi_getinfo", "FABRIC_1.3");
    fab.freeinfo = (void (*)(struct fi_info *))fab_sym(h, "fi_freeinfo", "FABRIC_1.3");
    fab.dupinfo =
        (struct fi_info * (*)(const struct fi_info *)) fab_sym(h, "fi_dupinfo", "FABRIC_1.3");
    fab.fabric = (int (*)(struct fi_fabric_attr *, struct fid_fabric **, void *))fab_sym(
        h, "fi_fabric", "FABRIC_1.1");
    if (!fab.getinfo || !fab.freeinfo || !fab.dupinfo || !fab.fabric) {
        *why = "libfabric.so.1 lacks fi_getinfo, fi_freeinfo, fi_dupinfo or fi_fabric";
        return 0;
    }
    return 1;
}

/* ---- The process's endpoint ---------------------------------------------------------------- */

struct ofi_note {
    int32_t src, tag;
    int64_t bytes;
};

struct ofi_ctx;

/* A window's range of pair ids: [base, base + n), pair base + r is origin r's. */
struct ofi_range {
    uint32_t base, n;
    struct ofi_ctx *ctx;
};

/* A peer process's address, inserted once into the address vector. */
struct ofi_peer {
    size_t len;
    unsigned char name[OFI_NAME_MAX];
    fi_addr_t addr;
};

static struct {
    pthread_mutex_t mu; /* everything below, and every window's queue */
    int tried, up;
    const char *why; /* when not up */
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    pthread_t thread; /* the progress thread */
    int wait_fd;      /* cq's wait descriptor (FI_WAIT_FD), -1 when it has none */
    uint64_t max_msg; /* the provider's largest message */
    int stop;         /* MPI_Finalize began: the thread ends (ofi_finalize) */
    /* Test hook NARMA_TEST_OFI_LAZY=1: peers' entries wait here, unread, until a poll (a
     * target slow to read its queue: an origin's second large count finds its mailbox full). */
    int lazy;
    struct fi_cq_data_entry lazy_q[256];
    int lazy_n;
    int virt_addr;     /* FI_MR_VIRT_ADDR: remote addresses are virtual addresses */
    uint64_t next_key; /* requested keys, when the provider does not choose them */
    struct ofi_range *ranges;
    int nranges, capranges;
    struct ofi_peer *peers;
    int npeers, cappeers;
    int *peer_slot;    /* open addressing over peers by name: index + 1, 0 empty */
    size_t peer_slots; /* a power of two, at least twice npeers */
} ofi = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *ofi_progress(void *arg);
static int ofi_finalize(MPI_Comm self, int key, void *val, void *extra);

static int ofi_open(void)
{
    const char *why = NULL;
    if (!fab_load(&why)) {
        ofi.why = why;
        return 0;
    }
    struct fi_info *hints = fab.dupinfo(NULL);
    if (hints == NULL) {
        ofi.why = "fi_allocinfo failed";
        return 0;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = 0;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    const char *prov = getenv("NARMA_OFI_PROVIDER");
    if (prov != NULL && *prov != '\0') hints->fabric_attr->prov_name = strdup(prov);
    struct fi_info *info = NULL;
    int rc = fab.getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &info);
    fab.freeinfo(hints);
    if (rc != 0 || info == NULL) {
        ofi.why = "no libfabric provider offers RDM endpoints with RMA and delivery completion";
        return 0;
    }
    if (info->domain_attr->cq_data_size < 8) {
        fab.freeinfo(info);
        ofi.why = "the provider's remote completion data is under 8 bytes";
        return 0;
    }
    ofi.info = info;
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    if ((rc = fab.fabric(info->fabric_attr, &ofi.fabric, NULL)) ||
        (rc = fi_domain(ofi.fabric, info, &ofi.domain, NULL)) ||
        (rc = fi_av_open(ofi.domain, &ava, &ofi.av, NULL))) {
        ofi.why = "opening the libfabric fabric, domain or address vector failed";
        return 0; /* kept half open: the process does not try again */
    }
    /* The completion queue with a descriptor the progress thread can sleep on. A provider
     * without wait objects (shm's, "CQ wait not yet supported") gets a queue without one, and
     * where the descriptor cannot be had (FI_GETWAIT fails) the queue keeps its wait object
     * unused: either way the thread polls (ofi_progress). */
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD};
    ofi.wait_fd = -1;
    if (fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL) == 0) {
        if (fi_control(&ofi.cq->fid, FI_GETWAIT, &ofi.wait_fd) != 0) ofi.wait_fd = -1;
    } else {
        cqa.wait_obj = FI_WAIT_NONE;
        if ((rc = fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL))) {
            ofi.why = "opening the libfabric completion queue failed";
            return 0;
        }
    }
    if ((rc = fi_endpoint(ofi.domain, info, &ofi.ep, NULL)) ||
        (rc = fi_ep_bind(ofi.ep, &ofi.av->fid, 0)) ||
        (rc = fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_TRANSMIT | FI_RECV)) ||
        (rc = fi_enable(ofi.ep))) {
        ofi.why = "opening the libfabric endpoint failed";
        return 0; /* kept half open, as above */
    }
    if (ofi.wait_fd < 0 && narmau_verbose())
        fprintf(stderr, "narma: ofi: the completion queue has no wait descriptor: the progress "
                        "thread polls it (sleeping 10 us to 1 ms while idle)\n");
    int key = MPI_KEYVAL_INVALID;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ofi_finalize, &key, NULL) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL) != MPI_SUCCESS) {
        ofi.why = "no MPI_COMM_SELF attribute to stop the progress thread at MPI_Finalize";
        return 0;
    }
    if (pthread_create(&ofi.thread, NULL, ofi_progress, NULL) != 0) {
        ofi.why = "the progress thread could not start";
        return 0;
    }
    const char *lazy = getenv("NARMA_TEST_OFI_LAZY");
    ofi.lazy = lazy != NULL && strcmp(lazy, "1") == 0;
    ofi.virt_addr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    ofi.max_msg = info->ep_attr->max_msg_size;
    ofi.next_key = 1;
    if (narmau_verbose())
        fprintf(stderr, "narma: ofi: provider %s, fabric %s, domain %s (libfabric %u.%u)\n",
                info->fabric_attr->prov_name, info->fabric_attr->name, info->domain_attr->name,
                FI_MAJOR(info->fabric_attr->api_version), FI_MINOR(info->fabric_attr->api_version));
    return 1;
}

/* ---- Per window -------------------------------------------------------------------------- */

/* What each rank publishes at creation. */
struct ofi_pub {
    uint64_t ok, pair_base, mem_addr, mem_key, box_addr, box_key, disp_unit, credit, name_len;
    unsigned char name[OFI_NAME_MAX];
};

struct ofi_ctx {
    struct narmat_win mpi; /* the sub-context every call but the notified ones goes to */
    int chan;              /* notifications through libfabric (else everything is mpi's) */
    uint32_t pair_base;    /* my range: origin r notifies me as pair_base + r */
    struct fid_mr *mem_mr, *box_mr;
    /* Registered, 2 x size words: box[r] the count origin r left me (0: empty), box[size + r]
     * how many of origin r's notifications my poll delivered (origin r reads it for credit). */
    uint64_t *box;
    uint32_t credit; /* notifications an origin may have undelivered here (my queue's share) */
    uint64_t *sent;  /* per target: notifications I sent it */
    uint64_t *seen;  /* per target: its count of mine delivered, when I last read it */
    struct ofi_rpeer {
        fi_addr_t addr;
        uint32_t pair; /* my pair id at that rank */
        uint64_t mem_addr, mem_key, box_addr, box_key;
        uint64_t credit; /* what that rank's queue holds for me */
        MPI_Aint disp_unit;
    } * peer;
    /* Notifications drained for this window, not yet delivered (ofi.mu). */
    struct ofi_note *q;
    size_t qhead, qtail, qcap; /* qtail - qhead entries, at index % qcap */
};

static inline struct ofi_ctx *ctx_of(struct narmat_win *w) { return w->tp; }

/* Without a channel (no provider, or another rank could not open one) the window is mpi's. */
static const char *ofi_win_name(struct narmat_win *w) { return ctx_of(w)->chan ? "ofi" : "mpi"; }

static const char *ofi_target_name(struct narmat_win *w, int target)
{
    (void)target;
    return ofi_win_name(w);
}

/* Under ofi.mu. The queue holds credit x size entries, allocated at creation: no origin has
 * more than credit notifications undelivered (ofi_credit), so it never overflows. */
static int queue_push(struct ofi_ctx *c, int32_t src, int32_t tag, int64_t bytes)
{
    if (c->qtail - c->qhead == c->qcap)
        return NARMAU_ERR(NARMA_ERR_INTERN, "ofi: a notification queue overflowed");
    c->q[c->qtail++ % c->qcap] = (struct ofi_note){src, tag, bytes};
    return NARMA_SUCCESS;
}

/* The index of the range holding a pair id (under ofi.mu), -1 when none does. The ranges are
 * sorted by base (range_take), so this is a binary search: a notification costs the same
 * however many windows the process has. */
static int range_find(uint32_t pair)
{
    int lo = 0, hi = ofi.nranges; /* the range holding pair, if any, is in [lo, hi) */
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        const struct ofi_range *r = &ofi.ranges[mid];
        if (pair < r->base)
            hi = mid;
        else if (pair - r->base >= r->n)
            lo = mid + 1;
        else
            return mid;
    }
    return -1;
}

/* The window and origin of a pair id (under ofi.mu); NULL for a window already freed. */
static struct ofi_ctx *pair_owner(uint32_t pair, int32_t *src)
{
    const int i = range_find(pair);
    if (i < 0) return NULL;
    *src = (int32_t)(pair - ofi.ranges[i].base);
    return ofi.ranges[i].ctx;
}

/* A remote write with completion data has landed: queue its notification (under ofi.mu). */
static int note_arrived(const struct fi_cq_data_entry *e)
{
    const uint32_t pair = (uint32_t)(e->data >> (OFI_TAG_BITS + OFI_BYTES_BITS));
    const int32_t tag =
        (int32_t)((int64_t)((e->data >> OFI_BYTES_BITS) & ((UINT64_C(1) << OFI_TAG_BITS) - 1)) -
                  OFI_TAG_BIAS);
    const uint64_t code = e->data & OFI_BYTES_LEN;
    int32_t src = -1;
    struct ofi_ctx *c = pair_owner(pair, &src);
    if (c == NULL) return NARMA_SUCCESS; /* a window freed since: dropped with it */
    int64_t bytes = (int64_t)code;
    if (code == OFI_BYTES_LEN) bytes = (int64_t)e->len;
    if (code == OFI_BYTES_BOX) {
        bytes = (int64_t)narmau_atomic_load_acq_u64(&c->box[src]);
        narmau_atomic_store_rel_u64(&c->box[src], 0); /* the origin may write it again */
    }
    return queue_push(c, src, tag, bytes);
}

/* The test hook's entries, in arrival order, into their windows' queues (under ofi.mu). */
static void lazy_flush(void)
{
    for (int i = 0; i < ofi.lazy_n; i++)
        (void)note_arrived(&ofi.lazy_q[i]);
    ofi.lazy_n = 0;
}

static void lazy_keep(const struct fi_cq_data_entry *e)
{
    if (ofi.lazy_n == (int)(sizeof ofi.lazy_q / sizeof ofi.lazy_q[0])) lazy_flush();
    ofi.lazy_q[ofi.lazy_n++] = *e;
}

/* Entries read from the completion queue (the progress thread, under ofi.mu): notifications
 * into their windows' queues, the completions of this process's operations into the words
 * their contexts point at (1 done, OFI_FAILED | the libfabric error). */
#define OFI_FAILED UINT32_C(0x80000000)
static void cq_handle(const struct fi_cq_data_entry *e, ssize_t n)
{
    for (ssize_t i = 0; i < n; i++) {
        /* This process's operations carry a context; a peer's write into my memory has none. */
        if (e[i].op_context != NULL)
            narmau_atomic_store_rel_u32(e[i].op_context, 1);
        else if ((e[i].flags & FI_REMOTE_CQ_DATA) && ofi.lazy)
            lazy_keep(&e[i]);
        else if ((e[i].flags & FI_REMOTE_CQ_DATA) && note_arrived(&e[i]) != NARMA_SUCCESS)
            fprintf(stderr, "narma: ofi: a notification queue overflowed: one was lost\n");
    }
}

/* The queue's next error entry into the word its operation's context points at: 1 if one was
 * read, 0 if the provider gave none (the caller stops reading rather than ask again). */
static int cq_error(void)
{
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(ofi.cq, &err, 0) != 1) return 0;
    if (err.op_context != NULL)
        narmau_atomic_store_rel_u32(err.op_context,
                                    (uint32_t)(err.err ? err.err : FI_EIO) | OFI_FAILED);
    return 1;
}

/* Read the completion queue dry (under ofi.mu): reading it is also the provider's progress.
 * Returns how many entries it read. */
static ssize_t cq_drain(void)
{
    struct fi_cq_data_entry e[16];
    ssize_t got = 0;
    for (;;) {
        ssize_t n = fi_cq_read(ofi.cq, e, 16);
        if (n > 0) {
            cq_handle(e, n);
            got += n;
        } else if (n == -FI_EAVAIL && cq_error()) {
            got++;
        } else {
            return got;
        }
    }
}

/* cq_drain unless another thread is at it: 1 if it ran. */
static int ofi_try_drain(void)
{
    if (pthread_mutex_trylock(&ofi.mu) != 0) return 0;
    cq_drain();
    pthread_mutex_unlock(&ofi.mu);
    return 1;
}

/* MPI_Finalize began (MPI_COMM_SELF's attributes go first): the progress thread ends, before
 * the MPI library, and libfabric with it, may go. Windows still alive go without it. */
static int ofi_finalize(MPI_Comm self, int key, void *val, void *extra)
{
    (void)self;
    (void)key;
    (void)val;
    (void)extra;
    pthread_mutex_lock(&ofi.mu);
    const int running = ofi.up && !ofi.stop;
    ofi.stop = 1;
    pthread_mutex_unlock(&ofi.mu);
    if (running) pthread_join(ofi.thread, NULL);
    return MPI_SUCCESS;
}

/* The progress thread: the provider's progress, so that data lands and notifications queue
 * while the target computes or sits in an MPI call (providers whose own progress needs the
 * application's calls, tcp's among them, would else leave an origin's delivery-complete write
 * waiting for a target that is not in narma). It reads the queue under ofi.mu, as polls do, so
 * an entry is never held outside it, and sleeps on the queue's wait descriptor while nothing
 * happens; without one it looks again at once after entries, else after a sleep of 10 us
 * doubling to 1 ms (the application's own waits and polls read the queue themselves, so only
 * a process outside narma's notified calls waits for that sleep). */
static void *ofi_progress(void *arg)
{
    (void)arg;
    struct fid *fids[1] = {&ofi.cq->fid};
    long idle_ns = 0; /* without a wait descriptor: the sleep before the next look */
    for (;;) {
        pthread_mutex_lock(&ofi.mu);
        const int stop = ofi.stop;
        const ssize_t got = stop ? 0 : cq_drain();
        pthread_mutex_unlock(&ofi.mu);
        if (stop) return NULL;
        if (ofi.wait_fd < 0) {
            /* No descriptor to sleep on: look again at once after entries, else sleep 10 us,
             * doubling while nothing comes, up to 1 ms. */
            if (got > 0) {
                idle_ns = 0;
                continue;
            }
            idle_ns = idle_ns == 0 ? 10000 : idle_ns >= 500000 ? 1000000 : 2 * idle_ns;
            struct timespec ts = {0, idle_ns};
            (void)nanosleep(&ts, NULL);
            continue;
        }
        /* Sleep on the queue's descriptor unless something is already there to read (any other
         * answer than "again": a short sleep, never a spin). */
        int trc = fi_trywait(ofi.fabric, fids, 1);
        if (trc != -FI_EAGAIN) {
            struct pollfd pfd = {.fd = ofi.wait_fd, .events = POLLIN};
            (void)poll(&pfd, 1, trc == FI_SUCCESS ? 100 : 1);
        }
    }
}

/* Wait for one operation of this process (its context: *done), which the progress thread
 * completes. */
static int op_wait(uint32_t *done)
{
    narmau_waiter wt = {0};
    uint32_t v;
    while ((v = narmau_atomic_load_acq_u32(done)) == 0) {
        /* Drive the provider from here too, rather than wait for the thread to wake. */
        if (ofi_try_drain() && (v = narmau_atomic_load_acq_u32(done)) != 0) break;
        narmau_wait_step_keep(&wt);
    }
    if (v & OFI_FAILED)
        return NARMAU_ERR(NARMA_ERR_INTERN, "libfabric operation failed: %s (%u)",
                          strerror((int)(v & ~OFI_FAILED)), v & ~OFI_FAILED);
    return NARMA_SUCCESS;
}

/* Post an operation, retrying while the provider answers FI_EAGAIN (it needs its queue
 * drained), and wait for it. */
#define OFI_POST(done, call)                                                            \
    do {                                                                                \
        narmau_waiter wt_ = {0};                                                        \
        ssize_t prc_;                                                                   \
        while ((prc_ = (call)) == -FI_EAGAIN) {                                         \
            ofi_try_drain();                                                            \
            narmau_wait_step_keep(&wt_);                                                \
        }                                                                               \
        if (prc_ != 0) return NARMAU_ERR(NARMA_ERR_INTERN, "%s: %d", #call, (int)prc_); \
        int wrc_ = op_wait(&(done));                                                    \
        if (wrc_) return wrc_;                                                          \
    } while (0)

/* A write of len bytes from buf to (addr, key) at target carrying data: complete at the target
 * (data and its completion entry) when it returns. */
static int ofi_writedata(struct ofi_ctx *c, int target, const void *buf, size_t len, uint64_t addr,
                         uint64_t key, uint64_t data)
{
    uint32_t done = 0;
    struct iovec iov = {(void *)(uintptr_t)buf, len};
    struct fi_rma_iov riov = {addr, len, key};
    struct fi_msg_rma msg = {.msg_iov = &iov,
                             .desc = NULL,
                             .iov_count = 1,
                             .addr = c->peer[target].addr,
                             .rma_iov = &riov,
                             .rma_iov_count = 1,
                             .context = (void *)&done,
                             .data = data};
    OFI_POST(done, fi_writemsg(ofi.ep, &msg, FI_REMOTE_CQ_DATA | FI_DELIVERY_COMPLETE));
    return NARMA_SUCCESS;
}

/* Read word i of target's registered words (box) into *v: one round trip. */
static int box_read(struct ofi_ctx *c, int target, size_t i, uint64_t *v)
{
    uint32_t done = 0;
    const struct ofi_rpeer *p = &c->peer[target];
    uint64_t addr = p->box_addr + (uint64_t)i * sizeof(uint64_t);
    OFI_POST(done, fi_read(ofi.ep, v, sizeof(*v), NULL, p->addr, addr, p->box_key, (void *)&done));
    return NARMA_SUCCESS;
}

/* NARMAT_AGAIN (nothing done) while this origin has `credit` notifications undelivered at
 * target; it learns what target delivered only when it runs out (one read). */
static int ofi_credit(struct narmat_win *w, int target)
{
    struct ofi_ctx *c = ctx_of(w);
    const uint64_t credit = c->peer[target].credit;
    if (c->sent[target] - c->seen[target] < credit) return NARMA_SUCCESS;
    uint64_t v = 0;
    int rc = box_read(c, target, (size_t)w->size + (size_t)w->rank, &v);
    if (rc) return rc;
    if (v > c->sent[target]) /* never more delivered than sent: a count gone wrong */
        return NARMAU_ERR(NARMA_ERR_INTERN, "ofi: rank %d delivered %llu of my %llu notifications",
                          target, (unsigned long long)v, (unsigned long long)c->sent[target]);
    c->seen[target] = v;
    return c->sent[target] - v < credit ? NARMA_SUCCESS : NARMAT_AGAIN;
}

/* The notification of an access whose data this origin moved through mpi: mpi's flush to
 * target completes that data (and the origin's earlier accesses there), then a zero-byte
 * message, or the count in the mailbox when it does not fit the completion data (the caller
 * checked there is room: box_ready). */
static int notify_only(struct narmat_win *w, int target, int tag, int64_t bytes)
{
    struct ofi_ctx *c = ctx_of(w);
    int rc = narmat_flush(&c->mpi, target);
    if (rc) return rc;
    const struct ofi_rpeer *p = &c->peer[target];
    uint64_t v = (uint64_t)bytes;
    rc = (uint64_t)bytes < OFI_BYTES_BOX
             ? ofi_writedata(c, target, NULL, 0, p->box_addr, p->box_key,
                             ofi_data(p->pair, tag, (uint64_t)bytes))
             : ofi_writedata(c, target, &v, sizeof(v),
                             p->box_addr + (uint64_t)w->rank * sizeof(uint64_t), p->box_key,
                             ofi_data(p->pair, tag, OFI_BYTES_BOX));
    if (rc == NARMA_SUCCESS) c->sent[target]++;
    return rc;
}

/* NARMAT_AGAIN (nothing done) while target cannot take one more notification of bytes from
 * this origin: no credit left, or a count that needs the mailbox while it is full. */
static int box_ready(struct narmat_win *w, int target, int64_t bytes)
{
    int rc = ofi_credit(w, target);
    if (rc || (uint64_t)bytes < OFI_BYTES_BOX) return rc;
    uint64_t v = 1;
    if ((rc = box_read(ctx_of(w), target, (size_t)w->rank, &v))) return rc;
    return v == 0 ? NARMA_SUCCESS : NARMAT_AGAIN;
}

/* The bytes of count x type (as mpi's narmat_mpi_bytes; the core checked the access against
 * the target's window, so the product fits), and the type's description. */
static int ofi_bytes(int count, MPI_Datatype type, int64_t *bytes, const narmau_dtype **d)
{
    int rc = narmau_dtype_get(type, d);
    if (rc == NARMA_SUCCESS) *bytes = (int64_t)count * (int64_t)(*d)->size;
    return rc;
}

/* The target's bytes of an access (tcount x ttype) and room there for its notification
 * (box_ready: NARMAT_AGAIN, nothing done, when there is none yet). */
static int target_room(struct narmat_win *w, int target, int tcount, MPI_Datatype ttype,
                       int64_t *bytes)
{
    const narmau_dtype *td;
    int rc = ofi_bytes(tcount, ttype, bytes, &td);
    return rc ? rc : box_ready(w, target, *bytes);
}

/* ---- Notified accesses -------------------------------------------------------------------- */

static int ofi_put_notify(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    struct ofi_ctx *c = ctx_of(w);
    if (!c->chan)
        return narmat_put_notify(&c->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, tag);
    const narmau_dtype *od, *td;
    int64_t bytes = 0, obytes = 0;
    int rc = ofi_bytes(tcount, ttype, &bytes, &td);
    if (rc == NARMA_SUCCESS) rc = ofi_bytes(ocount, otype, &obytes, &od);
    if (rc) return rc;
    const struct ofi_rpeer *p = &c->peer[target];
    const int one = bytes > 0 && (uint64_t)bytes <= ofi.max_msg && od->contiguous &&
                    td->contiguous && od->nblocks >= 0 && td->nblocks >= 0;
    if ((rc = one ? ofi_credit(w, target) : box_ready(w, target, bytes))) return rc;
    if (!one) {
        if (bytes > 0 &&
            (rc = narmat_put(&c->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, NULL)))
            return rc;
        return notify_only(w, target, tag, bytes);
    }
    /* Earlier accesses of this origin through mpi are complete before the notification. */
    if ((rc = narmat_flush(&c->mpi, target))) return rc;
    const uint64_t off = (uint64_t)(disp * p->disp_unit + td->true_lb);
    const uint64_t code = (uint64_t)bytes < OFI_BYTES_BOX ? (uint64_t)bytes : OFI_BYTES_LEN;
    rc = ofi_writedata(c, target, (const char *)oaddr + od->true_lb, (size_t)bytes,
                       p->mem_addr + off, p->mem_key, ofi_data(p->pair, tag, code));
    if (rc == NARMA_SUCCESS) c->sent[target]++;
    return rc;
}

static int ofi_get_notify(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, int tag)
{
    struct ofi_ctx *c = ctx_of(w);
    if (!c->chan)
        return narmat_get_notify(&c->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, tag);
    int64_t bytes = 0;
    int rc = target_room(w, target, tcount, ttype, &bytes);
    if (rc) return rc;
    if (bytes > 0) {
        rc = narmat_get(&c->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, NULL);
        if (rc) return rc;
    }
    return notify_only(w, target, tag, bytes);
}

static int ofi_acc_notify(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                          int tag)
{
    struct ofi_ctx *c = ctx_of(w);
    if (!c->chan)
        return narmat_acc_notify(&c->mpi, oaddr, ocount, otype, target, disp, tcount, ttype, op,
                                 tag);
    int64_t bytes = 0;
    int rc = target_room(w, target, tcount, ttype, &bytes);
    if (rc) return rc;
    if (bytes > 0) {
        rc = narmat_acc(&c->mpi, oaddr, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, target, disp,
                        tcount, ttype, op, NULL);
        if (rc) return rc;
    }
    return notify_only(w, target, tag, bytes);
}

static int ofi_note(struct narmat_win *w, int target, int kind, int tag, int64_t bytes,
                    int (*move)(void *move_arg), void *move_arg)
{
    struct ofi_ctx *c = ctx_of(w);
    if (!c->chan) return narmat_note(&c->mpi, target, kind, tag, bytes, move, move_arg);
    int rc = box_ready(w, target, bytes);
    if (rc) return rc;
    if ((rc = move(move_arg))) return rc;
    return notify_only(w, target, tag, bytes);
}

static int ofi_poll(struct narmat_win *w, narmat_note_cb cb, void *arg)
{
    struct ofi_ctx *c = ctx_of(w);
    if (!c->chan) return narmat_poll(&c->mpi, cb, arg);
    struct ofi_note batch[32];
    /* mpi's poll too: its ring stays empty, but it is where the MPI library gets progress for
     * the accesses other ranks make through mpi to this one (MPICH's active-message path for
     * Win_create memory needs the target in MPI). */
    int delivered = narmat_poll(&c->mpi, cb, arg);
    for (int pass = 0;; pass++) {
        pthread_mutex_lock(&ofi.mu);
        /* The queue itself too: what landed is queued, whether or not the thread woke yet. */
        if (pass == 0) {
            cq_drain();
            lazy_flush();
        }
        size_t n = 0;
        while (n < 32 && c->qhead != c->qtail)
            batch[n++] = c->q[c->qhead++ % c->qcap];
        pthread_mutex_unlock(&ofi.mu);
        for (size_t i = 0; i < n; i++) {
            /* Its origin may send one more (read by that origin: ofi_credit). */
            narmau_atomic_fetch_add_u64(&c->box[w->size + batch[i].src], 1);
            cb(arg, batch[i].src, batch[i].tag, batch[i].bytes);
        }
        delivered += (int)n;
        if (n < 32) return delivered;
    }
}

/* ---- Creation and free --------------------------------------------------------------------- */

/* A free range of n pair ids (under ofi.mu), first fit; 0 when none is left. The ranges stay
 * sorted by base (pair_owner searches them), so the first gap of n is found in one pass. */
static int range_take(uint32_t n, struct ofi_ctx *c, uint32_t *base)
{
    if (n > OFI_PAIRS) return 0;
    uint32_t at = 0;
    int i = 0;
    for (; i < ofi.nranges; i++) {
        const struct ofi_range *r = &ofi.ranges[i];
        if (r->base - at >= n) break; /* the gap before range i fits (at <= r->base) */
        at = r->base + r->n;
    }
    if (at > OFI_PAIRS - n) return 0;
    if (ofi.nranges == ofi.capranges) {
        int ncap = ofi.capranges ? 2 * ofi.capranges : 16;
        struct ofi_range *nr = realloc(ofi.ranges, (size_t)ncap * sizeof(*nr));
        if (nr == NULL) return 0;
        ofi.ranges = nr;
        ofi.capranges = ncap;
    }
    memmove(&ofi.ranges[i + 1], &ofi.ranges[i], (size_t)(ofi.nranges - i) * sizeof(*ofi.ranges));
    ofi.ranges[i] = (struct ofi_range){at, n, c};
    ofi.nranges++;
    *base = at;
    return 1;
}

static void range_drop(struct ofi_ctx *c)
{
    const int i = range_find(c->pair_base);
    if (i < 0 || ofi.ranges[i].ctx != c) return; /* never taken (creation failed first) */
    memmove(&ofi.ranges[i], &ofi.ranges[i + 1],
            (size_t)(ofi.nranges - i - 1) * sizeof(*ofi.ranges));
    ofi.nranges--;
}

/* FNV-1a of an endpoint name: where peer_slot looks for it first. */
static size_t name_hash(const unsigned char *name, size_t len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++)
        h = (h ^ name[i]) * UINT64_C(0x100000001b3);
    return (size_t)(h ^ (h >> 32));
}

/* The slot of peer_slot that holds name, or the empty one where it would go. */
static size_t peer_slot_of(const unsigned char *name, size_t len)
{
    size_t i = name_hash(name, len) & (ofi.peer_slots - 1);
    for (;; i = (i + 1) & (ofi.peer_slots - 1)) {
        const int k = ofi.peer_slot[i];
        if (k == 0) return i;
        const struct ofi_peer *p = &ofi.peers[k - 1];
        if (p->len == len && memcmp(p->name, name, len) == 0) return i;
    }
}

/* peer_slot at twice its size, every peer entered again; 0 out of memory (nothing changed). */
static int peer_slots_grow(void)
{
    const size_t ncap = ofi.peer_slots ? 2 * ofi.peer_slots : 64;
    int *ns = calloc(ncap, sizeof(*ns));
    if (ns == NULL) return 0;
    free(ofi.peer_slot);
    ofi.peer_slot = ns;
    ofi.peer_slots = ncap;
    for (int k = 0; k < ofi.npeers; k++)
        ofi.peer_slot[peer_slot_of(ofi.peers[k].name, ofi.peers[k].len)] = k + 1;
    return 1;
}

/* The address-vector entry of a peer's endpoint name (under ofi.mu), inserted once. Found by
 * hash: a window of n ranks looks up n names, so creation is not quadratic in the job's size. */
static int peer_addr(const unsigned char *name, size_t len, fi_addr_t *addr)
{
    if (ofi.peer_slots == 0 && !peer_slots_grow()) return 0;
    size_t slot = peer_slot_of(name, len);
    if (ofi.peer_slot[slot] != 0) {
        *addr = ofi.peers[ofi.peer_slot[slot] - 1].addr;
        return 1;
    }
    /* A new peer: at most half the slots full after it (the probe always ends). */
    if (2 * (size_t)(ofi.npeers + 1) > ofi.peer_slots) {
        if (!peer_slots_grow()) return 0;
        slot = peer_slot_of(name, len);
    }
    if (ofi.npeers == ofi.cappeers) {
        int ncap = ofi.cappeers ? 2 * ofi.cappeers : 16;
        struct ofi_peer *np = realloc(ofi.peers, (size_t)ncap * sizeof(*np));
        if (np == NULL) return 0;
        ofi.peers = np;
        ofi.cappeers = ncap;
    }
    if (fi_av_insert(ofi.av, name, 1, addr, 0, NULL) != 1) return 0;
    struct ofi_peer *p = &ofi.peers[ofi.npeers++];
    p->len = len;
    memcpy(p->name, name, len);
    p->addr = *addr;
    ofi.peer_slot[slot] = ofi.npeers;
    return 1;
}

static int mr_reg(void *buf, size_t len, struct fid_mr **mr)
{
    static char empty;
    if (len == 0) buf = &empty, len = 1; /* a window of no memory: a mailbox-less key */
    return fi_mr_reg(ofi.domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, ofi.next_key++, 0,
                     mr, NULL) == 0;
}

/* This rank's part of the channel for window c (under ofi.mu); 0 with nothing kept. */
static int chan_open(struct narmat_win *w, struct ofi_ctx *c, struct ofi_pub *me)
{
    if (!ofi.tried) {
        ofi.tried = 1;
        ofi.up = ofi_open();
    }
    if (!ofi.up) return 0;
    size_t len = sizeof(me->name);
    if (fi_getname(&ofi.ep->fid, me->name, &len) != 0 || len > sizeof(me->name)) {
        ofi.why = "fi_getname failed";
        return 0;
    }
    me->name_len = len;
    /* The ring's capacity shared out per origin, at least 4 each (as mpi's sub-rings). */
    c->credit = w->ring_slots / (uint32_t)w->size;
    if (c->credit < 4) c->credit = 4;
    c->box = calloc(2 * (size_t)w->size, sizeof(uint64_t));
    c->sent = calloc((size_t)w->size, sizeof(uint64_t));
    c->seen = calloc((size_t)w->size, sizeof(uint64_t));
    c->qcap = (size_t)c->credit * (size_t)w->size;
    c->q = malloc(c->qcap * sizeof(*c->q));
    if (c->box == NULL || c->sent == NULL || c->seen == NULL || c->q == NULL ||
        !range_take((uint32_t)w->size, c, &c->pair_base)) {
        ofi.why = "no memory or no pair ids left for the window";
        return 0;
    }
    if (!mr_reg(w->base, (size_t)w->size_bytes, &c->mem_mr) ||
        !mr_reg(c->box, 2 * (size_t)w->size * sizeof(uint64_t), &c->box_mr)) {
        ofi.why = "fi_mr_reg failed";
        return 0;
    }
    me->pair_base = c->pair_base;
    me->mem_addr = ofi.virt_addr ? (uint64_t)(uintptr_t)w->base : 0;
    me->mem_key = fi_mr_key(c->mem_mr);
    me->box_addr = ofi.virt_addr ? (uint64_t)(uintptr_t)c->box : 0;
    me->box_key = fi_mr_key(c->box_mr);
    me->disp_unit = (uint64_t)w->disp_unit;
    me->credit = c->credit;
    return 1;
}

static void chan_close(struct ofi_ctx *c)
{
    pthread_mutex_lock(&ofi.mu);
    /* Every origin's notifications have landed (they complete on return, and the core agreed
     * on the free): read them out of the queue now, and what is queued goes with the window,
     * before its pair ids can serve another. */
    if (ofi.up) cq_drain();
    lazy_flush();
    range_drop(c);
    pthread_mutex_unlock(&ofi.mu);
    if (c->mem_mr) fi_close(&c->mem_mr->fid);
    if (c->box_mr) fi_close(&c->box_mr->fid);
    free(c->box);
    free(c->sent);
    free(c->seen);
    free(c->peer);
    free(c->q);
    c->mem_mr = c->box_mr = NULL;
    c->box = c->sent = c->seen = NULL;
    c->peer = NULL;
    c->q = NULL;
    c->chan = 0;
}

static int ofi_win_init(struct narmat_win *w, void *base, MPI_Aint size, MPI_Info info)
{
    /* One agreement for both allocations: the state (without it no rank goes on) and the
     * table of the peers' addresses (without it on some rank the window is mpi's alone). */
    struct ofi_ctx *c = calloc(1, sizeof(*c));
    struct ofi_pub *all = calloc((size_t)w->size, sizeof(*all));
    int lack[2] = {c == NULL, all == NULL}, any_lack[2] = {1, 1};
    MPI_Allreduce(lack, any_lack, 2, MPI_INT, MPI_MAX, w->comm);
    if (any_lack[0]) {
        free(c);
        free(all);
        return lack[0] ? NARMAU_ERR(NARMA_ERR_NO_MEM, "ofi state")
                       : NARMAU_ERR(NARMA_ERR_NO_MEM, "another rank could not create the window");
    }
    c->mpi = *w;
    c->mpi.ops = &narmat_mpi_ops;
    c->mpi.tp = NULL;
    c->mpi.attr_win = MPI_WIN_NULL;
    int rc = narmat_win_init(&c->mpi, base, size, info);
    if (rc) {
        free(c);
        free(all);
        return rc; /* mpi agrees on failure among every rank */
    }
    w->tp = c;
    w->base = c->mpi.base;
    w->model = c->mpi.model;
    w->attr_win = c->mpi.attr_win;
    w->attr_off = c->mpi.attr_off;
    w->may_defer = 0;

    /* The channel, on every rank or none (a rank short of memory leaves the window to mpi). */
    struct ofi_pub me = {0};
    const char *why = NULL; /* why this window goes without the channel (NARMA_VERBOSE) */
    const int want_chan = !any_lack[1] && w->flavor != MPI_WIN_FLAVOR_DYNAMIC;
    int mrc = MPI_SUCCESS;
    if (want_chan) {
        pthread_mutex_lock(&ofi.mu);
        me.ok = chan_open(w, c, &me);
        pthread_mutex_unlock(&ofi.mu);
        mrc = MPI_Allgather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, w->comm);
    } else {
        why = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? "a dynamic window's memory moves"
                                                  : "no memory for the peers' addresses";
    }
    int ok = want_chan && mrc == MPI_SUCCESS;
    for (int r = 0; ok && r < w->size; r++)
        ok = all[r].ok != 0;
    if (ok) c->peer = calloc((size_t)w->size, sizeof(*c->peer));
    pthread_mutex_lock(&ofi.mu);
    for (int r = 0; ok && r < w->size; r++) {
        struct ofi_rpeer *p = &c->peer[r];
        if (c->peer == NULL || !peer_addr(all[r].name, (size_t)all[r].name_len, &p->addr)) {
            ok = 0;
            why = "no memory or fi_av_insert failed";
            break;
        }
        p->pair = (uint32_t)all[r].pair_base + (uint32_t)w->rank;
        p->mem_addr = all[r].mem_addr;
        p->mem_key = all[r].mem_key;
        p->box_addr = all[r].box_addr;
        p->box_key = all[r].box_key;
        p->disp_unit = (MPI_Aint)all[r].disp_unit;
        p->credit = all[r].credit;
    }
    pthread_mutex_unlock(&ofi.mu);
    free(all);
    int mine = ok, every = 0;
    MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, w->comm);
    c->chan = every;
    if (!every) {
        pthread_mutex_lock(&ofi.mu);
        if (why == NULL && !mine) why = ofi.why;
        pthread_mutex_unlock(&ofi.mu);
        if (narmau_verbose() && (why != NULL || w->rank == 0))
            fprintf(stderr, "narma: ofi: window served by mpi alone: %s\n",
                    why != NULL ? why : "another rank could not open the channel");
        chan_close(c);
    }
    return NARMA_SUCCESS;
}

static int ofi_win_free(struct narmat_win *w)
{
    struct ofi_ctx *c = ctx_of(w);
    /* Every origin's notifications to this window have landed once every rank is here. */
    if (c->chan) chan_close(c); /* its registrations before mpi frees Win_allocate memory */
    int rc = narmat_win_free(&c->mpi);
    free(c);
    w->tp = NULL;
    w->attr_win = MPI_WIN_NULL;
    return rc;
}

/* ---- Everything else is mpi's -------------------------------------------------------------- */

#define SUB(w) (&ctx_of(w)->mpi)

static int ofi_attach(struct narmat_win *w, void *base, MPI_Aint size)
{
    return narmat_attach(SUB(w), base, size);
}
static int ofi_detach(struct narmat_win *w, const void *base)
{
    return narmat_detach(SUB(w), base);
}
static int ofi_check_bounds(struct narmat_win *w, int target, MPI_Aint disp, MPI_Aint lo,
                            MPI_Aint hi)
{
    return narmat_check_bounds(SUB(w), target, disp, lo, hi);
}
static int ofi_shared_query(struct narmat_win *w, int target, MPI_Aint *size, int *disp_unit,
                            void **base)
{
    return narmat_shared_query(SUB(w), target, size, disp_unit, base);
}
static int ofi_put(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                   int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq)
{
    return narmat_put(SUB(w), oaddr, ocount, otype, target, disp, tcount, ttype, mreq);
}
static int ofi_get(struct narmat_win *w, void *oaddr, int ocount, MPI_Datatype otype, int target,
                   MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Request *mreq)
{
    return narmat_get(SUB(w), oaddr, ocount, otype, target, disp, tcount, ttype, mreq);
}
static int ofi_acc(struct narmat_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                   void *raddr, int rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Request *mreq)
{
    return narmat_acc(SUB(w), oaddr, ocount, otype, raddr, rcount, rtype, target, disp, tcount,
                      ttype, op, mreq);
}
static int ofi_cas(struct narmat_win *w, const void *oaddr, const void *caddr, void *raddr,
                   MPI_Datatype type, int target, MPI_Aint disp)
{
    return narmat_cas(SUB(w), oaddr, caddr, raddr, type, target, disp);
}
static int ofi_flush(struct narmat_win *w, int target) { return narmat_flush(SUB(w), target); }
static int ofi_flush_local(struct narmat_win *w, int target)
{
    return narmat_flush_local(SUB(w), target);
}
static int ofi_sync(struct narmat_win *w) { return narmat_sync(SUB(w)); }
static int ofi_notify_prep(struct narmat_win *w, int target)
{
    return ctx_of(w)->chan ? NARMA_SUCCESS : narmat_notify_prep(SUB(w), target);
}
/* Control updates are ordered after this origin's notified accesses, which are complete at the
 * target when they return, and after its accesses through mpi by mpi itself. */
static int ofi_ctl_add(struct narmat_win *w, int target, int kind, int arg, uint64_t val)
{
    return narmat_ctl_add(SUB(w), target, kind, arg, val);
}
static int ofi_ctl_cas(struct narmat_win *w, int target, int kind, int arg, uint64_t expected,
                       uint64_t desired, uint64_t *old)
{
    return narmat_ctl_cas(SUB(w), target, kind, arg, expected, desired, old);
}
static uint64_t ofi_ctl_load(struct narmat_win *w, int kind, int arg)
{
    return narmat_ctl_load(SUB(w), kind, arg);
}

const struct narmat_ops narmat_ofi_ops = {
    .size = sizeof(struct narmat_ops),
    .layout = NARMAT_OFI_LAYOUT_VERSION,
    .name = "ofi",
    .flush_blocks = 1,
    .target_name = ofi_target_name,
    .win_name = ofi_win_name,
    .win_init = ofi_win_init,
    .win_free = ofi_win_free,
    .attach = ofi_attach,
    .detach = ofi_detach,
    .check_bounds = ofi_check_bounds,
    .shared_query = ofi_shared_query,
    .put = ofi_put,
    .get = ofi_get,
    .acc = ofi_acc,
    .cas = ofi_cas,
    .flush = ofi_flush,
    .flush_local = ofi_flush_local,
    .sync = ofi_sync,
    .put_notify = ofi_put_notify,
    .get_notify = ofi_get_notify,
    .acc_notify = ofi_acc_notify,
    .rput_notify = narmat_rput_notify_now,
    .ticket_done = narmat_ticket_none,
    .pput_prep = narmat_pput_none,
    .pput_start = narmat_pput_nostart,
    .notify_prep = ofi_notify_prep,
    .note = ofi_note,
    .poll = ofi_poll,
    .ctl_add = ofi_ctl_add,
    .ctl_cas = ofi_ctl_cas,
    .ctl_load = ofi_ctl_load,
};
