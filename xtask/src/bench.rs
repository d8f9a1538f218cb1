//! `cargo xtask bench WORKLOAD`: N fresh boots of one workload, a summary
//! table, and CSV + JSON (+ the serial logs, + a latency SVG when the
//! workload prints `@fw hist`) under `target/bench/<timestamp>-<workload>/`.

use std::path::PathBuf;
use std::time::Duration;

use fairway_scenarios::Log;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::qemu::QemuConfig;
use crate::results::RunRecord;
use crate::revision::Kernel;
use crate::workload_args::{RevArg, WorkloadArgs};

mod output;
mod summary;

pub use output::{out_dir, timestamp, write_csv};
use output::write;
pub use summary::{differing_runs, outlier_lines, summarize, summary_table, Summary};

#[derive(clap::Args, Clone)]
pub struct BenchArgs {
    #[command(flatten)]
    pub run: WorkloadArgs,
    /// Fresh boots.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Deterministic instruction-counted time; warns when runs differ.
    #[arg(long)]
    pub icount: bool,
    /// With --icount: run i starts its workload `phase_ns` = i/runs of a tick later, so the
    /// runs sample where the ticks fall instead of repeating one run.
    #[arg(long)]
    pub phases: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Which machine runs a boot: QEMU or the simulator (`bench`, `compare`, `trace`, `experiment`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The kernel in QEMU under -icount.
    Qemu,
    /// The host simulator (`fairway-sim`): the kernel's mechanism and workloads on simulated
    /// CPUs, at the debate's own machine (its preset).
    Sim,
}

/// `--engine qemu|sim` and `--machine`: what runs each run of `bench` and `compare`.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct EngineArgs {
    /// `qemu`: a fresh boot of the kernel per run. `sim`: one `fairway-sim` process per run
    /// (the `sim` profile: release with whole-program LTO), the kernel's workload code on fairway's mechanism in the simulator;
    /// run i uses `--seed i`.
    #[arg(long, value_enum, default_value_t = Engine::Qemu)]
    pub engine: Engine,
    /// With `--engine sim`: the simulated machine, a preset (`cargo xtask sim --list`) or an
    /// -smp value such as `4` or `8,sockets=2,cores=2,threads=2`.
    #[arg(long, value_name = "PRESET|SMP")]
    pub machine: Option<String>,
    /// With `--engine sim`: the hardware cost model's profile, `icount` (the default: no
    /// hardware costs) or a machine's (`cargo xtask sim --list`), with `,KEY=VALUE`
    /// overrides (docs/SIMULATOR.md, "The hardware cost model").
    #[arg(long, value_name = "PROFILE[,KEY=VALUE...]")]
    pub hw: Option<String>,
    /// With `--engine sim`: run this many `fairway-sim` processes at once (each run is one
    /// process, independent of the others; the results are the same for any N).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: u32,
}

impl EngineArgs {
    /// How the report names the machine of every figure: `-smp S` (QEMU) or
    /// `--engine sim --machine M`.
    pub fn describe(&self, smp: &str, icount: bool) -> String {
        match (self.engine, &self.machine) {
            (Engine::Sim, Some(m)) => format!("--engine sim --machine {m}{}", self.hw.as_ref().map(|h| format!(" --hw {h}")).unwrap_or_default()),
            _ => format!("--engine qemu -smp {smp}{}", if icount { " --icount" } else { "" }),
        }
    }
}

/// The flags `--engine sim` cannot honour, refused by name rather than ignored: `smp` is the
/// `--smp` value (its default is QEMU's `2`), `rev` whether a `--rev` flag was given.
pub fn check_engine(e: &EngineArgs, smp: &str, icount: bool, phases: bool, rev: bool) -> Result<(), String> {
    match e.engine {
        Engine::Qemu => match &e.machine {
            Some(_) => Err("xtask: --machine names the simulator's machine and needs --engine sim; QEMU's machine is --smp".into()),
            None if e.hw.is_some() => Err("xtask: --hw is the simulator's hardware cost model and needs --engine sim".into()),
            None if e.jobs > 1 => Err("xtask: --jobs runs fairway-sim processes side by side and needs --engine sim (QEMU boots share the host's cores, and their timing with it)".into()),
            None => Ok(()),
        },
        Engine::Sim => {
            if let Some(h) = &e.hw {
                fairway_sim::hw::HwProfile::parse(h).map_err(|err| format!("xtask: {err}"))?;
            }
            if e.machine.is_none() {
                return Err("xtask: --engine sim needs --machine PRESET|SMP (`cargo xtask sim --list` shows the presets)".into());
            }
            if icount || phases {
                return Err("xtask: --icount and --phases are QEMU's; the simulator is deterministic already, and its runs \
                            differ by seed (run i uses --seed i)".into());
            }
            if smp != "2" {
                return Err("xtask: --smp is QEMU's; with --engine sim the machine is --machine (e.g. --machine 4)".into());
            }
            if rev {
                return Err("xtask: --engine sim runs the working tree's mechanism (fairway-sim is built from it); compare \
                            kernel revisions with --engine qemu".into());
            }
            Ok(())
        }
    }
}

/// Why the tick phase matters, for `--phases`: under `-icount` every boot of one command line is
/// the same run, and a workload whose outcome depends on where the ticks fall (balancing,
/// preemption windows) is then one sample, which any change moves. Measured: hackbench's
/// default at -smp 2 printed 0.038 to 0.057 s for the same settings spelt four ways.
pub const TICK_NS: u64 = 1_000_000;

/// The kernel command line of run `i` of `runs` with `--phases`: `phase_ns` spreads the runs
/// evenly over one tick (1 ms at the default `hz=1000`).
pub fn with_phase(append: &str, i: usize, runs: usize) -> String {
    format!("{append} phase_ns={}", TICK_NS * i as u64 / runs.max(1) as u64)
}

/// `--phases` needs `--icount`: without it every boot lands at another phase anyway.
pub fn check_phases(phases: bool, icount: bool) -> Result<(), String> {
    if phases && !icount {
        return Err("xtask: --phases needs --icount (without it every boot already starts at another phase of the ticks)".into());
    }
    Ok(())
}

/// How to boot one benchmark run.
#[derive(Clone)]
pub struct Boot {
    pub qemu: PathBuf,
    pub elf: PathBuf,
    pub smp: String,
    pub icount: bool,
    pub timeout: Duration,
    /// With `--engine sim`: what runs instead of QEMU (`qemu` and `elf` are then unused).
    pub sim: Option<SimTarget>,
    /// With `--engine sim`: more `fairway-sim` arguments, after `--hw` and before the command
    /// line (an experiment's sweep of a simulated cost; a `--hw` here replaces the run's).
    pub sim_args: Vec<String>,
}

/// A `fairway-sim` run's binary, `--machine` and `--hw` (None: its default, `icount`).
#[derive(Clone, Debug)]
pub struct SimTarget {
    pub bin: PathBuf,
    pub machine: String,
    pub hw: Option<String>,
}

/// The kernel command line of a run: `workload=W[,params] [extra]`.
pub fn cmdline(workload: &str, params: &str, extra: &str) -> String {
    let mut s = format!("workload={workload}");
    if !params.is_empty() {
        s.push(',');
        s.push_str(params.trim_start_matches(','));
    }
    if !extra.trim().is_empty() {
        s.push(' ');
        s.push_str(extra.trim());
    }
    s
}

impl Boot {
    /// Builds or finds the kernel `--rev` names (the working tree's without one) and finds QEMU.
    pub fn prepare_at(rev: &RevArg, smp: &str, icount: bool, timeout: u64) -> Result<(Boot, Kernel), String> {
        let kernel = rev.kernel()?;
        Ok((Boot::with_kernel(kernel.elf.clone(), smp, icount, timeout)?, kernel))
    }

    /// Boots of the kernel at `elf` (built already); finds QEMU.
    pub fn with_kernel(elf: PathBuf, smp: &str, icount: bool, timeout: u64) -> Result<Boot, String> {
        let qemu = crate::install::ensure(false)?;
        Ok(Boot { qemu, elf, smp: smp.into(), icount, timeout: Duration::from_secs(timeout), sim: None, sim_args: Vec::new() })
    }

    /// Runs in the simulator: builds `fairway-sim` (the `sim` profile) once.
    pub fn simulator(machine: &str, hw: Option<&str>) -> Result<Boot, String> {
        let bin = crate::sim::build_binary(true)?;
        Ok(Boot::sim_binary(bin, machine, hw))
    }

    /// Runs of an already built `fairway-sim` on `machine` with hardware profile `hw`.
    pub fn sim_binary(bin: PathBuf, machine: &str, hw: Option<&str>) -> Boot {
        Boot {
            qemu: PathBuf::new(),
            elf: PathBuf::new(),
            smp: String::new(),
            icount: false,
            timeout: Duration::ZERO,
            sim: Some(SimTarget { bin, machine: machine.into(), hw: hw.map(String::from) }),
            sim_args: Vec::new(),
        }
    }

    /// The command a run executes, for the report.
    pub fn display(&self, append: &str) -> String {
        match &self.sim {
            Some(t) => format!(
                "{} --machine {}{} --seed RUN -- {append:?}",
                t.bin.display(),
                t.machine,
                t.hw.as_ref().map(|h| format!(" --hw {h}")).unwrap_or_default()
            ),
            None => self.config(append).display(),
        }
    }

    /// One `fairway-sim` process: its stdout and stderr are the run's log.
    fn run_sim(&self, target: &SimTarget, run: usize, append: &str) -> Result<(RunRecord, Log), String> {
        let (bin, machine) = (&target.bin, &target.machine);
        let t = std::time::Instant::now();
        let mut c = std::process::Command::new(bin);
        c.args(["--machine", machine, "--seed", &run.to_string()]);
        if let Some(h) = &target.hw {
            c.args(["--hw", h]);
        }
        let out = c.args(&self.sim_args).args(["--", append]).output().map_err(|e| format!("{}: {e}", bin.display()))?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let log = Log::parse(&text);
        accepted_cmdline(&log, append)?;
        if out.status.code() == Some(2) {
            return Err(format!("xtask: fairway-sim refused `{append}` on --machine {machine}, or the run did not finish:\n{}\n{}", String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with("sim:")).collect::<Vec<_>>().join("\n"), String::from_utf8_lossy(&out.stderr)));
        }
        let ok = out.status.success();
        let exit = match out.status.code() {
            Some(0) => "ok".to_string(),
            Some(1) => "the workload failed its own checks".to_string(),
            _ => out.status.to_string(),
        };
        Ok((RunRecord::from_log(run, exit, ok, t.elapsed().as_secs_f64(), &log), log))
    }

    pub fn config(&self, append: &str) -> QemuConfig {
        let mut cfg = QemuConfig::new(self.qemu.clone(), self.elf.clone());
        cfg.smp = self.smp.clone();
        cfg.icount = self.icount;
        cfg.append = append.into();
        cfg
    }

    /// One fresh boot; returns what it reported and its serial log. A boot whose kernel
    /// complained about the command line is an error ([`accepted_cmdline`]).
    pub fn run(&self, run: usize, append: &str) -> Result<(RunRecord, Log), String> {
        if let Some(t) = &self.sim {
            return self.run_sim(t, run, append);
        }
        let cmd = self.config(append).command()?;
        let r = crate::runner::run(cmd, self.timeout, &mut |_| {}, None);
        accepted_cmdline(&r.log, append)?;
        let ok = r.exit.is_success();
        let rec = RunRecord::from_log(run, r.exit.to_string(), ok, r.elapsed.as_secs_f64(), &r.log);
        Ok((rec, r.log))
    }
}

/// Runs `f` on every task, `jobs` at a time (each task one independent `fairway-sim`
/// process), calling `done` as each finishes; the results in the tasks' order.
pub fn run_tasks<T: Sync, R: Send>(jobs: u32, tasks: &[T], f: impl Fn(&T) -> R + Sync, done: impl Fn(&T, &R) + Sync) -> Vec<R> {
    if jobs <= 1 {
        return tasks
            .iter()
            .map(|t| {
                let r = f(t);
                done(t, &r);
                r
            })
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<R>>> = std::sync::Mutex::new((0..tasks.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..(jobs as usize).min(tasks.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(t) = tasks.get(i) else { break };
                let r = f(t);
                done(t, &r);
                results.lock().expect("no task panicked")[i] = Some(r);
            });
        }
    });
    results.into_inner().expect("no task panicked").into_iter().map(|r| r.expect("every task ran")).collect()
}

/// Refuses a boot whose kernel reported a problem with its command line (`@fw
/// cmdline_problem`): it ran a default in place of what was asked (a misspelt parameter, a
/// value out of range), so its figures would be labelled with settings they did not use.
pub fn accepted_cmdline(log: &Log, append: &str) -> Result<(), String> {
    let complaints: Vec<String> =
        log.records("cmdline_problem").map(|r| format!("  {}", r.get("msg").unwrap_or(""))).collect();
    if complaints.is_empty() {
        return Ok(());
    }
    Err(format!(
        "xtask: the kernel did not accept the command line `{append}`:\n{}\n\
         (it used defaults instead, so the boot's figures are not taken; `cargo xtask run --append \
         workload=help` lists every workload's parameters)",
        complaints.join("\n")
    ))
}

/// A progress bar on stderr.
pub fn progress(n: u64) -> ProgressBar {
    let pb = ProgressBar::new(n);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} boots {elapsed} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb
}

#[derive(Serialize)]
struct BenchJson<'a> {
    workload: &'a str,
    cmdline: &'a str,
    /// What the kernel was built from (`working tree (HEAD ...)` or `<commit> <subject>`).
    kernel: &'a str,
    /// The full commit id with `--rev`; null for the working tree.
    commit: Option<&'a str>,
    smp: &'a str,
    icount: bool,
    /// `qemu` or `sim`.
    engine: &'a str,
    /// The simulated machine with `--engine sim`.
    machine: Option<&'a str>,
    /// The command of a run (QEMU's, or fairway-sim's).
    qemu: String,
    runs: &'a [RunRecord],
    summary: &'a [Summary],
    deterministic: Option<bool>,
}

pub fn bench(a: BenchArgs) -> Result<(), String> {
    check_phases(a.phases, a.icount)?;
    let w = &a.run;
    check_engine(&a.engine, &w.boot.smp, a.icount, a.phases, w.kernel.rev.is_some())?;
    let (boot, kernel) = match &a.engine.machine {
        Some(m) if a.engine.engine == Engine::Sim => {
            (Boot::simulator(m, a.engine.hw.as_deref())?, Kernel { label: "working tree (fairway-sim)".into(), commit: None, elf: PathBuf::new(), source_root: crate::workspace_root(), tree_of: None })
        }
        _ => Boot::prepare_at(&w.kernel, &w.boot.smp, a.icount, w.boot.timeout)?,
    };
    let append = cmdline(&w.workload, &w.boot.params, &w.append);
    let dir = out_dir(&w.workload)?;
    eprintln!("xtask: {}", boot.display(&append));
    let pb = progress(a.runs as u64);
    let tasks: Vec<(usize, String)> =
        (0..a.runs).map(|i| (i, if a.phases { with_phase(&append, i, a.runs) } else { append.clone() })).collect();
    let done = run_tasks(a.engine.jobs, &tasks, |(i, line)| boot.run(*i, line), |(i, _), r| {
        if let Ok((rec, _)) = r {
            if !rec.ok {
                pb.println(format!("run {i}: {}", rec.exit));
            }
            pb.set_message(rec.results.iter().map(|f| format!("{}={}", f.metric, f.value)).collect::<Vec<_>>().join(" "));
        }
        pb.inc(1);
    });
    let mut runs = Vec::new();
    for ((i, _), r) in tasks.iter().zip(done) {
        let (rec, log) = r?;
        write(&dir.join(format!("run-{i}.log")), log.raw().as_bytes())?;
        runs.push(rec);
    }
    pb.finish_and_clear();
    let summary = summarize(&runs);
    let failed = runs.iter().filter(|r| !r.ok).count();
    println!(
        "{} {}: {} runs ({} failed)",
        append,
        a.engine.describe(&w.boot.smp, a.icount),
        runs.len(),
        failed
    );
    if w.kernel.rev.is_some() {
        println!("kernel: {}", kernel.label);
    }
    println!();
    print!("{}{}", summary_table(&summary), outlier_lines(&summary));
    let mut deterministic = None;
    if a.phases {
        println!(
            "\nphases: run i started its workload i/{} of a tick ({} ns) late (phase_ns=); each run is deterministic, their spread is the phase's",
            a.runs, TICK_NS
        );
    } else if a.icount && runs.len() >= 2 {
        let diff = differing_runs(&runs);
        deterministic = Some(diff.is_empty());
        if diff.is_empty() {
            println!("\ndeterminism: all {} runs printed identical results", runs.len());
        } else {
            for d in &diff {
                eprintln!("warning: --icount runs differ: {d}");
            }
        }
    }
    write_csv(&dir, &runs, None)?;
    let json = BenchJson {
        workload: &w.workload,
        cmdline: &append,
        kernel: &kernel.label,
        commit: kernel.commit.as_deref(),
        smp: &w.boot.smp,
        icount: a.icount,
        engine: if a.engine.engine == Engine::Sim { "sim" } else { "qemu" },
        machine: a.engine.machine.as_deref(),
        qemu: boot.display(&append),
        runs: &runs,
        summary: &summary,
        deterministic,
    };
    write(&dir.join("bench.json"), serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?.as_bytes())?;
    let buckets: Vec<_> = runs.iter().filter(|r| r.ok).flat_map(|r| r.hist.iter().cloned()).collect();
    if !buckets.is_empty() {
        crate::plot::latency_svg(&dir.join("latency.svg"), &w.workload, &buckets)?;
    }
    println!("\nwrote {}", dir.display());
    if failed > 0 {
        return Err(format!("xtask: {failed} of {} runs failed", runs.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Figure, Outlier};

    fn run(i: usize, v: f64) -> RunRecord {
        RunRecord {
            run: i,
            exit: "ok".into(),
            ok: true,
            wall_s: 1.0,
            results: vec![Figure { workload: "w".into(), metric: "time".into(), value: v, unit: "s".into(), higher_is_better: false }],
            schedstat_delta: vec![[("cpu".to_string(), 0u64), ("ttwu_count".to_string(), 5)].into_iter().collect()],
            hist: vec![],
        }
    }

    #[test]
    fn cmdline_joins_params_and_extra() {
        assert_eq!(cmdline("hackbench", "", ""), "workload=hackbench");
        assert_eq!(cmdline("hackbench", "loops=5,groups=1", " trace=1 "), "workload=hackbench,loops=5,groups=1 trace=1");
    }

    #[test]
    fn phases_spread_runs_over_one_tick_and_need_icount() {
        assert_eq!(with_phase("workload=pipe", 0, 4), "workload=pipe phase_ns=0");
        assert_eq!(with_phase("workload=pipe", 3, 4), "workload=pipe phase_ns=750000");
        assert!(check_phases(true, false).unwrap_err().contains("--phases needs --icount"));
        assert!(check_phases(true, true).is_ok() && check_phases(false, false).is_ok());
    }

    #[test]
    fn a_boot_that_complained_about_its_command_line_is_refused() {
        let clean = Log::parse("@fw cmdline msg=workload=pipe\n@fw pipe rounds=5\n");
        assert!(accepted_cmdline(&clean, "workload=pipe").is_ok());
        let bad = Log::parse(
            "@fw cmdline msg=workload=pipe,round=5\n\
             @fw cmdline_problem msg=workload=pipe: unknown parameter \"round\" (pipe takes rounds, mode); ignored\n",
        );
        let e = accepted_cmdline(&bad, "workload=pipe,round=5").unwrap_err();
        assert!(e.contains("workload=pipe,round=5") && e.contains("unknown parameter \"round\""), "{e}");
    }

    #[test]
    fn summary_and_determinism() {
        let runs = [run(0, 1.0), run(1, 3.0)];
        let s = summarize(&runs);
        assert_eq!((s[0].mean, s[0].median, s[0].min, s[0].max, s[0].n), (2.0, 2.0, 1.0, 3.0, 2));
        assert!(summary_table(&s).contains("time"));
        // A long metric and unit widen their columns for every row.
        let mut two = run(0, 1.0);
        let f = two.results[0].clone();
        two.results.push(Figure { metric: "wakeup_over_2slice".into(), unit: "samples".into(), ..f });
        let t = summary_table(&summarize(&[two]));
        let lens: Vec<usize> = t.lines().map(str::len).collect();
        assert!(lens.len() == 3 && lens.iter().all(|&l| l == lens[0]), "every column in line: {t}");
        assert_eq!(differing_runs(&runs).len(), 1);
        assert!(differing_runs(&[run(0, 1.0), run(1, 1.0)]).is_empty());
        assert_eq!(outlier_lines(&s), "");
    }

    #[test]
    fn outliers_are_named_by_run() {
        let runs: Vec<_> = [6_355.939, 25_051.261, 26_131.253, 26_495.912, 26_495.107].iter().enumerate().map(|(i, &v)| run(i, v)).collect();
        let s = summarize(&runs);
        assert_eq!(s[0].outliers, vec![Outlier { run: 0, value: 6_355.939 }]);
        let lines = outlier_lines(&s);
        assert!(lines.contains("time             run 0 = 6355.939"), "{lines}");
        assert!(serde_json::to_string(&s).unwrap().contains(r#""outliers":[{"run":0,"value":6355.939}]"#));
    }

    #[test]
    fn csv_has_a_row_per_run_metric_and_cpu() {
        let dir = std::env::temp_dir().join(format!("xtask-bench-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_csv(&dir, &[run(0, 1.0), run(1, 2.0)], Some("base")).unwrap();
        let runs = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
        assert_eq!(runs.lines().count(), 3);
        assert!(runs.contains("base,1,true,time,2,s,lower"));
        let ss = std::fs::read_to_string(dir.join("schedstat.csv")).unwrap();
        assert_eq!(ss.lines().next(), Some("label,run,cpu,ttwu_count"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn engine(engine: Engine, machine: Option<&str>) -> EngineArgs {
        EngineArgs { engine, machine: machine.map(Into::into), hw: None, jobs: 1 }
    }

    #[test]
    fn the_simulator_engine_refuses_qemu_only_flags_by_name() {
        let sim = engine(Engine::Sim, Some("4"));
        assert!(check_engine(&sim, "2", false, false, false).is_ok());
        assert!(check_engine(&engine(Engine::Qemu, None), "4", true, true, true).is_ok());
        let e = |a: &EngineArgs, smp, icount, phases, rev| check_engine(a, smp, icount, phases, rev).unwrap_err();
        assert!(e(&engine(Engine::Sim, None), "2", false, false, false).contains("--engine sim needs --machine"));
        assert!(e(&engine(Engine::Qemu, Some("4")), "2", false, false, false).contains("needs --engine sim"));
        assert!(e(&sim, "2", true, false, false).contains("--icount and --phases are QEMU's"));
        assert!(e(&sim, "2", false, true, false).contains("--icount and --phases are QEMU's"));
        assert!(e(&sim, "4", false, false, false).contains("--smp is QEMU's"));
        assert!(e(&sim, "2", false, false, true).contains("working tree's mechanism"));
        assert_eq!(sim.describe("2", false), "--engine sim --machine 4");
        assert_eq!(engine(Engine::Qemu, None).describe("4", true), "--engine qemu -smp 4 --icount");
        // --hw and --jobs are the simulator's; a bad profile is refused before any run.
        let hw = |h: &str| EngineArgs { hw: Some(h.into()), ..sim.clone() };
        assert!(check_engine(&hw("dd-2024,refill_scale=2"), "2", false, false, false).is_ok());
        assert_eq!(hw("dd-2024").describe("2", false), "--engine sim --machine 4 --hw dd-2024");
        assert!(e(&hw("dd-2024,colour=1"), "2", false, false, false).contains("unknown key `colour`"));
        assert!(e(&EngineArgs { hw: Some("icount".into()), ..engine(Engine::Qemu, None) }, "2", false, false, false).contains("--hw is the simulator's"));
        assert!(e(&EngineArgs { jobs: 2, ..engine(Engine::Qemu, None) }, "2", false, false, false).contains("--jobs runs fairway-sim"));
        assert!(check_engine(&EngineArgs { jobs: 2, ..sim.clone() }, "2", false, false, false).is_ok());
    }

    #[test]
    fn tasks_run_n_at_a_time_give_their_results_in_order() {
        let tasks: Vec<u64> = (0..23).collect();
        let seen = std::sync::Mutex::new(Vec::new());
        let out = run_tasks(4, &tasks, |t| t * 10, |t, r| seen.lock().unwrap().push((*t, *r)));
        assert_eq!(out, tasks.iter().map(|t| t * 10).collect::<Vec<_>>());
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen.len(), 23, "done called once per task");
        assert_eq!(run_tasks(1, &tasks, |t| t + 1, |_, _| {}), tasks.iter().map(|t| t + 1).collect::<Vec<_>>());
    }

    /// One real run through the `fairway-sim` binary (a few hundred pipe rounds, seconds): the
    /// run record holds the workload's own figures and the schedstat deltas, as a boot's would.
    /// The debug build, which the scenarios' simulator jobs build anyway: the `sim` profile's
    /// whole-program LTO cost this test 35 s of the suite.
    #[test]
    fn a_simulator_run_is_parsed_from_its_fw_lines() {
        let boot = Boot::sim_binary(crate::sim::build_binary(false).unwrap(), "2", None);
        let (rec, log) = boot.run(0, &cmdline("pipe", "rounds=300", "")).unwrap();
        assert!(rec.ok, "{}", log.raw());
        let metrics: Vec<&str> = rec.results.iter().map(|f| f.metric.as_str()).collect();
        assert!(metrics.contains(&"usecs_per_op") && metrics.contains(&"ops_per_sec"), "{metrics:?}");
        assert_eq!(rec.schedstat_delta.len(), 2, "one schedstat row per simulated CPU");
        // 300 round trips make at least one wakeup each (someone sleeps in every round trip;
        // a partner preempted at its wakeup needs none later, as under QEMU).
        let wakeups: u64 = rec.schedstat_delta.iter().map(|m| m.get("ttwu_count").copied().unwrap_or(0)).sum();
        assert!(wakeups >= 300, "ttwu_count {wakeups}");
        // A misspelt parameter is refused as on QEMU, not run with a default.
        let e = boot.run(0, &cmdline("pipe", "round=300", "")).unwrap_err();
        assert!(e.contains("round=300"), "{e}");
    }

    #[test]
    fn timestamp_is_sortable() {
        let t = timestamp();
        assert_eq!(t.len(), 15);
        assert!(t.starts_with("20"));
    }
}
