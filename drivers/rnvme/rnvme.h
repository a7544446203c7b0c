/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnvme: NVMe over Fabrics RDMA host transport - private definitions.
 *
 * Files by responsibility:
 *   main.c   module glue: parameters, module init and exit, transport
 *            registration
 *   ctrl.c   controller lifecycle: create, setup, teardown, reset, error
 *            recovery, reconnect, nvme_ctrl_ops; the controller list, RDMA
 *            device removal and port events
 *   queue.c  queue lifecycle and verbs resources (CQ, QP, MR pool, rings),
 *            the RDMA device cache
 *   cm.c     a queue's RDMA CM id from creation to destruction: the
 *            handshake and its wait, CM event handling, connection private
 *            data
 *   io.c     the I/O path: blk-mq ops, data mapping, memory registration
 *            (the MR pool's takers, REG_MR, LOCAL_INV), posting, completions,
 *            timeouts
 *   sysfs.c  the controller's sysfs attributes
 *   telemetry.c  per-queue counters and latency histograms (telemetry.h),
 *            the queue statistics' sums
 *   diag.c   what every layer records: the connect-attempt record, the
 *            last transport error
 *   logic.c  pure helpers with no hardware dependency (KUnit-testable)
 *   fault.c  race windows held open by the debug kernel's scenarios (built
 *            only with CONFIG_FAULT_INJECTION_DEBUG_FS)
 */
#ifndef RNVME_H
#define RNVME_H

#include <linux/blk-mq.h>
#include <linux/jump_label.h>
#include <linux/llist.h>
#include <linux/nvme.h>
#include <linux/nvme-rdma.h>
#include <linux/percpu.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <rnvme/compat.h>
#include "logic.h"
#include "telemetry.h"

/* Address and route resolution timeout handed to the RDMA CM, in ms. */
#define RNVME_CM_TIMEOUT_MS		3000

/*
 * Upper bound on waiting for one queue's CM handshake.  The CM itself times
 * out resolution and connection attempts; this only guarantees that a
 * misbehaving fabric can never hang `nvme connect` forever.
 */
#define RNVME_CM_WAIT_SECS		60

/*
 * Scatterlist entries kept in each request: a list of up to this many
 * segments uses them; a longer one takes a table from the sg pool.
 */
#define RNVME_INLINE_SG_CNT		2

/* fast-registration MRs a queue's pool starts with (rnvme_alloc_mrs()) */
#define RNVME_MR_POOL_START		8

/**
 * struct rnvme_qe - a DMA-mapped buffer posted to the QP
 * @data: kernel virtual address of the buffer
 * @dma:  its DMA address on the RDMA device
 * @cqe:  completion context; @cqe.done is called for the work request
 * @idx:  a receive buffer's place in its queue's ring
 */
struct rnvme_qe {
	void			*data;
	u64			dma;
	struct ib_cqe		cqe;
	u32			idx;
};

/**
 * struct rnvme_device - one RDMA device in use, shared by all its queues
 * @ibdev:         the verbs device
 * @pd:            protection domain for every QP and MR on @ibdev
 * @ref:           one reference per queue holding verbs resources
 * @entry:         link in the module-wide device list
 * @inline_segments: SGEs available for in-capsule data (max_send_sge - 1,
 *                 at most RNVME_MAX_INLINE_SEGMENTS)
 */
struct rnvme_device {
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	struct kref		ref;
	struct list_head	entry;
	unsigned int		inline_segments;
};

/* Queue state bits; every stop/free step tests-and-clears its own bit. */
enum rnvme_queue_flags {
	RNVME_Q_ALLOCATED	= 0,	/* CM id exists */
	RNVME_Q_TR_READY	= 1,	/* CQ, QP, MR pool and response ring exist */
	RNVME_Q_LIVE		= 2,	/* Fabrics Connect succeeded */
	RNVME_Q_DISCONNECTED	= 3,	/* the CM reported the connection gone */
	/*
	 * Receive buffers posted (rnvme_start_queue()): the QP holds work
	 * requests, and stopping the queue drains it.  Never set before the
	 * queue's tag set covers it, so a message from the target can only
	 * reach rnvme_process_rsp() when there is a tag set to look it up in.
	 */
	RNVME_Q_POSTED		= 4,
	/*
	 * The target's answer to this queue's Connect asked for in-band
	 * authentication: a failure from here to live is the authentication's
	 */
	RNVME_Q_AUTH		= 5,
	/* rnvme_mr_grow_work() is queued or running */
	RNVME_Q_MR_GROWING	= 6,
};

/* a receive buffer's work request, built once with the buffer */
struct rnvme_recv {
	struct ib_recv_wr	wr;
	struct ib_sge		sge;
};

/* a fast-registration MR of a queue's pool, and its link while free */
struct rnvme_mr {
	struct llist_node	node;
	struct ib_mr		*mr;
};

/**
 * struct rnvme_qstats - statistics any context of a queue may add to
 * @wr_posted:      work requests posted: SENDs, REG_MRs, LOCAL_INVs, receives,
 *                  and probes (sysfs wr_posted, make bench's WR/IO)
 * @sends_signaled: SENDs posted signaled, the AER's included
 *
 * One per CPU and queue: an admin or poll queue posts from several CPUs at
 * once without a lock, and a per-CPU add loses no count without an atomic
 * on the I/O path.  Counted after a successful post; zeroed with every
 * association (rnvme_init_queue()).  The SENDs of an interrupt-driven I/O
 * queue are counted in the queue's own locked_stats instead, with plain adds
 * under its post_lock.  Readers sum the CPUs' values and locked_stats
 * (rnvme_qstats_sum()).
 */
struct rnvme_qstats {
	u64	wr_posted;
	u64	sends_signaled;
	/* ib_post_send() calls on the send queue: doorbells */
	u64	send_posts;
};

/**
 * struct rnvme_queue - one NVMe queue pair carried by one RC QP
 * @rsp_ring:   @nr_rsp receive buffers for completion queue entries
 * @rsp_wr:     their receive work requests
 * @queue_size: entries in the NVMe queue (and receive buffers posted)
 * @capsule_len: size of a command capsule: the SQE plus in-capsule data
 * @ctrl:       owning controller
 * @dev:        RDMA device (cached; reference held while TR_READY)
 * @ib_cq:      completion queue (shared pool, or private for poll queues)
 * @cq_size:    CQ entries requested
 * @qp:         the RC queue pair
 * @flags:      enum rnvme_queue_flags
 * @cm_id:      RDMA CM identifier
 * @cm_error:   result of the CM handshake, reported through @cm_done
 * @cm_done:    completed when the handshake ends either way
 * @queue_lock: serializes stop against concurrent stops
 * @poll:       completions are reaped by blk-mq polling (no interrupts)
 * @pollers:    rnvme_poll() calls inside @ib_cq (see rnvme_fence_pollers)
 */
struct rnvme_queue {
	/*
	 * Set for every slot when ctrl->queues is allocated and never cleared:
	 * blk-mq was seen dispatching to a queue while a reconnect set it up
	 * again (15-hostile on 6.1; why it was not quiesced is not traced),
	 * and rnvme_queue_rq() reads these to refuse the command.
	 */
	struct rnvme_ctrl	*ctrl;
	/*
	 * Telemetry of this queue index (ctrl->tele[qid]), NULL until the
	 * controller has telemetry buffers; never NULL while rnvme_tele_key
	 * is on (telemetry.c), which every hook tests before using it
	 */
	struct rnvme_qtele	*tele;
	/* index in ctrl->queues (0: admin), kept to spare a division */
	int			qid;
	/* this queue index's statistics (ctrl->qstats + qid), never NULL */
	struct rnvme_qstats __percpu *stats;
	/* initialized with the controller: a stop may race a new setup */
	struct mutex		queue_lock;
	/*
	 * Kept across a queue's set-ups: a poller that found no CQ may still
	 * be between its increment and decrement when the queue is set up
	 */
	atomic_t		pollers;
	/* adds MRs to the pool when a request found none (rnvme_mr_get()) */
	struct work_struct	mr_grow;
	/* rnvme_init_queue() clears everything from here on */
	struct rnvme_qe		*rsp_ring;
	struct rnvme_recv	*rsp_wr;
	u32			nr_rsp;
	/*
	 * Interrupt-driven queue: the next buffer to complete; the answered
	 * ones of its stretch (rnvme_repost_recv()) are not posted again yet
	 */
	u32			recv_next;
	int			queue_size;
	size_t			capsule_len;
	struct rnvme_device	*dev;
	struct ib_cq		*ib_cq;
	int			cq_size;
	struct ib_qp		*qp;
	unsigned long		flags;
	struct rdma_cm_id	*cm_id;
	int			cm_error;
	struct completion	cm_done;
	bool			poll;
	/*
	 * telemetry counts this queue's successful answers inline: an
	 * interrupt-driven I/O queue (not polled, not the admin queue)
	 */
	bool			tele_plain;
	/* authentication messages (AUTH_SEND) posted while setting up */
	u8			auth_sends;
	/* ACK watchdog: signaled SENDs not completed yet, their completions */
	atomic_t		sends_pending;
	u32			send_acks;
	struct rnvme_ack_wd	ack_wd;
	/*
	 * SENDs posted (signaled or not), the newest known retired, the
	 * newest signaled one (or probe) posted, responses received.  On an
	 * interrupt-driven I/O queue SENDs take their number and are posted
	 * under @post_lock, so that numbers follow the send queue's order.
	 */
	atomic_t		send_seq;
	u32			retired_seq;
	u32			last_sig_seq;
	u32			rsp_count;
	/*
	 * Held to number and post a SEND on an interrupt-driven I/O queue and
	 * to post the watchdog's probe; also serializes taking MRs from
	 * @mr_free and updating the telemetry's submission counters
	 * (tele->sub).
	 */
	spinlock_t		post_lock;
	/* the statistics of an ordered queue's SENDs, under @post_lock */
	struct rnvme_qstats	locked_stats;
	/*
	 * Doorbell batching (io.c, "Batched posting"), under @post_lock: the
	 * requests blk-mq queued with more to come, numbered and counted but
	 * not posted yet, in send queue order through chain_next, their work
	 * requests linked; and those of a batch whose post failed that the
	 * poster ends once it has dropped the lock.
	 */
	struct rnvme_request	*chain;
	struct rnvme_request	*chain_tail;
	struct rnvme_request	*chain_failed;
	/*
	 * Answered requests waiting for their SEND to be retired, in the
	 * order they were answered (CQ context): a chain through park_next
	 * (no list_head: its debug checks are two calls per request), and
	 * where the next one is linked.
	 */
	struct rnvme_request	*parked;
	struct rnvme_request	**parked_tail;
	/*
	 * Statistics (sysfs) of the current association, each with one
	 * writer at a time (a plain add of an aligned u64: a lockless reader
	 * sees the value before or after it): requests parked (rnvme_park(),
	 * only in the CQ context of an interrupt-driven I/O queue, which
	 * handles one completion at a time) and watchdog probes posted
	 * (under @post_lock).
	 */
	u64			parked_reqs;
	u64			probes;
	/*
	 * Request SQE buffers are DMA-mapped once per association: a request
	 * whose sqe_gen equals @sqe_gen is mapped for this one and listed on
	 * @sqe_mapped (under @sqe_lock), to be unmapped with the QP.
	 */
	u32			sqe_gen;
	/* held to add to, remove from or empty @sqe_mapped and to renew @sqe_gen */
	spinlock_t		sqe_lock;
	struct list_head	sqe_mapped;
	/*
	 * The watchdog's probe (queue.c, rnvme_alloc_probe()), posted when
	 * nothing signaled is outstanding, from @probe_first (NULL: none on
	 * this queue): a signaled zero-length RDMA WRITE, which hears the
	 * path (@probe_hears), or on iWARP a signaled REG_MR + unsignaled
	 * LOCAL_INV of the private @probe_mr, which only retires SENDs.
	 */
	struct ib_cqe		probe_cqe;
	struct ib_send_wr	*probe_first;
	struct ib_rdma_wr	probe_write;
	struct ib_mr		*probe_mr;
	struct ib_reg_wr	probe_reg;
	struct ib_send_wr	probe_inv;
	bool			probe_hears;
	/*
	 * iWARP: a SEND completes once the local TCP stack has taken it, so a
	 * late completion is the target's pace (TCP flow control, READ
	 * responses queued ahead of it), not a silent path; the ACK watchdog
	 * leaves such a queue to keep-alive and TCP (rnvme_ack_wd_work()).
	 */
	bool			send_acks_local;
	unsigned long		probe_busy;
	u32			probe_seq;
	/*
	 * Fast-registration MRs, as many as requests have needed at once:
	 * @nr_mrs of them in @mrs (room for queue_size, one per request that
	 * can be in flight), each @mr_pages pages.  A free MR is on one of two
	 * lists: @mr_free, taken from only under @post_lock, and @mr_freed,
	 * where MRs are given back without a lock.  A taker that finds
	 * @mr_free empty moves all of @mr_freed there at once; with one taker
	 * at a time, llist_del_all() against concurrent llist_add() calls needs
	 * no ABA guard.
	 */
	struct rnvme_mr		*mrs;
	struct llist_node	*mr_free;
	struct llist_head	mr_freed;
	u32			nr_mrs;
	u32			mr_pages;
	/* the receive buffers need dma_sync calls around CPU access */
	bool			rsp_sync;
	/* the PD's local DMA lkey; in-capsule room (rnvme_inline_room()) */
	u32			lkey;
	u32			inline_room;
	u32			inline_segs;
	/* an interrupt-driven I/O queue: SENDs numbered under @post_lock */
	bool			ordered;
	/* one-segment data may use the PD's global rkey (register_always=0) */
	bool			global_rkey;
	struct ib_device	*ibdev;
};

/*
 * ib_post_send() with the caller's @bad (never NULL): the inline's fallback
 * to a pointer on the stack would cost the I/O path a stack-protector
 * canary, since the compiler cannot tell a member's address is not NULL.
 */
static __always_inline int rnvme_post_send_wrs(struct ib_qp *qp,
					       const struct ib_send_wr *wr,
					       const struct ib_send_wr **bad)
{
	return qp->device->ops.post_send(qp, wr, bad);
}

/*
 * Does a buffer mapped at @dma for @ibdev need dma_sync calls around CPU
 * access?  Not with a software device (virtual DMA) or a coherent one
 * without bounce buffers: the I/O path then skips them (one test).
 */
static inline bool rnvme_dma_needs_sync(struct ib_device *ibdev, u64 dma)
{
	return !ib_uses_virt_dma(ibdev) && dma_need_sync(ibdev->dma_device, dma);
}

/* a signaled SEND is about to be posted on @queue (undone if the post fails) */
static inline void rnvme_send_posted(struct rnvme_queue *queue)
{
	atomic_inc(&queue->sends_pending);
}

/*
 * A signaled SEND (or probe) of @queue with sequence number @seq completed:
 * it and every work request posted before it are done.
 */
static inline void rnvme_send_completed(struct rnvme_queue *queue, u32 seq)
{
	atomic_dec(&queue->sends_pending);
	/* only compared for change: a lost increment is harmless */
	data_race(queue->send_acks++);
	if (rnvme_seq_after(seq, READ_ONCE(queue->retired_seq)))
		WRITE_ONCE(queue->retired_seq, seq);
}

/* @n work requests were posted on @queue (any context) */
static __always_inline void rnvme_count_wrs(struct rnvme_queue *queue,
					    unsigned int n)
{
	this_cpu_add(queue->stats->wr_posted, n);
}

/*
 * A SEND was posted on @queue (any context): @nr_wrs work requests with it
 * (its REG_MR), signaled or not.  Without a branch; the pointer is read
 * once (the compiler cannot tell a per-CPU add from a store to the queue).
 */
static __always_inline void rnvme_count_send(struct rnvme_queue *queue,
					     unsigned int nr_wrs, bool signaled)
{
	struct rnvme_qstats __percpu *stats = queue->stats;

	this_cpu_add(stats->wr_posted, nr_wrs);
	this_cpu_add(stats->sends_signaled, (unsigned int)signaled);
	this_cpu_inc(stats->send_posts);
}

/**
 * struct rnvme_request - per-request transport state (blk-mq PDU)
 * @nreq:     nvme-core's part; must come first (nvme_req())
 * @mr:       fast-registration MR mapping the data, or NULL
 * @mr_slot:  its entry in the queue's pool (rnvme_queue.mrs)
 * @sqe:      the command capsule's SQE buffer
 * @result:   completion result, copied from the CQE
 * @status:   completion status, copied from the CQE
 * @ref:      completions still outstanding (a signaled send, and the
 *            response or invalidation) before the request may end; a
 *            count of events, not of the request's users (blk-mq owns it),
 *            so atomic_t: each event comes once (a second response for a
 *            command is refused before it counts, rnvme_process_rsp())
 * @sqe_gen:  association @sqe.dma was mapped for (rnvme_queue.sqe_gen)
 * @send_seq: sequence number of its SEND
 * @wait_retire: its SEND went unsignaled with in-capsule data or behind a
 *            REG_MR: the request may end only once a later signaled
 *            completion retired it
 * @sqe_node: link in its queue's list of mapped SQEs
 * @park_next: the next request in its queue's chain of requests waiting
 *            to be retired
 * @chain_next: the next request of its queue's batch not yet posted
 * @prev_sig_seq: its queue's last_sig_seq before its SEND was numbered
 *            (set only for a signaled SEND, the one that moves it)
 * @sge:      SGEs of the SEND: the SQE, then in-capsule data
 * @num_sge:  used entries of @sge
 * @reg_wr:   the REG_MR work request chained before the SEND
 * @send_wr:  the SEND, built once (rnvme_init_request()); per command only
 *            its SGE count and flags change
 * @bad_wr:   where posting reports a failed work request (unused)
 * @sqe_sync: @sqe.dma needs dma_sync calls around CPU access
 * @reg_cqe:  completion context of the REG_MR (set once)
 * @inv_cqe:  completion context of a LOCAL_INV
 * @queue:    the queue the request belongs to
 * @sgt:      the data scatterlist: @first_sgl, or a table of its own for a
 *            list longer than RNVME_INLINE_SG_CNT
 * @nents:    entries of @sgt handed to the DMA mapping
 * @last_sg:  blk-mq's cursor while it fills @sgt
 * @first_sgl: the request's own scatterlist entries (short lists)
 */
struct rnvme_request {
	struct nvme_request	nreq;
	struct ib_mr		*mr;
	struct rnvme_mr		*mr_slot;
	struct rnvme_qe		sqe;
	union nvme_result	result;
	__le16			status;
	bool			rsp_seen;
	atomic_t		ref;
	u32			sqe_gen;
	u32			send_seq;
	bool			wait_retire;
	struct list_head	sqe_node;
	struct rnvme_request	*park_next;
	struct rnvme_request	*chain_next;
	u32			prev_sig_seq;
	struct ib_sge		sge[1 + RNVME_MAX_INLINE_SEGMENTS];
	u32			num_sge;
	struct ib_reg_wr	reg_wr;
	struct ib_send_wr	send_wr;
	const struct ib_send_wr	*bad_wr;
	bool			sqe_sync;
	struct ib_cqe		reg_cqe;
	struct ib_cqe		inv_cqe;
	struct rnvme_queue	*queue;
	struct sg_table		sgt;
	int			nents;
	struct scatterlist	*last_sg;
	struct scatterlist	first_sgl[RNVME_INLINE_SG_CNT];
	/*
	 * telemetry (rnvme_tele_arm()): started at tele_start, of class
	 * tele_class until counted ended, then RNVME_TC_UNARMED
	 */
	u64			tele_start;
	u8			tele_class;
	/*
	 * held by the failover hold (ctrl.c): in flight, data unmapped, on
	 * rnvme_ctrl.held through @held_node until the hold ends
	 */
	bool			held;
	struct list_head	held_node;
};

/**
 * struct rnvme_stats - what happened to a controller, for sysfs
 * @error_recoveries:   times the association was lost while live
 * @reconnect_attempts: reconnect attempts (successful or not)
 * @reconnects:         successful reconnects
 * @error_seq:          bumped by every rnvme_record_error()
 * @lock:               protects @last_error, @last_error_time and the
 *                      controller's @cause (struct rnvme_ctrl)
 * @last_error:         the latest transport error, as text
 * @last_error_time:    when it happened (seconds since the epoch), 0: never
 * @next_reconnect:     jiffies of the next scheduled attempt
 * @outage_start:       jiffies when the current outage began
 */
struct rnvme_stats {
	atomic_t		error_recoveries;
	atomic_t		reconnect_attempts;
	atomic_t		reconnects;
	atomic_t		error_seq;
	/* how long the last outage lasted, loss to reconnected, in ms */
	atomic_t		last_outage_ms;
	/* commands the failover hold kept, in all; how long the last hold was */
	atomic_t		held_commands;
	atomic_t		last_hold_ms;
	/* holds ended early by a Cross-Controller Reset of the lost association */
	atomic_t		ccr_resets;
	/* protects @last_error, @last_error_time and rnvme_ctrl.cause */
	spinlock_t		lock;
	char			last_error[96];
	time64_t		last_error_time;
	unsigned long		next_reconnect;
	unsigned long		outage_start;
};

/**
 * struct rnvme_cause - why the current connect attempt failed
 * @stage:       NULL while nothing failed; then a token: options, address,
 *               route, cm, fabrics-connect, controller, grant, setup
 * @cause:       a token naming the failure within the stage
 * @qid:         the queue it happened on, -1 when none
 * @cm_status:   status of the CM event (reject reason or -errno), 0 if none
 * @rej_sts:     NVMe/RDMA reject status the target sent, -1 if none
 * @nvme_status: Fabrics Connect status the target sent, -1 if none
 * @nvme_result: that completion's result (the invalid parameter's offset)
 *
 * The first failure of an attempt is its cause: what fails afterwards is
 * the unwinding.  Written under stats.lock; printed as one record
 * (rnvme_emit_attempt) when the attempt ends.
 */
struct rnvme_cause {
	const char	*stage;
	const char	*cause;
	int		qid;
	int		cm_status;
	int		rej_sts;
	int		nvme_status;
	u32		nvme_result;
};

/**
 * struct rnvme_ctrl - an NVMe over RDMA controller
 * @queues:         queue 0 is the admin queue, then I/O queues
 * @tag_set:        I/O tag set (allocated on first connect, kept after)
 * @admin_tag_set:  admin tag set
 * @err_work:       error recovery (RESETTING -> CONNECTING)
 * @reconnect_work: delayed reconnect attempt
 * @async_event_sqe: preallocated SQE for Asynchronous Event Requests
 * @list:           link in the module's controller list; empty until the
 *                  controller is fully created
 * @device:         RDMA device of the admin queue (NULL while it has none)
 * @ibdev:          its verbs device, compared (never dereferenced) on
 *                  device removal
 * @max_fr_pages:   pages one fast-registration MR maps
 * @addr:           target address
 * @src_addr:       host address (host_traddr), if given
 * @use_inline_data: the target accepts in-capsule data on I/O queues
 * @io_queues:      I/O queues per blk-mq map type (default, read, poll)
 * @rdma_dev_name:  name of the RDMA device of the last association
 * @stats:          counters and last error, shown in sysfs
 * @ctrl:           nvme-core's controller
 */
struct rnvme_ctrl {
	struct rnvme_queue	*queues;
	struct blk_mq_tag_set	tag_set;
	struct blk_mq_tag_set	admin_tag_set;
	/* held to allocate, resize or remove a tag set, and to walk one */
	struct mutex		tagset_lock;
	/* the I/O queues' Connect commands (ctrl.c, rnvme_alloc_connect_set) */
	struct blk_mq_tag_set	connect_set;
	struct work_struct	err_work;
	struct delayed_work	reconnect_work;
	struct delayed_work	ack_wd_work;
	struct rnvme_qe		async_event_sqe;
	struct list_head	list;
	/* on the claim list from the duplicate check until created */
	struct list_head	claim;
	struct rnvme_device	*device;
	struct ib_device	*ibdev;
	u32			max_fr_pages;
	struct sockaddr_storage	addr;
	struct sockaddr_storage	src_addr;
	bool			use_inline_data;
	/* error recovery kept the queues' CM ids: their RDMA port was down */
	bool			cm_deferred;
	/* its RDMA device is being unregistered: nothing reaches the target */
	bool			dev_removed;
	/* bound of each queue's CM handshake in the current (re)connect */
	u32			cm_wait_ms;
	u32			io_queues[HCTX_MAX_TYPES];
	char			rdma_dev_name[IB_DEVICE_NAME_MAX];
	/* port of ibdev the admin queue last used (port events match it) */
	u32			rdma_port;
	struct rnvme_stats	stats;
	/* the current (re)connect attempt's failure, and its number */
	struct rnvme_cause	cause;
	u64			attempt_id;
	/*
	 * Telemetry per queue index, @tele_nr of them (the queue slots):
	 * NULL until telemetry is on while the controller exists, then kept
	 * until it is freed; written under the telemetry's mutex, read
	 * locklessly with acquire.  @tele_entry: on telemetry's controller
	 * list from rnvme_tele_register() to rnvme_tele_unregister().
	 */
	struct rnvme_qtele	*tele;
	u32			tele_nr;
	struct list_head	tele_entry;
	/* statistics per queue index (rnvme_queue.stats), per CPU */
	struct rnvme_qstats __percpu *qstats;
	/*
	 * The failover hold (ctrl.c): commands the lost controller may still
	 * execute, on @held (under @held_lock) until @hold_work ends them at
	 * @hold_until (jiffies; @hold_start: when the first was held), the
	 * current association's hold being @hold_ms (from its keep-alive
	 * timeout and its Command Quiesce Time, @cqt_ms); @nr_held_new counts
	 * those held by the teardown under way, the only ones that may move
	 * @hold_until; @nr_unfenced the lost associations with commands on
	 * @held that no Cross-Controller Reset has fenced yet; @hold_wait
	 * wakes when @held empties.
	 */
	spinlock_t		held_lock;
	struct list_head	held;
	unsigned int		nr_held;
	unsigned int		nr_held_new;
	unsigned int		nr_unfenced;
	struct delayed_work	hold_work;
	wait_queue_head_t	hold_wait;
	unsigned long		hold_start;
	unsigned long		hold_until;
	u32			hold_ms;
	u16			cqt_ms;
	/*
	 * Cross-Controller Reset (ctrl.c): the current association's identity
	 * (@ccr_self, from its Identify Controller) and the lost one's
	 * (@ccr_lost), which @ccr_work asks a live controller of the
	 * subsystem to reset, ending the hold early
	 */
	struct rnvme_ccr_target	ccr_self;
	struct rnvme_ccr_target	ccr_lost;
	struct work_struct	ccr_work;
	struct nvme_ctrl	ctrl;
};

static inline struct rnvme_ctrl *to_rnvme_ctrl(struct nvme_ctrl *ctrl)
{
	return container_of(ctrl, struct rnvme_ctrl, ctrl);
}

static inline int rnvme_queue_idx(struct rnvme_queue *queue)
{
	return queue->qid;
}

/**
 * rnvme_error_recovery - start error recovery for a live controller
 * @ctrl: the controller whose transport failed
 *
 * Safe from any context and any number of times: only the first caller
 * moves the controller out of LIVE and queues the work, whose handler
 * (ctrl.c) tears the association down and reconnects.
 */
static inline void rnvme_error_recovery(struct rnvme_ctrl *ctrl)
{
	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_RESETTING))
		return;

	ctrl->stats.outage_start = jiffies;
	atomic_inc(&ctrl->stats.error_recoveries);
	dev_warn(ctrl->ctrl.device, "starting error recovery\n");
	queue_work(nvme_reset_wq, &ctrl->err_work);
}

/* main.c */
extern bool rnvme_register_always;
extern bool rnvme_failover_hold;
extern char rnvme_transport_name[];
extern unsigned int rnvme_reconnect_backoff_max;
extern unsigned int rnvme_reconnect_jitter;
extern int rnvme_ack_timeout;
extern unsigned int rnvme_retry_count;
extern unsigned int rnvme_ack_watchdog_ms;
/*
 * A parameter's jump label follows its value (called from the parameter's
 * set callback; sysfs writes of one parameter are serialized by
 * kernel_param_lock).
 */
static inline void rnvme_key_follow(struct static_key_false *key, bool on)
{
	if (on)
		static_branch_enable(key);
	else
		static_branch_disable(key);
}

#ifdef RNVME_BENCH_HOOKS
extern unsigned int rnvme_test_extra_work;
DECLARE_STATIC_KEY_FALSE(rnvme_test_work_key);
#endif

/* ctrl.c */
int rnvme_create_check(struct nvmf_ctrl_options *opts);
struct nvme_ctrl *rnvme_create_ctrl(struct device *dev,
				    struct nvmf_ctrl_options *opts);
void rnvme_ack_wd_arm_live(void);
void rnvme_delete_ctrls(struct ib_device *ibdev);
int rnvme_ib_client_init(void);
void rnvme_ib_client_exit(void);

/* queue.c */
void rnvme_init_queue(struct rnvme_ctrl *ctrl, int idx, size_t queue_size);
int rnvme_start_queue(struct rnvme_ctrl *ctrl, int idx);
void rnvme_stop_queue(struct rnvme_queue *queue);
bool rnvme_queue_port_active(struct rnvme_queue *queue);
bool rnvme_cq_unhandled(struct rnvme_queue *queue);
int rnvme_create_queue_ib(struct rnvme_queue *queue);
void rnvme_destroy_queue_ib(struct rnvme_queue *queue);

int rnvme_alloc_qe(struct ib_device *ibdev, struct rnvme_qe *qe, size_t size,
		   enum dma_data_direction dir);
void rnvme_free_qe(struct ib_device *ibdev, struct rnvme_qe *qe, size_t size,
		   enum dma_data_direction dir);
u32 rnvme_max_fr_pages(struct ib_device *ibdev);
void rnvme_mr_pool_empty(struct rnvme_queue *queue);
void rnvme_mr_grow_work(struct work_struct *work);
int rnvme_map_sqe(struct rnvme_queue *queue, struct rnvme_request *req);
void rnvme_unmap_sqe(struct rnvme_request *req);
int rnvme_post_probe(struct rnvme_queue *queue);

/* cm.c */
int rnvme_alloc_queue(struct rnvme_ctrl *ctrl, int idx, size_t queue_size);
void rnvme_free_queue(struct rnvme_queue *queue);

/* io.c */
extern const struct blk_mq_ops rnvme_mq_ops;
extern const struct blk_mq_ops rnvme_admin_mq_ops;
void rnvme_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void rnvme_recv_any_done(struct ib_cq *cq, struct ib_wc *wc);
int rnvme_post_recvs(struct rnvme_queue *queue);
void rnvme_submit_async_event(struct nvme_ctrl *nctrl);
void rnvme_wr_error(struct ib_cq *cq, struct ib_wc *wc, const char *op);
void rnvme_abort_queue_requests(struct rnvme_queue *queue);
void rnvme_unpark(struct rnvme_queue *queue);
void rnvme_drop_parked(struct rnvme_queue *queue);
void rnvme_chain_drop(struct rnvme_queue *queue);
void rnvme_chain_flush(struct rnvme_queue *queue);
void rnvme_hold_request(struct request *rq);
void rnvme_io_init(void);
void rnvme_io_exit(void);

/*
 * Race windows a debug kernel's scenario holds open (fault.c): compiled only
 * with CONFIG_FAULT_INJECTION_DEBUG_FS, empty otherwise.
 */
enum rnvme_fi_point {
	/* a request completed by its timeout, before it ends */
	RNVME_FI_TIMEOUT_COMPLETE,
	/* a poll queue's response, at its duplicate check */
	RNVME_FI_RSP_CHECK,
	/* an I/O queue's SEND completion, before it is counted */
	RNVME_FI_CQ_STALL,
	/* a batch's post: the provider takes only its first half */
	RNVME_FI_POST_CHAIN,
	/*
	 * an I/O queue's request queued as if more followed, and then neither
	 * a last request nor commit_rqs (blk-mq's plug flushed into a queue
	 * quiesced part way)
	 */
	RNVME_FI_CHAIN_OPEN,
	RNVME_FI_NR,
};

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
void rnvme_fi_hold(enum rnvme_fi_point point);
bool rnvme_fi_fail(enum rnvme_fi_point point);
void rnvme_fi_init(void);
void rnvme_fi_exit(void);
#else
static inline void rnvme_fi_hold(enum rnvme_fi_point point) {}
static inline bool rnvme_fi_fail(enum rnvme_fi_point point) { return false; }
static inline void rnvme_fi_init(void) {}
static inline void rnvme_fi_exit(void) {}
#endif

/* sysfs.c */
extern const struct attribute_group *rnvme_ctrl_attr_groups[];

/*
 * diag.c: what any layer records about a controller.  The current connect
 * attempt's cause (the first failure noted between rnvme_cause_begin() and
 * rnvme_emit_attempt(), which logs the attempt's record) and the latest
 * transport error (sysfs last_error).  Notes and errors: any context.
 */
void rnvme_cause_begin(struct rnvme_ctrl *ctrl);
void rnvme_note_cause(struct rnvme_ctrl *ctrl, const char *stage,
		      const char *cause, int qid);
void rnvme_note_cm_cause(struct rnvme_ctrl *ctrl, const char *stage,
			 const char *cause, int qid, int cm_status, int rej_sts);
void rnvme_note_setup_command(struct rnvme_queue *queue, struct request *rq);
void rnvme_note_setup_response(struct rnvme_queue *queue, struct request *rq,
			       const struct nvme_completion *cqe);
void rnvme_emit_attempt(struct rnvme_ctrl *ctrl, const char *kind, int ret);
void rnvme_emit_refused(const char *cause, int ret);
__printf(2, 3) void rnvme_record_error(struct rnvme_ctrl *ctrl,
				       const char *fmt, ...);
__printf(3, 4) void rnvme_record_attempt_error(struct rnvme_ctrl *ctrl, int seq,
					       const char *fmt, ...);

/* telemetry.c */
extern RNVME_BIN_ATTR_CONST struct bin_attribute *RNVME_BIN_ATTR_CONST
rnvme_tele_bin_attrs[];
extern struct device_attribute dev_attr_telemetry_reset;
extern struct device_attribute dev_attr_telemetry_layout;
int rnvme_tele_register(struct rnvme_ctrl *ctrl);
void rnvme_tele_unregister(struct rnvme_ctrl *ctrl);
void rnvme_tele_rejected(struct rnvme_queue *queue);
void rnvme_qstats_sum(struct rnvme_queue *queue, struct rnvme_qstats *sum);

/*
 * The I/O path's telemetry hooks.  Each tests the telemetry parameter's
 * jump label first (on by default), so with telemetry off the I/O path
 * jumps over them (and arming stores false).  The common case is inline:
 * a successful answer on an interrupt-driven I/O queue is two additions;
 * errors, admin commands, poll queues and the host's own ends go out of
 * line.  With the label on, every queue has its queue->tele (telemetry.c):
 * no hook tests it for NULL.
 *
 * Latency runs from the block layer's start stamp of the request
 * (rq->start_time_ns, which blk-mq takes anyway while the queue keeps I/O
 * statistics, as nvme namespaces do by default: the same start iostat's
 * await counts from) to the answer; a request without one (statistics
 * off) is stamped when it is posted.  The answer's clock is read once per
 * completion batch (io.c), or per answer when it ends alone.
 */
DECLARE_STATIC_KEY_TRUE(rnvme_tele_key);
void rnvme_tele_wc(struct rnvme_queue *queue, enum ib_wc_status status);
void rnvme_tele_submitted(struct rnvme_queue *queue, struct rnvme_request *req,
			  bool locked, u64 d);
void rnvme_tele_completed(struct rnvme_queue *queue, struct rnvme_request *req,
			  u32 class, u16 status, u64 ns);
void rnvme_tele_complete_rq(struct rnvme_queue *queue, struct request *rq);
void rnvme_tele_requeued(struct rnvme_queue *queue);

/*
 * a successful work completion of @queue, in its CQ context; @ordered: the
 * caller knows @queue is an interrupt-driven I/O queue (not polled)
 */
static __always_inline void rnvme_tele_wc_ok(struct rnvme_queue *queue,
					     const bool ordered)
{
	if (!static_branch_likely(&rnvme_tele_key))
		return;
	if (ordered || likely(!queue->poll))
		queue->tele->cq.wc[IB_WC_SUCCESS].n++;
	else
		atomic64_inc(&queue->tele->cq.wc[IB_WC_SUCCESS].a);
}

/* a failed work completion of @queue, in its CQ context */
static __always_inline void rnvme_tele_wc_failed(struct rnvme_queue *queue,
						 enum ib_wc_status status)
{
	if (static_branch_likely(&rnvme_tele_key))
		rnvme_tele_wc(queue, status);
}

/*
 * queue_rq: @rq was prepared before (nvme_setup_cmd() sets RQF_DONTPREP), so
 * blk-mq dispatches it again (a retry, a resource requeue): counted here, out
 * of line, as it is rare.  Two instructions on every dispatch.
 */
static __always_inline void rnvme_tele_dispatched(struct rnvme_queue *queue,
						  struct request *rq)
{
	if (static_branch_likely(&rnvme_tele_key) &&
	    unlikely(rq->rq_flags & RQF_DONTPREP))
		rnvme_tele_requeued(queue);
}

/* a command's class: REQ_OP_READ is 0, REQ_OP_WRITE 1, the rest "other" */
static __always_inline u32 rnvme_tele_class(struct request *rq)
{
	return min_t(u32, req_op(rq), RNVME_TC_OTHER);
}

/*
 * A command with its data mapped is about to be posted: note what it is.
 * @kind: how its data reaches the target (RNVME_TD_*, what rnvme_map_data()
 * returned).  @locked: the caller holds @queue's post_lock (an
 * interrupt-driven I/O queue), so the post is counted here, from the values
 * at hand; otherwise __rnvme_submit() counts it (rnvme_tele_submitted()).
 */
static __always_inline void rnvme_tele_arm(struct rnvme_queue *queue,
					   struct request *rq,
					   struct rnvme_request *req,
					   u32 kind, const bool locked)
{
	struct rnvme_tele_sub *s;
	u32 class;
	u64 start;

	if (!static_branch_likely(&rnvme_tele_key)) {
		req->tele_class = RNVME_TC_UNARMED;
		return;
	}
	class = rnvme_tele_class(rq);
	req->tele_class = class;
	start = rq->start_time_ns;
	if (unlikely(!start))
		start = ktime_get_ns();
	req->tele_start = start;
	if (!locked)
		return;
	/* counted before the post: the completion may come at once */
	s = &queue->tele->sub;
	s->submitted[class].n++;
	s->bytes[class].n += blk_rq_payload_bytes(rq);
	s->data[kind].n++;
}

/*
 * Is @req's post counted?  Tested at each site: a flag kept across the post
 * would cost a register.
 */
static __always_inline bool rnvme_tele_counting(struct rnvme_request *req)
{
	/*
	 * Armed only while the label was on (rnvme_tele_arm()), and the
	 * buffers outlive any switch: the class alone decides.
	 */
	return req->tele_class != RNVME_TC_UNARMED;
}

/*
 * The target answered a counted @req (rnvme_tele_counting()) with @status;
 * @now: the clock at (or shortly before) the answer, ktime_get_ns(), and
 * not before the request's start.  In @queue's CQ context.  @plain: the
 * caller knows @queue is an interrupt-driven I/O queue (queue->tele_plain).
 */
static __always_inline void rnvme_tele_answer(struct rnvme_queue *queue,
					      struct rnvme_request *req,
					      __le16 status, u64 now,
					      const bool plain)
{
	struct rnvme_tele_cq *c = &queue->tele->cq;
	u32 k = req->tele_class;
	u64 ns;

	ns = now - req->tele_start;
	req->tele_class = RNVME_TC_UNARMED;
	/* the status field without the phase tag */
	if (unlikely((!plain && !queue->tele_plain) ||
		     (status & ~cpu_to_le16(1)))) {
		rnvme_tele_completed(queue, req, k, le16_to_cpu(status) >> 1,
				     ns);
		return;
	}
	c->lat_sum_ns[k].n += ns;
	c->hist[k][rnvme_hist_bucket(ns)].n++;
}

/* the target answered @req with @status, which ends it alone */
static __always_inline void rnvme_tele_answered(struct rnvme_request *req,
						__le16 status)
{
	if (rnvme_tele_counting(req))
		rnvme_tele_answer(req->queue, req, status, ktime_get_ns(),
				  false);
}

/*
 * blk-mq completes @rq (@req its PDU), answered or ended by the host: only
 * a command still armed (ended without an answer) or one ending with an
 * error (a failover) is counted here.
 */
static __always_inline void rnvme_tele_complete(struct rnvme_request *req,
						struct request *rq)
{
	if (unlikely(rnvme_tele_counting(req) || nvme_req(rq)->status) &&
	    static_branch_likely(&rnvme_tele_key))
		rnvme_tele_complete_rq(req->queue, rq);
}

#endif /* RNVME_H */
