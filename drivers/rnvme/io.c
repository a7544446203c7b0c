// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme I/O path: blk-mq operations, data mapping and memory registration,
 * posting commands and receive buffers, completion handling, timeouts and
 * polling.
 *
 * A command is a SEND of its SQE (plus in-capsule data), optionally
 * preceded by a REG_MR.  It ends when its response (or, for an MR the target
 * did not invalidate, our LOCAL_INV completion) has arrived, and, if its SEND
 * was signaled, the SEND completion too: req->ref counts them down.
 *
 * Which SENDs are signaled is rnvme_send_signaled()'s rule (logic.h): all
 * on the admin queue, those with in-capsule data or behind a REG_MR when few
 * commands are in flight, and one in RNVME_SIGNAL_INTERVAL of the rest, whose
 * completion retires the unsignaled ones before it.  An unsignaled SEND with
 * only the SQE reads a buffer that stays DMA-mapped until the QP is
 * destroyed (rnvme_map_sqe()), so a late retransmission reads mapped memory
 * and the target drops it as a duplicate; one with in-capsule data or behind
 * a REG_MR parks its answered request until a signaled completion retires it
 * (rnvme_park()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "rnvme.h"

/*
 * The tags that @tag of a response on @queue names: an I/O queue's Connect
 * (and authentication) commands have tag 0 of the connect tag set, which
 * the I/O tag set keeps reserved (ctrl.c, rnvme_alloc_connect_set()).
 */
static __always_inline struct blk_mq_tags *
rnvme_tags_of(struct rnvme_queue *queue, u16 tag, const bool ordered)
{
	struct rnvme_ctrl *ctrl = queue->ctrl;
	int idx = rnvme_queue_idx(queue);

	/* an ordered queue is an I/O queue: no test for the admin one */
	if (!ordered && idx == 0)
		return ctrl->admin_tag_set.tags[0];
	if (unlikely(!tag))
		return ctrl->connect_set.tags[idx - 1];
	return ctrl->tag_set.tags[idx - 1];
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

	rnvme_tele_wc_failed(queue, wc->status);
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

/*
 * Mapping a request's data.  It reaches the target one of three ways,
 * cheapest first:
 *   - in the command capsule (small writes on I/O queues, when the target
 *     accepts in-capsule data and the device has SGEs to spare);
 *   - through the PD's global rkey (one segment; only if register_always=0,
 *     which exposes all memory to the target and is off by default);
 *   - through the fast-registration MR of the request's tag, whose rkey the
 *     target invalidates with its response (or we invalidate locally,
 *     rnvme_inv_rkey()).
 * The fast path (this file) is inlined into queue_rq and the completion.
 */
static __always_inline void rnvme_map_inline(struct rnvme_queue *queue,
					     struct rnvme_request *req,
					     struct nvme_command *c, int count)
{
	struct scatterlist *sg = req->sgt.sgl;
	struct ib_sge *sge = &req->sge[1];
	u32 len = 0;
	int i;

	/* most in-capsule writes are one segment: no loop */
	if (likely(count == 1)) {
		sge->addr = sg_dma_address(sg);
		len = sg_dma_len(sg);
		sge->length = len;
		sge->lkey = queue->lkey;
	} else {
		for_each_sg(req->sgt.sgl, sg, count, i) {
			sge[i].addr = sg_dma_address(sg);
			sge[i].length = sg_dma_len(sg);
			sge[i].lkey = queue->lkey;
			len += sge[i].length;
		}
	}
	/* at ICDOFF, which is 0 (rnvme_setup_ctrl() refuses any other) */
	rnvme_sgl_inline(c, 0, len);
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

/*
 * Take a free MR of @queue's pool; NULL when none is free.  Takers hold
 * post_lock (one at a time); givers do not (rnvme_mr_put()).
 */
static __always_inline struct rnvme_mr *rnvme_mr_get(struct rnvme_queue *queue)
{
	struct llist_node *node = queue->mr_free;

	lockdep_assert_held(&queue->post_lock);
	if (unlikely(!node)) {
		node = llist_del_all(&queue->mr_freed);
		if (unlikely(!node))
			return NULL;
	}
	queue->mr_free = node->next;
	return llist_entry(node, struct rnvme_mr, node);
}

/*
 * Give @slot back to @queue's pool, from any context.  llist_add() inline:
 * the library's is a call to llist_add_batch().
 */
static __always_inline void rnvme_mr_give(struct rnvme_queue *queue,
					  struct rnvme_mr *slot)
{
	struct llist_node *first = READ_ONCE(queue->mr_freed.first);

	do {
		slot->node.next = first;
	} while (!try_cmpxchg(&queue->mr_freed.first, &first, &slot->node));
}

/*
 * Give @req's MR back to its queue's pool.  The pool outlives every request
 * that holds one of its MRs: it is freed only after the queue's requests
 * have ended (rnvme_destroy_queue_ib()).
 */
static __always_inline void rnvme_mr_put(struct rnvme_queue *queue,
					 struct rnvme_request *req)
{
	req->mr = NULL;
	rnvme_mr_give(queue, req->mr_slot);
}

/*
 * @locked: the caller holds @queue's post_lock (an ordered queue maps and
 * posts in one section); otherwise it is taken for the MR alone
 */
static __always_inline int rnvme_map_fast_reg(struct rnvme_queue *queue,
					      struct rnvme_request *req,
					      struct nvme_command *c,
					      int count, const bool locked)
{
	struct rnvme_mr *slot;
	unsigned long flags;
	struct ib_mr *mr;
	u32 rkey;
	int nr;

	if (locked) {
		slot = rnvme_mr_get(queue);
	} else {
		spin_lock_irqsave(&queue->post_lock, flags);
		slot = rnvme_mr_get(queue);
		spin_unlock_irqrestore(&queue->post_lock, flags);
	}
	if (unlikely(!slot)) {
		rnvme_mr_pool_empty(queue);
		return -EAGAIN;
	}
	/*
	 * Stored before the call and read back after it, rather than kept
	 * on the stack across it; the rest of reg_wr was filled in once
	 * (rnvme_init_reg_wr())
	 */
	mr = slot->mr;
	req->mr = mr;
	req->mr_slot = slot;
	req->reg_wr.mr = mr;

	/* the target's MPS is 4 KiB whatever the host page size */
	nr = ib_map_mr_sg(mr, req->sgt.sgl, count, NULL, SZ_4K);
	if (unlikely(nr < count)) {
		req->mr = NULL;
		rnvme_mr_give(queue, req->mr_slot);
		return nr < 0 ? nr : -EINVAL;
	}
	mr = req->mr;

	/* a fresh key per use: a late access with the old key must fail */
	rkey = ib_inc_rkey(mr->rkey);
	ib_update_fast_reg_key(mr, rkey & 0xff);
	req->reg_wr.key = rkey;
	/*
	 * Only what the command's direction needs: the target RDMA READs a
	 * write's data and RDMA WRITEs a read's.  It may not read a read's
	 * buffer before filling it (stale memory) nor write a write's source.
	 */
	req->reg_wr.access = rq_data_dir(blk_mq_rq_from_pdu(req)) == WRITE ?
			     IB_ACCESS_REMOTE_READ :
			     IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;

	rnvme_sgl_keyed(c, mr->iova, mr->length, rkey, true);
	return 0;
}

/* a long list's table goes back to the pool; short lists use first_sgl */
static void rnvme_free_sg_table(struct rnvme_request *req)
{
	sg_free_table_chained(&req->sgt, 0);
	req->sgt.sgl = req->first_sgl;
}

/*
 * The scatterlist entry of a request with one physical segment, without
 * blk_rq_map_sg() (about 125 instructions for a 4 KiB request): blk-mq
 * counts segments per bio and bio_vec without merging across them, so one
 * segment is one bio_vec of one bio (or the special payload), which the
 * queue's limits let through whole (its split made it one segment).  The
 * bio_vec must then hold the whole payload: if it does not, nothing is
 * written and the caller maps the list the long way.  Like
 * blk_rq_map_sg(), the entry starts in the page holding its first byte;
 * the end mark goes on it (a longer list later clears it again).
 */
static __always_inline bool rnvme_map_one_segment(struct request *rq,
						  struct scatterlist *sg)
{
	struct bio_vec bv = req_bvec(rq);
	phys_addr_t addr;

	if (unlikely(bv.bv_len != blk_rq_payload_bytes(rq)))
		return false;
	addr = bvec_phys(&bv);
	sg_set_page(sg, pfn_to_page(PHYS_PFN(addr)), bv.bv_len,
		    offset_in_page(addr));
	sg_mark_end(sg);
	return true;
}

/**
 * rnvme_map_data - map a request's data and describe it in the command
 * @queue: the queue the command goes to
 * @rq:    the request
 * @c:     its command
 * @locked: the caller holds @queue's post_lock (rnvme_map_fast_reg())
 *
 * Return: how the data goes (RNVME_TD_*), -EIO when the data cannot be
 * DMA-mapped (a path error), or another negative errno.
 */
static __always_inline int rnvme_map_data(struct rnvme_queue *queue,
					  struct request *rq,
					  struct nvme_command *c,
					  const bool locked)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	struct ib_device *ibdev = queue->ibdev;
	unsigned short nr = blk_rq_nr_phys_segments(rq);
	int count, ret;

	req->num_sge = 1;
	req->rsp_seen = false;
	c->common.flags |= NVME_CMD_SGL_METABUF;

	if (!nr) {
		rnvme_sgl_null(c);
		return RNVME_TD_NONE;
	}

	/*
	 * Up to RNVME_INLINE_SG_CNT segments use the request's own entries,
	 * which stay initialized between commands (blk_rq_map_sg() clears
	 * the end mark a shorter list left), and sgt.sgl points at them
	 * (rnvme_init_request()).  More take a table of their own from the
	 * pool: chaining it behind the request's entries would turn the last
	 * of them into a link to memory freed with the table.
	 */
	if (unlikely(nr > RNVME_INLINE_SG_CNT)) {
		ret = sg_alloc_table_chained(&req->sgt, nr, NULL, 0);
		if (ret) {
			req->sgt.sgl = req->first_sgl;
			return -ENOMEM;
		}
	}

	if (likely(nr == 1) && rnvme_map_one_segment(rq, req->sgt.sgl)) {
		req->nents = 1;
	} else {
		/*
		 * blk_rq_map_sg() with its cursor in the request: a cursor on
		 * the stack would cost queue_rq a stack-protector canary
		 */
		req->last_sg = NULL;
		req->nents = rnvme_blk_rq_map_sg(rq, req->sgt.sgl,
						 &req->last_sg);
	}
	count = ib_dma_map_sg(ibdev, req->sgt.sgl, req->nents, rq_dma_dir(rq));
	if (unlikely(count <= 0)) {
		ret = -EIO;
		goto out_free_table;
	}

	/*
	 * The queue's room is 0 where in-capsule data is not allowed.  The
	 * direction first: a read then tests nothing else.
	 */
	if (rq_data_dir(rq) == WRITE &&
	    rnvme_use_inline(true, 1, true, count, queue->inline_segs,
			     blk_rq_payload_bytes(rq), queue->inline_room)) {
		rnvme_map_inline(queue, req, c, count);
		return RNVME_TD_INLINE;
	}

	if (count == 1 && queue->global_rkey) {
		rnvme_map_global_rkey(queue, req, c);
		return RNVME_TD_GLOBAL_RKEY;
	}

	ret = rnvme_map_fast_reg(queue, req, c, count, locked);
	if (ret)
		goto out_unmap_sg;
	return RNVME_TD_REGISTERED;

out_unmap_sg:
	ib_dma_unmap_sg(ibdev, req->sgt.sgl, req->nents, rq_dma_dir(rq));
out_free_table:
	if (unlikely(nr > RNVME_INLINE_SG_CNT))
		rnvme_free_sg_table(req);
	return ret;
}

static __always_inline void rnvme_unmap_data(struct rnvme_queue *queue,
					     struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	unsigned short nr = blk_rq_nr_phys_segments(rq);

	if (!nr)
		return;

	if (req->mr)
		rnvme_mr_put(queue, req);
	ib_dma_unmap_sg(queue->ibdev, req->sgt.sgl, req->nents,
			rq_dma_dir(rq));
	if (unlikely(nr > RNVME_INLINE_SG_CNT))
		rnvme_free_sg_table(req);
}

static __always_inline void __rnvme_complete_rq(struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);

	rnvme_tele_complete(req, rq);
	rnvme_unmap_data(req->queue, rq);
	nvme_complete_rq(rq);
}

/*
 * blk-mq's ->complete: a completion moved to the submitting CPU, or one
 * that a timeout or a cancel made (the request is MQ_RQ_COMPLETE until it
 * ends here).
 */
static void rnvme_complete_rq(struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);

	if (IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) &&
	    nvme_req(rq)->status == NVME_SC_HOST_ABORTED_CMD)
		rnvme_fi_hold(RNVME_FI_TIMEOUT_COMPLETE);
	if (unlikely(req->held)) {
		/* the hold ended it; its data was unmapped when it was held */
		req->held = false;
		rnvme_tele_complete(req, rq);
		nvme_complete_rq(rq);
		return;
	}
	__rnvme_complete_rq(rq);
}

/**
 * rnvme_hold_request - keep a command its lost controller may still execute
 * @rq: an in-flight request of a stopped I/O queue
 *
 * The request stays in flight, with its data unmapped now (its queue's
 * device and MRs go with the association), until the failover hold ends it
 * (ctrl.c); a timeout leaves it alone meanwhile.
 */
void rnvme_hold_request(struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);

	rnvme_unmap_data(req->queue, rq);
	WRITE_ONCE(req->held, true);
}

/* end a request with the response's @status and @result */
static __always_inline void rnvme_end_request_with(struct rnvme_request *req,
						   __le16 status,
						   union nvme_result result)
{
	struct request *rq = blk_mq_rq_from_pdu(req);

	rnvme_tele_answered(req, status);

	/* completes here unless blk-mq moved it to the submitting CPU */
	if (!nvme_try_complete_req(rq, status, result))
		__rnvme_complete_rq(rq);
}

/* end a request whose response was kept in it */
static __always_inline void __rnvme_end_request(struct rnvme_request *req)
{
	rnvme_end_request_with(req, req->status, req->result);
}

/*
 * Completion batching.  An interrupt-driven I/O queue's CQ is reaped in
 * softirq context (IB_POLL_SOFTIRQ), and ib_core calls nothing at the end
 * of a pass.  So each CPU gathers the requests its passes end successfully
 * in an io_comp_batch, which a BH work item (a tasklet before 6.9), queued
 * by the first of them on the same CPU, ends with blk_mq_end_request_batch()
 * once the pass is over (or the batch
 * itself when it holds RNVME_BATCH_MAX).  A gathered request is
 * MQ_RQ_COMPLETE until then: timeouts, cancels and aborts pass it by, a
 * second response for it is refused as a duplicate, and
 * nvme_cancel_tagset() waits for it before the queue's resources go.
 */
#define RNVME_BATCH_MAX	32

/*
 * @now: telemetry's clock for the batch's answers, ktime_get_ns() at the
 * first counted one (0: none yet); valid only while @nr is not 0, so a batch
 * that ends needs no store to forget it
 */
struct rnvme_comp_batch {
	struct io_comp_batch	iob;
	struct rnvme_bh_work	flush;
	unsigned int		nr;
	u64			now;
};

static DEFINE_PER_CPU(struct rnvme_comp_batch, rnvme_comp_batch);

/*
 * what __rnvme_complete_rq() does beside nvme_complete_rq(), for a request
 * that was answered with success (so telemetry has nothing more to count)
 */
static void rnvme_batch_unmap(struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	struct nvme_ctrl *nctrl = nvme_req(rq)->ctrl;

	rnvme_unmap_data(req->queue, rq);
	/* nvme_complete_rq()'s keep-alive mark, which the batch path lacks */
	if (nctrl->kas &&
	    rq->deadline - rq->timeout >= nctrl->ka_last_check_time)
		nctrl->comp_seen = true;
}

static void rnvme_complete_batch(struct io_comp_batch *iob)
{
	nvme_complete_batch(iob, rnvme_batch_unmap);
}

/* end what a CPU's batch holds; softirq context of that CPU */
static void rnvme_batch_end(struct rnvme_comp_batch *b)
{
	if (!b->nr)
		return;
	b->nr = 0;
	/* no clock while the batch is empty (rnvme_batch_clock()) */
	b->now = 0;
	rnvme_complete_batch(&b->iob);
	b->iob.complete = NULL;
	b->iob.need_ts = false;
}

static void rnvme_batch_flush(struct rnvme_bh_work *work)
{
	struct rnvme_comp_batch *b = container_of(work, struct rnvme_comp_batch,
						  flush);

	rnvme_batch_end(b);
}

/*
 * Add a request that nvme_try_complete_req() left to its caller to this
 * CPU's batch: only a successful one that no end_io, I/O scheduler or
 * passthrough caller waits for (those end at once, as before), and only
 * when @more ends may follow in this pass (a batch of one costs a BH work item).
 */
static __always_inline bool rnvme_batch_add(struct rnvme_comp_batch *b,
					    struct request *rq, bool more,
					    u64 now)
{
	if (!more || unlikely(nvme_req(rq)->status) ||
	    blk_rq_is_passthrough(rq))
		return false;
	lockdep_assert_in_softirq();
	if (!blk_mq_add_to_batch(rq, &b->iob, 0, rnvme_complete_batch))
		return false;
	if (!b->nr++) {
		b->now = now;
		rnvme_queue_bh_work(&b->flush);
	} else if (b->nr == RNVME_BATCH_MAX) {
		rnvme_batch_end(b);
	}
	return true;
}

/*
 * Telemetry's clock for an answer in CQ context: one read per batch.  The
 * batch's answers share the clock of its first counted one; they come in
 * one softirq pass (the flush runs at its end), so they are the same
 * microseconds apart their handling is.
 */
static __always_inline u64 rnvme_batch_clock(struct rnvme_comp_batch *b,
					     struct rnvme_request *req)
{
	u64 now;

	/*
	 * b->now is 0 while the batch has no clock (it is empty, or its first
	 * member was not counted), which no start stamp is below; a request
	 * stamped after the batch's clock was read takes a new one, which the
	 * batch keeps
	 */
	if (b->now >= req->tele_start)
		return b->now;
	now = ktime_get_ns();
	if (b->nr)
		b->now = now;
	return now;
}

/*
 * End an interrupt-driven I/O queue's request in its CQ context: through
 * this CPU's batch, unless blk-mq moved it to the submitting CPU or it
 * cannot be batched (see rnvme_batch_add() for @more).  The answer is read
 * where it lies (@status, @result: the response buffer or the copy kept
 * in the request), after the clock: nothing of it lives across that call.
 */
static __always_inline void rnvme_end_batched_with(struct rnvme_queue *queue,
						   struct rnvme_request *req,
						   const __le16 *status,
						   const union nvme_result *result,
						   bool more)
{
	struct request *rq = blk_mq_rq_from_pdu(req);
	struct rnvme_comp_batch *b = this_cpu_ptr(&rnvme_comp_batch);
	u64 now = 0;

	if (rnvme_tele_counting(req)) {
		now = more ? rnvme_batch_clock(b, req) : ktime_get_ns();
		rnvme_tele_answer(queue, req, *status, now, true);
	}
	if (nvme_try_complete_req(rq, *status, *result) ||
	    rnvme_batch_add(b, rq, more, now))
		return;
	__rnvme_complete_rq(rq);
}

/**
 * rnvme_io_init - set up the per-CPU completion batches
 */
void rnvme_io_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		rnvme_init_bh_work(&per_cpu_ptr(&rnvme_comp_batch, cpu)->flush,
				   rnvme_batch_flush);
}

/**
 * rnvme_io_exit - stop the per-CPU completion batches
 *
 * After every controller is gone: their teardown waited for what the
 * batches held (nvme_cancel_tagset()).
 */
void rnvme_io_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		rnvme_cancel_bh_work_sync(&per_cpu_ptr(&rnvme_comp_batch,
						       cpu)->flush);
}

/*
 * The same, for the LOCAL_INV completion.  Out of line: a LOCAL_INV
 * completion that does not end its request then needs no stack frame.
 */
static noinline void rnvme_end_request(struct rnvme_request *req)
{
	__rnvme_end_request(req);
}

/*
 * Memory registration work requests: the REG_MR template of each request,
 * its (failure-only) completion, and the LOCAL_INV of an MR the target did
 * not invalidate.
 */
static void rnvme_memreg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	/* REG_MR is posted unsignaled: only a failure gets here */
	if (unlikely(wc->status != IB_WC_SUCCESS))
		rnvme_wr_error(cq, wc, "MEMREG");
}

/**
 * rnvme_init_reg_wr - fill in the parts of a request's REG_MR that never change
 * @req: a request being initialized
 */
static void rnvme_init_reg_wr(struct rnvme_request *req)
{
	memset(&req->reg_wr, 0, sizeof(req->reg_wr));
	req->reg_wr.wr.opcode = IB_WR_REG_MR;
	req->reg_cqe.done = rnvme_memreg_done;
	req->reg_wr.wr.wr_cqe = &req->reg_cqe;
	req->reg_wr.wr.num_sge = 0;
	/* access follows each command's direction (rnvme_map_fast_reg()) */
}

static void rnvme_inv_rkey_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rnvme_request *req =
		container_of(wc->wr_cqe, struct rnvme_request, inv_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rnvme_wr_error(cq, wc, "LOCAL_INV");
		return;
	}
	rnvme_tele_wc_ok(req->queue, false);
	if (atomic_dec_and_test(&req->ref))
		rnvme_end_request(req);
}

/**
 * rnvme_inv_rkey - invalidate a request's MR locally
 * @queue: its queue
 * @req:   a request whose response came without remote invalidation
 *
 * The LOCAL_INV completion then ends the request in place of the response.
 * Out of line: the work request on its stack would cost every response's
 * handler a stack-protector canary.
 */
static noinline int rnvme_inv_rkey(struct rnvme_queue *queue,
				   struct rnvme_request *req)
{
	struct ib_send_wr wr = {
		.opcode		    = IB_WR_LOCAL_INV,
		.next		    = NULL,
		.num_sge	    = 0,
		.send_flags	    = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = req->mr->rkey,
	};

	int ret;

	req->inv_cqe.done = rnvme_inv_rkey_done;
	wr.wr_cqe = &req->inv_cqe;
	ret = ib_post_send(queue->qp, &wr, NULL);
	if (likely(!ret))
		rnvme_count_wrs(queue, 1);
	return ret;
}

/*
 * A SEND completion that ends its request (its response came first).  Out
 * of line: the usual SEND completion, which comes before the response,
 * then needs no stack frame.
 */
static noinline void rnvme_send_done_end(struct rnvme_request *req)
{
	__rnvme_end_request(req);
}

/*
 * Only a signaled SEND completes successfully; an error completion may
 * belong to an unsignaled one of a request that has ended already (a flush,
 * say), so it touches nothing but error recovery.
 */
static void rnvme_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rnvme_qe *qe = container_of(wc->wr_cqe, struct rnvme_qe, cqe);
	struct rnvme_request *req =
		container_of(qe, struct rnvme_request, sqe);
	struct rnvme_queue *queue = req->queue;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rnvme_wr_error(cq, wc, "SEND");
		return;
	}
	/*
	 * a debug kernel's scenario stalls the CQ's handler here (fault.c),
	 * on another CPU than the ACK watchdog's timer: the watchdog looks
	 * while the handler is held
	 */
	if (IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) && queue->qid &&
	    (queue->ctrl->ack_wd_work.timer.flags & TIMER_CPUMASK) !=
	    raw_smp_processor_id())
		rnvme_fi_hold(RNVME_FI_CQ_STALL);
	rnvme_tele_wc_ok(queue, false);
	rnvme_send_completed(queue, req->send_seq);
	if (unlikely(queue->parked))
		rnvme_unpark(queue);
	if (atomic_dec_and_test(&req->ref))
		rnvme_send_done_end(req);
}

static void rnvme_async_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rnvme_queue *queue = wc->qp->qp_context;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rnvme_wr_error(cq, wc, "ASYNC");
		return;
	}
	rnvme_tele_wc_ok(queue, false);
	/* the admin queue signals every SEND: nothing to retire */
	rnvme_send_completed(queue, READ_ONCE(queue->retired_seq));
}

/* an ordered queue's post failed: take back what rnvme_post_req() counted */
static void rnvme_uncount_locked(struct rnvme_queue *queue,
				 struct rnvme_request *req, bool signaled)
{
	struct rnvme_qstats *ls = &queue->locked_stats;

	ls->wr_posted -= req->mr ? 2 : 1;
	ls->sends_signaled -= signaled;
}

/* a SEND could not be posted: nothing of it will complete */
static void rnvme_post_failed(struct rnvme_queue *queue, bool signaled,
			      int ret)
{
	if (signaled)
		atomic_dec(&queue->sends_pending);
	dev_err_ratelimited(queue->ctrl->ctrl.device,
			    "queue %d: posting SEND failed (%d)\n",
			    rnvme_queue_idx(queue), ret);
}

/*
 * Batched posting.  blk-mq tells queue_rq whether more requests follow
 * (bd->last false); an ordered queue then numbers and counts the request as
 * usual but only links its work requests behind the batch's (send queue
 * order is numbering order: both happen under post_lock).  The batch is
 * posted with one ib_post_send(), one doorbell, by its last request, by
 * blk-mq's commit_rqs when the batch ends early, or before the watchdog's
 * probe, which must follow every SEND numbered before it.  A provider may
 * refuse a chain part way (bad_wr: it and what follows were not posted):
 * the batch's last request fails as a lone post does; the earlier ones,
 * which queue_rq already accepted, end with a host path error (retried,
 * or failed over), each exactly once.  A batch still open when its queue
 * stops ends the same way (rnvme_chain_drop()).
 */

/*
 * @req's REG_MR was posted, its SEND was not: the MR stays registered, and
 * a provider may refuse to register it again before it is invalidated.  It
 * is not given back to the pool; the association's teardown frees it with
 * the others.
 */
static void rnvme_mr_orphan(struct rnvme_queue *queue,
			    struct rnvme_request *req)
{
	queue->locked_stats.wr_posted++;
	req->mr = NULL;
}

/* the provider's post of a batch; a debug kernel can make it fail part way */
static int rnvme_post_chain_wrs(struct rnvme_queue *queue,
				struct ib_send_wr *first,
				const struct ib_send_wr **bad)
{
	struct ib_send_wr *wr, *cut = NULL;
	unsigned int n = 0, i;
	int ret;

	if (!IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) ||
	    !rnvme_fi_fail(RNVME_FI_POST_CHAIN))
		return rnvme_post_send_wrs(queue->qp, first, bad);
	/* post the first half; refuse the rest as a full send queue would */
	for (wr = first; wr; wr = wr->next)
		n++;
	for (i = 0, wr = first; i + 1 < n / 2; i++)
		wr = wr->next;
	if (n < 2)
		cut = first;
	else
		cut = wr->next;
	pr_info("fault injection: post_chain: posting %u of %u work requests of queue %d\n",
		n < 2 ? 0 : n / 2, n, rnvme_queue_idx(queue));
	if (cut != first) {
		wr->next = NULL;
		ret = rnvme_post_send_wrs(queue->qp, first, bad);
		wr->next = cut;
		if (ret)
			return ret;
	}
	*bad = cut;
	return -ENOMEM;
}

/*
 * Unlink the requests of a batch taken off @queue (@first on), under
 * post_lock.  From @stop on (NULL: none) they were not posted: their counts
 * are taken back and, all but @cur, they are put on @queue's chain_failed
 * for the caller to end.  @err: the provider's error for the log, or 0 when
 * nothing was tried (the queue is being stopped).
 */
static void rnvme_chain_unlink(struct rnvme_queue *queue,
			       struct rnvme_request *first,
			       struct rnvme_request *stop,
			       struct rnvme_request *cur, int err)
{
	struct rnvme_request **failed = &queue->chain_failed;
	struct rnvme_request *req, *next;
	bool unposted = false, signaled;

	while (*failed)
		failed = &(*failed)->chain_next;
	for (req = first; req; req = next) {
		next = req->chain_next;
		req->chain_next = NULL;
		/* the work requests end their own chain again */
		req->send_wr.next = NULL;
		if (req == stop)
			unposted = true;
		if (!unposted)
			continue;
		signaled = req->send_wr.send_flags & IB_SEND_SIGNALED;
		rnvme_uncount_locked(queue, req, signaled);
		if (err)
			rnvme_post_failed(queue, signaled, err);
		else if (signaled)
			atomic_dec(&queue->sends_pending);
		if (req == cur)
			continue;
		if (rnvme_tele_counting(req))
			rnvme_tele_submitted(queue, req, true, -1ULL);
		*failed = req;
		failed = &req->chain_next;
	}
}

/*
 * Post @queue's batch, under post_lock.  Return: 0, or the provider's error
 * when some of it was not posted: the request bad_wr names and those after
 * it (all of them, should bad_wr name none).  Those are taken back (counts,
 * watchdog, telemetry; last_sig_seq as it was before the first of them),
 * and all but @cur (the caller's own request, the batch's last, or NULL)
 * are put on @queue's chain_failed for the caller to end.
 */
static noinline int rnvme_chain_post(struct rnvme_queue *queue,
				     struct rnvme_request *cur)
{
	struct rnvme_request *first = queue->chain, *req, *stop = NULL;
	const struct ib_send_wr *bad = NULL;
	int ret;

	lockdep_assert_held(&queue->post_lock);
	if (!first)
		return 0;
	WRITE_ONCE(queue->chain, NULL);
	queue->locked_stats.send_posts++;
	ret = rnvme_post_chain_wrs(queue, first->mr ? &first->reg_wr.wr :
						      &first->send_wr, &bad);
	if (unlikely(ret)) {
		for (req = first; req && !stop; req = req->chain_next)
			if (bad == &req->send_wr || bad == &req->reg_wr.wr)
				stop = req;
		if (!stop)
			stop = first;
		/*
		 * As before @stop was numbered: the first signaled SEND from
		 * @stop on knew it (none: last_sig_seq did not move since)
		 */
		for (req = stop; req; req = req->chain_next)
			if (req->send_wr.send_flags & IB_SEND_SIGNALED) {
				queue->last_sig_seq = req->prev_sig_seq;
				break;
			}
	}
	rnvme_chain_unlink(queue, first, stop, cur, ret);
	if (stop && stop->mr && bad == &stop->send_wr)
		rnvme_mr_orphan(queue, stop);
	return ret;
}

/* link @req's work requests (from @first) behind @queue's batch */
static noinline int rnvme_chain_add(struct rnvme_queue *queue,
				    struct rnvme_request *req,
				    struct ib_send_wr *first, bool last)
{
	req->chain_next = NULL;
	if (queue->chain) {
		queue->chain_tail->send_wr.next = first;
		queue->chain_tail->chain_next = req;
	} else {
		WRITE_ONCE(queue->chain, req);
	}
	queue->chain_tail = req;
	return last ? rnvme_chain_post(queue, req) : 0;
}

/*
 * End the requests of a failed batch that queue_rq had accepted (taken off
 * @queue's chain_failed under post_lock): their data unmapped, with a host
 * path error, which nvme-core retries or fails over.
 */
static void rnvme_chain_end_failed(struct rnvme_queue *queue,
				   struct rnvme_request *req)
{
	struct rnvme_request *next;
	unsigned int n = 0;

	for (; req; req = next) {
		struct request *rq = blk_mq_rq_from_pdu(req);

		next = req->chain_next;
		req->chain_next = NULL;
		rnvme_unmap_data(queue, rq);
		nvme_host_path_error(rq);
		n++;
	}
	dev_warn_ratelimited(queue->ctrl->ctrl.device,
			     "queue %d: %u batched request(s) not posted: ended with a host path error\n",
			     rnvme_queue_idx(queue), n);
}

/*
 * Post a request's SEND, behind its REG_MR if it has one (@locked: an
 * ordered queue, under post_lock).  Both work
 * requests were built with the request (rnvme_init_request()) and the SQE's
 * SGE with its mapping (rnvme_map_sqe()): only the SGE count and the flags
 * change per command.
 */
static __always_inline int rnvme_post_req(struct rnvme_queue *queue,
					  struct rnvme_request *req,
					  bool signaled, const bool locked,
					  const bool last)
{
	struct rnvme_qstats *ls = &queue->locked_stats;
	struct ib_send_wr *first = &req->send_wr;
	/* read before the post (the request may end at once); !@locked only */
	unsigned int nr_wrs = req->mr ? 2 : 1;
	int ret;

	req->send_wr.num_sge = req->num_sge;
	req->send_wr.send_flags = signaled ? IB_SEND_SIGNALED : 0;
	/*
	 * An ordered queue counts under post_lock, before the post and in the
	 * branches the post takes anyway (no count lives across the call);
	 * a failed post takes its count back below.
	 */
	if (locked)
		ls->wr_posted++;
	if (req->mr) {
		first = &req->reg_wr.wr;
		if (locked)
			ls->wr_posted++;
	}
	if (signaled) {
		rnvme_send_posted(queue);
		if (locked)
			ls->sends_signaled++;
	}
	/* more to come from blk-mq, or a batch waiting: posted together */
	if (locked && unlikely(!last || queue->chain))
		return rnvme_chain_add(queue, req, first, last);
	if (locked)
		ls->send_posts++;
	ret = rnvme_post_send_wrs(queue->qp, first, &req->bad_wr);
	if (likely(!ret)) {
		/* from before the post: the request may have ended since */
		if (!locked)
			rnvme_count_send(queue, nr_wrs, signaled);
		return 0;
	}
	/* read back from the WR: @signaled need not live across the post */
	signaled = req->send_wr.send_flags & IB_SEND_SIGNALED;
	if (locked)
		rnvme_uncount_locked(queue, req, signaled);
	rnvme_post_failed(queue, signaled, ret);
	if (locked && req->mr && req->bad_wr == &req->send_wr)
		rnvme_mr_orphan(queue, req);
	if (signaled)
		queue->last_sig_seq = req->prev_sig_seq;
	return ret;
}

/**
 * rnvme_post_recvs - post every receive buffer of a queue, in one chain
 * @queue: a queue whose connection was just established
 *
 * On an interrupt-driven queue the receive work requests stay linked in a
 * ring (rnvme_repost_recv() posts stretches of it); a poll queue's are
 * posted one at a time and end their chain.
 */
int rnvme_post_recvs(struct rnvme_queue *queue)
{
	u32 n = queue->nr_rsp, i;
	int ret;

	for (i = 0; i + 1 < n; i++)
		queue->rsp_wr[i].wr.next = &queue->rsp_wr[i + 1].wr;
	queue->rsp_wr[n - 1].wr.next = NULL;
	queue->recv_next = 0;

	ret = ib_post_recv(queue->qp, &queue->rsp_wr[0].wr, NULL);
	if (likely(!ret))
		rnvme_count_wrs(queue, n);
	else
		dev_err(queue->ctrl->ctrl.device,
			"queue %d: posting %u receive buffers failed (%d)\n",
			rnvme_queue_idx(queue), n, ret);
	if (!queue->poll)
		queue->rsp_wr[n - 1].wr.next = &queue->rsp_wr[0].wr;
	else
		for (i = 0; i + 1 < n; i++)
			queue->rsp_wr[i].wr.next = NULL;
	return ret;
}

/* post @n receive work requests from @first on (cold: not per response) */
static noinline void rnvme_post_recv_wrs(struct rnvme_queue *queue,
					 struct ib_recv_wr *first, u32 n)
{
	int ret;

	ret = ib_post_recv(queue->qp, first, NULL);
	if (likely(!ret)) {
		rnvme_count_wrs(queue, n);
		return;
	}
	dev_err_ratelimited(queue->ctrl->ctrl.device,
			    "queue %d: posting RECV failed (%d)\n",
			    rnvme_queue_idx(queue), ret);
	rnvme_error_recovery(queue->ctrl);
}

/*
 * Give an answered receive buffer back to the device: at once on a poll
 * queue (its completions may be reaped by several pollers at a time),
 * otherwise in stretches of RNVME_RECV_BATCH.  An RC receive queue
 * completes its work requests in the order they were posted, so an
 * interrupt-driven queue's answered buffers are always the ring's
 * (rnvme_post_recvs()) entries before @recv_next.  The ring is a whole
 * number of stretches (rnvme_alloc_queue_ib()): the buffer that ends one
 * posts it, which needs only the stretch's last link cut for the call.  A
 * completion out of that order would have us post a buffer the device
 * still owns: it is refused as a device fault.
 */
static __always_inline void rnvme_repost_recv(struct rnvme_queue *queue,
					      struct rnvme_qe *qe,
					      const bool ordered)
{
	u32 next = queue->recv_next;
	struct ib_recv_wr *first, *last;

	if (!ordered && queue->poll) {
		rnvme_post_recv_wrs(queue, &queue->rsp_wr[qe->idx].wr, 1);
		return;
	}
	if (unlikely(qe->idx != next)) {
		dev_err(queue->ctrl->ctrl.device,
			"queue %d: receive buffer %u completed out of order (expected %u)\n",
			rnvme_queue_idx(queue), qe->idx, next);
		rnvme_error_recovery(queue->ctrl);
		return;
	}
	if (likely((next + 1) % RNVME_RECV_BATCH)) {
		queue->recv_next = next + 1;
		return;
	}

	/* post the stretch that ends with @next */
	first = &queue->rsp_wr[next + 1 - RNVME_RECV_BATCH].wr;
	last = &queue->rsp_wr[next].wr;
	next = next + 1 < queue->nr_rsp ? next + 1 : 0;
	queue->recv_next = next;
	last->next = NULL;
	rnvme_post_recv_wrs(queue, first, RNVME_RECV_BATCH);
	last->next = &queue->rsp_wr[next].wr;
}

void rnvme_submit_async_event(struct nvme_ctrl *nctrl)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(nctrl);
	struct rnvme_queue *queue = &ctrl->queues[0];
	struct rnvme_qe *sqe = &ctrl->async_event_sqe;
	struct ib_device *ibdev = queue->dev->ibdev;
	struct nvme_command *cmd = sqe->data;
	struct ib_send_wr wr = {};
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

	sge.addr = sqe->dma;
	sge.length = sizeof(*cmd);
	sge.lkey = queue->dev->pd->local_dma_lkey;
	wr.next = NULL;
	wr.wr_cqe = &sqe->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;

	atomic_inc(&queue->send_seq);
	rnvme_send_posted(queue);
	ret = ib_post_send(queue->qp, &wr, NULL);
	if (likely(!ret))
		rnvme_count_send(queue, 1, true);
	else
		rnvme_post_failed(queue, true, ret);
	WARN_ON_ONCE(ret);
}

/* no signaled work request was posted after @req's SEND to retire it */
static bool rnvme_needs_probe(struct rnvme_queue *queue,
			      struct rnvme_request *req)
{
	return rnvme_seq_after(req->send_seq, READ_ONCE(queue->last_sig_seq));
}

/*
 * An answered request whose SEND went unsignaled with in-capsule data or
 * behind a REG_MR waits until a later signaled completion retires it; if
 * none was posted after it, a probe is.  Only in CQ context of an
 * interrupt-driven queue.
 */
static __always_inline void rnvme_park(struct rnvme_queue *queue,
				       struct rnvme_request *req)
{
	req->park_next = NULL;
	*queue->parked_tail = req;
	queue->parked_tail = &req->park_next;
	/* the CQ context is its only writer (rnvme_queue.parked_reqs) */
	queue->parked_reqs++;
	if (rnvme_needs_probe(queue, req))
		rnvme_post_probe(queue);
}

/**
 * rnvme_unpark - end the parked requests a signaled completion retired
 * @queue: an interrupt-driven I/O queue, in its CQ context
 */
void rnvme_unpark(struct rnvme_queue *queue)
{
	u32 retired = READ_ONCE(queue->retired_seq);
	struct rnvme_request **link = &queue->parked, *req;
	bool probe = false;

	while ((req = *link)) {
		if (rnvme_seq_after(req->send_seq, retired)) {
			probe |= rnvme_needs_probe(queue, req);
			link = &req->park_next;
			continue;
		}
		/* unlinked before it ends: the tag may be reused at once */
		*link = req->park_next;
		if (atomic_dec_and_test(&req->ref))
			rnvme_end_batched_with(queue, req, &req->status,
					       &req->result, true);
	}
	queue->parked_tail = link;
	if (probe)
		rnvme_post_probe(queue);
}

/**
 * rnvme_drop_parked - forget the parked requests of a drained queue
 * @queue: a queue whose QP was drained; cancelling ends the requests
 */
void rnvme_drop_parked(struct rnvme_queue *queue)
{
	queue->parked = NULL;
	queue->parked_tail = &queue->parked;
}

/*
 * Commands of an interrupt-driven I/O queue that the target has yet to
 * answer (a statistic: a failed post is counted until the reconnect), in
 * its CQ context
 */
static __always_inline bool rnvme_answers_due(struct rnvme_queue *queue)
{
	return atomic_read(&queue->send_seq) != queue->rsp_count;
}

/* a response that does not end its request at once is kept in it */
static __always_inline void rnvme_keep_response(struct rnvme_request *req,
						struct nvme_completion *cqe)
{
	req->status = cqe->status;
	req->result = cqe->result;
}

static __always_inline void rnvme_process_rsp(struct rnvme_queue *queue,
					      struct nvme_completion *cqe,
					      struct ib_wc *wc,
					      const bool ordered)
{
	struct rnvme_ctrl *ctrl = queue->ctrl;
	struct rnvme_request *req;
	struct request *rq;
	u16 tag;
	int ret;

	/*
	 * nvme_find_rq() logs every unknown tag and stale generation without
	 * a rate limit: a target that streams junk would flood the log.  The
	 * lookup here is silent, and what a response names is tested below.
	 * An ordered queue is an I/O queue: no test for the admin one.
	 */
	tag = nvme_tag_from_cid(cqe->command_id);
	rq = blk_mq_tag_to_rq(rnvme_tags_of(queue, tag, ordered), tag);
	if (unlikely(!rq)) {
		dev_err_ratelimited(ctrl->ctrl.device,
				    "queue %d: response for unknown command id %#x\n",
				    rnvme_queue_idx(queue), cqe->command_id);
		rnvme_error_recovery(ctrl);
		return;
	}
	req = blk_mq_rq_to_pdu(rq);
	/*
	 * A target that repeats a completion, or sends one for a command that
	 * already ended, must not end a request twice or touch an idle one:
	 * only a request in flight takes a response (one that a timeout or a
	 * cancel completed is MQ_RQ_COMPLETE until it is freed), only its
	 * first, and only for the use of the tag the command id names (its
	 * generation).  An interrupt-driven I/O queue handles its responses
	 * one at a time, in its CQ context; the admin and poll queues' CQs
	 * may be reaped by several pollers at once, so there the test and the
	 * mark are one atomic exchange, and the generation is tested after
	 * it: another poller may have ended the request and its tag have been
	 * reused since the lookup (a new use bumps the generation before it
	 * clears the mark).
	 */
	if (IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) && !ordered &&
	    queue->poll)
		rnvme_fi_hold(RNVME_FI_RSP_CHECK);
	if (unlikely(blk_mq_rq_state(rq) != MQ_RQ_IN_FLIGHT ||
		     (ordered ? req->rsp_seen : xchg(&req->rsp_seen, true)) ||
		     nvme_genctr_mask(nvme_req(rq)->genctr) !=
		     nvme_genctr_from_cid(cqe->command_id))) {
		dev_err_ratelimited(ctrl->ctrl.device,
				    "queue %d: %s response for command id %#x\n",
				    rnvme_queue_idx(queue),
				    blk_mq_request_started(rq) &&
				    nvme_genctr_mask(nvme_req(rq)->genctr) ==
				    nvme_genctr_from_cid(cqe->command_id) ?
				    "duplicate" : "stale", cqe->command_id);
		rnvme_error_recovery(ctrl);
		return;
	}
	if (ordered)
		req->rsp_seen = true;

	if (unlikely(!test_bit(RNVME_Q_LIVE, &queue->flags)))
		rnvme_note_setup_response(queue, rq, cqe);
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
		rnvme_keep_response(req, cqe);
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

	if (unlikely(req->wait_retire) &&
	    rnvme_seq_after(req->send_seq, READ_ONCE(queue->retired_seq))) {
		rnvme_keep_response(req, cqe);
		rnvme_park(queue, req);
		return;
	}
	if (!ordered) {
		/* another poller may reap the SEND's completion meanwhile */
		rnvme_keep_response(req, cqe);
		if (atomic_dec_and_test(&req->ref))
			__rnvme_end_request(req);
		return;
	}
	/*
	 * The queue's completions are handled one at a time: the response
	 * needs keeping only if the SEND's completion ends the request later.
	 */
	if (atomic_dec_and_test(&req->ref))
		rnvme_end_batched_with(queue, req, &cqe->status,
				       &cqe->result,
				       rnvme_answers_due(queue));
	else
		rnvme_keep_response(req, cqe);
}

/*
 * An Asynchronous Event Request's completion (an admin command id beyond
 * the tag set).  None can be outstanding before the admin queue is live:
 * the first is submitted once the controller is.
 */
static noinline void rnvme_async_event_rsp(struct rnvme_queue *queue,
					   struct nvme_completion *cqe)
{
	if (unlikely(!test_bit(RNVME_Q_LIVE, &queue->flags))) {
		dev_err_ratelimited(queue->ctrl->ctrl.device,
				    "queue 0: asynchronous event completion (command id %#x) before the queue is live: refused\n",
				    cqe->command_id);
		rnvme_error_recovery(queue->ctrl);
		return;
	}
	nvme_complete_async_event(&queue->ctrl->ctrl, cqe->status,
				  &cqe->result);
}

/*
 * A response arrived.  @ordered: the queue is an interrupt-driven I/O queue
 * (not the admin queue, which gets AENs; not polled, which reposts at once)
 * whose receive buffers need no dma_sync calls (rnvme_build_recv_wrs()).
 */
static __always_inline void __rnvme_recv_done(struct ib_cq *cq,
					      struct ib_wc *wc,
					      const bool ordered)
{
	struct rnvme_qe *qe = container_of(wc->wr_cqe, struct rnvme_qe, cqe);
	struct rnvme_queue *queue = wc->qp->qp_context;
	struct nvme_completion *cqe = qe->data;
	const size_t len = sizeof(struct nvme_completion);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rnvme_wr_error(cq, wc, "RECV");
		return;
	}
	rnvme_tele_wc_ok(queue, ordered);

	if (unlikely(wc->byte_len < len)) {
		dev_err(queue->ctrl->ctrl.device,
			"queue %d: response of %u bytes, expected %zu\n",
			rnvme_queue_idx(queue), wc->byte_len, len);
		rnvme_error_recovery(queue->ctrl);
		return;
	}

	/* commands in flight, for rnvme_send_signaled() (a statistic) */
	data_race(queue->rsp_count++);
	if (!ordered && unlikely(queue->rsp_sync))
		ib_dma_sync_single_for_cpu(queue->ibdev, qe->dma, len,
					   DMA_FROM_DEVICE);
	if (!ordered &&
	    unlikely(nvme_is_aen_req(rnvme_queue_idx(queue), cqe->command_id)))
		rnvme_async_event_rsp(queue, cqe);
	else
		rnvme_process_rsp(queue, cqe, wc, ordered);
	if (!ordered && unlikely(queue->rsp_sync))
		ib_dma_sync_single_for_device(queue->ibdev, qe->dma, len,
					      DMA_FROM_DEVICE);

	rnvme_repost_recv(queue, qe, ordered);
}

/* the receive completion of an interrupt-driven I/O queue without dma_sync */
void rnvme_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	__rnvme_recv_done(cq, wc, true);
}

/* the receive completion of the admin queue, poll queues and the rest */
void rnvme_recv_any_done(struct ib_cq *cq, struct ib_wc *wc)
{
	__rnvme_recv_done(cq, wc, false);
}

static int rnvme_init_request(struct blk_mq_tag_set *set, struct request *rq,
			      unsigned int hctx_idx,
			      RNVME_NUMA_NODE_T numa_node)
{
	struct rnvme_ctrl *ctrl = to_rnvme_ctrl(set->driver_data);
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	int qid = set == &ctrl->admin_tag_set ? 0 : hctx_idx + 1;
	struct nvme_command *cmd;

	nvme_req(rq)->ctrl = &ctrl->ctrl;
	/*
	 * The SQE buffer lives as long as the tag set; it is DMA-mapped once
	 * per association (the first time the request is sent on it, see
	 * rnvme_map_sqe()), so it follows the controller across reconnects
	 * even when the new association lands on another RDMA device.
	 */
	cmd = kzalloc_node(sizeof(*cmd), GFP_KERNEL, numa_node);
	req->sqe.data = cmd;
	if (!cmd)
		return -ENOMEM;
	req->sqe_gen = 0;
	req->tele_class = RNVME_TC_UNARMED;
	/* rnvme_map_data() uses them as they are for short lists */
	sg_init_table(req->first_sgl, RNVME_INLINE_SG_CNT);
	req->sgt.sgl = req->first_sgl;
	INIT_LIST_HEAD(&req->sqe_node);
	rnvme_init_reg_wr(req);
	req->sqe.cqe.done = rnvme_send_done;
	memset(&req->send_wr, 0, sizeof(req->send_wr));
	req->send_wr.wr_cqe = &req->sqe.cqe;
	req->send_wr.sg_list = req->sge;
	req->send_wr.opcode = IB_WR_SEND;
	req->reg_wr.wr.next = &req->send_wr;
	req->queue = &ctrl->queues[qid];
	nvme_req(rq)->cmd = req->sqe.data;
	return 0;
}

static void rnvme_exit_request(struct blk_mq_tag_set *set, struct request *rq,
			       unsigned int hctx_idx)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);

	/* the tag set may go before the queue's verbs resources do */
	rnvme_unmap_sqe(req);
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

#ifdef RNVME_BENCH_HOOKS
/* test_extra_work: three instructions an iteration (add, compare, branch) */
static noinline void rnvme_test_burn(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		barrier();
}

static __always_inline void rnvme_bench_hook(void)
{
	if (static_branch_unlikely(&rnvme_test_work_key))
		rnvme_test_burn(READ_ONCE(rnvme_test_extra_work));
}
#else
/* the product has no bench hook: nothing in queue_rq */
static __always_inline void rnvme_bench_hook(void)
{
}
#endif

/*
 * Number, signal and post a request's SEND (and its REG_MR).  On an
 * interrupt-driven I/O queue (@ordered) the caller holds post_lock, so that
 * sequence numbers follow the send queue's order: a signaled completion then
 * retires exactly the SENDs numbered before it (rnvme_unpark()).
 */
static __always_inline int __rnvme_submit(struct rnvme_queue *queue,
					  struct rnvme_request *req,
					  const bool ordered, const bool last)
{
	/* an ordered queue is an I/O queue (qid > 0) that is not polled */
	int qid = ordered ? 1 : rnvme_queue_idx(queue);
	bool poll = ordered ? false : queue->poll;
	bool inline_data = req->num_sge > 1;
	bool must_retire = inline_data || req->mr;
	bool signaled;
	u32 seq;
	int err;

	/* counted before the post (on an ordered queue by rnvme_tele_arm()) */
	if (!ordered && rnvme_tele_counting(req))
		rnvme_tele_submitted(queue, req, false, 1);
	seq = atomic_inc_return(&queue->send_seq);
	signaled = rnvme_send_signaled(qid, poll, req->mr, inline_data,
				       seq, seq - READ_ONCE(queue->rsp_count));
	req->send_seq = seq;
	req->wait_retire = must_retire && !signaled;
	/* the response (or invalidation) ends it, and a signaled SEND */
	atomic_set(&req->ref, signaled ? 2 : 1);
	if (signaled) {
		req->prev_sig_seq = queue->last_sig_seq;
		queue->last_sig_seq = seq;
	}
	/* a failed post restores last_sig_seq (rnvme_post_req()) */
	err = rnvme_post_req(queue, req, signaled, ordered, last);
	if (unlikely(err) && rnvme_tele_counting(req))
		rnvme_tele_submitted(queue, req, ordered, -1ULL);
	return err;
}

/*
 * Map a request's data, start it and post it.  An ordered queue does all
 * under post_lock: the section that numbers and posts the SEND also takes
 * the request's MR (rnvme_mr_get()).  irqsave, not _bh: leaving a _bh section
 * runs the softirqs the post raised (the whole exchange over Soft-RoCE)
 * before the next command is queued, which serializes a deep queue.
 *
 * Return: 0, or the error of the mapping (*@posting false) or of the post
 * (*@posting true; the data is unmapped again).
 */
static __always_inline int rnvme_map_submit(struct rnvme_queue *queue,
					    struct request *rq,
					    struct nvme_command *c,
					    const bool ordered, const bool last,
					    bool *posting)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	struct rnvme_request *failed = NULL;
	unsigned long flags = 0;
	int err;

	if (ordered)
		spin_lock_irqsave(&queue->post_lock, flags);
	/* how the data goes (RNVME_TD_*), or an error */
	err = rnvme_map_data(queue, rq, c, ordered);
	*posting = err >= 0;
	if (likely(err >= 0)) {
		/*
		 * Started once its data is mapped, as nvme-pci does: a request
		 * sent back for want of an MR (-EAGAIN) was never started, so
		 * blk-mq's timeout and nvme-core's multipath accounting see
		 * only the dispatch that posts it.
		 */
		nvme_start_request(rq);
		rnvme_tele_arm(queue, rq, req, err, ordered);
		if (unlikely(req->sqe_sync))
			ib_dma_sync_single_for_device(queue->ibdev,
						      req->sqe.dma,
						      sizeof(struct nvme_command),
						      DMA_TO_DEVICE);
		err = __rnvme_submit(queue, req, ordered, last);
		if (unlikely(err)) {
			rnvme_unmap_data(queue, rq);
			if (ordered) {
				failed = queue->chain_failed;
				queue->chain_failed = NULL;
			}
		}
	}
	if (ordered)
		spin_unlock_irqrestore(&queue->post_lock, flags);
	if (unlikely(failed))
		rnvme_chain_end_failed(queue, failed);
	return err;
}

/**
 * rnvme_chain_flush - post what @queue's batch holds
 * @queue: an ordered I/O queue
 *
 * What of it the provider refused ends with a host path error.  Any context
 * but hard IRQ (takes post_lock with interrupts off).
 */
noinline void rnvme_chain_flush(struct rnvme_queue *queue)
{
	struct rnvme_request *failed;
	unsigned long flags;

	spin_lock_irqsave(&queue->post_lock, flags);
	rnvme_chain_post(queue, NULL);
	failed = queue->chain_failed;
	queue->chain_failed = NULL;
	spin_unlock_irqrestore(&queue->post_lock, flags);
	if (unlikely(failed))
		rnvme_chain_end_failed(queue, failed);
}

/**
 * rnvme_chain_drop - end the batch of a queue being stopped, unposted
 * @queue: a queue whose QP was drained
 *
 * blk-mq promises neither a last request nor commit_rqs after one queued
 * with more to follow: a plug flushed into a queue quiesced part way
 * inserts the rest itself and calls neither.  Such a batch must not outlive
 * its association (the next one's first post would send its work requests,
 * of requests cancelled meanwhile and perhaps reused, on a new QP).  Its
 * requests never reached the wire: they end with a host path error, retried
 * or failed over at once, as a batch the provider refused.
 */
void rnvme_chain_drop(struct rnvme_queue *queue)
{
	struct rnvme_request *first, *failed;
	unsigned long flags;

	spin_lock_irqsave(&queue->post_lock, flags);
	first = queue->chain;
	WRITE_ONCE(queue->chain, NULL);
	if (first)
		rnvme_chain_unlink(queue, first, first, NULL, 0);
	failed = queue->chain_failed;
	queue->chain_failed = NULL;
	spin_unlock_irqrestore(&queue->post_lock, flags);
	if (failed)
		rnvme_chain_end_failed(queue, failed);
}

/*
 * queue_rq ends without posting its request: a batch waiting for its last
 * request must not wait for this one, since blk-mq calls commit_rqs only
 * when it knows the batch ended early (not when its last request failed,
 * or was completed at once with a path error).  The batch is the queue's,
 * shared by every CPU that dispatches to its hctx: another CPU's open batch
 * is posted with it, early but in order, and its own last request then
 * posts alone.  The test without the lock is a hint; the flush takes it.
 */
static __always_inline void rnvme_chain_kick(struct rnvme_queue *queue)
{
	if (queue->ordered && unlikely(READ_ONCE(queue->chain)))
		rnvme_chain_flush(queue);
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
	blk_status_t ret;
	bool posting;
	int err;

	rnvme_tele_dispatched(queue, rq);

	rnvme_bench_hook();

	/*
	 * Nothing posted on a connection the target closed gets an answer:
	 * fail or requeue at once (a Fabrics Connect fails: it is failfast).
	 * The other commands that set a queue up (authentication) may be
	 * retried, and a requeue would bring them back to this connection
	 * for as long as the attempt lasts, which waits for them: they fail.
	 */
	if (unlikely(qflags & BIT(RNVME_Q_DISCONNECTED))) {
		rnvme_tele_rejected(queue);
		rnvme_chain_kick(queue);
		if (blk_rq_is_passthrough(rq) && nvme_is_fabrics(c))
			return nvme_host_path_error(rq);
		return nvme_fail_nonready_command(&queue->ctrl->ctrl, rq);
	}
	if (unlikely(!ready)) {
		if (!nvme_check_ready(&queue->ctrl->ctrl, rq, false)) {
			rnvme_tele_rejected(queue);
			rnvme_chain_kick(queue);
			return nvme_fail_nonready_command(&queue->ctrl->ctrl, rq);
		}
		rnvme_note_setup_command(queue, rq);
	}

	/* first use of this request on this association: map its SQE */
	if (unlikely(req->sqe_gen != queue->sqe_gen) &&
	    rnvme_map_sqe(queue, req)) {
		rnvme_chain_kick(queue);
		return BLK_STS_RESOURCE;
	}

	if (unlikely(req->sqe_sync))
		ib_dma_sync_single_for_cpu(queue->ibdev, sqe->dma,
					   sizeof(struct nvme_command),
					   DMA_TO_DEVICE);

	ret = nvme_setup_cmd(ns, rq);
	if (ret) {
		rnvme_chain_kick(queue);
		return ret;
	}

	/*
	 * One copy per kind of queue, and on an I/O queue one for a request
	 * with more to follow: a lone request's tests fold away.
	 */
	if (unlikely(!queue->ordered))
		err = rnvme_map_submit(queue, rq, c, false, true, &posting);
	else if (likely(bd->last) && !rnvme_fi_fail(RNVME_FI_CHAIN_OPEN))
		err = rnvme_map_submit(queue, rq, c, true, true, &posting);
	else
		err = rnvme_map_submit(queue, rq, c, true, false, &posting);
	if (likely(!err))
		return BLK_STS_OK;

	rnvme_chain_kick(queue);
	/* -EAGAIN: no free MR while the pool grows; dispatched again */
	if (!posting && err != -EAGAIN)
		dev_err_ratelimited(queue->ctrl->ctrl.device,
				    "queue %d: mapping data failed (%d)\n",
				    rnvme_queue_idx(queue), err);
	/* a path error completes the request (and cleans the command up) */
	if (err == -EIO)
		return nvme_host_path_error(rq);
	nvme_cleanup_cmd(rq);
	if (err == -ENOMEM || err == -EAGAIN)
		return BLK_STS_RESOURCE;
	return BLK_STS_IOERR;
}

/*
 * blk-mq ends a batch before its last request was queued (that one was
 * refused, or the batch moves on to another queue): post what it holds.
 */
static void rnvme_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct rnvme_queue *queue = hctx->driver_data;

	if (queue->ordered)
		rnvme_chain_flush(queue);
}

static int rnvme_poll(struct blk_mq_hw_ctx *hctx, struct io_comp_batch *iob)
{
	struct rnvme_queue *queue = hctx->driver_data;
	struct ib_cq *cq;
	int found = 0;

	/*
	 * io_uring keeps polling requeued requests while error recovery
	 * frees the queue's CQ: rnvme_fence_pollers() waits until no poller
	 * is counted.  A counter and not an RCU-sched section: completing
	 * requests takes the provider's CQ lock and blk-mq's locks, which
	 * sleep on PREEMPT_RT, so the poll must stay preemptible.
	 */
	atomic_inc(&queue->pollers);
	/* the count before the read of @ib_cq; pairs with the fence's smp_mb */
	smp_mb__after_atomic();
	cq = READ_ONCE(queue->ib_cq);
	/*
	 * At most what the CQ holds: a target that keeps sending cannot keep
	 * a poller inside one call for longer.
	 */
	if (cq)
		found = ib_process_cq_direct(cq, queue->cq_size);
	/*
	 * Every access of this call to the CQ, the QP and the requests before
	 * the count drops: the fence frees them once it reads zero.  A plain
	 * atomic_dec() orders nothing (x86's locked instruction would, by
	 * accident); pairs with the smp_mb() after the fence's loop.
	 */
	smp_mb__before_atomic();
	atomic_dec(&queue->pollers);
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

static void rnvme_abort_set_requests(struct blk_mq_tag_set *set,
				     struct rnvme_queue *queue)
{
	if (set->tags)
		blk_mq_tagset_busy_iter(set, rnvme_abort_one, queue);
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

	/*
	 * The reconnect work may be allocating, resizing or freeing the tag
	 * sets (tagset_lock).  A failed connect frees them before the CM
	 * reports the disconnect: a freed set (no tags) is not walked, as
	 * newer kernels walk a set under its SRCU, which the free cleans up.
	 */
	mutex_lock(&ctrl->tagset_lock);
	if (!rnvme_queue_idx(queue)) {
		rnvme_abort_set_requests(&ctrl->admin_tag_set, queue);
	} else {
		/* the Connect, and commands of an earlier association */
		rnvme_abort_set_requests(&ctrl->connect_set, queue);
		rnvme_abort_set_requests(&ctrl->tag_set, queue);
	}
	mutex_unlock(&ctrl->tagset_lock);
}

static enum blk_eh_timer_return rnvme_timeout(struct request *rq)
{
	struct rnvme_request *req = blk_mq_rq_to_pdu(rq);
	struct rnvme_queue *queue = req->queue;
	struct rnvme_ctrl *ctrl = queue->ctrl;
	struct nvme_command *cmd = req->sqe.data;

	/* the failover hold ends it, at a time of its own */
	if (READ_ONCE(req->held))
		return BLK_EH_RESET_TIMER;

	dev_warn(ctrl->ctrl.device,
		 "queue %d: command %#x (opcode %#x, tag %d) timed out\n",
		 rnvme_queue_idx(queue), cmd->common.command_id,
		 cmd->common.opcode, rq->tag);

	if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_LIVE) {
		/*
		 * Connecting or tearing down: nobody else will complete it.
		 * Stopping the queue drains its QP even when it is not live
		 * yet (a Fabrics Connect in flight): no response can arrive
		 * after it, so the request is completed here once.
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
	.commit_rqs	= rnvme_commit_rqs,
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
