// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme_params: the transport_name check, the reconnect_jitter parser and
 * the automatic ack_timeout.
 */
#include <linux/errno.h>
#include "rnvme_kunit.h"

#define ERR_EMPTY	"is empty"
#define ERR_LONG	"is longer than 16 characters"
#define ERR_CHARS	"may only hold letters, digits, '-' and '_'"
#define ERR_TAKEN	"belongs to another in-tree NVMe transport"

struct name_case {
	const char *name;
	const char *why;	/* NULL: accepted */
};

static void check_names(struct kunit *test, const struct name_case *c,
			size_t n)
{
	const char *why;
	size_t i;

	for (i = 0; i < n; i++) {
		why = rnvme_transport_name_error(c[i].name);
		if (!c[i].why) {
			KUNIT_EXPECT_NULL_MSG(test, why, "\"%s\"", c[i].name);
		} else if (!why) {
			KUNIT_FAIL(test, "\"%s\" accepted, expected \"%s\"",
				   c[i].name, c[i].why);
		} else {
			KUNIT_EXPECT_STREQ_MSG(test, why, c[i].why, "\"%s\"",
					       c[i].name);
		}
	}
}

static void rnvme_params_name_ok(struct kunit *test)
{
	static const struct name_case c[] = {
		{ "rdma", NULL },	/* nvme_rdma's presence is checked at load */
		{ "rnvme", NULL },
		{ "r", NULL },
		{ "rnvme_2-test", NULL },
		{ "RDMA", NULL },
		{ "TCP", NULL },	/* nvme-fabrics compares case-sensitively */
		{ "tcp2", NULL },
		{ "pcie", NULL },
		{ "abcdefghijklmnop", NULL },	/* 16 characters */
	};

	check_names(test, c, ARRAY_SIZE(c));
}

static void rnvme_params_name_length(struct kunit *test)
{
	static const struct name_case c[] = {
		{ "", ERR_EMPTY },
		{ NULL, ERR_EMPTY },
		{ "abcdefghijklmnopq", ERR_LONG },	/* 17 */
		{ "waytoolongtransportname", ERR_LONG },
	};

	check_names(test, c, ARRAY_SIZE(c));
}

static void rnvme_params_name_chars(struct kunit *test)
{
	static const struct name_case c[] = {
		{ "bad/name", ERR_CHARS },
		{ "a b", ERR_CHARS },
		{ "rdma\n", ERR_CHARS },
		{ "rdma.", ERR_CHARS },
		{ "../x", ERR_CHARS },
		{ "r\xc3\xa9", ERR_CHARS },	/* UTF-8 e acute */
		{ "r\xe9", ERR_CHARS },	/* Latin-1 e acute: isalnum() */
		{ "\xc0", ERR_CHARS },		/* Latin-1 A grave */
	};

	check_names(test, c, ARRAY_SIZE(c));
}

/* nvme-fabrics would auto-load the in-tree module of these names. */
static void rnvme_params_name_taken(struct kunit *test)
{
	static const struct name_case c[] = {
		{ "tcp", ERR_TAKEN },
		{ "fc", ERR_TAKEN },
		{ "loop", ERR_TAKEN },
		{ "pci", ERR_TAKEN },
	};

	check_names(test, c, ARRAY_SIZE(c));
}

struct jitter_case {
	const char *val;
	int ret;
	u32 pct;	/* expected when ret == 0 */
};

static void check_jitter(struct kunit *test, const struct jitter_case *c,
			 size_t n)
{
	u32 pct;
	size_t i;

	for (i = 0; i < n; i++) {
		pct = 77;
		KUNIT_EXPECT_EQ_MSG(test, rnvme_parse_jitter(c[i].val, &pct),
				    c[i].ret, "\"%s\"", c[i].val);
		/* a refused value leaves the parameter as it was */
		KUNIT_EXPECT_EQ_MSG(test, pct, c[i].ret ? 77U : c[i].pct,
				    "\"%s\": value", c[i].val);
	}
}

static void rnvme_params_jitter_ok(struct kunit *test)
{
	static const struct jitter_case c[] = {
		{ "0", 0, 0 },
		{ "1", 0, 1 },
		{ "50", 0, 50 },		/* the maximum */
		{ "20\n", 0, 20 },		/* echo 20 > .../reconnect_jitter */
		{ "0x10", 0, 16 },
		{ "+7", 0, 7 },
	};

	check_jitter(test, c, ARRAY_SIZE(c));
}

static void rnvme_params_jitter_refused(struct kunit *test)
{
	static const struct jitter_case c[] = {
		{ "51", -ERANGE, 0 },
		{ "100", -ERANGE, 0 },
		{ "4294967295", -ERANGE, 0 },
		{ "4294967296", -ERANGE, 0 },	/* beyond u32 */
		{ "", -EINVAL, 0 },
		{ "abc", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "10%", -EINVAL, 0 },
		{ " 10", -EINVAL, 0 },
	};

	check_jitter(test, c, ARRAY_SIZE(c));
}

static void rnvme_params_ack_timeout(struct kunit *test)
{
	/* automatic: 15 on hardware, the CM's own (0) on software providers */
	KUNIT_EXPECT_EQ(test, rnvme_ack_timeout_for(-1, false), 15);
	KUNIT_EXPECT_EQ(test, rnvme_ack_timeout_for(-1, true), 0);
	/* an explicit value applies to every device */
	KUNIT_EXPECT_EQ(test, rnvme_ack_timeout_for(0, false), 0);
	KUNIT_EXPECT_EQ(test, rnvme_ack_timeout_for(14, true), 14);
	KUNIT_EXPECT_EQ(test, rnvme_ack_timeout_for(31, false), 31);
	/* the setter refuses more; clamp anyway */
	KUNIT_EXPECT_EQ(test, rnvme_ack_timeout_for(40, false), 31);
}

static void rnvme_params_ack_watchdog(struct kunit *test)
{
	u32 ms = 7;

	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("0", &ms), 0);
	KUNIT_EXPECT_EQ(test, ms, 0);
	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("1500\n", &ms), 0);
	KUNIT_EXPECT_EQ(test, ms, 1500);
	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("100", &ms), 0);
	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("600000", &ms), 0);
	KUNIT_EXPECT_EQ(test, ms, 600000);
	/* refusals leave the value alone */
	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("99", &ms), -ERANGE);
	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("600001", &ms), -ERANGE);
	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("-1", &ms), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("1s", &ms), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnvme_parse_ack_watchdog("", &ms), -EINVAL);
	KUNIT_EXPECT_EQ(test, ms, 600000);
}

/* a tick with every SEND signaled (nothing unretired): true when silent */
static bool wd_silent(struct rnvme_ack_wd *wd, int pending, u32 acks)
{
	return rnvme_ack_wd_tick(wd, pending, acks, 0, 0, 0, false) ==
	       RNVME_WD_SILENT;
}

static void rnvme_ack_wd_silent_queue(struct kunit *test)
{
	struct rnvme_ack_wd wd = {};
	int i;

	/* SENDs outstanding, completions flowing: never silent */
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 3, i));
	/* completions stop: silent on the RNVME_ACK_WD_TICKS-th quiet check */
	for (i = 1; i < RNVME_ACK_WD_TICKS; i++)
		KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 3, 19));
	KUNIT_EXPECT_TRUE(test, wd_silent(&wd, 3, 19));
	/* and stays silent while nothing changes */
	KUNIT_EXPECT_TRUE(test, wd_silent(&wd, 3, 19));
	/* one completion starts the count again */
	KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 3, 20));
	KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 3, 20));
}

static void rnvme_ack_wd_idle_queue(struct kunit *test)
{
	struct rnvme_ack_wd wd = {};
	int i;

	/* nothing outstanding: an idle queue is never silent */
	for (i = 0; i < 3 * RNVME_ACK_WD_TICKS; i++)
		KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 0, 5));
	/* a negative count (a completion seen before its post) is idle too */
	for (i = 0; i < 3 * RNVME_ACK_WD_TICKS; i++)
		KUNIT_EXPECT_FALSE(test, wd_silent(&wd, -1, 5));
	/* quiet checks must be consecutive: idle in between resets */
	for (i = 1; i < RNVME_ACK_WD_TICKS; i++)
		KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 1, 5));
	KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 0, 5));
	for (i = 1; i < RNVME_ACK_WD_TICKS; i++)
		KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 1, 5));
	KUNIT_EXPECT_TRUE(test, wd_silent(&wd, 1, 5));
	/* the counter wraps: a change is a change */
	KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 1, 0));
	wd.acks_seen = U32_MAX;
	KUNIT_EXPECT_FALSE(test, wd_silent(&wd, 1, 0));
}

static void rnvme_ack_wd_unsignaled_tail(struct kunit *test)
{
	struct rnvme_ack_wd wd = {};

	/* SENDs 1..20 posted, 16 signaled and completed: 17..20 unconfirmed */
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 1, 20, 16, 0, false), RNVME_WD_OK);
	/* more SENDs since the last check: a signaled one will follow */
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 1, 25, 16, 0, false), RNVME_WD_OK);
	/* none since: probe */
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 1, 25, 16, 0, false), RNVME_WD_PROBE);
	/*
	 * The probe outstanding and unanswered: the check that posted it was
	 * the first quiet one, so silent RNVME_ACK_WD_TICKS - 1 checks later,
	 * as a signaled SEND posted just before a check is.  One check more
	 * (1.875-2.25 s from the newest SEND's post at the default 1500 ms
	 * against 1.125-1.5 s for a signaled one) was what a QD1 read waited.
	 */
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 1, 1, 25, 16, 0, false), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 1, 1, 25, 16, 0, false), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 1, 1, 25, 16, 0, false), RNVME_WD_SILENT);
	/* a probe answered before the last of those checks: not silent */
	wd = (struct rnvme_ack_wd){};
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 1, 30, 16, 0, false), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 1, 30, 16, 0, false), RNVME_WD_PROBE);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 1, 1, 30, 16, 0, false), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 1, 1, 30, 16, 0, false), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 2, 30, 30, 0, false), RNVME_WD_OK);
	/* answered: everything retired, an idle queue stays quiet */
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 2, 25, 25, 0, false), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 2, 25, 25, 0, false), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 2, 25, 25, 0, false), RNVME_WD_OK);
	/* sequence numbers wrap */
	wd = (struct rnvme_ack_wd){ .seq_seen = 3 };
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 0, 3, U32_MAX - 2, 0, false),
			RNVME_WD_PROBE);
	KUNIT_EXPECT_EQ(test, rnvme_ack_wd_tick(&wd, 0, 0, 3, 3, 0, false), RNVME_WD_OK);
}

/* one check of a queue whose SENDs are all retired, @rsps answers heard */
static enum rnvme_ack_wd_verdict wd_due(struct rnvme_ack_wd *wd, int pending,
					u32 acks, u32 rsps, bool due)
{
	return rnvme_ack_wd_tick(wd, pending, acks, 5, 5, rsps, due);
}

static void rnvme_ack_wd_answers_due(struct kunit *test)
{
	struct rnvme_ack_wd wd = {};
	u32 i;

	/*
	 * SENDs 1..5 acknowledged, 3 answered: the path fell silent between
	 * the target's acknowledgment and its answers.  Nothing signaled is
	 * outstanding, so only a probe finds it (keep-alive did, later).
	 */
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 0, 1, 3, true), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 0, 1, 3, true), RNVME_WD_PROBE);
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 1, 1, 3, true), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 1, 1, 3, true), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 1, 1, 3, true), RNVME_WD_SILENT);

	/* a slow target acknowledges every probe: never silent */
	wd = (struct rnvme_ack_wd){};
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 0, 1, 3, true), RNVME_WD_OK);
	for (i = 2; i < 4 * RNVME_ACK_WD_TICKS; i++) {
		KUNIT_EXPECT_EQ(test, wd_due(&wd, 0, i - 1, 3, true),
				RNVME_WD_PROBE);
		/* acknowledged before the next check: heard, no probe */
		KUNIT_EXPECT_EQ(test, wd_due(&wd, 0, i, 3, true), RNVME_WD_OK);
	}
	/* an answer is heard too */
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 0, i - 1, 3, true), RNVME_WD_PROBE);
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 1, i - 1, 4, true), RNVME_WD_OK);
	KUNIT_EXPECT_EQ(test, wd_due(&wd, 0, i, 4, true), RNVME_WD_OK);
	/* everything answered: an idle queue is never probed */
	for (i = 0; i < 3 * RNVME_ACK_WD_TICKS; i++)
		KUNIT_EXPECT_EQ(test, wd_due(&wd, 0, 9, 5, false), RNVME_WD_OK);
}

static void rnvme_send_signaling(struct kunit *test)
{
	u32 seq, n = 0, m = 0;

	for (seq = 1; seq <= 64; seq++) {
		/* admin queue: always */
		KUNIT_EXPECT_TRUE(test, rnvme_send_signaled(0, false, false, false,
							    seq, 32));
		/* in-capsule data on a poll queue, or with few in flight */
		KUNIT_EXPECT_TRUE(test, rnvme_send_signaled(3, true, false, true,
							    seq, 32));
		KUNIT_EXPECT_TRUE(test, rnvme_send_signaled(3, false, false, true,
							    seq, 1));
		KUNIT_EXPECT_TRUE(test,
				  rnvme_send_signaled(3, false, false, true, seq,
						      RNVME_PARK_MIN_INFLIGHT - 1));
		/* SQE only, or in-capsule data with many in flight */
		n += rnvme_send_signaled(3, false, false, false, seq, 1);
		m += rnvme_send_signaled(3, false, false, true, seq,
					 RNVME_PARK_MIN_INFLIGHT);
	}
	/* one in RNVME_SIGNAL_INTERVAL */
	KUNIT_EXPECT_EQ(test, n, 64 / RNVME_SIGNAL_INTERVAL);
	KUNIT_EXPECT_EQ(test, m, 64 / RNVME_SIGNAL_INTERVAL);
	KUNIT_EXPECT_FALSE(test, rnvme_send_signaled(1, true, false, false, 1, 1));
	KUNIT_EXPECT_TRUE(test, rnvme_send_signaled(1, false, false, false,
						    RNVME_SIGNAL_INTERVAL, 1));
	/* across the wrap too */
	KUNIT_EXPECT_TRUE(test, rnvme_send_signaled(1, false, false, false, 0, 1));
	/*
	 * behind a REG_MR: like in-capsule data (the request must see it
	 * retired: Soft-RoCE replays local operations), so signaled on a
	 * poll queue or with few in flight, else one in the interval
	 */
	n = 0;
	for (seq = 1; seq <= 64; seq++) {
		KUNIT_EXPECT_TRUE(test, rnvme_send_signaled(2, true, true,
							    false, seq, 32));
		KUNIT_EXPECT_TRUE(test, rnvme_send_signaled(2, false, true,
							    false, seq,
							    RNVME_PARK_MIN_INFLIGHT - 1));
		n += rnvme_send_signaled(2, false, true, false, seq,
					 RNVME_PARK_MIN_INFLIGHT);
	}
	KUNIT_EXPECT_EQ(test, n, 64 / RNVME_SIGNAL_INTERVAL);
	KUNIT_EXPECT_TRUE(test, rnvme_seq_after(2, U32_MAX));
	KUNIT_EXPECT_FALSE(test, rnvme_seq_after(U32_MAX, 2));
	KUNIT_EXPECT_FALSE(test, rnvme_seq_after(7, 7));
}

static struct kunit_case rnvme_params_cases[] = {
	KUNIT_CASE(rnvme_params_name_ok),
	KUNIT_CASE(rnvme_params_name_length),
	KUNIT_CASE(rnvme_params_name_chars),
	KUNIT_CASE(rnvme_params_name_taken),
	KUNIT_CASE(rnvme_params_jitter_ok),
	KUNIT_CASE(rnvme_params_jitter_refused),
	KUNIT_CASE(rnvme_params_ack_timeout),
	KUNIT_CASE(rnvme_params_ack_watchdog),
	KUNIT_CASE(rnvme_ack_wd_silent_queue),
	KUNIT_CASE(rnvme_ack_wd_idle_queue),
	KUNIT_CASE(rnvme_ack_wd_unsignaled_tail),
	KUNIT_CASE(rnvme_ack_wd_answers_due),
	KUNIT_CASE(rnvme_send_signaling),
	{}
};

static struct kunit_suite rnvme_params_suite = {
	.name = "rnvme_params",
	.test_cases = rnvme_params_cases,
};

kunit_test_suite(rnvme_params_suite);
