# shellcheck shell=bash
# vm_lock_acquire FD: take the machine-wide VM lock (/tmp/rnvme-vm.lock) on FD,
# first come first served. flock(1) alone wakes waiters in no particular
# order, so a queue of tickets (/tmp/rnvme-vm.queue/<time>-<pid>) decides who
# tries next; tickets of dead processes are dropped.
VM_LOCK=/tmp/rnvme-vm.lock
VM_QUEUE=/tmp/rnvme-vm.queue

vm_lock_acquire() {
	local fd=$1 me head t pid said=0
	mkdir -p "$VM_QUEUE"
	me=$VM_QUEUE/$(date +%s%N)-$$
	: > "$me"
	# shellcheck disable=SC2064 # expand now: the ticket is ours
	trap "rm -f '$me'" EXIT
	eval "exec $fd>\"$VM_LOCK\""
	while :; do
		head=''
		for t in "$VM_QUEUE"/*; do
			[ -e "$t" ] || continue
			pid=${t##*-}
			if ! kill -0 "$pid" 2>/dev/null; then
				rm -f "$t"
				continue
			fi
			head=$t
			break
		done
		if [ "$head" = "$me" ]; then
			# first in line: wait in the kernel's queue (like callers of plain flock)
			flock "$fd"
			rm -f "$me"
			return 0
		fi
		if [ "$said" = 0 ]; then
			echo "run-vm: waiting for other VM runs to finish (lock $VM_LOCK, queue $VM_QUEUE) ..." >&2
			said=1
		fi
		sleep 1
	done
}
