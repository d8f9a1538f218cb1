//! `workload=wakeplace` and its `select_idle_cpu` scans (`@fw sis`, `@fw sis_scan`) as a correct kernel prints them.

use super::*;

/// `workload=wakeplace` as a correct kernel prints it: the balancing line, where the wakee ran
/// (the scenario's expected CPU for every round) and the waker's `@fw sis` scans.
pub(super) fn wakeplace(append: &str, kv: &[(String, String)], cpus: u32) -> String {
    let n: u64 = get(kv, "rounds", "200").parse().unwrap();
    let waker: u32 = get(kv, "waker", "0").parse().unwrap();
    let prev: u32 = get(kv, "prev", "1").parse().unwrap();
    let hogs: u64 = get(kv, "hog_mask", "0").parse().unwrap();
    let light: u64 = get(kv, "light_mask", "0").parse().unwrap();
    let allowed: u64 = match get(kv, "allowed_mask", "0").parse().unwrap() {
        0 => (1u64 << cpus) - 1,
        m => m,
    };
    let busy: u64 = get(kv, "busy_us", "0").parse().unwrap();
    let list = |m: u64| {
        let v: Vec<u32> = (0..cpus).filter(|c| m & (1 << c) != 0).collect();
        if v.is_empty() { "-".to_string() } else { format_cpulist(&v) }
    };
    fn or<'a>(v: &'a str, d: &'a str) -> &'a str {
        if v.is_empty() { d } else { v }
    }
    // A later sched_features=SIS_UTIL wins over sis_util=off.
    let sis_util = if option(append, "sched_features") == "SIS_UTIL" { "on" } else { or(option(append, "sis_util"), "on") };
    let (sis_prop, wake_balance) = (or(option(append, "sis_prop"), "off"), or(option(append, "wake_balance"), "linux"));
    let mut out = format!(
        "@fw balance_config msg=avg_idle_clamp=avg avg_idle_ceiling=200 sis_prop={sis_prop} sis_util={sis_util} \
         wake_balance={wake_balance} wake_affine=on ni_random=on newidle=on newidle_gate=cost group_capacity=util\n"
    );
    // (CPU the wakee runs on, scans, scanned, found, truncated, depth_sum, no_scan, accounted)
    let last = cpus - 1;
    let (on, sis) = if wake_balance == "idle_only" {
        let sib = prev ^ 1;
        let on = if allowed & (1 << sib) != 0 && hogs & (1 << sib) == 0 { sib } else { prev };
        (on, [0; 7])
    } else if light != 0 {
        (prev, [0; 7])
    } else if sis_prop == "aged" && busy > 0 {
        (waker, [n, 3 * n, 0, n, 4 * n, 0, 0])
    } else if sis_prop == "aged" {
        (last, [n, (cpus as u64 - 1) * n, n, 0, 100 * n, 0, n])
    } else if hogs.count_ones() <= 2 {
        (hogs.count_ones() + 1, [n, 3 * n, n, 0, 8 * n, 0, 0])
    } else {
        (waker, [n - 5, 2 * n, 0, n - 5, 3 * (n - 5), 5, 0])
    };
    out += &format!(
        "@fw wakeplace waker={waker} prev={prev} allowed={} hogs={} light={} rounds={n} sleep_us=1000 \
         busy_us={busy} work_us=50 home=1 warm_ms=200\n",
        list(allowed),
        list(hogs),
        list(light)
    );
    // aged: woken at once, half the 1 ms avg_idle predicted; after 20 ms of spinning, none left.
    let aged_idle = if busy > 0 { 0 } else { 500_000 };
    let scans = match sis_prop {
        "legacy" | "per_cpu_cost" | "aged" | "altscan" if hogs.count_ones() == cpus - 2 => {
            sis_prop_scans(sis_prop, n, cpus, aged_idle, true)
        }
        // altscan with a hog on the last CPU too: no idle CPU to find.
        "altscan" if hogs.count_ones() == cpus - 1 => sis_prop_scans(sis_prop, n, cpus, aged_idle, false),
        _ => None,
    };
    // The wakee runs on the idle last CPU after a scan that found it, else on the target.
    let (on_last, sis) = match &scans {
        Some((found, v, _)) => (Some(*found), *v),
        None => (None, sis),
    };
    for c in 0..cpus {
        let k = match on_last {
            Some(f) if c == last => f,
            Some(f) if c == waker => n - f,
            Some(_) => 0,
            None if c == on => n,
            None => 0,
        };
        out += &format!("@fw wakeplace_cpu cpu={c} wakeups={k}\n");
    }
    for c in 0..cpus {
        let v = if c == waker { sis } else { [0; 7] };
        out += &format!(
            "@fw sis cpu={c} scans={} scanned={} found={} truncated={} idle_core_scans=0 limited={} \
             depth_sum={} no_scan={} accounted={} time_ns={}\n",
            v[0], v[1], v[2], v[3], v[0], v[4], v[5], v[6], v[0] * 300
        );
        if c == waker {
            if let Some((_, _, lines)) = &scans {
                out += lines;
            }
        }
    }
    out
}

/// A SIS_PROP `legacy`, `per_cpu_cost` or `aged` wakeplace run of `n` wakeups on an LLC of
/// `cpus` CPUs whose last is the only idle one (scans start at CPU 1): `avg_idle` 1 ms (`aged`:
/// `wake_avg_idle`), each scan 2100 ns, the cost learnt from 0 by `update_avg` as the variant
/// accounts. `legacy` learns the whole scan's cost until the depth (`8 · 1953 / (cost + 1)`)
/// falls short of the idle CPU, and then stops learning; `per_cpu_cost` learns 300 ns per CPU
/// and scans to it (its loop one CPU deeper); `aged` scans to it with 0.5 ms predicted, and 4
/// deep with none; `altscan` scans `(1 ms / 512) / (cost + 1)` deep and learns a scan's time
/// over 4 × the CPUs it examined when it found the idle CPU, over those plus one when not. Without an idle last CPU (`idle_last` false) a scan goes round all `cpus` and
/// finds none. Returns (scans that found it, the `@fw sis` figures, the `@fw sis_scan` lines of
/// the last 64).
pub(super) fn sis_prop_scans(variant: &str, n: u64, cpus: u32, wake_avg_idle: u64, idle_last: bool) -> Option<(u64, [u64; 7], String)> {
    let (last, time, avg_idle) = (cpus as u64 - 1, 2100u64, 1_000_000u64);
    let end = if idle_last { last } else { cpus as u64 };
    let (mut cost, mut lines) = (0u64, String::new());
    let mut v = [n, 0, 0, 0, 0, 0, 0];
    for i in 0..n {
        let c = cost as u128 + 1;
        let idle = if variant == "aged" { wake_avg_idle } else { avg_idle / 512 };
        let span_avg = cpus as u128 * idle as u128;
        let nr = match variant {
            "altscan" => ((avg_idle as u128 / 512 / c) as u64).max(4),
            _ if span_avg > 4 * c => (span_avg / c) as u64 + (variant == "per_cpu_cost") as u64,
            _ => 4 + (variant == "per_cpu_cost") as u64,
        };
        let scanned = (nr - 1).min(end);
        let found = idle_last && nr > last;
        let truncated = nr - 1 < end;
        let fold = match variant {
            "legacy" | "aged" => (!truncated).then_some(time),
            "altscan" => Some(time / if found { 4 * scanned } else { scanned + 1 }),
            _ => Some(time / scanned),
        };
        if i + 64 >= n {
            lines += &format!(
                "@fw sis_scan cpu=0 i={i} avg_idle={avg_idle} wake_avg_idle={wake_avg_idle} avg_scan_cost={cost} span={cpus} nr={nr} \
                 scanned={scanned} found={} truncated={} time_ns={time} accounted={}\n",
                found as u8,
                truncated as u8,
                fold.is_some() as u8
            );
        }
        v[1] += scanned;
        v[2] += found as u64;
        v[3] += truncated as u64;
        v[4] += nr;
        v[6] += fold.is_some() as u64;
        if let Some(x) = fold {
            cost = (cost as i128 + (x as i128 - cost as i128) / 8) as u64;
        }
    }
    Some((v[2], v, lines))
}
