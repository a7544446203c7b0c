/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where rnvme bridges kernel API differences.
 *
 * Driver files are written against the newest API (Debian 6.12).  Each
 * HAVE_* symbol comes from a build-time probe of the target kernel's own
 * headers (tools/kbuild/probe.sh -> rnvme_config.h); when an API is missing
 * it is back-filled here from the older one.  Nothing else in the tree may
 * test LINUX_VERSION_CODE.
 */
#ifndef RNVME_COMPAT_H
#define RNVME_COMPAT_H

#include <rnvme_config.h>

#ifdef HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#include <linux/export.h>
#include <linux/interrupt.h>
#include <linux/nvme-rdma.h>
#include <linux/workqueue.h>
#include "nvme.h"
#include "fabrics.h"

/* 6.2 renamed the quiesce helpers (nvme_stop_queues and friends). */
#ifndef HAVE_NVME_QUIESCE_IO_QUEUES
static inline void nvme_quiesce_io_queues(struct nvme_ctrl *ctrl)
{
	nvme_stop_queues(ctrl);
}

static inline void nvme_unquiesce_io_queues(struct nvme_ctrl *ctrl)
{
	nvme_start_queues(ctrl);
}
#endif

#ifndef HAVE_NVME_QUIESCE_ADMIN_QUEUE
static inline void nvme_quiesce_admin_queue(struct nvme_ctrl *ctrl)
{
	nvme_stop_admin_queue(ctrl);
}

static inline void nvme_unquiesce_admin_queue(struct nvme_ctrl *ctrl)
{
	nvme_start_admin_queue(ctrl);
}
#endif

/* 6.3 folded nvme_shutdown_ctrl() into nvme_disable_ctrl(ctrl, shutdown). */
static inline int rnvme_disable_ctrl(struct nvme_ctrl *ctrl, bool shutdown)
{
#ifdef HAVE_NVME_DISABLE_CTRL_SHUTDOWN
	return nvme_disable_ctrl(ctrl, shutdown);
#else
	return shutdown ? nvme_shutdown_ctrl(ctrl) : nvme_disable_ctrl(ctrl);
#endif
}

/*
 * 6.3 added a was_suspended argument: true only on a PCIe controller resuming
 * from system suspend, where nvme-core replays the OPAL unlock.  A fabrics
 * controller never resumes from suspend, so it is always false here; passing
 * "this is a reconnect" instead would replay the unlock on every reset.
 */
static inline int rnvme_init_ctrl_finish(struct nvme_ctrl *ctrl)
{
#ifdef HAVE_NVME_INIT_CTRL_FINISH_WAS_SUSPENDED
	return nvme_init_ctrl_finish(ctrl, false);
#else
	return nvme_init_ctrl_finish(ctrl);
#endif
}

#ifndef HAVE_NVME_START_REQUEST
static inline void nvme_start_request(struct request *rq)
{
	blk_mq_start_request(rq);
}
#endif

/* 6.9: blk_mq_alloc_queue() replaces blk_mq_init_queue(); rnvme passes no limits */
#ifndef HAVE_BLK_MQ_ALLOC_QUEUE
static inline struct request_queue *
blk_mq_alloc_queue(struct blk_mq_tag_set *set, struct queue_limits *lim,
		   void *queuedata)
{
	if (lim || queuedata)
		return ERR_PTR(-EINVAL);
	return blk_mq_init_queue(set);
}
#endif

#ifndef HAVE_NVME_CTRL_STATE
static inline enum nvme_ctrl_state nvme_ctrl_state(struct nvme_ctrl *ctrl)
{
	return READ_ONCE(ctrl->state);
}
#endif

/*
 * 6.11 split controller creation: nvme_init_ctrl() no longer publishes the
 * device, nvme_add_ctrl() does once the transport is ready.  Older kernels
 * publish in nvme_init_ctrl(), so there is nothing left to do.
 */
static inline int rnvme_add_ctrl(struct nvme_ctrl *ctrl)
{
#ifdef HAVE_NVME_ADD_CTRL
	return nvme_add_ctrl(ctrl);
#else
	return 0;
#endif
}

/* 6.10: stop reconnecting when Connect failed with DNR set. */
static inline bool rnvme_should_reconnect(struct nvme_ctrl *ctrl, int status)
{
#ifdef HAVE_NVMF_SHOULD_RECONNECT_STATUS
	return nvmf_should_reconnect(ctrl, status);
#else
	return nvmf_should_reconnect(ctrl);
#endif
}

/*
 * 6.11 added the controller id to the CM request private data (NVMe/RDMA
 * 1.1); older kernels' struct keeps those bytes reserved (zero).
 */
static inline void rnvme_cm_req_set_cntlid(struct nvme_rdma_cm_req *req,
					   u16 cntlid)
{
#ifdef HAVE_NVME_RDMA_CM_REQ_CNTLID
	req->cntlid = cpu_to_le16(cntlid);
#endif
}

/*
 * nvme-core built with in-band authentication (DH-HMAC-CHAP).  6.7 moved
 * the host side to CONFIG_NVME_HOST_AUTH and made CONFIG_NVME_AUTH the
 * library it shares with the target; before, CONFIG_NVME_AUTH was the host.
 */
#ifdef HAVE_NVME_HOST_AUTH_KCONFIG
#define RNVME_HOST_AUTH IS_ENABLED(CONFIG_NVME_HOST_AUTH)
#else
#define RNVME_HOST_AUTH IS_ENABLED(CONFIG_NVME_AUTH)
#endif

/*
 * nvme-core after 6.12 keeps per-controller timeouts (sysfs admin_timeout
 * and io_timeout) and waits for a freeze as long as the controller's own
 * io_timeout; before, the caller passed the module-wide NVME_IO_TIMEOUT.
 */
static inline int rnvme_wait_freeze(struct nvme_ctrl *ctrl)
{
#ifdef HAVE_NVME_WAIT_FREEZE_TIMEOUT_CTRL
	return nvme_wait_freeze_timeout(ctrl);
#else
	return nvme_wait_freeze_timeout(ctrl, NVME_IO_TIMEOUT);
#endif
}

/* after 6.12: __blk_rq_map_sg() takes the request alone, not its queue */
static inline int rnvme_blk_rq_map_sg(struct request *rq,
				      struct scatterlist *sglist,
				      struct scatterlist **last_sg)
{
#ifdef HAVE_BLK_RQ_MAP_SG_NO_QUEUE
	return __blk_rq_map_sg(rq, sglist, last_sg);
#else
	return __blk_rq_map_sg(rq->q, rq, sglist, last_sg);
#endif
}

#ifndef HAVE_BVEC_PHYS
static inline phys_addr_t bvec_phys(const struct bio_vec *bvec)
{
	return page_to_phys(bvec->bv_page) + bvec->bv_offset;
}
#endif

/* after 6.12: blk_mq_ops.init_request takes the NUMA node as int */
#ifdef HAVE_INIT_REQUEST_INT_NODE
#define RNVME_NUMA_NODE_T int
#else
#define RNVME_NUMA_NODE_T unsigned int
#endif

/*
 * After 6.12 a binary attribute is const to its callbacks and to the group
 * that lists it; before, the same declarations without const.
 */
#ifdef HAVE_CONST_BIN_ATTRS
#define RNVME_BIN_ATTR_CONST const
#else
#define RNVME_BIN_ATTR_CONST
#endif

/*
 * A reconnect succeeded: after 6.12 nvme-core's diag/reconnect_count shows
 * acc_reconnects plus the attempts of the outage in progress, so the
 * attempts of the outage that ended move there before the count restarts.
 */
static inline void rnvme_reconnects_done(struct nvme_ctrl *ctrl)
{
#ifdef HAVE_NVME_CTRL_ACC_RECONNECTS
	atomic_long_add(ctrl->nr_reconnects, &ctrl->acc_reconnects);
#endif
	ctrl->nr_reconnects = 0;
}

/*
 * Work run in softirq context on the CPU that queued it: 6.9 has BH
 * workqueues (system_bh_wq), which replace tasklets; before, a tasklet does
 * the same.  A callback takes a struct rnvme_bh_work * (container_of() finds
 * its owner either way).
 */
#ifdef HAVE_SYSTEM_BH_WQ
#define rnvme_bh_work work_struct

static inline void rnvme_init_bh_work(struct work_struct *work,
				      void (*fn)(struct work_struct *))
{
	INIT_WORK(work, fn);
}

static inline void rnvme_queue_bh_work(struct work_struct *work)
{
	queue_work(system_bh_wq, work);
}

static inline void rnvme_cancel_bh_work_sync(struct work_struct *work)
{
	cancel_work_sync(work);
}
#else
#define rnvme_bh_work tasklet_struct

static inline void rnvme_init_bh_work(struct tasklet_struct *t,
				      void (*fn)(struct tasklet_struct *))
{
	tasklet_setup(t, fn);
}

static inline void rnvme_queue_bh_work(struct tasklet_struct *t)
{
	tasklet_schedule(t);
}

static inline void rnvme_cancel_bh_work_sync(struct tasklet_struct *t)
{
	tasklet_kill(t);
}
#endif

/* an admin command with no data whose completion's result is wanted */
static inline int rnvme_submit_admin_cmd(struct nvme_ctrl *ctrl,
					 struct nvme_command *cmd,
					 union nvme_result *result)
{
#ifdef HAVE_NVME_SUBMIT_FLAGS
	return __nvme_submit_sync_cmd(ctrl->admin_q, cmd, result, NULL, 0,
				      NVME_QID_ANY, 0);
#else
	return __nvme_submit_sync_cmd(ctrl->admin_q, cmd, result, NULL, 0,
				      NVME_QID_ANY, 0, 0);
#endif
}

/*
 * The unbound system workqueue is system_dfl_wq since 6.17 (and 6.12.y);
 * 7.x logs "enqueued on deprecated workqueue" for work queued on the old
 * name, system_unbound_wq, which is all 6.1 has.
 */
#ifndef HAVE_SYSTEM_DFL_WQ
#define system_dfl_wq system_unbound_wq
#endif

/*
 * Pure helpers in logic.c are exported to the KUnit module (rnvme_kunit.ko)
 * only when the kernel has KUnit: no exports at all in production builds.
 * kunit/visibility.h came with 6.2 (and was backported to 6.1.y).
 */
#ifdef HAVE_KUNIT_VISIBILITY_H
#include <kunit/visibility.h>
#elif IS_ENABLED(CONFIG_KUNIT)
#define EXPORT_SYMBOL_IF_KUNIT(symbol) \
	EXPORT_SYMBOL_NS(symbol, EXPORTED_FOR_KUNIT_TESTING)
#else
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif

/* the KUnit module imports that namespace: a string literal since 6.13 */
#ifdef HAVE_MODULE_NS_STRING
#define RNVME_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define RNVME_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

#endif /* RNVME_COMPAT_H */
