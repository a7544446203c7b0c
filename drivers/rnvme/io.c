// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme I/O path: blk-mq operations, posting commands and receive buffers,
 * completion handling, timeouts and polling.
 *
 * A command is a SEND of its SQE (plus in-capsule data), optionally
 * preceded by a REG_MR.  It ends when both the SEND completion and the
 * response (or, for an MR the target did not invalidate, our LOCAL_INV
 * completion) have arrived: req->ref counts them down from 2.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "rnvme.h"

static struct blk_mq_tags *rnvme_tagset(struct rnvme_queue *queue)
{
	int idx = rnvme_queue_idx(queue);

	if (idx == 0)
		return queue->ctrl->admin_tag_set.tags[0];
	return queue->ctrl->tag_set.tags[idx - 1];
}

/**
 * rnvme_wr_error - a work request failed
 * @cq: its completion queue
 * @wc: the failed completion
 * @op: what the work request did, for the log
 *
 * Flushes during teardown arrive here too; they only log while live.
 */
void rnvme_wr_error(struct ib_cq *cq, struct ib_wc *wc, const char *op)
{
	struct rnvme_queue *queue = wc->qp->qp_context;
	struct rnvme_ctrl *ctrl = queue->ctrl;

	if (nvme_ctrl_state(&ctrl->ctrl) == NVME_CTRL_LIVE) {
		dev_info_ratelimited(ctrl->ctrl.device,
				     "queue %d: %s failed: %s (%d)\n",
				     rnvme_queue_idx(queue), op,
				     ib_wc_status_msg(wc->status), wc->status);
		rnvme_record_error(ctrl, "queue %d: %s failed: %s",
				   rnvme_queue_idx(queue), op,
				   ib_wc_status_msg(wc->status));
	}
	rnvme_error_recovery(ctrl);
}


static void rnvme_complete_rq(struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	struct rnvme_queue *queue = req->queue;

	rnvme_unmap_data(queue, rq);
	ib_dma_unmap_single(queue->dev->ibdev, req->sqe.dma,
			    sizeof(struct nvme_command), DMA_TO_DEVICE);
	nvme_complete_rq(rq);
}

void rnvme_end_request(struct rnvme_request *req)
{
	struct request *rq = blk_mq_rq_from_pdu(req);

	/* completes here unless blk-mq moved it to the submitting CPU */
	if (!nvme_try_complete_req(rq, req->status, req->result))
		rnvme_complete_rq(rq);
}

static void rnvme_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rnvme_qe *qe = container_of(wc->wr_cqe, struct rnvme_qe, cqe);
	struct rnvme_request *req =
		container_of(qe, struct rnvme_request, sqe);

	rnvme_send_completed(req->queue);
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rnvme_wr_error(cq, wc, "SEND");
		return;
	}
	if (refcount_dec_and_test(&req->ref))
		rnvme_end_request(req);
}

static void rnvme_async_done(struct ib_cq *cq, struct ib_wc *wc)
{
	rnvme_send_completed(wc->qp->qp_context);
	if (unlikely(wc->status != IB_WC_SUCCESS))
		rnvme_wr_error(cq, wc, "ASYNC");
}

static int rnvme_post_send(struct rnvme_queue *queue, struct rnvme_qe *qe,
			   struct ib_sge *sge, u32 num_sge,
			   struct ib_send_wr *first)
{
	struct ib_send_wr wr;
	int ret;

	sge->addr = qe->dma;
	sge->length = sizeof(struct nvme_command);
	sge->lkey = queue->dev->pd->local_dma_lkey;

	wr.next = NULL;
	wr.wr_cqe = &qe->cqe;
	wr.sg_list = sge;
	wr.num_sge = num_sge;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;

	if (first)
		first->next = &wr;
	else
		first = &wr;

	rnvme_send_posted(queue);
	ret = ib_post_send(queue->qp, first, NULL);
	if (likely(!ret))
		rnvme_count_wrs(queue, first == &wr ? 1 : 2);
	if (unlikely(ret)) {
		/* nothing was posted: no completion will come */
		atomic_dec(&queue->sends_pending);
		dev_err_ratelimited(queue->ctrl->ctrl.device,
				    "queue %d: posting SEND failed (%d)\n",
				    rnvme_queue_idx(queue), ret);
	}
	return ret;
}

static void rnvme_recv_done(struct ib_cq *cq, struct ib_wc *wc);

int rnvme_post_recv(struct rnvme_queue *queue, struct rnvme_qe *qe)
{
	struct ib_recv_wr wr;
	struct ib_sge sge;
	int ret;

	sge.addr = qe->dma;
	sge.length = sizeof(struct nvme_completion);
	sge.lkey = queue->dev->pd->local_dma_lkey;

	qe->cqe.done = rnvme_recv_done;
	wr.next = NULL;
	wr.wr_cqe = &qe->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;

	ret = ib_post_recv(queue->qp, &wr, NULL);
	if (likely(!ret))
		rnvme_count_wrs(queue, 1);
	if (unlikely(ret))
		dev_err_ratelimited(queue->ctrl->ctrl.device,
				    "queue %d: posting RECV failed (%d)\n",
				    rnvme_queue_idx(queue), ret);
	return ret;
}

void rnvme_submit_async_event(struct nvme_ctrl *nctrl)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(nctrl);
	struct rnvme_queue *queue = &ctrl->queues[0];
	struct rnvme_qe *sqe = &ctrl->async_event_sqe;
	struct ib_device *ibdev = queue->dev->ibdev;
	struct nvme_command *cmd = sqe->data;
	struct ib_sge sge;
	int ret;

	ib_dma_sync_single_for_cpu(ibdev, sqe->dma, sizeof(*cmd), DMA_TO_DEVICE);

	memset(cmd, 0, sizeof(*cmd));
	cmd->common.opcode = nvme_admin_async_event;
	/* beyond the admin tag range: recognized by nvme_is_aen_req() */
	cmd->common.command_id = NVME_AQ_BLK_MQ_DEPTH;
	cmd->common.flags |= NVME_CMD_SGL_METABUF;
	rnvme_sgl_null(cmd);

	sqe->cqe.done = rnvme_async_done;

	ib_dma_sync_single_for_device(ibdev, sqe->dma, sizeof(*cmd),
				      DMA_TO_DEVICE);

	ret = rnvme_post_send(queue, sqe, &sge, 1, NULL);
	WARN_ON_ONCE(ret);
}

static void rnvme_process_rsp(struct rnvme_queue *queue,
			      struct nvme_completion *cqe, struct ib_wc *wc)
{
	struct rnvme_ctrl *ctrl = queue->ctrl;
	struct rnvme_request *req;
	struct request *rq;
	int ret;

	rq = nvme_find_rq(rnvme_tagset(queue), cqe->command_id);
	if (!rq) {
		dev_err(ctrl->ctrl.device,
			"queue %d: response for unknown command id %#x\n",
			rnvme_queue_idx(queue), cqe->command_id);
		rnvme_error_recovery(ctrl);
		return;
	}
	req = blk_mq_rq_to_pdu(rq);
	/*
	 * A target that repeats a completion, or sends one for a command that
	 * already ended, must not end a request twice or touch an idle one.
	 * Responses of a queue are handled one at a time, in its CQ context.
	 */
	if (unlikely(!blk_mq_request_started(rq) || req->rsp_seen)) {
		dev_err(ctrl->ctrl.device,
			"queue %d: %s response for command id %#x\n",
			rnvme_queue_idx(queue),
			blk_mq_request_started(rq) ? "duplicate" : "stale",
			cqe->command_id);
		rnvme_error_recovery(ctrl);
		return;
	}
	req->rsp_seen = true;

	req->status = cqe->status;
	req->result = cqe->result;

	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		if (unlikely(!req->mr ||
			     wc->ex.invalidate_rkey != req->mr->rkey)) {
			dev_err(ctrl->ctrl.device,
				"queue %d: target invalidated rkey %#x, which this command does not own\n",
				rnvme_queue_idx(queue), wc->ex.invalidate_rkey);
			/* recovery cancels the request: do not complete it */
			rnvme_error_recovery(ctrl);
			return;
		}
	} else if (req->mr) {
		ret = rnvme_inv_rkey(queue, req);
		if (unlikely(ret < 0)) {
			dev_err(ctrl->ctrl.device,
				"queue %d: posting LOCAL_INV for rkey %#x failed (%d)\n",
				rnvme_queue_idx(queue), req->mr->rkey, ret);
			rnvme_error_recovery(ctrl);
		}
		/* the LOCAL_INV completion ends the request */
		return;
	}

	if (refcount_dec_and_test(&req->ref))
		rnvme_end_request(req);
}

static void rnvme_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rnvme_qe *qe = container_of(wc->wr_cqe, struct rnvme_qe, cqe);
	struct rnvme_queue *queue = wc->qp->qp_context;
	struct ib_device *ibdev = queue->dev->ibdev;
	struct nvme_completion *cqe = qe->data;
	const size_t len = sizeof(struct nvme_completion);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rnvme_wr_error(cq, wc, "RECV");
		return;
	}

	if (unlikely(wc->byte_len < len)) {
		dev_err(queue->ctrl->ctrl.device,
			"queue %d: response of %u bytes, expected %zu\n",
			rnvme_queue_idx(queue), wc->byte_len, len);
		rnvme_error_recovery(queue->ctrl);
		return;
	}

	ib_dma_sync_single_for_cpu(ibdev, qe->dma, len, DMA_FROM_DEVICE);
	if (unlikely(nvme_is_aen_req(rnvme_queue_idx(queue), cqe->command_id)))
		nvme_complete_async_event(&queue->ctrl->ctrl, cqe->status,
					  &cqe->result);
	else
		rnvme_process_rsp(queue, cqe, wc);
	ib_dma_sync_single_for_device(ibdev, qe->dma, len, DMA_FROM_DEVICE);

	rnvme_post_recv(queue, qe);
}

static int rnvme_init_request(struct blk_mq_tag_set *set, struct request *rq,
			      unsigned int hctx_idx, unsigned int numa_node)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(set->driver_data);
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	int qid = set == &ctrl->tag_set ? hctx_idx + 1 : 0;

	nvme_req(rq)->ctrl = &ctrl->ctrl;
	/*
	 * The SQE buffer lives as long as the tag set; it is DMA-mapped per
	 * command, so it follows the controller across reconnects even when
	 * the new association lands on another RDMA device.
	 */
	req->sqe.data = kzalloc_node(sizeof(struct nvme_command), GFP_KERNEL,
				     numa_node);
	if (!req->sqe.data)
		return -ENOMEM;
	req->queue = &ctrl->queues[qid];
	nvme_req(rq)->cmd = req->sqe.data;
	return 0;
}

static void rnvme_exit_request(struct blk_mq_tag_set *set, struct request *rq,
			       unsigned int hctx_idx)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);

	kfree(req->sqe.data);
}

static int rnvme_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			   unsigned int hctx_idx)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(data);

	hctx->driver_data = &ctrl->queues[hctx_idx + 1];
	return 0;
}

static int rnvme_init_admin_hctx(struct blk_mq_hw_ctx *hctx, void *data,
				 unsigned int hctx_idx)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(data);

	hctx->driver_data = &ctrl->queues[0];
	return 0;
}

/* test_extra_work: three instructions an iteration (add, compare, branch) */
static noinline void rnvme_test_burn(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		barrier();
}

static blk_status_t rnvme_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct nvme_ns *ns = hctx->queue->queuedata;
	struct rnvme_queue *queue = hctx->driver_data;
	struct request *rq = bd->rq;
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	struct rnvme_qe *sqe = &req->sqe;
	struct nvme_command *c = nvme_req(rq)->cmd;
	unsigned long qflags = READ_ONCE(queue->flags);
	bool ready = qflags & BIT(RNVME_Q_LIVE);
	struct ib_device *ibdev;
	blk_status_t ret;
	int err;

	WARN_ON_ONCE(rq->tag < 0);

	if (unlikely(rnvme_test_extra_work))
		rnvme_test_burn(READ_ONCE(rnvme_test_extra_work));

	/*
	 * Nothing posted on a connection the target closed gets an answer:
	 * fail or requeue at once (a Fabrics Connect fails: it is failfast).
	 */
	if (unlikely(qflags & BIT(RNVME_Q_DISCONNECTED)))
		return nvme_fail_nonready_command(&queue->ctrl->ctrl, rq);
	if (!nvme_check_ready(&queue->ctrl->ctrl, rq, ready))
		return nvme_fail_nonready_command(&queue->ctrl->ctrl, rq);

	ibdev = queue->dev->ibdev;
	sqe->dma = ib_dma_map_single(ibdev, sqe->data,
				     sizeof(struct nvme_command),
				     DMA_TO_DEVICE);
	if (unlikely(ib_dma_mapping_error(ibdev, sqe->dma)))
		return BLK_STS_RESOURCE;

	ib_dma_sync_single_for_cpu(ibdev, sqe->dma,
				   sizeof(struct nvme_command), DMA_TO_DEVICE);

	ret = nvme_setup_cmd(ns, rq);
	if (ret)
		goto out_unmap_sqe;

	nvme_start_request(rq);

	err = rnvme_map_data(queue, rq, c);
	if (unlikely(err < 0)) {
		dev_err_ratelimited(queue->ctrl->ctrl.device,
				    "queue %d: mapping data failed (%d)\n",
				    rnvme_queue_idx(queue), err);
		goto out_fail;
	}

	sqe->cqe.done = rnvme_send_done;

	ib_dma_sync_single_for_device(ibdev, sqe->dma,
				      sizeof(struct nvme_command),
				      DMA_TO_DEVICE);

	err = rnvme_post_send(queue, sqe, req->sge, req->num_sge,
			      req->mr ? &req->reg_wr.wr : NULL);
	if (unlikely(err))
		goto out_unmap_data;

	return BLK_STS_OK;

out_unmap_data:
	rnvme_unmap_data(queue, rq);
out_fail:
	ib_dma_unmap_single(ibdev, sqe->dma, sizeof(struct nvme_command),
			    DMA_TO_DEVICE);
	/* a path error completes the request (and cleans the command up) */
	if (err == -EIO)
		return nvme_host_path_error(rq);
	nvme_cleanup_cmd(rq);
	if (err == -ENOMEM || err == -EAGAIN)
		return BLK_STS_RESOURCE;
	return BLK_STS_IOERR;

out_unmap_sqe:
	ib_dma_unmap_single(ibdev, sqe->dma, sizeof(struct nvme_command),
			    DMA_TO_DEVICE);
	return ret;
}

static int rnvme_poll(struct blk_mq_hw_ctx *hctx, struct io_comp_batch *iob)
{
	struct rnvme_queue *queue = hctx->driver_data;
	struct ib_cq *cq;
	int found = 0;

	/*
	 * io_uring keeps polling requeued requests while error recovery
	 * frees the queue's CQ: rnvme_destroy_cq() waits for us to leave it.
	 */
	rcu_read_lock();
	cq = READ_ONCE(queue->ib_cq);
	if (cq)
		found = ib_process_cq_direct(cq, -1);
	rcu_read_unlock();
	return found;
}


static void rnvme_map_queues(struct blk_mq_tag_set *set)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(set->driver_data);
	const u32 *n = ctrl->io_queues;
	struct blk_mq_queue_map *def = &set->map[HCTX_TYPE_DEFAULT];
	struct blk_mq_queue_map *rd = &set->map[HCTX_TYPE_READ];

	def->nr_queues = n[HCTX_TYPE_DEFAULT];
	def->queue_offset = 0;
	if (n[HCTX_TYPE_READ]) {
		/* separate read queues follow the default (write) ones */
		rd->nr_queues = n[HCTX_TYPE_READ];
		rd->queue_offset = n[HCTX_TYPE_DEFAULT];
	} else {
		/* reads share the default queues */
		rd->nr_queues = n[HCTX_TYPE_DEFAULT];
		rd->queue_offset = 0;
	}
	blk_mq_map_queues(def);
	blk_mq_map_queues(rd);

	/*
	 * Only a tag set allocated with poll queues in mind has a poll map.
	 * Its size follows the current grant, which may be none this time:
	 * then blk-mq sees nr_queues 0 and turns polling off for the disk.
	 */
	if (set->nr_maps > HCTX_TYPE_POLL) {
		struct blk_mq_queue_map *pl = &set->map[HCTX_TYPE_POLL];

		pl->nr_queues = n[HCTX_TYPE_POLL];
		pl->queue_offset = n[HCTX_TYPE_DEFAULT] + n[HCTX_TYPE_READ];
		if (pl->nr_queues)
			blk_mq_map_queues(pl);
	}
}

static bool rnvme_abort_one(struct request *rq, void *data)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);

	if (req->queue == data && blk_mq_request_started(rq) &&
	    !blk_mq_request_completed(rq))
		blk_abort_request(rq);
	return true;
}

/**
 * rnvme_abort_queue_requests - end a connecting queue's commands now
 * @queue: a queue whose connection the target closed
 *
 * While the controller connects, error recovery does not run, and a command
 * the target will never answer (a Fabrics Connect, say) would wait for its
 * timeout (the admin timeout: 60 s by default).  Aborting hands each one to
 * rnvme_timeout() at once, which stops the queue and fails it.
 */
void rnvme_abort_queue_requests(struct rnvme_queue *queue)
{
	struct rnvme_ctrl *ctrl = queue->ctrl;

	blk_mq_tagset_busy_iter(rnvme_queue_idx(queue) ? &ctrl->tag_set :
				&ctrl->admin_tag_set, rnvme_abort_one, queue);
}

static enum blk_eh_timer_return rnvme_timeout(struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	struct rnvme_queue *queue = req->queue;
	struct rnvme_ctrl *ctrl = queue->ctrl;
	struct nvme_command *cmd = req->sqe.data;

	dev_warn(ctrl->ctrl.device,
		 "queue %d: command %#x (opcode %#x, tag %d) timed out\n",
		 rnvme_queue_idx(queue), cmd->common.command_id,
		 cmd->common.opcode, rq->tag);

	if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_LIVE) {
		/*
		 * Connecting or tearing down: nobody else will complete it.
		 * Stopping the queue flushes its work requests, so the
		 * request can be completed here safely.
		 */
		rnvme_stop_queue(queue);
		nvmf_complete_timed_out_request(rq);
		return BLK_EH_DONE;
	}

	/* recovery stops the queues and cancels this request */
	rnvme_record_error(ctrl, "queue %d: command timeout (opcode %#x)",
			   rnvme_queue_idx(queue), cmd->common.opcode);
	rnvme_error_recovery(ctrl);
	return BLK_EH_RESET_TIMER;
}

const struct blk_mq_ops rnvme_mq_ops = {
	.queue_rq	= rnvme_queue_rq,
	.complete	= rnvme_complete_rq,
	.init_request	= rnvme_init_request,
	.exit_request	= rnvme_exit_request,
	.init_hctx	= rnvme_init_hctx,
	.timeout	= rnvme_timeout,
	.map_queues	= rnvme_map_queues,
	.poll		= rnvme_poll,
};

const struct blk_mq_ops rnvme_admin_mq_ops = {
	.queue_rq	= rnvme_queue_rq,
	.complete	= rnvme_complete_rq,
	.init_request	= rnvme_init_request,
	.exit_request	= rnvme_exit_request,
	.init_hctx	= rnvme_init_admin_hctx,
	.timeout	= rnvme_timeout,
};
