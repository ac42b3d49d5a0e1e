#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sends hostile requests to a vmmtrace control socket; each must get an
error reply (proto/control.h) rather than silence or a crash.

usage: control_raw.py SOCKET garbage|truncated|oversized|badtype|badpattern
Prints the reply status and text; exit 0 when an error reply arrived."""
import socket
import struct
import sys
import time

MAGIC, VERSION, REPLY = 0x4C544356, 1, 0x80


def reply(sock):
    sock.settimeout(15)
    hdr = b""
    while len(hdr) < 16:
        chunk = sock.recv(16 - len(hdr))
        if not chunk:
            return None
        hdr += chunk
    magic, version, typ, length, status = struct.unpack("<IHHIi", hdr)
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            break
        body += chunk
    return typ, status, body.decode(errors="replace")


def main():
    path, kind = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    if kind == "garbage":
        s.sendall(b"GET / HTTP/1.0\r\n\r\n" + bytes(range(256)))
    elif kind == "truncated":
        s.sendall(struct.pack("<IHHIi", MAGIC, VERSION, 1, 100, 0) + b"vfs_")
        s.shutdown(socket.SHUT_WR)
    elif kind == "oversized":
        payload = b"a" * (1 << 20)
        s.sendall(struct.pack("<IHHIi", MAGIC, VERSION, 1, len(payload), 0))
        try:
            s.sendall(payload)
        except OSError:
            pass  # the server may close once it has replied
    elif kind == "badtype":
        s.sendall(struct.pack("<IHHIi", MAGIC, VERSION, 99, 0, 0))
    elif kind == "badpattern":
        p = b"vfs_\x01read\0"
        s.sendall(struct.pack("<IHHIi", MAGIC, VERSION, 1, len(p), 0) + p)
    r = reply(s)
    if r is None:
        print("no reply")
        return 1
    typ, status, text = r
    print(f"type {typ:#x} status {status}: {text}")
    return 0 if typ == REPLY and status < 0 and text else 1


if __name__ == "__main__":
    sys.exit(main())
