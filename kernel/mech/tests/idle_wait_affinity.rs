//! "Idle while others wait" counts only what a balancer could have fixed:
//! time a CPU is idle while another CPU of its domain has a waiting task
//! that the idle CPU is allowed to run. A waiting task pinned to its own
//! CPU is not such a task (counting any CPU with two runnable tasks would
//! show a workload that pins its hogs as idle-wait that no balancer could
//! remove).

mod common;

use std::sync::Arc;

use common::*;
use mech::thread::Spawn;

#[test]
fn only_waiters_the_idle_cpu_may_run_count() {
    boot(2);
    // CPU 0 stays idle throughout. CPU 1 runs `c` with `d`, pinned to CPU 1,
    // waiting behind it.
    let c = mech::thread::spawn(Spawn::new("c").pin(1), || {}).unwrap();
    let _d = mech::thread::spawn(Spawn::new("d").pin(1), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(1), &c));
    assert_eq!(nr_queued(1), 2);
    let before = mech::balance::idle_wait::read(0);
    advance_ns(10_000_000);
    let pinned = mech::balance::idle_wait::read(0).since(&before);
    assert_eq!(pinned.idle_ns, 10_000_000, "CPU 0 was idle the whole time");
    assert_eq!(pinned.top(), 0, "CPU 0 may not run d: no balancer could have helped ({pinned:?})");

    // `e`, free to run anywhere, joins the queue of CPU 1: from now on CPU 0
    // idles while a task it may run waits.
    let _e = mech::thread::spawn(Spawn::new("e").on_cpu(1), || {}).unwrap();
    assert!(Arc::ptr_eq(&current_on(1).unwrap(), &c), "c still runs on CPU 1");
    assert_eq!(nr_queued(1), 3);
    let before = mech::balance::idle_wait::read(0);
    advance_ns(5_000_000);
    let free = mech::balance::idle_wait::read(0).since(&before);
    assert_eq!(free.idle_ns, 5_000_000);
    assert_eq!(free.top(), 5_000_000, "CPU 0 idled while e, which it may run, waited ({free:?})");
    // CPU 1 is not idle: it counts nothing.
    assert_eq!(mech::balance::idle_wait::read(1).top(), 0);
}
