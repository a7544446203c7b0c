// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme queues: the RDMA CM id, the verbs resources behind it (CQ, QP, MR
 * pool, receive ring) and the Fabrics Connect that makes a queue live.
 * Every stop and free step is guarded by its own state bit, so teardown can
 * run from any point of a failed setup and any number of times.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/mr_pool.h>
#include "rnvme.h"

/*
 * Send queue entries per command: REG_MR + SEND + LOCAL_INV.  The CQ also
 * takes one receive completion per command.
 */
#define RNVME_SEND_WR_FACTOR	3
#define RNVME_CQ_FACTOR		(RNVME_SEND_WR_FACTOR + 1)

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

static void rnvme_qp_event(struct ib_event *event, void *context)
{
	pr_debug("QP event %s (%d)\n", ib_event_msg(event->event), event->event);
}

static int rnvme_create_qp(struct rnvme_queue *queue)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.event_handler = rnvme_qp_event;
	attr.qp_context = queue;
	/* +1 for the drain work request */
	attr.cap.max_send_wr = RNVME_SEND_WR_FACTOR * queue->queue_size + 1;
	attr.cap.max_recv_wr = queue->queue_size + 1;
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

	queue->cq_size = RNVME_CQ_FACTOR * queue->queue_size + 1;
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
 * Take the CQ away from pollers (rnvme_poll reads it under RCU) and wait
 * until none is left inside it.  Everything a completion handler touches
 * (the QP, the MRs, the receive ring) may be freed only after this.
 */
static struct ib_cq *rnvme_fence_pollers(struct rnvme_queue *queue)
{
	struct ib_cq *cq = queue->ib_cq;

	WRITE_ONCE(queue->ib_cq, NULL);
	if (queue->poll)
		synchronize_rcu();
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
	/* a new QP: no SEND outstanding (the last one's were drained) */
	atomic_set(&queue->sends_pending, 0);
	queue->ack_wd = (struct rnvme_ack_wd){};

	ret = rnvme_create_cq(queue, ibdev);
	if (ret)
		goto out_put_dev;

	ret = rnvme_create_qp(queue);
	if (ret)
		goto out_destroy_cq;

	queue->rsp_ring = rnvme_alloc_ring(ibdev, queue->queue_size,
					   sizeof(struct nvme_completion),
					   DMA_FROM_DEVICE);
	if (!queue->rsp_ring) {
		ret = -ENOMEM;
		goto out_destroy_qp;
	}

	/* one more page: the data may start in the middle of one */
	pages_per_mr = rnvme_max_fr_pages(ibdev) + 1;
	ret = ib_mr_pool_init(queue->qp, &queue->qp->rdma_mrs,
			      queue->queue_size, IB_MR_TYPE_MEM_REG,
			      pages_per_mr, 0);
	if (ret) {
		dev_err(&ibdev->dev,
			"rnvme: queue %d: allocating %d MRs of %u pages failed (%d)\n",
			rnvme_queue_idx(queue), queue->queue_size,
			pages_per_mr, ret);
		goto out_free_ring;
	}

	set_bit(RNVME_Q_TR_READY, &queue->flags);
	return 0;

out_free_ring:
	rnvme_free_ring(ibdev, queue->rsp_ring, queue->queue_size,
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
	ib_mr_pool_destroy(queue->qp, &queue->qp->rdma_mrs);
	/* the CM id is already gone: destroy the QP directly */
	ib_destroy_qp(queue->qp);
	queue->qp = NULL;
	rnvme_free_cq(queue, cq);
	rnvme_free_ring(ibdev, queue->rsp_ring, queue->queue_size,
			sizeof(struct nvme_completion), DMA_FROM_DEVICE);
	queue->rsp_ring = NULL;
	rnvme_device_put(queue->dev);
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

	memset(queue, 0, sizeof(*queue));
	mutex_init(&queue->queue_lock);
	init_completion(&queue->cm_done);
	queue->ctrl = ctrl;
	queue->queue_size = queue_size;
	queue->poll = rnvme_is_poll_queue(ctrl->io_queues, idx);
	/* I/O capsules may carry data; the admin queue's never do */
	queue->capsule_len = rnvme_capsule_len(idx, ctrl->ctrl.ioccsz);
	if (idx == 1 && ctrl->ctrl.ioccsz < 4)
		dev_warn(ctrl->ctrl.device,
			 "target reports IOCCSZ %u, below the minimum of 4: no in-capsule data\n",
			 ctrl->ctrl.ioccsz);

	queue->cm_id = rdma_create_id(&init_net, rnvme_cm_handler, queue,
				      RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(queue->cm_id)) {
		ret = PTR_ERR(queue->cm_id);
		dev_info(ctrl->ctrl.device,
			 "queue %d: failed to create CM id (%d)\n", idx, ret);
		goto out_destroy_mutex;
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
		goto out_destroy_cm_id;
	}

	ret = rnvme_wait_for_cm(queue);
	if (ret) {
		dev_info(ctrl->ctrl.device,
			 "queue %d: RDMA connection to %pISpc failed (%d)\n",
			 idx, &ctrl->addr, ret);
		goto out_destroy_cm_id;
	}

	set_bit(RNVME_Q_ALLOCATED, &queue->flags);
	return 0;

out_destroy_cm_id:
	rdma_destroy_id(queue->cm_id);
	rnvme_destroy_queue_ib(queue);
out_destroy_mutex:
	mutex_destroy(&queue->queue_lock);
	return ret;
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

static void __rnvme_stop_queue(struct rnvme_queue *queue)
{
	/* draining moves the QP to the error state locally, without a DREQ */
	if (rnvme_queue_port_active(queue))
		rdma_disconnect(queue->cm_id);
	ib_drain_qp(queue->qp);
}

void rnvme_stop_queue(struct rnvme_queue *queue)
{
	if (!test_bit(RNVME_Q_ALLOCATED, &queue->flags))
		return;

	mutex_lock(&queue->queue_lock);
	if (test_and_clear_bit(RNVME_Q_LIVE, &queue->flags))
		__rnvme_stop_queue(queue);
	mutex_unlock(&queue->queue_lock);
}

void rnvme_free_queue(struct rnvme_queue *queue)
{
	if (!test_and_clear_bit(RNVME_Q_ALLOCATED, &queue->flags))
		return;

	rdma_destroy_id(queue->cm_id);
	rnvme_destroy_queue_ib(queue);
	mutex_destroy(&queue->queue_lock);
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

	if (idx)
		ret = nvmf_connect_io_queue(&ctrl->ctrl, idx);
	else
		ret = nvmf_connect_admin_queue(&ctrl->ctrl);

	if (ret) {
		/* flush whatever the failed Connect left on the QP */
		if (test_bit(RNVME_Q_ALLOCATED, &queue->flags))
			__rnvme_stop_queue(queue);
		dev_info(ctrl->ctrl.device,
			 "queue %d: Fabrics Connect failed (%d)\n", idx, ret);
		return ret;
	}

	set_bit(RNVME_Q_LIVE, &queue->flags);
	return 0;
}
