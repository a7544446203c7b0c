// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme race windows held open on purpose, on kernels built with
 * CONFIG_FAULT_INJECTION_DEBUG_FS only (the debug kernel of the test
 * harness; Debian's kernels do not have it, and there the hooks in rnvme.h
 * are empty).  Each point is a fault attribute of the kernel's fault
 * injection framework under /sys/kernel/debug/rnvme/<point>/ (probability,
 * times, ..., see Documentation/fault-injection/fault-injection.rst) plus
 * delay_ms: when the attribute fires, the code at the point busy-waits that
 * long, so that a hostile target's message lands inside the window every
 * time instead of by luck.  post_chain instead makes a batched post fail
 * part way (io.c), which no provider does on demand, and chain_open leaves
 * a batch open with no last request, which blk-mq does only in a race.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fault-inject.h>
#include "rnvme.h"

struct rnvme_fi {
	const char		*name;
	struct fault_attr	attr;
	u32			delay_ms;
	/* one hold of a point at a time: the other CPUs go on */
	atomic_t		holding;
};

static struct rnvme_fi rnvme_fi[RNVME_FI_NR] = {
	[RNVME_FI_TIMEOUT_COMPLETE] = {
		.name = "timeout_complete",
		.attr = FAULT_ATTR_INITIALIZER,
	},
	[RNVME_FI_RSP_CHECK] = {
		.name = "rsp_check",
		.attr = FAULT_ATTR_INITIALIZER,
	},
	[RNVME_FI_CQ_STALL] = {
		.name = "cq_stall",
		.attr = FAULT_ATTR_INITIALIZER,
	},
	[RNVME_FI_POST_CHAIN] = {
		.name = "post_chain",
		.attr = FAULT_ATTR_INITIALIZER,
	},
	[RNVME_FI_CHAIN_OPEN] = {
		.name = "chain_open",
		.attr = FAULT_ATTR_INITIALIZER,
	},
};

static struct dentry *rnvme_fi_dir;

/**
 * rnvme_fi_hold - hold a race window open if its fault attribute fires
 * @point: the window
 *
 * Any context (it busy-waits): the windows are in completion handlers.
 * While one CPU holds a point, the point does not fire on another.
 */
void rnvme_fi_hold(enum rnvme_fi_point point)
{
	struct rnvme_fi *fi = &rnvme_fi[point];

	if (atomic_cmpxchg(&fi->holding, 0, 1))
		return;
	if (should_fail(&fi->attr, 1)) {
		pr_info("fault injection: holding %s for %u ms\n", fi->name,
			READ_ONCE(fi->delay_ms));
		mdelay(READ_ONCE(fi->delay_ms));
	}
	atomic_set(&fi->holding, 0);
}

/**
 * rnvme_fi_fail - should the operation at @point fail this time?
 * @point: a point that injects a failure rather than a delay
 *
 * Any context.  The caller says what failed (delay_ms is not used).
 */
bool rnvme_fi_fail(enum rnvme_fi_point point)
{
	return should_fail(&rnvme_fi[point].attr, 1);
}

void rnvme_fi_init(void)
{
	struct dentry *dir;
	int i;

	rnvme_fi_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	for (i = 0; i < RNVME_FI_NR; i++) {
		/* off until a test sets a probability */
		rnvme_fi[i].attr.probability = 0;
		dir = fault_create_debugfs_attr(rnvme_fi[i].name, rnvme_fi_dir,
						&rnvme_fi[i].attr);
		if (IS_ERR(dir))
			continue;
		debugfs_create_u32("delay_ms", 0600, dir, &rnvme_fi[i].delay_ms);
	}
}

void rnvme_fi_exit(void)
{
	debugfs_remove_recursive(rnvme_fi_dir);
}
