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
use crate::Rng;
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

/// Runs the message threads and their workers for `runtime_ms` and prints
/// schbench's report; false when a thread could not start or no sample came.
pub fn run(w: &Workload) -> bool {
    let Some(p) = Params::read(w) else {
        return false;
    };
    // message threads and their workers
    if !super::budget::fits(w, &["threads", "workers"], (p.m * (p.t + 1)) as u64, 0) {
        return false;
    }
    let per_us = calibrate(w);
    let lat = Latencies::new();
    let mut crew = Crew::new(w);
    let msgs: Vec<Arc<MsgThread>> = (0..p.m).map(|mi| spawn_group(w, &mut crew, p, mi, per_us, &lat)).collect();
    // The threads run from their spawn; the crew has no gated thread, so the
    // start is now.
    let Some(start) = crew.start() else {
        mech::kprintln!("schbench: only {} of {} threads started", crew.len(), p.m * (p.t + 1));
        return false;
    };
    mech::thread::sleep_ns(p.runtime_ms * 1_000_000);
    crew.stop();
    for msg in &msgs {
        msg.wq.wake_one();
    }
    crew.join();
    let ns = rq::now_ns() - start;
    let (wv, rv) = lat.sorted();
    report(&p, per_us, ns, &wv, &rv)
}

/// The run's parameters (`m` and `t` as schbench's `-m` and `-t`).
#[derive(Clone, Copy)]
struct Params {
    /// Message threads.
    m: usize,
    /// Workers per message thread.
    t: usize,
    runtime_ms: u64,
    work_us: u64,
    sleep_us: u64,
    pin_msg: bool,
    jitter: u64,
}

impl Params {
    /// The parameters, or None (a `cmdline:` problem said) when no request could give a sample.
    fn read(w: &Workload) -> Option<Params> {
        let p = Params {
            m: w.num("threads") as usize,
            t: w.num("workers") as usize,
            runtime_ms: w.num("runtime_ms"),
            work_us: w.num("work_us"),
            sleep_us: w.num("sleep_us"),
            pin_msg: w.num("pin_msg") == 1,
            jitter: w.num("jitter_pct"),
        };
        // A wakeup sample needs a request (sleep, then work) to end and its
        // worker to be woken before the run ends; a request as long as the run
        // cannot give one, and the workers would only finish theirs past the end.
        if p.sleep_us + p.work_us >= p.runtime_ms * 1000 {
            crate::cmdline::report_problem(format_args!(
                "workload=schbench: sleep_us={} + work_us={} is not shorter than runtime_ms={}: no request can end and be woken within the run, so there would be no sample; the workload does not run",
                p.sleep_us, p.work_us, p.runtime_ms
            ));
            return None;
        }
        Some(p)
    }
}

/// Where the workers leave their samples when they exit (us).
struct Latencies {
    wake: Arc<IrqMutex<level::Workload, Vec<u64>>>,
    req: Arc<IrqMutex<level::Workload, Vec<u64>>>,
}

impl Latencies {
    /// No sample yet.
    fn new() -> Latencies {
        Latencies { wake: Arc::new(IrqMutex::new(Vec::new())), req: Arc::new(IrqMutex::new(Vec::new())) }
    }

    /// The wakeup and the request samples, each sorted.
    fn sorted(&self) -> (Vec<u64>, Vec<u64>) {
        let mut wv = core::mem::take(&mut *self.wake.lock());
        let mut rv = core::mem::take(&mut *self.req.lock());
        wv.sort_unstable();
        rv.sort_unstable();
        (wv, rv)
    }
}

/// Spawns message thread `mi`'s workers, then the message thread; returns it.
fn spawn_group(w: &Workload, crew: &mut Crew, p: Params, mi: usize, per_us: u64, lat: &Latencies) -> Arc<MsgThread> {
    let t = p.t;
    let workers: Arc<Vec<Worker>> =
        Arc::new((0..t).map(|_| Worker { woken: AtomicBool::new(false), wake_ts: AtomicU64::new(0), wq: WaitQueue::new() }).collect());
    let msg = Arc::new(MsgThread { queued: IrqMutex::new(Vec::new()), wq: WaitQueue::new(), exited: AtomicUsize::new(0) });
    for wi in 0..t {
        let (workers, msg, stop, wl, rl) = (workers.clone(), msg.clone(), crew.stop_flag(), lat.wake.clone(), lat.req.clone());
        // One stream per worker: with jitter_pct=0 nothing is drawn.
        let mut rng = w.rng(0x5cb + (mi * t + wi) as u64);
        crew.spawn_ungated(&name("sb-worker", mi, Some(wi)), crew.len(), move || {
            let (wv, rv) = serve_requests(&workers[wi], wi, &msg, &stop, &mut rng, p, per_us);
            wl.lock().extend(wv);
            rl.lock().extend(rv);
            msg.exited.fetch_add(1, Ordering::AcqRel);
            msg.wq.wake_one();
        });
    }
    let (msg2, stop2) = (msg.clone(), crew.stop_flag());
    crew.spawn_ungated(&name("sb-msg", mi, None), crew.len(), move || message_thread(&msg2, &workers, &stop2, t, p.pin_msg));
    msg
}

/// Worker `wi` (`me`) until the stop: a request (sleep, then work), then it
/// queues itself on its message thread, wakes it and sleeps until woken.
/// Returns its wakeup and request latencies (us).
fn serve_requests(me: &Worker, wi: usize, msg: &MsgThread, stop: &AtomicBool, rng: &mut Rng, p: Params, per_us: u64) -> (Vec<u64>, Vec<u64>) {
    let (mut wv, mut rv) = (Vec::new(), Vec::new());
    while !stop.load(Ordering::Acquire) {
        let t0 = rq::now_ns();
        if p.sleep_us > 0 {
            mech::thread::sleep_ns(p.sleep_us * 1000);
        }
        work(rng.jittered(p.work_us, p.jitter) * per_us);
        rv.push((rq::now_ns() - t0) / 1000);
        me.woken.store(false, Ordering::Relaxed);
        msg.queued.lock().push(wi);
        msg.wq.wake_one();
        me.wq.wait_until(|| me.woken.load(Ordering::Acquire));
        if !stop.load(Ordering::Acquire) {
            wv.push(rq::now_ns().saturating_sub(me.wake_ts.load(Ordering::Relaxed)) / 1000);
        }
    }
    (wv, rv)
}

/// A message thread: takes every queued worker at once, stamps one "now" as
/// their wake time and wakes them all, until its `t` workers have exited
/// after the stop.
fn message_thread(msg: &MsgThread, workers: &[Worker], stop: &AtomicBool, t: usize, pin_msg: bool) {
    if pin_msg {
        // Ken Chen's 2005 OLTP case: the wakeups come from the CPU that takes the interrupts.
        let me = mech::task::current();
        let _ = mech::setattr::set_affinity(&me, CpuMask::single(0));
        while cpu_id() != 0 {
            mech::schedule::yield_now();
        }
    }
    loop {
        msg.wq.wait_until(|| !msg.queued.lock().is_empty() || msg.exited.load(Ordering::Acquire) == t);
        let batch = core::mem::take(&mut *msg.queued.lock());
        let now = rq::now_ns();
        for wi in batch {
            let wk = &workers[wi];
            wk.wake_ts.store(now, Ordering::Relaxed);
            wk.woken.store(true, Ordering::Release);
            wk.wq.wake_one();
        }
        if msg.exited.load(Ordering::Acquire) == t && stop.load(Ordering::Acquire) {
            break;
        }
    }
}

/// schbench's report from the sorted samples of a run of `ns`: the percentiles,
/// the rate, the histograms and the `@fw result` lines; false when a kind of
/// sample is missing.
fn report(p: &Params, per_us: u64, ns: u64, wv: &[u64], rv: &[u64]) -> bool {
    let secs = (ns / 1_000_000_000).max(1);
    let rps_milli = (rv.len() as u128 * 1_000_000_000_000 / ns.max(1) as u128) as u64;
    print_percentiles("Wakeup Latencies", secs, wv);
    print_percentiles("Request Latencies", secs, rv);
    mech::kprintln!("average rps: {}.{:02}", rps_milli / 1000, rps_milli % 1000 / 10);
    print_hist("schbench", "wakeup", wv.iter().copied());
    print_hist("schbench", "request", rv.iter().copied());
    super::result("schbench", "wakeup_p99", pct(wv, 990) * 1000, "us", false);
    super::result("schbench", "request_p99", pct(rv, 990) * 1000, "us", false);
    super::result("schbench", "rps", rps_milli, "req/s", true);
    mech::kprintln!("schbench: {} message threads, {} workers each, work {} us ({} loops/us), sleep {} us", p.m, p.t, p.work_us, per_us, p.sleep_us);
    if rv.is_empty() || wv.is_empty() {
        // Possible when the workers share few CPUs: each request then takes
        // several times its own work_us.
        mech::kprintln!(
            "schbench: no {} sample: no request ended{} within the {} ms run (each needs {} us of sleep and work, {} workers sharing {} CPUs); give a longer runtime_ms or a shorter work_us",
            if rv.is_empty() { "request" } else { "wakeup" },
            if rv.is_empty() { "" } else { " and was woken" },
            p.runtime_ms,
            p.sleep_us + p.work_us,
            p.m * p.t,
            super::cpus().len()
        );
        return false;
    }
    true
}
