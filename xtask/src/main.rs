//! fairway's harness: `cargo xtask build | image | run | test | qemu-install | list | bench | compare |
//! benchmarks | experiment | trace | profile | sim | torture`.

mod bench;
mod benchmarks;
mod cargo;
mod compare;
mod experiment;
mod image;
mod install;
mod percpu_summary;
mod plot;
mod profile;
mod qemu;
mod results;
mod revision;
mod runner;
mod sim;
mod stats;
mod symbols;
mod test;
mod torture;
mod trace;
mod workload_args;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use fairway_scenarios::QemuExit;

use crate::qemu::QemuConfig;
use crate::symbols::Symbols;
use crate::workload_args::RevArg;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Build, boot and test the fairway kernel"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the kernel (release) and print the ELF's path.
    Build,
    /// Build a bootable hybrid ISO (GRUB for BIOS and UEFI, the kernel, a boot menu) and print
    /// its path; write it to a USB stick with `dd` (docs/RUNNING.md).
    Image(ImageArgs),
    /// Build the kernel and boot it in QEMU, streaming the serial console.
    Run(RunArgs),
    /// Host unit tests of every crate, then the QEMU scenarios; ends with `N passed, N failed`.
    Test(TestArgs),
    /// Make sure QEMU >= 10 and the GRUB image tools are installed (installs them as root on
    /// Debian 12/13).
    QemuInstall,
    /// List the QEMU scenarios.
    List,
    /// Boot a workload N times; summary table, CSV and JSON under target/bench/.
    Bench(bench::BenchArgs),
    /// Compare two kernel command-line settings, or two builds (--base-rev/--new-rev), on a
    /// workload (mmtests-style table).
    Compare(compare::CompareArgs),
    /// Rerun the `-icount` figures of docs/BENCHMARKS.md (pipe, yield, boot, hackbench, tbench,
    /// schbench), say which differ from the document, and with --write rewrite its tables.
    Benchmarks(benchmarks::BenchmarksArgs),
    /// Rerun one of the scheduler debates (`experiment list`): a matrix of settings, a table,
    /// docs/experiments/NAME.md with a reading generated from the figures.
    Experiment(experiment::ExperimentArgs),
    /// Boot a workload with trace=1 (or read --from LOG): Perfetto JSON and SVG timeline.
    Trace(trace::TraceArgs),
    /// Guest instructions per kernel function and per unit of a workload parameter (two -icount
    /// boots with a TCG plugin, subtracted).
    Profile(profile::ProfileArgs),
    /// The simulator's machines: a debate's preset (`--list`) or an -smp value, shown as the
    /// kernel sees it (every CPU's place and the sched domains).
    Sim(sim::SimArgs),
    /// Boot workload=torture with the invariant checks on for --minutes at --smp: every thread
    /// operation at random from --seed; prints its books and fails on any violation.
    Torture(torture::TortureArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// Build the kernel with the lock-order checker (feature `lockdep`, as `cargo xtask test`
    /// does); `lockdep=1` or `sched_debug=1` on the command line then turns it on.
    #[arg(long)]
    lockdep: bool,
    /// QEMU -smp value, e.g. `8` or `8,sockets=2,cores=2,threads=2`.
    #[arg(long, default_value = "4")]
    smp: String,
    /// QEMU CPU model (`max` has x2APIC, `qemu64` only xAPIC).
    #[arg(long, default_value = "max")]
    cpu: String,
    /// Kernel command line.
    #[arg(long, default_value = "")]
    append: String,
    /// Deterministic instruction-counted time (-icount shift=0,sleep=off; at one CPU in record
    /// mode too, see qemu::ICOUNT_ONE_CPU) and a fixed RTC.
    #[arg(long)]
    icount: bool,
    /// Hard timeout in seconds (at least 1); QEMU is killed after it.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Guest memory in MiB (at least 1; the kernel needs more, growing with --smp: see docs/OPTIONS.md).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    mem: u32,
    /// NUMA nodes splitting CPUs and memory evenly.
    #[arg(long, default_value_t = 0)]
    numa: u32,
    /// Boot without ACPI tables (QEMU 10: -machine acpi=off).
    #[arg(long)]
    no_acpi: bool,
    /// Boot the GRUB image (built as `cargo xtask image` does) from a CD-ROM instead of the
    /// kernel through QEMU's own loader; the command line is then the menu entry's.
    #[arg(long, conflicts_with = "append")]
    image: bool,
    /// With --image: boot under UEFI (OVMF) instead of SeaBIOS.
    #[arg(long, requires = "image")]
    uefi: bool,
    /// Print CPU 0's per-CPU lines and hold back the other CPUs', then one table per record:
    /// each field's sum, smallest (its CPU), median and largest (its CPU) over the CPUs.
    #[arg(long)]
    summary: bool,
    #[command(flatten)]
    kernel: RevArg,
    /// Extra QEMU arguments, after `--`.
    #[arg(last = true)]
    qemu_args: Vec<String>,
}

#[derive(clap::Args)]
struct ImageArgs {
    /// Where to write the ISO (default target/image/fairway.iso).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seconds the GRUB menu waits before booting its first entry.
    #[arg(long, default_value_t = image::DEFAULT_TIMEOUT)]
    timeout: u32,
}

#[derive(clap::Args)]
struct TestArgs {
    /// Run only the scenarios whose name contains this.
    filter: Option<String>,
    /// Skip the host unit tests.
    #[arg(long)]
    no_host: bool,
    /// Skip the QEMU scenarios.
    #[arg(long)]
    no_qemu: bool,
    /// Scenarios run at once (the machine has 2 cores; at least 1).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    jobs: u32,
    /// Print the serial log of passing scenarios too.
    #[arg(long)]
    logs: bool,
    /// Also run the long scenarios (the per-workload `-icount` reruns beyond storm's) and rerun
    /// every generated table of docs/BENCHMARKS.md, not only pipe and yield: the default run
    /// stays within CI's 10 minutes on 2 cores.
    #[arg(long)]
    long: bool,
    /// Boot the scenarios with the kernel's path N bytes longer (`.///fairway-kernel` for 2): the
    /// same kernel, its workloads starting at another phase of the tick. A scenario that passes
    /// at 0 and fails at some N holds at one layout only, and the next change of code will break
    /// it. (The experiments' quick forms and `benchmarks-current` boot as at 0.)
    #[arg(long, default_value_t = 0)]
    boot_shift: u32,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Build => cargo::build_kernel().map(|elf| {
            println!("{}", elf.display());
        }),
        Cmd::Run(a) => run(a),
        Cmd::Test(a) => test::test(
            &a.filter.unwrap_or_default(),
            !a.no_host,
            !a.no_qemu,
            a.jobs,
            a.logs,
            a.long,
            a.boot_shift,
        ),
        Cmd::Bench(a) => bench::bench(a),
        Cmd::Compare(a) => compare::compare(a),
        Cmd::Benchmarks(a) => benchmarks::benchmarks(a),
        Cmd::Experiment(a) => experiment::experiment(a),
        Cmd::Trace(a) => trace::trace(a),
        Cmd::Profile(a) => profile::profile(a),
        Cmd::Sim(a) => sim::sim(a),
        Cmd::Torture(a) => torture::torture(a),
        Cmd::Image(a) => image::image(a.out, a.timeout),
        Cmd::QemuInstall => install::ensure(true).and_then(|_| install::ensure_image_tools(true)),
        Cmd::List => {
            for s in fairway_scenarios::all() {
                println!(
                    "{:<20} -smp {:<30} -cpu {:<7} numa={} no_acpi={} boot={} expect={} append={:?}",
                    s.name, s.smp, s.cpu, s.numa_nodes, s.no_acpi, s.boot, s.expect, s.append
                );
            }
            Ok(())
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("{e}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Refuses `--mem` below what the kernel's heap needs for the CPUs of `--smp` (the heap is a
/// quarter of the free memory and must hold 5 MiB, 192 KiB per CPU and 256 bytes per pair of CPUs:
/// docs/OPTIONS.md, "Memory the boot
/// needs"). Only the pairs that cannot boot whatever the image's size: between this bound and the
/// kernel's own (a few MiB more), the kernel refuses with the exact need. Above `MAX_CPUS` the
/// kernel keeps the first `MAX_CPUS` CPUs (`@fw cpus_dropped reason=max_cpus`), so the need is
/// theirs, not the machine's.
fn check_mem_for_smp(smp: &str, mem_mib: u32) -> Result<(), String> {
    let Ok(topo) = fairway_scenarios::topology::Topology::from_smp(smp, 0) else {
        return Ok(()); // QEMU judges a -smp it cannot parse
    };
    let listed = topo.cpus() as u64;
    let cpus = listed.min(sched::cpumask::MAX_CPUS as u64);
    let heap_kib = fairway_scenarios::boot_checks::heap_need_kib(cpus);
    if heap_kib <= 8 * 1024 || u64::from(mem_mib) * 1024 > 4 * heap_kib {
        return Ok(());
    }
    Err(format!(
        "xtask: --mem {mem_mib} is too small for --smp {smp} ({cpus} CPUs{}): the kernel's heap, a quarter of the free memory, must hold {heap_kib} KiB (5 MiB, 192 KiB per CPU and 256 bytes per pair of CPUs), so --mem must be above {} MiB, and a few MiB more for the kernel image (the kernel names the exact need)",
        if listed > cpus { format!(", the first {cpus} of {listed}: the most the kernel starts") } else { String::new() },
        4 * heap_kib / 1024
    ))
}

fn run(a: RunArgs) -> Result<(), String> {
    check_mem_for_smp(&a.smp, a.mem)?;
    let elf = if a.lockdep {
        if a.kernel.rev.is_some() {
            return Err("--lockdep builds the working tree's kernel; it cannot be combined with another revision".into());
        }
        cargo::build_kernel_features(&["lockdep"])?
    } else {
        a.kernel.kernel()?.elf
    };
    let qemu = install::ensure(false)?;
    let syms = Symbols::load(&elf).unwrap_or_else(|e| {
        eprintln!("xtask: no symbols ({e})");
        Symbols::default()
    });
    if syms.is_empty() {
        eprintln!("xtask: the kernel ELF has no function symbols; backtrace addresses stay raw");
    }
    let mut cfg = QemuConfig::new(qemu, elf);
    cfg.smp = a.smp;
    cfg.cpu = a.cpu;
    cfg.append = a.append;
    cfg.icount = a.icount;
    cfg.memory_mib = a.mem;
    cfg.numa_nodes = a.numa;
    cfg.no_acpi = a.no_acpi;
    if a.image {
        let iso = test::scenario_image(&cfg.kernel, false);
        image::build_iso(&cfg.kernel, &iso, image::DEFAULT_TIMEOUT, 0)?;
        cfg.cdrom = Some(iso);
        if a.uefi {
            cfg.bios = Some(install::find_ovmf().ok_or("xtask: no OVMF firmware (the `ovmf` package; or set FAIRWAY_OVMF)")?);
        }
    }
    cfg.extra = a.qemu_args;
    eprintln!("xtask: {}", cfg.display());
    let cmd = cfg.command()?;
    let mut summary = a.summary.then(percpu_summary::PerCpuSummary::new);
    let r = runner::run(
        cmd,
        Duration::from_secs(a.timeout),
        &mut |line| {
            if summary.as_mut().is_none_or(|s| s.line(line)) {
                println!("{}", syms.annotate(line))
            }
        },
        Some(Box::new(|l: &str| eprintln!("qemu: {l}"))),
    );
    if let Some(s) = &summary {
        print!("{}", s.finish());
    }
    eprintln!("xtask: {} after {:.1} s", r.exit, r.elapsed.as_secs_f64());
    if r.exit.is_success() {
        return Ok(());
    }
    let mut msg = String::new();
    if matches!(r.exit, QemuExit::Timeout) {
        msg.push_str(&format!(
            "xtask: timed out after {} s (--timeout)\n",
            a.timeout
        ));
    }
    if matches!(r.exit, QemuExit::QemuError | QemuExit::Unknown(_)) && !r.stderr.is_empty() {
        msg.push_str(&format!("xtask: QEMU's stderr:\n{}", r.stderr));
    }
    msg.push_str(&format!("xtask: {}", r.log.stage_summary()));
    Err(msg)
}

/// The workspace root (xtask lives one level below it).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask has a parent")
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::workload_args::{BootArgs, WorkloadArgs};

    fn parse(args: &[&str]) -> Cmd {
        let argv = std::iter::once("cargo xtask").chain(args.iter().copied());
        Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}")).cmd
    }

    fn boot(params: &str, smp: &str, timeout: u64) -> BootArgs {
        BootArgs { params: params.into(), smp: smp.into(), timeout }
    }

    #[test]
    fn impossible_mem_for_smp_is_refused_before_booting() {
        // 31 CPUs: 5120 + 31 * 192 + 31 * 31 / 4 = 11312 KiB of heap, four times that is 44.2 MiB
        let e = check_mem_for_smp("31", 32).unwrap_err();
        assert!(e.contains("--mem 32 is too small for --smp 31 (31 CPUs)") && e.contains("11312 KiB") && e.contains("above 44 MiB"), "{e}");
        assert!(check_mem_for_smp("31", 44).is_err());
        assert!(check_mem_for_smp("31", 45).is_ok(), "from 45 MiB on the kernel itself judges");
        // 1024 CPUs: 5 MiB + 192 MiB + 256 MiB of heap, a quarter of 1812 MiB and more
        assert!(check_mem_for_smp("1024,sockets=4,cores=128,threads=2", 1800).is_err());
        assert!(check_mem_for_smp("1024,sockets=4,cores=128,threads=2", 2048).is_ok());
        // Above 1024 the kernel starts the first 1024: their need, not the machine's (which would
        // ask for more than the 4 GiB the kernel maps).
        assert!(check_mem_for_smp("4096,sockets=8,cores=256,threads=2", 2048).is_ok());
        let e = check_mem_for_smp("4096,sockets=8,cores=256,threads=2", 1800).unwrap_err();
        assert!(e.contains("(1024 CPUs, the first 1024 of 4096: the most the kernel starts)"), "{e}");
        assert!(check_mem_for_smp("64,sockets=2,cores=16,threads=2", 48).is_err());
        // up to 15 CPUs the heap's 8 MiB minimum holds the need: the kernel boots at -m 13
        assert!(check_mem_for_smp("15", 13).is_ok());
        assert!(check_mem_for_smp("1", 13).is_ok());
    }

    #[test]
    fn the_cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_workload_flag_has_help() {
        let cli = Cli::command();
        for name in ["bench", "compare", "trace", "profile"] {
            let cmd = cli.find_subcommand(name).unwrap();
            for arg in cmd.get_arguments() {
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(!help.trim().is_empty(), "`{name}` has no help for {}", arg.get_id());
            }
        }
    }

    #[test]
    fn shared_flags_keep_their_names_and_defaults() {
        let defaults = WorkloadArgs { workload: "pipe".into(), boot: boot("", "2", 120), append: String::new(), kernel: RevArg::default() };
        let Cmd::Bench(b) = parse(&["bench", "pipe"]) else { panic!() };
        assert_eq!((b.run, b.runs, b.icount), (defaults.clone(), 5, false));
        let Cmd::Profile(p) = parse(&["profile", "pipe"]) else { panic!() };
        assert_eq!((p.run, p.vary.as_str(), p.top), (defaults, "rounds", 40));

        let set = ["--params", "rounds=9,mode=same", "--smp", "1", "--append", "hz=100", "--timeout", "7"];
        let given = WorkloadArgs { workload: "pipe".into(), boot: boot("rounds=9,mode=same", "1", 7), append: "hz=100".into(), kernel: RevArg::default() };
        let Cmd::Bench(b) = parse(&[&["bench", "pipe"][..], &set].concat()) else { panic!() };
        assert_eq!(b.run, given);
        let Cmd::Profile(p) = parse(&[&["profile"][..], &set, &["pipe"]].concat()) else { panic!() };
        assert_eq!(p.run, given);
        // --rev: the kernel of a git revision, for bench, profile and trace
        let Cmd::Bench(b) = parse(&["bench", "pipe", "--rev", "main~1"]) else { panic!() };
        assert_eq!(b.run.kernel.rev.as_deref(), Some("main~1"));
        // --engine sim --machine M: bench and compare run fairway-sim; qemu is the default
        assert_eq!(b.engine, bench::EngineArgs { engine: experiment::Engine::Qemu, machine: None, hw: None, jobs: 1 });
        let Cmd::Bench(b) = parse(&["bench", "pipe", "--engine", "sim", "--machine", "dd-2024"]) else { panic!() };
        assert_eq!((b.engine.engine, b.engine.machine.as_deref()), (experiment::Engine::Sim, Some("dd-2024")));
        let Cmd::Compare(c) = parse(&["compare", "pipe", "--new", "hz=250", "--engine", "sim", "--machine", "4"]) else { panic!() };
        assert_eq!((c.engine.engine, c.engine.machine.as_deref()), (experiment::Engine::Sim, Some("4")));
        let Cmd::Compare(c) = parse(&["compare", "pipe", "--new", "", "--engine", "sim", "--machine", "4", "--hw", "dd-2024", "--jobs", "2"]) else { panic!() };
        assert_eq!((c.engine.hw.as_deref(), c.engine.jobs), (Some("dd-2024"), 2));
        let Cmd::Experiment(e) = parse(&["experiment", "avg-idle", "--engine", "sim", "--hw", "avg-idle-2013"]) else { panic!() };
        assert_eq!(e.hw.as_deref(), Some("avg-idle-2013"));
        let Cmd::Profile(p) = parse(&["profile", "--rev", "v1", "pipe"]) else { panic!() };
        assert_eq!(p.run.kernel.rev.as_deref(), Some("v1"));
        let Cmd::Trace(t) = parse(&["trace", "pipe", "--rev", "HEAD~2"]) else { panic!() };
        assert_eq!(t.kernel.rev.as_deref(), Some("HEAD~2"));
        let Cmd::Run(r) = parse(&["run", "--rev", "main", "--smp", "2"]) else { panic!() };
        assert_eq!((r.kernel.rev.as_deref(), r.smp.as_str()), (Some("main"), "2"));
        let Cmd::Run(r) = parse(&["run"]) else { panic!() };
        assert_eq!((r.kernel.rev, r.smp.as_str()), (None, "4"), "the working tree at -smp 4 by default");
        // a converted log was booted already: --rev has nothing to choose
        assert!(Cli::try_parse_from(["cargo xtask", "trace", "--from", "x.log", "--rev", "main"]).is_err());

        let Cmd::Trace(t) = parse(&["trace", "--from", "x.log"]) else { panic!() };
        assert_eq!((t.workload, t.boot, t.append.as_str()), (None, boot("", "2", 120), ""));
        let Cmd::Trace(t) = parse(&[&["trace", "pipe"][..], &set].concat()) else { panic!() };
        assert_eq!((t.workload.as_deref(), t.boot, t.append.as_str()), (Some("pipe"), boot("rounds=9,mode=same", "1", 7), "hz=100"));

        let Cmd::Compare(c) = parse(&["compare", "--new", "hz=100", "hackbench"]) else { panic!() };
        assert_eq!((c.workload.as_str(), c.boot, c.base.as_str(), c.new.as_str()), ("hackbench", boot("", "2", 120), "", "hz=100"));
        let Cmd::Compare(c) = parse(&["compare", "--new", "x", "w", "--params", "a=1", "--smp", "4", "--timeout", "3"]) else { panic!() };
        assert_eq!(c.boot, boot("a=1", "4", 3));
        assert_eq!((c.base_rev, c.new_rev), (None, None), "both sides boot the working tree unless told");
        let Cmd::Compare(c) = parse(&["compare", "--new", "", "--base-rev", "main~3", "w"]) else { panic!() };
        assert_eq!((c.base_rev.as_deref(), c.new_rev), (Some("main~3"), None));
        let Cmd::Compare(c) = parse(&["compare", "--new", "", "--base-rev", "v1", "--new-rev", "v2", "w"]) else { panic!() };
        assert_eq!((c.base_rev.as_deref(), c.new_rev.as_deref()), (Some("v1"), Some("v2")));
        // experiment: the engine is explicit, qemu by default; sim parses (and is refused when run)
        let Cmd::Experiment(e) = parse(&["experiment", "avg-idle"]) else { panic!() };
        assert_eq!((e.name.as_str(), e.quick, e.engine), ("avg-idle", false, experiment::Engine::Qemu));
        let Cmd::Experiment(e) = parse(&["experiment", "wake-balance", "--quick", "--engine", "sim"]) else { panic!() };
        assert_eq!((e.quick, e.engine), (true, experiment::Engine::Sim));
        assert!(Cli::try_parse_from(["cargo xtask", "experiment", "x", "--engine", "gem5"]).is_err());
        // compare has no --append: its two command lines are --base and --new.
        assert!(Cli::try_parse_from(["cargo xtask", "compare", "--new", "x", "w", "--append", "y"]).is_err());
        // a zero that would mean "kill at once" or "no memory" is refused, with the flag named
        for bad in [&["run", "--timeout", "0"][..], &["run", "--mem", "0"], &["bench", "pipe", "--timeout", "0"], &["test", "--jobs", "0"], &["bench", "pipe", "--jobs", "0"]] {
            let argv = std::iter::once("cargo xtask").chain(bad.iter().copied());
            let e = Cli::try_parse_from(argv).err().unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(e.to_string().contains(bad[bad.len() - 2]), "{bad:?}: {e}");
        }
        // profile has no --icount: it always boots under -icount.
        assert!(Cli::try_parse_from(["cargo xtask", "profile", "pipe", "--icount"]).is_err());
    }
}
