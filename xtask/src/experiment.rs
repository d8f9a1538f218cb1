//! `cargo xtask experiment NAME [--quick] [--engine qemu|sim]`: one of the scheduler debates rerun
//! as a matrix of kernel command lines (the variants) over workload points, booted through
//! `bench`'s [`Boot`] and summarised with `compare`'s rows; a table in `compare`'s style and
//! `docs/experiments/NAME.md` with the table, the command, the revision, the machine, the engine and
//! mode of every figure, each claim of the debate decided with intervals (`claims.rs`), the
//! mechanism's figures and checks from the experiment's own rules (`defs.rs` lists them; each has
//! its file), and the figures beside it (`report.rs`). `--quick` is the small form the test suite
//! runs (`experiment-NAME-quick`).
//!
//! Engines: `qemu` (this kernel in QEMU, `-icount`: every figure is a count or a cost in
//! instruction time, the same on every boot). `sim` (`sim.rs`): `fairway-sim` runs the same
//! mechanism and workloads at the debate's own machine (`sim_plans.rs`: its preset, the points
//! scaled to it, at least ten seeds), and at the qemu form's points beside QEMU's figures.
//!
//! Modes of the `qemu` engine: `-icount` (the default, one boot per cell), `--runs N` (N -icount
//! boots per cell at N tick phases), or `--realtime N`: N boots of every cell without `-icount`,
//! for throughput and latency in host time; each figure is the mean of the N boots with their
//! sample standard deviation, and `*` where Welch's test (as `compare`'s) separates a variant from
//! the baseline. Real-time figures depend on the host's load; the report says which mode it holds
//! and is written only where `--out` says.
//!
//! Where runs happen (`runs.rs`): here, `--jobs N` at a time, or anywhere through a job list
//! (`--jobs-file`) whose logs `--from` reads back; every saved log names its revision and binary,
//! and one report holds one revision. A run boots a copy of its binary in its log directory, so
//! a build in the same checkout meanwhile (the test suite's kernel with the lock-order checker)
//! changes none of its runs. `--sweep` maps where a claim holds (`sweep.rs`).

use std::path::PathBuf;

use fairway_scenarios::Log;

use crate::bench::{cmdline, out_dir, progress, Boot};
use crate::results::RunRecord;
pub use claims::Claim;
pub use runs::Provenance;

mod avg_idle_example;
pub mod claims;
mod cpu_capacity;
mod defs;
mod delayed_dequeue;
mod readme;
mod report;
mod runs;
mod sis_scan_cost;
mod wake_balance;
mod sim;
mod sim_plans;
pub mod sweep;
pub use sim::sim_quick_jobs;
pub use defs::all;
pub use report::markdown;
use report::text_view;
#[cfg(test)]
use report::{legend, matrix_table};

/// Which machine runs the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The kernel in QEMU under -icount.
    Qemu,
    /// The host simulator (`fairway-sim`): the kernel's mechanism and workloads on simulated
    /// CPUs, at the debate's own machine (its preset).
    Sim,
}

#[derive(clap::Args)]
pub struct ExperimentArgs {
    /// Experiment name, `list`, or `verdicts` (the README's table of every report's verdicts,
    /// read from docs/experiments/; `--write` puts it into README.md).
    pub name: String,
    /// With `verdicts`: replace the README's table with the reports' (else it is printed).
    #[arg(long)]
    pub write: bool,
    /// The small form the test suite runs: fewer points, shorter runs.
    #[arg(long)]
    pub quick: bool,
    /// The engine that produces the figures.
    #[arg(long, value_enum, default_value_t = Engine::Qemu)]
    pub engine: Engine,
    /// Write the report here instead of docs/experiments/NAME.md (quick runs write none unless told).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Read the matrix from the logs a run of this experiment saved (target/bench/<time>-experiment-NAME/),
    /// or that the commands of a `--jobs-file` wrote, instead of booting. Given more than once,
    /// each log is taken from the first directory that has it (the logs of many machines merged);
    /// every log must come from the same revision and binary.
    #[arg(long, value_name = "DIR")]
    pub from: Vec<PathBuf>,
    /// With the qemu engine: boot every cell N times under -icount, run i at i/N of a tick's
    /// phase (`phase_ns`), so that each cell has a spread and every claim an interval.
    #[arg(long, value_name = "N")]
    pub runs: Option<usize>,
    /// Run N cells at a time, one process each (under -icount and on the simulator the figures
    /// do not depend on it; refused with --realtime, whose boots would slow each other).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    /// Write one shell command per run to F instead of running (each writes its log into the
    /// run's directory, where the kernel or simulator binary is copied), for GNU parallel or a
    /// Slurm array; then read them with `--from` that directory.
    #[arg(long, value_name = "F")]
    pub jobs_file: Option<PathBuf>,
    /// Also run (or with --from read) the experiment's sweeps: each claim's verdict over a grid
    /// of two parameters, mapped in the report.
    #[arg(long)]
    pub sweep: bool,
    /// Boot every cell N times without -icount (real time, N >= 2): mean and spread per figure.
    /// Its report goes only where --out says (the reports in docs/experiments/ are -icount's).
    #[arg(long, value_name = "N")]
    pub realtime: Option<usize>,
    /// With `--engine sim`: the simulated machine instead of the debate's preset (`cargo xtask
    /// sim --list`, or an -smp value).
    #[arg(long, value_name = "PRESET|SMP")]
    pub machine: Option<String>,
    /// With `--engine sim`: runs per cell (seeds 0..N-1) instead of the experiment's own count.
    #[arg(long, value_name = "N")]
    pub seeds: Option<usize>,
    /// With `--engine sim`: the hardware cost model's profile (`icount`, the default, or a
    /// machine's, with `,KEY=VALUE` overrides; docs/SIMULATOR.md, "The hardware cost model").
    #[arg(long, value_name = "PROFILE[,KEY=VALUE...]")]
    pub hw: Option<String>,
}

/// How the QEMU engine keeps time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `-icount`: one boot per cell, every figure a count or an instruction-time cost.
    Icount,
    /// `-icount`, N boots per cell, boot i at i/N of a tick's phase: N draws of where the ticks
    /// fall, each exact.
    Phases(usize),
    /// N boots per cell in real (host) time: means and their spread.
    RealTime(usize),
    /// The simulator (`fairway-sim`): N runs per cell, run i with `--seed i` (the seed orders
    /// simultaneous events and draws the workload's think and service times; one seed replays
    /// one run byte for byte).
    Sim(usize),
}

impl Mode {
    pub fn boots(self) -> usize {
        match self {
            Mode::Icount => 1,
            Mode::Phases(n) | Mode::RealTime(n) | Mode::Sim(n) => n,
        }
    }

    /// One run per cell that every rerun repeats: the figures have no spread to show.
    pub fn exact(self) -> bool {
        matches!(self, Mode::Icount | Mode::Sim(1))
    }

    /// Under -icount (one boot or several phases).
    pub fn icount(self) -> bool {
        matches!(self, Mode::Icount | Mode::Phases(_))
    }

    /// What run `run` adds to the cell's command line: its tick phase.
    pub fn run_extra(self, run: usize) -> String {
        match self {
            Mode::Phases(n) => format!("phase_ns={}", crate::bench::TICK_NS * run as u64 / n.max(1) as u64),
            _ => String::new(),
        }
    }

    /// The mode as the report's engine/mode line names it.
    pub fn text(self) -> String {
        match self {
            Mode::Icount => "-icount".into(),
            Mode::Phases(n) => format!("-icount, {n} tick phases per cell"),
            Mode::RealTime(n) => format!("real time, {n} boots per cell"),
            Mode::Sim(n) => format!("sim, {n} seed(s) per cell"),
        }
    }
}

/// The error `--realtime` with fewer than two boots gets: one boot has no spread.
pub const REALTIME_TOO_FEW: &str = "xtask: --realtime N needs N >= 2: real-time figures are read with their spread, and one boot has none";

/// One column of the matrix: a kernel command line, and the machine when it is not the form's
/// (`smp` empty: the form's; e.g. an SMT shape against the form's flat one).
#[derive(Clone, Debug)]
pub struct Variant {
    pub label: &'static str,
    pub append: &'static str,
    pub smp: &'static str,
    /// More `fairway-sim` arguments (space-separated; the simulator only), e.g. a sweep's cost.
    pub sim_args: &'static str,
}

impl Variant {
    /// The `-smp` this variant boots with under `form`.
    pub fn smp<'a>(&'a self, form: &'a Form) -> &'a str {
        if self.smp.is_empty() { form.smp } else { self.smp }
    }
}

/// A mechanism figure read from each boot's log (summed over its records), shown under the table.
pub struct Mech {
    pub label: &'static str,
    pub unit: &'static str,
    pub read: fn(&Log) -> f64,
}

/// The size of one form (full or quick) of an experiment.
#[derive(Clone, Debug)]
pub struct Form {
    pub smp: &'static str,
    /// Parameters common to every point.
    pub params: &'static str,
    /// The workload points (`key=value`, or `WORKLOAD:key=value` for another workload than the
    /// experiment's), one matrix row each.
    pub points: &'static [&'static str],
    pub timeout_s: u64,
}

/// One row of an experiment's workload-to-seed mapping, printed in its report: what the
/// seed thread ran or claimed (its figures quoted), what this experiment runs for it, and what
/// is still different.
pub struct SeedSetup {
    /// The seed thread's side.
    pub seed: &'static str,
    /// What runs here for it (a point, a variant, a machine).
    pub here: &'static str,
    /// What is still not the seed's.
    pub differs: &'static str,
}

/// One experiment: the debate, the matrix, and the rules that read it.
pub struct Spec {
    pub name: &'static str,
    /// The debate in one line: who, when, what was claimed, on which machine.
    pub claim: &'static str,
    /// What the matrix asks.
    pub asks: &'static str,
    /// The seed thread's setup, row by row, against this experiment's (the report's table
    /// "The seed's setup and this one").
    pub setup: &'static [SeedSetup],
    pub workload: &'static str,
    pub variants: Vec<Variant>,
    pub full: Form,
    pub quick: Form,
    /// Why the QEMU machine is what it is (when the debate's machine is beyond it).
    pub machine_note: &'static str,
    pub mechs: Vec<Mech>,
    /// Host-side part of the report (computed with the policy crate), if any.
    pub host: Option<fn() -> String>,
    /// The reading: generated from the measured matrix.
    pub read: fn(&Matrix) -> Reading,
    /// The debate's claims, each decided with intervals (`claims.rs`).
    pub claims: Vec<Claim>,
    /// The mechanism's distributions worth a plot (`avg_idle` at the gate, wakeup latencies).
    pub dists: Vec<Dist>,
    /// Maps of where a claim holds over two swept parameters (`--sweep`, `sweep.rs`).
    pub sweeps: Vec<sweep::Sweep>,
}

/// What the experiment's rules read from the matrix beside the claims' verdicts: the
/// mechanism's figures in words, and the checks the quick form must pass (only where the
/// effect is large enough to be stable).
pub struct Reading {
    pub why: Vec<String>,
    /// Checked by the test suite on the quick form.
    pub checks: Vec<Check>,
}

/// One check of a reading: what it asserts, whether it holds, and the case in which it fails
/// (a variant of the matrix or a change to the code: a check that cannot fail checks nothing).
#[derive(Clone, Debug)]
pub struct Check {
    pub what: String,
    pub holds: bool,
    pub fails_with: &'static str,
}

impl Check {
    pub fn new(what: impl Into<String>, holds: bool, fails_with: &'static str) -> Check {
        Check { what: what.into(), holds, fails_with }
    }
}

/// A distribution a mechanism figure has in each run's log (`@fw` histogram counters):
/// bins in order, each with its count; plotted per variant beside the report.
pub struct Dist {
    pub label: &'static str,
    /// What the bins count, for the axis.
    pub counts: &'static str,
    pub read: fn(&Log) -> Vec<(String, f64)>,
}

/// The boots of one (point, variant) cell.
pub struct Cell {
    pub recs: Vec<RunRecord>,
    pub logs: Vec<Log>,
    pub cmdline: String,
}

/// Every cell: `cells[point][variant]`, and what ran them.
pub struct Matrix {
    pub points: Vec<String>,
    pub variants: Vec<Variant>,
    pub cells: Vec<Vec<Cell>>,
    pub mode: Mode,
    pub provenance: Provenance,
}

impl Matrix {
    fn vi(&self, label: &str) -> usize {
        self.variants.iter().position(|v| v.label == label).unwrap_or_else(|| panic!("no variant {label}"))
    }

    /// The mean over the cell's successful runs of `@fw result metric`, NaN if none printed it.
    pub fn result(&self, p: usize, variant: &str, metric: &str) -> f64 {
        let c = &self.cells[p][self.vi(variant)];
        let v: Vec<f64> = c
            .recs
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| r.results.iter().find(|f| f.metric == metric).map(|f| f.value))
            .collect();
        if v.is_empty() { f64::NAN } else { crate::stats::amean(&v) }
    }

    /// The mean over the cell's runs of `read(log)`.
    pub fn mech(&self, p: usize, variant: &str, read: fn(&Log) -> f64) -> f64 {
        let c = &self.cells[p][self.vi(variant)];
        let v: Vec<f64> = c.logs.iter().map(read).collect();
        crate::stats::amean(&v)
    }

    /// What the engine of this matrix leaves out of a cost, for the readings' "why" lines:
    /// neither engine models caches, each in its own way.
    pub fn cost_words(&self) -> String {
        match self.mode {
            Mode::Sim(_) => {
                // The profile the runs printed (`@fw hw`, every simulator run).
                let hw = self.cells.iter().flatten().flat_map(|c| c.logs.iter()).find_map(|l| l.records("hw").next().map(|r| {
                    (r.get("profile").unwrap_or("icount").to_string(), r.get("costs").unwrap_or("none").to_string())
                }));
                match hw {
                    Some((profile, costs)) if costs != "none" => format!(
                        "on the simulator a cost is its cost model's (the kernel's instructions, measured under -icount) plus \
                         the hardware profile `{profile}`'s (costs acting: {costs}; docs/SIMULATOR.md, \"The hardware \
                         cost model\"): a migrated task refills its working set by distance, every CPU a balance pass \
                         or an idle-CPU scan examines costs its lines, a contended lock its wait, an IPI its flight, a \
                         halted CPU its exit"
                    ),
                    _ => "on the simulator a cost is its cost model's (measured under -icount): a fixed charge per wakeup, \
                          switch and pipe copy, and per CPU a balance pass or a wide idle-CPU scan reads, but nothing for a \
                          migration's cache refill (profile `icount`)"
                        .into(),
                }
            }
            _ => "under -icount a cost is instructions only, and QEMU models no caches".into(),
        }
    }

    /// [`Matrix::mech`] summed over every point.
    pub fn mech_all(&self, variant: &str, read: fn(&Log) -> f64) -> f64 {
        (0..self.points.len()).map(|p| self.mech(p, variant, read)).sum()
    }
}

/// Σ over the log's `kind` records of `field` (records lacking it count 0).
pub fn sum(log: &Log, kind: &str, field: &str) -> f64 {
    log.records(kind).map(|r| r.num(field).unwrap_or(0) as f64).sum()
}

/// [`sum`] over the records whose `key` is `val`.
pub fn sum_where(log: &Log, kind: &str, field: &str, key: &str, val: &str) -> f64 {
    log.records(kind).filter(|r| r.get(key) == Some(val)).map(|r| r.num(field).unwrap_or(0) as f64).sum()
}

/// `num / den`, or 0 when there is nothing to divide by (a metric of a run in which the
/// mechanism never acted reads 0, not NaN).
pub fn per(num: f64, den: f64) -> f64 {
    if den == 0.0 { 0.0 } else { num / den }
}

/// The change of `new` against `base` in % (positive: larger).
pub fn change(base: f64, new: f64) -> f64 {
    crate::stats::change(base, new)
}

pub fn find(name: &str) -> Result<Spec, String> {
    all().into_iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = all().iter().map(|s| s.name).collect();
        format!("xtask: no experiment {name:?}; the experiments: {}", names.join(", "))
    })
}

/// The QEMU engine's mode from `--realtime` and `--runs`.
fn qemu_mode(a: &ExperimentArgs) -> Result<Mode, String> {
    match (a.realtime, a.runs) {
        (Some(_), Some(_)) => Err("xtask: --runs N boots each cell N times under -icount at N tick phases; --realtime N boots it N times in real time: give one".into()),
        (None, None | Some(1)) => Ok(Mode::Icount),
        (None, Some(0)) => Err("xtask: --runs N needs N >= 1".into()),
        (None, Some(n)) => Ok(Mode::Phases(n)),
        (Some(n), None) if n < 2 => Err(REALTIME_TOO_FEW.into()),
        (Some(n), None) => Ok(Mode::RealTime(n)),
    }
}

/// `--jobs N` and `--jobs-file` against the mode: parallel boots in real time slow each other.
fn check_jobs(a: &ExperimentArgs, mode: Mode) -> Result<(), String> {
    if a.jobs == 0 {
        return Err("xtask: --jobs N needs N >= 1".into());
    }
    if matches!(mode, Mode::RealTime(_)) && (a.jobs > 1 || a.jobs_file.is_some()) {
        return Err("xtask: --jobs and --jobs-file run boots side by side; real-time boots would slow each other and their \
                    figures with them (under -icount and on the simulator they do not)"
            .into());
    }
    if a.jobs_file.is_some() && !a.from.is_empty() {
        return Err("xtask: --jobs-file writes the runs to do, --from reads runs done: give one".into());
    }
    Ok(())
}

pub fn experiment(a: ExperimentArgs) -> Result<(), String> {
    if a.name == "list" {
        for s in all() {
            println!("{:<16} {}\n{:<16} claim: {}", s.name, s.asks, "", s.claim);
        }
        return Ok(());
    }
    if a.name == "verdicts" {
        return readme::verdicts(a.write);
    }
    if a.write {
        return Err("xtask: --write is `cargo xtask experiment verdicts`'s (the README's table); a report goes where --out says".into());
    }
    let spec = find(&a.name)?;
    if a.engine == Engine::Sim {
        return sim::experiment(&spec, &a);
    }
    if a.machine.is_some() || a.seeds.is_some() || a.hw.is_some() {
        return Err(sim::QEMU_NO_MACHINE.into());
    }
    let mode = qemu_mode(&a)?;
    check_jobs(&a, mode)?;
    let form = if a.quick { &spec.quick } else { &spec.full };
    let qemu = crate::install::ensure(false)?;
    let command = format!(
        "cargo xtask experiment {}{}{} --engine qemu{}",
        spec.name,
        if a.quick { " --quick" } else { "" },
        if a.sweep { " --sweep" } else { "" },
        match mode {
            Mode::Icount => String::new(),
            Mode::Phases(n) => format!(" --runs {n}"),
            Mode::RealTime(n) => format!(" --realtime {n}"),
            Mode::Sim(_) => unreachable!("the simulator's runs are sim.rs's"),
        }
    );
    if let Some(file) = &a.jobs_file {
        let elf = crate::cargo::build_kernel()?;
        let dir = out_dir(&format!("experiment-{}", spec.name))?;
        let mut jobs = String::new();
        let runner = Runner::Qemu { qemu: qemu.clone(), elf };
        let mut n = runs::write_jobs(&spec, form, &runner, mode, &dir, &mut jobs)?;
        if a.sweep {
            n += sweep::write_jobs(&spec, form, &runner, mode, &dir, &mut jobs)?;
        }
        // The command names --sweep already when the job list holds the sweeps.
        let read_back = format!("{command} --from {}", dir.display());
        std::fs::write(file, runs::jobs_header(n, &[dir], &read_back) + &jobs).map_err(|e| format!("{}: {e}", file.display()))?;
        println!("wrote {}: {n} runs; then {read_back}", file.display());
        return Ok(());
    }
    let (m, swept) = if a.from.is_empty() {
        let runner = Runner::Qemu { qemu: qemu.clone(), elf: crate::cargo::build_kernel()? };
        let dir = out_dir(&format!("experiment-{}", spec.name))?;
        let m = run_matrix_in(&spec, form, &runner, mode, &dir, true, a.jobs)?;
        let swept = if a.sweep { sweep::sweeps(&spec, form, Some(&runner), false, mode, &dir, &[], a.jobs)? } else { Vec::new() };
        (m, swept)
    } else {
        let m = read_matrix(&spec, form, &a.from, mode)?;
        let swept = if a.sweep { sweep::sweeps(&spec, form, None, false, mode, &a.from[0], &a.from, 1)? } else { Vec::new() };
        (m, swept)
    };
    let from_note = if a.from.is_empty() {
        String::new()
    } else {
        format!(" This report read the runs' logs again with `--from {}`.", a.from.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" --from "))
    };
    let reading = (spec.read)(&m);
    let decided = claims::decide_all(&spec.claims, &m, &crate::stats::bootstrap::Bootstrap::default());
    print!("{}", text_view(&spec, &m, &reading, &decided));
    let out = match (&a.out, a.quick, mode) {
        (Some(p), _, _) => Some(p.clone()),
        (None, false, Mode::Icount | Mode::Phases(_)) => Some(crate::workspace_root().join("docs/experiments").join(format!("{}.md", spec.name))),
        (None, _, _) => None,
    };
    if let Some(path) = out {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let figures = report::write_figures(&spec, &m, &decided, &path, "qemu")?;
        let maps = sweep::markdown(&spec, &swept, &path, "qemu", "##")?;
        let report = markdown(&spec, form, &m, &reading, &decided, &figures, &command, &qemu, &from_note) + &maps;
        // The simulator's section of an earlier `--engine sim` run stays if it is of the same
        // revision (sim.rs).
        let (report, note) = sim::keep_sim_section(&path, report, &m.provenance);
        std::fs::write(&path, report).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
        if let Some(n) = note {
            println!("{n}");
        }
    }
    Ok(())
}

/// A point is `key=value,...` of the experiment's workload, or `WORKLOAD:key=value,...` of
/// another (an experiment may set its mechanism's own workload beside its headline one).
pub fn split_point<'a>(workload: &'a str, pt: &'a str) -> (&'a str, &'a str) {
    pt.split_once(':').unwrap_or((workload, pt))
}

/// A matrix point's workload and its parameters (the form's, then the point's own), as
/// `run_matrix` boots them and `read_matrix` expects to find them.
pub(super) fn point_params<'a>(spec: &Spec, form: &Form, pt: &'a str) -> (&'a str, String) {
    let (workload, pt_params) = split_point(spec.workload, pt);
    let params = [form.params, pt_params].iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join(",");
    (workload, params)
}

/// The log name of a cell's boot in a run's directory (`run` only where a cell has several).
pub(super) fn log_name(pt: &str, vi: usize, mode: Mode, run: usize) -> String {
    let pt = pt.replace([':', ','], "_");
    match mode {
        Mode::Icount => format!("{pt}-v{vi}.log"),
        Mode::Phases(_) => format!("{pt}-v{vi}-p{run}.log"),
        Mode::RealTime(_) => format!("{pt}-v{vi}-r{run}.log"),
        Mode::Sim(_) => format!("{pt}-v{vi}-s{run}.log"),
    }
}

/// The kernel command line of run `run` of a cell: the cell's, then what the run adds (its
/// tick phase). The cell's line is a prefix, which `read_matrix` looks for in a log.
pub(super) fn run_cmdline(cell: &str, mode: Mode, run: usize) -> String {
    let extra = mode.run_extra(run);
    if extra.is_empty() { cell.to_string() } else { format!("{cell} {extra}") }
}

/// The matrix of a finished run from its saved logs, each looked for in `dirs` in turn (the
/// logs of many machines merged): every log must be there, be a finished run of its cell's
/// command line that the kernel accepted, and name the same revision and binary as the others.
pub fn read_matrix(spec: &Spec, form: &Form, dirs: &[PathBuf], mode: Mode) -> Result<Matrix, String> {
    read_cells(spec, &spec.variants, form, dirs, mode)
}

/// [`read_matrix`] of these variants (a sweep's, which add its grid cell's arguments).
pub fn read_cells(spec: &Spec, variants: &[Variant], form: &Form, dirs: &[PathBuf], mode: Mode) -> Result<Matrix, String> {
    let mut cells = Vec::new();
    let mut provenances = Vec::new();
    let mut missing = Vec::new();
    for pt in form.points {
        let (workload, params) = point_params(spec, form, pt);
        let mut row = Vec::new();
        for (vi, v) in variants.iter().enumerate() {
            let line = cmdline(workload, &params, v.append);
            let mut cell = Cell { recs: Vec::new(), logs: Vec::new(), cmdline: line.clone() };
            for run in 0..mode.boots() {
                let name = log_name(pt, vi, mode, run);
                let Some(path) = dirs.iter().map(|d| d.join(&name)).find(|p| p.is_file()) else {
                    missing.push(name);
                    continue;
                };
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let log = Log::parse(&text);
                if !text.contains(&line) {
                    return Err(format!("{}: not booted with `{line}`", path.display()));
                }
                if !runs::finished(&text, mode) {
                    return Err(format!("{}: the run did not finish (its log ends with `{}`)", path.display(), text.lines().last().unwrap_or("")));
                }
                crate::bench::accepted_cmdline(&log, &line).map_err(|e| format!("{}: {e}", path.display()))?;
                provenances.push((path.clone(), Provenance::parse(&text).unwrap_or_default()));
                cell.recs.push(RunRecord::from_log(run, "finished (read from the log)".into(), true, 0.0, &log));
                cell.logs.push(log);
            }
            row.push(cell);
        }
        cells.push(row);
    }
    if !missing.is_empty() {
        return Err(format!(
            "xtask: {} of the logs of a {} run of {} are in none of {}: {}{}",
            missing.len(),
            mode.text(),
            spec.name,
            dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
            missing.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            if missing.len() > 5 { ", ..." } else { "" }
        ));
    }
    let provenance = runs::common_provenance(provenances.iter().map(|(p, v)| (p.as_path(), v.clone())))?;
    Ok(Matrix { points: form.points.iter().map(|s| s.to_string()).collect(), variants: variants.to_vec(), cells, mode, provenance })
}

/// Boots every cell once under -icount (deterministic: a second boot would repeat it), N
/// times at N tick phases, or N times in real time; `jobs` boots at a time; the logs go under
/// target/bench/<time>-experiment-NAME/. The boots of a point go round the variants N times
/// (variant 0, 1, ..., then again), so in real time a spell of host load falls on every variant
/// rather than on one.
pub fn run_matrix(spec: &Spec, form: &Form, qemu: &std::path::Path, elf: &std::path::Path, mode: Mode, jobs: usize) -> Result<Matrix, String> {
    let dir = out_dir(&format!("experiment-{}", spec.name))?;
    run_matrix_in(spec, form, &Runner::Qemu { qemu: qemu.into(), elf: elf.into() }, mode, &dir, true, jobs)
}

/// What boots a cell: QEMU with a kernel, or the `fairway-sim` binary (the cell's machine is
/// then the form's `smp`, a preset or an -smp value, or the variant's own).
pub enum Runner {
    Qemu { qemu: PathBuf, elf: PathBuf },
    /// `hw`: the `--hw` profile (None: fairway-sim's default, `icount`).
    Sim { bin: PathBuf, hw: Option<String> },
}

impl Runner {
    /// The binary whose runs these are.
    fn binary(&self) -> &std::path::Path {
        match self {
            Runner::Qemu { elf, .. } => elf,
            Runner::Sim { bin, .. } => bin,
        }
    }

    /// This runner with its binary copied into `dir` (or taken from the copy of a run directory
    /// above it, a sweep's grid point's): a build in the same checkout while the runs go on
    /// (`cargo xtask test` builds the kernel with the lock-order checker into the same file) must
    /// not change what the later runs boot, nor make their logs name a binary that did not run.
    pub fn pinned(&self, dir: &std::path::Path) -> Result<Runner, String> {
        let name = match self {
            Runner::Qemu { .. } => "fairway-kernel",
            Runner::Sim { .. } => "fairway-sim",
        };
        let copy = match dir.ancestors().take(4).map(|d| d.join(name)).find(|c| c.is_file()) {
            Some(c) => c,
            None => {
                let c = dir.join(name);
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                // Copied to a temporary name and renamed, so a copy is whole or absent.
                let tmp = dir.join(format!(".{name}.partial"));
                std::fs::copy(self.binary(), &tmp).map_err(|e| format!("{} -> {}: {e}", self.binary().display(), tmp.display()))?;
                std::fs::rename(&tmp, &c).map_err(|e| format!("{}: {e}", c.display()))?;
                c
            }
        };
        Ok(match self {
            Runner::Qemu { qemu, .. } => Runner::Qemu { qemu: qemu.clone(), elf: copy },
            Runner::Sim { hw, .. } => Runner::Sim { bin: copy, hw: hw.clone() },
        })
    }
}

/// [`run_matrix`] with the runner and the log directory given; `progress_bar` off where many
/// matrices run side by side (the test suite). Each log is saved with its provenance and exit
/// status (`runs.rs`), as a job of `--jobs-file` saves it.
pub fn run_matrix_in(spec: &Spec, form: &Form, runner: &Runner, mode: Mode, dir: &std::path::Path, progress_bar: bool, jobs: usize) -> Result<Matrix, String> {
    run_cells(spec, &spec.variants, form, runner, mode, dir, progress_bar, jobs)
}

/// [`run_matrix_in`] of these variants (a sweep's, which add its grid cell's arguments).
#[allow(clippy::too_many_arguments)]
pub fn run_cells(spec: &Spec, variants: &[Variant], form: &Form, runner: &Runner, mode: Mode, dir: &std::path::Path, progress_bar: bool, jobs: usize) -> Result<Matrix, String> {
    let runner = &runner.pinned(dir)?;
    let boot = |smp: &str| match runner {
        Runner::Qemu { qemu, elf } => Boot {
            qemu: qemu.clone(),
            elf: elf.clone(),
            smp: smp.into(),
            icount: mode.icount(),
            timeout: std::time::Duration::from_secs(form.timeout_s),
            sim: None,
            sim_args: Vec::new(),
        },
        Runner::Sim { bin, hw } => Boot::sim_binary(bin.clone(), smp, hw.as_deref()),
    };
    let provenance = Provenance::of(runner.binary())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Every run of every cell, in the order the boots go: point, round, variant.
    let cell_lines: Vec<Vec<String>> = form
        .points
        .iter()
        .map(|pt| {
            let (workload, params) = point_params(spec, form, pt);
            variants.iter().map(|v| cmdline(workload, &params, v.append)).collect()
        })
        .collect();
    let tasks: Vec<(usize, usize, usize)> = (0..form.points.len())
        .flat_map(|p| (0..mode.boots()).flat_map(move |run| (0..variants.len()).map(move |vi| (p, run, vi))))
        .collect();
    let pb = if progress_bar { progress(tasks.len() as u64) } else { indicatif::ProgressBar::hidden() };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    type Done = Option<Result<(RunRecord, Log), String>>;
    let done: std::sync::Mutex<Vec<Done>> = std::sync::Mutex::new((0..tasks.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, tasks.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= tasks.len() || failed.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let (p, run, vi) = tasks[i];
                let (pt, v) = (form.points[p], &variants[vi]);
                pb.set_message(format!("{pt} {}", v.label));
                let mut b = boot(v.smp(form));
                b.sim_args = v.sim_args.split_whitespace().map(String::from).collect();
                let result = b.run(run, &run_cmdline(&cell_lines[p][vi], mode, run)).and_then(|(rec, log)| {
                    let status = if rec.ok { runs::success_status(mode) } else { -1 };
                    std::fs::write(dir.join(log_name(pt, vi, mode, run)), runs::saved_log(&provenance, &log.raw(), status)).map_err(|e| e.to_string())?;
                    if !rec.ok {
                        pb.println(format!("{pt} {}: {}", v.label, rec.exit));
                    }
                    Ok((rec, log))
                });
                if result.is_err() {
                    failed.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                pb.inc(1);
                done.lock().expect("no run panics holding it")[i] = Some(result);
            });
        }
    });
    pb.finish_and_clear();
    let mut done = done.into_inner().expect("every run thread has ended");
    if let Some(e) = done.iter_mut().find_map(|r| match r.take() {
        Some(Err(e)) => Some(e),
        other => {
            *r = other;
            None
        }
    }) {
        return Err(e);
    }
    let mut cells: Vec<Vec<Cell>> = cell_lines
        .iter()
        .map(|row| row.iter().map(|line| Cell { recs: Vec::new(), logs: Vec::new(), cmdline: line.clone() }).collect())
        .collect();
    for (&(p, _, vi), r) in tasks.iter().zip(done) {
        if let Some(Ok((rec, log))) = r {
            cells[p][vi].recs.push(rec);
            cells[p][vi].logs.push(log);
        }
    }
    let failed: Vec<String> = cells
        .iter()
        .flatten()
        .flat_map(|c| c.recs.iter().filter(|r| !r.ok).map(|r| format!("  {} (boot {}): {}", c.cmdline, r.run, r.exit)))
        .collect();
    if !failed.is_empty() {
        return Err(format!("xtask: {} boots failed (logs in {}):\n{}", failed.len(), dir.display(), failed.join("\n")));
    }
    Ok(Matrix { points: form.points.iter().map(|s| s.to_string()).collect(), variants: variants.to_vec(), cells, mode, provenance })
}

/// The test suite's hook: the quick form of every experiment whose `experiment-NAME-quick`
/// contains `filter`, booted end to end; passes when every direction check holds.
pub fn quick_jobs(filter: &str, qemu: &std::path::Path, elf: &std::path::Path) -> Vec<crate::test::Job> {
    // One slot each, beside the scenarios: every boot is under -icount, so running beside another
    // changes no figure, only the wall time.
    all()
        .into_iter()
        .filter(|s| format!("experiment-{}-quick", s.name).contains(filter))
        .map(|spec| {
            let (qemu, elf) = (qemu.to_path_buf(), elf.to_path_buf());
            let boots = (spec.quick.points.len() * spec.variants.len()) as u32;
            crate::test::Job {
                slots: 1,
                boots,
                run: Box::new(move || quick_verdict(&spec, &qemu, &elf)),
            }
        })
        .collect()
}

/// One experiment's quick form, booted and read.
fn quick_verdict(spec: &Spec, qemu: &std::path::Path, elf: &std::path::Path) -> crate::test::Verdict {
    let name: &'static str = Box::leak(format!("experiment-{}-quick", spec.name).into_boxed_str());
    let t = std::time::Instant::now();
    match run_matrix(spec, &spec.quick, qemu, elf, Mode::Icount, 1) {
        Err(e) => crate::test::Verdict { name, passed: false, report: format!("FAIL {name}: {e}\n"), secs: t.elapsed().as_secs_f64() },
        Ok(m) => {
            let r = (spec.read)(&m);
            let d = claims::decide_all(&spec.claims, &m, &crate::stats::bootstrap::Bootstrap::default());
            let failed: Vec<&str> = r.checks.iter().filter(|c| !c.holds).map(|c| c.what.as_str()).collect();
            // No check: the effect is too small at the quick size to have a stable direction; the
            // quick form still proves every cell boots and the rules read the matrix.
            if failed.is_empty() {
                crate::test::Verdict {
                    name,
                    passed: true,
                    report: format!("ok   {name} ({:.1} s): {} check(s) hold\n", t.elapsed().as_secs_f64(), r.checks.len()),
                    secs: t.elapsed().as_secs_f64(),
                }
            } else {
                crate::test::Verdict { name, passed: false, report: format!("FAIL {name}: {}\n{}", failed.join("; "), text_view(spec, &m, &r, &d)), secs: t.elapsed().as_secs_f64() }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell whose one boot printed `lines` (`@fw ...` records), ok.
    pub(super) fn cell(cmd: &str, lines: &str) -> Cell {
        let log = Log::parse(lines);
        let rec = RunRecord::from_log(0, "kernel success".into(), true, 0.0, &log);
        Cell { recs: vec![rec], logs: vec![log], cmdline: cmd.into() }
    }

    /// A matrix of `spec` at `points` where `f(point, variant label)` gives each boot's log.
    pub(super) fn synthetic(spec: &Spec, points: &[&str], f: impl Fn(&str, &str) -> String) -> Matrix {
        let cells = points
            .iter()
            .map(|pt| spec.variants.iter().map(|v| cell(&format!("workload=x,{pt},ms=1000 {}", v.append), &f(pt, v.label))).collect())
            .collect();
        Matrix { points: points.iter().map(|s| s.to_string()).collect(), variants: spec.variants.clone(), cells, mode: Mode::Icount, provenance: Provenance::default() }
    }

    /// A matrix of `spec` at `points`, `runs` runs per cell (as the simulator's seeds), where
    /// `f(point, variant label, run)` gives each run's log.
    pub(super) fn synthetic_runs(spec: &Spec, points: &[&str], runs: usize, f: impl Fn(&str, &str, usize) -> String) -> Matrix {
        let cells = points
            .iter()
            .map(|pt| {
                spec.variants
                    .iter()
                    .map(|v| {
                        let mut c = Cell { recs: Vec::new(), logs: Vec::new(), cmdline: format!("workload=x,{pt} {}", v.append) };
                        for run in 0..runs {
                            let log = Log::parse(&f(pt, v.label, run));
                            c.recs.push(RunRecord::from_log(run, "ok".into(), true, 0.0, &log));
                            c.logs.push(log);
                        }
                        c
                    })
                    .collect()
            })
            .collect();
        Matrix { points: points.iter().map(|s| s.to_string()).collect(), variants: spec.variants.clone(), cells, mode: Mode::Sim(runs), provenance: Provenance::default() }
    }

    #[test]
    fn points_name_their_workload_or_take_the_experiments() {
        assert_eq!(split_point("fserver", "threads=4"), ("fserver", "threads=4"));
        assert_eq!(split_point("fserver", "prodcons:pairs=4"), ("prodcons", "pairs=4"));
    }

    #[test]
    fn every_experiment_is_found_by_name_and_an_unknown_one_is_named() {
        for s in all() {
            assert_eq!(find(s.name).unwrap().name, s.name);
            assert!(s.variants.len() >= 2 && !s.full.points.is_empty() && !s.quick.points.is_empty(), "{}", s.name);
        }
        let e = find("nope").err().unwrap();
        assert!(e.contains("no experiment \"nope\"") && e.contains("avg-idle") && e.contains("delayed-dequeue"), "{e}");
    }

    /// The arguments of `cargo xtask experiment avg-idle --quick` (qemu engine).
    pub(super) fn args() -> ExperimentArgs {
        ExperimentArgs {
            name: "avg-idle".into(),
            write: false,
            quick: true,
            engine: Engine::Qemu,
            out: None,
            from: Vec::new(),
            runs: None,
            jobs: 1,
            jobs_file: None,
            sweep: false,
            realtime: None,
            machine: None,
            seeds: None,
            hw: None,
        }
    }

    #[test]
    fn the_simulators_options_are_refused_by_the_qemu_engine_and_real_time_by_the_simulator() {
        let a = ExperimentArgs { machine: Some("4".into()), ..args() };
        assert_eq!(experiment(a).unwrap_err(), sim::QEMU_NO_MACHINE);
        let a = ExperimentArgs { hw: Some("icount".into()), ..args() };
        assert_eq!(experiment(a).unwrap_err(), sim::QEMU_NO_MACHINE);
        let a = ExperimentArgs { engine: Engine::Sim, realtime: Some(2), ..args() };
        assert!(experiment(a).unwrap_err().contains("--realtime is the qemu engine's"));
    }

    #[test]
    fn real_time_needs_two_boots_per_cell() {
        let a = ExperimentArgs { realtime: Some(1), ..args() };
        assert_eq!(experiment(a).unwrap_err(), REALTIME_TOO_FEW);
    }

    /// `--runs`, `--realtime`, `--jobs` and `--jobs-file` together: what each combination means,
    /// or the message that refuses it.
    #[test]
    fn runs_jobs_and_real_time_combine_or_are_refused_by_name() {
        assert_eq!(qemu_mode(&args()), Ok(Mode::Icount));
        assert_eq!(qemu_mode(&ExperimentArgs { runs: Some(1), ..args() }), Ok(Mode::Icount));
        assert_eq!(qemu_mode(&ExperimentArgs { runs: Some(8), ..args() }), Ok(Mode::Phases(8)));
        assert!(qemu_mode(&ExperimentArgs { runs: Some(0), ..args() }).unwrap_err().contains("--runs N needs N >= 1"));
        assert!(qemu_mode(&ExperimentArgs { runs: Some(3), realtime: Some(3), ..args() }).unwrap_err().contains("give one"));
        assert!(check_jobs(&ExperimentArgs { jobs: 0, ..args() }, Mode::Icount).unwrap_err().contains("--jobs N needs N >= 1"));
        assert!(check_jobs(&ExperimentArgs { jobs: 2, ..args() }, Mode::RealTime(3)).unwrap_err().contains("slow each other"));
        assert!(check_jobs(&ExperimentArgs { jobs: 4, ..args() }, Mode::Phases(4)).is_ok());
        let both = ExperimentArgs { jobs_file: Some("j".into()), from: vec!["d".into()], ..args() };
        assert!(check_jobs(&both, Mode::Icount).unwrap_err().contains("give one"));
        // run i of N phases starts its workload i/N of a tick late
        assert_eq!(Mode::Phases(4).run_extra(1), "phase_ns=250000");
        assert_eq!(run_cmdline("workload=pipe", Mode::Phases(4), 2), "workload=pipe phase_ns=500000");
        assert_eq!(run_cmdline("workload=pipe", Mode::Icount, 0), "workload=pipe");
        assert_eq!(log_name("a:b=1,c=2", 3, Mode::Phases(4), 2), "a_b=1_c=2-v3-p2.log");
    }

    /// A run boots a copy of its binary in its directory, which a later build does not change;
    /// a sweep's grid point below it boots the run's copy (checked: booting `runner` itself
    /// fails the first assertion).
    #[test]
    fn runs_boot_a_copy_of_the_binary_that_a_later_build_leaves_alone() {
        let base = std::env::temp_dir().join(format!("fairway-exp-pin-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let built = base.join("built-kernel");
        std::fs::write(&built, b"kernel A").unwrap();
        let runner = Runner::Qemu { qemu: "qemu".into(), elf: built.clone() };
        let run_dir = base.join("run");
        let pinned = runner.pinned(&run_dir).unwrap();
        assert_eq!(pinned.binary(), run_dir.join("fairway-kernel"));
        std::fs::write(&built, b"kernel B, rebuilt with lockdep").unwrap();
        assert_eq!(std::fs::read(pinned.binary()).unwrap(), b"kernel A");
        assert_ne!(Provenance::of(pinned.binary()).unwrap(), Provenance::of(&built).unwrap());
        // a grid point below the run takes the run's copy
        let grid = run_dir.join("sweep0").join("x0-y0");
        assert_eq!(runner.pinned(&grid).unwrap().binary(), run_dir.join("fairway-kernel"));
        let sim = Runner::Sim { bin: built, hw: Some("icount".into()) }.pinned(&base.join("sim")).unwrap();
        assert!(matches!(&sim, Runner::Sim { hw: Some(h), .. } if h == "icount") && sim.binary().ends_with("sim/fairway-sim"));
        // A matrix run boots the copy: a stand-in simulator (a shell script printing one
        // result) is rewritten after the run, and the run's copy and its logs' binary are the
        // first version's (checked: run_cells without `pinned` fails here).
        let fake = base.join("fake-sim");
        let version = |v: u32| format!("#!/bin/sh\nfor a; do last=$a; done\necho \"cmdline: $last\"\necho '@fw result workload=schbench metric=rps value={v} unit=req/s better=higher'\n");
        std::fs::write(&fake, version(1)).unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let spec = find("delayed-dequeue").unwrap();
        let form = Form { smp: "2", params: "", points: &["threads=1,workers=1"], timeout_s: 0 };
        let dir = base.join("matrix");
        let m = run_matrix_in(&spec, &form, &Runner::Sim { bin: fake.clone(), hw: None }, Mode::Sim(1), &dir, false, 1).unwrap();
        std::fs::write(&fake, version(2)).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("fairway-sim")).unwrap(), version(1));
        assert_eq!(m.provenance.binary, runs::file_hash(&dir.join("fairway-sim")).unwrap());
        assert_eq!(m.result(0, spec.variants[0].label, "rps"), 1.0);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn real_time_boots_have_a_log_each_and_are_read_back_as_one_cell() {
        let spec = find("wake-balance").unwrap();
        let form = &spec.quick;
        let mode = Mode::RealTime(3);
        let names: Vec<String> = (0..3).map(|r| log_name(form.points[0], 1, mode, r)).collect();
        assert!(names[0] != names[1] && names[1] != names[2], "{names:?}");
        assert_eq!(log_name(form.points[0], 1, Mode::Icount, 0), log_name(form.points[0], 1, Mode::Icount, 2));
        // Two machines' directories: run 0 in one, runs 1 and 2 in the other.
        let base = std::env::temp_dir().join(format!("fairway-exp-rt-{}", std::process::id()));
        let dirs = [base.join("a"), base.join("b")];
        dirs.iter().for_each(|d| std::fs::create_dir_all(d).unwrap());
        let prov = Provenance { revision: "0123456789ab".into(), binary: "00000000deadbeef".into() };
        let write = |pt: &str, vi: usize, run: usize, prov: &Provenance, status: i32| {
            let (workload, params) = point_params(&spec, form, pt);
            let text = format!(
                "cmdline: {}\n@fw result workload=schbench metric=rps value={} unit=req/s better=higher\n",
                cmdline(workload, &params, spec.variants[vi].append),
                100 + 10 * run + vi
            );
            std::fs::write(dirs[usize::from(run > 0)].join(log_name(pt, vi, mode, run)), runs::saved_log(prov, &text, status)).unwrap();
        };
        for pt in form.points {
            for vi in 0..spec.variants.len() {
                (0..3).for_each(|run| write(pt, vi, run, &prov, 33));
            }
        }
        let m = read_matrix(&spec, form, &dirs, mode).unwrap();
        assert_eq!((m.mode, &m.provenance), (mode, &prov));
        assert!(m.cells[0].iter().all(|c| c.recs.len() == 3 && c.logs.len() == 3));
        // variant 1's boots printed 101, 111, 121: their mean
        assert_eq!(m.result(0, spec.variants[1].label, "rps"), 111.0);
        // one directory alone lacks runs, and says which
        let e = read_matrix(&spec, form, &dirs[..1], mode).err().unwrap();
        assert!(e.contains("of the logs of a real time, 3 boots per cell run of wake-balance are in none of") && e.contains("-r1.log"), "{e}");
        // an -icount read of the same directories finds no single-boot logs and says so
        let e = read_matrix(&spec, form, &dirs, Mode::Icount).err().unwrap();
        assert!(e.contains("are in none of") && e.contains("-icount run of wake-balance"), "{e}");
        // a run of another revision is not merged in; a run that did not finish is not read
        let pt = form.points[0];
        write(pt, 2, 1, &Provenance { revision: "ba9876543210".into(), ..prov.clone() }, 33);
        let e = read_matrix(&spec, form, &dirs, mode).err().unwrap();
        assert!(e.contains("2 different revisions") && e.contains("ba9876543210"), "{e}");
        write(pt, 2, 1, &prov, 35);
        let e = read_matrix(&spec, form, &dirs, mode).err().unwrap();
        assert!(e.contains("did not finish") && e.contains("@xtask status=35"), "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_real_time_table_shows_the_spread_and_marks_what_the_test_separates() {
        let spec = find("wake-balance").unwrap();
        // variant 0: 98-102, variant 1: 148-152 (far from it), the others 70-130 (overlapping it)
        let tp = |vi: usize, run: usize| -> f64 {
            match vi {
                0 => [100.0, 102.0, 98.0][run],
                1 => [150.0, 152.0, 148.0][run],
                _ => [100.0, 130.0, 70.0][run],
            }
        };
        let cells = spec
            .variants
            .iter()
            .enumerate()
            .map(|(vi, v)| {
                let mut c = Cell { recs: Vec::new(), logs: Vec::new(), cmdline: format!("workload=tbench,clients=1 {}", v.append) };
                for run in 0..3 {
                    let log = Log::parse(&format!(
                        "@fw result workload=tbench metric=throughput value={} unit=MB/s better=higher\n",
                        tp(vi, run)
                    ));
                    c.recs.push(RunRecord::from_log(run, "kernel success".into(), true, 0.0, &log));
                    c.logs.push(log);
                }
                c
            })
            .collect();
        let m = Matrix { points: vec!["clients=1".into()], variants: spec.variants.clone(), cells: vec![cells], mode: Mode::RealTime(3), provenance: Provenance::default() };
        let t = matrix_table(&spec, &m);
        let row = t.lines().find(|l| l.contains("throughput")).unwrap();
        // 100, 102, 98: Hmean 99.973, stddev 2; 148-152 is far from it (*); 70-130 is not
        assert!(row.contains("99.973±2.000 ") && row.contains("149.982±2.000 (+50.02%*)"), "{row}");
        let wide = row.split("±30.000 (").nth(1).unwrap().split(')').next().unwrap();
        assert!(!wide.ends_with('*'), "{row}");
        let l = legend(&m);
        assert!(l.contains("mode real time, 3 boots per cell") && l.contains("standard deviation"), "{l}");
        assert!(legend(&Matrix { mode: Mode::Icount, ..m }).contains("mode -icount"));
    }

    /// With several runs per cell each result (a tail too) gets its mean with an interval per
    /// cell; one run per cell, none.
    #[test]
    fn each_cells_results_get_their_interval_where_cells_have_runs() {
        let spec = find("delayed-dequeue").unwrap();
        let m = synthetic_runs(&spec, &["threads=1,workers=4"], 5, |_, v, run| {
            let p99 = if v == spec.variants[0].label { 25 + run } else { 31 };
            format!("@fw result workload=schbench metric=wakeup_p99 value={p99} unit=us better=lower\n")
        });
        let t = report::intervals_table(&m);
        let row = t.lines().find(|l| l.starts_with("wakeup_p99")).unwrap();
        // 25..29: mean 27 inside its interval; the constant cells' interval is the point
        assert!(row.contains("threads=1,workers=4") && row.contains("27.0 [") && row.contains("31.0 [31.0, 31.0]") && row.ends_with("us"), "{row}");
        let lo_hi: Vec<f64> = row.split('[').nth(1).unwrap().split(']').next().unwrap().split(", ").map(|x| x.parse().unwrap()).collect();
        assert!(lo_hi[0] >= 25.0 && lo_hi[0] < 27.0 && lo_hi[1] > 27.0 && lo_hi[1] <= 29.0, "{lo_hi:?}");
        assert!(report::intervals_table(&synthetic(&spec, &["threads=1,workers=4"], |_, _| String::new())).is_empty());
    }

    #[test]
    fn the_table_has_every_variant_and_the_changes_against_the_first() {
        let spec = find("wake-balance").unwrap();
        let m = synthetic(&spec, &["clients=1"], |_, v| {
            let tp = if v == "2.6.12" { 100 } else { 110 };
            format!(
                "@fw result workload=tbench metric=throughput value={tp} unit=MB/s better=higher\n\
                 @fw domstat cpu=0 level=SMT ttwu_move_affine=3 ttwu_wake_remote=4\n\
                 @fw domstat cpu=0 level=PKG ttwu_move_affine=2 ttwu_wake_remote=5\n"
            )
        });
        let t = matrix_table(&spec, &m);
        let head = t.lines().next().unwrap();
        for v in &spec.variants {
            assert!(head.contains(v.label), "{head}");
        }
        assert!(head.trim_end().ends_with("unit"), "{head}");
        let tp = t.lines().find(|l| l.contains("throughput")).unwrap();
        assert!(tp.starts_with("Hmean") && tp.contains("100.000") && tp.contains("110.000 (+10.00%)") && tp.trim_end().ends_with("MB/s"), "{tp}");
        let aff = t.lines().find(|l| l.contains("ttwu_move_affine")).unwrap();
        assert!(aff.contains(" 5 ") && aff.contains("5 (+0.00%)"), "summed over CPUs and levels: {aff}");
        let smt = t.lines().find(|l| l.contains("ttwu_wake_remote_smt")).unwrap();
        assert!(smt.contains(" 4 "), "{smt}");
    }
}
