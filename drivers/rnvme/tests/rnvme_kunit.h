/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the rnvme KUnit suites.  Expected values in the suites
 * are worked out by hand from the NVMe/RDMA specification and the documented
 * behaviour, never recomputed with the formula under test.
 *
 * Cases check tables in loops: one expectation site per loop keeps the stack
 * frame small under KASAN, whose redzones grow it per expectation.
 */
#ifndef RNVME_KUNIT_H
#define RNVME_KUNIT_H

#include <kunit/test.h>
#include "../logic.h"

/* @len bytes at @buf must equal @want; each differing offset is named. */
static inline void rnvme_expect_bytes(struct kunit *test, const void *buf,
				      const u8 *want, size_t len,
				      const char *what)
{
	const u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		KUNIT_EXPECT_EQ_MSG(test, p[i], want[i], "%s: byte %zu", what, i);
}

#endif /* RNVME_KUNIT_H */
