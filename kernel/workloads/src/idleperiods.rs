//! `workload=idleperiods[,threads=CPUs][,ms=1000][,work_us=50][,short_us=200][,long_us=1200][,long_pct=10][,jitter_pct=25]`:
//! threads whose sleeps make the idle periods of the 2013 avg_idle thread
//! (Jason Low's example: a CPU idle for about 200 us most of the time and
//! now and then for about 1.2 ms). Each thread loops: `work_us` of
//! calibrated work, then a sleep of `long_us` with probability `long_pct`%
//! and `short_us` otherwise; every work and sleep length is drawn within
//! ±`jitter_pct`% of its mean from the run's seed (`seed=`), so seeds are
//! samples of one setup. With one thread per CPU and `spread=1` each CPU's
//! idle periods are its thread's sleeps (the `@fw idle_period_hist` lines
//! the kernel prints afterwards measure them); more threads than CPUs make
//! runqueues that newidle balancing can pull from.
//!
//! Throughput: work items per second (`@fw result metric=ops_per_s`). Wakeup
//! delay: from the end of a sleep (the timer's deadline) to the thread
//! running again, what a CPU busy in a newidle balance when the sleep ends
//! costs (`@fw result metric=wakeup_p99`, us). `@fw idleperiods` gives the
//! counts: items, sleeps, long sleeps.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::crew::{name, Crew, Measured};
use super::params::{num, num_per_cpu, wss_kb, Param, MAX_MS, MAX_THREADS};
use crate::cmdline::Workload;
use mech::rq;
use mech::lock::{level, IrqMutex};

/// What `workload=idleperiods` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num_per_cpu("threads", 1, MAX_THREADS, 1, "threads, each working and sleeping"),
    num("ms", 1, MAX_MS, 1000, "how long the threads run (ms)"),
    num("work_us", 1, 1_000_000, 50, "mean work between two sleeps (us)"),
    num("short_us", 1, 10_000_000, 200, "mean short sleep (us): the usual idle period"),
    num("long_us", 1, 10_000_000, 1200, "mean long sleep (us): the occasional long idle period"),
    num("long_pct", 0, 100, 10, "percent of the sleeps that are long"),
    num("jitter_pct", 0, 99, 25, "each length is drawn within +-this % of its mean"),
    wss_kb(64),
];

pub fn run(w: &Workload) -> bool {
    let threads = w.num("threads") as usize;
    let ms = w.num("ms");
    let (work_us, short_ns, long_ns) = (w.num("work_us"), w.num("short_us") * 1000, w.num("long_us") * 1000);
    let (long_pct, jitter) = (w.num("long_pct"), w.num("jitter_pct"));
    if !super::budget::fits(w, &["threads"], threads as u64, 0) {
        return false;
    }
    let per_us = super::schbench::calibrate(w);
    let delays = Arc::new(IrqMutex::<level::Workload, _>::new(Vec::new()));
    let (items, sleeps, longs) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut crew = Crew::new(w);
    for i in 0..threads {
        let (stop, delays) = (crew.stop_flag(), delays.clone());
        let (items, sleeps, longs) = (items.clone(), sleeps.clone(), longs.clone());
        let mut rng = w.rng(0x1d1e + i as u64);
        crew.spawn(&name("idle", i, None), i, move || {
            let (mut d, mut n, mut s, mut l) = (Vec::new(), 0u64, 0u64, 0u64);
            while !stop.load(Ordering::Relaxed) {
                super::schbench::work(rng.jittered(work_us, jitter) * per_us);
                n += 1;
                let long = rng.below(100) < long_pct;
                let sleep = rng.jittered(if long { long_ns } else { short_ns }, jitter);
                let due = rq::now_ns() + sleep;
                mech::thread::sleep_ns(sleep);
                d.push(rq::now_ns().saturating_sub(due));
                s += 1;
                l += long as u64;
            }
            delays.lock().extend(d);
            items.fetch_add(n, Ordering::Relaxed);
            sleeps.fetch_add(s, Ordering::Relaxed);
            longs.fetch_add(l, Ordering::Relaxed);
        });
    }
    let Some(ns) = crew.run_for(ms, Measured::UntilStop) else { return false };
    let mut d = core::mem::take(&mut *delays.lock());
    d.sort_unstable();
    let n = items.load(Ordering::Relaxed);
    let ops_milli = (n as u128 * 1_000_000_000_000 / ns.max(1) as u128) as u64;
    let p = |m| super::samples::pct(&d, m);
    let mean_ns = d.iter().sum::<u64>() / (d.len() as u64).max(1);
    mech::kprintln!(
        "idleperiods: {} threads, work {} us, sleeps {} us / {} us ({}% long), {} items in {} ms",
        threads,
        work_us,
        short_ns / 1000,
        long_ns / 1000,
        long_pct,
        n,
        ns / 1_000_000
    );
    mech::kprintln!("Throughput {}.{:03} ops/s", ops_milli / 1000, ops_milli % 1000);
    mech::kprintln!("Wakeup delay (usec): mean {}  p50 {}  p99 {}  max {}", mean_ns / 1000, p(500) / 1000, p(990) / 1000, d.last().copied().unwrap_or(0) / 1000);
    mech::record!(
        "idleperiods",
        "threads={} items={} sleeps={} long_sleeps={} ns={} wakeup_delay_mean_ns={}",
        threads,
        n,
        sleeps.load(Ordering::Relaxed),
        longs.load(Ordering::Relaxed),
        ns,
        mean_ns
    );
    super::result("idleperiods", "ops_per_s", ops_milli, "ops/s", true);
    super::result("idleperiods", "wakeup_p99", p(990), "us", false);
    n > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_its_band_and_zero_draws_nothing() {
        let mut r = crate::Rng::new(3);
        let v: Vec<u64> = (0..1000).map(|_| r.jittered(200_000, 25)).collect();
        assert!(v.iter().all(|&x| (150_000..=250_000).contains(&x)));
        assert!(v.iter().any(|&x| x < 160_000) && v.iter().any(|&x| x > 240_000), "the band is used");
        let before = r.clone();
        assert_eq!(r.jittered(200_000, 0), 200_000);
        assert_eq!(r, before, "no jitter, no draw");
    }
}
