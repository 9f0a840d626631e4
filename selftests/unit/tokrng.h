/* SPDX-License-Identifier: GPL-2.0 */
/* tokrng.h - a seeded xorshift64* generator for the token-engine tests. */
#ifndef BLKISO_TOKRNG_H
#define BLKISO_TOKRNG_H

#include <stdint.h>

static inline uint64_t tokrng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* uniform in [lo, hi] */
static inline int64_t tokrng_range(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(tokrng_next(s) % (uint64_t)(hi - lo + 1));
}

#endif /* BLKISO_TOKRNG_H */
