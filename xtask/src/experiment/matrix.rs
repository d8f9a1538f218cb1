//! The matrix of an experiment's runs: how the QEMU engine keeps time (`Mode`), the cells with
//! their logs, the figures read from them, and reading a finished run back from its saved logs
//! (`--from`).

use std::path::PathBuf;

use fairway_scenarios::Log;

use super::{runs, Form, Provenance, Spec, Variant};
use crate::bench::cmdline;
use crate::results::RunRecord;

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
    pub(super) fn vi(&self, label: &str) -> usize {
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

