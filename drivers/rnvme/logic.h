/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnvme pure logic: no verbs, no locks, no allocation.  Everything here is
 * callable from a KUnit suite without RDMA hardware.
 */
#ifndef RNVME_LOGIC_H
#define RNVME_LOGIC_H

#include <linux/bitops.h>
#include <linux/types.h>
#include <linux/blk-mq.h>
#include <linux/nvme.h>
#include <linux/nvme-rdma.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <linux/string.h>
#include <rnvme/compat.h>

/* Longest transport name rnvme registers (fits nvme-core's sysfs output). */
#define RNVME_TRANSPORT_NAME_MAX	16

/* Identify Controller SGLS bits a host transport cares about. */
#define RNVME_SGLS_KEYED		BIT(2)		/* keyed SGL data blocks */
#define RNVME_SGLS_OFFSET		BIT(20)		/* in-capsule data (offset) */

/**
 * struct rnvme_queue_want - I/O queue counts asked for in the options
 * @nr_io:    nr_io_queues (read queues when @nr_write is set)
 * @nr_write: nr_write_queues (0: reads and writes share queues)
 * @nr_poll:  nr_poll_queues
 */
struct rnvme_queue_want {
	u32 nr_io;
	u32 nr_write;
	u32 nr_poll;
};

u32 rnvme_io_queues_wanted(const struct rnvme_queue_want *want, u32 cpus);
void rnvme_split_io_queues(const struct rnvme_queue_want *want, u32 cpus,
			   u32 granted, u32 io_queues[HCTX_MAX_TYPES]);
bool rnvme_is_poll_queue(const u32 io_queues[HCTX_MAX_TYPES], int qid);
unsigned int rnvme_tag_set_maps(u32 nr_poll);

u16 rnvme_clamp_sqsize(u16 sqsize, u16 maxcmd, u16 max_queue_size);
u32 rnvme_send_queue_depth(u32 queue_size, u32 cpus);
u32 rnvme_recv_ring_size(u32 queue_size, bool poll);
u32 rnvme_queue_size_for_device(u32 want, u32 cpus, int max_qp_wr,
				int max_cqe);
bool rnvme_sqsize_fits_tag_set(u16 sqsize, u32 tag_depth);

void rnvme_cm_req_init(struct nvme_rdma_cm_req *req, u16 qid, u16 queue_size);
const char *rnvme_cm_rej_msg(u16 status);
const char *rnvme_cm_rep_problem(const void *pd, u8 len, u16 queue_size);
bool rnvme_soft_rdma(enum rdma_driver_id driver_id);

/* Tokens of the connect-attempt record (Documentation/rnvme.rst). */
const char *rnvme_cm_rej_token(u16 status);
const char *rnvme_connect_status_cause(u16 status, u32 result);
const char *rnvme_auth_error_cause(int err, unsigned int sends, bool closed);
const char *rnvme_addr_error_cause(int err);
const char *rnvme_cm_reject_cause(int status, bool nvme_data);

/* the I/O path's helpers: inline, they are on every command */
/* A command without data still carries a keyed SGL: all zeroes. */
static inline void rnvme_sgl_null(struct nvme_command *c)
{
	struct nvme_keyed_sgl_desc *sg = &c->common.dptr.ksgl;

	sg->addr = 0;
	put_unaligned_le24(0, sg->length);
	put_unaligned_le32(0, sg->key);
	sg->type = NVME_KEY_SGL_FMT_DATA_DESC << 4;
}

/**
 * rnvme_sgl_keyed - describe data the target reaches by RDMA READ/WRITE
 * @c:          the command
 * @addr:       I/O virtual address of the registered region
 * @len:        its length (24 bits on the wire)
 * @key:        the rkey
 * @invalidate: ask the target to invalidate @key with its response
 */
static inline void rnvme_sgl_keyed(struct nvme_command *c, u64 addr, u32 len,
				   u32 key, bool invalidate)
{
	struct nvme_keyed_sgl_desc *sg = &c->common.dptr.ksgl;
	u64 type = NVME_KEY_SGL_FMT_DATA_DESC << 4;

	BUILD_BUG_ON(offsetof(struct nvme_keyed_sgl_desc, key) != 11 ||
		     offsetof(struct nvme_keyed_sgl_desc, type) != 15);
	if (invalidate)
		type |= NVME_SGL_FMT_INVALIDATE;
	sg->addr = cpu_to_le64(addr);
	/* length (24 bits), key and type follow the address: one store */
	put_unaligned_le64((len & 0xffffff) | (u64)key << 24 | type << 56,
			   sg->length);
}

/**
 * rnvme_sgl_inline - describe data carried in the command capsule
 * @c:      the command
 * @offset: in-capsule data offset (the controller's ICDOFF)
 * @len:    bytes of data following the SQE
 */
static inline void rnvme_sgl_inline(struct nvme_command *c, u32 offset, u32 len)
{
	struct nvme_sgl_desc *sg = &c->common.dptr.sgl;
	u64 type = (NVME_SGL_FMT_DATA_DESC << 4) | NVME_SGL_FMT_OFFSET;

	BUILD_BUG_ON(offsetof(struct nvme_sgl_desc, rsvd) != 12 ||
		     offsetof(struct nvme_sgl_desc, type) != 15);
	sg->addr = cpu_to_le64(offset);
	/*
	 * Length, reserved bytes and type in one store.  nvme-core does not
	 * clear the data pointer of read/write commands, and the SQE buffer
	 * is reused per tag: the reserved bytes must be written as zeroes,
	 * or the previous keyed SGL's key would go out in them.
	 */
	put_unaligned_le64(len | type << 56, &sg->length);
}

/**
 * rnvme_use_inline - may this request's data travel in the command capsule
 * @write:       host-to-controller transfer
 * @qid:         queue id (the admin queue never uses in-capsule data)
 * @ctrl_inline: the controller advertises offset SGLs
 * @nsegs:       DMA segments of the data
 * @max_segs:    SGEs the device leaves for in-capsule data
 * @bytes:       payload length
 * @inline_size: capsule room after the SQE (IOCCSZ * 16 - 64)
 */
static inline bool rnvme_use_inline(bool write, int qid, bool ctrl_inline,
				    u32 nsegs, u32 max_segs, u32 bytes,
				    size_t inline_size)
{
	return write && qid > 0 && ctrl_inline && nsegs <= max_segs &&
	       bytes <= inline_size;
}

/**
 * rnvme_inline_room - in-capsule data room of a queue, 0 if it takes none
 * @qid:         queue id (the admin queue never uses in-capsule data)
 * @ctrl_inline: the controller advertises offset SGLs
 * @inline_size: capsule room after the SQE (IOCCSZ * 16 - 64)
 *
 * Worked out once per queue: rnvme_use_inline(write, 1, true, nsegs,
 * max_segs, bytes, room) then answers as the full rnvme_use_inline() would.
 */
static inline size_t rnvme_inline_room(int qid, bool ctrl_inline,
				       size_t inline_size)
{
	return qid > 0 && ctrl_inline ? inline_size : 0;
}

size_t rnvme_capsule_len(int qid, u32 ioccsz);

/* Largest jitter accepted, in percent of the delay. */
#define RNVME_MAX_JITTER_PCT		50

u32 rnvme_reconnect_delay_ms(u32 base_s, u32 attempt, u32 max_s,
			     u32 jitter_pct, u32 rnd);
int rnvme_parse_jitter(const char *val, u32 *pct);
bool rnvme_within_loss_tmo(int max_reconnects, u32 reconnect_delay_s,
			   u32 elapsed_ms, u32 next_delay_ms);

/* Bounds of one CM handshake wait during reconnects, in ms. */
#define RNVME_CM_WAIT_MIN_MS		5000
#define RNVME_CM_WAIT_MAX_MS		60000
u32 rnvme_reconnect_cm_wait_ms(int max_reconnects, u32 reconnect_delay_s,
			       u32 elapsed_ms);

/* ack_timeout: -1 picks per device (RNVME_ACK_TIMEOUT_HW on hardware) */
#define RNVME_ACK_TIMEOUT_AUTO		(-1)
#define RNVME_ACK_TIMEOUT_HW		15
#define RNVME_ACK_TIMEOUT_MAX		31
u8 rnvme_ack_timeout_for(int param, bool software_provider);

/*
 * ACK watchdog: a queue with SENDs outstanding whose SEND completions (the
 * target NIC's RC acknowledgements) stop for ack_watchdog_ms is a silent
 * path.  Checked every ack_watchdog_ms / RNVME_ACK_WD_TICKS.
 */
#define RNVME_ACK_WD_TICKS		4
#define RNVME_ACK_WD_DEFAULT_MS		1500
#define RNVME_ACK_WD_MIN_MS		100
#define RNVME_ACK_WD_MAX_MS		600000
/*
 * A SEND that carries only the SQE (which stays DMA-mapped for the whole
 * association) is posted unsignaled, except one in RNVME_SIGNAL_INTERVAL,
 * which retires the ones before it from the send queue (see io.c).
 */
#define RNVME_SIGNAL_INTERVAL		16

/*
 * Receive buffers of an interrupt-driven queue go back to the device in
 * chains of RNVME_RECV_BATCH; the queue has its commands rounded up to a
 * multiple of it plus that many buffers, so the target always finds one
 * posted.
 */
#define RNVME_RECV_BATCH		16

struct rnvme_ack_wd {
	u32	acks_seen;
	u32	quiet_ticks;
	u32	seq_seen;
	u32	rsps_seen;
};

enum rnvme_ack_wd_verdict {
	RNVME_WD_OK,		/* progress, or nothing outstanding */
	RNVME_WD_PROBE,		/* nothing signaled to watch: probe the path */
	RNVME_WD_SILENT,	/* no acknowledgment for the whole period */
};

enum rnvme_ack_wd_verdict rnvme_ack_wd_tick(struct rnvme_ack_wd *wd,
					    int pending, u32 acks, u32 seq,
					    u32 retired, u32 rsps,
					    bool answers_due);

/*
 * A SEND with in-capsule data or behind a REG_MR, on a queue with at least
 * this many commands in flight, may go unsignaled: its request waits for a
 * later signaled completion, which with that many in flight is posted soon.
 */
#define RNVME_PARK_MIN_INFLIGHT		8

/* sequence number @a is after @b (both wrap) */
static inline bool rnvme_seq_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

/**
 * rnvme_send_signaled - does a SEND ask for a completion?
 * @qid:         queue index (0: admin)
 * @poll:        the queue is a poll queue
 * @after_reg:   the SEND follows a REG_MR in the send queue
 * @inline_data: the SEND carries in-capsule data
 * @seq:         the SEND's sequence number on its queue (from 1)
 * @inflight:    commands posted on the queue and not answered, this one
 *               included
 *
 * The admin queue is rare enough to signal everything.  One SEND in
 * RNVME_SIGNAL_INTERVAL is signaled to retire those before it.  A SEND with
 * only the SQE (in a buffer that stays mapped) needs nothing more.  Two
 * kinds must be known retired before their request ends: one with
 * in-capsule data (the pages are released then), and one behind a REG_MR
 * (Soft-RoCE's retransmission rewinds the send queue to the oldest work
 * request not yet acknowledged and runs local operations again: a REG_MR
 * replayed after its request ended would make the key the target
 * invalidated valid again).  Unsignaled, such a request waits for a later
 * signaled completion (io.c, rnvme_park()), which poll queues cannot do and
 * which a queue with few commands in flight would wait for in vain: there
 * they are signaled.
 */
static inline bool rnvme_send_signaled(int qid, bool poll, bool after_reg,
				       bool inline_data, u32 seq, u32 inflight)
{
	if (!qid || !(seq % RNVME_SIGNAL_INTERVAL))
		return true;
	if (!inline_data && !after_reg)
		return false;
	return poll || inflight < RNVME_PARK_MIN_INFLIGHT;
}

/*
 * Latency histogram of the telemetry (telemetry.c): log-linear in
 * nanoseconds.  Bucket 0 holds everything below 2^RNVME_HIST_MIN_SHIFT ns
 * (1.024 us); then each power of two up to 2^(RNVME_HIST_MIN_SHIFT +
 * RNVME_HIST_OCTAVES) ns (68.7 s) is split into 2^RNVME_HIST_SUB_BITS equal
 * sub-buckets; the last bucket holds everything longer.
 */
#define RNVME_HIST_MIN_SHIFT	10
#define RNVME_HIST_SUB_BITS	3
#define RNVME_HIST_OCTAVES	26
#define RNVME_HIST_BUCKETS	(2 + (RNVME_HIST_OCTAVES << RNVME_HIST_SUB_BITS))

/* the histogram bucket of a latency of @ns nanoseconds */
static inline u32 rnvme_hist_bucket(u64 ns)
{
	u32 e;

	if (ns < (1ULL << RNVME_HIST_MIN_SHIFT))
		return 0;
	/* ns is not 0 here: __fls() spares fls64()'s case for 0 */
	e = BITS_PER_LONG == 64 ? __fls(ns) : fls64(ns) - 1;
	if (e >= RNVME_HIST_MIN_SHIFT + RNVME_HIST_OCTAVES)
		return RNVME_HIST_BUCKETS - 1;
	return 1 + ((e - RNVME_HIST_MIN_SHIFT) << RNVME_HIST_SUB_BITS) +
	       ((ns >> (e - RNVME_HIST_SUB_BITS)) &
		((1U << RNVME_HIST_SUB_BITS) - 1));
}

/* NVMe status field (CQE DW3 bits 31:17, i.e. without the phase tag) */
#define RNVME_NVME_SCT(status)	(((status) >> 8) & 0x7)
#define RNVME_NVME_DNR		0x4000

int rnvme_parse_ack_watchdog(const char *val, u32 *ms);

u32 rnvme_max_fr_pages_for(u32 max_fast_reg_page_list_len);

/* Largest SGE count used for in-capsule data (plus one for the SQE). */
#define RNVME_MAX_INLINE_SEGMENTS	4

u32 rnvme_inline_segments_for(int max_send_sge);
u8 rnvme_responder_resources_for(int max_qp_rd_atom);
const char *rnvme_transport_name_error(const char *name);

/*
 * Identify Controller: Command Quiesce Time (CQT, NVMe 2.1, TP4129), a
 * little-endian 16-bit count of milliseconds at this byte offset (inside
 * what the kernel's struct nvme_id_ctrl still calls reserved); 0: not
 * reported
 */
#define RNVME_ID_CTRL_CQT_OFFSET	386

/*
 * Cross-Controller Reset (TP8028, NVMe 2.3): Identify Controller's
 * Controller Instance Uniquifier (CIU, u8; 0: the controller has none) and
 * Random Number (CIRN, le64) name one association of a controller; admin
 * opcode 38h resets it through another controller of the subsystem, and
 * bit 0 of its completion's dword 0 (IRS) says the reset is done.
 */
#define RNVME_ID_CTRL_CIU_OFFSET	135
#define RNVME_ID_CTRL_CIRN_OFFSET	136
#define RNVME_ADMIN_CCR			0x38
#define RNVME_CCR_IRS			BIT(0)

/**
 * struct rnvme_ccr_target - the association a Cross-Controller Reset ends
 * @cntlid: its controller ID (the command's ICID)
 * @ciu:    its CIU
 * @cirn:   its CIRN
 */
struct rnvme_ccr_target {
	u16 cntlid;
	u8 ciu;
	u64 cirn;
};

u16 rnvme_id_ctrl_cqt(const void *id_ctrl);
void rnvme_id_ctrl_ccr_target(const void *id_ctrl, u16 cntlid,
			      struct rnvme_ccr_target *t);
void rnvme_ccr_cmd(struct nvme_command *c, const struct rnvme_ccr_target *t);
bool rnvme_cmd_may_change_media(const struct nvme_command *cmd);
u32 rnvme_failover_hold_ms(u32 kato_s, bool tbkas, u16 cqt_ms);

#endif /* RNVME_LOGIC_H */
