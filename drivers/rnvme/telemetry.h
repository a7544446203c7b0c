/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnvme telemetry: per-queue counters and latency histograms
 * (Documentation/rnvme.rst, "Telemetry"; read through sysfs, telemetry.c).
 *
 * Who writes what, so that no count is lost and no cache line is written by
 * every CPU:
 *   sub  the submission side, under the queue's post_lock on an
 *        interrupt-driven I/O queue (held anyway there); on admin and poll
 *        queues, which post from any CPU without it, with atomics
 *   cq   the completion side, in the queue's CQ context, which handles one
 *        completion at a time on an interrupt-driven queue; a poll queue's
 *        completions may be reaped by several pollers at once, so there the
 *        counters of union rnvme_tctr are added to with atomics and the rest
 *        (error statuses) is taken under cq_lock
 *   slow rare events from any context (a dispatch again, cancellation,
 *        timeout, refusal at dispatch, failover): atomics
 * A reset copies the current values into @base (readers subtract it): the
 * hot counters are never written by anyone but their owner.
 */
#ifndef RNVME_TELEMETRY_H
#define RNVME_TELEMETRY_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include "logic.h"

/* command classes, by block layer operation */
enum {
	RNVME_TC_READ,
	RNVME_TC_WRITE,
	RNVME_TC_OTHER,
	RNVME_TC_NR,
	/* rnvme_request.tele_class of a command not counted (not armed) */
	RNVME_TC_UNARMED = 0xff,
};

/* how a command's data reached the target */
enum {
	RNVME_TD_NONE,
	RNVME_TD_INLINE,
	RNVME_TD_REGISTERED,
	RNVME_TD_GLOBAL_RKEY,
	RNVME_TD_NR,
};

/* work completion statuses counted one by one; later ones count as unknown */
#define RNVME_TELE_WC_KNOWN	(IB_WC_GENERAL_ERR + 1)
#define RNVME_TELE_WC_NR	(RNVME_TELE_WC_KNOWN + 1)

/* NVMe error status classes: the status code types, DNR */
enum {
	RNVME_TS_GENERIC,
	RNVME_TS_CMD_SPECIFIC,
	RNVME_TS_MEDIA,
	RNVME_TS_PATH,
	RNVME_TS_VENDOR,
	RNVME_TS_RESERVED,
	RNVME_TS_DNR,
	RNVME_TS_NR,
};

/*
 * A counter of the hot paths: added to plainly (@n) where one writer owns it
 * (above), with an atomic (@a) where several CPUs add at once; read whole
 * (READ_ONCE of @n) either way.
 */
union rnvme_tctr {
	u64		n;
	atomic64_t	a;
};

static_assert(sizeof(union rnvme_tctr) == sizeof(u64));

struct rnvme_tele_sub {
	union rnvme_tctr	submitted[RNVME_TC_NR];
	union rnvme_tctr	bytes[RNVME_TC_NR];
	union rnvme_tctr	data[RNVME_TD_NR];
};

struct rnvme_tele_cq {
	union rnvme_tctr	lat_sum_ns[RNVME_TC_NR];
	u64	status[RNVME_TS_NR];
	u64	status_last;
	union rnvme_tctr	wc[RNVME_TELE_WC_NR];
	u64	ka_count;
	u64	ka_sum_ns;
	u64	ka_last_ns;
	u64	ka_max_ns;
	union rnvme_tctr	hist[RNVME_TC_NR][RNVME_HIST_BUCKETS];
};

/**
 * struct rnvme_qtele - telemetry of one queue index of a controller
 * @sub:    submission side (post_lock)
 * @cq:     completion side (CQ context; on a poll queue atomics, and
 *          cq_lock for the rest)
 * @cq_lock: serializes @cq's plain u64 fields on a poll queue
 * @requeued: commands dispatched again (rnvme_tele_dispatched())
 * @host_aborted: commands ended by the host without a response
 * @failovers: commands ended with a path status on a multipath controller
 * @rejected: commands refused at dispatch (queue not ready)
 * @reset_ns: when counting started: the last reset, or the allocation
 * @base:   values at the last reset, in the record layout (telemetry.c);
 *          NULL until the first reset (nothing to subtract)
 *
 * Allocated for every queue slot of a controller when telemetry is first on
 * while the controller exists (before the jump label is enabled, or when
 * the controller is created while it is on); then kept, with its counts,
 * across reconnects and switches of the parameter until the controller is
 * freed.  A controller that never counted has none (telemetry.c).
 */
struct rnvme_qtele {
	struct rnvme_tele_sub	sub ____cacheline_aligned_in_smp;
	struct rnvme_tele_cq	cq ____cacheline_aligned_in_smp;
	spinlock_t		cq_lock ____cacheline_aligned_in_smp;
	atomic64_t		requeued;
	atomic64_t		host_aborted;
	atomic64_t		failovers;
	atomic64_t		rejected;
	u64			reset_ns;
	u64			*base;
};

#endif /* RNVME_TELEMETRY_H */
