// SPDX-License-Identifier: GPL-2.0
/*
 * blkiso_target.c - the "blkiso" device-mapper target.
 *
 * Table line (dm-linear compatible, so a blkiso segment can replace a
 * linear one live):
 *
 *	<dev> <offset> [<#params> <key=value>...]
 *
 * Every bio of the mapped device passes blkiso_map(); at this stage the
 * target remaps it to the lower device as dm-linear does.
 */
#include <linux/module.h>
#include <linux/device-mapper.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/slab.h>

#include "blkiso.h"
#include "compat.h"

#define DM_MSG_PREFIX "blkiso"

struct blkiso_target {
	struct dm_dev *dev;
	sector_t start;		/* offset into the lower device, in sectors */
};

static int blkiso_parse_params(struct dm_target *ti, unsigned int argc,
			       char **argv)
{
	unsigned int nr_params;
	char dummy;

	if (argc == 0)
		return 0;
	if (sscanf(argv[0], "%u%c", &nr_params, &dummy) != 1 ||
	    nr_params != argc - 1) {
		ti->error = "Parameter count does not match the parameters that follow it";
		return -EINVAL;
	}
	if (nr_params) {
		/* No device parameter is defined yet. */
		ti->error = "Unknown device parameter";
		return -EINVAL;
	}
	return 0;
}

static int blkiso_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct blkiso_target *bt;
	unsigned long long start;
	blkiso_mode_t mode;
	char dummy;
	int ret;

	if (argc < 2) {
		ti->error = "Expected <dev> <offset> [<#params> <key=value>...]";
		return -EINVAL;
	}
	if (sscanf(argv[1], "%llu%c", &start, &dummy) != 1 ||
	    start != (sector_t)start) {
		ti->error = "Invalid device sector offset";
		return -EINVAL;
	}
	ret = blkiso_parse_params(ti, argc - 2, argv + 2);
	if (ret)
		return ret;

	bt = kzalloc(sizeof(*bt), GFP_KERNEL);
	if (!bt) {
		ti->error = "Cannot allocate blkiso context";
		return -ENOMEM;
	}
	bt->start = start;

	mode = dm_table_get_mode(ti->table);
	ret = dm_get_device(ti, argv[0], mode, &bt->dev);
	if (ret) {
		ti->error = "Device lookup failed";
		goto free_bt;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->private = bt;
	return 0;

free_bt:
	kfree(bt);
	return ret;
}

static void blkiso_dtr(struct dm_target *ti)
{
	struct blkiso_target *bt = ti->private;

	dm_put_device(ti, bt->dev);
	kfree(bt);
}

static int blkiso_map(struct dm_target *ti, struct bio *bio)
{
	struct blkiso_target *bt = ti->private;

	bio_set_dev(bio, bt->dev->bdev);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = bt->start +
			dm_target_offset(ti, bio->bi_iter.bi_sector);
	return DM_MAPIO_REMAPPED;
}

static void blkiso_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct blkiso_target *bt = ti->private;
	size_t sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		result[0] = '\0';
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s %llu", bt->dev->name, (unsigned long long)bt->start);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,start=%llu;", bt->dev->name,
		       (unsigned long long)bt->start);
		break;
	}
}

static int blkiso_prepare_ioctl(struct dm_target *ti,
				struct block_device **bdev)
{
	struct blkiso_target *bt = ti->private;

	*bdev = bt->dev->bdev;
	/* Pass ioctls through only when the whole device is mapped. */
	if (bt->start || ti->len != bdev_nr_sectors(bt->dev->bdev))
		return 1;
	return 0;
}

static int blkiso_iterate_devices(struct dm_target *ti,
				  iterate_devices_callout_fn fn, void *data)
{
	struct blkiso_target *bt = ti->private;

	return fn(ti, bt->dev, bt->start, ti->len, data);
}

static struct target_type blkiso_target_type = {
	.name = "blkiso",
	.version = {0, 1, 0},
	.features = DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = blkiso_ctr,
	.dtr = blkiso_dtr,
	.map = blkiso_map,
	.status = blkiso_status,
	.prepare_ioctl = blkiso_prepare_ioctl,
	.iterate_devices = blkiso_iterate_devices,
};

int blkiso_target_init(void)
{
	int ret = dm_register_target(&blkiso_target_type);

	if (ret < 0)
		DMERR("register failed %d", ret);
	return ret;
}

void blkiso_target_exit(void)
{
	dm_unregister_target(&blkiso_target_type);
}
