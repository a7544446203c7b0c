#!/bin/bash
# Shared helpers of the host-side tests (sourced).

# make_fake_kdir DIR: a kernel build tree that claims to be Debian 6.1.250-1,
# a version with no linux-source installed, for the refusal tests.
make_fake_kdir() {
	local fake=$1
	mkdir -p "$fake/include/generated/uapi/linux"
	echo "include /dev/null" > "$fake/Makefile"
	printf '#define LINUX_VERSION_CODE %d\n#define LINUX_VERSION_SUBLEVEL 250\n' \
		$(((6 << 16) + (1 << 8) + 250)) > "$fake/include/generated/uapi/linux/version.h"
	echo '#define LINUX_PACKAGE_ID " Debian 6.1.250-1"' > "$fake/include/generated/package.h"
}

# TAP for the host tests: ok DESC, not_ok DESC, diag (stdin as "# " lines);
# n counts the points, failed the failures.
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }
