//! `balance/pull.rs` measures a task of a `migrate_util` pull by
//! `task_util_est()`, as `fair.c: detach_tasks()` does, not by `util_avg`.
//!
//! Two queued tasks behind a running one on CPU 1: `x` woke from a long
//! sleep (its `util_avg` decayed to 100, its estimate kept 900) and `y` is
//! a middling one (`util_avg` 300, no estimate). A util pull of 500 to
//! CPU 0 must skip `x` (900 > 500) and take `y` (300). Measured by
//! `util_avg` it would take both (100, then 300 of the 400 left), and
//! measured by 0 it would take both too.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use common::*;
use mech::task::Task;
use mech::thread::Spawn;
use sched::balance::migrate::DetachParams;
use sched::balance::{IdleType, Migration, MigrationType};
use sched::{EnqueueFlags, EntityId};

/// Gives queued task `t` of `cpu` these PELT values (re-adding its entity,
/// as a migration does, so that the runqueue's sums follow).
fn set_util(cpu: usize, t: &Arc<Task>, util_avg: u64, util_est: u64) {
    let mut rq = mech::rq::lock(cpu);
    let eid = rq.tasks.iter().position(|s| s.as_ref().is_some_and(|s| Arc::ptr_eq(s, t))).expect("queued here") as u32;
    let e = EntityId(eid);
    rq.fair.dequeue(e, sched::DequeueFlags::NONE).unwrap();
    let mut se = rq.fair.remove_entity(e).unwrap();
    rq.detach(eid);
    se.avg.util_avg = util_avg;
    se.avg.util_est = util_est;
    let ne = rq.fair.add_entity(se).unwrap();
    rq.attach(ne.0, t.clone());
    rq.fair.enqueue(ne, EnqueueFlags::NONE).unwrap();
    assert_eq!(sched::pelt::task_util_est(&rq.fair.entity(ne).unwrap().avg), util_avg.max(util_est));
}

#[test]
fn a_util_pull_measures_tasks_by_task_util_est() {
    boot(2);
    let a = mech::thread::spawn(Spawn::new("a").on_cpu(0), || {}).unwrap();
    let c = mech::thread::spawn(Spawn::new("c").on_cpu(1), || {}).unwrap();
    let x = mech::thread::spawn(Spawn::new("x").on_cpu(1), || {}).unwrap();
    let y = mech::thread::spawn(Spawn::new("y").on_cpu(1), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(0), &a));
    assert!(Arc::ptr_eq(&preempt(1), &c));
    // Neither x nor y ever ran: not cache hot.
    advance_ns(10_000_000);
    set_util(1, &x, 100, 900);
    set_util(1, &y, 300, 0);
    assert_eq!((nr_queued(0), nr_queued(1)), (1, 3));

    let g = mech::balance::global().unwrap();
    let sd = &g.sds.per_cpu(0)[0];
    let (dst, src) = (mech::balance::snapshot::cpu_snapshot(0), mech::balance::snapshot::cpu_snapshot(1));
    let params = DetachParams::new(&dst, &src, IdleType::Idle, sd, 0);
    let out = mech::balance::pull::pull_tasks(0, 1, &params, Migration { kind: MigrationType::Util, imbalance: 500 });

    assert_eq!(out.moved, 1, "one task moved: {out:?}");
    assert_eq!(y.cpu.load(Ordering::Relaxed), 0, "y (task_util_est 300 <= 500) moved to CPU 0");
    assert_eq!(x.cpu.load(Ordering::Relaxed), 1, "x (task_util_est 900 > 500, util_avg 100) stayed on CPU 1");
    assert_eq!(out.imbalance_left, 200);
    assert_eq!((nr_queued(0), nr_queued(1)), (2, 2));
}
