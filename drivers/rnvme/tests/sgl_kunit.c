// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme_sgl: the SGL data pointer of a command (bytes 24-39 of the SQE) for
 * no data, keyed (remote) data and in-capsule data.
 * rnvme_inline: which writes travel in the command capsule.
 * rnvme_fr: pages per fast-registration MR.
 */
#include <linux/sizes.h>
#include <linux/string.h>
#include "rnvme_kunit.h"

#define DPTR_OFF	24	/* the data pointer in a 64-byte SQE */
#define DPTR_LEN	16

/*
 * The SQE buffer is reused per tag and nvme-core does not clear the data
 * pointer of read/write commands: every builder starts from a dirty one.
 */
static void dirty(struct nvme_command *c)
{
	memset(c, 0xa5, sizeof(*c));
}

/* Bytes outside the data pointer are not the builders' business. */
static void expect_rest_untouched(struct kunit *test,
				  const struct nvme_command *c)
{
	const u8 *p = (const u8 *)c;
	size_t i;

	for (i = 0; i < sizeof(*c); i++) {
		if (i >= DPTR_OFF && i < DPTR_OFF + DPTR_LEN)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, p[i], 0xa5, "byte %zu outside the SGL", i);
	}
}

static void rnvme_sgl_layout(struct kunit *test)
{
	struct nvme_command c;

	KUNIT_EXPECT_EQ(test, sizeof(c), (size_t)64);
	KUNIT_EXPECT_EQ(test, (size_t)((u8 *)&c.common.dptr - (u8 *)&c),
			(size_t)DPTR_OFF);
	KUNIT_EXPECT_EQ(test, sizeof(c.common.dptr), (size_t)DPTR_LEN);
}

/* No data: a keyed data block descriptor of all zeroes, type 0x40. */
static void rnvme_sgl_null_desc(struct kunit *test)
{
	static const u8 want[DPTR_LEN] = { [15] = 0x40 };
	struct nvme_command c;

	dirty(&c);
	rnvme_sgl_null(&c);
	rnvme_expect_bytes(test, (u8 *)&c + DPTR_OFF, want, DPTR_LEN, "null");
	expect_rest_untouched(test, &c);
}

static void rnvme_sgl_keyed_invalidate(struct kunit *test)
{
	static const u8 want[DPTR_LEN] = {
		0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00,	/* address */
		0x56, 0x34, 0x12,				/* length, 24 bits */
		0xef, 0xbe, 0xad, 0xde,				/* key */
		0x4f,		/* keyed data block, remote invalidate */
	};
	struct nvme_command c;

	dirty(&c);
	rnvme_sgl_keyed(&c, 0x0011223344556677ULL, 0x123456, 0xdeadbeef, true);
	rnvme_expect_bytes(test, (u8 *)&c + DPTR_OFF, want, DPTR_LEN, "keyed");
	expect_rest_untouched(test, &c);
}

static void rnvme_sgl_keyed_no_invalidate(struct kunit *test)
{
	static const u8 want[DPTR_LEN] = {
		0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x10,		/* 1 MiB: the largest transfer */
		0x01, 0x02, 0x03, 0x04,
		0x40,				/* keyed data block */
	};
	struct nvme_command c;

	dirty(&c);
	rnvme_sgl_keyed(&c, 0x1000, SZ_1M, 0x04030201, false);
	rnvme_expect_bytes(test, (u8 *)&c + DPTR_OFF, want, DPTR_LEN,
			   "keyed, no invalidate");
}

/* The largest 24-bit length and an all-ones key and address. */
static void rnvme_sgl_keyed_limits(struct kunit *test)
{
	static const u8 want[DPTR_LEN] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff,
		0x4f,
	};
	struct nvme_command c;

	memset(&c, 0, sizeof(c));
	rnvme_sgl_keyed(&c, U64_MAX, 0xffffff, U32_MAX, true);
	rnvme_expect_bytes(test, (u8 *)&c + DPTR_OFF, want, DPTR_LEN, "limits");
}

/* In-capsule data: an offset data block descriptor (type 0x01). */
static void rnvme_sgl_inline_desc(struct kunit *test)
{
	static const u8 want[DPTR_LEN] = {
		0, 0, 0, 0, 0, 0, 0, 0,		/* offset 0 (ICDOFF) */
		0x00, 0x10, 0x00, 0x00,		/* 4096 bytes, 32 bits */
		0, 0, 0,			/* reserved */
		0x01,
	};
	struct nvme_command c;

	dirty(&c);
	rnvme_sgl_inline(&c, 0, 4096);
	rnvme_expect_bytes(test, (u8 *)&c + DPTR_OFF, want, DPTR_LEN, "inline");
	expect_rest_untouched(test, &c);
}

/*
 * The same tag carried a keyed SGL before: its key (bytes 11-14) overlaps
 * the reserved bytes of the offset descriptor, which must go out as zero.
 */
static void rnvme_sgl_inline_after_keyed(struct kunit *test)
{
	static const u8 want[DPTR_LEN] = {
		0x40, 0, 0, 0, 0, 0, 0, 0,	/* offset 0x40 */
		0x00, 0x02, 0x00, 0x00,		/* 512 bytes */
		0, 0, 0,
		0x01,
	};
	struct nvme_command c;

	dirty(&c);
	rnvme_sgl_keyed(&c, 0xffff888012345000ULL, 8192, 0x9abcdef0, true);
	rnvme_sgl_inline(&c, 0x40, 512);
	rnvme_expect_bytes(test, (u8 *)&c + DPTR_OFF, want, DPTR_LEN,
			   "inline over keyed");
}

static struct kunit_case rnvme_sgl_cases[] = {
	KUNIT_CASE(rnvme_sgl_layout),
	KUNIT_CASE(rnvme_sgl_null_desc),
	KUNIT_CASE(rnvme_sgl_keyed_invalidate),
	KUNIT_CASE(rnvme_sgl_keyed_no_invalidate),
	KUNIT_CASE(rnvme_sgl_keyed_limits),
	KUNIT_CASE(rnvme_sgl_inline_desc),
	KUNIT_CASE(rnvme_sgl_inline_after_keyed),
	{}
};

static struct kunit_suite rnvme_sgl_suite = {
	.name = "rnvme_sgl",
	.test_cases = rnvme_sgl_cases,
};

/* The arguments of rnvme_use_inline() and its answer. */
struct inline_case {
	const char *name;
	bool write;
	int qid;
	bool ctrl_inline;
	u32 nsegs, max_segs, bytes;
	size_t inline_size;
	bool expect;
};

static void check_inline(struct kunit *test, const struct inline_case *c,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t room = rnvme_inline_room(c[i].qid, c[i].ctrl_inline,
						c[i].inline_size);

		KUNIT_EXPECT_EQ_MSG(test,
				    rnvme_use_inline(c[i].write, c[i].qid,
						     c[i].ctrl_inline, c[i].nsegs,
						     c[i].max_segs, c[i].bytes,
						     c[i].inline_size),
				    c[i].expect, "%s", c[i].name);
		/* the I/O path's form: the queue's room worked out once */
		KUNIT_EXPECT_EQ_MSG(test,
				    rnvme_use_inline(c[i].write, 1, true,
						     c[i].nsegs, c[i].max_segs,
						     c[i].bytes, room),
				    c[i].expect, "%s (room %zu)", c[i].name,
				    room);
	}
}

/* nvmet's default: IOCCSZ 260, i.e. 4096 bytes after the SQE. */
static void rnvme_inline_size_boundary(struct kunit *test)
{
	static const struct inline_case c[] = {
		{ "512 bytes", true, 1, true, 1, 4, 512, 4096, true },
		{ "exactly the room", true, 1, true, 1, 4, 4096, 4096, true },
		{ "one byte over", true, 1, true, 1, 4, 4097, 4096, false },
		{ "8 KiB", true, 1, true, 2, 4, 8192, 4096, false },
		{ "8 KiB target", true, 1, true, 2, 4, 8192, 8192, true },
		{ "no room", true, 1, true, 1, 4, 512, 0, false },
	};

	check_inline(test, c, ARRAY_SIZE(c));
}

static void rnvme_inline_segments(struct kunit *test)
{
	static const struct inline_case c[] = {
		{ "all SGEs", true, 1, true, 4, 4, 4096, 4096, true },
		{ "one segment too many", true, 1, true, 5, 4, 4096, 4096, false },
		{ "device with one send SGE", true, 1, true, 1, 0, 512, 4096, false },
		{ "one SGE to spare", true, 1, true, 1, 1, 512, 4096, true },
		{ "two segments, one SGE", true, 1, true, 2, 1, 1024, 4096, false },
	};

	check_inline(test, c, ARRAY_SIZE(c));
}

/* The device's send SGE limit, one of them for the SQE. */
static void rnvme_inline_device_sges(struct kunit *test)
{
	static const int c[][2] = {
		{ 32, RNVME_MAX_INLINE_SEGMENTS },	/* rdma_rxe */
		{ 5, 4 },
		{ 2, 1 },
		{ 1, 0 },
		{ 0, 0 },	/* was RNVME_MAX_INLINE_SEGMENTS (u32 underflow) */
		{ -1, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, rnvme_inline_segments_for(c[i][0]),
				    (u32)c[i][1], "max_send_sge %d", c[i][0]);
}

static void rnvme_inline_never(struct kunit *test)
{
	static const struct inline_case c[] = {
		{ "read", false, 1, true, 1, 4, 512, 4096, false },
		{ "admin queue", true, 0, true, 1, 4, 512, 4096, false },
		{ "target without offset SGLs", true, 1, false, 1, 4, 512, 4096, false },
		{ "last I/O queue", true, 65535, true, 1, 4, 512, 4096, true },
	};

	check_inline(test, c, ARRAY_SIZE(c));
}

/* IOCCSZ to capsule size: the SQE at least, never wrapped. */
static void rnvme_inline_capsule_len(struct kunit *test)
{
	const size_t sqe = sizeof(struct nvme_command);

	KUNIT_EXPECT_EQ(test, rnvme_capsule_len(0, 260), sqe);
	KUNIT_EXPECT_EQ(test, rnvme_capsule_len(1, 4), sqe);
	KUNIT_EXPECT_EQ(test, rnvme_capsule_len(1, 260), (size_t)4160);
	/* below the spec's minimum: no room for data, not a negative one */
	KUNIT_EXPECT_EQ(test, rnvme_capsule_len(1, 0), sqe);
	KUNIT_EXPECT_EQ(test, rnvme_capsule_len(1, 3), sqe);
	/* 0x10000000 * 16 wraps a u32 to 0 */
	KUNIT_EXPECT_GT(test, rnvme_capsule_len(2, 0x10000000U), (size_t)0xffffffffU / 2);
	KUNIT_EXPECT_FALSE(test, rnvme_use_inline(true, 1, true, 1, 1, 512,
						  rnvme_capsule_len(1, 3) - sqe));
}

static struct kunit_case rnvme_inline_cases[] = {
	KUNIT_CASE(rnvme_inline_capsule_len),
	KUNIT_CASE(rnvme_inline_size_boundary),
	KUNIT_CASE(rnvme_inline_segments),
	KUNIT_CASE(rnvme_inline_device_sges),
	KUNIT_CASE(rnvme_inline_never),
	{}
};

static struct kunit_suite rnvme_inline_suite = {
	.name = "rnvme_inline",
	.test_cases = rnvme_inline_cases,
};

/* One page of the device's list is kept for an unaligned first page. */
static void rnvme_fr_device_limit(struct kunit *test)
{
	static const u32 c[][2] = {
		{ 2, 1 },
		{ 17, 16 },
		{ 64, 63 },
		{ 256, 255 },
		{ 257, 256 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, rnvme_max_fr_pages_for(c[i][0]), c[i][1],
				    "device list of %u pages", c[i][0]);
}

/* 256 pages of 4 KiB: 1 MiB, nvmet-rdma's MDTS. */
static void rnvme_fr_cap(struct kunit *test)
{
	static const u32 c[][2] = {
		{ 258, 256 },
		{ 512, 256 },		/* rdma_rxe */
		{ 2048, 256 },
		{ U32_MAX, 256 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, rnvme_max_fr_pages_for(c[i][0]), c[i][1],
				    "device list of %u pages", c[i][0]);
}

/* A device without (usable) fast registration: no pages, no underflow. */
static void rnvme_fr_none(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnvme_max_fr_pages_for(0), 0U);
	KUNIT_EXPECT_EQ(test, rnvme_max_fr_pages_for(1), 0U);
}

static struct kunit_case rnvme_fr_cases[] = {
	KUNIT_CASE(rnvme_fr_device_limit),
	KUNIT_CASE(rnvme_fr_cap),
	KUNIT_CASE(rnvme_fr_none),
	{}
};

static struct kunit_suite rnvme_fr_suite = {
	.name = "rnvme_fr",
	.test_cases = rnvme_fr_cases,
};

kunit_test_suites(&rnvme_sgl_suite, &rnvme_inline_suite, &rnvme_fr_suite);
