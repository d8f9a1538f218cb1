//! `cargo xtask torture --minutes M --smp SPEC [--seed S]`: boots `workload=torture`
//! with the invariant checks on (`sched_debug=1`) for that long, shows the torture's own lines
//! as they come, then prints its books (every check of `fairway_scenarios::workloads::
//! torture_books`, the same the scenarios assert) and the operations done per kind. Exits
//! non-zero on any violation: a book that does not balance, a failed or missing result line, a
//! panic, a timeout. The whole serial log is kept under `target/torture/`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fairway_scenarios::workloads::{torture_books, torture_default_threads, TORTURE_OPS};
use fairway_scenarios::Log;

use crate::qemu::QemuConfig;

/// The workload's longest run (`params::MAX_MS` in the kernel): ten minutes.
const MAX_MINUTES: f64 = 10.0;

#[derive(clap::Args, Debug)]
pub struct TortureArgs {
    /// How long the threads run, in minutes (decimals allowed: 0.5 is 30 s; at most 10).
    #[arg(long, value_parser = parse_minutes)]
    pub minutes: u64,
    /// QEMU -smp value, e.g. `8` or `8,sockets=2,cores=2,threads=2`.
    #[arg(long, value_parser = parse_smp)]
    pub smp: String,
    /// Seed of the torture's random choices (default: from the clock; printed, so that a failing
    /// run can be repeated).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads (default 4 per CPU; an even number from 2 to 512).
    #[arg(long, value_parser = parse_threads)]
    pub threads: Option<u64>,
    /// Guest memory in MiB (at least 1).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    pub mem: u32,
    /// Instruction-counted time (-icount): slower by far (2 s of guest time at -smp 4 took 136
    /// s), but the same seed gives the same run.
    #[arg(long)]
    pub icount: bool,
    /// Extra kernel command line (e.g. `sched_features=NO_DELAY_DEQUEUE`).
    #[arg(long, default_value = "")]
    pub append: String,
}

/// `--minutes`: a positive number of minutes, at most ten; returns milliseconds.
fn parse_minutes(s: &str) -> Result<u64, String> {
    let m: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of minutes"))?;
    if !(m > 0.0 && m <= MAX_MINUTES) {
        return Err(format!(
            "{s} minutes: the torture runs from 1 ms to {MAX_MINUTES} minutes (the workload's `ms=` limit)"
        ));
    }
    Ok(((m * 60_000.0).round() as u64).max(1))
}

/// `--smp`: a value QEMU's -smp takes, with at least one CPU.
fn parse_smp(s: &str) -> Result<String, String> {
    match crate::qemu::smp_cpus(s)? {
        0 => Err(format!("-smp {s} has no CPU")),
        _ => Ok(s.to_string()),
    }
}

/// `--threads`: even, 2..=512 (the workload's range; it works in writer/reader pairs).
fn parse_threads(s: &str) -> Result<u64, String> {
    let n: u64 = s.parse().map_err(|_| format!("`{s}` is not a number of threads"))?;
    if !(2..=512).contains(&n) || n % 2 == 1 {
        return Err(format!("{n} threads: an even number from 2 to 512 (they work in pipe writer/reader pairs)"));
    }
    Ok(n)
}

/// The kernel command line of a torture run.
pub fn cmdline(ms: u64, seed: u64, threads: Option<u64>, append: &str) -> String {
    let mut w = format!("sched_debug=1 workload=torture,ms={ms},seed={seed}");
    if let Some(t) = threads {
        w += &format!(",threads={t}");
    }
    if !append.trim().is_empty() {
        w = format!("{} {w}", append.trim());
    }
    w
}

/// Whether a console line belongs in the live view (the full log is kept in a file).
fn shown(line: &str) -> bool {
    ["torture:", "@fw torture", "cmdline:", "@fw cmdline_problem", "@fw panic", "@fw fault", "@fw oom", "PANIC", "invariant", "@fw exit", "@fw workload"]
        .iter()
        .any(|p| line.starts_with(p))
}

pub fn torture(a: TortureArgs) -> Result<(), String> {
    crate::check_mem_for_smp(&a.smp, a.mem)?;
    let cpus = crate::qemu::smp_cpus(&a.smp)? as u64;
    let seed = a.seed.unwrap_or_else(|| {
        let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        t.as_nanos() as u64 % 1_000_000_000
    });
    let ms = a.minutes;
    let threads = a.threads.unwrap_or_else(|| torture_default_threads(cpus));
    let append = cmdline(ms, seed, a.threads, &a.append);
    let elf = crate::cargo::build_kernel()?;
    let qemu = crate::install::ensure(false)?;
    let mut cfg = QemuConfig::new(qemu, elf);
    cfg.smp = a.smp.clone();
    cfg.append = append.clone();
    cfg.icount = a.icount;
    cfg.memory_mib = a.mem;
    // Boot, the run, up to 30 s of winding down, the final reports; under -icount guest time
    // runs tens of times slower than the host's.
    let run_s = ms.div_ceil(1000);
    let timeout = if a.icount { run_s * 40 * cpus.max(2) + 600 } else { run_s + 240 };
    eprintln!("xtask: torture for {ms} ms at -smp {} with seed {seed} ({threads} threads)", a.smp);
    eprintln!("xtask: {}", cfg.display());
    let r = crate::runner::run(cfg.command()?, Duration::from_secs(timeout), &mut |l| {
        if shown(l) {
            println!("{l}");
        }
    }, Some(Box::new(|l: &str| eprintln!("qemu: {l}"))));
    let dir = crate::workspace_root().join("target/torture");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("torture-smp{cpus}-{ms}ms-seed{seed}.log"));
    if let Err(e) = std::fs::write(&path, r.log.raw()) {
        eprintln!("xtask: cannot keep the log in {}: {e}", path.display());
    }
    eprintln!("xtask: {} after {:.1} s; the serial log is {}", r.exit, r.elapsed.as_secs_f64(), path.display());
    let verdict = summary(&r.log, cpus, ms, seed, threads);
    let rerun = format!("cargo xtask torture --minutes {} --smp {} --seed {seed}{}{}", fmt_minutes(ms), a.smp,
        a.threads.map(|t| format!(" --threads {t}")).unwrap_or_default(), if a.icount { " --icount" } else { "" });
    match (r.exit.is_success(), verdict) {
        (true, Ok(())) => {
            println!("torture: passed ({rerun})");
            Ok(())
        }
        (ok, v) => {
            let mut msg = String::from("torture: FAILED");
            if !ok {
                msg += &format!("; the kernel: {}", r.exit);
                if matches!(r.exit, fairway_scenarios::QemuExit::Timeout) {
                    msg += &format!(" (after {timeout} s)");
                }
            }
            if let Err(e) = v {
                msg += &format!("; {e}");
            }
            msg += &format!("\ntorture: rerun with `{rerun}`; {}", r.log.stage_summary());
            Err(msg)
        }
    }
}

/// Minutes as the user would type them back.
fn fmt_minutes(ms: u64) -> String {
    let m = ms as f64 / 60_000.0;
    let s = format!("{m:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Prints the operations per kind and every book; Err names the books that do not balance.
fn summary(log: &Log, cpus: u64, ms: u64, seed: u64, threads: u64) -> Result<(), String> {
    if let Ok(ops) = log.one("torture_ops") {
        let total: u64 = TORTURE_OPS.iter().filter_map(|o| ops.num(o).ok()).sum();
        println!("torture: operations done ({total} in all):");
        for o in TORTURE_OPS {
            println!("  {o:<12} {:>10}", ops.num(o).unwrap_or(0));
        }
    }
    let books = torture_books(log, cpus, ms, seed, threads)?;
    println!("torture: checks ({}):", books.len());
    for (what, held) in &books {
        println!("  {} {what}", if *held { "ok  " } else { "FAIL" });
    }
    let failed: Vec<&str> = books.iter().filter(|(_, h)| !h).map(|(w, _)| w.as_str()).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} check(s) failed: {}", failed.len(), failed.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_are_checked_and_become_milliseconds() {
        assert_eq!(parse_minutes("10"), Ok(600_000));
        assert_eq!(parse_minutes("0.5"), Ok(30_000));
        assert_eq!(parse_minutes("0.00001"), Ok(1));
        for bad in ["0", "-1", "10.5", "11", "abc", "", "NaN", "inf"] {
            let e = parse_minutes(bad).unwrap_err();
            assert!(e.contains("minutes"), "{bad}: {e}");
        }
        assert_eq!(fmt_minutes(600_000), "10");
        assert_eq!(fmt_minutes(30_000), "0.5");
    }

    #[test]
    fn smp_and_threads_are_checked() {
        assert_eq!(parse_smp("8").as_deref(), Ok("8"));
        assert!(parse_smp("8,sockets=2,cores=2,threads=2").is_ok());
        assert!(parse_smp("0").is_err());
        assert!(parse_smp("eight").unwrap_err().contains("bad -smp value"));
        assert_eq!(parse_threads("32"), Ok(32));
        for bad in ["0", "1", "33", "514", "x"] {
            assert!(parse_threads(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_command_line_has_the_invariant_checks_on() {
        assert_eq!(cmdline(600_000, 7, None, ""), "sched_debug=1 workload=torture,ms=600000,seed=7");
        assert_eq!(cmdline(5, 1, Some(4), " hz=250 "), "hz=250 sched_debug=1 workload=torture,ms=5,seed=1,threads=4");
    }

    #[test]
    fn the_summary_fails_on_a_broken_book_and_passes_on_a_balanced_one() {
        let good = "@fw torture seed=3 ms=100 cpus=2 threads=8 ok=1 alive=0 mutex_count=5 sem_units=4 sem_left=4 bell_left=1 spawned=20 exited=20 joined=20 sleep_begun=9 sleep_ended=9 sleep_early=0 mutex_begun=5 mutex_ended=5 sem_begun=4 sem_ended=4 sem_ups=4 bell_begun=3 bell_ended=3 bell_posts=4 bell_taken=3 bell_by_token=2 bell_timeouts=1 bell_stops=0 bell_slept=2 lost_wakeups=0 join_begun=2 join_ended=2 read_begun=6 read_ended=6 write_begun=6 write_ended=6 pipe_sent=99 pipe_received=99 pipe_bad=0 affinity_misses=0 attr_misses=0 spawn_failed=0 violations=0 runtime_ns=100000000 idle_ns=101000000 newidle_ns=1000000 pressure_ns=0 elapsed_ns=101000000 run_ns=100000000 no_runnable_ns=100000000\n@fw torture_ops spin=1 sleep_short=1 sleep_long=1 mutex=5 sem=4 post=4 wait=3 pipe=9 spawn=12 renice=1 slice=1 affinity=1 yield=1\n";
        assert_eq!(summary(&Log::parse(good), 2, 100, 3, 8), Ok(()));
        // one wakeup lost: a doorbell wait that never ended
        let lost = good.replace("bell_ended=3", "bell_ended=2");
        let e = summary(&Log::parse(&lost), 2, 100, 3, 8).unwrap_err();
        assert!(e.contains("bell waits ended = begun"), "{e}");
        assert!(summary(&Log::parse(good), 2, 100, 4, 8).unwrap_err().contains("seed"));
        assert!(summary(&Log::parse("@fw exit status=33 code=success\n"), 2, 100, 3, 8).is_err());
    }
}
