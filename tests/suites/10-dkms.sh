#!/bin/bash
# shellcheck disable=SC2317,SC2119 # helpers are invoked indirectly (check, wait_for)
# 10-dkms: the rnvme-dkms package end to end in the guest overlay.
#   apt-get install ./rnvme-dkms_*.deb  -> DKMS builds and installs rnvme.ko
#   (postinst: the running kernel and the newest kernel with headers), then
#   `nvme connect -t rdma` with NO manual module loading is served by rnvme
#   (modprobe.d redirect of nvme-fabrics' request_module("nvme-rdma")), I/O
#   works; then purge leaves nothing behind and the in-tree nvme_rdma serves
#   `nvme connect -t rdma` again.
# The .deb comes from the host: tests/host/20-packaging.sh or `make deb`
# (build/debs/).  Everything the package does lands in the guest's tmpfs
# overlay; the host's dpkg/dkms state is not touched.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
suite_begin

kver=$(uname -r)
debs=${RNVME_OUT:-$REPO/build}/debs
deb=$(find "$debs" -maxdepth 1 -name 'rnvme-dkms_*_all.deb' 2>/dev/null | sort -V | tail -n 1)
[ -n "$deb" ] || bail "no rnvme-dkms .deb in $debs: run tests/host/20-packaging.sh or make deb on the host"
pkgver=$(dpkg-deb -f "$deb" Version)
upver=${pkgver%-*}
echo "# package $(basename "$deb"), kernel $kver"

# The harness blocks nvme-rdma for the other suites; this one needs the real
# request_module path.  Restore the block at the end if it was there.
block=/etc/modprobe.d/rnvme-test-block-inbox.conf
had_block=0
[ -e "$block" ] && had_block=1
rm -f "$block"
for m in rnvme nvme_rdma; do
	[ -d "/sys/module/$m" ] && { timeout 60 rmmod "$m" || bail "$m is loaded and cannot be removed"; }
done
[ ! -e /var/lib/dkms/rnvme ] || bail "/var/lib/dkms/rnvme exists before the install (stale state)"

fx_rxe_up || bail "cannot set up rxe over veth"
fx_target_up --nqn "$TEST_NQN" --port 1 || bail "cannot set up the nvmet target"
modprobe nvme-fabrics || bail "modprobe nvme-fabrics"

# ------------------------------------------------------------------ install
# Two routes (RNVME_DKMS_GUEST_BUILD):
#   1  apt-get install; the postinst runs `dkms build` + `dkms install` in the
#      guest.  Measured under TCG (2 vCPUs): 879 s for the install -- the
#      postinst builds for the running kernel AND the newest kernel with
#      headers (6.12 here), and each build decodes the 140 MB linux-source
#      .tar.xz and compiles under emulation -- plus 116 s for the purge
#      (depmod for both kernels).  This route passed (all but the check fixed
#      since); run it with RNVME_DKMS_GUEST_BUILD=1 and RNVME_SUITE_TIMEOUT=2400.
#   0  (default when the host left a tarball) the same package, installed with
#      /etc/dkms/no-autoinstall so the postinst does not build, then the
#      module the host test built with `dkms build` from this very package
#      (tests/host/20-packaging.sh, `dkms mktarball --binaries-only`) is
#      loaded with `dkms ldtarball` and installed with `dkms install`.  DKMS
#      still registers, places (updates/dkms), depmods and, on purge, removes
#      it; only the compile happened on the host, where 20-packaging.sh
#      checks it.
bin=$debs/rnvme-$upver-$kver.dkms-binaries.tar.gz
guest_build=${RNVME_DKMS_GUEST_BUILD:-}
if [ -z "$guest_build" ]; then
	if [ -s "$bin" ]; then guest_build=0; else guest_build=1; fi
fi
log=/run/rnvme-dkms-install.log
t=$(now_ns)
if [ "$guest_build" = 1 ]; then
	echo "# route: apt-get install, DKMS builds in the guest"
	DEBIAN_FRONTEND=noninteractive timeout 1500 apt-get install -y -q --no-install-recommends "$deb" > "$log" 2>&1
	rc=$?
	secs=$(secs_since "$t")
	echo "# apt-get install $(basename "$deb") (dkms build + install under TCG): $secs s"
	grep -E '^Building for|^Building initial module|^rnvme-dkms:|Done\.|Error|error' "$log" | head -n 20 | diag
	tap_result "apt-get install ./$(basename "$deb") (postinst: dkms build + install, $secs s)" "$rc" "$(tail -n 30 "$log")"
else
	echo "# route: apt-get install without autoinstall + host-built module via dkms ldtarball/install"
	mkdir -p /etc/dkms
	touch /etc/dkms/no-autoinstall
	DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q --no-install-recommends "$deb" > "$log" 2>&1
	rc=$?
	rm -f /etc/dkms/no-autoinstall
	tap_result "apt-get install ./$(basename "$deb") ($(secs_since "$t") s)" "$rc" "$(tail -n 30 "$log")"
	check "package source in /usr/src/rnvme-$upver" test -f "/usr/src/rnvme-$upver/dkms.conf"
	t=$(now_ns)
	check "dkms ldtarball $(basename "$bin")" dkms ldtarball --archive "$bin"
	check "dkms install -m rnvme -v $upver -k $kver" \
		dkms install -m rnvme -v "$upver" -k "$kver"
fi

check "dkms status: rnvme/$upver installed for $kver" bash -c "dkms status -m rnvme -v $upver -k $kver | grep ': installed' >/dev/null"
ko=$(find "/lib/modules/$kver/updates/dkms" -name 'rnvme.ko*' 2>/dev/null | head -n 1)
if [ -n "$ko" ]; then
	ok "module installed at $ko"
else
	not_ok "module installed under /lib/modules/$kver/updates/dkms" "$(find /lib/modules/"$kver"/updates 2>&1 | head)"
fi
check "modprobe resolves rnvme to the DKMS copy" bash -c "modinfo -n rnvme | grep /updates/dkms/ >/dev/null"
check "/etc/modprobe.d/rnvme.conf installed" test -f /etc/modprobe.d/rnvme.conf
check "modprobe nvme-rdma resolves to the redirect" bash -c "modprobe -n -v nvme-rdma 2>&1 | grep 'ignore-install rnvme' >/dev/null"
for d in /var/lib/dkms/rnvme/"$upver"/*/x86_64/module; do
	case "$d" in */"$kver"/*|*'*'*) ;; *) echo "# also built by the postinst: $d" ;; esac
done

# ------------------------------------------------------------------ connect, no manual load
check "no rnvme / nvme_rdma loaded before connect" bash -c '[ ! -d /sys/module/rnvme ] && [ ! -d /sys/module/nvme_rdma ]'
out=$(timed "nvme connect -t rdma (autoload)" nvme_connect 2>&1)
rc=$?
echo "$out" | grep '^# '
tap_result "nvme connect -t rdma with no module loaded by hand" "$rc" "$out"
check "request_module(nvme-rdma) loaded rnvme" test -d /sys/module/rnvme
check "in-tree nvme_rdma not loaded" test ! -d /sys/module/nvme_rdma
ctrl=$(ctrls_for_nqn "$TEST_NQN" | head -n 1)
if [ -n "$ctrl" ]; then
	check "$ctrl live" wait_for 30 grep -qx live "/sys/class/nvme/$ctrl/state"
	check "$ctrl transport = rdma" test "$(ctrl_attr "$ctrl" transport)" = rdma
	check "$ctrl is an rnvme controller (rnvme/ sysfs group)" test -d "/sys/class/nvme/$ctrl/rnvme"
	dev=$(wait_ns_dev "$ctrl" 30)
	if [ -n "$dev" ]; then
		pat=/run/rnvme-dkms-pattern
		head -c 1048576 /dev/urandom > "$pat"
		check "write 1 MiB through $dev" dd if="$pat" of="$dev" bs=64k oflag=direct status=none
		check "data reached the target's /dev/ram0" cmp -n 1048576 "$pat" /dev/ram0
		check "read back through $dev" bash -c "dd if=$dev bs=64k count=16 iflag=direct status=none | cmp - $pat"
	else
		not_ok "namespace block device of $ctrl"
	fi
	check "modprobe nvme_rdma (underscore) still does not load the in-tree driver" \
		bash -c 'modprobe nvme_rdma && [ ! -d /sys/module/nvme_rdma ] && [ -d /sys/module/rnvme ]'
	check "nvme disconnect" timeout 60 nvme disconnect -n "$TEST_NQN"
	check "controller gone" wait_for 30 fx_no_fabrics_ctrls
else
	not_ok "controller for $TEST_NQN" "controllers: $(ls /sys/class/nvme 2>/dev/null)"
	fx_host_disconnect_all
fi
check "modprobe -r nvme-rdma unloads rnvme (remove redirect)" \
	bash -c 'timeout 60 modprobe -r nvme-rdma && [ ! -d /sys/module/rnvme ]'
[ ! -d /sys/module/rnvme ] || timeout 60 rmmod rnvme

# ------------------------------------------------------------------ purge
t=$(now_ns)
DEBIAN_FRONTEND=noninteractive timeout 600 apt-get purge -y -q rnvme-dkms > "$log" 2>&1
rc=$?
secs=$(secs_since "$t")
tap_result "apt-get purge rnvme-dkms ($secs s)" "$rc" "$(tail -n 20 "$log")"
left=$(
	ls -d /lib/modules/*/updates/dkms/rnvme.ko* /usr/src/rnvme-* /var/lib/dkms/rnvme \
		/etc/modprobe.d/rnvme.conf 2>/dev/null
	dpkg-query -W -f='${db:Status-Abbrev}' rnvme-dkms 2>/dev/null | grep -v '^un' | grep -v '^$' | sed 's/^/dpkg: /'
)
if [ -z "$left" ]; then
	ok "purge left nothing (no module under /lib/modules/*/updates, /usr/src/rnvme-*, /var/lib/dkms/rnvme, modprobe.d file, dpkg entry)"
else
	not_ok "purge left nothing" "$left"
fi
check_fails "modinfo rnvme finds no module any more" modinfo -n rnvme

# ------------------------------------------------------------------ in-tree driver works again
# modprobe -r above also dropped the then-unused nvme-fabrics (/dev/nvme-fabrics).
modprobe nvme-fabrics || not_ok "modprobe nvme-fabrics"
out=$(timed "nvme connect -t rdma (in-tree)" nvme_connect 2>&1)
rc=$?
echo "$out" | grep '^# '
tap_result "nvme connect -t rdma after purge" "$rc" "$out"
check "served by the in-tree nvme_rdma" bash -c '[ -d /sys/module/nvme_rdma ] && [ ! -d /sys/module/rnvme ]'
ctrl=$(ctrls_for_nqn "$TEST_NQN" | head -n 1)
if [ -n "$ctrl" ]; then
	check "$ctrl live (nvme_rdma)" wait_for 30 grep -qx live "/sys/class/nvme/$ctrl/state"
	dev=$(wait_ns_dev "$ctrl" 30)
	if [ -n "$dev" ]; then
		check "in-tree nvme_rdma reads the data rnvme wrote" bash -c "dd if=$dev bs=64k count=16 iflag=direct status=none | cmp - /run/rnvme-dkms-pattern"
	else
		not_ok "namespace block device of $ctrl (nvme_rdma)"
	fi
	check "nvme disconnect (nvme_rdma)" timeout 60 nvme disconnect -n "$TEST_NQN"
	check "controller gone (nvme_rdma)" wait_for 30 fx_no_fabrics_ctrls
else
	not_ok "controller for $TEST_NQN via nvme_rdma" "controllers: $(ls /sys/class/nvme 2>/dev/null)"
	fx_host_disconnect_all
fi
[ ! -d /sys/module/nvme_rdma ] || timeout 60 rmmod nvme_rdma || echo "# rmmod nvme_rdma failed"
[ "$had_block" = 0 ] || echo "install nvme-rdma /bin/true" > "$block"

suite_end
