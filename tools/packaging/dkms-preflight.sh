#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-preflight.sh KVER            (DKMS PRE_BUILD, run in the DKMS build dir)
# dkms-preflight.sh --verdict KVER  (first half of dkms.conf's MAKE line)
#
# Checks, before rnvme.ko is built for kernel KVER:
#   1. the kernel's headers (/lib/modules/KVER/build) and pahole are there;
#   2. nvme-core's private headers can be had from the linux-source-X.Y that
#      matches KVER exactly -- by running the build's own
#      tools/kbuild/prepare.sh, which names the `apt-get install
#      linux-source-X.Y=<version>` to run when it does not;
#   3. the RDMA stack modprobe would load for KVER is the kernel's own: a
#      vendor stack (MLNX_OFED and the like: an ib_core.ko under updates/ or
#      extra/ that is not the in-tree one, or an OFED Module.symvers whose
#      CRCs differ from the kernel's) has another ABI, so a module built
#      against the kernel's Module.symvers would not load -- refused;
#   4. Secure Boot: warns when it is on and the DKMS signing key is missing
#      or not enrolled (the kernel would then reject rnvme.ko).
#
# DKMS 3.0 ignores the exit status of PRE_BUILD and runs `make clean` between
# PRE_BUILD and MAKE, so this script records its verdict (and the private
# headers prepare.sh extracted, to avoid a second 140 MB xz decode) under
# .dkms-preflight/, and `--verdict` -- run by MAKE just before
# `make module` -- fails the build if the pre-flight refused, and otherwise
# puts the prepared headers back into build/KVER.
#
# Messages go to stderr: DKMS's autoinstall (and the package's postinst)
# send the build's stdout to /dev/null.
#
# Test hooks (environment): RNVME_PREFLIGHT_MODDIR replaces /lib/modules/KVER,
# RNVME_PREFLIGHT_KDIR the kernel build dir, RNVME_PREFLIGHT_OFED the
# directory searched for an OFED Module.symvers (default /usr/src/ofa_kernel),
# RNVME_MOK_PUB the DKMS certificate (default from /etc/dkms/framework.conf,
# else /var/lib/dkms/mok.pub).
# shellcheck source=../kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../kbuild/strict.sh"

verdict=0
if [ "${1:-}" = --verdict ]; then
	verdict=1
	shift
fi
[ $# -eq 1 ] || { echo "usage: $0 [--verdict] KVER" >&2; exit 2; }
kver=$1
state=.dkms-preflight
refused=$state/$kver.refused
prepared=$state/$kver.prepared

say() { printf 'rnvme-dkms: %s\n' "$@" >&2; }

if [ "$verdict" = 1 ]; then
	if [ -e "$refused" ]; then
		say "pre-flight refused kernel $kver; not building:"
		sed 's/^/rnvme-dkms:   /' "$refused" >&2
		exit 1
	fi
	if [ -d "$prepared" ] && [ ! -e "build/$kver/nvme-host/.source" ]; then
		mkdir -p build
		rm -rf "build/$kver"
		cp -a "$prepared" "build/$kver"
	fi
	# in DKMS's make.log: dkms 3.2 (Debian 13) does not show PRE_BUILD's output
	[ ! -d "$prepared" ] || say "pre-flight for $kver passed; building"
	exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
moddir=${RNVME_PREFLIGHT_MODDIR:-/lib/modules/$kver}
kdir=${RNVME_PREFLIGHT_KDIR:-/lib/modules/$kver/build}
ofed_root=${RNVME_PREFLIGHT_OFED:-/usr/src/ofa_kernel}

problems=()
refuse() { problems+=("$@"); }

# ------------------------------------------------------------ 1. headers, tools
if [ ! -f "$kdir/Makefile" ]; then
	refuse "kernel headers for $kver are not installed ($kdir missing)." \
		"Install them:  apt-get install linux-headers-$kver"
fi
if ! command -v pahole >/dev/null; then
	refuse "pahole is not installed; the build checks rnvme's view of nvme-core" \
		"against the kernel's BTF with it.  Install it:  apt-get install pahole"
fi

# ------------------------------------------------------------ 2. kernel source
# prepare.sh is the build's own check (and extraction): exact linux-source
# version, the apt-get line to run otherwise.  Its output is kept for MAKE.
if [ -f "$kdir/Makefile" ]; then
	rm -rf "$state/$kver.work"
	mkdir -p "$state"
	if out=$("$top/tools/kbuild/prepare.sh" "$kver" "$kdir" "$state/$kver.work" 2>&1); then
		rm -rf "$prepared"
		mv "$state/$kver.work" "$prepared"
	else
		mapfile -t lines < <(printf '%s\n' "$out" | sed 's/^rnvme: error: //')
		refuse "cannot get nvme-core's private headers for $kver:" "${lines[@]}"
		rm -rf "$state/$kver.work"
	fi
fi

# ------------------------------------------------------------ 3. vendor RDMA stack
modfield() { modinfo -F "$1" "$2" 2>/dev/null | head -n 1; }
modcat() { # uncompressed module contents on stdout
	case "$1" in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -qdc "$1" ;;
	*.gz) gzip -dc "$1" ;;
	*) cat "$1" ;;
	esac 2>/dev/null
}
intree=""
for f in "$moddir"/kernel/drivers/infiniband/core/ib_core.ko*; do
	[ -e "$f" ] && intree=$f && break
done
intree_sum=""
[ -z "$intree" ] || intree_sum=$(modcat "$intree" | sha256sum | cut -d' ' -f1)
# An ib_core outside kernel/ (updates/, extra/, weak-updates/ take precedence
# in depmod's search order) is a vendor stack unless it is a byte-identical
# copy of the in-tree one.  Out-of-tree builds also lack "intree: Y" and may
# carry another vermagic.
vendor=()
while IFS= read -r f; do
	[ -n "$f" ] || continue
	if [ -z "$intree" ] || [ "$(modcat "$f" | sha256sum | cut -d' ' -f1)" != "$intree_sum" ]; then
		why="vermagic '$(modfield vermagic "$f")'"
		[ "$(modfield intree "$f")" = Y ] || why="$why, built out of tree"
		vendor+=("$f ($why; not the kernel's ib_core.ko)")
	fi
done < <(find "$moddir" -path "$moddir/kernel" -prune -o -name 'ib_core.ko*' -print 2>/dev/null)
# The running kernel may have a vendor ib_core loaded from elsewhere ('O' taint).
if [ "$(uname -r)" = "$kver" ] && [ -r /sys/module/ib_core/taint ] &&
	grep -q O /sys/module/ib_core/taint; then
	vendor+=("the loaded ib_core is an out-of-tree module (taint '$(cat /sys/module/ib_core/taint)')")
fi
# MLNX_OFED ships the Module.symvers of its stack; compare its RDMA exports.
symvers_diff=()
# only where an OFED tree exists: find on a missing one fails, and the ERR
# trap would print FAILED during a good install
if [ -f "$kdir/Module.symvers" ] && [ -d "$ofed_root" ]; then
	while IFS= read -r sv; do
		[ -n "$sv" ] || continue
		mapfile -t d < <(awk 'NR == FNR { if ($3 ~ /drivers\/infiniband/) k[$2] = $1; next }
			($2 in k) && k[$2] != $1 { printf "%s: kernel %s, %s\n", $2, k[$2], $1 }' \
			"$kdir/Module.symvers" "$sv" | head -n 5)
		if [ "${#d[@]}" -gt 0 ]; then
			symvers_diff+=("$sv differs from the kernel's Module.symvers, e.g.:" "${d[@]}")
		fi
	done < <(find "$ofed_root" -name Module.symvers \( -path "*/$kver/*" -o -path '*/default/*' \) 2>/dev/null)
fi
if [ "${#vendor[@]}" -gt 0 ] || [ "${#symvers_diff[@]}" -gt 0 ]; then
	refuse "a vendor RDMA stack (e.g. MLNX_OFED) is installed for $kver:" \
		"${vendor[@]/#/  }" "${symvers_diff[@]/#/  }" \
		"rnvme is built against the kernel's own ib_core/rdma_cm (their CRCs in" \
		"$kdir/Module.symvers).  The vendor stack replaces those modules with" \
		"another ABI, so rnvme.ko would fail to load ('disagrees about version of" \
		"symbol') or, worse, misuse their structures.  Either remove the vendor" \
		"stack and use the distribution's RDMA modules, or use the vendor's own" \
		"nvme-rdma.  See /usr/share/doc/rnvme-dkms/packaging.rst (Vendor OFED)."
fi

# ------------------------------------------------------------ 4. Secure Boot (warning)
if command -v mokutil >/dev/null && mokutil --sb-state 2>/dev/null | grep -i 'SecureBoot enabled' >/dev/null; then
	pub=${RNVME_MOK_PUB:-}
	if [ -z "$pub" ]; then
		pub=$(sed -n 's/^[[:space:]]*mok_certificate=["]*\([^"]*\)["]*/\1/p' /etc/dkms/framework.conf 2>/dev/null | tail -n 1)
		pub=${pub:-/var/lib/dkms/mok.pub}
	fi
	if [ ! -f "$pub" ]; then
		say "warning: Secure Boot is enabled and there is no DKMS signing key ($pub)." \
			"DKMS will create one and sign rnvme.ko with it, but the kernel refuses modules" \
			"signed by a key it does not know ('Key was rejected by service').  After the" \
			"install, enroll the key and reboot:" \
			"  mokutil --import $pub     # asks for a one-time password" \
			"  reboot                    # MokManager: Enroll MOK, enter that password"
	elif mokutil --test-key "$pub" 2>/dev/null | grep -i 'not enrolled' >/dev/null; then
		say "warning: Secure Boot is enabled and the DKMS key $pub is not enrolled;" \
			"rnvme.ko will not load until it is:  mokutil --import $pub  and reboot" \
			"(MokManager: Enroll MOK)."
	fi
fi

if [ "${#problems[@]}" -gt 0 ]; then
	mkdir -p "$state"
	printf '%s\n' "${problems[@]}" > "$refused"
	say "cannot build rnvme for kernel $kver:"
	printf 'rnvme-dkms:   %s\n' "${problems[@]}" >&2
	exit 1
fi
rm -f "$refused"
say "pre-flight for $kver passed (headers, kernel source, in-tree RDMA stack)"
