// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme per-controller state a person can read without dmesg:
 * /sys/class/nvme/nvmeN/rnvme/ (documented in
 * Documentation/ABI/testing/sysfs-class-nvme-rnvme).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sysfs.h>
#include "rnvme.h"

static struct rnvme_ctrl *dev_to_rnvme_ctrl(struct device *dev)
{
	return to_rnvme_ctrl(dev_get_drvdata(dev));
}

#define RNVME_COUNTER_ATTR(name)					\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%u\n",					\
		atomic_read(&dev_to_rnvme_ctrl(dev)->stats.name));	\
}									\
static DEVICE_ATTR_RO(name)

RNVME_COUNTER_ATTR(error_recoveries);
RNVME_COUNTER_ATTR(reconnect_attempts);
RNVME_COUNTER_ATTR(reconnects);
RNVME_COUNTER_ATTR(last_outage_ms);
RNVME_COUNTER_ATTR(held_commands);
RNVME_COUNTER_ATTR(last_hold_ms);
RNVME_COUNTER_ATTR(ccr_resets);

/* the failover hold of the current association, and the CQT it includes */
static ssize_t failover_hold_ms_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct rnvme_ctrl *ctrl = dev_to_rnvme_ctrl(dev);

	if (!READ_ONCE(rnvme_failover_hold))
		return sysfs_emit(buf, "0\n");
	return sysfs_emit(buf, "%u\n", READ_ONCE(ctrl->hold_ms));
}
static DEVICE_ATTR_RO(failover_hold_ms);

static ssize_t cqt_ms_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(dev_to_rnvme_ctrl(dev)->cqt_ms));
}
static DEVICE_ATTR_RO(cqt_ms);

static ssize_t ccr_offered_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  !!READ_ONCE(dev_to_rnvme_ctrl(dev)->ccr_self.ciu));
}
static DEVICE_ATTR_RO(ccr_offered);

static ssize_t held_now_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(dev_to_rnvme_ctrl(dev)->nr_held));
}
static DEVICE_ATTR_RO(held_now);

static ssize_t last_error_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct rnvme_stats *st = &dev_to_rnvme_ctrl(dev)->stats;
	unsigned long flags;
	ssize_t len;

	spin_lock_irqsave(&st->lock, flags);
	if (st->last_error_time)
		len = sysfs_emit(buf, "%lld %s\n", st->last_error_time,
				 st->last_error);
	else
		len = sysfs_emit(buf, "none\n");
	spin_unlock_irqrestore(&st->lock, flags);
	return len;
}
static DEVICE_ATTR_RO(last_error);

static ssize_t next_reconnect_ms_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	struct rnvme_ctrl *ctrl = dev_to_rnvme_ctrl(dev);
	unsigned long at = READ_ONCE(ctrl->stats.next_reconnect);

	if (!delayed_work_pending(&ctrl->reconnect_work) || !at)
		return sysfs_emit(buf, "-1\n");
	if (time_after_eq(jiffies, at))
		return sysfs_emit(buf, "0\n");
	return sysfs_emit(buf, "%u\n", jiffies_to_msecs(at - jiffies));
}
static DEVICE_ATTR_RO(next_reconnect_ms);

static ssize_t inline_data_size_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct rnvme_ctrl *ctrl = dev_to_rnvme_ctrl(dev);
	size_t capsule = rnvme_capsule_len(1, ctrl->ctrl.ioccsz);

	if (!ctrl->use_inline_data)
		return sysfs_emit(buf, "0\n");
	return sysfs_emit(buf, "%zu\n", capsule - sizeof(struct nvme_command));
}
static DEVICE_ATTR_RO(inline_data_size);

static ssize_t rdma_device_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct rnvme_ctrl *ctrl = dev_to_rnvme_ctrl(dev);

	return sysfs_emit(buf, "%s\n", ctrl->rdma_dev_name[0] ?
			  ctrl->rdma_dev_name : "none");
}
static DEVICE_ATTR_RO(rdma_device);

/* the counters of the current association's queues, summed */
static u64 rnvme_sum_queues(struct rnvme_ctrl *ctrl,
			    u64 (*get)(struct rnvme_queue *queue))
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < ctrl->ctrl.queue_count; i++)
		sum += get(&ctrl->queues[i]);
	return sum;
}

/* statistics read while the queues post (each read whole) */
static u64 rnvme_q_wr_posted(struct rnvme_queue *q)
{
	struct rnvme_qstats sum;

	rnvme_qstats_sum(q, &sum);
	return sum.wr_posted;
}

static u64 rnvme_q_sends(struct rnvme_queue *q)
{
	return (u32)atomic_read(&q->send_seq);
}

static u64 rnvme_q_sends_signaled(struct rnvme_queue *q)
{
	struct rnvme_qstats sum;

	rnvme_qstats_sum(q, &sum);
	return sum.sends_signaled;
}

static u64 rnvme_q_send_posts(struct rnvme_queue *q)
{
	struct rnvme_qstats sum;

	rnvme_qstats_sum(q, &sum);
	return sum.send_posts;
}

static u64 rnvme_q_parked(struct rnvme_queue *q)
{
	return READ_ONCE(q->parked_reqs);
}

static u64 rnvme_q_probes(struct rnvme_queue *q)
{
	return READ_ONCE(q->probes);
}

static u64 rnvme_q_mrs(struct rnvme_queue *q)
{
	return READ_ONCE(q->nr_mrs);
}

#define RNVME_QUEUE_SUM_ATTR(name)					\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%llu\n",					\
			  rnvme_sum_queues(dev_to_rnvme_ctrl(dev),	\
					   rnvme_q_##name));		\
}									\
static DEVICE_ATTR_RO(name)

RNVME_QUEUE_SUM_ATTR(wr_posted);
RNVME_QUEUE_SUM_ATTR(sends);
RNVME_QUEUE_SUM_ATTR(sends_signaled);
RNVME_QUEUE_SUM_ATTR(send_posts);
RNVME_QUEUE_SUM_ATTR(parked);
RNVME_QUEUE_SUM_ATTR(probes);
RNVME_QUEUE_SUM_ATTR(mrs);

static struct attribute *rnvme_ctrl_attrs[] = {
	&dev_attr_error_recoveries.attr,
	&dev_attr_reconnect_attempts.attr,
	&dev_attr_reconnects.attr,
	&dev_attr_last_outage_ms.attr,
	&dev_attr_held_commands.attr,
	&dev_attr_last_hold_ms.attr,
	&dev_attr_ccr_resets.attr,
	&dev_attr_failover_hold_ms.attr,
	&dev_attr_cqt_ms.attr,
	&dev_attr_ccr_offered.attr,
	&dev_attr_held_now.attr,
	&dev_attr_last_error.attr,
	&dev_attr_next_reconnect_ms.attr,
	&dev_attr_inline_data_size.attr,
	&dev_attr_rdma_device.attr,
	&dev_attr_wr_posted.attr,
	&dev_attr_sends.attr,
	&dev_attr_sends_signaled.attr,
	&dev_attr_send_posts.attr,
	&dev_attr_parked.attr,
	&dev_attr_probes.attr,
	&dev_attr_mrs.attr,
	&dev_attr_telemetry_layout.attr,
	&dev_attr_telemetry_reset.attr,
	NULL,
};

static const struct attribute_group rnvme_ctrl_attr_group = {
	.name	= "rnvme",
	.attrs	= rnvme_ctrl_attrs,
	.bin_attrs = rnvme_tele_bin_attrs,
};

/* nvme-core's own controller attributes stay; ours go in a subdirectory */
const struct attribute_group *rnvme_ctrl_attr_groups[] = {
	&nvme_dev_attrs_group,
#ifdef HAVE_NVME_DEV_DIAG_ATTRS_GROUP
	/* after 6.12: nvme-core's reset, reconnect and error counts */
	&nvme_dev_diag_attrs_group,
#endif
	&rnvme_ctrl_attr_group,
	NULL,
};
