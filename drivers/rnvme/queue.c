// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme queues: the verbs resources behind a queue's RDMA CM id (CQ, QP, MR
 * pool, receive ring; the CM id itself is cm.c's) and the Fabrics Connect
 * that makes a queue live; the RDMA devices in use (their protection
 * domains), shared by the queues.
 * Every stop and free step is guarded by its own state bit, so teardown can
 * run from any point of a failed setup and any number of times.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/irq_poll.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include "rnvme.h"

/* associations get distinct SQE mapping generations; 0 means unmapped */
static atomic_t rnvme_sqe_gen_next = ATOMIC_INIT(0);

static u32 rnvme_new_sqe_gen(void)
{
	u32 gen;

	do {
		gen = atomic_inc_return(&rnvme_sqe_gen_next);
	} while (!gen);
	return gen;
}

/* send queue depth of @queue (rnvme_send_queue_depth(), logic.c) */
static u32 rnvme_send_depth(struct rnvme_queue *queue)
{
	return rnvme_send_queue_depth(queue->queue_size, num_possible_cpus());
}

/* receive buffers (rnvme_queue.nr_rsp), + the drain work request */
static u32 rnvme_recv_queue_depth(struct rnvme_queue *queue)
{
	return queue->nr_rsp + 1;
}

int rnvme_alloc_qe(struct ib_device *ibdev, struct rnvme_qe *qe, size_t size,
		   enum dma_data_direction dir)
{
	qe->data = kzalloc(size, GFP_KERNEL);
	if (!qe->data)
		return -ENOMEM;

	qe->dma = ib_dma_map_single(ibdev, qe->data, size, dir);
	if (ib_dma_mapping_error(ibdev, qe->dma)) {
		kfree(qe->data);
		qe->data = NULL;
		return -ENOMEM;
	}
	return 0;
}

void rnvme_free_qe(struct ib_device *ibdev, struct rnvme_qe *qe, size_t size,
		   enum dma_data_direction dir)
{
	ib_dma_unmap_single(ibdev, qe->dma, size, dir);
	kfree(qe->data);
}

static void rnvme_free_ring(struct ib_device *ibdev, struct rnvme_qe *ring,
			    size_t count, size_t size,
			    enum dma_data_direction dir)
{
	size_t i;

	for (i = 0; i < count; i++)
		rnvme_free_qe(ibdev, &ring[i], size, dir);
	kfree(ring);
}

static struct rnvme_qe *rnvme_alloc_ring(struct ib_device *ibdev,
					 size_t count, size_t size,
					 enum dma_data_direction dir)
{
	struct rnvme_qe *ring;
	size_t i;

	ring = kcalloc(count, sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return NULL;

	for (i = 0; i < count; i++) {
		if (rnvme_alloc_qe(ibdev, &ring[i], size, dir))
			goto out_free_ring;
	}
	return ring;

out_free_ring:
	rnvme_free_ring(ibdev, ring, i, size, dir);
	return NULL;
}

u32 rnvme_max_fr_pages(struct ib_device *ibdev)
{
	return rnvme_max_fr_pages_for(ibdev->attrs.max_fast_reg_page_list_len);
}

static LIST_HEAD(rnvme_device_list);
static DEFINE_MUTEX(rnvme_device_mutex);

static void rnvme_device_free(struct kref *ref)
{
	struct rnvme_device *dev = container_of(ref, struct rnvme_device, ref);

	mutex_lock(&rnvme_device_mutex);
	list_del(&dev->entry);
	mutex_unlock(&rnvme_device_mutex);

	ib_dealloc_pd(dev->pd);
	kfree(dev);
}

static void rnvme_device_put(struct rnvme_device *dev)
{
	kref_put(&dev->ref, rnvme_device_free);
}

/**
 * rnvme_device_get - find or set up the device a CM id was bound to
 * @cm_id: an id whose address has been resolved
 *
 * Return: a referenced device, or NULL (the reason is logged).
 */
static struct rnvme_device *rnvme_device_get(struct rdma_cm_id *cm_id)
{
	struct ib_device *ibdev = cm_id->device;
	struct rnvme_device *dev;

	mutex_lock(&rnvme_device_mutex);
	list_for_each_entry(dev, &rnvme_device_list, entry) {
		if (dev->ibdev == ibdev && kref_get_unless_zero(&dev->ref))
			goto out_unlock;
	}

	if (!(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		dev_err(&ibdev->dev,
			"rnvme needs fast memory registration, which this device lacks\n");
		dev = NULL;
		goto out_unlock;
	}

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		goto out_unlock;

	dev->ibdev = ibdev;
	kref_init(&dev->ref);
	dev->pd = ib_alloc_pd(ibdev,
			      rnvme_register_always ? 0 : IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(dev->pd)) {
		dev_err(&ibdev->dev, "rnvme: protection domain allocation failed (%ld)\n",
			PTR_ERR(dev->pd));
		kfree(dev);
		dev = NULL;
		goto out_unlock;
	}
	dev->inline_segments =
		rnvme_inline_segments_for(ibdev->attrs.max_send_sge);
	list_add(&dev->entry, &rnvme_device_list);
out_unlock:
	mutex_unlock(&rnvme_device_mutex);
	return dev;
}

static void rnvme_qp_event(struct ib_event *event, void *context)
{
	struct rnvme_queue *queue = context;

	switch (event->event) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		/*
		 * The QP is in error: its next work request flushes and the
		 * queue recovers then, but only this event says why.
		 */
		dev_warn_ratelimited(queue->ctrl->ctrl.device,
				     "queue %d: QP event: %s (%d)\n",
				     rnvme_queue_idx(queue),
				     ib_event_msg(event->event), event->event);
		break;
	default:
		pr_debug("QP event %s (%d)\n", ib_event_msg(event->event),
			 event->event);
		break;
	}
}

static int rnvme_create_qp(struct rnvme_queue *queue)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.event_handler = rnvme_qp_event;
	attr.qp_context = queue;
	attr.cap.max_send_wr = rnvme_send_depth(queue);
	attr.cap.max_recv_wr = rnvme_recv_queue_depth(queue);
	attr.cap.max_recv_sge = 1;
	attr.cap.max_send_sge = 1 + queue->dev->inline_segments;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = queue->ib_cq;
	attr.recv_cq = queue->ib_cq;

	ret = rdma_create_qp(queue->cm_id, queue->dev->pd, &attr);
	if (ret)
		return ret;
	queue->qp = queue->cm_id->qp;
	return 0;
}

static int rnvme_create_cq(struct rnvme_queue *queue, struct ib_device *ibdev)
{
	int idx = rnvme_queue_idx(queue);
	/* spread I/O queues over the completion vectors; admin on vector 0 */
	int comp_vector = (idx ? idx - 1 : 0) % ibdev->num_comp_vectors;

	struct ib_cq *cq;

	/* a QP in error flushes every work request, signaled or not */
	queue->cq_size = rnvme_send_depth(queue) + rnvme_recv_queue_depth(queue);
	if (queue->poll)
		cq = ib_alloc_cq(ibdev, queue, queue->cq_size, comp_vector,
				 IB_POLL_DIRECT);
	else
		cq = ib_cq_pool_get(ibdev, queue->cq_size, comp_vector,
				    IB_POLL_SOFTIRQ);
	/* pollers read queue->ib_cq locklessly: never show them an ERR_PTR */
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	WRITE_ONCE(queue->ib_cq, cq);
	return 0;
}

/*
 * Take the CQ away from pollers and wait until none is left inside it
 * (rnvme_poll counts itself in @pollers before it reads @ib_cq; with the
 * barrier on each side, a poller either sees NULL or is seen here).
 * Everything a completion handler touches (the QP, the MRs, the receive
 * ring) may be freed only after this: a poller's last access to them is
 * ordered before its count drops (smp_mb__before_atomic() there), and the
 * read that sees zero before what the caller frees (the smp_mb() below).
 * Process context.
 */
static struct ib_cq *rnvme_fence_pollers(struct rnvme_queue *queue)
{
	struct ib_cq *cq = queue->ib_cq;

	WRITE_ONCE(queue->ib_cq, NULL);
	if (!queue->poll)
		return cq;
	/* the NULL before the count; pairs with rnvme_poll()'s barrier */
	smp_mb();
	while (atomic_read(&queue->pollers))
		usleep_range(20, 100);
	/* what a poller completed is ordered before what the caller frees */
	smp_mb();
	return cq;
}

static void rnvme_free_cq(struct rnvme_queue *queue, struct ib_cq *cq)
{
	if (queue->poll)
		ib_free_cq(cq);
	else
		ib_cq_pool_put(cq, queue->cq_size);
}

/**
 * rnvme_map_sqe - DMA-map a request's SQE buffer for the queue's association
 * @queue: the queue it is sent on
 * @req:   a request whose SQE is not mapped for this association yet
 *
 * Called the first time the request is sent on the association; the
 * mapping stays until the QP is destroyed (rnvme_unmap_sqes()) or the
 * request is freed (rnvme_unmap_sqe()), so a SEND left unsignaled reads
 * mapped memory whenever the device gets to it.
 */
int rnvme_map_sqe(struct rnvme_queue *queue, struct rnvme_request *req)
{
	struct ib_device *ibdev = queue->dev->ibdev;
	u64 dma;

	dma = ib_dma_map_single(ibdev, req->sqe.data,
				sizeof(struct nvme_command), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, dma))
		return -ENOMEM;

	spin_lock(&queue->sqe_lock);
	req->sqe.dma = dma;
	req->sqe_sync = rnvme_dma_needs_sync(ibdev, dma);
	/* the SEND's first SGE is the SQE, for the whole association */
	req->sge[0].addr = dma;
	req->sge[0].length = sizeof(struct nvme_command);
	req->sge[0].lkey = queue->lkey;
	req->sqe_gen = queue->sqe_gen;
	list_add(&req->sqe_node, &queue->sqe_mapped);
	spin_unlock(&queue->sqe_lock);
	return 0;
}

/**
 * rnvme_unmap_sqe - undo rnvme_map_sqe() for a request being freed
 * @req: the request
 *
 * The tag set may be freed while the queue's verbs resources live on
 * (controller deletion, queues kept by error recovery).
 */
void rnvme_unmap_sqe(struct rnvme_request *req)
{
	struct rnvme_queue *queue = req->queue;
	bool mapped;

	if (!req->sqe_gen)
		return;
	spin_lock(&queue->sqe_lock);
	mapped = test_bit(RNVME_Q_TR_READY, &queue->flags) &&
		 req->sqe_gen == queue->sqe_gen;
	if (mapped)
		list_del_init(&req->sqe_node);
	req->sqe_gen = 0;
	spin_unlock(&queue->sqe_lock);
	if (mapped)
		ib_dma_unmap_single(queue->dev->ibdev, req->sqe.dma,
				    sizeof(struct nvme_command), DMA_TO_DEVICE);
}

static void rnvme_unmap_sqes(struct rnvme_queue *queue)
{
	struct ib_device *ibdev = queue->dev->ibdev;
	struct rnvme_request *req, *next;
	LIST_HEAD(list);

	spin_lock(&queue->sqe_lock);
	list_splice_init(&queue->sqe_mapped, &list);
	/* no request matches the new generation */
	queue->sqe_gen = rnvme_new_sqe_gen();
	spin_unlock(&queue->sqe_lock);

	list_for_each_entry_safe(req, next, &list, sqe_node) {
		list_del_init(&req->sqe_node);
		ib_dma_unmap_single(ibdev, req->sqe.dma,
				    sizeof(struct nvme_command), DMA_TO_DEVICE);
	}
}

static void rnvme_free_mrs(struct rnvme_queue *queue)
{
	u32 i;

	for (i = 0; i < queue->nr_mrs; i++)
		ib_dereg_mr(queue->mrs[i].mr);
	kfree(queue->mrs);
	queue->mrs = NULL;
	queue->mr_free = NULL;
	init_llist_head(&queue->mr_freed);
	queue->nr_mrs = 0;
}

/*
 * Add MRs to @queue's pool until it holds @want (at most queue_size).
 * Called while setting the queue up, and by rnvme_mr_grow_work(), never both
 * at once: the work is cancelled before the pool goes.  New MRs join the
 * given-back list, which takes additions from anywhere.
 */
static int rnvme_add_mrs(struct rnvme_queue *queue, u32 want)
{
	struct rnvme_mr *slot;
	struct ib_mr *mr;

	want = min_t(u32, want, queue->queue_size);
	while (queue->nr_mrs < want) {
		mr = ib_alloc_mr(queue->dev->pd, IB_MR_TYPE_MEM_REG,
				 queue->mr_pages);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		slot = &queue->mrs[queue->nr_mrs];
		slot->mr = mr;
		llist_add(&slot->node, &queue->mr_freed);
		WRITE_ONCE(queue->nr_mrs, queue->nr_mrs + 1);
	}
	return 0;
}

/*
 * The pool starts with RNVME_MR_POOL_START MRs and doubles whenever a request
 * finds none free, up to one per request that can be in flight: memory
 * follows the depth a queue is used at, not the depth it could be.
 */
static int rnvme_alloc_mrs(struct rnvme_queue *queue, u32 pages_per_mr)
{
	queue->mrs = kcalloc(queue->queue_size, sizeof(*queue->mrs),
			     GFP_KERNEL);
	if (!queue->mrs)
		return -ENOMEM;
	queue->mr_pages = pages_per_mr;
	queue->mr_free = NULL;
	init_llist_head(&queue->mr_freed);
	if (rnvme_add_mrs(queue, RNVME_MR_POOL_START)) {
		rnvme_free_mrs(queue);
		return -ENOMEM;
	}
	return 0;
}

void rnvme_mr_grow_work(struct work_struct *work)
{
	struct rnvme_queue *queue =
		container_of(work, struct rnvme_queue, mr_grow);
	u32 had = queue->nr_mrs;
	int ret = 0;

	if (test_bit(RNVME_Q_TR_READY, &queue->flags))
		ret = rnvme_add_mrs(queue, 2 * had);
	if (ret)
		dev_warn_ratelimited(queue->ctrl->ctrl.device,
				     "queue %d: adding MRs to the %u there are failed (%d); requests wait for a free one\n",
				     rnvme_queue_idx(queue), had, ret);
	clear_bit(RNVME_Q_MR_GROWING, &queue->flags);
}

/*
 * A request of @queue found no free MR: it is dispatched again later
 * (BLK_STS_RESOURCE), and the pool grows unless it is full.
 */
void rnvme_mr_pool_empty(struct rnvme_queue *queue)
{
	if (READ_ONCE(queue->nr_mrs) < queue->queue_size &&
	    test_bit(RNVME_Q_TR_READY, &queue->flags) &&
	    !test_and_set_bit(RNVME_Q_MR_GROWING, &queue->flags))
		queue_work(system_dfl_wq, &queue->mr_grow);
}

/* the receive work requests, one per buffer, filled in once */
static int rnvme_build_recv_wrs(struct rnvme_queue *queue)
{
	u32 lkey = queue->dev->pd->local_dma_lkey;
	u32 i;

	queue->rsp_wr = kcalloc(queue->nr_rsp, sizeof(*queue->rsp_wr),
				GFP_KERNEL);
	if (!queue->rsp_wr)
		return -ENOMEM;
	queue->rsp_sync = false;
	for (i = 0; i < queue->nr_rsp; i++)
		queue->rsp_sync |= rnvme_dma_needs_sync(queue->dev->ibdev,
							queue->rsp_ring[i].dma);
	for (i = 0; i < queue->nr_rsp; i++) {
		struct rnvme_recv *r = &queue->rsp_wr[i];

		/* rnvme_recv_done() knows its queue needs no dma_sync */
		queue->rsp_ring[i].cqe.done =
			queue->ordered && !queue->rsp_sync ?
			rnvme_recv_done : rnvme_recv_any_done;
		queue->rsp_ring[i].idx = i;
		r->sge.addr = queue->rsp_ring[i].dma;
		r->sge.length = sizeof(struct nvme_completion);
		r->sge.lkey = lkey;
		r->wr.wr_cqe = &queue->rsp_ring[i].cqe;
		r->wr.sg_list = &r->sge;
		r->wr.num_sge = 1;
	}
	return 0;
}

static void rnvme_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rnvme_queue *queue = wc->qp->qp_context;

	/* an error of an unsignaled LOCAL_INV (iWARP's probe) ends up here too */
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rnvme_wr_error(cq, wc, "watchdog probe");
		return;
	}
	rnvme_tele_wc_ok(queue, false);
	rnvme_send_completed(queue, queue->probe_seq);
	clear_bit(0, &queue->probe_busy);
	if (queue->parked)
		rnvme_unpark(queue);
}

/*
 * The watchdog's probe for an I/O queue with interrupts.  Its completion
 * comes, in send queue order, after every SEND posted before it: it retires
 * them.
 *
 * On InfiniBand and RoCE it is a zero-length RDMA WRITE.  The target's NIC
 * acknowledges it without touching memory or checking the key (InfiniBand
 * C9-88; Soft-RoCE alike), and nvmet never sees it; it completes only once
 * the target answered on the wire, so it also hears a path whose answers
 * stopped (@probe_hears).
 *
 * On iWARP a work request completes when the local TCP stack took it, so a
 * WRITE would hear nothing more, and siw left a zero-length one unfinished
 * (04 over siw on the debug kernel: the probe tripped the watchdog after
 * every reconnect).  There it is a REG_MR of a private MR over one receive
 * buffer (local access only), signaled, and an unsignaled LOCAL_INV that
 * frees the MR for the next probe.  The REG_MR is the signaled one because
 * a LOCAL_INV is fenced (it waits until everything before it is retired),
 * and a provider that misses the wakeup ending that wait would leave a
 * signaled LOCAL_INV pending until the next post (Soft-RoCE did); a
 * LOCAL_INV held that way is run by the next post.
 */
static int rnvme_alloc_probe(struct rnvme_queue *queue)
{
	struct scatterlist sg;
	struct ib_mr *mr;
	int n;

	queue->probe_first = NULL;
	queue->probe_hears = false;
	queue->send_acks_local = rdma_protocol_iwarp(queue->ibdev,
						     queue->cm_id->port_num);
	if (!rnvme_queue_idx(queue) || queue->poll)
		return 0;

	queue->probe_cqe.done = rnvme_probe_done;
	if (!queue->send_acks_local) {
		queue->probe_write = (struct ib_rdma_wr){
			.wr.opcode	= IB_WR_RDMA_WRITE,
			.wr.wr_cqe	= &queue->probe_cqe,
			.wr.send_flags	= IB_SEND_SIGNALED,
		};
		queue->probe_first = &queue->probe_write.wr;
		queue->probe_hears = true;
		return 0;
	}

	mr = ib_alloc_mr(queue->dev->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr))
		return PTR_ERR(mr);

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = queue->rsp_ring[0].dma;
	sg_dma_len(&sg) = sizeof(struct nvme_completion);
	n = ib_map_mr_sg(mr, &sg, 1, NULL, SZ_4K);
	if (n != 1) {
		ib_dereg_mr(mr);
		return n < 0 ? n : -EINVAL;
	}

	queue->probe_reg = (struct ib_reg_wr){
		.wr.opcode	= IB_WR_REG_MR,
		.wr.wr_cqe	= &queue->probe_cqe,
		.wr.send_flags	= IB_SEND_SIGNALED,
		.wr.next	= &queue->probe_inv,
		.mr		= mr,
		.access		= IB_ACCESS_LOCAL_WRITE,
	};
	queue->probe_inv = (struct ib_send_wr){
		.opcode		= IB_WR_LOCAL_INV,
		.wr_cqe		= &queue->probe_cqe,
	};
	queue->probe_mr = mr;
	queue->probe_first = &queue->probe_reg.wr;
	return 0;
}

/**
 * rnvme_post_probe - confirm a queue's unsignaled SENDs, or its path
 * @queue: a live I/O queue with nothing signaled outstanding
 *
 * Called by the ACK watchdog (process context) when the queue posts no
 * more SENDs and its newest were unsignaled or its answers stopped, and in
 * CQ context for a parked request; the probe's completion retires the SENDs
 * before it, and while it is outstanding the watchdog watches it like a
 * signaled SEND.
 *
 * Return: 0 (posted, or not needed), or the posting error.
 */
int rnvme_post_probe(struct rnvme_queue *queue)
{
	struct ib_mr *mr = queue->probe_mr;
	unsigned long flags;
	int ret;

	if (!queue->probe_first || test_and_set_bit(0, &queue->probe_busy))
		return 0;

	if (mr) {
		/* a fresh key for every registration */
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		queue->probe_reg.key = mr->rkey;
		queue->probe_inv.ex.invalidate_rkey = mr->rkey;
	}

	/* numbered in send queue order, like a SEND (rnvme_submit()) */
	spin_lock_irqsave(&queue->post_lock, flags);
	/*
	 * A batch not posted yet (io.c, "Batched posting") has SENDs numbered
	 * before the probe's number; its post, due as soon as blk-mq's
	 * dispatch ends (or by the watchdog's next check, should blk-mq leave
	 * it open), is what to wait for.
	 */
	if (queue->chain) {
		spin_unlock_irqrestore(&queue->post_lock, flags);
		clear_bit(0, &queue->probe_busy);
		return 0;
	}
	queue->probe_seq = atomic_read(&queue->send_seq);
	rnvme_send_posted(queue);
	ret = ib_post_send(queue->qp, queue->probe_first, NULL);
	if (!ret) {
		queue->last_sig_seq = queue->probe_seq;
		/*
		 * Counted under post_lock, which every probe post holds:
		 * probe_busy does not order two probes' counts, since the
		 * probe may complete (and clear it for the next) as soon as
		 * it is posted
		 */
		queue->probes++;
	}
	spin_unlock_irqrestore(&queue->post_lock, flags);
	if (ret) {
		atomic_dec(&queue->sends_pending);
		clear_bit(0, &queue->probe_busy);
		dev_err_ratelimited(queue->ctrl->ctrl.device,
				    "queue %d: posting the watchdog probe failed (%d)\n",
				    rnvme_queue_idx(queue), ret);
		return ret;
	}
	rnvme_count_wrs(queue, mr ? 2 : 1);
	return 0;
}

/**
 * rnvme_create_queue_ib - build the verbs resources once the device is known
 * @queue: a queue whose CM id has resolved its address
 *
 * Called from the CM handler (ADDR_RESOLVED).
 */
int rnvme_create_queue_ib(struct rnvme_queue *queue)
{
	struct ib_device *ibdev;
	u32 pages_per_mr;
	int ret;

	queue->dev = rnvme_device_get(queue->cm_id);
	if (!queue->dev)	/* rnvme_device_get() said why */
		return -ECONNREFUSED;
	ibdev = queue->dev->ibdev;
	queue->ibdev = ibdev;
	queue->lkey = queue->dev->pd->local_dma_lkey;
	queue->inline_segs = queue->dev->inline_segments;
	queue->global_rkey = queue->dev->pd->flags & IB_PD_UNSAFE_GLOBAL_RKEY;
	queue->ordered = rnvme_queue_idx(queue) && !queue->poll;
	/* a new QP: no SEND outstanding (the last one's were drained) */
	atomic_set(&queue->sends_pending, 0);
	atomic_set(&queue->send_seq, 0);
	queue->retired_seq = 0;
	queue->last_sig_seq = 0;
	queue->rsp_count = 0;
	spin_lock_init(&queue->post_lock);
	rnvme_drop_parked(queue);
	queue->probe_busy = 0;
	queue->ack_wd = (struct rnvme_ack_wd){};
	/* requests mapped for an earlier association map their SQE again */
	queue->sqe_gen = rnvme_new_sqe_gen();
	spin_lock_init(&queue->sqe_lock);
	INIT_LIST_HEAD(&queue->sqe_mapped);
	queue->nr_rsp = rnvme_recv_ring_size(queue->queue_size, queue->poll);
	/* the controller's queue size was fitted to its admin queue's device */
	if (rnvme_queue_size_for_device(queue->queue_size, num_possible_cpus(),
					ibdev->attrs.max_qp_wr,
					ibdev->attrs.max_cqe) != queue->queue_size) {
		dev_err(&ibdev->dev,
			"rnvme: queue %d: %d entries need %u send and %u receive work requests and a CQ of %u; the device allows %d per queue and CQs of %d: connect with a smaller queue_size\n",
			rnvme_queue_idx(queue), queue->queue_size,
			rnvme_send_depth(queue), queue->nr_rsp + 1,
			rnvme_send_depth(queue) + queue->nr_rsp + 1,
			ibdev->attrs.max_qp_wr, ibdev->attrs.max_cqe);
		ret = -EINVAL;
		goto out_put_dev;
	}

	ret = rnvme_create_cq(queue, ibdev);
	if (ret)
		goto out_put_dev;

	ret = rnvme_create_qp(queue);
	if (ret)
		goto out_destroy_cq;

	queue->rsp_ring = rnvme_alloc_ring(ibdev, queue->nr_rsp,
					   sizeof(struct nvme_completion),
					   DMA_FROM_DEVICE);
	if (!queue->rsp_ring) {
		ret = -ENOMEM;
		goto out_destroy_qp;
	}
	ret = rnvme_build_recv_wrs(queue);
	if (ret)
		goto out_free_ring;

	/* one more page: the data may start in the middle of one */
	pages_per_mr = rnvme_max_fr_pages(ibdev) + 1;
	ret = rnvme_alloc_mrs(queue, pages_per_mr);
	if (ret) {
		dev_err(&ibdev->dev,
			"rnvme: queue %d: allocating %d MRs of %u pages failed (%d)\n",
			rnvme_queue_idx(queue),
			min_t(int, RNVME_MR_POOL_START, queue->queue_size),
			pages_per_mr, ret);
		goto out_free_ring;
	}

	ret = rnvme_alloc_probe(queue);
	if (ret)
		goto out_free_mrs;

	set_bit(RNVME_Q_TR_READY, &queue->flags);
	return 0;

out_free_mrs:
	rnvme_free_mrs(queue);
out_free_ring:
	kfree(queue->rsp_wr);
	queue->rsp_wr = NULL;
	rnvme_free_ring(ibdev, queue->rsp_ring, queue->nr_rsp,
			sizeof(struct nvme_completion), DMA_FROM_DEVICE);
	queue->rsp_ring = NULL;
out_destroy_qp:
	/* nothing was posted yet: a poller can find no completion of it */
	rdma_destroy_qp(queue->cm_id);
	queue->qp = NULL;
out_destroy_cq:
	rnvme_free_cq(queue, rnvme_fence_pollers(queue));
out_put_dev:
	rnvme_device_put(queue->dev);
	queue->dev = NULL;
	return ret;
}

void rnvme_destroy_queue_ib(struct rnvme_queue *queue)
{
	struct ib_device *ibdev;
	struct ib_cq *cq;

	if (!test_and_clear_bit(RNVME_Q_TR_READY, &queue->flags))
		return;

	ibdev = queue->dev->ibdev;
	cq = rnvme_fence_pollers(queue);
	/* not ready any more: a grow queued from now on adds nothing */
	cancel_work_sync(&queue->mr_grow);
	clear_bit(RNVME_Q_MR_GROWING, &queue->flags);
	/* the CM id is already gone: destroy the QP directly */
	ib_destroy_qp(queue->qp);
	queue->qp = NULL;
	/* no work request of the QP can use them now */
	rnvme_free_mrs(queue);
	/* nothing reads the SQEs or uses the probe MR any more */
	rnvme_unmap_sqes(queue);
	if (queue->probe_mr) {
		ib_dereg_mr(queue->probe_mr);
		queue->probe_mr = NULL;
	}
	rnvme_free_cq(queue, cq);
	kfree(queue->rsp_wr);
	queue->rsp_wr = NULL;
	rnvme_free_ring(ibdev, queue->rsp_ring, queue->nr_rsp,
			sizeof(struct nvme_completion), DMA_FROM_DEVICE);
	queue->rsp_ring = NULL;
	rnvme_device_put(queue->dev);
	queue->dev = NULL;
}

/**
 * rnvme_init_queue - ready a queue slot for a new association
 * @ctrl:       the controller
 * @idx:        queue index (0: admin)
 * @queue_size: NVMe queue entries
 *
 * Clears what the slot's last association left and sizes the queue; the
 * CM handshake that builds its verbs resources follows (rnvme_alloc_queue()).
 */
void rnvme_init_queue(struct rnvme_ctrl *ctrl, int idx, size_t queue_size)
{
	struct rnvme_queue *queue = &ctrl->queues[idx];
	int cpu;

	/*
	 * ctrl, tele, qid, stats and queue_lock stay (rnvme_create_ctrl()):
	 * blk-mq may still dispatch to this slot, and rnvme_queue_rq() reads
	 * them.  Nothing else of the slot is in use: its last association was
	 * stopped and freed, its CM id destroyed (no handler runs).  The
	 * statistics start again with the association: nothing posts on the
	 * slot until its new QP exists.
	 */
	memset_startat(queue, 0, rsp_ring);
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(queue->stats, cpu), 0,
		       sizeof(struct rnvme_qstats));
	init_completion(&queue->cm_done);
	queue->queue_size = queue_size;
	queue->poll = rnvme_is_poll_queue(ctrl->io_queues, idx);
	queue->tele_plain = idx && !queue->poll;
	/* I/O capsules may carry data; the admin queue's never do */
	queue->capsule_len = rnvme_capsule_len(idx, ctrl->ctrl.ioccsz);
	queue->inline_room = rnvme_inline_room(idx, ctrl->use_inline_data,
					       queue->capsule_len -
					       sizeof(struct nvme_command));
	if (idx == 1 && ctrl->ctrl.ioccsz < 4)
		dev_warn(ctrl->ctrl.device,
			 "target reports IOCCSZ %u, below the minimum of 4: no in-capsule data\n",
			 ctrl->ctrl.ioccsz);
}

/**
 * rnvme_queue_port_active - is the RDMA port under this queue usable?
 * @queue: an allocated queue
 *
 * Connection teardown sends CM messages (DREQ) through the port. With the
 * link down that send fails, and Soft-RoCE then leaves its GSI QP in the
 * error state: no CM message is received on that device ever again. Callers
 * skip or defer the CM teardown while this returns false.
 *
 * The port state alone comes too late: closing the netdev first stops its
 * transmit path, the queue's work requests fail (and recovery starts), and
 * only then do the netdev notifiers mark the RDMA port down and the event
 * reach the port-state cache.  So the netdev the connection is bound to
 * (RoCE, iWARP) must be running and have carrier too.
 */
bool rnvme_queue_port_active(struct rnvme_queue *queue)
{
	struct rdma_cm_id *id = queue->cm_id;
	enum ib_port_state state;
	struct net_device *ndev;
	int ifindex;
	bool up;

	if (!test_bit(RNVME_Q_ALLOCATED, &queue->flags) || !id || !id->device)
		return true;
	if (!ib_get_cached_port_state(id->device, id->port_num, &state) &&
	    state != IB_PORT_ACTIVE)
		return false;

	ifindex = id->route.addr.dev_addr.bound_dev_if;
	if (!ifindex)
		return true;
	rcu_read_lock();
	ndev = dev_get_by_index_rcu(&init_net, ifindex);
	up = ndev && netif_running(ndev) && netif_carrier_ok(ndev);
	rcu_read_unlock();
	return up;
}

/**
 * rnvme_cq_unhandled - has the queue's CQ completions its handler has not run for?
 * @queue: a live queue with interrupts
 *
 * A pool CQ's processing is scheduled (irq_poll) when the device reports a
 * completion, and stays so until its handler has emptied the CQ: while it
 * is, the device has answered and the host has not looked yet (its CPU is
 * busy with other softirqs, another user of the CQ, a long irqs-off
 * section).  Read by the ACK watchdog, which the teardown stops before the
 * CQ goes.
 */
bool rnvme_cq_unhandled(struct rnvme_queue *queue)
{
	struct ib_cq *cq = READ_ONCE(queue->ib_cq);

	return cq && cq->poll_ctx == IB_POLL_SOFTIRQ &&
	       test_bit(IRQ_POLL_F_SCHED, &cq->iop.state);
}

static void __rnvme_stop_queue(struct rnvme_queue *queue)
{
	/* draining moves the QP to the error state locally, without a DREQ */
	if (rnvme_queue_port_active(queue))
		rdma_disconnect(queue->cm_id);
	ib_drain_qp(queue->qp);
	/* no completion comes any more: cancelling ends what waited for one */
	rnvme_drop_parked(queue);
	/* a batch whose last request never came is not posted any more */
	rnvme_chain_drop(queue);
}

/**
 * rnvme_stop_queue - flush a queue: nothing of its QP completes afterwards
 * @queue: any queue
 *
 * A queue that was started is drained whether or not its Fabrics Connect
 * succeeded: once this returns, no response can end one of its requests,
 * so the caller may end them itself (a timed-out Connect, cancelling).
 */
void rnvme_stop_queue(struct rnvme_queue *queue)
{
	if (!test_bit(RNVME_Q_ALLOCATED, &queue->flags))
		return;

	mutex_lock(&queue->queue_lock);
	clear_bit(RNVME_Q_LIVE, &queue->flags);
	if (test_and_clear_bit(RNVME_Q_POSTED, &queue->flags))
		__rnvme_stop_queue(queue);
	mutex_unlock(&queue->queue_lock);
}

/**
 * rnvme_start_queue - Fabrics Connect on a CM-connected queue
 * @ctrl: the controller
 * @idx:  queue index
 */
int rnvme_start_queue(struct rnvme_ctrl *ctrl, int idx)
{
	struct rnvme_queue *queue = &ctrl->queues[idx];
	int ret;

	/* the caller's tag set covers @idx now: responses can be looked up */
	ret = rnvme_post_recvs(queue);
	if (ret) {
		rnvme_note_cause(ctrl, "setup", "post-recv", idx);
		return ret;
	}
	set_bit(RNVME_Q_POSTED, &queue->flags);

	if (idx)
		ret = nvmf_connect_io_queue(&ctrl->ctrl, idx);
	else
		ret = nvmf_connect_admin_queue(&ctrl->ctrl);

	if (ret) {
		/* before the stop: its own disconnect is no target's doing */
		bool closed = test_bit(RNVME_Q_DISCONNECTED, &queue->flags);

		/* flush whatever the failed Connect left on the QP */
		rnvme_stop_queue(queue);
		/* a refusal was noted with its completion; this is the rest */
		if (test_bit(RNVME_Q_AUTH, &queue->flags)) {
			dev_info(ctrl->ctrl.device,
				 "queue %d: authentication failed (%d)\n",
				 idx, ret);
			rnvme_note_cause(ctrl, "authentication",
					 rnvme_auth_error_cause(ret,
								queue->auth_sends, closed),
					 idx);
		} else {
			dev_info(ctrl->ctrl.device,
				 "queue %d: Fabrics Connect failed (%d)\n",
				 idx, ret);
			rnvme_note_cause(ctrl, "fabrics-connect", ret > 0 ?
					 rnvme_connect_status_cause(ret, 0) :
					 "no-response", idx);
		}
		return ret;
	}

	/*
	 * Asked to authenticate the controller (dhchap_ctrl_secret), and the
	 * target never asked for authentication: nvme-core would go on with
	 * an unauthenticated controller, which the secret was given to rule
	 * out.
	 */
	if (!idx && ctrl->ctrl.opts->dhchap_ctrl_secret &&
	    !test_bit(RNVME_Q_AUTH, &queue->flags)) {
		dev_err(ctrl->ctrl.device,
			"the target did not ask for authentication: it cannot authenticate itself with dhchap_ctrl_secret; not connecting\n");
		rnvme_stop_queue(queue);
		rnvme_note_cause(ctrl, "authentication",
				 "ctrl-not-authenticated", idx);
		return -ECONNREFUSED;
	}

	set_bit(RNVME_Q_LIVE, &queue->flags);
	return 0;
}
