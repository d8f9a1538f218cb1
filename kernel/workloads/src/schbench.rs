//! `workload=schbench[,threads=2][,workers=4][,runtime_ms=2000][,work_us=200][,sleep_us=100]`:
//! schbench's message/worker scheme. Each of `threads` message threads has
//! `workers` workers. A worker handles a request (sleeps `sleep_us`, then
//! does `work_us` of calibrated CPU work), queues itself on its message
//! thread, wakes it and sleeps. The message thread takes every queued worker
//! at once, stamps one "now" as their wake time and wakes them all.
//! Wakeup latency: the wake stamp to the worker running again. Request
//! latency: one request (sleep + work). Prints schbench's percentile report,
//! the histogram as `@fw hist` buckets (`samples`) and `@fw result` lines. Work is
//! calibrated at the start; `loops_per_us=N` fixes it instead. `pin_msg=1`
//! pins the message threads to CPU 0: every worker's wakeup then comes from
//! that one CPU, as in an interrupt-bound server (the 2005 wake-balance
//! debate's OLTP case). `jitter_pct=J` draws each request's work within
//! ±J% of `work_us` from the run's seed (`seed=`; 0: every request the same).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::crew::{name, Crew};
use super::samples::{pct, print_hist};
use super::params::{Param, wss_kb, num, MAX_MS};
use mech::platform::cpu_id;
use crate::cmdline::Workload;
use sched::cpumask::CpuMask;
use mech::rq;
use mech::lock::{level, IrqMutex};
use mech::sync::WaitQueue;

/// Loop iterations of `work` per microsecond: the `loops_per_us=` parameter,
/// or measured once per run (about 2 ms of work on the starting thread).
///
/// Each size is timed three times and the fastest counts: a single timing
/// that an interrupt or the host (a vCPU thread descheduled under TCG) held
/// up would otherwise end the search early, at a few thousand iterations
/// made to look like 2 ms, and the run would do a hundredth of its work.
pub(super) fn calibrate(w: &Workload) -> u64 {
    let fixed = w.num("loops_per_us");
    if fixed > 0 {
        return fixed;
    }
    let mut iters = 1000u64;
    loop {
        let ns = (0..3)
            .map(|_| {
                let t = rq::now_ns();
                work(iters);
                rq::now_ns() - t
            })
            .min()
            .unwrap_or(0);
        if ns >= 2_000_000 || iters >= 1 << 32 {
            return (iters * 1000 / ns.max(1)).max(1);
        }
        iters *= 2;
    }
}

/// A fixed amount of CPU work (the same instructions whatever the clock says).
/// One call of `work_done` for the whole amount: on a simulated CPU the step
/// is interruptible, so preemption still cuts it where the tick falls.
pub(super) fn work(iters: u64) {
    // A simulated CPU's time comes from `work_done` alone: the arithmetic is skipped there.
    if mech::platform::busy_loops_run() {
        let mut x: u64 = 0x1234_5678;
        for i in 0..iters {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i | 1);
            core::hint::black_box(x);
        }
    }
    mech::platform::work_done(iters * WORK_INSTRUCTIONS_PER_ITER);
}

/// Guest instructions of one iteration of [`work`] in the kernel's build:
/// `imul, lea, or, add, mov` (the `black_box` store), `mov, cmp, jne`
/// (docs/SIMULATOR.md, "Workloads").
pub(super) const WORK_INSTRUCTIONS_PER_ITER: u64 = 8;

/// schbench's percentile block for sorted microsecond samples.
pub(super) fn print_percentiles(title: &str, runtime_s: u64, us: &[u64]) {
    mech::kprintln!("{} percentiles (usec) runtime {} (s) ({} total samples)", title, runtime_s, us.len());
    for (p, star) in [(500, ' '), (900, ' '), (990, '*'), (999, ' ')] {
        let v = pct(us, p);
        let n = us.iter().filter(|&&x| x <= v).count();
        mech::kprintln!("\t{} {:>2}.{}th: {:<10} ({} samples)", star, p / 10, p % 10, v, n);
    }
    mech::kprintln!("\t  min={}, max={}", us.first().copied().unwrap_or(0), us.last().copied().unwrap_or(0));
}

struct Worker {
    woken: AtomicBool,
    wake_ts: AtomicU64,
    wq: WaitQueue,
}

struct MsgThread {
    queued: IrqMutex<level::Workload, Vec<usize>>,
    wq: WaitQueue,
    exited: AtomicUsize,
}

/// What `workload=schbench` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("threads", 1, 64, 2, "message threads"),
    num("workers", 1, 256, 4, "workers per message thread"),
    num("runtime_ms", 1, MAX_MS, 2000, "how long the workers run (ms)"),
    num("work_us", 0, 1_000_000, 200, "calibrated CPU work per request (us)"),
    num("sleep_us", 0, 1_000_000, 100, "sleep per request (us)"),
    num("pin_msg", 0, 1, 0, "1: pin the message threads to CPU 0, so every worker wakeup comes from one CPU (an interrupt-bound mix)"),
    num("jitter_pct", 0, 99, 0, "each request's work is drawn within +-this % of work_us (from seed=)"),
    // schbench's own `-F` (cache footprint) default.
    wss_kb(256),
];

pub fn run(w: &Workload) -> bool {
    let m = w.num("threads") as usize;
    let t = w.num("workers") as usize;
    let runtime_ms = w.num("runtime_ms");
    let work_us = w.num("work_us");
    let sleep_us = w.num("sleep_us");
    let pin_msg = w.num("pin_msg") == 1;
    let jitter = w.num("jitter_pct");
    // A wakeup sample needs a request (sleep, then work) to end and its
    // worker to be woken before the run ends; a request as long as the run
    // cannot give one, and the workers would only finish theirs past the end.
    if sleep_us + work_us >= runtime_ms * 1000 {
        crate::cmdline::report_problem(format_args!(
            "workload=schbench: sleep_us={} + work_us={} is not shorter than runtime_ms={}: no request can end and be woken within the run, so there would be no sample; the workload does not run",
            sleep_us, work_us, runtime_ms
        ));
        return false;
    }
    // message threads and their workers
    if !super::budget::fits(w, &["threads", "workers"], (m * (t + 1)) as u64, 0) {
        return false;
    }
    let per_us = calibrate(w);
    // One stream per worker: with jitter_pct=0 nothing is drawn.
    let wake_lat = Arc::new(IrqMutex::<level::Workload, _>::new(Vec::new()));
    let req_lat = Arc::new(IrqMutex::<level::Workload, _>::new(Vec::new()));
    let mut crew = Crew::new(w);
    let mut msgs = Vec::new();
    for mi in 0..m {
        let workers: Arc<Vec<Worker>> = Arc::new(
            (0..t).map(|_| Worker { woken: AtomicBool::new(false), wake_ts: AtomicU64::new(0), wq: WaitQueue::new() }).collect(),
        );
        let msg = Arc::new(MsgThread { queued: IrqMutex::new(Vec::new()), wq: WaitQueue::new(), exited: AtomicUsize::new(0) });
        for wi in 0..t {
            let (workers, msg, stop, wl, rl) = (workers.clone(), msg.clone(), crew.stop_flag(), wake_lat.clone(), req_lat.clone());
            let mut rng = w.rng(0x5cb + (mi * t + wi) as u64);
            crew.spawn_ungated(&name("sb-worker", mi, Some(wi)), crew.len(), move || {
                let me = &workers[wi];
                let (mut wv, mut rv) = (Vec::new(), Vec::new());
                while !stop.load(Ordering::Acquire) {
                    let t0 = rq::now_ns();
                    if sleep_us > 0 {
                        mech::thread::sleep_ns(sleep_us * 1000);
                    }
                    work(rng.jittered(work_us, jitter) * per_us);
                    rv.push((rq::now_ns() - t0) / 1000);
                    me.woken.store(false, Ordering::Relaxed);
                    msg.queued.lock().push(wi);
                    msg.wq.wake_one();
                    me.wq.wait_until(|| me.woken.load(Ordering::Acquire));
                    if !stop.load(Ordering::Acquire) {
                        wv.push(rq::now_ns().saturating_sub(me.wake_ts.load(Ordering::Relaxed)) / 1000);
                    }
                }
                wl.lock().extend(wv);
                rl.lock().extend(rv);
                msg.exited.fetch_add(1, Ordering::AcqRel);
                msg.wq.wake_one();
            });
        }
        let (msg2, stop2) = (msg.clone(), crew.stop_flag());
        crew.spawn_ungated(&name("sb-msg", mi, None), crew.len(), move || {
            if pin_msg {
                // Ken Chen's 2005 OLTP case: the wakeups come from the CPU that takes the interrupts.
                let me = mech::task::current();
                let _ = mech::setattr::set_affinity(&me, CpuMask::single(0));
                while cpu_id() != 0 {
                    mech::schedule::yield_now();
                }
            }
            loop {
                msg2.wq.wait_until(|| !msg2.queued.lock().is_empty() || msg2.exited.load(Ordering::Acquire) == t);
                let batch = core::mem::take(&mut *msg2.queued.lock());
                let now = rq::now_ns();
                for wi in batch {
                    let wk = &workers[wi];
                    wk.wake_ts.store(now, Ordering::Relaxed);
                    wk.woken.store(true, Ordering::Release);
                    wk.wq.wake_one();
                }
                if msg2.exited.load(Ordering::Acquire) == t && stop2.load(Ordering::Acquire) {
                    break;
                }
            }
        });
        msgs.push(msg);
    }
    // The threads run from their spawn; the crew has no gated thread, so the
    // start is now.
    let Some(start) = crew.start() else {
        mech::kprintln!("schbench: only {} of {} threads started", crew.len(), m * (t + 1));
        return false;
    };
    mech::thread::sleep_ns(runtime_ms * 1_000_000);
    crew.stop();
    for msg in &msgs {
        msg.wq.wake_one();
    }
    crew.join();
    let ns = rq::now_ns() - start;
    let mut wv = core::mem::take(&mut *wake_lat.lock());
    let mut rv = core::mem::take(&mut *req_lat.lock());
    wv.sort_unstable();
    rv.sort_unstable();
    let secs = (ns / 1_000_000_000).max(1);
    let rps_milli = (rv.len() as u128 * 1_000_000_000_000 / ns.max(1) as u128) as u64;
    print_percentiles("Wakeup Latencies", secs, &wv);
    print_percentiles("Request Latencies", secs, &rv);
    mech::kprintln!("average rps: {}.{:02}", rps_milli / 1000, rps_milli % 1000 / 10);
    print_hist("schbench", "wakeup", wv.iter().copied());
    print_hist("schbench", "request", rv.iter().copied());
    super::result("schbench", "wakeup_p99", pct(&wv, 990) * 1000, "us", false);
    super::result("schbench", "request_p99", pct(&rv, 990) * 1000, "us", false);
    super::result("schbench", "rps", rps_milli, "req/s", true);
    mech::kprintln!("schbench: {} message threads, {} workers each, work {} us ({} loops/us), sleep {} us", m, t, work_us, per_us, sleep_us);
    if rv.is_empty() || wv.is_empty() {
        // Possible when the workers share few CPUs: each request then takes
        // several times its own work_us.
        mech::kprintln!(
            "schbench: no {} sample: no request ended{} within the {} ms run (each needs {} us of sleep and work, {} workers sharing {} CPUs); give a longer runtime_ms or a shorter work_us",
            if rv.is_empty() { "request" } else { "wakeup" },
            if rv.is_empty() { "" } else { " and was woken" },
            runtime_ms,
            sleep_us + work_us,
            m * t,
            super::cpus().len()
        );
        return false;
    }
    true
}
