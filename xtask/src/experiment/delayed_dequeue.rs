//! `delayed-dequeue`: Chen Yu's 2024 schbench figures on EEVDF's delayed dequeue: the matrix and
//! the rules that read it.

use fairway_scenarios::Log;

use super::claims::{Claim, Figure};
use super::sweep::{Arg, Axis, Sweep};
use super::defs::{fmt_pct, v};
use super::{change, sum, Check, Dist, Form, Matrix, Mech, Reading, SeedSetup, Spec};

const DD_ZERO: &str = "DELAY_DEQUEUE+DELAY_ZERO";
const NO_DD: &str = "NO_DELAY_DEQUEUE";
const DD_LAG: &str = "DELAY_DEQUEUE,NO_DELAY_ZERO";

const DD_SETUP: &[SeedSetup] = &[
    SeedSetup {
        seed: "Chen Yu, 2024-04-06: `schbench -m 2 -r 100` on \"xeon server, which has 240 CPUs/2 sockets\": 2 message \
               threads, schbench's default workers (one per CPU: 120 each), its default request (100 us of sleep, then \
               5 matrix multiplications over a 256 KB footprint): request p50 14,992 us (NO_DELAY_DEQUEUE, NO_DELAY_ZERO) \
               and 14,384 us (DELAY_DEQUEUE, DELAY_ZERO), 100 s.",
        here: "`schbench` with 2 message threads of 120 workers on `dd-2024` (2 sockets x 60 cores x 2 threads), each \
               request 100 us of sleep then 14.5 ms of calibrated work within ±5% from the seed (request p50 about \
               14.5 ms), 5 s; also 180 workers per message thread (1.5 per CPU). QEMU: 2 message threads of 2 workers \
               on 4 CPUs (one per CPU), 3 s.",
        differs: "schbench's work is a matrix multiplication with a 256 KB footprint under a per-CPU lock taken by \
                  spinning; here calibrated loops without the lock, and cache effects are the hardware profile's. 5 s \
                  instead of 100 s (a rerun with `runtime_ms=100000` is the thread's length).",
    },
    SeedSetup {
        seed: "Wakeup p99 25 us (NO_DELAY_DEQUEUE) -> 31 us (DELAY_DEQUEUE+DELAY_ZERO); average rps 16,623.81 -> \
               16,718.59.",
        here: "The three settings: the default (DELAY_DEQUEUE, DELAY_ZERO), NO_DELAY_DEQUEUE, and DELAY_DEQUEUE with \
               NO_DELAY_ZERO; wakeup and request p99, requests/s, and the mechanism: delays per wakeup, how long a \
               delayed task stayed queued, positive lags zeroed.",
        differs: "Chen Yu's baseline turned both features off (NO_DELAY_DEQUEUE with NO_DELAY_ZERO); with delayed \
                  dequeue off, DELAY_ZERO acts on nothing, so NO_DELAY_DEQUEUE here is the same kernel.",
    },
];

pub fn spec() -> Spec {
    Spec {
        name: "delayed-dequeue",
        claim: "2024, Chen Yu on EEVDF's delayed dequeue (a task that sleeps with negative lag stays queued until the lag is \
                spent; DELAY_ZERO clears the positive lag it leaves with): schbench on 240 CPUs, wakeup p99 25 -> 31 us and \
                requests/s 16,623 -> 16,718 between the two settings: the wakeup tail moved by about a quarter, the \
                throughput by under 1%.",
        asks: "DELAY_DEQUEUE+DELAY_ZERO (v6.19's default) versus NO_DELAY_DEQUEUE versus DELAY_DEQUEUE,NO_DELAY_ZERO: schbench \
               as the seed ran it (2 message threads, a worker per CPU, requests of about 15 ms), runs of several seconds; \
               wakeup and request p99, requests per second, run_delay, delays per wakeup and the lags zeroed.",
        setup: DD_SETUP,
        workload: "schbench",
        variants: vec![
            v(DD_ZERO, ""),
            v(NO_DD, "sched_features=NO_DELAY_DEQUEUE"),
            v(DD_LAG, "sched_features=NO_DELAY_ZERO"),
        ],
        full: Form {
            smp: "4",
            params: "runtime_ms=3000,work_us=14500,sleep_us=100,jitter_pct=5",
            points: &["threads=2,workers=2", "threads=2,workers=3"],
            timeout_s: 1200,
        },
        // Two CPUs, one worker each: 300 ms of 15 ms requests delays some sleeps already.
        quick: Form { smp: "2", params: "runtime_ms=300,work_us=14500,sleep_us=100,jitter_pct=5", points: &["threads=1,workers=2"], timeout_s: 180 },
        machine_note: "The claim's machine had 240 CPUs; QEMU on 2 host cores models 4, so schbench's workers are scaled to \
                       4 CPUs (one per CPU as schbench's default gives, and 1.5 per CPU).",
        mechs: vec![
            Mech { label: "run_delay_ms", unit: "ms", read: |l| sum(l, "schedstat_delta", "run_delay") / 1e6 },
            Mech { label: "delayed", unit: "count", read: |l| sum(l, "delayed", "delayed") },
            Mech { label: "delays_per_100_wakeups", unit: "count", read: delays_per_100_wakeups },
            Mech { label: "delayed_mean_us", unit: "us", read: delayed_mean_us },
            Mech { label: "delayed_max_us", unit: "us", read: delayed_max_us },
            Mech { label: "leave_lag_us", unit: "vus", read: leave_lag_us },
            Mech { label: "lags_zeroed", unit: "count", read: |l| sum(l, "delayed", "zeroed") },
        ],
        host: None,
        read: read_delayed_dequeue,
        claims: claims(),
        dists: vec![Dist { label: "wakeup latency (schbench)", counts: "wakeups", read: wakeup_hist }],
        // Where the p99 claim holds, over what a wakeup of a sleeping CPU costs in hardware: a
        // halted CPU's exit latency and an IPI's flight (`--sweep`, simulator only; the run's
        // profile's other figures stay).
        sweeps: vec![Sweep {
            claim: P99_CLAIM,
            x: Axis { name: "idle exit (idle_exit_ns)", values: &["0", "5000"], arg: Arg::Sim("--hw-set idle_exit_ns={}") },
            y: Axis { name: "IPI delivery (ipi_base_ns)", values: &["0", "2000"], arg: Arg::Sim("--hw-set ipi_base_ns={}") },
            seeds: None,
        }],
    }
}

const P99_CLAIM: &str = "wakeup p99 up with delayed dequeue";

/// Chen Yu's figures (schbench -m 2 -r 100, 240 CPUs): wakeup p99 25 us with NO_DELAY_DEQUEUE,
/// 31 us with DELAY_DEQUEUE and DELAY_ZERO (+24%), requests/s 16,623.81 and 16,718.59 (+0.57%).
fn claims() -> Vec<Claim> {
    vec![
        Claim::change(P99_CLAIM, Figure::Result("wakeup_p99"), NO_DD, DD_ZERO, 24.0)
            .median()
            // schbench's default: one worker per CPU (the seed's -m 2 on 240 CPUs: 120 each)
            .at(&["workers=120", ",workers=2"])
            .source("Chen Yu, 2024, schbench on 240 CPUs: wakeup p99 25 -> 31 us")
            .fails_with_variant(NO_DD, "NO_DELAY_DEQUEUE on both sides"),
        Claim::no_change("throughput within 1%", Figure::Result("rps"), NO_DD, DD_ZERO, 1.0)
            .source("Chen Yu, 2024: requests/s 16,623.81 -> 16,718.59 (+0.57%)")
            .fails_with_mutation("the variant booted with schbench's `work_us` doubled: twice the work per request, about half the requests/s"),
    ]
}

/// Delays (`@fw delayed delayed=`) per 100 wakeups (`ttwu_count`), summed over CPUs.
fn delays_per_100_wakeups(l: &Log) -> f64 {
    100.0 * super::per(sum(l, "delayed", "delayed"), sum(l, "schedstat_delta", "ttwu_count"))
}

/// Delays per 100 wakeups over every point.
fn per_wakeups(m: &Matrix, var: &str) -> f64 {
    100.0 * super::per(m.mech_all(var, |l| sum(l, "delayed", "delayed")), m.mech_all(var, |l| sum(l, "schedstat_delta", "ttwu_count")))
}

/// schbench's wakeup latencies (`@fw hist kind=wakeup`), bucket by bucket.
fn wakeup_hist(l: &Log) -> Vec<(String, f64)> {
    l.records("hist")
        .filter(|r| r.get("kind") == Some("wakeup"))
        .map(|r| (format!("{}-{} us", r.get("lo_us").unwrap_or("?"), r.get("hi_us").unwrap_or("?")), r.num("count").unwrap_or(0) as f64))
        .collect()
}

/// How long an ended delay kept its task queued asleep, mean over CPUs' ended delays (`@fw delayed`).
fn delayed_mean_us(l: &Log) -> f64 {
    let ended = sum(l, "delayed", "requeued") + sum(l, "delayed", "dequeued");
    if ended == 0.0 { 0.0 } else { sum(l, "delayed", "delayed_ns") / ended / 1000.0 }
}
fn delayed_max_us(l: &Log) -> f64 {
    l.records("delayed").map(|r| r.num("delayed_max_ns").unwrap_or(0) as f64).fold(0.0, f64::max) / 1000.0
}
/// Σ of the lags the final dequeues saved (signed, virtual us).
fn leave_lag_us(l: &Log) -> f64 {
    l.records("delayed").filter_map(|r| r.get("leave_lag")?.parse::<i64>().ok()).map(|v| v as f64).sum::<f64>() / 1000.0
}

fn read_delayed_dequeue(m: &Matrix) -> Reading {
    let mut why = Vec::new();
    let per = |metric: &str, hib: bool| -> Vec<f64> {
        (0..m.points.len()).map(|p| crate::stats::pdiff(m.result(p, NO_DD, metric), m.result(p, DD_ZERO, metric), hib)).collect()
    };
    let list = |v: &[f64]| m.points.iter().zip(v).map(|(p, d)| format!("{p} {}", fmt_pct(*d))).collect::<Vec<_>>().join(", ");
    // change of delayed dequeue (default) against NO_DELAY_DEQUEUE, positive = better
    let p99 = per("wakeup_p99", false);
    let rps = per("rps", true);
    let req = per("request_p99", false);
    let (p99m, rpsm) = (crate::stats::amean(&p99), crate::stats::amean(&rps));
    // (change against NO_DELAY_DEQUEUE; the claims' table reads the same pair with intervals)
    why.push(format!(
        "Wakeup p99, DELAY_DEQUEUE+DELAY_ZERO against NO_DELAY_DEQUEUE (positive = better): {} (mean {}); the claim: a tail \
         about 24% worse (25 -> 31 us).",
        list(&p99),
        fmt_pct(p99m)
    ));
    why.push(format!("Requests/s, the same pair: {} (mean {}); the claim: within 1%.", list(&rps), fmt_pct(rpsm)));
    why.push(format!("Request p99, the same pair: {} (mean {}).", list(&req), fmt_pct(crate::stats::amean(&req))));
    let lag: Vec<f64> = (0..m.points.len())
        .map(|p| crate::stats::pdiff(m.result(p, DD_ZERO, "wakeup_p99"), m.result(p, DD_LAG, "wakeup_p99"), false))
        .collect();
    why.push(format!("Keeping the lag (NO_DELAY_ZERO) against clearing it, wakeup p99: {}.", list(&lag)));
    let rd: Vec<f64> = (0..m.points.len())
        .map(|p| change(m.mech(p, NO_DD, |l| sum(l, "schedstat_delta", "run_delay")), m.mech(p, DD_ZERO, |l| sum(l, "schedstat_delta", "run_delay"))))
        .collect();
    why.push(format!("Time spent waiting on a runqueue (run_delay, summed over CPUs), delayed against not: {}.", list(&rd)));
    let n_delayed = m.mech_all(DD_ZERO, |l| sum(l, "delayed", "delayed"));
    if n_delayed > 0.0 {
        why.push(format!(
            "Delayed entities, DELAY_DEQUEUE+DELAY_ZERO, all points (@fw delayed, since boot): {n_delayed:.0} delays, queued asleep \
             {:.1} us on average (longest {:.1} us); lag left at the final dequeues {:.1} virtual us in all, {:.0} positive lags \
             zeroed; with NO_DELAY_ZERO {:.0} delays, lag left {:.1} virtual us; NO_DELAY_DEQUEUE {:.0} delays.",
            m.mech_all(DD_ZERO, delayed_mean_us) / m.points.len() as f64,
            (0..m.points.len()).map(|p| m.mech(p, DD_ZERO, delayed_max_us)).fold(0.0, f64::max),
            m.mech_all(DD_ZERO, leave_lag_us),
            m.mech_all(DD_ZERO, |l| sum(l, "delayed", "zeroed")),
            m.mech_all(DD_LAG, |l| sum(l, "delayed", "delayed")),
            m.mech_all(DD_LAG, leave_lag_us),
            m.mech_all(NO_DD, |l| sum(l, "delayed", "delayed")),
        ));
    } else {
        why.push("No `@fw delayed` counts in these logs (a kernel before they were printed): how long delayed entities stayed queued is not measured.".into());
    }
    // schbench's percentiles are whole microseconds: a tail of a few us moves by a whole step.
    let coarse: Vec<String> = (0..m.points.len())
        .filter(|&p| m.result(p, NO_DD, "wakeup_p99").max(m.result(p, DD_ZERO, "wakeup_p99")) < 10.0)
        .map(|p| format!("{} ({:.2} -> {:.2} us)", m.points[p], m.result(p, NO_DD, "wakeup_p99"), m.result(p, DD_ZERO, "wakeup_p99")))
        .collect();
    if !coarse.is_empty() {
        why.push(format!(
            "At {} the wakeup p99 is a few microseconds, at schbench's 1 us resolution: its change is a step or two of \
             the histogram, not a shape; the points above 10 us carry the reading.",
            coarse.join(", ")
        ));
    }
    // The mechanism engages, and DELAY_ZERO acts where it should: the default zeroes positive lags
    // that NO_DELAY_ZERO keeps (none zeroed there), and NO_DELAY_DEQUEUE delays nothing.
    let delays = |v: &str| m.mech_all(v, |l| sum(l, "delayed", "delayed"));
    let zeroed = |v: &str| m.mech_all(v, |l| sum(l, "delayed", "zeroed"));
    why.push(format!(
        "Delays per 100 wakeups (all points): {:.2} default, {:.2} NO_DELAY_ZERO, {:.2} NO_DELAY_DEQUEUE; positive lags zeroed \
         {:.0}, {:.0}, {:.0}.",
        per_wakeups(m, DD_ZERO),
        per_wakeups(m, DD_LAG),
        per_wakeups(m, NO_DD),
        zeroed(DD_ZERO),
        zeroed(DD_LAG),
        zeroed(NO_DD)
    ));
    let checks = vec![
        Check::new(
            format!("delayed dequeue engages: the default delays sleeps ({:.0}) and NO_DELAY_DEQUEUE none ({:.0})", delays(DD_ZERO), delays(NO_DD)),
            delays(DD_ZERO) > 0.0 && delays(NO_DD) == 0.0,
            "sched_features=NO_DELAY_DEQUEUE in the default's place: no delay on either side",
        ),
        Check::new(
            format!("DELAY_ZERO acts: the default zeroes positive lags ({:.0}) and NO_DELAY_ZERO none ({:.0})", zeroed(DD_ZERO), zeroed(DD_LAG)),
            zeroed(DD_ZERO) > 0.0 && zeroed(DD_LAG) == 0.0,
            "sched_features=NO_DELAY_ZERO in the default's place: no lag zeroed on either side",
        ),
    ];
    Reading { why, checks }
}

#[cfg(test)]
mod tests {
    use super::super::claims::{decide_all, Verdict};
    use super::super::tests::synthetic_runs;
    use super::*;
    use crate::stats::bootstrap::Bootstrap;

    /// The p99 claim (+24%, a median of the runs' p99) and the throughput claim (within 1%).
    #[test]
    fn delayed_dequeue_claims_follow_the_numbers() {
        let spec = spec();
        let make = |p99_dd: f64, rps_dd: f64| {
            synthetic_runs(&spec, &["threads=2,workers=120"], 7, move |_, v, run| {
                let jitter = 1.0 + (run as f64 - 3.0) / 300.0;
                let (p99, rps) = if v == DD_ZERO { (p99_dd, rps_dd) } else { (25.0, 16623.0) };
                format!(
                    "@fw result workload=schbench metric=wakeup_p99 value={} unit=us better=lower\n\
                     @fw result workload=schbench metric=rps value={} unit=req/s better=higher\n\
                     @fw result workload=schbench metric=request_p99 value=100 unit=us better=lower\n",
                    p99 * jitter,
                    rps * (1.0 + (run as f64 - 3.0) / 3000.0)
                )
            })
        };
        let d = decide_all(&spec.claims, &make(31.0, 16718.0), &Bootstrap::default());
        assert_eq!((d.verdict(0), d.verdict(1)), (Some(Verdict::Reproduced), Some(Verdict::Reproduced)), "{:?}", d.rows);
        assert!(d.failing.iter().all(|f| f.verdict == Verdict::NoEffect), "{:?}", d.failing);
        let d = decide_all(&spec.claims, &make(25.2, 18000.0), &Bootstrap::default());
        assert_eq!((d.verdict(0), d.verdict(1)), (Some(Verdict::NoEffect), Some(Verdict::Opposite)));
        assert_eq!(decide_all(&spec.claims, &make(19.0, 16623.0), &Bootstrap::default()).verdict(0), Some(Verdict::Opposite));
        let r = read_delayed_dequeue(&make(31.0, 16718.0));
        assert!(r.why[0].contains("-24.0%"), "{}", r.why[0]);
    }
}
