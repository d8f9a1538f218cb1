//! `workload=renice[,cpu=N][,rounds=30][,slice_us=300][,after_us=500][,ms=2000]`:
//! how soon the CPU switches after a renice asks it to. Two nice-0 hogs
//! with a `slice_us` request (custom slice) and a nice-19 hog share one
//! CPU. Whenever one of the nice-0 hogs has run `after_us` since it got the
//! CPU, so that its request and its protected slice (RUN_TO_PARITY: its
//! whole request, the shortest on the queue) are used up but the next tick
//! (1 ms at `hz=1000`) has not come yet, it renices the waiting nice-19 hog
//! (19 to 18 and back). Linux's `set_user_nice()` dequeues that task, and
//! the dequeue charges the running one (fair.c `dequeue_entity()`'s
//! `update_curr()`), which asks for a reschedule: the CPU switches at once
//! to the earliest eligible deadline, the other nice-0 hog (the reniced one
//! waits tens of ms behind it: its deadline is 1024/19 times as far). A
//! sample is the time from the renice to the first moment another task
//! runs, measured by that task.
//!
//! Prints `@fw renice` (samples, how many went to the other nice-0 hog, how
//! many renices left the renicer running, the median and longest switch
//! times) and `@fw result` lines `switch_p50` and `switch_max` (us),
//! lower-is-better. Passes when every round was measured within `ms`.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::params::{num, Param, MAX_CPU, MAX_MS};
use crate::cmdline::Workload;
use mech::rq;
use mech::lock::{level, IrqMutex};
use mech::{task::Task, thread::Spawn};

/// What `workload=renice` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("cpu", 0, MAX_CPU, 1, "the hogs' CPU (the default is the last CPU when CPU 1 is not online)"),
    num("rounds", 1, 10_000, 30, "renices measured"),
    num("slice_us", 100, 100_000, 300, "the nice-0 hogs' custom slice (us)"),
    num("after_us", 1, 100_000, 500, "how long a nice-0 hog runs after it got the CPU before it renices (us)"),
    num("ms", 1, MAX_MS, 2000, "the longest the hogs run (ms)"),
];

/// [`super::hog`] batches between two clock reads (about 5 us of work).
const BATCHES_PER_READ: usize = 8;

/// One switch after a renice.
#[derive(Clone, Copy)]
struct Sample {
    ns: u64,
    /// The hog that reniced, and the one that ran next (indices).
    by: usize,
    next: usize,
}

/// What the three hogs share.
struct Shared {
    stop: AtomicBool,
    /// The hog that last saw itself running (`usize::MAX`: none yet).
    runner: AtomicUsize,
    /// When the renice not yet followed by a switch began (0: none), and by whom.
    renice_at: AtomicU64,
    renicer: AtomicUsize,
    /// Renices whose pick chose the renicer again at once.
    kept: AtomicU64,
    /// Renices after which the renicer, neither switched out nor picked
    /// again, reniced again.
    no_switch: AtomicU64,
    samples: IrqMutex<level::Workload, Vec<Sample>>,
    rounds: usize,
}

impl Shared {
    fn done(&self) -> bool {
        self.samples.lock().len() >= self.rounds
    }
}

/// Hog `me`'s loop. A nice-0 hog (`target`: the nice-19 hog) renices it
/// `after` ns into each of its turns.
fn run_hog(me: usize, cpu: usize, sh: &Shared, target: Option<&Arc<Task>>, after: u64) {
    let mut x: u64 = 1;
    let mut turn_start = 0;
    while !sh.stop.load(Ordering::Relaxed) {
        for _ in 0..BATCHES_PER_READ {
            for _ in 0..1000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            }
            core::hint::black_box(x);
            mech::platform::work_done(super::HOG_BATCH_INSTRUCTIONS);
        }
        let now = rq::now_ns();
        if sh.runner.swap(me, Ordering::Relaxed) != me {
            // A new turn: if a renice asked for this switch, it is a sample.
            turn_start = now;
            let at = sh.renice_at.swap(0, Ordering::Relaxed);
            if at != 0 {
                let by = sh.renicer.load(Ordering::Relaxed);
                let mut s = sh.samples.lock();
                s.push(Sample { ns: now.saturating_sub(at), by, next: me });
                if s.len() >= sh.rounds {
                    sh.stop.store(true, Ordering::Relaxed);
                }
            }
            continue;
        }
        let Some(t) = target else { continue };
        if now.saturating_sub(turn_start) < after || sh.done() {
            continue;
        }
        if sh.renice_at.load(Ordering::Relaxed) != 0 {
            sh.no_switch.fetch_add(1, Ordering::Relaxed);
        }
        let nice = if t.nice_value() == 19 { 18 } else { 19 };
        let picks = rq::lock(cpu).stat.sched_count;
        sh.renicer.store(me, Ordering::Relaxed);
        sh.renice_at.store(rq::now_ns(), Ordering::Relaxed);
        if mech::setattr::set_user_nice(t, nice).is_err() {
            sh.stop.store(true, Ordering::Relaxed);
        }
        if sh.runner.load(Ordering::Relaxed) == me && rq::lock(cpu).stat.sched_count != picks {
            // The pick the renice asked for chose this hog again (its
            // deadline was the earliest eligible one): no switch to wait for.
            if sh.renice_at.swap(0, Ordering::Relaxed) != 0 {
                sh.kept.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Another full `after` before the next renice.
        turn_start = rq::now_ns();
    }
}

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let cpu = w.cpu("cpu", &cpus);
    let rounds = w.num("rounds") as usize;
    let slice_ns = w.num("slice_us") * 1000;
    let after = w.num("after_us") * 1000;
    let ms = w.num("ms");
    if !super::budget::fits(w, &["rounds"], 3, (rounds * core::mem::size_of::<Sample>()) as u64) {
        return false;
    }
    let sh = Arc::new(Shared {
        stop: AtomicBool::new(false),
        runner: AtomicUsize::new(usize::MAX),
        renice_at: AtomicU64::new(0),
        renicer: AtomicUsize::new(usize::MAX),
        kept: AtomicU64::new(0),
        no_switch: AtomicU64::new(0),
        samples: IrqMutex::new(Vec::with_capacity(rounds)),
        rounds,
    });
    let mut tasks = Vec::new();
    let s = sh.clone();
    let Some(target) = super::spawn(Spawn::new("renice-19").nice(19).pin(cpu), move || run_hog(2, cpu, &s, None, 0)) else {
        return false;
    };
    for me in 0..2 {
        let (s, t) = (sh.clone(), target.clone());
        let name = if me == 0 { "renice-a" } else { "renice-b" };
        tasks.extend(super::spawn(Spawn::new(name).slice_ns(slice_ns).pin(cpu), move || run_hog(me, cpu, &s, Some(&t), after)));
    }
    tasks.push(target);
    // Wait for the rounds (the hogs stop themselves), at most `ms`; the
    // check is rare, so that this thread's wakeups barely touch the hogs.
    let deadline = rq::now_ns() + ms * 1_000_000;
    while !sh.stop.load(Ordering::Relaxed) && rq::now_ns() < deadline {
        mech::thread::sleep_ns(50_000_000);
    }
    sh.stop.store(true, Ordering::Relaxed);
    super::join_all(&tasks);
    let mut v = core::mem::take(&mut *sh.samples.lock());
    let to_peer = v.iter().filter(|s| s.by < 2 && s.next == 1 - s.by).count();
    v.sort_unstable_by_key(|s| s.ns);
    let p50 = v.get(v.len().saturating_sub(1) / 2).map_or(0, |s| s.ns);
    let max = v.last().map_or(0, |s| s.ns);
    mech::record!(
        "renice",
        "cpu={} rounds={} samples={} to_peer={} kept={} no_switch={} slice_ns={} after_ns={} p50_ns={} max_ns={}",
        cpu,
        rounds,
        v.len(),
        to_peer,
        sh.kept.load(Ordering::Relaxed),
        sh.no_switch.load(Ordering::Relaxed),
        slice_ns,
        after,
        p50,
        max
    );
    // In microseconds with three decimals: the nanoseconds are the thousandths.
    super::result("renice", "switch_p50", p50, "us", false);
    super::result("renice", "switch_max", max, "us", false);
    tasks.len() == 3 && v.len() == rounds
}
