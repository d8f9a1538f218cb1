//! The threads of one benchmark run (ebizzy, fserver, hackbench, schbench,
//! tbench), started together: a [`Crew`] owns the start [`Gate`], the stop
//! flag and the spawned tasks. Also the thread names ([`name`]) and the
//! `spread=0|1` placement ([`place`]) every benchmark workload shares.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::cmdline::Workload;
use mech::rq;
use mech::sync::{Completion, Semaphore};
use mech::task::Task;
use mech::thread::Spawn;

/// What every thread shares: the ready count and the start signal.
pub(super) struct Gate {
    ready: Semaphore,
    start: Completion,
}

impl Gate {
    pub(super) fn new() -> Arc<Gate> {
        Arc::new(Gate { ready: Semaphore::new(0), start: Completion::new() })
    }
    /// Called by each thread: says it is ready and waits for the start.
    pub(super) fn arrive(&self) {
        self.ready.up();
        self.start.wait();
    }
    /// Waits for `n` threads to be ready, then starts them; returns the start time.
    pub(super) fn open(&self, n: usize) -> u64 {
        for _ in 0..n {
            self.ready.down();
        }
        let t = rq::now_ns();
        self.start.complete_all();
        t
    }
}

/// A thread name `prefix-a` or `prefix-a-b` (without `format!`, whose
/// prebuilt code needs an unwinder the kernel does not link).
pub(super) fn name(prefix: &str, a: usize, b: Option<usize>) -> String {
    use core::fmt::Write;
    let mut s = String::from(prefix);
    let _ = write!(s, "-{}", a);
    if let Some(b) = b {
        let _ = write!(s, "-{}", b);
    }
    s
}

/// Where thread `i` starts: with `spread=0` (the default) wherever the
/// kernel's fork balancing puts it; with `spread=1` round-robin over the
/// online CPUs, not pinned (how the figures in docs/BENCHMARKS.md were taken,
/// before the kernel balanced forks).
pub(super) fn place(opts: Spawn, w: &Workload, i: usize) -> Spawn {
    let cpus = super::cpus();
    if w.num("spread") == 0 || cpus.is_empty() {
        return opts;
    }
    opts.on_cpu(cpus[i % cpus.len()])
}

/// Where [`Crew::run_for`] stops the clock.
pub(super) enum Measured {
    /// When the stop flag is raised (the threads' last rounds are not counted).
    UntilStop,
    /// When the last thread has been joined.
    UntilJoined,
}

/// The threads of one run. Each is spawned at once (a failed spawn is
/// reported by [`super::spawn`] and remembered); gated threads wait at the
/// gate until [`Crew::start`] opens it; the threads' loops watch the stop
/// flag ([`Crew::stop_flag`]).
pub(super) struct Crew<'w> {
    w: &'w Workload,
    gate: Arc<Gate>,
    stop: Arc<AtomicBool>,
    tasks: Vec<Arc<Task>>,
    /// Threads spawned that wait at the gate.
    gated: usize,
    /// Some thread could not be spawned.
    failed: bool,
}

impl<'w> Crew<'w> {
    pub(super) fn new(w: &'w Workload) -> Crew<'w> {
        Crew { w, gate: Gate::new(), stop: Arc::new(AtomicBool::new(false)), tasks: Vec::new(), gated: 0, failed: false }
    }

    /// The flag the threads' loops watch; raised by [`Crew::stop`].
    pub(super) fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Threads spawned so far.
    pub(super) fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Spawns thread `name`, placed as thread `slot` (see [`place`]): it
    /// waits at the gate, then runs `body`.
    pub(super) fn spawn(&mut self, name: &str, slot: usize, body: impl FnOnce() + Send + 'static) {
        let gate = self.gate.clone();
        if self.push(name, slot, move || {
            gate.arrive();
            body();
        }) {
            self.gated += 1;
        }
    }

    /// Spawns thread `name`, placed as thread `slot`, running `body` at once
    /// (not waiting at the gate).
    pub(super) fn spawn_ungated(&mut self, name: &str, slot: usize, body: impl FnOnce() + Send + 'static) {
        self.push(name, slot, body);
    }

    fn push(&mut self, name: &str, slot: usize, body: impl FnOnce() + Send + 'static) -> bool {
        // Every crew's workload takes `wss_kb=` (`params::wss_kb`).
        let wss = self.w.num("wss_kb") as u32;
        let body = move || {
            mech::platform::set_working_set(wss);
            body();
        };
        match super::spawn(place(Spawn::new(name), self.w, slot), body) {
            Some(t) => {
                self.tasks.push(t);
                true
            }
            None => {
                self.failed = true;
                false
            }
        }
    }

    /// Waits until every gated thread is at the gate, opens it and returns
    /// the start time. If some thread could not be spawned, raises the stop
    /// flag instead (the gate stays shut) and returns None.
    pub(super) fn start(&self) -> Option<u64> {
        if self.failed {
            self.stop();
            return None;
        }
        Some(self.gate.open(self.gated))
    }

    /// Raises the stop flag.
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Waits for every thread to finish.
    pub(super) fn join(self) {
        for t in &self.tasks {
            mech::thread::join(t);
        }
    }

    /// Starts the crew, lets it run for `ms`, raises the stop flag and joins
    /// every thread. Returns the nanoseconds from the start to the stop or
    /// to the last join (`measured`), or None when a thread could not be
    /// spawned (see [`Crew::start`]).
    pub(super) fn run_for(self, ms: u64, measured: Measured) -> Option<u64> {
        let start = self.start()?;
        mech::thread::sleep_ns(ms * 1_000_000);
        self.stop();
        Some(match measured {
            Measured::UntilStop => {
                let ns = rq::now_ns() - start;
                self.join();
                ns
            }
            Measured::UntilJoined => {
                self.join();
                rq::now_ns() - start
            }
        })
    }
}
