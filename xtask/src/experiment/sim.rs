//! `cargo xtask experiment NAME --engine sim`: the experiment's matrix in `fairway-sim` (the
//! kernel's mechanism and workloads on simulated CPUs) at the debate's own machine
//! (`sim_plans.rs`), read by the experiment's own rules; and, where that is another machine
//! than the qemu form's, the qemu form's points on the simulator too, shown beside QEMU's
//! figures (read from the report's qemu table). The report's section "Engine `sim`" is this
//! file's; a qemu run keeps it, and a sim run keeps the qemu part, each only while the other
//! part is of the same revision (one report holds one revision).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::claims::{self, Decided};
use super::report::{self, legend, matrix_table, part_revision, reading_markdown, revision_lines, text_view};
use super::sim_plans::{plan, SimPlan};
use super::{change, read_matrix, run_matrix_in, runs, ExperimentArgs, Form, Matrix, Mode, Provenance, Reading, Runner, Spec};

/// Where a report's simulator section starts.
pub const SIM_MARK: &str = "<!-- engine sim: written by `cargo xtask experiment NAME --engine sim`; a qemu run keeps it -->";

/// `--machine`/`--seeds`/`--hw` given to the qemu engine.
pub const QEMU_NO_MACHINE: &str =
    "xtask: --machine, --seeds and --hw are the simulator's (--engine sim); QEMU's machine is the experiment's form, and -icount boots once per cell";

/// The file of a sim run's log directory holding the host seconds the run took.
const HOST_SECONDS: &str = "host_seconds";

/// The subdirectory of a sim run's logs holding the qemu form's points.
const SAME_POINT_DIR: &str = "same-point";

/// `report` (a qemu report) with the simulator section of the file at `path` kept, if it has
/// one of the same revision as `p`; one of another revision is dropped, and the note says so.
pub fn keep_sim_section(path: &Path, report: String, p: &Provenance) -> (String, Option<String>) {
    match std::fs::read_to_string(path).ok().and_then(|old| old.find(SIM_MARK).map(|i| old[i..].to_string())) {
        Some(sim) => match part_revision(&sim) {
            Some(r) if r == p.revision => (format!("{}\n{sim}", report.trim_end()), None),
            other => (
                format!("{}\n{SIM_MARK}\n\n{}", report.trim_end(), dropped_part(&name_of(path), "simulator's", other, "--engine sim")),
                Some(format!(
                    "xtask: the simulator's section of {} was of revision {} and this run is of {}: it was dropped (one report \
                     holds one revision); rerun `--engine sim` to write it again",
                    path.display(),
                    other.unwrap_or("unknown"),
                    p.revision
                )),
            ),
        },
        None => (report, None),
    }
}

/// The experiment a report's path names (`docs/experiments/NAME.md`).
fn name_of(path: &Path) -> String {
    path.file_stem().map_or_else(|| "NAME".into(), |s| s.to_string_lossy().into_owned())
}

/// What stands in for a part of a report dropped for another revision.
fn dropped_part(name: &str, whose: &str, revision: Option<&str>, flag: &str) -> String {
    format!(
        "(The {whose} part of this report was of revision `{}`, not this one's, and was dropped: one report holds one \
         revision. `cargo xtask experiment {name} {flag}` writes it again.)\n",
        revision.unwrap_or("unknown")
    )
}

/// The qemu part of an existing report (everything before the simulator's section).
fn qemu_part(old: &str) -> &str {
    old.find(SIM_MARK).map_or(old, |i| &old[..i])
}

/// The form with its machine replaced (`--machine`).
fn on_machine(form: &Form, machine: &Option<String>) -> Form {
    let mut f = form.clone();
    if let Some(m) = machine {
        f.smp = Box::leak(m.clone().into_boxed_str());
    }
    f
}

/// Whether the simulator's form is the qemu form itself (same machine, same points): then its
/// matrix is also the side-by-side one.
fn same_as_qemu(spec: &Spec, f: &Form) -> bool {
    // A preset without NUMA nodes or capacities is its -smp value (wake-2005 is the qemu form's
    // 4,sockets=2,cores=1,threads=2).
    let smp = fairway_sim::PRESETS
        .iter()
        .find(|p| p.name == f.smp && p.numa == 0 && p.capacity.is_empty())
        .map_or(f.smp, |p| p.smp);
    smp == spec.full.smp && f.params == spec.full.params && f.points == spec.full.points
}

/// The simulator's seeds per cell of a full run when the plan gives fewer: the claims' intervals
/// need runs that vary the workload (think and service times drawn from the seed), at least ten.
pub const MIN_SEEDS: usize = 10;

pub fn experiment(spec: &Spec, a: &ExperimentArgs) -> Result<(), String> {
    if a.realtime.is_some() {
        return Err("xtask: --realtime is the qemu engine's; the simulator's runs differ by seed (--seeds N)".into());
    }
    if a.runs.is_some() {
        return Err("xtask: --runs is the qemu engine's (tick phases); the simulator's runs differ by seed (--seeds N)".into());
    }
    super::check_jobs(a, Mode::Sim(1))?;
    let p = plan(spec.name);
    let form = on_machine(if a.quick { &p.quick } else { &p.full }, &a.machine);
    let seeds = a.seeds.unwrap_or(if a.quick { 1 } else { p.seeds.max(MIN_SEEDS) });
    if seeds == 0 {
        return Err("xtask: --seeds N needs N >= 1".into());
    }
    let mode = Mode::Sim(seeds);
    let same_needed = !a.quick && !same_as_qemu(spec, &form);
    // The debate's hardware profile unless --hw names one; the quick form keeps `icount`
    // (no hardware costs: the test suite checks the machinery, to the event).
    let hw: Option<String> = a.hw.clone().or_else(|| (!a.quick).then(|| p.hw.to_string()));
    if let Some(h) = &hw {
        fairway_sim::hw::HwProfile::parse(h).map_err(|e| format!("xtask: {e}"))?;
    }
    let command = format!(
        "cargo xtask experiment {}{}{} --engine sim{}{}{}",
        spec.name,
        if a.quick { " --quick" } else { "" },
        if a.sweep { " --sweep" } else { "" },
        a.machine.as_ref().map(|m| format!(" --machine {m}")).unwrap_or_default(),
        a.seeds.map(|n| format!(" --seeds {n}")).unwrap_or_default(),
        hw.as_ref().map(|h| format!(" --hw {h}")).unwrap_or_default()
    );
    if let Some(file) = &a.jobs_file {
        let runner = Runner::Sim { bin: crate::sim::build_binary(true)?, hw: hw.clone() };
        let dir = crate::bench::out_dir(&format!("experiment-{}-sim", spec.name))?;
        let mut jobs = String::new();
        let mut n = runs::write_jobs(spec, &form, &runner, mode, &dir, &mut jobs)?;
        if a.sweep {
            n += super::sweep::write_jobs(spec, &form, &runner, mode, &dir, &mut jobs)?;
        }
        let mut dirs = vec![dir.clone()];
        if same_needed {
            n += runs::write_jobs(spec, &spec.full, &runner, Mode::Sim(1), &dir.join(SAME_POINT_DIR), &mut jobs)?;
            dirs.push(dir.join(SAME_POINT_DIR));
        }
        // The command names --sweep already when the job list holds the sweeps.
        let read_back = format!("{command} --from {}", dir.display());
        std::fs::write(file, runs::jobs_header(n, &dirs, &read_back) + &jobs).map_err(|e| format!("{}: {e}", file.display()))?;
        println!("wrote {}: {n} runs; then {read_back}", file.display());
        return Ok(());
    }
    let t = std::time::Instant::now();
    let (m, same, swept, dir) = if a.from.is_empty() {
        let bin = crate::sim::build_binary(true)?;
        let dir = crate::bench::out_dir(&format!("experiment-{}-sim", spec.name))?;
        let runner = Runner::Sim { bin, hw: hw.clone() };
        let m = run_matrix_in(spec, &form, &runner, mode, &dir, true, a.jobs)?;
        let same = if same_needed { Some(run_matrix_in(spec, &spec.full, &runner, Mode::Sim(1), &dir.join(SAME_POINT_DIR), true, a.jobs)?) } else { None };
        let swept = if a.sweep { super::sweep::sweeps(spec, &form, Some(&runner), true, mode, &dir, &[], a.jobs)? } else { Vec::new() };
        (m, same, swept, dir)
    } else {
        let m = read_matrix(spec, &form, &a.from, mode)?;
        let same_dirs: Vec<PathBuf> = a.from.iter().map(|d| d.join(SAME_POINT_DIR)).filter(|d| d.is_dir()).collect();
        let same = if same_dirs.is_empty() { None } else { Some(read_matrix(spec, &spec.full, &same_dirs, Mode::Sim(1))?) };
        if let Some(s) = &same {
            if s.provenance != m.provenance {
                return Err(format!(
                    "xtask: the same-point runs are of revision {} binary {}, the matrix of revision {} binary {}: one report holds one",
                    s.provenance.revision, s.provenance.binary, m.provenance.revision, m.provenance.binary
                ));
            }
        }
        let swept = if a.sweep { super::sweep::sweeps(spec, &form, None, true, mode, &a.from[0], &a.from, 1)? } else { Vec::new() };
        (m, same, swept, a.from[0].clone())
    };
    // What the runs cost, kept beside their logs so that a report read again with --from
    // still gives it.
    let cost_file = dir.join(HOST_SECONDS);
    let host_s = if a.from.is_empty() {
        let s = t.elapsed().as_secs_f64();
        std::fs::write(&cost_file, format!("{s:.1}\n")).map_err(|e| format!("{}: {e}", cost_file.display()))?;
        s
    } else {
        std::fs::read_to_string(&cost_file).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(f64::NAN)
    };
    let reading = (spec.read)(&m);
    let decided = claims::decide_all(&spec.claims, &m, &crate::stats::bootstrap::Bootstrap::default());
    let path = a.out.clone().unwrap_or_else(|| crate::workspace_root().join("docs/experiments").join(format!("{}.md", spec.name)));
    let old = std::fs::read_to_string(crate::workspace_root().join("docs/experiments").join(format!("{}.md", spec.name))).unwrap_or_default();
    let (head, head_note) = head_or_qemu(spec, &old, &m.provenance);
    let qemu_rows = qemu_table_rows(&head, spec.variants.len());
    let beside = side_by_side(spec, &qemu_rows, same.as_ref().unwrap_or(&m));
    print!("{}", text_view(spec, &m, &reading, &decided));
    print!("\n{beside}");
    println!("sim: {:.0} s of host time; logs in {}", host_s, dir.display());
    if a.quick && a.out.is_none() {
        return Ok(());
    }
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let figures = report::write_figures(spec, &m, &decided, &path, "sim")?;
    let maps = super::sweep::markdown(spec, &swept, &path, "sim", "###")?;
    let section = sim_section(spec, &p, &form, &m, &reading, &decided, &figures, &beside, &command, host_s, &a.from) + &maps;
    let report = format!("{}\n{SIM_MARK}\n\n{section}", head.trim_end());
    std::fs::write(&path, report).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    if let Some(n) = head_note {
        println!("{n}");
    }
    Ok(())
}

/// What qemu reports written before the simulator engine said of its column, and what is true
/// once this section exists (their table keeps the empty `sim` column until a qemu rerun).
const OLD_QEMU_WORDS: [(&str, &str); 2] = [
    (
        "The `sim` column is the simulator engine's: empty, the engine does not yet run fairway's mechanism.",
        "The `sim` column of this table is empty (it was written before the simulator engine): the simulator's figures are in the section \"Engine `sim`\" below, at the debate's own machine and beside these at the same points.",
    ),
    ("sim: the simulator's column, empty until it exists", "sim: empty here, see the section \"Engine `sim`\""),
];

/// The report's qemu part if it is of the revision `p` names; else a title and the claim, with
/// a note of what was dropped (or that no qemu run has written its part).
fn head_or_qemu(spec: &Spec, old: &str, p: &Provenance) -> (String, Option<String>) {
    let mut q = qemu_part(old).to_string();
    for (was, is) in OLD_QEMU_WORDS {
        q = q.replace(was, is);
    }
    let bare = |what: String| {
        format!(
            "# Experiment `{}`\n\n**The claim.** {}\n\n**What the matrix asks.** {}\n\n{}{what}",
            spec.name,
            spec.claim,
            spec.asks,
            super::report::setup_table(spec)
        )
    };
    if q.trim().is_empty() {
        return (bare("(No qemu run has written its part of this report.)\n".into()), None);
    }
    match part_revision(&q) {
        Some(r) if r == p.revision => (q, None),
        other => (
            bare(dropped_part(spec.name, "qemu engine's", other, "--engine qemu")),
            Some(format!(
                "xtask: the qemu part of the report was of revision {} and this run is of {}: it was dropped (one report holds \
                 one revision); rerun the qemu engine to write it again",
                other.unwrap_or("unknown"),
                p.revision
            )),
        ),
    }
}

/// Σ over the matrix's runs of the CPU seconds each simulator process reported on its
/// `sim-speed:` line.
fn sim_cpu_s(m: &Matrix) -> f64 {
    m.cells
        .iter()
        .flatten()
        .flat_map(|c| c.logs.iter())
        .flat_map(|l| {
            l.raw()
                .lines()
                .filter(|t| t.starts_with("sim-speed:"))
                .filter_map(|t| t.split_whitespace().find_map(|w| w.strip_prefix("host_cpu_s=")).and_then(|v| v.parse::<f64>().ok()))
                .collect::<Vec<_>>()
        })
        .sum()
}

#[allow(clippy::too_many_arguments)]
fn sim_section(
    spec: &Spec,
    p: &SimPlan,
    form: &Form,
    m: &Matrix,
    r: &Reading,
    d: &Decided,
    figures: &[report::Figure],
    beside: &str,
    command: &str,
    host_s: f64,
    from: &[PathBuf],
) -> String {
    let machine = fairway_sim::presets::machine(form.smp, 0).map(|m| m.describe()).unwrap_or_else(|e| e.to_string());
    let mut s = format!("## Engine `sim`: the debate's machine, `{}`\n\n", form.smp);
    s += &revision_lines(m);
    let _ = write!(
        s,
        "**Command.** `{command}` ({}; the matrix's runs took {:.0} s of the simulator's CPU time in all, \
         `sim-speed:` summed{}). Mechanism and workloads: `kernel/mech` and `kernel/workloads` \
         in `fairway-sim` (the `sim` profile: release with whole-program LTO) of that revision.\n\n\
         **Machine and engine.** Engine `sim`: {machine}; {}; run i of a cell uses `--seed i`. Workload `{}` with `{}`. {}\n\n",
        if host_s.is_finite() {
            format!("{host_s:.0} s of host time on the 2-core host shared with other builds, the qemu form's points on the simulator included")
        } else {
            "run as a job list: no host time recorded".to_string()
        },
        sim_cpu_s(m),
        if from.is_empty() {
            String::new()
        } else {
            format!("; this report read the logs of that run again with `--from {}`", from.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" --from "))
        },
        m.mode.text(),
        spec.workload,
        if form.params.is_empty() { "its defaults" } else { form.params },
        p.note
    );
    let _ = write!(s, "### Table (sim, `{}`)\n\n```\n{}\n{}```\n\n", form.smp, legend(m), matrix_table(spec, m));
    let cells = report::intervals_table(m);
    if !cells.is_empty() {
        let _ = write!(s, "```\n{cells}```\n\n");
    }
    s += &reading_markdown(spec, r, d, figures, "###", &format!(" (sim, `{}`)", form.smp));
    let _ = write!(s, "\n### Both engines at the same points\n\n```\n{beside}```\n");
    s += "\nThe verdicts are the claims' (`xtask/src/experiment/claims.rs`); the mechanism's lines and checks are the \
          experiment's rules, from the simulator's figures above; the plan (machine, points, seeds) is \
          `xtask/src/experiment/sim_plans.rs`.\n";
    s
}

/// The change (in %) from which [`side_by_side`] counts a variant as moved on an engine.
pub const SAME_WAY_PCT: f64 = 2.0;

/// One row of a qemu table: metric, point, each variant's figure.
#[derive(Debug, PartialEq)]
pub struct QemuRow {
    pub metric: String,
    pub point: String,
    pub values: Vec<f64>,
}

/// The result and mechanism rows (`Hmean`/`Amean` lines) of the `## Table` block of a qemu
/// report, with `n` variants: `Amean metric point base new (+x%) ... unit`, each figure the
/// mean where a cell had several boots (`mean±sd`, `--runs N`).
pub fn qemu_table_rows(md: &str, n: usize) -> Vec<QemuRow> {
    let Some(start) = md.find("## Table") else { return Vec::new() };
    let block = md[start..].split("```").nth(1).unwrap_or("");
    let mut out = Vec::new();
    for line in block.lines() {
        let mut tok = line.split_whitespace();
        let Some(c) = tok.next() else { continue };
        if c != "Hmean" && c != "Amean" {
            continue;
        }
        let (Some(metric), Some(point)) = (tok.next(), tok.next()) else { continue };
        let values: Vec<f64> = tok
            .filter(|t| !t.starts_with('('))
            .take(n)
            .map_while(|t| t.split('±').next().and_then(|mean| mean.parse::<f64>().ok()))
            .collect();
        if values.len() == n {
            out.push(QemuRow { metric: metric.into(), point: point.into(), values });
        }
    }
    out
}

/// The simulator's figure of `metric` at point `p`, variant `v`: a result, or a mechanism
/// figure of the experiment (its label); NaN where the simulator has none.
fn sim_figure(spec: &Spec, m: &Matrix, p: usize, v: &str, metric: &str) -> f64 {
    match spec.mechs.iter().find(|x| x.label == metric) {
        Some(x) => m.mech(p, v, x.read),
        None => m.result(p, v, metric),
    }
}

/// The qemu rows beside the simulator's figures at the same points: per variant `qemu / sim`,
/// and how each variant moved against the baseline on both engines, by [`SAME_WAY_PCT`]: `=`
/// by that much or more the same way on both; `0` by less on both (no change on either, which
/// is not agreement: two nulls say nothing about the direction); `~` by that much on one engine
/// only; `x` in opposite directions; `-` no change to compare (a figure missing, or a baseline
/// of 0). A display of direction, not a verdict: the verdicts are the claims', with intervals.
pub fn side_by_side(spec: &Spec, qemu: &[QemuRow], sim: &Matrix) -> String {
    let t = SAME_WAY_PCT;
    let mut s = format!(
        "Both engines at the same points: qemu (-icount, its report's table above) / sim (--machine {}, mode {}); then, per \
         variant against the first, whether the change has the same direction on both (= {t}% or more the same way on both; \
         0 under {t}% on both: no change on either, not agreement; ~ {t}% or more on one engine only; x opposite):\n",
        sim.cells.first().and_then(|r| r.first()).map(|_| spec.full.smp).unwrap_or("?"),
        sim.mode.text()
    );
    if qemu.is_empty() {
        s += "  (no qemu table in this report to set beside the simulator's figures)\n";
        return s;
    }
    let fmt = |x: f64| if x == 0.0 { "0".to_string() } else if !x.is_finite() { "-".to_string() } else if x.abs() >= 100.0 { format!("{x:.0}") } else { format!("{x:.2}") };
    let mut lines = Vec::new();
    let (mut agree, mut neither, mut moved_one, mut opposite) = (0, 0, 0, 0);
    for row in qemu {
        let Some(p) = sim.points.iter().position(|x| *x == row.point) else { continue };
        let sv: Vec<f64> = sim.variants.iter().map(|v| sim_figure(spec, sim, p, v.label, &row.metric)).collect();
        if sv.iter().all(|x| !x.is_finite()) {
            continue;
        }
        let cells: Vec<String> = row.values.iter().zip(&sv).map(|(q, s)| format!("{} / {}", fmt(*q), fmt(*s))).collect();
        let dirs: String = (1..sv.len())
            .map(|v| {
                let (dq, ds) = (change(row.values[0], row.values[v]), change(sv[0], sv[v]));
                if !dq.is_finite() || !ds.is_finite() || row.values[0] == 0.0 || sv[0] == 0.0 {
                    '-'
                } else if dq.abs() < t && ds.abs() < t {
                    neither += 1;
                    '0'
                } else if dq.abs() >= t && ds.abs() >= t && dq.signum() == ds.signum() {
                    agree += 1;
                    '='
                } else if dq.abs() < t || ds.abs() < t {
                    moved_one += 1;
                    '~'
                } else {
                    opposite += 1;
                    'x'
                }
            })
            .collect();
        lines.push((row.metric.clone(), row.point.clone(), cells, dirs));
    }
    let mw = lines.iter().map(|l| l.0.len()).fold(6, usize::max);
    let pw = lines.iter().map(|l| l.1.len()).fold(5, usize::max);
    let cw: Vec<usize> = (0..sim.variants.len())
        .map(|v| lines.iter().map(|l| l.2[v].len()).chain([sim.variants[v].label.len()]).fold(8, usize::max))
        .collect();
    let _ = write!(s, "{:<mw$} {:<pw$}", "metric", "point");
    for (v, w) in sim.variants.iter().zip(&cw) {
        let _ = write!(s, "  {:>w$}", v.label);
    }
    s += "  same way\n";
    for (metric, point, cells, dirs) in &lines {
        let _ = write!(s, "{metric:<mw$} {point:<pw$}");
        for (c, w) in cells.iter().zip(&cw) {
            let _ = write!(s, "  {c:>w$}");
        }
        let _ = writeln!(s, "  {dirs}");
    }
    let _ = writeln!(
        s,
        "changes against the first variant: {agree} the same way on both engines (=), {neither} under {t}% on both (0), \
         {moved_one} moved {t}% or more on one engine only (~), {opposite} opposite (x)"
    );
    s
}

/// The test suite's hook for the simulator: the quick form of every experiment whose
/// `experiment-NAME-sim-quick` contains `filter`, run end to end with `bin` (the host tests'
/// `fairway-sim`); passes when every direction check holds.
pub fn sim_quick_jobs(filter: &str, bin: &Path) -> Vec<crate::test::Job> {
    super::all()
        .into_iter()
        .filter(|s| format!("experiment-{}-sim-quick", s.name).contains(filter))
        .map(|spec| {
            let bin: PathBuf = bin.to_path_buf();
            let boots = (plan(spec.name).quick.points.len() * spec.variants.len()) as u32;
            crate::test::Job { slots: 1, boots, run: Box::new(move || sim_quick_verdict(&spec, &bin)) }
        })
        .collect()
}

fn sim_quick_verdict(spec: &Spec, bin: &Path) -> crate::test::Verdict {
    let name: &'static str = Box::leak(format!("experiment-{}-sim-quick", spec.name).into_boxed_str());
    let t = std::time::Instant::now();
    let dir = std::env::temp_dir().join(format!("fairway-{name}-{}", std::process::id()));
    let run = run_matrix_in(spec, &plan(spec.name).quick, &Runner::Sim { bin: bin.into(), hw: None }, Mode::Sim(1), &dir, false, 1);
    let _ = std::fs::remove_dir_all(&dir);
    let secs = t.elapsed().as_secs_f64();
    match run {
        Err(e) => crate::test::Verdict { name, passed: false, report: format!("FAIL {name}: {e}\n"), secs },
        Ok(m) => {
            let r = (spec.read)(&m);
            let failed: Vec<&str> = r.checks.iter().filter(|c| !c.holds).map(|c| c.what.as_str()).collect();
            if failed.is_empty() {
                crate::test::Verdict { name, passed: true, report: format!("ok   {name} ({secs:.1} s): {} check(s) hold\n", r.checks.len()), secs }
            } else {
                let d = claims::decide_all(&spec.claims, &m, &crate::stats::bootstrap::Bootstrap::default());
                crate::test::Verdict { name, passed: false, report: format!("FAIL {name}: {}\n{}", failed.join("; "), text_view(spec, &m, &r, &d)), secs }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::synthetic;
    use super::super::{find, report::matrix_table};
    use super::*;

    const QEMU_TABLE: &str = "# Experiment `wake-balance`\n\n## Table\n\n```\nvariants ...\n\
        \x20      metric     point     2.6.12  Ken: CPU-domain flags off  unit\n\
        Hmean  throughput clients=1  100.000  110.000 (+10.00%)  95.000 (-5.00%)  100.000 (+0.00%)  120.000 (+20.00%)  MB/s  -\n\
        Amean  ttwu_move_affine clients=1  5  5 (+0.00%)  5 (+0.00%)  0 (-100.00%)  0 (-100.00%)  count\n\
        ```\n";

    #[test]
    fn the_qemu_tables_rows_are_read_back_with_every_variants_figure() {
        let rows = qemu_table_rows(QEMU_TABLE, 5);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0], QemuRow { metric: "throughput".into(), point: "clients=1".into(), values: vec![100.0, 110.0, 95.0, 100.0, 120.0] });
        assert_eq!(rows[1].values, vec![5.0, 5.0, 5.0, 0.0, 0.0]);
        // a table with another number of variants is not misread
        assert!(qemu_table_rows(QEMU_TABLE, 6).is_empty());
        assert!(qemu_table_rows("no table", 5).is_empty());
        // a table of several boots per cell (`--runs N`): each figure is its mean ± spread
        // (checked: parsing the whole token reads no row of it)
        let phases = "## Table\n\n```\nHmean  rps  threads=2,workers=2  69.200±0.020  69.180±0.030 (-0.03%)  69.210±0.010 (+0.01%*)  req/s\n```\n";
        assert_eq!(qemu_table_rows(phases, 3), vec![QemuRow { metric: "rps".into(), point: "threads=2,workers=2".into(), values: vec![69.2, 69.18, 69.21] }]);
    }

    /// Side by side: each variant's qemu and sim figure, and per variant whether both engines
    /// moved the same way against the first.
    #[test]
    fn both_engines_stand_side_by_side_and_their_directions_are_compared() {
        let spec = find("wake-balance").unwrap();
        let sim = synthetic(&spec, &["clients=1"], |_, v| {
            // against the first: the second the same way as qemu's, the third -5% on qemu and
            // -1% on sim (one engine only), the fourth 0% and +0.5% (no change on either), the
            // last +20% and -20% (opposite)
            let labels: Vec<&str> = spec.variants.iter().map(|v| v.label).collect();
            let tp = [200, 230, 198, 201, 160][labels.iter().position(|l| *l == v).unwrap()];
            format!("@fw result workload=tbench metric=throughput value={tp} unit=MB/s better=higher\n")
        });
        let t = side_by_side(&spec, &qemu_table_rows(QEMU_TABLE, 5), &sim);
        let row = t.lines().find(|l| l.starts_with("throughput")).unwrap();
        assert!(row.contains("100 / 200") && row.contains("110 / 230") && row.contains("120 / 160"), "{row}");
        assert!(row.ends_with("  =~0x"), "{row}");
        assert!(t.contains("1 the same way on both engines (=), 1 under 2% on both (0), 1 moved 2% or more on one engine only (~), 1 opposite (x)"), "{t}");
        // the mechanism row: these sim logs have no domstat, so 0 affine wakeups everywhere: a
        // baseline of 0 has no change to compare
        let aff = t.lines().find(|l| l.starts_with("ttwu_move_affine")).unwrap();
        assert!(aff.contains("5.00 / 0 ") && aff.ends_with("  ----"), "{aff}");
        // and the table of the matrix itself names no engine column any more
        assert!(!matrix_table(&spec, &sim).lines().next().unwrap().ends_with("sim"));
    }

    #[test]
    fn a_qemu_report_keeps_the_simulators_section_and_a_sim_report_the_qemu_part_of_the_same_revision() {
        let dir = std::env::temp_dir().join(format!("fairway-keep-sim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.md");
        let rev = |r: &str| Provenance { revision: r.into(), binary: String::new() };
        std::fs::write(&path, format!("# old qemu part\n\n{SIM_MARK}\n\n## Engine `sim`\n<!-- revision: aaa -->\nsim figures\n")).unwrap();
        let (kept, note) = keep_sim_section(&path, "# new qemu part\n".into(), &rev("aaa"));
        assert_eq!(kept, format!("# new qemu part\n{SIM_MARK}\n\n## Engine `sim`\n<!-- revision: aaa -->\nsim figures\n"));
        assert_eq!((qemu_part(&kept), note), ("# new qemu part\n", None));
        // a simulator section of another revision is dropped, and the note says so
        let (dropped, note) = keep_sim_section(&path, "# new qemu part\n".into(), &rev("bbb"));
        assert!(!dropped.contains("sim figures") && dropped.contains("was of revision `aaa`") && dropped.contains("experiment x --engine sim"), "{dropped}");
        assert!(note.unwrap().contains("revision aaa and this run is of bbb"));
        // an older qemu part's words about its empty sim column are made true, the rest kept
        let spec = find("avg-idle").unwrap();
        let old = format!("# q\n<!-- revision: aaa -->\n{}\nqemu body\n{SIM_MARK}\nold sim\n", OLD_QEMU_WORDS[0].0);
        assert_eq!(head_or_qemu(&spec, &old, &rev("aaa")), (format!("# q\n<!-- revision: aaa -->\n{}\nqemu body\n", OLD_QEMU_WORDS[0].1), None));
        // a qemu part of another revision (or of none) is not kept under this run's section
        let (head, note) = head_or_qemu(&spec, &old, &rev("ccc"));
        assert!(head.starts_with("# Experiment `avg-idle`") && !head.contains("qemu body") && note.unwrap().contains("of revision aaa"), "{head}");
        assert!(head_or_qemu(&spec, "", &rev("aaa")).0.contains("No qemu run has written its part"));
        // no earlier file, or one without a simulator section: the qemu report alone
        assert_eq!(keep_sim_section(&dir.join("none.md"), "q\n".into(), &rev("aaa")), ("q\n".into(), None));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// wake-balance's plan is the qemu form on its preset, cpu-capacity's the qemu form itself:
    /// one matrix serves both tables; the others need the qemu form's points run again.
    #[test]
    fn the_qemu_forms_points_run_again_only_where_the_plan_differs() {
        let same: Vec<&str> = super::super::all().into_iter().filter(|s| same_as_qemu(s, &plan(s.name).full)).map(|s| s.name).collect();
        assert_eq!(same, ["wake-balance", "cpu-capacity"]);
    }

    #[test]
    fn every_experiment_has_a_simulator_plan_on_a_machine_the_simulator_builds() {
        for s in super::super::all() {
            let p = plan(s.name);
            for f in [&p.full, &p.quick] {
                assert!(fairway_sim::presets::machine(f.smp, 0).is_ok(), "{}: {}", s.name, f.smp);
                assert!(!f.points.is_empty(), "{}", s.name);
            }
            assert!(p.seeds >= 1);
            assert!(p.seeds.max(MIN_SEEDS) >= 10, "a full run takes at least ten seeds per cell");
        }
    }
}
