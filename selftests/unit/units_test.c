// SPDX-License-Identifier: GPL-2.0
/*
 * units_test.c - the work-unit cost model (kmod/core/units.c) and the rates
 * derived from caps (kmod/core/conf.c): S0-04, S1-05, A-03, A-04, A-10,
 * All expectations are exact.
 */
#include <string.h>
#include "units.h"
#include "conf.h"
#include "kselftest_harness.h"

static struct bi_io mkio(u8 op, u64 bytes, u8 flags)
{
	struct bi_io io = { .bytes = bytes, .op = op, .flags = flags };

	return io;
}

static u64 cost(const struct bi_cost_model *m, u8 op, u64 bytes)
{
	struct bi_io io = mkio(op, bytes, 0);

	return bi_io_units(m, &io);
}

/* S0-04 (d): 512 -> 1; 2048 -> 1; 2049 -> 2; 4 KiB -> 2; 64 KiB -> 32; 1 MiB -> 512; flush -> 1. */
TEST(s0_04_unit_table)
{
	struct bi_cost_model m;

	bi_cost_model_init(&m);
	ASSERT_EQ(2048U, bi_unit_bytes(&m));
	ASSERT_EQ(1ULL, cost(&m, BI_OP_READ, 512));
	ASSERT_EQ(1ULL, cost(&m, BI_OP_READ, 2048));
	ASSERT_EQ(2ULL, cost(&m, BI_OP_READ, 2049));
	ASSERT_EQ(2ULL, cost(&m, BI_OP_READ, 4096));
	ASSERT_EQ(32ULL, cost(&m, BI_OP_READ, 65536));
	ASSERT_EQ(32ULL, cost(&m, BI_OP_WRITE, 65536));	/* "a 64 KB write = 32 write units" */
	ASSERT_EQ(512ULL, cost(&m, BI_OP_READ, 1 << 20));
	ASSERT_EQ(1ULL, cost(&m, BI_OP_FLUSH, 0));
}

/* S0-04 (d): with unit_bytes = 1024, 64 KiB -> 64 (set through the device grammar). */
TEST(s0_04_unit_bytes_1024)
{
	struct bi_dev_conf d;

	bi_dev_conf_init(&d);
	ASSERT_EQ(0, bi_dev_conf_parse(&d, "unit_bytes=1024", 15, NULL));
	ASSERT_EQ(10, d.cost.unit_shift);
	ASSERT_EQ(64ULL, cost(&d.cost, BI_OP_READ, 65536));
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_READ, 1024));
	ASSERT_EQ(2ULL, cost(&d.cost, BI_OP_READ, 1025));
}

/* unit_bytes at both ends of its range, 512 B and 64 KiB. */
TEST(unit_bytes_range_ends)
{
	struct bi_cost_model m;

	bi_cost_model_init(&m);
	m.unit_shift = BI_UNIT_SHIFT_MIN;
	ASSERT_EQ(8ULL, cost(&m, BI_OP_READ, 4096));
	ASSERT_EQ(2048ULL, cost(&m, BI_OP_READ, 1 << 20));
	m.unit_shift = BI_UNIT_SHIFT_MAX;
	ASSERT_EQ(1ULL, cost(&m, BI_OP_READ, 4096));
	ASSERT_EQ(1ULL, cost(&m, BI_OP_READ, 65536));
	ASSERT_EQ(2ULL, cost(&m, BI_OP_READ, 65537));
	ASSERT_EQ(16ULL, cost(&m, BI_OP_READ, 1 << 20));
}

/* S1-05 (d): 0-byte flush -> 1; 3 KB -> 2; 2 KB -> 1. */
TEST(s1_05_token_cost)
{
	struct bi_cost_model m;

	bi_cost_model_init(&m);
	ASSERT_EQ(1ULL, cost(&m, BI_OP_FLUSH, 0));
	ASSERT_EQ(2ULL, cost(&m, BI_OP_READ, 3072));
	ASSERT_EQ(1ULL, cost(&m, BI_OP_READ, 2048));
}

/* 1 MiB is 512 units (binary), not the seed's decimal "500". */
TEST(a_11_binary_units)
{
	struct bi_cost_model m;

	bi_cost_model_init(&m);
	ASSERT_EQ(512ULL, cost(&m, BI_OP_READ, 1048576));
	ASSERT_EQ(489ULL, cost(&m, BI_OP_READ, 1000000));	/* ceil(1e6 / 2048) */
}

/* ceiling with a minimum of one; no wrap-around near U64_MAX. */
TEST(a_15_ceiling_min_one)
{
	ASSERT_EQ(1ULL, bi_bytes_to_units(11, 0));
	ASSERT_EQ(1ULL, bi_bytes_to_units(11, 1));
	ASSERT_EQ(1ULL, bi_bytes_to_units(11, 2047));
	ASSERT_EQ(2ULL, bi_bytes_to_units(11, 2050));
	ASSERT_EQ(1ULL << 53, bi_bytes_to_units(11, U64_MAX));
	ASSERT_EQ((1ULL << 53) - 1, bi_bytes_to_units(11, ((1ULL << 53) - 1) << 11));
}

/*
 * flush and zero-length 1 unit; discard discard_units; write-zeroes
 * as a write of its size (A-17 as amended, io.max's wbps charges its bytes).
 */
TEST(a_17_dataless_bios)
{
	struct bi_dev_conf d;
	struct bi_io io;

	bi_dev_conf_init(&d);
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_FLUSH, 0));
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_READ, 0));
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_WRITE, 0));
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_OTHER, 1 << 20));
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_DISCARD, 1ULL << 30));	/* default 1 */
	ASSERT_EQ(1ULL << 19, cost(&d.cost, BI_OP_WRITE_ZEROES, 1ULL << 30));
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_WRITE_ZEROES, 512));
	ASSERT_EQ(0, bi_dev_conf_parse(&d, "discard_units=8 write_unit_weight=3", 35, NULL));
	ASSERT_EQ(8ULL, cost(&d.cost, BI_OP_DISCARD, 1ULL << 30));
	ASSERT_EQ(6ULL, cost(&d.cost, BI_OP_WRITE_ZEROES, 4096));	/* weighted */
	ASSERT_EQ(3ULL << 19, cost(&d.cost, BI_OP_WRITE_ZEROES, 1ULL << 30));
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_FLUSH, 0));		/* never weighted */
	ASSERT_EQ(1ULL, cost(&d.cost, BI_OP_WRITE, 0));		/* zero-length: 1, unweighted */
	/* A FUA/META bio is SYS-classed but still charged by its size. */
	io = mkio(BI_OP_WRITE, 4096, BI_IO_FUA);
	ASSERT_EQ(6ULL, bi_io_units(&d.cost, &io));
	io = mkio(BI_OP_READ, 4096, BI_IO_META);
	ASSERT_EQ(2ULL, bi_io_units(&d.cost, &io));
}

/* write_unit_weight multiplies data writes only. */
TEST(a_10_write_weight)
{
	struct bi_cost_model m;

	bi_cost_model_init(&m);
	ASSERT_EQ(2ULL, cost(&m, BI_OP_WRITE, 4096));		/* default weight 1 */
	m.write_unit_weight = 3;
	ASSERT_EQ(6ULL, cost(&m, BI_OP_WRITE, 4096));
	ASSERT_EQ(96ULL, cost(&m, BI_OP_WRITE, 65536));
	ASSERT_EQ(2ULL, cost(&m, BI_OP_READ, 4096));
	ASSERT_EQ(3ULL, cost(&m, BI_OP_WRITE, 1));
}

/*
 * The kernel fast path's bi_bio_data_units() counts a data bio exactly as
 * bi_io_units(): every unit size, both directions, a write weight, and
 * sizes around each unit boundary up to the largest bio (2^32 - 512).
 */
TEST(bio_data_units_match_io_units)
{
	static const u32 base[] = { 1, 512, 2048, 4096, 65536, 1U << 20, 0xfffffe00U };
	struct bi_cost_model m;
	unsigned int shift, i, w;
	int delta;

	bi_cost_model_init(&m);
	for (shift = BI_UNIT_SHIFT_MIN; shift <= BI_UNIT_SHIFT_MAX; shift++) {
		m.unit_shift = shift;
		for (w = 1; w <= 3; w += 2) {
			m.write_unit_weight = w;
			for (i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
				for (delta = -1; delta <= 1; delta++) {
					u32 b = base[i] + delta;

					if (!b || (delta > 0 && b < base[i]))
						continue;
					ASSERT_EQ(cost(&m, BI_OP_READ, b),
						  bi_bio_data_units(&m, false, b));
					ASSERT_EQ(cost(&m, BI_OP_WRITE, b),
						  bi_bio_data_units(&m, true, b));
				}
			}
		}
	}
}

/*
 * Request keys: one token per bio the lower device sees, whatever its size
 * (S0-05, A-42); a bio the glue did not split counts one.
 */
TEST(request_cost_is_one)
{
	struct bi_io small = mkio(BI_OP_READ, 4096, 0);
	struct bi_io big = mkio(BI_OP_WRITE, 1 << 20, 0);
	struct bi_io flush = mkio(BI_OP_FLUSH, 0, BI_IO_PREFLUSH);

	ASSERT_EQ(1ULL, bi_io_requests(&small));
	ASSERT_EQ(1ULL, bi_io_requests(&big));
	ASSERT_EQ(1ULL, bi_io_requests(&flush));
	big.lower_bios = 256;
	ASSERT_EQ(256ULL, bi_io_requests(&big));
}

/* Brute force: the block layer's pieces, one at a time. */
static u32 split_by_walking(u64 sector, u32 sectors, u32 max, u32 chunk)
{
	u32 n = 0;

	while (sectors) {
		u64 piece = max;

		if (chunk && chunk - sector % chunk < piece)
			piece = chunk - sector % chunk;
		if (piece > sectors)
			piece = sectors;
		sector += piece;
		sectors -= (u32)piece;
		n++;
	}
	return n ? n : 1;
}

/*
 * bi_split_count: a 1 MiB bio at max_sectors_kb=4 is 256 bios; chunk
 * boundaries add pieces; equal to walking the pieces for 20,000 random
 * shapes (chunks of 8..1024 sectors, power of two or not).
 */
TEST(split_count_matches_the_block_layers_pieces)
{
	u64 seed = 15;
	int i;

	ASSERT_EQ(256U, bi_split_count(0, 2048, 8, 0));
	ASSERT_EQ(1U, bi_split_count(12345, 2048, 2560, 0));
	ASSERT_EQ(2U, bi_split_count(128, 256, 2560, 256));	/* crosses one boundary */
	ASSERT_EQ(1U, bi_split_count(0, 0, 8, 0));
	/* no limit given (0) is a limit of one sector; a chunk of 1 is none */
	ASSERT_EQ(5U, bi_split_count(3, 5, 0, 0));
	ASSERT_EQ(5U, bi_split_count(3, 5, 0, 4));
	ASSERT_EQ(1U, bi_split_count(3, 8, 64, 1));
	ASSERT_EQ(2U, bi_split_count(3, 65, 64, 1));
	for (i = 0; i < 20000; i++) {
		u64 sector;
		u32 sectors, max, chunk;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		sector = (seed >> 20) % (1ULL << 30);
		sectors = 1 + (u32)((seed >> 8) % 8192);
		max = 1 + (u32)((seed >> 40) % 2560);
		chunk = (seed >> 60) & 1 ? 0 : 8 + (u32)((seed >> 50) % 1017);
		ASSERT_EQ(split_by_walking(sector, sectors, max, chunk),
			  bi_split_count(sector, sectors, max, chunk));
	}
}

TEST(direction_of_ops)
{
	struct bi_io io = mkio(BI_OP_READ, 0, 0);

	ASSERT_EQ(BI_DIR_READ, bi_io_dir(&io));
	io.op = BI_OP_OTHER;
	ASSERT_EQ(BI_DIR_READ, bi_io_dir(&io));
	io.op = BI_OP_WRITE;
	ASSERT_EQ(BI_DIR_WRITE, bi_io_dir(&io));
	io.op = BI_OP_DISCARD;
	ASSERT_EQ(BI_DIR_WRITE, bi_io_dir(&io));
	io.op = BI_OP_WRITE_ZEROES;
	ASSERT_EQ(BI_DIR_WRITE, bi_io_dir(&io));
	io.op = BI_OP_FLUSH;
	ASSERT_EQ(BI_DIR_WRITE, bi_io_dir(&io));
}

static struct bi_tenant_conf tconf(const char *line)
{
	struct bi_tenant_conf c;
	struct bi_parse_err err;
	int rc;

	bi_tenant_conf_init(&c);
	rc = bi_conf_parse(&c, line, strlen(line), &err);
	if (rc)
		fprintf(stderr, "parse '%s': %s\n", line, err.msg);
	return c;
}

/* The effective unit rate: the tighter of runits and rbps/unit_bytes. */
TEST(rate_units_min_of_caps)
{
	struct bi_cost_model m;
	struct bi_tenant_conf c;

	bi_cost_model_init(&m);
	c = tconf("");
	ASSERT_EQ(BI_CONF_UNLIMITED, bi_conf_rate_units(&c, &m, BI_DIR_READ));
	c = tconf("rbps=1M");
	ASSERT_EQ(512ULL, bi_conf_rate_units(&c, &m, BI_DIR_READ));
	ASSERT_EQ(BI_CONF_UNLIMITED, bi_conf_rate_units(&c, &m, BI_DIR_WRITE));
	c = tconf("runits=1000 rbps=1M");
	ASSERT_EQ(512ULL, bi_conf_rate_units(&c, &m, BI_DIR_READ));
	c = tconf("runits=300 rbps=1M");
	ASSERT_EQ(300ULL, bi_conf_rate_units(&c, &m, BI_DIR_READ));
	/* S0-01 (d): 4000 units/s = 8.19 MB/s = 8192000 bytes/s. */
	c = tconf("wbps=8192000");
	ASSERT_EQ(4000ULL, bi_conf_rate_units(&c, &m, BI_DIR_WRITE));
	/* Weighted writes: 1 MiB/s of weight-2 writes is 1024 units/s. */
	m.write_unit_weight = 2;
	c = tconf("wbps=1M rbps=1M");
	ASSERT_EQ(1024ULL, bi_conf_rate_units(&c, &m, BI_DIR_WRITE));
	ASSERT_EQ(512ULL, bi_conf_rate_units(&c, &m, BI_DIR_READ));
	/* A bytes cap below one unit/s still admits one unit per second. */
	c = tconf("rbps=100");
	ASSERT_EQ(1ULL, bi_conf_rate_units(&c, &m, BI_DIR_READ));
	c = tconf("riops=300 wiops=100");
	ASSERT_EQ(300ULL, bi_conf_rate_requests(&c, BI_DIR_READ));
	ASSERT_EQ(100ULL, bi_conf_rate_requests(&c, BI_DIR_WRITE));
	ASSERT_EQ(BI_CONF_UNLIMITED, bi_conf_rate_units(&c, &m, BI_DIR_READ));
}

/* capacity = rate * burst_ms: 500 ms at 100/s -> 50, 50 ms -> 5. */
TEST(a_03_capacity)
{
	struct bi_tenant_conf c = tconf("burst_ms=500");

	ASSERT_EQ(50ULL, bi_conf_capacity(&c, 100));
	c = tconf("");
	ASSERT_EQ(5ULL, bi_conf_capacity(&c, 100));
	ASSERT_EQ(1ULL, bi_conf_capacity(&c, 10));	/* at least one token */
	ASSERT_EQ(BI_CONF_UNLIMITED, bi_conf_capacity(&c, BI_CONF_UNLIMITED));
	ASSERT_EQ((1ULL << 40) * 50 / 1000, bi_conf_capacity(&c, BI_CONF_RATE_MAX));
}

/* burst_limit auto = max(3, 5 % of the request cap). */
TEST(a_04_burst_limit)
{
	struct bi_tenant_conf c = tconf("riops=100 wiops=1000");

	ASSERT_EQ(5ULL, bi_conf_burst_limit(&c, BI_DIR_READ));
	ASSERT_EQ(50ULL, bi_conf_burst_limit(&c, BI_DIR_WRITE));
	c = tconf("riops=20");
	ASSERT_EQ(3ULL, bi_conf_burst_limit(&c, BI_DIR_READ));
	ASSERT_EQ(BI_CONF_UNLIMITED, bi_conf_burst_limit(&c, BI_DIR_WRITE));
	c = tconf("riops=20 burst_limit=7");
	ASSERT_EQ(7ULL, bi_conf_burst_limit(&c, BI_DIR_READ));
}

TEST(device_derived_values)
{
	struct bi_dev_conf d;
	struct bi_tenant_conf c = tconf("");

	bi_dev_conf_init(&d);
	ASSERT_EQ(100U, bi_dev_conf_hold_ms(&d));		/* auto = one tick */
	ASSERT_EQ(0, bi_dev_conf_parse(&d, "hold_ms=30 local_max_pct=50", 28, NULL));
	ASSERT_EQ(30U, bi_dev_conf_hold_ms(&d));
	ASSERT_EQ(50ULL, bi_dev_conf_local_max(&d, 100));
	ASSERT_EQ(1ULL, bi_dev_conf_local_max(&d, 1));
	ASSERT_EQ(0, bi_dev_conf_parse(&d, "local_max_pct=6", 15, NULL));
	ASSERT_EQ(6000ULL, bi_dev_conf_local_max(&d, 100000));	/* 6 % exactly */
	ASSERT_EQ(400U, bi_conf_delay_max_us(&c, 200));	/* 2 x latency */
	ASSERT_EQ(50000U, bi_conf_delay_max_us(&c, 1000000));	/* capped, A-32 */
	ASSERT_EQ(1U, bi_conf_delay_max_us(&c, 0));		/* at least 1 us */
	c = tconf("delay_max_us=777");
	ASSERT_EQ(777U, bi_conf_delay_max_us(&c, 200));
}

TEST_HARNESS_MAIN
