//! `workload=prodcons[,pairs=N][,ms=2000][,work_us=50][,short_us=100][,long_us=5000][,long_every=10][,hogs=0]`:
//! producer/consumer pairs over pipes with short idle periods and an
//! occasional long one: each producer does `work_us` of work per item, then
//! sleeps `short_us` (every `long_every`-th item `long_us`); each consumer
//! does `work_us` per item it reads. CPUs go idle often and briefly: the
//! pattern where `avg_idle` decides whether newidle balancing is worth it.
//! `hogs=N` adds N CPU hogs pinned to the last CPU, so that some runqueue is
//! always overloaded and the newidle gate is decided by `avg_idle` alone.
//! The kernel's `@fw newidle` lines afterwards count the attempts.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::params::{Param, num_per_cpu, num, MAX_MS, MAX_THREADS};
use crate::cmdline::Workload;
use mech::sync::pipe::Pipe;
use mech::thread::Spawn;

/// What `workload=prodcons` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num_per_cpu("pairs", 1, MAX_THREADS / 2, 1, "producer/consumer pairs"),
    num("ms", 1, MAX_MS, 2000, "how long the pairs run (ms)"),
    num("work_us", 0, 1_000_000, 50, "work per item (us)"),
    num("short_us", 0, 10_000_000, 100, "a producer's short sleep (us)"),
    num("long_us", 0, 10_000_000, 5000, "a producer's long sleep (us)"),
    num("long_every", 1, 1_000_000, 10, "every how many items the sleep is long"),
    num("hogs", 0, 64, 0, "CPU hogs pinned to the last CPU"),
];

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let pairs = w.num("pairs") as usize;
    let ms = w.num("ms");
    let work = w.num("work_us") * 1000;
    let short = w.num("short_us") * 1000;
    let long = w.num("long_us") * 1000;
    let every = w.num("long_every");
    if !super::budget::fits(w, &["pairs", "hogs"], (pairs * 2) as u64 + w.num("hogs"), 0) {
        return false;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let items = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    let last = *cpus.last().unwrap_or(&0);
    for _ in 0..w.num("hogs") {
        let s = stop.clone();
        tasks.extend(super::spawn(Spawn::new("hog").pin(last), move || super::hog(&s)));
    }
    for i in 0..pairs {
        let pipe = Arc::new(Pipe::new(64));
        let (p2, s1, s2, it) = (pipe.clone(), stop.clone(), stop.clone(), items.clone());
        let cpu = cpus[i % cpus.len()];
        tasks.extend(super::spawn(Spawn::new("producer").on_cpu(cpu), move || {
            let mut n = 0u64;
            while !s1.load(Ordering::Relaxed) {
                mech::platform::burn_ns(work);
                p2.write(&[1], false);
                n += 1;
                mech::thread::sleep_ns(if n.is_multiple_of(every) { long } else { short });
            }
            p2.close();
        }));
        tasks.extend(super::spawn(Spawn::new("consumer").on_cpu(cpus[(i + 1) % cpus.len()]), move || {
            let mut b = [0u8; 1];
            while pipe.read(&mut b) > 0 {
                mech::platform::burn_ns(work);
                it.fetch_add(1, Ordering::Relaxed);
            }
            let _ = &s2;
        }));
    }
    mech::thread::sleep_ns(ms * 1_000_000);
    stop.store(true, Ordering::Relaxed);
    super::join_all(&tasks);
    mech::record!("prodcons", "pairs={} ms={} items={}", pairs, ms, items.load(Ordering::Relaxed));
    tasks.len() == 2 * pairs + w.num("hogs") as usize
}
