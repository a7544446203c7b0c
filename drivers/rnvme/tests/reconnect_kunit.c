// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme_reconnect: the delay before each reconnect attempt (fixed, doubling
 * up to reconnect_backoff_max, +/- reconnect_jitter) and ctrl_loss_tmo as a
 * time window.
 */
#include <linux/random.h>
#include "rnvme_kunit.h"

struct delay_case {
	const char *name;
	u32 base_s, attempt, max_s, jitter, rnd;
	u32 expect_ms;
};

static void check_delays(struct kunit *test, const struct delay_case *c,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    rnvme_reconnect_delay_ms(c[i].base_s,
							     c[i].attempt,
							     c[i].max_s,
							     c[i].jitter,
							     c[i].rnd),
				    c[i].expect_ms, "%s", c[i].name);
}

/* No backoff, no jitter: reconnect_delay every time, like nvme-rdma. */
static void rnvme_reconnect_fixed(struct kunit *test)
{
	static const struct delay_case c[] = {
		{ "first", 10, 1, 0, 0, 0, 10000 },
		{ "fifth", 10, 5, 0, 0, 12345, 10000 },
		{ "max equal to the delay", 10, 5, 10, 0, 0, 10000 },
		{ "max below the delay", 10, 5, 5, 0, 0, 10000 },
		{ "one second", 1, 100, 0, 0, 0, 1000 },
		{ "zero delay", 0, 3, 0, 0, 0, 0 },
	};

	check_delays(test, c, ARRAY_SIZE(c));
}

/* reconnect_delay 2, reconnect_backoff_max 30: 2 4 8 16 30 30 ... */
static void rnvme_reconnect_backoff(struct kunit *test)
{
	static const struct delay_case c[] = {
		{ "attempt 0", 2, 0, 30, 0, 0, 2000 },
		{ "attempt 1", 2, 1, 30, 0, 0, 2000 },
		{ "attempt 2", 2, 2, 30, 0, 0, 4000 },
		{ "attempt 3", 2, 3, 30, 0, 0, 8000 },
		{ "attempt 4", 2, 4, 30, 0, 0, 16000 },
		{ "attempt 5 capped", 2, 5, 30, 0, 0, 30000 },
		{ "attempt 6 capped", 2, 6, 30, 0, 0, 30000 },
		{ "attempt 1000 capped", 2, 1000, 30, 0, 0, 30000 },
		{ "cap just above", 10, 2, 11, 0, 0, 11000 },
	};

	check_delays(test, c, ARRAY_SIZE(c));
}

/* The doubling stops after 16 steps (x 65536) and never overflows. */
static void rnvme_reconnect_backoff_limits(struct kunit *test)
{
	static const struct delay_case c[] = {
		{ "attempt 17: x65536", 1, 17, 100000, 0, 0, 65536000 },
		{ "attempt 40: still x65536", 1, 40, 100000, 0, 0, 65536000 },
		{ "attempt 16: x32768", 1, 16, 100000, 0, 0, 32768000 },
		{ "u32 max attempt", 1, U32_MAX, 100000, 0, 0, 65536000 },
		{ "cap near u32", 3000000, 2, 4000000, 0, 0, 4000000000U },
		{ "beyond u32 ms", 5000000, 1, 0, 0, 0, U32_MAX },
		{ "backoff beyond u32 ms", 3000000, 9, U32_MAX, 0, 0, U32_MAX },
	};

	check_delays(test, c, ARRAY_SIZE(c));
}

/* 10 s with 10 % jitter: 9000..11000 ms, rnd modulo 2001 added to 9000. */
static void rnvme_reconnect_jitter(struct kunit *test)
{
	static const struct delay_case c[] = {
		{ "rnd 0: lowest", 10, 1, 0, 10, 0, 9000 },
		{ "rnd 1000: middle", 10, 1, 0, 10, 1000, 10000 },
		{ "rnd 2000: highest", 10, 1, 0, 10, 2000, 11000 },
		{ "rnd 2001 wraps", 10, 1, 0, 10, 2001, 9000 },
		{ "rnd u32 max", 10, 1, 0, 10, U32_MAX, 9885 },	/* 2^32-1 = 885 mod 2001 */
		{ "1 %", 10, 1, 0, 1, 0, 9900 },
		{ "50 %, lowest", 10, 1, 0, 50, 0, 5000 },
		{ "50 %, highest", 10, 1, 0, 50, 10000, 15000 },
		{ "zero delay stays zero", 0, 1, 0, 50, 777, 0 },
	};

	check_delays(test, c, ARRAY_SIZE(c));
}

/* Above 50 % the jitter is clamped to 50 %. */
static void rnvme_reconnect_jitter_clamped(struct kunit *test)
{
	static const struct delay_case c[] = {
		{ "80 %, lowest", 10, 1, 0, 80, 0, 5000 },
		{ "80 %, highest", 10, 1, 0, 80, 10000, 15000 },
		{ "u32 max %", 10, 1, 0, U32_MAX, 0, 5000 },
	};

	check_delays(test, c, ARRAY_SIZE(c));
}

/* Jitter applies to the backed-off delay, and may exceed the cap by it. */
static void rnvme_reconnect_backoff_jitter(struct kunit *test)
{
	static const struct delay_case c[] = {
		{ "attempt 3, lowest", 2, 3, 30, 20, 0, 6400 },
		{ "attempt 3, highest", 2, 3, 30, 20, 3200, 9600 },
		{ "capped, lowest", 2, 6, 30, 20, 0, 24000 },
		{ "capped, highest", 2, 6, 30, 20, 12000, 36000 },
	};

	check_delays(test, c, ARRAY_SIZE(c));
}

/* Whatever the random number, the delay stays within +/- the jitter. */
static void rnvme_reconnect_jitter_bounds(struct kunit *test)
{
	u32 i, d, lo = U32_MAX, hi = 0;

	/* 5 s +/- 30 %: 3500..6500 ms; rnd 0..3000 reaches every value */
	for (i = 0; i <= 3000; i++) {
		d = rnvme_reconnect_delay_ms(5, 1, 0, 30, i);
		lo = min(lo, d);
		hi = max(hi, d);
	}
	KUNIT_EXPECT_EQ(test, lo, 3500U);
	KUNIT_EXPECT_EQ(test, hi, 6500U);

	for (i = 0; i < 1024; i++) {
		d = rnvme_reconnect_delay_ms(5, 1, 0, 30, get_random_u32());
		lo = min(lo, d);
		hi = max(hi, d);
	}
	KUNIT_EXPECT_EQ(test, lo, 3500U);
	KUNIT_EXPECT_EQ(test, hi, 6500U);
}

struct tmo_case {
	const char *name;
	int max_reconnects;
	u32 delay_s, elapsed_ms, next_ms;
	bool expect;
};

/* ctrl_loss_tmo 60, reconnect_delay 10: max_reconnects 6, 60000 ms. */
static void rnvme_reconnect_loss_tmo(struct kunit *test)
{
	static const struct tmo_case c[] = {
		{ "start", 6, 10, 0, 10000, true },
		{ "ends exactly at the limit", 6, 10, 50000, 10000, true },
		{ "1 ms past the limit", 6, 10, 50001, 10000, false },
		{ "one long delay", 6, 10, 0, 60000, true },
		{ "one long delay, 1 ms over", 6, 10, 0, 60001, false },
		{ "already past", 6, 10, 70000, 0, false },
		{ "ctrl_loss_tmo 0", 0, 10, 0, 1, false },
		{ "forever", -1, 10, U32_MAX, U32_MAX, true },
		{ "forever, any count", -100, 1, U32_MAX, 1, true },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    rnvme_within_loss_tmo(c[i].max_reconnects,
							  c[i].delay_s,
							  c[i].elapsed_ms,
							  c[i].next_ms),
				    c[i].expect, "%s", c[i].name);
}

/* Sums and products are done in 64 bits: nothing wraps into "in time". */
static void rnvme_reconnect_loss_tmo_overflow(struct kunit *test)
{
	static const struct tmo_case c[] = {
		/* u32 sum would wrap to 0 */
		{ "elapsed + next wraps u32", 3, 1, U32_MAX, 1, false },
		{ "both u32 max", 3, 1, U32_MAX, U32_MAX, false },
		/* 2^31-1 * 4294967 s * 1000 is about 9.2e18 ms: fits u64 */
		{ "huge window", INT_MAX, 4294967, U32_MAX, U32_MAX, true },
		/* 65536 * 65536 s would wrap a u32 product to 0 */
		{ "u32 product wraps", 65536, 65536, 1000, 1000, true },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    rnvme_within_loss_tmo(c[i].max_reconnects,
							  c[i].delay_s,
							  c[i].elapsed_ms,
							  c[i].next_ms),
				    c[i].expect, "%s", c[i].name);
}

/* The CM wait of a reconnect: what is left of ctrl_loss_tmo, within 5..60 s. */
static void rnvme_reconnect_cm_wait(struct kunit *test)
{
	/* forever: the full minute */
	KUNIT_EXPECT_EQ(test, rnvme_reconnect_cm_wait_ms(-1, 10, 0), 60000u);
	/* ctrl_loss_tmo 10 s (10 x 1 s), lost 1.5 s ago: 8.5 s left */
	KUNIT_EXPECT_EQ(test, rnvme_reconnect_cm_wait_ms(10, 1, 1500), 8500u);
	/* 2 s left: the 5 s floor */
	KUNIT_EXPECT_EQ(test, rnvme_reconnect_cm_wait_ms(10, 1, 8000), 5000u);
	/* past the limit: still the floor, never 0 */
	KUNIT_EXPECT_EQ(test, rnvme_reconnect_cm_wait_ms(10, 1, 30000), 5000u);
	/* 600 s (60 x 10 s) left: capped at a minute */
	KUNIT_EXPECT_EQ(test, rnvme_reconnect_cm_wait_ms(60, 10, 0), 60000u);
	/* exactly the cap */
	KUNIT_EXPECT_EQ(test, rnvme_reconnect_cm_wait_ms(70, 1, 10000), 60000u);
	/* u32 products must not wrap: 65536 x 65536 s */
	KUNIT_EXPECT_EQ(test, rnvme_reconnect_cm_wait_ms(65536, 65536, 0), 60000u);
}

static struct kunit_case rnvme_reconnect_cases[] = {
	KUNIT_CASE(rnvme_reconnect_fixed),
	KUNIT_CASE(rnvme_reconnect_backoff),
	KUNIT_CASE(rnvme_reconnect_backoff_limits),
	KUNIT_CASE(rnvme_reconnect_jitter),
	KUNIT_CASE(rnvme_reconnect_jitter_clamped),
	KUNIT_CASE(rnvme_reconnect_backoff_jitter),
	KUNIT_CASE(rnvme_reconnect_jitter_bounds),
	KUNIT_CASE(rnvme_reconnect_loss_tmo),
	KUNIT_CASE(rnvme_reconnect_loss_tmo_overflow),
	KUNIT_CASE(rnvme_reconnect_cm_wait),
	{}
};

static struct kunit_suite rnvme_reconnect_suite = {
	.name = "rnvme_reconnect",
	.test_cases = rnvme_reconnect_cases,
};

kunit_test_suite(rnvme_reconnect_suite);
