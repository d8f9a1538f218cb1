//! The experiments' reports: the matrix table in `compare`'s layout, its legend, the claims'
//! verdicts with their intervals, the figures beside the report (effects, distributions), the
//! terminal view and `docs/experiments/NAME.md`.

use std::fmt::Write as _;
use std::path::Path;

use crate::compare::{counter_rows, rows, Method, Row};
use crate::plot::experiment::{distribution_svg, forest_svg, Distribution, Forest, ForestRow, Shade};
use crate::results::RunRecord;

use super::claims::{self, Decided, Expect, Verdict};
use super::{change, Form, Matrix, Mode, Reading, Spec};

/// The matrix table in `compare`'s layout: per metric and point, the first variant's figure,
/// then each other variant's with its change against the first (positive = better for results;
/// the plain change for counters), `exact` as in `compare` (one -icount boot, or one simulator
/// seed, per cell). With several boots (real time) or seeds (sim) each figure is the mean
/// `± stddev` of the cell's runs, and a change Welch's test finds significant (p < 0.05) is
/// marked `*`. Which engine ran it is the legend's and the report's (the simulator's figures at
/// the qemu form's points stand beside QEMU's in their own table, `sim.rs`).
pub fn matrix_table(spec: &Spec, m: &Matrix) -> String {
    let icount = m.mode.exact();
    // rows()/counter_rows() of the first variant against each other one, per point.
    type Line = (String, String, String, String, Vec<String>); // central, metric, point, unit, cells
    let mut lines: Vec<Line> = Vec::new();
    // a figure with its spread in real time (no spread under -icount, where every boot repeats)
    let fig = |x: f64, sd: f64, num: fn(f64) -> String| if icount { num(x) } else { format!("{}±{}", num(x), num(sd)) };
    type RowsOf<'r> = &'r dyn Fn(&[RunRecord], &[RunRecord], &str) -> Vec<Row>;
    let push = |lines: &mut Vec<Line>, rows_of: RowsOf<'_>, num: fn(f64) -> String| {
        for (p, pt) in m.points.iter().enumerate() {
            let base = &m.cells[p][0].recs;
            let per_variant: Vec<Vec<Row>> = (1..m.variants.len()).map(|v| rows_of(base, &m.cells[p][v].recs, pt)).collect();
            let Some(first) = per_variant.first() else { continue };
            for r in first {
                let mut cells = vec![fig(r.base, r.base_stddev, num)];
                for vr in &per_variant {
                    cells.push(match vr.iter().find(|x| x.metric == r.metric) {
                        Some(x) => format!("{} ({:+.2}%{})", fig(x.new, x.new_stddev, num), x.pdiff, if x.significant { "*" } else { "" }),
                        None => "-".into(),
                    });
                }
                lines.push((r.central.into(), r.metric.clone(), pt.clone(), r.unit.clone(), cells));
            }
        }
    };
    push(&mut lines, &|b, n, pt| rows(pt, b, n, Method::Means, icount), |v| format!("{v:.3}"));
    let n_results = lines.len();
    push(&mut lines, &|b, n, pt| counter_rows(pt, b, n, Method::Means, icount), |v| format!("{v:.0}"));
    // the mechanism figures of this experiment, read from the logs
    for (p, pt) in m.points.iter().enumerate() {
        for mech in &spec.mechs {
            let per: Vec<Vec<f64>> = (0..m.variants.len()).map(|v| m.cells[p][v].logs.iter().map(mech.read).collect()).collect();
            let vals: Vec<f64> = per.iter().map(|x| crate::stats::amean(x)).collect();
            let mfig = |v: usize| if icount { mech_num(vals[v]) } else { format!("{}±{}", mech_num(vals[v]), mech_num(crate::stats::stddev(&per[v]))) };
            let mut cells = vec![mfig(0)];
            cells.extend((1..vals.len()).map(|v| format!("{} ({:+.2}%)", mfig(v), change(vals[0], vals[v]))));
            lines.push(("Amean".into(), mech.label.into(), pt.clone(), mech.unit.into(), cells));
        }
    }
    let nw = lines.iter().map(|l| l.1.len()).fold(6, usize::max);
    let pw = lines.iter().map(|l| l.2.len()).fold(5, usize::max);
    let uw = lines.iter().map(|l| l.3.len()).fold(4, usize::max);
    let cw: Vec<usize> = (0..m.variants.len())
        .map(|v| lines.iter().map(|l| l.4[v].len()).chain([m.variants[v].label.len()]).fold(10, usize::max))
        .collect();
    let mut s = String::new();
    let head = |s: &mut String, title: &str| {
        let _ = write!(s, "{:<6} {:<nw$} {:<pw$}", "", title, "point");
        for (v, w) in m.variants.iter().zip(&cw) {
            let _ = write!(s, "  {:>w$}", v.label);
        }
        let _ = writeln!(s, "  {:<uw$}", "unit");
    };
    head(&mut s, "metric");
    for (i, (c, name, pt, unit, cells)) in lines.iter().enumerate() {
        if i == n_results {
            let _ = writeln!(s, "\nschedstat_delta summed over CPUs, then the experiment's own counters (change = plain new/base - 1):");
            head(&mut s, "counter");
        }
        let _ = write!(s, "{c:<6} {name:<nw$} {pt:<pw$}");
        for (cell, w) in cells.iter().zip(&cw) {
            let _ = write!(s, "  {cell:>w$}");
        }
        let _ = writeln!(s, "  {unit:<uw$}");
    }
    s
}

/// The level of the cells' own intervals: a description of each cell, not a comparison, so not
/// corrected for their number.
pub const CELL_LEVEL: f64 = 0.95;

/// Every `@fw result` figure (means, and the tails the workloads print: p50, p99) of every cell
/// with its bootstrap interval over the cell's runs (BCa, [`CELL_LEVEL`]); empty where cells
/// hold one run each.
pub fn intervals_table(m: &Matrix) -> String {
    if m.mode.boots() < 2 {
        return String::new();
    }
    let boot = crate::stats::bootstrap::Bootstrap::default();
    let mut metrics: Vec<(String, String)> = Vec::new();
    for r in m.cells.iter().flatten().flat_map(|c| c.recs.iter()).flat_map(|r| r.results.iter()) {
        if !metrics.iter().any(|(name, _)| *name == r.metric) {
            metrics.push((r.metric.clone(), r.unit.clone()));
        }
    }
    let mut lines: Vec<Vec<String>> = Vec::new();
    for (metric, unit) in &metrics {
        for (p, pt) in m.points.iter().enumerate() {
            let mut row = vec![metric.clone(), pt.clone()];
            let mut any = false;
            for c in &m.cells[p] {
                let v: Vec<f64> = c.recs.iter().filter(|r| r.ok).filter_map(|r| r.results.iter().find(|f| f.metric == *metric).map(|f| f.value)).collect();
                any |= !v.is_empty();
                row.push(match boot.interval(&[&v], |s| crate::stats::amean(&s[0]), CELL_LEVEL) {
                    Some(i) => format!("{} [{}, {}]", num(i.estimate), num(i.lo), num(i.hi)),
                    None if v.is_empty() => "-".into(),
                    None => num(crate::stats::amean(&v)),
                });
            }
            row.push(unit.clone());
            if any {
                lines.push(row);
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let cols = 3 + m.variants.len();
    let mut head = vec!["metric".to_string(), "point".to_string()];
    head.extend(m.variants.iter().map(|v| v.label.to_string()));
    head.push("unit".into());
    let widths: Vec<usize> = (0..cols).map(|i| lines.iter().chain([&head]).map(|l| l[i].len()).max().unwrap_or(0)).collect();
    let mut s = format!(
        "each result's mean over the {} runs of its cell with its {:.0}% bootstrap interval (BCa; a description of each cell, \
         not corrected for their number):\n",
        m.mode.boots(),
        100.0 * CELL_LEVEL
    );
    for l in [&head].into_iter().chain(lines.iter()) {
        let cells: Vec<String> = l.iter().zip(&widths).enumerate().map(|(i, (c, w))| if i < 2 || i == cols - 1 { format!("{c:<w$}") } else { format!("{c:>w$}") }).collect();
        let _ = writeln!(s, "{}", cells.join("  ").trim_end());
    }
    s
}

fn num(x: f64) -> String {
    if x.abs() >= 1000.0 { format!("{x:.0}") } else if x.abs() >= 10.0 { format!("{x:.1}") } else { format!("{x:.3}") }
}

/// A mechanism figure: a count as a whole number, a ratio (a mean depth, a share) with two decimals.
fn mech_num(x: f64) -> String {
    if x.fract() == 0.0 || x.abs() >= 1000.0 { format!("{x:.0}") } else { format!("{x:.2}") }
}

pub(super) fn legend(m: &Matrix) -> String {
    let mut s = String::from("variants (the first is the baseline every % is against):\n");
    for v in &m.variants {
        let smp = if v.smp.is_empty() { String::new() } else { format!("  [-smp {}]", v.smp) };
        let _ = writeln!(s, "  {:<24} {}{smp}", v.label, if v.append.is_empty() { "(defaults)" } else { v.append });
    }
    match m.mode {
        Mode::Icount => {
            s += "mode -icount. Hmean for higher-is-better results, Amean otherwise (one boot per cell: the mean is the figure); \
                  % positive = better for results, plain change for counters; exact: -icount, every boot of a command \
                  line is the same run (one tick phase)\n"
        }
        Mode::Phases(n) => {
            let _ = writeln!(
                s,
                "mode -icount, {n} boots per cell, boot i starting its workload i/{n} of a tick late (phase_ns): each boot is \
                 exact, the phases are the spread. Hmean for higher-is-better results, Amean otherwise, each ± the sample \
                 standard deviation of the {n} boots; % positive = better for results, plain change for counters; * Welch's \
                 two-sided p < 0.05 against the first variant"
            );
        }
        Mode::RealTime(n) => {
            let _ = writeln!(
                s,
                "mode real time, {n} boots per cell. Hmean for higher-is-better results, Amean otherwise, each ± the sample \
                 standard deviation of the {n} boots; % positive = better for results, plain change for counters; * Welch's \
                 two-sided p < 0.05 against the first variant (results and schedstat counters); host load moves these figures: \
                 read the ± first"
            );
        }
        Mode::Sim(n) => {
            let _ = writeln!(
                s,
                "mode sim (fairway-sim: the kernel's mechanism and workloads on simulated CPUs), {n} seed(s) per cell: run i \
                 uses --seed i, which orders simultaneous events and seeds the workload's random draws (think and service \
                 times); each figure is the mean over the seeds{}. Hmean for \
                 higher-is-better results, Amean otherwise; % positive = better for results, plain change for counters{}",
                if n > 1 { " ± their sample standard deviation" } else { " (one seed: the run itself, byte for byte on a rerun)" },
                if n > 1 { "; * Welch's two-sided p < 0.05 against the first variant" } else { "" }
            );
        }
    }
    s
}

/// What the terminal shows.
pub(super) fn text_view(spec: &Spec, m: &Matrix, r: &Reading, d: &Decided) -> String {
    let mut s = format!("experiment {}: {}\n\n{}\n{}", spec.name, spec.asks, legend(m), matrix_table(spec, m));
    if let Some(h) = spec.host {
        s += &format!("\n{}", h());
    }
    s += &format!("\nCLAIMS ({} comparisons, intervals at {:.2}%):\n", d.comparisons, 100.0 * d.level);
    for line in claims::summary(&spec.claims, d) {
        s += &format!("  - {line}\n");
    }
    s += "MECHANISM:\n";
    for w in &r.why {
        s += &format!("  - {w}\n");
    }
    for c in &r.checks {
        s += &format!("  check {}: {} (fails with: {})\n", if c.holds { "holds" } else { "FAILS" }, c.what, c.fails_with);
    }
    s
}

fn qemu_version(qemu: &std::path::Path) -> String {
    std::process::Command::new(qemu)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// Where a part of a report (qemu's, or the simulator's section) names its revision, for the
/// other part's run to compare: one report holds one revision.
pub const REVISION_MARK: &str = "<!-- revision: ";

/// The revision line of a report's part: a marker a later run reads, and the words.
pub fn revision_lines(m: &Matrix) -> String {
    format!("{REVISION_MARK}{} -->\n**Revision.** {}\n\n", m.provenance.revision, m.provenance.describe())
}

/// The revision a report's part names, if any.
pub fn part_revision(part: &str) -> Option<&str> {
    let i = part.find(REVISION_MARK)? + REVISION_MARK.len();
    part[i..].split(" -->").next()
}

/// A figure written beside a report: its title and file name (the link is relative).
pub type Figure = (String, String);

/// Writes the figures of `m` beside `report` (`NAME-ENGINE-effects.svg`, one
/// `NAME-ENGINE-dist-K.svg` per distribution with counts) and returns them for the report to
/// embed.
pub fn write_figures(spec: &Spec, m: &Matrix, d: &Decided, report: &Path, engine: &str) -> Result<Vec<Figure>, String> {
    let dir = report.parent().unwrap_or(Path::new("."));
    let stem = report.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| spec.name.into());
    let mut out = Vec::new();
    let mut write = |file: String, svg: String, title: String| -> Result<(), String> {
        let path = dir.join(&file);
        std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
        out.push((title, file));
        Ok(())
    };
    if !d.rows.is_empty() {
        write(format!("{stem}-{engine}-effects.svg"), forest_svg(&forest(spec, d, engine))?, "The claims' effects with their intervals".into())?;
    }
    for (k, dist) in spec.dists.iter().enumerate() {
        // The bins in the order the logs print them, then each variant's counts over every run at
        // every point, bin by bin (a log lacking a bin counts 0 there).
        let logs = |vi: usize| m.cells.iter().flat_map(move |row| row[vi].logs.iter());
        let mut bins: Vec<String> = Vec::new();
        for vi in 0..m.variants.len() {
            for (label, _) in logs(vi).flat_map(|l| (dist.read)(l)) {
                if !bins.contains(&label) {
                    bins.push(label);
                }
            }
        }
        let series: Vec<(String, Vec<f64>)> = m
            .variants
            .iter()
            .enumerate()
            .map(|(vi, v)| {
                let mut counts = vec![0.0; bins.len()];
                for (label, n) in logs(vi).flat_map(|l| (dist.read)(l)) {
                    if let Some(i) = bins.iter().position(|b| *b == label) {
                        counts[i] += n;
                    }
                }
                (v.label.to_string(), counts)
            })
            .collect();
        if bins.is_empty() || series.iter().all(|(_, c)| c.iter().sum::<f64>() == 0.0) {
            continue;
        }
        let chart = Distribution {
            title: format!("{}: {} ({engine})", spec.name, dist.label),
            subtitle: format!("share of the {} of every run at every point, per variant ({})", dist.counts, m.mode.text()),
            x_desc: dist.label.to_string(),
            bins,
            series,
        };
        write(format!("{stem}-{engine}-dist-{k}.svg"), distribution_svg(&chart)?, format!("The distribution of {}", dist.label))?;
    }
    Ok(out)
}

/// The claims' rows as a forest plot.
fn forest(spec: &Spec, d: &Decided, engine: &str) -> Forest {
    let rows = d
        .rows
        .iter()
        .map(|r| {
            let c = &spec.claims[r.claim];
            ForestRow {
                label: format!("{} @ {}", c.name, r.point),
                estimate: r.estimate,
                interval: r.interval.map(|i| (i.lo, i.hi)),
                claimed: match c.expect {
                    Expect::Change(x) => Some(x),
                    Expect::NoChange(_) => None,
                },
                band: c.bound(),
                shade: match r.verdict {
                    Verdict::Reproduced => Shade::Reproduced,
                    Verdict::Opposite => Shade::Opposite,
                    Verdict::NoEffect => Shade::NoEffect,
                    Verdict::Inconclusive => Shade::Inconclusive,
                },
            }
        })
        .collect();
    Forest {
        title: format!("{} ({engine}): each claim's effect, variant against baseline", spec.name),
        subtitle: format!(
            "dot: the estimate; whisker: its {:.2}% bootstrap interval ({} comparisons, Bonferroni); grey: ± the threshold",
            100.0 * d.level,
            d.comparisons
        ),
        x_desc: "effect (% of the baseline; absolute claims in their unit)".into(),
        rows,
    }
}

/// The figures' markdown: each embedded with its relative link.
pub fn figures_markdown(figures: &[Figure]) -> String {
    figures.iter().map(|(title, file)| format!("![{title}]({file})\n\n")).collect()
}

/// The claims' verdicts, the mechanism's figures and the checks, as a report's sections
/// (`level`: `##` for the qemu part, `###` inside the simulator's section).
pub fn reading_markdown(spec: &Spec, r: &Reading, d: &Decided, figures: &[Figure], level: &str, tag: &str) -> String {
    let mut s = format!("{level} Claims{tag}\n\n{}\n", claims::markdown(&spec.claims, d));
    s += &figures_markdown(figures);
    let _ = writeln!(s, "{level} Mechanism{tag}\n");
    for w in &r.why {
        let _ = writeln!(s, "- {w}");
    }
    if !r.checks.is_empty() {
        s += "\nChecks (the quick form's test asserts these), each with the case in which it fails:\n\n";
        for c in &r.checks {
            let _ = writeln!(s, "- {}: {} (fails with: {})", if c.holds { "holds" } else { "FAILS" }, c.what, c.fails_with);
        }
    }
    s
}

/// docs/experiments/NAME.md.
#[allow(clippy::too_many_arguments)]
/// The experiment's workload-to-seed mapping as a markdown table (empty without one).
pub(super) fn setup_table(spec: &Spec) -> String {
    if spec.setup.is_empty() {
        return String::new();
    }
    let cell = |t: &str| t.replace('|', "\\|").replace('\n', " ");
    let mut s = String::from("**The seed's setup and this one.**\n\n| the seed thread | here | still different |\n|---|---|---|\n");
    for r in spec.setup {
        let _ = writeln!(s, "| {} | {} | {} |", cell(r.seed), cell(r.here), cell(r.differs));
    }
    s.push('\n');
    s
}

// The report's parts, each its own input: a struct of them would only be unpacked here.
#[allow(clippy::too_many_arguments)]
pub fn markdown(spec: &Spec, form: &Form, m: &Matrix, r: &Reading, d: &Decided, figures: &[Figure], command: &str, qemu: &std::path::Path, note: &str) -> String {
    let host_cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mut s = format!("# Experiment `{}`\n\n", spec.name);
    s += &format!("**The claim.** {}\n\n**What the matrix asks.** {}\n\n", spec.claim, spec.asks);
    s += &setup_table(spec);
    s += &revision_lines(m);
    let mode = match m.mode {
        Mode::Icount => "`-icount shift=0,sleep=off` (every figure below is instruction-counted time and counts, identical \
                         on every boot of the same command line: one boot per cell, one tick phase)"
            .to_string(),
        Mode::Phases(n) => format!(
            "`-icount shift=0,sleep=off`, {n} boots per cell at {n} tick phases (each boot exact; the figures are the means of \
             the {n} with their spread). The phase is all that differs between a cell's boots, so a claim's interval here \
             says how far the effect depends on where the ticks fall; a cell whose boots all print the same figure has an \
             interval of one point, and the simulator's seeds, which also draw the workload's times, are the wider test"
        ),
        Mode::RealTime(n) => format!(
            "mode real time: {n} boots per cell without `-icount` (every figure below is the mean of {n} boots in host time \
             with its sample standard deviation; the host's load moves them, so a change counts only where the ± allow)"
        ),
        Mode::Sim(n) => format!("mode sim, {n} seed(s) per cell"),
    };
    s += &format!(
        "**Command.** `{command}` (rerun it to reproduce every figure).{note}\n\n\
         **Machine and engine.** Engine `qemu`: the fairway kernel in {} at `-smp {}`, {mode}, on a host with \
         {host_cores} cores. Workload `{}` with `{}`. {}\n{}\n\n",
        qemu_version(qemu),
        form.smp,
        spec.workload,
        if form.params.is_empty() { "its defaults" } else { form.params },
        spec.machine_note,
        if matches!(m.mode, Mode::RealTime(_)) {
            format!(
                "The `-icount` figures and the simulator's (`--engine sim`) are in `docs/experiments/{}.md`.",
                spec.name
            )
        } else {
            "The simulator engine's figures (`--engine sim`) are in the section \"Engine `sim`\" below, at the debate's \
             own machine and beside these at the same points, from the same revision."
                .to_string()
        }
    );
    s += &format!("## Table\n\n```\n{}\n{}```\n\n", legend(m), matrix_table(spec, m));
    let cells = intervals_table(m);
    if !cells.is_empty() {
        s += &format!("```\n{cells}```\n\n");
    }
    if let Some(h) = spec.host {
        s += &format!("## On the host (policy crate)\n\n```\n{}```\n\n", h());
    }
    s += &reading_markdown(spec, r, d, figures, "##", "");
    s += "\nThe verdicts are the claims' (`xtask/src/experiment/claims.rs`, the claims declared in the experiment's own file); \
          the mechanism's lines and checks are the experiment's rules, from the figures above.\n";
    s
}
