// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: failover that never loses a write (logic.h).  Which commands are
 * held when a controller is lost, how long, and where the Command Quiesce
 * Time lies in Identify Controller.  Expected values are worked out by hand
 * from the NVMe 2.1 base specification (keep-alive and communication loss)
 * and the NVM command set's opcode table.
 */
#include "rnvme_kunit.h"

struct media_case {
	u8 opcode;
	u8 flags;
	bool changes;
	const char *what;
};

static void rnvme_hold_media_commands(struct kunit *test)
{
	static const struct media_case c[] = {
		{ 0x00, 0, true, "flush" },
		{ 0x01, 0, true, "write" },
		{ 0x02, 0, false, "read" },
		{ 0x04, 0, true, "write uncorrectable" },
		{ 0x05, 0, false, "compare" },
		{ 0x08, 0, true, "write zeroes" },
		{ 0x09, 0, true, "dataset management (deallocate)" },
		{ 0x0c, 0, false, "verify" },
		{ 0x0d, 0, true, "reservation register" },
		{ 0x0e, 0, false, "reservation report" },
		{ 0x11, 0, true, "reservation acquire" },
		{ 0x15, 0, true, "reservation release" },
		{ 0x19, 0, true, "copy" },
		{ 0x79, 0, true, "zone management send" },
		{ 0x7a, 0, false, "zone management receive" },
		{ 0x7d, 0, true, "zone append" },
		{ 0x05, 0x01, true, "compare, first of a fused pair" },
		{ 0x01, 0x02, true, "write, second of a fused pair" },
		{ 0x02, 0x02, true, "read with a fused bit (unknown use)" },
		{ 0x80, 0, true, "vendor specific 0x80" },
		{ 0xff, 0, true, "opcode 0xff" },
		{ 0x7f, 0, true, "fabrics 0x7f" },
	};
	struct nvme_command cmd;
	int i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		memset(&cmd, 0, sizeof(cmd));
		cmd.common.opcode = c[i].opcode;
		cmd.common.flags = c[i].flags;
		KUNIT_EXPECT_EQ_MSG(test, rnvme_cmd_may_change_media(&cmd),
				    c[i].changes, "%s (opcode %#x flags %#x)",
				    c[i].what, c[i].opcode, c[i].flags);
	}
}

struct hold_case {
	u32 kato_s;
	bool tbkas;
	u16 cqt_ms;
	u32 ms;
};

static void rnvme_hold_time(struct kunit *test)
{
	static const struct hold_case c[] = {
		{ 5, false, 0, 10000 },		/* the default: 2 x 5 s */
		{ 5, true, 0, 15000 },		/* traffic-based: 3 x 5 s */
		{ 5, false, 2500, 12500 },	/* plus CQT */
		{ 5, true, 65535, 80535 },	/* the largest CQT */
		{ 1, false, 0, 2000 },
		{ 30, false, 100, 60100 },
		{ 0, false, 0, 10000 },		/* no keep-alive: 2 x the default */
		{ 0, true, 7, 15007 },
		{ 65535, true, 65535, 196670535 },	/* no overflow */
		{ U32_MAX, true, 1, U32_MAX },		/* saturates */
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, rnvme_failover_hold_ms(c[i].kato_s,
								 c[i].tbkas,
								 c[i].cqt_ms),
				    c[i].ms, "kato %u s tbkas %d cqt %u ms",
				    c[i].kato_s, c[i].tbkas, c[i].cqt_ms);
}

static void rnvme_hold_cqt_offset(struct kunit *test)
{
	u8 *id = kunit_kzalloc(test, 4096, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, id);
	KUNIT_EXPECT_EQ(test, rnvme_id_ctrl_cqt(id), 0);
	/* bytes 387:386, little-endian */
	id[386] = 0x34;
	id[387] = 0x12;
	KUNIT_EXPECT_EQ(test, rnvme_id_ctrl_cqt(id), 0x1234);
	/* the neighbours are not part of it */
	id[385] = 0xff;
	id[388] = 0xff;
	KUNIT_EXPECT_EQ(test, rnvme_id_ctrl_cqt(id), 0x1234);
}

static void rnvme_hold_ccr_target(struct kunit *test)
{
	u8 *id = kunit_kzalloc(test, 4096, GFP_KERNEL);
	struct rnvme_ccr_target t;

	KUNIT_ASSERT_NOT_NULL(test, id);
	rnvme_id_ctrl_ccr_target(id, 7, &t);
	KUNIT_EXPECT_EQ(test, t.cntlid, 7);
	KUNIT_EXPECT_EQ(test, t.ciu, 0);	/* no CCR identity */
	KUNIT_EXPECT_EQ(test, t.cirn, 0ULL);
	/* CIU byte 135; CIRN bytes 143:136, little-endian */
	id[134] = 0xee;
	id[135] = 0x5a;
	id[136] = 0x01;
	id[137] = 0x02;
	id[142] = 0x07;
	id[143] = 0x80;
	id[144] = 0xee;
	rnvme_id_ctrl_ccr_target(id, 0xfffe, &t);
	KUNIT_EXPECT_EQ(test, t.cntlid, 0xfffe);
	KUNIT_EXPECT_EQ(test, t.ciu, 0x5a);
	KUNIT_EXPECT_EQ(test, t.cirn, 0x8007000000000201ULL);
}

static void rnvme_hold_ccr_cmd(struct kunit *test)
{
	static const struct rnvme_ccr_target t = {
		.cntlid = 0x1234, .ciu = 0xab, .cirn = 0x0102030405060708ULL,
	};
	/* the 64-byte SQE worked out by hand */
	static const u8 want[64] = {
		[0] = 0x38,				/* opcode */
		[40] = 0x34, [41] = 0x12, [42] = 0xab,	/* CDW10 */
		[48] = 0x08, [49] = 0x07, [50] = 0x06, [51] = 0x05, /* CDW12 */
		[52] = 0x04, [53] = 0x03, [54] = 0x02, [55] = 0x01, /* CDW13 */
	};
	struct nvme_command c;

	memset(&c, 0xff, sizeof(c));
	rnvme_ccr_cmd(&c, &t);
	rnvme_expect_bytes(test, &c, want, sizeof(want), "CCR SQE");
}

static struct kunit_case rnvme_hold_cases[] = {
	KUNIT_CASE(rnvme_hold_ccr_target),
	KUNIT_CASE(rnvme_hold_ccr_cmd),
	KUNIT_CASE(rnvme_hold_media_commands),
	KUNIT_CASE(rnvme_hold_time),
	KUNIT_CASE(rnvme_hold_cqt_offset),
	{}
};

static struct kunit_suite rnvme_hold_suite = {
	.name = "rnvme_hold",
	.test_cases = rnvme_hold_cases,
};

kunit_test_suite(rnvme_hold_suite);
