#!/usr/bin/env python3
"""When does hackbench at -smp 2 switch per message? Traced runs at eight tick phases.

Boots fairway's default hackbench under -icount with tracing, once per tick phase (as
`bench --phases` does), and splits each run into milliseconds: a millisecond is in the
per-message regime when one CPU saw at least THRESHOLD wakeups that preempted the running
task (trace `enqueue ... preempt=1`). Prints, per phase, hackbench's time, the switches, the
milliseconds in that regime and when the first one came, and what the preempting wakeups found
running (the enqueue's `curr` and `curr_eligible`: how many found it ineligible, and how many
of those in the per-message milliseconds found a sender), and how many of the 40 senders had
not exited yet when the run's last per-message spell began; writes an SVG of the context switches
per millisecond of every run, one row per phase.

    python3 docs/experiments/hackbench-regimes.py            # boots 8 runs (about a minute)
    python3 docs/experiments/hackbench-regimes.py --from target/experiments/hackbench-regimes

The first millisecond-and-a-half (every thread started and woken once) is left out of the
regime test. Standard library only.
"""

import argparse
import collections
import os
import subprocess
import sys

TICK_NS = 1_000_000  # hz=1000, as bench --phases assumes


def parse(log_path):
    """The `@fw trace` events of a serial log as dicts, the task names by pid, and hackbench's
    `Time:` in seconds. Each event gets `ms`: the millisecond it fell in, counted from the
    workload's start (init's first switch away, pid 1)."""
    events, names, time_s = [], {}, None
    with open(log_path) as f:
        for line in f:
            if line.startswith("@fw trace "):
                events.append(dict(kv.split("=", 1) for kv in line.split()[2:]))
            elif line.startswith("@fw trace_task "):
                task = dict(kv.split("=", 1) for kv in line.split()[2:])
                names[task["pid"]] = task["name"]
            elif line.startswith("Time:"):
                time_s = float(line.split()[1])
    if not events or time_s is None:
        sys.exit(f"{log_path}: no trace events or no `Time:` line (was it booted with trace=1?)")
    start = min(int(e["ts"]) for e in events if e["ev"] == "switch" and e.get("prev") == "1")
    for e in events:
        e["ms"] = (int(e["ts"]) - start) // 1_000_000
    return events, names, time_s


def per_ms(events):
    """Switches and preempting wakeups per CPU in each millisecond of the workload."""
    bins = collections.defaultdict(collections.Counter)
    for e in events:
        ms = e["ms"]
        if ms < 0:
            continue
        if e["ev"] == "switch":
            bins[ms]["switches"] += 1
        elif e["ev"] == "enqueue" and e.get("preempt") == "1":
            bins[ms]["preempt" + e["cpu"]] += 1
    last = max(bins) if bins else 0
    return [bins[ms] for ms in range(last + 1)]


def per_message_ms(series, threshold):
    return [ms for ms, b in enumerate(series)
            if ms >= 2 and max(b["preempt0"], b["preempt1"]) >= threshold]


def preempted(events, names, hot):
    """Over the preempting wakeups that found a fair task running: how many, how many found it
    ineligible, and, of those in the `hot` milliseconds, how many found a sender (hb-send-*).
    None for a kernel whose trace does not say (no `curr_eligible`)."""
    if not any("curr_eligible" in e for e in events if e["ev"] == "enqueue"):
        return None
    hot = set(hot)
    n = ineligible = in_hot = sender = 0
    for e in events:
        if e["ev"] != "enqueue" or e.get("preempt") != "1" or e.get("curr_eligible", "-") == "-":
            continue
        n += 1
        ineligible += e["curr_eligible"] == "0"
        if e["ms"] in hot:
            in_hot += 1
            sender += names.get(e["curr"], "").startswith("hb-send")
    return n, ineligible, in_hot, sender

def last_spell(hot):
    """The first millisecond of the last run of per-message milliseconds (gaps of up to two
    milliseconds joined), or None."""
    if not hot:
        return None
    first = hot[-1]
    for a, b in zip(reversed(hot[:-1]), reversed(hot)):
        if b - a > 2:
            break
        first = a
    return first


def senders_alive(events, names, ms):
    """Senders (hb-send-*) that had not exited (switched out in state D) by millisecond `ms`."""
    senders = {p for p, n in names.items() if n.startswith("hb-send")}
    gone = {e["prev"] for e in events if e["ev"] == "switch" and e["prev_state"] == "D"
            and e["prev"] in senders and e["ms"] < ms}
    return len(senders) - len(gone)


def svg(rows, path):
    """One row per phase: switches per millisecond against time, per-message ms shaded."""
    width, row_h, left, top = 820, 70, 120, 44
    longest = max(len(s) for _, _, s, _ in rows)
    peak = max(max(b["switches"] for b in s) for _, _, s, _ in rows) or 1
    x = lambda ms: left + (width - left - 20) * ms / max(1, longest)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + row_h * len(rows) + 40}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="6" y="16" font-size="13">hackbench --icount, traced: context switches per ms, one run per tick phase</text>',
           f'<text x="6" y="31">top of a row: {peak} switches per ms; shaded: ms in the per-message regime</text>']
    for i, (phase, time_s, series, hot) in enumerate(rows):
        y0 = top + i * row_h
        base = y0 + row_h - 12
        for ms in hot:
            out.append(f'<rect x="{x(ms):.1f}" y="{y0}" width="{x(ms + 1) - x(ms):.1f}" height="{row_h - 12}" fill="#fde2c8"/>')
        pts = " ".join(f"{x(ms + 0.5):.1f},{base - (row_h - 16) * b['switches'] / peak:.1f}" for ms, b in enumerate(series))
        out.append(f'<polyline fill="none" stroke="#1f5fa8" stroke-width="1.2" points="{pts}"/>')
        out.append(f'<line x1="{left}" y1="{base}" x2="{width - 20}" y2="{base}" stroke="#999"/>')
        out.append(f'<text x="6" y="{base - 20}">phase {phase}/8</text>')
        out.append(f'<text x="6" y="{base - 6}">Time: {time_s:.3f} s</text>')
    axis_y = top + row_h * len(rows) + 12
    for ms in range(0, longest + 1, 10):
        out.append(f'<text x="{x(ms):.1f}" y="{axis_y}" text-anchor="middle">{ms} ms</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="src", help="analyse phase-N/ directories written before instead of booting")
    ap.add_argument("--smp", default="2")
    ap.add_argument("--phases", type=int, default=8)
    ap.add_argument("--threshold", type=int, default=30, help="preempting wakeups per ms on one CPU (30)")
    ap.add_argument("--append", default="", help="extra kernel command line for every run")
    a = ap.parse_args()
    out = a.src or os.path.join("target", "experiments", "hackbench-regimes")
    rows = []
    for i in range(a.phases):
        d = os.path.join(out, f"phase-{i}")
        if not a.src:
            phase_ns = TICK_NS * i // a.phases
            cmd = ["cargo", "xtask", "trace", "hackbench", "--smp", a.smp, "--icount",
                   "--append", f"phase_ns={phase_ns} trace=1048576 {a.append}".strip(), "-o", d]
            print("$", " ".join(cmd), file=sys.stderr)
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
        events, names, time_s = parse(os.path.join(d, "serial.log"))
        series = per_ms(events)
        hot = per_message_ms(series, a.threshold)
        spell = last_spell(hot)
        alive = None if spell is None else senders_alive(events, names, spell)
        rows.append((i, time_s, series, hot, preempted(events, names, hot), spell, alive))
    print(f"hackbench -smp {a.smp} --icount, traced; per-message ms: >= {a.threshold} preempting wakeups on one CPU")
    print(f"{'phase':>5} {'Time':>6} {'switches':>8} {'per-msg ms':>10} {'first':>6} "
          f"{'switches in them':>16} {'others per ms':>13} {'last spell':>10} {'senders left':>12}  "
          "preempting wakeups: running task ineligible; in per-message ms: a sender")
    for i, time_s, series, hot, pre, spell, alive in rows:
        total = sum(b["switches"] for b in series)
        in_hot = sum(series[ms]["switches"] for ms in hot)
        calm = (total - in_hot) / max(1, len(series) - len(hot))
        first = f"{hot[0]} ms" if hot else "-"
        found = "(not in this trace)" if pre is None else f"{pre[1]} of {pre[0]}; {pre[3]} of {pre[2]}"
        spell_s = "-" if spell is None else f"{spell} ms"
        alive_s = "-" if alive is None else str(alive)
        print(f"{i:>5} {time_s:>6.3f} {total:>8} {len(hot):>10} {first:>6} {in_hot:>16} {calm:>13.0f} "
              f"{spell_s:>10} {alive_s:>12}  {found}")
    path = os.path.join(out, "switches-per-ms.svg")
    svg([r[:4] for r in rows], path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
