/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pathrule.h - cgroup path globs of the device-level rules ("rule <glob>
 * key=value..."): which globs are valid, whether a glob matches a cgroup
 * path, and which of several matching globs is the most specific.
 *
 * A glob is an absolute cgroup path ("/system.slice/docker-*.scope").  "*"
 * matches any run of characters within one path component (not "/");
 * "**", alone as a whole component, matches zero or more components, and
 * at the end of a glob one or more: "/a/" followed by "**" is everything
 * below /a, not /a itself (as in .gitignore).
 * Every other character is literal.  Of the globs matching a path, the most
 * specific wins: the longest literal prefix (characters before the first
 * "*"), then the fewest wildcards ("**" counts two), then the longest glob, then the
 * byte-wise smaller glob (so the choice never depends on the order rules
 * were added).
 */
#ifndef BLKISO_PATHRULE_H
#define BLKISO_PATHRULE_H

#include "bi_shim.h"
#include "conf.h"

/* A glob's longest text, with its NUL. */
#define BI_GLOB_MAX	256
/* Rules per device. */
#define BI_RULES_MAX	64

/*
 * 0 if @glob (@len bytes, no NUL needed) is a valid glob; else -BI_EINVAL
 * and @err->msg names the glob and says why ("...: '**' must be a whole
 * component").
 */
int bi_glob_check(const char *glob, u32 len, struct bi_parse_err *err);

/* Does the valid, NUL-terminated @glob match the cgroup path @path ("/a/b", "/")? */
bool bi_glob_match(const char *glob, const char *path);

/* > 0 if glob @a is more specific than @b, < 0 if less, 0 if the same glob. */
int bi_glob_cmp(const char *a, const char *b);

/*
 * The index of the most specific of @n globs that matches @path, or -1.
 * @globs[i] may be NULL (a free slot).
 */
int bi_glob_best(const char *const *globs, u32 n, const char *path);

#endif /* BLKISO_PATHRULE_H */
