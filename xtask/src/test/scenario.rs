//! One scenario as a job: its QEMU configuration and time limit, its boot (or two), and the
//! verdict with the report a failure prints.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use fairway_scenarios::{Boot, Firmware, Log, QemuExit, Scenario};

use super::pool::{Job, Verdict};
#[cfg(test)]
use super::pool::run_jobs;
use super::scenario_image;
use crate::install;
use crate::qemu::QemuConfig;
use crate::runner;
use crate::symbols::Symbols;

/// The QEMU configuration of a scenario.
pub fn config(s: &Scenario, qemu: &Path, elf: &Path) -> Result<QemuConfig, String> {
    let mut c = QemuConfig::new(qemu.to_path_buf(), elf.to_path_buf());
    if let Boot::Image(firmware) | Boot::ImageMultiboot1(firmware) = s.boot {
        c.cdrom = Some(scenario_image(elf, matches!(s.boot, Boot::ImageMultiboot1(_))));
        if firmware == Firmware::Ovmf {
            c.bios = Some(install::find_ovmf().ok_or("no OVMF firmware (the `ovmf` package; or set FAIRWAY_OVMF)")?);
        }
    }
    c.smp = s.smp.into();
    c.cpu = s.cpu.into();
    c.append = s.append.into();
    c.numa_nodes = s.numa_nodes;
    c.no_acpi = s.no_acpi;
    c.memory_mib = s.memory_mib;
    c.icount = s.icount;
    // A scenario boots the command line it names (`qemu::ICOUNT_IDLE` only where it says so).
    c.icount_idle = false;
    c.extra = s.qemu_extra.iter().map(|a| a.to_string()).collect();
    c.tcg_single_thread = s.tcg_single_thread;
    Ok(c)
}

/// Judges a finished run and writes its report.
#[allow(clippy::too_many_arguments)]
pub fn judge(
    s: &Scenario,
    cmdline: &str,
    exit: &QemuExit,
    log: &Log,
    stderr: &str,
    secs: f64,
    syms: &Symbols,
    show_log: bool,
) -> Verdict {
    match s.evaluate(exit, log) {
        Ok(()) => {
            let mut report = format!("PASS {} ({secs:.1} s)\n", s.name);
            if show_log {
                report.push_str(&serial_log(s.name, log, syms));
            }
            Verdict {
                name: s.name,
                passed: true,
                report,
                secs,
            }
        }
        Err(reason) => {
            let short = short_reason(s, exit);
            let mut r = format!("FAIL {} ({short}, {secs:.1} s)\n", s.name);
            for l in reason.lines() {
                r.push_str(&format!("    {l}\n"));
            }
            r.push_str(&boot_details(s.name, cmdline, exit, log, stderr, syms));
            Verdict {
                name: s.name,
                passed: false,
                report: r,
                secs,
            }
        }
    }
}

/// vCPUs that one `-icount` boot's `timeout_s` covers; beyond them the limit grows with the count.
pub const ICOUNT_TIMEOUT_CPUS: u32 = 8;

/// The wall-clock limit of one boot of `s`, in seconds, and how it was reached. Under `-icount`
/// QEMU runs the vCPUs one at a time in one host thread, so every guest nanosecond of every vCPU
/// costs host time and a boot's wall time grows with the vCPU count, CPU bring-up included (64
/// vCPUs: `balance-spread-smp64-nohz` took 609 s of a loaded 2-core host): past
/// [`ICOUNT_TIMEOUT_CPUS`] vCPUs the scenario's `timeout_s` counts per that many vCPUs.
pub fn boot_timeout(s: &Scenario) -> (u64, String) {
    let cpus = fairway_scenarios::Topology::from_smp(s.smp, s.numa_nodes).map_or(1, |t| t.cpus());
    if s.icount && cpus > ICOUNT_TIMEOUT_CPUS {
        let t = s.timeout_s * u64::from(cpus.div_ceil(ICOUNT_TIMEOUT_CPUS));
        let why = format!(
            "{} s per {ICOUNT_TIMEOUT_CPUS} vCPUs for {cpus} vCPUs under -icount, which runs them one at a time",
            s.timeout_s
        );
        (t, why)
    } else {
        (s.timeout_s, String::new())
    }
}

/// How a failed run ended, in a few words.
fn short_reason(s: &Scenario, exit: &QemuExit) -> String {
    match exit {
        QemuExit::Kernel(o) if *o == s.expect => "check failed".to_string(),
        QemuExit::Kernel(o) => format!("kernel exit {o}, expected {}", s.expect),
        QemuExit::Timeout => match boot_timeout(s) {
            (t, why) if why.is_empty() => format!("timeout after {t} s"),
            (t, why) => format!("timeout after {t} s: {why}"),
        },
        QemuExit::GuestReset => "guest reset (triple fault?)".into(),
        QemuExit::QemuError => "QEMU failed".into(),
        other => other.to_string(),
    }
}

/// What a failure report shows of one boot: QEMU's exit, the stages, the command line, QEMU's
/// stderr and the serial log.
fn boot_details(
    label: &str,
    cmdline: &str,
    exit: &QemuExit,
    log: &Log,
    stderr: &str,
    syms: &Symbols,
) -> String {
    let mut r = format!("    QEMU: {exit}\n");
    r.push_str(&format!("    {}\n", log.stage_summary()));
    r.push_str(&format!("    command: {cmdline}\n"));
    if !stderr.trim().is_empty() {
        r.push_str("    ---- QEMU stderr ----\n");
        for l in stderr.lines() {
            r.push_str(&format!("    {l}\n"));
        }
    }
    r.push_str(&serial_log(label, log, syms));
    r
}

/// One boot of a scenario: its QEMU command line and how it ended, or why it could not start.
fn boot(s: &Scenario, qemu: &Path, elf: &Path, boot_shift: u32) -> Result<(String, runner::RunResult), String> {
    let mut cfg = config(s, qemu, elf)?;
    cfg.path_pad = boot_shift;
    let cmd = cfg.command()?;
    let r = runner::run(cmd, Duration::from_secs(boot_timeout(s).0), &mut |_| {}, None);
    Ok((cfg.display(), r))
}

/// Judges the two boots of a [`fairway_scenarios::Versus`] scenario (`Scenario::evaluate_versus`);
/// a failure report shows both boots.
pub fn judge_versus(
    s: &Scenario,
    boots: [(String, runner::RunResult); 2],
    syms: &Symbols,
    show_log: bool,
) -> Verdict {
    let [(_, a), (_, b)] = &boots;
    let secs = a.elapsed.as_secs_f64() + b.elapsed.as_secs_f64();
    let labels = [
        format!("{} (1 of 2)", s.name),
        format!("{} (2 of 2)", s.name),
    ];
    let verdict = s.evaluate_versus((&a.exit, &a.log), (&b.exit, &b.log));
    let (passed, mut report) = match &verdict {
        Ok(()) => (true, format!("PASS {} ({secs:.1} s, 2 boots)\n", s.name)),
        Err(reason) => {
            let short = [&a.exit, &b.exit]
                .iter()
                .zip(["first boot", "second boot"])
                .find(|(e, _)| e.outcome() != Some(s.expect))
                .map_or("check failed".to_string(), |(e, which)| {
                    format!("{which}: {}", short_reason(s, e))
                });
            let mut r = format!("FAIL {} ({short}, {secs:.1} s, 2 boots)\n", s.name);
            for l in reason.lines() {
                r.push_str(&format!("    {l}\n"));
            }
            (false, r)
        }
    };
    if !passed || show_log {
        for ((cmd, run), label) in boots.iter().zip(&labels) {
            if passed {
                report.push_str(&serial_log(label, &run.log, syms));
            } else {
                report.push_str(&boot_details(
                    label,
                    cmd,
                    &run.exit,
                    &run.log,
                    &run.stderr,
                    syms,
                ));
            }
        }
    }
    Verdict {
        name: s.name,
        passed,
        report,
        secs,
    }
}

/// The whole serial log, indented, with symbolized addresses.
fn serial_log(label: &str, log: &Log, syms: &Symbols) -> String {
    let mut r = format!(
        "    ---- serial log of {label} ({} lines) ----\n",
        log.lines.len()
    );
    for l in &log.lines {
        r.push_str(&format!("    {}\n", syms.annotate(&l.text)));
    }
    r.push_str(&format!("    ---- end of serial log of {label} ----\n"));
    r
}

/// A failure that happened before any scenario could boot.
pub fn not_run(s: &Scenario, why: &str) -> Verdict {
    Verdict {
        name: s.name,
        passed: false,
        report: format!("FAIL {} (not run: {why})\n", s.name),
        secs: 0.0,
    }
}

/// A scenario as a job of the pool: its boot (or two) and the verdict on it. `boot_shift`
/// pads the kernel's path (`QemuConfig::path_pad`; 0 in the suite).
pub fn scenario_job(s: Scenario, qemu: PathBuf, elf: PathBuf, syms: Arc<Symbols>, show_logs: bool, boot_shift: u32) -> Job {
    Job {
        slots: s.slots,
        boots: if s.versus.is_some() { 2 } else { 1 },
        run: Box::new(move || match s.second_boot() {
            None => boot(&s, &qemu, &elf, boot_shift).map_or_else(
                |e| not_run(&s, &e),
                |(cmdline, r)| {
                    let secs = r.elapsed.as_secs_f64();
                    judge(&s, &cmdline, &r.exit, &r.log, &r.stderr, secs, &syms, show_logs)
                },
            ),
            Some(second) => boot(&s, &qemu, &elf, boot_shift)
                .and_then(|a| Ok((a, boot(&second, &qemu, &elf, boot_shift)?)))
                .map_or_else(|e| not_run(&s, &e), |(a, b)| judge_versus(&s, [a, b], &syms, show_logs)),
        }),
    }
}

/// Runs the scenarios alone, at most `slots` slots at a time, printing each verdict as it comes.
#[cfg(test)]
pub fn run_scenarios(
    scenarios: Vec<Scenario>,
    qemu: PathBuf,
    elf: PathBuf,
    syms: Arc<Symbols>,
    slots: u32,
    show_logs: bool,
) -> Vec<Verdict> {
    let jobs = scenarios
        .into_iter()
        .map(|s| scenario_job(s, qemu.clone(), elf.clone(), syms.clone(), show_logs, 0))
        .collect();
    run_jobs(jobs, slots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairway_scenarios::{Outcome, BASE};
    use std::time::Instant;

    /// The 60-second torture takes one slot because its vCPUs share one host thread: the
    /// scenario must ask for it and `config` must pass it on to QEMU's arguments.
    #[test]
    fn the_long_torture_runs_its_vcpus_in_one_host_thread() {
        let args = |s: &Scenario| config(s, Path::new("qemu"), Path::new("/k/fairway-kernel")).unwrap().args().unwrap().join(" ");
        let all = fairway_scenarios::all();
        let torture = all.iter().find(|s| s.name == "torture-smp8-60s").expect("torture-smp8-60s");
        assert_eq!(torture.slots, 1);
        assert!(args(torture).starts_with("-accel tcg,thread=single -cpu max -smp 8 "), "{}", args(torture));
        let smp4 = all.iter().find(|s| s.name == "torture-smp4").expect("torture-smp4");
        assert!(args(smp4).starts_with("-accel tcg -cpu max -smp 4 "), "{}", args(smp4));
    }

    fn fake_qemu(dir: &Path, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("fake-qemu");
        std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xtask-test-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn check_entry(log: &Log) -> fairway_scenarios::CheckResult {
        log.one("stage").map(|_| ())
    }

    #[test]
    fn scheduler_runs_everything_and_reports_failures_with_the_log() {
        let d = tmpdir("sched");
        // Echoes its -append value as a stage, then exits with the status named in it.
        let q = fake_qemu(
            &d,
            r#"while [ $# -gt 0 ]; do [ "$1" = -append ] && A="$2"; shift; done
echo "@fw stage name=entry"; echo "@fw stage name=console"
case "$A" in ok) exit 33;; panic) exit 37;; hang) exec sleep 100;; reset) exit 0;; *) exit 1;; esac"#,
        );
        let mk = |name, append, slots, expect| Scenario {
            name,
            append,
            slots,
            expect,
            timeout_s: 2,
            check: check_entry,
            ..BASE
        };
        let scenarios = vec![
            mk("ok", "ok", 1, Outcome::Success),
            mk("big", "ok", 2, Outcome::Success),
            mk("panics", "panic", 1, Outcome::Panic),
            mk("hangs", "hang", 1, Outcome::Success),
            mk("resets", "reset", 1, Outcome::Success),
            mk("unexpected-panic", "panic", 1, Outcome::Success),
        ];
        let t = Instant::now();
        let v = run_scenarios(
            scenarios,
            q,
            d.join("kernel"),
            Arc::new(Symbols::default()),
            2,
            false,
        );
        assert!(t.elapsed() < Duration::from_secs(15));
        let get = |n: &str| v.iter().find(|x| x.name == n).unwrap();
        assert_eq!(v.len(), 6);
        assert!(get("ok").passed && get("big").passed && get("panics").passed);
        assert!(get("ok").report.starts_with("PASS ok ("));
        let h = &get("hangs").report;
        assert!(h.starts_with("FAIL hangs (timeout after 2 s"), "{h}");
        assert!(
            h.contains("last stage reached: console; never reached: bootinfo"),
            "{h}"
        );
        assert!(
            h.contains("---- serial log of hangs (2 lines) ----\n    @fw stage name=entry\n"),
            "{h}"
        );
        assert!(get("resets").report.contains("triple fault"));
        assert!(get("unexpected-panic")
            .report
            .contains("kernel exit panic, expected success"));
        let _ = std::fs::remove_dir_all(d);
    }

    /// A `versus` scenario boots twice (the second with its own `-append`), and its report
    /// names the failing boot and shows both serial logs.
    #[test]
    fn versus_scenarios_boot_twice_and_compare() {
        let d = tmpdir("versus");
        let q = fake_qemu(
            &d,
            r#"while [ $# -gt 0 ]; do [ "$1" = -append ] && A="$2"; shift; done
echo "@fw stage name=entry"; echo "@fw result value=$A"
case "$A" in panic) exit 37;; *) exit 33;; esac"#,
        );
        fn differ(a: &Log, b: &Log) -> fairway_scenarios::CheckResult {
            let v = |l: &Log| l.one("result").map(|r| r.get("value").map(String::from));
            if v(a)? != v(b)? {
                Ok(())
            } else {
                Err("the two boots printed the same value".into())
            }
        }
        let mk = |name, second| Scenario {
            name,
            append: "one",
            timeout_s: 5,
            check: check_entry,
            versus: Some(fairway_scenarios::Versus {
                append: second,
                compare: differ,
            }),
            ..BASE
        };
        let v = run_scenarios(
            vec![
                mk("differ", "two"),
                mk("same", "one"),
                mk("second-panics", "panic"),
            ],
            q,
            d.join("kernel"),
            Arc::new(Symbols::default()),
            2,
            false,
        );
        let get = |n: &str| v.iter().find(|x| x.name == n).unwrap();
        assert!(get("differ").passed, "{}", get("differ").report);
        assert!(get("differ").report.contains("2 boots"));
        let same = &get("same").report;
        assert!(
            !get("same").passed && same.contains("the two boots printed the same value"),
            "{same}"
        );
        assert!(
            same.contains("serial log of same (1 of 2)")
                && same.contains("serial log of same (2 of 2)"),
            "{same}"
        );
        let p = &get("second-panics").report;
        assert!(
            p.starts_with("FAIL second-panics (second boot: kernel exit panic"),
            "{p}"
        );
        let _ = std::fs::remove_dir_all(d);
    }

    /// Under -icount the limit grows with the vCPUs past 8, and the timeout says why; elsewhere
    /// it is the scenario's own.
    #[test]
    fn icount_timeout_scales_with_the_vcpus_and_says_so() {
        let big = Scenario { name: "big", smp: "64", icount: true, timeout_s: 150, ..BASE };
        assert_eq!(boot_timeout(&big).0, 1200);
        assert_eq!(
            short_reason(&big, &QemuExit::Timeout),
            "timeout after 1200 s: 150 s per 8 vCPUs for 64 vCPUs under -icount, which runs them one at a time"
        );
        assert_eq!(boot_timeout(&Scenario { smp: "12", ..big.clone() }).0, 300);
        let eight = Scenario { smp: "8,sockets=2,cores=2,threads=2", ..big.clone() };
        assert_eq!(boot_timeout(&eight), (150, String::new()));
        assert_eq!(short_reason(&eight, &QemuExit::Timeout), "timeout after 150 s");
        let wall = Scenario { icount: false, ..big };
        assert_eq!(boot_timeout(&wall).0, 150);
    }

    #[test]
    fn missing_qemu_fails_the_scenario() {
        let s = vec![Scenario {
            name: "x",
            timeout_s: 2,
            ..BASE
        }];
        let v = run_scenarios(
            s,
            "/nonexistent/qemu".into(),
            "/nonexistent/k".into(),
            Arc::new(Symbols::default()),
            2,
            false,
        );
        assert!(!v[0].passed);
        assert!(
            v[0].report.contains("QEMU could not be started"),
            "{}",
            v[0].report
        );
    }

    /// `--boot-shift 2` reaches QEMU on both boots of a versus scenario: the fake QEMU succeeds
    /// only when given the kernel as `.///kernel`.
    #[test]
    fn the_boot_shift_pads_the_kernels_path_of_every_boot() {
        let d = tmpdir("shift");
        let q = fake_qemu(
            &d,
            r#"while [ $# -gt 0 ]; do [ "$1" = -kernel ] && K="$2"; shift; done
echo "@fw stage name=entry"; [ "$K" = .///kernel ] && exit 33; exit 1"#,
        );
        let syms = Arc::new(Symbols::default());
        let job = |name, shift| {
            let versus = Some(fairway_scenarios::Versus { append: "second", compare: |_, _| Ok(()) });
            let s = Scenario { name, timeout_s: 2, check: check_entry, versus, ..BASE };
            scenario_job(s, q.clone(), d.join("kernel"), syms.clone(), false, shift)
        };
        let v = run_jobs(vec![job("shifted", 2), job("unshifted", 0)], 1);
        let get = |n: &str| v.iter().find(|x| x.name == n).unwrap();
        assert!(get("shifted").passed, "{}", get("shifted").report);
        let r = &get("unshifted").report;
        assert!(r.starts_with("FAIL unshifted") && r.contains("-kernel ./kernel"), "{r}");
        let _ = std::fs::remove_dir_all(d);
    }

    /// A real QEMU, when installed: a file that is no kernel makes QEMU itself fail (status 1),
    /// and the report carries QEMU's stderr.
    #[test]
    fn real_qemu_rejects_a_bogus_kernel() {
        let Some(q) = install::find_qemu() else {
            return;
        };
        let d = tmpdir("bogus");
        let k = d.join("not-a-kernel");
        std::fs::write(&k, b"not a kernel").unwrap();
        let s = vec![Scenario {
            name: "bogus",
            timeout_s: 30,
            ..BASE
        }];
        let v = run_scenarios(s, q, k, Arc::new(Symbols::default()), 1, false);
        assert!(!v[0].passed);
        assert!(v[0].report.contains("QEMU failed"), "{}", v[0].report);
        assert!(
            v[0].report.contains("---- QEMU stderr ----"),
            "{}",
            v[0].report
        );
        let _ = std::fs::remove_dir_all(d);
    }
}
