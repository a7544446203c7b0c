// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme_cm: the RDMA CM connect private data (NVMe/RDMA transport binding,
 * "RDMA_CM_REQUEST Private Data Format") and the reject status messages.
 */
#include <linux/string.h>
#include <rnvme/compat.h>
#include "rnvme_kunit.h"

/* The request private data is 32 bytes on the wire, little endian. */
static void rnvme_cm_req_size(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct nvme_rdma_cm_req), (size_t)32);
}

static void rnvme_cm_req_admin(struct kunit *test)
{
	static const u8 want[32] = {
		0x00, 0x00,	/* RECFMT 0 */
		0x00, 0x00,	/* QID 0: admin */
		0x20, 0x00,	/* HRQSIZE 32 */
		0x1f, 0x00,	/* HSQSIZE 31 (0's based) */
	};
	struct nvme_rdma_cm_req req;

	memset(&req, 0xa5, sizeof(req));	/* reserved bytes must be cleared */
	rnvme_cm_req_init(&req, 0, 32);
	rnvme_expect_bytes(test, &req, want, sizeof(want), "admin");
}

static void rnvme_cm_req_io(struct kunit *test)
{
	static const u8 want128[32] = {
		0x00, 0x00, 0x03, 0x00, 0x80, 0x00, 0x7f, 0x00,
	};
	static const u8 want256[32] = {
		0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0xff, 0x00,
	};
	struct nvme_rdma_cm_req req;

	memset(&req, 0xff, sizeof(req));
	rnvme_cm_req_init(&req, 3, 128);
	rnvme_expect_bytes(test, &req, want128, sizeof(want128), "qid 3, 128");

	memset(&req, 0xff, sizeof(req));
	rnvme_cm_req_init(&req, 1, 256);
	rnvme_expect_bytes(test, &req, want256, sizeof(want256), "qid 1, 256");
}

/* Byte order: both bytes of every field land where the spec puts them. */
static void rnvme_cm_req_byte_order(struct kunit *test)
{
	static const u8 want[32] = {
		0x00, 0x00, 0x34, 0x12, 0x02, 0x01, 0x01, 0x01,
	};
	struct nvme_rdma_cm_req req;

	memset(&req, 0x5a, sizeof(req));
	rnvme_cm_req_init(&req, 0x1234, 0x0102);
	rnvme_expect_bytes(test, &req, want, sizeof(want), "qid 0x1234");
	KUNIT_EXPECT_EQ(test, le16_to_cpu(req.qid), 0x1234);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(req.hrqsize), 0x0102);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(req.hsqsize), 0x0101);
}

/*
 * NVMe/RDMA 1.1 CNTLID (bytes 8-9): filled on kernels whose struct has it,
 * left reserved (zero) on older ones.
 */
static void rnvme_cm_req_cntlid(struct kunit *test)
{
	struct nvme_rdma_cm_req req;
	const u8 *p = (const u8 *)&req;

	rnvme_cm_req_init(&req, 2, 64);
	rnvme_cm_req_set_cntlid(&req, 0xabcd);
#ifdef HAVE_NVME_RDMA_CM_REQ_CNTLID
	KUNIT_EXPECT_EQ(test, p[8], 0xcd);
	KUNIT_EXPECT_EQ(test, p[9], 0xab);
#else
	KUNIT_EXPECT_EQ(test, p[8], 0);
	KUNIT_EXPECT_EQ(test, p[9], 0);
#endif
	KUNIT_EXPECT_EQ(test, p[2], 0x02);	/* the rest is untouched */
	KUNIT_EXPECT_EQ(test, p[4], 0x40);
}

/* Reject status codes 1-9 (NVMe/RDMA "RDMA_CM_REJECT Private Data"). */
static void rnvme_cm_rej_known(struct kunit *test)
{
	static const struct {
		u16 sts;
		const char *msg;
	} c[] = {
		{ 0x01, "invalid private data length" },
		{ 0x02, "unsupported record format" },
		{ 0x03, "invalid queue id" },
		{ 0x04, "host submission queue size not accepted" },
		{ 0x05, "host receive queue size not accepted" },
		{ 0x06, "target out of resources" },
		{ 0x07, "inbound RDMA read depth not accepted" },
		{ 0x08, "outbound RDMA read depth not accepted" },
		{ 0x09, "invalid controller id" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_STREQ_MSG(test, rnvme_cm_rej_msg(c[i].sts), c[i].msg,
				       "status %#x", c[i].sts);
}

static void rnvme_cm_rej_unknown(struct kunit *test)
{
	static const u16 sts[] = { 0x00, 0x0a, 0x10, 0x100, 0xffff };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sts); i++)
		KUNIT_EXPECT_STREQ_MSG(test, rnvme_cm_rej_msg(sts[i]),
				       "unrecognized reject status",
				       "status %#x", sts[i]);
}

/* The record's reject token: one per status, "unknown" for the rest. */
static void rnvme_cm_rej_tokens(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rej_token(0x04), "invalid-hsqsize");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rej_token(0x06), "no-resources");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rej_token(0x09), "invalid-cntlid");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rej_token(0x00), "unknown");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rej_token(0xffff), "unknown");
}

/*
 * Fabrics Connect refusals as a Linux target sends them: Invalid Parameters
 * with IATTR set and the offending field's offset in the connect data.
 */
static void rnvme_connect_causes(struct kunit *test)
{
	static const struct {
		u16 status;
		u32 result;
		const char *cause;
	} c[] = {
		{ 0x4182, (1U << 16) | 256, "subsystem-not-found" },
		{ 0x4182, (1U << 16) | 512, "invalid-hostnqn" },
		{ 0x4182, (1U << 16) | 16, "invalid-cntlid" },
		{ 0x4182, (1U << 16) | 0, "invalid-hostid" },
		{ 0x4182, (1U << 16) | 300, "invalid-connect-data" },
		{ 0x4182, 44, "invalid-connect-parameter" },
		{ 0x4184, (1U << 16) | 512, "host-not-allowed" },
		{ 0x0184, 0, "host-not-allowed" },
		{ 0x4180, 0, "incompatible-format" },
		{ 0x0181, 0, "controller-busy" },
		{ 0x0183, 0, "restart-discovery" },
		{ 0x0371, 0, "no-response" },
		{ 0x0370, 0, "path-error" },
		{ 0x0002, 0, "nvme-error" },
		{ 0x7fff, 0xffffffff, "nvme-error" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_STREQ_MSG(test,
				       rnvme_connect_status_cause(c[i].status, c[i].result),
				       c[i].cause, "status %#x result %#x",
				       c[i].status, c[i].result);
}

static void rnvme_addr_and_reject_causes(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, rnvme_addr_error_cause(-ETIMEDOUT), "no-neighbour");
	KUNIT_EXPECT_STREQ(test, rnvme_addr_error_cause(-ENODEV), "no-rdma-device");
	KUNIT_EXPECT_STREQ(test, rnvme_addr_error_cause(-EADDRNOTAVAIL), "no-rdma-device");
	KUNIT_EXPECT_STREQ(test, rnvme_addr_error_cause(-ENETUNREACH), "no-route");
	KUNIT_EXPECT_STREQ(test, rnvme_addr_error_cause(-EINVAL), "address-error");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_reject_cause(8, false), "no-listener");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_reject_cause(-ECONNREFUSED, false), "no-listener");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_reject_cause(28, true), "target-reject");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_reject_cause(4, false), "no-answer");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_reject_cause(28, false), "cm-reject");
}

/*
 * Authentication failures: nvme-core's -EKEYREJECTED is told apart by the
 * messages the host got through (Negotiate, Reply, then Failure2).
 */
static void rnvme_auth_causes(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(-ENOKEY, 0, false),
			   "no-host-key");
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(-ENOKEY, 0, true),
			   "no-host-key");
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(-EKEYREJECTED, 1, false),
			   "negotiation-refused");
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(-EKEYREJECTED, 2, false),
			   "host-key-rejected");
	/* the host refused the controller, then the target closed */
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(-EKEYREJECTED, 3, true),
			   "ctrl-key-rejected");
	/* nvmet closed after the host's Reply, before its Failure1 arrived */
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(0x371, 2, true),
			   "closed-after-reply");
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(-EIO, 1, true),
			   "target-closed");
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(-EPROTONOSUPPORT, 0, false),
			   "not-in-kernel");
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(0x2, 1, false),
			   "auth-command-refused");
	KUNIT_EXPECT_STREQ(test, rnvme_auth_error_cause(-ETIMEDOUT, 1, false),
			   "no-response");
}

/* The accept's private data: what a target may get wrong in it. */
static void rnvme_cm_rep_checks(struct kunit *test)
{
	struct nvme_rdma_cm_rep rep = {};

	KUNIT_EXPECT_STREQ(test, rnvme_cm_rep_problem(NULL, 0, 32),
			   "no NVMe/RDMA accept data");
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rep_problem(&rep, 3, 32),
			   "no NVMe/RDMA accept data");
	rep.recfmt = cpu_to_le16(0xffff);
	rep.crqsize = cpu_to_le16(32);
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rep_problem(&rep, sizeof(rep), 32),
			   "unknown accept record format");
	rep.recfmt = cpu_to_le16(NVME_RDMA_CM_FMT_1_0);
	rep.crqsize = 0;
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rep_problem(&rep, sizeof(rep), 32),
			   "controller receive queue size 0");
	rep.crqsize = cpu_to_le16(31);
	KUNIT_EXPECT_STREQ(test, rnvme_cm_rep_problem(&rep, sizeof(rep), 32),
			   "controller receive queue smaller than the host queue");
	rep.crqsize = cpu_to_le16(32);
	KUNIT_EXPECT_NULL(test, rnvme_cm_rep_problem(&rep, 4, 32));
	rep.crqsize = cpu_to_le16(0xffff);
	KUNIT_EXPECT_NULL(test, rnvme_cm_rep_problem(&rep, 196, 32));
}

/* The CM's 8-bit responder_resources: clamped, never wrapped. */
static void rnvme_cm_responder_resources(struct kunit *test)
{
	static const int c[][2] = {
		{ 16, 16 },
		{ 128, 128 },	/* rdma_rxe */
		{ 255, 255 },
		{ 256, 255 },	/* was 0 (truncated to u8) */
		{ 65536, 255 },
		{ 0, 0 },
		{ -1, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, rnvme_responder_resources_for(c[i][0]),
				    (u8)c[i][1], "max_qp_rd_atom %d", c[i][0]);
}

/* Soft-RoCE and Soft-iWARP get the software workarounds; hardware does not. */
static void rnvme_soft_rdma_devices(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, rnvme_soft_rdma(RDMA_DRIVER_RXE));
	KUNIT_EXPECT_TRUE(test, rnvme_soft_rdma(RDMA_DRIVER_SIW));
	KUNIT_EXPECT_FALSE(test, rnvme_soft_rdma(RDMA_DRIVER_MLX5));
	KUNIT_EXPECT_FALSE(test, rnvme_soft_rdma(RDMA_DRIVER_BNXT_RE));
	KUNIT_EXPECT_FALSE(test, rnvme_soft_rdma(RDMA_DRIVER_IRDMA));
	KUNIT_EXPECT_FALSE(test, rnvme_soft_rdma(RDMA_DRIVER_UNKNOWN));
}

static struct kunit_case rnvme_cm_cases[] = {
	KUNIT_CASE(rnvme_cm_req_size),
	KUNIT_CASE(rnvme_cm_req_admin),
	KUNIT_CASE(rnvme_cm_req_io),
	KUNIT_CASE(rnvme_cm_req_byte_order),
	KUNIT_CASE(rnvme_cm_req_cntlid),
	KUNIT_CASE(rnvme_cm_rej_known),
	KUNIT_CASE(rnvme_cm_rej_unknown),
	KUNIT_CASE(rnvme_cm_rej_tokens),
	KUNIT_CASE(rnvme_connect_causes),
	KUNIT_CASE(rnvme_addr_and_reject_causes),
	KUNIT_CASE(rnvme_auth_causes),
	KUNIT_CASE(rnvme_cm_rep_checks),
	KUNIT_CASE(rnvme_cm_responder_resources),
	KUNIT_CASE(rnvme_soft_rdma_devices),
	{}
};

static struct kunit_suite rnvme_cm_suite = {
	.name = "rnvme_cm",
	.test_cases = rnvme_cm_cases,
};

kunit_test_suite(rnvme_cm_suite);
