// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme telemetry: the per-queue counters and latency histograms of
 * telemetry.h, read through sysfs as one binary file per controller:
 *
 *   /sys/class/nvme/nvmeN/rnvme/telemetry         (RO, 0444) the records
 *   /sys/class/nvme/nvmeN/rnvme/telemetry_layout  (RO) names of their words
 *   /sys/class/nvme/nvmeN/rnvme/telemetry_reset   (WO, 0200) "1": zero them
 *
 * telemetry is an array of u64 in host byte order: a header of
 * RNVME_TH_WORDS words, then one record per queue of the current
 * association (admin queue first), each RNVME_TR_SCALARS counters followed
 * by RNVME_TC_NR histograms of RNVME_HIST_BUCKETS buckets.  Every field has a
 * fixed offset, so a reader in page-sized pieces always sees whole fields.
 * Documentation/rnvme.rst ("Telemetry") says why sysfs and lists every
 * counter; Documentation/ABI/testing/sysfs-class-nvme-rnvme the files.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>
#include "rnvme.h"

/*
 * The telemetry parameter and its jump label, which the I/O path's hooks
 * (rnvme.h) test: on by default, at about 2 % of the host's instructions
 * per I/O (Documentation/bench.rst, "Telemetry").
 *
 * A controller's telemetry buffers (about 5.5 KiB per queue: the counters
 * and histograms; as much again for a queue's base from its first reset)
 * exist only once telemetry has been on while it existed (from its
 * creation, by default): switching the parameter on allocates them for
 * every registered controller before it enables the jump label, and a
 * controller registered while it is on allocates its own.  They stay, with
 * their counts, until the controller is freed: switching off stops the
 * counting, and freeing them would have to wait out every hook already past
 * its test of the key, in any context.
 *
 * Invariant: while rnvme_tele_key is on, every queue of every registered
 * controller has its queue->tele, so the hooks, which test the key first,
 * need no NULL test.  It holds because rnvme_tele_mutex serializes the
 * switch with registration, rnvme_telemetry (the parameter) is written
 * only under it, and static_branch_enable() returns only once every CPU
 * runs the patched code (it synchronizes them), after the pointers were
 * stored.  The mutex also serializes resets.
 */
static bool rnvme_telemetry = true;
DEFINE_STATIC_KEY_TRUE(rnvme_tele_key);
static DEFINE_MUTEX(rnvme_tele_mutex);
/* controllers from rnvme_tele_register() to rnvme_tele_unregister() */
static LIST_HEAD(rnvme_tele_ctrls);

static int rnvme_tele_buffers(struct rnvme_ctrl *ctrl);

static int rnvme_tele_param_set(const char *val, const struct kernel_param *kp)
{
	struct kernel_param tmp = *kp;
	struct rnvme_ctrl *ctrl;
	bool on;
	int ret;

	/* parsed as any bool parameter, into @on until the buffers exist */
	tmp.arg = &on;
	ret = param_set_bool(val, &tmp);
	if (ret)
		return ret;
	mutex_lock(&rnvme_tele_mutex);
	if (on) {
		list_for_each_entry(ctrl, &rnvme_tele_ctrls, tele_entry) {
			ret = rnvme_tele_buffers(ctrl);
			if (ret)
				goto out;
		}
	}
	WRITE_ONCE(rnvme_telemetry, on);
	if (on)
		static_branch_enable(&rnvme_tele_key);
	else
		static_branch_disable(&rnvme_tele_key);
out:
	mutex_unlock(&rnvme_tele_mutex);
	return ret;
}

static const struct kernel_param_ops rnvme_tele_param_ops = {
	.set	= rnvme_tele_param_set,
	.get	= param_get_bool,
};
module_param_cb(telemetry, &rnvme_tele_param_ops, &rnvme_telemetry, 0644);
MODULE_PARM_DESC(telemetry,
		 "Count commands, bytes, completions and latency per queue (sysfs rnvme/telemetry; default: true)");

#define RNVME_TELE_MAGIC	0x314c4554454d564eULL	/* "NVMETEL1" */
#define RNVME_TELE_VERSION	1

/* header words */
enum {
	RNVME_TH_MAGIC,
	RNVME_TH_VERSION,
	RNVME_TH_HEADER_WORDS,
	RNVME_TH_NR_QUEUES,
	RNVME_TH_RECORD_WORDS,
	RNVME_TH_SCALARS,
	RNVME_TH_HIST_CLASSES,
	RNVME_TH_HIST_BUCKETS,
	RNVME_TH_HIST_MIN_SHIFT,
	RNVME_TH_HIST_SUB_BITS,
	RNVME_TH_ENABLED,
	RNVME_TH_NS_SINCE_RESET,
	RNVME_TH_WORDS,
};

static const char *const rnvme_th_names[RNVME_TH_WORDS] = {
	"magic", "version", "header_words", "nr_queues", "record_words",
	"scalars", "hist_classes", "hist_buckets", "hist_min_shift",
	"hist_sub_bits", "enabled", "ns_since_reset",
};

/* record scalars; "G" marks a gauge, which a reset does not subtract */
static const char *const rnvme_tr_names[] = {
	"G qid", "G flags",
	"submitted_read", "submitted_write", "submitted_other",
	"bytes_read", "bytes_write", "bytes_other",
	"data_none", "data_inline", "data_registered", "data_global_rkey",
	"requeued",
	"completed_read", "completed_write", "completed_other",
	"latency_sum_ns_read", "latency_sum_ns_write", "latency_sum_ns_other",
	"status_success", "status_generic", "status_command_specific",
	"status_media", "status_path", "status_vendor", "status_reserved",
	"status_dnr", "G status_last",
	"host_aborted", "failovers", "rejected",
	"keep_alive_count", "keep_alive_sum_ns", "G keep_alive_last_ns",
	"G keep_alive_max_ns",
	"G wr_posted", "G sends", "G sends_signaled",
	"wc_success", "wc_loc_len_err", "wc_loc_qp_op_err",
	"wc_loc_eec_op_err", "wc_loc_prot_err", "wc_wr_flush_err",
	"wc_mw_bind_err", "wc_bad_resp_err", "wc_loc_access_err",
	"wc_rem_inv_req_err", "wc_rem_access_err", "wc_rem_op_err",
	"wc_retry_exc_err", "wc_rnr_retry_exc_err", "wc_loc_rdd_viol_err",
	"wc_rem_inv_rd_req_err", "wc_rem_abort_err", "wc_inv_eecn_err",
	"wc_inv_eec_state_err", "wc_fatal_err", "wc_resp_timeout_err",
	"wc_general_err", "wc_unknown",
};

#define RNVME_TR_SCALARS	ARRAY_SIZE(rnvme_tr_names)
#define RNVME_TR_WORDS		(RNVME_TR_SCALARS + \
				 RNVME_TC_NR * RNVME_HIST_BUCKETS)

static const char *const rnvme_tc_names[RNVME_TC_NR] = {
	"read", "write", "other",
};

/* a counter read while its writer runs (it takes no lock for readers) */
#define RNVME_TELE_READ(x)	data_race(READ_ONCE(x))

static bool rnvme_tr_gauge(unsigned int i)
{
	return rnvme_tr_names[i][0] == 'G' && rnvme_tr_names[i][1] == ' ';
}

static void rnvme_tele_free_buffers(struct rnvme_qtele *tele, u32 nr)
{
	u32 i;

	if (!tele)
		return;
	for (i = 0; i < nr; i++)
		kvfree(tele[i].base);
	kvfree(tele);
}

/*
 * Give @ctrl its telemetry buffers unless it has them, under
 * rnvme_tele_mutex.  Its queues' pointers are stored first, then ctrl->tele
 * with release: a reader that finds ctrl->tele (acquire) finds it whole.
 * Counting starts from zero now, as after a reset.
 */
static int rnvme_tele_buffers(struct rnvme_ctrl *ctrl)
{
	struct rnvme_qtele *tele;
	u64 now = ktime_get_ns();
	u32 i;

	lockdep_assert_held(&rnvme_tele_mutex);
	if (ctrl->tele)
		return 0;
	tele = kvcalloc(ctrl->tele_nr, sizeof(*tele), GFP_KERNEL);
	if (!tele)
		return -ENOMEM;
	/* the bases come with the first reset (telemetry_reset_store()) */
	for (i = 0; i < ctrl->tele_nr; i++) {
		spin_lock_init(&tele[i].cq_lock);
		tele[i].reset_ns = now;
	}
	/* the key is off, or the controller has run no I/O yet: no reader */
	for (i = 0; i < ctrl->tele_nr; i++)
		ctrl->queues[i].tele = &tele[i];
	/* pairs with the sysfs readers' smp_load_acquire() of ctrl->tele */
	smp_store_release(&ctrl->tele, tele);
	return 0;
}

/**
 * rnvme_tele_register - a new controller takes part in telemetry
 * @ctrl: a controller whose queues (ctrl->queues, queue_count of them, its
 *        largest) run no I/O yet
 *
 * Allocates its buffers if telemetry is on, and lists it for the next
 * switch on.
 *
 * Return: 0, or -ENOMEM when telemetry is on and its buffers could not be
 * allocated.  rnvme_tele_unregister() undoes it, also when it failed.
 */
int rnvme_tele_register(struct rnvme_ctrl *ctrl)
{
	int ret = 0;

	ctrl->tele_nr = ctrl->ctrl.queue_count;
	mutex_lock(&rnvme_tele_mutex);
	if (rnvme_telemetry)
		ret = rnvme_tele_buffers(ctrl);
	if (!ret)
		list_add_tail(&ctrl->tele_entry, &rnvme_tele_ctrls);
	mutex_unlock(&rnvme_tele_mutex);
	return ret;
}

/*
 * @ctrl runs no more I/O and nothing reads its sysfs files: off the list,
 * its buffers freed.  Idempotent: the create path's unwind and free_ctrl may
 * both call it (ctrl->tele_entry is initialized empty with the controller).
 */
void rnvme_tele_unregister(struct rnvme_ctrl *ctrl)
{
	mutex_lock(&rnvme_tele_mutex);
	list_del_init(&ctrl->tele_entry);
	mutex_unlock(&rnvme_tele_mutex);
	rnvme_tele_free_buffers(ctrl->tele, ctrl->tele_nr);
	ctrl->tele = NULL;
}

/**
 * rnvme_tele_wc - count a work completion of a queue by its status
 * @queue:  the queue
 * @status: the completion's status (untrusted range: counted as unknown
 *          beyond the known ones)
 *
 * In the queue's CQ context (several pollers at once on a poll queue).
 */
void rnvme_tele_wc(struct rnvme_queue *queue, enum ib_wc_status status)
{
	struct rnvme_qtele *t = queue->tele;
	u32 i = (u32)status < RNVME_TELE_WC_KNOWN ? status : RNVME_TELE_WC_KNOWN;

	if (unlikely(queue->poll))
		atomic64_inc(&t->cq.wc[i].a);
	else
		t->cq.wc[i].n++;
}

/*
 * Counting.  The I/O path's hooks (rnvme.h) call these only with the jump
 * label on.  A command is armed when it is posted, and counted ended exactly once: by
 * rnvme_tele_completed() when its end comes from the target (CQ context),
 * or by rnvme_tele_complete_rq() when the host ends it (cancel, timeout).
 * Around a switch of the parameter a command in flight may be counted on
 * one side only.
 */

/*
 * How a mapped command's data reaches the target, read back from the
 * request: the value rnvme_map_data() returned for it, for the posts that
 * do not carry that value (admin and poll queues, and a failed post's take
 * back).
 */
static u32 rnvme_tele_data(struct request *rq, struct rnvme_request *req)
{
	if (req->mr)
		return RNVME_TD_REGISTERED;
	if (req->num_sge > 1)
		return RNVME_TD_INLINE;
	if (blk_rq_nr_phys_segments(rq))
		return RNVME_TD_GLOBAL_RKEY;
	return RNVME_TD_NONE;
}

/**
 * rnvme_tele_submitted - count an armed command's post, or take it back
 * @queue:  its queue
 * @req:    the command
 * @locked: the caller holds @queue's post_lock (an ordered I/O queue);
 *          else (admin and poll queues, which post from any CPU) the counts
 *          are added with atomics
 * @d:      1 before the post; -1 when the post failed (disarms it)
 */
void rnvme_tele_submitted(struct rnvme_queue *queue, struct rnvme_request *req,
			  bool locked, u64 d)
{
	struct request *rq = blk_mq_rq_from_pdu(req);
	struct rnvme_tele_sub *s = &queue->tele->sub;
	u32 kind = rnvme_tele_data(rq, req);
	u64 bytes = blk_rq_payload_bytes(rq);
	u32 c = req->tele_class;

	if (locked) {
		s->submitted[c].n += d;
		s->bytes[c].n += d * bytes;
		s->data[kind].n += d;
	} else {
		atomic64_add(d, &s->submitted[c].a);
		atomic64_add(d * bytes, &s->bytes[c].a);
		atomic64_add(d, &s->data[kind].a);
	}
	if (d != 1)
		req->tele_class = RNVME_TC_UNARMED;
}

/* an error status, or an admin command (keep-alive round trips) */
static void rnvme_tele_rare(struct rnvme_qtele *t, struct rnvme_request *req,
			    u16 status, u64 ns)
{
	static const u8 sct_class[8] = {
		RNVME_TS_GENERIC, RNVME_TS_CMD_SPECIFIC, RNVME_TS_MEDIA,
		RNVME_TS_PATH, RNVME_TS_RESERVED, RNVME_TS_RESERVED,
		RNVME_TS_RESERVED, RNVME_TS_VENDOR,
	};
	struct nvme_command *cmd = req->sqe.data;

	if (status) {
		t->cq.status[sct_class[RNVME_NVME_SCT(status)]]++;
		if (status & RNVME_NVME_DNR)
			t->cq.status[RNVME_TS_DNR]++;
		t->cq.status_last = status;
	}
	if (req->queue->qid == 0 &&
	    cmd->common.opcode == nvme_admin_keep_alive) {
		t->cq.ka_count++;
		t->cq.ka_sum_ns += ns;
		t->cq.ka_last_ns = ns;
		if (ns > t->cq.ka_max_ns)
			t->cq.ka_max_ns = ns;
	}
}

/**
 * rnvme_tele_completed - the target answered an armed command: the rare cases
 * @queue:  its queue, in its CQ context
 * @req:    the command, about to end
 * @c:      its class (rnvme_tele_answer() disarmed it)
 * @status: the status field of its response without the phase tag (any
 *          value is counted)
 * @ns:     its latency
 *
 * rnvme_tele_answer() counts a success on an interrupt-driven I/O queue
 * itself; it calls this for an error status, an admin command (keep-alive
 * round trips) and a poll queue, whose completions may be reaped by several
 * pollers at once: there the latency goes in with atomics and an error
 * status under cq_lock.  Answered commands per class are the histograms'
 * sums and successes what the error classes leave (rnvme_tele_scalars()
 * derives both).
 */
void rnvme_tele_completed(struct rnvme_queue *queue, struct rnvme_request *req,
			  u32 c, u16 status, u64 ns)
{
	struct rnvme_qtele *t = queue->tele;
	unsigned long flags;

	if (queue->poll) {
		atomic64_add(ns, &t->cq.lat_sum_ns[c].a);
		atomic64_inc(&t->cq.hist[c][rnvme_hist_bucket(ns)].a);
		if (unlikely(status)) {
			spin_lock_irqsave(&t->cq_lock, flags);
			rnvme_tele_rare(t, req, status, ns);
			spin_unlock_irqrestore(&t->cq_lock, flags);
		}
		return;
	}
	t->cq.lat_sum_ns[c].n += ns;
	t->cq.hist[c][rnvme_hist_bucket(ns)].n++;
	if (status || !queue->qid)
		rnvme_tele_rare(t, req, status, ns);
}

/**
 * rnvme_tele_complete_rq - a request of @queue ends (blk-mq's complete)
 * @queue: its queue
 * @rq:    the request
 *
 * Any context.  Still armed: the host ended it without an answer (cancelled
 * by error recovery or teardown, or timed out); its latency does not go into
 * the histograms, which hold answered commands.  Ending with a path status
 * on a multipath controller: nvme-core hands it to another path (unless it
 * has used up its retries, which only nvme-core knows); cancelled commands
 * end with HOST_ABORTED, a path status.
 */
void rnvme_tele_complete_rq(struct rnvme_queue *queue, struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	u16 status = nvme_req(rq)->status;

	if (rnvme_tele_counting(req)) {
		req->tele_class = RNVME_TC_UNARMED;
		atomic64_inc(&queue->tele->host_aborted);
	}
	if (status && (rq->cmd_flags & REQ_NVME_MPATH) &&
	    !blk_noretry_request(rq) && RNVME_NVME_SCT(status) == 3 &&
	    !(status & RNVME_NVME_DNR))
		atomic64_inc(&queue->tele->failovers);
}

/* a command prepared before is dispatched again (rnvme_tele_dispatched()) */
void rnvme_tele_requeued(struct rnvme_queue *queue)
{
	atomic64_inc(&queue->tele->requeued);
}

/* a command refused at dispatch (queue not ready): requeued, or failed */
void rnvme_tele_rejected(struct rnvme_queue *queue)
{
	if (static_branch_likely(&rnvme_tele_key))
		atomic64_inc(&queue->tele->rejected);
}

/**
 * rnvme_qstats_sum - a queue's statistics, summed over the CPUs
 * @queue: the queue
 * @sum:   where the sums go
 *
 * Any context; the queue may be posting.  Each CPU's value is read whole
 * (its writer adds with one instruction), so the sum is at least what was
 * counted before the call and at most what is counted by its return.
 */
void rnvme_qstats_sum(struct rnvme_queue *queue, struct rnvme_qstats *sum)
{
	int cpu;

	/* an ordered queue's SEND counts, written under post_lock, read whole */
	sum->wr_posted = READ_ONCE(queue->locked_stats.wr_posted);
	sum->sends_signaled = READ_ONCE(queue->locked_stats.sends_signaled);
	sum->send_posts = READ_ONCE(queue->locked_stats.send_posts);
	for_each_possible_cpu(cpu) {
		const struct rnvme_qstats *s = per_cpu_ptr(queue->stats, cpu);

		sum->wr_posted += READ_ONCE(s->wr_posted);
		sum->sends_signaled += READ_ONCE(s->sends_signaled);
		sum->send_posts += READ_ONCE(s->send_posts);
	}
}

/*
 * A counter of @t, or 0 when the queue has no buffers (nothing was counted):
 * @x, which names @t's fields, is evaluated only with @t.
 */
#define RNVME_TELE_VAL(t, x)	((t) ? RNVME_TELE_READ(x) : 0)

/*
 * The raw values of queue index @i in record layout (without histograms,
 * which rnvme_tele_record() copies straight); @t its telemetry, or NULL when
 * the controller has no buffers: then the counters read 0 and the queue's
 * own gauges (qid, flags, wr_posted, sends, sends_signaled) their values.
 */
static void rnvme_tele_scalars(struct rnvme_ctrl *ctrl,
			       const struct rnvme_qtele *t, u32 i, u64 *w)
{
	struct rnvme_queue *queue = &ctrl->queues[i];
	const struct rnvme_tele_sub *s = t ? &t->sub : NULL;
	const struct rnvme_tele_cq *c = t ? &t->cq : NULL;
	u64 answered[RNVME_TC_NR], errors;
	struct rnvme_qstats qs;
	unsigned int n = 0, k, b;

	/* a statistic read while the queue runs: fields may be a bit apart */
	w[n++] = i;
	w[n++] = (queue->poll ? 1 : 0) |
		 (test_bit(RNVME_Q_LIVE, &queue->flags) ? 2 : 0);
	for (k = 0; k < RNVME_TC_NR; k++)
		w[n++] = RNVME_TELE_VAL(t, s->submitted[k].n);
	for (k = 0; k < RNVME_TC_NR; k++)
		w[n++] = RNVME_TELE_VAL(t, s->bytes[k].n);
	for (k = 0; k < RNVME_TD_NR; k++)
		w[n++] = RNVME_TELE_VAL(t, s->data[k].n);
	w[n++] = t ? atomic64_read(&t->requeued) : 0;
	/* answered: the histograms' sums */
	for (k = 0; k < RNVME_TC_NR; k++) {
		answered[k] = 0;
		for (b = 0; t && b < RNVME_HIST_BUCKETS; b++)
			answered[k] += RNVME_TELE_READ(c->hist[k][b].n);
		w[n++] = answered[k];
	}
	for (k = 0; k < RNVME_TC_NR; k++)
		w[n++] = RNVME_TELE_VAL(t, c->lat_sum_ns[k].n);
	/* successes: what the error classes leave (DNR is not a class) */
	errors = 0;
	for (k = 0; k < RNVME_TS_DNR; k++)
		errors += RNVME_TELE_VAL(t, c->status[k]);
	answered[0] += answered[1] + answered[2];
	/* a completion between the two reads: never below zero */
	w[n++] = answered[0] > errors ? answered[0] - errors : 0;
	for (k = 0; k < RNVME_TS_NR; k++)
		w[n++] = RNVME_TELE_VAL(t, c->status[k]);
	w[n++] = RNVME_TELE_VAL(t, c->status_last);
	w[n++] = t ? atomic64_read(&t->host_aborted) : 0;
	w[n++] = t ? atomic64_read(&t->failovers) : 0;
	w[n++] = t ? atomic64_read(&t->rejected) : 0;
	w[n++] = RNVME_TELE_VAL(t, c->ka_count);
	w[n++] = RNVME_TELE_VAL(t, c->ka_sum_ns);
	w[n++] = RNVME_TELE_VAL(t, c->ka_last_ns);
	w[n++] = RNVME_TELE_VAL(t, c->ka_max_ns);
	rnvme_qstats_sum(queue, &qs);
	w[n++] = qs.wr_posted;
	w[n++] = (u32)atomic_read(&queue->send_seq);
	w[n++] = qs.sends_signaled;
	for (k = 0; k < RNVME_TELE_WC_NR; k++)
		w[n++] = RNVME_TELE_VAL(t, c->wc[k].n);
	WARN_ON_ONCE(n != RNVME_TR_SCALARS);
}

/*
 * record @i as read: counters since the last reset, then the histograms;
 * @tele the controller's buffers, or NULL (no counts: zeros)
 */
static void rnvme_tele_record(struct rnvme_ctrl *ctrl,
			      const struct rnvme_qtele *tele, u32 i, u64 *w)
{
	const struct rnvme_qtele *t = tele ? &tele[i] : NULL;
	const u64 *base;
	unsigned int k, b;

	rnvme_tele_scalars(ctrl, t, i, w);
	if (!t) {
		memset(w + RNVME_TR_SCALARS, 0,
		       (RNVME_TR_WORDS - RNVME_TR_SCALARS) * sizeof(u64));
		return;
	}
	/* NULL until the first reset; pairs with its smp_store_release() */
	base = smp_load_acquire(&t->base);
	for (k = 0; base && k < RNVME_TR_SCALARS; k++)
		if (!rnvme_tr_gauge(k))
			w[k] -= RNVME_TELE_READ((base[k]));
	w += RNVME_TR_SCALARS;
	for (k = 0; k < RNVME_TC_NR; k++)
		for (b = 0; b < RNVME_HIST_BUCKETS; b++, w++) {
			*w = RNVME_TELE_READ(t->cq.hist[k][b].n);
			if (base)
				*w -= RNVME_TELE_READ((base[RNVME_TR_SCALARS +
						       k * RNVME_HIST_BUCKETS + b]));
		}
}

/* @tele: the controller's buffers, or NULL (no reset: ns_since_reset 0) */
static void rnvme_tele_header(const struct rnvme_qtele *tele, u32 nr, u64 *w)
{
	w[RNVME_TH_MAGIC] = RNVME_TELE_MAGIC;
	w[RNVME_TH_VERSION] = RNVME_TELE_VERSION;
	w[RNVME_TH_HEADER_WORDS] = RNVME_TH_WORDS;
	w[RNVME_TH_NR_QUEUES] = nr;
	w[RNVME_TH_RECORD_WORDS] = RNVME_TR_WORDS;
	w[RNVME_TH_SCALARS] = RNVME_TR_SCALARS;
	w[RNVME_TH_HIST_CLASSES] = RNVME_TC_NR;
	w[RNVME_TH_HIST_BUCKETS] = RNVME_HIST_BUCKETS;
	w[RNVME_TH_HIST_MIN_SHIFT] = RNVME_HIST_MIN_SHIFT;
	w[RNVME_TH_HIST_SUB_BITS] = RNVME_HIST_SUB_BITS;
	w[RNVME_TH_ENABLED] = READ_ONCE(rnvme_telemetry);
	w[RNVME_TH_NS_SINCE_RESET] = tele ? ktime_get_ns() -
					    READ_ONCE(tele[0].reset_ns) : 0;
}

static struct rnvme_ctrl *rnvme_tele_ctrl(struct kobject *kobj)
{
	return to_rnvme_ctrl(dev_get_drvdata(kobj_to_dev(kobj)));
}

/* copy the part of @src (@len bytes at file offset @at) in [@off, @end) */
static void rnvme_tele_copy(char *buf, loff_t off, loff_t end, const void *src,
			    loff_t at, size_t len)
{
	loff_t from = max(off, at), to = min_t(loff_t, end, at + len);

	if (from < to)
		memcpy(buf + (from - off), src + (from - at), to - from);
}

/*
 * Only the records a read overlaps are computed; a reader of the whole file
 * in pieces gets each record from one moment (counters only grow, so a
 * later piece is never older than an earlier one's view of it).  A
 * controller without buffers (telemetry never on while it existed) reads
 * as one that counted nothing: the same header and records, counters and
 * histograms 0, ns_since_reset 0, the queues' own gauges as they are.
 */
static ssize_t rnvme_tele_read(struct file *file, struct kobject *kobj,
			       RNVME_BIN_ATTR_CONST struct bin_attribute *attr,
			       char *buf,
			       loff_t off, size_t count)
{
	struct rnvme_ctrl *ctrl = rnvme_tele_ctrl(kobj);
	/* NULL, or whole (rnvme_tele_buffers()); then kept until free_ctrl */
	const struct rnvme_qtele *tele = smp_load_acquire(&ctrl->tele);
	const size_t hdr_len = RNVME_TH_WORDS * sizeof(u64);
	const size_t rec_len = RNVME_TR_WORDS * sizeof(u64);
	u32 nr = min_t(u32, ctrl->ctrl.queue_count, ctrl->tele_nr);
	loff_t total = hdr_len + (loff_t)nr * rec_len, end;
	u64 hdr[RNVME_TH_WORDS];
	u64 *rec;
	u32 i;

	if (off >= total)
		return 0;
	count = min_t(loff_t, count, total - off);
	end = off + count;

	if (off < hdr_len) {
		rnvme_tele_header(tele, nr, hdr);
		rnvme_tele_copy(buf, off, end, hdr, 0, hdr_len);
	}
	rec = kvmalloc(rec_len, GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		loff_t at = hdr_len + (loff_t)i * rec_len;

		if (at >= end || at + (loff_t)rec_len <= off)
			continue;
		rnvme_tele_record(ctrl, tele, i, rec);
		rnvme_tele_copy(buf, off, end, rec, at, rec_len);
	}
	kvfree(rec);
	return count;
}

static BIN_ATTR(telemetry, 0444, rnvme_tele_read, NULL, 0);

RNVME_BIN_ATTR_CONST struct bin_attribute *RNVME_BIN_ATTR_CONST
rnvme_tele_bin_attrs[] = {
	&bin_attr_telemetry,
	NULL,
};

static ssize_t telemetry_layout_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	int len, k;

	len = sysfs_emit(buf, "version %d\nheader", RNVME_TELE_VERSION);
	for (k = 0; k < RNVME_TH_WORDS; k++)
		len += sysfs_emit_at(buf, len, " %s", rnvme_th_names[k]);
	len += sysfs_emit_at(buf, len, "\nscalars");
	for (k = 0; k < RNVME_TR_SCALARS; k++)
		len += sysfs_emit_at(buf, len, " %s",
				     rnvme_tr_names[k] +
				     (rnvme_tr_gauge(k) ? 2 : 0));
	len += sysfs_emit_at(buf, len, "\ngauges");
	for (k = 0; k < RNVME_TR_SCALARS; k++)
		if (rnvme_tr_gauge(k))
			len += sysfs_emit_at(buf, len, " %s",
					     rnvme_tr_names[k] + 2);
	len += sysfs_emit_at(buf, len, "\nhistograms");
	for (k = 0; k < RNVME_TC_NR; k++)
		len += sysfs_emit_at(buf, len, " %s", rnvme_tc_names[k]);
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}
DEVICE_ATTR_RO(telemetry_layout);

/*
 * "1": the counters start again from zero.  The current values become the
 * base that reads subtract, so the queues' own counters are never written
 * here (the gauges keep_alive_max_ns and status_last are cleared: a racing
 * completion may set them again, which is what they are for).  Without
 * buffers there is nothing to reset: every counter reads 0.
 */
static ssize_t telemetry_reset_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(dev_get_drvdata(dev));
	ssize_t ret = count;
	u64 *rec, *base;
	bool one;
	u32 i, k, b;

	if (kstrtobool(buf, &one) || !one)
		return -EINVAL;
	rec = kvmalloc_array(RNVME_TR_WORDS, sizeof(u64), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	mutex_lock(&rnvme_tele_mutex);
	/*
	 * A queue's base comes with its first reset, zeroed, which subtracts
	 * nothing: all of them first, so a reset is whole or not done.
	 */
	for (i = 0; ctrl->tele && i < ctrl->tele_nr; i++) {
		if (ctrl->tele[i].base)
			continue;
		base = kvcalloc(RNVME_TR_WORDS, sizeof(u64), GFP_KERNEL);
		if (!base) {
			ret = -ENOMEM;
			goto unlock;
		}
		/* pairs with rnvme_tele_record()'s smp_load_acquire() */
		smp_store_release(&ctrl->tele[i].base, base);
	}
	for (i = 0; ctrl->tele && i < ctrl->tele_nr; i++) {
		struct rnvme_qtele *t = &ctrl->tele[i];
		u64 *w = rec + RNVME_TR_SCALARS;

		rnvme_tele_scalars(ctrl, t, i, rec);
		/* each counter whole: pollers may be adding to them */
		for (k = 0; k < RNVME_TC_NR; k++)
			for (b = 0; b < RNVME_HIST_BUCKETS; b++)
				*w++ = RNVME_TELE_READ(t->cq.hist[k][b].n);
		for (k = 0; k < RNVME_TR_WORDS; k++)
			WRITE_ONCE(t->base[k], rec[k]);
		/* gauges: a racing completion may set them again, as it should */
		data_race(t->cq.ka_max_ns = 0);
		/* as above */
		data_race(t->cq.status_last = 0);
		WRITE_ONCE(t->reset_ns, ktime_get_ns());
	}
unlock:
	mutex_unlock(&rnvme_tele_mutex);
	kvfree(rec);
	return ret;
}
DEVICE_ATTR_WO(telemetry_reset);
