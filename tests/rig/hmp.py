#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send one command to a QEMU human monitor on a UNIX socket; print its reply.

usage: hmp.py SOCKET COMMAND...
Exit status 0 when the monitor answered, 1 when it could not be reached, 3 when
the reply looks like an error (QEMU's HMP replies with text, not a status).
"""
import socket
import sys
import time

PROMPT = b"(qemu) "


def read_until_prompt(sock, deadline):
    buf = b""
    while not buf.endswith(PROMPT):
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("monitor closed the connection")
        buf += chunk
    return buf[: -len(PROMPT)]


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, command = sys.argv[1], " ".join(sys.argv[2:])
    deadline = time.monotonic() + 20
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(path)
            read_until_prompt(sock, deadline)  # banner
            sock.sendall(command.encode() + b"\n")
            reply = read_until_prompt(sock, deadline).decode(errors="replace")
    except (OSError, ConnectionError) as err:
        print(f"hmp: {path}: {err}", file=sys.stderr)
        return 1
    # The monitor echoes the command line (with terminal escapes) first.
    lines = [ln.strip("\r") for ln in reply.split("\n")]
    lines = [ln for ln in lines[1:] if ln.strip()]
    text = "\n".join(lines)
    if text:
        print(text)
    bad = ("Error", "error:", "unknown command", "Device '", "not found")
    return 3 if any(b in text for b in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
