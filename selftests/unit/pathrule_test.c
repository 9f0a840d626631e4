// SPDX-License-Identifier: GPL-2.0
/*
 * pathrule_test.c - cgroup path globs of device-level rules
 * (kmod/core/pathrule.c): validity, "*" within a component, "**" across
 * components, and the specificity order (longest literal prefix, then
 * fewest wildcards, then longest glob, then byte order).
 */
#include <string.h>
#include "pathrule.h"
#include "kselftest_harness.h"

static int check(const char *g, char *msg)
{
	struct bi_parse_err err;
	int rc = bi_glob_check(g, strlen(g), &err);

	if (rc && msg)
		strcpy(msg, err.msg);
	return rc;
}

TEST(valid_globs)
{
	static const char *const ok[] = {
		"/", "/a", "/system.slice/docker-*.scope", "/kubepods.slice/*/*",
		"/**", "/a/**/b", "/**/x*.scope", "/a*b*c", "/system.slice/postgresql.service",
	};
	unsigned int i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		EXPECT_EQ(0, check(ok[i], NULL));
}

TEST(invalid_globs_say_why)
{
	char msg[BI_PARSE_MSG_MAX], big[300];

	EXPECT_EQ(-BI_EINVAL, check("a/b", msg));
	EXPECT_NE(NULL, strstr(msg, "absolute"));
	EXPECT_EQ(-BI_EINVAL, check("", msg));
	EXPECT_EQ(-BI_EINVAL, check("/a//b", msg));
	EXPECT_NE(NULL, strstr(msg, "empty component"));
	EXPECT_EQ(-BI_EINVAL, check("/a/", msg));
	EXPECT_EQ(-BI_EINVAL, check("/a/**x", msg));
	EXPECT_NE(NULL, strstr(msg, "whole component"));
	EXPECT_STREQ("/a/**x: bad glob ('**' must be a whole component)", msg);
	EXPECT_EQ(-BI_EINVAL, check("/a/***", msg));
	EXPECT_EQ(-BI_EINVAL, check("/a/../b", msg));
	EXPECT_EQ(-BI_EINVAL, check("/a/./b", msg));
	EXPECT_EQ(-BI_EINVAL, check("/a b", msg));
	EXPECT_NE(NULL, strstr(msg, "space"));
	memset(big, 'x', sizeof(big));
	big[0] = '/';
	big[256] = '\0';
	EXPECT_EQ(-BI_EINVAL, check(big, msg));
	EXPECT_NE(NULL, strstr(msg, "longer than 255"));
	/* the message quotes at most 48 bytes of the glob, then "..." */
	EXPECT_EQ(0, strncmp(msg, big, 48));
	EXPECT_STREQ("...: bad glob (longer than 255 bytes)", msg + 48);
	big[255] = '\0';
	EXPECT_EQ(0, check(big, msg));
}

TEST(star_stays_in_one_component)
{
	const char *g = "/system.slice/docker-*.scope";

	EXPECT_TRUE(bi_glob_match(g, "/system.slice/docker-abc.scope"));
	EXPECT_TRUE(bi_glob_match(g, "/system.slice/docker-.scope"));
	EXPECT_FALSE(bi_glob_match(g, "/system.slice/docker-a/b.scope"));
	EXPECT_FALSE(bi_glob_match(g, "/system.slice/docker-abc.scope/sub"));
	EXPECT_FALSE(bi_glob_match(g, "/system.slice"));
	EXPECT_TRUE(bi_glob_match("/kubepods.slice/*/*", "/kubepods.slice/pod1/c1"));
	EXPECT_FALSE(bi_glob_match("/kubepods.slice/*/*", "/kubepods.slice/pod1"));
	EXPECT_FALSE(bi_glob_match("/kubepods.slice/*/*", "/kubepods.slice/a/b/c"));
	EXPECT_TRUE(bi_glob_match("/a*b*c", "/abc"));
	EXPECT_TRUE(bi_glob_match("/a*b*c", "/axxbyybc"));
	EXPECT_FALSE(bi_glob_match("/a*b*c", "/axxbyybcd"));
	EXPECT_TRUE(bi_glob_match("/*", "/x"));
	EXPECT_FALSE(bi_glob_match("/*", "/"));
}

TEST(double_star_spans_components)
{
	EXPECT_FALSE(bi_glob_match("/**", "/"));
	EXPECT_TRUE(bi_glob_match("/**", "/a/b/c"));
	EXPECT_FALSE(bi_glob_match("/a/**", "/a"));	/* below /a, not /a */
	EXPECT_TRUE(bi_glob_match("/a/**", "/a/b"));
	EXPECT_TRUE(bi_glob_match("/a/**", "/a/b/c"));
	EXPECT_FALSE(bi_glob_match("/a/**", "/ab"));
	EXPECT_TRUE(bi_glob_match("/a/**/z", "/a/z"));
	EXPECT_TRUE(bi_glob_match("/a/**/z", "/a/b/c/z"));
	EXPECT_FALSE(bi_glob_match("/a/**/z", "/a/b/c/z/y"));
	EXPECT_TRUE(bi_glob_match("/**/x*.scope", "/p/q/xy.scope"));
	EXPECT_TRUE(bi_glob_match("/**/b/**/d", "/a/b/c/b/x/d"));
	EXPECT_TRUE(bi_glob_match("/**/b/c", "/b/b/c"));
	EXPECT_FALSE(bi_glob_match("/**/b/c", "/b/c/d"));
}

/*
 * The matcher against a plain recursive model of the same rules, over
 * random globs and paths of up to 4 components: '*' matches any run of
 * characters inside a component, a "**" component any number of whole
 * components, a trailing "**" at least one.
 */
static bool model_comp(const char *p, const char *s)
{
	if (!*p)
		return !*s;
	if (*p == '*')
		return model_comp(p + 1, s) || (*s && model_comp(p, s + 1));
	return *s == *p && model_comp(p + 1, s + 1);
}

static bool model(const char *const *g, int gn, const char *const *c, int cn)
{
	int k;

	if (!gn)
		return !cn;
	if (!strcmp(g[0], "**")) {
		if (gn == 1)
			return cn >= 1;
		for (k = 0; k <= cn; k++)
			if (model(g + 1, gn - 1, c + k, cn - k))
				return true;
		return false;
	}
	return cn && model_comp(g[0], c[0]) && model(g + 1, gn - 1, c + 1, cn - 1);
}

static void join(char *out, const char *const *parts, int n)
{
	int i;

	strcpy(out, n ? "" : "/");
	for (i = 0; i < n; i++) {
		strcat(out, "/");
		strcat(out, parts[i]);
	}
}

TEST(match_agrees_with_a_model)
{
	static const char *const gw[] = { "a", "b", "*", "**", "a*", "*b", "ab", "*a*" };
	static const char *const pw[] = { "a", "b", "ab", "ba", "aab", "bb" };
	const char *g[4], *c[4];
	char gs[64], ps[64];
	u64 rng = 17;
	int i, j, gn, cn, hits = 0;

	for (i = 0; i < 20000; i++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		gn = (int)(rng >> 60) % 5;
		cn = (int)(rng >> 56 & 15) % 5;
		for (j = 0; j < gn; j++)
			g[j] = gw[(rng >> (8 + 3 * j)) % 8];
		for (j = 0; j < cn; j++)
			c[j] = pw[(rng >> (24 + 3 * j)) % 6];
		join(gs, g, gn);
		join(ps, c, cn);
		ASSERT_EQ(0, check(gs, NULL)) TH_LOG("%s", gs);
		ASSERT_EQ(model(g, gn, c, cn), bi_glob_match(gs, ps))
			TH_LOG("glob %s path %s", gs, ps);
		hits += model(g, gn, c, cn);
	}
	ASSERT_LT(2000, hits);			/* both answers well represented */
	ASSERT_GT(18000, hits);
}

TEST(literals)
{
	EXPECT_TRUE(bi_glob_match("/", "/"));
	EXPECT_FALSE(bi_glob_match("/", "/a"));
	EXPECT_TRUE(bi_glob_match("/system.slice/postgresql.service",
				  "/system.slice/postgresql.service"));
	EXPECT_FALSE(bi_glob_match("/system.slice/postgresql.service",
				   "/system.slice/postgresql.service/x"));
	EXPECT_FALSE(bi_glob_match("/a/b", "/a"));
}

TEST(most_specific_wins)
{
	const char *globs[] = {
		"/**",					/* 0 */
		"/system.slice/*",			/* 1 */
		"/system.slice/docker-*.scope",		/* 2 */
		"/system.slice/docker-abc.scope",	/* 3 */
		NULL,					/* 4: a free slot */
		"/system.slice/docker-*",		/* 5: same prefix as 2, shorter */
		"/system.slice/**",			/* 6 */
	};
	const char *const *g = globs;

	EXPECT_EQ(3, bi_glob_best(g, 7, "/system.slice/docker-abc.scope"));
	EXPECT_EQ(2, bi_glob_best(g, 7, "/system.slice/docker-xyz.scope"));
	EXPECT_EQ(5, bi_glob_best(g, 7, "/system.slice/docker-xyz"));
	EXPECT_EQ(1, bi_glob_best(g, 7, "/system.slice/cron.service"));
	EXPECT_EQ(6, bi_glob_best(g, 7, "/system.slice/cron.service/sub"));
	EXPECT_EQ(0, bi_glob_best(g, 7, "/user.slice"));
	EXPECT_EQ(-1, bi_glob_best(g + 1, 3, "/user.slice"));
	/* fewer wildcards at the same prefix */
	EXPECT_GT(bi_glob_cmp("/a/*x", "/a/*x*"), 0);
	/* "**" weighs two wildcards: one component beats any depth */
	EXPECT_GT(bi_glob_cmp("/a/*", "/a/**"), 0);
	/* a longer literal prefix beats fewer wildcards */
	EXPECT_GT(bi_glob_cmp("/a/b*/*/*", "/a/*"), 0);
	/* then the longer glob */
	EXPECT_GT(bi_glob_cmp("/a/*.scope", "/a/*"), 0);
	EXPECT_EQ(0, bi_glob_cmp("/a/*", "/a/*"));
	/* the order never depends on the argument order */
	EXPECT_EQ(-bi_glob_cmp("/a/*x*", "/a/*y*"), bi_glob_cmp("/a/*y*", "/a/*x*"));
	EXPECT_NE(0, bi_glob_cmp("/a/*x*", "/a/*y*"));
}

/*
 * The order's steps one at a time, and its consistency over random pairs:
 * antisymmetric, zero only for the same glob.
 */
TEST(order_steps_and_consistency)
{
	static const char *const gw[] = {
		"/", "/a", "/a/*", "/a/**", "/a/b*", "/a/bc*", "/a/*/*", "/a/x*",
		"/a/y*", "/**", "/a/*b", "/*/a", "/a/**/b", "/ab*", "/a*",
	};
	unsigned int i, j;

	EXPECT_GT(bi_glob_cmp("/a/bc*", "/a/b*"), 0);	/* prefix 5 over 4 */
	EXPECT_GT(bi_glob_cmp("/a/b", "/a/b*"), 0);	/* no wildcard: all prefix */
	EXPECT_GT(bi_glob_cmp("/a/*/*", "/a/**"), 0);	/* 2 wildcards each: longer */
	EXPECT_GT(bi_glob_cmp("/a/x*", "/a/y*"), 0);	/* then the lower byte */
	EXPECT_GT(bi_glob_cmp("/a/*", "/a/*/**"), 0);	/* 1 wildcard over 3 */
	for (i = 0; i < sizeof(gw) / sizeof(gw[0]); i++) {
		for (j = 0; j < sizeof(gw) / sizeof(gw[0]); j++) {
			int ab = bi_glob_cmp(gw[i], gw[j]), ba = bi_glob_cmp(gw[j], gw[i]);

			EXPECT_EQ(-ab, ba) TH_LOG("%s %s", gw[i], gw[j]);
			EXPECT_EQ(i == j, ab == 0) TH_LOG("%s %s", gw[i], gw[j]);
		}
	}
}

TEST_HARNESS_MAIN
