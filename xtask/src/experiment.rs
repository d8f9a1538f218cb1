//! `cargo xtask experiment NAME [--quick] [--engine qemu|sim]`: one of the scheduler debates rerun
//! as a matrix of kernel command lines (the variants) over workload points, booted through
//! `bench`'s [`Boot`](crate::bench::Boot) and summarised with `compare`'s rows; a table in `compare`'s style and
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
//!
//! The files: what an experiment declares (`spec.rs`), the matrix of its runs and reading it back
//! from saved logs (`matrix.rs`), booting it (`runner.rs`), the test suite's quick forms
//! (`quick.rs`), the report (`report.rs`), one file per experiment (`defs.rs` lists them).

use std::path::PathBuf;

#[cfg(test)]
use fairway_scenarios::Log;

use crate::bench::{cmdline, out_dir};
#[cfg(test)]
use crate::results::RunRecord;
pub use claims::Claim;
pub use runs::Provenance;
pub use matrix::{change, per, read_cells, read_matrix, split_point, sum, sum_where, Cell, Matrix, Mode, REALTIME_TOO_FEW};
use matrix::{log_name, point_params, run_cmdline};
pub use quick::quick_jobs;
pub use runner::{run_cells, run_matrix, run_matrix_in, Runner};
pub use spec::{Check, Dist, Form, Mech, Reading, SeedSetup, Spec, Variant};

mod avg_idle_example;
mod matrix;
mod quick;
mod runner;
mod spec;
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
/// The experiments, in the order of the README's table.
pub fn all() -> Vec<Spec> {
    vec![defs::avg_idle(), wake_balance::spec(), delayed_dequeue::spec(), sis_scan_cost::spec(), cpu_capacity::spec()]
}
pub use report::markdown;
use report::text_view;
#[cfg(test)]
use report::{legend, matrix_table};

/// Which machine runs the matrix (defined beside `bench`'s engine options, which every command
/// that boots shares).
pub use crate::bench::Engine;

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
    /// Read the matrix from the logs a run of this experiment saved (`target/bench/<time>-experiment-NAME/`),
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

