//! `workload=spread[,hogs=N][,start_cpu=0][,ms=1000]`: N CPU hogs (default:
//! one per CPU) all started on one CPU, free to run anywhere (or on the CPUs
//! of `mask`); load balancing has to spread them. Every 10 ms it prints how
//! many hogs each CPU holds (`@fw spread t_ms=.. per_cpu=..`), and at the end
//! each hog's CPU, runtime and migrations (`@fw hog ...`).
//!
//! `pinned_mask` puts one more hog, pinned, on each CPU of that mask, spawned
//! before the free ones (a staged start: the free hogs join CPUs already
//! busy with tasks that cannot move); each prints `@fw pinned_hog`.
//!
//! `sleeper_busy_us` > 0 adds a thread pinned to `sleeper_cpu` that spins that
//! long and sleeps `sleeper_sleep_us` in turn: a CPU that goes newly idle at
//! every sleep and is busy in between (so its periodic balance is mostly a
//! busy one), for the scenario of an active balance asked by newidle.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, Ordering};

use super::params::{Param, num_per_cpu, num, MAX_MS, MAX_THREADS, MAX_CPU};
use crate::cmdline::Workload;
use mech::thread::Spawn;

/// What `workload=spread` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num_per_cpu("hogs", 1, MAX_THREADS, 1, "CPU hogs"),
    num("start_cpu", 0, MAX_CPU, 0, "the CPU all hogs start on"),
    num("ms", 10, MAX_MS, 1000, "how long the hogs run (ms)"),
    num("mask", 0, u32::MAX as u64, 0, "the hogs' allowed CPUs as a bit mask (0: all online CPUs)"),
    num("pinned_mask", 0, u32::MAX as u64, 0, "one pinned hog on each CPU of this bit mask, started before the free hogs"),
    num("sleeper_cpu", 0, MAX_CPU, 0, "the CPU of the sleeper thread (pinned)"),
    num("sleeper_busy_us", 0, 1_000_000, 0, "the sleeper spins this long between sleeps (us; 0: no sleeper)"),
    num("sleeper_sleep_us", 10, 1_000_000, 100, "the sleeper sleeps this long between spins (us)"),
];

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let hogs = w.num("hogs") as usize;
    let start = w.cpu("start_cpu", &cpus);
    let ms = w.num("ms");
    let online = mech::rq::online_mask();
    let mut allowed = match w.num("mask") {
        0 => online,
        bits => super::cpu_mask(w, "mask", bits, &online),
    };
    if !allowed.contains(start) {
        crate::cmdline::report_problem(format_args!("workload={}: mask does not hold start_cpu={}; adding it", w.name, start));
        allowed.set(start);
    }
    let sleeper_cpu = w.cpu("sleeper_cpu", &cpus);
    let (sleeper_busy, sleeper_sleep) = (w.num("sleeper_busy_us") * 1000, w.num("sleeper_sleep_us") * 1000);
    let pinned_cpus = match w.num("pinned_mask") {
        0 => Vec::new(),
        bits => super::cpu_mask(w, "pinned_mask", bits, &online).iter().collect(),
    };
    let threads = hogs as u64 + pinned_cpus.len() as u64 + (sleeper_busy > 0) as u64;
    if !super::budget::fits(w, &["hogs"], threads, 0) {
        return false;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut pinned = Vec::new();
    for &cpu in &pinned_cpus {
        let s = stop.clone();
        pinned.extend(super::spawn(Spawn::new("pinned_hog").pin(cpu), move || super::hog(&s)));
    }
    let mut tasks = Vec::new();
    for _ in 0..hogs {
        let s = stop.clone();
        tasks.extend(super::spawn(Spawn::new("hog").affinity(allowed).on_cpu(start), move || super::hog(&s)));
    }
    let mut sleeper = None;
    if sleeper_busy > 0 {
        let s = stop.clone();
        sleeper = super::spawn(Spawn::new("sleeper").pin(sleeper_cpu), move || {
            while !s.load(Ordering::Relaxed) {
                mech::platform::burn_ns(sleeper_busy);
                mech::thread::sleep_ns(sleeper_sleep);
            }
        });
    }
    let t0 = mech::rq::now_ns();
    let max_cpu = cpus.last().copied().unwrap_or(0);
    for step in 1..=ms / 10 {
        let target = t0 + step * 10_000_000;
        let now = mech::rq::now_ns();
        if target > now {
            mech::thread::sleep_ns(target - now);
        }
        let mut counts = alloc::vec![0u32; max_cpu + 1];
        for t in &tasks {
            let c = t.cpu.load(Ordering::Relaxed);
            if c <= max_cpu {
                counts[c] += 1;
            }
        }
        let mut line = String::new();
        for (i, n) in counts.iter().enumerate() {
            let _ = write!(line, "{}{}", if i > 0 { "," } else { "" }, n);
        }
        mech::record!("spread", "t_ms={} per_cpu={}", step * 10, line);
    }
    stop.store(true, Ordering::Relaxed);
    for t in tasks.iter().chain(sleeper.iter()).chain(pinned.iter()) {
        mech::thread::join(t);
    }
    for t in &pinned {
        mech::record!("pinned_hog", "id={} cpu={} ran_on={}", t.id, t.cpu.load(Ordering::Relaxed), t.ran_on());
    }
    for t in &tasks {
        mech::record!(
            "hog",
            "id={} cpu={} runtime_ns={} migrations={} ran_on={}",
            t.id,
            t.cpu.load(Ordering::Relaxed),
            t.stats.sum_exec_runtime.load(Ordering::Relaxed),
            t.stats.nr_migrations.load(Ordering::Relaxed),
            t.ran_on()
        );
    }
    tasks.len() == hogs && pinned.len() == pinned_cpus.len() && sleeper.is_some() == (sleeper_busy > 0)
}
