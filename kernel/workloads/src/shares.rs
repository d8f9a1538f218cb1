//! `workload=shares[,cpu=N][,ms=M]`: three CPU hogs at nice 0, 5 and -5
//! pinned to one CPU for M ms; prints each one's runtime and weight so the
//! runtime shares can be compared with the weight shares.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use super::params::{Param, num, MAX_MS, MAX_CPU};
use crate::cmdline::Workload;
use mech::thread::Spawn;

/// What `workload=shares` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("cpu", 0, MAX_CPU, 1, "the hogs' CPU (the default is the last CPU when CPU 1 is not online)"),
    num("ms", 1, MAX_MS, 2000, "how long the hogs run (ms)"),
];

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let cpu = w.cpu("cpu", &cpus);
    let ms = w.num("ms");
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for nice in [0, 5, -5] {
        let s = stop.clone();
        let mut name = alloc::string::String::from("hog");
        name.push_str(if nice < 0 { "-5" } else if nice > 0 { "+5" } else { "0" });
        if let Some(t) = super::spawn(Spawn::new(&name).nice(nice).pin(cpu), move || super::hog(&s)) {
            tasks.push(t);
        }
    }
    mech::thread::sleep_ns(ms * 1_000_000);
    stop.store(true, Ordering::Relaxed);
    super::join_all(&tasks);
    let total: u64 = tasks.iter().map(|t| t.stats.sum_exec_runtime.load(Ordering::Relaxed)).sum();
    for t in &tasks {
        let nice = t.nice_value();
        let weight = mech::task::nice_weight(nice);
        let run = t.stats.sum_exec_runtime.load(Ordering::Relaxed);
        mech::record!("share", "task={} cpu={} nice={} weight={} runtime_ns={} ran_on={}", t.name, cpu, nice, weight, run, t.ran_on());
        mech::kprintln!(
            "  {:>6} nice {:>3}: {:>5}.{:01}% of CPU {} ({} ms)",
            t.name,
            nice,
            run * 100 / total.max(1),
            run * 1000 / total.max(1) % 10,
            cpu,
            run / 1_000_000
        );
    }
    tasks.len() == 3
}
