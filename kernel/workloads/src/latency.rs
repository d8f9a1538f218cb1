//! `workload=latency[,cpu=N][,hogs=2][,period_us=3000][,samples=300][,slice_us=0][,wake=timer|pipe][,waker=0]`:
//! a periodic sleeper beside CPU hogs on the same CPU. Each wakeup's latency
//! is the time from the sleep's deadline to the moment the sleeper runs
//! again. With `wake=pipe` the sleeper sleeps on a pipe instead, and a
//! waker pinned on CPU `waker` sleeps `period_us`, then writes the time into
//! the pipe: each latency is from just before that write to the moment the
//! sleeper runs (a cross-CPU wakeup when `waker` is not `cpu`). `slice_us`
//! gives the sleeper a custom slice (Linux's `sched_attr.sched_runtime`,
//! clamped to 0.1-100 ms; 0 keeps the base slice): the request EEVDF places
//! it with, and with PREEMPT_SHORT the shorter slice that lets it preempt a
//! hog still inside its own.
//!
//! Prints `@fw latency` (nearest-rank percentiles, the slices, and how many wakeups waited
//! more than twice the sleeper's slice), the latencies as `@fw hist` buckets (kind `wakeup`,
//! whole microseconds) and `@fw result` lines: `wakeup_p50`, `wakeup_p99`, `wakeup_max` (us)
//! and `wakeup_over_2slice` (samples), all lower-is-better.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use super::params::{choice, num, Param, MAX_CPU};
use super::samples::{pct, print_hist};
use crate::cmdline::Workload;
use mech::rq;
use mech::lock::{level, IrqMutex};
use mech::sync::pipe::Pipe;
use mech::thread::Spawn;

/// What `workload=latency` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("cpu", 0, MAX_CPU, 1, "the CPU of the sleeper and the hogs (the default is the last CPU when CPU 1 is not online)"),
    num("hogs", 0, 64, 2, "CPU hogs beside the sleeper"),
    num("period_us", 1, 10_000_000, 3000, "the sleeper's period (us)"),
    num("samples", 1, 100_000, 300, "wakeups measured"),
    num("slice_us", 0, 100_000, 0, "the sleeper's custom slice (us; 0: the base slice; Linux clamps to 100-100000)"),
    choice("wake", &["timer", "pipe"], "what wakes the sleeper: its own timer, or a waker's write into a pipe"),
    num("waker", 0, MAX_CPU, 0, "with wake=pipe: the waker's CPU (pinned)"),
];

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let cpu = w.cpu("cpu", &cpus);
    let hogs = w.num("hogs") as usize;
    let period = w.num("period_us") * 1000;
    let samples = w.num("samples") as usize;
    let slice_ns = w.num("slice_us").saturating_mul(1000);
    let by_pipe = w.text("wake") == "pipe";
    // Asked for only with wake=pipe: a waker= without it is not reported.
    let waker_cpu = if by_pipe { Some(w.cpu("waker", &cpus)) } else { None };
    // the hogs and the sleeper; its samples
    if !super::budget::fits(w, &["hogs", "samples"], hogs as u64 + 1 + u64::from(by_pipe), (samples * core::mem::size_of::<u64>()) as u64) {
        return false;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..hogs {
        let s = stop.clone();
        tasks.extend(super::spawn(Spawn::new("hog").pin(cpu), move || super::hog(&s)));
    }
    let lat = Arc::new(IrqMutex::<level::Workload, _>::new(Vec::with_capacity(samples)));
    let l2 = lat.clone();
    let mut spec = Spawn::new("sleeper").pin(cpu);
    if slice_ns != 0 {
        spec = spec.slice_ns(slice_ns);
    }
    let pipe = Arc::new(Pipe::new(64));
    let p2 = pipe.clone();
    let sleeper = super::spawn(spec, move || {
        for _ in 0..samples {
            let late = if by_pipe {
                let mut sent = [0u8; 8];
                p2.read_exact(&mut sent);
                rq::now_ns().saturating_sub(u64::from_le_bytes(sent))
            } else {
                let deadline = rq::now_ns() + period;
                mech::thread::sleep_ns(period);
                rq::now_ns().saturating_sub(deadline)
            };
            l2.lock().push(late);
        }
    });
    let waker = match (waker_cpu, &sleeper) {
        (Some(on), Some(_)) => super::spawn(Spawn::new("waker").pin(on), move || {
            for _ in 0..samples {
                mech::thread::sleep_ns(period);
                pipe.write(&rq::now_ns().to_le_bytes(), false);
            }
        }),
        _ => None,
    };
    if let Some(s) = &sleeper {
        // A sleeper on a pipe without its waker would wait forever.
        if waker.is_some() || !by_pipe {
            mech::thread::join(s);
        }
        mech::schedstat::print_task(s);
    }
    if let Some(t) = &waker {
        mech::thread::join(t);
        mech::schedstat::print_task(t);
    }
    stop.store(true, Ordering::Relaxed);
    super::join_all(&tasks);
    let mut v = core::mem::take(&mut *lat.lock());
    v.sort_unstable();
    let slice = rq::lock(cpu).fair.tunables().base_slice();
    // The slice the policy gave the sleeper (its custom one, clamped).
    let sleeper_slice = sched::tunables::clamp_custom_slice(slice_ns).unwrap_or(slice);
    let (p50, p90, p99) = (pct(&v, 500), pct(&v, 900), pct(&v, 990));
    let max = v.last().copied().unwrap_or(0);
    // The tail a percentile hides when it is 1-2% of the samples: wakeups that waited more
    // than two of the sleeper's slices (with hz=1000 and a short slice, those that waited for
    // the tick).
    let over = v.iter().filter(|&&ns| ns > 2 * sleeper_slice).count() as u64;
    mech::record!(
        "latency",
        "cpu={} hogs={} samples={} p50_ns={} p90_ns={} p99_ns={} max_ns={} slice_ns={} sleeper_slice_ns={} over_2slice={} wake={}",
        cpu,
        hogs,
        v.len(),
        p50,
        p90,
        p99,
        max,
        slice,
        sleeper_slice,
        over,
        Wake(waker_cpu)
    );
    print_hist("latency", "wakeup", v.iter().map(|ns| ns / 1000));
    // In microseconds with three decimals: the nanoseconds are the thousandths.
    super::result("latency", "wakeup_p50", p50, "us", false);
    super::result("latency", "wakeup_p99", p99, "us", false);
    super::result("latency", "wakeup_max", max, "us", false);
    super::result("latency", "wakeup_over_2slice", over * 1000, "samples", false);
    v.len() == samples
}

/// What woke the sleeper, for the record: `timer`, or `pipe waker=N`.
struct Wake(Option<usize>);

impl core::fmt::Display for Wake {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            None => f.write_str("timer"),
            Some(cpu) => write!(f, "pipe waker={cpu}"),
        }
    }
}
