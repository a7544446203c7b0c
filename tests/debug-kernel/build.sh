#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the rnvme debug test kernel (KASAN, lockdep, kmemleak, KUnit, fault
# injection) from a Debian linux-source-X.Y tarball (6.12 by default; 7.3 from
# the Debian 13 build root), out of tree, into a cache outside the checkout:
#
#   /var/cache/rnvme/debug-kernel/<key>/
#       src/                  extracted kernel source (KSRC= for rnvme)
#       build/                O= build tree (KDIR= for rnvme), vmlinux, bzImage
#       root/lib/modules/KVER modules_install output (booted by run-vm.sh)
#       kernel.release        KVER, e.g. 6.12.117-rnvme-debug
#       build.log             full make output
#       source                the tarball and package version built from
#       buildroot             the build root it was compiled in (--root), or empty
#       fragment.config       the config fragment applied (see below)
#       stamp                 written last; present = cache complete
#
# The fragment is rnvme-debug.config (every line) plus rnvme-debug-MAJOR.config
# for the tarball's major version (what differs between kernel lines: the
# preemption model, options that were removed).
# key = sha256 of (tarball package version + the fragment + this script),
# so any change to the recipe builds a new kernel.  A second call with a
# complete cache is a no-op.  The last line on stdout is always the cache
# directory.  A new key on the same source takes over the tree of the entry
# built from it before (src/ and build/ become links to that tree, whose
# paths must not change: kbuild's saved command lines name them), and kbuild
# rebuilds only what the change touches; that older entry is then no longer
# complete (its stamp and modules go).
#
# usage: tests/debug-kernel/build.sh [--print-key] [-j N] [--root ROOT]
#   --root ROOT   build inside a build root (tests/root/build.sh: Debian 13)
#                 with its compiler, from its tarball: a kernel is built by
#                 its own release's toolchain.  make module then builds rnvme
#                 for this kernel in that root too (tools/kbuild/kroot.sh).
#   RNVME_DEBUG_KERNEL_CACHE  base directory (default /var/cache/rnvme/debug-kernel)
#   RNVME_KSRC_TARBALL        source tarball (default /usr/src/linux-source-6.12.tar.xz;
#                             with --root, a path inside the root)
# shellcheck source=../../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/kbuild/strict.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tarball=${RNVME_KSRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
base=${RNVME_DEBUG_KERNEL_CACHE:-/var/cache/rnvme/debug-kernel}
jobs=$(nproc)
print_key=0
broot=

die() {
	echo "debug-kernel: error: $*" >&2
	exit 1
}
log() { echo "debug-kernel: $*" >&2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--print-key) print_key=1; shift ;;
	-j) jobs=${2:?-j needs a number}; shift 2 ;;
	--root) broot=${2:?--root needs a build root}; shift 2 ;;
	-h|--help) sed -n '3,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1'" ;;
	esac
done

# --root: the rest runs inside the build root, the cache bound at its own
# path there (tests/root/run.sh binds RNVME_DEBUG_KERNEL_CACHE)
if [ -n "$broot" ] && [ "${RNVME_DEBUG_KERNEL_IN_ROOT:-}" != "$broot" ]; then
	[ -x "$broot/usr/bin/env" ] || die "--root $broot is not a build root (tests/root/build.sh makes one)"
	broot=$(realpath -e "$broot")
	mkdir -p "$base"
	args=(-j "$jobs" --root "$broot")
	[ "$print_key" = 0 ] || args+=(--print-key)
	RNVME_DEBUG_KERNEL_CACHE=$(realpath -e "$base") RNVME_DEBUG_KERNEL_IN_ROOT=$broot \
		RNVME_KSRC_TARBALL=$tarball exec "$here/../root/run.sh" "$broot" "$here/build.sh" "${args[@]}"
fi

case "$(basename "$tarball")" in
linux-source-[0-9]*.tar.xz) major=$(basename "$tarball" | sed -E 's/^linux-source-([0-9]+)\..*/\1/') ;;
*) die "$tarball: not a linux-source-X.Y.tar.xz tarball" ;;
esac
fragments=("$here/rnvme-debug.config")
[ ! -f "$here/rnvme-debug-$major.config" ] || fragments+=("$here/rnvme-debug-$major.config")
[ -r "$tarball" ] || die "$tarball missing (apt-get install $(basename "$tarball" .tar.xz)${broot:+ in the build root $broot})"
pkgver=$(dpkg-query -W -f='${Version}' "$(basename "$tarball" .tar.xz)" 2>/dev/null || true)
[ -n "$pkgver" ] || pkgver="unpackaged $(stat -c '%s %Y' "$tarball")"
key=$( {
	echo "tarball $(basename "$tarball") $pkgver"
	cat "${fragments[@]}"
	cat "$0"
} | sha256sum | cut -c1-16)
if [ "$print_key" = 1 ]; then
	echo "$key"
	exit 0
fi
cache=$base/$key

if [ -f "$cache/stamp" ]; then
	log "cached: $(cat "$cache/stamp")"
	echo "$cache"
	exit 0
fi

for t in gcc make flex bison bc perl pahole xz; do
	command -v "$t" >/dev/null || die "'$t' not found (apt-get install build-essential flex bison bc pahole xz-utils libelf-dev libssl-dev)"
done
[ -f /usr/include/libelf.h ] || [ -f /usr/include/elfutils/libelf.h ] ||
	die "libelf headers missing (apt-get install libelf-dev)"

mkdir -p "$cache"
fragment=$cache/fragment.config
cat "${fragments[@]}" > "$fragment"
# One builder per cache entry; a second caller waits, then finds the stamp.
exec 8>"$cache/.lock"
if ! flock -n 8; then
	log "another build of $cache is running; waiting"
	flock 8
	if [ -f "$cache/stamp" ]; then
		echo "$cache"
		exit 0
	fi
fi

t_start=$(date +%s)
src=$cache/src obj=$cache/build blog=$cache/build.log
srcid="tarball $(basename "$tarball") $pkgver"
log "key $key ($(basename "$tarball") $pkgver); cache $cache"
if [ ! -e "$src" ] && [ ! -e "$obj" ]; then
	for d in "$base"/*/; do
		d=${d%/}
		if [ "$d" = "$cache" ] || [ ! -f "$d/source" ] || [ ! -d "$d/src" ] || [ ! -d "$d/build" ]; then
			continue
		fi
		[ "$(cat "$d/source")" = "$srcid" ] || continue
		tsrc=$(realpath "$d/src") tobj=$(realpath "$d/build")
		[ -f "$tsrc/.extracted" ] || continue
		log "taking over the tree of $d (same source): $tobj"
		# that entry's kernel is rebuilt in place: it is no longer complete
		rm -f "$d/stamp"
		rm -rf "$d/root"
		{ ln -s "$tsrc" "$src" && ln -s "$tobj" "$obj"; } || die "cannot link $src and $obj to the tree of $d"
		break
	done
fi
if [ ! -f "$src/.extracted" ]; then
	log "extracting $tarball"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	touch "$src/.extracted"
fi
mkdir -p "$obj"
: > "$blog"

kmake() {
	nice -n 19 make -C "$src" O="$obj" ARCH=x86_64 "$@"
}

# allnoconfig with the fragment forced in (KCONFIG_ALLCONFIG), so options that
# become visible through the fragment default to n and the kernel stays small;
# then olddefconfig settles anything left.
log "configuring (allnoconfig + $(for f in "${fragments[@]}"; do basename "$f"; done | paste -sd+))"
kmake KCONFIG_ALLCONFIG="$fragment" allnoconfig >> "$blog" 2>&1 ||
	die "allnoconfig failed; see $blog"
kmake olddefconfig >> "$blog" 2>&1 || die "olddefconfig failed; see $blog"

# Every option of the fragment must have survived dependency resolution.
missing=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF -- "$line" "$obj/.config" && continue
		have=$(grep -E "^(# )?${line%%=*}[= ]" "$obj/.config" || echo "absent")
		log "MISSING: wanted '$line', .config has '$have'"
		missing=$((missing + 1))
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		if grep -qE "^$opt=" "$obj/.config"; then
			log "MISSING: wanted '$line', .config has '$(grep -E "^$opt=" "$obj/.config")'"
			missing=$((missing + 1))
		fi
		;;
	esac
done < "$fragment"
[ "$missing" -eq 0 ] ||
	die "$missing option(s) of $fragment not set after olddefconfig (a dependency is missing from the fragment)"
log "config verified: all $(grep -cE '^(CONFIG_|# CONFIG_.* is not set)' "$fragment") fragment options set"

kver=$(kmake -s kernelrelease 2>/dev/null)
[ -n "$kver" ] || die "cannot determine the kernel release"
log "building $kver with -j$jobs under nice -n 19 (log: $blog)"

# Progress: one line a minute with objects built so far and elapsed time.
t_build=$(date +%s)
(
	while sleep 60; do
		n=$(find "$obj/" -name '*.o' -newer "$obj/.config" 2>/dev/null | wc -l)
		log "progress: $n objects, $(( ($(date +%s) - t_build) / 60 )) min elapsed, last: $(tail -n 1 "$blog" | cut -c1-100)"
	done
) &
prog=$!
trap 'kill "$prog" 2>/dev/null || true' EXIT
rc=0
kmake -j"$jobs" all >> "$blog" 2>&1 || rc=$?
kill "$prog" 2>/dev/null || true
if [ "$rc" -ne 0 ]; then
	grep -E 'error|Error' "$blog" | tail -n 20 >&2 || true
	die "kernel build failed (rc $rc); see $blog"
fi
t_built=$(date +%s)

rm -rf "$cache/root"
kmake INSTALL_MOD_PATH="$cache/root" modules_install >> "$blog" 2>&1 ||
	die "modules_install failed; see $blog"
# The build/source links of modules_install point into this cache; keep them.
[ -s "$obj/arch/x86/boot/bzImage" ] || die "no bzImage in $obj"
[ -f "$obj/vmlinux" ] || die "no vmlinux in $obj"
[ -n "$(find "$cache/root/lib/modules/$kver" -name nvme-core.ko)" ] ||
	die "nvme-core.ko missing from $cache/root/lib/modules/$kver"
echo "$kver" > "$cache/kernel.release"
echo "$srcid" > "$cache/source"
echo "$broot" > "$cache/buildroot"

t_end=$(date +%s)
nobj=$(find "$obj/" -name '*.o' | wc -l)
echo "kver $kver key $key built $(date -u +%FT%TZ) compile_s $((t_built - t_build)) total_s $((t_end - t_start))s objects $nobj jobs $jobs" > "$cache/stamp"
log "done: $kver in $((t_end - t_start)) s ($nobj objects); $cache"
echo "$cache"
