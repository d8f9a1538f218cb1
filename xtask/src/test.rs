//! `cargo xtask test`: host unit tests, one kernel build, the QEMU scenarios in parallel slots,
//! and one closing `N passed, N failed` line.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use fairway_scenarios::{Log, QemuExit, Scenario};

use crate::qemu::QemuConfig;
use crate::runner;
use crate::symbols::Symbols;
use crate::{cargo, install};

/// The verdict on one scenario.
#[derive(Debug)]
pub struct Verdict {
    pub name: &'static str,
    pub passed: bool,
    /// The report printed for it (one line for a pass).
    pub report: String,
}

/// A counting semaphore over the machine's slots.
struct Slots {
    free: Mutex<u32>,
    cv: Condvar,
}

impl Slots {
    fn acquire(&self, n: u32) {
        let mut f = self.free.lock().unwrap();
        while *f < n {
            f = self.cv.wait(f).unwrap();
        }
        *f -= n;
    }

    fn release(&self, n: u32) {
        *self.free.lock().unwrap() += n;
        self.cv.notify_all();
    }
}

/// The QEMU configuration of a scenario.
pub fn config(s: &Scenario, qemu: &Path, elf: &Path) -> QemuConfig {
    let mut c = QemuConfig::new(qemu.to_path_buf(), elf.to_path_buf());
    c.smp = s.smp.into();
    c.cpu = s.cpu.into();
    c.append = s.append.into();
    c.numa_nodes = s.numa_nodes;
    c.no_acpi = s.no_acpi;
    c.memory_mib = s.memory_mib;
    c.icount = s.icount;
    c
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
                report.push_str(&serial_log(s, log, syms));
            }
            Verdict {
                name: s.name,
                passed: true,
                report,
            }
        }
        Err(reason) => {
            let short = match exit {
                QemuExit::Kernel(o) if Some(*o) == Some(s.expect) => "check failed".to_string(),
                QemuExit::Kernel(o) => format!("kernel exit {o}, expected {}", s.expect),
                QemuExit::Timeout => format!("timeout after {} s", s.timeout_s),
                QemuExit::GuestReset => "guest reset (triple fault?)".into(),
                QemuExit::QemuError => "QEMU failed".into(),
                other => other.to_string(),
            };
            let mut r = format!("FAIL {} ({short}, {secs:.1} s)\n", s.name);
            for l in reason.lines() {
                r.push_str(&format!("    {l}\n"));
            }
            r.push_str(&format!("    QEMU: {exit}\n"));
            r.push_str(&format!("    {}\n", log.stage_summary()));
            r.push_str(&format!("    command: {cmdline}\n"));
            if !stderr.trim().is_empty() {
                r.push_str("    ---- QEMU stderr ----\n");
                for l in stderr.lines() {
                    r.push_str(&format!("    {l}\n"));
                }
            }
            r.push_str(&serial_log(s, log, syms));
            Verdict {
                name: s.name,
                passed: false,
                report: r,
            }
        }
    }
}

/// The whole serial log, indented, with symbolized addresses.
fn serial_log(s: &Scenario, log: &Log, syms: &Symbols) -> String {
    let mut r = format!(
        "    ---- serial log of {} ({} lines) ----\n",
        s.name,
        log.lines.len()
    );
    for l in &log.lines {
        r.push_str(&format!("    {}\n", syms.annotate(&l.text)));
    }
    r.push_str(&format!("    ---- end of serial log of {} ----\n", s.name));
    r
}

/// A failure that happened before any scenario could boot.
fn not_run(s: &Scenario, why: &str) -> Verdict {
    Verdict {
        name: s.name,
        passed: false,
        report: format!("FAIL {} (not run: {why})\n", s.name),
    }
}

/// Runs the scenarios, at most `slots` slots at a time, printing each verdict as it comes.
pub fn run_scenarios(
    scenarios: Vec<Scenario>,
    qemu: PathBuf,
    elf: PathBuf,
    syms: Arc<Symbols>,
    slots: u32,
    show_logs: bool,
) -> Vec<Verdict> {
    let slots = slots.max(1);
    // The big ones first, so they do not end up alone at the end.
    let mut scenarios = scenarios;
    scenarios.sort_by_key(|s| std::cmp::Reverse(s.slots.min(slots)));
    let queue = Arc::new(Mutex::new(scenarios.into_iter().collect::<VecDeque<_>>()));
    let sem = Arc::new(Slots {
        free: Mutex::new(slots),
        cv: Condvar::new(),
    });
    let verdicts = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..slots)
        .map(|_| {
            let (queue, sem, verdicts, qemu, elf, syms) = (
                queue.clone(),
                sem.clone(),
                verdicts.clone(),
                qemu.clone(),
                elf.clone(),
                syms.clone(),
            );
            thread::spawn(move || loop {
                let Some(s) = queue.lock().unwrap().pop_front() else {
                    return;
                };
                let need = s.slots.clamp(1, slots);
                sem.acquire(need);
                let cfg = config(&s, &qemu, &elf);
                let v = match cfg.command() {
                    Err(e) => not_run(&s, &e),
                    Ok(cmd) => {
                        let r =
                            runner::run(cmd, Duration::from_secs(s.timeout_s), &mut |_| {}, None);
                        judge(
                            &s,
                            &cfg.display(),
                            &r.exit,
                            &r.log,
                            &r.stderr,
                            r.elapsed.as_secs_f64(),
                            &syms,
                            show_logs,
                        )
                    }
                };
                sem.release(need);
                let mut all = verdicts.lock().unwrap();
                print!("{}", v.report);
                all.push(v);
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Arc::try_unwrap(verdicts)
        .map(|m| m.into_inner().unwrap())
        .unwrap_or_default()
}

pub fn test(
    filter: &str,
    host: bool,
    qemu_scenarios: bool,
    jobs: u32,
    show_logs: bool,
) -> Result<(), String> {
    let start = Instant::now();
    // (1) Host unit tests.
    let host_t = if host {
        println!(
            "==> host unit tests: cargo test --workspace --exclude {}",
            cargo::KERNEL_PACKAGE
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

    // (2)-(3) One kernel build, then the scenarios.
    let selected: Vec<Scenario> = if qemu_scenarios {
        fairway_scenarios::all()
            .into_iter()
            .filter(|s| s.name.contains(filter))
            .collect()
    } else {
        Vec::new()
    };
    let verdicts = if selected.is_empty() {
        if qemu_scenarios {
            println!("xtask: no scenario name contains `{filter}` (see `cargo xtask list`)");
        }
        Vec::new()
    } else {
        println!("==> building the kernel");
        let prepared = cargo::build_kernel().and_then(|elf| Ok((elf, install::ensure(true)?)));
        match prepared {
            Err(e) => {
                println!("{e}");
                let vs: Vec<Verdict> = selected
                    .iter()
                    .map(|s| not_run(s, e.lines().next().unwrap_or("")))
                    .collect();
                vs.iter().for_each(|v| print!("{}", v.report));
                vs
            }
            Ok((elf, qemu)) => {
                let syms = Arc::new(Symbols::load(&elf).unwrap_or_default());
                let n = selected.len();
                println!(
                    "==> {n} QEMU scenario(s), {jobs} slot(s) in parallel: {}",
                    elf.display()
                );
                run_scenarios(selected, qemu, elf, syms, jobs, show_logs)
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

#[cfg(test)]
mod tests {
    use super::*;
    use fairway_scenarios::{Outcome, BASE};

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
            h.contains("last stage reached: console; never reached: memory"),
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
