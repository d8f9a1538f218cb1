//! `workload=fserver[,threads=2*CPUs][,ms=1000][,burst_us=50][,sleep_us=100][,io_pct=0][,io_us=2000]`:
//! an fserver-like mix of short CPU bursts and frequent short sleeps, the
//! pattern where CPUs go idle often and newidle balancing decides whether
//! a waiting thread runs soon. Each thread loops: sleep a random 0.5–1.5 ×
//! `sleep_us`, then do a random 0.5–1.5 × `burst_us` of calibrated work.
//! `io_pct=P` makes P% of the sleeps an I/O wait of a random 0.5–1.5 ×
//! `io_us` instead (AIM7's fserver mix waits on its disk now and then: the
//! long idle periods that push `avg_idle` up). The draws come from the
//! run's seed (`seed=`); `io_pct=0` draws exactly what it drew before the
//! I/O waits existed.
//! Burst latency: from the end of the sleep to the end of the burst
//! (waiting for a CPU plus the work). Prints ops/s, jobs/min and latency
//! percentiles; `@fw result` for ops/s and p99 burst latency.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::crew::{name, Crew, Measured};
use super::params::{Param, wss_kb, num_per_cpu, num, MAX_MS, MAX_THREADS};
use crate::cmdline::Workload;
use mech::rq;
use mech::lock::{level, IrqMutex};

/// What `workload=fserver` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num_per_cpu("threads", 1, MAX_THREADS, 2, "threads, each sleeping and bursting"),
    num("ms", 1, MAX_MS, 1000, "how long the threads run (ms)"),
    num("burst_us", 1, 1_000_000, 50, "mean CPU burst (us; each is 0.5-1.5 times it)"),
    num("sleep_us", 1, 1_000_000, 100, "mean sleep (us; each is 0.5-1.5 times it)"),
    num("io_pct", 0, 100, 0, "percent of the sleeps that are I/O waits of io_us instead"),
    num("io_us", 1, 10_000_000, 2000, "mean I/O wait (us; each is 0.5-1.5 times it)"),
    wss_kb(64),
];

pub fn run(w: &Workload) -> bool {
    let threads = w.num("threads") as usize;
    let ms = w.num("ms");
    let burst_us = w.num("burst_us");
    let sleep_us = w.num("sleep_us");
    let (io_pct, io_us) = (w.num("io_pct"), w.num("io_us"));
    if !super::budget::fits(w, &["threads"], threads as u64, 0) {
        return false;
    }
    let per_us = super::schbench::calibrate(w);
    let lats = Arc::new(IrqMutex::<level::Workload, _>::new(Vec::new()));
    let mut crew = Crew::new(w);
    for i in 0..threads {
        let (stop, lats) = (crew.stop_flag(), lats.clone());
        let mut rng = w.rng(0xf5 + i as u64);
        crew.spawn(&name("fs", i, None), i, move || {
            let mut v = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                // The I/O draw only when I/O waits are on: without them the
                // stream is the one fserver always drew.
                let mean = if io_pct > 0 && rng.below(100) < io_pct { io_us } else { sleep_us };
                let s = mean * 1000 / 2 + rng.below(mean * 1000);
                mech::thread::sleep_ns(s);
                let woke = rq::now_ns();
                let b = burst_us * per_us / 2 + rng.below(burst_us * per_us);
                super::schbench::work(b);
                v.push(rq::now_ns() - woke);
            }
            lats.lock().extend(v);
        });
    }
    let Some(ns) = crew.run_for(ms, Measured::UntilStop) else { return false };
    let mut v = core::mem::take(&mut *lats.lock());
    v.sort_unstable();
    let ops_milli = (v.len() as u128 * 1_000_000_000_000 / ns.max(1) as u128) as u64;
    let p = |m| super::samples::pct(&v, m);
    mech::kprintln!("fserver: {} threads, burst {} us, sleep {} us, {} ops in {} ms", threads, burst_us, sleep_us, v.len(), ns / 1_000_000);
    if io_pct > 0 {
        mech::kprintln!("fserver: {}% of the sleeps were I/O waits of {} us (mean)", io_pct, io_us);
    }
    mech::kprintln!("Throughput {}.{:03} ops/s  ({} jobs/min)", ops_milli / 1000, ops_milli % 1000, ops_milli * 60 / 1000);
    mech::kprintln!(
        "Burst latency (usec): p50 {}  p90 {}  p99 {}  max {}",
        p(500) / 1000,
        p(900) / 1000,
        p(990) / 1000,
        v.last().copied().unwrap_or(0) / 1000
    );
    super::result("fserver", "ops_per_s", ops_milli, "ops/s", true);
    super::result("fserver", "burst_p99", p(990), "us", false);
    !v.is_empty()
}
