// SPDX-License-Identifier: GPL-2.0
/*
 * units.c - the work-unit cost of a bio (S0-04, S1-05, A-10, A-11, A-15,
 * See units.h for the model; this file only computes it.
 */
#include "units.h"

void bi_cost_model_init(struct bi_cost_model *model)
{
	model->unit_shift = BI_UNIT_SHIFT_DEFAULT;
	model->discard_units = BI_DISCARD_UNITS_DEFAULT;
	model->write_unit_weight = BI_WRITE_WEIGHT_DEFAULT;
}

/*
 * Work units charged for one bio.  Flushes (and a zero-length anything) cost
 * one unit: they move no data but still occupy the device (A-17, "at least
 * one token" of S1-05); so does a zero-length write, unweighted.  A discard
 * moves no payload either: its cost is the device's discard_units.  A
 * write-zeroes costs what a write of its size does (A-17 as amended: many
 * devices write every block of it, a SCSI WRITE SAME or a drive without
 * deallocation, and io.max charges its bytes to wbps, so at one unit a
 * capped tenant's fallocate -z or BLKZEROOUT wrote gigabytes past its cap).
 * Data writes are weighted: the weight models write amplification of the
 * payload.
 */
u64 bi_io_units(const struct bi_cost_model *model, const struct bi_io *io)
{
	switch (io->op) {
	case BI_OP_READ:
		return bi_bytes_to_units(model->unit_shift, io->bytes);
	case BI_OP_DISCARD:
		return model->discard_units;
	case BI_OP_WRITE_ZEROES:
	case BI_OP_WRITE:
		if (!io->bytes)
			return 1;
		return bi_bytes_to_units(model->unit_shift, io->bytes) *
			model->write_unit_weight;
	default:	/* flush, other, unknown */
		return 1;
	}
}

/*
 * Request keys (riops/wiops, request mode; S0-05, A-42): one token per bio
 * the lower device sees, whatever its size: the glue's split count
 * (bi_split_count), at least one.
 */
u64 bi_io_requests(const struct bi_io *io)
{
	return io->lower_bios ? io->lower_bios : BI_REQUEST_COST;
}

/*
 * bi_split_count - how many bios a read or write of @sectors at @sector
 * becomes at a queue that takes at most @max_sectors per bio and splits at
 * every @chunk_sectors boundary (0: none), as the block layer splits it
 * (blk_max_size_offset(): each piece ends at the chunk boundary or after
 * max_sectors, whichever comes first).  From the size and the limits only:
 * splits for segment limits (max_segments, max_segment_size) are not
 * counted.  O(1): the first and last partial chunks and the full chunks
 * between.  At least 1; saturates at U32_MAX.
 */
u32 bi_split_count(u64 sector, u32 sectors, u32 max_sectors, u32 chunk_sectors)
{
	u64 n, first, rest, full;

	if (!max_sectors)
		max_sectors = 1;
	if (!chunk_sectors || chunk_sectors <= 1)
		return sectors <= max_sectors ? 1 :
			(u32)(((u64)sectors + max_sectors - 1) / max_sectors);
	first = chunk_sectors - sector % chunk_sectors;
	if (sectors <= first)
		return sectors <= max_sectors ? 1 :
			(u32)(((u64)sectors + max_sectors - 1) / max_sectors);
	n = (first + max_sectors - 1) / max_sectors;
	rest = sectors - first;
	full = rest / chunk_sectors;
	n += full * ((chunk_sectors + (u64)max_sectors - 1) / max_sectors);
	rest %= chunk_sectors;
	n += (rest + max_sectors - 1) / max_sectors;
	return n > U32_MAX ? U32_MAX : (u32)n;
}

/*
 * A bytes/s cap as a work-unit rate: floor(bps / unit_bytes), weighted like
 * the bios it limits, and never below 1 unit/s (a non-zero cap must admit
 * something).  Rounding down keeps the converted cap at or below the bytes
 * cap.  bps is bounded by the grammar (BI_CONF_BPS_MAX), so the product
 * cannot overflow.
 */
u64 bi_bps_to_units(const struct bi_cost_model *model, enum bi_dir dir, u64 bps)
{
	u64 units = bps >> model->unit_shift;

	if (dir == BI_DIR_WRITE)
		units *= model->write_unit_weight;
	return units ? units : 1;
}
