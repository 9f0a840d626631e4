// SPDX-License-Identifier: GPL-2.0
/*
 * ticker.c - keep a 1 ms timer armed in the guest during guest tests.
 *
 * In the deterministic mode (QEMU -icount shift=0,sleep=off) an idle guest's
 * clock jumps straight to its next timer.  While the guest waits for the
 * host (9p), that timer may be seconds away (or be a test's own timeout),
 * so a few waits could leap the clock by minutes.  A 1 ms ticker bounds
 * every leap to 1 ms, at a cost of a few thousand guest instructions per
 * millisecond.
 */
#include <time.h>

int main(void)
{
	const struct timespec ms = { 0, 1000000 };

	for (;;)
		nanosleep(&ms, NULL);
}
