// SPDX-License-Identifier: GPL-2.0
/*
 * grammar_test.c - the key=value grammar (kmod/core/grammar.c): every key
 * round-trips; the canonical form is a fixed point; every key rejects
 * malformed, overflowing, zero/negative (where disallowed), duplicate and
 * unknown input with a reason naming the token and leaves the destination
 * byte-identical; merge and reset semantics; a fixed-seed randomized
 * format -> parse -> format test, which also checks that every random
 * merge equals a parse of the old canonical line with the new keys.
 *
 * The tables below restate doc/grammar.md key by key; a key added to the
 * core without a row here fails key_tables_cover_every_key.
 */
#include <stdio.h>
#include <string.h>
#include "conf.h"
#include "kselftest_harness.h"

enum tkind {
	TK_NUM,		/* unsigned number */
	TK_SNUM,	/* signed number */
	TK_WORD,
	TK_POLICY,
	TK_RULE,
	TK_SHIFT,	/* unit_bytes: power of two */
	TK_LOCKED,
};

struct tkey {
	const char *name;
	enum tkind kind;
	int bytes;		/* K/M/G/T accepted; 2: and whole sectors */
	s64 min, max;
	const char *unset;	/* word naming "unset", or NULL */
	const char *words[5];	/* TK_WORD */
	const char *good;	/* a valid non-default value ... */
	const char *canon;	/* ... and its canonical form */
};

#define TB	(1LL << 40)
#define CAP(n, b, hi)	{ n, TK_NUM, b, 1, hi, "max", { 0 }, "2K", "2048" }
#define NUM(n, lo, hi, g) { n, TK_NUM, 0, lo, hi, NULL, { 0 }, g, g }
#define NUMU(n, un, lo, hi, g) { n, TK_NUM, 0, lo, hi, un, { 0 }, g, g }
#define WORD(n, g, ...)	{ n, TK_WORD, 0, 0, 0, NULL, { __VA_ARGS__ }, g, g }
#define CLASS_KEYS(c, pol) \
	{ c ".units", TK_NUM, 0, 1, TB, "max", { 0 }, "300", "300" }, \
	{ c ".policy", TK_POLICY, 0, 0, 0, NULL, { 0 }, pol, pol }, \
	WORD(c ".deduct", "spill", "same", "spill"), \
	{ c ".min", TK_SNUM, 0, -TB, TB, "inherit", { 0 }, "-7", "-7" }, \
	{ c ".floor", TK_SNUM, 0, -TB, 0, "inherit", { 0 }, "-70", "-70" }, \
	WORD(c ".action", "reject", "delay", "reject")
#define LOCKED(n)	{ n, TK_LOCKED, 0, 0, 0, NULL, { 0 }, "1", "1" }
#define RULE(n, g, c)	{ n, TK_RULE, 0, 0, 0, NULL, { 0 }, g, c }

static const struct tkey tenant_keys[] = {
	{ "riops", TK_NUM, 0, 1, TB, "max", { 0 }, "500", "500" },
	{ "wiops", TK_NUM, 0, 1, TB, "max", { 0 }, "007", "7" },
	CAP("rbps", 1, 1LL << 50),
	{ "wbps", TK_NUM, 1, 1, 1LL << 50, "max", { 0 }, "10m", "10485760" },
	{ "runits", TK_NUM, 0, 1, TB, "max", { 0 }, "4000", "4000" },
	{ "wunits", TK_NUM, 0, 1, TB, "max", { 0 }, "1", "1" },
	NUMU("alloc", "none", 1, TB, "600"),
	WORD("alloc_metric", "iops", "units", "iops"),
	WORD("isolation", "strict", "wc", "strict"),
	WORD("mode", "request", "work", "request", "auto"),
	NUM("burst_ms", 1, 60000, "500"),
	NUMU("burst_limit", "auto", 1, TB, "3"),
	WORD("initial", "ewma", "1", "ewma", "exact"),
	{ "min_tokens", TK_SNUM, 0, -TB, TB, "auto", { 0 }, "-100", "-100" },
	{ "floor", TK_SNUM, 0, -TB, 0, "none", { 0 }, "-1000", "-1000" },
	NUM("deadband", 0, TB, "4"),
	NUM("latency_us", 1, 60000000, "2500"),
	NUMU("prio", "auto", 1, 3, "3"),
	NUM("slots", 1, 65535, "9"),
	NUM("lower_ticks", 1, 999, "2"),
	NUM("raise_ticks", 2, 1000, "6"),
	NUM("safety_pct", 100, 1000, "150"),
	NUM("adapt_pct", 1, 1000, "50"),
	NUM("miss_pct", 1, 100, "20"),
	NUMU("window_ticks", "auto", 1, 16, "5"),
	NUM("hover_ms", 0, 600000, "0"),
	NUM("delay_step_us", 1, 1000000, "250"),
	NUMU("delay_max_us", "auto", 1, 10000000, "20000"),
	NUM("abuse_pct", 100, 100000, "300"),
	WORD("delay_mode", "single", "spread", "single"),
	WORD("reduce_below_alloc", "1", "0", "1"),
	WORD("predictive", "1", "0", "1"),
	NUM("smoothing_pct", 1, 100, "10"),
	CLASS_KEYS("hi", "hi,lo"),
	CLASS_KEYS("mid", "lo,mid,hi"),
	CLASS_KEYS("lo", "mid"),
	{ "sys.units", TK_NUM, 0, 1, TB, "max", { 0 }, "50", "50" },
	LOCKED("sys.policy"), LOCKED("sys.deduct"), LOCKED("sys.min"),
	LOCKED("sys.floor"), LOCKED("sys.action"),
	WORD("rdef", "lo", "hi", "mid", "lo"),
	RULE("r0", "lo:rt", "lo:rt"),
	RULE("r1", "none", "none"),
	RULE("r2", "hi:read,sync,-32K", "hi:read,sync,-32768"),
	RULE("r3", "lo:1M-", "lo:1048576-"),
	RULE("r4", "mid:wzero,write,idle,be,async,4k-8K", "mid:write,wzero,async,be,idle,4096-8192"),
	RULE("r5", "hi", "hi"),
	RULE("r6", "lo:discard,0-4G", "lo:discard,-4294967296"),
	RULE("r7", "hi:other,rt,512-512", "hi:other,rt,512-512"),
};

static const struct tkey dev_keys[] = {
	{ "unit_bytes", TK_SHIFT, 1, 512, 65536, NULL, { 0 }, "1K", "1024" },
	NUM("discard_units", 1, 65536, "8"),
	NUM("write_unit_weight", 1, 16, "3"),
	NUM("tick_ms", 1, 10000, "10"),
	WORD("reject_mode", "1", "0", "1"),
	WORD("overload", "damped", "off", "damped", "simple", "ideal", "shed"),
	NUM("window_ticks", 1, 100, "20"),
	NUM("overload_pct", 1, 100, "25"),
	NUM("mult_up", 1, 100, "40"),
	NUM("mult_down", 1, 100, "1"),
	NUM("holdoff_ticks", 0, 100, "0"),
	NUM("ideal_us", 1, 10000000, "50"),
	NUM("ideal_band_us", 1, 10000000, "1000"),
	{ "shed_bytes", TK_NUM, 2, 4096, 1LL << 32, NULL, { 0 }, "1m", "1048576" },
	NUM("local_max_pct", 1, 100, "12"),
	NUMU("hold_ms", "auto", 1, 60000, "200"),
	NUMU("dispense_hold_ms", "auto", 1, 60000, "5"),
	{ "chunk_bytes", TK_NUM, 2, 4096, 1LL << 30, "off", { 0 }, "256K", "262144" },
	WORD("depth_limit", "1", "0", "1"),
};

#define NR(a)	(sizeof(a) / sizeof((a)[0]))

/* Tenant or device, behind one interface so each check runs on both. */
struct tconf {
	bool dev;
	union {
		struct bi_tenant_conf t;
		struct bi_dev_conf d;
	};
};

static void tc_init(struct tconf *c, bool dev)
{
	memset(c, 0, sizeof(*c));
	c->dev = dev;
	if (dev)
		bi_dev_conf_init(&c->d);
	else
		bi_tenant_conf_init(&c->t);
}

static int tc_parse(struct tconf *c, const char *line, bool merge,
		    struct bi_parse_err *err)
{
	u32 len = strlen(line);

	if (c->dev)
		return merge ? bi_dev_conf_merge(&c->d, line, len, err) :
			       bi_dev_conf_parse(&c->d, line, len, err);
	return merge ? bi_conf_merge(&c->t, line, len, err) :
		       bi_conf_parse(&c->t, line, len, err);
}

static int tc_format(const struct tconf *c, char *buf, u32 size)
{
	return c->dev ? bi_dev_conf_format(&c->d, buf, size) :
			bi_conf_format(&c->t, buf, size);
}

static bool tc_same(const struct tconf *a, const struct tconf *b)
{
	return a->dev ? !memcmp(&a->d, &b->d, sizeof(a->d)) :
			!memcmp(&a->t, &b->t, sizeof(a->t));
}

/*
 * format -> parse -> format on c: the parse must succeed, give a conf
 * byte-identical to c, and print the same line.  Returns 0 or a line number.
 */
static int fixed_point(const struct tconf *c, char *out, u32 size)
{
	char buf2[BI_CONF_LINE_MAX];
	struct bi_parse_err err;
	struct tconf c2;
	int n;

	n = tc_format(c, out, size);
	if (n < 0 || n >= BI_CONF_LINE_MAX)
		return __LINE__;
	tc_init(&c2, c->dev);
	if (tc_parse(&c2, out, false, &err)) {
		fprintf(stderr, "reparse '%s': %s\n", out, err.msg);
		return __LINE__;
	}
	if (!tc_same(c, &c2))
		return __LINE__;
	if (tc_format(&c2, buf2, sizeof(buf2)) != n || strcmp(out, buf2)) {
		fprintf(stderr, "'%s' != '%s'\n", out, buf2);
		return __LINE__;
	}
	return 0;
}

static int expect_errno(u32 code)
{
	switch (code) {
	case BI_PE_OVERFLOW:
	case BI_PE_RANGE:
		return -BI_ERANGE;
	case BI_PE_LOCKED:
		return -BI_EPERM;
	case BI_PE_TOO_LONG:
		return -BI_E2BIG;
	default:
		return -BI_EINVAL;
	}
}

static const char base_tenant[] =
	"riops=123 wbps=4M hi.policy=lo r5=lo:write burst_ms=77 mid.min=5";
static const char base_dev[] = "tick_ms=50 unit_bytes=4K reject_mode=1";

/*
 * line must fail with code, in both parse and merge form, with an error
 * that points at bad_token and quotes it, and *conf must not change.
 */
static int check_bad(bool dev, const char *line, const char *bad_token, u32 code)
{
	struct bi_parse_err err;
	struct tconf c, before;
	const char *at;
	int merge, rc;
	u32 qlen;

	for (merge = 0; merge < 2; merge++) {
		tc_init(&c, dev);
		if (tc_parse(&c, dev ? base_dev : base_tenant, false, NULL))
			return __LINE__;
		before = c;
		memset(&err, 0x5a, sizeof(err));
		rc = tc_parse(&c, line, merge, &err);
		if (rc != expect_errno(code) || err.code != code) {
			fprintf(stderr, "'%s': rc %d code %u, want code %u (%s)\n",
				line, rc, err.code, code, err.msg);
			return __LINE__;
		}
		if (memcmp(&c, &before, sizeof(c)))
			return __LINE__;
		if (!memchr(err.msg, '\0', sizeof(err.msg)))
			return __LINE__;
		if (!bad_token)
			continue;
		at = strstr(line, bad_token);
		if (!at || err.pos != (u32)(at - line) || err.len != strlen(bad_token)) {
			fprintf(stderr, "'%s': pos %u len %u\n", line, err.pos, err.len);
			return __LINE__;
		}
		qlen = err.len < 48 ? err.len : 48;
		if (strncmp(err.msg, bad_token, qlen) || strlen(err.msg) <= qlen + 2) {
			fprintf(stderr, "'%s': message '%s'\n", line, err.msg);
			return __LINE__;
		}
	}
	return 0;
}

/* "key=value" alone must fail with code, naming the token. */
static int bad1(bool dev, const char *key, const char *value, u32 code)
{
	char tok[256];

	snprintf(tok, sizeof(tok), "%s=%s", key, value);
	return check_bad(dev, tok, tok, code);
}

/* What a malformed value of this kind is refused as. */
static u32 malformed_code(enum tkind kind)
{
	switch (kind) {
	case TK_NUM:
	case TK_SNUM:
	case TK_SHIFT:
		return BI_PE_BAD_NUMBER;
	case TK_WORD:
		return BI_PE_BAD_WORD;
	case TK_POLICY:
		return BI_PE_BAD_LIST;
	case TK_RULE:
		return BI_PE_BAD_RULE;
	default:
		return BI_PE_LOCKED;
	}
}

static int check_key_rejects(bool dev, const struct tkey *k)
{
	u32 mal = malformed_code(k->kind);
	bool num = k->kind == TK_NUM || k->kind == TK_SNUM || k->kind == TK_SHIFT;
	char line[256], v[64];
	int r;

#define TRY(x) do { r = (x); if (r) return r; } while (0)
	if (k->kind == TK_LOCKED) {
		TRY(bad1(dev, k->name, "1", BI_PE_LOCKED));
		TRY(bad1(dev, k->name, "default", BI_PE_LOCKED));
		return 0;
	}
	/* missing and empty values */
	TRY(check_bad(dev, k->name, k->name, BI_PE_NO_VALUE));
	TRY(bad1(dev, k->name, "", BI_PE_NO_VALUE));
	/* duplicate: the second occurrence is blamed */
	snprintf(line, sizeof(line), "%s=%s  %s=default", k->name, k->good, k->name);
	snprintf(v, sizeof(v), "%s=default", k->name);
	TRY(check_bad(dev, line, v, BI_PE_DUP_KEY));
	/* unknown keys near this one */
	snprintf(line, sizeof(line), "%sx=%s", k->name, k->good);
	TRY(check_bad(dev, line, line, BI_PE_UNKNOWN_KEY));
	snprintf(line, sizeof(line), "x%s=%s", k->name, k->good);
	TRY(check_bad(dev, line, line, BI_PE_UNKNOWN_KEY));
	snprintf(line, sizeof(line), "%.*s=%s", (int)strlen(k->name) - 1, k->name, k->good);
	TRY(check_bad(dev, line, line, BI_PE_UNKNOWN_KEY));
	/* malformed */
	TRY(bad1(dev, k->name, "+1", mal));
	TRY(bad1(dev, k->name, "1junk", mal));
	TRY(bad1(dev, k->name, "bogus", mal));
	TRY(bad1(dev, k->name, "0x10", mal));
	TRY(bad1(dev, k->name, "DEFAULT", mal));
	/* overflowing */
	TRY(bad1(dev, k->name, "99999999999999999999999", num ? BI_PE_OVERFLOW : mal));
	TRY(bad1(dev, k->name, "18446744073709551616", num ? BI_PE_OVERFLOW : mal));
	if (!num)
		return 0;
	/* suffixes */
	if (k->bytes) {
		TRY(bad1(dev, k->name, "1Q", BI_PE_BAD_SUFFIX));
		TRY(bad1(dev, k->name, "99999999999T", BI_PE_OVERFLOW));
		TRY(bad1(dev, k->name, "1KB", BI_PE_BAD_NUMBER));
	} else {
		TRY(bad1(dev, k->name, "1K", BI_PE_BAD_SUFFIX));
	}
	/* range, zero, negative */
	if (k->kind == TK_SNUM) {
		snprintf(v, sizeof(v), "%lld", (long long)k->min - 1);
		TRY(bad1(dev, k->name, v, BI_PE_RANGE));
		snprintf(v, sizeof(v), "%lld", (long long)k->max + 1);
		TRY(bad1(dev, k->name, v, BI_PE_RANGE));
		TRY(bad1(dev, k->name, "-9223372036854775809", BI_PE_OVERFLOW));
		TRY(bad1(dev, k->name, "9223372036854775808", BI_PE_OVERFLOW));
		TRY(bad1(dev, k->name, "-", BI_PE_BAD_NUMBER));
		return 0;
	}
	TRY(bad1(dev, k->name, "-1", BI_PE_NEGATIVE));
	TRY(bad1(dev, k->name, "-0", BI_PE_NEGATIVE));
	if (k->min > 0)
		TRY(bad1(dev, k->name, "0", BI_PE_ZERO));
	if (k->min > 1) {
		snprintf(v, sizeof(v), "%lld", (long long)k->min - 1);
		TRY(bad1(dev, k->name, v, BI_PE_RANGE));
	}
	snprintf(v, sizeof(v), "%lld", (long long)k->max + 1);
	TRY(bad1(dev, k->name, v, BI_PE_RANGE));
	TRY(bad1(dev, k->name, "18446744073709551615", BI_PE_RANGE));
	return 0;
#undef TRY
}

static bool is_cap(const char *name)
{
	static const char *const caps[] = {
		"riops", "wiops", "rbps", "wbps", "runits", "wunits"
	};
	u32 i;

	for (i = 0; i < NR(caps); i++)
		if (!strcmp(name, caps[i]))
			return true;
	return false;
}

/* Settings a key's extreme values need so no cross-key rule trips. */
static const char *pair_for(const char *name)
{
	static const struct { const char *key, *pair; } pairs[] = {
		{ "lower_ticks", "raise_ticks=1000" },
		{ "raise_ticks", "lower_ticks=1" },
		{ "hi.floor", "hi.min=1" },
		{ "mid.floor", "mid.min=1" },
		{ "lo.floor", "lo.min=1" },
		{ "mult_up", "mult_down=1" },
		{ "mult_down", "mult_up=100" },
	};
	u32 i;

	for (i = 0; i < NR(pairs); i++)
		if (!strcmp(name, pairs[i].key))
			return pairs[i].pair;
	return NULL;
}

/* Does the canonical line out contain the whole token tok? */
static bool has_token(const char *out, const char *tok)
{
	const char *p = strstr(out, tok);
	size_t n = strlen(tok);

	while (p && ((p != out && p[-1] != ' ') || (p[n] && p[n] != ' ')))
		p = strstr(p + 1, tok);
	return p != NULL;
}

/* Does out set key at all? */
static bool has_key(const char *out, const char *key)
{
	char pre[64];
	const char *p;

	snprintf(pre, sizeof(pre), "%s=", key);
	for (p = strstr(out, pre); p; p = strstr(p + 1, pre))
		if (p == out || p[-1] == ' ')
			return true;
	return false;
}

/*
 * "key=value" (after the key's pair, if any) parses in both forms, the
 * result is a fixed point, and the key prints as canon.  canon NULL: the
 * value is the default, so the key is not printed (caps print "max");
 * canon "?": not checked.
 */
static int check_good(bool dev, const char *key, const char *value,
		      const char *canon)
{
	char line[256], want[256], out[BI_CONF_LINE_MAX];
	const char *pair = pair_for(key);
	struct bi_parse_err err;
	struct tconf c;
	int r, merge;

	for (merge = 0; merge < 2; merge++) {
		tc_init(&c, dev);
		if (merge && tc_parse(&c, dev ? base_dev : base_tenant, false, NULL))
			return __LINE__;
		snprintf(line, sizeof(line), "%s%s%s=%s", pair ? pair : "",
			 pair ? " " : "", key, value);
		if (tc_parse(&c, line, merge, &err)) {
			fprintf(stderr, "'%s': %s\n", line, err.msg);
			return __LINE__;
		}
		r = fixed_point(&c, out, sizeof(out));
		if (r)
			return r;
		if (merge || (canon && !strcmp(canon, "?")))
			continue;
		if (!canon && is_cap(key))
			canon = "max";
		snprintf(want, sizeof(want), "%s=%s", key, canon ? canon : "");
		if (canon ? !has_token(out, want) : has_key(out, key)) {
			fprintf(stderr, "'%s' -> '%s', want %s\n", line, out,
				canon ? want : "no key");
			return __LINE__;
		}
	}
	return 0;
}

static int check_key_accepts(bool dev, const struct tkey *k)
{
	char v[64];
	int r, i;

#define TRY(x) do { r = (x); if (r) return r; } while (0)
	if (k->kind == TK_LOCKED)
		return 0;
	TRY(check_good(dev, k->name, k->good, k->canon));
	TRY(check_good(dev, k->name, "default", NULL));
	if (k->unset)
		TRY(check_good(dev, k->name, k->unset, "?"));
	switch (k->kind) {
	case TK_NUM:
	case TK_SNUM:
	case TK_SHIFT:
		snprintf(v, sizeof(v), "%lld", (long long)k->min);
		TRY(check_good(dev, k->name, v, "?"));
		snprintf(v, sizeof(v), "%lld", (long long)k->max);
		TRY(check_good(dev, k->name, v, v));
		break;
	case TK_WORD:
		for (i = 0; i < 5 && k->words[i]; i++)
			TRY(check_good(dev, k->name, k->words[i], "?"));
		break;
	default:
		break;
	}
	return 0;
#undef TRY
}

static const struct tkey *find_tkey(const struct tkey *t, u32 n, const char *name)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

/* The core's key tables and these test tables name the same keys. */
TEST(key_tables_cover_every_key)
{
	u32 i;

	ASSERT_EQ(NR(tenant_keys), bi_conf_nr_keys());
	for (i = 0; i < bi_conf_nr_keys(); i++) {
		EXPECT_NE(NULL, find_tkey(tenant_keys, NR(tenant_keys), bi_conf_key_name(i))) {
			TH_LOG("no test row for tenant key %s", bi_conf_key_name(i));
		}
	}
	ASSERT_EQ(NULL, bi_conf_key_name(bi_conf_nr_keys()));
	ASSERT_EQ(NR(dev_keys), bi_dev_conf_nr_keys());
	for (i = 0; i < bi_dev_conf_nr_keys(); i++) {
		EXPECT_NE(NULL, find_tkey(dev_keys, NR(dev_keys), bi_dev_conf_key_name(i))) {
			TH_LOG("no test row for device key %s", bi_dev_conf_key_name(i));
		}
	}
}

TEST(every_tenant_key_round_trips)
{
	u32 i;

	for (i = 0; i < NR(tenant_keys); i++) {
		EXPECT_EQ(0, check_key_accepts(false, &tenant_keys[i])) {
			TH_LOG("key %s", tenant_keys[i].name);
		}
	}
}

TEST(every_device_key_round_trips)
{
	u32 i;

	for (i = 0; i < NR(dev_keys); i++) {
		EXPECT_EQ(0, check_key_accepts(true, &dev_keys[i])) {
			TH_LOG("key %s", dev_keys[i].name);
		}
	}
}

TEST(every_tenant_key_rejects_bad_values)
{
	u32 i;

	for (i = 0; i < NR(tenant_keys); i++) {
		EXPECT_EQ(0, check_key_rejects(false, &tenant_keys[i])) {
			TH_LOG("key %s", tenant_keys[i].name);
		}
	}
}

TEST(every_device_key_rejects_bad_values)
{
	u32 i;

	for (i = 0; i < NR(dev_keys); i++) {
		EXPECT_EQ(0, check_key_rejects(true, &dev_keys[i])) {
			TH_LOG("key %s", dev_keys[i].name);
		}
	}
}

/*
 * Catalogue keys blkiso does not build are refused with the reason
 * (BI_PE_UNSUPPORTED), whatever the value, and change nothing: no key is
 * accepted and ignored (doc/grammar.md, "Keys blkiso refuses").
 */
TEST(unbuilt_keys_are_refused_with_the_reason)
{
	static const struct { bool dev; const char *tok, *why; } c[] = {
		{ true, "rw_read_factor=3", "own caps" },
		{ true, "dispense_threshold=0", "hands out all it holds" },
		{ true, "refill_hist=4", "4 intervals" },
		{ false, "ideal_us=100", "device's ideal_us" },
		{ true, "overload_hint=1", "completion latencies" },
		{ true, "riops=1000", "root cgroup" },
		{ true, "wbps=1M", "root cgroup" },
	};
	struct bi_parse_err err;
	struct tconf t;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ASSERT_EQ(0, check_bad(c[i].dev, c[i].tok, c[i].tok, BI_PE_UNSUPPORTED));
		tc_init(&t, c[i].dev);
		ASSERT_NE(0, tc_parse(&t, c[i].tok, false, &err));
		EXPECT_NE(NULL, strstr(err.msg, c[i].why))
			TH_LOG("%s: %s", c[i].tok, err.msg);
	}
}

/* initial=fixed:K (S0-24): K units deducted; fixed:1 is the word "1". */
TEST(initial_fixed_k)
{
	struct bi_tenant_conf c;
	char buf[BI_CONF_LINE_MAX];

	bi_tenant_conf_init(&c);
	ASSERT_EQ(0, bi_conf_merge(&c, "initial=fixed:8", 15, NULL));
	ASSERT_EQ(BI_INITIAL_FIXED, c.initial);
	ASSERT_EQ(8U, c.initial_units);
	ASSERT_LT(0, bi_conf_format(&c, buf, sizeof(buf)));
	ASSERT_NE(NULL, strstr(buf, " initial=fixed:8"));
	ASSERT_EQ(0, bi_conf_merge(&c, "initial=exact", 13, NULL));
	ASSERT_EQ(BI_INITIAL_EXACT, c.initial);
	ASSERT_EQ(0U, c.initial_units);
	ASSERT_EQ(0, bi_conf_merge(&c, "initial=fixed:1", 15, NULL));
	ASSERT_EQ(BI_INITIAL_ONE, c.initial);
	ASSERT_EQ(0U, c.initial_units);
	ASSERT_EQ(0, bi_conf_merge(&c, "initial=fixed:1099511627776", 27, NULL));
	ASSERT_EQ(1ULL << 40, c.initial_units);
	ASSERT_EQ(0, bi_conf_merge(&c, "initial=default", 15, NULL));
	ASSERT_EQ(BI_INITIAL_EXACT, c.initial);
	ASSERT_EQ(0U, c.initial_units);
	ASSERT_EQ(0, bad1(false, "initial", "fixed:0", BI_PE_ZERO));
	ASSERT_EQ(0, bad1(false, "initial", "fixed:-3", BI_PE_NEGATIVE));
	ASSERT_EQ(0, bad1(false, "initial", "fixed:4K", BI_PE_BAD_SUFFIX));
	ASSERT_EQ(0, bad1(false, "initial", "fixed:x", BI_PE_BAD_NUMBER));
	ASSERT_EQ(0, bad1(false, "initial", "fixed:", BI_PE_BAD_WORD));
	ASSERT_EQ(0, bad1(false, "initial", "fixed:1099511627777", BI_PE_RANGE));
	ASSERT_EQ(0, bad1(false, "initial", "fixed8", BI_PE_BAD_WORD));
}

/*
 * A suffix that would carry a value past 64 bits is an overflow, not a
 * wrapped (zero or small) value; an error message shows a control byte
 * of the token as '?'.
 */
TEST(suffix_overflow_and_quoted_control_bytes)
{
	struct bi_tenant_conf c;
	struct bi_parse_err err;

	ASSERT_EQ(0, bad1(false, "rbps", "18014398509481984K", BI_PE_OVERFLOW));
	ASSERT_EQ(0, bad1(false, "rbps", "18014398509481983K", BI_PE_RANGE));
	bi_tenant_conf_init(&c);
	ASSERT_NE(0, bi_conf_merge(&c, "riops=1\x7f", 8, &err));
	EXPECT_NE(NULL, strstr(err.msg, "riops=1?")) TH_LOG("%s", err.msg);
}

/* Values valid by their syntax that a key still refuses. */
TEST(key_specific_rejects)
{
	/* unit_bytes: power of two; shed_bytes: whole sectors */
	ASSERT_EQ(0, bad1(true, "unit_bytes", "3000", BI_PE_RANGE));
	ASSERT_EQ(0, bad1(true, "unit_bytes", "256", BI_PE_RANGE));
	ASSERT_EQ(0, bad1(true, "unit_bytes", "128K", BI_PE_RANGE));
	ASSERT_EQ(0, bad1(true, "shed_bytes", "5000", BI_PE_RANGE));
	ASSERT_EQ(0, bad1(true, "reject_mode", "2", BI_PE_BAD_WORD));
	ASSERT_EQ(0, bad1(false, "mode", "Work", BI_PE_BAD_WORD));
	ASSERT_EQ(0, bad1(false, "initial", "2", BI_PE_BAD_WORD));
	ASSERT_EQ(0, bad1(false, "prio", "4", BI_PE_RANGE));
	ASSERT_EQ(0, bad1(false, "riops", "max1", BI_PE_BAD_NUMBER));
	ASSERT_EQ(0, bad1(false, "floor", "1", BI_PE_RANGE));
	/* policy lists */
	ASSERT_EQ(0, bad1(false, "hi.policy", "hi,,lo", BI_PE_BAD_LIST));
	ASSERT_EQ(0, bad1(false, "hi.policy", "hi,lo,", BI_PE_BAD_LIST));
	ASSERT_EQ(0, bad1(false, "hi.policy", ",hi", BI_PE_BAD_LIST));
	ASSERT_EQ(0, bad1(false, "hi.policy", "hi,hi", BI_PE_BAD_LIST));
	ASSERT_EQ(0, bad1(false, "hi.policy", "hi,sys", BI_PE_BAD_LIST));
	ASSERT_EQ(0, bad1(false, "lo.policy", "HI", BI_PE_BAD_LIST));
	/* rules */
	ASSERT_EQ(0, bad1(false, "r0", "sys", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "sys:read", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", ":read", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:read,", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:read,read", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:rt,rt", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:sync,async", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:flush", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:none", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:-", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:8K-4K", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:1K-,2K-", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:4G-8G", BI_PE_RANGE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:1Q-", BI_PE_BAD_SUFFIX));
	ASSERT_EQ(0, bad1(false, "r0", "hi:--5", BI_PE_NEGATIVE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:+5-", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "hi:99999999999999999999-", BI_PE_OVERFLOW));
	ASSERT_EQ(0, bad1(false, "r0", "hi:read:write", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "r0", "none:read", BI_PE_BAD_RULE));
	ASSERT_EQ(0, bad1(false, "rdef", "sys", BI_PE_BAD_WORD));
}

/* Cross-key conflicts: nothing to blame but the combination. */
TEST(conflicting_keys)
{
	ASSERT_EQ(0, check_bad(false, "floor=-5 min_tokens=-10", NULL, BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(false, "floor=-5 min_tokens=-5", NULL, BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(false, "floor=0 min_tokens=0", NULL, BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(false, "hi.floor=0 hi.min=0", NULL, BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(false, "min_tokens=-10 lo.floor=-10", NULL, BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(false, "lower_ticks=4", NULL, BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(false, "raise_ticks=3", NULL, BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(true, "mult_down=21", NULL, BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(false, "riops=5 default", "default", BI_PE_CONFLICT));
	ASSERT_EQ(0, check_bad(false, "default default", NULL, BI_PE_CONFLICT));
	/* the same pairs are fine when consistent */
	ASSERT_EQ(0, check_good(false, "floor", "-11", "-11") ? 1 : 0);
	ASSERT_EQ(0, check_good(false, "min_tokens", "auto", NULL));	/* the default */
	ASSERT_EQ(0, check_good(false, "lower_ticks", "500", "500"));
}

TEST(line_too_long_is_refused)
{
	struct bi_tenant_conf c;
	struct bi_parse_err err;
	char line[2048];
	u32 i, n = 0;

	for (i = 0; i < 6; i++)
		n += snprintf(line + n, sizeof(line) - n, "%s=1099511627776 ",
			      tenant_keys[i].name);
	n += snprintf(line + n, sizeof(line) - n,
		      "alloc=1099511627776 burst_limit=1099511627776 deadband=1099511627776 "
		      "min_tokens=-1099511627775 floor=-1099511627776 "
		      "hi.units=1099511627776 mid.units=1099511627776 lo.units=1099511627776 "
		      "r4=mid:write,wzero,async,be,idle,4294967295-4294967296 "
		      "r5=mid:write,wzero,async,be,idle,4294967295-4294967296 "
		      "r6=mid:write,wzero,async,be,idle,4294967295-4294967296 "
		      "r7=mid:write,wzero,async,be,idle,4294967295-4294967296 "
		      "r3=mid:write,wzero,async,be,idle,4294967295-4294967296 "
		      "latency_us=59999999 safety_pct=999 delay_max_us=9999999");
	ASSERT_EQ(0, check_bad(false, line, NULL, BI_PE_TOO_LONG));
	/* the whole line is at fault, not a token: position 0, length 0 */
	bi_tenant_conf_init(&c);
	ASSERT_EQ(-BI_E2BIG, bi_conf_parse(&c, line, n, &err));
	ASSERT_EQ(BI_PE_TOO_LONG, err.code);
	ASSERT_EQ(0U, err.pos);
	ASSERT_EQ(0U, err.len);
	ASSERT_STREQ("configuration too long (canonical form over 511 bytes)", err.msg);
}

/* io.max style: caps always printed, "max" lifts, K/M/G/T are powers of 1024. */
TEST(canonical_form)
{
	struct bi_tenant_conf c;
	char out[BI_CONF_LINE_MAX];

	bi_tenant_conf_init(&c);
	ASSERT_EQ(59, bi_conf_format(&c, out, sizeof(out)));
	ASSERT_STREQ("riops=max wiops=max rbps=max wbps=max runits=max wunits=max", out);
	ASSERT_EQ(0, bi_conf_parse(&c, "r2=none\twbps=1g  rbps=2K\n riops=500 hi.policy=hi,lo\n",
				   56, NULL));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=500 wiops=max rbps=2048 wbps=1073741824 runits=max wunits=max "
		     "hi.policy=hi,lo r2=none", out);
	/* key order in the input does not matter */
	ASSERT_EQ(0, bi_conf_parse(&c, "hi.policy=hi,lo riops=500 wbps=1G rbps=2k r2=none", 49, NULL));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=500 wiops=max rbps=2048 wbps=1073741824 runits=max wunits=max "
		     "hi.policy=hi,lo r2=none", out);
	/* a NUL ends the line */
	ASSERT_EQ(0, bi_conf_parse(&c, "riops=9\0garbage", 15, NULL));
	ASSERT_EQ(9ULL, c.iops[BI_DIR_READ]);
	/* an empty line (or only blanks) is all defaults */
	ASSERT_EQ(0, bi_conf_parse(&c, " \n", 2, NULL));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=max wiops=max rbps=max wbps=max runits=max wunits=max", out);
	ASSERT_EQ(0, bi_conf_parse(&c, NULL, 0, NULL));
}

TEST(format_buffer_sizes)
{
	struct bi_tenant_conf c;
	char out[16];
	int n;

	bi_tenant_conf_init(&c);
	n = bi_conf_format(&c, NULL, 0);
	ASSERT_EQ(59, n);
	memset(out, 'x', sizeof(out));
	ASSERT_EQ(-BI_E2BIG, bi_conf_format(&c, out, sizeof(out)));
	ASSERT_STREQ("riops=max wiops", out);
	ASSERT_EQ(-BI_E2BIG, bi_conf_format(&c, out, 59));
}

/* io.max-style merge: a line changes only the keys it names. */
TEST(merge_semantics)
{
	struct bi_tenant_conf c;
	struct bi_parse_err err;
	char out[BI_CONF_LINE_MAX];

	bi_tenant_conf_init(&c);
	ASSERT_EQ(0, bi_conf_parse(&c, "riops=100 wbps=1M hi.policy=hi r0=none", 38, &err));
	ASSERT_EQ(0, bi_conf_merge(&c, "riops=500", 9, &err));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=500 wiops=max rbps=max wbps=1048576 runits=max wunits=max "
		     "hi.policy=hi r0=none", out);
	/* "max" lifts a cap, "default" resets a key */
	ASSERT_EQ(0, bi_conf_merge(&c, "wbps=max hi.policy=default", 26, &err));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=500 wiops=max rbps=max wbps=max runits=max wunits=max r0=none", out);
	ASSERT_EQ(0, bi_conf_merge(&c, "r0=default", 10, &err));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=500 wiops=max rbps=max wbps=max runits=max wunits=max", out);
	/* parse (not merge) starts from defaults */
	ASSERT_EQ(0, bi_conf_parse(&c, "wiops=7", 7, &err));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=max wiops=7 rbps=max wbps=max runits=max wunits=max", out);
	/* "default" first resets everything, then the rest applies */
	ASSERT_EQ(0, bi_conf_merge(&c, "slots=4", 7, &err));
	ASSERT_EQ(0, bi_conf_merge(&c, "default riops=1", 15, &err));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=1 wiops=max rbps=max wbps=max runits=max wunits=max", out);
	ASSERT_EQ(0, bi_conf_merge(&c, "default", 7, &err));
	bi_conf_format(&c, out, sizeof(out));
	ASSERT_STREQ("riops=max wiops=max rbps=max wbps=max runits=max wunits=max", out);
	/* a merge that would conflict is refused whole; a bad token anywhere too */
	ASSERT_EQ(0, bi_conf_merge(&c, "floor=-10 riops=3", 17, &err));
	ASSERT_EQ(-BI_EINVAL, bi_conf_merge(&c, "riops=4 min_tokens=-20", 22, &err));
	ASSERT_EQ(BI_PE_CONFLICT, err.code);
	ASSERT_EQ(3ULL, c.iops[BI_DIR_READ]);
	ASSERT_EQ(-BI_EINVAL, bi_conf_merge(&c, "riops=4 wiops=4 bogus=1", 23, &err));
	ASSERT_EQ(16U, err.pos);
	ASSERT_EQ(7U, err.len);
	ASSERT_STREQ("bogus=1: unknown key", err.msg);
	ASSERT_EQ(3ULL, c.iops[BI_DIR_READ]);
	ASSERT_EQ(BI_CONF_UNLIMITED, c.iops[BI_DIR_WRITE]);
}

TEST(device_line)
{
	struct bi_dev_conf d;
	struct bi_parse_err err;
	char out[BI_CONF_LINE_MAX];

	bi_dev_conf_init(&d);
	ASSERT_EQ(0, bi_dev_conf_format(&d, out, sizeof(out)));
	ASSERT_STREQ("", out);
	ASSERT_EQ(11, d.cost.unit_shift);
	ASSERT_EQ(100U, d.tick_ms);
	ASSERT_EQ(0, bi_dev_conf_parse(&d, "reject_mode=1 unit_bytes=4K tick_ms=50", 38, &err));
	bi_dev_conf_format(&d, out, sizeof(out));
	ASSERT_STREQ("unit_bytes=4096 tick_ms=50 reject_mode=1", out);
	ASSERT_EQ(0, bi_dev_conf_merge(&d, "tick_ms=default", 15, &err));
	bi_dev_conf_format(&d, out, sizeof(out));
	ASSERT_STREQ("unit_bytes=4096 reject_mode=1", out);
	ASSERT_EQ(-BI_ERANGE, bi_dev_conf_merge(&d, "unit_bytes=3K", 13, &err));
	ASSERT_STREQ("unit_bytes=3K: out of range (not a power of two)", err.msg);
	ASSERT_EQ(-BI_ERANGE, bi_dev_conf_merge(&d, "tick_ms=10001", 13, &err));
	ASSERT_STREQ("tick_ms=10001: out of range (1..10000)", err.msg);
	ASSERT_EQ(12, d.cost.unit_shift);
}

/*
 * Every default doc/grammar.md's key tables give (the "default" column, a
 * number or a word: `max`, `auto`, `none`, ...) is the grammar's: the line
 * "key=<that default>" parses, and the canonical form, which prints a key
 * only when it differs from its default, is the one of an empty line.
 * Rows whose default is a description (class policies) and templated keys
 * (`<c>.units`) are skipped; the count read guards against a table the
 * parser no longer finds.  (cwd: the repository's top.)
 */
static int doc_default_check(bool dev, const char *key, const char *def)
{
	char line[160], want[BI_CONF_LINE_MAX], got[BI_CONF_LINE_MAX];
	struct bi_tenant_conf c;
	struct bi_dev_conf d;
	int rc;

	snprintf(line, sizeof(line), "%s=%s", key, def);
	if (dev) {
		bi_dev_conf_init(&d);
		bi_dev_conf_format(&d, want, sizeof(want));
		rc = bi_dev_conf_parse(&d, line, strlen(line), NULL);
		bi_dev_conf_format(&d, got, sizeof(got));
	} else {
		bi_tenant_conf_init(&c);
		bi_conf_format(&c, want, sizeof(want));
		rc = bi_conf_parse(&c, line, strlen(line), NULL);
		bi_conf_format(&c, got, sizeof(got));
	}
	return rc ? rc : strcmp(want, got) ? 1 : 0;
}

/* The text between the @n-th and the next '|' of a table row, trimmed of blanks and backticks. */
static bool doc_cell(const char *row, int n, char *out, size_t size)
{
	const char *p = row, *e;
	size_t len;

	while (n-- >= 0) {
		p = strchr(p, '|');
		if (!p)
			return false;
		p++;
	}
	e = strchr(p, '|');
	if (!e)
		return false;
	while (p < e && (*p == ' ' || *p == '`'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '`'))
		e--;
	len = (size_t)(e - p);
	if (len >= size)
		return false;
	memcpy(out, p, len);
	out[len] = 0;
	return true;
}

TEST(defaults_are_the_ones_grammar_md_gives)
{
	char row[4096], key[64], def[64];
	bool dev = false, table = false;
	int checked = 0;
	FILE *f = fopen("doc/grammar.md", "r");

	ASSERT_NE(NULL, f);
	while (fgets(row, sizeof(row), f)) {
		if (!strncmp(row, "## ", 3))
			dev = !strncmp(row, "## Device keys", 14);
		if (row[0] != '|') {
			table = false;
			continue;
		}
		if (!strncmp(row, "|---", 4))
			continue;
		if (!strncmp(row, "| key |", 7)) {
			table = doc_cell(row, 3, def, sizeof(def)) && !strcmp(def, "default");
			continue;
		}
		if (!table || !doc_cell(row, 0, key, sizeof(key)) ||
		    !doc_cell(row, 3, def, sizeof(def)))
			continue;
		if (strpbrk(key, "<, ") || !def[0] || strpbrk(def, " `"))
			continue;
		EXPECT_EQ(0, doc_default_check(dev, key, def)) {
			TH_LOG("%s key %s: grammar.md's default %s", dev ? "device" : "tenant",
			       key, def);
		}
		checked++;
	}
	fclose(f);
	TH_LOG("%d defaults checked", checked);
	ASSERT_LE(40, checked);
}

/* Error messages an operator sees (doc/grammar.md lists them). */
TEST(error_messages)
{
	struct bi_tenant_conf c;
	struct bi_parse_err err;
	static const struct { const char *line, *msg; } cases[] = {
		{ "riops=12x", "riops=12x: bad suffix (K/M/G/T only on byte values)" },
		{ "riops=1x2", "riops=1x2: bad number (trailing junk)" },
		{ "riops=+5", "riops=+5: bad number (leading '+')" },
		{ "riops=0", "riops=0: zero not allowed" },
		{ "riops=-5", "riops=-5: negative not allowed" },
		{ "rbps=5P", "rbps=5P: bad suffix (K, M, G or T)" },
		{ "rbps=99999999999999999999", "rbps=99999999999999999999: overflow (more than 64 bits)" },
		{ "burst_ms=70000", "burst_ms=70000: out of range (1..60000)" },
		{ "alloc=1099511627777", "alloc=1099511627777: out of range (1..1099511627776 or none)" },
		{ "floor=1", "floor=1: out of range (-1099511627776..0 or none)" },
		{ "riops=1 riops=2", "riops=2: duplicate key" },
		{ "iops=1", "iops=1: unknown key" },
		{ "riops", "riops: expected key=value" },
		{ "riops=", "riops=: empty value" },
		{ "mode=fast", "mode=fast: bad value (see doc/grammar.md)" },
		{ "hi.policy=hi,hi", "hi.policy=hi,hi: bad class list (duplicate)" },
		{ "sys.min=5", "sys.min=5: locked (the sys class policy is fixed, A-17)" },
		{ "r0=hi:huge", "r0=hi:huge: bad rule (unknown condition)" },
		{ "floor=-5 min_tokens=-5", "floor/min_tokens: conflicting keys (floor must be below the minimum)" },
		{ "lower_ticks=9", "raise_ticks/lower_ticks: conflicting keys (raise_ticks must exceed lower_ticks, S0-09)" },
		{ "r0=hi:\x01\xff", "r0=hi:??: bad rule (unknown condition)" },
		{ "riops=11111111111111111111111111111111111111111111111111111111",
		  "riops=111111111111111111111111111111111111111111...: overflow (more than 64 bits)" },
	};
	u32 i;

	for (i = 0; i < NR(cases); i++) {
		bi_tenant_conf_init(&c);
		EXPECT_GT(0, bi_conf_parse(&c, cases[i].line, strlen(cases[i].line), &err));
		EXPECT_STREQ(cases[i].msg, err.msg);
	}
	/* a NULL err is allowed */
	ASSERT_EQ(-BI_EINVAL, bi_conf_parse(&c, "x=1", 3, NULL));
}

/* ---- randomized round trip ---------------------------------------------- */

static u64 rng_state = 0x9e3779b97f4a7c15ULL;

static u64 rnd(void)
{
	/* xorshift64*, fixed seed: the same lines on every run */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static u64 rnd_below(u64 n)
{
	return n ? rnd() % n : 0;
}

static s64 rnd_range(s64 lo, s64 hi)
{
	return lo + (s64)rnd_below((u64)(hi - lo) + 1);
}

static void rnd_bytes(char *v, size_t size, s64 lo, s64 hi, bool sector)
{
	static const char sfx[] = "KMGT";
	s64 x = rnd_range(lo, hi);

	if (sector)
		x = x / 512 * 512 < lo ? lo : x / 512 * 512;
	int s = rnd_below(4);

	/* sometimes a suffixed value, when one fits the range */
	if (rnd_below(2) && (hi >> (10 * (s + 1))) >= 1) {
		s64 m = rnd_range(1, hi >> (10 * (s + 1)));

		if ((m << (10 * (s + 1))) >= lo) {
			snprintf(v, size, "%lld%c", (long long)m,
				 rnd_below(2) ? sfx[s] : sfx[s] + 32);
			return;
		}
	}
	snprintf(v, size, "%lld", (long long)x);
}

static void rnd_rule(char *v, size_t size)
{
	static const char *const conds[] = {
		"read", "write", "discard", "wzero", "other", "rt", "be", "idle",
	};
	static const char *const classes[] = { "hi", "mid", "lo" };
	size_t n;
	u32 i, used = 0;
	char sep = ':';

	if (!rnd_below(5)) {
		snprintf(v, size, "none");
		return;
	}
	n = snprintf(v, size, "%s", classes[rnd_below(3)]);
	for (i = 0; i < NR(conds); i++) {
		if (rnd_below(3))
			continue;
		n += snprintf(v + n, size - n, "%c%s", sep, conds[i]);
		sep = ',';
		used++;
	}
	if (!rnd_below(3)) {
		n += snprintf(v + n, size - n, "%c%s", sep, rnd_below(2) ? "sync" : "async");
		sep = ',';
	}
	if (!rnd_below(3)) {
		u64 a = rnd_below(1ULL << 32), b = a + rnd_below((1ULL << 32) - a + 1);

		switch (rnd_below(3)) {
		case 0:
			snprintf(v + n, size - n, "%c%llu-%llu", sep,
				 (unsigned long long)a, (unsigned long long)b);
			break;
		case 1:
			snprintf(v + n, size - n, "%c%llu-", sep, (unsigned long long)a);
			break;
		default:
			snprintf(v + n, size - n, "%c-%lluK", sep,
				 (unsigned long long)(b >> 10));
			break;
		}
	}
	(void)used;
}

static void rnd_policy(char *v, size_t size)
{
	const char *c[3] = { "hi", "mid", "lo" };
	u32 i, n = 1 + rnd_below(3);
	size_t len = 0;

	for (i = 0; i < 3; i++) {		/* shuffle */
		u32 j = i + rnd_below(3 - i);
		const char *t = c[i];

		c[i] = c[j];
		c[j] = t;
	}
	for (i = 0; i < n; i++)
		len += snprintf(v + len, size - len, "%s%s", i ? "," : "", c[i]);
}

static void rnd_value(const struct tkey *k, char *v, size_t size)
{
	u32 nw;

	if (!rnd_below(12)) {
		snprintf(v, size, "default");
		return;
	}
	if (k->unset && !rnd_below(6)) {
		snprintf(v, size, "%s", k->unset);
		return;
	}
	switch (k->kind) {
	case TK_WORD:
		for (nw = 0; nw < 5 && k->words[nw]; nw++)
			;
		snprintf(v, size, "%s", k->words[rnd_below(nw)]);
		break;
	case TK_POLICY:
		rnd_policy(v, size);
		break;
	case TK_RULE:
		rnd_rule(v, size);
		break;
	case TK_SHIFT:
		snprintf(v, size, "%lld", 512LL << rnd_below(8));
		break;
	default:
		if (k->bytes)
			rnd_bytes(v, size, k->min, k->max, k->bytes == 2);
		else if (rnd_below(4))
			/* mostly small numbers, like real configurations */
			snprintf(v, size, "%lld", (long long)rnd_range(
				k->min, k->min + (s64)bi_min_u64(k->max - k->min, 1000)));
		else
			snprintf(v, size, "%lld", (long long)rnd_range(k->min, k->max));
		break;
	}
}

/* A random line of distinct, individually valid keys, in random order. */
static void rnd_line(const struct tkey *t, u32 nt, char *line, size_t size)
{
	bool used[128] = { false };
	u32 i, nkeys = 1 + rnd_below(rnd_below(4) ? 8 : 48);
	size_t n = 0;
	char v[160];

	line[0] = '\0';
	if (!rnd_below(20))
		n += snprintf(line, size, "default ");
	for (i = 0; i < nkeys; i++) {
		u32 k = rnd_below(nt);

		if (used[k] || t[k].kind == TK_LOCKED)
			continue;
		used[k] = true;
		rnd_value(&t[k], v, sizeof(v));
		n += snprintf(line + n, size - n, "%s%s=%s", rnd_below(4) ? " " : "\t ",
			      t[k].name, v);
	}
}

/* Does line l name key k (k[0..kl))? */
static bool names_key(const char *l, const char *k, size_t kl)
{
	while (*l) {
		size_t tl;

		l += strspn(l, " \t\n");
		tl = strcspn(l, " \t\n");
		if (tl > kl && l[kl] == '=' && !strncmp(l, k, kl))
			return true;
		l += tl;
	}
	return false;
}

/*
 * The merge property: merge(C, L) == parse(format(C) without the keys L
 * names, followed by L).  Both succeed or both fail, with equal results.
 */
static int merge_equals_parse(const struct tconf *c, const char *l)
{
	char fmt[BI_CONF_LINE_MAX], line[4096];
	struct tconf m = *c, p;
	const char *q = fmt;
	size_t n = 0;
	int rm, rp;

	if (!strncmp(l + strspn(l, " \t"), "default", 7))
		return 0;		/* a reset: nothing is kept */
	tc_format(c, fmt, sizeof(fmt));
	line[0] = '\0';
	while (*q) {
		size_t tl = strcspn(q, " "), kl = strcspn(q, "=");

		if (!names_key(l, q, kl))
			n += snprintf(line + n, sizeof(line) - n, "%.*s ", (int)tl, q);
		q += tl;
		q += strspn(q, " ");
	}
	snprintf(line + n, sizeof(line) - n, "%s", l);
	rm = tc_parse(&m, l, true, NULL);
	tc_init(&p, c->dev);
	rp = tc_parse(&p, line, false, NULL);
	if (rm != rp) {
		fprintf(stderr, "merge '%s' %d vs parse '%s' %d\n", l, rm, line, rp);
		return __LINE__;
	}
	if (!rm && !tc_same(&m, &p))
		return __LINE__;
	return 0;
}

static void random_round_trips(struct __test_metadata *_metadata, bool dev,
			       const struct tkey *t, u32 nt)
{
	char line[2048], out[BI_CONF_LINE_MAX];
	u32 iter, ok = 0, conflict = 0, too_long = 0;
	struct bi_parse_err err;
	struct tconf c, before;
	int rc, merge;

	tc_init(&c, dev);
	for (iter = 0; iter < 4000; iter++) {
		rnd_line(t, nt, line, sizeof(line));
		merge = rnd_below(2);
		if (merge)
			ASSERT_EQ(0, merge_equals_parse(&c, line));
		before = c;
		rc = tc_parse(&c, line, merge, &err);
		if (rc) {
			/* only whole-line reasons can refuse individually valid keys */
			ASSERT_TRUE(err.code == BI_PE_CONFLICT || err.code == BI_PE_TOO_LONG) {
				TH_LOG("'%s': %s", line, err.msg);
			}
			ASSERT_EQ(0, memcmp(&c, &before, sizeof(c)));
			if (err.code == BI_PE_CONFLICT)
				conflict++;
			else
				too_long++;
			continue;
		}
		ok++;
		ASSERT_EQ(0, fixed_point(&c, out, sizeof(out))) {
			TH_LOG("'%s' -> '%s'", line, out);
		}
		ASSERT_LT(strlen(out), (size_t)BI_CONF_LINE_MAX);
	}
	TH_LOG("%s: %u ok, %u conflicts, %u too long", dev ? "device" : "tenant",
	       ok, conflict, too_long);
	ASSERT_GT(ok, 2500U);
}

TEST(random_tenant_round_trips)
{
	random_round_trips(_metadata, false, tenant_keys, NR(tenant_keys));
}

TEST(random_device_round_trips)
{
	random_round_trips(_metadata, true, dev_keys, NR(dev_keys));
}

TEST_HARNESS_MAIN
