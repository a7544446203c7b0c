// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme_queue_map: how many I/O queues rnvme asks for and how the granted
 * ones are split over the default/read/poll maps.
 * rnvme_sqsize: clamping the I/O queue size to MAXCMD and the transport.
 */
#include "rnvme_kunit.h"

struct split_case {
	const char *name;
	struct rnvme_queue_want want;
	u32 cpus;
	u32 granted;
	u32 def, read, poll;
};

static void check_split(struct kunit *test, const struct split_case *c,
			size_t n)
{
	u32 q[HCTX_MAX_TYPES];
	size_t i;

	for (i = 0; i < n; i++) {
		/* stale values from a previous association must not survive */
		q[HCTX_TYPE_DEFAULT] = 0xdead;
		q[HCTX_TYPE_READ] = 0xdead;
		q[HCTX_TYPE_POLL] = 0xdead;
		rnvme_split_io_queues(&c[i].want, c[i].cpus, c[i].granted, q);
		KUNIT_EXPECT_EQ_MSG(test, q[HCTX_TYPE_DEFAULT], c[i].def,
				    "%s: default queues", c[i].name);
		KUNIT_EXPECT_EQ_MSG(test, q[HCTX_TYPE_READ], c[i].read,
				    "%s: read queues", c[i].name);
		KUNIT_EXPECT_EQ_MSG(test, q[HCTX_TYPE_POLL], c[i].poll,
				    "%s: poll queues", c[i].name);
	}
}

static void rnvme_queue_map_wanted(struct kunit *test)
{
	static const struct {
		struct rnvme_queue_want want;
		u32 cpus, expect;
	} c[] = {
		{ { 4, 0, 0 }, 8, 4 },
		{ { 8, 0, 0 }, 8, 8 },
		{ { 16, 0, 0 }, 8, 8 },		/* nr_io capped at the CPUs */
		{ { 4, 2, 2 }, 8, 8 },
		{ { 4, 2, 2 }, 2, 6 },		/* each map capped separately */
		{ { 8, 8, 8 }, 1, 3 },
		{ { 1, 0, 0 }, 1, 1 },
		{ { 0, 0, 3 }, 4, 3 },
		{ { 0, 0, 0 }, 4, 0 },
		{ { 4, 0, 0 }, 0, 0 },		/* no CPU, no queue */
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    rnvme_io_queues_wanted(&c[i].want, c[i].cpus),
				    c[i].expect, "row %zu", i);
}

/* nr_io only: everything in the default map, whatever is granted. */
static void rnvme_queue_map_shared(struct kunit *test)
{
	static const struct split_case c[] = {
		{ "all granted", { 4, 0, 0 }, 8, 4, 4, 0, 0 },
		{ "half granted", { 4, 0, 0 }, 8, 2, 2, 0, 0 },
		{ "one granted", { 4, 0, 0 }, 8, 1, 1, 0, 0 },
		{ "more granted than asked", { 4, 0, 0 }, 8, 100, 4, 0, 0 },
		{ "cpu cap", { 16, 0, 0 }, 4, 16, 4, 0, 0 },
	};

	check_split(test, c, ARRAY_SIZE(c));
}

/* nr_write_queues: the default map writes, the read map follows it. */
static void rnvme_queue_map_write_read(struct kunit *test)
{
	static const struct split_case c[] = {
		{ "all granted", { 4, 2, 0 }, 8, 6, 2, 4, 0 },
		{ "reads short", { 4, 2, 0 }, 8, 3, 2, 1, 0 },
		{ "writes only", { 4, 2, 0 }, 8, 2, 2, 0, 0 },
		{ "one granted", { 4, 2, 0 }, 8, 1, 1, 0, 0 },
		{ "cpu cap", { 8, 8, 0 }, 2, 16, 2, 2, 0 },
	};

	check_split(test, c, ARRAY_SIZE(c));
}

/* Poll queues take what is left after the interrupt-driven ones. */
static void rnvme_queue_map_poll(struct kunit *test)
{
	static const struct split_case c[] = {
		{ "all granted", { 4, 0, 2 }, 8, 6, 4, 0, 2 },
		{ "one poll short", { 4, 0, 2 }, 8, 5, 4, 0, 1 },
		{ "no poll left", { 4, 0, 2 }, 8, 4, 4, 0, 0 },
		{ "three maps", { 4, 2, 2 }, 8, 8, 2, 4, 2 },
		{ "three maps, read short", { 4, 2, 2 }, 8, 4, 2, 2, 0 },
		{ "poll cpu cap", { 2, 0, 8 }, 4, 12, 2, 0, 4 },
	};

	check_split(test, c, ARRAY_SIZE(c));
}

/* A poll-only request still gets a default queue, taken from the poll share. */
static void rnvme_queue_map_poll_only(struct kunit *test)
{
	static const struct split_case c[] = {
		{ "poll only", { 0, 0, 2 }, 8, 3, 1, 0, 2 },
		{ "poll only, two granted", { 0, 0, 2 }, 8, 2, 1, 0, 1 },
		{ "poll only, one granted", { 0, 0, 2 }, 8, 1, 1, 0, 0 },
	};

	check_split(test, c, ARRAY_SIZE(c));
}

static void rnvme_queue_map_none_granted(struct kunit *test)
{
	static const struct split_case c[] = {
		{ "shared", { 4, 0, 0 }, 8, 0, 0, 0, 0 },
		{ "three maps", { 4, 2, 2 }, 8, 0, 0, 0, 0 },
		{ "poll only", { 0, 0, 2 }, 8, 0, 0, 0, 0 },
	};

	check_split(test, c, ARRAY_SIZE(c));
}

/*
 * ctrl->queues holds 1 + the queues asked for: the split must never hand out
 * more than were granted, nor more than CPUs per map, whatever the options
 * (nvme-fabrics takes any positive int for nr_write/nr_poll_queues).
 */
static void rnvme_queue_map_bounded(struct kunit *test)
{
	static const u32 wants[] = { 0, 1, 3, 8, INT_MAX, U32_MAX };
	static const u32 cpus[] = { 1, 2, 4, 64 };
	static const u32 granted[] = { 0, 1, 2, 5, 200, U32_MAX };
	const size_t nw = ARRAY_SIZE(wants);
	struct rnvme_queue_want w;
	u32 q[HCTX_MAX_TYPES], sum, want_sum, bad = 0;
	size_t i, d, g;

	/* every combination of the three counts and the CPUs */
	for (i = 0; i < nw * nw * nw * ARRAY_SIZE(cpus); i++) {
		w.nr_io = wants[i % nw];
		w.nr_write = wants[i / nw % nw];
		w.nr_poll = wants[i / (nw * nw) % nw];
		d = i / (nw * nw * nw);
		want_sum = rnvme_io_queues_wanted(&w, cpus[d]);
		/* never more than one map's worth of CPUs each: no wrap */
		if (want_sum > 3 * cpus[d]) {
			KUNIT_FAIL(test, "wanted %u for %u/%u/%u on %u cpus", want_sum,
				   w.nr_io, w.nr_write, w.nr_poll, cpus[d]);
			bad++;
		}
		for (g = 0; g < ARRAY_SIZE(granted); g++) {
			rnvme_split_io_queues(&w, cpus[d], granted[g], q);
			sum = q[HCTX_TYPE_DEFAULT] + q[HCTX_TYPE_READ] +
			      q[HCTX_TYPE_POLL];
			if (sum > granted[g] || q[HCTX_TYPE_DEFAULT] > cpus[d] ||
			    q[HCTX_TYPE_READ] > cpus[d] ||
			    q[HCTX_TYPE_POLL] > cpus[d] ||
			    (granted[g] && !q[HCTX_TYPE_DEFAULT])) {
				KUNIT_FAIL(test, "%u/%u/%u on %u cpus, %u granted: %u/%u/%u",
					   w.nr_io, w.nr_write, w.nr_poll, cpus[d],
					   granted[g], q[0], q[1], q[2]);
				bad++;
			}
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

/*
 * One tag set serves every association of a controller, and each may grant
 * a different number of queues (a target's qid_max changed, a failover to a
 * differently configured node): the maps allocated from the options must
 * hold the split of any grant.
 */
static void rnvme_queue_map_any_grant_fits(struct kunit *test)
{
	static const struct rnvme_queue_want wants[] = {
		{ 2, 0, 0 }, { 2, 0, 1 }, { 2, 1, 1 }, { 1, 1, 0 }, { 0, 0, 2 },
		{ 8, 8, 8 },
	};
	static const u32 cpus[] = { 1, 2, 4 };
	u32 q[HCTX_MAX_TYPES], g, bad = 0;
	unsigned int maps;
	size_t i, d;

	for (i = 0; i < ARRAY_SIZE(wants); i++) {
		maps = rnvme_tag_set_maps(wants[i].nr_poll);
		KUNIT_EXPECT_LE(test, maps, (unsigned int)HCTX_MAX_TYPES);
		KUNIT_EXPECT_GE(test, maps, (unsigned int)HCTX_TYPE_POLL);
		for (d = 0; d < ARRAY_SIZE(cpus); d++) {
			for (g = 0; g <= 3 * cpus[d] + 1; g++) {
				rnvme_split_io_queues(&wants[i], cpus[d], g, q);
				if (q[HCTX_TYPE_POLL] && maps <= HCTX_TYPE_POLL) {
					KUNIT_FAIL(test,
						   "%u/%u/%u, %u cpus, grant %u: %u poll, %u maps",
						   wants[i].nr_io, wants[i].nr_write,
						   wants[i].nr_poll, cpus[d], g,
						   q[HCTX_TYPE_POLL], maps);
					bad++;
				}
			}
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

/* qids 1..n: default queues, then read, then poll */
static void rnvme_queue_map_is_poll(struct kunit *test)
{
	static const struct {
		u32 q[HCTX_MAX_TYPES];
		int qid;
		bool poll;
	} c[] = {
		{ { 2, 4, 2 }, 0, false },	/* admin */
		{ { 2, 4, 2 }, 1, false },
		{ { 2, 4, 2 }, 2, false },
		{ { 2, 4, 2 }, 6, false },	/* last read queue */
		{ { 2, 4, 2 }, 7, true },	/* first poll queue */
		{ { 2, 4, 2 }, 8, true },
		{ { 4, 0, 0 }, 4, false },
		{ { 4, 0, 0 }, 5, false },	/* no poll map at all */
		{ { 1, 0, 2 }, 1, false },
		{ { 1, 0, 2 }, 2, true },
		{ { 1, 0, 2 }, 3, true },
		{ { 1, 0, 2 }, -1, false },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, rnvme_is_poll_queue(c[i].q, c[i].qid),
				    c[i].poll, "row %zu: qid %d of %u/%u/%u", i,
				    c[i].qid, c[i].q[0], c[i].q[1], c[i].q[2]);
}

static struct kunit_case rnvme_queue_map_cases[] = {
	KUNIT_CASE(rnvme_queue_map_wanted),
	KUNIT_CASE(rnvme_queue_map_shared),
	KUNIT_CASE(rnvme_queue_map_write_read),
	KUNIT_CASE(rnvme_queue_map_poll),
	KUNIT_CASE(rnvme_queue_map_poll_only),
	KUNIT_CASE(rnvme_queue_map_none_granted),
	KUNIT_CASE(rnvme_queue_map_bounded),
	KUNIT_CASE(rnvme_queue_map_is_poll),
	KUNIT_CASE(rnvme_queue_map_any_grant_fits),
	{}
};

static struct kunit_suite rnvme_queue_map_suite = {
	.name = "rnvme_queue_map",
	.test_cases = rnvme_queue_map_cases,
};

struct sqsize_case {
	u16 sqsize, maxcmd, max_queue_size, expect;
};

static void check_sqsize(struct kunit *test, const struct sqsize_case *c,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    rnvme_clamp_sqsize(c[i].sqsize, c[i].maxcmd,
						       c[i].max_queue_size),
				    c[i].expect, "sqsize %u maxcmd %u limit %u",
				    c[i].sqsize, c[i].maxcmd, c[i].max_queue_size);
}

static void rnvme_sqsize_fits(struct kunit *test)
{
	static const struct sqsize_case c[] = {
		{ 127, 0, 128, 127 },		/* exactly the limit */
		{ 31, 0, 128, 31 },
		{ 0, 0, 128, 0 },
		{ 255, 0, 256, 255 },
	};

	check_sqsize(test, c, ARRAY_SIZE(c));
}

static void rnvme_sqsize_transport_limit(struct kunit *test)
{
	static const struct sqsize_case c[] = {
		{ 128, 0, 128, 127 },		/* one over */
		{ 255, 0, 128, 127 },
		{ 1023, 0, 256, 255 },
		{ 65535, 0, 128, 127 },		/* 65536 entries: no u16 wrap */
	};

	check_sqsize(test, c, ARRAY_SIZE(c));
}

static void rnvme_sqsize_maxcmd(struct kunit *test)
{
	static const struct sqsize_case c[] = {
		{ 127, 64, 128, 63 },		/* MAXCMD below the queue */
		{ 127, 128, 128, 127 },		/* MAXCMD equal */
		{ 127, 200, 128, 127 },		/* MAXCMD above: no effect */
		{ 31, 32, 128, 31 },
		{ 32, 32, 128, 31 },
		{ 127, 1, 128, 0 },		/* one command at a time */
		{ 255, 100, 128, 99 },		/* both limits: the lower */
		{ 255, 200, 128, 127 },
	};

	check_sqsize(test, c, ARRAY_SIZE(c));
}

/* a later association's queues must hold every tag of the existing tag set */
static void rnvme_sqsize_shrunk_refused(struct kunit *test)
{
	/* the tag set of a controller first created with queue_size 128 */
	KUNIT_EXPECT_TRUE(test, rnvme_sqsize_fits_tag_set(127, 128));
	KUNIT_EXPECT_FALSE(test, rnvme_sqsize_fits_tag_set(126, 128));
	KUNIT_EXPECT_FALSE(test, rnvme_sqsize_fits_tag_set(31, 128));
	KUNIT_EXPECT_FALSE(test, rnvme_sqsize_fits_tag_set(0, 2));
	/* more room than tags is harmless (cannot happen: sqsize only shrinks) */
	KUNIT_EXPECT_TRUE(test, rnvme_sqsize_fits_tag_set(255, 128));
	KUNIT_EXPECT_TRUE(test, rnvme_sqsize_fits_tag_set(U16_MAX, 65536));
	KUNIT_EXPECT_FALSE(test, rnvme_sqsize_fits_tag_set(U16_MAX, 65537));
}

/*
 * The send queue depth grows with the CPUs that may post at once, but never
 * past the queue size; a device's max_qp_wr and max_cqe bound the queue
 * size a controller uses.
 */
static void rnvme_sqsize_device_limits(struct kunit *test)
{
	u32 d128 = rnvme_send_queue_depth(128, 8192);
	u32 qs;

	/* 8192 possible CPUs cost no more than 128 racing posts */
	KUNIT_EXPECT_EQ(test, d128, rnvme_send_queue_depth(128, 128));
	KUNIT_EXPECT_LT(test, rnvme_send_queue_depth(128, 2), d128);
	KUNIT_EXPECT_EQ(test, rnvme_recv_ring_size(128, false), 144U);
	KUNIT_EXPECT_EQ(test, rnvme_recv_ring_size(128, true), 128U);
	KUNIT_EXPECT_EQ(test, rnvme_recv_ring_size(1, false), 32U);

	/* a device with room keeps the size asked for */
	KUNIT_EXPECT_EQ(test, rnvme_queue_size_for_device(128, 8192, 16384,
							  65536), 128U);
	/* exactly enough is enough */
	KUNIT_EXPECT_EQ(test, rnvme_queue_size_for_device(128, 8192, d128,
							  65536), 128U);
	/* one short: a smaller queue, whose needs fit */
	qs = rnvme_queue_size_for_device(128, 8192, d128 - 1, 65536);
	KUNIT_EXPECT_LT(test, qs, 128U);
	KUNIT_EXPECT_GE(test, qs, 2U);
	KUNIT_EXPECT_LE(test, rnvme_send_queue_depth(qs, 8192), d128 - 1);
	/* a small device (max_qp_wr 256) */
	qs = rnvme_queue_size_for_device(128, 8192, 256, 65536);
	KUNIT_EXPECT_GE(test, qs, 2U);
	KUNIT_EXPECT_LE(test, rnvme_send_queue_depth(qs, 8192), 256U);
	KUNIT_EXPECT_GT(test, rnvme_send_queue_depth(qs + 1, 8192), 256U);
	/* the CQ holds send and receive work requests */
	qs = rnvme_queue_size_for_device(128, 4, 16384, 300);
	KUNIT_EXPECT_LE(test, rnvme_send_queue_depth(qs, 4) +
			rnvme_recv_ring_size(qs, false) + 1, 300U);
	/* nothing fits: 0, and nonsense attributes fit nothing */
	KUNIT_EXPECT_EQ(test, rnvme_queue_size_for_device(128, 8, 16, 65536), 0U);
	KUNIT_EXPECT_EQ(test, rnvme_queue_size_for_device(128, 8, 0, 65536), 0U);
	KUNIT_EXPECT_EQ(test, rnvme_queue_size_for_device(128, 8, -1, -1), 0U);
}

static struct kunit_case rnvme_sqsize_cases[] = {
	KUNIT_CASE(rnvme_sqsize_fits),
	KUNIT_CASE(rnvme_sqsize_device_limits),
	KUNIT_CASE(rnvme_sqsize_transport_limit),
	KUNIT_CASE(rnvme_sqsize_maxcmd),
	KUNIT_CASE(rnvme_sqsize_shrunk_refused),
	{}
};

static struct kunit_suite rnvme_sqsize_suite = {
	.name = "rnvme_sqsize",
	.test_cases = rnvme_sqsize_cases,
};

kunit_test_suites(&rnvme_queue_map_suite, &rnvme_sqsize_suite);
