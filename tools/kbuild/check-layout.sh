#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-layout.sh KVER KDIR OUTDIR MODULE.ko
#
# rnvme embeds nvme-core structures (struct nvme_ctrl by value, struct
# nvme_request at the head of every blk-mq PDU, nvmf_ctrl_options, the ops
# tables).  Their layouts come from the private headers extracted by
# prepare.sh; modversions cannot see them, so a skew would compile, load and
# corrupt memory.  This compares every such struct in MODULE.ko's DWARF with
# the BTF of the target kernel's own nvme-core.ko / nvme-fabrics.ko, member
# by member, and fails the build on any difference.
# shellcheck source=strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/strict.sh"
kver=$1 kdir=$2 out=$3 ko=$4
structs="nvme_ctrl nvme_request nvme_ns nvme_ns_head nvme_ctrl_ops nvmf_ctrl_options nvmf_transport_ops nvmf_host"

die() {
	echo "rnvme: error: $*" >&2
	exit 1
}

# A full build tree of KSRC itself (tests/debug-kernel/build.sh): nvme-core.ko
# was compiled from the very headers rnvme used, so there is no skew to find
# (and such a tree may carry no BTF at all).
if [ -n "${KSRC:-}" ] && [ -f "$kdir/drivers/nvme/host/nvme-core.ko" ] &&
	[ "$(readlink -f "$kdir/source" 2>/dev/null || true)" = "$(readlink -f "$KSRC")" ]; then
	echo "  LAYOUT  not compared: $kdir is a build of KSRC=$KSRC, the source of rnvme's nvme-core headers"
	exit 0
fi

command -v pahole >/dev/null ||
	die "pahole not found: it checks rnvme's view of nvme-core against the kernel's BTF (apt-get install pahole)"

# Split BTF of a module needs the kernel's base BTF.
base=""
if [ -f "$kdir/vmlinux" ]; then
	base=$kdir/vmlinux
elif [ "$(uname -r)" = "$kver" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	base=/sys/kernel/btf/vmlinux
else
	img=/boot/vmlinuz-$kver
	base=$out/vmlinux
	if [ ! -s "$base" ] || [ "$img" -nt "$base" ]; then
		[ -r "$img" ] || die "no base BTF for $kver: $img missing (install linux-image-$kver)"
		off=$(grep -abo $'\xfd7zXZ' "$img" | head -n 1 | cut -d: -f1 || true)
		[ -n "$off" ] || die "$img is not an xz-compressed bzImage; cannot get base BTF"
		tail -c +$((off + 1)) "$img" | xz -dc > "$base.tmp" 2>/dev/null || true
		[ -s "$base.tmp" ] || die "could not decompress $img"
		mv "$base.tmp" "$base"
	fi
fi

modfile() { # name -> uncompressed path
	local f
	# KDIR is a full kernel build tree (e.g. tests/debug-kernel/build.sh): its own module
	if [ -f "$kdir/drivers/nvme/host/$1.ko" ]; then
		echo "$kdir/drivers/nvme/host/$1.ko"
		return
	fi
	f=$(modinfo -k "$kver" -n "$1" 2>/dev/null) ||
		die "$1 module for $kver not found (install linux-image-$kver)"
	case "$f" in
	*.xz) xz -dc "$f" > "$out/$1.ko"; echo "$out/$1.ko" ;;
	*.zst) zstd -qdc "$f" > "$out/$1.ko"; echo "$out/$1.ko" ;;
	*) echo "$f" ;;
	esac
}
core=$(modfile nvme-core)
fabrics=$(modfile nvme-fabrics)

# Reduce pahole's output to "member offset size" lines plus the total size,
# so type spelling differences between BTF and DWARF do not matter.
norm() {
	perl -ne '
		if (m{^\s*(.*?);\s*/\*\s*(\d+)(?::\s*\d+)?\s+(\d+)\s*\*/}) {
			my ($decl, $off, $size) = ($1, $2, $3);
			$decl =~ s/__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*//g;
			my $name;
			if ($decl =~ /\(\*\s*(\w+)\)/) { $name = $1 }
			elsif ($decl =~ /(\w+)\s*(?:\[[^\]]*\])*\s*(?::\s*\d+)?\s*$/) { $name = $1 }
			else { $name = $decl }
			print "$name $off $size\n";
		} elsif (m{/\*\s*size:\s*(\d+)}) {
			print "size $1\n";
		}'
}

fail=0 checked=0
for s in $structs; do
	mine=$(pahole -C "$s" "$ko" 2>/dev/null | norm)
	[ -n "$mine" ] || continue	# rnvme does not use this struct
	theirs=$(pahole --btf_base "$base" -C "$s" "$core" 2>/dev/null | norm)
	[ -n "$theirs" ] || theirs=$(pahole --btf_base "$base" -C "$s" "$fabrics" 2>/dev/null | norm)
	if [ -z "$theirs" ]; then
		echo "rnvme: warning: struct $s not in the BTF of $kver's nvme modules; not checked" >&2
		continue
	fi
	checked=$((checked + 1))
	if [ "$mine" != "$theirs" ]; then
		echo "rnvme: error: struct $s differs between the headers rnvme was built with and $kver's nvme-core:" >&2
		diff <(echo "$theirs") <(echo "$mine") | sed 's/^/rnvme:   /' >&2 || true
		fail=1
	fi
done
[ "$checked" -gt 0 ] || die "no nvme-core struct could be checked in $ko (built without debug info?)"
if [ "$fail" -ne 0 ]; then
	rm -f "$ko"
	die "the nvme-core private headers do not match kernel $kver ('<' kernel, '>' rnvme build).
Use the kernel source of exactly this kernel: apt-get install the matching linux-source, or KSRC=.
$ko was removed so it cannot be loaded."
fi
echo "  LAYOUT  $checked nvme-core structs match $kver's BTF"
