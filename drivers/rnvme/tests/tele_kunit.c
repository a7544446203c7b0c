// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the telemetry's latency histogram buckets (logic.h).  Expected
 * buckets are worked out by hand: bucket 0 is below 1024 ns; from 1024 ns on
 * each power of two has eight buckets of equal width; everything from
 * 2^36 ns (68.7 s) on is the last bucket, 209.
 */
#include "rnvme_kunit.h"

struct hist_case {
	u64 ns;
	u32 bucket;
};

static void rnvme_hist_buckets(struct kunit *test)
{
	static const struct hist_case c[] = {
		{ 0, 0 },
		{ 1023, 0 },
		{ 1024, 1 },		/* 2^10: first of [1024, 2048) */
		{ 1151, 1 },		/* width 128 ns */
		{ 1152, 2 },
		{ 2047, 8 },		/* last eighth of 2^10 */
		{ 2048, 9 },		/* 2^11 */
		{ 100000, 53 },		/* 100 us: 2^16, width 8192: sub 4 -> 1+6*8+4 */
		{ 1000000, 80 },	/* 1 ms: 2^19, width 65536: sub 7 -> 1+9*8+7 */
		{ 60000000000ULL, 206 },	/* 60 s: 2^35, width 2^32: sub 5 */
		{ (1ULL << 36) - 1, 208 },
		{ 1ULL << 36, 209 },
		{ U64_MAX, 209 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, rnvme_hist_bucket(c[i].ns), c[i].bucket,
				    "%llu ns", c[i].ns);
	KUNIT_EXPECT_EQ(test, RNVME_HIST_BUCKETS, 210);
}

/* every bucket is reached, in order, walking up by powers and eighths */
static void rnvme_hist_monotonic(struct kunit *test)
{
	u32 prev = 0, b, seen = 1;
	u64 ns;

	for (ns = 1024; ns < (1ULL << 37); ns += ns >> 4) {
		b = rnvme_hist_bucket(ns);
		if (b != prev)
			seen++;
		KUNIT_EXPECT_LE(test, prev, b);
		KUNIT_EXPECT_LE(test, b - prev, 1U);
		prev = b;
	}
	KUNIT_EXPECT_EQ(test, seen, 210U);
}

static struct kunit_case rnvme_tele_cases[] = {
	KUNIT_CASE(rnvme_hist_buckets),
	KUNIT_CASE(rnvme_hist_monotonic),
	{}
};

static struct kunit_suite rnvme_tele_suite = {
	.name = "rnvme_tele",
	.test_cases = rnvme_tele_cases,
};

kunit_test_suites(&rnvme_tele_suite);
