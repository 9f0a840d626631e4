// SPDX-License-Identifier: GPL-2.0
/*
 * pathrule.c - matching cgroup paths against the globs of device-level
 * rules, and ranking the matches by specificity (pathrule.h).  Runs in
 * .map when a new cgroup's first bio creates its tenant, so it neither
 * allocates nor recurses: both levels of wildcard are matched greedily
 * with one backtracking point each, which is exact for "*" within a
 * component and for "**" over whole components.
 */
#include "pathrule.h"

/* "@glob: why" into @err, the glob cut to 48 bytes, unprintables as '?'. */
static int bi_glob_fail(struct bi_parse_err *err, const char *glob, u32 len,
			const char *why)
{
	u32 i, o = 0;

	err->code = BI_PE_BAD_WORD;
	err->pos = 0;
	err->len = len;
	for (i = 0; i < len && i < 48; i++)
		err->msg[o++] = glob[i] > ' ' && glob[i] < 127 ? glob[i] : '?';
	if (len > 48) {
		err->msg[o++] = '.';
		err->msg[o++] = '.';
		err->msg[o++] = '.';
	}
	err->msg[o++] = ':';
	err->msg[o++] = ' ';
	for (i = 0; why[i] && o < BI_PARSE_MSG_MAX - 1; i++)
		err->msg[o++] = why[i];
	err->msg[o] = '\0';
	return -BI_EINVAL;
}

int bi_glob_check(const char *glob, u32 len, struct bi_parse_err *err)
{
	u32 i, start;

	if (!len || glob[0] != '/')
		return bi_glob_fail(err, glob, len,
				    "bad glob (must be an absolute cgroup path, \"/...\")");
	if (len >= BI_GLOB_MAX)
		return bi_glob_fail(err, glob, len, "bad glob (longer than 255 bytes)");
	for (i = 0; i < len; i++)
		if (glob[i] <= ' ' || glob[i] == 127)
			return bi_glob_fail(err, glob, len,
					    "bad glob (space or control character)");
	if (len == 1)
		return 0;	/* "/": the root cgroup */
	for (start = 1; start <= len; start = i + 1) {
		u32 stars = 0, j;

		for (i = start; i < len && glob[i] != '/'; i++)
			stars += glob[i] == '*';
		if (i == start)
			return bi_glob_fail(err, glob, len, "bad glob (empty component)");
		if (i - start == 2 && stars == 2)
			continue;	/* "**" */
		if (i - start == 1 && stars == 1)
			continue;	/* "*" */
		for (j = start; j + 1 < i; j++)
			if (glob[j] == '*' && glob[j + 1] == '*')
				return bi_glob_fail(err, glob, len,
						    "bad glob ('**' must be a whole component)");
		if (i - start == 1 && glob[start] == '.')
			return bi_glob_fail(err, glob, len, "bad glob ('.' component)");
		if (i - start == 2 && glob[start] == '.' && glob[start + 1] == '.')
			return bi_glob_fail(err, glob, len, "bad glob ('..' component)");
	}
	return 0;
}

/* Does component pattern @p (@pn bytes, "*" wildcards) match @s (@sn bytes)? */
static bool bi_comp_match(const char *p, u32 pn, const char *s, u32 sn)
{
	u32 pi = 0, si = 0, star_p = U32_MAX, star_s = 0;

	while (si < sn) {
		if (pi < pn && p[pi] == '*') {
			star_p = pi++;
			star_s = si;
		} else if (pi < pn && p[pi] == s[si]) {
			pi++;
			si++;
		} else if (star_p != U32_MAX) {
			pi = star_p + 1;
			si = ++star_s;
		} else {
			return false;
		}
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

/* The component starting at @s[*pos] (after its '/'): its start and length. */
static bool bi_next_comp(const char *s, u32 *pos, u32 *start, u32 *len)
{
	u32 i = *pos;

	while (s[i] == '/')
		i++;
	if (!s[i])
		return false;
	*start = i;
	while (s[i] && s[i] != '/')
		i++;
	*len = i - *start;
	*pos = i;
	return true;
}

bool bi_glob_match(const char *glob, const char *path)
{
	u32 gpos = 0, ppos = 0, gs = 0, gl = 0, ps = 0, pl = 0;
	u32 star_g = U32_MAX, star_p = 0;	/* after the last "**": resume here */
	bool have_g, have_p;

	for (;;) {
		u32 p_save = ppos;

		have_g = bi_next_comp(glob, &gpos, &gs, &gl);
		have_p = bi_next_comp(path, &ppos, &ps, &pl);
		if (have_g && gl == 2 && glob[gs] == '*' && glob[gs + 1] == '*') {
			u32 end = gpos;

			/* a trailing one: everything below, not the cgroup itself */
			if (!bi_next_comp(glob, &end, &gs, &gl))
				return have_p;
			/* "**": first try zero components, remember where */
			star_g = gpos;
			star_p = p_save;
			ppos = p_save;
			continue;
		}
		if (!have_p) {
			if (!have_g)
				return true;
			ppos = p_save;
		} else if (have_g && bi_comp_match(glob + gs, gl, path + ps, pl)) {
			continue;
		}
		/* mismatch: let the last "**" take one more component */
		if (star_g == U32_MAX)
			return false;
		ppos = star_p;
		if (!bi_next_comp(path, &ppos, &ps, &pl))
			return false;
		star_p = ppos;
		gpos = star_g;
	}
}

struct bi_glob_rank {
	u32 prefix;	/* literal characters before the first '*' */
	u32 wild;	/* wildcards: "*" counts one, "**" two */
	u32 len;
};

static void bi_glob_rank(const char *g, struct bi_glob_rank *r)
{
	u32 i;

	r->prefix = U32_MAX;
	r->wild = 0;
	for (i = 0; g[i]; i++) {
		if (g[i] != '*')
			continue;
		if (r->prefix == U32_MAX)
			r->prefix = i;
		r->wild++;
		if (g[i + 1] == '*') {
			r->wild++;
			i++;
		}
	}
	r->len = i;
	if (r->prefix == U32_MAX)
		r->prefix = i;
}

int bi_glob_cmp(const char *a, const char *b)
{
	struct bi_glob_rank ra, rb;
	u32 i;

	bi_glob_rank(a, &ra);
	bi_glob_rank(b, &rb);
	if (ra.prefix != rb.prefix)
		return ra.prefix > rb.prefix ? 1 : -1;
	if (ra.wild != rb.wild)
		return ra.wild < rb.wild ? 1 : -1;
	if (ra.len != rb.len)
		return ra.len > rb.len ? 1 : -1;
	for (i = 0; a[i] && a[i] == b[i]; i++)
		;
	if (a[i] == b[i])
		return 0;
	return (unsigned char)a[i] < (unsigned char)b[i] ? 1 : -1;
}

int bi_glob_best(const char *const *globs, u32 n, const char *path)
{
	int best = -1;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!globs[i] || !bi_glob_match(globs[i], path))
			continue;
		if (best < 0 || bi_glob_cmp(globs[i], globs[best]) > 0)
			best = i;
	}
	return best;
}
