// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme RDMA CM handling: a queue's CM id, created and destroyed here, and
 * one handler for every CM event of every queue, feeding small step
 * functions.  A queue's handshake is address resolution -> route
 * resolution (its verbs resources built in between, queue.c) -> connect
 * (with the NVMe/RDMA private data) -> established; the waiter in
 * rnvme_alloc_queue() learns the outcome from queue->cm_error once cm_done
 * completes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "rnvme.h"

static int rnvme_addr_resolved(struct rnvme_queue *queue)
{
	struct rnvme_ctrl *ctrl = queue->ctrl;
	u8 ack_timeout;
	int ret;

	ret = rnvme_create_queue_ib(queue);
	if (ret) {
		rnvme_note_cause(ctrl, "address", "queue-resources", queue->qid);
		return ret;
	}

	if (ctrl->ctrl.opts->tos >= 0)
		rdma_set_service_type(queue->cm_id, ctrl->ctrl.opts->tos);
	/* before route resolution: on RoCE it also sets the packet lifetime */
	ack_timeout = rnvme_ack_timeout_for(READ_ONCE(rnvme_ack_timeout),
					    rnvme_soft_rdma(queue->dev->ibdev->ops.driver_id));
	if (ack_timeout)
		rdma_set_ack_timeout(queue->cm_id, ack_timeout);

	ret = rdma_resolve_route(queue->cm_id, RNVME_CM_TIMEOUT_MS);
	if (ret) {
		dev_err(ctrl->ctrl.device, "queue %d: route resolution failed to start (%d)\n",
			rnvme_queue_idx(queue), ret);
		rnvme_note_cm_cause(ctrl, "route", "route-error", queue->qid,
				    ret, -1);
		rnvme_destroy_queue_ib(queue);
		return ret;
	}
	return 0;
}

static int rnvme_route_resolved(struct rnvme_queue *queue)
{
	struct rnvme_ctrl *ctrl = queue->ctrl;
	struct rdma_conn_param param = {};
	struct nvme_rdma_cm_req priv;
	int ret;

	param.qp_num = queue->qp->qp_num;
	param.flow_control = 1;
	/* the target reads from our MRs; the host itself never issues READs */
	param.responder_resources =
		rnvme_responder_resources_for(queue->dev->ibdev->attrs.max_qp_rd_atom);
	param.initiator_depth = 0;
	param.retry_count = READ_ONCE(rnvme_retry_count);
	param.rnr_retry_count = 7;
	param.private_data = &priv;
	param.private_data_len = sizeof(priv);

	rnvme_cm_req_init(&priv, rnvme_queue_idx(queue), queue->queue_size);
	/* newer targets check which controller an I/O queue joins */
	if (rnvme_queue_idx(queue))
		rnvme_cm_req_set_cntlid(&priv, ctrl->ctrl.cntlid);

	ret = rdma_connect_locked(queue->cm_id, &param);
	if (ret) {
		dev_err(ctrl->ctrl.device, "queue %d: rdma_connect failed (%d)\n",
			rnvme_queue_idx(queue), ret);
		rnvme_note_cm_cause(ctrl, "cm", "connect-error", queue->qid,
				    ret, -1);
		return ret;
	}
	return 0;
}

/*
 * The receive buffers are posted when the queue starts (rnvme_start_queue()),
 * not here: until then the tag set a response is looked up in may not exist
 * (the admin one is allocated after the admin queue connects, the I/O one
 * after every I/O queue has), and a message the target sends before the
 * host's Fabrics Connect waits in the target's RNR retries.
 */
static int rnvme_conn_established(struct rnvme_queue *queue,
				  struct rdma_cm_event *ev)
{
	const char *problem;

	problem = rnvme_cm_rep_problem(ev->param.conn.private_data,
				       ev->param.conn.private_data_len,
				       queue->queue_size);
	if (problem)
		dev_warn_ratelimited(queue->ctrl->ctrl.device,
				     "queue %d: target's accept: %s (%u bytes); continuing with queue size %u\n",
				     rnvme_queue_idx(queue), problem,
				     ev->param.conn.private_data_len,
				     queue->queue_size);
	return 0;
}

static int rnvme_conn_rejected(struct rnvme_queue *queue,
			       struct rdma_cm_event *ev)
{
	struct rdma_cm_id *cm_id = queue->cm_id;
	int status = ev->status;
	const struct nvme_rdma_cm_rej *rej;
	u8 len = 0;

	rej = rdma_consumer_reject_data(cm_id, ev, &len);
	if (rej && len >= sizeof(rej->sts)) {
		u16 sts = le16_to_cpu(rej->sts);

		dev_err(queue->ctrl->ctrl.device,
			"queue %d: the target rejected the connection: NVMe/RDMA status %#x (%s)\n",
			rnvme_queue_idx(queue), sts, rnvme_cm_rej_msg(sts));
		rnvme_note_cm_cause(queue->ctrl, "cm",
				    rnvme_cm_reject_cause(status, true),
				    queue->qid, status, sts);
	} else {
		dev_err(queue->ctrl->ctrl.device,
			"queue %d: connection rejected: %s (%d); is the target listening on %pISpc?\n",
			rnvme_queue_idx(queue), rdma_reject_msg(cm_id, status),
			status, &queue->ctrl->addr);
		rnvme_note_cm_cause(queue->ctrl, "cm",
				    rnvme_cm_reject_cause(status, false),
				    queue->qid, status, -1);
	}
	return -ECONNRESET;
}

static int rnvme_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rnvme_queue *queue = cm_id->context;
	struct rnvme_ctrl *ctrl = queue->ctrl;
	int err = 0;

	dev_dbg(ctrl->ctrl.device, "queue %d: %s (%d), status %d\n",
		rnvme_queue_idx(queue), rdma_event_msg(ev->event), ev->event,
		ev->status);

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rnvme_addr_resolved(queue);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = rnvme_route_resolved(queue);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		queue->cm_error = rnvme_conn_established(queue, ev);
		complete(&queue->cm_done);
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		err = rnvme_conn_rejected(queue, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		dev_err(ctrl->ctrl.device,
			"queue %d: cannot resolve %pISpc to an RDMA device (%d): no RDMA-capable route to it\n",
			rnvme_queue_idx(queue), &ctrl->addr, ev->status);
		rnvme_note_cm_cause(ctrl, "address",
				    rnvme_addr_error_cause(ev->status),
				    queue->qid, ev->status, -1);
		err = -ECONNRESET;
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		rnvme_note_cm_cause(ctrl, "route", "route-error", queue->qid,
				    ev->status, -1);
		fallthrough;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rnvme_note_cm_cause(ctrl, "cm",
				    ev->event == RDMA_CM_EVENT_UNREACHABLE ?
				    "unreachable" : "connect-error",
				    queue->qid, ev->status, -1);
		dev_err(ctrl->ctrl.device, "queue %d: %s (%d) reaching %pISpc\n",
			rnvme_queue_idx(queue), rdma_event_msg(ev->event),
			ev->status, &ctrl->addr);
		err = -ECONNRESET;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		set_bit(RNVME_Q_DISCONNECTED, &queue->flags);
		if (nvme_ctrl_state(&ctrl->ctrl) == NVME_CTRL_CONNECTING) {
			dev_warn(ctrl->ctrl.device,
				 "queue %d: the target disconnected while connecting: failing the queue's commands now\n",
				 rnvme_queue_idx(queue));
			rnvme_abort_queue_requests(queue);
		}
		fallthrough;
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		/*
		 * On a live controller nothing of the host's asked for this
		 * (its own teardown leaves LIVE first): the target, or the
		 * local RDMA stack, ended the connection.  Say so where an
		 * admin looks; the error recovery line alone hides the cause.
		 */
		if (nvme_ctrl_state(&ctrl->ctrl) == NVME_CTRL_LIVE) {
			dev_warn(ctrl->ctrl.device,
				 "queue %d: RDMA CM %s on a live controller: recovering\n",
				 rnvme_queue_idx(queue),
				 rdma_event_msg(ev->event));
			rnvme_record_error(ctrl, "queue %d: %s",
					   rnvme_queue_idx(queue),
					   rdma_event_msg(ev->event));
		} else {
			dev_dbg(ctrl->ctrl.device, "queue %d: %s: recovering\n",
				rnvme_queue_idx(queue),
				rdma_event_msg(ev->event));
		}
		rnvme_error_recovery(ctrl);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* the ib_client remove callback deletes the controller */
		break;
	default:
		dev_err(ctrl->ctrl.device, "queue %d: unexpected CM event %s (%d)\n",
			rnvme_queue_idx(queue), rdma_event_msg(ev->event),
			ev->event);
		rnvme_error_recovery(ctrl);
		break;
	}

	if (err) {
		queue->cm_error = err;
		complete(&queue->cm_done);
	}
	return 0;
}

static int rnvme_wait_for_cm(struct rnvme_queue *queue)
{
	long ret;

	u32 wait_ms = queue->ctrl->cm_wait_ms ?: RNVME_CM_WAIT_SECS * MSEC_PER_SEC;

	ret = wait_for_completion_interruptible_timeout(&queue->cm_done,
							msecs_to_jiffies(wait_ms));
	if (ret < 0)
		return ret;
	if (!ret)
		return -ETIMEDOUT;
	return queue->cm_error;
}

/**
 * rnvme_alloc_queue - create a queue and connect it at the RDMA CM level
 * @ctrl:       the controller
 * @idx:        queue index (0: admin)
 * @queue_size: NVMe queue entries
 *
 * Resolves the address and route, builds the verbs resources and completes
 * the CM handshake; Fabrics Connect follows in rnvme_start_queue().
 */
int rnvme_alloc_queue(struct rnvme_ctrl *ctrl, int idx, size_t queue_size)
{
	struct rnvme_queue *queue = &ctrl->queues[idx];
	struct sockaddr *src = NULL;
	int ret;

	rnvme_init_queue(ctrl, idx, queue_size);

	queue->cm_id = rdma_create_id(&init_net, rnvme_cm_handler, queue,
				      RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(queue->cm_id)) {
		ret = PTR_ERR(queue->cm_id);
		dev_info(ctrl->ctrl.device,
			 "queue %d: failed to create CM id (%d)\n", idx, ret);
		return ret;
	}

	if (ctrl->ctrl.opts->mask & NVMF_OPT_HOST_TRADDR)
		src = (struct sockaddr *)&ctrl->src_addr;

	/* a handshake that never reports back counts as timed out */
	queue->cm_error = -ETIMEDOUT;
	ret = rdma_resolve_addr(queue->cm_id, src,
				(struct sockaddr *)&ctrl->addr,
				RNVME_CM_TIMEOUT_MS);
	if (ret) {
		dev_info(ctrl->ctrl.device,
			 "queue %d: address resolution of %pISpc failed to start (%d)\n",
			 idx, &ctrl->addr, ret);
		rnvme_note_cm_cause(ctrl, "address", rnvme_addr_error_cause(ret),
				    idx, ret, -1);
		goto out_destroy_cm_id;
	}

	ret = rnvme_wait_for_cm(queue);
	if (ret) {
		dev_info(ctrl->ctrl.device,
			 "queue %d: RDMA connection to %pISpc failed (%d)\n",
			 idx, &ctrl->addr, ret);
		/* no CM event said why: the handshake timed out or was cut */
		rnvme_note_cause(ctrl, "cm", ret == -ETIMEDOUT ? "no-answer" :
				 ret == -ERESTARTSYS ? "interrupted" :
				 "connect-error", idx);
		goto out_destroy_cm_id;
	}

	set_bit(RNVME_Q_ALLOCATED, &queue->flags);
	return 0;

out_destroy_cm_id:
	rdma_destroy_id(queue->cm_id);
	rnvme_destroy_queue_ib(queue);
	return ret;
}

/*
 * A queue is stopped before it is freed if it was ever started; one that
 * never was has posted nothing (RNVME_Q_POSTED), so no completion of its QP
 * can be waiting in a shared CQ when the QP and its buffers go.
 */
void rnvme_free_queue(struct rnvme_queue *queue)
{
	if (!test_and_clear_bit(RNVME_Q_ALLOCATED, &queue->flags))
		return;

	WARN_ON_ONCE(test_bit(RNVME_Q_POSTED, &queue->flags));
	rdma_destroy_id(queue->cm_id);
	rnvme_destroy_queue_ib(queue);
}
