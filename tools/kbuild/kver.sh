#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the kernel release rnvme builds for when KVER= is not given: the
# running kernel if its headers are installed, else the newest installed
# Debian 6.1 kernel with headers, else the newest of any series.
set -eu
run=$(uname -r)
if [ -d "/lib/modules/$run/build" ]; then
	echo "$run"
	exit 0
fi
# "6.1." and not "6.1": 6.12's headers start with "6.1" too; a series'
# PREEMPT_RT flavour only when it has no other
pick=""
for series in 6.1. 6.12. ""; do
	all=$(ls -d /usr/src/linux-headers-"$series"*-amd64 2>/dev/null |
	      sed 's|.*/linux-headers-||' | sort -V)
	pick=$(printf '%s\n' "$all" | grep -v -- '-rt-amd64$' | tail -n 1)
	[ -n "$pick" ] || pick=$(printf '%s\n' "$all" | tail -n 1)
	[ -n "$pick" ] && break
done
if [ -z "$pick" ]; then
	echo "rnvme: no kernel headers found for $run or any Debian kernel;" >&2
	echo "rnvme: install them (apt-get install linux-headers-amd64) or run tests/setup-host.sh" >&2
	exit 1
fi
echo "$pick"
