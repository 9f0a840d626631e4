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
 * one token" of S1-05); so does a zero-length write, unweighted.  Discard and write-zeroes move no payload either;
 * their cost is the device's discard_units.  Only data writes are weighted:
 * the weight models write amplification of the payload.
 */
u64 bi_io_units(const struct bi_cost_model *model, const struct bi_io *io)
{
	switch (io->op) {
	case BI_OP_READ:
		return bi_bytes_to_units(model->unit_shift, io->bytes);
	case BI_OP_DISCARD:
	case BI_OP_WRITE_ZEROES:
		return model->discard_units;
	case BI_OP_WRITE:
		if (!io->bytes)
			return 1;
		return bi_bytes_to_units(model->unit_shift, io->bytes) *
			model->write_unit_weight;
	default:	/* flush, other, unknown */
		return 1;
	}
}

/* Request mode (S0-05, A-42): one token per bio, whatever its size. */
u64 bi_io_requests(const struct bi_io *io)
{
	(void)io;
	return BI_REQUEST_COST;
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
