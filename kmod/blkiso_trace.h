/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkiso_trace.h - tracepoints of the blkiso target (tracefs events
 * blkiso/blkiso_{charge,park,dispatch,reject,complete}).
 *
 * Each event names the dm device, the tenant's cgroup id (0: the kernel
 * tenant), the bio's direction and size in work units; disabled, each costs
 * one patched-out branch.  Defined in blkiso_target.c (CREATE_TRACE_POINTS).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM blkiso

#if !defined(BLKISO_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define BLKISO_TRACE_H

#include <linux/tracepoint.h>
#include <linux/kdev_t.h>

DECLARE_EVENT_CLASS(blkiso_bio_class,
	TP_PROTO(dev_t devt, u64 cgid, u8 dir, u64 units),
	TP_ARGS(devt, cgid, dir, units),
	TP_STRUCT__entry(
		__field(dev_t, devt)
		__field(u64, cgid)
		__field(u8, dir)
		__field(u64, units)
	),
	TP_fast_assign(
		__entry->devt = devt;
		__entry->cgid = cgid;
		__entry->dir = dir;
		__entry->units = units;
	),
	TP_printk("dev=%u:%u cgid=%llu %s units=%llu",
		  MAJOR(__entry->devt), MINOR(__entry->devt), __entry->cgid,
		  __entry->dir ? "write" : "read", __entry->units)
);

/* Admitted at submission (charged at once). */
DEFINE_EVENT(blkiso_bio_class, blkiso_charge,
	TP_PROTO(dev_t devt, u64 cgid, u8 dir, u64 units),
	TP_ARGS(devt, cgid, dir, units));

/* Not admitted: parked on its tenant's queue. */
DEFINE_EVENT(blkiso_bio_class, blkiso_park,
	TP_PROTO(dev_t devt, u64 cgid, u8 dir, u64 units),
	TP_ARGS(devt, cgid, dir, units));

/* Released from the queue to the lower device. */
DEFINE_EVENT(blkiso_bio_class, blkiso_dispatch,
	TP_PROTO(dev_t devt, u64 cgid, u8 dir, u64 units),
	TP_ARGS(devt, cgid, dir, units));

/* Refused: REQ_NOWAIT (BLK_STS_AGAIN) or reject mode/policy (IOERR). */
DEFINE_EVENT(blkiso_bio_class, blkiso_reject,
	TP_PROTO(dev_t devt, u64 cgid, u8 dir, u64 units),
	TP_ARGS(devt, cgid, dir, units));

TRACE_EVENT(blkiso_complete,
	TP_PROTO(dev_t devt, u64 cgid, u8 dir, u64 units, u64 lat_ns, int error),
	TP_ARGS(devt, cgid, dir, units, lat_ns, error),
	TP_STRUCT__entry(
		__field(dev_t, devt)
		__field(u64, cgid)
		__field(u8, dir)
		__field(u64, units)
		__field(u64, lat_ns)
		__field(int, error)
	),
	TP_fast_assign(
		__entry->devt = devt;
		__entry->cgid = cgid;
		__entry->dir = dir;
		__entry->units = units;
		__entry->lat_ns = lat_ns;
		__entry->error = error;
	),
	TP_printk("dev=%u:%u cgid=%llu %s units=%llu lat_ns=%llu error=%d",
		  MAJOR(__entry->devt), MINOR(__entry->devt), __entry->cgid,
		  __entry->dir ? "write" : "read", __entry->units,
		  __entry->lat_ns, __entry->error)
);

#endif /* BLKISO_TRACE_H */

/* Out of tree: the header is found next to the file that defines it. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE blkiso_trace
#include <trace/define_trace.h>
