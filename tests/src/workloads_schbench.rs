//! schbench (`workload=schbench`): its two percentile blocks read and checked as schbench lays
//! them out, its `@fw hist` buckets, and the run's accounting (the other benchmark workloads are
//! in workloads_bench.rs, whose helpers this uses).

use super::bench::{bench_ran, fixed_of, int_of, one_match, param, results, scan, workload_params};
use super::{ensure, hist_buckets};
use crate::log::Log;
use crate::scenarios::CheckResult;

// ---------------------------------------------------------------------------------------------
// schbench

/// One of schbench's percentile blocks.
#[derive(Debug)]
pub struct Percentiles {
    pub runtime_s: u64,
    pub total: u64,
    /// (value, samples at or below it) of the 50.0th, 90.0th, 99.0th and 99.9th percentiles.
    pub p: [(u64, u64); 4],
    pub min: u64,
    pub max: u64,
}

/// The percentiles schbench prints, in thousandths, and which one is starred.
const PCTS: [(&str, u64, &str); 4] = [
    ("50.0", 500, ""),
    ("90.0", 900, ""),
    ("99.0", 990, "*"),
    ("99.9", 999, ""),
];

/// Reads the block titled `title` (`Wakeup Latencies`): a header with the runtime and the
/// sample count, the four percentile lines in order (only 99.0th starred), then `min=, max=`.
/// Asserts what holds for any sample set: at least one sample, `min <= p50 <= p90 <= p99 <=
/// p99.9 <= max`, and each percentile's sample count at least its nearest rank
/// (`ceil(total·p)`), at most the total, never falling.
pub fn percentiles(log: &Log, title: &str) -> Result<Percentiles, String> {
    let (at, h) = one_match(
        log,
        &format!("{title} percentiles (usec) runtime {{}} (s) ({{}} total samples)"),
    )?;
    let runtime_s = int_of(h[0], title)?;
    let total = int_of(h[1], title)?;
    ensure(total > 0, || format!("{title}: no samples"))?;
    let line = |i: usize| {
        log.lines
            .get(at + i)
            .map(|l| l.text.as_str())
            .ok_or_else(|| format!("{title}: the block ends early"))
    };
    let mut p = [(0, 0); 4];
    for (i, (label, milli, star)) in PCTS.iter().enumerate() {
        let text = line(1 + i)?;
        let c = scan(text, "\t{} {}th: {} ({} samples)")
            .ok_or_else(|| format!("{title}: `{text}` is not a percentile line"))?;
        ensure(c[0] == *star && c[1] == *label, || {
            format!("{title}: expected the {star}{label}th percentile, got `{text}`")
        })?;
        let (v, n) = (int_of(c[2], text)?, int_of(c[3], text)?);
        let rank = (total * milli).div_ceil(1000);
        ensure(rank <= n && n <= total, || {
            format!("{title}: `{text}`: expected from {rank} to {total} samples")
        })?;
        p[i] = (v, n);
    }
    let text = line(5)?;
    let m = scan(text, "\t  min={}, max={}")
        .ok_or_else(|| format!("{title}: `{text}` is not the min/max line"))?;
    let (min, max) = (int_of(m[0], text)?, int_of(m[1], text)?);
    let values = [min, p[0].0, p[1].0, p[2].0, p[3].0, max];
    ensure(values.windows(2).all(|w| w[0] <= w[1]), || {
        format!("{title}: expected min <= p50 <= p90 <= p99 <= p99.9 <= max, got {values:?}")
    })?;
    ensure(p.windows(2).all(|w| w[0].1 <= w[1].1), || {
        format!("{title}: the sample counts fall: {p:?}")
    })?;
    Ok(Percentiles {
        runtime_s,
        total,
        p,
        min,
        max,
    })
}

/// The `@fw hist workload=schbench kind=KIND` buckets hold the block's samples: the layout of
/// [`hist_buckets`], the first holding `min` and the last `max`, their counts adding up to the
/// total.
fn check_hist(log: &Log, kind: &str, pct: &Percentiles) -> CheckResult {
    let buckets = hist_buckets(log, "schbench", kind)?;
    let (first, last) = (buckets[0], buckets[buckets.len() - 1]);
    let sum: u64 = buckets.iter().map(|b| b.2).sum();
    ensure(sum == pct.total, || {
        format!(
            "kind={kind}: the hist buckets hold {sum} samples, the percentiles {}",
            pct.total
        )
    })?;
    ensure(
        (first.0..first.1).contains(&pct.min) && (last.0..last.1).contains(&pct.max),
        || {
            format!(
                "kind={kind}: min={} and max={} not in the first and last buckets",
                pct.min, pct.max
            )
        },
    )
}

/// `workload=schbench,threads=M,workers=T,runtime_ms=R,work_us=W,sleep_us=S` on `cpus` CPUs:
/// both percentile blocks ([`percentiles`]) with the runtime in whole seconds (at least 1);
/// every worker's request is a sample and so is every wakeup but a worker's last (the stop), so
/// `requests - M·T <= wakeups <= requests`; a request (a sleep of `S`, then `W` of calibrated
/// work) never took less than `S + W/2` µs (the calibration takes the fastest timing, so work
/// runs no faster than calibrated; half of `W` leaves room); at least a quarter of the requests
/// one worker alone could make back to back (`R / (S + W) / 4`); the histograms match the
/// blocks (`check_hist`); the p99 results are the blocks' 99.0th; `rps` is the requests over
/// the run: at most `requests / R`, at least `requests / (runtime + 1 s)`, and what
/// `average rps:` says; the closing line repeats `M`, `T`, `W`, `S`.
pub fn check_schbench(log: &Log, cpus: u32, append: &str) -> CheckResult {
    let p = workload_params(append, "schbench")?;
    let (m, t, runtime_ms, work_us, sleep_us) = (
        param(&p, "threads")?,
        param(&p, "workers")?,
        param(&p, "runtime_ms")?,
        param(&p, "work_us")?,
        param(&p, "sleep_us")?,
    );
    bench_ran(log, "schbench", cpus)?;
    let wake = percentiles(log, "Wakeup Latencies")?;
    let req = percentiles(log, "Request Latencies")?;
    let secs = (runtime_ms / 1000).max(1);
    for b in [&wake, &req] {
        ensure((secs..=secs + 1).contains(&b.runtime_s), || {
            format!(
                "runtime {} (s) for a {runtime_ms} ms run: expected {secs} or {}",
                b.runtime_s,
                secs + 1
            )
        })?;
    }
    ensure(
        wake.total <= req.total && req.total <= wake.total + m * t,
        || {
            format!(
                "{} wakeup and {} request samples: expected requests - {} <= wakeups <= requests",
                wake.total,
                req.total,
                m * t
            )
        },
    )?;
    ensure(req.min >= sleep_us + work_us / 2, || {
        format!(
            "request min={} us: a request sleeps {sleep_us} us and works {work_us} us, \
             expected >= {}",
            req.min,
            sleep_us + work_us / 2
        )
    })?;
    let floor = runtime_ms * 1000 / (sleep_us + work_us).max(1) / 4;
    ensure(req.total >= floor, || {
        format!(
            "{} requests in {runtime_ms} ms: expected at least {floor}",
            req.total
        )
    })?;
    check_hist(log, "wakeup", &wake)?;
    check_hist(log, "request", &req)?;
    let v = results(
        log,
        "schbench",
        &[
            ("wakeup_p99", "us", "lower"),
            ("request_p99", "us", "lower"),
            ("rps", "req/s", "higher"),
        ],
    )?;
    ensure(
        v[0] == wake.p[2].0 * 1000 && v[1] == req.p[2].0 * 1000,
        || {
            format!(
                "p99 results {}/{} (thousandths) are not the 99.0th percentiles {}/{}",
                v[0], v[1], wake.p[2].0, req.p[2].0
            )
        },
    )?;
    let rps = v[2];
    let (hi, lo) = (
        req.total * 1_000_000 / runtime_ms,
        (req.total * 1000 / (req.runtime_s + 1)).saturating_sub(1),
    );
    ensure(rps > 0 && lo <= rps && rps <= hi, || {
        format!(
            "rps {}.{:03} for {} requests in {runtime_ms} ms (runtime {} s): expected from \
             {lo} to {hi} thousandths",
            rps / 1000,
            rps % 1000,
            req.total,
            req.runtime_s
        )
    })?;
    let (_, a) = one_match(log, "average rps: {}")?;
    ensure(fixed_of(a[0], 2, "average rps")? == rps / 10, || {
        format!("`average rps: {}` is not the rps result", a[0])
    })?;
    let (_, c) = one_match(
        log,
        "schbench: {} message threads, {} workers each, work {} us ({} loops/us), sleep {} us",
    )?;
    let c: Vec<u64> = c
        .iter()
        .map(|s| int_of(s, "schbench:"))
        .collect::<Result<_, _>>()?;
    ensure(
        c[0] == m && c[1] == t && c[2] == work_us && c[3] > 0 && c[4] == sleep_us,
        || format!("the closing line says {c:?}: expected [{m}, {t}, {work_us}, >0, {sleep_us}]"),
    )
}

