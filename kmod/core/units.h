/* SPDX-License-Identifier: GPL-2.0 */
/*
 * units.h - the work-unit cost model: what one bio costs (S0-04, S1-05).
 *
 * Tokens are work units, not requests: units = max(1, ceil(bytes /
 * unit_bytes)) with unit_bytes = 2048 by default, so 4 KiB = 2, 64 KiB = 32
 * and 1 MiB = 512 units (exact binary arithmetic, A-11; ceiling with a
 * minimum of one, A-15).  Bios that move no data cost a fixed amount:
 * flushes and zero-length bios 1 unit, discard and write-zeroes
 * discard_units.  Data writes are multiplied by write_unit_weight.
 * In request mode every bio costs one request token.
 */
#ifndef BLKISO_UNITS_H
#define BLKISO_UNITS_H

#include "bi_shim.h"
#include "io.h"

/* unit_bytes is a power of two in [512, 65536], stored as its shift. */
#define BI_UNIT_SHIFT_MIN	9
#define BI_UNIT_SHIFT_MAX	16
#define BI_UNIT_SHIFT_DEFAULT	11	/* 2048 bytes, seed 000's storage example */

#define BI_DISCARD_UNITS_DEFAULT	1
#define BI_DISCARD_UNITS_MAX		65536
#define BI_WRITE_WEIGHT_DEFAULT		1
#define BI_WRITE_WEIGHT_MAX		16

/*
 * Cost of one request in request mode (S0-05: each request consumes one
 * token); a bio costs one per bio the lower device sees (bi_io_requests).
 */
#define BI_REQUEST_COST		1

/* A device's cost model; part of struct bi_dev_conf. */
struct bi_cost_model {
	u8 unit_shift;		/* log2(unit_bytes) */
	u32 discard_units;	/* cost of a discard or write-zeroes bio */
	u32 write_unit_weight;	/* data writes cost this many times their size */
};

/*
 * Concurrency contract for everything below: pure functions of their
 * arguments; any context (submission, completion, tick).  The caller keeps
 * *model stable for the duration of the call (it is only rewritten by a
 * configuration commit under the device's config lock).
 */
void bi_cost_model_init(struct bi_cost_model *model);
u64 bi_io_units(const struct bi_cost_model *model, const struct bi_io *io);
u64 bi_io_requests(const struct bi_io *io);
u32 bi_split_count(u64 sector, u32 sectors, u32 max_sectors, u32 chunk_sectors);
u64 bi_bps_to_units(const struct bi_cost_model *model, enum bi_dir dir, u64 bps);

/*
 * max(1, ceil(bytes / 2^unit_shift)).  Written without "bytes + unit - 1"
 * so that bytes near U64_MAX cannot wrap.
 */
static inline u64 bi_bytes_to_units(u8 unit_shift, u64 bytes)
{
	u64 units = bytes >> unit_shift;

	if (bytes & ((1ULL << unit_shift) - 1))
		units++;
	return units ? units : 1;
}

/*
 * bi_io_units() of a data read or write (A-10: writes weighted) of a bio's
 * 0 < @bytes < 2^32, for the kernel's fast path: widened to 64 bits the
 * rounding up cannot wrap and gives at least 1, so neither of
 * bi_bytes_to_units()' guards is needed (7 instructions a bio).  Unit test:
 * units_test's bio_data_units_match_io_units.
 */
static inline u64 bi_bio_data_units(const struct bi_cost_model *model, bool write, u32 bytes)
{
	u64 units = ((u64)bytes + (1ULL << model->unit_shift) - 1) >> model->unit_shift;

	return write ? units * model->write_unit_weight : units;
}

static inline u32 bi_unit_bytes(const struct bi_cost_model *model)
{
	return 1U << model->unit_shift;
}

#endif /* BLKISO_UNITS_H */
