// SPDX-License-Identifier: GPL-2.0
/*
 * glob_fuzz.c - libFuzzer target for the cgroup path globs of device-level
 * rules (kmod/core/pathrule.c), which the kernel runs on root's input at
 * configuration and on cgroup paths in .map.
 *
 * Input: a glob, a newline, a cgroup path (each cut to its buffer).
 * Invariants:
 *   - bi_glob_check() reads only its @len bytes (ASan) and a refusal
 *     carries a NUL-terminated message;
 *   - a valid glob without '*' matches exactly the path of the same text;
 *   - "/" followed by "**" matches every path but "/";
 *   - bi_glob_cmp() is 0 on the same glob and antisymmetric, and
 *     bi_glob_best() picks a matching glob whenever one matches.
 */
#include <stdint.h>
#include <string.h>
#include "pathrule.h"

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

/* An absolute path with no empty component, as kernfs builds them. */
static int is_cgroup_path(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/')
		return 0;
	if (n == 1)
		return 1;
	return p[n - 1] != '/' && !strstr(p, "//");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char glob[BI_GLOB_MAX + 8], path[512];
	const char *globs[2];
	struct bi_parse_err err;
	size_t gl = 0, pl = 0, i = 0;
	int ok, best;

	while (i < size && data[i] != '\n' && gl < sizeof(glob) - 1)
		glob[gl++] = data[i++];
	glob[gl] = '\0';
	while (i < size && data[i] == '\n')
		i++;
	while (i < size && pl < sizeof(path) - 1)
		path[pl++] = data[i++] ? data[i - 1] : '_';
	path[pl] = '\0';
	if (memchr(glob, '\0', gl))
		return 0;

	ok = !bi_glob_check(glob, gl, &err);
	if (!ok) {
		CHECK(memchr(err.msg, '\0', sizeof(err.msg)));
		return 0;
	}
	if (!is_cgroup_path(path))
		return 0;
	if (!strchr(glob, '*'))
		CHECK(bi_glob_match(glob, path) == !strcmp(glob, path));
	CHECK(bi_glob_match("/**", path) == (strcmp(path, "/") != 0));
	CHECK(bi_glob_cmp(glob, glob) == 0);
	CHECK(bi_glob_cmp(glob, "/**") == -bi_glob_cmp("/**", glob));
	globs[0] = "/**";
	globs[1] = glob;
	best = bi_glob_best(globs, 2, path);
	if (bi_glob_match(glob, path) || bi_glob_match("/**", path))
		CHECK(best >= 0 && bi_glob_match(globs[best], path));
	else
		CHECK(best == -1);
	return 0;
}
