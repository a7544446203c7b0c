#!/bin/bash
# shellcheck disable=SC2317,SC2119 # helpers are invoked indirectly (check, wait_for)
# 01-load: load and unload the host transport twice; module metadata; transport registration.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

fx_rxe_up || bail "cannot set up rxe over veth"
mod=$(host_module)

# The transport named $1 is registered when nvme-fabrics complains about the
# missing traddr rather than about an unknown transport.
transport_registered() {
	local name=$1 mark out
	mark="rnvme-test-probe-$(now_ns)"
	echo "$mark" > /dev/kmsg
	out=$(nvmf_write "transport=$name,nqn=$TEST_NQN" 10) && return 1
	dmesg | awk -v m="$mark" 'f { print } index($0, m) { f = 1 }' | grep "no handler found for transport" >/dev/null && return 1
	case "$out" in *"Invalid argument"*) return 0 ;; esac
	return 1
}

# After rmmod: nvme-fabrics must not find the transport. Module auto-loading
# (request_module("nvme-<name>")) is blocked meanwhile so that it cannot load it again.
transport_unregistered() {
	local conf=/etc/modprobe.d/rnvme-test-probe.conf rc=0
	echo "install nvme-$1 /bin/true" > "$conf"
	transport_registered "$1" && rc=1
	rm -f "$conf"
	return "$rc"
}

if [ "$HOST_DRIVER" != inbox ]; then
	if [ -r "$RNVME_KO" ]; then
		lic=$(modinfo -F license "$RNVME_KO" 2>/dev/null)
		case "$lic" in
		GPL|"GPL v2"|"Dual BSD/GPL"|"Dual MIT/GPL"|"Dual MPL/GPL") ok "modinfo license is GPL-compatible ($lic)" ;;
		*) not_ok "modinfo license is GPL-compatible" "license: '$lic'" ;;
		esac
		vm=$(modinfo -F vermagic "$RNVME_KO" 2>/dev/null)
		case "$vm" in
		"$(uname -r) "*) ok "vermagic matches the running kernel" ;;
		*) not_ok "vermagic matches the running kernel" "vermagic '$vm', kernel $(uname -r)" ;;
		esac
		deps=$(modinfo -F depends "$RNVME_KO" 2>/dev/null)
		case ",$deps," in
		*,nvme-fabrics,*) ok "depends on nvme-fabrics ($deps)" ;;
		*) not_ok "depends on nvme-fabrics" "depends: '$deps'" ;;
		esac
	else
		not_ok "rnvme.ko exists" "$RNVME_KO not found; build it first"
	fi
fi

for round in 1 2; do
	t=$(now_ns)
	if fx_host_driver_load; then
		ok "round $round: load $mod ($(secs_since "$t") s)"
	else
		not_ok "round $round: load $mod"
		continue
	fi
	check "round $round: /sys/module/$mod present" test -d "/sys/module/$mod"
	if [ "$HOST_DRIVER" != inbox ]; then
		check "round $round: in-tree nvme_rdma not loaded" test ! -d /sys/module/nvme_rdma
	fi
	check "round $round: transport '$TRANSPORT' registered with nvme-fabrics" transport_registered "$TRANSPORT"
	check "round $round: module refcount is 0 while idle" test "$(cat "/sys/module/$mod/refcnt" 2>/dev/null)" = 0
	t=$(now_ns)
	if timeout 60 rmmod "$mod"; then
		ok "round $round: rmmod $mod ($(secs_since "$t") s)"
	else
		not_ok "round $round: rmmod $mod" "rmmod failed or took more than 60 s"
	fi
	check "round $round: /sys/module/$mod gone" test ! -d "/sys/module/$mod"
	check "round $round: transport '$TRANSPORT' unregistered" transport_unregistered "$TRANSPORT"
done

if [ "$HOST_DRIVER" != inbox ] && [ -r "$RNVME_KO" ]; then
	# transport_name= registers the transport under another name.
	if timeout 60 insmod "$RNVME_KO" transport_name=rnvmetest; then
		ok "insmod transport_name=rnvmetest"
		check "transport 'rnvmetest' registered" transport_registered rnvmetest
		timeout 60 rmmod rnvme
		check "rmmod after transport_name=rnvmetest" test ! -d /sys/module/rnvme
	else
		not_ok "insmod transport_name=rnvmetest"
	fi

	# Names that would shadow or be shadowed are refused, with a reason.
	for bad in tcp loop "bad/name" "waytoolongtransportname"; do
		from=$(($(dmesg | wc -l) + 1))
		if timeout 60 insmod "$RNVME_KO" "transport_name=$bad" 2>/dev/null; then
			not_ok "transport_name=$bad refused"
			timeout 60 rmmod rnvme
		else
			msg=$(dmesg | tail -n +"$from" | grep 'transport_name' | tail -n 1)
			if [ -n "$msg" ]; then
				ok "transport_name=$bad refused: ${msg#*] }"
			else
				not_ok "transport_name=$bad refused with a message in dmesg"
			fi
		fi
	done

	# "rdma" while the in-tree nvme_rdma serves it: refuse, never shadow.
	rm -f /etc/modprobe.d/rnvme-test-block-inbox.conf
	if modprobe nvme-rdma; then
		from=$(($(dmesg | wc -l) + 1))
		if timeout 60 insmod "$RNVME_KO" 2>/dev/null; then
			not_ok "rnvme refuses transport rdma while nvme_rdma is loaded"
			timeout 60 rmmod rnvme
		else
			msg=$(dmesg | tail -n +"$from" | grep 'already served by' | tail -n 1)
			check "rnvme refuses 'rdma' while nvme_rdma is loaded, and says so: ${msg#*] }" test -n "$msg"
		fi
		check "the in-tree nvme_rdma is unaffected" test -d /sys/module/nvme_rdma
		if timeout 60 insmod "$RNVME_KO" transport_name=rnvmebeside; then
			ok "rnvme loads beside nvme_rdma under another name"
			if transport_registered rdma && transport_registered rnvmebeside; then
				ok "both transports registered: rdma (nvme_rdma) and rnvmebeside (rnvme)"
			else
				not_ok "both transports registered"
			fi
			timeout 60 rmmod rnvme
		else
			not_ok "rnvme loads beside nvme_rdma under another name"
		fi
		timeout 60 rmmod nvme_rdma
	else
		not_ok "modprobe nvme-rdma (for the conflict test)"
	fi

	# nvme_rdma loaded after rnvme: it is shadowed, and rnvme says so on
	# the first connect (here to a port nobody listens on).
	if timeout 60 insmod "$RNVME_KO" && modprobe nvme-rdma; then
		from=$(($(dmesg | wc -l) + 1))
		nvmf_write "transport=rdma,traddr=$TGT_IP4,trsvcid=4999,nqn=$TEST_NQN,ctrl_loss_tmo=0" 60 >/dev/null
		msg=$(dmesg | tail -n +"$from" | grep 'is loaded too' | tail -n 1)
		check "a connect with nvme_rdma loaded after rnvme warns that rnvme serves 'rdma': ${msg#*] }" test -n "$msg"
		timeout 60 rmmod rnvme
		timeout 60 rmmod nvme_rdma
	else
		not_ok "load rnvme, then nvme_rdma (for the shadowing warning)"
	fi
	echo "install nvme-rdma /bin/true" > /etc/modprobe.d/rnvme-test-block-inbox.conf
fi

suite_end
