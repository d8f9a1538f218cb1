//! What one benchmark boot reports: the `@fw result`, `@fw schedstat_delta`
//! and `@fw hist` records of a serial log, as serializable data.

use std::collections::BTreeMap;

use fairway_scenarios::Log;
use serde::Serialize;

/// One `@fw result` record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub workload: String,
    pub metric: String,
    pub value: f64,
    pub unit: String,
    pub higher_is_better: bool,
}

/// One `@fw hist` bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub kind: String,
    pub lo_us: u64,
    pub hi_us: u64,
    pub count: u64,
}

/// The buckets of `kind` among `buckets` (of several runs, say) added up: `(lo_us, hi_us,
/// count)`, ascending; a bucket several runs have is one, with their counts summed.
pub fn pool_buckets<'a>(buckets: impl IntoIterator<Item = &'a Bucket>, kind: &str) -> Vec<(u64, u64, u64)> {
    let mut sums: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for b in buckets.into_iter().filter(|b| b.kind == kind) {
        *sums.entry((b.lo_us, b.hi_us)).or_default() += b.count;
    }
    sums.into_iter().map(|((lo, hi), c)| (lo, hi, c)).collect()
}

/// The hist kinds among `buckets`, in the order they first appear.
pub fn bucket_kinds<'a>(buckets: impl IntoIterator<Item = &'a Bucket>) -> Vec<String> {
    let mut kinds: Vec<String> = Vec::new();
    for b in buckets {
        if !kinds.contains(&b.kind) {
            kinds.push(b.kind.clone());
        }
    }
    kinds
}

/// Everything a boot reported that the benchmark commands keep.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub run: usize,
    /// QEMU's decoded exit (`kernel success ...`).
    pub exit: String,
    pub ok: bool,
    pub wall_s: f64,
    pub results: Vec<Figure>,
    /// One map per CPU: `cpu` and every counter of `@fw schedstat_delta`.
    pub schedstat_delta: Vec<BTreeMap<String, u64>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hist: Vec<Bucket>,
}

impl RunRecord {
    /// What boot `run` reported in `log`, ended as `exit` after `wall_s` seconds.
    pub fn from_log(run: usize, exit: String, ok: bool, wall_s: f64, log: &Log) -> Self {
        RunRecord { run, exit, ok, wall_s, results: figures(log), schedstat_delta: schedstat_deltas(log), hist: hist(log) }
    }
}

/// The figures of a log, in the order printed.
pub fn figures(log: &Log) -> Vec<Figure> {
    log.records("result")
        .filter_map(|r| {
            Some(Figure {
                workload: r.get("workload")?.to_string(),
                metric: r.get("metric")?.to_string(),
                value: r.get("value")?.parse().ok()?,
                unit: r.get("unit").unwrap_or("").to_string(),
                higher_is_better: r.get("better") == Some("higher"),
            })
        })
        .collect()
}

/// The `@fw schedstat_delta` lines, one map of counters per CPU.
pub fn schedstat_deltas(log: &Log) -> Vec<BTreeMap<String, u64>> {
    log.records("schedstat_delta")
        .map(|r| {
            r.fields
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.parse().ok()?)))
                .collect()
        })
        .collect()
}

/// The `@fw hist` buckets.
pub fn hist(log: &Log) -> Vec<Bucket> {
    log.records("hist")
        .filter_map(|r| {
            Some(Bucket {
                kind: r.get("kind")?.to_string(),
                lo_us: r.num("lo_us").ok()?,
                hi_us: r.num("hi_us").ok()?,
                count: r.num("count").ok()?,
            })
        })
        .collect()
}

/// One metric's values over the successful runs. `values[i]` came from run `runs[i]`
/// ([`RunRecord::run`], the number in runs.csv and the log's name), so a far-off value can be
/// traced to its boot.
#[derive(Debug, Clone)]
pub struct Samples {
    /// The first run's figure: name, unit, direction.
    pub figure: Figure,
    pub values: Vec<f64>,
    pub runs: Vec<usize>,
}

/// A run whose value [`stats::outliers`](crate::stats::outliers) flags.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outlier {
    pub run: usize,
    pub value: f64,
}

impl Samples {
    pub fn outliers(&self) -> Vec<Outlier> {
        crate::stats::outliers(&self.values).into_iter().map(|i| Outlier { run: self.runs[i], value: self.values[i] }).collect()
    }
}

/// `run 0 = 6355.939, run 3 = 7001` (empty for none).
pub fn describe_outliers(outliers: &[Outlier]) -> String {
    outliers.iter().map(|o| format!("run {} = {}", o.run, o.value)).collect::<Vec<_>>().join(", ")
}

/// Samples per metric over the successful runs, in the order metrics first appear.
pub fn by_metric(runs: &[RunRecord]) -> Vec<Samples> {
    let mut out: Vec<Samples> = Vec::new();
    for r in runs.iter().filter(|r| r.ok) {
        for f in &r.results {
            match out.iter_mut().find(|s| s.figure.metric == f.metric) {
                Some(s) => {
                    s.values.push(f.value);
                    s.runs.push(r.run);
                }
                None => out.push(Samples { figure: f.clone(), values: vec![f.value], runs: vec![r.run] }),
            }
        }
    }
    out
}

/// The `@fw schedstat_delta` counters in the order docs/CONSOLE.md lists them; others a log may
/// carry follow in name order.
pub const SCHEDSTAT_COUNTERS: [&str; 15] = [
    "yld_count",
    "sched_count",
    "sched_goidle",
    "ttwu_count",
    "ttwu_local",
    "rq_cpu_time",
    "run_delay",
    "pcount",
    "ticks",
    "timer_irqs",
    "resched_ipis",
    "wake_idle_without_ipi",
    "pressure_ns",
    "idle_ns",
    "idle_wait_ns",
];

/// The unit of a `schedstat_delta` counter: `ns` for the times (`rq_cpu_time`, `run_delay` and
/// every `*_ns`: `idle_ns`, `idle_wait_ns`, `idle_wait_<level>_ns`), `count` for the rest.
pub fn counter_unit(counter: &str) -> &'static str {
    if matches!(counter, "rq_cpu_time" | "run_delay") || counter.ends_with("_ns") { "ns" } else { "count" }
}

/// One run's `schedstat_delta` counters summed over its CPUs (`cpu` itself is no counter). A
/// counter no CPU line carries is absent, not zero.
pub fn schedstat_totals(run: &RunRecord) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for (k, v) in run.schedstat_delta.iter().flatten().filter(|(k, _)| k.as_str() != "cpu") {
        *sum.entry(k.clone()).or_insert(0u64) += v;
    }
    sum
}

/// Samples per `schedstat_delta` counter, summed over CPUs, over the successful runs, in
/// [`SCHEDSTAT_COUNTERS`] order. The figure's `unit` is [`counter_unit`]; a counter has no
/// better direction, so its `higher_is_better` means nothing.
pub fn by_counter(runs: &[RunRecord]) -> Vec<Samples> {
    let mut out: Vec<Samples> = Vec::new();
    for r in runs.iter().filter(|r| r.ok) {
        for (k, v) in schedstat_totals(r) {
            match out.iter_mut().find(|s| s.figure.metric == k) {
                Some(s) => {
                    s.values.push(v as f64);
                    s.runs.push(r.run);
                }
                None => out.push(Samples {
                    figure: Figure {
                        workload: String::new(),
                        metric: k.clone(),
                        value: v as f64,
                        unit: counter_unit(&k).to_string(),
                        higher_is_better: false,
                    },
                    values: vec![v as f64],
                    runs: vec![r.run],
                }),
            }
        }
    }
    let rank = |m: &str| SCHEDSTAT_COUNTERS.iter().position(|c| *c == m).unwrap_or(SCHEDSTAT_COUNTERS.len());
    out.sort_by(|a, b| (rank(&a.figure.metric), &a.figure.metric).cmp(&(rank(&b.figure.metric), &b.figure.metric)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
@fw workload name=hackbench cpus=2
Time: 0.303
@fw result workload=hackbench metric=time value=0.303 unit=s better=lower
@fw result workload=hackbench metric=rate value=12.500 unit=ops/s better=higher
@fw hist workload=schbench kind=wakeup lo_us=16 hi_us=18 count=7
@fw schedstat_delta cpu=0 yld_count=0 sched_count=5976 ttwu_count=3525
@fw schedstat_delta cpu=1 yld_count=0 sched_count=3 ttwu_count=1
";

    #[test]
    fn parses_results_schedstat_and_hist() {
        let log = Log::parse(LOG);
        let f = figures(&log);
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].metric.as_str(), f[0].value, f[0].higher_is_better), ("time", 0.303, false));
        assert!(f[1].higher_is_better);
        let s = schedstat_deltas(&log);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1]["cpu"], 1);
        assert_eq!(s[0]["sched_count"], 5976);
        assert_eq!(hist(&log), vec![Bucket { kind: "wakeup".into(), lo_us: 16, hi_us: 18, count: 7 }]);
        let run = |run, ok| RunRecord {
            run,
            exit: String::new(),
            ok,
            wall_s: 1.0,
            results: f.clone(),
            schedstat_delta: s.clone(),
            hist: vec![],
        };
        let m = by_metric(&[run(0, true), run(1, false), run(2, true)]);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].values, vec![0.303, 0.303]);
        assert_eq!(m[0].runs, vec![0, 2], "the failed run 1 is skipped, the numbers stay");
        assert!(m[0].outliers().is_empty());
        let far = |i, value| RunRecord { results: vec![Figure { value, ..f[0].clone() }], ..run(i, true) };
        let m = by_metric(&[far(0, 0.3), far(1, 0.31), far(2, 0.29), far(3, 0.9)]);
        assert_eq!(m[0].outliers(), vec![Outlier { run: 3, value: 0.9 }]);
        assert_eq!(describe_outliers(&m[0].outliers()), "run 3 = 0.9");
    }

    #[test]
    fn counters_sum_over_cpus_in_documented_order() {
        let log = Log::parse(LOG);
        let run = |run, ok| RunRecord {
            run,
            exit: String::new(),
            ok,
            wall_s: 1.0,
            results: vec![],
            schedstat_delta: schedstat_deltas(&log),
            hist: vec![],
        };
        let t = schedstat_totals(&run(0, true));
        assert_eq!(t.get("cpu"), None, "cpu numbers are not summed");
        assert_eq!((t["sched_count"], t["ttwu_count"], t["yld_count"]), (5979, 3526, 0));
        let c = by_counter(&[run(0, true), run(1, false), run(2, true)]);
        let names: Vec<&str> = c.iter().map(|s| s.figure.metric.as_str()).collect();
        assert_eq!(names, ["yld_count", "sched_count", "ttwu_count"], "CONSOLE.md order, not name order");
        assert_eq!(c[1].values, vec![5979.0, 5979.0]);
        assert_eq!(c[1].runs, vec![0, 2], "the failed run 1 is skipped");
        assert_eq!((counter_unit("run_delay"), counter_unit("ticks")), ("ns", "count"));
        assert_eq!((counter_unit("idle_wait_ns"), counter_unit("idle_wait_mc_ns")), ("ns", "ns"));
        let none = RunRecord { schedstat_delta: vec![], ..run(3, true) };
        assert!(by_counter(&[none]).is_empty(), "no schedstat_delta lines: no counters, not zeros");
    }
}
