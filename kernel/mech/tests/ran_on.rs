//! The CPUs a task has run on (`Task::ran_on`, which the affinity scenario
//! and the workloads' reports print): each CPU's first switch to the task
//! adds it, a switch on the CPU it ran on last adds nothing, and a task
//! that moves away and back keeps both.

mod common;

use std::sync::Arc;

use common::*;
use mech::thread::Spawn;
use sched::cpumask::CpuMask;

fn cpus(cs: &[usize]) -> CpuMask {
    let mut m = CpuMask::new();
    for &c in cs {
        m.set(c);
    }
    m
}

/// Moves the running `t` off `from` to `to` (an affinity change, then
/// `from`'s switch sends it to `to`'s wake list, whose IPI runs it there).
fn move_running(t: &Arc<mech::task::Task>, from: usize, to: usize) {
    run_on(from);
    mech::setattr::set_affinity(t, CpuMask::single(to)).unwrap();
    let left = preempt(from);
    assert!(!Arc::ptr_eq(&left, t), "{} still runs on CPU {from}", t.name);
    run_on(to);
    let cur = current_on(to).unwrap();
    let resume = mech::entry::scheduler_ipi(frame_of(&cur));
    let now = current_on(to).unwrap();
    assert_eq!(resume, frame_of(&now));
    assert!(Arc::ptr_eq(&now, t), "CPU {to} runs {}, not {}", now.name, t.name);
}

#[test]
fn ran_on_holds_every_cpu_the_task_ran_on() {
    boot(2);
    let a = mech::thread::spawn(Spawn::new("a").on_cpu(0), || {}).unwrap();
    assert_eq!(a.ran_on(), CpuMask::new(), "not run yet");
    assert!(Arc::ptr_eq(&preempt(0), &a));
    assert_eq!(a.ran_on(), cpus(&[0]));

    move_running(&a, 0, 1);
    assert_eq!(a.ran_on(), cpus(&[0, 1]));
    move_running(&a, 1, 0);
    assert_eq!(a.ran_on(), cpus(&[0, 1]));

    // Back on CPU 0 after a block and a wakeup: still both, nothing more.
    run_on(0);
    assert!(block(0).is_idle);
    assert!(mech::wakeup::try_to_wake_up(&a, sched::WakeFlags::NONE));
    assert!(Arc::ptr_eq(&preempt(0), &a));
    assert_eq!(a.ran_on(), cpus(&[0, 1]));
}
