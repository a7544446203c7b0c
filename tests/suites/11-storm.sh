#!/bin/bash
# shellcheck disable=SC2317 # helpers are invoked indirectly (check, wait_for)
# 11-storm: connect/disconnect storm. STORM_WORKERS parallel loops, each with its
# own subsystem and its own host NQN/hostid (so separate controllers), connect
# and disconnect for STORM_SECS: plain cycles, a delete right after the connect
# returns (namespace scan still running), a delete attempted while the connect
# is still in progress (nvme-core refuses it with EBUSY until the controller has
# started once; it is retried until it lands) and a delete while dd writes to
# the namespace. Afterwards everything must be back to the baseline taken before
# the storm: controllers, /dev/nvme*, module refcount, rxe QPs/CQs/MRs/PDs/cm_ids,
# and memory within a bound; rmmod must work.  The plain cycles take turns
# between three clients: a direct /dev/nvme-fabrics write, nvme-cli
# (nvme connect / nvme disconnect) and the rnvme tool (rnvme connect /
# rnvme disconnect).  TEST_STORM_MIN_CYCLES=500 is the long churn run
# (README: opt-in runs).
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

WORKERS=${TEST_STORM_WORKERS:-5}
SECS=${TEST_STORM_SECS:-60}
# Leak bound on the kmalloc-N caches (KiB), where the per-controller allocations
# of rnvme, nvme-core and the RDMA stack land (SUnreclaim is printed too, but it
# also moves with the test's own forks: ovl_inode, vmap_area, task structs).
# Noise after fx_settle is a few hundred KiB (per-CPU and partial slabs). One
# leaked controller is far more than 8 KiB (rnvme_ctrl + nvme_ctrl + queue array
# + tag sets + MR pools); 8 KiB per cycle over the >= MIN_CYCLES cycles asserted
# below is >= 1 MiB, so 1024 KiB is exceeded by any per-connect leak of 8+ KiB.
# Object-level leaks (ctrl, QP, MR, refcount) are caught exactly by the counts.
KMALLOC_MAX_KIB=${TEST_STORM_KMALLOC_MAX_KIB:-1024}
MIN_CYCLES=${TEST_STORM_MIN_CYCLES:-128}
mod=$(host_module)
work=/run/rnvme-storm
rm -rf "$work"
mkdir -p "$work"

fx_setup --nqn "${TEST_NQN}s0" --backing nullb --size 32
for ((w = 1; w < WORKERS; w++)); do
	fx_target_up --nqn "${TEST_NQN}s$w" --backing nullb --size 32 || bail "subsystem $w"
done
echo "# $WORKERS workers, $SECS s, subsystems ${TEST_NQN}s0..$((WORKERS - 1)) on null_blk"

w_hostid() { printf '5707a000-0000-4000-8000-%012d' "$1"; }
RNVME_BIN=${RNVME_BIN:-${RNVME_OUT:-$REPO/build}/tools/rnvme}
clients="sysfs"
command -v nvme >/dev/null && clients+=" nvme-cli"
[ -x "$RNVME_BIN" ] && clients+=" rnvme"
read -r -a client_list <<< "$clients"
echo "# plain cycles connect through: $clients"
# client_connect CLIENT ID: connect worker ID's controller; prints a reply like
# nvmf_write's (instance=N) on success
client_connect() {
	local hid out rc=0
	hid=$(w_hostid "$2")
	case $1 in
	sysfs) nvmf_write "$(w_opts "$2")" 90; return ;;
	nvme-cli) out=$(timeout 90 nvme connect -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -n "${TEST_NQN}s$2" \
			-q "nqn.2014-08.org.nvmexpress:uuid:$hid" -I "$hid" 2>&1) || rc=$? ;;
	rnvme) out=$(timeout 90 "$RNVME_BIN" connect -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -n "${TEST_NQN}s$2" \
			-q "nqn.2014-08.org.nvmexpress:uuid:$hid" -I "$hid" -J none --quiet 2>&1) || rc=$? ;;
	esac
	if [ "$1" = nvme-cli ] && [ "$rc" -gt 128 ]; then
		# nvme-cli's own death (see client_delete): counted apart
		echo "nvme connect died of signal $((rc - 128)): $(echo "$out" | tail -n 2 | tr '\n' ' ')"
		return 200
	fi
	if [ "$rc" = 0 ] && find_ctrl "nqn.2014-08.org.nvmexpress:uuid:$hid"; then
		echo "instance=${FOUND#nvme}"
	else
		echo "$1 exit $rc: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
		return "$rc"
	fi
}
# client_delete CLIENT CTRL; 200: nvme-cli died of a signal (printed)
#
# Debian 12's nvme-cli 2.4 (libnvme 1.3) scans every controller's sysfs
# directory on a disconnect and on a connect; with four other workers
# creating and removing controllers it died of SIGABRT ("free(): double free
# detected in tcache 2") in make check of f503684 (a disconnect) and of
# 0c4d3c9 (two connects).  libnvme 1.3 frees a controller's namespace
# directory entries twice when its scandir() fails because the controller
# went away meanwhile (nvme_ctrl_scan_namespaces, linux-nvme/libnvme issue
# 840, reported on Debian 12's 1.3-1).  Such a death, connect or disconnect,
# is counted and printed apart, and whatever controller it left is then
# deleted through sysfs, which must work; the rnvme tool dying is a failure.
client_delete() {
	local out rc=0
	case $1 in
	sysfs) delete "$2"; return ;;
	nvme-cli) out=$(timeout 60 nvme disconnect -d "$2" 2>&1) || rc=$? ;;
	rnvme) out=$(timeout 60 "$RNVME_BIN" disconnect -d "$2" 2>&1) || rc=$? ;;
	esac
	if [ "$1" = nvme-cli ] && [ "$rc" -gt 128 ]; then
		echo "# nvme disconnect -d $2 died of signal $((rc - 128)): $(echo "$out" | tail -n 2 | tr '\n' ' ')"
		return 200
	fi
	return "$rc"
}
w_opts() {
	local hid
	hid=$(w_hostid "$1")
	echo "transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=$TGT_PORT,nqn=${TEST_NQN}s$1,hostnqn=nqn.2014-08.org.nvmexpress:uuid:$hid,hostid=$hid"
}

# find_ctrl HOSTNQN: FOUND=nvmeN of the controller with that host NQN, or empty.
# (hostnqn is readable from the moment the controller exists; subsysnqn is not.)
find_ctrl() {
	local c h
	FOUND=
	for c in /sys/class/nvme/nvme*; do
		read -r h 2>/dev/null < "$c/hostnqn" || continue
		[ "$h" = "$1" ] && FOUND=${c##*/} && return 0
	done
	return 1
}

# delete CTRL: sysfs delete (synchronous); 0 when gone.
delete() {
	[ -e "/sys/class/nvme/$1/delete_controller" ] || return 1
	timeout 60 sh -c "echo 1 > /sys/class/nvme/$1/delete_controller" 2>/dev/null
}

# worker ID: the storm loop of one worker; writes its counters to $work/wID.
worker() {
	local id=$1 opts hn reply rc inst ctrl dev mode p dd_pid drc
	local cyc=0 conn_err=0 del_err=0 ebusy=0 early=0 io=0 io_err=0 hang=0 plain=0 quick=0 during=0 cli_died=0
	local client n_sysfs=0 n_nvme_cli=0 n_rnvme=0
	opts=$(w_opts "$id")
	hn=nqn.2014-08.org.nvmexpress:uuid:$(w_hostid "$id")
	# at least SECS, and on until this worker's share of MIN_CYCLES is done
	# (the leak bound below needs them; a TCG guest on a loaded host is
	# slow), but never past 4 x SECS
	local end=$((EPOCHSECONDS + SECS)) hard_end=$((EPOCHSECONDS + 4 * SECS))
	local want=$(((MIN_CYCLES + WORKERS - 1) / WORKERS))
	while [ "$EPOCHSECONDS" -lt "$end" ] ||
		{ [ "$cyc" -lt "$want" ] && [ "$EPOCHSECONDS" -lt "$hard_end" ]; }; do
		mode=$(((cyc + id) % 4))
		cyc=$((cyc + 1))
		if [ "$mode" = 2 ]; then
			# delete while the connect is in progress: nvme-core answers EBUSY
			# until the controller has started once; "landed" counts deletes
			# that succeeded while the writing process was still alive (the
			# kernel's create may already have returned by then)
			during=$((during + 1))
			nvmf_write "$opts" 90 > "$work/r$id" &
			p=$!
			while kill -0 "$p" 2>/dev/null; do
				if find_ctrl "$hn"; then
					if echo 1 2>/dev/null > "/sys/class/nvme/$FOUND/delete_controller"; then
						early=$((early + 1))
						break
					fi
					ebusy=$((ebusy + 1))
				fi
				sleep 0.05
			done
			rc=0
			wait "$p" || rc=$?
			read -r reply < "$work/r$id"
			case "$reply" in
			instance=*) ;;
			*) [ "$rc" = 124 ] && hang=$((hang + 1))
			   conn_err=$((conn_err + 1))
			   echo "# worker $id cycle $cyc (delete during connect): connect failed rc=$rc: $reply" ;;
			esac
			# whatever landed, it must go away
			if find_ctrl "$hn" && ! delete "$FOUND" && find_ctrl "$hn"; then
				del_err=$((del_err + 1))
				echo "# worker $id cycle $cyc: cannot delete $FOUND"
			fi
			continue
		fi
		client=sysfs
		if [ "$mode" = 0 ]; then
			client=${client_list[$(((cyc / 4 + id) % ${#client_list[@]}))]}
			eval "n_${client//-/_}=\$((n_${client//-/_} + 1))"
		fi
		rc=0
		reply=$(client_connect "$client" "$id") || rc=$?
		if [ "$rc" = 200 ]; then
			cli_died=$((cli_died + 1))
			echo "# worker $id cycle $cyc (mode $mode): $reply"
			if find_ctrl "$hn" && ! delete "$FOUND" && find_ctrl "$hn"; then
				del_err=$((del_err + 1))
				echo "# worker $id cycle $cyc: delete $FOUND through sysfs after nvme-cli died failed"
			fi
			continue
		fi
		case "$reply" in
		instance=*) ;;
		*) [ "$rc" = 124 ] && hang=$((hang + 1))
		   conn_err=$((conn_err + 1))
		   echo "# worker $id cycle $cyc (mode $mode, $client): connect failed rc=$rc: $reply"
		   find_ctrl "$hn" && delete "$FOUND"
		   continue ;;
		esac
		inst=${reply#instance=}
		ctrl=nvme${inst%%,*}
		dd_pid=
		case "$mode" in
		0)	# plain: wait for the namespace, then delete
			wait_for 30 ctrl_ns_dev "$ctrl"
			plain=$((plain + 1)) ;;
		1)	# delete with a dd writing to the namespace
			if dev=$(wait_ns_dev "$ctrl" 30); then
				timeout 60 dd if=/dev/zero of="$dev" bs=64k count=64 oflag=direct status=none 2>/dev/null &
				dd_pid=$!
				io=$((io + 1))
				sleep 0.$((RANDOM % 8 + 1))
			fi ;;
		3)	# delete right after the connect returned (scan work racing)
			quick=$((quick + 1)) ;;
		esac
		rc=0
		client_delete "$client" "$ctrl" || rc=$?
		if [ "$rc" = 200 ]; then
			cli_died=$((cli_died + 1))
			if [ -e "/sys/class/nvme/$ctrl" ] && ! delete "$ctrl" && [ -e "/sys/class/nvme/$ctrl" ]; then
				del_err=$((del_err + 1))
				echo "# worker $id cycle $cyc: delete $ctrl through sysfs after nvme-cli died failed"
			fi
		elif [ "$rc" != 0 ] && [ -e "/sys/class/nvme/$ctrl" ]; then
			del_err=$((del_err + 1))
			echo "# worker $id cycle $cyc: delete $ctrl ($client) failed (exit $rc)"
		fi
		if [ -n "$dd_pid" ]; then
			drc=0
			wait "$dd_pid" || drc=$?
			[ "$drc" = 0 ] || io_err=$((io_err + 1))
			[ "$drc" = 124 ] && hang=$((hang + 1))
		fi
	done
	echo "$cyc $conn_err $del_err $ebusy $early $io $io_err $hang $plain $quick $during $n_sysfs $n_nvme_cli $n_rnvme $cli_died" > "$work/w$id"
}

# ---------------------------------------------------------- warm-up and baseline
# One cycle per worker identity first: one-time allocations (nvmet ports, host
# entries, workqueues, the rxe pools' first slabs) must not count as leaks.
warm=0
for ((w = 0; w < WORKERS; w++)); do
	reply=$(nvmf_write "$(w_opts "$w")" 90)
	case "$reply" in
	instance=*) inst=${reply#instance=}; c=nvme${inst%%,*}
		    wait_ns_dev "$c" 30 > /dev/null && dd if=/dev/zero of="$(ctrl_ns_dev "$c")" bs=64k count=64 oflag=direct status=none
		    delete "$c" && warm=$((warm + 1)) ;;
	*) diag "warm-up connect $w: $reply" ;;
	esac
done
tap_result "warm-up: $warm/$WORKERS connect/dd/delete cycles" "$([ "$warm" = "$WORKERS" ] && echo 0 || echo 1)"
wait_for 30 fx_no_fabrics_ctrls
fx_settle 3
count_ctrls() { local c n=0; for c in /sys/class/nvme/nvme*; do [ -e "$c" ] && n=$((n + 1)); done; echo "$n"; }
count_devs() { local d n=0; for d in /dev/nvme*; do [ "$d" != /dev/nvme-fabrics ] && [ -e "$d" ] && n=$((n + 1)); done; echo "$n"; }
rdma_res() { rdma resource show 2>/dev/null | sed 's/^[0-9]*: //' | tr '\n' ';'; }
refcnt() { cat "/sys/module/$mod/refcnt" 2>/dev/null; }
base_ctrls=$(count_ctrls) base_devs=$(count_devs) base_ref=$(refcnt) base_res=$(rdma_res)
fx_mem_snapshot "$work/mem.before"
echo "# baseline: controllers=$base_ctrls /dev/nvme*=$base_devs $mod refcnt=$base_ref"
echo "# baseline rdma resources: $base_res"

# ---------------------------------------------------------- the storm
t=$(now_ns)
pids=()
for ((w = 0; w < WORKERS; w++)); do
	worker "$w" > "$work/log$w" 2>&1 &
	pids+=($!)
done
sleep $((SECS / 2))
mid=$(count_ctrls)
echo "# controllers present at mid-storm: $mid"
# workers stop starting cycles at SECS (4 x SECS at the latest, see worker);
# one cycle is bounded by its timeouts (< 4 min)
alive=0
for p in "${pids[@]}"; do
	wait_for $((SECS / 2 + 3 * SECS + 240)) bash -c "! kill -0 $p" || { alive=$((alive + 1)); kill "$p"; }
	wait "$p"
done
storm_s=$(secs_since "$t")
echo "# storm: $storm_s s"
cat "$work"/log* | head -n 40
tap_result "all $WORKERS workers finished" "$alive" "$alive workers still running"

tot=(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)
missing=0
for ((w = 0; w < WORKERS; w++)); do
	if ! read -r -a v < "$work/w$w"; then
		missing=$((missing + 1))
		continue
	fi
	echo "# worker $w: cycles=${v[0]} connect_err=${v[1]} delete_err=${v[2]} ebusy_during_connect=${v[3]} delete_landed_during_connect=${v[4]} io_cycles=${v[5]} io_err=${v[6]} hangs=${v[7]}"
	for i in "${!tot[@]}"; do tot[i]=$((tot[i] + v[i])); done
done
tap_result "every worker reported its counters" "$missing"
echo "# total: cycles=${tot[0]} (plain ${tot[8]}, delete-right-after-connect ${tot[9]}, delete-during-connect ${tot[10]}, under-dd ${tot[5]}) in $storm_s s"
echo "# plain cycles by client: sysfs ${tot[11]}, nvme-cli ${tot[12]}, rnvme tool ${tot[13]}"
echo "# nvme-cli connects and disconnects that died of a signal (libnvme 1.3, see client_delete; what they left deleted through sysfs): ${tot[14]}"
echo "# total: connect_err=${tot[1]} delete_err=${tot[2]} ebusy_during_connect=${tot[3]} delete_landed_during_connect=${tot[4]} io_err(dd cut by delete, expected)=${tot[6]} hangs=${tot[7]}"
tap_result "at least $MIN_CYCLES connect/disconnect cycles (${tot[0]})" "$([ "${tot[0]}" -ge "$MIN_CYCLES" ] && echo 0 || echo 1)"
tap_result "no connect failed (${tot[1]})" "${tot[1]}"
for i in 12 13; do
	c=$([ $i = 12 ] && echo nvme-cli || echo rnvme)
	[[ " $clients " == *" $c "* ]] || continue
	tap_result "plain cycles through $c (${tot[i]})" "$([ "${tot[i]}" -gt 0 ] && echo 0 || echo 1)"
done
tap_result "no disconnect failed (${tot[2]})" "${tot[2]}"
tap_result "no operation hit its timeout (${tot[7]})" "${tot[7]}"
tap_result "deletes raced with in-progress connects (${tot[3]} EBUSY, ${tot[4]} landed)" \
	"$([ $((tot[3] + tot[4])) -gt 0 ] && echo 0 || echo 1)"
tap_result "deletes raced with dd (${tot[5]} cycles)" "$([ "${tot[5]}" -gt 0 ] && echo 0 || echo 1)"

# ---------------------------------------------------------- back to baseline
check "no fabrics controllers left by the workers" fx_no_fabrics_ctrls
fx_host_disconnect_all
fx_settle 3
res_is_base() { [ "$(rdma_res)" = "$base_res" ]; }
wait_for 30 res_is_base
res=$(rdma_res)
echo "# rdma resources after: $res (waited $WAIT_ELAPSED s)"
tap_result "rxe PDs/CQs/QPs/cm_ids/MRs back to baseline" "$([ "$res" = "$base_res" ] && echo 0 || echo 1)" \
	"before: $base_res" "after:  $res" "$(rdma resource show qp 2>&1 | head -n 20)"
n=$(count_ctrls)
tap_result "controller count back to baseline ($n)" "$([ "$n" = "$base_ctrls" ] && echo 0 || echo 1)" "$(ls /sys/class/nvme)"
# Bounded like the RDMA resources, the wait printed: in one make check a
# namespace node (/dev/nvme1n1) was still there 3 s after the last delete,
# with no controller left; one that stays is a leak, and who holds it and
# what is under it are printed.
devs_is_base() { [ "$(count_devs)" = "$base_devs" ]; }
wait_for 30 devs_is_base
n=$(count_devs)
echo "# /dev/nvme* after: $n (waited $WAIT_ELAPSED s)"
tap_result "no leftover /dev/nvme* ($n)" "$([ "$n" = "$base_devs" ] && echo 0 || echo 1)" "$(ls /dev/nvme*)" \
	"$(fuser -v /dev/nvme*n* 2>&1 | head -n 10)" \
	"under them: $(printf '%s ' /sys/block/nvme*/slaves/*)"
r=$(refcnt)
tap_result "$mod refcnt back to baseline ($r)" "$([ "$r" = "$base_ref" ] && echo 0 || echo 1)" "before $base_ref after $r"
fx_mem_snapshot "$work/mem.after"
fx_mem_delta "$work/mem.before" "$work/mem.after"
if [ "${tot[0]}" -gt 0 ]; then
	echo "# per cycle: SUnreclaim $((MEM_D_SUNRECLAIM * 1024 / tot[0])) bytes, kmalloc-N $((MEM_D_KMALLOC * 1024 / tot[0])) bytes"
fi
if fx_debug_kernel && grep -q ' __asan_load8$' /proc/kallsyms 2>/dev/null; then
	# KASAN's quarantine keeps freed objects in their slabs for a while: the
	# byte bound means nothing here; kmemleak's scan after the suite
	# (fx_sanitizer_gate) checks for leaked objects exactly
	echo "# kmalloc-N grew $MEM_D_KMALLOC KiB over ${tot[0]} cycles (KASAN quarantine: not a bound here; kmemleak scans after the suite)"
else
	tap_result "kmalloc-N caches grew by at most $KMALLOC_MAX_KIB KiB ($MEM_D_KMALLOC KiB over ${tot[0]} cycles)" \
		"$([ "$MEM_D_KMALLOC" -le "$KMALLOC_MAX_KIB" ] && echo 0 || echo 1)"
fi
t=$(now_ns)
rc=0
timeout 60 rmmod "$mod" || rc=$?
echo "# rmmod $mod: $(secs_since "$t") s"
tap_result "rmmod $mod after the storm (exit $rc)" "$rc"
check "$mod is gone" test ! -d "/sys/module/$mod"

suite_end
