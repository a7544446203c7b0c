// SPDX-License-Identifier: GPL-2.0
//
// rnvme-hostile-target: a small NVMe-over-Fabrics RDMA target in user space
// (librdmacm + libibverbs) that the hostile-target suite (tests/suites/
// 15-hostile.sh) scripts to misbehave.  It serves one subsystem with one
// RAM-backed namespace and a discovery controller, well enough for the Linux
// host (rnvme or nvme_rdma) to connect, scan and do verified I/O; a --fault
// makes it break the protocol in one precise way, a given number of times,
// and then behave again so the host can recover.
//
// This is test equipment, not a target: one thread, no persistence, no
// security.  Every fault that fires is logged on stdout as
// "fault <name> fired: <what>", so the suite can tell "the host coped" from
// "the fault never happened".
//
//   rnvme-hostile-target --addr 192.0.2.2 --port 4430 --nqn NQN [--fault F]
//                        [--fault-count N] [--fault-after K] [--size MiB]
//
// Two paths (tests/suites/17-lost-write.sh): --addr2 A [--port2 P] adds a
// second listener to the same process and event loop; both serve the one
// subsystem over the one RAM namespace, each association a controller of its
// own, and Identify says so as nvme-core wants it for native multipath
// (CMIC multi-controller, NMIC shared, the same NGUID/EUI-64/UUID on both).
// --slow-path N --drain-ms MS makes the controllers behind listener N keep
// every write they receive: its data is taken at once (in capsule or by RDMA
// READ), but it reaches the namespace and is completed only MS ms after it
// arrived, whether or not the host still has that path: a controller still
// executing after the host lost it.  --cqt-ms MS reports a Command Quiesce
// Time (NVMe 2.1, TP4129; Identify Controller bytes 387:386, milliseconds)
// that the drain keeps to (drain <= CQT; without --cqt-ms the drain is
// reported as the CQT).  Each held and each applied write is logged as
// "fault drain-hold fired" / "fault drain-apply fired".
//
// --ccr adds Cross-Controller Reset (NVMe TP8028): each I/O controller
// reports in Identify Controller a CIU (byte 135, random 1..255) and a CIRN
// (bytes 143:136, random) of its own, and CCRL 4 (byte 1807); the admin
// command 0x38 (CDW10 15:0 ICID, 23:16 CIU; CDW12/CDW13 CIRN) sent to one
// controller resets another controller of the subsystem, also one whose
// connections are gone but whose held writes still drain: those writes are
// discarded (never applied), its connections dropped, and the command
// completes with CQE DW0 bit 0 (IRS, immediate reset successful) set.  An
// unknown ICID, a CIU/CIRN that does not match, or the source controller
// itself: Invalid Field | DNR.  Logged as "fault ccr fired (n): controller S
// reset controller I: K held writes discarded" (and each discarded write as
// "fault ccr-discard fired") or "ccr refused: ...".

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

// ---------------------------------------------------------------- protocol
constexpr std::size_t kSqeSize = 64;
constexpr std::size_t kCqeSize = 16;
constexpr std::size_t kInlineSize = 4096;	// in-capsule data on I/O queues
constexpr std::size_t kSlotData = 32768;	// per-command data buffer (MDTS 3)
constexpr unsigned kMdts = 3;			// 2^3 * 4 KiB = 32 KiB
constexpr unsigned kMqes = 63;			// queue entries, 0's based
constexpr unsigned kLbaShift = 9;
constexpr unsigned kSpares = 16;		// response buffers beyond the slots
constexpr const char *kDiscNqn = "nqn.2014-08.org.nvmexpress.discovery";

enum : uint8_t {
	kOpFlush = 0x00, kOpWrite = 0x01, kOpRead = 0x02,
	kAdmGetLog = 0x02, kAdmIdentify = 0x06, kAdmSetFeat = 0x09,
	kAdmGetFeat = 0x0a, kAdmAer = 0x0c, kAdmKeepAlive = 0x18,
	kAdmCcr = 0x38,		// Cross-Controller Reset (TP8028)
	kOpFabrics = 0x7f,
};
enum : uint8_t { kFcPropSet = 0x00, kFcConnect = 0x01, kFcPropGet = 0x04 };
enum : uint16_t {
	kScSuccess = 0x0, kScInvalidOpcode = 0x1, kScInvalidField = 0x2,
	kScLbaRange = 0x80, kScConnectInvalidParam = 0x182,
	kScDnr = 0x4000,
};

template <typename T> T get(const uint8_t *p, std::size_t off)
{
	T v;
	std::memcpy(&v, p + off, sizeof(v));	// the wire is little-endian, so is x86
	return v;
}
template <typename T> void put(uint8_t *p, std::size_t off, T v)
{
	std::memcpy(p + off, &v, sizeof(v));
}
void put_str(uint8_t *p, std::size_t off, std::size_t len, std::string_view s, char pad)
{
	std::memset(p + off, pad, len);
	std::memcpy(p + off, s.data(), std::min(len, s.size()));
}

// ---------------------------------------------------------------- faults
// Each fault names one way a target can break the protocol.  "when" says
// which command (or CM event) triggers it.
struct FaultSpec {
	const char *name;
	const char *what;
};
constexpr FaultSpec kFaults[] = {
	{"none", "behave"},
	{"reject", "reject every CM connect request with a cycling NVMe/RDMA reject status (incl. unknown ones)"},
	{"accept-short-pd", "accept with 2 bytes of private data"},
	{"accept-no-pd", "accept with no private data"},
	{"accept-bad-pd", "accept with recfmt 0xffff and crqsize 0"},
	{"accept-disconnect", "accept, then disconnect as soon as the connection is established"},
	{"connect-silent", "never answer the CM connect request"},
	{"fabrics-connect-silent", "accept, never answer the Fabrics Connect command"},
	{"fabrics-connect-error", "answer the admin Fabrics Connect with an error status"},
	{"io-connect-bad", "answer an I/O queue's Fabrics Connect with a wrong cntlid and an error"},
	{"cqe-unknown-cid", "complete a read with a command id the host never used"},
	{"cqe-dup", "complete a read 4 times in a row"},
	{"cqe-stale", "once the queue is idle for 1 s, send its last completion again"},
	{"cqe-before-data", "send a read's completion before its data"},
	{"cqe-short", "send a read's completion as an 8-byte message"},
	{"cqe-bad-status", "complete a read with a reserved status code"},
	{"sqhd-garbage", "report a wrong SQ head in every completion"},
	{"write-oob", "RDMA WRITE 4 KiB beyond a read's buffer"},
	{"inv-wrong-rkey", "SEND_WITH_INVALIDATE with an rkey the command does not own"},
	{"aen-storm", "answer every Asynchronous Event Request at once with a namespace-change notice"},
	{"grant-huge", "grant 65535 I/O queues to a Set Features (Number of Queues)"},
	{"grant-zero-io-connect", "grant queues, then reject every I/O queue's CM connect"},
	{"reject-qsize", "reject every I/O queue's CM connect as an invalid host SQ size (0x4)"},
	{"disc-bad-len", "discovery log: return fewer bytes than asked and a numrec beyond them"},
	{"disc-numrec-huge", "discovery log: numrec 2^40 with one entry"},
	{"disc-unterminated", "discovery log: entry strings with no NUL and no padding spaces"},
	{"disc-changes", "discovery log of 5 entries (6 KiB) that changes (genctr 7 -> 8, new NQNs) between the host's 4 KiB chunks"},
	{"rsp-before-connect", "send a completion (cid 0xfffe) on the admin queue and on I/O queue 1 before any answer (at ESTABLISHED or the first command)"},
	{"read-peek", "RDMA READ the host's buffer of a read command before writing the data"},
	{"write-poke", "RDMA WRITE a pattern into the host's buffer of a write command (keyed SGL)"},
	{"junk-stream", "after a read's completion, 150 completions for a command id no command has, back to back"},
	{"connect-late", "answer the admin Fabrics Connect --late-ms late (after the host's timeout)"},
};

struct Config {
	std::string addr = "192.0.2.2";
	std::string port = "4430";
	std::string nqn = "nqn.2014-08.org.nvmexpress.rnvme:hostile";
	std::string fault = "none";
	long fault_count = 1;	// how many times it fires (-1: always)
	long fault_after = 0;	// matching events to let pass first
	std::size_t size_mib = 16;
	unsigned ms = 0;	// metadata bytes per block (extended LBA)
	unsigned pi = 0;	// protection information type (needs ms == 8)
	long fault_qid = -1;	// only commands of this queue trigger it (-1: any)
	unsigned late_ms = 10000;	// connect-late: how late the answer comes
	unsigned dup_gap_ms = 0;	// cqe-dup: time between the copies
	std::string addr2;	// the second path's listener ("": none)
	std::string port2;	// its port ("": --port)
	unsigned slow_path = 0;	// 1 or 2: the path whose writes are held
	unsigned drain_ms = 0;	// how long a held write waits, from its arrival
	unsigned cqt_ms = 0;	// Command Quiesce Time reported (0: none)
	bool log_writes = false;	// log every write (path, controller, LBA)
	bool ccr = false;	// Cross-Controller Reset (CIU/CIRN/CCRL, opcode 0x38)
};

Config cfg;
long fault_seen = 0;
long fault_fired = 0;
int cur_qid = -1;	// the queue whose message is being handled

bool fault_is(std::string_view name) { return cfg.fault == name; }

// One subsystem on two paths: what nvme-core needs to group the controllers.
bool two_paths() { return !cfg.addr2.empty(); }
// NVMe 2.1 when a 2.1 field (CQT) or the namespace identifiers of the two
// paths are reported (NS descriptor lists from 1.3 on); 1.2.1 otherwise, as
// the single-path scenarios always had it.
uint32_t nvme_version() { return two_paths() || cfg.cqt_ms ? 0x00020100 : 0x00010201; }

// fault_fire: a matching event happened; true if the fault fires on it.
bool fault_fire(std::string_view name, const std::string &what)
{
	if (!fault_is(name))
		return false;
	if (cfg.fault_qid >= 0 && cur_qid != cfg.fault_qid)
		return false;
	if (fault_seen++ < cfg.fault_after)
		return false;
	if (cfg.fault_count >= 0 && fault_fired >= cfg.fault_count)
		return false;
	fault_fired++;
	std::printf("fault %s fired (%ld): %s\n", cfg.fault.c_str(), fault_fired, what.c_str());
	std::fflush(stdout);
	return true;
}

void logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void logf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::vprintf(fmt, ap);
	va_end(ap);
	std::fputc('\n', stdout);
	std::fflush(stdout);
}

// ---------------------------------------------------------------- device
struct Device {
	ibv_pd *pd = nullptr;
	ibv_comp_channel *chan = nullptr;
};

// ---------------------------------------------------------------- controller
struct Ctrl {
	uint16_t cntlid = 0;
	bool discovery = false;
	uint32_t cc = 0;
	uint32_t csts = 0;
	unsigned io_granted = 0;
	std::vector<std::pair<struct Conn *, uint16_t>> aers;	// pending AERs
	uint8_t ciu = 0;	// --ccr: Controller Instance Uniquifier (Identify byte 135)
	uint64_t cirn = 0;	// --ccr: Controller Instance Random Number (143:136)
};

std::vector<uint8_t> backing;
std::map<uint16_t, std::unique_ptr<Ctrl>> ctrls;
uint16_t next_cntlid = 1;

// --ccr: what a Cross-Controller Reset needs of each I/O controller, kept
// after its admin queue (and so the Ctrl) is gone: a lost controller whose
// writes still drain must stay resettable.  Forgotten once it is lost, holds
// no write and its CQT (at least 10 s) has passed.
struct CcrCtrl {
	uint8_t ciu;
	uint64_t cirn;
	unsigned path;
	uint64_t lost_ms;	// when its admin queue went away (0: it has not)
	bool reset;		// a CCR has reset it
};
std::map<uint16_t, CcrCtrl> ccr_ctrls;
long ccr_fired;

// ---------------------------------------------------------------- connection
// Peek/Poke: a hostile RDMA READ/WRITE of a host buffer (read-peek,
// write-poke); its success is logged, a failure ends the connection.
enum class WrKind : uint8_t { Recv, Send, Read, Write, Peek, Poke };

struct Conn {
	rdma_cm_id *id = nullptr;
	Device *dev = nullptr;
	ibv_cq *cq = nullptr;
	ibv_mr *mr = nullptr;
	uint8_t *buf = nullptr;		// recvs | responses | data slots
	std::size_t buf_len = 0;
	unsigned depth = 0;		// recv slots
	std::size_t recv_len = 0;
	uint16_t qid = 0;
	uint16_t sqhd = 0;
	unsigned path = 1;		// 1: --addr, 2: --addr2
	uint64_t serial = 0;		// names it beyond its lifetime (held writes)
	Ctrl *ctrl = nullptr;
	uint16_t cntlid = 0;		// its controller's, kept after the controller is gone
	bool ccr_reset = false;		// dropped by a Cross-Controller Reset: executes nothing more
	unsigned cq_events = 0;
	bool disconnect_when_established = false;
	bool gone = false;
	bool early_rsp_done = false;	// rsp-before-connect: looked at for this queue
	// per slot: the command being executed
	std::vector<std::array<uint8_t, kSqeSize>> sqe;
	// completions to send again later (cqe-stale): when the host is idle
	// and the command's tag too
	std::vector<std::pair<uint64_t, std::array<uint8_t, kCqeSize>>> stale;
	unsigned next_spare = 0;
	std::array<uint8_t, kCqeSize> last_cqe{};	// the latest completion sent
	uint64_t last_cmd_ms = 0;		// when the latest command arrived
	std::vector<uint64_t> rcvd_ms;		// per slot: when its command arrived
	unsigned pending = 0;			// commands received, not yet completed
	uint64_t late_due = 0;			// connect-late: when to answer, 0: none
	unsigned late_slot = 0;			// connect-late: the Connect's slot

	// layout of buf: depth receive buffers | depth + kSpares response
	// buffers | depth data slots
	uint8_t *recv_buf(unsigned s) { return buf + s * recv_len; }
	uint8_t *rsp_buf(unsigned s) { return buf + depth * recv_len + s * kCqeSize; }
	uint8_t *data_buf(unsigned s)
	{
		return buf + depth * recv_len + (depth + kSpares) * kCqeSize + s * kSlotData;
	}
	// a response buffer of its own for a message that answers no slot
	// (a second or stale completion, an AEN): rotates over kSpares
	unsigned spare() { return depth + next_spare++ % kSpares; }
};

std::set<Conn *> conns;
std::map<ibv_context *, std::unique_ptr<Device>> devices;
rdma_event_channel *cm_chan;
rdma_cm_id *listen_ids[2];	// --addr, --addr2
uint64_t next_conn_serial = 1;
volatile sig_atomic_t stop_requested;

uint64_t wr_id(WrKind k, unsigned slot) { return (uint64_t(k) << 32) | slot; }

uint64_t now_ms()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

Device *device_for(ibv_context *ctx)
{
	auto &d = devices[ctx];
	if (d)
		return d.get();
	d = std::make_unique<Device>();
	d->pd = ibv_alloc_pd(ctx);
	d->chan = ibv_create_comp_channel(ctx);
	if (!d->pd || !d->chan) {
		logf("error: cannot allocate a PD or completion channel on %s", ibv_get_device_name(ctx->device));
		std::exit(1);
	}
	int fl = fcntl(d->chan->fd, F_GETFL);
	fcntl(d->chan->fd, F_SETFL, fl | O_NONBLOCK);
	return d.get();
}

void conn_destroy(Conn *c)
{
	if (!conns.erase(c))
		return;
	for (auto &[id, ctrl] : ctrls) {
		auto &v = ctrl->aers;
		std::erase_if(v, [c](auto &p) { return p.first == c; });
	}
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq) {
		ibv_ack_cq_events(c->cq, c->cq_events);
		ibv_destroy_cq(c->cq);
	}
	if (c->mr)
		ibv_dereg_mr(c->mr);
	std::free(c->buf);
	if (c->qid == 0 && c->ctrl) {
		// the admin queue owns the controller
		if (auto cc = ccr_ctrls.find(c->ctrl->cntlid); cc != ccr_ctrls.end())
			cc->second.lost_ms = now_ms();
		ctrls.erase(c->ctrl->cntlid);
		for (Conn *o : conns)
			if (o->ctrl == c->ctrl)
				o->ctrl = nullptr;
	}
	if (c->id)
		rdma_destroy_id(c->id);
	delete c;
}

bool post_recv(Conn *c, unsigned slot)
{
	ibv_sge sge{reinterpret_cast<uintptr_t>(c->recv_buf(slot)), uint32_t(c->recv_len), c->mr->lkey};
	ibv_recv_wr wr{}, *bad;
	wr.wr_id = wr_id(WrKind::Recv, slot);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	int r = ibv_post_recv(c->id->qp, &wr, &bad);
	if (r)
		logf("qid %u: post_recv failed (%d)", c->qid, r);
	return r == 0;
}

// send_cqe: the 16-byte completion of the command in slot (from rsp_buf).
bool send_msg(Conn *c, unsigned slot, const uint8_t *msg, uint32_t len,
	      std::optional<uint32_t> inv_rkey = std::nullopt)
{
	uint8_t *rsp = c->rsp_buf(slot);
	if (msg != rsp)
		std::memcpy(rsp, msg, std::min<std::size_t>(len, kCqeSize));
	ibv_sge sge{reinterpret_cast<uintptr_t>(rsp), len, c->mr->lkey};
	ibv_send_wr wr{}, *bad;
	wr.wr_id = wr_id(WrKind::Send, slot);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = inv_rkey ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
	if (inv_rkey)
		wr.invalidate_rkey = *inv_rkey;
	wr.send_flags = IBV_SEND_SIGNALED;
	int r = ibv_post_send(c->id->qp, &wr, &bad);
	if (r)
		logf("qid %u: post_send failed (%d)", c->qid, r);
	return r == 0;
}

// Keyed SGL of a command: the host buffer for RDMA READ/WRITE.
struct Keyed {
	uint64_t addr;
	uint32_t len;
	uint32_t key;
	bool invalidate;
};
std::optional<Keyed> keyed_sgl(const uint8_t *sqe)
{
	uint8_t type = sqe[24 + 15];
	if ((type >> 4) != 0x4)
		return std::nullopt;
	Keyed k{};
	k.addr = get<uint64_t>(sqe, 24);
	k.len = uint32_t(sqe[32]) | uint32_t(sqe[33]) << 8 | uint32_t(sqe[34]) << 16;
	k.key = get<uint32_t>(sqe, 35);
	k.invalidate = (type & 0xf) == 0xf;
	return k;
}
// In-capsule (offset) SGL: data in the receive buffer after the SQE.
std::optional<std::pair<uint32_t, uint32_t>> inline_sgl(const uint8_t *sqe)
{
	uint8_t type = sqe[24 + 15];
	if (type != 0x01)
		return std::nullopt;
	return std::make_pair(uint32_t(get<uint64_t>(sqe, 24)), get<uint32_t>(sqe, 32));
}

bool rdma_op(Conn *c, unsigned slot, WrKind kind, uint8_t *local, uint32_t len,
	     uint64_t raddr, uint32_t rkey, bool signaled)
{
	ibv_sge sge{reinterpret_cast<uintptr_t>(local), len, c->mr->lkey};
	ibv_send_wr wr{}, *bad;
	wr.wr_id = wr_id(kind, slot);
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	bool read = kind == WrKind::Read || kind == WrKind::Peek;
	wr.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	int r = ibv_post_send(c->id->qp, &wr, &bad);
	if (r)
		logf("qid %u: post RDMA %s failed (%d)", c->qid, read ? "READ" : "WRITE", r);
	return r == 0;
}

// ---------------------------------------------------------------- responses
void make_cqe(uint8_t *cqe, const uint8_t *sqe, Conn *c, uint16_t status, uint64_t result)
{
	std::memset(cqe, 0, kCqeSize);
	put<uint64_t>(cqe, 0, result);
	c->sqhd = uint16_t((c->sqhd + 1) % (c->depth ? c->depth : 1));
	bool garbage = fault_is("sqhd-garbage");
	if (garbage && c->qid && !fault_fired)
		fault_fire("sqhd-garbage", "every completion from here on reports SQ head 0xfff0 + n");
	put<uint16_t>(cqe, 8, garbage ? uint16_t(0xfff0 + (c->sqhd & 0xf)) : c->sqhd);
	put<uint16_t>(cqe, 10, c->qid);
	put<uint16_t>(cqe, 12, get<uint16_t>(sqe, 2));
	put<uint16_t>(cqe, 14, uint16_t(status << 1));
}

void complete(Conn *c, unsigned slot, uint16_t status, uint64_t result = 0)
{
	const uint8_t *sqe = c->sqe[slot].data();
	uint8_t cqe[kCqeSize];
	make_cqe(cqe, sqe, c, status, result);
	auto k = keyed_sgl(sqe);
	std::optional<uint32_t> inv;
	if (k && k->invalidate && k->len)
		inv = k->key;
	if (inv && c->qid && sqe[0] != kOpFabrics && fault_fire("inv-wrong-rkey", "qid " + std::to_string(c->qid) + " cid " +
			      std::to_string(get<uint16_t>(sqe, 2)) + ": invalidate rkey " +
			      std::to_string(*inv ^ 0x5a5a00) + " instead of " + std::to_string(*inv)))
		inv = *inv ^ 0x5a5a00;
	send_msg(c, slot, cqe, kCqeSize, inv);
	std::memcpy(c->last_cqe.data(), cqe, kCqeSize);
	if (c->pending)
		c->pending--;
}

// Data from the target to the host (identify, log pages, reads): RDMA WRITE
// then the completion, in that order on the QP.
void reply_data(Conn *c, unsigned slot, const uint8_t *data, uint32_t len, uint16_t status = 0)
{
	const uint8_t *sqe = c->sqe[slot].data();
	auto k = keyed_sgl(sqe);
	if (!k) {
		complete(c, slot, kScInvalidField | kScDnr);
		return;
	}
	len = std::min<uint32_t>(len, k->len);
	uint8_t *dst = c->data_buf(slot);
	if (data != dst)
		std::memcpy(dst, data, len);
	if (len)
		rdma_op(c, slot, WrKind::Write, dst, len, k->addr, k->key, false);
	complete(c, slot, status);
}

// ---------------------------------------------------------------- admin
void identify_ctrl(Conn *c, uint8_t *id)
{
	std::memset(id, 0, 4096);
	put<uint16_t>(id, 0, 0x1af4);
	put<uint16_t>(id, 2, 0x1af4);
	put_str(id, 4, 20, "HOSTILE0001", ' ');
	put_str(id, 24, 40, "rnvme hostile test target", ' ');
	put_str(id, 64, 8, "1.0", ' ');
	id[77] = kMdts;
	put<uint16_t>(id, 78, c->ctrl->cntlid);
	// 1.2.1: no ns descriptors; 2.1 with two paths or a CQT (no ANA either way)
	put<uint32_t>(id, 80, nvme_version());
	if (two_paths() && !c->ctrl->discovery)
		id[76] = 1u << 1;	// CMIC: may have two or more controllers
	put<uint32_t>(id, 92, 1u << 8);		// OAES: namespace attribute notices
	id[111] = c->ctrl->discovery ? 2 : 1;	// CNTRLTYPE
	id[259] = 3;				// AERL: 4 outstanding
	put<uint16_t>(id, 320, 10);		// KAS: 1 s units of 100 ms
	// CQT (NVMe 2.1, TP4129): bytes 387:386, in milliseconds
	if (!c->ctrl->discovery)
		put<uint16_t>(id, 386, uint16_t(cfg.cqt_ms));
	// CCR (TP8028): CIU byte 135, CIRN bytes 143:136, CCRL byte 1807
	if (cfg.ccr && !c->ctrl->discovery) {
		id[135] = c->ctrl->ciu;
		put<uint64_t>(id, 136, c->ctrl->cirn);
		id[1807] = 4;
	}
	id[512] = 0x66;
	id[513] = 0x44;
	put<uint16_t>(id, 514, kMqes + 1);	// MAXCMD
	put<uint32_t>(id, 516, c->ctrl->discovery ? 0 : 1);	// NN
	put<uint32_t>(id, 536, (1u << 0) | (1u << 2) | (1u << 20));	// SGLS: keyed, offset
	put_str(id, 768, 256, c->ctrl->discovery ? kDiscNqn : cfg.nqn, '\0');
	put<uint32_t>(id, 1792, uint32_t((kSqeSize + kInlineSize) / 16));	// IOCCSZ
	put<uint32_t>(id, 1796, uint32_t(kCqeSize / 16));			// IORCSZ
	id[1802] = 0;	// FCATT: dynamic controller model
	id[1803] = 1;	// MSDBD
}

// The namespace's identifiers, the same on every path: EUI-64, NGUID and
// UUID made from the subsystem NQN (FNV-1a), so that another NQN gets others.
struct NsIds {
	uint8_t eui64[8], nguid[16], uuid[16];
};
NsIds ns_ids()
{
	auto fnv = [](std::string_view s, uint64_t h) {
		for (unsigned char ch : s)
			h = (h ^ ch) * 0x100000001b3ull;
		return h;
	};
	uint64_t a = fnv(cfg.nqn, 0xcbf29ce484222325ull), b = fnv(cfg.nqn + "/ns1", a);
	NsIds ids{};
	std::memcpy(ids.eui64, &a, 8);
	std::memcpy(ids.nguid, &b, 8);
	std::memcpy(ids.nguid + 8, &a, 8);
	std::memcpy(ids.uuid, &a, 8);
	std::memcpy(ids.uuid + 8, &b, 8);
	ids.uuid[6] = uint8_t((ids.uuid[6] & 0x0f) | 0x40);	// version 4
	ids.uuid[8] = uint8_t((ids.uuid[8] & 0x3f) | 0x80);	// RFC 4122 variant
	return ids;
}

// Identify CNS 3: the namespace identification descriptor list.
void identify_ns_descs(uint8_t *d)
{
	std::memset(d, 0, 4096);
	NsIds ids = ns_ids();
	std::size_t pos = 0;
	auto add = [&](uint8_t type, const uint8_t *v, uint8_t len) {
		d[pos] = type;	// NIDT
		d[pos + 1] = len;	// NIDL
		std::memcpy(d + pos + 4, v, len);
		pos += 4 + len;
	};
	add(1, ids.eui64, 8);
	add(2, ids.nguid, 16);
	add(3, ids.uuid, 16);
}

void identify_ns(uint8_t *id)
{
	std::memset(id, 0, 4096);
	if (two_paths()) {
		NsIds ids = ns_ids();
		id[30] = 1u << 0;	// NMIC: shared by two or more controllers
		std::memcpy(id + 104, ids.nguid, 16);
		std::memcpy(id + 120, ids.eui64, 8);
	}
	uint64_t nlb = backing.size() >> kLbaShift;
	put<uint64_t>(id, 0, nlb);
	put<uint64_t>(id, 8, nlb);
	put<uint64_t>(id, 16, nlb);
	id[128 + 2] = kLbaShift;	// LBAF0: LBADS
	if (cfg.ms) {
		put<uint16_t>(id, 128, uint16_t(cfg.ms));	// LBAF0: MS
		id[26] = 1u << 4;	// FLBAS: metadata at the end of each block
		id[27] = 1u << 0;	// MC: extended LBA
		id[29] = uint8_t(cfg.pi);	// DPS: PI type, PI in the last 8 bytes
		id[28] = cfg.pi ? uint8_t(1u << (cfg.pi - 1)) : 0;	// DPC
	}
}

unsigned disc_version;	// disc-changes: the log's version (genctr 7 + it)

void discovery_log(Conn *c, unsigned slot, uint64_t offset, uint32_t len)
{
	// header + one entry: the hostile subsystem on this address (disc-changes:
	// five entries, the log changing while the host reads it in chunks)
	const bool changes = fault_is("disc-changes");
	if (changes && offset > 0 &&
	    fault_fire("disc-changes", "the log changes (genctr " + std::to_string(7 + disc_version) + " -> " +
					   std::to_string(8 + disc_version) + ") before the read at offset " +
					   std::to_string(offset)))
		disc_version++;
	const unsigned nent = changes ? 5 : 1;
	std::vector<uint8_t> page(1024 * (1 + nent), 0);
	uint64_t numrec = nent;
	put<uint64_t>(page.data(), 0, 7 + disc_version);	// genctr
	put<uint16_t>(page.data(), 16, 0);	// recfmt
	// entry 0 is the hostile subsystem; disc-changes' others carry the version
	for (unsigned i = 0; i < nent; i++) {
		uint8_t *x = page.data() + 1024 * (1 + i);
		x[0] = 1;	// TRTYPE rdma
		x[1] = 1;	// ADRFAM ipv4
		x[2] = 2;	// SUBTYPE nvme subsystem
		put<uint16_t>(x, 4, uint16_t(1 + i));
		put<uint16_t>(x, 6, 0xffff);
		put<uint16_t>(x, 8, kMqes + 1);
		put_str(x, 32, 32, cfg.port, ' ');
		put_str(x, 256, 256,
			i ? cfg.nqn + ":e" + std::to_string(i) + ":v" + std::to_string(disc_version) : cfg.nqn, '\0');
		put_str(x, 512, 256, cfg.addr, ' ');
		x[768] = 1;	// QPTYPE connected
		x[770] = 1;	// CMS rdma_cm
	}
	uint8_t *e = page.data() + 1024;
	uint32_t give = len;
	if (fault_fire("disc-bad-len", "discovery log of " + std::to_string(len) + " bytes asked: numrec 3, " +
		       std::to_string(std::min<uint32_t>(len, 1500)) + " bytes sent")) {
		numrec = 3;
		give = std::min<uint32_t>(len, 1500);
	} else if (fault_fire("disc-numrec-huge", "numrec 2^40")) {
		numrec = uint64_t(1) << 40;
	} else if (fault_fire("disc-unterminated", "strings without NUL or padding")) {
		std::memset(e + 32, 'P', 32);
		std::memset(e + 256, 'N', 256);
		std::memset(e + 512, 'A', 256);
	}
	put<uint64_t>(page.data(), 8, numrec);
	std::vector<uint8_t> out(len, 0);
	for (uint32_t i = 0; i < len && offset + i < page.size(); i++)
		out[i] = page[offset + i];
	const uint8_t *sqe = c->sqe[slot].data();
	auto k = keyed_sgl(sqe);
	if (!k || len > kSlotData) {
		complete(c, slot, kScInvalidField | kScDnr);
		return;
	}
	std::memcpy(c->data_buf(slot), out.data(), len);
	if (give)
		rdma_op(c, slot, WrKind::Write, c->data_buf(slot), std::min(give, k->len), k->addr, k->key, false);
	complete(c, slot, kScSuccess);
}

void aen_answer(Ctrl *ctrl)
{
	while (!ctrl->aers.empty()) {
		auto [c, cid] = ctrl->aers.back();
		ctrl->aers.pop_back();
		uint8_t cqe[kCqeSize] = {};
		// Notice (type 2), info 0 (namespace attribute changed), log 4
		put<uint32_t>(cqe, 0, 0x2u | (0x0u << 8) | (0x04u << 16));
		put<uint16_t>(cqe, 12, cid);
		// the AER's receive slot was recycled long ago: a spare buffer
		send_msg(c, c->spare(), cqe, kCqeSize);
	}
}

void exec_ccr(Conn *c, unsigned slot);

void exec_admin(Conn *c, unsigned slot)
{
	const uint8_t *sqe = c->sqe[slot].data();
	uint8_t opc = sqe[0];
	Ctrl *ctrl = c->ctrl;
	uint32_t cdw10 = get<uint32_t>(sqe, 40);
	uint32_t cdw11 = get<uint32_t>(sqe, 44);
	switch (opc) {
	case kAdmIdentify: {
		uint8_t cns = cdw10 & 0xff;
		uint8_t *d = c->data_buf(slot);
		if (cns == 1) {
			identify_ctrl(c, d);
		} else if (cns == 0 && !ctrl->discovery && get<uint32_t>(sqe, 4) == 1) {
			identify_ns(d);
		} else if (cns == 3 && !ctrl->discovery && nvme_version() >= 0x00010300 &&
			   get<uint32_t>(sqe, 4) == 1) {
			identify_ns_descs(d);
		} else if (cns == 2 && !ctrl->discovery) {
			std::memset(d, 0, 4096);
			if (get<uint32_t>(sqe, 4) < 1)
				put<uint32_t>(d, 0, 1);
		} else {
			complete(c, slot, kScInvalidField | kScDnr);
			return;
		}
		reply_data(c, slot, d, 4096);
		return;
	}
	case kAdmSetFeat: {
		uint8_t fid = cdw10 & 0xff;
		if (fid == 0x07) {
			unsigned want = std::min(cdw11 & 0xffff, cdw11 >> 16) + 1;
			unsigned grant = std::min(want, 4u);
			ctrl->io_granted = grant;
			uint32_t res = (grant - 1) | (grant - 1) << 16;
			if (fault_fire("grant-huge", "asked " + std::to_string(want) + " I/O queues, granting 65535"))
				res = 0xfffeu | 0xfffeu << 16;
			complete(c, slot, kScSuccess, res);
			return;
		}
		complete(c, slot, kScSuccess);
		return;
	}
	case kAdmGetFeat:
		complete(c, slot, kScSuccess);
		return;
	case kAdmKeepAlive:
		complete(c, slot, kScSuccess);
		return;
	case kAdmCcr:
		if (!cfg.ccr || ctrl->discovery)
			break;	// an unknown opcode, as without --ccr
		exec_ccr(c, slot);
		return;
	case kAdmAer:
		ctrl->aers.emplace_back(c, get<uint16_t>(sqe, 2));
		if (fault_is("aen-storm") && fault_fire("aen-storm", "AER cid " + std::to_string(get<uint16_t>(sqe, 2)) + " answered at once"))
			aen_answer(ctrl);
		return;
	case kAdmGetLog: {
		uint8_t lid = cdw10 & 0xff;
		uint32_t numd = ((cdw10 >> 16) | (get<uint32_t>(sqe, 44) & 0xffff) << 16) + 1;
		uint64_t off = get<uint32_t>(sqe, 48) | uint64_t(get<uint32_t>(sqe, 52)) << 32;
		uint32_t len = numd * 4;
		if (lid == 0x70 && ctrl->discovery) {
			discovery_log(c, slot, off, len);
			return;
		}
		if (len > kSlotData) {
			complete(c, slot, kScInvalidField | kScDnr);
			return;
		}
		std::memset(c->data_buf(slot), 0, len);
		reply_data(c, slot, c->data_buf(slot), len);
		return;
	}
	default:
		break;
	}
	complete(c, slot, kScInvalidOpcode | kScDnr);
}

// ---------------------------------------------------------------- fabrics
void exec_connect(Conn *c, unsigned slot, const uint8_t *data)
{
	const uint8_t *sqe = c->sqe[slot].data();
	uint16_t qid = get<uint16_t>(sqe, 42);
	std::string subnqn(reinterpret_cast<const char *>(data + 256), strnlen(reinterpret_cast<const char *>(data + 256), 256));
	if (qid != c->qid) {
		complete(c, slot, kScConnectInvalidParam | kScDnr);
		return;
	}
	if (qid == 0) {
		if (fault_is("fabrics-connect-silent") && fault_fire("fabrics-connect-silent", "admin Connect not answered"))
			return;
		if (fault_is("connect-late") &&
		    fault_fire("connect-late", "admin Connect to be answered " + std::to_string(cfg.late_ms) + " ms late")) {
			c->late_due = now_ms() + cfg.late_ms;
			c->late_slot = slot;
			return;
		}
		if (fault_fire("fabrics-connect-error", "admin Connect answered with status 0x182 (invalid parameters)")) {
			complete(c, slot, kScConnectInvalidParam | kScDnr);
			return;
		}
		bool disc = subnqn == kDiscNqn;
		if (!disc && subnqn != cfg.nqn) {
			logf("connect: unknown subsystem '%s'", subnqn.c_str());
			complete(c, slot, 0x184 | kScDnr);	// invalid host/subsystem
			return;
		}
		auto ctrl = std::make_unique<Ctrl>();
		ctrl->cntlid = next_cntlid++;
		if (next_cntlid >= 0xffef)
			next_cntlid = 1;
		ctrl->discovery = disc;
		c->ctrl = ctrl.get();
		uint16_t id = ctrl->cntlid;
		c->cntlid = id;
		if (cfg.ccr && !disc) {
			static std::mt19937_64 rng{std::random_device{}()};
			ctrl->ciu = uint8_t(1 + rng() % 255);
			ctrl->cirn = rng();
			ccr_ctrls[id] = CcrCtrl{ctrl->ciu, ctrl->cirn, c->path, 0, false};
		}
		ctrls[id] = std::move(ctrl);
		if (two_paths())
			logf("qid 0: controller %u for %s on path %u", id, subnqn.c_str(), c->path);
		else
			logf("qid 0: controller %u for %s", id, subnqn.c_str());
		if (cfg.ccr && !disc)
			logf("ccr: controller %u reports CIU %u CIRN %#llx", id, c->ctrl->ciu,
			     (unsigned long long)c->ctrl->cirn);
		complete(c, slot, kScSuccess, id);
		return;
	}
	uint16_t cntlid = get<uint16_t>(data, 16);
	auto it = ctrls.find(cntlid);
	if (it == ctrls.end() || qid > it->second->io_granted) {
		logf("qid %u: connect to controller %u refused", qid, cntlid);
		complete(c, slot, kScConnectInvalidParam | kScDnr);
		return;
	}
	if (fault_fire("io-connect-bad", "I/O queue " + std::to_string(qid) + " Connect answered with cntlid 0xbeef and status 0x182")) {
		complete(c, slot, kScConnectInvalidParam | kScDnr, 0xbeef);
		return;
	}
	c->ctrl = it->second.get();
	c->cntlid = cntlid;
	complete(c, slot, kScSuccess, cntlid);
}

void exec_fabrics(Conn *c, unsigned slot, const uint8_t *data)
{
	const uint8_t *sqe = c->sqe[slot].data();
	uint8_t fctype = sqe[4];
	if (fctype == kFcConnect) {
		exec_connect(c, slot, data);
		return;
	}
	Ctrl *ctrl = c->ctrl;
	if (!ctrl) {
		complete(c, slot, 0x0c | kScDnr);	// command sequence error
		return;
	}
	uint32_t off = get<uint32_t>(sqe, 44);
	if (fctype == kFcPropGet) {
		uint64_t v = 0;
		switch (off) {
		case 0x0:	// CAP: MQES, CQR, TO 10 s, CSS NVM
			v = kMqes | (1ull << 16) | (20ull << 24) | (1ull << 37);
			break;
		case 0x8:
			v = nvme_version();
			break;
		case 0x14:
			v = ctrl->cc;
			break;
		case 0x1c:
			v = ctrl->csts;
			break;
		}
		complete(c, slot, kScSuccess, v);
		return;
	}
	if (fctype == kFcPropSet) {
		uint64_t v = get<uint64_t>(sqe, 48);
		if (off == 0x14) {
			ctrl->cc = uint32_t(v);
			ctrl->csts = (ctrl->cc & 1) ? 1 : 0;
			if ((ctrl->cc >> 14) & 3)
				ctrl->csts |= 2u << 2;	// shutdown complete
		}
		complete(c, slot, kScSuccess);
		return;
	}
	complete(c, slot, kScInvalidField | kScDnr);
}

// ---------------------------------------------------------------- draining
// A write the slow path's controller has taken (data and all) but not yet
// executed.  It outlives its connection and controller: conn_serial finds
// the connection again if it still exists when the write is applied.
struct Held {
	uint64_t conn_serial;
	uint16_t cntlid;	// the controller that holds it
	std::array<uint8_t, kSqeSize> sqe;
	std::vector<uint8_t> data;
	uint64_t off;
	uint64_t rcvd_ms, due_ms;
	std::string what;	// path, controller, queue, command, LBAs
};
std::vector<Held> held;
long drain_holds, drain_applies;

void hold_write(Conn *c, unsigned slot, const uint8_t *data, uint64_t off, uint64_t len)
{
	const uint8_t *sqe = c->sqe[slot].data();
	Held h;
	h.conn_serial = c->serial;
	h.cntlid = c->ctrl ? c->ctrl->cntlid : c->cntlid;
	std::memcpy(h.sqe.data(), sqe, kSqeSize);
	h.data.assign(data, data + len);
	h.off = off;
	h.rcvd_ms = c->rcvd_ms[slot];
	h.due_ms = h.rcvd_ms + cfg.drain_ms;
	char w[160];
	std::snprintf(w, sizeof(w), "path %u controller %u qid %u cid %#x: write slba %llu nlb %u (first byte %#04x)",
		      c->path, c->ctrl ? c->ctrl->cntlid : 0, c->qid, get<uint16_t>(sqe, 2),
		      (unsigned long long)get<uint64_t>(sqe, 40), (get<uint32_t>(sqe, 48) & 0xffff) + 1,
		      len ? data[0] : 0);
	h.what = w;
	std::printf("fault drain-hold fired (%ld): %s held, to be applied and completed %u ms after its arrival "
		    "(CQT %u ms); %zu held\n", ++drain_holds, h.what.c_str(), cfg.drain_ms, cfg.cqt_ms, held.size() + 1);
	std::fflush(stdout);
	held.push_back(std::move(h));
}

// Apply (and complete, if its connection is still there) every held write
// that is due; returns the time until the next one (-1: none).
int drain_due()
{
	uint64_t now = now_ms();
	for (auto it = held.begin(); it != held.end();) {
		if (it->due_ms > now) {
			++it;
			continue;
		}
		std::memcpy(backing.data() + it->off, it->data.data(), it->data.size());
		Conn *c = nullptr;
		for (Conn *o : conns)
			if (o->serial == it->conn_serial && !o->gone)
				c = o;
		std::printf("fault drain-apply fired (%ld): %s applied %llu ms after its arrival; %s\n", ++drain_applies,
			    it->what.c_str(), (unsigned long long)(now - it->rcvd_ms),
			    c ? "its completion sent on its connection" : "its connection is gone: no completion");
		std::fflush(stdout);
		if (c) {
			cur_qid = c->qid;
			uint8_t cqe[kCqeSize];
			make_cqe(cqe, it->sqe.data(), c, kScSuccess, 0);
			auto k = keyed_sgl(it->sqe.data());
			std::optional<uint32_t> inv;
			if (k && k->invalidate && k->len)
				inv = k->key;
			// the command's own slot has long been reused: a spare buffer
			send_msg(c, c->spare(), cqe, kCqeSize, inv);
			std::memcpy(c->last_cqe.data(), cqe, kCqeSize);
			if (c->pending)
				c->pending--;
		}
		it = held.erase(it);
	}
	uint64_t next = UINT64_MAX;
	for (auto &h : held)
		next = std::min(next, h.due_ms);
	return next == UINT64_MAX ? -1 : int(std::min<uint64_t>(next - now, 200));
}

// ---------------------------------------------------------------- CCR
// Cross-Controller Reset (TP8028), --ccr: the controller of connection c
// resets the impacted controller ICID when CIU and CIRN match what ICID
// reported.  It aborts what ICID still holds (its draining writes are never
// applied) and drops ICID's connections; done before the completion, so
// IRS (immediate reset successful, CQE DW0 bit 0) is set.
void exec_ccr(Conn *c, unsigned slot)
{
	const uint8_t *sqe = c->sqe[slot].data();
	uint32_t cdw10 = get<uint32_t>(sqe, 40);
	uint16_t icid = uint16_t(cdw10 & 0xffff);
	uint8_t ciu = uint8_t(cdw10 >> 16);
	uint64_t cirn = get<uint32_t>(sqe, 48) | uint64_t(get<uint32_t>(sqe, 52)) << 32;
	uint16_t src = c->ctrl->cntlid;
	uint64_t now = now_ms();
	// forget the lost controllers that hold nothing and are past their CQT
	std::erase_if(ccr_ctrls, [now](const auto &e) {
		const CcrCtrl &x = e.second;
		if (!x.lost_ms || now - x.lost_ms < std::max<uint64_t>(cfg.cqt_ms, 10000))
			return false;
		return std::none_of(held.begin(), held.end(), [&e](const Held &h) { return h.cntlid == e.first; });
	});
	char ask[160];
	std::snprintf(ask, sizeof(ask), "controller %u asked to reset controller %u (CIU %u CIRN %#llx)", src, icid,
		      ciu, (unsigned long long)cirn);
	auto it = ccr_ctrls.find(icid);
	const char *why = nullptr;
	if (icid == src)
		why = "the impacted controller is the source controller";
	else if (it == ccr_ctrls.end())
		why = "no such controller in this subsystem";
	else if (it->second.ciu != ciu || it->second.cirn != cirn)
		why = "CIU/CIRN do not match what it reported";
	if (why) {
		std::string known;
		if (it != ccr_ctrls.end() && icid != src) {
			char k[96];
			std::snprintf(k, sizeof(k), " (it reported CIU %u CIRN %#llx)", it->second.ciu,
				      (unsigned long long)it->second.cirn);
			known = k;
		}
		logf("ccr refused: %s: %s%s: Invalid Field", ask, why, known.c_str());
		complete(c, slot, kScInvalidField | kScDnr);
		return;
	}
	CcrCtrl &imp = it->second;
	// its held writes: aborted by the reset, never applied nor completed
	std::vector<std::string> gone_writes;
	for (auto h = held.begin(); h != held.end();) {
		if (h->cntlid != icid) {
			++h;
			continue;
		}
		gone_writes.push_back(h->what + " discarded " + std::to_string(now - h->rcvd_ms) +
				      " ms after its arrival, never applied");
		h = held.erase(h);
	}
	// its connections that are left
	unsigned dropped = 0;
	if (auto ct = ctrls.find(icid); ct != ctrls.end())
		ct->second->io_granted = 0;	// no I/O queue may connect to it again
	for (Conn *o : conns) {
		if (o->cntlid != icid || o->ccr_reset)
			continue;
		o->ccr_reset = true;
		if (!o->gone) {
			o->gone = true;
			rdma_disconnect(o->id);
			dropped++;
		}
	}
	bool again = imp.reset;
	imp.reset = true;
	std::string state = imp.lost_ms ? "its admin queue gone " + std::to_string(now - imp.lost_ms) + " ms before"
					 : "its admin queue still connected";
	std::printf("fault ccr fired (%ld): controller %u reset controller %u: %zu held writes discarded; "
		    "%u connection(s) dropped (path %u, %s%s); completed with IRS=1\n",
		    ++ccr_fired, src, icid, gone_writes.size(), dropped, imp.path, state.c_str(),
		    again ? ", reset before" : "");
	for (std::size_t i = 0; i < gone_writes.size(); i++)
		std::printf("fault ccr-discard fired (%zu): %s\n", i + 1, gone_writes[i].c_str());
	std::fflush(stdout);
	complete(c, slot, kScSuccess, 1);	// CQE DW0 bit 0: IRS
}

// ---------------------------------------------------------------- I/O
void exec_io(Conn *c, unsigned slot, const uint8_t *data)
{
	const uint8_t *sqe = c->sqe[slot].data();
	uint8_t opc = sqe[0];
	uint16_t cid = get<uint16_t>(sqe, 2);
	if (opc == kOpFlush) {
		complete(c, slot, kScSuccess);
		return;
	}
	if (opc != kOpRead && opc != kOpWrite) {
		complete(c, slot, kScInvalidOpcode | kScDnr);
		return;
	}
	uint64_t slba = get<uint64_t>(sqe, 40);
	uint32_t nlb = (get<uint32_t>(sqe, 48) & 0xffff) + 1;
	uint64_t off = slba << kLbaShift;
	uint64_t len = uint64_t(nlb) << kLbaShift;
	if (off + len > backing.size() || len > kSlotData) {
		complete(c, slot, kScLbaRange | kScDnr);
		return;
	}
	if (cfg.ms) {
		// With metadata the host must either send it or, for PI-only
		// metadata, set PRACT so that the controller inserts and strips it
		// (then only the data travels).  This target keeps no metadata.
		bool pract = get<uint32_t>(sqe, 48) & (1u << 29);
		if (!cfg.pi || !pract) {
			logf("qid %u cid %u: %s on a namespace with %u bytes of metadata: refused", c->qid, cid,
			     pract ? "PRACT without PI" : "no PRACT", cfg.ms);
			complete(c, slot, kScInvalidField | kScDnr);
			return;
		}
	}
	if (opc == kOpWrite) {
		if (cfg.drain_ms && c->path == cfg.slow_path) {
			hold_write(c, slot, data, off, len);
			return;
		}
		std::memcpy(backing.data() + off, data, len);
		if (cfg.log_writes)
			logf("path %u controller %u qid %u cid %#x: write slba %llu nlb %u (first byte %#04x) applied and completed at once",
			     c->path, c->ctrl ? c->ctrl->cntlid : 0, c->qid, cid, (unsigned long long)slba, nlb,
			     len ? data[0] : 0);
		auto wk = keyed_sgl(sqe);
		if (wk && wk->len && fault_fire("write-poke", "qid " + std::to_string(c->qid) + " write cid " +
						std::to_string(cid) + ": RDMA WRITE of 0x5a into the host's " +
						std::to_string(wk->len) + "-byte source buffer (rkey " +
						std::to_string(wk->key) + ")")) {
			uint8_t *pat = c->data_buf(slot);
			uint32_t n = std::min<uint32_t>(wk->len, kSlotData);
			std::memset(pat, 0x5a, n);
			rdma_op(c, slot, WrKind::Poke, pat, n, wk->addr, wk->key, true);
		}
		complete(c, slot, kScSuccess);
		return;
	}
	auto k = keyed_sgl(sqe);
	if (!k) {
		complete(c, slot, kScInvalidField | kScDnr);
		return;
	}
	uint8_t *dst = c->data_buf(slot);
	std::memcpy(dst, backing.data() + off, len);
	std::string where = "qid " + std::to_string(c->qid) + " read cid " + std::to_string(cid);
	uint8_t cqe[kCqeSize];
	if (fault_fire("cqe-unknown-cid", where + " answered as cid 0xfffe")) {
		make_cqe(cqe, sqe, c, kScSuccess, 0);
		put<uint16_t>(cqe, 12, 0xfffe);
		rdma_op(c, slot, WrKind::Write, dst, uint32_t(len), k->addr, k->key, false);
		send_msg(c, slot, cqe, kCqeSize);
		return;
	}
	if (fault_fire("cqe-before-data", where + ": completion first, data 50 ms later")) {
		make_cqe(cqe, sqe, c, kScSuccess, 0);
		send_msg(c, slot, cqe, kCqeSize);
		usleep(50000);
		rdma_op(c, slot, WrKind::Write, dst, uint32_t(len), k->addr, k->key, false);
		return;
	}
	if (fault_fire("cqe-short", where + ": 8-byte completion")) {
		rdma_op(c, slot, WrKind::Write, dst, uint32_t(len), k->addr, k->key, false);
		make_cqe(cqe, sqe, c, kScSuccess, 0);
		send_msg(c, slot, cqe, 8);
		return;
	}
	if (fault_fire("cqe-bad-status", where + ": status 0x7f (reserved generic status)")) {
		rdma_op(c, slot, WrKind::Write, dst, uint32_t(len), k->addr, k->key, false);
		complete(c, slot, 0x7f);
		return;
	}
	if (fault_fire("write-oob", where + ": RDMA WRITE of " + std::to_string(len + 4096) + " bytes into a " +
		       std::to_string(k->len) + "-byte buffer")) {
		rdma_op(c, slot, WrKind::Write, dst, uint32_t(std::min<uint64_t>(len + 4096, kSlotData)), k->addr, k->key, false);
		complete(c, slot, kScSuccess);
		return;
	}
	if (fault_fire("read-peek", where + ": RDMA READ of the host's " + std::to_string(k->len) +
		       "-byte buffer (rkey " + std::to_string(k->key) + ") before the data")) {
		// into the slot's spare half: dst holds the data to send
		rdma_op(c, slot, WrKind::Peek, dst + kSlotData / 2, std::min<uint32_t>(k->len, kSlotData / 2),
			k->addr, k->key, true);
	}
	rdma_op(c, slot, WrKind::Write, dst, uint32_t(len), k->addr, k->key, false);
	if (fault_fire("cqe-dup", where + " completed 4 times in a row")) {
		make_cqe(cqe, sqe, c, kScSuccess, 0);
		send_msg(c, slot, cqe, kCqeSize);
		// the copies from spare buffers (the slot's own is in flight); a
		// burst makes it likely that the host sees a copy while the
		// command is still in flight, not only after it ended
		for (int i = 0; i < 3; i++) {
			if (cfg.dup_gap_ms)
				usleep(cfg.dup_gap_ms * 1000);
			send_msg(c, c->spare(), cqe, kCqeSize);
		}
		return;
	}
	if (fault_fire("junk-stream", where + ": completed, then 150 completions for cid 0xfffe")) {
		complete(c, slot, kScSuccess);
		make_cqe(cqe, sqe, c, kScSuccess, 0);
		put<uint16_t>(cqe, 12, uint16_t(0xfffe));
		// the send queue holds depth * 3 + 4: 150 fit with the slots'
		for (int i = 0; i < 150; i++)
			if (!send_msg(c, c->spare(), cqe, kCqeSize))
				break;
		return;
	}
	if (fault_fire("cqe-stale", where + ": once the queue is idle for 1 s, its last completion is sent again")) {
		auto &st = c->stale.emplace_back();
		st.first = now_ms() + 1000;
	}
	complete(c, slot, kScSuccess);
}

// Send the stale completions that are due.
// Only once the host has sent nothing on the queue for 1 s: then the last
// command's request is idle and its command id unused since.
void send_stale(Conn *c)
{
	uint64_t now = now_ms();
	if (now < c->last_cmd_ms + 1000 || c->pending)
		return;
	while (!c->stale.empty() && c->stale.front().first <= now) {
		logf("qid %u: stale completion for cid %#x sent (queue idle for %llu ms)", c->qid,
		     get<uint16_t>(c->last_cqe.data(), 12), (unsigned long long)(now - c->last_cmd_ms));
		send_msg(c, c->spare(), c->last_cqe.data(), kCqeSize);
		c->stale.erase(c->stale.begin());
	}
}

// A command whose host data has arrived (in capsule, by RDMA READ, or none).
void execute(Conn *c, unsigned slot, const uint8_t *data)
{
	const uint8_t *sqe = c->sqe[slot].data();
	if (sqe[0] == kOpFabrics) {
		exec_fabrics(c, slot, data);
		return;
	}
	if (!c->ctrl) {
		complete(c, slot, 0x0c | kScDnr);
		return;
	}
	if (c->qid == 0)
		exec_admin(c, slot);
	else
		exec_io(c, slot, data);
}

bool host_to_target(const uint8_t *sqe)
{
	if (sqe[0] == kOpFabrics)
		return sqe[4] == kFcConnect;
	return sqe[0] & 1;	// NVMe: bit 0 of the opcode = data to the controller
}

// rsp-before-connect: on the admin queue and I/O queue 1, a completion the
// host asked for nothing for, sent before any answer: at the queue's
// ESTABLISHED or at its first command, whichever this loop sees first (the
// CM event and the Connect's receive completion come on separate channels,
// in either order; sent after the Connect's answer it would meet a live
// queue, another scenario).
void early_rsp(Conn *c)
{
	if (c->early_rsp_done || c->qid > 1)
		return;
	c->early_rsp_done = true;
	if (!fault_fire("rsp-before-connect", "qid " + std::to_string(c->qid) +
						": a completion (cid 0xfffe) sent before any answer"))
		return;
	// an id no command has: cid 0 would be taken as the answer to the admin
	// queue's Connect (its first command, tag 0, generation 0), which the
	// host cannot tell from a real one
	uint8_t cqe[kCqeSize] = {};
	put<uint16_t>(cqe, 10, c->qid);
	put<uint16_t>(cqe, 12, uint16_t(0xfffe));
	send_msg(c, c->spare(), cqe, kCqeSize);
}

void on_recv(Conn *c, unsigned slot, uint32_t byte_len)
{
	early_rsp(c);
	if (byte_len < kSqeSize) {
		logf("qid %u: short command capsule (%u bytes)", c->qid, byte_len);
		post_recv(c, slot);
		return;
	}
	cur_qid = c->qid;
	std::memcpy(c->sqe[slot].data(), c->recv_buf(slot), kSqeSize);
	c->last_cmd_ms = now_ms();
	c->rcvd_ms[slot] = c->last_cmd_ms;
	if (c->qid)
		c->pending++;	// the admin queue's AERs stay pending for good
	const uint8_t *sqe = c->sqe[slot].data();
	if (host_to_target(sqe)) {
		if (auto in = inline_sgl(sqe)) {
			if (kSqeSize + in->first + in->second > byte_len || in->second > kSlotData) {
				complete(c, slot, kScInvalidField | kScDnr);
			} else {
				std::memcpy(c->data_buf(slot), c->recv_buf(slot) + kSqeSize + in->first, in->second);
				execute(c, slot, c->data_buf(slot));
			}
		} else if (auto k = keyed_sgl(sqe)) {
			if (k->len > kSlotData) {
				complete(c, slot, kScInvalidField | kScDnr);
			} else if (k->len) {
				rdma_op(c, slot, WrKind::Read, c->data_buf(slot), k->len, k->addr, k->key, true);
				post_recv(c, slot);	// the SQE is copied; the READ lands in the data slot
				return;
			} else {
				execute(c, slot, c->data_buf(slot));
			}
		} else {
			complete(c, slot, kScInvalidField | kScDnr);
		}
	} else {
		execute(c, slot, nullptr);
	}
	post_recv(c, slot);
}

void poll_cq(Conn *c)
{
	ibv_wc wc[16];
	int n;
	while ((n = ibv_poll_cq(c->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			auto kind = WrKind(wc[i].wr_id >> 32);
			unsigned slot = unsigned(wc[i].wr_id & 0xffffffff);
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (!c->gone && wc[i].status != IBV_WC_WR_FLUSH_ERR)
					logf("qid %u: work completion error: %s (kind %d slot %u)", c->qid,
					     ibv_wc_status_str(wc[i].status), int(kind), slot);
				if (!c->gone) {
					c->gone = true;
					rdma_disconnect(c->id);
				}
				continue;
			}
			if (c->ccr_reset && (kind == WrKind::Recv || kind == WrKind::Read))
				continue;	// its controller was reset: nothing more executes
			if (kind == WrKind::Recv)
				on_recv(c, slot, wc[i].byte_len);
			else if (kind == WrKind::Read)
				execute(c, slot, c->data_buf(slot));
			else if (kind == WrKind::Peek || kind == WrKind::Poke)
				logf("qid %u: hostile RDMA %s of the host's buffer succeeded (%u bytes): the host's MR allowed it",
				     c->qid, kind == WrKind::Peek ? "READ" : "WRITE", kind == WrKind::Peek ? wc[i].byte_len : 0);
		}
	}
}

// ---------------------------------------------------------------- CM
// reject_with: refuse a connect request with an NVMe/RDMA reject status
void reject_with(rdma_cm_id *id, uint16_t sts)
{
	uint8_t rej[4];
	put<uint16_t>(rej, 0, 0);	// recfmt
	put<uint16_t>(rej, 2, sts);
	rdma_reject(id, rej, sizeof(rej));
	rdma_destroy_id(id);
}

void on_connect_request(rdma_cm_id *id, const rdma_conn_param &p, const uint8_t *pd, unsigned path)
{
	if (p.private_data_len < 8) {
		logf("connect request with %u bytes of private data: rejected", p.private_data_len);
		reject_with(id, 0x1);	// invalid private data length
		return;
	}
	uint16_t qid = get<uint16_t>(pd, 2), hrqsize = get<uint16_t>(pd, 4), hsqsize = get<uint16_t>(pd, 6);
	logf("connect request: qid %u hrqsize %u hsqsize %u", qid, hrqsize, hsqsize);
	static uint16_t rej_sts[] = {0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0x77, 0xffff};
	static unsigned rej_i;
	if (fault_is("reject") || (fault_is("grant-zero-io-connect") && qid > 0)) {
		if (fault_fire(cfg.fault, "qid " + std::to_string(qid) + " rejected with status " +
					   std::to_string(rej_sts[rej_i % std::size(rej_sts)]))) {
			reject_with(id, rej_sts[rej_i++ % std::size(rej_sts)]);
			return;
		}
	}
	if (fault_is("reject-qsize") && qid > 0 &&
	    fault_fire(cfg.fault, "qid " + std::to_string(qid) + " hsqsize " + std::to_string(hsqsize) +
				      " rejected as invalid")) {
		reject_with(id, 0x4);	// invalid host SQ size
		return;
	}
	if (fault_fire("connect-silent", "qid " + std::to_string(qid) + " connect request left unanswered")) {
		// keep the id: the host's CM gives up on its own
		return;
	}
	unsigned depth = std::max<unsigned>(hsqsize + 1, 2);
	if (depth > kMqes + 2 || hrqsize == 0) {
		logf("qid %u: hsqsize %u / hrqsize %u out of range: rejected", qid, hsqsize, hrqsize);
		reject_with(id, hrqsize == 0 ? 0x5 : 0x4);
		return;
	}
	auto *c = new Conn;
	c->id = id;
	id->context = c;
	c->qid = qid;
	c->path = path;
	c->serial = next_conn_serial++;
	c->depth = depth;
	c->recv_len = qid ? kSqeSize + kInlineSize : kSqeSize;
	c->dev = device_for(id->verbs);
	c->sqe.resize(depth);
	c->rcvd_ms.resize(depth);
	conns.insert(c);
	c->buf_len = (depth * c->recv_len + (depth + kSpares) * kCqeSize + depth * kSlotData + 4095) &
		     ~std::size_t(4095);
	c->buf = static_cast<uint8_t *>(std::aligned_alloc(4096, c->buf_len));
	std::memset(c->buf, 0, c->buf_len);
	c->mr = ibv_reg_mr(c->dev->pd, c->buf, c->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	c->cq = ibv_create_cq(id->verbs, int(depth * 4 + 8), c, c->dev->chan, 0);
	// a connection that cannot be built is refused; conn_destroy() frees
	// what exists (the id included)
	auto refuse = [&](const char *what) {
		logf("qid %u: %s: %s", qid, what, std::strerror(errno));
		rdma_reject(id, nullptr, 0);
		conn_destroy(c);
	};
	if (!c->mr || !c->cq) {
		refuse("cannot allocate MR/CQ");
		return;
	}
	ibv_req_notify_cq(c->cq, 0);
	ibv_qp_init_attr qa{};
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = depth * 3 + 4;
	qa.cap.max_recv_wr = depth;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, c->dev->pd, &qa)) {
		refuse("rdma_create_qp");
		return;
	}
	for (unsigned s = 0; s < depth; s++)
		post_recv(c, s);

	uint8_t rep[32] = {};
	put<uint16_t>(rep, 0, 0);
	put<uint16_t>(rep, 2, uint16_t(depth));
	rdma_conn_param cp{};
	cp.private_data = rep;
	cp.private_data_len = sizeof(rep);
	cp.responder_resources = 0;
	// the event speaks from our side: the host's responder resources arrive as
	// our initiator depth (the RDMA READs we may have in flight)
	cp.initiator_depth = std::min<uint8_t>(p.initiator_depth, 16);
	cp.rnr_retry_count = 7;
	cp.flow_control = 1;
	if (fault_fire("accept-short-pd", "qid " + std::to_string(qid) + " accepted with 2 bytes of private data"))
		cp.private_data_len = 2;
	else if (fault_fire("accept-no-pd", "qid " + std::to_string(qid) + " accepted without private data"))
		cp.private_data = nullptr, cp.private_data_len = 0;
	else if (fault_fire("accept-bad-pd", "qid " + std::to_string(qid) + " accepted with recfmt 0xffff crqsize 0")) {
		put<uint16_t>(rep, 0, 0xffff);
		put<uint16_t>(rep, 2, 0);
	}
	if (rdma_accept(id, &cp)) {
		logf("qid %u: rdma_accept: %s", qid, std::strerror(errno));
		conn_destroy(c);
		return;
	}
	// Disconnect once established: a DREQ that overtakes the host's RTU
	// is dropped by the host's CM, and the host could not tell.
	if (fault_fire("accept-disconnect", "qid " + std::to_string(qid) + " disconnected once established"))
		c->disconnect_when_established = true;
}

void on_cm_event(rdma_cm_event *ev)
{
	rdma_cm_id *id = ev->id;
	auto *c = static_cast<Conn *>(id->context);
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST: {
		// the private data lives in the event: copy it before the ack
		rdma_conn_param p = ev->param.conn;
		uint8_t pd[256] = {};
		std::memcpy(pd, p.private_data, std::min<std::size_t>(p.private_data_len, sizeof(pd)));
		unsigned path = ev->listen_id == listen_ids[1] ? 2 : 1;
		rdma_ack_cm_event(ev);
		on_connect_request(id, p, pd, path);
		return;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c && c->disconnect_when_established && !c->gone) {
			c->gone = true;
			rdma_disconnect(id);
		}
		if (c && !c->gone)
			early_rsp(c);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (c) {
			logf("qid %u: %s", c->qid, rdma_event_str(ev->event));
			if (!c->gone) {
				c->gone = true;
				rdma_disconnect(id);
			}
			rdma_ack_cm_event(ev);
			conn_destroy(c);
			return;
		}
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		logf("device removal: exiting");
		stop_requested = 1;
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
}

void on_comp_event(Device *d)
{
	ibv_cq *cq;
	void *ctx;
	while (ibv_get_cq_event(d->chan, &cq, &ctx) == 0) {
		auto *c = static_cast<Conn *>(ctx);
		if (!conns.count(c))
			continue;	// destroyed: its events were acked at destroy
		c->cq_events++;
		ibv_req_notify_cq(cq, 0);
		poll_cq(c);
	}
}

void usage(int rc)
{
	std::fprintf(rc ? stderr : stdout,
		     "usage: rnvme-hostile-target [--addr A] [--port P] [--nqn NQN] [--size MiB]\n"
		     "                            [--fault NAME] [--fault-count N|-1] [--fault-after K]\n"
		     "                            [--ms BYTES [--pi TYPE]]   (namespace metadata)\n"
		     "                            [--fault-qid Q]  (only queue Q's commands trigger the fault)\n"
		     "                            [--late-ms MS]   (connect-late; default 10000)\n"
		     "                            [--dup-gap-ms MS] (cqe-dup: between the copies)\n"
		     "                            [--addr2 A [--port2 P]]  (a second path to the subsystem)\n"
		     "                            [--slow-path 1|2 --drain-ms MS]  (that path's writes wait MS ms)\n"
		     "                            [--cqt-ms MS]    (Command Quiesce Time reported; >= --drain-ms)\n"
		     "                            [--log-writes]   (log every write: path, controller, LBA)\n"
		     "                            [--ccr]          (Cross-Controller Reset: CIU/CIRN/CCRL, opcode 0x38)\n"
		     "       rnvme-hostile-target --list-faults\n");
	std::exit(rc);
}

} // namespace

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		std::string_view a = argv[i];
		auto val = [&]() -> std::string {
			if (i + 1 >= argc)
				usage(2);
			return argv[++i];
		};
		if (a == "--addr")
			cfg.addr = val();
		else if (a == "--port")
			cfg.port = val();
		else if (a == "--nqn")
			cfg.nqn = val();
		else if (a == "--fault")
			cfg.fault = val();
		else if (a == "--fault-count")
			cfg.fault_count = std::strtol(val().c_str(), nullptr, 0);
		else if (a == "--fault-after")
			cfg.fault_after = std::strtol(val().c_str(), nullptr, 0);
		else if (a == "--size")
			cfg.size_mib = std::strtoul(val().c_str(), nullptr, 0);
		else if (a == "--ms")
			cfg.ms = unsigned(std::strtoul(val().c_str(), nullptr, 0));
		else if (a == "--pi")
			cfg.pi = unsigned(std::strtoul(val().c_str(), nullptr, 0));
		else if (a == "--fault-qid")
			cfg.fault_qid = std::strtol(val().c_str(), nullptr, 0);
		else if (a == "--dup-gap-ms")
			cfg.dup_gap_ms = unsigned(std::strtoul(val().c_str(), nullptr, 0));
		else if (a == "--late-ms")
			cfg.late_ms = unsigned(std::strtoul(val().c_str(), nullptr, 0));
		else if (a == "--addr2")
			cfg.addr2 = val();
		else if (a == "--port2")
			cfg.port2 = val();
		else if (a == "--slow-path")
			cfg.slow_path = unsigned(std::strtoul(val().c_str(), nullptr, 0));
		else if (a == "--drain-ms")
			cfg.drain_ms = unsigned(std::strtoul(val().c_str(), nullptr, 0));
		else if (a == "--cqt-ms")
			cfg.cqt_ms = unsigned(std::strtoul(val().c_str(), nullptr, 0));
		else if (a == "--log-writes")
			cfg.log_writes = true;
		else if (a == "--ccr")
			cfg.ccr = true;

		else if (a == "--list-faults") {
			for (auto &f : kFaults)
				std::printf("%-24s %s\n", f.name, f.what);
			return 0;
		} else if (a == "-h" || a == "--help")
			usage(0);
		else
			usage(2);
	}
	bool known = false;
	for (auto &f : kFaults)
		known |= cfg.fault == f.name;
	if (!known) {
		std::fprintf(stderr, "rnvme-hostile-target: unknown fault '%s' (see --list-faults)\n", cfg.fault.c_str());
		return 2;
	}
	if (cfg.ms > 64 || cfg.pi > 3 || (cfg.pi && cfg.ms != 8)) {
		std::fprintf(stderr, "rnvme-hostile-target: --ms is 0..64, --pi 0..3 and needs --ms 8\n");
		return 2;
	}
	if (cfg.size_mib == 0 || cfg.size_mib > 1024) {
		std::fprintf(stderr, "rnvme-hostile-target: --size must be 1..1024 MiB\n");
		return 2;
	}
	if (cfg.port2.empty())
		cfg.port2 = cfg.port;
	if (cfg.slow_path > (two_paths() ? 2u : 1u) || (cfg.drain_ms && !cfg.slow_path) ||
	    (cfg.slow_path && !cfg.drain_ms)) {
		std::fprintf(stderr, "rnvme-hostile-target: --slow-path 1 (or 2 with --addr2) and --drain-ms go together\n");
		return 2;
	}
	if (cfg.cqt_ms > 0xffff || cfg.drain_ms > 0xffff) {
		std::fprintf(stderr, "rnvme-hostile-target: CQT is a 16-bit count of ms: --cqt-ms and --drain-ms are at most 65535\n");
		return 2;
	}
	// the drain is what the controller needs to quiesce: it keeps to its CQT
	if (cfg.drain_ms && !cfg.cqt_ms)
		cfg.cqt_ms = cfg.drain_ms;
	if (cfg.drain_ms > cfg.cqt_ms) {
		std::fprintf(stderr, "rnvme-hostile-target: --drain-ms %u beyond --cqt-ms %u: the controller would break its CQT\n",
			     cfg.drain_ms, cfg.cqt_ms);
		return 2;
	}
	backing.assign(cfg.size_mib << 20, 0);
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa{};
	sa.sa_handler = [](int) { stop_requested = 1; };
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);

	cm_chan = rdma_create_event_channel();
	if (!cm_chan) {
		std::fprintf(stderr, "rnvme-hostile-target: rdma_cm unavailable: %s (is rdma_cm/rdma_ucm loaded?)\n",
			     std::strerror(errno));
		return 1;
	}
	// listen_on: 0 when listening, else the exit status
	auto listen_on = [](rdma_cm_id *&lid, const std::string &addr, const std::string &port) {
		if (rdma_create_id(cm_chan, &lid, nullptr, RDMA_PS_TCP)) {
			std::fprintf(stderr, "rnvme-hostile-target: rdma_cm unavailable: %s (is rdma_cm/rdma_ucm loaded?)\n",
				     std::strerror(errno));
			return 1;
		}
		addrinfo hints{}, *res;
		hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
		if (getaddrinfo(addr.c_str(), port.c_str(), &hints, &res)) {
			std::fprintf(stderr, "rnvme-hostile-target: bad address %s port %s\n", addr.c_str(), port.c_str());
			return 2;
		}
		int rc = 0;
		if (rdma_bind_addr(lid, res->ai_addr) || rdma_listen(lid, 64)) {
			std::fprintf(stderr, "rnvme-hostile-target: cannot listen on %s:%s: %s\n", addr.c_str(), port.c_str(),
				     std::strerror(errno));
			rc = 1;
		}
		freeaddrinfo(res);
		return rc;
	};
	if (int rc = listen_on(listen_ids[0], cfg.addr, cfg.port))
		return rc;
	if (two_paths())
		if (int rc = listen_on(listen_ids[1], cfg.addr2, cfg.port2))
			return rc;
	int fl = fcntl(cm_chan->fd, F_GETFL);
	fcntl(cm_chan->fd, F_SETFL, fl | O_NONBLOCK);
	if (two_paths())
		logf("path 2 on %s:%s (the same subsystem and namespace)", cfg.addr2.c_str(), cfg.port2.c_str());
	if (cfg.drain_ms || cfg.cqt_ms)
		logf("CQT %u ms; %s", cfg.cqt_ms,
		     cfg.drain_ms ? ("path " + std::to_string(cfg.slow_path) + " drains: each write is applied and completed " +
				     std::to_string(cfg.drain_ms) + " ms after its arrival").c_str()
				  : "no path drains");
	if (cfg.ccr)
		logf("CCR: each I/O controller reports a CIU and CIRN of its own and CCRL 4; "
		     "admin opcode 0x38 resets another controller of the subsystem (its held writes discarded)");
	logf("listening on %s:%s nqn %s fault %s (count %ld, after %ld)", cfg.addr.c_str(), cfg.port.c_str(),
	     cfg.nqn.c_str(), cfg.fault.c_str(), cfg.fault_count, cfg.fault_after);

	while (!stop_requested) {
		std::vector<pollfd> fds{{cm_chan->fd, POLLIN, 0}};
		std::vector<Device *> devs;
		for (auto &[ctx, d] : devices) {
			fds.push_back({d->chan->fd, POLLIN, 0});
			devs.push_back(d.get());
		}
		int n = poll(fds.data(), fds.size(), held.empty() ? 200 : std::max(drain_due(), 0));
		if (n < 0 && errno != EINTR)
			break;
		rdma_cm_event *ev;
		while (rdma_get_cm_event(cm_chan, &ev) == 0)
			on_cm_event(ev);
		for (Device *d : devs)
			on_comp_event(d);
		for (Conn *c : std::vector<Conn *>(conns.begin(), conns.end())) {
			if (!c->gone && !c->stale.empty())
				send_stale(c);
			if (!c->gone && c->late_due && now_ms() >= c->late_due) {
				c->late_due = 0;
				logf("qid %u: the late Connect answer goes out now", c->qid);
				cur_qid = c->qid;
				execute(c, c->late_slot, c->data_buf(c->late_slot));
			}
		}
		drain_due();
	}
	if (!held.empty())
		logf("stopping with %zu held write(s) never applied", held.size());
	logf("stopping: %zu connections, %ld faults fired", conns.size(), fault_fired);
	for (Conn *c : std::vector<Conn *>(conns.begin(), conns.end())) {
		if (!c->gone)
			rdma_disconnect(c->id);
		conn_destroy(c);
	}
	for (rdma_cm_id *lid : listen_ids)
		if (lid)
			rdma_destroy_id(lid);
	for (auto &[ctx, d] : devices) {
		ibv_destroy_comp_channel(d->chan);
		ibv_dealloc_pd(d->pd);
	}
	rdma_destroy_event_channel(cm_chan);
	return 0;
}
