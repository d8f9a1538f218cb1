//! `cargo xtask compare --base S --new S WORKLOAD`: the same workload under
//! two kernel command-line settings (runs interleaved base/new so host load
//! drifts hit both), printed like mmtests' compare-kernels: Hmean for
//! higher-is-better metrics, Amean otherwise, the change signed so positive
//! is better, and `*` marks where Welch's two-sided t-test (runs as samples)
//! gives p < 0.05. `--robust` puts the median and the Mann-Whitney U test in
//! their place, for when a boot falls far off the others; in either mode
//! such boots are named under the table.
//!
//! `--base-rev REV` / `--new-rev REV` boot a side with the kernel of a git revision instead of
//! the working tree's (built once into `target/revs/`, see `revision.rs`): a patch against the
//! commit it started from, with the same settings or different ones.
//!
//! A row whose runs all printed the same figure on each side (what `--icount` gives: every
//! boot of one command line is the same run) is marked `exact` instead ([`is_exact`]): its
//! change is exact for the tick phases run, and no test applies to samples without spread.
//!
//! Below it, a second table shows why a figure may have moved: the
//! `@fw schedstat_delta` counters summed over CPUs per run, Amean (or Median)
//! per side, the same test, but the plain change `new/base - 1` since a
//! counter has no better direction. Counters zero in every run are left out.
//! The tables, the legend and the notes under them are written by `report`; this module
//! makes the rows and runs the command.
//!
//! With `--sweep` of two or more points, each result metric also gets a
//! `sweep-<metric>.svg` ([`sweep_charts`]): both sides' figures against the
//! sweep points, whiskers over the runs' min-max, `*` where the table has it.
//!
//! When both sides print `@fw hist` buckets (schbench, latency), each kind gets a
//! `latency-<kind>.svg` per sweep point ([`dist_charts`]): both sides' samples, pooled over
//! their runs, as complementary CDFs on log-log axes, where a tail of 1% of the samples shows.


use serde::Serialize;

use crate::bench::{cmdline, out_dir, progress, Boot};
use crate::plot;

mod dist;
mod report;
mod sweep;
pub use dist::dist_charts;
use report::{counter_header, counter_table, legend, out_of_reach_notes, outlier_lines, phase_note, table, test_name};
pub use sweep::sweep_charts;
use crate::results::{self, Outlier, RunRecord, Samples};
use crate::revision::{self, Kernel, Revision};
use crate::stats;
use crate::workload_args::BootArgs;

/// Significance level of both tests.
pub const ALPHA: f64 = 0.05;

/// How the rows summarise and test each side's runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// mmtests': Hmean for higher-is-better rates, Amean otherwise, Welch's t-test (which
    /// assumes roughly normal runs).
    Means,
    /// The median of every metric and the Mann-Whitney U test: a boot far off the others (the
    /// host took the cores away) weighs on them no more than one just beyond the rest.
    Robust,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// Workload name (kernel/src/workloads/), e.g. hackbench.
    pub workload: String,
    /// Extra kernel command line of the baseline (may be empty).
    #[arg(long, default_value = "")]
    pub base: String,
    /// Extra kernel command line of the new side.
    #[arg(long)]
    pub new: String,
    /// Boot the baseline with the kernel of this git revision (branch, tag, commit; built once
    /// into target/revs/) instead of the working tree's.
    #[arg(long, value_name = "REV")]
    pub base_rev: Option<String>,
    /// Boot the new side with the kernel of this git revision instead of the working tree's.
    #[arg(long, value_name = "REV")]
    pub new_rev: Option<String>,
    /// `param=v1,v2,...`: one comparison per value of a workload parameter (added to --params).
    #[arg(long)]
    pub sweep: Option<String>,
    // --params (common to every run), --smp, --timeout; no --append: --base and --new are the
    // two sides' extra command lines.
    #[command(flatten)]
    pub boot: BootArgs,
    /// Boots per side and sweep point.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Deterministic instruction-counted time (-icount).
    #[arg(long)]
    pub icount: bool,
    /// With --icount: run i of both sides starts its workload i/runs of a tick late (the same
    /// phases on both sides), so the runs sample where the ticks fall (see `bench --phases`).
    #[arg(long)]
    pub phases: bool,
    /// Median and the two-sided Mann-Whitney U test instead of Hmean/Amean and Welch's t-test:
    /// one far-off boot then weighs no more than one just beyond the rest.
    #[arg(long)]
    pub robust: bool,
}

/// `param=v1,v2` → [`param=v1`, `param=v2`]; none → one empty point.
pub fn sweep_points(sweep: Option<&str>) -> Result<Vec<String>, String> {
    let Some(s) = sweep else { return Ok(vec![String::new()]) };
    let (k, vs) = s.split_once('=').ok_or_else(|| format!("--sweep {s:?} is not param=v1,v2,..."))?;
    let pts: Vec<String> = vs.split(',').filter(|v| !v.is_empty()).map(|v| format!("{k}={v}")).collect();
    if k.is_empty() || pts.is_empty() {
        return Err(format!("--sweep {s:?} is not param=v1,v2,..."));
    }
    Ok(pts)
}

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

#[derive(Serialize)]
struct CompareJson<'a> {
    workload: &'a str,
    base: &'a str,
    new: &'a str,
    /// What each side's kernel was built from (`working tree (HEAD ...)` or `<commit> <subject>`).
    base_kernel: &'a str,
    new_kernel: &'a str,
    /// The full commit ids of `--base-rev` / `--new-rev` (null for the working tree).
    base_commit: Option<&'a str>,
    new_commit: Option<&'a str>,
    smp: &'a str,
    icount: bool,
    robust: bool,
    test: String,
    /// [`counter_header`]: what the `schedstat_delta` rows are.
    counters: String,
    /// The result rows, then the counter rows (`kind` tells them apart).
    rows: &'a [Row],
    base_runs: &'a [(String, Vec<RunRecord>)],
    new_runs: &'a [(String, Vec<RunRecord>)],
}

fn params_with(common: &str, point: &str) -> String {
    [common, point].iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join(",")
}

/// The kernels of the two sides: a revision's when its side names one, else the working tree's
/// (built only when some side needs it).
fn side_kernels(base_rev: Option<&str>, new_rev: Option<&str>) -> Result<[Kernel; 2], String> {
    // Both resolved first: a misspelt revision is refused before anything is built.
    let revs = [
        base_rev.map(|r| Revision::resolve("--base-rev", r)).transpose()?,
        new_rev.map(|r| Revision::resolve("--new-rev", r)).transpose()?,
    ];
    let tree = match revs {
        [Some(_), Some(_)] => None,
        _ => Some(revision::working_tree(crate::cargo::build_kernel()?)),
    };
    let side = |r: &Option<Revision>| match r {
        Some(r) => r.kernel(),
        None => Ok(tree.clone().expect("the working tree is built when a side names no revision")),
    };
    Ok([side(&revs[0])?, side(&revs[1])?])
}

/// A note when `--base-rev`/`--new-rev` leave both sides on one commit's tree: the table then
/// compares the settings only.
pub fn same_kernel_note(kernels: &[Kernel; 2]) -> String {
    match (&kernels[0].tree_of, &kernels[1].tree_of) {
        (Some(a), Some(b)) if a == b => format!(
            "note: both kernels are built from commit {} (its code is the same either way), so only the settings differ\n",
            revision::short_id(a)
        ),
        _ => String::new(),
    }
}

/// How charts name a side: its settings, and with `--base-rev`/`--new-rev` its kernel too.
fn side_desc(settings: &str, kernel: &Kernel, by_revision: bool) -> String {
    if !by_revision {
        return settings.to_string();
    }
    let what = if settings.is_empty() { "(no extra settings)" } else { settings };
    format!("{what} on {}", kernel.short())
}

pub fn compare(a: CompareArgs) -> Result<(), String> {
    let points = sweep_points(a.sweep.as_deref())?;
    let method = if a.robust { Method::Robust } else { Method::Means };
    crate::bench::check_phases(a.phases, a.icount)?;
    let by_revision = a.base_rev.is_some() || a.new_rev.is_some();
    let kernels = side_kernels(a.base_rev.as_deref(), a.new_rev.as_deref())?;
    // QEMU is found once; the sides differ in their kernel only.
    let base_boot = Boot::with_kernel(kernels[0].elf.clone(), &a.boot.smp, a.icount, a.boot.timeout)?;
    let new_boot = Boot { elf: kernels[1].elf.clone(), ..base_boot.clone() };
    let boots = [base_boot, new_boot];
    let dir = out_dir(&format!("compare-{}", a.workload))?;
    let pb = progress((points.len() * a.runs * 2) as u64);
    let (mut all_base, mut all_new, mut all_rows) = (Vec::new(), Vec::new(), Vec::new());
    let mut all_counters = Vec::new();
    let mut one_sided = String::new();
    let mut failed = 0;
    for pt in &points {
        let params = params_with(&a.boot.params, pt);
        let lines = [cmdline(&a.workload, &params, &a.base), cmdline(&a.workload, &params, &a.new)];
        pb.println(format!("base: {}\nnew:  {}", lines[0], lines[1]));
        if by_revision {
            pb.println(format!("base kernel: {}\nnew kernel:  {}", kernels[0].label, kernels[1].label));
        }
        let (mut base, mut new) = (Vec::new(), Vec::new());
        for i in 0..a.runs {
            for (side, line) in lines.iter().enumerate() {
                let line = if a.phases { crate::bench::with_phase(line, i, a.runs) } else { line.clone() };
                let (rec, log) = boots[side].run(i, &line)?;
                let tag = if side == 0 { "base" } else { "new" };
                let name = format!("{tag}-{}-{i}.log", if pt.is_empty() { "default" } else { pt });
                std::fs::write(dir.join(name), log.raw()).map_err(|e| e.to_string())?;
                if !rec.ok {
                    failed += 1;
                    pb.println(format!("{tag} run {i} {pt}: {}", rec.exit));
                }
                pb.set_message(format!("{pt} {tag} {i}"));
                pb.inc(1);
                if side == 0 { base.push(rec) } else { new.push(rec) }
            }
        }
        all_rows.extend(rows(pt, &base, &new, method, a.icount));
        all_counters.extend(counter_rows(pt, &base, &new, method, a.icount));
        one_sided += &one_sided_note(pt, &base, &new);
        all_base.push((pt.clone(), base));
        all_new.push((pt.clone(), new));
    }
    pb.finish_and_clear();
    // One list for compare.json; the results are all_rows[..n_results].
    let n_results = all_rows.len();
    all_rows.extend(all_counters);
    println!(
        "{} -smp {}{}, {} runs per side and point\n  base: {:?}\n  new:  {:?}",
        a.workload,
        a.boot.smp,
        if a.icount { " --icount" } else { "" },
        a.runs,
        a.base,
        a.new
    );
    if by_revision {
        println!("  base kernel: {}\n  new kernel:  {}", kernels[0].label, kernels[1].label);
    }
    println!();
    print!("{}", table(&all_rows[..n_results]));
    let test = legend(method, all_rows.iter().any(|r| r.exact));
    println!("\n{test}");
    // The sample-size note covers the counter rows too (a workload may print no results);
    // outliers are named for the results only (the counter rows keep theirs in compare.json).
    let same = if by_revision { same_kernel_note(&kernels) } else { String::new() };
    let notes = format!(
        "{}{}{}{}{}",
        same,
        one_sided,
        phase_note(&all_rows, a.icount, a.phases),
        out_of_reach_notes(&all_rows, method),
        outlier_lines(&all_rows[..n_results], method)
    );
    if !notes.is_empty() {
        print!("\n{notes}");
    }
    if all_rows.len() > n_results {
        print!("\n{}", counter_table(&all_rows[n_results..], method));
    }
    for (label, runs) in [("base", &all_base), ("new", &all_new)] {
        let flat: Vec<RunRecord> = runs
            .iter()
            .flat_map(|(pt, rs)| rs.iter().map(move |r| RunRecord { exit: format!("{pt} {}", r.exit), ..r.clone() }))
            .collect();
        let sub = dir.join(label);
        std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
        crate::bench::write_csv(&sub, &flat, Some(label))?;
    }
    let json = CompareJson {
        workload: &a.workload,
        base: &a.base,
        new: &a.new,
        base_kernel: &kernels[0].label,
        new_kernel: &kernels[1].label,
        base_commit: kernels[0].commit.as_deref(),
        new_commit: kernels[1].commit.as_deref(),
        smp: &a.boot.smp,
        icount: a.icount,
        robust: a.robust,
        test,
        counters: counter_header(method),
        rows: &all_rows,
        base_runs: &all_base,
        new_runs: &all_new,
    };
    std::fs::write(dir.join("compare.json"), serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let title = format!(
        "{}{}, -smp {}{}",
        a.workload,
        if a.boot.params.is_empty() { String::new() } else { format!(" {}", a.boot.params) },
        a.boot.smp,
        if a.icount { ", --icount" } else { "" }
    );
    let (base_desc, new_desc) =
        (side_desc(&a.base, &kernels[0], by_revision), side_desc(&a.new, &kernels[1], by_revision));
    let charts = sweep_charts(&title, &base_desc, &new_desc, &points, &all_rows[..n_results], method);
    let dists = dist_charts(&title, &base_desc, &new_desc, &all_base, &all_new);
    if !charts.is_empty() || !dists.is_empty() {
        println!();
    }
    for (name, chart) in &charts {
        let path = dir.join(name);
        plot::sweep_svg(&path, chart)?;
        println!("wrote {}", path.display());
    }
    for (name, chart) in &dists {
        let path = dir.join(name);
        plot::ccdf_svg(&path, chart)?;
        println!("wrote {}", path.display());
    }
    println!("wrote {}", dir.display());
    if failed > 0 {
        return Err(format!("xtask: {failed} runs failed"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Figure;

    pub(super) fn run(vals: &[(&str, f64, bool)]) -> RunRecord {
        RunRecord {
            run: 0,
            exit: String::new(),
            ok: true,
            wall_s: 0.0,
            results: vals
                .iter()
                .map(|&(m, v, h)| Figure { workload: "w".into(), metric: m.into(), value: v, unit: "u".into(), higher_is_better: h })
                .collect(),
            schedstat_delta: vec![],
            hist: vec![],
        }
    }

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

    #[test]
    fn charts_name_the_kernel_only_when_a_side_names_a_revision() {
        let tree = Kernel {
            elf: "k".into(),
            label: "working tree (HEAD 0123456789ab)".into(),
            commit: None,
            source_root: "/ws".into(),
            tree_of: Some("0123456789abcdef".into()),
        };
        let rev = Kernel {
            elf: "r".into(),
            label: "0123456789ab subject".into(),
            commit: Some("0123456789abcdef".into()),
            source_root: "/ws/target/revs/0123456789abcdef/src".into(),
            tree_of: Some("0123456789abcdef".into()),
        };
        assert_eq!(side_desc("hz=100", &tree, false), "hz=100");
        assert_eq!(side_desc("", &tree, false), "", "the charts say (no extra settings) themselves");
        assert_eq!(side_desc("", &rev, true), "(no extra settings) on 0123456789ab");
        assert_eq!(side_desc("hz=100", &tree, true), "hz=100 on working tree");
        // a clean working tree at the revision's commit: the same kernel on both sides
        assert_eq!(
            same_kernel_note(&[rev.clone(), tree.clone()]),
            "note: both kernels are built from commit 0123456789ab (its code is the same either way), so only the settings differ\n"
        );
        let edited = Kernel { tree_of: None, ..tree.clone() };
        assert_eq!(same_kernel_note(&[rev.clone(), edited]), "", "uncommitted changes: another kernel");
        let other = Kernel { tree_of: Some("fedcba".into()), ..rev.clone() };
        assert_eq!(same_kernel_note(&[rev, other]), "");
    }

    #[test]
    fn sweep_parsing() {
        assert_eq!(sweep_points(None).unwrap(), vec![""]);
        assert_eq!(sweep_points(Some("groups=1,2")).unwrap(), vec!["groups=1", "groups=2"]);
        assert!(sweep_points(Some("groups")).is_err());
        assert_eq!(params_with("loops=5", "groups=1"), "loops=5,groups=1");
        assert_eq!(params_with("", "groups=1"), "groups=1");
    }

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
        assert!(t.starts_with("schedstat_delta, summed over CPUs (counts; ns for rq_cpu_time and run_delay), Amean per side; change = new/base - 1, no better or worse"), "{t}");
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
