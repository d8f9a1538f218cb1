//! A bench's figures over its runs: the summary table (mean, spread, median,
//! extremes per metric), the runs far off the others, and the runs whose
//! figures differ where none should (deterministic boots).

use std::fmt::Write as _;

use serde::Serialize;

use crate::results::{self, Outlier, RunRecord};
use crate::stats;

/// One metric summarized over runs.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub metric: String,
    pub mean: f64,
    pub stddev: f64,
    /// Robust to a single far-off boot (a VM losing its host cores).
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub unit: String,
    pub higher_is_better: bool,
    pub n: usize,
    /// Runs far off the others ([`stats::outliers`]): they move mean and stddev, not the median.
    pub outliers: Vec<Outlier>,
}

pub fn summarize(runs: &[RunRecord]) -> Vec<Summary> {
    results::by_metric(runs)
        .into_iter()
        .map(|s| {
            let v = &s.values;
            Summary {
                mean: stats::amean(v),
                stddev: stats::stddev(v),
                median: stats::median(v),
                min: stats::min(v),
                max: stats::max(v),
                n: v.len(),
                outliers: s.outliers(),
                metric: s.figure.metric,
                unit: s.figure.unit,
                higher_is_better: s.figure.higher_is_better,
            }
        })
        .collect()
}

/// One row per metric; the metric and unit columns widen to their longest entry.
pub fn summary_table(rows: &[Summary]) -> String {
    let unit = |r: &Summary| format!("{} ({})", r.unit, if r.higher_is_better { "higher" } else { "lower" });
    let w = rows.iter().map(|r| r.metric.len()).fold(16, usize::max);
    let uw = rows.iter().map(|r| unit(r).len()).fold(10, usize::max);
    let mut s = format!(
        "{:<w$} {:>12} {:>12} {:>12} {:>12} {:>12}  {:<uw$} {}\n",
        "metric", "mean", "stddev", "median", "min", "max", "unit", "n"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<w$} {:>12.3} {:>12.3} {:>12.3} {:>12.3} {:>12.3}  {:<uw$} {}",
            r.metric,
            r.mean,
            r.stddev,
            r.median,
            r.min,
            r.max,
            unit(r),
            r.n
        );
    }
    s
}

/// The lines under the summary table naming each metric's outlier runs; empty when none.
pub fn outlier_lines(rows: &[Summary]) -> String {
    let mut s = String::new();
    for r in rows.iter().filter(|r| !r.outliers.is_empty()) {
        let _ = writeln!(s, "  {:<16} {}", r.metric, results::describe_outliers(&r.outliers));
    }
    if !s.is_empty() {
        s.insert_str(
            0,
            &format!(
                "\noutliers (|x - median| > {} x {} x MAD and > {}% of the median; run numbers as in runs.csv and \
                 run-N.log):\n",
                stats::OUTLIER_Z,
                stats::MAD_TO_SIGMA,
                stats::OUTLIER_MIN_FRACTION * 100.0
            ),
        );
    }
    s
}

/// Runs whose figures differ from the first run's (deterministic mode expects none).
pub fn differing_runs(runs: &[RunRecord]) -> Vec<String> {
    let key = |r: &RunRecord| r.results.iter().map(|f| (f.metric.clone(), f.value.to_bits())).collect::<Vec<_>>();
    let Some(first) = runs.first() else { return vec![] };
    let k0 = key(first);
    runs.iter()
        .skip(1)
        .filter(|r| key(r) != k0)
        .map(|r| {
            let a: Vec<String> = first.results.iter().map(|f| format!("{}={}", f.metric, f.value)).collect();
            let b: Vec<String> = r.results.iter().map(|f| format!("{}={}", f.metric, f.value)).collect();
            format!("run {} [{}] differs from run 0 [{}]", r.run, b.join(" "), a.join(" "))
        })
        .collect()
}
