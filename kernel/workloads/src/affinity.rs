//! `workload=affinity[,ms=1000]`: one thread pinned to each CPU (sleeping,
//! yielding and spinning in turn), plus a hog whose affinity is changed
//! while it runs. Prints each thread's allowed CPUs and the CPUs it ran on.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use sched::cpumask::CpuMask;

use super::params::{Param, num, MAX_MS};
use crate::cmdline::Workload;
use mech::thread::Spawn;

/// What `workload=affinity` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[num("ms", 1, MAX_MS, 1000, "how long the threads run (ms)")];

pub fn run(w: &Workload) -> bool {
    let ms = w.num("ms");
    let cpus = super::cpus();
    let stop = Arc::new(AtomicBool::new(false));
    let mut pinned = Vec::new();
    for &cpu in &cpus {
        let s = stop.clone();
        let t = super::spawn(Spawn::new("pinned").pin(cpu), move || {
            let mut i = 0u64;
            while !s.load(Ordering::Relaxed) {
                match i % 3 {
                    0 => mech::thread::sleep_ns(100_000),
                    1 => mech::schedule::yield_now(),
                    _ => mech::platform::burn_ns(200_000),
                }
                i += 1;
            }
        });
        pinned.extend(t);
    }
    // The mover starts on the first CPU and is moved to the last one.
    let first = cpus[0];
    let last = *cpus.last().unwrap_or(&first);
    let s = stop.clone();
    let mover = super::spawn(Spawn::new("mover").pin(first), move || super::hog(&s));
    mech::thread::sleep_ns(ms * 1_000_000 / 2);
    let mut moved_ok = true;
    if let Some(m) = &mover {
        if let Err(e) = mech::setattr::set_affinity(m, CpuMask::single(last)) {
            mech::kprintln!("affinity: {}", e);
            moved_ok = false;
        }
    }
    mech::thread::sleep_ns(ms * 1_000_000 / 2);
    // After the change the mover must be running on `last` only.
    let now_on = mover.as_ref().map(|m| m.cpu.load(Ordering::Relaxed));
    stop.store(true, Ordering::Relaxed);
    super::join_all(&pinned);
    if let Some(m) = &mover {
        mech::thread::join(m);
        mech::schedstat::print_task(m);
    }
    for t in pinned.iter().chain(mover.iter()) {
        mech::record!("affinity", "task={} id={} allowed={} ran_on={}", t.name, t.id, t.affinity.load(), t.ran_on());
    }
    mech::record!("affinity_move", "from={} to={} now_on={}", first, last, now_on.unwrap_or(usize::MAX));
    moved_ok && pinned.len() == cpus.len()
}
