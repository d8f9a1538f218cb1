//! The experiments' reports: the matrix table in `compare`'s layout, its legend, the terminal
//! view and `docs/experiments/NAME.md`.

use std::fmt::Write as _;

use crate::compare::{counter_rows, rows, Method, Row};
use crate::results::RunRecord;

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
    let push = |lines: &mut Vec<Line>, rows_of: &dyn Fn(&[RunRecord], &[RunRecord], &str) -> Vec<Row>, num: fn(f64) -> String| {
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
                 uses --seed i, which orders simultaneous events; each figure is the mean over the seeds{}. Hmean for \
                 higher-is-better results, Amean otherwise; % positive = better for results, plain change for counters{}",
                if n > 1 { " ± their sample standard deviation" } else { " (one seed: the run itself, byte for byte on a rerun)" },
                if n > 1 { "; * Welch's two-sided p < 0.05 against the first variant" } else { "" }
            );
        }
    }
    s
}

/// What the terminal shows.
pub(super) fn text_view(spec: &Spec, m: &Matrix, r: &Reading) -> String {
    let mut s = format!("experiment {}: {}\n\n{}\n{}", spec.name, spec.asks, legend(m), matrix_table(spec, m));
    if let Some(h) = spec.host {
        s += &format!("\n{}", h());
    }
    s += &format!("\nREADING: {}\n", r.outcome.text());
    for w in &r.why {
        s += &format!("  - {w}\n");
    }
    for (c, ok) in &r.checks {
        s += &format!("  check {}: {c}\n", if *ok { "holds" } else { "FAILS" });
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

/// docs/experiments/NAME.md.
pub fn markdown(spec: &Spec, form: &Form, m: &Matrix, r: &Reading, command: &str, qemu: &std::path::Path, kernel: &str) -> String {
    let host_cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mut s = format!("# Experiment `{}`\n\n", spec.name);
    s += &format!("**The claim.** {}\n\n**What the matrix asks.** {}\n\n", spec.claim, spec.asks);
    let mode = match m.mode {
        Mode::Icount => "`-icount shift=0,sleep=off` (every figure below is instruction-counted time and counts, identical \
                         on every boot of the same command line: one boot per cell, one tick phase)"
            .to_string(),
        Mode::RealTime(n) => format!(
            "mode real time: {n} boots per cell without `-icount` (every figure below is the mean of {n} boots in host time \
             with its sample standard deviation; the host's load moves them, so a change counts only where the ± allow)"
        ),
        Mode::Sim(n) => format!("mode sim, {n} seed(s) per cell"),
    };
    s += &format!(
        "**Command.** `{command}` (rerun it to reproduce every figure). Kernel: {kernel}\n\n\
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
             own machine and beside these at the same points."
                .to_string()
        }
    );
    s += &format!("## Table\n\n```\n{}\n{}```\n\n", legend(m), matrix_table(spec, m));
    if let Some(h) = spec.host {
        s += &format!("## On the host (policy crate)\n\n```\n{}```\n\n", h());
    }
    s += &format!("## READING: {}\n\n", r.outcome.text());
    for w in &r.why {
        s += &format!("- {w}\n");
    }
    if !r.checks.is_empty() {
        s += "\nDirection checks (the quick form's test asserts these):\n\n";
        for (c, ok) in &r.checks {
            s += &format!("- {}: {c}\n", if *ok { "holds" } else { "FAILS" });
        }
    }
    s += "\nThe reading is generated by the experiment's rules (`xtask/src/experiment/`, the experiment's own file) from the figures above.\n";
    s
}
