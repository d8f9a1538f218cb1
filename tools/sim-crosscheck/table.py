#!/usr/bin/env python3
# Reads DIR/{sim,qemu}-W-N.log (tools/sim-crosscheck/run.sh), prints the cross-check table of docs/SIMULATOR.md.
import re, sys, os
D = sys.argv[1] if len(sys.argv) > 1 else 'target/sim-crosscheck'
def recs(path):
    out = []
    for line in open(path, errors='replace'):
        i = line.find('@fw ')
        if i < 0: continue
        parts = line[i+4:].split()
        if not parts: continue
        kv = {}
        for p in parts[1:]:
            if '=' in p:
                k, v = p.split('=', 1); kv[k] = v
        out.append((parts[0], kv))
    return out
def num(v):
    try: return float(v)
    except: return 0.0
def figures(path):
    r = recs(path)
    if not any(k == 'workload_done' for k, _ in r): return None
    s = lambda kind, f: sum(num(kv.get(f, 0)) for k, kv in r if k == kind)
    sw, tw = s('schedstat_delta', 'sched_count'), s('schedstat_delta', 'ttwu_count')
    aff = s('domstat', 'ttwu_move_affine')
    wk = tw
    mig = sum(s('domstat', f'lb_gained_{t}') for t in ('idle', 'busy', 'newidle')) + s('domstat', 'alb_pushed')
    remote = s('domstat', 'ttwu_wake_remote')
    pulls = s('newidle', 'pulled')
    el = max([num(kv.get('rq_cpu_time', 0)) + num(kv.get('idle_ns', 0)) for k, kv in r if k == 'schedstat_delta'] or [0])
    return dict(sw_per_wake=sw / tw if tw else 0, affine=1000 * aff / tw if tw else 0, remote=1000 * remote / tw if tw else 0,
                mig=1000 * mig / wk if wk else 0, pulls=1000 * pulls / tw if tw else 0,
                wake_rate=tw / (el / 1e9) if el else 0, wakes=tw)
def gap(a, b):
    if a == b: return 0.0
    m = max(abs(a), abs(b))
    return abs(a - b) / m if m else 0.0
cols = [('sw_per_wake', 'switches/wakeup', '%.3f'), ('affine', 'affine/1000 wk', '%.1f'), ('remote', 'remote/1000 wk', '%.1f'),
        ('mig', 'balance moves/1000 wk', '%.1f'),
        ('pulls', 'newidle pulls/1000 wk', '%.1f'), ('wake_rate', 'wakeups/s', '%.0f')]
print('| workload | CPUs | ' + ' | '.join(c[1] + ' (qemu / sim)' for c in cols) + ' |')
print('|---|---|' + '---|' * len(cols))
for w in ['pipe', 'hackbench', 'schbench', 'tbench', 'fserver']:
    for n in [1, 2, 4]:
        q, s_ = os.path.join(D, f'qemu-{w}-{n}.log'), os.path.join(D, f'sim-{w}-{n}.log')
        fq = figures(q) if os.path.exists(q) else None
        fs = figures(s_) if os.path.exists(s_) else None
        if not fq or not fs:
            print(f'| {w} | {n} | ' + ' | '.join(['not run' if not fq else 'sim missing'] * len(cols)) + ' |'); continue
        cells = []
        for k, _, f in cols:
            if k == 'wake_rate' and n != 1: cells.append('-'); continue
            g = gap(fq[k], fs[k])
            # Under 2 per 1000 wakeups the cell is a handful of events: named, not marked.
            few = k in ('affine', 'remote', 'mig', 'pulls') and max(fq[k], fs[k]) < 2.0 and g > 0.2
            mark = ' (few)' if few else (' **>20%**' if g > 0.2 else '')
            cells.append(f'{f % fq[k]} / {f % fs[k]}{mark}')
        print(f'| {w} | {n} | ' + ' | '.join(cells) + ' |')
