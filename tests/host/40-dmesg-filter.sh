#!/bin/bash
# The suites' kernel-log checks (tests/lib/common.sh): fx_drop_known_reports
# drops exactly the known upstream nvmet-rdma lockdep report and nothing
# else, and fx_dmesg_check / the sanitizer gate still fail on everything else.
# usage: tests/host/40-dmesg-filter.sh [KVER]   (KVER is ignored)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# report ACQUIRE HOLDING EXTRA_FRAME: a lockdep circular-dependency report in
# the layout of 6.12's, between two ordinary lines.
report() {
	cat <<-EOT
	[  549.100000] nvme nvme0: reconnecting in 1 seconds
	[  550.272195] ======================================================
	[  550.272295] WARNING: possible circular locking dependency detected
	[  550.272647] 6.12.117-rnvme-debug #1 Tainted: G           O     N
	[  550.272765] ------------------------------------------------------
	[  550.272847] kworker/0:0/9 is trying to acquire lock:
	[  550.273057] ffffffffa0238230 ($1){++++}-{3:3}, at: nvmet_find_get_subsys+0x193/0x520 [nvmet]
	[  550.274990] 
	               but task is already holding lock:
	[  550.275115] ffff88800bfed420 ($2){+.+.}-{3:3}, at: cma_ib_handler+0x93/0x6f0 [rdma_cm]
	[  550.275339] 
	               which lock already depends on the new lock.
	[  550.275400] 
	               the existing dependency chain (in reverse order) is:
	[  550.275500] 
	               -> #1 (&id_priv->handler_mutex){+.+.}-{3:3}:
	[  550.275600]        __mutex_lock+0x1a5/0x1b20
	[  550.275700]        rdma_destroy_id+0x17/0x30 [rdma_cm]
	[  550.275800]        nvmet_rdma_remove_port+0x9a/0x120 [nvmet_rdma]
	[  550.275900] 
	               stack backtrace:
	[  550.276000] CPU: 0 UID: 0 PID: 9 Comm: kworker/0:0 Tainted: G           O     N 6.12.117-rnvme-debug #1
	[  550.276100] Hardware name: QEMU Standard PC (Q35 + ICH9, 2009), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
	[  550.276200] Workqueue: ib_cm cm_work_handler [ib_cm]
	[  550.276300] Call Trace:
	[  550.276400]  <TASK>
	[  550.276500]  dump_stack_lvl+0x6f/0xb0
	[  550.276600]  ? ${3% *}+0x10/0x20 ${3#* }
	[  550.276700]  print_circular_bug+0x2e6/0x3e0
	[  550.276800]  </TASK>
	[  551.000000] nvme nvme0: Successfully reconnected (1 attempt)
	EOT
}
filter() { (. "$REPO/tests/lib/common.sh" >/dev/null 2>&1; fx_drop_known_reports); }
# shellcheck disable=SC2031 # REPO and n are read, not set, in these subshells
if ! (. "$REPO/tests/lib/common.sh" >/dev/null 2>&1; declare -F fx_drop_known_reports >/dev/null); then
	not_ok "tests/lib/common.sh defines fx_drop_known_reports"
	echo "1..$n"
	exit 1
fi

report nvmet_config_sem '&id_priv->handler_mutex' "cma_work_handler [rdma_cm]" > "$work/known"
filter < "$work/known" > "$work/known.out"
if ! grep -q 'circular locking' "$work/known.out" && grep -q 'known upstream nvmet-rdma report dropped' "$work/known.out" &&
	grep -q 'reconnecting in 1 seconds' "$work/known.out" && grep -q 'Successfully reconnected' "$work/known.out" &&
	[ "$(wc -l < "$work/known.out")" = 4 ]; then
	ok "the known nvmet-rdma report becomes one line; the lines around it stay"
else
	not_ok "the known nvmet-rdma report becomes one line; the lines around it stay"
	diag < "$work/known.out"
fi

report nvmet_config_sem '&id_priv->handler_mutex' "rnvme_cm_handler [rnvme]" > "$work/ours"
filter < "$work/ours" > "$work/ours.out"
if cmp -s "$work/ours" "$work/ours.out"; then
	ok "the same locks with an rnvme frame in the report: kept whole"
else
	not_ok "the same locks with an rnvme frame in the report: kept whole"
	diff "$work/ours" "$work/ours.out" | diag
fi

report '&ctrl->lock' '&id_priv->handler_mutex' "cma_work_handler [rdma_cm]" > "$work/other"
filter < "$work/other" > "$work/other.out"
if cmp -s "$work/other" "$work/other.out"; then
	ok "a report on other locks: kept whole"
else
	not_ok "a report on other locks: kept whole"
	diff "$work/other" "$work/other.out" | diag
fi

# two reports in a row, the known one first: the second survives
cat "$work/known" "$work/other" > "$work/both"
filter < "$work/both" > "$work/both.out"
if [ "$(grep -c 'possible circular locking' "$work/both.out")" = 1 ] && grep -q '(&ctrl->lock)' "$work/both.out"; then
	ok "known report followed by another: the other one is kept"
else
	not_ok "known report followed by another: the other one is kept"
	diag < "$work/both.out"
fi

# the check the suites use still fails on the kept report
if grep -qE "$(. "$REPO/tests/lib/common.sh" >/dev/null 2>&1; echo "$FX_SANITIZER_BAD")" "$work/other.out" &&
	! grep -qE "$(. "$REPO/tests/lib/common.sh" >/dev/null 2>&1; echo "$FX_SANITIZER_BAD")" "$work/known.out"; then
	ok "the sanitizer pattern matches the kept report and not the dropped one's line"
else
	not_ok "the sanitizer pattern matches the kept report and not the dropped one's line"
fi

# 7.x: rnvme's work on a deprecated system workqueue fails a suite's dmesg
# check; another module's does not (the kernel names only the first)
bad=$(. "$REPO/tests/lib/common.sh" >/dev/null 2>&1; echo "$FX_DMESG_BAD")
ours='[  269.512212] workqueue: work func rnvme_mr_grow_work [rnvme] enqueued on deprecated workqueue. Use system_{percpu|dfl}_wq instead.'
theirs='[  269.512212] workqueue: work func rxe_do_task [rdma_rxe] enqueued on deprecated workqueue. Use system_{percpu|dfl}_wq instead.'
if grep -qE "$bad" <<<"$ours" && ! grep -qE "$bad" <<<"$theirs"; then
	ok "the dmesg check fails on rnvme's work on a deprecated workqueue, not on another module's"
else
	not_ok "the dmesg check fails on rnvme's work on a deprecated workqueue, not on another module's"
fi

echo "1..$n"
[ "$failed" = 0 ]
