#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.sh FILE...: the kernel's checkpatch.pl --strict on rnvme
# sources.  The script comes from the kernel source tarball (KSRC= or
# Debian's linux-source-X.Y) and is cached under build/checkpatch.
# shellcheck source=strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/strict.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
cp=${RNVME_OUT:-$top/build}/checkpatch
if [ ! -x "$cp/scripts/checkpatch.pl" ]; then
	mkdir -p "$cp"
	if [ -n "${KSRC:-}" ] && [ -f "$KSRC/scripts/checkpatch.pl" ]; then
		cp -r "$KSRC/scripts" "$cp/"
	else
		tarball=$(ls /usr/src/linux-source-6.*.tar.xz 2>/dev/null | sort -V | head -n 1 || true)
		[ -n "$tarball" ] || { echo "checkpatch: no kernel source (apt-get install linux-source-6.1 or KSRC=)" >&2; exit 2; }
		top_dir=$(basename "$tarball" .tar.xz)
		tar -xJf "$tarball" -C "$cp" --strip-components=1 \
			"$top_dir/scripts/checkpatch.pl" "$top_dir/scripts/spelling.txt" \
			"$top_dir/scripts/const_structs.checkpatch"
	fi
fi
# MACRO_ARG_REUSE ignored: sysfs.c's RNVME_COUNTER_ATTR(name) reuses a field name (no side effects)
exec perl "$cp/scripts/checkpatch.pl" --no-tree --terse --show-types --strict \
	--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES,LINUX_VERSION_CODE,MACRO_ARG_REUSE -f "$@"
