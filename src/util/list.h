/* Intrusive circular doubly-linked list (no allocation, O(1) unlink). */
#ifndef NARMAU_LIST_H
#define NARMAU_LIST_H
#include <stddef.h>

typedef struct narmau_dlist {
    struct narmau_dlist *next, *prev;
} narmau_dlist;

#define narmau_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

static inline void narmau_dlist_init(narmau_dlist *l) { l->next = l->prev = l; }
static inline int narmau_dlist_empty(const narmau_dlist *l) { return l->next == l; }

static inline void narmau_dlist_push_back(narmau_dlist *l, narmau_dlist *n)
{
    n->prev = l->prev;
    n->next = l;
    l->prev->next = n;
    l->prev = n;
}

static inline void narmau_dlist_remove(narmau_dlist *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = n; /* self-linked: "not on a list" */
}

#define narmau_dlist_foreach_safe(pos, tmp, head)                    \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
         (pos) = (tmp), (tmp) = (pos)->next)
#endif
