//! `workload=demo` (the default of `cargo xtask run`): on every CPU three CPU
//! hogs at nice -5, 0 and 5 for a moment, then a pipe ping-pong pair; prints
//! each CPU's runtime split, then the statistics.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use super::params::{Param, num, MAX_MS};
use crate::cmdline::Workload;
use mech::thread::Spawn;

/// What `workload=demo` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[num("ms", 1, MAX_MS, 300, "how long the hogs run on each CPU (ms)")];

pub fn run(w: &Workload) -> bool {
    let ms = w.num("ms");
    let cpus = super::cpus();
    mech::kprintln!("demo: three hogs at nice -5, 0 and 5 on each of {} CPUs for {} ms", cpus.len(), ms);
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for &cpu in &cpus {
        for (name, nice) in [("hog-5", -5), ("hog0", 0), ("hog+5", 5)] {
            let s = stop.clone();
            tasks.extend(super::spawn(Spawn::new(name).nice(nice).pin(cpu), move || super::hog(&s)));
        }
    }
    mech::thread::sleep_ns(ms * 1_000_000);
    stop.store(true, Ordering::Relaxed);
    for t in &tasks {
        mech::thread::join(t);
    }
    for &cpu in &cpus {
        let mine: Vec<_> = tasks.iter().filter(|t| t.affinity.load().contains(cpu)).collect();
        let total: u64 = mine.iter().map(|t| t.stats.sum_exec_runtime.load(Ordering::Relaxed)).sum();
        let wsum: u64 = mine.iter().map(|t| mech::task::nice_weight(t.nice_value())).sum();
        let mut line = alloc::string::String::new();
        for t in &mine {
            let r = t.stats.sum_exec_runtime.load(Ordering::Relaxed);
            let w = mech::task::nice_weight(t.nice_value());
            use core::fmt::Write;
            let _ = write!(
                line,
                "  {} {:>3}.{}% (expected {}.{}%)",
                t.name,
                r * 100 / total.max(1),
                r * 1000 / total.max(1) % 10,
                w * 100 / wsum.max(1),
                w * 1000 / wsum.max(1) % 10
            );
        }
        mech::kprintln!("CPU {}:{}", cpu, line);
    }
    let mut pipe = Workload::with_defaults(super::spec("pipe").expect("pipe is declared"));
    pipe.params.push((alloc::string::String::from("rounds"), alloc::string::String::from("2000")));
    super::pipe::run(&pipe)
}
