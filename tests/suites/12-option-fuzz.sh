#!/bin/bash
# shellcheck disable=SC2317 # helpers are invoked indirectly (check, wait_for)
# 12-option-fuzz: hostile option strings written straight to /dev/nvme-fabrics
# (transport served by the host driver under test). A hand-written table
# (malformed, out-of-range, overflowing, duplicate/unknown keys, over-long NQNs,
# control characters and NUL, bad addresses/ports/tos/hostid, missing required
# keys, oversized writes) and FUZZ_CASES strings generated from valid ones by a
# seeded mutator (truncation, byte flips, duplicated/dropped/re-keyed fields,
# hostile values). Every write is bounded by a timeout; one that is accepted
# must give a controller with I/O queues that deletes cleanly; one that fails must leave no
# controller. Afterwards: module refcount and controller count at baseline,
# memory within a bound, a normal connect still works, rmmod works.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

SEED=${TEST_FUZZ_SEED:-20261121}
NGEN=${TEST_FUZZ_CASES:-200}
# above the driver's own bound on a connect (3 s resolve + 60 s CM wait), so that a
# timeout here means a hang, not a slow refusal
CASE_TMO=${TEST_FUZZ_TIMEOUT:-90}
# Leak bound on the kmalloc-N caches (KiB), where rnvme's, nvme-core's and the
# RDMA stack's per-controller allocations land. The first run measured
# SUnreclaim +820 KiB, most of it from the test's ~1000 forks (ovl_inode,
# vmap_area, sighand_cache, skbuffs), and only a few hundred KiB of kmalloc-N
# (per-CPU and partial slabs). About 70 of the writes get past option parsing
# into a connect (OK, ECONNRESET, EIO, ENOMEM); leaking 8 KiB each (less than
# one controller with its queue array) would add 560 KiB and exceed 512.
# make check's core matrix runs 100 generated cases (TEST_FUZZ_CASES): about
# 55 connects, so a leak of 10 KiB each exceeds it (11-storm's bound catches
# 8 KiB a cycle over its 128).
KMALLOC_MAX_KIB=${TEST_FUZZ_KMALLOC_MAX_KIB:-512}
mod=$(host_module)
work=/run/rnvme-fuzz
rm -rf "$work"
mkdir -p "$work"

fx_setup --nqn "$TEST_NQN" --backing brd --size 64
B="transport=$TRANSPORT,traddr=$TGT_IP4,trsvcid=$TGT_PORT,nqn=$TEST_NQN"

# fz_write OPTS: write printf-%b-expanded OPTS in one write(2) (dd: printf alone
# flushes at each newline); prints the reply or the error.  OPTS without a
# backslash or newline expand to themselves, short: the printf builtin writes
# them in one write(2) with no dd to start (a third of the suite's time went
# to starting processes under TCG).
fz_write() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	timeout "$CASE_TMO" bash -c '
		exec 3<>/dev/nvme-fabrics || exit 3
		if [[ $1 != *[\\$'"'"'\n'"'"']* && ${#1} -lt 1024 ]]; then
			printf "%s" "$1" >&3 || exit 1
		else
			printf "%b" "$1" | dd bs=64k iflag=fullblock status=none >&3 || exit 1
		fi
		IFS= read -r line <&3 || exit 4
		echo "$line"' fz "$1" 2>&1
}

# errno_class TEXT: short name of the error at the end of a shell error message.
errno_class() {
	case "${1##*: }" in
	"Invalid argument") echo EINVAL ;;
	"Input/output error") echo EIO ;;
	"Operation already in progress") echo EALREADY ;;
	"Cannot allocate memory") echo ENOMEM ;;
	"Connection refused") echo ECONNREFUSED ;;
	"Connection reset by peer") echo ECONNRESET ;;
	"Connection timed out") echo ETIMEDOUT ;;
	"Network is unreachable") echo ENETUNREACH ;;
	"No route to host") echo EHOSTUNREACH ;;
	"Cannot assign requested address") echo EADDRNOTAVAIL ;;
	"No such device") echo ENODEV ;;
	"Address family not supported by protocol") echo EAFNOSUPPORT ;;
	"Numerical result out of range") echo ERANGE ;;
	"Device or resource busy") echo EBUSY ;;
	"Interrupted system call") echo EINTR ;;
	"Address already in use") echo EADDRINUSE ;;
	*) local e=${1##*: }; echo "other:${e// /_}" ;;
	esac
}

any_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do [ -e "$c" ] && return 0; done
	return 1
}
refcnt() { local r=; read -r r < "/sys/module/$mod/refcnt"; echo "$r"; }
refcnt_is_base() { [ "$(refcnt)" = "$BASE_REF" ]; }

# run_case KIND EXPECT OPTS: one write; sets CLASS (OK, TIMEOUT or an errno name)
# and PROBLEM (empty when the case behaved). EXPECT: F = must fail, A = either.
# KIND "dd" writes OPTS (not %b-expanded) with dd in one write (oversized cases).
CLASS='' PROBLEM='' CASE_S=0
run_case() {
	local kind=$1 expect=$2 opts=$3 out rc=0 t inst c r qc
	PROBLEM=
	t=$(now_ns)
	if [ "$kind" = dd ]; then
		out=$(printf '%s' "$opts" | timeout "$CASE_TMO" dd of=/dev/nvme-fabrics bs=64k iflag=fullblock status=none 2>&1) || rc=$?
		[ "$rc" = 0 ] && out="written (no reply read)"
	else
		out=$(fz_write "$opts") || rc=$?
	fi
	CASE_S=$(secs_since "$t")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		CLASS=TIMEOUT
		PROBLEM="write did not return within $CASE_TMO s"
	elif [ "$rc" = 0 ]; then
		CLASS=OK
		[ "$expect" = F ] && PROBLEM="accepted: $out"
	else
		CLASS=$(errno_class "$out")
	fi
	if [ "$CLASS" = OK ] && [[ $out == instance=-1* ]]; then
		CLASS=no-ctrl # nothing was written: the read reports no controller
		any_ctrl && PROBLEM="$PROBLEM; controller(s) present after an empty write: $(ls /sys/class/nvme)"
	elif [ "$CLASS" = OK ] && [[ $out == instance=* ]]; then
		inst=${out#instance=}
		c=nvme${inst%%,*}
		# an accepted I/O controller must have I/O queues (none of the cases
		# names the discovery subsystem)
		read -r qc 2>/dev/null < "/sys/class/nvme/$c/queue_count" || qc='?'
		[ "$qc" != "?" ] && [ "$qc" -ge 2 ] || PROBLEM="$PROBLEM; accepted controller $c has queue_count=$qc (no I/O queues)"
		if ! timeout 60 sh -c "echo 1 > /sys/class/nvme/$c/delete_controller" 2>/dev/null ||
		   ! wait_for 30 test ! -e "/sys/class/nvme/$c"; then
			PROBLEM="$PROBLEM; accepted controller $c did not delete cleanly"
		fi
	elif any_ctrl; then
		PROBLEM="$PROBLEM; controller(s) left after a $CLASS write: $(ls /sys/class/nvme)"
		fx_host_disconnect_all >/dev/null
	fi
	r=$(refcnt)
	if [ "$r" != "$BASE_REF" ] && ! wait_for 10 refcnt_is_base; then
		PROBLEM="$PROBLEM; $mod refcnt $(refcnt) (baseline $BASE_REF)"
	fi
	PROBLEM=${PROBLEM#; }
	echo "$CLASS" >> "$work/classes.$kind"
}

# ---------------------------------------------------------- baseline
reply=$(nvmf_write "$B")
case "$reply" in
instance=*) inst=${reply#instance=}; c=nvme${inst%%,*}
	    wait_ns_dev "$c" 30 >/dev/null
	    echo 1 > "/sys/class/nvme/$c/delete_controller"
	    ok "warm-up connect/delete ($c)" ;;
*) bail "warm-up connect failed: $reply" ;;
esac
wait_for 30 fx_no_fabrics_ctrls
fx_settle 3
BASE_REF=$(refcnt)
fx_mem_snapshot "$work/mem.before"
echo "# baseline: $mod refcnt=$BASE_REF, seed=$SEED, $NGEN generated cases, ${CASE_TMO} s per write"

# ---------------------------------------------------------- hand-written table
long() { printf "%${2}s" '' | tr ' ' "$1"; }
N222=nqn.2014-08.org.nvmexpress.rnvme:$(long a $((222 - 33)))
N223=nqn.2014-08.org.nvmexpress.rnvme:$(long a $((223 - 33)))
N300=nqn.2014-08.org.nvmexpress.rnvme:$(long b $((300 - 33)))
T=$TRANSPORT A4=$TGT_IP4 P=$TGT_PORT N=$TEST_NQN
# EXPECT|OPTS (printf %b escapes) ; F = must fail, A = may succeed (then deleted)
cases=(
	"F|$B,queue_size"
	"F|$B,queue_size="
	"F|$B,nr_io_queues="
	"F|$B,="
	"F|$B,=32"
	"A|$B,,,"
	"F|transport=,traddr=$A4,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=$A4,trsvcid=,nqn=$N"
	"F|transport=$T,traddr=$A4,trsvcid=$P,nqn="
	"A|$B,hostnqn="
	"F|$B,hostid="
	"F|$B,queue_size=4294967296"
	"F|$B,queue_size=18446744073709551616"
	"F|$B,queue_size=-1"
	"F|$B,queue_size=0"
	"F|$B,queue_size=1"
	"F|$B,queue_size=15"
	"F|$B,queue_size=65536"
	"A|$B,queue_size=1024"
	"A|$B,queue_size=0x20"
	"F|$B,queue_size= 32"
	"F|$B,queue_size=32abc"
	"A|$B,queue_size=32,queue_size=64"
	"F|$B,nr_io_queues=0"
	"F|$B,nr_io_queues=-2147483648"
	"F|$B,nr_io_queues=2147483648"
	"A|$B,nr_io_queues=2147483647"
	"F|$B,nr_io_queues=abc"
	"A|$B,nr_write_queues=2147483647"
	"A|$B,nr_poll_queues=2147483647"
	"A|$B,nr_write_queues=2147483647,nr_poll_queues=2147483647"
	"A|$B,nr_io_queues=2147483647,nr_write_queues=2147483647,nr_poll_queues=2147483647"
	"A|$B,nr_io_queues=1,nr_write_queues=2147483647,nr_poll_queues=2147483647"
	"F|$B,reconnect_delay=0"
	"F|$B,reconnect_delay=-5"
	"A|$B,ctrl_loss_tmo=-2"
	"A|$B,ctrl_loss_tmo=2147483647"
	"F|$B,ctrl_loss_tmo=2147483648"
	"A|$B,keep_alive_tmo=0"
	"F|$B,keep_alive_tmo=-1"
	"A|$B,keep_alive_tmo=2147483647"
	"A|$B,fast_io_fail_tmo=-1"
	"A|$B,fast_io_fail_tmo=-2"
	"F|$B,bogus=1"
	"F|$B,bogus"
	"F|$B,Queue_Size=32"
	"F|$B,hdr_digest"
	"F|$B,data_digest"
	"F|$B,host_iface=veth0"
	"F|$B,discovery=1"
	"F|$B,hostnqn=$N223"
	"A|$B,hostnqn=$N222"
	"F|transport=$T,traddr=$A4,trsvcid=$P,nqn=$N300"
	"F|transport=$T,traddr=$A4,trsvcid=$P,nqn=$N222"
	"A|$B,hostnqn=nqn.2014-08.org.nvmexpress:\\x01\\x7f\\t"
	"A|$B\\nqueue_size=32"
	"A|$B,queue_size=32\\n"
	"A|$B\\n"
	"F|$B,queue_size=3\\x002"
	"F|transport=$T\\x00,traddr=$A4,trsvcid=$P,nqn=$N"
	"F|\\x00$B"
	"F|\\n"
	"F|,"
	"F|$B,hostnqn=a,b"
	"F|transport=$T,traddr=not-an-ip,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=localhost,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=256.1.1.1,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=192.0.2,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=192.0.2.2.2,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=::::,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=2001:db8::zz,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=[2001:db8::2],trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=fe80::1%nosuchif,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=$TGT_IP6,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=192.0.2.99,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=0.0.0.0,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=$A4,trsvcid=abc,nqn=$N"
	"F|transport=$T,traddr=$A4,trsvcid=65536,nqn=$N"
	"F|transport=$T,traddr=$A4,trsvcid=-1,nqn=$N"
	"F|transport=$T,traddr=$A4,trsvcid=0,nqn=$N"
	"F|transport=$T,traddr=$A4,trsvcid=4421,nqn=$N"
	"F|$B,host_traddr=bogus"
	"F|$B,host_traddr="
	"F|$B,host_traddr=192.0.2.77"
	"F|$B,host_traddr=$HOST_IP6"
	"A|$B,tos=255"
	"A|$B,tos=256"
	"F|$B,tos=-2"
	"F|$B,tos=abc"
	"F|$B,tos=4294967296"
	"F|$B,hostid=garbage"
	"F|$B,hostid=6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00g"
	"A|$B,hostid=6f1f7b3a-1b1e-4c5e-9d1a-0c0ffee0d00d0"
	"F|$B,hostid=6f1f7b3a1b1e4c5e9d1a0c0ffee0d00d"
	"F|transport=$T,trsvcid=$P,nqn=$N"
	"F|traddr=$A4,trsvcid=$P,nqn=$N"
	"F|transport=$T,traddr=$A4,trsvcid=$P"
	"F|transport=rdmax,traddr=$A4,trsvcid=$P,nqn=$N"
	"A|$B,traddr=$A4"
	"F|$B,traddr=192.0.2.99"
	"F|$B,trsvcid=4421"
	"A|$B,nqn=$N"
	"F|$B,nqn=nqn.2014-08.org.nvmexpress.rnvme:nosuch"
)
t0=$(now_ns)
hand_bad=0
for i in "${!cases[@]}"; do
	e=${cases[i]%%|*}
	o=${cases[i]#*|}
	run_case hand "$e" "$o"
	shown=${o//"$B"/\$B}
	shown=${shown//"$N300"/<nqn 300>}
	shown=${shown//"$N223"/<nqn 223>}
	shown=${shown//"$N222"/<nqn 222>}
	if [ -z "$PROBLEM" ]; then
		ok "hand $i [$e] '$shown' -> $CLASS ($CASE_S s)"
	else
		not_ok "hand $i [$e] '$shown' -> $CLASS ($CASE_S s)" "$PROBLEM"
		hand_bad=$((hand_bad + 1))
	fi
done
# oversized writes: more than a page, and a page of garbage
run_case dd F "$B,hostnqn=$(long c 5000)"
tap_result "write of 5 KiB (> PAGE_SIZE) -> $CLASS ($CASE_S s)" "$([ -z "$PROBLEM" ] && echo 0 || echo 1)" "$PROBLEM"
run_case dd F "$(long , 4096)"
tap_result "write of 4096 commas -> $CLASS ($CASE_S s)" "$([ -z "$PROBLEM" ] && echo 0 || echo 1)" "$PROBLEM"
hand_s=$(secs_since "$t0")
echo "# hand-written: $((${#cases[@]} + 2)) cases in $hand_s s"

# ---------------------------------------------------------- generated cases
KEYS=(transport traddr trsvcid nqn queue_size nr_io_queues reconnect_delay ctrl_loss_tmo
	keep_alive_tmo hostnqn host_traddr host_iface hostid duplicate_connect disable_sqflow
	hdr_digest data_digest nr_write_queues nr_poll_queues tos fast_io_fail_tmo discovery
	dhchap_secret dhchap_ctrl_secret)
VALS=("" -1 0 1 16 65536 2147483647 2147483648 4294967296 18446744073709551616
	-9223372036854775809 0x7fffffff 1e3 " 1" abc "$(long x 300)" "$TGT_IP4" ::1
	"fe80::1%veth0" 255.255.255.255 nqn.x "%s%s%n" "\\x01" "\\n" "=" 4421
	00000000-0000-0000-0000-000000000000)
FLIP=("," "=" "\\n" "\\x01" "\\x7f" " " "-" "0" "9" "z" ":" "." "%" "\\xff" "\\t" "\\x00")
# valid strings to mutate; those on port 4421 are refused by the target quickly
BASES=("$B"
	"$B,queue_size=32,nr_io_queues=1,hostnqn=$HOST_NQN,hostid=$HOST_ID,keep_alive_tmo=5,reconnect_delay=1,ctrl_loss_tmo=2,tos=0"
	"transport=$T,traddr=$A4,trsvcid=4421,nqn=$N,queue_size=32,nr_io_queues=2,nr_write_queues=1,nr_poll_queues=1,host_traddr=$HOST_IP4"
	"transport=$T,traddr=$A4,trsvcid=4421,nqn=$N,hostnqn=$HOST_NQN,hostid=$HOST_ID,fast_io_fail_tmo=1,disable_sqflow,duplicate_connect"
	"transport=$T,traddr=$TGT_IP6,trsvcid=4421,nqn=$N,host_traddr=$HOST_IP6,tos=8")

join() { local IFS=,; M="${F[*]}"; }
# mutate S: one random mutation of S (sets M)
mutate() {
	local s=$1 op=$((RANDOM % 7)) n p f
	local -a F
	IFS=, read -r -a F <<< "$s"
	n=${#F[@]}
	[ "$n" -gt 0 ] || n=1
	p=$((RANDOM % n))
	case $op in
	0) M=${s:0:$((RANDOM % (${#s} + 1)))} ;;                           # truncate
	1) f=$((RANDOM % (${#s} + 1)))                                    # byte flip
	   M=${s:0:f}${FLIP[RANDOM % ${#FLIP[@]}]}${s:f+1} ;;
	2) F=("${F[@]:0:RANDOM % (n + 1)}" "${F[p]:-}" "${F[@]:RANDOM % (n + 1)}")    # duplicate a field
	   join ;;
	3) unset 'F[p]'; join ;;                     # drop a field
	4) F[p]=${F[p]%%=*}=${VALS[RANDOM % ${#VALS[@]}]}                    # hostile value
	   join ;;
	5) f=${F[p]:-}; F[p]=${KEYS[RANDOM % ${#KEYS[@]}]}${f:+=${f#*=}}      # re-key a field
	   join ;;
	6) M=$s,${KEYS[RANDOM % ${#KEYS[@]}]}=${VALS[RANDOM % ${#VALS[@]}]} ;; # add a field
	esac
}

RANDOM=$SEED
t0=$(now_ns)
gen_bad=0 gen_timeout=0
: > "$work/gen.log"
for ((i = 0; i < NGEN; i++)); do
	s=${BASES[RANDOM % ${#BASES[@]}]}
	for ((k = RANDOM % 3; k >= 0; k--)); do
		mutate "$s"
		s=$M
	done
	run_case gen A "$s"
	echo "$i $CLASS $CASE_S ${s:0:160}" >> "$work/gen.log"
	if [ -n "$PROBLEM" ]; then
		gen_bad=$((gen_bad + 1))
		[ "$CLASS" = TIMEOUT ] && gen_timeout=$((gen_timeout + 1))
		echo "# gen $i '$s': $CLASS: $PROBLEM"
	fi
done
gen_s=$(secs_since "$t0")
echo "# generated: $NGEN cases (seed $SEED) in $gen_s s"
echo "# slowest generated cases:"
sort -k3 -rn "$work/gen.log" | head -n 5 | diag
tap_result "generated: no write hung ($gen_timeout timeouts of $NGEN)" "$gen_timeout"
tap_result "generated: every case clean (accepted ones deleted, failed ones left nothing, refcount at baseline): $gen_bad bad" "$gen_bad"

echo "# outcome classes (hand-written | generated):"
sort -u "$work"/classes.* | while read -r cl; do
	printf '#   %-16s %4d | %4d\n' "$cl" "$(grep -cx "$cl" "$work/classes.hand" "$work/classes.dd" 2>/dev/null | awk -F: '{ s += $NF } END { print s }')" \
		"$(grep -cx "$cl" "$work/classes.gen" 2>/dev/null)"
done

# ---------------------------------------------------------- aftermath
check "kernel alive: /proc readable and a fork works" bash -c 'read -r _ < /proc/uptime'
reply=$(nvmf_write "$B")
case "$reply" in
instance=*) inst=${reply#instance=}; c=nvme${inst%%,*}
	    if dev=$(wait_ns_dev "$c" 30); then
		    check "a normal connect still works after the fuzzing ($c, read from $dev)" \
			    dd if="$dev" of=/dev/null bs=64k count=16 iflag=direct status=none
	    else
		    not_ok "a normal connect still works after the fuzzing" "no namespace on $c"
	    fi
	    echo 1 > "/sys/class/nvme/$c/delete_controller" ;;
*) not_ok "a normal connect still works after the fuzzing" "reply: $reply" ;;
esac
check "no controllers left" wait_for 30 fx_no_fabrics_ctrls
fx_settle 3
r=$(refcnt)
tap_result "$mod refcnt back to baseline ($r)" "$([ "$r" = "$BASE_REF" ] && echo 0 || echo 1)" "before $BASE_REF after $r"
fx_mem_snapshot "$work/mem.after"
fx_mem_delta "$work/mem.before" "$work/mem.after"
tap_result "kmalloc-N caches grew by at most $KMALLOC_MAX_KIB KiB ($MEM_D_KMALLOC KiB over $((${#cases[@]} + 2 + NGEN)) writes)" \
	"$([ "$MEM_D_KMALLOC" -le "$KMALLOC_MAX_KIB" ] && echo 0 || echo 1)"
t=$(now_ns)
rc=0
timeout 60 rmmod "$mod" || rc=$?
echo "# rmmod $mod: $(secs_since "$t") s"
tap_result "rmmod $mod after the fuzzing (exit $rc)" "$rc"

suite_end
