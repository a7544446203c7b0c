// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme data mapping.  A request's data reaches the target one of three
 * ways, cheapest first:
 *   - in the command capsule (small writes on I/O queues, when the target
 *     accepts in-capsule data and the device has SGEs to spare);
 *   - through the PD's global rkey (one segment; only if register_always=0,
 *     which exposes all memory to the target and is off by default);
 *   - through a fast-registration MR from the queue's pool, whose rkey the
 *     target invalidates with its response (or we invalidate locally).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <rdma/mr_pool.h>
#include "rnvme.h"

static void rnvme_map_inline(struct rnvme_queue *queue,
			     struct rnvme_request *req, struct nvme_command *c,
			     int count)
{
	struct scatterlist *sg;
	u32 len = 0;
	int i;

	for_each_sg(req->sgt.sgl, sg, count, i) {
		struct ib_sge *sge = &req->sge[1 + i];

		sge->addr = sg_dma_address(sg);
		sge->length = sg_dma_len(sg);
		sge->lkey = queue->dev->pd->local_dma_lkey;
		len += sge->length;
	}
	rnvme_sgl_inline(c, queue->ctrl->ctrl.icdoff, len);
	req->num_sge += count;
}

static void rnvme_map_global_rkey(struct rnvme_queue *queue,
				  struct rnvme_request *req,
				  struct nvme_command *c)
{
	rnvme_sgl_keyed(c, sg_dma_address(req->sgt.sgl),
			sg_dma_len(req->sgt.sgl),
			queue->dev->pd->unsafe_global_rkey, false);
}

static void rnvme_memreg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	/* REG_MR is posted unsignaled: only a failure gets here */
	if (unlikely(wc->status != IB_WC_SUCCESS))
		rnvme_wr_error(cq, wc, "MEMREG");
}

static int rnvme_map_fast_reg(struct rnvme_queue *queue,
			      struct rnvme_request *req,
			      struct nvme_command *c, int count)
{
	int nr;

	req->mr = ib_mr_pool_get(queue->qp, &queue->qp->rdma_mrs);
	/* the pool holds one MR per tag, so this cannot run dry */
	if (WARN_ON_ONCE(!req->mr))
		return -EAGAIN;

	/* the target's MPS is 4 KiB whatever the host page size */
	nr = ib_map_mr_sg(req->mr, req->sgt.sgl, count, NULL, SZ_4K);
	if (unlikely(nr < count)) {
		ib_mr_pool_put(queue->qp, &queue->qp->rdma_mrs, req->mr);
		req->mr = NULL;
		return nr < 0 ? nr : -EINVAL;
	}

	/* a fresh key per use: a late access with the old key must fail */
	ib_update_fast_reg_key(req->mr, ib_inc_rkey(req->mr->rkey));

	req->reg_cqe.done = rnvme_memreg_done;
	memset(&req->reg_wr, 0, sizeof(req->reg_wr));
	req->reg_wr.wr.opcode = IB_WR_REG_MR;
	req->reg_wr.wr.wr_cqe = &req->reg_cqe;
	req->reg_wr.wr.num_sge = 0;
	req->reg_wr.mr = req->mr;
	req->reg_wr.key = req->mr->rkey;
	req->reg_wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			     IB_ACCESS_REMOTE_WRITE;

	rnvme_sgl_keyed(c, req->mr->iova, req->mr->length, req->mr->rkey, true);
	return 0;
}

/**
 * rnvme_map_data - map a request's data and describe it in the command
 * @queue: the queue the command goes to
 * @rq:    the request
 * @c:     its command
 *
 * Return: 0, -EIO when the data cannot be DMA-mapped (a path error), or
 * another negative errno.
 */
int rnvme_map_data(struct rnvme_queue *queue, struct request *rq,
		   struct nvme_command *c)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	struct rnvme_device *dev = queue->dev;
	struct ib_device *ibdev = dev->ibdev;
	int count, ret;

	req->num_sge = 1;
	/* the request ends after its send completion and its response */
	refcount_set(&req->ref, 2);
	req->rsp_seen = false;
	c->common.flags |= NVME_CMD_SGL_METABUF;

	if (!blk_rq_nr_phys_segments(rq)) {
		rnvme_sgl_null(c);
		return 0;
	}

	req->sgt.sgl = req->first_sgl;
	ret = sg_alloc_table_chained(&req->sgt, blk_rq_nr_phys_segments(rq),
				     req->sgt.sgl, RNVME_INLINE_SG_CNT);
	if (ret)
		return -ENOMEM;

	req->nents = blk_rq_map_sg(rq->q, rq, req->sgt.sgl);
	count = ib_dma_map_sg(ibdev, req->sgt.sgl, req->nents, rq_dma_dir(rq));
	if (unlikely(count <= 0)) {
		ret = -EIO;
		goto out_free_table;
	}

	if (rnvme_use_inline(rq_data_dir(rq) == WRITE, rnvme_queue_idx(queue),
			     queue->ctrl->use_inline_data, count,
			     dev->inline_segments, blk_rq_payload_bytes(rq),
			     queue->capsule_len - sizeof(struct nvme_command))) {
		rnvme_map_inline(queue, req, c, count);
		return 0;
	}

	if (count == 1 && (dev->pd->flags & IB_PD_UNSAFE_GLOBAL_RKEY)) {
		rnvme_map_global_rkey(queue, req, c);
		return 0;
	}

	ret = rnvme_map_fast_reg(queue, req, c, count);
	if (ret)
		goto out_unmap_sg;
	return 0;

out_unmap_sg:
	ib_dma_unmap_sg(ibdev, req->sgt.sgl, req->nents, rq_dma_dir(rq));
out_free_table:
	sg_free_table_chained(&req->sgt, RNVME_INLINE_SG_CNT);
	return ret;
}

void rnvme_unmap_data(struct rnvme_queue *queue, struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);

	if (!blk_rq_nr_phys_segments(rq))
		return;

	if (req->mr) {
		ib_mr_pool_put(queue->qp, &queue->qp->rdma_mrs, req->mr);
		req->mr = NULL;
	}
	ib_dma_unmap_sg(queue->dev->ibdev, req->sgt.sgl, req->nents,
			rq_dma_dir(rq));
	sg_free_table_chained(&req->sgt, RNVME_INLINE_SG_CNT);
}

static void rnvme_inv_rkey_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rnvme_request *req =
		container_of(wc->wr_cqe, struct rnvme_request, reg_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rnvme_wr_error(cq, wc, "LOCAL_INV");
		return;
	}
	if (refcount_dec_and_test(&req->ref))
		rnvme_end_request(req);
}

/**
 * rnvme_inv_rkey - invalidate a request's MR locally
 * @queue: its queue
 * @req:   a request whose response came without remote invalidation
 *
 * The LOCAL_INV completion then ends the request in place of the response.
 */
int rnvme_inv_rkey(struct rnvme_queue *queue, struct rnvme_request *req)
{
	struct ib_send_wr wr = {
		.opcode		    = IB_WR_LOCAL_INV,
		.next		    = NULL,
		.num_sge	    = 0,
		.send_flags	    = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = req->mr->rkey,
	};

	int ret;

	req->reg_cqe.done = rnvme_inv_rkey_done;
	wr.wr_cqe = &req->reg_cqe;
	ret = ib_post_send(queue->qp, &wr, NULL);
	if (likely(!ret))
		rnvme_count_wrs(queue, 1);
	return ret;
}
