//! A dequeue from a busy CPU charges its running task first (fair.c
//! `dequeue_entity()` starts with `update_curr()`), and that charge asks the
//! CPU to reschedule when the running task's request or protected slice is
//! used up and someone else is queued (`resched_curr_lazy()`, a full
//! reschedule with its IPI under preempt=full). Three such dequeues from
//! CPU 0 of tasks queued on CPU 1, each while CPU 1's running task has run
//! past its protection without a tick: a renice (core.c `set_user_nice()`
//! dequeues with `DEQUEUE_SAVE`), a pull by the balancer (`detach_task()`)
//! and an affinity change that moves the task (`affine_move_task()`). After
//! each, CPU 1 has been sent the reschedule IPI and its switch goes to the
//! other queued task at once, not at its next tick.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use common::*;
use mech::task::Task;
use mech::thread::Spawn;
use sched::balance::migrate::DetachParams;
use sched::balance::{IdleType, Migration, MigrationType};
use sched::cpumask::CpuMask;

/// Past any base slice (0.7 ms at one CPU) and its protection.
const PAST_PROTECTION_NS: u64 = 3_000_000;

/// CPU 1's running task runs past its protection; `op` (run on CPU 0) then
/// dequeues one of CPU 1's waiting tasks. Asserts that CPU 1 got the IPI
/// and that its switch, which the IPI causes, leaves `running`.
fn op_reschedules_cpu1(what: &str, running: &Arc<Task>, op: impl FnOnce()) -> Arc<Task> {
    assert!(Arc::ptr_eq(&current_on(1).unwrap(), running));
    advance_ns(PAST_PROTECTION_NS);
    assert!(!mech::resched::need_resched(1), "{what}: no tick has noticed yet");
    let ipis = IPIS.lock().unwrap().len();
    run_on(0);
    op();
    assert!(IPIS.lock().unwrap()[ipis..].contains(&(0, 1)), "{what}: CPU 1 was sent the reschedule IPI");
    assert!(mech::resched::need_resched(1), "{what}: CPU 1 is asked to reschedule");
    let next = preempt(1);
    assert!(!Arc::ptr_eq(&next, running), "{what}: CPU 1 switched away from {}", running.name);
    next
}

#[test]
fn a_dequeue_past_the_running_protection_reschedules_that_cpu() {
    boot(2);
    let idle0 = current_on(0).unwrap();
    assert!(idle0.is_idle);
    // Four tasks on CPU 1: one runs, three wait.
    let ts: Vec<Arc<Task>> =
        ["a", "b", "c", "d"].iter().map(|n| mech::thread::spawn(Spawn::new(n).on_cpu(1), || {}).unwrap()).collect();
    let mut running = preempt(1);
    let waiting = |running: &Arc<Task>| -> Vec<Arc<Task>> {
        ts.iter().filter(|t| !Arc::ptr_eq(t, running) && t.cpu.load(Ordering::Relaxed) == 1).cloned().collect()
    };

    // A renice of a waiting task that its own preemption check does not
    // pick: its deadline, before V like the others' (they waited 3 ms),
    // moves towards V (a relative deadline scaled by 1024/3121).
    let w = waiting(&running)[0].clone();
    running = op_reschedules_cpu1("renice", &running, || mech::setattr::set_user_nice(&w, -5).unwrap());

    // The balancer on CPU 0 pulls one of CPU 1's waiting tasks.
    let moved = op_reschedules_cpu1("pull", &running, || {
        let g = mech::balance::global().unwrap();
        let sd = &g.sds.per_cpu(0)[0];
        let (dst, src) = (mech::balance::snapshot::cpu_snapshot(0), mech::balance::snapshot::cpu_snapshot(1));
        let params = DetachParams::new(&dst, &src, IdleType::Idle, sd, 0);
        let out = mech::balance::pull::pull_tasks(0, 1, &params, Migration { kind: MigrationType::Task, imbalance: 1 });
        assert_eq!(out.moved, 1, "one task pulled: {out:?}");
    });
    assert_eq!(nr_queued(1), 3);
    running = moved;

    // An affinity change moves a waiting task to CPU 0.
    let w = waiting(&running)[0].clone();
    op_reschedules_cpu1("affinity", &running, || {
        let mut only0 = CpuMask::new();
        only0.set(0);
        mech::setattr::set_affinity(&w, only0).unwrap();
    });
    assert_eq!(nr_queued(1), 2);
}
