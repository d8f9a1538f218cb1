//! `cargo xtask test`: host unit tests, the kernel builds, the QEMU scenarios, the experiments'
//! quick forms and the rerun of docs/BENCHMARKS.md's tables (`benchmarks::test_job`) in parallel
//! slots, and one closing `N passed, N failed` line.
//!
//! - [`select`]: which scenarios and experiments' quick forms a filter and `--long` take;
//! - [`scenario`]: one scenario as a job (its boots and the verdict on them);
//! - [`kernel_build`]: the kernel build that runs beside the host tests;
//! - [`pool`]: the job pool over the machine's slots;
//! - [`summary`]: where the run's time went.

mod kernel_build;
mod pool;
mod scenario;
mod select;
mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use fairway_scenarios::{Boot, Scenario};

pub use pool::{Job, Verdict};
use pool::run_jobs;
use scenario::{not_run, scenario_job};
use summary::time_summary;

use crate::symbols::Symbols;
use crate::{cargo, image, install};

/// The GRUB image the scenarios boot: built by `test` next to the kernel it holds. With
/// `multiboot1`, the variant whose menu boots its Multiboot 1 entry.
pub fn scenario_image(elf: &Path, multiboot1: bool) -> PathBuf {
    elf.with_file_name(if multiboot1 { "fairway-mb1.iso" } else { "fairway.iso" })
}

/// Seconds the scenarios' images wait in the GRUB menu (the user's image waits
/// `image::DEFAULT_TIMEOUT`; every boot pays the wait, and nobody picks an entry here).
pub const SCENARIO_MENU_TIMEOUT: u32 = 1;

/// The image variants `scenarios` boot: `(multiboot1, path)`.
fn images_needed(scenarios: &[Scenario], elf: &Path) -> Vec<(bool, PathBuf)> {
    let mut v = Vec::new();
    for mb1 in [false, true] {
        let wanted = |s: &Scenario| match s.boot {
            Boot::Kernel => false,
            Boot::Image(_) => !mb1,
            Boot::ImageMultiboot1(_) => mb1,
        };
        if scenarios.iter().any(wanted) {
            v.push((mb1, scenario_image(elf, mb1)));
        }
    }
    v
}

pub fn test(
    filter: &str,
    host: bool,
    qemu_scenarios: bool,
    jobs: u32,
    show_logs: bool,
    long: bool,
    boot_shift: u32,
) -> Result<(), String> {
    let start = Instant::now();
    // The generated tables of docs/BENCHMARKS.md, rerun with the kernel `cargo xtask run` boots.
    let benchmarks = qemu_scenarios && crate::benchmarks::TEST_JOB.contains(filter);
    let (selected, experiments) = if qemu_scenarios {
        let names: Vec<&str> = crate::experiment::all().iter().map(|e| e.name).collect();
        let sel = select::select(fairway_scenarios::all(), &names, filter, long);
        if sel.long_left_out > 0 {
            println!("xtask: {} long scenario(s) left out (`cargo xtask test --long` runs them too)", sel.long_left_out);
        }
        (sel.scenarios, sel.experiments)
    } else {
        (Vec::new(), false)
    };
    // (2) The kernel build starts beside the host tests: it is mostly one thread (fat LTO), and
    // so are the host build's last units and test binaries, so each fills the other's idle core.
    let kernel = (!selected.is_empty() || experiments || benchmarks).then(|| {
        // With the lock-order checker compiled in: the scenarios with `sched_debug=1` run it. The
        // benchmarks' kernel, without it, is built first and kept apart, because both builds
        // leave their ELF at the same path.
        let beside = if host { " beside the host tests" } else { "" };
        let plain = if benchmarks { ", and without it for the benchmarks" } else { "" };
        println!("==> building the kernel{beside} (with the lock-order checker, feature `lockdep`{plain})");
        thread::spawn(move || {
            let t = Instant::now();
            let plain = benchmarks.then(|| kernel_build::build(&[]).and_then(|elf| crate::benchmarks::keep_test_kernel(&elf)));
            (kernel_build::build(&["lockdep"]), t.elapsed().as_secs_f64(), plain)
        })
    });
    // (1) Host unit tests.
    let host_t = if host {
        println!(
            "==> host unit tests: cargo test --workspace --exclude {} --exclude {}",
            cargo::KERNEL_PACKAGE,
            cargo::SCHED_BENCH_PACKAGE
        );
        let h = cargo::host_tests();
        if h.cargo_failed {
            println!("xtask: cargo test failed without a failing test (build error?): counted as 1 failure");
        }
        h
    } else {
        cargo::HostTests::default()
    };
    let host_failed = host_t.failed + u32::from(host_t.cargo_failed);
    let mut phases = vec![("host tests (build and run)", start.elapsed().as_secs_f64())];

    // (3) The scenarios.
    let verdicts = if selected.is_empty() && !experiments && !benchmarks {
        if qemu_scenarios {
            println!("xtask: no scenario name contains `{filter}` (see `cargo xtask list`)");
        }
        Vec::new()
    } else {
        let t = Instant::now();
        let (built, own, plain) = kernel
            .expect("a kernel build starts whenever a QEMU job is selected")
            .join()
            .unwrap_or_else(|_| (Err("xtask: the kernel build's thread panicked".into()), 0.0, None));
        match &built {
            Ok(_) if host => println!("xtask: kernel built in {own:.1} s ({:.1} s of it after the host tests)", t.elapsed().as_secs_f64()),
            Ok(_) => println!("xtask: kernel built in {own:.1} s"),
            Err(e) => println!("{e}"),
        }
        let prepared = built.and_then(|elf| Ok((elf, install::ensure(true)?)));
        phases.push(("kernel build (after the host tests)", t.elapsed().as_secs_f64()));
        match prepared {
            Err(e) => {
                if !e.starts_with("xtask: building the kernel failed") {
                    println!("{e}");
                }
                let mut vs: Vec<Verdict> = selected
                    .iter()
                    .map(|s| not_run(s, e.lines().next().unwrap_or("")))
                    .collect();
                if benchmarks {
                    let name = crate::benchmarks::TEST_JOB;
                    vs.push(Verdict { name, passed: false, report: format!("FAIL {name} (not run: {})\n", e.lines().next().unwrap_or("")), secs: 0.0 });
                }
                vs.iter().for_each(|v| print!("{}", v.report));
                vs
            }
            Ok((elf, qemu)) => {
                let syms = Arc::new(Symbols::load(&elf).unwrap_or_default());
                // The image scenarios need the GRUB image of this kernel; without it they alone fail.
                let mut selected = selected;
                let mut vs = Vec::new();
                for (mb1, iso) in images_needed(&selected, &elf) {
                    println!("==> building the GRUB image {}", iso.display());
                    let t = Instant::now();
                    let default = if mb1 { image::multiboot1_entry() } else { 0 };
                    match image::build_iso(&elf, &iso, SCENARIO_MENU_TIMEOUT, default) {
                        Ok(()) => println!("xtask: image built in {:.1} s", t.elapsed().as_secs_f64()),
                        Err(e) => {
                            println!("{e}");
                            let (images, kernels): (Vec<_>, Vec<_>) =
                                selected.into_iter().partition(|s| s.boot != Boot::Kernel);
                            selected = kernels;
                            let why = e.lines().next().unwrap_or("").to_string();
                            vs.extend(images.iter().map(|s| not_run(s, &why)));
                            vs.iter().for_each(|v| print!("{}", v.report));
                            break;
                        }
                    }
                }
                // The experiments' quick forms (experiment-NAME-quick) share the scenarios' slots.
                let mut quick = if experiments { crate::experiment::quick_jobs(filter, &qemu, &elf) } else { Vec::new() };
                // The simulator's quick forms (experiment-NAME-sim-quick) run the fairway-sim the host
                // tests built (the dev profile), built here when they did not run.
                if experiments {
                    match crate::sim::build_binary(false) {
                        Ok(bin) => quick.extend(crate::experiment::sim_quick_jobs(filter, &bin)),
                        Err(e) => println!("{e}: the simulator's experiment quick forms are not run"),
                    }
                }
                println!(
                    "==> {} QEMU scenario(s) and {} experiment quick form(s) (cargo xtask experiment NAME --quick), {jobs} slot(s) in parallel: {}",
                    selected.len(),
                    quick.len(),
                    elf.display()
                );
                let t = Instant::now();
                match plain {
                    Some(Ok(bench_elf)) => quick.push(crate::benchmarks::test_job(bench_elf, qemu.clone(), crate::benchmarks::test_tables(long))),
                    Some(Err(e)) => {
                        let name = crate::benchmarks::TEST_JOB;
                        let v = Verdict { name, passed: false, report: format!("FAIL {name} (the kernel without the lock-order checker: {e})\n"), secs: 0.0 };
                        print!("{}", v.report);
                        vs.push(v);
                    }
                    None => {}
                }
                let mut all: Vec<Job> = quick;
                all.extend(selected.into_iter().map(|s| scenario_job(s, qemu.clone(), elf.clone(), syms.clone(), show_logs, boot_shift)));
                vs.extend(run_jobs(all, jobs));
                phases.push(("QEMU scenarios and experiments", t.elapsed().as_secs_f64()));
                vs
            }
        }
    };
    let sc_passed = verdicts.iter().filter(|v| v.passed).count() as u32;
    let sc_failed = verdicts.len() as u32 - sc_passed;
    let failed_names: Vec<_> = verdicts
        .iter()
        .filter(|v| !v.passed)
        .map(|v| v.name)
        .collect();
    if !failed_names.is_empty() {
        println!("failed scenarios: {}", failed_names.join(" "));
    }
    print!("{}", time_summary(&phases, &verdicts, 10));
    let (passed, failed) = (host_t.passed + sc_passed, host_failed + sc_failed);
    println!(
        "host tests: {} passed, {} failed; QEMU scenarios: {sc_passed} passed, {sc_failed} failed; total time {:.1} s",
        host_t.passed,
        host_failed,
        start.elapsed().as_secs_f64()
    );
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        Ok(())
    } else {
        Err(String::new())
    }
}
