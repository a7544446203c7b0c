// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme pure logic: queue arithmetic, CM private data, SGL descriptors and
 * option checks.  No hardware, no locks: KUnit calls these directly.
 */
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include <linux/string.h>
#include <rdma/ib_cm.h>
#include <rnvme/compat.h>
#include "logic.h"

/*
 * Most pages one fast-registration MR maps.  256 x 4 KiB bounds a transfer
 * at 1 MiB, which matches nvmet-rdma's MDTS; the device may allow fewer.
 * One page of the device's list is kept back for a buffer that does not
 * start on a page boundary.
 */
#define RNVME_MAX_FR_PAGES	256

/**
 * rnvme_io_queues_wanted - I/O queues to ask the controller for
 * @want: counts from the connect options
 * @cpus: online CPUs; no map type gets more queues than CPUs
 */
u32 rnvme_io_queues_wanted(const struct rnvme_queue_want *want, u32 cpus)
{
	return min(want->nr_io, cpus) + min(want->nr_write, cpus) +
	       min(want->nr_poll, cpus);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_io_queues_wanted);

/**
 * rnvme_split_io_queues - distribute granted I/O queues over blk-mq maps
 * @want:      counts from the connect options
 * @cpus:      online CPUs
 * @granted:   queues the controller granted (Set Features Number of Queues)
 * @io_queues: out: queues per HCTX_TYPE_{DEFAULT,READ,POLL}
 *
 * Interrupt-driven queues come first: with separate write queues the default
 * map serves writes and the read map reads; otherwise the default map serves
 * both.  Poll queues take what is left.  Qids follow the same order.
 */
void rnvme_split_io_queues(const struct rnvme_queue_want *want, u32 cpus,
			   u32 granted, u32 io_queues[HCTX_MAX_TYPES])
{
	u32 rd = min(want->nr_io, cpus);
	u32 wr = min(want->nr_write, cpus);
	u32 pl = min(want->nr_poll, cpus);
	u32 left = granted;
	int i;

	for (i = 0; i < HCTX_MAX_TYPES; i++)
		io_queues[i] = 0;

	if (wr) {
		io_queues[HCTX_TYPE_DEFAULT] = min(wr, left);
		left -= io_queues[HCTX_TYPE_DEFAULT];
		io_queues[HCTX_TYPE_READ] = min(rd, left);
		left -= io_queues[HCTX_TYPE_READ];
	} else {
		io_queues[HCTX_TYPE_DEFAULT] = min(rd, left);
		left -= io_queues[HCTX_TYPE_DEFAULT];
	}
	/* a controller that grants fewer queues still needs a default one */
	if (!io_queues[HCTX_TYPE_DEFAULT] && left) {
		io_queues[HCTX_TYPE_DEFAULT] = 1;
		left--;
	}
	io_queues[HCTX_TYPE_POLL] = min(pl, left);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_split_io_queues);

/**
 * rnvme_tag_set_maps - blk-mq maps for an I/O tag set
 * @nr_poll: nr_poll_queues asked for in the connect options
 *
 * A tag set's map count is fixed when it is allocated, but every association
 * of the controller may grant a different number of queues.  The count must
 * therefore follow what the host asked for, never one grant: a first
 * association without poll queues followed by one with them would otherwise
 * map poll queues into a map that has no memory behind it.
 */
unsigned int rnvme_tag_set_maps(u32 nr_poll)
{
	return nr_poll ? HCTX_MAX_TYPES : HCTX_TYPE_POLL; /* default + read */
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_tag_set_maps);

/**
 * rnvme_is_poll_queue - does I/O queue @qid (1-based) belong to the poll map
 * @io_queues: the split from rnvme_split_io_queues()
 * @qid:       NVMe queue id; 0 (admin) is never polled
 */
bool rnvme_is_poll_queue(const u32 io_queues[HCTX_MAX_TYPES], int qid)
{
	return qid > 0 && io_queues[HCTX_TYPE_POLL] &&
	       qid > io_queues[HCTX_TYPE_DEFAULT] + io_queues[HCTX_TYPE_READ];
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_is_poll_queue);

/**
 * rnvme_sqsize_fits_tag_set - can queues of @sqsize serve an existing tag set
 * @sqsize:      0's based I/O queue size of the new association
 * @tag_depth:   queue_depth of the controller's I/O tag set (its first sqsize + 1)
 *
 * Every tag may be in flight at once, and each needs a queue entry, an MR
 * and a receive buffer of the queue sized from @sqsize.
 */
bool rnvme_sqsize_fits_tag_set(u16 sqsize, u32 tag_depth)
{
	return (u32)sqsize + 1 >= tag_depth;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_sqsize_fits_tag_set);

/**
 * rnvme_clamp_sqsize - bound the I/O submission queue size (0's based)
 * @sqsize:         current value (queue_size - 1, already capped to MQES)
 * @maxcmd:         the controller's MAXCMD, 0 if not reported
 * @max_queue_size: the transport's limit (NVME_RDMA_MAX_QUEUE_SIZE)
 */
u16 rnvme_clamp_sqsize(u16 sqsize, u16 maxcmd, u16 max_queue_size)
{
	if (sqsize + 1 > max_queue_size)
		sqsize = max_queue_size - 1;
	if (maxcmd && sqsize + 1 > maxcmd)
		sqsize = maxcmd - 1;
	return sqsize;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_clamp_sqsize);

/* Send queue entries per command in flight: REG_MR + SEND + LOCAL_INV. */
#define RNVME_SEND_WR_FACTOR	3

/**
 * rnvme_send_queue_depth - send work requests of a queue of @queue_size
 * @queue_size: commands in flight at most
 * @cpus:       CPUs that may post at the same time (num_possible_cpus())
 *
 * Besides the work requests of the commands in flight, the send queue holds
 * those of ended commands that no signaled completion has retired yet: the
 * unsignaled SENDs (and their REG_MRs) posted after the last signaled one,
 * at most RNVME_SIGNAL_INTERVAL in posting order, plus one for every CPU
 * that may be posting at the same time (they take sequence numbers and post
 * in either order; never more than there are commands).  Then the drain
 * work request, the watchdog probe (one zero-length RDMA WRITE) and one
 * spare.
 */
u32 rnvme_send_queue_depth(u32 queue_size, u32 cpus)
{
	u32 racing = min(cpus, queue_size);

	return RNVME_SEND_WR_FACTOR * queue_size +
	       2 * (RNVME_SIGNAL_INTERVAL + racing) + 3;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_send_queue_depth);

/**
 * rnvme_recv_ring_size - receive buffers of a queue of @queue_size
 * @queue_size: commands in flight at most
 * @poll:       a poll queue (reposts each buffer at once)
 *
 * One buffer per command the target may answer; an interrupt-driven
 * queue's ring is a whole number of stretches of RNVME_RECV_BATCH, one more
 * than its commands need (rnvme_repost_recv()).
 */
u32 rnvme_recv_ring_size(u32 queue_size, bool poll)
{
	if (poll)
		return queue_size;
	return round_up(queue_size, RNVME_RECV_BATCH) + RNVME_RECV_BATCH;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_recv_ring_size);

/**
 * rnvme_queue_size_for_device - the largest queue size a device can carry
 * @want:      the queue size asked for
 * @cpus:      possible CPUs (rnvme_send_queue_depth())
 * @max_qp_wr: the device's work requests per send or receive queue
 * @max_cqe:   the device's entries per CQ
 *
 * A queue needs rnvme_send_queue_depth() send and its ring + 1 (the drain)
 * receive work requests, and a CQ holding both.
 *
 * Return: @want, or the largest smaller size that fits; 0 if not even a
 * queue of two entries does.
 */
u32 rnvme_queue_size_for_device(u32 want, u32 cpus, int max_qp_wr,
				int max_cqe)
{
	u32 qs, sq, rq;

	if (max_qp_wr <= 0 || max_cqe <= 0)
		return 0;
	for (qs = want; qs >= 2; qs--) {
		sq = rnvme_send_queue_depth(qs, cpus);
		rq = rnvme_recv_ring_size(qs, false) + 1;
		if (sq <= max_qp_wr && rq <= max_qp_wr && sq + rq <= max_cqe)
			return qs;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_queue_size_for_device);

/**
 * rnvme_cm_req_init - build the RDMA CM connect private data (NVMe/RDMA 3.3)
 * @req:        out
 * @qid:        0 for the admin queue
 * @queue_size: entries in the NVMe queue
 *
 * The host receive queue holds one response per command (hrqsize =
 * queue_size); hsqsize is the 0's based submission queue size.
 */
void rnvme_cm_req_init(struct nvme_rdma_cm_req *req, u16 qid, u16 queue_size)
{
	memset(req, 0, sizeof(*req));
	req->recfmt = cpu_to_le16(NVME_RDMA_CM_FMT_1_0);
	req->qid = cpu_to_le16(qid);
	req->hrqsize = cpu_to_le16(queue_size);
	req->hsqsize = cpu_to_le16(queue_size - 1);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_cm_req_init);

/**
 * rnvme_cm_rej_msg - explain an NVMe/RDMA CM reject status from the target
 * @status: the sts field of struct nvme_rdma_cm_rej
 */
const char *rnvme_cm_rej_msg(u16 status)
{
	switch (status) {
	case NVME_RDMA_CM_INVALID_LEN:
		return "invalid private data length";
	case NVME_RDMA_CM_INVALID_RECFMT:
		return "unsupported record format";
	case NVME_RDMA_CM_INVALID_QID:
		return "invalid queue id";
	case NVME_RDMA_CM_INVALID_HSQSIZE:
		return "host submission queue size not accepted";
	case NVME_RDMA_CM_INVALID_HRQSIZE:
		return "host receive queue size not accepted";
	case NVME_RDMA_CM_NO_RSC:
		return "target out of resources";
	case NVME_RDMA_CM_INVALID_IRD:
		return "inbound RDMA read depth not accepted";
	case NVME_RDMA_CM_INVALID_ORD:
		return "outbound RDMA read depth not accepted";
	case 0x09:	/* NVME_RDMA_CM_INVALID_CNTLID, named since 6.11 */
		return "invalid controller id";
	default:
		return "unrecognized reject status";
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_cm_rej_msg);

/**
 * rnvme_cm_rej_token - name an NVMe/RDMA CM reject status for a record
 * @status: the sts field of struct nvme_rdma_cm_rej, from the target
 *
 * Return: a fixed token without spaces ("unknown" for anything else).
 */
const char *rnvme_cm_rej_token(u16 status)
{
	switch (status) {
	case NVME_RDMA_CM_INVALID_LEN:
		return "invalid-private-data-length";
	case NVME_RDMA_CM_INVALID_RECFMT:
		return "invalid-record-format";
	case NVME_RDMA_CM_INVALID_QID:
		return "invalid-qid";
	case NVME_RDMA_CM_INVALID_HSQSIZE:
		return "invalid-hsqsize";
	case NVME_RDMA_CM_INVALID_HRQSIZE:
		return "invalid-hrqsize";
	case NVME_RDMA_CM_NO_RSC:
		return "no-resources";
	case NVME_RDMA_CM_INVALID_IRD:
		return "invalid-ird";
	case NVME_RDMA_CM_INVALID_ORD:
		return "invalid-ord";
	case 0x09:	/* NVME_RDMA_CM_INVALID_CNTLID, named since 6.11 */
		return "invalid-cntlid";
	default:
		return "unknown";
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_cm_rej_token);

/* Connect response, Invalid Parameters: result bit 16 = in the data (IATTR) */
#define RNVME_CONNECT_IATTR	BIT(16)

/**
 * rnvme_connect_status_cause - why a Fabrics Connect command was refused
 * @status: the completion's status field, phase bit removed (DNR and More
 *          are ignored), as the target sent it
 * @result: the completion's result (the Invalid Parameter Offset)
 *
 * Return: a fixed token without spaces.
 */
const char *rnvme_connect_status_cause(u16 status, u32 result)
{
	u32 offset = result & 0xffff;

	switch (status & 0x7ff) {
	case NVME_SC_CONNECT_FORMAT:
		return "incompatible-format";
	case NVME_SC_CONNECT_CTRL_BUSY:
		return "controller-busy";
	case NVME_SC_CONNECT_RESTART_DISC:
		return "restart-discovery";
	case NVME_SC_CONNECT_INVALID_HOST:
		return "host-not-allowed";
	case NVME_SC_CONNECT_INVALID_PARAM:
		if (!(result & RNVME_CONNECT_IATTR))
			return "invalid-connect-parameter";
		if (offset == offsetof(struct nvmf_connect_data, subsysnqn))
			return "subsystem-not-found";
		if (offset == offsetof(struct nvmf_connect_data, hostnqn))
			return "invalid-hostnqn";
		if (offset == offsetof(struct nvmf_connect_data, cntlid))
			return "invalid-cntlid";
		if (offset == offsetof(struct nvmf_connect_data, hostid))
			return "invalid-hostid";
		return "invalid-connect-data";
	case NVME_SC_HOST_ABORTED_CMD:
		return "no-response";
	case NVME_SC_HOST_PATH_ERROR:
		return "path-error";
	default:
		return "nvme-error";
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_connect_status_cause);

/**
 * rnvme_auth_error_cause - why in-band authentication of a queue failed
 * @err:   what nvmf_connect_*_queue() returned after the target asked for
 *         authentication (-errno, or the NVMe status of a refused
 *         AUTH_SEND/AUTH_RECEIVE)
 * @sends: AUTH_SEND commands posted: nvme-core sends Negotiate, Reply,
 *         then Success2 or Failure2
 * @closed: the target closed the connection meanwhile
 *
 * nvme-core reports both a host key the target refused (a Failure1 in
 * place of Challenge or Success1) and a controller response the host
 * refused as -EKEYREJECTED; the second one is followed by a Failure2, so
 * the number of messages sent tells them apart.  Linux nvmet also closes
 * the connection when it refuses the host's response, and that may reach
 * the host before its Failure1 does.
 *
 * Return: a fixed token without spaces.
 */
const char *rnvme_auth_error_cause(int err, unsigned int sends, bool closed)
{
	/* the host's own decisions first: what the target did after is moot */
	switch (err) {
	case -EKEYREJECTED:
		if (sends <= 1)
			return "negotiation-refused";
		return sends == 2 ? "host-key-rejected" : "ctrl-key-rejected";
	case -ENOKEY:
		return "no-host-key";
	case -EPROTONOSUPPORT:
		return "not-in-kernel";
	case -EOPNOTSUPP:
		return "secure-concat-unsupported";
	}
	if (closed)
		return sends == 2 ? "closed-after-reply" : "target-closed";
	if (err > 0)
		return "auth-command-refused";
	switch (err) {
	case -ECONNREFUSED:
		return "ctrl-not-authenticated";
	case -EPROTO:
	case -EINVAL:
		return "protocol-error";
	case -ENOMEM:
		return "no-memory";
	default:
		return "no-response";
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_auth_error_cause);

/**
 * rnvme_addr_error_cause - why address resolution failed
 * @err: the negative errno of rdma_resolve_addr() or of its ADDR_ERROR event
 */
const char *rnvme_addr_error_cause(int err)
{
	switch (err) {
	case -ETIMEDOUT:
		return "no-neighbour";
	case -ENODEV:
	case -EADDRNOTAVAIL:
		return "no-rdma-device";
	case -ENETUNREACH:
	case -EHOSTUNREACH:
		return "no-route";
	default:
		return "address-error";
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_addr_error_cause);

/**
 * rnvme_cm_reject_cause - why the target's side refused the CM connection
 * @status:    the REJECTED event's status (IB CM reject reason, or -errno
 *             on iWARP)
 * @nvme_data: the reject carried NVMe/RDMA reject data
 */
const char *rnvme_cm_reject_cause(int status, bool nvme_data)
{
	if (nvme_data)
		return "target-reject";
	if (status == IB_CM_REJ_INVALID_SERVICE_ID || status == -ECONNREFUSED)
		return "no-listener";
	if (status == IB_CM_REJ_TIMEOUT || status == -ETIMEDOUT)
		return "no-answer";
	return "cm-reject";
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_cm_reject_cause);

/**
 * rnvme_soft_rdma - is this a software RDMA device (Soft-RoCE, Soft-iWARP)?
 * @driver_id: the device's ops.driver_id
 *
 * Their quirks get workarounds that real hardware must not pay for: a
 * longer ACK timeout, and CM teardown deferred while the port is down
 * (Soft-RoCE's GSI QP stays in error after a failed send, so a DREQ sent
 * on a down link would end its CM traffic for good; on a real device the
 * deferral would only pin the connection's resources until the link
 * returns).
 */
bool rnvme_soft_rdma(enum rdma_driver_id driver_id)
{
	return driver_id == RDMA_DRIVER_RXE || driver_id == RDMA_DRIVER_SIW;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_soft_rdma);

/**
 * rnvme_cm_rep_problem - check the target's RDMA CM accept private data
 * @pd:         the private data of the ESTABLISHED event (may be NULL)
 * @len:        its length (IB/RoCE pad it to the REP's full size)
 * @queue_size: entries in the host's queue
 *
 * The target announces its receive queue size (crqsize); a host that sends
 * more commands than that leans on RNR retries.  Nothing here is fatal: the
 * in-tree driver ignores the data altogether, and a target that fills it
 * badly can still serve I/O, so the caller only logs what is wrong.
 *
 * Return: NULL when the data is well formed and crqsize covers the queue,
 * otherwise what is wrong, for a log line.
 */
const char *rnvme_cm_rep_problem(const void *pd, u8 len, u16 queue_size)
{
	const struct nvme_rdma_cm_rep *rep = pd;
	u16 crqsize;

	if (!pd || len < offsetofend(struct nvme_rdma_cm_rep, crqsize))
		return "no NVMe/RDMA accept data";
	if (le16_to_cpu(rep->recfmt) != NVME_RDMA_CM_FMT_1_0)
		return "unknown accept record format";
	crqsize = le16_to_cpu(rep->crqsize);
	if (!crqsize)
		return "controller receive queue size 0";
	if (crqsize < queue_size)
		return "controller receive queue smaller than the host queue";
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_cm_rep_problem);

/**
 * rnvme_capsule_len - size of a command capsule on queue @qid
 * @qid:    queue id; admin capsules carry no data
 * @ioccsz: the controller's I/O queue command capsule size, in 16-byte units
 *
 * The spec's minimum IOCCSZ is 4 (the bare SQE).  A smaller value from a
 * broken target counts as "no in-capsule data" instead of making the room
 * after the SQE negative; the product is taken in 64 bits so that a huge
 * value cannot wrap around to a small capsule either.
 */
size_t rnvme_capsule_len(int qid, u32 ioccsz)
{
	if (!qid || (u64)ioccsz * 16 < sizeof(struct nvme_command))
		return sizeof(struct nvme_command);
	return min_t(u64, (u64)ioccsz * 16, SIZE_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_capsule_len);

/**
 * rnvme_reconnect_delay_ms - delay before reconnect attempt @attempt
 * @base_s:     reconnect_delay (seconds)
 * @attempt:    1 for the first attempt after the loss
 * @max_s:      reconnect_backoff_max; when larger than @base_s the delay
 *              doubles per attempt up to it, otherwise it stays @base_s
 * @jitter_pct: spread the delay uniformly by +/- this percentage (<= 50)
 * @rnd:        a random number (jitter source)
 *
 * With @max_s <= @base_s and no jitter this is exactly what the in-tree
 * driver does: reconnect_delay every time.
 */
u32 rnvme_reconnect_delay_ms(u32 base_s, u32 attempt, u32 max_s,
			     u32 jitter_pct, u32 rnd)
{
	u64 delay = (u64)base_s * MSEC_PER_SEC;
	u64 span;

	if (max_s > base_s && attempt > 1) {
		u32 shift = min_t(u32, attempt - 1, 16);

		delay = min_t(u64, delay << shift, (u64)max_s * MSEC_PER_SEC);
	}
	jitter_pct = min_t(u32, jitter_pct, RNVME_MAX_JITTER_PCT);
	if (jitter_pct && delay) {
		span = div_u64(delay * jitter_pct, 100);
		delay = delay - span + rnd % (u32)min_t(u64, 2 * span + 1, U32_MAX);
	}
	return min_t(u64, delay, U32_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_reconnect_delay_ms);

/**
 * rnvme_parse_jitter - parse a value written to reconnect_jitter
 * @val: the string (a trailing newline is fine)
 * @pct: out: the percentage, set only on success
 *
 * Return: 0; -ERANGE above RNVME_MAX_JITTER_PCT (or beyond u32); -EINVAL
 * for anything that is not a number.
 */
int rnvme_parse_jitter(const char *val, u32 *pct)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v > RNVME_MAX_JITTER_PCT)
		return -ERANGE;
	*pct = v;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_parse_jitter);

/**
 * rnvme_ack_timeout_for - the RC local ACK timeout for a new connection
 * @param:             the ack_timeout parameter: 0-31, or -1 for automatic
 * @software_provider: the RDMA device is Soft-RoCE or Soft-iWARP
 *
 * Return: the exponent to set (4.096 us * 2^n), or 0 to keep the RDMA CM's.
 * Automatic keeps the CM's on software providers: their retransmit timer
 * measures how soon the host's CPU gets to the packet rather than the wire,
 * and a Soft-RoCE retransmission executes the fast registrations queued
 * behind the lost packet a second time, which fails the QP.
 */
u8 rnvme_ack_timeout_for(int param, bool software_provider)
{
	if (param >= 0)
		return min(param, RNVME_ACK_TIMEOUT_MAX);
	return software_provider ? 0 : RNVME_ACK_TIMEOUT_HW;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_ack_timeout_for);

/**
 * rnvme_within_loss_tmo - may another attempt start before ctrl_loss_tmo
 * @max_reconnects:    nvme-fabrics' ctrl_loss_tmo / reconnect_delay, or -1
 *                     for "reconnect forever"
 * @reconnect_delay_s: reconnect_delay
 * @elapsed_ms:        time since the association was lost
 * @next_delay_ms:     the delay before the next attempt
 *
 * Used when backoff or jitter change the delays, so that ctrl_loss_tmo stays
 * a time limit instead of an attempt count.
 */
bool rnvme_within_loss_tmo(int max_reconnects, u32 reconnect_delay_s,
			   u32 elapsed_ms, u32 next_delay_ms)
{
	u64 tmo_ms;

	if (max_reconnects < 0)
		return true;
	tmo_ms = (u64)max_reconnects * reconnect_delay_s * MSEC_PER_SEC;
	return (u64)elapsed_ms + next_delay_ms <= tmo_ms;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_within_loss_tmo);

/**
 * rnvme_reconnect_cm_wait_ms - how long one reconnect may wait for the CM
 * @max_reconnects:    nvme-fabrics' ctrl_loss_tmo / reconnect_delay, or -1
 * @reconnect_delay_s: reconnect_delay
 * @elapsed_ms:        time since the association was lost
 *
 * A target that is gone leaves the CM retrying its REQ for about a minute;
 * an attempt must not outlive ctrl_loss_tmo by that much. The wait is what
 * is left of ctrl_loss_tmo, but at least RNVME_CM_WAIT_MIN_MS (a handshake
 * needs a REQ retry or two to survive a lost packet) and at most
 * RNVME_CM_WAIT_MAX_MS.
 */
u32 rnvme_reconnect_cm_wait_ms(int max_reconnects, u32 reconnect_delay_s,
			       u32 elapsed_ms)
{
	u64 tmo_ms, left;

	if (max_reconnects < 0)
		return RNVME_CM_WAIT_MAX_MS;
	tmo_ms = (u64)max_reconnects * reconnect_delay_s * MSEC_PER_SEC;
	left = tmo_ms > elapsed_ms ? tmo_ms - elapsed_ms : 0;
	return clamp_t(u64, left, RNVME_CM_WAIT_MIN_MS, RNVME_CM_WAIT_MAX_MS);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_reconnect_cm_wait_ms);

/**
 * rnvme_max_fr_pages_for - pages per fast-registration MR
 * @max_fast_reg_page_list_len: the device's limit
 */
u32 rnvme_max_fr_pages_for(u32 max_fast_reg_page_list_len)
{
	if (!max_fast_reg_page_list_len)
		return 0;
	return min_t(u32, RNVME_MAX_FR_PAGES, max_fast_reg_page_list_len - 1);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_max_fr_pages_for);

/**
 * rnvme_inline_segments_for - data segments a SEND carries beside its SQE
 * @max_send_sge: the device's send SGE limit
 *
 * One SGE always carries the SQE.  A device that reports one SGE or none
 * leaves no room for data, not an underflow to the largest count.
 */
u32 rnvme_inline_segments_for(int max_send_sge)
{
	if (max_send_sge <= 1)
		return 0;
	return min_t(u32, RNVME_MAX_INLINE_SEGMENTS, max_send_sge - 1);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_inline_segments_for);

/**
 * rnvme_responder_resources_for - RDMA READs the target may have in flight
 * @max_qp_rd_atom: the device's limit per QP as the READs' responder
 *
 * The CM carries the count in 8 bits: a device that allows more gets the
 * most the field holds, never a wrapped value (256 would wrap to 0, which
 * leaves the target no RDMA READ to fetch write data with).
 */
u8 rnvme_responder_resources_for(int max_qp_rd_atom)
{
	return clamp_t(int, max_qp_rd_atom, 0, U8_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_responder_resources_for);

/**
 * rnvme_transport_name_error - why a transport name cannot be registered
 * @name: the transport_name module parameter
 *
 * Return: NULL if usable, else the reason.  nvme-fabrics auto-loads
 * "nvme-<name>" on every connect, so another in-tree transport's name would
 * let the two modules shadow each other.
 */
const char *rnvme_transport_name_error(const char *name)
{
	static const char * const taken[] = { "tcp", "fc", "loop", "pci" };
	size_t len = name ? strlen(name) : 0;
	size_t i;

	if (!len)
		return "is empty";
	if (len > RNVME_TRANSPORT_NAME_MAX)
		return "is longer than 16 characters";
	/* the kernel's isalnum() also accepts Latin-1 letters: ASCII only */
	for (i = 0; i < len; i++)
		if (!(isascii(name[i]) && isalnum(name[i])) &&
		    name[i] != '-' && name[i] != '_')
			return "may only hold letters, digits, '-' and '_'";
	for (i = 0; i < ARRAY_SIZE(taken); i++)
		if (!strcmp(name, taken[i]))
			return "belongs to another in-tree NVMe transport";
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_transport_name_error);

/**
 * rnvme_ack_wd_tick - one ACK watchdog check of one queue
 * @wd:          the queue's watchdog state
 * @pending:     signaled SENDs (and probes) posted and not completed yet
 * @acks:        the queue's signaled completion counter (wraps; only compared)
 * @seq:         sequence number of the queue's newest SEND (wraps)
 * @retired:     sequence number of the newest SEND known complete
 * @rsps:        responses the queue received (wraps; only compared)
 * @answers_due: commands of the queue wait for their responses
 *
 * A signaled SEND outstanding and no completion over the last
 * RNVME_ACK_WD_TICKS checks: the path is silent.  With nothing signaled
 * outstanding and no new SEND since the last check (so no signaled one will
 * follow soon), the queue must post a probe, a signaled zero-length RDMA
 * WRITE that the target's NIC acknowledges, when
 * - unsignaled SENDs are not known complete: its completion confirms them;
 * - or commands wait for responses and nothing was heard since the last
 *   check (no response, no completion): the target acknowledged their
 *   SENDs, and its answers may be lost in a path gone silent since.
 * The probe is then the one outstanding, and the check that asked for it
 * counts as its first quiet one.  A completion starts the count again.  A
 * slow target that acknowledges the probe is never silent; it gets one
 * probe every other check while it holds commands.
 */
enum rnvme_ack_wd_verdict rnvme_ack_wd_tick(struct rnvme_ack_wd *wd,
					    int pending, u32 acks, u32 seq,
					    u32 retired, u32 rsps,
					    bool answers_due)
{
	bool quiet_seq = seq == wd->seq_seen;
	bool heard = rsps != wd->rsps_seen || acks != wd->acks_seen;

	wd->seq_seen = seq;
	wd->rsps_seen = rsps;
	if (pending <= 0 || acks != wd->acks_seen) {
		wd->acks_seen = acks;
		wd->quiet_ticks = 0;
		if (pending <= 0 && quiet_seq &&
		    ((s32)(seq - retired) > 0 || (answers_due && !heard))) {
			/*
			 * This check already found the queue quiet: it is
			 * the probe's first quiet one, so a silent path is
			 * found as many checks after the probe as after a
			 * signaled SEND posted just before a check.
			 */
			wd->quiet_ticks = 1;
			return RNVME_WD_PROBE;
		}
		return RNVME_WD_OK;
	}
	if (wd->quiet_ticks < RNVME_ACK_WD_TICKS)
		wd->quiet_ticks++;
	return wd->quiet_ticks >= RNVME_ACK_WD_TICKS ? RNVME_WD_SILENT :
						       RNVME_WD_OK;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_ack_wd_tick);

/**
 * rnvme_parse_ack_watchdog - parse the ack_watchdog_ms parameter
 * @val: the string written
 * @ms:  the value, when valid
 *
 * Return: 0, -EINVAL for a non-number, -ERANGE outside 0 (off) and
 * RNVME_ACK_WD_MIN_MS..RNVME_ACK_WD_MAX_MS.
 */
int rnvme_parse_ack_watchdog(const char *val, u32 *ms)
{
	u32 v;
	int ret;

	ret = kstrtou32(val, 0, &v);
	if (ret)
		return -EINVAL;
	if (v && (v < RNVME_ACK_WD_MIN_MS || v > RNVME_ACK_WD_MAX_MS))
		return -ERANGE;
	*ms = v;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_parse_ack_watchdog);

/**
 * rnvme_id_ctrl_cqt - the Command Quiesce Time an Identify Controller reports
 * @id_ctrl: the 4096-byte Identify Controller data structure
 *
 * Return: CQT in milliseconds; 0 when the controller does not report one.
 */
u16 rnvme_id_ctrl_cqt(const void *id_ctrl)
{
	return get_unaligned_le16((const u8 *)id_ctrl + RNVME_ID_CTRL_CQT_OFFSET);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_id_ctrl_cqt);

/**
 * rnvme_id_ctrl_ccr_target - what a Cross-Controller Reset of an association
 *                            names, from its Identify Controller
 * @id_ctrl: the association's 4096-byte Identify Controller data structure
 * @cntlid:  its controller ID
 * @t:       filled in; t->ciu is 0 when the controller offers no CCR identity
 */
void rnvme_id_ctrl_ccr_target(const void *id_ctrl, u16 cntlid,
			      struct rnvme_ccr_target *t)
{
	const u8 *id = id_ctrl;

	t->cntlid = cntlid;
	t->ciu = id[RNVME_ID_CTRL_CIU_OFFSET];
	t->cirn = get_unaligned_le64(id + RNVME_ID_CTRL_CIRN_OFFSET);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_id_ctrl_ccr_target);

/**
 * rnvme_ccr_cmd - build a Cross-Controller Reset command
 * @c: the command, overwritten
 * @t: the association to reset: ICID in CDW10 bits 15:0, CIU in bits
 *     23:16, CIRN in CDW12 (low half) and CDW13 (high half)
 */
void rnvme_ccr_cmd(struct nvme_command *c, const struct rnvme_ccr_target *t)
{
	memset(c, 0, sizeof(*c));
	c->common.opcode = RNVME_ADMIN_CCR;
	c->common.cdw10 = cpu_to_le32(t->cntlid | (u32)t->ciu << 16);
	c->common.cdw12 = cpu_to_le32(lower_32_bits(t->cirn));
	c->common.cdw13 = cpu_to_le32(upper_32_bits(t->cirn));
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_ccr_cmd);

/**
 * rnvme_cmd_may_change_media - whether a lost controller running @cmd late
 *                              could overwrite what a retry wrote since
 * @cmd: an I/O queue command
 *
 * Reads and the other commands that only look at the media cannot; every
 * other command, including fused ones (compare and write) and opcodes
 * rnvme does not know, is taken to change it.
 */
bool rnvme_cmd_may_change_media(const struct nvme_command *cmd)
{
	if (cmd->common.flags & (NVME_CMD_FUSE_FIRST | NVME_CMD_FUSE_SECOND))
		return true;
	switch (cmd->common.opcode) {
	case nvme_cmd_read:
	case nvme_cmd_compare:
	case nvme_cmd_verify:
	case nvme_cmd_resv_report:
	case nvme_cmd_zone_mgmt_recv:
		return false;
	default:
		return true;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_cmd_may_change_media);

/**
 * rnvme_failover_hold_ms - how long a lost controller may still execute
 * @kato_s: the association's keep-alive timeout in seconds (0: none)
 * @tbkas:  the controller does traffic-based keep-alive (CTRATT.TBKAS)
 * @cqt_ms: its Command Quiesce Time (0: not reported)
 *
 * NVMe 2.1's communication-loss handling: the controller notices the loss
 * within two keep-alive timeouts (three with traffic-based keep-alive, whose
 * timer the last command restarts), then takes up to CQT to quiesce what it
 * still holds.  Without keep-alive the controller has no timer of its own:
 * the default keep-alive timeout stands in for it.
 *
 * Return: the hold in milliseconds.
 */
u32 rnvme_failover_hold_ms(u32 kato_s, bool tbkas, u16 cqt_ms)
{
	u64 ms;

	if (!kato_s)
		kato_s = NVME_DEFAULT_KATO;
	ms = (u64)kato_s * (tbkas ? 3 : 2) * MSEC_PER_SEC + cqt_ms;
	return min_t(u64, ms, U32_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(rnvme_failover_hold_ms);
