/*
 * Atomics and fences: the only place narma touches the memory model.
 *
 * Why the GCC/Clang __atomic builtins and not <stdatomic.h>: the objects are
 * plain integers in memory that other processes map (MPI window memory,
 * shared segments), and accumulate works on elements of user buffers. C11's
 * atomic_* functions require _Atomic-qualified objects, and casting a plain
 * pointer to an _Atomic one is not sanctioned by the standard; the builtins
 * are specified for plain objects and compile to the same instructions. The
 * memory orders are C11's, spelled __ATOMIC_*.
 *
 * Every operation names its memory order. The order only says what a single
 * operation guarantees; each call site carries a comment naming what it
 * publishes or observes and which operation it pairs with.
 *
 *   load_relaxed / store_relaxed  atomicity only, no ordering
 *   load_acq                      later accesses stay after it; pairs with a
 *                                 store_rel (or RMW) of the same object
 *   store_rel                     earlier accesses stay before it; pairs with
 *                                 a load_acq (or RMW) of the same object
 *   cas, exchange, fetch_<op>     read-modify-write, acq_rel on success
 *                                 (a failed cas is an acquire load)
 *
 * Objects must be naturally aligned: the builtins are atomic for 1, 2, 4 and
 * 8 byte objects at addresses that are multiples of their size.
 */
#ifndef NARMA_UTIL_ATOMIC_H
#define NARMA_UTIL_ATOMIC_H

#include <stdint.h>

#if !defined(__GNUC__)
#error "narma needs the GCC/Clang __atomic builtins"
#endif

/* One family of operations per width. Generated, so all widths behave the
 * same; the names read narmau_atomic_<operation>_u<bits>. */
#define NARMAU_ATOMIC_FAMILY(T, S)                                                    \
    static inline T narmau_atomic_load_relaxed_##S(const T *p)                        \
    {                                                                                 \
        return __atomic_load_n(p, __ATOMIC_RELAXED);                                  \
    }                                                                                 \
    static inline T narmau_atomic_load_acq_##S(const T *p)                            \
    {                                                                                 \
        return __atomic_load_n(p, __ATOMIC_ACQUIRE);                                  \
    }                                                                                 \
    static inline void narmau_atomic_store_relaxed_##S(T *p, T v)                     \
    {                                                                                 \
        __atomic_store_n(p, v, __ATOMIC_RELAXED);                                     \
    }                                                                                 \
    static inline void narmau_atomic_store_rel_##S(T *p, T v)                         \
    {                                                                                 \
        __atomic_store_n(p, v, __ATOMIC_RELEASE);                                     \
    }                                                                                 \
    /* Returns 1 and stores desired if *p == *expected; else 0 and *expected = *p. */ \
    static inline int narmau_atomic_cas_##S(T *p, T *expected, T desired)             \
    {                                                                                 \
        return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_ACQ_REL, \
                                           __ATOMIC_ACQUIRE);                         \
    }                                                                                 \
    static inline T narmau_atomic_exchange_##S(T *p, T v)                             \
    {                                                                                 \
        return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);                           \
    }                                                                                 \
    static inline T narmau_atomic_fetch_add_##S(T *p, T v)                            \
    {                                                                                 \
        return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);                            \
    }                                                                                 \
    static inline T narmau_atomic_fetch_and_##S(T *p, T v)                            \
    {                                                                                 \
        return __atomic_fetch_and(p, v, __ATOMIC_ACQ_REL);                            \
    }                                                                                 \
    static inline T narmau_atomic_fetch_or_##S(T *p, T v)                             \
    {                                                                                 \
        return __atomic_fetch_or(p, v, __ATOMIC_ACQ_REL);                             \
    }                                                                                 \
    static inline T narmau_atomic_fetch_xor_##S(T *p, T v)                            \
    {                                                                                 \
        return __atomic_fetch_xor(p, v, __ATOMIC_ACQ_REL);                            \
    }

NARMAU_ATOMIC_FAMILY(uint8_t, u8)
NARMAU_ATOMIC_FAMILY(uint16_t, u16)
NARMAU_ATOMIC_FAMILY(uint32_t, u32)
NARMAU_ATOMIC_FAMILY(uint64_t, u64)

#undef NARMAU_ATOMIC_FAMILY

/* Full barrier: orders everything before against everything after, including
 * store->load (the one reordering x86 does). */
static inline void narmau_atomic_fence_seq_cst(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* Acquire fence: relaxed loads before it act as acquire loads. */
static inline void narmau_atomic_fence_acq(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }

/* Release fence: relaxed stores after it act as release stores. */
static inline void narmau_atomic_fence_rel(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }

/* Spin-wait hint: lets the sibling hyperthread run and saves power; no
 * ordering. */
static inline void narmau_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#elif defined(__powerpc__) || defined(__powerpc64__)
    __asm__ __volatile__("or 27,27,27" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* NARMA_UTIL_ATOMIC_H */
