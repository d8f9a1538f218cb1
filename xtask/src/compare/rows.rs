//! The rows of `compare`'s tables: one per `@fw result` metric and per `schedstat_delta`
//! counter that both sides printed at a sweep point, each side summarised (Hmean/Amean, or the
//! median with `--robust`), the change, and Welch's or Mann-Whitney's p, or `exact` when every
//! run of each side gave the same figure.

use serde::Serialize;

use super::{Method, ALPHA};
use crate::results::{self, Outlier, RunRecord, Samples};
use crate::stats;

/// [`Row::kind`] of the rows of `@fw result` metrics.
pub const RESULT: &str = "result";
/// [`Row::kind`] of the rows of `@fw schedstat_delta` counters, summed over CPUs.
pub const COUNTER: &str = "schedstat_delta";

/// One table row: a metric (or counter) at a sweep point.
#[derive(Debug, Serialize)]
pub struct Row {
    /// [`RESULT`] or [`COUNTER`]: what tells the two apart in compare.json.
    pub kind: &'static str,
    pub point: String,
    pub metric: String,
    pub unit: String,
    /// `None` (JSON `null`) for counters, which have no better direction.
    pub higher_is_better: Option<bool>,
    /// What `base` and `new` are: `Hmean`, `Amean` or `Median`.
    pub central: &'static str,
    pub base: f64,
    pub new: f64,
    pub base_stddev: f64,
    pub new_stddev: f64,
    /// The spread of each side's runs: the whiskers of the `--sweep` plots.
    pub base_min: f64,
    pub base_max: f64,
    pub new_min: f64,
    pub new_max: f64,
    /// Results: the change in %, positive = better ([`stats::pdiff`]). Counters: the plain
    /// change `new/base - 1` in % ([`stats::change`]; `null` in JSON when base is 0 and new is not).
    pub pdiff: f64,
    /// Welch's t-test or, with [`Method::Robust`], Mann-Whitney's; `None` when a side has too
    /// few runs for the test, and for [`Row::exact`] rows.
    pub p_value: Option<f64>,
    /// p < [`ALPHA`]; never for [`Row::exact`] rows.
    pub significant: bool,
    /// Every run of each side gave the same figure ([`is_exact`]): the change is exact for the
    /// tick phases run, not a statistical finding, so the row has no p and no `*`.
    pub exact: bool,
    pub n_base: usize,
    pub n_new: usize,
    /// Runs far off the rest of their side ([`stats::outliers`]).
    pub base_outliers: Vec<Outlier>,
    pub new_outliers: Vec<Outlier>,
}

/// Whether a row is exact: each side has at least one run, every run of a side gave the same
/// figure, and either each side has two or more runs or the runs are under `--icount`.
///
/// Identical runs have no spread, so a test has nothing to weigh the difference against:
/// Welch's p is 0 for any difference (even a few ns), and Mann-Whitney's is its smallest. Under
/// `--icount` every boot of one command line is the same run, so the sides' figures are exact,
/// but only for the tick phase each run started at; `--phases` runs each at another phase.
/// With one run per side, the runs' agreement cannot be seen, so only `icount` (every boot is
/// then known to repeat) makes such a row exact; otherwise Welch gives no p (`-`) as before.
/// Two or more identical runs per side are exact without `--icount` too (a count fixed by the
/// workload, say): a test would mislead there just the same.
pub fn is_exact(base: &[f64], new: &[f64], icount: bool) -> bool {
    let same = |x: &[f64]| !x.is_empty() && min(x) == max(x);
    same(base) && same(new) && (icount || (base.len() >= 2 && new.len() >= 2))
}

/// The row of one metric or counter; `kind` is [`RESULT`] or [`COUNTER`]; `icount`: the runs
/// were under `--icount` (see [`is_exact`]).
fn row(kind: &'static str, point: &str, bs: &Samples, ns: &Samples, method: Method, icount: bool) -> Row {
    let f = &bs.figure;
    let counter = kind == COUNTER;
    let (b, n) = (&bs.values, &ns.values);
    let (central, centre): (_, fn(&[f64]) -> f64) = match method {
        Method::Robust => ("Median", stats::median),
        Method::Means if f.higher_is_better && !counter => ("Hmean", stats::hmean),
        Method::Means => ("Amean", stats::amean),
    };
    let exact = is_exact(b, n, icount);
    // Exact sides are their one figure (a mean of copies can round off it).
    let (cb, cn) = if exact { (b[0], n[0]) } else { (centre(b), centre(n)) };
    let p = match method {
        _ if exact => None,
        Method::Means => stats::welch_p(b, n),
        Method::Robust => stats::mann_whitney_p(b, n),
    };
    Row {
        kind,
        point: point.to_string(),
        metric: f.metric.clone(),
        unit: f.unit.clone(),
        higher_is_better: (!counter).then_some(f.higher_is_better),
        central,
        base: cb,
        new: cn,
        base_stddev: stats::stddev(b),
        new_stddev: stats::stddev(n),
        base_min: min(b),
        base_max: max(b),
        new_min: min(n),
        new_max: max(n),
        pdiff: if counter { stats::change(cb, cn) } else { stats::pdiff(cb, cn, f.higher_is_better) },
        p_value: p,
        significant: p.is_some_and(|p| p < ALPHA),
        exact,
        n_base: b.len(),
        n_new: n.len(),
        base_outliers: bs.outliers(),
        new_outliers: ns.outliers(),
    }
}

fn min(x: &[f64]) -> f64 {
    x.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(x: &[f64]) -> f64 {
    x.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// The rows of the `@fw result` metrics both sides printed; `icount`: the runs were under
/// `--icount` (see [`is_exact`]).
pub fn rows(point: &str, base: &[RunRecord], new: &[RunRecord], method: Method, icount: bool) -> Vec<Row> {
    let new_samples = results::by_metric(new);
    results::by_metric(base)
        .iter()
        .filter_map(|bs| {
            let ns = new_samples.iter().find(|g| g.figure.metric == bs.figure.metric)?;
            Some(row(RESULT, point, bs, ns, method, icount))
        })
        .collect()
}

/// The rows of the `@fw schedstat_delta` counters, summed over CPUs per run, that both sides
/// printed and that are not zero in every run of both; `icount` as for [`rows`].
pub fn counter_rows(point: &str, base: &[RunRecord], new: &[RunRecord], method: Method, icount: bool) -> Vec<Row> {
    let new_samples = results::by_counter(new);
    results::by_counter(base)
        .iter()
        .filter_map(|bs| {
            let ns = new_samples.iter().find(|g| g.figure.metric == bs.figure.metric)?;
            if bs.values.iter().chain(&ns.values).all(|&v| v == 0.0) {
                return None;
            }
            Some(row(COUNTER, point, bs, ns, method, icount))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::report::*;
    use crate::compare::tests::run;

    #[test]
    fn rows_use_hmean_for_rates_and_mark_significance() {
        let base: Vec<_> = [1.0, 1.1, 0.9].iter().map(|&t| run(&[("time", t, false), ("rps", 100.0 + t, true)])).collect();
        let new: Vec<_> = [(2.0, 101.1), (2.1, 100.9), (1.9, 101.0)]
            .iter()
            .map(|&(t, r)| run(&[("time", t, false), ("rps", r, true)]))
            .collect();
        let r = rows("groups=1", &base, &new, Method::Means, false);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].central, "Amean");
        assert!((r[0].pdiff + 100.0).abs() < 1e-9, "twice the time is 100% worse");
        assert!(r[0].significant);
        assert_eq!(r[1].central, "Hmean");
        assert!(!r[1].significant, "rps did not move beyond noise");
        let t = table(&r);
        assert!(t.contains("*-100.00%*"), "{t}");
        assert!(t.contains("(   0.00%)"), "{t}");
        assert_eq!(outlier_lines(&r, Method::Means), "");
        assert_eq!(out_of_reach_notes(&r, Method::Means), "", "Welch can reach p < 0.05 with 3 runs");
        // A name longer than the column widens it for every row, so the columns stay aligned.
        let long: Vec<_> = [3.0, 2.0, 3.0].iter().map(|&v| run(&[("wakeup_over_2slice", v, false), ("rps", 100.0, true)])).collect();
        let t = table(&rows("", &long, &long, Method::Means, false));
        let starts: Vec<Option<usize>> = t.lines().map(|l| l.find(" -  ").or(l.find(" point "))).collect();
        assert!(starts.iter().all(|&c| c.is_some() && c == starts[0]), "{t}");
    }

    /// Runs of `usecs` (lower is better) and `ops` (higher is better), one pair per run.
    fn pipe_side(vals: &[(f64, f64)]) -> Vec<RunRecord> {
        vals.iter().enumerate().map(|(i, &(us, ops))| RunRecord { run: i, ..run(&[("usecs", us, false), ("ops", ops, true)]) }).collect()
    }

    #[test]
    fn identical_runs_per_side_are_exact_not_significant() {
        // Deterministic (-icount) runs: every run of a side the same; the sides 14 ns apart.
        let base = pipe_side(&[(3.186, 313_833.5); 4]);
        let new = pipe_side(&[(3.172, 315_300.1); 4]);
        for method in [Method::Means, Method::Robust] {
            for icount in [false, true] {
                let r = rows("", &base, &new, method, icount);
                assert!(r.iter().all(|r| r.exact && !r.significant && r.p_value.is_none()), "{method:?} {icount}: {r:?}");
                assert_eq!((r[0].base, r[0].new), (3.186, 3.172), "each side's one figure");
                assert!(r[0].pdiff > 0.4, "less time is better: {}", r[0].pdiff);
                let t = table(&r);
                assert!(t.contains("       3.172 (   0.44%)  u        exact"), "{t}");
                assert!(t.lines().skip(1).all(|l| l.ends_with(" exact") && !l.contains('*')), "{t}");
            }
        }
        // Welch alone would star it: zero variance makes p = 0 for any difference.
        let usecs = |side: &[RunRecord]| -> Vec<f64> { side.iter().map(|r| r.results[0].value).collect() };
        assert_eq!(stats::welch_p(&usecs(&base), &usecs(&new)), Some(0.0));
        let json = serde_json::to_value(&rows("", &base, &new, Method::Means, true)[0]).unwrap();
        assert_eq!((json["exact"].as_bool(), json["significant"].as_bool(), json["p_value"].is_null()), (Some(true), Some(false), true));
        assert!(legend(Method::Means, true).contains("p exact = every run of each side gave the same figure"));
        assert!(legend(Method::Robust, true).contains("--phases runs each at another phase"));
        assert!(!legend(Method::Means, false).contains("exact =") && !legend(Method::Robust, false).contains("p exact"));
    }

    #[test]
    fn identical_figures_on_both_sides_are_exact_with_no_change() {
        // 0.1 three times: its mean rounds to 0.10000000000000002, the exact row keeps 0.1.
        let side = pipe_side(&[(0.1, 0.1); 3]);
        for method in [Method::Means, Method::Robust] {
            let r = rows("", &side, &side, method, true);
            assert!(r.iter().all(|r| r.exact && r.pdiff == 0.0 && r.base == 0.1 && r.new == 0.1), "{method:?}: {r:?}");
            assert!(table(&r).contains("(   0.00%)  u        exact"), "{}", table(&r));
        }
    }

    #[test]
    fn one_run_per_side_is_exact_only_under_icount() {
        let (base, new) = (pipe_side(&[(3.186, 313_833.5)]), pipe_side(&[(3.172, 315_300.1)]));
        let plain = rows("", &base, &new, Method::Means, false);
        assert!(plain.iter().all(|r| !r.exact && r.p_value.is_none() && !r.significant), "{plain:?}");
        assert!(table(&plain).lines().skip(1).all(|l| l.ends_with("  u        -")), "{}", table(&plain));
        let icount = rows("", &base, &new, Method::Means, true);
        assert!(icount.iter().all(|r| r.exact && r.p_value.is_none() && !r.significant), "{icount:?}");
        // One side of one run, the other of two identical ones: without --icount the lone run
        // says nothing about repeating.
        let two = pipe_side(&[(3.172, 315_300.1); 2]);
        assert!(rows("", &base, &two, Method::Means, false).iter().all(|r| !r.exact));
        assert!(rows("", &base, &two, Method::Means, true).iter().all(|r| r.exact));
    }

    #[test]
    fn a_side_whose_runs_vary_takes_the_test() {
        let base = pipe_side(&[(3.186, 313_833.5); 4]);
        let new = pipe_side(&[(3.0, 333_000.0), (3.01, 332_000.0), (2.99, 334_000.0), (3.0, 333_500.0)]);
        for icount in [false, true] {
            let r = rows("", &base, &new, Method::Means, icount);
            assert!(r.iter().all(|r| !r.exact && r.significant && r.p_value.is_some_and(|p| p > 0.0 && p < ALPHA)), "{r:?}");
            assert!(table(&r).contains("3.000 *   5.84%*"), "{}", table(&r));
            assert_eq!(phase_note(&r, icount, false), "", "no exact row, no note");
        }
        // One run off by the last digit is enough.
        let mut almost = base.clone();
        almost[3].results[0].value = 3.187;
        let r = rows("", &almost, &base, Method::Means, true);
        assert!(!r[0].exact && r[1].exact, "{r:?}");
    }

    #[test]
    fn exact_rows_under_icount_without_phases_get_one_note() {
        let (base, new) = (pipe_side(&[(3.186, 313_833.5); 3]), pipe_side(&[(3.172, 315_300.1); 3]));
        let r = rows("", &base, &new, Method::Robust, true);
        let note = phase_note(&r, true, false);
        assert_eq!(note.lines().count(), 1, "one note for all rows: {note}");
        assert!(note.starts_with("note: the rows marked exact are exact for one tick phase") && note.contains("add --phases"), "{note}");
        assert_eq!(phase_note(&r, true, true), "", "--phases already samples the phase");
        assert_eq!(phase_note(&r, false, false), "", "--phases needs --icount");
        // 3 + 3 runs: no Mann-Whitney p can reach 0.05, but exact rows are not tested, and more
        // runs would not change them.
        assert_eq!(out_of_reach_notes(&r, Method::Robust), "");
    }

    /// rps per run: base has one boot where the host took the cores (run 2), new is 10% faster.
    fn lost_host() -> (Vec<RunRecord>, Vec<RunRecord>) {
        let side = |vals: &[f64]| -> Vec<RunRecord> {
            vals.iter().enumerate().map(|(i, &v)| RunRecord { run: i, ..run(&[("rps", v, true), ("time", 1e4 / v, false)]) }).collect()
        };
        (side(&[100.0, 101.0, 20.0, 102.0, 103.0]), side(&[110.0, 111.0, 112.0, 113.0, 114.0]))
    }

    #[test]
    fn one_far_off_boot_hides_a_change_from_the_means_and_not_from_robust_rows() {
        let (base, new) = lost_host();
        let means = rows("", &base, &new, Method::Means, false);
        assert!(!means[0].significant, "the outlier's variance drowns the shift: p = {:?}", means[0].p_value);
        assert!(means[0].pdiff > 40.0, "and the Hmean of base falls to 54: {}", means[0].pdiff);
        let warn = outlier_lines(&means, Method::Means);
        assert_eq!(warn.lines().count(), 2, "rps and time of base: {warn}");
        assert!(warn.starts_with("warning: rps, base: outlier run 2 = 20; it drags the Hmean and swells Welch's"), "{warn}");
        assert!(warn.contains("--robust"), "{warn}");

        let robust = rows("", &base, &new, Method::Robust, false);
        let (rps, time) = (&robust[0], &robust[1]);
        assert_eq!((rps.central, rps.base, rps.new), ("Median", 101.0, 112.0));
        assert!((rps.pdiff - (112.0 / 101.0 * 100.0 - 100.0)).abs() < 1e-9);
        // Complete separation at 5 + 5: exact p = 2 / 252.
        assert!((rps.p_value.unwrap() - 2.0 / 252.0).abs() < 1e-12, "{:?}", rps.p_value);
        assert!(rps.significant && time.significant);
        assert_eq!(time.central, "Median");
        assert!(time.pdiff > 0.0, "less time is better");
        assert_eq!(rps.base_outliers, vec![Outlier { run: 2, value: 20.0 }]);
        assert!(rps.new_outliers.is_empty());
        let t = table(&robust);
        assert!(t.lines().nth(1).unwrap().starts_with("Median rps"), "{t}");
        assert!(t.contains("112.000 *  10.89%*"), "{t}");
        assert!(t.contains("0.0079"), "{t}");
        let note = outlier_lines(&robust, Method::Robust);
        assert!(note.starts_with("note: rps, base: outlier run 2 = 20; the median"), "{note}");
        assert!(!note.contains("--robust"), "{note}");
        assert_eq!(out_of_reach_notes(&robust, Method::Robust), "", "5 runs can reach p < 0.05");
        assert!(legend(Method::Robust, false).contains("Mann-Whitney"));
    }

    #[test]
    fn robust_rows_say_when_too_few_runs_can_never_be_significant() {
        let (base, new) = lost_host();
        let r = rows("groups=1", &base[..3], &new[..3], Method::Robust, false);
        assert!((r[0].p_value.unwrap() - 0.1).abs() < 1e-12, "complete separation, 3 + 3");
        assert!(!r[0].significant);
        let note = out_of_reach_notes(&r, Method::Robust);
        assert_eq!(note.lines().count(), 1, "one line per pair of sizes, not per row: {note}");
        assert!(note.contains("with 3 base and 3 new runs the smallest two-sided Mann-Whitney p is 0.1000"), "{note}");
        assert!(note.contains("--runs 4 or more"), "{note}");
        assert!(outlier_lines(&r, Method::Robust).contains("rps at groups=1, base: outlier run 2 = 20"));
    }

    /// A run whose CPUs gained the given counters (one map per CPU, `cpu` numbered).
    fn counters(cpus: &[&[(&str, u64)]]) -> RunRecord {
        let per_cpu = cpus
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut m: std::collections::BTreeMap<String, u64> = c.iter().map(|&(k, v)| (k.to_string(), v)).collect();
                m.insert("cpu".into(), i as u64);
                m
            })
            .collect();
        RunRecord { schedstat_delta: per_cpu, ..run(&[("time", 1.0, false)]) }
    }

    /// idle=halt vs idle=poll, deterministic: wakeups reach halted CPUs by IPI on base, polling
    /// ones without on new; yld_count is zero throughout.
    fn idle_sides() -> (Vec<RunRecord>, Vec<RunRecord>) {
        let halt = || {
            counters(&[
                &[("yld_count", 0), ("ttwu_count", 30), ("resched_ipis", 10), ("wake_idle_without_ipi", 0), ("run_delay", 500)],
                &[("yld_count", 0), ("ttwu_count", 10), ("resched_ipis", 30), ("wake_idle_without_ipi", 0), ("run_delay", 500)],
            ])
        };
        let poll = || {
            counters(&[
                &[("yld_count", 0), ("ttwu_count", 30), ("resched_ipis", 1), ("wake_idle_without_ipi", 20), ("run_delay", 400)],
                &[("yld_count", 0), ("ttwu_count", 10), ("resched_ipis", 1), ("wake_idle_without_ipi", 19), ("run_delay", 400)],
            ])
        };
        ((0..4).map(|_| halt()).collect(), (0..4).map(|_| poll()).collect())
    }

    #[test]
    fn counter_rows_sum_cpus_skip_zeros_and_show_the_plain_change() {
        let (base, new) = idle_sides();
        let r = counter_rows("", &base, &new, Method::Means, false);
        let names: Vec<&str> = r.iter().map(|r| r.metric.as_str()).collect();
        assert_eq!(names, ["ttwu_count", "run_delay", "resched_ipis", "wake_idle_without_ipi"], "yld_count is 0 on both sides");
        let by = |m: &str| r.iter().find(|r| r.metric == m).unwrap();
        let (ttwu, delay, ipi, noipi) = (by("ttwu_count"), by("run_delay"), by("resched_ipis"), by("wake_idle_without_ipi"));
        assert!(r.iter().all(|r| r.kind == COUNTER && r.central == "Amean" && r.higher_is_better.is_none()));
        assert_eq!((ttwu.base, ttwu.new), (40.0, 40.0), "summed over both CPUs");
        assert_eq!((ipi.base, ipi.new), (40.0, 2.0));
        assert_eq!((delay.unit.as_str(), ipi.unit.as_str()), ("ns", "count"));
        // The sign says more or fewer, not better or worse: fewer IPIs and less run_delay are
        // both negative, though a result row would call less delay positive.
        assert!((ipi.pdiff + 95.0).abs() < 1e-9, "{}", ipi.pdiff);
        assert!((delay.pdiff + 20.0).abs() < 1e-9, "{}", delay.pdiff);
        assert_eq!(noipi.pdiff, f64::INFINITY, "from 0 to 39");
        // Deterministic runs: the same rule as the result rows: exact, whether the sums differ
        // or not, with no p and no star.
        assert!(r.iter().all(|r| r.exact && !r.significant && r.p_value.is_none()), "{r:?}");
        let t = counter_table(&r, Method::Means);
        assert!(t.starts_with("schedstat_delta, summed over CPUs (counts; ns for rq_cpu_time, run_delay and the *_ns idle times), Amean per side; change = new/base - 1, no better or worse"), "{t}");
        assert!(t.contains("* and exact as above"), "{t}");
        assert!(t.contains("Amean  resched_ipis          -                      40.0 (   0.00%)          2.0 ( -95.00%)  count    exact"), "{t}");
        assert!(t.contains("         39.0 (    inf%)"), "{t}");
        assert!(t.contains("ttwu_count") && t.contains("(   0.00%)  count    exact"), "{t}");
        assert!(t.lines().skip(2).all(|l| !l.contains('*')), "no star on any row: {t}");
        // A change of 10,000% or more, or a number wider than its 12 places, widens its column
        // for every row instead of pushing its own row out of line.
        let wide: Vec<_> = [(1.0, 300.0), (2.0, 1e13)].iter().map(|&(a, b)| run(&[("x", a, false), ("y", b, false)])).collect();
        let narrow: Vec<_> = [(1.0, 300.0), (2.0, 300.0)].iter().map(|&(a, b)| run(&[("x", a * 300.0, false), ("y", b, false)])).collect();
        let t = table(&rows("", &wide, &narrow, Method::Means, false));
        assert!(t.contains("5000000000150.000") && t.contains("-29900.00%"), "{t}");
        let unit_at: Vec<Option<usize>> = t.lines().map(|l| l.find("  u")).collect();
        assert!(unit_at.iter().all(|&c| c.is_some() && c == unit_at[0]), "the unit column starts in one place: {t}");
        assert!(!t.contains("yld_count"), "{t}");
        let json = serde_json::to_value(&r[0]).unwrap();
        assert_eq!((json["kind"].as_str(), json["higher_is_better"].is_null()), (Some("schedstat_delta"), true));
        let res = serde_json::to_value(&rows("", &base, &new, Method::Means, false)[0]).unwrap();
        assert_eq!((res["kind"].as_str(), res["higher_is_better"].as_bool()), (Some("result"), Some(false)));
    }

    #[test]
    fn a_noisy_counter_is_significant_only_when_it_moves_beyond_its_noise() {
        let side = |v: &[(u64, u64)]| -> Vec<RunRecord> {
            v.iter()
                .enumerate()
                .map(|(i, &(local, remote))| RunRecord {
                    run: i,
                    ..counters(&[&[("ttwu_local", local), ("ttwu_count", local + remote)], &[("ttwu_local", 5), ("ttwu_count", 5)]])
                })
                .collect()
        };
        // wake_affine=off: fewer local wakeups, the same number of wakeups.
        let base = side(&[(95, 5), (100, 2), (105, 1), (98, 4), (102, 0)]);
        let new = side(&[(60, 43), (55, 42), (65, 38), (58, 40), (62, 39)]);
        for method in [Method::Means, Method::Robust] {
            let r = counter_rows("pairs=4", &base, &new, method, false);
            let (count, local) = (&r[0], &r[1]);
            assert_eq!((count.metric.as_str(), local.metric.as_str()), ("ttwu_count", "ttwu_local"));
            assert!(local.significant && local.pdiff < -35.0, "{method:?}: {local:?}");
            assert!(!count.significant, "{method:?}: {count:?}");
            assert!(!local.exact && !count.exact, "the runs vary: {method:?}");
            assert!(local.p_value.unwrap() < ALPHA);
        }
        let robust = counter_rows("pairs=4", &base, &new, Method::Robust, false);
        assert_eq!((robust[1].central, robust[1].base, robust[1].new), ("Median", 105.0, 65.0));
        assert!(counter_table(&robust, Method::Robust).contains("Median per side"));
    }
}
