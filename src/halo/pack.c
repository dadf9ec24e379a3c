/* Strip geometry in storage order, packing and unpacking, local copies. */
#include "halo.h"
#include <assert.h>
#include <string.h>

/* One contiguous run of a strip. Halo strips are often a handful of elements
 * wide (depth 2 in x): fixed-size copies let the compiler use plain moves. */
static inline void copy_run(char *restrict d, const char *restrict s, size_t n)
{
    switch (n) {
    case 4:
        memcpy(d, s, 4);
        break;
    case 8:
        memcpy(d, s, 8);
        break;
    case 12:
        memcpy(d, s, 12);
        break;
    case 16:
        memcpy(d, s, 16);
        break;
    case 24:
        memcpy(d, s, 24);
        break;
    case 32:
        memcpy(d, s, 32);
        break;
    default:
        memcpy(d, s, n);
    }
}

/* Copy box b of field f to/from a packed buffer (to_buf selects the direction). */
static void box_copy(const narmah_plan *p, const narmah_box *b, char *field, char *buf, int to_buf)
{
    const size_t es = (size_t)p->elsize, run = (size_t)b->n[2] * es;
    char *base = field + (size_t)b->off * es;
    for (int a = 0; a < b->n[0]; a++) {
        char *row = base + (size_t)a * (size_t)b->s[0] * es;
        for (int c = 0; c < b->n[1]; c++) {
            char *src = row + (size_t)c * (size_t)b->s[1] * es;
            if (to_buf)
                copy_run(buf, src, run);
            else
                copy_run(src, buf, run);
            buf += run;
        }
    }
}

size_t narmah_box_bytes(const narmah_plan *p, const narmah_box *b)
{
    return (size_t)b->n[0] * (size_t)b->n[1] * (size_t)b->n[2] * (size_t)p->elsize;
}

int narmah_box_type(const narmah_plan *p, const narmah_box *b, MPI_Datatype *t)
{
    const MPI_Aint es = p->elsize;
    MPI_Datatype row;
    if (MPI_Type_create_hvector(b->n[1], (int)(b->n[2] * es), b->s[1] * es, MPI_BYTE, &row) !=
        MPI_SUCCESS)
        return NARMA_ERR_MPI;
    int rc = MPI_Type_create_hvector(b->n[0], 1, b->s[0] * es, row, t);
    MPI_Type_free(&row);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(t);
    return rc == MPI_SUCCESS ? NARMA_SUCCESS : NARMA_ERR_MPI;
}

void narmah_pack(const narmah_plan *p, const narmah_link *l, char *dst)
{
    const size_t fb = narmah_box_bytes(p, &l->send);
    for (int f = 0; f < p->d.nfields; f++)
        box_copy(p, &l->send, p->fields[f], dst + (size_t)f * fb, 1);
}

void narmah_unpack(const narmah_plan *p, const narmah_link *l, const char *src)
{
    const size_t fb = narmah_box_bytes(p, &l->recv);
    for (int f = 0; f < p->d.nfields; f++)
        box_copy(p, &l->recv, p->fields[f], (char *)src + (size_t)f * fb, 0);
}

/* The halo link that receives what self link l sends: the link of the opposite direction. */
static const narmah_link *self_dest(const narmah_plan *p, const narmah_link *l)
{
    const narmah_link *r = NULL;
    for (int j = 0; j < p->nlinks; j++)
        if (p->link[j].dir == narmah_opp(l->dir)) r = &p->link[j];
    return r;
}

/* One self link's strip of every field into its halo; with m (not NULL), the opposite self
 * link's too, row by row in the same pass: with a periodic direction held by one process, a
 * row's west strip and west halo lie in its first cache lines and its east strip and east halo
 * in its last (depth 2 in x), and each copy reads one end and writes the other, so two passes
 * over the field brought every such line in twice where one pass brings it in once. */
static void self_pass(const narmah_plan *p, const narmah_link *l, const narmah_link *m)
{
    const size_t es = (size_t)p->elsize, run = (size_t)l->send.n[2] * es;
    const narmah_link *r = self_dest(p, l), *q = m ? self_dest(p, m) : NULL;
    assert(r != NULL); /* the opposite direction of a self link is one too (plan.c) */
    /* Runs are a few elements wide in x-fastest layouts (depth 2: 16 bytes, one per row):
     * copy_run's fixed-size moves instead of a memmove call per run. A source strip never
     * overlaps the halo it is copied to (see narmah_self_copies). */
    const size_t ss0 = (size_t)l->send.s[0] * es, ss1 = (size_t)l->send.s[1] * es;
    const size_t rs0 = (size_t)r->recv.s[0] * es, rs1 = (size_t)r->recv.s[1] * es;
    for (int f = 0; f < p->d.nfields; f++) {
        char *fld = p->fields[f];
        const char *sb = fld + (size_t)l->send.off * es;
        char *rb = fld + (size_t)r->recv.off * es;
        /* m: same shape and strides as l (self_pair checked it). */
        const char *sb2 = m ? fld + (size_t)m->send.off * es : NULL;
        char *rb2 = m ? fld + (size_t)q->recv.off * es : NULL;
        for (int a = 0; a < l->send.n[0]; a++) {
            const size_t so = (size_t)a * ss0, ro = (size_t)a * rs0;
            for (int c = 0; c < l->send.n[1]; c++) {
                const size_t sc = so + (size_t)c * ss1, rc = ro + (size_t)c * rs1;
                copy_run(rb + rc, sb + sc, run);
                if (m) copy_run(rb2 + rc, sb2 + sc, run);
            }
        }
    }
}

static int same_box(const narmah_box *a, const narmah_box *b)
{
    for (int k = 0; k < 3; k++)
        if (a->n[k] != b->n[k] || a->s[k] != b->s[k]) return 0;
    return 1;
}

/* The self link of the direction opposite to l's, when its strips and halos have l's shape
 * and strides (both directions of one periodic axis), else NULL. */
static const narmah_link *self_pair(const narmah_plan *p, const narmah_link *l)
{
    for (int j = 0; j < p->nlinks; j++) {
        const narmah_link *m = &p->link[j];
        if (m == l || !m->self || m->dir != narmah_opp(l->dir)) continue;
        const narmah_link *r = self_dest(p, l), *q = self_dest(p, m);
        if (r != NULL && q != NULL && same_box(&l->send, &m->send) && same_box(&r->recv, &q->recv))
            return m;
    }
    return NULL;
}

/* A self link k sends my strip k to myself, stored in the halo of link
 * opp(k). Every source strip is interior (or, for one-direction plans with
 * corners, the other direction's halo, which no self copy of this plan
 * writes), so the order of the copies does not matter: the two self links of
 * one periodic axis go in one pass (self_pass). */
void narmah_self_copies(const narmah_plan *p)
{
    unsigned done = 0;
    _Static_assert(NARMAH_MAXLINKS <= 32, "done is a bit mask of links");
    for (int i = 0; i < p->nlinks; i++) {
        const narmah_link *l = &p->link[i];
        if (!l->self || (done >> i & 1)) continue;
        const narmah_link *m = self_pair(p, l);
        if (m != NULL) done |= 1u << (m - p->link);
        self_pass(p, l, m);
    }
}
