#!/bin/bash
# Host-side packaging checks (TAP): the Debian packages build and hold what
# they should, DKMS builds rnvme.ko from the rnvme-dkms package's own source
# tree (in a private DKMS tree: the host's /var/lib/dkms is not touched), and
# the DKMS pre-flight refuses missing headers, a mismatched linux-source, a
# vendor RDMA stack, and warns about Secure Boot without an enrolled key.
# usage: tests/host/20-packaging.sh [KVER]
#   RNVME_TEST_TOOLS_DEB=build|reuse|skip  rnvme-tools .deb (C++ compile, ~4 min on
#                       2 cores): default "reuse" rebuilds it only when its
#                       sources are newer than build/debs/rnvme-tools_*.deb
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:-$("$REPO/tools/kbuild/kver.sh")}
tools_mode=${RNVME_TEST_TOOLS_DEB:-reuse}
# has LIST PATTERN: grep -q -E on a listing given as a string
has() { grep -qE "$2" <<<"$1"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
debs=${RNVME_OUT:-$REPO/build}/debs
pkgver=$(dpkg-parsechangelog -l "$REPO/tools/packaging/debian/changelog" -SVersion)
upver=${pkgver%-*}

# ------------------------------------------------------------------ build the packages
t0=$(date +%s)
if out=$("$REPO/tools/packaging/build-debs.sh" --indep 2>&1); then
	ok "rnvme-dkms .deb builds with dpkg-buildpackage ($(($(date +%s) - t0)) s)"
else
	not_ok "rnvme-dkms .deb builds with dpkg-buildpackage"
	echo "$out" | tail -n 30 | diag
fi
tools_deb=$(find "$debs" -maxdepth 1 -name "rnvme-tools_${pkgver}_*.deb" 2>/dev/null | head -n 1)
if [ "$tools_mode" = reuse ] && [ -n "$tools_deb" ] &&
	[ -z "$(find "$REPO/tools/rnvme/src" "$REPO/tools/rnvme/CMakeLists.txt" "$REPO/Documentation/rnvme.8.rst" \
		"$REPO/tools/packaging/debian" -newer "$tools_deb" -print -quit 2>/dev/null)" ]; then
	ok "rnvme-tools .deb is up to date with its sources (reused $(basename "$tools_deb"))"
elif [ "$tools_mode" = skip ]; then
	echo "# rnvme-tools .deb not built (RNVME_TEST_TOOLS_DEB=skip)"
else
	t0=$(date +%s)
	if out=$("$REPO/tools/packaging/build-debs.sh" 2>&1); then
		ok "rnvme-dkms + rnvme-tools .debs build ($(($(date +%s) - t0)) s)"
	else
		not_ok "rnvme-tools .deb builds"
		echo "$out" | tail -n 30 | diag
	fi
	tools_deb=$(find "$debs" -maxdepth 1 -name "rnvme-tools_${pkgver}_*.deb" 2>/dev/null | head -n 1)
fi

# ------------------------------------------------------------------ contents
dkms_deb=$debs/rnvme-dkms_${pkgver}_all.deb
src=usr/src/rnvme-$upver
if [ -r "$dkms_deb" ]; then
	list=$(dpkg -c "$dkms_deb" | awk '{ print $1, $6 }')
	miss=""
	for f in dkms.conf Makefile Kbuild drivers/rnvme/main.c include/rnvme/compat.h \
		tools/kbuild/prepare.sh tools/kbuild/ksrc.sh tools/kbuild/check-layout.sh tools/kbuild/probe.sh \
		tools/kbuild/shadow.sh; do
		has "$list" " \./$src/$f\$" || miss="$miss $f"
	done
	if [ -z "$miss" ]; then ok "rnvme-dkms holds the module source in /$src"; else
		not_ok "rnvme-dkms holds the module source in /$src"; echo "missing:$miss" | diag; fi
	if has "$list" "^-rwxr-xr-x \./$src/tools/packaging/dkms-preflight.sh\$" &&
		has "$list" "^-rwxr-xr-x \./$src/tools/kbuild/prepare.sh\$" &&
		has "$list" "^-rwxr-xr-x \./$src/tools/kbuild/ksrc.sh\$"; then
		ok "build scripts are executable in the package"
	else
		not_ok "build scripts are executable in the package"
		printf '%s\n' "$list" | grep -E 'packaging|kbuild' | diag
	fi
	if has "$list" '\./etc/modprobe\.d/rnvme\.conf$' &&
		dpkg-deb -f "$dkms_deb" Package >/dev/null &&
		dpkg-deb --ctrl-tarfile "$dkms_deb" | tar -xOf - ./conffiles | grep -x /etc/modprobe.d/rnvme.conf >/dev/null; then
		ok "/etc/modprobe.d/rnvme.conf is shipped as a conffile (removed on purge)"
	else
		not_ok "/etc/modprobe.d/rnvme.conf is shipped as a conffile"
	fi
	if has "$list" '\.ko$|/build/'; then
		not_ok "no build products in rnvme-dkms"
		printf '%s\n' "$list" | grep -E '\.ko$|/build/' | diag
	else
		ok "no build products in rnvme-dkms"
	fi
	mkdir -p "$work/ctrl"
	dpkg-deb -e "$dkms_deb" "$work/ctrl"
	# shellcheck disable=SC2016 # literal text of the generated prerm
	if grep -q 'common.postinst rnvme 0.1\|DKMS_NAME=rnvme' "$work/ctrl/postinst" &&
		grep -qF 'dkms remove -m $DKMS_NAME -v $DKMS_VERSION --all' "$work/ctrl/prerm"; then
		ok "maintainer scripts from dh_dkms: postinst builds+installs, prerm runs dkms remove --all"
	else
		not_ok "dh_dkms maintainer scripts"
		cat "$work/ctrl/postinst" "$work/ctrl/prerm" | diag
	fi
	deps=$(dpkg-deb -f "$dkms_deb" Depends)
	if grep -q 'dkms' <<<"$deps" && grep -q 'pahole' <<<"$deps"; then
		ok "rnvme-dkms depends on dkms and pahole ($deps)"
	else
		not_ok "rnvme-dkms Depends" ; echo "$deps" | diag
	fi
	mkdir -p "$work/root"
	dpkg-deb -x "$dkms_deb" "$work/root"
	v=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$work/root/$src/dkms.conf")
	if [ "$v" = "$upver" ]; then ok "dkms.conf PACKAGE_VERSION $v matches the package"; else
		not_ok "dkms.conf PACKAGE_VERSION ($v) matches the package ($upver)"; fi
else
	not_ok "rnvme-dkms .deb exists ($dkms_deb)"
fi
if [ -n "$tools_deb" ] && [ -r "$tools_deb" ]; then
	tl=$(dpkg -c "$tools_deb" | awk '{ print $1, $6 }')
	if has "$tl" '^-rwxr-xr-x \./usr/sbin/rnvme$'; then ok "rnvme-tools ships /usr/sbin/rnvme"; else
		not_ok "rnvme-tools ships /usr/sbin/rnvme"; printf '%s\n' "$tl" | diag; fi
	if [ ! -f "$REPO/Documentation/rnvme.8.rst" ] || has "$tl" '\./usr/share/man/man8/rnvme\.8\.gz$'; then
		ok "rnvme-tools ships the rnvme(8) man page"
	else
		not_ok "rnvme-tools ships the rnvme(8) man page"
	fi
	for u in lib/systemd/system/rnvme-autoconnect.service 'lib/systemd/system/rnvme-connect@.service' \
		lib/udev/rules.d/71-rnvme-autoconnect.rules; do
		if has "$tl" "^-rw-r--r-- \./$u\$"; then ok "rnvme-tools ships /$u"; else
			not_ok "rnvme-tools ships /$u"; fi
	done
	# enabled on install, never started by it (dh_installsystemd --no-start)
	postinst=$(dpkg-deb --ctrl-tarfile "$tools_deb" | tar -xO ./postinst 2>/dev/null)
	if grep -q 'deb-systemd-helper.*enable.*rnvme-autoconnect.service' <<<"$postinst" &&
		! grep -q 'deb-systemd-invoke.*start' <<<"$postinst"; then
		ok "postinst enables rnvme-autoconnect.service and starts nothing"
	else
		not_ok "postinst enables rnvme-autoconnect.service and starts nothing" \
			"postinst: $(printf '%s\n' "$postinst" | head -n 40)"
	fi
	mkdir -p "$work/tools"
	dpkg-deb -x "$tools_deb" "$work/tools"
	if "$work/tools/usr/sbin/rnvme" --help >/dev/null 2>&1; then ok "packaged rnvme --help runs"; else
		not_ok "packaged rnvme --help runs"; fi
fi

# ------------------------------------------------------------------ dkms build
# From the package's own /usr/src tree, in a private DKMS tree, with a
# throw-away signing key (dkms would otherwise create /var/lib/dkms/mok.*).
if [ -d "$work/root/$src" ]; then
	before=$(ls -la /var/lib/dkms 2>/dev/null)
	tree=$work/dkms
	mkdir -p "$tree"
	dk() {
		mok_signing_key=$work/mok.key mok_certificate=$work/mok.pub \
			dkms --dkmstree "$tree" --sourcetree "$work/root/usr/src" "$@"
	}
	t0=$(date +%s)
	if out=$(dk add -m rnvme -v "$upver" 2>&1 && dk build -m rnvme -v "$upver" -k "$kver" 2>&1); then
		secs=$(($(date +%s) - t0))
		# a kernel built with module compression gets rnvme.ko.xz (or .zst)
		ko=
		for f in "$tree/rnvme/$upver/$kver/$(uname -m)/module/rnvme.ko"{,.xz,.zst}; do
			[ -f "$f" ] && ko=$f && break
		done
		if [ -n "$ko" ] && [ "$(modinfo -F vermagic "$ko" | awk '{ print $1 }')" = "$kver" ]; then
			ok "dkms build for $kver from the packaged source ($secs s): $(basename "$ko") vermagic $kver"
		else
			not_ok "dkms build produced rnvme.ko for $kver"; find "$tree/rnvme/$upver" 2>&1 | diag
		fi
		if grep -q 'LAYOUT .* match' "$tree/rnvme/$upver/$kver/$(uname -m)/log/make.log" 2>/dev/null; then
			ok "the DKMS build ran the nvme-core layout check: $(grep -o '[0-9]* nvme-core structs match' "$tree/rnvme/$upver/$kver/$(uname -m)/log/make.log")"
		else
			not_ok "the DKMS build ran the nvme-core layout check"
		fi
		extracts=$(grep -c 'EXTRACT' "$tree/rnvme/$upver/$kver/$(uname -m)/log/make.log" 2>/dev/null)
		if [ "${extracts:-0}" = 0 ]; then
			ok "make module reused the headers the pre-flight extracted (no second tarball decode)"
		else
			not_ok "make module reused the pre-flight's headers"
		fi
		# dkms 3.0 (Debian 12) shows PRE_BUILD's output; 3.2 (Debian 13)
		# only "Running the pre_build script.... done.", so there the
		# verdict is the MAKE step's line in make.log
		mlog=$tree/rnvme/$upver/$kver/$(uname -m)/log/make.log
		if grep -q "pre-flight for $kver passed" <<<"$out"; then
			ok "pre-flight ran and passed"
		elif grep -q "pre-flight for $kver passed; building" "$mlog" 2>/dev/null; then
			ok "pre-flight ran and passed (its verdict in DKMS's make.log: this dkms does not show PRE_BUILD's output)"
		else
			not_ok "pre-flight ran and passed"; echo "$out" | tail -n 20 | diag
		fi
		# A binaries-only DKMS tarball of this build: suite 10-dkms loads it in
		# the guest instead of compiling under TCG (see the comment there).
		bin=$debs/rnvme-$upver-$kver.dkms-binaries.tar.gz
		if dk mktarball -m rnvme -v "$upver" -k "$kver" --binaries-only --archive "$bin" >/dev/null 2>&1 &&
			[ -s "$bin" ]; then
			ok "binaries-only DKMS tarball for the VM suite: build/debs/$(basename "$bin")"
		else
			not_ok "dkms mktarball --binaries-only"
		fi
		if dk remove -m rnvme -v "$upver" --all >/dev/null 2>&1 && [ ! -e "$tree/rnvme" ]; then
			ok "dkms remove --all leaves nothing in the DKMS tree"
		else
			not_ok "dkms remove --all leaves nothing in the DKMS tree"; find "$tree" | head | diag
		fi
	else
		not_ok "dkms build for $kver from the packaged source"
		echo "$out" | tail -n 30 | diag
		cat "$tree"/rnvme/*/build/make.log 2>/dev/null | tail -n 30 | diag
	fi
	if [ "$(ls -la /var/lib/dkms 2>/dev/null)" = "$before" ] && [ ! -e /var/lib/dkms/rnvme ]; then
		ok "host /var/lib/dkms untouched"
	else
		not_ok "host /var/lib/dkms untouched"; find /var/lib/dkms -maxdepth 1 | diag
	fi
fi

# ------------------------------------------------------------------ pre-flight refusals
pf=$REPO/tools/packaging/dkms-preflight.sh
mkdir -p "$work/pf" && cd "$work/pf" || exit 1
if out=$("$pf" 0.0.0-nothere-amd64 2>&1); then
	not_ok "pre-flight refuses a kernel without headers"
elif grep -q 'apt-get install linux-headers-0.0.0-nothere-amd64' <<<"$out"; then
	ok "pre-flight refuses a kernel without headers and names the package"
else
	not_ok "pre-flight names the headers package"; echo "$out" | diag
fi

# A kernel build tree claiming 6.1.250 (no such linux-source installed).
fake=$work/fake-kdir
make_fake_kdir "$fake"
printf '0x11111111\tib_register_client\tdrivers/infiniband/core/ib_core\tEXPORT_SYMBOL\t\n' > "$fake/Module.symvers"
if out=$(RNVME_PREFLIGHT_KDIR=$fake RNVME_PREFLIGHT_MODDIR=$work/empty "$pf" fakekver 2>&1); then
	not_ok "pre-flight refuses a linux-source that does not match the kernel"
elif grep -q 'apt-get install linux-source-6.1=6.1.250-1' <<<"$out"; then
	ok "pre-flight refuses a mismatched linux-source and gives the apt-get line"
else
	not_ok "pre-flight gives the linux-source apt-get line"; echo "$out" | diag
fi
if out=$("$pf" --verdict fakekver 2>&1); then
	not_ok "the MAKE step stops after a refused pre-flight"
elif grep -q 'refused kernel fakekver' <<<"$out"; then
	ok "the MAKE step (--verdict) stops after a refused pre-flight (DKMS ignores PRE_BUILD's status)"
else
	not_ok "--verdict explains the refusal"; echo "$out" | diag
fi

# Vendor RDMA stack: an ib_core.ko under updates/ that is not the in-tree one,
# and an OFED Module.symvers with other CRCs.
realcore=$(modinfo -k "$kver" -n ib_core 2>/dev/null)
realcm=$(modinfo -k "$kver" -n rdma_cm 2>/dev/null)
if [ -n "$realcore" ] && [ -n "$realcm" ]; then
	md=$work/moddir
	mkdir -p "$md/kernel/drivers/infiniband/core" "$md/updates/mlnx-ofa_kernel"
	ln -s "$realcore" "$md/kernel/drivers/infiniband/core/$(basename "$realcore")"
	ext=${realcm#*.ko}
	cp "$realcm" "$md/updates/mlnx-ofa_kernel/ib_core.ko$ext"	# another module: other srcversion
	ofed=$work/ofa_kernel/x86_64/fakekver
	mkdir -p "$ofed"
	printf '0x22222222\tib_register_client\tdrivers/infiniband/core/ib_core\tEXPORT_SYMBOL\t\n' > "$ofed/Module.symvers"
	out=$(RNVME_PREFLIGHT_KDIR=$fake RNVME_PREFLIGHT_MODDIR=$md RNVME_PREFLIGHT_OFED=$work/ofa_kernel \
		"$pf" fakekver 2>&1)
	if grep -q 'vendor RDMA stack' <<<"$out" && grep -q 'updates/mlnx-ofa_kernel/ib_core.ko' <<<"$out" &&
		grep -q 'ib_register_client: kernel 0x11111111, 0x22222222' <<<"$out"; then
		ok "pre-flight refuses a vendor RDMA stack (foreign ib_core.ko, OFED Module.symvers CRCs) with an explanation"
	else
		not_ok "pre-flight refuses a vendor RDMA stack"; echo "$out" | diag
	fi
	rm -f "$md/updates/mlnx-ofa_kernel/ib_core.ko$ext"
	out=$(RNVME_PREFLIGHT_KDIR=$fake RNVME_PREFLIGHT_MODDIR=$md RNVME_PREFLIGHT_OFED=$work/none "$pf" fakekver 2>&1)
	if grep -q 'vendor RDMA' <<<"$out"; then
		not_ok "no vendor-stack complaint for the in-tree stack"; echo "$out" | diag
	else
		ok "no vendor-stack complaint for the in-tree stack"
	fi
	# no OFED tree (the usual case): nothing to search, nothing failed
	if grep -q 'FAILED' <<<"$out"; then
		not_ok "pre-flight without an OFED tree says FAILED only when something failed"
		grep 'FAILED' <<<"$out" | diag
	else
		ok "pre-flight without an OFED tree prints no FAILED"
	fi
else
	not_ok "ib_core/rdma_cm modules for $kver found (modinfo -k $kver)"
fi

# Secure Boot on, no DKMS key: a warning that says how to enroll.
mkdir -p "$work/bin"
# shellcheck disable=SC2016 # a script body, expanded by the fake mokutil
printf '#!/bin/sh\ncase "$1" in --sb-state) echo "SecureBoot enabled" ;; --test-key) echo "$2 is not enrolled" ;; esac\n' \
	> "$work/bin/mokutil"
chmod +x "$work/bin/mokutil"
out=$(PATH=$work/bin:$PATH RNVME_MOK_PUB=$work/no-such-mok.pub RNVME_PREFLIGHT_KDIR=$fake \
	RNVME_PREFLIGHT_MODDIR=$work/empty "$pf" fakekver 2>&1)
if grep -q 'Secure Boot is enabled' <<<"$out" && grep -q "mokutil --import $work/no-such-mok.pub" <<<"$out"; then
	ok "pre-flight warns about Secure Boot without a DKMS key and shows mokutil --import"
else
	not_ok "Secure Boot warning"; echo "$out" | diag
fi
touch "$work/mok.pub.enrolled-not"
out=$(PATH=$work/bin:$PATH RNVME_MOK_PUB=$work/mok.pub.enrolled-not RNVME_PREFLIGHT_KDIR=$fake \
	RNVME_PREFLIGHT_MODDIR=$work/empty "$pf" fakekver 2>&1)
if grep -q 'is not enrolled' <<<"$out"; then
	ok "pre-flight warns when the DKMS key exists but is not enrolled"
else
	not_ok "not-enrolled key warning"; echo "$out" | diag
fi
cd "$REPO" || exit 1

echo "1..$n"
[ "$failed" = 0 ]
