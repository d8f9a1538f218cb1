//! `workload=utilest[,big_cpu=0][,small_cpu=1][,burst_ms=100][,sleep_ms=200][,ms=100]`:
//! one task whose `util_avg` decays during a sleep while its util_est keeps its
//! need. Pinned to `big_cpu`, it spins `burst_ms` (its util_avg rises, and its
//! sleep sets util_est to it), then sleeps `sleep_ms`; meanwhile the workload
//! allows it only `small_cpu`, so it wakes there with a util_avg decayed by the
//! sleep. At once it allows itself both CPUs again and spins `ms`, noting when
//! it first runs on `big_cpu`. With `cpu_capacity=SMALL:512`, util_est says
//! "misfit" at the first tick (fair.c: update_misfit_status() measures by
//! task_util_est()); util_avg would say so only after it has grown back.
//!
//! `@fw utilest big= small= woke_cpu= util_avg= util_est= moved_after_us= ran_on=`:
//! its util_avg and util_est (flag masked) just after the wakeup, and the time
//! from the wakeup to its first run on `big_cpu` (`-`: never).

use alloc::string::String;
use alloc::sync::Arc;
use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};

use sched::cpumask::CpuMask;
use sched::EntityId;

use super::params::{num, Param, MAX_CPU, MAX_MS};
use crate::cmdline::Workload;
use mech::task::Task;
use mech::thread::Spawn;

/// How often the running task looks at which CPU it is on: the step of
/// `moved_after_us` (the check allows it milliseconds).
const WATCH_STEP_NS: u64 = 10_000;

/// What `workload=utilest` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("big_cpu", 0, MAX_CPU, 0, "the CPU the task builds its utilisation on"),
    num("small_cpu", 0, MAX_CPU, 1, "the CPU it is woken on after its sleep"),
    num("burst_ms", 1, 10_000, 100, "its first spin, on big_cpu (ms)"),
    num("sleep_ms", 2, 10_000, 200, "then its sleep (ms)"),
    num("ms", 1, MAX_MS, 100, "its spin after the wakeup, free to move (ms)"),
];

/// What the task saw: the CPU it woke on, its util_avg and util_est then, and
/// ns from the wakeup to its first run on the big CPU (`u64::MAX`: never).
struct Seen {
    woke_cpu: AtomicU64,
    util_avg: AtomicU64,
    util_est: AtomicU64,
    moved_after_ns: AtomicU64,
}

/// The running task's PELT averages, read under its runqueue's lock (None if
/// it moved between reading its CPU and the lock).
fn own_avg(me: &Arc<Task>) -> Option<sched::pelt::SchedAvg> {
    let cpu = mech::platform::cpu_id();
    let rq = mech::rq::lock(cpu);
    if !Arc::ptr_eq(&rq.curr, me) {
        return None;
    }
    rq.fair.entity(EntityId(me.eid.load(Ordering::Relaxed))).map(|se| se.avg)
}

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let (big, small) = (w.cpu("big_cpu", &cpus), w.cpu("small_cpu", &cpus));
    if big == small {
        crate::cmdline::report_problem(format_args!("workload={}: big_cpu and small_cpu are both CPU {}", w.name, big));
        return false;
    }
    let (burst, sleep, run_ns) = (w.num("burst_ms") * 1_000_000, w.num("sleep_ms") * 1_000_000, w.num("ms") * 1_000_000);
    if !super::budget::fits(w, &[], 1, 0) {
        return false;
    }
    let seen = Arc::new(Seen {
        woke_cpu: AtomicU64::new(u64::MAX),
        util_avg: AtomicU64::new(0),
        util_est: AtomicU64::new(0),
        moved_after_ns: AtomicU64::new(u64::MAX),
    });
    let mut both = CpuMask::single(big);
    both.set(small);
    let s = seen.clone();
    let Some(t) = super::spawn(Spawn::new("utilest").pin(big), move || {
        mech::platform::burn_ns(burst);
        mech::thread::sleep_ns(sleep);
        let me = mech::task::current();
        let woke = mech::platform::cpu_id();
        let t_wake = mech::rq::now_ns();
        if let Some(avg) = own_avg(&me) {
            s.util_avg.store(avg.util_avg, Ordering::Relaxed);
            s.util_est.store(sched::pelt::task_util_est_raw(&avg), Ordering::Relaxed);
        }
        s.woke_cpu.store(woke as u64, Ordering::Relaxed);
        let _ = mech::setattr::set_affinity(&me, both);
        let end = t_wake + run_ns;
        loop {
            let now = mech::rq::now_ns();
            if now >= end {
                break;
            }
            if mech::platform::cpu_id() == big && s.moved_after_ns.load(Ordering::Relaxed) == u64::MAX {
                s.moved_after_ns.store(now - t_wake, Ordering::Relaxed);
            }
            // Spins through the platform in short steps, so the move to
            // the big CPU is seen within WATCH_STEP_NS.
            mech::platform::burn_ns(WATCH_STEP_NS.min(end - now));
        }
    }) else {
        return false;
    };
    // Half way through its sleep: only the small CPU (its wakeup goes there).
    mech::thread::sleep_ns(burst + sleep / 2);
    let pinned = mech::setattr::set_affinity(&t, CpuMask::single(small)).is_ok();
    mech::thread::join(&t);
    let moved = seen.moved_after_ns.load(Ordering::Relaxed);
    let woke = seen.woke_cpu.load(Ordering::Relaxed);
    // `-`: it never ran on the big CPU after the wakeup.
    let mut after = String::new();
    if moved == u64::MAX {
        after.push('-');
    } else {
        let _ = write!(after, "{}", moved / 1000);
    }
    mech::record!(
        "utilest",
        "big={} small={} woke_cpu={} util_avg={} util_est={} moved_after_us={} ran_on={}",
        big,
        small,
        woke,
        seen.util_avg.load(Ordering::Relaxed),
        seen.util_est.load(Ordering::Relaxed),
        after,
        t.ran_on()
    );
    pinned && woke == small as u64
}
