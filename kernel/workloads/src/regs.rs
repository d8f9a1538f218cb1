//! `workload=regs[,rounds=2000][,preemptions=20]`: checks that a voluntary
//! switch keeps what a C call must keep (rbx, rbp, r12-r15, the x87 control
//! word, MXCSR). Two threads on one CPU yield to each other, each yield with
//! those registers holding the thread's own sentinels
//! (`mech::schedule::yield_checking_registers`), in two phases:
//!
//! - `pair`: only the two, so each resumes from the frame it saved by the
//!   call (boot/isr.S `schedule_call`'s own return path), `rounds` each;
//! - `spinner`: beside a hog on the same CPU, which only the tick preempts,
//!   so a yielder is also resumed from the interrupt path (`restore_frame`);
//!   they go on until the hog has been preempted `preemptions` times (and
//!   `rounds` each);
//! - `cross` (two or more CPUs): a sleeper on the second CPU blocks with its
//!   sentinels loaded, `rounds` times, and a waker on the first wakes it
//!   once it has slept at least 20 µs, so that its CPU is idle: the wakeup goes
//!   through the reschedule IPI, whose handler switches from the idle task
//!   to the sleeper and resumes the frame the sleeper's `schedule_call`
//!   saved (`irq_resched`'s resume path). The record counts the second
//!   CPU's reschedule IPIs during the phase (`ipis=`).
//!
//! Prints `@fw regs phase=... checks= mismatches=` per phase and
//! `@fw regs_mismatch ... register=NAME` for each of the first mismatches.
//! A platform whose switch cannot lose registers (the simulator) checks
//! nothing and reports no mismatch.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::params::{num, Param};
use crate::cmdline::Workload;
use mech::task::Task;
use mech::thread::{self, Spawn};

/// What `workload=regs` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("rounds", 1, 10_000_000, 2000, "checked yields per thread and phase"),
    num("preemptions", 0, 100_000, 20, "tick preemptions of the hog in the spinner phase"),
];

/// Mismatches printed in full per phase (all are counted).
const PRINTED_MISMATCHES: u64 = 8;

/// The checks of one phase, shared by its threads.
#[derive(Default)]
struct Tally {
    checks: AtomicU64,
    mismatches: AtomicU64,
}

impl Tally {
    /// Counts one checked switch of `thread` in `phase` and its mismatch,
    /// printing the first few in full.
    fn note(&self, phase: &str, thread: &str, round: u64, mismatch: Option<mech::platform::RegisterMismatch>) {
        self.checks.fetch_add(1, Ordering::Relaxed);
        if let Some(m) = mismatch {
            if self.mismatches.fetch_add(1, Ordering::Relaxed) < PRINTED_MISMATCHES {
                mech::record!(
                    "regs_mismatch",
                    "phase={} thread={} round={} register={} expected={:#x} found={:#x}",
                    phase,
                    thread,
                    round,
                    m.register,
                    m.expected,
                    m.found
                );
            }
        }
    }
}

pub fn run(w: &Workload) -> bool {
    let rounds = w.num("rounds");
    let preemptions = w.num("preemptions");
    let cpu = super::cpus()[0];
    let pair = phase("pair", cpu, rounds, None);
    let stop = Arc::new(AtomicBool::new(false));
    let stop_hog = stop.clone();
    let Some(hog) = super::spawn(Spawn::new("regs-hog").pin(cpu), move || super::hog(&stop_hog)) else {
        return false;
    };
    let spinner = phase("spinner", cpu, rounds, Some((hog.clone(), preemptions)));
    stop.store(true, Ordering::Relaxed);
    thread::join(&hog);
    let hog_preemptions = hog.stats.nr_switches.load(Ordering::Relaxed);
    mech::record!(
        "regs",
        "phase=spinner cpu={} checks={} mismatches={} hog_preemptions={}",
        cpu,
        spinner.0,
        spinner.1,
        hog_preemptions
    );
    let cpus = super::cpus();
    let cross_ok = match cpus.get(1) {
        Some(&sleeper_cpu) => {
            let (checks, mismatches) = cross(cpus[0], sleeper_cpu, rounds);
            mismatches == 0 && checks >= rounds
        }
        None => true,
    };
    pair.1 == 0 && spinner.1 == 0 && pair.0 >= 2 * rounds && spinner.0 >= 2 * rounds && hog_preemptions >= preemptions && cross_ok
}

/// How long the waker lets the sleeper sleep before each wakeup: long enough
/// for its switch to the idle task to be over, even under `-icount`.
const CROSS_SLEEP_NS: u64 = 20_000;

/// The `cross` phase: a checking sleeper on `sleeper_cpu`, woken `rounds`
/// times from `waker_cpu` while its CPU is idle; returns (checks,
/// mismatches) and prints the phase's record.
fn cross(waker_cpu: usize, sleeper_cpu: usize, rounds: u64) -> (u64, u64) {
    let tally = Arc::new(Tally::default());
    // Rounds the sleeper has gone to sleep for (set with its state).
    let asleep = Arc::new(AtomicU64::new(0));
    let (tally_s, asleep_s) = (tally.clone(), asleep.clone());
    let ipis_before = mech::resched::ipi_stats(sleeper_cpu).0;
    let Some(sleeper) = super::spawn(Spawn::new("regs-sleeper").pin(sleeper_cpu), move || {
        let me = mech::task::current();
        for round in 0..rounds {
            mech::platform::without_interrupts(|| {
                me.set_state(mech::task::TaskState::Sleeping);
                asleep_s.store(round + 1, Ordering::Release);
            });
            let salt = (3 << 48) | round;
            tally_s.note("cross", "regs-sleeper", round, mech::schedule::schedule_checking_registers(salt));
        }
    }) else {
        return (0, 1);
    };
    let sleeper_w = sleeper.clone();
    let Some(waker) = super::spawn(Spawn::new("regs-waker").pin(waker_cpu), move || {
        for round in 0..rounds {
            // Sleeps rather than spins (a simulated CPU's clock stands still
            // while it spins), until the sleeper has gone to sleep and slept
            // at least that long.
            loop {
                mech::thread::sleep_ns(CROSS_SLEEP_NS);
                if asleep.load(Ordering::Acquire) > round {
                    break;
                }
            }
            mech::wakeup::try_to_wake_up(&sleeper_w, sched::WakeFlags::NONE);
        }
    }) else {
        return (0, 1);
    };
    thread::join(&waker);
    thread::join(&sleeper);
    let ipis = mech::resched::ipi_stats(sleeper_cpu).0 - ipis_before;
    let checks = tally.checks.load(Ordering::Relaxed);
    let mismatches = tally.mismatches.load(Ordering::Relaxed);
    mech::record!("regs", "phase=cross cpu={} checks={} mismatches={} ipis={}", sleeper_cpu, checks, mismatches, ipis);
    (checks, mismatches)
}

/// Runs two checking yielders on `cpu`, `rounds` yields each and, with a
/// hog, until the hog has been switched out that many times; returns
/// (checks, mismatches). Prints the phase's record unless it has a hog (the
/// caller prints it with the hog's count).
fn phase(name: &'static str, cpu: usize, rounds: u64, hog: Option<(Arc<Task>, u64)>) -> (u64, u64) {
    let tally = Arc::new(Tally::default());
    let mut threads = Vec::new();
    for index in 0..2u64 {
        let tally = tally.clone();
        let hog = hog.clone();
        let thread_name = if index == 0 { "regs-a" } else { "regs-b" };
        let Some(t) = super::spawn(Spawn::new(thread_name).pin(cpu), move || {
            let mut round = 0u64;
            loop {
                let enough_preemptions = match &hog {
                    Some((h, wanted)) => h.stats.nr_switches.load(Ordering::Relaxed) >= *wanted,
                    None => true,
                };
                if round >= rounds && enough_preemptions {
                    break;
                }
                // Each thread's own sentinels, new each round.
                let salt = ((index + 1) << 48) | round;
                tally.note(name, thread_name, round, mech::schedule::yield_checking_registers(salt));
                round += 1;
            }
        }) else {
            return (0, 1);
        };
        threads.push(t);
    }
    for t in &threads {
        thread::join(t);
    }
    let checks = tally.checks.load(Ordering::Relaxed);
    let mismatches = tally.mismatches.load(Ordering::Relaxed);
    if hog.is_none() {
        mech::record!("regs", "phase={} cpu={} checks={} mismatches={}", name, cpu, checks, mismatches);
    }
    (checks, mismatches)
}
