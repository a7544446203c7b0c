#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shadow.sh SRCDIR SHADOWDIR: mirror the module sources (Kbuild, drivers/,
# include/) into SHADOWDIR as per-file symlinks, so kbuild's objects for each
# target kernel land in that kernel's own build directory and builds for
# different kernels never overwrite each other.
# shellcheck source=strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/strict.sh"
src=$1 dst=$2
mkdir -p "$dst"
ln -sfn "$src/Kbuild" "$dst/Kbuild"
# drop links to files that no longer exist
find "$dst/drivers" "$dst/include" -type l ! -exec test -e {} \; -delete 2>/dev/null || true
(cd "$src" && find drivers include -type f \( -name '*.c' -o -name '*.h' \)) |
while read -r f; do
	mkdir -p "$dst/$(dirname "$f")"
	ln -sfn "$src/$f" "$dst/$f"
done
