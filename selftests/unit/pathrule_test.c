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

TEST_HARNESS_MAIN
