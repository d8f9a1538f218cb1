//! Running a matrix: every cell booted (QEMU, or `fairway-sim`), `jobs` at a time, each log
//! saved with its provenance and exit status, from a copy of the binary kept beside the logs.

use std::path::PathBuf;

use fairway_scenarios::Log;

use super::{log_name, point_params, run_cmdline, runs, Cell, Form, Matrix, Mode, Provenance, Spec, Variant};
use crate::bench::{cmdline, out_dir, progress, Boot};
use crate::results::RunRecord;

/// Boots every cell once under -icount (deterministic: a second boot would repeat it), N
/// times at N tick phases, or N times in real time; `jobs` boots at a time; the logs go under
/// `target/bench/<time>-experiment-NAME/`. The boots of a point go round the variants N times
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
    pub(super) fn binary(&self) -> &std::path::Path {
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

