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
//! boot of one command line is the same run) is marked `exact` instead ([`rows::is_exact`]): its
//! change is exact for the tick phases run, and no test applies to samples without spread.
//!
//! Below it, a second table shows why a figure may have moved: the
//! `@fw schedstat_delta` counters summed over CPUs per run, Amean (or Median)
//! per side, the same test, but the plain change `new/base - 1` since a
//! counter has no better direction. Counters zero in every run are left out.
//! The rows are made by `rows`, the tables, the legend and the notes under them written by
//! `report`, and the two sides' kernels chosen by `kernels`; this module runs the command.
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
mod kernels;
mod report;
mod rows;
mod sweep;
pub use dist::dist_charts;
use kernels::{same_kernel_note, side_desc, side_kernels};
use report::{
    counter_header, counter_table, legend, one_sided_note, out_of_reach_notes, outlier_lines, phase_note, table, test_name,
};
pub use sweep::sweep_charts;
pub use rows::{counter_rows, rows, Row, RESULT};
use crate::results::RunRecord;
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
    /// Workload name (kernel/workloads/src/), e.g. hackbench.
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
    #[command(flatten)]
    pub engine: crate::bench::EngineArgs,
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
    /// `qemu` or `sim` (then `machine` is the simulated machine and `smp` unused).
    engine: &'a str,
    machine: Option<&'a str>,
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

pub fn compare(a: CompareArgs) -> Result<(), String> {
    let points = sweep_points(a.sweep.as_deref())?;
    let method = if a.robust { Method::Robust } else { Method::Means };
    crate::bench::check_phases(a.phases, a.icount)?;
    let by_revision = a.base_rev.is_some() || a.new_rev.is_some();
    crate::bench::check_engine(&a.engine, &a.boot.smp, a.icount, a.phases, by_revision)?;
    let sim = a.engine.engine == crate::bench::Engine::Sim;
    let (kernels, boots) = if sim {
        // Both sides run the working tree's mechanism in fairway-sim; they differ in their command line.
        let m = a.engine.machine.as_deref().unwrap_or_default();
        let boot = Boot::simulator(m, a.engine.hw.as_deref())?;
        let k = crate::revision::Kernel {
            elf: Default::default(),
            label: "working tree (fairway-sim)".into(),
            commit: None,
            source_root: crate::workspace_root(),
            tree_of: None,
        };
        ([k.clone(), k], [boot.clone(), boot])
    } else {
        let kernels = side_kernels(a.base_rev.as_deref(), a.new_rev.as_deref())?;
        // QEMU is found once; the sides differ in their kernel only.
        let base_boot = Boot::with_kernel(kernels[0].elf.clone(), &a.boot.smp, a.icount, a.boot.timeout)?;
        let new_boot = Boot { elf: kernels[1].elf.clone(), ..base_boot.clone() };
        (kernels, [base_boot, new_boot])
    };
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
        // Interleaved base/new (with --jobs N, N of them at a time).
        let tasks: Vec<(usize, usize, String)> = (0..a.runs)
            .flat_map(|i| lines.iter().enumerate().map(move |(side, line)| (i, side, line.clone())))
            .map(|(i, side, line)| (i, side, if a.phases { crate::bench::with_phase(&line, i, a.runs) } else { line }))
            .collect();
        let done = crate::bench::run_tasks(
            a.engine.jobs,
            &tasks,
            |(i, side, line)| boots[*side].run(*i, line),
            |(i, side, _), _| {
                pb.set_message(format!("{pt} {} {i}", if *side == 0 { "base" } else { "new" }));
                pb.inc(1);
            },
        );
        for ((i, side, _), r) in tasks.iter().zip(done) {
            let (rec, log) = r?;
            let tag = if *side == 0 { "base" } else { "new" };
            let name = format!("{tag}-{}-{i}.log", if pt.is_empty() { "default" } else { pt });
            std::fs::write(dir.join(name), log.raw()).map_err(|e| e.to_string())?;
            if !rec.ok {
                failed += 1;
                pb.println(format!("{tag} run {i} {pt}: {}", rec.exit));
            }
            if *side == 0 { base.push(rec) } else { new.push(rec) }
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
        "{} {}, {} runs per side and point\n  base: {:?}\n  new:  {:?}",
        a.workload,
        a.engine.describe(&a.boot.smp, a.icount),
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
        engine: if sim { "sim" } else { "qemu" },
        machine: a.engine.machine.as_deref(),
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
        "{}{}, {}",
        a.workload,
        if a.boot.params.is_empty() { String::new() } else { format!(" {}", a.boot.params) },
        a.engine.describe(&a.boot.smp, a.icount)
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
    fn sweep_parsing() {
        assert_eq!(sweep_points(None).unwrap(), vec![""]);
        assert_eq!(sweep_points(Some("groups=1,2")).unwrap(), vec!["groups=1", "groups=2"]);
        assert!(sweep_points(Some("groups")).is_err());
        assert_eq!(params_with("loops=5", "groups=1"), "loops=5,groups=1");
        assert_eq!(params_with("", "groups=1"), "groups=1");
    }
}
