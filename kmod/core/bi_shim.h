/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bi_shim.h - the only environment the blkiso decision core sees.
 *
 * The core (kmod/core/) is freestanding C: it is compiled unchanged into
 * blkiso.ko and into the user-space unit tests and blkiso-sim.  It never
 * includes a kernel or libc header itself; this shim gives it fixed-width
 * integer types, bool, NULL and a few helpers.  Time is always passed in by
 * the caller (an injected clock, in nanoseconds), so the core never reads a
 * clock and never sleeps.
 */
#ifndef BLKISO_BI_SHIM_H
#define BLKISO_BI_SHIM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/limits.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#define S64_MAX INT64_MAX
#define S64_MIN INT64_MIN
#define U32_MAX UINT32_MAX
#define S32_MAX INT32_MAX
#endif
#endif

#define BI_NSEC_PER_SEC		1000000000ULL
#define BI_NSEC_PER_MSEC	1000000ULL
#define BI_NSEC_PER_USEC	1000ULL

/* Fixed point: fractions such as EWMA alphas and safety factors, x1024. */
#define BI_FP_SHIFT		10
#define BI_FP_ONE		(1U << BI_FP_SHIFT)

static inline u64 bi_min_u64(u64 a, u64 b) { return a < b ? a : b; }
static inline u64 bi_max_u64(u64 a, u64 b) { return a > b ? a : b; }
static inline s64 bi_min_s64(s64 a, s64 b) { return a < b ? a : b; }
static inline s64 bi_max_s64(s64 a, s64 b) { return a > b ? a : b; }

/* 64-bit division; blkiso builds for 64-bit targets only (x86_64). */
static inline u64 bi_div_u64(u64 a, u64 b) { return a / b; }
static inline u64 bi_div_round_up_u64(u64 a, u64 b) { return (a + b - 1) / b; }

/*
 * (a * b) / c without overflowing 64 bits in the product; the quotient
 * must fit in 64 bits.  The kernel has no 128-bit division (__udivti3), so
 * the core never divides a 128-bit value itself: it calls this.
 */
#ifdef __KERNEL__
#include <linux/math64.h>
static inline u64 bi_mul_div_u64(u64 a, u64 b, u64 c)
{
	return mul_u64_u64_div_u64(a, b, c);
}
#else
static inline u64 bi_mul_div_u64(u64 a, u64 b, u64 c)
{
	return (u64)(((__uint128_t)a * b) / c);
}
#endif

static inline s64 bi_abs_s64(s64 a) { return a < 0 ? -a : a; }

/*
 * The per-CPU local buckets' own accounting (got, returned, charged,
 * refunded, nr_bios, nr_slow, nr_held: the conservation identities and
 * dispense ratios the unit tests, the fuzzers and blkiso-sim check) is kept
 * by the user-space builds only: nothing in the kernel reads it, so the
 * kernel's struct bi_local has no such fields (issue 18: per-CPU bytes).
 */
#ifdef __KERNEL__
#define BI_LOCAL_ACCT		0
#else
#define BI_LOCAL_ACCT		1
#endif

/* Branch hints and out-of-line slow paths, same spelling in both builds. */
#define bi_likely(x)		__builtin_expect(!!(x), 1)
#define bi_unlikely(x)		__builtin_expect(!!(x), 0)
#ifdef __KERNEL__
#define BI_NOINLINE		noinline
#else
#define BI_ATTR(a)		__attribute__((a))
#define BI_NOINLINE		BI_ATTR(__noinline__)
#endif

/* A member that starts a cache line of its own (fields written apart from read ones). */
#ifdef __KERNEL__
#define BI_CACHE_ALIGNED	____cacheline_aligned
#else
#define BI_CACHE_ALIGNED	BI_ATTR(__aligned__(64))
#endif

/*
 * bi_lock - the one lock the core takes itself: a global (per throttle key)
 * token bucket on the dispense slow path (dispense.c).  Kernel: a spinlock
 * taken with irqsave, because completions may run in hard-IRQ context.  User
 * space: a test-and-set spinlock that yields while it waits, so 64 test
 * threads on 2 CPUs do not spin through a preempted holder's time slice.
 */
#ifdef __KERNEL__
#include <linux/spinlock.h>
struct bi_lock {
	spinlock_t sl;
};

static inline void bi_lock_init(struct bi_lock *l) { spin_lock_init(&l->sl); }

static inline unsigned long bi_lock_irqsave(struct bi_lock *l)
{
	unsigned long flags;

	spin_lock_irqsave(&l->sl, flags);
	return flags;
}

static inline void bi_unlock_irqrestore(struct bi_lock *l, unsigned long flags)
{
	spin_unlock_irqrestore(&l->sl, flags);
}
#else
#include <sched.h>
struct bi_lock {
	int held;
};

static inline void bi_lock_init(struct bi_lock *l)
{
	__atomic_store_n(&l->held, 0, __ATOMIC_RELAXED);
}

static inline unsigned long bi_lock_irqsave(struct bi_lock *l)
{
	while (__atomic_exchange_n(&l->held, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->held, __ATOMIC_RELAXED))
			sched_yield();
	return 0;
}

static inline void bi_unlock_irqrestore(struct bi_lock *l, unsigned long flags)
{
	(void)flags;
	__atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
}
#endif

/* Elements of a true array (not a pointer). */
#define BI_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Zero n bytes, padding included (struct assignment from a compound literal
 * does not promise to zero padding; configurations are compared bytewise).
 */
static inline void bi_memzero(void *p, size_t n)
{
	u8 *b = p;

	while (n--)
		*b++ = 0;
}

/*
 * Publication of an object to lockless readers (meter.h's struct
 * bi_meter_cfg): the writer fills it, then stores the pointer with release
 * semantics; a reader loads the pointer once with acquire semantics and
 * sees the whole object.  bi_read_once/bi_write_once: one word, never torn
 * or re-read (a value the tick rewrites while the I/O path reads it).
 */
#ifdef __KERNEL__
#include <asm/barrier.h>
/* pairs with bi_store_release(): the object's fields after the pointer */
#define bi_load_acquire(p)		smp_load_acquire(p)
/* pairs with bi_load_acquire(): the object's fields before the pointer */
#define bi_store_release(p, v)		smp_store_release(p, v)
#define bi_read_once(x)			READ_ONCE(x)
#define bi_write_once(x, v)		WRITE_ONCE(x, v)
#else
#define bi_load_acquire(p)		__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define bi_store_release(p, v)		__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define bi_read_once(x)			__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define bi_write_once(x, v)		__atomic_store_n(&(x), v, __ATOMIC_RELAXED)
#endif

#endif /* BLKISO_BI_SHIM_H */
