// SPDX-License-Identifier: GPL-2.0
/*
 * grammar_fuzz.c - libFuzzer target for the key=value grammar
 * (kmod/core/grammar.c).
 *
 * Input: byte 0 picks tenant or device line, parse or merge, whether the
 * conf starts non-default, and whether the rest is the line itself or a
 * list of indices into a vocabulary of keys, words, numbers and separators
 * (so the fuzzer reaches deep into valid lines without a dictionary).
 * Invariants:
 *   - failure: the destination is byte-identical, the message is
 *     NUL-terminated and the blamed token lies inside the line;
 *   - success: the canonical form fits one line (< 512 bytes), parses back
 *     to the identical conf, and prints identically (a fixed point);
 *   - formatting into any smaller buffer returns -E2BIG with a
 *     NUL-terminated prefix of the canonical line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conf.h"

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

static const char tenant_base[] =
	"riops=100 wbps=1M hi.policy=lo,mid mid.min=-5 floor=-100 r4=lo:write,4K- "
	"min_tokens=0 mode=auto rdef=lo slots=8";
static const char dev_base[] = "unit_bytes=4K tick_ms=10 reject_mode=1 mult_down=20";

static const char *const vocab[] = {
	" ", " ", " ", "=", ",", ":", "-", "\t", "\n", "0", "1", "2", "3", "5", "7",
	"9", "K", "M", "G", "T", "k", "x", "+", "-1", "4K", "64K", "512K", "1M",
	"4G", "512", "2048", "65536", "1099511627776", "1125899906842624",
	"9223372036854775807", "9223372036854775808", "18446744073709551615",
	"18446744073709551616", "max", "none", "auto", "inherit", "default",
	"hi", "mid", "lo", "sys", "read", "write", "discard", "wzero", "other",
	"flush", "sync", "async", "rt", "be", "idle", "same", "spill", "delay",
	"reject", "units", "iops", "wc", "strict", "work", "request", "ewma",
	"exact", "hi,mid,lo", "lo,hi", "hi:read,sync,-64K", "lo:512K-",
};

/* Decode index bytes into a line: key names (with '=') and vocab pieces. */
static uint32_t decode(bool dev, const uint8_t *in, size_t n, char *line,
		       uint32_t cap)
{
	uint32_t nkeys = dev ? bi_dev_conf_nr_keys() : bi_conf_nr_keys();
	uint32_t nv = sizeof(vocab) / sizeof(vocab[0]), len = 0, i, k;
	const char *piece;
	char tmp[64];

	for (i = 0; i < n; i++) {
		k = in[i] % (nkeys + nv);
		if (k < nkeys) {
			const char *name = dev ? bi_dev_conf_key_name(k) :
						 bi_conf_key_name(k);

			snprintf(tmp, sizeof(tmp), " %s=", name);
			piece = tmp;
		} else {
			piece = vocab[k - nkeys];
		}
		if (len + strlen(piece) > cap)
			break;
		memcpy(line + len, piece, strlen(piece));
		len += strlen(piece);
	}
	return len;
}

struct conf {
	union {
		struct bi_tenant_conf t;
		struct bi_dev_conf d;
	};
};

static int do_parse(bool dev, bool merge, struct conf *c, const char *s,
		    uint32_t n, struct bi_parse_err *err)
{
	if (dev)
		return merge ? bi_dev_conf_merge(&c->d, s, n, err) :
			       bi_dev_conf_parse(&c->d, s, n, err);
	return merge ? bi_conf_merge(&c->t, s, n, err) :
		       bi_conf_parse(&c->t, s, n, err);
}

static int do_format(bool dev, const struct conf *c, char *buf, uint32_t size)
{
	return dev ? bi_dev_conf_format(&c->d, buf, size) :
		     bi_conf_format(&c->t, buf, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[BI_CONF_LINE_MAX], out2[BI_CONF_LINE_MAX], small[BI_CONF_LINE_MAX];
	struct bi_parse_err err;
	struct conf c, before, c2;
	bool dev, merge;
	size_t csize;
	uint32_t n, cut;
	char *line;
	int rc, len;

	if (!size)
		return 0;
	dev = data[0] & 1;
	merge = data[0] & 2;
	csize = dev ? sizeof(c.d) : sizeof(c.t);
	memset(&c, 0, sizeof(c));
	if (dev)
		bi_dev_conf_init(&c.d);
	else
		bi_tenant_conf_init(&c.t);
	if (data[0] & 4) {
		const char *base = dev ? dev_base : tenant_base;

		CHECK(do_parse(dev, false, &c, base, strlen(base), NULL) == 0);
	}
	/* a private, unterminated copy so ASan sees any over-read */
	if (data[0] & 8) {
		char buf[4096];

		n = decode(dev, data + 1, size - 1, buf, sizeof(buf));
		line = malloc(n ? n : 1);
		if (!line)
			return 0;
		memcpy(line, buf, n);
	} else {
		n = size - 1;
		line = malloc(n ? n : 1);
		if (!line)
			return 0;
		memcpy(line, data + 1, n);
	}

	before = c;
	memset(&err, 0xa5, sizeof(err));
	rc = do_parse(dev, merge, &c, line, n, &err);
	if (rc) {
		CHECK(rc < 0);
		CHECK(!memcmp(&c, &before, csize));
		CHECK(err.code != BI_PE_OK);
		CHECK(memchr(err.msg, '\0', sizeof(err.msg)));
		CHECK(err.pos <= n && err.len <= n - err.pos);
		free(line);
		return 0;
	}
	CHECK(err.code == BI_PE_OK && err.msg[0] == '\0');
	free(line);

	len = do_format(dev, &c, out, sizeof(out));
	CHECK(len >= 0 && len < BI_CONF_LINE_MAX && (size_t)len == strlen(out));
	CHECK(do_format(dev, &c, NULL, 0) == len);

	memset(&c2, 0x3c, sizeof(c2));
	CHECK(do_parse(dev, false, &c2, out, len, NULL) == 0);
	CHECK(!memcmp(&c, &c2, csize));
	CHECK(do_format(dev, &c2, out2, sizeof(out2)) == len);
	CHECK(!strcmp(out, out2));
	/* merging the canonical line onto the conf itself changes nothing */
	c2 = c;
	CHECK(do_parse(dev, true, &c2, out, len, NULL) == 0);
	CHECK(!memcmp(&c, &c2, csize));

	cut = size > 1 ? data[1] : 0;
	if (cut && cut <= (uint32_t)len) {
		CHECK(do_format(dev, &c, small, cut) == -BI_E2BIG);
		CHECK(strlen(small) == cut - 1 && !strncmp(small, out, cut - 1));
	}
	return 0;
}
