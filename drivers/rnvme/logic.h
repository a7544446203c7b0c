/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnvme pure logic: no verbs, no locks, no allocation.  Everything here is
 * callable from a KUnit suite without RDMA hardware.
 */
#ifndef RNVME_LOGIC_H
#define RNVME_LOGIC_H

#include <linux/types.h>
#include <linux/blk-mq.h>
#include <linux/nvme.h>
#include <linux/nvme-rdma.h>
#include <rdma/ib_user_ioctl_verbs.h>

/* Longest transport name rnvme registers (fits nvme-core's sysfs output). */
#define RNVME_TRANSPORT_NAME_MAX	16

/* Identify Controller SGLS bits a host transport cares about. */
#define RNVME_SGLS_KEYED		(1U << 2)	/* keyed SGL data blocks */
#define RNVME_SGLS_OFFSET		(1U << 20)	/* in-capsule data (offset) */

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
bool rnvme_sqsize_fits_tag_set(u16 sqsize, u32 tag_depth);

void rnvme_cm_req_init(struct nvme_rdma_cm_req *req, u16 qid, u16 queue_size);
const char *rnvme_cm_rej_msg(u16 status);
const char *rnvme_cm_rep_problem(const void *pd, u8 len, u16 queue_size);
bool rnvme_soft_rdma(enum rdma_driver_id driver_id);

void rnvme_sgl_null(struct nvme_command *c);
void rnvme_sgl_keyed(struct nvme_command *c, u64 addr, u32 len, u32 key,
		     bool invalidate);
void rnvme_sgl_inline(struct nvme_command *c, u32 offset, u32 len);
bool rnvme_use_inline(bool write, int qid, bool ctrl_inline, u32 nsegs,
		      u32 max_segs, u32 bytes, size_t inline_size);
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
struct rnvme_ack_wd {
	u32	acks_seen;
	u32	quiet_ticks;
};
bool rnvme_ack_wd_tick(struct rnvme_ack_wd *wd, int pending, u32 acks);
int rnvme_parse_ack_watchdog(const char *val, u32 *ms);

u32 rnvme_max_fr_pages_for(u32 max_fast_reg_page_list_len);
const char *rnvme_transport_name_error(const char *name);

#endif /* RNVME_LOGIC_H */
