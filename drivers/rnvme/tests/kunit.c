// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme_kunit.ko: KUnit suites (rnvme_<suite>) for rnvme's pure helpers in
 * logic.c.  Built only for kernels with CONFIG_KUNIT; load it after rnvme.ko.
 * The suites run when the module loads; results go to the kernel log and to
 * /sys/kernel/debug/kunit/rnvme_<suite>/results.
 */
#include <linux/module.h>
#include <rnvme/compat.h>

MODULE_DESCRIPTION("KUnit suites for rnvme's pure logic");
MODULE_LICENSE("GPL v2");
RNVME_IMPORT_KUNIT_NS();
