//! What `compare` prints below its rows: the mmtests-style tables of results and of
//! `schedstat_delta` counters, the legend saying what `*` and `exact` mean, and the notes
//! (one tick phase sampled, metrics only one side printed, outlier runs, sample sizes that can
//! never be significant).

use std::fmt::Write as _;

use super::{Method, Row, ALPHA};
use crate::results::{self, RunRecord};
use crate::stats;

/// The table, mmtests style: `(x.xx%)` normally, `* x.xx%*` when significant; `exact` in the p
/// column for [`Row::exact`] rows.
pub fn table(rows: &[Row]) -> String {
    render(rows, "metric", 14, |v| format!("{v:.3}"))
}

/// The header line of [`counter_table`]: what the rows are and that their change has no
/// better or worse.
pub fn counter_header(method: Method) -> String {
    let central = match method {
        Method::Means => "Amean",
        Method::Robust => "Median",
    };
    format!(
        "schedstat_delta, summed over CPUs (counts; ns for rq_cpu_time, run_delay and the *_ns idle times), {central} per side; \
         change = new/base - 1, no better or worse; * and exact as above; counters zero in every run left out"
    )
}

/// The counter rows in the layout of [`table`] (a wider name column, one decimal: they are
/// counts and nanoseconds), under [`counter_header`].
pub fn counter_table(rows: &[Row], method: Method) -> String {
    format!("{}\n{}", counter_header(method), render(rows, "counter", 21, |v| format!("{v:.1}")))
}

/// The rows under a header; the name column is `name_w` wide, or as wide as the longest name.
fn render(rows: &[Row], name: &str, name_w: usize, num: fn(f64) -> String) -> String {
    let name_w = rows.iter().map(|r| r.metric.len()).fold(name_w, usize::max);
    // The cells first: a large counter or a change of 10,000% or more widens its column for
    // every row, so the columns stay aligned.
    let cells: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            let base = format!("{:>12} ({:>7.2}%)", num(r.base), 0.0);
            let new = if r.significant {
                format!("{:>12} *{:>7.2}%*", num(r.new), r.pdiff)
            } else {
                format!("{:>12} ({:>7.2}%)", num(r.new), r.pdiff)
            };
            let p = if r.exact { "exact".to_string() } else { r.p_value.map_or("-".to_string(), |p| format!("{p:.4}")) };
            (base, new, p)
        })
        .collect();
    let base_w = cells.iter().map(|c| c.0.len()).fold(23, usize::max);
    let new_w = cells.iter().map(|c| c.1.len()).fold(23, usize::max);
    let mut s = format!("{:<6} {:<name_w$} {:<14} {:>base_w$} {:>new_w$}  {:<8} {}\n", "", name, "point", "base", "new", "unit", "p");
    for (r, (base, new, p)) in rows.iter().zip(&cells) {
        let _ = writeln!(
            s,
            "{:<6} {:<name_w$} {:<14} {:>base_w$} {:>new_w$}  {:<8} {}",
            r.central,
            r.metric,
            if r.point.is_empty() { "-" } else { &r.point },
            base,
            new,
            r.unit,
            p
        );
    }
    s
}

/// What `exact` in the p column means ([`Row::exact`]), for the legend.
pub const EXACT_MEANS: &str = "every run of each side gave the same figure (--icount and --engine sim are deterministic), \
     so the change is exact for the tick phases run and no test applies; --phases runs each at another phase";

/// What the table shows and what `*` means; with `exact_rows` (some row is [`Row::exact`]), also
/// what `exact` means: a legend line about a marker the table does not use would only be noise.
pub fn legend(method: Method, exact_rows: bool) -> String {
    let base = match method {
        Method::Means => format!(
            "Hmean for higher-is-better metrics, Amean otherwise; % is the change, positive = better; \
             * = significant: Welch's two-sided t-test, p < {ALPHA} (runs as samples)"
        ),
        Method::Robust => format!(
            "Median for every metric; % is the change, positive = better; * = significant: two-sided \
             Mann-Whitney U test, p < {ALPHA} (exact up to {} runs per side, else normal approximation)",
            stats::MANN_WHITNEY_EXACT_MAX
        ),
    };
    if exact_rows {
        format!("{base}; p exact = {EXACT_MEANS}")
    } else {
        base
    }
}

/// Under `--icount` without `--phases`, when a row is [`Row::exact`]: a note that the runs
/// sampled one tick phase, so a row's change may be another at another phase.
pub fn phase_note(rows: &[Row], icount: bool, phases: bool) -> String {
    if !icount || phases || !rows.iter().any(|r| r.exact) {
        return String::new();
    }
    "note: the rows marked exact are exact for one tick phase: every run of a side started its workload \
     at the same point of the tick and gave the same figure; add --phases to run each at another phase and see the spread\n"
        .to_string()
}

/// One line per metric, side and sweep point with outlier runs (run numbers as in the side's
/// runs.csv and its logs `SIDE-POINT-N.log`). Means and the t-test are what such a run
/// misleads, so those lines are warnings that point at `--robust`; under `--robust` they are
/// notes.
pub fn outlier_lines(rows: &[Row], method: Method) -> String {
    let mut s = String::new();
    for r in rows {
        for (side, outliers) in [("base", &r.base_outliers), ("new", &r.new_outliers)] {
            if outliers.is_empty() {
                continue;
            }
            let at = if r.point.is_empty() { String::new() } else { format!(" at {}", r.point) };
            let what = results::describe_outliers(outliers);
            let _ = match method {
                Method::Means => writeln!(
                    s,
                    "warning: {}{at}, {side}: outlier {what}; it drags the {} and swells Welch's variance: \
                     rerun with --robust (median, Mann-Whitney)",
                    r.metric, r.central
                ),
                Method::Robust => {
                    writeln!(s, "note: {}{at}, {side}: outlier {what}; the median and Mann-Whitney use only its rank", r.metric)
                }
            };
        }
    }
    s
}

/// Under `--robust`: a note for each pair of sample sizes at which no p-value can fall below
/// [`ALPHA`] (3 runs per side: the exact test's smallest p is 0.1), rather than a table that
/// silently never marks anything. [`Row::exact`] rows are not tested, so more runs would not
/// change them: they are left out.
pub fn out_of_reach_notes(rows: &[Row], method: Method) -> String {
    if method != Method::Robust {
        return String::new();
    }
    let mut sizes: Vec<(usize, usize)> = rows.iter().filter(|r| !r.exact).map(|r| (r.n_base, r.n_new)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = String::new();
    for (nb, nn) in sizes {
        let min_p = stats::mann_whitney_min_p(nb, nn);
        if min_p >= ALPHA {
            let _ = writeln!(
                s,
                "note: with {nb} base and {nn} new runs the smallest two-sided Mann-Whitney p is {min_p:.4}, \
                 so nothing can be marked significant at p < {ALPHA}: use --runs {} or more",
                stats::mann_whitney_runs_needed(ALPHA)
            );
        }
    }
    s
}

/// The test behind `*`, for the plots' subtitles.
pub(super) fn test_name(method: Method) -> &'static str {
    match method {
        Method::Means => "Welch's two-sided t-test",
        Method::Robust => "two-sided Mann-Whitney U test",
    }
}

/// A note naming the `@fw result` metrics and `schedstat_delta` counters that only one side
/// printed at `point` (in its successful runs): they get no row, and a kernel from another
/// revision may well print one the other lacks (a counter a patch adds). Empty when both sides
/// printed the same names.
pub fn one_sided_note(point: &str, base: &[RunRecord], new: &[RunRecord]) -> String {
    let names = |runs: &[RunRecord]| {
        let mut v: Vec<String> = results::by_metric(runs).into_iter().map(|s| format!("result {}", s.figure.metric)).collect();
        v.extend(results::by_counter(runs).into_iter().map(|s| format!("counter {}", s.figure.metric)));
        v
    };
    let (b, n) = (names(base), names(new));
    let at = if point.is_empty() { String::new() } else { format!(" at {point}") };
    let mut s = String::new();
    for (side, mine, theirs) in [("base", &b, &n), ("new", &n, &b)] {
        let only: Vec<&str> = mine.iter().filter(|m| !theirs.contains(m)).map(String::as_str).collect();
        if !only.is_empty() {
            s += &format!("note: only the {side} side printed{at}: {} (no rows for them)\n", only.join(", "));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;

    #[test]
    fn metrics_and_counters_of_one_side_only_are_named() {
        let mut b = run(&[("time", 2.0, false), ("old_metric", 1.0, true)]);
        let n = run(&[("time", 1.9, false)]);
        b.schedstat_delta = vec![[("cpu".to_string(), 0u64), ("ttwu_count".to_string(), 5)].into_iter().collect()];
        let mut n2 = n.clone();
        n2.schedstat_delta = vec![[("cpu".to_string(), 0u64), ("ttwu_count".to_string(), 4), ("new_counter".to_string(), 0)].into_iter().collect()];
        assert_eq!(
            one_sided_note("groups=2", &[b.clone()], &[n2]),
            "note: only the base side printed at groups=2: result old_metric (no rows for them)\n\
             note: only the new side printed at groups=2: counter new_counter (no rows for them)\n"
        );
        assert_eq!(one_sided_note("", &[b.clone()], &[b.clone()]), "", "the same names: no note");
        // a failed run's figures count for neither side, as in the rows
        let mut failed = n.clone();
        failed.ok = false;
        assert!(one_sided_note("", &[b], &[failed]).contains("only the base side printed: result time, result old_metric"));
    }
}
