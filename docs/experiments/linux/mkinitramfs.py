#!/usr/bin/env python3
"""Writes a newc cpio initramfs holding one static /init and the nodes it needs
(/dev/console, mount points). Usage: mkinitramfs.py INIT OUT.cpio"""
import sys

def entry(name, mode, data=b"", rdev=(0, 0), ino=[1]):
    ino[0] += 1
    hdr = "070701" + "".join(f"{v:08x}" for v in (
        ino[0], mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name) + 1, 0))
    out = hdr.encode() + name.encode() + b"\0"
    out += b"\0" * (-len(out) % 4)
    out += data + b"\0" * (-len(data) % 4)
    return out

init, dest = sys.argv[1], sys.argv[2]
blob = b""
for d in ("dev", "proc", "sys"):
    blob += entry(d, 0o040755)
blob += entry("dev/console", 0o020600, rdev=(5, 1))
blob += entry("init", 0o100755, open(init, "rb").read())
blob += entry("TRAILER!!!", 0)
blob += b"\0" * (-len(blob) % 512)
open(dest, "wb").write(blob)
