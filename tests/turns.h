/*
 * Turns for collective calls made by several threads of a rank over distinct communicators,
 * for tests that must not make them at once (MPICH 5.0.2 fails when threads create or free
 * windows at once: docs/conformance.md). Each round, kind 0 (say, creation) is taken by threads
 * 0 .. n-1 in order, then kind 1 (free); every rank follows the same sequence, as collectives
 * over several communicators must, so the turns cannot deadlock across ranks.
 *
 *   static struct test_turns turns = TEST_TURNS_INIT(4);
 *   test_turn_wait(&turns, round, 0, t);  MPI_Win_create(...);  test_turn_next(&turns, 0);
 *
 * enabled is a mask of the kinds that take turns (TEST_TURNS_ALL: both); the calls for a kind
 * outside it return at once. With one kind enabled, its turns follow one another round after
 * round.
 */
#ifndef NARMA_TEST_TURNS_H
#define NARMA_TEST_TURNS_H

#include <pthread.h>

struct test_turns {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    long next; /* (round * 2 + kind) * nthreads + thread (one kind: round * nthreads + thread) */
    int nthreads;
    int enabled; /* kinds that take turns: bit k for kind k */
};
#define TEST_TURNS_ALL 3
#define TEST_TURNS_INIT(n)                                             \
    {                                                                  \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, (n), 3 \
    }

static inline void test_turn_wait(struct test_turns *tt, long round, int kind, int t)
{
    if (!(tt->enabled & (1 << kind))) return;
    const long step = tt->enabled == TEST_TURNS_ALL ? round * 2 + kind : round;
    pthread_mutex_lock(&tt->mutex);
    while (tt->next != step * tt->nthreads + t)
        pthread_cond_wait(&tt->cond, &tt->mutex);
    pthread_mutex_unlock(&tt->mutex);
}

static inline void test_turn_next(struct test_turns *tt, int kind)
{
    if (!(tt->enabled & (1 << kind))) return;
    pthread_mutex_lock(&tt->mutex);
    tt->next++;
    pthread_cond_broadcast(&tt->cond);
    pthread_mutex_unlock(&tt->mutex);
}

#endif
