#!/bin/bash
# Install Debian's 6.12 backport kernel (image, headers, linux-source-6.12) at
# ONE version, for the second kernel make check builds and boots (idempotent;
# quick when present).  Last line: KVER612=6.12.N+deb12-amd64.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "setup-612: must run as root" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
ver() { dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$1" 2>/dev/null | awk '$1 == "ii" { print $2 }'; }
# 6.12.117-1~deb12u1 -> 6.12.117+deb12-amd64
abi() { echo "$1" | sed -E 's/^([0-9]+\.[0-9]+\.[0-9]+)-.*/\1+deb12-amd64/'; }

V=$(ver linux-source-6.12)
if [ -n "$V" ]; then
	K=$(abi "$V")
	if [ "$(ver "linux-image-$K")" = "$V" ] && [ "$(ver "linux-headers-$K")" = "$V" ]; then
		echo "setup-612: already installed ($V)"
		echo "KVER612=$K"
		exit 0
	fi
fi
V=$(apt-cache policy linux-source-6.12 | awk '/Candidate:/ { print $2 }')
if [ -z "$V" ] || [ "$V" = "(none)" ]; then
	apt-get update -q
	V=$(apt-cache policy linux-source-6.12 | awk '/Candidate:/ { print $2 }')
fi
[ -n "$V" ] && [ "$V" != "(none)" ] ||
	{ echo "setup-612: no linux-source-6.12 candidate (bookworm-security missing from sources?)" >&2; exit 1; }
K=$(abi "$V")
echo "setup-612: installing linux-image/headers-$K and linux-source-6.12 at $V"
apt-get install -y -q --no-install-recommends "linux-image-$K=$V" "linux-headers-$K=$V" "linux-source-6.12=$V"
[ -s "/lib/modules/$K/modules.dep" ] || depmod "$K"
echo "KVER612=$K"
