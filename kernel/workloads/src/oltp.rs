//! `workload=oltp[,procs=4 per CPU][,ms=1000][,work_us=150][,io_us=400][,jitter_pct=50][,irq_cpu=0]`:
//! an interrupt-bound OLTP-like mix, the setup of Ken Chen's 2005 complaint
//! about wake balancing ("SD_WAKE_AFFINE are not useful in conjunction with
//! interrupt binding"): database processes, more than the CPUs, each doing
//! a transaction step of `work_us` of calibrated work and then an I/O that
//! completes `io_us` later, and one completion thread pinned to `irq_cpu`
//! (nice -20, as the interrupt it stands for preempts whatever runs there)
//! that wakes each process when its I/O is done. Every wakeup of a process
//! therefore comes from `irq_cpu`: wake balancing decides whether it moves
//! there (an affine wakeup) or stays where its cache is. Work and I/O times
//! are drawn within ±`jitter_pct`% of their means from the run's seed
//! (`seed=`).
//!
//! Throughput: transaction steps per second (`@fw result metric=tps`).
//! `@fw oltp` counts the steps, the I/Os completed, the completion thread's
//! passes and the processes' migrations (between CPUs, by wakeups and by
//! the balancer: the cache affinity Ken Chen said wake balancing destroyed).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::crew::{name, Crew, Measured};
use super::params::{num, num_per_cpu, wss_kb, Param, MAX_CPU, MAX_MS, MAX_THREADS};
use crate::cmdline::Workload;
use mech::rq;
use mech::lock::{level, IrqMutex};
use mech::sync::Semaphore;
use mech::thread::Spawn;

/// What `workload=oltp` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num_per_cpu("procs", 1, MAX_THREADS - 1, 4, "database processes"),
    num("ms", 1, MAX_MS, 1000, "how long the processes run (ms)"),
    num("work_us", 1, 1_000_000, 150, "mean CPU work of one transaction step (us)"),
    num("io_us", 1, 10_000_000, 400, "mean time from an I/O's start to its completion (us)"),
    num("jitter_pct", 0, 99, 50, "each work and I/O time is drawn within +-this % of its mean"),
    num("irq_cpu", 0, MAX_CPU, 0, "the CPU that completes every I/O (wakes every process)"),
    wss_kb(64),
];

/// The I/Os in flight: (completion time, process).
struct Inflight {
    io: IrqMutex<level::Workload, Vec<(u64, usize)>>,
    /// Raised when an I/O is queued on an empty list (the completion thread
    /// sleeps on it when it has nothing in flight).
    kick: Semaphore,
}

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let procs = w.num("procs") as usize;
    let ms = w.num("ms");
    let (work_us, io_ns, jitter) = (w.num("work_us"), w.num("io_us") * 1000, w.num("jitter_pct"));
    let irq_cpu = w.cpu("irq_cpu", &cpus);
    if !super::budget::fits(w, &["procs"], procs as u64 + 1, 0) {
        return false;
    }
    let per_us = super::schbench::calibrate(w);
    let inflight = Arc::new(Inflight { io: IrqMutex::new(Vec::with_capacity(procs)), kick: Semaphore::new(0) });
    let wake: Arc<Vec<Semaphore>> = Arc::new((0..procs).map(|_| Semaphore::new(0)).collect());
    let (steps, completed, passes) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let migrations = Arc::new(AtomicU64::new(0));
    // Processes not yet finished: the completion thread ends after the last.
    let running = Arc::new(AtomicUsize::new(procs));
    let mut crew = Crew::new(w);
    for i in 0..procs {
        let (stop, inflight, wake, steps, running) = (crew.stop_flag(), inflight.clone(), wake.clone(), steps.clone(), running.clone());
        let migrations = migrations.clone();
        let mut rng = w.rng(0x01e9 + i as u64);
        crew.spawn(&name("db", i, None), i, move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                super::schbench::work(rng.jittered(work_us, jitter) * per_us);
                n += 1;
                let due = rq::now_ns() + rng.jittered(io_ns, jitter);
                let was_empty = {
                    let mut q = inflight.io.lock();
                    q.push((due, i));
                    q.len() == 1
                };
                if was_empty {
                    inflight.kick.up();
                }
                wake[i].down();
            }
            steps.fetch_add(n, Ordering::Relaxed);
            // What Ken Chen measured the cost of: the process moved between CPUs.
            migrations.fetch_add(mech::task::with_current(|t| t.stats.nr_migrations.load(Ordering::Relaxed)), Ordering::Relaxed);
            running.fetch_sub(1, Ordering::AcqRel);
            inflight.kick.up();
        });
    }
    // The completion thread: sleeps until the earliest I/O is due (or until one
    // is queued, or a process ends), then wakes every process whose I/O is
    // done; it ends once every process has.
    let irq = {
        let (inflight, wake, completed, passes, running) = (inflight.clone(), wake.clone(), completed.clone(), passes.clone(), running.clone());
        super::spawn(Spawn::new("io-irq").pin(irq_cpu).nice(0), move || loop {
            let next = inflight.io.lock().iter().map(|e| e.0).min();
            match next {
                None if running.load(Ordering::Acquire) == 0 => break,
                None => inflight.kick.down(),
                Some(t) => {
                    let now = rq::now_ns();
                    if t > now {
                        mech::thread::sleep_ns(t - now);
                    }
                    let now = rq::now_ns();
                    let due: Vec<usize> = {
                        let mut q = inflight.io.lock();
                        let ready: Vec<usize> = q.iter().filter(|e| e.0 <= now).map(|e| e.1).collect();
                        q.retain(|e| e.0 > now);
                        ready
                    };
                    passes.fetch_add(1, Ordering::Relaxed);
                    completed.fetch_add(due.len() as u64, Ordering::Relaxed);
                    for i in due {
                        wake[i].up();
                    }
                }
            }
        })
    };
    let Some(irq) = irq else {
        crew.stop();
        return false;
    };
    // The processes stop after their current step; their last I/Os still
    // complete before they are joined.
    let Some(ns) = crew.run_for(ms, Measured::UntilStop) else { return false };
    mech::thread::join(&irq);
    let n = steps.load(Ordering::Relaxed);
    let tps_milli = (n as u128 * 1_000_000_000_000 / ns.max(1) as u128) as u64;
    mech::kprintln!(
        "oltp: {} processes, work {} us, I/O {} us, completions on CPU {}, {} steps in {} ms",
        procs,
        work_us,
        io_ns / 1000,
        irq_cpu,
        n,
        ns / 1_000_000
    );
    mech::kprintln!("Throughput {}.{:03} steps/s", tps_milli / 1000, tps_milli % 1000);
    mech::record!(
        "oltp",
        "procs={} irq_cpu={} steps={} completed={} passes={} migrations={} ns={}",
        procs,
        irq_cpu,
        n,
        completed.load(Ordering::Relaxed),
        passes.load(Ordering::Relaxed),
        migrations.load(Ordering::Relaxed),
        ns
    );
    super::result("oltp", "tps", tps_milli, "steps/s", true);
    n > 0 && completed.load(Ordering::Relaxed) == n
}
