// SPDX-License-Identifier: GPL-2.0
/*
 * bucket_fuzz.c - libFuzzer target for the token-bucket engine: the input
 * is a random sequence of calls into bucket.c, admit.c, dispense.c and
 * tokadapt.c, with random times, costs and parameters.  After every call
 * the invariants are checked; a violation traps:
 *  - every bucket: tokens <= max and the accounting identity
 *    tokens - t0 == added - charged + refunded - dropped - given + taken;
 *  - class policies: buckets (no capacity drops) lost exactly what the
 *    tickets hold, live plus retired;
 *  - dispense: tokens in the global bucket plus all locals equal the start
 *    plus refill minus drops minus charges plus refunds, whichever CPU
 *    completes; local got/returned match global given/taken;
 *  - ready_at: the bucket admits at the returned time and not 1 ns before;
 *  - tokadapt: initial deduction >= 1, active mode request or work.
 * ASan and UBSan catch overflow and out-of-bounds in the core itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "bucket.h"
#include "admit.h"
#include "dispense.h"
#include "tokadapt.h"

#define CHECK(c)	do { if (!(c)) __builtin_trap(); } while (0)

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t get(struct in *in, int bytes)
{
	uint64_t v = 0;

	while (bytes-- && in->n) {
		v = (v << 8) | *in->p++;
		in->n--;
	}
	return v;
}

static s64 sget(struct in *in, int bytes, s64 lo, s64 hi)
{
	return lo + (s64)(get(in, bytes) % (uint64_t)(hi - lo + 1));
}

static s64 delta(const struct bi_bucket *b)
{
	return (s64)(b->added - b->charged + b->refunded - b->dropped -
		     b->given + b->taken);
}

static void check_bucket(const struct bi_bucket *b, s64 t0)
{
	CHECK(b->tokens <= b->max_tokens);
	CHECK(b->tokens >= -BI_TOKENS_LIMIT);
	CHECK(b->rem < BI_NSEC_PER_SEC);
	CHECK(b->tokens - t0 == delta(b));
}

static void check_ready(struct bi_bucket *b, s64 min, u64 now)
{
	struct bi_bucket c = *b;
	u64 r = bi_bucket_ready_at_ns(&c, min, now);

	if (r == U64_MAX)
		return;
	c = *b;
	CHECK(bi_bucket_admissible(&c, min, r));
	if (r > now && r > b->last_ns) {
		c = *b;
		CHECK(!bi_bucket_admissible(&c, min, r - 1));
	}
}

enum { NT = 8, NCPU = 4, NB = 16 };

static struct {
	struct bi_bucket one;
	s64 one_t0;
	struct bi_bucket cls[BI_NR_CLASSES];
	s64 cls_t0[BI_NR_CLASSES];
	struct bi_ticket tk[NT];
	s64 retired;
	struct bi_policy pol;
	struct bi_global g;
	s64 g_t0;
	struct bi_local l[NCPU];
	s64 bio_init[NB];
	s64 ext;		/* dispensed straight to the fuzzer (a CPU) */
	struct bi_adapt ad;
	struct bi_modesel ms;
	struct bi_sample smp;
} st;

static void setup(struct in *in)
{
	int i;

	memset(&st, 0, sizeof(st));
	bi_bucket_init(&st.one, get(in, 5), sget(in, 3, 1, 1 << 20),
		       sget(in, 3, -(1 << 20), 1 << 20), 0);
	st.one_t0 = st.one.tokens;
	for (i = 0; i < BI_NR_CLASSES; i++) {
		bi_bucket_init(&st.cls[i], get(in, 3), BI_TOKENS_LIMIT,
			       sget(in, 2, -1000, 1000), 0);
		st.cls_t0[i] = st.cls[i].tokens;
	}
	bi_policy_priority(&st.pol, BI_CLASS_MID);
	bi_global_init(&st.g, get(in, 4), sget(in, 3, 1, 1 << 22),
		       sget(in, 3, -(1 << 10), 1 << 22), 0);
	st.g.threshold = sget(in, 1, -64, 64);
	st.g.hold_ns = get(in, 3) * 1000;
	st.g.tick_ns = get(in, 3) * 1000;
	st.g_t0 = st.g.b.tokens;
	for (i = 0; i < NCPU; i++)
		bi_local_init(&st.l[i], 0);
	for (i = 0; i < NB; i++)
		st.bio_init[i] = -1;
	bi_adapt_init(&st.ad, sget(in, 1, 1, 64), true);
	bi_mode_init(&st.ms, get(in, 1) % 3);
}

static void check_all(void)
{
	s64 lost = 0, held = st.retired, lt = 0, lc = 0, lr = 0;
	u64 got = 0, ret = 0;
	int i;

	check_bucket(&st.one, st.one_t0);
	for (i = 0; i < BI_NR_CLASSES; i++) {
		check_bucket(&st.cls[i], st.cls_t0[i]);
		CHECK(!st.cls[i].dropped);
		lost += (s64)(st.cls[i].charged - st.cls[i].refunded);
	}
	for (i = 0; i < NT; i++)
		held += bi_ticket_total(&st.tk[i]);
	CHECK(lost == held);
	check_bucket(&st.g.b, st.g_t0);
	for (i = 0; i < NCPU; i++) {
		const struct bi_local *l = &st.l[i];

		CHECK(l->tokens == (s64)(l->got - l->returned - l->charged +
					 l->refunded));
		lt += l->tokens;
		lc += (s64)l->charged;
		lr += (s64)l->refunded;
		got += l->got;
		ret += l->returned;
	}
	CHECK(got + (u64)st.ext == st.g.b.given);
	CHECK(ret == st.g.b.taken);
	CHECK(lt + st.ext + st.g.b.tokens - st.g_t0 ==
	      (s64)(st.g.b.added - st.g.b.dropped) - lc + lr);
	CHECK(st.ad.initial >= 1);
	CHECK(st.ms.active == BI_MODE_REQUEST || st.ms.active == BI_MODE_WORK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct bi_deadband db;
	u64 now = 0, retry;
	int steps = 0;

	setup(&in);
	while (in.n && steps++ < 2000) {
		u8 op = get(&in, 1);
		int k = get(&in, 1);
		s64 x = sget(&in, 3, -1000, 1 << 20);

		now += get(&in, 1) & 0x80 ? get(&in, 5) : get(&in, 2) * 1000;
		db = (struct bi_deadband){ .units = k & 3 ? 0 : k, .pct = k & 4 ? k : 0 };
		switch (op % 20) {
		case 0:
			bi_bucket_charge(&st.one, x, k & 1 ? BI_NO_FLOOR : -k * 10, now);
			break;
		case 1:
			bi_bucket_refund(&st.one, x, now);
			break;
		case 2:
			bi_bucket_correct(&st.one, k, x, &db, BI_NO_FLOOR, now);
			break;
		case 3:
			bi_bucket_retune(&st.one, get(&in, 5), get(&in, 3), now);
			break;
		case 4:
			check_ready(&st.one, sget(&in, 3, -(1 << 20), 1 << 21), now);
			break;
		case 5: {
			struct bi_ticket *t = &st.tk[k % NT];

			if (!t->nr) {
				bi_admit(st.cls, &st.pol, x, now, t);
			} else {
				st.retired += bi_ticket_total(t);
				*t = (struct bi_ticket){ 0 };
			}
			break;
		}
		case 6:
		case 7:	/* was bi_ticket_charge_to(), a chunk helper, removed */
			bi_ticket_correct(st.cls, &st.tk[k % NT], x, &db, now);
			break;
		case 8: {
			struct bi_policy p = {
				.nr_buckets = 1 + k % BI_POLICY_MAX_BUCKETS,
				.deduct = (k >> 2) & 1, .action = (k >> 3) & 1,
				.min_tokens = x % 64, .floor_tokens = BI_NO_FLOOR,
			};
			int i;

			for (i = 0; i < p.nr_buckets; i++)
				p.bucket[i] = (k + i) % BI_NR_CLASSES;
			if (op & 0x80)
				p.min_tokens = BI_MIN_TOKENS_AUTO;
			if (bi_policy_valid(&p))
				st.pol = p;	/* runtime edit, tickets in flight */
			break;
		}
		case 9:
			bi_admit_ready_at_ns(st.cls, &st.pol, x, now);
			break;
		case 10:	/* was the second hierarchy (bi_hier_*), removed */
		case 11:
		case 12:
		case 13:
		case 14: {
			int b = k % NB;

			if (st.bio_init[b] < 0) {
				s64 cost = sget(&in, 2, 0, 4096);

				if (bi_local_charge(&st.l[op % NCPU], &st.g, cost, k & 2, now, &retry))
					st.bio_init[b] = cost;
			} else {
				/* completion on any CPU */
				bi_local_correct(&st.l[op % NCPU], &st.g, st.bio_init[b],
						 sget(&in, 2, 0, 8192), &db, now);
				st.bio_init[b] = -1;
			}
			break;
		}
		case 15:
			bi_local_reclaim(&st.l[k % NCPU], &st.g, now);
			break;
		case 16:
			bi_global_set(&st.g, get(&in, 4), sget(&in, 3, 1, 1 << 22), now);
			break;
		case 17:
			st.ext += bi_global_dispense(&st.g, x, 1, x, now, &retry, NULL);
			break;
		case 18:
			bi_sample_add(&st.smp, get(&in, 3));
			break;
		default:
			bi_adapt_tick(&st.ad, &st.smp);
			bi_mode_tick(&st.ms, &st.smp, get(&in, 3));
			if (k & 1)
				bi_mode_set(&st.ms, k % 3);
			if (k & 2)
				st.smp = (struct bi_sample){ 0 };
		}
		check_all();
	}
	return 0;
}
