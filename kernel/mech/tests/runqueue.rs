//! The runqueue through the real `rq`, `task`, `wakeup` and `schedule` code
//! on one simulated CPU: new tasks are queued, the switch picks by EEVDF,
//! a blocking task leaves the queue, and a wakeup makes it runnable and
//! picked again.

mod common;

use common::*;
use mech::task::TaskState;
use mech::thread::Spawn;
use sched::WakeFlags;

#[test]
fn enqueue_pick_block_and_wake_on_one_cpu() {
    boot(1);
    let idle = current_on(0).unwrap();
    assert!(idle.is_idle);
    assert_eq!(nr_queued(0), 0);

    // Two new tasks, pinned here; `b` asks for a shorter slice, so its
    // virtual deadline (placed at the same vruntime) is the earlier one.
    let a = mech::thread::spawn(Spawn::new("a").pin(0).slice_ns(3_000_000), || {}).unwrap();
    let b = mech::thread::spawn(Spawn::new("b").pin(0).slice_ns(1_000_000), || {}).unwrap();
    assert_eq!(nr_queued(0), 2, "both new tasks are on the runqueue");
    assert!(a.on_rq.load(std::sync::atomic::Ordering::Relaxed));
    assert!(mech::resched::need_resched(0), "a new task preempts the idle task");

    // The reschedule interrupt: the earliest deadline runs.
    let run = preempt(0);
    assert!(std::sync::Arc::ptr_eq(&run, &b), "picked {}", run.name);
    assert!(std::sync::Arc::ptr_eq(&mech::rq::lock(0).curr, &b));
    assert!(b.ctx.on_cpu() && !idle.ctx.on_cpu());

    // `b` blocks: off the queue, `a` runs.
    let run = block(0);
    assert!(std::sync::Arc::ptr_eq(&run, &a), "picked {}", run.name);
    assert_eq!(b.state(), TaskState::Sleeping);
    assert!(!b.on_rq.load(std::sync::atomic::Ordering::Relaxed));
    assert_eq!(nr_queued(0), 1);

    // `a` blocks too: the CPU idles.
    let run = block(0);
    assert!(run.is_idle);
    assert_eq!(nr_queued(0), 0);

    // A wakeup of `b` (from this CPU, idle) makes it runnable and asks for
    // the switch; the next preemption point runs it.
    advance_ns(2_000_000);
    assert!(mech::wakeup::try_to_wake_up(&b, WakeFlags::NONE));
    assert_eq!(b.state(), TaskState::Running);
    assert!(b.on_rq.load(std::sync::atomic::Ordering::Relaxed));
    assert_eq!(nr_queued(0), 1);
    assert!(mech::resched::need_resched(0));
    let run = preempt(0);
    assert!(std::sync::Arc::ptr_eq(&run, &b));
    // A second wakeup of a running task wakes nothing.
    assert!(!mech::wakeup::try_to_wake_up(&b, WakeFlags::NONE));
    // No IPI: everything happened on the one CPU.
    assert!(IPIS.lock().unwrap().is_empty());
}
