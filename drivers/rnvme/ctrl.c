// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme controller lifecycle.  nvme-core owns the state machine; this file
 * only asks for transitions and builds or tears down the queues that each
 * state needs:
 *
 *   create:   NEW -> CONNECTING -> setup -> LIVE
 *   error:    LIVE -> RESETTING -> teardown -> CONNECTING -> reconnect
 *             every reconnect_delay until ctrl_loss_tmo, then delete
 *   reset:    teardown (disable) -> CONNECTING -> setup
 *   delete:   teardown (shutdown) and free
 *
 * It also keeps the module's controllers: the list of those created, the
 * claims of those being created, and their deletion when their RDMA device
 * goes away (an ib_client) or the module unloads; port events of every RDMA
 * device reach the controllers on that port from here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/inet.h>
#include "rnvme.h"

static LIST_HEAD(rnvme_ctrl_list);
static DEFINE_MUTEX(rnvme_ctrl_mutex);

static void rnvme_ack_wd_arm(struct rnvme_ctrl *ctrl);

/*
 * Controllers being created are listed on rnvme_claim_list from the
 * duplicate check until they join rnvme_ctrl_list (or fail), so that two
 * concurrent connects of one association (udev and a boot unit, say) never
 * both get through the check.
 */
static LIST_HEAD(rnvme_claim_list);

/* under rnvme_ctrl_mutex */
static bool rnvme_association_taken(struct nvmf_ctrl_options *opts)
{
	struct rnvme_ctrl *ctrl;

	list_for_each_entry(ctrl, &rnvme_ctrl_list, list)
		if (nvmf_ip_options_match(&ctrl->ctrl, opts))
			return true;
	list_for_each_entry(ctrl, &rnvme_claim_list, claim)
		if (nvmf_ip_options_match(&ctrl->ctrl, opts))
			return true;
	return false;
}

/**
 * rnvme_ctrl_claim - check for a duplicate and reserve the association
 * @ctrl: a controller being created (its options set)
 *
 * Return: 0, or -EALREADY when a controller for the same association exists
 * or is being created (and duplicate_connect was not given).
 */
static int rnvme_ctrl_claim(struct rnvme_ctrl *ctrl)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	int ret = 0;

	mutex_lock(&rnvme_ctrl_mutex);
	if (!opts->duplicate_connect && rnvme_association_taken(opts))
		ret = -EALREADY;
	else
		list_add_tail(&ctrl->claim, &rnvme_claim_list);
	mutex_unlock(&rnvme_ctrl_mutex);
	return ret;
}

/* rnvme_ctrl_unclaim - a failed create gives its association back */
static void rnvme_ctrl_unclaim(struct rnvme_ctrl *ctrl)
{
	mutex_lock(&rnvme_ctrl_mutex);
	list_del_init(&ctrl->claim);
	mutex_unlock(&rnvme_ctrl_mutex);
}

/* rnvme_ctrl_list_add - a created controller moves from its claim here */
static void rnvme_ctrl_list_add(struct rnvme_ctrl *ctrl)
{
	mutex_lock(&rnvme_ctrl_mutex);
	list_del_init(&ctrl->claim);
	list_add_tail(&ctrl->list, &rnvme_ctrl_list);
	mutex_unlock(&rnvme_ctrl_mutex);
}

static void rnvme_ctrl_list_del(struct rnvme_ctrl *ctrl)
{
	mutex_lock(&rnvme_ctrl_mutex);
	list_del_init(&ctrl->list);
	mutex_unlock(&rnvme_ctrl_mutex);
}

static int rnvme_alloc_io_queues(struct rnvme_ctrl *ctrl)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	struct rnvme_queue_want want = {
		.nr_io = opts->nr_io_queues,
		.nr_write = opts->nr_write_queues,
		.nr_poll = opts->nr_poll_queues,
	};
	u32 cpus = num_online_cpus();
	int nr_io_queues, i, ret;

	nr_io_queues = rnvme_io_queues_wanted(&want, cpus);
	ret = nvme_set_queue_count(&ctrl->ctrl, &nr_io_queues);
	if (ret) {
		rnvme_note_cause(ctrl, "grant", "set-features-failed", 0);
		return ret;
	}
	if (!nr_io_queues) {
		dev_err(ctrl->ctrl.device,
			"the controller granted no I/O queues\n");
		rnvme_note_cause(ctrl, "grant", "no-io-queues", 0);
		return -ENOMEM;
	}

	rnvme_split_io_queues(&want, cpus, nr_io_queues, ctrl->io_queues);
	ctrl->ctrl.queue_count = 1 + ctrl->io_queues[HCTX_TYPE_DEFAULT] +
				 ctrl->io_queues[HCTX_TYPE_READ] +
				 ctrl->io_queues[HCTX_TYPE_POLL];
	dev_info(ctrl->ctrl.device,
		 "creating %d I/O queues (%u default, %u read, %u poll) of depth %d\n",
		 ctrl->ctrl.queue_count - 1, ctrl->io_queues[HCTX_TYPE_DEFAULT],
		 ctrl->io_queues[HCTX_TYPE_READ], ctrl->io_queues[HCTX_TYPE_POLL],
		 ctrl->ctrl.sqsize + 1);

	for (i = 1; i < ctrl->ctrl.queue_count; i++) {
		ret = rnvme_alloc_queue(ctrl, i, ctrl->ctrl.sqsize + 1);
		if (ret)
			goto out_free_queues;
	}
	return 0;

out_free_queues:
	for (i--; i >= 1; i--)
		rnvme_free_queue(&ctrl->queues[i]);
	return ret;
}

static void rnvme_free_io_queues(struct rnvme_ctrl *ctrl)
{
	int i;

	for (i = 1; i < ctrl->ctrl.queue_count; i++)
		rnvme_free_queue(&ctrl->queues[i]);
}

static void rnvme_stop_io_queues(struct rnvme_ctrl *ctrl)
{
	int i;

	for (i = 1; i < ctrl->ctrl.queue_count; i++)
		rnvme_stop_queue(&ctrl->queues[i]);
}

static int rnvme_start_io_queues(struct rnvme_ctrl *ctrl, int first, int last)
{
	int i, ret;

	for (i = first; i < last; i++) {
		ret = rnvme_start_queue(ctrl, i);
		if (ret)
			goto out_stop_queues;
	}
	return 0;

out_stop_queues:
	for (i--; i >= first; i--)
		rnvme_stop_queue(&ctrl->queues[i]);
	return ret;
}

/*
 * The tag sets are allocated, resized and removed under tagset_lock, which
 * rnvme_abort_queue_requests() holds while it walks one from the CM handler.
 */
static void rnvme_remove_tag_set(struct rnvme_ctrl *ctrl, bool admin)
{
	mutex_lock(&ctrl->tagset_lock);
	if (admin) {
		nvme_remove_admin_tag_set(&ctrl->ctrl);
	} else {
		/* destroys the connect queue, on connect_set once it moved */
		nvme_remove_io_tag_set(&ctrl->ctrl);
		if (ctrl->connect_set.tags)
			blk_mq_free_tag_set(&ctrl->connect_set);
	}
	mutex_unlock(&ctrl->tagset_lock);
}

/*
 * nvme_alloc_io_tag_set() puts the fabrics connect queue on the I/O tag
 * set.  A tag set with two request queues is shared: blk-mq then takes its
 * fair-share path for every request of the namespace (about 75 instructions
 * per I/O, Documentation/bench.rst "Host stack") and hands a plugged batch
 * over one request at a time.  So the connect queue moves to a tag set of
 * its own, with the same hardware queues and maps (a poll queue's Connect is
 * polled) and one reserved tag: Connect (and authentication) commands take
 * tag 0 there, which the I/O tag set keeps reserved and never hands out, so
 * a response's tag names one request (rnvme_process_rsp()).  Under
 * tagset_lock, before any I/O queue is connected.
 */
static int rnvme_alloc_connect_set(struct rnvme_ctrl *ctrl)
{
	struct blk_mq_tag_set *set = &ctrl->connect_set;
	struct request_queue *q;
	int ret;

	lockdep_assert_held(&ctrl->tagset_lock);
	/* the tag rnvme_process_rsp() looks up here instead */
	if (ctrl->tag_set.reserved_tags != 1)
		return -EINVAL;
	memset(set, 0, sizeof(*set));
	set->ops = ctrl->tag_set.ops;
	set->nr_maps = ctrl->tag_set.nr_maps;
	set->nr_hw_queues = ctrl->tag_set.nr_hw_queues;
	set->reserved_tags = 1;
	/* blk-mq's least: the reserved tag and one */
	set->queue_depth = 2;
	set->numa_node = ctrl->tag_set.numa_node;
	set->flags = ctrl->tag_set.flags;
	set->cmd_size = ctrl->tag_set.cmd_size;
	set->driver_data = ctrl->tag_set.driver_data;
	set->timeout = ctrl->tag_set.timeout;
	ret = blk_mq_alloc_tag_set(set);
	if (ret)
		return ret;
	q = blk_mq_alloc_queue(set, NULL, NULL);
	if (IS_ERR(q)) {
		blk_mq_free_tag_set(set);
		return PTR_ERR(q);
	}
	blk_mq_destroy_queue(ctrl->ctrl.connect_q);
	blk_put_queue(ctrl->ctrl.connect_q);
	ctrl->ctrl.connect_q = q;
	return 0;
}

/*
 * The failover hold (NVMe 2.1's handling of a lost host, TP4129).  A
 * controller that lost its host may go on executing the commands it holds
 * until it notices the loss (within two keep-alive timeouts, three with
 * traffic-based keep-alive) and then quiesces (within its Command Quiesce
 * Time).  A write retried elsewhere before then (on another path of the
 * subsystem, or on this path's next association) can be overtaken by the
 * lost controller's own late execution of it, after the application has
 * already written newer data to the same blocks: a lost write.  So when an
 * association goes, a request in flight whose command may change the media
 * is held (rnvme_hold_request()): it keeps its tag and its place, and only
 * when the hold has passed is it cancelled like the others, and retried.
 * Reads and the rest fail over at once.  The hold starts when the host
 * tears the association down, after the controller last heard from it.
 */

/* the hold of the association now being set up */
static void rnvme_init_failover_hold(struct rnvme_ctrl *ctrl)
{
	struct nvme_command c = { };
	void *id;

	ctrl->cqt_ms = 0;
	memset(&ctrl->ccr_self, 0, sizeof(ctrl->ccr_self));
	if (!ctrl->ctrl.opts->discovery_nqn) {
		/* nvme-core does not keep CQT: Identify Controller once more */
		c.identify.opcode = nvme_admin_identify;
		c.identify.cns = NVME_ID_CNS_CTRL;
		id = kzalloc(NVME_IDENTIFY_DATA_SIZE, GFP_KERNEL);
		if (id && !nvme_submit_sync_cmd(ctrl->ctrl.admin_q, &c, id,
						NVME_IDENTIFY_DATA_SIZE)) {
			ctrl->cqt_ms = rnvme_id_ctrl_cqt(id);
			rnvme_id_ctrl_ccr_target(id, ctrl->ctrl.cntlid,
						 &ctrl->ccr_self);
		}
		kfree(id);
	}
	ctrl->hold_ms = rnvme_failover_hold_ms(ctrl->ctrl.kato,
					       ctrl->ctrl.ctratt & NVME_CTRL_ATTR_TBKAS,
					       ctrl->cqt_ms);
}

/* nvme_cancel_request(), but a command that may change the media is held */
static bool rnvme_cancel_or_hold(struct request *rq, void *data)
{
	struct rnvme_ctrl *ctrl = data;
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	unsigned long flags;

	if (blk_mq_rq_state(rq) != MQ_RQ_IN_FLIGHT || READ_ONCE(req->held))
		return true;
	if (!READ_ONCE(rnvme_failover_hold) ||
	    !rnvme_cmd_may_change_media(req->sqe.data))
		return nvme_cancel_request(rq, &ctrl->ctrl);

	rnvme_hold_request(rq);
	spin_lock_irqsave(&ctrl->held_lock, flags);
	if (list_empty(&ctrl->held))
		ctrl->hold_start = jiffies;
	list_add_tail(&req->held_node, &ctrl->held);
	ctrl->nr_held++;
	ctrl->nr_held_new++;
	spin_unlock_irqrestore(&ctrl->held_lock, flags);
	atomic_inc(&ctrl->stats.held_commands);
	return true;
}

/*
 * After a teardown that held commands: end them when the hold has passed.
 * Only commands this teardown held move the end: a reconnect attempt that
 * fails sends none of the held ones, so it neither renews their hold nor
 * needs a Cross-Controller Reset of its own association.
 */
static void rnvme_start_hold(struct rnvme_ctrl *ctrl)
{
	unsigned long until = jiffies + msecs_to_jiffies(ctrl->hold_ms);
	unsigned int nr;

	spin_lock_irq(&ctrl->held_lock);
	nr = ctrl->nr_held_new;
	ctrl->nr_held_new = 0;
	if (nr) {
		ctrl->nr_unfenced++;
		/* the association just lost, before a reconnect replaces it */
		ctrl->ccr_lost = ctrl->ccr_self;
	}
	/* commands held by an earlier loss wait for this one's end too */
	if (nr && (!delayed_work_pending(&ctrl->hold_work) ||
		   time_after(until, ctrl->hold_until))) {
		ctrl->hold_until = until;
		mod_delayed_work(nvme_wq, &ctrl->hold_work, until - jiffies);
	}
	spin_unlock_irq(&ctrl->held_lock);
	if (!nr)
		return;
	dev_info(ctrl->ctrl.device,
		 "holding %u commands the lost controller may still execute for %u ms (keep-alive %u s%s, CQT %u ms) before they are retried\n",
		 nr, ctrl->hold_ms, ctrl->ctrl.kato,
		 ctrl->ctrl.ctratt & NVME_CTRL_ATTR_TBKAS ?
		 ", traffic-based" : "", ctrl->cqt_ms);
	if (ctrl->ccr_self.ciu)
		queue_work(nvme_wq, &ctrl->ccr_work);
}

/*
 * A live controller of @ctrl's subsystem (same subsystem and host NQN) to
 * send a Cross-Controller Reset through, with a reference; NULL if none.
 */
static struct rnvme_ctrl *rnvme_ccr_source(struct rnvme_ctrl *ctrl)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	struct rnvme_ctrl *other, *src = NULL;

	mutex_lock(&rnvme_ctrl_mutex);
	list_for_each_entry(other, &rnvme_ctrl_list, list) {
		if (other == ctrl ||
		    nvme_ctrl_state(&other->ctrl) != NVME_CTRL_LIVE ||
		    strcmp(other->ctrl.opts->subsysnqn, opts->subsysnqn) ||
		    strcmp(other->ctrl.opts->host->nqn, opts->host->nqn))
			continue;
		nvme_get_ctrl(&other->ctrl);
		src = other;
		break;
	}
	mutex_unlock(&rnvme_ctrl_mutex);
	return src;
}

/*
 * Cross-Controller Reset (TP8028): a live controller of the subsystem
 * resets the lost association, which then executes nothing more, so the
 * commands held for it are retried at once.  Without a live controller,
 * or when the reset is refused or not done at once (IRS clear: it would
 * end later, reported in a log page), the hold runs its full time.  The
 * held commands are one list: a reset releases them only when it fenced
 * the last lost association that had any (@nr_unfenced), never those of
 * an earlier loss whose own reset was not done.
 */
static void rnvme_ccr_work(struct work_struct *work)
{
	struct rnvme_ctrl *ctrl = container_of(work, struct rnvme_ctrl,
					       ccr_work);
	struct rnvme_ccr_target t;
	union nvme_result res = { };
	struct nvme_command c;
	struct rnvme_ctrl *src;
	bool release;
	int ret;

	spin_lock_irq(&ctrl->held_lock);
	t = ctrl->ccr_lost;
	spin_unlock_irq(&ctrl->held_lock);
	src = rnvme_ccr_source(ctrl);
	if (!src) {
		dev_info(ctrl->ctrl.device,
			 "no live controller of the subsystem to reset controller %u through: the hold runs its time\n",
			 t.cntlid);
		return;
	}
	rnvme_ccr_cmd(&c, &t);
	ret = rnvme_submit_admin_cmd(&src->ctrl, &c, &res);
	if (!ret && (le32_to_cpu(res.u32) & RNVME_CCR_IRS)) {
		atomic_inc(&ctrl->stats.ccr_resets);
		spin_lock_irq(&ctrl->held_lock);
		if (ctrl->nr_unfenced)
			ctrl->nr_unfenced--;
		release = !ctrl->nr_unfenced && !list_empty(&ctrl->held);
		if (release)
			mod_delayed_work(nvme_wq, &ctrl->hold_work, 0);
		spin_unlock_irq(&ctrl->held_lock);
		dev_info(ctrl->ctrl.device,
			 "Cross-Controller Reset of controller %u through %s succeeded: %s\n",
			 t.cntlid, dev_name(src->ctrl.device), release ?
			 "its held commands are retried now" :
			 "commands of an earlier loss are held still, the hold runs its time");
	} else {
		dev_info(ctrl->ctrl.device,
			 "Cross-Controller Reset of controller %u through %s %s (%d, result %#x): the hold runs its time\n",
			 t.cntlid, dev_name(src->ctrl.device),
			 ret ? "failed" : "not done at once", ret,
			 le32_to_cpu(res.u32));
	}
	nvme_put_ctrl(&src->ctrl);
}

static void rnvme_hold_work(struct work_struct *work)
{
	struct rnvme_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct rnvme_ctrl, hold_work);
	struct rnvme_request *req, *next;
	unsigned int nr, ms;
	LIST_HEAD(list);

	spin_lock_irq(&ctrl->held_lock);
	list_splice_init(&ctrl->held, &list);
	nr = ctrl->nr_held;
	ctrl->nr_held = 0;
	ctrl->nr_held_new = 0;
	ctrl->nr_unfenced = 0;
	ms = jiffies_to_msecs(jiffies - ctrl->hold_start);
	spin_unlock_irq(&ctrl->held_lock);

	if (nr) {
		atomic_set(&ctrl->stats.last_hold_ms, ms);
		dev_info(ctrl->ctrl.device,
			 "retrying %u held commands: %u ms since they were held, the lost controller has quiesced\n",
			 nr, ms);
	}
	list_for_each_entry_safe(req, next, &list, held_node) {
		list_del_init(&req->held_node);
		nvme_cancel_request(blk_mq_rq_from_pdu(req), &ctrl->ctrl);
	}
	wake_up_all(&ctrl->hold_wait);
}

static bool rnvme_nothing_held(struct rnvme_ctrl *ctrl)
{
	bool empty;

	spin_lock_irq(&ctrl->held_lock);
	empty = list_empty(&ctrl->held);
	spin_unlock_irq(&ctrl->held_lock);
	return empty;
}

/*
 * Before the tag set goes: its held commands end when their hold does (a
 * deleted controller does not make a late write safe).
 */
static void rnvme_wait_held(struct rnvme_ctrl *ctrl)
{
	if (rnvme_nothing_held(ctrl))
		return;
	dev_info(ctrl->ctrl.device,
		 "waiting for the hold of its held commands to end\n");
	wait_event(ctrl->hold_wait, rnvme_nothing_held(ctrl));
}

/* nvme_cancel_tagset() for the namespaces' commands (with the hold) and the Connects' */
static void rnvme_cancel_io_tag_sets(struct rnvme_ctrl *ctrl)
{
	if (ctrl->ctrl.tagset) {
		blk_mq_tagset_busy_iter(ctrl->ctrl.tagset, rnvme_cancel_or_hold,
					ctrl);
		blk_mq_tagset_wait_completed_request(ctrl->ctrl.tagset);
		rnvme_start_hold(ctrl);
	}
	if (!ctrl->connect_set.tags)
		return;
	blk_mq_tagset_busy_iter(&ctrl->connect_set, nvme_cancel_request,
				&ctrl->ctrl);
	blk_mq_tagset_wait_completed_request(&ctrl->connect_set);
}

static void rnvme_destroy_admin_queue(struct rnvme_ctrl *ctrl, bool remove)
{
	if (remove)
		rnvme_remove_tag_set(ctrl, true);
	if (ctrl->async_event_sqe.data) {
		cancel_work_sync(&ctrl->ctrl.async_event_work);
		rnvme_free_qe(ctrl->device->ibdev, &ctrl->async_event_sqe,
			      sizeof(struct nvme_command), DMA_TO_DEVICE);
		ctrl->async_event_sqe.data = NULL;
	}
	if (!ctrl->cm_deferred) {
		rnvme_free_queue(&ctrl->queues[0]);
		/* its device reference went with the queue */
		ctrl->device = NULL;
	}
}

static int rnvme_configure_admin_queue(struct rnvme_ctrl *ctrl, bool new)
{
	size_t cmd_size = sizeof(struct rnvme_request);
	struct ib_device *ibdev;
	int ret;

	ret = rnvme_alloc_queue(ctrl, 0, NVME_AQ_DEPTH);
	if (ret)
		return ret;

	ctrl->device = ctrl->queues[0].dev;
	ibdev = ctrl->device->ibdev;
	WRITE_ONCE(ctrl->ibdev, ibdev);
	ctrl->ctrl.numa_node = ibdev_to_node(ibdev);
	strscpy(ctrl->rdma_dev_name, dev_name(&ibdev->dev),
		sizeof(ctrl->rdma_dev_name));
	WRITE_ONCE(ctrl->rdma_port, ctrl->queues[0].cm_id->port_num);
	ctrl->max_fr_pages = rnvme_max_fr_pages(ibdev);

	/* the AER is never freed by blk-mq: it has its own SQE */
	ret = rnvme_alloc_qe(ibdev, &ctrl->async_event_sqe,
			     sizeof(struct nvme_command), DMA_TO_DEVICE);
	if (ret)
		goto out_free_queue;

	if (new) {
		mutex_lock(&ctrl->tagset_lock);
		ret = nvme_alloc_admin_tag_set(&ctrl->ctrl, &ctrl->admin_tag_set,
					       &rnvme_admin_mq_ops, cmd_size);
		mutex_unlock(&ctrl->tagset_lock);
		if (ret)
			goto out_free_async_qe;
	}

	ret = rnvme_start_queue(ctrl, 0);
	if (ret)
		goto out_remove_admin_tag_set;

	ret = nvme_enable_ctrl(&ctrl->ctrl);
	if (ret)
		goto out_stop_queue;

	/* one MR maps a request: its page list bounds the transfer size */
	ctrl->ctrl.max_segments = ctrl->max_fr_pages;
	ctrl->ctrl.max_hw_sectors = ctrl->max_fr_pages << (ilog2(SZ_4K) - SECTOR_SHIFT);

	nvme_unquiesce_admin_queue(&ctrl->ctrl);

	ret = rnvme_init_ctrl_finish(&ctrl->ctrl);
	if (ret)
		goto out_quiesce_queue;
	rnvme_init_failover_hold(ctrl);
	return 0;

out_quiesce_queue:
	nvme_quiesce_admin_queue(&ctrl->ctrl);
	blk_sync_queue(ctrl->ctrl.admin_q);
out_stop_queue:
	rnvme_stop_queue(&ctrl->queues[0]);
	nvme_cancel_admin_tagset(&ctrl->ctrl);
out_remove_admin_tag_set:
	if (new)
		rnvme_remove_tag_set(ctrl, true);
out_free_async_qe:
	if (ctrl->async_event_sqe.data) {
		rnvme_free_qe(ibdev, &ctrl->async_event_sqe,
			      sizeof(struct nvme_command), DMA_TO_DEVICE);
		ctrl->async_event_sqe.data = NULL;
	}
out_free_queue:
	rnvme_free_queue(&ctrl->queues[0]);
	ctrl->device = NULL;
	return ret;
}

static int rnvme_configure_io_queues(struct rnvme_ctrl *ctrl, bool new)
{
	int ret, nr_queues;

	ret = rnvme_alloc_io_queues(ctrl);
	if (ret)
		return ret;

	if (new) {
		/*
		 * The number of maps is fixed for the life of the tag set, the
		 * grant is not: size it from what was asked for, so a later
		 * association that grants poll queues the first one did not
		 * has a map to put them in (rnvme_map_queues).
		 */
		mutex_lock(&ctrl->tagset_lock);
		ret = nvme_alloc_io_tag_set(&ctrl->ctrl, &ctrl->tag_set,
					    &rnvme_mq_ops,
					    rnvme_tag_set_maps(ctrl->ctrl.opts->nr_poll_queues),
					    sizeof(struct rnvme_request));
		if (!ret) {
			ret = rnvme_alloc_connect_set(ctrl);
			if (ret)
				nvme_remove_io_tag_set(&ctrl->ctrl);
		}
		mutex_unlock(&ctrl->tagset_lock);
		if (ret)
			goto out_free_io_queues;
	}

	/*
	 * Start only the queues the tag set already knows; after a reconnect
	 * that grants more, the rest start once the tag set has grown.
	 */
	nr_queues = min(ctrl->tag_set.nr_hw_queues + 1, ctrl->ctrl.queue_count);
	ret = rnvme_start_io_queues(ctrl, 1, nr_queues);
	if (ret)
		goto out_remove_io_tag_set;

	if (!new && !rnvme_nothing_held(ctrl)) {
		/*
		 * Commands are held (the failover hold): a freeze would wait
		 * for them with the new association idle, and its controller
		 * would end it when its keep-alive timer runs out.  The queue
		 * count that stays needs no freeze; one that changes waits for
		 * an attempt after the hold.
		 */
		if (ctrl->ctrl.queue_count - 1 != ctrl->tag_set.nr_hw_queues) {
			dev_info(ctrl->ctrl.device,
				 "the I/O queue count changes (%u to %u): reconnecting once the held commands are retried\n",
				 ctrl->tag_set.nr_hw_queues,
				 ctrl->ctrl.queue_count - 1);
			ret = -EAGAIN;
			goto out_quiesce_io_queues;
		}
		nvme_unquiesce_io_queues(&ctrl->ctrl);
	} else if (!new) {
		/*
		 * Freeze here, in the same work that unfreezes: I/O queued
		 * during the outage drains on the new queues before the queue
		 * count may change.  A freeze begun in error recovery and
		 * ended by a later reconnect work is unbalanced when the
		 * controller is deleted instead, and lockdep reports it as a
		 * lock leaked by the work.
		 */
		nvme_start_freeze(&ctrl->ctrl);
		nvme_unquiesce_io_queues(&ctrl->ctrl);
		if (!rnvme_wait_freeze(&ctrl->ctrl)) {
			/*
			 * I/O could not drain: the controller stopped answering
			 * during the reconnect.  Fail this attempt.
			 */
			ret = -ENODEV;
			nvme_unfreeze(&ctrl->ctrl);
			goto out_quiesce_io_queues;
		}
		mutex_lock(&ctrl->tagset_lock);
		blk_mq_update_nr_hw_queues(ctrl->ctrl.tagset,
					   ctrl->ctrl.queue_count - 1);
		blk_mq_update_nr_hw_queues(&ctrl->connect_set,
					   ctrl->ctrl.queue_count - 1);
		mutex_unlock(&ctrl->tagset_lock);
		nvme_unfreeze(&ctrl->ctrl);
	}

	ret = rnvme_start_io_queues(ctrl, nr_queues,
				    ctrl->tag_set.nr_hw_queues + 1);
	if (ret)
		goto out_quiesce_io_queues;
	return 0;

out_quiesce_io_queues:
	nvme_quiesce_io_queues(&ctrl->ctrl);
	nvme_sync_io_queues(&ctrl->ctrl);
	rnvme_stop_io_queues(ctrl);
	rnvme_cancel_io_tag_sets(ctrl);
	if (new) {
		nvme_unquiesce_io_queues(&ctrl->ctrl);
		goto out_remove_io_tag_set;
	}
	goto out_free_io_queues;
out_remove_io_tag_set:
	if (new)
		rnvme_remove_tag_set(ctrl, false);
out_free_io_queues:
	rnvme_free_io_queues(ctrl);
	return ret;
}

static void rnvme_teardown_admin_queue(struct rnvme_ctrl *ctrl, bool remove)
{
	nvme_quiesce_admin_queue(&ctrl->ctrl);
	blk_sync_queue(ctrl->ctrl.admin_q);
	rnvme_stop_queue(&ctrl->queues[0]);
	nvme_cancel_admin_tagset(&ctrl->ctrl);
	/* a removed queue must not hold requests back */
	if (remove)
		nvme_unquiesce_admin_queue(&ctrl->ctrl);
	rnvme_destroy_admin_queue(ctrl, remove);
}

static void rnvme_teardown_io_queues(struct rnvme_ctrl *ctrl, bool remove)
{
	if (ctrl->ctrl.queue_count <= 1)
		return;

	/* quiesced: new I/O waits in the block layer until the reconnect */
	nvme_quiesce_io_queues(&ctrl->ctrl);
	nvme_sync_io_queues(&ctrl->ctrl);
	rnvme_stop_io_queues(ctrl);
	rnvme_cancel_io_tag_sets(ctrl);
	if (remove) {
		nvme_unquiesce_io_queues(&ctrl->ctrl);
		rnvme_wait_held(ctrl);
		rnvme_remove_tag_set(ctrl, false);
	}
	if (!ctrl->cm_deferred)
		rnvme_free_io_queues(ctrl);
}

/*
 * Queues kept by error recovery while their port was down: free them (the
 * DREQs go out now) before the next connect, or fail the attempt without
 * touching the wire if the port is still down.
 */
static int rnvme_release_deferred_queues(struct rnvme_ctrl *ctrl)
{
	if (!ctrl->cm_deferred)
		return 0;
	if (!rnvme_queue_port_active(&ctrl->queues[0]))
		return -ENETDOWN;
	ctrl->cm_deferred = false;
	rnvme_free_io_queues(ctrl);
	rnvme_free_queue(&ctrl->queues[0]);
	ctrl->device = NULL;
	return 0;
}

/*
 * Bring @ctrl's next reconnect attempt forward to @delay from now when it
 * waits for a later one; return whether it did.  Under nvme-core's state
 * lock: a delete or reset moves the state away from CONNECTING under it
 * before cancelling the reconnect work, so a kick never requeues the work
 * behind that cancel.  A kick that races with the attempt starting queues
 * one more run, which rnvme_reconnect_work() ends at once unless the
 * controller still waits to reconnect.
 */
static bool rnvme_kick_reconnect(struct rnvme_ctrl *ctrl, unsigned long delay)
{
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&ctrl->ctrl.lock, flags);
	kick = nvme_ctrl_state(&ctrl->ctrl) == NVME_CTRL_CONNECTING &&
	       delayed_work_pending(&ctrl->reconnect_work) &&
	       time_after(READ_ONCE(ctrl->stats.next_reconnect),
			  jiffies + delay);
	if (kick) {
		mod_delayed_work(nvme_wq, &ctrl->reconnect_work, delay);
		WRITE_ONCE(ctrl->stats.next_reconnect, jiffies + delay);
	}
	spin_unlock_irqrestore(&ctrl->ctrl.lock, flags);
	return kick;
}

static bool rnvme_opt_equal(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* the same target port through the same host path */
static bool rnvme_same_target_port(struct nvmf_ctrl_options *a,
				   struct nvmf_ctrl_options *b)
{
	return rnvme_opt_equal(a->traddr, b->traddr) &&
	       rnvme_opt_equal(a->trsvcid, b->trsvcid) &&
	       rnvme_opt_equal(a->host_traddr, b->host_traddr) &&
	       rnvme_opt_equal(a->host_iface, b->host_iface);
}

/*
 * @ctrl's admin queue connected again, so its target port answers.  The controllers
 * waiting to reconnect to the same port (a target's subsystems share it,
 * and a target or switch restart takes them all) try now rather than at
 * the end of their delay, which a backoff may have made long.  Each is
 * kicked at most once per success, so connect attempts stay bounded.
 */
static void rnvme_kick_siblings(struct rnvme_ctrl *ctrl)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	struct rnvme_ctrl *other;
	unsigned int n = 0;

	mutex_lock(&rnvme_ctrl_mutex);
	list_for_each_entry(other, &rnvme_ctrl_list, list) {
		if (other != ctrl &&
		    rnvme_same_target_port(other->ctrl.opts, opts))
			n += rnvme_kick_reconnect(other, 0);
	}
	mutex_unlock(&rnvme_ctrl_mutex);
	if (n)
		dev_info(ctrl->ctrl.device, "%s:%s answers again: %u other controller(s) waiting for it reconnect now\n",
			 opts->traddr, opts->trsvcid, n);
}

static int rnvme_setup_ctrl(struct rnvme_ctrl *ctrl, bool new)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	u16 sqsize;
	u32 fit;
	int ret;

	ret = rnvme_configure_admin_queue(ctrl, new);
	if (ret)
		return ret;
	/* the others need not wait for this one's I/O queues */
	if (!new)
		rnvme_kick_siblings(ctrl);

	if (ctrl->ctrl.icdoff) {
		dev_err(ctrl->ctrl.device,
			"the controller wants in-capsule data at offset %u; only 0 is supported\n",
			ctrl->ctrl.icdoff);
		rnvme_note_cause(ctrl, "controller", "unsupported-icdoff", 0);
		ret = -EOPNOTSUPP;
		goto out_destroy_admin;
	}
	if (!(ctrl->ctrl.sgls & RNVME_SGLS_KEYED)) {
		dev_err(ctrl->ctrl.device,
			"the controller does not support keyed SGLs, which NVMe/RDMA requires\n");
		rnvme_note_cause(ctrl, "controller", "no-keyed-sgls", 0);
		ret = -EOPNOTSUPP;
		goto out_destroy_admin;
	}
	ctrl->use_inline_data = !!(ctrl->ctrl.sgls & RNVME_SGLS_OFFSET);

	if (opts->queue_size > ctrl->ctrl.sqsize + 1)
		dev_warn(ctrl->ctrl.device,
			 "queue_size %zu > controller limit (MQES) %u: using %u\n",
			 opts->queue_size, ctrl->ctrl.sqsize + 1,
			 ctrl->ctrl.sqsize + 1);
	sqsize = rnvme_clamp_sqsize(ctrl->ctrl.sqsize, ctrl->ctrl.maxcmd,
				    NVME_RDMA_MAX_QUEUE_SIZE);
	if (sqsize != ctrl->ctrl.sqsize) {
		dev_warn(ctrl->ctrl.device,
			 "queue size %u > limit (MAXCMD %u, transport %u): using %u\n",
			 ctrl->ctrl.sqsize + 1, ctrl->ctrl.maxcmd,
			 NVME_RDMA_MAX_QUEUE_SIZE, sqsize + 1);
		ctrl->ctrl.sqsize = sqsize;
	}
	fit = rnvme_queue_size_for_device(ctrl->ctrl.sqsize + 1,
					  num_possible_cpus(),
					  ctrl->device->ibdev->attrs.max_qp_wr,
					  ctrl->device->ibdev->attrs.max_cqe);
	if (fit < 2) {
		dev_err(ctrl->ctrl.device,
			"RDMA device %s cannot carry an I/O queue (max_qp_wr %d, max_cqe %d)\n",
			ctrl->rdma_dev_name, ctrl->device->ibdev->attrs.max_qp_wr,
			ctrl->device->ibdev->attrs.max_cqe);
		rnvme_note_cause(ctrl, "setup", "device-limits", -1);
		ret = -EINVAL;
		goto out_destroy_admin;
	}
	if (fit != ctrl->ctrl.sqsize + 1) {
		dev_warn(ctrl->ctrl.device,
			 "queue size %u > what RDMA device %s carries (max_qp_wr %d, max_cqe %d): using %u\n",
			 ctrl->ctrl.sqsize + 1, ctrl->rdma_dev_name,
			 ctrl->device->ibdev->attrs.max_qp_wr,
			 ctrl->device->ibdev->attrs.max_cqe, fit);
		ctrl->ctrl.sqsize = fit - 1;
	}
	if (!new && ctrl->ctrl.queue_count > 1 &&
	    !rnvme_sqsize_fits_tag_set(ctrl->ctrl.sqsize,
				       ctrl->tag_set.queue_depth)) {
		/*
		 * blk-mq would hand out more tags than the new queues have
		 * entries, MRs and receive buffers.  The tag set cannot
		 * shrink: refuse, and keep trying at the old size (a target
		 * that grows back is accepted again).
		 */
		dev_err(ctrl->ctrl.device,
			"the controller now allows I/O queues of %u entries, too few for the %u commands this controller issues at once: association refused (disconnect and connect again to use the smaller size)\n",
			ctrl->ctrl.sqsize + 1, ctrl->tag_set.queue_depth);
		rnvme_note_cause(ctrl, "grant", "queue-size-shrank", -1);
		rnvme_record_error(ctrl, "queue size shrank to %u (tag set depth %u)",
				   ctrl->ctrl.sqsize + 1,
				   ctrl->tag_set.queue_depth);
		ctrl->ctrl.sqsize = ctrl->tag_set.queue_depth - 1;
		ret = -ENOSPC;
		goto out_destroy_admin;
	}

	if (ctrl->ctrl.queue_count > 1) {
		ret = rnvme_configure_io_queues(ctrl, new);
		if (ret)
			goto out_destroy_admin;
	}

	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_LIVE)) {
		/* losing the race to a delete is fine; anything else is not */
		enum nvme_ctrl_state state = nvme_ctrl_state(&ctrl->ctrl);

		WARN_ON_ONCE(state != NVME_CTRL_DELETING &&
			     state != NVME_CTRL_DELETING_NOIO);
		ret = -EINVAL;
		goto out_destroy_io;
	}

	nvme_start_ctrl(&ctrl->ctrl);
	rnvme_ack_wd_arm(ctrl);
	return 0;

out_destroy_io:
	if (ctrl->ctrl.queue_count > 1) {
		nvme_quiesce_io_queues(&ctrl->ctrl);
		nvme_sync_io_queues(&ctrl->ctrl);
		rnvme_stop_io_queues(ctrl);
		rnvme_cancel_io_tag_sets(ctrl);
		if (new)
			rnvme_remove_tag_set(ctrl, false);
		rnvme_free_io_queues(ctrl);
	}
out_destroy_admin:
	nvme_stop_keep_alive(&ctrl->ctrl);
	rnvme_teardown_admin_queue(ctrl, new);
	return ret;
}

static void rnvme_reconnect_or_remove(struct rnvme_ctrl *ctrl, int status)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	enum nvme_ctrl_state state = nvme_ctrl_state(&ctrl->ctrl);
	u32 backoff_max = READ_ONCE(rnvme_reconnect_backoff_max);
	u32 jitter = READ_ONCE(rnvme_reconnect_jitter);
	u32 delay_ms, elapsed_ms;
	bool again;

	/* if we are no longer connecting, a delete owns the controller */
	if (state != NVME_CTRL_CONNECTING) {
		WARN_ON_ONCE(state == NVME_CTRL_NEW || state == NVME_CTRL_LIVE);
		return;
	}

	delay_ms = rnvme_reconnect_delay_ms(opts->reconnect_delay,
					    ctrl->ctrl.nr_reconnects + 1,
					    backoff_max, jitter,
					    get_random_u32());
	again = rnvme_should_reconnect(&ctrl->ctrl, status);
	elapsed_ms = jiffies_to_msecs(jiffies - ctrl->stats.outage_start);
	if (again && (backoff_max > opts->reconnect_delay || jitter)) {
		/* delays vary: keep ctrl_loss_tmo a time limit, not a count */
		again = rnvme_within_loss_tmo(opts->max_reconnects,
					      opts->reconnect_delay,
					      elapsed_ms, delay_ms);
	} else if (again) {
		/*
		 * Attempts against a silent target each take a CM timeout:
		 * counting them alone would stretch ctrl_loss_tmo manyfold.
		 */
		again = rnvme_within_loss_tmo(opts->max_reconnects,
					      opts->reconnect_delay,
					      elapsed_ms, 0);
	}

	if (again) {
		dev_info(ctrl->ctrl.device, "reconnecting in %u.%03u seconds\n",
			 delay_ms / 1000, delay_ms % 1000);
		WRITE_ONCE(ctrl->stats.next_reconnect,
			   jiffies + msecs_to_jiffies(delay_ms));
		queue_delayed_work(nvme_wq, &ctrl->reconnect_work,
				   msecs_to_jiffies(delay_ms));
	} else {
		dev_info(ctrl->ctrl.device,
			 "giving up after %d reconnect attempts (ctrl_loss_tmo reached): deleting controller\n",
			 ctrl->ctrl.nr_reconnects);
		WRITE_ONCE(ctrl->stats.next_reconnect, 0);
		nvme_delete_ctrl(&ctrl->ctrl);
	}
}

static void rnvme_reconnect_work(struct work_struct *work)
{
	struct rnvme_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct rnvme_ctrl, reconnect_work);
	u32 outage_ms;
	int seq, ret;

	/* a kick's extra run after the attempt it raced with (see above) */
	if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_CONNECTING)
		return;
	++ctrl->ctrl.nr_reconnects;
	atomic_inc(&ctrl->stats.reconnect_attempts);
	WRITE_ONCE(ctrl->stats.next_reconnect, 0);

	ctrl->cm_wait_ms =
		rnvme_reconnect_cm_wait_ms(ctrl->ctrl.opts->max_reconnects,
					   ctrl->ctrl.opts->reconnect_delay,
					   jiffies_to_msecs(jiffies - ctrl->stats.outage_start));
	seq = atomic_read(&ctrl->stats.error_seq);
	rnvme_cause_begin(ctrl);
	ret = rnvme_release_deferred_queues(ctrl);
	if (ret)
		rnvme_note_cause(ctrl, "address", "port-down", 0);
	else
		ret = rnvme_setup_ctrl(ctrl, false);
	ctrl->cm_wait_ms = 0;
	rnvme_emit_attempt(ctrl, "reconnect", ret);
	if (ret) {
		dev_info(ctrl->ctrl.device, "reconnect attempt %d failed (%d)\n",
			 ctrl->ctrl.nr_reconnects, ret);
		/* keep the cause recorded during the attempt, if any */
		rnvme_record_attempt_error(ctrl, seq, "reconnect attempt %d failed (%d)",
					   ctrl->ctrl.nr_reconnects, ret);
		rnvme_reconnect_or_remove(ctrl, ret);
		return;
	}

	outage_ms = jiffies_to_msecs(jiffies - ctrl->stats.outage_start);
	dev_info(ctrl->ctrl.device, "reconnected after %d attempts, %u ms after the loss\n",
		 ctrl->ctrl.nr_reconnects, outage_ms);
	atomic_set(&ctrl->stats.last_outage_ms, outage_ms);
	atomic_inc(&ctrl->stats.reconnects);
	rnvme_reconnects_done(&ctrl->ctrl);
}

static void rnvme_error_recovery_work(struct work_struct *work)
{
	struct rnvme_ctrl *ctrl = container_of(work, struct rnvme_ctrl, err_work);

	cancel_delayed_work_sync(&ctrl->ack_wd_work);
	flush_work(&ctrl->ctrl.async_event_work);
	/* Soft-RoCE's workaround only: real devices release at once */
	ctrl->cm_deferred = ctrl->queues[0].dev &&
		rnvme_soft_rdma(ctrl->queues[0].dev->ibdev->ops.driver_id) &&
		!rnvme_queue_port_active(&ctrl->queues[0]);
	if (ctrl->cm_deferred) {
		dev_info(ctrl->ctrl.device,
			 "RDMA port of %s (or its link) is down: connections are released when it returns\n",
			 ctrl->rdma_dev_name);
		rnvme_record_error(ctrl, "RDMA port of %s (or its link) down",
				   ctrl->rdma_dev_name);
	}
	rnvme_teardown_io_queues(ctrl, false);
	/* let queued I/O fail over (multipath) or wait for the reconnect */
	nvme_unquiesce_io_queues(&ctrl->ctrl);
	rnvme_teardown_admin_queue(ctrl, false);
	nvme_unquiesce_admin_queue(&ctrl->ctrl);
	/*
	 * Only now: 6.1's keep-alive work waits for its command, and stopping
	 * it first waited out a lost keep-alive's timeout (5 s in the rig)
	 * before any I/O failed over.  The teardown above cancelled that
	 * command; one issued since fails at once (admin queue not live).
	 */
	nvme_stop_keep_alive(&ctrl->ctrl);
	nvme_auth_stop(&ctrl->ctrl);

	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING)) {
		enum nvme_ctrl_state state = nvme_ctrl_state(&ctrl->ctrl);

		/* only a delete may overtake error recovery */
		WARN_ON_ONCE(state != NVME_CTRL_DELETING &&
			     state != NVME_CTRL_DELETING_NOIO);
		return;
	}

	rnvme_reconnect_or_remove(ctrl, 0);
}

/*
 * A port that came back is used after this long: the link's addresses and
 * routes are restored by the network stack (and by whatever manages the
 * network) just after the port turns active, and an attempt that resolves
 * the target address before then goes nowhere and waits out a CM timeout.
 */
#define RNVME_PORT_UP_SETTLE	HZ

/**
 * rnvme_port_event - the RDMA port under @ctrl changed state
 * @ctrl:  a controller whose admin queue last used that device and port
 * @event: IB_EVENT_PORT_ERR, IB_EVENT_DEVICE_FATAL or IB_EVENT_PORT_ACTIVE
 *
 * A port that went down will not carry the controller's traffic again until
 * it returns: recover now, so that multipath fails I/O over at once instead
 * of after the RC retry budget or a command timeout.  A port that came back
 * ends the wait for the next reconnect attempt.  Called from the IB event
 * work (process context), with the controller list locked.
 */
static void rnvme_port_event(struct rnvme_ctrl *ctrl, enum ib_event_type event)
{
	if (event != IB_EVENT_PORT_ACTIVE) {
		if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_LIVE)
			return;
		dev_warn(ctrl->ctrl.device, "RDMA %s on %s port %u: recovering now\n",
			 ib_event_msg(event), ctrl->rdma_dev_name,
			 READ_ONCE(ctrl->rdma_port));
		rnvme_record_error(ctrl, "%s on %s port %u", ib_event_msg(event),
				   ctrl->rdma_dev_name, READ_ONCE(ctrl->rdma_port));
		rnvme_error_recovery(ctrl);
		return;
	}
	if (rnvme_kick_reconnect(ctrl, RNVME_PORT_UP_SETTLE))
		dev_info(ctrl->ctrl.device, "RDMA port %u of %s is active again: reconnecting in 1 second\n",
			 READ_ONCE(ctrl->rdma_port), ctrl->rdma_dev_name);
}

/*
 * The ACK watchdog of a live controller (see ack_watchdog_ms in main.c):
 * RNVME_ACK_WD_TICKS checks per period; a queue that had signaled SENDs
 * outstanding and no SEND completion over all of them starts error recovery.
 * An I/O queue that posts no more and whose newest SENDs were unsignaled, or
 * whose commands wait for answers with nothing heard since the last check,
 * gets a probe (rnvme_post_probe()), so that the path is watched too.  Poll
 * queues are left out: their completions are reaped only when someone
 * polls.
 */
static void rnvme_ack_wd_work(struct work_struct *work)
{
	struct rnvme_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct rnvme_ctrl, ack_wd_work);
	unsigned int ms = READ_ONCE(rnvme_ack_watchdog_ms);
	int i;

	/* error recovery, reset and delete stop it; a reconnect re-arms it */
	if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_LIVE)
		return;

	for (i = 0; ms && i < ctrl->ctrl.queue_count; i++) {
		struct rnvme_queue *queue = &ctrl->queues[i];
		enum rnvme_ack_wd_verdict v;
		u32 seq, rsps;
		int pending;

		if (!test_bit(RNVME_Q_LIVE, &queue->flags) || queue->poll)
			continue;
		/*
		 * A batch still open here was left by blk-mq (no last
		 * request, no commit_rqs): its SENDs are counted as posted
		 * and only a post makes them so.  One being built right now
		 * goes out early, in order, which costs a doorbell.
		 */
		if (queue->ordered && READ_ONCE(queue->chain))
			rnvme_chain_flush(queue);
		pending = atomic_read(&queue->sends_pending);
		seq = atomic_read(&queue->send_seq);
		rsps = READ_ONCE(queue->rsp_count);
		/*
		 * answers due count only where the probe hears the path: an
		 * I/O queue not on iWARP (the admin queue's AER waits for
		 * ever, and keep-alive watches it)
		 */
		v = rnvme_ack_wd_tick(&queue->ack_wd, pending,
				      READ_ONCE(queue->send_acks), seq,
				      READ_ONCE(queue->retired_seq), rsps,
				      queue->probe_hears && seq != rsps);
		if (v == RNVME_WD_PROBE && rnvme_post_probe(queue))
			/* the QP failed; its error completion starts recovery */
			continue;
		if (v != RNVME_WD_SILENT)
			continue;
		/*
		 * On iWARP no completion says the target heard anything: a
		 * SEND waits there for TCP's window and for the READ responses
		 * queued ahead of it (over siw on the debug kernel, past 1.5 s
		 * on a working path, three false recoveries in one 04 run).
		 * Keep-alive watches that path, as it does for nvme_rdma.
		 */
		if (queue->send_acks_local)
			continue;
		/*
		 * Silent is what the host has seen; completions waiting in
		 * the CQ for their handler mean the fabric answered and the
		 * host has not looked yet: judged again at the next check.
		 */
		if (rnvme_cq_unhandled(queue)) {
			dev_info_ratelimited(ctrl->ctrl.device,
					     "queue %d: no SEND completion handled for %u ms, but its CQ has completions waiting for their handler: not silent\n",
					     i, ms);
			continue;
		}

		dev_warn(ctrl->ctrl.device,
			 "queue %d: no RDMA acknowledgment of %d SEND(s)%s for %u ms: path silent, recovering\n",
			 i, pending,
			 test_bit(0, &queue->probe_busy) ?
			 " (the watchdog's probe among them)" : "", ms);
		rnvme_record_error(ctrl, "queue %d: no RDMA ACK for %u ms (ack_watchdog_ms)",
				   i, ms);
		rnvme_error_recovery(ctrl);
		return;
	}
	rnvme_ack_wd_arm(ctrl);
}

/**
 * rnvme_ack_wd_arm - schedule the next ACK watchdog check of @ctrl
 * @ctrl: a controller that is live
 *
 * Nothing while the watchdog is off; turning it on arms the live
 * controllers (rnvme_ack_wd_arm_live()).
 */
static void rnvme_ack_wd_arm(struct rnvme_ctrl *ctrl)
{
	unsigned int ms = READ_ONCE(rnvme_ack_watchdog_ms);

	if (ms)
		queue_delayed_work(nvme_wq, &ctrl->ack_wd_work,
				   msecs_to_jiffies(ms / RNVME_ACK_WD_TICKS));
}

/*
 * Arm the ACK watchdog of every live controller.  Under rnvme_ctrl_mutex: a
 * controller leaves the list before its watchdog is cancelled for the last
 * time (rnvme_free_ctrl()), so none is armed after that.
 */
void rnvme_ack_wd_arm_live(void)
{
	struct rnvme_ctrl *ctrl;

	mutex_lock(&rnvme_ctrl_mutex);
	list_for_each_entry(ctrl, &rnvme_ctrl_list, list)
		if (nvme_ctrl_state(&ctrl->ctrl) == NVME_CTRL_LIVE)
			rnvme_ack_wd_arm(ctrl);
	mutex_unlock(&rnvme_ctrl_mutex);
}

static void rnvme_shutdown_ctrl(struct rnvme_ctrl *ctrl, bool shutdown)
{
	cancel_delayed_work_sync(&ctrl->ack_wd_work);
	cancel_work_sync(&ctrl->err_work);
	cancel_delayed_work_sync(&ctrl->reconnect_work);
	/* queues kept by error recovery are freed by the teardown below */
	ctrl->cm_deferred = false;

	rnvme_teardown_io_queues(ctrl, shutdown);
	nvme_quiesce_admin_queue(&ctrl->ctrl);
	/*
	 * The queue may already be gone; a failed shutdown is harmless then.
	 * Without a device or a port under it the Property Set could only
	 * time out (60 s): skip it.
	 */
	if (!READ_ONCE(ctrl->dev_removed) &&
	    rnvme_queue_port_active(&ctrl->queues[0]))
		rnvme_disable_ctrl(&ctrl->ctrl, shutdown);
	else
		dev_info(ctrl->ctrl.device,
			 "RDMA %s: skipping the controller %s\n",
			 ctrl->dev_removed ? "device removed" : "port down",
			 shutdown ? "shutdown" : "disable");
	rnvme_teardown_admin_queue(ctrl, shutdown);
}

static void rnvme_delete_ctrl(struct nvme_ctrl *nctrl)
{
	rnvme_shutdown_ctrl(to_rnvme_ctrl(nctrl), true);
}

static void rnvme_reset_ctrl_work(struct work_struct *work)
{
	struct rnvme_ctrl *ctrl = container_of(work, struct rnvme_ctrl,
					       ctrl.reset_work);
	int ret;

	nvme_stop_ctrl(&ctrl->ctrl);
	rnvme_shutdown_ctrl(ctrl, false);

	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING)) {
		enum nvme_ctrl_state state = nvme_ctrl_state(&ctrl->ctrl);

		WARN_ON_ONCE(state != NVME_CTRL_DELETING &&
			     state != NVME_CTRL_DELETING_NOIO);
		return;
	}

	ctrl->stats.outage_start = jiffies;
	ret = rnvme_setup_ctrl(ctrl, false);
	if (ret) {
		++ctrl->ctrl.nr_reconnects;
		rnvme_record_error(ctrl, "reset: setup failed (%d)", ret);
		rnvme_reconnect_or_remove(ctrl, ret);
	}
}

static void rnvme_stop_ctrl(struct nvme_ctrl *nctrl)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(nctrl);

	cancel_delayed_work_sync(&ctrl->ack_wd_work);
	flush_work(&ctrl->err_work);
	cancel_delayed_work_sync(&ctrl->reconnect_work);
}

static void rnvme_free_ctrl(struct nvme_ctrl *nctrl)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(nctrl);
	u32 i;

	/* a grow queued after its queue was torn down has nothing to do */
	for (i = 0; ctrl->queues && i < nctrl->queue_count; i++)
		cancel_work_sync(&ctrl->queues[i].mr_grow);
	/* a controller that never made it onto the list does not own opts */
	if (!list_empty(&ctrl->list)) {
		rnvme_ctrl_list_del(ctrl);
		nvmf_free_options(nctrl->opts);
	}
	/* off the list: rnvme_ack_wd_arm_live() cannot arm it again */
	cancel_delayed_work_sync(&ctrl->ack_wd_work);
	/* the tag set's removal waited for the held commands */
	cancel_work_sync(&ctrl->ccr_work);
	cancel_delayed_work_sync(&ctrl->hold_work);
	rnvme_tele_unregister(ctrl);
	free_percpu(ctrl->qstats);
	kfree(ctrl->queues);
	kfree(ctrl);
}

/*
 * NVME_F_METADATA_SUPPORTED as in the in-tree driver: it lets nvme-core read
 * a namespace's PI type (on 6.12 it stops before that without the flag, and
 * a PI-only namespace gets capacity 0).  ctrl.max_integrity_segments stays 0
 * (no signature MRs), so no namespace gets a block integrity profile: PI-only
 * namespaces run with PRACT, others get capacity 0.
 */
static const struct nvme_ctrl_ops rnvme_ctrl_ops = {
	.name			= rnvme_transport_name,
	.module			= THIS_MODULE,
	.flags			= NVME_F_FABRICS | NVME_F_METADATA_SUPPORTED,
	.dev_attr_groups	= rnvme_ctrl_attr_groups,
	.reg_read32		= nvmf_reg_read32,
	.reg_read64		= nvmf_reg_read64,
	.reg_write32		= nvmf_reg_write32,
	.free_ctrl		= rnvme_free_ctrl,
	.submit_async_event	= rnvme_submit_async_event,
	.delete_ctrl		= rnvme_delete_ctrl,
	.stop_ctrl		= rnvme_stop_ctrl,
	.get_address		= nvmf_get_address,
#ifdef HAVE_NVME_CTRL_OPS_GET_VIRT_BOUNDARY
	/*
	 * After 6.12 nvme-core asks the transport (unconditionally); RDMA
	 * memory registration needs the controller page boundary.
	 */
	.get_virt_boundary	= nvme_get_virt_boundary,
#endif
};

static int rnvme_parse_addresses(struct rnvme_ctrl *ctrl)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	int ret;

	if (!(opts->mask & NVMF_OPT_TRSVCID)) {
		opts->trsvcid = kstrdup(__stringify(NVME_RDMA_IP_PORT), GFP_KERNEL);
		if (!opts->trsvcid)
			return -ENOMEM;
		opts->mask |= NVMF_OPT_TRSVCID;
	}

	ret = inet_pton_with_scope(&init_net, AF_UNSPEC, opts->traddr,
				   opts->trsvcid, &ctrl->addr);
	if (ret) {
		pr_err("traddr=%s trsvcid=%s: not an IPv4/IPv6 address and port (%d)\n",
		       opts->traddr, opts->trsvcid, ret);
		return ret;
	}

	if (opts->mask & NVMF_OPT_HOST_TRADDR) {
		ret = inet_pton_with_scope(&init_net, AF_UNSPEC,
					   opts->host_traddr, NULL,
					   &ctrl->src_addr);
		if (ret) {
			pr_err("host_traddr=%s: not an IPv4/IPv6 address (%d)\n",
			       opts->host_traddr, ret);
			return ret;
		}
	}
	return 0;
}

static int rnvme_check_options(struct nvmf_ctrl_options *opts)
{
	if (!RNVME_HOST_AUTH &&
	    (opts->dhchap_secret || opts->dhchap_ctrl_secret)) {
		pr_err("dhchap_secret: this kernel's nvme-core has no in-band authentication (CONFIG_NVME_HOST_AUTH); not connecting unauthenticated\n");
		return -EOPNOTSUPP;
	}
	if (opts->dhchap_ctrl_secret && !opts->dhchap_secret) {
		pr_err("dhchap_ctrl_secret needs dhchap_secret: the controller is authenticated within the host's authentication\n");
		return -EINVAL;
	}
	/* tos is an 8-bit IP TOS / traffic class; -1 means unset */
	if (opts->tos > 255) {
		pr_err("tos=%d out of range 0..255\n", opts->tos);
		return -EINVAL;
	}
	if (opts->queue_size > NVME_RDMA_MAX_QUEUE_SIZE)
		pr_warn("queue_size %zu > %d supported by NVMe/RDMA: using %d\n",
			opts->queue_size, NVME_RDMA_MAX_QUEUE_SIZE,
			NVME_RDMA_MAX_QUEUE_SIZE);
	/*
	 * nvme-fabrics caps nr_io_queues to the online CPUs, but takes any
	 * positive int for these two.  No map gets more queues than CPUs
	 * anyway (rnvme_split_io_queues), and ctrl->queues is sized from the
	 * sum: nr_write_queues=INT_MAX would ask kcalloc() for gigabytes, and
	 * two of them wrap queue_count to 1 and the I/O queues overrun it.
	 */
	opts->nr_write_queues = min(opts->nr_write_queues, num_online_cpus());
	opts->nr_poll_queues = min(opts->nr_poll_queues, num_online_cpus());
	return 0;
}

/**
 * rnvme_create_check - refuse a create whose options rnvme cannot honour
 * @opts: the options written to /dev/nvme-fabrics
 *
 * Some options are capped instead (see rnvme_check_options()).
 *
 * Return: 0, or the -errno the create fails with; its attempt record is
 * logged then.
 */
int rnvme_create_check(struct nvmf_ctrl_options *opts)
{
	int ret;

	ret = rnvme_check_options(opts);
	if (ret)
		rnvme_emit_refused(ret == -EOPNOTSUPP ? "auth-not-in-kernel" :
				   "invalid-option", ret);
	return ret;
}

/**
 * rnvme_create_ctrl - create a controller and connect it
 * @dev:  nvme-fabrics' device
 * @opts: options rnvme_create_check() accepted
 *
 * Return: the live controller, or an ERR_PTR(); either way the attempt's
 * record is logged.
 */
struct nvme_ctrl *rnvme_create_ctrl(struct device *dev,
				    struct nvmf_ctrl_options *opts)
{
	struct rnvme_ctrl *ctrl;
	u32 i;
	int ret;

	ctrl = kzalloc(sizeof(*ctrl), GFP_KERNEL);
	if (!ctrl)
		return ERR_PTR(-ENOMEM);
	ctrl->ctrl.opts = opts;
	INIT_LIST_HEAD(&ctrl->list);
	INIT_LIST_HEAD(&ctrl->claim);
	INIT_LIST_HEAD(&ctrl->tele_entry);
	spin_lock_init(&ctrl->stats.lock);
	mutex_init(&ctrl->tagset_lock);
	rnvme_cause_begin(ctrl);

	ret = rnvme_parse_addresses(ctrl);
	if (ret) {
		rnvme_emit_refused("invalid-address", ret);
		goto out_free_ctrl;
	}

	ret = rnvme_ctrl_claim(ctrl);
	if (ret) {
		pr_err("a controller for %s at %s:%s already exists (use duplicate_connect to add another)\n",
		       opts->subsysnqn, opts->traddr, opts->trsvcid);
		rnvme_note_cause(ctrl, "options", "already-connected", -1);
		goto out_emit_record;
	}

	INIT_DELAYED_WORK(&ctrl->reconnect_work, rnvme_reconnect_work);
	INIT_DELAYED_WORK(&ctrl->ack_wd_work, rnvme_ack_wd_work);
	INIT_DELAYED_WORK(&ctrl->hold_work, rnvme_hold_work);
	INIT_WORK(&ctrl->ccr_work, rnvme_ccr_work);
	spin_lock_init(&ctrl->held_lock);
	INIT_LIST_HEAD(&ctrl->held);
	init_waitqueue_head(&ctrl->hold_wait);
	INIT_WORK(&ctrl->err_work, rnvme_error_recovery_work);
	INIT_WORK(&ctrl->ctrl.reset_work, rnvme_reset_ctrl_work);

	ctrl->ctrl.queue_count = opts->nr_io_queues + opts->nr_write_queues +
				 opts->nr_poll_queues + 1;
	ctrl->ctrl.sqsize = min_t(size_t, opts->queue_size,
				  NVME_RDMA_MAX_QUEUE_SIZE) - 1;
	ctrl->ctrl.kato = opts->kato;

	ret = -ENOMEM;
	ctrl->queues = kcalloc(ctrl->ctrl.queue_count, sizeof(*ctrl->queues),
			       GFP_KERNEL);
	if (!ctrl->queues)
		goto out_unclaim;
	/* one struct rnvme_qstats per queue index, on every CPU */
	ctrl->qstats = (struct rnvme_qstats __percpu *)
		__alloc_percpu(ctrl->ctrl.queue_count *
			       sizeof(struct rnvme_qstats),
			       __alignof__(struct rnvme_qstats));
	if (!ctrl->qstats)
		goto out_free_queues;
	/* before any I/O: telemetry may be on, and may be switched on */
	ret = rnvme_tele_register(ctrl);
	if (ret)
		goto out_free_queues;
	for (i = 0; i < ctrl->ctrl.queue_count; i++) {
		ctrl->queues[i].ctrl = ctrl;
		ctrl->queues[i].stats = ctrl->qstats + i;
		ctrl->queues[i].qid = i;
		mutex_init(&ctrl->queues[i].queue_lock);
		INIT_WORK(&ctrl->queues[i].mr_grow, rnvme_mr_grow_work);
	}

	ret = nvme_init_ctrl(&ctrl->ctrl, dev, &rnvme_ctrl_ops, 0);
	if (ret)
		goto out_free_queues;

	ret = rnvme_add_ctrl(&ctrl->ctrl);
	if (ret)
		goto out_put_ctrl;

	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING)) {
		WARN_ON_ONCE(1);
		ret = -EINTR;
		goto out_uninit_ctrl;
	}

	ret = rnvme_setup_ctrl(ctrl, true);
	if (ret)
		goto out_uninit_ctrl;

	dev_info(ctrl->ctrl.device, "new ctrl: NQN \"%s\", addr %pISpcs, hostnqn: %s\n",
		 nvmf_ctrl_subsysnqn(&ctrl->ctrl), &ctrl->addr, opts->host->nqn);

	rnvme_emit_attempt(ctrl, "connect", 0);
	rnvme_ctrl_list_add(ctrl);
	return &ctrl->ctrl;

out_uninit_ctrl:
	nvme_uninit_ctrl(&ctrl->ctrl);
out_put_ctrl:
	rnvme_emit_attempt(ctrl, "connect", ret);
	rnvme_ctrl_unclaim(ctrl);
	/* from here on free_ctrl releases the controller with its last ref */
	nvme_put_ctrl(&ctrl->ctrl);
	if (ret > 0)	/* an NVMe status from Connect */
		ret = -EIO;
	return ERR_PTR(ret);
out_free_queues:
	rnvme_tele_unregister(ctrl);
	free_percpu(ctrl->qstats);
	kfree(ctrl->queues);
	/* nvme_init_ctrl() failed: its device and name are gone */
	ctrl->ctrl.device = NULL;
out_unclaim:
	rnvme_ctrl_unclaim(ctrl);
out_emit_record:
	rnvme_emit_attempt(ctrl, "connect", ret);
out_free_ctrl:
	kfree(ctrl);
	return ERR_PTR(ret);
}

/*
 * A live controller whose RDMA port still passes traffic can be shut down.
 * Ask the device, not the port-state cache: when the netdev goes away the
 * driver marks its port down at once, but the cache learns it from an event
 * handled later, often after this device's removal has begun.
 */
static bool rnvme_device_still_usable(struct rnvme_ctrl *ctrl,
				      struct ib_device *ibdev)
{
	struct ib_port_attr attr;

	/*
	 * The port the admin queue last used, kept in the controller: error
	 * recovery may destroy the admin queue's CM id at any time.
	 */
	if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_LIVE)
		return false;
	if (ib_query_port(ibdev, READ_ONCE(ctrl->rdma_port), &attr))
		return false;
	return attr.state == IB_PORT_ACTIVE;
}

/**
 * rnvme_delete_ctrls - delete controllers and wait until they are gone
 * @ibdev: only those whose admin queue used this device; NULL for all
 */
void rnvme_delete_ctrls(struct ib_device *ibdev)
{
	struct rnvme_ctrl *ctrl;
	bool found = false;

	mutex_lock(&rnvme_ctrl_mutex);
	list_for_each_entry(ctrl, &rnvme_ctrl_list, list) {
		if (ibdev && READ_ONCE(ctrl->ibdev) != ibdev)
			continue;
		if (!ibdev) {
			dev_info(ctrl->ctrl.device,
				 "deleting controller: rnvme is unloading\n");
		} else if (rnvme_device_still_usable(ctrl, ibdev)) {
			/*
			 * An orderly unregistration (rdma link delete, driver
			 * unbind): the device works until this callback
			 * returns.  Delete as `nvme disconnect` does, so the
			 * namespaces' dirty pages are written and the
			 * controller gets its CC.SHN shutdown.
			 */
			dev_info(ctrl->ctrl.device,
				 "deleting controller: RDMA device %s is being unregistered; its port is up: writing back and shutting down first\n",
				 ctrl->rdma_dev_name);
		} else {
			/*
			 * The port is down (the netdev went away first): the
			 * QPs will never complete anything again.  Error
			 * recovery cancels the commands in flight (deleting
			 * the namespaces waits for them), and the shutdown
			 * skips the Property Set that would time out.
			 */
			dev_info(ctrl->ctrl.device,
				 "deleting controller: RDMA device %s is going away with its port down: failing I/O in flight\n",
				 ctrl->rdma_dev_name);
			WRITE_ONCE(ctrl->dev_removed, true);
			rnvme_error_recovery(ctrl);
		}
		nvme_delete_ctrl(&ctrl->ctrl);
		found = true;
	}
	mutex_unlock(&rnvme_ctrl_mutex);

	if (found)
		flush_workqueue(nvme_delete_wq);
}

/*
 * Port events of every RDMA device: a controller on a port that went down
 * recovers (and fails over) now; one waiting to reconnect through a port
 * that came back tries at once.  The handler lives from the device's
 * registration (or rnvme's load) to its removal, so a port's return is seen
 * even while no queue holds the device.
 *
 * The RDMA core calls handlers with the device's event_handler_rwsem held,
 * from ib_wq, which device unregistration flushes: taking rnvme_ctrl_mutex
 * there would make it depend on both (lockdep reported the cycle during a
 * device removal).  The handler only queues a work item of its own.
 */
struct rnvme_port_work {
	struct work_struct	work;
	struct ib_device	*ibdev;	/* compared, never dereferenced */
	u32			port;
	enum ib_event_type	event;
};

static struct workqueue_struct *rnvme_event_wq;

static void rnvme_port_work_fn(struct work_struct *work)
{
	struct rnvme_port_work *pw = container_of(work, struct rnvme_port_work,
						  work);
	struct rnvme_ctrl *ctrl;

	mutex_lock(&rnvme_ctrl_mutex);
	list_for_each_entry(ctrl, &rnvme_ctrl_list, list) {
		if (READ_ONCE(ctrl->ibdev) != pw->ibdev)
			continue;
		if (pw->event != IB_EVENT_DEVICE_FATAL &&
		    READ_ONCE(ctrl->rdma_port) != pw->port)
			continue;
		rnvme_port_event(ctrl, pw->event);
	}
	mutex_unlock(&rnvme_ctrl_mutex);
	kfree(pw);
}

static void rnvme_ib_event(struct ib_event_handler *handler,
			   struct ib_event *event)
{
	struct rnvme_port_work *pw;

	switch (event->event) {
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_DEVICE_FATAL:
		break;
	default:
		return;
	}

	pw = kzalloc(sizeof(*pw), GFP_KERNEL);
	if (!pw)
		return;	/* the QPs' own errors and timeouts still recover */
	INIT_WORK(&pw->work, rnvme_port_work_fn);
	pw->ibdev = event->device;
	pw->port = event->element.port_num;
	pw->event = event->event;
	queue_work(rnvme_event_wq, &pw->work);
}

static struct ib_client rnvme_ib_client;

static int rnvme_add_one(struct ib_device *ibdev)
{
	struct ib_event_handler *handler;

	handler = kzalloc(sizeof(*handler), GFP_KERNEL);
	if (!handler)
		return -ENOMEM;
	INIT_IB_EVENT_HANDLER(handler, ibdev, rnvme_ib_event);
	ib_register_event_handler(handler);
	ib_set_client_data(ibdev, &rnvme_ib_client, handler);
	return 0;
}

static void rnvme_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct ib_event_handler *handler = client_data;

	rnvme_delete_ctrls(ibdev);
	if (handler) {
		ib_unregister_event_handler(handler);
		kfree(handler);
	}
}

static struct ib_client rnvme_ib_client = {
	.name	= "rnvme",
	.add	= rnvme_add_one,
	.remove	= rnvme_remove_one,
};

/**
 * rnvme_ib_client_init - watch every RDMA device for removal and port events
 *
 * Return: 0, or -errno (nothing is left registered then).
 */
int rnvme_ib_client_init(void)
{
	int ret;

	/* ordered: a port's down and up events are handled in their order */
	rnvme_event_wq = alloc_ordered_workqueue("rnvme_events", 0);
	if (!rnvme_event_wq)
		return -ENOMEM;

	ret = ib_register_client(&rnvme_ib_client);
	if (ret)
		destroy_workqueue(rnvme_event_wq);
	return ret;
}

/* rnvme_ib_client_exit - undo rnvme_ib_client_init() */
void rnvme_ib_client_exit(void)
{
	ib_unregister_client(&rnvme_ib_client);
	/* no handler is left to queue port work: run what is queued */
	destroy_workqueue(rnvme_event_wq);
}
