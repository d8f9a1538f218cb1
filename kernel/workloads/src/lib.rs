//! Kernel-thread programs the kernel runs after boot (`workload=`), each
//! printing machine-readable results that the QEMU scenarios and benchmarks
//! read, and the command line that names them (`cmdline`). `demo` is what
//! `cargo xtask run` shows by default.
//!
//! A crate over the mechanism (`mech`) and the policy (`sched`) only, so that
//! any platform bound with `mech::set_platform!` runs the same workload code
//! with the same parameters and prints the same `@fw` lines: the kernel on
//! x86_64, the simulator on a modelled machine. What a workload needs from
//! the machine comes through `mech::platform`: this CPU's id, the clock, the
//! console, stack and heap use, and `burn_ns`, the one way a workload spins.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

mod affinity;
mod budget;
pub mod cmdline;
mod crew;
mod demo;
mod ebizzy;
mod fserver;
mod hackbench;
mod idleperiods;
mod latency;
mod oltp;
mod overflow;
pub mod params;
mod pipe;
mod pipes;
mod prodcons;
mod regs;
mod renice;
mod samples;
mod schbench;
mod shares;
mod spread;
mod utilest;
mod storm;
mod tbench;
mod torture;
mod wakeplace;

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use cmdline::Workload;
use params::{Spec, CALIBRATION, SPREAD};
use mech::rq;
use mech::task::Task;
use mech::thread::{self, Spawn};

/// Every workload `workload=` can name, with its parameters.
pub const SPECS: &[Spec] = &[
    Spec { name: "demo", about: "hogs at three nice levels on every CPU, then a pipe ping-pong", params: &[demo::PARAMS] },
    Spec { name: "shares", about: "three hogs at nice 0, 5, -5 on one CPU: runtime against weight", params: &[shares::PARAMS] },
    Spec { name: "storm", about: "sleeps, hand-offs, ping-pong and a shared mutex; counts lost wakeups", params: &[storm::PARAMS] },
    Spec { name: "latency", about: "a periodic sleeper beside hogs: wakeup latency", params: &[latency::PARAMS] },
    Spec { name: "affinity", about: "pinned threads and a hog whose affinity changes", params: &[affinity::PARAMS] },
    Spec { name: "pipe", about: "perf bench sched pipe: two threads ping-pong", params: &[pipe::PARAMS] },
    Spec { name: "yield", about: "two threads on one CPU yield to each other", params: &[pipe::YIELD_PARAMS] },
    Spec { name: "regs", about: "two threads on one CPU yield with sentinels in the callee-saved registers: a switch that loses one", params: &[regs::PARAMS] },
    Spec { name: "overflow", about: "a thread overflows its stack into the guard page", params: &[] },
    Spec { name: "hackbench", about: "perf bench sched messaging --pipe --thread", params: &[hackbench::PARAMS, SPREAD] },
    Spec { name: "schbench", about: "message threads and workers: wakeup and request latency", params: &[schbench::PARAMS, CALIBRATION, SPREAD] },
    Spec { name: "ebizzy", about: "record searches in copied chunks: records/s", params: &[ebizzy::PARAMS, SPREAD] },
    Spec { name: "tbench", about: "client/server pairs over pipes: MB/s", params: &[tbench::PARAMS, CALIBRATION, SPREAD] },
    Spec { name: "fserver", about: "short bursts and short sleeps: ops/s and burst latency", params: &[fserver::PARAMS, CALIBRATION, SPREAD] },
    Spec { name: "spread", about: "hogs started on one CPU: how balancing spreads them", params: &[spread::PARAMS] },
    Spec { name: "prodcons", about: "producer/consumer pairs with short idle periods: newidle", params: &[prodcons::PARAMS] },
    Spec { name: "idleperiods", about: "work and seeded sleeps, mostly short, sometimes long: avg_idle's idle periods", params: &[idleperiods::PARAMS, CALIBRATION, SPREAD] },
    Spec { name: "pipes", about: "ping-pong pairs free to move: wake_affine", params: &[pipes::PARAMS] },
    Spec { name: "oltp", about: "processes woken by I/O completions on one CPU: wake balancing against interrupt binding", params: &[oltp::PARAMS, CALIBRATION, SPREAD] },
    Spec { name: "wakeplace", about: "one wakee woken from a pinned waker beside pinned hogs: where placement puts it", params: &[wakeplace::PARAMS] },
    Spec { name: "renice", about: "a hog renices a waiting one past its protected slice: time to the switch", params: &[renice::PARAMS] },
    Spec { name: "utilest", about: "a task woken on a small CPU with its util_avg decayed and its util_est kept: misfit by util_est", params: &[utilest::PARAMS] },
    Spec { name: "torture", about: "every thread operation at random from a seed, on every CPU; accounts for every wait, byte and ns", params: &[torture::PARAMS] },
    Spec { name: "help", about: "lists these workloads and their parameters", params: &[] },
];

/// The online CPUs of bit mask `bits` (parameter `key`); a bit naming no
/// online CPU is reported.
fn cpu_mask(w: &Workload, key: &str, bits: u64, online: &sched::cpumask::CpuMask) -> sched::cpumask::CpuMask {
    let mut m = sched::cpumask::CpuMask::empty();
    for cpu in 0..64usize.min(mech::MAX_CPUS) {
        if bits & (1 << cpu) != 0 {
            if online.contains(cpu) {
                m.set(cpu);
            } else {
                crate::cmdline::report_problem(format_args!(
                    "workload={}: {}={:#x} names CPU {}, which is not online; ignored",
                    w.name, key, bits, cpu
                ));
            }
        }
    }
    m
}

/// The declaration of workload `name`.
pub fn spec(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

/// Runs `w`; returns whether its own checks passed.
pub fn run(w: &Workload) -> bool {
    mech::record!("workload", "name={} cpus={}", w.name, rq::online_mask().weight());
    let before = mech::schedstat::snapshot();
    let ok = match w.name.as_str() {
        "shares" => shares::run(w),
        "storm" => storm::run(w),
        "latency" => latency::run(w),
        "affinity" => affinity::run(w),
        "pipe" => pipe::run(w),
        "yield" => pipe::run_yield(w),
        "regs" => regs::run(w),
        "overflow" => overflow::run(w),
        "hackbench" => hackbench::run(w),
        "schbench" => schbench::run(w),
        "ebizzy" => ebizzy::run(w),
        "tbench" => tbench::run(w),
        "fserver" => fserver::run(w),
        "spread" => spread::run(w),
        "prodcons" => prodcons::run(w),
        "idleperiods" => idleperiods::run(w),
        "pipes" => pipes::run(w),
        "oltp" => oltp::run(w),
        "wakeplace" => wakeplace::run(w),
        "torture" => torture::run(w),
        "utilest" => utilest::run(w),
        "renice" => renice::run(w),
        "help" => {
            params::print_help(SPECS);
            true
        }
        _ => demo::run(w),
    };
    mech::schedstat::print_delta(&before);
    mech::record!("workload_done", "name={} ok={}", w.name, ok as u8);
    ok
}

/// Prints one benchmark result: `@fw result workload=W metric=M value=V unit=U better=lower|higher`.
/// `value` is printed with three decimals, from thousandths.
pub fn result(workload: &str, metric: &str, value_milli: u64, unit: &str, higher_is_better: bool) {
    mech::record!(
        "result",
        "workload={} metric={} value={}.{:03} unit={} better={}",
        workload,
        metric,
        value_milli / 1000,
        value_milli % 1000,
        unit,
        if higher_is_better { "higher" } else { "lower" }
    );
}

/// Spawns a thread or reports why not and returns None.
pub fn spawn(opts: Spawn, f: impl FnOnce() + Send + 'static) -> Option<Arc<Task>> {
    let name = opts.name.clone();
    match thread::spawn(opts, f) {
        Ok(t) => Some(t),
        Err(e) => {
            mech::kprintln!("workload: cannot start thread {}: {}", name, e);
            None
        }
    }
}

/// Guest instructions of one batch of [`hog`] (1000 LCG steps): the kernel's
/// build unrolls them by 8 into 125 rounds of `imul, add, add, cmp, jne`,
/// plus the flag's load and test (docs/SIMULATOR.md, "Workloads").
pub const HOG_BATCH_INSTRUCTIONS: u64 = 125 * 5 + 6;

/// Burns CPU until `stop` is set: arithmetic, not `mech::platform::burn_ns`.
/// A hog built on the x86 TSC loop made `-icount` boots 7 times slower in
/// host time (every `rdtsc` ends QEMU's translation block: `latency-smp1`
/// 10.8 s -> 77.4 s, the same guest figures), which the test run's budget
/// cannot take. Each batch is reported with `work_done` (free on x86), which
/// is how a simulated CPU's clock moves while the hog spins and how the task
/// that sets `stop` gets the CPU.
pub fn hog(stop: &AtomicBool) {
    let mut x: u64 = 1;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        }
        core::hint::black_box(x);
        mech::platform::work_done(HOG_BATCH_INSTRUCTIONS);
    }
}

/// Joins every task and prints its counters.
pub fn join_all(tasks: &[Arc<Task>]) {
    for t in tasks {
        thread::join(t);
    }
    for t in tasks {
        mech::schedstat::print_task(t);
    }
}

/// `threads=` of a workload whose threads work in pairs (`pairs`: what the
/// pairs are, for the message): an odd count is reported and the last
/// thread dropped.
pub(crate) fn even_threads(w: &Workload, pairs: &str) -> usize {
    let threads = w.num("threads") as usize;
    if threads % 2 == 1 {
        crate::cmdline::report_problem(format_args!(
            "workload={}: threads={} is odd (threads work in {}); using threads={}",
            w.name,
            threads,
            pairs,
            threads - 1
        ));
        return threads - 1;
    }
    threads
}

/// CPUs online, as a list.
pub fn cpus() -> Vec<usize> {
    rq::online_mask().iter().collect()
}

/// A small deterministic pseudo-random generator (xorshift64*), for workloads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    // Not `Iterator::next`: the generator never ends, so no `Option`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// `mean` ± `jitter_pct`%, uniformly (the mean itself at 0%, with no
    /// draw: a workload without jitter draws what it drew before).
    pub fn jittered(&mut self, mean: u64, jitter_pct: u64) -> u64 {
        let span = mean * jitter_pct / 100;
        if span == 0 {
            return mean;
        }
        mean - span + self.below(2 * span + 1)
    }
}
