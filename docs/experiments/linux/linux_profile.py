#!/usr/bin/env python3
"""Subtracts two instruction profiles of tools/qemu-profile (boots of N and 2N round trips),
divides by N and attributes every kernel address to its function (symbols of the debug vmlinux)
and that function to its source file, then sums by area. User-space addresses are one line.

usage: linux_profile.py PROFILE_N PROFILE_2N N VMLINUX [TOP]"""
import bisect
import collections
import re
import subprocess
import sys


def load(path):
    counts = {}
    for line in open(path):
        if line.startswith(("fairway-qemu-profile", "end")):
            continue
        addr, n = line.split()
        counts[int(addr, 16)] = int(n)
    return counts


def text_symbols(vmlinux):
    out = subprocess.run(["nm", "-n", vmlinux], capture_output=True, text=True, check=True).stdout
    syms = sorted((int(p[0], 16), p[2]) for p in (l.split() for l in out.splitlines())
                  if len(p) == 3 and p[1] in "tTwW")
    return syms, [a for a, _ in syms]


# Areas by source path, first match wins.
AREAS = [
    (r"^kernel/sched/(fair|pelt)\.c", "fair class and PELT (kernel/sched/fair.c, pelt.c)"),
    (r"^kernel/sched/core\.c", "scheduler core: schedule, wakeup (kernel/sched/core.c)"),
    (r"^kernel/sched/psi\.c", "pressure stall accounting (kernel/sched/psi.c)"),
    (r"^kernel/sched/wait\.c", "wait queues (kernel/sched/wait.c)"),
    (r"^kernel/sched/", "scheduler, other (clock, deadline server, cpuacct)"),
    (r"^fs/pipe\.c", "pipe (fs/pipe.c)"),
    (r"^(fs/|lib/iov_iter|include/linux/fs|include/linux/uio)", "VFS, files, copies (fs/, lib/iov_iter.c)"),
    (r"^(arch/x86/entry/|kernel/entry/|arch/x86/include/asm/entry)", "system call entry and exit"),
    (r"^security/", "security hooks (LSM, AppArmor)"),
    (r"^(arch/x86/kernel/process|arch/x86/kernel/fpu|arch/x86/mm/tlb|arch/x86/include/asm/(fpu|switch))",
     "context switch (registers, FPU, mm)"),
    (r"^kernel/locking/", "locks (spin locks, mutex)"),
]


def area(path):
    for pattern, name in AREAS:
        if re.search(pattern, path):
            return name
    return "other: " + path


def main():
    a, b, n, vmlinux = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    syms, addrs = text_symbols(vmlinux)
    per_fn, start = collections.Counter(), {}
    user = 0
    for addr in set(a) | set(b):
        d = b.get(addr, 0) - a.get(addr, 0)
        if d == 0:
            continue
        if addr < 0xFFFF800000000000:
            user += d
            continue
        i = bisect.bisect_right(addrs, addr) - 1
        per_fn[syms[i][1]] += d
        start[syms[i][1]] = syms[i][0]
    names = list(per_fn)
    lines = subprocess.run(["addr2line", "-e", vmlinux] + [hex(start[f]) for f in names],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    source = {}
    for f, loc in zip(names, lines):
        path = loc.split(":")[0]
        m = re.search(r"/((kernel|fs|arch|mm|security|lib|include|block|drivers|ipc|net|virt|crypto)/.*)", path)
        source[f] = m.group(1) if m else path
    by_area = collections.Counter()
    for f, c in per_fn.items():
        by_area[area(source[f])] += c
    total = sum(per_fn.values()) + user
    print(f"{total / n:9.1f}  guest instructions per round trip, all ({n} round trips subtracted)")
    for name, c in by_area.most_common():
        if abs(c) / n >= 0.5:
            print(f"{c / n:9.1f}  {name}")
    print(f"{user / n:9.1f}  user space (the loop, libc's read and write)")
    if top:
        print(f"\ntop {top} functions:")
        for f, c in per_fn.most_common(top):
            print(f"{c / n:9.1f}  {f}  ({source[f]})")


main()
