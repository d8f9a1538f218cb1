//! `compare`'s latency distributions: when both sides' logs have `@fw hist` buckets, one chart
//! per hist kind and sweep point (`latency-<kind>.svg`, or `latency-<kind>-<param>-<value>.svg`
//! with `--sweep`), each side's buckets pooled over its runs at that point and drawn as a
//! complementary CDF: the fraction of samples at or above x.

use super::sweep::file_safe;
use crate::plot::{CcdfChart, CcdfSeries};
use crate::results::{bucket_kinds, pool_buckets, RunRecord};

/// One side's `@fw hist` buckets of one kind, added up over its successful runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pooled {
    /// `(lo_us, hi_us, count)`, ascending; a bucket several runs have is one, its counts added.
    pub buckets: Vec<(u64, u64, u64)>,
    /// The successful runs that printed this kind.
    pub runs: usize,
}

impl Pooled {
    pub fn total(&self) -> u64 {
        self.buckets.iter().map(|b| b.2).sum()
    }
}

/// The buckets of `kind` over the successful `runs` (a failed boot's samples are left out, as
/// its figures are from the tables).
pub fn pool(runs: &[RunRecord], kind: &str) -> Pooled {
    let ok = || runs.iter().filter(|r| r.ok);
    Pooled {
        buckets: pool_buckets(ok().flat_map(|r| &r.hist), kind),
        runs: ok().filter(|r| r.hist.iter().any(|b| b.kind == kind)).count(),
    }
}

/// The hist kinds both sides printed (in a successful run), in the order base first printed them.
pub fn kinds(base: &[RunRecord], new: &[RunRecord]) -> Vec<String> {
    let of = |runs: &[RunRecord]| bucket_kinds(runs.iter().filter(|r| r.ok).flat_map(|r| &r.hist));
    let theirs = of(new);
    of(base).into_iter().filter(|k| theirs.contains(k)).collect()
}

/// The complementary CDF of pooled buckets as `(x us, fraction of samples >= x)`, exact at
/// every bucket edge: at a bucket's `lo` the fraction in it and above, at its `hi` the fraction
/// above it; straight lines between make a curve that falls across each bucket and is flat
/// over empty stretches. It starts at 1 and ends at 0 after the last bucket; empty for none.
pub fn ccdf(buckets: &[(u64, u64, u64)]) -> Vec<(f64, f64)> {
    let total: u64 = buckets.iter().map(|b| b.2).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut left = total;
    let mut pts = Vec::with_capacity(2 * buckets.len());
    for &(lo, hi, c) in buckets {
        pts.push((lo as f64, left as f64 / total as f64));
        left -= c;
        pts.push((hi as f64, left as f64 / total as f64));
    }
    pts
}

/// `latency-<kind>.svg`, with `-<param>-<value>` for a sweep point, characters other than
/// letters, digits, `-` and `_` as `_`.
fn dist_file_name(kind: &str, point: &str) -> String {
    let at = point.split_once('=').map_or(String::new(), |(k, v)| format!("-{k}-{v}"));
    format!("latency-{}.svg", file_safe(&format!("{kind}{at}")))
}

/// One chart per hist kind both sides printed at each sweep point (`base` and `new` are each
/// side's runs per point, as `compare` keeps them), with its file name. `title` names the
/// workload and common settings; `base_settings` and `new_settings` the sides.
pub fn dist_charts(
    title: &str,
    base_settings: &str,
    new_settings: &str,
    base: &[(String, Vec<RunRecord>)],
    new: &[(String, Vec<RunRecord>)],
) -> Vec<(String, CcdfChart)> {
    let side = |tag: &str, s: &str, p: &Pooled| {
        let what = if s.is_empty() { "(no extra settings)" } else { s };
        let max = p.buckets.last().map_or(String::new(), |b| format!("; slowest bucket {}-{} us", b.0, b.1));
        let runs = if p.runs == 1 { "1 run".to_string() } else { format!("{} runs", p.runs) };
        CcdfSeries { label: format!("{tag}: {what} ({} samples, {runs}{max})", p.total()), points: ccdf(&p.buckets) }
    };
    let mut out = Vec::new();
    for ((pt, b), (_, n)) in base.iter().zip(new) {
        for kind in kinds(b, n) {
            let (pb, pn) = (pool(b, &kind), pool(n, &kind));
            if pb.total() == 0 || pn.total() == 0 {
                continue;
            }
            let at = if pt.is_empty() { String::new() } else { format!(" at {pt}") };
            let chart = CcdfChart {
                title: format!("{title}: {kind} latency{at}"),
                subtitle: "complementary CDF of the @fw hist buckets, pooled over the runs of each side; \
                           exact at bucket edges, straight within a bucket"
                    .to_string(),
                x_desc: format!("{kind} latency (us, log scale)"),
                base: side("base", base_settings, &pb),
                new: side("new", new_settings, &pn),
            };
            out.push((dist_file_name(&kind, pt), chart));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Bucket;

    fn run(ok: bool, hist: &[(&str, u64, u64, u64)]) -> RunRecord {
        RunRecord {
            run: 0,
            exit: String::new(),
            ok,
            wall_s: 0.0,
            results: vec![],
            schedstat_delta: vec![],
            hist: hist.iter().map(|&(k, lo, hi, count)| Bucket { kind: k.into(), lo_us: lo, hi_us: hi, count }).collect(),
        }
    }

    #[test]
    fn pooling_adds_the_same_bucket_of_every_successful_run_and_keeps_kinds_apart() {
        let runs = [
            run(true, &[("wakeup", 2, 3, 200), ("wakeup", 3, 4, 97), ("wakeup", 960, 1024, 3), ("request", 300, 320, 5)]),
            run(true, &[("wakeup", 2, 3, 210), ("wakeup", 3, 4, 88), ("wakeup", 512, 576, 1), ("wakeup", 960, 1024, 1)]),
            run(false, &[("wakeup", 2, 3, 1000)]),
        ];
        let p = pool(&runs, "wakeup");
        assert_eq!(p.buckets, vec![(2, 3, 410), (3, 4, 185), (512, 576, 1), (960, 1024, 4)], "the failed run is left out");
        assert_eq!((p.total(), p.runs), (600, 2));
        let r = pool(&runs, "request");
        assert_eq!((r.buckets.clone(), r.runs), (vec![(300, 320, 5)], 1), "only the run that printed it");
        assert_eq!(pool(&runs, "none"), Pooled { buckets: vec![], runs: 0 });
    }

    #[test]
    fn ccdf_is_exact_at_bucket_edges_from_one_to_zero() {
        let pts = ccdf(&[(2, 3, 410), (3, 4, 185), (512, 576, 1), (960, 1024, 4)]);
        let want = [
            (2.0, 1.0),
            (3.0, 190.0 / 600.0),
            (3.0, 190.0 / 600.0),
            (4.0, 5.0 / 600.0),
            (512.0, 5.0 / 600.0),
            (576.0, 4.0 / 600.0),
            (960.0, 4.0 / 600.0),
            (1024.0, 0.0),
        ];
        assert_eq!(pts.len(), want.len());
        for (got, want) in pts.iter().zip(want) {
            assert_eq!(got.0, want.0);
            assert!((got.1 - want.1).abs() < 1e-12, "{pts:?}");
        }
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 >= w[1].1), "x rises, the fraction falls");
        assert!(ccdf(&[]).is_empty() && ccdf(&[(1, 2, 0)]).is_empty(), "no samples, no curve");
    }

    #[test]
    fn one_chart_per_kind_both_sides_printed_and_point() {
        let b = vec![run(true, &[("wakeup", 2, 3, 297), ("wakeup", 960, 1024, 3), ("request", 300, 320, 5)]); 2];
        let n = vec![run(true, &[("wakeup", 2, 3, 298), ("wakeup", 512, 576, 2)]); 2];
        let side = |runs: &Vec<RunRecord>| vec![(String::new(), runs.clone())];
        let charts = dist_charts("latency cpu=0, -smp 1", "sched_features=NO_PREEMPT_SHORT", "", &side(&b), &side(&n));
        assert_eq!(charts.len(), 1, "request: base only");
        let (name, c) = &charts[0];
        assert_eq!(name, "latency-wakeup.svg");
        assert_eq!(c.title, "latency cpu=0, -smp 1: wakeup latency");
        assert_eq!(c.base.label, "base: sched_features=NO_PREEMPT_SHORT (600 samples, 2 runs; slowest bucket 960-1024 us)");
        assert_eq!(c.new.label, "new: (no extra settings) (600 samples, 2 runs; slowest bucket 512-576 us)");
        assert_eq!(c.base.points[2], (960.0, 0.01), "3 of 300 per run: 1% at or above 960 us");
        assert_eq!(c.new.points[2], (512.0, 2.0 / 300.0));
        // A sweep: one chart per point, named after it, each pooling only that point's runs.
        let sweep = |runs: &Vec<RunRecord>, other: &Vec<RunRecord>| vec![("slice_us=300".to_string(), runs.clone()), ("slice_us=100".to_string(), other.clone())];
        let charts = dist_charts("t", "a", "b", &sweep(&b, &n), &sweep(&n, &n));
        let names: Vec<&str> = charts.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["latency-wakeup-slice_us-300.svg", "latency-wakeup-slice_us-100.svg"]);
        assert!(charts[0].1.title.ends_with("wakeup latency at slice_us=300"));
        assert!(charts[0].1.base.label.contains("slowest bucket 960-1024 us") && charts[1].1.base.label.contains("512-576"));
        let none = vec![run(true, &[])];
        assert!(dist_charts("t", "a", "b", &side(&none), &side(&n)).is_empty(), "no hist on one side, no chart");
        assert_eq!(dist_file_name("wake up/x", "p=1,2"), "latency-wake_up_x-p-1_2.svg");
    }
}
