//! `workload=torture[,ms=5000][,seed=1][,threads=N]`: worker threads on
//! every CPU choose, from a seeded generator, among spinning bursts, short
//! and long sleeps, a shared sleeping mutex, semaphore units, waking each
//! other (a per-thread doorbell), pipe traffic between writer/reader pairs,
//! spawning short-lived children (joined at once or later), renicing
//! themselves or a peer, custom slices, affinity changes (to one CPU or a
//! few, and back) and yields, until `ms` have passed. Then they wind down
//! and the workload accounts for everything (docs/CONSOLE.md, `torture`):
//! threads spawned = exited + alive, every wait begun ended, per primitive,
//! every pipe byte received once and in order, the mutex's count and the
//! semaphores' units intact, runtime conserved (task runtimes + idle +
//! pressure = CPUs x elapsed, within 1%), and no doorbell waiter left asleep
//! with its token posted. Effects, not only counters, are checked as the
//! threads go: a pinned thread must run where it is pinned, a sleep must
//! last its length, a renice or slice change must reach the entity.
//!
//! A failure prints the seed, the command line that reruns it, and each
//! failing or stuck thread's last operations (`@fw torture_thread`), and
//! the workload fails (the boot exits `failure`).
//!
//! No wait can last forever in a correct kernel: mutex and semaphore
//! holders only spin, sleep or yield while holding; a doorbell wait ends by
//! a token, by a timeout the coordinator gives it after `BELL_TIMEOUT_NS`,
//! or at the stop; a pipe writer waits only for its own reader, which never
//! waits for its writer except in reading; children only spin, sleep and
//! yield. So a thread still not done `GRACE_NS` after the stop is a lost
//! wakeup (or a hung CPU), reported as such.
//!
//! Here: the parameters and the coordinator (`run`: start, watch, stop,
//! close the books); `books` the accounts, doorbells and slots; `ops` the
//! workers' operations; `watch` the coordinator's passes while they run;
//! `report` what a failure prints.

mod books;
mod ops;
mod report;
mod watch;

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use sched::cpumask::CpuMask;
use sched::EntityId;

use super::params::{num, num_per_cpu, Param, MAX_MS};
use super::Rng;
use crate::cmdline::Workload;
use mech::setattr::{self, SetattrError};
use mech::lock::{level, IrqMutex};
use mech::sync::{pipe::Pipe, Mutex, Semaphore, WaitQueue};
use mech::{task::{Task, TaskState}, thread::Spawn};

use books::{splitmix, stream_byte, Bell, Slot, World, C, COUNT_NAMES, NCOUNTS};
use ops::{worker, OPS};
use report::report_failure;
use watch::{reap_orphans, watch};

/// What `workload=torture` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("ms", 1, MAX_MS, 5000, "how long the threads run (ms)"),
    num("seed", 0, u64::MAX, 1, "seed of the random choices (the same seed, the same choices)"),
    num_per_cpu("threads", 2, 512, 4, "worker threads, in pipe writer/reader pairs (an even number)"),
];

/// Shared sleeping mutexes and counting semaphores (of `SEM_UNITS` each).
pub(super) const MUTEXES: usize = 3;
pub(super) const SEMS: usize = 2;
pub(super) const SEM_UNITS: usize = 2;
/// Bytes a pair's pipe holds: writes of up to `MAX_IO` bytes fill it.
pub(super) const PIPE_BYTES: usize = 64;
pub(super) const MAX_IO: u64 = 96;
/// Recent operations kept per thread for the failure report.
pub(super) const RING: usize = 16;
/// A doorbell wait longer than this gets a timeout.
pub(super) const BELL_TIMEOUT_NS: u64 = 10_000_000;
/// How long the threads may take to wind down after the stop.
pub(super) const GRACE_NS: u64 = 30_000_000_000;

/// The coordinator: starts the workers, watches them for `ms`, stops them and
/// closes the books; false when they do not balance.
pub fn run(w: &Workload) -> bool {
    let threads = crate::even_threads(w, "pipe writer/reader pairs");
    let (ms, seed) = (w.num("ms"), w.num("seed"));
    let cpus = super::cpus();
    let child_cap = cpus.len().max(2) as u64;
    let heap = threads as u64 * 2048 + (threads as u64 / 2) * PIPE_BYTES as u64 + child_cap * 2048;
    if !super::budget::fits(w, &["threads"], threads as u64 + child_cap, heap) {
        return false;
    }
    mech::kprintln!(
        "torture: {} threads on {} CPUs for {} ms, seed {} (rerun: workload=torture,ms={},seed={},threads={})",
        threads,
        cpus.len(),
        ms,
        seed,
        ms,
        seed,
        threads
    );
    let before = Before::take();
    let world = new_world(seed, ms, threads, cpus, child_cap);
    let workers = spawn_workers(&world);
    let elapsed_run = run_until_end(&world);
    let stuck = stop(&world, &workers);
    let times = account_time(&world, &before, elapsed_run);
    let left = leftovers(&world, stuck);
    let books = close_books(&world, &times, &left);
    let ok = books.iter().all(|(_, b)| *b) && stuck == 0;
    record(&world, &times, &left, ok);
    if !ok {
        report_failure(&world, &books, stuck);
    }
    if mech::debug::enabled() {
        mech::debug::check_global();
    }
    ok
}

/// What the accounts start from, taken before the world exists.
struct Before {
    schedstat: Vec<(usize, mech::stats::CpuStat)>,
    /// Each online CPU's idle task's runtime (ns), in CPU order.
    idle_task: Vec<u64>,
    newidle: u64,
    runtime: u64,
}

impl Before {
    /// The CPUs' statistics, idle tasks' and newidle's time, and every task's runtime, now.
    fn take() -> Before {
        let schedstat = mech::schedstat::snapshot();
        let idle_task: Vec<u64> = super::cpus().iter().map(|&c| mech::idle::idle_task_ns(c)).collect();
        let newidle: u64 = super::cpus().iter().map(|&c| mech::rq::newidle_switch_ns(c)).sum();
        let runtime: u64 = mech::task::all().iter().map(|t| t.stats.sum_exec_runtime.load(Ordering::Relaxed)).sum();
        Before { schedstat, idle_task, newidle, runtime }
    }
}

/// The world the workers and the coordinator share, its clock (`t0`) starting now.
fn new_world(seed: u64, ms: u64, threads: usize, cpus: Vec<usize>, child_cap: u64) -> Arc<World> {
    let t0 = mech::rq::now_ns();
    Arc::new(World {
        seed,
        ms,
        threads,
        online: mech::rq::online_mask(),
        cpus,
        t0,
        stop: AtomicBool::new(false),
        slots: (0..threads)
            .map(|_| Slot {
                task: IrqMutex::new(None),
                bell: Bell::new(),
                ring: [const { AtomicU64::new(u64::MAX) }; RING],
                ring_us: [const { AtomicU64::new(0) }; RING],
                next: AtomicUsize::new(0),
                doing: AtomicU64::new(u64::MAX),
                done: AtomicBool::new(false),
                bad: AtomicBool::new(false),
            })
            .collect(),
        mutexes: (0..MUTEXES).map(|_| Mutex::new(0)).collect(),
        sems: (0..SEMS).map(|_| Semaphore::new(SEM_UNITS)).collect(),
        pipes: (0..threads / 2).map(|_| Pipe::new(PIPE_BYTES)).collect(),
        counts: [const { AtomicU64::new(0) }; NCOUNTS],
        ops: [const { AtomicU64::new(0) }; OPS.len()],
        orphans: IrqMutex::new(Vec::new()),
        children: AtomicU64::new(0),
        child_cap,
        joined_runtime: AtomicU64::new(0),
    })
}

/// Spawns the workers, round-robin over the CPUs; each one's task (None: not spawned).
fn spawn_workers(world: &Arc<World>) -> Vec<Option<Arc<Task>>> {
    let mut workers = Vec::new();
    for i in 0..world.threads {
        let cpu = world.cpus[i % world.cpus.len()];
        let wd = world.clone();
        match super::spawn(Spawn::new("torture").on_cpu(cpu), move || worker(&wd, i)) {
            Some(t) => {
                world.add(C::Spawned, 1);
                *world.slots[i].task.lock() = Some(t.clone());
                workers.push(Some(t));
            }
            None => {
                // Counted as done: nothing of it runs.
                world.add(C::SpawnFailed, 1);
                world.slots[i].done.store(true, Ordering::Release);
                workers.push(None);
            }
        }
    }
    workers
}

/// Run: until `ms` have passed, times out long doorbell waits, looks for lost
/// wakeups and joins orphans. Returns how long the workers ran (ns).
fn run_until_end(world: &World) -> u64 {
    let end = world.t0 + world.ms * 1_000_000;
    while mech::rq::now_ns() < end {
        tend(world);
    }
    mech::rq::now_ns() - world.t0
}

/// One pass of the coordinator, each millisecond while the workers run and wind down: time
/// out long doorbell waits, look for lost wakeups, join orphans.
fn tend(world: &World) {
    mech::thread::sleep_ns(1_000_000);
    watch(world);
    reap_orphans(world);
}

/// Stop: every doorbell wait ends; the rest wind down by themselves, watched
/// for up to `GRACE_NS`. Joins the workers that are done and returns how many
/// are not (stuck, each marked for the failure report).
fn stop(world: &World, workers: &[Option<Arc<Task>>]) -> u64 {
    world.stop.store(true, Ordering::Release);
    for s in &world.slots {
        s.bell.generation.fetch_add(1, Ordering::AcqRel);
        s.bell.wq.wake_all();
    }
    let give_up = mech::rq::now_ns() + GRACE_NS;
    let busy = |w: &World| w.slots.iter().any(|s| !s.done.load(Ordering::Acquire)) || w.children.load(Ordering::Acquire) > 0;
    while busy(world) && mech::rq::now_ns() < give_up {
        tend(world);
    }
    let mut stuck = 0u64;
    for (i, t) in workers.iter().enumerate() {
        let Some(t) = t else { continue };
        if world.slots[i].done.load(Ordering::Acquire) {
            world.reap(t);
        } else {
            stuck += 1;
            world.slots[i].bad.store(true, Ordering::Relaxed);
        }
    }
    reap_orphans(world);
    stuck
}

/// Where the CPUs' time went since `Before` (ns).
struct Times {
    runtime: u64,
    idle: u64,
    newidle: u64,
    pressure: u64,
    no_runnable: u64,
    elapsed: u64,
    elapsed_run: u64,
}

/// The accounts: the tasks' runtime (the joined ones' included), the idle
/// tasks', newidle's and pressure's time, since `before`.
fn account_time(world: &World, before: &Before, elapsed_run: u64) -> Times {
    let after = mech::schedstat::snapshot();
    let idle_task: u64 = w_cpus_idle(world, &before.idle_task);
    let newidle: u64 = world.cpus.iter().map(|&c| mech::rq::newidle_switch_ns(c)).sum::<u64>() - before.newidle;
    let elapsed = mech::rq::now_ns() - world.t0;
    let runtime_after: u64 = mech::task::all().iter().map(|t| t.stats.sum_exec_runtime.load(Ordering::Relaxed)).sum::<u64>()
        + world.joined_runtime.load(Ordering::Relaxed);
    let runtime = runtime_after.saturating_sub(before.runtime);
    let (mut no_runnable, mut pressure) = (0u64, 0u64);
    for (cpu, a) in &after {
        if let Some((_, b)) = before.schedstat.iter().find(|(c, _)| c == cpu) {
            no_runnable += a.idle_wait.idle_ns.saturating_sub(b.idle_wait.idle_ns);
            pressure += a.pressure_ns.saturating_sub(b.pressure_ns);
        }
    }
    Times { runtime, idle: idle_task, newidle, pressure, no_runnable, elapsed, elapsed_run }
}

/// What is left once the workers are done: none of it in a correct run but
/// the semaphores' units.
struct Leftovers {
    /// Workers still running and children not joined.
    alive: u64,
    mutex_count: u64,
    sem_left: usize,
    bell_left: u64,
}

/// Workers still running and children not joined (none in a correct run), the
/// mutexes' count, the semaphores' units and the doorbells' tokens.
fn leftovers(w: &World, stuck: u64) -> Leftovers {
    let alive = stuck + w.children.load(Ordering::Acquire);
    let mutex_count: u64 = w.mutexes.iter().map(|m| *m.lock()).sum();
    let sem_left: usize = w.sems.iter().map(|s| s.value()).sum();
    let bell_left: u64 = w.slots.iter().map(|s| s.bell.posted.load(Ordering::Relaxed) - s.bell.taken.load(Ordering::Relaxed)).sum();
    Leftovers { alive, mutex_count, sem_left, bell_left }
}

/// The books: what must hold in a correct run (the host checks the same).
fn close_books(w: &World, t: &Times, l: &Leftovers) -> Vec<(&'static str, bool)> {
    let capacity = w.cpus.len() as u64 * t.elapsed;
    let accounted = t.runtime + t.idle + t.newidle + t.pressure;
    let alive = l.alive;
    let mut books: Vec<(&str, bool)> = Vec::new();
    let g = |c: C| w.get(c);
    books.push(("spawned = exited + alive", g(C::Spawned) == g(C::Exited) + alive));
    books.push(("alive = 0", alive == 0));
    books.push(("joined = exited", g(C::Joined) == g(C::Exited)));
    books.push(("sleeps ended = begun", g(C::SleepBegun) == g(C::SleepEnded)));
    books.push(("mutex waits ended = begun", g(C::MutexBegun) == g(C::MutexEnded)));
    books.push(("mutex count = acquisitions", l.mutex_count == g(C::MutexEnded)));
    books.push(("semaphore waits ended = begun", g(C::SemBegun) == g(C::SemEnded)));
    books.push(("semaphore ups = downs", g(C::SemUps) == g(C::SemEnded)));
    books.push(("semaphore units intact", l.sem_left == SEMS * SEM_UNITS));
    books.push(("doorbell waits ended = begun", g(C::BellBegun) == g(C::BellEnded)));
    books.push(("doorbell waits ended = by tokens + timeout + stop", g(C::BellEnded) == g(C::BellByToken) + g(C::BellTimeouts) + g(C::BellStops)));
    books.push(("doorbell tokens posted = taken + left", g(C::BellPosts) == g(C::BellTaken) + l.bell_left));
    books.push(("joins ended = begun", g(C::JoinBegun) == g(C::JoinEnded)));
    books.push(("pipe reads ended = begun", g(C::ReadBegun) == g(C::ReadEnded)));
    books.push(("pipe writes ended = begun", g(C::WriteBegun) == g(C::WriteEnded)));
    books.push(("pipe bytes received = sent", g(C::PipeSent) == g(C::PipeReceived)));
    books.push(("runtime + idle + newidle + pressure = CPUs x elapsed within 1%", accounted.abs_diff(capacity) * 100 <= capacity));
    books.push(("no violation seen while running", g(C::Violations) == 0));
    books
}

/// `@fw torture` (the run, the accounts and what is left) and `@fw torture_ops`
/// (how often each operation was chosen).
fn record(w: &World, t: &Times, l: &Leftovers, ok: bool) {
    let mut line = String::new();
    let _ = write!(
        line,
        "seed={} ms={} cpus={} threads={} ok={} alive={} mutex_count={} sem_units={} sem_left={} bell_left={}",
        w.seed,
        w.ms,
        w.cpus.len() as u64,
        w.threads,
        ok as u8,
        l.alive,
        l.mutex_count,
        SEMS * SEM_UNITS,
        l.sem_left,
        l.bell_left
    );
    for (i, name) in COUNT_NAMES.iter().enumerate() {
        let _ = write!(line, " {}={}", name, w.counts[i].load(Ordering::Relaxed));
    }
    let _ = write!(
        line,
        " runtime_ns={} idle_ns={} newidle_ns={} pressure_ns={} elapsed_ns={} run_ns={} no_runnable_ns={}",
        t.runtime, t.idle, t.newidle, t.pressure, t.elapsed, t.elapsed_run, t.no_runnable
    );
    mech::record!("torture", "{}", line);
    let mut ops = String::new();
    for (i, (_, name, _)) in OPS.iter().enumerate() {
        let _ = write!(ops, "{}{}={}", if i == 0 { "" } else { " " }, name, w.ops[i].load(Ordering::Relaxed));
    }
    mech::record!("torture_ops", "{}", ops);
}

/// What the CPUs' idle tasks ran since `before` (one value per CPU of `w.cpus`).
fn w_cpus_idle(w: &World, before: &[u64]) -> u64 {
    w.cpus.iter().zip(before).map(|(&c, &b)| mech::idle::idle_task_ns(c).saturating_sub(b)).sum()
}
