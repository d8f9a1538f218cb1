//! "Idle while others wait" (`balance::idle_wait`) through the real switch,
//! with the test platform's clock: the figures are exact sums of the
//! intervals the test makes, so a change of how the integral is tracked
//! (locks, lock-free reads, where the per-CPU domains are kept) cannot
//! change what it counts. The waiter here may run on the idle CPU (only
//! such a waiter counts: `idle_wait_affinity.rs` pins that a waiter the
//! idle CPU may not run does not), and newidle balancing is off so that
//! the idle CPU does not pull it.

mod common;

use std::sync::Arc;

use common::*;
use mech::balance::idle_wait;
use mech::thread::Spawn;

const MS: u64 = 1_000_000;

/// `common::boot(2)` with newidle balancing off: CPU 0 leaves CPU 1's
/// free waiter where it is.
fn boot_no_newidle() {
    boot_with(2, sched::balance::BalanceConfig { newidle: false, ..Default::default() });
}

/// (idle_ns, top-level idle_wait_ns) of `cpu` so far.
fn figures(cpu: usize) -> (u64, u64) {
    let w = idle_wait::read(cpu);
    (w.idle_ns, w.top())
}

#[test]
fn idle_time_counts_only_while_a_cpu_of_the_domain_has_a_queue() {
    boot_no_newidle();
    // Both CPUs idle from boot; nothing waits anywhere.
    let (idle0, wait0) = figures(0);
    let (idle1, wait1) = figures(1);
    assert_eq!((wait0, wait1), (0, 0));
    advance_ns(3 * MS);
    assert_eq!(figures(0), (idle0 + 3 * MS, 0), "3 ms idle, no queue anywhere");
    assert_eq!(figures(1), (idle1 + 3 * MS, 0));

    // CPU 1 gets `c` running (pinned) and `d` waiting (placed on CPU 1 but
    // free to run on CPU 0), at the same instant: CPU 1 is no longer idle,
    // CPU 0 idles while CPU 1 has a task waiting that CPU 0 may run.
    let c = mech::thread::spawn(Spawn::new("c").pin(1).slice_ns(MS), || {}).unwrap();
    let d = mech::thread::spawn(Spawn::new("d").on_cpu(1).slice_ns(3 * MS), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(1), &c));
    assert_eq!(nr_queued(1), 2);
    advance_ns(5 * MS);
    assert_eq!(figures(0), (idle0 + 8 * MS, 5 * MS), "5 ms idle while d waited on CPU 1");
    assert_eq!(figures(1), (idle1 + 3 * MS, 0), "CPU 1 stopped idling when c arrived");

    // CPU 0 runs `a` for 2 ms while the queue lasts: busy, so none counts.
    let a = mech::thread::spawn(Spawn::new("a").pin(0), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(0), &a));
    advance_ns(2 * MS);
    assert_eq!(figures(0), (idle0 + 8 * MS, 5 * MS), "busy CPU 0 gains nothing");

    // `a` blocks: CPU 0 idles again (newidle off: d is not pulled), while
    // d still waits on CPU 1 for 4 ms.
    let run = block(0);
    assert!(run.is_idle, "CPU 0 idles, not {}", run.name);
    advance_ns(4 * MS);
    assert_eq!(figures(0), (idle0 + 12 * MS, 9 * MS), "4 ms more of idle while d waited");

    // `c` blocks: CPU 1 has one (d), so CPU 0's idle time no longer counts.
    assert!(Arc::ptr_eq(&block(1), &d));
    advance_ns(6 * MS);
    assert_eq!(figures(0), (idle0 + 18 * MS, 9 * MS), "idle beside one task is not waiting");
    assert_eq!(figures(1), (idle1 + 3 * MS, 0), "CPU 1 never idled since");

    // `d` blocks too: both idle, and the deltas (`since`) see the same.
    let before = idle_wait::read(0);
    assert!(block(1).is_idle);
    advance_ns(MS);
    let delta = idle_wait::read(0).since(&before);
    assert_eq!((delta.idle_ns, delta.top()), (MS, 0));
    assert_eq!(figures(1), (idle1 + 4 * MS, 0));
}
