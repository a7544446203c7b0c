// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme memory registration work requests: the REG_MR template of each
 * request, its (failure-only) completion, and the LOCAL_INV of an MR the
 * target did not invalidate.  Mapping a request's data is part of the I/O
 * path, in io.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "rnvme.h"

void rnvme_memreg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	/* REG_MR is posted unsignaled: only a failure gets here */
	if (unlikely(wc->status != IB_WC_SUCCESS))
		rnvme_wr_error(cq, wc, "MEMREG");
}

/**
 * rnvme_init_reg_wr - fill in the parts of a request's REG_MR that never change
 * @req: a request being initialized
 */
void rnvme_init_reg_wr(struct rnvme_request *req)
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
	rnvme_tele_wc_ok(req->queue);
	if (atomic_dec_and_test(&req->ref))
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

	req->inv_cqe.done = rnvme_inv_rkey_done;
	wr.wr_cqe = &req->inv_cqe;
	ret = ib_post_send(queue->qp, &wr, NULL);
	if (likely(!ret))
		rnvme_count_wrs(queue, 1);
	return ret;
}
