// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme diagnostics that every layer records, through the functions rnvme.h
 * declares for diag.c: why a connect attempt failed (its record in the
 * kernel log) and a controller's last transport error (sysfs last_error).
 * Notes and errors are written from any context under the controller's
 * stats.lock; an attempt's record is logged by the attempt, in process
 * context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/timekeeping.h>
#include "rnvme.h"

/*
 * The connect-attempt record: every create and reconnect attempt ends with
 * one kernel log line of key=value pairs (Documentation/rnvme.rst,
 * "Connect-attempt records"), e.g.
 *
 *   rnvme: attempt v=1 id=7 kind=connect pid=812 ctrl=nvme1
 *          addr=192.0.2.2:4420 result=fail err=-5 stage=fabrics-connect
 *          cause=subsystem-not-found qid=0 nvme_status=0x4182
 *          nvme_result=0x10100
 *
 * The values are tokens without spaces; pid is the process that wrote the
 * options to /dev/nvme-fabrics (the create runs in its context), so a tool
 * finds its own attempt's record among concurrent ones.
 */
static atomic64_t rnvme_attempt_seq = ATOMIC64_INIT(0);

/* rnvme_cause_begin - a new attempt: forget the last one's cause */
void rnvme_cause_begin(struct rnvme_ctrl *ctrl)
{
	unsigned long flags;

	spin_lock_irqsave(&ctrl->stats.lock, flags);
	ctrl->cause = (struct rnvme_cause) {
		.qid = -1, .rej_sts = -1, .nvme_status = -1,
	};
	ctrl->attempt_id = atomic64_inc_return(&rnvme_attempt_seq);
	spin_unlock_irqrestore(&ctrl->stats.lock, flags);
}

static void rnvme_note(struct rnvme_ctrl *ctrl, const struct rnvme_cause *c)
{
	unsigned long flags;

	spin_lock_irqsave(&ctrl->stats.lock, flags);
	if (!ctrl->cause.stage)
		ctrl->cause = *c;
	spin_unlock_irqrestore(&ctrl->stats.lock, flags);
}

/**
 * rnvme_note_cause - record why the current attempt fails, if first
 * @ctrl:  the controller
 * @stage: a stage token (see struct rnvme_cause)
 * @cause: a cause token
 * @qid:   the queue, or -1
 *
 * Any context.
 */
void rnvme_note_cause(struct rnvme_ctrl *ctrl, const char *stage,
		      const char *cause, int qid)
{
	rnvme_note_cm_cause(ctrl, stage, cause, qid, 0, -1);
}

/* rnvme_note_cm_cause - as rnvme_note_cause, with the CM event's details */
void rnvme_note_cm_cause(struct rnvme_ctrl *ctrl, const char *stage,
			 const char *cause, int qid, int cm_status, int rej_sts)
{
	struct rnvme_cause c = {
		.stage = stage, .cause = cause, .qid = qid,
		.cm_status = cm_status, .rej_sts = rej_sts, .nvme_status = -1,
	};

	rnvme_note(ctrl, &c);
}

/**
 * rnvme_note_connect_status - a Fabrics Connect came back with an error
 * @ctrl:   the controller
 * @qid:    its queue
 * @status: the completion's status field without the phase bit
 * @result: the completion's result
 *
 * Called from the completion handler (softirq) of a queue not live yet.
 */
static void rnvme_note_connect_status(struct rnvme_ctrl *ctrl, int qid,
				      u16 status, u32 result)
{
	struct rnvme_cause c = {
		.stage = "fabrics-connect", .qid = qid, .rej_sts = -1,
		.nvme_status = status, .nvme_result = result,
		.cause = rnvme_connect_status_cause(status, result),
	};

	rnvme_note(ctrl, &c);
}

/**
 * rnvme_note_setup_command - a command sent on a queue that is not live yet
 * @queue: the queue
 * @rq:    the command's request, dispatched
 *
 * Counts the authentication messages the host sends (an authentication
 * that fails is told apart by them: rnvme_auth_error_cause()).  A command
 * requeued after this (no send resources) counts twice: the record is a
 * diagnosis, and that is rare.  blk-mq dispatch context.
 */
void rnvme_note_setup_command(struct rnvme_queue *queue, struct request *rq)
{
	struct nvme_command *cmd = nvme_req(rq)->cmd;

	if (blk_rq_is_passthrough(rq) &&
	    cmd->common.opcode == nvme_fabrics_command &&
	    cmd->fabrics.fctype == nvme_fabrics_type_auth_send &&
	    queue->auth_sends < U8_MAX)
		queue->auth_sends++;
}

/**
 * rnvme_note_setup_response - a response on a queue that is not live yet
 * @queue: the queue
 * @rq:    the request it answers
 * @cqe:   the response
 *
 * Before a queue is live it carries its Fabrics Connect and then, when the
 * target asks for it, the authentication transaction.  Completion handler
 * context (softirq, or a poller).
 */
void rnvme_note_setup_response(struct rnvme_queue *queue, struct request *rq,
			       const struct nvme_completion *cqe)
{
	struct nvme_command *cmd = nvme_req(rq)->cmd;
	u16 status = le16_to_cpu(cqe->status) >> 1;
	u32 result = le32_to_cpu(cqe->result.u32);
	struct rnvme_cause c = {
		.stage = "authentication", .cause = "auth-command-refused",
		.qid = queue->qid, .rej_sts = -1,
		.nvme_status = status, .nvme_result = result,
	};

	if (cmd->common.opcode != nvme_fabrics_command)
		return;
	switch (cmd->fabrics.fctype) {
	case nvme_fabrics_type_connect:
		if (status)
			rnvme_note_connect_status(queue->ctrl, queue->qid,
						  status, result);
		else if (result & (NVME_CONNECT_AUTHREQ_ATR |
				   NVME_CONNECT_AUTHREQ_ASCR))
			set_bit(RNVME_Q_AUTH, &queue->flags);
		break;
	case nvme_fabrics_type_auth_send:
	case nvme_fabrics_type_auth_receive:
		if (status)
			rnvme_note(queue->ctrl, &c);
		break;
	default:
		break;
	}
}

/* the record's optional keys: those the cause has */
static void rnvme_cause_details(const struct rnvme_cause *c, char *buf,
				size_t size)
{
	int n = 0;

	buf[0] = '\0';
	if (c->cm_status)
		n += scnprintf(buf + n, size - n, " cm_status=%d", c->cm_status);
	if (c->rej_sts >= 0)
		n += scnprintf(buf + n, size - n, " rej_status=%#x rej=%s",
			       c->rej_sts, rnvme_cm_rej_token(c->rej_sts));
	if (c->nvme_status >= 0)
		scnprintf(buf + n, size - n, " nvme_status=%#x nvme_result=%#x",
			  c->nvme_status, c->nvme_result);
}

/**
 * rnvme_emit_attempt - log the record of an attempt that just ended
 * @ctrl: the controller
 * @kind: "connect" (a create, in the writer's context) or "reconnect"
 * @ret:  the attempt's result (0, -errno, or an NVMe status)
 */
void rnvme_emit_attempt(struct rnvme_ctrl *ctrl, const char *kind, int ret)
{
	pid_t pid = strcmp(kind, "connect") ? 0 : task_tgid_vnr(current);
	const char *name = ctrl->ctrl.device ? dev_name(ctrl->ctrl.device) : "none";
	struct rnvme_cause c;
	unsigned long flags;
	char details[96];

	spin_lock_irqsave(&ctrl->stats.lock, flags);
	c = ctrl->cause;
	spin_unlock_irqrestore(&ctrl->stats.lock, flags);

	if (!ret) {
		pr_info("attempt v=1 id=%llu kind=%s pid=%d ctrl=%s addr=%pISpc result=ok\n",
			ctrl->attempt_id, kind, pid, name, &ctrl->addr);
		return;
	}
	if (!c.stage) {
		c.stage = "setup";
		c.cause = "error";
	}
	rnvme_cause_details(&c, details, sizeof(details));
	pr_info("attempt v=1 id=%llu kind=%s pid=%d ctrl=%s addr=%pISpc result=fail err=%d stage=%s cause=%s qid=%d%s\n",
		ctrl->attempt_id, kind, pid, name, &ctrl->addr,
		ret > 0 ? -EIO : ret, c.stage, c.cause, c.qid, details);
}

/* a create refused before it has a controller: bad options */
void rnvme_emit_refused(const char *cause, int ret)
{
	pr_info("attempt v=1 id=%llu kind=connect pid=%d ctrl=none addr=none result=fail err=%d stage=options cause=%s qid=-1\n",
		(u64)atomic64_inc_return(&rnvme_attempt_seq),
		task_tgid_vnr(current), ret, cause);
}

/**
 * rnvme_record_error - remember the latest transport error of a controller
 * @ctrl: the controller
 * @fmt:  what happened, printf-style
 *
 * Any context (completion handlers run in softirq).
 */
void rnvme_record_error(struct rnvme_ctrl *ctrl, const char *fmt, ...)
{
	struct rnvme_stats *st = &ctrl->stats;
	unsigned long flags;
	va_list ap;

	spin_lock_irqsave(&st->lock, flags);
	va_start(ap, fmt);
	vscnprintf(st->last_error, sizeof(st->last_error), fmt, ap);
	va_end(ap);
	st->last_error_time = ktime_get_real_seconds();
	atomic_inc(&st->error_seq);
	spin_unlock_irqrestore(&st->lock, flags);
}

/**
 * rnvme_record_attempt_error - record why an attempt failed, keeping its cause
 * @ctrl: the controller
 * @seq:  stats.error_seq read when the attempt began
 * @fmt:  the attempt's own message ("reconnect attempt 3 failed (-28)")
 *
 * When something recorded a more precise error during the attempt, the
 * result is "<message>: <that error>"; otherwise just the message.
 */
void rnvme_record_attempt_error(struct rnvme_ctrl *ctrl, int seq,
				const char *fmt, ...)
{
	struct rnvme_stats *st = &ctrl->stats;
	char cause[sizeof(st->last_error)];
	unsigned long flags;
	va_list ap;
	int n;

	spin_lock_irqsave(&st->lock, flags);
	cause[0] = '\0';
	if (atomic_read(&st->error_seq) != seq)
		strscpy(cause, st->last_error, sizeof(cause));
	va_start(ap, fmt);
	n = vscnprintf(st->last_error, sizeof(st->last_error), fmt, ap);
	va_end(ap);
	if (cause[0])
		scnprintf(st->last_error + n, sizeof(st->last_error) - n, ": %s",
			  cause);
	st->last_error_time = ktime_get_real_seconds();
	atomic_inc(&st->error_seq);
	spin_unlock_irqrestore(&st->lock, flags);
}
