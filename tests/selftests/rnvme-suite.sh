#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kselftest entry point of one rnvme VM suite.  tests/selftests/Makefile
# installs a copy of this file under each suite's name, COLLECTION/NN-name.sh,
# next to COLLECTION/tests/suites/NN-name.sh (the suite, unchanged) and
# COLLECTION/tests/lib/.  The kselftest runner starts ./NN-name.sh from
# COLLECTION; this runs tests/suites/NN-name.sh, so the suite's
# "$(dirname "$0")/../lib/common.sh" is COLLECTION/tests/lib/common.sh and
# common.sh's REPO (unless set) is COLLECTION, with the module at
# COLLECTION/build/$(uname -r)/rnvme.ko (bundled by make install when built).
here=$(dirname "$0")
name=$(basename "$0")
suite=$here/tests/suites/$name
if [ ! -x "$suite" ]; then
	echo "Bail out! $suite missing: install with make -C tests/selftests install"
	exit 1
fi
exec "$suite" "$@"
