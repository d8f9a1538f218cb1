#!/usr/bin/env python3
"""The table of tools/lock-holds/run.sh: per lock class, the kernel's holds under -icount
(`@fw lockhold`, summed over the cells), the simulator's clock advance inside the same class
(`@fw hwlock hold_ns` less its 1 ns per hold), and the difference: the class's critical
section that the simulator's model adds (sim/src/hw/profile.rs: ICOUNT_HOLD_NS)."""
import glob
import os
import re
import sys

CLASSES = ["pi_lock", "balance_state", "runqueue", "hung_tasks", "registry", "wake_list", "sleepers", "wait_queue", "pipe", "idle_wait_slot", "wakee", "blocked_at", "task_stack", "task_entry", "trace_names", "semaphore_count", "held_ipis", "workload", "trace_ring", "memory", "console", "heap"]


def sums(pattern, kind, count_key, ns_key, out_dir):
    total = {c: [0, 0] for c in CLASSES}
    for path in sorted(glob.glob(os.path.join(out_dir, pattern))):
        for line in open(path, errors="replace"):
            if not line.startswith("@fw " + kind + " "):
                continue
            f = dict(re.findall(r"(\w+)=(\S+)", line))
            if f["class"] in total:
                total[f["class"]][0] += int(f[count_key])
                total[f["class"]][1] += int(f[ns_key])
    return total


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "target/lock-holds"
    kernel = sums("qemu-*.log", "lockhold", "holds", "ns", out_dir)
    sim = sums("sim-*.log", "hwlock", "acquires", "hold_ns", out_dir)
    print("| class | kernel holds | kernel mean (instructions) | sim holds | sim inside (ns) | hold_ns |")
    print("|---|---|---|---|---|---|")
    holds = []
    for c in CLASSES:
        kn, kns = kernel[c]
        sn, sns = sim[c]
        kmean = kns / kn if kn else 0.0
        inside = (sns - sn) / sn if sn else 0.0
        hold = max(0, round(kmean - inside)) if kn else 0
        holds.append(hold)
        print(f"| {c} | {kn} | {kmean:.0f} | {sn} | {inside:.0f} | {hold} |")
    print()
    print("pub const ICOUNT_HOLD_NS: [u64; CLASSES] = [" + ", ".join(str(h) for h in holds) + "];")


if __name__ == "__main__":
    main()
