#!/bin/bash
# Set-up path tests (TAP): tests/setup-host.sh and tests/setup-612.sh run
# against a fake apt world (stub dpkg-query, apt-get, apt-cache, depmod and id
# first on PATH, files under a scratch SETUP_SYSROOT): nothing installed, all
# installed, candidate missing, apt-get update/install failing, no ABI for the
# candidate, not root.  Each must end in the right action (the pinned packages
# in ONE apt-get install, KVER= last) or a clear message on stderr and a
# non-zero exit, never a silent exit.  Also: every errexit script in tests/ and
# tools/ gets its strict mode from tools/kbuild/strict.sh (failures named).
# usage: tests/host/05-setup.sh [KVER]   (KVER is ignored)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stub=$work/bin
mkdir -p "$stub"

V61=6.1.192-2 NN=56 V612=6.12.117-1~deb12u1 K612=6.12.117+deb12-amd64 K612RT=6.12.117+deb12-rt-amd64

# ---------------------------------------------------------------- fake apt
# State in $FAKE: installed (lines "pkg version"), candidates ("pkg version"),
# apt.log (every apt-get call), fail-update / fail-install (flag files).
cat > "$stub/dpkg-query" <<'EOF'
#!/bin/bash
pkg=${!#}
v=$(awk -v p="$pkg" '$1 == p { print $2 }' "$FAKE/installed" 2>/dev/null)
if [ -z "$v" ]; then echo "dpkg-query: no packages found matching $pkg" >&2; exit 1; fi
case "$*" in *Status-Abbrev*) echo "ii  $v" ;; *) echo "$v" ;; esac
EOF
cat > "$stub/apt-cache" <<'EOF'
#!/bin/bash
cand() { awk -v p="$1" '$1 == p { print $2 }' "$FAKE/candidates" 2>/dev/null; }
case "$1" in
policy)
	v=$(cand "$2")
	printf '%s:\n  Installed: (none)\n  Candidate: %s\n' "$2" "${v:-(none)}" ;;
show)
	p=${2%%=*} v=${2#*=}
	[ "$(cand "$p")" = "$v" ] || { echo "E: no such version" >&2; exit 100; }
	[ -f "$FAKE/no-abi" ] && exit 0
	echo "Package: $p"
	echo "Depends: linux-image-6.1.0-$FAKE_NN-amd64 (= $v)" ;;
search) [ -f "$FAKE/no-abi" ] || echo "linux-image-6.1.0-$FAKE_NN-amd64 - Linux 6.1" ;;
madison)
	# newest first; older-61: versions below linux-source-6.1's candidate
	row() { echo " $2 | $1 | http://deb.debian.org bookworm-security/main"; }
	case "$2" in
	linux-source-6.1)
		for v in $(cand linux-source-6.1) $(cat "$FAKE/older-61" 2>/dev/null); do row "$v" "$2"; done ;;
	linux-source-6.12) v=$(cand linux-source-6.12); [ -z "$v" ] || row "$v" "$2" ;;
	linux-image-6.1.0-*) [ -f "$FAKE/no-abi" ] || row "$(cand linux-image-amd64)" "$2" ;;
	linux-*-6.12.*)
		v=$(cand linux-source-6.12)
		if [ -n "$v" ] && { [ ! -f "$FAKE/no-rt" ] || [[ $2 != *-rt-* ]]; }; then row "$v" "$2"; fi ;;
	esac ;;
*) exit 0 ;;
esac
EOF
cat > "$stub/apt-get" <<'EOF'
#!/bin/bash
echo "apt-get $*" >> "$FAKE/apt.log"
case " $* " in
*" update "*) [ -f "$FAKE/fail-update" ] && { echo "E: fake: network unreachable" >&2; exit 100; }; exit 0 ;;
*" install "*)
	[ -f "$FAKE/fail-install" ] && { echo "E: fake: unable to fetch" >&2; exit 100; }
	for a in "$@"; do
		case "$a" in -*|install) continue ;; esac
		p=${a%%=*} v=${a#*=}
		[ "$v" != "$a" ] || v=1.0
		echo "$p $v" >> "$FAKE/installed"
		case "$p" in
		linux-image-*) k=${p#linux-image-}; mkdir -p "$SETUP_SYSROOT/boot" "$SETUP_SYSROOT/lib/modules/$k/kernel"
			touch "$SETUP_SYSROOT/boot/vmlinuz-$k" ;;
		linux-headers-*) mkdir -p "$SETUP_SYSROOT/lib/modules/${p#linux-headers-}/build" ;;
		linux-source-*) mkdir -p "$SETUP_SYSROOT/usr/src"; touch "$SETUP_SYSROOT/usr/src/$p.tar.xz" ;;
		esac
	done ;;
esac
exit 0
EOF
cat > "$stub/depmod" <<'EOF'
#!/bin/bash
[ "$1" = -b ] && { root=$2; shift 2; }
mkdir -p "${root:-}/lib/modules/$1" && echo "fake" > "${root:-}/lib/modules/$1/modules.dep"
EOF
cat > "$stub/id" <<'EOF'
#!/bin/bash
[ -f "$FAKE/not-root" ] && [ "${1:-}" = -u ] && { echo 1000; exit 0; }
exec /usr/bin/id "$@"
EOF
chmod +x "$stub"/*

# fresh WORLD: a new fake machine with nothing installed and the usual candidates
fresh() {
	FAKE=$work/world.$n
	rm -rf "$FAKE"
	mkdir -p "$FAKE/root"
	printf 'linux-source-6.1 %s\nlinux-image-amd64 %s\nlinux-source-6.12 %s\n' "$V61" "$V61" "$V612" > "$FAKE/candidates"
	: > "$FAKE/installed"
	: > "$FAKE/apt.log"
}
# run SCRIPT ARGS...: out/err/rc of the script in the fake world
run() {
	local rc=0
	PATH="$stub:$PATH" FAKE=$FAKE FAKE_NN=$NN SETUP_SYSROOT=$FAKE/root \
		timeout 60 bash "$REPO/$1" "${@:2}" > "$FAKE/out" 2> "$FAKE/err" || rc=$?
	echo "$rc"
}
show() { { echo "exit $1; stdout:"; tail -n 8 "$FAKE/out"; echo "stderr:"; tail -n 8 "$FAKE/err"; echo "apt-get calls:"; cat "$FAKE/apt.log"; } | diag; }
# refused RC WHAT PATTERN: non-zero exit, PATTERN and a "what to do" line on stderr
refused() {
	if [ "$1" != 0 ] && grep -qE "$3" "$FAKE/err" && grep -q 'what to do:' "$FAKE/err"; then
		ok "$2: exit $1 with '$(grep -m1 -E "$3" "$FAKE/err" | cut -c1-90)'"
	else
		not_ok "$2: expected a non-zero exit and /$3/ + 'what to do' on stderr"
		show "$1"
	fi
}

# ---------------------------------------------------------------- setup-host.sh
fresh
rc=$(run tests/setup-host.sh)
npkgs=$(grep -c 'apt-get .*install' "$FAKE/apt.log")
line=$(grep 'apt-get .*install' "$FAKE/apt.log" | head -n 1)
if [ "$rc" = 0 ] && [ "$npkgs" = 1 ] && [ "$(tail -n 1 "$FAKE/out")" = "KVER=6.1.0-$NN-amd64" ] &&
	[[ $line == *" linux-image-6.1.0-$NN-amd64=$V61 "* ]] && [[ $line == *" linux-headers-6.1.0-$NN-amd64=$V61 "* ]] &&
	[[ $line == *" linux-source-6.1=$V61 "* ]] && [[ $line == *" qemu-system-x86 "* ]] && [[ $line == *" flex "* ]] &&
	grep -q '^== installing [0-9]* packages' "$FAKE/out" && grep -q '^== apt-get update' "$FAKE/out"; then
	ok "nothing installed: apt-get update, one apt-get install of the pinned 6.1 trio + $(wc -w <<< "${line#*--no-install-recommends}") packages, KVER=6.1.0-$NN-amd64 last"
else
	not_ok "nothing installed: one apt-get install with the pinned kernel packages, then KVER="
	show "$rc"
fi

# second run on the same world: everything is there, apt is not touched
: > "$FAKE/apt.log"
rc=$(run tests/setup-host.sh)
if [ "$rc" = 0 ] && [ ! -s "$FAKE/apt.log" ] && grep -q 'already installed' "$FAKE/out" &&
	[ "$(tail -n 1 "$FAKE/out")" = "KVER=6.1.0-$NN-amd64" ]; then
	ok "everything installed: no apt-get call, KVER= printed"
else
	not_ok "everything installed: no apt-get call, KVER= printed"
	show "$rc"
fi

# --with-612: both kernels in one transaction
fresh
rc=$(run tests/setup-host.sh --with-612)
line=$(grep 'apt-get .*install' "$FAKE/apt.log" | head -n 1)
if [ "$rc" = 0 ] && [ "$(grep -c 'apt-get .*install' "$FAKE/apt.log")" = 1 ] &&
	[[ $line == *" linux-image-$K612=$V612 "* ]] && [[ $line == *" linux-source-6.12=$V612 "* ]] &&
	[[ $line == *" linux-image-6.1.0-$NN-amd64=$V61 "* ]] && [[ $line == *" linux-image-$K612RT=$V612 "* ]] &&
	[[ $line == *" linux-headers-$K612RT=$V612"* ]] &&
	[ "$(tail -n 1 "$FAKE/out")" = "KVER612RT=$K612RT" ] && grep -qx "KVER612=$K612" "$FAKE/out" &&
	grep -qx "KVER=6.1.0-$NN-amd64" "$FAKE/out"; then
	ok "--with-612, nothing installed: 6.1, 6.12 and 6.12-rt kernels in one apt-get install, KVER=, KVER612= and KVER612RT= printed"
else
	not_ok "--with-612, nothing installed: one transaction, KVER612RT= last"
	show "$rc"
fi

fresh
sed -i '/^linux-source-6.1 /d' "$FAKE/candidates"
refused "$(run tests/setup-host.sh)" "linux-source-6.1 has no candidate" 'no installation candidate for linux-source-6.1'

fresh
sed -i '/^linux-source-6.12 /d' "$FAKE/candidates"
refused "$(run tests/setup-host.sh --with-612)" "--with-612, linux-source-6.12 has no candidate" \
	'no installation candidate for linux-source-6.12'

fresh
touch "$FAKE/fail-update"
refused "$(run tests/setup-host.sh)" "apt-get update fails" 'apt-get update failed'

fresh
touch "$FAKE/fail-install"
refused "$(run tests/setup-host.sh)" "apt-get install fails" 'apt-get install of [0-9]+ packages failed'

fresh
touch "$FAKE/no-abi"
refused "$(run tests/setup-host.sh)" "no linux-image-6.1.0-NN-amd64 at any linux-source-6.1 version" \
	"no linux-image-6.1.0-NN-amd64 at any version of linux-source-6.1 \\(candidate $V61\\)"

# the mirror has a newer linux-source-6.1 than any 6.1 image: the newest
# version that has an image is taken, all three at it
fresh
sed -i "s/^linux-source-6.1 .*/linux-source-6.1 6.1.192-3/" "$FAKE/candidates"
echo "$V61" > "$FAKE/older-61"
rc=$(run tests/setup-host.sh)
line=$(grep 'apt-get .*install' "$FAKE/apt.log" | head -n 1)
if [ "$rc" = 0 ] && [[ $line == *" linux-source-6.1=$V61 "* ]] && [[ $line == *" linux-image-6.1.0-$NN-amd64=$V61 "* ]] &&
	grep -q 'linux-source-6.1 6.1.192-3 has no amd64 image yet' "$FAKE/out" &&
	[ "$(tail -n 1 "$FAKE/out")" = "KVER=6.1.0-$NN-amd64" ]; then
	ok "linux-source-6.1 6.1.192-3 without images: $V61 taken for source, image and headers, and said"
else
	not_ok "linux-source-6.1 newer than its images: the newest version with an image is taken"
	show "$rc"
fi

fresh
touch "$FAKE/no-rt"
refused "$(run tests/setup-host.sh --with-612)" "--with-612, no PREEMPT_RT image at linux-source-6.12's version" \
	'no installation candidate for linux-source-6.12 \(at a version that also has'

fresh
touch "$FAKE/not-root"
refused "$(run tests/setup-host.sh)" "not root" 'must run as root'

fresh
rc=$(run tests/setup-host.sh --bogus)
if [ "$rc" != 0 ] && grep -q "unknown option '--bogus'" "$FAKE/err"; then
	ok "unknown option refused by name"
else
	not_ok "unknown option refused by name"; show "$rc"
fi

# ---------------------------------------------------------------- setup-612.sh
fresh
rc=$(run tests/setup-612.sh)
line=$(grep 'apt-get .*install' "$FAKE/apt.log" | head -n 1)
if [ "$rc" = 0 ] && [[ $line == *" linux-image-$K612=$V612 linux-headers-$K612=$V612 linux-source-6.12=$V612 linux-image-$K612RT=$V612 linux-headers-$K612RT=$V612" ]] &&
	grep -qx "KVER612=$K612" "$FAKE/out" && [ "$(tail -n 1 "$FAKE/out")" = "KVER612RT=$K612RT" ]; then
	ok "setup-612, nothing installed: installs image/headers/source and the -rt image/headers at $V612, KVER612RT= last"
else
	not_ok "setup-612, nothing installed: installs the 6.12 trio and the -rt pair, KVER612RT= last"
	show "$rc"
fi
: > "$FAKE/apt.log"
rc=$(run tests/setup-612.sh)
if [ "$rc" = 0 ] && [ ! -s "$FAKE/apt.log" ] && [ "$(tail -n 1 "$FAKE/out")" = "KVER612RT=$K612RT" ]; then
	ok "setup-612, installed: no apt-get call"
else
	not_ok "setup-612, installed: no apt-get call"; show "$rc"
fi

fresh
sed -i '/^linux-source-6.12 /d' "$FAKE/candidates"
refused "$(run tests/setup-612.sh)" "setup-612, no candidate" 'no installation candidate for linux-source-6.12'

fresh
touch "$FAKE/fail-install"
refused "$(run tests/setup-612.sh)" "setup-612, apt-get install fails" 'apt-get install of 5 packages failed'

# The hook's check: dpkg-query knows nothing, apt-get/apt-cache answer nothing.
for s in tests/setup-host.sh tests/setup-612.sh; do
	fresh
	: > "$FAKE/candidates"
	rc=$(run "$s")
	if [ "$rc" != 0 ] && [ -s "$FAKE/err" ]; then
		ok "$s with apt answering nothing: exit $rc with a message ($(head -n 1 "$FAKE/err" | cut -c1-70))"
	else
		not_ok "$s with apt answering nothing: silent or successful exit"; show "$rc"
	fi
done

# ---------------------------------------------------------------- strict mode audit
# Every bash script that turns on errexit does it through strict.sh, so a
# failure under set -e is always named (the trap of the original bug).
bad=$(cd "$REPO" && find tests tools -name '*.sh' -type f | sort | while read -r f; do
	[ "$f" = tools/kbuild/strict.sh ] && continue
	head -n 1 "$f" | grep bash >/dev/null || continue
	if grep -qE '^[[:space:]]*set -[a-zA-Z]*e' "$f"; then echo "$f"; fi
done)
if [ -z "$bad" ]; then
	ok "errexit scripts in tests/ and tools/ take their strict mode from tools/kbuild/strict.sh"
else
	not_ok "scripts with a bare set -e (use tools/kbuild/strict.sh):"; echo "$bad" | diag
fi
# A producer piped into grep -q: grep leaves at the first match, the
# producer's next write gets SIGPIPE, and under pipefail the pipeline then
# fails although it matched (20-packaging's "has" failed 6 times in 2000 on
# a 2.5 KiB string, and failed make check once).  grep -q reads a here-string
# instead, or a full grep writes to /dev/null.
bad=$(cd "$REPO" && grep -rnE '\|[[:space:]]*grep -[a-zA-Z]*q' --include='*.sh' tests tools || true)
if [ -z "$bad" ]; then
	ok "no pipeline into grep -q in tests/ and tools/ scripts (SIGPIPE under pipefail)"
else
	not_ok "pipelines into grep -q in scripts: a match can fail under pipefail (use grep -q PATTERN <<<\"\$x\" or grep >/dev/null)"
	echo "$bad" | diag
fi
out=$(printf '. %q\nf() { false | cat; }\nx=$(f)\necho reached\n' "$REPO/tools/kbuild/strict.sh" > "$work/t.sh"
	STRICT_HINT="do this" bash "$work/t.sh" 2>&1)
rc=$?
if [ "$rc" != 0 ] && [[ $out == *"FAILED (exit 1) at t.sh:3: x=\$(f)"* ]] && [[ $out == *"what to do: do this"* ]] &&
	[[ $out != *reached* ]]; then
	ok "strict.sh names a failing \$(...) assignment, its line and the hint"
else
	not_ok "strict.sh names a failing \$(...) assignment"; echo "rc=$rc $out" | diag
fi

echo "1..$n"
[ "$failed" = 0 ]
