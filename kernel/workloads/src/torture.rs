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
use mech::sync::irq_mutex::IrqMutex;
use mech::sync::{Mutex, Pipe, Semaphore, WaitQueue};
use mech::task::{Spawn, Task, TaskState};

/// What `workload=torture` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("ms", 1, MAX_MS, 5000, "how long the threads run (ms)"),
    num("seed", 0, u64::MAX, 1, "seed of the random choices (the same seed, the same choices)"),
    num_per_cpu("threads", 2, 512, 4, "worker threads, in pipe writer/reader pairs (an even number)"),
];

/// Shared sleeping mutexes and counting semaphores (of `SEM_UNITS` each).
const MUTEXES: usize = 3;
const SEMS: usize = 2;
const SEM_UNITS: usize = 2;
/// Bytes a pair's pipe holds: writes of up to `MAX_IO` bytes fill it.
const PIPE_BYTES: usize = 64;
const MAX_IO: u64 = 96;
/// Recent operations kept per thread for the failure report.
const RING: usize = 16;
/// A doorbell wait longer than this gets a timeout.
const BELL_TIMEOUT_NS: u64 = 10_000_000;
/// How long the threads may take to wind down after the stop.
const GRACE_NS: u64 = 30_000_000_000;

/// The operations, in the order of `OPS`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Spin,
    SleepShort,
    SleepLong,
    Mutex,
    Sem,
    Post,
    Wait,
    Pipe,
    Spawn,
    Renice,
    Slice,
    Affinity,
    Yield,
}

/// Each operation's name and weight (percent) in the workers' choice.
const OPS: [(Op, &str, u64); 13] = [
    (Op::Spin, "spin", 12),
    (Op::SleepShort, "sleep_short", 12),
    (Op::SleepLong, "sleep_long", 3),
    (Op::Mutex, "mutex", 10),
    (Op::Sem, "sem", 8),
    (Op::Post, "post", 6),
    (Op::Wait, "wait", 10),
    (Op::Pipe, "pipe", 14),
    (Op::Spawn, "spawn", 5),
    (Op::Renice, "renice", 4),
    (Op::Slice, "slice", 4),
    (Op::Affinity, "affinity", 4),
    (Op::Yield, "yield", 8),
];

/// The accounts, in the order of `COUNT_NAMES` (the `@fw torture` fields).
#[derive(Clone, Copy)]
enum C {
    Spawned,
    Exited,
    Joined,
    SleepBegun,
    SleepEnded,
    SleepEarly,
    MutexBegun,
    MutexEnded,
    SemBegun,
    SemEnded,
    SemUps,
    BellBegun,
    BellEnded,
    BellPosts,
    BellTaken,
    BellByToken,
    BellTimeouts,
    BellStops,
    BellSlept,
    LostWakeups,
    JoinBegun,
    JoinEnded,
    ReadBegun,
    ReadEnded,
    WriteBegun,
    WriteEnded,
    PipeSent,
    PipeReceived,
    PipeBad,
    AffinityMisses,
    AttrMisses,
    SpawnFailed,
    Violations,
}
const NCOUNTS: usize = C::Violations as usize + 1;
const COUNT_NAMES: [&str; NCOUNTS] = [
    "spawned",
    "exited",
    "joined",
    "sleep_begun",
    "sleep_ended",
    "sleep_early",
    "mutex_begun",
    "mutex_ended",
    "sem_begun",
    "sem_ended",
    "sem_ups",
    "bell_begun",
    "bell_ended",
    "bell_posts",
    "bell_taken",
    "bell_by_token",
    "bell_timeouts",
    "bell_stops",
    "bell_slept",
    "lost_wakeups",
    "join_begun",
    "join_ended",
    "read_begun",
    "read_ended",
    "write_begun",
    "write_ended",
    "pipe_sent",
    "pipe_received",
    "pipe_bad",
    "affinity_misses",
    "attr_misses",
    "spawn_failed",
    "violations",
];

/// A thread's doorbell: peers post tokens, the owner waits for some and
/// takes all that are there.
///
/// Invariant: `taken <= posted`; `posting` counts posts that have bumped
/// `posted` and not yet finished their wakeup.
struct Bell {
    posted: AtomicU64,
    taken: AtomicU64,
    posting: AtomicU64,
    /// Bumped by the coordinator to end a wait (timeout, stop).
    generation: AtomicU64,
    /// When the owner's current wait began (ns; 0: not waiting).
    since: AtomicU64,
    /// The coordinator's last suspicious sighting (`posted << 32 | taken`, + 1).
    suspect: AtomicU64,
    wq: WaitQueue,
}

impl Bell {
    fn new() -> Bell {
        Bell {
            posted: AtomicU64::new(0),
            taken: AtomicU64::new(0),
            posting: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            since: AtomicU64::new(0),
            suspect: AtomicU64::new(0),
            wq: WaitQueue::new(),
        }
    }

    /// Takes every posted token; returns how many (0: none was there).
    fn take(&self) -> u64 {
        let mut t = self.taken.load(Ordering::Acquire);
        loop {
            let p = self.posted.load(Ordering::Acquire);
            if p <= t {
                return 0;
            }
            match self.taken.compare_exchange(t, p, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return p - t,
                Err(now) => t = now,
            }
        }
    }
}

/// One worker's slot: its task, doorbell and recent operations.
struct Slot {
    task: IrqMutex<Option<Arc<Task>>>,
    bell: Bell,
    /// `op << 56 | arg`, the last `RING` operations; `ring_us` their start.
    ring: [AtomicU64; RING],
    ring_us: [AtomicU64; RING],
    next: AtomicUsize,
    /// The operation under way (`u64::MAX`: none).
    doing: AtomicU64,
    done: AtomicBool,
    /// A violation was seen by or about this thread: report its operations.
    bad: AtomicBool,
}

struct World {
    seed: u64,
    ms: u64,
    threads: usize,
    cpus: Vec<usize>,
    online: CpuMask,
    t0: u64,
    stop: AtomicBool,
    slots: Vec<Slot>,
    mutexes: Vec<Mutex<u64>>,
    sems: Vec<Semaphore>,
    /// Pair `k`'s pipe: worker `2k` writes, worker `2k + 1` reads.
    pipes: Vec<Pipe>,
    counts: [AtomicU64; NCOUNTS],
    ops: [AtomicU64; OPS.len()],
    /// Children left to the coordinator to join.
    orphans: IrqMutex<Vec<Arc<Task>>>,
    /// Children not yet joined (each holds a thread stack until then).
    children: AtomicU64,
    child_cap: u64,
    /// Runtime of the threads joined so far (ns).
    joined_runtime: AtomicU64,
}

impl World {
    fn add(&self, c: C, n: u64) {
        self.counts[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    fn get(&self, c: C) -> u64 {
        self.counts[c as usize].load(Ordering::Relaxed)
    }

    /// Records a violation by or about worker `who`.
    fn violation(&self, who: usize, c: C, what: core::fmt::Arguments) {
        self.add(c, 1);
        self.add(C::Violations, 1);
        if let Some(s) = self.slots.get(who) {
            s.bad.store(true, Ordering::Relaxed);
        }
        mech::kprintln!("torture: VIOLATION (thread {}, seed {}): {}", who, self.seed, what);
    }

    /// Notes that worker `me` starts `op` with `arg`.
    fn note(&self, me: usize, op: usize, arg: u64) {
        let s = &self.slots[me];
        let at = s.next.fetch_add(1, Ordering::Relaxed) % RING;
        let code = (op as u64) << 56 | (arg & ((1 << 56) - 1));
        s.ring[at].store(code, Ordering::Relaxed);
        s.ring_us[at].store(mech::rq::now_ns().saturating_sub(self.t0) / 1000, Ordering::Relaxed);
        s.doing.store(code, Ordering::Relaxed);
    }

    /// Joins `t` (it has exited or is about to) and books its runtime.
    fn reap(&self, t: &Arc<Task>) {
        mech::task::join(t);
        self.joined_runtime.fetch_add(t.stats.sum_exec_runtime.load(Ordering::Relaxed), Ordering::Relaxed);
        self.add(C::Joined, 1);
    }
}

/// splitmix64's finaliser: independent streams from one seed.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Byte `k` of pair `pair`'s stream: a loss, a duplicate or a reordering
/// shows as a wrong byte.
fn stream_byte(pair: usize, k: u64) -> u8 {
    (splitmix(k ^ (pair as u64) << 48) >> 56) as u8
}

pub fn run(w: &Workload) -> bool {
    let mut threads = w.num("threads") as usize;
    if threads % 2 == 1 {
        crate::cmdline::report_problem(format_args!(
            "workload=torture: threads={} is odd (threads work in pipe writer/reader pairs); using threads={}",
            threads,
            threads - 1
        ));
        threads -= 1;
    }
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
    let before = mech::schedstat::snapshot();
    let idle_task_before: Vec<u64> = super::cpus().iter().map(|&c| mech::idle::idle_task_ns(c)).collect();
    let newidle_before: u64 = super::cpus().iter().map(|&c| mech::rq::newidle_switch_ns(c)).sum();
    let runtime_before: u64 = mech::task::all().iter().map(|t| t.stats.sum_exec_runtime.load(Ordering::Relaxed)).sum();
    let t0 = mech::rq::now_ns();
    let world = Arc::new(World {
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
    });
    let mut workers = Vec::new();
    for i in 0..threads {
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
    // Run: time out long doorbell waits, look for lost wakeups, join orphans.
    let end = t0 + ms * 1_000_000;
    while mech::rq::now_ns() < end {
        mech::timer::sleep_ns(1_000_000);
        watch(&world);
        reap_orphans(&world);
    }
    let elapsed_run = mech::rq::now_ns() - t0;
    // Stop: every doorbell wait ends; the rest wind down by themselves.
    world.stop.store(true, Ordering::Release);
    for s in &world.slots {
        s.bell.generation.fetch_add(1, Ordering::AcqRel);
        s.bell.wq.wake_all();
    }
    let give_up = mech::rq::now_ns() + GRACE_NS;
    let busy = |w: &World| w.slots.iter().any(|s| !s.done.load(Ordering::Acquire)) || w.children.load(Ordering::Acquire) > 0;
    while busy(&world) && mech::rq::now_ns() < give_up {
        mech::timer::sleep_ns(1_000_000);
        watch(&world);
        reap_orphans(&world);
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
    reap_orphans(&world);
    // The accounts.
    let after = mech::schedstat::snapshot();
    let idle_task: u64 = w_cpus_idle(&world, &idle_task_before);
    let newidle: u64 = world.cpus.iter().map(|&c| mech::rq::newidle_switch_ns(c)).sum::<u64>() - newidle_before;
    let elapsed = mech::rq::now_ns() - t0;
    let runtime_after: u64 = mech::task::all().iter().map(|t| t.stats.sum_exec_runtime.load(Ordering::Relaxed)).sum::<u64>()
        + world.joined_runtime.load(Ordering::Relaxed);
    let runtime = runtime_after.saturating_sub(runtime_before);
    let (mut no_runnable, mut pressure) = (0u64, 0u64);
    for (cpu, a) in &after {
        if let Some((_, b)) = before.iter().find(|(c, _)| c == cpu) {
            no_runnable += a.idle_wait.idle_ns.saturating_sub(b.idle_wait.idle_ns);
            pressure += a.pressure_ns.saturating_sub(b.pressure_ns);
        }
    }
    let w = &*world;
    // Workers still running and children not joined (none in a correct run).
    let alive = stuck + w.children.load(Ordering::Acquire);
    let mutex_count: u64 = w.mutexes.iter().map(|m| *m.lock()).sum();
    let sem_left: usize = w.sems.iter().map(|s| s.value()).sum();
    let bell_left: u64 = w.slots.iter().map(|s| s.bell.posted.load(Ordering::Relaxed) - s.bell.taken.load(Ordering::Relaxed)).sum();
    let cpus_n = w.cpus.len() as u64;
    let capacity = cpus_n * elapsed;
    let idle = idle_task;
    let accounted = runtime + idle + newidle + pressure;
    // The books: what must hold in a correct run (the host checks the same).
    let mut books: Vec<(&str, bool)> = Vec::new();
    let g = |c: C| w.get(c);
    books.push(("spawned = exited + alive", g(C::Spawned) == g(C::Exited) + alive));
    books.push(("alive = 0", alive == 0));
    books.push(("joined = exited", g(C::Joined) == g(C::Exited)));
    books.push(("sleeps ended = begun", g(C::SleepBegun) == g(C::SleepEnded)));
    books.push(("mutex waits ended = begun", g(C::MutexBegun) == g(C::MutexEnded)));
    books.push(("mutex count = acquisitions", mutex_count == g(C::MutexEnded)));
    books.push(("semaphore waits ended = begun", g(C::SemBegun) == g(C::SemEnded)));
    books.push(("semaphore ups = downs", g(C::SemUps) == g(C::SemEnded)));
    books.push(("semaphore units intact", sem_left == SEMS * SEM_UNITS));
    books.push(("doorbell waits ended = begun", g(C::BellBegun) == g(C::BellEnded)));
    books.push(("doorbell waits ended = by tokens + timeout + stop", g(C::BellEnded) == g(C::BellByToken) + g(C::BellTimeouts) + g(C::BellStops)));
    books.push(("doorbell tokens posted = taken + left", g(C::BellPosts) == g(C::BellTaken) + bell_left));
    books.push(("joins ended = begun", g(C::JoinBegun) == g(C::JoinEnded)));
    books.push(("pipe reads ended = begun", g(C::ReadBegun) == g(C::ReadEnded)));
    books.push(("pipe writes ended = begun", g(C::WriteBegun) == g(C::WriteEnded)));
    books.push(("pipe bytes received = sent", g(C::PipeSent) == g(C::PipeReceived)));
    books.push(("runtime + idle + newidle + pressure = CPUs x elapsed within 1%", accounted.abs_diff(capacity) * 100 <= capacity));
    books.push(("no violation seen while running", g(C::Violations) == 0));
    let ok = books.iter().all(|(_, b)| *b) && stuck == 0;
    let mut line = String::new();
    let _ = write!(
        line,
        "seed={} ms={} cpus={} threads={} ok={} alive={} mutex_count={} sem_units={} sem_left={} bell_left={}",
        seed,
        ms,
        cpus_n,
        threads,
        ok as u8,
        alive,
        mutex_count,
        SEMS * SEM_UNITS,
        sem_left,
        bell_left
    );
    for (i, name) in COUNT_NAMES.iter().enumerate() {
        let _ = write!(line, " {}={}", name, w.counts[i].load(Ordering::Relaxed));
    }
    let _ = write!(
        line,
        " runtime_ns={} idle_ns={} newidle_ns={} pressure_ns={} elapsed_ns={} run_ns={} no_runnable_ns={}",
        runtime, idle, newidle, pressure, elapsed, elapsed_run, no_runnable
    );
    mech::record!("torture", "{}", line);
    let mut ops = String::new();
    for (i, (_, name, _)) in OPS.iter().enumerate() {
        let _ = write!(ops, "{}{}={}", if i == 0 { "" } else { " " }, name, w.ops[i].load(Ordering::Relaxed));
    }
    mech::record!("torture_ops", "{}", ops);
    if !ok {
        report_failure(w, &books, stuck);
    }
    if mech::debug::enabled() {
        mech::debug::check_global();
    }
    ok
}

/// What the CPUs' idle tasks ran since `before` (one value per CPU of `w.cpus`).
fn w_cpus_idle(w: &World, before: &[u64]) -> u64 {
    w.cpus.iter().zip(before).map(|(&c, &b)| mech::idle::idle_task_ns(c).saturating_sub(b)).sum()
}

/// The failure report: what failed, how to rerun it, and the operations of
/// every thread involved.
fn report_failure(w: &World, books: &[(&str, bool)], stuck: u64) {
    mech::kprintln!(
        "torture: FAILED with seed {}: rerun with workload=torture,ms={},seed={},threads={} on {} CPUs",
        w.seed,
        w.ms,
        w.seed,
        w.threads,
        w.cpus.len()
    );
    for (what, held) in books {
        if !held {
            mech::kprintln!("torture: books do not balance: {}", what);
        }
    }
    if stuck > 0 {
        mech::kprintln!("torture: {} thread(s) still not done {} s after the stop (a lost wakeup or a hung CPU)", stuck, GRACE_NS / 1_000_000_000);
    }
    for (i, s) in w.slots.iter().enumerate() {
        if !s.bad.load(Ordering::Relaxed) {
            continue;
        }
        let task = s.task.lock().clone();
        let (id, state, cpu) = match &task {
            Some(t) => (t.id, t.state(), t.cpu.load(Ordering::Relaxed)),
            None => (0, TaskState::Dead, 0),
        };
        let blocked = task.as_ref().and_then(|t| *t.blocked_at.lock());
        let mut ops = String::new();
        let next = s.next.load(Ordering::Relaxed);
        for k in next.saturating_sub(RING)..next {
            let code = s.ring[k % RING].load(Ordering::Relaxed);
            let _ = write!(ops, "{}{}", if ops.is_empty() { "" } else { "," }, describe(code));
            let _ = write!(ops, "@{}us", s.ring_us[k % RING].load(Ordering::Relaxed));
        }
        let doing = s.doing.load(Ordering::Relaxed);
        mech::kprintln!(
            "torture: thread {} (task {}, {:?} on CPU {}, done {}){}{}: last operations, oldest first: {}",
            i,
            id,
            state,
            cpu,
            s.done.load(Ordering::Relaxed),
            if doing == u64::MAX { "" } else { " in " },
            if doing == u64::MAX { String::new() } else { describe(doing) },
            ops
        );
        if let Some(at) = blocked {
            mech::kprintln!("torture: thread {} last blocked at {}:{}", i, at.file(), at.line());
        }
        mech::record!(
            "torture_thread",
            "thread={} task={} state={:?} cpu={} done={} doing={} ops={}",
            i,
            id,
            state,
            cpu,
            s.done.load(Ordering::Relaxed) as u8,
            if doing == u64::MAX { String::from("-") } else { describe(doing) },
            if ops.is_empty() { String::from("-") } else { ops }
        );
    }
    if stuck > 0 {
        mech::debug::dump_all();
    }
}

/// `name(arg)` of an encoded operation.
fn describe(code: u64) -> String {
    let mut s = String::new();
    match OPS.get((code >> 56) as usize) {
        Some((_, name, _)) => {
            let _ = write!(s, "{}({})", name, code & ((1 << 56) - 1));
        }
        None => s.push('-'),
    }
    s
}

/// The coordinator's pass over the doorbells: a waiter asleep (off its
/// runqueue) while a token posted for it waits, with no post still waking
/// it, seen twice in a row, is a lost wakeup; a wait past
/// `BELL_TIMEOUT_NS` is ended (a timeout).
fn watch(w: &World) {
    let now = mech::rq::now_ns();
    for (i, s) in w.slots.iter().enumerate() {
        let b = &s.bell;
        let since = b.since.load(Ordering::Acquire);
        if since == 0 {
            b.suspect.store(0, Ordering::Relaxed);
            continue;
        }
        // Tokens first, then posts in flight: a post that bumped `posted`
        // after this read is seen in `posting` until its wakeup is done.
        let posted = b.posted.load(Ordering::SeqCst);
        let taken = b.taken.load(Ordering::SeqCst);
        let posting = b.posting.load(Ordering::SeqCst);
        let asleep = || s.task.lock().clone().is_some_and(|t| asleep_off_queue(&t));
        if posted > taken && posting == 0 && asleep() && b.since.load(Ordering::Acquire) == since {
            let key = (posted << 32 | (taken & 0xffff_ffff)) + 1;
            if b.suspect.swap(key, Ordering::Relaxed) != key {
                continue; // first sighting: look again at the next pass
            }
            b.suspect.store(0, Ordering::Relaxed);
            w.violation(i, C::LostWakeups, format_args!("asleep on its doorbell with {} token(s) posted and no wakeup coming", posted - taken));
        } else {
            b.suspect.store(0, Ordering::Relaxed);
            if now.saturating_sub(since) <= BELL_TIMEOUT_NS {
                continue;
            }
        }
        b.generation.fetch_add(1, Ordering::AcqRel);
        b.wq.wake_all();
    }
}

/// Whether `t` is asleep for good: Sleeping, and off its runqueue or
/// queued only as a delayed entity (DELAY_DEQUEUE keeps a sleeper queued and
/// `Task::on_rq` set). A task that set itself Sleeping and was preempted
/// before it could block stays runnable: not asleep.
fn asleep_off_queue(t: &Arc<Task>) -> bool {
    if t.state() != TaskState::Sleeping {
        return false;
    }
    if !t.on_rq.load(Ordering::SeqCst) {
        return true;
    }
    let rq = mech::rq::lock_task_rq(t);
    let eid = EntityId(t.eid.load(Ordering::Relaxed));
    rq.task_of(eid.0).is_some_and(|x| Arc::ptr_eq(x, t)) && rq.fair.is_delayed(eid) && t.state() == TaskState::Sleeping
}

/// Joins the orphaned children that have exited.
fn reap_orphans(w: &World) {
    let done: Vec<Arc<Task>> = {
        let mut o = w.orphans.lock();
        let (dead, live): (Vec<_>, Vec<_>) = o.drain(..).partition(|t| t.state() == TaskState::Dead);
        *o = live;
        dead
    };
    for t in &done {
        w.reap(t);
        w.children.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One worker: operations chosen by its own generator until the stop, then
/// its side of the pipe wound down.
fn worker(w: &Arc<World>, me: usize) {
    let mut rng = Rng::new(splitmix(w.seed ^ splitmix(me as u64 + 1)));
    let task = mech::task::current();
    let pair = me / 2;
    let writer = me % 2 == 0;
    let mut seq = 0u64; // bytes written (writer) or read (reader)
    let mut eof = false;
    let mut pinned: Option<CpuMask> = None;
    let total: u64 = OPS.iter().map(|o| o.2).sum();
    let mut buf = [0u8; MAX_IO as usize];
    while !w.stop.load(Ordering::Acquire) {
        let mut r = rng.below(total);
        let idx = OPS.iter().position(|o| {
            if r < o.2 {
                true
            } else {
                r -= o.2;
                false
            }
        });
        let idx = idx.unwrap_or(0);
        w.ops[idx].fetch_add(1, Ordering::Relaxed);
        match OPS[idx].0 {
            Op::Spin => {
                let ns = 10_000 + rng.below(1_000_000);
                w.note(me, idx, ns);
                mech::platform::burn_ns(ns);
            }
            Op::SleepShort | Op::SleepLong => {
                let ns = if OPS[idx].0 == Op::SleepShort { 10_000 + rng.below(190_000) } else { 1_000_000 + rng.below(19_000_000) };
                w.note(me, idx, ns);
                timed_sleep(w, me, ns);
            }
            Op::Mutex => {
                let m = rng.below(MUTEXES as u64) as usize;
                let hold = rng.next();
                w.note(me, idx, m as u64);
                w.add(C::MutexBegun, 1);
                let mut g = w.mutexes[m].lock();
                w.add(C::MutexEnded, 1);
                let v = *g;
                hold_briefly(w, me, hold);
                *g = v + 1;
            }
            Op::Sem => {
                let s = rng.below(SEMS as u64) as usize;
                let hold = rng.next();
                w.note(me, idx, s as u64);
                w.add(C::SemBegun, 1);
                w.sems[s].down();
                w.add(C::SemEnded, 1);
                hold_briefly(w, me, hold);
                w.sems[s].up();
                w.add(C::SemUps, 1);
            }
            Op::Post => {
                // Mostly to a worker waiting on its doorbell (a few draws):
                // a wakeup that reaches a sleeper, not a token piling up.
                let mut to = rng.below(w.threads as u64) as usize;
                for _ in 0..4 {
                    if w.slots[to].bell.since.load(Ordering::Acquire) != 0 {
                        break;
                    }
                    to = rng.below(w.threads as u64) as usize;
                }
                w.note(me, idx, to as u64);
                let b = &w.slots[to].bell;
                b.posting.fetch_add(1, Ordering::SeqCst);
                b.posted.fetch_add(1, Ordering::SeqCst);
                w.add(C::BellPosts, 1);
                b.wq.wake_one();
                b.posting.fetch_sub(1, Ordering::SeqCst);
            }
            Op::Wait => {
                w.note(me, idx, 0);
                bell_wait(w, me);
            }
            Op::Pipe => {
                let n = 1 + rng.below(MAX_IO) as usize;
                w.note(me, idx, n as u64);
                if writer {
                    for (k, b) in buf[..n].iter_mut().enumerate() {
                        *b = stream_byte(pair, seq + k as u64);
                    }
                    w.add(C::WriteBegun, 1);
                    w.pipes[pair].write(&buf[..n], rng.below(2) == 0);
                    w.add(C::WriteEnded, 1);
                    w.add(C::PipeSent, n as u64);
                    seq += n as u64;
                } else if !eof {
                    eof = !read_some(w, me, pair, &mut seq, &mut buf[..n]);
                }
            }
            Op::Spawn => spawn_child(w, me, &mut rng, idx),
            Op::Renice => {
                let nice = rng.below(40) as i32 - 20;
                let peer = rng.below(4) == 0;
                let target = if peer { w.slots[rng.below(w.threads as u64) as usize].task.lock().clone() } else { Some(task.clone()) };
                w.note(me, idx, (nice + 20) as u64);
                if let Some(t) = target {
                    match setattr::set_user_nice(&t, nice) {
                        Ok(()) | Err(SetattrError::Exited) => {}
                        Err(e) => w.violation(me, C::AttrMisses, format_args!("renice to {}: {}", nice, e)),
                    }
                }
                check_attrs(w, me, &task);
            }
            Op::Slice => {
                let ns = if rng.below(4) == 0 { 0 } else { 100_000 + rng.below(20_000_000) };
                w.note(me, idx, ns);
                let _ = setattr::set_slice(&task, ns);
                check_attrs(w, me, &task);
            }
            Op::Affinity => {
                let mask = match pinned {
                    Some(_) => w.online,
                    None if rng.below(3) == 0 => {
                        // A few CPUs, at least one.
                        let mut m = CpuMask::empty();
                        for &c in &w.cpus {
                            if rng.below(2) == 0 {
                                m.set(c);
                            }
                        }
                        m.set(w.cpus[rng.below(w.cpus.len() as u64) as usize]);
                        m
                    }
                    None => CpuMask::single(w.cpus[rng.below(w.cpus.len() as u64) as usize]),
                };
                w.note(me, idx, mask.bits()[0]);
                if let Err(e) = mech::wakeup::set_affinity(&task, mask) {
                    w.violation(me, C::AffinityMisses, format_args!("set_affinity: {}", e));
                }
                // The switch moves a task off a CPU it may no longer use.
                mech::schedule::yield_now();
                pinned = if mask == w.online { None } else { Some(mask) };
            }
            Op::Yield => {
                w.note(me, idx, 0);
                mech::schedule::yield_now();
            }
        }
        w.slots[me].doing.store(u64::MAX, Ordering::Relaxed);
        if let Some(m) = pinned {
            let cpu = mech::platform::cpu_id();
            if !m.contains(cpu) {
                w.violation(me, C::AffinityMisses, format_args!("runs on CPU {} outside its affinity {:#x}", cpu, m.bits()[0]));
            }
        }
    }
    // Wind down: the writer closes its pipe, the reader drains it to the end.
    if writer {
        w.pipes[pair].close();
    } else {
        let mut buf = [0u8; MAX_IO as usize];
        while !eof {
            eof = !read_some(w, me, pair, &mut seq, &mut buf);
        }
    }
    if pinned.is_some() {
        let _ = mech::wakeup::set_affinity(&task, w.online);
    }
    w.add(C::Exited, 1);
    w.slots[me].done.store(true, Ordering::Release);
}

/// One read of pair `pair`'s pipe, checked byte by byte; false at its end.
fn read_some(w: &World, me: usize, pair: usize, seq: &mut u64, buf: &mut [u8]) -> bool {
    w.add(C::ReadBegun, 1);
    let got = w.pipes[pair].read(buf);
    w.add(C::ReadEnded, 1);
    w.add(C::PipeReceived, got as u64);
    for (k, &b) in buf[..got].iter().enumerate() {
        let want = stream_byte(pair, *seq + k as u64);
        if b != want {
            w.violation(me, C::PipeBad, format_args!("pipe {}: byte {} is {:#x}, expected {:#x}", pair, *seq + k as u64, b, want));
            break;
        }
    }
    *seq += got as u64;
    got > 0
}

/// Sleeps `ns` and checks that the sleep lasted that long.
fn timed_sleep(w: &World, me: usize, ns: u64) {
    w.add(C::SleepBegun, 1);
    let t = mech::rq::now_ns();
    mech::timer::sleep_ns(ns);
    let slept = mech::rq::now_ns() - t;
    w.add(C::SleepEnded, 1);
    if slept < ns {
        w.violation(me, C::SleepEarly, format_args!("a sleep of {} ns ended after {} ns", ns, slept));
    }
}

/// What a mutex or semaphore holder does while holding: spin, sleep a
/// little or yield (never anything that waits for another thread).
fn hold_briefly(w: &World, me: usize, r: u64) {
    match r % 3 {
        0 => mech::platform::burn_ns(1_000 + (r >> 8) % 50_000),
        1 => timed_sleep(w, me, 5_000 + (r >> 8) % 50_000),
        _ => mech::schedule::yield_now(),
    }
}

/// Waits on worker `me`'s doorbell for a token, a timeout or the stop.
fn bell_wait(w: &World, me: usize) {
    let b = &w.slots[me].bell;
    w.add(C::BellBegun, 1);
    let generation = b.generation.load(Ordering::Acquire);
    b.since.store(mech::rq::now_ns().max(1), Ordering::Release);
    let mut how = C::BellByToken;
    let mut checks = 0;
    let mut tokens = 0;
    b.wq.wait_until(|| {
        checks += 1;
        tokens = b.take();
        if tokens > 0 {
            how = C::BellByToken;
        } else if w.stop.load(Ordering::Acquire) {
            how = C::BellStops;
        } else if b.generation.load(Ordering::Acquire) != generation {
            how = C::BellTimeouts;
        } else {
            return false;
        }
        true
    });
    b.since.store(0, Ordering::Release);
    if checks > 1 {
        w.add(C::BellSlept, 1);
    }
    w.add(C::BellEnded, 1);
    w.add(C::BellTaken, tokens);
    w.add(how, 1);
}

/// Spawns a short-lived child with random nice, slice and placement; joins
/// it at once or leaves it to the coordinator.
fn spawn_child(w: &Arc<World>, me: usize, rng: &mut Rng, idx: usize) {
    if w.children.fetch_add(1, Ordering::AcqRel) >= w.child_cap {
        w.children.fetch_sub(1, Ordering::AcqRel);
        w.note(me, idx, 0);
        return;
    }
    let mut opts = Spawn::new("torture-child").nice(rng.below(40) as i32 - 20);
    if rng.below(2) == 0 {
        opts = opts.slice_ns(100_000 + rng.below(10_000_000));
    }
    let cpu = w.cpus[rng.below(w.cpus.len() as u64) as usize];
    opts = match rng.below(3) {
        0 => opts.on_cpu(cpu),
        1 => opts.pin(cpu),
        _ => opts, // fork balancing places it
    };
    let pin = opts.affinity;
    let steps = 1 + rng.below(6);
    let child_seed = rng.next();
    let join_now = rng.below(2) == 0;
    w.note(me, idx, steps);
    let wc = w.clone();
    let child = super::spawn(opts, move || {
        let mut r = Rng::new(child_seed);
        for _ in 0..steps {
            match r.below(3) {
                0 => mech::platform::burn_ns(10_000 + r.below(300_000)),
                1 => mech::timer::sleep_ns(10_000 + r.below(500_000)),
                _ => mech::schedule::yield_now(),
            }
            if let Some(m) = pin {
                let cpu = mech::platform::cpu_id();
                if !m.contains(cpu) {
                    wc.violation(me, C::AffinityMisses, format_args!("its pinned child runs on CPU {} outside {:#x}", cpu, m.bits()[0]));
                }
            }
        }
        wc.add(C::Exited, 1);
    });
    let Some(child) = child else {
        w.children.fetch_sub(1, Ordering::AcqRel);
        w.add(C::SpawnFailed, 1);
        return;
    };
    w.add(C::Spawned, 1);
    if join_now {
        w.add(C::JoinBegun, 1);
        w.reap(&child);
        w.add(C::JoinEnded, 1);
        w.children.fetch_sub(1, Ordering::AcqRel);
    } else {
        w.orphans.lock().push(child);
    }
}

/// The running task's entity carries the nice and slice the task records
/// (a renice or slice change reached the policy).
fn check_attrs(w: &World, me: usize, task: &Arc<Task>) {
    let rq = mech::rq::lock_task_rq(task);
    // Read under the runqueue lock the changes hold while they store them.
    let (nice, slice) = (task.nice_value(), task.slice_ns.load(Ordering::Relaxed));
    let Some(se) = rq.fair.entity(EntityId(task.eid.load(Ordering::Relaxed))) else {
        drop(rq);
        w.violation(me, C::AttrMisses, format_args!("the running task has no entity"));
        return;
    };
    let weight_ok = se.w() == mech::task::nice_weight(nice) && se.nice.get() == nice;
    let slice_ok = match sched::tunables::clamp_custom_slice(slice) {
        Some(s) => se.custom_slice && se.slice == s,
        None => !se.custom_slice,
    };
    let (w_se, s_se, c_se) = (se.w(), se.slice, se.custom_slice);
    drop(rq);
    if !weight_ok || !slice_ok {
        w.violation(
            me,
            C::AttrMisses,
            format_args!("task nice {} slice {} but its entity has weight {} slice {} custom {}", nice, slice, w_se, s_se, c_se),
        );
    }
}
