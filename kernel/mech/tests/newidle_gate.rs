//! The newidle gate when no CPU is overloaded (fair.c:
//! sched_balance_newidle() tests the root domain's `overloaded` first): a
//! CPU going idle with nothing queued anywhere opens its idle period, counts
//! the entry and the refusal, and keeps its runqueue lock (no balancing).

mod common;

use std::sync::Arc;

use common::*;
use mech::balance::newidle;
use mech::thread::Spawn;

#[test]
fn going_idle_with_nothing_overloaded_is_refused_under_the_lock() {
    boot(2);
    let a = mech::thread::spawn(Spawn::new("a").on_cpu(0), || {}).unwrap();
    let b = mech::thread::spawn(Spawn::new("b").on_cpu(1), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(0), &a));
    assert!(Arc::ptr_eq(&preempt(1), &b));
    assert!(!mech::balance::snapshot::any_overloaded(), "one task per CPU");
    let (entries0, drops0) = newidle::entries_and_lock_drops(0);
    let skips0 = newidle::gate_skips(0);
    advance_ns(10_000_000);

    // `a` blocks: CPU 0 idles; nothing to pull, so the gate refuses.
    assert!(block(0).is_idle);
    assert_eq!(newidle::entries_and_lock_drops(0), (entries0 + 1, drops0), "one entry, the lock kept");
    assert_eq!(newidle::gate_skips(0), skips0 + 1, "refused by the gate");
    assert_eq!((nr_queued(0), nr_queued(1)), (0, 1), "b stays on CPU 1");
    assert!(Arc::ptr_eq(&current_on(1).unwrap(), &b));
}
