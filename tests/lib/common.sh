# shellcheck shell=bash disable=SC2034 # constants and results are used by the suites
# Common helpers for the rnvme guest test suites: TAP output, timing, bounded
# waits and fixtures (rxe over a veth pair, an nvmet target, the host driver,
# dmesg checks). Sourced by tests/suites/NN-*.sh, which run inside the test VM
# (tests/vm/run-vm.sh) as root.
#
# Environment:
#   REPO          repository root (set by the VM runner; derived otherwise)
#   HOST_DRIVER   "rnvme" (default: insmod $REPO/rnvme.ko) or "inbox" (in-tree nvme_rdma)
#   TRANSPORT     nvme-fabrics transport name used by the host (default rdma)
#   RNVME_PARAMS  module parameters for rnvme.ko
#   RNVME_KO      path of the module (default $REPO/build/$(uname -r)/rnvme.ko,
#                 the build for the running kernel)

: "${REPO:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${HOST_DRIVER:=rnvme}"
: "${TRANSPORT:=rdma}"
: "${RNVME_PARAMS:=}"
: "${RNVME_KO:=${RNVME_OUT:-$REPO/build}/$(uname -r)/rnvme.ko}"
export REPO HOST_DRIVER TRANSPORT RNVME_PARAMS RNVME_KO

# shellcheck disable=SC2034 # constants used by the suites
# Fabric addresses (documentation ranges only; they live on veth0/veth1 inside the guest).
HOST_IP4=192.0.2.1
TGT_IP4=192.0.2.2
HOST_IP6=2001:db8::1
TGT_IP6=2001:db8::2
TGT_PORT=4420
TEST_NQN=nqn.2014-08.org.nvmexpress.rnvme:test1
TEST_NQN2=nqn.2014-08.org.nvmexpress.rnvme:test2
HOST_NQN=nqn.2014-08.org.nvmexpress:uuid:6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d
HOST_ID=6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d
NVMET_CFS=/sys/kernel/config/nvmet
FX_STATE=/run/rnvme-fx

# ====================================================================== TAP

TAP_N=0
TAP_PASS=0
TAP_FAIL=0
TAP_SKIP=0
TAP_PLANNED=

# tap_plan N: print the plan up front (optional; tap_finish prints it otherwise).
tap_plan() {
	TAP_PLANNED=$1
	echo "1..$1"
}

diag() {
	local line
	if [ $# -gt 0 ]; then
		printf '%s\n' "$*" | while IFS= read -r line; do echo "# $line"; done
	else
		while IFS= read -r line; do echo "# $line"; done
	fi
}

ok() {
	TAP_N=$((TAP_N + 1))
	TAP_PASS=$((TAP_PASS + 1))
	echo "ok $TAP_N - $*"
}

# not_ok DESC [DIAG...]: a failing test point, optional diagnostic lines.
not_ok() {
	local desc=$1
	shift
	TAP_N=$((TAP_N + 1))
	TAP_FAIL=$((TAP_FAIL + 1))
	echo "not ok $TAP_N - $desc"
	[ $# -eq 0 ] || diag "$@"
}

# tap_skip REASON [DESC]: a skipped test point.
tap_skip() {
	TAP_N=$((TAP_N + 1))
	TAP_SKIP=$((TAP_SKIP + 1))
	echo "ok $TAP_N - ${2:-skipped} # SKIP $1"
}

# tap_skip_all REASON: the whole suite does not apply; exits 0.
tap_skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

# bail REASON: fatal setup error; the rest of the suite cannot run.
bail() {
	echo "Bail out! $*"
	fx_cleanup_all >/dev/null 2>&1 || true
	exit 1
}

# tap_ok_if DESC CONDITION-RC [DIAG...]
tap_result() {
	local desc=$1 rc=$2
	shift 2
	if [ "$rc" = 0 ]; then ok "$desc"; else not_ok "$desc" "$@"; fi
}

# check DESC CMD...: ok when CMD succeeds; on failure its output (last 25 lines) is diagnostics.
check() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		ok "$desc"
	else
		not_ok "$desc" "command: $* (exit $rc)" "$(printf '%s\n' "$out" | tail -n 25)"
	fi
	return "$rc"
}

# check_fails DESC CMD...: ok when CMD fails (exit != 0, and not a timeout 124).
check_fails() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 124 ]; then
		ok "$desc"
		[ -z "$out" ] || diag "$(printf '%s\n' "$out" | tail -n 3)"
		return 0
	fi
	not_ok "$desc" "command: $* (exit $rc, expected failure)" "$(printf '%s\n' "$out" | tail -n 25)"
	return 1
}

# tap_finish: print the plan (if not printed) and a summary; exit 0/1.
tap_finish() {
	[ -n "$TAP_PLANNED" ] || echo "1..$TAP_N"
	if [ -n "$TAP_PLANNED" ] && [ "$TAP_PLANNED" != "$TAP_N" ]; then
		echo "# planned $TAP_PLANNED tests but ran $TAP_N"
		TAP_FAIL=$((TAP_FAIL + 1))
	fi
	echo "# $(basename "$0"): $TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
	[ "$TAP_FAIL" = 0 ]
	exit $?
}

# ====================================================================== timing

# Fork-free clock (every exec is slow under TCG): nanoseconds since the epoch.
now_ns() { local t=${EPOCHREALTIME/[.,]/}; echo "${t}000"; }

# secs_since STAMP: seconds (2 decimals) since a now_ns stamp.
secs_since() {
	local t=${EPOCHREALTIME/[.,]/} d
	d=$(((t - ${1:0:-3}) / 10000))
	printf '%d.%02d' $((d / 100)) $((d % 100))
}

# timed NAME CMD...: run CMD, print "# NAME: N.NN s", return its status; T_ELAPSED = seconds.
T_ELAPSED=0
timed() {
	local name=$1 t rc=0
	shift
	t=$(now_ns)
	"$@" || rc=$?
	T_ELAPSED=$(secs_since "$t")
	echo "# $name: $T_ELAPSED s"
	return "$rc"
}

# wait_for SECS CMD...: poll CMD every 0.2 s until it succeeds or SECS pass.
# Returns 0/1; WAIT_ELAPSED = seconds waited.
WAIT_ELAPSED=0
wait_for() {
	local limit=$1 t
	shift
	t=$(now_ns)
	while :; do
		if "$@" >/dev/null 2>&1; then
			WAIT_ELAPSED=$(secs_since "$t")
			return 0
		fi
		WAIT_ELAPSED=$(secs_since "$t")
		[ "${WAIT_ELAPSED%.*}" -ge "$limit" ] && return 1
		sleep 0.2
	done
}

# ====================================================================== dmesg

FX_DMESG_MARK=

# fx_dmesg_mark [NAME]: put a unique marker into the kernel log.
fx_dmesg_mark() {
	FX_DMESG_MARK="rnvme-test-mark:${1:-$(basename "$0")}:$$:$(now_ns)"
	echo "$FX_DMESG_MARK" > /dev/kmsg
}

# fx_drop_known_reports: a filter over kernel log text that replaces the
# reports of known upstream defects outside rnvme by one line saying so; every
# other line passes unchanged.  Known so far (one, tests/README.md):
#  - nvmet-rdma (the target) executes a Fabrics Connect command that arrived
#    before the RDMA CM's ESTABLISHED event from that event's handler, under the
#    CM id's handler_mutex, and looks up the subsystem under nvmet_config_sem;
#    configfs port removal holds nvmet_config_sem and destroys the listening CM
#    id (handler_mutex).  Lockdep calls that a circular dependency.  It is
#    dropped only when it names both locks and no rnvme frame or lock.
# Lockdep switches itself off after any report, so the suites after it in the
# same boot run without lock checking; the line says so.
fx_drop_known_reports() {
	awk '
	function flush(   known) {
		known = buf ~ /\(nvmet_config_sem\)/ && buf ~ /\(&id_priv->handler_mutex\)/ && buf !~ /\[rnvme\]|rnvme_/
		if (known)
			print first " rnvme-test: known upstream nvmet-rdma report dropped (target side: nvmet_config_sem vs. rdma_cm handler_mutex; tests/README.md); no lock checking for the rest of this boot"
		else
			printf "%s", buf
		buf = ""; state = 0
	}
	state == 0 && /WARNING: possible circular locking dependency detected/ {
		state = 1; buf = $0 "\n"; first = $1; n = 1; next
	}
	state == 1 {
		buf = buf $0 "\n"
		if (/stack backtrace:/) state = 2
		if (++n > 400) flush()
		next
	}
	state == 2 {
		if ($0 ~ /\] +(CPU: |Hardware name|Workqueue:|Call Trace:|<\/?TASK>|\? |[A-Za-z_][A-Za-z_.0-9]*\+0x)/ && ++n <= 400) {
			buf = buf $0 "\n"; next
		}
		flush()
	}
	{ print }
	END { if (state) flush() }'
}

# Kernel log since the last mark (whole log when no mark was set), with known
# upstream reports outside rnvme dropped (fx_drop_known_reports).
fx_dmesg_since_mark() {
	if [ -n "$FX_DMESG_MARK" ]; then
		dmesg | awk -v m="$FX_DMESG_MARK" 'found { print } index($0, m) { found = 1 }' | fx_drop_known_reports
	else
		dmesg | fx_drop_known_reports
	fi
}

# (7.x names, once per boot, the first work queued on a deprecated system
# workqueue: when that is rnvme's, it fails here)
FX_DMESG_BAD='WARNING:|BUG:|Oops|general protection|possible circular locking|inconsistent lock state|suspicious RCU|possible recursive locking|hung_task|blocked for more than|kmemleak|list_add corruption|list_del corruption|refcount_t:|UBSAN:|KASAN:|Kernel panic|stack-protector|double free|use-after-free|scheduling while atomic|sleeping function called from invalid context|\[rnvme\] enqueued on deprecated workqueue'

# fx_dmesg_check [DESC]: a TAP point; fails when the log since the mark has kernel warnings.
fx_dmesg_check() {
	local desc=${1:-"no kernel warnings in dmesg"} bad
	bad=$(fx_dmesg_since_mark | grep -E "$FX_DMESG_BAD" || true)
	if [ -z "$bad" ]; then
		ok "$desc"
	else
		not_ok "$desc" "offending kernel log lines:" "$(printf '%s\n' "$bad" | head -n 40)"
		fx_dmesg_since_mark | grep -E -A 25 "$FX_DMESG_BAD" | head -n 120 | diag
	fi
}

# ====================================================================== sanitizer gate
# On the debug test kernel (tests/debug-kernel: KASAN, lockdep, kmemleak, hung
# task and soft lockup detectors) tests/guest/run-suites.sh calls
# fx_sanitizer_gate after every suite's teardown.  Elsewhere it is a no-op.

KMEMLEAK=/sys/kernel/debug/kmemleak
FX_SANITIZER_BAD='BUG: KASAN|KASAN:|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|sleeping function called from invalid context|scheduling while atomic|bad unlock balance|held lock freed|lock held when returning to user space|workqueue leaked|BUG: MAX_LOCKDEP|DEBUG_LOCKS_WARN_ON|blocked for more than [0-9]+ seconds|soft lockup|hard LOCKUP|rcu_(sched|preempt) detected stalls|unreferenced object|new suspected memory leaks|kmemleak: .*(disabled|error)'

# fx_mib N: a fio size of N MiB divided by TEST_IO_DIV (rounded up): the
# debug kernel runs volume-bound suites with less data, same block sizes and
# queue depths.
fx_mib() {
	local d=${TEST_IO_DIV:-1}
	[[ $d =~ ^[1-9][0-9]*$ ]] || d=1
	echo "$((($1 + d - 1) / d))m"
}

# fx_debug_kernel: true on a kernel with lockdep or kmemleak.
fx_debug_kernel() {
	[ -e /proc/lockdep ] || [ -e "$KMEMLEAK" ]
}

# fx_kmemleak_scan: two scans 6 s apart (objects must be 5 s old and unchanged
# between scans to count), then print the unreferenced objects found and clear
# them so the next call reports only new ones.  Prints nothing when clean.
fx_kmemleak_scan() {
	[ -w "$KMEMLEAK" ] || return 0
	local t0=$SECONDS
	echo scan > "$KMEMLEAK" 2>/dev/null || { echo "kmemleak: scan failed (kmemleak disabled?)"; return 0; }
	# the second scan must start 6 s after the first (a scan under KASAN + TCG
	# takes longer than that already: then no wait)
	[ $((SECONDS - t0)) -ge 6 ] || sleep $((6 - (SECONDS - t0)))
	echo scan > "$KMEMLEAK"
	cat "$KMEMLEAK"
	echo clear > "$KMEMLEAK"
}

# fx_sanitizer_baseline: forget leaks from boot (called once per VM boot).
fx_sanitizer_baseline() {
	fx_debug_kernel || return 0
	local t leaks
	t=$(now_ns)
	leaks=$(fx_kmemleak_scan | grep -c '^unreferenced object' || true)
	echo "# sanitizer baseline: kernel $(uname -r), lockdep $([ -e /proc/lockdep ] && echo on || echo off), kmemleak $([ -e "$KMEMLEAK" ] && echo on || echo off); ${leaks} boot-time kmemleak objects cleared ($(secs_since "$t") s)"
}

# fx_sanitizer_gate NAME MARK [LEAKS]: scan for leaks (unless LEAKS is 0), then
# look at the kernel log since dmesg mark MARK (the start of the suite) for
# sanitizer reports.  Prints one "ok - NAME: ..." or "not ok - NAME: ..." line
# with the reports as "# " lines; returns 0 when clean, 1 on reports, 2 when
# not a debug kernel.  A kmemleak scan pair costs about 14 s under KASAN + TCG,
# so run-suites.sh scans once per boot (after the last suite) unless
# TEST_KMEMLEAK_EACH=1; a leak's report carries its allocation backtrace and
# age, which name the suite.
fx_sanitizer_gate() {
	local name=$1 mark=$2 scan=${3:-1} t leaks="" log bad what
	fx_debug_kernel || return 2
	t=$(now_ns)
	what="KASAN, lockdep, kmemleak, hung task, soft lockup"
	if [ "$scan" = 1 ]; then
		leaks=$(fx_kmemleak_scan)
	else
		what="KASAN, lockdep, hung task, soft lockup; kmemleak after the last suite"
	fi
	log=$(dmesg)
	if [[ $log != *"$mark"* ]]; then
		echo "not ok - $name: sanitizer gate ($what)"
		echo "# dmesg mark $mark is gone from the kernel log (ring buffer overrun): cannot check"
		return 1
	fi
	log=$(printf '%s\n' "$log" | awk -v m="$mark" 'f { print } index($0, m) { f = 1 }' | fx_drop_known_reports)
	bad=$(printf '%s\n' "$log" | grep -E -B 2 -A 30 "$FX_SANITIZER_BAD" | head -n 150 || true)
	# a dropped known report is not a failure, but it is said
	printf '%s\n' "$log" | grep -o 'rnvme-test: known upstream.*' | sed "s/^/# $name: /" || true
	if [ -z "$bad" ] && [ -z "$leaks" ]; then
		echo "ok - $name: sanitizer gate clean ($what; $(secs_since "$t") s)"
		# lockdep switches itself off after its first report (or a KASAN one)
		if grep -qE '^ *debug_locks: +0' /proc/lockdep_stats 2>/dev/null; then
			echo "# note: lockdep is off since an earlier report in this boot: $name was not lock-checked"
		fi
		return 0
	fi
	echo "not ok - $name: sanitizer gate ($what)"
	[ -z "$bad" ] || { echo "kernel log since the start of $name:"; printf '%s\n' "$bad"; } | diag
	[ -z "$leaks" ] || {
		echo "kmemleak: $(printf '%s\n' "$leaks" | grep -c '^unreferenced object') unreferenced object(s):"
		printf '%s\n' "$leaks" | head -n 120
	} | diag
	return 1
}

# ====================================================================== rxe fabric

# RNVME_RDMA selects the software RDMA provider of the fabric: rxe (Soft-RoCE,
# default) or siw (Soft-iWARP: TCP underneath, iWARP CM, RDMA READ responses
# need remote-write access).  RDMA_DEV0 is the host-side device (on veth0),
# RDMA_DEV1 the target side (on veth1); suites name devices through these.
# fx_rdma_select PROVIDER switches them (the suite runner runs "siw:NN" suites
# in the same boot as the rxe ones).
fx_rdma_select() {
	case "$1" in
	rxe) RDMA_MOD=rdma_rxe ;;
	siw) RDMA_MOD=siw ;;
	*) echo "Bail out! RNVME_RDMA=$1: want rxe or siw"; exit 1 ;;
	esac
	RNVME_RDMA=$1 RDMA_DEV0=${1}0 RDMA_DEV1=${1}1
	export RNVME_RDMA
}
fx_rdma_select "${RNVME_RDMA:-rxe}"

# The siw.ko tests/siw/build.sh made for a kernel built without siw (Debian's).
: "${RNVME_SIW_KO:=${RNVME_OUT:-$REPO/build}/$(uname -r)/siw/siw.ko}"

# fx_rdma_have: the provider's module can be loaded (the kernel's, or for siw
# the one tests/siw/build.sh made: make siw KVER=...)
fx_rdma_have() {
	[ -e "/sys/module/$RDMA_MOD" ] || modprobe -n "$RDMA_MOD" 2>/dev/null ||
		{ [ "$RDMA_MOD" = siw ] && [ -r "$RNVME_SIW_KO" ]; }
}

# fx_rdma_load: load the provider's module (idempotent)
fx_rdma_load() {
	[ -e "/sys/module/$RDMA_MOD" ] && return 0
	if modprobe -n "$RDMA_MOD" 2>/dev/null; then
		modprobe "$RDMA_MOD" || { echo "# modprobe $RDMA_MOD failed"; return 1; }
		return 0
	fi
	if [ "$RDMA_MOD" != siw ] || [ ! -r "$RNVME_SIW_KO" ]; then
		echo "# kernel $(uname -r) has no $RDMA_MOD module"
		return 1
	fi
	# its dependencies (modinfo: ib_core, ib_uverbs, libcrc32c) from the kernel
	modprobe -a ib_core ib_uverbs libcrc32c || { echo "# modprobe of siw's dependencies failed"; return 1; }
	insmod "$RNVME_SIW_KO" || { echo "# insmod $RNVME_SIW_KO failed"; return 1; }
	echo "# siw: $RNVME_SIW_KO (built from the kernel's source by tests/siw/build.sh)"
}

# fx_rxe_up: veth0 (host side, 192.0.2.1 / 2001:db8::1) <-> veth1 (target side,
# 192.0.2.2 / 2001:db8::2) with soft-RoCE devices rxe0 on veth0 and rxe1 on veth1.
#
# Both addresses are local to the one guest, so by default the kernel routes
# traffic between them over "lo", where rxe cannot receive. Policy routing sends
# locally generated traffic for the peer address out of the veth pair instead,
# so the host really uses rxe0 and the target rxe1 (removing rxe0 then hits only
# the host side). The "oif" rules make rdma_cm's reverse-path check of incoming
# connection requests (validate_net_dev) resolve to the receiving veth for IPv6.
fx_rxe_up() {
	local t mac0 mac1 fam
	t=$(now_ns)
	modprobe veth || { echo "# modprobe veth failed"; return 1; }
	fx_rdma_load || return 1
	if [ ! -e /sys/class/net/veth0 ]; then
		ip link add veth0 type veth peer name veth1 || return 1
	fi
	sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.all.accept_local=1 \
		net.ipv4.conf.veth0.rp_filter=0 net.ipv4.conf.veth0.accept_local=1 \
		net.ipv4.conf.veth1.rp_filter=0 net.ipv4.conf.veth1.accept_local=1 \
		net.ipv6.conf.veth0.accept_dad=0 net.ipv6.conf.veth1.accept_dad=0 >/dev/null
	# Each flow on one CPU, as a NIC's receive queue delivers it.  A veth
	# puts a packet on the backlog of the CPU that sent it, so a QP whose
	# packets leave from two CPUs (two pollers posting to one queue)
	# arrives reordered; Soft-RoCE answers the gap with a sequence NAK,
	# and its retransmission runs the fast registrations behind the NAKed
	# packet again, which fails the QP without a completion (rxe_requester()
	# in 6.1 and 6.12): the commands then wait for the I/O timeout.  RPS
	# over all CPUs keeps a flow's packets on one backlog, in order (one
	# CPU, as in the bench, cannot reorder: nothing to set there).  The
	# debug kernel is built without CONFIG_RPS: it goes without.
	local rps q
	if [ "$(nproc)" -gt 1 ]; then
		rps=$(printf '%x' $(((1 << $(nproc)) - 1)))
		for q in /sys/class/net/veth[01]/queues/rx-*/rps_cpus; do
			if [ ! -e "$q" ]; then
				echo "# no RPS in $(uname -r) (CONFIG_RPS): a flow sent from two CPUs may arrive reordered"
				break
			fi
			echo "$rps" > "$q" || { echo "# cannot set $q (RPS)"; return 1; }
		done
	fi
	read -r mac0 < /sys/class/net/veth0/address
	read -r mac1 < /sys/class/net/veth1/address
	# One ip process per address family (-force: keep going past "does not
	# exist" errors of the cleanup lines on reruns).
	local -a v4 v6
	v4=("addr replace $HOST_IP4/24 dev veth0" "addr replace $TGT_IP4/24 dev veth1"
		"link set veth0 up" "link set veth1 up"
		"neigh replace $TGT_IP4 lladdr $mac1 dev veth0 nud permanent"
		"neigh replace $HOST_IP4 lladdr $mac0 dev veth1 nud permanent"
		"route add $TGT_IP4 dev veth0 src $HOST_IP4 table 100"
		"route add $HOST_IP4 dev veth1 src $TGT_IP4 table 101")
	v6=("addr replace $HOST_IP6/64 dev veth0 nodad" "addr replace $TGT_IP6/64 dev veth1 nodad"
		"neigh replace $TGT_IP6 lladdr $mac1 dev veth0 nud permanent"
		"neigh replace $HOST_IP6 lladdr $mac0 dev veth1 nud permanent"
		"route add $TGT_IP6 dev veth0 src $HOST_IP6 table 100"
		"route add $HOST_IP6 dev veth1 src $TGT_IP6 table 101")
	fx_ip_batch() { # FAMILY PEER-OF-HOST PEER-OF-TARGET LINES...
		local fam=$1 tgt=$2 host=$3 p
		shift 3
		{
			echo "route flush table 100"
			echo "route flush table 101"
			for p in 10 11 12 13 1000; do echo "rule del pref $p"; done
			printf '%s\n' "$@"
			echo "rule add pref 10 iif lo to $tgt lookup 100"
			echo "rule add pref 11 iif lo to $host lookup 101"
			echo "rule add pref 12 oif veth0 to $tgt lookup 100"
			echo "rule add pref 13 oif veth1 to $host lookup 101"
			# The local table must come after the rules above.
			echo "rule add pref 1000 lookup local"
			echo "rule del pref 0 lookup local"
		} | ip "$fam" -force -batch - 2>&1 |
			grep -vE 'No such file or directory|No such process|Cannot find device|^Command failed|RTNETLINK answers: File exists' | diag
	}
	fx_ip_batch -4 "$TGT_IP4" "$HOST_IP4" "${v4[@]}"
	fx_ip_batch -6 "$TGT_IP6" "$HOST_IP6" "${v6[@]}"

	if ! fx_rxe_ports_active; then
		rdma link show "$RDMA_DEV0/1" >/dev/null 2>&1 ||
			rdma link add "$RDMA_DEV0" type "$RNVME_RDMA" netdev veth0 || return 1
		rdma link show "$RDMA_DEV1/1" >/dev/null 2>&1 ||
			rdma link add "$RDMA_DEV1" type "$RNVME_RDMA" netdev veth1 || return 1
	fi
	if ! wait_for 30 fx_rxe_ports_active; then
		echo "# $RNVME_RDMA ports not ACTIVE after 30 s:"
		rdma link show | diag
		return 1
	fi
	if ! ip route get "$TGT_IP4" | grep 'dev veth0' >/dev/null; then
		echo "# policy routing did not take effect:"
		{ ip rule; ip route get "$TGT_IP4"; } | diag
		return 1
	fi
	echo "# fx_rxe_up ($RNVME_RDMA: $RDMA_DEV0 on veth0, $RDMA_DEV1 on veth1): $(secs_since "$t") s"
}

# Both RDMA ports ACTIVE (one rdma call).
fx_rxe_ports_active() {
	local out
	out=$(rdma link show 2>/dev/null)
	[[ $out == *"link $RDMA_DEV0/1 state ACTIVE"* && $out == *"link $RDMA_DEV1/1 state ACTIVE"* ]]
}

# fx_rxe_down: remove the RDMA devices and the veth pair (idempotent); also a
# second pair (veth2/veth3, devices 2 and 3, rules 14-17: 14-multipath's path B)
# that a suite left behind.
fx_rxe_down() {
	local d p
	for d in "$RDMA_DEV0" "$RDMA_DEV1" "${RNVME_RDMA}2" "${RNVME_RDMA}3"; do
		if rdma link show "$d/1" >/dev/null 2>&1; then
			timeout 60 rdma link delete "$d" || echo "# rdma link delete $d failed"
		fi
	done
	ip link del veth0 2>/dev/null || true
	if [ -e /sys/class/net/veth2 ]; then
		for p in 14 15 16 17; do ip rule del pref "$p" 2>/dev/null; done
		ip route flush table 102 2>/dev/null
		ip route flush table 103 2>/dev/null
		ip link del veth2 2>/dev/null
	fi
	return 0
}

# A second fabric path in the same guest (14-multipath, 17-lost-write):
# veth2 (host side, 198.51.100.1) <-> veth3 (target side, 198.51.100.2) with
# RDMA devices ${RNVME_RDMA}2 and ${RNVME_RDMA}3, policy routes in tables
# 102/103 (rules 14-17) as fx_rxe_up sets up the first path.  fx_pathb_down
# removes it (fx_rxe_down does too).
HOST_IP4_B=198.51.100.1
TGT_IP4_B=198.51.100.2
fx_pathb_active() {
	local out
	out=$(rdma link show 2>/dev/null)
	[[ $out == *"link ${RNVME_RDMA}2/1 state ACTIVE"* && $out == *"link ${RNVME_RDMA}3/1 state ACTIVE"* ]]
}
fx_pathb_up() {
	local mac2 mac3
	[ -e /sys/class/net/veth2 ] || ip link add veth2 type veth peer name veth3 || return 1
	sysctl -qw net.ipv4.conf.veth2.rp_filter=0 net.ipv4.conf.veth2.accept_local=1 \
		net.ipv4.conf.veth3.rp_filter=0 net.ipv4.conf.veth3.accept_local=1 >/dev/null
	read -r mac2 < /sys/class/net/veth2/address
	read -r mac3 < /sys/class/net/veth3/address
	{
		echo "route flush table 102"
		echo "route flush table 103"
		for p in 14 15 16 17; do echo "rule del pref $p"; done
		echo "addr replace $HOST_IP4_B/24 dev veth2"
		echo "addr replace $TGT_IP4_B/24 dev veth3"
		echo "link set veth2 up"
		echo "link set veth3 up"
		echo "neigh replace $TGT_IP4_B lladdr $mac3 dev veth2 nud permanent"
		echo "neigh replace $HOST_IP4_B lladdr $mac2 dev veth3 nud permanent"
		echo "route add $TGT_IP4_B dev veth2 src $HOST_IP4_B table 102"
		echo "route add $HOST_IP4_B dev veth3 src $TGT_IP4_B table 103"
		echo "rule add pref 14 iif lo to $TGT_IP4_B lookup 102"
		echo "rule add pref 15 iif lo to $HOST_IP4_B lookup 103"
		echo "rule add pref 16 oif veth2 to $TGT_IP4_B lookup 102"
		echo "rule add pref 17 oif veth3 to $HOST_IP4_B lookup 103"
	} | ip -4 -force -batch - 2>&1 |
		grep -vE 'No such file or directory|No such process|Cannot find device|^Command failed|RTNETLINK answers: File exists' | diag
	if ! fx_pathb_active; then
		rdma link show "${RNVME_RDMA}2/1" >/dev/null 2>&1 ||
			rdma link add "${RNVME_RDMA}2" type "$RNVME_RDMA" netdev veth2 || return 1
		rdma link show "${RNVME_RDMA}3/1" >/dev/null 2>&1 ||
			rdma link add "${RNVME_RDMA}3" type "$RNVME_RDMA" netdev veth3 || return 1
	fi
	wait_for 30 fx_pathb_active || { rdma link show | diag; return 1; }
	ip route get "$TGT_IP4_B" | grep 'dev veth2' >/dev/null || { ip route get "$TGT_IP4_B" | diag; return 1; }
}
fx_pathb_down() {
	local d p
	for d in "${RNVME_RDMA}2" "${RNVME_RDMA}3"; do
		rdma link show "$d/1" >/dev/null 2>&1 && { timeout 60 rdma link delete "$d" || echo "# rdma link delete $d failed"; }
	done
	for p in 14 15 16 17; do ip rule del pref "$p" 2>/dev/null; done
	ip route flush table 102 2>/dev/null
	ip route flush table 103 2>/dev/null
	ip link del veth2 2>/dev/null
	return 0
}

# ====================================================================== nvmet target

# fx_target_up [--backing brd|nullb] [--nqn NQN] [--port ID] [--traddr A]
#              [--adrfam ipv4|ipv6] [--trsvcid N] [--trtype rdma|tcp] [--size MiB]
# Creates (or reuses) the subsystem NQN with one namespace on a fresh data-keeping
# block device, and exports it on port ID. Call again for more subsystems/ports.
# Sets FX_BACKING_DEV to the backing device of the namespace just created.
# shellcheck disable=SC2034 # read by the suites
FX_BACKING_DEV=
fx_target_up() {
	local backing=brd nqn=$TEST_NQN port=1 traddr='' adrfam='' trsvcid=$TGT_PORT trtype=rdma size=128
	while [ $# -gt 0 ]; do
		case "$1" in
		--backing) backing=$2; shift 2 ;;
		--nqn) nqn=$2; shift 2 ;;
		--port) port=$2; shift 2 ;;
		--traddr) traddr=$2; shift 2 ;;
		--adrfam) adrfam=$2; shift 2 ;;
		--trsvcid) trsvcid=$2; shift 2 ;;
		--trtype) trtype=$2; shift 2 ;;
		--size) size=$2; shift 2 ;;
		*) echo "# fx_target_up: unknown option $1"; return 2 ;;
		esac
	done
	if [ -z "$adrfam" ]; then
		case "$traddr" in *:*) adrfam=ipv6 ;; *) adrfam=ipv4 ;; esac
	fi
	if [ -z "$traddr" ]; then
		if [ "$adrfam" = ipv6 ]; then traddr=$TGT_IP6; else traddr=$TGT_IP4; fi
	fi

	mkdir -p "$FX_STATE"
	modprobe nvmet || return 1
	case "$trtype" in
	rdma) modprobe nvmet-rdma || return 1 ;;
	tcp) modprobe nvmet-tcp || return 1 ;;
	*) echo "# fx_target_up: unsupported trtype $trtype"; return 2 ;;
	esac
	[ -d "$NVMET_CFS" ] || { echo "# $NVMET_CFS missing (configfs not mounted?)"; return 1; }

	local sub=$NVMET_CFS/subsystems/$nqn
	if [ ! -d "$sub" ]; then
		local dev
		dev=$(fx_backing_create "$backing" "$size") || return 1
		mkdir "$sub" || return 1
		echo 1 > "$sub/attr_allow_any_host"
		mkdir "$sub/namespaces/1" || return 1
		echo "$dev" > "$sub/namespaces/1/device_path" || return 1
		# a regular file (tmpfs: no O_DIRECT) is served through the page cache
		if [ -f "$dev" ]; then echo 1 > "$sub/namespaces/1/buffered_io" || return 1; fi
		echo 1 > "$sub/namespaces/1/enable" || { echo "# cannot enable namespace on $dev"; return 1; }
		echo "$nqn $dev" >> "$FX_STATE/subsystems"
		FX_BACKING_DEV=$dev
	else
		FX_BACKING_DEV=$(cat "$sub/namespaces/1/device_path")
	fi

	local p=$NVMET_CFS/ports/$port
	if [ ! -d "$p" ]; then
		mkdir "$p" || return 1
		echo "$trtype" > "$p/addr_trtype"
		echo "$adrfam" > "$p/addr_adrfam"
		echo "$traddr" > "$p/addr_traddr"
		echo "$trsvcid" > "$p/addr_trsvcid"
	fi
	if [ ! -e "$p/subsystems/$nqn" ]; then
		ln -s "$sub" "$p/subsystems/$nqn" || { echo "# cannot enable port $port ($trtype $traddr:$trsvcid)"; return 1; }
	fi
	return 0
}

# fx_backing_create brd|nullb|file SIZE_MIB: print the path of a new data-keeping
# block device, or (file) of a file on tmpfs, which keeps the target's I/O out
# of the block layer (make bench's BENCH_BACKING=file).
fx_backing_create() {
	local kind=$1 size=$2 n
	mkdir -p "$FX_STATE"
	case "$kind" in
	file)
		n=$(cat "$FX_STATE/file_next" 2>/dev/null || echo 0)
		echo $((n + 1)) > "$FX_STATE/file_next"
		mkdir -p /dev/shm/rnvme-backing || return 1
		truncate -s "${size}M" "/dev/shm/rnvme-backing/ns$n.img" || return 1
		echo "/dev/shm/rnvme-backing/ns$n.img"
		;;
	brd)
		if [ ! -d /sys/module/brd ]; then
			# rd_size is per device, in KiB; devices allocate memory only when written.
			modprobe brd rd_nr=4 rd_size=$((size * 1024)) max_part=0 || return 1
			echo "$size" > "$FX_STATE/brd_size"
		elif [ "$(cat "$FX_STATE/brd_size" 2>/dev/null || echo 0)" -lt "$size" ]; then
			echo "# brd already loaded with smaller devices than $size MiB" >&2
			return 1
		fi
		n=$(cat "$FX_STATE/brd_next" 2>/dev/null || echo 0)
		[ -b "/dev/ram$n" ] || { echo "# /dev/ram$n missing (only 4 brd devices)" >&2; return 1; }
		echo $((n + 1)) > "$FX_STATE/brd_next"
		echo "/dev/ram$n"
		;;
	nullb)
		modprobe null_blk nr_devices=0 || return 1
		n=$(cat "$FX_STATE/nullb_next" 2>/dev/null || echo 0)
		local d=/sys/kernel/config/nullb/rnvmenullb$n
		mkdir "$d" || return 1
		echo "$size" > "$d/size"
		echo 4096 > "$d/blocksize"
		echo 1 > "$d/memory_backed"
		echo 1 > "$d/discard" 2>/dev/null || true
		echo 1 > "$d/power" || return 1
		echo $((n + 1)) > "$FX_STATE/nullb_next"
		# 6.1+ names configfs-created null_blk disks after the configfs item.
		local dev=/dev/rnvmenullb$n
		[ -b "$dev" ] || dev=/dev/nullb$(cat "$d/index")
		wait_for 10 test -b "$dev" || { echo "# $dev did not appear" >&2; return 1; }
		echo "$dev"
		;;
	*) echo "# unknown backing '$kind'" >&2; return 2 ;;
	esac
}

# fx_target_down: remove all nvmet ports, subsystems, hosts and backing devices (idempotent).
fx_target_down() {
	local p s ns l h d
	if [ -d "$NVMET_CFS" ]; then
		for p in "$NVMET_CFS"/ports/*; do
			[ -d "$p" ] || continue
			for l in "$p"/subsystems/*; do [ -L "$l" ] && rm -f "$l"; done
			for l in "$p"/referrals/*; do [ -d "$l" ] && rmdir "$l"; done
			rmdir "$p" 2>/dev/null || echo "# cannot remove port $p"
		done
		for s in "$NVMET_CFS"/subsystems/*; do
			[ -d "$s" ] || continue
			for l in "$s"/allowed_hosts/*; do [ -L "$l" ] && rm -f "$l"; done
			for ns in "$s"/namespaces/*; do
				[ -d "$ns" ] || continue
				echo 0 > "$ns/enable" 2>/dev/null
				rmdir "$ns" || echo "# cannot remove namespace $ns"
			done
			rmdir "$s" || echo "# cannot remove subsystem $s"
		done
		for h in "$NVMET_CFS"/hosts/*; do [ -d "$h" ] && rmdir "$h"; done
	fi
	for d in /sys/kernel/config/nullb/rnvmenullb*; do
		[ -d "$d" ] || continue
		echo 0 > "$d/power" 2>/dev/null
		rmdir "$d" || echo "# cannot remove $d"
	done
	modprobe -r nvmet-rdma nvmet-tcp nvmet 2>/dev/null || true
	modprobe -r brd 2>/dev/null || true
	rm -rf /dev/shm/rnvme-backing
	rm -f "$FX_STATE/brd_next" "$FX_STATE/brd_size" "$FX_STATE/nullb_next" "$FX_STATE/file_next" "$FX_STATE/subsystems"
	return 0
}

# ====================================================================== host driver

# Name of the host module as it appears under /sys/module.
host_module() {
	if [ "$HOST_DRIVER" = inbox ]; then
		echo "nvme_${TRANSPORT//-/_}"
	else
		echo rnvme
	fi
}

# fx_host_driver_load: load the host transport (rnvme.ko, or nvme-rdma with HOST_DRIVER=inbox).
fx_host_driver_load() {
	local m
	for m in nvme-core nvme-fabrics ib_core rdma_cm; do
		modprobe "$m" || { echo "# modprobe $m failed"; return 1; }
	done
	if [ "$HOST_DRIVER" = inbox ]; then
		rm -f /etc/modprobe.d/rnvme-test-block-inbox.conf
		modprobe "nvme-$TRANSPORT" || { echo "# modprobe nvme-$TRANSPORT failed"; return 1; }
		return 0
	fi
	# Make sure the in-tree driver can never be auto-loaded behind our back
	# (nvme-fabrics calls request_module("nvme-<transport>")).
	echo "install nvme-rdma /bin/true" > /etc/modprobe.d/rnvme-test-block-inbox.conf
	if [ -d /sys/module/nvme_rdma ]; then
		rmmod nvme_rdma || { echo "# in-tree nvme_rdma is loaded and cannot be removed"; return 1; }
	fi
	[ -d /sys/module/rnvme ] && return 0
	[ -r "$RNVME_KO" ] || { echo "# $RNVME_KO not found (build the module first: make)"; return 1; }
	# shellcheck disable=SC2086 # RNVME_PARAMS is a list of words
	timeout 60 insmod "$RNVME_KO" $RNVME_PARAMS || { echo "# insmod $RNVME_KO $RNVME_PARAMS failed"; return 1; }
	if [ -d /sys/module/nvme_rdma ]; then
		echo "# in-tree nvme_rdma got loaded next to rnvme"
		return 1
	fi
	return 0
}

# fx_host_driver_unload: disconnect everything and remove the host module (bounded).
fx_host_driver_unload() {
	local m
	m=$(host_module)
	fx_host_disconnect_all
	[ -d "/sys/module/$m" ] || return 0
	timeout 60 rmmod "$m" || { echo "# rmmod $m failed or timed out"; return 1; }
}

# fx_host_disconnect_all: delete every fabrics controller (bounded).
fx_host_disconnect_all() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/delete_controller" ] || continue
		timeout 60 sh -c "echo 1 > '$c/delete_controller'" 2>/dev/null || true
	done
	wait_for 60 fx_no_fabrics_ctrls || echo "# controllers still present after 60 s: $(ls /sys/class/nvme 2>/dev/null)"
}

fx_no_fabrics_ctrls() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/transport" ] && return 1
	done
	return 0
}

# fx_cleanup_all: controllers, host module, target, fabric (safe to call any time).
fx_cleanup_all() {
	fx_host_disconnect_all
	fx_host_driver_unload >/dev/null 2>&1 || true
	fx_target_down
	fx_rxe_down
}

# fx_setup [fx_target_up args]: the usual suite preamble (fabric, target, host driver).
fx_setup() {
	if [ "$RNVME_RDMA" != rxe ] && ! fx_rdma_have; then
		tap_skip_all "kernel $(uname -r) has no $RDMA_MOD module and $RNVME_SIW_KO is missing (Debian's kernels build no siw: make siw KVER=$(uname -r))"
	fi
	fx_rxe_up || bail "cannot set up $RNVME_RDMA over veth"
	fx_target_up "$@" || bail "cannot set up the nvmet target"
	fx_host_driver_load || bail "cannot load the host driver ($HOST_DRIVER)"
}

# ====================================================================== nvme helpers

# nvmf_write OPTS [TIMEOUT]: write an option string to /dev/nvme-fabrics like
# nvme-cli does; prints the kernel's reply ("instance=N,cntlid=M") or the error.
nvmf_write() {
	local opts=$1 t=${2:-90}
	# shellcheck disable=SC2016 # expanded by the inner shell
	timeout "$t" bash -c '
		exec 3<>/dev/nvme-fabrics || exit 3
		printf "%s" "$1" >&3 || exit 1
		IFS= read -r line <&3 || exit 4
		echo "$line"' nvmf_write "$opts" 2>&1
}

# Base option string for the test subsystem.
nvmf_opts() {
	echo "transport=$TRANSPORT,traddr=${1:-$TGT_IP4},trsvcid=$TGT_PORT,nqn=${2:-$TEST_NQN}"
}

# nvme_connect [nvme connect args]: nvme-cli connect to TEST_NQN on 192.0.2.2 (bounded).
nvme_connect() {
	timeout 90 nvme connect -t "$TRANSPORT" -a "$TGT_IP4" -s "$TGT_PORT" -n "$TEST_NQN" "$@"
}

# ctrls_for_nqn NQN: controller names (nvmeN) connected to NQN.
ctrls_for_nqn() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -r "$c/subsysnqn" ] || continue
		[ "$(cat "$c/subsysnqn")" = "$1" ] && basename "$c"
	done
	return 0
}

# ctrl_ns_dev CTRL: the block device (/dev/nvmeXnY) of the first namespace of CTRL.
# With native multipath (Debian default) the ctrl holds a hidden path device
# nvme<S>c<C>n<N>; the usable disk is the head nvme<S>n<N>.
ctrl_ns_dev() {
	local c=/sys/class/nvme/$1 n
	for n in "$c"/nvme*; do
		[ -d "$n" ] || continue
		n=$(basename "$n")
		case "$n" in
		nvme*c*n*) echo "/dev/${n%%c*}n${n##*n}"; return 0 ;;
		nvme*n*) echo "/dev/$n"; return 0 ;;
		esac
	done
	return 1
}

# wait_ns_dev CTRL SECS: wait until CTRL's namespace block device exists; prints it.
wait_ns_dev() {
	local dev
	wait_for "${2:-30}" ctrl_ns_dev "$1" || return 1
	dev=$(ctrl_ns_dev "$1")
	wait_for 10 test -b "$dev" || return 1
	echo "$dev"
}

ctrl_attr() { cat "/sys/class/nvme/$1/$2" 2>/dev/null; }

# ====================================================================== I/O stalls

# fio_stall_start DEV QD SECS OUTFILE: background fio writing 4 KiB blocks at
# random over 32 MiB of DEV for SECS, verifying them as it goes (crc32c,
# verify_backlog); FIO_PID.  fio_stall_result OUTFILE prints "ERRORS
# LONGEST-COMPLETION-SECS WRITES VERIFY-READS LONGEST-READ LONGEST-WRITE"
# from its JSON: at QD1 the longest completion is the longest time the
# application saw no progress.  Reads fail over at once; a write in flight
# at a loss waits out rnvme's failover hold (failover_hold_stall_max).
# fio_stall_stop ends the run before SECS (SIGINT) and waits for it; SECS
# stays the upper bound (no verify state file: fio would write one into the
# working directory on a stop).  With FIO_STALL_LATLOG=1 fio also logs every
# completion's latency and time (OUTFILE_clat.1.log) for fio_stall_longest.
fio_stall_start() {
	local log=()
	[ "${FIO_STALL_LATLOG:-0}" = 1 ] && log=(--write_lat_log="$4" --log_avg_msec=0 --log_unix_epoch=1)
	fio --name=stall --filename="$1" --ioengine=libaio --direct=1 --iodepth="$2" \
		--rw=randwrite --bs=4k --size=32M --time_based --runtime="$3" \
		--verify=crc32c --verify_backlog=64 --verify_fatal=1 --verify_state_save=0 \
		"${log[@]}" --output-format=json --output="$4" > "$4.stderr" 2>&1 &
	FIO_PID=$!
}
# fio_stall_longest OUTFILE T_NS: when the longest completion of a
# FIO_STALL_LATLOG=1 run began and ended, in seconds after the clock T_NS
# (now_ns), and how many completions took over 1 s: "LAT START END SLOW".
fio_stall_longest() {
	awk -F', *' -v off="$((-$2 / 1000000))" '
		$2 > m { m = $2; end = $1 }
		$2 > 1e9 { slow++ }
		END { if (m) printf "%.3f %.3f %.3f %d\n", m / 1e9, (end + off) / 1e3 - m / 1e9, (end + off) / 1e3, slow }
	' "$1"_clat.1.log 2>/dev/null
}
# fio_stall_stop: SIGINT the fio_stall_start run and wait for it; FIO_RC is
# its exit status, with the one fio gives for a stop it was asked for (128:
# "terminating on signal", no job failed; each failed job adds 1) taken as 0.
# A run that ended on its own before the signal keeps its own status; the
# job's error (fio_stall_result) must still be checked either way.
fio_stall_stop() {
	FIO_RC=0
	kill -INT "$FIO_PID" 2>/dev/null
	wait "$FIO_PID" || FIO_RC=$?
	[ "$FIO_RC" != 128 ] || FIO_RC=0
}
# (a stopped fio writes "fio: terminating on signal 2" into the --output file
# ahead of the JSON)
fio_stall_result() {
	python3 - "$1" <<'EOF' 2>&1
import json, sys
text = open(sys.argv[1]).read()
start = text.find("\n{") + 1 if not text.startswith("{") else 0
job = json.JSONDecoder().raw_decode(text[start:])[0]["jobs"][0]
rw = [(job[d].get("clat_ns") or {}).get("max", 0) / 1e9 for d in ("read", "write")]
print(f"{job['error']} {max(rw):.3f} {job['write']['total_ios']} {job['read']['total_ios']} {rw[0]:.3f} {rw[1]:.3f}")
EOF
}

# failover_hold_stall_max CTRL BOUND: the longest a write may stall when
# CTRL's association is lost: BOUND plus rnvme's failover hold for it
# (sysfs failover_hold_ms; 0 when the hold is off, or for the in-tree driver)
failover_hold_stall_max() {
	local ms
	ms=$(cat "/sys/class/nvme/$1/rnvme/failover_hold_ms" 2>/dev/null || echo 0)
	awk -v b="$2" -v h="$ms" 'BEGIN { printf "%.1f", b + h / 1000 }'
}

# ====================================================================== multipath measurements

# path_ns CTRL: the controller's path device name (nvme<S>c<C>n<N>), native
# multipath; path_ios CTRL: reads + writes completed on it so far.
path_ns() {
	local n
	for n in /sys/class/nvme/"$1"/nvme*c*n*; do
		[ -d "$n" ] && { basename "$n"; return 0; }
	done
	return 1
}
path_ios() { awk '{ print $1 + $5 }' "/sys/block/$(path_ns "$1")/stat" 2>/dev/null || echo 0; }

# MEASURE_ONLY=1 (the in-tree driver's comparison runs of the failover
# suites): tap_within and tap_measured print their figures as skipped points.
# tap_within DESC VALUE MAX: ok when the number VALUE is at most MAX.
tap_within() {
	if [ "${MEASURE_ONLY:-0}" = 1 ]; then
		tap_skip "in-tree driver: measured only" "$1: $2 s"
	elif awk -v v="$2" -v m="$3" 'BEGIN { exit !(v ~ /^[0-9.]+$/ && v <= m) }'; then
		ok "$1: $2 s (bound $3 s)"
	else
		not_ok "$1 within $3 s" "measured: $2"
	fi
}
# tap_measured DESC RC [DIAG...]: ok/not ok by RC, or a measured-only skip.
tap_measured() {
	local desc=$1 rc=$2
	shift 2
	if [ "${MEASURE_ONLY:-0}" = 1 ]; then
		tap_skip "in-tree driver: measured only" "$desc$([ "$rc" = 0 ] || echo " (NOT met: $*)")"
	else
		tap_result "$desc" "$rc" "$@"
	fi
}
# path_back_within CTRL DESC MAX: wait (up to 2 * MAX s) for CTRL to be live
# again, judge the wait against MAX (tap_within), then check it carries I/O.
ctrl_live() { [ "$(cat "/sys/class/nvme/$1/state" 2>/dev/null)" = live ]; }
path_back_within() {
	local t back
	t=$(now_ns)
	if wait_for $(($3 * 2)) ctrl_live "$1"; then
		back=$(secs_since "$t")
	else
		back="never ($(($3 * 2)) s, state $(cat "/sys/class/nvme/$1/state" 2>/dev/null))"
	fi
	tap_within "$2 live again" "$back" "$3"
	path_carries_io "$1" "$2 carries I/O again"
}
# path_carries_io CTRL DESC: a point for CTRL completing I/O within 2 s,
# counted once rnvme's failover hold on CTRL is over (an application whose
# writes are held issues little or nothing meanwhile: fio's verifying writer
# waits for them).
held_none() { [ "$(cat "/sys/class/nvme/$1/rnvme/held_now" 2>/dev/null || echo 0)" = 0 ]; }
path_carries_io() {
	local a0 a1 hold
	if ! held_none "$1"; then
		hold=$(cat "/sys/class/nvme/$1/rnvme/failover_hold_ms" 2>/dev/null || echo 0)
		wait_for $((hold / 1000 + 5)) held_none "$1"
		echo "# $1: waited $WAIT_ELAPSED s for the end of its failover hold ($hold ms): $(cat "/sys/class/nvme/$1/rnvme/held_now") held"
	fi
	a0=$(path_ios "$1")
	sleep 2
	a1=$(path_ios "$1")
	[ "$(cat "/sys/class/nvme/$1/state" 2>/dev/null)" = live ] && [ "$a1" -gt "$a0" ]
	tap_measured "$2 ($((a1 - a0)) I/Os in 2 s)" $? "state $(cat "/sys/class/nvme/$1/state" 2>/dev/null)"
}

# ====================================================================== leak accounting

# fx_settle [SECS]: let deferred frees run (RCU, workqueues) and drop the page cache
# and reclaimable slab objects, so that two snapshots compare like with like.
fx_settle() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sleep "${1:-3}"
}

# fx_mem_snapshot FILE: /proc/meminfo (KiB) and the active size (KiB) of every slab cache.
fx_mem_snapshot() {
	{
		awk '{ sub(":", "", $1); print "mem", $1, $2 }' /proc/meminfo
		awk 'NR > 2 { printf "slab %s %d\n", $1, $2 * $4 / 1024 }' /proc/slabinfo 2>/dev/null
	} > "$1"
}

# fx_mem_delta BEFORE AFTER: print the MemAvailable/Slab/SUnreclaim deltas and the slab
# caches that grew most ("# " lines); sets MEM_D_AVAIL, MEM_D_SLAB, MEM_D_SUNRECLAIM and
# MEM_D_KMALLOC (the plain kmalloc-N caches, where kzalloc()s of drivers land; KiB, after - before).
MEM_D_KMALLOC=0
MEM_D_AVAIL=0
MEM_D_SLAB=0
MEM_D_SUNRECLAIM=0
fx_mem_delta() {
	read -r MEM_D_AVAIL MEM_D_SLAB MEM_D_SUNRECLAIM MEM_D_KMALLOC < <(awk '
		FNR == NR { a[$1 " " $2] = $3; next }
		{ d[$1 " " $2] = $3 - a[$1 " " $2] }
		$1 == "slab" && $2 ~ /^kmalloc-[0-9]/ { k += $3 - a[$1 " " $2] }
		END { print d["mem MemAvailable"] + 0, d["mem Slab"] + 0, d["mem SUnreclaim"] + 0, k + 0 }' "$1" "$2")
	echo "# MemAvailable delta: $MEM_D_AVAIL KiB, Slab delta: $MEM_D_SLAB KiB, SUnreclaim delta: $MEM_D_SUNRECLAIM KiB, kmalloc-N delta: $MEM_D_KMALLOC KiB"
	awk 'FNR == NR { if ($1 == "slab") a[$2] = $3; next }
		$1 == "slab" && $3 - a[$2] != 0 { printf "%d %s %d %d\n", $3 - a[$2], $2, a[$2], $3 }' "$1" "$2" |
		sort -rn | head -n 6 | awk '{ printf "# slab %s: %+d KiB (%d -> %d)\n", $2, $1, $3, $4 }'
}

# ====================================================================== kprobe counts

# How often kernel functions run, from kprobe_profile (CONFIG_KPROBE_EVENTS).
# fx_kprobes_on MOD:FUNC...: one probe each (group rnvmetest), zeroed; returns
# 1 when tracefs or a probe is missing (the caller skips with a reason).
# fx_kprobe_hits FUNC: its count since fx_kprobes_on.  fx_kprobes_off: all gone.
FX_TR=/sys/kernel/tracing
# fx_trace_no_cmd_record: the trace's command-name recording off (a kernel
# without tracefs has nothing to switch); run-suites.sh says why.
fx_trace_no_cmd_record() {
	[ -d "$FX_TR/options" ] || mount -t tracefs tracefs "$FX_TR" 2>/dev/null || return 0
	[ -w "$FX_TR/options/record-cmd" ] || return 0
	echo 0 > "$FX_TR/options/record-cmd"
}
fx_kprobes_on() {
	local f
	[ -d "$FX_TR/events" ] || mount -t tracefs tracefs "$FX_TR" 2>/dev/null || return 1
	[ -w "$FX_TR/kprobe_events" ] || return 1
	fx_kprobes_off
	for f in "$@"; do
		echo "p:rnvmetest/${f#*:} $f" >> "$FX_TR/kprobe_events" 2>/dev/null || return 1
	done
	echo 1 > "$FX_TR/events/rnvmetest/enable" 2>/dev/null || return 1
}
fx_kprobe_hits() {
	awk -v f="$1" '$1 == f { print $2; n = 1 } END { if (!n) print 0 }' "$FX_TR/kprobe_profile" 2>/dev/null || echo 0
}
fx_kprobes_off() {
	[ -d "$FX_TR/events/rnvmetest" ] || return 0
	echo 0 > "$FX_TR/events/rnvmetest/enable" 2>/dev/null
	grep -o '^p:rnvmetest/[^ ]*' "$FX_TR/kprobe_events" 2>/dev/null | sed 's/^p:/-:/' |
		while read -r k; do echo "$k" >> "$FX_TR/kprobe_events"; done
	return 0
}

# ====================================================================== suite frame

# suite_begin: mark dmesg, make sure we start from a clean slate.
suite_begin() {
	SUITE_T0=$(now_ns)
	fx_dmesg_mark "$(basename "$0")"
	echo "# $(basename "$0"): HOST_DRIVER=$HOST_DRIVER TRANSPORT=$TRANSPORT kernel $(uname -r)"
}

# suite_end: tear the fixture down, check dmesg, print the plan, exit 0/1.
suite_end() {
	fx_cleanup_all
	fx_dmesg_check "no kernel warnings/oopses in dmesg during $(basename "$0" .sh)"
	echo "# $(basename "$0" .sh) wall time: $(secs_since "$SUITE_T0") s"
	tap_finish
}
