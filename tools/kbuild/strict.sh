# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Strict mode whose failures are never silent.  Source it first thing:
#   . "$(dirname "${BASH_SOURCE[0]}")/.../tools/kbuild/strict.sh"
# set -Eeuo pipefail plus an ERR trap that prints the command that ended the
# script, its exit status and where, and STRICT_HINT (what to do).  The classic
# silent exit is  V=$(pipeline that fails)  under set -e: the trap names that
# assignment and its line.  Only a failure that ends the shell is reported
# (errexit on: not inside $(...), where bash clears -e, and not in conditions);
# a command whose failure is expected belongs in if/||/&&.
set -Eeuo pipefail
STRICT_HINT=${STRICT_HINT:-}
strict_err() {
	local rc=$? where=${BASH_SOURCE[1]:-$0} line=${BASH_LINENO[0]:-?}
	case $- in *e*) ;; *) return "$rc" ;; esac
	# once per shell: a failing function is not reported again by its callers
	[ "${strict_reported:-}" != "$BASHPID" ] || return "$rc"
	strict_reported=$BASHPID
	echo "${0##*/}: FAILED (exit $rc) at ${where##*/}:$line: $BASH_COMMAND" >&2
	[ -z "$STRICT_HINT" ] || echo "${0##*/}: what to do: $STRICT_HINT" >&2
	return "$rc"
}
trap strict_err ERR
