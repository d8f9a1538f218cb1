//! Changing the CPUs of a task that has exited moves nothing. Its final
//! switch took its entity off the runqueue, so the entity id it keeps
//! (`Task::eid`) may name another task's entity on that CPU by then;
//! `set_affinity` moved whatever it named, and so sent the other task's
//! entity away under the dead task's name: the other task was on no
//! runqueue any more, runnable and never run (found by the simulator's
//! interleaving mix, `sim/tests/mech_interleavings.rs`, seed 34). Linux's
//! `core.c: affine_move_task()` moves a task only if it runs or is queued
//! (`task_on_rq_queued(p)`), which a dead task is not.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use common::*;
use mech::task::TaskState;
use mech::thread::Spawn;
use sched::cpumask::CpuMask;

#[test]
fn set_affinity_of_an_exited_task_moves_no_other_task() {
    boot(2);
    // `a` runs on CPU 0 and exits: its final switch removes its entity.
    let a = mech::thread::spawn(Spawn::new("a").on_cpu(0), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(0), &a));
    run_on(0);
    a.set_state(TaskState::Dead);
    mech::schedule::schedule();
    assert!(current_on(0).unwrap().is_idle);
    assert_eq!(nr_queued(0), 0);

    // `b` takes the entity slot `a` had and waits on CPU 0 while `c` (the
    // earlier deadline: a shorter slice) runs there.
    let b = mech::thread::spawn(Spawn::new("b").on_cpu(0).slice_ns(3_000_000), || {}).unwrap();
    let c = mech::thread::spawn(Spawn::new("c").on_cpu(0).slice_ns(1_000_000), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(0), &c));
    assert_eq!(
        b.eid.load(Ordering::Relaxed),
        a.eid.load(Ordering::Relaxed),
        "the premise: b's entity reuses the id a's had"
    );
    assert_eq!(nr_queued(0), 2);

    // A change of the dead `a`'s CPUs that excludes CPU 0.
    mech::setattr::set_affinity(&a, CpuMask::single(1)).unwrap();

    // `b` is still queued on CPU 0 and nothing went to CPU 1.
    assert_eq!(nr_queued(0), 2, "b left CPU 0's runqueue");
    assert!(!mech::rq::wake_list_pending(1), "something was sent to CPU 1");
    assert_eq!(b.cpu.load(Ordering::Relaxed), 0);
    // When `c` blocks, CPU 0 runs `b`.
    let run = block(0);
    assert!(Arc::ptr_eq(&run, &b), "CPU 0 runs {} after c blocks, not b", run.name);
}
