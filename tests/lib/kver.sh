#!/bin/bash
# Print the KVER of the installed Debian 6.1 test kernel (e.g. 6.1.0-56-amd64).
# If several are installed, the one matching the installed linux-source-6.1 version
# wins, else the newest. Exit 1 when none is installed.
# shellcheck source=../../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/kbuild/strict.sh"
want=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
best=
# Oldest first (version sort), so "best" ends up the newest.
for k in $(find /boot -maxdepth 1 -name 'vmlinuz-6.1.0-*-amd64' -printf '%f\n' | sed 's/^vmlinuz-//' | sort -V); do
	[ -d "/lib/modules/$k/kernel" ] || continue
	if [ -n "$want" ] && [ "$(dpkg-query -W -f='${Version}' "linux-image-$k" 2>/dev/null || true)" = "$want" ]; then
		echo "$k"
		exit 0
	fi
	best=$k
done
if [ -z "$best" ]; then
	echo "kver.sh: no Debian 6.1 kernel (/boot/vmlinuz-6.1.0-*-amd64 + modules) installed; run tests/setup-host.sh" >&2
	exit 1
fi
echo "$best"
