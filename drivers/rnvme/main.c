// SPDX-License-Identifier: GPL-2.0
/*
 * rnvme module glue: parameters, module init and exit, transport
 * registration.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/namei.h>
#include "rnvme.h"

bool rnvme_register_always = true;
module_param_named(register_always, rnvme_register_always, bool, 0444);
MODULE_PARM_DESC(register_always,
		 "Use memory registration even for contiguous memory regions (default: true; false exposes a global rkey and is unsafe)");

bool rnvme_failover_hold = true;
module_param_named(failover_hold, rnvme_failover_hold, bool, 0644);
MODULE_PARM_DESC(failover_hold,
		 "Hold writes and other media changes a lost controller may still execute until it must have quiesced (2-3 x keep-alive timeout + CQT) before retrying them on another path or after the reconnect (default: true; false retries at once, which can let a late write overwrite a newer one unless the target fences a lost host itself)");

char rnvme_transport_name[RNVME_TRANSPORT_NAME_MAX + 1] = "rdma";
module_param_string(transport_name, rnvme_transport_name,
		    sizeof(rnvme_transport_name), 0444);
MODULE_PARM_DESC(transport_name,
		 "NVMe-oF transport name to register (default: rdma; another name lets rnvme run beside the in-tree nvme-rdma)");

unsigned int rnvme_reconnect_backoff_max;
module_param_named(reconnect_backoff_max, rnvme_reconnect_backoff_max, uint, 0644);

#ifdef RNVME_BENCH_HOOKS
/*
 * The bench's build only (RNVME_BENCH_HOOKS): a busy loop of this many
 * iterations in every I/O submission, so make bench can show that
 * module_insn_per_io sees a known extra cost.
 */
unsigned int rnvme_test_extra_work;
/* on while test_extra_work is not 0: the I/O path tests a jump label */
DEFINE_STATIC_KEY_FALSE(rnvme_test_work_key);

static int rnvme_test_work_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint(val, kp);

	if (ret)
		return ret;
	rnvme_key_follow(&rnvme_test_work_key, READ_ONCE(rnvme_test_extra_work));
	return 0;
}

static const struct kernel_param_ops rnvme_test_work_ops = {
	.set	= rnvme_test_work_set,
	.get	= param_get_uint,
};
module_param_cb(test_extra_work, &rnvme_test_work_ops, &rnvme_test_extra_work,
		0644);
MODULE_PARM_DESC(test_extra_work,
		 "bench build only: busy-loop iterations added to every I/O submission (default 0)");
#endif
MODULE_PARM_DESC(reconnect_backoff_max,
		 "Seconds: when above a controller's reconnect_delay, the delay doubles per failed attempt up to this (default 0: fixed reconnect_delay, like nvme-rdma)");

/*
 * The RC retry budget: how long a queue keeps retransmitting into a silent
 * path before its QP fails and the controller recovers (and multipath fails
 * over).  The local ACK timeout is 4.096 us * 2^ack_timeout per try, retried
 * retry_count times.  RDMA CM's RoCE default (19: 2.1 s a try, about 17 s
 * in all) hides a dead path for longer than most applications wait; 15
 * (134 ms a try, about 1.1 s with 7 retries) still rides out pauses far
 * longer than a lossless fabric's.  -1 (default) uses 15 on hardware and the
 * CM's default on software providers (rnvme_ack_timeout_for()).
 */
int rnvme_ack_timeout = RNVME_ACK_TIMEOUT_AUTO;
unsigned int rnvme_retry_count = 7;

static int rnvme_set_ack_timeout(const char *val, const struct kernel_param *kp)
{
	int v, ret;

	ret = kstrtoint(val, 0, &v);
	if (ret)
		return ret;
	if (v < RNVME_ACK_TIMEOUT_AUTO || v > RNVME_ACK_TIMEOUT_MAX) {
		pr_err("ack_timeout=%d: must be -1 (automatic) or 0 to %d\n", v,
		       RNVME_ACK_TIMEOUT_MAX);
		return -EINVAL;
	}
	*(int *)kp->arg = v;
	return 0;
}

static int rnvme_set_retry_count(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v < 1 || v > 7) {
		pr_err("retry_count=%u: must be 1 to 7\n", v);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops rnvme_ack_timeout_ops = {
	.set	= rnvme_set_ack_timeout,
	.get	= param_get_int,
};

static const struct kernel_param_ops rnvme_retry_count_ops = {
	.set	= rnvme_set_retry_count,
	.get	= param_get_uint,
};

module_param_cb(ack_timeout, &rnvme_ack_timeout_ops, &rnvme_ack_timeout, 0644);
MODULE_PARM_DESC(ack_timeout,
		 "RC local ACK timeout of new connections, 4.096 us * 2^N (0-31; 0 keeps the RDMA CM's, 2.1 s on RoCE; default -1: 15 (134 ms) on hardware, the CM's on Soft-RoCE/Soft-iWARP)");
module_param_cb(retry_count, &rnvme_retry_count_ops, &rnvme_retry_count, 0644);
MODULE_PARM_DESC(retry_count,
		 "RC transport retries before a connection fails (1-7, default 7)");

/*
 * ACK watchdog: a queue whose SENDs stop being acknowledged by the target's
 * NIC (SEND completions) for ack_watchdog_ms while it has SENDs outstanding
 * is taken for a silent path and the controller recovers, so multipath fails
 * over without waiting for the RC retry budget (about 17 s with the RDMA
 * CM's default on Soft-RoCE) or the keep-alive.  A slow target does not
 * trip it: its NIC acknowledges a command's SEND when it arrives, long
 * before the command completes.  A fabric that holds a SEND's
 * acknowledgment back for that long (a pause storm) does.  InfiniBand and
 * RoCE only: on iWARP a SEND's completion says the local TCP stack took it.
 */
unsigned int rnvme_ack_watchdog_ms = RNVME_ACK_WD_DEFAULT_MS;

static int rnvme_set_ack_watchdog(const char *val, const struct kernel_param *kp)
{
	unsigned int was = READ_ONCE(*(unsigned int *)kp->arg);
	u32 ms;
	int ret;

	ret = rnvme_parse_ack_watchdog(val, &ms);
	if (ret) {
		pr_err("ack_watchdog_ms=%.*s: must be 0 (off) or %u to %u\n",
		       (int)strcspn(val, "\n"), val, RNVME_ACK_WD_MIN_MS,
		       RNVME_ACK_WD_MAX_MS);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, ms);
	/* an idle watchdog does not wake: switched on, it starts here */
	if (!was && ms)
		rnvme_ack_wd_arm_live();
	return 0;
}

static const struct kernel_param_ops rnvme_ack_watchdog_ops = {
	.set	= rnvme_set_ack_watchdog,
	.get	= param_get_uint,
};

module_param_cb(ack_watchdog_ms, &rnvme_ack_watchdog_ops, &rnvme_ack_watchdog_ms, 0644);
MODULE_PARM_DESC(ack_watchdog_ms,
		 "Recover a controller when a queue's SENDs get no RDMA acknowledgment for this long (ms; 0 off, 100-600000; default 1500; InfiniBand and RoCE, not iWARP)");

unsigned int rnvme_reconnect_jitter;

static int rnvme_set_jitter(const char *val, const struct kernel_param *kp)
{
	u32 pct;
	int ret;

	ret = rnvme_parse_jitter(val, &pct);
	if (ret == -ERANGE) {
		pr_err("reconnect_jitter=%.*s: at most %d percent\n",
		       (int)strcspn(val, "\n"), val, RNVME_MAX_JITTER_PCT);
		return -EINVAL;
	}
	if (ret)
		return ret;
	*(unsigned int *)kp->arg = pct;
	return 0;
}

static const struct kernel_param_ops rnvme_jitter_ops = {
	.set	= rnvme_set_jitter,
	.get	= param_get_uint,
};

module_param_cb(reconnect_jitter, &rnvme_jitter_ops, &rnvme_reconnect_jitter, 0644);
MODULE_PARM_DESC(reconnect_jitter,
		 "Percent (0-50): spread each reconnect delay randomly by +/- this much, so many hosts do not reconnect in lockstep (default 0)");

/*
 * The in-tree driver for a transport name is the module nvme-fabrics loads
 * for it ("nvme-<name>").  If it is already loaded it has registered the
 * name first and would be the one nvme-fabrics picks.
 */
static bool rnvme_name_taken(const char *name)
{
	char path[64];
	struct path p;

	snprintf(path, sizeof(path), "/sys/module/nvme_%s", name);
	if (kern_path(path, LOOKUP_FOLLOW, &p))
		return false;
	path_put(&p);
	return true;
}

/**
 * rnvme_warn_if_shadowing - say so when nvme-fabrics sees two "rdma" drivers
 *
 * The in-tree nvme_rdma may still get loaded after rnvme (by hand, or by
 * nvme-fabrics' request_module() without the packaged modprobe.d redirect).
 * It then registers the same name second and is never used: tell the admin
 * once which driver serves the connects.
 */
static void rnvme_warn_if_shadowing(void)
{
	static bool warned;

	if (READ_ONCE(warned) || !rnvme_name_taken(rnvme_transport_name))
		return;
	WRITE_ONCE(warned, true);
	pr_warn("nvme_%s is loaded too; rnvme registered \"%s\" first and serves its connects (nvme_%s is unused: modprobe -r nvme_%s)\n",
		rnvme_transport_name, rnvme_transport_name,
		rnvme_transport_name, rnvme_transport_name);
}

/*
 * nvme-fabrics' create hook: a create with options rnvme cannot honour is
 * refused before anything else (its attempt record logged); the shadowing
 * warning comes before the controller is created and connected.
 */
static struct nvme_ctrl *rnvme_create(struct device *dev,
				      struct nvmf_ctrl_options *opts)
{
	int ret = rnvme_create_check(opts);

	if (ret)
		return ERR_PTR(ret);
	rnvme_warn_if_shadowing();
	return rnvme_create_ctrl(dev, opts);
}

/* the name is the read-only parameter transport_name, checked in rnvme_init() */
static struct nvmf_transport_ops rnvme_transport = {
	.name		= rnvme_transport_name,
	.module		= THIS_MODULE,
	.required_opts	= NVMF_OPT_TRADDR,
	.allowed_opts	= NVMF_OPT_TRSVCID | NVMF_OPT_RECONNECT_DELAY |
			  NVMF_OPT_HOST_TRADDR | NVMF_OPT_CTRL_LOSS_TMO |
			  NVMF_OPT_NR_WRITE_QUEUES | NVMF_OPT_NR_POLL_QUEUES |
			  NVMF_OPT_TOS,
	.create_ctrl	= rnvme_create,
};

static int __init rnvme_init(void)
{
	const char *why;
	int ret;

	why = rnvme_transport_name_error(rnvme_transport_name);
	if (why) {
		pr_err("transport_name=\"%s\" %s\n", rnvme_transport_name, why);
		return -EINVAL;
	}
	if (rnvme_name_taken(rnvme_transport_name)) {
		pr_err("transport \"%s\" is already served by the loaded module nvme_%s; unload it first (modprobe -r nvme_%s) or load rnvme with transport_name=<other>\n",
		       rnvme_transport_name, rnvme_transport_name,
		       rnvme_transport_name);
		return -EBUSY;
	}

	rnvme_io_init();
	ret = rnvme_ib_client_init();
	if (ret)
		goto out_io_exit;

	ret = nvmf_register_transport(&rnvme_transport);
	if (ret)
		goto out_client_exit;

	rnvme_fi_init();
	pr_info("registered NVMe-oF transport \"%s\"%s\n", rnvme_transport_name,
		rnvme_register_always ? "" : " (register_always=0: global rkey exposed)");
	return 0;

out_client_exit:
	rnvme_ib_client_exit();
out_io_exit:
	rnvme_io_exit();
	return ret;
}

static void __exit rnvme_exit(void)
{
	/* no new controllers, then take down the ones left */
	nvmf_unregister_transport(&rnvme_transport);
	rnvme_delete_ctrls(NULL);
	rnvme_ib_client_exit();
	rnvme_io_exit();
	rnvme_fi_exit();
	pr_info("unregistered NVMe-oF transport \"%s\"\n", rnvme_transport_name);
}

module_init(rnvme_init);
module_exit(rnvme_exit);

MODULE_DESCRIPTION("rnvme: NVMe over Fabrics RDMA host transport");
MODULE_LICENSE("GPL v2");
