// SPDX-License-Identifier: GPL-2.0
/*
 * grammar.c - the key=value configuration grammar (tenant and device lines),
 * its canonical form, and the defaults.  See conf.h for the contract and
 * doc/grammar.md for the reference an operator reads.
 *
 * Every key is one row of a table: name, field offset and width, kind
 * (number, word, power of two, class policy list, classifier rule), range,
 * default and the word that names its "unset" sentinel.  Parsing, the
 * "default" reset, validation of ranges, canonical printing and the
 * defaults themselves are all driven by the table, so a key cannot be
 * parseable but unprintable, or printed in a form that parses differently.
 *
 * A line is applied to a private copy; the copy is checked as a whole
 * (cross-key conflicts, canonical length) and only then copied out.  A bad
 * line therefore changes nothing.
 */
#include "conf.h"

enum bi_key_kind {
	BI_K_NUM,		/* integer field of 1, 4 or 8 bytes */
	BI_K_WORD,		/* u8 field: value = arg + index in words[] */
	BI_K_SHIFT,		/* u8 log2 field, written as a power of two */
	BI_K_POLICY,		/* class bucket list; arg = class */
	BI_K_RULE,		/* classifier rule; arg = rule index */
	BI_K_INITIAL,		/* tenant "initial": a word or "fixed:K" */
};

#define BI_KF_BYTES	0x01	/* K/M/G/T suffixes, powers of 1024 */
#define BI_KF_ALWAYS	0x02	/* printed even at its default (io.max caps) */
#define BI_KF_LOCKED	0x04	/* exists, but may not be set */
#define BI_KF_SIGNED	0x08	/* s64 field, may be negative */
#define BI_KF_SECTOR	0x10	/* multiple of 512 bytes */

#define BI_SECTOR_BYTES		512
#define BI_MAX_KEYS		128	/* size of the duplicate-key bitmap */
#define BI_ERR_TOKEN_MAX	48	/* token bytes quoted in an error message */

struct bi_key {
	const char *name;
	u16 offset;
	u8 size;
	u8 kind;
	u8 flags;
	u8 arg;
	const char *unset;		/* word for the sentinel, NULL if none */
	u64 unset_val;			/* field value meaning unset */
	s64 min, max;			/* accepted numeric range */
	u64 def;			/* default field value */
	const char *const *words;	/* BI_K_WORD: the accepted words */
	u8 nr_words;
};

struct bi_pctx {
	const char *line;
	u32 len;
	u32 tpos, tlen;			/* current token */
	struct bi_parse_err *err;
};

/*
 * A key of the catalogue that blkiso does not build: refused with the
 * reason, not accepted and ignored (doc/grammar.md says more).
 */
struct bi_refused_key {
	const char *name;
	const char *why;
};

struct bi_table {
	const struct bi_key *keys;
	u32 nr_keys;
	const struct bi_refused_key *refused;
	u32 nr_refused;
	int (*validate)(const void *conf, struct bi_pctx *ctx);
};

static const char *const bi_class_words[] = { "sys", "hi", "mid", "lo" };
static const char *const bi_rdef_words[] = { "hi", "mid", "lo" };
static const char *const bi_metric_words[] = { "units", "iops" };
static const char *const bi_isolation_words[] = { "wc", "strict" };
static const char *const bi_mode_words[] = { "work", "request", "auto" };
static const char *const bi_initial_words[] = { "1", "ewma", "exact" };
static const char *const bi_delay_mode_words[] = { "spread", "single" };
static const char *const bi_deduct_words[] = { "same", "spill" };
static const char *const bi_action_words[] = { "delay", "reject" };
static const char *const bi_bool_words[] = { "0", "1" };
static const char *const bi_overload_words[] = {
	"off", "damped", "simple", "ideal", "shed",
};
static const char *const bi_op_words[BI_NR_OPS] = {
	[BI_OP_READ] = "read", [BI_OP_WRITE] = "write",
	[BI_OP_DISCARD] = "discard", [BI_OP_WRITE_ZEROES] = "wzero",
	[BI_OP_OTHER] = "other",
};
static const char *const bi_prio_words[] = {
	[BI_PRIO_RT] = "rt", [BI_PRIO_BE] = "be", [BI_PRIO_IDLE] = "idle",
};

/* ---- small freestanding helpers ---------------------------------------- */

/* Does s[0..n) equal the NUL-terminated word? */
static bool bi_eq(const char *s, u32 n, const char *word)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (word[i] != s[i])
			return false;
	return word[n] == '\0';
}

static bool bi_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\v' || c == '\f';
}

static bool bi_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool bi_is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* An output buffer that counts what it could not store, like snprintf. */
struct bi_wr {
	char *buf;
	u32 size;
	u32 len;
};

static void bi_wr_char(struct bi_wr *w, char c)
{
	if (w->len + 1 < w->size)
		w->buf[w->len] = c;
	w->len++;
}

static void bi_wr_str(struct bi_wr *w, const char *s)
{
	while (*s)
		bi_wr_char(w, *s++);
}

static void bi_wr_u64(struct bi_wr *w, u64 v)
{
	char digits[20];
	u32 n = 0;

	do {
		digits[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		bi_wr_char(w, digits[--n]);
}

static void bi_wr_s64(struct bi_wr *w, s64 v)
{
	if (v < 0) {
		bi_wr_char(w, '-');
		bi_wr_u64(w, -(u64)v);	/* also right for S64_MIN */
	} else {
		bi_wr_u64(w, v);
	}
}

static void bi_wr_end(struct bi_wr *w)
{
	if (w->size)
		w->buf[w->len < w->size ? w->len : w->size - 1] = '\0';
}

/* ---- errors ------------------------------------------------------------- */

static int bi_errno(u32 code)
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

/* Start an error message: "<current token>: <why>". */
static struct bi_wr bi_err_begin(struct bi_pctx *ctx, u32 code, const char *why)
{
	struct bi_wr w = { NULL, 0, 0 };
	struct bi_parse_err *err = ctx->err;
	u32 i, n;

	if (!err)
		return w;
	err->code = code;
	err->pos = ctx->tpos;
	err->len = ctx->tlen;
	w.buf = err->msg;
	w.size = sizeof(err->msg);
	n = ctx->tlen < BI_ERR_TOKEN_MAX ? ctx->tlen : BI_ERR_TOKEN_MAX;
	for (i = 0; i < n; i++) {
		char c = ctx->line[ctx->tpos + i];

		bi_wr_char(&w, (c >= 0x20 && c < 0x7f) ? c : '?');
	}
	if (n < ctx->tlen)
		bi_wr_str(&w, "...");
	if (n)
		bi_wr_str(&w, ": ");
	bi_wr_str(&w, why);
	return w;
}

static int bi_fail(struct bi_pctx *ctx, u32 code, const char *why)
{
	struct bi_wr w = bi_err_begin(ctx, code, why);

	bi_wr_end(&w);
	return bi_errno(code);
}

static void bi_wr_num(struct bi_wr *w, const struct bi_key *k, s64 v)
{
	if (k->flags & BI_KF_SIGNED)
		bi_wr_s64(w, v);
	else
		bi_wr_u64(w, (u64)v);
}

static int bi_fail_range(struct bi_pctx *ctx, const struct bi_key *k)
{
	struct bi_wr w = bi_err_begin(ctx, BI_PE_RANGE, "out of range (");

	bi_wr_num(&w, k, k->min);
	bi_wr_str(&w, "..");
	bi_wr_num(&w, k, k->max);
	if (k->unset) {
		bi_wr_str(&w, " or ");
		bi_wr_str(&w, k->unset);
	}
	bi_wr_char(&w, ')');
	bi_wr_end(&w);
	return -BI_ERANGE;
}

/* A conflict between keys of the whole line: no single token to blame. */
static int bi_fail_conflict(struct bi_pctx *ctx, const char *a, const char *b,
			    const char *why)
{
	struct bi_wr w;

	ctx->tpos = 0;
	ctx->tlen = 0;
	w = bi_err_begin(ctx, BI_PE_CONFLICT, a);
	bi_wr_char(&w, '/');
	bi_wr_str(&w, b);
	bi_wr_str(&w, ": conflicting keys (");
	bi_wr_str(&w, why);
	bi_wr_char(&w, ')');
	bi_wr_end(&w);
	return -BI_EINVAL;
}

/* ---- field access ------------------------------------------------------- */

static u64 bi_get(const void *conf, const struct bi_key *k)
{
	const u8 *p = (const u8 *)conf + k->offset;

	switch (k->size) {
	case 1:
		return *p;
	case 4:
		return *(const u32 *)p;
	default:
		return *(const u64 *)p;
	}
}

static void bi_set(void *conf, const struct bi_key *k, u64 v)
{
	u8 *p = (u8 *)conf + k->offset;

	switch (k->size) {
	case 1:
		*p = (u8)v;
		break;
	case 4:
		*(u32 *)p = (u32)v;
		break;
	default:
		*(u64 *)p = v;
		break;
	}
}

static struct bi_class_conf *bi_cls(void *conf, const struct bi_key *k)
{
	return (struct bi_class_conf *)((u8 *)conf + k->offset);
}

static const struct bi_class_conf *bi_ccls(const void *conf,
					   const struct bi_key *k)
{
	return (const struct bi_class_conf *)((const u8 *)conf + k->offset);
}

static struct bi_class_rule *bi_rule(void *conf, const struct bi_key *k)
{
	return (struct bi_class_rule *)((u8 *)conf + k->offset);
}

static const struct bi_class_rule *bi_crule(const void *conf,
					    const struct bi_key *k)
{
	return (const struct bi_class_rule *)((const u8 *)conf + k->offset);
}

static void bi_class_policy_default(struct bi_class_conf *cc, u8 class)
{
	struct bi_policy p;
	u32 i;

	bi_policy_default(class, &p);
	cc->nr_buckets = p.nr_buckets;
	for (i = 0; i < BI_POLICY_MAX_BUCKETS; i++)
		cc->bucket[i] = i < p.nr_buckets ? p.bucket[i] : 0;
}

static void bi_key_set_default(void *conf, const struct bi_key *k)
{
	switch (k->kind) {
	case BI_K_POLICY:
		bi_class_policy_default(bi_cls(conf, k), k->arg);
		break;
	case BI_K_RULE:
		bi_rule_default(k->arg, bi_rule(conf, k));
		break;
	case BI_K_INITIAL:
		bi_set(conf, k, k->def);
		((struct bi_tenant_conf *)conf)->initial_units = 0;
		break;
	default:
		bi_set(conf, k, k->def);
		break;
	}
}

static bool bi_key_is_default(const void *conf, const struct bi_key *k)
{
	const struct bi_class_rule *r;
	const struct bi_class_conf *cc;
	struct bi_class_rule dr;
	struct bi_policy dp;
	u32 i;

	switch (k->kind) {
	case BI_K_POLICY:
		cc = bi_ccls(conf, k);
		bi_policy_default(k->arg, &dp);
		if (cc->nr_buckets != dp.nr_buckets)
			return false;
		for (i = 0; i < dp.nr_buckets; i++)
			if (cc->bucket[i] != dp.bucket[i])
				return false;
		return true;
	case BI_K_RULE:
		r = bi_crule(conf, k);
		bi_rule_default(k->arg, &dr);
		return r->used == dr.used && r->class == dr.class &&
		       r->op_mask == dr.op_mask && r->prio_mask == dr.prio_mask &&
		       r->sync == dr.sync && r->min_bytes == dr.min_bytes &&
		       r->max_bytes == dr.max_bytes;
	case BI_K_INITIAL:
		return bi_get(conf, k) == k->def &&
		       !((const struct bi_tenant_conf *)conf)->initial_units;
	default:
		return bi_get(conf, k) == k->def;
	}
}

/* ---- numbers ------------------------------------------------------------ */

/*
 * Parse s[0..n) as a decimal integer for key k: optional '-' on signed keys,
 * digits, and on byte keys one suffix K, M, G or T (either case, powers of
 * 1024).  No '+', no spaces, no hex, nothing after.  Then range-check.
 */
static int bi_parse_num(struct bi_pctx *ctx, const struct bi_key *k,
			const char *s, u32 n, u64 *out)
{
	static const char suffixes[] = "kmgt";
	bool neg = false;
	u32 i = 0, j;
	u64 v = 0;
	s64 sv;

	if (n && s[0] == '+')
		return bi_fail(ctx, BI_PE_BAD_NUMBER, "bad number (leading '+')");
	if (n && s[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == n || !bi_is_digit(s[i]))
		return bi_fail(ctx, BI_PE_BAD_NUMBER, "bad number");
	for (; i < n && bi_is_digit(s[i]); i++) {
		u32 d = s[i] - '0';

		if (v > (U64_MAX - d) / 10)
			return bi_fail(ctx, BI_PE_OVERFLOW, "overflow (more than 64 bits)");
		v = v * 10 + d;
	}
	if (i < n) {
		char c = s[i] | 0x20;	/* lower case for letters */

		if (i + 1 != n || !bi_is_alpha(s[i]))
			return bi_fail(ctx, BI_PE_BAD_NUMBER, "bad number (trailing junk)");
		if (!(k->flags & BI_KF_BYTES))
			return bi_fail(ctx, BI_PE_BAD_SUFFIX,
				       "bad suffix (K/M/G/T only on byte values)");
		for (j = 0; suffixes[j] && suffixes[j] != c; j++)
			;
		if (!suffixes[j])
			return bi_fail(ctx, BI_PE_BAD_SUFFIX, "bad suffix (K, M, G or T)");
		if (v > (U64_MAX >> (10 * (j + 1))))
			return bi_fail(ctx, BI_PE_OVERFLOW, "overflow (more than 64 bits)");
		v <<= 10 * (j + 1);
	}

	if (!(k->flags & BI_KF_SIGNED)) {
		if (neg)
			return bi_fail(ctx, BI_PE_NEGATIVE, "negative not allowed");
		if (!v && k->min > 0)
			return bi_fail(ctx, BI_PE_ZERO, "zero not allowed");
		if (v < (u64)k->min || v > (u64)k->max)
			return bi_fail_range(ctx, k);
	} else {
		if (v > (neg ? (u64)S64_MAX + 1 : (u64)S64_MAX))
			return bi_fail(ctx, BI_PE_OVERFLOW, "overflow (beyond 64-bit signed)");
		sv = neg ? (s64)(0 - v) : (s64)v;
		if (sv < k->min || sv > k->max)
			return bi_fail_range(ctx, k);
		v = (u64)sv;
	}
	if ((k->flags & BI_KF_SECTOR) && (v % BI_SECTOR_BYTES))
		return bi_fail(ctx, BI_PE_RANGE, "out of range (not a multiple of 512)");
	*out = v;
	return 0;
}

/* ---- class lists and rules ---------------------------------------------- */

/* "hi,mid,lo": 1..3 distinct non-SYS classes, consult order. */
static int bi_parse_policy(struct bi_pctx *ctx, struct bi_class_conf *cc,
			   const char *s, u32 n)
{
	u8 bucket[BI_POLICY_MAX_BUCKETS] = { 0 };
	u32 i = 0, start, c, nr = 0, seen = 0;

	while (i <= n) {
		start = i;
		while (i < n && s[i] != ',')
			i++;
		if (i == start)
			return bi_fail(ctx, BI_PE_BAD_LIST, "bad class list (empty element)");
		for (c = BI_CLASS_HI; c < BI_NR_CLASSES; c++)
			if (bi_eq(s + start, i - start, bi_class_words[c]))
				break;
		if (c == BI_NR_CLASSES)
			return bi_fail(ctx, BI_PE_BAD_LIST,
				       "bad class list (hi, mid or lo)");
		if (seen & (1U << c))
			return bi_fail(ctx, BI_PE_BAD_LIST, "bad class list (duplicate)");
		seen |= 1U << c;
		bucket[nr++] = (u8)c;
		i++;		/* skip ',' (or step past the end) */
	}
	cc->nr_buckets = (u8)nr;
	for (i = 0; i < BI_POLICY_MAX_BUCKETS; i++)
		cc->bucket[i] = bucket[i];
	return 0;
}

static void bi_rule_clear(struct bi_class_rule *r)
{
	bi_memzero(r, sizeof(*r));
	r->max_bytes = BI_RULE_OPEN_MAX;
}

static const struct bi_key bi_band_key = {
	.name = "band", .kind = BI_K_NUM, .flags = BI_KF_BYTES,
	.min = 0, .max = BI_RULE_BYTES_MAX,
};

/* Size band "A-B", "A-" or "-B", inclusive, bytes with optional suffix. */
static int bi_parse_band(struct bi_pctx *ctx, struct bi_class_rule *r,
			 const char *s, u32 n)
{
	u32 dash;
	u64 lo = 0, hi = BI_RULE_OPEN_MAX;
	int rc;

	for (dash = 0; dash < n && s[dash] != '-'; dash++)
		;
	if (dash == 0 && n == 1)
		return bi_fail(ctx, BI_PE_BAD_RULE, "bad rule (empty size band)");
	if (dash) {
		rc = bi_parse_num(ctx, &bi_band_key, s, dash, &lo);
		if (rc)
			return rc;
	}
	if (dash + 1 < n) {
		rc = bi_parse_num(ctx, &bi_band_key, s + dash + 1, n - dash - 1, &hi);
		if (rc)
			return rc;
	}
	if (lo > hi)
		return bi_fail(ctx, BI_PE_BAD_RULE, "bad rule (band lower bound above upper)");
	r->min_bytes = lo;
	r->max_bytes = hi;
	return 0;
}

static int bi_word_index(const char *const *words, u32 nr, const char *s, u32 n)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (words[i] && bi_eq(s, n, words[i]))
			return i;
	return -1;
}

/*
 * Rule: "none", or CLASS[:COND[,COND...]] where CLASS is hi|mid|lo and
 * COND is an op (read write discard wzero other), sync|async, an ioprio
 * class (rt be idle) or a size band.  Ops are alternatives, so are ioprio
 * classes; different kinds of condition must all hold.
 */
static int bi_parse_rule(struct bi_pctx *ctx, struct bi_class_rule *out,
			 const char *s, u32 n)
{
	struct bi_class_rule r;
	bool band = false;
	u32 i, start, cls_end;
	int c, rc;

	bi_rule_clear(&r);
	if (bi_eq(s, n, "none")) {
		*out = r;
		return 0;
	}
	for (cls_end = 0; cls_end < n && s[cls_end] != ':'; cls_end++)
		;
	c = bi_word_index(bi_class_words, BI_NR_CLASSES, s, cls_end);
	if (c <= BI_CLASS_SYS)
		return bi_fail(ctx, BI_PE_BAD_RULE,
			       "bad rule (class must be hi, mid or lo)");
	r.used = 1;
	r.class = (u8)c;
	if (cls_end == n) {
		*out = r;
		return 0;
	}
	i = cls_end + 1;
	while (i <= n) {
		const char *t;
		u32 tn;

		start = i;
		while (i < n && s[i] != ',')
			i++;
		t = s + start;
		tn = i - start;
		i++;
		if (!tn)
			return bi_fail(ctx, BI_PE_BAD_RULE, "bad rule (empty condition)");
		c = bi_word_index(bi_op_words, BI_NR_OPS, t, tn);
		if (c >= 0) {
			if (r.op_mask & (1U << c))
				return bi_fail(ctx, BI_PE_BAD_RULE,
					       "bad rule (duplicate condition)");
			r.op_mask |= 1U << c;
			continue;
		}
		c = bi_word_index(bi_prio_words, BI_PRIO_IDLE + 1, t, tn);
		if (c >= 0) {
			if (r.prio_mask & (1U << c))
				return bi_fail(ctx, BI_PE_BAD_RULE,
					       "bad rule (duplicate condition)");
			r.prio_mask |= 1U << c;
			continue;
		}
		if (bi_eq(t, tn, "sync") || bi_eq(t, tn, "async")) {
			if (r.sync != BI_RULE_SYNC_ANY)
				return bi_fail(ctx, BI_PE_BAD_RULE,
					       "bad rule (sync/async given twice)");
			r.sync = t[0] == 's' ? BI_RULE_SYNC_ONLY : BI_RULE_ASYNC_ONLY;
			continue;
		}
		if (bi_is_digit(t[0]) || t[0] == '-') {
			if (band)
				return bi_fail(ctx, BI_PE_BAD_RULE,
					       "bad rule (two size bands)");
			band = true;
			rc = bi_parse_band(ctx, &r, t, tn);
			if (rc)
				return rc;
			continue;
		}
		return bi_fail(ctx, BI_PE_BAD_RULE, "bad rule (unknown condition)");
	}
	/* Listing every alternative is the same as listing none. */
	if (r.op_mask == BI_RULE_OPS_ALL)
		r.op_mask = 0;
	if (r.prio_mask == BI_RULE_PRIOS_ALL)
		r.prio_mask = 0;
	*out = r;
	return 0;
}

static void bi_format_rule(struct bi_wr *w, const struct bi_class_rule *r)
{
	char sep = ':';
	u32 i;

	if (!r->used) {
		bi_wr_str(w, "none");
		return;
	}
	bi_wr_str(w, bi_class_words[r->class % BI_NR_CLASSES]);
	for (i = 0; i < BI_NR_OPS; i++) {
		if (!(r->op_mask & (1U << i)) || !bi_op_words[i])
			continue;
		bi_wr_char(w, sep);
		bi_wr_str(w, bi_op_words[i]);
		sep = ',';
	}
	if (r->sync != BI_RULE_SYNC_ANY) {
		bi_wr_char(w, sep);
		bi_wr_str(w, r->sync == BI_RULE_SYNC_ONLY ? "sync" : "async");
		sep = ',';
	}
	for (i = BI_PRIO_RT; i <= BI_PRIO_IDLE; i++) {
		if (!(r->prio_mask & (1U << i)))
			continue;
		bi_wr_char(w, sep);
		bi_wr_str(w, bi_prio_words[i]);
		sep = ',';
	}
	if (r->min_bytes || r->max_bytes != BI_RULE_OPEN_MAX) {
		bi_wr_char(w, sep);
		if (r->min_bytes)
			bi_wr_u64(w, r->min_bytes);
		bi_wr_char(w, '-');
		if (r->max_bytes != BI_RULE_OPEN_MAX)
			bi_wr_u64(w, r->max_bytes);
	}
}

/* ---- one key=value ------------------------------------------------------ */

static const struct bi_key bi_initial_fixed_key = {
	.name = "fixed", .kind = BI_K_NUM, .min = 1,
	.max = BI_CONF_INITIAL_FIXED_MAX,
};

/*
 * "initial": one of its words, or "fixed:K" (S0-24: deduct K units at
 * admission, correct at completion).  fixed:1 is the word "1", so that a
 * value has one canonical form.
 */
static int bi_parse_initial(struct bi_pctx *ctx, struct bi_tenant_conf *c,
			    const struct bi_key *k, const char *s, u32 n)
{
	u64 v;
	int i, rc;

	if (n > 6 && bi_eq(s, 6, "fixed:")) {
		rc = bi_parse_num(ctx, &bi_initial_fixed_key, s + 6, n - 6, &v);
		if (rc)
			return rc;
		c->initial = v == 1 ? BI_INITIAL_ONE : BI_INITIAL_FIXED;
		c->initial_units = v == 1 ? 0 : v;
		return 0;
	}
	i = bi_word_index(k->words, k->nr_words, s, n);
	if (i < 0)
		return bi_fail(ctx, BI_PE_BAD_WORD,
			       "bad value (1, ewma, exact or fixed:K)");
	c->initial = (u8)i;
	c->initial_units = 0;
	return 0;
}

static int bi_set_value(struct bi_pctx *ctx, void *conf, const struct bi_key *k,
			const char *s, u32 n)
{
	u64 v;
	int rc, i;

	if (bi_eq(s, n, "default")) {
		bi_key_set_default(conf, k);
		return 0;
	}
	switch (k->kind) {
	case BI_K_POLICY:
		return bi_parse_policy(ctx, bi_cls(conf, k), s, n);
	case BI_K_RULE:
		return bi_parse_rule(ctx, bi_rule(conf, k), s, n);
	case BI_K_INITIAL:
		return bi_parse_initial(ctx, conf, k, s, n);
	case BI_K_WORD:
		i = bi_word_index(k->words, k->nr_words, s, n);
		if (i < 0)
			return bi_fail(ctx, BI_PE_BAD_WORD, "bad value (see doc/grammar.md)");
		bi_set(conf, k, k->arg + i);
		return 0;
	default:
		break;
	}
	if (k->unset && bi_eq(s, n, k->unset)) {
		bi_set(conf, k, k->unset_val);
		return 0;
	}
	rc = bi_parse_num(ctx, k, s, n, &v);
	if (rc)
		return rc;
	if (k->kind == BI_K_SHIFT) {
		if (v & (v - 1))
			return bi_fail(ctx, BI_PE_RANGE, "out of range (not a power of two)");
		for (i = 0; (1ULL << i) != v; i++)
			;
		v = i;
	}
	bi_set(conf, k, v);
	return 0;
}

static void bi_format_value(struct bi_wr *w, const void *conf,
			    const struct bi_key *k)
{
	const struct bi_class_conf *cc;
	u64 v;
	u32 i;

	switch (k->kind) {
	case BI_K_POLICY:
		cc = bi_ccls(conf, k);
		for (i = 0; i < cc->nr_buckets; i++) {
			if (i)
				bi_wr_char(w, ',');
			bi_wr_str(w, bi_class_words[cc->bucket[i] % BI_NR_CLASSES]);
		}
		return;
	case BI_K_RULE:
		bi_format_rule(w, bi_crule(conf, k));
		return;
	case BI_K_INITIAL:
		if (bi_get(conf, k) == BI_INITIAL_FIXED) {
			bi_wr_str(w, "fixed:");
			bi_wr_u64(w, ((const struct bi_tenant_conf *)conf)->initial_units);
			return;
		}
		break;
	default:
		break;
	}
	v = bi_get(conf, k);
	if (k->kind == BI_K_WORD || k->kind == BI_K_INITIAL)
		bi_wr_str(w, k->words[(v - k->arg) % k->nr_words]);
	else if (k->kind == BI_K_SHIFT)
		bi_wr_u64(w, 1ULL << (v & 63));
	else if (k->unset && v == k->unset_val)
		bi_wr_str(w, k->unset);
	else
		bi_wr_num(w, k, (s64)v);
}

/* ---- the table-driven engine -------------------------------------------- */

static void bi_table_init(const struct bi_table *t, void *conf, u32 size)
{
	u32 i;

	bi_memzero(conf, size);
	for (i = 0; i < t->nr_keys; i++)
		bi_key_set_default(conf, &t->keys[i]);
}

static int bi_table_format(const struct bi_table *t, const void *conf,
			   char *buf, u32 size)
{
	struct bi_wr w = { buf, size, 0 };
	u32 i;

	for (i = 0; i < t->nr_keys; i++) {
		const struct bi_key *k = &t->keys[i];

		if (k->flags & BI_KF_LOCKED)
			continue;
		if (!(k->flags & BI_KF_ALWAYS) && bi_key_is_default(conf, k))
			continue;
		if (w.len)
			bi_wr_char(&w, ' ');
		bi_wr_str(&w, k->name);
		bi_wr_char(&w, '=');
		bi_format_value(&w, conf, k);
	}
	bi_wr_end(&w);
	if (w.len >= size && size)
		return -BI_E2BIG;
	return w.len;
}

static const struct bi_key *bi_lookup(const struct bi_table *t, const char *s,
				      u32 n, u32 *index)
{
	u32 i;

	for (i = 0; i < t->nr_keys; i++) {
		if (bi_eq(s, n, t->keys[i].name)) {
			*index = i;
			return &t->keys[i];
		}
	}
	return NULL;
}

/* A key not in @t: one it refuses with its reason, or an unknown one. */
static int bi_fail_unknown(const struct bi_table *t, struct bi_pctx *ctx,
			   const char *name, u32 n)
{
	u32 i;

	for (i = 0; i < t->nr_refused; i++)
		if (bi_eq(name, n, t->refused[i].name))
			return bi_fail(ctx, BI_PE_UNSUPPORTED, t->refused[i].why);
	return bi_fail(ctx, BI_PE_UNKNOWN_KEY, "unknown key");
}

/*
 * Apply a line to *conf (a private copy).  Tokens are separated by
 * whitespace; the line ends at len or at a NUL byte.
 */
static int bi_table_apply(const struct bi_table *t, void *conf, u32 size,
			  struct bi_pctx *ctx)
{
	u64 seen[BI_MAX_KEYS / 64] = { 0 };
	const char *line = ctx->line;
	bool first = true;
	u32 pos = 0, len = ctx->len, eq, index;
	const struct bi_key *k;
	int rc;

	for (;;) {
		while (pos < len && line[pos] && bi_is_space(line[pos]))
			pos++;
		if (pos >= len || !line[pos])
			break;
		ctx->tpos = pos;
		while (pos < len && line[pos] && !bi_is_space(line[pos]))
			pos++;
		ctx->tlen = pos - ctx->tpos;

		if (bi_eq(line + ctx->tpos, ctx->tlen, "default")) {
			if (!first)
				return bi_fail(ctx, BI_PE_CONFLICT,
					       "conflicting keys ('default' must come first)");
			first = false;
			bi_table_init(t, conf, size);
			continue;
		}
		first = false;
		for (eq = 0; eq < ctx->tlen && line[ctx->tpos + eq] != '='; eq++)
			;
		if (eq == ctx->tlen)
			return bi_fail(ctx, BI_PE_NO_VALUE, "expected key=value");
		k = bi_lookup(t, line + ctx->tpos, eq, &index);
		if (!k)
			return bi_fail_unknown(t, ctx, line + ctx->tpos, eq);
		if (seen[index / 64] & (1ULL << (index % 64)))
			return bi_fail(ctx, BI_PE_DUP_KEY, "duplicate key");
		seen[index / 64] |= 1ULL << (index % 64);
		if (k->flags & BI_KF_LOCKED)
			return bi_fail(ctx, BI_PE_LOCKED,
				       "locked (the sys class policy is fixed, A-17)");
		if (eq + 1 == ctx->tlen)
			return bi_fail(ctx, BI_PE_NO_VALUE, "empty value");
		rc = bi_set_value(ctx, conf, k, line + ctx->tpos + eq + 1,
				  ctx->tlen - eq - 1);
		if (rc)
			return rc;
	}
	rc = t->validate(conf, ctx);
	if (rc)
		return rc;
	if (bi_table_format(t, conf, NULL, 0) >= BI_CONF_LINE_MAX) {
		ctx->tpos = 0;
		ctx->tlen = 0;
		return bi_fail(ctx, BI_PE_TOO_LONG,
			       "configuration too long (canonical form over 511 bytes)");
	}
	return 0;
}

static void bi_ctx_init(struct bi_pctx *ctx, const char *line, u32 len,
			struct bi_parse_err *err)
{
	ctx->line = line;
	ctx->len = line ? len : 0;
	ctx->tpos = 0;
	ctx->tlen = 0;
	ctx->err = err;
	if (err) {
		err->code = BI_PE_OK;
		err->pos = 0;
		err->len = 0;
		err->msg[0] = '\0';
	}
}

/* ---- the tenant table --------------------------------------------------- */

#define BI_T(f)		.offset = offsetof(struct bi_tenant_conf, f), \
			.size = sizeof(((struct bi_tenant_conf *)NULL)->f)
#define BI_WORDS(w)	.words = w, .nr_words = BI_ARRAY_SIZE(w)

#define BI_CAP(nm, f, fl, hi) \
	{ .name = nm, BI_T(f), .kind = BI_K_NUM, .flags = BI_KF_ALWAYS | (fl), \
	  .unset = "max", .unset_val = BI_CONF_UNLIMITED, .min = 1, .max = hi, \
	  .def = BI_CONF_UNLIMITED }
#define BI_U(nm, f, lo, hi, d) \
	{ .name = nm, BI_T(f), .kind = BI_K_NUM, .min = lo, .max = hi, .def = d }
#define BI_UU(nm, f, word, lo, hi) \
	{ .name = nm, BI_T(f), .kind = BI_K_NUM, .unset = word, .unset_val = 0, \
	  .min = lo, .max = hi, .def = 0 }
#define BI_W(nm, f, w, base, d) \
	{ .name = nm, BI_T(f), .kind = BI_K_WORD, .arg = base, BI_WORDS(w), \
	  .def = d }

/* Per-class keys "<class>.<attr>"; lock marks the fixed SYS policy. */
#define BI_CK_UNITS(cn, c)							\
	{ .name = cn ".units", BI_T(cls[c].rate_units), .kind = BI_K_NUM,	\
	  .unset = "max", .unset_val = BI_CONF_UNLIMITED, .min = 1,		\
	  .max = BI_CONF_RATE_MAX, .def = BI_CONF_UNLIMITED }
#define BI_CK_POLICY(cn, c, lock)						\
	{ .name = cn ".policy", BI_T(cls[c]), .kind = BI_K_POLICY, .arg = c,	\
	  .flags = lock }
#define BI_CK_DEDUCT(cn, c, lock)						\
	{ .name = cn ".deduct", BI_T(cls[c].deduct), .kind = BI_K_WORD,	\
	  BI_WORDS(bi_deduct_words), .def = BI_DEDUCT_SAME, .flags = lock }
#define BI_CK_MIN(cn, c, lock)							\
	{ .name = cn ".min", BI_T(cls[c].min_tokens), .kind = BI_K_NUM,	\
	  .flags = BI_KF_SIGNED | lock, .unset = "inherit",			\
	  .unset_val = (u64)BI_CONF_INHERIT, .min = -BI_CONF_TOKENS_MAX,	\
	  .max = BI_CONF_TOKENS_MAX, .def = (u64)BI_CONF_INHERIT }
#define BI_CK_FLOOR(cn, c, lock)						\
	{ .name = cn ".floor", BI_T(cls[c].floor_tokens), .kind = BI_K_NUM,	\
	  .flags = BI_KF_SIGNED | lock, .unset = "inherit",			\
	  .unset_val = (u64)BI_CONF_INHERIT, .min = -BI_CONF_TOKENS_MAX,	\
	  .max = 0, .def = (u64)BI_CONF_INHERIT }
#define BI_CK_ACTION(cn, c, lock)						\
	{ .name = cn ".action", BI_T(cls[c].action), .kind = BI_K_WORD,	\
	  BI_WORDS(bi_action_words), .def = BI_ACTION_DELAY, .flags = lock }

#define BI_RULE_KEY(nm, i) \
	{ .name = nm, BI_T(rules.rule[i]), .kind = BI_K_RULE, .arg = i }

static const struct bi_key bi_tenant_keys[] = {
	BI_CAP("riops", iops[BI_DIR_READ], 0, BI_CONF_RATE_MAX),
	BI_CAP("wiops", iops[BI_DIR_WRITE], 0, BI_CONF_RATE_MAX),
	BI_CAP("rbps", bps[BI_DIR_READ], BI_KF_BYTES, BI_CONF_BPS_MAX),
	BI_CAP("wbps", bps[BI_DIR_WRITE], BI_KF_BYTES, BI_CONF_BPS_MAX),
	BI_CAP("runits", units[BI_DIR_READ], 0, BI_CONF_RATE_MAX),
	BI_CAP("wunits", units[BI_DIR_WRITE], 0, BI_CONF_RATE_MAX),
	BI_UU("alloc", alloc, "none", 1, BI_CONF_RATE_MAX),
	BI_W("alloc_metric", alloc_metric, bi_metric_words, 0, BI_ALLOC_UNITS),
	BI_W("isolation", isolation, bi_isolation_words, 0, BI_ISOLATION_WC),
	BI_W("mode", mode, bi_mode_words, 0, BI_MODE_WORK),
	BI_U("burst_ms", burst_ms, 1, 60000, 50),
	BI_UU("burst_limit", burst_limit, "auto", 1, BI_CONF_RATE_MAX),
	{ .name = "initial", BI_T(initial), .kind = BI_K_INITIAL,
	  BI_WORDS(bi_initial_words), .def = BI_INITIAL_EXACT },
	{ .name = "min_tokens", BI_T(min_tokens), .kind = BI_K_NUM,
	  .flags = BI_KF_SIGNED, .unset = "auto",
	  .unset_val = (u64)BI_CONF_MIN_AUTO, .min = -BI_CONF_TOKENS_MAX,
	  .max = BI_CONF_TOKENS_MAX, .def = (u64)BI_CONF_MIN_AUTO },
	{ .name = "floor", BI_T(floor_tokens), .kind = BI_K_NUM,
	  .flags = BI_KF_SIGNED, .unset = "none", .unset_val = (u64)BI_NO_FLOOR,
	  .min = -BI_CONF_TOKENS_MAX, .max = 0, .def = (u64)BI_NO_FLOOR },
	BI_U("deadband", deadband_units, 0, BI_CONF_TOKENS_MAX, 0),
	BI_U("latency_us", latency_us, 1, 60000000, BI_LATENCY_US_DEFAULT),
	BI_UU("prio", prio, "auto", 1, 3),
	BI_U("slots", slots, 1, 65535, 32),
	BI_U("lower_ticks", lower_ticks, 1, 999, 3),
	BI_U("raise_ticks", raise_ticks, 2, 1000, 4),
	BI_U("safety_pct", safety_pct, 100, 1000, 120),
	BI_U("adapt_pct", adapt_pct, 1, 1000, 25),
	BI_U("miss_pct", miss_pct, 1, 100, 10),
	BI_UU("window_ticks", window_ticks, "auto", 1, BI_CONF_WINDOW_MAX),
	BI_U("hover_ms", hover_ms, 0, 600000, 1000),
	BI_U("delay_step_us", delay_step_us, 1, 1000000, 100),
	BI_UU("delay_max_us", delay_max_us, "auto", 1, 10000000),
	BI_U("abuse_pct", abuse_pct, 100, 100000, 200),
	BI_W("delay_mode", delay_mode, bi_delay_mode_words, 0, BI_DELAY_SPREAD),
	BI_W("reduce_below_alloc", reduce_below_alloc, bi_bool_words, 0, 0),
	BI_W("predictive", predictive, bi_bool_words, 0, 0),
	BI_U("smoothing_pct", smoothing_pct, 1, 100, 30),
	BI_CK_UNITS("hi", BI_CLASS_HI),
	BI_CK_POLICY("hi", BI_CLASS_HI, 0),
	BI_CK_DEDUCT("hi", BI_CLASS_HI, 0),
	BI_CK_MIN("hi", BI_CLASS_HI, 0),
	BI_CK_FLOOR("hi", BI_CLASS_HI, 0),
	BI_CK_ACTION("hi", BI_CLASS_HI, 0),
	BI_CK_UNITS("mid", BI_CLASS_MID),
	BI_CK_POLICY("mid", BI_CLASS_MID, 0),
	BI_CK_DEDUCT("mid", BI_CLASS_MID, 0),
	BI_CK_MIN("mid", BI_CLASS_MID, 0),
	BI_CK_FLOOR("mid", BI_CLASS_MID, 0),
	BI_CK_ACTION("mid", BI_CLASS_MID, 0),
	BI_CK_UNITS("lo", BI_CLASS_LO),
	BI_CK_POLICY("lo", BI_CLASS_LO, 0),
	BI_CK_DEDUCT("lo", BI_CLASS_LO, 0),
	BI_CK_MIN("lo", BI_CLASS_LO, 0),
	BI_CK_FLOOR("lo", BI_CLASS_LO, 0),
	BI_CK_ACTION("lo", BI_CLASS_LO, 0),
	BI_CK_UNITS("sys", BI_CLASS_SYS),
	BI_CK_POLICY("sys", BI_CLASS_SYS, BI_KF_LOCKED),
	BI_CK_DEDUCT("sys", BI_CLASS_SYS, BI_KF_LOCKED),
	BI_CK_MIN("sys", BI_CLASS_SYS, BI_KF_LOCKED),
	BI_CK_FLOOR("sys", BI_CLASS_SYS, BI_KF_LOCKED),
	BI_CK_ACTION("sys", BI_CLASS_SYS, BI_KF_LOCKED),
	BI_W("rdef", rules.default_class, bi_rdef_words, BI_CLASS_HI,
	     BI_CLASS_MID),
	BI_RULE_KEY("r0", 0), BI_RULE_KEY("r1", 1), BI_RULE_KEY("r2", 2),
	BI_RULE_KEY("r3", 3), BI_RULE_KEY("r4", 4), BI_RULE_KEY("r5", 5),
	BI_RULE_KEY("r6", 6), BI_RULE_KEY("r7", 7),
};

static s64 bi_eff(s64 class_val, s64 tenant_val)
{
	return class_val == BI_CONF_INHERIT ? tenant_val : class_val;
}

/*
 * Cross-key rules.  Only numeric min/floor pairs are compared: "auto" is
 * decided at run time (S0-30), "none" has no floor, "inherit" takes the
 * tenant's value, so a class conflicts only through what it sets itself.
 */
static int bi_tenant_validate(const void *p, struct bi_pctx *ctx)
{
	static const char *const min_names[] = {
		"sys.min", "hi.min", "mid.min", "lo.min"
	};
	static const char *const floor_names[] = {
		"sys.floor", "hi.floor", "mid.floor", "lo.floor"
	};
	const struct bi_tenant_conf *c = p;
	s64 min, floor;
	u32 i;

	if (c->raise_ticks <= c->lower_ticks)
		return bi_fail_conflict(ctx, "raise_ticks", "lower_ticks",
					"raise_ticks must exceed lower_ticks, S0-09");
	if (c->min_tokens != BI_CONF_MIN_AUTO && c->floor_tokens != BI_NO_FLOOR &&
	    c->floor_tokens >= c->min_tokens)
		return bi_fail_conflict(ctx, "floor", "min_tokens",
					"floor must be below the minimum");
	for (i = BI_CLASS_HI; i < BI_NR_CLASSES; i++) {
		min = bi_eff(c->cls[i].min_tokens, c->min_tokens);
		floor = bi_eff(c->cls[i].floor_tokens, c->floor_tokens);
		if (min == BI_CONF_MIN_AUTO || floor == BI_NO_FLOOR || floor < min)
			continue;
		return bi_fail_conflict(ctx, floor_names[i], min_names[i],
					"floor must be below the minimum");
	}
	return 0;
}

_Static_assert(BI_ARRAY_SIZE(bi_tenant_keys) <= BI_MAX_KEYS,
	       "duplicate-key bitmap too small");

static const struct bi_refused_key bi_tenant_refused[] = {
	{ "ideal_us", "not a tenant key (the ideal-rate threshold is the device's ideal_us)" },
};

static const struct bi_table bi_tenant_table = {
	.keys = bi_tenant_keys,
	.nr_keys = BI_ARRAY_SIZE(bi_tenant_keys),
	.refused = bi_tenant_refused,
	.nr_refused = BI_ARRAY_SIZE(bi_tenant_refused),
	.validate = bi_tenant_validate,
};

/*
 * The transaction of every parse and merge: apply @line to @tmp, a private
 * copy of *@out (merge) or of the defaults (parse), and publish it to
 * *@out only if the whole line was good.  @tmp is the caller's: one conf
 * on its stack, no allocation.
 */
static int bi_table_apply_to(const struct bi_table *t, void *out, void *tmp, u32 size,
			     const char *line, u32 len, struct bi_parse_err *err,
			     bool merge)
{
	struct bi_pctx ctx;
	int rc;

	bi_ctx_init(&ctx, line, len, err);
	if (merge)
		__builtin_memcpy(tmp, out, size);
	else
		bi_table_init(t, tmp, size);
	rc = bi_table_apply(t, tmp, size, &ctx);
	if (!rc)
		__builtin_memcpy(out, tmp, size);
	return rc;
}

void bi_tenant_conf_init(struct bi_tenant_conf *conf)
{
	bi_table_init(&bi_tenant_table, conf, sizeof(*conf));
}

int bi_conf_parse(struct bi_tenant_conf *out, const char *line, u32 len,
		  struct bi_parse_err *err)
{
	struct bi_tenant_conf tmp;

	return bi_table_apply_to(&bi_tenant_table, out, &tmp, sizeof(tmp), line, len,
				 err, false);
}

int bi_conf_merge(struct bi_tenant_conf *out, const char *line, u32 len,
		  struct bi_parse_err *err)
{
	struct bi_tenant_conf tmp;

	return bi_table_apply_to(&bi_tenant_table, out, &tmp, sizeof(tmp), line, len,
				 err, true);
}

int bi_conf_format(const struct bi_tenant_conf *conf, char *buf, u32 size)
{
	return bi_table_format(&bi_tenant_table, conf, buf, size);
}

u32 bi_conf_nr_keys(void)
{
	return bi_tenant_table.nr_keys;
}

const char *bi_conf_key_name(u32 index)
{
	return index < bi_tenant_table.nr_keys ?
		bi_tenant_keys[index].name : NULL;
}

/* ---- the device table --------------------------------------------------- */

#define BI_D(f)		.offset = offsetof(struct bi_dev_conf, f), \
			.size = sizeof(((struct bi_dev_conf *)NULL)->f)
#define BI_DU(nm, f, lo, hi, d) \
	{ .name = nm, BI_D(f), .kind = BI_K_NUM, .min = lo, .max = hi, .def = d }
#define BI_DB(nm, f, lo, hi, d) \
	{ .name = nm, BI_D(f), .kind = BI_K_NUM, \
	  .flags = BI_KF_BYTES | BI_KF_SECTOR, .min = lo, .max = hi, .def = d }

static const struct bi_key bi_dev_keys[] = {
	{ .name = "unit_bytes", BI_D(cost.unit_shift), .kind = BI_K_SHIFT,
	  .flags = BI_KF_BYTES, .min = 1 << BI_UNIT_SHIFT_MIN,
	  .max = 1 << BI_UNIT_SHIFT_MAX, .def = BI_UNIT_SHIFT_DEFAULT },
	BI_DU("discard_units", cost.discard_units, 1, BI_DISCARD_UNITS_MAX,
	      BI_DISCARD_UNITS_DEFAULT),
	BI_DU("write_unit_weight", cost.write_unit_weight, 1,
	      BI_WRITE_WEIGHT_MAX, BI_WRITE_WEIGHT_DEFAULT),
	BI_DU("tick_ms", tick_ms, 1, 10000, 100),
	{ .name = "reject_mode", BI_D(reject_mode), .kind = BI_K_WORD,
	  BI_WORDS(bi_bool_words), .def = 0 },
	{ .name = "overload", BI_D(overload), .kind = BI_K_WORD,
	  BI_WORDS(bi_overload_words), .def = BI_OVERLOAD_OFF },
	BI_DU("window_ticks", window_ticks, 1, 100, 10),
	BI_DU("overload_pct", overload_pct, 1, 100, 10),
	BI_DU("mult_up", mult_up, 1, 100, 20),
	BI_DU("mult_down", mult_down, 1, 100, 2),
	BI_DU("holdoff_ticks", holdoff_ticks, 0, 100, 3),
	BI_DU("ideal_us", ideal_us, 1, 10000000, 100),
	BI_DU("ideal_band_us", ideal_band_us, 1, 10000000, 500),
	BI_DB("shed_bytes", shed_bytes, 4096, 1LL << 32, 256 << 10),
	BI_DU("local_max_pct", local_max_pct, 1, 100, 6),
	{ .name = "hold_ms", BI_D(hold_ms), .kind = BI_K_NUM, .unset = "auto",
	  .unset_val = 0, .min = 1, .max = 60000, .def = 0 },
	{ .name = "dispense_hold_ms", BI_D(dispense_hold_ms), .kind = BI_K_NUM,
	  .unset = "auto", .unset_val = 0, .min = 1, .max = 60000, .def = 0 },
	{ .name = "chunk_bytes", BI_D(chunk_bytes), .kind = BI_K_NUM,
	  .flags = BI_KF_BYTES | BI_KF_SECTOR, .unset = "off", .unset_val = 0,
	  .min = 4096, .max = 1 << 30, .def = 0 },
	{ .name = "depth_limit", BI_D(depth_limit), .kind = BI_K_WORD,
	  BI_WORDS(bi_bool_words), .def = 0 },
};

static int bi_dev_validate(const void *p, struct bi_pctx *ctx)
{
	const struct bi_dev_conf *c = p;

	if (c->mult_down > c->mult_up)
		return bi_fail_conflict(ctx, "mult_down", "mult_up",
					"R must not exceed T, S2-10");
	return 0;
}

_Static_assert(BI_ARRAY_SIZE(bi_dev_keys) <= BI_MAX_KEYS,
	       "duplicate-key bitmap too small");

static const struct bi_refused_key bi_dev_refused[] = {
	{ "rw_read_factor", "not supported (reads and writes have their own caps)" },
	{ "dispense_threshold", "not supported (a global bucket hands out all it holds)" },
	{ "refill_hist", "not supported (the demand history is 4 intervals)" },
	{ "overload_hint", "not supported (overload is measured from completion latencies)" },
	{ "riops", "not a device key (a device-wide cap is a quota on the root cgroup)" },
	{ "wiops", "not a device key (a device-wide cap is a quota on the root cgroup)" },
	{ "rbps", "not a device key (a device-wide cap is a quota on the root cgroup)" },
	{ "wbps", "not a device key (a device-wide cap is a quota on the root cgroup)" },
};

static const struct bi_table bi_dev_table = {
	.keys = bi_dev_keys,
	.nr_keys = BI_ARRAY_SIZE(bi_dev_keys),
	.refused = bi_dev_refused,
	.nr_refused = BI_ARRAY_SIZE(bi_dev_refused),
	.validate = bi_dev_validate,
};

void bi_dev_conf_init(struct bi_dev_conf *conf)
{
	bi_table_init(&bi_dev_table, conf, sizeof(*conf));
}

int bi_dev_conf_parse(struct bi_dev_conf *out, const char *line, u32 len,
		      struct bi_parse_err *err)
{
	struct bi_dev_conf tmp;

	return bi_table_apply_to(&bi_dev_table, out, &tmp, sizeof(tmp), line, len, err,
				 false);
}

int bi_dev_conf_merge(struct bi_dev_conf *out, const char *line, u32 len,
		      struct bi_parse_err *err)
{
	struct bi_dev_conf tmp;

	return bi_table_apply_to(&bi_dev_table, out, &tmp, sizeof(tmp), line, len, err,
				 true);
}

int bi_dev_conf_format(const struct bi_dev_conf *conf, char *buf, u32 size)
{
	return bi_table_format(&bi_dev_table, conf, buf, size);
}

u32 bi_dev_conf_nr_keys(void)
{
	return bi_dev_table.nr_keys;
}

const char *bi_dev_conf_key_name(u32 index)
{
	return index < bi_dev_table.nr_keys ? bi_dev_keys[index].name : NULL;
}
