//! `workload=spread[,hogs=N][,start_cpu=0][,ms=1000]`: N CPU hogs (default:
//! one per CPU) all started on one CPU, free to run anywhere; load balancing
//! has to spread them. Every 10 ms it prints how many hogs each CPU holds
//! (`@fw spread t_ms=.. per_cpu=..`), and at the end each hog's CPU, runtime
//! and migrations (`@fw hog ...`).

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, Ordering};

use super::params::{Param, num_per_cpu, num, MAX_MS, MAX_THREADS, MAX_CPU};
use crate::cmdline::Workload;
use crate::task::Spawn;

/// What `workload=spread` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num_per_cpu("hogs", 1, MAX_THREADS, 1, "CPU hogs"),
    num("start_cpu", 0, MAX_CPU, 0, "the CPU all hogs start on"),
    num("ms", 10, MAX_MS, 1000, "how long the hogs run (ms)"),
];

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let hogs = w.num("hogs") as usize;
    let start = w.cpu("start_cpu", &cpus);
    let ms = w.num("ms");
    if !super::budget::fits(w, &["hogs"], hogs as u64, 0) {
        return false;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..hogs {
        let s = stop.clone();
        tasks.extend(super::spawn(Spawn::new("hog").on_cpu(start), move || super::hog(&s)));
    }
    let t0 = crate::rq::now_ns();
    let max_cpu = cpus.last().copied().unwrap_or(0);
    for step in 1..=ms / 10 {
        let target = t0 + step * 10_000_000;
        let now = crate::rq::now_ns();
        if target > now {
            crate::timer::sleep_ns(target - now);
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
        crate::record!("spread", "t_ms={} per_cpu={}", step * 10, line);
    }
    stop.store(true, Ordering::Relaxed);
    for t in &tasks {
        crate::task::join(t);
    }
    for t in &tasks {
        crate::record!(
            "hog",
            "id={} cpu={} runtime_ns={} migrations={} ran_on={}",
            t.id,
            t.cpu.load(Ordering::Relaxed),
            t.stats.sum_exec_runtime.load(Ordering::Relaxed),
            t.stats.nr_migrations.load(Ordering::Relaxed),
            t.ran_on()
        );
    }
    tasks.len() == hogs
}
