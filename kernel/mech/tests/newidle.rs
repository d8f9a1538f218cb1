//! The newidle ordering, through the real switch: a CPU about
//! to idle publishes its now-empty runqueue (`publish_load`) before it runs
//! `sched_balance_newidle`, so the balancer sees it idle and pulls from the
//! overloaded CPU (Linux's `sched_balance_rq()` reads the live `dst_rq`
//! with prev already dequeued). With the order reversed the balancer read
//! the stale "one running" count and pulled nothing.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use common::*;
use mech::thread::Spawn;

#[test]
fn a_cpu_going_idle_pulls_from_the_overloaded_one() {
    boot(2);
    // CPU 0 runs `a`; CPU 1 runs `c` with `d` queued behind it. None is
    // pinned (both CPUs allowed), each started where it is told.
    let a = mech::thread::spawn(Spawn::new("a").on_cpu(0), || {}).unwrap();
    let c = mech::thread::spawn(Spawn::new("c").on_cpu(1).slice_ns(1_000_000), || {}).unwrap();
    let d = mech::thread::spawn(Spawn::new("d").on_cpu(1).slice_ns(3_000_000), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(0), &a));
    assert!(Arc::ptr_eq(&preempt(1), &c));
    assert_eq!((nr_queued(0), nr_queued(1)), (1, 2));
    assert!(mech::balance::snapshot::any_overloaded(), "CPU 1 is published overloaded");

    // Long enough that `d`, which never ran, is not cache hot anywhere.
    advance_ns(10_000_000);

    // `a` blocks: CPU 0's queue is empty, and the newidle balance pulls `d`.
    let run = block(0);
    assert!(Arc::ptr_eq(&run, &d), "CPU 0 runs {} after newidle balancing, not d", run.name);
    assert_eq!(d.cpu.load(Ordering::Relaxed), 0);
    assert_eq!((nr_queued(0), nr_queued(1)), (1, 1));
    assert!(Arc::ptr_eq(&current_on(1).unwrap(), &c), "CPU 1 still runs c");
}
