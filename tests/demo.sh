#!/bin/bash
# make demo: build rnvme.ko and the rnvme tool, boot a QEMU VM, and in it
# discover and connect a Soft-RoCE NVMe-oF target through rnvme and do I/O.
# shellcheck source=../tools/kbuild/strict.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tools/kbuild/strict.sh"
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
export RNVME_OUT=${RNVME_OUT:-$REPO/build}
OUT_ROOT=$RNVME_OUT
if [ "$(id -u)" = 0 ] && [ "${RNVME_SKIP_SETUP:-0}" != 1 ]; then
	echo "== installing what the demo needs (tests/setup-host.sh)"
	tests/setup-host.sh | grep --line-buffered -E '^(==|setup-host|KVER)'
fi
KVER=${KVER:-$(tests/lib/kver.sh)}
echo "== building rnvme.ko for $KVER"
make module O="$OUT_ROOT" KVER="$KVER" | grep -E 'LAYOUT|EXTRACT|error' || true
[ -f "$OUT_ROOT/$KVER/rnvme.ko" ] || { echo "demo: module build failed (run: make module)" >&2; exit 1; }
if [ -f tools/rnvme/CMakeLists.txt ]; then
	echo "== building the rnvme tool"
	make tool O="$OUT_ROOT" > /dev/null || echo "demo: tool build failed; the demo uses nvme-cli instead" >&2
fi
echo "== booting the VM (QEMU TCG, about a minute)"
exec tests/vm/run-vm.sh --kver "$KVER" --timeout 900 --out "$OUT_ROOT/vm/demo" -v \
	-- "$REPO/tests/guest/demo.sh"
