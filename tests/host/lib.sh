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
